//===- ThreadPool.cpp - the CPU kernels' worker threads -------------------===//
#include "kernels/cpu/ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <immintrin.h>

namespace memc::kernels {

namespace {

// Set on pool workers and on a caller while it runs its loop, so nested loops run inline.
thread_local bool insideParallelLoop = false;

double steadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// How long a waiting thread spins before it sleeps: longer than the gaps between a step's
// kernels, short enough that an idle pool gives its cores back at once.
constexpr auto kSpin = std::chrono::microseconds(200);

/// Spins until `done()` or kSpin has passed; whether `done()` held.
template <typename Done> bool spinUntil(Done done) {
  auto deadline = std::chrono::steady_clock::now() + kSpin;
  while (true) {
    for (int i = 0; i < 64; ++i) {
      if (done())
        return true;
      _mm_pause();
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return done();
    // Where the thread it waits for shares its core, this lets that one run.
    std::this_thread::yield();
  }
}

} // namespace

int defaultThreadCount() {
  if (const char *text = std::getenv("MEMC_NUM_THREADS")) {
    char *end = nullptr;
    long value = std::strtol(text, &end, 10);
    if (end != text && *end == '\0' && value >= 1 && value <= 1024)
      return static_cast<int>(value);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

ThreadPool::ThreadPool(int numThreads) : spans(std::max(numThreads, 1)) {
  for (int i = 1; i < numThreads; ++i)
    workers.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  for (std::thread &worker : workers)
    worker.join();
}

ThreadPool &ThreadPool::global() {
  static ThreadPool pool(defaultThreadCount());
  return pool;
}

void ThreadPool::runChunks(int thread) {
  bool record = recording.load(std::memory_order_relaxed);
  double start = record ? steadySeconds() : 0.0;
  bool ran = false;
  for (int64_t chunk = nextChunk.fetch_add(1); chunk < numChunks; chunk = nextChunk.fetch_add(1)) {
    int64_t begin = loopBegin + chunk * chunkSize;
    (*body)(begin, std::min(loopEnd, begin + chunkSize));
    ran = true;
  }
  if (record && ran)
    spans[thread].push_back({thread, start, steadySeconds()});
}

std::vector<ThreadSpan> ThreadPool::takeSpans() {
  std::vector<ThreadSpan> all;
  for (std::vector<ThreadSpan> &thread : spans) {
    all.insert(all.end(), thread.begin(), thread.end());
    thread.clear();
  }
  return all;
}

void ThreadPool::workerLoop(int thread) {
  insideParallelLoop = true;
  uint64_t seen = 0;
  auto started = [&] { return stopping.load() || generation.load() != seen; };
  while (true) {
    if (!spinUntil(started)) {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, started);
    }
    if (stopping)
      return;
    // The loop's fields were written under `mutex` before `generation` moved (seq_cst).
    seen = generation.load();
    runChunks(thread);
    if (runningWorkers.fetch_sub(1) == 1) {
      std::lock_guard<std::mutex> lock(mutex); // a caller gone to sleep sees the count under it
      finished.notify_one();
    }
  }
}

void ThreadPool::parallelFor(int64_t begin, int64_t end, int64_t grain, const RangeFunction &fn) {
  if (end <= begin)
    return;
  int64_t total = end - begin;
  grain = std::max<int64_t>(grain, 1);
  // A few chunks per thread even out uneven progress without much dispatch cost.
  int64_t chunks = std::min<int64_t>(total / grain, 4 * int64_t(numThreads()));
  if (chunks <= 1 || workers.empty() || insideParallelLoop) {
    fn(begin, end);
    return;
  }
  std::unique_lock<std::mutex> owner(busy, std::try_to_lock);
  if (!owner.owns_lock()) {
    fn(begin, end);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    body = &fn;
    loopBegin = begin;
    loopEnd = end;
    chunkSize = (total + chunks - 1) / chunks;
    numChunks = (total + chunkSize - 1) / chunkSize;
    nextChunk.store(0);
    runningWorkers = static_cast<int>(workers.size());
    ++generation;
  }
  wake.notify_all();
  insideParallelLoop = true;
  runChunks(0);
  insideParallelLoop = false;
  auto workersDone = [&] { return runningWorkers.load() == 0; };
  if (!spinUntil(workersDone)) {
    std::unique_lock<std::mutex> lock(mutex);
    finished.wait(lock, workersDone);
  }
  body = nullptr;
}

void parallelFor(int64_t begin, int64_t end, int64_t grain, const RangeFunction &body) {
  ThreadPool::global().parallelFor(begin, end, grain, body);
}

void parallelForSlots(int64_t begin, int64_t end, int64_t grain, const SlotRangeFunction &body) {
  if (end <= begin)
    return;
  int64_t slots = workspaceSlots(begin, end, grain);
  int64_t pieceSize = slotPieceSize(begin, end, grain);
  parallelFor(0, slots, 1, [&](int64_t first, int64_t last) {
    for (int64_t slot = first; slot < last; ++slot) {
      int64_t pieceBegin = begin + slot * pieceSize;
      if (pieceBegin < end)
        body(slot, pieceBegin, std::min(end, pieceBegin + pieceSize));
    }
  });
}

} // namespace memc::kernels
