#!/usr/bin/env python3
"""Regenerates the runtime tests' data files with numpy (and the safetensors format written by
hand from its specification, as an implementation independent of the runtime's).

    /usr/bin/python3 test/runtime/data/generate.py

The tests (NpzTest.cpp, SafetensorsTest.cpp) pin the values written here.
"""
import json
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def arrays():
    return {
        "f32": (np.arange(6, dtype=np.float32) * 0.5).reshape(2, 3),
        "f16": np.array([1.5, -2.0, 65504.0], dtype=np.float16),
        "i64": np.array([[1, -2], [3, 1 << 40]], dtype=np.int64),
        "i32_scalar": np.array(7, dtype=np.int32),
        "b1": np.array([True, False, True, True]),
        "f64": np.array([0.1, 1e30], dtype=np.float64),
        "empty": np.zeros((0, 3), dtype=np.float32),
    }


def write_safetensors(path, tensors, metadata):
    names = {np.dtype("float32"): "F32", np.dtype("int64"): "I64", np.dtype("float16"): "F16"}
    header, data = {"__metadata__": metadata}, b""
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": names[array.dtype], "shape": list(array.shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def main():
    np.savez(os.path.join(HERE, "numpy_savez.npz"), **arrays())
    np.savez_compressed(os.path.join(HERE, "numpy_compressed.npz"), **arrays())
    np.savez(os.path.join(HERE, "numpy_fortran.npz"),
             a=np.asfortranarray(np.ones((2, 3), dtype=np.float32)))
    np.savez(os.path.join(HERE, "numpy_bigendian.npz"), a=np.ones(3, dtype=">f4"))
    np.savez(os.path.join(HERE, "numpy_uint8.npz"), a=np.ones(3, dtype=np.uint8))
    write_safetensors(os.path.join(HERE, "python.safetensors"),
                      {"weight": np.arange(6, dtype=np.float32).reshape(3, 2),
                       "bias": np.array([-1.0, 0.25], dtype=np.float16),
                       "steps": np.array([12], dtype=np.int64)},
                      {"format": "pt"})


if __name__ == "__main__":
    main()
