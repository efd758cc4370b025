//===- ThreadPoolTest.cpp - the kernels' thread pool ----------------------===//
#include "kernels/cpu/ThreadPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace memc::kernels {
namespace {

/// Runs a loop and checks every index ran exactly once, in chunks of at least `grain`.
void expectEachIndexOnce(ThreadPool &pool, int64_t begin, int64_t end, int64_t grain) {
  std::vector<std::atomic<int>> hits(std::max<int64_t>(end - begin, 0));
  std::atomic<bool> smallChunk{false};
  pool.parallelFor(begin, end, grain, [&](int64_t b, int64_t e) {
    if (e - b < grain && e != end)
      smallChunk = true;
    for (int64_t i = b; i < e; ++i)
      hits[i - begin]++;
  });
  for (size_t i = 0; i < hits.size(); ++i)
    ASSERT_EQ(hits[i].load(), 1) << "index " << begin + static_cast<int64_t>(i);
  EXPECT_FALSE(smallChunk) << "a chunk other than the last is below the grain";
}

TEST(ThreadPool, CoversEveryIndexOnce) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.numThreads(), 4);
  for (int64_t n : {0, 1, 2, 3, 7, 64, 1000, 100003})
    for (int64_t grain : {1, 5, 64, 100000})
      expectEachIndexOnce(pool, 10, 10 + n, grain);
  expectEachIndexOnce(pool, -50, 50, 3);
}

TEST(ThreadPool, SingleThreadRunsInline) {
  ThreadPool pool(1);
  std::thread::id caller = std::this_thread::get_id();
  pool.parallelFor(0, 1000, 1,
                   [&](int64_t, int64_t) { EXPECT_EQ(std::this_thread::get_id(), caller); });
  expectEachIndexOnce(pool, 0, 999, 1);
}

TEST(ThreadPool, UsesSeveralThreads) {
  ThreadPool pool(4);
  std::mutex mutex;
  std::set<std::thread::id> seen;
  for (int attempt = 0; attempt < 50 && seen.size() < 2; ++attempt)
    pool.parallelFor(0, 64, 1, [&](int64_t, int64_t) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      std::lock_guard<std::mutex> lock(mutex);
      seen.insert(std::this_thread::get_id());
    });
  EXPECT_GE(seen.size(), 2u);
}

TEST(ThreadPool, RecordsEachThreadsSpanPerLoopOnlyWhileAsked) {
  ThreadPool pool(3);
  auto loop = [&] {
    pool.parallelFor(0, 12, 1, [&](int64_t, int64_t) {
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    });
  };
  loop();
  EXPECT_TRUE(pool.takeSpans().empty()) << "recorded while not asked";
  pool.recordSpans(true);
  double before =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  loop();
  loop();
  pool.parallelFor(0, 1, 1, [](int64_t, int64_t) {}); // one chunk: inline, not a span
  double after =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  pool.recordSpans(false);
  std::vector<ThreadSpan> spans = pool.takeSpans();
  // At least one span per loop, at most one per thread per loop; each within the loops' time
  // and at least one chunk's sleep long.
  EXPECT_GE(spans.size(), 2u);
  EXPECT_LE(spans.size(), 6u);
  int callerSpans = 0;
  for (const ThreadSpan &span : spans) {
    EXPECT_GE(span.thread, 0);
    EXPECT_LT(span.thread, 3);
    callerSpans += span.thread == 0;
    EXPECT_GE(span.start, before);
    EXPECT_LE(span.end, after);
    EXPECT_GE(span.end - span.start, 250e-6);
  }
  EXPECT_LE(callerSpans, 2);
  EXPECT_TRUE(pool.takeSpans().empty()) << "taken twice";
}

TEST(ThreadPool, NestedLoopsRunInline) {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  pool.parallelFor(0, 8, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      pool.parallelFor(0, 100, 1, [&](int64_t b2, int64_t e2) { total += e2 - b2; });
  });
  EXPECT_EQ(total.load(), 800);
}

TEST(ThreadPool, ConcurrentCallersEachFinishTheirLoop) {
  ThreadPool pool(4);
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      for (int round = 0; round < 200; ++round) {
        std::atomic<int64_t> sum{0};
        pool.parallelFor(0, 1000, 10, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i)
            sum += i;
        });
        if (sum.load() != 999 * 1000 / 2)
          ++failures;
      }
    });
  for (std::thread &caller : callers)
    caller.join();
  EXPECT_EQ(failures.load(), 0);
}

// Workers spin a while after a loop (1 ms), then sleep: loops that follow at once find them
// spinning, loops after a pause must wake them, and workers woken late find their loop closed or
// join it midway; a pool may end in either state. Each way, every loop covers its range once.
TEST(ThreadPool, LoopsAfterSpinningAndSleepingWorkersEachFinish) {
  for (int pauseMicroseconds : {0, 300, 1100, 3000}) {
    ThreadPool pool(3);
    for (int round = 0; round < 20; ++round) {
      expectEachIndexOnce(pool, 0, 5000, 16);
      std::this_thread::sleep_for(std::chrono::microseconds(pauseMicroseconds));
    }
  }
  ThreadPool justUsed(4); // destroyed while its workers still spin
  expectEachIndexOnce(justUsed, 0, 100, 1);
}

TEST(ThreadPool, ThreadCountFromEnvironment) {
  const char *saved = std::getenv("MEMC_NUM_THREADS");
  std::string restore = saved ? saved : "";
  setenv("MEMC_NUM_THREADS", "3", 1);
  EXPECT_EQ(defaultThreadCount(), 3);
  for (const char *bad : {"0", "-2", "abc", "4x", ""}) {
    setenv("MEMC_NUM_THREADS", bad, 1);
    EXPECT_EQ(defaultThreadCount(),
              static_cast<int>(std::max(1u, std::thread::hardware_concurrency())))
        << "MEMC_NUM_THREADS=" << bad;
  }
  if (saved)
    setenv("MEMC_NUM_THREADS", restore.c_str(), 1);
  else
    unsetenv("MEMC_NUM_THREADS");
}

} // namespace
} // namespace memc::kernels
