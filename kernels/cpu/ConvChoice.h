//===- ConvChoice.h - which kernel runs a convolution, by measurement -*- C++ -*-===//
//
// conv, conv_grad_input and conv_grad_weight each have two CPU implementations: memc's im2col
// tiles and oneDNN's primitives (OneDnnConvolution.h). Which one is faster depends on the
// shapes in ways no short rule captured (channels, image size, window, stride, batch, the
// direction and the dtype all move it), so the choice reads a table of measured times over a
// grid of shapes (ConvChoiceTable.inc, written by bench/kernels/conv_choice_table.py on this
// project's build machine) and answers with the faster side at the grid point nearest the call.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_CONVCHOICE_H
#define MEMC_KERNELS_CPU_CONVCHOICE_H

#include "kernels/Kernel.h"
#include "kernels/ops/ConvGeometry.h"

#include <cstdint>
#include <optional>

namespace memc::kernels {

/// Which of the three convolution kernels a call is, and so which tensor plays which role:
/// conv(x, w[, b]) -> y, conv_grad_input(dy, w) -> dx, conv_grad_weight(dy, x) -> dw.
enum class ConvDirection { Forward, GradInput, GradWeight };

enum class ConvImplementation { Memc, OneDnn };

/// One measured grid point: an ungrouped convolution of `batch` images of `channels` channels
/// and `size` x `size` pixels into `outChannels` channels, a `window` x `window` window moved by
/// `stride` with pads of half the window; the best time of each implementation in milliseconds
/// at 1 and 2 threads (oneDnnMs < 0: oneDNN has no optimized implementation for it on the
/// measuring machine).
struct ConvChoiceRow {
  ConvDirection direction;
  DType dtype;
  int64_t batch, channels, size, outChannels, window, stride;
  double memcMs[2], oneDnnMs[2];

  /// Output positions per image.
  int64_t outPositions() const;

  /// The faster side over both thread counts (the choice must not depend on the thread count:
  /// it sizes the plan's workspace).
  ConvImplementation faster() const;
};

/// The grid, in the order the bench script measured it.
const ConvChoiceRow *convChoiceTable(int64_t &rows);

/// The row nearest an ungrouped call of geometry `g` in `direction` and `dtype` (f32 or bf16):
/// nearest in log2 of batch, channels, out channels and output positions per image, with the
/// window's and stride's sizes per dimension weighted four times (they change which code runs,
/// not just how long). Any number of spatial dimensions: a 1-D call of length 784 is near the
/// 28 x 28 rows. nullptr when the table has no row of that direction and dtype.
const ConvChoiceRow *nearestConvChoiceRow(ConvDirection direction, DType dtype,
                                          const ConvGeometry &g);

/// Benchmarks only (the bench script measures both sides through it): every convolution oneDNN
/// can run takes `forced` whatever the table and the workspace cap say; nullopt restores them.
void forceConvImplementation(std::optional<ConvImplementation> forced);
std::optional<ConvImplementation> forcedConvImplementation();

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_CONVCHOICE_H
