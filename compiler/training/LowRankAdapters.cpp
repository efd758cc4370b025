//===- LowRankAdapters.cpp - LoRA adapters and an NF4 frozen base ---------===//
//
// Before (nn.Linear(32, 96) as exported, --lora-rank 8 --lora-alpha 16 --lora-targets q_proj):
//   %y = memc.matmul %x, %w {transpose_rhs} : (tensor<4x32xf32>, tensor<96x32xf32>) -> ...
// After (two more arguments, q_proj.lora_A.weight [8, 32] and q_proj.lora_B.weight [96, 8]):
//   %y = memc.matmul %x, %w {transpose_rhs}
//   %t = memc.matmul %x, %a {transpose_rhs}      // [4, 8]
//   %u = memc.matmul %t, %b {transpose_rhs}      // [4, 96]
//   %s = memc.mul %u, %cst_2                     // alpha / rank
//   %y2 = memc.add %y, %s
// and with --quantize-base nf4 the first product reads the packed weight instead:
//   %y = memc.matmul_nf4 %x, %w_nf4, %absmax_codes, %nested_absmax, %nested_offset
//        {transpose_rhs, weight_shape = array<i64: 96, 32>}
//
//===----------------------------------------------------------------------===//
#include "compiler/training/LowRankAdapters.h"

#include "compiler/training/TrainStep.h"
#include "dialects/memc/MemcDialect.h"
#include "kernels/NormalFloat4.h"
#include "runtime/plan/PlanVocabulary.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <optional>

using namespace mlir;

