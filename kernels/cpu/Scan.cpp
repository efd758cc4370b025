//===- Scan.cpp - cumsum ---------------------------------------------------===//
//
// The input is [outer, length, inner] around the scanned axis; each outer slice walks its
// `length` rows forwards (or backwards with `reverse`) adding whole rows of `inner` elements
// into one accumulator row, so loads stay contiguous. Floats accumulate in f64 (as torch's CPU
// cumsum does), integers in i64 with wrap-around; f16/bf16 round once per element. With
// `exclusive` a row is stored before it is added. Outer slices run on threads; each result
// depends only on its own slice, so the thread count does not change it.
//
//===----------------------------------------------------------------------===//
#include "kernels/ShapeRules.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/ThreadPool.h"

#include <algorithm>
#include <vector>

namespace memc::kernels {

namespace {

template <typename T>
void cumulativeSum(const TensorView &input, const TensorView &output, int64_t axis,
                   bool exclusive, bool reverse) {
  using C = ComputeOf<T>;
  using Acc = std::conditional_t<std::is_integral_v<C>, int64_t, double>;
  auto [outer, length, inner] = extentsAroundAxis(input.shape, axis);
  const T *x = input.as<T>();
  T *y = output.as<T>();
  int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, length * inner));
  parallelFor(0, outer, grain, [&](int64_t begin, int64_t end) {
    std::vector<Acc> sums(inner);
    for (int64_t o = begin; o < end; ++o) {
      std::fill(sums.begin(), sums.end(), Acc(0));
      for (int64_t step = 0; step < length; ++step) {
        int64_t row = (o * length + (reverse ? length - 1 - step : step)) * inner;
        for (int64_t i = 0; i < inner; ++i) {
          Acc value = static_cast<Acc>(Element<T>::load(x[row + i]));
          Acc before = sums[i];
          if constexpr (std::is_integral_v<C>)
            sums[i] = static_cast<Acc>(static_cast<uint64_t>(before) + static_cast<uint64_t>(value));
          else
            sums[i] = before + value;
          y[row + i] = Element<T>::store(static_cast<C>(exclusive ? before : sums[i]));
        }
      }
    }
  });
}

bool runCumSum(KernelContext &, const KernelCall &call) {
  const Attributes &attributes = attributesOf(call);
  int64_t axis = attributes.intOr("axis", 0);
  bool exclusive = attributes.intOr("exclusive", 0) != 0;
  bool reverse = attributes.intOr("reverse", 0) != 0;
  if (call.inputs[0].numElements() == 0)
    return true;
  visitNumeric(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    cumulativeSum<T>(call.inputs[0], call.outputs[0], axis, exclusive, reverse);
  });
  return true;
}

} // namespace

void addScanKernels(KernelRuns &table) { table["cumsum"] = &runCumSum; }

} // namespace memc::kernels
