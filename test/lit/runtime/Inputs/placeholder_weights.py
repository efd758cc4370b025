"""Writes MODEL.onnx again with every float initializer zeroed: an export with placeholder
weights, whose real values come from --weights-from.

usage: placeholder_weights.py MODEL.onnx OUT.onnx"""
import sys

import numpy as np
import onnx
from onnx import numpy_helper

model = onnx.load(sys.argv[1])
for i, tensor in enumerate(model.graph.initializer):
    values = numpy_helper.to_array(tensor)
    if values.dtype.kind == "f":
        zero = numpy_helper.from_array(np.zeros_like(values), tensor.name)
        model.graph.initializer[i].CopyFrom(zero)
onnx.save(model, sys.argv[2])
