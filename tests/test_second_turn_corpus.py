"""The coding corpus's second-turn documents (`tasks.coding.corpus.second_turn`): the exact text a two-turn run's
second prompt is, a program after it, no held-out problem in them, seeded."""
from __future__ import annotations

import ast
import re

import pytest

from magrpo_edu.tasks.coding.corpus.second_turn import _cut, _misspelled, second_turn_attempts, second_turn_documents
from magrpo_edu.tasks.coding.data import extract_asserts, load_coding
from magrpo_edu.tasks.coding.prompts import CODING_INSTRUCTIONS
from magrpo_edu.tasks.coding.reward import coding_levels
from magrpo_edu.tasks.coding.reading import extract_function, has_return

from conftest import held_out_correct_bodies as _held_out_correct_bodies  # shared test helpers: tests/conftest.py

N = 600


@pytest.fixture(scope="module")
def docs() -> list[str]:
    return second_turn_documents(seed=0, n=N)


def _split(doc: str) -> tuple[str, str, str]:
    """(the problem prompt, the first answer and feedback, the second answer) of one document."""
    head, answer = doc.split("# Revise your function.\n", 1)
    return head, head, answer


def test_documents_are_the_transition_text_then_a_program(docs):
    """Each document is agent k's first prompt, its own first answer, the feedback lines (every one
    starting "# "), "# Revise your function.", then a program that defines the agent's function with
    a return under its exact name."""
    assert len(docs) == N
    for k, doc in enumerate(docs):
        agent = k % 2
        assert doc.startswith(CODING_INSTRUCTIONS[agent] + "\n"), doc[:80]
        assert doc.count("# Revise your function.\n") == 1
        head, _, answer = _split(doc)
        entry = re.search(r"^def (\w+)\(", head.split("\n", 1)[1], flags=re.M).group(1)
        feedback = head[head.index("# aux: "):]
        assert all(line.startswith("# ") for line in feedback.splitlines()), feedback
        assert f"# {entry}: " in feedback
        name = "aux" if agent == 0 else entry
        fn = extract_function(answer, name)
        assert fn and has_return(fn), (name, answer)
        assert answer.lstrip().startswith(f"def {name}("), answer


def test_second_answers_earn_the_full_reward_together():
    """The better answers of the first 40 attempts, scored by the task's reward on their problem: every
    pair earns the full 4.0 (defined, parses, all tests, calls aux, not a thin wrapper)."""
    for row, _, (aux, main) in second_turn_attempts(0, 40):
        lv = coding_levels(aux, main, row)
        assert lv["total_reward"] == pytest.approx(4.0), (aux, main, lv)


def test_first_attempts_show_every_kind_of_feedback(docs):
    """The first attempts carry the faults an untrained pair makes, so the feedback takes every form."""
    text = "\n".join(docs)
    for line in ("# aux: missing", "# aux: found", "missing (define it with a return)", "# syntax: SyntaxError",
                 "# Tests: 4/4 passed", "# Tests: 0/4 passed", "# first failing: assert ", "does not call aux",
                 "only wraps aux"):
        assert line in text, line
    # an empty first answer: the prompt (instruction, def line, docstring), the empty answer's line, the feedback
    empty_first = sum(1 for d in docs[::2] if d.split("\n")[3:5] == ["", "# aux: missing (define aux with a return)"])
    assert empty_first > 10


def test_no_held_out_problem_appears(docs):
    """No held-out name, docstring, assert or correct main body (the coding corpus's own leak rules;
    assert lines appear only inside the feedback's "first failing" line, about composed problems)."""
    text = "\n".join(docs)
    for r in load_coding("eval"):
        name = r["entry_point"]
        assert not re.search(rf"\b{name}\s*\(", text), name
        assert ast.get_docstring(ast.parse(r["prompt"]).body[0]) not in text
        for a in extract_asserts(r["test"], name):
            assert a not in text
    for line in text.splitlines():
        assert "assert" not in line or line.startswith("# first failing: assert "), line
    held, bodies = _held_out_correct_bodies(), set()
    for doc in docs:
        for m in re.finditer(r"^def \w+\([^)]*\):\n((?:    .*\n?)+)", doc, flags=re.M):
            bodies.add(m.group(1).rstrip())
    assert not held & bodies


def test_seeded_and_checked():
    assert second_turn_documents(seed=3, n=6) == second_turn_documents(seed=3, n=6)
    assert second_turn_documents(seed=3, n=6) != second_turn_documents(seed=4, n=6)
    assert second_turn_documents(n=0) == []
    for bad in (-1, 2.5, True):
        with pytest.raises(ValueError, match="integer >= 0"):
            second_turn_documents(n=bad)


def test_faults_are_faults():
    import random

    rng = random.Random(0)
    for _ in range(50):
        assert _misspelled("count_odd", rng) != "count_odd"
    cut = _cut("def aux(x):\n    return x % 2 == 1\n", random.Random(1))
    assert cut != "def aux(x):\n    return x % 2 == 1"


def test_pretraining_loss_is_on_the_second_answer_only(docs):
    """Continued pretraining (`code_model.encode_batch`) shows the faulty first answer and the feedback but
    scores only the better answer (and EOS); a first-turn document is scored whole; the prompt part is
    tokenized alone, as a two-turn run tokenizes its second prompt."""
    from magrpo_edu.models import load_model
    from magrpo_edu.pretraining.code_model import encode_batch
    from magrpo_edu.tasks.coding.corpus.second_turn import ANSWER_AFTER

    _, tok = load_model("tiny-code")
    plain = "def aux(x):\n    return x + 1\n"
    enc, labels = encode_batch(tok, [docs[1], plain], 384, "cpu")
    prompt, answer = docs[1].rsplit(ANSWER_AFTER, 1)
    scored = [t for t in labels[0].tolist() if t != -100]
    assert tok.decode(scored) == answer + tok.eos_token
    n_prompt = len(tok(tok.bos_token + prompt + ANSWER_AFTER, add_special_tokens=False).input_ids)
    assert enc["input_ids"][0, :n_prompt].tolist() == tok(tok.bos_token + prompt + ANSWER_AFTER, add_special_tokens=False).input_ids
    assert (labels[0, :n_prompt] == -100).all()
    n_plain = int(enc["attention_mask"][1].sum())
    assert labels[1, :n_plain].tolist() == enc["input_ids"][1, :n_plain].tolist()
    assert (labels[1, n_plain:] == -100).all() and (enc["attention_mask"][1, n_plain:] == 0).all()
