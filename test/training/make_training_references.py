"""Record PyTorch's training of the fixture models for memc-training-tests.

Run from the repository root with Debian's python (torch 1.13 CPU, onnx 1.12),
not the pyenv python3 that may be first on PATH:

    /usr/bin/python3 test/training/make_training_references.py

For each of mlp, resnet_bn, gpt2, bert, llama, mobilenet, unet, lstm_lm, gru_lm,
llama_rope, vit and embedding_bag (and the export helper's models) the script rebuilds the
PyTorch module from test/fixtures/export_fixtures.py and loads the ONNX
file's initializers into it by name, so torch starts from exactly the weights
memc reads. Names that the exporter recreated with an Identity node (equal
initializers stored once) take the Identity's input initializer's values.
It writes, in test/training/data/:

  * <model>.data.npz: three micro-batches of samples: one array per graph
    input and `labels` (class ids [N] for mlp and resnet_bn, token ids [N, T]
    for the token models; gpt2's include a few ignore_index = -100);
  * <model>.reference.npz: `grad/<name>`, the gradients of the first
    micro-batch's loss with the initial weights for every trainable
    parameter, named as memc names them (ONNX initializer names; the tied
    lm_head.weight is wte.weight); `initial/<name>`, every floating tensor memc
    saves (parameters and buffers) before training; and per configuration
    `losses/<config>`, the loss of each of the 5 optimizer steps (micro-batch
    i % 3 at step i + 1, as memc's training loop takes them), and
    `update/<config>/<name>`, each tensor's change over the 5 steps;
  * cases.json: one entry per case: the model, the memc flags, the
    configuration whose losses and updates it must reproduce, the number of
    steps, and the tolerance of each tensor's update (below);
  * plain_cases.json and ../fixtures/plain_of_<model>.onnx: the export
    helper's models (helper_*, exported by export_helper_fixtures.py, whose
    losses must be within 1e-5 of PyTorch's) exported again by
    torch.onnx.export's defaults, and what memc must then do
    (PLAIN_EXPECTATIONS below).

Update tolerances. AdamW divides by the root of the second moment, so a
parameter whose gradient is rounding noise still moves by about lr, in the
noise's direction: the key bias of an attention layer has an exactly zero
gradient (softmax ignores a constant added to a row), so its update depends
on how each implementation rounds. The script trains each case again in
float64 and measures how far torch's own float32 updates are from those;
a tensor's tolerance is 10x that, and at least UPDATE_TOLERANCE.

The loss is F.cross_entropy(logits.reshape(-1, C), labels.reshape(-1)): the
mean over positions that are not ignored, as memc computes it. Buffers that
are not parameters in torch but floating initializers in ONNX (gpt2's causal
masks h.*.attn.bias, llama's rope tables) are frozen in memc with --freeze.

Seeds are fixed, torch runs single-threaded and the archives carry a fixed
zip timestamp, so re-running the script reproduces every file byte for byte.
"""

import contextlib
import io
import json
import os
import sys
import warnings
import zipfile

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DATA_DIR = os.path.join(HERE, "data")
FIXTURES_DIR = os.path.join(HERE, "..", "fixtures")
sys.path.insert(0, FIXTURES_DIR)
import export_fixtures as fixtures  # noqa: E402
import export_helper_fixtures as helpers  # noqa: E402

STEPS = 5
MICRO_BATCHES = 3
IGNORE_INDEX = -100
UPDATE_TOLERANCE = 5e-4
GRADIENT_TOLERANCE = 1e-4
NOISE_MARGIN = 10


class Model:
    """A fixture: its module class, graph input, micro-batch shape and classes; token models
    draw ids below `vocab`, and `padding` ids among them are set to the padding row 0. Token
    models label every token unless `token_labels` is off (one class per sample)."""

    def __init__(self, name, module, input_name, input_shape, classes, freeze=(),
                 token_input=False, ignored_labels=0, vocab=fixtures.VOCAB, padding=0,
                 token_labels=True):
        self.name = name
        self.module = module
        self.input_name = input_name
        self.input_shape = input_shape  # one micro-batch
        self.classes = classes
        self.freeze = list(freeze)
        self.token_input = token_input
        self.ignored_labels = ignored_labels
        self.vocab = vocab
        self.padding = padding
        self.token_labels = token_labels


