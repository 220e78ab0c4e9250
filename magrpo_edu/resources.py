"""Finding the package's data files, installed (wheel) or in a source checkout.

The single source of truth for datasets is the repository's top-level `data/` folder. The wheel
build copies it to `magrpo_edu/data` (see `[tool.hatch.build.targets.wheel.force-include]` in
pyproject.toml), where `importlib.resources` finds it; in an editable install or a plain checkout
the files are read from `data/` beside the package.
"""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path


def data_dir() -> Path:
    """Folder holding the datasets: inside the installed package, else the checkout's data/."""
    installed = Path(str(resources.files("magrpo_edu"))) / "data"
    if installed.is_dir():
        return installed
    checkout = Path(__file__).resolve().parent.parent / "data"
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"magrpo_edu's data folder is missing (looked in {installed} and {checkout}); "
                            "reinstall the package: pip install magrpo-edu (or from git).")


def read_jsonl(path: str | Path, required: tuple[str, ...] = ()) -> list[dict]:
    """Rows of a JSON Lines file; a malformed line or a row without a required field raises a
    ValueError naming the file, the line number and what is wrong."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}, line {n}: not valid JSON ({exc.msg} at column {exc.colno}).") from None
            if not isinstance(row, dict):
                raise ValueError(f"{path}, line {n}: expected a JSON object per line, got {type(row).__name__}.")
            missing = [k for k in required if k not in row]
            if missing:
                raise ValueError(f"{path}, line {n}: row lacks field(s) {missing}; each row needs {list(required)}.")
            rows.append(row)
    return rows


def write_jsonl(path: str | Path, rows) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
