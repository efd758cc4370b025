//===- DeviceRegistry.cpp - creating devices by name ----------------------===//
#include "runtime/device/DeviceRegistry.h"

namespace memc::runtime {

bool DeviceRegistry::add(const std::string &name, DeviceFactory factory) {
  return factories.emplace(name, std::move(factory)).second;
}

std::unique_ptr<Device> DeviceRegistry::create(const std::string &name,
                                               std::string &error) const {
  auto found = factories.find(name);
  if (found == factories.end()) {
    std::string available;
    for (const std::string &known : names())
      available += (available.empty() ? "" : ", ") + known;
    error = "unknown device '" + name + "' (this build has: " +
            (available.empty() ? "none" : available) + ")";
    return nullptr;
  }
  std::string reason;
  std::unique_ptr<Device> device = found->second(reason);
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
