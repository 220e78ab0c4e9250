"""How many CPU threads torch should use: the cores this process may really use, never more.

torch's default is every core the machine shows. Two common cases make that slow: a container (Binder,
a CI runner, a cluster job) that shows many cores but grants fewer (its CPU quota), and a machine
where another CPU-bound process is running: two processes that each use every core slow each other
10-20x on 2 cores (SmolLM2 generation: 363 s with torch's 2 threads next to another job, 20 s with
one). `sensible_threads` respects OMP_NUM_THREADS when it is set; otherwise it takes the cores this
process may run on (its CPU affinity), capped by the container's CPU quota (cgroup v2 `cpu.max`),
minus the cores other processes keep busy right now (runnable tasks in /proc/loadavg, the least of
three looks 20 ms apart). The command line applies it and says it in its first lines.
"""
from __future__ import annotations

import math
import os
import time
from pathlib import Path


def usable_cores() -> int:
    """Cores this process may use: its CPU affinity, capped by a cgroup v2 CPU quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS, Windows
        cores = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cores)


def busy_elsewhere(looks: int = 3, gap_s: float = 0.02) -> int:
    """Other processes' runnable threads right now (Linux; 0 where it cannot be read): the 4th field of
    /proc/loadavg counts runnable tasks, this one included. The least of a few looks, so a task that
    runs for an instant does not count."""
    seen = []
    for k in range(looks):
        try:
            running = int(Path("/proc/loadavg").read_text().split()[3].split("/")[0])
        except (OSError, ValueError, IndexError):
            return 0
        seen.append(max(0, running - 1))
        if k + 1 < looks:
            time.sleep(gap_s)
    return min(seen)


def sensible_threads() -> tuple[int, str]:
    """(threads, why): OMP_NUM_THREADS when set, else the usable cores minus those busy elsewhere (at least 1)."""
    env = os.environ.get("OMP_NUM_THREADS", "").strip()
    if env:
        try:
            n = max(1, int(env))
            return n, f"{n} (OMP_NUM_THREADS={env})"
        except ValueError:
            pass
    cores, busy = usable_cores(), busy_elsewhere()
    n = max(1, cores - busy)
    why = f"{n} of {cores} usable core{'s' if cores != 1 else ''}"
    if busy:
        why += f" ({busy} busy with other processes right now)"
    return n, why + "; set OMP_NUM_THREADS to choose"


def apply_sensible_threads() -> str:
    """Set torch's intra-op threads to `sensible_threads()` and return the sentence that says so."""
    import torch

    n, why = sensible_threads()
    torch.set_num_threads(n)
    return f"torch threads: {why}"
