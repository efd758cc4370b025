//===- FuseAttention.cpp - attention subgraphs to memc.flash_attention ----===//
//
// Before (GPT-2 as torch.onnx.export writes it, after import):
//   %kt = memc.transpose %k4 {perm = [0, 2, 3, 1]}     %s = memc.matmul %q, %kt
//   %s1 = memc.mul %s, %c0_35                            %c = memc.equal %bias, %c0
//   %s2 = memc.where %c, %cneginf, %s1                   %p = memc.softmax %s2 {axis = 3}
//   %o = memc.matmul %p, %v
// After (%bias holds torch.tril(ones): memc.lower_triangular):
//   %k = memc.transpose %k4 {perm = [0, 2, 1, 3]}
//   %o, %lse = memc.flash_attention %q, %k, %v {causal = true, scale = 0.35}
//
// Each softmax between two matmuls (its input from one, its result the left operand of another)
// is an attention candidate. From the softmax the
// matcher walks back to that matmul through scalings by constants (Mul, Div: the scale), casts
// (a softmax computed in f32), one additive mask (Add) or one masked_fill (Where with a constant
// of -inf or below -1e30, which becomes the additive mask where(cond, fill, 0)); Llama's Trilu of
// -inf and a masked_fill reading a causal buffer that only masks are `causal` instead, whose
// tiles above the diagonal the kernels skip; scalings of q or k^T by constants join the scale.
// k^T's transpose is absorbed into k's; grouped-query repeats of k and v (Expand + Reshape, or
// Tile) are dropped, the op reading each kv head for its group (q's heads reordered where Tile
// repeated the head axis whole); rank-3 attention ([B*H, T, D], nn.MultiheadAttention) is
// reshaped to one batch. A Dropout on the probabilities becomes the op's dropout, which draws
// the same mask by the same flat index (so q's heads keep their order under it). A candidate
// that does not fit is left as it is, with the reason, for the report.
//
//===----------------------------------------------------------------------===//
#include "passes/AttentionFusion.h"
#include "passes/Passes.h"
#include "passes/ScalarConstants.h"

#include "dialects/memc/ShapeInference.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>
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
  DropoutOp dropout; // on the probabilities: the op draws its mask
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
    else if (auto cast = dyn_cast_or_null<CastOp>(op))
      value = cast.getInput();
    else if (auto add = dyn_cast_or_null<AddOp>(op))
      value = reachesProduct(add.getLhs()) ? add.getLhs() : add.getRhs();
    else if (auto where = dyn_cast_or_null<WhereOp>(op))
      value = reachesProduct(where.getOnTrue()) ? where.getOnTrue() : where.getOnFalse();
    else
      return false;
  }
  return false;
}

/// Whether `value` (a softmax's probabilities) is the left operand of a matmul, through casts and
/// dropouts: a softmax that feeds no product (a classifier's) is no attention at all.
bool feedsProduct(Value value) {
  for (int depth = 0; depth < 4; ++depth) {
    Value next;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<MatMulOp>(user) && use.getOperandNumber() == 0)
        return true;
      if (isa<CastOp, DropoutOp>(user))
        next = user->getResult(0);
    }
    if (!next)
      return false;
    value = next;
  }
  return false;
}

