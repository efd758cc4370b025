#!/usr/bin/python3
"""Writes references.txt: small cases of every CPU kernel with PyTorch's (or numpy's) results.

Run with Debian's python and torch (not a pyenv python):
    /usr/bin/python3 test/kernels/make_references.py
The output is committed; memc-kernel-tests reads it. Regenerate it only when adding cases.

Format, one record per line:
    case <name> <kernel>
    attr <name> i <int> | f <float> | ints <n> <v...> | s <string>
    in|out <dtype> <rank> <dims...> <values...>
    tol <rtol> <atol>          (optional; else a default per output dtype)
    end
Values: f32 as %.9g (exact round trip; nan, inf, -inf), f16/bf16 as their 16-bit patterns,
integers in decimal, i1 as 0/1. f16/bf16 results follow memc's definition: computed in f32 from
the f16/bf16 inputs and rounded once, so their references are torch's f32 result rounded.
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
from dropout_mask import dropout_keeps  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_nf4  # noqa: E402
from make_dynamic_code import dynamic_code, quantize_block  # noqa: E402

torch.manual_seed(0)
np.random.seed(0)

DTYPES = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int64: "i64",
    torch.int32: "i32",
    torch.bool: "i1",
    torch.uint8: "ui8",
}

lines = []
names = set()


def encode_values(t):
    t = t.contiguous()
    if t.dtype == torch.float32:
        return ["%.9g" % v for v in t.flatten().tolist()]
    if t.dtype in (torch.float16, torch.bfloat16):
        return [str(v & 0xFFFF) for v in t.view(torch.int16).flatten().tolist()]
    if t.dtype == torch.bool:
        return [str(int(v)) for v in t.flatten().tolist()]
    return [str(v) for v in t.flatten().tolist()]


def tensor_line(tag, t):
    return " ".join([tag, DTYPES[t.dtype], str(t.dim())] + [str(d) for d in t.shape] +
                    encode_values(t))


def attr_line(name, value):
    if isinstance(value, bool):
        return "attr %s i %d" % (name, int(value))
    if isinstance(value, int):
        return "attr %s i %d" % (name, value)
    if isinstance(value, float):
        return "attr %s f %r" % (name, value)
    if isinstance(value, str):
        return "attr %s s %s" % (name, value)
    values = [int(v) for v in value]
    return ("attr %s ints %d %s" % (name, len(values), " ".join(map(str, values)))).rstrip()


def case(name, kernel, inputs, outputs, attrs=None, tol=None):
    assert name not in names, name
    assert name.replace("_", "").isalnum(), name  # a gtest parameter name
    names.add(name)
    lines.append("case %s %s" % (name, kernel))
    for key, value in (attrs or {}).items():
        lines.append(attr_line(key, value))
    for t in inputs:
        lines.append(tensor_line("in", t))
    for t in outputs:
        lines.append(tensor_line("out", t))
    if tol:
        lines.append("tol %g %g" % tol)
    lines.append("end")


def randn(*shape):
    return torch.randn(shape, dtype=torch.float32)


def low(x, dtype):
    """x rounded to a 16-bit float type."""
    return x.to(dtype)


# ---------------------------------------------------------------------------------------------
# Unary elementwise
# ---------------------------------------------------------------------------------------------
x = randn(3, 5) * 2
positive = x.abs() + 0.05
unary = {
    "neg": (torch.neg, x),
    "exp": (torch.exp, x),
    "log": (torch.log, positive),
    "sqrt": (torch.sqrt, positive),
    "reciprocal": (torch.reciprocal, x),
    "erf": (torch.erf, x),
    "tanh": (torch.tanh, x),
    "sigmoid": (torch.sigmoid, x),
    "relu": (torch.relu, x),
}
for kernel, (fn, value) in unary.items():
    case("%s_f32" % kernel, kernel, [value], [fn(value)])
    for dtype in (torch.float16, torch.bfloat16):
        v = low(value, dtype)
        case("%s_%s" % (kernel, DTYPES[dtype]), kernel, [v], [fn(v.float()).to(dtype)])

special = torch.tensor([0.0, -0.0, 1.0, -1.0, float("inf"), float("-inf"), float("nan"), 1e-30,
                        -50.0, 50.0, 100.0, -100.0])
for kernel in ("exp", "log", "sqrt", "reciprocal", "erf", "tanh", "sigmoid", "relu", "neg"):
    fn = unary[kernel][0]
    case("%s_f32_special" % kernel, kernel, [special], [fn(special)])
wide = torch.linspace(-6, 6, 49)
case("erf_f32_wide", "erf", [wide], [torch.erf(wide)])

ints = torch.tensor([[-7, 0, 3], [2**40, -(2**40), 5]], dtype=torch.int64)
case("neg_i64", "neg", [ints], [-ints])
case("relu_i64", "relu", [ints], [torch.relu(ints)])
case("neg_i32", "neg", [ints.clamp(-1000, 1000).int()], [-ints.clamp(-1000, 1000).int()])
case("relu_i32", "relu", [ints.clamp(-1000, 1000).int()],
     [torch.relu(ints.clamp(-1000, 1000).int())])

mask = torch.rand(2, 5) > 0.5
case("not_i1", "not", [mask], [torch.logical_not(mask)])

for approximate in ("none", "tanh"):
    g = randn(4, 6) * 3
    case("gelu_%s_f32" % approximate, "gelu", [g], [F.gelu(g, approximate=approximate)],
         {"approximate": approximate})
    for dtype in (torch.float16, torch.bfloat16):
        v = low(g, dtype)
        case("gelu_%s_%s" % (approximate, DTYPES[dtype]), "gelu", [v],
             [F.gelu(v.float(), approximate=approximate).to(dtype)], {"approximate": approximate})
g = randn(7)
case("gelu_default_f32", "gelu", [g], [F.gelu(g)])

c = randn(3, 4) * 3
case("clip_both_f32", "clip", [c], [torch.clamp(c, -1.0, 2.0)], {"min": -1.0, "max": 2.0})
case("clip_min_f32", "clip", [c], [torch.clamp(c, min=0.5)], {"min": 0.5})
case("clip_max_f32", "clip", [c], [torch.clamp(c, max=-0.25)], {"max": -0.25})
case("clip_none_f32", "clip", [c], [c])
case("clip_relu6_bf16", "clip", [low(c, torch.bfloat16)],
     [torch.clamp(low(c, torch.bfloat16).float(), 0.0, 6.0).bfloat16()], {"min": 0.0, "max": 6.0})
ci = torch.arange(-6, 6, dtype=torch.int64).reshape(3, 4)
case("clip_i64", "clip", [ci], [torch.clamp(ci, -2, 3)], {"min": -2.0, "max": 3.0})
case("clip_i32", "clip", [ci.int()], [torch.clamp(ci.int(), min=1)], {"min": 1.0})

t = randn(2, 3, 4)
for k in (-1, 0, 2):
    case("trilu_upper_k%d" % (k + 1), "trilu", [t], [torch.triu(t, k)], {"k": k, "upper": True})
    case("trilu_lower_k%d" % (k + 1), "trilu", [t], [torch.tril(t, k)], {"k": k, "upper": False})
case("trilu_lower_i64", "trilu", [ci], [torch.tril(ci, 0)], {"k": 0, "upper": False})
ones = torch.ones(4, 4, dtype=torch.bool)
case("trilu_causal_i1", "trilu", [ones], [torch.tril(ones)], {"k": 0, "upper": False})
case("trilu_upper_far_k", "trilu", [t], [torch.triu(t, 100)], {"k": 100, "upper": True})

# ---------------------------------------------------------------------------------------------
# cast
# ---------------------------------------------------------------------------------------------
fractions = torch.tensor([-2.7, -0.5, -0.0, 0.0, 0.5, 2.7, 1000.9, -123456.75])
case("cast_f32_i64", "cast", [fractions], [fractions.to(torch.int64)])
case("cast_f32_i32", "cast", [fractions], [fractions.to(torch.int32)])
truthy = torch.tensor([0.0, -0.0, 0.1, -3.0, float("inf"), float("nan")])
case("cast_f32_i1", "cast", [truthy], [truthy.to(torch.bool)])
case("cast_i1_f32", "cast", [mask], [mask.float()])
case("cast_i1_i64", "cast", [mask], [mask.long()])
case("cast_i1_bf16", "cast", [mask], [mask.bfloat16()])
big = torch.tensor([0, -1, 2**24 + 1, 2**40 + 3, -(2**53) - 7, 2**62], dtype=torch.int64)
case("cast_i64_f32", "cast", [big], [big.float()])
case("cast_i64_f16", "cast", [big[:3]], [big[:3].float().half()])
case("cast_i64_i32", "cast", [big], [big.to(torch.int32)])
case("cast_i64_i1", "cast", [big], [big.to(torch.bool)])
case("cast_i32_i64", "cast", [big[:2].int()], [big[:2].long()])
case("cast_i32_f32", "cast", [torch.tensor([-5, 7, 2**30], dtype=torch.int32)],
     [torch.tensor([-5.0, 7.0, 2.0**30])])
# Rounding to 16 bits: ties, subnormals, overflow, NaN.
rounding = torch.tensor([
    0.0, -0.0, 1.0, 65504.0, 65519.99, 65520.0, 1e6, -1e6, 2.0**-14, 2.0**-24, 2.0**-25,
    3 * 2.0**-26, 2.0**-25 * 1.0001, 1e-8, 1 + 2.0**-11, 1 + 3 * 2.0**-11, 1 + 2.0**-8,
    1 + 3 * 2.0**-8, 3.14159265, -2.71828182, 1e-40, 3.3895e38, float("inf"), float("-inf"),
    float("nan"), 0.1, 1 / 3.0, 2.0**-133, -(2.0**-140)
], dtype=torch.float32)
case("cast_f32_f16_rounding", "cast", [rounding], [rounding.half()])
case("cast_f32_bf16_rounding", "cast", [rounding], [rounding.bfloat16()])
h = randn(20).half()
case("cast_f16_f32", "cast", [h], [h.float()])
case("cast_f16_bf16", "cast", [h], [h.float().bfloat16()])
case("cast_bf16_f16", "cast", [h.bfloat16()], [h.bfloat16().float().half()])
case("cast_f16_i64", "cast", [(h * 100).half()], [(h * 100).half().float().long()])
case("cast_bf16_f32", "cast", [h.bfloat16()], [h.bfloat16().float()])

# ---------------------------------------------------------------------------------------------
# dropout: the mask is splitmix64 on (seed, index); an independent implementation in
# test/fixtures/dropout_mask.py.
# ---------------------------------------------------------------------------------------------


def dropout_reference(x, ratio, seed):
    keep = dropout_keeps(tuple(x.shape), ratio, seed).flatten().tolist()
    scale = np.float32(1.0 / (1.0 - ratio))
    out = [float(np.float32(v) * scale) if kept else 0.0
           for v, kept in zip(x.float().flatten().tolist(), keep)]
    return torch.tensor(out, dtype=torch.float32).reshape(x.shape)


d = randn(4, 8)
for ratio, seed in ((0.5, 0), (0.1, 42), (0.0, 7), (0.9, -3)):
    tag = ("r%g_s%d" % (ratio, seed)).replace(".", "p").replace("-", "m")
    case("dropout_" + tag, "dropout", [d], [dropout_reference(d, ratio, seed)],
         {"ratio": ratio, "seed": seed})
case("dropout_bf16", "dropout", [d.bfloat16()],
     [dropout_reference(d.bfloat16(), 0.25, 5).bfloat16()], {"ratio": 0.25, "seed": 5})

# ---------------------------------------------------------------------------------------------
# Broadcasting binary ops, comparisons, where
# ---------------------------------------------------------------------------------------------
shapes = [((2, 3, 4), (3, 1)), ((4,), ()), ((), (2, 3)), ((2, 1, 4), (3, 1)), ((3, 4), (3, 4)),
          ((1, 4), (3, 1)), ((2, 3, 4, 5), (3, 1, 5))]
binary = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}
for kernel, fn in binary.items():
    for index, (sa, sb) in enumerate(shapes):
        a, b = randn(*sa), randn(*sb)
        if kernel == "div":
            b = b.sign() * (b.abs() + 0.5)
        case("%s_f32_%d" % (kernel, index), kernel, [a, b], [fn(a, b)])
    a, b = randn(2, 3, 4), randn(4)
    if kernel == "div":
        b = b.sign() * (b.abs() + 0.5)
    for dtype in (torch.float16, torch.bfloat16):
        la, lb = low(a, dtype), low(b, dtype)
        case("%s_%s" % (kernel, DTYPES[dtype]), kernel, [la, lb],
             [fn(la.float(), lb.float()).to(dtype)])

ia = torch.tensor([[-7, 7, 9, -9], [100, -100, 2**40, -(2**40)]], dtype=torch.int64)
ib = torch.tensor([2, -3, 4, -2], dtype=torch.int64)
case("add_i64", "add", [ia, ib], [ia + ib])
case("sub_i64", "sub", [ia, ib], [ia - ib])
case("mul_i64", "mul", [ia, ib], [ia * ib])
case("div_i64_trunc", "div", [ia, ib], [torch.div(ia, ib, rounding_mode="trunc")])
case("div_i32_trunc", "div", [ia[:1].int(), ib.int()],
     [torch.div(ia[:1].int(), ib.int(), rounding_mode="trunc")])
case("mul_i32", "mul", [ia[:1].int(), ib.int()], [ia[:1].int() * ib.int()])
pe = torch.tensor([0, 1, 3, 5], dtype=torch.int64)
case("pow_i64", "pow", [ia[:1], pe], [torch.pow(ia[:1], pe)])

base = torch.tensor([[2.0, -2.0, 0.5, 0.0], [-1.5, 3.0, 10.0, 1.0]])
expo = torch.tensor([3.0, 2.0, -1.0, 0.5])
case("pow_f32", "pow", [base, expo], [torch.pow(base, expo)])
pb = randn(3, 4).abs() + 0.1
pexp = randn(4)
case("pow_f32_broadcast", "pow", [pb, pexp], [torch.pow(pb, pexp)])
case("pow_bf16", "pow", [pb.bfloat16(), pexp.bfloat16()],
     [torch.pow(pb.bfloat16().float(), pexp.bfloat16().float()).bfloat16()])
case("pow_f16_scalar", "pow", [pb.half(), torch.tensor(2.0).half()],
     [torch.pow(pb.half().float(), 2.0).half()])

ca = torch.tensor([[1.0, 2.0, float("nan"), -1.0], [0.0, -0.0, 3.0, 5.0]])
cb = torch.tensor([1.0, float("nan"), float("nan"), 0.0])
for kernel, fn in (("equal", torch.eq), ("less", torch.lt), ("greater", torch.gt)):
    case("%s_f32" % kernel, kernel, [ca, cb], [fn(ca, cb)])
    case("%s_i64" % kernel, kernel, [ia, ib], [fn(ia, ib)])
    case("%s_f16" % kernel, kernel, [ca.half(), cb.half()], [fn(ca, cb)])
    case("%s_i32_scalar" % kernel, kernel, [ia[:1].int(), torch.tensor([7], dtype=torch.int32)],
         [fn(ia[:1].int(), torch.tensor([7], dtype=torch.int32))])
ba, bb = torch.tensor([True, False, True, False]), torch.tensor([[True], [False]])
case("equal_i1", "equal", [ba, bb], [torch.eq(ba, bb)])

causal = torch.tril(torch.ones(4, 4, dtype=torch.bool)).reshape(1, 1, 4, 4)
scores = randn(2, 3, 4, 4)
ninf = torch.tensor(float("-inf"))
case("where_causal", "where", [causal, scores, ninf], [torch.where(causal, scores, ninf)])
wc = torch.rand(3, 1) > 0.5
wa = torch.arange(4, dtype=torch.int64)
wb = torch.tensor([[-1], [-2], [-3]], dtype=torch.int64)
case("where_i64", "where", [wc, wa, wb], [torch.where(wc, wa, wb)])
wt = randn(2, 3).half()
wmask = torch.rand(2, 3) > 0.3
case("where_f16", "where", [wmask, wt, torch.zeros(3).half()],
     [torch.where(wmask, wt, torch.zeros(3).half())])
case("where_i1", "where", [wmask, torch.ones(2, 3, dtype=torch.bool), torch.tensor(False)],
     [wmask.clone()])

# ---------------------------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------------------------
mm = [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
      ((2, 1, 3, 4), (5, 4, 2)), ((2, 3, 4), (2, 4, 6)), ((1, 3, 4), (2, 4, 2)), ((4,), (3, 4, 2)),
      ((2, 3, 4), (4,)), ((3, 0), (0, 2)), ((17, 33), (33, 9))]
for index, (sa, sb) in enumerate(mm):
    a, b = randn(*sa), randn(*sb)
    case("matmul_f32_%d" % index, "matmul", [a, b], [torch.matmul(a, b)])
for dtype in (torch.float16, torch.bfloat16):
    a, b = low(randn(2, 3, 8), dtype), low(randn(8, 4), dtype)
    case("matmul_%s" % DTYPES[dtype], "matmul", [a, b],
         [torch.matmul(a.float(), b.float()).to(dtype)])
    a, b = low(randn(2, 1, 3, 8), dtype), low(randn(3, 8, 2), dtype)
    case("matmul_%s_batch" % DTYPES[dtype], "matmul", [a, b],
         [torch.matmul(a.float(), b.float()).to(dtype)])
ma = torch.randint(-5, 5, (2, 3, 4))
mb = torch.randint(-5, 5, (4, 2))
case("matmul_i64", "matmul", [ma, mb], [torch.matmul(ma, mb)])
case("matmul_i32", "matmul", [ma.int(), mb.int()], [torch.matmul(ma, mb).int()])

# ---------------------------------------------------------------------------------------------
# softmax, log_softmax, layer_norm, batch_norm
# ---------------------------------------------------------------------------------------------
s = randn(2, 3, 4) * 3
for axis in range(3):
    case("softmax_axis%d" % axis, "softmax", [s], [torch.softmax(s, axis)], {"axis": axis})
    case("log_softmax_axis%d" % axis, "log_softmax", [s], [torch.log_softmax(s, axis)],
         {"axis": axis})
large = torch.tensor([[1000.0, 1001.0, 999.0, -1000.0], [-1e4, -1e4 + 1, -1e4 - 5, -1e4]])
case("softmax_large", "softmax", [large], [torch.softmax(large, 1)], {"axis": 1})
case("log_softmax_large", "log_softmax", [large], [torch.log_softmax(large, 1)], {"axis": 1})
masked = torch.tensor([[0.5, float("-inf"), 1.0, float("-inf")]])
case("softmax_masked", "softmax", [masked], [torch.softmax(masked, 1)], {"axis": 1})
wide_rows = randn(3, 130)
case("softmax_wide", "softmax", [wide_rows], [torch.softmax(wide_rows, 1)], {"axis": 1})
sx = randn(2, 5, 70)
case("softmax_strided", "softmax", [sx], [torch.softmax(sx, 1)], {"axis": 1})
for dtype in (torch.float16, torch.bfloat16):
    v = low(s, dtype)
    case("softmax_%s" % DTYPES[dtype], "softmax", [v], [torch.softmax(v.float(), 2).to(dtype)],
         {"axis": 2})
    case("log_softmax_%s" % DTYPES[dtype], "log_softmax", [v],
         [torch.log_softmax(v.float(), 1).to(dtype)], {"axis": 1})

ln = randn(2, 3, 4) * 2 + 1
w, b = randn(4), randn(4)
case("layer_norm_last", "layer_norm", [ln, w, b], [F.layer_norm(ln, (4,), w, b, 1e-5)],
     {"axis": 2, "epsilon": 1e-5})
w2 = randn(3, 4)
case("layer_norm_two_dims_no_bias", "layer_norm", [ln, w2],
     [F.layer_norm(ln, (3, 4), w2, None, 1e-3)], {"axis": 1, "epsilon": 1e-3})
offset = randn(3, 16) * 0.01 + 1000.0
w16, b16 = randn(16), randn(16)
case("layer_norm_large_mean", "layer_norm", [offset, w16, b16],
     [F.layer_norm(offset.double(), (16,), w16.double(), b16.double(), 1e-5).float()],
     {"axis": 1, "epsilon": 1e-5}, tol=(1e-4, 1e-4))
lb = low(ln, torch.bfloat16)
case("layer_norm_bf16_f32_params", "layer_norm", [lb, w, b],
     [F.layer_norm(lb.float(), (4,), w, b, 1e-5).bfloat16()], {"axis": 2, "epsilon": 1e-5})
lh = low(ln, torch.float16)
case("layer_norm_f16", "layer_norm", [lh, w.half(), b.half()],
     [F.layer_norm(lh.float(), (4,), w.half().float(), b.half().float(), 1e-5).half()],
     {"axis": 2, "epsilon": 1e-5})

for shape in ((4, 3), (2, 3, 5), (2, 3, 4, 4)):
    bx = randn(*shape) * 2 + 0.5
    scale, bias = randn(3), randn(3)
    mean, var = randn(3) * 0.1, randn(3).abs() + 0.5
    suffix = "rank%d" % len(shape)
    attrs = {"epsilon": 1e-5, "momentum": 0.1, "training": False}
    case("batch_norm_eval_" + suffix, "batch_norm", [bx, scale, bias, mean, var],
         [F.batch_norm(bx, mean, var, scale, bias, False, 0.1, 1e-5)], attrs)
    attrs = dict(attrs, training=True)
    case("batch_norm_train_" + suffix, "batch_norm", [bx, scale, bias, mean, var],
         [F.batch_norm(bx, mean.clone(), var.clone(), scale, bias, True, 0.1, 1e-5)], attrs)
bh = randn(2, 3, 4, 4).half()
scale, bias, mean, var = randn(3), randn(3), randn(3) * 0.1, randn(3).abs() + 0.5
case("batch_norm_train_f16", "batch_norm", [bh, scale, bias, mean, var],
     [F.batch_norm(bh.float(), mean.clone(), var.clone(), scale, bias, True, 0.1, 1e-5).half()],
     {"epsilon": 1e-5, "momentum": 0.1, "training": True})

# ---------------------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------------------
r = randn(2, 3, 4, 5)
axes_sets = [[1], [0, 2], [3], [0], [0, 1, 2, 3], [1, 3], [], [0, 3]]
for index, axes in enumerate(axes_sets):
    for keepdims in (False, True):
        tag = "%d_%s" % (index, "keep" if keepdims else "drop")
        if axes:
            total = torch.sum(r, dim=axes, keepdim=keepdims)
            average = torch.mean(r, dim=axes, keepdim=keepdims)
            largest = torch.amax(r, dim=axes, keepdim=keepdims)
        else:
            total = average = largest = r
        attrs = {"axes": axes, "keepdims": keepdims}
        case("reduce_sum_" + tag, "reduce_sum", [r], [total], attrs)
        case("reduce_mean_" + tag, "reduce_mean", [r], [average], attrs)
        case("reduce_max_" + tag, "reduce_max", [r], [largest], attrs)
ri = torch.randint(-50, 50, (3, 4, 5))
for axes in ([1], [0, 2]):
    attrs = {"axes": axes, "keepdims": False}
    count = 1
    for a in axes:
        count *= ri.shape[a]
    total = torch.sum(ri, dim=axes)
    tag = "_".join(map(str, axes))
    case("reduce_sum_i64_" + tag, "reduce_sum", [ri], [total], attrs)
    case("reduce_mean_i64_" + tag, "reduce_mean", [ri],
         [torch.div(total, count, rounding_mode="trunc")], attrs)
    case("reduce_max_i32_" + tag, "reduce_max", [ri.int()], [torch.amax(ri.int(), dim=axes)],
         attrs)
    case("reduce_sum_i32_" + tag, "reduce_sum", [ri.int()], [total.int()], attrs)
rh = randn(4, 6).bfloat16()
case("reduce_sum_bf16", "reduce_sum", [rh], [rh.float().sum(1, keepdim=True).bfloat16()],
     {"axes": [1], "keepdims": True})
case("reduce_mean_f16", "reduce_mean", [rh.half()], [rh.half().float().mean(0).half()],
     {"axes": [0], "keepdims": False})
rn = torch.tensor([[1.0, float("nan"), 3.0], [4.0, 5.0, -float("inf")]])
case("reduce_max_nan", "reduce_max", [rn], [torch.amax(rn, 1)], {"axes": [1], "keepdims": False})
bias_grad = randn(4, 8, 300)
case("reduce_sum_bias_grad", "reduce_sum", [bias_grad], [bias_grad.sum((0, 1))],
     {"axes": [0, 1], "keepdims": False})

# ---------------------------------------------------------------------------------------------
# Layout
# ---------------------------------------------------------------------------------------------
tx = randn(2, 3, 4)
for perm in ([2, 0, 1], [0, 2, 1], [1, 0, 2], [0, 1, 2]):
    case("transpose_" + "".join(map(str, perm)), "transpose", [tx],
         [tx.permute(perm).contiguous()], {"perm": perm})
t4 = randn(2, 3, 2, 5)
case("transpose_heads", "transpose", [t4], [t4.permute(0, 2, 1, 3).contiguous()],
     {"perm": [0, 2, 1, 3]})
case("transpose_i1", "transpose", [mask], [mask.t().contiguous()], {"perm": [1, 0]})
case("transpose_f16", "transpose", [tx.half()], [tx.half().permute(2, 1, 0).contiguous()],
     {"perm": [2, 1, 0]})
case("transpose_i64", "transpose", [ri], [ri.permute(1, 2, 0).contiguous()],
     {"perm": [1, 2, 0]})

case("reshape_f32", "reshape", [tx], [tx.reshape(4, 6)])
case("reshape_i32", "reshape", [ri.int()], [ri.int().reshape(60)])
case("reshape_scalar", "reshape", [torch.tensor([3.5])], [torch.tensor(3.5)])

for index, (src, dst) in enumerate([((3, 1), (2, 3, 4)), ((), (2, 2)), ((4,), (3, 4)),
                                    ((1, 3, 1), (2, 3, 2)), ((2, 3), (2, 3))]):
    v = randn(*src)
    case("broadcast_to_%d" % index, "broadcast_to", [v], [v.expand(*dst).contiguous()])
case("broadcast_to_i1", "broadcast_to", [torch.tensor([True, False])],
     [torch.tensor([True, False]).expand(3, 2).contiguous()])

p, q, u = randn(2, 3), randn(2, 1), randn(2, 4)
case("concat_axis1", "concat", [p, q, u], [torch.cat([p, q, u], 1)], {"axis": 1})
cp = randn(4, 3)
case("concat_axis0", "concat", [p, cp], [torch.cat([p, cp], 0)], {"axis": 0})
case("concat_single", "concat", [p], [p], {"axis": 0})
case("concat_i64_empty_piece", "concat",
     [ri[:, :2], torch.zeros(3, 0, 5, dtype=torch.int64), ri[:, 2:]], [ri], {"axis": 1})

sp = randn(2, 7, 3)
case("split_axis1", "split", [sp], list(torch.split(sp, [2, 0, 5], 1)),
     {"axis": 1, "sizes": [2, 0, 5]})
case("split_axis2", "split", [sp], list(torch.split(sp, [1, 2], 2)), {"axis": 2, "sizes": [1, 2]})
case("split_bf16", "split", [sp.bfloat16()], list(torch.split(sp.bfloat16(), [3, 4], 1)),
     {"axis": 1, "sizes": [3, 4]})

sl = np.random.randn(5, 6, 4).astype(np.float32)
slices = [
    (slice(1, 4, 1), slice(None), slice(None)),
    (slice(None, None, -1), slice(None), slice(None)),
    (slice(4, 0, -2), slice(1, 6, 2), slice(None, None, -1)),
    (slice(None), slice(5, None, -3), slice(3, 4, 1)),
    (slice(2, 2, 1), slice(None), slice(None)),
    (slice(0, 5, 10), slice(-1, None, 1), slice(None, None, -2)),
]
for index, spec in enumerate(slices):
    starts, limits, steps = [], [], []
    for dim, part in zip(sl.shape, spec):
        start, limit, step = part.indices(dim)
        starts.append(start)
        limits.append(limit)
        steps.append(step)
    expected = np.ascontiguousarray(sl[spec])
    case("slice_%d" % index, "slice", [torch.from_numpy(sl)], [torch.from_numpy(expected)],
         {"starts": starts, "limits": limits, "steps": steps})
si = torch.arange(10, dtype=torch.int64)
case("slice_i64_reverse", "slice", [si], [torch.flip(si, [0])],
     {"starts": [9], "limits": [-1], "steps": [-1]})

table = randn(6, 4)
ids = torch.tensor([[0, 5, -1], [2, -6, 3]], dtype=torch.int64)
case("gather_embedding", "gather", [table, ids],
     [torch.from_numpy(np.take(table.numpy(), ids.numpy(), axis=0))], {"axis": 0})
cols = torch.tensor([3, -2, 0], dtype=torch.int32)
gd = randn(2, 4, 3)
case("gather_axis1_i32", "gather", [gd, cols],
     [torch.from_numpy(np.take(gd.numpy(), cols.numpy().astype(np.int64), axis=1))], {"axis": 1})
case("gather_scalar_index", "gather", [gd, torch.tensor(-1)], [gd[:, :, -1].contiguous()],
     {"axis": 2})
case("gather_i64_data", "gather", [ri, torch.tensor([2, 0], dtype=torch.int64)],
     [ri[[2, 0]]], {"axis": 0})

# ---------------------------------------------------------------------------------------------
# Convolution and pooling
# ---------------------------------------------------------------------------------------------
def conv_case(name, dims, x, w, bias, stride, pads, dilation, group, dtype=None):
    """pads: begins then ends, as memc; torch gets them by F.pad."""
    torch_pad = []
    for d in reversed(range(dims)):
        torch_pad += [pads[d], pads[d + dims]]
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[dims]
    xs, ws = x, w
    bs = bias
    if dtype is not None:
        xs, ws = x.to(dtype), w.to(dtype)
        bs = bias.to(dtype) if bias is not None else None
        x, w = xs.float(), ws.float()
        bias = bs.float() if bs is not None else None
    expected = fn(F.pad(x, torch_pad), w, bias, stride, 0, dilation, group)
    if dtype is not None:
        expected = expected.to(dtype)
    attrs = {"strides": [stride] * dims if isinstance(stride, int) else stride, "pads": pads,
             "dilations": [dilation] * dims if isinstance(dilation, int) else dilation,
             "group": group}
    inputs = [xs, ws] + ([bs] if bs is not None else [])
    case(name, "conv", inputs, [expected], attrs, tol=(1e-4, 1e-5) if dtype is None else None)


conv_case("conv2d_basic", 2, randn(2, 3, 6, 6), randn(4, 3, 3, 3), randn(4), 1, [1, 1, 1, 1], 1, 1)
conv_case("conv2d_no_bias_stride2", 2, randn(1, 2, 7, 8), randn(3, 2, 3, 2), None, 2,
          [0, 0, 0, 0], 1, 1)
conv_case("conv2d_groups_dilation", 2, randn(2, 4, 9, 9), randn(6, 2, 3, 3), randn(6), [2, 1],
          [1, 2, 0, 1], [2, 1], 2)
conv_case("conv2d_depthwise", 2, randn(1, 3, 5, 5), randn(3, 1, 3, 3), randn(3), 1,
          [1, 1, 1, 1], 1, 3)
conv_case("conv2d_pointwise", 2, randn(2, 5, 4, 3), randn(7, 5, 1, 1), randn(7), 1,
          [0, 0, 0, 0], 1, 1)
conv_case("conv2d_pointwise_stride", 2, randn(1, 3, 5, 5), randn(2, 3, 1, 1), None, 2,
          [0, 0, 0, 0], 1, 1)
conv_case("conv2d_pad_end_only", 2, randn(1, 2, 4, 4), randn(2, 2, 1, 1), None, 1,
          [0, 0, 1, 2], 1, 1)
conv_case("conv2d_large_pad", 2, randn(1, 1, 3, 3), randn(2, 1, 2, 2), randn(2), 1,
          [3, 0, 2, 4], 1, 1)
conv_case("conv1d", 1, randn(2, 3, 11), randn(4, 3, 3), randn(4), 2, [2, 1], 2, 1)
conv_case("conv1d_groups", 1, randn(1, 6, 8), randn(9, 2, 2), None, 1, [0, 0], 3, 3)
conv_case("conv3d", 3, randn(1, 2, 4, 5, 4), randn(3, 2, 2, 3, 2), randn(3), [1, 2, 1],
          [1, 0, 1, 0, 1, 0], 1, 1)
conv_case("conv2d_f16", 2, randn(1, 2, 5, 5), randn(3, 2, 3, 3), randn(3), 1, [1, 1, 1, 1], 1,
          1, dtype=torch.float16)
conv_case("conv2d_bf16", 2, randn(2, 4, 5, 5), randn(4, 2, 3, 3), None, 2, [1, 1, 1, 1], 1, 2,
          dtype=torch.bfloat16)
conv_case("conv2d_stem", 2, randn(1, 3, 16, 16), randn(8, 3, 7, 7), None, 2, [3, 3, 3, 3], 1, 1)


def pool_case(name, kind, dims, x, kernel, stride, pad, dilation, ceil_mode,
              count_include_pad=None, dtype=None):
    if dtype is not None:
        x = x.to(dtype)
    xf = x.float()
    if kind == "max_pool":
        fn = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[dims]
        expected = fn(xf, kernel, stride, pad, dilation, ceil_mode)
    else:
        assert dilation == 1
        fn = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[dims]
        expected = fn(xf, kernel, stride, pad, ceil_mode, count_include_pad)
    if dtype is not None:
        expected = expected.to(dtype)
    listify = lambda v: [v] * dims if isinstance(v, int) else list(v)
    attrs = {"kernel_shape": listify(kernel), "strides": listify(stride),
             "pads": listify(pad) * 2, "dilations": listify(dilation), "ceil_mode": ceil_mode}
    if kind == "avg_pool":
        attrs["count_include_pad"] = count_include_pad
    case(name, kind, [x], [expected], attrs)


px = randn(2, 3, 7, 7)
for ceil_mode in (False, True):
    tag = "ceil" if ceil_mode else "floor"
    pool_case("max_pool2d_k3s2p1_" + tag, "max_pool", 2, px, 3, 2, 1, 1, ceil_mode)
    pool_case("max_pool2d_k2s2_" + tag, "max_pool", 2, px, 2, 2, 0, 1, ceil_mode)
    pool_case("max_pool2d_dilated_" + tag, "max_pool", 2, px, 2, [2, 1], [1, 0], 2, ceil_mode)
    for include in (False, True):
        itag = tag + ("_incl" if include else "_excl")
        pool_case("avg_pool2d_k3s2p1_" + itag, "avg_pool", 2, px, 3, 2, 1, 1, ceil_mode, include)
        pool_case("avg_pool2d_k2s3p1_" + itag, "avg_pool", 2, randn(1, 2, 8, 8), 2, 3, 1, 1,
                  ceil_mode, include)
        pool_case("avg_pool1d_k3s2p1_" + itag, "avg_pool", 1, randn(2, 2, 10), 3, 2, 1, 1,
                  ceil_mode, include)
pool_case("max_pool1d", "max_pool", 1, randn(2, 3, 9), 3, 2, 1, 1, False)
pool_case("max_pool3d", "max_pool", 3, randn(1, 2, 5, 4, 5), [2, 3, 2], [2, 1, 2], [1, 1, 0], 1,
          True)
pool_case("avg_pool3d", "avg_pool", 3, randn(1, 2, 5, 4, 5), [2, 3, 2], [2, 1, 2], [1, 1, 0], 1,
          True, True)
pool_case("max_pool2d_f16", "max_pool", 2, px, 3, 2, 1, 1, False, dtype=torch.float16)
pool_case("avg_pool2d_bf16", "avg_pool", 2, px, 3, 2, 1, 1, True, False, dtype=torch.bfloat16)
nanpool = px.clone()
nanpool[0, 0, 1, 1] = float("nan")
pool_case("max_pool2d_nan", "max_pool", 2, nanpool, 2, 2, 0, 1, False)
oblong = randn(2, 2, 5, 9)
pool_case("max_pool2d_oblong", "max_pool", 2, oblong, [3, 2], [1, 2], [1, 0], [1, 2], True)
pool_case("avg_pool2d_oblong", "avg_pool", 2, oblong, [2, 3], [2, 1], [1, 1], 1, True, False)

# ---------------------------------------------------------------------------------------------
# Training: backward ops and losses. Gradients come from torch.autograd: the forward op on
# leaves that require grad, backward(g), the leaves' .grad. f16/bf16 cases follow memc's
# definition (f32 compute from the rounded inputs, one rounding), so their references are the
# f32 gradients of the rounded inputs, rounded. The section seeds its own generator so that
# cases added above it leave its data alone.
# ---------------------------------------------------------------------------------------------
torch.manual_seed(1)
np.random.seed(1)
LOW = (torch.float16, torch.bfloat16)


def autograd(fn, inputs, g):
    """The gradients of fn(*inputs) . g with respect to every input, in f32 for 16-bit ones."""
    leaves = [t.detach().float().clone().requires_grad_(True) for t in inputs]
    fn(*leaves).backward(g.float())
    return [t.grad for t in leaves]


for approximate in ("none", "tanh"):
    x, g = randn(4, 6) * 3, randn(4, 6)
    gelu = lambda v: F.gelu(v, approximate=approximate)
    case("gelu_grad_%s_f32" % approximate, "gelu_grad", [g, x], autograd(gelu, [x], g),
         {"approximate": approximate})
    for dtype in LOW:
        xl, gl = low(x, dtype), low(g, dtype)
        case("gelu_grad_%s_%s" % (approximate, DTYPES[dtype]), "gelu_grad", [gl, xl],
             [autograd(gelu, [xl], gl)[0].to(dtype)], {"approximate": approximate})
x = torch.tensor([-12.0, -5.0, -2.5, -1.0, -1e-3, 0.0, 1e-3, 0.7, 1.0, 2.5, 5.0, 12.0])
g = torch.linspace(-2, 2, 12)
case("gelu_grad_default_f32", "gelu_grad", [g, x], autograd(F.gelu, [x], g))
case("gelu_grad_tanh_wide_f32", "gelu_grad", [g, x],
     autograd(lambda v: F.gelu(v, approximate="tanh"), [x], g), {"approximate": "tanh"})

s = randn(2, 3, 4) * 3
for axis in range(3):
    for kernel, fn in (("softmax_grad", torch.softmax), ("log_softmax_grad", torch.log_softmax)):
        g = randn(2, 3, 4)
        case("%s_axis%d" % (kernel, axis), kernel, [g, fn(s, axis)],
             autograd(lambda v: fn(v, axis), [s], g), {"axis": axis})
for name, shape, axis in (("wide", (3, 130), 1), ("strided", (2, 5, 70), 1),
                          ("large", (2, 9), 1)):
    v = randn(*shape) * (300 if name == "large" else 2)
    for kernel, fn in (("softmax_grad", torch.softmax), ("log_softmax_grad", torch.log_softmax)):
        g = randn(*shape)
        case("%s_%s" % (kernel, name), kernel, [g, fn(v, axis)],
             autograd(lambda u: fn(u, axis), [v], g), {"axis": axis})
for dtype in LOW:
    for kernel, fn in (("softmax_grad", torch.softmax), ("log_softmax_grad", torch.log_softmax)):
        g = randn(2, 3, 4)
        yl, gl = fn(s, 1).to(dtype), low(g, dtype)
        # SoftmaxBackward's own function, on the rounded output.
        backward = (torch._softmax_backward_data if kernel == "softmax_grad" else
                    torch._log_softmax_backward_data)
        case("%s_%s" % (kernel, DTYPES[dtype]), kernel, [gl, yl],
             [backward(gl.float(), yl.float(), 1, torch.float32).to(dtype)], {"axis": 1})


def layer_norm_grad_case(name, x, w, g, axis, eps, dtype=None, scale_dtype=None, tol=None,
                         reference_dtype=torch.float32):
    normalized = tuple(x.shape[axis:])
    b = randn(*normalized)
    if dtype is not None:
        x, g = low(x, dtype), low(g, dtype)
    if scale_dtype is not None:
        w = low(w, scale_dtype)
    leaves = [t.detach().to(reference_dtype).requires_grad_(True) for t in (x, w, b)]
    F.layer_norm(leaves[0], normalized, leaves[1], leaves[2], eps).backward(g.to(reference_dtype))
    dx, dw, db = (t.grad for t in leaves)
    case(name, "layer_norm_grad", [g, x, w],
         [dx.to(x.dtype), dw.to(w.dtype), db.to(w.dtype)], {"axis": axis, "epsilon": eps}, tol)


ln = randn(2, 3, 4) * 2 + 1
layer_norm_grad_case("layer_norm_grad_last", ln, randn(4), randn(2, 3, 4), 2, 1e-5)
layer_norm_grad_case("layer_norm_grad_two_dims", ln, randn(3, 4), randn(2, 3, 4), 1, 1e-3)
layer_norm_grad_case("layer_norm_grad_all_dims", randn(3, 5), randn(3, 5), randn(3, 5), 0, 1e-5)
layer_norm_grad_case("layer_norm_grad_wide", randn(4, 70), randn(70), randn(4, 70), 1, 1e-5)
layer_norm_grad_case("layer_norm_grad_large_mean", randn(3, 16) * 0.01 + 1000.0, randn(16),
                     randn(3, 16), 1, 1e-5, tol=(1e-4, 1e-4), reference_dtype=torch.float64)
layer_norm_grad_case("layer_norm_grad_bf16_f32_scale", ln, randn(4), randn(2, 3, 4), 2, 1e-5,
                     dtype=torch.bfloat16)
layer_norm_grad_case("layer_norm_grad_f16", ln, randn(4), randn(2, 3, 4), 2, 1e-5,
                     dtype=torch.float16, scale_dtype=torch.float16)
layer_norm_grad_case("layer_norm_grad_f32_bf16_scale", ln, randn(4), randn(2, 3, 4), 2, 1e-5,
                     scale_dtype=torch.bfloat16)


def batch_norm_grad_case(name, x, g, dtype=None, scale_dtype=None):
    channels = x.shape[1]
    w, b = randn(channels), randn(channels)
    if dtype is not None:
        x, g = low(x, dtype), low(g, dtype)
    if scale_dtype is not None:
        w = low(w, scale_dtype)
    dx, dw, db = autograd(lambda xv, wv, bv: F.batch_norm(xv, None, None, wv, bv, True, 0.1, 1e-5),
                          [x, w, b], g)
    case(name, "batch_norm_grad", [g, x, w], [dx.to(x.dtype), dw.to(w.dtype), db.to(w.dtype)],
         {"epsilon": 1e-5})


for shape in ((4, 3), (2, 3, 5), (2, 3, 4, 4)):
    batch_norm_grad_case("batch_norm_grad_rank%d" % len(shape), randn(*shape) * 2 + 0.5,
                         randn(*shape))
batch_norm_grad_case("batch_norm_grad_f16", randn(2, 3, 4, 4), randn(2, 3, 4, 4),
                     dtype=torch.float16)
batch_norm_grad_case("batch_norm_grad_bf16", randn(3, 2, 5), randn(3, 2, 5),
                     dtype=torch.bfloat16, scale_dtype=torch.bfloat16)
batch_norm_grad_case("batch_norm_grad_3d", randn(2, 2, 3, 2, 3) + 3.0, randn(2, 2, 3, 2, 3))


def gather_grad_case(name, data, indices, axis, dtype=None):
    """Gather as np.take (negative indices count from the end); torch differentiates it."""
    dim = data.shape[axis]
    flat = torch.remainder(indices.long().flatten(), dim)
    shape = data.shape[:axis] + indices.shape + data.shape[axis + 1:]
    gather = lambda d: torch.index_select(d, axis, flat).reshape(shape)
    g = randn(*shape)
    if dtype is not None:
        g = low(g, dtype)
    (dw,) = autograd(gather, [data], g)
    case(name, "gather_grad", [g, indices], [dw.to(g.dtype)], {"axis": axis})


gather_grad_case("gather_grad_embedding_repeats", randn(6, 4),
                 torch.tensor([[0, 5, -1, 5], [2, -6, 3, 0]]), 0)
gather_grad_case("gather_grad_axis1_i32", randn(2, 4, 3),
                 torch.tensor([3, -2, 0, 3, 3], dtype=torch.int32), 1)
gather_grad_case("gather_grad_scalar_index", randn(2, 4, 3), torch.tensor(-1), 2)
gather_grad_case("gather_grad_many_repeats", randn(5, 3), torch.randint(-5, 5, (6, 7)), 0)
gather_grad_case("gather_grad_unused_rows", randn(9, 2), torch.tensor([4, 4, 4]), 0)
for dtype in LOW:
    gather_grad_case("gather_grad_%s" % DTYPES[dtype], randn(4, 5),
                     torch.tensor([[1, 1, -1], [0, 1, 3]]), 0, dtype)

sg = randn(5, 6, 4)
for index, spec in enumerate(slices):
    starts, limits, steps = [], [], []
    for dim, part in zip(sg.shape, spec):
        start, limit, step = part.indices(dim)
        starts += [start]
        limits += [limit]
        steps += [step]

    def sliced(v):
        for d, (start, limit, step) in enumerate(zip(starts, limits, steps)):
            v = torch.index_select(v, d, torch.arange(start, limit, step))
        return v

    g = randn(*sliced(sg).shape)
    case("slice_grad_%d" % index, "slice_grad", [g], autograd(sliced, [sg], g),
         {"starts": starts, "limits": limits, "steps": steps})
sgi = torch.arange(1, 4, dtype=torch.int64)
case("slice_grad_i64_reverse", "slice_grad", [sgi], [torch.tensor([0, 3, 0, 2, 0, 1, 0])],
     {"starts": [5], "limits": [0], "steps": [-2]})
case("slice_grad_i1", "slice_grad", [torch.tensor([[True, False], [True, True]])],
     [torch.tensor([[False, False, False], [True, False, False], [True, True, False]])],
     {"starts": [1, 0], "limits": [3, 2], "steps": [1, 1]})
g = low(randn(2, 3), torch.bfloat16)
case("slice_grad_bf16_full", "slice_grad", [g], [g.flip(1)],
     {"starts": [0, 2], "limits": [2, -1], "steps": [1, -1]})


def conv_grad_case(name, dims, x, w, stride, pads, dilation, group, dtype=None):
    """pads: begins then ends, as memc; torch gets them by F.pad."""
    torch_pad = []
    for d in reversed(range(dims)):
        torch_pad += [pads[d], pads[d + dims]]
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[dims]
    forward = lambda xv, wv: fn(F.pad(xv, torch_pad), wv, None, stride, 0, dilation, group)
    if dtype is not None:
        x, w = low(x, dtype), low(w, dtype)
    g = randn(*forward(x.float(), w.float()).shape)
    if dtype is not None:
        g = low(g, dtype)
    dx, dw = autograd(forward, [x, w], g)
    attrs = {"strides": [stride] * dims if isinstance(stride, int) else stride, "pads": pads,
             "dilations": [dilation] * dims if isinstance(dilation, int) else dilation,
             "group": group}
    tol = (1e-4, 1e-5) if dtype is None else None
    case(name + "_input", "conv_grad_input", [g, w], [dx.to(x.dtype)], attrs, tol)
    case(name + "_weight", "conv_grad_weight", [g, x], [dw.to(x.dtype)], attrs, tol)


conv_grad_case("conv_grad2d_basic", 2, randn(2, 3, 6, 6), randn(4, 3, 3, 3), 1, [1, 1, 1, 1], 1,
               1)
conv_grad_case("conv_grad2d_stride2", 2, randn(1, 2, 7, 8), randn(3, 2, 3, 2), 2, [0, 0, 0, 0],
               1, 1)
conv_grad_case("conv_grad2d_groups_dilation", 2, randn(2, 4, 9, 9), randn(6, 2, 3, 3), [2, 1],
               [1, 2, 0, 1], [2, 1], 2)
conv_grad_case("conv_grad2d_depthwise", 2, randn(2, 3, 5, 5), randn(3, 1, 3, 3), 1,
               [1, 1, 1, 1], 1, 3)
conv_grad_case("conv_grad2d_depthwise_multiplier", 2, randn(1, 2, 6, 5), randn(4, 1, 2, 3),
               [1, 2], [0, 1, 1, 0], 1, 2)
conv_grad_case("conv_grad2d_pointwise", 2, randn(2, 5, 4, 3), randn(7, 5, 1, 1), 1,
               [0, 0, 0, 0], 1, 1)
conv_grad_case("conv_grad2d_pointwise_groups", 2, randn(2, 4, 3, 3), randn(6, 2, 1, 1), 1,
               [0, 0, 0, 0], 1, 2)
conv_grad_case("conv_grad2d_pointwise_stride", 2, randn(1, 3, 5, 5), randn(2, 3, 1, 1), 2,
               [0, 0, 0, 0], 1, 1)
conv_grad_case("conv_grad2d_uncovered_tail", 2, randn(1, 2, 8, 7), randn(2, 2, 2, 2), 3,
               [0, 0, 0, 0], 1, 1)
conv_grad_case("conv_grad2d_pad_end_only", 2, randn(1, 2, 4, 4), randn(2, 2, 1, 1), 1,
               [0, 0, 1, 2], 1, 1)
conv_grad_case("conv_grad2d_large_pad", 2, randn(1, 1, 3, 3), randn(2, 1, 2, 2), 1,
               [3, 0, 2, 4], 1, 1)
conv_grad_case("conv_grad1d", 1, randn(2, 3, 11), randn(4, 3, 3), 2, [2, 1], 2, 1)
conv_grad_case("conv_grad1d_groups", 1, randn(3, 6, 8), randn(9, 2, 2), 1, [0, 0], 3, 3)
conv_grad_case("conv_grad3d", 3, randn(2, 2, 4, 5, 4), randn(3, 2, 2, 3, 2), [1, 2, 1],
               [1, 0, 1, 0, 1, 0], 1, 1)
conv_grad_case("conv_grad2d_f16", 2, randn(1, 2, 5, 5), randn(3, 2, 3, 3), 1, [1, 1, 1, 1], 1,
               1, dtype=torch.float16)
conv_grad_case("conv_grad2d_bf16", 2, randn(2, 4, 5, 5), randn(4, 2, 3, 3), 2, [1, 1, 1, 1], 1,
               2, dtype=torch.bfloat16)
conv_grad_case("conv_grad2d_stem", 2, randn(1, 3, 16, 16), randn(8, 3, 7, 7), 2, [3, 3, 3, 3],
               1, 1)


def pool_grad_case(name, kind, dims, x, kernel, stride, pad, dilation, ceil_mode,
                   count_include_pad=None, dtype=None):
    if dtype is not None:
        x = low(x, dtype)
    if kind == "max_pool":
        fn = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[dims]
        forward = lambda v: fn(v, kernel, stride, pad, dilation, ceil_mode)
    else:
        assert dilation == 1
        fn = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[dims]
        forward = lambda v: fn(v, kernel, stride, pad, ceil_mode, count_include_pad)
    g = randn(*forward(x.float()).shape)
    if dtype is not None:
        g = low(g, dtype)
    (dx,) = autograd(forward, [x], g)
    listify = lambda v: [v] * dims if isinstance(v, int) else list(v)
    attrs = {"kernel_shape": listify(kernel), "strides": listify(stride),
             "pads": listify(pad) * 2, "dilations": listify(dilation), "ceil_mode": ceil_mode}
    if kind == "max_pool":
        case(name, "max_pool_grad", [g, x], [dx.to(x.dtype)], attrs)
    else:
        attrs["count_include_pad"] = count_include_pad
        case(name, "avg_pool_grad", [g], [dx.to(x.dtype)], attrs)


px = randn(2, 3, 7, 7)
for ceil_mode in (False, True):
    tag = "ceil" if ceil_mode else "floor"
    pool_grad_case("max_pool_grad2d_k3s2p1_" + tag, "max_pool", 2, px, 3, 2, 1, 1, ceil_mode)
    pool_grad_case("max_pool_grad2d_k2s2_" + tag, "max_pool", 2, px, 2, 2, 0, 1, ceil_mode)
    pool_grad_case("max_pool_grad2d_dilated_" + tag, "max_pool", 2, px, 2, [2, 1], [1, 0], 2,
                   ceil_mode)
    for include in (False, True):
        itag = tag + ("_incl" if include else "_excl")
        pool_grad_case("avg_pool_grad2d_k3s2p1_" + itag, "avg_pool", 2, px, 3, 2, 1, 1,
                       ceil_mode, include)
        pool_grad_case("avg_pool_grad2d_k2s3p1_" + itag, "avg_pool", 2, randn(1, 2, 8, 8), 2, 3,
                       1, 1, ceil_mode, include)
        pool_grad_case("avg_pool_grad1d_k3s2p1_" + itag, "avg_pool", 1, randn(2, 2, 10), 3, 2,
                       1, 1, ceil_mode, include)
pool_grad_case("max_pool_grad2d_overlap", "max_pool", 2, randn(2, 2, 6, 6), 3, 1, 1, 1, False)
# Small integers: ties everywhere, the first maximum takes the gradient.
ties = torch.randint(-2, 3, (2, 2, 6, 7)).float()
pool_grad_case("max_pool_grad2d_ties", "max_pool", 2, ties, 3, 1, 1, 1, False)
pool_grad_case("max_pool_grad2d_ties_ceil", "max_pool", 2, ties, 2, 2, 1, 1, True)
infs = px.clone()
infs[0, 0, :3, :3] = float("-inf")
infs[1, 2, 4:, :] = float("-inf")
pool_grad_case("max_pool_grad2d_neg_inf", "max_pool", 2, infs, 3, 2, 1, 1, False)
nans = px.clone()
nans[0, 0, 1, 1] = float("nan")
nans[0, 0, 0, 0] = float("nan")
nans[1, 1, 4, 5] = float("nan")
pool_grad_case("max_pool_grad2d_nan", "max_pool", 2, nans, 2, 2, 0, 1, False)
pool_grad_case("max_pool_grad1d", "max_pool", 1, randn(2, 3, 9), 3, 2, 1, 1, False)
pool_grad_case("max_pool_grad3d", "max_pool", 3, randn(1, 2, 5, 4, 5), [2, 3, 2], [2, 1, 2],
               [1, 1, 0], 1, True)
pool_grad_case("avg_pool_grad3d", "avg_pool", 3, randn(1, 2, 5, 4, 5), [2, 3, 2], [2, 1, 2],
               [1, 1, 0], 1, True, True)
pool_grad_case("max_pool_grad2d_f16", "max_pool", 2, px, 3, 2, 1, 1, False, dtype=torch.float16)
pool_grad_case("max_pool_grad2d_bf16_ties", "max_pool", 2, ties, 2, 1, 0, 1, True,
               dtype=torch.bfloat16)
pool_grad_case("avg_pool_grad2d_bf16", "avg_pool", 2, px, 3, 2, 1, 1, True, False,
               dtype=torch.bfloat16)
pool_grad_case("avg_pool_grad2d_f16", "avg_pool", 2, px, 2, 1, 1, 1, False, True,
               dtype=torch.float16)
oblong = randn(2, 2, 5, 9)
pool_grad_case("max_pool_grad2d_oblong", "max_pool", 2, oblong, [3, 2], [1, 2], [1, 0], [1, 2],
               True)
pool_grad_case("avg_pool_grad2d_oblong", "avg_pool", 2, oblong, [2, 3], [2, 1], [1, 1], 1, True,
               False)


def cross_entropy_cases(name, logits, labels, ignore_index=-100, dtype=None):
    if dtype is not None:
        logits = low(logits, dtype)
    classes = logits.shape[-1]
    loss_of = lambda v: F.cross_entropy(v.reshape(-1, classes), labels.long().reshape(-1),
                                        ignore_index=ignore_index)
    attrs = {"ignore_index": ignore_index}
    if bool((labels == ignore_index).all()):  # PyTorch's mean is 0/0 there; memc's is 0
        loss, dlogits = torch.tensor(0.0), torch.zeros(logits.shape)
    else:
        loss = loss_of(logits.float()).detach()
        (dlogits,) = autograd(loss_of, [logits], torch.tensor(1.7))
    case(name, "cross_entropy", [logits, labels], [loss], attrs)
    case(name + "_grad", "cross_entropy_grad", [torch.tensor(1.7), logits, labels],
         [dlogits.to(logits.dtype)], attrs)


cross_entropy_cases("cross_entropy_2d", randn(4, 7) * 2, torch.tensor([1, -100, 6, 0]))
cross_entropy_cases("cross_entropy_3d", randn(2, 3, 5), torch.tensor([[4, 0, 2], [2, 2, 1]]))
cross_entropy_cases("cross_entropy_1d", randn(6), torch.tensor(3))
cross_entropy_cases("cross_entropy_ignore_class", randn(5, 4), torch.tensor([2, 0, 2, 3, 1]),
                    ignore_index=2)
cross_entropy_cases("cross_entropy_i32", randn(3, 6),
                    torch.tensor([5, -1, 0], dtype=torch.int32), ignore_index=-1)
cross_entropy_cases("cross_entropy_all_ignored", randn(2, 3), torch.tensor([-100, -100]))
cross_entropy_cases("cross_entropy_large_logits",
                    torch.tensor([[1000.0, 1001.0, 999.0], [-1e4, -1e4 + 2, -1e4 - 5]]),
                    torch.tensor([2, 1]))
cross_entropy_cases("cross_entropy_wide", randn(3, 150) * 3, torch.tensor([149, 0, 77]))
for dtype in LOW:
    cross_entropy_cases("cross_entropy_%s" % DTYPES[dtype], randn(3, 8),
                        torch.tensor([7, -100, 2]), dtype=dtype)

# ---------------------------------------------------------------------------------------------
# Optimizer updates: one step of torch.optim's single-tensor SGD and AdamW from given state. The
# section seeds its own generator so that the cases before it stay byte-identical.
# ---------------------------------------------------------------------------------------------
torch.manual_seed(2)


def adamw_case(name, shape, step, lr, beta1, beta2, eps, weight_decay, dtype=None):
    p, g = randn(*shape), randn(*shape)
    m, v = randn(*shape) * 0.1, randn(*shape).abs() * 0.01
    if step == 1:
        m, v = torch.zeros(shape), torch.zeros(shape)
    if dtype is not None:  # memc computes in f32 from the rounded values and rounds once
        p, g = p.to(dtype).float(), g.to(dtype).float()
    param = p.clone().requires_grad_(True)
    optimizer = torch.optim.AdamW([param], lr=lr, betas=(beta1, beta2), eps=eps,
                                  weight_decay=weight_decay, foreach=False)
    param.grad = g.clone()
    if step > 1:
        optimizer.state[param] = {"step": torch.tensor(float(step - 1)), "exp_avg": m.clone(),
                                  "exp_avg_sq": v.clone()}
    optimizer.step()
    state = optimizer.state[param]
    new_p = param.detach()
    if dtype is not None:
        p, g, new_p = p.to(dtype), g.to(dtype), new_p.to(dtype)
    case(name, "adamw_update",
         [p, g, m, v, torch.tensor(lr, dtype=torch.float32),
          torch.tensor(float(step), dtype=torch.float32)],
         [new_p, state["exp_avg"], state["exp_avg_sq"]],
         {"beta1": float(beta1), "beta2": float(beta2), "eps": float(eps),
          "weight_decay": float(weight_decay)})


def sgd_case(name, shape, lr, momentum, weight_decay, nesterov, first_step):
    p, g, velocity = randn(*shape), randn(*shape), randn(*shape)
    if first_step:
        velocity = torch.zeros(shape)
    param = p.clone().requires_grad_(True)
    optimizer = torch.optim.SGD([param], lr=lr, momentum=momentum, weight_decay=weight_decay,
                                nesterov=nesterov, foreach=False)
    param.grad = g.clone()
    if not first_step:
        optimizer.state[param] = {"momentum_buffer": velocity.clone()}
    optimizer.step()
    case(name, "sgd_update", [p, g, velocity, torch.tensor(lr, dtype=torch.float32)],
         [param.detach(), optimizer.state[param]["momentum_buffer"]],
         {"momentum": float(momentum), "weight_decay": float(weight_decay),
          "nesterov": bool(nesterov)})


adamw_case("adamw_first_step", (4, 5), 1, 1e-3, 0.9, 0.999, 1e-8, 0.01)
adamw_case("adamw_step_7", (3, 4, 2), 7, 3e-4, 0.9, 0.95, 1e-6, 0.1)
adamw_case("adamw_no_decay", (16,), 3, 1e-2, 0.8, 0.99, 1e-8, 0.0)
adamw_case("adamw_bf16", (2, 6), 2, 1e-3, 0.9, 0.999, 1e-8, 0.01, dtype=torch.bfloat16)
sgd_case("sgd_momentum", (4, 5), 0.1, 0.9, 0.0, False, False)
sgd_case("sgd_nesterov_decay", (3, 7), 0.05, 0.9, 1e-3, True, False)
sgd_case("sgd_first_step", (6,), 0.1, 0.5, 1e-2, False, True)

# ---------------------------------------------------------------------------------------------
# Issue 15's activations, selections, comparisons and reductions (last, so that the cases above
# keep their random draws)
# ---------------------------------------------------------------------------------------------
a15 = randn(3, 5) * 4
activations = {
    "abs": (torch.abs, {}),
    "sin": (torch.sin, {}),
    "cos": (torch.cos, {}),
    "softplus": (F.softplus, {}),
    "hard_swish": (F.hardswish, {}),
    "leaky_relu": (lambda v: F.leaky_relu(v, 0.2), {"alpha": 0.2}),
    "elu": (lambda v: F.elu(v, 0.7), {"alpha": 0.7}),
    "hard_sigmoid": (lambda v: torch.clamp(0.3 * v + 0.4, 0, 1), {"alpha": 0.3, "beta": 0.4}),
}
for kernel, (fn, attrs) in activations.items():
    case("%s_f32" % kernel, kernel, [a15], [fn(a15)], attrs)
    for dtype in (torch.float16, torch.bfloat16):
        v = low(a15, dtype)
        case("%s_%s" % (kernel, DTYPES[dtype]), kernel, [v], [fn(v.float()).to(dtype)], attrs)
    case("%s_f32_special" % kernel, kernel, [special], [fn(special)], attrs)
case("abs_i64", "abs", [ints], [torch.abs(ints)])
case("softplus_f32_wide", "softplus", [wide * 10], [F.softplus(wide * 10)])

m15a, m15b = randn(3, 1, 4), randn(2, 1)
for kernel, fn in (("max", torch.maximum), ("min", torch.minimum)):
    case("%s_broadcast_f32" % kernel, kernel, [m15a, m15b], [fn(m15a, m15b)])
    case("%s_special_f32" % kernel, kernel, [special, special.flip(0)],
         [fn(special, special.flip(0))])
    case("%s_i64" % kernel, kernel, [ints, ints.flip(1)], [fn(ints, ints.flip(1))])
    case("%s_bf16" % kernel, kernel, [low(m15a, torch.bfloat16), low(m15b, torch.bfloat16)],
         [fn(low(m15a, torch.bfloat16), low(m15b, torch.bfloat16))])
p15x, p15s = randn(2, 3, 4), randn(3, 1)
case("prelu_channels_f32", "prelu", [p15x, p15s], [F.prelu(p15x, p15s.flatten())])
case("prelu_scalar_f16", "prelu", [low(p15x, torch.float16), low(torch.tensor([0.25]), torch.float16)],
     [F.prelu(low(p15x, torch.float16).float(), torch.tensor([0.25])).half()])
ties15a, ties15b = torch.tensor([[1.0, 2.0, 3.0]]), torch.tensor([[2.0], [1.0]])
for kernel, fn in (("greater_equal", torch.ge), ("less_equal", torch.le)):
    case("%s_ties_f32" % kernel, kernel, [ties15a, ties15b], [fn(ties15a, ties15b)])
    case("%s_i64" % kernel, kernel, [ints, ints.flip(0)], [fn(ints, ints.flip(0))])

r15 = randn(2, 3, 4)
for index, axes in enumerate(([1], [0, 2], [0, 1, 2], [2])):
    for keepdims in (False, True):
        attrs = {"axes": axes, "keepdims": keepdims}
        tag = "%d_%s" % (index, "keep" if keepdims else "drop")
        # torch.prod takes one dim at a time; numpy's takes the set.
        case("reduce_prod_" + tag, "reduce_prod", [r15],
             [torch.from_numpy(np.asarray(np.prod(r15.double().numpy(), axis=tuple(axes),
                                                  keepdims=keepdims))).float()], attrs)
        case("reduce_l2_" + tag, "reduce_l2", [r15],
             [torch.linalg.vector_norm(r15.double(), 2, dim=axes, keepdim=keepdims).float()], attrs)
        case("reduce_log_sum_exp_" + tag, "reduce_log_sum_exp", [r15 * 30],
             [torch.logsumexp(r15.double() * 30, dim=axes, keepdim=keepdims).float()], attrs)
case("reduce_prod_i64", "reduce_prod", [ints], [torch.prod(ints, 1)], {"axes": [1], "keepdims": False})
lse_special = torch.tensor([[float("-inf"), float("-inf")], [float("inf"), 1.0],
                            [float("nan"), 0.0], [-1e30, 5.0]])
case("reduce_log_sum_exp_special", "reduce_log_sum_exp", [lse_special],
     [torch.logsumexp(lse_special, 1)], {"axes": [1], "keepdims": False})
case("reduce_l2_bf16", "reduce_l2", [low(r15, torch.bfloat16)],
     [torch.linalg.vector_norm(low(r15, torch.bfloat16).float(), 2, dim=2).bfloat16()],
     {"axes": [2], "keepdims": False})

cs15 = randn(2, 5, 3)
for axis in (0, 1, 2):
    case("cumsum_axis%d_f32" % axis, "cumsum", [cs15], [torch.cumsum(cs15, axis)],
         {"axis": axis, "exclusive": False, "reverse": False})
case("cumsum_reverse_f32", "cumsum", [cs15], [cs15.flip(1).cumsum(1).flip(1)],
     {"axis": 1, "exclusive": False, "reverse": True})
case("cumsum_exclusive_f32", "cumsum", [cs15], [cs15.cumsum(1) - cs15],
     {"axis": 1, "exclusive": True, "reverse": False}, tol=(1e-5, 1e-6))
case("cumsum_exclusive_reverse_f32", "cumsum", [cs15], [cs15.flip(2).cumsum(2).flip(2) - cs15],
     {"axis": 2, "exclusive": True, "reverse": True}, tol=(1e-5, 1e-6))
case("cumsum_i64", "cumsum", [ints], [torch.cumsum(ints, 1)],
     {"axis": 1, "exclusive": False, "reverse": False})
case("cumsum_bf16", "cumsum", [low(cs15, torch.bfloat16)],
     [torch.cumsum(low(cs15, torch.bfloat16).double(), 1).bfloat16()],
     {"axis": 1, "exclusive": False, "reverse": False})

# ---------------------------------------------------------------------------------------------
# matmul with transposed operands (sgemm's trans flags; last so the cases above keep their
# random values)
# ---------------------------------------------------------------------------------------------
mmt = [((4, 3), (4, 5), True, False), ((3, 4), (5, 4), False, True), ((4, 3), (5, 4), True, True),
       ((2, 4, 3), (4, 5), True, False), ((2, 3, 4), (5, 4), False, True),
       ((2, 1, 4, 3), (5, 2, 4), True, True), ((4, 3), (4,), True, False),
       ((4,), (5, 4), False, True), ((40, 33), (40, 9), True, False)]
for index, (sa, sb, ta, tb) in enumerate(mmt):
    a, b = randn(*sa), randn(*sb)
    op_a = a.transpose(-1, -2) if ta else a
    op_b = b.transpose(-1, -2) if tb else b
    case("matmul_transposed_f32_%d" % index, "matmul", [a, b], [torch.matmul(op_a, op_b)],
         {"transpose_lhs": ta, "transpose_rhs": tb})
a, b = low(randn(2, 8, 3), torch.bfloat16), low(randn(4, 8), torch.bfloat16)
case("matmul_transposed_bf16", "matmul", [a, b],
     [torch.matmul(a.float().transpose(-1, -2), b.float().t()).to(torch.bfloat16)],
     {"transpose_lhs": True, "transpose_rhs": True})
ma, mb = torch.randint(-5, 5, (2, 4, 3)), torch.randint(-5, 5, (2, 4))
case("matmul_transposed_i64", "matmul", [ma, mb], [torch.matmul(ma.transpose(1, 2), mb.t())],
     {"transpose_lhs": True, "transpose_rhs": True})

# ---------------------------------------------------------------------------------------------
# convolutions over several column tiles (kColumnTilePixels = 256 output positions, whole rows):
# a last tile that is short, a row longer than a tile, and conv_grad_weight tiles that span
# images
# ---------------------------------------------------------------------------------------------
for name, x, w, stride, pads in [
        ("tiled", randn(2, 2, 20, 30), randn(3, 2, 3, 3), 1, [1, 1, 1, 1]),
        ("long_row", randn(1, 1, 3, 300), randn(2, 1, 2, 3), 1, [0, 0, 0, 0]),
        ("tiles_span_images", randn(3, 1, 17, 33), randn(2, 1, 3, 3), 2, [1, 1, 0, 1])]:
    conv_case("conv2d_" + name, 2, x, w, randn(w.shape[0]), stride, pads, 1, 1)
    conv_grad_case("conv_grad2d_" + name, 2, x, w, stride, pads, 1, 1)

# ---------------------------------------------------------------------------------------------
# Attention: flash_attention and its gradient against the unfused formula in f64 (scores, mask,
# causal cut aligned at the bottom right, softmax, @ v; k and v repeated for grouped-query
# heads). 16-bit cases compute from the rounded inputs and round the output once; the
# logsumexp is always f32. The section seeds its own generator.
# ---------------------------------------------------------------------------------------------
torch.manual_seed(3)


def attention_scores(q, k, mask, causal, scale):
    k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
    scores = (q @ k.transpose(-1, -2)) * scale
    if mask is not None:
        scores = scores + mask
    if causal:
        queries, keys = q.shape[2], k.shape[2]
        visible = torch.ones(queries, keys, dtype=torch.bool).tril(keys - queries)
        scores = scores.masked_fill(~visible, float("-inf"))
    return scores


def unfused_attention(q, k, v, mask, causal, scale, dropout=None):
    """(output, logsumexp); rows that see no key give zeros and -inf, as the kernel defines.
    `dropout` (keep, ratio) keeps the probabilities where `keep` is true, scaled by
    1 / (1 - ratio); the logsumexp is the undropped scores'."""
    scores = attention_scores(q, k, mask, causal, scale)
    lse = torch.logsumexp(scores, -1)
    v = v.repeat_interleave(q.shape[1] // v.shape[1], dim=1)
    probabilities = torch.exp(scores - lse.unsqueeze(-1)).nan_to_num(0.0)
    if dropout is not None:
        keep, ratio = dropout
        probabilities = probabilities * torch.from_numpy(keep).to(probabilities.dtype) / (1 - ratio)
    return probabilities @ v, lse


def attention_backward(g, q, k, v, out, mask, causal, scale):
    """FlashAttention-2's backward from the output `out`: dS = P * (dO V^T - rowsum(dO * O))."""
    group = q.shape[1] // k.shape[1]
    scores = attention_scores(q, k, mask, causal, scale)
    p = torch.softmax(scores, -1)
    kr, vr = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    dv = p.transpose(-1, -2) @ g
    ds = p * (g @ vr.transpose(-1, -2) - (g * out).sum(-1, keepdim=True)) * scale
    dq, dk = ds @ kr, ds.transpose(-1, -2) @ q

    def per_kv_head(t):  # the query heads sharing a kv head add up
        return t.reshape(t.shape[0], k.shape[1], group, *t.shape[2:]).sum(2)

    return dq, per_kv_head(dk), per_kv_head(dv)


def attention_inputs(b, h, hkv, tq, tk, d, dv, mask_shape):
    q, k, v = randn(b, h, tq, d), randn(b, hkv, tk, d), randn(b, hkv, tk, dv)
    mask = None
    if mask_shape:
        mask = randn(*mask_shape)
        mask[torch.rand(mask_shape) < 0.2] = float("-inf")
        mask[..., 0] = 0.0
    return q, k, v, mask


def flash_attention_case(name, sizes, causal, mask_shape=None, dtype=None, mask=None):
    q, k, v, random_mask = attention_inputs(*sizes, mask_shape)
    mask = random_mask if mask is None else mask
    if dtype is not None:
        q, k, v = low(q, dtype), low(k, dtype), low(v, dtype)
    scale = 1.0 / math.sqrt(sizes[5])
    out, lse = unfused_attention(q.double(), k.double(), v.double(),
                                 None if mask is None else mask.double(), causal, scale)
    inputs = [q, k, v] + ([mask] if mask is not None else [])
    case(name, "flash_attention", inputs, [out.to(q.dtype), lse.float()],
         {"causal": causal, "scale": scale})


def flash_attention_grad_case(name, sizes, causal, mask_shape=None, dtype=None):
    q, k, v, mask = attention_inputs(*sizes, mask_shape)
    if dtype is not None:
        q, k, v = low(q, dtype), low(k, dtype), low(v, dtype)
    scale = 1.0 / math.sqrt(sizes[5])
    leaves = [t.detach().double().requires_grad_(True) for t in (q, k, v)]
    out, lse = unfused_attention(*leaves, None if mask is None else mask.double(), causal, scale)
    g = randn(*out.shape)
    if dtype is not None:
        g = low(g, dtype)
    out.backward(g.double())
    grads = [t.grad for t in leaves]
    stored = out.detach().to(q.dtype)
    if dtype is not None:
        # The kernel's D = rowsum(dO * O) reads the stored, rounded output, so the reference is
        # the backward formula from that output (for f32 it is autograd's, checked here).
        grads = attention_backward(g.double(), *(t.detach() for t in leaves), stored.double(),
                                   None if mask is None else mask.double(), causal, scale)
    else:
        formula = attention_backward(g.double(), *(t.detach() for t in leaves), out.detach(),
                                     None if mask is None else mask.double(), causal, scale)
        assert all(torch.allclose(a, b) for a, b in zip(formula, grads)), name
    inputs = [g, q, k, v, stored, lse.detach().float()]
    inputs += [mask] if mask is not None else []
    case(name, "flash_attention_grad", inputs, [t.to(q.dtype) for t in grads],
         {"causal": causal, "scale": scale})


# (batch, heads, kv heads, queries, keys, head_dim, value_dim)
flash_attention_case("flash_attention_causal_f32", (1, 2, 2, 70, 70, 8, 8), True)
flash_attention_case("flash_attention_gqa_mask_f32", (2, 4, 2, 9, 66, 8, 4), False, (2, 1, 1, 66))
flash_attention_case("flash_attention_causal_cached_f32", (1, 2, 1, 5, 67, 4, 4), True,
                     (1, 2, 5, 67))
flash_attention_case("flash_attention_f16", (1, 2, 1, 7, 7, 8, 8), True, dtype=torch.float16)
flash_attention_case("flash_attention_bf16_f32_mask", (1, 2, 2, 6, 6, 8, 8), False, (1, 1, 6, 6),
                     dtype=torch.bfloat16)
# A query whose every key is masked: zeros and a logsumexp of -inf, not NaN.
hidden_row = torch.zeros(1, 1, 3, 4)
hidden_row[0, 0, 1, :] = float("-inf")
flash_attention_case("flash_attention_hidden_row_f32", (1, 1, 1, 3, 4, 4, 4), False,
                     mask=hidden_row)
# More queries than keys under causal: the first Tq - Tk queries see none.
flash_attention_case("flash_attention_causal_more_queries_f32", (1, 1, 1, 5, 3, 4, 4), True)
flash_attention_case("flash_attention_no_keys_f32", (1, 1, 1, 3, 0, 4, 4), False)

flash_attention_grad_case("flash_attention_grad_causal_f32", (1, 2, 2, 70, 70, 8, 8), True)
flash_attention_grad_case("flash_attention_grad_gqa_mask_f32", (2, 4, 2, 9, 66, 8, 4), False,
                          (2, 1, 1, 66))
flash_attention_grad_case("flash_attention_grad_causal_cached_f32", (1, 2, 1, 5, 67, 4, 4), True,
                          (1, 1, 5, 67))
flash_attention_grad_case("flash_attention_grad_bf16", (1, 2, 1, 6, 6, 8, 8), True,
                          dtype=torch.bfloat16)
flash_attention_grad_case("flash_attention_grad_f16", (1, 1, 1, 5, 9, 8, 8), False, (1, 1, 5, 9),
                          dtype=torch.float16)

# ---------------------------------------------------------------------------------------------
# top_k (ONNX TopK)
# ---------------------------------------------------------------------------------------------


def top_k(x, k, axis, largest):
    """ONNX TopK's order: sorted, equal values by the lower index (a stable sort's order)."""
    values, indices = torch.sort(x, dim=axis, descending=largest, stable=True)
    return [values.narrow(axis, 0, k).contiguous(), indices.narrow(axis, 0, k).contiguous()]


tk = randn(3, 6, 2)
case("top_k_largest_f32", "top_k", [tk], top_k(tk, 3, 1, True), {"axis": 1, "k": 3, "largest": True})
case("top_k_smallest_axis0_f32", "top_k", [tk], top_k(tk, 2, 0, False),
     {"axis": 0, "k": 2, "largest": False})
tk_ties = torch.tensor([[1.0, 3.0, 3.0, 2.0, 3.0], [0.0, 0.0, -1.0, 0.0, 5.0]])
case("top_k_ties_f32", "top_k", [tk_ties], top_k(tk_ties, 4, 1, True),
     {"axis": 1, "k": 4, "largest": True})
case("top_k_i64", "top_k", [ints], top_k(ints, 2, 1, False), {"axis": 1, "k": 2, "largest": False})
case("top_k_bf16", "top_k", [low(tk, torch.bfloat16)], top_k(low(tk, torch.bfloat16), 6, 1, True),
     {"axis": 1, "k": 6, "largest": True})

# ---------------------------------------------------------------------------------------------
# Loss scaling (--precision fp16): torch.cuda.amp.GradScaler's found_inf and update. torch 1.13's
# _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_ are CUDA-only, so the
# references are their definitions: found_inf is 1 if any element of any gradient is not finite;
# the update halves the scale (exponent - 1) and restarts the count on found_inf, counts a finite
# step and doubles the scale after `window` in a row; the skipped count grows on found_inf.
# ---------------------------------------------------------------------------------------------


def scalar(value):
    return torch.tensor(value, dtype=torch.float32)


def found_inf(grads):
    return scalar(0.0 if all(bool(torch.isfinite(g.float()).all()) for g in grads) else 1.0)


finite_grads = [randn(3, 4), low(randn(5), torch.float16), low(randn(2, 2), torch.bfloat16)]
case("non_finite_check_finite", "non_finite_check", finite_grads, [found_inf(finite_grads)])
inf_f16 = low(randn(4, 3), torch.float16)
inf_f16[2, 1] = float("inf")
overflowing = [randn(6), inf_f16]
case("non_finite_check_f16_inf", "non_finite_check", overflowing, [found_inf(overflowing)])
nan_last = randn(7)
nan_last[-1] = float("nan")
case("non_finite_check_nan_f32", "non_finite_check", [randn(3), nan_last],
     [found_inf([nan_last])])


def loss_scale_update(exponent, growth, skipped, found, window, dynamic):
    if found:
        skipped += 1
        if dynamic:
            exponent, growth = exponent - 1, 0
    elif dynamic:
        growth += 1
        if growth == window:
            exponent, growth = exponent + 1, 0
    return [scalar(exponent), scalar(growth), scalar(skipped)]


for name, state, found, window, dynamic in [
        ("loss_scale_update_backoff", (2.0, 3.0, 1.0), 1.0, 4, True),
        ("loss_scale_update_counts", (-1.0, 1.0, 2.0), 0.0, 4, True),
        ("loss_scale_update_grows", (-3.0, 3.0, 5.0), 0.0, 4, True),
        ("loss_scale_update_fixed_skip", (0.0, 0.0, 7.0), 1.0, 2000, False),
        ("loss_scale_update_fixed_finite", (0.0, 0.0, 7.0), 0.0, 2000, False)]:
    case(name, "loss_scale_update", [scalar(v) for v in state] + [scalar(found)],
         loss_scale_update(*state, found, window, dynamic), {"window": window, "dynamic": dynamic})

# refresh_copy: the 16-bit copy of a weight where refresh is 1 (a cast), the old copy elsewhere.
rc_source, rc_copy = randn(3, 5), low(randn(3, 5), torch.float16)
case("refresh_copy_refreshes_f16", "refresh_copy", [scalar(1.0), rc_source, rc_copy],
     [low(rc_source, torch.float16)])
case("refresh_copy_keeps_bf16", "refresh_copy",
     [scalar(0.0), rc_source, low(rc_source * 2, torch.bfloat16)],
     [low(rc_source * 2, torch.bfloat16)])

# ---------------------------------------------------------------------------------------------
# linear_cross_entropy (the LM head and cross_entropy fused) and its gradient against autograd of
# matmul + cross_entropy in f64. Rows and classes are not multiples of the kernels' 256-chunks;
# 16-bit cases compute from the rounded inputs and round the gradients once. The section seeds
# its own generator.
# ---------------------------------------------------------------------------------------------
torch.manual_seed(5)


def linear_cross_entropy_cases(name, rows, depth, classes, transpose, ignored, dtype=None,
                               ignore_index=-100, label_dtype=torch.int64, bias=False):
    hidden, weight = randn(*rows, depth), randn(*((classes, depth) if transpose else (depth, classes)))
    labels = torch.randint(0, classes, rows, dtype=label_dtype)
    labels[torch.rand(rows) < ignored] = ignore_index
    tensors = [hidden, weight] + ([randn(classes)] if bias else [])
    if dtype is not None:
        tensors = [low(t, dtype) for t in tensors]
    hidden, weight = tensors[:2]
    leaves = [t.double().requires_grad_(True) for t in tensors]
    logits = leaves[0] @ (leaves[1].t() if transpose else leaves[1])
    if bias:
        logits = logits + leaves[2]
    lse = torch.logsumexp(logits, -1).detach().float()
    loss = F.cross_entropy(logits.reshape(-1, classes), labels.long().reshape(-1),
                           ignore_index=ignore_index)
    (loss * 1.7).backward()
    attrs = {"ignore_index": ignore_index}
    if transpose:
        attrs["transpose_weight"] = True
    case(name, "linear_cross_entropy", [hidden, weight, labels] + tensors[2:],
         [loss.detach().float(), lse], attrs)
    case(name + "_grad", "linear_cross_entropy_grad",
         [torch.tensor(1.7), hidden, weight, labels, lse] + tensors[2:],
         [t.grad.to(hidden.dtype) for t in leaves], attrs)


# (name, rows, D, V, weight [V, D], share of ignored labels)
linear_cross_entropy_cases("linear_cross_entropy_tied_f32", (260,), 8, 259, True, 0.1)
linear_cross_entropy_cases("linear_cross_entropy_untied_3d_f32", (2, 130), 8, 300, False, 0.2)
linear_cross_entropy_cases("linear_cross_entropy_tied_bf16", (40,), 16, 300, True, 0.1,
                           dtype=torch.bfloat16)
linear_cross_entropy_cases("linear_cross_entropy_untied_f16", (3, 7), 8, 270, False, 0.0,
                           dtype=torch.float16)
linear_cross_entropy_cases("linear_cross_entropy_i32_ignore_class", (9,), 4, 6, True, 0.3,
                           ignore_index=-1, label_dtype=torch.int32)
linear_cross_entropy_cases("linear_cross_entropy_bias_f32", (270,), 8, 300, True, 0.1, bias=True)
linear_cross_entropy_cases("linear_cross_entropy_bias_untied_bf16", (2, 20), 8, 261, False, 0.1,
                           dtype=torch.bfloat16, bias=True)



# ---------------------------------------------------------------------------------------------
# rms_norm, rms_norm_grad (appended last: the cases above keep their random draws)
# ---------------------------------------------------------------------------------------------
def rms_norm(x, w, axis, eps):
    """Llama's RMSNorm: x * rsqrt(mean(x^2) + eps) * w over the dimensions axis..rank-1."""
    dims = tuple(range(axis, x.dim()))
    return x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps) * w


