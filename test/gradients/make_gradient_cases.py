"""Generate the per-op gradient cases that memc-gradient-tests checks.

Run from the repository root with Debian's python (torch 1.13 CPU, onnx 1.12),
not the pyenv python3 that may be first on PATH:

    /usr/bin/python3 test/gradients/make_gradient_cases.py

Every differentiable memc op gets one or more tiny cases. A case is a model,
either an ONNX export of a small torch function (opset 17, constant folding
off) or, for ops that ONNX import never produces alone, memc IR (.mlir), plus
<name>.npz holding:

  * the graph inputs, named after the graph's inputs;
  * `__param_<name>`: the value of every initializer / memc.param argument
    (module parameters and buffers), so the test can bind them as inputs;
  * `__grad_<output>`: a random upstream gradient for every output;
  * `__expected_<output>`: torch's forward output;
  * `__expected_grad_<name>`: torch.autograd's gradient (y.backward(upstream))
    of every floating graph input and every trainable parameter.

The references are computed in float64 from the same float32 values (float16
stays float16), so they are the exact answer to f32 rounding; the test
compares memc's f32 gradients with them at |a - e| <= 1e-5 + 1e-4 |e|.

cases/cases.json lists the cases with the memc ops each one must contain after
canonicalization, and whether the finite-difference check applies (inputs
are generated away from kinks -- relu at 0, clip bounds, max ties -- except in
the cases that test the convention at a kink, which skip it with the reason).

Seeds are per case (derived from the case's name), torch runs single-threaded
and the .npz archives carry a fixed zip timestamp, so re-running the script
reproduces every file byte for byte.
"""

import collections
import io
import json
import math
import os
import sys
import zipfile
import zlib

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper
from torch.nn.utils import stateless

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
from dropout_mask import dropout_keeps  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_DIR = os.path.join(HERE, "cases")
OPSET = 17
INT64_MIN = -9223372036854775807

torch.set_num_threads(1)


# --------------------------------------------------------------------------
# Case descriptions
# --------------------------------------------------------------------------

class Case:
    """One gradient case.

    `inputs`: graph inputs, name -> numpy array, in graph order.
    `params`: name -> (array, trainable), for helper-built and .mlir models;
        module cases take theirs from the module.
    `function(*inputs, **params)`: the torch computation, returning a tensor or a
        tuple of tensors; for module cases, the module itself.
    Exactly one of `module`, `onnx_nodes` (hand-built ONNX graph, for what
    torch cannot export, e.g. negative slice steps other than -1) and `mlir`
    (memc IR text, for ops ONNX import never produces alone) gives the model.
    """

    def __init__(self, name, ops, inputs, outputs=("y",), function=None, module=None,
                 onnx_nodes=None, mlir=None, params=None, finite_difference=True,
                 torch_reference=True, output_shapes=None, opset=OPSET, note=""):
        self.name = name
        self.ops = list(ops)
        self.inputs = collections.OrderedDict(inputs)
        self.outputs = list(outputs)
        self.function = function
        self.module = module
        self.onnx_nodes = onnx_nodes
        self.mlir = mlir
        self.params = collections.OrderedDict(params or {})
        self.finite_difference = finite_difference
        self.torch_reference = torch_reference
        self.output_shapes = output_shapes  # for the upstream gradients without a reference
        self.opset = opset  # of a hand-built ONNX graph
        self.note = note


CASES = []


def register(make):
    """Registers a function that returns a Case (or a list of them), called with
    a numpy Generator seeded from the function's name."""
    rng = np.random.default_rng(zlib.crc32(make.__name__.encode()))
    made = make(rng)
    CASES.extend(made if isinstance(made, list) else [made])
    return make


class Lambda(nn.Module):
    def __init__(self, function):
        super().__init__()
        self.function = function

    def forward(self, *args):
        return self.function(*args)


