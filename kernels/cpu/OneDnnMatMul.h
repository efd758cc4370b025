//===- OneDnnMatMul.h - bf16 matmul through oneDNN ---------------*- C++ -*-===//
//
// A bf16 matmul runs on oneDNN's matmul primitive (AVX512-BF16/AMX kernels, f32 accumulation,
// the result rounded once into bf16) where this CPU has an optimized implementation; the
// selection rule, oneDnnMatMul below, is the one place that decides, and the workspace rule and
// the run both ask it. The operands stay in memc's plain layouts: the transpose flags are the
// memory descriptors' strides, so nothing is copied outside the primitive.
//
// Each product is cut into blocks of kOneDnnBlockRows result rows, and each block is a
// single-threaded primitive run on one of memc's pool's slots (parallelForSlots), with the
// primitive's user-mode scratchpad (its packed panels) carved per slot. oneDNN therefore starts
// no OpenMP threads: OpenMP workers spinning after a multi-threaded primitive took the cores
// from memc's pool in the kernels that followed (GPT-2 bench step at 2 threads: 89 ms, 59 with
// OMP_WAIT_POLICY=passive), and the blocks do not depend on the thread count, so the workspace
// is fixed by the call and each block's result does not depend on which thread runs it. What oneDNN
// allocates itself is fixed per shape: the primitive objects and their JIT code, cached.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_ONEDNNMATMUL_H
#define MEMC_KERNELS_CPU_ONEDNNMATMUL_H

#include "kernels/Kernel.h"

#include <cstdint>
#include <optional>
#include <utility>

namespace memc::kernels {

/// Result rows per block: few enough that two threads share a 1024-token product, many enough
/// that each block's own packing of the right-hand matrix stays a small part of its work.
constexpr int64_t kOneDnnBlockRows = 256;

/// How a call oneDNN runs is cut: `products` products (1 when a batch shares one right-hand
/// matrix and is stacked into one tall product) of `rows` rows, each in blocks of `blockRows`.
struct OneDnnMatMulBlocks {
  int64_t products = 0, rows = 0, blockRows = 0, blocksPerProduct = 0;
  int64_t slots = 0;
  uint64_t slotBytes = 0; // one block primitive's scratchpad, rounded up to the alignment

  int64_t count() const { return products * blocksPerProduct; }
};

/// The selection rule: how oneDNN runs `call`, nullopt when memc's kernel does. Measured on the
/// linear layers of the GPT-2/Llama bench models and gpt2-124m (bench/kernels/matmul_vs_torch.py,
/// docs/benchmarks.md):
///  - bf16 runs on oneDNN when the product has at least 2^16 multiply-adds and oneDNN has an
///    optimized (non-reference) implementation for its blocks: 8-15x faster than memc's
///    widening tiles on every bench layer at 1 thread, forward and both gradient products.
///    Smaller products (the MLP bench model's) stay on memc's tiles, which beat oneDNN's fixed
///    cost of about 9 us per call there.
///  - f16 stays on memc: oneDNN 2.6 has no f16 matmul on the CPU (no primitive descriptor).
///  - f32 stays on OpenBLAS (bit-identical to memc's f32 path), as do integers and products
///    with K = 0.
std::optional<OneDnnMatMulBlocks> oneDnnMatMul(const KernelCall &call);

/// Runs block `task` of `call` (0 <= task < blocks.count()) on the calling thread with
/// `scratchpad` (blocks.slotBytes). `pairs` are MatMulDims::batchPairs when blocks.products > 1.
void runOneDnnMatMulBlock(const KernelCall &call, const OneDnnMatMulBlocks &blocks,
                          const std::pair<int64_t, int64_t> *pairs, int64_t task,
                          uint8_t *scratchpad);

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_ONEDNNMATMUL_H
