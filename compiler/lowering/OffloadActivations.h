//===- OffloadActivations.h - saved activations in host memory --*- C++ -*-===//
//
// --offload-activations cpu: every value the training step's forward computes and its backward
// reads goes to host memory after its last forward reader (memc.offload, whose result the plan
// places in its HOST region) and comes back right before its first backward reader
// (memc.reload, an arena value again). Its device buffer then lives through neither the rest
// of the forward nor the backward up to its use, so the arena holds a few activations instead
// of all of them; the host holds each in a buffer of its own. This replaces recomputation
// (remat none): what remat would keep is what goes to the host. The copies are memcpy on the
// CPU backend, where the run is the same run; a GPU backend would issue them on a copy stream
// ahead of use.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_LOWERING_OFFLOADACTIVATIONS_H
#define MEMC_COMPILER_LOWERING_OFFLOADACTIVATIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace memc {

/// Rewrites the training step `step` as above; returns how many values it offloaded.
unsigned offloadActivations(mlir::func::FuncOp step);

} // namespace memc

#endif // MEMC_COMPILER_LOWERING_OFFLOADACTIVATIONS_H
