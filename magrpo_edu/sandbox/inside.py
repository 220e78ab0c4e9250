"""The code that runs INSIDE the sandbox: `HARNESS`, the one Python source the sandboxed interpreter is given
(`python -I -S -c HARNESS`; the package's files are not there). The parent side is harness.py.

It is built from the pieces the parent shares with it as source text: the seccomp filter (seccomp.py), the folder
emptier (tree.py), Landlock and the process-tree killer (processes.py), then the harness's own body below.
"""
from __future__ import annotations

from .processes import LANDLOCK, PROCESS_TREE
from .seccomp import REFUSE_SYSCALLS
from .tree import TREE

# The harness runs INSIDE the sandbox, as `python -I -S -c HARNESS` (the package's files are not there). It reads one JSON object from
# stdin, compiles the program, then for each assert forks a fresh process (its own process group)
# that executes the program in fresh globals (with a private copy of the builtins) and then either
# evaluates the shipped expressions and writes their values (forge-proof mode) or runs the assert
# itself and writes its verdict (legacy mode), one line on the result pipe. The harness's process
# runs no program code: it times each assert's process (SIGKILL to its group after
# `assert_timeout`; a program may SIGSTOP this process, which stops that timer but never the run's total
# timeout, enforced from outside), writes a line of its own when that process timed out or died without one
# (the parent keeps the first line of each assert), and before the next assert kills what the
# program left (namespaces mode; rlimits mode: every process below it, a child subreaper, `PROCESS_TREE`) and
# empties the folders in spec["wipe"] through the descriptors it opened at the start (`TREE`: no symlink is
# followed). It is not dumpable (its /proc files are closed to its programs). In rlimits mode it first
# installs the sandbox's seccomp filter (REFUSE_SYSCALLS, see isolation.py), and each assert's process enters a
# Landlock domain of its own and, as root, drops every capability before any program code (`LANDLOCK`).
HARNESS_BODY = r'''
import sys, os, json, signal, builtins, time
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
    if spec.get("seccomp_filter"):  # rlimits mode (namespaces mode: SETUP installed it)
        try:
            refuse_syscalls(spec["seccomp_filter"])
        except OSError as e:  # no "started" line: the parent raises SandboxError with this text
            sys.stderr.write("the harness could not install the seccomp filter: %s\n" % e)
            return
    try:  # not dumpable: no process of the program (same uid) may open /proc/<harness>/mem, environ or fd
        import ctypes
        _prctl = ctypes.CDLL(None).prctl
        _prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0; each assert's process sets it back to 1 for itself
    except Exception:
        _prctl = None
    landlock = spec.get("landlock") or 0  # rlimits mode: each assert's process in a Landlock domain of its own
    drop_caps = spec.get("drop_caps")  # rlimits mode as root: each assert's process without capabilities
    # (isolation() checked once that this kernel makes the domain and drops capabilities: `_landlock`; an assert's
    # process that fails to ends before any program code, ProcessExited)
    reaper = spec.get("subreaper") and _prctl is not None and _prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    _O = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    folders = []  # (path, fd, (dev, ino)) of the folders emptied between asserts, opened before any program code
    for path in spec["wipe"]:
        try:
            wfd = os.open(path, _O)
            st = os.fstat(wfd)
            folders.append([path, wfd, (st.st_dev, st.st_ino)])
        except OSError:
            pass
    if spec.get("cwd"):
        try:
            os.chdir(spec["cwd"])
        except OSError:
            pass
    fd, tag, per, limit = spec["fd"], spec["tag"], spec["assert_timeout"], spec["max_timeouts"]
    os.set_inheritable(fd, False)  # the program's own children do not get the result pipe
    _os_write(fd, (_dumps({"started": 1, "tag": tag}) + "\n").encode())  # before any program code: the sandbox runs
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
    def fresh_folders():  # after an assert: its processes gone, its files gone, the working folder back
        if own_group:
            try:
                _kill(-1, _KILL)  # every process of this PID namespace this user may signal: the program's
            except OSError:
                pass
        for folder in folders:  # emptied through the descriptor opened at the start: a symlink or another
            path, wfd, ident = folder  # folder planted at the path is never followed (see tree.py)
            empty_folder(wfd)
            try:
                st = os.lstat(path)
                same = (st.st_dev, st.st_ino) == ident
            except OSError:
                st, same = None, False
            if not same:  # the program removed, moved or replaced the folder: a fresh one at the path
                try:
                    if st is not None and not (st.st_mode & 0o170000 == 0o040000):
                        os.unlink(path)  # a symlink or a file: removed, never followed
                    elif st is not None:
                        pfd = os.open(path, _O)
                        try:
                            empty_folder(pfd)
                        finally:
                            os.close(pfd)
                        os.rmdir(path)
                    os.mkdir(path, 0o700)
                    nfd = os.open(path, _O)
                    nst = os.fstat(nfd)
                    os.close(wfd)
                    folder[1], folder[2] = nfd, (nst.st_dev, nst.st_ino)
                except OSError:
                    pass
        for path, wfd, _ in folders:
            if path == spec.get("cwd"):
                try:
                    os.fchdir(wfd)
                except OSError:
                    pass
                break
        else:  # namespaces mode: the working folder is inside the emptied /tmp, made again
            try:
                os.mkdir(spec["cwd"], 0o700)
            except OSError:
                pass
            try:
                cfd = os.open(spec["cwd"], _O)
                os.fchdir(cfd)
                os.close(cfd)
            except OSError:
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
    _signal(_ALRM, on_alarm)  # this process times each assert's process and kills it (SIGSTOP to it stops that timer)
    timeouts = 0
    for i, test in _enumerate(tests):
        if timeouts >= limit:
            emit({"index": i, "status": "skipped", "error": "TooManyTimeouts", "message": "earlier asserts timed out"})
            continue
        pid = None
        for _ in range(40):  # RLIMIT_NPROC is the uid's (rlimits mode): a run beside this one may hold it a moment
            try:
                pid = _fork()
                break
            except OSError:
                time.sleep(0.05)
        if pid is None:  # the trainer runs this program again (see run_program): never a silently lower score
            emit({"index": i, "status": "not_run", "error": "SandboxBusy", "message": "no process could be started"})
            continue
        if pid == 0:  # the assert's process: nothing it does reaches the next assert's process
            try:
                for _, wfd, _ in folders:
                    os.close(wfd)
                if _prctl is not None:
                    _prctl(4, 1, 0, 0, 0)
                if own_group:
                    _setpgid(0, 0)
                try:
                    if landlock:
                        landlock_self(landlock)
                    if drop_caps:  # root: uid 0 without any capability (CAP_SYS_PTRACE reads other processes, ...)
                        drop_capabilities()
                except BaseException:
                    _exit(71)  # never program code with less isolation than isolation() promised
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
        if reaper:  # every process the program left (a setsid double fork included: it is this process's now)
            kill_descendants(os.getpid(), reap=True)
        if i + 1 < _len(tests):
            fresh_folders()
_main()
'''
HARNESS = REFUSE_SYSCALLS + TREE + LANDLOCK + PROCESS_TREE + HARNESS_BODY
