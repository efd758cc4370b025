//===- AttentionMathTest.cpp - the CUDA attention's arithmetic on the host ------------===//
//
// The CUDA attention kernels (kernels/cuda/FlashAttention*.cu) cut the work into tiles and
// compute each with AttentionMath.h. Here the same tiling runs serially on the CPU with the same
// functions, reading the calls as the run functions do (AttentionCall.h), and its outputs are
// compared with the CPU kernels' (kernels/cpu/Attention.cpp, AttentionBackward.cpp) on random
// calls: causal (fewer and more queries than keys), masked (broadcast masks of each float type,
// -inf entries, rows that see no key), dropout with and without a salt, grouped-query heads,
// f32, bf16 and f16. Two tilings: the CUDA-core kernels' (f32 operands, any tile size, here down
// to tiles of 3 and 5 rows) and the tensor-core kernels' (64-row tiles, P and dS rounded to the
// element type for their products, as mma.sync takes them).
//
//===----------------------------------------------------------------------===//
#include "KernelTestSupport.h"

#include "kernels/KernelTargets.h"
#include "kernels/cuda/AttentionCall.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace memc::kernels::testing {
namespace {

using cuda::AttentionDims;
using cuda::AttentionScores;
using cuda::SoftmaxRow;

/// One random attention call.
struct AttentionCase {
  DType dtype = DType::F32;
  int64_t batch = 2, heads = 2, kvHeads = 2, queries = 7, keys = 9, headDim = 8, valueDim = 8;
  bool causal = false;
  std::optional<Shape> maskShape;
  DType maskType = DType::F32;
  double dropout = 0.0;
  bool salt = false;
};

/// How the emulated kernels cut and round: tiles of queries and keys in the forward and in
/// each backward pass, and whether P and dS are rounded to the element type before their
/// products (the tensor cores' operands).
struct Tiling {
  int64_t forwardQueries, forwardKeys;
  int64_t keyPassKeys, keyPassQueries;
  int64_t queryPassQueries, queryPassKeys;
  bool roundOperands;
};

constexpr Tiling kCudaCoreTiling{32, 32, 32, 32, 32, 32, false};
constexpr Tiling kOddTiling{5, 3, 3, 5, 4, 7, false};
constexpr Tiling kTensorCoreTiling{64, 64, 64, 32, 64, 64, true};

float roundTo(DType dtype, float value) {
  switch (dtype) {
  case DType::F16:
    return halfToFloat(floatToHalf(value));
  case DType::BF16:
    return bfloat16ToFloat(floatToBFloat16(value));
  default:
    return value;
  }
}

OwnedTensor randomTensor(DType dtype, Shape shape, uint32_t seed, double scale = 1.0) {
  return tensor(dtype, shape, randomF32(shape, seed, scale).values());
}

/// A mask of normal values with about one element in eight -inf and, unless it broadcasts over
/// the queries, its query row 1 all -inf (a row that sees no key).
OwnedTensor randomMask(DType dtype, const Shape &shape, uint32_t seed) {
  std::vector<double> values = randomF32(shape, seed, 0.5).values();
  std::mt19937 random(seed + 1);
  for (double &value : values)
    if (random() % 8 == 0)
      value = -std::numeric_limits<double>::infinity();
  const int64_t keys = shape[3], rows = shape[2];
  for (size_t i = 0; i < values.size(); ++i)
    if (rows > 1 && static_cast<int64_t>(i) / keys % rows == 1)
      values[i] = -std::numeric_limits<double>::infinity();
  return tensor(dtype, shape, values);
}

/// The operands of one case and its attributes.
struct AttentionOperands {
  Attributes attributes;
  std::vector<OwnedTensor> inputs; // query, key, value[, mask][, salt]

  explicit AttentionOperands(const AttentionCase &c, uint32_t seed) {
    attributes.set("scale", 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(c.headDim, 1))));
    attributes.set("causal", int64_t{c.causal});
    if (c.dropout > 0.0) {
      attributes.set("dropout_ratio", c.dropout);
      attributes.set("seed", int64_t{1234});
    }
    inputs.push_back(randomTensor(c.dtype, {c.batch, c.heads, c.queries, c.headDim}, seed));
    inputs.push_back(randomTensor(c.dtype, {c.batch, c.kvHeads, c.keys, c.headDim}, seed + 1));
    inputs.push_back(randomTensor(c.dtype, {c.batch, c.kvHeads, c.keys, c.valueDim}, seed + 2));
    if (c.maskShape)
      inputs.push_back(randomMask(c.maskType, *c.maskShape, seed + 3));
    if (c.salt)
      inputs.push_back(i64({}, {77}));
  }
};

