"""The front page, the guides and the folder indexes point at files that exist: every relative link, and
every repository path written in backticks (experiments/..., benchmarks/..., tools/..., docs/..., notebooks/...,
tests/...). A moved file whose old path is still written somewhere fails here. Fast: reads files only."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "docs").glob("*/README.md"),
                *(ROOT / d / "README.md" for d in ("experiments", "experiments/runs", "benchmarks", "tools"))])
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
REPO_PATH = re.compile(r"`((?:experiments|benchmarks|tools|docs|notebooks|tests|magrpo_edu|data|binder|\.ci)/[\w./-]*)")


def targets(page: Path):
    text = page.read_text()
    for m in LINK.finditer(text):
        if not re.match(r"[a-z]+:", m.group(1)):  # not http(s):, mailto:
            yield m.group(1), page.parent / m.group(1)
    for m in REPO_PATH.finditer(text):
        path = m.group(1).rstrip(".")
        if not any(ch in path for ch in "*<>") and not path.endswith("/..."):
            yield path, ROOT / path


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_path_a_page_names_exists(page):
    assert page.exists()
    missing = sorted({name for name, path in targets(page) if not path.exists()})
    assert not missing, f"{page.relative_to(ROOT)} names paths that do not exist: {missing}"
