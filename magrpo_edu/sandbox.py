"""Run untrusted generated code in a separate, limited process: `run_program(program, asserts)`.

The coding reward executes what the agents wrote. The authors' reference code uses `exec` with
SIGALRM in the trainer's own process; that lets generated code loop forever, exhaust memory, kill
the trainer or write anywhere. Here every program runs in a fresh child process, and each assert
is run separately (the program is re-executed for each, so no state leaks between asserts), with:

  * limits: wall clock (per assert and in total), CPU time, address space, open files, file size,
    output size (stdout/stderr are read up to a cap, the rest discarded), no core dumps;
  * a minimal environment (no inherited variables, so no secrets), stdin closed, `python -I -S`
    (no site-packages, no user site, no PYTHON* variables);
  * the whole process group (and, where available, every process of its PID namespace and
    cgroup) killed on timeout or when the run ends, so nothing is left running;
  * a fresh temporary working directory, removed afterwards.

What is isolated depends on the operating system; `isolation()` says what this machine gives:

  Linux, root with util-linux `unshare` (CI, most servers, Docker with CAP_SYS_ADMIN):
    new PID, network, mount, IPC and UTS namespaces (no network at all: only a downed loopback);
    the root filesystem remounted read-only, private tmpfs over /tmp, /var/tmp, /dev/shm, an
    empty /sys and a minimal /dev (null, zero, random, urandom); all capabilities dropped with
    `setpriv` before the program starts; the number of processes capped by a pids cgroup when
    one can be created (a fork bomb stops at the cap), and everything killed with the namespace.
  Linux without those rights (a laptop user without unprivileged namespaces, most notebooks,
  Colab, which runs as root in a container without CAP_SYS_ADMIN):
    a plain child process with the rlimits above in a fresh temporary directory and its own
    process group. NOT isolated: the network, the filesystem (the program can read and write
    whatever the user can), and processes (RLIMIT_NPROC limits a non-root user's processes but
    does not bind root: on Colab a fork bomb is stopped only by the timeout's group kill).
  macOS: the same fallback; RLIMIT_AS is not enforced by macOS, so memory is not limited either.
  Windows: not supported (no fork, no rlimits); run training there under WSL.

Results cannot be forged by printing: each assert's verdict is written by the harness to a
separate pipe, tagged with a per-run secret. A program that deliberately digs the secret out of the
interpreter's memory (gc, frames) could forge its own verdict; it still cannot harm the host.
"""
from __future__ import annotations

import ast
import functools
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Optional, Sequence

try:
    import resource
except ImportError:  # Windows
    resource = None

# The harness runs INSIDE the sandbox, as `python -I -S -c HARNESS`. It reads one JSON object
# from stdin, then for each assert: executes the program and the assert in fresh globals (with a
# private copy of the builtins), and writes one verdict line to the result pipe.
HARNESS = r'''
import sys, os, json, signal, builtins
def _main(_os_write=os.write, _repr=repr, _type=type, _str=str, _dict=dict, _vars=vars, _exc=BaseException,
          _compile=compile, _exec=exec, _signal=signal.signal, _setitimer=signal.setitimer, _enumerate=enumerate,
          _ALRM=signal.SIGALRM, _REAL=signal.ITIMER_REAL):
    spec = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    sys.stdin.close()
    os.close(0)
    fd, tag, per, limit = spec["fd"], spec["tag"], spec["assert_timeout"], spec["max_timeouts"]
    program, tests = spec["program"], spec["asserts"]
    snapshot = _dict(_vars(builtins))
    real_builtins = _vars(builtins)
    def emit(d):  # repr of a dict of str/int/None: parsed by ast.literal_eval, no json (a program may patch it)
        d["tag"] = tag
        _os_write(fd, (_repr(d) + "\n").encode())
    class _Timeout(_exc):
        pass
    def on_alarm(signum, frame):
        raise _Timeout()
    try:
        code = _compile(program, "<program>", "exec")
    except SyntaxError as e:
        emit({"load_error": "SyntaxError", "message": _str(e.msg), "line": e.lineno, "col": e.offset})
        return
    timeouts = 0
    for i, test in _enumerate(tests):
        if timeouts >= limit:
            emit({"index": i, "status": "skipped", "error": "TooManyTimeouts", "message": "earlier asserts timed out"})
            continue
        g = {"__name__": "__main__", "__builtins__": _dict(snapshot)}
        _signal(_ALRM, on_alarm)
        _setitimer(_REAL, per)
        try:
            _exec(code, g)
            _exec(_compile(test, "<assert>", "exec"), g)
            _setitimer(_REAL, 0)
            verdict = {"index": i, "status": "passed"}
        except _Timeout:
            timeouts += 1
            verdict = {"index": i, "status": "timeout", "error": "Timeout", "message": "assert exceeded %ss" % per}
        except _exc as e:
            _setitimer(_REAL, 0)
            try:
                verdict = {"index": i, "status": "failed", "error": _type(e).__name__, "message": _str(e)[:300]}
            except _exc:
                verdict = {"index": i, "status": "failed", "error": "Unprintable", "message": ""}
        real_builtins.clear()
        real_builtins.update(snapshot)  # undo what the program did to the builtins module
        emit(verdict)
_main()
'''

