//===- Bert.cpp - BERT with its masked-LM head (Hugging Face BertForMaskedLM) ===//
//
// input_ids [B, T] int64 -> logits [B, T, vocab] float32, the MLM head's scores for every position
// (a training loss is cross-entropy over those, like GPT-2's, so one loss builder serves both). Post-LN
// encoder, exact (erf) GELU, no attention mask (every sequence is full length), no pooler (BertForMaskedLM
// has none). Token types come from the buffer bert.embeddings.token_type_ids (all zeros, [1, T]) and
// positions from bert.embeddings.position_ids ([1, T]), as Hugging Face registers them; both broadcast
// over the batch. The decoder is tied to the word embeddings; its bias is cls.predictions.bias.
//
//===----------------------------------------------------------------------===//

#include "TorchExportPatterns.h"
#include "ZooModels.h"

#include <cmath>
#include <numeric>

namespace memc::zoo {
namespace {

using Module = OnnxGraphBuilder::Module;

struct Dims {
  int64_t batch, seq, dModel, heads, headDim;
};

std::string embeddings(OnnxGraphBuilder &b, const std::string &ids, const Dims &dims,
                       const TransformerConfig &config, std::string &wordTable) {
  Module scope(b, "embeddings");
  std::string words = embedding(b, "word_embeddings", ids, config.vocab, dims.dModel, &wordTable);
  std::string typeIds = b.buffer("token_type_ids", onnx::TensorProto::INT64, {1, dims.seq},
                                 WeightInit::zeros());
  std::string types =
      embedding(b, "token_type_embeddings", typeIds, config.typeVocab, dims.dModel);
  std::vector<int64_t> positionValues(size_t(dims.seq));
  std::iota(positionValues.begin(), positionValues.end(), 0);
  std::string positionIds = b.buffer("position_ids", onnx::TensorProto::INT64, {1, dims.seq},
                                     WeightInit::values(positionValues));
  std::string positions =
      embedding(b, "position_embeddings", positionIds, config.maxPositions, dims.dModel);
  std::string sum = b.op("Add", {b.op("Add", {words, types}), positions});
  return layerNorm(b, "LayerNorm", sum, dims.dModel, config.normEps);
}

std::string selfAttention(OnnxGraphBuilder &b, const std::string &x, const Dims &dims) {
  Module scope(b, "self");
  const int64_t d = dims.dModel;
  const Shape bthd = {dims.batch, dims.seq, dims.heads, dims.headDim};
  std::string q = splitHeads(b, linear(b, "query", x, d, d, true), bthd);
  std::string kT = splitHeads(b, linear(b, "key", x, d, d, true), bthd, /*keyTransposed=*/true);
  std::string v = splitHeads(b, linear(b, "value", x, d, d, true), bthd);
  std::string scores = b.op("MatMul", {q, kT});
  scores = b.op("Div", {scores, b.constantFloat(float(std::sqrt(double(dims.headDim))))});
  std::string probs = b.op("Softmax", {scores}, {attrInt("axis", -1)});
  return mergeHeads(b, b.op("MatMul", {probs, v}), {dims.batch, dims.seq, d});
}

/// BertSelfOutput and BertOutput: dense, then LayerNorm(dense + residual).
std::string output(OnnxGraphBuilder &b, const std::string &x, const std::string &residual,
                   int64_t inFeatures, int64_t dModel, float eps) {
  Module scope(b, "output");
  std::string dense = linear(b, "dense", x, inFeatures, dModel, true);
  return layerNorm(b, "LayerNorm", b.op("Add", {dense, residual}), dModel, eps);
}

std::string layer(OnnxGraphBuilder &b, const std::string &x, const Dims &dims,
                  const TransformerConfig &config) {
  std::string attended;
  {
    Module attention(b, "attention");
    attended = output(b, selfAttention(b, x, dims), x, dims.dModel, dims.dModel, config.normEps);
  }
  std::string hidden;
  {
    Module intermediate(b, "intermediate");
    hidden = linear(b, "dense", attended, dims.dModel, config.ffn, true);
    Module act(b, "intermediate_act_fn");
    hidden = geluErf(b, hidden);
  }
  return output(b, hidden, attended, config.ffn, dims.dModel, config.normEps);
}

std::string mlmHead(OnnxGraphBuilder &b, const std::string &x, const Dims &dims,
                    const TransformerConfig &config, const std::string &wordTable) {
  Module cls(b, "cls"), predictions(b, "predictions");
  std::string hidden;
  {
    Module transform(b, "transform");
    hidden = linear(b, "dense", x, dims.dModel, dims.dModel, true);
    {
      Module act(b, "transform_act_fn");
      hidden = geluErf(b, hidden);
    }
    hidden = layerNorm(b, "LayerNorm", hidden, dims.dModel, config.normEps);
  }
  std::string bias = b.parameter("bias", {config.vocab}, WeightInit::zeros());
  Module decoder(b, "decoder");
  return b.op("Add", {bias, b.op("MatMul", {hidden, transpose(b, wordTable, {1, 0})})});
}

} // namespace

void buildBert(OnnxGraphBuilder &b, const TransformerConfig &config, const ZooOptions &options) {
  const Dims dims{options.batch, options.seq, config.dModel, config.heads,
                  config.dModel / config.heads};
  std::string ids = b.input("input_ids", onnx::TensorProto::INT64, {dims.batch, dims.seq});

  std::string wordTable, hidden;
  {
    Module bert(b, "bert");
    hidden = embeddings(b, ids, dims, config, wordTable);
    Module encoder(b, "encoder");
    for (int64_t index = 0; index < config.layers; ++index) {
      Module layerScope(b, "layer." + std::to_string(index));
      hidden = layer(b, hidden, dims, config);
    }
  }
  std::string logits = mlmHead(b, hidden, dims, config, wordTable);
  b.output(logits, "logits", onnx::TensorProto::FLOAT, {dims.batch, dims.seq, config.vocab});
}

} // namespace memc::zoo
