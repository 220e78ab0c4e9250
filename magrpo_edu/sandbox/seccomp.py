"""The sandbox's seccomp filter: what no program may ask the kernel for (user namespaces, kernel keyrings,
ptrace and process_vm_readv/writev, io_uring, POSIX message queues, inotify, another ABI), as classic BPF, and the code that installs it in the sandbox's processes."""
from __future__ import annotations

import functools
import os
import platform
import struct
import subprocess
import sys
from typing import Optional

# --------------------------------------------------------------------------------------------------
# What no program may ask the kernel for: user namespaces, keyrings, ptrace, io_uring
# --------------------------------------------------------------------------------------------------
# A seccomp filter (classic BPF on the syscall number, the ABI and the first argument):
#   * user namespaces: unshare() and clone() with CLONE_NEWUSER fail with EPERM, clone3() with ENOSYS
#     (its flags sit in memory a filter cannot read; libc then falls back to clone()). A user namespace
#     would let a program mount a tmpfs of its own, whose pages only a memory cgroup bounds.
#   * kernel keyrings: add_key, request_key and keyctl fail with EPERM. Every run's processes share
#     uid 65534's user keyring, which outlives the run: a key added by one run could be read by any
#     later one (a covert channel between runs, problems and trainers).
#   * ptrace, process_vm_readv, process_vm_writev: EPERM (a program could stop, read or steer its harness,
#     which times its asserts; /proc/<harness>/mem is closed by the harness itself: it is not dumpable).
#   * io_uring_setup/enter/register: ENOSYS (a large kernel surface no test program needs).
#   * mq_open: ENOSYS. POSIX message queues outlive the process that made them: in namespaces mode they
#     carried state from one assert to the next (the IPC namespace is the run's), in rlimits mode between
#     runs (the host's /dev/mqueue). No queue can be made or opened, so none is left.
#   * inotify_init, inotify_init1: ENOSYS. Instances count per uid (fs.inotify.max_user_instances, 128 by
#     default) across every run of that uid: one run could exhaust uid 65534's for the runs beside it.
#   * every syscall of another ABI (i386 through int 0x80 or x32 on x86_64, arm32 on aarch64): EPERM.
# It is installed before any program code runs (by SETUP in namespaces mode, after it joined a new
# session keyring; by the harness in rlimits mode) and every process of the program inherits it.
# REFUSE_SYSCALLS is the installing code, run in those processes.
REFUSE_SYSCALLS = r"""
def refuse_syscalls(hex_program):
    import ctypes
    code = bytes.fromhex(hex_program)
    class Program(ctypes.Structure):  # struct sock_fprog
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
    libc, prog, no = ctypes.CDLL(None, use_errno=True), Program(len(code) // 8, code), ctypes.c_ulong(0)
    if libc.prctl(38, ctypes.c_ulong(1), no, no, no) != 0 or libc.prctl(22, ctypes.c_ulong(2), ctypes.byref(prog), no, no) != 0:
        raise OSError(ctypes.get_errno(), "could not install the seccomp filter")  # PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP
"""
# platform.machine(): AUDIT_ARCH_* and the syscall numbers the filter names, from the kernel's syscall tables
_SECCOMP_ABI = {
    "x86_64": dict(arch=0xC000003E, unshare=272, clone=56, clone3=435, add_key=248, request_key=249, keyctl=250,
                   ptrace=101, process_vm_readv=310, process_vm_writev=311, io_uring=(425, 426, 427), mq_open=240,
                   inotify=(253, 294)),
    "aarch64": dict(arch=0xC00000B7, unshare=97, clone=220, clone3=435, add_key=217, request_key=218, keyctl=219,
                    ptrace=117, process_vm_readv=270, process_vm_writev=271, io_uring=(425, 426, 427), mq_open=180,
                    inotify=(26,)),
}
_SECCOMP_ABI["amd64"], _SECCOMP_ABI["arm64"] = _SECCOMP_ABI["x86_64"], _SECCOMP_ABI["aarch64"]
CLONE_NEWUSER = 0x10000000
SECCOMP_ALLOW, SECCOMP_EPERM, SECCOMP_ENOSYS = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38  # SECCOMP_RET_ERRNO | errno


