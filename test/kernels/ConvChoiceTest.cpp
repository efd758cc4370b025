//===- ConvChoiceTest.cpp - convolutions go where the measured table says ---===//
//
// The selection rule (OneDnnConvolution.h) against the measured table (ConvChoice.h): every
// grid point's own shape finds its row and goes to that row's faster side, save the f32 calls
// the workspace cap keeps on memc's tiles; calls between grid points take the nearest point's
// answer; grouped and f16 calls, outside the table, keep their fixed sides. Shapes only: no
// data is allocated or run (the forced sides are run against loops in OneDnnConvolutionTest).
//
//===----------------------------------------------------------------------===//
#include "KernelTestSupport.h"
#include "OneDnnIsa.h"

#include "kernels/cpu/ConvChoice.h"
#include "kernels/cpu/OneDnnConvolution.h"

#include <set>
#include <tuple>

namespace memc::kernels::testing {
namespace {

/// A data-less call of `direction` on an N x C x size^spatial image, M out channels, a square
/// window with pads of half of it.
struct ShapeCall {
  Attributes attributes;
  KernelCall call;

  ShapeCall(ConvDirection direction, DType dtype, int64_t batch, int64_t channels, int64_t size,
            int64_t outChannels, int64_t window, int64_t stride, int64_t group = 1,
            int spatial = 2) {
    int64_t pad = window / 2, out = (size + 2 * pad - window) / stride + 1;
    Shape image = {batch, channels}, weights = {outChannels, channels / group},
          outputs = {batch, outChannels};
    for (int d = 0; d < spatial; ++d)
      image.push_back(size), weights.push_back(window), outputs.push_back(out);
    attributes = attrs({{"strides", Shape(spatial, stride)},
                        {"pads", Shape(2 * spatial, pad)},
                        {"dilations", Shape(spatial, 1)},
                        {"group", group}});
    auto view = [&](const Shape &shape) { return TensorView{nullptr, dtype, shape}; };
    if (direction == ConvDirection::Forward)
      call.inputs = {view(image), view(weights)}, call.outputs = {view(outputs)};
    else if (direction == ConvDirection::GradInput)
      call.inputs = {view(outputs), view(weights)}, call.outputs = {view(image)};
    else
      call.inputs = {view(outputs), view(image)}, call.outputs = {view(weights)};
    call.attributes = &attributes;
  }

