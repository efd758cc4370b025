//===- ConvChoice.cpp - the measured convolution table and its lookup ------===//
#include "kernels/cpu/ConvChoice.h"

#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

namespace memc::kernels {

namespace {

constexpr ConvDirection kForward = ConvDirection::Forward;
constexpr ConvDirection kGradInput = ConvDirection::GradInput;
constexpr ConvDirection kGradWeight = ConvDirection::GradWeight;
constexpr DType kF32 = DType::F32;
constexpr DType kBF16 = DType::BF16;

const ConvChoiceRow kTable[] = {
#include "kernels/cpu/ConvChoiceTable.inc"
};

/// Weight of the window and stride coordinates in the distance.
constexpr double kWindowWeight = 4.0;

/// A point's coordinates: log2 of batch, channels, out channels, output positions, window and
/// stride per dimension.
struct Coordinates {
  double at[6];

  double distanceTo(const Coordinates &other) const {
    double sum = 0.0;
    for (int i = 0; i < 6; ++i) {
      double d = at[i] - other.at[i];
      sum += (i < 4 ? 1.0 : kWindowWeight) * d * d;
    }
    return sum;
  }
};

/// log2 of the geometric mean of `sizes`: the size per dimension.
double logPerDimension(const Shape &sizes) {
  double logSum = 0.0;
  for (int64_t size : sizes)
    logSum += std::log2(static_cast<double>(size));
  return sizes.empty() ? 0.0 : logSum / static_cast<double>(sizes.size());
}

/// The rows' coordinates, computed once (a lookup runs each time a convolution is carved).
const std::vector<Coordinates> &rowCoordinates() {
  static const std::vector<Coordinates> coordinates = [] {
    std::vector<Coordinates> all;
    for (const ConvChoiceRow &row : kTable)
      all.push_back(
          {{std::log2(row.batch), std::log2(row.channels), std::log2(row.outChannels),
            std::log2(row.outPositions()), std::log2(row.window), std::log2(row.stride)}});
    return all;
  }();
  return coordinates;
}

std::atomic<int> forcedImplementation{-1};

} // namespace

int64_t ConvChoiceRow::outPositions() const {
  int64_t side = (size + 2 * (window / 2) - window) / stride + 1;
  return side * side;
}

ConvImplementation ConvChoiceRow::faster() const {
  if (oneDnnMs[0] < 0)
    return ConvImplementation::Memc;
  return oneDnnMs[0] + oneDnnMs[1] < memcMs[0] + memcMs[1] ? ConvImplementation::OneDnn
                                                           : ConvImplementation::Memc;
}

const ConvChoiceRow *convChoiceTable(int64_t &rows) {
  rows = static_cast<int64_t>(sizeof(kTable) / sizeof(kTable[0]));
  return kTable;
}

const ConvChoiceRow *nearestConvChoiceRow(ConvDirection direction, DType dtype,
                                          const ConvGeometry &g) {
  Coordinates call = {{std::log2(g.batch), std::log2(g.channels), std::log2(g.outChannels),
                       std::log2(g.outSize), logPerDimension(g.kernel),
                       logPerDimension(g.strides)}};
  const std::vector<Coordinates> &coordinates = rowCoordinates();
  const ConvChoiceRow *nearest = nullptr;
  double best = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < coordinates.size(); ++i) {
    if (kTable[i].direction != direction || kTable[i].dtype != dtype)
      continue;
    double distance = coordinates[i].distanceTo(call);
    if (distance < best)
      best = distance, nearest = &kTable[i];
  }
  return nearest;
}

void forceConvImplementation(std::optional<ConvImplementation> forced) {
  forcedImplementation = forced ? static_cast<int>(*forced) : -1;
}

std::optional<ConvImplementation> forcedConvImplementation() {
  int forced = forcedImplementation;
  if (forced < 0)
    return std::nullopt;
  return static_cast<ConvImplementation>(forced);
}

} // namespace memc::kernels
