"""Sandbox overhead: seconds per trivial program, one at a time and G at a time across the cores.

    python benchmarks/sandbox_overhead.py     # writes benchmarks/sandbox_overhead.md

A coding reward evaluates G programs per step, so this is the floor the sandbox adds to a step.
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


def main(n: int = 12):
    lim = SandboxLimits()
    run_program(PROGRAM, ASSERTS, lim)  # warm-up (also caches the isolation probe)
    one = []
    for _ in range(n):
        t = time.perf_counter()
        run_program(PROGRAM, ASSERTS, lim)
        one.append(time.perf_counter() - t)
    t = time.perf_counter()
    run_many([(PROGRAM, ASSERTS)] * n, lim)
    par = (time.perf_counter() - t) / n
    iso = isolation()
    text = (f"# Sandbox overhead\n\n{time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} cores, "
            f"python {platform.python_version()}, mode `{iso['mode']}` (process cap: {iso['process_cap']}).\n\n"
            f"A trivial program with 3 asserts (each assert re-runs the program in the sandboxed process):\n\n"
            f"| | seconds per program |\n|---|---|\n| one at a time, median of {n} | {statistics.median(one):.3f} |\n"
            f"| one at a time, min | {min(one):.3f} |\n| {n} programs with run_many ({os.cpu_count()} workers), per program | {par:.3f} |\n")
    Path(__file__).with_name("sandbox_overhead.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
