"""How many CPU threads torch should use: the cores this process may really use, never more.

torch's default is every core the machine shows. Two common cases make that slow: a container (Binder,
a CI runner, a cluster job) that shows many cores but grants fewer (its CPU quota), and a machine
where another CPU-bound process is running: two processes that each use every core slow each other
10-20x on 2 cores (SmolLM2 generation: 363 s with torch's 2 threads next to another job, 20 s with
one). `sensible_threads` respects OMP_NUM_THREADS when it is set; otherwise it takes the cores this
process may run on (its CPU affinity), capped by the container's CPU quota (cgroup v2 `cpu.max`),
minus the cores other processes keep busy right now (runnable tasks in /proc/loadavg, the least of
three looks 20 ms apart). The command line applies it and says it in its first lines.

The library applies the same choice for every user of the Python API and the notebooks
(`choose_threads_once`, run when an `Agent` is built, so by every team builder), once per process, and only
where the user has not chosen: not when OMP_NUM_THREADS or MKL_NUM_THREADS is set, not when torch's threads are no longer torch's
own default (a `torch.set_num_threads(n)` made before), not after the command line chose. A
`torch.set_num_threads` made later wins, as it always did. The one case it cannot tell: an explicit
`torch.set_num_threads(n)` with n equal to torch's default; set OMP_NUM_THREADS to be sure.
"""
from __future__ import annotations

import logging
import math
import os
import time
from pathlib import Path
from typing import Optional

_choice: Optional[str] = None
"""What this process's threads are, once decided (`apply_sensible_threads`, `choose_threads_once`)."""


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
    plural = "s" if cores != 1 else ""
    if not busy:
        why = f"{n} of {cores} usable core{plural}"
    elif busy < cores:
        why = f"{n} ({cores} usable core{plural}, {busy} busy with other processes right now, so {n} free)"
    else:  # more running threads elsewhere than cores: none is free, and one thread slows the others least
        why = (f"{n} ({cores} usable core{plural}, all busy: other processes are running {busy} thread"
               f"{'s' if busy != 1 else ''} right now, so this run takes the least, 1)")
    return n, why + "; set OMP_NUM_THREADS to choose"


def apply_sensible_threads() -> str:
    """Set torch's intra-op threads to `sensible_threads()` and return the sentence that says so."""
    import torch

    global _choice
    n, why = sensible_threads()
    torch.set_num_threads(n)
    _choice = f"torch threads: {why}"
    return _choice


def torch_default_threads() -> set[int]:
    """The intra-op thread counts torch starts with on this machine when nothing chose: the logical
    cores of this process's CPU affinity, or the physical cores among them (torch's own default
    counts physical cores where its thread pool decides, all of them where OpenMP does)."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return {os.cpu_count() or 1}
    physical = set()
    for c in cpus:
        try:
            topo = Path(f"/sys/devices/system/cpu/cpu{c}/topology")
            physical.add(((topo / "physical_package_id").read_text().strip(), (topo / "core_id").read_text().strip()))
        except OSError:
            physical.add(("?", str(c)))
    return {len(cpus), len(physical)}


def user_choice() -> Optional[str]:
    """Why this process's threads are already chosen (by the user or the command line), or None."""
    import torch

    if _choice is not None:
        return _choice
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if os.environ.get(var, "").strip():
            return f"torch threads: {torch.get_num_threads()} ({var}={os.environ[var].strip()})"
    n = torch.get_num_threads()
    if n not in torch_default_threads():
        return f"torch threads: {n} (torch.set_num_threads)"
    return None


def choose_threads_once() -> str:
    """The library's thread choice, for every user: once per process, `apply_sensible_threads` unless
    the threads are already chosen (`user_choice`). Returns the sentence that says what they are
    (also logged at INFO on the `magrpo_edu.threads` logger)."""
    global _choice
    if _choice is None:
        chosen = user_choice()
        _choice = chosen if chosen is not None else apply_sensible_threads()
        logging.getLogger(__name__).info(_choice)
    return _choice
