//===- ExportEvidence.cpp - signs of a folded or renamed ONNX export -------===//
//
// Two traces of torch.onnx.export's constant folding: exporter-made `onnx::*` names on the
// weights of MatMul/Gemm/Conv (folded transposes), and a Gather table whose values reappear,
// as they are or transposed, in an initializer feeding a MatMul/Gemm (a tied embedding/head
// split in two). Sampled elements rule most pairs out (and constant tables, as in shape-only
// models, count as no evidence); the rest are compared in chunks, so that no big weight is read
// whole, except big transposes, which their samples decide. And a trace ONNX leaves of
// nn.Embedding(padding_idx=N): the table's row N is all zeros (PyTorch zeroes it and never
// updates it), found by reading the table in chunks. And the text for Dropout nodes a
// training-mode export keeps when the program is for inference.
//
//===----------------------------------------------------------------------===//
#include "compiler/importer/ExportEvidence.h"
#include "compiler/importer/NonFiniteScan.h"
#include "compiler/importer/OnnxTypes.h"
#include "compiler/importer/WeightStore.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <optional>
#include <set>
#include <vector>

namespace memc {
namespace {

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
constexpr uint64_t kSamples = 64;
/// Above this many elements a transpose is judged by its samples: a full check reads one side
/// column by column.
constexpr uint64_t kMaxFullTransposeCheck = 1 << 22;

/// How a tensor `b` may repeat a Gather table `a`.
enum class Repeat { Identical, Transposed };

/// The index in `b` of element `index` of `a` ([rows, cols]) under `repeat`.
uint64_t indexInB(const StoredTensor &a, uint64_t index, Repeat repeat) {
  if (repeat == Repeat::Identical)
    return index;
  uint64_t rows = a.shape[0], cols = a.shape[1];
  return (index % cols) * rows + index / cols;
}

/// Whether `b` agrees with `a` at a spread of sampled elements, which are not all equal (a
/// constant or all-zero table, as in shape-only models, is no evidence of a tie).
bool samplesAgree(const WeightStore &weights, const StoredTensor &a, const StoredTensor &b,
                  Repeat repeat) {
  ElementReader readA(weights, a), readB(weights, b);
  uint64_t count = a.byteSize() / readA.elementSize;
  std::vector<char> elementA, elementB, first;
  bool varied = false;
  for (uint64_t i = 0; i < kSamples; ++i) {
    uint64_t index = count <= 1 ? 0 : i * (count - 1) / (kSamples - 1);
    if (!readA.run(index, 1, elementA) || !readB.run(indexInB(a, index, repeat), 1, elementB) ||
        elementA != elementB)
      return false;
    if (i == 0)
      first = elementA;
    varied |= elementA != first;
  }
  return varied;
}

/// Whether two tensors of the same type and size hold the same bytes.
bool sameBytes(const WeightStore &weights, const StoredTensor &a, const StoredTensor &b) {
  ElementReader readA(weights, a), readB(weights, b);
  uint64_t count = a.byteSize() / readA.elementSize;
  std::vector<char> chunkA, chunkB;
  for (uint64_t first = 0; first < count; first += kChunkElements) {
    uint64_t run = std::min(kChunkElements, count - first);
    if (!readA.run(first, run, chunkA) || !readB.run(first, run, chunkB) || chunkA != chunkB)
      return false;
  }
  return true;
}

/// Whether `b` ([cols, rows]) is the transpose of `a` ([rows, cols]): b[c][r] == a[r][c],
/// reading `a` in row blocks and `b` column run by column run.
bool isTranspose(const WeightStore &weights, const StoredTensor &a, const StoredTensor &b) {
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
    }
  }
  return true;
}

