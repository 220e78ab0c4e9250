"""What isolates a program: the minimal root of namespaces mode (`SETUP`), its probe, and `isolation()`,
what this machine gets (the table in the package's docstring). The seccomp filter is in seccomp.py, the
run's cgroups in cgroups.py."""
from __future__ import annotations

import functools
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import warnings
from typing import Optional

from .cgroups import _cgroup_parents, _cgroup_roots, _ProgramCgroup
from .processes import landlock_abi
from .seccomp import REFUSE_SYSCALLS, _filter_hex, seccomp_filter
from .tree import remove_tree

try:
    import resource
except ImportError:  # Windows
    resource = None

SANDBOX_UID = 65534  # "nobody": the program's uid and gid in namespaces mode


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
# in MB. Python with ctypes mounts in this one process (no `mount` process per mount).
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
    mount("tmpfs", d, "tmpfs", NOSUID | NODEV, "size=%sm,nr_inodes=4096,mode=1777" % mb)  # inodes: kernel memory too
os.mkdir("tmp/work", 0o700)
os.chown("tmp/work", UID, UID)
mount("proc", "proc", "proc", NOSUID | NODEV | NOEXEC)  # a fresh proc: only this PID namespace
# this IPC namespace's SysV shared memory and message queues (memory no tmpfs size bounds): at most /tmp's
# size of shared memory in all, in 16 segments, each removed when no process of the program is attached
# (shm_rmid_forced: an assert's segments end with its process), and 16 queues of 64 KB
for name, value in (("shmmax", int(mb) * 2 ** 20), ("shmall", int(mb) * 2 ** 20 // os.sysconf("SC_PAGE_SIZE")),
                    ("shmmni", 16), ("shm_rmid_forced", 1), ("msgmni", 16), ("msgmnb", 65536)):
    with open("proc/sys/kernel/" + name, "w") as fh:
        fh.write(str(value))
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
if SECCOMP_FILTER is not None:  # inherited by every process from here on (see REFUSE_SYSCALLS)
    refuse_syscalls(SECCOMP_FILTER)
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
            f"PIVOT_ROOT, KEYCTL, SECCOMP_FILTER = {_PIVOT_ROOT_NR!r}, {_KEYCTL_NR!r}, {_filter_hex()!r}\n"
            f"TIMEOUT, SETPRIV = {os.path.realpath(tools['timeout'] or 'timeout')!r}, {os.path.realpath(tools['setpriv'] or 'setpriv')!r}\n")
    return head + REFUSE_SYSCALLS + SETUP