def rms_norm_cases(name, x, w, g, axis, eps, dtype=None, scale_dtype=None, tol=None):
    """The forward and backward cases; 16-bit data is rounded, the reference computes in f64."""
    if dtype is not None:
        x, g = low(x, dtype), low(g, dtype)
    if scale_dtype is not None:
        w = low(w, scale_dtype)
    leaves = [t.detach().double().requires_grad_(True) for t in (x, w)]
    y = rms_norm(leaves[0], leaves[1], axis, eps)
    y.backward(g.double())
    attrs = {"axis": axis, "epsilon": eps}
    case(name, "rms_norm", [x, w], [y.detach().to(x.dtype)], attrs, tol)
    case(name + "_grad", "rms_norm_grad", [g, x, w],
         [leaves[0].grad.to(x.dtype), leaves[1].grad.to(w.dtype)], attrs, tol)


rms = randn(2, 3, 4) * 2 + 1
rms_norm_cases("rms_norm_last", rms, randn(4), randn(2, 3, 4), 2, 1e-6)
rms_norm_cases("rms_norm_two_dims", rms, randn(3, 4), randn(2, 3, 4), 1, 1e-3)
rms_norm_cases("rms_norm_wide", randn(5, 70), randn(70), randn(5, 70), 1, 1e-5)
rms_norm_cases("rms_norm_tiny_rows", randn(3, 16) * 1e-4, randn(16), randn(3, 16), 1, 1e-6)
rms_norm_cases("rms_norm_bf16_f32_scale", rms, randn(4), randn(2, 3, 4), 2, 1e-6,
               dtype=torch.bfloat16)
