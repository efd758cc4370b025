//===- Selection.cpp - top_k ----------------------------------------------===//
//
// The input is [outer, length, inner] around the selected axis; each (outer, inner) line is
// gathered into (value, index) pairs and partially sorted, largest first (smallest first
// without `largest`), ties by the lower index as ONNX asks, so the result does not depend on
// the sort's internals. Lines run on threads; each result depends only on its own line.
//
//===----------------------------------------------------------------------===//
#include "kernels/ShapeRules.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/ThreadPool.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace memc::kernels {

namespace {

template <typename T>
void topK(const TensorView &input, const TensorView &values, const TensorView &indices,
          int64_t axis, int64_t k, bool largest) {
  using C = ComputeOf<T>;
  auto [outer, length, inner] = extentsAroundAxis(input.shape, axis);
  const T *x = input.as<T>();
  T *y = values.as<T>();
  int64_t *selected = indices.as<int64_t>();
  int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, length));
  parallelFor(0, outer * inner, grain, [&](int64_t begin, int64_t end) {
    std::vector<std::pair<C, int64_t>> line(length);
    auto before = [largest](const std::pair<C, int64_t> &a, const std::pair<C, int64_t> &b) {
      if (a.first != b.first)
        return largest ? a.first > b.first : a.first < b.first;
      return a.second < b.second;
    };
    for (int64_t index = begin; index < end; ++index) {
      int64_t o = index / inner, i = index % inner;
      for (int64_t j = 0; j < length; ++j)
        line[j] = {Element<T>::load(x[(o * length + j) * inner + i]), j};
      std::partial_sort(line.begin(), line.begin() + k, line.end(), before);
      for (int64_t j = 0; j < k; ++j) {
        y[(o * k + j) * inner + i] = Element<T>::store(line[j].first);
        selected[(o * k + j) * inner + i] = line[j].second;
      }
    }
  });
}

bool runTopK(KernelContext &, const KernelCall &call) {
  const Attributes &attributes = attributesOf(call);
  int64_t axis = attributes.intOr("axis", 0), k = attributes.intOr("k", 0);
  bool largest = attributes.intOr("largest", 1) != 0;
  if (call.outputs[0].numElements() == 0)
    return true;
  visitNumeric(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    topK<T>(call.inputs[0], call.outputs[0], call.outputs[1], axis, k, largest);
  });
  return true;
}

} // namespace

void addSelectionKernels(KernelRuns &table) { table["top_k"] = &runTopK; }

} // namespace memc::kernels
