#!/usr/bin/env python3
"""Checks memc-zoo's models with the onnx Python package and numpy (no PyTorch, no onnxruntime).

usage: check_zoo.py MEMC_ZOO [--full]

For a shrunken version of every model (--layers / --vocab / small --seq) it runs onnx.checker and
strict shape inference, checks the external-data layout (one file, 64-byte aligned, no overlaps), that
only the ops memc's importer supports appear, and then evaluates the graph with a small numpy
interpreter and compares the logits with an independent numpy implementation of the architecture,
all parameters replaced by random values so that a misplaced bias or norm shows; the LLaMA graph
with a symbolic sequence (--seq dynamic) is evaluated at two lengths. With --full it also writes each
model at its published size (--weights none) and checks its parameter count.
"""
import math
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

ALLOWED_OPS = set("""Gather Add Sub Mul Div Pow Sqrt Reciprocal Neg Exp Log Erf Tanh Sigmoid Relu Softmax
LogSoftmax LayerNormalization ReduceMean ReduceSum ReduceMax Transpose Reshape Flatten Squeeze Unsqueeze
Concat Split Slice Expand Where Equal Less Greater Not Cast Constant Identity Conv BatchNormalization
MaxPool AveragePool GlobalAveragePool Gemm MatMul Trilu Clip Cos Sin Shape Range ConstantOfShape""".split())

# Registered buffers, not parameters: excluded from parameter counts and never randomised here.
BUFFER = re.compile(r"(\.attn\.bias|position_ids|token_type_ids|running_mean|running_var|rotary_emb\..*"
                    r"|causal_mask)$")

# The published counts; llama-1b is the zoo's own LLaMA-style 1B (multi-head attention, 16 layers),
# not TinyLlama-1.1B (grouped-query attention, 22 layers).
EXPECTED_PARAMETERS = {
    "gpt2-124m": 124_439_808,
    "gpt2-355m": 354_823_168,
    "bert-base": 109_514_298,
    "llama-1b": 953_223_168,
    "llama-7b": 6_738_415_616,
    "llama3-8b": 8_030_261_248,
    "resnet50": 25_557_032,
}

# --------------------------------------------------------------------------- numpy interpreter

_erf = np.vectorize(math.erf, otypes=[np.float32])


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _conv(x, w, strides, pads):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (x.shape[2] - kh) // strides[0] + 1
    ow = (x.shape[3] - kw) // strides[1] + 1
    cols = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    cols = cols[:, :, ::strides[0], ::strides[1]][:, :, :oh, :ow]  # n c oh ow kh kw
    return np.einsum("nchwij,ocij->nohw", cols, w, optimize=True)


def _maxpool(x, kernel, strides, pads):
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])), constant_values=-np.inf)
    win = np.lib.stride_tricks.sliding_window_view(x, tuple(kernel), axis=(2, 3))
    return win[:, :, ::strides[0], ::strides[1]].max(axis=(4, 5))


def _np_dtype(onnx_type):
    if hasattr(onnx.helper, "tensor_dtype_to_np_dtype"):
        return onnx.helper.tensor_dtype_to_np_dtype(onnx_type)
    return onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[onnx_type]


def _slice(x, starts, ends, axes, steps):
    index = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        index[a] = slice(int(s), int(min(e, x.shape[a])), int(st))
    return x[tuple(index)]


