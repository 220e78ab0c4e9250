"""Run untrusted generated code in a separate, limited process: `run_program(program, asserts, entry_point=...)`.

The coding reward executes what the agents wrote. The authors' reference code uses `exec` with
SIGALRM in the trainer's own process; that lets generated code loop forever, exhaust memory, kill
the trainer, read or write anywhere, and forge its own test results. Here every program runs in a
fresh child process, and each assert runs in a fresh process of its own, forked by the harness
before any program code ran, where the program is executed again and then the assert: nothing one
assert's process does (globals, state of imported modules, the builtins, signal handlers, a crash,
os._exit) reaches the next assert. Between two asserts the harness empties the working folder (and
in namespaces mode the sandbox's /tmp and /dev/shm) and, in namespaces mode, kills every process the
program left (a daemon in a session of its own included; rlimits mode on Linux: every process below
the harness, a child subreaper); SysV shared memory ends with the assert's process; POSIX message queues
and inotify instances cannot be made (seccomp). What still persists between asserts: files a program
writes outside those folders (rlimits mode: wherever its user may write) and SysV message queues
(namespaces mode, at most 1 MB). With:

  * limits: wall clock (per assert, enforced from outside the assert's process, and in total), CPU
    time (per process; and, where a cpu cgroup is writable, `SandboxLimits.cpus` CPUs' worth for all
    the run's processes together), address space, open files, file size, output size (stdout/stderr
    are read up to a cap, then the pipe is closed: the program's further writes fail), no core dumps;
  * the trainer outlives every program: every sandbox process (and the judge) has oom_score_adj
    1000, so where memory runs out (the trainer's own cgroup, the machine) the OOM killer takes a
    program, never the trainer;
  * a sandbox that cannot start, a failed probe of the namespaces mode, no file descriptor or
    temporary folder left for a run, a judge that cannot start: `SandboxError`, never a silently lower
    reward (nothing is learned about the program) and never a silent fallback to less isolation;
  * a minimal environment (no inherited variables), stdin closed, `python -I -S` (no site-packages, no user
    site, no PYTHON* variables); the trainer's own environment out of reach where the kernel allows (see
    "other processes" below); every text that comes back (error names, messages, the repr of a returned
    value, the output) is made valid, printable and bounded by one sanitiser (`sanitise.py`) before it
    reaches a result, and once more, as printable ASCII bounded in the agent's tokens with special-token
    markers escaped, before it reaches a prompt (`sanitise.for_prompt`, the coding task's level feedback);
  * the whole process group (and, where available, every process of its PID namespace and
    cgroup) killed on timeout or when the run ends, so nothing is left running;
  * death with the trainer (Linux): the first child gets PR_SET_PDEATHSIG (`setpriv --pdeathsig`)
    and the total timeout is also enforced inside the sandbox (coreutils `timeout`), so a SIGKILLed
    trainer leaves no program running; the cgroup and temporary folder a dead trainer left are
    removed by the next run on the machine (their names carry the trainer's pid, as does the
    harness's command line, `magrpo-sandbox-owner-PID`, for `ps`);
  * a fresh temporary working directory, emptied between asserts, removed afterwards;
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
  one CPU per program (all its    cpu cgroup where  NO                NO             NO
    processes together)           writable, else NO
  OOM killer's victim             the program       the program       n/a            the program
                                  (oom_score_adj)   (oom_score_adj)                  (oom_score_adj)
  user namespaces (a tmpfs of     refused (seccomp) refused (seccomp) n/a            refused (seccomp)
    its own) inside the sandbox   x86_64, aarch64   x86_64, aarch64                  x86_64, aarch64
  /tmp, /dev/shm, SysV shm        capped (tmpfs     the host's        the host's     the host's
                                  size, inodes;
                                  shmall) per run
  network                         none (no route,   NOT isolated      NOT isolated   NOT isolated
                                  own abstract sockets)
  host files: home, /etc/shadow,  HIDDEN: not in    readable as       readable as    readable (root:
    the repo and its data,        the sandbox's     the user          the user       everything)
    site-packages                 filesystem
  writes outside the sandbox      none (own tmpfs   as the user       as the user    anywhere (root)
                                  /tmp, /dev/shm)
  host Unix socket files          unreachable       reachable         reachable      reachable
  program's uid / capabilities    65534 / none      the user / none   the user       0 / none (dropped)
  /proc/sys (kernel settings)     read-only         as the user       n/a            as root (writable
                                                    (read-only)                      unless mounted ro)
  kernel keyrings (a channel      refused (seccomp) refused (seccomp) n/a            refused (seccomp)
    between runs; the trainer's)  x86_64, aarch64   x86_64, aarch64                  x86_64, aarch64
  ptrace, process_vm_readv/       refused (seccomp) refused (seccomp) n/a            refused (seccomp)
    writev, io_uring, POSIX       x86_64, aarch64   x86_64, aarch64                  x86_64, aarch64
    message queues, inotify
  stopping its harness (SIGSTOP)  possible: the per-assert timer stops; the run's total timeout still holds
  other processes: environment,   invisible (PID    unreadable with   readable as    unreadable with
    memory, fds (the trainer's    namespace; uid    Landlock; else    the user       Landlock (root's
    HF_TOKEN, the harness)        65534; harness    only the trainer                 capabilities
                                  not dumpable)     (not dumpable)                   dropped); else
                                                                                     only those with
                                                                                     no capability
  other processes: signals        invisible         refused with      allowed (same  refused with
    (kill the trainer, the                          Landlock ABI 6    uid): a run a  Landlock ABI 6;
    harness, a sibling's sandbox)                   (Linux 6.12+);    signal ended   else as (b)
                                                    else allowed: a   is run again,
                                                    run a signal      then a canary
                                                    ended is run      (SandboxError)
                                                    again, then a
                                                    canary
                                                    (SandboxError)
  processes (fork bomb)           pids cgroup cap   RLIMIT_NPROC      RLIMIT_NPROC   timeout only
                                  where writable,
                                  else timeout only
  a daemonised (setsid) child     killed            killed (subre-    MAY SURVIVE    killed (subre-
                                                    aper harness)*                   aper harness)*
  trainer SIGKILLed               all killed        group killed      MAY SURVIVE    group killed
  /dev/shm (multiprocessing)      private           the host's        the host's     the host's
  forge-proof verdicts (below)    yes               no (same user)    no             no (root)
  Windows: not supported (no fork, no rlimits); run training there under WSL.
  * unless the program killed or stopped its harness first, which only a kernel without Landlock ABI 6 allows.

  (a) runs each program in new PID, network, mount, IPC and UTS namespaces inside a minimal root
  built by a trusted setup step (PID 1 of the namespaces, as root, before any untrusted code): an
  empty read-only tmpfs with read-only binds of /usr, /bin, /sbin, /lib*, the Python installation
  (`sys.base_prefix`, with every site-packages/dist-packages under an empty read-only tmpfs) and
  /etc/ld.so.cache, a generated /etc/passwd, group and hosts; private tmpfs /tmp and /dev/shm; a
  /dev with null, zero, random, urandom; a fresh /proc (only the sandbox's processes) with
  /proc/sys (and /proc/sysrq-trigger) read-only; a new empty session keyring (and then no keyring
  syscall at all). The host's root is
  pivot_root'ed away and unmounted (chroot where pivot_root is refused), then the program runs as
  uid/gid 65534 with no groups, no capabilities and no_new_privs. Still visible: the contents of
  /usr and of the Python installation (system files), the kernel's version and /proc's global
  figures; out of scope: kernel exploits.
  (b)-(d) fall back to a plain child process with the limits above in a fresh temporary folder and
  its own process group; root (d) is not bound by RLIMIT_NPROC. There (Linux) each assert's process
  enters a Landlock domain of its own before any program code (`processes.py`; `isolation()["landlock_abi"]`
  and `["other_processes"]` say what this kernel gives): from ABI 1 (Linux 5.13) it cannot ptrace or open
  /proc/<pid>/environ, mem or fd of any process outside it (the trainer's HF_TOKEN, the harness, the judge,
  other runs), from ABI 6 (Linux 6.12) it cannot signal them either; root's programs also lose every
  capability (uid 0 stays: root-owned files). Without Landlock the trainer makes itself non-dumpable,
  which keeps its environment and memory from a program that is not root. The harness is a child subreaper
  and kills every process below it after each assert (a setsid double fork included); the trainer reads the
  pipes without ever waiting for their end (a survivor holding them costs nothing), removes folders
  iteratively without following symlinks (`tree.py`), and empties the working folder between asserts
  through the descriptor it opened (a symlink planted at its path is removed, never followed).
  docs/sandbox.md says what a learner on Binder or Colab is still exposed to. RLIMIT_NPROC counts every task of the
  real uid, so (b) and (c) set it to the tasks the user already runs (a Jupyter kernel's threads
  included) + max_processes (+ max_processes + 8 for each other run of this trainer in flight: `run_many`):
  a fork bomb gets about max_processes more per run, not the machine; a harness that cannot fork an assert's
  process a moment (a sibling holds the uid's budget) retries for 2 s, then reports "SandboxBusy" and the
  run is run again. Which mode a machine gets is decided
  once per process by `isolation()`: where namespaces mode can run (Linux, root, unshare, setpriv and
  timeout present, the kernel accepts the namespaces) its probe is tried 3 times and, if every try
  fails, `SandboxError` is raised (nothing is cached: the next call tries again); programs run as root
  in the rlimits mode only with a RuntimeWarning that says so, or where MAGRPO_EDU_SANDBOX=rlimits asks.
  Memory: RLIMIT_AS bounds each process, not their sum, and not tmpfs pages. Where a memory cgroup is
  writable (root on most Linux machines, CI included) every process of a program joins one with
  memory_mb, swap included, which the kernel also charges with the tmpfs pages they write; over it the
  OOM killer kills a process of that program. It is made under the trainer's own cgroup (read from
  /proc/self/cgroup) where that can hold it (cgroup v1: any writable folder of the memory hierarchy;
  v2: a cgroup whose cgroup.subtree_control enables "memory", which v2 allows a cgroup with processes
  in it only at the root), else at the hierarchy's root; `isolation()["cgroups"]` says where. The v2
  path is tested on fake cgroup trees only (CI and the development machine run cgroup v1). Where no
  memory cgroup is writable (rootless, some containers; MAGRPO_EDU_SANDBOX_CGROUPS=none pretends so)
  `isolation()["memory_limit"]` says "per process only", and in (a) the rest is capped instead: user
  namespaces are refused (a seccomp filter: unshare/clone with CLONE_NEWUSER fail with EPERM, clone3
  with ENOSYS, other ABIs with EPERM; in every mode, on x86_64 and aarch64 only, elsewhere
  `isolation()["user_namespaces"]` says they are allowed), so no tmpfs but the private /tmp and
  /dev/shm (max_file_mb each, 4096 inodes), SysV shared memory at most max_file_mb in all. Still
  not summed without a cgroup: the processes' own memory (N processes may hold N x memory_mb; N is
  capped only by the pids cgroup, see "processes"), and what file descriptors hold (pipe buffers,
  memfd files: up to max_open_files x max_file_mb per process).

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
trusted judge process outside the sandbox (`judge.py`, started by the parent) parses the JSON strictly
(no eval) and evaluates the assert, in a namespace of safe builtins and `math`. So the program never sees an expected value and never decides a verdict:
whatever it does (an `__eq__` that is always True, walking the harness's frames to its writer,
writing to the result pipe) it can at most claim return values, which is no better than computing
them. Limits of the guarantee: an assert the parent cannot evaluate alone (the entry point used as
a value, e.g. `map(f, xs)`; a call whose arguments use a name the assert binds, e.g. a comprehension
variable; a name outside the calls that is neither a safe builtin nor `math`, e.g. a helper of the
program; an import) falls back to a verdict decided in the sandbox and is marked
`AssertResult.checked_by == "sandbox"` (forgeable; host-decided ones say "host"; `host_checked`
tells which, and the coding reward counts only the host-decided ones); all calls of an
assert are evaluated, in order, before it (no short-circuit); and in the rlimits modes the
program runs as the trainer's user and could attack the trainer process directly. Without
`entry_point` every verdict is decided in the sandbox (the old behaviour, kept for compatibility),
and a program can forge it.

The package's parts: `isolation` (the namespaces root, its probe, `isolation()`), `seccomp` (the filter),
`cgroups` (the run's cgroups),
`inside` (the harness that runs inside the sandbox), `harness` (`run_program` / `run_many` around it),
`limits` (`SandboxLimits` and the results), `forgeproof` (which
asserts the host checks, and the judge's process) with `judge` (the judge itself, a script), `cleanup`
(death with the trainer, leftovers of a killed one), `processes` (Landlock, the process tree's kill),
`tree` (removing folders), `sanitise` (text that comes back from a program). Measurements: benchmarks/sandbox_overhead.md.
"""
from .forgeproof import JUDGE_GRACE_S, host_checked
from .harness import default_workers, run_many, run_program
from .limits import AssertResult, SandboxLimits, SandboxResult
from .isolation import SandboxError, isolation

__all__ = ["AssertResult", "SandboxLimits", "SandboxResult", "SandboxError", "run_program", "run_many",
           "default_workers", "isolation", "host_checked", "JUDGE_GRACE_S"]
