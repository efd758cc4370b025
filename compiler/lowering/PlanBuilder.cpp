//===- PlanBuilder.cpp - memc IR -> execution plan ------------------------===//
//
// 1. Storage: every SSA value gets a plan buffer. Graph inputs and op results live in the arena,
//    parameters in the persistent region, constants in the plan's constant data. A reshape's
//    result aliases its operand: same bytes, another shape, no step.
// 2. Schedule: ops become steps in a memory-aware topological order (compiler/planner).
// 3. Live ranges: an arena allocation lives from the step that writes it to its last reader
//    (aliases included); graph inputs from the start, graph outputs to the end.
// 4. Workspace: a step whose kernel on the plan's target needs scratch gets an arena buffer of
//    that size, live at the step alone (the target's rule sizes it, kernels/KernelTargets.h,
//    runtime/plan/StepWorkspace.h).
// 5. Offsets: the arena planner packs the allocations, taking in-place reuse for elementwise ops
//    whose operand dies where their result is born.
// 6. Staging (PlanOptions::stageInputs): each input gets a persistent buffer the next
//    micro-batch is uploaded into (runtime/plan/InputStaging.h).
//
//===----------------------------------------------------------------------===//
#include "compiler/lowering/PlanBuilder.h"
#include "compiler/lowering/BufferCategories.h"
#include "compiler/planner/ArenaPlanner.h"
#include "compiler/planner/Assignment.h"
#include "compiler/planner/MemoryScheduler.h"
#include "compiler/training/TrainStepSignature.h"
#include "dialects/memc/CostModel.h"
#include "dialects/memc/ElementTypes.h"
#include "dialects/memc/MemcDialect.h"
#include "kernels/KernelTargets.h"
#include "kernels/Tf32.h"
#include "runtime/plan/ArenaLifetimes.h"
#include "runtime/plan/InputStaging.h"
#include "runtime/plan/PlanFormat.h"
#include "runtime/plan/StepWorkspace.h"
#include "runtime/support/Bytes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Endian.h"

#include <map>

using namespace mlir;

