//===- MatMulChecks.cpp - the checks of matmul ----------------------------===//
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"

#include <algorithm>

namespace memc::kernels {
namespace {

/// An optional flag: absent is false, present must be 0 or 1.
bool optionalFlag(const Attributes &attributes, const std::string &name, bool &value,
                  std::string &error) {
  value = false;
  return !attributes.has(name) || requireBool(attributes, name, value, error);
}

bool checkMatMul(const KernelCall &call, std::string &error) {
  Shape expected;
  MatMulTransposes transposes;
  const Attributes &attributes = attributesOf(call);
  if (!checkCall(call, 2, 2, 1, error) ||
      !checkDType(call.inputs[0], kNumericTypes, "lhs", error) ||
      !checkSameDType(call.inputs[1], call.inputs[0], "rhs", "lhs", error) ||
      !checkSameDType(call.outputs[0], call.inputs[0], "output", "lhs", error) ||
      !optionalFlag(attributes, "transpose_lhs", transposes.lhs, error) ||
      !optionalFlag(attributes, "transpose_rhs", transposes.rhs, error) ||
      !matmulShape(call.inputs[0].shape, call.inputs[1].shape, expected, error, transposes) ||
      !checkShape(call.outputs[0], expected, "output", error))
    return false;
  // An operand's last two dims (its one dim if a vector) are its M, K or N, whichever is
  // transposed.
  for (const Shape *shape : {&call.inputs[0].shape, &call.inputs[1].shape})
    for (size_t dim = shape->size() - std::min<size_t>(2, shape->size()); dim < shape->size();
         ++dim)
      if ((*shape)[dim] > kMaxMatrixDimension) {
        error = "matmul dimensions exceed 2^31 - 1";
        return false;
      }
  return true;
}

} // namespace

void addMatMulChecks(OpChecks &table) { table["matmul"] = &checkMatMul; }

} // namespace memc::kernels
