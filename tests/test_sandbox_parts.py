"""The sandbox's parts that run without a sandbox (the fast lane): the seccomp filter that refuses user
namespaces, where the run's cgroups are made (on fake cgroup v1 and v2 trees: the machine's own cgroup
version is only one of them), and the judge, imported as a module."""
import io
import json
import struct

import pytest

from magrpo_edu.sandbox import judge
from magrpo_edu.sandbox.forgeproof import JUDGE_PATH, MAX_VALUE_DEPTH, _plan
from magrpo_edu.sandbox.isolation import CLONE_NEWUSER, _cgroup_roots, _own_cgroups, _ProgramCgroup, userns_filter


# ---- the seccomp filter (issue 28, item 2) ------------------------------------------------------------
@pytest.mark.parametrize("machine, arch, unshare, clone", [("x86_64", 0xC000003E, 272, 56), ("aarch64", 0xC00000B7, 97, 220)])
def test_the_user_namespace_filter_checks_the_abi_and_the_flags_of_unshare_and_clone(machine, arch, unshare, clone):
    code = userns_filter(machine)
    ins = [struct.unpack("<HBBI", code[i:i + 8]) for i in range(0, len(code), 8)]
    ks = [k for _, _, _, k in ins]
    assert arch in ks and unshare in ks and clone in ks and 435 in ks and CLONE_NEWUSER in ks
    assert ins[-3:] == [(0x06, 0, 0, 0x7FFF0000), (0x06, 0, 0, 0x00050001), (0x06, 0, 0, 0x00050026)]  # allow, EPERM, ENOSYS
    for i, (op, jt, jf, _) in enumerate(ins):  # every jump lands inside the program
        if op & 0x07 == 0x05:
            assert i + 1 + max(jt, jf) < len(ins)


def test_the_user_namespace_filter_refuses_an_unknown_architecture_clearly():
    with pytest.raises(ValueError, match="only x86_64 and aarch64"):
        userns_filter("riscv64")


# ---- where the run's cgroups are made -----------------------------------------------------------------
def make(path, files=()):
    path.mkdir(parents=True, exist_ok=True)
    for name, text in dict(files).items():
        (path / name).write_text(text)
    return path


def test_the_own_cgroup_is_read_from_proc_self_cgroup():
    assert _own_cgroups("4:memory:/a/b\n3:cpu,cpuacct:/c\n0::/d\n") == {"memory": "/a/b", "cpu": "/c", "cpuacct": "/c", "": "/d"}


def test_cgroup_v2_uses_the_own_cgroup_when_it_delegates_the_controller_else_the_root(tmp_path):
    fs = make(tmp_path / "cg", {"cgroup.procs": "", "cgroup.controllers": "memory pids", "cgroup.subtree_control": "memory pids"})
    own = make(fs / "user" / "trainer", {"cgroup.procs": "", "cgroup.controllers": "memory pids", "cgroup.subtree_control": ""})
    self_cgroup = tmp_path / "self"
    self_cgroup.write_text("0::/user/trainer\n")
    assert _cgroup_roots(str(fs), str(self_cgroup)) == {"pids": str(fs), "memory": str(fs)}  # v2: a cgroup with processes
    (own / "cgroup.subtree_control").write_text("memory")
    roots = _cgroup_roots(str(fs), str(self_cgroup))
    assert roots == {"pids": str(fs), "memory": str(own)}
    cg = _ProgramCgroup(7, 123 * 2 ** 20, roots=roots)  # v2: memory.max (memory.swap.max only where the kernel made it)
    assert sorted(cg.controllers) == ["memory", "pids"] and len(cg.paths) == 2
    by_root = {p.rsplit("/", 1)[0]: p for p in cg.paths}
    assert (tmp_path / by_root[str(own)] / "memory.max").read_text() == str(123 * 2 ** 20)
    assert (tmp_path / by_root[str(fs)] / "pids.max").read_text() == "7"
    assert not (tmp_path / by_root[str(own)] / "memory.limit_in_bytes").exists()