/// Row `row` of a tensor as f32.
std::vector<float> rowOf(const OwnedTensor &t, int64_t offset, int64_t width) {
  std::vector<float> row(width);
  for (int64_t i = 0; i < width; ++i)
    row[i] = static_cast<float>(t.at(offset + i));
  return row;
}

float dot(const std::vector<float> &x, const std::vector<float> &y) {
  float sum = 0.0f;
  for (size_t i = 0; i < x.size(); ++i)
    sum += x[i] * y[i];
  return sum;
}

/// The forward of the CUDA kernels, serially: per (batch, head, tile of queries), the visible
/// key tiles folded into each row's online softmax.
std::vector<OwnedTensor> tiledForward(const KernelCall &call, DType dtype, const Tiling &tiling,
                                      const std::vector<OwnedTensor> &inputs) {
  const AttentionScores scores = cuda::attentionScores(call, 0, 3);
  const DropoutMask dropout = cuda::attentionDropout(call, 3).mask();
  const AttentionDims &dims = scores.dims;
  const OwnedTensor &query = inputs[0], &key = inputs[1], &value = inputs[2];
  OwnedTensor output(dtype, {dims.batch, dims.heads, dims.queries, dims.valueDim});
  OwnedTensor logsumexp(DType::F32, {dims.batch, dims.heads, dims.queries});
  const int64_t d = dims.headDim, dv = dims.valueDim;
  for (int64_t b = 0; b < dims.batch; ++b)
    for (int64_t h = 0; h < dims.heads; ++h)
      for (int64_t query0 = 0; query0 < dims.queries; query0 += tiling.forwardQueries) {
        const int64_t queryCount = std::min(tiling.forwardQueries, dims.queries - query0);
        const int64_t kvHead = h / dims.group();
        std::vector<SoftmaxRow> rows(queryCount);
        std::vector<std::vector<float>> accumulator(queryCount, std::vector<float>(dv, 0.0f));
        for (int64_t key0 = 0; key0 < scores.visibleKeyEnd(query0 + queryCount);
             key0 += tiling.forwardKeys) {
          const int64_t keyCount = std::min(tiling.forwardKeys, dims.keys - key0);
          for (int64_t r = 0; r < queryCount; ++r) {
            const int64_t i = query0 + r;
            std::vector<float> q = rowOf(query, dims.queryRow(b, h, i, d), d);
            std::vector<float> tile(keyCount);
            for (int64_t c = 0; c < keyCount; ++c)
              tile[c] = scores.score(dot(q, rowOf(key, dims.keyRow(b, kvHead, key0 + c, d), d)), b,
                                     h, i, key0 + c);
            float rescale = cuda::foldScores(rows[r], tile.data(), keyCount);
            for (float &o : accumulator[r])
              o *= rescale;
            for (int64_t c = 0; c < keyCount; ++c) {
              float p = tile[c] * cuda::dropoutFactor(dropout, dims, b, h, i, key0 + c);
              if (tiling.roundOperands)
                p = roundTo(dtype, p);
              std::vector<float> v = rowOf(value, dims.keyRow(b, kvHead, key0 + c, dv), dv);
              for (int64_t j = 0; j < dv; ++j)
                accumulator[r][j] += p * v[j];
            }
          }
        }
        for (int64_t r = 0; r < queryCount; ++r) {
          const int64_t i = query0 + r;
          std::vector<double> outputRow(dv);
          for (int64_t j = 0; j < dv; ++j)
            outputRow[j] = accumulator[r][j] * rows[r].outputScale();
          OwnedTensor rounded = tensor(dtype, {dv}, outputRow);
          std::copy(rounded.bytes.begin(), rounded.bytes.end(),
                    output.bytes.begin() + dims.queryRow(b, h, i, dv) * dtypeSize(dtype));
          logsumexp.as<float>()[dims.queryRow(b, h, i, 1)] = rows[r].logsumexp();
        }
      }
  return {output, logsumexp};
}

/// The backward's tensors: (grad, query, key, value, output, logsumexp[, mask][, salt]).
struct GradOperands {
  std::vector<OwnedTensor> inputs;
  const OwnedTensor &grad() const { return inputs[0]; }
  const OwnedTensor &query() const { return inputs[1]; }
  const OwnedTensor &key() const { return inputs[2]; }
  const OwnedTensor &value() const { return inputs[3]; }
  const OwnedTensor &output() const { return inputs[4]; }
  const OwnedTensor &logsumexp() const { return inputs[5]; }
};