  ConvGeometry geometry(ConvDirection direction) const {
    const TensorView &image = direction == ConvDirection::Forward     ? call.inputs[0]
                              : direction == ConvDirection::GradInput ? call.outputs[0]
                                                                      : call.inputs[1];
    const TensorView &weights =
        direction == ConvDirection::GradWeight ? call.outputs[0] : call.inputs[1];
    const TensorView &outputs =
        direction == ConvDirection::Forward ? call.outputs[0] : call.inputs[0];
    return ConvGeometry(image.shape, weights.shape, outputs.shape, attributes);
  }
};

ShapeCall rowCall(const ConvChoiceRow &row) {
  return ShapeCall(row.direction, row.dtype, row.batch, row.channels, row.size, row.outChannels,
                   row.window, row.stride);
}

/// What the rule must answer for a call whose nearest row is `row`.
bool expectedOnOneDnn(const ConvChoiceRow &row, const KernelCall &call) {
  if (row.faster() != ConvImplementation::OneDnn)
    return false;
  std::optional<OneDnnConvChunks> chunks =
      oneDnnConvChunks(call, row.direction, oneDnnChunkCount(call, row.direction));
  return chunks && (row.dtype != DType::F32 || chunks->totalBytes() <= kOneDnnMaxF32WorkspaceBytes);
}

TEST(ConvChoice, TheTableCoversEveryDirectionAndDtypeOnOneGrid) {
  int64_t count = 0;
  const ConvChoiceRow *rows = convChoiceTable(count);
  std::map<std::pair<ConvDirection, DType>,
           std::set<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>>>
      grids;
  for (int64_t i = 0; i < count; ++i) {
    const ConvChoiceRow &row = rows[i];
    EXPECT_TRUE(row.dtype == DType::F32 || row.dtype == DType::BF16);
    EXPECT_GT(row.memcMs[0], 0.0);
    EXPECT_GT(row.memcMs[1], 0.0);
    EXPECT_TRUE(row.oneDnnMs[0] > 0.0 || row.oneDnnMs[0] == -1.0);
    grids[{row.direction, row.dtype}].insert(
        {row.batch, row.channels, row.size, row.outChannels, row.window, row.stride});
  }
  ASSERT_EQ(grids.size(), 6u);
  for (const auto &[key, grid] : grids)
    EXPECT_EQ(grid, grids.begin()->second);
  // The grid spans what the table claims to: channels 3..512, images 7..224, windows 1/3/7.
  std::set<int64_t> channels, sizes, windows;
  for (const auto &point : grids.begin()->second)
    channels.insert(std::get<1>(point)), sizes.insert(std::get<2>(point)),
        windows.insert(std::get<4>(point));
  EXPECT_EQ(*channels.begin(), 3);
  EXPECT_EQ(*channels.rbegin(), 512);
  EXPECT_EQ(*sizes.begin(), 7);
  EXPECT_EQ(*sizes.rbegin(), 224);
  EXPECT_EQ(windows, (std::set<int64_t>{1, 3, 7}));
}

TEST(ConvChoice, EveryGridPointGoesToItsFasterSide) {
  int64_t count = 0;
  const ConvChoiceRow *rows = convChoiceTable(count);
  int64_t onOneDnn = 0, keptByTheCap = 0;
  for (int64_t i = 0; i < count; ++i) {
    const ConvChoiceRow &row = rows[i];
    if (row.dtype == DType::BF16 && !oneDnnHasBf16Kernels())
      continue; // the table's bf16 answers assume AVX512-BF16 or AMX
    ShapeCall shape = rowCall(row);
    ASSERT_EQ(nearestConvChoiceRow(row.direction, row.dtype, shape.geometry(row.direction)), &row);
    bool expected = expectedOnOneDnn(row, shape.call);
    EXPECT_EQ(oneDnnConvolution(shape.call, row.direction).has_value(), expected)
        << "row " << i << ": batch " << row.batch << ", " << row.channels << " channels, size "
        << row.size << ", window " << row.window << ", stride " << row.stride;
    onOneDnn += expected;
    keptByTheCap += !expected && row.faster() == ConvImplementation::OneDnn;
  }
  // The table has answers of both kinds, and the cap decides some f32 calls.
  EXPECT_GT(onOneDnn, 0);
  EXPECT_LT(onOneDnn, count);
  EXPECT_GT(keptByTheCap, 0);
}

TEST(ConvChoice, CallsBetweenGridPointsTakeTheNearestAnswer) {
  // A CIFAR layer (32 images, 32 channels at 16x16) and a 1-D convolution (length 784, near the
  // 28x28 rows; window 3) and a 5x5 window: each goes where its nearest row says.
  struct Case {
    ShapeCall shape;
    ConvDirection direction;
  };
  const std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int>> calls = {
      {32, 32, 16, 32, 3, 1, 2}, {16, 64, 784, 64, 3, 1, 1}, {4, 24, 40, 48, 5, 2, 2}};
  for (ConvDirection direction :
       {ConvDirection::Forward, ConvDirection::GradInput, ConvDirection::GradWeight})
    for (const auto &[batch, channels, size, out, window, stride, spatial] : calls) {
      ShapeCall shape(direction, DType::F32, batch, channels, size, out, window, stride, 1,
                      spatial);
      const ConvChoiceRow *row =
          nearestConvChoiceRow(direction, DType::F32, shape.geometry(direction));
      ASSERT_NE(row, nullptr);
      EXPECT_EQ(row->direction, direction);
      EXPECT_EQ(row->window, window == 5 ? 7 : window); // 5 is nearer 7 than 3 in log2
      EXPECT_EQ(oneDnnConvolution(shape.call, direction).has_value(),
                expectedOnOneDnn(*row, shape.call));
    }
}

TEST(ConvChoice, GroupedAndF16CallsKeepTheirFixedSides) {
  for (ConvDirection direction :
       {ConvDirection::Forward, ConvDirection::GradInput, ConvDirection::GradWeight}) {
    ShapeCall groupedF32(direction, DType::F32, 8, 32, 16, 32, 3, 1, 4);
    EXPECT_FALSE(oneDnnConvolution(groupedF32.call, direction).has_value());
    ShapeCall groupedBf16(direction, DType::BF16, 8, 32, 16, 32, 3, 1, 4);
    EXPECT_EQ(oneDnnConvolution(groupedBf16.call, direction).has_value(), oneDnnHasBf16Kernels());
    ShapeCall f16(direction, DType::F16, 8, 32, 16, 32, 3, 1);
    EXPECT_FALSE(oneDnnConvolution(f16.call, direction).has_value());
  }
}

TEST(ConvChoice, ABenchmarkCanForceEitherSide) {
  ShapeCall shape(ConvDirection::Forward, DType::F32, 8, 32, 16, 32, 3, 1);
  forceConvImplementation(ConvImplementation::Memc);
  EXPECT_FALSE(oneDnnConvolution(shape.call, ConvDirection::Forward).has_value());
  forceConvImplementation(ConvImplementation::OneDnn);
  EXPECT_TRUE(oneDnnConvolution(shape.call, ConvDirection::Forward).has_value());
  forceConvImplementation(std::nullopt);
  EXPECT_FALSE(forcedConvImplementation().has_value());
}

} // namespace
} // namespace memc::kernels::testing