class Wrap(nn.Module):
    """Holds a layer under the attribute `layer`, so its initializers are named
    layer.weight, layer.bias, ..."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, *args):
        return self.layer(*args)


def normal(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def uniform(rng, low, high, *shape):
    return rng.uniform(low, high, shape).astype(np.float32)


def away_from_zero(rng, *shape, low=0.1, high=1.0):
    """Values with |x| in [low, high] and random signs (no kink at 0)."""
    signs = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    return (signs * rng.uniform(low, high, shape)).astype(np.float32)


def distinct(rng, *shape, spacing=0.05):
    """A random permutation of an evenly spaced grid: no ties, and every two
    values at least `spacing` apart, far more than the finite-difference step."""
    count = int(np.prod(shape))
    grid = (np.arange(count) - count / 2) * spacing
    return rng.permutation(grid).reshape(shape).astype(np.float32)


def randomize(module, rng):
    """Distinct random values for every parameter and buffer: torch's eval-mode
    export stores equal initializers once, which would merge parameters."""
    with torch.no_grad():
        for name, tensor in list(module.named_parameters()) + list(module.named_buffers()):
            if not tensor.is_floating_point():
                continue
            values = rng.standard_normal(tuple(tensor.shape))
            if "running_var" in name:
                values = rng.uniform(0.5, 2.0, tuple(tensor.shape))
            tensor.copy_(torch.from_numpy(values.astype(np.float32)))
    return module


# --------------------------------------------------------------------------
# Elementwise unary ops
# --------------------------------------------------------------------------

@register
def unary_cases(rng):
    def unary(name, op, function, x, **kw):
        return Case(name, [op], {"x": x}, module=Lambda(function), **kw)

    return [
        unary("neg", "neg", torch.neg, normal(rng, 3, 4)),
        unary("exp", "exp", torch.exp, uniform(rng, -2, 2, 3, 4)),
        unary("log", "log", torch.log, uniform(rng, 0.5, 2, 3, 4)),
        unary("sqrt", "sqrt", torch.sqrt, uniform(rng, 0.5, 2, 3, 4)),
        unary("reciprocal", "reciprocal", torch.reciprocal, away_from_zero(rng, 3, 4, low=0.5, high=2)),
        unary("erf", "erf", torch.erf, normal(rng, 3, 4)),
        unary("tanh", "tanh", torch.tanh, normal(rng, 3, 4)),
        unary("sigmoid", "sigmoid", torch.sigmoid, normal(rng, 3, 4)),
        unary("relu", "relu", torch.relu, away_from_zero(rng, 3, 4)),
        unary("relu_at_zero", "relu", torch.relu,
              np.array([[-1, 0, 1], [0, 2, 0]], dtype=np.float32),
              finite_difference="relu has a kink at 0; torch's convention there (gradient 0) "
                                "is what this case pins",
              note="exact zeros: the gradient at the kink is 0, as torch"),
        unary("gelu_exact", "gelu", F.gelu, normal(rng, 3, 8),
              note="exported as the erf decomposition; memc-fuse-gelu makes it memc.gelu"),
        unary("gelu_tanh", "gelu", lambda x: F.gelu(x, approximate="tanh"), normal(rng, 3, 8),
              note="exported as the tanh decomposition; memc-fuse-gelu makes it memc.gelu"),
        unary("clip", "clip", lambda x: torch.clamp(x, -0.5, 0.5),
              np.concatenate([away_from_zero(rng, 8, low=0.55, high=1.0),
                              uniform(rng, -0.45, 0.45, 8)]).reshape(4, 4)),
        unary("clip_min_only", "clip", lambda x: torch.clamp(x, min=-0.2),
              (uniform(rng, 0.05, 1, 3, 4) * np.where(rng.random((3, 4)) < 0.5, 1, -1) - 0.2
               ).astype(np.float32)),
        unary("clip_at_bounds", "clip", lambda x: torch.clamp(x, -0.5, 0.5),
              np.array([[-0.5, 0.5, -0.7], [0.7, 0.0, 0.5]], dtype=np.float32),
              finite_difference="clip has kinks at its bounds; torch's convention there "
                                "(the gradient passes) is what this case pins",
              note="x exactly at min and max: the gradient passes, as torch.clamp"),
        unary("triu", "trilu", lambda x: torch.triu(x, 1), normal(rng, 2, 4, 5)),
        unary("tril", "trilu", lambda x: torch.tril(x, -1), normal(rng, 2, 5, 4)),
        unary("cast_f32_to_f16", "cast", lambda x: x.half(), normal(rng, 3, 4),
              finite_difference="the output is f16: differences of f16 values at step 1e-3 "
                                "measure rounding, not the derivative"),
        unary("cast_f16_to_f32", "cast", lambda x: x.float(), normal(rng, 3, 4).astype(np.float16),
              finite_difference="the input is f16 and cannot be perturbed by 1e-3"),
    ]


@register
def dropout_case(rng):
    # torch cannot reproduce memc's mask (a function of the seed and the element index), so
    # dropout has no torch reference; the finite-difference check proves its rule (dropout is
    # linear in its input, so central differences are exact up to rounding). ONNX exports in
    # eval mode carry no dropout at all; the training builder inserts memc.dropout.
    x = uniform(rng, 0.5, 1.5, 4, 8)
    mlir = """func.func @forward(%x: tensor<4x8xf32> {memc.input = "x"})
    -> (tensor<4x8xf32> {memc.output = "y"}) {
  %y = memc.dropout %x {ratio = 3.000000e-01 : f64, seed = 7 : i64} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
"""
    return Case("dropout", ["dropout"], {"x": x}, mlir=mlir, torch_reference=False,
                output_shapes=[(4, 8)], note="no torch reference (memc's own mask); checked by finite differences")


# --------------------------------------------------------------------------
# Broadcasting binary ops
# --------------------------------------------------------------------------

@register
def binary_cases(rng):
    def binary(name, op, function, a, b, **kw):
        return Case(name, [op], {"a": a, "b": b}, module=Lambda(function), **kw)

    positive = lambda *shape: uniform(rng, 0.5, 2, *shape)
    return [
        binary("add", "add", torch.add, normal(rng, 3, 4), normal(rng, 3, 4)),
        binary("add_broadcast_both", "add", torch.add, normal(rng, 3, 1, 5), normal(rng, 4, 1),
               note="[3,1,5] + [4,1] -> [3,4,5]: both operands broadcast"),
        binary("sub_broadcast_both", "sub", torch.sub, normal(rng, 4, 1), normal(rng, 2, 1, 3),
               note="[4,1] - [2,1,3] -> [2,4,3]"),
        binary("mul_broadcast_both", "mul", torch.mul, normal(rng, 2, 3, 1), normal(rng, 1, 4),
               note="[2,3,1] * [1,4] -> [2,3,4]"),
        Case("mul_same_operand", ["mul"], {"x": normal(rng, 3, 4)},
             module=Lambda(lambda x: x * x),
             note="one value used twice: the two contributions are summed"),
        binary("div", "div", torch.div, normal(rng, 3, 4), away_from_zero(rng, 3, 4, low=0.5, high=2)),
        binary("div_broadcast_both", "div", torch.div, normal(rng, 1, 4),
               away_from_zero(rng, 3, 1, low=0.5, high=2), note="[1,4] / [3,1] -> [3,4]"),
        binary("pow_tensor_broadcast", "pow", torch.pow, positive(3, 4), uniform(rng, -1.5, 1.5, 4),
               note="base [3,4] (positive) ** exponent [4]: both gradients, the exponent's summed"),
        binary("pow_base_broadcast", "pow", torch.pow, positive(4), uniform(rng, -1.5, 1.5, 2, 4),
               note="base [4] ** exponent [2,4]"),
        binary("pow_zero_base", "pow", torch.pow,
               np.array([[0, 0, 0, 0.5], [0, 1.5, 0, 2]], dtype=np.float32),
               np.array([[0, 1, 2.5, 0], [3, 0.5, 1, -1]], dtype=np.float32),
               note="bases 0 with exponents 0, 1, 2.5, 3 and 1: torch defines both gradients "
                    "there (0 for the exponent; 0 for the base when the exponent is 0)",
               finite_difference="a base of 0 is a boundary of pow's domain (negative bases "
                                 "give NaN for fractional exponents)"),
        Case("pow_constant_exponent", ["pow"], {"x": normal(rng, 3, 4)},
             module=Lambda(lambda x: x ** 3.0),
             note="constant exponent 3 (no exponent gradient), negative bases included"),
        Case("pow_constant_fractional", ["pow"], {"x": positive(3, 4)},
             module=Lambda(lambda x: torch.pow(x, 1.5)), note="x ** 1.5, x > 0"),
        Case("where", ["where"],
             {"condition": rng.random((3, 1)) < 0.5, "a": normal(rng, 3, 4), "b": normal(rng, 4)},
             module=Lambda(torch.where),
             note="condition [3,1], on_true [3,4], on_false [4]: both branches unbroadcast"),
    ]


def away_from(rng, kinks, low, high, *shape, margin=0.1):
    """Uniform values in [low, high] at least `margin` from every kink."""
    values = uniform(rng, low, high, *shape)
    for kink in kinks:
        close = np.abs(values - kink) < margin
        values[close] = kink + np.where(values[close] < kink, -margin, margin)
    return values.astype(np.float32)


AT_KINKS = "the kinks themselves: torch's convention there is what this case pins"


@register
def activation_cases(rng):
    def unary(name, ops, function, x, **kw):
        return Case(name, ops if isinstance(ops, list) else [ops], {"x": x},
                    module=Lambda(function), **kw)

    kinks = np.array([[-3, 0, 3], [-4, 4, 1.5]], dtype=np.float32)
    return [
        unary("leaky_relu", "leaky_relu", lambda x: F.leaky_relu(x, 0.1), away_from_zero(rng, 3, 4)),
        unary("leaky_relu_at_zero", "leaky_relu", lambda x: F.leaky_relu(x, 0.1),
              np.array([[-1, 0, 2]], dtype=np.float32), finite_difference=AT_KINKS,
              note="x = 0 takes the slope alpha, as torch"),
        unary("elu", "elu", lambda x: F.elu(x, 1.5), away_from_zero(rng, 3, 4)),
        unary("elu_at_zero", "elu", lambda x: F.elu(x, 1.5),
              np.array([[-1, 0, 2]], dtype=np.float32), finite_difference=AT_KINKS,
              note="x = 0 takes alpha, as torch"),
        unary("softplus", "softplus", F.softplus, normal(rng, 3, 4) * 3),
        unary("mish", ["softplus", "tanh", "mul"], F.mish, normal(rng, 3, 4) * 2,
              note="F.mish exports as x * tanh(softplus(x))"),
        unary("hard_swish", "hard_swish", F.hardswish, away_from(rng, (-3, 3), -5, 5, 4, 5)),
        unary("hard_swish_at_kinks", "hard_swish", F.hardswish, kinks,
              finite_difference=AT_KINKS, note="x = -3 and 3 are inside the middle piece, as torch"),
        unary("hard_sigmoid", "hard_sigmoid", F.hardsigmoid, away_from(rng, (-3, 3), -5, 5, 4, 5)),
        unary("hard_sigmoid_at_kinks", "hard_sigmoid", F.hardsigmoid, kinks,
              finite_difference=AT_KINKS, note="x = -3 and 3 get 0, as torch (strictly inside)"),
        unary("abs", "abs", torch.abs, away_from_zero(rng, 3, 4)),
        unary("abs_at_zero", "abs", torch.abs, np.array([[-1, 0, 2]], dtype=np.float32),
              finite_difference=AT_KINKS, note="sign(0) = 0, as torch"),
        unary("sin", "sin", torch.sin, normal(rng, 3, 4) * 2),
        unary("cos", "cos", torch.cos, normal(rng, 3, 4) * 2),
        Case("prelu", ["prelu"], {"x": away_from_zero(rng, 2, 3, 4)},
             module=Wrap(randomize(nn.PReLU(3), rng)),
             note="nn.PReLU(3) on [2,3,4]: the slope [3,1] broadcasts, its gradient summed"),
        Case("prelu_at_zero", ["prelu"], {"x": np.array([[-1, 0], [0, 2]], dtype=np.float32)},
             module=Wrap(randomize(nn.PReLU(), rng)), finite_difference=AT_KINKS,
             note="x = 0 takes the slope and gives it no gradient, as torch"),
    ]


def max3_graph(case):
    return [helper.make_node("Max", ["a", "b", "c"], ["y"])]


@register
def selection_cases(rng):
    def binary(name, op, function, a, b, **kw):
        return Case(name, [op], {"a": a, "b": b}, module=Lambda(function), **kw)

    ties = lambda *shape: rng.integers(0, 3, shape).astype(np.float32)
    # One draw for the three operands, so that no two of them tie.
    values = distinct(rng, 18)
    a, b, c = values[:12].reshape(3, 4), values[12:16], values[16:].reshape(2, 1, 1)
    return [
        binary("max_broadcast", "max", torch.maximum, distinct(rng, 3, 1, 4), distinct(rng, 2, 1),
               note="[3,1,4] vs [2,1]: both gradients unbroadcast"),
        binary("min_broadcast", "min", torch.minimum, distinct(rng, 2, 1), distinct(rng, 3, 1, 4),
               note="[2,1] vs [3,1,4]"),
        binary("max_ties", "max", torch.maximum, ties(3, 4), ties(3, 4),
               finite_difference=AT_KINKS, note="equal operands share the gradient in halves"),
        binary("min_ties", "min", torch.minimum, ties(3, 4), ties(4),
               finite_difference=AT_KINKS, note="ties, [3,4] vs [4]: halves, summed"),
        Case("max_variadic", ["max"], {"a": a, "b": b, "c": c}, onnx_nodes=max3_graph,
             function=lambda a, b, c: torch.maximum(torch.maximum(a, b), c),
             note="hand-built ONNX Max of three operands (torch exports two at a time)"),
    ]


# --------------------------------------------------------------------------
# Linear algebra and normalization
# --------------------------------------------------------------------------

@register
def matmul_cases(rng):
    def matmul(name, a, b, note):
        return Case(name, ["matmul"], {"a": a, "b": b}, module=Lambda(torch.matmul), note=note)

    linear = Wrap(randomize(nn.Linear(4, 3), rng))
    linear3d = Wrap(randomize(nn.Linear(4, 5), rng))
    return [
        matmul("matmul_2d", normal(rng, 3, 4), normal(rng, 4, 5), "[3,4] @ [4,5]"),
        matmul("matmul_batched", normal(rng, 2, 3, 4), normal(rng, 2, 4, 5), "[2,3,4] @ [2,4,5]"),
        matmul("matmul_broadcast_batch", normal(rng, 2, 1, 3, 4), normal(rng, 3, 4, 5),
               "[2,1,3,4] @ [3,4,5] -> [2,3,3,5]: both batch gradients summed"),
        matmul("matmul_matrix_rhs_batched_lhs", normal(rng, 2, 3, 4), normal(rng, 4, 5),
               "[2,3,4] @ [4,5]: the weight gradient sums over the batch"),
        matmul("matmul_vector_lhs", normal(rng, 4), normal(rng, 2, 4, 5),
               "[4] @ [2,4,5] -> [2,5]: 1-D lhs promoted to [1,4]"),
        matmul("matmul_vector_rhs", normal(rng, 2, 3, 4), normal(rng, 4),
               "[2,3,4] @ [4] -> [2,3]: 1-D rhs promoted to [4,1]"),
        matmul("matmul_vector_both", normal(rng, 4), normal(rng, 4), "[4] @ [4] -> []: a dot product"),
        Case("linear", ["matmul", "add"], {"x": normal(rng, 3, 4)}, module=linear,
             note="nn.Linear on 2-D input: ONNX Gemm(transB) -> transpose + matmul + add"),
        Case("linear_3d", ["matmul", "add"], {"x": normal(rng, 2, 3, 4)}, module=linear3d,
             note="nn.Linear on 3-D input: MatMul with the transposed weight, then Add"),
    ]


@register
def einsum_cases(rng):
    def case(name, equation, shapes, note):
        names = ["a", "b"][:len(shapes)]
        return Case(name, ["matmul"] if len(shapes) == 2 else ["reduce_sum"],
                    {name_: normal(rng, *shape) for name_, shape in zip(names, shapes)},
                    module=Lambda(lambda *xs: torch.einsum(equation, *xs)), note=note)

    return [
        case("einsum_attention_scores", "bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)],
             "q @ k^T per batch and head"),
        case("einsum_attention_values", "bhqk,bhkd->bqhd", [(2, 2, 3, 5), (2, 2, 5, 4)],
             "probabilities @ v, the output's heads moved after the queries"),
        case("einsum_linear", "bi,oi->bo", [(3, 4), (5, 4)], "x @ w^T"),
        case("einsum_outer", "i,j->ij", [(3,), (4,)], "outer product: nothing contracted"),
        case("einsum_sums_one_side", "bid,bjd->bi", [(2, 3, 4), (2, 5, 4)],
             "j appears only in b and not in the output: summed before the matmul"),
        case("einsum_implicit", "ij,jk", [(3, 4), (4, 2)],
             "implicit output (letters appearing once, alphabetical)"),
        case("einsum_reduce_transpose", "bij->jb", [(2, 3, 4)], "one operand: a sum and a transpose"),
    ]


@register
def softmax_cases(rng):
    def case(name, op, function, shape, note):
        return Case(name, [op], {"x": normal(rng, *shape)}, module=Lambda(function), note=note)

    return [
        case("softmax_last", "softmax", lambda x: torch.softmax(x, -1), (2, 3, 5), "axis -1"),
        case("softmax_axis1", "softmax", lambda x: torch.softmax(x, 1), (2, 3, 5), "axis 1"),
        case("log_softmax_last", "log_softmax", lambda x: torch.log_softmax(x, -1), (2, 3, 5),
             "axis -1"),
        case("log_softmax_axis0", "log_softmax", lambda x: torch.log_softmax(x, 0), (4, 3),
             "axis 0"),
    ]


class LayerNormNoBias(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))

    def forward(self, x):
        return F.layer_norm(x, (x.shape[-1],), self.weight, None, 1e-5)


@register
def layer_norm_cases(rng):
    return [
        Case("layer_norm", ["layer_norm"], {"x": normal(rng, 2, 3, 8)},
             module=Wrap(randomize(nn.LayerNorm(8), rng)), note="over the last axis, with bias"),
        Case("layer_norm_two_axes", ["layer_norm"], {"x": normal(rng, 2, 3, 4)},
             module=Wrap(randomize(nn.LayerNorm([3, 4], eps=1e-3), rng)),
             note="over the last two axes, epsilon 1e-3"),
        Case("layer_norm_no_bias", ["layer_norm"], {"x": normal(rng, 3, 8)},
             module=Wrap(randomize(LayerNormNoBias(8), rng)), note="scale only"),
    ]


def layer_norm_statistics(x, scale, bias):
    """ONNX LayerNormalization's three outputs over the last two axes, epsilon 1e-3."""
    mean = x.mean((1, 2), keepdim=True)
    inverse = torch.rsqrt(((x - mean) ** 2).mean((1, 2), keepdim=True) + 1e-3)
    return F.layer_norm(x, (3, 4), scale, bias, 1e-3), mean, inverse


@register
def layer_norm_statistics_case(rng):
    return Case("layer_norm_mean_inv_std_dev", ["layer_norm", "reduce_mean", "reciprocal"],
                {"x": normal(rng, 2, 3, 4)}, outputs=("y", "mean", "inv_std_dev"),
                onnx_nodes=lambda case: [helper.make_node(
                    "LayerNormalization", ["x", "scale", "bias"], ["y", "mean", "inv_std_dev"],
                    axis=1, epsilon=1e-3)],
                function=layer_norm_statistics,
                params={"scale": (normal(rng, 3, 4), True), "bias": (normal(rng, 3, 4), True)},
                note="hand-built ONNX LayerNormalization whose Mean and InvStdDev outputs are "
                     "read: their gradients reach x too")


def batch_norm_mlir(name, shape):
    channels = shape[1]
    tensor = "tensor<" + "x".join(map(str, shape)) + "xf32>"
    vector = f"tensor<{channels}xf32>"
    return f"""func.func @forward(%x: {tensor} {{memc.input = "x"}},
    %weight: {vector} {{memc.param = "weight", memc.param_kind = "parameter"}},
    %bias: {vector} {{memc.param = "bias", memc.param_kind = "parameter"}},
    %mean: {vector} {{memc.param = "running_mean", memc.param_kind = "buffer"}},
    %var: {vector} {{memc.param = "running_var", memc.param_kind = "buffer"}})
    -> ({tensor} {{memc.output = "y"}}) {{
  %y = memc.batch_norm %x, %weight, %bias, %mean, %var
      {{epsilon = 1.000000e-05 : f64, momentum = 9.000000e-01 : f64, training = true}}
      : ({tensor}, {vector}, {vector}, {vector}, {vector}) -> {tensor}
  return %y : {tensor}
}}
"""


@register
def batch_norm_cases(rng):
    def training(name, shape):
        channels = shape[1]
        params = {"weight": (normal(rng, channels), True), "bias": (normal(rng, channels), True),
                  "running_mean": (normal(rng, channels), False),
                  "running_var": (uniform(rng, 0.5, 2, channels), False)}
        function = lambda x, weight, bias, running_mean, running_var: F.batch_norm(
            x, running_mean.clone(), running_var.clone(), weight, bias, training=True,
            momentum=0.1, eps=1e-5)
        return Case(name, ["batch_norm"], {"x": normal(rng, *shape)}, params=params,
                    function=function, mlir=batch_norm_mlir(name, shape),
                    note="memc IR: ONNX import gives eval-mode batch_norm; @train_step switches "
                         "it to training (batch statistics)")

    return [
        Case("batch_norm_eval", ["batch_norm"], {"x": normal(rng, 2, 3, 4, 4)},
             module=Wrap(randomize(nn.BatchNorm2d(3), rng).eval()),
             note="eval mode (running statistics): the affine rule; exported with "
                  "TrainingMode.PRESERVE"),
        training("batch_norm_training_4d", (2, 3, 4, 4)),
        training("batch_norm_training_2d", (6, 4)),
    ]


# --------------------------------------------------------------------------
# Reductions
# --------------------------------------------------------------------------

def group_normalization_18(x, scale, bias):
    """ONNX GroupNormalization at opset 18: scale and bias hold one value per group."""
    grouped = F.group_norm(x, 2, eps=1e-3).reshape(2, 2, -1)
    return (grouped * scale[:, None] + bias[:, None]).reshape(x.shape)


@register
def instance_group_norm_cases(rng):
    moments = ["reduce_mean", "sqrt", "reciprocal"]
    return [
        Case("instance_norm", moments, {"x": normal(rng, 2, 3, 4, 5)},
             module=Wrap(randomize(nn.InstanceNorm2d(3, affine=True), rng)),
             note="nn.InstanceNorm2d with affine parameters exports InstanceNormalization"),
        Case("instance_norm_1d", moments, {"x": normal(rng, 2, 4, 6)},
             module=Wrap(randomize(nn.InstanceNorm1d(4, eps=1e-3, affine=True), rng)),
             note="nn.InstanceNorm1d, epsilon 1e-3"),
        Case("group_norm", moments + ["reshape"], {"x": normal(rng, 2, 6, 3, 3)},
             module=Wrap(randomize(nn.GroupNorm(3, 6), rng)),
             note="nn.GroupNorm exports Reshape, InstanceNormalization of unit scale, Reshape, "
                  "then its per-channel affine"),
        Case("group_normalization_opset18", moments + ["reshape"], {"x": normal(rng, 2, 4, 3)},
             onnx_nodes=lambda case: [helper.make_node(
                 "GroupNormalization", ["x", "scale", "bias"], ["y"], num_groups=2,
                 epsilon=1e-3)],
             function=group_normalization_18, opset=18,
             params={"scale": (normal(rng, 2), True), "bias": (normal(rng, 2), True)},
             note="hand-built ONNX GroupNormalization (opset 18: scale and bias per group)"),
    ]


@register
def reduction_cases(rng):
    def case(name, op, function, x, note, **kw):
        return Case(name, [op], {"x": x}, module=Lambda(function), note=note, **kw)

    return [
        case("reduce_sum_keepdims", "reduce_sum", lambda x: torch.sum(x, (0, 2), keepdim=True),
             normal(rng, 2, 3, 4), "axes (0, 2), keepdims"),
        case("reduce_sum_drop", "reduce_sum", lambda x: torch.sum(x, 1), normal(rng, 2, 3, 4),
             "axis 1, no keepdims"),
        case("reduce_sum_all", "reduce_sum", torch.sum, normal(rng, 2, 3, 4), "every axis -> []"),
        case("reduce_mean_keepdims", "reduce_mean", lambda x: x.mean(-1, keepdim=True),
             normal(rng, 2, 3, 4), "axis -1, keepdims"),
        case("reduce_mean_multi", "reduce_mean", lambda x: x.mean((0, 2)), normal(rng, 2, 3, 4),
             "axes (0, 2), no keepdims"),
        case("reduce_mean_all", "reduce_mean", torch.mean, normal(rng, 2, 3, 4), "every axis -> []"),
        case("reduce_max_keepdims", "reduce_max", lambda x: torch.amax(x, 1, keepdim=True),
             distinct(rng, 2, 3, 4), "axis 1, keepdims, no ties"),
        case("reduce_max_multi", "reduce_max", lambda x: torch.amax(x, (0, 2)),
             distinct(rng, 2, 3, 4), "axes (0, 2), no keepdims, no ties"),
        case("reduce_max_ties", "reduce_max", lambda x: torch.amax(x, 1, keepdim=True),
             rng.integers(0, 3, (2, 4, 3)).astype(np.float32),
             "integer values with ties: the gradient is shared evenly among the maxima (torch.amax)",
             finite_difference="ties make reduce_max non-differentiable; torch.amax's convention "
                               "(an even share) is what this case pins"),
    ]


def reduce_l2_graph(axes, keepdims):
    return lambda case: [helper.make_node("ReduceL2", ["x"], ["y"], axes=axes, keepdims=keepdims)]


@register
def norm_and_product_cases(rng):
    def case(name, ops, function, x, note, **kw):
        return Case(name, ops, {"x": x}, module=Lambda(function), note=note, **kw)

    with_zeros = normal(rng, 3, 4)
    with_zeros[0, 1] = 0           # one zero in row 0: its gradient is the others' product
    with_zeros[1, [0, 2]] = 0      # two zeros in row 1: every gradient is 0
    zero_row = normal(rng, 3, 4)
    zero_row[1] = 0
    return [
        case("normalize", ["reduce_l2", "clip", "div"], lambda x: F.normalize(x, dim=1),
             normal(rng, 3, 4), "F.normalize: ReduceL2 + Clip(eps) + Expand + Div"),
        Case("reduce_l2_keepdims", ["reduce_l2"], {"x": normal(rng, 2, 3, 4)},
             onnx_nodes=reduce_l2_graph([0, 2], 1),
             function=lambda x: torch.linalg.vector_norm(x, 2, dim=(0, 2), keepdim=True),
             note="hand-built ONNX ReduceL2 (torch exports vector_norm as Abs/Pow/ReduceSum), "
                  "axes (0, 2), keepdims"),
        Case("reduce_l2_zero_norm", ["reduce_l2"], {"x": zero_row},
             onnx_nodes=reduce_l2_graph([1], 0),
             function=lambda x: torch.linalg.vector_norm(x, 2, dim=1),
             note="hand-built ONNX ReduceL2 over a row of zeros: its gradient is 0, as torch's",
             finite_difference="the norm is not differentiable at 0; torch's convention there "
                               "(gradient 0) is what this case pins"),
        case("reduce_log_sum_exp", ["reduce_log_sum_exp"], lambda x: torch.logsumexp(x, 1),
             normal(rng, 2, 5, 3) * 3, "torch.logsumexp over axis 1"),
        case("reduce_log_sum_exp_all", ["reduce_log_sum_exp"], lambda x: torch.logsumexp(x, (0, 1)),
             normal(rng, 3, 4) * 10, "every axis, large values (the stable form)"),
        case("reduce_prod", ["reduce_prod"], lambda x: torch.prod(x, 1),
             uniform(rng, 0.5, 1.5, 3, 4) * np.where(rng.random((3, 4)) < 0.5, 1, -1).astype(np.float32),
             "torch.prod over axis 1, mixed signs"),
        case("reduce_prod_zeros", ["reduce_prod"], lambda x: torch.prod(x, 1), with_zeros,
             "one zero (gradient: the other elements' product) and two zeros (all 0) in a row, "
             "as torch.prod"),
        case("reduce_prod_all", ["reduce_prod"], torch.prod, uniform(rng, 0.5, 1.5, 2, 3),
             "every axis -> []"),
        case("variance", ["reduce_mean"], lambda x: x.var(1), normal(rng, 3, 5),
             "x.var(1) exports ReduceProd of the shape, folded on the host"),
    ]


# --------------------------------------------------------------------------
# Layout and indexing
# --------------------------------------------------------------------------

def slice_negative_step_graph(case):
    """Slice with steps -2 on both axes, which torch cannot export (it has no negative steps;
    flip exports step -1 only)."""
    const = lambda name, values: helper.make_node(
        "Constant", [], [name], value=helper.make_tensor(name, TensorProto.INT64, [len(values)], values))
    return [const("starts", [3, -1]), const("ends", [0, INT64_MIN]), const("axes", [0, 1]),
            const("steps", [-2, -2]),
            helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])]


