"""Everything issue 62 measures on a GPU, in ONE run inside a short device lease, most important first.

    PYTHONPATH=. python benchmarks/gpu_session.py --out $OUT --budget 480

A lent GPU machine gives a session minutes, not hours, so this script is prepared and committed before
the run and does it all in one go, in priority order, each phase only while the budget lasts (a phase
cut off by the budget keeps what it printed: every step_speed method prints its JSON line when done):

  1. machine    nvidia-smi, versions, and the GPU's copy bandwidth (a 2 GiB device-to-device copy):
                the ceiling for the weights-read bound of decoding
  2. cuda-tests tests/test_cuda.py -m cuda (the CUDA path equals the CPU path; the exact log-probs)
  3. qwen2.5-0.5b step_speed at 256 new tokens: the LoRA team, the one- and two-agent floors, two full
                copies, the LoRA team with per-agent slices (the routing before the stacked adapters)
  4. profile    one LoRA sampling call per token on the Qwen2.5-0.5B shape (profile_sampling.py, with
                the GPU's busy time per token), the bare base x4 / x8 beside it
  5. tiny       step_speed on the embedded tiny model's shape (the default run's model), to set
                against the CPU's benchmarks/RESULTS.md
  6. qwen3-1.7b step_speed at 256 new tokens: the LoRA team, floor-1, two full copies
  7. bf16       the LoRA team with a bf16 base on the Qwen2.5-0.5B shape

`--phases` runs a chosen few, in the order given (the next lease: the phases this one left out, e.g.
`--phases machine cuda-tests qwen17 bf16 tiny`).

Writes to --out: log.txt (every phase's output), summary.json (phases, seconds, exit codes, the
bandwidth and the weights-read bound), and each phase's results (qwen05.json, profile.md, tiny.json,
qwen17.json, bf16.json; each step_speed report's markdown is in log.txt). It measures; it asserts
nothing (the CUDA tests assert, in their own phase). Its first run, and what it found:
benchmarks/cuda_2026-12-04/ and RESULTS_cuda.md.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PY = sys.executable
STEP = [PY, str(HERE / "step_speed.py"), "--device", "cuda", "--new-tokens", "256", "--steps", "2", "--warmup", "1"]

BANDWIDTH = r"""
import json, torch
x = torch.empty(2 * 2**30, dtype=torch.uint8, device="cuda"); y = torch.empty_like(x)
for _ in range(3): y.copy_(x)
torch.cuda.synchronize()
a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
a.record()
for _ in range(10): y.copy_(x)
b.record(); torch.cuda.synchronize()
s = a.elapsed_time(b) / 1000 / 10
print(json.dumps({"copy_GBps": 2 * x.numel() / s / 1e9}))  # read + write per copy
"""

SHAPE_PARAMS = r"""
import json, sys, torch
sys.path.insert(0, "benchmarks")
import step_speed as ss
tok = ss.tokenizer()
out = {}
for shape in ("qwen2.5-0.5b", "qwen3-1.7b", "tiny"):
    with torch.device("meta"):
        m = ss.build(shape, tok, torch.float32, "meta")
    out[shape] = sum(p.numel() for p in m.parameters())
print(json.dumps({"params": out}))
"""


def phases(out: Path):
    """(name, command, seconds it needs at least to be worth starting, file it leaves in out)."""
    return [
        ("machine", ["bash", "-c", "nvidia-smi; " + PY + " -c 'import torch, transformers, peft; print(torch.__version__, "
                     "torch.version.cuda, transformers.__version__, peft.__version__)'; lscpu | head -20"], 5, None),
        ("bandwidth", [PY, "-c", BANDWIDTH], 5, None),
        ("params", [PY, "-c", SHAPE_PARAMS], 5, None),
        ("cuda-tests", [PY, "-m", "pytest", "tests/test_cuda.py", "-m", "cuda", "-v", "-p", "no:cacheprovider",
                        "-W", "ignore::FutureWarning"], 30, None),
        ("qwen05", STEP + ["--models", "qwen2.5-0.5b", "--methods", "magrpo-edu-lora", "floor-1", "floor-2",
                           "magrpo-edu-separate", "magrpo-edu-lora-slices"], 60, "qwen05"),
        ("profile", [PY, str(HERE / "profile_sampling.py"), "--device", "cuda", "--shapes", "qwen2.5-0.5b",
                     "--reps", "2", "--default-sampling-only", "--teams", "base x4", "base x8", "lora-2",
                     "--out", str(out / "profile.md")], 40, None),
        ("tiny", [PY, str(HERE / "step_speed.py"), "--device", "cuda", "--models", "tiny", "--methods",
                  "magrpo-edu-lora", "floor-1", "--steps", "5", "--warmup", "2"], 30, "tiny"),
        ("qwen17", STEP + ["--models", "qwen3-1.7b", "--methods", "magrpo-edu-lora", "floor-1",
                           "magrpo-edu-separate", "floor-2"], 60, "qwen17"),
        ("bf16", STEP + ["--models", "qwen2.5-0.5b", "--methods", "magrpo-edu-lora-bf16"], 40, "bf16"),
    ]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="folder for the results (the device tool's $OUT)")
    ap.add_argument("--budget", type=float, default=480, help="seconds for everything")
    ap.add_argument("--phases", nargs="+", default=None, metavar="NAME",
                    help="run only these phases, in this order (default: all, in the order above); names: "
                    + ", ".join(name for name, *_ in phases(Path("."))))
    args = ap.parse_args(argv)
    t0 = time.time()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = open(out / "log.txt", "a")
    summary = {"started": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "budget_s": args.budget, "phases": []}
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1",
           "WANDB_MODE": "disabled"}
    tmp = Path(tempfile.mkdtemp())
    table = {name: (name, cmd, need, keep) for name, cmd, need, keep in phases(out)}
    unknown = [n for n in args.phases or [] if n not in table]
    if unknown:
        ap.error(f"unknown phase(s) {unknown}; choose from {list(table)}")
    for name, cmd, need, keep in [table[n] for n in args.phases] if args.phases else table.values():
        left = args.budget - (time.time() - t0)
        rec = {"phase": name}
        if left < need:
            rec["skipped"] = f"{left:.0f} s left, needs at least {need} s"
        else:
            if keep:
                cmd = cmd + ["--out", str(tmp / keep)]
            print(f"== {name} ({left:.0f} s left): {' '.join(cmd)}", file=log, flush=True)
            t = time.time()
            try:
                p = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   timeout=left)
                rec["rc"], text = p.returncode, p.stdout
            except subprocess.TimeoutExpired as e:
                rec["rc"] = "out of budget"
                text = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            rec["seconds"] = round(time.time() - t, 1)
            log.write(text + "\n")
            log.flush()
            if name in ("bandwidth", "params"):
                for line in text.splitlines():
                    if line.startswith("{"):
                        summary.update(json.loads(line))
            if keep and (tmp / f"{keep}.json").exists():
                shutil.copy(tmp / f"{keep}.json", out / f"{keep}.json")
        summary["phases"].append(rec)
        (out / "summary.json").write_text(json.dumps(summary, indent=2))
    if "copy_GBps" in summary and "params" in summary:  # bytes of fp32 weights read per token / bandwidth
        summary["weights_read_ms_per_token_fp32"] = {k: round(4 * n / (summary["copy_GBps"] * 1e9) * 1e3, 3)
                                                     for k, n in summary["params"].items()}
    summary["seconds"] = round(time.time() - t0, 1)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
