"""Run untrusted generated code in a separate, limited process: `run_program(program, asserts, entry_point=...)`.

The coding reward executes what the agents wrote. The authors' reference code uses `exec` with
SIGALRM in the trainer's own process; that lets generated code loop forever, exhaust memory, kill
the trainer, read or write anywhere, and forge its own test results. Here every program runs in a
fresh child process, and each assert runs in a fresh process of its own, forked by the harness
before any program code ran, where the program is executed again and then the assert: nothing one
assert's process does (globals, state of imported modules, the builtins, signal handlers, a crash,
os._exit) reaches the next assert; only files written to the run's private folders persist between
the asserts of one run. With:

  * limits: wall clock (per assert, enforced from outside the assert's process, and in total), CPU
    time (per process), address space, open files, file size,
    output size (stdout/stderr are read up to a cap, the rest discarded), no core dumps;
  * a minimal environment (no inherited variables, so no secrets), stdin closed, `python -I -S`
    (no site-packages, no user site, no PYTHON* variables);
  * the whole process group (and, where available, every process of its PID namespace and
    cgroup) killed on timeout or when the run ends, so nothing is left running;
  * death with the trainer (Linux): the first child gets PR_SET_PDEATHSIG (`setpriv --pdeathsig`)
    and the total timeout is also enforced inside the sandbox (coreutils `timeout`), so a SIGKILLed
    trainer leaves no program running; the cgroup and temporary folder a dead trainer left are
    removed by the next run on the machine (their names carry the trainer's pid, as does the
    harness's command line, `magrpo-sandbox-owner-PID`, for `ps`);
  * a fresh temporary working directory, removed afterwards;
  * a bounded parent: what the program sends back (result lines, up to 4 MB plus 1 MB per assert;
    output, up to max_output_bytes) is parsed, decoded and checked by the judge, a process of its
    own under RLIMIT_AS, killed when the program's time limit plus JUDGE_GRACE_S has passed (asserts
    it did not decide by then time out). So `run_program` returns within timeout_s + JUDGE_GRACE_S
    plus the waits of killing and cleaning up (each capped, a few seconds in all at worst), whatever
    the program sends.

What is isolated (`isolation()` reports it; in namespaces mode from a probe run inside the sandbox).
tests/test_sandbox.py attacks every entry of column (a) with a hostile program (CI runs it), and
checks the rlimits entries it can on Linux (limits, the trainer-death group kill, a daemon escaping):

                                  (a) Linux, root   (b) Linux,        (c) macOS      (d) Colab (root in
                                  with unshare (CI)  unprivileged                     a container without
                                                                                      CAP_SYS_ADMIN)
  mode                            linux-namespaces  rlimits           rlimits        rlimits
  time/CPU/files/output limits    yes               yes               yes            yes
  memory limit per process        yes               yes               NO             yes
    (RLIMIT_AS)
  one memory limit per program    memory cgroup     NO                NO             NO
    (all its processes, its tmpfs (v1 or v2) where
    pages)                        writable, else NO
  network                         none (no route,   NOT isolated      NOT isolated   NOT isolated
                                  own abstract sockets)
  host files: home, /etc/shadow,  HIDDEN: not in    readable as       readable as    readable (root:
    the repo and its data,        the sandbox's     the user          the user       everything)
    site-packages                 filesystem
  writes outside the sandbox      none (own tmpfs   as the user       as the user    anywhere (root)
                                  /tmp, /dev/shm)
  host Unix socket files          unreachable       reachable         reachable      reachable
  program's uid / capabilities    65534 / none      the user / none   the user       0 / root's
  /proc/sys (kernel settings)     read-only         as the user       n/a            as root (writable
                                                    (read-only)                      unless mounted ro)
  trainer's kernel keyrings       not reachable     the user's        n/a            root's
  other processes                 invisible (PID    visible           visible        visible, killable
                                  namespace)
  processes (fork bomb)           pids cgroup cap   RLIMIT_NPROC      RLIMIT_NPROC   timeout only
  a daemonised (setsid) child     killed            MAY SURVIVE       MAY SURVIVE    MAY SURVIVE
  trainer SIGKILLed               all killed        group killed      MAY SURVIVE    group killed
  /dev/shm (multiprocessing)      private           the host's        the host's     the host's
  forge-proof verdicts (below)    yes               no (same user)    no             no (root)
  Windows: not supported (no fork, no rlimits); run training there under WSL.

  (a) runs each program in new PID, network, mount, IPC and UTS namespaces inside a minimal root
  built by a trusted setup step (PID 1 of the namespaces, as root, before any untrusted code): an
  empty read-only tmpfs with read-only binds of /usr, /bin, /sbin, /lib*, the Python installation
  (`sys.base_prefix`, with every site-packages/dist-packages under an empty read-only tmpfs) and
  /etc/ld.so.cache, a generated /etc/passwd, group and hosts; private tmpfs /tmp and /dev/shm; a
  /dev with null, zero, random, urandom; a fresh /proc (only the sandbox's processes) with
  /proc/sys (and /proc/sysrq-trigger) read-only; a new empty session keyring. The host's root is
  pivot_root'ed away and unmounted (chroot where pivot_root is refused), then the program runs as
  uid/gid 65534 with no groups, no capabilities and no_new_privs. Still visible: the contents of
  /usr and of the Python installation (system files), the kernel's version and /proc's global
  figures; out of scope: kernel exploits.
  (b)-(d) fall back to a plain child process with the limits above in a fresh temporary folder and
  its own process group; root (d) is not bound by RLIMIT_NPROC.
  Memory: RLIMIT_AS bounds each process, not their sum, and not tmpfs pages (a program in (a) may make
  a user namespace of its own and mount a tmpfs there). Where a memory cgroup is writable (cgroup v1's
  memory hierarchy, or the v2 root delegating "memory": root on most Linux machines, CI included)
  every process of a program joins one with memory_mb, swap included, which the kernel also charges
  with the tmpfs pages they write; over it the OOM killer kills a process of that program. Where none
  is writable `isolation()["memory_limit"]` says "per process only": N processes may then hold N x
  memory_mb, and a tmpfs mounted in a user namespace is bounded by nothing but the host's memory.

Forge-proof verdicts (pass `entry_point`, the name the asserts call, e.g. `assert add(1, 2) == 3`):
the trusted parent parses each assert with `ast` and replaces every call of the entry point (with
what is applied to its result alone: single-argument builtins such as `sorted(...)`/`len(...)`,
attribute access, no-argument method calls, constant subscripts) by a placeholder; it sends only
those expressions (the entry point and its arguments, never the expected side) to the sandbox.
The sandbox executes the program, evaluates them and returns their values as tagged JSON of plain
builtin data: None, bool, int, float (nan, inf included), complex, str, bytes, and list, tuple,
dict, set, frozenset of those (bounded: 100,000 items, depth 64, 1 MB). A subclass of one of those
is sent as its base value (a namedtuple as a tuple, a Counter as a dict: its `__eq__` is never
used); anything else fails that assert ("NonBuiltinResult": "returned a non-builtin object"). A
trusted judge process outside the sandbox (`JUDGE`, started by the parent) parses the JSON strictly
(no eval) and evaluates the assert, in a namespace of safe builtins and `math`. So the program never sees an expected value and never decides a verdict:
whatever it does (an `__eq__` that is always True, walking the harness's frames to its writer,
writing to the result pipe) it can at most claim return values, which is no better than computing
them. Limits of the guarantee: an assert the parent cannot evaluate alone (the entry point used as
a value, e.g. `map(f, xs)`; a call whose arguments use a name the assert binds, e.g. a comprehension
variable; a name outside the calls that is neither a safe builtin nor `math`, e.g. a helper of the
program; an import) falls back to a verdict decided in the sandbox and is marked
`AssertResult.checked_by == "sandbox"` (forgeable; host-decided ones say "host"); all calls of an
assert are evaluated, in order, before it (no short-circuit); and in the rlimits modes the
program runs as the trainer's user and could attack the trainer process directly. Without
`entry_point` every verdict is decided in the sandbox (the old behaviour, kept for compatibility),
and a program can forge it.
"""
from __future__ import annotations