MODELS = [
    Model("mlp", fixtures.MLP, "input", (4, 16), 10),
    Model("resnet_bn", fixtures.ResNet, "input", (2, 3, 16, 16), 10),
    Model("gpt2", fixtures.GPT2, "input_ids", (fixtures.BATCH, fixtures.SEQ), fixtures.VOCAB,
          freeze=["h.*.attn.bias"], token_input=True, ignored_labels=5),
    Model("bert", fixtures.Bert, "input_ids", (fixtures.BATCH, fixtures.SEQ), fixtures.VOCAB,
          token_input=True),
    Model("llama", fixtures.Llama, "input_ids", (fixtures.BATCH, fixtures.SEQ), fixtures.VOCAB,
          freeze=["rope_*"], token_input=True),
    # The export helper's round trip (export_helper_fixtures.py): no --freeze and no
    # --input-shape (the metadata says what trains and the example's shape), BatchNorm exported
    # from eval() state, ties, mask and RoPE buffers, padding rows.
    Model("helper_cnn", helpers.small_cnn, "input", (2, 3, 8, 8), 10),
    Model("helper_tied_lm", helpers.TiedLM, "input_ids", (2, 8), 32, token_input=True,
          vocab=32, padding=4),
    Model("helper_llama", fixtures.Llama, "input_ids", (fixtures.BATCH, fixtures.SEQ),
          fixtures.VOCAB, token_input=True),
    Model("helper_padding", helpers.padding_lm, "idx", (2, 8), 32, token_input=True, vocab=32,
          padding=4),
    # Issue 15's MobileNet-style CNN: HardSwish, HardSigmoid, depthwise conv, Pad + AveragePool.
    Model("mobilenet", fixtures.MobileNet, "input", (2, 3, 16, 16), 10),
    # Issue 15's U-Net-style CNN: GroupNorm (InstanceNormalization), SiLU, ConvTranspose, Resize,
    # skip concatenations.
    Model("unet", fixtures.UNet, "input", (2, 3, 16, 16), 10),
    # Issue 15's recurrent language models: a 2-layer LSTM and a GRU, unrolled by memc.
    Model("lstm_lm", fixtures.LSTMLanguageModel, "input_ids", (fixtures.BATCH, fixtures.SEQ),
          fixtures.VOCAB, token_input=True),
    Model("gru_lm", fixtures.GRULanguageModel, "input_ids", (fixtures.BATCH, fixtures.SEQ),
          fixtures.VOCAB, token_input=True),
    # Issue 15's Llama block computing RoPE in forward (CumSum position ids, Sin, Cos); its
    # inv_freq buffer is a floating initializer that must not train.
    Model("llama_rope", fixtures.RopeLlama, "input_ids", (fixtures.BATCH, fixtures.SEQ),
          fixtures.VOCAB, freeze=["inv_freq"], token_input=True),
    # Issue 15's ViT: Conv2d pixel patches, attention, F.normalize (ReduceL2) on the pooled output.
    Model("vit", fixtures.ViT, "input", (2, 3, 16, 16), 10),
    # Issue 15's nn.EmbeddingBag (mean and sum bags, fixed offsets) + Linear: two ONNX Loops with
    # constant trip counts, unrolled by memc; one class per sequence.
    Model("embedding_bag", fixtures.EmbeddingBagClassifier, "input_ids",
          (fixtures.BATCH, fixtures.SEQ), 10, token_input=True, token_labels=False),
    # Issue 13's key-padding mask end to end: nn.TransformerEncoder with src_key_padding_mask
    # computed from the ids (id 0 pads); the data holds padding ids, so keys are masked.
    Model("bert_padded", fixtures.PaddedBert, "input_ids", (fixtures.BATCH, fixtures.SEQ),
          fixtures.VOCAB, token_input=True, padding=12),
]
HELPER_MODELS = [m for m in MODELS if m.name.startswith("helper_")]
# The round trip's losses must agree closer than the other cases' (kLossTolerance, 1e-4).
HELPER_LOSS_TOLERANCE = 1e-5

# torch's AdamW defaults. The adamw cases leave them to memc's defaults, which must agree;
# adamw_clip spells them out.
ADAMW = {"optimizer": "adamw", "lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8,
         "weight_decay": 0.01, "clip": 0.0, "explicit": False}
