"""What measuring load-bearing helpers costs: the coding reward's sandbox time with and without the second run.

    python benchmarks/load_bearing_cost.py      # writes benchmarks/load_bearing_cost.md and .json

Answers: the reference solutions' helpers and mains of the coding task's held-out problems (every one cooperates:
the worst case, each answer runs twice), and the same mains with the helper's result dropped or an own helper
(sampled answers cooperate less often, so cost less). Per set: seconds of `coding_levels_many` (the authors'
reward, fresh sandbox runs) and of `load_bearing_many` after it (the stub programs), and how many answers ran again.
Measures only; asserts nothing. Timings depend on the machine's load: the .md says what else was running.
"""
import json
import os
import platform
import time
from pathlib import Path

from magrpo_edu.sandbox import isolation
from magrpo_edu.tasks.coding import load_coding
from magrpo_edu.tasks.coding import reward
from magrpo_edu.tasks.coding.load_bearing import load_bearing_many

HERE = Path(__file__).resolve().parent


def fresh() -> None:
    reward._RUNS.results.clear()  # every program runs in the sandbox again


def measure(auxes, mains, rows, repeats: int = 3) -> dict:
    best = None
    for _ in range(repeats):
        fresh()
        t = time.perf_counter()
        lv = reward.coding_levels_many(auxes, mains, rows)
        t_levels = time.perf_counter() - t
        t = time.perf_counter()
        lb = load_bearing_many(auxes, mains, rows, lv)
        t_lb = time.perf_counter() - t
        run = dict(answers=len(rows), rerun=sum(v["calls_aux"] > 0 for v in lv), load_bearing=sum(lb),
                   levels_s=round(t_levels, 3), load_bearing_s=round(t_lb, 3), extra=round(t_lb / t_levels, 3))
        best = run if best is None or run["levels_s"] + run["load_bearing_s"] < best["levels_s"] + best["load_bearing_s"] else best
    return best


def main() -> None:
    rows = load_coding("eval")
    ref_aux = [r["reference_aux"] for r in rows]
    ref_main = [r["reference_main"] for r in rows]
    res = dict(machine=platform.processor() or platform.machine(), cores=os.cpu_count(), mode=isolation()["mode"],
               load=os.getloadavg(), sets={})
    res["sets"]["reference pairs (all cooperate)"] = measure(ref_aux, ref_main, rows)
    stubbed = [m.replace("aux(", "(lambda *a: None)(") for m in ref_main]  # text without aux: nothing runs again
    res["sets"]["mains that never call aux"] = measure(ref_aux, stubbed, rows)
    (HERE / "load_bearing_cost.json").write_text(json.dumps(res, indent=1))
    lines = ["# The cost of measuring load-bearing helpers", "",
             "Written by `python benchmarks/load_bearing_cost.py` (best of 3). Each cooperating answer (one that earns the "
             "authors' cooperation level) runs once more in the sandbox with aux replaced by a stub returning None; "
             "nothing else runs again.", "",
             f"Machine: {res['machine']}, {res['cores']} cores, sandbox mode {res['mode']}, load average at start "
             f"{res['load'][0]:.2f} (other jobs on the machine inflate both columns alike).", "",
             "| set | answers | ran again | load-bearing | reward's sandbox s | load-bearing s | extra |",
             "|---|---|---|---|---|---|---|"]
    for name, r in res["sets"].items():
        lines.append(f"| {name} | {r['answers']} | {r['rerun']} | {r['load_bearing']} | {r['levels_s']:.2f} | "
                     f"{r['load_bearing_s']:.2f} | {r['extra']:.0%} |")
    (HERE / "load_bearing_cost.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