def test_cgroup_v1_uses_the_own_cgroup_of_each_hierarchy(tmp_path):
    fs = tmp_path / "cg"
    make(fs / "pids", {"cgroup.procs": ""})
    make(fs / "memory", {"cgroup.procs": ""})
    own = make(fs / "memory" / "job" / "7", {"cgroup.procs": ""})
    self_cgroup = tmp_path / "self"
    self_cgroup.write_text("8:pids:/\n4:memory:/job/7\n0::/\n")
    roots = _cgroup_roots(str(fs), str(self_cgroup))
    assert roots == {"pids": str(fs / "pids"), "memory": str(own)}
    cg = _ProgramCgroup(5, 2 ** 20, roots=roots)
    mem = next(p for p in cg.paths if p.startswith(str(own)))
    assert (tmp_path / mem / "memory.limit_in_bytes").read_text() == str(2 ** 20)
    (own / "cgroup.procs").unlink()  # the own cgroup is not there (another mount namespace): the root
    assert _cgroup_roots(str(fs), str(self_cgroup))["memory"] == str(fs / "memory")


def test_no_writable_cgroup_can_be_pretended(tmp_path, monkeypatch):
    fs = make(tmp_path / "cg", {"cgroup.procs": "", "cgroup.controllers": "", "cgroup.subtree_control": "memory pids"})
    self_cgroup = tmp_path / "self"
    self_cgroup.write_text("0::/\n")
    assert set(_cgroup_roots(str(fs), str(self_cgroup))) == {"pids", "memory"}
    monkeypatch.setenv("MAGRPO_EDU_SANDBOX_CGROUPS", "none")
    assert _cgroup_roots(str(fs), str(self_cgroup)) == {}


# ---- the judge, a module of its own ---------------------------------------------------------------------
def run_judge(plans, lines, tag="t"):
    head = json.dumps(dict(tag=tag, max_items=1000, max_depth=MAX_VALUE_DEPTH, max_line=10 ** 6,
                           safe_names=["len", "sorted", "True", "False", "None"],
                           plans=[{"kind": p.kind, "calls": list(p.calls), "code": p.code} for p in plans]))
    out = []
    judge.judge(io.BytesIO((head + "\n" + "".join(json.dumps(d) + "\n" for d in lines)).encode()), out.append)
    return [json.loads(line) for line in out]


def test_the_judge_runs_as_a_file_and_decides_from_the_values_alone():
    assert JUDGE_PATH.endswith("judge.py")
    plans = [_plan("assert f(2) == [1, 2]", "f"), _plan("assert len(f(3)) == 2", "f"), _plan("assert f(1) == 1", "f")]
    lines = [{"index": 0, "values": [["l", 1, 2]], "tag": "t"}, {"index": 1, "values": [["t", 1, 2, 3]], "tag": "t"},
             {"index": 0, "values": [["l"]], "tag": "t"},  # a second line for assert 0: the first counts
             {"index": 2, "status": "passed", "tag": "forged"}]  # another tag: not the harness's
    assert run_judge(plans, lines) == [[0, "passed", None, None], [1, "failed", "AssertionError", "len(f(3)) returned (1, 2, 3)"],
                                       [2, "missing", None, None]]


def test_the_judge_refuses_malformed_and_hash_flooded_values():
    with pytest.raises(judge.BadValue, match="hash flood"):
        judge.decode(["s"] + [k * (2 ** 61 - 1) for k in range(1000)], 0, [10 ** 6], MAX_VALUE_DEPTH)
    with pytest.raises(judge.BadValue, match="too large"):
        judge.decode(["l"] * 1 + [["l", ["l", 1]]], 0, [10 ** 6], 1)
    with pytest.raises(judge.BadValue, match="malformed"):
        judge.decode(["x", 1], 0, [10], MAX_VALUE_DEPTH)
    assert judge.decode(["d", "a", ["f", "1.5"], ["t", 1], ["y", "ff"]], 0, [10], MAX_VALUE_DEPTH) == {"a": 1.5, (1,): b"\xff"}
