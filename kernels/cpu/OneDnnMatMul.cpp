//===- OneDnnMatMul.cpp - 16-bit matmul through oneDNN --------------------===//
//
// One cache of primitives keyed by the call's dtype, shapes, transpose flags and thread count,
// asked by the workspace rule and the run alike (as OneDnnConvolution.cpp's). Operands are
// described with strides, never copied: a transposed lhs stored [.., K, M] is the [.., M, K]
// matrix with strides (1, M), a transposed rhs likewise, and a batch dim an operand broadcasts
// is a dim of size 1 (oneDNN broadcasts it, as numpy does). A batch that shares one
// right-hand matrix is one tall 2-D product, as memc's own kernel computes it.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/OneDnnMatMul.h"

#include "kernels/cpu/MatMulWorkspace.h"
#include "kernels/cpu/OneDnnConvolution.h"
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
  return static_cast<double>(dims.batchCount) * static_cast<double>(dims.m) *
             static_cast<double>(dims.n) * static_cast<double>(dims.k) >=
         kOneDnnMinMultiplyAdds;
}

/// One call signature's primitive at one thread count. `chosen` is the selection rule's answer.
struct MatMulPrimitive {
  bool chosen = false;
  uint64_t scratchpad = 0;
  memory::desc lhs, rhs, result;
  dnnl::matmul::primitive_desc descriptor;
  std::unique_ptr<dnnl::matmul> compute; // made on the first run (a plan's sizing never runs it)
};

/// A row-major matrix operand of `batch` (padded with leading 1s to `rank` - 2 dims) whose stored
/// last two dims are [rows, columns], read as [columns, rows] when `transposed`.
memory::desc operandDesc(const Shape &batch, size_t rank, int64_t rows, int64_t columns,
                         bool transposed, memory::data_type type) {
  memory::dims dims(rank - 2 - batch.size(), 1);
  dims.insert(dims.end(), batch.begin(), batch.end());
  memory::dims strides(rank);
  strides[rank - 1] = transposed ? columns : 1;
  strides[rank - 2] = transposed ? 1 : columns;
  int64_t stride = rows * columns;
  for (size_t dim = rank - 2; dim-- > 0;) {
    strides[dim] = stride;
    stride *= dims[dim];
  }
  dims.push_back(transposed ? columns : rows);
  dims.push_back(transposed ? rows : columns);
  return memory::desc(dims, type, strides);
}

