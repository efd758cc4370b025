//===- ResNet.cpp - torchvision's ResNet-50 --------------------------------===//
//
// input [B, 3, S, S] float32 (S = --seq, 224 by default) -> logits [B, 1000] float32. torchvision's
// ResNet v1.5 (the stride sits on each bottleneck's 3x3 conv). BatchNormalization is left unfused, in
// inference form, with its running statistics as buffers (bnN.running_mean / running_var), because a
// training compiler needs the batch-norm node itself: this is what export gives with
// TrainingMode.PRESERVE rather than the Conv+BN folding of an eval-mode export.
//
//===----------------------------------------------------------------------===//

#include "TorchExportPatterns.h"
#include "ZooModels.h"

#include <cmath>

namespace memc::zoo {
namespace {

using Module = OnnxGraphBuilder::Module;

/// Bias-free Conv2d with torchvision's kaiming_normal_(mode="fan_out", nonlinearity="relu") weights.
std::string conv(OnnxGraphBuilder &b, const std::string &module, const std::string &x,
                 int64_t inChannels, int64_t outChannels, int64_t kernel, int64_t stride,
                 int64_t pad) {
  Module scope(b, module);
  float stddev = float(std::sqrt(2.0 / double(outChannels * kernel * kernel)));
  std::string weight = b.parameter("weight", {outChannels, inChannels, kernel, kernel},
                                   WeightInit::normal(stddev));
  return b.op("Conv", {x, weight},
              {attrInts("dilations", {1, 1}), attrInt("group", 1),
               attrInts("kernel_shape", {kernel, kernel}), attrInts("pads", {pad, pad, pad, pad}),
               attrInts("strides", {stride, stride})});
}

/// BatchNorm2d; torch exports its momentum 0.1 as ONNX's 1 - 0.1.
std::string batchNorm(OnnxGraphBuilder &b, const std::string &module, const std::string &x,
                      int64_t channels) {
  Module scope(b, module);
  std::string scale = b.parameter("weight", {channels}, WeightInit::ones());
  std::string bias = b.parameter("bias", {channels}, WeightInit::zeros());
  std::string mean =
      b.buffer("running_mean", onnx::TensorProto::FLOAT, {channels}, WeightInit::zeros());
  std::string var = b.buffer("running_var", onnx::TensorProto::FLOAT, {channels}, WeightInit::ones());
  return b.op("BatchNormalization", {x, scale, bias, mean, var},
              {attrFloat("epsilon", 1e-5f), attrFloat("momentum", 0.9f)});
}

/// The one nn.ReLU module a torchvision block reuses, so its nodes are relu/Relu, relu/Relu_1, ...
std::string relu(OnnxGraphBuilder &b, const std::string &x) {
  Module scope(b, "relu");
  return b.op("Relu", {x});
}

std::string bottleneck(OnnxGraphBuilder &b, const std::string &x, int64_t inChannels,
                       int64_t width, int64_t stride) {
  const int64_t outChannels = 4 * width;
  std::string y = relu(b, batchNorm(b, "bn1", conv(b, "conv1", x, inChannels, width, 1, 1, 0), width));
  y = relu(b, batchNorm(b, "bn2", conv(b, "conv2", y, width, width, 3, stride, 1), width));
  y = batchNorm(b, "bn3", conv(b, "conv3", y, width, outChannels, 1, 1, 0), outChannels);
  std::string identity = x;
  if (stride != 1 || inChannels != outChannels) {
    Module downsample(b, "downsample");
    identity = batchNorm(b, "1", conv(b, "0", x, inChannels, outChannels, 1, stride, 0),
                         outChannels);
  }
  return relu(b, b.op("Add", {y, identity}));
}

} // namespace

void buildResNet(OnnxGraphBuilder &b, const ResNetConfig &config, const ZooOptions &options) {
  const int64_t side = options.seq;
  std::string x = b.input("input", onnx::TensorProto::FLOAT, {options.batch, 3, side, side});

  x = relu(b, batchNorm(b, "bn1", conv(b, "conv1", x, 3, 64, 7, 2, 3), 64));
  {
    Module maxpool(b, "maxpool");
    x = b.op("MaxPool", {x},
             {attrInt("ceil_mode", 0), attrInts("kernel_shape", {3, 3}),
              attrInts("pads", {1, 1, 1, 1}), attrInts("strides", {2, 2})});
  }

  int64_t channels = 64;
  for (size_t stage = 0; stage < config.blocks.size(); ++stage) {
    Module layer(b, "layer" + std::to_string(stage + 1));
    const int64_t width = int64_t(64) << stage;
    for (int64_t index = 0; index < config.blocks[stage]; ++index) {
      Module block(b, std::to_string(index));
      x = bottleneck(b, x, channels, width, index == 0 && stage > 0 ? 2 : 1);
      channels = 4 * width;
    }
  }

  {
    Module avgpool(b, "avgpool");
    x = b.op("GlobalAveragePool", {x});
  }
  x = b.op("Flatten", {x}, {attrInt("axis", 1)});
  // torchvision leaves fc at nn.Linear's default init, uniform(+-1/sqrt(2048)): std ~= 0.0128.
  std::string logits = gemmLinear(b, "fc", x, channels, config.numClasses, 0.0128f);
  b.output(logits, "logits", onnx::TensorProto::FLOAT, {options.batch, config.numClasses});
}

} // namespace memc::zoo
