//===- MatMulChecks.cpp - the checks of matmul ----------------------------===//
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"

namespace memc::kernels {
namespace {

bool checkMatMul(const KernelCall &call, std::string &error) {
  Shape expected;
  if (!checkCall(call, 2, 2, 1, error) ||
      !checkDType(call.inputs[0], kNumericTypes, "lhs", error) ||
      !checkSameDType(call.inputs[1], call.inputs[0], "rhs", "lhs", error) ||
      !checkSameDType(call.outputs[0], call.inputs[0], "output", "lhs", error) ||
      !matmulShape(call.inputs[0].shape, call.inputs[1].shape, expected, error) ||
      !checkShape(call.outputs[0], expected, "output", error))
    return false;
  // M, K and N after numpy's 1-D promotion (a vector lhs is one row, a vector rhs one column).
  const Shape &lhs = call.inputs[0].shape, &rhs = call.inputs[1].shape;
  int64_t m = lhs.size() == 1 ? 1 : lhs[lhs.size() - 2], k = lhs.back();
  int64_t n = rhs.size() == 1 ? 1 : rhs.back();
  if (m > kMaxMatrixDimension || n > kMaxMatrixDimension || k > kMaxMatrixDimension) {
    error = "matmul dimensions exceed 2^31 - 1";
    return false;
  }
  return true;
}

} // namespace

void addMatMulChecks(OpChecks &table) { table["matmul"] = &checkMatMul; }

} // namespace memc::kernels
