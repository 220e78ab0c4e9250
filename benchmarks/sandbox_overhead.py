"""Sandbox overhead: seconds per trivial program, one at a time and G at a time across the cores.

    python benchmarks/sandbox_overhead.py     # writes benchmarks/sandbox_overhead.md

A coding reward evaluates G programs per step, so this is the floor the sandbox adds to a step. Two
kinds of check: without `entry_point` (the sandbox decides each verdict) and with it (forge-proof:
the sandbox sends values, the judge process checks them; what the coding reward uses).
Measures only; asserts nothing.
"""
import os
import platform
import statistics
import time
from pathlib import Path

from magrpo_edu.sandbox import SandboxLimits, isolation, run_many, run_program

PROGRAM = "def add(a, b):\n    return a + b\n"
ASSERTS = ["assert add(1, 2) == 3", "assert add(-1, 1) == 0", "assert add(2, 2) == 4"]


def measure(entry_point, n: int, lim) -> tuple[float, float, float]:
    """(median, min) seconds of one program run alone, and seconds per program of n with run_many."""
    run_program(PROGRAM, ASSERTS, lim, entry_point=entry_point)  # warm-up (also caches the isolation probe)
    one = []
    for _ in range(n):
        t = time.perf_counter()
        r = run_program(PROGRAM, ASSERTS, lim, entry_point=entry_point)
        one.append(time.perf_counter() - t)
        assert r.passed == 3, r.asserts
    t = time.perf_counter()
    run_many([(PROGRAM, ASSERTS, entry_point)] * n, lim)
    return statistics.median(one), min(one), (time.perf_counter() - t) / n


def main(n: int = 12):
    lim = SandboxLimits()
    rows = {ep: measure(ep, n, lim) for ep in (None, "add")}
    iso = isolation()
    text = (f"# Sandbox overhead\n\n{time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} cores, "
            f"python {platform.python_version()}, mode `{iso['mode']}` (process cap: {iso['process_cap']}; "
            f"memory: {iso['memory_limit']}).\n\n"
            f"A trivial program with 3 asserts (each assert runs in a fresh process, where the program is run again):\n\n"
            f"| seconds per program | sandbox decides (no entry_point) | forge-proof (entry_point) |\n|---|---|---|\n"
            f"| one at a time, median of {n} | {rows[None][0]:.3f} | {rows['add'][0]:.3f} |\n"
            f"| one at a time, min | {rows[None][1]:.3f} | {rows['add'][1]:.3f} |\n"
            f"| {n} programs with run_many ({os.cpu_count()} workers), per program | {rows[None][2]:.3f} | {rows['add'][2]:.3f} |\n")
    Path(__file__).with_name("sandbox_overhead.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
