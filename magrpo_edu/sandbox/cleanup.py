"""Nothing is left behind: every process of a run dies with the run and with the trainer, and the
leftovers of a trainer killed with SIGKILL (its cgroups, its temporary folders) are removed by the
next run on the machine."""
from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from typing import Optional

from .cgroups import _cgroup_parents, _cgroup_roots, _ProgramCgroup
from .processes import kill_tree
from .tree import remove_tree


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


# Shell code that makes the shell, and so every process it execs or forks (the sandbox, the judge), the OOM
# killer's first choice (oom_score_adj 1000): where the trainer's cgroup, or the machine, runs out of memory,
# a program dies, not the trainer. Raising one's own score needs no privilege; a program cannot lower it
# again (that needs CAP_SYS_RESOURCE, which the sandbox's uid 65534 does not have).
OOM_FIRST = "echo 1000 > /proc/self/oom_score_adj 2>/dev/null; "


def _tie_to_trainer(cmd: list[str], death: int, cgroup: Optional["_ProgramCgroup"]) -> tuple[list[str], Optional[tuple]]:
    """`cmd` made to die with this process: PR_SET_PDEATHSIG=`death` on the first child (kept
    across the execs that follow), then a guard that gives up if this process died before that
    (the fork-to-prctl race), makes itself the OOM killer's first choice (OOM_FIRST) and joins the
    run's cgroups first, so every descendant is counted.
    Returns the command and, where `setpriv --pdeathsig` is missing, the preexec_fn arguments."""
    joins = cgroup.procs_files if cgroup is not None else []
    guard = ["sh", "-c", '[ "$PPID" = "$0" ] || exit 111; ' + OOM_FIRST + 'n=$1; shift; while [ "$n" -gt 0 ]; do '
             'echo $$ > "$1" || exit 112; shift; n=$((n - 1)); done; exec "$@"', str(os.getpid()), str(len(joins))] + joins
    if sys.platform != "linux":
        return cmd, None
    if _pdeathsig_tool():
        return ["setpriv", "--pdeathsig", signal.Signals(death).name[3:], "--"] + guard + cmd, None
    return guard + cmd, (death,)




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
    (killed with SIGKILL before it could clean up); their programs died with it. Cgroups are looked
    for where this process would make its own (`_cgroup_parents`: its own cgroup, the hierarchy's
    root), so those of a trainer that ran in another cgroup are found only at the root."""
    parents = [p for ps in _cgroup_parents().values() for p in ps] if _cgroup_roots() else []
    bases = [(tempfile.gettempdir(), False)] + [(root, True) for root in dict.fromkeys(parents)]
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
            try:
                if is_cgroup:
                    _ProgramCgroup.at(path).remove()
                else:
                    remove_tree(path)  # iterative, no symlink followed: a chain of 100,000 folders breaks nothing
            except Exception:  # noqa: BLE001 - a leftover that cannot be removed must never stop a run
                pass



def _kill_everything(proc, cgroup, rlimits: bool = False) -> None:
    """At the end of a run: SIGKILL to its process group (in namespaces mode `unshare`, whose
    --kill-child takes the whole PID namespace with it) and to every process of its cgroups; in rlimits
    mode first to every process below the sandbox's first process (`processes.kill_tree`: the harness, a
    child subreaper, holds the orphans a setsid double fork left, and they die here with it)."""
    if rlimits and sys.platform == "linux":
        kill_tree(proc.pid)
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