namespace memc {

Value allocationRoot(Value value) {
  while (auto reshape = value.getDefiningOp<ReshapeOp>())
    value = reshape.getInput();
  return value;
}

namespace {

FailureOr<plan::DType> planDType(Type type, Location loc) {
  if (std::optional<kernels::DType> dtype = dtypeOf(type))
    return static_cast<plan::DType>(*dtype);
  return emitError(loc) << "no plan element type for " << getElementTypeOrSelf(type);
}

uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

/// Elementwise ops whose kernels may write their result over a same-typed operand (bias_gelu's
/// read element i of their data operands before writing element i; the bias is never that type),
/// and all_reduce, which reduces its buffer in place.
bool supportsInPlace(Operation *op) {
  return (op->hasTrait<OpTrait::Elementwise>() && !isa<CastOp, DropoutOp>(op)) ||
         isa<BiasGeluOp, BiasGeluGradOp, AllReduceOp>(op);
}

/// Little-endian bytes of a constant, as kernels read them (i1 as one byte per element).
/// The most constant bytes a plan carries, well inside protobuf's 2 GiB message limit.
constexpr uint64_t kMaxConstantBytes = uint64_t(1) << 30;

std::string constantBytes(DenseElementsAttr attr) {
  std::string bytes;
  Type element = attr.getElementType();
  int64_t count = attr.getNumElements();
  auto append = [&](uint64_t bits, unsigned width) {
    for (unsigned i = 0; i < width; ++i)
      bytes.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  };
  // planDType checked that the type has a dtype.
  unsigned width = kernels::dtypeSize(*dtypeOf(element));
  if (isa<FloatType>(element)) {
    if (attr.isSplat()) {
      uint64_t bits = attr.getSplatValue<APFloat>().bitcastToAPInt().getZExtValue();
      for (int64_t i = 0; i < count; ++i)
        append(bits, width);
    } else {
      for (const APFloat &value : attr.getValues<APFloat>())
        append(value.bitcastToAPInt().getZExtValue(), width);
    }
    return bytes;
  }
  if (attr.isSplat()) {
    uint64_t bits = attr.getSplatValue<APInt>().getZExtValue();
    for (int64_t i = 0; i < count; ++i)
      append(bits, width);
  } else {
    for (const APInt &value : attr.getValues<APInt>())
      append(value.getZExtValue(), width);
  }
  return bytes;
}

LogicalResult addAttribute(plan::Step &step, StringRef name, Attribute value, Operation *op) {
  plan::Attribute *out = step.add_attributes();
  out->set_name(name.str());
  if (auto boolean = dyn_cast<BoolAttr>(value))
    out->set_i(boolean.getValue());
  else if (isa<UnitAttr>(value)) // a flag that is present
    out->set_i(1);
  else if (auto integer = dyn_cast<IntegerAttr>(value))
    out->set_i(integer.getInt());
  else if (auto real = dyn_cast<FloatAttr>(value))
    out->set_f(real.getValueAsDouble());
  else if (auto ints = dyn_cast<DenseI64ArrayAttr>(value))
    for (int64_t v : ints.asArrayRef())
      out->mutable_ints()->add_values(v);
  else if (auto text = dyn_cast<StringAttr>(value))
    out->set_s(text.str());
  else
    return op->emitError("attribute '") << name << "' has no plan representation: " << value;
  return success();
}

/// The most bytes live at one step, where an in-place pair the planner took counts once at the
/// step where one dies and the other is born: the bound for a plan with those in-place
/// decisions (planner::lowerBound counts both).
uint64_t inPlaceLowerBound(const std::vector<planner::BufferRequest> &requests,
                           const planner::Assignment &assignment) {
  std::map<int64_t, int64_t> delta; // bytes born (+) and freed after (-) each step
  for (const planner::BufferRequest &request : requests) {
    int64_t bytes = planner::alignTo(request.size, plan::kPlanAlignment);
    delta[request.firstStep] += bytes;
    delta[request.lastStep + 1] -= bytes;
  }
  for (size_t target = 0; target < assignment.inPlaceSource.size(); ++target) {
    int32_t source = assignment.inPlaceSource[target];
    if (source < 0)
      continue;
    // The shared step is the target's first: both are counted there, the bytes once.
    int64_t shared = std::min(planner::alignTo(requests[source].size, plan::kPlanAlignment),
                              planner::alignTo(requests[target].size, plan::kPlanAlignment));
    delta[requests[target].firstStep] -= shared;
    delta[requests[target].firstStep + 1] += shared;
  }
  int64_t live = 0, peak = 0;
  for (auto &[step, change] : delta) {
    live += change;
    peak = std::max(peak, live);
  }
  return static_cast<uint64_t>(peak);
}

class PlanBuilder {
public:
  PlanBuilder(func::FuncOp function, const PlanOptions &options, plan::Plan &result)
      : function(function), options(options), result(result) {}
  LogicalResult build(PlanSummary &summary);

private:
  LogicalResult findUpdates();
  LogicalResult assignStorage();
  uint32_t addBuffer(Value value, plan::Region region, const std::string &name);
  void scheduleSteps(PlanSummary &summary);
  LogicalResult emitSteps();
  LogicalResult addWorkspaces(PlanSummary &summary);
  LogicalResult placeArena(PlanSummary &summary);
  void bindInterface();

