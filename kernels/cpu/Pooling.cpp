//===- Pooling.cpp - max_pool and avg_pool over N-d windows ---------------===//
//
// Each (image, channel) plane is pooled independently, planes spread over threads. For every
// output position and spatial dimension the window's taps that land inside the input are a
// range [lo, hi) computed up front, so the inner loops test nothing.
//
// max_pool treats padding as -inf (a window entirely in padding gives -inf) and propagates
// NaN, as PyTorch does. avg_pool divides, as PyTorch does, by the taps inside the padded input
// (count_include_pad; a ceil_mode window hanging past the end padding is clipped there) or by
// the taps inside the input itself; a window with nothing to count gives 0.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/CallChecks.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/ThreadPool.h"

#include <cmath>
#include <limits>

namespace memc::kernels {

namespace {

template <bool Average> bool checkPool(const KernelCall &call, std::string &error) {
  std::vector<int64_t> kernel, strides, pads, dilations;
  bool ceilMode, countIncludePad;
  Shape expected;
  const Attributes &attributes = attributesOf(call);
  if (!checkCall(call, 1, 1, 1, error) ||
      !checkDType(call.inputs[0], kFloatTypes, "input", error) ||
      !checkSameDType(call.outputs[0], call.inputs[0], "output", "input", error) ||
      !checkRankAtLeast(call.inputs[0], 3, "input", error) ||
      !requireInts(attributes, "kernel_shape", kernel, error) ||
      !requireInts(attributes, "strides", strides, error) ||
      !requireInts(attributes, "pads", pads, error) ||
      !requireInts(attributes, "dilations", dilations, error) ||
      !requireBool(attributes, "ceil_mode", ceilMode, error) ||
      (Average && !requireBool(attributes, "count_include_pad", countIncludePad, error)))
    return false;
  const Shape &input = call.inputs[0].shape;
  return windowShape(input, input[1], kernel, strides, pads, dilations, ceilMode, expected,
                     error) &&
         checkShape(call.outputs[0], expected, "output", error);
}

/// The windows of one pooling call: for every spatial dimension and output index, the window's
/// first input position and the range of its taps [lo, hi) inside the input; `padded` counts
/// the taps inside the padded input (count_include_pad's divisor).
class PoolWindows {
public:
  PoolWindows(const Shape &input, const Shape &output, const Attributes &attributes) {
    std::vector<int64_t> kernel, strides, pads;
    attributes.getInts("kernel_shape", kernel);
    attributes.getInts("strides", strides);
    attributes.getInts("pads", pads);
    attributes.getInts("dilations", dilations);
    countIncludePad = attributes.intOr("count_include_pad", 0) == 1;
    size_t rank = kernel.size();
    dims.resize(rank);
    inStrides.assign(rank, 1);
    for (size_t d = rank; d-- > 1;)
      inStrides[d - 1] = inStrides[d] * input[d + 2];
    for (size_t d = 0; d < rank; ++d) {
      int64_t size = input[d + 2], dilation = dilations[d], paddedEnd = size + pads[d + rank];
      // Taps t in [0, kernel) with start + t * dilation < limit.
      auto tapsBelow = [&](int64_t start, int64_t limit) {
        int64_t count = limit - start <= 0 ? 0 : (limit - start + dilation - 1) / dilation;
        return std::min(count, kernel[d]);
      };
      for (int64_t o = 0; o < output[d + 2]; ++o) {
        int64_t start = o * strides[d] - pads[d];
        int64_t lo = start >= 0 ? 0 : std::min((-start + dilation - 1) / dilation, kernel[d]);
        dims[d].start.push_back(start);
        dims[d].lo.push_back(lo);
        dims[d].hi.push_back(std::max(lo, tapsBelow(start, size)));
        dims[d].padded.push_back(tapsBelow(start, paddedEnd));
      }
    }
  }

  /// Pools the window of output position `out` over one plane; `tap` is scratch of the rank.
  template <bool Average, typename T>
  float pool(const T *plane, const std::vector<int64_t> &out, std::vector<int64_t> &tap) const {
    size_t rank = dims.size(), last = rank - 1;
    bool empty = false;
    int64_t taps = 1, padded = 1, offset = 0;
    for (size_t d = 0; d < rank; ++d) {
      int64_t lo = dims[d].lo[out[d]], hi = dims[d].hi[out[d]];
      empty |= lo >= hi;
      taps *= hi - lo;
      padded *= dims[d].padded[out[d]];
      offset += (dims[d].start[out[d]] + lo * dilations[d]) * inStrides[d];
      tap[d] = lo;
    }
    float result = Average ? 0.0f : -std::numeric_limits<float>::infinity();
    int64_t innerTaps = dims[last].hi[out[last]] - dims[last].lo[out[last]];
    // A plain loop over the innermost dimension's taps, an odometer over the others'.
    for (bool more = !empty; more;) {
      const T *row = plane + offset;
      for (int64_t t = 0; t < innerTaps; ++t) {
        float value = Element<T>::load(row[t * dilations[last]]);
        if constexpr (Average)
          result += value;
        else if (value > result || std::isnan(value))
          result = value;
      }
      more = false;
      for (size_t d = last; d-- > 0 && !more;) {
        offset += dilations[d] * inStrides[d];
        more = ++tap[d] < dims[d].hi[out[d]];
        if (!more) {
          offset -= (tap[d] - dims[d].lo[out[d]]) * dilations[d] * inStrides[d];
          tap[d] = dims[d].lo[out[d]];
        }
      }
    }
    if constexpr (Average) {
      int64_t divisor = countIncludePad ? padded : (empty ? 0 : taps);
      result = divisor == 0 ? 0.0f : result / static_cast<float>(divisor);
    }
    return result;
  }

private:
  struct Ranges {
    std::vector<int64_t> start, lo, hi, padded;
  };
  std::vector<Ranges> dims;
  std::vector<int64_t> dilations, inStrides;
  bool countIncludePad = false;
};

template <bool Average> bool runPool(const KernelCall &call, std::string &) {
  const TensorView &input = call.inputs[0], &output = call.outputs[0];
  if (output.numElements() == 0)
    return true;
  PoolWindows windows(input.shape, output.shape, attributesOf(call));
  size_t rank = input.shape.size() - 2;
  int64_t planes = input.shape[0] * input.shape[1];
  int64_t inSize = input.numElements() / planes, outSize = output.numElements() / planes;
  visitFloat(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *x = input.as<T>();
    T *y = output.as<T>();
    parallelFor(0, planes, std::max<int64_t>(1, kExpensiveGrain / outSize),
                [&](int64_t begin, int64_t end) {
                  std::vector<int64_t> out(rank), tap(rank);
                  for (int64_t plane = begin; plane < end; ++plane) {
                    std::fill(out.begin(), out.end(), 0);
                    for (int64_t p = 0; p < outSize; ++p) {
                      float value = windows.pool<Average>(x + plane * inSize, out, tap);
                      y[plane * outSize + p] = Element<T>::store(value);
                      for (size_t d = rank; d-- > 0;) {
                        if (++out[d] < output.shape[d + 2])
                          break;
                        out[d] = 0;
                      }
                    }
                  }
                });
  });
  return true;
}

} // namespace

void addPoolingKernels(KernelTable &table) {
  table["max_pool"] = Kernel{&checkPool<false>, &runPool<false>};
  table["avg_pool"] = Kernel{&checkPool<true>, &runPool<true>};
}

} // namespace memc::kernels