/// Peels scalings by constants off `value` into `scale`, where nothing else uses them.
Value peelScale(Value value, double &scale) {
  while (value.hasOneUse()) {
    std::optional<std::pair<double, Value>> factor = scalarFactor(value.getDefiningOp());
    if (!factor)
      break;
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
    if (auto product = dyn_cast<MatMulOp>(op)) {
      match.scores = product;
      return "";
    }
    if (auto cast = dyn_cast<CastOp>(op)) {
      // Llama's softmax in f32: the scores cast up (the op's online softmax is f32 anyway).
      if (!isa<FloatType>(getElementTypeOrSelf(cast.getInput())))
        return "the scores are cast from a non-float type";
      value = cast.getInput();
    } else if (std::optional<std::pair<double, Value>> factor = scalarFactor(op)) {
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

/// The causal buffer (a function argument marked `attribute`) that `block`, of [..., queries,
/// keys], is a block of, when the block hides what `causal` hides; null otherwise. Looks through
/// slices (steps 1), casts, and the ops `through` gives the input of (null: none).
BlockArgument causalBufferOf(Value block, StringRef attribute, int64_t queries, int64_t keys,
                             function_ref<Value(Operation *)> through) {
  int64_t row = 0, column = 0;
  while (Operation *op = block.getDefiningOp()) {
    if (auto slice = dyn_cast<SliceOp>(op)) {
      const int64_t rank = tensorType(slice.getResult()).getRank(); // `through` may change it
      if (slice.getSteps()[rank - 2] != 1 || slice.getSteps()[rank - 1] != 1)
        return nullptr;
      row += slice.getStarts()[rank - 2];
      column += slice.getStarts()[rank - 1];
      block = slice.getInput();
    } else if (auto cast = dyn_cast<CastOp>(op)) {
      block = cast.getInput();
    } else if (Value input = through(op)) {
      block = input;
    } else {
      break;
    }
  }
  auto buffer = dyn_cast<BlockArgument>(block);
  auto function = buffer ? dyn_cast<func::FuncOp>(buffer.getOwner()->getParentOp()) : nullptr;
  // Block element (i, j) is the buffer's (row + i, column + j): visible where j <= i + row -
  // column; causal (bottom-right aligned) sees j <= i + keys - queries.
  if (!function || !function.getArgAttr(buffer.getArgNumber(), attribute) ||
      row - column != keys - queries)
    return nullptr;
  return buffer;
}

/// Whether `mask` is a block of an additive causal buffer (kCausalAdditiveMaskAttr: 0 on and
/// below the diagonal, -inf above) that hides what `causal` hides: nn.MultiheadAttention's
/// attn_mask=mask[:T, :T], through slices, casts, reshapes adding leading 1s, and products with
/// a positive scalar (baddbmm's beta), which keep 0 and -inf.
bool isCausalBufferBlock(Value mask, int64_t queries, int64_t keys) {
  auto through = [](Operation *op) -> Value {
    ArrayRef<int64_t> shape = tensorType(op->getResult(0)).getShape();
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      ArrayRef<int64_t> from = tensorType(reshape.getInput()).getShape();
      // Only leading 1s come or go: the last two dims stay.
      if (from.size() < 2 || from.take_back(2) != shape.take_back(2) ||
          !llvm::all_of(from.drop_back(2), [](int64_t dim) { return dim == 1; }))
        return Value();
      return reshape.getInput();
    }
    if (auto mul = dyn_cast<MulOp>(op)) {
      std::optional<double> lhs = splatScalar(mul.getLhs()), rhs = splatScalar(mul.getRhs());
      std::optional<double> factor = rhs ? rhs : lhs;
      Value scaled = rhs ? mul.getLhs() : mul.getRhs();
      if (!factor || !(*factor > 0) || std::isinf(*factor) ||
          tensorType(scaled).getShape() != shape)
        return Value();
      return scaled;
    }
    return Value();
  };
  return causalBufferOf(mask, kCausalAdditiveMaskAttr, queries, keys, through) != nullptr;
}

/// Whether `mask` is the causal mask of [queries, keys] scores: as Llama exports it, a hiding
/// constant through Trilu(upper, k = 1 + keys - queries), which hides key j from query i when
/// j > i + keys - queries (the op's bottom-right alignment), or a block of an additive causal
/// buffer (isCausalBufferBlock); any leading dimensions 1.
bool isCausalMask(Value mask, int64_t queries, int64_t keys) {
  ArrayRef<int64_t> maskShape = tensorType(mask).getShape();
  if (maskShape.size() >= 2 && maskShape[maskShape.size() - 2] == queries &&
      maskShape.back() == keys &&
      llvm::all_of(maskShape.drop_back(2), [](int64_t dim) { return dim == 1; }) &&
      isCausalBufferBlock(mask, queries, keys))
    return true;
  auto trilu = mask.getDefiningOp<TriluOp>();
  if (!trilu || !trilu.getUpper() || static_cast<int64_t>(trilu.getK()) != 1 + keys - queries ||
      !isHidingFill(trilu.getInput()))
    return false;
  ArrayRef<int64_t> shape = tensorType(mask).getShape();
  if (shape.size() < 2 || shape[shape.size() - 2] != queries || shape.back() != keys)
    return false;
  return llvm::all_of(shape.drop_back(2), [](int64_t dim) { return dim == 1; });
}

/// Whether every use of `value` only decides which keys are hidden (comparisons, Where's
/// condition, through slices, reshapes and casts): no gradient reaches it then, so the training
/// step leaves such a parameter out (TrainStep.cpp) and its values stay the stored ones.
bool onlyHidesKeys(Value value) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (isa<SliceOp, ReshapeOp, CastOp>(user)) {
      if (!onlyHidesKeys(user->getResult(0)))
        return false;
    } else if (!isa<EqualOp, LessOp, GreaterOp, NotOp>(user) &&
               !(isa<WhereOp>(user) && use.getOperandNumber() == 0)) {
      return false;
    }
  }
  return true;
}

