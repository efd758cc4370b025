//===- BinaryChecks.cpp - the checks of broadcasting elementwise ops ------===//
//
// add sub mul div pow max min prelu, equal less greater greater_equal less_equal, where.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"

namespace memc::kernels {
namespace {

/// Operands broadcast to the output's shape exactly.
bool checkBroadcastShapes(const KernelCall &call, std::string &error) {
  std::vector<Shape> shapes;
  for (const TensorView &input : call.inputs)
    shapes.push_back(input.shape);
  Shape expected;
  return broadcastShapes(shapes, expected, error) &&
         checkShape(call.outputs[0], expected, "output", error);
}

bool checkArithmetic(const KernelCall &call, std::string &error) {
  return checkCall(call, 2, 2, 1, error) &&
         checkDType(call.inputs[0], kNumericTypes, "lhs", error) &&
         checkSameDType(call.inputs[1], call.inputs[0], "rhs", "lhs", error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "output", "lhs", error) &&
         checkBroadcastShapes(call, error);
}

bool checkComparison(const KernelCall &call, std::string &error) {
  return checkCall(call, 2, 2, 1, error) &&
         checkSameDType(call.inputs[1], call.inputs[0], "rhs", "lhs", error) &&
         checkDType(call.outputs[0], kBoolType, "output", error) &&
         checkBroadcastShapes(call, error);
}

bool checkWhere(const KernelCall &call, std::string &error) {
  return checkCall(call, 3, 3, 1, error) &&
         checkDType(call.inputs[0], kBoolType, "condition", error) &&
         checkSameDType(call.inputs[2], call.inputs[1], "on_false", "on_true", error) &&
         checkSameDType(call.outputs[0], call.inputs[1], "output", "on_true", error) &&
         checkBroadcastShapes(call, error);
}

} // namespace

void addBinaryChecks(OpChecks &table) {
  table["add"] = &checkArithmetic;
  table["sub"] = &checkArithmetic;
  table["mul"] = &checkArithmetic;
  table["div"] = &checkArithmetic;
  table["pow"] = &checkArithmetic;
  table["max"] = &checkArithmetic;
  table["min"] = &checkArithmetic;
  table["prelu"] = &checkArithmetic;
  table["equal"] = &checkComparison;
  table["less"] = &checkComparison;
  table["greater"] = &checkComparison;
  table["greater_equal"] = &checkComparison;
  table["less_equal"] = &checkComparison;
  table["where"] = &checkWhere;
}

} // namespace memc::kernels