/// dS and the dropped P of one (query i, key j) pair, as both backward passes compute them.
struct PairGradient {
  float droppedProbability, scoreGrad;
};

PairGradient pairGradient(const AttentionScores &scores, const DropoutMask &dropout,
                          const GradOperands &operands, const std::vector<float> &rowDots,
                          const Tiling &tiling, DType dtype, int64_t b, int64_t h, int64_t i,
                          int64_t j) {
  const AttentionDims &dims = scores.dims;
  const int64_t d = dims.headDim, dv = dims.valueDim, kvHead = h / dims.group();
  std::vector<float> q = rowOf(operands.query(), dims.queryRow(b, h, i, d), d);
  std::vector<float> k = rowOf(operands.key(), dims.keyRow(b, kvHead, j, d), d);
  std::vector<float> gradRow = rowOf(operands.grad(), dims.queryRow(b, h, i, dv), dv);
  std::vector<float> v = rowOf(operands.value(), dims.keyRow(b, kvHead, j, dv), dv);
  const int64_t row = dims.queryRow(b, h, i, 1);
  float probability = cuda::probabilityFromLogsumexp(scores.score(dot(q, k), b, h, i, j),
                                                     operands.logsumexp().as<float>()[row]);
  float factor = cuda::dropoutFactor(dropout, dims, b, h, i, j);
  PairGradient result{
      probability * factor,
      cuda::scoreGradient(probability, dot(gradRow, v), factor, rowDots[row], scores.scale)};
  if (tiling.roundOperands) {
    result.droppedProbability = roundTo(dtype, result.droppedProbability);
    result.scoreGrad = roundTo(dtype, result.scoreGrad);
  }
  return result;
}

void storeRow(OwnedTensor &target, int64_t offset, const std::vector<float> &row) {
  std::vector<double> values(row.begin(), row.end());
  OwnedTensor rounded = tensor(target.dtype, {static_cast<int64_t>(row.size())}, values);
  std::copy(rounded.bytes.begin(), rounded.bytes.end(),
            target.bytes.begin() + offset * dtypeSize(target.dtype));
}

