"""The writing rewards against values computed by hand (spec section 5, with section 8's
corrections: the authors' word lists, substring matching, a category counted once, arXiv T on c1
and c2 joined with no separator): every threshold boundary, inside every ramp, each gate, and
whole texts worked through level by level."""
import json
import math
from pathlib import Path

import pytest

from magrpo_edu.rewards import (arxiv_joint_reward, arxiv_levels, arxiv_reward, coherence_T, jaccard,
                                length_ratio_joint_reward, length_ratio_reward,
                                tldr_joint_reward, tldr_levels, tldr_reward, transition_categories)
from magrpo_edu.tasks.writing.reward import (STOPWORDS, TRANSITION_CATEGORIES, arxiv_length_level, arxiv_unique_level,
                                        tldr_length_level, tldr_unique_level)

SPEC_LISTS = Path(__file__).resolve().parents[2] / "shared" / "reference" / "reward-word-lists.json"


def test_word_lists_are_the_authors():
    # Pinned here by size and by a few members, and against the spec's JSON where the checkout has
    # ../shared beside it (CI always does).
    assert len(STOPWORDS) == 106 and {"bad", "good", "great", "us", "first", "last"} <= STOPWORDS
    assert "during" not in STOPWORDS and "about" not in STOPWORDS  # in common stopword lists, not in theirs
    assert list(TRANSITION_CATEGORIES) == ["elaboration", "examples", "explanation", "cause_effect", "contrast",
                                           "sequence", "emphasis", "summary", "comparison", "concession",
                                           "condition", "time"]
    assert [len(v) for v in TRANSITION_CATEGORIES.values()] == [21, 22, 22, 26, 29, 33, 24, 21, 17, 19, 19, 26]
    assert {"as", "when", "recently"} <= set(TRANSITION_CATEGORIES["time"])
    assert {"should", "were", "had"} <= set(TRANSITION_CATEGORIES["condition"])
    if SPEC_LISTS.exists():
        spec = json.loads(SPEC_LISTS.read_text())
        assert STOPWORDS == set(spec["stopwords"])
        assert {k: list(v) for k, v in TRANSITION_CATEGORIES.items()} == spec["transition_categories"]

STOP = None


@pytest.mark.parametrize("r,expected", [
    (1.09, STOP), (1.1, 0.0), (1.35, 0.5), (1.6, 1.0), (2.4, 1.0), (3.2, 1.0), (4.1, 0.5), (5.0, 0.0), (5.01, STOP)])
def test_tldr_length_level(r, expected):
    got = tldr_length_level(r)
    assert got is None if expected is STOP else got == pytest.approx(expected)


@pytest.mark.parametrize("u,expected", [(1.29, STOP), (1.3, 0.0), (1.65, 0.25), (2.0, 0.5), (7.0, 0.5)])
def test_tldr_unique_level(u, expected):
    got = tldr_unique_level(u)
    assert got is None if expected is STOP else got == pytest.approx(expected)


@pytest.mark.parametrize("r,expected", [
    (0.79, STOP), (0.8, 0.0), (0.9, 0.5), (1.0, 1.0), (1.15, 1.0), (1.3, 1.0), (1.4, 0.5), (1.5, 0.0), (1.51, STOP)])
def test_arxiv_length_level(r, expected):
    got = arxiv_length_level(r)
    assert got is None if expected is STOP else got == pytest.approx(expected)


@pytest.mark.parametrize("u,expected", [
    (0.49, STOP), (0.5, 0.0), (0.6, 0.25), (0.7, 0.5), (1.0, 0.5), (1.3, 0.5), (1.5, 0.25), (1.7, 0.0), (1.71, STOP)])
def test_arxiv_unique_level(u, expected):
    got = arxiv_unique_level(u)
    assert got is None if expected is STOP else got == pytest.approx(expected)


def test_coherence_T_counts_categories():
    assert coherence_T("plain words only") == 0.0
    assert coherence_T("therefore thus hence") == pytest.approx(0.4)  # three phrases, one category: k = 1
    assert coherence_T("however") == pytest.approx(0.45)  # in both contrast and concession: k = 2
    assert coherence_T("however, for example") == pytest.approx(0.5)  # + examples: k = 3
    every = " ".join(words[0] for words in TRANSITION_CATEGORIES.values())
    assert len(transition_categories(every)) == 12
    assert coherence_T(every) == pytest.approx(0.95)  # 0.4 + 0.05 * 11: the reachable maximum, not 1.0


