//===- OneDnnConvolution.cpp - conv and its gradients through oneDNN ------===//
//
// One cache of single-threaded chunk primitives, keyed by the call's shapes with the batch
// replaced by the chunk's images, attributes, dtypes and direction: the plan's workspace rule
// and the run both ask it, so the sizes the plan carves are the ones the run's primitives need.
// Every descriptor, primitive and run is made with one OpenMP thread (OneDnnThreads.h), so
// oneDNN runs each chunk inline on the pool thread that calls it.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/OneDnnConvolution.h"
#include "kernels/cpu/OneDnnThreads.h"

#include "kernels/Float16.h"
#include "kernels/ops/ConvGeometry.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace memc::kernels {

namespace {

using dnnl::memory;

/// The image (x or dx), weights (w or dw) and outputs (y or dy) sides of a convolution.
enum Role { kImage, kWeights, kOutputs, kRoles };

/// Multiply-adds a chunk needs at least: each oneDNN call (primitive and its reorders) costs
/// about 10 us whatever its size, so chunks are few and large. On the ResNet bench layers
/// (4.7-7M multiply-adds, 2 chunks) the chunks cost 0-10% in f32 and 5-30% in bf16 over one
/// call at 1 thread (memc-kernel-bench resnet, docs/benchmarks.md), and give a second thread
/// work at all.
constexpr int64_t kOneDnnMinChunkMultiplyAdds = int64_t{1} << 21;

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

ConvGeometry geometryOf(const KernelCall &call, ConvDirection direction) {
  RoleTensors roles = roleTensors(call, direction);
  return ConvGeometry(roles.tensors[kImage]->shape, roles.tensors[kWeights]->shape,
                      roles.tensors[kOutputs]->shape, attributesOf(call));
}

/// One chunk shape's primitive. `chosen` is the selection rule's answer. The weight gradient's
/// `plain[kWeights]` is f32 whatever dw's dtype: the chunks' partials are summed in f32.
struct ConvPrimitive {
  bool chosen = false;
  memory::desc plain[kRoles], picked[kRoles], bias;
  dnnl::primitive_desc descriptor;
  // Made on the first run (a plan's sizing never runs them).
  std::unique_ptr<dnnl::primitive> compute;
  std::unique_ptr<dnnl::reorder> toPicked[kRoles], toPlain[kRoles];

