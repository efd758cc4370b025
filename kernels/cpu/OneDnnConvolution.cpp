//===- OneDnnConvolution.cpp - conv and its gradients through oneDNN ------===//
//
// One cache of primitives, keyed by the call's shapes, attributes, dtypes, direction and thread
// count: the plan's workspace rule and the run both ask it, so the sizes the plan carves are the
// largest the run's primitive needs at any thread count up to oneDnnPlanThreads() (the
// scratchpad is not monotonic in the threads: 4 threads may need more than 16). Debian's
// oneDNN runs on OpenMP and reads the calling thread's omp_get_max_threads() when a primitive
// descriptor or a primitive is made and when it runs, so a thread count is set around each (a
// primitive made at the default count ran its 1-thread descriptor on 2 threads, spinning).
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/OneDnnConvolution.h"
#include "kernels/cpu/OneDnnThreads.h"

#include "kernels/ops/ConvGeometry.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

namespace memc::kernels {

namespace {

using dnnl::memory;

/// The image (x or dx), weights (w or dw) and outputs (y or dy) sides of a convolution.
enum Role { kImage, kWeights, kOutputs, kRoles };

/// The most workspace (blocked copies and scratchpad) an f32 call may take on oneDNN: beyond it
/// memc's tiled kernels, whose workspace stays a small constant, keep the plan's peak down.
constexpr uint64_t kOneDnnMaxF32WorkspaceBytes = uint64_t{4} << 20;

/// Channels per group below which memc's f32 conv_grad_input wins (bench/kernels/conv_vs_torch.py:
/// the ResNet stem's 3-channel input gradient ran 2.7x faster on memc's col2im; in bf16 oneDNN's
/// AMX kernel wins there too).
constexpr int64_t kMinGradInputChannels = 8;

std::optional<memory::data_type> oneDnnType(DType dtype) {
  if (dtype == DType::F32)
    return memory::data_type::f32;
  if (dtype == DType::BF16)
    return memory::data_type::bf16;
  return std::nullopt;
}

/// The tensors of `call` in role order, and the role the call writes.
struct RoleTensors {
  const TensorView *tensors[kRoles];
  Role written;
};

RoleTensors roleTensors(const KernelCall &call, ConvDirection direction) {
  switch (direction) {
  case ConvDirection::Forward:
    return {{&call.inputs[0], &call.inputs[1], &call.outputs[0]}, kOutputs};
  case ConvDirection::GradInput:
    return {{&call.outputs[0], &call.inputs[1], &call.inputs[0]}, kImage};
  case ConvDirection::GradWeight:
    break;
  }
  return {{&call.inputs[1], &call.outputs[0], &call.inputs[0]}, kWeights};
}

/// One call signature's primitive at one thread count. `chosen` is the selection rule's answer.
struct ConvPrimitive {
  bool chosen = false;
  OneDnnConvSizes sizes;
  memory::desc plain[kRoles], picked[kRoles], bias;
  dnnl::primitive_desc descriptor;
  // Made on the first run (a plan's sizing never runs them).
  std::unique_ptr<dnnl::primitive> compute;
  std::unique_ptr<dnnl::reorder> toPicked[kRoles], toPlain[kRoles];
};

memory::format_tag plainTag(Role role, size_t spatial, bool grouped) {
  using tag = memory::format_tag;
  static const tag images[] = {tag::ncw, tag::nchw, tag::ncdhw};
  static const tag weights[] = {tag::oiw, tag::oihw, tag::oidhw};
  static const tag groupedWeights[] = {tag::goiw, tag::goihw, tag::goidhw};
  if (role != kWeights)
    return images[spatial - 1];
  return grouped ? groupedWeights[spatial - 1] : weights[spatial - 1];
}

uint64_t copyBytes(const memory::desc &picked, const memory::desc &plain) {
  return picked == plain ? 0 : picked.get_size();
}

/// Makes the primitive descriptor for `call` (the current OpenMP thread count applies), or
/// leaves `chosen` false where oneDNN does not run it.
void describe(const KernelCall &call, ConvDirection direction, ConvPrimitive &primitive) {
  RoleTensors roles = roleTensors(call, direction);
  const TensorView &image = *roles.tensors[kImage], &weights = *roles.tensors[kWeights];
  ConvGeometry g(image.shape, weights.shape, roles.tensors[kOutputs]->shape, attributesOf(call));
  size_t spatial = g.kernel.size();
  bool window = std::any_of(g.kernel.begin(), g.kernel.end(), [](int64_t k) { return k != 1; });
  std::optional<memory::data_type> type = oneDnnType(image.dtype);
  bool f32 = image.dtype == DType::F32;
  // f32 on memc where its kernels win or where oneDNN was not measured (grouped convolutions).
  if (spatial < 1 || spatial > 3 || !type ||
      (f32 && (!window || g.group > 1 ||
               (direction == ConvDirection::GradInput && g.groupChannels < kMinGradInputChannels))))
    return;
  bool grouped = g.group > 1;
  memory::desc any[kRoles];
  for (int role = 0; role < kRoles; ++role) {
    memory::dims dims(roles.tensors[role]->shape.begin(), roles.tensors[role]->shape.end());
    if (role == kWeights && grouped) {
      dims[0] /= g.group;
      dims.insert(dims.begin(), g.group);
    }
    primitive.plain[role] = memory::desc(dims, *type, plainTag(Role(role), spatial, grouped));
    any[role] = memory::desc(dims, *type, memory::format_tag::any);
  }
  std::vector<int64_t> pads;
  attributesOf(call).getInts("pads", pads);
  memory::dims strides(g.strides.begin(), g.strides.end()), padsBegin(pads.begin(),
                                                                       pads.begin() + spatial),
      padsEnd(pads.begin() + spatial, pads.end()), dilations;
  for (int64_t d : g.dilations)
    dilations.push_back(d - 1);
  bool hasBias = direction == ConvDirection::Forward && call.inputs.size() == 3;
  dnnl::primitive_attr attributes;
  attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  auto alg = dnnl::algorithm::convolution_direct;
  auto prop = dnnl::prop_kind::forward_training;
  try {
    if (hasBias) {
      std::optional<memory::data_type> biasType = oneDnnType(call.inputs[2].dtype);
      if (!biasType)
        return;
      primitive.bias = memory::desc({g.outChannels}, *biasType, memory::format_tag::a);
    }
    dnnl::convolution_forward::primitive_desc forward(
        hasBias ? dnnl::convolution_forward::desc(prop, alg, any[kImage], any[kWeights],
                                                  primitive.bias, any[kOutputs], strides,
                                                  dilations, padsBegin, padsEnd)
                : dnnl::convolution_forward::desc(prop, alg, any[kImage], any[kWeights],
                                                  any[kOutputs], strides, dilations, padsBegin,
                                                  padsEnd),
        attributes, oneDnnCpuEngine());
    if (direction == ConvDirection::Forward) {
      primitive.picked[kImage] = forward.src_desc();
      primitive.picked[kWeights] = forward.weights_desc();
      primitive.picked[kOutputs] = forward.dst_desc();
      primitive.descriptor = forward;
    } else if (direction == ConvDirection::GradInput) {
      dnnl::convolution_backward_data::primitive_desc backward(
          dnnl::convolution_backward_data::desc(alg, any[kImage], any[kWeights], any[kOutputs],
                                                strides, dilations, padsBegin, padsEnd),
          attributes, oneDnnCpuEngine(), forward);
      primitive.picked[kImage] = backward.diff_src_desc();
      primitive.picked[kWeights] = backward.weights_desc();
      primitive.picked[kOutputs] = backward.diff_dst_desc();
      primitive.descriptor = backward;
    } else {
      dnnl::convolution_backward_weights::primitive_desc backward(
          dnnl::convolution_backward_weights::desc(alg, any[kImage], any[kWeights],
                                                   any[kOutputs], strides, dilations, padsBegin,
                                                   padsEnd),
          attributes, oneDnnCpuEngine(), forward);
      primitive.picked[kImage] = backward.src_desc();
      primitive.picked[kWeights] = backward.diff_weights_desc();
      primitive.picked[kOutputs] = backward.diff_dst_desc();
      primitive.descriptor = backward;
    }
  } catch (const dnnl::error &) {
    return; // no implementation for these shapes and types: memc's kernel runs the call
  }
  // The reference implementations are plain loops, slower than memc's kernels.
  if (std::string(primitive.descriptor.impl_info_str()).rfind("ref", 0) == 0)
    return;
  primitive.sizes.image = copyBytes(primitive.picked[kImage], primitive.plain[kImage]);
  primitive.sizes.weights = copyBytes(primitive.picked[kWeights], primitive.plain[kWeights]);
  primitive.sizes.outputs = copyBytes(primitive.picked[kOutputs], primitive.plain[kOutputs]);
  primitive.sizes.scratchpad = primitive.descriptor.scratchpad_desc().get_size();
  const OneDnnConvSizes &sizes = primitive.sizes;
  primitive.chosen = !f32 || sizes.image + sizes.weights + sizes.outputs + sizes.scratchpad <=
                                 kOneDnnMaxF32WorkspaceBytes;
}

/// The cache key: everything describe() reads.
std::vector<int64_t> signature(const KernelCall &call, ConvDirection direction, int threads) {
  std::vector<int64_t> key = {static_cast<int64_t>(direction), threads};
  auto append = [&](const TensorView &tensor) {
    key.push_back(static_cast<int64_t>(tensor.dtype));
    key.push_back(static_cast<int64_t>(tensor.shape.size()));
    key.insert(key.end(), tensor.shape.begin(), tensor.shape.end());
  };
  for (const TensorView &tensor : call.inputs)
    append(tensor);
  append(call.outputs[0]);
  std::vector<int64_t> values;
  for (const char *name : {"strides", "pads", "dilations"}) {
    values.clear();
    attributesOf(call).getInts(name, values);
    key.push_back(static_cast<int64_t>(values.size()));
    key.insert(key.end(), values.begin(), values.end());
  }
  key.push_back(attributesOf(call).intOr("group", 1));
  return key;
}

std::mutex cacheMutex;

/// The cached primitive for `call` at `threads` threads; made under cacheMutex, which the
/// caller holds.
ConvPrimitive &lookup(const KernelCall &call, ConvDirection direction, int threads) {
  static std::map<std::vector<int64_t>, std::unique_ptr<ConvPrimitive>> cache;
  std::unique_ptr<ConvPrimitive> &slot = cache[signature(call, direction, threads)];
  if (!slot) {
    slot = std::make_unique<ConvPrimitive>();
    OneDnnThreadsScope scope(threads);
    describe(call, direction, *slot);
  }
  return *slot;
}

void makeRunnable(ConvPrimitive &primitive) {
  if (primitive.compute)
    return;
  primitive.compute = std::make_unique<dnnl::primitive>(primitive.descriptor);
  for (int role = 0; role < kRoles; ++role) {
    if (primitive.picked[role] == primitive.plain[role])
      continue;
    dnnl::engine &engine = oneDnnCpuEngine();
    primitive.toPicked[role] = std::make_unique<dnnl::reorder>(dnnl::reorder::primitive_desc(
        engine, primitive.plain[role], engine, primitive.picked[role]));
    primitive.toPlain[role] = std::make_unique<dnnl::reorder>(dnnl::reorder::primitive_desc(
        engine, primitive.picked[role], engine, primitive.plain[role]));
  }
}

/// The primitive's argument ids of the three roles.
void roleArguments(ConvDirection direction, int (&ids)[kRoles]) {
  switch (direction) {
  case ConvDirection::Forward:
    ids[kImage] = DNNL_ARG_SRC, ids[kWeights] = DNNL_ARG_WEIGHTS, ids[kOutputs] = DNNL_ARG_DST;
    return;
  case ConvDirection::GradInput:
    ids[kImage] = DNNL_ARG_DIFF_SRC, ids[kWeights] = DNNL_ARG_WEIGHTS;
    ids[kOutputs] = DNNL_ARG_DIFF_DST;
    return;
  case ConvDirection::GradWeight:
    break;
  }
  ids[kImage] = DNNL_ARG_SRC, ids[kWeights] = DNNL_ARG_DIFF_WEIGHTS;
  ids[kOutputs] = DNNL_ARG_DIFF_DST;
}

bool fitsPlan(const OneDnnConvSizes &needed, const OneDnnConvSizes &planned) {
  return needed.image <= planned.image && needed.weights <= planned.weights &&
         needed.outputs <= planned.outputs && needed.scratchpad <= planned.scratchpad;
}

/// The primitive for `call` with the most threads up to `threads` that fits the plan's pieces,
/// made runnable; null when none does.
ConvPrimitive *fittingPrimitive(const KernelCall &call, ConvDirection direction, int threads,
                                const OneDnnConvSizes &planned, int &chosenThreads) {
  std::lock_guard<std::mutex> lock(cacheMutex);
  for (chosenThreads = threads; chosenThreads >= 1; --chosenThreads) {
    ConvPrimitive &primitive = lookup(call, direction, chosenThreads);
    if (primitive.chosen && fitsPlan(primitive.sizes, planned)) {
      // oneDNN reads the thread count again when it makes a primitive (and keys its cache by it).
      OneDnnThreadsScope scope(chosenThreads);
      makeRunnable(primitive);
      return &primitive;
    }
  }
  return nullptr;
}

} // namespace

int oneDnnPlanThreads() {
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(cores, 1, static_cast<int>(kMaxWorkspaceSlots));
}

std::optional<OneDnnConvSizes> oneDnnConvolution(const KernelCall &call,
                                                 ConvDirection direction) {
  std::lock_guard<std::mutex> lock(cacheMutex);
  OneDnnConvSizes planned;
  for (int threads = 1; threads <= oneDnnPlanThreads(); ++threads) {
    const ConvPrimitive &primitive = lookup(call, direction, threads);
    if (!primitive.chosen)
      return std::nullopt;
    planned.image = std::max(planned.image, primitive.sizes.image);
    planned.weights = std::max(planned.weights, primitive.sizes.weights);
    planned.outputs = std::max(planned.outputs, primitive.sizes.outputs);
    planned.scratchpad = std::max(planned.scratchpad, primitive.sizes.scratchpad);
  }
  return planned;
}

bool runOneDnnConvolution(KernelContext &context, const KernelCall &call, ConvDirection direction,
                          int threads, const OneDnnConvScratch &scratch) {
  ConvPrimitive *primitive = fittingPrimitive(
      call, direction, std::clamp(threads, 1, static_cast<int>(kMaxWorkspaceSlots)),
      scratch.sizes, threads);
  if (!primitive)
    return context.fail("oneDNN's convolution needs more workspace than the plan sized for it "
                        "at every thread count (planned scratchpad " +
                        std::to_string(scratch.sizes.scratchpad) +
                        " bytes): was the plan compiled on another CPU?");
  RoleTensors roles = roleTensors(call, direction);
  uint8_t *copies[kRoles] = {scratch.image, scratch.weights, scratch.outputs};
  int ids[kRoles];
  roleArguments(direction, ids);
  dnnl::engine &engine = oneDnnCpuEngine();
  thread_local dnnl::stream stream(engine);
  OneDnnThreadsScope scope(threads);
  std::unordered_map<int, memory> arguments;
  memory plain[kRoles], picked[kRoles];
  for (int role = 0; role < kRoles; ++role) {
    plain[role] = memory(primitive->plain[role], engine, roles.tensors[role]->data);
    picked[role] = plain[role];
    if (primitive->toPicked[role]) {
      picked[role] = memory(primitive->picked[role], engine, copies[role]);
      if (role != roles.written)
        primitive->toPicked[role]->execute(stream, plain[role], picked[role]);
    }
    arguments[ids[role]] = picked[role];
  }
  if (direction == ConvDirection::Forward && call.inputs.size() == 3)
    arguments[DNNL_ARG_BIAS] = memory(primitive->bias, engine, call.inputs[2].data);
  arguments[DNNL_ARG_SCRATCHPAD] =
      memory(primitive->descriptor.scratchpad_desc(), engine, scratch.scratchpad);
  primitive->compute->execute(stream, arguments);
  if (primitive->toPlain[roles.written])
    primitive->toPlain[roles.written]->execute(stream, picked[roles.written],
                                               plain[roles.written]);
  stream.wait();
  return true;
}

} // namespace memc::kernels
