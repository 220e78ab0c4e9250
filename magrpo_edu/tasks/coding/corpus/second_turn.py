"""Second-turn documents of the coding corpus: a first joint attempt, the level feedback, a better answer.

Why. The coding task's second turn (`MAGRPOConfig(num_turns=2)`, `tasks.coding.feedback.feedback_transition`)
gives each agent its first prompt, its own first answer and the level feedback ("# aux: found",
"# Tests: 1/4 passed", "# first failing: ...", "# Revise your function."), and asks again. A model
that never saw such a text answers it with nothing: the first `tiny-code` wrote an empty second
answer for 23-28 of 28 held-out problems per seed, before and after training, so the second turn had
no reward to learn from (experiments/coding_collaboration.md, the two-turn section). These documents
are that text followed by a better answer, so the model learns to answer the feedback with a program.

How one attempt is written (`second_turn_documents`):
1. a composed problem (`documents.code_problem`) with 4 asserts from its reference
   (`rows.composed_row`: never a held-out family, as every corpus problem);
2. a first joint attempt with the faults an untrained pair makes (`FIRST_HELPER`, `FIRST_MAIN`): a
   helper that does the whole job, is cut off mid-line, is another problem's helper or is empty; a
   main that ignores aux, only wraps it, is wrong, misspells the entry point's name or is cut off;
   and, in some attempts, no fault at all;
3. the feedback, written by the task's own transition (`feedback_transition`, so the text is exactly
   what a two-turn run shows: the programs run in the sandbox, in batches, `prefetch_feedback`);
4. for each agent, a document: its transition prompt, then the better answer: the item-level helper,
   or a cooperating multi-line main under the exact entry-point name (the first answer again where
   it was already one of those). In continued pretraining (`code_model.encode_batch`) the loss is on
   that answer only: the model is shown the faulty first answers, never taught to write them.

What it does not teach. The better answer is the corpus's best answer to the problem, not an edit
derived from the feedback's details: a model trained on it learns to answer the second turn with a
program (and to keep one that passed), not to debug; what MAGRPO's second turn then reinforces is up
to the run. The documents are never selected by a reward.
"""
from __future__ import annotations

import random
from typing import Optional

from ....sandbox import SandboxLimits
from ..data import coding_formatters
from ..feedback import feedback_transition, prefetch_feedback
from .documents import code_problem
from .rows import composed_row

ANSWER_AFTER = "# Revise your function.\n"
"""The feedback's last line: a second-turn document's answer follows it (its loss is on the answer only)."""

FIRST_HELPER = (("item", 0.50), ("whole", 0.15), ("cut", 0.12), ("other", 0.11), ("empty", 0.12))
"""Agent 1's first answers: the item-level helper (no fault), the whole-job helper, one cut off
mid-line, another problem's helper, nothing."""
FIRST_MAIN = (("multi", 0.22), ("one_line", 0.08), ("thin", 0.10), ("alone", 0.14), ("buggy", 0.14),
              ("misnamed", 0.17), ("cut", 0.10), ("empty", 0.05))
"""Agent 2's first answers: a cooperating multi-line main (no fault), a one-line use of aux, `return
aux(...)`, a main that ignores aux, a wrong one, the entry point misspelled, cut off, nothing."""


def _pick(rng: random.Random, shares) -> str:
    u, acc = rng.random(), 0.0
    for name, share in shares:
        acc += share
        if u < acc:
            return name
    return shares[-1][0]


def _cut(text: str, rng: random.Random) -> str:
    """`text` cut off inside its last two lines, as a sample that ran out of tokens."""
    lines = text.rstrip("\n").split("\n")
    keep = max(1, len(lines) - rng.randint(1, 2))
    tail = lines[keep] if keep < len(lines) else lines[-1]
    return "\n".join(lines[:keep]) + "\n" + tail[: rng.randint(4, max(5, len(tail) - 3))]