def gather_negative_graph(case):
    return [helper.make_node("Gather", ["data", "indices"], ["y"], axis=1)]


class IndexSelect(nn.Module):
    def forward(self, x, indices):
        return torch.index_select(x, 1, indices)


@register
def layout_cases(rng):
    rows, cols = np.arange(5)[3:0:-2].copy(), np.arange(6)[::-2].copy()
    embedding = Wrap(randomize(nn.Embedding(10, 4), rng))
    gather_indices = np.array([[-1, 0], [2, -1], [4, 4]], dtype=np.int64)
    return [
        Case("transpose", ["transpose"], {"x": normal(rng, 2, 3, 4)},
             module=Lambda(lambda x: x.permute(2, 0, 1))),
        Case("reshape", ["reshape"], {"x": normal(rng, 2, 3, 4)},
             module=Lambda(lambda x: x.reshape(4, 6).unsqueeze(1) * 2.0),
             note="Reshape and Unsqueeze; the product keeps the reshape from being the output"),
        Case("broadcast_to", ["broadcast_to"], {"x": normal(rng, 3, 1, 4)},
             module=Lambda(lambda x: x.expand(2, 3, 5, 4)),
             note="Expand [3,1,4] -> [2,3,5,4]: new leading axis and a stretched one"),
        Case("concat", ["concat"], {"a": normal(rng, 2, 1, 3), "b": normal(rng, 2, 4, 3),
                                     "c": normal(rng, 2, 2, 3)},
             module=Lambda(lambda a, b, c: torch.cat([a, b, c], 1))),
        Case("split", ["split"], {"x": normal(rng, 2, 6, 3)}, outputs=("y0", "y1", "y2"),
             module=Lambda(lambda x: torch.split(x, [2, 3, 1], 1)),
             note="three outputs, summed into one objective"),
        Case("split_unused_piece", ["split"], {"x": normal(rng, 2, 6, 3)}, outputs=("y0", "y2"),
             module=Lambda(lambda x: (lambda p: (p[0], p[2]))(torch.split(x, [2, 3, 1], 1))),
             note="the middle piece has no gradient: zeros fill its place"),
        Case("slice", ["slice"], {"x": normal(rng, 5, 6, 7)},
             module=Lambda(lambda x: x[1:4, ::2, -3:]), note="starts, steps 2 and a negative start"),
        Case("slice_flip", ["slice"], {"x": normal(rng, 3, 4, 5)},
             module=Lambda(lambda x: torch.flip(x, [0, 2])),
             note="torch.flip exports Slice with step -1"),
        Case("slice_negative_step", ["slice"], {"x": normal(rng, 5, 6)},
             onnx_nodes=slice_negative_step_graph,
             function=lambda x: x[torch.from_numpy(rows)][:, torch.from_numpy(cols)],
             note="hand-built ONNX Slice with steps -2 (x[3:0:-2, ::-2])"),
        Case("gather_embedding", ["gather"], {"ids": np.array([[1, 3, 3], [0, 3, 9]], dtype=np.int64)},
             module=embedding, note="nn.Embedding with a repeated id: its rows accumulate"),
        Case("gather_axis1", ["gather"],
             {"x": normal(rng, 3, 5), "indices": np.array([4, 1, 1, 0], dtype=np.int64)},
             module=IndexSelect(), note="index_select on axis 1 with a repeated index"),
        Case("gather_negative_indices", ["gather"],
             {"data": normal(rng, 4, 5), "indices": gather_indices},
             onnx_nodes=gather_negative_graph,
             function=lambda data, indices: data[:, torch.from_numpy(gather_indices % 5)],
             note="hand-built ONNX Gather, axis 1, 2-D indices with negative and repeated ones"),
    ]


