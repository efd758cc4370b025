//===- LayoutMathTest.cpp - the CUDA layout kernels' arithmetic -----------===//
//
// Runs the index arithmetic of Layout.cu and Indexing.cu (kernels/cuda/LayoutMath.h) on the
// host, the way each kernel's threads apply it, and compares the result with the CPU kernel of
// the same op on random shapes, attributes and element sizes: bitwise for the ops that move
// bits, and for gather_grad and top_k as well (their sums and orders are replayed in the CPU's
// order). Buffers start at random element-aligned offsets, so the unit widening (up to 16
// bytes) is checked where it applies and where it must not.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/LayoutMath.h"
#include "KernelTestSupport.h"
#include "kernels/KernelTargets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>

namespace memc::kernels::cuda {
namespace {

using testing::attrs;
using testing::OwnedTensor;
using testing::runKernel;

/// Element types of each size layout kernels move.
constexpr DType kSizes[] = {DType::Bool, DType::F16, DType::F32, DType::I64};

int64_t elementBytes(DType dtype) { return static_cast<int64_t>(dtypeSize(dtype)); }

OwnedTensor randomBytes(DType dtype, Shape shape, std::mt19937 &random) {
  OwnedTensor t(dtype, std::move(shape));
  for (uint8_t &byte : t.bytes)
    byte = static_cast<uint8_t>(random());
  return t;
}

/// Bytes at a random element-aligned offset from a 64-byte boundary, as a device buffer might
/// lie inside the arena.
class DeviceLike {
public:
  DeviceLike(const OwnedTensor &like, std::mt19937 &random)
      : size(like.bytes.size()), storage(size + 128, 0xA5) {
    int64_t element = elementBytes(like.dtype);
    uintptr_t address = reinterpret_cast<uintptr_t>(storage.data());
    uintptr_t aligned = (address + 63) / 64 * 64;
    start = storage.data() + (aligned - address) + random() % (64 / element) * element;
  }
  DeviceLike(const OwnedTensor &like, std::mt19937 &random, bool copyIn)
      : DeviceLike(like, random) {
    if (copyIn)
      std::memcpy(start, like.bytes.data(), size);
  }
  uint8_t *data() const { return start; }
  std::vector<uint8_t> bytes() const { return std::vector<uint8_t>(start, start + size); }

private:
  size_t size;
  std::vector<uint8_t> storage;
  uint8_t *start;
};

/// A call of these views (the index builders read only shapes and attributes).
KernelCall callOf(std::vector<TensorView> inputs, std::vector<TensorView> outputs,
                  const Attributes &attributes) {
  KernelCall call;
  call.inputs = std::move(inputs);
  call.outputs = std::move(outputs);
  call.attributes = &attributes;
  return call;
}

Shape randomShape(std::mt19937 &random, int minRank, int maxRank, int maxDim) {
  Shape shape(minRank + random() % (maxRank - minRank + 1));
  for (int64_t &dim : shape)
    dim = 1 + random() % maxDim;
  return shape;
}

//===----------------------------------------------------------------------===//
// Replays of the kernels' loops
//===----------------------------------------------------------------------===//

/// moveStrided (Layout.cu) over the dense tensor's elements, after launchStrided's widening.
template <typename Index>
void replayStrided(StridedIndex map, uint8_t *dense, uint8_t *strided, int64_t denseCount,
                   int64_t element, bool intoStrided) {
  int64_t unit = widenInnerRun(map, element, dense, strided);
  EXPECT_EQ(unit % element, 0);
  int64_t count = denseCount / (unit / element);
  for (int64_t i = 0; i < count; ++i) {
    int64_t offset = static_cast<int64_t>(stridedOffset<Index>(map, static_cast<Index>(i)));
    if (intoStrided)
      std::memcpy(strided + offset * unit, dense + i * unit, unit);
    else
      std::memcpy(dense + i * unit, strided + offset * unit, unit);
  }
}

/// transposeTiled (Layout.cu): every tile's elements, as its threads move them.
void replayTiles(const TransposeTiles &tiles, const uint8_t *x, uint8_t *y, int64_t element) {
  for (int64_t task = 0; task < tiles.tasks; ++task) {
    TileOrigin origin = tileOrigin(tiles, task);
    int64_t rows = std::min(kTransposeTile, tiles.rows - origin.row);
    int64_t cols = std::min(kTransposeTile, tiles.cols - origin.col);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        std::memcpy(y + (origin.out + i * tiles.rowOutStride + j) * element,
                    x + (origin.in + i + j * tiles.colInStride) * element, element);
  }
}

//===----------------------------------------------------------------------===//
// transpose, broadcast_to, slice, slice_grad
//===----------------------------------------------------------------------===//

TEST(CudaLayoutMath, TransposeMatchesCpuOnBothPaths) {
  std::mt19937 random(11);
  int tiled = 0;
  for (int trial = 0; trial < 300; ++trial) {
    DType dtype = kSizes[trial % 4];
    Shape shape = randomShape(random, 1, 6, 5);
    if (trial % 5 == 0) // large enough for partial and several tiles
      shape = {1 + static_cast<int64_t>(random() % 3), 20 + static_cast<int64_t>(random() % 50),
               20 + static_cast<int64_t>(random() % 50)};
    std::vector<int64_t> perm(shape.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), random);
    Shape outShape;
    for (int64_t d : perm)
      outShape.push_back(shape[d]);
    Attributes a = attrs({{"perm", perm}});
    OwnedTensor input = randomBytes(dtype, shape, random);
    OwnedTensor expected = runKernel("transpose", {input}, {{dtype, outShape}}, a)[0];
    OwnedTensor output(dtype, outShape);
    KernelCall call = callOf({input.view()}, {output.view()}, a);
    StridedIndex map;
    ASSERT_TRUE(transposeIndex(call, map));
    DeviceLike x(input, random, true), strided(output, random), tiles(output, random);
    int64_t count = input.numElements();
    replayStrided<int64_t>(map, strided.data(), x.data(), count, elementBytes(dtype), false);
    EXPECT_EQ(strided.bytes(), expected.bytes) << "strided path, trial " << trial;
    TransposeTiles plan;
    if (transposeTiles(map, plan)) {
      ++tiled;
      replayTiles(plan, x.data(), tiles.data(), elementBytes(dtype));
      EXPECT_EQ(tiles.bytes(), expected.bytes) << "tiled path, trial " << trial;
    }
  }
  EXPECT_GT(tiled, 50);
}

TEST(CudaLayoutMath, BroadcastToMatchesCpu) {
  std::mt19937 random(12);
  for (int trial = 0; trial < 300; ++trial) {
    DType dtype = kSizes[trial % 4];
    Shape output = randomShape(random, 0, 5, 4);
    Shape input(output.begin() + random() % (output.size() + 1), output.end());
    for (int64_t &dim : input)
      if (random() % 3 == 0)
        dim = 1;
    OwnedTensor x = randomBytes(dtype, input, random);
    Attributes none;
    OwnedTensor expected = runKernel("broadcast_to", {x}, {{dtype, output}}, none)[0];
    OwnedTensor y(dtype, output);
    KernelCall call = callOf({x.view()}, {y.view()}, none);
    StridedIndex map;
    ASSERT_TRUE(broadcastIndex(call, map));
    DeviceLike from(x, random, true), to(y, random), narrow(y, random);
    replayStrided<int64_t>(map, to.data(), from.data(), y.numElements(), elementBytes(dtype),
                           false);
    replayStrided<uint32_t>(map, narrow.data(), from.data(), y.numElements(), elementBytes(dtype),
                            false);
    EXPECT_EQ(to.bytes(), expected.bytes) << "trial " << trial;
    EXPECT_EQ(narrow.bytes(), expected.bytes) << "trial " << trial;
  }
}

/// Random valid slice attributes of `shape`, negative steps and steps longer than the
/// dimension included; false if the slice is empty.
bool randomSlice(const Shape &shape, std::mt19937 &random, Attributes &attributes, Shape &sliced) {
  std::vector<int64_t> starts, limits, steps;
  for (int64_t size : shape) {
    int64_t step = 1 + random() % 3, start = random() % size, limit;
    if (random() % 8 == 0)
      step = 100;
    if (random() % 3 == 0) { // backwards: from start down to just above limit
      step = -step;
      limit = static_cast<int64_t>(random() % (start + 1)) - 1;
    } else {
      limit = start + 1 + random() % (size - start);
    }
    if (random() % 4 == 0) { // the whole dimension, as contiguous slices often are
      step = 1;
      start = 0;
      limit = size;
    }
    if (random() % 50 == 0) // nothing
      limit = start;
    starts.push_back(start);
    limits.push_back(limit);
    steps.push_back(step);
  }
  attributes = attrs({{"starts", starts}, {"limits", limits}, {"steps", steps}});
  std::string error;
  EXPECT_TRUE(sliceShape(shape, starts, limits, steps, sliced, error)) << error;
  int64_t count = 1;
  for (int64_t dim : sliced)
    count *= dim;
  return count > 0;
}

TEST(CudaLayoutMath, SliceMatchesCpuWithNegativeSteps) {
  std::mt19937 random(13);
  int sliced = 0;
  for (int trial = 0; trial < 400; ++trial) {
    DType dtype = kSizes[trial % 4];
    Shape shape = randomShape(random, 1, 4, 9), outShape;
    if (trial % 3 == 0) // long rows, of which slices keep runs wide enough to widen
      shape.back() = 8 + random() % 40;
    Attributes a;
    if (!randomSlice(shape, random, a, outShape))
      continue;
    ++sliced;
    OwnedTensor x = randomBytes(dtype, shape, random);
    OwnedTensor expected = runKernel("slice", {x}, {{dtype, outShape}}, a)[0];
    OwnedTensor y(dtype, outShape);
    KernelCall call = callOf({x.view()}, {y.view()}, a);
    StridedIndex map;
    ASSERT_TRUE(sliceIndex(call, y.shape, x.shape, map));
    DeviceLike from(x, random, true), to(y, random), narrow(y, random);
    replayStrided<int64_t>(map, to.data(), from.data(), y.numElements(), elementBytes(dtype),
                           false);
    replayStrided<uint32_t>(map, narrow.data(), from.data(), y.numElements(), elementBytes(dtype),
                            false);
    EXPECT_EQ(to.bytes(), expected.bytes) << "trial " << trial;
    EXPECT_EQ(narrow.bytes(), expected.bytes) << "trial " << trial;
  }
  EXPECT_GT(sliced, 200);
}

TEST(CudaLayoutMath, SliceGradMatchesCpu) {
  std::mt19937 random(14);
  for (int trial = 0; trial < 300; ++trial) {
    DType dtype = kSizes[trial % 4];
    Shape shape = randomShape(random, 1, 4, 8), gradShape;
    Attributes a;
    if (!randomSlice(shape, random, a, gradShape))
      continue;
    OwnedTensor grad = randomBytes(dtype, gradShape, random);
    OwnedTensor expected = runKernel("slice_grad", {grad}, {{dtype, shape}}, a)[0];
    OwnedTensor result(dtype, shape);
    KernelCall call = callOf({grad.view()}, {result.view()}, a);
    StridedIndex map;
    ASSERT_TRUE(sliceIndex(call, grad.shape, result.shape, map));
    DeviceLike from(grad, random, true), to(result, random);
    // The run zeroes the result first unless the slice covers it.
    if (grad.numElements() < result.numElements())
      std::memset(to.data(), 0, result.bytes.size());
    replayStrided<uint32_t>(map, from.data(), to.data(), grad.numElements(), elementBytes(dtype),
                            true);
    EXPECT_EQ(to.bytes(), expected.bytes) << "trial " << trial;
  }
}

TEST(CudaLayoutMath, WideningNeedsContiguousAlignedRuns) {
  EXPECT_EQ(widestUnit({32, 48, 0}), 16);
  EXPECT_EQ(widestUnit({32, 40}), 8);
  EXPECT_EQ(widestUnit({6}), 2);
  EXPECT_EQ(widestUnit({7, 16}), 1);
  // Rows of 12 f32 with a row stride of 16: 16-byte units need 48-byte rows and 64-byte
  // strides (both divide), and aligned addresses.
  StridedIndex rows;
  rows.rank = 2;
  rows.dims[0] = 5, rows.dims[1] = 12;
  rows.strides[0] = 16, rows.strides[1] = 1;
  StridedIndex wide = rows;
  alignas(16) static uint8_t buffer[64];
  EXPECT_EQ(widenInnerRun(wide, 4, buffer, buffer + 16), 16);
  EXPECT_EQ(wide.dims[1], 3);
  EXPECT_EQ(wide.strides[0], 4);
  StridedIndex misaligned = rows;
  EXPECT_EQ(widenInnerRun(misaligned, 4, buffer + 4, buffer), 4);
  EXPECT_EQ(misaligned.dims[1], 12);
  // 12 of every 13 f32: each row starts 52 bytes after the last, so only 4-byte units fit.
  StridedIndex oddRows = rows;
  oddRows.strides[0] = 13;
  EXPECT_EQ(widenInnerRun(oddRows, 4, buffer, buffer), 4);
  EXPECT_EQ(oddRows.strides[0], 13);
  // A strided innermost run (a transpose, a broadcast) moves single elements.
  StridedIndex strided = rows;
  strided.strides[1] = 0;
  EXPECT_EQ(widenInnerRun(strided, 2, buffer, buffer), 2);
}

TEST(CudaLayoutMath, ThirtyTwoBitOffsetsWrapExactly) {
  // A reversed slice: negative strides wrap modulo 2^32 and still land on the right element.
  StridedIndex map;
  map.rank = 2;
  map.dims[0] = 3, map.dims[1] = 4;
  map.strides[0] = -10, map.strides[1] = -1;
  map.base = 29;
  for (int64_t i = 0; i < 12; ++i)
    EXPECT_EQ(stridedOffset<uint32_t>(map, static_cast<uint32_t>(i)),
              static_cast<uint32_t>(stridedOffset<int64_t>(map, i)));
  EXPECT_TRUE(fitsIn32Bits(int64_t{UINT32_MAX}, 1));
  EXPECT_FALSE(fitsIn32Bits(1, int64_t{UINT32_MAX} + 1));
}

//===----------------------------------------------------------------------===//
// concat, split
//===----------------------------------------------------------------------===//

/// A shape, an axis and piece sizes along it (some empty) that add up to the shape's.
void randomPieces(std::mt19937 &random, Shape &joined, int64_t &axis, std::vector<Shape> &pieces) {
  joined = randomShape(random, 1, 4, 5);
  axis = random() % joined.size();
  joined[axis] = 0;
  pieces.clear();
  for (size_t p = 0, count = 1 + random() % 4; p < count; ++p) {
    Shape piece = joined;
    piece[axis] = random() % 5;
    joined[axis] += piece[axis];
    pieces.push_back(piece);
  }
}

TEST(CudaLayoutMath, ConcatAndSplitMatchCpu) {
  std::mt19937 random(15);
  for (int trial = 0; trial < 300; ++trial) {
    DType dtype = kSizes[trial % 4];
    Shape joinedShape;
    int64_t axis;
    std::vector<Shape> shapes;
    randomPieces(random, joinedShape, axis, shapes);
    Attributes a = attrs({{"axis", axis}, {"sizes", std::vector<int64_t>()}});
    std::vector<OwnedTensor> pieces;
    std::vector<std::pair<DType, Shape>> pieceTypes;
    std::vector<int64_t> sizes;
    for (const Shape &shape : shapes) {
      pieces.push_back(randomBytes(dtype, shape, random));
      pieceTypes.push_back({dtype, shape});
      sizes.push_back(shape[axis]);
    }
    a.set("sizes", sizes);
    OwnedTensor joined = runKernel("concat", pieces, {{dtype, joinedShape}}, a)[0];
    std::vector<OwnedTensor> split = runKernel("split", {joined}, pieceTypes, a);

    // concat: one launch per non-empty piece, each unit to its joined offset.
    DeviceLike whole(joined, random);
    std::vector<std::vector<uint8_t>> splitBytes;
    int64_t offset = 0;
    for (const OwnedTensor &piece : pieces) {
      DeviceLike part(piece, random, true);
      int64_t unit;
      PieceBlocks blocks =
          pieceBlocks(TensorView{whole.data(), dtype, joinedShape},
                      TensorView{part.data(), dtype, piece.shape}, axis, offset, unit);
      offset += piece.shape[axis];
      for (int64_t i = 0; i < static_cast<int64_t>(piece.bytes.size()) / unit; ++i)
        std::memcpy(whole.data() + joinedOffset<uint32_t>(blocks, i) * unit, part.data() + i * unit,
                    unit);
    }
    EXPECT_EQ(whole.bytes(), joined.bytes) << "concat, trial " << trial;

    // split: the same blocks the other way.
    offset = 0;
    for (size_t p = 0; p < pieces.size(); ++p) {
      DeviceLike part(pieces[p], random);
      int64_t unit;
      PieceBlocks blocks =
          pieceBlocks(TensorView{whole.data(), dtype, joinedShape},
                      TensorView{part.data(), dtype, pieces[p].shape}, axis, offset, unit);
      offset += pieces[p].shape[axis];
      for (int64_t i = 0; i < static_cast<int64_t>(pieces[p].bytes.size()) / unit; ++i)
        std::memcpy(part.data() + i * unit, whole.data() + joinedOffset<int64_t>(blocks, i) * unit,
                    unit);
      EXPECT_EQ(part.bytes(), split[p].bytes) << "split piece " << p << ", trial " << trial;
    }
  }
}

//===----------------------------------------------------------------------===//
// gather, gather_grad
//===----------------------------------------------------------------------===//

/// Indices of `shape` in [-dim, dim) of the given index type.
OwnedTensor randomIndices(DType dtype, const Shape &shape, int64_t dim, std::mt19937 &random) {
  OwnedTensor t(dtype, shape);
  for (int64_t i = 0; i < t.numElements(); ++i) {
    int64_t index = static_cast<int64_t>(random() % (2 * dim)) - dim;
    if (dtype == DType::I32)
      t.as<int32_t>()[i] = static_cast<int32_t>(index);
    else
      t.as<int64_t>()[i] = index;
  }
  return t;
}

int64_t indexAt(const OwnedTensor &indices, int64_t i) {
  return indices.dtype == DType::I32 ? indices.as<int32_t>()[i] : indices.as<int64_t>()[i];
}

Shape gatheredShape(const Shape &data, const Shape &indices, int64_t axis) {
  Shape result;
  std::string error;
  EXPECT_TRUE(gatherShape(data, indices, axis, result, error)) << error;
  return result;
}

/// checkIndices (Indexing.cu): the first out-of-range position, or -1.
int64_t firstBadPosition(const OwnedTensor &indices, int64_t dim) {
  for (int64_t i = 0; i < indices.numElements(); ++i) {
    int64_t row;
    if (!indexRow(indexAt(indices, i), dim, row))
      return i;
  }
  return -1;
}

/// gatherUnits (Indexing.cu) over the output's units; never reads outside the data.
void replayGather(const OwnedTensor &data, const OwnedTensor &indices, int64_t axis,
                  const DeviceLike &from, const DeviceLike &to, const Shape &outShape) {
  int64_t unit;
  GatherIndex gather = gatherIndex(TensorView{from.data(), data.dtype, data.shape}, indices.view(),
                                   TensorView{to.data(), data.dtype, outShape}, axis, true, unit);
  int64_t dataUnits = static_cast<int64_t>(data.bytes.size()) / unit;
  int64_t outBytes = TensorView{nullptr, data.dtype, outShape}.sizeBytes();
  for (int64_t e = 0; e < outBytes / unit; ++e) {
    int64_t row;
    if (!indexRow(indexAt(indices, gatherPosition<int64_t>(gather, e)), gather.dim, row)) {
      std::memset(to.data() + e * unit, 0, unit);
      continue;
    }
    int64_t source = gatherSource<int64_t>(gather, e, row);
    ASSERT_TRUE(source >= 0 && source < dataUnits);
    std::memcpy(to.data() + e * unit, from.data() + source * unit, unit);
  }
}

TEST(CudaLayoutMath, GatherMatchesCpu) {
  std::mt19937 random(16);
  for (int trial = 0; trial < 300; ++trial) {
    DType dtype = kSizes[trial % 4], indexType = trial % 2 ? DType::I32 : DType::I64;
    Shape dataShape = randomShape(random, 1, 4, 6);
    int64_t axis = random() % dataShape.size();
    OwnedTensor data = randomBytes(dtype, dataShape, random);
    OwnedTensor indices =
        randomIndices(indexType, randomShape(random, 0, 2, 4), dataShape[axis], random);
    Shape outShape = gatheredShape(dataShape, indices.shape, axis);
    Attributes a = attrs({{"axis", axis}});
    OwnedTensor expected = runKernel("gather", {data, indices}, {{dtype, outShape}}, a)[0];
    OwnedTensor output(dtype, outShape);
    DeviceLike from(data, random, true), to(output, random);
    replayGather(data, indices, axis, from, to, outShape);
    EXPECT_EQ(to.bytes(), expected.bytes) << "trial " << trial;
  }
}

TEST(CudaLayoutMath, GatherOutOfRangeIsRecordedAndNeverFollowed) {
  std::mt19937 random(17);
  OwnedTensor data = testing::randomF32({4, 5, 3}, 17);
  OwnedTensor indices = testing::i64({2, 2}, {1, -5, 5, 0});
  EXPECT_EQ(firstBadPosition(indices, 5), 2);
  EXPECT_EQ(firstBadPosition(testing::i64({2}, {-6, 4}), 5), 0);
  EXPECT_EQ(firstBadPosition(testing::i64({2}, {-5, 4}), 5), -1);
  Shape outShape = gatheredShape(data.shape, indices.shape, 1);
  OwnedTensor output(DType::F32, outShape);
  DeviceLike from(data, random, true), to(output, random);
  replayGather(data, indices, 1, from, to, outShape);
  // Position 2 (index 5) reads nothing and leaves zeros; the others are gathered.
  std::vector<uint8_t> bytes = to.bytes();
  const auto *values = reinterpret_cast<const float *>(bytes.data());
  for (int64_t o = 0; o < 4; ++o)
    for (int64_t j = 0; j < 3; ++j) {
      EXPECT_EQ(values[(o * 4 + 2) * 3 + j], 0.0f);
      EXPECT_EQ(values[(o * 4 + 0) * 3 + j], data.as<float>()[(o * 5 + 1) * 3 + j]);
      EXPECT_EQ(values[(o * 4 + 1) * 3 + j], data.as<float>()[(o * 5 + 0) * 3 + j]);
    }
}

/// scatterAddRows then storeRounded (Indexing.cu) over the gradient's elements in `order`.
OwnedTensor replayGatherGrad(const OwnedTensor &grad, const OwnedTensor &indices, int64_t axis,
                             const Shape &resultShape, const std::vector<int64_t> &order) {
  OwnedTensor result(grad.dtype, resultShape);
  int64_t unit;
  GatherIndex gather = gatherIndex(result.view(), indices.view(), grad.view(), axis, false, unit);
  EXPECT_EQ(unit, elementBytes(grad.dtype));
  std::vector<float> sums(result.numElements(), 0.0f);
  for (int64_t e : order) {
    int64_t row;
    if (indexRow(indexAt(indices, gatherPosition<int64_t>(gather, e)), gather.dim, row))
      sums[gatherSource<int64_t>(gather, e, row)] += static_cast<float>(grad.at(e));
  }
  for (int64_t i = 0; i < result.numElements(); ++i) {
    if (grad.dtype == DType::F32)
      result.as<float>()[i] = sums[i];
    else if (grad.dtype == DType::F16)
      result.as<uint16_t>()[i] = floatToHalf(sums[i]);
    else
      result.as<uint16_t>()[i] = floatToBFloat16(sums[i]);
  }
  return result;
}

TEST(CudaLayoutMath, GatherGradMatchesCpu) {
  std::mt19937 random(18);
  constexpr DType kFloats[] = {DType::F32, DType::F16, DType::BF16};
  for (int trial = 0; trial < 150; ++trial) {
    DType dtype = kFloats[trial % 3], indexType = trial % 2 ? DType::I32 : DType::I64;
    Shape resultShape = randomShape(random, 1, 3, 5);
    int64_t axis = random() % resultShape.size();
    // Few rows and many indices, so that most rows are added to several times.
    OwnedTensor indices =
        randomIndices(indexType, randomShape(random, 1, 2, 6), resultShape[axis], random);
    Shape gradShape = gatheredShape(resultShape, indices.shape, axis);
    OwnedTensor grad = testing::tensor(
        dtype, gradShape, testing::randomF32(gradShape, static_cast<uint32_t>(trial)).values());
    Attributes a = attrs({{"axis", axis}});
    OwnedTensor expected = runKernel("gather_grad", {grad, indices}, {{dtype, resultShape}}, a)[0];
    // In gradient order each destination adds its rows in index order, as the CPU does: exact.
    std::vector<int64_t> order(grad.numElements());
    std::iota(order.begin(), order.end(), 0);
    EXPECT_EQ(replayGatherGrad(grad, indices, axis, resultShape, order).bytes, expected.bytes)
        << "trial " << trial;
    // The atomics add in any order: f32 rounding differences only (then one f16/bf16 rounding).
    std::shuffle(order.begin(), order.end(), random);
    double rtol = dtype == DType::F32 ? 1e-5 : dtype == DType::F16 ? 2e-3 : 1e-2;
    EXPECT_TRUE(testing::closeTo(replayGatherGrad(grad, indices, axis, resultShape, order).values(),
                                 expected.values(), rtol, 1e-5))
        << "trial " << trial;
  }
}

TEST(CudaLayoutMath, GatherGradWorkspaceIsF32SumsOfHalfResults) {
  const KernelTable *cuda = targetContracts(kCudaTarget);
  ASSERT_TRUE(cuda && cuda->count("gather_grad"));
  Attributes a = attrs({{"axis", int64_t{0}}});
  for (DType dtype : {DType::F32, DType::F16, DType::BF16}) {
    KernelCall call;
    call.inputs = {TensorView{nullptr, dtype, {6, 3}}, TensorView{nullptr, DType::I64, {6}}};
    call.outputs = {TensorView{nullptr, dtype, {10, 3}}};
    call.attributes = &a;
    std::string error;
    ASSERT_TRUE(checkKernelCall(cuda->at("gather_grad"), call, error)) << error;
    EXPECT_EQ(workspaceBytes(cuda->at("gather_grad"), call), dtype == DType::F32 ? 0u : 120u);
  }
}

//===----------------------------------------------------------------------===//
// top_k
//===----------------------------------------------------------------------===//

/// topKLines (Indexing.cu) for one line: k rounds of 32 lanes, each scanning every 32nd
/// element, then the xor butterfly of the warp's shuffles (lane 0's result).
template <typename C>
std::vector<Ranked<C>> replayTopKLine(const std::vector<C> &line, int64_t k, bool largest) {
  constexpr int kLanes = 32;
  std::vector<Ranked<C>> selected;
  Ranked<C> previous{C(), -1};
  for (int64_t r = 0; r < k; ++r) {
    std::vector<Ranked<C>> lanes(kLanes, Ranked<C>{C(), -1});
    for (int lane = 0; lane < kLanes; ++lane)
      for (int64_t j = lane; j < static_cast<int64_t>(line.size()); j += kLanes) {
        Ranked<C> candidate{line[j], j};
        if (topKAfter(previous, candidate, largest))
          lanes[lane] = topKFirst(lanes[lane], candidate, largest);
      }
    for (int offset = kLanes / 2; offset > 0; offset /= 2) {
      std::vector<Ranked<C>> next(kLanes);
      for (int lane = 0; lane < kLanes; ++lane)
        next[lane] = topKFirst(lanes[lane], lanes[lane ^ offset], largest);
      lanes = next;
    }
    for (int lane = 1; lane < kLanes; ++lane)
      EXPECT_EQ(lanes[lane].index, lanes[0].index) << "the lanes disagree";
    selected.push_back(lanes[0]);
    previous = lanes[0];
  }
  return selected;
}

/// Values with many ties: small integers (and their halves), stored as `dtype`.
OwnedTensor tiedValues(DType dtype, const Shape &shape, std::mt19937 &random) {
  std::vector<double> values;
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  for (int64_t i = 0; i < count; ++i)
    values.push_back((static_cast<int>(random() % 13) - 6) * 0.5);
  return testing::tensor(dtype, shape, values);
}

TEST(CudaLayoutMath, TopKMatchesCpuWithTies) {
  std::mt19937 random(19);
  constexpr DType kNumeric[] = {DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32};
  for (int trial = 0; trial < 200; ++trial) {
    DType dtype = kNumeric[trial % 5];
    Shape shape = randomShape(random, 1, 3, 6);
    int64_t axis = random() % shape.size();
    if (trial % 7 == 0)
      shape[axis] = 40 + random() % 60; // more than one element per lane
    int64_t k = random() % (shape[axis] + 1);
    bool largest = random() % 2;
    OwnedTensor input = tiedValues(dtype, shape, random);
    Shape outShape = shape;
    outShape[axis] = k;
    Attributes a = attrs({{"axis", axis}, {"k", k}, {"largest", int64_t{largest}}});
    std::vector<OwnedTensor> expected =
        runKernel("top_k", {input}, {{dtype, outShape}, {DType::I64, outShape}}, a);
    AxisExtents extents = extentsAroundAxis(shape, axis);
    for (int64_t outer = 0; outer < extents.outer; ++outer)
      for (int64_t inner = 0; inner < extents.inner; ++inner) {
        std::vector<double> line;
        for (int64_t j = 0; j < extents.length; ++j)
          line.push_back(input.at((outer * extents.length + j) * extents.inner + inner));
        std::vector<Ranked<double>> selected = replayTopKLine(line, k, largest);
        for (int64_t r = 0; r < k; ++r) {
          int64_t at = (outer * k + r) * extents.inner + inner;
          EXPECT_EQ(selected[r].index, expected[1].as<int64_t>()[at]) << "trial " << trial;
          EXPECT_EQ(selected[r].value, expected[0].at(at)) << "trial " << trial;
        }
      }
  }
}

TEST(CudaLayoutMath, TopKOrdersNaNAboveEveryNumber) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  float inf = std::numeric_limits<float>::infinity();
  std::vector<float> line = {1.0f, nan, inf, -inf, nan, 1.0f};
  std::vector<Ranked<float>> largest = replayTopKLine(line, 6, true);
  std::vector<int64_t> largestOrder, smallestOrder;
  for (const Ranked<float> &r : largest)
    largestOrder.push_back(r.index);
  for (const Ranked<float> &r : replayTopKLine(line, 6, false))
    smallestOrder.push_back(r.index);
  EXPECT_EQ(largestOrder, (std::vector<int64_t>{1, 4, 2, 0, 5, 3}));
  EXPECT_EQ(smallestOrder, (std::vector<int64_t>{3, 0, 5, 2, 1, 4}));
}

