"""The harness that runs one program: `run_program`, `run_many`, their limits and results.

The parent (`run_program`) starts the sandbox (`isolation` builds its command), sends the program
and the asserts to the harness inside it (`HARNESS`, inside.py), reads what comes back with caps, kills
everything when the run ends (`cleanup`) and has the judge (`forgeproof`) decide the verdicts.
"""
from __future__ import annotations

import functools
import json
import math
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
from typing import Optional, Sequence

from .cleanup import _cleanup_stale, _kill_everything, _tie_to_trainer
from .inside import HARNESS
from .limits import AssertResult, SandboxLimits, SandboxResult
from .forgeproof import MAX_VALUE_CHARS, MAX_VALUE_DEPTH, MAX_VALUE_ITEMS, _judge, _plan, _start_judge, JUDGE_GRACE_S
from .cgroups import _ProgramCgroup
from .isolation import SandboxError, _namespaced, isolation, resource
from .sanitise import clean
from .seccomp import _filter_hex
from .tree import remove_folder_by_fd, remove_tree


# --------------------------------------------------------------------------------------------------
# Running one program
# --------------------------------------------------------------------------------------------------
class _Active:
    """How many runs this process has in flight (run_many runs several at once)."""

    def __init__(self):
        self.n, self.lock = 0, threading.Lock()

    def enter(self) -> int:
        with self.lock:
            self.n += 1
            return self.n

    def leave(self) -> None:
        with self.lock:
            self.n -= 1


_ACTIVE = _Active()
MACHINERY_TASKS = 8  # tasks a run adds besides its program's: timeout, the harness, the judge and its shell, 2 threads


def _rlimits(limits: SandboxLimits, cap_nproc: bool, runs: int = 1) -> list[tuple[int, int, str]]:
    """(resource, value, prlimit option) of every limit applied to the child. RLIMIT_NPROC counts the uid's tasks,
    so `runs` runs in flight at once (run_many) each get room for every one's program and machinery."""
    if resource is None:
        return []
    lim = [(resource.RLIMIT_CPU, limits.cpu_s, "--cpu"), (resource.RLIMIT_AS, limits.memory_mb * 2 ** 20, "--as"),
           (resource.RLIMIT_NOFILE, limits.max_open_files, "--nofile"),
           (resource.RLIMIT_FSIZE, limits.max_file_mb * 2 ** 20, "--fsize"), (resource.RLIMIT_CORE, 0, "--core")]
    if cap_nproc:
        lim.append((resource.RLIMIT_NPROC, _user_tasks() + limits.max_processes +
                    (limits.max_processes + MACHINERY_TASKS) * (runs - 1), "--nproc"))  # one run alone: as before
    return lim


def _user_tasks() -> int:
    """How many tasks the kernel already counts against this user's RLIMIT_NPROC.

    RLIMIT_NPROC is not a per-process budget: fork fails once the REAL uid owns that many tasks in all
    (every thread of every process, the trainer's torch threads, a Jupyter server and its kernels
    included). Without uid switching (the non-root fallback) the program runs as that user, so a bare
    `max_processes` would leave it nothing on Binder or a desktop session; the cap is "what the user
    runs now + max_processes". Linux: the Threads of every /proc entry whose real uid is ours (a
    hidepid /proc shows exactly those); elsewhere `ps -U` (processes, which is what BSD counts)."""
    uid = os.getuid()
    if sys.platform == "linux" and os.path.isdir("/proc"):
        total = 0
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/status", "rb") as f:
                    status = f.read()
            except OSError:  # gone meanwhile, or not ours to read
                continue
            real = threads = None
            for line in status.splitlines():
                if line.startswith(b"Uid:"):
                    real = int(line.split()[1])
                elif line.startswith(b"Threads:"):
                    threads = int(line.split()[1])
            if real == uid:
                total += threads or 1
        return total
    try:
        out = subprocess.run(["ps", "-U", str(uid), "-o", "pid="], capture_output=True, text=True, timeout=10).stdout
        return len(out.split())
    except (OSError, subprocess.SubprocessError):
        return 0


def _set_rlimits(lim) -> None:
    """preexec_fn part where util-linux `prlimit` is missing (macOS): runs between fork and exec."""
    for what, value, _ in lim:
        try:
            resource.setrlimit(what, (value, value))
        except (ValueError, OSError):
            pass

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


_DUMPABLE_SET: list = []


