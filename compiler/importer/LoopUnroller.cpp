//===- LoopUnroller.cpp - ONNX Loop with a constant trip count, unrolled --===//
//
// ONNX Loop(M, cond, v_initial...) runs body(i, cond, v...) -> (cond', v'..., scan...) while
// i < M and cond. With M and every cond known at import, the loop is its body imported M times:
//
//   %v_final, %scans = Loop(%M = 3, %true, %v0) body(%i, %c, %v) { ...; return %c', %v', %s }
// becomes
//   body with %i = 0, %v = %v0  ->  %v1, %s0
//   body with %i = 1, %v = %v1  ->  %v2, %s1
//   body with %i = 2, %v = %v2  ->  %v3, %s2
//   %v_final = %v3;  %scans = concat(reshape(%s0, [1, ...]), ..., axis 0)
//
// The body reads outer-scope values by name (ONNX forbids a body to shadow them), so its nodes
// go through the same graph walk as top-level ones; only its own names are rebound per
// iteration. Gradients then flow through the unrolled ops with their own rules.
//
//===----------------------------------------------------------------------===//
#include "compiler/importer/LoopUnroller.h"

#include <algorithm>

using namespace mlir;

namespace memc {
namespace {

/// The names a body defines: bound afresh each iteration and forgotten after the loop.
std::vector<std::string> bodyLocalNames(const onnx::GraphProto &body) {
  std::vector<std::string> names;
  for (const onnx::ValueInfoProto &input : body.input())
    names.push_back(input.name());
  for (const onnx::NodeProto &node : body.node())
    for (const std::string &output : node.output())
      if (!output.empty())
        names.push_back(output);
  return names;
}

/// The Loop's location name, for naming body nodes per iteration in messages.
std::string loopName(NodeImporter &loop) {
  if (auto name = dyn_cast<NameLoc>(loop.location()))
    return name.getName().str();
  return loop.node.op_type();
}

Location bodyNodeLocation(NodeImporter &loop, const onnx::NodeProto &node, int64_t iteration) {
  std::string name = !node.name().empty()     ? node.name()
                     : node.output_size() > 0 ? node.op_type() + ":" + node.output(0)
                                              : node.op_type();
  return NameLoc::get(loop.builder.getStringAttr(loopName(loop) + " (iteration " +
                                                 std::to_string(iteration) + "): " + name));
}

/// A scalar that must be known at import (the trip count, a condition): its value, or an error
/// that says it is computed at run time.
FailureOr<int64_t> constantScalar(NodeImporter &loop, ImportedTensor *tensor,
                                  const std::string &name, StringRef what) {
  if (!tensor || !tensor->constant)
    return loop.error(what + " ('" + name +
                      "') must be a constant: it is computed at run time, and memc unrolls only "
                      "loops whose trip count and condition are known at compile time");
  if (tensor->constant->numElements() != 1)
    return loop.error(what + " ('" + name + "') must hold one element");
  return tensor->constant->intAt(0);
}

/// The scan output of every iteration stacked along a new axis 0.
FailureOr<Value> stackIterations(NodeImporter &loop, ArrayRef<Value> pieces) {
  SmallVector<Value> rows;
  for (Value piece : pieces) {
    auto type = cast<RankedTensorType>(piece.getType());
    SmallVector<int64_t> shape = {1};
    llvm::append_range(shape, type.getShape());
    FailureOr<Value> row =
        loop.createTyped<ReshapeOp>(RankedTensorType::get(shape, type.getElementType()), piece);
    if (failed(row))
      return failure();
    rows.push_back(*row);
  }
  if (rows.size() == 1)
    return rows.front();
  return loop.create1<ConcatOp>(rows, loop.named("axis", loop.builder.getI64IntegerAttr(0)));
}

} // namespace

std::string staticLoopRefusal(const onnx::NodeProto &loop) {
  if (loop.input_size() == 0 || loop.input(0).empty())
    return "no trip count: a while loop, and memc unrolls only loops whose trip count is a "
           "compile-time constant";
  int bodies = 0;
  for (const onnx::AttributeProto &attr : loop.attribute())
    if (attr.name() == "body")
      bodies += attr.type() == onnx::AttributeProto::GRAPH ? 1 : 2;
  if (bodies != 1)
    return "no body graph";
  return "";
}

LogicalResult unrollLoop(NodeImporter &loop, ImportScope &scope, BodyNodeImport importBodyNode) {
  const onnx::GraphProto &body = loop.attribute("body")->g();
  if (loop.numInputs() < 2)
    return loop.error("expects a trip count and a condition input (either may be empty)");
  size_t carried = loop.numInputs() - 2;
  if (static_cast<size_t>(body.input_size()) != carried + 2 ||
      static_cast<size_t>(body.output_size()) < carried + 1)
    return loop.error("its body takes " + std::to_string(body.input_size()) + " inputs and gives " +
                      std::to_string(body.output_size()) + " outputs, but the Loop carries " +
                      std::to_string(carried) + " values (the body needs " +
                      std::to_string(carried + 2) + " inputs and at least " +
                      std::to_string(carried + 1) + " outputs)");
  size_t scanned = body.output_size() - 1 - carried;
  if (loop.numOutputs() > carried + scanned)
    return loop.error("has " + std::to_string(loop.numOutputs()) + " outputs, but its body gives " +
                      std::to_string(carried) + " loop-carried and " + std::to_string(scanned) +
                      " scan outputs");
  if (body.initializer_size() > 0 || body.sparse_initializer_size() > 0)
    return loop.error("its body has initializers of its own, which memc does not read");

  FailureOr<int64_t> tripCount =
      constantScalar(loop, scope.lookup(loop.node.input(0)), loop.node.input(0), "the trip count");
  if (failed(tripCount))
    return failure();
  if (*tripCount > kMaxUnrolledIterations)
    return loop.error("trip count " + std::to_string(*tripCount) + " is more than the " +
                      std::to_string(kMaxUnrolledIterations) + " iterations memc unrolls");
  bool running = true;
  if (loop.hasInput(1)) {
    FailureOr<int64_t> condition =
        constantScalar(loop, scope.lookup(loop.node.input(1)), loop.node.input(1), "the condition");
    if (failed(condition))
      return failure();
    running = *condition != 0;
  }

  std::vector<ImportedTensor> state;
  for (size_t j = 0; j < carried; ++j) {
    ImportedTensor *initial = scope.lookup(loop.node.input(2 + j));
    if (!initial)
      return loop.error("loop-carried input '" + loop.node.input(2 + j) + "' is not defined");
    state.push_back(*initial);
  }
  std::vector<std::string> locals = bodyLocalNames(body);
  auto forgetLocals = [&] {
    for (const std::string &name : locals)
      scope.forget(name);
  };
  // A body's names shadow the enclosing graph's (a nested Loop's body may reuse its outer
  // body's "cond_out"): those bindings come back after the loop.
  std::vector<std::pair<std::string, ImportedTensor>> shadowed;
  for (const std::string &name : locals)
    if (ImportedTensor *outer = scope.lookup(name))
      shadowed.emplace_back(name, *outer);
  std::vector<SmallVector<Value>> scans(scanned);
  int64_t iteration = 0;
  for (; iteration < *tripCount && running; ++iteration) {
    std::string overBudget;
    if (!scope.budget().spendUnrolledNodes(std::max(body.node_size(), 1), overBudget))
      return loop.error(overBudget);
    forgetLocals();
    scope.define(body.input(0).name(),
                 {nullptr, HostTensor::ofInts(onnx::TensorProto::INT64, {}, {iteration})});
    scope.define(body.input(1).name(), {nullptr, HostTensor::ofInts(onnx::TensorProto::BOOL, {}, {1})});
    for (size_t j = 0; j < carried; ++j)
      scope.define(body.input(2 + j).name(), state[j]);
    for (const onnx::NodeProto &node : body.node())
      if (failed(importBodyNode(node, bodyNodeLocation(loop, node, iteration))))
        return failure();
    auto bodyOutput = [&](size_t index) { return scope.lookup(body.output(index).name()); };
    for (size_t index = 0; index < static_cast<size_t>(body.output_size()); ++index)
      if (!bodyOutput(index))
        return loop.error("body output '" + body.output(index).name() +
                          "' is not produced by any node of the body");
    FailureOr<int64_t> condition =
        constantScalar(loop, bodyOutput(0), body.output(0).name(), "the condition its body computes");
    if (failed(condition))
      return failure();
    running = *condition != 0;
    for (size_t j = 0; j < carried; ++j)
      state[j] = *bodyOutput(1 + j);
    for (size_t k = 0; k < scanned; ++k) {
      FailureOr<Value> piece = scope.materialize(*bodyOutput(1 + carried + k), std::nullopt,
                                                 loop.location());
      if (failed(piece))
        return failure();
      scans[k].push_back(*piece);
    }
  }
  forgetLocals();
  for (auto &[name, tensor] : shadowed)
    scope.define(name, std::move(tensor));

  for (size_t j = 0; j < carried && j < loop.numOutputs(); ++j)
    if (!loop.node.output(j).empty())
      scope.define(loop.node.output(j), state[j]);
  for (size_t k = 0; k < scanned && carried + k < loop.numOutputs(); ++k) {
    if (!loop.isOutputUsed(carried + k))
      continue;
    if (iteration == 0)
      return loop.error("runs no iteration, so its scan output '" + loop.node.output(carried + k) +
                        "' would be empty, which memc's static shapes cannot type");
    FailureOr<Value> stacked = stackIterations(loop, scans[k]);
    if (failed(stacked))
      return failure();
    loop.setOutput(carried + k, *stacked);
  }
  return success();
}

} // namespace memc