rms_norm_cases("rms_norm_f16", rms, randn(4), randn(2, 3, 4), 2, 1e-6, dtype=torch.float16,
               scale_dtype=torch.float16)
rms_norm_cases("rms_norm_f32_bf16_scale", rms, randn(4), randn(2, 3, 4), 2, 1e-6,
               scale_dtype=torch.bfloat16)

# ---------------------------------------------------------------------------------------------
# Attention with dropout on the probabilities: memc.dropout's mask (dropout_mask.py) on the
# [B, H, Tq, Tk] probabilities from the seed and a step's salt, the i64 input after the optional
# mask. The forward against the formula in f64, the backward against its autograd.
# ---------------------------------------------------------------------------------------------
torch.manual_seed(4)


def flash_attention_dropout_cases(name, sizes, causal, mask_shape, ratio, seed, salt):
    b, h, hkv, tq, tk, d, dv = sizes
    q, k, v, mask = attention_inputs(*sizes, mask_shape)
    scale = 1.0 / math.sqrt(d)
    dropout = (dropout_keeps((b, h, tq, tk), ratio, seed, salt), ratio)
    leaves = [t.detach().double().requires_grad_(True) for t in (q, k, v)]
    out, lse = unfused_attention(*leaves, None if mask is None else mask.double(), causal, scale,
                                 dropout)
    g = randn(*out.shape)
    out.backward(g.double())
    attrs = {"causal": causal, "scale": scale, "dropout_ratio": ratio, "seed": seed}
    optional = ([mask] if mask is not None else []) + [torch.tensor(salt, dtype=torch.int64)]
    stored = out.detach().float()
    case(name, "flash_attention", [q, k, v] + optional, [stored, lse.detach().float()], attrs)
    case(name + "_grad", "flash_attention_grad",
         [g, q, k, v, stored, lse.detach().float()] + optional,
         [t.grad.float() for t in leaves], attrs)


