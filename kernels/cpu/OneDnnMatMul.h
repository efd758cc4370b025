//===- OneDnnMatMul.h - 16-bit matmul through oneDNN -------------*- C++ -*-===//
//
// A bf16 matmul runs on oneDNN's matmul primitive (AVX512-BF16/AMX kernels, f32 accumulation,
// the result rounded once into the op's type) where this CPU has an optimized implementation;
// the selection rule, oneDnnMatMul below, is the one place that decides, and the workspace rule
// and the run both ask it. The operands stay in memc's plain layouts: the transpose flags
// and numpy's batch broadcasting are the memory descriptors' strides and size-1 dims, so nothing
// is copied or materialised outside the primitive. The primitive's scratchpad (its packed
// panels of A and B) is user-mode and sized into the plan: the largest over 1..oneDnnPlanThreads()
// threads, as for convolutions (OneDnnConvolution.h), and a run gives oneDNN the most threads up
// to the runner's count whose primitive fits it. What oneDNN allocates itself is fixed per shape:
// the primitive objects and their JIT code, cached once per shape and thread count.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_ONEDNNMATMUL_H
#define MEMC_KERNELS_CPU_ONEDNNMATMUL_H

#include "kernels/Kernel.h"
#include "kernels/KernelContext.h"

#include <cstdint>
#include <optional>

namespace memc::kernels {

/// The selection rule: the scratchpad bytes oneDNN's matmul needs for `call` at any thread count
/// up to oneDnnPlanThreads() when oneDNN runs the call, nullopt when memc's kernel does.
/// Measured on the linear layers of the GPT-2/Llama bench models and gpt2-124m
/// (bench/kernels/matmul_vs_torch.py, docs/benchmarks.md):
///  - bf16 runs on oneDNN when the product has at least 2^16 multiply-adds and oneDNN has an
///    optimized (non-reference) implementation for the shapes, transposes and broadcast: 8-15x
///    faster than memc's widening tiles on every bench layer at 1 thread, forward and both
///    gradient products. Smaller products (the MLP bench model's) stay on memc's tiles, which
///    beat oneDNN's fixed cost of about 9 us per call there.
///  - f16 stays on memc: oneDNN 2.6 has no f16 matmul on the CPU (no primitive descriptor).
///  - f32 stays on OpenBLAS (bit-identical to memc's f32 path), as do integers and products
///    with K = 0 or more dims than oneDNN takes.
std::optional<uint64_t> oneDnnMatMul(const KernelCall &call);

/// Runs `call` on oneDNN's primitive with the `scratchpadBytes` the plan sized
/// (oneDnnMatMul), with the most OpenMP threads up to `threads` whose primitive fits them.
bool runOneDnnMatMul(KernelContext &context, const KernelCall &call, int threads,
                     uint8_t *scratchpad, uint64_t scratchpadBytes);

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_ONEDNNMATMUL_H
