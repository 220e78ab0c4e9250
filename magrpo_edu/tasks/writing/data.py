"""The writing tasks' data and formatters: TL;DR summarisation and arXiv abstract expansion (the paper's writing tasks).

Row formats (the same for our synthetic files and the real datasets' loaders):
    TL;DR:  {"id", "post", "source"}        agent 1 writes a concise summary, agent 2 a detailed one
    arXiv:  {"id", "abstract", "source"}    agent 1 writes background/motivation, agent 2 method/implications

Data: `data/tldr_{train,eval}.jsonl` and `data/arxiv_{train,eval}.jsonl` (the "length" task reads
TL;DR's). The train splits come from the seeded generator in `world.py` (`make_writing_data`, seed 0,
500 rows each); the eval splits were written by hand (30 posts, 20 abstracts), unlike the
generator's templates, to measure generalisation.
The real datasets (trl-lib/tldr; arXiv abstracts) load through `datasets` when online, or from a
local JSON Lines file offline.

Every loader checks its rows (`magrpo_edu.resources.check_row`): the text field must be a non-empty
string without lone surrogates, files must be UTF-8 and hold rows; errors name the file, the line
(or row) and the field. The formatters refuse a row whose text is missing, null or empty instead of
writing "None" into the prompt.
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Callable

from ...resources import check_row, data_dir, load_rows, read_jsonl, write_jsonl
from ..prompts import chat_prompt, with_other
from . import world
from .prompts import ARXIV_INSTRUCTIONS, TLDR_INSTRUCTIONS, arxiv_prompt, tldr_prompt

TASK_FIELDS = {"tldr": "post", "arxiv": "abstract"}
"""The writing datasets and the row field that holds each one's input text."""
DATASET_OF = {"length": "tldr", "tldr": "tldr", "arxiv": "arxiv"}
"""The dataset each writing task reads (the length demo writes about the TL;DR posts)."""


def load_writing(task: str, split: str = "train") -> list[dict]:
    """Rows of a writing task: task 'length'|'tldr'|'arxiv' (length reads TL;DR's posts), split 'train'|'eval'."""
    if task not in DATASET_OF:
        raise ValueError(f"unknown writing task {task!r}; choose one of {', '.join(DATASET_OF)}.")
    if split not in ("train", "eval"):
        raise ValueError(f"unknown split {split!r}; choose 'train' or 'eval'.")
    dataset = DATASET_OF[task]
    return read_jsonl(data_dir() / f"{dataset}_{split}.jsonl", required=("id", TASK_FIELDS[dataset]))


def make_writing_data(out_dir: str | Path, n_train: int = 500, seed: int = 0) -> dict:
    """Write the synthetic train splits `{task}_train.jsonl` (the eval splits are hand-written, not generated)."""
    out = Path(out_dir)
    rng = random.Random(seed)
    written = {}
    for task, maker, field in (("tldr", world.make_post, "post"), ("arxiv", world.make_abstract, "abstract")):
        rows = [{"id": f"{task}-train-{i:04d}", field: maker(rng)["text"], "source": "generated"} for i in range(n_train)]
        write_jsonl(out / f"{task}_train.jsonl", rows)
        written[f"{task}_train"] = len(rows)
    return written


def in_distribution_row(task: str, seed: int = 1_000_003) -> dict:
    """A new row from the generator of the train split (`world.make_post` / `world.make_abstract`, another
    seed): from the embedded tiny model's own synthetic world, yet not one of the MAGRPO train split's
    rows (checked; the tiny model's pretraining corpus comes from the same generator and is not
    checked, so read it as "in distribution", not "never seen"). `magrpo-edu train` shows the
    agents' texts on it beside the hand-written held-out rows, so a reader sees what the tiny model
    does in its world and what it does outside it."""
    if task not in TASK_FIELDS:
        raise ValueError(f"unknown writing task {task!r}; choose 'tldr' or 'arxiv'.")
    field, maker = TASK_FIELDS[task], (world.make_post if task == "tldr" else world.make_abstract)
    seen = {r[field] for r in load_writing(task, "train")}
    rng = random.Random(seed)
    text = maker(rng)["text"]
    while text in seen:  # the generator can repeat a row; never show a training row as new
        text = maker(rng)["text"]
    return {"id": f"{task}-world-{seed}", field: text, "source": "generated (not in the train split)"}