@register
def structural_cases(rng):
    def case(name, ops, function, x, note):
        return Case(name, ops, {"x": x}, module=Lambda(function), note=note)

    return [
        case("pad_constant", ["concat"], lambda x: F.pad(x, (1, 2, 0, 1), value=0.5),
             normal(rng, 2, 3, 4), "F.pad constant 0.5: concatenated constant blocks"),
        case("pad_crop", ["slice", "concat"], lambda x: F.pad(x, (-1, 2, 1, -2)),
             normal(rng, 2, 5, 4), "negative pads crop (a slice), positive ones add zeros"),
        case("pad_reflect", ["slice", "concat"], lambda x: F.pad(x, (2, 1, 1, 3), mode="reflect"),
             normal(rng, 1, 2, 5, 4), "reflect: mirrored slices, their gradients summed"),
        case("pad_edge", ["slice", "broadcast_to", "concat"],
             lambda x: F.pad(x, (1, 2, 2, 0), mode="replicate"), normal(rng, 1, 2, 3, 4),
             "replicate (ONNX edge): broadcast edge slices"),
        case("tile", ["broadcast_to"], lambda x: x.repeat(2, 1, 3), normal(rng, 2, 3, 2),
             "x.repeat exports Tile: a broadcast between reshapes"),
        case("depth_to_space", ["transpose"], lambda x: F.pixel_shuffle(x, 2),
             normal(rng, 1, 8, 2, 3), "F.pixel_shuffle exports DepthToSpace (CRD)"),
        case("cumsum", ["cumsum"], lambda x: torch.cumsum(x, 1), normal(rng, 2, 5, 3),
             "torch.cumsum over axis 1: the gradient is the reversed cumulative sum"),
        Case("cumsum_exclusive_reverse", ["cumsum"], {"x": normal(rng, 3, 6)},
             onnx_nodes=lambda case: [
                 helper.make_node("Constant", [], ["axis"], value=helper.make_tensor(
                     "axis", TensorProto.INT64, [], [-1])),
                 helper.make_node("CumSum", ["x", "axis"], ["y"], exclusive=1, reverse=1)],
             function=lambda x: x.flip(1).cumsum(1).flip(1) - x,
             note="hand-built ONNX CumSum, exclusive and reverse, axis -1 (torch has neither)"),
        Case("depth_to_space_dcr", ["transpose"], {"x": normal(rng, 1, 8, 2, 3)},
             onnx_nodes=lambda case: [helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2,
                                                       mode="DCR")],
             # DCR orders channels (block row, block column, depth); pixel_shuffle's CRD
             # (depth, block row, block column).
             function=lambda x: F.pixel_shuffle(x.reshape(1, 4, 2, 2, 3).transpose(1, 2)
                                                .reshape(1, 8, 2, 3), 2),
             note="hand-built ONNX DepthToSpace, DCR mode (torch exports CRD)"),
        Case("space_to_depth", ["transpose"], {"x": normal(rng, 1, 2, 4, 6)},
             onnx_nodes=lambda case: [helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2)],
             # SpaceToDepth orders channels (block row, block column, channel); pixel_unshuffle
             # (channel, block row, block column).
             function=lambda x: F.pixel_unshuffle(x, 2).reshape(1, 2, 4, 2, 3).transpose(1, 2)
             .reshape(1, 8, 2, 3),
             note="hand-built ONNX SpaceToDepth (torch's pixel_unshuffle exports a reshape and a "
                  "transpose)"),
    ]


