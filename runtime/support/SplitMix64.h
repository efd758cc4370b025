//===- SplitMix64.h - a small counter-based hash for data order -*- C++ -*-===//
//
// SplitMix64's finalizer (Steele, Lea and Flood, 2014): a bijection of 64-bit words whose outputs
// look independent for consecutive inputs. Where the training loop draws (token windows, each
// epoch's shuffle) it hashes the seed and a counter, so the draws of any micro-batch follow from
// its index alone: a resumed run draws what the uninterrupted one did, and a Python reference can
// reproduce them in a few lines.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_SUPPORT_SPLITMIX64_H
#define MEMC_RUNTIME_SUPPORT_SPLITMIX64_H

#include <cstdint>

namespace memc::runtime {

constexpr uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

} // namespace memc::runtime

#endif // MEMC_RUNTIME_SUPPORT_SPLITMIX64_H
