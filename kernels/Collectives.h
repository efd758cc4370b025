//===- Collectives.h - what a kernel sees of the other ranks ------*- C++ -*-===//
//
// A data-parallel program runs one process per rank, each with the same plan; the collective
// steps of the plan (memc.all_reduce, ...) call this interface through their KernelContext.
// Two implementations live in runtime/comm/: MPI for CPU ranks and NCCL for CUDA ranks. Buffers
// are the device's memory (host memory on the CPU); `stream` is the launching stream's native
// handle (null on the CPU), on which a device implementation enqueues its work.
//
// Every rank must call the same collectives in the same order with the same counts: the ranks
// run one plan, whose step order is fixed at compile time, so they do.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_COLLECTIVES_H
#define MEMC_KERNELS_COLLECTIVES_H

#include "kernels/DTypeTable.h"

#include <cstdint>
#include <string>

namespace memc::kernels {

/// The most ranks a program is compiled for: far beyond any cluster, small enough that shard
/// arithmetic (elements x ranks) stays in int64.
constexpr int64_t kMaxWorldSize = 1 << 16;

/// ZeRO's shards: rank r of `worldSize` holds the flat elements [r*S, (r+1)*S) of a tensor of
/// `elements`, S this, the last shard padded with zeros (the compiler's types and the kernels
/// both read it here).
constexpr int64_t shardElements(int64_t elements, int64_t worldSize) {
  return (elements + worldSize - 1) / worldSize;
}

enum class ReduceOp : uint8_t { Sum, Max };

class Collectives {
public:
  virtual ~Collectives() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Replaces `count` elements at `data` with their reduction over every rank, in place.
  virtual bool allReduce(void *data, int64_t count, DType dtype, ReduceOp op, void *stream,
                         std::string &error) = 0;
  /// Concatenates every rank's `shardCount` elements at `shard` into `whole`, in rank order.
  virtual bool allGather(const void *shard, void *whole, int64_t shardCount, DType dtype,
                         void *stream, std::string &error) = 0;
  /// Reduces `whole` (size() * shardCount elements) over every rank and leaves rank r's slice r
  /// in `shard`.
  virtual bool reduceScatter(const void *whole, void *shard, int64_t shardCount, DType dtype,
                             ReduceOp op, void *stream, std::string &error) = 0;
};

} // namespace memc::kernels

#endif // MEMC_KERNELS_COLLECTIVES_H