  bool copies(Role role) const { return !(picked[role] == plain[role]); }
  uint64_t copyBytes(Role role) const {
    return copies(role) ? alignedToWorkspace(picked[role].get_size()) : 0;
  }
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

/// Whether oneDNN may run `call` at all, before any descriptor: the dtypes and dimensions it
/// has primitives for, and the implementation the measured table (or a benchmark) picks.
bool oneDnnCandidate(const KernelCall &call, ConvDirection direction, const ConvGeometry &g) {
  size_t spatial = g.kernel.size();
  DType dtype = roleTensors(call, direction).tensors[kImage]->dtype;
  if (spatial < 1 || spatial > 3 || !oneDnnType(dtype))
    return false;
  if (std::optional<ConvImplementation> forced = forcedConvImplementation())
    return *forced == ConvImplementation::OneDnn;
  if (g.group > 1)
    return dtype != DType::F32;
  const ConvChoiceRow *row = nearestConvChoiceRow(direction, dtype, g);
  return row && row->faster() == ConvImplementation::OneDnn;
}

/// Makes the single-threaded primitive descriptor for `images` images of `call`, or leaves
/// `chosen` false where oneDNN has no optimized implementation for it.
void describe(const KernelCall &call, ConvDirection direction, int64_t images,
              ConvPrimitive &primitive) {
  RoleTensors roles = roleTensors(call, direction);
  ConvGeometry g = geometryOf(call, direction);
  size_t spatial = g.kernel.size();
  memory::data_type type = *oneDnnType(roles.tensors[kImage]->dtype);
  bool grouped = g.group > 1;
  memory::desc any[kRoles];
  for (int role = 0; role < kRoles; ++role) {
    memory::dims dims(roles.tensors[role]->shape.begin(), roles.tensors[role]->shape.end());
    if (role == kWeights && grouped) {
      dims[0] /= g.group;
      dims.insert(dims.begin(), g.group);
    }
    if (role != kWeights)
      dims[0] = images;
    memory::data_type roleType =
        role == kWeights && direction == ConvDirection::GradWeight ? memory::data_type::f32 : type;
    primitive.plain[role] = memory::desc(dims, roleType, plainTag(Role(role), spatial, grouped));
    any[role] = memory::desc(dims, roleType, memory::format_tag::any);
  }
  // The forward descriptor the backward ones take as a hint has the weights' own dtype.
  memory::desc forwardWeights =
      memory::desc(primitive.plain[kWeights].dims(), type, memory::format_tag::any);
  std::vector<int64_t> pads;
  attributesOf(call).getInts("pads", pads);
  memory::dims strides(g.strides.begin(), g.strides.end()),
      padsBegin(pads.begin(), pads.begin() + spatial), padsEnd(pads.begin() + spatial, pads.end()),
      dilations;
  for (int64_t d : g.dilations)
    dilations.push_back(d - 1);
  bool hasBias = direction == ConvDirection::Forward && call.inputs.size() == 3;
  dnnl::primitive_attr attributes;
  attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  auto alg = dnnl::algorithm::convolution_direct;
  auto prop = dnnl::prop_kind::forward_training;
  OneDnnThreadsScope scope(1);
  try {
    if (hasBias) {
      std::optional<memory::data_type> biasType = oneDnnType(call.inputs[2].dtype);
      if (!biasType)
        return;
      primitive.bias = memory::desc({g.outChannels}, *biasType, memory::format_tag::a);
    }
    dnnl::convolution_forward::primitive_desc forward(
        hasBias
            ? dnnl::convolution_forward::desc(prop, alg, any[kImage], forwardWeights,
                                              primitive.bias, any[kOutputs], strides, dilations,
                                              padsBegin, padsEnd)
            : dnnl::convolution_forward::desc(prop, alg, any[kImage], forwardWeights, any[kOutputs],
                                              strides, dilations, padsBegin, padsEnd),
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
          dnnl::convolution_backward_weights::desc(alg, any[kImage], any[kWeights], any[kOutputs],
                                                   strides, dilations, padsBegin, padsEnd),
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
  primitive.chosen = std::string(primitive.descriptor.impl_info_str()).rfind("ref", 0) != 0;
}

/// The cache key: everything describe() reads.
std::vector<int64_t> signature(const KernelCall &call, ConvDirection direction, int64_t images) {
  std::vector<int64_t> key = {static_cast<int64_t>(direction), images};
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

/// The cached primitive for chunks of `images` images of `call`, made runnable when
/// `runnable`; made under cacheMutex, which the caller holds.
ConvPrimitive &lookup(const KernelCall &call, ConvDirection direction, int64_t images,
                      bool runnable) {
  static std::map<std::vector<int64_t>, std::unique_ptr<ConvPrimitive>> cache;
  std::unique_ptr<ConvPrimitive> &slot = cache[signature(call, direction, images)];
  if (!slot) {
    slot = std::make_unique<ConvPrimitive>();
    describe(call, direction, images, *slot);
  }
  ConvPrimitive &primitive = *slot;
  if (!runnable || !primitive.chosen || primitive.compute)
    return primitive;
  // oneDNN reads the thread count again when it makes a primitive (and keys its cache by it).
  OneDnnThreadsScope scope(1);
  primitive.compute = std::make_unique<dnnl::primitive>(primitive.descriptor);
  dnnl::engine &engine = oneDnnCpuEngine();
  for (int role = 0; role < kRoles; ++role) {
    if (!primitive.copies(Role(role)))
      continue;
    primitive.toPicked[role] = std::make_unique<dnnl::reorder>(dnnl::reorder::primitive_desc(
        engine, primitive.plain[role], engine, primitive.picked[role]));
    primitive.toPlain[role] = std::make_unique<dnnl::reorder>(dnnl::reorder::primitive_desc(
        engine, primitive.picked[role], engine, primitive.plain[role]));
  }
  return primitive;
}

/// The runnable primitive of chunk `chunk`'s shape.
ConvPrimitive &chunkPrimitive(const KernelCall &call, ConvDirection direction,
                              const OneDnnConvChunks &chunks, int64_t chunk) {
  int64_t batch = roleTensors(call, direction).tensors[kImage]->shape[0];
  int64_t images = std::min(chunks.chunkImages, batch - chunk * chunks.chunkImages);
  std::lock_guard<std::mutex> lock(cacheMutex);
  return lookup(call, direction, images, true);
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

/// The pieces of one slot (OneDnnConvScratch's layout).
struct SlotPieces {
  uint8_t *image, *outputs, *weights, *partial, *scratchpad;
};

SlotPieces slotPieces(const OneDnnConvScratch &scratch, int64_t slot) {
  const OneDnnConvChunks &c = scratch.chunks;
  SlotPieces pieces;
  pieces.image = scratch.slots + static_cast<uint64_t>(slot) * c.slotBytes();
  pieces.outputs = pieces.image + c.image;
  pieces.weights = pieces.outputs + c.outputs;
  pieces.partial = pieces.weights + c.weights;
  pieces.scratchpad = pieces.partial + c.partial;
  return pieces;
}

} // namespace

std::optional<OneDnnConvChunks> oneDnnConvChunks(const KernelCall &call, ConvDirection direction,
                                                 int64_t chunkCount) {
  ConvGeometry g = geometryOf(call, direction);
  if (!oneDnnCandidate(call, direction, g))
    return std::nullopt;
  OneDnnConvChunks chunks;
  int64_t count = std::clamp<int64_t>(chunkCount, 1, std::min(g.batch, kMaxWorkspaceSlots));
  chunks.chunkImages = (g.batch + count - 1) / count;
  chunks.chunks = (g.batch + chunks.chunkImages - 1) / chunks.chunkImages;
  bool gradWeight = direction == ConvDirection::GradWeight;
  std::lock_guard<std::mutex> lock(cacheMutex);
  const ConvPrimitive *first = nullptr;
  for (int64_t images : {chunks.chunkImages, g.batch % chunks.chunkImages}) {
    if (images == 0)
      continue;
    const ConvPrimitive &primitive = lookup(call, direction, images, false);
    if (!primitive.chosen)
      return std::nullopt;
    // conv and conv_grad_input share one copy of the weights, so a smaller last chunk must pick
    // the same blocking (it did for every batch, chunk count and channel count probed; memc's
    // kernel runs a call where it would not).
    if (first && !gradWeight && !(primitive.picked[kWeights] == first->picked[kWeights]))
      return std::nullopt;
    first = &primitive;
    chunks.image = std::max(chunks.image, primitive.copyBytes(kImage));
    chunks.outputs = std::max(chunks.outputs, primitive.copyBytes(kOutputs));
    chunks.scratchpad = std::max(
        chunks.scratchpad, alignedToWorkspace(primitive.descriptor.scratchpad_desc().get_size()));
    if (gradWeight) {
      chunks.weights = std::max(chunks.weights, primitive.copyBytes(kWeights));
      // One f32 chunk writes dw itself: nothing to sum.
      bool direct = chunks.chunks == 1 && call.outputs[0].dtype == DType::F32;
      chunks.partial = direct ? 0 : alignedToWorkspace(primitive.plain[kWeights].get_size());
    } else {
      chunks.sharedWeights = std::max(chunks.sharedWeights, primitive.copyBytes(kWeights));
    }
  }
  return chunks;
}

namespace {

/// oneDnnChunkCount of a call of geometry `g`.
int64_t chunkCountOf(const ConvGeometry &g) {
  int64_t multiplyAdds = g.batch * g.outChannels * g.outSize * g.columnRows;
  // A power of two, so that the chunks share out evenly over 2, 4, 8 or 16 threads (3 chunks on
  // 2 threads take two chunks' time, as 2 chunks do).
  int64_t count = 1;
  while (2 * count <=
         std::min<int64_t>(multiplyAdds / kOneDnnMinChunkMultiplyAdds, kMaxWorkspaceSlots))
    count *= 2;
  // Half a chunk's work still splits in two: at 1 thread the second call costs about what it
  // saves at 2 (the ResNet-style bench model's 8->16 stride-2 layer, 2.4M multiply-adds a
  // direction: interleaved runs, 1 thread 4.44 / 4.45 ms a step, 2 threads 2.98 / 2.84).
  if (multiplyAdds >= kOneDnnMinChunkMultiplyAdds / 2 && g.batch > 1)
    count = std::max<int64_t>(count, 2);
  return count;
}

} // namespace

int64_t oneDnnChunkCount(const KernelCall &call, ConvDirection direction) {
  return chunkCountOf(geometryOf(call, direction));
}

std::optional<OneDnnConvChunks> oneDnnConvolution(const KernelCall &call, ConvDirection direction) {
  ConvGeometry g = geometryOf(call, direction);
  if (!oneDnnCandidate(call, direction, g))
    return std::nullopt; // without a descriptor: memc's calls pay nothing for the rule
  std::optional<OneDnnConvChunks> chunks = oneDnnConvChunks(call, direction, chunkCountOf(g));
  bool f32 = roleTensors(call, direction).tensors[kImage]->dtype == DType::F32;
  if (chunks && f32 && chunks->totalBytes() > kOneDnnMaxF32WorkspaceBytes &&
      !forcedConvImplementation())
    return std::nullopt;
  return chunks;
}

void prepareOneDnnConvolution(const KernelCall &call, ConvDirection direction,
                              const OneDnnConvScratch &scratch) {
  if (direction == ConvDirection::GradWeight || scratch.chunks.sharedWeights == 0)
    return;
  // Every chunk shape picks the same weights layout (oneDnnConvChunks refuses other cuts).
  ConvPrimitive &primitive = chunkPrimitive(call, direction, scratch.chunks, 0);
  dnnl::engine &engine = oneDnnCpuEngine();
  thread_local dnnl::stream stream(engine);
  OneDnnThreadsScope scope(1);
  memory plain(primitive.plain[kWeights], engine,
               roleTensors(call, direction).tensors[kWeights]->data);
  memory picked(primitive.picked[kWeights], engine, scratch.sharedWeights);
  primitive.toPicked[kWeights]->execute(stream, plain, picked);
  stream.wait();
}

void runOneDnnConvChunk(const KernelCall &call, ConvDirection direction,
                        const OneDnnConvScratch &scratch, int64_t chunk) {
  ConvPrimitive &primitive = chunkPrimitive(call, direction, scratch.chunks, chunk);
  RoleTensors roles = roleTensors(call, direction);
  SlotPieces pieces = slotPieces(scratch, chunk);
  bool gradWeight = direction == ConvDirection::GradWeight;
  // The chunk's plain tensors: its images of the image and outputs sides; the weights, or the
  // slot's f32 partial weight gradient.
  void *data[kRoles];
  for (Role role : {kImage, kOutputs}) {
    const TensorView &tensor = *roles.tensors[role];
    uint64_t imageBytes = tensor.sizeBytes() / static_cast<uint64_t>(tensor.shape[0]);
    data[role] = static_cast<uint8_t *>(tensor.data) +
                 static_cast<uint64_t>(chunk * scratch.chunks.chunkImages) * imageBytes;
  }
  data[kWeights] = scratch.chunks.partial > 0 ? pieces.partial : roles.tensors[kWeights]->data;
  uint8_t *copies[kRoles] = {pieces.image, gradWeight ? pieces.weights : scratch.sharedWeights,
                             pieces.outputs};
  int ids[kRoles];
  roleArguments(direction, ids);
  dnnl::engine &engine = oneDnnCpuEngine();
  thread_local dnnl::stream stream(engine);
  OneDnnThreadsScope scope(1);
  std::unordered_map<int, memory> arguments;
  memory plain[kRoles], picked[kRoles];
  for (int role = 0; role < kRoles; ++role) {
    plain[role] = memory(primitive.plain[role], engine, data[role]);
    picked[role] = plain[role];
    if (primitive.copies(Role(role))) {
      picked[role] = memory(primitive.picked[role], engine, copies[role]);
      // The shared weights were reordered once (prepareOneDnnConvolution).
      if (role != roles.written && role != kWeights)
        primitive.toPicked[role]->execute(stream, plain[role], picked[role]);
    }
    arguments[ids[role]] = picked[role];
  }
  if (direction == ConvDirection::Forward && call.inputs.size() == 3)
    arguments[DNNL_ARG_BIAS] = memory(primitive.bias, engine, call.inputs[2].data);
  arguments[DNNL_ARG_SCRATCHPAD] =
      memory(primitive.descriptor.scratchpad_desc(), engine, pieces.scratchpad);
  primitive.compute->execute(stream, arguments);
  if (primitive.toPlain[roles.written])
    primitive.toPlain[roles.written]->execute(stream, picked[roles.written], plain[roles.written]);
  stream.wait();
}

void finishOneDnnConvolution(const KernelCall &call, ConvDirection direction,
                             const OneDnnConvScratch &scratch, int64_t begin, int64_t end) {
  if (direction != ConvDirection::GradWeight || scratch.chunks.partial == 0)
    return;
  const TensorView &dw = call.outputs[0];
  for (int64_t i = begin; i < end; ++i) {
    float sum = 0.0f;
    for (int64_t chunk = 0; chunk < scratch.chunks.chunks; ++chunk)
      sum += reinterpret_cast<const float *>(slotPieces(scratch, chunk).partial)[i];
    if (dw.dtype == DType::BF16)
      dw.as<uint16_t>()[i] = floatToBFloat16(sum);
    else
      dw.as<float>()[i] = sum;
  }
}

} // namespace memc::kernels
