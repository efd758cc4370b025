//===- OneDnnGemm.cpp - one bf16 product through oneDNN -------------------===//
//
// One cache of single-threaded primitives keyed by the shape, asked by the workspace rule (for
// the scratchpad) and by the run.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/OneDnnGemm.h"

#include "kernels/cpu/OneDnnThreads.h"

#include <cassert>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace memc::kernels {

namespace {

using dnnl::memory;

struct GemmPrimitive {
  bool chosen = false;
  uint64_t scratchpad = 0;
  memory::desc a, b, c;
  dnnl::matmul::primitive_desc descriptor;
  std::unique_ptr<dnnl::matmul> compute; // made on the first run (a plan's sizing never runs it)
};

void describe(const Bf16GemmShape &shape, GemmPrimitive &primitive) {
  auto bf16 = memory::data_type::bf16;
  primitive.a =
      memory::desc({shape.m, shape.k}, bf16,
                   shape.transposeA ? memory::dims{1, shape.lda} : memory::dims{shape.lda, 1});
  primitive.b =
      memory::desc({shape.k, shape.n}, bf16,
                   shape.transposeB ? memory::dims{1, shape.ldb} : memory::dims{shape.ldb, 1});
  primitive.c = memory::desc({shape.m, shape.n}, shape.bf16Result ? bf16 : memory::data_type::f32,
                             memory::dims{shape.ldc, 1});
  dnnl::primitive_attr attributes;
  attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (shape.accumulate) {
    dnnl::post_ops sum;
    sum.append_sum(1.0f);
    attributes.set_post_ops(sum);
  }
  OneDnnThreadsScope scope(1);
  try {
    primitive.descriptor = dnnl::matmul::primitive_desc(
        dnnl::matmul::desc(primitive.a, primitive.b, primitive.c), attributes, oneDnnCpuEngine());
  } catch (const dnnl::error &) {
    return;
  }
  // The reference implementation is a plain loop, slower than widening to sgemm.
  if (std::string(primitive.descriptor.impl_info_str()).rfind("ref", 0) == 0)
    return;
  primitive.scratchpad = primitive.descriptor.scratchpad_desc().get_size();
  primitive.chosen = true;
}

std::mutex cacheMutex;

GemmPrimitive &lookup(const Bf16GemmShape &shape, bool runnable) {
  static std::map<std::vector<int64_t>, std::unique_ptr<GemmPrimitive>> cache;
  std::lock_guard<std::mutex> lock(cacheMutex);
  std::unique_ptr<GemmPrimitive> &slot = cache[shape.key()];
  if (!slot) {
    slot = std::make_unique<GemmPrimitive>();
    describe(shape, *slot);
  }
  if (runnable && slot->chosen && !slot->compute) {
    OneDnnThreadsScope scope(1);
    slot->compute = std::make_unique<dnnl::matmul>(slot->descriptor);
  }
  return *slot;
}

void run(const Bf16GemmShape &shape, const uint16_t *a, const uint16_t *b, void *c,
         uint8_t *scratchpad) {
  GemmPrimitive &primitive = lookup(shape, true);
  dnnl::engine &engine = oneDnnCpuEngine();
  thread_local dnnl::stream stream(engine);
  OneDnnThreadsScope scope(1);
  primitive.compute->execute(
      stream,
      {{DNNL_ARG_SRC, memory(primitive.a, engine, const_cast<uint16_t *>(a))},
       {DNNL_ARG_WEIGHTS, memory(primitive.b, engine, const_cast<uint16_t *>(b))},
       {DNNL_ARG_DST, memory(primitive.c, engine, c)},
       {DNNL_ARG_SCRATCHPAD, memory(primitive.descriptor.scratchpad_desc(), engine, scratchpad)}});
  stream.wait();
}

} // namespace

std::optional<uint64_t> bf16GemmScratchpad(const Bf16GemmShape &shape) {
  const GemmPrimitive &primitive = lookup(shape, false);
  if (!primitive.chosen)
    return std::nullopt;
  return primitive.scratchpad;
}

void bf16GemmSerial(const Bf16GemmShape &shape, const uint16_t *a, const uint16_t *b, float *c,
                    uint8_t *scratchpad) {
  assert(!shape.bf16Result && "an f32 result for an f32 shape");
  run(shape, a, b, c, scratchpad);
}

void bf16GemmSerial(const Bf16GemmShape &shape, const uint16_t *a, const uint16_t *b, uint16_t *c,
                    uint8_t *scratchpad) {
  assert(shape.bf16Result && "a bf16 result for a bf16 shape");
  run(shape, a, b, c, scratchpad);
}

} // namespace memc::kernels
