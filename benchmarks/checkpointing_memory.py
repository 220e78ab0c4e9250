"""Peak memory and time of notebook 07's live MAGRPO steps on SmolLM2-135M, with and without activation
checkpointing (`magrpo_edu.checkpoint_activations`), each in a fresh process.

    python benchmarks/checkpointing_memory.py            # -> benchmarks/checkpointing_memory.md and .json

The notebook's settings: two LoRA agents on SmolLM2-135M-Instruct (offline, as notebook 07 loads it, in
the precision `choose_dtype` picks for this CPU), G = 2, 64 new tokens, temperature 0.8, beta 0.02, TL;DR
training posts, 2 steps after loading. Peak = the process's VmHWM (peak resident memory); "above the
loaded model" subtracts its VmHWM after loading and one forward (the weights paged in). glibc keeps
freed memory in its heap (its mmap threshold grows after a large free), so each setting also runs with
MALLOC_MMAP_THRESHOLD_=65536 MALLOC_TRIM_THRESHOLD_=0, which shows the working set itself. It measures;
it asserts nothing. Run it on an idle machine (or pinned to an idle core).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, sys, time, torch
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) / 1024
from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, checkpoint_activations, lora_agents
from magrpo_edu.models import choose_dtype, load_model
from magrpo_edu.rewards import tldr_joint_reward
from magrpo_edu.tasks.writing import load_writing, tldr_formatters
dtype, _ = choose_dtype("cpu")
base, tok = load_model("smollm2-135m", dtype=dtype, device="cpu")
with torch.no_grad():
    base(input_ids=tok("hello " * 50, return_tensors="pt").input_ids)   # page the weights in
loaded = hwm()
agents = lora_agents(base, num_agents=2, tokenizer=tok, names=["concise", "detailed"])
if sys.argv[1] == "on":
    checkpoint_activations(agents)
config = MAGRPOConfig(num_agents=2, num_generations=2, max_new_tokens=64, temperature=0.8, learning_rate=5e-4,
                      beta=0.02, max_steps=2, seed=0, progress=False)
trainer = MAGRPOTrainer(agents, tldr_joint_reward, tldr_formatters(tok), load_writing("tldr", "train"), config)
t = time.time()
trainer.train()
print(json.dumps({"dtype": str(dtype), "loaded_mb": loaded, "peak_mb": hwm(), "seconds": time.time() - t}))
"""


def main() -> None:
    rows = []
    for malloc in (False, True):
        for mode in ("off", "on"):
            env = dict(os.environ)
            if malloc:
                env.update(MALLOC_MMAP_THRESHOLD_="65536", MALLOC_TRIM_THRESHOLD_="0")
            out = subprocess.run([sys.executable, "-c", CHILD, mode], env=env, capture_output=True, text=True, check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            r.update(checkpointing=mode, glibc="mmap threshold fixed" if malloc else "default")
            rows.append(r)
            print(r, flush=True)
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "threads": os.environ.get("OMP_NUM_THREADS"),
            "isa_env": {k: os.environ[k] for k in ("ONEDNN_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS")
                        if k in os.environ},
            "command": "python benchmarks/checkpointing_memory.py"}
    (HERE / "checkpointing_memory.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    lines = ["# Activation checkpointing: notebook 07's live steps, memory and time", "",
             f"Measured {meta['date']}, OMP_NUM_THREADS={meta['threads']}, "
             f"{' '.join(f'{k}={v}' for k, v in meta['isa_env'].items()) or 'the CPU native path'}. "
             "Command: `python benchmarks/checkpointing_memory.py` (its docstring says what runs). One run each.", "",
             "| glibc | checkpointing | weights | peak MB | above the loaded model, MB | 2 steps, s |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['glibc']} | {r['checkpointing']} | {r['dtype'].replace('torch.', '')} | {r['peak_mb']:.0f} | "
                     f"{r['peak_mb'] - r['loaded_mb']:.0f} | {r['seconds']:.1f} |")
    (HERE / "checkpointing_memory.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