namespace memc {

namespace {

/// A 2-D parameter some matmul reads as its right-hand side.
struct MatMulWeight {
  BlockArgument argument;
  std::string name, module;
  /// Read as W^T (nn.Linear's [out, in]) by every product.
  bool transposed = false;
  SmallVector<MatMulOp> products;
  /// Nothing but those products reads it (so its storage may change).
  bool onlyProducts = true;
  /// One of its products is a graph output (a model's LM head).
  bool producesOutput = false;
};

StringAttr argAttr(func::FuncOp function, unsigned index, StringRef name) {
  return function.getArgAttrOfType<StringAttr>(index, name);
}

/// Whether `value` is returned, as it is or through a bias add, reshape or cast: the head's
/// product, as nn.Linear exports it (MatMul, then Add of the bias).
bool isGraphOutput(Value value) {
  for (Operation *user : value.getUsers()) {
    if (isa<func::ReturnOp>(user))
      return true;
    // A bias is a parameter; a residual sum (another activation) makes no head.
    bool biasAdd = isa<AddOp>(user) && llvm::all_of(user->getOperands(), [&](Value operand) {
                     return operand == value || isa<BlockArgument>(operand);
                   });
    if ((biasAdd || isa<ReshapeOp, CastOp>(user)) && isGraphOutput(user->getResult(0)))
      return true;
  }
  return false;
}

/// The 2-D float parameters that matmuls read as W or W^T, in argument order.
FailureOr<SmallVector<MatMulWeight>> matmulWeights(func::FuncOp forward) {
  SmallVector<MatMulWeight> weights;
  for (BlockArgument argument : forward.getArguments()) {
    StringAttr name = argAttr(forward, argument.getArgNumber(), kParamNameAttr);
    StringAttr kind = argAttr(forward, argument.getArgNumber(), kParamKindAttr);
    auto type = dyn_cast<RankedTensorType>(argument.getType());
    if (!name || !kind || plan::bindingKindNamed(kind.getValue()) != plan::KIND_PARAMETER ||
        !type || type.getRank() != 2 || !isa<FloatType>(type.getElementType()))
      continue;
    MatMulWeight weight;
    weight.argument = argument;
    weight.name = name.str();
    weight.module = StringRef(weight.name).consume_back(".weight")
                        ? weight.name.substr(0, weight.name.size() - 7)
                        : weight.name;
    for (Operation *user : argument.getUsers()) {
      auto product = dyn_cast<MatMulOp>(user);
      if (!product || product.getRhs() != argument || product.getLhs() == argument ||
          product.getTransposeLhs()) {
        weight.onlyProducts = false;
        continue;
      }
      if (!weight.products.empty() && product.getTransposeRhs() != weight.transposed)
        return forward.emitError() << "'" << weight.name
                                   << "' is read both as W and as W^T by matmuls: memc adapts "
                                      "a weight read one way";
      weight.transposed = product.getTransposeRhs();
      weight.products.push_back(product);
      weight.producesOutput |= isGraphOutput(product.getResult());
    }
    if (!weight.products.empty())
      weights.push_back(std::move(weight));
  }
  return weights;
}

/// A glob matches a module when it matches its whole name or a dot-separated suffix of it.
bool matchesModule(const llvm::GlobPattern &glob, StringRef module) {
  if (glob.match(module))
    return true;
  for (size_t dot = module.find('.'); dot != StringRef::npos; dot = module.find('.', dot + 1))
    if (glob.match(module.drop_front(dot + 1)))
      return true;
  return false;
}

DictionaryAttr parameterAttrs(Builder &b, StringRef name, StringRef derived, StringRef from = {}) {
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr(kParamNameAttr, b.getStringAttr(name)),
      b.getNamedAttr(kParamKindAttr,
                     b.getStringAttr(plan::bindingKindInfo(plan::KIND_PARAMETER).name)),
      b.getNamedAttr(kDerivedAttr, b.getStringAttr(derived))};
  if (!from.empty())
    attrs.push_back(b.getNamedAttr(kDerivedFromAttr, b.getStringAttr(from)));
  return b.getDictionaryAttr(attrs);
}

BlockArgument appendParameter(func::FuncOp forward, Type type, DictionaryAttr attrs) {
  unsigned index = forward.getNumArguments();
  (void)forward.insertArgument(index, type, attrs, forward.getLoc());
  return forward.getArgument(index);
}

/// Adds the adapter pair of `weight` and its path beside each of its products.
void adapt(func::FuncOp forward, const MatMulWeight &weight, const LoraOptions &options) {
  OpBuilder b(forward.getContext());
  auto type = cast<RankedTensorType>(weight.argument.getType());
  const int64_t out = type.getDimSize(weight.transposed ? 0 : 1);
  const int64_t in = type.getDimSize(weight.transposed ? 1 : 0);
  Type element = type.getElementType();
  DictionaryAttr aAttrs = parameterAttrs(b, weight.module + ".lora_A.weight", "kaiming_uniform");
  if (!weight.transposed) {
    NamedAttrList withFanIn(aAttrs);
    withFanIn.set(kFanInFanOutAttr, b.getUnitAttr());
    aAttrs = withFanIn.getDictionary(b.getContext());
  }
  BlockArgument a =
      appendParameter(forward, RankedTensorType::get({options.rank, in}, element), aAttrs);
  BlockArgument bMatrix =
      appendParameter(forward, RankedTensorType::get({out, options.rank}, element),
                      parameterAttrs(b, weight.module + ".lora_B.weight", "zeros"));
  // Each adapted module draws its own dropout mask, from a seed its name fixes.
  const int64_t seed = static_cast<int64_t>(llvm::xxh3_64bits(weight.module) >> 1);
  for (MatMulOp product : weight.products) {
    Location loc = product.getLoc();
    b.setInsertionPointAfter(product);
    Value x = product.getLhs();
    if (options.dropout > 0)
      x = b.create<DropoutOp>(loc, x.getType(), x, Value(), b.getF64FloatAttr(options.dropout),
                              b.getI64IntegerAttr(seed));
    Value down = b.create<MatMulOp>(loc, x, a, false, true);
    Value up = b.create<MatMulOp>(loc, down, bMatrix, false, true);
    auto scale = b.create<ConstantOp>(
        loc, DenseElementsAttr::get(RankedTensorType::get({}, element),
                                    b.getFloatAttr(element, options.alpha / options.rank)));
    Value scaled = b.create<MulOp>(loc, up, scale);
    auto sum = b.create<AddOp>(loc, product.getResult(), scaled);
    product.getResult().replaceAllUsesExcept(sum.getResult(), sum);
  }
}

/// Replaces `weight` by its NF4 parts and its products by matmul_nf4.
void quantize(func::FuncOp forward, const MatMulWeight &weight, bool doubleQuantization) {
  OpBuilder b(forward.getContext());
  auto type = cast<RankedTensorType>(weight.argument.getType());
  StringAttr source = argAttr(forward, weight.argument.getArgNumber(), kParamSourceAttr);
  const std::string from = source ? source.str() : weight.name;
  kernels::Nf4Layout layout{type.getNumElements()};
  Type u8 = b.getIntegerType(8, /*isSigned=*/false), f32 = b.getF32Type();
  SmallVector<Value> absmax;
  Value packed = appendParameter(forward, RankedTensorType::get({layout.packedBytes()}, u8),
                                 parameterAttrs(b, weight.name, "nf4", from));
  absmax.push_back(appendParameter(
      forward, RankedTensorType::get({layout.blocks()}, doubleQuantization ? u8 : f32),
      parameterAttrs(b, weight.name + ".absmax", "nf4.absmax", from)));
  if (doubleQuantization) {
    absmax.push_back(
        appendParameter(forward, RankedTensorType::get({layout.absmaxBlocks()}, f32),
                        parameterAttrs(b, weight.name + ".nested_absmax", "nf4.nested_absmax",
                                       from)));
    absmax.push_back(appendParameter(
        forward, RankedTensorType::get({}, f32),
        parameterAttrs(b, weight.name + ".nested_offset", "nf4.nested_offset", from)));
  }
  for (MatMulOp product : weight.products) {
    b.setInsertionPoint(product);
    auto replacement = b.create<MatMulNf4Op>(product.getLoc(), product.getType(),
                                             product.getLhs(), packed, absmax, type.getShape(),
                                             product.getTransposeRhs());
    product.getResult().replaceAllUsesWith(replacement.getResult());
    product.erase();
  }
}

} // namespace