def _not_dumpable_without_landlock(iso: dict) -> None:
    """rlimits mode where the kernel has no Landlock (each program's own domain, see processes.py, is what keeps
    it from reading /proc/<trainer>/environ and mem): make the trainer process itself not dumpable
    (PR_SET_DUMPABLE 0, once): its /proc files are then root's, unreadable to a program of the same uid that is
    not root (root, with CAP_SYS_PTRACE, still reads them). Side effect, on this process only: no core dump, and
    debuggers and profilers of the same user (gdb, py-spy) cannot attach to it."""
    if _DUMPABLE_SET or iso.get("landlock_abi") or sys.platform != "linux":
        return
    _DUMPABLE_SET.append(True)
    try:
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def run_program(program: str, asserts: Sequence[str], limits: Optional[SandboxLimits] = None, *,
                entry_point: Optional[str] = None) -> SandboxResult:
    """Run `program` then each assert (separately) in a sandboxed child process; never raises for
    anything the program does. Returns one `AssertResult` per assert.

    With `entry_point` (the function name the asserts call), verdicts are forge-proof: the sandbox
    only computes the values of the entry-point calls and this process evaluates the asserts (see
    the module docstring). Without it, the sandbox decides each verdict (forgeable).

    Where another program may signal this one's sandbox (the rlimits mode without Landlock's signal scope,
    ABI 6: the same uid can kill the same uid), a run that a signal ended (its harness or an assert's
    process killed, or it never started) is run once more; if that run ends the same way, a canary (a
    trivial correct program) is run, and if the canary is killed too, SandboxError: a process outside the
    run kills its sandboxes. So a sample that kills its siblings' sandboxes never lowers their reward
    silently (the rerun runs when the killer's run is over); a program that kills itself costs two runs
    more and keeps its own result."""
    if not _signals_reach_other_runs(isolation()):
        return _run_once(program, asserts, limits, entry_point)
    first = _signalled_or_error(program, asserts, limits, entry_point)
    if first is not None and not _ended_by_a_signal(first):
        return first
    again = _signalled_or_error(program, asserts, limits, entry_point)
    if again is not None and not _ended_by_a_signal(again):
        return again
    canary = _signalled_or_error(CANARY[0], CANARY[1], limits, "f")
    if canary is None or _ended_by_a_signal(canary) or canary.passed != 1:
        raise SandboxError("a process outside this run kills its sandboxes (a correct canary program was killed "
                           "too): nothing was learned about the program. In the rlimits mode without Landlock's "
                           "signal scope (Linux 6.12+) a process left by an earlier program of the same user can "
                           "kill sandboxes; end it (see docs/sandbox.md).")
    if again is None:
        return _run_once(program, asserts, limits, entry_point)  # raises its SandboxError again, if it does
    return again


CANARY = ("def f():\n    return 1\n", ["assert f() == 1"])  # a trivial correct program: ends by no signal of its own


def _signalled_or_error(program, asserts, limits, entry_point) -> Optional[SandboxResult]:
    """A run's result; None where it raised SandboxError (a sandbox killed before it started looks like that)."""
    try:
        return _run_once(program, asserts, limits, entry_point)
    except SandboxError:
        return None


def _ended_by_a_signal(r: SandboxResult) -> bool:
    """Did a signal end this run (not its own time limits): the sandbox's first process, or an assert's process?"""
    if r.timed_out:
        return False
    if r.exit_code is not None and (r.exit_code < 0 or r.exit_code >= 128):  # `timeout` exits 128 + the signal
        return True
    return any(a.status == "not_run" and (a.error == "ProcessExited" and "signal" in (a.message or "") or
                                          a.error == "SandboxBusy") for a in r.asserts)


def _run_once(program: str, asserts: Sequence[str], limits: Optional[SandboxLimits] = None,
              entry_point: Optional[str] = None) -> SandboxResult:
    """One run of `program` (see `run_program`), counted in `_ACTIVE` while it runs."""
    _ACTIVE.enter()
    try:
        return _run_body(program, asserts, limits, entry_point)
    finally:
        _ACTIVE.leave()


