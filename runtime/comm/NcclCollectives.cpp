//===- NcclCollectives.cpp - the ranks of a program on CUDA devices -------===//
#include "runtime/comm/NcclCollectives.h"

#include <cuda_runtime.h>
#include <nccl.h>

namespace memc::runtime {
namespace {

using kernels::DType;
using kernels::ReduceOp;

bool ncclFailed(ncclResult_t result, const char *what, std::string &error) {
  if (result == ncclSuccess)
    return false;
  error = std::string(what) + " failed: " + ncclGetErrorString(result);
  return true;
}

bool ncclType(DType dtype, ncclDataType_t &type) {
  switch (dtype) {
  case DType::F32:
    type = ncclFloat32;
    return true;
  case DType::F16:
    type = ncclFloat16;
    return true;
  case DType::BF16:
    type = ncclBfloat16;
    return true;
  case DType::I64:
    type = ncclInt64;
    return true;
  case DType::I32:
    type = ncclInt32;
    return true;
  default:
    return false;
  }
}

bool unsupported(DType dtype, std::string &error) {
  error = std::string("NCCL collectives do not carry ") + kernels::dtypeName(dtype) + " tensors";
  return false;
}

ncclComm_t comm(void *communicator) { return static_cast<ncclComm_t>(communicator); }

} // namespace

std::unique_ptr<NcclCollectives> NcclCollectives::create(int rank, int size,
                                                         const Broadcast &broadcast, int device,
                                                         std::string &error) {
  std::unique_ptr<NcclCollectives> result(new NcclCollectives());
  result->myRank = rank;
  result->worldSize = size;
  if (cudaError_t status = cudaSetDevice(device); status != cudaSuccess) {
    error = std::string("cudaSetDevice: ") + cudaGetErrorString(status);
    return nullptr;
  }
  ncclUniqueId id;
  if (rank == 0 && ncclFailed(ncclGetUniqueId(&id), "ncclGetUniqueId", error))
    return nullptr;
  if (size > 1 && !broadcast(&id, static_cast<int>(sizeof(id)), error))
    return nullptr;
  ncclComm_t made = nullptr;
  if (ncclFailed(ncclCommInitRank(&made, size, id, rank), "ncclCommInitRank", error))
    return nullptr;
  result->communicator = made;
  return result;
}

NcclCollectives::~NcclCollectives() {
  if (communicator)
    ncclCommDestroy(comm(communicator));
}

bool NcclCollectives::allReduce(void *data, int64_t count, DType dtype, ReduceOp op, void *stream,
                                std::string &error) {
  ncclDataType_t type;
  if (!ncclType(dtype, type))
    return unsupported(dtype, error);
  return !ncclFailed(ncclAllReduce(data, data, static_cast<size_t>(count), type,
                                   op == ReduceOp::Max ? ncclMax : ncclSum, comm(communicator),
                                   static_cast<cudaStream_t>(stream)),
                     "ncclAllReduce", error);
}

bool NcclCollectives::allGather(const void *shard, void *whole, int64_t shardCount, DType dtype,
                                void *stream, std::string &error) {
  ncclDataType_t type;
  if (!ncclType(dtype, type))
    return unsupported(dtype, error);
  return !ncclFailed(ncclAllGather(shard, whole, static_cast<size_t>(shardCount), type,
                                   comm(communicator), static_cast<cudaStream_t>(stream)),
                     "ncclAllGather", error);
}

bool NcclCollectives::reduceScatter(const void *whole, void *shard, int64_t shardCount,
                                    DType dtype, ReduceOp op, void *stream, std::string &error) {
  ncclDataType_t type;
  if (!ncclType(dtype, type))
    return unsupported(dtype, error);
  return !ncclFailed(ncclReduceScatter(whole, shard, static_cast<size_t>(shardCount), type,
                                       op == ReduceOp::Max ? ncclMax : ncclSum,
                                       comm(communicator), static_cast<cudaStream_t>(stream)),
                     "ncclReduceScatter", error);
}

} // namespace memc::runtime