# (batch, heads, kv heads, queries, keys, head_dim, value_dim)
flash_attention_dropout_cases("flash_attention_dropout_causal_gqa_f32", (1, 2, 1, 70, 70, 8, 8),
                              True, None, 0.2, 9, 1000003 * 2 + 1)
flash_attention_dropout_cases("flash_attention_dropout_mask_f32", (2, 2, 2, 9, 66, 8, 4), False,
                              (2, 1, 1, 66), 0.3, -4, 7)


# Wide pooling rows: the windows wholly inside the input's columns are searched 8 to a vector
# (kernels/cpu/MaxPoolRuns.h) in runs of 8 to 64; these rows are long enough for runs, with
# column strides 1 and 2 (the contiguous loads) and 3 (lane by lane), ties, NaN and -inf, and
# a last window that ends on the tensor's last element (width 40).
wide = randn(1, 2, 6, 41)
wide_ties = torch.randint(-2, 3, (1, 2, 5, 37)).float()
wide_specials = randn(1, 2, 5, 44)
wide_specials[0, 0, 1, 3:9] = float("-inf")
wide_specials[0, 0, 2, 10] = float("nan")
wide_specials[0, 1, 0, 20] = float("nan")
wide_specials[0, 1, 0, 22] = float("nan")
wide_end = randn(2, 2, 3, 40)
wide_cases = [
    ("wide_k3s2p1", wide, 3, 2, 1, 1, False, None),
    ("wide_k3s2p1_ceil", wide, 3, 2, 1, 1, True, None),
    ("wide_ties_k3s1p1", wide_ties, 3, 1, 1, 1, False, None),
    ("wide_k3s3p1", randn(1, 1, 4, 50), 3, 3, 1, 1, False, None),
    ("wide_specials_k2s2_dilated", wide_specials, 2, 2, [0, 1], [1, 2], False, None),
    ("wide_specials_k3s1", wide_specials, [2, 3], 1, 0, 1, False, None),
    ("wide_end_k3s2p1", wide_end, 3, 2, 1, 1, False, None),
    ("wide_end_k3s2p1_bf16", wide_end, 3, 2, 1, 1, False, torch.bfloat16),
    ("wide_k3s2p1_f16", wide, 3, 2, 1, 1, False, torch.float16),
]
for tag, x, kernel, stride, pad, dilation, ceil_mode, dtype in wide_cases:
    pool_case("max_pool2d_" + tag, "max_pool", 2, x, kernel, stride, pad, dilation, ceil_mode,
              dtype=dtype)
    pool_grad_case("max_pool_grad2d_" + tag, "max_pool", 2, x, kernel, stride, pad, dilation,
                   ceil_mode, dtype=dtype)


