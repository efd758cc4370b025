//===- FuseAttention.cpp - attention subgraphs to memc.flash_attention ----===//
//
// Before (GPT-2 as torch.onnx.export writes it, after import):
//   %kt = memc.transpose %k4 {perm = [0, 2, 3, 1]}     %s = memc.matmul %q, %kt
//   %s1 = memc.mul %s, %c0_35                            %c = memc.equal %bias, %c0
//   %s2 = memc.where %c, %cneginf, %s1                   %p = memc.softmax %s2 {axis = 3}
//   %o = memc.matmul %p, %v
// After:
//   %k = memc.transpose %k4 {perm = [0, 2, 1, 3]}       %m = memc.where %c, %cneginf, %c0
//   %o, %lse = memc.flash_attention %q, %k, %v, %m {causal = false, scale = 0.35}
//
// Each softmax whose input comes from a matmul is an attention candidate. From the softmax the
// matcher walks back to that matmul through scalings by constants (Mul, Div: the scale), one
// additive mask (Add) or one masked_fill (Where with a constant of -inf or below -1e30, which
// becomes the additive mask where(cond, fill, 0); Llama's Trilu of -inf is `causal` instead,
// whose tiles above the diagonal the kernels skip); scalings of q or k^T by constants join the
// scale. k^T's transpose is absorbed into k's; grouped-query repeats of k and v (Expand +
// Reshape) are dropped, the op reading each kv head for its group; rank-3 attention
// ([B*H, T, D], nn.MultiheadAttention) is reshaped to one batch. A candidate that does not fit is
// left as it is, with the reason, for the report.
//
//===----------------------------------------------------------------------===//
#include "passes/AttentionFusion.h"
#include "passes/Passes.h"
#include "passes/ScalarConstants.h"

#include "dialects/memc/ShapeInference.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace memc {
#define GEN_PASS_DEF_FUSEATTENTION
#include "passes/Passes.h.inc"
} // namespace memc

using namespace mlir;
using namespace memc;

