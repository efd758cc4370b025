//===- KernelHandTest.cpp - small cases worked out by hand ----------------===//
//
// The behaviour PyTorch cannot pin: integer corner cases C leaves undefined, data-dependent
// errors, empty tensors, dropout's mask properties, and attribute semantics PyTorch lacks
// (avg_pool dilation, clip on integers with fractional bounds).
//
//===----------------------------------------------------------------------===//
#include "KernelTestSupport.h"

#include "kernels/DynamicQuantization.h"
#include "kernels/KernelTargets.h"

#include <limits>
#include <set>

namespace memc::kernels::testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kInt64Min = static_cast<double>(std::numeric_limits<int64_t>::min());

std::vector<double> run1(const std::string &kernel, const std::vector<OwnedTensor> &inputs,
                         DType dtype, Shape shape, const Attributes &attributes = Attributes()) {
  return runKernel(kernel, inputs, {{dtype, shape}}, attributes)[0].values();
}

TEST(KernelTable, HasEveryMemcOpAndCopy) {
  std::set<std::string> expected = {
      "neg", "exp", "log", "sqrt", "reciprocal", "erf", "tanh", "sigmoid", "relu", "not", "gelu",
      "clip", "trilu", "cast", "dropout", "add", "sub", "mul", "div", "pow", "equal", "less",
      "greater", "where", "matmul", "matmul_nf4", "softmax", "log_softmax", "layer_norm",
      "rms_norm", "batch_norm", "reduce_sum", "reduce_mean", "reduce_max", "transpose", "reshape",
      "broadcast_to", "concat", "split", "slice", "gather", "conv", "max_pool", "avg_pool", "copy",
      "offload", "reload", "sgd_update", "adamw_update", "adamw8bit_update",
      // Activations and elementwise ops of issue 15.
      "abs", "sin", "cos", "softplus", "hard_swish", "leaky_relu", "elu", "hard_sigmoid", "max",
      "min", "prelu", "greater_equal", "less_equal", "reduce_prod", "reduce_l2",
      "reduce_log_sum_exp", "cumsum", "top_k",
      // Training: backward ops and losses.
      "gelu_grad", "softmax_grad", "log_softmax_grad", "layer_norm_grad", "rms_norm_grad",
      "batch_norm_grad",
      // Batch norm's running statistics: the batch's moments.
      "batch_moments", "gather_grad", "slice_grad", "conv_grad_input", "conv_grad_weight",
      "max_pool_grad", "avg_pool_grad", "cross_entropy", "cross_entropy_grad", "flash_attention",
      "flash_attention_grad", "linear_cross_entropy", "linear_cross_entropy_grad",
      // Loss scaling (--precision fp16).
      "non_finite_check", "loss_scale_update",
      // Weight copies kept across micro-batches (gradient accumulation in 16 bits).
      "refresh_copy",
      // Elementwise-chain fusion: a linear layer's bias add and its GELU,
      "bias_gelu", "bias_gelu_grad",
      // and a residual add and the layer norm of its sum.
      "add_layer_norm",
      // max_pool saving a one-byte argmax for its gradient.
      "max_pool_with_argmax", "max_pool_grad_argmax",
      // Data parallel: the ranks' collectives.
      "all_reduce", "shard", "reduce_scatter", "all_gather"};
  std::set<std::string> actual;
  for (const auto &[name, kernel] : cpuKernels()) {
    actual.insert(name);
    EXPECT_TRUE(kernel.check && kernel.run) << name;
  }
  EXPECT_EQ(actual, expected);
}

TEST(KernelTable, IsTheCpuTargetsContractsWithRunFunctions) {
  // The compiler plans with targetContracts("cpu"); the loader checks with this table.
  const KernelTable &contracts = *targetContracts(kCpuTarget);
  for (const auto &[name, kernel] : cpuKernels()) {
    ASSERT_TRUE(contracts.count(name)) << name;
    EXPECT_EQ(kernel.check, contracts.at(name).check) << name;
    EXPECT_EQ(kernel.workspace, contracts.at(name).workspace) << name;
  }
}