# ---------------------------------------------------------------------------------------------
# bias_gelu, bias_gelu_grad (appended last: the cases above keep their random draws)
# ---------------------------------------------------------------------------------------------
def bias_gelu_cases(name, x, b, g, approximate, dtype=None, bias_dtype=None):
    """gelu(x + b) and its input gradient; 16-bit data is rounded, the reference computes in
    f64 from the rounded values (the kernels' sum is in f32 registers, never rounded to 16 bits)."""
    if dtype is not None:
        x, g = low(x, dtype), low(g, dtype)
    b = low(b, bias_dtype or dtype or torch.float32)
    leaf = x.detach().double().requires_grad_(True)
    y = F.gelu(leaf + b.double(), approximate=approximate)
    y.backward(g.double())
    attrs = {"approximate": approximate}
    case(name, "bias_gelu", [x, b], [y.detach().to(x.dtype)], attrs)
    case(name + "_grad", "bias_gelu_grad", [g, x, b], [leaf.grad.to(x.dtype)], attrs)


torch.manual_seed(2)
for approximate in ("none", "tanh"):
    bias_gelu_cases("bias_gelu_%s_f32" % approximate, randn(2, 3, 8) * 2, randn(8),
                    randn(2, 3, 8), approximate)
    bias_gelu_cases("bias_gelu_%s_bf16" % approximate, randn(4, 6) * 2, randn(6), randn(4, 6),
                    approximate, dtype=torch.bfloat16)
