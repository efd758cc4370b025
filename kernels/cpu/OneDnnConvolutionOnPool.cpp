//===- OneDnnConvolutionOnPool.cpp - oneDNN's conv chunks on memc's pool ---===//
#include "kernels/cpu/OneDnnConvolutionOnPool.h"

#include "kernels/cpu/ThreadPool.h"

namespace memc::kernels {

/// Weight-gradient elements per piece of the final sum: the sum is a small part of the call.
constexpr int64_t kSumGrain = 4096;

void runOneDnnConvolution(const KernelCall &call, ConvDirection direction,
                          const OneDnnConvScratch &scratch) {
  prepareOneDnnConvolution(call, direction, scratch);
  // workspaceSlots(0, chunks, 1) is chunks: chunk i runs alone with slot i.
  parallelForSlots(0, scratch.chunks.chunks, 1, [&](int64_t, int64_t begin, int64_t end) {
    for (int64_t chunk = begin; chunk < end; ++chunk)
      runOneDnnConvChunk(call, direction, scratch, chunk);
  });
  if (direction == ConvDirection::GradWeight && scratch.chunks.partial > 0)
    parallelFor(0, call.outputs[0].numElements(), kSumGrain, [&](int64_t begin, int64_t end) {
      finishOneDnnConvolution(call, direction, scratch, begin, end);
    });
}

} // namespace memc::kernels
