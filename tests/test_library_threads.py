"""Threads chosen for every user, not only the command line's (issue 46, item 5): a script of the
Python API (or a notebook) gets the CLI's choice (`threads.sensible_threads`) when it builds a team,
unless the user chose: OMP_NUM_THREADS, or torch.set_num_threads before. Each case in a fresh
process (the choice is made once per process). The machine's load is replaced by a fixed one (one
usable core, none busy) so the choice is known in advance; the default torch would keep is the
machine's (two cores or more here, else the first case cannot tell a choice from the default)."""
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(r"""
    import sys, torch
    from magrpo_edu import threads
    threads.usable_cores = lambda: 1        # as if the machine granted one core ...
    threads.busy_elsewhere = lambda: 0      # ... and nothing else ran
    before = torch.get_num_threads()
    if sys.argv[1] == "set":
        torch.set_num_threads(int(sys.argv[2]))
    from magrpo_edu import lora_agents
    from magrpo_edu.backends import PlainBackend
    built = lora_agents("tiny", 2) if sys.argv[1] != "plain" else lora_agents("tiny", 2, backend=PlainBackend())
    print("RESULT", before, torch.get_num_threads(), threads.choose_threads_once(), sep="|")
""")


def _run(*args, omp=None):
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    if omp is not None:
        env["OMP_NUM_THREADS"] = omp
    r = subprocess.run([sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    line = next(x for x in r.stdout.splitlines() if x.startswith("RESULT"))
    _, before, after, said = line.split("|")
    return int(before), int(after), said


@pytest.mark.slow
@pytest.mark.parametrize("how", ["fast", "plain"])
def test_a_python_api_user_gets_the_clis_choice(how):
    before, after, said = _run(how)
    if before < 2:
        pytest.skip("torch's default is already one thread here: the choice cannot be told from it")
    assert after == 1, (before, after, said)
    assert said == "torch threads: 1 of 1 usable core; set OMP_NUM_THREADS to choose"


@pytest.mark.slow
def test_omp_num_threads_is_the_users_choice():
    before, after, said = _run("fast", omp="2")
    assert before == after == 2 and "OMP_NUM_THREADS=2" in said


@pytest.mark.slow
def test_torch_set_num_threads_before_is_the_users_choice():
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    mine = cores + 1  # never torch's own default
    before, after, said = _run("set", str(mine))
    assert after == mine and said == f"torch threads: {mine} (torch.set_num_threads)"


def test_the_command_lines_choice_is_kept(monkeypatch):
    """After `apply_sensible_threads` (the CLI's), building a team does not choose again."""
    from magrpo_edu import threads

    monkeypatch.setattr(threads, "_choice", None)
    monkeypatch.setattr(threads, "usable_cores", lambda: 1)
    monkeypatch.setattr(threads, "busy_elsewhere", lambda: 0)
    import torch
    n = torch.get_num_threads()
    try:
        said = threads.apply_sensible_threads()
        torch.set_num_threads(n)  # as if the user changed it afterwards: the library keeps out
        assert threads.choose_threads_once() == said and torch.get_num_threads() == n
    finally:
        torch.set_num_threads(n)