class Recurrent(nn.Module):
    """An nn.LSTM or nn.GRU under `layer` returning its output and final states, with the
    initial states as inputs when `initial` says so."""

    def __init__(self, layer, initial=False):
        super().__init__()
        self.layer = layer
        self.initial = initial

    def forward(self, x, *states):
        # The RNN caches its weights in _flat_weights; stateless.functional_call (the float64
        # reference) swaps the parameters without refreshing that cache.
        self.layer._flat_weights = [getattr(self.layer, name)
                                    for name in self.layer._flat_weights_names]
        if not self.initial:
            y, final = self.layer(x)
        else:
            y, final = self.layer(x, states if len(states) > 1 else states[0])
        return (y,) + (tuple(final) if isinstance(final, tuple) else (final,))


@register
def recurrent_cases(rng):
    def case(name, layer, inputs, outputs, note, initial=False):
        return Case(name, ["matmul", "sigmoid", "tanh"], inputs, outputs=outputs,
                    module=Recurrent(randomize(layer, rng), initial), note=note)

    return [
        case("lstm_two_layers", nn.LSTM(3, 4, num_layers=2), {"x": normal(rng, 5, 2, 3)},
             ("y", "h", "c"), "nn.LSTM, 2 layers, 5 steps: one ONNX LSTM per layer"),
        case("lstm_bidirectional_initial_states", nn.LSTM(3, 4, bidirectional=True),
             {"x": normal(rng, 4, 2, 3), "h0": normal(rng, 2, 2, 4), "c0": normal(rng, 2, 2, 4)},
             ("y", "h", "c"), "bidirectional, initial h and c given", initial=True),
        case("gru", nn.GRU(3, 4), {"x": normal(rng, 5, 2, 3)}, ("y", "h"),
             "nn.GRU (linear_before_reset = 1, as torch exports it)"),
        case("gru_bidirectional_two_layers", nn.GRU(3, 2, num_layers=2, bidirectional=True),
             {"x": normal(rng, 3, 2, 3), "h0": normal(rng, 4, 2, 2)}, ("y", "h"),
             "bidirectional, 2 layers, initial h given", initial=True),
    ]


@register
def top_k_cases(rng):
    return [
        Case("top_k", ["top_k"], {"x": distinct(rng, 3, 6)},
             module=Lambda(lambda x: torch.topk(x, 3, dim=1).values),
             note="torch.topk, k 3 along the last axis: the gradient reaches the selected "
                  "elements only"),
        Case("top_k_smallest_axis0", ["top_k"], {"x": distinct(rng, 5, 2, 3)},
             module=Lambda(lambda x: torch.topk(x, 2, dim=0, largest=False).values * 2.0),
             note="the 2 smallest along axis 0 of a 3-D input (inner elements between)"),
    ]


@register
def resize_cases(rng):
    def case(name, ops, function, shape, note):
        return Case(name, ops, {"x": normal(rng, *shape)}, module=Lambda(function), note=note)

    return [
        case("resize_nearest", ["gather"], lambda x: F.interpolate(x, scale_factor=2.0),
             (1, 2, 3, 4), "F.interpolate nearest, scale 2: asymmetric coordinates, floor"),
        case("resize_nearest_sizes", ["gather"],
             lambda x: F.interpolate(x, size=(5, 3)), (2, 1, 3, 4),
             "nearest to sizes (5, 3): upsamples one axis, downsamples the other"),
        case("resize_bilinear", ["gather", "mul", "add"],
             lambda x: F.interpolate(x, scale_factor=2.0, mode="bilinear"), (1, 2, 3, 4),
             "bilinear, align_corners=False (half-pixel coordinates, clamped at the edges)"),
        case("resize_bilinear_align_corners", ["gather", "mul", "add"],
             lambda x: F.interpolate(x, size=(5, 7), mode="bilinear", align_corners=True),
             (1, 2, 3, 4), "bilinear to sizes (5, 7), align_corners=True"),
        case("resize_linear_downsample", ["gather", "mul", "add"],
             lambda x: F.interpolate(x, size=(2, 3), mode="bilinear"), (1, 1, 5, 6),
             "bilinear downsampling without antialiasing"),
        case("resize_linear_1d", ["gather", "mul", "add"],
             lambda x: F.interpolate(x, scale_factor=3.0, mode="linear"), (2, 3, 4),
             "nn.Upsample-style 1-D linear, scale 3"),
    ]


# --------------------------------------------------------------------------
# Convolution and pooling
# --------------------------------------------------------------------------

def avg_pool_graph(kernel, strides, pads, ceil_mode):
    def nodes(case):
        return [helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=kernel, strides=strides,
                                 pads=pads, ceil_mode=ceil_mode, count_include_pad=1)]
    return nodes


def conv_asymmetric_graph(case):
    return [helper.make_node("Conv", ["x", "weight", "bias"], ["y"], kernel_shape=[2, 3],
                             strides=[2, 2], pads=[0, 1, 2, 1])]


def max_pool_asymmetric_graph(case):
    return [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2],
                             pads=[1, 0, 0, 1])]


@register
def conv_cases(rng):
    def conv(name, layer, shape, note):
        return Case(name, ["conv"], {"x": normal(rng, *shape)}, module=Wrap(randomize(layer, rng)),
                    note=note)

    return [
        conv("conv2d", nn.Conv2d(3, 4, 3, padding=1), (2, 3, 5, 5), "3x3, padding 1, bias"),
        conv("conv2d_stride_dilation", nn.Conv2d(2, 3, (3, 2), stride=(1, 2), padding=(2, 1),
                                                 dilation=2, bias=False),
             (1, 2, 6, 7), "kernel 3x2, strides (1,2), padding (2,1), dilation 2, no bias"),
        conv("conv2d_groups", nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2), (2, 4, 6, 6),
             "groups 2, stride 2, padding 1, bias"),
        conv("conv2d_depthwise", nn.Conv2d(3, 3, 3, padding=1, groups=3, bias=False),
             (1, 3, 4, 4), "depthwise (groups = channels), no bias"),
        conv("conv1d", nn.Conv1d(3, 4, 3, stride=2, padding=1), (2, 3, 9), "1-D, stride 2, bias"),
        Case("conv2d_asymmetric_pads", ["conv"], {"x": normal(rng, 1, 2, 5, 6)},
             params={"weight": (normal(rng, 3, 2, 2, 3), True), "bias": (normal(rng, 3), True)},
             onnx_nodes=conv_asymmetric_graph,
             function=lambda x, weight, bias: F.conv2d(F.pad(x, (1, 1, 0, 2)), weight, bias, 2),
             note="hand-built ONNX (torch pads symmetrically): pads top 0, left 1, bottom 2, "
                  "right 1, stride 2; the windows leave the last padded row unused"),
    ]


