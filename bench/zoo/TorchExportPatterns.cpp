//===- TorchExportPatterns.cpp --------------------------------------------===//

#include "TorchExportPatterns.h"

#include <cmath>

namespace memc::zoo {

using Module = OnnxGraphBuilder::Module;

std::string linear(OnnxGraphBuilder &b, const std::string &module, const std::string &x,
                   int64_t inFeatures, int64_t outFeatures, bool hasBias, float stddev) {
  Module scope(b, module);
  std::string weight = b.parameter("weight", {outFeatures, inFeatures}, WeightInit::normal(stddev));
  std::string y = b.op("MatMul", {x, transpose(b, weight, {1, 0})});
  if (!hasBias)
    return y;
  std::string bias = b.parameter("bias", {outFeatures}, WeightInit::zeros());
  return b.op("Add", {bias, y});
}

std::string gemmLinear(OnnxGraphBuilder &b, const std::string &module, const std::string &x,
                       int64_t inFeatures, int64_t outFeatures, float stddev) {
  Module scope(b, module);
  std::string weight = b.parameter("weight", {outFeatures, inFeatures}, WeightInit::normal(stddev));
  std::string bias = b.parameter("bias", {outFeatures}, WeightInit::zeros());
  return b.op("Gemm", {x, weight, bias},
              {attrFloat("alpha", 1.0f), attrFloat("beta", 1.0f), attrInt("transB", 1)});
}

std::string conv1D(OnnxGraphBuilder &b, const std::string &module, const std::string &x,
                   int64_t inFeatures, int64_t outFeatures) {
  Module scope(b, module);
  std::string weight =
      b.parameter("weight", {inFeatures, outFeatures}, WeightInit::normal(kTransformerInitStd));
  std::string bias = b.parameter("bias", {outFeatures}, WeightInit::zeros());
  return b.op("Add", {b.op("MatMul", {x, weight}), bias});
}

std::string embedding(OnnxGraphBuilder &b, const std::string &module, const std::string &indices,
                      int64_t numEmbeddings, int64_t dim, std::string *weight) {
  Module scope(b, module);
  std::string table =
      b.parameter("weight", {numEmbeddings, dim}, WeightInit::normal(kTransformerInitStd));
  if (weight)
    *weight = table;
  return b.op("Gather", {table, indices});
}

std::string layerNorm(OnnxGraphBuilder &b, const std::string &module, const std::string &x,
                      int64_t dim, float eps) {
  Module scope(b, module);
  std::string weight = b.parameter("weight", {dim}, WeightInit::ones());
  std::string bias = b.parameter("bias", {dim}, WeightInit::zeros());
  return b.op("LayerNormalization", {x, weight, bias},
              {attrInt("axis", -1), attrFloat("epsilon", eps)});
}

std::string geluErf(OnnxGraphBuilder &b, const std::string &x) {
  std::string erf = b.op("Erf", {b.op("Div", {x, b.constantFloat(float(M_SQRT2))})});
  std::string onePlusErf = b.op("Add", {erf, b.constantFloat(1.0f)});
  return b.op("Mul", {b.op("Mul", {x, onePlusErf}), b.constantFloat(0.5f)});
}

std::string geluTanh(OnnxGraphBuilder &b, const std::string &x) {
  std::string halfX = b.op("Mul", {b.constantFloat(0.5f), x});
  std::string cube = b.op("Pow", {x, b.constantFloat(3.0f)});
  std::string inner = b.op("Add", {x, b.op("Mul", {b.constantFloat(0.044715f), cube})});
  std::string scaled = b.op("Mul", {b.constantFloat(float(std::sqrt(2.0 / M_PI))), inner});
  std::string onePlusTanh = b.op("Add", {b.constantFloat(1.0f), b.op("Tanh", {scaled})});
  return b.op("Mul", {halfX, onePlusTanh});
}

std::string reshape(OnnxGraphBuilder &b, const std::string &x, const Shape &shape) {
  return b.op("Reshape", {x, b.constantInt64s(shape)});
}

std::string transpose(OnnxGraphBuilder &b, const std::string &x, const std::vector<int64_t> &perm) {
  return b.op("Transpose", {x}, {attrInts("perm", perm)});
}

std::string splitHeads(OnnxGraphBuilder &b, const std::string &x, const Shape &bthd,
                       bool keyTransposed) {
  std::vector<int64_t> perm = keyTransposed ? std::vector<int64_t>{0, 2, 3, 1}
                                            : std::vector<int64_t>{0, 2, 1, 3};
  return transpose(b, reshape(b, x, bthd), perm);
}

std::string mergeHeads(OnnxGraphBuilder &b, const std::string &x, const Shape &btd) {
  return reshape(b, transpose(b, x, {0, 2, 1, 3}), btd);
}

WeightInit causalMaskBool(int64_t seq) {
  std::vector<uint8_t> mask(size_t(seq * seq));
  for (int64_t i = 0; i < seq; ++i)
    for (int64_t j = 0; j <= i; ++j)
      mask[size_t(i * seq + j)] = 1;
  return WeightInit::values(mask);
}

} // namespace memc::zoo
