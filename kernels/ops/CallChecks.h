//===- CallChecks.h - building blocks of the ops' checks ---------*- C++ -*-===//
//
// Each helper returns false with a message in `error` when the call fails its condition, so a
// check reads as a chain of `if (!...) return false;`. The checks are the ops' (OpContracts.h),
// shared by every device's kernels.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_OPS_CALLCHECKS_H
#define MEMC_KERNELS_OPS_CALLCHECKS_H

#include "kernels/Kernel.h"
#include "kernels/ShapeRules.h"
#include "kernels/ops/TypeClasses.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace memc::kernels {

/// Largest M, N and K of one matrix product (and leading dimension): BLAS libraries (OpenBLAS,
/// cuBLAS) take 32-bit dimensions, so ops that become products check their sizes against it.
constexpr int64_t kMaxMatrixDimension = std::numeric_limits<int32_t>::max();

/// Input count in [minInputs, maxInputs], the output count, and every tensor well formed:
/// a known dtype, computed or one of `storageTypes` (storage-only types the op moves as bytes:
/// max_pool's u8 argmax), non-negative dimensions, at most kMaxElements elements.
bool checkCall(const KernelCall &call, size_t minInputs, size_t maxInputs, size_t outputs,
               std::string &error, DTypeSet storageTypes = {});

bool checkDType(const TensorView &tensor, DTypeSet allowed, const std::string &role,
                std::string &error);
bool checkSameDType(const TensorView &tensor, const TensorView &reference, const std::string &role,
                    const std::string &referenceRole, std::string &error);
bool checkShape(const TensorView &tensor, const Shape &expected, const std::string &role,
                std::string &error);
bool checkRankAtLeast(const TensorView &tensor, int64_t rank, const std::string &role,
                      std::string &error);

/// Required attributes of a given kind. Booleans are integers 0 or 1.
bool requireInt(const Attributes &attributes, const std::string &name, int64_t &value,
                std::string &error);
bool requireBool(const Attributes &attributes, const std::string &name, bool &value,
                 std::string &error);
bool requireFloat(const Attributes &attributes, const std::string &name, double &value,
                  std::string &error);
bool requireInts(const Attributes &attributes, const std::string &name,
                 std::vector<int64_t> &values, std::string &error);
/// `axis` names a dimension of `tensor` (0 <= axis < rank).
bool checkAxisInRange(int64_t axis, const TensorView &tensor, std::string &error);
/// GELU's optional `approximate`: "none" (the default) or "tanh".
bool checkGeluApproximate(const Attributes &attributes, std::string &error);
/// The normalisations' `epsilon`: present, finite and non-negative.
bool checkEpsilon(const Attributes &attributes, std::string &error);
/// An optional attribute: absent is fine (`present` false), present with another kind is not.
bool optionalFloat(const Attributes &attributes, const std::string &name, bool &present,
                   double &value, std::string &error);
bool optionalString(const Attributes &attributes, const std::string &name, std::string &value,
                    std::string &error);

/// Where flash_attention's optional operands are: from inputs[maskIndex] on, the additive mask
/// (a float tensor) if the op has one, then the dropout salt (an i64 tensor) if it has one; the
/// salt's type tells the two apart when only one is there.
struct AttentionOptionals {
  std::optional<size_t> mask, salt;
};
AttentionOptionals attentionOptionals(const KernelCall &call, size_t maskIndex);

/// flash_attention's operands at inputs[first, first + 3) (query, key, value of one float type)
/// and, when the call has them, the additive mask (any float type) and the dropout salt (a
/// scalar i64) from inputs[maskIndex] on, their shapes against attentionShapes (which gives
/// `output` and `logsumexp`), head dimensions a matrix product takes, and the attributes
/// `causal`, `scale` (finite, positive) and, if present, `dropout_ratio` (in [0, 1)) and `seed`.
bool checkAttentionOperands(const KernelCall &call, size_t first, size_t maskIndex, Shape &output,
                            Shape &logsumexp, std::string &error);

/// A tensor's type for messages: "f32[2,3]".
std::string describe(const TensorView &tensor);

} // namespace memc::kernels

#endif // MEMC_KERNELS_OPS_CALLCHECKS_H
