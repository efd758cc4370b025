//===- NpzTest.cpp - .npy and .npz reading and writing --------------------===//
#include "runtime/io/Npz.h"

#include "runtime/io/Files.h"
#include "runtime/io/Npy.h"
#include "runtime/io/Zip.h"
#include "runtime/support/Bytes.h"

#include "ZipBomb.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sys/resource.h>
#include <unistd.h>

using namespace memc::runtime;

namespace {

template <typename T>
HostArray arrayOf(DType dtype, std::vector<int64_t> shape, std::vector<T> values) {
  HostArray array;
  array.dtype = dtype;
  array.shape = std::move(shape);
  array.bytes.resize(values.size() * sizeof(T));
  if (!values.empty())
    std::memcpy(array.bytes.data(), values.data(), array.bytes.size());
  return array;
}

template <typename T> std::vector<T> valuesOf(const HostArray &array) {
  std::vector<T> values(array.bytes.size() / sizeof(T));
  if (!values.empty())
    std::memcpy(values.data(), array.bytes.data(), array.bytes.size());
  return values;
}

const HostArray *find(const NamedArrays &arrays, const std::string &name) {
  for (const auto &[key, array] : arrays)
    if (key == name)
      return &array;
  return nullptr;
}

NamedArrays sampleArrays() {
  return {
      {"f32", arrayOf<float>(DType::F32, {2, 2}, {1, -2, 3.5f, 4})},
      {"f16", arrayOf<uint16_t>(DType::F16, {3}, {0x3c00, 0xc000, 0x7bff})},
      {"i64", arrayOf<int64_t>(DType::I64, {1, 2}, {-1, int64_t(1) << 40})},
      {"i32", arrayOf<int32_t>(DType::I32, {}, {7})},
      {"bool", arrayOf<uint8_t>(DType::Bool, {4}, {1, 0, 1, 1})},
      {"empty", arrayOf<float>(DType::F32, {0, 3}, {})},
  };
}

class NpzRoundTrip : public ::testing::TestWithParam<bool> {};

TEST_P(NpzRoundTrip, PreservesEveryType) {
  NamedArrays arrays = sampleArrays();
  std::string bytes, error;
  ASSERT_TRUE(serializeNpz(arrays, GetParam(), bytes, error)) << error;
  NamedArrays read;
  ASSERT_TRUE(parseNpz(bytes, read, error)) << error;
  ASSERT_EQ(read.size(), arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    EXPECT_EQ(read[i].first, arrays[i].first);
    EXPECT_EQ(read[i].second.dtype, arrays[i].second.dtype) << arrays[i].first;
    EXPECT_EQ(read[i].second.shape, arrays[i].second.shape) << arrays[i].first;
    EXPECT_EQ(read[i].second.bytes, arrays[i].second.bytes) << arrays[i].first;
  }
}

INSTANTIATE_TEST_SUITE_P(StoredAndDeflated, NpzRoundTrip, ::testing::Values(false, true));

// numpy has no bfloat16: bf16 arrays are written as their bits, uint16, and uint16 arrays read
// as bf16 bits (which only bf16 inputs take: inputTypeProblem).
TEST(NpzTest, WritesBf16AsItsUint16Bits) {
  NamedArrays arrays = {{"b", arrayOf<uint16_t>(DType::BF16, {2}, {0x3fc0, 0xc040})}};
  std::string bytes, error;
  ASSERT_TRUE(serializeNpz(arrays, false, bytes, error)) << error;
  EXPECT_NE(bytes.find("'descr': '<u2'"), std::string::npos);
  NamedArrays read;
  ASSERT_TRUE(parseNpz(bytes, read, error)) << error;
  EXPECT_EQ(read[0].second.dtype, DType::BF16);
  EXPECT_EQ(read[0].second.fileType, FileType::Uint16);
  EXPECT_EQ(valuesOf<uint16_t>(read[0].second), (std::vector<uint16_t>{0x3fc0, 0xc040}));
}

TEST(NpzTest, NamesWhatAnInputTypeNeeds) {
  HostArray bits = arrayOf<uint16_t>(DType::BF16, {1}, {0x3f80});
  bits.fileType = FileType::Uint16;
  EXPECT_EQ(inputTypeProblem(bits, DType::BF16), "");
  EXPECT_NE(inputTypeProblem(bits, DType::F32).find("uint16 arrays carry bf16 bits and feed only "
                                                    "bf16 inputs; this one takes '<f4' data"),
            std::string::npos);
  HostArray floats = arrayOf<float>(DType::F32, {1}, {1.0f});
  EXPECT_EQ(inputTypeProblem(floats, DType::F32), "");
  EXPECT_NE(inputTypeProblem(floats, DType::BF16).find("write the bf16 bits as uint16"),
            std::string::npos);
  HostArray narrowed = floats;
  narrowed.fileType = FileType::Float64;
  EXPECT_EQ(inputTypeProblem(narrowed, DType::F32), "");
  EXPECT_NE(inputTypeProblem(narrowed, DType::I64).find("float64"), std::string::npos);
}

/// Files np.savez and np.savez_compressed wrote (data/generate.py).
class NumpyFiles : public ::testing::TestWithParam<const char *> {};

TEST_P(NumpyFiles, ReadsWhatNumpyWrote) {
  NamedArrays arrays;
  std::string error;
  ASSERT_TRUE(readNpz(std::string(MEMC_RUNTIME_TEST_DATA "/") + GetParam(), arrays, error))
      << error;
  ASSERT_EQ(arrays.size(), 7u);
  const HostArray *f32 = find(arrays, "f32");
  ASSERT_TRUE(f32);
  EXPECT_EQ(f32->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(valuesOf<float>(*f32), (std::vector<float>{0, 0.5, 1, 1.5, 2, 2.5}));
  EXPECT_EQ(find(arrays, "f16")->dtype, DType::F16);
  EXPECT_EQ(valuesOf<uint16_t>(*find(arrays, "f16")),
            (std::vector<uint16_t>{0x3e00, 0xc000, 0x7bff}));
  EXPECT_EQ(valuesOf<int64_t>(*find(arrays, "i64")),
            (std::vector<int64_t>{1, -2, 3, int64_t(1) << 40}));
  EXPECT_TRUE(find(arrays, "i32_scalar")->shape.empty());
  EXPECT_EQ(valuesOf<int32_t>(*find(arrays, "i32_scalar")), (std::vector<int32_t>{7}));
  EXPECT_EQ(valuesOf<uint8_t>(*find(arrays, "b1")), (std::vector<uint8_t>{1, 0, 1, 1}));
  const HostArray *f64 = find(arrays, "f64");
  EXPECT_EQ(f64->dtype, DType::F32);
  EXPECT_EQ(valuesOf<float>(*f64), (std::vector<float>{0.1f, 1e30f}));
  EXPECT_EQ(find(arrays, "empty")->shape, (std::vector<int64_t>{0, 3}));
}

INSTANTIATE_TEST_SUITE_P(SavezAndCompressed, NumpyFiles,
                         ::testing::Values("numpy_savez.npz", "numpy_compressed.npz"));

std::string readError(const std::string &file) {
  NamedArrays arrays;
  std::string error;
  EXPECT_FALSE(readNpz(std::string(MEMC_RUNTIME_TEST_DATA "/") + file, arrays, error));
  return error;
}

TEST(NpzTest, RefusesWhatMemcCannotRepresent) {
  EXPECT_NE(readError("numpy_fortran.npz").find("fortran_order"), std::string::npos);
  EXPECT_NE(readError("numpy_bigendian.npz").find("'>f4'"), std::string::npos);
  EXPECT_NE(readError("numpy_uint8.npz").find("'|u1'"), std::string::npos);
  EXPECT_NE(readError("missing.npz").find("missing.npz"), std::string::npos);
}

std::string validArchive(bool compress) {
  std::string bytes, error;
  EXPECT_TRUE(serializeNpz(sampleArrays(), compress, bytes, error));
  return bytes;
}

std::string parseError(std::string_view bytes) {
  NamedArrays arrays;
  std::string error;
  EXPECT_FALSE(parseNpz(bytes, arrays, error));
  return error;
}

TEST(NpzTest, DetectsCorruption) {
  std::string archive = validArchive(false);
  EXPECT_NE(parseError("").find("not a zip archive"), std::string::npos);
  EXPECT_NE(parseError(archive.substr(0, archive.size() - 1)).find("end of central directory"),
            std::string::npos);
  // A flipped byte in the first array's data (after the 30-byte local header, "f32.npy" and the
  // 128-byte .npy header): the CRC catches it.
  std::string flipped = archive;
  flipped[30 + 7 + 128 + 1] ^= 0x40;
  EXPECT_NE(parseError(flipped).find("CRC"), std::string::npos) << parseError(flipped);
  // The central directory's offset points past it.
  std::string moved = archive;
  uint32_t offset = readLittleEndian<uint32_t>(moved.data() + moved.size() - 6);
  moved[moved.size() - 6] = static_cast<char>((offset + 1000) & 0xff);
  moved[moved.size() - 5] = static_cast<char>(((offset + 1000) >> 8) & 0xff);
  EXPECT_NE(parseError(moved).find("out of range"), std::string::npos) << parseError(moved);
}

TEST(NpzTest, RefusesZip64AndUnsupportedMethods) {
  std::string archive = validArchive(false);
  std::string zip64 = archive;
  // Entry counts of 0xffff mean "see the zip64 record".
  for (size_t at : {zip64.size() - 12, zip64.size() - 14})
    zip64[at] = zip64[at + 1] = '\xff';
  EXPECT_NE(parseError(zip64).find("zip64"), std::string::npos) << parseError(zip64);

  std::string bzip2 = archive;
  size_t central = readLittleEndian<uint32_t>(bzip2.data() + bzip2.size() - 6);
  bzip2[central + 10] = 12;
  EXPECT_NE(parseError(bzip2).find("compression method 12"), std::string::npos);
}

TEST(NpzTest, RefusesDuplicateNames) {
  HostArray a = arrayOf<float>(DType::F32, {1}, {1});
  std::string one = serializeNpy(a);
  std::string bytes, error;
  ASSERT_TRUE(writeZip({{"a.npy", one}, {"a", one}}, false, bytes, error));
  EXPECT_NE(parseError(bytes).find("appears twice"), std::string::npos);
}

TEST(NpzTest, DeflateBombIsRefusedBeforeAllocating) {
  std::string archive = validArchive(true);
  size_t central = readLittleEndian<uint32_t>(archive.data() + archive.size() - 6);
  // Claim 4 GiB uncompressed for the first entry.
  for (int i = 0; i < 4; ++i)
    archive[central + 24 + i] = i == 3 ? '\xfe' : '\xff';
  EXPECT_NE(parseError(archive).find("more than deflate can encode"), std::string::npos)
      << parseError(archive);
}

// The largest resident set the process has had so far.
uint64_t peakResidentBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return uint64_t(usage.ru_maxrss) * 1024;
}

// The archive is well-formed: the same construct with one entry and a small array parses.
TEST(NpzTest, ZipBombConstructIsAValidArchive) {
  NamedArrays arrays;
  std::string error;
  ASSERT_TRUE(parseNpz(memc::testing::zipBomb({"x.npy"}, false, 3 * 16384), arrays, error))
      << error;
  ASSERT_EQ(arrays.size(), 1u);
  EXPECT_EQ(arrays[0].second.shape, (std::vector<int64_t>{3 * 16384}));
  EXPECT_EQ(valuesOf<float>(arrays[0].second), std::vector<float>(3 * 16384, 0.0f));
}

// Four entries of 2 GiB each share one 2 MB deflate stream (within deflate's ratio, so the size
// check alone lets them through): refused before inflating anything, memory stays bounded.
TEST(NpzTest, ZipBombOfEntriesSharingOneStreamIsRefusedBeforeInflating) {
  std::string bomb = memc::testing::zipBomb({"a.npy", "b.npy", "c.npy", "d.npy"});
  EXPECT_LT(bomb.size(), 4u << 20);
  uint64_t before = peakResidentBytes();
  EXPECT_EQ(parseError(bomb), "npz: entries 'a.npy' and 'b.npy' overlap (a zip bomb's trick; a "
                              "real archive never shares bytes between entries)");
  std::string same = memc::testing::zipBomb({"a.npy", "a.npy", "a.npy", "a.npy"}, true);
  EXPECT_EQ(parseError(same), "npz: entry 'a.npy' appears twice");
  EXPECT_LT(peakResidentBytes() - before, uint64_t(256) << 20);
}

// One 2 GiB array, under an address-space limit of the process's current size plus 1 GiB: the
// size check knows RLIMIT_AS, not only RAM, and refuses before inflating (std::bad_alloc
// aborted before). The limit is put back after.
TEST(NpzTest, ArraysBeyondTheAddressSpaceLimitAreRefusedBeforeInflating) {
  std::string bomb = memc::testing::zipBomb({"a.npy"});
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &saved), 0);
  std::ifstream status("/proc/self/statm");
  uint64_t pages = 0;
  status >> pages;
  rlimit tight = saved;
  tight.rlim_cur = pages * uint64_t(sysconf(_SC_PAGESIZE)) + (uint64_t(1) << 30);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &tight), 0);
  std::string error = parseError(bomb);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &saved), 0);
  EXPECT_NE(error.find("more than the address-space limit (RLIMIT_AS)"), std::string::npos)
      << error;
}