def test_transitions_match_substrings_a_documented_quirk():
    assert transition_categories("has") == {"time"}  # "as" inside "has"
    assert coherence_T("She has it") == pytest.approx(0.4)
    assert transition_categories("also") == {"elaboration", "cause_effect"}  # "also", and "so" inside it
    assert transition_categories("ALSO") == transition_categories("also")  # lower-cased first


def test_jaccard_without_stopwords():
    assert jaccard("the cat sat", "a cat ran") == pytest.approx(1 / 3)  # {cat, sat} vs {cat, ran}
    assert jaccard("the a", "of and") == 1.0  # both empty after stopwords


# ---- whole TL;DR texts, level by level --------------------------------------------------------------
C1 = "My roommate never cleans the kitchen at all"  # 8 words, 43 chars, 8 unique words
C2 = "However, my roommate never cleans the kitchen. As a result, dishes pile up, so I asked him twice."


def test_tldr_worked_example():
    # L1: 8 and 18 words -> +0.5. L2: 97/43 = 2.256 in [1.6, 3.2] -> +1.0. L3: 18/8 = 2.25 >= 2 -> +0.5.
    # L4: categories in c2: contrast and concession ("however"), cause_effect ("as a result", "so"),
    #     time ("as", inside "as a result") -> k = 4, T = 0.4 + 3*0.05 = 0.55;
    #     words without the authors' stopwords: c1 {roommate, never, cleans, kitchen} is inside
    #     c2's 11 {however, roommate, never, cleans, kitchen, result, dishes, pile, up, asked, twice}
    #     -> J = 4/11 -> min(J, 0.03)/0.03 = 1 -> style = 0.4*0.55 + 0.6*1 = 0.82.
    assert (len(C1), len(C2)) == (43, 97)
    lv = tldr_levels(C1, C2)
    assert lv == pytest.approx(dict(structure=0.5, length_ratio=1.0, uniqueness=0.5, coherence=0.55, consistency=1.0,
                                    style=0.82, total=2.82))
    assert tldr_reward(C1, C2) == pytest.approx(2.82)


def test_tldr_structure_gate():
    seven = "one two three four five six seven"
    assert tldr_levels(seven, C2)["total"] == 0.0
    assert tldr_reward(C1, " ".join(["w"] * 257)) == 0.0
    assert tldr_reward(C1, " ".join(["w"] * 256)) > 0  # 256 words is inside


def test_tldr_length_gate_keeps_structure_points():
    # 8 words each, same text: r = 1.0 < 1.1 -> stop after L1 with 0.5
    assert tldr_levels(C1, C1) == pytest.approx(dict(structure=0.5, length_ratio=0, uniqueness=0, coherence=0,
                                                     consistency=0, style=0, total=0.5))


def test_tldr_ramps_in_l2_and_l3_with_no_transitions():
    c1 = "qqqqq " + " ".join(["qqqq"] * 7)  # 8 words, 40 chars, unique {qqqqq, qqqq}
    c2 = "zzz xxxxx qqqq " + " ".join(["zzz"] * 10)  # 13 words, 54 chars, unique {zzz, xxxxx, qqqq}
    assert (len(c1), len(c2)) == (40, 54)
    # L2: r = 1.35 -> (1.35-1.1)/0.5 = 0.5. L3: u = 3/2 = 1.5 -> 0.5*(0.2/0.7) = 1/7.
    # L4: T = 0 (no category); Jaccard {qqqq}/{qqqqq,qqqq,zzz,xxxxx} = 0.25 -> capped to 1 -> style 0.6.
    lv = tldr_levels(c1, c2)
    assert lv["length_ratio"] == pytest.approx(0.5) and lv["uniqueness"] == pytest.approx(1 / 7)
    assert lv["coherence"] == 0.0 and lv["consistency"] == 1.0
    assert lv["total"] == pytest.approx(0.5 + 0.5 + 1 / 7 + 0.6)


