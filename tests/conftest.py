"""Shared fixtures: a tiny randomly initialised Llama and a small BPE tokenizer built from a config,
so the core tests need no weights and no network (deterministic, a few seconds)."""
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


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