bias_gelu_cases("bias_gelu_wide_f32", randn(3, 70) * 3, randn(70), randn(3, 70), "none")
bias_gelu_cases("bias_gelu_f16", randn(4, 6) * 2, randn(6), randn(4, 6), "tanh",
                dtype=torch.float16)
bias_gelu_cases("bias_gelu_bf16_f32_bias", randn(4, 6) * 2, randn(6), randn(4, 6), "tanh",
                dtype=torch.bfloat16, bias_dtype=torch.float32)

# ---------------------------------------------------------------------------------------------
# add_layer_norm (appended last: the cases above keep their random draws)
# ---------------------------------------------------------------------------------------------
def add_layer_norm_case(name, a, r, w, b, axis, eps, dtype=None):
    """The residual sum (rounded as an add's result) and its layer norm, in f64 from the
    rounded sum; 16-bit data is rounded first."""
    if dtype is not None:
        a, r = low(a, dtype), low(r, dtype)
    total = (a.double() + r.double()).to(a.dtype)
    dims = list(total.shape[axis:])
    y = F.layer_norm(total.double(), dims, w.double(), None if b is None else b.double(), eps)
    inputs = [a, r, w] + ([] if b is None else [b])
    case(name, "add_layer_norm", inputs, [total, y.to(a.dtype)], {"axis": axis, "epsilon": eps})


