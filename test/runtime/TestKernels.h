//===- TestKernels.h - a tiny f32 kernel table for runtime tests -*- C++ -*-===//
//
// The runtime's tests run plans without the real CPU kernels: "add" (elementwise, two inputs),
// "relu", "copy", "scale" (multiplies by the float attribute "factor") and "positive" (a copy
// that fails on a negative element, as kernels fail on data), all f32 with equal shapes, all
// safe in place; "staged_copy" (through its workspace) and "gated_copy" (x, or zeros where its
// f32 scalar gate's host copy, TensorView::hostData, is at most 0.5). Their checks never
// dereference data. testDevice() is a CPU device (target "cpu") running them.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_TEST_RUNTIME_TESTKERNELS_H
#define MEMC_TEST_RUNTIME_TESTKERNELS_H

#include "kernels/Kernel.h"
#include "runtime/device/Device.h"

namespace memc::testing {

const kernels::KernelTable &testKernels();
runtime::Device &testDevice();

} // namespace memc::testing

#endif // MEMC_TEST_RUNTIME_TESTKERNELS_H
