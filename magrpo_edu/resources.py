"""Finding the package's data files, installed (wheel) or in a source checkout, and reading rows
from JSON Lines files (or a hub dataset) with clear errors for bad input.

The single source of truth for datasets is the repository's top-level `data/` folder. The wheel
build copies it to `magrpo_edu/data` (see `[tool.hatch.build.targets.wheel.force-include]` in
pyproject.toml), where `importlib.resources` finds it; in an editable install or a plain checkout
the files are read from `data/` beside the package.

Reading rows (`read_jsonl`, `load_rows`) checks what the tasks need, and every error names the
file, the line (or row) and the field, says what is wrong and what to do:

* the file must be UTF-8 (a leading byte-order mark is accepted): otherwise the error gives the
  byte offset of the first bad byte and how to re-encode the file;
* it must hold at least one row, each line one JSON object;
* each required field must be present and of its type; a `str` field must be a non-empty string
  (not null, not blank), and a field given as a `Field` with a `check` gets that extra check too (the
  coding task's `entry_point` must be a Python identifier: its own rule, in tasks/coding/data.py);
* no string anywhere in a row may hold a lone UTF-16 surrogate (U+D800-U+DFFF, e.g. from a broken
  "\\ud83d" escape): it is not valid Unicode and breaks tokenizers and file writes later.
"""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence


def _shipped_folder(name: str) -> Path:
    """A top-level folder of the checkout that the wheel build copies into the package (pyproject's force-include):
    magrpo_edu/<name> when installed, else the checkout's <name>/."""
    installed = Path(str(resources.files("magrpo_edu"))) / name
    if installed.is_dir():
        return installed
    checkout = Path(__file__).resolve().parent.parent / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"magrpo_edu's {name} folder is missing (looked in {installed} and {checkout}); "
                            "reinstall the package: pip install magrpo-edu (or from git).")


def data_dir() -> Path:
    """Folder holding the datasets: inside the installed package, else the checkout's data/."""
    return _shipped_folder("data")


def weights_dir() -> Path:
    """Folder holding the shipped weights and their cards (the embedded models tiny, tiny-code and tiny-code-2turn,
    the SmolLM2 adapters): kept apart from the code in the checkout's top-level weights/ folder, which the wheel
    build copies into the package as magrpo_edu/weights (pyproject's force-include, as data/ is)."""
    return _shipped_folder("weights")


SAVED_RESULTS = ("quickstart_seeds", "coding_collaboration", "arxiv_expansion", "smollm2_levers", "smollm2_two_turn",
                 "nb01_seeds", "nb02_lr_screen")
"""The experiments whose saved results the notebooks read (`saved_results`); the wheel ships them."""


def saved_results(name: str) -> Any:
    """The saved results of experiment `name` (`SAVED_RESULTS`): the JSON its script in experiments/ wrote.
    The single source of truth is the checkout's experiments/<name>.json; the wheel build copies each one
    into the package as magrpo_edu/saved_results/<name>.json (pyproject's force-include), so a notebook on
    Colab or Binder reads them with no checkout and no network."""
    if name not in SAVED_RESULTS:
        raise ValueError(f"no saved results named {name!r}; the package ships {', '.join(SAVED_RESULTS)}.")
    checkout = Path(__file__).resolve().parent.parent / "experiments" / f"{name}.json"
    installed = Path(str(resources.files("magrpo_edu"))) / "saved_results" / f"{name}.json"
    for path in (checkout, installed):
        if path.is_file():
            return json.loads(path.read_text(encoding="utf-8"))
    raise FileNotFoundError(f"the saved results {name!r} are missing (looked in {checkout} and {installed}); "
                            "reinstall the package (pip install magrpo-edu, or from git), or run "
                            f"experiments/{name}.py in a checkout.")


# ---- checks shared by every reader -------------------------------------------------------------------
@dataclass(frozen=True)
class Field:
    """A required field's rule when its type alone does not say enough: the type (as in `Required`) and an extra
    check of a value of that type, a function returning what is wrong (one clause) or None. A task keeps its own
    rules (the coding task: `entry_point` must be an identifier), so this module knows no task's fields."""

    type: Any = str
    check: Optional[Callable[[Any], Optional[str]]] = None


Required = Sequence[str] | Mapping[str, Any]
"""Field names (each a non-empty string), or a mapping field -> type (or tuple of types, or a `Field`); `str`
means a non-empty string, any other type an `isinstance` check (`object`: any value but null)."""


