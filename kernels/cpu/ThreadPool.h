//===- ThreadPool.h - the CPU kernels' worker threads -----------*- C++ -*-===//
//
// One process-wide pool of workers that kernels split loops over. A parallelFor blocks until its
// range is done and its caller works too, so a pool of N threads runs N-1 workers. Calls from
// inside a parallelFor body, or while another thread's parallelFor holds the pool, run inline:
// nesting and concurrent callers are safe, just not parallel.
//
// Between loops the workers, and the caller waiting for them, spin a short while before they
// sleep: a step's kernels follow each other within microseconds, and a futex wake-up costs tens
// of them, as much as a small kernel's whole chunk (a convolution at 2 threads ran slower than
// at 1 when every loop woke its workers from sleep).
//
// For a profiler's trace the pool can record, per thread, when it was busy with each parallel
// loop's chunks (recordSpans); off, a loop pays one relaxed atomic load per thread.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_THREADPOOL_H
#define MEMC_KERNELS_CPU_THREADPOOL_H

#include "kernels/cpu/WorkspaceSlots.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace memc::kernels {

/// Body of a parallel loop: processes [begin, end).
using RangeFunction = std::function<void(int64_t begin, int64_t end)>;

/// When one of the pool's threads ran a parallel loop's chunks: `thread` 0 is the loop's caller,
/// k > 0 worker k; from its first chunk to its last, in seconds on the steady clock.
struct ThreadSpan {
  int thread;
  double start, end;
};

class ThreadPool {
public:
  /// A pool that runs loops on `numThreads` threads, the caller included.
  explicit ThreadPool(int numThreads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int numThreads() const { return static_cast<int>(workers.size()) + 1; }

  /// Runs `body` over [begin, end) in chunks of at least `grain` indices (except the last).
  void parallelFor(int64_t begin, int64_t end, int64_t grain, const RangeFunction &body);

  /// The pool kernels use: MEMC_NUM_THREADS threads, or the hardware's concurrency.
  static ThreadPool &global();

  /// Starts or stops recording every thread's span in each parallel loop (loops run inline,
  /// by a single-chunk or nested call, are not spans of the pool).
  void recordSpans(bool on) { recording.store(on); }
  /// The spans recorded since the last call, thread by thread in time order. Call it between
  /// loops (each thread writes only its own list, and a loop ends when all threads are done).
  std::vector<ThreadSpan> takeSpans();

private:
  void workerLoop(int thread);
  void runChunks(int thread);

  std::vector<std::thread> workers;
  std::mutex busy; // held by the one caller whose loop the workers run
  std::mutex mutex;
  std::condition_variable wake;
  std::condition_variable finished;
  std::atomic<uint64_t> generation{0}; // moves, under `mutex`, when a loop starts
  std::atomic<int> runningWorkers{0};   // workers not yet done with the current loop
  std::atomic<bool> stopping{false};

  // The loop being run; written under `mutex` before `generation` moves.
  const RangeFunction *body = nullptr;
  int64_t loopBegin = 0, loopEnd = 0, chunkSize = 1, numChunks = 0;
  std::atomic<int64_t> nextChunk{0};

  std::atomic<bool> recording{false};
  std::vector<std::vector<ThreadSpan>> spans; // [thread], each written by its thread only
};

/// The thread count MEMC_NUM_THREADS asks for (1..1024), else the hardware's concurrency.
int defaultThreadCount();

/// ThreadPool::global().parallelFor.
void parallelFor(int64_t begin, int64_t end, int64_t grain, const RangeFunction &body);

/// Body of a loop whose pieces use scratch: processes [begin, end) with slot `slot`'s scratch.
using SlotRangeFunction = std::function<void(int64_t slot, int64_t begin, int64_t end)>;

/// Runs body over [begin, end) in workspaceSlots(begin, end, grain) contiguous pieces, piece i
/// with slot i, spread over the pool's threads. No two pieces run with the same slot.
void parallelForSlots(int64_t begin, int64_t end, int64_t grain, const SlotRangeFunction &body);

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_THREADPOOL_H
