//===- HostArrays.h - host arrays for the runtime tests ---------*- C++ -*-===//
#ifndef MEMC_TEST_RUNTIME_HOSTARRAYS_H
#define MEMC_TEST_RUNTIME_HOSTARRAYS_H

#include "runtime/io/Files.h"
#include "runtime/io/HostArray.h"
#include "runtime/io/Npy.h"
#include "runtime/io/Zip.h"

#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace memc::testing {

/// An f32 array of `shape` holding `values`.
inline runtime::HostArray floats(std::vector<int64_t> shape, std::vector<float> values) {
  runtime::HostArray array;
  array.dtype = runtime::DType::F32;
  array.shape = std::move(shape);
  array.bytes.resize(values.size() * 4);
  if (!values.empty())
    std::memcpy(array.bytes.data(), values.data(), array.bytes.size());
  return array;
}

/// Writes `arrays` as an .npz file, those named in `float64` (f32 or i64 arrays) stored as
/// float64, numpy's default float, which the runtime's writer never writes.
inline bool writeNpzWithFloat64(const std::string &path, const runtime::NamedArrays &arrays,
                                const std::set<std::string> &float64, std::string &error) {
  std::vector<std::string> files;
  for (const auto &[name, array] : arrays) {
    files.push_back(runtime::serializeNpy(array));
    if (!float64.count(name))
      continue;
    std::string &npy = files.back();
    bool f32 = array.dtype == runtime::DType::F32;
    npy.replace(npy.find(f32 ? "'<f4'" : "'<i8'"), 5, "'<f8'"); // the header keeps its length
    npy.resize(npy.size() - array.bytes.size());
    for (size_t i = 0; i < array.bytes.size() / (f32 ? 4 : 8); ++i) {
      double value = f32 ? array.as<float>()[i] : static_cast<double>(array.as<int64_t>()[i]);
      npy.append(reinterpret_cast<const char *>(&value), sizeof(double));
    }
  }
  std::vector<runtime::ZipEntryRef> entries;
  for (size_t i = 0; i < arrays.size(); ++i)
    entries.push_back({arrays[i].first + ".npy", files[i]});
  std::string archive;
  return runtime::writeZip(entries, /*compress=*/false, archive, error) &&
         runtime::writeFileAtomically(path, {archive}, 0644, error);
}

} // namespace memc::testing

#endif // MEMC_TEST_RUNTIME_HOSTARRAYS_H
