//===- OneDnnConvolutionOnPool.h - oneDNN's conv chunks on memc's pool -*- C++ -*-===//
//
// The run half of OneDnnConvolution.h, apart because it needs the thread pool (the rule and the
// chunks' primitives live in the kernel contracts, which size plans without threads).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_ONEDNNCONVOLUTIONONPOOL_H
#define MEMC_KERNELS_CPU_ONEDNNCONVOLUTIONONPOOL_H

#include "kernels/cpu/OneDnnConvolution.h"

namespace memc::kernels {

/// Runs `call` on oneDNN: the shared weights' reorder, then the chunks spread over memc's pool
/// (one slot each), then conv_grad_weight's sum of the chunks' partials.
void runOneDnnConvolution(const KernelCall &call, ConvDirection direction,
                          const OneDnnConvScratch &scratch);

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_ONEDNNCONVOLUTIONONPOOL_H
