//===- ThreadPool.h - the CPU kernels' worker threads -----------*- C++ -*-===//
//
// One process-wide pool of workers that kernels split loops over. A parallelFor blocks until its
// range is done and its caller works too, so a pool of N threads runs N-1 workers. Calls from
// inside a parallelFor body, or while another thread's parallelFor holds the pool, run inline:
// nesting and concurrent callers are safe, just not parallel.
//
// Between loops the workers spin a while before they sleep: a step's kernels follow each other
// within microseconds, and a futex wake-up costs tens of them, as much as a small kernel's whole
// chunk. A loop's caller never waits for a worker to arrive: workers join a loop while it is
// open, and the caller, once it has run out of chunks, closes the loop and waits only for the
// workers inside. A worker still asleep, or late, misses the loop instead of delaying it (before,
// the caller waited for every worker to check in: a loop after 0.3 ms of inline kernels cost a
// wake-up, about 30 us on the 2-core VM, even when the caller had run every chunk itself).
//
// Each thread's share of a loop is a contiguous run of its chunks, the same share of every loop:
// a kernel's thread then mostly reads what the same thread wrote in the kernel before (the same
// images, the same rows), from its own core's cache. Handed out first come first served, the
// chunks of consecutive kernels landed on either core at random, and a small kernel split over
// 2 threads ran slower than on one (an add of 32K f32 after an inline kernel: 4.9 us at 1
// thread, 9.4 at 2), its inputs crossing between the cores.
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

  /// Waits until `ready()`, spinning first, then sleeping on `signal` (counted in `sleepers`
  /// while asleep, so that whoever makes `ready()` true knows to notify).
  template <typename Ready>
  void await(Ready ready, std::condition_variable &signal, std::atomic<int> &sleepers);
  /// Wakes the threads asleep on `signal`, if any.
  void notify(std::condition_variable &signal, const std::atomic<int> &sleepers);

  std::vector<std::thread> workers;
  std::mutex busy; // held by the one caller whose loop the workers run
  std::mutex mutex; // guards the sleeps on the condition variables
  std::condition_variable wake, finished;
  std::atomic<int> sleepingWorkers{0}, sleepingCaller{0};
  std::atomic<bool> stopping{false};

  // The current loop as one word: its generation (which moves when a loop starts), whether the
  // caller has closed it to joiners, and how many workers are inside it.
  static constexpr uint64_t kInsideMask = 0xffff, kClosed = uint64_t{1} << 16;
  static constexpr int kGenerationShift = 17;
  std::atomic<uint64_t> loopWord{kClosed};

  // The loop being run; written before its generation is published in loopWord.
  const RangeFunction *body = nullptr;
  int64_t loopBegin = 0, loopEnd = 0, chunkSize = 1, numChunks = 0;
  /// Thread t's share of a loop's chunks, [next, end): it takes them in order, then takes what
  /// is left of the others' (a late worker's share goes to whoever is free).
  struct alignas(64) Share {
    std::atomic<int64_t> next{0};
    int64_t end = 0;
  };
  std::vector<Share> shares;

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
