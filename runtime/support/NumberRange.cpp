//===- NumberRange.cpp - the values a numeric flag accepts ----------------===//
#include "runtime/support/NumberRange.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace memc::runtime {

std::string formatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.15g", value);
  return text;
}

bool isInRange(double value, const NumberRange &range) {
  if (!std::isfinite(value) || (range.integer && value != std::floor(value)))
    return false;
  bool aboveLowest = range.lowestIncluded ? value >= range.lowest : value > range.lowest;
  bool belowHighest = range.highestIncluded ? value <= range.highest : value < range.highest;
  return aboveLowest && belowHighest;
}

std::string describeRange(const NumberRange &range) {
  if (range.integer)
    return "an integer from " + formatNumber(range.lowest) + " to " + formatNumber(range.highest);
  if (std::isinf(range.highest))
    return std::string("a finite number ") + (range.lowestIncluded ? ">= " : "> ") +
           formatNumber(range.lowest);
  return std::string("a number in ") + (range.lowestIncluded ? "[" : "(") +
         formatNumber(range.lowest) + ", " + formatNumber(range.highest) +
         (range.highestIncluded ? "]" : ")");
}

std::string rangeError(std::string_view flag, const NumberRange &range, std::string_view value) {
  return std::string(flag) + " must be " + describeRange(range) + ", got '" + std::string(value) +
         "'";
}

bool parseIntegerInRange(std::string_view text, const NumberRange &range, int64_t &value) {
  std::string digits(text);
  if (digits.empty() || std::isspace(static_cast<unsigned char>(digits[0])))
    return false;
  char *end = nullptr;
  errno = 0;
  long long parsed = std::strtoll(digits.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0' || !isInRange(static_cast<double>(parsed), range))
    return false;
  value = parsed;
  return true;
}

} // namespace memc::runtime
