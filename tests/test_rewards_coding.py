"""The coding reward against hand-computed values (spec section 5), one case per level and rule;
the programs run in the sandbox. Problem: count_vowels with 4 asserts."""
import pytest

from magrpo_edu.rewards.coding import (SINGLE_AGENT_MAX, calls_aux, clean_code, coding_joint_reward, coding_levels,
                                       coding_reward, is_thin_wrapper, single_agent_coding_reward)
from magrpo_edu.tasks.coding import extract_asserts, load_coding

P = next(r for r in load_coding("train") if r["entry_point"] == "count_vowels")
AUX = "def aux(c):\n    return c.lower() in 'aeiou'\n"
MAIN_COOP = "def count_vowels(s):\n    n = 0\n    for c in s:\n        if aux(c):\n            n += 1\n    return n\n"
MAIN_ALONE = "def count_vowels(s):\n    return sum(1 for c in s.lower() if c in 'aeiou')\n"
MAIN_THIN = "def count_vowels(s):\n    return aux(s)\n"
AUX_FOR_THIN = "def aux(s):\n    return sum(1 for c in s.lower() if c in 'aeiou')\n"
MAIN_HALF = "def count_vowels(s):\n    return sum(1 for c in s if aux(c) and c.islower())\n"  # fails 'AEIOU xyz' and...


def test_problem_has_four_asserts():
    assert len(extract_asserts(P["test"], "count_vowels")) == 4


@pytest.mark.parametrize("aux,main,expected", [
    ("", "", 0.0),                                     # nothing defined: L1 main fails -> stop
    (AUX, "print('hi')", 0.4),                         # aux +0.4 (never stops), no main -> stop
    (AUX, "def count_vowels(s):\n    return (\n", 0.4 + 0.6),   # main found by text, program does not parse -> stop
    (AUX, "def count_vowels(s):\n    return -1\n", 0.4 + 0.6 + 0.5 + 0.0),  # parses, 0/4 tests -> no cooperation bonus
    (AUX, MAIN_COOP, 0.4 + 0.6 + 0.5 + 1.0 + 0.5 + 1.0),          # everything: 4.0
    (AUX_FOR_THIN, MAIN_THIN, 0.4 + 0.6 + 0.5 + 1.0 + 0.5),       # thin wrapper: no +1.0
    (AUX, MAIN_ALONE, 0.4 + 0.6 + 0.5 + 1.0),                     # passes, ignores aux: no bonus
    ("", MAIN_ALONE, 0.6 + 0.5 + 1.0),                            # no aux at all: 2.1
])
def test_levels(aux, main, expected):
    assert coding_reward(aux, main, P) == pytest.approx(expected)


def test_partial_tests_count_as_a_fraction():
    lv = coding_levels(AUX, MAIN_HALF, P)
    # 'hello' -> 2 ok, 'AEIOU xyz' -> 0 != 5, '' -> 0 ok, 'banana' -> 3 ok: 3/4
    assert (lv["passed"], lv["total"]) == (3, 4)
    assert lv["total_reward"] == pytest.approx(0.4 + 0.6 + 0.5 + 0.75 + 0.5 + 1.0)


def test_thin_wrapper_assign_then_return_form():
    main = "def count_vowels(s):\n    \"\"\"doc\"\"\"\n    x = aux(s)\n    return x\n"
    assert is_thin_wrapper(main, "count_vowels") and calls_aux(main, "count_vowels")
    assert not is_thin_wrapper(MAIN_COOP, "count_vowels")


def test_markdown_and_prose_are_cleaned():
    text = "Sure! Here is the helper:\n```python\n" + AUX + "```\nIt checks vowels."
    assert clean_code(text) == AUX
    assert clean_code("Some prose\n" + MAIN_COOP + "print(count_vowels('a'))\n") == MAIN_COOP
    assert coding_reward(text, "Answer:\n" + MAIN_COOP + "\nDone.", P) == pytest.approx(4.0)


def test_single_agent_variant_max_is_2_1():
    assert single_agent_coding_reward(MAIN_ALONE, P) == pytest.approx(SINGLE_AGENT_MAX) == pytest.approx(2.1)
    assert single_agent_coding_reward(AUX + MAIN_COOP, P) == pytest.approx(0.6 + 0.5 + 1.0)  # aux earns nothing alone


def test_hostile_completion_scores_low_and_returns():
    loop = "def count_vowels(s):\n    while True:\n        pass\n    return 0\n"
    lv = coding_levels(AUX, loop, P)
    assert lv["passed"] == 0 and lv["total_reward"] == pytest.approx(1.5)


def test_joint_reward_for_the_trainer():
    out = coding_joint_reward([[AUX, AUX, ""], [MAIN_COOP, MAIN_ALONE, "nothing"]], P)
    assert out["total"] == pytest.approx([4.0, 2.5, 0.0])
    assert out["calls_aux"] == [0.5, 0.0, 0.0] and out["tests"] == [1.0, 1.0, 0.0]


def test_level_feedback_names_what_is_wrong():
    from magrpo_edu.rewards.coding import level_feedback

    fb = level_feedback(AUX, MAIN_HALF, P)
    assert "aux: found" in fb and "syntax: OK" in fb and "Tests: 3/4 passed" in fb
    assert "first failing: assert count_vowels('AEIOU xyz') == 5 -> AssertionError" in fb and fb.endswith("# Revise your function.")
    fb = level_feedback("", "def count_vowels(s):\n    return (\n", P)
    assert "aux: missing" in fb and "SyntaxError at line" in fb and "col" in fb
    assert "does not call aux" in level_feedback(AUX, MAIN_ALONE, P)
    assert "only wraps aux" in level_feedback(AUX_FOR_THIN, MAIN_THIN, P)


def test_feedback_transition_in_a_two_turn_run(make_model, small_tokenizer):
    from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, lora_agents
    from magrpo_edu.rewards.coding import feedback_transition
    from magrpo_edu.tasks.coding import coding_formatters

    seen = []
    inner = feedback_transition()

    def spy(prompts, completions, histories, row):
        out = inner(prompts, completions, histories, row)
        seen.append(out)
        return out

    cfg = MAGRPOConfig(num_turns=2, num_generations=2, max_new_tokens=8, max_steps=1, progress=False)
    tr = MAGRPOTrainer(lora_agents(make_model(), 2, tokenizer=small_tokenizer), coding_joint_reward, coding_formatters(),
                       [P], cfg, transition=spy)
    tr.train()
    assert len(seen) == 2 and all("Revise your function." in p for out in seen for p in out)
    assert tr.history[-1]["nodes"] == 3.0 and "reward/tests" in tr.history[-1]