# Every model trains with AdamW; mlp also with Nesterov SGD and gpt2 with clipping.
CONFIGS = {
    "adamw": ADAMW,
    "sgd_nesterov": {"optimizer": "sgd", "lr": 0.05, "momentum": 0.9, "nesterov": True,
                     "weight_decay": 1e-3, "clip": 0.0},
    "adamw_clip": dict(ADAMW, clip=1.0, explicit=True),
    # Gradient accumulation over 3 micro-batches: each optimizer step is one batch of all three
    # (the loss over every counted label, as memc's default --grad-accum-mean tokens gives and
    # Hugging Face's Trainer does); gpt2's ignored labels make that differ from the mean of the
    # micro-batches' means.
    "adamw_accum": dict(ADAMW, accum=3),
    # --grad-accum-mean micro-batches: each step sums (loss / 3).backward() over the 3.
    "adamw_accum_means": dict(ADAMW, accum=3, means=True),
    # Hugging Face Trainer's parameter groups (--no-decay-norms-and-biases): no weight decay for
    # biases and LayerNorm parameters; a weight decay of 0.1 makes the difference show.
    "adamw_groups": dict(ADAMW, weight_decay=0.1, explicit=True, groups=True),
}
CASES = [(m.name, "adamw") for m in MODELS] + [("mlp", "sgd_nesterov"),
                                               ("gpt2", "adamw_clip"), ("mlp", "adamw_accum"),
                                               ("gpt2", "adamw_accum"),
                                               ("gpt2", "adamw_accum_means"),
                                               ("gpt2", "adamw_groups")]
# Recomputation must not change numerics: these cases train with the adamw references under a
# budget between the lowest peak memc reaches and the peak without recomputation (measured with
# `memc --report`), and with --remat full. The test checks that memc did recompute.
MEMORY_VARIANTS = {
    "gpt2": [("budget", ["--vram-budget", "490KiB"]), ("remat_full", ["--remat", "full"])],
    "llama": [("budget", ["--vram-budget", "450KiB"])],
    "bert": [("remat_full", ["--remat", "full"])],
    "resnet_bn": [("budget", ["--vram-budget", "160KiB"])],
    # Its 10-class head fused leaves --remat full nothing to recompute (the peak is in the
    # forward); with the head unfused the case still runs full recomputation on a CNN.
    "mobilenet": [("remat_full", ["--remat", "full", "--fuse-loss", "off"])],
    "unet": [("remat_full", ["--remat", "full"])],
    "lstm_lm": [("remat_full", ["--remat", "full"])],
    "gru_lm": [("remat_full", ["--remat", "full"])],
    "llama_rope": [("remat_full", ["--remat", "full"])],
    "vit": [("remat_full", ["--remat", "full"])],
}


# Data parallel: N ranks of one micro-batch each compute what one process accumulating N
# micro-batches does, so these cases train with the accumulation references under
# `mpirun -np 3` instead of --grad-accum 3 (the test runs them with the case's "ranks"), at
# ZeRO stage 0 and, sharding everything, stage 3.
RANK_VARIANTS = {("mlp", "adamw_accum"), ("gpt2", "adamw_accum")}
ZERO_STAGES = [0, 3]


def ranks_flags(flags, ranks):
    at = flags.index("--grad-accum")
    return flags[:at] + ["--world-size", str(ranks)] + flags[at + 2:]


def memc_flags(model, config):
    c = CONFIGS[config]
    flags = ["--loss", "cross_entropy", "--optimizer", c["optimizer"], "--lr", repr(c["lr"])]
    if c["optimizer"] == "sgd":
        flags += ["--momentum", repr(c["momentum"])]
        if c["nesterov"]:
            flags.append("--nesterov")
    if c["optimizer"] == "sgd" or c["explicit"]:
        flags += ["--weight-decay", repr(c["weight_decay"])]
    if c["optimizer"] == "adamw" and c["explicit"]:
        flags += ["--beta1", repr(c["betas"][0]), "--beta2", repr(c["betas"][1]),
                  "--eps", repr(c["eps"])]
    if c["clip"]:
        flags += ["--clip-grad-norm", repr(c["clip"])]
    if c.get("accum", 1) > 1:
        flags += ["--grad-accum", str(c["accum"])]
    if c.get("means"):
        flags += ["--grad-accum-mean", "micro-batches"]
    if c.get("groups"):
        flags.append("--no-decay-norms-and-biases")
    for glob in model.freeze:
        flags += ["--freeze", glob]
    return flags


