"""Sandbox overhead: seconds per trivial program, one at a time and G at a time across the cores.

    python benchmarks/sandbox_overhead.py     # writes benchmarks/sandbox_overhead.md

It also measures the worst case one step meets: the coding reward of G = 4 joint actions on one problem
(what a training step scores), all honest, then with one and with four hostile completions of each kind
the security reviews found (each kind's worst), with the default limits.

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

from magrpo_edu.tasks.coding import reward as coding_reward
from magrpo_edu.sandbox import SandboxLimits, isolation, run_many, run_program
from magrpo_edu.tasks.coding import load_coding

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


HOSTILE = {  # the body of the entry point (after `def <entry>(*args):`); each scores 0 tests
    "sleeps in every assert": "    import time\n    time.sleep(60)\n    return aux(1)\n",
    "12 busy setsid children": "    import os\n    for _ in range(12):\n        if os.fork() == 0:\n            os.setsid()\n"
                               "            while True:\n                pass\n    while True:\n        pass\n    return aux(1)\n",
    "floods its output": "    import os\n    while True:\n        try:\n            os.write(1, b'x' * 65536)\n"
                         "        except OSError:\n            pass\n    return aux(1)\n",
    "grabs memory": "    chunks = []\n    while True:\n        chunks.append(bytearray(2 ** 24))\n    return aux(1)\n",
    "a 32 KB identifier line": "    " + "a" * 32_000 + "\n    return aux(1)\n",
    "a 2 MB main": "    x = [" + "1, " * 700_000 + "]\n    return aux(1)\n",
}


def step_seconds(row: dict, mains: list[str]) -> float:
    """Seconds of the coding reward of one step's G joint actions (no cached sandbox results)."""
    coding_reward._RUNS = coding_reward._SandboxRuns()
    t = time.perf_counter()
    coding_reward.coding_joint_reward([[row["reference_aux"]] * len(mains), mains], row)
    return time.perf_counter() - t


def worst_case(G: int = 4) -> list[tuple[str, float, float]]:
    """(kind, seconds of a step with one hostile main among G, with G hostile mains)."""
    row = load_coding("eval")[0]
    head, rest = row["reference_main"].split("\n", 1)
    honest = [f"{head}\n    # sample {g}\n{rest}" for g in range(G)]  # distinct texts, as a step's samples are
    out = [("all honest", step_seconds(row, honest), step_seconds(row, honest))]
    for kind, body in HOSTILE.items():
        bad = [f"def {row['entry_point']}(*args):\n    # sample {g}\n{body}" for g in range(G)]  # distinct: each runs
        out.append((kind, step_seconds(row, bad[:1] + honest[1:]), step_seconds(row, bad)))
    return out


KEEP = "<!-- notes below this line are written by hand; the script keeps them -->"


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
    limits = SandboxLimits()
    text += (f"\n## The worst case one step meets\n\nThe coding reward of G = 4 joint actions on one problem (4 asserts), the "
             f"default limits ({limits.timeout_s:g} s a run, {limits.assert_timeout_s:g} s an assert, {limits.cpus:g} CPU a run; "
             f"cpu: {iso['cpu_limit']}), {os.cpu_count()} workers. Seconds of the reward:\n\n"
             "| completions | one hostile among 4 | 4 hostile |\n|---|---|---|\n")
    text += "".join(f"| {kind} | {one:.2f} | {four:.2f} |\n" for kind, one, four in worst_case())
    out = Path(__file__).with_name("sandbox_overhead.md")
    kept = out.read_text().split(KEEP, 1) if out.exists() else []
    out.write_text(text + "\n" + KEEP + (kept[1] if len(kept) == 2 else "\n"))
    print(text)


if __name__ == "__main__":
    main()
