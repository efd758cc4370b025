//===- KernelCheckTest.cpp - check() rejects malformed calls --------------===//
//
// Plans are untrusted: check() must reject every call its kernel cannot compute, with a
// message, and never crash; run() after a passing check() must not crash on any data. The
// last test mutates every reference call (shapes, dtypes, attributes, operand counts) and runs
// whatever check() lets through on random bytes.
//
//===----------------------------------------------------------------------===//
#include "KernelTestSupport.h"
#include "ReferenceCases.h"

#include <cstdlib>
#include <iterator>
#include <limits>
#include <random>

namespace memc::kernels::testing {
namespace {

using Types = std::vector<std::pair<DType, Shape>>;

const DType F32 = DType::F32, F16 = DType::F16, I64 = DType::I64, I32 = DType::I32,
            Bool = DType::Bool;

TEST(KernelCheck, EveryKernelRejectsAnEmptyCall) {
  for (const auto &[name, kernel] : cpuKernels()) {
    if (name == "concat" || name == "split")
      continue; // variadic: see below
    EXPECT_FALSE(checkError(name, {}, {}).empty()) << name;
    EXPECT_FALSE(checkError(name, {}, {{F32, {2}}}).empty()) << name;
  }
  EXPECT_FALSE(checkError("concat", {}, {{F32, {2}}}).empty());
  EXPECT_FALSE(checkError("split", {}, {}).empty());
}

TEST(KernelCheck, MalformedTensorsAreRejected) {
  EXPECT_REJECTED("invalid shape", "neg", {{F32, {2, -1}}}, {{F32, {2, -1}}});
  int64_t huge = int64_t{1} << 40;
  EXPECT_REJECTED("invalid shape", "neg", {{F32, {huge, huge}}}, {{F32, {huge, huge}}});
  EXPECT_REJECTED("unknown element type", "neg", {{static_cast<DType>(9), {2}}},
                  {{static_cast<DType>(9), {2}}});
  // Rows of the dtype table no kernel computes yet (8-bit states, packed 4-bit weights).
  for (DType storageOnly : {DType::U8, DType::I8, DType::NF4})
    EXPECT_REJECTED("storage-only element type", "neg", {{storageOnly, {2}}}, {{storageOnly, {2}}});
  EXPECT_REJECTED("expected 1 outputs", "exp", {{F32, {2}}}, {{F32, {2}}, {F32, {2}}});
}

TEST(KernelCheck, ElementwiseDTypesAndShapes) {
  EXPECT_REJECTED("element type", "exp", {{I64, {2}}}, {{I64, {2}}});
  EXPECT_REJECTED("element type", "not", {{F32, {2}}}, {{F32, {2}}});
  EXPECT_REJECTED("element type", "neg", {{Bool, {2}}}, {{Bool, {2}}});
  EXPECT_REJECTED("output has element type", "relu", {{F32, {2}}}, {{F16, {2}}});
  EXPECT_REJECTED("output has shape", "tanh", {{F32, {2, 3}}}, {{F32, {3, 2}}});
  EXPECT_REJECTED("output has shape", "cast", {{F32, {2}}}, {{I64, {3}}});
  EXPECT_TRUE(checkError("cast", {{F32, {2}}}, {{Bool, {2}}}).empty());
}

TEST(KernelCheck, BiasGelu) {
  EXPECT_TRUE(checkError("bias_gelu", {{F32, {2, 3}}, {F32, {3}}}, {{F32, {2, 3}}}).empty());
  EXPECT_TRUE(
      checkError("bias_gelu", {{DType::BF16, {2, 3}}, {F32, {3}}}, {{DType::BF16, {2, 3}}}).empty());
  EXPECT_REJECTED("bias shape [2,3] is not the last dimension of input [2,3]", "bias_gelu",
                  {{F32, {2, 3}}, {F32, {2, 3}}}, {{F32, {2, 3}}});
  EXPECT_REJECTED("bias shape [3] is not the last dimension of input []", "bias_gelu",
                  {{F32, {}}, {F32, {3}}}, {{F32, {}}});
  EXPECT_REJECTED("output has element type", "bias_gelu", {{DType::BF16, {2, 3}}, {F32, {3}}},
                  {{F32, {2, 3}}});
  EXPECT_REJECTED("bias has element type", "bias_gelu", {{F32, {2, 3}}, {I32, {3}}},
                  {{F32, {2, 3}}});
  EXPECT_REJECTED("approximate", "bias_gelu", {{F32, {2, 3}}, {F32, {3}}}, {{F32, {2, 3}}},
                  attrs({{"approximate", std::string("fast")}}));
  EXPECT_REJECTED("expected 2 inputs", "bias_gelu", {{F32, {2, 3}}}, {{F32, {2, 3}}});
}

TEST(KernelCheck, ElementwiseAttributes) {
  EXPECT_REJECTED("approximate", "gelu", {{F32, {2}}}, {{F32, {2}}},
                  attrs({{"approximate", std::string("fast")}}));
  EXPECT_REJECTED("must be a string", "gelu", {{F32, {2}}}, {{F32, {2}}},
                  attrs({{"approximate", int64_t{1}}}));
  EXPECT_REJECTED("must be a float", "clip", {{F32, {2}}}, {{F32, {2}}},
                  attrs({{"min", int64_t{0}}}));
  EXPECT_REJECTED("NaN", "clip", {{F32, {2}}}, {{F32, {2}}}, attrs({{"max", double(NAN)}}));
  EXPECT_REJECTED("missing attribute 'k'", "trilu", {{F32, {2, 2}}}, {{F32, {2, 2}}},
                  attrs({{"upper", int64_t{1}}}));
  EXPECT_REJECTED("0 or 1", "trilu", {{F32, {2, 2}}}, {{F32, {2, 2}}},
                  attrs({{"k", int64_t{0}}, {"upper", int64_t{2}}}));
  EXPECT_REJECTED("rank >= 2", "trilu", {{F32, {4}}}, {{F32, {4}}},
                  attrs({{"k", int64_t{0}}, {"upper", int64_t{1}}}));
  for (double ratio : {1.0, -0.1, double(NAN)})
    EXPECT_REJECTED("ratio", "dropout", {{F32, {2}}}, {{F32, {2}}},
                    attrs({{"ratio", ratio}, {"seed", int64_t{0}}}));
  EXPECT_REJECTED("seed", "dropout", {{F32, {2}}}, {{F32, {2}}}, attrs({{"ratio", 0.5}}));
}

TEST(KernelCheck, AttentionDropout) {
  // After q, k and v: an optional float mask, then an optional i64 salt (told apart by type).
  const Types qkv = {{F32, {1, 2, 8, 4}}, {F32, {1, 2, 8, 4}}, {F32, {1, 2, 8, 4}}};
  const Types outputs = {{F32, {1, 2, 8, 4}}, {F32, {1, 2, 8}}};
  auto with = [&](Types extra) {
    Types inputs = qkv;
    inputs.insert(inputs.end(), extra.begin(), extra.end());
    return inputs;
  };
  auto dropout = [](double ratio) {
    return attrs({{"causal", int64_t{0}}, {"scale", 0.5}, {"dropout_ratio", ratio},
                  {"seed", int64_t{3}}});
  };
  const std::pair<DType, Shape> mask = {F32, {1, 1, 1, 8}}, salt = {I64, {}};
  EXPECT_TRUE(checkError("flash_attention", with({salt}), outputs, dropout(0.1)).empty());
  EXPECT_TRUE(checkError("flash_attention", with({mask, salt}), outputs, dropout(0.1)).empty());
  EXPECT_REJECTED("dropout_ratio must be in [0, 1)", "flash_attention", with({salt}), outputs,
                  dropout(1.0));
  EXPECT_REJECTED("salt", "flash_attention", with({{I64, {1}}}), outputs, dropout(0.1));
  EXPECT_REJECTED("at most a mask and then an i64 salt", "flash_attention", with({mask, mask}),
                  outputs, dropout(0.1));
  EXPECT_REJECTED("seed", "flash_attention", with({salt}), outputs,
                  attrs({{"causal", int64_t{0}}, {"scale", 0.5}, {"dropout_ratio", 0.1}}));
}

TEST(KernelCheck, Broadcasting) {
  EXPECT_REJECTED("do not broadcast", "add", {{F32, {2, 3}}, {F32, {2}}}, {{F32, {2, 3}}});
  EXPECT_REJECTED("output has shape", "add", {{F32, {2, 3}}, {F32, {3}}}, {{F32, {3}}});
  EXPECT_REJECTED("output has shape", "mul", {{F32, {3}}, {F32, {}}}, {{F32, {2, 3}}});
  EXPECT_REJECTED("rhs has element type", "sub", {{F32, {3}}, {F16, {3}}}, {{F32, {3}}});
  EXPECT_REJECTED("element type", "add", {{Bool, {3}}, {Bool, {3}}}, {{Bool, {3}}});
  EXPECT_REJECTED("output has element type", "less", {{F32, {3}}, {F32, {3}}}, {{F32, {3}}});
  EXPECT_REJECTED("condition has element type", "where", {{F32, {3}}, {F32, {3}}, {F32, {3}}},
                  {{F32, {3}}});
  EXPECT_REJECTED("on_false", "where", {{Bool, {3}}, {F32, {3}}, {I64, {3}}}, {{F32, {3}}});
  EXPECT_REJECTED("do not broadcast", "where", {{Bool, {2}}, {F32, {3}}, {F32, {3}}}, {{F32, {3}}});
  EXPECT_REJECTED("cannot broadcast", "broadcast_to", {{F32, {3}}}, {{F32, {4}}});
  EXPECT_REJECTED("cannot broadcast", "broadcast_to", {{F32, {2, 3}}}, {{F32, {3}}});
}

TEST(KernelCheck, MatMul) {
  EXPECT_REJECTED("contraction", "matmul", {{F32, {2, 3}}, {F32, {4, 5}}}, {{F32, {2, 5}}});
  EXPECT_REJECTED("rank >= 1", "matmul", {{F32, {}}, {F32, {3}}}, {{F32, {}}});
  EXPECT_REJECTED("batch dimensions", "matmul", {{F32, {2, 2, 3}}, {F32, {3, 3, 4}}},
                  {{F32, {2, 2, 4}}});
  EXPECT_REJECTED("output has shape", "matmul", {{F32, {3}}, {F32, {3, 4}}}, {{F32, {1, 4}}});
  EXPECT_REJECTED("element type", "matmul", {{Bool, {2, 2}}, {Bool, {2, 2}}}, {{Bool, {2, 2}}});
  EXPECT_REJECTED("2^31", "matmul", {{F32, {1, int64_t{1} << 32}}, {F32, {int64_t{1} << 32, 1}}},
                  {{F32, {1, 1}}});
  // Transposed operands: read with their last two dims swapped, matrices only, flags 0 or 1.
  Attributes transposedRhs = attrs({{"transpose_rhs", int64_t{1}}});
  EXPECT_ACCEPTED("matmul", {{F32, {2, 3}}, {F32, {5, 3}}}, {{F32, {2, 5}}}, transposedRhs);
  EXPECT_REJECTED("contraction dimensions differ: [2,3] x [3,5]^T", "matmul",
                  {{F32, {2, 3}}, {F32, {3, 5}}}, {{F32, {2, 5}}}, transposedRhs);
  EXPECT_REJECTED("transposed matmul operand must have rank >= 2", "matmul",
                  {{F32, {3}}, {F32, {5, 3}}}, {{F32, {5}}},
                  attrs({{"transpose_lhs", int64_t{1}}}));
  EXPECT_REJECTED("must be 0 or 1", "matmul", {{F32, {2, 3}}, {F32, {3, 5}}}, {{F32, {2, 5}}},
                  attrs({{"transpose_lhs", int64_t{2}}}));
  EXPECT_REJECTED("2^31", "matmul", {{F32, {int64_t{1} << 32, 1}}, {F32, {int64_t{1} << 32, 1}}},
                  {{F32, {1, 1}}}, attrs({{"transpose_lhs", int64_t{1}}}));
}

TEST(KernelCheck, Normalization) {
  EXPECT_REJECTED("axis", "softmax", {{F32, {2, 3}}}, {{F32, {2, 3}}},
                  attrs({{"axis", int64_t{2}}}));
  EXPECT_REJECTED("axis", "log_softmax", {{F32, {2, 3}}}, {{F32, {2, 3}}},
                  attrs({{"axis", int64_t{-1}}}));
  EXPECT_REJECTED("element type", "softmax", {{I64, {2}}}, {{I64, {2}}},
                  attrs({{"axis", int64_t{0}}}));
  Attributes ln = attrs({{"axis", int64_t{1}}, {"epsilon", 1e-5}});
  EXPECT_REJECTED("scale has shape", "layer_norm", {{F32, {2, 3, 4}}, {F32, {4}}},
                  {{F32, {2, 3, 4}}}, ln);
  EXPECT_REJECTED("bias has shape", "layer_norm", {{F32, {2, 4}}, {F32, {4}}, {F32, {2}}},
                  {{F32, {2, 4}}}, ln);
  EXPECT_REJECTED("expected 2 to 3 inputs", "layer_norm", {{F32, {2, 4}}}, {{F32, {2, 4}}}, ln);
  EXPECT_REJECTED("epsilon", "layer_norm", {{F32, {2, 4}}, {F32, {4}}}, {{F32, {2, 4}}},
                  attrs({{"axis", int64_t{1}}, {"epsilon", -1.0}}));
  Types pair = {{F32, {2, 4}}, {F32, {2, 4}}};
  EXPECT_TRUE(checkError("add_layer_norm", {{F32, {2, 4}}, {F32, {2, 4}}, {F32, {4}}}, pair, ln)
                  .empty());
  EXPECT_REJECTED("rhs has shape", "add_layer_norm", {{F32, {2, 4}}, {F32, {4}}, {F32, {4}}},
                  pair, ln);
  EXPECT_REJECTED("rhs has element type", "add_layer_norm",
                  {{F32, {2, 4}}, {F16, {2, 4}}, {F32, {4}}}, pair, ln);
  EXPECT_REJECTED("sum has shape", "add_layer_norm", {{F32, {2, 4}}, {F32, {2, 4}}, {F32, {4}}},
                  {{F32, {8}}, {F32, {2, 4}}}, ln);
  EXPECT_REJECTED("scale has shape", "add_layer_norm",
                  {{F32, {2, 4}}, {F32, {2, 4}}, {F32, {2}}}, pair, ln);
  EXPECT_REJECTED("output has element type", "add_layer_norm",
                  {{F32, {2, 4}}, {F32, {2, 4}}, {F32, {4}}}, {{F32, {2, 4}}, {F16, {2, 4}}}, ln);
  EXPECT_REJECTED("expected 2 outputs", "add_layer_norm",
                  {{F32, {2, 4}}, {F32, {2, 4}}, {F32, {4}}}, {{F32, {2, 4}}}, ln);
  Attributes rms = attrs({{"axis", int64_t{2}}, {"epsilon", 1e-6}});
  EXPECT_TRUE(checkError("rms_norm", {{F16, {2, 3, 4}}, {F32, {4}}}, {{F16, {2, 3, 4}}}, rms)
                  .empty());
  EXPECT_REJECTED("rms_norm scale shape [3,4] differs from the normalized shape [4]", "rms_norm",
                  {{F32, {2, 3, 4}}, {F32, {3, 4}}}, {{F32, {2, 3, 4}}}, rms);
  EXPECT_REJECTED("rms_norm axis 3 out of range", "rms_norm", {{F32, {2, 3, 4}}, {F32, {4}}},
                  {{F32, {2, 3, 4}}}, attrs({{"axis", int64_t{3}}, {"epsilon", 1e-6}}));
  EXPECT_REJECTED("output has element type", "rms_norm", {{F16, {2, 3, 4}}, {F32, {4}}},
                  {{F32, {2, 3, 4}}}, rms);
  EXPECT_REJECTED("expected 2 inputs", "rms_norm",
                  {{F32, {2, 3, 4}}, {F32, {4}}, {F32, {4}}}, {{F32, {2, 3, 4}}}, rms);
  EXPECT_REJECTED("epsilon", "rms_norm", {{F32, {2, 4}}, {F32, {4}}}, {{F32, {2, 4}}},
                  attrs({{"axis", int64_t{1}}, {"epsilon", -1.0}}));
  Attributes bn = attrs({{"epsilon", 1e-5}, {"momentum", 0.1}, {"training", int64_t{0}}});
  Types stats(4, {F32, {3}});
  Types bnInputs = {{F32, {2, 3, 4}}};
  bnInputs.insert(bnInputs.end(), stats.begin(), stats.end());
  EXPECT_TRUE(checkError("batch_norm", bnInputs, {{F32, {2, 3, 4}}}, bn).empty());
  bnInputs[4] = {F32, {4}};
  EXPECT_REJECTED("var has shape", "batch_norm", bnInputs, {{F32, {2, 3, 4}}}, bn);
  bnInputs[4] = {I64, {3}};
  EXPECT_REJECTED("var has element type", "batch_norm", bnInputs, {{F32, {2, 3, 4}}}, bn);
  bnInputs[4] = {F32, {3}};
  EXPECT_REJECTED("momentum", "batch_norm", bnInputs, {{F32, {2, 3, 4}}},
                  attrs({{"epsilon", 1e-5}, {"training", int64_t{0}}}));
}

TEST(KernelCheck, Reductions) {
  auto reduce = [](std::vector<int64_t> axes, int64_t keep) {
    return attrs({{"axes", std::move(axes)}, {"keepdims", keep}});
  };
  EXPECT_REJECTED("sorted, unique", "reduce_sum", {{F32, {2, 3}}}, {{F32, {}}}, reduce({1, 0}, 0));
  EXPECT_REJECTED("sorted, unique", "reduce_sum", {{F32, {2, 3}}}, {{F32, {2}}}, reduce({2}, 0));
  EXPECT_REJECTED("sorted, unique", "reduce_max", {{F32, {2, 3}}}, {{F32, {2}}}, reduce({1, 1}, 0));
  EXPECT_REJECTED("output has shape", "reduce_mean", {{F32, {2, 3}}}, {{F32, {2}}}, reduce({1}, 1));
  EXPECT_REJECTED("keepdims", "reduce_sum", {{F32, {2, 3}}}, {{F32, {2}}},
                  attrs({{"axes", std::vector<int64_t>{1}}}));
  EXPECT_REJECTED("integer list", "reduce_sum", {{F32, {2, 3}}}, {{F32, {2}}},
                  attrs({{"axes", int64_t{1}}, {"keepdims", int64_t{0}}}));
}

TEST(KernelCheck, Layout) {
  EXPECT_REJECTED("permutation", "transpose", {{F32, {2, 3}}}, {{F32, {3, 2}}},
                  attrs({{"perm", std::vector<int64_t>{1, 1}}}));
  EXPECT_REJECTED("not a permutation", "transpose", {{F32, {2, 3}}}, {{F32, {3, 2}}},
                  attrs({{"perm", std::vector<int64_t>{1}}}));
  EXPECT_REJECTED("output has shape", "transpose", {{F32, {2, 3}}}, {{F32, {2, 3}}},
                  attrs({{"perm", std::vector<int64_t>{1, 0}}}));
  EXPECT_REJECTED("element counts differ", "reshape", {{F32, {2, 3}}}, {{F32, {5}}});
  EXPECT_REJECTED("output has element type", "reshape", {{F32, {2, 3}}}, {{I32, {6}}});
  EXPECT_REJECTED("byte sizes differ", "copy", {{F32, {2}}}, {{F16, {2}}});
  EXPECT_REJECTED("differ outside axis", "concat", {{F32, {2, 3}}, {F32, {3, 3}}}, {{F32, {2, 6}}},
                  attrs({{"axis", int64_t{1}}}));
  EXPECT_REJECTED("input 1 has element type", "concat", {{F32, {2}}, {I64, {2}}}, {{F32, {4}}},
                  attrs({{"axis", int64_t{0}}}));
  EXPECT_REJECTED("axis", "concat", {{F32, {2}}}, {{F32, {2}}}, attrs({{"axis", int64_t{1}}}));
  Attributes split = attrs({{"axis", int64_t{0}}, {"sizes", std::vector<int64_t>{1, 2}}});
  EXPECT_REJECTED("add up", "split", {{F32, {4}}}, {{F32, {1}}, {F32, {2}}}, split);
  EXPECT_REJECTED("needs as many outputs", "split", {{F32, {3}}}, {{F32, {1}}}, split);
  EXPECT_REJECTED("non-negative", "split", {{F32, {3}}}, {{F32, {4}}, {F32, {0}}},
                  attrs({{"axis", int64_t{0}}, {"sizes", std::vector<int64_t>{4, -1}}}));
  auto slice = [](std::vector<int64_t> s, std::vector<int64_t> l, std::vector<int64_t> st) {
    return attrs({{"starts", std::move(s)}, {"limits", std::move(l)}, {"steps", std::move(st)}});
  };
  EXPECT_REJECTED("out of range", "slice", {{F32, {5}}}, {{F32, {1}}}, slice({0}, {6}, {1}));
  EXPECT_REJECTED("out of range", "slice", {{F32, {5}}}, {{F32, {0}}}, slice({0}, {0}, {0}));
  EXPECT_REJECTED("start -1 outside", "slice", {{F32, {5}}}, {{F32, {2}}}, slice({-1}, {1}, {1}));
  EXPECT_REJECTED("start 5 outside", "slice", {{F32, {5}}}, {{F32, {3}}}, slice({5}, {1}, {-1}));
  EXPECT_REJECTED("one start", "slice", {{F32, {5, 2}}}, {{F32, {5, 2}}}, slice({0}, {5}, {1}));
  EXPECT_TRUE(checkError("slice", {{F32, {5}}}, {{F32, {3}}}, slice({4}, {-1}, {-2})).empty());
  EXPECT_REJECTED("output has shape", "slice", {{F32, {5}}}, {{F32, {2}}}, slice({4}, {-1}, {-2}));
  EXPECT_REJECTED("indices has element type", "gather", {{F32, {3}}, {F32, {2}}}, {{F32, {2}}},
                  attrs({{"axis", int64_t{0}}}));
  EXPECT_REJECTED("axis", "gather", {{F32, {3}}, {I64, {2}}}, {{F32, {2}}},
                  attrs({{"axis", int64_t{1}}}));
  EXPECT_REJECTED("output has shape", "gather", {{F32, {3, 4}}, {I64, {2, 5}}}, {{F32, {2, 4}}},
                  attrs({{"axis", int64_t{0}}}));
}

TEST(KernelCheck, ConvolutionAndPooling) {
  Attributes conv = attrs({{"strides", std::vector<int64_t>{1, 1}},
                           {"pads", std::vector<int64_t>{0, 0, 0, 0}},
                           {"dilations", std::vector<int64_t>{1, 1}},
                           {"group", int64_t{2}}});
  EXPECT_TRUE(
      checkError("conv", {{F32, {1, 4, 5, 5}}, {F32, {6, 2, 3, 3}}}, {{F32, {1, 6, 3, 3}}}, conv)
          .empty());
  EXPECT_REJECTED("does not fit", "conv", {{F32, {1, 4, 5, 5}}, {F32, {6, 4, 3, 3}}},
                  {{F32, {1, 6, 3, 3}}}, conv);
  EXPECT_REJECTED("does not fit", "conv", {{F32, {1, 4, 5, 5}}, {F32, {5, 2, 3, 3}}},
                  {{F32, {1, 5, 3, 3}}}, conv);
  EXPECT_REJECTED("bias has shape", "conv", {{F32, {1, 4, 5, 5}}, {F32, {6, 2, 3, 3}}, {F32, {4}}},
                  {{F32, {1, 6, 3, 3}}}, conv);
  EXPECT_REJECTED("output has shape", "conv", {{F32, {1, 4, 5, 5}}, {F32, {6, 2, 3, 3}}},
                  {{F32, {1, 6, 5, 5}}}, conv);
  EXPECT_REJECTED("weight has element type", "conv", {{F32, {1, 4, 5, 5}}, {F16, {6, 2, 3, 3}}},
                  {{F32, {1, 6, 3, 3}}}, conv);
  EXPECT_REJECTED("window larger", "conv", {{F32, {1, 4, 2, 2}}, {F32, {6, 2, 3, 3}}},
                  {{F32, {1, 6, 0, 0}}}, conv);
  conv.set("group", int64_t{0});
  EXPECT_REJECTED("with group 0", "conv", {{F32, {1, 4, 5, 5}}, {F32, {6, 2, 3, 3}}},
                  {{F32, {1, 6, 3, 3}}}, conv);
  conv.set("group", std::numeric_limits<int64_t>::min());
  EXPECT_FALSE(
      checkError("conv", {{F32, {1, 4, 5, 5}}, {F32, {6, 2, 3, 3}}}, {{F32, {1, 6, 3, 3}}}, conv)
          .empty());
  Attributes pool = attrs({{"kernel_shape", std::vector<int64_t>{2, 2}},
                           {"strides", std::vector<int64_t>{2, 2}},
                           {"pads", std::vector<int64_t>{0, 0, 0, 0}},
                           {"dilations", std::vector<int64_t>{1, 1}},
                           {"ceil_mode", int64_t{0}}});
  EXPECT_TRUE(checkError("max_pool", {{F32, {1, 2, 4, 4}}}, {{F32, {1, 2, 2, 2}}}, pool).empty());
  EXPECT_REJECTED("count_include_pad", "avg_pool", {{F32, {1, 2, 4, 4}}}, {{F32, {1, 2, 2, 2}}},
                  pool);
  EXPECT_REJECTED("output has shape", "max_pool", {{F32, {1, 2, 4, 4}}}, {{F32, {1, 2, 3, 3}}},
                  pool);
  EXPECT_REJECTED("rank >= 3", "max_pool", {{F32, {4, 4}}}, {{F32, {2, 2}}}, pool);
  pool.set("strides", std::vector<int64_t>{2, 0});
  EXPECT_REJECTED("positive", "max_pool", {{F32, {1, 2, 4, 4}}}, {{F32, {1, 2, 2, 2}}}, pool);
  pool.set("strides", std::vector<int64_t>{2, int64_t{1} << 40});
  EXPECT_REJECTED("2^30", "max_pool", {{F32, {1, 2, 4, 4}}}, {{F32, {1, 2, 2, 1}}}, pool);
  pool.set("strides", std::vector<int64_t>{2});
  EXPECT_REJECTED("spatial dimensions", "max_pool", {{F32, {1, 2, 4, 4}}}, {{F32, {1, 2, 2, 2}}},
                  pool);
}

/// Random bytes with the tensor's shape.
OwnedTensor randomTensor(DType dtype, const Shape &shape, std::mt19937 &random) {
  OwnedTensor t(dtype, shape);
  for (uint8_t &byte : t.bytes)
    byte = static_cast<uint8_t>(random());
  return t;
}

/// One random change to a call: a dimension, a dtype, an attribute or the operand count.
void mutate(KernelCall &call, Attributes &attributes, std::mt19937 &random) {
  auto pick = [&](size_t n) { return static_cast<size_t>(random() % n); };
  const int64_t values[] = {-2, -1, 0, 1, 2, 3, 7, int64_t{1} << 33};
  std::vector<TensorView *> tensors;
  for (TensorView &t : call.inputs)
    tensors.push_back(&t);
  for (TensorView &t : call.outputs)
    tensors.push_back(&t);
  switch (pick(6)) {
  case 0: { // a dimension
    TensorView *t = tensors[pick(tensors.size())];
    if (!t->shape.empty())
      t->shape[pick(t->shape.size())] = values[pick(6)];
    break;
  }
  case 1: // a rank
    tensors[pick(tensors.size())]->shape.push_back(values[pick(5) + 1]);
    break;
  case 2: // a dtype
    tensors[pick(tensors.size())]->dtype = static_cast<DType>(pick(7));
    break;
  case 3: { // an integer attribute, or one element of a list
    if (attributes.all().empty())
      break;
    auto it = attributes.all().begin();
    std::advance(it, pick(attributes.all().size()));
    std::string name = it->first;
    AttributeValue value = it->second;
    if (auto *list = std::get_if<std::vector<int64_t>>(&value)) {
      if (!list->empty())
        (*list)[pick(list->size())] = values[pick(8)];
      else
        list->push_back(values[pick(8)]);
    } else if (std::holds_alternative<int64_t>(value)) {
      value = values[pick(8)];
    } else if (std::holds_alternative<double>(value)) {
      value = pick(2) ? AttributeValue(int64_t{1}) : AttributeValue(-0.5);
    }
    attributes.set(name, value);
    break;
  }
  case 4: { // drop an attribute
    if (attributes.all().empty())
      break;
    Attributes fewer;
    size_t skip = pick(attributes.all().size()), i = 0;
    for (const auto &[name, value] : attributes.all())
      if (i++ != skip)
        fewer.set(name, value);
    attributes = fewer;
    break;
  }
  default: // an operand more or less
    if (pick(2) && !call.inputs.empty())
      call.inputs.pop_back();
    else
      call.inputs.push_back(call.inputs.empty() ? TensorView{nullptr, DType::F32, {2}}
                                                : call.inputs.back());
  }
}

TEST(KernelCheck, MutatedReferenceCallsNeverCrash) {
  std::mt19937 random(1234);
  const char *rounds = std::getenv("MEMC_KERNEL_FUZZ_ROUNDS"); // for longer runs by hand
  int roundsPerCase = rounds ? std::max(1, std::atoi(rounds)) : 40;
  int accepted = 0, total = 0;
  for (const ReferenceCase &c : references()) {
    for (int round = 0; round < roundsPerCase; ++round) {
      Attributes attributes = c.attributes;
      KernelCall call = makeCall(c.inputs, c.outputs, attributes);
      for (int m = 0, count = 1 + static_cast<int>(random() % 3); m < count; ++m)
        mutate(call, attributes, random);
      call.attributes = &attributes;
      std::string error;
      const Kernel &kernel = kernelNamed(c.kernel);
      ++total;
      if (!kernel.check(call, error)) {
        EXPECT_FALSE(error.empty()) << c.name;
        continue;
      }
      ++accepted;
      // Passed: run on fresh random bytes of exactly the checked sizes.
      std::vector<OwnedTensor> buffers;
      for (TensorView &t : call.inputs) {
        buffers.push_back(randomTensor(t.dtype, t.shape, random));
        t.data = buffers.back().bytes.data();
      }
      for (TensorView &t : call.outputs) {
        buffers.push_back(randomTensor(t.dtype, t.shape, random));
        t.data = buffers.back().bytes.data();
      }
      runWithWorkspace(kernel, call, error);
    }
  }
  RecordProperty("accepted", accepted);
  EXPECT_GT(accepted, total / 20) << "the mutations rarely pass check(); the test is weak";
}

} // namespace
} // namespace memc::kernels::testing
