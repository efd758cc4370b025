//===- KernelBackwardCheckTest.cpp - backward kernels reject bad calls ----===//
//
// check() of the backward and loss kernels: each accepts the calls the training ops produce
// and rejects, with a message naming the problem, mismatched types and shapes, bad attributes
// and operand counts. Then run()'s data-dependent errors: gather indices and labels out of
// range fail the call with a message instead of writing out of bounds.
//
//===----------------------------------------------------------------------===//
#include "KernelTestSupport.h"

#include <limits>

namespace memc::kernels::testing {
namespace {

using Types = std::vector<std::pair<DType, Shape>>;
using Ints = std::vector<int64_t>;

const DType F32 = DType::F32, F16 = DType::F16, BF16 = DType::BF16, I64 = DType::I64,
            I32 = DType::I32;

TEST(KernelBackwardCheck, Activations) {
  Types same = {{F32, {2, 3}}, {F32, {2, 3}}};
  EXPECT_ACCEPTED("gelu_grad", same, {{F32, {2, 3}}});
  EXPECT_ACCEPTED("gelu_grad", same, {{F32, {2, 3}}},
                  attrs({{"approximate", std::string("tanh")}}));
  EXPECT_REJECTED("approximate", "gelu_grad", same, {{F32, {2, 3}}},
                  attrs({{"approximate", std::string("fast")}}));
  EXPECT_REJECTED("input has shape", "gelu_grad", {{F32, {2, 3}}, {F32, {3, 2}}}, {{F32, {2, 3}}});
  EXPECT_REJECTED("input has element type", "gelu_grad", {{F32, {2}}, {F16, {2}}}, {{F32, {2}}});
  EXPECT_REJECTED("grad has element type", "gelu_grad", {{I64, {2}}, {I64, {2}}}, {{I64, {2}}});
  EXPECT_REJECTED("result has element type", "gelu_grad", same, {{BF16, {2, 3}}});
  EXPECT_REJECTED("expected 2 inputs", "gelu_grad", {{F32, {2, 3}}}, {{F32, {2, 3}}});
  EXPECT_ACCEPTED("bias_gelu_grad", {{BF16, {2, 3}}, {BF16, {2, 3}}, {F32, {3}}},
                  {{BF16, {2, 3}}}, attrs({{"approximate", std::string("tanh")}}));
  EXPECT_REJECTED("bias shape [2] is not the last dimension of input [2,3]", "bias_gelu_grad",
                  {{F32, {2, 3}}, {F32, {2, 3}}, {F32, {2}}}, {{F32, {2, 3}}});
  EXPECT_REJECTED("input has shape", "bias_gelu_grad",
                  {{F32, {2, 3}}, {F32, {3, 2}}, {F32, {2}}}, {{F32, {2, 3}}});
  EXPECT_REJECTED("bias has element type", "bias_gelu_grad",
                  {{F32, {2, 3}}, {F32, {2, 3}}, {I64, {3}}}, {{F32, {2, 3}}});
  EXPECT_REJECTED("approximate", "bias_gelu_grad", {{F32, {2, 3}}, {F32, {2, 3}}, {F32, {3}}},
                  {{F32, {2, 3}}}, attrs({{"approximate", std::string("fast")}}));
  EXPECT_REJECTED("expected 3 inputs", "bias_gelu_grad", same, {{F32, {2, 3}}});
  for (const char *kernel : {"softmax_grad", "log_softmax_grad"}) {
    EXPECT_ACCEPTED(kernel, same, {{F32, {2, 3}}}, attrs({{"axis", int64_t{1}}}));
    EXPECT_REJECTED("missing attribute 'axis'", kernel, same, {{F32, {2, 3}}});
    EXPECT_REJECTED("axis 2 out of range", kernel, same, {{F32, {2, 3}}},
                    attrs({{"axis", int64_t{2}}}));
    EXPECT_REJECTED("axis -1 out of range", kernel, same, {{F32, {2, 3}}},
                    attrs({{"axis", int64_t{-1}}}));
    EXPECT_REJECTED("output has shape", kernel, {{F32, {2, 3}}, {F32, {2, 4}}}, {{F32, {2, 3}}},
                    attrs({{"axis", int64_t{1}}}));
    EXPECT_REJECTED("result has shape", kernel, same, {{F32, {3, 2}}},
                    attrs({{"axis", int64_t{1}}}));
  }
}

TEST(KernelBackwardCheck, Normalization) {
  Attributes layer = attrs({{"axis", int64_t{1}}, {"epsilon", 1e-5}});
  Types inputs = {{BF16, {2, 3, 4}}, {BF16, {2, 3, 4}}, {F16, {3, 4}}};
  Types outputs = {{BF16, {2, 3, 4}}, {F16, {3, 4}}, {F16, {3, 4}}};
  EXPECT_ACCEPTED("layer_norm_grad", inputs, outputs, layer);
  EXPECT_REJECTED("scale has shape", "layer_norm_grad",
                  {{F32, {2, 3, 4}}, {F32, {2, 3, 4}}, {F32, {4}}},
                  {{F32, {2, 3, 4}}, {F32, {4}}, {F32, {4}}}, layer);
  EXPECT_REJECTED("scale_grad has element type", "layer_norm_grad", inputs,
                  {{BF16, {2, 3, 4}}, {BF16, {3, 4}}, {F16, {3, 4}}}, layer);
  EXPECT_REJECTED("bias_grad has shape", "layer_norm_grad", inputs,
                  {{BF16, {2, 3, 4}}, {F16, {3, 4}}, {F16, {4}}}, layer);
  EXPECT_REJECTED("grad has element type", "layer_norm_grad",
                  {{F32, {2, 3, 4}}, {BF16, {2, 3, 4}}, {F16, {3, 4}}}, outputs, layer);
  EXPECT_REJECTED("input_grad has shape", "layer_norm_grad", inputs,
                  {{BF16, {6, 4}}, {F16, {3, 4}}, {F16, {3, 4}}}, layer);
  EXPECT_REJECTED("expected 3 outputs", "layer_norm_grad", inputs, {{BF16, {2, 3, 4}}}, layer);
  EXPECT_REJECTED("axis 3 out of range", "layer_norm_grad", inputs, outputs,
                  attrs({{"axis", int64_t{3}}, {"epsilon", 1e-5}}));
  EXPECT_REJECTED("epsilon", "layer_norm_grad", inputs, outputs,
                  attrs({{"axis", int64_t{1}}, {"epsilon", -1.0}}));
  EXPECT_REJECTED("missing attribute 'epsilon'", "layer_norm_grad", inputs, outputs,
                  attrs({{"axis", int64_t{1}}}));

  Attributes rms = attrs({{"axis", int64_t{2}}, {"epsilon", 1e-6}});
  Types rmsInputs = {{BF16, {2, 3, 4}}, {BF16, {2, 3, 4}}, {F32, {4}}};
  EXPECT_ACCEPTED("rms_norm_grad", rmsInputs, {{BF16, {2, 3, 4}}, {F32, {4}}}, rms);
  EXPECT_REJECTED("expected 2 outputs", "rms_norm_grad", rmsInputs,
                  {{BF16, {2, 3, 4}}, {F32, {4}}, {F32, {4}}}, rms);
  EXPECT_REJECTED("scale_grad has element type", "rms_norm_grad", rmsInputs,
                  {{BF16, {2, 3, 4}}, {BF16, {4}}}, rms);
  EXPECT_REJECTED("rms_norm scale shape [3,4] differs", "rms_norm_grad",
                  {{F32, {2, 3, 4}}, {F32, {2, 3, 4}}, {F32, {3, 4}}},
                  {{F32, {2, 3, 4}}, {F32, {3, 4}}}, rms);
  EXPECT_REJECTED("grad has element type", "rms_norm_grad",
                  {{F32, {2, 3, 4}}, {BF16, {2, 3, 4}}, {F32, {4}}},
                  {{BF16, {2, 3, 4}}, {F32, {4}}}, rms);

  Attributes batch = attrs({{"epsilon", 1e-5}});
  EXPECT_ACCEPTED("batch_norm_grad", {{F16, {2, 3, 4}}, {F16, {2, 3, 4}}, {F32, {3}}},
                  {{F16, {2, 3, 4}}, {F32, {3}}, {F32, {3}}}, batch);
  EXPECT_REJECTED("rank >= 2", "batch_norm_grad", {{F32, {3}}, {F32, {3}}, {F32, {3}}},
                  {{F32, {3}}, {F32, {3}}, {F32, {3}}}, batch);
  EXPECT_REJECTED("scale has shape", "batch_norm_grad", {{F32, {2, 3}}, {F32, {2, 3}}, {F32, {2}}},
                  {{F32, {2, 3}}, {F32, {2}}, {F32, {2}}}, batch);
  EXPECT_REJECTED("input has element type", "batch_norm_grad",
                  {{I64, {2, 3}}, {I64, {2, 3}}, {F32, {3}}},
                  {{I64, {2, 3}}, {F32, {3}}, {F32, {3}}}, batch);
  EXPECT_REJECTED("missing attribute 'epsilon'", "batch_norm_grad",
                  {{F32, {2, 3}}, {F32, {2, 3}}, {F32, {3}}},
                  {{F32, {2, 3}}, {F32, {3}}, {F32, {3}}});
}

TEST(KernelBackwardCheck, Indexing) {
  Attributes axis0 = attrs({{"axis", int64_t{0}}});
  EXPECT_ACCEPTED("gather_grad", {{F32, {2, 3, 4}}, {I64, {2, 3}}}, {{F32, {5, 4}}}, axis0);
  EXPECT_ACCEPTED("gather_grad", {{F16, {5}}, {I32, {}}}, {{F16, {5, 7}}},
                  attrs({{"axis", int64_t{1}}}));
  EXPECT_REJECTED("indices has element type", "gather_grad", {{F32, {2, 4}}, {F32, {2}}},
                  {{F32, {5, 4}}}, axis0);
  EXPECT_REJECTED("grad has shape", "gather_grad", {{F32, {2, 3, 4}}, {I64, {3, 2}}},
                  {{F32, {5, 4}}}, axis0);
  EXPECT_REJECTED("axis 2 out of range", "gather_grad", {{F32, {2, 3, 4}}, {I64, {2, 3}}},
                  {{F32, {5, 4}}}, attrs({{"axis", int64_t{2}}}));
  EXPECT_REJECTED("result has element type", "gather_grad", {{F32, {2, 4}}, {I64, {2}}},
                  {{F16, {5, 4}}}, axis0);
  EXPECT_REJECTED("grad has element type", "gather_grad", {{I64, {2, 4}}, {I64, {2}}},
                  {{I64, {5, 4}}}, axis0);

  Attributes slice =
      attrs({{"starts", Ints{1, 5}}, {"limits", Ints{3, -1}}, {"steps", Ints{1, -2}}});
  EXPECT_ACCEPTED("slice_grad", {{F32, {2, 3}}}, {{F32, {5, 6}}}, slice);
  EXPECT_ACCEPTED("slice_grad", {{DType::Bool, {2, 3}}}, {{DType::Bool, {5, 6}}}, slice);
  EXPECT_REJECTED("grad has shape", "slice_grad", {{F32, {2, 6}}}, {{F32, {5, 6}}}, slice);
  EXPECT_REJECTED("result has element type", "slice_grad", {{F32, {2, 3}}}, {{I32, {5, 6}}}, slice);
  EXPECT_REJECTED("missing attribute 'steps'", "slice_grad", {{F32, {2, 3}}}, {{F32, {5, 6}}},
                  attrs({{"starts", Ints{1, 5}}, {"limits", Ints{3, -1}}}));
  EXPECT_REJECTED("out of range", "slice_grad", {{F32, {2, 3}}}, {{F32, {5, 6}}},
                  attrs({{"starts", Ints{1, 5}}, {"limits", Ints{3, -1}}, {"steps", Ints{1, 0}}}));
  EXPECT_REJECTED("out of range", "slice_grad", {{F32, {2, 3}}}, {{F32, {5, 6}}},
                  attrs({{"starts", Ints{1, 7}}, {"limits", Ints{3, -1}}, {"steps", Ints{1, -2}}}));
  EXPECT_REJECTED("one start, limit and step per dimension", "slice_grad", {{F32, {2}}},
                  {{F32, {5, 6}}},
                  attrs({{"starts", Ints{1}}, {"limits", Ints{3}}, {"steps", Ints{1}}}));
}

TEST(KernelBackwardCheck, Convolution) {
  Attributes conv = attrs({{"strides", Ints{1, 1}},
                           {"pads", Ints{0, 0, 0, 0}},
                           {"dilations", Ints{1, 1}},
                           {"group", int64_t{2}}});
  // Forward: input [1, 4, 5, 5], weight [6, 2, 3, 3] -> grad [1, 6, 3, 3].
  EXPECT_ACCEPTED("conv_grad_input", {{F32, {1, 6, 3, 3}}, {F32, {6, 2, 3, 3}}},
                  {{F32, {1, 4, 5, 5}}}, conv);
  EXPECT_ACCEPTED("conv_grad_weight", {{BF16, {1, 6, 3, 3}}, {BF16, {1, 4, 5, 5}}},
                  {{BF16, {6, 2, 3, 3}}}, conv);
  EXPECT_REJECTED("grad has shape", "conv_grad_input", {{F32, {1, 6, 4, 4}}, {F32, {6, 2, 3, 3}}},
                  {{F32, {1, 4, 5, 5}}}, conv);
  EXPECT_REJECTED("grad has shape", "conv_grad_weight", {{F32, {1, 6, 3, 3}}, {F32, {1, 4, 6, 5}}},
                  {{F32, {6, 2, 3, 3}}}, conv);
  EXPECT_REJECTED("does not fit", "conv_grad_input", {{F32, {1, 6, 3, 3}}, {F32, {6, 4, 3, 3}}},
                  {{F32, {1, 4, 5, 5}}}, conv);
  EXPECT_REJECTED("does not fit", "conv_grad_weight", {{F32, {1, 5, 3, 3}}, {F32, {1, 4, 5, 5}}},
                  {{F32, {5, 2, 3, 3}}}, conv);
  EXPECT_REJECTED("weight has element type", "conv_grad_input",
                  {{F32, {1, 6, 3, 3}}, {F16, {6, 2, 3, 3}}}, {{F32, {1, 4, 5, 5}}}, conv);
  EXPECT_REJECTED("result has element type", "conv_grad_weight",
                  {{F32, {1, 6, 3, 3}}, {F32, {1, 4, 5, 5}}}, {{F16, {6, 2, 3, 3}}}, conv);
  EXPECT_REJECTED("rank >= 3", "conv_grad_input", {{F32, {6, 3}}, {F32, {6, 2}}}, {{F32, {4, 5}}},
                  conv);
  EXPECT_REJECTED("window larger", "conv_grad_input", {{F32, {1, 6, 1, 1}}, {F32, {6, 2, 3, 3}}},
                  {{F32, {1, 4, 2, 2}}}, conv);
  Attributes missing =
      attrs({{"strides", Ints{1, 1}}, {"pads", Ints{0, 0, 0, 0}}, {"dilations", Ints{1, 1}}});
  EXPECT_REJECTED("missing attribute 'group'", "conv_grad_weight",
                  {{F32, {1, 6, 3, 3}}, {F32, {1, 4, 5, 5}}}, {{F32, {6, 2, 3, 3}}}, missing);
  conv.set("group", int64_t{0});
  EXPECT_REJECTED("with group 0", "conv_grad_input", {{F32, {1, 6, 3, 3}}, {F32, {6, 2, 3, 3}}},
                  {{F32, {1, 4, 5, 5}}}, conv);
  conv.set("group", int64_t{1});
  conv.set("dilations", Ints{1, 0});
  EXPECT_REJECTED("positive", "conv_grad_weight", {{F32, {1, 6, 3, 3}}, {F32, {1, 2, 5, 5}}},
                  {{F32, {6, 2, 3, 3}}}, conv);
}

TEST(KernelBackwardCheck, Pooling) {
  Attributes pool = attrs({{"kernel_shape", Ints{2, 2}},
                           {"strides", Ints{2, 2}},
                           {"pads", Ints{0, 0, 0, 0}},
                           {"dilations", Ints{1, 1}},
                           {"ceil_mode", int64_t{1}}});
  EXPECT_ACCEPTED("max_pool_grad", {{F32, {1, 2, 3, 3}}, {F32, {1, 2, 5, 5}}},
                  {{F32, {1, 2, 5, 5}}}, pool);
  EXPECT_ACCEPTED("max_pool_grad", {{BF16, {1, 2, 3, 3}}, {F16, {1, 2, 5, 5}}},
                  {{F16, {1, 2, 5, 5}}}, pool);
  EXPECT_REJECTED("grad has shape", "max_pool_grad", {{F32, {1, 2, 2, 2}}, {F32, {1, 2, 5, 5}}},
                  {{F32, {1, 2, 5, 5}}}, pool);
  EXPECT_REJECTED("result has shape", "max_pool_grad", {{F32, {1, 2, 3, 3}}, {F32, {1, 2, 5, 5}}},
                  {{F32, {1, 2, 5, 6}}}, pool);
  EXPECT_REJECTED("result has element type", "max_pool_grad",
                  {{F32, {1, 2, 3, 3}}, {F16, {1, 2, 5, 5}}}, {{F32, {1, 2, 5, 5}}}, pool);
  EXPECT_REJECTED("count_include_pad", "avg_pool_grad", {{F32, {1, 2, 3, 3}}},
                  {{F32, {1, 2, 5, 5}}}, pool);
  pool.set("count_include_pad", int64_t{0});
  EXPECT_ACCEPTED("avg_pool_grad", {{F16, {1, 2, 3, 3}}}, {{F16, {1, 2, 5, 5}}}, pool);
  EXPECT_REJECTED("grad has shape", "avg_pool_grad", {{F32, {1, 2, 2, 2}}}, {{F32, {1, 2, 5, 5}}},
                  pool);
  EXPECT_REJECTED("result has element type", "avg_pool_grad", {{F32, {1, 2, 3, 3}}},
                  {{BF16, {1, 2, 5, 5}}}, pool);
  EXPECT_REJECTED("rank >= 3", "avg_pool_grad", {{F32, {3, 3}}}, {{F32, {5, 5}}}, pool);
  pool.set("ceil_mode", int64_t{2});
  EXPECT_REJECTED("must be 0 or 1", "avg_pool_grad", {{F32, {1, 2, 3, 3}}}, {{F32, {1, 2, 5, 5}}},
                  pool);
  pool.set("ceil_mode", int64_t{0});
  pool.set("pads", Ints{0, 0});
  EXPECT_REJECTED("spatial dimensions", "max_pool_grad", {{F32, {1, 2, 2, 2}}, {F32, {1, 2, 5, 5}}},
                  {{F32, {1, 2, 5, 5}}}, pool);
}

TEST(KernelBackwardCheck, Losses) {
  Attributes ignore = attrs({{"ignore_index", int64_t{-100}}});
  EXPECT_ACCEPTED("cross_entropy", {{F16, {4, 7}}, {I32, {4}}}, {{F32, {}}}, ignore);
  EXPECT_ACCEPTED("cross_entropy", {{F32, {7}}, {I64, {}}}, {{F32, {}}}, ignore);
  EXPECT_REJECTED("loss has shape", "cross_entropy", {{F32, {4, 7}}, {I64, {4}}}, {{F32, {1}}},
                  ignore);
  EXPECT_REJECTED("loss has element type", "cross_entropy", {{F16, {4, 7}}, {I64, {4}}},
                  {{F16, {}}}, ignore);
  EXPECT_REJECTED("labels has shape", "cross_entropy", {{F32, {4, 7}}, {I64, {7}}}, {{F32, {}}},
                  ignore);
  EXPECT_REJECTED("labels has element type", "cross_entropy", {{F32, {4, 7}}, {F32, {4}}},
                  {{F32, {}}}, ignore);
  EXPECT_REJECTED("rank >= 1", "cross_entropy", {{F32, {}}, {I64, {}}}, {{F32, {}}}, ignore);
  EXPECT_REJECTED("missing attribute 'ignore_index'", "cross_entropy", {{F32, {4, 7}}, {I64, {4}}},
                  {{F32, {}}});

  EXPECT_ACCEPTED("cross_entropy_grad", {{F32, {}}, {BF16, {2, 3, 7}}, {I64, {2, 3}}},
                  {{BF16, {2, 3, 7}}}, ignore);
  EXPECT_REJECTED("grad has shape", "cross_entropy_grad", {{F32, {1}}, {F32, {4, 7}}, {I64, {4}}},
                  {{F32, {4, 7}}}, ignore);
  EXPECT_REJECTED("grad has element type", "cross_entropy_grad",
                  {{F16, {}}, {F16, {4, 7}}, {I64, {4}}}, {{F16, {4, 7}}}, ignore);
  EXPECT_REJECTED("result has element type", "cross_entropy_grad",
                  {{F32, {}}, {F16, {4, 7}}, {I64, {4}}}, {{F32, {4, 7}}}, ignore);
  EXPECT_REJECTED("result has shape", "cross_entropy_grad", {{F32, {}}, {F32, {4, 7}}, {I64, {4}}},
                  {{F32, {7, 4}}}, ignore);
  EXPECT_REJECTED("expected 3 inputs", "cross_entropy_grad", {{F32, {4, 7}}, {I64, {4}}},
                  {{F32, {4, 7}}}, ignore);
}

TEST(KernelBackwardCheck, LinearCrossEntropy) {
  Attributes tied = attrs({{"ignore_index", int64_t{-100}}, {"transpose_weight", int64_t{1}}});
  Attributes untied = attrs({{"ignore_index", int64_t{-100}}});
  EXPECT_ACCEPTED("linear_cross_entropy", {{F32, {2, 5, 8}}, {F32, {11, 8}}, {I64, {2, 5}}},
                  {{F32, {}}, {F32, {2, 5}}}, tied);
  EXPECT_ACCEPTED("linear_cross_entropy", {{BF16, {5, 8}}, {BF16, {8, 11}}, {I32, {5}}},
                  {{F32, {}}, {F32, {5}}}, untied);
  EXPECT_REJECTED("disagree on D or the rows", "linear_cross_entropy",
                  {{F32, {5, 8}}, {F32, {11, 8}}, {I64, {5}}}, {{F32, {}}, {F32, {5}}}, untied);
  EXPECT_REJECTED("disagree on D or the rows", "linear_cross_entropy",
                  {{F32, {5, 8}}, {F32, {11, 8}}, {I64, {4}}}, {{F32, {}}, {F32, {4}}}, tied);
  EXPECT_REJECTED("weight has element type", "linear_cross_entropy",
                  {{F32, {5, 8}}, {BF16, {11, 8}}, {I64, {5}}}, {{F32, {}}, {F32, {5}}}, tied);
  EXPECT_REJECTED("logsumexp has shape", "linear_cross_entropy",
                  {{F32, {5, 8}}, {F32, {11, 8}}, {I64, {5}}}, {{F32, {}}, {F32, {5, 1}}}, tied);
  EXPECT_REJECTED("a 2-D weight", "linear_cross_entropy",
                  {{F32, {5, 8}}, {F32, {1, 11, 8}}, {I64, {5}}}, {{F32, {}}, {F32, {5}}}, tied);
  EXPECT_REJECTED("missing attribute 'ignore_index'", "linear_cross_entropy",
                  {{F32, {5, 8}}, {F32, {8, 11}}, {I64, {5}}}, {{F32, {}}, {F32, {5}}});

  EXPECT_ACCEPTED("linear_cross_entropy_grad",
                  {{F32, {}}, {F16, {5, 8}}, {F16, {11, 8}}, {I64, {5}}, {F32, {5}}},
                  {{F16, {5, 8}}, {F16, {11, 8}}}, tied);
  EXPECT_REJECTED("weight_grad has shape", "linear_cross_entropy_grad",
                  {{F32, {}}, {F32, {5, 8}}, {F32, {11, 8}}, {I64, {5}}, {F32, {5}}},
                  {{F32, {5, 8}}, {F32, {8, 11}}}, tied);
  EXPECT_REJECTED("logsumexp has shape", "linear_cross_entropy_grad",
                  {{F32, {}}, {F32, {5, 8}}, {F32, {11, 8}}, {I64, {5}}, {F32, {4}}},
                  {{F32, {5, 8}}, {F32, {11, 8}}}, tied);
  EXPECT_REJECTED("grad has shape", "linear_cross_entropy_grad",
                  {{F32, {1}}, {F32, {5, 8}}, {F32, {11, 8}}, {I64, {5}}, {F32, {5}}},
                  {{F32, {5, 8}}, {F32, {11, 8}}}, tied);
}

/// Checks, then runs, the call; returns run()'s error ("" if it succeeded).
std::string runError(const std::string &kernel, const std::vector<OwnedTensor> &inputs,
                     const Types &outputTypes, const Attributes &attributes) {
  std::vector<OwnedTensor> outputs;
  for (const auto &[dtype, shape] : outputTypes)
    outputs.emplace_back(dtype, shape);
  KernelCall call = makeCall(inputs, outputs, attributes);
  std::string error;
  EXPECT_TRUE(kernelNamed(kernel).check(call, error)) << error;
  if (runWithWorkspace(kernelNamed(kernel), call, error))
    return "";
  EXPECT_FALSE(error.empty()) << kernel << " failed without a message";
  return error;
}

TEST(KernelBackwardData, GatherGradIndexOutOfRange) {
  Attributes axis0 = attrs({{"axis", int64_t{0}}});
  OwnedTensor grad = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(runError("gather_grad", {grad, i64({3}, {0, 4, -6})}, {{F32, {4, 2}}}, axis0),
            "gather_grad index 4 (at position 1) out of range for dimension 0 of size 4");
  EXPECT_EQ(runError("gather_grad", {grad, tensor(I32, {3}, {-4, 3, -5})}, {{F32, {4, 2}}}, axis0),
            "gather_grad index -5 (at position 2) out of range for dimension 0 of size 4");
  OwnedTensor huge(I64, {3});
  huge.as<int64_t>()[2] = std::numeric_limits<int64_t>::min();
  EXPECT_NE(runError("gather_grad", {grad, huge}, {{F32, {4, 2}}}, axis0), "");
  EXPECT_EQ(runError("gather_grad", {grad, i64({3}, {0, 3, -4})}, {{F32, {4, 2}}}, axis0), "");
  // An empty result still has its indices checked.
  EXPECT_NE(runError("gather_grad", {OwnedTensor(F32, {3, 0}), i64({3}, {0, 9, 0})},
                     {{F32, {4, 0}}}, axis0),
            "");
}

TEST(KernelBackwardData, LabelOutsideTheClasses) {
  Attributes ignore = attrs({{"ignore_index", int64_t{-100}}});
  OwnedTensor logits = f32({3, 5}, std::vector<double>(15, 0.5));
  OwnedTensor grad = f32({}, {1});
  EXPECT_EQ(runError("cross_entropy", {logits, i64({3}, {1, 5, -100})}, {{F32, {}}}, ignore),
            "label 5 at position 1 is outside [0, 5)");
  EXPECT_EQ(
      runError("cross_entropy", {logits, tensor(I32, {3}, {-100, -100, -1})}, {{F32, {}}}, ignore),
      "label -1 at position 2 is outside [0, 5)");
  EXPECT_EQ(runError("cross_entropy_grad", {grad, logits, i64({3}, {-100, 7, 0})}, {{F32, {3, 5}}},
                     ignore),
            "label 7 at position 1 is outside [0, 5)");
  // ignore_index may be any value, a class or not; -100 is then an ordinary (bad) label.
  Attributes ignoreTwo = attrs({{"ignore_index", int64_t{2}}});
  EXPECT_EQ(runError("cross_entropy", {logits, i64({3}, {2, 2, 2})}, {{F32, {}}}, ignoreTwo), "");
  EXPECT_EQ(runError("cross_entropy", {logits, i64({3}, {2, -100, 2})}, {{F32, {}}}, ignoreTwo),
            "label -100 at position 1 is outside [0, 5)");
}

} // namespace
} // namespace memc::kernels::testing
