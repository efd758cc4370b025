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

/// Inputs: lhs (float), the packed NF4 weight (u8), its absmax (f32), or the absmax's codes
/// (u8), scales (f32) and offset (f32 scalar). Attributes: weight_shape, transpose_rhs.
bool checkMatMulNf4(const KernelCall &call, std::string &error) {
  if (!checkCall(call, 3, 5, 1, error, {DType::U8}))
    return false;
  if (call.inputs.size() == 4) {
    error = "matmul_nf4 takes 3 or 5 inputs";
    return false;
  }
  const Attributes &attributes = attributesOf(call);
  std::vector<int64_t> weightShape;
  bool transposeRhs = false;
  std::vector<Shape> absmax;
  for (size_t i = 2; i < call.inputs.size(); ++i)
    absmax.push_back(call.inputs[i].shape);
  const bool doubled = call.inputs.size() == 5;
  Shape expected;
  return checkDType(call.inputs[0], kFloatTypes, "lhs", error) &&
         checkDType(call.inputs[1], {DType::U8}, "weight", error) &&
         checkDType(call.inputs[2], {doubled ? DType::U8 : DType::F32}, "absmax", error) &&
         (!doubled || (checkDType(call.inputs[3], {DType::F32}, "absmax scales", error) &&
                       checkDType(call.inputs[4], {DType::F32}, "absmax offset", error))) &&
         requireInts(attributes, "weight_shape", weightShape, error) &&
         optionalFlag(attributes, "transpose_rhs", transposeRhs, error) &&
         matmulNf4Shape(call.inputs[0].shape, weightShape, transposeRhs, call.inputs[1].shape,
                        absmax, expected, error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "output", "lhs", error) &&
         checkShape(call.outputs[0], expected, "output", error);
}

} // namespace

void addMatMulChecks(OpChecks &table) {
  table["matmul"] = &checkMatMul;
  table["matmul_nf4"] = &checkMatMulNf4;
}

} // namespace memc::kernels
