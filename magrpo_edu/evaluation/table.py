"""The comparison table in markdown: one row per method (`protocols.run_method`, `protocols.row_from_evaluation`),
one column per number the rows carry."""
from __future__ import annotations

from typing import Optional, Sequence

NOT_COLUMNS = ("method", "samples", "passed", "total_asserts", "evaluation", "texts", "pair_rewards", "first_turn_texts")
"""Keys of a table row that are bookkeeping, not a column of `markdown_table`."""


def markdown_table(table: Sequence[dict], maxima: Optional[dict] = None) -> str:
    """The comparison as a markdown table (wall time: parallel agents counted as concurrent). `maxima`:
    what each reward component earns at most (`Task.component_max`), written beside its column's name.
    Columns come from the rows: the reward first, then every other number a row carries (a task's levels and
    metrics, coding's PassOrNot@k and load-bearing rate) in the order met, then text quality, lengths, tokens and
    time; `NOT_COLUMNS` are left out. A value that is no number (None: char_ratio where every first part is empty)
    shows as "-"."""
    lead = ["reward", "normalised"]
    parts = range(1, 1 + sum(f"len{k}_chars" in table[0] for k in range(1, 1 + len(table[0]))))  # one per agent
    tail = [f"{m}{k}" for m in ("repetition", "naturalness") for k in parts]
    tail += [f"len{k}_chars" for k in parts] + ["char_ratio", "tokens", "seconds"]
    middle = []
    for r in table:
        middle += [k for k, v in r.items() if k not in lead + tail + middle and k not in NOT_COLUMNS
                   and (v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)))]
    cols = [c for c in lead + middle + tail if any(c in r for r in table)]
    maxima = maxima or {}

    def cell(v) -> str:
        return "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)

    names = [f"{c} (of {maxima[c]:g})" if c in maxima else c for c in cols]
    head = "| method | " + " | ".join(names) + " |\n|---|" + "---|" * len(cols) + "\n"
    body = "".join("| " + r["method"] + " | " + " | ".join(cell(r.get(c)) for c in cols) + " |\n" for r in table)
    undefined = "char_ratio" in cols and any(r.get("char_ratio") is None for r in table)
    notes = {  # each column's note, printed only under a table that has the column
        "seconds": "seconds = generation wall time per joint answer; agents that run in parallel are counted as "
                   "concurrent (the slower one), as the paper does; sequential and discussion rounds add up.",
        "repetition": "repetition = share of repeated word 3-grams;",
        "naturalness": "naturalness = mean per-token NLL under the untrained model (lower = more like its language).",
    }
    said = [note for key, note in notes.items() if any(c.startswith(key) for c in cols)]
    if undefined:
        said.append("char_ratio = mean of chars(part 2) / chars(part 1) over the joint answers whose first part "
                    "is not empty; - where every first part is empty (no ratio to nothing).")
    return head + body + ("\n" + " ".join(said) + "\n" if said else "")
