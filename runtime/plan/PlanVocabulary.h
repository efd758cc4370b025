//===- PlanVocabulary.h - the names a plan shares with its writer -*- C++ -*-===//
//
// The compiler writes these names and kinds into plans and the IR, the report prints them, the
// runtime acts on them: the run-time scalar inputs of a training step, the kinds of parameter
// bindings, and the memory categories of buffers. Each is spelled once, here, in a table that
// says everything the three sides need to know about it. Header-only, like PlanFormat.h, so the
// compiler can use it without linking the runtime.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_PLAN_PLANVOCABULARY_H
#define MEMC_RUNTIME_PLAN_PLANVOCABULARY_H

#include "runtime/plan/Plan.pb.h"

#include <array>
#include <cstddef>
#include <string_view>

namespace memc::plan {

/// Scalars the runtime binds every micro-batch besides the data, in the order a training step
/// takes them.
enum class ScalarInput : uint8_t {
  LearningRate,
  StepNumber,
  Apply,
  Salt,
  Refresh,
  LossWeight,
  ClipNorm
};

struct ScalarInputInfo {
  ScalarInput input;
  /// The input's binding name (and its `memc.input` name in the IR).
  std::string_view name;
  DType dtype;
};

/// One entry per ScalarInput, indexed by it.
inline constexpr std::array kScalarInputs = {
    // The schedule's learning rate.
    ScalarInputInfo{ScalarInput::LearningRate, "memc.lr", F32},
    // The 1-based optimizer step (AdamW's bias correction).
    ScalarInputInfo{ScalarInput::StepNumber, "memc.step", F32},
    // 1 on the micro-batch that applies the accumulated update, 0 on the others.
    ScalarInputInfo{ScalarInput::Apply, "memc.apply", F32},
    // Mixed into every dropout mask: the seed and the micro-batch number.
    ScalarInputInfo{ScalarInput::Salt, "memc.salt", I64},
    // 1 on the first micro-batch of an optimizer step, 0 on the others: with accumulation and a
    // 16-bit precision, the weight copies (KIND_WEIGHT_COPY) are made then, once per update.
    ScalarInputInfo{ScalarInput::Refresh, "memc.refresh", F32},
    // With accumulation under cross_entropy: this micro-batch's counted labels (not the ignored
    // index) times the micro-batches per step, over the step's counted labels. It scales the
    // backward's seed, so the accumulated mean is the token-weighted one that one bigger batch
    // gives (Hugging Face's rule), not the mean of the micro-batches' means.
    ScalarInputInfo{ScalarInput::LossWeight, "memc.loss_weight", F32},
    // With --clip-grad-norm: the global norm the gradients are clipped to, a run-time setting
    // (the program's --clip-grad-norm overrides the compiled one).
    ScalarInputInfo{ScalarInput::ClipNorm, "memc.clip_grad_norm", F32},
};

constexpr std::string_view scalarInputName(ScalarInput input) {
  return kScalarInputs[static_cast<size_t>(input)].name;
}

/// Whether `name` is a scalar the runtime binds rather than data.
constexpr bool isScalarInput(std::string_view name) {
  for (const ScalarInputInfo &info : kScalarInputs)
    if (info.name == name)
      return true;
  return false;
}

struct BindingKindInfo {
  BindingKind kind;
  /// The `memc.param_kind` spelling in the IR.
  std::string_view name;
  /// The memory category of an argument of this kind.
  Category category;
  /// Initialized from the weights file and written by --save; otherwise the tensor starts at
  /// zero and only checkpoints hold it.
  bool modelWeight;
};

/// Indexed by BindingKind; KIND_NONE is every input and output (data, labels, scalars).
inline constexpr std::array<BindingKindInfo, BindingKind_ARRAYSIZE> kBindingKinds = {{
    {KIND_NONE, "", INPUTS, false},
    {KIND_PARAMETER, "parameter", PARAMETERS, true},
    // Model state that does not train: BatchNorm running statistics, integer tensors.
    {KIND_BUFFER, "buffer", PARAMETERS, true},
    {KIND_OPTIMIZER_STATE, "optimizer_state", OPTIMIZER_STATE, false},
    // Sums of micro-batch gradients between updates.
    {KIND_GRADIENT_ACCUMULATOR, "gradient_accumulator", GRADIENTS, false},
    // --precision fp16: GradScaler's scale, growth count and skipped steps (kLossScalerStates).
    {KIND_LOSS_SCALER, "loss_scaler", OPTIMIZER_STATE, false},
    // With accumulation and a 16-bit precision: a weight's 16-bit copy, made on the first
    // micro-batch of each optimizer step and read by the others.
    {KIND_WEIGHT_COPY, "weight_copy", WEIGHT_COPIES, false},
}};

/// The loss scaler's state (KIND_LOSS_SCALER bindings, f32 scalars), in the order
/// memc.loss_scale_update takes them. Each starts at zero.
enum class LossScalerState : uint8_t { Exponent, Growth, Skipped };

struct LossScalerStateInfo {
  LossScalerState state;
  /// Its binding name (and memc.param name in the IR).
  std::string_view name;
};

inline constexpr std::array kLossScalerStates = {
    // The scale is initial_scale * 2^exponent.
    LossScalerStateInfo{LossScalerState::Exponent, "memc.loss_scale_exponent"},
    // Consecutive finite steps since the scale last changed.
    LossScalerStateInfo{LossScalerState::Growth, "memc.loss_scale_growth"},
    // Steps whose update was skipped: the optimizer's step number is memc.step minus these.
    LossScalerStateInfo{LossScalerState::Skipped, "memc.skipped_steps"},
};

/// The outputs of a step with loss scaling that the runtime logs: the scale the step used and
/// 1 where its update was skipped (read on the micro-batch that applies).
inline constexpr std::string_view kLossScaleOutput = "memc.loss_scale";
inline constexpr std::string_view kSkippedOutput = "memc.skipped";

/// The gradients' global L2 norm (after unscaling), an output of steps that clip or were
/// compiled with --log-grad-norm (read on the micro-batch that applies).
inline constexpr std::string_view kGradNormOutput = "memc.grad_norm";

/// The entry of `kind`; KIND_NONE's for a value this table does not know (the plan loader
/// refuses those).
constexpr const BindingKindInfo &bindingKindInfo(BindingKind kind) {
  return kBindingKinds[kind >= 0 && kind < BindingKind_ARRAYSIZE ? kind : 0];
}

/// The kind spelled `name` in the IR; KIND_NONE when no kind is.
constexpr BindingKind bindingKindNamed(std::string_view name) {
  for (const BindingKindInfo &info : kBindingKinds)
    if (!info.name.empty() && info.name == name)
      return info.kind;
  return KIND_NONE;
}

/// C strings: the report prints them through printf-style formats.
struct CategoryInfo {
  Category category;
  /// In reports and as the JSON key of the breakdown.
  const char *name;
  /// The category's colour in the memory SVG.
  const char *svgColor;
};

/// Indexed by Category.
inline constexpr std::array<CategoryInfo, Category_ARRAYSIZE> kCategories = {{
    {CATEGORY_UNSPECIFIED, "other", "#999999"},
    {PARAMETERS, "parameters", "#4e79a7"},
    {GRADIENTS, "gradients", "#f28e2b"},
    {OPTIMIZER_STATE, "optimizer_state", "#e15759"},
    {ACTIVATIONS, "activations", "#76b7b2"},
    {TEMPORARIES, "temporaries", "#59a14f"},
    {WORKSPACE, "workspace", "#edc948"},
    {INPUTS, "inputs", "#b07aa1"},
    {CONSTANTS, "constants", "#9c755f"},
    {WEIGHT_COPIES, "weight_copies", "#ff9da7"},
    {COMMUNICATION, "communication", "#bab0ac"},
    {QUANTIZED_BASE, "quantized_base", "#8cd17d"},
}};

/// The entry of `category`; CATEGORY_UNSPECIFIED's for a value this table does not know.
constexpr const CategoryInfo &categoryInfo(int category) {
  return kCategories[category >= 0 && category < Category_ARRAYSIZE ? category : 0];
}

/// Plan.Step.phase's names, in the profiler's table and the report's FLOPs; indexed by Phase.
inline constexpr std::array<const char *, Phase_ARRAYSIZE> kPhaseNames = {
    "other", "forward", "backward", "optimizer", "recompute"};
constexpr const char *phaseName(int phase) {
  return kPhaseNames[phase >= 0 && phase < Phase_ARRAYSIZE ? phase : 0];
}

namespace detail {
/// Whether entry i of `table` is the one for the value i: the lookups above index by value.
template <typename Entry, size_t N, typename Key>
constexpr bool indexedBy(const std::array<Entry, N> &table, Key Entry::*key) {
  for (size_t i = 0; i < N; ++i)
    if (static_cast<size_t>(table[i].*key) != i)
      return false;
  return true;
}
} // namespace detail

static_assert(detail::indexedBy(kScalarInputs, &ScalarInputInfo::input));
static_assert(detail::indexedBy(kBindingKinds, &BindingKindInfo::kind));
static_assert(detail::indexedBy(kLossScalerStates, &LossScalerStateInfo::state));
static_assert(detail::indexedBy(kCategories, &CategoryInfo::category));

} // namespace memc::plan

#endif // MEMC_RUNTIME_PLAN_PLANVOCABULARY_H
