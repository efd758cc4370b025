//===- ElementTypesTest.cpp - the dtype table's MLIR side -----------------===//
#include "dialects/memc/ElementTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using memc::kernels::DType;

namespace {

TEST(ElementTypesTest, EveryRowButPackedOnesHasAnMlirTypeThatMapsBack) {
  MLIRContext context;
  for (const memc::kernels::DTypeInfo &row : memc::kernels::kDTypeTable) {
    Type type = memc::elementTypeOf(row.dtype, &context);
    if (row.kind == memc::kernels::DTypeKind::Packed) {
      EXPECT_FALSE(type) << row.name;
      continue;
    }
    ASSERT_TRUE(type) << row.name;
    EXPECT_EQ(memc::dtypeOf(type), row.dtype) << row.name;
    EXPECT_EQ(memc::dtypeOf(RankedTensorType::get({2}, type)), row.dtype) << row.name;
  }
  EXPECT_EQ(memc::dtypeOf(Builder(&context).getF64Type()), std::nullopt);
}

TEST(ElementTypesTest, StorageBytesFollowTheTable) {
  MLIRContext context;
  Builder builder(&context);
  EXPECT_EQ(memc::storageBytes(RankedTensorType::get({3}, builder.getI1Type())), 3u);
  EXPECT_EQ(memc::storageBytes(RankedTensorType::get({2, 3}, builder.getBF16Type())), 12u);
  EXPECT_EQ(memc::storageBytes(RankedTensorType::get({}, builder.getI64Type())), 8u);
  EXPECT_EQ(memc::storageBytes(RankedTensorType::get({4}, builder.getF64Type())), 0u);
}

} // namespace