TEST(Binary, AddBroadcastsARow) {
  EXPECT_EQ(run1("add", {f32({2, 2}, {1, 2, 3, 4}), f32({2}, {10, 20})}, DType::F32, {2, 2}),
            (std::vector<double>{11, 22, 13, 24}));
}

TEST(Binary, IntegerDivisionTruncatesAndNeverTraps) {
  OwnedTensor lhs = i64({6}, {7, -7, 7, -7, 5, 0});
  OwnedTensor rhs = i64({6}, {-2, 2, 0, -1, 5, 0});
  EXPECT_EQ(run1("div", {lhs, rhs}, DType::I64, {6}), (std::vector<double>{-3, -3, 0, 7, 1, 0}));
  OwnedTensor minimum(DType::I64, {1});
  minimum.as<int64_t>()[0] = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(run1("div", {minimum, i64({1}, {-1})}, DType::I64, {1})[0], kInt64Min);
  OwnedTensor small = tensor(DType::I32, {1}, {-2147483648.0});
  EXPECT_EQ(run1("div", {small, tensor(DType::I32, {1}, {-1})}, DType::I32, {1})[0], -2147483648.0);
}

TEST(Binary, IntegerArithmeticWraps) {
  OwnedTensor maximum(DType::I64, {1});
  maximum.as<int64_t>()[0] = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(run1("add", {maximum, i64({1}, {1})}, DType::I64, {1})[0], kInt64Min);
  EXPECT_EQ(run1("neg", {tensor(DType::I32, {1}, {-2147483648.0})}, DType::I32, {1})[0],
            -2147483648.0);
}

TEST(Binary, IntegerPowerWithNegativeExponents) {
  OwnedTensor base = i64({5}, {2, -1, -1, 1, 0});
  OwnedTensor exponent = i64({5}, {-1, -3, -2, -5, -1});
  EXPECT_EQ(run1("pow", {base, exponent}, DType::I64, {5}), (std::vector<double>{0, -1, 1, 1, 0}));
  EXPECT_EQ(run1("pow", {i64({2}, {3, -2}), i64({2}, {4, 3})}, DType::I64, {2}),
            (std::vector<double>{81, -8}));
}

TEST(Binary, WhereBroadcastsAllThree) {
  OwnedTensor condition = tensor(DType::Bool, {2, 1}, {1, 0});
  EXPECT_EQ(run1("where", {condition, f32({3}, {1, 2, 3}), f32({}, {-1})}, DType::F32, {2, 3}),
            (std::vector<double>{1, 2, 3, -1, -1, -1}));
}

TEST(Unary, ClipOnIntegersRoundsFractionalBoundsInward) {
  OwnedTensor x = i64({5}, {-3, 0, 1, 2, 3});
  EXPECT_EQ(run1("clip", {x}, DType::I64, {5}, attrs({{"min", 0.5}, {"max", 2.5}})),
            (std::vector<double>{1, 1, 1, 2, 2}));
  EXPECT_EQ(run1("clip", {x}, DType::I64, {5}, attrs({{"min", -1e30}, {"max", 1e30}})), x.values());
  // min > max: every element becomes max, as min(max(x, min), max) says.
  EXPECT_EQ(run1("clip", {f32({2}, {-5, 5})}, DType::F32, {2}, attrs({{"min", 3.0}, {"max", 1.0}})),
            (std::vector<double>{1, 1}));
}

TEST(Unary, CastFromFloatSaturatesAndMapsNaNToZero) {
  OwnedTensor x = f32({5}, {1e20, -1e20, NAN, 3e9, -2.5});
  EXPECT_EQ(run1("cast", {x}, DType::I64, {5}),
            (std::vector<double>{static_cast<double>(std::numeric_limits<int64_t>::max()),
                                 kInt64Min, 0, 3e9, -2}));
  EXPECT_EQ(run1("cast", {x}, DType::I32, {5}),
            (std::vector<double>{2147483647.0, -2147483648.0, 0, 2147483647.0, -2}));
}