/// The backward of the CUDA kernels, serially: D per query row, then the key pass (dK, dV) and
/// the query pass (dQ) over their tiles.
std::vector<OwnedTensor> tiledBackward(const KernelCall &call, DType dtype, const Tiling &tiling,
                                       const GradOperands &operands) {
  const AttentionScores scores = cuda::attentionScores(call, 1, 6);
  const DropoutMask dropout = cuda::attentionDropout(call, 6).mask();
  const AttentionDims &dims = scores.dims;
  const int64_t d = dims.headDim, dv = dims.valueDim;
  OwnedTensor queryGrad(dtype, operands.query().shape), keyGrad(dtype, operands.key().shape),
      valueGrad(dtype, operands.value().shape);

  std::vector<float> rowDots(dims.batch * dims.heads * dims.queries);
  for (size_t row = 0; row < rowDots.size(); ++row) {
    double sum = 0.0;
    for (int64_t j = 0; j < dv; ++j)
      sum += static_cast<double>(static_cast<float>(operands.grad().at(row * dv + j))) *
             static_cast<float>(operands.output().at(row * dv + j));
    rowDots[row] = static_cast<float>(sum);
  }

  for (int64_t b = 0; b < dims.batch; ++b)
    for (int64_t kvHead = 0; kvHead < dims.kvHeads; ++kvHead)
      for (int64_t key0 = 0; key0 < dims.keys; key0 += tiling.keyPassKeys) {
        const int64_t keyCount = std::min(tiling.keyPassKeys, dims.keys - key0);
        std::vector<std::vector<float>> dK(keyCount, std::vector<float>(d, 0.0f)),
            dV(keyCount, std::vector<float>(dv, 0.0f));
        for (int64_t h = kvHead * dims.group(); h < (kvHead + 1) * dims.group(); ++h)
          for (int64_t query0 =
                   scores.firstQueryTileSeeing(key0, tiling.keyPassQueries) * tiling.keyPassQueries;
               query0 < dims.queries; query0 += tiling.keyPassQueries) {
            const int64_t queryCount = std::min(tiling.keyPassQueries, dims.queries - query0);
            for (int64_t c = 0; c < keyCount; ++c)
              for (int64_t r = 0; r < queryCount; ++r) {
                const int64_t i = query0 + r;
                PairGradient pair = pairGradient(scores, dropout, operands, rowDots, tiling, dtype,
                                                 b, h, i, key0 + c);
                std::vector<float> gradRow = rowOf(operands.grad(), dims.queryRow(b, h, i, dv), dv);
                std::vector<float> q = rowOf(operands.query(), dims.queryRow(b, h, i, d), d);
                for (int64_t j = 0; j < dv; ++j)
                  dV[c][j] += pair.droppedProbability * gradRow[j];
                for (int64_t j = 0; j < d; ++j)
                  dK[c][j] += pair.scoreGrad * q[j];
              }
          }
        for (int64_t c = 0; c < keyCount; ++c) {
          storeRow(keyGrad, dims.keyRow(b, kvHead, key0 + c, d), dK[c]);
          storeRow(valueGrad, dims.keyRow(b, kvHead, key0 + c, dv), dV[c]);
        }
      }

  for (int64_t b = 0; b < dims.batch; ++b)
    for (int64_t h = 0; h < dims.heads; ++h)
      for (int64_t query0 = 0; query0 < dims.queries; query0 += tiling.queryPassQueries) {
        const int64_t queryCount = std::min(tiling.queryPassQueries, dims.queries - query0);
        std::vector<std::vector<float>> dQ(queryCount, std::vector<float>(d, 0.0f));
        for (int64_t key0 = 0; key0 < scores.visibleKeyEnd(query0 + queryCount);
             key0 += tiling.queryPassKeys) {
          const int64_t keyCount = std::min(tiling.queryPassKeys, dims.keys - key0);
          for (int64_t r = 0; r < queryCount; ++r)
            for (int64_t c = 0; c < keyCount; ++c) {
              PairGradient pair = pairGradient(scores, dropout, operands, rowDots, tiling, dtype, b,
                                               h, query0 + r, key0 + c);
              std::vector<float> k =
                  rowOf(operands.key(), dims.keyRow(b, h / dims.group(), key0 + c, d), d);
              for (int64_t j = 0; j < d; ++j)
                dQ[r][j] += pair.scoreGrad * k[j];
            }
        }
        for (int64_t r = 0; r < queryCount; ++r)
          storeRow(queryGrad, dims.queryRow(b, h, query0 + r, d), dQ[r]);
      }
  return {queryGrad, keyGrad, valueGrad};
}

/// Tolerances of an element type, about twice the largest differences seen: f32 those of the
/// CPU's sgemm sums and vectorized exp against serial sums and expf; f16/bf16 a unit or two in
/// the last place of the rounded outputs, which the tensor cores' tiling adds the rounding of P
/// and dS to.
struct Tolerance {
  double rtol, atol;
};

Tolerance toleranceOf(DType dtype) {
  switch (dtype) {
  case DType::BF16:
    return {2e-2, 2e-2};
  case DType::F16:
    return {4e-3, 4e-3};
  default:
    return {2e-5, 2e-6};
  }
}