def _misspelled(name: str, rng: random.Random) -> str:
    """A name copied wrongly: a letter dropped, doubled or changed, or a prefix added."""
    i = rng.randrange(len(name))
    how = rng.choice(("drop", "double", "change", "prefix"))
    if how == "drop" and len(name) > 2:
        out = name[:i] + name[i + 1:]
    elif how == "double":
        out = name[:i] + name[i] + name[i:]
    elif how == "change":
        out = name[:i] + rng.choice("aeiostr") + name[i + 1:]
    else:
        out = rng.choice(("get_", "f_", "my_", "do_")) + name
    return out if out != name else name + "s"


def first_helper(p: dict, rng: random.Random) -> tuple[str, bool]:
    """Agent 1's first answer (step 2) and whether it is already the item-level helper."""
    kind = _pick(rng, FIRST_HELPER)
    if kind == "whole" and p["aux_whole"] is not None:
        return p["aux_whole"], False
    if kind == "cut":
        return _cut(p["aux"], rng), False
    if kind == "other":
        return code_problem(rng)["aux"], False
    if kind == "empty":
        return "", False
    return p["aux"], True


def first_main(p: dict, rng: random.Random) -> tuple[str, bool]:
    """Agent 2's first answer (step 2) and whether it is already a cooperating multi-line main."""
    kind = _pick(rng, FIRST_MAIN)
    if kind == "multi":
        return rng.choice(p["mains"]), True
    if kind == "misnamed":
        main = rng.choice(p["mains"])
        return main.replace(f"def {p['entry_point']}(", f"def {_misspelled(p['entry_point'], rng)}(", 1), False
    if kind == "cut":
        return _cut(rng.choice(p["mains"]), rng), False
    if kind == "empty":
        return "", False
    return p[f"main_{kind}"], False


def second_turn_attempts(seed: int, n: int) -> list[tuple[dict, tuple[str, str], tuple[str, str]]]:
    """Steps 1, 2 and 4's answers: `n` attempts (the problem's row, the first (aux, main), the better
    (aux, main)), seeded."""
    rng = random.Random(seed + 7919)
    attempts = []
    while len(attempts) < n:
        p = code_problem(rng)
        row = composed_row(p, rng)
        if row is None:
            continue
        (aux, aux_ok), (main, main_ok) = first_helper(p, rng), first_main(p, rng)
        better = (aux if aux_ok else p["aux"], main if main_ok else rng.choice(p["mains"]))
        attempts.append((row, (aux, main), better))
    return attempts


def second_turn_examples(seed: int = 0, n: int = 3000, limits: Optional[SandboxLimits] = None, batch: int = 128,
                         tokenizer=None) -> list[tuple[dict, list[str], tuple[str, str]]]:
    """`n` attempts (steps 1-4), seeded, as (the problem's row, each agent's second-turn prompt, the better (aux,
    main)): the prompt is the task's transition after the first attempt, in `tokenizer`'s chat template where it has
    one (the feedback as the user's next message, as a two-turn run of an instruct model shows it; None: the raw
    form the embedded models read). The attempts' programs run in sandbox batches of `batch`."""
    formatters, transition = coding_formatters(tokenizer), feedback_transition(limits, tokenizer=tokenizer)
    attempts = second_turn_attempts(seed, n)
    out = []
    for start in range(0, len(attempts), batch):
        chunk = attempts[start:start + batch]
        prefetch_feedback([(a, m, row) for row, (a, m), _ in chunk], limits)
        for row, first, better in chunk:
            prompts = [f(row) for f in formatters]
            out.append((row, transition(prompts, list(first), [[(q, c)] for q, c in zip(prompts, first)], row), better))
    return out


def second_turn_documents(seed: int = 0, n: int = 6000, limits: Optional[SandboxLimits] = None,
                          batch: int = 128) -> list[str]:
    """`n` documents (steps 1-4; two per attempt, agent 1's then agent 2's), seeded: each agent's second-turn prompt
    (`second_turn_examples`, the raw form), then its better answer. Runs about n / 2 programs in the sandbox (a
    minute or two on 2 cores for the default n)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"second_turn_documents: n={n!r} must be an integer >= 0.")
    examples = second_turn_examples(seed, (n + 1) // 2, limits, batch)
    return [nxt + answer for _, nexts, better in examples for nxt, answer in zip(nexts, better)][:n]
