//===- CheckpointIntegrity.h - checksums and metadata of checkpoints -*- C++ -*-===//
//
// A checkpoint (DIR/checkpoint.safetensors) is parameters, buffers and optimizer state with a
// few metadata strings: the step it was taken after and the program that wrote it. A flipped
// byte in it used to resume silently with other losses, and an edited step resumed from the
// wrong place, so the metadata carries CRC-32C checksums (runtime/support/Crc32c.h):
//
//   "crc32c.tensor.NAME"  of each tensor's bytes, one entry per tensor;
//   "crc32c.metadata"     of every other metadata entry (key and value, in key order) and of
//                         the tensor table (names and byte counts, in file order).
//
// Dtypes and shapes are not in the metadata checksum: resuming checks both against the program.
// The file stays a plain safetensors file that any reader loads.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_IO_CHECKPOINTINTEGRITY_H
#define MEMC_RUNTIME_IO_CHECKPOINTINTEGRITY_H

#include "runtime/io/Safetensors.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace memc::runtime {

/// The metadata fields every checkpoint carries besides its checksums.
struct CheckpointMetadata {
  /// The optimizer step the checkpoint was taken after.
  int64_t step = 0;
  /// programFingerprint() of the program that wrote it: 16 lowercase hex digits.
  std::string program;
  std::string model;
  std::string optimizer;
  /// The run's --seed and its data's fingerprint (dataFingerprint, TrainingData.h); absent in
  /// checkpoints from before they were recorded.
  std::optional<int64_t> seed;
  std::string data;
  /// The run's peak learning rate and its schedule's shape (LearningRateSchedule::shape); absent
  /// in checkpoints from before the programs took --lr and --schedule.
  std::optional<double> learningRate;
  std::string schedule;
  /// "weight_decay W, clip_grad_norm C": what else the run could set at run time.
  std::string settings;
};

/// The safetensors metadata of a checkpoint of `tensors` (in the order they are written): the
/// fields and the checksums.
std::map<std::string, std::string> checkpointMetadata(const CheckpointMetadata &fields,
                                                      const std::vector<TensorRef> &tensors);

/// Sets the checksums in `metadata` for `tensors` and the other entries of `metadata`
/// (checkpointMetadata does; tests seal hand-made metadata with it).
void sealCheckpointMetadata(std::map<std::string, std::string> &metadata,
                            const std::vector<TensorRef> &tensors);

/// Verifies every checksum of `checkpoint`, then reads and validates its fields: a format of
/// "memc-checkpoint", a step that is a decimal integer (no sign, no blanks, no overflow), a
/// fingerprint of 16 hex digits. Returns false with a message (without the file's name).
bool readCheckpointMetadata(const SafetensorsFile &checkpoint, CheckpointMetadata &fields,
                            std::string &error);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_IO_CHECKPOINTINTEGRITY_H