/// Whether the masked_fill of [queries, keys] scores hides exactly what `causal` hides, reading
/// a causal buffer (kLowerTriangularAttr) that only hides keys, sliced: nanoGPT's
/// masked_fill(bias[:, :, :T, :T] == 0, -inf) or transformers' where(bias[...], scores, min).
bool isCausalBufferFill(AttentionMatch &match, int64_t queries, int64_t keys) {
  Value condition = match.maskedFill.getCondition();
  bool hidesZeros = false; // else the fill hides where the buffer is 1
  if (auto equal = condition.getDefiningOp<EqualOp>()) {
    bool zeroOnRight = splatScalar(equal.getRhs()) == std::optional<double>(0.0);
    if (!zeroOnRight && splatScalar(equal.getLhs()) != std::optional<double>(0.0))
      return false;
    condition = zeroOnRight ? equal.getLhs() : equal.getRhs();
    hidesZeros = true;
  }
  if (hidesZeros != match.fillIsTrueBranch)
    return false;
  ArrayRef<int64_t> block = tensorType(condition).getShape();
  int64_t rank = block.size();
  if (rank < 2 || block[rank - 2] != queries || block[rank - 1] != keys)
    return false;
  // The block of the buffer, through slices and casts (which keep its 0s and 1s).
  BlockArgument buffer = causalBufferOf(condition, kLowerTriangularAttr, queries, keys,
                                        [](Operation *) { return Value(); });
  return buffer && tensorType(buffer).getRank() == rank && onlyHidesKeys(buffer);
}

/// What multiplies v: the softmax's probabilities, cast back to the model's type (Llama's
/// softmax in f32) and dropped out (nanoGPT's attn_dropout, nn.MultiheadAttention's dropout),
/// in either order, each at most once; the dropout goes into `match`.
Value probabilitiesForValue(Value probabilities, AttentionMatch &match) {
  bool cast = false;
  while (probabilities.hasOneUse()) {
    Operation *user = *probabilities.getUsers().begin();
    if (isa<CastOp>(user) && !cast) {
      cast = true;
      probabilities = user->getResult(0);
    } else if (auto dropout = dyn_cast<DropoutOp>(user); dropout && !match.dropout) {
      match.dropout = dropout;
      probabilities = dropout.getResult();
    } else {
      break;
    }
  }
  return probabilities;
}