def run_graph(model, feeds, weights):
    env = dict(weights)
    env.update(feeds)
    for node in model.graph.node:
        a = _attrs(node)
        x = [env[name] for name in node.input]
        op = node.op_type
        if op == "Constant":
            out = [numpy_helper.to_array(a["value"])]
        elif op == "Gather":
            out = [np.take(x[0], x[1], axis=a.get("axis", 0))]
        elif op in ("Add", "Sub", "Mul", "Div", "Pow", "MatMul"):
            fn = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
                  "Pow": np.power, "MatMul": np.matmul}[op]
            out = [fn(x[0], x[1]).astype(np.float32)]
        elif op in ("Sqrt", "Reciprocal", "Neg", "Tanh", "Relu", "Sigmoid", "Erf", "Cos", "Sin"):
            fn = {"Sqrt": np.sqrt, "Reciprocal": np.reciprocal, "Neg": np.negative, "Tanh": np.tanh,
                  "Relu": lambda v: np.maximum(v, 0), "Sigmoid": lambda v: 1 / (1 + np.exp(-v)),
                  "Erf": _erf, "Cos": np.cos, "Sin": np.sin}[op]
            out = [fn(x[0]).astype(np.float32)]
        elif op == "Softmax":
            out = [_softmax(x[0], a.get("axis", -1))]
        elif op == "LayerNormalization":
            mean = x[0].mean(-1, keepdims=True)
            var = ((x[0] - mean) ** 2).mean(-1, keepdims=True)
            out = [(x[0] - mean) / np.sqrt(var + a["epsilon"]) * x[1] + x[2]]
        elif op == "ReduceMean":
            out = [x[0].mean(axis=tuple(a["axes"]), keepdims=bool(a.get("keepdims", 1)))]
        elif op == "Transpose":
            out = [np.transpose(x[0], a["perm"])]
        elif op == "Reshape":  # a 0 copies the input's dimension (allowzero is never set)
            out = [x[0].reshape([x[0].shape[i] if d == 0 else d for i, d in enumerate(x[1])])]
        elif op == "Flatten":
            out = [x[0].reshape(int(np.prod(x[0].shape[:a["axis"]])), -1)]
        elif op == "Unsqueeze":
            out = [np.expand_dims(x[0], tuple(int(i) for i in x[1]))]
        elif op == "Expand":
            out = [np.broadcast_to(x[0], np.broadcast_shapes(x[0].shape, tuple(x[1]))).copy()]
        elif op == "Concat":
            out = [np.concatenate(x, axis=a["axis"])]
        elif op == "Split":
            out = np.split(x[0], np.cumsum(x[1])[:-1], axis=a["axis"])
        elif op == "Slice":
            out = [_slice(x[0], x[1], x[2], x[3], x[4])]
        elif op == "Shape":
            out = [np.array(x[0].shape, np.int64)]
        elif op == "Range":
            out = [np.arange(x[0], x[1], x[2]).astype(x[0].dtype)]
        elif op == "Cast":
            out = [x[0].astype(_np_dtype(a["to"]))]
        elif op == "ConstantOfShape":
            value = numpy_helper.to_array(a["value"])
            out = [np.full(tuple(int(d) for d in x[0]), value.item(), value.dtype)]
        elif op == "Trilu":
            k = int(x[1]) if len(x) > 1 else 0
            out = [np.triu(x[0], k) if a.get("upper", 1) else np.tril(x[0], k)]
        elif op == "Where":
            out = [np.where(x[0], x[1], x[2]).astype(np.float32)]
        elif op == "Conv":
            out = [_conv(x[0], x[1], a["strides"], a["pads"])]
        elif op == "BatchNormalization":
            shape = (1, -1, 1, 1)
            norm = (x[0] - x[3].reshape(shape)) / np.sqrt(x[4].reshape(shape) + a["epsilon"])
            out = [norm * x[1].reshape(shape) + x[2].reshape(shape)]
        elif op == "MaxPool":
            out = [_maxpool(x[0], a["kernel_shape"], a["strides"], a["pads"])]
        elif op == "GlobalAveragePool":
            out = [x[0].mean(axis=(2, 3), keepdims=True)]
        elif op == "Gemm":
            out = [x[0] @ (x[1].T if a.get("transB", 0) else x[1]) + x[2]]
        else:
            raise NotImplementedError(op)
        for name, value in zip(node.output, out):
            env[name] = np.asarray(value)
    return {o.name: env[o.name] for o in model.graph.output}

# --------------------------------------------------------------------------- reference models


def _ln(x, w, b, eps):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + eps) * w + b


def _heads(x, h):
    b, t, d = x.shape
    return x.reshape(b, t, h, d // h).transpose(0, 2, 1, 3)


def _merge(x):
    b, h, t, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, t, h * d)


