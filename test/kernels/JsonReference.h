//===- JsonReference.h - the references Python generators write --*- C++ -*-===//
//
// Tests that compare a C++ algorithm with its Python reference (test/kernels/make_*.py) read the
// JSON file the generator wrote, and its arrays of numbers.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_TEST_KERNELS_JSONREFERENCE_H
#define MEMC_TEST_KERNELS_JSONREFERENCE_H

#include "runtime/io/Files.h"
#include "runtime/io/Json.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace memc::kernels::testing {

/// The file at `path`, parsed; a file that cannot be read or parsed fails the test.
inline runtime::JsonValue readJsonReference(const std::string &path) {
  std::string text, error;
  runtime::JsonValue value;
  EXPECT_TRUE(runtime::readFile(path, text, error) && runtime::parseJson(text, value, error))
      << path << ": " << error;
  return value;
}

/// A JSON array of numbers as T.
template <typename T> std::vector<T> numbers(const runtime::JsonValue &array) {
  std::vector<T> values;
  for (const runtime::JsonValue &element : array.elements())
    values.push_back(static_cast<T>(element.number()));
  return values;
}

} // namespace memc::kernels::testing

#endif // MEMC_TEST_KERNELS_JSONREFERENCE_H
