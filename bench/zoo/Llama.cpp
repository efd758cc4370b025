//===- Llama.cpp - LLaMA as Hugging Face LlamaForCausalLM writes it --------===//
//
// input_ids [B, T] int64 -> logits [B, T, vocab] float32. Pre-norm decoder with RMSNorm, rotary
// position embeddings, attention with as many key/value heads as query heads or fewer
// (grouped-query attention, each key/value head repeated for its group as repeat_kv does), a SwiGLU
// MLP and an untied lm_head; no linear layer has a bias. The RoPE tables are the buffers
// model.rotary_emb.cos_cached / sin_cached ([T, head_dim], the frequencies repeated as
// cat(freqs, freqs) the way rotate_half expects), and the causal mask is the additive buffer
// model.causal_mask ([1, 1, T, T]: 0 where allowed, the lowest float where not, as Hugging Face builds
// it so that fully masked rows stay finite).
//
// With a symbolic sequence (--seq dynamic) no tensor is sized by T, nor by a longest T (a table of
// max_position_embeddings rows would cap the lengths a compiler can plan): input_ids is
// [B, "sequence"] and the graph computes what the static one stores, as transformers exports it
// since 4.38 (every version that runs Llama 3.1). T is `input_ids.shape[1]` (Shape, Gather); the
// RoPE tables are cos/sin of the buffer model.rotary_emb.inv_freq [head_dim / 2] times the
// positions arange(T) (Range); the mask is _update_causal_mask's triu(full((T, T), lowest),
// diagonal=1) (ConstantOfShape, Trilu); reshape targets copy (0) or infer (-1) the sequence axis.
//
//===----------------------------------------------------------------------===//

#include "TorchExportPatterns.h"
#include "ZooModels.h"

#include <cmath>
#include <limits>
#include <utility>

