//===- main.cpp - memc-nccl-check: the NCCL collectives on a GPU ----------===//
//
// One process, one rank on GPU 0 with its own stream: every collective of kernels/Collectives.h
// through NcclCollectives, in f32, bf16 and f16, on device buffers, checked on the host against
// its definition over one rank (the sum is the input, the gather the shard, the scatter the
// whole), and a dtype NCCL does not carry refused. One rank still runs NCCL's calls on memc's
// buffers, counts and streams; several ranks need several GPUs (NCCL refuses two ranks on one)
// and MPI to bootstrap them, as the CUDA backend's programs will. Exit 0 when every check holds.
//
// Usage: memc-nccl-check [--elements E]
//
//===----------------------------------------------------------------------===//
#include "kernels/Float16.h"
#include "runtime/comm/NcclCollectives.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using memc::kernels::DType;
using memc::runtime::NcclCollectives;

namespace {

bool cudaOk(cudaError_t status, const char *what) {
  if (status == cudaSuccess)
    return true;
  std::fprintf(stderr, "memc-nccl-check: %s: %s\n", what, cudaGetErrorString(status));
  return false;
}

/// Element i of rank r's input: exact in bf16 and f16 sums of a few ranks.
float inputValue(int rank, int64_t i) { return static_cast<float>((i % 9) - 4) + 0.5f * rank; }

std::vector<uint8_t> encode(const std::vector<float> &values, DType dtype) {
  size_t size = dtype == DType::F32 ? 4 : 2;
  std::vector<uint8_t> bytes(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::F32) {
      std::memcpy(&bytes[i * 4], &values[i], 4);
      continue;
    }
    uint16_t half = dtype == DType::BF16 ? memc::kernels::floatToBFloat16(values[i])
                                         : memc::kernels::floatToHalf(values[i]);
    std::memcpy(&bytes[i * 2], &half, 2);
  }
  return bytes;
}

std::vector<float> decode(const std::vector<uint8_t> &bytes, DType dtype) {
  size_t size = dtype == DType::F32 ? 4 : 2;
  std::vector<float> values(bytes.size() / size);
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::F32) {
      std::memcpy(&values[i], &bytes[i * 4], 4);
      continue;
    }
    uint16_t half;
    std::memcpy(&half, &bytes[i * 2], 2);
    values[i] = dtype == DType::BF16 ? memc::kernels::bfloat16ToFloat(half)
                                     : memc::kernels::halfToFloat(half);
  }
  return values;
}

} // namespace

int main(int argc, char **argv) {
  int64_t shardElements = 1 << 20;
  if (argc == 3 && std::strcmp(argv[1], "--elements") == 0)
    shardElements = std::atoll(argv[2]);
  int devices = 0;
  if (!cudaOk(cudaGetDeviceCount(&devices), "cudaGetDeviceCount") || devices == 0 ||
      shardElements <= 0)
    return 1;
  cudaDeviceProp properties;
  cudaGetDeviceProperties(&properties, 0);
  std::printf("memc-nccl-check: 1 rank on GPU 0 (%s) of %d\n", properties.name, devices);
  struct {
    cudaStream_t stream = nullptr;
    std::unique_ptr<NcclCollectives> collectives;
    void *whole = nullptr, *shard = nullptr;
  } rank;
  std::string error;
  rank.collectives = NcclCollectives::create(0, 1, {}, 0, error);
  if (!rank.collectives) {
    std::fprintf(stderr, "memc-nccl-check: %s\n", error.c_str());
    return 1;
  }
  std::printf("memc-nccl-check: NCCL from %s\n", rank.collectives->libraryPath().c_str());
  if (!cudaOk(cudaStreamCreate(&rank.stream), "cudaStreamCreate") ||
      !cudaOk(cudaMalloc(&rank.whole, shardElements * 4), "cudaMalloc") ||
      !cudaOk(cudaMalloc(&rank.shard, shardElements * 4), "cudaMalloc"))
    return 1;

  int failures = 0;
  auto report = [&](const char *what, DType dtype, bool ok, const std::string &detail) {
    std::printf("%-15s %-5s %s%s\n", what, memc::kernels::dtypeName(dtype), ok ? "ok" : "FAIL",
                detail.c_str());
    failures += !ok;
  };
  for (DType dtype : {DType::F32, DType::BF16, DType::F16}) {
    std::vector<float> input(shardElements);
    for (int64_t i = 0; i < shardElements; ++i)
      input[i] = inputValue(0, i);
    std::vector<uint8_t> bytes = encode(input, dtype), out(bytes.size());
    auto upload = [&](void *to) {
      return cudaOk(cudaMemcpy(to, bytes.data(), bytes.size(), cudaMemcpyHostToDevice),
                    "cudaMemcpy");
    };
    auto download = [&](void *from) {
      return cudaOk(cudaStreamSynchronize(rank.stream), "cudaStreamSynchronize") &&
             cudaOk(cudaMemcpy(out.data(), from, out.size(), cudaMemcpyDeviceToHost),
                    "cudaMemcpy");
    };
    // The sum over one rank is the input; gathering one shard is the shard; its slice of the
    // sum is the whole.
    bool ok = upload(rank.whole) &&
              rank.collectives->allReduce(rank.whole, shardElements, dtype,
                                          memc::kernels::ReduceOp::Sum, rank.stream, error) &&
              download(rank.whole);
    report("all_reduce", dtype, ok && decode(out, dtype) == decode(bytes, dtype), error);
    ok = upload(rank.shard) && cudaOk(cudaMemset(rank.whole, 0xA5, bytes.size()), "cudaMemset") &&
         rank.collectives->allGather(rank.shard, rank.whole, shardElements, dtype, rank.stream,
                                     error) &&
         download(rank.whole);
    report("all_gather", dtype, ok && out == bytes, error);
    ok = upload(rank.whole) && cudaOk(cudaMemset(rank.shard, 0xA5, bytes.size()), "cudaMemset") &&
         rank.collectives->reduceScatter(rank.whole, rank.shard, shardElements, dtype,
                                         memc::kernels::ReduceOp::Sum, rank.stream, error) &&
         download(rank.shard);
    report("reduce_scatter", dtype, ok && out == bytes, error);
  }
  // A dtype NCCL's collectives do not carry is refused with a message, not sent.
  bool refused = !rank.collectives->allReduce(rank.whole, 4, DType::U8,
                                              memc::kernels::ReduceOp::Sum, rank.stream, error);
  report("refuses", DType::U8, refused && !error.empty(), refused ? " (" + error + ")" : "");
  std::printf("memc-nccl-check: %d failed\n", failures);
  return failures == 0 ? 0 : 1;
}