import ast
import functools
import json
import math
import os
import platform
import re
import secrets
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Optional, Sequence

try:
    import resource
except ImportError:  # Windows
    resource = None

SANDBOX_UID = 65534  # "nobody": the program's uid and gid in namespaces mode
MAX_VALUE_CHARS = 2 ** 20  # JSON of one assert's returned values
MAX_VALUE_ITEMS = 100_000  # items (scalars + containers) in one assert's returned values
MAX_VALUE_DEPTH = 64

# The harness runs INSIDE the sandbox, as `python -I -S -c HARNESS`. It reads one JSON object from
# stdin, compiles the program, then for each assert forks a fresh process (its own process group)
# that executes the program in fresh globals (with a private copy of the builtins) and then either
# evaluates the shipped expressions and writes their values (forge-proof mode) or runs the assert
# itself and writes its verdict (legacy mode), one line on the result pipe. The harness's process
# runs no program code: it times each assert's process (SIGKILL to its group after
# `assert_timeout`), and writes a line of its own when that process timed out or died without one
# (the parent keeps the first line of each assert).
HARNESS = r'''
import sys, os, json, signal, builtins
def _main(_os_write=os.write, _repr=repr, _type=type, _str=str, _dict=dict, _vars=vars, _exc=BaseException,
          _compile=compile, _exec=exec, _eval=eval, _signal=signal.signal, _setitimer=signal.setitimer,
          _enumerate=enumerate, _len=len, _dumps=json.dumps, _issub=issubclass, _ALRM=signal.SIGALRM,
          _REAL=signal.ITIMER_REAL, _int=int, _float=float, _complex=complex, _bool=bool, _bytes=bytes, _list=list,
          _tuple=tuple, _set=set, _frozenset=frozenset, _slice=slice, _None=type(None), _fork=os.fork,
          _setpgid=os.setpgid, _waitpid=os.waitpid, _killpg=os.killpg, _kill=os.kill, _KILL=signal.SIGKILL,
          _exit=os._exit):
    spec = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    sys.stdin.close()
    os.close(0)
    if spec.get("cwd"):
        try:
            os.chdir(spec["cwd"])
        except OSError:
            pass
    fd, tag, per, limit = spec["fd"], spec["tag"], spec["assert_timeout"], spec["max_timeouts"]
    os.set_inheritable(fd, False)  # the program's own children do not get the result pipe
    max_items, max_depth, max_chars = spec["max_items"], spec["max_depth"], spec["max_chars"]
    program, tests = spec["program"], spec["asserts"]
    snapshot = _dict(_vars(builtins))
    stdout, stderr, real_builtins = sys.stdout, sys.stderr, _vars(builtins)
    own_group = spec["own_group"]  # namespaces mode; in rlimits mode the run's one process group is what dies with the trainer
    def emit(d, fresh=False):  # fresh: after a line a killed process may have left unfinished
        d["tag"] = tag
        _os_write(fd, (("\n" if fresh else "") + _dumps(d) + "\n").encode())
    def _flush():
        for stream in (stdout, stderr):
            try:
                stream.flush()
            except _exc:
                pass
    class _Timeout(_exc):
        pass
    class _Unsendable(Exception):
        pass
    def on_alarm(signum, frame):
        raise _Timeout()
    # Return values go back as JSON with type tags. A subclass of a builtin type is copied by the
    # base type's own method (int.__int__, list.copy, ...) into a plain value: its __eq__ never counts.
    f_repr, i_copy, f_copy, c_copy = _float.__repr__, _int.__int__, _float.__float__, _complex.__complex__
    s_copy, y_copy = _str.__str__, _bytes.__bytes__
    l_copy, d_copy, st_copy, fs_copy, t_item = _list.copy, _dict.copy, _set.copy, _frozenset.copy, _tuple.__getitem__
    d_items, y_hex, everything = _dict.items, _bytes.hex, _slice(None)
    def enc(x, depth, left):
        left[0] -= 1
        if left[0] < 0:
            raise _Unsendable("returned a value too large to check (over %d items)" % max_items)
        if depth > max_depth:
            raise _Unsendable("returned a value nested too deeply to check")
        t = _type(x)
        if t is _None or t is _bool or t is _str:
            return x
        if t is _int:
            if x.bit_length() > 13000:
                raise _Unsendable("returned an integer too large to check")
            return x
        if t is _float:
            return ["f", f_repr(x)]
        if t is _complex:
            return ["c", f_repr(x.real), f_repr(x.imag)]
        if t is _bytes:
            return ["y", y_hex(x)]
        if t is _list or t is _tuple or t is _set or t is _frozenset:
            out = ["l" if t is _list else "t" if t is _tuple else "s" if t is _set else "F"]
            for e in x:
                out.append(enc(e, depth + 1, left))
            return out
        if t is _dict:
            out = ["d"]
            for k, v in d_items(x):
                out.append(enc(k, depth + 1, left))
                out.append(enc(v, depth + 1, left))
            return out
        for base, copy in ((_int, i_copy), (_float, f_copy), (_complex, c_copy), (_str, s_copy), (_bytes, y_copy),
                           (_list, l_copy), (_dict, d_copy), (_set, st_copy), (_frozenset, fs_copy)):
            if _issub(t, base):
                return enc(copy(x), depth, left)
        if _issub(t, _tuple):
            return enc(t_item(x, everything), depth, left)
        try:
            name = _str(t.__name__)[:60]
        except _exc:
            name = "?"
        raise _Unsendable("returned a non-builtin object (%s)" % name)
    try:
        code = _compile(program, "<program>", "exec")
    except SyntaxError as e:
        emit({"load_error": "SyntaxError", "message": _str(e.msg), "line": e.lineno, "col": e.offset})
        return
    def verdict_of(i, test):  # in the assert's own process: the program, then the assert's calls or the assert
        g = {"__name__": "__main__", "__builtins__": _dict(snapshot)}
        try:
            _exec(code, g)
            if "calls" in test:
                values, left = [], [max_items]
                for j, src in _enumerate(test["calls"]):
                    try:
                        values.append(enc(_eval(_compile(src, "<assert>", "eval"), g), 0, left))
                    except _Unsendable as e:
                        raise _Unsendable("%s %s" % (src[:100], e.args[0]))
                text = _dumps(values)
                if _len(text) > max_chars:
                    raise _Unsendable("returned values too large to check (over %d characters)" % max_chars)
                return {"index": i, "values": values}
            _exec(_compile(test["source"], "<assert>", "exec"), g)
            return {"index": i, "status": "passed"}
        except _Unsendable as e:
            return {"index": i, "status": "failed", "error": "NonBuiltinResult", "message": e.args[0][:300]}
        except _exc as e:
            try:
                return {"index": i, "status": "failed", "error": _type(e).__name__, "message": _str(e)[:300]}
            except _exc:
                return {"index": i, "status": "failed", "error": "Unprintable", "message": ""}
    _signal(_ALRM, on_alarm)  # this process times each assert's process (which cannot undo that) and kills it
    timeouts = 0
    for i, test in _enumerate(tests):
        if timeouts >= limit:
            emit({"index": i, "status": "skipped", "error": "TooManyTimeouts", "message": "earlier asserts timed out"})
            continue
        pid = _fork()
        if pid == 0:  # the assert's process: nothing it does reaches the next assert's process
            try:
                if own_group:
                    _setpgid(0, 0)
                verdict = verdict_of(i, test)
                _flush()
                real_builtins.clear()
                real_builtins.update(snapshot)  # undo what the program did to the builtins module (json uses them)
                emit(verdict)
            finally:
                _exit(0)
        status = None
        try:
            _setitimer(_REAL, per)
            status = _waitpid(pid, 0)[1]
            _setitimer(_REAL, 0)
        except _Timeout:
            pass
        for kill in (_killpg, _kill):  # whatever the assert's process left in its own group goes with it
            try:
                kill(pid, _KILL)
            except OSError:
                pass
        if status is None:
            try:
                _waitpid(pid, 0)
            except OSError:
                pass
            timeouts += 1
            emit({"index": i, "status": "timeout", "error": "Timeout", "message": "assert exceeded %ss" % per}, fresh=True)
        else:  # counts only where the assert's process wrote no line (it died first: a signal, os._exit)
            how = "signal %d" % (status & 127) if status & 127 else "exit code %d" % (status >> 8)
            emit({"index": i, "status": "not_run", "error": "ProcessExited",
                  "message": "the program ended the assert's process (%s)" % how}, fresh=True)
_main()
'''