def _type_name(t) -> str:
    if isinstance(t, tuple):
        return " or ".join(_type_name(x) for x in t)
    return {str: "a non-empty string", int: "an integer", float: "a number", list: "a list",
            dict: "an object", bool: "true or false", object: "a value"}.get(t, t.__name__)


def _json_type(v) -> str:
    return "null" if v is None else {str: "a string", bool: "a boolean", int: "a number", float: "a number",
                                     list: "a list", dict: "an object"}.get(type(v), type(v).__name__)


def find_lone_surrogate(value: Any, name: str = "") -> tuple[str, int, str] | None:
    """(field path, character index, 'U+XXXX') of the first lone surrogate in a string or in the
    strings of a nested list/dict, or None."""
    if isinstance(value, str):
        for i, ch in enumerate(value):
            if "\ud800" <= ch <= "\udfff":
                return name, i, f"U+{ord(ch):04X}"
        return None
    if isinstance(value, dict):
        for k, v in value.items():
            hit = find_lone_surrogate(v, f"{name}.{k}" if name else str(k))
            if hit:
                return hit
    elif isinstance(value, (list, tuple)):
        for j, v in enumerate(value):
            hit = find_lone_surrogate(v, f"{name}[{j}]")
            if hit:
                return hit
    return None


def check_row(row: Any, where: str, required: Required = ()) -> dict:
    """The row itself when it is a JSON object whose required fields are all valid (see the module
    docstring); otherwise a ValueError that starts with `where` (e.g. "data.jsonl, line 3")."""
    if not isinstance(row, dict):
        raise ValueError(f"{where}: expected a JSON object per row, got {_json_type(row)}; "
                         'write one object per line, e.g. {"id": "1", "post": "..."}.')
    spec = dict(required) if isinstance(required, Mapping) else {k: str for k in required}
    missing = [k for k in spec if k not in row]
    if missing:
        raise ValueError(f"{where}: row lacks field(s) {missing}; each row needs {list(spec)} "
                         f"(this row has {sorted(row)}). Add the field(s) or drop the row.")
    for k, rule in spec.items():
        v = row[k]
        t, check = (rule.type, rule.check) if isinstance(rule, Field) else (rule, None)
        types = t if isinstance(t, tuple) else (t,)
        if v is None or not isinstance(v, types) or (type(v) is bool and bool not in types):
            raise ValueError(f"{where}, field {k!r}: must be {_type_name(t)}, got {_json_type(v)}"
                             f"{'' if v is None else f' ({v!r:.60})'}. Fix the row or drop it.")
        if isinstance(v, str) and str in types:
            if not v.strip():
                raise ValueError(f"{where}, field {k!r}: is {'empty' if not v else 'blank'}; it must be a "
                                 "non-empty string. Fill it in or drop the row.")
        problem = check(v) if check is not None else None
        if problem:
            raise ValueError(f"{where}, field {k!r}: {problem}.")
    hit = find_lone_surrogate(row)
    if hit:
        name, i, code = hit
        raise ValueError(f"{where}, field {name!r}: lone surrogate {code} at character {i}: not valid Unicode "
                         "(usually half of a broken \\ud83d-style escape, or text decoded with the wrong codec). "
                         "Fix or remove that character in the source file.")
    return row


