//===- Npy.h - numpy's .npy array format -------------------------*- C++ -*-===//
//
// A .npy file is the magic "\x93NUMPY", a version (1.0, 2.0 or 3.0), a header length (u16 for
// 1.0, u32 after), a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces to a newline, then the raw elements.
//
// Element types are the dtype table's numpy column. Read: the types ops compute on ('<f4' f32,
// '<f2' f16, '<u2' bf16 bits, '<i8' i64, '<i4' i32, '|b1' bool), and '<f8', which is narrowed
// to f32 (numpy's default float is f64; memc has no f64 kernels). Written: every type, bf16 (which
// numpy lacks) as its bits, '<u2', and nf4 as its bytes, '|u1'. Refused with a message:
// big-endian data, other types (u8 and i8 among them), structured dtypes and fortran_order True.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_IO_NPY_H
#define MEMC_RUNTIME_IO_NPY_H

#include "runtime/io/HostArray.h"

#include <string>
#include <string_view>

namespace memc::runtime {

bool parseNpy(std::string_view bytes, HostArray &out, std::string &error);

/// What a .npy header says, read before any data: readers of archives check an entry's declared
/// size against it before inflating the entry.
struct NpyLayout {
  DType dtype = DType::F32;
  std::string descr;
  std::vector<int64_t> shape;
  FileType fileType = FileType::Same; // '<f8' data read as f32, '<u2' as bf16
  /// Where the data starts, how many bytes of it the file holds, and what it takes in memory.
  uint64_t dataOffset = 0;
  uint64_t dataBytes = 0;
  uint64_t memoryBytes = 0;
};

/// Parses the header at the start of `bytes` (which may stop anywhere after it).
bool parseNpyLayout(std::string_view bytes, NpyLayout &layout, std::string &error);

/// The .npy encoding of `array` (version 1.0 unless the header needs 2.0).
std::string serializeNpy(const HostArray &array);

/// The element type an array has in its file: "f64" for float64 data read as f32, "uint16"
/// for bf16 bits, else its dtype's name.
std::string fileDTypeString(const HostArray &array);

/// The note for array `name`, float64 data, fed to an f32 input (float64 feeds no other type).
std::string float64Note(const std::string &name);

/// Why `array` cannot feed an input of type `expected` although its file type could be meant
/// for it, with what to write instead: float64 data for a non-f32 input, uint16 (bf16 bits) for
/// a non-bf16 one, float32 for a bf16 one. Empty when none of these applies.
std::string inputTypeProblem(const HostArray &array, DType expected);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_IO_NPY_H
