//===- ExportMetadata.h - what memc's export helper records ------*- C++ -*-===//
//
// python/memc_export.py writes into a model's metadata_props what ONNX cannot say, as JSON
// values: `memc.export_version` ("1"), `memc.parameters` (the initializers that train) and
// `memc.buffers` (every other initializer), `memc.padding_idx` ({embedding weight: row}). When a
// model carries them they decide which initializers train, in place of the importer's guesses
// from the graph and the values, and which embedding rows a lookup gives no gradient.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_IMPORTER_EXPORTMETADATA_H
#define MEMC_COMPILER_IMPORTER_EXPORTMETADATA_H

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

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
};

/// Reads the helper's metadata from `model`'s metadata_props into `metadata`, left empty for a
/// model without `memc.*` keys (a plain export). Returns false with a message naming the key in
/// `error` when the metadata is malformed, of an unknown version, or names a tensor that is not
/// one of the model's initializers.
bool readExportMetadata(const onnx::ModelProto &model, std::optional<ExportMetadata> &metadata,
                        std::string &error);

} // namespace memc

#endif // MEMC_COMPILER_IMPORTER_EXPORTMETADATA_H
