//===- FuseLoss.cpp - the LM head and cross_entropy to linear_cross_entropy ===//
//
// A language model's last product and its loss, as the training step writes them:
//
//   %logits = memc.matmul %h, %wte {transpose_rhs} : (tensor<2x16x64xf32>, tensor<1000x64xf32>)
//                                                    -> tensor<2x16x1000xf32>
//   %loss = memc.cross_entropy %logits, %labels {ignore_index = -100 : i64}
//
// become one op that never forms the [2, 16, 1000] logits (nor, in the backward, their
// gradient):
//
//   %loss, %lse = memc.linear_cross_entropy %h, %wte, %labels
//                     {ignore_index = -100 : i64, transpose_weight}
//
// A bias [V] added to the product (nn.Linear(bias=True), Gemm's C) becomes the op's bias. After
// it, reshapes that keep the class axis (an exporter's view(-1, V)) and casts between float
// types (the precision policy's 16-bit logits widened to f32) are absorbed; the hidden states are reshaped to the labels' rows. Logits anything else
// reads (another output, an argmax) stay: fusing would compute them twice.
//
//===----------------------------------------------------------------------===//
#include "passes/LossFusion.h"
#include "dialects/memc/ElementTypes.h"
#include "passes/BiasAddMatching.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace memc {
#define GEN_PASS_DEF_FUSELOSS
#include "passes/Passes.h.inc"
} // namespace memc

using namespace mlir;
using namespace memc;

namespace {

/// What the rewrite needs: the head product, its bias and the ops between them and the loss.
struct HeadMatch {
  MatMulOp product;
  AddOp biasAdd; // null without a bias
  Value bias;
  SmallVector<Operation *> between; // from the loss back to the product (or the bias's add)
};

std::string describeUser(Operation *user) {
  if (isa<func::ReturnOp>(user))
    return "the logits are also an output of the function";
  return "the logits are also read by " + user->getName().getStringRef().str();
}

/// The value's only reader must be `reader`; else why not.
std::string soleReader(Value value, Operation *reader) {
  for (Operation *user : value.getUsers())
    if (user != reader)
      return describeUser(user);
  return "";
}

/// `add` as the head product plus a [V] bias of its type, or why not.
std::string matchBias(AddOp add, HeadMatch &match) {
  std::optional<BiasAdd> biasAdd = matchBiasAdd(add);
  auto matmul = biasAdd ? biasAdd->data.getDefiningOp<MatMulOp>() : MatMulOp();
  if (!matmul)
    return "the logits come from a memc.add that is not the head product plus a [V] bias";
  if (std::string reason = soleReader(biasAdd->data, add); !reason.empty())
    return reason;
  match.product = matmul;
  match.biasAdd = add;
  match.bias = biasAdd->bias;
  return "";
}

/// Matches the head product feeding `loss`, or says why there is none to fuse.
std::string matchHead(CrossEntropyOp loss, HeadMatch &match) {
  Value logits = loss.getLogits();
  int64_t classes = cast<RankedTensorType>(logits.getType()).getShape().back();
  Operation *reader = loss;
  while (true) {
    if (std::string reason = soleReader(logits, reader); !reason.empty())
      return reason;
    Operation *def = logits.getDefiningOp();
    if (!def)
      return "the logits are an argument of the function, not a product";
    if (auto product = dyn_cast<MatMulOp>(def)) {
      match.product = product;
      break;
    }
    if (auto add = dyn_cast<AddOp>(def)) {
      if (std::string reason = matchBias(add, match); !reason.empty())
        return reason;
      break;
    }
    auto input = def->getNumOperands() == 1
                     ? dyn_cast<RankedTensorType>(def->getOperand(0).getType())
                     : RankedTensorType();
    bool keepsClasses = isa<ReshapeOp>(def) && input && input.getRank() >= 1 &&
                        input.getShape().back() == classes;
    bool widens = isa<CastOp>(def) && input && isa<FloatType>(input.getElementType());
    if (!keepsClasses && !widens)
      return "the logits come from " + def->getName().getStringRef().str() +
             ", not a product by the head weight";
    match.between.push_back(def);
    reader = def;
    logits = def->getOperand(0);
  }
  MatMulOp product = match.product;
  auto hidden = cast<RankedTensorType>(product.getLhs().getType());
  auto weight = cast<RankedTensorType>(product.getRhs().getType());
  if (product.getTransposeLhs())
    return "the head product reads its hidden states transposed";
  if (weight.getRank() != 2 || hidden.getRank() < 1)
    return "the head product's weight is not a matrix";
  if (!isa<FloatType>(hidden.getElementType()))
    return "the head product is not of floats";
  return "";
}

/// Builds linear_cross_entropy for `match` in place of `loss`; returns its loss.
Value rewriteHead(CrossEntropyOp loss, HeadMatch &match) {
  OpBuilder b(loss);
  MatMulOp product = match.product;
  Value hidden = product.getLhs();
  auto hiddenType = cast<RankedTensorType>(hidden.getType());
  SmallVector<int64_t> rows(loss.getLabels().getType().getShape());
  rows.push_back(hiddenType.getShape().back());
  if (ArrayRef<int64_t>(rows) != hiddenType.getShape())
    hidden = b.create<ReshapeOp>(product.getLoc(), hiddenType.clone(rows), hidden);
  auto fused = b.create<LinearCrossEntropyOp>(loss.getLoc(), hidden, product.getRhs(),
                                              loss.getLabels(), match.bias,
                                              loss.getIgnoreIndexAttr(),
                                              product.getTransposeRhsAttr());
  loss.getLoss().replaceAllUsesWith(fused.getLoss());
  loss.erase();
  for (Operation *op : match.between)
    op->erase();
  if (match.biasAdd)
    match.biasAdd.erase();
  product.erase();
  return fused.getLoss();
}

/// The logits tensors (the product's, the biased ones and any cast's) the fusion removes.
int64_t logitsBytes(HeadMatch &match) {
  uint64_t bytes = storageBytes(match.product.getResult().getType());
  if (match.biasAdd)
    bytes += storageBytes(match.biasAdd.getType());
  for (Operation *op : match.between)
    if (isa<CastOp>(op))
      bytes += storageBytes(op->getResult(0).getType());
  return static_cast<int64_t>(bytes);
}

struct FuseLossPass : memc::impl::FuseLossBase<FuseLossPass> {
  using FuseLossBase::FuseLossBase;

