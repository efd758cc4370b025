//===- DTypeTable.h - the one table of element types ------------*- C++ -*-===//
//
// Every element type memc stores, one row each: the plan's enum value, the names messages and
// files use, the storage width in bits, and the type's name in each exchange format
// (safetensors, ONNX TensorProto, numpy). The plan format, the runtime's file readers and
// writers, the lowering and the importer all read this table, so a new type is one row here,
// one value in runtime/plan/Plan.proto's DType and, if the dialect computes it, its MLIR type
// in dialects/memc/ElementTypes.cpp.
//
// Sizes are in bits: a tensor of n elements occupies storageBytes = ceil(n * bits / 8) bytes,
// so packed sub-byte types (nf4: two elements per byte) size like any other.
//
// Storage-only types (u8, i8, nf4) are for 8-bit optimizer states and quantized weights: no op
// computes them yet, so neither the dialect nor the kernels accept them. A block-quantized
// tensor (nf4, and int8 states) carries its scales as a separate f32 or f16 tensor with one
// value per block of N elements; how the pair is named and bound is left to the issue that
// adds the quantization pass.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_DTYPETABLE_H
#define MEMC_KERNELS_DTYPETABLE_H

#include <cstddef>
#include <cstdint>

namespace memc::kernels {

/// Element types. Values are stable: the plan format stores them (memc.plan.DType), and they
/// need not be contiguous.
enum class DType : uint8_t {
  F32 = 0,
  F16 = 1,
  BF16 = 2,
  I64 = 3,
  I32 = 4,
  Bool = 5,
  U8 = 6,
  I8 = 7,
  NF4 = 8,
};

enum class DTypeKind : uint8_t { Float, SignedInt, UnsignedInt, Bool, Packed };

struct DTypeInfo {
  DType dtype;
  /// The plan's, the runtime's and the files' name; also memc.plan.DType's name, upper-cased.
  const char *name;
  /// The kernels' and the IR's name (MLIR spells bool "i1" and unsigned types "ui").
  const char *irName;
  /// Storage bits per element; bool takes a whole byte.
  uint32_t bits;
  DTypeKind kind;
  /// Whether the dialect and the kernels compute on it; the others are storage only.
  bool computed;
  /// The safetensors dtype. Packed types have none of their own and are stored as their
  /// bytes: "U8" with shape [storage bytes], as bitsandbytes stores NF4 weights.
  const char *safetensorsName;
  /// The onnx.TensorProto.DataType value; 0 (UNDEFINED) where ONNX has no equivalent.
  int32_t onnxDataType;
  /// The .npy descr; nullptr where numpy has none. numpy has no bfloat16, so bf16 travels as
  /// its bits, uint16 ("<u2"): what numpy users hold (torch's t.view(torch.int16), ml_dtypes'
  /// a.view(np.uint16)), and read as bf16 only where a bf16 input takes it.
  const char *numpyDescr;
};

inline constexpr DTypeInfo kDTypeTable[] = {
    {DType::F32, "f32", "f32", 32, DTypeKind::Float, true, "F32", 1, "<f4"},
    {DType::F16, "f16", "f16", 16, DTypeKind::Float, true, "F16", 10, "<f2"},
    {DType::BF16, "bf16", "bf16", 16, DTypeKind::Float, true, "BF16", 16, "<u2"},
    {DType::I64, "i64", "i64", 64, DTypeKind::SignedInt, true, "I64", 7, "<i8"},
    {DType::I32, "i32", "i32", 32, DTypeKind::SignedInt, true, "I32", 6, "<i4"},
    {DType::Bool, "bool", "i1", 8, DTypeKind::Bool, true, "BOOL", 9, "|b1"},
    {DType::U8, "u8", "ui8", 8, DTypeKind::UnsignedInt, false, "U8", 2, "|u1"},
    {DType::I8, "i8", "i8", 8, DTypeKind::SignedInt, false, "I8", 3, "|i1"},
    {DType::NF4, "nf4", "nf4", 4, DTypeKind::Packed, false, "U8", 0, nullptr},
};

/// The row of `dtype` at compile time, for static checks against the table; `dtype` must have
/// one (else the first row).
constexpr const DTypeInfo &dtypeRow(DType dtype) {
  for (const DTypeInfo &row : kDTypeTable)
    if (row.dtype == dtype)
      return row;
  return kDTypeTable[0];
}

/// The row of `dtype`; nullptr for a value outside the table.
const DTypeInfo *findDType(DType dtype);
/// The row of the plan enum value `value`; nullptr if there is none.
const DTypeInfo *findDTypeValue(int64_t value);
/// The row whose own safetensors dtype is `name` (packed types are stored as U8 and read as it).
const DTypeInfo *findSafetensorsDType(const char *name);
const DTypeInfo *findOnnxDType(int32_t onnxDataType);
const DTypeInfo *findNumpyDType(const char *descr);

/// Storage bits per element; 0 for a value outside the table.
uint32_t dtypeBits(DType dtype);
/// Bytes `count` elements occupy, ceil(count * bits / 8); false on overflow or an unknown dtype.
bool checkedStorageBytes(DType dtype, uint64_t count, uint64_t &out);
/// Bytes one element occupies, rounded up to a whole byte: the alignment a buffer of the type
/// needs, and the element size of every type a kernel computes.
size_t dtypeSize(DType dtype);
/// The IR's name ("f32", "i1"), as the kernels' messages say it.
const char *dtypeName(DType dtype);
bool isFloating(DType dtype);

} // namespace memc::kernels

#endif // MEMC_KERNELS_DTYPETABLE_H
