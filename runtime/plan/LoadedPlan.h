//===- LoadedPlan.h - a plan that passed validation ---------------*- C++ -*-===//
//
// What PlanLoader makes of a plan: every buffer, step and binding checked and resolved (kernels
// found in one device's table, attributes converted), and the schedule's memory timeline
// computed. The executor runs nothing but LoadedPlans, so it can trust every index and size.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_PLAN_LOADEDPLAN_H
#define MEMC_RUNTIME_PLAN_LOADEDPLAN_H

#include "kernels/Kernel.h"
#include "runtime/plan/Plan.pb.h"
#include "runtime/support/DTypes.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memc::runtime {

/// Values equal memc.plan.Region.
enum class Region : uint8_t { Arena = 0, Persistent = 1, Constant = 2, Host = 3 };
const char *regionName(Region region);

struct PlanBuffer {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  Region region = Region::Arena;
  uint64_t offset = 0;
  uint64_t size = 0;
  std::string name;
  /// The buffer that owns these bytes: this one, or for a view (Buffer.alias_of) the end of its
  /// chain of views. Liveness is the owner's; views share it.
  uint32_t owner = 0;
  bool view = false;
};

struct PlanStep {
  std::string kernelName;
  const kernels::Kernel *kernel = nullptr;
  std::vector<uint32_t> inputs;
  std::vector<uint32_t> outputs;
  kernels::Attributes attributes;
  std::string location;
  bool inPlace = false;
  /// The arena buffer holding the kernel's scratch at this step (Step.workspace), if any.
  bool hasWorkspace = false;
  uint32_t workspace = 0;
  /// For the profiler: the cost model's FLOPs and bytes, and the step's phase.
  double flops = 0, bytes = 0;
  plan::Phase phase = plan::PHASE_UNSPECIFIED;
};

struct PlanBinding {
  std::string name;
  uint32_t buffer = 0;
  /// Parameters: the weights-file tensor to load (the binding's name when the plan left it empty).
  std::string source;
  /// Parameters: what the binding holds (PlanVocabulary.h); KIND_NONE for inputs and outputs.
  plan::BindingKind kind = plan::KIND_NONE;
  /// ZeRO stage 3 parameters: the whole tensor's shape (the buffer is this rank's flat shard).
  std::vector<int64_t> shardOf;
  /// Inputs: the persistent buffer the next micro-batch is uploaded into while the current one
  /// runs (Binding.staging, runtime/plan/InputStaging.h).
  std::optional<uint32_t> staging;
};

/// When an arena buffer holds a value, in step indices: from `first` (the step writing it, or
/// -1 for a graph input, written before step 0) to `last` (the last step reading it, or
/// numSteps for a graph output, read after the last step), both inclusive.
struct LiveRange {
  int64_t first = 0;
  int64_t last = 0;
};

/// The arena's occupancy as the schedule changes it. Events for step t are at index t + 1; index
/// 0 is "before step 0", when graph inputs arrive. A step that writes its output over a dying
/// input (in place) hands the input's bytes on to the output: neither appears as an event, so
/// the bytes are counted once.
struct ArenaTimeline {
  std::vector<std::vector<uint32_t>> allocated;
  std::vector<std::vector<uint32_t>> released;
};

struct LoadedPlan {
  uint64_t alignment = 0;
  uint64_t arenaBytes = 0;
  uint64_t persistentBytes = 0;
  /// Offloaded model state and activations (Plan.host_bytes): host memory beside the device's
  /// regions.
  uint64_t hostBytes = 0;
  uint64_t arenaLowerBoundBytes = 0;
  std::string model;
  std::vector<PlanBuffer> buffers;
  std::vector<PlanStep> steps;
  std::vector<PlanBinding> inputs;
  std::vector<PlanBinding> outputs;
  std::vector<PlanBinding> parameters;
  std::string constantData;
  /// One per buffer; meaningful for arena buffers a step or binding uses (a view has its
  /// owner's).
  std::vector<LiveRange> liveRanges;
  ArenaTimeline timeline;
  /// The kernel table the steps were resolved against.
  const kernels::KernelTable *kernels = nullptr;
};

} // namespace memc::runtime

#endif // MEMC_RUNTIME_PLAN_LOADEDPLAN_H