def hf_parameter_groups(module, weight_decay):
    """transformers.Trainer's groups: no weight decay for names with "bias" and for the
    parameters of LayerNorm modules (ALL_LAYERNORM_LAYERS)."""
    norms = {f"{prefix}.{name}" if prefix else name
             for prefix, child in module.named_modules() if isinstance(child, torch.nn.LayerNorm)
             for name, _ in child.named_parameters(recurse=False)}
    decay, no_decay = [], []
    for name, parameter in module.named_parameters():
        (no_decay if "bias" in name or name in norms else decay).append(parameter)
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0}]


def make_optimizer(config, parameters, module=None):
    c = CONFIGS[config]
    if c.get("groups"):
        parameters = hf_parameter_groups(module, c["weight_decay"])
    if c["optimizer"] == "adamw":
        return torch.optim.AdamW(parameters, lr=c["lr"], betas=c["betas"], eps=c["eps"],
                                 weight_decay=c["weight_decay"])
    return torch.optim.SGD(parameters, lr=c["lr"], momentum=c["momentum"],
                           nesterov=c["nesterov"], weight_decay=c["weight_decay"])


# --------------------------------------------------------------------------
# Weights and data
# --------------------------------------------------------------------------

def onnx_values(path):
    """Initializer values by name, and by every name an Identity node recreates."""
    graph = onnx.load(path).graph
    values = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    for node in graph.node:
        if node.op_type == "Identity" and node.input[0] in values:
            values[node.output[0]] = values[node.input[0]]
    return values


def aliases(module):
    """State dict names of tied parameters beyond the first (gpt2's lm_head.weight, the
    same tensor as wte.weight): ONNX and memc know the tensor by its first name only."""
    owners = dict(module.named_parameters())
    owners.update(module.named_buffers())
    return {name for name in module.state_dict() if name not in owners}


def load_onnx_weights(module, path):
    """Copies every state_dict entry from the ONNX file; only tied aliases and BatchNorm's
    num_batches_tracked (unused by the forward pass) are not in the file."""
    values = onnx_values(path)
    state = module.state_dict()
    tied = aliases(module)
    for name, tensor in state.items():
        if name in values:
            with torch.no_grad():
                tensor.copy_(torch.from_numpy(values[name].copy()))
        elif not (name.endswith("num_batches_tracked") or name in tied):
            raise SystemExit(f"{path}: no initializer for '{name}'")
    unused = set(values) - set(state)
    if unused:
        raise SystemExit(f"{path}: initializers torch does not know: {sorted(unused)}")


def make_data(model, seed):
    rng = np.random.default_rng(seed)
    count = model.input_shape[0] * MICRO_BATCHES
    shape = (count,) + tuple(model.input_shape[1:])
    if model.token_input:
        inputs = rng.integers(0, model.vocab, shape, dtype=np.int64)
        labels = rng.integers(0, model.classes, shape if model.token_labels else (count,),
                              dtype=np.int64)
        if model.padding:
            inputs.reshape(-1)[rng.choice(inputs.size, model.padding, replace=False)] = 0
        if model.ignored_labels:
            flat = labels.reshape(-1)
            flat[rng.choice(flat.size, model.ignored_labels, replace=False)] = IGNORE_INDEX
    else:
        inputs = rng.standard_normal(shape).astype(np.float32)
        labels = rng.integers(0, model.classes, (count,), dtype=np.int64)
    return {model.input_name: inputs, "labels": labels}


def micro_batch(data, model, index):
    batch = model.input_shape[0]
    rows = [(index * batch + i) % len(data["labels"]) for i in range(batch)]
    return torch.from_numpy(data[model.input_name][rows]), torch.from_numpy(data["labels"][rows])


# --------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------

def fresh_module(model, dtype=torch.float32):
    module = model.module()
    load_onnx_weights(module, os.path.join(FIXTURES_DIR, model.name + ".onnx"))
    module.to(dtype)
    module.train()
    return module


def saved_tensors(module, model):
    """The tensors memc saves after training, by ONNX name: the state dict,
    without tied aliases unless the export helper recorded them (memc.tied), in
    which case memc saves every state_dict name. Integer entries (BatchNorm's
    num_batches_tracked) only for the helper's models, whose files carry them."""
    tied = set() if model in HELPER_MODELS else aliases(module)
    return {name: tensor.detach().clone() for name, tensor in module.state_dict().items()
            if (tensor.is_floating_point() or model in HELPER_MODELS) and name not in tied}


def loss_of(module, inputs, labels):
    logits = module(inputs)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                           ignore_index=IGNORE_INDEX)


