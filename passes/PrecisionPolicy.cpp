//===- PrecisionPolicy.cpp - the mixed-precision policy table -------------===//
#include "passes/PrecisionPolicy.h"

#include "llvm/ADT/StringRef.h"

namespace memc {
namespace {

struct PolicyRow {
  llvm::StringLiteral op;
  ComputeType type;
};

// Forward ops only: the pass runs before autodiff, and each gradient op inherits the types of
// the forward values it reads, so a 16-bit matmul's gradients are 16-bit matmuls. (add_layer_norm
// has no row: memc-fuse-add-layer-norm builds it after this pass, from ops of one type.)
constexpr PolicyRow kPrecisionPolicy[] = {
    {"memc.matmul", ComputeType::Low},
    {"memc.matmul_nf4", ComputeType::LowActivations},
    {"memc.conv", ComputeType::Low},
    {"memc.softmax", ComputeType::StoresLow},
    {"memc.log_softmax", ComputeType::Full},
    {"memc.layer_norm", ComputeType::StoresLow},
    {"memc.rms_norm", ComputeType::Full},
    {"memc.batch_norm", ComputeType::KeepsData},
    {"memc.bias_gelu", ComputeType::KeepsData},
    {"memc.exp", ComputeType::Full},
    {"memc.log", ComputeType::Full},
    {"memc.pow", ComputeType::Full},
    {"memc.sqrt", ComputeType::Full},
    {"memc.reciprocal", ComputeType::Full},
    {"memc.reduce_sum", ComputeType::Full},
    {"memc.reduce_mean", ComputeType::Full},
    {"memc.cross_entropy", ComputeType::Full},
};

} // namespace

ComputeType computeTypeOf(mlir::Operation *op) {
  llvm::StringRef name = op->getName().getStringRef();
  for (const PolicyRow &row : kPrecisionPolicy)
    if (row.op == name)
      return row.type;
  return ComputeType::Widest;
}

} // namespace memc