@dataclass
class SandboxLimits:
    """Resource limits of one program run."""

    timeout_s: float = 10.0  # wall clock for the whole run (all asserts)
    assert_timeout_s: float = 3.0  # wall clock per assert (program + the assert's calls)
    cpu_s: int = 10  # CPU seconds of each process (RLIMIT_CPU): of each assert's process
    memory_mb: int = 512  # address space per process (RLIMIT_AS); namespaces mode with a memory cgroup: also the
    #                       memory of all the program's processes and the tmpfs pages they write, together
    max_processes: int = 16  # pids cgroup cap (namespaces mode) / RLIMIT_NPROC (fallback, non-root)
    max_open_files: int = 64  # RLIMIT_NOFILE
    max_file_mb: int = 16  # RLIMIT_FSIZE and the size of the private /tmp and /dev/shm
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
    checked_by: str = "sandbox"  # "host": decided by the trusted parent (forge-proof); "sandbox": forgeable


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
# The minimal root of namespaces mode
# --------------------------------------------------------------------------------------------------
def _python_dirs() -> tuple[list[str], list[str]]:
    """(folders to bind read-only so that `python -I -S` runs, site-packages folders to hide in them)."""
    exe = os.path.realpath(sys.executable)
    dirs = [os.path.realpath(sys.base_prefix), os.path.dirname(exe)]
    libdir = sysconfig.get_config_var("LIBDIR")
    if libdir and sysconfig.get_config_var("Py_ENABLE_SHARED"):
        dirs.append(os.path.realpath(libdir))
    system = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
    binds: list[str] = []
    for d in dirs:
        if not os.path.isdir(d) or d == "/" or any(d == s or d.startswith(s + "/") for s in system + tuple(binds)):
            continue
        binds = [b for b in binds if not b.startswith(d + "/")] + [d]
    hide: set[str] = set()
    ver = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for root in [os.path.realpath(sys.base_prefix), "/usr", "/usr/local"] + binds:
        for sub in (f"lib/{ver}/site-packages", f"lib/{ver}/dist-packages", "lib/python3/dist-packages",
                    f"lib64/{ver}/site-packages", "local/lib/python3/dist-packages"):
            p = os.path.realpath(os.path.join(root, sub))
            if os.path.isdir(p) and any(p.startswith(s + "/") for s in system + tuple(binds)):
                hide.add(p)
    return binds, sorted(hide)


# PID 1 of the new namespaces runs SETUP (as root, before any untrusted code): it builds the minimal
# root over argv[1] (the run's temporary folder), pivots into it, and execs argv[4:] under `timeout`
# (argv[3] seconds) as uid/gid 65534 without groups or capabilities. argv[2]: /tmp and /dev/shm size
# in MB. Python with ctypes does in one process what would otherwise take ~30 `mount` processes.
SETUP = r"""
import ctypes, os, stat, sys
root, mb, total, cmd = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
libc = ctypes.CDLL(None, use_errno=True)
RO, NOSUID, NODEV, NOEXEC, REMOUNT, BIND = 1, 2, 4, 8, 32, 4096
def mount(src, dst, fstype, flags, data=None):
    enc = lambda x: None if x is None else x.encode()
    if libc.mount(enc(src), enc(dst), enc(fstype), ctypes.c_ulong(flags), enc(data)) != 0:
        raise OSError(ctypes.get_errno(), "mount %s" % dst)
def bind_ro(src, dst, flags=NOSUID | NODEV):
    mount(src, dst, None, BIND)
    mount(None, dst, None, REMOUNT | BIND | RO | flags)
if KEYCTL is not None:  # a new, empty session keyring: the trainer's keys stay out of reach
    libc.syscall(ctypes.c_long(KEYCTL), ctypes.c_long(1), ctypes.c_void_p(None))  # KEYCTL_JOIN_SESSION_KEYRING
os.umask(0o022)
mount("tmpfs", root, "tmpfs", NOSUID | NODEV, "size=8m,mode=755")
os.chdir(root)
for d in ("proc", "dev", "tmp", "etc", "var", ".old"):
    os.mkdir(d)
os.symlink("../tmp", "var/tmp")
for link, target in LINKS:
    os.symlink(target, link[1:])
for d in BINDS:
    os.makedirs(d[1:], exist_ok=True)
    bind_ro(d, d[1:])
for d in HIDE:  # site-packages: an empty read-only tmpfs over each
    mount("tmpfs", d[1:], "tmpfs", RO | NOSUID | NODEV, "size=4k,mode=755")
if os.path.isfile("/etc/ld.so.cache"):
    open("etc/ld.so.cache", "w").close()
    bind_ro("/etc/ld.so.cache", "etc/ld.so.cache")
for name, text in (("passwd", "root:x:0:0:root:/root:/bin/sh\nnobody:x:%d:%d:nobody:/tmp/work:/bin/sh\n" % (UID, UID)),
                   ("group", "root:x:0:\nnogroup:x:%d:\n" % UID), ("hosts", "127.0.0.1 localhost\n::1 localhost\n")):
    with open("etc/" + name, "w") as fh:
        fh.write(text)
mount("tmpfs", "dev", "tmpfs", NOSUID, "size=64k,mode=755")  # /dev first, /dev/shm inside it
for name, mode, minor in (("null", 0o666, 3), ("zero", 0o666, 5), ("random", 0o444, 8), ("urandom", 0o444, 9)):
    os.mknod("dev/" + name, mode | stat.S_IFCHR, os.makedev(1, minor))
    os.chmod("dev/" + name, mode)
for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
    os.symlink(target, "dev/" + name)
for d in ("dev/shm", "tmp"):
    os.makedirs(d, exist_ok=True)
    mount("tmpfs", d, "tmpfs", NOSUID | NODEV, "size=%sm,mode=1777" % mb)
os.mkdir("tmp/work", 0o700)
os.chown("tmp/work", UID, UID)
mount("proc", "proc", "proc", NOSUID | NODEV | NOEXEC)  # a fresh proc: only this PID namespace
bind_ro("proc/sys", "proc/sys", NOSUID | NODEV | NOEXEC)
if os.path.exists("proc/sysrq-trigger"):
    bind_ro("proc/sysrq-trigger", "proc/sysrq-trigger", NOSUID | NODEV | NOEXEC)
mount(None, root, None, REMOUNT | RO | NOSUID | NODEV)
if PIVOT_ROOT is not None and libc.syscall(ctypes.c_long(PIVOT_ROOT), b".", b".old") == 0:
    os.chdir("/")
    if libc.umount2(b"/.old", 2) != 0:  # MNT_DETACH: the host's tree is gone from this namespace
        raise OSError(ctypes.get_errno(), "umount /.old")
else:  # pivot_root refused (e.g. a ramfs root) or unknown here: chroot, the uid is dropped anyway
    os.chroot(root)
os.chdir("/tmp/work")
os.environ["PWD"] = "/tmp/work"  # the shell that started us set the host's folder (with the trainer's pid) there
os.execv(TIMEOUT, ["timeout", "-s", "KILL", total, SETPRIV, "--reuid=%d" % UID, "--regid=%d" % UID, "--clear-groups",
                   "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"] + cmd)
"""
_KEYCTL_NR = {"x86_64": 250, "amd64": 250, "aarch64": 219, "arm64": 219, "riscv64": 219, "i386": 288, "i686": 288,
              "armv7l": 311, "ppc64le": 280, "s390x": 280}.get(platform.machine().lower())