def test_tldr_uniqueness_gate():
    c1 = "qqqqq " + " ".join(["qqqq"] * 7)  # unique 2
    c2 = " ".join(["zzz"] * 20)  # 79 chars: r = 1.975 -> L2 = 1; unique 1 -> u = 0.5 < 1.3 -> stop
    assert tldr_levels(c1, c2)["total"] == pytest.approx(1.5)


def test_tldr_jaccard_ramp_below_cap():
    # 99 distinct words in c1, 1 shared of 199 total distinct -> J = 1/199 < 0.03 -> (1/199)/0.03
    c1 = " ".join(f"a{i}" for i in range(99)) + " shared"
    c2 = " ".join(f"b{i}" for i in range(240)) + " shared"
    lv = tldr_levels(c1, c2)
    J = 1 / (100 + 241 - 1)
    assert lv["consistency"] == pytest.approx(min(J, 0.03) / 0.03)


# ---- arXiv ----------------------------------------------------------------------------------------
def test_arxiv_worked_example():
    bg = " ".join(f"w{i}" for i in range(128))  # 128 words, exactly the lower bound
    md = " ".join(f"w{i}" for i in range(64)) + " " + " ".join(f"m{i}" for i in range(64)) + " however"
    # chars: bg = 10*2 + 90*3 + 28*4 + 127 = 529; md = (10*2+54*3) + (10*2+54*3) + 7 + 128 spaces = 499
    assert (len(bg), len(md)) == (529, 499)
    lv = arxiv_levels(bg, md)
    # L2: r = 499/529 = 0.9433 -> (r-0.8)/0.2; L3: u = 129/128 -> 0.5; T on both: "however" is in
    # contrast and concession -> k = 2, T = 0.45; J = 64/(128+65) = 0.3316 -> capped at 0.23 -> 1.0;
    # style = 0.4*0.45 + 0.6 = 0.78.
    r = 499 / 529
    assert lv["length_ratio"] == pytest.approx((r - 0.8) / 0.2)
    assert lv["uniqueness"] == 0.5 and lv["coherence"] == pytest.approx(0.45) and lv["consistency"] == 1.0
    assert arxiv_reward(bg, md) == pytest.approx(0.5 + (r - 0.8) / 0.2 + 0.5 + 0.78)


def test_arxiv_structure_gate_127_words():
    assert arxiv_reward(" ".join(["w"] * 127), " ".join(["w"] * 130)) == 0.0


def test_arxiv_coherence_reads_both_texts():
    bg = " ".join(f"w{i}" for i in range(130)) + " however"
    md = " ".join(f"w{i}" for i in range(131))
    assert arxiv_levels(bg, md)["coherence"] == pytest.approx(0.45)  # found only in agent 1's text


def test_arxiv_coherence_joins_the_texts_with_no_separator():
    # Agent 1 ends with "w", agent 2 starts with "hen": joined with no separator they read "when"
    # (time), a phrase neither text has. With a space between them T would be 0.
    bg = " ".join(f"x{i}" for i in range(129)) + " w"
    md = "hen " + " ".join(f"x{i}" for i in range(129))
    assert coherence_T(bg) == coherence_T(md) == coherence_T(bg + " " + md) == 0.0
    lv = arxiv_levels(bg, md)
    assert lv["uniqueness"] == 0.5 and lv["coherence"] == pytest.approx(0.4)


# ---- the quick-demo length-ratio reward ---------------------------------------------------------------
@pytest.mark.parametrize("n2,expected", [(20, 1.0), (25, 1.0), (30, 1.0), (15, math.exp(-0.5)), (40, math.exp(-1.0)), (0, math.exp(-2.0))])
def test_length_ratio_reward(n2, expected):
    assert length_ratio_reward("x" * 10, "y" * n2) == pytest.approx(expected)
    assert length_ratio_reward("", "abc") == 0.0


def test_joint_wrapper_reports_components():
    out = tldr_joint_reward([[C1, C1], [C2, C1]], row={})
    assert out["total"] == pytest.approx([2.82, 0.5]) and out["coherence"] == pytest.approx([0.55, 0.0])


