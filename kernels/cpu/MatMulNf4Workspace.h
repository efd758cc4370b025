//===- MatMulNf4Workspace.h - the CPU workspace of matmul_nf4 ----*- C++ -*-===//
//
// The scratch layout of matmul_nf4 (MatMulNf4.cpp), carved by its run function and sized by the
// CPU workspace rules from one walk (Workspace.h). The output is made kNf4TileColumns columns at
// a time; each slot dequantizes the weight's panel for its tile (K x columns floats) and, for a
// 16-bit lhs, widens kNf4TileRows rows of it at a time and sums their tile in f32. So the
// workspace is a few panels, never the dequantized weight.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_MATMULNF4WORKSPACE_H
#define MEMC_KERNELS_CPU_MATMULNF4WORKSPACE_H

#include "kernels/Kernel.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/WorkspaceSlots.h"

#include <cstdint>
#include <vector>

namespace memc::kernels {

constexpr int64_t kNf4TileColumns = 64;
constexpr int64_t kNf4TileRows = 64;

/// The product's dimensions: rows (the lhs's leading dims together), depth K, columns N.
struct MatMulNf4Dims {
  int64_t rows = 0, depth = 0, columns = 0;
  bool transposeRhs = false;

  explicit MatMulNf4Dims(const KernelCall &call) {
    std::vector<int64_t> weightShape;
    attributesOf(call).getInts("weight_shape", weightShape);
    transposeRhs = attributesOf(call).intOr("transpose_rhs", 0) == 1;
    depth = call.inputs[0].shape.back();
    columns = call.outputs[0].shape.back();
    rows = depth > 0 ? call.inputs[0].numElements() / depth
                     : call.outputs[0].numElements() / std::max<int64_t>(columns, 1);
  }
  int64_t tiles() const { return (columns + kNf4TileColumns - 1) / kNf4TileColumns; }
};

struct MatMulNf4Scratch {
  int64_t slotFloats = 0;
  float *slots = nullptr;
  /// Per slot: the panel, then (16-bit lhs) the widened rows and their f32 tile.
  int64_t panelFloats = 0, rowFloats = 0;
};

inline MatMulNf4Scratch carveMatMulNf4(const KernelCall &call, WorkspaceCarver &carver) {
  MatMulNf4Dims dims(call);
  MatMulNf4Scratch scratch;
  scratch.panelFloats = dims.depth * kNf4TileColumns;
  const bool widens = call.inputs[0].dtype != DType::F32;
  scratch.rowFloats = widens ? kNf4TileRows * dims.depth : 0;
  scratch.slotFloats =
      scratch.panelFloats + scratch.rowFloats + (widens ? kNf4TileRows * kNf4TileColumns : 0);
  scratch.slots = carver.take<float>(workspaceSlots(0, dims.tiles(), 1) * scratch.slotFloats);
  return scratch;
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_MATMULNF4WORKSPACE_H