_PIVOT_ROOT_NR = {"x86_64": 155, "amd64": 155, "aarch64": 41, "arm64": 41, "riscv64": 41, "i386": 217, "i686": 217,
                  "armv7l": 218, "ppc64le": 203, "s390x": 217}.get(platform.machine().lower())


@functools.lru_cache(maxsize=1)
def _setup_program() -> str:
    """SETUP with this machine's folders and tools filled in."""
    binds, hide = _python_dirs()
    links, dirs = [], []
    for d in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(d):
            links.append((d, os.readlink(d)))
        elif os.path.isdir(d):
            dirs.append(d)
    tools = {t: shutil.which(t, path="/usr/bin:/bin:/usr/sbin:/sbin") for t in ("timeout", "setpriv")}
    head = (f"LINKS, BINDS, HIDE, UID = {links!r}, {dirs + binds!r}, {hide!r}, {SANDBOX_UID}\n"
            f"PIVOT_ROOT, KEYCTL = {_PIVOT_ROOT_NR!r}, {_KEYCTL_NR!r}\n"
            f"TIMEOUT, SETPRIV = {os.path.realpath(tools['timeout'] or 'timeout')!r}, {os.path.realpath(tools['setpriv'] or 'setpriv')!r}\n")
    return head + SETUP


def _namespaced(cmd: list[str], root: str, tmp_mb: int, total_s: float) -> list[str]:
    """`cmd` inside new PID/net/mount/IPC/UTS namespaces, in the minimal root built over `root`."""
    return ["unshare", "--fork", "--pid", "--net", "--mount", "--ipc", "--uts", "--kill-child",
            os.path.realpath(sys.executable), "-I", "-S", "-B", "-c", _setup_program(),
            root, str(int(tmp_mb)), str(int(math.ceil(total_s)) + 2)] + cmd


