"""The writing tasks, one `Task` each: "length" (the quick demo: agent 2 writes 2-3x as much as agent
1, on the TL;DR posts), "tldr" and "arxiv" (the paper's). Their data and formatters are in `data.py`,
their prompt texts in `prompts.py`, their rewards in `reward.py`, the synthetic world their train
splits and the tiny model's corpus come from in `world.py`, their documents in that corpus in `corpus.py`, the
SmolLM2 TL;DR adapters in `adapters.py`."""
from __future__ import annotations

from ..task import Task
from .adapters import smollm2_tldr_adapters
from .data import (TASK_FIELDS, arxiv_formatters, in_distribution_row, load_arxiv_hub, load_tldr_hub, load_writing,
                   make_writing_data, tldr_formatters)
from .prompts import ARXIV_SINGLE_INSTRUCTION, TLDR_SINGLE_INSTRUCTION, single_writing_prompt
from .reward import (LEVEL_MAX, arxiv_joint_reward, arxiv_levels, length_ratio_joint_reward, length_ratio_reward,
                     tldr_joint_reward, tldr_levels)

__all__ = ["LENGTH", "TLDR", "ARXIV", "smollm2_tldr_adapters", "TASK_FIELDS", "load_writing", "make_writing_data",
           "in_distribution_row", "tldr_formatters", "arxiv_formatters", "load_tldr_hub", "load_arxiv_hub"]


def _tldr_single(row: dict, tokenizer=None) -> str:
    return single_writing_prompt(TLDR_SINGLE_INSTRUCTION, "Post", row["post"], tokenizer)


def _arxiv_single(row: dict, tokenizer=None) -> str:
    return single_writing_prompt(ARXIV_SINGLE_INSTRUCTION, "Abstract", row["abstract"], tokenizer)


STYLE_NOTE = "style = 0.4 coherence + 0.6 consistency: style counts, its two parts are shown beside it"
"""What results.md says under the tldr and arxiv rewards' components."""


def tiny_model_note(what: str) -> str:
    """What results.md says before a tiny-model run's texts on the writing task whose input is a `what`."""
    return ("**What the embedded tiny model can and cannot do.** It is a 3M-parameter model pretrained on a small "
            f"synthetic world (`weights/tiny/README.md`). On these held-out, hand-written {what}s its texts are "
            f"sentences from its own world, mostly unrelated to the {what}: read the reward gain above as the agents "
            "learning what the joint reward pays for (lengths, structure, words), not summarisation. For real "
            "summaries of real posts see the SmolLM2-135M run (notebook 07, `weights/smollm2_tldr/README.md`).")


def _length_levels(first: str, second: str) -> dict:
    return {"total": length_ratio_reward(first, second)}


LENGTH = Task(
    "length", "agent 2 writes 2-3x as much as agent 1 (the quick demo)", lambda split: load_writing("tldr", split),
    tldr_formatters, length_ratio_joint_reward, max_reward=1.0, max_new_tokens=48, prompt_field="post",
    levels=_length_levels, beta=0.05, single_prompt=_tldr_single, in_distribution=lambda: in_distribution_row("tldr"),
    level_max={}, model_notes={"tiny": tiny_model_note("post")})
"""The quick demo, on the TL;DR posts. It trains with a small KL leash because its reward pays for
characters (without it agent 2 padded its answers with `w w w ...` in the embedded model's card run, one
seed: weights/tiny/README.md)."""

TLDR = Task(
    "tldr", "the paper's TL;DR task: a concise and a detailed summary of a post", lambda split: load_writing("tldr", split),
    tldr_formatters, tldr_joint_reward, max_reward=2.98, max_new_tokens=48, prompt_field="post", levels=tldr_levels,
    single_prompt=_tldr_single, in_distribution=lambda: in_distribution_row("tldr"), level_max=LEVEL_MAX,
    reward_note=STYLE_NOTE, model_notes={"tiny": tiny_model_note("post")})

ARXIV = Task(
    "arxiv", "the paper's arXiv task: background and method from an abstract", lambda split: load_writing("arxiv", split),
    arxiv_formatters, arxiv_joint_reward, max_reward=3.0, max_new_tokens=360, prompt_field="abstract",
    levels=arxiv_levels, single_prompt=_arxiv_single, in_distribution=lambda: in_distribution_row("arxiv"),
    level_max=LEVEL_MAX, reward_note=STYLE_NOTE, model_notes={"tiny": tiny_model_note("abstract")})
"""The arXiv reward's first level needs 128-256 words from each agent (about 1.2 tokens per word
for the tiny model), hence its budget."""
