//===- WeightStore.h - where a model's initializers live --------*- C++ -*-===//
//
// Weights never enter the IR. The importer indexes every initializer of the ONNX model by name:
// its data type, shape and the byte range that holds its little-endian data, in the .onnx file
// itself (raw_data, located by scanning the protobuf wire format) or in an external-data file.
// Data is read only when asked for, so importing a multi-GB model touches none of it.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_IMPORTER_WEIGHTSTORE_H
#define MEMC_COMPILER_IMPORTER_WEIGHTSTORE_H

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace onnx {
class ModelProto;
class TensorProto;
} // namespace onnx

namespace memc {

/// One initializer: metadata plus where its bytes are.
struct StoredTensor {
  std::string name;
  int32_t dataType = 0;            // onnx::TensorProto_DataType of the bytes
  /// The type the model declares for it: dataType, unless the bytes are another file's
  /// (--weights-from, CheckpointWeights.h), which the program writer converts.
  int32_t modelDataType = 0;
  std::vector<int64_t> shape;
  std::string file;                // absolute or relative path of the file holding the bytes
  uint64_t offset = 0;             // byte offset in `file`
  uint64_t length = 0;             // byte length (= numElements * elementSize)
  /// Data stored in typed fields (float_data, int64_data, ...) rather than raw bytes, converted
  /// to little-endian raw bytes; then `file` is empty. Only small tensors are stored this way.
  std::vector<char> inlineBytes;
  /// A tensor memc derives (DerivedWeights.h), made when read: its `length` bytes.
  std::function<bool(std::vector<char> &out, std::string &error)> make;

  /// Bytes of its data, wherever they are.
  uint64_t byteSize() const { return file.empty() && !make ? inlineBytes.size() : length; }
};

class WeightStore {
public:
  /// Indexes the initializers of `model`, which was parsed from `modelPath`. Validates every
  /// initializer: known data type, non-negative dims, a byte length matching the shape, and
  /// external-data files that exist and are long enough (offset + length <= file size).
  /// Returns false with a message naming the initializer in `error`.
  bool index(const onnx::ModelProto &model, const std::string &modelPath, std::string &error);

  const StoredTensor *find(const std::string &name) const;
  /// Adds a tensor memc made (its data inline or made when read), replacing any tensor of the
  /// same name: the values memc derives (compiler/lowering/DerivedWeights.h).
  void add(StoredTensor tensor);
  const std::vector<StoredTensor> &tensors() const { return ordered; }

  /// Reads the tensor's bytes into `out` (resized to its length).
  bool read(const StoredTensor &tensor, std::vector<char> &out, std::string &error) const;
  /// Reads `length` bytes from byte `offset` of the tensor's data into `out`, so that a big
  /// tensor can be looked at in pieces.
  bool readRange(const StoredTensor &tensor, uint64_t offset, uint64_t length,
                 std::vector<char> &out, std::string &error) const;

private:
  std::vector<StoredTensor> ordered;
  std::map<std::string, size_t> byName;
};

} // namespace memc

#endif // MEMC_COMPILER_IMPORTER_WEIGHTSTORE_H
