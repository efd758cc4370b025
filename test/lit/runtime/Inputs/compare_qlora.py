"""memc's first QLoRA step against test/training/make_qlora_reference.py's PyTorch reference:
the logged step-1 loss (computed before the update) and --dump-grads' adapter gradients.

usage: compare_qlora.py REFERENCE.npz CONFIG LOG.jsonl GRADS.npz"""
import json
import sys

import numpy as np

reference, config, log, grads = sys.argv[1:5]
expected = np.load(reference)
loss = json.loads(open(log).readline())["loss"]
want = float(expected[f"loss/{config}"])
print(f"{config} loss within 1e-5 relative: {abs(loss - want) / abs(want) <= 1e-5}")
actual = np.load(grads)
names = sorted(actual.keys())
adapters = sorted(k[len(f"grad/{config}/"):] for k in expected.keys()
                  if k.startswith(f"grad/{config}/"))
print(f"only adapters have gradients: {names == adapters} ({len(names)})")
worst = max(float(np.abs(actual[n] - expected[f"grad/{config}/{n}"]).max()) for n in adapters)
print(f"gradients within 1e-4: {worst <= 1e-4}")
print("lora_A gradients exactly 0:",
      all(not actual[n].any() for n in names if n.endswith("lora_A.weight")))