// An entry whose declared size is not what its .npy header needs is refused from the header
// alone (only the first 64 KiB are inflated to read it).
TEST(NpzTest, EntrySizeMustMatchItsNpyHeader) {
  std::string bomb = memc::testing::zipBomb({"x.npy"});
  size_t central = readLittleEndian<uint32_t>(bomb.data() + bomb.size() - 6);
  uint64_t before = peakResidentBytes();
  for (size_t at : {size_t(22), central + 24}) // local and central uncompressed size
    bomb[at] = static_cast<char>(bomb[at] - 1);
  EXPECT_EQ(parseError(bomb).rfind("npz: array 'x': the entry holds ", 0), 0u) << parseError(bomb);
  EXPECT_NE(parseError(bomb).find("but its .npy header's '<f4' [536854528] needs"),
            std::string::npos)
      << parseError(bomb);
  EXPECT_LT(peakResidentBytes() - before, uint64_t(256) << 20);
  // Local and central headers that disagree are refused too.
  bomb[22] = static_cast<char>(bomb[22] + 1);
  EXPECT_NE(parseError(bomb).find("the local header disagrees with the central directory"),
            std::string::npos)
      << parseError(bomb);
}

TEST(NpzTest, NpyHeadersAreParsedStrictly) {
  auto npy = [](const std::string &dict, size_t dataBytes) {
    std::string bytes("\x93NUMPY\x01\x00", 8);
    appendLittleEndian<uint16_t>(bytes, dict.size());
    return bytes + dict + std::string(dataBytes, '\0');
  };
  struct Case {
    std::string bytes;
    const char *message;
  } cases[] = {
      {"\x93NUMPX\x01\x00", "bad magic"},
      {std::string("\x93NUMPY\x04\x00\x00\x00", 10), "version 4"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 4), "needs 8"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2), }\n", 8), "shape"},
      {npy("{'descr': '<f4', 'fortran_order': False}\n", 4), "lacks"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}\n", 4), "'x'"},
      {npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (), }\n", 4),
       "structured"},
      {npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (), }\n", 4), "fortran_order"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }\n", 4),
       "shape"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }\n", 4),
       "too large"},
      {npy("{'descr': '<c8', 'fortran_order': False, 'shape': (), }\n", 8), "'<c8'"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), } trailing", 4), "after"},
      {std::string("\x93NUMPY\x01\x00\xff\x00{}", 12), "truncated"},
  };
  for (const Case &c : cases) {
    HostArray array;
    std::string error;
    EXPECT_FALSE(parseNpy(c.bytes, array, error)) << c.message;
    EXPECT_NE(error.find(c.message), std::string::npos)
        << "expected '" << c.message << "', got: " << error;
  }
}

