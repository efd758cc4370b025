//===- RandomBuffers.h - seeded generators of planner inputs --------------===//
//
// Shared by the property tests: the same seed always gives the same requests, so a failure names
// its input by (generator, seed).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_TEST_PLANNER_RANDOMBUFFERS_H
#define MEMC_TEST_PLANNER_RANDOMBUFFERS_H

#include "compiler/planner/LiveRange.h"

#include <cmath>
#include <random>
#include <vector>

namespace memc::planner::testing {

/// Buffers starting uniformly in [0, horizon) with exponentially distributed lifetimes and
/// log-uniform sizes between 1 KiB and 1 MiB (not multiples of the alignment).
inline std::vector<BufferRequest> uniformBuffers(int count, uint32_t seed, double meanDuration,
                                                 int64_t horizon) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> start(0, horizon - 1);
  std::exponential_distribution<double> duration(1.0 / meanDuration);
  std::uniform_real_distribution<double> logSize(10, 20);
  std::vector<BufferRequest> buffers;
  for (int i = 0; i < count; ++i) {
    int64_t first = start(rng);
    buffers.push_back({static_cast<uint64_t>(std::exp2(logSize(rng))) + 3, first,
                       first + static_cast<int64_t>(duration(rng))});
  }
  return buffers;
}

/// A training step in miniature: `layers` forward layers whose activations are partly kept
/// until the matching backward layer (nested lifetimes), partly short-lived temporaries, then
/// the backward layers in reverse with their own temporaries.
inline std::vector<BufferRequest> trainingLikeBuffers(int layers, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> logSize(14, 24);
  std::uniform_int_distribution<int> perLayer(2, 6);
  std::bernoulli_distribution kept(0.6);
  struct Kept {
    uint64_t size;
    int64_t first;
  };
  std::vector<std::vector<Kept>> keptByLayer(layers);
  std::vector<BufferRequest> buffers;
  int64_t step = 0;
  auto size = [&] { return static_cast<uint64_t>(std::exp2(logSize(rng))); };
  for (int layer = 0; layer < layers; ++layer)
    for (int k = perLayer(rng); k > 0; --k, ++step) {
      if (kept(rng))
        keptByLayer[layer].push_back({size(), step});
      else
        buffers.push_back({size(), step, step + 1 + static_cast<int64_t>(rng() % 2)});
    }
  for (int layer = layers - 1; layer >= 0; --layer) {
    int64_t begin = step, count = perLayer(rng) + 1;
    for (int64_t k = 0; k < count; ++k, ++step)
      buffers.push_back({size(), step, step + 1 + static_cast<int64_t>(rng() % 3)});
    for (const Kept &activation : keptByLayer[layer])
      buffers.push_back(
          {activation.size, activation.first, begin + static_cast<int64_t>(rng() % count)});
  }
  return buffers;
}

} // namespace memc::planner::testing

#endif // MEMC_TEST_PLANNER_RANDOMBUFFERS_H
