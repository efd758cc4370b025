//===- MatMulWorkspaces.h - scratch of the CUDA matmul group ----*- C++ -*-===//
//
// The scratch layouts of matmul, matmul_nf4, linear_cross_entropy(_grad) and the
// convolutions on CUDA: what their run functions carve from call.workspace and what their
// workspace rules (MatMulTarget.cpp) size, one walk for both (kernels/Workspace.h). Plain C++:
// the compiler sizes CUDA plans on machines without a GPU.
//
// Every piece is bounded: cuBLASLt gets at most 32 MiB, NVIDIA's advice for Hopper (smaller
// products get less), and the big intermediates, the logits of the fused loss, the dequantized
// NF4 weight and the convolutions' column matrices, are made a chunk at a time within a fixed
// budget. Two f32 accumulators grow with a weight instead, where a 16-bit weight's gradient
// sums over chunks: linear_cross_entropy_grad's [D, V] and conv_grad_weight's.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_MATMULWORKSPACES_H
#define MEMC_KERNELS_CUDA_MATMULWORKSPACES_H

#include "kernels/Tf32.h"
#include "kernels/Workspace.h"
#include "kernels/cuda/ConvolutionMath.h"
#include "kernels/cuda/CublasLtGemm.h"
#include "kernels/cuda/MatMulMath.h"
#include "kernels/ops/ConvGeometry.h"

#include <algorithm>
#include <cstdint>

namespace memc::kernels::cuda {

constexpr uint64_t kMiB = uint64_t{1} << 20;
/// cuBLASLt's workspace: at most NVIDIA's recommendation for Hopper, 256-byte aligned.
constexpr uint64_t kCublasLtWorkspaceCap = 32 * kMiB;
constexpr uint64_t kCublasLtWorkspaceAlignment = 256;
/// Budgets of the chunked intermediates.
constexpr int64_t kLogitsChunkBytes = 128 * kMiB;
constexpr int64_t kNf4PanelBytes = 64 * kMiB;
constexpr int64_t kConvColumnsBytes = 64 * kMiB;

/// cuBLASLt workspace for products of `outputs` result elements in all (none for none): split-K
/// algorithms keep up to 8 f32 partial results, 1 MiB covers the rest; capped.
inline uint64_t cublasLtWorkspaceBytes(int64_t outputs) {
  if (outputs <= 0)
    return 0;
  double need = static_cast<double>(kMiB) + 32.0 * static_cast<double>(outputs);
  return alignedToWorkspace(
      static_cast<uint64_t>(std::min(need, static_cast<double>(kCublasLtWorkspaceCap))));
}

/// `bytes` of cuBLASLt workspace, aligned within the call's 64-byte-aligned scratch.
inline GemmWorkspace takeGemmWorkspace(WorkspaceCarver &carver, uint64_t bytes) {
  if (bytes == 0)
    return {};
  char *raw = carver.take<char>(static_cast<int64_t>(bytes + kCublasLtWorkspaceAlignment));
  if (!raw)
    return {nullptr, bytes};
  uintptr_t address = reinterpret_cast<uintptr_t>(raw);
  address = (address + kCublasLtWorkspaceAlignment - 1) / kCublasLtWorkspaceAlignment *
            kCublasLtWorkspaceAlignment;
  return {reinterpret_cast<void *>(address), bytes};
}

/// Rows (or columns) per chunk of an intermediate of `perItem` bytes per row within `budget`:
/// at least 1, at most `items`.
inline int64_t itemsPerChunk(int64_t budget, int64_t perItem, int64_t items) {
  int64_t fit = perItem > 0 ? budget / perItem : items;
  return std::max<int64_t>(1, std::min(items, fit));
}

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

struct MatMulScratch {
  GemmWorkspace gemm;
};

inline MatMulScratch carveMatMul(const KernelCall &call, WorkspaceCarver &carver) {
  if (call.outputs[0].numElements() == 0)
    return {};
  MatMulProblem problem(call);
  return {takeGemmWorkspace(carver,
                            cublasLtWorkspaceBytes(problem.batchCount * problem.m * problem.n))};
}

//===----------------------------------------------------------------------===//
// matmul_nf4: the weight dequantized a panel of op(W)'s columns at a time, in the lhs's type.
//===----------------------------------------------------------------------===//

struct MatMulNf4Scratch {
  int64_t panelColumns = 0;
  GemmWorkspace gemm;
  void *panel = nullptr;        // [K, panelColumns] or [panelColumns, K] of the lhs's type
  float *dynamicCode = nullptr; // double quantization: the 256 values of the signed code
};

inline MatMulNf4Scratch carveMatMulNf4(const KernelCall &call, WorkspaceCarver &carver) {
  MatMulNf4Scratch scratch;
  if (call.outputs[0].numElements() == 0)
    return scratch;
  Nf4Problem problem(call);
  const int64_t element = static_cast<int64_t>(dtypeSize(call.inputs[0].dtype));
  scratch.panelColumns = itemsPerChunk(kNf4PanelBytes, problem.depth * element, problem.columns);
  // Whole 64-column blocks: every panel then starts where cuBLASLt's fast, aligned kernels may
  // read it.
  if (scratch.panelColumns > 64 && scratch.panelColumns < problem.columns)
    scratch.panelColumns -= scratch.panelColumns % 64;
  scratch.gemm =
      takeGemmWorkspace(carver, cublasLtWorkspaceBytes(problem.rows * scratch.panelColumns));
  scratch.panel = carver.take<char>(problem.depth * scratch.panelColumns * element);
  if (call.inputs.size() == 5)
    scratch.dynamicCode = carver.take<float>(256);
  return scratch;
}

//===----------------------------------------------------------------------===//
// linear_cross_entropy(_grad): the logits a chunk of rows at a time, every class at once.
//===----------------------------------------------------------------------===//

/// The sizes of a call, with hidden and weight at inputs[first, first + 2) and the bias at
/// inputs[biasIndex] when present.
struct LinearCrossEntropyProblem {
  int64_t rows = 1, depth = 0, classes = 0, chunkRows = 1;
  bool transposeWeight = false, bias = false, tf32 = false;
  DType dtype = DType::F32;