namespace {

RankedTensorType tensorType(Value value) { return cast<RankedTensorType>(value.getType()); }

/// What the matcher found of one attention.
struct AttentionMatch {
  MatMulOp scores, output;
  /// keyT is k^T, or k itself when the scores read it with the matmul's transpose_rhs flag.
  Value query, keyT, value;
  bool keyReadTransposed = false;
  double scale = 1.0;
  bool causal = false; // the mask was the causal one: the op's attribute replaces it
  Value mask;          // an additive mask, as found
  WhereOp maskedFill;  // or a masked_fill, whose condition and fill make one
  bool fillIsTrueBranch = true;
  SmallVector<Operation *> chain; // the ops the fused op replaces, softmax to scores
};

/// A masked_fill value: -inf, or a number so negative that exp of it is 0 either way.
bool isHidingFill(Value value) {
  std::optional<double> fill = splatScalar(value);
  return fill && *fill <= -1e30;
}

/// The scalar factor of `op` (c * x, x * c, x / c) and x, or nothing.
std::optional<std::pair<double, Value>> scalarFactor(Operation *op) {
  if (auto mul = dyn_cast_or_null<MulOp>(op)) {
    if (std::optional<double> c = splatScalar(mul.getRhs()))
      return std::make_pair(*c, mul.getLhs());
    if (std::optional<double> c = splatScalar(mul.getLhs()))
      return std::make_pair(*c, mul.getRhs());
  }
  if (auto div = dyn_cast_or_null<DivOp>(op))
    if (std::optional<double> c = splatScalar(div.getRhs()))
      return std::make_pair(1.0 / *c, div.getLhs());
  return std::nullopt;
}

/// Whether `value` comes from a matmul through the ops the matcher walks.
bool reachesProduct(Value value) {
  for (int depth = 0; depth < 8; ++depth) {
    Operation *op = value.getDefiningOp();
    if (isa_and_nonnull<MatMulOp>(op))
      return true;
    if (std::optional<std::pair<double, Value>> factor = scalarFactor(op))
      value = factor->second;
    else if (auto add = dyn_cast_or_null<AddOp>(op))
      value = reachesProduct(add.getLhs()) ? add.getLhs() : add.getRhs();
    else if (auto where = dyn_cast_or_null<WhereOp>(op))
      value = reachesProduct(where.getOnTrue()) ? where.getOnTrue() : where.getOnFalse();
    else
      return false;
  }
  return false;
}

/// Peels scalings by constants off `value` into `scale`, where nothing else uses them.
Value peelScale(Value value, double &scale, SmallVectorImpl<Operation *> &chain) {
  while (value.hasOneUse()) {
    std::optional<std::pair<double, Value>> factor = scalarFactor(value.getDefiningOp());
    if (!factor)
      break;
    chain.push_back(value.getDefiningOp());
    scale *= factor->first;
    value = factor->second;
  }
  return value;
}

/// Walks from the softmax's input back to the scores product; a reason when it cannot.
std::string matchScores(Value value, AttentionMatch &match) {
  bool scaled = false; // a scaling nearer the softmax than the mask would scale the mask too
  while (true) {
    if (!value.hasOneUse())
      return "the scores are used by more than the softmax";
    Operation *op = value.getDefiningOp();
    match.chain.push_back(op);
    if (auto product = dyn_cast<MatMulOp>(op)) {
      match.scores = product;
      return "";
    }
    if (std::optional<std::pair<double, Value>> factor = scalarFactor(op)) {
      scaled = true;
      match.scale *= factor->first;
      value = factor->second;
    } else if (auto add = dyn_cast<AddOp>(op)) {
      bool lhs = reachesProduct(add.getLhs()), rhs = reachesProduct(add.getRhs());
      if (lhs == rhs)
        return "an addition to the scores that is not one mask";
      if (match.mask || match.maskedFill)
        return "more than one mask";
      if (scaled)
        return "the mask is scaled with the scores";
      match.mask = lhs ? add.getRhs() : add.getLhs();
      value = lhs ? add.getLhs() : add.getRhs();
    } else if (auto where = dyn_cast<WhereOp>(op)) {
      if (match.mask || match.maskedFill)
        return "more than one mask";
      if (scaled)
        return "the mask is scaled with the scores";
      match.fillIsTrueBranch = isHidingFill(where.getOnTrue());
      if (!match.fillIsTrueBranch && !isHidingFill(where.getOnFalse()))
        return "a masked_fill with a value that does not hide the key (not -inf)";
      match.maskedFill = where;
      value = match.fillIsTrueBranch ? where.getOnFalse() : where.getOnTrue();
    } else {
      return "memc." + op->getName().stripDialect().str() + " between the scores and the softmax";
    }
  }
}

/// Whether `mask` is the causal mask of [queries, keys] scores as Llama exports it: a hiding
/// constant through Trilu(upper, k = 1 + keys - queries), which hides key j from query i when
/// j > i + keys - queries (the op's bottom-right alignment), any leading dimensions 1.
bool isCausalMask(Value mask, int64_t queries, int64_t keys) {
  auto trilu = mask.getDefiningOp<TriluOp>();
  if (!trilu || !trilu.getUpper() || trilu.getK() != 1 + keys - queries ||
      !isHidingFill(trilu.getInput()))
    return false;
  ArrayRef<int64_t> shape = tensorType(mask).getShape();
  if (shape.size() < 2 || shape[shape.size() - 2] != queries || shape.back() != keys)
    return false;
  return llvm::all_of(shape.drop_back(2), [](int64_t dim) { return dim == 1; });
}

/// Matches the attention around `softmax`; a reason when it is not one the op expresses.
std::string matchAttention(SoftmaxOp softmax, AttentionMatch &match) {
  RankedTensorType type = softmax.getType();
  if (type.getRank() != 3 && type.getRank() != 4)
    return "scores of rank " + std::to_string(type.getRank()) + ", not 3 or 4";
  if (static_cast<int64_t>(softmax.getAxis()) != type.getRank() - 1)
    return "the softmax is not over the keys (the last axis)";
  if (!softmax.getResult().hasOneUse())
    return "the probabilities are used by more than the product with v";
  match.output = dyn_cast<MatMulOp>(*softmax.getResult().getUsers().begin());
  if (!match.output || match.output.getLhs() != softmax.getResult())
    return "the probabilities are not multiplied by v";
  if (std::string reason = matchScores(softmax.getInput(), match); !reason.empty())
    return reason;
  match.chain.insert(match.chain.begin(), softmax);
  if (match.scores.getTransposeLhs() || match.output.getTransposeLhs() ||
      match.output.getTransposeRhs())
    return "q, the probabilities or v are read transposed by their product";
  match.keyReadTransposed = match.scores.getTransposeRhs();
  match.query = peelScale(match.scores.getLhs(), match.scale, match.chain);
  match.keyT = peelScale(match.scores.getRhs(), match.scale, match.chain);
  match.value = match.output.getRhs();
  for (Value operand : {match.query, match.keyT, match.value}) {
    if (tensorType(operand).getRank() != type.getRank())
      return "q, k and v are broadcast against each other";
    if (tensorType(operand).getElementType() != type.getElementType())
      return "q, k and v have different element types";
  }
  ArrayRef<int64_t> q = tensorType(match.query).getShape(), kt = tensorType(match.keyT).getShape();
  ArrayRef<int64_t> v = tensorType(match.value).getShape();
  if (q.drop_back(2) != kt.drop_back(2) || q.drop_back(2) != v.drop_back(2))
    return "q, k and v are broadcast against each other";
  if (!(match.scale > 0) || std::isinf(match.scale))
    return "the scale is not finite and positive";
  if (match.mask &&
      isCausalMask(match.mask, type.getShape()[type.getRank() - 2], type.getShape().back())) {
    match.causal = true;
    match.mask = Value();
  }
  return "";
}

/// `value` with its shape as `shape` (same element count); a reshape of a reshape reads the
/// first one's input.
Value reshaped(OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> shape) {
  if (tensorType(value).getShape() == shape)
    return value;
  if (auto inner = value.getDefiningOp<ReshapeOp>())
    return reshaped(b, loc, inner.getInput(), shape);
  return b.create<ReshapeOp>(loc, tensorType(value).clone(shape), value);
}

/// k from k^T: the transpose that made k^T, composed with swapping the last two axes, or a new
/// transpose when k^T came from elsewhere.
Value keyFromTransposed(OpBuilder &b, Location loc, Value keyT) {
  int64_t rank = tensorType(keyT).getRank();
  SmallVector<int64_t> swap(rank);
  for (int64_t i = 0; i < rank; ++i)
    swap[i] = i;
  std::swap(swap[rank - 1], swap[rank - 2]);
  Value source = keyT;
  SmallVector<int64_t> perm = swap;
  if (auto transpose = keyT.getDefiningOp<TransposeOp>()) {
    source = transpose.getInput();
    for (int64_t i = 0; i < rank; ++i)
      perm[i] = transpose.getPerm()[swap[i]];
  }
  bool identity = true;
  for (int64_t i = 0; i < rank; ++i)
    identity = identity && perm[i] == i;
  if (identity)
    return source;
  return b.create<TransposeOp>(loc, source, b.getDenseI64ArrayAttr(perm));
}

/// Grouped-query attention as Llama-3 exports repeat_kv: k or v [B, Hkv, T, D] unsqueezed to
/// [B, Hkv, 1, T, D], expanded to [B, Hkv, G, T, D] and reshaped to [B, Hkv * G, T, D]. The
/// expanded tensor's input (what to reshape to [B, Hkv, T, D]), or null.
Value repeatedHeadsSource(Value heads) {
  auto reshape = heads.getDefiningOp<ReshapeOp>();
  auto expand = reshape ? reshape.getInput().getDefiningOp<BroadcastToOp>() : BroadcastToOp();
  if (!expand || tensorType(heads).getRank() != 4)
    return Value();
  ArrayRef<int64_t> repeated = tensorType(heads).getShape();
  ArrayRef<int64_t> from = tensorType(expand.getInput()).getShape();
  ArrayRef<int64_t> to = expand.getType().getShape();
  if (from.size() != 5 || from[2] != 1 || to.size() != 5 || from[0] != repeated[0] ||
      from[1] * to[2] != repeated[1] || from.take_back(2) != repeated.take_back(2) ||
      to[0] != from[0] || to[1] != from[1] || to.take_back(2) != from.take_back(2))
    return Value();
  return expand.getInput();
}

/// k and v without their repeats when both are repeated alike (see repeatedHeadsSource).
void absorbHeadRepeats(OpBuilder &b, Location loc, Value &key, Value &value) {
  Value keySource = repeatedHeadsSource(key), valueSource = repeatedHeadsSource(value);
  if (!keySource || !valueSource ||
      tensorType(keySource).getDimSize(1) != tensorType(valueSource).getDimSize(1))
    return;
  auto heads = [](Value source) {
    ArrayRef<int64_t> shape = tensorType(source).getShape();
    return SmallVector<int64_t>{shape[0], shape[1], shape[3], shape[4]};
  };
  key = reshaped(b, loc, keySource, heads(keySource));
  value = reshaped(b, loc, valueSource, heads(valueSource));
}

/// The mask's shape as flash_attention takes it: leading 1s to rank 4 (for rank-3 attention
/// this adds the single batch); a reason when it has no such form.
std::string maskShapeOf(AttentionMatch &match, Shape &shape) {
  Value mask = match.mask;
  if (match.maskedFill) {
    // where(cond, fill, scores) = scores + where(cond, fill, 0) wherever the fill hides a key.
    Value fill =
        match.fillIsTrueBranch ? match.maskedFill.getOnTrue() : match.maskedFill.getOnFalse();
    std::string error;
    if (failed(broadcastShapes(
            {tensorType(match.maskedFill.getCondition()).getShape(), tensorType(fill).getShape()},
            shape, error)))
      return error;
  } else {
    if (!isa<FloatType>(tensorType(mask).getElementType()))
      return "the mask is not a float tensor";
    shape.assign(tensorType(mask).getShape().begin(), tensorType(mask).getShape().end());
  }
  if (shape.size() > 4)
    return "the mask has a rank above 4";
  shape.insert(shape.begin(), 4 - shape.size(), 1);
  return "";
}

/// The additive mask of `match`, of shape `shape` (maskShapeOf).
Value buildMask(OpBuilder &b, Location loc, AttentionMatch &match, ArrayRef<int64_t> shape) {
  Value mask = match.mask;
  if (match.maskedFill) {
    Value fill =
        match.fillIsTrueBranch ? match.maskedFill.getOnTrue() : match.maskedFill.getOnFalse();
    auto zeroType = RankedTensorType::get({}, tensorType(fill).getElementType());
    Value zero = b.create<ConstantOp>(
        loc, DenseElementsAttr::get(zeroType, b.getFloatAttr(zeroType.getElementType(), 0.0)));
    mask = b.create<WhereOp>(loc, match.maskedFill.getCondition(),
                             match.fillIsTrueBranch ? fill : zero,
                             match.fillIsTrueBranch ? zero : fill);
  }
  return reshaped(b, loc, mask, shape);
}

/// [B, H, T, D] of a rank-3 ([B*H, T, D]) or rank-4 operand.
Shape asRank4(ArrayRef<int64_t> shape) {
  Shape rank4(shape.begin(), shape.end());
  if (rank4.size() == 3)
    rank4.insert(rank4.begin(), 1);
  return rank4;
}

/// Replaces the matched attention with flash_attention; a reason when the operands do not fit.
std::string rewriteAttention(AttentionMatch &match) {
  ArrayRef<int64_t> keyT = tensorType(match.keyT).getShape();
  Shape query = asRank4(tensorType(match.query).getShape()),
        value = asRank4(tensorType(match.value).getShape());
  Shape keyShape(keyT.begin(), keyT.end());
  if (!match.keyReadTransposed)
    std::swap(keyShape[keyShape.size() - 1], keyShape[keyShape.size() - 2]);
  Shape key = asRank4(keyShape);
  Shape mask, output, logsumexp;
  bool masked = match.mask || match.maskedFill;
  if (masked)
    if (std::string reason = maskShapeOf(match, mask); !reason.empty())
      return reason;
  std::string reason;
  if (failed(attentionShapes(query, key, value,
                             masked ? std::optional<ArrayRef<int64_t>>(mask) : std::nullopt, output,
                             logsumexp, reason)))
    return reason;

  OpBuilder b(match.output);
  Location loc = match.output.getLoc();
  Value queryHeads = reshaped(b, loc, match.query, query);
  Value keyHeads = reshaped(
      b, loc, match.keyReadTransposed ? match.keyT : keyFromTransposed(b, loc, match.keyT), key);
  Value valueHeads = reshaped(b, loc, match.value, value);
  absorbHeadRepeats(b, loc, keyHeads, valueHeads);
  Value additive = masked ? buildMask(b, loc, match, mask) : Value();
  auto fused =
      b.create<FlashAttentionOp>(loc, queryHeads, keyHeads, valueHeads, additive,
                                 b.getBoolAttr(match.causal), b.getF64FloatAttr(match.scale));
  match.output.getResult().replaceAllUsesWith(
      reshaped(b, loc, fused.getOutput(), match.output.getType().getShape()));
  return "";
}

/// Erases `op` and, after it, the ops feeding it that nothing else uses.
void eraseDeadChain(Operation *root) {
  SmallVector<Operation *> worklist = {root};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!op->use_empty() || !isPure(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        worklist.push_back(producer);
    op->dropAllReferences();
    op->erase();
  }
}

/// The node an op came from, for the report: the ONNX node name the importer put in the
/// location, else the location as MLIR prints it.
std::string nodeName(Operation *op) {
  Location loc = op->getLoc();
  if (auto fused = dyn_cast<FusedLoc>(loc); fused && !fused.getLocations().empty())
    loc = fused.getLocations().front();
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return os.str();
}

struct FuseAttentionPass : memc::impl::FuseAttentionBase<FuseAttentionPass> {
  using FuseAttentionBase::FuseAttentionBase;