def gpt2_reference(W, ids, layers, heads):
    t = ids.shape[1]
    x = W["transformer.wte.weight"][ids] + W["transformer.wpe.weight"][:t]
    causal = np.tril(np.ones((t, t), bool))
    for l in range(layers):
        p = f"transformer.h.{l}."
        a = _ln(x, W[p + "ln_1.weight"], W[p + "ln_1.bias"], 1e-5)
        q, k, v = np.split(a @ W[p + "attn.c_attn.weight"] + W[p + "attn.c_attn.bias"], 3, axis=-1)
        q, k, v = _heads(q, heads), _heads(k, heads), _heads(v, heads)
        s = np.where(causal, q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1]), -np.inf)
        y = _merge(_softmax(s, -1) @ v)
        x = x + y @ W[p + "attn.c_proj.weight"] + W[p + "attn.c_proj.bias"]
        m = _ln(x, W[p + "ln_2.weight"], W[p + "ln_2.bias"], 1e-5)
        m = m @ W[p + "mlp.c_fc.weight"] + W[p + "mlp.c_fc.bias"]
        m = 0.5 * m * (1 + np.tanh(math.sqrt(2 / math.pi) * (m + 0.044715 * m ** 3)))
        x = x + m @ W[p + "mlp.c_proj.weight"] + W[p + "mlp.c_proj.bias"]
    x = _ln(x, W["transformer.ln_f.weight"], W["transformer.ln_f.bias"], 1e-5)
    return x @ W["transformer.wte.weight"].T


def bert_reference(W, ids, layers, heads):
    t = ids.shape[1]
    e = "bert.embeddings."
    x = (W[e + "word_embeddings.weight"][ids] + W[e + "token_type_embeddings.weight"][0]
         + W[e + "position_embeddings.weight"][:t])
    x = _ln(x, W[e + "LayerNorm.weight"], W[e + "LayerNorm.bias"], 1e-12)
    lin = lambda v, p: v @ W[p + ".weight"].T + W[p + ".bias"]
    gelu = lambda v: 0.5 * v * (1 + _erf(v / math.sqrt(2)))
    for l in range(layers):
        p = f"bert.encoder.layer.{l}."
        q, k, v = (_heads(lin(x, p + "attention.self." + n), heads) for n in ("query", "key", "value"))
        y = _merge(_softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1]), -1) @ v)
        x = _ln(lin(y, p + "attention.output.dense") + x, W[p + "attention.output.LayerNorm.weight"],
                W[p + "attention.output.LayerNorm.bias"], 1e-12)
        m = lin(gelu(lin(x, p + "intermediate.dense")), p + "output.dense")
        x = _ln(m + x, W[p + "output.LayerNorm.weight"], W[p + "output.LayerNorm.bias"], 1e-12)
    c = "cls.predictions."
    h = gelu(lin(x, c + "transform.dense"))
    h = _ln(h, W[c + "transform.LayerNorm.weight"], W[c + "transform.LayerNorm.bias"], 1e-12)
    return h @ W[e + "word_embeddings.weight"].T + W[c + "bias"]


