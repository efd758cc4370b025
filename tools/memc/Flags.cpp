//===- Flags.cpp - memc's command line ------------------------------------===//
//
// The flags in three groups (memc, training, memory), what each accepts, whether each applies
// to what memc was asked to do, and their mapping to memc::PipelineOptions.
//
//===----------------------------------------------------------------------===//
#include "tools/memc/Flags.h"

#include "kernels/Collectives.h"
#include "kernels/KernelTargets.h"
#include "kernels/ShapeRules.h"
#include "runtime/support/Bytes.h"
#include "runtime/support/NumberRange.h"
#include "runtime/support/ProgramFlags.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <unistd.h>

namespace cl = llvm::cl;

namespace {

/// A numeric flag's values: finite, and PyTorch's own ranges where it has them (lr, betas, eps,
/// weight decay), stricter where a value would be silently ignored (a clip norm of 0), is no
/// momentum (above 1) or could not finish (a step of 10^9 micro-batches).
struct RangedFlag {
  const cl::Option *flag;
  std::function<double()> value;
  memc::runtime::NumberRange range;
};
/// Every RangedOpt, in declaration order.
std::vector<RangedFlag> &rangedFlags() {
  static std::vector<RangedFlag> flags;
  return flags;
}
/// A numeric flag declared with its range, which checkFlagRanges enforces: a new numeric flag
/// is one declaration.
template <typename T> class RangedOpt : public cl::opt<T> {
public:
  template <typename... Modifiers>
  RangedOpt(memc::runtime::NumberRange range, const Modifiers &...modifiers)
      : cl::opt<T>(modifiers...) {
    rangedFlags().push_back({this, [this] { return double(this->getValue()); }, range});
  }
};
constexpr double kInf = std::numeric_limits<double>::infinity();

cl::OptionCategory memcCategory("memc options");
cl::opt<std::string> modelPath(cl::Positional, cl::desc("<model.onnx>"), cl::Required,
                               cl::cat(memcCategory));
cl::opt<std::string> outputPath("o", cl::desc("Output file (default: stdout)"),
                                cl::value_desc("file"), cl::init("-"), cl::cat(memcCategory));
using memc::CompileMode;
cl::opt<CompileMode>
    mode("mode", cl::desc("What to build (default: train when --loss is given, import otherwise)"),
         cl::init(CompileMode::Import),
         cl::values(clEnumValN(CompileMode::Import, "import", "print the model as memc IR"),
                    clEnumValN(CompileMode::Infer, "infer",
                               "an executable computing the model's outputs"),
                    clEnumValN(CompileMode::Train, "train", "an executable training the model")),
         cl::cat(memcCategory));
cl::opt<std::string> target("target",
                            cl::desc("The device kind the program runs on (plans record it and "
                                     "only its devices load them)"),
                            cl::init(memc::kernels::kCpuTarget), cl::cat(memcCategory));
cl::opt<bool> allowTf32("allow-tf32",
                        cl::desc("On a GPU, f32 matmuls and convolutions may multiply on TF32 "
                                 "tensor cores (10-bit mantissa products, f32 sums), as "
                                 "torch.backends.cuda.matmul.allow_tf32; the CPU computes f32"),
                        cl::cat(memcCategory));
cl::opt<std::string> weightsFrom(
    "weights-from",
    cl::desc("A Hugging Face checkpoint (a folder with model.safetensors or a sharded "
             "model.safetensors.index.json, or either file) whose tensors the parameters take, "
             "by state_dict name"),
    cl::cat(memcCategory));
cl::opt<std::string> weightsFromMap(
    "weights-from-map",
    cl::desc("--weights-from: a JSON object of renames, {\"checkpoint name\": \"model name\" or "
             "null to drop it}"),
    cl::cat(memcCategory));

cl::OptionCategory trainingCategory("memc training options");
cl::opt<std::string> loss("loss", cl::desc("Loss: cross_entropy or mse"),
                          cl::cat(trainingCategory));
cl::opt<std::string> lossInput("loss-input", cl::desc("Graph output the loss is computed from"),
                               cl::cat(trainingCategory));
cl::opt<std::string> labels("labels", cl::desc("Name of the labels input (default: labels)"),
                            cl::init("labels"), cl::cat(trainingCategory));
cl::opt<std::string> optimizer("optimizer",
                               cl::desc("sgd, adamw or adamw8bit (bitsandbytes' AdamW8bit: both "
                                        "moments in 8 bits, block-wise) (default: adamw)"),
                               cl::init("adamw"), cl::cat(trainingCategory));
RangedOpt<double> learningRate({0, kInf, false}, "lr", cl::desc("Learning rate (default: 0.001)"),
                               cl::init(1e-3), cl::cat(trainingCategory));
RangedOpt<double> momentum({0, 1}, "momentum", cl::desc("SGD momentum (default: 0)"), cl::init(0.0),
                           cl::cat(trainingCategory));
cl::opt<bool> nesterov("nesterov", cl::desc("SGD Nesterov momentum"), cl::cat(trainingCategory));
RangedOpt<double>
    weightDecay({0, kInf}, "weight-decay",
                cl::desc("Weight decay (default: torch.optim's, 0.01 for adamw, 0 for "
                         "sgd)"),
                cl::init(0.0), cl::cat(trainingCategory));
RangedOpt<double> beta1({0, 1, true, false}, "beta1", cl::desc("AdamW beta1 (default: 0.9)"),
                        cl::init(0.9), cl::cat(trainingCategory));
RangedOpt<double> beta2({0, 1, true, false}, "beta2", cl::desc("AdamW beta2 (default: 0.999)"),
                        cl::init(0.999), cl::cat(trainingCategory));
RangedOpt<double> epsilon({0, kInf, false}, "eps", cl::desc("AdamW epsilon (default: 1e-8)"),
                          cl::init(1e-8), cl::cat(trainingCategory));
RangedOpt<double> clipGradNorm({0, kInf, false}, "clip-grad-norm",
                               cl::desc("Clip the gradients' global norm to this (default: no "
                                        "clipping)"),
                               cl::init(0.0), cl::cat(trainingCategory));
cl::opt<bool> logGradNorm("log-grad-norm",
                          cl::desc("Compute the gradients' global norm each step for the log "
                                   "(on whenever --clip-grad-norm is given)"),
                          cl::cat(trainingCategory));
RangedOpt<int64_t> gradAccum({1, 65536, true, true, true}, "grad-accum",
                             cl::desc("Micro-batches per optimizer step (default: 1)"), cl::init(1),
                             cl::cat(trainingCategory));
RangedOpt<int64_t> worldSize({1, double(memc::kernels::kMaxWorldSize), true, true, true},
                             "world-size",
                             cl::desc("Data parallel: train on this many ranks under mpirun, each "
                                      "with its own micro-batches (default: 1)"),
                             cl::init(1), cl::cat(trainingCategory));
RangedOpt<int64_t> bucketCapMb({0, 1 << 20, true, true, true}, "bucket-cap-mb",
                               cl::desc("With --world-size, ZeRO stages 0 and 1: MiB of gradients "
                                        "one all-reduce carries, as DDP's bucket_cap_mb (default: "
                                        "25; 0: one all-reduce per gradient)"),
                               cl::init(25), cl::cat(trainingCategory));
RangedOpt<int64_t> zeroStage({0, 3, true, true, true}, "zero-stage",
                             cl::desc("With --world-size: what the ranks shard, as ZeRO (0: "
                                      "nothing; 1: the optimizer state; 2: also the gradients; "
                                      "3: also the parameters)"),
                             cl::init(0), cl::cat(trainingCategory));
enum class GradAccumMean { Tokens, MicroBatches };
cl::opt<GradAccumMean> gradAccumMean(
    "grad-accum-mean",
    cl::desc("What --grad-accum averages under cross_entropy (default: tokens)"),
    cl::init(GradAccumMean::Tokens),
    cl::values(clEnumValN(GradAccumMean::Tokens, "tokens",
                          "the loss over every counted label of the step's micro-batches, as "
                          "one bigger batch gives (labels at the ignored index do not count)"),
               clEnumValN(GradAccumMean::MicroBatches, "micro-batches",
                          "the mean of the micro-batches' mean losses (memc before issue 23)")),
    cl::cat(trainingCategory));
// Up to 2^32, far above any useful scale (GradScaler starts at 2^16).
RangedOpt<double> lossScale({0, 4294967296.0, false}, "loss-scale",
                            cl::desc("--precision fp16: a fixed loss scale instead of the dynamic "
                                     "one (default: dynamic, from 2^16)"),
                            cl::init(65536.0), cl::cat(trainingCategory));
RangedOpt<int64_t> lossScaleWindow({1, double(memc::kernels::kMaxLossScaleWindow), true, true,
                                    true},
                                   "loss-scale-window",
                                   cl::desc("--precision fp16: consecutive finite steps before the "
                                            "dynamic loss scale doubles (default: 2000)"),
                                   cl::init(2000), cl::cat(trainingCategory));
RangedOpt<int64_t> warmup({0, memc::runtime::kMaxFlagCount, true, true, true}, "warmup",
                          cl::desc("Linear learning-rate warmup steps (default: 0)"), cl::init(0),
                          cl::cat(trainingCategory));
RangedOpt<int64_t> decaySteps({0, memc::runtime::kMaxFlagCount, true, true, true}, "decay-steps",
                              cl::desc("Cosine decay steps after warmup (default: 0, a constant "
                                       "rate)"),
                              cl::init(0), cl::cat(trainingCategory));
cl::opt<std::string> offloadOptimizer(
    "offload-optimizer",
    cl::desc("none, or cpu: the optimizer state and the f32 master weights live in host memory "
             "and the update runs there (ZeRO-Offload); the budget bounds the device's bytes"),
    cl::init("none"), cl::cat(trainingCategory));
cl::list<std::string> freeze("freeze", cl::desc("Glob of parameters that do not train"),
                             cl::cat(trainingCategory));
cl::list<std::string> trainable("trainable", cl::desc("Glob of the only parameters that train"),
                                cl::cat(trainingCategory));
cl::list<std::string> noDecay("no-decay",
                              cl::desc("Glob of trained parameters without weight decay"),
                              cl::cat(trainingCategory));
cl::opt<bool> noDecayNormsAndBiases(
    "no-decay-norms-and-biases",
    cl::desc("No weight decay for biases and layer/RMS norm parameters (Hugging Face "
             "Trainer's groups)"),
    cl::cat(trainingCategory));
RangedOpt<int64_t> loraRank({0, double(int64_t{1} << 20), true, true, true}, "lora-rank",
                            cl::desc("Train PEFT's LoRA adapters of this rank on the "
                                     "--lora-targets weights, and nothing else (default: 0, "
                                     "no adapters)"),
                            cl::init(0), cl::cat(trainingCategory));
RangedOpt<double> loraAlpha({0, kInf, false}, "lora-alpha",
                            cl::desc("The adapters' scale is alpha / rank (default: the rank, "
                                     "a scale of 1)"),
                            cl::init(0.0), cl::cat(trainingCategory));
RangedOpt<double> loraDropout({0, 1, true, false}, "lora-dropout",
                              cl::desc("Dropout on the adapters' input (default: 0)"),
                              cl::init(0.0), cl::cat(trainingCategory));
cl::list<std::string> loraTargets("lora-targets", cl::CommaSeparated,
                                  cl::desc("Globs over module names (a weight's name less "
                                           "'.weight', or a dot-separated suffix of it, as "
                                           "PEFT's target_modules): q_proj,v_proj; or "
                                           "all-linear, every one but the LM head"),
                                  cl::cat(trainingCategory));
cl::opt<std::string> quantizeBase("quantize-base",
                                  cl::desc("none, or nf4: the frozen matmul weights (not the "
                                           "LM head) in QLoRA's 4-bit NormalFloat"),
                                  cl::init("none"), cl::cat(trainingCategory));
cl::opt<bool> noDoubleQuant("no-double-quant",
                            cl::desc("--quantize-base nf4: keep the f32 absmax (default: "
                                     "double quantization, 8-bit absmax)"),
                            cl::cat(trainingCategory));
RangedOpt<int64_t> seed({0, double(INT64_MAX), true, true, true}, "seed",
                        cl::desc("Seeds the values memc initializes (the LoRA A matrices; "
                                 "default: 0)"),
                        cl::init(0), cl::cat(trainingCategory));
cl::opt<bool> acceptFoldedExport(
    "accept-folded-export",
    cl::desc("Train a model that looks folded by torch.onnx.export's defaults (renamed, "
             "pre-transposed or split weights) as it is, instead of refusing it"),
    cl::cat(trainingCategory));
cl::OptionCategory memoryCategory("memc memory options");
cl::opt<std::string> vramBudget("vram-budget",
                                cl::desc("Device memory the program may use at its peak "
                                         "(e.g. 24GiB, 1.5GB, 512MiB)"),
                                cl::value_desc("size"), cl::cat(memoryCategory));
cl::opt<std::string> precision("precision",
                               cl::desc("What ops compute in: fp32, bf16 or fp16 (matmuls and "
                                        "convolutions in 16 bits, f32 master weights; fp16 "
                                        "training scales the loss; default: fp32)"),
                               cl::init("fp32"), cl::cat(memoryCategory));
cl::opt<memc::RematMode> rematMode(
    "remat", cl::desc("What to recompute in the backward instead of keeping it (default: auto)"),
    cl::init(memc::RematMode::Auto),
    cl::values(clEnumValN(memc::RematMode::Auto, "auto", "only as much as the budget needs"),
               clEnumValN(memc::RematMode::None, "none", "keep every activation"),
               clEnumValN(memc::RematMode::Full, "full", "keep only layer boundaries")),
    cl::cat(memoryCategory));
cl::opt<std::string> offloadActivations(
    "offload-activations",
    cl::desc("none, or cpu: every value a training step's backward reads goes to host memory "
             "after the forward's last use and comes back before the backward's first, instead "
             "of being kept on the device or recomputed"),
    cl::init("none"), cl::cat(memoryCategory));
cl::opt<memc::RematSolver> rematSolver(
    "remat-solver", cl::desc("How --remat auto decides (default: heuristic)"),
    cl::init(memc::RematSolver::Heuristic),
    cl::values(clEnumValN(memc::RematSolver::Heuristic, "heuristic",
                          "greedy, in well under a second"),
               clEnumValN(memc::RematSolver::Ilp, "ilp",
                          "integer program (COIN-OR CBC), the heuristic where it cannot solve")),
    cl::cat(memoryCategory));
RangedOpt<double> ilpTimeLimit({0, 1e6, false}, "ilp-time-limit",
                               cl::desc("Seconds the ILP solver may take (default: 20)"),
                               cl::init(20.0), cl::cat(memoryCategory));
enum class FuseAttention { Auto, Off };
cl::opt<FuseAttention> fuseAttention(
    "fuse-attention",
    cl::desc("Replace attention subgraphs with memc.flash_attention (default: auto)"),
    cl::init(FuseAttention::Auto),
    cl::values(clEnumValN(FuseAttention::Auto, "auto", "every attention the pattern matches"),
               clEnumValN(FuseAttention::Off, "off", "keep attention as exported")),
    cl::cat(memoryCategory));
enum class MaxPoolArgmax { Auto, On, Off };
cl::opt<MaxPoolArgmax> maxPoolArgmax(
    "max-pool-argmax",
    cl::desc("Train: max_pool saves a one-byte argmax per output for its gradient, instead of "
             "the gradient keeping the pool's input (default: auto)"),
    cl::init(MaxPoolArgmax::Auto),
    cl::values(clEnumValN(MaxPoolArgmax::Auto, "auto",
                          "on unless a --vram-budget or --remat full lets remat run"),
               clEnumValN(MaxPoolArgmax::On, "on", "windows of up to 256 taps"),
               clEnumValN(MaxPoolArgmax::Off, "off", "max_pool_grad searches the input again")),
    cl::cat(memoryCategory));
enum class FuseLoss { Auto, Off };
cl::opt<FuseLoss> fuseLoss(
    "fuse-loss",
    cl::desc("Train with cross_entropy: compute the LM head and the loss in chunks, without "
             "the logits (memc.linear_cross_entropy; default: auto)"),
    cl::init(FuseLoss::Auto),
    cl::values(clEnumValN(FuseLoss::Auto, "auto", "when nothing else reads the logits"),
               clEnumValN(FuseLoss::Off, "off", "keep the head product and cross_entropy")),
    cl::cat(memoryCategory));
cl::opt<bool> report("report", cl::desc("Print where the peak's bytes go"),
                     cl::cat(memoryCategory));
cl::opt<std::string> reportJson("report-json", cl::desc("Write the memory report as JSON"),
                                cl::value_desc("file"), cl::cat(memoryCategory));
cl::opt<std::string> reportSvg("report-svg",
                               cl::desc("Draw memory over the schedule, before and after remat"),
                               cl::value_desc("file"), cl::cat(memoryCategory));

cl::OptionCategory planningCategory("memc planning options (plans only, or chooses flags)");
cl::opt<bool> explainMemory(
    "explain-memory",
    cl::desc("Write no program: plan the training step once per rung of the memory ladder (fp32, "
             "16-bit, checkpointing, flash attention and the fused loss, 8-bit states, ZeRO, "
             "offload, QLoRA) and print each rung's peak, breakdown and flags"),
    cl::cat(planningCategory));
cl::list<int64_t> batchSweep("batch-sweep", cl::CommaSeparated,
                             cl::desc("--explain-memory: the peak at each of these micro-batches "
                                      "with the flags given (a model with a symbolic batch)"),
                             cl::cat(planningCategory));
cl::opt<std::string> microBatch(
    "micro-batch",
    cl::desc("The batch dimension of every input (axis 0, symbolic in the model), or auto: the "
             "largest that fits --vram-budget, found by planning"),
    cl::cat(planningCategory));
RangedOpt<int64_t> seqLen({1, double(int64_t{1} << 40), true, true, true}, "seq-len",
                          cl::desc("The sequence length of every input whose axis 1 is "
                                   "symbolic in the model"),
                          cl::init(0), cl::cat(planningCategory));
cl::opt<bool> maxSeq("max-seq",
                     cl::desc("--explain-memory: also the longest sequence (--seq-len) each "
                              "rung fits in --vram-budget (a model with a symbolic sequence)"),
                     cl::cat(planningCategory));
RangedOpt<int64_t> globalBatch({1, double(int64_t{1} << 40), true, true, true}, "global-batch",
                               cl::desc("--micro-batch auto: the samples per optimizer step; "
                                        "--grad-accum becomes G / (micro-batch x world size)"),
                               cl::init(0), cl::cat(planningCategory));
cl::opt<std::string> fit("fit",
                         cl::desc("auto: with --vram-budget, choose the precision, ZeRO stage, "
                                  "8-bit states and offload (never LoRA) with the least "
                                  "estimated slowdown whose plan fits"),
                         cl::cat(planningCategory));

enum class Emit { Mlir, MlirImport };
cl::opt<Emit>
    emit("emit", cl::desc("What IR --mode=import prints (default: mlir)"), cl::init(Emit::Mlir),
         cl::values(clEnumValN(Emit::Mlir, "mlir", "memc IR in canonical form"),
                    clEnumValN(Emit::MlirImport, "mlir-import", "memc IR exactly as imported")),
         cl::cat(memcCategory));
cl::list<std::string> inputShapes("input-shape",
                                  cl::desc("Static shape for a graph input with symbolic dims"),
                                  cl::value_desc("NAME=DIMS, e.g. input_ids=4x128"),
                                  cl::cat(memcCategory));

/// The budget and remat flags; false (with a message) on a malformed size.
/// --offload-activations: false after saying why it does not apply.
bool activationOffload(memc::PipelineOptions &options) {
  if (offloadActivations != "none" && offloadActivations != "cpu") {
    llvm::errs() << "memc: error: --offload-activations must be none or cpu, got '"
                 << offloadActivations << "'\n";
    return false;
  }
  options.offloadActivations = offloadActivations == "cpu";
  if (!options.offloadActivations)
    return true;
  if (options.mode != CompileMode::Train) {
    llvm::errs() << "memc: error: --offload-activations moves what a training step's backward "
                    "reads; --mode=infer keeps no activations\n";
    return false;
  }
  if (rematMode.getNumOccurrences() && rematMode != memc::RematMode::None) {
    llvm::errs() << "memc: error: --offload-activations cpu sends every value the backward "
                    "reads to host memory instead of recomputing it: use it without --remat "
                    "(or with --remat none)\n";
    return false;
  }
  options.budget.mode = memc::RematMode::None;
  return true;
}

bool budgetOptions(memc::BudgetOptions &options) {
  if (vramBudget.getNumOccurrences()) {
    options.budgetBytes = memc::runtime::parseByteSize(vramBudget);
    if (!options.budgetBytes || *options.budgetBytes == 0) {
      llvm::errs() << "memc: error: --vram-budget expects a size such as 24GiB, 1.5GB or 512MiB, "
                      "got '"
                   << vramBudget << "'\n";
      return false;
    }
  }
  if (!memc::kernels::targetContracts(target)) {
    llvm::errs() << "memc: error: --target must be one of " << memc::kernels::targetNames()
                 << ", got '" << target << "'\n";
    return false;
  }
  options.mode = rematMode;
  options.solver = rematSolver;
  options.ilpTimeLimitSeconds = ilpTimeLimit;
  // A long solve is not silent: its progress as it runs, as notes.
  options.progress = [](const std::string &text) {
    llvm::errs() << "memc: note: " << text << "\n";
  };
  options.plan.target = target;
  options.plan.allowTf32 = allowTf32;
  return true;
}

/// Validates the training flags into options; prints the problem and returns false.
bool trainingOptions(memc::TrainStepOptions &options, memc::Precision chosenPrecision) {
  auto error = [](const std::string &message) {
    llvm::errs() << "memc: error: " << message << "\n";
    return false;
  };
  std::optional<memc::LossKind> lossKind = memc::parseLossKind(loss);
  if (!lossKind)
    return error("--loss must be cross_entropy or mse, got '" + loss + "'");
  options.loss = *lossKind;
  memc::OptimizerOptions &opt = options.optimizer;
  std::string unknown;
  opt.name = optimizer;
  if (optimizer == "none" || !memc::createOptimizer(opt, unknown))
    return error("--optimizer must be one of " + memc::optimizerNames() + ", got '" + optimizer +
                 "'");
  opt.accumulationSteps = gradAccum;
  options.worldSize = worldSize;
  options.zeroStage = zeroStage;
  if (offloadOptimizer != "none" && offloadOptimizer != "cpu")
    return error("--offload-optimizer must be none or cpu, got '" + offloadOptimizer + "'");
  options.offloadOptimizer = offloadOptimizer == "cpu";
  options.bucketCapMb = bucketCapMb;
  if (zeroStage.getNumOccurrences() && worldSize == 1)
    return error("--zero-stage needs --world-size N with N > 1");
  if (bucketCapMb.getNumOccurrences() && (worldSize == 1 || zeroStage >= 2))
    return error("--bucket-cap-mb applies to --world-size N > 1 at --zero-stage 0 or 1 (stages "
                 "2 and 3 reduce-scatter each gradient as the backward produces it)");
  opt.tokenWeightedAccumulation = gradAccumMean == GradAccumMean::Tokens;
  if (nesterov && (optimizer != "sgd" || momentum == 0))
    return error("--nesterov needs --optimizer sgd with --momentum > 0");
  opt.momentum = momentum;
  opt.nesterov = nesterov;
  if (weightDecay.getNumOccurrences()) // otherwise the optimizer's default
    opt.weightDecay = weightDecay;
  // Adam's hyperparameters on an optimizer without them would train something else silently.
  for (const auto *adamOnly : {&beta1, &beta2, &epsilon})
    if (adamOnly->getNumOccurrences() && optimizer != "adamw" && optimizer != "adamw8bit")
      return error("--" + adamOnly->ArgStr.str() + " is AdamW's (--optimizer adamw or adamw8bit), "
                   "not " + optimizer + "'s");
  opt.beta1 = beta1;
  opt.beta2 = beta2;
  opt.eps = epsilon;
  opt.clipGradNorm = clipGradNorm;
  opt.logGradNorm = logGradNorm;
  if (chosenPrecision == memc::Precision::Fp16) {
    opt.lossScale.enabled = true;
    opt.lossScale.dynamic = !lossScale.getNumOccurrences();
    opt.lossScale.initialScale = lossScale;
    opt.lossScale.window = lossScaleWindow;
  } else if (lossScale.getNumOccurrences() || lossScaleWindow.getNumOccurrences()) {
    return error(
        std::string(lossScale.getNumOccurrences() ? "--loss-scale" : "--loss-scale-window") +
        " needs --precision fp16 (bf16 and fp32 train without loss scaling), got "
        "--precision " +
        precision);
  }
  if (lossScale.getNumOccurrences() && lossScaleWindow.getNumOccurrences())
    return error("--loss-scale-window sets when a dynamic scale grows; --loss-scale fixes the "
                 "scale: give one of them");
  options.lossInput = lossInput;
  options.labelsName = labels;
  options.freeze.assign(freeze.begin(), freeze.end());
  options.noDecay.assign(noDecay.begin(), noDecay.end());
  options.noDecayNormsAndBiases = noDecayNormsAndBiases;
  options.trainable.assign(trainable.begin(), trainable.end());
  return true;
}

/// The LoRA flags as options; false after printing what is wrong with them. With adapters,
/// only they (and --trainable's globs) train.
bool loraOptions(memc::PipelineOptions &options) {
  auto error = [](const std::string &message) {
    llvm::errs() << "memc: error: " << message << "\n";
    return false;
  };
  memc::LoraOptions &lora = options.lora;
  if (loraRank == 0) {
    const cl::Option *loraFlags[] = {&loraAlpha,    &loraDropout,   std::addressof(loraTargets),
                                     &quantizeBase, &noDoubleQuant, &seed};
    for (const cl::Option *flag : loraFlags)
      if (flag->getNumOccurrences())
        return error("--" + flag->ArgStr.str() + " needs --lora-rank R (QLoRA quantizes the "
                     "frozen base of a model that trains LoRA adapters)");
    return true;
  }
  if (loraTargets.empty())
    return error("--lora-rank needs --lora-targets GLOB,... (e.g. q_proj,v_proj)");
  if (quantizeBase != "none" && quantizeBase != "nf4")
    return error("--quantize-base must be none or nf4, got '" + quantizeBase + "'");
  if (noDoubleQuant && quantizeBase != "nf4")
    return error("--no-double-quant needs --quantize-base nf4");
  if (!freeze.empty())
    return error("--freeze with --lora-rank: everything but the adapters is frozen already "
                 "(--trainable names what trains besides them)");
  if (options.training.zeroStage == 3 && quantizeBase == "nf4")
    return error("--quantize-base nf4 with --zero-stage 3: memc does not shard a 4-bit base "
                 "(use --zero-stage 2: the base is frozen, only adapters have state)");
  lora.rank = loraRank;
  lora.alpha = loraAlpha.getNumOccurrences() ? double(loraAlpha) : double(loraRank);
  lora.dropout = loraDropout;
  lora.targets.assign(loraTargets.begin(), loraTargets.end());
  lora.quantizeNf4 = quantizeBase == "nf4";
  lora.doubleQuantization = !noDoubleQuant;
  lora.alsoTrainable = options.training.trainable;
  lora.seed = seed;
  options.training.trainable = memc::loraTrainable(lora);
  return true;
}

/// The flags of `category` given on the command line, as "--lr, --optimizer".
std::string givenFlags(const cl::OptionCategory &category) {
  std::vector<std::string> names;
  for (auto &entry : cl::getRegisteredOptions())
    if (entry.second->getNumOccurrences() &&
        llvm::is_contained(entry.second->Categories, &category))
      names.push_back("--" + entry.getKey().str());
  llvm::sort(names);
  return llvm::join(names, ", ");
}

/// Memory flags where memc plans nothing (it prints IR): false after saying which flags.
bool checkMemoryFlagsApply() {
  std::string given = givenFlags(memoryCategory);
  bool printsIr = emit.getNumOccurrences() || (mode == CompileMode::Import && loss.empty());
  if (given.empty() || !printsIr)
    return true;
  bool several = given.find(',') != std::string::npos;
  llvm::errs() << "memc: error: " << given << ": " << (several ? "memory flags" : "a memory flag")
               << ", but memc prints the model's IR here and plans no memory (--mode=infer, or "
                  "--loss to train, builds a program whose memory they set)\n";
  return false;
}

/// Training flags where nothing trains: false after saying which flags and why.
bool checkTrainingFlagsApply() {
  std::string given = givenFlags(trainingCategory);
  if (given.empty())
    return true;
  bool several = given.find(',') != std::string::npos;
  auto error = [&](const std::string &why) {
    llvm::errs() << "memc: error: " << given << ": "
                 << (several ? "training flags" : "a training flag") << why << "\n";
    return false;
  };
  if (mode.getNumOccurrences() && mode == CompileMode::Import)
    return error(", but --mode=import prints the model's IR and does not train "
                 "(drop --mode=import, and give --loss, to train)");
  if (emit.getNumOccurrences())
    return error(", but --emit prints the model's IR and does not train (drop "
                 "--emit, and give --loss, to train)");
  if (mode == CompileMode::Infer)
    return error(", but --mode=infer builds a program that computes the model's "
                 "outputs and does not train (--mode=train, or no --mode, with --loss trains)");
  if (loss.empty() && mode == CompileMode::Import)
    return error(" without --loss: memc would print the model's IR" +
                 std::string(outputPath == "-" ? "" : " to " + outputPath) +
                 " instead of building a training program (add --loss cross_entropy|mse)");
  return true;
}

/// Checks the numeric flags given against the ranges they were declared with, before anything
/// compiles: out of range, a flag is an error naming it and its range.
bool checkFlagRanges() {
  bool allInRange = true;
  for (const RangedFlag &row : rangedFlags())
    if (row.flag->getNumOccurrences() && !memc::runtime::isInRange(row.value(), row.range)) {
      llvm::errs() << "memc: error: "
                   << memc::runtime::rangeError("--" + row.flag->ArgStr.str(), row.range,
                                                memc::runtime::formatNumber(row.value()))
                   << "\n";
      allInRange = false;
    }
  return allInRange;
}

/// --micro-batch N and --seq-len T, which the import binds in every mode; false after saying
/// what is wrong.
bool axisBindings(memc::ImportOptions &options) {
  if (!microBatch.empty() && microBatch != "auto") {
    llvm::StringRef text = microBatch;
    int64_t batch;
    if (text.getAsInteger(10, batch) || batch < 1 || batch > (int64_t{1} << 40)) {
      llvm::errs() << "memc: error: --micro-batch must be auto or a number from 1 to 2^40, got '"
                   << microBatch << "'\n";
      return false;
    }
    options.batchSize = batch;
  }
  if (seqLen.getNumOccurrences())
    options.sequenceLength = seqLen;
  return true;
}

/// The planning flags (--explain-memory, --micro-batch, --fit): what each needs and excludes.
bool planningOptions(memc::PipelineOptions &options) {
  auto error = [](const std::string &message) {
    llvm::errs() << "memc: error: " << message << "\n";
    return false;
  };
  bool training = options.mode == CompileMode::Train;
  if (explainMemory) {
    if (outputPath != "-")
      return error("--explain-memory writes no program: drop -o (compile one of its rows' "
                   "flags with -o to build it)");
    if (fit.getNumOccurrences() || microBatch == "auto")
      return error(std::string(fit.getNumOccurrences() ? "--fit" : "--micro-batch auto") +
                   " chooses flags for a program; --explain-memory plans every rung of the "
                   "ladder instead: give one of them");
    if (maxSeq && !vramBudget.getNumOccurrences())
      return error("--max-seq finds the longest sequence that fits --vram-budget: give one");
  } else if (!batchSweep.empty() || maxSeq) {
    return error(std::string(maxSeq ? "--max-seq" : "--batch-sweep") +
                 " is part of --explain-memory's answer: add --explain-memory");
  }

  for (int64_t batch : batchSweep)
    if (batch < 1 || batch > (int64_t{1} << 40))
      return error("--batch-sweep takes micro-batches from 1 to 2^40, got " +
                   std::to_string(batch));
  if (microBatch == "auto" && (!training || !vramBudget.getNumOccurrences()))
    return error("--micro-batch auto finds the largest micro-batch whose training step fits "
                 "--vram-budget: give --loss and --vram-budget");
  if (globalBatch.getNumOccurrences() && microBatch != "auto")
    return error("--global-batch needs --micro-batch auto (with a fixed micro-batch, "
                 "--grad-accum sets the samples per step)");
  if (globalBatch.getNumOccurrences() && gradAccum.getNumOccurrences())
    return error("--global-batch sets --grad-accum to G / (micro-batch x world size): give one "
                 "of them");
  if (globalBatch.getNumOccurrences() && globalBatch % worldSize != 0)
    return error("--global-batch " + std::to_string(globalBatch) + " is not a multiple of " +
                 "--world-size " + std::to_string(worldSize) + ": each rank takes an equal share");
  if (fit.getNumOccurrences() && microBatch == "auto")
    return error("--fit auto and --micro-batch auto each plan for the other's flags as given: "
                 "give one of them (--micro-batch auto after --fit auto's choice, or a fixed "
                 "--micro-batch with --fit auto)");
  if (fit.getNumOccurrences() && fit != "auto")
    return error("--fit must be auto, got '" + fit + "'");
  if (fit == "auto" && (!training || !vramBudget.getNumOccurrences()))
    return error("--fit auto chooses techniques for a training step to fit --vram-budget: give "
                 "--loss and --vram-budget");
  return true;
}

/// The flags as pipeline options; false after printing what is wrong with them.
bool pipelineOptions(memc::PipelineOptions &options) {
  if (!checkTrainingFlagsApply() || !checkMemoryFlagsApply() || !checkFlagRanges())
    return false;
  if (!loss.empty() && mode == CompileMode::Import)
    mode = CompileMode::Train;
  if (mode == CompileMode::Train && loss.empty()) {
    llvm::errs() << "memc: error: training needs --loss cross_entropy|mse\n";
    return false;
  }
  if (explainMemory && mode != CompileMode::Train) {
    llvm::errs() << "memc: error: --explain-memory plans a training step: give --loss "
                    "cross_entropy|mse\n";
    return false;
  }
  if (outputPath == "/dev/null") {
    llvm::errs() << "memc: error: -o /dev/null: memc writes its outputs as new files renamed into "
                    "place, which would replace the device; -o - writes to stdout (-o - > "
                    "/dev/null discards it)\n";
    return false;
  }
  // `memc m.onnx -o train` meant a program: IR is written only when asked for.
  if (mode == CompileMode::Import && !mode.getNumOccurrences() && !emit.getNumOccurrences() &&
      outputPath != "-" && !llvm::StringRef(outputPath).ends_with(".mlir")) {
    llvm::errs() << "memc: error: -o " << outputPath
                 << ": say what to write: --loss cross_entropy|mse for a training program, "
                    "--mode=infer for an inference program, or --mode=import (or an -o ending "
                    "in .mlir) for memc IR\n";
    return false;
  }
  options.mode = mode;
  options.canonicalize = emit == Emit::Mlir;
  options.fuseAttention = fuseAttention == FuseAttention::Auto;
  if (maxPoolArgmax != MaxPoolArgmax::Auto)
    options.saveMaxPoolArgmax = maxPoolArgmax == MaxPoolArgmax::On;
  options.training.fuseLoss = fuseLoss == FuseLoss::Auto;
  if (!weightsFromMap.empty() && weightsFrom.empty()) {
    llvm::errs() << "memc: error: --weights-from-map needs --weights-from\n";
    return false;
  }
  options.import.weightsFrom = weightsFrom;
  options.import.weightsFromMap = weightsFromMap;
  for (const std::string &text : inputShapes) {
    std::string error;
    if (!memc::addInputShape(text, options.import, error)) {
      llvm::errs() << "memc: error: " << error << "\n";
      return false;
    }
  }
  if (!axisBindings(options.import) || !planningOptions(options))
    return false;
  if (mode == CompileMode::Import)
    return true;
  std::optional<memc::Precision> chosen = memc::parsePrecision(precision);
  if (!chosen) {
    llvm::errs() << "memc: error: --precision must be fp32, bf16 or fp16, got '" << precision
                 << "'\n";
    return false;
  }
  options.precision = *chosen;
  if (mode == CompileMode::Train) {
    if (!trainingOptions(options.training, options.precision))
      return false;
    options.import.acceptFoldedExport = acceptFoldedExport;
    options.schedule = {learningRate, warmup, decaySteps};
    if (!loraOptions(options))
      return false;
  }
  return budgetOptions(options.budget) && activationOffload(options);
}

/// Parses the command line; false after printing LLVM's option errors ("memc: Unknown command
/// line argument ...", "memc: for the --lr option: ...") in memc's form, the first an error and
/// the rest notes. Values that do not parse are reported by the options themselves straight to
/// stderr, so stderr goes to a temporary file while parsing (--help and --version print to
/// stdout and exit there).
bool parseCommandLine(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (memc::runtime::isProgramOnlyFlag(argv[i])) {
      std::string_view argument = argv[i], name = argument.substr(0, argument.find('='));
      llvm::errs() << "memc: error: " << name
                   << " is a flag of the compiled program, not of memc: compile with memc "
                      "MODEL.onnx ... -o train, then run ./train "
                   << name << " ...\n";
      return false;
    }
  std::string messages;
  llvm::raw_string_ostream messageStream(messages);
  std::FILE *captured = std::tmpfile();
  int savedStderr = captured ? ::dup(STDERR_FILENO) : -1;
  if (savedStderr >= 0)
    ::dup2(::fileno(captured), STDERR_FILENO);
  bool parsed = cl::ParseCommandLineOptions(
      argc, argv, "memc: compile ONNX models into memory-optimized training executables\n",
      &messageStream);
  if (savedStderr >= 0) {
    ::dup2(savedStderr, STDERR_FILENO);
    ::close(savedStderr);
    std::rewind(captured);
    char buffer[4096];
    std::string direct;
    for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), captured)) > 0;)
      direct.append(buffer, n);
    messages = direct + messages;
  }
  if (captured)
    std::fclose(captured);
  if (parsed && messages.empty())
    return true;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(messages).split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (auto [index, line] : llvm::enumerate(lines)) {
    line = line.trim();
    if (line.starts_with("memc: "))
      line = line.drop_front(6);
    llvm::errs() << "memc: " << (index == 0 && !parsed ? "error: " : "note: ") << line << "\n";
  }
  return parsed;
}

} // namespace

