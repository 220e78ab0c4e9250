"""The coding task's own figure in a run's report (`Task.report_figures`): PassOrNot@k and Accuracy@k against k,
one line per method of the comparison table. `magrpo_edu.viz` hands `plot_pass_at_k` on."""
from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt

from ...display import FIGSIZE


def plot_pass_at_k(table: Sequence[dict], label_key: str = "method", title: str = "PassOrNot@k by method"):
    """PassOrNot@k (solid) and Accuracy@k (dashed) against k, one colour per method of a coding table;
    the legend (the methods, then what each line style is) outside the data."""
    from matplotlib.lines import Line2D

    fig, ax = plt.subplots(figsize=FIGSIZE, layout="constrained")
    every_k: set = set()
    for i, row in enumerate(table):
        ks = sorted(int(k.split("@")[1]) for k in row if k.startswith("pass_or_not@"))
        if not ks:
            continue
        every_k.update(ks)
        ax.plot(ks, [row[f"pass_or_not@{k}"] for k in ks], "-o", color=f"C{i}", label=str(row[label_key]))
        ax.plot(ks, [row[f"accuracy@{k}"] for k in ks], "--", color=f"C{i}", alpha=0.6)
    handles, labels = ax.get_legend_handles_labels()
    handles += [Line2D([], [], color="0.3", ls="-", marker="o"), Line2D([], [], color="0.3", ls="--")]
    labels += ["PassOrNot@k", "Accuracy@k"]
    ax.set_xticks(sorted(every_k))
    ax.set_xlabel("k (samples per problem)")
    ax.set_ylabel("share of problems (solid)\nbest pass fraction (dashed)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title, fontsize=10)
    ax.legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.grid(alpha=0.3)
    return fig


def coding_report_figures(table: Sequence[dict], task: str, drawn: str) -> list:
    """[(file stem, figure)] the coding task adds to a run's report (`Task.report_figures`): pass_at_k.png
    (`plot_pass_at_k`), titled with the task's name and what was drawn ("28 held-out rows x 4 samples")."""
    if not any(k.startswith("pass_or_not@") for row in table for k in row):
        return []
    return [("pass_at_k", plot_pass_at_k(table, title=f"{task}: PassOrNot@k (solid) and Accuracy@k (dashed), {drawn}"))]
