//===- DeviceRegistry.h - creating devices by name ----------------*- C++ -*-===//
//
// Backends register a factory under a name; tools create the device a user asks for
// (--device cpu, --device cuda:1: the name and, after a colon, the ordinal of one of several
// devices of that kind, 0 when not given). Which backends exist depends on the build: registerAvailableDevices
// (AvailableDevices.h) registers every backend this build has.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_DEVICE_DEVICEREGISTRY_H
#define MEMC_RUNTIME_DEVICE_DEVICEREGISTRY_H

#include "runtime/device/Device.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace memc::runtime {

/// Makes device `ordinal` of its kind, or returns null with a message (no GPU present, driver
/// too old, no such ordinal, ...).
using DeviceFactory = std::function<std::unique_ptr<Device>(int ordinal, std::string &error)>;

class DeviceRegistry {
public:
  /// False if `name` is already registered.
  bool add(const std::string &name, DeviceFactory factory);
  /// Creates the device `name` or `name:ordinal` names; the error lists the registered names.
  std::unique_ptr<Device> create(const std::string &name, std::string &error) const;
  std::vector<std::string> names() const;

private:
  std::map<std::string, DeviceFactory> factories;
};

} // namespace memc::runtime

#endif // MEMC_RUNTIME_DEVICE_DEVICEREGISTRY_H