# ---- formatters: row -> prompt, one per agent ------------------------------------------------------
def _formatters(tokenizer, instructions, raw_prompt, field: str, names: tuple[str, str]) -> list[Callable[[dict], str]]:
    use_chat = tokenizer is not None and getattr(tokenizer, "chat_template", None)

    def make(agent: int):
        def fmt(row: dict) -> str:
            check_row(row, f"writing row {row.get('id', '(no id)')!r}" if isinstance(row, dict) else "writing row",
                      (field,))
            if use_chat:
                return chat_prompt(tokenizer, f"{instructions[agent]}\n\n{row[field]}")
            return raw_prompt(row[field], agent)

        def fmt_with_other(row: dict, other: str) -> str:
            """The prompt with the other agent's answer shown first (sequential and discussion baselines):
            inside the user message when there is a chat template, else `prompts.with_other`."""
            if use_chat:
                return chat_prompt(tokenizer, f"The other agent wrote: {other.strip()}\n\n{instructions[agent]}\n\n{row[field]}")
            return with_other(fmt(row), other)
        fmt.__name__ = names[agent]
        fmt.with_other = fmt_with_other
        return fmt
    return [make(0), make(1)]


def tldr_formatters(tokenizer=None) -> list[Callable[[dict], str]]:
    """[concise, detailed] TL;DR prompts; chat-template variant when the tokenizer has a template."""
    return _formatters(tokenizer, TLDR_INSTRUCTIONS, tldr_prompt, "post", ("tldr_concise", "tldr_detailed"))


def arxiv_formatters(tokenizer=None) -> list[Callable[[dict], str]]:
    """[background, method] arXiv prompts; chat-template variant when the tokenizer has a template."""
    return _formatters(tokenizer, ARXIV_INSTRUCTIONS, arxiv_prompt, "abstract", ("arxiv_background", "arxiv_method"))


# ---- the real datasets (online, optional `datasets` dependency) ------------------------------------
def _hub_rows(path: str, split: str, limit: int | None, **kw):
    """(where, row) of a hub dataset or a local JSON/JSONL file (`magrpo_edu.resources.load_rows`)."""
    yield from load_rows(path, split=split, limit=limit, **kw)


def load_tldr_hub(split: str = "train", limit: int | None = 1000, path: str = "trl-lib/tldr", **kw) -> list[dict]:
    """trl-lib/tldr rows (its `prompt` holds the post) in our row format; `path` may be a local file.
    A row needs a non-empty string `post` or `prompt`; a bad row raises a ValueError naming it."""
    rows = []
    for i, (where, r) in enumerate(_hub_rows(path, split, limit, **kw)):
        field = "post" if r.get("post") is not None or "prompt" not in r else "prompt"
        if field not in r:
            raise ValueError(f"{where}: row has neither 'post' nor 'prompt' (fields: {sorted(r)}); "
                             "TL;DR rows need the post's text in one of them.")
        check_row(r, where, (field,))
        rows.append({"id": f"tldr-hub-{i}", "post": r[field], "source": str(path)})
    return rows


def load_arxiv_hub(path: str, split: str = "train", limit: int | None = 1000, field: str = "abstract", **kw) -> list[dict]:
    """arXiv abstracts in our row format from a hub dataset id or a local JSON/JSONL file; each row
    needs `field` as a non-empty string (a bad row raises a ValueError naming it)."""
    rows = []
    for i, (where, r) in enumerate(_hub_rows(path, split, limit, required=(field,), **kw)):
        rows.append({"id": f"arxiv-hub-{i}", "abstract": r[field], "source": str(path)})
    return rows
