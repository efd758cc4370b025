//===- Assignment.h - a placement of buffers in one arena, and its check -*- C++ -*-===//
//
// Every planner returns an Assignment; verifyAssignment is the independent check the compiler
// runs on every plan before it writes one, so that no planner bug can reach the runtime as two
// tensors sharing bytes.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_PLANNER_ASSIGNMENT_H
#define MEMC_COMPILER_PLANNER_ASSIGNMENT_H

#include "compiler/planner/LiveRange.h"

#include <string>
#include <vector>

namespace memc::planner {

struct Assignment {
  /// Byte offset of each buffer in the arena, parallel to the requests.
  std::vector<uint64_t> offsets;
  /// Per buffer, -1 or the buffer whose bytes it took in place (a hint the planner took; the
  /// two then have the same offset). Empty when no hint was taken.
  std::vector<int32_t> inPlaceSource;
  /// The arena the runtime allocates: the highest end of an aligned buffer.
  uint64_t arenaBytes = 0;
  /// lowerBound() of the requests, for reports: arenaBytes / lowerBoundBytes is the overhead.
  /// A plan that takes in-place hints can be below it.
  uint64_t lowerBoundBytes = 0;
  /// Which algorithm (and for memc's planner which ordering and fit) produced the placement.
  std::string strategy;
};

/// Checks that every offset is a multiple of `alignment`, every aligned buffer ends within the
/// arena, every in-place pair is one of `hints` with ranges meeting at one step and equal
/// offsets, and no two other buffers that are live at a common step share a byte. On failure
/// returns false and says which buffers and steps in `error`. O(n log n).
bool verifyAssignment(const std::vector<BufferRequest> &buffers, const Assignment &assignment,
                      std::string &error, uint64_t alignment = kDefaultAlignment,
                      const std::vector<InPlaceHint> &hints = {});

} // namespace memc::planner

#endif // MEMC_COMPILER_PLANNER_ASSIGNMENT_H