def llama_reference(W, ids, layers, heads, eps, kv_heads=None, theta=10000.0):
    """kv_heads < heads: grouped-query attention, query head h reading key/value head
    h // (heads // kv_heads)."""
    t = ids.shape[1]
    x = W["model.embed_tokens.weight"][ids]
    d = x.shape[-1] // heads
    groups = heads // (kv_heads or heads)
    inv = 1.0 / (theta ** (np.arange(0, d, 2) / d))
    freqs = np.outer(np.arange(t), inv)
    cos, sin = np.cos(np.concatenate([freqs] * 2, -1)), np.sin(np.concatenate([freqs] * 2, -1))
    rms = lambda v, w: w * v / np.sqrt((v ** 2).mean(-1, keepdims=True) + eps)
    rot = lambda v: np.concatenate([-v[..., d // 2:], v[..., :d // 2]], -1)
    rope = lambda v: v * cos + rot(v) * sin
    lin = lambda v, p: v @ W[p + ".weight"].T
    causal = np.tril(np.ones((t, t), bool))
    for l in range(layers):
        p = f"model.layers.{l}."
        a = rms(x, W[p + "input_layernorm.weight"])
        q = _heads(lin(a, p + "self_attn.q_proj"), heads)
        k, v = (_heads(lin(a, p + "self_attn." + n), heads // groups) for n in ("k_proj", "v_proj"))
        q, k = rope(q), rope(k)
        k, v = np.repeat(k, groups, axis=1), np.repeat(v, groups, axis=1)
        s = np.where(causal, q @ k.transpose(0, 1, 3, 2) / math.sqrt(d), -np.inf)
        x = x + lin(_merge(_softmax(s, -1) @ v), p + "self_attn.o_proj")
        m = rms(x, W[p + "post_attention_layernorm.weight"])
        g = lin(m, p + "mlp.gate_proj")
        x = x + lin(g / (1 + np.exp(-g)) * lin(m, p + "mlp.up_proj"), p + "mlp.down_proj")
    return lin(rms(x, W["model.norm.weight"]), "lm_head")

# --------------------------------------------------------------------------- checks


def zoo(binary, out, *args):
    result = subprocess.run([binary, *args, "-o", out], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"memc-zoo {' '.join(args)} failed:\n{result.stderr}")
    return result.stdout.strip()


def check_structure(path):
    onnx.checker.check_model(path, full_check=False)
    model = onnx.load(path, load_external_data=False)
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 17)], model.opset_import
    inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    declared = {o.name: o.type for o in model.graph.output}
    for vi in inferred.graph.output:
        assert vi.type == declared[vi.name], (vi.name, vi.type, declared[vi.name])
    names = [n.name for n in model.graph.node]
    assert len(set(names)) == len(names), "node names are not unique"
    bad = {n.op_type for n in model.graph.node} - ALLOWED_OPS
    assert not bad, f"unsupported ops {bad}"

    data_size = os.path.getsize(path + ".data")
    location = os.path.basename(path) + ".data"
    regions = []
    for init in model.graph.initializer:
        assert init.data_location == onnx.TensorProto.EXTERNAL and not init.raw_data, init.name
        ext = {e.key: e.value for e in init.external_data}
        assert ext["location"] == location, ext
        offset, length = int(ext["offset"]), int(ext["length"])
        itemsize = onnx.helper.tensor_dtype_to_np_dtype(init.data_type).itemsize \
            if hasattr(onnx.helper, "tensor_dtype_to_np_dtype") \
            else onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[init.data_type].itemsize
        assert length == int(np.prod(init.dims)) * itemsize, init.name
        assert offset % 64 == 0, init.name
        regions.append((offset, offset + length, init.name))
    regions.sort()
    for (_, end, a), (start, _, b) in zip(regions, regions[1:]):
        assert end <= start, f"{a} overlaps {b}"
    assert regions[-1][1] <= data_size
    return model


def randomized_weights(path):
    """The model's initializers, every parameter replaced by N(0, 0.5^2) so that biases and norm
    scales (0 and 1 in the file) take part in the comparison; buffers keep their file contents."""
    model = onnx.load(path)  # loads the external data
    rng = np.random.default_rng(0)
    weights = {}
    for init in model.graph.initializer:
        value = numpy_helper.to_array(init)
        if not BUFFER.search(init.name):
            value = rng.normal(0, 0.5, value.shape).astype(np.float32) / math.sqrt(value.shape[-1])
            if value.ndim == 1:
                value = value * math.sqrt(value.shape[-1]) + (1.0 if "norm" in init.name.lower()
                                                              or "ln_" in init.name else 0.0)
        weights[init.name] = value
    return model, weights


def check_logits(name, model, W, shape, reference, causal):
    """Evaluates the graph on random input_ids of `shape` and compares its logits with the
    reference; for a causal model also that changing the last token leaves earlier logits alone.
    Returns the relative error."""
    vocab = W[next(n for n in W if "embed" in n or "wte" in n)].shape[0]
    ids = np.random.default_rng(1).integers(0, vocab, shape).astype(np.int64)
    got = run_graph(model, {"input_ids": ids}, W)["logits"]
    want = reference(W, ids)
    err = np.abs(got - want).max() / np.abs(want).max()
    assert got.shape == want.shape and err < 1e-4, (name, got.shape, want.shape, err)
    if causal:
        ids2 = ids.copy()
        ids2[:, -1] = (ids2[:, -1] + 1) % vocab
        got2 = run_graph(model, {"input_ids": ids2}, W)["logits"]
        assert np.allclose(got[:, :-1], got2[:, :-1]) and not np.allclose(got, got2), name
    return err


def check_numerics(binary, workdir):
    cases = [
        ("gpt2-124m", ["--batch", "2", "--seq", "7", "--layers", "2", "--vocab", "53"],
         lambda W, ids: gpt2_reference(W, ids, 2, 12)),
        ("bert-base", ["--batch", "2", "--seq", "7", "--layers", "2", "--vocab", "53"],
         lambda W, ids: bert_reference(W, ids, 2, 12)),
        ("llama-1b", ["--batch", "2", "--seq", "7", "--layers", "2", "--vocab", "53"],
         lambda W, ids: llama_reference(W, ids, 2, 32, 1e-5)),
        ("llama-7b", ["--batch", "1", "--seq", "5", "--layers", "1", "--vocab", "11"],
         lambda W, ids: llama_reference(W, ids, 1, 32, 1e-6)),
        ("llama3-8b", ["--batch", "2", "--seq", "5", "--layers", "1", "--vocab", "11"],
         lambda W, ids: llama_reference(W, ids, 1, 32, 1e-5, kv_heads=8, theta=500000.0)),
        ("gpt2-355m", ["--batch", "1", "--seq", "5", "--layers", "1", "--vocab", "11"],
         lambda W, ids: gpt2_reference(W, ids, 1, 16)),
    ]
    for name, args, reference in cases:
        path = os.path.join(workdir, name + "-small.onnx")
        print(zoo(binary, path, "--model", name, *args))
        check_structure(path)
        model, W = randomized_weights(path)
        shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
        err = check_logits(name, model, W, shape, reference, causal=name != "bert-base")
        print(f"  {name}: structure ok, logits match the numpy reference (rel err {err:.1e})")

    path = os.path.join(workdir, "resnet50-small.onnx")
    print(zoo(binary, path, "--model", "resnet50", "--batch", "2", "--seq", "64", "--layers", "1"))
    check_structure(path)
    model = onnx.load(path)
    W = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    image = np.random.default_rng(2).normal(size=(2, 3, 64, 64)).astype(np.float32)
    logits = run_graph(model, {"input": image}, W)["logits"]
    assert logits.shape == (2, 1000) and np.isfinite(logits).all()
    assert not np.allclose(logits[0], logits[1]) and logits.std() > 1e-3
    print(f"  resnet50: structure ok, logits finite, std {logits.std():.3f}")


def check_dynamic_seq(binary, workdir):
    """--seq dynamic: input_ids [B, "sequence"], nothing sized by T (the RoPE tables and the mask
    computed from the input), one graph correct at any length."""
    path = os.path.join(workdir, "llama3-8b-dynamic.onnx")
    print(zoo(binary, path, "--model", "llama3-8b", "--batch", "2", "--seq", "dynamic",
              "--layers", "1", "--vocab", "11"))
    model = check_structure(path)
    dims = lambda value: [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]
    assert dims(model.graph.input[0]) == [2, "sequence"], dims(model.graph.input[0])
    assert dims(model.graph.output[0]) == [2, "sequence", 11], dims(model.graph.output[0])
    buffers = {i.name: list(i.dims) for i in model.graph.initializer if BUFFER.search(i.name)}
    assert buffers == {"model.rotary_emb.inv_freq": [64]}, buffers
    model, W = randomized_weights(path)
    reference = lambda W, ids: llama_reference(W, ids, 1, 32, 1e-5, kv_heads=8, theta=500000.0)
    for length in (5, 9):
        err = check_logits("llama3-8b --seq dynamic", model, W, [2, length], reference, causal=True)
        print(f"  llama3-8b --seq dynamic at T={length}: logits match the numpy reference "
              f"(rel err {err:.1e})")


def check_weight_modes(binary, workdir):
    args = ["--model", "gpt2-124m", "--batch", "1", "--seq", "8", "--layers", "1", "--vocab", "16"]
    contents = {}
    for mode in ("random", "zeros", "none"):
        path = os.path.join(workdir, f"modes-{mode}.onnx")
        zoo(binary, path, *args, "--weights", mode)
        contents[mode] = {i.name: numpy_helper.to_array(i)
                          for i in onnx.load(path).graph.initializer}
    r, z, n = contents["random"], contents["zeros"], contents["none"]
    w = r["transformer.h.0.attn.c_attn.weight"]
    assert abs(w.std() - 0.02) < 0.002 and abs(w.mean()) < 0.002, (w.mean(), w.std())
    assert (r["transformer.h.0.ln_1.weight"] == 1).all() and (r["transformer.h.0.ln_1.bias"] == 0).all()
    assert all((v == 0).all() for k, v in z.items() if not BUFFER.search(k))
    assert (z["transformer.position_ids"] == np.arange(8)).all()
    assert (z["transformer.h.0.attn.bias"][0, 0] == np.tril(np.ones((8, 8), bool))).all()
    assert all((v == 0).all() for v in n.values())
    again = os.path.join(workdir, "modes-random-again.onnx")
    zoo(binary, again, *args, "--weights", "random")
    with open(again + ".data", "rb") as f1, open(os.path.join(workdir, "modes-random.onnx.data"), "rb") as f2:
        assert f1.read() == f2.read(), "random weights are not deterministic"
    print("  --weights random/zeros/none: contents as documented, random is deterministic")


def check_bad_arguments(binary, workdir):
    out = os.path.join(workdir, "bad.onnx")
    for args in (["--model", "gpt3"], ["--model", "gpt2-124m", "--seq", "8"],
                 ["--model", "gpt2-124m", "--batch", "0", "--seq", "8"],
                 ["--model", "gpt2-124m", "--batch", "1", "--seq", "2048"],
                 ["--model", "gpt2-124m", "--batch", "1"],
                 ["--model", "gpt2-124m", "--batch", "1", "--seq", "8", "--weights", "ones"],
                 ["--model", "resnet50", "--batch", "1", "--vocab", "10"],
                 ["--model", "llama-7b", "--batch", "1", "--seq", "8", "--layers", "33"],
                 ["--model", "gpt2-124m", "--batch", "1", "--seq", "8", "--bogus", "1"],
                 ["--model", "gpt2-124m", "--batch", "1", "--seq", "8",
                  "--vocab", "9223372036854775807"],
                 ["--model", "gpt2-124m", "--batch", "99999999999999999999", "--seq", "8"],
                 ["--model", "resnet50", "--batch", str(2**21)],
                 ["--model", "gpt2-124m", "--batch", "1", "--seq", "dynamic"],
                 ["--model", "resnet50", "--batch", "1", "--seq", "dynamic"]):
        result = subprocess.run([binary, *args, "-o", out], capture_output=True, text=True)
        assert result.returncode == 1 and "error:" in result.stderr, (args, result)
        assert os.listdir(workdir) == [], (args, os.listdir(workdir))
    # A write that fails late (the data file's name is taken by a folder) leaves no model, no
    # temporary and the folder as it was.
    os.mkdir(out + ".data")
    result = subprocess.run([binary, "--model", "gpt2-124m", "--batch", "1", "--seq", "8",
                             "--layers", "1", "--vocab", "16", "-o", out],
                            capture_output=True, text=True)
    assert result.returncode == 1 and "error:" in result.stderr, result
    assert os.listdir(workdir) == ["bad.onnx.data"] and os.listdir(out + ".data") == [], \
        os.listdir(workdir)
    os.rmdir(out + ".data")
    print("  bad arguments and failed writes: exit code 1 with a message, nothing left behind")


def check_full_sizes(binary, workdir):
    for name, expected in EXPECTED_PARAMETERS.items():
        path = os.path.join(workdir, name + ".onnx")
        seq = "224" if name == "resnet50" else "128"
        print(zoo(binary, path, "--model", name, "--batch", "1", "--seq", seq, "--weights", "none"))
        model = check_structure(path)
        count = sum(int(np.prod(i.dims)) for i in model.graph.initializer if not BUFFER.search(i.name))
        assert count == expected, (name, count, expected)
        print(f"  {name}: {count:,} parameters (expected {expected:,})")
        os.remove(path + ".data")


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="memc-zoo-check-") as workdir:
        check_bad_arguments(binary, workdir)
        check_weight_modes(binary, workdir)
        check_numerics(binary, workdir)
        check_dynamic_seq(binary, workdir)
        if "--full" in sys.argv[2:]:
            check_full_sizes(binary, workdir)
    print("all checks passed")


if __name__ == "__main__":
    main()
