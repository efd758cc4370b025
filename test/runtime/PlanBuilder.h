//===- PlanBuilder.h - building plans by hand in tests -----------*- C++ -*-===//
#ifndef MEMC_TEST_RUNTIME_PLANBUILDER_H
#define MEMC_TEST_RUNTIME_PLANBUILDER_H

#include "runtime/plan/Plan.pb.h"
#include "runtime/plan/PlanFormat.h"

#include <string>
#include <vector>

namespace memc::testing {

/// A Plan with helpers that fill in sizes; tests then break one thing at a time.
class PlanBuilder {
public:
  PlanBuilder() {
    plan.set_format_version(plan::kPlanFormatVersion);
    plan.set_alignment(plan::kPlanAlignment);
    plan.set_target("cpu");
  }

  uint32_t buffer(std::vector<int64_t> shape, plan::Region region, uint64_t offset,
                  const std::string &name = "", plan::DType dtype = plan::F32) {
    plan::Buffer *buffer = plan.add_buffers();
    uint64_t count = 1;
    for (int64_t dim : shape) {
      buffer->add_shape(dim);
      count *= static_cast<uint64_t>(dim);
    }
    static const uint64_t sizes[] = {4, 2, 2, 8, 4, 1};
    buffer->set_dtype(dtype);
    buffer->set_region(region);
    buffer->set_offset(offset);
    buffer->set_size_bytes(count * sizes[dtype]);
    buffer->set_name(name);
    return static_cast<uint32_t>(plan.buffers_size() - 1);
  }

  /// A view of buffer `of` (a reshape): same region, offset and dtype, shape `shape`.
  uint32_t view(std::vector<int64_t> shape, uint32_t of, const std::string &name) {
    const plan::Buffer target = plan.buffers(of);
    uint32_t index = buffer(std::move(shape), target.region(), target.offset(), name,
                            target.dtype());
    plan.mutable_buffers(index)->set_alias_of(of);
    return index;
  }

  plan::Step &step(const std::string &kernel, std::vector<uint32_t> inputs,
                   std::vector<uint32_t> outputs, bool inPlace = false) {
    plan::Step *step = plan.add_steps();
    step->set_kernel(kernel);
    for (uint32_t input : inputs)
      step->add_inputs(input);
    for (uint32_t output : outputs)
      step->add_outputs(output);
    step->set_in_place(inPlace);
    step->set_location("node" + std::to_string(plan.steps_size() - 1));
    return *step;
  }

  static void setFloat(plan::Step &step, const std::string &name, double value) {
    plan::Attribute *attribute = step.add_attributes();
    attribute->set_name(name);
    attribute->set_f(value);
  }

  plan::Binding &input(const std::string &name, uint32_t buffer) {
    return bind(plan.add_inputs(), name, buffer);
  }
  plan::Binding &output(const std::string &name, uint32_t buffer) {
    return bind(plan.add_outputs(), name, buffer);
  }
  plan::Binding &parameter(const std::string &name, uint32_t buffer,
                           const std::string &source = "") {
    plan::Binding &binding = bind(plan.add_parameters(), name, buffer);
    binding.set_kind(plan::KIND_PARAMETER);
    binding.set_source(source);
    return binding;
  }

  std::string bytes() const { return plan.SerializeAsString(); }

  plan::Plan plan;

private:
  static plan::Binding &bind(plan::Binding *binding, const std::string &name, uint32_t buffer) {
    binding->set_name(name);
    binding->set_buffer(buffer);
    return *binding;
  }
};

/// The plan most tests use: y = add(scale(relu(add(x, w)), 2), c) on f32[4], with
///  - x (input) and w (parameter, loaded from the weights tensor "w.source"),
///  - relu in place over add's output,
///  - scale's output reusing x's arena bytes and the last add's output reusing relu's,
///  - c a constant [1, 2, 3, 4].
/// Arena: 512 bytes planned; live values reach byte 272 (high-water) and 32 bytes at most are
/// live at once (peak).
inline PlanBuilder referencePlan() {
  PlanBuilder b;
  b.plan.set_model("reference");
  b.plan.set_arena_bytes(512);
  b.plan.set_persistent_bytes(256);
  b.plan.set_arena_lower_bound_bytes(32);
  float constants[] = {1, 2, 3, 4};
  b.plan.set_constant_data(std::string(reinterpret_cast<char *>(constants), sizeof(constants)));
  uint32_t x = b.buffer({4}, plan::ARENA, 0, "x");
  uint32_t w = b.buffer({4}, plan::PERSISTENT, 0, "w");
  uint32_t t = b.buffer({4}, plan::ARENA, 256, "t");
  uint32_t u = b.buffer({4}, plan::ARENA, 256, "u");
  uint32_t v = b.buffer({4}, plan::ARENA, 0, "v");
  uint32_t c = b.buffer({4}, plan::CONSTANT, 0, "c");
  uint32_t y = b.buffer({4}, plan::ARENA, 256, "y");
  b.step("add", {x, w}, {t});
  b.step("relu", {t}, {u}, /*inPlace=*/true);
  PlanBuilder::setFloat(b.step("scale", {u}, {v}), "factor", 2.0);
  b.step("add", {v, c}, {y});
  b.input("x", x);
  b.parameter("w", w, "w.source");
  b.output("y", y);
  return b;
}

/// The plan the runner tests run with the runner's real CPU kernels (add and relu, which every
/// CPU backend has): y = relu(x + w) on f32[2, 3], relu in place; w is the weights tensor "w".
inline PlanBuilder addReluPlan() {
  PlanBuilder b;
  b.plan.set_model("tiny");
  b.plan.set_arena_bytes(512);
  b.plan.set_persistent_bytes(256);
  b.plan.set_arena_lower_bound_bytes(48);
  uint32_t x = b.buffer({2, 3}, plan::ARENA, 0, "x");
  uint32_t w = b.buffer({2, 3}, plan::PERSISTENT, 0, "w");
  uint32_t t = b.buffer({2, 3}, plan::ARENA, 256, "t");
  uint32_t y = b.buffer({2, 3}, plan::ARENA, 256, "y");
  b.step("add", {x, w}, {t});
  b.step("relu", {t}, {y}, /*inPlace=*/true);
  b.input("x", x);
  b.parameter("w", w);
  b.output("y", y);
  return b;
}

/// A plan with a view (a reshape, as the compiler plans it: no step): t = relu(x) on f32[2, 2],
/// y = add(view of t as f32[4], w), and the view is also the output "t_flat", which keeps t
/// alive to the end. y reuses x's bytes.
inline PlanBuilder viewPlan() {
  PlanBuilder b;
  b.plan.set_model("view");
  b.plan.set_arena_bytes(512);
  b.plan.set_persistent_bytes(256);
  b.plan.set_arena_lower_bound_bytes(32);
  uint32_t x = b.buffer({2, 2}, plan::ARENA, 0, "x");
  uint32_t t = b.buffer({2, 2}, plan::ARENA, 256, "t");
  uint32_t flat = b.view({4}, t, "t_flat");
  uint32_t w = b.buffer({4}, plan::PERSISTENT, 0, "w");
  uint32_t y = b.buffer({4}, plan::ARENA, 0, "y");
  b.step("relu", {x}, {t});
  b.step("add", {flat, w}, {y});
  b.input("x", x);
  b.parameter("w", w);
  b.output("y", y);
  b.output("t_flat", flat);
  return b;
}

} // namespace memc::testing

#endif // MEMC_TEST_RUNTIME_PLANBUILDER_H