TEST(Unary, ReluAndNotOnEdgeValues) {
  EXPECT_TRUE(std::isnan(run1("relu", {f32({1}, {NAN})}, DType::F32, {1})[0]));
  OwnedTensor flags(DType::Bool, {3});
  flags.as<uint8_t>()[0] = 0, flags.as<uint8_t>()[1] = 1, flags.as<uint8_t>()[2] = 7;
  EXPECT_EQ(run1("not", {flags}, DType::Bool, {3}), (std::vector<double>{1, 0, 0}));
}

TEST(Binary, MaxAndMinPropagateNaNFromEitherSide) {
  OwnedTensor a = f32({3}, {NAN, 1, 2}), b = f32({3}, {1, NAN, 3});
  for (const char *kernel : {"max", "min"}) {
    std::vector<double> y = run1(kernel, {a, b}, DType::F32, {3});
    EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1])) << kernel;
    EXPECT_EQ(y[2], std::string(kernel) == "max" ? 3 : 2) << kernel;
  }
}

TEST(Binary, PReluBroadcastsAPerChannelSlope) {
  OwnedTensor x = f32({2, 2}, {-2, 3, -4, 0}), slope = f32({2, 1}, {0.5, -1});
  EXPECT_EQ(run1("prelu", {x, slope}, DType::F32, {2, 2}), (std::vector<double>{-1, 3, 4, 0}));
}

TEST(Unary, AbsWrapsTheMostNegativeInteger) {
  EXPECT_EQ(run1("abs", {tensor(DType::I32, {2}, {-2147483648.0, -5})}, DType::I32, {2}),
            (std::vector<double>{-2147483648.0, 5}));
}

TEST(Unary, SoftplusDoesNotOverflowAndActivationsPassNaN) {
  EXPECT_EQ(run1("softplus", {f32({2}, {100, -100})}, DType::F32, {2})[0], 100.0);
  EXPECT_GT(run1("softplus", {f32({1}, {-100})}, DType::F32, {1})[0], 0.0);
  Attributes coefficients = attrs({{"alpha", 0.2}, {"beta", 0.5}});
  EXPECT_TRUE(std::isnan(run1("hard_sigmoid", {f32({1}, {NAN})}, DType::F32, {1}, coefficients)[0]));
  EXPECT_TRUE(std::isnan(run1("leaky_relu", {f32({1}, {NAN})}, DType::F32, {1},
                              attrs({{"alpha", 0.1}}))[0]));
}

TEST(Unary, TriluWithExtremeDiagonals) {
  OwnedTensor x = f32({2, 2}, {1, 2, 3, 4});
  int64_t huge = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(run1("trilu", {x}, DType::F32, {2, 2}, attrs({{"k", huge}, {"upper", int64_t{0}}})),
            x.values());
  EXPECT_EQ(run1("trilu", {x}, DType::F32, {2, 2}, attrs({{"k", -huge}, {"upper", int64_t{0}}})),
            (std::vector<double>{0, 0, 0, 0}));
}

TEST(Dropout, MaskIsAPureFunctionOfSeedAndIndex) {
  const int64_t n = 100000;
  std::vector<double> ones(n, 1.0);
  Attributes a = attrs({{"ratio", 0.3}, {"seed", int64_t{11}}});
  std::vector<double> y = run1("dropout", {f32({n}, ones)}, DType::F32, {n}, a);
  EXPECT_EQ(run1("dropout", {f32({n}, ones)}, DType::F32, {n}, a), y) << "not deterministic";
  // A prefix of the tensor draws the same mask: element i depends on i alone.
  std::vector<double> prefix =
      run1("dropout", {f32({1000}, std::vector<double>(1000, 1.0))}, DType::F32, {1000}, a);
  EXPECT_EQ(prefix, std::vector<double>(y.begin(), y.begin() + 1000));
  int64_t dropped = 0;
  float scale = static_cast<float>(1.0 / 0.7);
  for (double v : y) {
    dropped += v == 0;
    EXPECT_TRUE(v == 0 || v == scale) << v;
  }
  EXPECT_NEAR(static_cast<double>(dropped) / n, 0.3, 0.01);
  std::vector<double> other = run1("dropout", {f32({n}, ones)}, DType::F32, {n},
                                   attrs({{"ratio", 0.3}, {"seed", int64_t{12}}}));
  EXPECT_NE(other, y) << "the seed does not change the mask";
}

