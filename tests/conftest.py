"""Shared fixtures and helpers: a tiny randomly initialised Llama and a small BPE tokenizer built
from a config, so the core tests need no weights and no network (deterministic, a few seconds);
and the helpers several test files use (`from conftest import cfg, ...`; tests/ is on sys.path
under pytest), kept here so no test file imports another."""
import json
import math
import os
import re
from pathlib import Path

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# The README's test command runs the notebooks with the reference solutions of their exercises: every
# pytest-xdist worker imports this file while collecting (`tests notebooks`), and the kernels nbval starts
# inherit the variable, so `magrpo_edu.exercises.check` replaces each unsolved stub by its solution
# (tests/test_exercises.py checks that each stub fails and each solution passes). This lives here and not
# in a notebooks/conftest.py: a second module named `conftest` would shadow this one for the
# `from conftest import ...` lines of the test files.
os.environ["MAGRPO_EDU_SOLUTIONS"] = "1"

from magrpo_edu import MAGRPOConfig, lora_agents  # noqa: E402  (after the offline switches: transformers reads them on import)


@pytest.fixture(scope="session")
def small_tokenizer():
    from magrpo_edu.pretraining.corpus import documents
    from magrpo_edu.pretraining.pretrain import train_tokenizer

    return train_tokenizer(list(documents(seed=0, n=300)), vocab_size=300)


@pytest.fixture
def make_model(small_tokenizer):
    from magrpo_edu.pretraining.pretrain import build_model

    def make(seed: int = 0, hidden_size: int = 32, tokenizer=None):
        tok = tokenizer or small_tokenizer
        return build_model(len(tok), tok, hidden_size=hidden_size, layers=2, heads=2, intermediate_size=64, seed=seed)
    return make


@pytest.fixture
def rows():
    return [{"text": f"post number {i} about something"} for i in range(6)]


@pytest.fixture
def formatters():
    return [lambda r: "Summary: " + r["text"], lambda r: "Details: " + r["text"]]


# ---- helpers shared by several test files ----------------------------------------------------------
def length_gap(completions, row):
    """A joint reward only the pair controls: agent 2's text about twice agent 1's."""
    return [-abs(len(b) - 2 * len(a)) / 50 for a, b in zip(*completions)]


def cfg(**kw):
    base = dict(max_steps=2, max_new_tokens=6, num_generations=3, learning_rate=1e-2, progress=False)
    base.update(kw)
    return MAGRPOConfig(**base)


def two_distinct_lora_agents(model, tok, seed: int, backend=None):
    """Two LoRA agents whose adapters differ (random A and B, drawn with `seed`): B = 0 at
    initialisation would make every adapter the identity and hide routing mistakes."""
    agents = lora_agents(model, 2, tokenizer=tok, backend=backend)
    torch.manual_seed(seed)
    for a in agents:
        for p in a.trainable_parameters():
            p.data.normal_(0, 0.3)
    return agents


def hand_warped_logprobs(logits, tokens, temperature=1.0, top_k=0, top_p=1.0):
    """log p(tokens) under softmax(logits / T) restricted to the top-k, then the top-p set: keep the
    most likely tokens, in order, while the mass BEFORE each one is below top_p (so the token that
    crosses top_p is kept), the rest -inf. Written without transformers' warpers."""
    z = logits.float() / temperature
    if top_k:
        kth = z.topk(min(top_k, z.shape[-1]), dim=-1).values[..., -1:]
        z = z.masked_fill(z < kth, -math.inf)
    if top_p < 1.0:
        p = z.softmax(-1)
        p_sorted, order = p.sort(-1, descending=True)
        mass_before = p_sorted.cumsum(-1) - p_sorted
        drop_sorted = mass_before >= top_p
        drop_sorted[..., 0] = False
        drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
        z = z.masked_fill(drop, -math.inf)
    return z.log_softmax(-1).gather(-1, tokens.unsqueeze(-1)).squeeze(-1)


