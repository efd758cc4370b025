//===- PrecisionPolicy.h - which ops compute in 16 bits ---------*- C++ -*-===//
//
// The one table that decides, per op, the element type mixed precision computes it in. The
// reference is torch.autocast's op lists; docs/design.md says where memc differs and why.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_PASSES_PRECISIONPOLICY_H
#define MEMC_PASSES_PRECISIONPOLICY_H

#include "mlir/IR/Operation.h"

namespace memc {

enum class ComputeType {
  /// Float operands and result in 16 bits; the kernel accumulates in f32 (autocast's
  /// lower-precision list: matmul, linear, conv).
  Low,
  /// Float operands and result in f32 (autocast's fp32 list: exp/log/pow, sums, losses; and
  /// RMS norm, whose input is the f32 residual stream: a bf16 copy of it doubled Llama's
  /// deviation from fp32, docs/design.md).
  Full,
  /// Computes in f32, stores in 16 bits (softmax, layer norm): the kernel reads 16-bit
  /// activations and writes a 16-bit result, with its statistics, exponentials and sums in f32
  /// registers and scratch. What the backward saves of it (its input, softmax's output) is then
  /// 16-bit, where an f32 op saves an f32 copy beside the 16-bit one its matmul reads. Weights (a
  /// norm's scale and bias) stay f32. Only where every reader takes the result in 16 bits (a Low
  /// op, through views); elsewhere Full.
  StoresLow,
  /// Activations and result in 16 bits, weights in their own types: matmul_nf4, whose packed
  /// weight is dequantized into the compute type (bitsandbytes' bnb_4bit_compute_dtype) and
  /// whose scales stay f32.
  LowActivations,
  /// The data in its own type, the per-channel parameters and the statistics in f32 (batch norm,
  /// as cuDNN's and the CPU kernel's 16-bit batch norm).
  KeepsData,
  /// Everything else: the widest float type of the operands that depend on the inputs
  /// (elementwise and layout ops follow the activations they are given; with 16-bit operands
  /// the kernels compute in f32 registers and store 16 bits, GELU after a bf16 matmul too).
  Widest,
};

/// What the policy table says about `op` (Widest when it is not listed).
ComputeType computeTypeOf(mlir::Operation *op);

} // namespace memc

#endif // MEMC_PASSES_PRECISIONPOLICY_H
