"""The cross-entropy of an inference program (memc --mode=infer of a saved model) over a data
file's micro-batches of BATCH samples, as --eval-data computes it (labels -100 ignored).

usage: merged_loss.py PROGRAM DATA.npz BATCH WORK_DIR"""
import os
import subprocess
import sys

import numpy as np

program, data_path, batch, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
data = np.load(data_path)
total, count = 0.0, 0
for begin in range(0, len(data["labels"]), batch):
    inputs, outputs = os.path.join(work, "inputs.npz"), os.path.join(work, "outputs.npz")
    np.savez(inputs, input_ids=data["input_ids"][begin:begin + batch])
    subprocess.run([program, "--inputs", inputs, "--outputs", outputs], check=True)
    logits = np.load(outputs)["logits"].astype(np.float64)
    labels = data["labels"][begin:begin + batch]
    top = logits.max(-1, keepdims=True)
    logsumexp = np.log(np.exp(logits - top).sum(-1)) + top[..., 0]
    counted = labels != -100
    picked = np.take_along_axis(logits, np.where(counted, labels, 0)[..., None], -1)[..., 0]
    losses = (logsumexp - picked)[counted]
    total, count = total + losses.sum(), count + losses.size
print(f"{total / count:.7f}")
