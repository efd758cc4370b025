//===- NumberRange.h - the values a numeric flag accepts --------*- C++ -*-===//
//
// memc's and the runner's numeric flags are each one row of a table: the flag and the range of
// values it accepts. A value outside it (NaN and infinities always are) is refused before
// anything runs, with a message that states the range, instead of compiling a program that
// dies at step 2, runs forever or silently ignores the flag. Integers are parsed whole: text
// past 64 bits is refused, never clamped.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_SUPPORT_NUMBERRANGE_H
#define MEMC_RUNTIME_SUPPORT_NUMBERRANGE_H

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace memc::runtime {

/// The largest count a flag takes (steps, warmup, checkpoint intervals, seeds): 2^40, a run
/// far longer than any real one whose counters, times micro-batches (at most 2^16) and the
/// dropout salt's factor, stay far inside int64.
constexpr double kMaxFlagCount = 1099511627776.0;

struct NumberRange {
  double lowest = -std::numeric_limits<double>::infinity();
  double highest = std::numeric_limits<double>::infinity();
  bool lowestIncluded = true, highestIncluded = true;
  /// Whole numbers only (counts, seeds).
  bool integer = false;
};

/// True when `value` is finite and within `range`.
bool isInRange(double value, const NumberRange &range);

/// What `range` accepts, for messages: "a finite number > 0", "a number in [0, 1)", "an integer
/// from 1 to 65536".
std::string describeRange(const NumberRange &range);

/// `value` as people write it: "0.001", "inf", "nan", "1000000000".
std::string formatNumber(double value);

/// "FLAG must be RANGE, got VALUE" for a value outside `range`.
std::string rangeError(std::string_view flag, const NumberRange &range, std::string_view value);

/// Parses a whole decimal integer within `range` (an integer range); false on anything else,
/// values past 64 bits included.
bool parseIntegerInRange(std::string_view text, const NumberRange &range, int64_t &value);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_SUPPORT_NUMBERRANGE_H
