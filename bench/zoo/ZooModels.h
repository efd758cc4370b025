//===- ZooModels.h - the architectures memc-zoo can write ------------------===//
//
// Each architecture is one function that emits its graph into an OnnxGraphBuilder, shaped by a config
// (the sizes of one published model) and by ZooOptions (the command line). zooModels() is the table of
// published sizes behind --model.
//
//===----------------------------------------------------------------------===//

#ifndef MEMC_BENCH_ZOO_ZOOMODELS_H
#define MEMC_BENCH_ZOO_ZOOMODELS_H

#include "OnnxGraphBuilder.h"

#include <functional>

namespace memc::zoo {

/// What the command line decides about a model.
struct ZooOptions {
  int64_t batch = 0;
  int64_t seq = 0;         ///< Tokens per sequence; for resnet50 the image side.
  bool dynamicSeq = false; ///< --seq dynamic: the sequence axis symbolic (seq stays 0).
  int64_t layers = 0; ///< Overrides the depth when > 0 (transformer blocks; ResNet blocks per stage).
  int64_t vocab = 0;  ///< Overrides the vocabulary when > 0 (transformers only).
};

/// Sizes of a decoder or encoder transformer. Fields an architecture has no use for stay 0.
struct TransformerConfig {
  int64_t vocab = 0;
  int64_t maxPositions = 0; ///< Learned position table rows (GPT-2, BERT); 0 for RoPE models.
  int64_t dModel = 0;
  int64_t layers = 0;
  int64_t heads = 0;
  int64_t kvHeads = 0; ///< Key/value heads of grouped-query attention (LLaMA); 0 = heads.
  int64_t ffn = 0;
  float normEps = 1e-5f;
  float ropeTheta = 10000.0f; ///< LLaMA only.
  int64_t typeVocab = 0;      ///< BERT's token_type_embeddings rows.
};

/// ResNet-v1.5 with bottleneck blocks (torchvision's resnet50 when blocks = {3, 4, 6, 3}).
struct ResNetConfig {
  std::vector<int64_t> blocks;
  int64_t numClasses = 1000;
};

void buildGpt2(OnnxGraphBuilder &b, const TransformerConfig &config, const ZooOptions &options);
void buildBert(OnnxGraphBuilder &b, const TransformerConfig &config, const ZooOptions &options);
void buildLlama(OnnxGraphBuilder &b, const TransformerConfig &config, const ZooOptions &options);
void buildResNet(OnnxGraphBuilder &b, const ResNetConfig &config, const ZooOptions &options);

/// One --model choice.
struct ZooModel {
  const char *name;
  const char *summary;
  int64_t depth;         ///< The largest --layers (the published depth).
  const char *depthUnit; ///< What --layers counts, for messages.
  int64_t minSeq;        ///< The smallest --seq.
  int64_t maxSeq;        ///< The largest --seq; 0 when unbounded.
  int64_t defaultSeq;    ///< Used when --seq is absent; 0 when --seq is required.
  bool hasVocab;         ///< Whether --vocab applies.
  bool hasDynamicSeq;    ///< Whether --seq dynamic applies.
  /// Emits the graph, with options.layers and options.vocab applied over the published sizes.
  std::function<void(OnnxGraphBuilder &, const ZooOptions &)> build;
};

const std::vector<ZooModel> &zooModels();

} // namespace memc::zoo

#endif // MEMC_BENCH_ZOO_ZOOMODELS_H
