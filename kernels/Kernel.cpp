//===- Kernel.cpp - kernel attributes -------------------------------------===//
#include "kernels/Kernel.h"

namespace memc::kernels {

namespace {

template <typename T>
bool lookup(const std::map<std::string, AttributeValue> &values, const std::string &name, T &out) {
  auto it = values.find(name);
  if (it == values.end())
    return false;
  const T *value = std::get_if<T>(&it->second);
  if (!value)
    return false;
  out = *value;
  return true;
}

} // namespace

bool Attributes::getInt(const std::string &name, int64_t &out) const {
  return lookup(values, name, out);
}

bool Attributes::getFloat(const std::string &name, double &out) const {
  return lookup(values, name, out);
}

bool Attributes::getInts(const std::string &name, std::vector<int64_t> &out) const {
  return lookup(values, name, out);
}

bool Attributes::getString(const std::string &name, std::string &out) const {
  return lookup(values, name, out);
}

const Attributes &attributesOf(const KernelCall &call) {
  static const Attributes empty;
  return call.attributes ? *call.attributes : empty;
}

int64_t Attributes::intOr(const std::string &name, int64_t fallback) const {
  getInt(name, fallback);
  return fallback;
}

double Attributes::floatOr(const std::string &name, double fallback) const {
  getFloat(name, fallback);
  return fallback;
}

} // namespace memc::kernels
