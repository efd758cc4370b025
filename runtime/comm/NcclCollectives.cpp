//===- NcclCollectives.cpp - the ranks of a program on CUDA devices -------===//
#include "runtime/comm/NcclCollectives.h"

#include "kernels/cuda/CudaLibrarySearch.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>

namespace memc::runtime {

/// The NCCL functions memc calls, resolved from the library at run time into pointers of the
/// header's own types.
struct NcclCollectives::Library {
  void *handle = nullptr;
  std::string path;
  decltype(&ncclGetVersion) getVersion = nullptr;
  decltype(&ncclGetErrorString) getErrorString = nullptr;
  decltype(&ncclGetUniqueId) getUniqueId = nullptr;
  decltype(&ncclCommInitRank) commInitRank = nullptr;
  decltype(&ncclCommDestroy) commDestroy = nullptr;
  decltype(&ncclAllReduce) allReduce = nullptr;
  decltype(&ncclAllGather) allGather = nullptr;
  decltype(&ncclReduceScatter) reduceScatter = nullptr;
  ~Library() {
    if (handle)
      dlclose(handle);
  }
};

namespace {

using kernels::DType;
using kernels::ReduceOp;
using kernels::cuda::resolveSymbol;

/// libnccl.so.2, found as the CUDA libraries are (CudaLibrarySearch.h); null with a message.
std::unique_ptr<NcclCollectives::Library> loadNccl(std::string &error) {
  auto library = std::make_unique<NcclCollectives::Library>();
  const std::string soname = "libnccl.so." + std::to_string(NCCL_MAJOR);
  library->handle =
      kernels::cuda::openCudaLibrary({soname, "libnccl.so"},
                                     "Install NCCL " + std::to_string(NCCL_MAJOR) +
                                         " (the nvidia-nccl wheel, or NVIDIA's libnccl2 package)",
                                     library->path, error);
  if (!library->handle)
    return nullptr;
  std::string missing;
  bool ok = resolveSymbol(library->handle, "ncclGetVersion", library->getVersion, missing);
  ok &= resolveSymbol(library->handle, "ncclGetErrorString", library->getErrorString, missing);
  ok &= resolveSymbol(library->handle, "ncclGetUniqueId", library->getUniqueId, missing);
  ok &= resolveSymbol(library->handle, "ncclCommInitRank", library->commInitRank, missing);
  ok &= resolveSymbol(library->handle, "ncclCommDestroy", library->commDestroy, missing);
  ok &= resolveSymbol(library->handle, "ncclAllReduce", library->allReduce, missing);
  ok &= resolveSymbol(library->handle, "ncclAllGather", library->allGather, missing);
  ok &= resolveSymbol(library->handle, "ncclReduceScatter", library->reduceScatter, missing);
  if (!ok) {
    error = library->path + " lacks " + missing;
    return nullptr;
  }
  // The unique id and enums passed are this header's: another major version may differ.
  int version = 0;
  library->getVersion(&version);
  if (version / 10000 != NCCL_MAJOR) {
    error = library->path + " is NCCL " + std::to_string(version / 10000) + "." +
            std::to_string(version / 100 % 100) + "; memc was built for NCCL " +
            std::to_string(NCCL_MAJOR) + " (set MEMC_CUDA_LIBS to the folder of " + soname + ")";
    return nullptr;
  }
  return library;
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

bool NcclCollectives::failed(int result, const char *what, std::string &error) const {
  if (result == ncclSuccess)
    return false;
  error = std::string(what) + " failed: " + nccl->getErrorString(static_cast<ncclResult_t>(result));
  return true;
}

std::unique_ptr<NcclCollectives> NcclCollectives::create(int rank, int size,
                                                         const Broadcast &broadcast, int device,
                                                         std::string &error) {
  std::unique_ptr<NcclCollectives> result(new NcclCollectives());
  if (!(result->nccl = loadNccl(error)))
    return nullptr;
  result->myRank = rank;
  result->worldSize = size;
  if (cudaError_t status = cudaSetDevice(device); status != cudaSuccess) {
    error = std::string("cudaSetDevice: ") + cudaGetErrorString(status);
    return nullptr;
  }
  ncclUniqueId id;
  if (rank == 0 && result->failed(result->nccl->getUniqueId(&id), "ncclGetUniqueId", error))
    return nullptr;
  if (size > 1 && !broadcast(&id, static_cast<int>(sizeof(id)), error))
    return nullptr;
  ncclComm_t made = nullptr;
  if (result->failed(result->nccl->commInitRank(&made, size, id, rank), "ncclCommInitRank", error))
    return nullptr;
  result->communicator = made;
  return result;
}

const std::string &NcclCollectives::libraryPath() const { return nccl->path; }

NcclCollectives::~NcclCollectives() {
  if (communicator)
    nccl->commDestroy(comm(communicator));
}

bool NcclCollectives::allReduce(void *data, int64_t count, DType dtype, ReduceOp op, void *stream,
                                std::string &error) {
  ncclDataType_t type;
  if (!ncclType(dtype, type))
    return unsupported(dtype, error);
  return !failed(nccl->allReduce(data, data, static_cast<size_t>(count), type,
                                 op == ReduceOp::Max ? ncclMax : ncclSum, comm(communicator),
                                 static_cast<cudaStream_t>(stream)),
                 "ncclAllReduce", error);
}

bool NcclCollectives::allGather(const void *shard, void *whole, int64_t shardCount, DType dtype,
                                void *stream, std::string &error) {
  ncclDataType_t type;
  if (!ncclType(dtype, type))
    return unsupported(dtype, error);
  return !failed(nccl->allGather(shard, whole, static_cast<size_t>(shardCount), type,
                                 comm(communicator), static_cast<cudaStream_t>(stream)),
                 "ncclAllGather", error);
}

bool NcclCollectives::reduceScatter(const void *whole, void *shard, int64_t shardCount,
                                    DType dtype, ReduceOp op, void *stream, std::string &error) {
  ncclDataType_t type;
  if (!ncclType(dtype, type))
    return unsupported(dtype, error);
  return !failed(nccl->reduceScatter(whole, shard, static_cast<size_t>(shardCount), type,
                                     op == ReduceOp::Max ? ncclMax : ncclSum, comm(communicator),
                                     static_cast<cudaStream_t>(stream)),
                 "ncclReduceScatter", error);
}

} // namespace memc::runtime