/// Matches the attention around `softmax`; a reason when it is not one the op expresses.
std::string matchAttention(SoftmaxOp softmax, AttentionMatch &match) {
  RankedTensorType type = softmax.getType();
  if (type.getRank() != 3 && type.getRank() != 4)
    return "scores of rank " + std::to_string(type.getRank()) + ", not 3 or 4";
  if (static_cast<int64_t>(softmax.getAxis()) != type.getRank() - 1)
    return "the softmax is not over the keys (the last axis)";
  Value probabilities = probabilitiesForValue(softmax.getResult(), match);
  if (!probabilities.hasOneUse())
    return "the probabilities are used by more than the product with v";
  match.output = dyn_cast<MatMulOp>(*probabilities.getUsers().begin());
  if (!match.output || match.output.getLhs() != probabilities)
    return "the probabilities are not multiplied by v";
  if (std::string reason = matchScores(softmax.getInput(), match); !reason.empty())
    return reason;
  if (match.scores.getTransposeLhs() || match.output.getTransposeLhs() ||
      match.output.getTransposeRhs())
    return "q, the probabilities or v are read transposed by their product";
  match.keyReadTransposed = match.scores.getTransposeRhs();
  match.query = peelScale(match.scores.getLhs(), match.scale);
  match.keyT = peelScale(match.scores.getRhs(), match.scale);
  match.value = match.output.getRhs();
  for (Value operand : {match.query, match.keyT, match.value}) {
    if (tensorType(operand).getRank() != type.getRank())
      return "q, k and v are broadcast against each other";
    if (tensorType(operand).getElementType() != match.output.getType().getElementType())
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
  if (match.maskedFill &&
      isCausalBufferFill(match, type.getShape()[type.getRank() - 2], type.getShape().back())) {
    match.causal = true;
    match.maskedFill = WhereOp();
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

/// How k or v [B, H, T, D] repeats the heads of a [B, Hkv, T, D] source: Hkv = H / groups;
/// grouped, head h reads kv head h / groups (Llama-3's repeat_kv: unsqueeze, Expand, Reshape, or
/// unsqueeze(2).repeat(...)); interleaved, head h reads kv head h % Hkv (repeat(1, groups, 1, 1),
/// ONNX Tile along the head axis).
struct HeadRepeats {
  Value source; // null: not repeated
  int64_t groups = 1;
  bool interleaved = false;
};

/// The repeats of `heads` = reshape(broadcast_to(x)) where x gains `groups` along one size-1
/// axis: which heads repeat follows from the element counts before and after that axis.
HeadRepeats repeatedHeads(Value heads) {
  auto reshape = heads.getDefiningOp<ReshapeOp>();
  auto expand = reshape ? reshape.getInput().getDefiningOp<BroadcastToOp>() : BroadcastToOp();
  if (!expand || tensorType(heads).getRank() != 4)
    return {};
  ArrayRef<int64_t> from = tensorType(expand.getInput()).getShape();
  ArrayRef<int64_t> to = expand.getType().getShape();
  if (from.size() != to.size())
    return {};
  std::optional<size_t> axis;
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] == to[i])
      continue;
    if (axis || from[i] != 1)
      return {};
    axis = i;
  }
  if (!axis)
    return {};
  ArrayRef<int64_t> shape = tensorType(heads).getShape();
  int64_t groups = to[*axis], batch = shape[0], rows = shape[2] * shape[3];
  if (shape[1] % groups != 0)
    return {};
  int64_t kvHeads = shape[1] / groups;
  int64_t before = numElements(to.take_front(*axis)), after = numElements(to.drop_front(*axis + 1));
  bool grouped = before == batch * kvHeads && after == rows;
  bool interleaved = before == batch && after == kvHeads * rows;
  if (!grouped && !interleaved)
    return {};
  return {expand.getInput(), groups, !grouped};
}

/// A [B, H, T, D] tensor's heads in the other order of groups x kv heads: [B, G, Hkv, ...] read
/// as [B, Hkv, G, ...] (`groupsFirst` says which it is now). Interleaved repeats become grouped
/// ones when q's heads take this order, and the output's heads go back.
Value swapHeadOrder(OpBuilder &b, Location loc, Value heads, int64_t groups, bool groupsFirst) {
  ArrayRef<int64_t> shape = tensorType(heads).getShape();
  int64_t kvHeads = shape[1] / groups;
  SmallVector<int64_t> split = {shape[0], groupsFirst ? groups : kvHeads,
                                groupsFirst ? kvHeads : groups, shape[2], shape[3]};
  Value swapped = b.create<TransposeOp>(loc, reshaped(b, loc, heads, split),
                                        b.getDenseI64ArrayAttr({0, 2, 1, 3, 4}));
  return reshaped(b, loc, swapped, shape);
}

