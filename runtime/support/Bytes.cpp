//===- Bytes.cpp - little-endian fields and overflow-checked sizes --------===//
#include "runtime/support/Bytes.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace memc::runtime {

std::string formatBytes(uint64_t bytes) {
  static const char *units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  snprintf(text, sizeof(text), "%.2f %s", value, units[unit]);
  return text;
}

namespace {

std::string_view trimBlanks(std::string_view text) {
  const char *blanks = " \t\n\v\f\r";
  size_t begin = text.find_first_not_of(blanks);
  if (begin == std::string_view::npos)
    return {};
  return text.substr(begin, text.find_last_not_of(blanks) - begin + 1);
}

} // namespace

std::optional<uint64_t> parseByteSize(std::string_view text) {
  text = trimBlanks(text);
  size_t split = 0;
  while (split < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[split])) || text[split] == '.'))
    ++split;
  std::string number(text.substr(0, split));
  std::string unit(trimBlanks(text.substr(split)));
  char *end = nullptr;
  double value = number.empty() ? 0 : std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !(value >= 0))
    return std::nullopt;
  static const std::pair<const char *, double> units[] = {{"", 1},
                                                          {"b", 1},
                                                          {"kb", 1e3},
                                                          {"mb", 1e6},
                                                          {"gb", 1e9},
                                                          {"tb", 1e12},
                                                          {"kib", 1024.0},
                                                          {"mib", 1048576.0},
                                                          {"gib", 1073741824.0},
                                                          {"tib", 1099511627776.0}};
  for (char &c : unit)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (auto [name, scale] : units)
    if (unit == name) {
      double bytes = std::floor(value * scale);
      if (bytes > 1.8e19)
        return std::nullopt;
      return static_cast<uint64_t>(bytes);
    }
  return std::nullopt;
}

} // namespace memc::runtime
