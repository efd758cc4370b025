//===- LargestFitting.h - the largest size whose plan fits -------*- C++ -*-===//
//
// --micro-batch auto and --max-seq ask the same question of a size (a micro-batch, a sequence
// length): the largest whose plan fits the budget. Planning is the only test, so the search
// plans as few sizes as it can, assuming a plan that fits at n fits at every smaller n: it
// doubles (or halves) from a start to the first change, then bisects.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_TOOLS_MEMC_LARGESTFITTING_H
#define MEMC_TOOLS_MEMC_LARGESTFITTING_H

#include <algorithm>
#include <cstdint>
#include <functional>

/// What the search found: `fits` fits (0: not even 1) and `doesNot` does not (0: nothing up to
/// the limit failed), at most `resolution` apart when both are found.
struct SizeBracket {
  int64_t fits = 0, doesNot = 0, resolution = 1;
};

/// The bracket of the largest size in [1, limit] for which `fits` holds, from `start`; the
/// bisection stops `resolution(size found by doubling)` apart.
inline SizeBracket largestFitting(int64_t start, int64_t limit,
                                  const std::function<bool(int64_t)> &fits,
                                  const std::function<int64_t(int64_t)> &resolution) {
  SizeBracket found;
  for (int64_t size = std::min(start, limit);;) {
    if (fits(size)) {
      found.fits = size;
      if (found.doesNot || size >= limit)
        break;
      size = std::min(size * 2, limit);
    } else {
      found.doesNot = size;
      if (found.fits || size == 1)
        break;
      size /= 2;
    }
  }
  found.resolution = resolution(found.fits);
  while (found.fits && found.doesNot && found.doesNot - found.fits > found.resolution) {
    const int64_t middle = found.fits + (found.doesNot - found.fits) / 2;
    (fits(middle) ? found.fits : found.doesNot) = middle;
  }
  return found;
}

#endif // MEMC_TOOLS_MEMC_LARGESTFITTING_H
