//===- DeviceError.h - a kernel's failure recorded in device code -*- C++ -*-===//
//
// A device kernel cannot build a message: it stores a code and the numbers the message needs in a
// record the host can read (mapped pinned memory on CUDA), and its device turns the record into
// the KernelErrorSlot's message when the stream synchronizes (describeDeviceError), naming the
// step that failed. The first failure wins (the code is claimed by compare-and-swap from
// kNoDeviceError); later ones, caused by it, are dropped. Plain data, no host state, so device
// code includes it; the messages say what the CPU kernels' messages say.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_DEVICEERROR_H
#define MEMC_KERNELS_DEVICEERROR_H

#include <cstdint>
#include <string>

namespace memc::kernels {

/// What failed; the record's values are listed per code.
enum DeviceErrorCode : uint32_t {
  kNoDeviceError = 0,
  /// values: index, position, axis, dimension size (gather, gather_grad).
  kIndexOutOfRange = 1,
  /// values: label, position, classes (cross_entropy and its gradient, linear_cross_entropy).
  kLabelOutOfRange = 2,
  /// values: the step number's double, by its bits (the optimizers' step operand).
  kStepBelowOne = 3,
};

struct DeviceErrorRecord {
  uint32_t code = kNoDeviceError;
  /// The plan step whose kernel failed (KernelContext::step at its launch).
  uint32_t step = 0;
  int64_t values[4] = {0, 0, 0, 0};
};

/// The message of `record` (whose code is not kNoDeviceError), which the executor prefixes
/// with the step and its kernel ("step 4 ('gather' from 'wte') failed: index 7 ...").
std::string describeDeviceError(const DeviceErrorRecord &record);

} // namespace memc::kernels

#endif // MEMC_KERNELS_DEVICEERROR_H