  func::FuncOp function;
  const PlanOptions &options;
  plan::Plan &result;
  /// Plan buffer of each value; reshape results get buffers of their own that alias their
  /// operand's allocation.
  llvm::DenseMap<Value, uint32_t> bufferOf;
  /// For every arena buffer, the buffer that owns its bytes (itself unless an alias).
  std::vector<uint32_t> allocationOf;
  std::vector<Operation *> stepOps;
  uint64_t constantBytesUsed = 0;
  /// Training steps: results marked `memc.updates = NAME` and the argument each overwrites.
  llvm::DenseMap<Value, BlockArgument> updatedArgument;
  llvm::DenseMap<Value, plan::Category> categories;
};

uint32_t PlanBuilder::addBuffer(Value value, plan::Region region, const std::string &name) {
  uint32_t index = result.buffers_size();
  plan::Buffer *buffer = result.add_buffers();
  auto type = cast<RankedTensorType>(value.getType());
  buffer->set_dtype(*planDType(type, value.getLoc()));
  for (int64_t dim : type.getShape())
    buffer->add_shape(dim);
  buffer->set_region(region);
  buffer->set_size_bytes(storageBytes(type));
  buffer->set_name(name);
  buffer->set_category(categories.lookup(value));
  bufferOf[value] = index;
  allocationOf.push_back(index);
  return index;
}

LogicalResult PlanBuilder::findUpdates() {
  llvm::StringMap<BlockArgument> parameters;
  for (BlockArgument argument : function.getArguments())
    if (auto name = function.getArgAttrOfType<StringAttr>(argument.getArgNumber(), kParamNameAttr))
      parameters[name.getValue()] = argument;
  Operation *terminator = function.getBody().front().getTerminator();
  for (auto [index, value] : llvm::enumerate(terminator->getOperands())) {
    auto name = function.getResultAttrOfType<StringAttr>(index, kUpdatesAttr);
    if (!name)
      continue;
    BlockArgument argument = parameters.lookup(name.getValue());
    if (!argument || argument.getType() != value.getType())
      return function.emitError("result ")
             << index << " updates '" << name.getValue() << "', which is no parameter of its type";
    Operation *producer = value.getDefiningOp();
    if (value == argument)
      continue; // unchanged
    if (!producer || isa<ConstantOp, ReshapeOp>(producer) ||
        !updatedArgument.try_emplace(value, argument).second)
      return function.emitError("result ")
             << index << " ('" << name.getValue() << "') must be computed by a step of its own";
  }
  return success();
}

LogicalResult PlanBuilder::assignStorage() {
  if (failed(findUpdates()))
    return failure();
  uint64_t persistent = 0, host = 0;
  const kernels::Target *target = kernels::findTarget(options.target);
  if (!target)
    return function.emitError("no kernels for target '") << options.target << "'";
  const uint64_t constantAlignment = target->constantAlignment;
  for (BlockArgument argument : function.getArguments()) {
    if (failed(planDType(argument.getType(), argument.getLoc())))
      return failure();
    unsigned index = argument.getArgNumber();
    if (auto name = function.getArgAttrOfType<StringAttr>(index, kParamNameAttr)) {
      // Offloaded model state (TrainStepOptions::offloadOptimizer) lives in host memory.
      const bool offloaded = function.getArgAttr(index, kOffloadedAttr) != nullptr;
      uint64_t &end = offloaded ? host : persistent;
      uint32_t buffer = addBuffer(argument, offloaded ? plan::HOST : plan::PERSISTENT, name.str());
      result.mutable_buffers(buffer)->set_offset(end);
      end = alignUp(end + storageBytes(argument.getType()), plan::kPlanAlignment);
    } else {
      auto input = function.getArgAttrOfType<StringAttr>(index, kInputNameAttr);
      addBuffer(argument, plan::ARENA, input ? input.str() : "input" + std::to_string(index));
    }
  }
  result.set_persistent_bytes(persistent);
  const llvm::DenseMap<Value, std::string> descriptions = describedValues(function);

  for (Operation &op : function.getBody().front().without_terminator()) {
    for (Value result : op.getResults())
      if (failed(planDType(result.getType(), op.getLoc())))
        return failure();
    std::string name = locationName(op.getLoc());
    if (auto constant = dyn_cast<ConstantOp>(op)) {
      auto attr = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!attr)
        return constant.emitError("only dense constants can be planned");
      // The plan carries its constants in one protobuf field (2 GiB at most): a splat of 2^40
      // elements (ConstantOfShape) must not be written out to find that out.
      uint64_t size = storageBytes(attr.getType());
      if (size > kMaxConstantBytes || constantBytesUsed + size > kMaxConstantBytes)
        return constant.emitError("a constant of " + runtime::formatBytes(size) + " (" +
                                  std::to_string(attr.getNumElements()) +
                                  " elements) takes the program's constants past " +
                                  runtime::formatBytes(kMaxConstantBytes) +
                                  "; compute it in the model instead of folding it");
      uint32_t buffer = addBuffer(constant, plan::CONSTANT, name);
      std::string bytes = constantBytes(attr);
      std::string *data = result.mutable_constant_data();
      data->resize(alignUp(data->size(), constantAlignment), '\0');
      result.mutable_buffers(buffer)->set_offset(data->size());
      data->append(bytes);
      constantBytesUsed += bytes.size();
      continue;
    }
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      Value input = reshape.getInput();
      const plan::Buffer &source = result.buffers(bufferOf[input]);
      uint32_t buffer = addBuffer(reshape, source.region(), name);
      result.mutable_buffers(buffer)->set_offset(source.offset());
      allocationOf[buffer] = allocationOf[bufferOf[input]];
      result.mutable_buffers(buffer)->set_alias_of(allocationOf[buffer]);
      continue;
    }
    for (Value value : op.getResults()) {
      // A parameter's or optimizer state's new value is written over the old one.
      if (BlockArgument updated = updatedArgument.lookup(value)) {
        const plan::Buffer &target = result.buffers(bufferOf[updated]);
        uint32_t buffer = addBuffer(value, target.region(), target.name());
        result.mutable_buffers(buffer)->set_offset(target.offset());
        continue;
      }
      // An offloaded activation has a host buffer of its own (OffloadActivations.h).
      if (isa<OffloadOp>(op)) {
        uint32_t buffer = addBuffer(value, plan::HOST, name);
        result.mutable_buffers(buffer)->set_offset(host);
        host = alignUp(host + storageBytes(value.getType()), plan::kPlanAlignment);
        continue;
      }
      auto described = descriptions.find(value);
      addBuffer(value, plan::ARENA, described != descriptions.end() ? described->second : name);
    }
    stepOps.push_back(&op);
  }
  result.set_host_bytes(host);
  return success();
}