def test_ramps_use_the_authors_arithmetic():
    # 5.0 - 3.2 is 1.7999999999999998 in floats, so 1 - (r - 3.2) / (5.0 - 3.2) can differ from
    # 1 - (r - 3.2) / 1.8 in the last bit; the authors' form is kept, so totals compare with ==.
    r = 3.4804020100502515
    assert tldr_length_level(r) == 1.0 - ((r - 3.2) / (5.0 - 3.2)) != 1.0 - (r - 3.2) / 1.8
    r = 0.95
    assert arxiv_length_level(r) == (r - 0.8) / (1.0 - 0.8)


def test_ramp_levels_equal_the_authors_literal_arithmetic_to_the_last_bit():
    """`ramp_level` serves all four ramps; each must give the float the authors' own if-chain gives."""
    import struct

    def authors_tldr_length(r):
        if 1.6 <= r <= 3.2:
            return 1.0
        if 1.1 <= r < 1.6:
            return (r - 1.1) / (1.6 - 1.1)
        if 3.2 < r <= 5.0:
            return 1.0 - ((r - 3.2) / (5.0 - 3.2))
        return None

    def authors_tldr_unique(u):
        if u >= 2.0:
            return 0.5
        if 1.3 <= u < 2.0:
            return ((u - 1.3) / (2.0 - 1.3)) * 0.5
        return None

    def authors_arxiv_length(r):
        if 1.0 <= r <= 1.3:
            return 1.0
        if 0.8 <= r < 1.0:
            return (r - 0.8) / (1.0 - 0.8)
        if 1.3 < r <= 1.5:
            return 1.0 - ((r - 1.3) / (1.5 - 1.3))
        return None

    def authors_arxiv_unique(u):
        if 0.7 <= u <= 1.3:
            return 0.5
        if 0.5 <= u < 0.7:
            return 0.5 * (u - 0.5) / (0.7 - 0.5)
        if 1.3 < u <= 1.7:
            return 0.5 * (1.0 - ((u - 1.3) / (1.7 - 1.3)))
        return None

    xs = [i / 1000 for i in range(7001)] + [0.8, 1.1, 1.3, 1.5, 1.6, 1.7, 2.0, 3.2, 5.0, float("inf")]
    xs += [math.nextafter(x, d) for x in xs for d in (0.0, 10.0)]
    for ours, theirs in [(tldr_length_level, authors_tldr_length), (tldr_unique_level, authors_tldr_unique),
                         (arxiv_length_level, authors_arxiv_length), (arxiv_unique_level, authors_arxiv_unique)]:
        for x in xs:
            a, b = ours(x), theirs(x)
            assert (a is None) == (b is None), (ours.__name__, x)
            if a is not None:
                assert struct.pack("d", a) == struct.pack("d", b), (ours.__name__, x, a, b)


@pytest.mark.parametrize("joint,pair", [(tldr_joint_reward, "tldr_levels"), (arxiv_joint_reward, "arxiv_levels"),
                                        (length_ratio_joint_reward, "length_ratio_reward")])
def test_joint_rewards_refuse_bare_texts_where_a_list_per_agent_belongs(joint, pair):
    """`completions` is [agent 1's texts, agent 2's texts]. Two bare strings in one list used to be scored letter by
    letter (43 all-zero rows for a 43-character text), and the texts as two arguments failed with "scores 2 agents,
    got 43": both are refused, with the call's shape in the message."""
    c1 = " My dog barks at night and the neighbours complain."
    c2 = c1 + " It worries me a lot, and I do not know why, so I asked a vet."
    for call in (lambda: joint([c1, c2]), lambda: joint(c1, c2), lambda: joint([[c1], c2]), lambda: joint((c1, c2))):
        with pytest.raises(TypeError) as refused:
            call()
        said = str(refused.value)
        assert "[agent 1's texts, agent 2's texts]" in said and f"{joint.__name__}([[c1], [c2]])" in said, said
        assert f"{pair}(c1, c2)" in said, said
    with pytest.raises(TypeError, match="two arguments"):
        joint(c1, c2)
    one = joint([[c1], [c2]])                               # the right shape: one joint action, one row
    assert len(one["total"] if isinstance(one, dict) else one) == 1
    assert joint(iter([[c1], [c2]])) == one                 # any iterable of per-agent lists, read once
