"""What 30 QLoRA steps changed: the log's loss falls; between the --save after step 1 and after
step 30 only the adapters differ; --save-adapter's keys and adapter_config.json are PEFT's.

usage: compare_adapters.py LOG.jsonl ONE.safetensors THIRTY.safetensors ADAPTER_DIR"""
import json
import os
import struct
import sys


def tensors(path):
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        body = f.read()
    header.pop("__metadata__", None)
    return {name: (entry["dtype"], entry["shape"],
                   body[entry["data_offsets"][0]:entry["data_offsets"][1]])
            for name, entry in header.items()}


log, one, thirty, adapter = sys.argv[1:5]
losses = [json.loads(line)["loss"] for line in open(log)]
print(f"loss falls over 30 steps: {len(losses) == 30 and losses[-1] < losses[0] - 0.05}")
before, after = tensors(one), tensors(thirty)
is_adapter = lambda name: name.endswith((".lora_A.weight", ".lora_B.weight"))
changed = [n for n in after if after[n][2] != before[n][2]]
print(f"changed: {sum(map(is_adapter, changed))} adapters, "
      f"unchanged: {sum(1 for n in after if n not in changed)} others"
      + ("" if all(map(is_adapter, changed)) else " (a non-adapter changed)"))
saved = tensors(os.path.join(adapter, "adapter_model.safetensors"))
first = sorted(saved)[0] if saved else ""
print(f"adapter keys: {len(saved)} {first} {saved[first][0]} {saved[first][1]}"
      if all(k.startswith("base_model.model.") and is_adapter(k) for k in saved) else
      f"adapter keys not PEFT's: {sorted(saved)}")
config = json.load(open(os.path.join(adapter, "adapter_config.json")))
print(f"config: {config['peft_type']} r {config['r']} alpha {float(config['lora_alpha'])} "
      f"dropout {float(config['lora_dropout'])} bias {config['bias']}, "
      f"{len(config['target_modules'])} target modules")