_SETUP = """set -e
mount -o remount,bind,ro / 2>/dev/null || mount -o remount,ro /
for d in /tmp /var/tmp /dev/shm; do [ -d "$d" ] && mount -t tmpfs -o size={tmp_mb}m,mode=1777,nosuid,nodev tmpfs "$d"; done
mount -t tmpfs -o size=1m,ro tmpfs /sys
mount -t tmpfs -o size=64k,mode=755 tmpfs /dev
mknod -m 666 /dev/null c 1 3; mknod -m 666 /dev/zero c 1 5; mknod -m 444 /dev/random c 1 8; mknod -m 444 /dev/urandom c 1 9
mkdir -p /tmp/work && cd /tmp/work
exec setpriv --no-new-privs --inh-caps=-all --bounding-set=-all -- "$@"
"""


@dataclass
class SandboxLimits:
    """Resource limits of one program run."""

    timeout_s: float = 10.0  # wall clock for the whole run (all asserts)
    assert_timeout_s: float = 3.0  # wall clock per assert (program + assert)
    cpu_s: int = 10  # CPU seconds (RLIMIT_CPU)
    memory_mb: int = 512  # address space (RLIMIT_AS)
    max_processes: int = 16  # pids cgroup cap (namespaces mode) / RLIMIT_NPROC (fallback, non-root)
    max_open_files: int = 64  # RLIMIT_NOFILE
    max_file_mb: int = 16  # RLIMIT_FSIZE and the private /tmp size
    max_output_bytes: int = 65536  # stdout+stderr kept
    max_timeouts: int = 3  # stop running asserts after this many timed out (the reference code's rule)


@dataclass
class AssertResult:
    index: int
    source: str
    passed: bool
    status: str  # passed | failed | timeout | skipped | not_run
    error: Optional[str] = None
    message: Optional[str] = None


@dataclass
class SandboxResult:
    asserts: list[AssertResult]
    load_error: Optional[dict] = None  # {"error": "SyntaxError", "message", "line", "col"}
    timed_out: bool = False
    exit_code: Optional[int] = None
    output: str = ""
    output_truncated: bool = False
    seconds: float = 0.0
    mode: str = ""

    @property
    def passed(self) -> int:
        return sum(a.passed for a in self.asserts)

    @property
    def total(self) -> int:
        return len(self.asserts)

    def to_dict(self) -> dict:
        return {**asdict(self), "passed": self.passed, "total": self.total}


# --------------------------------------------------------------------------------------------------
# What this machine can isolate
# --------------------------------------------------------------------------------------------------
def _namespaced(cmd: list[str], tmp_mb: int) -> list[str]:
    """`cmd` inside new PID/net/mount/IPC/UTS namespaces, after _SETUP (read-only root, private tmpfs, caps dropped)."""
    return ["unshare", "--fork", "--pid", "--mount-proc", "--net", "--mount", "--ipc", "--uts", "--kill-child",
            "sh", "-c", _SETUP.format(tmp_mb=tmp_mb), "sh"] + cmd


@functools.lru_cache(maxsize=1)
def _namespaces_work() -> bool:
    if sys.platform != "linux" or os.geteuid() != 0 or not (shutil.which("unshare") and shutil.which("setpriv")):
        return False
    try:
        r = subprocess.run(_namespaced(["true"], tmp_mb=1), capture_output=True, timeout=20)
        return r.returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _cgroup_root() -> Optional[str]:
    """A writable folder where a pids cgroup can be made: cgroup v1's pids hierarchy, or v2 with pids."""
    v1 = "/sys/fs/cgroup/pids"
    if os.path.isfile(os.path.join(v1, "cgroup.procs")) and os.access(v1, os.W_OK):
        return v1
    v2 = "/sys/fs/cgroup"
    try:
        if "pids" in open(os.path.join(v2, "cgroup.subtree_control")).read() and os.access(v2, os.W_OK):
            return v2
    except OSError:
        pass
    return None


