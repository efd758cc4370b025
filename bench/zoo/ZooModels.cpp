//===- ZooModels.cpp - published sizes behind --model ---------------------===//

#include "ZooModels.h"

#include <algorithm>

namespace memc::zoo {
namespace {

/// --layers and --vocab shrink a published model into a small test version of the same graph.
TransformerConfig withOverrides(TransformerConfig config, const ZooOptions &options) {
  if (options.layers > 0)
    config.layers = options.layers;
  if (options.vocab > 0)
    config.vocab = options.vocab;
  return config;
}

ZooModel transformer(const char *name, const char *summary, const TransformerConfig &config,
                     void (*build)(OnnxGraphBuilder &, const TransformerConfig &,
                                   const ZooOptions &),
                     bool hasDynamicSeq = false) {
  // A learned position table bounds --seq. RoPE models have none, but their additive causal mask
  // buffer holds T*T floats (1 GiB at 16384), built in memory and written to the data file.
  const int64_t maxRopeSeq = 16384;
  return {name,
          summary,
          config.layers,
          "layers",
          /*minSeq=*/1,
          config.maxPositions > 0 ? config.maxPositions : maxRopeSeq,
          /*defaultSeq=*/0,
          /*hasVocab=*/true,
          hasDynamicSeq,
          [config, build](OnnxGraphBuilder &b, const ZooOptions &options) {
            build(b, withOverrides(config, options), options);
          }};
}

TransformerConfig gpt2(int64_t dModel, int64_t layers, int64_t heads) {
  TransformerConfig config;
  config.vocab = 50257;
  config.maxPositions = 1024;
  config.dModel = dModel;
  config.layers = layers;
  config.heads = heads;
  config.ffn = 4 * dModel;
  config.normEps = 1e-5f;
  return config;
}

TransformerConfig bertBase() {
  TransformerConfig config;
  config.vocab = 30522;
  config.maxPositions = 512;
  config.dModel = 768;
  config.layers = 12;
  config.heads = 12;
  config.ffn = 3072;
  config.normEps = 1e-12f;
  config.typeVocab = 2;
  return config;
}

TransformerConfig llama(int64_t dModel, int64_t layers, int64_t heads, int64_t ffn, float eps) {
  TransformerConfig config;
  config.vocab = 32000;
  config.dModel = dModel;
  config.layers = layers;
  config.heads = heads;
  config.ffn = ffn;
  config.normEps = eps;
  config.ropeTheta = 10000.0f;
  return config;
}

/// Llama 3: grouped-query attention, the 128256-token tokenizer, RoPE theta 500000. Llama 3.1's
/// rope_scaling (longer-context inverse frequencies) changes only the RoPE tables' values; the
/// tables here are unscaled, as Llama 3's.
TransformerConfig llama3(int64_t dModel, int64_t layers, int64_t heads, int64_t kvHeads,
                         int64_t ffn) {
  TransformerConfig config = llama(dModel, layers, heads, ffn, 1e-5f);
  config.vocab = 128256;
  config.kvHeads = kvHeads;
  config.ropeTheta = 500000.0f;
  return config;
}

ZooModel resnet50() {
  ResNetConfig config;
  config.blocks = {3, 4, 6, 3};
  return {"resnet50",
          "torchvision ResNet-50, input [B,3,S,S] with S = --seq (default 224), 1000 classes",
          /*depth=*/6,
          "blocks per stage",
          // Five stride-2 reductions: below 32 pixels the later stages convolve mostly padding.
          /*minSeq=*/32,
          /*maxSeq=*/0,
          /*defaultSeq=*/224,
          /*hasVocab=*/false,
          /*hasDynamicSeq=*/false,
          [config](OnnxGraphBuilder &b, const ZooOptions &options) {
            ResNetConfig sized = config;
            if (options.layers > 0)
              for (int64_t &blocks : sized.blocks)
                blocks = std::min(blocks, options.layers);
            buildResNet(b, sized, options);
          }};
}

} // namespace

const std::vector<ZooModel> &zooModels() {
  static const std::vector<ZooModel> models = {
      transformer("gpt2-124m", "GPT-2 small: d 768, 12 layers, 12 heads, tied lm_head",
                  gpt2(768, 12, 12), buildGpt2),
      transformer("gpt2-355m", "GPT-2 medium: d 1024, 24 layers, 16 heads, tied lm_head",
                  gpt2(1024, 24, 16), buildGpt2),
      transformer("bert-base", "BERT-base with the masked-LM head: d 768, 12 layers, 12 heads",
                  bertBase(), buildBert),
      transformer("llama-1b", "LLaMA-style: d 2048, 16 layers, 32 heads, ffn 5632, untied lm_head",
                  llama(2048, 16, 32, 5632, 1e-5f), buildLlama, /*hasDynamicSeq=*/true),
      transformer("llama-7b", "LLaMA-7B: d 4096, 32 layers, 32 heads, ffn 11008, untied lm_head",
                  llama(4096, 32, 32, 11008, 1e-6f), buildLlama, /*hasDynamicSeq=*/true),
      transformer("llama3-8b",
                  "Llama 3 8B: d 4096, 32 layers, 32 heads, 8 kv heads (GQA), ffn 14336, "
                  "vocab 128256, untied lm_head",
                  llama3(4096, 32, 32, 8, 14336), buildLlama, /*hasDynamicSeq=*/true),
      resnet50(),
  };
  return models;
}

} // namespace memc::zoo