TEST(MatMul, HandComputedAndEmptyContraction) {
  OwnedTensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  OwnedTensor b = f32({3, 2}, {7, 8, 9, 10, 11, 12});
  EXPECT_EQ(run1("matmul", {a, b}, DType::F32, {2, 2}), (std::vector<double>{58, 64, 139, 154}));
  // K = 0: the product is zeros, whatever the output held.
  std::vector<OwnedTensor> operands = {OwnedTensor(DType::F32, {2, 0}),
                                       OwnedTensor(DType::F32, {0, 2})};
  std::vector<OwnedTensor> outputs = {f32({2, 2}, {7, 7, 7, 7})};
  Attributes none;
  KernelCall call = makeCall(operands, outputs, none);
  std::string error;
  ASSERT_TRUE(kernelNamed("matmul").check(call, error)) << error;
  ASSERT_TRUE(runWithWorkspace(kernelNamed("matmul"), call, error));
  EXPECT_EQ(outputs[0].values(), (std::vector<double>{0, 0, 0, 0}));
}

/// `value` with its last two dims swapped, by the transpose kernel.
OwnedTensor swapLastTwo(const OwnedTensor &value) {
  Shape shape = value.view().shape;
  std::vector<int64_t> perm(shape.size());
  for (size_t dim = 0; dim < perm.size(); ++dim)
    perm[dim] = static_cast<int64_t>(dim);
  std::swap(perm[perm.size() - 2], perm.back());
  std::swap(shape[shape.size() - 2], shape.back());
  return runKernel("transpose", {value}, {{DType::F32, shape}}, attrs({{"perm", perm}}))[0];
}

// Products large enough to split over threads (by rows and by columns, looped and stacked
// batches): the flags read the operands transposed in place, as a transposed copy would.
TEST(MatMul, TransposeFlagsMatchTransposedCopies) {
  struct Case {
    Shape lhs, rhs;
    bool transposeLhs, transposeRhs;
  };
  for (const Case &c :
       {Case{{64, 512}, {64, 96}, true, false}, Case{{64, 96}, {512, 96}, false, true},
        Case{{96, 64}, {512, 96}, true, true}, Case{{2, 64, 512}, {2, 96, 64}, true, true},
        Case{{4, 128, 64}, {96, 64}, false, true}}) {
    OwnedTensor a = randomF32(c.lhs, 1), b = randomF32(c.rhs, 2);
    OwnedTensor copyA = c.transposeLhs ? swapLastTwo(a) : a;
    OwnedTensor copyB = c.transposeRhs ? swapLastTwo(b) : b;
    Shape result = copyA.view().shape;
    result.back() = copyB.view().shape.back();
    std::vector<double> expected = run1("matmul", {copyA, copyB}, DType::F32, result);
    Attributes flags = attrs(
        {{"transpose_lhs", int64_t{c.transposeLhs}}, {"transpose_rhs", int64_t{c.transposeRhs}}});
    EXPECT_TRUE(closeTo(run1("matmul", {a, b}, DType::F32, result, flags), expected, 1e-5, 1e-5))
        << formatShape(c.lhs) << " x " << formatShape(c.rhs);
  }
}

