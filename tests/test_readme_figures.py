"""Every figure the README quotes comes from a saved file, and says which.

FIGURES maps each figure of the README to the file it comes from and the exact text there that holds
it: a results file (Markdown) or a notebook's SAVED OUTPUTS (what the notebook printed when it ran, not
its code or its markdown). The tests check that each snippet is in its source and holds the figure, that
each listed figure is still quoted by the README, and that every decimal number in the README is listed
(or is one of the few numbers that are not results: a version, an identifier, a setting).

A new figure in the README needs a row here naming where it comes from; a figure that changes in its
source (a notebook re-executed, an experiment re-run) fails here until the README follows.
Whole numbers (steps, seeds, rows, notebook numbers) are settings and are not checked, except the
measured ones listed below. Fast: reads files, trains nothing.
"""
import json
import re
from pathlib import Path

import pytest

from conftest import DECIMAL, number, saved_outputs  # shared test helpers: tests/conftest.py

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()

DEMO = "experiments/runs/length-demo/results.md"           # the saved run of `magrpo-edu train`, seed 0
SMOLLM2 = "weights/smollm2_tldr/README.md"        # the SmolLM2-135M run's card
SMOLLM2_CODING = "weights/smollm2_coding/README.md"  # SmolLM2-135M on coding: warm start, then MAGRPO, 3 seeds
CODING = "experiments/coding_collaboration.md"               # tiny-code, 3 seeds of the coding recipe
LEVERS = "experiments/smollm2_levers.md"                    # SmolLM2 coding: issue 60's levers, 2-3 seeds each
NB06 = "notebooks/06_variants.ipynb"
ARXIV = "experiments/arxiv_expansion.md"                    # arXiv expansion, 3 seeds x (beta 0, k3 leash), notebook 09
NB08 = "notebooks/08_reward_hacking.ipynb"

# (figure as the README writes it, source file, the text in the source that holds it)
FIGURES = [
    # the quick start's run (README "What you will see")
    ("0.407", DEMO, "| untrained | 0.407 |"),
    ("0.578", DEMO, "| MAGRPO, step 150 | 0.578 |"),
    ("0.710", DEMO, "| MAGRPO, step 300 | 0.710 |"),
    ("117", DEMO, "training took 117 s"),
    ("0.05", DEMO, "beta=0.05"),
    # a real model
    ("0.89", SMOLLM2, "0.89 -> 2.39 of 2.98"),
    ("2.39", SMOLLM2, "0.89 -> 2.39 of 2.98"),
    ("2.98", SMOLLM2, "0.89 -> 2.39 of 2.98"),
    # coding on a real model: the raw pair, the warm-started pair, MAGRPO's change over it (mean over 3 seeds)
    ("1.33", SMOLLM2_CODING, "| raw SmolLM2 (no adapters, parallel) | 1.33 |"),
    ("3.45", SMOLLM2_CODING, "| warm start, untrained by MAGRPO (parallel) | 3.45 ± 0.05 |"),
    ("0.43", SMOLLM2_CODING, "paired by seed: -0.43 of 4"),
    ("0.02", SMOLLM2_CODING, "paired by seed: -0.02 of 4"),
    ("3.29", SMOLLM2_CODING, "| heldout | warm start | 0, 1, 2 | 3.45 ± 0.05 | 3.29 ± 0.09 |"),
    # coding on SmolLM2 with the strict reward: PassOrNot@1, warm start -> trained (3 seeds), and the target it misses
    ("0.40", LEVERS, "| warm | 0, 1, 2 | 3.42 | 0.40 (0.43; 0.43; 0.36) |"),
    ("0.49", LEVERS, "| strict | 0, 1, 2 | 3.53 | 0.49 (0.57; 0.43; 0.46) |"),
    # coding on unseen families: untrained pair (parallel) and trained pair, mean over 3 seeds
    ("2.252", CODING, "| parallel | 2.252 ± 0.144 | 0.155 ± 0.034 | 0.298 ± 0.061 | 0.449 ± 0.059 |"),
    ("0.449", CODING, "| parallel | 2.252 ± 0.144 | 0.155 ± 0.034 | 0.298 ± 0.061 | 0.449 ± 0.059 |"),
    ("2.895", CODING, "| magrpo | 2.895 ± 0.025 | 0.286 ± 0.087 | 0.500 ± 0.051 | 0.750 ± 0.026 |"),
    ("0.750", CODING, "| magrpo | 2.895 ± 0.025 | 0.286 ± 0.087 | 0.500 ± 0.051 | 0.750 ± 0.026 |"),
    # two turns against one (tiny-code-2turn), mean over 3 seeds: the two-turn pair after feedback, the single-turn pair
    ("2.181", CODING, "| mean ± std | 2.153 ± 0.095 | 2.134 ± 0.073 | 2.364 ± 0.106 | 2.015 ± 0.049 | 2.322 ± 0.067 | 2.181 ± 0.021 |"),
    ("2.364", CODING, "| mean ± std | 2.153 ± 0.095 | 2.134 ± 0.073 | 2.364 ± 0.106 | 2.015 ± 0.049 | 2.322 ± 0.067 | 2.181 ± 0.021 |"),
    # reward hacking, notebook 08's summary line
    ("1.054", NB08, "held-out reward, mean of 3 seeds: untrained 1.054, A 1.310, B 1.056"),
    ("1.310", NB08, "held-out reward, mean of 3 seeds: untrained 1.054, A 1.310, B 1.056"),
    ("1.056", NB08, "held-out reward, mean of 3 seeds: untrained 1.054, A 1.310, B 1.056"),
    ("2.2", NB08, "largest naturalness rise of an agent over its own untrained value: A 2.2, B 0.8 nats/token"),
    ("0.8", NB08, "largest naturalness rise of an agent over its own untrained value: A 2.2, B 0.8 nats/token"),
    # the variants, notebook 06's table (mean ± std over 3 seeds)
    ("0.440", NB06, "| untrained | 0.440 |"),
    ("0.609", NB06, "| MAGRPO | 0.609 ± 0.048 |"),
    ("0.048", NB06, "| MAGRPO | 0.609 ± 0.048 |"),
    ("0.552", NB06, "| MAGRPO, cross | 0.552 ± 0.029 |"),
    # arXiv expansion, notebook 09's saved benchmark (mean ± std over 3 seeds)
    ("0.415", ARXIV, "| reward | 0.415 | 0.630 ± 0.388 | 0.699 ± 0.164 |"),
    ("0.630", ARXIV, "| reward | 0.415 | 0.630 ± 0.388 | 0.699 ± 0.164 |"),
    ("0.388", ARXIV, "| reward | 0.415 | 0.630 ± 0.388 | 0.699 ± 0.164 |"),
    ("0.699", ARXIV, "| reward | 0.415 | 0.630 ± 0.388 | 0.699 ± 0.164 |"),
    ("0.164", ARXIV, "| reward | 0.415 | 0.630 ± 0.388 | 0.699 ± 0.164 |"),
]