def _namespaced(cmd: list[str], root: str, tmp_mb: int, total_s: float) -> list[str]:
    """`cmd` inside new PID/net/mount/IPC/UTS namespaces, in the minimal root built over `root`."""
    return ["unshare", "--fork", "--pid", "--net", "--mount", "--ipc", "--uts", "--kill-child",
            os.path.realpath(sys.executable), "-I", "-S", "-B", "-c", _setup_program(),
            root, str(int(tmp_mb)), str(int(math.ceil(total_s)) + 2)] + cmd



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
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
r["userns_refused"] = libc.unshare(0x10000000) != 0  # CLONE_NEWUSER
r["keyctl_refused"] = KEYCTL is not None and libc.syscall(ctypes.c_long(KEYCTL), 0, 0) != 0 and ctypes.get_errno() == 1
print("PROBE" + json.dumps(r))
'''


class SandboxError(RuntimeError):
    """The sandbox's own machinery failed (it could not start, its probe failed, the trainer ran out of
    file descriptors, the judge could not start): nothing was learned about the program, so no reward is
    given for it and the caller sees this error instead of a silently lower reward."""


def _namespaces_tools() -> Optional[str]:
    """Why namespaces mode cannot be tried here, or None if it can (Linux, root, unshare/setpriv/timeout)."""
    if sys.platform != "linux":
        return f"not Linux ({sys.platform})"
    if os.geteuid() != 0:
        return "not root (namespaces mode needs root; programs run as this user)"
    missing = [t for t in ("unshare", "setpriv", "timeout") if not shutil.which(t)]
    return f"missing {', '.join(missing)} (util-linux, coreutils)" if missing else None


def _unshare_refused() -> Optional[str]:
    """Why the kernel refuses the sandbox's namespaces (e.g. a container without CAP_SYS_ADMIN), or None
    if an empty command runs in them."""
    try:
        r = subprocess.run(["unshare", "--fork", "--pid", "--net", "--mount", "--ipc", "--uts", "true"],
                           capture_output=True, timeout=30, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    except subprocess.TimeoutExpired:
        return None  # slow, not refused: the probe decides
    except OSError as e:
        return f"unshare could not run: {e}"
    return None if r.returncode == 0 else "unshare: " + r.stderr.decode("utf-8", "replace").strip()[-200:]


def _probe_namespaces() -> tuple[Optional[dict], str]:
    """Run a probe through the whole namespaces sandbox: (what it saw, "") or (None, why it could not)."""
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
    probe = "HOST, KEYCTL = %r, %r\n%s" % (host, _KEYCTL_NR, _PROBE)
    work = tempfile.mkdtemp(prefix=f"magrpo-sandbox-{os.getpid()}-")
    try:
        cmd = _namespaced([os.path.realpath(sys.executable), "-I", "-S", "-c", probe], work, 1, PROBE_TIMEOUT_S)
        r = subprocess.run(cmd, capture_output=True, timeout=PROBE_TIMEOUT_S, cwd=work,
                           env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
        out = r.stdout.decode("utf-8", "replace")
        if r.returncode != 0 or "PROBE" not in out:
            return None, f"exit code {r.returncode}: {(r.stderr.decode('utf-8', 'replace') or out).strip()[-300:]}"
        return json.loads(out.split("PROBE", 1)[1].strip().splitlines()[0]), ""
    except subprocess.TimeoutExpired:
        return None, f"no answer within {PROBE_TIMEOUT_S} s"
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as e:
        return None, f"{type(e).__name__}: {e}"
    finally:
        remove_tree(work)


PROBE_TIMEOUT_S = 20
PROBE_TRIES = 3


def _namespaces_probe() -> tuple[Optional[dict], str]:
    """(the probe's view, "") in namespaces mode; (None, why) where this machine cannot have it, which
    makes the rlimits mode. Raises SandboxError where it could have it but the probe failed every time
    (PROBE_TRIES): it fails closed, never silently running programs with less isolation."""
    if os.environ.get("MAGRPO_EDU_SANDBOX", "auto") == "rlimits":
        return None, "MAGRPO_EDU_SANDBOX=rlimits"
    why = _namespaces_tools() or _unshare_refused()
    if why:
        return None, why
    fails = []
    for _ in range(PROBE_TRIES):
        probe, fail = _probe_namespaces()
        if probe is not None:
            return probe, ""
        fails.append(fail)
    raise SandboxError(f"the namespaces sandbox can run on this machine but its probe failed {PROBE_TRIES} times "
                       f"({'; '.join(dict.fromkeys(fails))}); no program was run. If the machine is overloaded, "
                       "try again; to run programs with rlimits only (they then run as this user and can read "
                       "its files), set MAGRPO_EDU_SANDBOX=rlimits.")


_WARNED: set = set()

_LANDLOCK_CHECK = r"""
import ctypes, os, signal, sys
abi = int(sys.argv[1])
landlock_self(abi)
if os.geteuid() == 0:  # the rlimits mode as root: its programs also lose every capability
    drop_capabilities()
ok = True
if abi >= 6:  # the signal scope: the parent (outside this domain) cannot be signalled
    try:
        os.kill(os.getppid(), 0)
        ok = False
    except PermissionError:
        pass
print("LANDLOCKED" if ok else "NOT SCOPED")
"""


@functools.lru_cache(maxsize=1)
def _landlock() -> tuple[int, str]:
    """(the Landlock ABI the rlimits mode uses, why it is 0 where it is): checked once in a child process (a
    domain made, and from ABI 6 a signal to the parent refused). MAGRPO_EDU_SANDBOX_LANDLOCK=none pretends
    there is none (to test the fallback; call `isolation.cache_clear()` and `_landlock.cache_clear()`)."""
    if sys.platform != "linux":
        return 0, "not Linux"
    if os.environ.get("MAGRPO_EDU_SANDBOX_LANDLOCK", "auto") == "none":
        return 0, "MAGRPO_EDU_SANDBOX_LANDLOCK=none"
    abi = landlock_abi()
    if abi <= 0:
        return 0, "this kernel has no Landlock (Linux 5.13+ with the landlock LSM enabled)"
    from .processes import LANDLOCK

    try:
        r = subprocess.run([os.path.realpath(sys.executable), "-I", "-S", "-B", "-c", LANDLOCK + _LANDLOCK_CHECK, str(abi)],
                           capture_output=True, timeout=20, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    except (OSError, subprocess.SubprocessError) as e:
        return 0, f"the Landlock check could not run: {e}"
    if r.stdout.strip() != b"LANDLOCKED":
        return 0, f"the kernel refused a Landlock domain (ABI {abi}): {r.stderr.decode('utf-8', 'replace')[-200:]}"
    return abi, ""


@functools.lru_cache(maxsize=1)
def isolation() -> dict:
    """What `run_program` isolates on this machine (see the table in the module docstring). In
    namespaces mode the properties are those a probe program saw from inside the sandbox, and
    `process_cap` / `memory_limit` / `cpu_limit` those of a cgroup just made and removed:
    "memory_limit" is "per program: memory cgroup ..." (one limit for all of a program's processes and
    its tmpfs pages), "per process only (RLIMIT_AS): ..." (no writable memory cgroup, or the rlimits
    mode), or "none" (macOS, Windows). "user_namespaces": "refused (seccomp filter)" or why not;
    "cgroups": where the run's cgroups are made, by controller; "why_not_namespaces": why this machine
    runs the rlimits mode ("" in namespaces mode); "landlock_abi": the Landlock version each assert's process
    gets in the rlimits mode (0: none, or namespaces mode); "other_processes": what a program can do to the
    processes outside its run (read their environment and memory, signal them) in this mode on this kernel.

    The probe is tried up to PROBE_TRIES times; where namespaces mode can run here but every probe
    failed, this raises SandboxError (and nothing is cached, so the next call tries again): it never
    falls back silently. A machine that cannot have namespaces (not root, no unshare, a container that
    refuses them) runs the rlimits mode with a RuntimeWarning when the program would then run as root.
    Set the environment variable MAGRPO_EDU_SANDBOX=rlimits to force the fallback,
    MAGRPO_EDU_SANDBOX_CGROUPS=none to pretend no cgroup is writable (e.g. to test them; call
    `isolation.cache_clear()` after a change)."""
    probe, why_not = _namespaces_probe()
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
    if not ns and root and why_not not in _WARNED:
        _WARNED.add(why_not)
        warnings.warn(f"magrpo_edu.sandbox: no namespaces sandbox here ({why_not}); generated programs run as root "
                      "with rlimits only: they can read and write this machine's files and reach the network. Run "
                      "untrusted code as an ordinary user or where unshare works (Linux, root).", RuntimeWarning,
                      stacklevel=3)
    if _filter_hex() is not None and (not ns or probe["userns_refused"]):
        userns = "refused (seccomp filter)"
    elif not linux:
        userns = "n/a"
    else:
        try:
            seccomp_filter()
            userns = "allowed: this kernel refused the seccomp filter"
        except ValueError as e:
            userns = f"allowed: {e}"
    lock, why_no_lock = _landlock() if not ns else (0, "namespaces mode (a PID namespace and uid 65534 instead)")
    if ns:
        others = "invisible (PID namespace), another uid"
    elif lock >= 6:
        others = (f"unreachable (Landlock ABI {lock}): a program cannot ptrace, read /proc/<pid>/environ, mem or fd of, "
                  "signal, or reach the abstract Unix sockets of any process outside its own (the trainer, the harness, "
                  "the judge, other runs, the user's other processes)")
    elif lock:
        others = (f"not readable (Landlock ABI {lock}: no ptrace, /proc/<pid>/environ or mem outside its own processes) "
                  "but can be signalled by the program (same uid; Landlock's signal scope needs ABI 6, Linux 6.12): "
                  "docs/sandbox.md says what that allows")
    elif linux:
        others = ("readable and killable as the user (no Landlock here: " + why_no_lock + "), except: the trainer makes "
                  "itself non-dumpable (its environment and memory unreadable), and root's programs, without any "
                  "capability, cannot read processes that hold some")
    else:
        others = "readable and killable as the user"
    parents, cgroups = _cgroup_parents(), {}
    for controller, path in (_cgroup_roots().items() if controllers else ()):
        mine = len(parents[controller]) > 1 and path == parents[controller][0]
        cgroups[controller] = path + (" (this process's own cgroup)" if mine else
                                      " (the root; this process's own cgroup is the root)" if len(parents[controller]) == 1
                                      else " (the root: this process's own cgroup cannot hold it)")
    return dict(
        mode="linux-namespaces" if ns else "rlimits",
        why_not_namespaces=why_not,
        network=ns and not probe["network"], pid_namespace=ns and probe["pids"] <= 3,
        read_only_filesystem=ns, private_tmp=ns,
        capabilities_dropped=ns and int(probe["caps"], 16) == 0,
        uid_dropped=ns and probe["uid"] == SANDBOX_UID and probe["gid"] == SANDBOX_UID and not probe["groups"],
        host_filesystem_hidden=ns and not probe["host_paths_visible"],
        host_sockets_unreachable=ns and not probe["host_paths_visible"],
        proc_sys_read_only=ns and not probe["proc_sys_writable"],
        private_dev_shm=ns and probe["shm"],
        keyring_isolated=probe["keyctl_refused"] if ns else _filter_hex() is not None,
        kill_on_parent_death=("whole sandbox" if ns else "process group" if linux and shutil.which("timeout") else "no"),
        process_cap="pids cgroup" if "pids" in controllers else ("RLIMIT_NPROC" if not root and resource is not None
                                                                 else "none (timeout group kill only)"),
        memory_limit=("per program: memory cgroup (all its processes and tmpfs pages) + RLIMIT_AS per process"
                      if "memory" in controllers else "per process only (RLIMIT_AS): " +
                      ("no writable memory cgroup; /tmp, /dev/shm and SysV shared memory capped" if ns else "rlimits mode")
                      if resource is not None and linux else "none"),
        cpu_limit=("per program: cpu cgroup (SandboxLimits.cpus of all its processes together) + RLIMIT_CPU per process"
                   if "cpu" in controllers else "per process only (RLIMIT_CPU): a program's processes together may "
                   "use every core" if resource is not None else "none"),
        oom_victim=("the program (oom_score_adj 1000 on every sandbox process)" if linux else "n/a"),
        user_namespaces=userns,
        landlock_abi=lock,
        other_processes=others,
        cgroups=cgroups,
        platform=sys.platform,
    )
