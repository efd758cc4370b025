//===- DeviceRegistry.cpp - creating devices by name ----------------------===//
#include "runtime/device/DeviceRegistry.h"

namespace memc::runtime {

bool DeviceRegistry::add(const std::string &name, DeviceFactory factory) {
  return factories.emplace(name, std::move(factory)).second;
}

std::unique_ptr<Device> DeviceRegistry::create(const std::string &name,
                                               std::string &error) const {
  // "cuda:1": the kind, then the ordinal in decimal.
  size_t colon = name.find(':');
  std::string kind = name.substr(0, colon);
  int ordinal = 0;
  if (colon != std::string::npos) {
    std::string digits = name.substr(colon + 1);
    if (digits.empty() || digits.size() > 4 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      error = "device '" + name + "': expected NAME or NAME:K with K a device number";
      return nullptr;
    }
    ordinal = std::stoi(digits);
  }
  auto found = factories.find(kind);
  if (found == factories.end()) {
    std::string available;
    for (const std::string &known : names())
      available += (available.empty() ? "" : ", ") + known;
    error = "unknown device '" + name + "' (this build has: " +
            (available.empty() ? "none" : available) + ")";
    return nullptr;
  }
  std::string reason;
  std::unique_ptr<Device> device = found->second(ordinal, reason);
  if (!device)
    error = "cannot create device '" + name + "': " + reason;
  return device;
}

std::vector<std::string> DeviceRegistry::names() const {
  std::vector<std::string> result;
  for (const auto &entry : factories)
    result.push_back(entry.first);
  return result;
}

} // namespace memc::runtime