def _run_body(program: str, asserts: Sequence[str], limits: Optional[SandboxLimits] = None,
              entry_point: Optional[str] = None) -> SandboxResult:
    limits = limits or SandboxLimits()
    asserts = list(asserts)
    plans = [_plan(a, entry_point) for a in asserts]
    iso = isolation()
    _cleanup_stale()
    python = os.path.realpath(sys.executable)
    tag = secrets.token_hex(16)
    try:
        work = tempfile.mkdtemp(prefix=f"magrpo-sandbox-{os.getpid()}-")
    except OSError as e:
        raise SandboxError(f"the sandbox could not make its temporary folder in {tempfile.gettempdir()}: {e}") from e
    try:  # the folder as made: removed through this descriptor, whatever a program puts at its path
        work_fd = os.open(work, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        os.rmdir(work)
        raise SandboxError(f"the sandbox could not open its temporary folder {work}: {e}") from e
    rlimits = iso["mode"] == "rlimits"
    if rlimits:
        _not_dumpable_without_landlock(iso)
    cgroup = None
    harness = [python, "-I", "-S", "-B", "-u", "-c", HARNESS, f"magrpo-sandbox-owner-{os.getpid()}"]  # who ran it, for `ps`
    if iso["mode"] == "linux-namespaces":
        try:
            cgroup = _ProgramCgroup(limits.max_processes, limits.memory_mb * 2 ** 20, cpus=limits.cpus)
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
    lim = _rlimits(limits, cap_nproc=hasattr(os, "geteuid") and os.geteuid() != 0, runs=_ACTIVE.n)
    if lim and shutil.which("prlimit"):
        cmd = ["prlimit"] + [f"{opt}={value}" for _, value, opt in lim] + ["--"] + cmd
        lim = []
    cmd, pre = _tie_to_trainer(cmd, death, cgroup)
    preexec = functools.partial(_child_setup, pre[0] if pre else None, lim) if (pre or lim) else None
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": home}
    r_fd = w_fd = None
    try:
        r_fd, w_fd = os.pipe()
    except OSError as e:
        _undo(work, cgroup, work_fd)
        raise SandboxError(f"the sandbox could not make its result pipe: {e}") from e
    spec = json.dumps(dict(program=program, asserts=[p.harness_spec() for p in plans], fd=w_fd, tag=tag, cwd=cwd,
                           assert_timeout=limits.assert_timeout_s, max_timeouts=limits.max_timeouts,
                           own_group=iso["mode"] == "linux-namespaces",
                           wipe=["/tmp", "/dev/shm"] if iso["mode"] == "linux-namespaces" else [cwd],
                           seccomp_filter=_filter_hex() if iso["mode"] == "rlimits" else None,
                           landlock=iso["landlock_abi"] if rlimits else 0, subreaper=rlimits,
                           drop_caps=rlimits and sys.platform == "linux" and os.geteuid() == 0,
                           max_items=MAX_VALUE_ITEMS, max_depth=MAX_VALUE_DEPTH, max_chars=MAX_VALUE_CHARS)).encode()
    t0 = time.perf_counter()
    timed_out = False
    out_sink: list = [bytearray(), False]
    res_sink: list = [bytearray(), False]
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=work, env=env,
                                pass_fds=(w_fd,), start_new_session=True, preexec_fn=preexec)
    except (OSError, subprocess.SubprocessError) as e:
        os.close(r_fd), os.close(w_fd)
        _undo(work, cgroup, work_fd)
        raise SandboxError(f"the sandbox could not start: {e}") from e
    os.close(w_fd)
    judge = None
    pump = _Pump([(r_fd, 4 * 2 ** 20 + len(asserts) * (MAX_VALUE_CHARS + 1024), res_sink),  # a flood beyond is dropped
                  (proc.stdout.fileno(), limits.max_output_bytes, out_sink)])
    try:
        judge = _start_judge(python)
        try:
            if judge is None:
                raise SandboxError("the sandbox's judge (the process that checks the returned values) could not start")
            pump.start()
        except (RuntimeError, SandboxError) as e:  # RuntimeError: no thread could be started
            _kill_everything(proc, cgroup, rlimits)
            raise e if isinstance(e, SandboxError) else SandboxError(f"the sandbox could not start a thread: {e}") from e
        def feed():  # in a thread: a harness stopped before it read its spec (SIGSTOP) cannot stall this one
            try:
                proc.stdin.write(spec)
                proc.stdin.close()
            except (BrokenPipeError, OSError, ValueError):
                pass

        waiter = threading.Thread(target=proc.wait, daemon=True)  # a blocking wait: no polling delay
        feeder = threading.Thread(target=feed, daemon=True)
        try:
            feeder.start()
            waiter.start()
        except RuntimeError as e:
            _kill_everything(proc, cgroup, rlimits)
            raise SandboxError(f"the sandbox could not start a thread: {e}") from e
        try:
            waiter.join(timeout=limits.timeout_s)
            timed_out = waiter.is_alive()
        finally:
            _kill_everything(proc, cgroup, rlimits)
            feeder.join(timeout=1)
            pump.stop()  # what is waiting in the pipes is read; a survivor holding them is never waited for
        raw = bytes(res_sink[0])
        started = (json.dumps({"started": 1, "tag": tag}) + "\n").encode()
        if not raw.startswith(started):  # the harness wrote this before any program code ran: the sandbox never started
            tail = clean(bytes(out_sink[0]).decode("utf-8", "replace").strip()[-500:], 500, lines=True)
            raise SandboxError(f"the sandbox did not start ({'no start within the run time limit of %ss' % limits.timeout_s if timed_out else 'exit code %s' % proc.returncode}); "
                               f"no program code ran. What it printed: {tail or '(nothing)'}")
        budget = limits.timeout_s - (time.perf_counter() - t0) + JUDGE_GRACE_S  # the judge's time counts in the program's
        verdicts, load_error, late, judge_killed = _judge(judge, plans, raw[len(started):], tag, budget)
    finally:  # whatever happened: no judge, pipe, thread, process, cgroup or folder of this run is left
        if judge is not None and judge.poll() is None:
            judge.kill()
        if judge is not None:
            judge.wait()
            for stream in (judge.stdin, judge.stdout):
                try:
                    stream.close()
                except (OSError, ValueError):
                    pass
        pump.close()
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except (OSError, ValueError):
                pass
        if cgroup is not None:
            cgroup.remove()
        remove_folder_by_fd(work, work_fd)
        os.close(work_fd)
        if rlimits:  # a working folder the program renamed (work + anything: the name is this run's alone)
            _remove_renamed(work)
    seconds = time.perf_counter() - t0
    output = (bytes(out_sink[0]), out_sink[1])
    return _collect(plans, verdicts, load_error, late, output, proc.returncode, timed_out, seconds, iso["mode"],
                    judge_killed)