TEST(NpzTest, NpyHeadersArePaddedTo64Bytes) {
  std::string bytes = serializeNpy(arrayOf<float>(DType::F32, {3}, {1, 2, 3}));
  EXPECT_EQ((bytes.size() - 12) % 64, 0u);
  EXPECT_EQ(bytes[bytes.size() - 13], '\n');
}

TEST(NpzTest, TruncationsAndBitFlipsNeverCrash) {
  for (bool compress : {false, true}) {
    std::string archive = validArchive(compress);
    for (size_t size = 0; size < archive.size(); ++size) {
      NamedArrays arrays;
      std::string error;
      EXPECT_FALSE(parseNpz(std::string_view(archive).substr(0, size), arrays, error));
    }
    for (size_t bit = 0; bit < archive.size() * 8; bit += 3) {
      std::string flipped = archive;
      flipped[bit / 8] ^= static_cast<char>(1 << (bit % 8));
      NamedArrays arrays;
      std::string error;
      if (!parseNpz(flipped, arrays, error)) {
        EXPECT_FALSE(error.empty());
      }
    }
  }
}

TEST(NpzTest, WriteIsAtomicAndReportsUnwritablePaths) {
  std::string path = ::testing::TempDir() + "/npz_test_" + std::to_string(getpid()) + ".npz";
  std::string error;
  ASSERT_TRUE(writeNpz(path, sampleArrays(), true, error)) << error;
  NamedArrays arrays;
  ASSERT_TRUE(readNpz(path, arrays, error)) << error;
  EXPECT_EQ(arrays.size(), sampleArrays().size());
  std::remove(path.c_str());
  EXPECT_FALSE(writeNpz("/nonexistent/dir/out.npz", sampleArrays(), false, error));
  EXPECT_NE(error.find("/nonexistent/dir"), std::string::npos) << error;
  EXPECT_FALSE(prepareOutputFile("/nonexistent/dir/out.npz", error));
  EXPECT_FALSE(prepareOutputFile(::testing::TempDir(), error));
  EXPECT_NE(error.find("directory"), std::string::npos) << error;
}

} // namespace