void PlanBuilder::scheduleSteps(PlanSummary &summary) {
  // The scheduler sees the steps and the arena allocations they read and write; parameters and
  // constants are not its concern. An offloaded activation (a host buffer) is a value of no
  // arena bytes, so its reload follows its offload.
  planner::ScheduleGraph graph;
  llvm::DenseMap<Value, int32_t> ids;
  llvm::DenseSet<Value> returned;
  for (Value value : function.getBody().front().getTerminator()->getOperands())
    returned.insert(allocationRoot(value));
  auto idOf = [&](Value root) {
    auto [it, inserted] = ids.try_emplace(root, 0);
    const bool onHost = result.buffers(bufferOf[root]).region() == plan::HOST;
    if (inserted)
      it->second =
          graph.addValue(onHost ? 0 : storageBytes(root.getType()), returned.contains(root));
    return it->second;
  };
  std::vector<std::vector<int32_t>> inputs(stepOps.size()), outputs(stepOps.size());
  llvm::DenseMap<Operation *, size_t> nodeOf;
  for (auto [node, op] : llvm::enumerate(stepOps)) {
    nodeOf[op] = node;
    for (Value operand : op->getOperands()) {
      Value root = allocationRoot(operand);
      if (result.buffers(bufferOf[root]).region() == plan::ARENA ||
          root.getDefiningOp<OffloadOp>())
        inputs[node].push_back(idOf(root));
    }
    for (Value value : op->getResults())
      if (!updatedArgument.count(value))
        outputs[node].push_back(idOf(value));
  }
  // A step that overwrites an argument runs after every other step reading it, and before every
  // step reading what it wrote (a kept weight copy, which the forward reads): zero-byte tokens
  // order them, since neither buffer is in the arena the scheduler sees.
  for (auto [value, argument] : updatedArgument) {
    size_t writer = nodeOf[value.getDefiningOp()];
    for (auto [node, op] : llvm::enumerate(stepOps)) {
      auto readsRoot = [&](Value root) {
        return llvm::any_of(op->getOperands(),
                            [&](Value operand) { return allocationRoot(operand) == root; });
      };
      if (node == writer)
        continue;
      if (readsRoot(argument)) {
        int32_t token = graph.addValue(0);
        outputs[node].push_back(token);
        inputs[writer].push_back(token);
      }
      if (readsRoot(value)) {
        int32_t token = graph.addValue(0);
        outputs[writer].push_back(token);
        inputs[node].push_back(token);
      }
    }
  }
  for (size_t node = 0; node < stepOps.size(); ++node)
    graph.addNode(std::move(inputs[node]), std::move(outputs[node]));
  planner::Schedule schedule = planner::scheduleForMemory(graph);
  summary.schedulePeakBytes = schedule.peakBytes;
  summary.originalOrderPeakBytes = schedule.baselinePeakBytes;
  std::vector<Operation *> ordered;
  for (int32_t index : schedule.order)
    ordered.push_back(stepOps[index]);
  stepOps = std::move(ordered);
}

