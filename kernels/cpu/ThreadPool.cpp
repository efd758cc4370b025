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

// How long a waiting thread spins before it sleeps: longer than a step's stretches of kernels
// too small to split (the ResNet-style bench model's 16-channel stage at 2 threads: 3.11 ms a
// step with 0.2 ms, 3.04 with 1 ms), short enough that an idle pool gives its cores back at once
// (libgomp, PyTorch's OpenMP, spins about as long).
constexpr auto kSpin = std::chrono::microseconds(1000);

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

ThreadPool::ThreadPool(int numThreads)
    : shares(static_cast<size_t>(std::max(numThreads, 1))), spans(std::max(numThreads, 1)) {
  for (int i = 1; i < numThreads; ++i)
    workers.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
  stopping = true;
  notify(wake, sleepingWorkers);
  for (std::thread &worker : workers)
    worker.join();
}

ThreadPool &ThreadPool::global() {
  static ThreadPool pool(defaultThreadCount());
  return pool;
}

template <typename Ready>
void ThreadPool::await(Ready ready, std::condition_variable &signal, std::atomic<int> &sleepers) {
  if (spinUntil(ready))
    return;
  std::unique_lock<std::mutex> lock(mutex);
  // Counted before `ready` is checked under the mutex: whoever makes it true afterwards sees
  // the count (both sequentially consistent) and notifies under the mutex, so no wake is lost.
  ++sleepers;
  signal.wait(lock, ready);
  --sleepers;
}

void ThreadPool::notify(std::condition_variable &signal, const std::atomic<int> &sleepers) {
  if (sleepers.load() == 0)
    return;
  { std::lock_guard<std::mutex> lock(mutex); }
  signal.notify_all();
}

void ThreadPool::runChunks(int thread) {
  bool record = recording.load(std::memory_order_relaxed);
  double start = record ? steadySeconds() : 0.0;
  bool ran = false;
  int threads = numThreads();
  for (int k = 0; k < threads; ++k) {
    Share &share = shares[static_cast<size_t>((thread + k) % threads)];
    for (int64_t chunk = share.next.fetch_add(1); chunk < share.end;
         chunk = share.next.fetch_add(1)) {
      int64_t begin = loopBegin + chunk * chunkSize;
      (*body)(begin, std::min(loopEnd, begin + chunkSize));
      ran = true;
    }
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
  uint64_t seen = loopWord.load() >> kGenerationShift;
  auto started = [&] { return stopping.load() || loopWord.load() >> kGenerationShift != seen; };
  while (true) {
    await(started, wake, sleepingWorkers);
    if (stopping)
      return;
    // Join the newest loop unless its caller has closed it; either way it is seen.
    uint64_t word = loopWord.load();
    bool joined = false;
    while (!joined && !(word & kClosed))
      joined = loopWord.compare_exchange_weak(word, word + 1);
    seen = word >> kGenerationShift;
    if (!joined)
      continue;
    // The loop's fields were written before its generation was published (seq_cst).
    runChunks(thread);
    uint64_t left = loopWord.fetch_sub(1) - 1;
    if ((left & kInsideMask) == 0 && (left & kClosed))
      notify(finished, sleepingCaller);
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
  // The previous loop is closed with nobody inside, so no worker reads these fields now.
  body = &fn;
  loopBegin = begin;
  loopEnd = end;
  chunkSize = (total + chunks - 1) / chunks;
  numChunks = (total + chunkSize - 1) / chunkSize;
  int threads = numThreads();
  for (int t = 0; t < threads; ++t) {
    shares[static_cast<size_t>(t)].next.store(t * numChunks / threads);
    shares[static_cast<size_t>(t)].end = (t + 1) * numChunks / threads;
  }
  uint64_t generation = (loopWord.load() >> kGenerationShift) + 1;
  loopWord.store(generation << kGenerationShift); // open, nobody inside
  notify(wake, sleepingWorkers);
  insideParallelLoop = true;
  runChunks(0);
  insideParallelLoop = false;
  // Out of chunks: close the loop to workers still arriving, wait for those inside.
  if (loopWord.fetch_or(kClosed) & kInsideMask)
    await([&] { return (loopWord.load() & kInsideMask) == 0; }, finished, sleepingCaller);
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