def row_by_row(model, c, settings, route=None):
    """Per row: ONE forward over the row's own prompt tokens (no padding) and its completion up to
    its EOS, then `hand_warped_logprobs`. Returns a list of 1-D tensors (differentiable)."""
    out = []
    for r in range(c.prompt_ids.shape[0]):
        prompt = c.prompt_ids[r][c.prompt_mask[r].bool()]
        comp = c.completion_ids[r][c.completion_mask[r].bool()]
        ids = torch.cat([prompt, comp])[None]
        logits = model(input_ids=ids, **(route or {})).logits[0, len(prompt) - 1:-1]
        out.append(hand_warped_logprobs(logits, comp, **settings))
    return out


def check_shipped_adapters(dirs, names):
    """The checks every shipped pair of LoRA adapters passes (the SmolLM2 TL;DR and coding cards): one standard
    peft folder per agent, named `names`, r = 8 on SmolLM2's hub id, finite weights, B moved away from its zero
    start (trained), the same keys in each and different values (two agents, not one copied). Returns the
    weights, one dict per folder."""
    import json

    from safetensors.torch import load_file

    from magrpo_edu.models import SMOLLM2_ID

    assert [d.name for d in dirs] == list(names)
    weights = []
    for d in dirs:
        cfg = json.loads((d / "adapter_config.json").read_text())
        assert cfg["peft_type"] == "LORA" and cfg["r"] == 8 and cfg["base_model_name_or_path"] == SMOLLM2_ID
        w = load_file(str(d / "adapter_model.safetensors"))
        assert any("lora_B" in k for k in w) and all(torch.isfinite(t).all() for t in w.values())
        assert any("lora_B" in k and t.abs().max() > 0 for k, t in w.items())  # trained: B moved away from 0
        weights.append(w)
    assert weights[0].keys() == weights[1].keys()
    assert any(not torch.equal(weights[0][k], weights[1][k]) for k in weights[0])  # two different agents
    return weights


def body(function_src: str) -> str:
    """A function's lines after its `def` line, stripped of trailing blanks."""
    return function_src.split("\n", 1)[1].rstrip() if "\n" in function_src else ""


def held_out_correct_bodies() -> set[str]:
    """The bodies of every correct main of every held-out coding problem: the data's reference main, and the
    coding world's `main_calls_aux` and `main_alone`, for every constant the data uses and a few more (the
    tiny-code and second-turn corpora must contain none of them)."""
    import random

    from magrpo_edu.tasks.coding.data import load_coding
    from magrpo_edu.tasks.coding.world import FAMILIES, PRETRAIN_FAMILIES, make_code_problem

    out = {body(r["reference_main"]) for r in load_coding("eval")}
    for idx in range(PRETRAIN_FAMILIES, len(FAMILIES)):
        for k in range(2, 10):
            for c in "abcdefghklmnprst":
                p = make_code_problem(random.Random(0), family=idx, k=k, c=c)
                out |= {body(p["main_calls_aux"]), body(p["main_alone"])}
    return {b for b in out if b}


# ---- figures in texts (tests/test_readme_figures.py, tests/test_notebook_figures.py) ----
DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?:\.\d+)*(?![\w.]*\w)")  # 0.407, 2.13.0; not Qwen2.5 or 0.5B


def number(figure: str) -> "re.Pattern":
    """The figure as a whole number in a text: 0.62 matches '0.62' but not '0.621' or '10.62'."""
    return re.compile(r"(?<![\d.])" + re.escape(figure) + r"(?!\d)")


def saved_outputs(path) -> str:
    """What a notebook printed and displayed when it ran (streams, text, markdown, html), not its cells."""
    parts = []
    for cell in json.loads(Path(path).read_text())["cells"]:
        for out in cell.get("outputs", []):
            parts.append("".join(out.get("text", "")))
            for kind in ("text/plain", "text/markdown", "text/html"):
                parts.append("".join(out.get("data", {}).get(kind, "")))
    return "\n".join(parts)
