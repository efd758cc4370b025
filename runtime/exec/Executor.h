//===- Executor.h - running a loaded plan on a device -------------*- C++ -*-===//
//
// The executor allocates exactly what the plan names, one arena of arena_bytes, one persistent
// region of persistent_bytes and the plan's constants, so the memory a program uses is the
// memory its plan promised. Then, per run:
//
//   executor->loadParameters(weights)   once: parameters into the persistent region
//   executor->bindInputs(arrays)        graph inputs, checked by name, dtype and shape
//   executor->run()                     every step in order; arena usage measured
//   executor->readOutputs(arrays)       graph outputs
//
// Inputs must be bound again before each run (the arena reuses their bytes), and outputs read
// before the next bindInputs (which may overwrite their bytes); the executor enforces both.
//
// The training loop pipelines its runs instead, so that the host never waits for a run it has
// nothing to do with:
//
//   executor->submit(arrays)            bind and enqueue a run, without waiting for it
//   executor->collect(arrays)           wait for the oldest submitted run; its outputs
//
// With up to pipelineDepth() runs submitted and not collected, the host prepares the next
// micro-batch while the device computes the current one. A plan whose inputs have staging
// buffers (runtime/plan/InputStaging.h) has them uploaded from host slots (the device's pinned
// memory) on a copy stream of their own while the run before computes; the run then copies them
// into the arena on the device. Outputs are copied into host slots at the end of each run, so
// collect waits for that run alone.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_EXEC_EXECUTOR_H
#define MEMC_RUNTIME_EXEC_EXECUTOR_H

#include "runtime/device/Device.h"
#include "runtime/exec/ArenaUsage.h"
#include "runtime/exec/ExecutionStats.h"
#include "runtime/io/HostArray.h"
#include "runtime/plan/LoadedPlan.h"

#include <chrono>
#include <memory>
#include <string>

namespace memc::runtime {

class SafetensorsFile;

struct ExecutorOptions {
  /// Time every step (synchronizing the device after each).
  bool timeSteps = false;
  /// Time every step from the stream's marks (--profile), without waiting after each.
  bool profile = false;
  /// The ranks (a data-parallel program), on host memory: which shard of a ZeRO stage 3
  /// parameter this process loads, and the gathering of shards for --save; null for one
  /// process.
  kernels::Collectives *collectives = nullptr;
  /// What the plan's collective steps call, on the device's memory and stream, where the device
  /// has collectives of its own (NCCL for CUDA ranks); null: `collectives`.
  kernels::Collectives *deviceCollectives = nullptr;
};

class Executor {
public:
  /// Allocates the plan's regions on `device` (which must outlive the executor), zeroes the
  /// persistent region and uploads the constants. `plan` must have been loaded against
  /// device.kernels(). Returns null with a message.
  static std::unique_ptr<Executor> create(std::unique_ptr<LoadedPlan> plan, Device &device,
                                          const ExecutorOptions &options, std::string &error);

  const LoadedPlan &plan() const { return *loaded; }

  /// Loads every parameter binding from the tensor named by its source. Checks all of them
  /// first (present, same dtype and shape) and names every mismatch. A ZeRO stage 3 shard takes
  /// this rank's slice of its whole tensor.
  bool loadParameters(const SafetensorsFile &weights, std::string &error);
  /// loadParameters' checks alone, before create: a plan whose weights are not in the file is
  /// refused before its regions are allocated and zeroed.
  static bool checkParameters(const LoadedPlan &plan, const SafetensorsFile &weights,
                              std::string &error);

  /// Uploads the graph inputs. `arrays` must name exactly the plan's inputs with their dtypes
  /// and shapes; otherwise nothing is uploaded and `error` lists every missing, unexpected and
  /// mismatched array.
  bool bindInputs(const NamedArrays &arrays, std::string &error);

  /// Runs the schedule. Needs bound inputs and, if the plan has parameters, loaded parameters.
  bool run(std::string &error);

  /// Checks `arrays` as bindInputs does and enqueues a run on them (the file comment). Needs
  /// loaded parameters and fewer than pipelineDepth() runs in flight. The arrays may be freed
  /// once it returns.
  bool submit(const NamedArrays &arrays, std::string &error);
  /// Waits for the oldest submitted run and gives its graph outputs, in the plan's order; its
  /// failure names the step. stats() are then that run's.
  bool collect(NamedArrays &outputs, std::string &error);
  /// Runs submitted and not collected.
  size_t runsInFlight() const { return submitted - collected; }
  /// How many runs may be in flight: two, or one where each run's steps are timed (the marks
  /// and the time of one run must not mix with the next's).
  size_t pipelineDepth() const { return options.timeSteps || options.profile ? 1 : 2; }

  /// The current values of every parameter binding (parameters, buffers, optimizer state),
  /// named after the bindings: what training has made of them, as this process holds them
  /// (a ZeRO stage 3 parameter as this rank's shard).
  bool readParameters(NamedArrays &arrays, std::string &error);
  /// The same with every ZeRO stage 3 shard gathered whole over the ranks (a collective: every
  /// rank calls it): the model as --save writes it.
  bool readWholeParameters(NamedArrays &arrays, std::string &error);
  /// Those of them that `other` binds by name too (the evaluation plan's weights and buffers,
  /// without the training's optimizer state), gathered whole.
  bool readParametersOf(const LoadedPlan &other, NamedArrays &arrays, std::string &error);

