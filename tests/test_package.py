"""The package as a user installs it: imports, version, console script, package data in a wheel."""
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import magrpo_edu
from magrpo_edu.resources import SAVED_RESULTS

pytestmark = pytest.mark.slow  # subprocesses: the sandbox / a built wheel (the slow lane)

ROOT = Path(__file__).resolve().parent.parent


def test_version_string():
    assert re.fullmatch(r"\d+\.\d+\.\d+", magrpo_edu.__version__)


def test_public_api_imports():
    from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, group_advantages, lora_agents  # noqa: F401
    from magrpo_edu.rewards import arxiv_reward, length_ratio_reward, tldr_reward  # noqa: F401


def test_console_script_help():
    beside = Path(sys.executable).parent / "magrpo-edu"  # the venv's scripts folder, activated or not
    exe = str(beside) if beside.exists() else shutil.which("magrpo-edu")
    assert exe, "the magrpo-edu console script is not on PATH: is the package installed?"
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "train" in out.stdout and "pretrain" in out.stdout
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=120)
    assert magrpo_edu.__version__ in out.stdout


def test_saved_results_found_in_a_checkout_and_refused_by_unknown_name():
    """The notebooks read the experiments' saved results through `saved_results` (no GitHub URL)."""
    from magrpo_edu.resources import saved_results

    assert saved_results("coding_collaboration") == json.loads((ROOT / "experiments" / "coding_collaboration.json").read_text())
    with pytest.raises(ValueError, match="ships quickstart_seeds"):
        saved_results("nope")


def test_data_found_through_importlib_resources():
    from magrpo_edu.resources import data_dir
    from magrpo_edu.tasks.writing import load_writing

    assert (data_dir() / "tldr_train.jsonl").is_file()
    assert len(load_writing("tldr", "train")) > 100


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(out), str(ROOT)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    (whl,) = out.glob("magrpo_edu-*.whl")
    return whl


def test_wheel_contains_data_and_model(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for f in ("magrpo_edu/data/tldr_train.jsonl", "magrpo_edu/data/tldr_eval.jsonl", "magrpo_edu/data/arxiv_train.jsonl",
              "magrpo_edu/weights/tiny/model.safetensors", "magrpo_edu/weights/tiny/tokenizer.json",
              "magrpo_edu/weights/tiny/config.json", "magrpo_edu/weights/tiny/README.md",
              "magrpo_edu/weights/tiny-code/model.safetensors", "magrpo_edu/tasks/coding/corpus/name_words.txt",
              "magrpo_edu/weights/smollm2_coding/adapters/warm/main/adapter_model.safetensors",
              *(f"magrpo_edu/saved_results/{x}.json" for x in SAVED_RESULTS)):
        assert f in names, f"{f} missing from {wheel.name}"


def test_installed_wheel_finds_data_and_tiny_model_offline(wheel, tmp_path):
    """Install the wheel into a bare folder (not editable) and use it with the hub unreachable."""
    target = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target), str(wheel)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    code = ("import magrpo_edu, time; from magrpo_edu.resources import data_dir; from magrpo_edu.models import load_model;"
            "from magrpo_edu.resources import saved_results, SAVED_RESULTS;"
            "assert all(saved_results(x) for x in SAVED_RESULTS);"
            "from magrpo_edu.models import tiny_model_path; from magrpo_edu.tasks.coding import smollm2_coding_adapters;"
            "assert all(str(p).startswith(str(tiny_model_path().parent)) for p in smollm2_coding_adapters('warm'));"
            "t=time.time(); m,t2=load_model('tiny'); dt=time.time()-t;"
            "print(magrpo_edu.__file__); print(data_dir()); print(tiny_model_path()); print(type(m).__name__, dt)")
    env = {**os.environ, "PYTHONPATH": str(target), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    pkg, data, weights, model = r.stdout.strip().splitlines()[-4:]
    assert pkg.startswith(str(target)) and data.startswith(str(target)), r.stdout
    assert weights == str(target / "magrpo_edu" / "weights" / "tiny"), r.stdout  # the wheel's copy, not a checkout's
    assert model.startswith("LlamaForCausalLM")