namespace {

/// The part of a training step `op` belongs to, for the profiler; an inference program's steps
/// (no loss) are all forward.
plan::Phase phaseOf(Operation *op, const llvm::DenseSet<Operation *> &forward) {
  if (forward.empty() || forward.contains(op))
    return plan::FORWARD;
  if (isRecomputed(op))
    return plan::RECOMPUTE;
  if (isa<SgdUpdateOp, AdamWUpdateOp, AdamW8bitUpdateOp, LossScaleUpdateOp>(op))
    return plan::OPTIMIZER;
  return plan::BACKWARD;
}

} // namespace

LogicalResult PlanBuilder::emitSteps() {
  const llvm::DenseSet<Operation *> forward = lossAncestors(function);
  for (Operation *op : stepOps) {
    plan::Step *step = result.add_steps();
    step->set_kernel(op->getName().stripDialect().str());
    step->set_location(locationName(op->getLoc()));
    OpCost cost = estimateOpCost(op);
    step->set_flops(cost.flops);
    step->set_bytes(cost.bytes);
    step->set_phase(phaseOf(op, forward));
    for (Value operand : op->getOperands())
      step->add_inputs(bufferOf[operand]);
    for (Value result : op->getResults())
      step->add_outputs(bufferOf[result]);
    for (NamedAttribute attr : op->getAttrDictionary()) {
      // How many operands each optional operand group has is the IR's bookkeeping: a kernel
      // tells its optional operands apart by their types (flash_attention's float mask and i64
      // salt, kernels/ops/CallChecks.h).
      if (op->hasTrait<OpTrait::AttrSizedOperandSegments>() &&
          attr.getName() == "operandSegmentSizes")
        continue;
      if (failed(addAttribute(*step, attr.getName(), attr.getValue(), op)))
        return failure();
    }
    if (options.allowTf32 && kernels::takesTf32(step->kernel())) {
      plan::Attribute *tf32 = step->add_attributes();
      tf32->set_name(kernels::kAllowTf32Attribute);
      tf32->set_i(1);
    }
  }
  return success();
}

