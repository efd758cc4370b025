//===- MpiCollectives.cpp - the ranks of a program started by mpirun ------===//
#include "runtime/comm/MpiCollectives.h"
#include "kernels/Float16.h"

#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>

namespace memc::runtime {
namespace {

using kernels::DType;
using kernels::ReduceOp;

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool mpiFailed(int code, const char *what, std::string &error) {
  if (code == MPI_SUCCESS)
    return false;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  error = std::string(what) + " failed: " + std::string(text, static_cast<size_t>(length));
  return true;
}

/// The 16-bit float sums and maxima MPI lacks, element by element in f32 and rounded back.
template <float (*toFloat)(uint16_t), uint16_t (*fromFloat)(float), bool max>
void reduce16(void *in, void *inout, int *count, MPI_Datatype *) {
  auto *a = static_cast<const uint16_t *>(in);
  auto *b = static_cast<uint16_t *>(inout);
  for (int i = 0; i < *count; ++i) {
    float x = toFloat(a[i]), y = toFloat(b[i]);
    b[i] = fromFloat(max ? (x > y ? x : y) : x + y);
  }
}

/// MPI's type and operation for a dtype; false for dtypes no collective carries.
bool mpiTypeAndOp(DType dtype, ReduceOp op, MPI_Datatype &type, MPI_Op &mpiOp) {
  static MPI_Op ops16[2][2] = {{MPI_OP_NULL, MPI_OP_NULL}, {MPI_OP_NULL, MPI_OP_NULL}};
  bool isMax = op == ReduceOp::Max;
  mpiOp = isMax ? MPI_MAX : MPI_SUM;
  switch (dtype) {
  case DType::F32:
    type = MPI_FLOAT;
    return true;
  case DType::I64:
    type = MPI_INT64_T;
    return true;
  case DType::I32:
    type = MPI_INT32_T;
    return true;
  case DType::F16:
  case DType::BF16: {
    type = MPI_UINT16_T;
    int half = dtype == DType::F16 ? 0 : 1;
    MPI_Op &made = ops16[half][isMax];
    if (made == MPI_OP_NULL) {
      MPI_User_function *functions[2][2] = {
          {&reduce16<kernels::halfToFloat, kernels::floatToHalf, false>,
           &reduce16<kernels::halfToFloat, kernels::floatToHalf, true>},
          {&reduce16<kernels::bfloat16ToFloat, kernels::floatToBFloat16, false>,
           &reduce16<kernels::bfloat16ToFloat, kernels::floatToBFloat16, true>}};
      MPI_Op_create(functions[half][isMax], /*commute=*/1, &made);
    }
    mpiOp = made;
    return true;
  }
  default:
    return false;
  }
}

bool unsupported(DType dtype, std::string &error) {
  error = std::string("collectives do not carry ") + kernels::dtypeName(dtype) + " tensors";
  return false;
}

} // namespace

class MpiCollectives::Waiting {
public:
  Waiting(MpiCollectives &owner, const char *what) : owner(owner) {
    owner.waitingFor = what;
    owner.waitingSinceNs.store(nowNs());
  }
  ~Waiting() { owner.waitingSinceNs.store(0); }

private:
  MpiCollectives &owner;
};

std::unique_ptr<MpiCollectives> MpiCollectives::create(double timeoutSeconds,
                                                       std::string &error) {
  std::unique_ptr<MpiCollectives> ranks(new MpiCollectives());
  int provided = 0;
  if (mpiFailed(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init",
                error))
    return nullptr;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &ranks->myRank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks->worldSize);
  ranks->timeoutSeconds = timeoutSeconds;
  if (timeoutSeconds > 0)
    ranks->watchdog = std::thread([raw = ranks.get()] { raw->watch(); });
  return ranks;
}

MpiCollectives::~MpiCollectives() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  stopWatching.notify_all();
  if (watchdog.joinable())
    watchdog.join();
  MPI_Finalize();
}

void MpiCollectives::watch() {
  std::unique_lock<std::mutex> lock(mutex);
  while (!stopWatching.wait_for(lock, std::chrono::milliseconds(200), [&] { return stopping; })) {
    int64_t since = waitingSinceNs.load();
    if (since == 0 || double(nowNs() - since) * 1e-9 < timeoutSeconds)
      continue;
    // The rank this one waits for hangs: MPI cannot cancel a collective, so the process ends,
    // and mpirun ends the others.
    std::fprintf(stderr,
                 "rank %d: %s has waited %.0f s for the other ranks (--collective-timeout); "
                 "ending the run\n",
                 myRank, waitingFor, timeoutSeconds);
    std::fflush(stderr);
    std::_Exit(1);
  }
}

void MpiCollectives::abortAll(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code); // MPI_Abort does not return; this only satisfies [[noreturn]]
}

bool MpiCollectives::barrier(std::string &error) {
  Waiting waiting(*this, "a barrier");
  return !mpiFailed(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier", error);
}

bool MpiCollectives::broadcast(void *data, int bytes, int root, std::string &error) {
  Waiting waiting(*this, "a broadcast");
  return !mpiFailed(MPI_Bcast(data, bytes, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast", error);
}

bool MpiCollectives::allReduce(void *data, int64_t count, DType dtype, ReduceOp op, void *,
                               std::string &error) {
  MPI_Datatype type;
  MPI_Op mpiOp;
  if (!mpiTypeAndOp(dtype, op, type, mpiOp))
    return unsupported(dtype, error);
  Waiting waiting(*this, "an all-reduce");
  // MPI counts are ints: a larger tensor goes in pieces.
  const int64_t piece = INT_MAX / 2;
  auto *bytes = static_cast<char *>(data);
  for (int64_t begin = 0; begin < count; begin += piece) {
    int n = static_cast<int>(std::min(piece, count - begin));
    if (mpiFailed(MPI_Allreduce(MPI_IN_PLACE, bytes + begin * kernels::dtypeSize(dtype), n, type,
                                mpiOp, MPI_COMM_WORLD),
                  "MPI_Allreduce", error))
      return false;
  }
  return true;
}

bool MpiCollectives::allGather(const void *shard, void *whole, int64_t shardCount, DType dtype,
                               void *, std::string &error) {
  MPI_Datatype type;
  MPI_Op unused;
  if (!mpiTypeAndOp(dtype, ReduceOp::Sum, type, unused))
    return unsupported(dtype, error);
  if (shardCount > INT_MAX) {
    error = "an all-gather of more than 2^31 elements per rank";
    return false;
  }
  Waiting waiting(*this, "an all-gather");
  int n = static_cast<int>(shardCount);
  return !mpiFailed(MPI_Allgather(shard, n, type, whole, n, type, MPI_COMM_WORLD),
                    "MPI_Allgather", error);
}

bool MpiCollectives::reduceScatter(const void *whole, void *shard, int64_t shardCount,
                                   DType dtype, ReduceOp op, void *, std::string &error) {
  MPI_Datatype type;
  MPI_Op mpiOp;
  if (!mpiTypeAndOp(dtype, op, type, mpiOp))
    return unsupported(dtype, error);
  if (shardCount > INT_MAX) {
    error = "a reduce-scatter of more than 2^31 elements per rank";
    return false;
  }
  Waiting waiting(*this, "a reduce-scatter");
  return !mpiFailed(MPI_Reduce_scatter_block(whole, shard, static_cast<int>(shardCount), type,
                                             mpiOp, MPI_COMM_WORLD),
                    "MPI_Reduce_scatter_block", error);
}

} // namespace memc::runtime