  LinearCrossEntropyProblem(const KernelCall &call, size_t first, size_t biasIndex) {
    tf32 = allowsTf32(call);
    const TensorView &hidden = call.inputs[first], &weight = call.inputs[first + 1];
    for (size_t d = 0; d + 1 < hidden.shape.size(); ++d)
      rows *= hidden.shape[d];
    depth = hidden.shape.back();
    transposeWeight = attributesOf(call).intOr("transpose_weight", 0) != 0;
    classes = transposeWeight ? weight.shape[0] : weight.shape[1];
    bias = call.inputs.size() > biasIndex;
    dtype = hidden.dtype;
    chunkRows = itemsPerChunk(kLogitsChunkBytes, classes * 4, rows);
  }
  int64_t chunks() const { return (rows + chunkRows - 1) / chunkRows; }
  bool widens() const { return dtype != DType::F32; }
};

struct LinearCrossEntropyScratch {
  GemmWorkspace gemm;
  float *logits = nullptr;     // [chunkRows, V]: the chunk's logits, then their gradient
  double *losses = nullptr;    // forward: [rows]
  int64_t *counted = nullptr;  // backward: the rows not ignored
  void *logitsGrad = nullptr;  // 16-bit backward: the gradient in the operands' type
  float *weightSums = nullptr; // 16-bit backward over several chunks: [V * D]
  float *biasSums = nullptr;   // 16-bit backward with a bias: [V]
};

inline LinearCrossEntropyScratch carveLinearCrossEntropyScratch(const LinearCrossEntropyProblem &p,
                                                                bool backward,
                                                                WorkspaceCarver &carver) {
  LinearCrossEntropyScratch scratch;
  int64_t outputs = p.chunkRows * std::max(p.classes, p.depth);
  if (backward)
    outputs = std::max(outputs, p.depth * p.classes);
  scratch.gemm = takeGemmWorkspace(carver, cublasLtWorkspaceBytes(outputs));
  scratch.logits = carver.take<float>(p.chunkRows * p.classes);
  if (!backward) {
    scratch.losses = carver.take<double>(p.rows);
    return scratch;
  }
  scratch.counted = carver.take<int64_t>(1);
  if (p.widens()) {
    scratch.logitsGrad =
        carver.take<char>(p.chunkRows * p.classes * static_cast<int64_t>(dtypeSize(p.dtype)));
    if (p.chunks() > 1)
      scratch.weightSums = carver.take<float>(p.classes * p.depth);
    if (p.bias)
      scratch.biasSums = carver.take<float>(p.classes);
  }
  return scratch;
}

inline LinearCrossEntropyScratch carveLinearCrossEntropy(const KernelCall &call,
                                                         WorkspaceCarver &carver) {
  return carveLinearCrossEntropyScratch(LinearCrossEntropyProblem(call, 0, 3), false, carver);
}

inline LinearCrossEntropyScratch carveLinearCrossEntropyGrad(const KernelCall &call,
                                                             WorkspaceCarver &carver) {
  return carveLinearCrossEntropyScratch(LinearCrossEntropyProblem(call, 1, 5), true, carver);
}

//===----------------------------------------------------------------------===//
// conv, conv_grad_input, conv_grad_weight: column matrices a chunk of images at a time.
// conv_grad_weight lays a chunk's columns out [group, R, image, P] and copies its gradient
// [M, image, P], so that one product per group sums over all the chunk's positions.
//===----------------------------------------------------------------------===//

enum class ConvDirection { Forward, GradInput, GradWeight };

/// A call's geometry (conv: input, weight, output; conv_grad_input: result, weight, grad;
/// conv_grad_weight: input, result, grad) and its chunks of images.
struct ConvProblem {
  ConvGeometry g;
  ConvDirection direction;
  DType dtype;
  bool pointwise, bias;
  int64_t chunkImages = 1;