  void runOnOperation() override {
    AttentionFusionSummary summary = fuseAttention(getOperation());
    recordAttentionFusion(getOperation(), summary);
    if (!remarkUnfused)
      return;
    for (const UnfusedAttention &unfused : summary.unfused)
      emitRemark(getOperation().getLoc(), "attention not fused at ")
          << unfused.node << ": " << unfused.reason;
  }
};

} // namespace

AttentionFusionSummary memc::fuseAttention(func::FuncOp function) {
  AttentionFusionSummary summary;
  SmallVector<SoftmaxOp> candidates;
  function.walk([&](SoftmaxOp softmax) {
    if (reachesProduct(softmax.getInput()))
      candidates.push_back(softmax);
  });
  for (SoftmaxOp softmax : candidates) {
    AttentionMatch match;
    std::string node = nodeName(softmax);
    std::string reason = matchAttention(softmax, match);
    if (reason.empty())
      reason = rewriteAttention(match);
    if (!reason.empty()) {
      summary.unfused.push_back({node, reason});
      continue;
    }
    ++summary.fused;
    eraseDeadChain(match.output);
  }
  return summary;
}

void memc::recordAttentionFusion(func::FuncOp function, const AttentionFusionSummary &summary) {
  Builder b(function.getContext());
  SmallVector<Attribute> unfused;
  for (const UnfusedAttention &candidate : summary.unfused)
    unfused.push_back(b.getStrArrayAttr({StringRef(candidate.node), StringRef(candidate.reason)}));
  function->setAttr("memc.attention_fused", b.getI64IntegerAttr(summary.fused));
  function->setAttr("memc.attention_unfused", b.getArrayAttr(unfused));
}

std::optional<AttentionFusionSummary> memc::readAttentionFusion(func::FuncOp function) {
  auto fused = function->getAttrOfType<IntegerAttr>("memc.attention_fused");
  auto unfused = function->getAttrOfType<ArrayAttr>("memc.attention_unfused");
  if (!fused || !unfused)
    return std::nullopt;
  AttentionFusionSummary summary;
  summary.fused = fused.getInt();
  for (Attribute entry : unfused) {
    auto pair = dyn_cast<ArrayAttr>(entry);
    if (!pair || pair.size() != 2 || !isa<StringAttr>(pair[0]) || !isa<StringAttr>(pair[1]))
      return std::nullopt;
    summary.unfused.push_back({cast<StringAttr>(pair[0]).str(), cast<StringAttr>(pair[1]).str()});
  }
  return summary;
}