TEST(Gather, OutOfRangeIndexIsARunErrorNotACrash) {
  OwnedTensor table = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  Attributes a = attrs({{"axis", int64_t{0}}});
  for (double bad : {3.0, -4.0, 1e15}) {
    std::vector<OwnedTensor> inputs = {table, i64({2}, {0, bad})};
    std::vector<OwnedTensor> outputs = {OwnedTensor(DType::F32, {2, 2})};
    KernelCall call = makeCall(inputs, outputs, a);
    std::string error;
    ASSERT_TRUE(kernelNamed("gather").check(call, error)) << error;
    EXPECT_FALSE(runWithWorkspace(kernelNamed("gather"), call, error));
    EXPECT_NE(error.find("out of range"), std::string::npos) << error;
  }
  EXPECT_EQ(run1("gather", {table, tensor(DType::I32, {2}, {-3, 2})}, DType::F32, {2, 2}, a),
            (std::vector<double>{1, 2, 5, 6}));
}

TEST(Pooling, AveragePoolWithDilation) {
  Attributes a = attrs({{"kernel_shape", std::vector<int64_t>{2}},
                        {"strides", std::vector<int64_t>{1}},
                        {"pads", std::vector<int64_t>{0, 0}},
                        {"dilations", std::vector<int64_t>{2}},
                        {"ceil_mode", int64_t{0}},
                        {"count_include_pad", int64_t{0}}});
  EXPECT_EQ(run1("avg_pool", {f32({1, 1, 5}, {1, 2, 3, 4, 5})}, DType::F32, {1, 1, 3}, a),
            (std::vector<double>{2, 3, 4}));
}

TEST(Pooling, WindowsEntirelyInPadding) {
  Attributes a = attrs({{"kernel_shape", std::vector<int64_t>{1}},
                        {"strides", std::vector<int64_t>{1}},
                        {"pads", std::vector<int64_t>{2, 0}},
                        {"dilations", std::vector<int64_t>{1}},
                        {"ceil_mode", int64_t{0}},
                        {"count_include_pad", int64_t{1}}});
  OwnedTensor x = f32({1, 1, 1}, {5});
  EXPECT_EQ(run1("avg_pool", {x}, DType::F32, {1, 1, 3}, a), (std::vector<double>{0, 0, 5}));
  a.set("count_include_pad", int64_t{0});
  EXPECT_EQ(run1("avg_pool", {x}, DType::F32, {1, 1, 3}, a), (std::vector<double>{0, 0, 5}));
  EXPECT_EQ(run1("max_pool", {x}, DType::F32, {1, 1, 3}, a),
            (std::vector<double>{-kInf, -kInf, 5}));
}

TEST(Reduction, EmptyReductionsGiveTheIdentity) {
  OwnedTensor empty(DType::F32, {2, 0});
  Attributes a = attrs({{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}});
  EXPECT_EQ(run1("reduce_sum", {empty}, DType::F32, {2}, a), (std::vector<double>{0, 0}));
  EXPECT_EQ(run1("reduce_max", {empty}, DType::F32, {2}, a), (std::vector<double>{-kInf, -kInf}));
  EXPECT_TRUE(std::isnan(run1("reduce_mean", {empty}, DType::F32, {2}, a)[0]));
  EXPECT_EQ(run1("reduce_mean", {OwnedTensor(DType::I64, {2, 0})}, DType::I64, {2}, a),
            (std::vector<double>{0, 0}));
}

TEST(LossScale, NonFiniteCheckFindsOneNaNInALargeGradient) {
  // Large enough to be split over threads: the one NaN is the last element.
  std::vector<double> values(100000, 1.0);
  EXPECT_EQ(run1("non_finite_check", {f32({100000}, values)}, DType::F32, {}),
            (std::vector<double>{0}));
  values.back() = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(run1("non_finite_check", {f32({3}, {1, 2, 3}), f32({100000}, values)}, DType::F32, {}),
            (std::vector<double>{1}));
}

TEST(Reduction, IntegerMeanTruncatesTowardZero) {
  Attributes a = attrs({{"axes", std::vector<int64_t>{0}}, {"keepdims", int64_t{1}}});
  EXPECT_EQ(run1("reduce_mean", {i64({2}, {-7, 2})}, DType::I64, {1}, a),
            (std::vector<double>{-2}));
}