def first_gradients(model, data, dtype=torch.float32):
    module = fresh_module(model, dtype)
    inputs, labels = micro_batch(data, model, 0)
    if inputs.is_floating_point():
        inputs = inputs.to(dtype)
    with float64_throughout() if dtype == torch.float64 else contextlib.nullcontext():
        loss_of(module, inputs, labels).backward()
    return {name: p.grad.numpy().copy() for name, p in module.named_parameters()}


def gradient_tolerances(float32_gradients, float64_gradients):
    """Gradients that are rounding noise in torch itself (a conv bias before a BatchNorm, which
    the normalization cancels): NOISE_MARGIN x torch's own float32 error, where that exceeds
    GRADIENT_TOLERANCE (memc-training-tests' kGradientTolerance)."""
    tolerances = {}
    for name, gradient in float32_gradients.items():
        # Relative to the float32 gradient, the reference memc is compared with: a gradient
        # that is noise (about 1e-9 where float64 gives 1e-17) then allows noise of that size.
        noise = relative_error(float64_gradients[name], gradient.astype(np.float64))
        if NOISE_MARGIN * noise > GRADIENT_TOLERANCE:
            tolerances[name] = float(f"{NOISE_MARGIN * noise:.2g}")
    return tolerances


@contextlib.contextmanager
def float64_throughout():
    """llama's attention calls .float() on its scores; keep float64 there."""
    cast = torch.Tensor.float
    torch.Tensor.float = lambda tensor: tensor
    try:
        yield
    finally:
        torch.Tensor.float = cast


def train(model, data, config, dtype=torch.float32):
    """The losses of STEPS optimizer steps and each saved tensor's change."""
    module = fresh_module(model, dtype)
    initial = saved_tensors(module, model)
    optimizer = make_optimizer(config, module.parameters(), module)
    clip = CONFIGS[config]["clip"]
    accum = CONFIGS[config].get("accum", 1)
    means = CONFIGS[config].get("means", False)
    losses = []
    with float64_throughout() if dtype == torch.float64 else contextlib.nullcontext():
        for step in range(STEPS):
            optimizer.zero_grad()
            batches = [micro_batch(data, model, step * accum + k) for k in range(accum)]
            if not means:  # one batch of all the micro-batches
                batches = [tuple(torch.cat(parts) for parts in zip(*batches))]
            total = 0.0
            for inputs, labels in batches:
                if inputs.is_floating_point():
                    inputs = inputs.to(dtype)
                loss = loss_of(module, inputs, labels)
                (loss / len(batches)).backward()
                total += loss.item() * accum / len(batches)
            if clip:
                torch.nn.utils.clip_grad_norm_(module.parameters(), clip)
            optimizer.step()
            losses.append(total / accum)
    updates = {name: (tensor - initial[name]).numpy()
               for name, tensor in saved_tensors(module, model).items()}
    return np.array(losses, np.float32), updates


def relative_error(actual, expected):
    norm = np.linalg.norm(expected)
    difference = np.linalg.norm(actual - expected)
    return difference / norm if norm else difference


def update_tolerances(float32_updates, float64_updates):
    """Tensors whose update torch itself rounds by more than UPDATE_TOLERANCE / NOISE_MARGIN."""
    tolerances = {}
    for name, update in float32_updates.items():
        noise = relative_error(update.astype(np.float64), float64_updates[name])
        if NOISE_MARGIN * noise > UPDATE_TOLERANCE:
            tolerances[name] = float(f"{NOISE_MARGIN * noise:.2g}")
    return tolerances


