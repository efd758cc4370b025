//===- LossesWorkspace.h - CPU workspace layouts -----------------*- C++ -*-===//
//
// The scratch layout of cross_entropy and cross_entropy_grad: what the run functions carve from
// call.workspace and what the CPU workspace rules (CpuTarget.cpp) size, one walk for both
// (Workspace.h). Free of OpenBLAS and threads, so the compiler sizes CPU plans without the kernels.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_LOSSESWORKSPACE_H
#define MEMC_KERNELS_CPU_LOSSESWORKSPACE_H

#include "kernels/Kernel.h"
#include "kernels/ShapeRules.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/WorkspaceSlots.h"

#include <algorithm>
#include <cstdint>

namespace memc::kernels {

/// Rows of either kernel: logits [rows, classes], split over slots in pieces of `grain` rows.
struct LossRows {
  int64_t rows, classes, grain;

  explicit LossRows(const TensorView &logits) : rows(1), classes(logits.shape.back()) {
    // Not numElements() / classes: with no classes there may still be (ignored) rows.
    for (size_t d = 0; d + 1 < logits.shape.size(); ++d)
      rows *= logits.shape[d];
    grain = std::max<int64_t>(1, kExpensiveGrain / std::max<int64_t>(classes, 1));
  }
  int64_t slots() const { return workspaceSlots(0, rows, grain); }
};

struct LossScratch {
  int64_t *targets = nullptr;
  double *losses = nullptr;   // cross_entropy only
  float *floatRows = nullptr; // f16/bf16 logits: `classes` floats per slot
};

/// Both kernels' layout, for logits `logits`; cross_entropy also keeps per-row losses.
inline LossScratch carveLoss(const TensorView &logits, bool keepLosses, WorkspaceCarver &carver) {
  LossRows split(logits);
  LossScratch scratch;
  scratch.targets = carver.take<int64_t>(split.rows);
  if (keepLosses)
    scratch.losses = carver.take<double>(split.rows);
  if (logits.dtype != DType::F32)
    scratch.floatRows = carver.take<float>(split.slots() * split.classes);
  return scratch;
}

inline LossScratch carveCrossEntropy(const KernelCall &call, WorkspaceCarver &carver) {
  return carveLoss(call.inputs[0], true, carver);
}

inline LossScratch carveCrossEntropyGrad(const KernelCall &call, WorkspaceCarver &carver) {
  return carveLoss(call.inputs[1], false, carver);
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_LOSSESWORKSPACE_H
