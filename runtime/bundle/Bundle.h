//===- Bundle.h - a compiled program as one executable file ------*- C++ -*-===//
//
// memc ships a compiled program as a copy of the prebuilt runner with the program appended:
//
//   [runner executable][plan bytes][weights bytes (safetensors)][footer]
//
// The footer is the last kBundleFooterSize bytes of the file, little-endian:
//
//   offset  size  field
//   0       4     CRC-32C of footer bytes 4..60
//   4       4     CRC-32C of the runner (the bytes before the plan)
//   8       4     CRC-32C of the plan bytes
//   12      4     CRC-32C of the weights bytes
//   16      8     magic "MEMCBNDL"
//   24      4     bundle version (kBundleVersion)
//   28      8     plan offset      (from the start of the file)
//   36      8     plan size
//   44      8     weights offset
//   52      8     weights size
//
// The magic and the version sit at the same distance from the end of the file in every bundle
// version (version 1 had no checksums and a 44-byte footer starting at the magic), so a runner
// tells a program of another memc from a damaged one. Every byte of a bundle is checked: the
// footer, the runner and both sections by their checksums, so one flipped byte is an error (or,
// in the runner's code, a crash before it can check), never a model that silently computes
// something else.
//
// The runner looks for the footer in its own file (/proc/self/exe): without one it is the plain
// runner, with a valid one it runs the program it carries, with a damaged one it refuses to run.
// The ELF loader ignores bytes after the sections it maps, so the appended payload does not
// change how the runner itself loads.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_BUNDLE_BUNDLE_H
#define MEMC_RUNTIME_BUNDLE_BUNDLE_H

#include "runtime/io/Files.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace memc::runtime {

constexpr char kBundleMagic[8] = {'M', 'E', 'M', 'C', 'B', 'N', 'D', 'L'};
/// 2: the footer carries CRC-32C checksums of itself, the runner, the plan and the weights.
constexpr uint32_t kBundleVersion = 2;
constexpr size_t kBundleFooterSize = 60;
/// Where the magic starts, counted back from the end of the file, in every bundle version.
constexpr size_t kBundleMagicFromEnd = 44;

/// Writes `outPath`: a copy of the runner at `runnerPath` followed by the plan, the weights and
/// the footer; executable (0755 before the umask) and written atomically (temporary file and
/// rename). Refuses a runner that already carries a bundle.
bool writeBundle(const std::string &runnerPath, const std::string &outPath,
                 std::string_view planBytes, std::string_view weightsBytes, std::string &error);
/// A part of the weights made only when it is written: `make` sets `bytes` (a view of a mapped
/// file, or of `scratch`, which it may fill) to exactly `size` bytes, or fails with a message.
struct WeightsPart {
  uint64_t size = 0;
  std::function<bool(std::vector<char> &scratch, std::string_view &bytes, std::string &error)>
      make;
};
/// The same with the weights in parts, each made as it is written (a view of a model's mapped
/// file, a converted or quantized tensor), so a model larger than memory is never whole in it;
/// their checksum is taken as they pass.
bool writeBundle(const std::string &runnerPath, const std::string &outPath,
                 std::string_view planBytes, const std::vector<WeightsPart> &weightsParts,
                 std::string &error);

/// A program found in an executable; the views point into the mapped file.
struct Bundle {
  std::unique_ptr<MappedFile> file;
  std::string_view plan;
  std::string_view weights;
};

enum class BundleStatus {
  /// The file ends in a valid footer; `bundle` holds the program.
  Found,
  /// The file carries no bundle (it does not end in the magic).
  Absent,
  /// The file ends in the magic but the footer or a section is damaged, or another memc wrote
  /// it; `error` says which.
  Invalid,
};

/// Looks for a bundle at the end of the file at `path`.
BundleStatus readBundle(const std::string &path, Bundle &bundle, std::string &error);
/// Looks for a bundle in `bytes` (a whole file) and verifies its checksums; the views point into
/// `bytes`.
BundleStatus parseBundle(std::string_view bytes, std::string_view &plan,
                         std::string_view &weights, std::string &error);

/// The path of the running executable (/proc/self/exe).
std::string currentExecutablePath();

} // namespace memc::runtime

#endif // MEMC_RUNTIME_BUNDLE_BUNDLE_H