bool parseDriverOptions(int argc, char **argv, DriverOptions &driver) {
  cl::HideUnrelatedOptions({&memcCategory, &trainingCategory, &memoryCategory, &planningCategory});
  cl::SetVersionPrinter(
      [](llvm::raw_ostream &os) { os << "memc " MEMC_VERSION " (revision " MEMC_REVISION ")\n"; });
  if (!parseCommandLine(argc, argv) || !pipelineOptions(driver.pipeline))
    return false;
  driver.modelPath = modelPath;
  driver.outputPath = outputPath;
  driver.report = report;
  driver.reportJson = reportJson;
  driver.reportSvg = reportSvg;
  driver.explainMemory = explainMemory;
  driver.batchSweep.assign(batchSweep.begin(), batchSweep.end());
  driver.maxSequence = maxSeq;
  driver.microBatchAuto = microBatch == "auto";
  driver.globalBatch = globalBatch;
  driver.fitAuto = fit == "auto";
  driver.userFlags.clear();
  for (auto &entry : cl::getRegisteredOptions())
    if (entry.second->getNumOccurrences())
      driver.userFlags.insert(entry.getKey().str());
  return true;
}

bool parseDriverArguments(const std::vector<std::string> &arguments, DriverOptions &driver) {
  cl::ResetAllOptionOccurrences();
  std::vector<const char *> argv = {"memc"};
  for (const std::string &argument : arguments)
    argv.push_back(argument.c_str());
  driver = DriverOptions();
  return parseDriverOptions(static_cast<int>(argv.size()), const_cast<char **>(argv.data()),
                            driver);
}

std::vector<std::string> argumentsWithout(const std::vector<std::string> &arguments,
                                          const std::set<std::string> &names) {
  llvm::StringMap<cl::Option *> &registered = cl::getRegisteredOptions();
  std::vector<std::string> kept;
  for (size_t i = 0; i < arguments.size(); ++i) {
    llvm::StringRef argument = arguments[i];
    if (argument == "--" || !argument.starts_with("-") || argument == "-") {
      kept.push_back(arguments[i]);
      continue;
    }
    llvm::StringRef name = argument.ltrim('-').split('=').first;
    if (!names.count(name.str())) {
      kept.push_back(arguments[i]);
      continue;
    }
    // `--flag value`: the value goes too, for a flag that needs one and was not given `=value`.
    auto option = registered.find(name);
    bool takesValue =
        option != registered.end() && option->second->getValueExpectedFlag() == cl::ValueRequired;
    if (takesValue && !argument.contains('='))
      ++i;
  }
  return kept;
}
