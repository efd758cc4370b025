//===- ConvolutionTasks.h - a convolution's (image, group) tasks -*- C++ -*-===//
//
// conv, conv_grad_input and conv_grad_weight cut their work into tasks (an image and group, or a
// group and piece of its blocks) that each use one slot of scratch (taskSlots,
// ConvolutionColumns.h). Many small tasks run side by side over the threads, each on one thread
// (its loops, run inside the pool's loop, run inline); otherwise they run one after the other on
// slot 0, each splitting its own loops over the threads.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_CONVOLUTIONTASKS_H
#define MEMC_KERNELS_CPU_CONVOLUTIONTASKS_H

#include "kernels/cpu/ConvolutionColumns.h"
#include "kernels/cpu/ThreadPool.h"

namespace memc::kernels {

/// Runs task(t, slot) for t in [0, tasks), slot < `slots` (the kernel's workspace layout): over
/// threads when there are several slots and at least a task per thread, else one after the
/// other on slot 0.
template <typename Task> void runConvolutionTasks(int64_t tasks, int64_t slots, Task task) {
  bool spread = slots > 1 && tasks >= ThreadPool::global().numThreads();
  if (!spread) {
    for (int64_t t = 0; t < tasks; ++t)
      task(t, 0);
    return;
  }
  parallelForSlots(0, tasks, 1, [&](int64_t slot, int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t)
      task(t, slot);
  });
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_CONVOLUTIONTASKS_H
