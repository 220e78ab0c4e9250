"""The embedded tiny model's pretraining corpus: a seeded generator from the tasks' own world.

What it writes (each document ends with the model's EOS token at tokenisation time):
  * TL;DR documents: a post, one of the two agents' instructions, and a summary of the same facts
    at a random length (1-6 sentences) and style (with or without transition words).
  * arXiv documents: an abstract, an agent instruction, and a background or method paragraph of
    random length.
  * coding documents: a problem prompt, an agent instruction, and a helper or main function; some
    main functions call the helper, some re-implement it, some are buggy. Half the problems are the
    hand-written families of `tasks.coding.world`, half are composed from parts (an aggregation and
    an item predicate or transform, with many names), so that the model learns to read the prompt's
    signature and docstring rather than recall a family (the held-out families are never drawn);
    for the same reason most functions appear under a neutral name (`scan_records`).
  * plain prose (posts and abstracts alone) and plain code: a helper, the main function that calls
    it, and a few `assert name(...) == value` lines (values computed by running that code); and
    small call chains with made-up names (`def kavon_tos(ter): ...`), so the model is not only a
    template copier and learns to repeat a name it has never seen (needed for unseen problems).

The corpus is NOT selected or filtered by any task reward: summary lengths, ratios and styles are
drawn blindly. Raising the joint reward is MAGRPO's job, and the notebooks show it doing it.
"""
from __future__ import annotations

import random
from typing import Iterator

from ..tasks.coding.corpus.pretraining import call_chain, code_problem, coding_documents, tested_code
from ..tasks.writing.corpus import arxiv_document, plain_text, tldr_document


def documents(seed: int = 0, n: int = 20000) -> Iterator[str]:
    """Yield `n` corpus documents (plain strings; the tokenizer adds BOS/EOS): the mix of the shipped tiny model,
    each document's kind drawn from one seeded stream (TL;DR 0.35, arXiv 0.12, coding 0.33, plain prose 0.05,
    tested code 0.08, call chains 0.07). The documents themselves are the tasks' (`tasks/writing/corpus.py`,
    `tasks/coding/corpus/pretraining.py`)."""
    rng = random.Random(seed)
    for _ in range(n):
        u = rng.random()
        if u < 0.35:
            yield tldr_document(rng)
        elif u < 0.47:
            yield arxiv_document(rng)
        elif u < 0.80:
            for prompt, completion in coding_documents(rng):
                yield prompt + completion
        elif u < 0.85:
            yield plain_text(rng)
        elif u < 0.93:
            yield tested_code(code_problem(rng))
        else:
            yield call_chain(rng)
