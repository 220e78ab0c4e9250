"""The throw-away cgroups of one run (`_ProgramCgroup`: pids, memory and cpu, where this machine lets us
write them) and where they are made (this process's own cgroup, else the hierarchy's root; cgroup v1 and v2)."""
from __future__ import annotations

import os
import secrets
import signal
import time
from typing import Optional

CGROUP_FS = "/sys/fs/cgroup"
CONTROLLERS = ("pids", "memory", "cpu")  # the cgroup controllers a run uses, where writable


def _own_cgroups(text: str) -> dict[str, str]:
    """This process's cgroup by controller from /proc/self/cgroup's `text` ("4:memory:/a/b" on cgroup v1;
    "0::/a/b", stored under "", on v2)."""
    out = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(",") if parts[1] else [""]:
                out[controller] = parts[2]
    return out


def _cgroup_parents(fs: str = CGROUP_FS, self_cgroup: str = "/proc/self/cgroup") -> dict[str, list[str]]:
    """Where a throw-away cgroup of each controller ("pids", "memory", "cpu") could be made, best first: this
    process's own cgroup, then the hierarchy's root (cgroup v1: the controller's own hierarchy under `fs`;
    v2: `fs` itself)."""
    try:
        own = _own_cgroups(open(self_cgroup).read())
    except OSError:
        own = {}
    out = {}
    for controller in CONTROLLERS:
        base = os.path.join(fs, controller)
        if not os.path.isfile(os.path.join(base, "cgroup.procs")):  # no v1 hierarchy of it: cgroup v2
            base, controller_key = fs, ""
        else:
            controller_key = controller
        mine = own.get(controller_key, "/").strip("/")
        out[controller] = list(dict.fromkeys([os.path.join(base, mine) if mine else base, base]))
    return out


def _cgroup_roots(fs: str = CGROUP_FS, self_cgroup: str = "/proc/self/cgroup") -> dict[str, str]:
    """The folder where a throw-away cgroup is made, by controller ("pids", "memory", "cpu"): the first of
    `_cgroup_parents` that is writable and lets its children use the controller (cgroup v1: any folder of
    the controller's hierarchy; v2: one whose cgroup.subtree_control enables it, which a cgroup holding
    processes, such as this process's own, cannot do on v2 except at the root). The environment variable
    MAGRPO_EDU_SANDBOX_CGROUPS=none pretends none is writable (to test the fallback)."""
    if os.environ.get("MAGRPO_EDU_SANDBOX_CGROUPS", "auto") == "none":
        return {}
    out = {}
    for controller, candidates in _cgroup_parents(fs, self_cgroup).items():
        for path in candidates:
            if not (os.path.isfile(os.path.join(path, "cgroup.procs")) and os.access(path, os.W_OK)):
                continue
            if _is_v2(path):
                try:
                    if controller not in open(os.path.join(path, "cgroup.subtree_control")).read().split():
                        continue
                except OSError:
                    continue
            out[controller] = path
            break
    return out


def _is_v2(path: str) -> bool:
    """Is the cgroup folder `path` on cgroup v2 (where every cgroup has a cgroup.controllers file)?"""
    return os.path.isfile(os.path.join(path, "cgroup.controllers"))


def _cgroup_root() -> Optional[str]:
    """Where the pids cgroups are made (None: nowhere)."""
    return _cgroup_roots().get("pids")


CPU_PERIOD_US = 100_000  # the CFS period of a run's cpu cgroup; its quota is cpus x this


class _ProgramCgroup:
    """The throw-away cgroup(s) of one run: every process of the program joins them before it runs.
    pids: at most `max_pids` processes. memory: all its processes together, and the tmpfs pages
    they write (the private /tmp and /dev/shm, or a tmpfs the program mounts in a user namespace of
    its own: the kernel charges tmpfs pages to the cgroup of the process that wrote them), at most
    `memory_bytes`, swap included (v1 memory.memsw.limit_in_bytes / v2 memory.swap.max = 0); over it
    the kernel's OOM killer kills a process of the cgroup (every sandbox process has oom_score_adj 1000,
    so where the trainer's own cgroup runs out of memory the OOM killer takes a program, not the
    trainer). cpu: all its processes together get at most `cpus` CPUs' worth of time (CFS quota: v1
    cpu.cfs_quota_us / cpu.cfs_period_us, v2 cpu.max), so busy children cannot slow the rest of the
    machine (the other programs of the batch, the trainer). On cgroup v1 one folder per controller's
    hierarchy, on v2 one folder with all. Only the controllers this machine lets us write are used
    (`controllers`); OSError when none is."""

    def __init__(self, max_pids: int, memory_bytes: int, roots: Optional[dict[str, str]] = None, cpus: float = 1.0):
        roots = _cgroup_roots() if roots is None else roots
        if not roots:
            raise OSError("no writable pids, memory or cpu cgroup")
        quota = max(1000, int(round(cpus * CPU_PERIOD_US)))
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
                if "memory" in here and not _is_v2(root):  # v1: the swap limit may not be below the other
                    self._write(path, "memory.limit_in_bytes", memory_bytes)
                    if os.path.exists(os.path.join(path, "memory.memsw.limit_in_bytes")):
                        self._write(path, "memory.memsw.limit_in_bytes", memory_bytes)
                elif "memory" in here:
                    self._write(path, "memory.max", memory_bytes)
                    if os.path.exists(os.path.join(path, "memory.swap.max")):
                        self._write(path, "memory.swap.max", 0)
                if "cpu" in here and not _is_v2(root):
                    self._write(path, "cpu.cfs_period_us", CPU_PERIOD_US)
                    self._write(path, "cpu.cfs_quota_us", quota)
                elif "cpu" in here:
                    self._write(path, "cpu.max", f"{quota} {CPU_PERIOD_US}")
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
