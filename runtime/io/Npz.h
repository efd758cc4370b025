//===- Npz.h - numpy's .npz archives of arrays -------------------*- C++ -*-===//
//
// An .npz file is a zip archive (see Zip.h) of .npy files (see Npy.h for the element types), one
// per array, named "<array name>.npy"; np.savez stores them, np.savez_compressed deflates them.
// Graph inputs and outputs travel in this format.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_IO_NPZ_H
#define MEMC_RUNTIME_IO_NPZ_H

#include "runtime/io/Files.h"
#include "runtime/io/HostArray.h"

#include <memory>
#include <string>
#include <string_view>

namespace memc::runtime {

/// Parses an archive into arrays named after their entries (".npy" dropped); false on a
/// malformed archive or array, or on two entries with the same name. Nothing is inflated before
/// every entry's declared size has been checked against its .npy header and all of them together
/// against the machine's memory (see listZip for the archive's own checks); then one entry at a
/// time.
bool parseNpz(std::string_view archive, NamedArrays &out, std::string &error);
bool readNpz(const std::string &path, NamedArrays &out, std::string &error);

/// An npz read in place, for data larger than memory: the archive stays memory-mapped and each
/// stored (uncompressed: np.savez's) entry is a view of its bytes, read as pages are touched;
/// deflated entries (np.savez_compressed) and float64 ones (narrowed to f32) are parsed into
/// `owned`, and only they count against the memory this process may take.
struct NpzView {
  std::unique_ptr<MappedFile> file;
  NamedArrays owned;
  NamedViews arrays;
};
bool mapNpz(const std::string &path, NpzView &out, std::string &error);

bool serializeNpz(const NamedArrays &arrays, bool compress, std::string &out, std::string &error);
/// serializeNpz, then an atomic write to `path`.
bool writeNpz(const std::string &path, const NamedArrays &arrays, bool compress,
              std::string &error);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_IO_NPZ_H