@register
def conv_transpose_cases(rng):
    def case(name, layer, shape, note):
        return Case(name, ["conv_grad_input"], {"x": normal(rng, *shape)},
                    module=Wrap(randomize(layer, rng)), note=note)

    return [
        case("conv_transpose2d", nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1,
                                                    output_padding=1), (2, 3, 4, 5),
             "3x3, stride 2, padding 1, output_padding 1 (the U-Net upsampling), bias"),
        case("conv_transpose2d_groups_dilation",
             nn.ConvTranspose2d(4, 6, (3, 2), stride=(1, 2), padding=(2, 0), dilation=2,
                                groups=2, bias=False), (1, 4, 5, 4),
             "kernel 3x2, strides (1,2), padding (2,0), dilation 2, groups 2, no bias"),
        case("conv_transpose2d_kernel2", nn.ConvTranspose2d(2, 3, 2, stride=2), (1, 2, 3, 3),
             "kernel 2, stride 2: every output pixel from one input pixel"),
        case("conv_transpose1d", nn.ConvTranspose1d(3, 2, 4, stride=3, padding=2,
                                                    output_padding=2), (2, 3, 5),
             "1-D, kernel 4, stride 3, padding 2, output_padding 2"),
    ]


@register
def pool_cases(rng):
    def pool(name, op, layer, x, note, **kw):
        return Case(name, [op], {"x": x}, module=Lambda(layer), note=note, **kw)

    return [
        pool("max_pool_padded", "max_pool", nn.MaxPool2d(3, 2, 1), distinct(rng, 2, 2, 5, 5),
             "3x3, stride 2, padding 1 (overlapping windows)"),
        pool("max_pool_ceil", "max_pool", nn.MaxPool2d(2, 2, ceil_mode=True), distinct(rng, 1, 2, 5, 5),
             "2x2, stride 2, ceil_mode on 5x5 (partial last windows)"),
        pool("max_pool_dilation", "max_pool", nn.MaxPool2d(2, 1, dilation=2), distinct(rng, 1, 2, 5, 5),
             "2x2, stride 1, dilation 2"),
        pool("max_pool_1d", "max_pool", nn.MaxPool1d(3, 2, 1), distinct(rng, 2, 3, 8),
             "1-D, kernel 3, stride 2, padding 1"),
        Case("max_pool_asymmetric_pads", ["max_pool"], {"x": distinct(rng, 1, 2, 5, 5)},
             onnx_nodes=max_pool_asymmetric_graph,
             function=lambda x: F.max_pool2d(F.pad(x, (0, 1, 1, 0), value=-np.inf), 2, 2),
             note="hand-built ONNX: 2x2, stride 2, pads top 1, left 0, bottom 0, right 1"),
        pool("max_pool_ties", "max_pool", nn.MaxPool2d(2, 2),
             rng.integers(0, 2, (1, 2, 4, 4)).astype(np.float32),
             "values 0 and 1 only: a window's gradient goes to its first maximum (torch)",
             finite_difference="ties make max_pool non-differentiable; torch's convention (the "
                               "first maximum) is what this case pins"),
        pool("avg_pool_exclude_pad", "avg_pool", nn.AvgPool2d(3, 2, 1, count_include_pad=False),
             normal(rng, 2, 2, 5, 5), "3x3, stride 2, padding 1, count_include_pad false"),
        pool("avg_pool_ceil", "avg_pool", nn.AvgPool2d(2, 2, ceil_mode=True, count_include_pad=False),
             normal(rng, 1, 2, 5, 5),
             "2x2, stride 2, ceil_mode on 5x5"),
        pool("avg_pool_1d", "avg_pool", nn.AvgPool1d(3, 2, count_include_pad=False), normal(rng, 2, 3, 9),
             "1-D, kernel 3, stride 2"),
        Case("avg_pool_include_pad", ["avg_pool"], {"x": normal(rng, 2, 2, 5, 5)},
             onnx_nodes=avg_pool_graph([3, 3], [2, 2], [1, 1, 1, 1], 0),
             function=nn.AvgPool2d(3, 2, 1, count_include_pad=True),
             note="hand-built ONNX (torch exports count_include_pad as Pad + AveragePool): "
                  "3x3, stride 2, padding 1, count_include_pad"),
        Case("avg_pool_ceil_include_pad", ["avg_pool"], {"x": normal(rng, 1, 2, 6, 6)},
             onnx_nodes=avg_pool_graph([3, 3], [2, 2], [1, 1, 1, 1], 1),
             function=nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=True),
             note="hand-built ONNX: ceil_mode with count_include_pad (the last window's divisor "
                  "stops at the end padding, as torch)"),
    ]


# --------------------------------------------------------------------------
# Losses
# --------------------------------------------------------------------------

def cross_entropy_mlir(logits_shape, ignore_index):
    logits = "tensor<" + "x".join(map(str, logits_shape)) + "xf32>"
    labels = "tensor<" + "x".join(map(str, logits_shape[:-1])) + "xi64>"
    return f"""func.func @forward(%logits: {logits} {{memc.input = "logits"}},
    %labels: {labels} {{memc.input = "labels"}}) -> (tensor<f32> {{memc.output = "loss"}}) {{
  %loss = memc.cross_entropy %logits, %labels {{ignore_index = {ignore_index} : i64}}
      : ({logits}, {labels}) -> tensor<f32>
  return %loss : tensor<f32>
}}
"""


@register
def cross_entropy_cases(rng):
    def case(name, shape, labels, ignore_index, note):
        classes = shape[-1]
        function = lambda logits, labels: F.cross_entropy(
            logits.reshape(-1, classes), labels.reshape(-1), ignore_index=ignore_index)
        return Case(name, ["cross_entropy"], {"logits": normal(rng, *shape), "labels": labels},
                    outputs=("loss",), function=function,
                    mlir=cross_entropy_mlir(shape, ignore_index), note=note)

    return [
        case("cross_entropy", (6, 5), np.array([0, 4, -100, 2, 2, -100], dtype=np.int64), -100,
             "[6,5] logits, two positions ignored (-100): the mean is over the other four"),
        case("cross_entropy_3d_ignore_class", (2, 3, 4),
             np.array([[1, 0, 3], [1, 2, 1]], dtype=np.int64), 1,
             "[2,3,4] logits, ignore_index 1 (a real class id): three positions ignored"),
    ]


# --------------------------------------------------------------------------
# Attention
# --------------------------------------------------------------------------

def attention_type(shape):
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


def flash_attention_mlir(q_shape, k_shape, v_shape, mask_shape, causal, scale, dropout=None):
    q, k, v = attention_type(q_shape), attention_type(k_shape), attention_type(v_shape)
    o = attention_type(q_shape[:3] + v_shape[3:])
    lse = attention_type(q_shape[:3])
    mask_argument = (f",\n    %mask: {attention_type(mask_shape)} "
                     f"{{memc.param = \"mask\", memc.param_kind = \"buffer\"}}"
                     if mask_shape else "")
    operands = "%q, %k, %v" + (", %mask" if mask_shape else "")
    operand_types = ", ".join([q, k, v] + ([attention_type(mask_shape)] if mask_shape else []))
    dropout_attrs = (f"dropout_ratio = {dropout[0]!r} : f64, " if dropout else "")
    seed_attr = (f", seed = {dropout[1]} : i64" if dropout else "")
    return f"""func.func @forward(%q: {q} {{memc.input = "q"}}, %k: {k} {{memc.input = "k"}},
    %v: {v} {{memc.input = "v"}}{mask_argument}) -> ({o} {{memc.output = "y"}}) {{
  %y, %lse = memc.flash_attention {operands}
      {{causal = {str(causal).lower()}, {dropout_attrs}scale = {scale!r} : f64{seed_attr}}}
      : ({operand_types}) -> ({o}, {lse})
  return %y : {o}
}}
"""


def unfused_attention(q, k, v, mask, causal, scale, dropout=None):
    """The formula the fusion replaces, as exporters write it: scores, mask, softmax, dropout,
    @ v, with k and v repeated for grouped-query attention and the causal cut aligned at the
    bottom right (query i sees keys j <= i + Tk - Tq). `dropout` is (keep, ratio): the
    probabilities where `keep` is true, scaled by 1 / (1 - ratio)."""
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    scores = (q @ k.transpose(-1, -2)) * scale
    if mask is not None:
        scores = scores + mask
    if causal:
        queries, keys = q.shape[2], k.shape[2]
        visible = torch.ones(queries, keys, dtype=torch.bool).tril(keys - queries)
        scores = scores.masked_fill(~visible, float("-inf"))
    probabilities = torch.softmax(scores, -1)
    if dropout is not None:
        keep, ratio = dropout
        probabilities = probabilities * torch.from_numpy(keep).to(probabilities.dtype) / (1 - ratio)
    return probabilities @ v


class LlamaStyleAttention(nn.Module):
    """Attention as HF Llama writes it, on [B, H, T, D] q and [B, Hkv, T, D] k and v."""

    def forward(self, q, k, v):
        b, heads, t, d = q.shape
        group = heads // k.shape[1]

        def repeat_kv(x):
            x = x[:, :, None, :, :].expand(b, x.shape[1], group, t, d)
            return x.reshape(b, heads, t, d)

        mask = torch.full((t, t), float("-inf")).triu(1)
        scores = q @ repeat_kv(k).transpose(2, 3) / math.sqrt(d) + mask
        return torch.softmax(scores, dim=-1) @ repeat_kv(v)


class Gpt2StyleAttention(nn.Module):
    """Attention as HF GPT-2 writes it: k arrives as [B, T, H, D], masked_fill with -inf where a
    tril of ones is 0 (computed here, not a buffer: the case binds float buffers as trainable
    inputs, and a mask has no gradient to compare)."""

    def forward(self, q, k, v):
        tokens = q.shape[2]
        causal = torch.tril(torch.ones(tokens, tokens)).view(1, 1, tokens, tokens)
        scores = q @ k.permute(0, 2, 3, 1) * (1.0 / math.sqrt(q.shape[-1]))
        scores = scores.masked_fill(causal == 0, float("-inf"))
        return torch.softmax(scores, dim=-1) @ v.transpose(1, 2)


