"""The Hugging Face hub: whether it is used (HF_HUB_OFFLINE), whether it answers, whether a model is in
its local cache, and why a hub model could not be loaded, in words."""
from __future__ import annotations

import os
from pathlib import Path

from .loading import ModelNotAvailableError


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


def hub_failure(name: str, exc: BaseException | None) -> str:
    """Why the hub id `name` could not be loaded, in words (the full reason, not a cut message)."""
    chain, e = [], exc
    while e is not None:
        chain.append(e)
        e = e.__cause__ or e.__context__
    kinds = {type(x).__name__ for x in chain}
    text = " ".join(str(x) for x in chain)
    if hub_offline() and (exc is None or not in_hub_cache(name)):
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


def hub_error(name: str, known_names, exc: BaseException | None = None) -> ModelNotAvailableError:
    """The error for a hub id that could not be loaded: why, and what to do instead."""
    return ModelNotAvailableError(
        f"Could not load the hub model {name!r}: {hub_failure(name, exc)}. What to do: pass a local folder "
        "(a model saved with save_pretrained, config.json + weights + tokenizer files) or a registry name "
        f"({', '.join(repr(k) for k in known_names)}: 'tiny' ships inside the package); or go online with "
        "HF_HUB_OFFLINE unset so transformers can download it once into the cache.")


def in_hub_cache(repo_id: str) -> bool:
    """Whether the hub model `repo_id` is in the local Hugging Face cache (True when that cannot be told)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)
    except Exception:
        return True  # cannot tell: let transformers try (and explain its failure)
