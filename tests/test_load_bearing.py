"""Is the helper load-bearing (the main passes fewer tests with aux replaced by a stub returning None)? And the
strict coding reward that pays cooperation only then. The programs run in the sandbox (slow lane)."""
import pytest

from magrpo_edu.tasks.coding import CODING, CODING_STRICT, coding_batch_levels, coding_metrics
from magrpo_edu.tasks.coding.data import load_coding
from magrpo_edu.tasks.coding.load_bearing import (STUB_AUX, load_bearing_many, strict_coding_joint_reward,
                                                  strict_levels_many)
from magrpo_edu.tasks.coding.reward import LEVELS, coding_joint_reward, coding_levels_many
from magrpo_edu.tasks.registry import get_task

pytestmark = pytest.mark.slow

P = next(r for r in load_coding("train") if r["entry_point"] == "count_vowels")
AUX = "def aux(c):\n    return c.lower() in 'aeiou'\n"
MAIN_COOP = "def count_vowels(s):\n    n = 0\n    for c in s:\n        if aux(c):\n            n += 1\n    return n\n"
# calls aux and drops its result: the authors' reward pays the whole cooperation bonus (4.0)
MAIN_DROPS = ("def count_vowels(s):\n    n = 0\n    for c in s:\n        v = aux(c)\n        n += c.lower() in 'aeiou'\n"
              "    return n\n")
MAIN_ALONE = "def count_vowels(s):\n    return sum(1 for c in s.lower() if c in 'aeiou')\n"
MAIN_WRONG_COOP = "def count_vowels(s):\n    return -1 if aux(s) else -2\n"  # calls aux, passes no test
# uses aux, but only where its answer does not matter for the tests: None and False read the same
MAIN_FALSY = "def count_vowels(s):\n    n = 0\n    for c in s:\n        if c == '#' and aux(c):\n            n += 99\n        n += c.lower() in 'aeiou'\n    return n\n"
FULL = 0.4 + 0.6 + 0.5 + 1.0 + 0.5 + 1.0


def test_the_stub_accepts_any_call_and_returns_none():
    ns = {}
    exec(STUB_AUX, ns)
    assert ns["aux"]() is None and ns["aux"](1, 2, k=3) is None


def test_load_bearing_reads_behaviour_not_text():
    mains = [MAIN_COOP, MAIN_DROPS, MAIN_ALONE, MAIN_WRONG_COOP, MAIN_FALSY]
    got = load_bearing_many([AUX] * 5, mains, [P] * 5)
    assert got == [True, False, False, False, False]
    # the authors' cooperation level (text) is earned by the first two and the last: it cannot tell them apart
    lv = coding_levels_many([AUX] * 5, mains, [P] * 5)
    assert [v["calls_aux"] > 0 for v in lv] == [True, True, False, False, True]
    assert lv[0]["total_reward"] == lv[1]["total_reward"] == pytest.approx(FULL)


def test_only_cooperating_answers_run_again(monkeypatch):
    from magrpo_edu.tasks.coding import reward

    lv = coding_levels_many([AUX, AUX], [MAIN_COOP, MAIN_ALONE], [P, P])
    jobs = []
    real = reward._RUNS.run
    monkeypatch.setattr(reward._RUNS, "run", lambda js, limits: jobs.extend(js) or real(js, limits))
    assert load_bearing_many([AUX, AUX], [MAIN_COOP, MAIN_ALONE], [P, P], lv) == [True, False]
    assert len(jobs) == 1 and STUB_AUX in jobs[0][0]


def test_strict_reward_pays_cooperation_only_for_a_load_bearing_helper():
    mains = [MAIN_COOP, MAIN_DROPS, MAIN_ALONE]
    strict = strict_levels_many([AUX] * 3, mains, [P] * 3)
    authors = coding_levels_many([AUX] * 3, mains, [P] * 3)
    assert [s["total_reward"] for s in strict] == pytest.approx([FULL, FULL - 1.5, FULL - 1.5])
    assert [a["total_reward"] for a in authors] == pytest.approx([FULL, FULL, FULL - 1.5])
    for s, a in zip(strict, authors):  # correctness is the authors'
        assert all(s[k] == a[k] for k in ("aux_defined", "main_defined", "syntax", "tests"))
    out = strict_coding_joint_reward([[AUX] * 3, mains], P)
    assert set(out) == {"total", *LEVELS, "load_bearing"} and out["load_bearing"] == [1.0, 0.0, 0.0]
    assert out["total"] == [s["total_reward"] for s in strict]
    assert coding_joint_reward([[AUX] * 3, mains], P)["total"] == [a["total_reward"] for a in authors]  # unchanged


def test_tables_report_the_load_bearing_rate_beside_cooperation():
    answers = [[AUX] * 4, [MAIN_COOP, MAIN_DROPS, MAIN_ALONE, MAIN_COOP]]
    lv = coding_batch_levels(answers, [P] * 4)
    assert [v["load_bearing"] for v in lv] == [1.0, 0.0, 0.0, 1.0]
    m = coding_metrics([lv[:2], lv[2:]], ks=(1, 2))
    assert m["cooperation_rate"] == 0.75 and m["load_bearing_rate"] == 0.5
    single = coding_batch_levels(answers, [P] * 4, single=True)
    assert all(v["load_bearing"] == 0.0 for v in single)


def test_the_strict_task_is_registered_and_the_default_stays_the_authors():
    t = get_task("coding-strict")
    assert t is CODING_STRICT and t.joint_reward is strict_coding_joint_reward
    assert get_task("coding").joint_reward is coding_joint_reward is CODING.joint_reward
    assert t.single_max() == CODING.single_max() and t.component_max() == CODING.component_max()
    lv = t.score([[AUX, AUX], [MAIN_COOP, MAIN_DROPS]], [P, P])
    assert [v["total"] for v in lv] == pytest.approx([FULL, FULL - 1.5])


def test_per_test_outcomes_agree_with_the_reward_and_fail_every_test_of_a_program_that_never_ran():
    from magrpo_edu.tasks.coding.reward import assert_outcomes_many
    mains = [MAIN_COOP, MAIN_WRONG_COOP, "def count_vowels(s)\n    return 0\n", ""]
    out = assert_outcomes_many([AUX] * 4, mains, [P] * 4)
    lv = coding_levels_many([AUX] * 4, mains, [P] * 4)
    assert [sum(o) for o in out] == [v["passed"] for v in lv]
    assert all(len(o) == lv[0]["total_asserts"] > 0 for o in out)
    assert all(out[0]) and not any(out[2]) and not any(out[3])
    with pytest.raises(ValueError, match="one of each per joint answer"):
        assert_outcomes_many([AUX], mains, [P])


def test_what_a_second_turn_fixed_and_broke_is_read_test_by_test():
    from magrpo_edu.tasks.coding.analysis import fixed_and_broken
    first = [[True, False, False], [True, True, True], [False, False, False], [True, False, True]]
    second = [[True, True, False], [True, False, True], [False, False, False], [False, True, True]]
    got = fixed_and_broken(first, second)
    # answer 0 fixes a test, 1 breaks one, 2 does nothing, 3 does both: each share counts it once
    assert (got["fixed"], got["broke"]) == (0.5, 0.5)
    assert (got["pass_all_first"], got["pass_all_second"], got["answers"]) == (0.25, 0.0, 4)
    with pytest.raises(ValueError, match="same joint actions"):
        fixed_and_broken(first, second[:3])
    with pytest.raises(ValueError, match="same joint actions"):
        fixed_and_broken([[True]], [[True, False]])