def _remove_renamed(work: str) -> None:
    """Remove what sits beside `work` under a name that starts with its own (a program that moved its working
    folder away, as `work.moved`, before planting a symlink at its path). A folder it renamed to any other name is
    left: in the rlimits mode it may write wherever its user may anyway (docs/sandbox.md)."""
    parent, base = os.path.split(work)
    try:
        with os.scandir(parent) as it:
            names = [e.name for e in it if e.name.startswith(base) and e.name != base]
    except OSError:
        return
    for name in names:
        remove_tree(os.path.join(parent, name))


class _Pump:
    """Reads the run's pipes (the result pipe, the output) in one thread, each up to its cap: [fd, cap, sink]
    with sink = [bytearray, truncated]. A flood beyond a cap is never read (the writer's next write fails with
    EPIPE once the pipe is closed). `stop()` (the run's processes are dead) reads what is waiting and ends,
    without waiting for an end of file: a process that escaped the run (rlimits mode) and keeps a pipe open
    costs no thread, no descriptor and no waiting. `close()` closes the read ends (the result pipe's; the
    output's is closed with its file object)."""

    DRAIN_S = 0.5  # at most this long reading what is waiting after stop()

    def __init__(self, streams):
        self.streams = [list(s) for s in streams]
        self.wake_r, self.wake_w = os.pipe()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        import selectors

        sel = selectors.DefaultSelector()
        live = {}
        try:
            for fd, cap, sink in self.streams:
                os.set_blocking(fd, False)
                sel.register(fd, selectors.EVENT_READ)
                live[fd] = (cap, sink)
            sel.register(self.wake_r, selectors.EVENT_READ)
            until = None
            while live:
                events = sel.select(timeout=None if until is None else 0)
                if until is not None and (not events or time.monotonic() > until):
                    break
                for key, _ in events:
                    if key.fd == self.wake_r:
                        until = time.monotonic() + self.DRAIN_S
                        sel.unregister(self.wake_r)
                        continue
                    cap, sink = live[key.fd]
                    kept = sink[0]
                    try:
                        chunk = os.read(key.fd, min(65536, cap - len(kept) + 1))  # one byte more tells a flood from a fit
                    except BlockingIOError:
                        continue
                    except OSError:
                        chunk = b""
                    room = cap - len(kept)
                    kept += chunk[:room]
                    if len(chunk) > room:
                        sink[1] = True
                    if not chunk or len(chunk) > room:
                        sel.unregister(key.fd)
                        del live[key.fd]
        except (OSError, ValueError):
            pass
        finally:
            sel.close()

    def stop(self) -> None:
        try:
            os.write(self.wake_w, b"x")
        except OSError:
            pass
        if self.thread.is_alive() or self.thread.ident is not None:
            self.thread.join(timeout=self.DRAIN_S + 1)

    def close(self) -> None:
        if self.thread.ident is not None and self.thread.is_alive():
            self.stop()
        for fd in (self.wake_r, self.wake_w, self.streams[0][0]):
            try:
                os.close(fd)
            except OSError:
                pass


