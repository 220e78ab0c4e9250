"""The writing tasks' documents in the embedded tiny model's pretraining corpus (`pretraining.corpus.documents` mixes
them with the coding task's): a post or an abstract from the synthetic world (`world.py`), one agent's instruction
(`prompts.py`), and a summary or a paragraph about the same facts at a random length and style. Drawn blindly: no
length, ratio or style is selected by a reward."""
from __future__ import annotations

import random

from . import world
from .prompts import arxiv_prompt, tldr_prompt

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


def tldr_document(rng: random.Random) -> str:
    """A post, one agent's instruction (concise or detailed) and a summary of random length and style."""
    f = world.make_post(rng)
    agent = rng.randint(0, 1)
    return f"{tldr_prompt(f['text'], agent)} {write_summary(f, rng, detailed=bool(agent))}"


def arxiv_document(rng: random.Random) -> str:
    """An abstract, one agent's instruction (background or method) and a paragraph of random length."""
    f = world.make_abstract(rng)
    agent = rng.randint(0, 1)
    return f"{arxiv_prompt(f['text'], agent)} {write_paragraph(f, rng, agent)}"


def plain_text(rng: random.Random) -> str:
    """A post or an abstract alone (plain prose)."""
    return rng.choice([world.make_post, world.make_abstract])(rng)["text"]
