//===- DTypeTableTest.cpp - the dtype table against the formats it names -===//
//
// Walks kernels/DTypeTable.h row by row and checks each column against what it claims to be:
// the plan's enum, ONNX's TensorProto.DataType, a safetensors round trip and a numpy one.
//
//===----------------------------------------------------------------------===//
#include "kernels/DTypeTable.h"
#include "runtime/io/Npy.h"
#include "runtime/io/Safetensors.h"
#include "runtime/plan/Plan.pb.h"
#include "runtime/support/DTypes.h"

#include <onnx/onnx_pb.h>

#include <cctype>
#include <cstdint>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <string>

using namespace memc;
using kernels::DType;
using kernels::DTypeInfo;
using kernels::DTypeKind;

namespace {

std::string upperCase(std::string text) {
  for (char &c : text)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

/// A tensor of `dtype` with `count` elements whose bytes count up from 1.
runtime::HostArray countingArray(DType dtype, int64_t count) {
  runtime::HostArray array{dtype, {count}, {}};
  uint64_t bytes = 0;
  EXPECT_TRUE(runtime::checkedSizeBytes(dtype, array.shape, bytes));
  for (uint64_t i = 0; i < bytes; ++i)
    array.bytes.push_back(static_cast<uint8_t>(i + 1));
  return array;
}

TEST(DTypeTableTest, RowsAreThePlanEnum) {
  std::set<int> values;
  std::set<std::string> names;
  for (const DTypeInfo &row : kernels::kDTypeTable) {
    int value = static_cast<int>(row.dtype);
    EXPECT_TRUE(values.insert(value).second) << row.name;
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    ASSERT_TRUE(plan::DType_IsValid(value)) << row.name;
    EXPECT_EQ(plan::DType_Name(static_cast<plan::DType>(value)), upperCase(row.name));
    EXPECT_GT(row.bits, 0u) << row.name;
    EXPECT_EQ(kernels::findDType(row.dtype), &row);
    EXPECT_EQ(kernels::findDTypeValue(value), &row);
  }
  for (int value = plan::DType_MIN; value <= plan::DType_MAX; ++value) {
    if (plan::DType_IsValid(value)) {
      EXPECT_NE(kernels::findDTypeValue(value), nullptr) << "plan dtype " << value << " has no row";
    }
  }
  EXPECT_EQ(kernels::findDTypeValue(-1), nullptr);
  EXPECT_EQ(kernels::findDTypeValue(plan::DType_MAX + 1), nullptr);
}

TEST(DTypeTableTest, NamesKeepTheirSpellings) {
  EXPECT_STREQ(kernels::dtypeName(DType::Bool), "i1");
  EXPECT_STREQ(runtime::dtypeString(DType::Bool), "bool");
  EXPECT_STREQ(kernels::dtypeName(DType::BF16), "bf16");
  EXPECT_STREQ(runtime::dtypeString(DType::NF4), "nf4");
  EXPECT_STREQ(kernels::dtypeName(static_cast<DType>(200)), "<invalid dtype>");
}

TEST(DTypeTableTest, OnnxDataTypesAreOnnxs) {
  const std::map<std::string, onnx::TensorProto::DataType> expected = {
      {"f32", onnx::TensorProto::FLOAT},     {"f16", onnx::TensorProto::FLOAT16},
      {"bf16", onnx::TensorProto::BFLOAT16}, {"i64", onnx::TensorProto::INT64},
      {"i32", onnx::TensorProto::INT32},     {"bool", onnx::TensorProto::BOOL},
      {"u8", onnx::TensorProto::UINT8},      {"i8", onnx::TensorProto::INT8},
  };
  for (const DTypeInfo &row : kernels::kDTypeTable) {
    auto it = expected.find(row.name);
    if (it == expected.end()) {
      EXPECT_EQ(row.onnxDataType, 0) << row.name << " has no ONNX type";
      continue;
    }
    EXPECT_EQ(row.onnxDataType, it->second) << row.name;
    EXPECT_EQ(kernels::findOnnxDType(row.onnxDataType), &row);
  }
  EXPECT_EQ(kernels::findOnnxDType(onnx::TensorProto::DOUBLE), nullptr);
  EXPECT_EQ(kernels::findOnnxDType(onnx::TensorProto::UNDEFINED), nullptr);
}

TEST(DTypeTableTest, SafetensorsRoundTrips) {
  for (const DTypeInfo &row : kernels::kDTypeTable) {
    runtime::HostArray array = countingArray(row.dtype, 3);
    std::string bytes, error;
    ASSERT_TRUE(runtime::serializeSafetensors({runtime::tensorRef("t", array)}, {}, bytes, error))
        << row.name << ": " << error;
    runtime::SafetensorsFile file;
    ASSERT_TRUE(file.parse(bytes, error)) << row.name << ": " << error;
    const runtime::SafetensorsTensor &tensor = *file.find("t");
    EXPECT_EQ(tensor.dtypeName, row.safetensorsName);
    EXPECT_TRUE(tensor.supported) << row.name;
    EXPECT_EQ(std::string(tensor.bytes), std::string(array.bytes.begin(), array.bytes.end()));
    if (row.kind == DTypeKind::Packed) {
      // Stored as its bytes: it reads back as u8.
      EXPECT_EQ(tensor.dtype, DType::U8) << row.name;
      EXPECT_EQ(tensor.shape, std::vector<int64_t>{static_cast<int64_t>(array.bytes.size())});
    } else {
      EXPECT_EQ(tensor.dtype, row.dtype) << row.name;
      EXPECT_EQ(tensor.shape, array.shape) << row.name;
    }
  }
}

TEST(DTypeTableTest, NumpyDescrsRoundTripForComputedTypes) {
  for (const DTypeInfo &row : kernels::kDTypeTable) {
    if (!row.numpyDescr)
      continue;
    std::string descr = row.numpyDescr;
    // '<f4': byte order, kind, bytes per element.
    EXPECT_EQ(std::to_string(row.bits / 8), descr.substr(2)) << row.name;
    runtime::HostArray array = countingArray(row.dtype, 3);
    std::string file = runtime::serializeNpy(array);
    EXPECT_NE(file.find("'descr': '" + descr + "'"), std::string::npos) << row.name;
    runtime::HostArray back;
    std::string error;
    if (!row.computed) {
      // Arrays are graph inputs and outputs: storage-only types are refused, by name.
      EXPECT_FALSE(runtime::parseNpy(file, back, error)) << row.name;
      EXPECT_NE(error.find("'" + descr + "'"), std::string::npos) << error;
      continue;
    }
    ASSERT_TRUE(runtime::parseNpy(file, back, error)) << row.name << ": " << error;
    EXPECT_EQ(back.dtype, row.dtype) << row.name;
    EXPECT_EQ(back.shape, array.shape) << row.name;
    EXPECT_EQ(back.bytes, array.bytes) << row.name;
  }
  // numpy has no bf16: it travels as its bits, uint16, and reads back as bf16 from uint16 data.
  runtime::HostArray bf16{DType::BF16, {1}, {0x80, 0x3f}};
  std::string file = runtime::serializeNpy(bf16);
  EXPECT_NE(file.find("'descr': '<u2'"), std::string::npos);
  runtime::HostArray back;
  std::string error;
  ASSERT_TRUE(runtime::parseNpy(file, back, error)) << error;
  EXPECT_EQ(back.dtype, DType::BF16);
  EXPECT_EQ(back.fileType, runtime::FileType::Uint16);
  EXPECT_EQ(back.bytes, bf16.bytes);
}

TEST(DTypeTableTest, SizesAreInBits) {
  uint64_t bytes = 0;
  ASSERT_TRUE(runtime::checkedSizeBytes(DType::NF4, {3}, bytes));
  EXPECT_EQ(bytes, 2u); // 12 bits
  ASSERT_TRUE(runtime::checkedSizeBytes(DType::NF4, {2, 4}, bytes));
  EXPECT_EQ(bytes, 4u);
  ASSERT_TRUE(runtime::checkedSizeBytes(DType::Bool, {3}, bytes));
  EXPECT_EQ(bytes, 3u); // one byte per element
  ASSERT_TRUE(runtime::checkedSizeBytes(DType::F32, {2, 3}, bytes));
  EXPECT_EQ(bytes, 24u);
  EXPECT_EQ(kernels::dtypeSize(DType::NF4), 1u);
  // Overflow is caught in bits as it was in bytes; 4-bit counts that fit in bytes still size.
  EXPECT_FALSE(kernels::checkedStorageBytes(DType::F32, uint64_t{1} << 62, bytes));
  ASSERT_TRUE(kernels::checkedStorageBytes(DType::NF4, UINT64_MAX, bytes));
  EXPECT_EQ(bytes, UINT64_MAX / 2 + 1);
  EXPECT_FALSE(kernels::checkedStorageBytes(static_cast<DType>(200), 1, bytes));
}

} // namespace