class _PidsCgroup:
    """A throw-away pids cgroup (v1 or v2) capping the number of processes of one run."""

    def __init__(self, max_pids: int):
        root = _cgroup_root()
        if root is None:
            raise OSError("no writable pids cgroup")
        self.path = os.path.join(root, f"magrpo-sandbox-{os.getpid()}-{secrets.token_hex(4)}")
        os.mkdir(self.path)
        with open(os.path.join(self.path, "pids.max"), "w") as fh:
            fh.write(str(max_pids))

    def join_command(self) -> list[str]:
        """A prefix that moves the process into this cgroup, then execs the rest of the command."""
        procs = os.path.join(self.path, "cgroup.procs")
        return ["sh", "-c", f'echo $$ > "{procs}" && exec "$@"', "sh"]

    def kill_all(self) -> None:
        for _ in range(50):
            try:
                pids = [int(p) for p in open(os.path.join(self.path, "cgroup.procs")).read().split()]
            except OSError:
                return
            if not pids:
                return
            for p in pids:
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.01)

    def remove(self) -> None:
        self.kill_all()
        for _ in range(100):
            try:
                os.rmdir(self.path)
                return
            except OSError:
                time.sleep(0.02)


@functools.lru_cache(maxsize=1)
def isolation() -> dict:
    """What `run_program` isolates on this machine (see the module docstring). Set the environment
    variable MAGRPO_EDU_SANDBOX=rlimits to force the fallback (e.g. to test it)."""
    ns = os.environ.get("MAGRPO_EDU_SANDBOX", "auto") != "rlimits" and _namespaces_work()
    cg = False
    if ns:
        try:
            c = _PidsCgroup(4)
            c.remove()
            cg = True
        except OSError:
            cg = False
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    return dict(
        mode="linux-namespaces" if ns else "rlimits",
        network=ns, pid_namespace=ns, read_only_filesystem=ns, private_tmp=ns, capabilities_dropped=ns,
        process_cap="pids cgroup" if cg else ("RLIMIT_NPROC" if not root and resource is not None else "none (timeout group kill only)"),
        memory_limit=resource is not None and sys.platform != "darwin",
        platform=sys.platform,
    )


# --------------------------------------------------------------------------------------------------
# Running one program
# --------------------------------------------------------------------------------------------------
def _rlimits(limits: SandboxLimits, cap_nproc: bool) -> list[tuple[int, int, str]]:
    """(resource, value, prlimit option) of every limit applied to the child."""
    if resource is None:
        return []
    lim = [(resource.RLIMIT_CPU, limits.cpu_s, "--cpu"), (resource.RLIMIT_AS, limits.memory_mb * 2 ** 20, "--as"),
           (resource.RLIMIT_NOFILE, limits.max_open_files, "--nofile"),
           (resource.RLIMIT_FSIZE, limits.max_file_mb * 2 ** 20, "--fsize"), (resource.RLIMIT_CORE, 0, "--core")]
    if cap_nproc:
        lim.append((resource.RLIMIT_NPROC, limits.max_processes, "--nproc"))
    return lim


def _set_rlimits(lim) -> None:
    """preexec_fn fallback where util-linux `prlimit` is missing (macOS): runs between fork and exec."""
    for what, value, _ in lim:
        try:
            resource.setrlimit(what, (value, value))
        except (ValueError, OSError):
            pass


def _read_capped(stream, cap: int, sink: list) -> None:
    kept, truncated = bytearray(), False
    while True:
        chunk = stream.read(65536)
        if not chunk:
            break
        room = cap - len(kept)
        if room > 0:
            kept += chunk[:room]
        if len(chunk) > max(room, 0):
            truncated = True
    sink.extend([bytes(kept), truncated])