/// Makes the primitive descriptor for `call` (the current OpenMP thread count applies), or
/// leaves `chosen` false where memc's kernel runs it.
void describe(const KernelCall &call, MatMulPrimitive &primitive) {
  if (!oneDnnCandidate(call))
    return;
  MatMulDims dims(call);
  auto type = memory::data_type::bf16;
  size_t rank = dims.batch.size() + 2;
  if (dims.k == 0 || rank > DNNL_MAX_NDIMS)
    return;
  bool ta = dims.transposes.lhs, tb = dims.transposes.rhs;
  if (dims.stacksRows()) {
    int64_t rows = dims.batchCount * dims.m;
    primitive.lhs = operandDesc({}, 2, rows, dims.k, false, type);
    primitive.rhs = operandDesc({}, 2, tb ? dims.n : dims.k, tb ? dims.k : dims.n, tb, type);
    primitive.result = operandDesc({}, 2, rows, dims.n, false, type);
  } else {
    primitive.lhs = operandDesc(dims.lhsBatch, rank, ta ? dims.k : dims.m, ta ? dims.m : dims.k,
                                ta, type);
    primitive.rhs = operandDesc(dims.rhsBatch, rank, tb ? dims.n : dims.k, tb ? dims.k : dims.n,
                                tb, type);
    primitive.result = operandDesc(dims.batch, rank, dims.m, dims.n, false, type);
  }
  dnnl::primitive_attr attributes;
  attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
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

/// The cache key: everything describe() reads.
std::vector<int64_t> signature(const KernelCall &call, int threads) {
  MatMulTransposes transposes = matmulTransposesOf(call);
  std::vector<int64_t> key = {threads, transposes.lhs, transposes.rhs};
  for (const TensorView *tensor : {&call.inputs[0], &call.inputs[1], &call.outputs[0]}) {
    key.push_back(static_cast<int64_t>(tensor->dtype));
    key.push_back(static_cast<int64_t>(tensor->shape.size()));
    key.insert(key.end(), tensor->shape.begin(), tensor->shape.end());
  }
  return key;
}

std::mutex cacheMutex;

/// The cached primitive for `call` at `threads` threads; made under cacheMutex, which the
/// caller holds.
MatMulPrimitive &lookup(const KernelCall &call, int threads) {
  static std::map<std::vector<int64_t>, std::unique_ptr<MatMulPrimitive>> cache;
  std::unique_ptr<MatMulPrimitive> &slot = cache[signature(call, threads)];
  if (!slot) {
    slot = std::make_unique<MatMulPrimitive>();
    OneDnnThreadsScope scope(threads);
    describe(call, *slot);
  }
  return *slot;
}

/// The primitive for `call` with the most threads up to `threads` whose scratchpad fits the
/// plan's, made runnable; null when none does.
MatMulPrimitive *fittingPrimitive(const KernelCall &call, int threads, uint64_t planned,
                                  int &chosenThreads) {
  std::lock_guard<std::mutex> lock(cacheMutex);
  for (chosenThreads = threads; chosenThreads >= 1; --chosenThreads) {
    MatMulPrimitive &primitive = lookup(call, chosenThreads);
    if (primitive.chosen && primitive.scratchpad <= planned) {
      OneDnnThreadsScope scope(chosenThreads);
      if (!primitive.compute)
        primitive.compute = std::make_unique<dnnl::matmul>(primitive.descriptor);
      return &primitive;
    }
  }
  return nullptr;
}

} // namespace

std::optional<uint64_t> oneDnnMatMul(const KernelCall &call) {
  if (!oneDnnCandidate(call))
    return std::nullopt; // without a lookup: f32 and small calls pay nothing for the rule
  std::lock_guard<std::mutex> lock(cacheMutex);
  uint64_t planned = 0;
  for (int threads = 1; threads <= oneDnnPlanThreads(); ++threads) {
    const MatMulPrimitive &primitive = lookup(call, threads);
    if (!primitive.chosen)
      return std::nullopt;
    planned = std::max(planned, primitive.scratchpad);
  }
  return planned;
}

bool runOneDnnMatMul(KernelContext &context, const KernelCall &call, int threads,
                     uint8_t *scratchpad, uint64_t scratchpadBytes) {
  MatMulPrimitive *primitive = fittingPrimitive(
      call, std::clamp(threads, 1, static_cast<int>(kMaxWorkspaceSlots)), scratchpadBytes,
      threads);
  if (!primitive)
    return context.fail("oneDNN's matmul needs more scratchpad than the plan sized for it at "
                        "every thread count (planned " +
                        std::to_string(scratchpadBytes) +
                        " bytes): was the plan compiled on another CPU?");
  dnnl::engine &engine = oneDnnCpuEngine();
  thread_local dnnl::stream stream(engine);
  OneDnnThreadsScope scope(threads);
  primitive->compute->execute(
      stream, {{DNNL_ARG_SRC, memory(primitive->lhs, engine, call.inputs[0].data)},
               {DNNL_ARG_WEIGHTS, memory(primitive->rhs, engine, call.inputs[1].data)},
               {DNNL_ARG_DST, memory(primitive->result, engine, call.outputs[0].data)},
               {DNNL_ARG_SCRATCHPAD,
                memory(primitive->descriptor.scratchpad_desc(), engine, scratchpad)}});
  stream.wait();
  return true;
}

} // namespace memc::kernels
