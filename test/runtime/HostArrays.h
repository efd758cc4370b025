//===- HostArrays.h - host arrays for the runtime tests ---------*- C++ -*-===//
#ifndef MEMC_TEST_RUNTIME_HOSTARRAYS_H
#define MEMC_TEST_RUNTIME_HOSTARRAYS_H

#include "runtime/io/HostArray.h"

#include <cstring>
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

} // namespace memc::testing

#endif // MEMC_TEST_RUNTIME_HOSTARRAYS_H