# Decimal numbers in the README that are not results.
NOT_FIGURES = {
    "2508.04652": "the paper's arXiv identifier",
    "3.10": "the lowest Python version",
    "2.13.0": "the torch version CI pins",
}



def source_text(name: str) -> str:
    path = ROOT / name
    return saved_outputs(path) if path.suffix == ".ipynb" else path.read_text()


@pytest.mark.parametrize("figure,source,snippet", FIGURES, ids=[f"{f}@{Path(s).name}" for f, s, _ in FIGURES])
def test_each_figure_is_in_its_source(figure, source, snippet):
    assert number(figure).search(snippet), f"the snippet for {figure} does not hold it: {snippet!r}"
    assert snippet in source_text(source), (
        f"{source} no longer says {snippet!r}: the README's {figure} must follow its source")


def test_each_listed_figure_is_still_quoted():
    stale = [f for f, _, _ in FIGURES if not number(f).search(README)]
    assert not stale, f"listed here but no longer in the README (remove their rows): {stale}"


def test_every_decimal_in_the_readme_has_a_source():
    listed = {f for f, _, _ in FIGURES} | set(NOT_FIGURES)
    unlisted = sorted({m.group() for m in DECIMAL.finditer(README)} - listed)
    assert not unlisted, (f"decimal figures in the README with no source in tests/test_readme_figures.py: {unlisted}; "
                          "add each with the saved file (results file or notebook output) it comes from")


def test_the_check_itself_refuses_what_it_should():
    assert number("0.62").search("untrained 0.62, A") and not number("0.62").search("0.621") \
        and not number("0.62").search("10.62")
    found = {m.group() for m in DECIMAL.finditer("Qwen2.5-0.5B, torch==2.13.0, 0.407 -> 0.710 (of 1).")}
    assert found == {"2.13.0", "0.407", "0.710"}
    markdown = "".join("".join(c["source"]) for c in json.loads((ROOT / NB06).read_text())["cells"])
    assert "suggestive." in markdown and "suggestive." not in saved_outputs(ROOT / NB06), \
        "a notebook's source is what it printed, not its markdown"