  void runOnOperation() override {
    LossFusionSummary summary = fuseLoss(getOperation());
    recordLossFusion(getOperation(), summary);
    if (!remarkUnfused)
      return;
    for (const UnfusedLoss &unfused : summary.unfused)
      emitRemark(getOperation().getLoc(), "loss not fused at ")
          << unfused.node << ": " << unfused.reason;
  }
};

} // namespace

Value memc::fuseHeadIntoLoss(CrossEntropyOp loss, LossFusionSummary &summary) {
  HeadMatch match;
  if (std::string reason = matchHead(loss, match); !reason.empty()) {
    std::string node = locationName(loss.getLoc());
    summary.unfused.push_back({node.empty() ? "cross_entropy" : node, reason});
    return loss.getLoss();
  }
  summary.logitsBytesAvoided += logitsBytes(match);
  ++summary.fused;
  return rewriteHead(loss, match);
}

LossFusionSummary memc::fuseLoss(func::FuncOp function) {
  LossFusionSummary summary;
  SmallVector<CrossEntropyOp> losses;
  function.walk([&](CrossEntropyOp loss) { losses.push_back(loss); });
  for (CrossEntropyOp loss : losses)
    fuseHeadIntoLoss(loss, summary);
  return summary;
}

void memc::recordLossFusion(func::FuncOp function, const LossFusionSummary &summary) {
  Builder b(function.getContext());
  function->setAttr("memc.loss_fused", b.getI64IntegerAttr(summary.fused));
  function->setAttr("memc.loss_logits_bytes_avoided",
                    b.getI64IntegerAttr(summary.logitsBytesAvoided));
  function->setAttr("memc.loss_unfused", unfusedCandidatesAttr(b, summary.unfused));
}

std::optional<LossFusionSummary> memc::readLossFusion(func::FuncOp function) {
  auto fused = function->getAttrOfType<IntegerAttr>("memc.loss_fused");
  auto avoided = function->getAttrOfType<IntegerAttr>("memc.loss_logits_bytes_avoided");
  auto unfused = function->getAttrOfType<ArrayAttr>("memc.loss_unfused");
  if (!fused || !avoided || !unfused)
    return std::nullopt;
  std::optional<std::vector<UnfusedLoss>> candidates = readUnfusedCandidates(unfused);
  if (!candidates)
    return std::nullopt;
  LossFusionSummary summary;
  summary.fused = fused.getInt();
  summary.logitsBytesAvoided = avoided.getInt();
  summary.unfused = std::move(*candidates);
  return summary;
}
