//===- Gpt2.cpp - GPT-2 as nanoGPT / Hugging Face write it -----------------===//
//
// input_ids [B, T] int64 -> logits [B, T, vocab] float32. Parameters carry the Hugging Face names
// (transformer.h.0.attn.c_attn.weight, ...) with Conv1D's [in, out] weight layout. The causal mask is
// each block's registered buffer transformer.h.N.attn.bias (bool [1, 1, T, T]) and the position ids
// are the buffer transformer.position_ids [T]. lm_head is tied: it multiplies by the transpose of the
// very initializer the token embedding gathers from.
//
//===----------------------------------------------------------------------===//

#include "TorchExportPatterns.h"
#include "ZooModels.h"

#include <cmath>
#include <limits>
#include <numeric>

namespace memc::zoo {
namespace {

using Module = OnnxGraphBuilder::Module;

struct Dims {
  int64_t batch, seq, dModel, heads, headDim;
};

std::string attention(OnnxGraphBuilder &b, const std::string &x, const Dims &dims) {
  Module scope(b, "attn");
  const int64_t d = dims.dModel;
  std::string qkv = conv1D(b, "c_attn", x, d, 3 * d);
  std::vector<std::string> parts =
      b.opN("Split", {qkv, b.constantInt64s({d, d, d})}, 3, {attrInt("axis", 2)});
  const Shape bthd = {dims.batch, dims.seq, dims.heads, dims.headDim};
  std::string q = splitHeads(b, parts[0], bthd);
  std::string kT = splitHeads(b, parts[1], bthd, /*keyTransposed=*/true);
  std::string v = splitHeads(b, parts[2], bthd);

  std::string scores = b.op("MatMul", {q, kT});
  scores = b.op("Mul", {scores, b.constantFloat(float(1.0 / std::sqrt(double(dims.headDim))))});
  std::string mask = b.buffer("bias", onnx::TensorProto::BOOL, {1, 1, dims.seq, dims.seq},
                              causalMaskBool(dims.seq));
  scores = b.op("Where",
                {mask, scores, b.constantFloat(-std::numeric_limits<float>::infinity())});
  std::string probs = b.op("Softmax", {scores}, {attrInt("axis", -1)});
  std::string y = mergeHeads(b, b.op("MatMul", {probs, v}), {dims.batch, dims.seq, d});
  return conv1D(b, "c_proj", y, d, d);
}

std::string mlp(OnnxGraphBuilder &b, const std::string &x, int64_t dModel, int64_t ffn) {
  Module scope(b, "mlp");
  std::string hidden = conv1D(b, "c_fc", x, dModel, ffn);
  {
    Module act(b, "act");
    hidden = geluTanh(b, hidden);
  }
  return conv1D(b, "c_proj", hidden, ffn, dModel);
}

std::string block(OnnxGraphBuilder &b, const std::string &x, const Dims &dims,
                  const TransformerConfig &config) {
  std::string attn = attention(b, layerNorm(b, "ln_1", x, dims.dModel, config.normEps), dims);
  std::string h = b.op("Add", {x, attn});
  std::string m = mlp(b, layerNorm(b, "ln_2", h, dims.dModel, config.normEps), dims.dModel,
                      config.ffn);
  return b.op("Add", {h, m});
}

} // namespace

void buildGpt2(OnnxGraphBuilder &b, const TransformerConfig &config, const ZooOptions &options) {
  const Dims dims{options.batch, options.seq, config.dModel, config.heads,
                  config.dModel / config.heads};
  std::string ids = b.input("input_ids", onnx::TensorProto::INT64, {dims.batch, dims.seq});

  std::string wte, hidden;
  {
    Module transformer(b, "transformer");
    std::string tokens = embedding(b, "wte", ids, config.vocab, dims.dModel, &wte);
    std::vector<int64_t> positionIds(size_t(dims.seq));
    std::iota(positionIds.begin(), positionIds.end(), 0);
    std::string positions = b.buffer("position_ids", onnx::TensorProto::INT64, {dims.seq},
                                     WeightInit::values(positionIds));
    hidden = b.op("Add", {tokens, embedding(b, "wpe", positions, config.maxPositions, dims.dModel)});
    for (int64_t layer = 0; layer < config.layers; ++layer) {
      Module h(b, "h." + std::to_string(layer));
      hidden = block(b, hidden, dims, config);
    }
    hidden = layerNorm(b, "ln_f", hidden, dims.dModel, config.normEps);
  }

  std::string logits;
  {
    Module lmHead(b, "lm_head");
    logits = b.op("MatMul", {hidden, transpose(b, wte, {1, 0})});
  }
  b.output(logits, "logits", onnx::TensorProto::FLOAT, {dims.batch, dims.seq, config.vocab});
}

} // namespace memc::zoo
