//===- CheckpointIntegrity.cpp - checksums and metadata of checkpoints ----===//
#include "runtime/io/CheckpointIntegrity.h"

#include "runtime/support/Crc32c.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace memc::runtime {
namespace {

constexpr const char *kFormat = "memc-checkpoint";
constexpr const char *kMetadataCrc = "crc32c.metadata";
constexpr std::string_view kTensorCrcPrefix = "crc32c.tensor.";

/// A tensor as the metadata checksum sees it.
struct TableEntry {
  std::string_view name;
  uint64_t bytes;
};

/// The checksum of every metadata entry but itself and of the tensor table; each string is
/// followed by a NUL so that moving bytes between fields changes it.
uint32_t metadataCrc(const std::map<std::string, std::string> &metadata,
                     const std::vector<TableEntry> &table) {
  uint32_t crc = 0;
  auto add = [&](std::string_view text) {
    crc = crc32c(text, crc);
    crc = crc32c(std::string_view("\0", 1), crc);
  };
  for (const auto &[key, value] : metadata) {
    if (key == kMetadataCrc)
      continue;
    add(key);
    add(value);
  }
  for (const TableEntry &entry : table) {
    add(entry.name);
    add(std::to_string(entry.bytes));
  }
  return crc;
}

const std::string *findEntry(const std::map<std::string, std::string> &metadata,
                             const std::string &key) {
  auto found = metadata.find(key);
  return found == metadata.end() ? nullptr : &found->second;
}

/// A step number as checkpoints write it: decimal digits only, within int64.
bool parseStep(const std::string &text, int64_t &step) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  auto [end, status] = std::from_chars(text.data(), text.data() + text.size(), step);
  return status == std::errc() && end == text.data() + text.size();
}

bool isFingerprint(const std::string &text) {
  return text.size() == 16 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

bool verifyChecksums(const SafetensorsFile &checkpoint, std::string &error) {
  const std::map<std::string, std::string> &metadata = checkpoint.metadata();
  const std::string *saved = findEntry(metadata, kMetadataCrc);
  if (!saved) {
    error = "the checkpoint carries no checksums: an older memc wrote it, or it is not a memc "
            "checkpoint; resume it with the memc that wrote it, or start again without --resume";
    return false;
  }
  std::vector<TableEntry> table;
  for (const SafetensorsTensor &tensor : checkpoint.tensors())
    table.push_back({tensor.name, tensor.bytes.size()});
  uint32_t crc;
  if (!parseCrc32cHex(*saved, crc) || crc != metadataCrc(metadata, table)) {
    error = "section 'metadata' is corrupted (checksum mismatch)";
    return false;
  }
  for (const SafetensorsTensor &tensor : checkpoint.tensors()) {
    const std::string *tensorCrc = findEntry(metadata, std::string(kTensorCrcPrefix) + tensor.name);
    if (!tensorCrc || !parseCrc32cHex(*tensorCrc, crc) || crc != crc32c(tensor.bytes)) {
      error = "tensor '" + tensor.name + "' is corrupted (checksum mismatch)";
      return false;
    }
  }
  return true;
}

} // namespace

std::map<std::string, std::string> checkpointMetadata(const CheckpointMetadata &fields,
                                                      const std::vector<TensorRef> &tensors) {
  std::map<std::string, std::string> metadata = {{"format", kFormat},
                                                 {"step", std::to_string(fields.step)},
                                                 {"program", fields.program},
                                                 {"model", fields.model},
                                                 {"optimizer", fields.optimizer}};
  if (fields.seed)
    metadata["seed"] = std::to_string(*fields.seed);
  if (!fields.data.empty())
    metadata["data"] = fields.data;
  if (fields.learningRate) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.17g", *fields.learningRate);
    metadata["lr"] = text;
  }
  if (!fields.schedule.empty())
    metadata["schedule"] = fields.schedule;
  if (!fields.settings.empty())
    metadata["settings"] = fields.settings;
  sealCheckpointMetadata(metadata, tensors);
  return metadata;
}

void sealCheckpointMetadata(std::map<std::string, std::string> &metadata,
                            const std::vector<TensorRef> &tensors) {
  std::vector<TableEntry> table;
  for (const TensorRef &tensor : tensors) {
    metadata[std::string(kTensorCrcPrefix) + tensor.name] = crc32cHex(crc32c(tensor.bytes));
    table.push_back({tensor.name, tensor.bytes.size()});
  }
  metadata[kMetadataCrc] = crc32cHex(metadataCrc(metadata, table));
}

bool readCheckpointMetadata(const SafetensorsFile &checkpoint, CheckpointMetadata &fields,
                            std::string &error) {
  const std::map<std::string, std::string> &metadata = checkpoint.metadata();
  const std::string *format = findEntry(metadata, "format");
  if (!format || *format != kFormat) {
    error = "not a memc checkpoint (its metadata has no \"format\": \"" + std::string(kFormat) +
            "\")";
    return false;
  }
  if (!verifyChecksums(checkpoint, error))
    return false;
  // The checksums held, so what is wrong below was written so, not damaged on the way.
  const std::string *step = findEntry(metadata, "step");
  if (!step || !parseStep(*step, fields.step)) {
    error = "the checkpoint's step " + (step ? "'" + *step + "'" : std::string("(missing)")) +
            " is not a decimal integer from 0 to " + std::to_string(INT64_MAX);
    return false;
  }
  const std::string *program = findEntry(metadata, "program");
  if (!program || !isFingerprint(*program)) {
    error = "the checkpoint's program fingerprint " +
            (program ? "'" + *program + "'" : std::string("(missing)")) +
            " is not 16 hex digits";
    return false;
  }
  fields.program = *program;
  const std::string *model = findEntry(metadata, "model");
  const std::string *optimizer = findEntry(metadata, "optimizer");
  if (!model || !optimizer) {
    error = std::string("the checkpoint's metadata has no \"") + (model ? "optimizer" : "model") +
            "\" entry";
    return false;
  }
  fields.model = *model;
  fields.optimizer = *optimizer;
  if (const std::string *seed = findEntry(metadata, "seed")) {
    int64_t value;
    if (!parseStep(*seed, value)) {
      error = "the checkpoint's seed '" + *seed + "' is not a decimal integer";
      return false;
    }
    fields.seed = value;
  }
  if (const std::string *data = findEntry(metadata, "data"))
    fields.data = *data;
  if (const std::string *lr = findEntry(metadata, "lr")) {
    char *end = nullptr;
    double value = std::strtod(lr->c_str(), &end);
    if (lr->empty() || *end != '\0' || !std::isfinite(value) || value < 0) {
      error = "the checkpoint's lr '" + *lr + "' is not a learning rate";
      return false;
    }
    fields.learningRate = value;
  }
  if (const std::string *schedule = findEntry(metadata, "schedule"))
    fields.schedule = *schedule;
  if (const std::string *settings = findEntry(metadata, "settings"))
    fields.settings = *settings;
  return true;
}

} // namespace memc::runtime
