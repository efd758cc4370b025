//===- DeviceError.cpp - messages of failures recorded in device code -----===//
#include "kernels/DeviceError.h"

#include <cstring>

namespace memc::kernels {

std::string describeDeviceError(const DeviceErrorRecord &record) {
  const int64_t *v = record.values;
  switch (record.code) {
  case kIndexOutOfRange:
    return "index " + std::to_string(v[0]) + " (at position " + std::to_string(v[1]) +
           ") out of range for dimension " + std::to_string(v[2]) + " of size " +
           std::to_string(v[3]);
  case kLabelOutOfRange:
    return "label " + std::to_string(v[0]) + " at position " + std::to_string(v[1]) +
           " is outside [0, " + std::to_string(v[2]) + ")";
  case kStepBelowOne: {
    double step;
    std::memcpy(&step, &v[0], sizeof step);
    return "the step number must be at least 1, got " + std::to_string(step);
  }
  default:
    return "failed on the device with error code " + std::to_string(record.code);
  }
}

} // namespace memc::kernels