//===----------------------------------------------------------------------===//
// The target's record
//===----------------------------------------------------------------------===//

std::string limitsError(const std::string &op, KernelCall call, const Attributes &a) {
  call.attributes = &a;
  const KernelTable *cuda = targetContracts(kCudaTarget);
  std::string error;
  EXPECT_TRUE(cuda && cuda->count(op)) << op;
  const Kernel &kernel = cuda->at(op);
  EXPECT_TRUE(kernel.check(call, error)) << error;
  return checkKernelCall(kernel, call, error) ? std::string() : error;
}

TEST(CudaLayoutTarget, RefusesViewsTooDeepAfterMerging) {
  // Reversing nine dimensions merges none of them.
  Shape shape = {2, 3, 2, 3, 2, 3, 2, 3, 2}, reversed(shape.rbegin(), shape.rend());
  std::vector<int64_t> perm = {8, 7, 6, 5, 4, 3, 2, 1, 0};
  KernelCall call;
  call.inputs = {TensorView{nullptr, DType::F32, shape}};
  call.outputs = {TensorView{nullptr, DType::F32, reversed}};
  EXPECT_NE(limitsError("transpose", call, attrs({{"perm", perm}})).find("at most 8"),
            std::string::npos);
  // Swapping two axes of the same tensor merges into three dimensions.
  std::vector<int64_t> swap = {0, 1, 2, 3, 4, 5, 6, 8, 7};
  Shape swapped = shape;
  std::swap(swapped[7], swapped[8]);
  call.outputs = {TensorView{nullptr, DType::F32, swapped}};
  EXPECT_EQ(limitsError("transpose", call, attrs({{"perm", swap}})), "");
}

TEST(CudaLayoutTarget, RefusesTopKAboveItsLimit) {
  KernelCall call;
  call.inputs = {TensorView{nullptr, DType::F32, {4, 5000}}};
  Attributes a = attrs({{"axis", int64_t{1}}, {"k", kMaxTopK + 1}, {"largest", int64_t{1}}});
  call.outputs = {TensorView{nullptr, DType::F32, {4, kMaxTopK + 1}},
                  TensorView{nullptr, DType::I64, {4, kMaxTopK + 1}}};
  EXPECT_NE(limitsError("top_k", call, a).find("at most 1024"), std::string::npos);
  a.set("k", kMaxTopK);
  call.outputs = {TensorView{nullptr, DType::F32, {4, kMaxTopK}},
                  TensorView{nullptr, DType::I64, {4, kMaxTopK}}};
  EXPECT_EQ(limitsError("top_k", call, a), "");
}

} // namespace
} // namespace memc::kernels::cuda