/// Runs the case through the CPU kernels and the emulated CUDA tiling, forward and backward.
void expectTiledMatchesCpu(const AttentionCase &c, const Tiling &tiling, uint32_t seed) {
  SCOPED_TRACE(::testing::Message()
               << dtypeName(c.dtype) << " B" << c.batch << " H" << c.heads << "/" << c.kvHeads
               << " Tq" << c.queries << " Tk" << c.keys << " D" << c.headDim << "/" << c.valueDim
               << (c.causal ? " causal" : "") << (c.maskShape ? " masked" : "") << " dropout "
               << c.dropout << ", tiles " << tiling.forwardQueries << "x" << tiling.forwardKeys);
  AttentionOperands operands(c, seed);
  const Shape outputShape{c.batch, c.heads, c.queries, c.valueDim},
      rowShape{c.batch, c.heads, c.queries};
  std::vector<OwnedTensor> cpuForward =
      runKernel("flash_attention", operands.inputs,
                {{c.dtype, outputShape}, {DType::F32, rowShape}}, operands.attributes);
  std::vector<OwnedTensor> forwardOutputs{OwnedTensor(c.dtype, outputShape),
                                          OwnedTensor(DType::F32, rowShape)};
  KernelCall forwardCall = makeCall(operands.inputs, forwardOutputs, operands.attributes);
  std::vector<OwnedTensor> tiled = tiledForward(forwardCall, c.dtype, tiling, operands.inputs);
  const Tolerance tolerance = toleranceOf(c.dtype);
  EXPECT_TRUE(closeTo(tiled[0].values(), cpuForward[0].values(), tolerance.rtol, tolerance.atol))
      << "output";
  EXPECT_TRUE(closeTo(tiled[1].values(), cpuForward[1].values(), 1e-4, 1e-4)) << "logsumexp";

  // The backward of the CPU forward's output and logsumexp, so that both sides read the same.
  GradOperands grad;
  grad.inputs = {randomTensor(c.dtype, outputShape, seed + 10),
                 operands.inputs[0],
                 operands.inputs[1],
                 operands.inputs[2],
                 cpuForward[0],
                 cpuForward[1]};
  for (size_t i = 3; i < operands.inputs.size(); ++i)
    grad.inputs.push_back(operands.inputs[i]);
  std::vector<std::pair<DType, Shape>> gradTypes{{c.dtype, operands.inputs[0].shape},
                                                 {c.dtype, operands.inputs[1].shape},
                                                 {c.dtype, operands.inputs[2].shape}};
  std::vector<OwnedTensor> cpuGrads =
      runKernel("flash_attention_grad", grad.inputs, gradTypes, operands.attributes);
  std::vector<OwnedTensor> gradOutputs;
  for (const auto &[dtype, shape] : gradTypes)
    gradOutputs.emplace_back(dtype, shape);
  KernelCall gradCall = makeCall(grad.inputs, gradOutputs, operands.attributes);
  std::vector<OwnedTensor> tiledGrads = tiledBackward(gradCall, c.dtype, tiling, grad);
  const char *names[] = {"query_grad", "key_grad", "value_grad"};
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(
        closeTo(tiledGrads[i].values(), cpuGrads[i].values(), tolerance.rtol, tolerance.atol))
        << names[i];
}

/// The cases every tiling runs, for one element type.
std::vector<AttentionCase> casesOf(DType dtype) {
  std::vector<AttentionCase> cases;
  AttentionCase plain;
  plain.dtype = dtype;
  cases.push_back(plain);

  AttentionCase causalFewerQueries = plain; // the last query sees every key
  causalFewerQueries.causal = true;
  causalFewerQueries.queries = 70;
  causalFewerQueries.keys = 90;
  cases.push_back(causalFewerQueries);

  AttentionCase causalMoreQueries = causalFewerQueries; // the first queries see no key
  causalMoreQueries.queries = 90;
  causalMoreQueries.keys = 70;
  cases.push_back(causalMoreQueries);

  AttentionCase masked = plain;
  masked.queries = 66;
  masked.keys = 67;
  masked.maskShape = Shape{2, 1, 66, 67};
  masked.maskType = DType::BF16;
  cases.push_back(masked);

  AttentionCase keyMask = plain; // a padding mask broadcast over heads and queries
  keyMask.maskShape = Shape{2, 1, 1, 9};
  keyMask.maskType = DType::F16;
  keyMask.causal = true;
  cases.push_back(keyMask);

  AttentionCase dropout = plain;
  dropout.queries = 40;
  dropout.keys = 70;
  dropout.dropout = 0.25;
  dropout.salt = true;
  dropout.maskShape = Shape{1, 2, 40, 70};
  cases.push_back(dropout);

  AttentionCase grouped = plain; // four query heads per kv head, value wider than key
  grouped.heads = 8;
  grouped.kvHeads = 2;
  grouped.queries = 33;
  grouped.keys = 65;
  grouped.valueDim = 12;
  grouped.causal = true;
  grouped.dropout = 0.1;
  cases.push_back(grouped);
  return cases;
}

TEST(AttentionMath, CudaCoreTilingMatchesTheCpuKernels) {
  uint32_t seed = 100;
  for (DType dtype : {DType::F32, DType::BF16})
    for (const AttentionCase &c : casesOf(dtype))
      expectTiledMatchesCpu(c, kCudaCoreTiling, seed += 20);
}

TEST(AttentionMath, OddTilesMatchTheCpuKernels) {
  uint32_t seed = 300;
  for (const AttentionCase &c : casesOf(DType::F32))
    expectTiledMatchesCpu(c, kOddTiling, seed += 20);
}

TEST(AttentionMath, TensorCoreTilingMatchesTheCpuKernels) {
  uint32_t seed = 500;
  for (DType dtype : {DType::BF16, DType::F16})
    for (AttentionCase c : casesOf(dtype)) {
      c.headDim = c.valueDim = 64; // the tensor cores' head dimensions
      expectTiledMatchesCpu(c, kTensorCoreTiling, seed += 20);
    }
}