LogicalResult PlanBuilder::addWorkspaces(PlanSummary &summary) {
  // The target's contracts: the checks every device shares and the target's workspace rules,
  // the same entries its device's kernel table has (the loader checks the sizes against it).
  const kernels::KernelTable *table = kernels::targetContracts(options.target);
  if (!table)
    return function.emitError("no kernels for target '") << options.target << "'";
  // Every op the target lacks, named at once: the user learns now, not when the program loads.
  std::map<std::string, std::string> missing; // kernel -> where it is first used
  for (const plan::Step &step : result.steps())
    if (!table->count(step.kernel()))
      missing.emplace(step.kernel(), step.location());
  if (!missing.empty()) {
    std::string names;
    for (const auto &[kernel, location] : missing)
      names += (names.empty() ? "" : ", ") + kernel +
               (location.empty() ? "" : " (first at '" + location + "')");
    return function.emitError("target '")
           << options.target << "' has no kernel for " << missing.size()
           << (missing.size() == 1 ? " op" : " ops") << " of this program: " << names
           << " (target 'cpu' has them all)";
  }
  for (auto [index, op] : llvm::enumerate(stepOps)) {
    uint64_t bytes = 0;
    std::string error;
    if (!runtime::stepWorkspaceBytes(result, result.steps(index), *table, bytes, error))
      // The IR verified, so this is a limit of the target's kernels (matmul dimensions past
      // 2^31 - 1 after a huge --input-shape), which the user's shapes reach.
      return op->emitError("the op cannot run on target '")
             << options.target << "' with these shapes: " << error;
    if (bytes == 0)
      continue;
    plan::Step *step = result.mutable_steps(index);
    uint32_t buffer = result.buffers_size();
    plan::Buffer *workspace = result.add_buffers();
    workspace->set_dtype(plan::BOOL); // one-byte elements: shape [bytes]
    workspace->add_shape(static_cast<int64_t>(bytes));
    workspace->set_region(plan::ARENA);
    workspace->set_category(plan::WORKSPACE);
    workspace->set_size_bytes(bytes);
    workspace->set_name((step->location().empty() ? step->kernel() : step->location()) +
                        ".workspace");
    allocationOf.push_back(buffer);
    step->set_workspace(buffer);
    summary.workspacePeakBytes = std::max(summary.workspacePeakBytes, bytes);
    summary.workspaceOf[op] = bytes;
  }
  return success();
}

LogicalResult PlanBuilder::placeArena(PlanSummary &summary) {
  // One allocation per arena buffer that owns its bytes; aliases extend their owner's range.
  runtime::ArenaLifetimes lifetimes(result);
  std::vector<int64_t> &first = lifetimes.first, &last = lifetimes.last;

  std::vector<planner::BufferRequest> requests;
  std::vector<uint32_t> requestBuffer;
  llvm::DenseMap<uint32_t, size_t> requestOf;
  for (int i = 0; i < result.buffers_size(); ++i) {
    if (result.buffers(i).region() != plan::ARENA || allocationOf[i] != static_cast<uint32_t>(i))
      continue;
    if (first[i] < 0) // never touched: an unused graph input still needs a place to land
      first[i] = last[i] = 0;
    requestOf[i] = requests.size();
    requests.push_back({result.buffers(i).size_bytes(), first[i], last[i]});
    requestBuffer.push_back(i);
  }
  // In place: an elementwise step may write its result over an operand that dies there.
  std::vector<planner::InPlaceHint> hints;
  for (auto [index, op] : llvm::enumerate(stepOps)) {
    if (!supportsInPlace(op) || op->getNumResults() != 1)
      continue;
    uint32_t written = bufferOf[op->getResult(0)];
    for (Value operand : op->getOperands()) {
      uint32_t buffer = bufferOf[operand];
      uint32_t owner = allocationOf[buffer];
      if (result.buffers(buffer).region() != plan::ARENA || owner != buffer ||
          operand.getType() != op->getResult(0).getType() ||
          last[owner] != static_cast<int64_t>(index))
        continue;
      hints.push_back(
          {static_cast<int32_t>(requestOf[owner]), static_cast<int32_t>(requestOf[written])});
      break;
    }
  }
  planner::PlanOptions options;
  options.alignment = plan::kPlanAlignment;
  options.inPlaceHints = hints;
  planner::Assignment assignment = planner::planArena(requests, options);
  std::string error;
  if (!planner::verifyAssignment(requests, assignment, error, plan::kPlanAlignment, hints))
    return function.emitError("internal: the arena plan is invalid: ") << error;
  for (size_t r = 0; r < requests.size(); ++r)
    result.mutable_buffers(requestBuffer[r])->set_offset(assignment.offsets[r]);
  for (int i = 0; i < result.buffers_size(); ++i)
    if (result.buffers(i).region() == plan::ARENA && allocationOf[i] != static_cast<uint32_t>(i))
      result.mutable_buffers(i)->set_offset(result.buffers(allocationOf[i]).offset());
  // A step is in place when the planner gave its result the bytes of a dying operand.
  std::vector<int64_t> producerStep(result.buffers_size(), -1);
  for (auto [index, step] : llvm::enumerate(result.steps()))
    for (uint32_t output : step.outputs())
      producerStep[output] = index;
  for (size_t r = 0; r < assignment.inPlaceSource.size(); ++r) {
    int64_t step = producerStep[requestBuffer[r]];
    if (assignment.inPlaceSource[r] >= 0 && step >= 0 && !result.steps(step).in_place()) {
      result.mutable_steps(step)->set_in_place(true);
      ++summary.inPlaceSteps;
    }
  }
  // Updates write parameters and optimizer state over the values they read.
  for (plan::Step &step : *result.mutable_steps())
    for (uint32_t output : step.outputs())
      for (uint32_t input : step.inputs())
        if ((result.buffers(output).region() == plan::PERSISTENT ||
             result.buffers(output).region() == plan::HOST) &&
            result.buffers(input).region() == result.buffers(output).region() &&
            result.buffers(input).offset() == result.buffers(output).offset() && !step.in_place()) {
          step.set_in_place(true);
          ++summary.inPlaceSteps;
        }
  result.set_arena_bytes(assignment.arenaBytes);
  result.set_arena_lower_bound_bytes(inPlaceLowerBound(requests, assignment));
  summary.strategy = assignment.strategy;
  summary.arenaRequests = std::move(requests);
  summary.inPlaceHints = std::move(hints);
  return success();
}

