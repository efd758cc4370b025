//===- ExportMetadata.h - what memc's export helper records ------*- C++ -*-===//
//
// python/memc_export.py writes into a model's metadata_props what ONNX cannot say, as JSON
// values: `memc.export_version` ("1"), `memc.parameters` (the initializers that train) and
// `memc.buffers` (every other initializer), `memc.padding_idx` ({embedding weight: row}),
// `memc.tied` (groups of names of one tensor, the exported one first) and `memc.example_shapes`
// ({graph input: the shape the export traced}). When a model carries them they decide which
// initializers train, in place of the importer's guesses from the graph and the values, which
// embedding rows a lookup gives no gradient, and the shape of a dynamic input not bound with
// --input-shape.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_IMPORTER_EXPORTMETADATA_H
#define MEMC_COMPILER_IMPORTER_EXPORTMETADATA_H

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace memc {

/// The export helper's account of a model's initializers.
struct ExportMetadata {
  /// Initializer names that train; every other initializer is a buffer.
  std::set<std::string> parameters;
  /// Embedding weight name -> the row its lookups give no gradient (nn.Embedding padding_idx).
  std::map<std::string, int64_t> paddingRows;
  /// Graph input -> the shape of the example the export traced.
  std::map<std::string, std::vector<int64_t>> exampleShapes;
  /// Tied groups: the exported initializer first, then the other state_dict names of the same
  /// tensor, which are not initializers (torch exports a shared parameter once).
  std::vector<std::vector<std::string>> tied;
  /// memc.* keys the helper does not write (a misspelling, or a newer helper): warned, ignored.
  std::vector<std::string> unknownKeys;
};

/// Reads the helper's metadata from `model`'s metadata_props into `metadata`, left empty for a
/// model without `memc.*` keys (a plain export). Returns false with a message naming the key in
/// `error` when the metadata is malformed, of an unknown version, names a tensor that is not one
/// of the model's initializers (or an input that is not a graph input), or ties names that the
/// model holds as separate initializers (which would train apart).
bool readExportMetadata(const onnx::ModelProto &model, std::optional<ExportMetadata> &metadata,
                        std::string &error);

} // namespace memc

#endif // MEMC_COMPILER_IMPORTER_EXPORTMETADATA_H
