//===- ExportEvidence.cpp - signs of a folded or renamed ONNX export -------===//
//
// Two traces of torch.onnx.export's constant folding: exporter-made `onnx::*` names on the
// weights of MatMul/Gemm/Conv (folded transposes), and a Gather table whose values reappear,
// as they are or transposed, in an initializer feeding a MatMul/Gemm (a tied embedding/head
// split in two). Values are compared in chunks, after a few sampled elements rule most pairs
// out, so that no big weight is read whole.
//
//===----------------------------------------------------------------------===//
#include "compiler/importer/ExportEvidence.h"
#include "compiler/importer/WeightStore.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <set>
#include <vector>

namespace memc {
namespace {

bool isFloatingInitializer(const StoredTensor &tensor) {
  switch (tensor.dataType) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    return true;
  default:
    return false;
  }
}

uint64_t byteSize(const StoredTensor &tensor) {
  return tensor.file.empty() ? tensor.inlineBytes.size() : tensor.length;
}

/// Reads elements of a tensor by index, one element or one run at a time.
class ElementReader {
public:
  ElementReader(const WeightStore &weights, const StoredTensor &tensor)
      : weights(weights), tensor(tensor), elementSize(onnxElementSize(tensor.dataType)) {}

  bool run(uint64_t first, uint64_t count, std::vector<char> &out) {
    std::string error;
    return weights.readRange(tensor, first * elementSize, count * elementSize, out, error);
  }

  const WeightStore &weights;
  const StoredTensor &tensor;
  uint64_t elementSize;
};

constexpr uint64_t kChunkElements = 1 << 18;

/// Whether two tensors of the same type and size hold the same bytes.
bool sameBytes(const WeightStore &weights, const StoredTensor &a, const StoredTensor &b) {
  ElementReader readA(weights, a), readB(weights, b);
  uint64_t count = byteSize(a) / readA.elementSize;
  std::vector<char> chunkA, chunkB;
  for (uint64_t first = 0; first < count; first += kChunkElements) {
    uint64_t run = std::min(kChunkElements, count - first);
    if (!readA.run(first, run, chunkA) || !readB.run(first, run, chunkB) || chunkA != chunkB)
      return false;
  }
  return true;
}

/// Whether `b` ([cols, rows]) is the transpose of `a` ([rows, cols]): b[c][r] == a[r][c].
/// `sampleOnly` checks a few rows of a column first, to rule pairs out cheaply.
bool isTranspose(const WeightStore &weights, const StoredTensor &a, const StoredTensor &b,
                 bool sampleOnly) {
  uint64_t rows = a.shape[0], cols = a.shape[1];
  ElementReader readA(weights, a), readB(weights, b);
  uint64_t size = readA.elementSize;
  uint64_t blockRows = std::max<uint64_t>(1, kChunkElements / std::max<uint64_t>(cols, 1));
  std::vector<char> blockA, runB;
  for (uint64_t r0 = 0; r0 < rows; r0 += blockRows) {
    uint64_t block = std::min(blockRows, rows - r0);
    if (!readA.run(r0 * cols, block * cols, blockA))
      return false;
    for (uint64_t c = 0; c < cols; ++c) {
      if (!readB.run(c * rows + r0, block, runB))
        return false;
      for (uint64_t r = 0; r < block; ++r)
        if (std::memcmp(&blockA[(r * cols + c) * size], &runB[r * size], size) != 0)
          return false;
      if (sampleOnly && c == 1)
        return true;
    }
    if (sampleOnly)
      return true;
  }
  return true;
}

std::string listed(const std::vector<std::string> &items) {
  constexpr size_t kShown = 6;
  std::string text;
  for (size_t i = 0; i < items.size() && i < kShown; ++i)
    text += (i ? ", " : "") + items[i];
  if (items.size() > kShown)
    text += " and " + std::to_string(items.size() - kShown) + " more";
  return text;
}

} // namespace

std::string foldedExportWarning(const onnx::GraphProto &graph, const WeightStore &weights) {
  std::set<std::string> renamed, folded, gathered, multiplied;
  for (const onnx::NodeProto &node : graph.node()) {
    const std::string &type = node.op_type();
    bool product = type == "MatMul" || type == "Gemm";
    for (int i = 0; i < node.input_size(); ++i) {
      const StoredTensor *tensor = weights.find(node.input(i));
      if (!tensor || !isFloatingInitializer(*tensor))
        continue;
      if (tensor->name.rfind("onnx::", 0) == 0)
        (product || type == "Conv" ? renamed : folded).insert(tensor->name);
      if (product)
        multiplied.insert(tensor->name);
      if (type == "Gather" && i == 0 && tensor->shape.size() == 2)
        gathered.insert(tensor->name);
    }
  }
  std::vector<std::string> ties;
  for (const std::string &table : gathered)
    for (const std::string &weight : multiplied) {
      const StoredTensor &a = *weights.find(table), &b = *weights.find(weight);
      if (table == weight || a.dataType != b.dataType || byteSize(a) != byteSize(b) ||
          byteSize(a) == 0)
        continue;
      if (b.shape == a.shape && sameBytes(weights, a, b))
        ties.push_back("'" + weight + "' holds the values of '" + table + "'");
      else if (b.shape.size() == 2 && b.shape[0] == a.shape[1] && b.shape[1] == a.shape[0] &&
               isTranspose(weights, a, b, /*sampleOnly=*/true) &&
               isTranspose(weights, a, b, /*sampleOnly=*/false))
        ties.push_back("'" + weight + "' holds the transpose of '" + table + "'");
    }
  for (const std::string &name : renamed)
    folded.erase(name);
  // Those holding an inf or a NaN are buffers already (OnnxImporter.cpp).
  for (auto it = folded.begin(); it != folded.end();) {
    bool nonFinite = false;
    std::string error;
    bool read = holdsNonFiniteValue(weights, *weights.find(*it), nonFinite, error);
    it = read && !nonFinite ? std::next(it) : folded.erase(it);
  }
  if (renamed.empty() && ties.empty())
    return "";
  std::string text = "this model looks folded by torch.onnx.export's defaults (eval mode folds "
                     "BatchNorm into Conv, constant folding transposes and splits weights), "
                     "which rename or split the weights that train:";
  if (!renamed.empty())
    text += " initializers " + listed({renamed.begin(), renamed.end()}) +
            " feed MatMul/Gemm/Conv under names the exporter made (--freeze/--trainable globs "
            "and --save's names miss them);";
  if (!folded.empty())
    text += " other initializers with exporter-made names, " +
            listed({folded.begin(), folded.end()}) +
            ", are folded expressions (often of buffers, such as RoPE tables) and train as "
            "parameters;";
  if (!ties.empty())
    text += " " + listed(ties) + " (a tied weight split in two, which then trains as two);";
  text += " export with python/memc_export.py, or choose what trains with --freeze/--trainable";
  return text;
}

} // namespace memc