def seccomp_filter(machine: Optional[str] = None) -> bytes:
    """The sandbox's seccomp filter for `machine` (default: this one), as the bytes of a struct
    sock_filter array (see the comment above REFUSE_SYSCALLS for what it refuses). ValueError for an
    architecture without one (only x86_64 and aarch64)."""
    machine = (machine or platform.machine()).lower()
    if machine not in _SECCOMP_ABI:
        raise ValueError(f"no seccomp filter for the {machine!r} architecture (only x86_64 and aarch64): user "
                         "namespaces, keyrings, ptrace and io_uring cannot be refused inside the sandbox here")
    nr = _SECCOMP_ABI[machine]
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ/JGE/JSET|K, BPF_RET|K
    # (code, label if true, label if false, k): a label is where a jump goes, None the next instruction
    program = [("ld", None, None, 4, ld),  # seccomp_data.arch
               ("arch", None, "eperm", nr["arch"], jeq),  # another ABI
               ("ld", None, None, 0, ld),  # seccomp_data.nr
               ("x32", "eperm", None, 0x40000000, jge)]
    program += [("nosys", "enosys", None, k, jeq) for k in (nr["clone3"], nr["mq_open"]) + nr["io_uring"] + nr["inotify"]]
    program += [("refused", "eperm", None, nr[k], jeq) for k in ("add_key", "request_key", "keyctl", "ptrace",
                                                                    "process_vm_readv", "process_vm_writev")]
    program += [("flags", "flags", None, nr["unshare"], jeq), ("flags", "flags", "allow", nr["clone"], jeq),
                ("flags", None, None, 16, ld),  # label "flags": the low 32 bits of args[0] (little-endian)
                ("newuser", "eperm", "allow", CLONE_NEWUSER, jset)]
    labels = {"allow": len(program), "eperm": len(program) + 1, "enosys": len(program) + 2,
              "flags": next(i for i, ins in enumerate(program) if ins[4] == ld and ins[3] == 16)}
    out = []
    for i, (_, true, false, k, code) in enumerate(program):
        jt, jf = (0 if t is None else labels[t] - i - 1 for t in (true, false))
        assert jt >= 0 and jf >= 0 and max(jt, jf) < 256, "a seccomp jump must go forward, at most 255 instructions"
        out.append((code, jt, jf, k))
    out += [(ret, 0, 0, SECCOMP_ALLOW), (ret, 0, 0, SECCOMP_EPERM), (ret, 0, 0, SECCOMP_ENOSYS)]
    return b"".join(struct.pack("<HBBI", *ins) for ins in out)


_FILTER_CHECK = REFUSE_SYSCALLS + r"""
import ctypes, os, subprocess, sys
refuse_syscalls(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
refused = libc.unshare(0x10000000) != 0 and ctypes.get_errno() == 1
refused = refused and libc.syscall(ctypes.c_long(int(sys.argv[2])), 0, 0) != 0 and ctypes.get_errno() == 1  # keyctl
pid = os.fork()
if pid == 0:
    os._exit(7)
ok = os.waitpid(pid, 0)[1] >> 8 == 7 and subprocess.run(["true"]).returncode == 0
print("REFUSED" if refused and ok else "ALLOWED")
"""


@functools.lru_cache(maxsize=1)
def _filter_hex() -> Optional[str]:
    """The seccomp filter to install (hex), or None where it does not work here: not Linux, another
    architecture, or a kernel that refuses it (checked once in a child process: installed, then
    unshare(CLONE_NEWUSER) and keyctl must fail with EPERM while fork and subprocess still work)."""
    if sys.platform != "linux":
        return None
    try:
        hex_program = seccomp_filter().hex()
    except ValueError:
        return None
    keyctl = str(_SECCOMP_ABI[platform.machine().lower()]["keyctl"])
    try:
        r = subprocess.run([os.path.realpath(sys.executable), "-I", "-S", "-B", "-c", _FILTER_CHECK, hex_program, keyctl],
                           capture_output=True, timeout=20, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    except (OSError, subprocess.SubprocessError):
        return None
    return hex_program if r.stdout.strip() == b"REFUSED" else None