def _undo(work: str, cgroup, work_fd: int) -> None:
    """Remove what a run made before its sandbox could start."""
    remove_folder_by_fd(work, work_fd)
    os.close(work_fd)
    if cgroup is not None:
        cgroup.remove()


def _collect(plans, verdicts, load_error, judge_late, out_sink, code, timed_out, seconds, mode,
             judge_killed=False) -> SandboxResult:
    """The run's result from the judge's verdicts (see JUDGE) and what the parent saw of the process."""
    if load_error is not None:
        load_error = dict(load_error, error=clean(load_error["error"], MAX_ERROR_CHARS),
                          message=clean(load_error["message"], MAX_MESSAGE_CHARS))
    results = []
    for i, plan in enumerate(plans):
        by = "host" if plan.kind in ("host", "error") else "sandbox"
        result = functools.partial(AssertResult, i, plan.source, checked_by=by)
        if plan.kind == "error":
            results.append(result(False, "failed", plan.error, plan.message))
        elif load_error is not None:
            results.append(result(False, "not_run", load_error["error"], load_error["message"]))
        elif i not in verdicts and judge_killed:  # a signal this process did not send: run_program may run it again
            results.append(result(False, "not_run", "SandboxBusy", "the judge was killed before it decided this assert"))
        elif i not in verdicts:  # the judge was killed (or died) before it decided this one
            results.append(result(False, "timeout", "Timeout", "checking the returned values exceeded the run's time limit")
                           if judge_late else result(False, "failed", "BadResult", "the returned values could not be checked"))
        elif verdicts[i] is None:  # no line from the sandbox for this assert
            why = "the run hit its total timeout" if timed_out else f"the program ended the process (exit code {code})"
            results.append(result(False, "timeout" if timed_out else "not_run", "Timeout" if timed_out else "ProcessExited", why))
        else:
            status, error, message = verdicts[i]
            results.append(result(status == "passed", status, None if error is None else clean(error, MAX_ERROR_CHARS),
                                  None if message is None else clean(message, MAX_MESSAGE_CHARS)))
    output, truncated = out_sink
    output = clean(output.decode("utf-8", "replace"), len(output), lines=True)
    return SandboxResult(results, load_error, timed_out, code, output, truncated, seconds, mode)


MAX_ERROR_CHARS, MAX_MESSAGE_CHARS = 100, 300  # an assert's error (an exception's class name) and message, as the
#                                                judge sends them; `sanitise.clean` keeps them printable and bounded


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
    `default_workers()` (the cores, shared among the processes of a data-parallel run).

    Where programs may signal each other's sandboxes (`_signals_reach_other_runs`), a run a signal ended is run
    again only after the whole batch, one at a time (through `run_program`: again, then the canary), so a
    sample that kills its siblings' sandboxes has finished before they run again."""
    workers = workers or default_workers()
    entry = lambda job: job[2] if len(job) > 2 else None  # noqa: E731

    if not _signals_reach_other_runs(isolation()):
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(lambda job: _run_once(job[0], job[1], limits, entry(job)), jobs))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        first = list(pool.map(lambda job: _signalled_or_error(job[0], job[1], limits, entry(job)), jobs))
    return [r if r is not None and not _ended_by_a_signal(r) else run_program(job[0], job[1], limits, entry_point=entry(job))
            for job, r in zip(jobs, first)]


def _signals_reach_other_runs(iso: dict) -> bool:
    """Can a program signal processes of other runs (the rlimits mode without Landlock's signal scope, ABI 6)?"""
    return iso["mode"] == "rlimits" and iso.get("landlock_abi", 0) < 6