def read_text(path: str | Path) -> str:
    """The text of a UTF-8 file (a leading byte-order mark is dropped). A file that is not UTF-8
    raises a ValueError with the byte offset (and line) of the first bad byte and how to re-encode it."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ValueError(
            f"{path}: not UTF-8 text: byte 0x{data[exc.start]:02x} at byte offset {exc.start} (line {line}) "
            f"cannot be decoded ({exc.reason}). Re-encode the file as UTF-8, e.g. "
            f"`iconv -f latin1 -t utf-8 {Path(path).name} > fixed.jsonl` (use the file's real encoding: "
            "latin1, cp1252, utf-16, ...).") from None


def _jsonl_rows(path, text: str, required: Required) -> Iterator[tuple[int, dict]]:
    """(line number, checked row) for each non-blank line of a JSON Lines text."""
    for n, line in enumerate(text.split("\n"), 1):  # only \n ends a line: U+2028 may sit inside a string
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}, line {n}: not valid JSON ({exc.msg} at column {exc.colno}); "
                             "each line must be one complete JSON object.") from None
        yield n, check_row(row, f"{path}, line {n}", required)


def _no_rows(path, required: Required, what: str = "the file is empty or holds only blank lines") -> ValueError:
    fields = f" with fields {list(required)}" if required else ""
    return ValueError(f"{path}: no rows ({what}); it needs at least one row, a JSON object per line{fields}.")


def read_jsonl(path: str | Path, required: Required = (), allow_empty: bool = False) -> list[dict]:
    """Rows of a UTF-8 JSON Lines file (blank lines skipped), each checked with `check_row`.

    `required`: field names (each must be a non-empty string) or a mapping field -> type (see
    `Required`). A non-UTF-8 file, a malformed line, a row that is not an object, a missing, null,
    empty or mistyped required field, a value its `Field` check refuses, a lone surrogate,
    and (unless `allow_empty`) a file without rows raise a ValueError naming the file, the line number
    and the field, and saying what to do.
    """
    rows = [row for _, row in _jsonl_rows(path, read_text(path), required)]
    if not rows and not allow_empty:
        raise _no_rows(path, required)
    return rows


class DataNotAvailableError(RuntimeError):
    """A hub dataset could not be loaded (offline, unknown id, ...); the message says what to do."""


def load_rows(path: str, split: str = "train", limit: int | None = None, required: Required = (),
              **kw) -> Iterator[tuple[str, dict]]:
    """(where, row) pairs from a local file or a hub dataset, `where` naming the row for messages
    ("file.jsonl, line 3", "file.json, item 2" or "owner/name (split 'train'), row 2"); at most
    `limit` rows, and rows past the limit are not read.

    A local file without `load_dataset` keyword arguments is read here: a JSON array of objects if
    its text starts with '[', else JSON Lines, so errors name the line or item. A local file with
    `**kw` and a hub dataset id go through `datasets.load_dataset` (the optional dependency
    `datasets`), local files checked for UTF-8 and emptiness first. Every row is checked with
    `check_row`; no row at all raises a ValueError; a path that looks like a file but does not exist
    raises FileNotFoundError; a hub dataset that cannot be loaded raises DataNotAvailableError with
    the reason and what to do.
    """
    p = Path(path).expanduser()
    if p.is_file():
        text = read_text(p)
        if not text.strip():
            raise _no_rows(path, required)
        if not kw:
            if text.lstrip().startswith("["):
                try:
                    items = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}, line {exc.lineno}: not valid JSON ({exc.msg} at column {exc.colno}).") from None
                if not items:
                    raise _no_rows(path, required, "the JSON array is empty")
                for i, row in enumerate(items if limit is None else items[:max(limit, 0)]):
                    yield f"{path}, item {i}", check_row(row, f"{path}, item {i}", required)
                return
            if limit is not None and limit <= 0:
                return
            count = 0
            for n, row in _jsonl_rows(path, text, required):  # rows past the limit are not read
                count += 1
                yield f"{path}, line {n}", row
                if limit is not None and count >= limit:
                    return
            if not count:
                raise _no_rows(path, required)
            return
    elif p.suffix in (".jsonl", ".json") or path.startswith((".", "/", "~")):
        raise FileNotFoundError(f"{path}: no such file. Pass an existing JSON Lines file, or a hub dataset id (owner/name).")
    try:
        import datasets
    except ImportError:
        raise ImportError(f"Loading {path!r} needs the optional dependency `datasets`: pip install 'magrpo-edu[data]' "
                          "(a local JSON Lines file needs nothing).") from None
    try:
        d = datasets.load_dataset("json", data_files=str(p), split="train", **kw) if p.is_file() else \
            datasets.load_dataset(path, split=split, **kw)
    except Exception as exc:
        if p.is_file():
            raise
        raise DataNotAvailableError(
            f"Could not load the dataset {path!r} (split {split!r}) through `datasets`: {type(exc).__name__}: {exc}. "
            "Offline (HF_HUB_OFFLINE/HF_DATASETS_OFFLINE set, or no network) the hub is unreachable: pass a local "
            "JSON Lines file with the same fields instead, or use the package's own data (load_writing / load_coding).") from exc
    count = 0
    for i, r in enumerate(d):
        if limit is not None and i >= limit:
            break
        where = f"{path}, row {i}" if p.is_file() else f"{path} (split {split!r}), row {i}"
        count += 1
        yield where, check_row(r, where, required)
    if not count and limit != 0:
        raise ValueError(f"{path}: no rows{'' if p.is_file() else f' in split {split!r}'}; "
                         "pass a file or split that holds data.")


def write_jsonl(path: str | Path, rows) -> None:
    """Write rows as UTF-8 JSON Lines (non-ASCII kept as is)."""
    with open(path, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
