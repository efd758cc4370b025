//===- OneDnnMatMul.cpp - bf16 matmul through oneDNN ----------------------===//
//
// Each block is one single-threaded product of OneDnnGemm.h, whose cache the workspace rule and
// the run both ask. Operands are described with strides, never copied: a block of a transposed
// lhs stored [K, M] is its columns row0.. with strides (1, M), a transposed rhs stored [N, K] is
// [K, N] with strides (1, K). A batch that shares one right-hand matrix is one tall product, as
// memc's own kernel computes it; other batches are a product per batch (MatMulDims::batchPairs).
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/OneDnnMatMul.h"

#include "kernels/Workspace.h"
#include "kernels/cpu/MatMulWorkspace.h"
#include "kernels/cpu/OneDnnGemm.h"

#include <algorithm>

namespace memc::kernels {

namespace {

/// Multiply-adds below which memc's tiles win: oneDNN's call costs about 9 us whatever the size
/// (memc-kernel-bench `linear ... small`: at 32^3 memc's tiles take 7 us, at 64^3 21 us against
/// oneDNN's 9).
constexpr double kOneDnnMinMultiplyAdds = 65536;

/// The part of the rule that needs no primitive: bf16 products large enough to amortise the call.
bool oneDnnCandidate(const KernelCall &call) {
  if (call.outputs[0].dtype != DType::BF16)
    return false;
  MatMulDims dims(call);
  return dims.k > 0 && static_cast<double>(dims.batchCount) * static_cast<double>(dims.m) *
                               static_cast<double>(dims.n) * static_cast<double>(dims.k) >=
                           kOneDnnMinMultiplyAdds;
}

/// The product of a block of `rows` result rows (OneDnnGemm.h, a bf16 result): a `rows` x `k`
/// slice of the lhs (its columns row0.. with leading dimension m when transposed) and the
/// whole rhs.
Bf16GemmShape blockShape(const MatMulDims &dims, int64_t rows) {
  bool lhs = dims.transposes.lhs, rhs = dims.transposes.rhs;
  Bf16GemmShape shape{rows, dims.n, dims.k, lhs ? dims.m : dims.k, rhs ? dims.k : dims.n, dims.n,
                      lhs,  rhs,    false};
  shape.bf16Result = true;
  return shape;
}

} // namespace

std::optional<OneDnnMatMulBlocks> oneDnnMatMul(const KernelCall &call) {
  if (!oneDnnCandidate(call))
    return std::nullopt; // without a lookup: f32 and small calls pay nothing for the rule
  MatMulDims dims(call);
  OneDnnMatMulBlocks blocks;
  bool stacked = dims.stacksRows();
  blocks.products = stacked ? 1 : dims.batchCount;
  blocks.rows = stacked ? dims.batchCount * dims.m : dims.m;
  blocks.blockRows = std::min(kOneDnnBlockRows, blocks.rows);
  blocks.blocksPerProduct = (blocks.rows + blocks.blockRows - 1) / blocks.blockRows;
  blocks.slots = workspaceSlots(0, blocks.count(), 1);
  uint64_t scratchpad = 0;
  int64_t remainder = blocks.rows % blocks.blockRows;
  for (int64_t rows : {blocks.blockRows, remainder}) {
    if (rows == 0)
      continue;
    std::optional<uint64_t> bytes = bf16GemmScratchpad(blockShape(dims, rows));
    if (!bytes)
      return std::nullopt;
    scratchpad = std::max(scratchpad, *bytes);
  }
  blocks.slotBytes = alignedToWorkspace(scratchpad);
  return blocks;
}

void runOneDnnMatMulBlock(const KernelCall &call, const OneDnnMatMulBlocks &blocks,
                          const std::pair<int64_t, int64_t> *pairs, int64_t task,
                          uint8_t *scratchpad) {
  MatMulDims dims(call);
  int64_t product = task / blocks.blocksPerProduct;
  int64_t row0 = (task % blocks.blocksPerProduct) * blocks.blockRows;
  int64_t rows = std::min(blocks.blockRows, blocks.rows - row0);
  int64_t m = dims.m, k = dims.k, n = dims.n;
  const uint16_t *lhs = call.inputs[0].as<uint16_t>(), *rhs = call.inputs[1].as<uint16_t>();
  if (blocks.products > 1) {
    lhs += pairs[product].first * m * k;
    rhs += pairs[product].second * k * n;
  }
  lhs += dims.transposes.lhs ? row0 : row0 * k;
  uint16_t *result = call.outputs[0].as<uint16_t>() + product * m * n + row0 * n;
  bf16GemmSerial(blockShape(dims, rows), lhs, rhs, result, scratchpad);
}

} // namespace memc::kernels