namespace {

// mapNpz, the training data's reader: a stored archive's arrays are views into the mapped file
// (no copy, so data larger than memory pages in as micro-batches touch it), a deflated one's
// are parsed into owned arrays; both hold the values written, and a flipped bit in a stored
// entry is still caught by its CRC.
TEST(NpzTest, MapReadsStoredEntriesInPlaceAndChecksThem) {
  std::string dir = ::testing::TempDir();
  std::string stored = dir + "/map_stored_" + std::to_string(getpid()) + ".npz";
  std::string deflated = dir + "/map_deflated_" + std::to_string(getpid()) + ".npz", error;
  NamedArrays written = sampleArrays();
  ASSERT_TRUE(writeNpz(stored, written, false, error)) << error;
  ASSERT_TRUE(writeNpz(deflated, written, true, error)) << error;
  for (const std::string &path : {stored, deflated}) {
    NpzView view;
    ASSERT_TRUE(mapNpz(path, view, error)) << error;
    ASSERT_EQ(view.arrays.size(), written.size());
    std::string_view file = view.file->bytes();
    for (size_t i = 0; i < written.size(); ++i) {
      const ArrayView &array = view.arrays[i].second;
      EXPECT_EQ(view.arrays[i].first, written[i].first);
      EXPECT_EQ(array.shape, written[i].second.shape);
      ASSERT_EQ(array.size, written[i].second.bytes.size());
      EXPECT_EQ(std::memcmp(array.data, written[i].second.bytes.data(), array.size), 0);
      bool inFile = reinterpret_cast<const char *>(array.data) >= file.data() &&
                    reinterpret_cast<const char *>(array.data) + array.size <=
                        file.data() + file.size();
      EXPECT_EQ(inFile, path == stored) << path << " array " << i;
    }
    EXPECT_EQ(view.owned.size(), path == stored ? 0u : written.size());
  }
  std::string bytes;
  ASSERT_TRUE(readFile(stored, bytes, error)) << error;
  bytes[30 + 7 + 128 + 1] ^= 0x40; // in the first array's data, as DetectsCorruption
  std::ofstream(stored, std::ios::binary | std::ios::trunc) << bytes;
  NpzView corrupted;
  EXPECT_FALSE(mapNpz(stored, corrupted, error));
  EXPECT_NE(error.find("CRC-32 mismatch"), std::string::npos) << error;
  std::remove(stored.c_str());
  std::remove(deflated.c_str());
}

} // namespace