TEST(Layout, CopyMovesBytesBetweenEqualSizes) {
  OwnedTensor x = f32({4}, {1.5, -2, 3, 4});
  std::vector<OwnedTensor> out = runKernel("copy", {x}, {{DType::F32, {2, 2}}});
  EXPECT_EQ(out[0].values(), x.values());
  out = runKernel("copy", {x}, {{DType::I32, {4}}});
  EXPECT_EQ(std::memcmp(out[0].bytes.data(), x.bytes.data(), 16), 0);
}

TEST(Layout, EmptySlicesAndSplits) {
  OwnedTensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Attributes a = attrs({{"starts", std::vector<int64_t>{0, -1}},
                        {"limits", std::vector<int64_t>{2, -1}},
                        {"steps", std::vector<int64_t>{1, -1}}});
  EXPECT_TRUE(run1("slice", {x}, DType::F32, {2, 0}, a).empty());
  Attributes s = attrs({{"axis", int64_t{0}}, {"sizes", std::vector<int64_t>{}}});
  EXPECT_TRUE(runKernel("split", {OwnedTensor(DType::F32, {0, 3})}, {}, s).empty());
}

TEST(Layout, GatherWithAScalarIndexDropsTheAxis) {
  OwnedTensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(run1("gather", {x, i64({}, {-2})}, DType::F32, {2}, attrs({{"axis", int64_t{1}}})),
            (std::vector<double>{2, 5}));
}