TEST(AttentionMath, TileRangesCoverEveryVisiblePair) {
  for (int64_t queries : {1, 7, 64, 70})
    for (int64_t keys : {1, 9, 64, 90}) {
      AttentionScores scores{};
      scores.dims = AttentionDims{1, 1, 1, queries, keys, 8, 8};
      scores.causal = true;
      for (int64_t tile : {1, 3, 32, 64})
        for (int64_t i = 0; i < queries; ++i)
          for (int64_t j = 0; j < keys; ++j) {
            if (!scores.visible(i, j))
              continue;
            int64_t query0 = i / tile * tile, key0 = j / tile * tile;
            EXPECT_LT(j, scores.visibleKeyEnd(std::min(query0 + tile, queries)))
                << i << ", " << j << " tile " << tile;
            EXPECT_LE(scores.firstQueryTileSeeing(key0, tile), i / tile)
                << i << ", " << j << " tile " << tile;
          }
    }
}

TEST(AttentionMath, SoftmaxRowFoldsTilesOfAnyWidthAlike) {
  OwnedTensor values = randomF32({50}, 7, 3.0);
  std::vector<float> scores(values.as<float>(), values.as<float>() + 50);
  scores[3] = cuda::kHiddenScore;
  double exactMax = *std::max_element(scores.begin(), scores.end()), exactSum = 0.0;
  for (float s : scores)
    exactSum += std::exp(static_cast<double>(s) - exactMax);
  for (int64_t width : {1, 4, 7, 50}) {
    SoftmaxRow row;
    for (int64_t start = 0; start < 50; start += width) {
      std::vector<float> tile(scores.begin() + start,
                              scores.begin() + std::min<int64_t>(start + width, 50));
      cuda::foldScores(row, tile.data(), static_cast<int64_t>(tile.size()));
    }
    EXPECT_NEAR(row.logsumexp(), exactMax + std::log(exactSum), 1e-5) << width;
  }
  SoftmaxRow unseen;
  std::vector<float> hidden(4, cuda::kHiddenScore);
  EXPECT_EQ(cuda::foldScores(unseen, hidden.data(), 4), 1.0f);
  EXPECT_EQ(hidden, std::vector<float>(4, 0.0f));
  EXPECT_EQ(unseen.outputScale(), 0.0f);
  EXPECT_EQ(unseen.logsumexp(), cuda::kHiddenScore);
}

TEST(AttentionTarget, TakesHeadDimsUpTo256AndKeepsTheBackwardsRowDots) {
  const KernelTable &cuda = *targetContracts(kCudaTarget);
  Attributes attributes = attrs({{"scale", 0.125}, {"causal", int64_t{1}}});
  auto forward = [&](int64_t headDim, int64_t valueDim) {
    KernelCall call;
    call.inputs = {TensorView{nullptr, DType::BF16, {2, 8, 100, headDim}},
                   TensorView{nullptr, DType::BF16, {2, 2, 120, headDim}},
                   TensorView{nullptr, DType::BF16, {2, 2, 120, valueDim}}};
    call.outputs = {TensorView{nullptr, DType::BF16, {2, 8, 100, valueDim}},
                    TensorView{nullptr, DType::F32, {2, 8, 100}}};
    call.attributes = &attributes;
    return call;
  };
  std::string error;
  EXPECT_TRUE(checkKernelCall(cuda.at("flash_attention"), forward(256, 96), error)) << error;
  EXPECT_FALSE(checkKernelCall(cuda.at("flash_attention"), forward(64, 320), error));
  EXPECT_NE(error.find("flash_attention on the CUDA target takes head dimensions up to 256"),
            std::string::npos)
      << error;
  EXPECT_EQ(workspaceBytes(cuda.at("flash_attention"), forward(128, 128)), 0u);

  KernelCall forwardCall = forward(128, 128), grad;
  grad.inputs = {forwardCall.outputs[0], forwardCall.inputs[0],  forwardCall.inputs[1],
                 forwardCall.inputs[2],  forwardCall.outputs[0], forwardCall.outputs[1]};
  grad.outputs = {forwardCall.inputs[0], forwardCall.inputs[1], forwardCall.inputs[2]};
  grad.attributes = &attributes;
  EXPECT_TRUE(checkKernelCall(cuda.at("flash_attention_grad"), grad, error)) << error;
  EXPECT_EQ(workspaceBytes(cuda.at("flash_attention_grad"), grad), 2u * 8 * 100 * sizeof(float));
}

} // namespace
} // namespace memc::kernels::testing