def save_npz(path, arrays):
    """np.savez with a fixed zip timestamp, so the archive is reproducible."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for key, value in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(value))
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, buf.getvalue())


def main():
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    os.makedirs(DATA_DIR, exist_ok=True)
    cases = []
    for seed, model in enumerate(MODELS):
        torch.manual_seed(seed)
        data = make_data(model, 1000 + seed)
        save_npz(os.path.join(DATA_DIR, model.name + ".data.npz"), data)
        gradients = first_gradients(model, data)
        gradient_noise = gradient_tolerances(gradients, first_gradients(model, data,
                                                                        torch.float64))
        reference = {f"grad/{name}": grad for name, grad in gradients.items()}
        reference.update({f"initial/{name}": tensor.numpy()
                          for name, tensor in saved_tensors(fresh_module(model), model).items()})
        for name, config in CASES:
            if name != model.name:
                continue
            losses, updates = train(model, data, config)
            _, exact_updates = train(model, data, config, torch.float64)
            reference[f"losses/{config}"] = losses
            reference.update({f"update/{config}/{name}": update
                              for name, update in updates.items()})
            tolerances = update_tolerances(updates, exact_updates)
            cases.append({"name": f"{name}_{config}", "model": name, "config": config,
                          "steps": STEPS, "flags": memc_flags(model, config),
                          "update_tolerance": UPDATE_TOLERANCE,
                          "update_tolerances": tolerances})
            if gradient_noise:
                cases[-1]["gradient_tolerances"] = gradient_noise
            if model in HELPER_MODELS:
                cases[-1]["loss_tolerance"] = HELPER_LOSS_TOLERANCE
            print(f"{name} {config}: losses {' '.join(f'{x:.6f}' for x in losses)}; "
                  f"update tolerances {tolerances}")
            if (name, config) in RANK_VARIANTS:
                ranks = CONFIGS[config]["accum"]
                single = cases[-1]
                for stage in ZERO_STAGES:
                    suffix, extra = (f"_zero{stage}", ["--zero-stage", str(stage)]) if stage else (
                        "", [])
                    cases.append(dict(single, name=f"{name}_{config}_ranks{ranks}{suffix}",
                                      ranks=ranks,
                                      flags=ranks_flags(single["flags"], ranks) + extra))
            if config != "adamw":
                continue
            for variant, extra in MEMORY_VARIANTS.get(name, []):
                cases.append(dict(cases[-1], name=f"{name}_{config}_{variant}",
                                  flags=memc_flags(model, config) + extra))
        save_npz(os.path.join(DATA_DIR, model.name + ".reference.npz"), reference)
    with open(os.path.join(DATA_DIR, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)
        f.write("\n")
    plain_cases = [export_plain(model) for model in HELPER_MODELS]
    with open(os.path.join(DATA_DIR, "plain_cases.json"), "w") as f:
        json.dump(plain_cases, f, indent=1)
        f.write("\n")


# What memc does with each helper model exported by torch.onnx.export's defaults instead
# (plain_of_<model>.onnx, the same weights): the warnings it must print, and whether its 5 losses
# then still equal PyTorch's (within HELPER_LOSS_TOLERANCE). Each differs, and each warns.
FOLDED = "this model looks folded by torch.onnx.export's defaults"
PLAIN_EXPECTATIONS = {
    # BatchNorm folded into the Conv: memc trains a net without BatchNorm.
    "helper_cnn": {"warnings": [FOLDED, "onnx::Conv_"], "losses": "differ"},
    # The head becomes a transposed copy of the embedding: the tie trains as two weights.
    "helper_tied_lm": {"warnings": [FOLDED, "a tied weight split in two",
                                    "row 0 of 'wte.weight' (an embedding table) is all zeros"],
                       "losses": "differ"},
    # Folding multiplies the RoPE tables into onnx::Mul_N initializers, which train.
    "helper_llama": {"warnings": [FOLDED, "are folded expressions"], "losses": "differ"},
    # ONNX has no padding_idx: the padding row trains.
    "helper_padding": {"warnings": ["row 0 of '0.weight' (an embedding table) is all zeros"],
                       "losses": "differ"},
}


def export_plain(model):
    """Exports `model`'s module, with the helper export's weights, by torch.onnx.export's
    defaults (eval mode, constant folding, opset 17, the micro-batch's fixed shape)."""
    module = fresh_module(model)
    shape = model.input_shape
    example = (torch.zeros(shape, dtype=torch.int64) if model.token_input
               else torch.zeros(shape))
    name = "plain_of_" + model.name
    torch.onnx.export(module, (example,), os.path.join(FIXTURES_DIR, name + ".onnx"),
                      opset_version=17, input_names=[model.input_name],
                      output_names=["logits"])
    expectation = PLAIN_EXPECTATIONS[model.name]
    # A folded export is refused unless accepted: these cases show what accepting it trains.
    accept = ["--accept-folded-export"]
    return {"name": name, "model": name, "reference": model.name, "config": "adamw",
            "steps": STEPS, "flags": memc_flags(model, "adamw") + accept,
            "loss_tolerance": HELPER_LOSS_TOLERANCE, "warnings": expectation["warnings"],
            "losses": expectation["losses"]}


if __name__ == "__main__":
    main()
