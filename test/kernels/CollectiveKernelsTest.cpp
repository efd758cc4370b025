//===- CollectiveKernelsTest.cpp - the ranks' kernels, with threads as ranks -===//
//
// all_reduce, shard, reduce_scatter and all_gather have no PyTorch reference on one process:
// their results are defined by the other ranks' data. Here N threads are the N ranks of one
// program, exchanging through ThreadRanks (an in-process Collectives), and each rank's result is
// compared with the definition: sums over the ranks' inputs, the rank's flat slice with zero
// padding, the whole tensor back from every shard. Element counts that divide by the ranks and
// ones that do not (the padded workspace path), 16-bit floats, and the gate.
//
//===----------------------------------------------------------------------===//
#include "KernelTestSupport.h"

#include "kernels/Collectives.h"
#include "kernels/Float16.h"

#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>

namespace memc::kernels::testing {
namespace {

/// Waits until `count` threads have arrived, then lets them all go; reusable.
class Barrier {
public:
  explicit Barrier(int count) : count(count) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mutex);
    int generation = passed;
    if (++waiting == count) {
      waiting = 0;
      ++passed;
      released.notify_all();
      return;
    }
    released.wait(lock, [&] { return passed != generation; });
  }

private:
  int count, waiting = 0, passed = 0;
  std::mutex mutex;
  std::condition_variable released;
};

/// The ranks of one program as threads: each collective publishes every rank's buffer, waits
/// for all, computes this rank's result from the others' bytes, and waits again before any
/// buffer is reused.
class ThreadRanks {
public:
  explicit ThreadRanks(int size) : size(size), buffers(size), arrived(size) {}

  class Rank final : public Collectives {
  public:
    Rank(ThreadRanks &all, int rank) : all(all), myRank(rank) {}
    int rank() const override { return myRank; }
    int size() const override { return all.size; }

    bool allReduce(void *data, int64_t count, DType dtype, ReduceOp op, void *,
                   std::string &) override {
      std::vector<double> reduced(count);
      exchange(data, [&] {
        for (int64_t i = 0; i < count; ++i) {
          double value = read(all.buffers[0], dtype, i);
          for (int r = 1; r < all.size; ++r) {
            double other = read(all.buffers[r], dtype, i);
            value = op == ReduceOp::Sum ? value + other : std::max(value, other);
          }
          reduced[i] = value;
        }
      });
      all.arrived.arrive_and_wait(); // every rank has read before any writes over its input
      for (int64_t i = 0; i < count; ++i)
        write(data, dtype, i, reduced[i]);
      all.arrived.arrive_and_wait();
      return true;
    }
    bool allGather(const void *shard, void *whole, int64_t shardCount, DType dtype, void *,
                   std::string &) override {
      size_t bytes = static_cast<size_t>(shardCount) * dtypeSize(dtype);
      exchange(const_cast<void *>(shard), [&] {
        for (int r = 0; r < all.size; ++r)
          std::memcpy(static_cast<uint8_t *>(whole) + r * bytes, all.buffers[r], bytes);
      });
      all.arrived.arrive_and_wait();
      return true;
    }
    bool reduceScatter(const void *whole, void *shard, int64_t shardCount, DType dtype,
                       ReduceOp op, void *, std::string &) override {
      std::vector<double> mine(shardCount);
      exchange(const_cast<void *>(whole), [&] {
        for (int64_t i = 0; i < shardCount; ++i) {
          int64_t at = myRank * shardCount + i;
          double value = read(all.buffers[0], dtype, at);
          for (int r = 1; r < all.size; ++r) {
            double other = read(all.buffers[r], dtype, at);
            value = op == ReduceOp::Sum ? value + other : std::max(value, other);
          }
          mine[i] = value;
        }
      });
      all.arrived.arrive_and_wait();
      for (int64_t i = 0; i < shardCount; ++i)
        write(shard, dtype, i, mine[i]);
      all.arrived.arrive_and_wait();
      return true;
    }