# --------------------------------------------------------------------------------------------------
# Death with the trainer, stale leftovers
# --------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _pdeathsig_tool() -> bool:
    """Does util-linux `setpriv --pdeathsig` (2.33+) work here? It ties the first child to the
    trainer without a preexec_fn, so Popen keeps its fast vfork path in a big trainer process."""
    if sys.platform != "linux" or not shutil.which("setpriv"):
        return False
    try:
        return subprocess.run(["setpriv", "--pdeathsig", "KILL", "--", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _tie_to_trainer(cmd: list[str], death: int, cgroup: Optional["_ProgramCgroup"]) -> tuple[list[str], Optional[tuple]]:
    """`cmd` made to die with this process: PR_SET_PDEATHSIG=`death` on the first child (kept
    across the execs that follow), then a guard that gives up if this process died before that
    (the fork-to-prctl race) and joins the run's cgroups first, so every descendant is counted.
    Returns the command and, where `setpriv --pdeathsig` is missing, the preexec_fn arguments."""
    joins = cgroup.procs_files if cgroup is not None else []
    guard = ["sh", "-c", '[ "$PPID" = "$0" ] || exit 111; n=$1; shift; while [ "$n" -gt 0 ]; do '
             'echo $$ > "$1" || exit 112; shift; n=$((n - 1)); done; exec "$@"', str(os.getpid()), str(len(joins))] + joins
    if sys.platform != "linux":
        return cmd, None
    if _pdeathsig_tool():
        return ["setpriv", "--pdeathsig", signal.Signals(death).name[3:], "--"] + guard + cmd, None
    return guard + cmd, (death,)


def _child_setup(death_signal: Optional[int], lim) -> None:
    """preexec_fn, only where it is needed (it forces a slower fork): PR_SET_PDEATHSIG where
    `setpriv --pdeathsig` is missing, and the rlimits where `prlimit` is missing (macOS)."""
    if death_signal is not None:
        try:
            import ctypes

            ctypes.CDLL(None).prctl(1, death_signal, 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if lim:
        _set_rlimits(lim)


_OWNED = re.compile(r"^magrpo-sandbox-(\d+)-")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _cleanup_stale() -> None:
    """Remove the cgroups and temporary folders of sandbox runs whose trainer process is gone
    (killed with SIGKILL before it could clean up); their programs died with it."""
    bases = [(tempfile.gettempdir(), False)] + [(root, True) for root in dict.fromkeys(_cgroup_roots().values())]
    for base, is_cgroup in bases:
        if base is None:
            continue
        try:
            entries = [e for e in os.scandir(base) if _OWNED.match(e.name)]
        except OSError:
            continue
        for entry in entries:
            pid = int(_OWNED.match(entry.name).group(1))
            try:
                mine = entry.is_dir(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_uid == os.geteuid()
            except OSError:
                continue
            if not mine or pid == os.getpid() or _alive(pid):
                continue
            path = entry.path
            if is_cgroup:
                _ProgramCgroup.at(path).remove()
            else:
                shutil.rmtree(path, ignore_errors=True)


# --------------------------------------------------------------------------------------------------
# What this machine can isolate
# --------------------------------------------------------------------------------------------------
_PROBE = r'''
import os, json, socket
r = {"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups()}
r["caps"] = [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0]
r["proc_sys_writable"] = os.access("/proc/sys/kernel/core_pattern", os.W_OK) or os.access("/proc/sys", os.W_OK)
r["host_paths_visible"] = [p for p in HOST if os.path.exists(p)]
r["pids"] = len([p for p in os.listdir("/proc") if p.isdigit()])
try:
    socket.create_connection(("1.1.1.1", 80), timeout=0.2); r["network"] = True
except OSError:
    r["network"] = False
r["shm"] = os.access("/dev/shm", os.W_OK)
print("PROBE" + json.dumps(r))
'''


def _probe_namespaces() -> Optional[dict]:
    """Run a probe through the whole namespaces sandbox; what it saw, or None if it cannot run."""
    if sys.platform != "linux" or os.geteuid() != 0 or not all(shutil.which(t) for t in ("unshare", "setpriv", "timeout")):
        return None
    home = os.path.expanduser("~")
    try:
        in_home = [os.path.join(home, n) for n in sorted(os.listdir(home))[:20]]
    except OSError:
        in_home = []
    on_the_way = {os.path.join(home, p.split("/")[0]) for b in _python_dirs()[0] if b.startswith(home + "/")
                  for p in [b[len(home) + 1:]]}
    shown = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/tmp") + tuple(_python_dirs()[0])
    host = [p for p in [os.path.abspath(__file__), os.getcwd(), "/etc/shadow", "/sys/fs/cgroup"] + in_home
            if p not in on_the_way and os.path.realpath(p) != "/" and
            not any(os.path.realpath(p) == d or os.path.realpath(p).startswith(d + "/") for d in shown)]
    probe = "HOST = %r\n%s" % (host, _PROBE)
    work = tempfile.mkdtemp(prefix=f"magrpo-sandbox-{os.getpid()}-")
    try:
        cmd = _namespaced([os.path.realpath(sys.executable), "-I", "-S", "-c", probe], work, 1, 20)
        r = subprocess.run(cmd, capture_output=True, timeout=20, cwd=work, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
        out = r.stdout.decode("utf-8", "replace")
        if r.returncode != 0 or "PROBE" not in out:
            return None
        return json.loads(out.split("PROBE", 1)[1].strip().splitlines()[0])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _cgroup_roots() -> dict[str, str]:
    """Writable folders where a throw-away cgroup can be made, by controller ("pids", "memory"): cgroup
    v1's hierarchy of that controller, or the cgroup v2 root where its subtree_control enables it."""
    v2 = "/sys/fs/cgroup"
    try:
        delegated = open(os.path.join(v2, "cgroup.subtree_control")).read().split() if os.access(v2, os.W_OK) else []
    except OSError:
        delegated = []
    out = {}
    for controller in ("pids", "memory"):
        v1 = os.path.join(v2, controller)
        if os.path.isfile(os.path.join(v1, "cgroup.procs")) and os.access(v1, os.W_OK):
            out[controller] = v1
        elif controller in delegated:
            out[controller] = v2
    return out


def _cgroup_root() -> Optional[str]:
    """Where the pids cgroups are made (None: nowhere)."""
    return _cgroup_roots().get("pids")


class _ProgramCgroup:
    """The throw-away cgroup(s) of one run: every process of the program joins them before it runs.
    pids: at most `max_pids` processes. memory: all its processes together, and the tmpfs pages
    they write (the private /tmp and /dev/shm, or a tmpfs the program mounts in a user namespace of
    its own: the kernel charges tmpfs pages to the cgroup of the process that wrote them), at most
    `memory_bytes`, swap included (v1 memory.memsw.limit_in_bytes / v2 memory.swap.max = 0); over it
    the kernel's OOM killer kills a process of the cgroup. On cgroup v1 one folder per controller's
    hierarchy, on v2 one folder with both. Only the controllers this machine lets us write are used
    (`controllers`); OSError when none is."""

    def __init__(self, max_pids: int, memory_bytes: int):
        roots = _cgroup_roots()
        if not roots:
            raise OSError("no writable pids or memory cgroup")
        name = f"magrpo-sandbox-{os.getpid()}-{secrets.token_hex(4)}"
        self.paths, self.controllers = [], sorted(roots)
        try:
            for root in dict.fromkeys(roots.values()):
                path = os.path.join(root, name)
                os.mkdir(path)
                self.paths.append(path)
                here = [c for c, r in roots.items() if r == root]
                if "pids" in here:
                    self._write(path, "pids.max", max_pids)
                if "memory" in here and root.endswith("/memory"):  # v1: the swap limit may not be below the other
                    self._write(path, "memory.limit_in_bytes", memory_bytes)
                    if os.path.exists(os.path.join(path, "memory.memsw.limit_in_bytes")):
                        self._write(path, "memory.memsw.limit_in_bytes", memory_bytes)
                elif "memory" in here:
                    self._write(path, "memory.max", memory_bytes)
                    if os.path.exists(os.path.join(path, "memory.swap.max")):
                        self._write(path, "memory.swap.max", 0)
        except OSError:
            self.remove()
            raise

    @staticmethod
    def _write(path: str, name: str, value: int) -> None:
        with open(os.path.join(path, name), "w") as fh:
            fh.write(str(value))

    @classmethod
    def at(cls, path: str) -> "_ProgramCgroup":
        c = cls.__new__(cls)
        c.paths, c.controllers = [path], []
        return c

    @property
    def procs_files(self) -> list[str]:
        return [os.path.join(p, "cgroup.procs") for p in self.paths]

    def kill_all(self) -> None:
        for path in self.paths:
            for _ in range(50):
                try:
                    pids = [int(p) for p in open(os.path.join(path, "cgroup.procs")).read().split()]
                except OSError:
                    break
                if not pids:
                    break
                for p in pids:
                    try:
                        os.kill(p, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                time.sleep(0.01)

    def remove(self) -> None:
        self.kill_all()
        for path in self.paths:
            for _ in range(100):
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


@functools.lru_cache(maxsize=1)
def isolation() -> dict:
    """What `run_program` isolates on this machine (see the table in the module docstring). In
    namespaces mode the properties are those a probe program saw from inside the sandbox, and
    `process_cap` / `memory_limit` those of a cgroup just made and removed: "memory_limit" is "per
    program: memory cgroup ..." (one limit for all of a program's processes and its tmpfs pages),
    "per process only (RLIMIT_AS): ..." (no writable memory cgroup, or the rlimits mode), or "none"
    (macOS, Windows). Set the environment variable MAGRPO_EDU_SANDBOX=rlimits to force the fallback
    (e.g. to test it)."""
    probe = None if os.environ.get("MAGRPO_EDU_SANDBOX", "auto") == "rlimits" else _probe_namespaces()
    ns = probe is not None
    controllers: list[str] = []
    if ns:
        try:
            probe_cgroup = _ProgramCgroup(4, 64 * 2 ** 20)
            controllers = probe_cgroup.controllers
            probe_cgroup.remove()
        except OSError:
            controllers = []
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    linux = sys.platform == "linux"
    return dict(
        mode="linux-namespaces" if ns else "rlimits",
        network=ns and not probe["network"], pid_namespace=ns and probe["pids"] <= 3,
        read_only_filesystem=ns, private_tmp=ns,
        capabilities_dropped=ns and int(probe["caps"], 16) == 0,
        uid_dropped=ns and probe["uid"] == SANDBOX_UID and probe["gid"] == SANDBOX_UID and not probe["groups"],
        host_filesystem_hidden=ns and not probe["host_paths_visible"],
        host_sockets_unreachable=ns and not probe["host_paths_visible"],
        proc_sys_read_only=ns and not probe["proc_sys_writable"],
        private_dev_shm=ns and probe["shm"],
        keyring_isolated=ns and _KEYCTL_NR is not None,
        kill_on_parent_death=("whole sandbox" if ns else "process group" if linux and shutil.which("timeout") else "no"),
        process_cap="pids cgroup" if "pids" in controllers else ("RLIMIT_NPROC" if not root and resource is not None
                                                                 else "none (timeout group kill only)"),
        memory_limit=("per program: memory cgroup (all its processes and tmpfs pages) + RLIMIT_AS per process"
                      if "memory" in controllers else "per process only (RLIMIT_AS): " +
                      ("no writable memory cgroup" if ns else "rlimits mode") if resource is not None and linux else "none"),
        platform=sys.platform,
    )


# --------------------------------------------------------------------------------------------------
# Forge-proof asserts: the parent's side
# --------------------------------------------------------------------------------------------------
_WRAPPERS = frozenset("list tuple set frozenset sorted dict len sum min max any all str repr bool int float abs".split())


_SAFE_NAMES = tuple(
    "abs all any bool bytes chr complex dict divmod enumerate filter float frozenset hash int isinstance len list map "
    "max min ord range repr reversed round set slice sorted str sum tuple type zip ArithmeticError AssertionError "
    "AttributeError Exception IndexError KeyError LookupError OverflowError TypeError ValueError ZeroDivisionError "
    "True False None".split())  # what a host-checked assert may use besides `math` (`range` capped at 10**7 items)
_HOST_NAMES = frozenset(_SAFE_NAMES) | {"math"}


def _bound_names(tree: ast.AST) -> set[str]:
    """Every name the assert itself binds (targets, comprehension/lambda variables, defs, imports)."""
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
    return out


def _is_const(n: ast.AST) -> bool:
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
        n = n.operand
    return isinstance(n, ast.Constant) and isinstance(n.value, (int, str)) or \
        isinstance(n, ast.Slice) and all(p is None or _is_const(p) for p in (n.lower, n.upper, n.step))


class _Shipper(ast.NodeTransformer):
    """Replaces each maximal expression that is an entry-point call, possibly inside single-argument
    builtin wrappers, attribute access, no-argument method calls and constant subscripts, with a
    placeholder name; collects the expressions (they hold no expected value: only the call)."""

    def __init__(self, entry_point: str, bound: set[str]):
        self.entry_point, self.bound, self.shipped = entry_point, bound, []

    def shippable(self, n: ast.AST) -> bool:
        if isinstance(n, ast.Call):
            if isinstance(n.func, ast.Name) and n.func.id == self.entry_point:
                return True
            if isinstance(n.func, ast.Name) and n.func.id in _WRAPPERS and n.func.id not in self.bound \
                    and len(n.args) == 1 and not n.keywords and not isinstance(n.args[0], ast.Starred):
                return self.shippable(n.args[0])
            if isinstance(n.func, ast.Attribute) and not n.args and not n.keywords:
                return self.shippable(n.func.value)
            return False
        if isinstance(n, ast.Attribute):
            return self.shippable(n.value)
        if isinstance(n, ast.Subscript):
            return _is_const(n.slice) and self.shippable(n.value)
        return False

    def visit(self, node):
        if isinstance(node, ast.expr) and self.shippable(node):
            self.shipped.append(node)
            return ast.copy_location(ast.Name(id=f"__shipped_{len(self.shipped) - 1}", ctx=ast.Load()), node)
        return super().visit(node)


@dataclass
class _Plan:
    source: str
    kind: str  # host | sandbox | error
    calls: tuple = ()
    code: Optional[str] = None  # host plans: the assert with its calls replaced by __shipped_J (compiled by the judge)
    error: Optional[str] = None
    message: Optional[str] = None

    def harness_spec(self) -> dict:
        return {"calls": list(self.calls)} if self.kind == "host" else {"source": self.source}


def _plan(source: str, entry_point: Optional[str]) -> _Plan:
    """How one assert is checked: on the host (the sandbox only computes the shipped values), or in
    the sandbox (no entry point given, or an assert the host cannot evaluate alone)."""
    if entry_point is None:
        return _Plan(source, "sandbox")
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
        return _Plan(source, "error", error="SyntaxError", message=f"the assert does not parse: {e}"[:300])
    if any(isinstance(n, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)) for n in ast.walk(tree)):
        return _Plan(source, "sandbox")
    bound = _bound_names(tree)
    shipper = _Shipper(entry_point, bound)
    tree = ast.fix_missing_locations(shipper.visit(tree))
    calls = tuple(ast.unparse(c) for c in shipper.shipped)
    for c in shipper.shipped:
        if any(isinstance(n, ast.Name) and n.id in bound for n in ast.walk(c)):
            return _Plan(source, "sandbox")  # the call needs a name the assert binds
    placeholders = {f"__shipped_{j}" for j in range(len(calls))}
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in bound | placeholders | _HOST_NAMES:
            return _Plan(source, "sandbox")  # the entry point as a value, or a name only the program has
    try:
        code = ast.unparse(tree)
        compile(code, "<assert>", "exec")
    except (SyntaxError, ValueError, RecursionError):
        return _Plan(source, "sandbox")
    return _Plan(source, "host", calls=calls, code=code)


# The judge: trusted code on untrusted input, run OUTSIDE the sandbox as `python -I -S -B -c JUDGE`, in a
# process of its own so that the trainer can bound its time (it is killed at the program's deadline plus
# JUDGE_GRACE_S) and memory (RLIMIT_AS) whatever the lines hold. It reads one header line (JSON: tag,
# limits, safe names, the plans) and then the bytes of the result pipe; it parses each line (strictly,
# no eval), keeps the first line of each assert that carries the run's tag, and writes one short JSON
# line per assert as soon as it is decided: ["load", error, message, line, col] for a load error, then
# [index, status, error, message] ("missing": no line for it). A host plan's values are rebuilt from
# plain builtins (bounded items and depth; a set or dict whose keys mostly share one hash is refused in
# linear time) and its assert is evaluated in a namespace of safe builtins and `math`.
JUDGE = r"""
import _json, builtins, math, sys
class Strict:  # json.loads's settings, without importing json (10 ms of a 20 ms start): no NaN, no Infinity
    strict, object_hook, object_pairs_hook, parse_float, parse_int = True, None, None, float, int
    def parse_constant(name):
        raise ValueError("not JSON: " + name)
SCAN, QUOTE = _json.make_scanner(Strict), _json.encode_basestring_ascii
def loads(raw):
    s = raw.decode("utf-8").strip()
    value, end = SCAN(s, 0)
    if end != len(s):
        raise ValueError("extra data")
    return value
def write(items):
    sys.stdout.write("[" + ", ".join("null" if v is None else str(v) if type(v) is int else QUOTE(v) for v in items) + "]\n")
    sys.stdout.flush()
head = loads(sys.stdin.buffer.readline())
TAG, PLANS, MAX_ITEMS, MAX_DEPTH, MAX_LINE = head["tag"], head["plans"], head["max_items"], head["max_depth"], head["max_line"]
class BadValue(Exception):
    pass
def capped_range(*args):
    r = range(*args)
    if len(r) > 10 ** 7:
        raise ValueError("range too long for an assert")
    return r
SAFE = {n: getattr(builtins, n) for n in head["safe_names"]}
SAFE["range"] = capped_range
def refuse_hash_flood(keys):
    # a set or dict whose keys mostly share a hash costs quadratic time to build and compare (42,000 ints
    # k * (2**61 - 1) took 20 s); counting distinct hashes is linear, and honest values never collide like
    # that (hash(-1) == hash(-2) is the one pair among small ints)
    if len(keys) > 256 and len({hash(k) for k in keys}) < len(keys) // 2:
        raise BadValue("hash flood: %d keys share few hash values" % len(keys))
def decode(x, depth, left):
    left[0] -= 1
    if left[0] < 0 or depth > MAX_DEPTH:
        raise BadValue("too large")
    t = type(x)
    if x is None or t is bool or t is int or t is str:
        return x
    if t is not list or not x or type(x[0]) is not str:
        raise BadValue("malformed")
    tag, rest = x[0], x[1:]
    try:
        if tag == "f" and len(rest) == 1 and type(rest[0]) is str and len(rest[0]) < 40:
            return float(rest[0])
        if tag == "c" and len(rest) == 2 and all(type(p) is str and len(p) < 40 for p in rest):
            return complex(float(rest[0]), float(rest[1]))
        if tag == "y" and len(rest) == 1 and type(rest[0]) is str:
            return bytes.fromhex(rest[0])
        if tag in ("l", "t", "s", "F"):
            items = [decode(e, depth + 1, left) for e in rest]
            if tag in ("s", "F"):
                refuse_hash_flood(items)
            return {"l": list, "t": tuple, "s": set, "F": frozenset}[tag](items)
        if tag == "d" and len(rest) % 2 == 0:
            keys = [decode(k, depth + 1, left) for k in rest[::2]]
            refuse_hash_flood(keys)
            return dict(zip(keys, [decode(v, depth + 1, left) for v in rest[1::2]]))
    except (ValueError, TypeError, OverflowError) as e:  # bad float text, unhashable key, ...
        raise BadValue(str(e)) from None
    raise BadValue("malformed")
def short(v):
    try:
        r = repr(v)
    except Exception:
        return "?"
    return r if len(r) <= 120 else r[:117] + "..."
def text(x, n):
    try:
        return str(x)[:n]
    except Exception:
        return ""
def on_host(plan, d):
    values = d.get("values")
    if values is None:
        status = d.get("status") if d.get("status") in ("failed", "timeout", "skipped", "not_run") else "failed"
        return [status, text(d.get("error") or "BadResult", 100), text(d.get("message") or "", 300)]
    try:
        if type(values) is not list or len(values) != len(plan["calls"]):
            raise BadValue("wrong number of values")
        left = [MAX_ITEMS]
        decoded = [decode(v, 0, left) for v in values]
    except (BadValue, RecursionError) as e:
        return ["failed", "BadResult", ("the sandbox sent an unreadable value (%s)" % e)[:300]]
    ns = {"__builtins__": dict(SAFE), "math": math}
    ns.update({"__shipped_%d" % j: v for j, v in enumerate(decoded)})
    try:
        exec(compile(plan["code"], "<assert>", "exec"), ns)
    except AssertionError as e:
        msg = text(e, 300) if e.args else "; ".join("%s returned %s" % (c, short(v)) for c, v in zip(plan["calls"], decoded))
        return ["failed", "AssertionError", msg[:300]]
    except (Exception, SystemExit) as e:
        return ["failed", type(e).__name__, text(e, 300)]
    return ["passed", None, None]
def in_sandbox(d):
    status = d.get("status") if d.get("status") in ("passed", "failed", "timeout", "skipped", "not_run") else "failed"
    error, message = d.get("error"), d.get("message")
    return [status, None if error is None else text(error, 100), None if message is None else text(message, 300)]
verdicts, load_error = {}, None
for raw in sys.stdin.buffer:
    if len(raw) > MAX_LINE:
        continue
    try:
        d = loads(raw)
    except Exception:  # not JSON (ValueError, StopIteration, ...), too deep (RecursionError), too large
        continue
    if not isinstance(d, dict) or d.get("tag") != TAG:
        continue  # not written by the harness
    if "load_error" in d:
        if load_error is None:
            load_error = ["load", text(d["load_error"], 100), text(d.get("message"), 300),
                          d.get("line") if type(d.get("line")) is int else None, d.get("col") if type(d.get("col")) is int else None]
    elif type(d.get("index")) is int and d["index"] not in verdicts:
        verdicts[d["index"]] = d
if load_error is not None:
    write(load_error)
for i, plan in enumerate(PLANS):
    d = verdicts.get(i)
    write([i] + (["missing", None, None] if d is None else on_host(plan, d) if plan["kind"] == "host" else in_sandbox(d)))
"""
JUDGE_GRACE_S = 1.0  # the judge's time beyond what is left of the program's own time limit


def _start_judge(python: str) -> Optional[subprocess.Popen]:
    """The judge's process, started with the sandbox so its interpreter start overlaps the program's run."""
    cmd = [python, "-I", "-S", "-B", "-c", JUDGE]
    if sys.platform == "linux" and shutil.which("prlimit"):
        cmd = ["prlimit", f"--as={4 * 2 ** 30}", "--core=0", "--"] + cmd
    try:
        return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    except (OSError, subprocess.SubprocessError):
        return None


def _judge(judge: Optional[subprocess.Popen], plans: list, raw: bytes, tag: str, budget_s: float) -> tuple[dict, Optional[dict], bool]:
    """The judge's verdicts {index: [status, error, message]} and load error for the result pipe's bytes
    `raw`, within `budget_s` seconds (then it is killed: what it decided by then counts). Returns also
    whether it ran out of time."""
    if judge is None:  # it could not start: nothing is checked (every assert fails as unchecked)
        return {}, None, False
    head = json.dumps(dict(tag=tag, max_items=MAX_VALUE_ITEMS, max_depth=MAX_VALUE_DEPTH, max_line=MAX_VALUE_CHARS + 1024,
                           safe_names=list(_SAFE_NAMES),
                           plans=[{"kind": p.kind, "calls": list(p.calls), "code": p.code} for p in plans])).encode()
    late = False
    try:
        out, _ = judge.communicate(head + b"\n" + raw, timeout=max(budget_s, 0.05))
    except subprocess.TimeoutExpired:
        late = True
        judge.kill()
        out, _ = judge.communicate()
    except (OSError, ValueError):
        late = True
        judge.kill()
        out = b""
    finally:
        if judge.poll() is None:
            judge.kill()
        judge.wait()
    verdicts, load_error = {}, None
    for line in out.decode("utf-8", "replace").splitlines():
        try:
            v = json.loads(line)
        except ValueError:
            continue  # a line the kill cut short
        if v[0] == "load":
            load_error = {"error": v[1], "message": v[2], "line": v[3], "col": v[4]}
        elif v[1] != "missing":
            verdicts[v[0]] = v[1:]
        else:
            verdicts[v[0]] = None
    return verdicts, load_error, late


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
    """preexec_fn part where util-linux `prlimit` is missing (macOS): runs between fork and exec."""
    for what, value, _ in lim:
        try:
            resource.setrlimit(what, (value, value))
        except (ValueError, OSError):
            pass


def _read_capped(stream, cap: int, sink: list) -> None:
    """Read `stream` to its end into sink = [bytearray, truncated], keeping `cap` bytes. The sink
    fills as data comes, so what arrived is usable even if a stray process keeps the pipe open."""
    kept = sink[0]
    while True:
        chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
        if not chunk:
            break
        room = cap - len(kept)
        if room > 0:
            kept += chunk[:room]
        if len(chunk) > max(room, 0):
            sink[1] = True


def run_program(program: str, asserts: Sequence[str], limits: Optional[SandboxLimits] = None, *,
                entry_point: Optional[str] = None) -> SandboxResult:
    """Run `program` then each assert (separately) in a sandboxed child process; never raises for
    anything the program does. Returns one `AssertResult` per assert.

    With `entry_point` (the function name the asserts call), verdicts are forge-proof: the sandbox
    only computes the values of the entry-point calls and this process evaluates the asserts (see
    the module docstring). Without it, the sandbox decides each verdict (forgeable)."""
    limits = limits or SandboxLimits()
    asserts = list(asserts)
    plans = [_plan(a, entry_point) for a in asserts]
    iso = isolation()
    _cleanup_stale()
    python = os.path.realpath(sys.executable)
    tag = secrets.token_hex(16)
    r_fd, w_fd = os.pipe()
    work = tempfile.mkdtemp(prefix=f"magrpo-sandbox-{os.getpid()}-")
    cgroup = None
    harness = [python, "-I", "-S", "-B", "-u", "-c", HARNESS, f"magrpo-sandbox-owner-{os.getpid()}"]  # who ran it, for `ps`
    if iso["mode"] == "linux-namespaces":
        try:
            cgroup = _ProgramCgroup(limits.max_processes, limits.memory_mb * 2 ** 20)
        except OSError:
            cgroup = None
        cmd = _namespaced(harness, work, limits.max_file_mb, limits.timeout_s)
        home = cwd = "/tmp/work"
        death = signal.SIGKILL  # kills `unshare`, whose --kill-child kills PID 1 and so the namespace
    else:
        home = cwd = work
        death = signal.SIGKILL
        cmd = harness
        if sys.platform == "linux" and shutil.which("timeout"):
            # coreutils `timeout` leads the process group and SIGKILLs all of it when its time is up;
            # SIGALRM (the parent-death signal here) is the signal it takes for "time is up".
            cmd, death = ["timeout", "-s", "KILL", str(int(math.ceil(limits.timeout_s)) + 2)] + harness, signal.SIGALRM
    lim = _rlimits(limits, cap_nproc=hasattr(os, "geteuid") and os.geteuid() != 0)
    if lim and shutil.which("prlimit"):
        cmd = ["prlimit"] + [f"{opt}={value}" for _, value, opt in lim] + ["--"] + cmd
        lim = []
    cmd, pre = _tie_to_trainer(cmd, death, cgroup)
    preexec = functools.partial(_child_setup, pre[0] if pre else None, lim) if (pre or lim) else None
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": home}
    spec = json.dumps(dict(program=program, asserts=[p.harness_spec() for p in plans], fd=w_fd, tag=tag, cwd=cwd,
                           assert_timeout=limits.assert_timeout_s, max_timeouts=limits.max_timeouts,
                           own_group=iso["mode"] == "linux-namespaces",
                           max_items=MAX_VALUE_ITEMS, max_depth=MAX_VALUE_DEPTH, max_chars=MAX_VALUE_CHARS)).encode()
    t0 = time.perf_counter()
    timed_out = False
    out_sink: list = [bytearray(), False]
    res_sink: list = [bytearray(), False]
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=work, env=env,
                                pass_fds=(w_fd,), start_new_session=True, preexec_fn=preexec)
    except (OSError, subprocess.SubprocessError) as exc:
        os.close(r_fd), os.close(w_fd)
        shutil.rmtree(work, ignore_errors=True)
        if cgroup is not None:
            cgroup.remove()
        return SandboxResult([AssertResult(i, a, False, "not_run", "SandboxError", str(exc)) for i, a in enumerate(asserts)],
                             mode=iso["mode"])
    os.close(w_fd)
    judge = _start_judge(python)
    reader = threading.Thread(target=_read_capped, args=(proc.stdout, limits.max_output_bytes, out_sink), daemon=True)
    reader.start()

    def read_results():
        with os.fdopen(r_fd, "rb") as fh:
            _read_capped(fh, 4 * 2 ** 20 + len(asserts) * (MAX_VALUE_CHARS + 1024), res_sink)  # a flood beyond is dropped

    results_thread = threading.Thread(target=read_results, daemon=True)
    results_thread.start()
    try:
        proc.stdin.write(spec)
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    waiter = threading.Thread(target=proc.wait, daemon=True)  # a blocking wait: no polling delay
    waiter.start()
    try:
        waiter.join(timeout=limits.timeout_s)
        timed_out = waiter.is_alive()
    finally:
        _kill_everything(proc, cgroup)
        until = time.monotonic() + 1  # EOF at once unless a stray (rlimits mode) holds a pipe open
        reader.join(timeout=max(0.0, until - time.monotonic()))
        results_thread.join(timeout=max(0.0, until - time.monotonic()))
        if cgroup is not None:
            cgroup.remove()
        shutil.rmtree(work, ignore_errors=True)
    budget = limits.timeout_s - (time.perf_counter() - t0) + JUDGE_GRACE_S  # the judge's time counts in the program's
    verdicts, load_error, late = _judge(judge, plans, bytes(res_sink[0]), tag, budget)
    seconds = time.perf_counter() - t0
    output = (bytes(out_sink[0]), out_sink[1])
    return _collect(plans, verdicts, load_error, late, output, proc.returncode, timed_out, seconds, iso["mode"])


def _kill_everything(proc, cgroup) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if cgroup is not None:
        cgroup.kill_all()
    try:
        proc.wait(timeout=1)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _collect(plans, verdicts, load_error, judge_late, out_sink, code, timed_out, seconds, mode) -> SandboxResult:
    """The run's result from the judge's verdicts (see JUDGE) and what the parent saw of the process."""
    results = []
    for i, plan in enumerate(plans):
        by = "host" if plan.kind in ("host", "error") else "sandbox"
        result = functools.partial(AssertResult, i, plan.source, checked_by=by)
        if plan.kind == "error":
            results.append(result(False, "failed", plan.error, plan.message))
        elif load_error is not None:
            results.append(result(False, "not_run", load_error["error"], load_error["message"]))
        elif i not in verdicts:  # the judge was killed (or died) before it decided this one
            results.append(result(False, "timeout", "Timeout", "checking the returned values exceeded the run's time limit")
                           if judge_late else result(False, "failed", "BadResult", "the returned values could not be checked"))
        elif verdicts[i] is None:  # no line from the sandbox for this assert
            why = "the run hit its total timeout" if timed_out else f"the program ended the process (exit code {code})"
            results.append(result(False, "timeout" if timed_out else "not_run", "Timeout" if timed_out else "ProcessExited", why))
        else:
            status, error, message = verdicts[i]
            results.append(result(status == "passed", status, error, message))
    output, truncated = out_sink
    return SandboxResult(results, load_error, timed_out, code, output.decode("utf-8", "replace"), truncated, seconds, mode)


def default_workers() -> int:
    """Sandbox processes to run at once: this machine's cores, divided among the training processes
    torchrun started on it (LOCAL_WORLD_SIZE), so a data-parallel run does not oversubscribe them."""
    try:
        local = max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
    except ValueError:
        local = 1
    return max(1, (os.cpu_count() or 1) // local)


def run_many(jobs: Sequence[tuple], limits: Optional[SandboxLimits] = None,
             workers: Optional[int] = None) -> list[SandboxResult]:
    """Run many jobs in parallel across the cores; results in input order. A job is
    (program, asserts) or (program, asserts, entry_point): see `run_program`. Default workers:
    `default_workers()` (the cores, shared among the processes of a data-parallel run)."""
    workers = workers or default_workers()

    def one(job):
        return run_program(job[0], job[1], limits, entry_point=job[2] if len(job) > 2 else None)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, jobs))