torch.manual_seed(3)
add_layer_norm_case("add_layer_norm_last", randn(2, 3, 8), randn(2, 3, 8), randn(8), randn(8), 2,
                    1e-5)
add_layer_norm_case("add_layer_norm_two_dims", randn(2, 3, 4) + 3, randn(2, 3, 4), randn(3, 4),
                    randn(3, 4), 1, 1e-3)
add_layer_norm_case("add_layer_norm_no_bias_wide", randn(3, 70), randn(3, 70), randn(70), None, 1,
                    1e-5)
add_layer_norm_case("add_layer_norm_bf16", randn(4, 16), randn(4, 16), randn(16), randn(16), 1,
                    1e-5, dtype=torch.bfloat16)
add_layer_norm_case("add_layer_norm_f16", randn(4, 16), randn(4, 16), randn(16), randn(16), 1,
                    1e-5, dtype=torch.float16)

# ---------------------------------------------------------------------------------------------
# max_pool_with_argmax and max_pool_grad_argmax
# ---------------------------------------------------------------------------------------------
def window_taps(indices, input_shape, output_shape, kernel, stride, pad, dilation):
    """PyTorch's return_indices (offsets in an input plane) as each output's row-major tap
    index in its whole window, padding included: what max_pool_with_argmax saves."""
    dims = len(kernel)
    taps = torch.zeros(indices.shape, dtype=torch.int64)
    rest = indices.clone()
    scale = 1
    for d in reversed(range(dims)):
        position = rest % input_shape[2 + d]
        rest = rest // input_shape[2 + d]
        shape = [1] * (2 + dims)
        shape[2 + d] = output_shape[2 + d]
        start = (torch.arange(output_shape[2 + d]) * stride[d] - pad[d]).reshape(shape)
        taps += (position - start) // dilation[d] * scale
        scale *= kernel[d]
    return taps.to(torch.uint8)


def max_pool_argmax_cases(name, dims, x, kernel, stride, pad, dilation, ceil_mode, dtype=None):
    """The forward with its saved taps, and the gradient routed by them (PyTorch's pooling
    with return_indices and its backward)."""
    if dtype is not None:
        x = low(x, dtype)
    listify = lambda v: [v] * dims if isinstance(v, int) else list(v)
    kernel, stride, pad, dilation = map(listify, (kernel, stride, pad, dilation))
    fn = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[dims]
    y, indices = fn(x.float(), kernel, stride, pad, dilation, ceil_mode, return_indices=True)
    taps = window_taps(indices, x.shape, y.shape, kernel, stride, pad, dilation)
    attrs = {"kernel_shape": kernel, "strides": stride, "pads": pad * 2, "dilations": dilation,
             "ceil_mode": ceil_mode}
    case(name + "_forward", "max_pool_with_argmax", [x], [y.to(x.dtype), taps], attrs)
    g = randn(*y.shape)
    if dtype is not None:
        g = low(g, dtype)
    (dx,) = autograd(lambda v: fn(v, kernel, stride, pad, dilation, ceil_mode), [x], g)
    case(name + "_grad", "max_pool_grad_argmax", [g, taps], [dx.to(x.dtype)], attrs)


torch.manual_seed(5)
argmax_ties = torch.randint(-2, 3, (2, 2, 6, 7)).float()
max_pool_argmax_cases("max_pool_argmax2d_stem", 2, randn(2, 3, 9, 9), 3, 2, 1, 1, False)
max_pool_argmax_cases("max_pool_argmax2d_ties_ceil", 2, argmax_ties, 2, 2, 1, 1, True)
max_pool_argmax_cases("max_pool_argmax2d_dilated", 2, randn(1, 2, 8, 7), 2, [2, 1], [1, 0], 2,
                      False)
max_pool_argmax_cases("max_pool_argmax1d", 1, randn(2, 3, 9), 3, 2, 1, 1, False)
max_pool_argmax_cases("max_pool_argmax3d", 3, randn(1, 2, 5, 4, 5), [2, 3, 2], [2, 1, 2],
                      [1, 1, 0], 1, True)
max_pool_argmax_cases("max_pool_argmax2d_bf16", 2, randn(2, 2, 7, 7), 3, 2, 1, 1, False,
                      dtype=torch.bfloat16)
max_pool_argmax_cases("max_pool_argmax2d_f16", 2, randn(1, 3, 6, 6), 2, 1, 0, 1, True,
                      dtype=torch.float16)
max_pool_argmax_cases("max_pool_argmax1d_256_taps", 1, randn(1, 2, 300), 256, 20, 0, 1, False)


def coarse(t, step):
    """t rounded to multiples of `step`: short decimals in the file, and sums of them exact in
    f32 as long as they stay below 2^24 steps."""
    return torch.round(t / step) * step


# ---------------------------------------------------------------------------------------------
# Attention on the CUDA kernels' other paths (appended last: the cases above keep their random
# draws). The tensor-core kernels take f16/bf16 with query, key and value head dimensions of 64
# or 128 (kernels/cuda/AttentionCall.h), in tiles of 64 queries and 64 keys (the backward's key
# pass 32 queries at a time): Tq and Tk here are not multiples of those, causal runs with fewer
# and with more queries than keys, masks are additive f32 (a full [Tq, Tk] one and a key padding
# one), the query heads share kv heads (4 on 2, whose h / group and h % Hk differ) and one case
# drops probabilities. Head dimension 96 in f32 takes the CUDA-core kernels' 16-row tiles. The
# references are the f64 formulas of the section above, each case's forward and backward from
# the same inputs; 16-bit backward references start from the stored, rounded output, as the
# kernels' D = rowsum(dO * O) does.
# ---------------------------------------------------------------------------------------------
torch.manual_seed(6)


def attention_backward_dropped(g, q, k, v, out, mask, causal, scale, dropout):
    """attention_backward with dropout (keep, ratio) on the probabilities, or none: dV =
    (P Z)^T dO and dS = P * (Z dO V^T - rowsum(dO * O)), Z the kept entries scaled by
    1 / (1 - ratio); rows that see no key have P = 0."""
    group = q.shape[1] // k.shape[1]
    p = torch.softmax(attention_scores(q, k, mask, causal, scale), -1).nan_to_num(0.0)
    z = 1.0
    if dropout is not None:
        keep, ratio = dropout
        z = torch.from_numpy(keep).double() / (1 - ratio)
    kr, vr = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    dv = (p * z).transpose(-1, -2) @ g
    ds = p * (z * (g @ vr.transpose(-1, -2)) - (g * out).sum(-1, keepdim=True)) * scale
    dq, dk = ds @ kr, ds.transpose(-1, -2) @ q

    def per_kv_head(t):  # the query heads sharing a kv head add up
        return t.reshape(t.shape[0], k.shape[1], group, *t.shape[2:]).sum(2)

    return dq, per_kv_head(dk), per_kv_head(dv)


def attention_path_cases(name, sizes, causal, mask_shape=None, dtype=None, dropout=None):
    """flash_attention and flash_attention_grad of one set of inputs. `dropout`: (ratio, seed,
    salt), the salt an i64 input after the optional mask. Masks are coarse (multiples of 1/2,
    a fifth -inf, key 0 always visible) to keep the file small."""
    b, h, hkv, tq, tk, d, dv = sizes
    q, k, v, mask = attention_inputs(*sizes, None)
    if mask_shape:
        mask = coarse(randn(*mask_shape) * 2, 0.5)
        mask[torch.rand(mask_shape) < 0.2] = float("-inf")
        mask[..., 0] = 0.0
    if dtype is not None:
        q, k, v = low(q, dtype), low(k, dtype), low(v, dtype)
    scale = 1.0 / math.sqrt(d)
    attrs = {"causal": causal, "scale": scale}
    drop = None
    optional = [mask] if mask is not None else []
    if dropout is not None:
        ratio, seed, salt = dropout
        drop = (dropout_keeps((b, h, tq, tk), ratio, seed, salt), ratio)
        attrs.update({"dropout_ratio": ratio, "seed": seed})
        optional.append(torch.tensor(salt, dtype=torch.int64))
    mask64 = None if mask is None else mask.double()
    leaves = [t.detach().double().requires_grad_(True) for t in (q, k, v)]
    out, lse = unfused_attention(*leaves, mask64, causal, scale, drop)
    g = randn(*out.shape)
    if dtype is not None:
        g = low(g, dtype)
    out.backward(g.double())
    inputs64 = [t.detach() for t in leaves]
    formula = attention_backward_dropped(g.double(), *inputs64, out.detach(), mask64, causal,
                                         scale, drop)
    assert all(torch.allclose(a, t.grad) for a, t in zip(formula, leaves)), name
    stored = out.detach().to(q.dtype)
    grads = attention_backward_dropped(g.double(), *inputs64, stored.double(), mask64, causal,
                                       scale, drop)
    lse = lse.detach().float()
    case(name, "flash_attention", [q, k, v] + optional, [stored, lse], attrs)
    case(name + "_grad", "flash_attention_grad", [g, q, k, v, stored, lse] + optional,
         [t.to(q.dtype) for t in grads], attrs)


# (batch, heads, kv heads, queries, keys, head_dim, value_dim)
attention_path_cases("flash_attention_tc_f16_d64_gqa_causal", (1, 4, 2, 20, 40, 64, 64), True,
                     dtype=torch.float16)
attention_path_cases("flash_attention_tc_bf16_d64_causal_more_queries",
                     (1, 1, 1, 70, 60, 64, 64), True, dtype=torch.bfloat16)
attention_path_cases("flash_attention_tc_bf16_d128_mask_dropout", (1, 1, 1, 20, 70, 128, 128),
                     False, (1, 1, 20, 70), torch.bfloat16, (0.1, 11, 1000003 * 3 + 2))
attention_path_cases("flash_attention_tc_f16_d128_padding_causal", (1, 1, 1, 33, 66, 128, 128),
                     True, (1, 1, 1, 66), torch.float16)
attention_path_cases("flash_attention_d96_causal_f32", (1, 1, 1, 18, 20, 96, 96), True)


# ---------------------------------------------------------------------------------------------
# matmul_nf4: the product with a QLoRA NF4 weight, against PyTorch's product (f64) with the
# weight dequantized by make_nf4.py's Python reference of the same packed bytes, plain absmax or
# double-quantized. NF4 blocks of 64 run across the weight's rows; one weight has an odd count
# (the last low nibble 0), one more than 256 blocks (two scales of double quantization); a
# 16-bit lhs of 66 rows spans two of the CPU's row tiles. 16-bit outputs are the f64 product of
# the rounded lhs, rounded once.
# ---------------------------------------------------------------------------------------------
torch.manual_seed(7)


def matmul_nf4_case(name, lhs_shape, weight_shape, transpose_rhs, double_quantization,
                    dtype=torch.float32):
    weight = (randn(*weight_shape) * 0.05).numpy()
    packed, absmax = make_nf4.quantize(weight)
    absmax_inputs = [torch.from_numpy(absmax)]
    if double_quantization:
        offset, codes, scales = make_nf4.quantize_absmax(absmax)
        absmax = make_nf4.dequantize_absmax(offset, codes, scales)
        absmax_inputs = [torch.from_numpy(codes), torch.from_numpy(scales),
                         torch.tensor(float(offset))]
    dequantized = torch.from_numpy(make_nf4.dequantize(packed, absmax, weight.size))
    dequantized = dequantized.reshape(weight_shape).double()
    lhs = low(randn(*lhs_shape), dtype)
    product = lhs.double() @ (dequantized.t() if transpose_rhs else dequantized)
    case(name, "matmul_nf4", [lhs, torch.from_numpy(packed)] + absmax_inputs,
         [product.to(dtype)],
         {"weight_shape": list(weight_shape), "transpose_rhs": transpose_rhs})


matmul_nf4_case("matmul_nf4_transposed_f32", (2, 3, 96), (70, 96), True, False)
matmul_nf4_case("matmul_nf4_double_f32", (3, 160), (160, 110), False, True)
matmul_nf4_case("matmul_nf4_double_transposed_bf16", (66, 64), (70, 64), True, True,
                torch.bfloat16)
matmul_nf4_case("matmul_nf4_odd_count_f16", (2, 5, 33), (33, 65), False, False, torch.float16)

# ---------------------------------------------------------------------------------------------
# adamw8bit_update: bitsandbytes' block-wise 8-bit AdamW (blocks of 256, Dettmers et al. 2022).
# Per block the moments are the dynamic codes' values times the block's absmax (an f32
# product); they are updated as torch.optim.AdamW updates its f32 moments, the parameter steps
# from the updated moments, and the moments are stored again as their block's new absmax (the
# largest magnitude) and each one's nearest code value (ties to the lower). The codes are
# make_dynamic_code.py's; the arithmetic is in f64. A code index is compared exactly, so the
# cases assert that no moment lies within a few f32 rounding errors of the midpoint between
# two code values: any f32 evaluation order gives the reference's indices.
# ---------------------------------------------------------------------------------------------
torch.manual_seed(8)
SIGNED_CODE, UNSIGNED_CODE = dynamic_code(True), dynamic_code(False)