  private:
    void exchange(void *buffer, const std::function<void()> &readOthers) {
      all.buffers[myRank] = buffer;
      all.arrived.arrive_and_wait();
      readOthers();
    }
    static double read(const void *data, DType dtype, int64_t i) {
      switch (dtype) {
      case DType::F32:
        return static_cast<const float *>(data)[i];
      case DType::BF16:
        return bfloat16ToFloat(static_cast<const uint16_t *>(data)[i]);
      default:
        return halfToFloat(static_cast<const uint16_t *>(data)[i]);
      }
    }
    static void write(void *data, DType dtype, int64_t i, double value) {
      if (dtype == DType::F32)
        static_cast<float *>(data)[i] = static_cast<float>(value);
      else if (dtype == DType::BF16)
        static_cast<uint16_t *>(data)[i] = floatToBFloat16(static_cast<float>(value));
      else
        static_cast<uint16_t *>(data)[i] = floatToHalf(static_cast<float>(value));
    }
    ThreadRanks &all;
    int myRank;
  };

  /// Runs `body(rank, collectives)` on every rank at once.
  void run(const std::function<void(int, Collectives &)> &body) {
    std::vector<std::thread> threads;
    for (int r = 0; r < size; ++r)
      threads.emplace_back([&, r] {
        Rank rank(*this, r);
        body(r, rank);
      });
    for (std::thread &thread : threads)
      thread.join();
  }

private:
  int size;
  std::vector<void *> buffers;
  Barrier arrived;
};

/// Rank r's input: values that differ per rank and element, exact in bf16 sums of few ranks.
std::vector<double> rankValues(int rank, int64_t count) {
  std::vector<double> values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(static_cast<double>((i % 7) - 3) + 0.25 * (rank + 1));
  return values;
}

/// Runs `kernel` on one rank with its context's collectives; the outputs, or a failure.
std::vector<OwnedTensor> runOnRank(Collectives &ranks, const std::string &kernel,
                                   const std::vector<OwnedTensor> &inputs, DType dtype,
                                   Shape shape, int worldSize) {
  std::vector<OwnedTensor> outputs;
  outputs.emplace_back(dtype, shape);
  Attributes attributes = attrs({{"world_size", int64_t{worldSize}}});
  KernelCall call = makeCall(inputs, outputs, attributes);
  const Kernel &k = kernelNamed(kernel);
  std::string error;
  EXPECT_TRUE(k.check(call, error)) << kernel << ": " << error;
  uint64_t bytes = workspaceBytes(k, call);
  std::vector<uint8_t> workspace(bytes + kWorkspaceAlignment, 0xA5);
  call.workspace = bytes ? workspace.data() : nullptr;
  call.workspaceBytes = bytes;
  KernelContext context;
  context.collectives = &ranks;
  EXPECT_TRUE(k.run(context, call)) << kernel;
  context.errors.take(error);
  EXPECT_EQ(error, "");
  return outputs;
}

struct Case {
  int ranks;
  Shape shape;
  DType dtype;
};

class CollectiveKernels : public ::testing::TestWithParam<Case> {};

