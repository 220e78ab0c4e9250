"""What one sandbox run may use and what it returns: `SandboxLimits`, `SandboxResult`, `AssertResult`."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional


@dataclass
class SandboxLimits:
    """Resource limits of one program run."""

    timeout_s: float = 10.0  # wall clock for the whole run (all asserts)
    assert_timeout_s: float = 3.0  # wall clock per assert (program + the assert's calls)
    cpu_s: int = 10  # CPU seconds of each process (RLIMIT_CPU): of each assert's process
    cpus: float = 1.0  # CPUs' worth of time for all the run's processes together (a cpu cgroup, where writable)
    memory_mb: int = 512  # address space per process (RLIMIT_AS); namespaces mode with a memory cgroup: also the
    #                       memory of all the program's processes and the tmpfs pages they write, together
    max_processes: int = 16  # pids cgroup cap (namespaces mode) / RLIMIT_NPROC above the user's tasks (fallback, non-root)
    max_open_files: int = 64  # RLIMIT_NOFILE
    max_file_mb: int = 16  # RLIMIT_FSIZE, the size of the private /tmp and /dev/shm, and of all SysV shared memory
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