def nearest_code(code, normalized, slack):
    """The index of the code value nearest to each `normalized` (ties to the lower), checked to
    be the same for every value within `slack` of it."""
    indices = []
    for x, e in zip(normalized.tolist(), slack.tolist()):
        picks = set()
        for y in (x - e, x, x + e):
            high = min(max(int(np.searchsorted(code, y, side="right")), 1), 255)
            low_index = high - 1
            picks.add(low_index if y - code[low_index] <= code[high] - y else high)
        assert len(picks) == 1, "a moment is too near a code midpoint: draw other data"
        indices.append(picks.pop())
    return indices


def quantize_moments(code, values, slack):
    """(codes, absmax per block of 256) of f64 `values` (flat)."""
    codes, absmax = [], []
    for begin in range(0, values.numel(), 256):
        block = values[begin:begin + 256]
        largest = float(block.abs().max())
        normalized = block / largest if largest > 0 else block * 0
        scaled = slack[begin:begin + 256] / largest if largest > 0 else slack[begin:begin + 256]
        codes += nearest_code(code, normalized, scaled)
        absmax.append(largest)
    return (torch.tensor(codes, dtype=torch.uint8),
            torch.tensor(absmax, dtype=torch.float64).float())


def adamw8bit_case(name, shape, step, lr, beta1, beta2, eps, weight_decay, dtype=torch.float32,
                   zero_state=False, gate=None):
    n = int(np.prod(shape))
    blocks = (n + 255) // 256
    p, g = low(randn(*shape), dtype), low(randn(*shape), dtype)
    if zero_state:  # bitsandbytes' first step: zero moments, zero absmax
        m_codes = torch.full(shape, int(np.argmin(np.abs(SIGNED_CODE))), dtype=torch.uint8)
        v_codes = torch.zeros(shape, dtype=torch.uint8)
        m_absmax, v_absmax = torch.zeros(blocks), torch.zeros(blocks)
    else:
        m_codes, m_absmax, v_codes, v_absmax = [], [], [], []
        for begin in range(0, n, 256):
            count = min(256, n - begin)
            scale, indices = quantize_block(SIGNED_CODE, (np.random.randn(count) * 0.1))
            m_codes += indices
            m_absmax.append(scale)
            scale, indices = quantize_block(UNSIGNED_CODE, np.random.randn(count) ** 2 * 0.01)
            v_codes += indices
            v_absmax.append(scale)
        m_codes = torch.tensor(m_codes, dtype=torch.uint8).reshape(shape)
        v_codes = torch.tensor(v_codes, dtype=torch.uint8).reshape(shape)
        m_absmax = torch.tensor(m_absmax, dtype=torch.float32)
        v_absmax = torch.tensor(v_absmax, dtype=torch.float32)
    block_of = torch.arange(n) // 256

    def dequantized(code, codes, absmax):  # the f32 product code value * absmax
        values = torch.from_numpy(code)[codes.flatten().long()] * absmax[block_of]
        return values.double()

    inputs = [p, g, m_codes, v_codes, m_absmax, v_absmax, scalar(lr), scalar(float(step))]
    attrs = {"beta1": float(beta1), "beta2": float(beta2), "eps": float(eps),
             "weight_decay": float(weight_decay)}
    if gate == 0.0:  # the gate off keeps every state
        case(name, "adamw8bit_update", inputs + [scalar(gate)],
             [p, m_codes, v_codes, m_absmax, v_absmax], attrs)
        return
    # bitsandbytes' kernels take the hyperparameters as f32 (and 1 - beta in f32, exact).
    lr, beta1, beta2, eps, weight_decay = (float(np.float32(x))
                                           for x in (lr, beta1, beta2, eps, weight_decay))
    m = dequantized(SIGNED_CODE, m_codes, m_absmax)
    v = dequantized(UNSIGNED_CODE, v_codes, v_absmax)
    g64, p64 = g.double().flatten(), p.double().flatten()
    m_terms = (beta1 * m).abs() + ((1 - beta1) * g64).abs()
    v_terms = beta2 * v + (1 - beta2) * g64 * g64
    m = beta1 * m + (1 - beta1) * g64
    v = beta2 * v + (1 - beta2) * g64 * g64
    denominator = v.sqrt() / math.sqrt(1 - beta2 ** step) + eps
    new_p = p64 * (1 - lr * weight_decay) - lr / (1 - beta1 ** step) * m / denominator
    # f32 rounds each of a moment's few operations: 1e-6 of the terms' magnitudes is some ten
    # times what that moves it by.
    new_m_codes, new_m_absmax = quantize_moments(SIGNED_CODE, m, 1e-6 * m_terms)
    new_v_codes, new_v_absmax = quantize_moments(UNSIGNED_CODE, v, 1e-6 * v_terms)
    outputs = [new_p.reshape(shape).to(dtype), new_m_codes.reshape(shape),
               new_v_codes.reshape(shape), new_m_absmax, new_v_absmax]
    case(name, "adamw8bit_update", inputs + ([] if gate is None else [scalar(gate)]), outputs,
         attrs)


np.random.seed(8)
adamw8bit_case("adamw8bit_step_5", (3, 200), 5, 1e-3, 0.9, 0.999, 1e-8, 0.01)
adamw8bit_case("adamw8bit_first_step", (300,), 1, 1e-3, 0.9, 0.95, 1e-6, 0.1, zero_state=True)
adamw8bit_case("adamw8bit_step_2_bf16", (2, 150), 2, 1e-3, 0.9, 0.95, 1e-6, 0.1,
               dtype=torch.bfloat16)
adamw8bit_case("adamw8bit_gate_on_f16", (2, 100), 3, 2e-3, 0.8, 0.99, 1e-8, 0.0,
               dtype=torch.float16, gate=1.0)
adamw8bit_case("adamw8bit_gate_off", (260,), 4, 1e-3, 0.9, 0.999, 1e-8, 0.01, gate=0.0)

# ---------------------------------------------------------------------------------------------
# copy, offload, reload: the bytes unchanged (offload and reload move them between the device
# and the host region; on the CPU all three are a copy).
# ---------------------------------------------------------------------------------------------
torch.manual_seed(9)
moved = randn(3, 70)
case("copy_f32", "copy", [moved], [moved.clone()])
case("copy_i64_reshaped", "copy", [torch.arange(-6, 6).reshape(3, 4)], [torch.arange(-6, 6)])
case("offload_bf16", "offload", [low(moved, torch.bfloat16)], [low(moved, torch.bfloat16)])
case("reload_bf16", "reload", [low(moved, torch.bfloat16)], [low(moved, torch.bfloat16)])
case("offload_f32", "offload", [moved[:1]], [moved[:1].clone()])
case("reload_i1", "reload", [moved > 0], [moved > 0])


# ---------------------------------------------------------------------------------------------
# Shapes the CUDA kernels split across blocks (kernels/cuda/RowWorkspace.h, ReductionMath.h,
# RowKernels.cuh): parameter gradients over hundreds of rows (chunks of 16 rows, the last one
# short, their partial sums added in order), batch_norm channels of some 10k values (chunks of
# a few thousand per channel), a reduction of 100k values (a warp per chunk of about 1k, then a
# pass over the chunks), rows of 4099 values (blocks of 512 threads, several values each) and
# of a GPT-2 vocabulary's 50257 classes, scans over several spans of 1024 values, and
# gather_grad with each index repeated some 30 times (atomic adds). References are in f64;
# inputs are coarse where that shortens the file (and makes f32 sums exact).
# ---------------------------------------------------------------------------------------------
torch.manual_seed(10)
layer_norm_grad_case("layer_norm_grad_many_rows_bf16_f32_scale", randn(300, 40) * 2 + 1,
                     randn(40), randn(300, 40), 1, 1e-5, dtype=torch.bfloat16,
                     reference_dtype=torch.float64)

rows_x, rows_w, rows_g = coarse(randn(250, 24), 1 / 32), randn(24), coarse(randn(250, 24), 1 / 32)
rms_leaves = [t.double().requires_grad_(True) for t in (rows_x, rows_w)]
rms_norm(rms_leaves[0], rms_leaves[1], 1, 1e-6).backward(rows_g.double())
case("rms_norm_grad_many_rows_f32", "rms_norm_grad", [rows_g, rows_x, rows_w],
     [t.grad.float() for t in rms_leaves], {"axis": 1, "epsilon": 1e-6})

# [N, C, H, W] = [2, 2, 71, 71]: 10082 values a channel, a mean far from zero.
bn_x = low(randn(2, 2, 71, 71) * 2 + 3, torch.bfloat16)
bn_scale, bn_bias, bn_mean, bn_var = randn(2), randn(2), randn(2) * 0.1, randn(2).abs() + 0.5
case("batch_norm_train_many_bf16", "batch_norm", [bn_x, bn_scale, bn_bias, bn_mean, bn_var],
     [F.batch_norm(bn_x.double(), bn_mean.double(), bn_var.double(), bn_scale.double(),
                   bn_bias.double(), True, 0.1, 1e-5).bfloat16()],
     {"epsilon": 1e-5, "momentum": 0.1, "training": True})
bn_g = low(randn(2, 2, 71, 71), torch.bfloat16)
bn_leaves = [t.double().requires_grad_(True) for t in (bn_x, bn_scale, bn_bias)]
F.batch_norm(bn_leaves[0], None, None, bn_leaves[1], bn_leaves[2], True, 0.1,
             1e-5).backward(bn_g.double())
case("batch_norm_grad_many_bf16_f32_scale", "batch_norm_grad", [bn_g, bn_x, bn_scale],
     [bn_leaves[0].grad.bfloat16()] + [t.grad.float() for t in bn_leaves[1:]], {"epsilon": 1e-5})

long_rows = torch.randint(-9, 10, (2, 50001)).float()
case("reduce_sum_long_f32", "reduce_sum", [long_rows], [long_rows.double().sum(1).float()],
     {"axes": [1], "keepdims": False})

wide_logits = coarse(randn(2, 4099) * 3, 1 / 4)
case("softmax_4099_f32", "softmax", [wide_logits],
     [torch.softmax(wide_logits.double(), 1).float()], {"axis": 1})
vocab_logits = coarse(randn(2, 50257) * 3, 1 / 2)
vocab_labels = torch.tensor([50256, 7])
case("cross_entropy_vocab_f32", "cross_entropy", [vocab_logits, vocab_labels],
     [F.cross_entropy(vocab_logits.double(), vocab_labels).float()], {"ignore_index": -100})
ce_labels = torch.tensor([4098, -100, 0])
ce_logits = coarse(randn(3, 4099) * 3, 1 / 4)
ce_leaf = ce_logits.double().requires_grad_(True)
(F.cross_entropy(ce_leaf, ce_labels) * 1.7).backward()
case("cross_entropy_grad_4099_f32", "cross_entropy_grad", [torch.tensor(1.7), ce_logits, ce_labels],
     [ce_leaf.grad.float()], {"ignore_index": -100})

scan = coarse(randn(5000) * 2, 1 / 8)
case("cumsum_long_f32", "cumsum", [scan], [scan.double().cumsum(0).float()],
     {"axis": 0, "exclusive": False, "reverse": False})
scan_rows = coarse(randn(2, 3001) * 2, 1 / 8)
case("cumsum_long_exclusive_reverse_f32", "cumsum", [scan_rows],
     [(scan_rows.double().flip(1).cumsum(1).flip(1) - scan_rows.double()).float()],
     {"axis": 1, "exclusive": True, "reverse": True})


def gather_grad_repeats_case(name, rows, indices, width, dtype):
    """gather_grad of an embedding [rows, width] whose indices (negative ones from the end)
    repeat; the gradient is coarse, so the sums are exact whatever their order."""
    g = coarse(randn(*indices.shape, width), 1 / 8).to(dtype)
    flat = torch.remainder(indices.long().flatten(), rows)
    grad = torch.zeros(rows, width, dtype=torch.float64)
    grad.index_add_(0, flat, g.double().reshape(-1, width))
    case(name, "gather_grad", [g, indices], [grad.to(dtype)], {"axis": 0})


gather_grad_repeats_case("gather_grad_heavy_repeats_f32", 40, torch.randint(-8, 8, (6, 100)), 32,
                         torch.float32)
gather_grad_repeats_case("gather_grad_heavy_repeats_bf16", 12,
                         torch.randint(0, 5, (3, 50), dtype=torch.int32), 16, torch.bfloat16)


# batch_moments: the batch's per-channel mean and biased variance, as torch.var_mean; with a
# large mean next to the spread, 16-bit inputs with f32 statistics, an odd run length (spatial
# 5 x 7, not a multiple of the 8 lanes) and rank 2.
def batch_moments_case(name, x, statistics=torch.float32):
    dims = [0] + list(range(2, x.dim()))
    variance, mean = torch.var_mean(x.double(), dim=dims, unbiased=False)
    case(name, "batch_moments", [x], [mean.to(statistics), variance.to(statistics)])


batch_moments_case("batch_moments_f32", randn(4, 3, 5, 7) * 2 + 0.5)
batch_moments_case("batch_moments_large_mean_f32", randn(3, 2, 9, 9) + 1000.0)
batch_moments_case("batch_moments_bf16", (randn(2, 4, 6, 6) * 3).bfloat16())
batch_moments_case("batch_moments_f16_bf16_out", (randn(5, 3, 11) - 2).half(), torch.bfloat16)
batch_moments_case("batch_moments_rank2_f32", randn(17, 6))

# linear_cross_entropy_grad's one pass at 16 class chunks and more (each block's chunks shared out
# over the slots; the f32 cases above take it too, with 2 chunks): both weight layouts, a bias,
# ignored labels, rows and classes off the 256-chunks. And f32's two passes, for 6 row blocks of 1
# class chunk.
linear_cross_entropy_cases("linear_cross_entropy_one_pass_tied_bias_f32", (300,), 4, 4100, True,
                           0.1, bias=True)
linear_cross_entropy_cases("linear_cross_entropy_one_pass_untied_f32", (2, 140), 4, 4000, False,
                           0.1)
linear_cross_entropy_cases("linear_cross_entropy_two_pass_tied_bias_f32", (1300,), 4, 200, True,
                           0.1, bias=True)

# flash_attention_grad's one pass (16 (batch, kv head) pairs or more, a task each: its key blocks
# in order, dQ summed over them): causal f32 with grouped kv heads, bf16 with a mask, dropout.
torch.manual_seed(6)
flash_attention_grad_case("flash_attention_grad_one_pass_causal_gqa_f32", (4, 8, 4, 66, 66, 2, 2),
                          True)
flash_attention_grad_case("flash_attention_grad_one_pass_mask_bf16", (2, 8, 8, 5, 66, 4, 2), False,
                          (2, 1, 1, 66), dtype=torch.bfloat16)
flash_attention_dropout_cases("flash_attention_one_pass_dropout_f32", (2, 8, 8, 3, 66, 2, 2),
                              True, None, 0.2, 5, 11)

output = os.path.join(os.path.dirname(os.path.abspath(__file__)), "references.txt")
with open(output, "w") as f:
    f.write("# Generated by make_references.py with torch %s; do not edit.\n" % torch.__version__)
    f.write("\n".join(lines) + "\n")
print("%d cases, %d bytes -> %s" % (len(names), os.path.getsize(output), output))