@register
def flash_attention_cases(rng):
    def case(name, q_shape, kv_heads, keys, value_dim, causal, mask_shape, note, dropout=None):
        """`dropout` (ratio, seed): the op's dropout on the probabilities, against the unfused
        formula with memc.dropout's mask (dropout_mask.py) on the [B, H, Tq, Tk] probabilities,
        drawn from the seed (the cases run without a step's salt)."""
        b, h, t, d = q_shape
        k_shape, v_shape = (b, kv_heads, keys, d), (b, kv_heads, keys, value_dim)
        scale = 1.0 / float(np.sqrt(d))
        params = {}
        if mask_shape:
            # An additive mask as Llama and BERT exporters write it: 0 or -inf (a padded key),
            # plus a finite bias, never hiding a whole row.
            mask = 0.5 * normal(rng, *mask_shape)
            hidden = rng.random(mask_shape) < 0.2
            hidden[..., 0] = False
            mask[hidden] = -np.inf
            params["mask"] = (mask, False)
        dropped = None
        if dropout:
            ratio, seed = dropout
            dropped = (dropout_keeps((b, h, t, keys), ratio, seed), ratio)
        function = lambda q, k, v, mask=None: unfused_attention(q, k, v, mask, causal, scale,
                                                               dropped)
        return Case(name, ["flash_attention"],
                    {"q": normal(rng, *q_shape), "k": normal(rng, *k_shape),
                     "v": normal(rng, *v_shape)},
                    params=params, function=function,
                    mlir=flash_attention_mlir(list(q_shape), list(k_shape), list(v_shape),
                                              list(mask_shape) if mask_shape else None, causal,
                                              scale, dropout), note=note)

    def exported(name, module, shapes, note):
        q_shape, kv_shape = shapes
        return Case(name, ["flash_attention"],
                    {"q": normal(rng, *q_shape), "k": normal(rng, *kv_shape),
                     "v": normal(rng, *kv_shape)}, module=module, note=note)

    return [
        case("flash_attention_causal", (1, 2, 70, 16), 2, 70, 16, True, None,
             "causal, T=70 (a block of 64 and a partial one), head_dim 16"),
        case("flash_attention_mask_gqa", (2, 4, 67, 32), 2, 67, 32, False, (2, 1, 1, 67),
             "key-padding style additive mask [B,1,1,Tk] with -inf, 4 query heads on 2 kv heads"),
        case("flash_attention_causal_mask_gqa", (1, 6, 65, 64), 2, 65, 64, True, (1, 1, 65, 65),
             "causal and an additive [1,1,T,T] mask, 6 query heads on 2 kv heads, head_dim 64"),
        case("flash_attention_cached_keys", (1, 1, 40, 128), 1, 130, 128, True, None,
             "causal with Tq=40 < Tk=130 (bottom-right aligned), head_dim 128"),
        case("flash_attention_value_dim", (2, 2, 5, 24), 1, 9, 8, False, (1, 2, 5, 9),
             "head_dim 24, value dim 8, a per-head mask [1,H,Tq,Tk], 2 query heads on 1 kv head"),
        exported("flash_attention_export_llama_gqa", LlamaStyleAttention(),
                 ((1, 4, 20, 16), (1, 2, 20, 16)),
                 "ONNX export fused by memc-fuse-attention: Llama-3 repeat_kv (Expand + "
                 "Reshape), scores / sqrt(d), the triu(-inf) causal mask (becomes causal)"),
        exported("flash_attention_export_gpt2", Gpt2StyleAttention(),
                 ((2, 2, 20, 8), (2, 20, 2, 8)),
                 "ONNX export fused by memc-fuse-attention: k^T from [B,T,H,D] in one transpose, "
                 "scores * scale, masked_fill of a causal tril with -inf"),
        case("flash_attention_dropout_causal", (1, 2, 70, 16), 2, 70, 16, True, None,
             "dropout 0.1 on causal probabilities, T=70 (a block of 64 and a partial one)",
             dropout=(0.1, 5)),
        case("flash_attention_dropout_mask_gqa", (2, 4, 67, 32), 2, 67, 32, False, (2, 1, 1, 67),
             "dropout 0.3, not causal, an additive [B,1,1,Tk] mask with -inf, 4 query heads on "
             "2 kv heads, T=67", dropout=(0.3, 11)),
    ]


# --------------------------------------------------------------------------
# The LM head and cross_entropy fused (memc.linear_cross_entropy)
# --------------------------------------------------------------------------

def tensor_type(shape, element="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def linear_cross_entropy_mlir(hidden_shape, weight_shape, transpose, bias):
    rows = hidden_shape[:-1]
    h, w = tensor_type(hidden_shape), tensor_type(weight_shape)
    labels, lse = tensor_type(rows, "i64"), tensor_type(rows)
    b = tensor_type([weight_shape[0] if transpose else weight_shape[1]])
    flag = ", transpose_weight" if transpose else ""
    bias_argument = (f",\n    %b: {b} {{memc.param = \"b\", memc.param_kind = \"parameter\"}}"
                     if bias else "")
    return f"""func.func @forward(%h: {h} {{memc.input = "h"}}, %labels: {labels} {{memc.input = "labels"}},
    %w: {w} {{memc.param = "w", memc.param_kind = "parameter"}}{bias_argument}) -> (tensor<f32> {{memc.output = "y"}}) {{
  %loss, %lse = memc.linear_cross_entropy %h, %w, %labels{", %b" if bias else ""} {{ignore_index = -100 : i64{flag}}}
      : ({h}, {w}, {labels}{", " + b if bias else ""}) -> (tensor<f32>, {lse})
  return %loss : tensor<f32>
}}
"""


@register
def linear_cross_entropy_cases(rng):
    def case(name, hidden_shape, classes, transpose, ignored, note, finite_difference=True,
             bias=False):
        depth = hidden_shape[-1]
        weight_shape = (classes, depth) if transpose else (depth, classes)
        labels = rng.integers(0, classes, hidden_shape[:-1]).astype(np.int64)
        labels[rng.random(labels.shape) < ignored] = -100
        labels.flat[0] = 1  # at least one counted row: PyTorch's mean over none is NaN

        def function(h, labels, w, b=None):
            logits = h @ (w.t() if transpose else w)
            if b is not None:
                logits = logits + b
            return F.cross_entropy(logits.reshape(-1, classes), labels.reshape(-1))

        params = {"w": (normal(rng, *weight_shape), True)}
        if bias:
            params["b"] = (normal(rng, classes), True)
        return Case(name, ["linear_cross_entropy"],
                    {"h": normal(rng, *hidden_shape), "labels": labels},
                    params=params, function=function,
                    mlir=linear_cross_entropy_mlir(list(hidden_shape), list(weight_shape),
                                                   transpose, bias),
                    finite_difference=finite_difference, note=note)

    too_large = ("the torch reference checks it; central differences over the thousands of "
                 "elements of h and w would run the program twice per element")
    return [
        case("linear_cross_entropy_tied_small", (5, 3), 7, True, 0.2,
             "tied head (weight [V, D] read transposed), one ignored row, finite differences"),
        case("linear_cross_entropy_tied_chunks", (300, 16), 270, True, 0.1,
             "tied head, N=300 and V=270: whole 256-chunks and partial ones, ignored tokens",
             finite_difference=too_large),
        case("linear_cross_entropy_untied_3d", (2, 150, 8), 260, False, 0.2,
             "untied [D, V] head on [B, T, D] hidden states, ignored tokens, V past one chunk",
             finite_difference=too_large),
        case("linear_cross_entropy_bias_small", (4, 3), 6, False, 0.0,
             "untied head with a bias [V] (nn.Linear(bias=True)), finite differences", bias=True),
        case("linear_cross_entropy_bias_chunks", (2, 140, 8), 300, True, 0.1,
             "tied-layout head with a bias, 280 rows and 300 classes (partial chunks)",
             finite_difference=too_large, bias=True),
    ]


class RmsNorm(nn.Module):
    """Llama's RMSNorm in the three ways models write the inverse root: torch.rsqrt (exported
    as Div(1, Sqrt)), a reciprocal of the root, or a division by it."""

    def __init__(self, width, eps, form):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))
        self.eps, self.form = eps, form

    def forward(self, x):
        mean_square = x.pow(2).mean(-1, keepdim=True) + self.eps
        if self.form == "rsqrt":
            return x * torch.rsqrt(mean_square) * self.weight
        if self.form == "reciprocal":
            return self.weight * (x * torch.reciprocal(torch.sqrt(mean_square)))
        return x / torch.sqrt(mean_square) * self.weight


@register
def rms_norm_cases(rng):
    return [
        Case("rms_norm", ["rms_norm"], {"x": normal(rng, 2, 3, 8)},
             module=Wrap(randomize(RmsNorm(8, 1e-6, "rsqrt"), rng)),
             note="Llama's RMSNorm, x * rsqrt(mean(x^2) + eps) * w, fused into rms_norm"),
        Case("rms_norm_reciprocal", ["rms_norm"], {"x": normal(rng, 4, 16)},
             module=Wrap(randomize(RmsNorm(16, 1e-5, "reciprocal"), rng)),
             note="the inverse root as reciprocal(sqrt), the weight first"),
        Case("rms_norm_division", ["rms_norm"], {"x": normal(rng, 2, 2, 6) * 0.01},
             module=Wrap(randomize(RmsNorm(6, 1e-3, "division"), rng)),
             note="x / sqrt(mean(x^2) + eps) * w, small x next to epsilon 1e-3"),
    ]