TEST_P(CollectiveKernels, MatchTheirDefinitions) {
  const auto [worldSize, shape, dtype] = GetParam();
  int64_t elements = 1;
  for (int64_t dim : shape)
    elements *= dim;
  const int64_t shardSize = shardElements(elements, worldSize);
  ThreadRanks ranks(worldSize);
  ranks.run([&](int rank, Collectives &collectives) {
    OwnedTensor mine = tensor(dtype, shape, rankValues(rank, elements));
    std::vector<double> sum(elements, 0.0);
    for (int r = 0; r < worldSize; ++r)
      for (int64_t i = 0; i < elements; ++i)
        sum[i] += rankValues(r, elements)[i];
    // all_reduce: the sum over the ranks.
    EXPECT_EQ(runOnRank(collectives, "all_reduce", {mine}, dtype, shape, worldSize)[0].values(),
              sum);
    // shard: the rank's flat slice, zero-padded.
    std::vector<double> slice(shardSize, 0.0), sumSlice(shardSize, 0.0);
    for (int64_t i = 0; i < shardSize && rank * shardSize + i < elements; ++i) {
      slice[i] = rankValues(rank, elements)[rank * shardSize + i];
      sumSlice[i] = sum[rank * shardSize + i];
    }
    OwnedTensor shard =
        runOnRank(collectives, "shard", {mine}, dtype, {shardSize}, worldSize)[0];
    EXPECT_EQ(shard.values(), slice);
    // reduce_scatter: the slice of the sum.
    EXPECT_EQ(runOnRank(collectives, "reduce_scatter", {mine}, dtype, {shardSize}, worldSize)[0]
                  .values(),
              sumSlice);
    // all_gather of every rank's shard of its own input: each rank's slice back in place.
    std::vector<double> gathered(elements);
    for (int64_t i = 0; i < elements; ++i)
      gathered[i] = rankValues(static_cast<int>(i / shardSize), elements)[i];
    EXPECT_EQ(runOnRank(collectives, "all_gather", {shard}, dtype, shape, worldSize)[0].values(),
              gathered);
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, CollectiveKernels,
                         ::testing::Values(Case{2, {4, 6}, DType::F32},     // divides
                                           Case{3, {5, 2}, DType::F32},     // padded
                                           Case{4, {3}, DType::F32},        // a rank of padding
                                           Case{3, {7}, DType::BF16},       // 16-bit
                                           Case{2, {2, 3, 3}, DType::F16}), // 16-bit, padded
                         [](const auto &info) { return "case" + std::to_string(info.index); });

TEST(CollectiveKernels, GatherRoundsF32ShardsToSixteenBits) {
  // A parameter read in bf16 is gathered in bf16: each rank rounds its f32 shard (padded: 5
  // elements over 2 ranks), and the whole is the rounded values in place.
  const std::vector<double> whole = {1.0 / 3, -2.5e-3, 7.0, 1e-9, -1.25};
  ThreadRanks ranks(2);
  for (DType narrow : {DType::BF16, DType::F16})
    ranks.run([&](int rank, Collectives &collectives) {
      std::vector<double> mine(3, 0.0);
      for (int64_t i = 0; i < 3 && rank * 3 + i < 5; ++i)
        mine[i] = whole[rank * 3 + i];
      OwnedTensor shard = f32({3}, mine);
      EXPECT_EQ(runOnRank(collectives, "all_gather", {shard}, narrow, {5}, 2)[0].values(),
                tensor(narrow, {5}, whole).values());
    });
}

TEST(CollectiveKernels, GateOffLeavesTheRanksAlone) {
  // With the gate off no rank communicates: all_reduce is its input, all_gather writes nothing
  // (one rank alone, which would wait forever if it did).
  ThreadRanks ranks(2);
  ranks.run([&](int rank, Collectives &collectives) {
    if (rank != 0)
      return;
    OwnedTensor x = f32({3}, {1, 2, 3}), off = f32({}, {0});
    EXPECT_EQ(runOnRank(collectives, "all_reduce", {x, off}, DType::F32, {3}, 2)[0].values(),
              std::vector<double>({1, 2, 3}));
    OwnedTensor shard = f32({2}, {7, 8});
    runOnRank(collectives, "all_gather", {shard, off}, DType::F32, {3}, 2);
  });
}

TEST(CollectiveKernels, RefuseAnotherWorldSize) {
  // A plan compiled for 3 ranks run by 2, or by one process: the kernel says so.
  std::vector<OwnedTensor> in, out;
  in.push_back(f32({4}, {1, 2, 3, 4}));
  out.emplace_back(DType::F32, Shape{2});
  Attributes attributes = attrs({{"world_size", int64_t{3}}});
  KernelCall call = makeCall(in, out, attributes);
  std::string error;
  EXPECT_FALSE(runInContext(kernelNamed("shard"), call, error));
  EXPECT_EQ(error, "shard: the program is compiled for 3 ranks and runs as 1");
}

TEST(CollectiveKernels, ChecksRefuseBadShards) {
  Attributes two = attrs({{"world_size", int64_t{2}}}), one = attrs({{"world_size", int64_t{1}}});
  EXPECT_REJECTED("shard", "shard", {{DType::F32, {5}}}, {{DType::F32, {2}}}, two);
  EXPECT_REJECTED("world_size must be in [2", "shard", {{DType::F32, {4}}}, {{DType::F32, {4}}},
                  one);
  EXPECT_REJECTED("element type", "reduce_scatter", {{DType::F32, {4}}}, {{DType::BF16, {2}}}, two);
  EXPECT_REJECTED("input", "reduce_scatter", {{DType::I64, {4}}}, {{DType::I64, {2}}}, two);
  EXPECT_REJECTED("shard", "all_gather", {{DType::F32, {3}}}, {{DType::F32, {4}}}, two);
  EXPECT_ACCEPTED("all_gather", {{DType::F32, {3}}, {DType::F32, {}}}, {{DType::F32, {5}}}, two);
  EXPECT_ACCEPTED("all_gather", {{DType::F32, {3}}}, {{DType::BF16, {5}}}, two);
  EXPECT_REJECTED("gathers bf16 shards into f32", "all_gather", {{DType::BF16, {3}}},
                  {{DType::F32, {5}}}, two);
}

} // namespace
} // namespace memc::kernels::testing
