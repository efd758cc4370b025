//===- BatchNormPasses.h - batch norm's passes over threads -----*- C++ -*-===//
//
// How batch_norm, batch_moments and batch_norm_grad run their passes over the planes
// (BatchNormChannels.h) on the thread pool. Apart from BatchNormChannels.h, whose types the
// workspace layouts use without threads.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_BATCHNORMPASSES_H
#define MEMC_KERNELS_CPU_BATCHNORMPASSES_H

#include "kernels/cpu/BatchNormChannels.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/ThreadPool.h"

#include <algorithm>
#include <cstdint>

namespace memc::kernels {

/// Bytes of a batch-norm kernel's operands a thread's share may hold for its passes to walk plane
/// by plane (runPlanePasses): about half this machine's 2 MiB L2, where the share stays between
/// passes.
inline constexpr int64_t kPlaneWalkShareBytes = int64_t{1} << 20;

/// Runs a kernel's `passes` over planes, pass(k, begin, end) for planes [begin, end), and after
/// pass k, finish(k, c) for each channel c (its statistics from its planes' values). Plane by
/// plane where each thread's share of the operands (`bytes` in all) stays in its cache: each
/// pass over all planes, split by images as the elementwise kernels around split theirs. Else
/// channel by channel, a channel's passes back to back while its planes are in cache, channels
/// split over threads. Each plane's values are computed the same way either way, and finish
/// adds them in image order, so the results are the same bit for bit.
template <typename Pass, typename Finish>
void runPlanePasses(const ChannelRuns &runs, int64_t bytes, int passes, Pass pass, Finish finish) {
  int threads = ThreadPool::global().numThreads();
  int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(runs.spatial, 1));
  if (bytes / threads <= kPlaneWalkShareBytes) {
    for (int k = 0; k < passes; ++k) {
      parallelFor(0, runs.planes(), grain,
                  [&](int64_t begin, int64_t end) { pass(k, begin, end); });
      for (int64_t c = 0; c < runs.channels; ++c)
        finish(k, c);
    }
    return;
  }
  int64_t channelGrain =
      std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(runs.perChannel(), 1));
  parallelFor(0, runs.channels, channelGrain, [&](int64_t first, int64_t last) {
    for (int64_t c = first; c < last; ++c)
      for (int k = 0; k < passes; ++k) {
        for (int64_t n = 0; n < runs.batch; ++n)
          pass(k, runs.plane(n, c), runs.plane(n, c) + 1);
        finish(k, c);
      }
  });
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_BATCHNORMPASSES_H