/// k and v without their repeats when both repeat alike (see HeadRepeats); interleaved repeats
/// also need q's heads reordered (`reorderedQuery`), and the output's heads reordered back, unless
/// the mask differs per head or a dropout draws its mask by the probabilities' head order.
HeadRepeats absorbHeadRepeats(OpBuilder &b, Location loc, Value &key, Value &value,
                              ArrayRef<int64_t> maskShape, bool dropout) {
  HeadRepeats keyRepeats = repeatedHeads(key), valueRepeats = repeatedHeads(value);
  if (!keyRepeats.source || !valueRepeats.source || keyRepeats.groups != valueRepeats.groups ||
      keyRepeats.interleaved != valueRepeats.interleaved)
    return {};
  if (keyRepeats.interleaved && (dropout || (!maskShape.empty() && maskShape[1] != 1)))
    return {};
  auto heads = [&](Value source, Value repeated) {
    ArrayRef<int64_t> shape = tensorType(repeated).getShape();
    return reshaped(b, loc, source, {shape[0], shape[1] / keyRepeats.groups, shape[2], shape[3]});
  };
  key = heads(keyRepeats.source, key);
  value = heads(valueRepeats.source, value);
  return keyRepeats;
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
  // The op draws the dropout's mask by the flat index in its [B, H, Tq, Tk] probabilities, which
  // is the unfused dropout's: the scores have q's leading dimensions (no broadcasting, above),
  // rank 3 [B*H, Tq, Tk] reads as [1, B*H, Tq, Tk], and q's heads keep their order under a
  // dropout (absorbHeadRepeats).
  assert(!match.dropout || asRank4(tensorType(match.dropout.getInput()).getShape()) ==
                               Shape({query[0], query[1], query[2], key[2]}));

  OpBuilder b(match.output);
  Location loc = match.output.getLoc();
  Value queryHeads = reshaped(b, loc, match.query, query);
  Value keyHeads = reshaped(
      b, loc, match.keyReadTransposed ? match.keyT : keyFromTransposed(b, loc, match.keyT), key);
  Value valueHeads = reshaped(b, loc, match.value, value);
  HeadRepeats repeats =
      absorbHeadRepeats(b, loc, keyHeads, valueHeads, mask, static_cast<bool>(match.dropout));
  if (repeats.interleaved)
    queryHeads = swapHeadOrder(b, loc, queryHeads, repeats.groups, /*groupsFirst=*/true);
  Value additive = masked ? buildMask(b, loc, match, mask) : Value();
  Value salt = match.dropout ? match.dropout.getSalt() : Value();
  auto fused = b.create<FlashAttentionOp>(
      loc, queryHeads, keyHeads, valueHeads, additive, salt, b.getBoolAttr(match.causal),
      b.getF64FloatAttr(match.scale),
      b.getF64FloatAttr(match.dropout ? match.dropout.getRatio().convertToDouble() : 0.0),
      b.getI64IntegerAttr(match.dropout ? match.dropout.getSeed() : 0));
  Value heads = fused.getOutput();
  if (repeats.interleaved)
    heads = swapHeadOrder(b, loc, heads, repeats.groups, /*groupsFirst=*/false);
  match.output.getResult().replaceAllUsesWith(
      reshaped(b, loc, heads, match.output.getType().getShape()));
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
  if (std::string name = locationName(op->getLoc()); !name.empty())
    return name;
  std::string text;
  llvm::raw_string_ostream os(text);
  op->getLoc().print(os);
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
    if (reachesProduct(softmax.getInput()) && feedsProduct(softmax.getResult()))
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
  function->setAttr("memc.attention_fused", b.getI64IntegerAttr(summary.fused));
  function->setAttr("memc.attention_unfused", unfusedCandidatesAttr(b, summary.unfused));
}

std::optional<AttentionFusionSummary> memc::readAttentionFusion(func::FuncOp function) {
  auto fused = function->getAttrOfType<IntegerAttr>("memc.attention_fused");
  auto unfused = function->getAttrOfType<ArrayAttr>("memc.attention_unfused");
  if (!fused || !unfused)
    return std::nullopt;
  std::optional<std::vector<UnfusedAttention>> candidates = readUnfusedCandidates(unfused);
  if (!candidates)
    return std::nullopt;
  AttentionFusionSummary summary;
  summary.fused = fused.getInt();
  summary.unfused = std::move(*candidates);
  return summary;
}