def run_program(program: str, asserts: Sequence[str], limits: Optional[SandboxLimits] = None) -> SandboxResult:
    """Run `program` then each assert (separately) in a sandboxed child process; never raises for
    anything the program does. Returns one `AssertResult` per assert."""
    limits = limits or SandboxLimits()
    asserts = list(asserts)
    iso = isolation()
    python = os.path.realpath(sys.executable)
    tag = secrets.token_hex(16)
    r_fd, w_fd = os.pipe()
    work = tempfile.mkdtemp(prefix="magrpo-sandbox-")
    cgroup = None
    harness = [python, "-I", "-S", "-B", "-c", HARNESS]
    if iso["mode"] == "linux-namespaces":
        try:
            cgroup = _PidsCgroup(limits.max_processes)
        except OSError:
            cgroup = None
        cmd = _namespaced(harness, tmp_mb=limits.max_file_mb)
        home = "/tmp/work"
    else:
        cmd, home = harness, work
    lim = _rlimits(limits, cap_nproc=hasattr(os, "geteuid") and os.geteuid() != 0)
    preexec = None
    if lim and shutil.which("prlimit"):
        cmd = ["prlimit"] + [f"{opt}={value}" for _, value, opt in lim] + ["--"] + cmd
    elif lim:
        preexec = functools.partial(_set_rlimits, lim)
    if cgroup is not None:
        cmd = cgroup.join_command() + cmd  # joined first, so every descendant is counted
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": home}
    spec = json.dumps(dict(program=program, asserts=asserts, fd=w_fd, tag=tag, assert_timeout=limits.assert_timeout_s,
                           max_timeouts=limits.max_timeouts)).encode()
    t0 = time.perf_counter()
    timed_out = False
    out_sink: list = []
    lines: list[str] = []
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=work, env=env,
                                pass_fds=(w_fd,), start_new_session=True, preexec_fn=preexec)
    except OSError as exc:
        os.close(r_fd), os.close(w_fd)
        shutil.rmtree(work, ignore_errors=True)
        if cgroup is not None:
            cgroup.remove()
        return SandboxResult([AssertResult(i, a, False, "not_run", "SandboxError", str(exc)) for i, a in enumerate(asserts)],
                             mode=iso["mode"])
    os.close(w_fd)
    reader = threading.Thread(target=_read_capped, args=(proc.stdout, limits.max_output_bytes, out_sink), daemon=True)
    reader.start()

    def read_results():
        sink: list = []
        with os.fdopen(r_fd, "rb") as fh:
            _read_capped(fh, 4 * 2 ** 20, sink)  # verdict lines are small; a flood beyond 4 MB is dropped
        lines.extend(sink[0].decode("utf-8", "replace").splitlines())

    results_thread = threading.Thread(target=read_results, daemon=True)
    results_thread.start()
    try:
        proc.stdin.write(spec)
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    try:
        proc.wait(timeout=limits.timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        _kill_everything(proc, cgroup)
        reader.join(timeout=5)
        results_thread.join(timeout=5)
        if cgroup is not None:
            cgroup.remove()
        shutil.rmtree(work, ignore_errors=True)
    seconds = time.perf_counter() - t0
    return _collect(asserts, lines, tag, out_sink, proc.returncode, timed_out, seconds, iso["mode"])


def _kill_everything(proc, cgroup) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if cgroup is not None:
        cgroup.kill_all()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()


def _collect(asserts, lines, tag, out_sink, code, timed_out, seconds, mode) -> SandboxResult:
    verdicts: dict[int, dict] = {}
    load_error = None
    for line in lines:
        try:
            d = ast.literal_eval(line)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if not isinstance(d, dict) or d.get("tag") != tag:
            continue  # not written by the harness
        if "load_error" in d:
            load_error = {"error": d["load_error"], "message": d.get("message"), "line": d.get("line"), "col": d.get("col")}
        elif isinstance(d.get("index"), int) and d["index"] not in verdicts:
            verdicts[d["index"]] = d
    results = []
    for i, src in enumerate(asserts):
        d = verdicts.get(i)
        if load_error is not None:
            results.append(AssertResult(i, src, False, "not_run", load_error["error"], load_error["message"]))
        elif d is None:
            why = "the run hit its total timeout" if timed_out else f"the program ended the process (exit code {code})"
            results.append(AssertResult(i, src, False, "timeout" if timed_out else "not_run",
                                        "Timeout" if timed_out else "ProcessExited", why))
        else:
            results.append(AssertResult(i, src, d["status"] == "passed", d["status"], d.get("error"), d.get("message")))
    output, truncated = out_sink if out_sink else (b"", False)  # empty only if the reader thread never finished
    return SandboxResult(results, load_error, timed_out, code, output.decode("utf-8", "replace"), truncated, seconds, mode)


def run_many(jobs: Sequence[tuple[str, Sequence[str]]], limits: Optional[SandboxLimits] = None,
             workers: Optional[int] = None) -> list[SandboxResult]:
    """Run many (program, asserts) pairs in parallel across the cores; results in input order."""
    workers = workers or max(1, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda job: run_program(job[0], job[1], limits), jobs))