TEST(Optimizers, AGateOffLeavesParameterAndStateAndOnIsTheUngatedUpdate) {
  // Accumulation's micro-batches before the last, and the steps fp16's scaler skips, turn the
  // update's gate off: the outputs are the inputs (the plan may or may not place them together).
  OwnedTensor param = f32({3}, {1, -2, 3}), grad = f32({3}, {0.5, 0.25, -1});
  OwnedTensor m = f32({3}, {0.1, 0.2, 0.3}), v = f32({3}, {0.01, 0.02, 0.03});
  OwnedTensor lr = f32({}, {0.1}), step = f32({}, {3}), off = f32({}, {0}), on = f32({}, {1});
  Attributes adamw = attrs({{"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8},
                            {"weight_decay", 0.01}});
  std::vector<std::pair<DType, Shape>> three(3, {DType::F32, {3}});
  std::vector<OwnedTensor> kept = runKernel("adamw_update", {param, grad, m, v, lr, step, off},
                                            three, adamw);
  EXPECT_EQ(kept[0].values(), param.values());
  EXPECT_EQ(kept[1].values(), m.values());
  EXPECT_EQ(kept[2].values(), v.values());
  std::vector<OwnedTensor> gated =
      runKernel("adamw_update", {param, grad, m, v, lr, step, on}, three, adamw);
  std::vector<OwnedTensor> plain = runKernel("adamw_update", {param, grad, m, v, lr, step}, three,
                                             adamw);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(gated[i].values(), plain[i].values());
  EXPECT_NE(plain[0].values(), param.values());

  Attributes sgd = attrs({{"momentum", 0.9}, {"weight_decay", 0.0}, {"nesterov", false}});
  std::vector<std::pair<DType, Shape>> two(2, {DType::F32, {3}});
  std::vector<OwnedTensor> still = runKernel("sgd_update", {param, grad, m, lr, off}, two, sgd);
  EXPECT_EQ(still[0].values(), param.values());
  EXPECT_EQ(still[1].values(), m.values());
  EXPECT_EQ(runKernel("sgd_update", {param, grad, m, lr, on}, two, sgd)[0].values(),
            runKernel("sgd_update", {param, grad, m, lr}, two, sgd)[0].values());
}

TEST(Optimizers, AdamW8bitIsAdamWOnBlockwiseQuantizedMoments) {
  // Two steps on 300 elements (a block of 256 and a partial one) from a zero state: each
  // element's moments are the dequantized codes, updated as torch.optim.AdamW in f32, the
  // parameter from those, and the moments quantized again with their block's new absmax.
  const int64_t n = 300;
  const DynamicCode signedCode = makeDynamicCode(true), unsignedCode = makeDynamicCode(false);
  OwnedTensor param = randomF32({n}, 1), lr = f32({}, {1e-2});
  OwnedTensor m(DType::U8, {n}), v(DType::U8, {n}), mMax = f32({2}, {0, 0}), vMax = f32({2}, {0, 0});
  std::memset(m.as<uint8_t>(), 0, n);
  std::memset(v.as<uint8_t>(), 0, n);
  const double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, decay = 0.01;
  Attributes attributes = attrs({{"beta1", beta1}, {"beta2", beta2}, {"eps", eps},
                                 {"weight_decay", decay}});
  std::vector<std::pair<DType, Shape>> types = {{DType::F32, {n}}, {DType::U8, {n}},
                                                {DType::U8, {n}}, {DType::F32, {2}},
                                                {DType::F32, {2}}};
  for (int t = 1; t <= 2; ++t) {
    OwnedTensor grad = randomF32({n}, 10 + t), step = f32({}, {double(t)});
    std::vector<OwnedTensor> out =
        runKernel("adamw8bit_update", {param, grad, m, v, mMax, vMax, lr, step}, types,
                  attributes);
    float stepSize = static_cast<float>(1e-2 / (1 - std::pow(beta1, t)));
    float correction = static_cast<float>(std::sqrt(1 - std::pow(beta2, t)));
    float shrink = static_cast<float>(1 - 1e-2 * decay);
    for (int64_t block = 0; block < 2; ++block) {
      int64_t begin = block * 256, count = std::min<int64_t>(256, n - begin);
      std::vector<float> first(count), second(count);
      for (int64_t j = 0; j < count; ++j) {
        int64_t i = begin + j;
        float g = grad.as<float>()[i];
        first[j] = dequantize(signedCode, m.as<uint8_t>()[i], mMax.as<float>()[block]) * 0.9f +
                   (1.0f - 0.9f) * g;
        second[j] =
            dequantize(unsignedCode, v.as<uint8_t>()[i], vMax.as<float>()[block]) * 0.999f +
            (1.0f - 0.999f) * g * g;
        float p = param.as<float>()[i] * shrink -
                  stepSize * (first[j] / (std::sqrt(second[j]) / correction + 1e-8f));
        EXPECT_EQ(out[0].as<float>()[i], p) << "step " << t << " element " << i;
      }
      std::vector<uint8_t> mCodes(count), vCodes(count);
      EXPECT_EQ(out[3].as<float>()[block],
                quantizeBlock(signedCode, first.data(), count, mCodes.data()));
      EXPECT_EQ(out[4].as<float>()[block],
                quantizeBlock(unsignedCode, second.data(), count, vCodes.data()));
      for (int64_t j = 0; j < count; ++j) {
        EXPECT_EQ(out[1].as<uint8_t>()[begin + j], mCodes[j]);
        EXPECT_EQ(out[2].as<uint8_t>()[begin + j], vCodes[j]);
      }
    }
    param = std::move(out[0]);
    m = std::move(out[1]);
    v = std::move(out[2]);
    mMax = std::move(out[3]);
    vMax = std::move(out[4]);
  }
  // The gate off leaves all five as they are.
  OwnedTensor grad = randomF32({n}, 20), step = f32({}, {3}), off = f32({}, {0});
  std::vector<OwnedTensor> kept = runKernel(
      "adamw8bit_update", {param, grad, m, v, mMax, vMax, lr, step, off}, types, attributes);
  EXPECT_EQ(kept[0].values(), param.values());
  EXPECT_EQ(kept[1].values(), m.values());
  EXPECT_EQ(kept[3].values(), mMax.values());
}

} // namespace
} // namespace memc::kernels::testing