/// How `b` repeats the Gather table `a`, if it does.
std::optional<Repeat> repeats(const WeightStore &weights, const StoredTensor &a,
                              const StoredTensor &b) {
  if (a.dataType != b.dataType || a.byteSize() != b.byteSize() || a.byteSize() == 0)
    return std::nullopt;
  if (b.shape == a.shape && samplesAgree(weights, a, b, Repeat::Identical) &&
      sameBytes(weights, a, b))
    return Repeat::Identical;
  bool transposedShape =
      b.shape.size() == 2 && b.shape[0] == a.shape[1] && b.shape[1] == a.shape[0];
  uint64_t count = a.byteSize() / onnxElementSize(a.dataType);
  if (transposedShape && samplesAgree(weights, a, b, Repeat::Transposed) &&
      (count > kMaxFullTransposeCheck || isTranspose(weights, a, b)))
    return Repeat::Transposed;
  return std::nullopt;
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

/// The rows of a float32 [rows, cols] table that hold only zeros (+0 or -0), read in chunks.
std::optional<std::vector<int64_t>> zeroRows(const WeightStore &weights,
                                             const StoredTensor &table) {
  uint64_t rows = table.shape[0], cols = table.shape[1];
  if (cols == 0)
    return std::nullopt;
  uint64_t rowsPerChunk = std::max<uint64_t>(1, kChunkElements / cols);
  ElementReader reader(weights, table);
  std::vector<char> bytes;
  std::vector<int64_t> zero;
  for (uint64_t first = 0; first < rows; first += rowsPerChunk) {
    uint64_t count = std::min(rowsPerChunk, rows - first);
    if (!reader.run(first * cols, count * cols, bytes))
      return std::nullopt;
    for (uint64_t row = 0; row < count; ++row) {
      const char *begin = bytes.data() + row * cols * sizeof(float);
      bool allZero = true;
      for (uint64_t c = 0; allZero && c < cols; ++c) {
        float value;
        std::memcpy(&value, begin + c * sizeof(float), sizeof(float));
        allZero = value == 0.0f;
      }
      if (allZero)
        zero.push_back(static_cast<int64_t>(first + row));
    }
  }
  return zero;
}

} // namespace

std::string unrecordedPaddingWarning(const onnx::GraphProto &graph, const WeightStore &weights) {
  std::set<std::string> tables;
  for (const onnx::NodeProto &node : graph.node())
    if (node.op_type() == "Gather" && node.input_size() > 0)
      if (const StoredTensor *table = weights.find(node.input(0));
          table && table->dataType == onnx::TensorProto::FLOAT && table->shape.size() == 2 &&
          table->shape[0] > 1)
        tables.insert(table->name);
  std::vector<std::string> padded;
  for (const std::string &name : tables) {
    std::optional<std::vector<int64_t>> rows = zeroRows(weights, *weights.find(name));
    if (rows && rows->size() == 1)
      padded.push_back("row " + std::to_string(rows->front()) + " of '" + name + "'");
  }
  if (padded.empty())
    return "";
  return listed(padded) + " (an embedding table) " + (padded.size() == 1 ? "is" : "are") +
         " all zeros, as nn.Embedding(padding_idx=N) keeps its padding row; ONNX does not record "
         "padding_idx, so memc trains that row like any other, where PyTorch gives it no "
         "gradient: export with python/memc_export.py, which records it";
}

std::string trainingModeDropoutWarning(const std::vector<std::string> &dropoutNodes) {
  if (dropoutNodes.empty())
    return "";
  size_t count = dropoutNodes.size();
  return std::to_string(count) + " Dropout node" + (count == 1 ? " runs" : "s run") +
         " in training mode (" + listed(dropoutNodes) +
         "), so the inference program drops as ONNX says it does; export with model.eval() "
         "to run inference without " + (count == 1 ? "it" : "them");
}

std::string foldedExportWarning(const onnx::GraphProto &graph, const WeightStore &weights) {
  std::set<std::string> renamed, folded, gathered, multiplied;
  for (const onnx::NodeProto &node : graph.node()) {
    const std::string &type = node.op_type();
    bool product = type == "MatMul" || type == "Gemm";
    for (int i = 0; i < node.input_size(); ++i) {
      const StoredTensor *tensor = weights.find(node.input(i));
      if (!tensor || !isFloatingOnnxType(tensor->dataType))
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
      if (table == weight)
        continue;
      std::optional<Repeat> repeat = repeats(weights, *weights.find(table), *weights.find(weight));
      if (repeat)
        ties.push_back("'" + weight + "' holds the " +
                       (*repeat == Repeat::Identical ? "values" : "transpose") + " of '" + table +
                       "'");
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