std::vector<std::string> loraTrainable(const LoraOptions &options) {
  std::vector<std::string> globs = {"*.lora_A.weight", "*.lora_B.weight"};
  globs.insert(globs.end(), options.alsoTrainable.begin(), options.alsoTrainable.end());
  return globs;
}

LogicalResult addLowRankAdapters(func::FuncOp forward, const LoraOptions &options) {
  if (options.rank <= 0)
    return success();
  FailureOr<SmallVector<MatMulWeight>> weights = matmulWeights(forward);
  if (failed(weights))
    return failure();
  // One per target: a glob over module names, or none for kAllLinearTargets, which matches by
  // what the weight is.
  std::vector<std::optional<llvm::GlobPattern>> globs;
  for (const std::string &text : options.targets) {
    if (text == kAllLinearTargets) {
      globs.emplace_back();
      continue;
    }
    llvm::Expected<llvm::GlobPattern> glob = llvm::GlobPattern::create(text);
    if (!glob)
      return forward.emitError() << "invalid --lora-targets glob '" << text
                                 << "': " << llvm::toString(glob.takeError());
    globs.push_back(std::move(*glob));
  }
  std::vector<bool> globUsed(globs.size());
  SmallVector<const MatMulWeight *> adapted;
  for (const MatMulWeight &weight : *weights) {
    bool matched = false;
    for (size_t g = 0; g < globs.size(); ++g)
      if (globs[g] ? matchesModule(*globs[g], weight.module) : !weight.producesOutput)
        matched = globUsed[g] = true;
    if (!matched)
      continue;
    auto type = cast<RankedTensorType>(weight.argument.getType());
    int64_t smaller = std::min(type.getDimSize(0), type.getDimSize(1));
    if (options.rank > smaller)
      return forward.emitError() << "--lora-rank " << options.rank << " exceeds min(out, in) = "
                                 << smaller << " of '" << weight.name << "' " << type;
    adapted.push_back(&weight);
  }
  for (size_t g = 0; g < globs.size(); ++g)
    if (!globUsed[g])
      return forward.emitError() << "--lora-targets '" << options.targets[g]
                                 << "' matches no weight read by a MatMul or Gemm";
  for (const MatMulWeight *weight : adapted)
    adapt(forward, *weight, options);
  if (!options.quantizeNf4)
    return success();
  // What stays frozen once the adapters exist is what may be stored in 4 bits.
  TrainStepOptions selection;
  selection.trainable = loraTrainable(options);
  FailureOr<SmallVector<bool>> trained = selectTrainable(forward, selection, false);
  if (failed(trained))
    return failure();
  llvm::BitVector replaced(forward.getNumArguments());
  for (const MatMulWeight &weight : *weights) {
    if (!weight.onlyProducts || weight.producesOutput || (*trained)[weight.argument.getArgNumber()])
      continue;
    quantize(forward, weight, options.doubleQuantization);
    replaced.set(weight.argument.getArgNumber());
  }
  replaced.resize(forward.getNumArguments());
  forward.eraseArguments(replaced);
  return success();
}

} // namespace memc
