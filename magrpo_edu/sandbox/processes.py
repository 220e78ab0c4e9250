"""What keeps a program away from other processes in the rlimits mode, where it runs as the trainer's own user
(namespaces mode has its PID namespace and uid 65534 instead):

  * `LANDLOCK` (`landlock_self`): each assert's process, before any program code, enters a Landlock domain of
    its own (Linux 5.13+ with the Landlock LSM on; `landlock_abi()` says which version). A process in a
    domain cannot ptrace, nor open /proc/<pid>/environ, mem, maps or fd of, any process outside it (the
    kernel's ptrace access check, whatever the uid, root included), so the trainer's environment (an
    HF_TOKEN), its memory, the harness, the judge and every other run are unreadable to it. From ABI 6
    (Linux 6.12) its signals (kill, SIGSTOP) and its abstract Unix sockets reach only processes of its own
    domain too: a program cannot kill its harness, the trainer, a sibling's sandbox or a later run.
  * `PROCESS_TREE` (`descendants`, `kill_descendants`): the harness is a child subreaper
    (PR_SET_CHILD_SUBREAPER), so a program's orphans (a setsid double-forked daemon) become its children
    instead of init's; after every assert it SIGKILLs every process below it until none is left. The
    trainer does the same from outside at the end of a run (`kill_tree`).
Both are text the harness runs (`exec` here, so the trainer uses the same code)."""
from __future__ import annotations

LANDLOCK = r'''
LANDLOCK_SYSCALLS = (444, 445, 446)  # create_ruleset, add_rule, restrict_self: the same on every architecture
def landlock_abi():
    """The Landlock ABI version this kernel offers (0: none)."""
    import ctypes
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        v = libc.syscall(ctypes.c_long(444), None, ctypes.c_size_t(0), ctypes.c_uint32(1))  # ..._VERSION
    except Exception:
        return 0
    return v if v > 0 else 0
def landlock_self(abi):
    """This process (and what it starts) in a new Landlock domain: no ptrace or /proc access to any process
    outside it; from ABI 6 no signal and no abstract Unix socket outside it either. Its filesystem rights
    are those it had, except making device nodes (a right it never needs). Needs no_new_privs (set by the
    seccomp filter) or CAP_SYS_ADMIN. OSError where the kernel refuses."""
    import ctypes, os
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(38, ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))  # PR_SET_NO_NEW_PRIVS
    class Attr(ctypes.Structure):  # struct landlock_ruleset_attr
        _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]
    attr = Attr((1 << 6) | (1 << 11), 0, 3 if abi >= 6 else 0)  # MAKE_CHAR | MAKE_BLOCK; SCOPE_SIGNAL | ABSTRACT_UNIX
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    fd = libc.syscall(ctypes.c_long(444), ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        if libc.syscall(ctypes.c_long(446), ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(fd)
def drop_capabilities():
    """No capability left to this process nor to what it execs (the bounding set emptied, then the effective,
    permitted and inheritable sets): root in the rlimits mode keeps uid 0 but not CAP_SYS_PTRACE, CAP_KILL,
    CAP_SYS_ADMIN, ... (with them a root program read /proc/<trainer>/environ despite Landlock). OSError where
    the kernel refuses."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(64):
        if libc.prctl(24, ctypes.c_ulong(cap), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:  # CAPBSET_DROP
            if ctypes.get_errno() == 22:  # EINVAL: past the last capability this kernel knows
                break
            raise OSError(ctypes.get_errno(), "PR_CAPBSET_DROP")
    class Head(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]
    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]
    if libc.capset(ctypes.byref(Head(0x20080522, 0)), (Data * 2)()) != 0:  # _LINUX_CAPABILITY_VERSION_3: all zero
        raise OSError(ctypes.get_errno(), "capset")
'''

PROCESS_TREE = r'''
def descendants(root):
    """Every process below `root` (by the parent pids of /proc/*/stat), deepest last."""
    import os
    kids = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, "rb") as fh:
                stat = fh.read()
            fields = stat[stat.rindex(b")") + 2:].split()
            if fields[0] in (b"Z", b"X"):  # dead, waiting to be reaped: nothing to kill, no children
                continue
            ppid = int(fields[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        for child in kids.get(todo.pop(), ()):
            out.append(child)
            todo.append(child)
    return out
def kill_descendants(root, reap=False, rounds=50):
    """SIGKILL every process below `root` until none is left (a subreaper `root` gets the orphans of those it
    kills, so the next round finds them); `reap`: wait for the dead children of this process."""
    import os, signal
    for _ in range(rounds):
        pids = descendants(root)
        if reap:
            while True:
                try:
                    if os.waitpid(-1, os.WNOHANG)[0] == 0:
                        break
                except ChildProcessError:
                    break
        if not pids:
            return True
        for pid in pids:
            try:
                os.kill(pid, signal.SIGSTOP)  # first stopped, so none forks while the others die
            except OSError:
                pass
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    return not descendants(root)
'''
exec(LANDLOCK)
exec(PROCESS_TREE)  # defines descendants and kill_descendants here (pyflakes cannot see them): the harness runs it too


def kill_tree(pid: int) -> None:
    """SIGKILL every process below `pid` (the trainer's side, at the end of an rlimits run, before the group kill)."""
    try:
        kill_descendants(pid, rounds=5)
    except Exception:  # noqa: BLE001 - never stop a run here
        pass