void PlanBuilder::bindInterface() {
  for (BlockArgument argument : function.getArguments()) {
    unsigned index = argument.getArgNumber();
    plan::Binding *binding;
    if (auto name = function.getArgAttrOfType<StringAttr>(index, kParamNameAttr)) {
      binding = result.add_parameters();
      binding->set_name(name.str());
      auto source = function.getArgAttrOfType<StringAttr>(index, kParamSourceAttr);
      binding->set_source(source ? source.str() : name.str());
      binding->set_kind(argumentKind(function, index));
      if (auto whole = function.getArgAttrOfType<DenseI64ArrayAttr>(index, kShardOfAttr))
        for (int64_t dim : whole.asArrayRef())
          binding->add_shard_of(dim);
    } else {
      binding = result.add_inputs();
      binding->set_name(result.buffers(bufferOf[argument]).name());
    }
    binding->set_buffer(bufferOf[argument]);
  }
  for (auto [index, value] :
       llvm::enumerate(function.getBody().front().getTerminator()->getOperands())) {
    if (function.getResultAttr(index, kUpdatesAttr))
      continue; // written over its argument, not an output
    plan::Binding *binding = result.add_outputs();
    auto name = function.getResultAttrOfType<StringAttr>(index, kOutputNameAttr);
    if (!name) // a gradient is named after its parameter
      name = function.getResultAttrOfType<StringAttr>(index, kGradientOfAttr);
    binding->set_name(name ? name.str() : "output" + std::to_string(index));
    binding->set_buffer(bufferOf[value]);
  }
}

LogicalResult PlanBuilder::build(PlanSummary &summary) {
  result.set_format_version(plan::kPlanFormatVersion);
  result.set_target(options.target);
  result.set_alignment(plan::kPlanAlignment);
  categories = classifyValues(function);
  if (failed(assignStorage()))
    return failure();
  scheduleSteps(summary);
  if (failed(emitSteps()) || failed(addWorkspaces(summary)))
    return failure();
  // The bindings say which arena values are graph inputs and outputs: the arena needs them.
  bindInterface();
  if (failed(placeArena(summary)))
    return failure();
  if (options.stageInputs)
    plan::addInputStaging(result);
  summary.arenaBytes = result.arena_bytes();
  summary.arenaLowerBoundBytes = result.arena_lower_bound_bytes();
  summary.persistentBytes = result.persistent_bytes();
  summary.constantBytes = constantBytesUsed;
  summary.steps = result.steps_size();
  return success();
}

} // namespace

FailureOr<plan::Plan> buildPlan(func::FuncOp function, const std::string &modelName,
                                PlanSummary *summary, const PlanOptions &options) {
  plan::Plan plan;
  plan.set_model(modelName);
  PlanSummary local;
  if (failed(PlanBuilder(function, options, plan).build(summary ? *summary : local)))
    return failure();
  return plan;
}

} // namespace memc
