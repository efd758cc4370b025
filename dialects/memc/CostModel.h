//===- CostModel.h - FLOPs and bytes of one memc op -------------*- C++ -*-===//
//
// The one cost model of memc: rematerialization minimises the recompute cost it gives, the
// memory report prints recompute FLOPs as a share of the step's, and the benchmarks read the
// same numbers. It counts what the ops do, not what a particular kernel does: a matmul is
// 2*M*N*K FLOPs, an elementwise op a few FLOPs per element, data movement (transpose, slice,
// concat, gather) zero FLOPs and the bytes it reads and writes.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_DIALECTS_MEMC_COSTMODEL_H
#define MEMC_DIALECTS_MEMC_COSTMODEL_H

#include "mlir/IR/Operation.h"

namespace memc {

struct OpCost {
  double flops = 0;
  /// Bytes read from operands plus bytes written to results.
  double bytes = 0;
};

/// The cost of executing `op` once (zero for constants and reshapes, which are no steps).
OpCost estimateOpCost(mlir::Operation *op);

/// One number to minimise when choosing what to recompute: FLOPs plus memory traffic at a
/// machine balance of kFlopsPerByte (a GPU's tensor cores do ~200 FLOPs per byte of HBM traffic;
/// CPUs ~10-20). Memory-bound ops are then not free to recompute, compute-bound ones cost their
/// FLOPs.
constexpr double kFlopsPerByte = 16.0;
inline double recomputeCost(const OpCost &cost) { return cost.flops + kFlopsPerByte * cost.bytes; }

} // namespace memc

#endif // MEMC_DIALECTS_MEMC_COSTMODEL_H
