"""check_dropout_masks.py IR OUTPUTS.npz OUTPUT...: an inference program's dropouts of an all-ones
input, against the memc.dropout ops of the imported IR (in order, one per OUTPUT: a graph output
name, or NAME[i] for slice i of one): each output must be exactly its op's mask (ratio, seed, no
salt; test/fixtures/dropout_mask.py), and no two masks may be the same. Exits 1 otherwise."""
import itertools
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures"))
from dropout_mask import dropout_keeps  # noqa: E402

ir_path, outputs_path, names = sys.argv[1], sys.argv[2], sys.argv[3:]
dropouts = [(float(ratio), int(seed)) for ratio, seed in re.findall(
    r"memc\.dropout .*\{ratio = ([^ ]+) : f64, seed = (-?\d+) : i64\}", open(ir_path).read())]
if len(dropouts) != len(names):
    sys.exit("%d memc.dropout ops for %d outputs" % (len(dropouts), len(names)))
outputs = np.load(outputs_path)
masks = []
for name, (ratio, seed) in zip(names, dropouts):
    match = re.fullmatch(r"(\w+)\[(\d+)\]", name)
    value = outputs[match[1]][int(match[2])] if match else outputs[name]
    if not np.array_equal(value, np.where(dropout_keeps(value.shape, ratio, seed), 2.0, 0.0)):
        sys.exit("%s is not the mask of seed %d" % (name, seed))
    masks.append(value != 0)
fewest = min((int((a != b).sum()) for a, b in itertools.combinations(masks, 2)), default=0)
if len(masks) > 1 and fewest == 0:
    sys.exit("two outputs draw the same mask")
print("%d masks, each its seed's; any two differ in %d or more of %d elements"
      % (len(masks), fewest, masks[0].size))
