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

from ..tasks.writing import world
from ..tasks.coding.world import make_code_problem
from ..tasks.coding.prompts import coding_prompt
from ..tasks.writing.prompts import arxiv_prompt, tldr_prompt
from ..tasks.coding.corpus.composed import make_composed_problem, random_entry_name, renamed

TRANSITIONS = ["However,", "As a result,", "For example,", "In addition,", "Because of this,",
               "First,", "Then,", "Finally,", "In short,", "Meanwhile,", "Although it helped,",
               "Similarly,", "In fact,", "Therefore,", "If nothing changes,", "Overall,"]


COMPOSED_SHARE = 0.5  # share of coding documents whose problem is composed, not a hand-written family
RENAMED_SHARE = 0.85  # share of coding documents whose function gets a neutral name (`scan_records`)


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


BACKGROUND = [
    "Research in {field} has grown quickly over the last {n} years.",
    "A central problem is that {challenge}.",
    "In addition, {extra}.",
    "This limits how {field} systems are used in practice.",
    "Earlier approaches rely on large labelled datasets that are costly to collect.",
    "Practitioners need methods that are both accurate and cheap to run.",
    "Because of this, better tools for {field} are needed.",
    "Our goal is to close this gap with a simple method.",
    "Many teams in industry and science now depend on {field} every day.",
    "Yet most published systems are tested only in clean laboratory conditions.",
    "When {challenge}, even strong models make surprising mistakes.",
    "Small groups without large budgets are hit hardest by this problem.",
    "Several surveys list this issue among the main open questions of the field.",
    "Some earlier work tried to collect more data, but this is slow and expensive.",
    "Other work changed the model architecture, which made training harder.",
    "Neither line of work explains why the problem appears in the first place.",
    "We argue that the problem is mostly about how information is shared between examples.",
    "This view suggests a cheaper fix that does not need new data.",
    "A good solution should also be easy to explain to the people who use it.",
    "It should run on ordinary hardware within a few hours.",
    "Progress here would make {field} useful in many new places.",
    "For example, hospitals, schools and small companies could adopt such tools.",
    "Meanwhile, the cost of mistakes in these settings keeps rising.",
    "These reasons motivate the work presented in this paper.",
]
METHOD = [
    "We propose {method}.",
    "The method is evaluated on {bench}.",
    "It {result}.",
    "First, we train a base model on the available data.",
    "Then, we add the new component and fine-tune it for {n} epochs.",
    "Finally, we compare against strong baselines under the same budget.",
    "These findings imply that {field} can benefit from simple ideas.",
    "The approach could also transfer to related problems.",
    "The new component has fewer than {n} thousand parameters.",
    "It is inserted between the encoder and the output layer.",
    "During training, a small loss term keeps its outputs close to the base model.",
    "At test time, the component adds almost no extra latency.",
    "We tune the two hyperparameters on a held-out validation split.",
    "Every experiment is repeated with {m} random seeds and we report the mean.",
    "An ablation removes each part of the method in turn.",
    "Removing the new component loses most of the gain.",
    "The gains are largest on the hardest examples.",
    "Errors that remain come mostly from rare or noisy inputs.",
    "The implementation needs only a few lines of code on top of a standard pipeline.",
    "Training fits on a single GPU in under {h} hours.",
    "In practice, this means teams can adopt the method without new hardware.",
    "The results also suggest a new way to think about {field}.",
    "Future work could combine the method with larger models.",
    "We will release the code and the trained models.",
]


def write_paragraph(f: dict, rng: random.Random, part: int) -> str:
    """Background (part 0) or method (part 1) paragraph about an abstract's facts.

    Its length is drawn uniformly, from 2 sentences (about 20 words) to all 24 (about 270): blind to
    the arXiv reward's 128-256-word gate, which about half of the paragraphs happen to meet."""
    pool = BACKGROUND if part == 0 else METHOD
    k = rng.randint(2, len(pool))
    chosen = [0] + sorted(rng.sample(range(1, len(pool)), k=k - 1))  # the opening sentence, then in order
    nums = dict(n=rng.randint(2, 40), m=rng.randint(3, 10), h=rng.randint(2, 48))
    return " ".join(pool[i].format(**f, **nums) for i in chosen)


