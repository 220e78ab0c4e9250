"""The CUDA checks of issue 32 that are not unit tests (results: benchmarks/RESULTS_cuda.md).

    python benchmarks/cuda_checks.py train OUT_DIR [magrpo-edu train flags]   # a real CLI run on the GPU
    python benchmarks/cuda_checks.py dp OUT.pt                                # one process, 2 prompts per step
    torchrun --nproc_per_node=2 benchmarks/cuda_checks.py dp OUT.pt --backend nccl|gloo   # both ranks on cuda:0

train: `magrpo-edu train --out OUT_DIR ...` in this process, then one JSON line: exit code, wall
seconds, seconds per step (the history's step_time), peak GPU memory (torch.cuda.max_memory_allocated
and max_memory_reserved), the evaluation before/after (results.json) and the TensorBoard event files.

dp: three MAGRPO steps of two LoRA agents on the embedded tiny model, prompts_per_step=2. Under
torchrun the process group is started HERE with the named backend and BOTH ranks on cuda:0 (a
one-GPU machine; the package itself would put rank r on cuda:r), so the trainer's data-parallel code
(broadcast of the adapters, the gradient all-reduce, the record gathering) runs on CUDA tensors.
Rank 0 writes the trained adapters to OUT.pt: equal to the one-process run's up to rounding when the
data-parallel path is right.
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

import torch


def train(out: str, flags: list[str]) -> int:
    from magrpo_edu.run.cli import main

    torch.cuda.reset_peak_memory_stats()
    t = time.time()
    rc = main(["train", "--out", out, *flags])
    torch.cuda.synchronize()
    wall = time.time() - t
    d = Path(out)
    hist = json.loads((d / "history.json").read_text()) if (d / "history.json").is_file() else []
    st = [h["step_time"] for h in hist if "step_time" in h]
    res = json.loads((d / "results.json").read_text()) if (d / "results.json").is_file() else None
    events = sorted(str(p.relative_to(d)) for p in d.rglob("events.out.tfevents*"))
    print(json.dumps(dict(rc=rc, wall_s=round(wall, 1), device=torch.cuda.get_device_name(0), logged_steps=len(hist),
                          median_step_s=statistics.median(st) if st else None, mean_step_s=statistics.fmean(st) if st else None,
                          first_step_s=st[0] if st else None,
                          peak_allocated_mb=round(torch.cuda.max_memory_allocated() / 2**20, 1),
                          peak_reserved_mb=round(torch.cuda.max_memory_reserved() / 2**20, 1),
                          tensorboard_event_files=events, last_record=hist[-1] if hist else None, results=res)))
    return rc


def dp(out: str, backend: str) -> int:
    import torch.distributed as dist

    from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, lora_agents

    world = int(os.environ.get("WORLD_SIZE", "1"))
    torch.cuda.set_device(0)
    if world > 1:
        kw = dict(device_id=torch.device("cuda:0")) if backend == "nccl" else {}
        dist.init_process_group(backend=backend, **kw)
        x = torch.ones(4, device="cuda:0") * (dist.get_rank() + 1)
        dist.all_reduce(x)  # fails here when the backend refuses two ranks on one GPU
        torch.cuda.synchronize()
        print(f"rank {dist.get_rank()}: {backend} all_reduce on cuda:0 gave {x.tolist()}", flush=True)
    agents = lora_agents("tiny", 2, device="cuda:0")
    rows = [{"text": f"post number {i} about something"} for i in range(8)]
    formatters = [lambda r: "Summary: " + r["text"], lambda r: "Details: " + r["text"]]

    def reward(c, row):
        return [-abs(len(b) - 2 * len(a)) / 50 for a, b in zip(*c)]

    cfg = MAGRPOConfig(num_generations=2, max_new_tokens=12, max_steps=3, prompts_per_step=2, learning_rate=1e-2,
                       progress=False, seed=0)
    tr = MAGRPOTrainer(agents, reward, formatters, rows, cfg)
    tr.train()
    rank = dist.get_rank() if world > 1 else 0
    if rank == 0:
        torch.save(dict(world=world, backend=backend if world > 1 else None, history=tr.history,
                        agents={a.name: {k: v.detach().cpu() for k, v in a.named_trainable_state().items()}
                                for a in agents}), out)
        print(json.dumps(dict(world=world, backend=backend, steps=tr.step,
                              reward=[h["reward"] for h in tr.history])), flush=True)
    if world > 1:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    what, target, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    if what == "train":
        sys.exit(train(target, rest))
    backend = rest[rest.index("--backend") + 1] if "--backend" in rest else "gloo"
    sys.exit(dp(target, backend))
