//===- OneDnnMatMul.cpp - bf16 matmul through oneDNN ----------------------===//
//
// One cache of single-threaded block primitives, keyed by a block's rows, K, N, transpose flags
// and the lhs's leading dimension, asked by the workspace rule and the run alike. Operands are
// described with strides, never copied: a block of a transposed lhs stored [K, M] is its
// columns row0.. with strides (1, M), a transposed rhs stored [N, K] is [K, N] with strides
// (1, K). A batch that shares one right-hand matrix is one tall product, as memc's own kernel
// computes it; other batches are a product per batch (MatMulDims::batchPairs).
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/OneDnnMatMul.h"

#include "kernels/Workspace.h"
#include "kernels/cpu/MatMulWorkspace.h"
#include "kernels/cpu/OneDnnThreads.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace memc::kernels {

namespace {

using dnnl::memory;

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

/// A block's shape: `rows` x `n` result rows from a `rows` x `k` slice of the lhs (whose
/// leading dimension is `lhsStride` when transposed) and the whole rhs.
struct BlockShape {
  int64_t rows, k, n, lhsStride;
  bool transposeLhs, transposeRhs;

  std::vector<int64_t> key() const {
    return {rows, k, n, lhsStride, transposeLhs, transposeRhs};
  }
};

/// One block shape's primitive. `chosen` is the selection rule's answer.
struct BlockPrimitive {
  bool chosen = false;
  uint64_t scratchpad = 0;
  memory::desc lhs, rhs, result;
  dnnl::matmul::primitive_desc descriptor;
  std::unique_ptr<dnnl::matmul> compute; // made on the first run (a plan's sizing never runs it)
};

/// Makes the primitive descriptor for one thread, or leaves `chosen` false where oneDNN has no
/// optimized implementation.
void describe(const BlockShape &shape, BlockPrimitive &primitive) {
  auto type = memory::data_type::bf16;
  int64_t rows = shape.rows, k = shape.k, n = shape.n;
  primitive.lhs = memory::desc({rows, k}, type,
                               shape.transposeLhs ? memory::dims{1, shape.lhsStride}
                                                  : memory::dims{k, 1});
  primitive.rhs =
      memory::desc({k, n}, type, shape.transposeRhs ? memory::dims{1, k} : memory::dims{n, 1});
  primitive.result = memory::desc({rows, n}, type, memory::dims{n, 1});
  dnnl::primitive_attr attributes;
  attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  OneDnnThreadsScope scope(1);
  try {
    primitive.descriptor = dnnl::matmul::primitive_desc(
        dnnl::matmul::desc(primitive.lhs, primitive.rhs, primitive.result), attributes,
        oneDnnCpuEngine());
  } catch (const dnnl::error &) {
    return; // no implementation for these shapes: memc's kernel runs the call
  }
  // The reference implementation is a plain loop, slower than memc's tiles.
  if (std::string(primitive.descriptor.impl_info_str()).rfind("ref", 0) == 0)
    return;
  primitive.scratchpad = primitive.descriptor.scratchpad_desc().get_size();
  primitive.chosen = true;
}

std::mutex cacheMutex;

/// The cached primitive of `shape`, made runnable when `runnable`; made under cacheMutex, which
/// the caller holds.
BlockPrimitive &lookup(const BlockShape &shape, bool runnable) {
  static std::map<std::vector<int64_t>, std::unique_ptr<BlockPrimitive>> cache;
  std::unique_ptr<BlockPrimitive> &slot = cache[shape.key()];
  if (!slot) {
    slot = std::make_unique<BlockPrimitive>();
    describe(shape, *slot);
  }
  if (runnable && slot->chosen && !slot->compute) {
    OneDnnThreadsScope scope(1);
    slot->compute = std::make_unique<dnnl::matmul>(slot->descriptor);
  }
  return *slot;
}

BlockShape blockShape(const MatMulDims &dims, int64_t rows) {
  return {rows, dims.k, dims.n, dims.m, dims.transposes.lhs, dims.transposes.rhs};
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
  std::lock_guard<std::mutex> lock(cacheMutex);
  int64_t remainder = blocks.rows % blocks.blockRows;
  for (int64_t rows : {blocks.blockRows, remainder}) {
    if (rows == 0)
      continue;
    const BlockPrimitive &primitive = lookup(blockShape(dims, rows), false);
    if (!primitive.chosen)
      return std::nullopt;
    scratchpad = std::max(scratchpad, primitive.scratchpad);
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
  BlockPrimitive *primitive;
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    primitive = &lookup(blockShape(dims, rows), true);
  }
  dnnl::engine &engine = oneDnnCpuEngine();
  thread_local dnnl::stream stream(engine);
  OneDnnThreadsScope scope(1);
  primitive->compute->execute(
      stream, {{DNNL_ARG_SRC, memory(primitive->lhs, engine, const_cast<uint16_t *>(lhs))},
               {DNNL_ARG_WEIGHTS, memory(primitive->rhs, engine, const_cast<uint16_t *>(rhs))},
               {DNNL_ARG_DST, memory(primitive->result, engine, result)},
               {DNNL_ARG_SCRATCHPAD,
                memory(primitive->descriptor.scratchpad_desc(), engine, scratchpad)}});
  stream.wait();
}

} // namespace memc::kernels