  /// Uploads every parameter binding of this plan from the array of its name in `values` (another
  /// executor's readParameters: the evaluation plan takes the training plan's current weights).
  bool setParameters(const NamedArrays &values, std::string &error);

  /// Restores every parameter binding, optimizer state included, from a checkpoint written
  /// with readParameters' names. Checks all first and names every mismatch.
  bool restoreParameters(const SafetensorsFile &checkpoint, std::string &error);

  /// The graph outputs of the last run, in the plan's order.
  bool readOutputs(NamedArrays &arrays, std::string &error);

  const ExecutionStats &stats() const { return runStats; }

private:
  Executor(std::unique_ptr<LoadedPlan> plan, Device &device, const ExecutorOptions &options);
  bool allocateRegions(std::string &error);
  /// Copies the bindings' buffers to the host; with `whole`, ZeRO stage 3 shards are gathered
  /// from every rank into their whole tensors.
  bool readBindings(const std::vector<PlanBinding> &bindings, bool whole, NamedArrays &arrays,
                    std::string &error);
  /// Replaces `array`, this rank's shard of `binding`, with the whole tensor from every rank's.
  bool gatherWhole(const PlanBinding &binding, HostArray &array, std::string &error);
  void buildCalls();
  char *address(const PlanBuffer &buffer) const;
  /// Host bytes bound for one plan buffer.
  struct Upload {
    uint32_t buffer;
    const void *data;
    size_t size;
  };
  /// The uploads putting `weights` into `plan`'s parameters; false naming every mismatch.
  /// Rank `rank`'s slices of ZeRO stage 3 shards.
  static bool matchParameters(const LoadedPlan &plan, const SafetensorsFile &weights, int rank,
                              std::vector<Upload> &loads, std::string &error);
  /// Copies every upload into its buffer and waits until all have arrived.
  bool upload(const std::vector<Upload> &uploads, std::string &error);
  /// bindInputs' checks: the uploads putting `arrays` into the inputs, or false naming every
  /// mismatch.
  bool matchInputs(const NamedArrays &arrays, std::vector<Upload> &uploads, std::string &error);
  /// False (saying so) while submitted runs are not collected: their work is still queued.
  bool idle(std::string &error) const;
  /// Enqueues every step, measuring the arena as the schedule goes.
  bool launchSteps(std::string &error);
  /// A failure the device reported only when waited for, naming its step.
  bool takeLateFailure(std::string &error);
  /// After a run has finished: its time and, when profiling, its steps' times and the workers'.
  void recordTimes(std::chrono::steady_clock::time_point start);
  /// submit's host memory and copy stream, made at the first submit.
  bool preparePipeline(std::string &error);
  /// submit's inputs into the run's slot and their staging buffers (on the copy stream), and
  /// from there into the arena (on the compute stream); inputs without staging directly.
  bool stageInputs(const std::vector<Upload> &uploads, size_t slot, std::string &error);

  std::unique_ptr<LoadedPlan> loaded;
  Device &device;
  ExecutorOptions options;
  DeviceMemory arena;
  DeviceMemory persistent;
  DeviceMemory host;
  DeviceMemory constants;
  /// The scalar graph inputs of the run being launched, in host memory too: what the calls'
  /// TensorView::hostData points at (rewritten by bindInputs and submit before they launch).
  std::vector<uint8_t> hostScalars;
  /// Where each input's copy lies in hostScalars; -1 for inputs larger than a scalar.
  std::vector<int64_t> hostScalarOffsets;
  /// Copies the scalar inputs among `uploads` (one per input, in the plan's order) into
  /// hostScalars.
  void keepHostScalars(const std::vector<Upload> &uploads);
  /// submit's host slots, one per run in flight: the staged inputs, then the outputs.
  DeviceMemory runSlots;
  uint64_t slotBytes = 0;
  /// Where each input (staged ones) and output lies in a slot.
  std::vector<uint64_t> inputSlotOffsets, outputSlotOffsets;
  /// Declared after the regions so that they go first: their work on them finishes before they
  /// are freed (a run that failed midway may leave copies and kernels queued).
  std::unique_ptr<Stream> stream;
  /// Uploads staged inputs while `stream` computes (made by the first submit of a plan that
  /// stages).
  std::unique_ptr<Stream> copyStream;
  /// Each slot's run: when it was submitted, and the point where it and its outputs' copy are
  /// done.
  struct RunEvents {
    std::unique_ptr<Event> finished;
    std::chrono::steady_clock::time_point start;
  };
  std::vector<RunEvents> runEvents;
  /// The last run has copied its staged inputs into the arena: the next upload may overwrite them.
  std::unique_ptr<Event> stagingRead;
  size_t submitted = 0, collected = 0;
  /// One prepared call per step: tensors point into the regions, which never move.
  std::vector<kernels::KernelCall> calls;
  ArenaUsage arenaUsage;
  ExecutionStats runStats;
  bool parametersLoaded = false;
  bool inputsBound = false;
  bool outputsReady = false;
};

} // namespace memc::runtime

#endif // MEMC_RUNTIME_EXEC_EXECUTOR_H
