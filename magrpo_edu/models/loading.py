"""Loading a saved causal LM and its tokenizer with transformers, and what a loaded pair needs: the
error every failure raises, the checks of a model folder, the tokenizer's padding; and the adapter folders
shipped with the package (`shipped_adapters`)."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..resources import weights_dir

WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")
VOCAB_FILES = ("vocab.json", "tokenizer.model", "vocab.txt", "spiece.model", "sentencepiece.bpe.model", "merges.txt")


class ModelNotAvailableError(RuntimeError):
    """No way to get the requested model on this machine; the message lists the ways."""


def prepare_tokenizer(tokenizer):
    """Pad on the left (generation appends on the right) and make sure a pad token exists."""
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def finish(model, tokenizer, device):
    """The loaded pair made ready: on `device`, in eval mode, the tokenizer padding on the left."""
    if device is not None:
        model = model.to(device)
    model.eval()
    tokenizer = prepare_tokenizer(tokenizer)
    if model.generation_config.pad_token_id is None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def from_pretrained(path_or_id: str, dtype=None, **kw):
    """(model, tokenizer) from a folder or a hub id through transformers (`kw`: local_files_only, gguf_file, ...)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from ..progress import quiet_model_loading

    tok = AutoTokenizer.from_pretrained(path_or_id, **kw)
    with quiet_model_loading():  # its "Loading weights" bar would be saved at 0% in a notebook
        model = AutoModelForCausalLM.from_pretrained(path_or_id, dtype=dtype if dtype is not None else "auto", **kw)
    return model, tok


def check_model_folder(folder: Path) -> None:
    """Refuse, before loading anything, a folder that cannot be a saved causal LM: it must hold
    config.json, weights (model.safetensors, pytorch_model.bin or a sharded index) and tokenizer
    files (tokenizer.json, or tokenizer_config.json with a vocabulary file). The error says what
    is missing and how to save it."""
    files = {f.name for f in folder.iterdir()}
    fix = f"save the model there with model.save_pretrained({str(folder)!r}) and tokenizer.save_pretrained(...)"
    if "config.json" not in files:
        hint = (" It holds adapter_config.json: a LoRA adapter, not a model; load its base model and the adapter "
                "with peft (PeftModel.from_pretrained).") if "adapter_config.json" in files else ""
        raise ModelNotAvailableError(f"{folder} holds no config.json, so it is not a saved Hugging Face model "
                                     f"(files: {sorted(files)[:12]}).{hint} To use it, {fix}.")
    if not (files & set(WEIGHT_FILES) or any(f.endswith(".safetensors") for f in files)):
        raise ModelNotAvailableError(f"{folder} has config.json but no weights: expected one of {list(WEIGHT_FILES)}. "
                                     f"The save was incomplete; {fix}.")
    vocab = files & set(VOCAB_FILES) or {f for f in files if f.endswith(".tiktoken")}
    if "tokenizer.json" not in files and not ("tokenizer_config.json" in files and vocab):
        what = ("tokenizer_config.json but no vocabulary file" if "tokenizer_config.json" in files
                else "no tokenizer files")
        raise ModelNotAvailableError(
            f"{what} found in {folder}: expected tokenizer.json, or tokenizer_config.json with a vocabulary "
            f"({', '.join(VOCAB_FILES)}). Save the model's tokenizer there with tokenizer.save_pretrained({str(folder)!r}).")


def shipped_adapters(card: str, sub: str, names: Sequence[str], what: str, remake: str) -> list[Path]:
    """The peft adapter folders weights/<card>/adapters[/<sub>]/<name> shipped with the package, one per agent (a task
    ships the adapters trained for it this way: `tasks.coding.smollm2_coding_adapters`); a clear error naming the
    missing ones, what they are (`what`) and how to make them again (`remake`)."""
    root = weights_dir() / card / "adapters"
    root = root / sub if sub else root
    dirs = [root / name for name in names]
    missing = [str(d) for d in dirs if not (d / "adapter_config.json").is_file()]
    if missing:
        raise FileNotFoundError(f"the {what} adapters are not installed here ({', '.join(missing)}); they ship "
                                f"with the package source (weights/{card}/adapters), or {remake}.")
    return dirs