# ---- coding world: (problem prompt, entry point, helper source, main sources) ----------------------
def code_problem(rng: random.Random) -> dict:
    """A hand-written or composed coding problem, often under a neutral name."""
    p = make_composed_problem(rng) if COMPOSED_SHARE and rng.random() < COMPOSED_SHARE else make_code_problem(rng)
    return renamed(p, random_entry_name(rng)) if rng.random() < RENAMED_SHARE else p


def tested_code(p: dict) -> str:
    """aux, the main function that calls it, and its examples as `assert name(args) == value` lines."""
    from ..tasks.coding.data import problem_row

    checks = problem_row(p, "")["test"].splitlines()[1:]  # drop `def check(candidate):`
    return p["aux"] + "\n" + p["main_calls_aux"] + "\n" + "\n".join(
        line.strip().replace("candidate(", f"{p['entry_point']}(") for line in checks[:3]) + "\n"

def coding_documents(rng: random.Random) -> Iterator[tuple[str, str]]:
    """(prompt text, completion text) pairs of helper/main functions, some buggy, some not using aux."""
    p = code_problem(rng)
    agent = 0 if rng.random() < 1 / 3 else 1  # main functions twice as often: they carry the copied name
    if agent == 0:
        yield coding_prompt(p["prompt"], 0), p["aux"]
    else:
        style = rng.random()
        main = p["main_calls_aux"] if style < 0.5 else (p["main_alone"] if style < 0.8 else p["main_buggy"])
        yield coding_prompt(p["prompt"], 1), main


def arxiv_document(rng: random.Random) -> str:
    """An abstract, one agent's instruction (background or method) and a paragraph of random length."""
    f = world.make_abstract(rng)
    agent = rng.randint(0, 1)
    return f"{world_arxiv(f, agent)} {write_paragraph(f, rng, agent)}"


def documents(seed: int = 0, n: int = 20000) -> Iterator[str]:
    """Yield `n` corpus documents (plain strings; the tokenizer adds BOS/EOS)."""
    rng = random.Random(seed)
    for _ in range(n):
        u = rng.random()
        if u < 0.35:
            f = world.make_post(rng)
            agent = rng.randint(0, 1)
            yield f"{tldr_prompt(f['text'], agent)} {write_summary(f, rng, detailed=bool(agent))}"
        elif u < 0.47:
            yield arxiv_document(rng)
        elif u < 0.80:
            for prompt, completion in coding_documents(rng):
                yield prompt + completion
        elif u < 0.85:
            yield rng.choice([world.make_post, world.make_abstract])(rng)["text"]
        elif u < 0.93:
            yield tested_code(code_problem(rng))
        else:
            yield call_chain(rng)


SYLLABLES = ("ka", "lo", "mi", "ter", "von", "bra", "sel", "du", "fi", "rex", "po", "nar", "gu", "zel", "wen",
             "tos", "qui", "mar", "bel", "dro")


def made_up_name(rng: random.Random) -> str:
    """An identifier no task uses (`kavon_tos`), so that only copying predicts where it appears again."""
    word = lambda: "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3)))  # noqa: E731
    return "_".join(word() for _ in range(rng.randint(1, 3)))


def call_chain(rng: random.Random) -> str:
    """Plain code with made-up names: two small functions, the second calling the first, then calls."""

    f, g, a, b = random_entry_name(rng), random_entry_name(rng), made_up_name(rng), made_up_name(rng)
    k1, k2 = rng.randint(1, 9), rng.randint(2, 5)
    op = rng.choice(["+", "-", "*"])
    return (f"def {f}({a}):\n    return {a} {op} {k1}\n\n"
            f"def {g}({b}):\n    return {f}({b}) * {k2}\n\n"
            f"print({g}({rng.randint(0, 9)}), {f}({rng.randint(0, 9)}))\n"
            f"print({f}({g}({rng.randint(0, 9)})))\n")


def world_arxiv(f: dict, agent: int) -> str:
    return arxiv_prompt(f["text"], agent)
