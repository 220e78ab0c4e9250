"""The embedded tiny model's pretraining corpus: a seeded generator from the tasks' own world.

What it writes (each document ends with the model's EOS token at tokenisation time):
  * TL;DR documents: a post, one of the two agents' instructions, and a summary of the same facts
    at a random length (1-6 sentences) and style (with or without transition words).
  * arXiv documents: an abstract, an agent instruction, and a background or method paragraph of
    random length.
  * coding documents: a problem prompt, an agent instruction, and a helper or main function; some
    main functions call the helper, some re-implement it, some are buggy.
  * plain prose (posts and abstracts alone) and plain code (helpers and mains without a prompt),
    so the model is not only a template copier.

The corpus is NOT selected or filtered by any task reward: summary lengths, ratios and styles are
drawn blindly. Raising the joint reward is MAGRPO's job, and the notebooks show it doing it.
"""
from __future__ import annotations

import random
from typing import Iterator

from .tasks import world
from .tasks.prompts import arxiv_prompt, coding_prompt, tldr_prompt

TRANSITIONS = ["However,", "As a result,", "For example,", "In addition,", "Because of this,",
               "First,", "Then,", "Finally,", "In short,", "Meanwhile,", "Although it helped,",
               "Similarly,", "In fact,", "Therefore,", "If nothing changes,", "Overall,"]


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def summary_sentences(f: dict) -> list[str]:
    """Candidate summary sentences about one post's facts, most important first."""
    out = [f"{_cap(f['problem'])}.", f"I am {f['age']} and {f['setting']}.",
           f"I tried: {', '.join(f['attempts'])}.", f"Nothing changed and {f['feeling']}.",
           f"I want to know {f['question']}."]
    out += f["details"]
    return out


def write_summary(f: dict, rng: random.Random, detailed: bool) -> str:
    """A summary of a post at a random length; transition words in some, not all."""
    sents = summary_sentences(f)
    hi = 6 if detailed else 4
    k = rng.randint(1, hi)
    chosen = sents[:1] + rng.sample(sents[1:], k=min(k - 1, len(sents) - 1))
    if rng.random() < (0.6 if detailed else 0.3):
        chosen = [chosen[0]] + [f"{rng.choice(TRANSITIONS)} {s[0].lower()}{s[1:]}" for s in chosen[1:]]
    if rng.random() < 0.15:  # very short, headline style
        chosen = [f"{_cap(f['problem'])}, {f['question']}?"]
    return " ".join(chosen)


def write_paragraph(f: dict, rng: random.Random, part: int) -> str:
    """Background (part 0) or method (part 1) paragraph about an abstract's facts, random length."""
    if part == 0:
        pool = [f"Research in {f['field']} has grown quickly.", f"A central problem is that {f['challenge']}.",
                f"In addition, {f['extra']}.", f"This limits how {f['field']} systems are used in practice.",
                "Earlier approaches rely on large labelled datasets.",
                "Practitioners need methods that are both accurate and cheap.",
                f"Because of this, better tools for {f['field']} are needed.",
                "Our goal is to close this gap with a simple method."]
    else:
        pool = [f"We propose {f['method']}.", f"The method is evaluated on {f['bench']}.",
                f"It {f['result']}.", "First, we train a base model on the available data.",
                "Then, we add the new component and fine-tune it.", "Finally, we compare against strong baselines.",
                f"These findings imply that {f['field']} can benefit from simple ideas.",
                "The approach could also transfer to related problems."]
    k = rng.randint(1, len(pool))
    chosen = pool[:1] + rng.sample(pool[1:], k=k - 1)
    return " ".join(chosen)


# ---- coding world: (problem prompt, entry point, helper source, main sources) ----------------------
def coding_documents(rng: random.Random) -> Iterator[tuple[str, str]]:
    """(prompt text, completion text) pairs of helper/main functions, some buggy, some not using aux."""
    from .tasks.coding_world import make_code_problem  # local import: the coding world is optional here

    p = make_code_problem(rng)
    agent = rng.randint(0, 1)
    if agent == 0:
        yield coding_prompt(p["prompt"], 0), p["aux"]
    else:
        style = rng.random()
        main = p["main_calls_aux"] if style < 0.5 else (p["main_alone"] if style < 0.8 else p["main_buggy"])
        yield coding_prompt(p["prompt"], 1), main


def documents(seed: int = 0, n: int = 20000) -> Iterator[str]:
    """Yield `n` corpus documents (plain strings; the tokenizer adds BOS/EOS)."""
    rng = random.Random(seed)
    for _ in range(n):
        u = rng.random()
        if u < 0.40:
            f = world.make_post(rng)
            agent = rng.randint(0, 1)
            yield f"{tldr_prompt(f['text'], agent)} {write_summary(f, rng, detailed=bool(agent))}"
        elif u < 0.55:
            f = world.make_abstract(rng)
            agent = rng.randint(0, 1)
            yield f"{world_arxiv(f, agent)} {write_paragraph(f, rng, agent)}"
        elif u < 0.80:
            for prompt, completion in coding_documents(rng):
                yield prompt + completion
        elif u < 0.90:
            yield rng.choice([world.make_post, world.make_abstract])(rng)["text"]
        else:
            from .tasks.coding_world import make_code_problem

            p = make_code_problem(rng)
            yield p["aux"] + "\n" + p["main_calls_aux"]


def world_arxiv(f: dict, agent: int) -> str:
    return arxiv_prompt(f["text"], agent)
