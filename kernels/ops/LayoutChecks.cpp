//===- LayoutChecks.cpp - the checks of the layout ops --------------------===//
//
// transpose, reshape, copy, broadcast_to, slice, concat, split, gather.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"

namespace memc::kernels {
namespace {

bool checkOneToOne(const KernelCall &call, std::string &error) {
  return checkCall(call, 1, 1, 1, error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "output", "input", error);
}

bool checkTranspose(const KernelCall &call, std::string &error) {
  std::vector<int64_t> perm;
  Shape expected;
  return checkOneToOne(call, error) && requireInts(attributesOf(call), "perm", perm, error) &&
         transposeShape(call.inputs[0].shape, perm, expected, error) &&
         checkShape(call.outputs[0], expected, "output", error);
}

bool checkReshape(const KernelCall &call, std::string &error) {
  if (!checkOneToOne(call, error))
    return false;
  if (call.outputs[0].numElements() != call.inputs[0].numElements()) {
    error = "cannot reshape " + describe(call.inputs[0]) + " to " + describe(call.outputs[0]) +
            ": element counts differ";
    return false;
  }
  return true;
}

bool checkCopy(const KernelCall &call, std::string &error) {
  if (!checkCall(call, 1, 1, 1, error))
    return false;
  if (call.outputs[0].sizeBytes() != call.inputs[0].sizeBytes()) {
    error = "copy from " + describe(call.inputs[0]) + " to " + describe(call.outputs[0]) +
            ": byte sizes differ";
    return false;
  }
  return true;
}

bool checkBroadcastTo(const KernelCall &call, std::string &error) {
  Shape expected;
  if (!checkOneToOne(call, error))
    return false;
  if (!broadcastShapes({call.inputs[0].shape, call.outputs[0].shape}, expected, error) ||
      expected != call.outputs[0].shape) {
    error = "cannot broadcast " + describe(call.inputs[0]) + " to " + describe(call.outputs[0]);
    return false;
  }
  return true;
}

bool checkSlice(const KernelCall &call, std::string &error) {
  std::vector<int64_t> starts, limits, steps;
  Shape expected;
  const Attributes &attributes = attributesOf(call);
  return checkOneToOne(call, error) && requireInts(attributes, "starts", starts, error) &&
         requireInts(attributes, "limits", limits, error) &&
         requireInts(attributes, "steps", steps, error) &&
         sliceShape(call.inputs[0].shape, starts, limits, steps, expected, error) &&
         checkShape(call.outputs[0], expected, "output", error);
}

bool checkConcat(const KernelCall &call, std::string &error) {
  int64_t axis;
  Shape expected;
  std::vector<Shape> shapes;
  if (!checkCall(call, 1, SIZE_MAX, 1, error) ||
      !requireInt(attributesOf(call), "axis", axis, error))
    return false;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    if (!checkSameDType(call.inputs[i], call.outputs[0], "input " + std::to_string(i), "output",
                        error))
      return false;
    shapes.push_back(call.inputs[i].shape);
  }
  return concatShape(shapes, axis, expected, error) &&
         checkShape(call.outputs[0], expected, "output", error);
}

bool checkSplit(const KernelCall &call, std::string &error) {
  int64_t axis;
  std::vector<int64_t> sizes;
  std::vector<Shape> expected;
  if (!checkCall(call, 1, 1, call.outputs.size(), error) ||
      !requireInt(attributesOf(call), "axis", axis, error) ||
      !requireInts(attributesOf(call), "sizes", sizes, error) ||
      !splitShapes(call.inputs[0].shape, axis, sizes, expected, error))
    return false;
  if (expected.size() != call.outputs.size()) {
    error = "split into " + std::to_string(sizes.size()) + " pieces needs as many outputs, got " +
            std::to_string(call.outputs.size());
    return false;
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    std::string role = "output " + std::to_string(i);
    if (!checkSameDType(call.outputs[i], call.inputs[0], role, "input", error) ||
        !checkShape(call.outputs[i], expected[i], role, error))
      return false;
  }
  return true;
}

bool checkGather(const KernelCall &call, std::string &error) {
  int64_t axis;
  Shape expected;
  return checkCall(call, 2, 2, 1, error) &&
         checkDType(call.inputs[1], kIndexTypes, "indices", error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "output", "data", error) &&
         requireInt(attributesOf(call), "axis", axis, error) &&
         gatherShape(call.inputs[0].shape, call.inputs[1].shape, axis, expected, error) &&
         checkShape(call.outputs[0], expected, "output", error);
}

} // namespace

void addLayoutChecks(OpChecks &table) {
  table["transpose"] = &checkTranspose;
  table["reshape"] = &checkReshape;
  table["copy"] = &checkCopy;
  table["offload"] = &checkCopy;
  table["reload"] = &checkCopy;
  table["broadcast_to"] = &checkBroadcastTo;
  table["slice"] = &checkSlice;
  table["concat"] = &checkConcat;
  table["split"] = &checkSplit;
  table["gather"] = &checkGather;
}

} // namespace memc::kernels
