"""Run the learning claims under every float path this CPU can take, and say which held.

A learning run is a long chain of floating-point sums; which SIMD kernels compute them (AVX-512,
AVX2, or plain SSE code) changes the last bits, the sampled tokens a few steps later, and from then
on the whole trajectory. A claim that something learned must hold on all of them, so before a change
to training, sampling or a claim lands, run:

    python tools/float_paths.py                       # learning tests + the notebooks that claim learning
    python tools/float_paths.py --paths default        # one path
    python tools/float_paths.py --threads 1            # with OMP_NUM_THREADS=1 as well
    python tools/float_paths.py --break flip           # the claims must FAIL: every policy-gradient step reversed
    python tools/float_paths.py --break zero           # the claims must FAIL: no gradient reaches the agents
    python tools/float_paths.py --tests-only           # skip the notebooks (about 3 minutes a path)
    python tools/float_paths.py --notebooks-only       # skip the learning tests

The paths (set for the whole pytest process and the notebooks' kernels):
    native   whatever torch picks on this CPU (AVX-512 where the CPU has it)
    avx2     ATEN_CPU_CAPABILITY=avx2    MKL_ENABLE_INSTRUCTIONS=AVX2     (what an AVX2-only CPU runs)
    default  ATEN_CPU_CAPABILITY=default MKL_ENABLE_INSTRUCTIONS=SSE4_2   (no vector kernels: any x86-64 CPU)
A path needing instructions this CPU lacks is skipped, and said so.

`--break` demonstrates that the claims can fail: a `sitecustomize` put on PYTHONPATH wraps
`magrpo_edu.algorithm.policy_loss` (the loss that training uses; `magrpo_edu.policy_loss`, which the
notebooks check their own code against, stays the original) so that the advantages are negated
(`flip`, every update pushes towards the WORSE samples) or multiplied by zero (`zero`, the same as a
zero learning rate). Under `--break` a path "held" means every learning test failed and every notebook had a failing
cell (the summary names the cells; read them: it should be the learning claim that failed).

Writes a summary to stdout and, with --out, a JSON file. It measures; it asserts nothing itself
(pytest does). Each path re-runs everything: about 3 minutes for the tests and 15-25 for the
notebooks on 2 cores.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATHS = {
    "native": {},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
    "default": {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2"},
}
CLAIM_NOTEBOOKS = ["00_quickstart", "01_grpo_from_scratch", "02_from_grpo_to_magrpo", "03_writing_collaboration",
                   "04_coding_collaboration", "06_variants", "08_reward_hacking"]
"""The notebooks that assert that training raised a reward (05 and 07 read saved runs; 05's and 09's live steps claim nothing)."""

SABOTAGE = '''
"""Installed by tools/float_paths.py --break: reverses (flip) or zeroes (zero) the advantages in the
loss training uses, after magrpo_edu has been imported, so that the learning claims must fail."""
import importlib.abc, os, sys

MODE = os.environ["MAGRPO_EDU_BREAK"]


def _patch():
    alg = sys.modules["magrpo_edu.algorithm"]
    original = alg.policy_loss
    factor = {"flip": -1.0, "zero": 0.0}[MODE]
    alg.policy_loss = lambda logps, advantages: original(logps, factor * advantages)
    print(f"[float_paths] magrpo_edu.algorithm.policy_loss sabotaged: advantages x {factor}", file=sys.stderr)


class _Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "magrpo_edu":
            return None
        sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec(name)
        loader = spec.loader
        run = loader.exec_module

        def exec_module(module):
            run(module)
            _patch()
        loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _Hook())
'''


def cpu_can(path: str) -> bool:
    """Whether this CPU runs `path` (torch reports its best capability; avx2 needs AVX2 or better)."""
    if path != "avx2":
        return True
    import torch

    return torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512")


def capability(env: dict) -> str:
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
                         env=env, capture_output=True, text=True)
    return out.stdout.strip() or out.stderr.strip()[-200:]


def run_pytest(args: list[str], env: dict) -> dict:
    t = time.time()
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA", *args]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    tail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-300:]
    failed = re.findall(r"^(?:FAILED|ERROR) (\S+(?: \d+)?)", proc.stdout, flags=re.M)
    passed = re.findall(r"^PASSED (\S+(?: \d+)?)", proc.stdout, flags=re.M)
    return dict(command=" ".join(cmd[1:]), returncode=proc.returncode, summary=tail, failed=failed, passed=passed,
                seconds=round(time.time() - t, 1), log_tail=proc.stdout[-3000:])


def all_failed(run: dict) -> bool:
    """Under --break: every learning test failed, and every notebook has a failing cell."""
    files = {f.split("::")[0] for f in run["passed"] + run["failed"]}
    failing = {f.split("::")[0] for f in run["failed"]}
    tests_passing = [p for p in run["passed"] if p.startswith("tests/")]
    return bool(files) and failing == files and not tests_passing


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--paths", nargs="+", choices=list(PATHS), default=list(PATHS))
    ap.add_argument("--threads", type=int, default=None,
                    help="OMP_NUM_THREADS for every run (default: 1 with --workers, else torch's own choice)")
    ap.add_argument("--workers", default="auto",
                    help="pytest-xdist workers (default auto: one per core, one torch thread each); 0 = one process")
    ap.add_argument("--break", dest="sabotage", choices=["flip", "zero"], default=None,
                    help="break learning on purpose: the claims must then fail")
    ap.add_argument("--tests-only", action="store_true", help="only the learning tests (pytest -m learning)")
    ap.add_argument("--notebooks-only", action="store_true", help="only the notebooks")
    ap.add_argument("--notebooks", nargs="*", default=CLAIM_NOTEBOOKS, help="notebook names (default: the claims)")
    ap.add_argument("--out", type=Path, default=None, help="write the summary as JSON here")
    a = ap.parse_args(argv)

    base = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONUNBUFFERED="1")
    for k in ("ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS"):
        base.pop(k, None)
    xdist = [] if a.workers == "0" else ["-n", a.workers, "--dist", "loadscope"]
    if a.threads or xdist:
        base["OMP_NUM_THREADS"] = str(a.threads or 1)
    tmp = None
    if a.sabotage:
        tmp = tempfile.TemporaryDirectory(prefix="magrpo-break-")
        Path(tmp.name, "sitecustomize.py").write_text(SABOTAGE)
        base["PYTHONPATH"] = os.pathsep.join([tmp.name, *filter(None, [base.get("PYTHONPATH")])])
        base["MAGRPO_EDU_BREAK"] = a.sabotage

    report = dict(threads=base.get("OMP_NUM_THREADS", "torch default"), workers=a.workers, sabotage=a.sabotage, paths={})
    for name in a.paths:
        if not cpu_can(name):
            print(f"== {name}: skipped, this CPU lacks the instructions it needs", flush=True)
            report["paths"][name] = dict(skipped="CPU lacks the instructions")
            continue
        env = dict(base, **PATHS[name])
        cap = capability(env)
        print(f"== {name}: {' '.join(f'{k}={v}' for k, v in PATHS[name].items()) or '(no variables)'}; "
              f"torch runs {cap} kernels", flush=True)
        runs = {}
        if not a.notebooks_only:
            runs["tests"] = run_pytest([*xdist, "-m", "learning", "tests"], env)
            print(f"   tests: {runs['tests']['summary']} ({runs['tests']['seconds']} s)", flush=True)
        if not a.tests_only and a.notebooks:
            nbs = [str(Path("notebooks") / f"{n}.ipynb") for n in a.notebooks]
            runs["notebooks"] = run_pytest([*xdist, "--nbval-lax", *nbs], env)
            print(f"   notebooks: {runs['notebooks']['summary']} ({runs['notebooks']['seconds']} s)", flush=True)
            for f in runs["notebooks"]["failed"]:
                print(f"      failed: {f}")
        for f in runs.get("tests", {}).get("failed", []):
            print(f"      failed: {f}")
        report["paths"][name] = dict(capability=cap, **runs)
    if tmp:
        tmp.cleanup()

    ok = []
    for name, r in report["paths"].items():
        if "skipped" in r:
            continue
        runs = [r[k] for k in ("tests", "notebooks") if k in r]
        ok.append(all(all_failed(x) for x in runs) if a.sabotage else all(x["returncode"] == 0 for x in runs))
    verdict = ("every claim failed under the sabotage, as it must" if a.sabotage else "every claim held") \
        if all(ok) else ("SOME CLAIM STILL PASSED under the sabotage" if a.sabotage else "SOME CLAIM FAILED")
    print(f"== {verdict} ({len(ok)} path(s))")
    if a.out:
        a.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
