//===- Bytes.cpp - little-endian fields and overflow-checked sizes --------===//
#include "runtime/support/Bytes.h"

#include <cstdio>

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

} // namespace memc::runtime