  ConvProblem(const KernelCall &call, ConvDirection direction)
      : g(geometryOf(call, direction)), direction(direction), dtype(call.inputs[0].dtype),
        pointwise(direction != ConvDirection::GradWeight && g.isPointwise()),
        bias(direction == ConvDirection::Forward && call.inputs.size() > 2) {
    chunkImages = itemsPerChunk(kConvColumnsBytes, imageBytes(), g.batch);
  }

  static ConvGeometry geometryOf(const KernelCall &call, ConvDirection direction) {
    const Attributes &attributes = attributesOf(call);
    switch (direction) {
    case ConvDirection::Forward:
      return ConvGeometry(call.inputs[0].shape, call.inputs[1].shape, call.outputs[0].shape,
                          attributes);
    case ConvDirection::GradInput:
      return ConvGeometry(call.outputs[0].shape, call.inputs[1].shape, call.inputs[0].shape,
                          attributes);
    default:
      return ConvGeometry(call.inputs[1].shape, call.outputs[0].shape, call.inputs[0].shape,
                          attributes);
    }
  }
  /// conv_grad_input sums the columns back in f32; the others hold them in the tensors' type.
  DType columnType() const { return direction == ConvDirection::GradInput ? DType::F32 : dtype; }
  /// A 16-bit forward with a bias sums in f32 before it rounds once.
  bool sumsOutput() const { return bias && dtype != DType::F32; }
  int64_t columnElements() const { return g.group * g.columnRows * g.outSize; }
  int64_t imageBytes() const {
    const int64_t element = static_cast<int64_t>(dtypeSize(columnType()));
    int64_t bytes = pointwise ? 0 : columnElements() * element;
    if (sumsOutput())
      bytes += g.outChannels * g.outSize * 4;
    if (direction == ConvDirection::GradWeight)
      bytes += g.outChannels * g.outSize * element;
    return bytes;
  }
  int64_t chunks() const { return (g.batch + chunkImages - 1) / chunkImages; }
};

struct ConvScratch {
  GemmWorkspace gemm;
  void *columns = nullptr;     // chunkImages x group x R x P of columnType(), unless pointwise
  float *outputSums = nullptr; // sumsOutput(): [chunkImages, M, P]
  void *gradients = nullptr;   // conv_grad_weight: the chunk's gradient as [M, chunkImages, P]
  float *weightSums = nullptr; // 16-bit conv_grad_weight over several chunks: [M, R]
};

inline ConvScratch carveConvScratch(const ConvProblem &p, WorkspaceCarver &carver) {
  ConvScratch scratch;
  const ConvGeometry &g = p.g;
  int64_t outputs = p.direction == ConvDirection::GradWeight ? g.outChannels * g.columnRows
                    : p.direction == ConvDirection::GradInput
                        ? p.chunkImages * g.group * g.columnRows * g.outSize
                        : p.chunkImages * g.outChannels * g.outSize;
  scratch.gemm = takeGemmWorkspace(carver, cublasLtWorkspaceBytes(outputs));
  if (!p.pointwise)
    scratch.columns = carver.take<char>(p.chunkImages * p.columnElements() *
                                        static_cast<int64_t>(dtypeSize(p.columnType())));
  if (p.sumsOutput())
    scratch.outputSums = carver.take<float>(p.chunkImages * g.outChannels * g.outSize);
  if (p.direction == ConvDirection::GradWeight) {
    scratch.gradients = carver.take<char>(p.chunkImages * g.outChannels * g.outSize *
                                          static_cast<int64_t>(dtypeSize(p.dtype)));
    if (p.dtype != DType::F32 && p.chunks() > 1)
      scratch.weightSums = carver.take<float>(g.outChannels * g.columnRows);
  }
  return scratch;
}

/// The scratch of a call in `direction`; none when its result is empty.
template <ConvDirection direction>
ConvScratch carveConvCall(const KernelCall &call, WorkspaceCarver &carver) {
  if (call.outputs[0].numElements() == 0)
    return {};
  return carveConvScratch(ConvProblem(call, direction), carver);
}

} // namespace memc::kernels::cuda

#endif // MEMC_KERNELS_CUDA_MATMULWORKSPACES_H