class BiasFirstLinearGelu(nn.Module):
    """gelu(b + x @ W): the bias add with the bias as the first operand."""

    def __init__(self, features_in, features_out):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(features_in, features_out))
        self.bias = nn.Parameter(torch.zeros(features_out))

    def forward(self, x):
        return F.gelu(self.bias + x @ self.weight)


@register
def bias_gelu_cases(rng):
    return [
        Case("bias_gelu_linear_3d", ["matmul", "bias_gelu"], {"x": normal(rng, 2, 3, 8)},
             module=Wrap(randomize(nn.Sequential(nn.Linear(8, 16), nn.GELU()), rng)),
             note="nn.Linear on 3-D input (MatMul + Add) then the exact GELU: bias_gelu"),
        Case("bias_gelu_gemm_tanh", ["matmul", "bias_gelu"], {"x": normal(rng, 4, 8)},
             module=Wrap(randomize(nn.Sequential(nn.Linear(8, 6), nn.GELU("tanh")), rng)),
             note="nn.Linear on 2-D input (Gemm with its bias) then the tanh GELU: bias_gelu"),
        Case("bias_gelu_bias_first", ["matmul", "bias_gelu"], {"x": normal(rng, 2, 2, 5)},
             module=Wrap(randomize(BiasFirstLinearGelu(5, 7), rng)),
             note="gelu(b + x @ W): Add with the bias first, fused all the same"),
    ]


class ResidualNorm(nn.Module):
    """A residual add of a linear layer's output and the layer norm of the sum: post-norm
    returns the norm alone (BERT), pre-norm the norm and the sum read on (GPT-2's residual)."""

    def __init__(self, features, pre_norm):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.norm = nn.LayerNorm(features)
        self.pre_norm = pre_norm

    def forward(self, x):
        h = x + self.linear(x)
        if self.pre_norm:
            return self.norm(h), h * 0.5
        return self.norm(h)


@register
def add_layer_norm_cases(rng):
    return [
        Case("add_layer_norm_post_norm", ["add_layer_norm"], {"x": normal(rng, 2, 3, 8)},
             module=Wrap(randomize(ResidualNorm(8, False), rng)),
             note="layer_norm(x + linear(x)): the residual add fused into the norm"),
        Case("add_layer_norm_pre_norm", ["add_layer_norm"], {"x": normal(rng, 2, 4, 6)},
             outputs=("y", "h"), module=Wrap(randomize(ResidualNorm(6, True), rng)),
             note="the sum read on as well: its gradient joins the norm's"),
    ]


# --------------------------------------------------------------------------
# Export and references
# --------------------------------------------------------------------------

def to_torch(array, requires_grad):
    tensor = torch.from_numpy(np.array(array))
    if tensor.dtype == torch.float32:
        tensor = tensor.double()  # the reference is exact to f32 rounding
    return tensor.requires_grad_(requires_grad and tensor.is_floating_point())


def as_tuple(outputs):
    return tuple(outputs) if isinstance(outputs, (tuple, list)) else (outputs,)


def module_params(case):
    """name -> (array, trainable) of a module case's parameters and buffers."""
    params = collections.OrderedDict()
    for name, tensor in case.module.named_parameters():
        params[name] = (tensor.detach().numpy().copy(), True)
    for name, tensor in case.module.named_buffers():
        if tensor.is_floating_point():
            params[name] = (tensor.detach().numpy().copy(), False)
    return params


def upstream_gradients(shapes_and_types, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(tuple(shape)).astype(dtype) for shape, dtype in shapes_and_types]


def without_reference(case, params, upstream_seed):
    """The arrays of a case that torch cannot compute: inputs, parameters, upstream gradients."""
    arrays = collections.OrderedDict(case.inputs)
    for name, (value, _) in params.items():
        arrays["__param_" + name] = value
    upstream = upstream_gradients([(shape, np.float32) for shape in case.output_shapes],
                                  upstream_seed)
    for name, grad in zip(case.outputs, upstream):
        arrays["__grad_" + name] = grad
    return arrays


def run_reference(case, params, upstream_seed):
    """torch's outputs and gradients for `case`, in float64 (float16 stays float16)."""
    if not case.torch_reference:
        return without_reference(case, params, upstream_seed)
    inputs = [to_torch(value, True) for value in case.inputs.values()]
    tensors = collections.OrderedDict(
        (name, to_torch(value, trainable)) for name, (value, trainable) in params.items())
    if case.module is not None:
        module = case.module
        outputs = as_tuple(stateless.functional_call(module, dict(tensors), tuple(inputs)))
    else:
        outputs = as_tuple(case.function(*inputs, **tensors))
    upstream = upstream_gradients(
        [(output.shape, np.float16 if output.dtype == torch.float16 else np.float32)
         for output in outputs], upstream_seed)
    torch.autograd.backward(outputs, [torch.from_numpy(g).to(o.dtype) for g, o in zip(upstream, outputs)])
    arrays = collections.OrderedDict()
    for name, value in case.inputs.items():
        arrays[name] = value
    for name, (value, _) in params.items():
        arrays["__param_" + name] = value
    for name, output, grad in zip(case.outputs, outputs, upstream):
        arrays["__grad_" + name] = grad
        dtype = np.float16 if output.dtype == torch.float16 else np.float32
        arrays["__expected_" + name] = output.detach().numpy().astype(dtype)
    for (name, value), tensor in zip(case.inputs.items(), inputs):
        if tensor.requires_grad:
            arrays["__expected_grad_" + name] = tensor.grad.numpy().astype(value.dtype)
    for name, tensor in tensors.items():
        if tensor.requires_grad:
            arrays["__expected_grad_" + name] = tensor.grad.numpy().astype(np.float32)
    return arrays


def onnx_type(array):
    return {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16,
            np.dtype(np.int64): TensorProto.INT64, np.dtype(np.bool_): TensorProto.BOOL}[array.dtype]


def export_case(case, arrays, path):
    if case.module is not None:
        case.module.eval()
        example = tuple(torch.from_numpy(np.array(value)) for value in case.inputs.values())
        torch.onnx.export(case.module, example, path, opset_version=OPSET,
                          do_constant_folding=False,
                          training=torch.onnx.TrainingMode.PRESERVE,
                          input_names=list(case.inputs), output_names=case.outputs)
    else:
        vi = helper.make_tensor_value_info
        inputs = [vi(name, onnx_type(value), value.shape) for name, value in case.inputs.items()]
        outputs = [vi(name, onnx_type(arrays["__expected_" + name]),
                      arrays["__expected_" + name].shape) for name in case.outputs]
        initializers = [numpy_helper.from_array(value, name)
                        for name, (value, _) in case.params.items()]
        graph = helper.make_graph(case.onnx_nodes(case), case.name, inputs, outputs,
                                  initializer=initializers)
        model = helper.make_model(graph, producer_name="memc-gradient-cases",
                                  opset_imports=[helper.make_opsetid("", case.opset)])
        onnx.save_model(model, path)
    model = onnx.load(path)
    if case.opset <= OPSET:  # onnx 1.12's checker knows no op of a newer opset
        onnx.checker.check_model(model)
    graph_inputs = [i.name for i in model.graph.input]
    assert graph_inputs == list(case.inputs), f"{case.name}: graph inputs {graph_inputs}"
    return {t.name for t in model.graph.initializer}


def save_npz(path, arrays):
    """np.savez stamps the zip entries with the current time; write the same
    layout with a fixed timestamp so the archive is reproducible."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for key, value in arrays.items():
            buf = io.BytesIO()
            # np.ascontiguousarray would make a 0-d array (a scalar loss) 1-d.
            np.lib.format.write_array(buf, np.require(value, requirements="C"))
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, buf.getvalue())


def write_case(case):
    params = module_params(case) if case.module is not None else case.params
    arrays = run_reference(case, params, zlib.crc32(("upstream " + case.name).encode()))
    if case.mlir is not None:
        model_file = case.name + ".mlir"
        with open(os.path.join(CASES_DIR, model_file), "w") as out:
            out.write(f"// Generated by make_gradient_cases.py: {case.note}\n" if case.note else
                      "// Generated by make_gradient_cases.py\n")
            out.write(case.mlir)
    else:
        model_file = case.name + ".onnx"
        initializers = export_case(case, arrays, os.path.join(CASES_DIR, model_file))
        # Parameters the export kept as initializers; torch may drop unused ones.
        missing = [name for name, (_, trainable) in params.items()
                   if trainable and name not in initializers]
        assert not missing, f"{case.name}: parameters {missing} are not initializers"
        for name in list(params):
            if name not in initializers:
                del arrays["__param_" + name]
    save_npz(os.path.join(CASES_DIR, case.name + ".npz"), arrays)
    entry = collections.OrderedDict(name=case.name, model=model_file, ops=case.ops,
                                    torch_reference=case.torch_reference)
    entry["finite_difference"] = case.finite_difference
    if case.note:
        entry["note"] = case.note
    return entry


def main():
    os.makedirs(CASES_DIR, exist_ok=True)
    names = [case.name for case in CASES]
    assert len(names) == len(set(names)), "case names must be unique"
    manifest = collections.OrderedDict(
        generator="make_gradient_cases.py",
        torch=torch.__version__, onnx=onnx.__version__, opset=OPSET,
        cases=[write_case(case) for case in CASES])
    with open(os.path.join(CASES_DIR, "cases.json"), "w") as out:
        json.dump(manifest, out, indent=1)
        out.write("\n")
    total = sum(os.path.getsize(os.path.join(CASES_DIR, f)) for f in os.listdir(CASES_DIR))
    print(f"{len(CASES)} cases, {total} bytes in {CASES_DIR}")


if __name__ == "__main__":
    main()
