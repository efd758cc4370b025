//===- Bundle.h - a compiled program as one executable file ------*- C++ -*-===//
//
// memc ships a compiled program as a copy of the prebuilt runner with the program appended:
//
//   [runner executable][plan bytes][weights bytes (safetensors)][footer]
//
// The footer is the last kBundleFooterSize bytes of the file, little-endian:
//
//   offset  size  field
//   0       8     magic "MEMCBNDL"
//   8       4     bundle version (kBundleVersion)
//   12      8     plan offset      (from the start of the file)
//   20      8     plan size
//   28      8     weights offset
//   36      8     weights size
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
#include <memory>
#include <string>
#include <string_view>

namespace memc::runtime {

constexpr char kBundleMagic[8] = {'M', 'E', 'M', 'C', 'B', 'N', 'D', 'L'};
constexpr uint32_t kBundleVersion = 1;
constexpr size_t kBundleFooterSize = 44;

/// Writes `outPath`: a copy of the runner at `runnerPath` followed by the plan, the weights and
/// the footer; executable (0755 before the umask) and written atomically (temporary file and
/// rename). Refuses a runner that already carries a bundle.
bool writeBundle(const std::string &runnerPath, const std::string &outPath,
                 std::string_view planBytes, std::string_view weightsBytes, std::string &error);

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
  /// The file ends in the magic but the footer is damaged; `error` says how.
  Invalid,
};

/// Looks for a bundle at the end of the file at `path`.
BundleStatus readBundle(const std::string &path, Bundle &bundle, std::string &error);
/// Looks for a bundle in `bytes` (a whole file); the views point into `bytes`.
BundleStatus parseBundle(std::string_view bytes, std::string_view &plan,
                         std::string_view &weights, std::string &error);

/// The path of the running executable (/proc/self/exe).
std::string currentExecutablePath();

} // namespace memc::runtime

#endif // MEMC_RUNTIME_BUNDLE_BUNDLE_H
