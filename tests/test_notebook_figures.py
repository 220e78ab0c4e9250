"""Every figure a notebook's prose quotes comes from what the notebook printed, or from a saved file it names.

The README's figures are traced one by one (tests/test_readme_figures.py). A notebook's prose quotes many more, most
of them read off the cell just above, so the rule here is wider: every decimal number in a notebook's markdown must
appear, as the same whole number, in that notebook's SAVED OUTPUTS (what it printed when it ran: streams, text,
markdown, html, not its cells), in its code (a setting: `beta=0.05`), or in one of the saved files listed for it in
SOURCES (a results file the prose cites). What is none of those (a threshold of the text, a paper's identifier) is
listed in NOT_FIGURES with why. A notebook re-executed with other outputs fails here until its prose follows.
Fast: reads files, runs nothing.
"""
import json
import re
from pathlib import Path

import pytest

from conftest import DECIMAL, number, saved_outputs  # shared test helpers: tests/conftest.py

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
ARXIV = re.compile(r"\b\d{4}\.\d{4,5}\b")  # arXiv identifiers (2508.04652): names, not figures

# Saved files a notebook's prose may quote, besides its own outputs.
SOURCES = {
    "00": ["experiments/quickstart_seeds.md"],
    "01": ["experiments/nb01_seeds.md"],
    "02": ["experiments/nb02_lr_screen.md"],
    "03": ["weights/smollm2_tldr/README.md"],
    "05": ["experiments/smollm2_two_turn.md"],
    "04": ["experiments/coding_collaboration.md", "weights/smollm2_coding/README.md",
           "experiments/smollm2_levers.md"],
    "07": ["weights/smollm2_tldr/README.md", "weights/smollm2_coding/README.md",
           "experiments/smollm2_levers.md", "benchmarks/MEMORY.md"],
    "09": ["experiments/arxiv_expansion.md", "experiments/arxiv_expansion.py"],
}

# Decimal numbers of a notebook's prose that are not results, with why ("*": every notebook).
NOT_FIGURES = {
    "*": {"1.4.3": "CoMLRL's version, the release the notebooks compare with",
          "1.16.0": "TRL's version, the release whose options the notebooks name"},
    "01": {"4.1.1": "DeepSeekMath's subsection with GRPO's objective, its Eq. 3 (a locator)",
           "4.1.2": "DeepSeekMath's subsection on outcome supervision, the advantage's definition (a locator)"},
    "03": {"0.75": "the structure level's low point as a share of its maximum, read off the saved figure (no value printed)",
           "5.0001": "an input of the length-level exercise, just past the band's edge",
           "5.0": "the L2 rule's upper edge (the reward's definition, not a result)"},
    "05": {"0.7": "the authors' sampling temperature (a setting)"},
    "08": {"4.1.1": "DeepSeekMath's subsection with GRPO's KL estimator, its Eq. 4 (a locator)"},
    "06": {"10.0": "an offset to try (Things to try)"},
    "09": {"1.6": "the TL;DR length band's lower end (a rule of the reward)",
           "2.98": "the arXiv reward's reachable maximum, 0.5 + 1 + 0.5 + 0.4 x 0.95 + 0.6 (a rule of the reward)",
           "3.2": "the TL;DR length band's upper end (a rule of the reward)",
           "1.7": "the vocabulary level's upper edge (a rule of the reward)",
           "3.0": "the arXiv-expansion reward's maximum (a rule of the reward)"},
}


def markdown(path: Path) -> str:
    return "\n".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "markdown")


def code(path: Path) -> str:
    return "\n".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code")


PLAIN = re.compile(r"(?<![\w.])-?\d+\.\d+(?![\d.])")


def roundings(text: str) -> set[str]:
    """Every decimal in `text` as written and rounded to fewer places: prose that quotes 0.32 for a printed 0.3197
    or 0.320 is tracing it, not inventing it."""
    out = set()
    for m in PLAIN.finditer(text):
        v = m.group().lstrip("-")
        places = len(v.split(".")[1])
        out |= {f"{float(v):.{k}f}" for k in range(1, places + 1)}
    return out


def untraced(path: Path) -> list[str]:
    nn = path.name[:2]
    text = markdown(path)
    found = {m.group() for m in DECIMAL.finditer(ARXIV.sub(" ", text))}
    sources = [saved_outputs(path), code(path)] + [(ROOT / f).read_text() for f in SOURCES.get(nn, [])]
    held = set().union(*(roundings(s) for s in sources))
    allowed = set(NOT_FIGURES["*"]) | set(NOT_FIGURES.get(nn, {}))
    return sorted(f for f in found - allowed - held if not any(number(f).search(s) for s in sources))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_figure_in_the_prose_is_in_the_outputs_or_a_named_file(path):
    missing = untraced(path)
    assert not missing, (f"{path.name} quotes {missing} in its markdown, but its saved outputs, its code and its files in "
                         "SOURCES hold none of them: quote what the notebook printed (re-execute it if the code changed), "
                         "name the file in SOURCES, or list a non-result in NOT_FIGURES with why")


def test_every_listed_source_and_exception_exists():
    for nn, files in SOURCES.items():
        for f in files:
            assert (ROOT / f).exists(), f"SOURCES[{nn!r}] names {f}, which is not in the repository"
    texts = {p.name[:2]: markdown(p) for p in NOTEBOOKS}
    for nn, figures in NOT_FIGURES.items():
        for f in figures:
            where = texts.values() if nn == "*" else [texts[nn]]
            assert any(number(f).search(t) for t in where), f"NOT_FIGURES[{nn!r}] lists {f}, no longer in the prose"


def test_the_check_itself_refuses_what_it_should(tmp_path):
    nb = {"cells": [{"cell_type": "markdown", "source": ["The pair scores 0.71 (was 0.41), arXiv:2508.04652."]},
                    {"cell_type": "code", "source": ["print(x)"], "outputs": [{"output_type": "stream", "text": ["0.710\n"]}]}],
          "metadata": {}}
    p = tmp_path / "99_x.ipynb"
    p.write_text(json.dumps(nb))
    assert untraced(p) == ["0.41"]                # 0.710 printed holds 0.71 quoted; the arXiv id is no figure
    nb["cells"][1]["outputs"][0]["text"] = ["0.4149\n"]
    p.write_text(json.dumps(nb))
    assert untraced(p) == ["0.71"]                # 0.4149 rounds to 0.41; 0.41 does not round to 0.71
    nb["cells"][1]["outputs"][0]["text"] = ["0.71 0.406\n"]
    p.write_text(json.dumps(nb))
    assert untraced(p) == []