namespace memc::zoo {
namespace {

using Module = OnnxGraphBuilder::Module;

struct Dims {
  int64_t batch;
  int64_t seq; ///< 0 when symbolic: view targets then copy the axis (Reshape's 0).
  int64_t dModel, heads, kvHeads, headDim;
};

struct RopeTables {
  std::string cos, sin;
};

/// LlamaRMSNorm: weight * (x * rsqrt(mean(x^2, -1) + eps)); rsqrt exports as Reciprocal(Sqrt).
std::string rmsNorm(OnnxGraphBuilder &b, const std::string &module, const std::string &x,
                    int64_t dim, float eps) {
  Module scope(b, module);
  std::string weight = b.parameter("weight", {dim}, WeightInit::ones());
  std::string meanSquare = b.op("ReduceMean", {b.op("Pow", {x, b.constantFloat(2.0f)})},
                                {attrInts("axes", {-1}), attrInt("keepdims", 1)});
  std::string invRms =
      b.op("Reciprocal", {b.op("Sqrt", {b.op("Add", {meanSquare, b.constantFloat(eps)})})});
  return b.op("Mul", {weight, b.op("Mul", {x, invRms})});
}

RopeTables ropeTables(OnnxGraphBuilder &b, int64_t seq, int64_t headDim, float theta) {
  Module scope(b, "rotary_emb");
  const int64_t half = headDim / 2;
  std::vector<float> cosValues(size_t(seq * headDim)), sinValues(size_t(seq * headDim));
  for (int64_t t = 0; t < seq; ++t)
    for (int64_t i = 0; i < half; ++i) {
      double angle = double(t) / std::pow(double(theta), double(2 * i) / double(headDim));
      for (int64_t copy : {i, i + half}) {
        cosValues[size_t(t * headDim + copy)] = float(std::cos(angle));
        sinValues[size_t(t * headDim + copy)] = float(std::sin(angle));
      }
    }
  return {b.buffer("cos_cached", onnx::TensorProto::FLOAT, {seq, headDim},
                   WeightInit::values(cosValues)),
          b.buffer("sin_cached", onnx::TensorProto::FLOAT, {seq, headDim},
                   WeightInit::values(sinValues))};
}

/// LlamaRotaryEmbedding.forward for positions 0 .. T - 1, T = `length` (0-d int64): freqs =
/// inv_freq[None, :, None] @ position_ids[:, None, :] transposed to [1, T, D/2], emb = cat(freqs,
/// freqs), and cos/sin of it, unsqueezed to [1, 1, T, D] as apply_rotary_pos_emb does.
RopeTables computedRopeTables(OnnxGraphBuilder &b, const std::string &length, int64_t headDim,
                              float theta) {
  std::string positions =
      b.op("Unsqueeze", {b.op("Range", {b.constantInt64(0), length, b.constantInt64(1)}),
                         b.constantInt64s({0})});
  Module scope(b, "rotary_emb");
  std::vector<float> invFreq;
  for (int64_t i = 0; i < headDim; i += 2)
    invFreq.push_back(1.0f / std::pow(theta, float(i) / float(headDim)));
  std::string table =
      b.buffer("inv_freq", onnx::TensorProto::FLOAT, {headDim / 2}, WeightInit::values(invFreq));
  std::string freqs =
      b.op("MatMul", {b.op("Unsqueeze", {table, b.constantInt64s({0, 2})}),
                      b.op("Cast", {b.op("Unsqueeze", {positions, b.constantInt64s({1})})},
                           {attrInt("to", onnx::TensorProto::FLOAT)})});
  freqs = transpose(b, freqs, {0, 2, 1});
  std::string angles = b.op("Concat", {freqs, freqs}, {attrInt("axis", -1)});
  auto perHead = [&](const std::string &value) {
    return b.op("Unsqueeze", {value, b.constantInt64s({1})});
  };
  return {perHead(b.op("Cos", {angles})), perHead(b.op("Sin", {angles}))};
}

/// _update_causal_mask for T = `length` ([1] int64): triu(full((T, T), lowest), diagonal=1), 0
/// where key j <= query i and the lowest float above, so that the scores broadcast it.
std::string computedCausalMask(OnnxGraphBuilder &b, const std::string &length) {
  std::string shape = b.op("Concat", {length, length}, {attrInt("axis", 0)});
  std::string full = b.op("ConstantOfShape", {shape},
                          {attrFloatTensor("value", std::numeric_limits<float>::lowest())});
  return b.op("Trilu", {full, b.constantInt64(1)}, {attrInt("upper", 1)});
}

WeightInit additiveCausalMask(int64_t seq) {
  std::vector<float> mask(size_t(seq * seq), 0.0f);
  for (int64_t i = 0; i < seq; ++i)
    for (int64_t j = i + 1; j < seq; ++j)
      mask[size_t(i * seq + j)] = std::numeric_limits<float>::lowest();
  return WeightInit::values(mask);
}

/// apply_rotary_pos_emb for one of q/k ([B, H, T, D]): x * cos + rotate_half(x) * sin, with
/// rotate_half(x) = cat(-x[..., D/2:], x[..., :D/2]). The [T, D] tables broadcast from the right.
std::string applyRope(OnnxGraphBuilder &b, const std::string &x, const RopeTables &rope,
                      int64_t headDim) {
  auto slice = [&](int64_t start, int64_t end) {
    return b.op("Slice", {x, b.constantInt64s({start}), b.constantInt64s({end}),
                          b.constantInt64s({3}), b.constantInt64s({1})});
  };
  std::string firstHalf = slice(0, headDim / 2);
  // `x[..., D/2:]` has no end; torch writes INT64_MAX for it.
  std::string secondHalf = slice(headDim / 2, std::numeric_limits<int64_t>::max());
  std::string rotated =
      b.op("Concat", {b.op("Neg", {secondHalf}), firstHalf}, {attrInt("axis", -1)});
  return b.op("Add",
              {b.op("Mul", {x, rope.cos}), b.op("Mul", {rotated, rope.sin})});
}

/// repeat_kv for k or v ([B, Hkv, T, D] -> [B, H, T, D], head h reading kv head h / n_rep):
/// `x[:, :, None, :, :].expand(B, Hkv, n_rep, T, D).reshape(B, H, T, D)`, which exports as
/// Unsqueeze, Expand and Reshape. With n_rep = 1 it returns x itself, so multi-head attention has
/// no repeat. With a symbolic T the expansion broadcasts against 1s and the reshape infers T.
std::string repeatKv(OnnxGraphBuilder &b, const std::string &x, const Dims &dims) {
  const int64_t repeats = dims.heads / dims.kvHeads;
  if (repeats == 1)
    return x;
  std::string unsqueezed = b.op("Unsqueeze", {x, b.constantInt64s({2})});
  const Shape expandTo = dims.seq > 0
                             ? Shape{dims.batch, dims.kvHeads, repeats, dims.seq, dims.headDim}
                             : Shape{1, 1, repeats, 1, 1};
  std::string expanded = b.op("Expand", {unsqueezed, b.constantInt64s(expandTo)});
  return reshape(b, expanded, {dims.batch, dims.heads, dims.seq > 0 ? dims.seq : -1, dims.headDim});
}

std::string attention(OnnxGraphBuilder &b, const std::string &x, const Dims &dims,
                      const RopeTables &rope, const std::string &mask) {
  Module scope(b, "self_attn");
  const int64_t d = dims.dModel, kvDim = dims.kvHeads * dims.headDim;
  const Shape bthd = {dims.batch, dims.seq, dims.heads, dims.headDim};
  const Shape kvBthd = {dims.batch, dims.seq, dims.kvHeads, dims.headDim};
  std::string q = splitHeads(b, linear(b, "q_proj", x, d, d, false), bthd);
  std::string k = splitHeads(b, linear(b, "k_proj", x, d, kvDim, false), kvBthd);
  std::string v = splitHeads(b, linear(b, "v_proj", x, d, kvDim, false), kvBthd);
  q = applyRope(b, q, rope, dims.headDim);
  k = repeatKv(b, applyRope(b, k, rope, dims.headDim), dims);
  v = repeatKv(b, v, dims);

  std::string scores = b.op("MatMul", {q, transpose(b, k, {0, 1, 3, 2})});
  scores = b.op("Div", {scores, b.constantFloat(float(std::sqrt(double(dims.headDim))))});
  scores = b.op("Add", {scores, mask});
  std::string probs = b.op("Softmax", {scores}, {attrInt("axis", -1)});
  std::string y = mergeHeads(b, b.op("MatMul", {probs, v}), {dims.batch, dims.seq, d});
  return linear(b, "o_proj", y, d, d, false);
}

/// down_proj(silu(gate_proj(x)) * up_proj(x)); F.silu exports as x * Sigmoid(x).
std::string mlp(OnnxGraphBuilder &b, const std::string &x, int64_t dModel, int64_t ffn) {
  Module scope(b, "mlp");
  std::string gate = linear(b, "gate_proj", x, dModel, ffn, false);
  {
    Module act(b, "act_fn");
    gate = b.op("Mul", {gate, b.op("Sigmoid", {gate})});
  }
  std::string up = linear(b, "up_proj", x, dModel, ffn, false);
  return linear(b, "down_proj", b.op("Mul", {gate, up}), ffn, dModel, false);
}

/// What every layer reads of the positions: the RoPE tables and the additive causal mask, stored
/// for a static T ([T, D] and [1, 1, T, T]), computed from input_ids for a symbolic one.
std::pair<RopeTables, std::string> positionTensors(OnnxGraphBuilder &b, const std::string &ids,
                                                   const TransformerConfig &config,
                                                   const Dims &dims) {
  if (dims.seq > 0)
    return {ropeTables(b, dims.seq, dims.headDim, config.ropeTheta),
            b.buffer("causal_mask", onnx::TensorProto::FLOAT, {1, 1, dims.seq, dims.seq},
                     additiveCausalMask(dims.seq))};
  std::string length =
      b.op("Gather", {b.op("Shape", {ids}), b.constantInt64(1)}, {attrInt("axis", 0)});
  RopeTables rope = computedRopeTables(b, length, dims.headDim, config.ropeTheta);
  return {rope, computedCausalMask(b, b.op("Unsqueeze", {length, b.constantInt64s({0})}))};
}

} // namespace

void buildLlama(OnnxGraphBuilder &b, const TransformerConfig &config, const ZooOptions &options) {
  const int64_t kvHeads = config.kvHeads > 0 ? config.kvHeads : config.heads;
  const int64_t seq = options.dynamicSeq ? 0 : options.seq;
  const Dims dims{options.batch, seq, config.dModel, config.heads, kvHeads,
                  config.dModel / config.heads};
  const GraphDim seqDim = options.dynamicSeq ? GraphDim("sequence") : GraphDim(dims.seq);
  std::string ids = b.input("input_ids", onnx::TensorProto::INT64, {dims.batch, seqDim});

  std::string hidden;
  {
    Module model(b, "model");
    hidden = embedding(b, "embed_tokens", ids, config.vocab, dims.dModel);
    auto [rope, mask] = positionTensors(b, ids, config, dims);
    for (int64_t index = 0; index < config.layers; ++index) {
      Module layer(b, "layers." + std::to_string(index));
      std::string normed = rmsNorm(b, "input_layernorm", hidden, dims.dModel, config.normEps);
      hidden = b.op("Add", {hidden, attention(b, normed, dims, rope, mask)});
      normed = rmsNorm(b, "post_attention_layernorm", hidden, dims.dModel, config.normEps);
      hidden = b.op("Add", {hidden, mlp(b, normed, dims.dModel, config.ffn)});
    }
    hidden = rmsNorm(b, "norm", hidden, dims.dModel, config.normEps);
  }
  std::string logits = linear(b, "lm_head", hidden, dims.dModel, config.vocab, false);
  b.output(logits, "logits", onnx::TensorProto::FLOAT, {dims.batch, seqDim, config.vocab});
}

} // namespace memc::zoo
