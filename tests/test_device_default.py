"""The device a run takes when none is given (issue 46): the embedded models on the CPU even where CUDA
is available (their step is bound by per-token overhead, a GPU gains little), real models (a hub id, a
local folder, smollm2) on CUDA when it is there, and a device given always used. CUDA is only reported
present (torch.cuda.is_available patched): nothing here moves a tensor to a GPU."""
import pytest
import torch

from magrpo_edu.run import cli, describe
from magrpo_edu.run import device as run_device
from magrpo_edu.run import plan as run_plan


@pytest.fixture
def saved_model(tmp_path, small_tokenizer):
    """A folder with a tiny random Llama and its tokenizer, saved with save_pretrained: a real model to the CLI."""
    from magrpo_edu.pretraining.pretrain import build_model

    folder = tmp_path / "saved"
    build_model(len(small_tokenizer), small_tokenizer, hidden_size=16, layers=1, heads=2,
                intermediate_size=32).save_pretrained(folder)
    small_tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture
def cuda_here(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    for name in ("WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "RANK"):
        monkeypatch.delenv(name, raising=False)


def _plan(*argv):
    """`magrpo-edu train ARGV`'s plan, as the command line builds it (parser, then plan_run)."""
    return run_plan.plan_run(**cli._given(cli.build_parser().parse_args(["train", *argv])))


def test_embedded_models_default_to_the_cpu_even_with_cuda(cuda_here, tmp_path):
    for model in ("tiny", "tiny-code", "Tiny", " tiny-code "):
        device, why = run_device.resolve_device(None, model)
        assert device == "cpu" and "per-token overhead" in why and "--device cuda" in why
    plan = _plan("--task", "length", "--max-steps", "3", "--out", str(tmp_path / "a"))  # the task's model: tiny
    assert plan["run"].model == "tiny" and plan["device"] == "cpu"
    assert "on cpu (the default for the embedded tiny model, though CUDA is available" in describe.describe_plan(plan)
    plan = _plan("--task", "coding", "--max-steps", "3", "--out", str(tmp_path / "b"))  # tiny-code
    assert plan["run"].model == "tiny-code" and plan["device"] == "cpu"


def test_real_models_default_to_cuda_when_it_is_there(cuda_here, tmp_path, saved_model):
    assert run_device.resolve_device(None, str(saved_model))[0] == "cuda"
    for model in ("smollm2-135m", "Qwen/Qwen2.5-0.5B", "./tiny"):  # ./tiny is a folder, not the embedded model
        assert run_device.resolve_device(None, model)[0] == "cuda"
    plan = _plan("--model", str(saved_model), "--max-steps", "3", "--out", str(tmp_path / "a"))
    assert plan["device"] == "cuda"
    assert "on cuda (the default where CUDA is available" in describe.describe_plan(plan)
    assert run_device.resolve_device(None)[0] == "cuda"  # model not known: as before, cuda when available


def test_a_given_device_is_always_used(cuda_here, tmp_path, saved_model):
    plan = _plan("--device", "cuda", "--max-steps", "3", "--out", str(tmp_path / "a"))
    assert plan["run"].model == "tiny" and plan["device"] == "cuda" and plan["device_why"] == "as given"
    assert ", on cuda; results go to" in describe.describe_plan(plan)
    assert run_device.resolve_device("cpu", str(saved_model))[0] == "cpu"
    assert run_device.resolve_device("cuda:0", "tiny-code")[0] == "cuda:0"


def test_without_cuda_every_model_takes_the_cpu(monkeypatch, saved_model):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for model in ("tiny", str(saved_model), "Qwen/Qwen2.5-0.5B", None):
        assert run_device.resolve_device(None, model)[0] == "cpu"
    assert run_device.resolve_device(None, str(saved_model))[1] == "CUDA is not available on this machine"
    with pytest.raises(run_plan.SettingsError, match=r"--device cuda: CUDA is not available"):
        run_device.resolve_device("cuda", "tiny")[0]


def test_under_torchrun_an_embedded_model_stays_on_the_cpu(cuda_here, monkeypatch, saved_model):
    """torchrun with no --device: the embedded model's processes train on the CPU (gloo, `distributed.init`),
    a real model's each on its own GPU (cuda:LOCAL_RANK, nccl); --device cuda puts the embedded model there too."""
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert run_device.resolve_device(None, "tiny")[0] == "cpu"
    assert run_device.resolve_device(None, str(saved_model))[0] == "cuda:1"
    device, why = run_device.resolve_device("cuda", "tiny")
    assert device == "cuda:1" and "this torchrun process's own GPU" in why


def test_the_help_says_why():
    for command in ("train", "eval"):
        text = " ".join(next(a for a in cli.build_parser()._subparsers._group_actions[0].choices[command]._actions
                             if a.dest == "device").help.split())
        assert "embedded models (tiny, tiny-code, tiny-code-2turn): cpu, where they are fastest" in text
        assert "per-token overhead" in text and "other models: cuda when available" in text
