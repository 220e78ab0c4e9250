"""Small helpers for writing and cleaning the notebooks (used by the maintainers, not at run time).

    python tools/nbtools.py strip notebooks/*.ipynb    # drop widget state and local paths before committing
    python tools/nbtools.py execute 00 03 07           # re-execute in place as docs/notebooks.md says, then strip

`execute` runs each notebook top to bottom (`jupyter nbconvert --execute --inplace`) the way its committed outputs
were made: the hub offline, the reference solutions on (MAGRPO_EDU_SOLUTIONS=1), OMP_NUM_THREADS from THREADS
(docs/notebooks.md: 2 for the notebooks that train longest, 1 for the rest), notebook 07 held to the fp32 AVX2 path
(AVX2_ENV), under /usr/bin/time -v where it exists; prints each notebook's wall time and peak memory (the table in
docs/notebooks.md), then strips it. One notebook at a time: two at once on 2 cores slow each other 10-20x.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
THREADS = {"00": 2, "01": 1, "02": 1, "03": 2, "04": 2, "05": 2, "06": 1, "07": 2, "08": 2, "09": 1}
"""OMP threads each notebook is executed with (docs/notebooks.md)."""
AVX2_ENV = dict(ONEDNN_MAX_CPU_ISA="AVX2", ATEN_CPU_CAPABILITY="avx2", MKL_ENABLE_INSTRUCTIONS="AVX2")
"""Notebook 07 runs on the fp32 path of AVX2-only CPUs (docs/notebooks.md says why)."""

ABSOLUTE = re.compile(r"(/home/|/root/|/Users/|/work/|/tmp/|[A-Z]:\\\\Users)")


def strip(path: str | Path) -> None:
    """Remove metadata.widgets (GitHub refuses widget metadata without state), execution timing,
    and replace absolute paths in outputs by '<...>'. An explorer's saved output keeps only its static
    HTML (`display.explorer_class`): without the stripped state, JupyterLab and Binder would draw the
    widget view as "Error displaying widget: model not found"; re-running the cell brings the live one."""
    p = Path(path)
    nb = json.loads(p.read_text())
    nb.get("metadata", {}).pop("widgets", None)
    for cell in nb.get("cells", []):
        cell.get("metadata", {}).pop("execution", None)
        for out in cell.get("outputs", []):
            if "text" in out:
                out["text"] = [ABSOLUTE.sub("<path>/", t) for t in out["text"]] if isinstance(out["text"], list) else ABSOLUTE.sub("<path>/", out["text"])
            data = out.get("data", {})
            if "text/html" in data:
                data.pop("application/vnd.jupyter.widget-view+json", None)
            for k in ("text/plain", "text/html"):
                if k in data:
                    v = data[k]
                    data[k] = [ABSOLUTE.sub("<path>/", t) for t in v] if isinstance(v, list) else ABSOLUTE.sub("<path>/", v)
    p.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def execute(number: str, timeout_s: int = 3600) -> dict:
    """Re-execute notebooks/<number>_*.ipynb in place (module docstring), strip it; its seconds and peak RSS."""
    (path,) = sorted((ROOT / "notebooks").glob(f"{number}_*.ipynb"))
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", MAGRPO_EDU_SOLUTIONS="1",
               OMP_NUM_THREADS=str(THREADS[number]), **(AVX2_ENV if number == "07" else {}))
    cmd = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--inplace",
           f"--ExecutePreprocessor.timeout={timeout_s}", str(path)]
    timed = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else None)
    t = time.time()
    r = subprocess.run(([timed, "-v"] if timed else []) + cmd, cwd=path.parent, env=env, capture_output=True, text=True)
    seconds = time.time() - t
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    if r.returncode != 0:
        sys.exit(f"{path.name} failed (exit {r.returncode}):\n{r.stderr[-3000:]}")
    strip(path)
    out = dict(notebook=path.name, seconds=round(seconds, 1), threads=THREADS[number],
               peak_mb=round(int(peak.group(1)) / 1024) if peak else None)
    print(f"{path.name}: {seconds / 60:.0f} min {seconds % 60:02.0f} s, peak {out['peak_mb']} MB, "
          f"{THREADS[number]} thread(s)", flush=True)
    return out


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("strip", "execute"):
        sys.exit(__doc__)
    for f in sys.argv[2:]:
        if sys.argv[1] == "strip":
            strip(f)
            print("stripped", f)
        else:
            execute(f)
