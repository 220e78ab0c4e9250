"""Plots and widgets for the notebooks and the `magrpo-edu train` job.

Every plot is a function that takes a trainer's `history` (list of dicts) or its `samples` and
returns a matplotlib Figure of fixed size, so GitHub, nbviewer and nbval all see an image.
`LiveRewardPlot` is a callback that redraws one figure in place through a display handle.
The ipywidgets explorers only select already-computed data, and each also saves a static HTML copy of
what it shows (GitHub and nbviewer draw no widget): see `Explorer` below.
"""
from __future__ import annotations

from typing import Optional, Sequence

import matplotlib.pyplot as plt

FIGSIZE = (7.5, 3.6)


def _series(history: Sequence[dict], key: str):
    pts = [(h["step"], h[key]) for h in history if key in h]
    return [p[0] for p in pts], [p[1] for p in pts]


def smooth(values: Sequence[float], window: int = 10) -> list[float]:
    """Trailing moving average (window shrinks at the start)."""
    out, acc = [], 0.0
    for i, v in enumerate(values):
        acc += v
        if i >= window:
            acc -= values[i - window]
        out.append(acc / min(i + 1, window))
    return out


def plot_rewards(history: Sequence[dict], title: str = "Joint reward per step", window: int = 10, ax=None,
                 evals: Sequence[dict] = ()):
    """Mean joint reward per step with a +/- std band (cut to the group's own min and max, so it never
    leaves the rewards the group got), min/max markers and a moving average; the legend outside the data.
    `evals`: held-out evaluations ({"step", "eval/reward"}, e.g. untrained at step 0, halfway, trained),
    drawn as black diamonds on the same axis (the training curve is on training prompts, these on
    held-out rows with a fixed seed)."""
    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=FIGSIZE)
    steps, mean = _series(history, "reward")
    _, std = _series(history, "reward_std")
    _, lo = _series(history, "reward_min")
    _, hi = _series(history, "reward_max")
    if steps:
        lower, upper = [m - s for m, s in zip(mean, std)], [m + s for m, s in zip(mean, std)]
        if len(lo) == len(hi) == len(mean):  # histories written before reward_min/max existed lack them
            lower, upper = [max(x, a) for x, a in zip(lower, lo)], [min(x, b) for x, b in zip(upper, hi)]
        ax.fill_between(steps, lower, upper, alpha=0.2, color="C0", label="mean ± std (group),\nwithin its min/max")
        ax.plot(steps, lo, ".", ms=2, color="C3", alpha=0.5, label="min / max")
        ax.plot(steps, hi, ".", ms=2, color="C3", alpha=0.5)
        ax.plot(steps, mean, lw=0.8, color="C0", alpha=0.6, label="mean")
        ax.plot(steps, smooth(mean, window), lw=2.0, color="C0", label=f"mean, moving avg ({window})")
    es, ev = _series(evals, "eval/reward")
    if es:
        ax.plot(es, ev, "D-", color="black", ms=6, lw=1.0, label="held-out evaluation")
    ax.set_xlabel("training step (one prompt, one group per step)")
    ax.set_ylabel("joint reward (task units)")
    ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, borderaxespad=0)
    ax.grid(alpha=0.3)
    if fig is not None:
        fig.tight_layout()
    return fig or ax.figure


def plot_components(history: Sequence[dict], window: int = 10, title: str = "Reward components"):
    """Every logged reward/<component> (moving average), one line each; None when the reward has no
    components (e.g. the length-ratio task), so no empty figure is drawn."""
    keys = sorted({k for h in history for k in h if k.startswith("reward/")})
    if not keys:
        return None
    fig, ax = plt.subplots(figsize=FIGSIZE)
    for k in keys:
        s, v = _series(history, k)
        ax.plot(s, smooth(v, window), label=k.split("/", 1)[1])
    ax.set_xlabel("training step")
    ax.set_ylabel(f"level score (moving avg {window})")
    ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, borderaxespad=0)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def plot_agents(history: Sequence[dict], window: int = 10):
    """Per-agent loss and mean completion length (tokens), side by side."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(FIGSIZE[0] * 1.3, FIGSIZE[1]))
    for k in sorted({k for h in history for k in h if k.startswith("loss/")}):
        s, v = _series(history, k)
        a1.plot(s, smooth(v, window), label=k.split("/", 1)[1])
    for k in sorted({k for h in history for k in h if k.startswith("completions/mean_length/")}):
        s, v = _series(history, k)
        a2.plot(s, smooth(v, window), label=k.rsplit("/", 1)[1])
    a1.set_title("policy loss per agent")
    a2.set_title("completion length per agent")
    a1.set_ylabel(f"-mean(A·Σ log π) + β·mean(Σ k3) (moving avg {window})")
    a2.set_ylabel(f"tokens (moving avg {window})")
    for a in (a1, a2):
        a.set_xlabel("training step")
        a.grid(alpha=0.3)
    a2.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)  # outside the data
    fig.tight_layout()
    return fig


def plot_quality(history: Sequence[dict], eval_history: Sequence[dict] = (), window: int = 10,
                 title: str = "Reward and text quality"):
    """Is the reward learned as readable text? Three panels over steps: the joint reward (moving
    average, and eval/reward at eval points), each agent's repetition (share of repeated word
    3-grams: training steps as lines, eval points as markers), and each agent's naturalness (mean
    per-token NLL under the untrained model, eval points only: lower = more natural). A gamed
    reward shows as reward up while repetition or naturalness climbs."""
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(FIGSIZE[0] * 1.6, FIGSIZE[1]))
    s, v = _series(history, "reward")
    if s:
        a1.plot(s, v, lw=0.8, color="C0", alpha=0.4)
        a1.plot(s, smooth(v, window), lw=2.0, color="C0", label=f"train, moving avg ({window})")
    s, v = _series(eval_history, "eval/reward")
    if s:
        a1.plot(s, v, "o-", ms=4, color="C1", label="eval")
    agents = sorted({k.rsplit("/", 1)[1] for h in list(history) + list(eval_history) for k in h
                     if k.startswith(("quality/repetition/", "eval/repetition/", "eval/naturalness/"))})
    for j, name in enumerate(agents):
        color = f"C{j + 2}"
        s, v = _series(history, f"quality/repetition/{name}")
        if s:
            a2.plot(s, smooth(v, window), color=color, label=f"{name} (train)")
        s, v = _series(eval_history, f"eval/repetition/{name}")
        if s:
            a2.plot(s, v, "o", ms=4, color=color, label=f"{name} (eval)")
        s, v = _series(eval_history, f"eval/naturalness/{name}")
        if s:
            a3.plot(s, v, "o-", ms=4, color=color, label=name)
    a1.set_title("joint reward")
    a2.set_title("repetition (repeated 3-grams)")
    a2.set_ylim(-0.02, 1.02)
    a3.set_title("naturalness (NLL/token, lower = more natural)")
    for a in (a1, a2, a3):
        a.set_xlabel("step")
        a.grid(alpha=0.3)
        if a.get_legend_handles_labels()[0]:
            a.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def plot_group(sample: dict, title: Optional[str] = None):
    """One step's joint rewards and advantages as bars (one bar per joint action)."""
    r, a = sample["rewards"], sample["advantages"]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=FIGSIZE)
    x = list(range(len(r)))
    a1.bar(x, r, color="C0")
    a1.axhline(sum(r) / len(r), color="k", ls="--", lw=1, label="group mean (baseline)")
    a1.set_title("joint rewards r^(j)")
    a1.legend(fontsize=8)
    a2.bar(x, a, color=["C2" if v >= 0 else "C3" for v in a])
    a2.axhline(0, color="k", lw=0.8)
    a2.set_title("advantages A^(j) (same for every agent)")
    for ax in (a1, a2):
        ax.set_xlabel("joint action j")
    fig.suptitle(title or f"step {sample.get('step', '?')}")
    fig.tight_layout()
    return fig


_METRIC_UNITS = {"normalised": "normalised reward (reward / max reward, 0-1)",
                 "pass_or_not@1": "PassOrNot@1 (share of problems, 0-1)",
                 "cooperation_rate": "cooperation rate (share, 0-1)"}


def plot_comparison(table: Sequence[dict], metric: str = "reward", label_key: str = "method", title: str | None = None):
    """Bars of one metric for several methods (e.g. baselines vs MAGRPO)."""
    fig, ax = plt.subplots(figsize=FIGSIZE)
    names = [str(r[label_key]) for r in table]
    vals = [r[metric] for r in table]
    ax.bar(names, vals, color=[f"C{i}" for i in range(len(names))])
    for i, v in enumerate(vals):
        ax.text(i, v, f"{v:.2f}", ha="center", va="bottom", fontsize=8)
    ax.set_ylabel(_METRIC_UNITS.get(metric, metric))
    if metric in _METRIC_UNITS:  # a share or a normalised reward: the whole range 0-1, so bars compare honestly
        ax.set_ylim(0, 1.08)
    ax.set_title(title or f"{metric} by method")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def plot_runs(histories: dict, key: str = "reward", window: int = 10, title: str | None = None, ax=None):
    """Several runs' curves of one logged key on one axis (moving average), e.g. the variants of
    notebook 06: `histories` maps a run's label to its trainer history."""
    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=FIGSIZE)
    for i, (label, history) in enumerate(histories.items()):
        s, v = _series(history, key)
        ax.plot(s, v, lw=0.6, alpha=0.25, color=f"C{i}")
        ax.plot(s, smooth(v, window), lw=2.0, color=f"C{i}", label=label)
    ax.set_xlabel("step")
    ax.set_ylabel(f"{key} (moving avg {window})")
    ax.set_title(title or f"{key} per step")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    if fig is not None:
        fig.tight_layout()
    return fig or ax.figure


def plot_rollout_tree(rollout, title: str = "Rollout tree", agent_texts: int = 0):
    """A multi-turn rollout tree (`magrpo_edu.algorithm.Rollout`): one box per node, its joint
    rewards r and, once advantages are assigned, its returns R; an edge per expanded joint action.
    Nodes whose children were cut by early termination are drawn with a dashed border."""
    levels = rollout.levels
    fig, ax = plt.subplots(figsize=(max(FIGSIZE[0], 2.2 * max(len(lv) for lv in levels)), 1.9 * len(levels) + 0.6))
    pos = {}
    for d, level in enumerate(levels):
        for k, nd in enumerate(level):
            pos[id(nd)] = ((k + 0.5) / len(level), 1 - (d + 0.5) / len(levels))
    for nd in rollout.nodes():
        x, y = pos[id(nd)]
        for j, child in nd.children.items():
            cx, cy = pos[id(child)]
            ax.annotate("", xy=(cx, cy + 0.08), xytext=(x, y - 0.08),
                        arrowprops=dict(arrowstyle="->", color="0.5", lw=0.8))
            ax.text((x + cx) / 2, (y + cy) / 2, f"j={j}", fontsize=7, color="0.4", ha="center")
        lines = [f"turn {nd.depth + 1}", "r = " + " ".join(f"{v:.2f}" for v in nd.rewards.tolist())]
        if nd.returns is not None:
            lines.append("R = " + " ".join(f"{v:.2f}" for v in nd.returns.tolist()))
        if agent_texts:
            lines += [f"a{i + 1}: {c[0][:agent_texts]!r}" for i, c in enumerate(nd.completions)]
        ax.text(x, y, "\n".join(lines), ha="center", va="center", fontsize=7, family="monospace",
                bbox=dict(boxstyle="round", fc="C0" if nd.depth == 0 else "C1", alpha=0.15,
                          ls="--" if nd.terminated_early else "-"))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.axis("off")
    ax.set_title(title)
    fig.tight_layout()
    return fig


def plot_joint_actions(G: int = 4, rewards=None, title: str | None = None):
    """Aligned vs cross joint actions of 2 agents as G x G grids (rows: agent 1's sample k1, columns:
    agent 2's sample k2). Aligned uses the diagonal (G joint actions); cross uses every cell (G**2).
    With `rewards` (a G x G array of joint rewards) the cross grid is coloured by reward."""
    import numpy as np

    fig, (a1, a2) = plt.subplots(1, 2, figsize=FIGSIZE)
    a1.imshow(np.eye(G), cmap="Blues", vmin=0, vmax=1.4)
    for g in range(G):
        a1.text(g, g, f"j={g}", ha="center", va="center", fontsize=8)
    a1.set_title(f"aligned: {G} joint actions")
    grid = np.ones((G, G)) if rewards is None else np.asarray(rewards, dtype=float)
    im = a2.imshow(grid, cmap="Blues" if rewards is None else "viridis")
    for k1 in range(G):
        for k2 in range(G):
            label = f"j={k1 * G + k2}" if rewards is None else f"{grid[k1, k2]:.2f}"
            a2.text(k2, k1, label, ha="center", va="center", fontsize=7, color="k" if rewards is None else "w")
    a2.set_title(f"cross: {G * G} joint actions" + ("" if rewards is None else " (joint reward)"))
    if rewards is not None:
        fig.colorbar(im, ax=a2, fraction=0.046)
    for ax in (a1, a2):
        ax.set_xlabel("agent 2's sample k2")
        ax.set_ylabel("agent 1's sample k1")
        ax.set_xticks(range(G))
        ax.set_yticks(range(G))
    fig.suptitle(title or "joint actions of two agents with G samples each")
    fig.tight_layout()
    return fig


class LiveRewardPlot:
    """Trainer callback: redraw the reward curve in place every `every` logs (no clear_output loops).

    Create it in a notebook cell before `trainer.train()`; pass it in `callbacks=[...]`.
    """

    def __init__(self, every: int = 5, window: int = 10):
        from IPython.display import display

        self.every, self.window, self.n = every, window, 0
        self.fig, self.ax = plt.subplots(figsize=FIGSIZE)
        plt.close(self.fig)  # shown only through the handle
        self.handle = display(self.fig, display_id=True)

    def on_step_end(self, trainer, record):
        pass

    def on_log(self, trainer, record):
        self.n += 1
        if self.n % self.every == 0 or trainer.step == trainer.total_steps:
            self.ax.clear()
            plot_rewards(trainer.history, window=self.window, ax=self.ax)
            self.fig.tight_layout()
            if self.handle is not None:
                self.handle.update(self.fig)


def plot_pass_at_k(table: Sequence[dict], label_key: str = "method", title: str = "PassOrNot@k by method"):
    """PassOrNot@k (solid) and Accuracy@k (dashed) against k, one colour per method of a coding table."""
    fig, ax = plt.subplots(figsize=FIGSIZE)
    for i, row in enumerate(table):
        ks = sorted(int(k.split("@")[1]) for k in row if k.startswith("pass_or_not@"))
        if not ks:
            continue
        ax.plot(ks, [row[f"pass_or_not@{k}"] for k in ks], "-o", color=f"C{i}", label=f"{row[label_key]} pass@k")
        ax.plot(ks, [row[f"accuracy@{k}"] for k in ks], "--", color=f"C{i}", alpha=0.6)
    ax.set_xlabel("k (samples per problem)")
    ax.set_ylabel("share of problems (solid) / best pass fraction (dashed)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig



# ---- explorers (ipywidgets): they only select already-computed data -----------------------------------
# Every explorer is an `Explorer`: a VBox whose display bundle carries, beside ipywidgets' widget view,
# a "text/html" rendering of what the widget shows when it is displayed. JupyterLab, Notebook 7 and
# Colab draw the live widget; GitHub, nbviewer and `jupyter nbconvert --to html` have no kernel (and
# no widget state once scripts/nbtools.py strips it), so they fall back to the HTML instead of
# printing `VBox(children=...)`. Widget and fallback come from the same renderer (`group_html`,
# `coding_html`, `rollout_html`, `before_after_report`), so they cannot disagree.

_EXPLORER = None


def _explorer_class():
    global _EXPLORER
    if _EXPLORER is None:
        import ipywidgets as W

        class Explorer(W.VBox):
            """A VBox whose saved output also shows `static_html()` where no widget can be drawn."""

            def __init__(self, children, static_html, **kwargs):
                super().__init__(children, **kwargs)
                self.static_html = static_html

            def _repr_mimebundle_(self, **kwargs):
                data = super()._repr_mimebundle_(**kwargs) or {}
                data["text/html"] = ("<p style='color:#555'><i>Static copy of the explorer below as it was when the "
                                     "notebook ran (its controls need a running kernel).</i></p>" + self.static_html())
                return data
        _EXPLORER = Explorer
    return _EXPLORER


def _png_img(fig, alt: str) -> str:
    """An <img> holding `fig` as a PNG data URI (a plain matplotlib Figure: nothing is shown or kept open)."""
    import base64
    import html
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    uri = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
    return f"<img src='{uri}' alt='{html.escape(alt, quote=True)}' style='max-width:100%'>"


def group_chart(rewards: Sequence[float], advantages: Sequence[float], title: str = "") -> str:
    """One group as a small inline bar chart (HTML <img>): the joint rewards with the group mean (the
    baseline) dashed, and the advantages (green > 0, red < 0). Its alt text lists the numbers."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3.3, 2.7))
    a1, a2 = fig.subplots(2, 1, sharex=True)
    x = list(range(len(rewards)))
    mean = sum(rewards) / len(rewards)
    a1.bar(x, rewards, color="C0")
    a1.axhline(mean, color="k", ls="--", lw=1)
    a1.set_ylabel("reward r", fontsize=8)
    a1.set_title((title + ": " if title else "") + "dashed = group mean (baseline)", fontsize=8)
    a2.bar(x, advantages, color=["C2" if v >= 0 else "C3" for v in advantages])
    a2.axhline(0, color="k", lw=0.8)
    a2.set_ylabel("advantage A", fontsize=8)
    a2.set_xlabel("joint action j", fontsize=8)
    a2.set_xticks(x if len(x) <= 16 else x[::max(1, len(x) // 8)])
    for a in (a1, a2):
        a.tick_params(labelsize=7)
        a.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    alt = ("bar chart; rewards " + ", ".join(f"{v:.2f}" for v in rewards) + f"; mean {mean:.2f}; advantages "
           + ", ".join(f"{v:+.2f}" for v in advantages))
    return _png_img(fig, alt)


def _side_by_side(left: str, right: str) -> str:
    return (f"<table><tr><td style='vertical-align:top'>{left}</td>"
            f"<td style='vertical-align:top;text-align:left'>{right}</td></tr></table>")


def group_html(sample: dict, max_chars: int = 300, chart: bool = False) -> str:
    """An HTML table of one step: each joint action's completions side by side, reward, advantage.
    `chart=True` puts `group_chart` (rewards and advantages as bars) to the left of the table."""
    import html

    n = len(sample["completions"])
    table = sample.get("table") or [[j] * n for j in range(len(sample["rewards"]))]
    head = "".join(f"<th>agent {i}</th>" for i in range(n))
    rows = []
    for j, (r, a) in enumerate(zip(sample["rewards"], sample["advantages"])):
        cells = "".join(
            f"<td style='text-align:left;vertical-align:top;white-space:pre-wrap'>{html.escape(sample['completions'][i][table[j][i]][:max_chars])}</td>"
            for i in range(n))
        color = "#e6f4ea" if a > 0 else ("#fce8e6" if a < 0 else "#f1f3f4")
        rows.append(f"<tr style='background:{color}'><td>{j}</td>{cells}<td>{r:.3f}</td><td>{a:+.3f}</td></tr>")
    title = (f"<b>step {sample.get('step', '?')}</b> - mean joint reward {sum(sample['rewards']) / len(sample['rewards']):.3f}")
    body = f"<table><tr><th>j</th>{head}<th>reward</th><th>advantage</th></tr>{''.join(rows)}</table>"
    if chart:
        return title + _side_by_side(group_chart(sample["rewards"], sample["advantages"], f"step {sample.get('step', '?')}"), body)
    return title + body


def group_explorer(samples, max_chars: int = 300):
    """A step slider and an agent picker over a trainer's `samples`: the group's rewards and advantages
    as bars (`group_chart`) beside every agent's G completions with their joint rewards and
    advantages. Returns the widget (display it, or let the cell show it); a saved notebook shows the
    sample it was displayed on as static HTML."""
    import ipywidgets as W

    samples = list(samples)
    if not samples:
        raise ValueError("group_explorer needs at least one logged sample (trainer.samples is empty).")
    n = len(samples[0]["completions"])
    slider = W.IntSlider(value=len(samples) - 1, min=0, max=len(samples) - 1, description="sample #", continuous_update=False)
    agents = W.SelectMultiple(options=list(range(n)), value=tuple(range(n)), description="agents", rows=min(n, 4))
    out = W.HTML()

    def render(*_):
        s = dict(samples[slider.value])
        keep = list(agents.value) or list(range(n))
        s["completions"] = [s["completions"][i] for i in keep]
        if s.get("table"):
            s["table"] = [[row[i] for i in keep] for row in s["table"]]
        out.value = group_html(s, max_chars, chart=True)

    slider.observe(render, names="value")
    agents.observe(render, names="value")
    render()
    return _explorer_class()([W.HBox([slider, agents]), out],
                             lambda: f"<p>sample #{slider.value} of 0-{len(samples) - 1}</p>" + out.value)


# ---- the coding explorer (notebook 04) -------------------------------------------------------------------
CODING_LEVEL_MAX = {"aux_defined": 0.4, "main_defined": 0.6, "syntax": 0.5, "tests": 1.0, "calls_aux": 0.5,
                    "not_thin_wrapper": 1.0, "aux_result_ignored": -0.5}
"""The coding reward's levels (`rewards.coding.LEVELS`, spec section 8) and what each earns at most
(`aux_result_ignored` is a deduction); `tests` is the share of the problem's asserts passed."""


def coding_sample(auxes: Sequence[str], mains: Sequence[str], levels: Sequence[dict], **extra) -> dict:
    """A sample the coding explorer reads, from answers scored outside training: agent 1's `auxes`,
    agent 2's `mains` (joint action j = (auxes[j], mains[j])) and their levels as
    `tasks.coding_task.coding_batch_levels` (or `rewards.coding.coding_levels`, one per pair)
    returns them. `extra` (e.g. step=, title=) is kept."""
    if not (len(auxes) == len(mains) == len(levels)) or not levels:
        raise ValueError(f"coding_sample needs as many auxes, mains and levels (got {len(auxes)}, {len(mains)}, "
                         f"{len(levels)}), at least one.")
    rewards = [lv["total_reward"] if "total_reward" in lv else lv["total"] for lv in levels]
    return dict(extra, completions=[list(auxes), list(mains)], table=[[j, j] for j in range(len(levels))],
                rewards=rewards, levels=list(levels))


def _coding_levels(sample: dict, j: int) -> dict:
    if sample.get("levels"):
        return sample["levels"][j]
    comps = sample.get("components") or {}
    if not any(k in comps for k in CODING_LEVEL_MAX):
        raise ValueError("coding explorer: this sample carries no coding levels (no 'levels', and its 'components' "
                         "have none of " + ", ".join(CODING_LEVEL_MAX) + "); pass samples of a run with the coding "
                         "reward (trainer.samples) or build them with viz.coding_sample.")
    return {k: comps[k][j] for k in CODING_LEVEL_MAX if k in comps}


def _tests_label(lv: dict) -> str:
    asserts = lv.get("total_asserts", lv.get("total") if "total_reward" in lv else None)
    if asserts and "passed" in lv:
        return f"{lv['passed']}/{asserts}"
    return f"{lv.get('tests', 0.0):.2f}"


def coding_html(sample: dict, j: Optional[int] = None, max_chars: int = 1200) -> str:
    """One coding group: a table of every joint action (aux sample, main sample) with the levels it
    earned (each level's value; tests as passed/asserts where known), its reward and advantage; then
    joint action `j`'s aux and main side by side (default: the best-rewarded one)."""
    import html

    rewards = list(sample["rewards"])
    advantages = sample.get("advantages")
    J = len(rewards)
    j = max(range(J), key=lambda k: rewards[k]) if j is None else j
    table = sample.get("table") or [[k, k] for k in range(J)]
    names = list(CODING_LEVEL_MAX)
    head = "".join(f"<th>{k.replace('_', ' ')}<br>({v:+.1f} if so)</th>" if v < 0 else f"<th>{k.replace('_', ' ')}<br>(max {v:.1f})</th>"
                   for k, v in CODING_LEVEL_MAX.items())
    rows = []
    for k in range(J):
        lv = _coding_levels(sample, k)
        cells = []
        for name in names:
            v = lv.get(name, 0.0)
            label = _tests_label(lv) if name == "tests" else (f"{v:.1f}" if v else "-")
            bg = "#e6f4ea" if v > 0 else ("#fce8e6" if v < 0 else "#f1f3f4")
            cells.append(f"<td style='background:{bg}'>{label}</td>")
        adv = "" if advantages is None else f"<td>{advantages[k]:+.2f}</td>"
        mark = "font-weight:bold;outline:2px solid #444" if k == j else ""
        rows.append(f"<tr style='{mark}'><td>{k}</td><td>{table[k][0]}</td><td>{table[k][1]}</td>{''.join(cells)}"
                    f"<td><b>{rewards[k]:.2f}</b></td>{adv}</tr>")
    adv_head = "" if advantages is None else "<th>advantage</th>"
    title = " ".join(t for t in (sample.get("title"), f"step {sample['step']}" if "step" in sample else "") if t) or "group"
    overview = (f"<p><b>{html.escape(str(title))}</b>: {J} joint actions, mean reward {sum(rewards) / J:.2f} (max 4.0)</p>"
                f"<table><tr><th>j</th><th>aux<br>sample</th><th>main<br>sample</th>{head}<th>reward</th>{adv_head}</tr>"
                f"{''.join(rows)}</table>")

    def code(text: str) -> str:
        text = text if len(text) <= max_chars else text[:max_chars] + "\n[...]"
        return f"<pre style='text-align:left;white-space:pre-wrap;margin:0'>{html.escape(text)}</pre>"
    aux, main = sample["completions"][0][table[j][0]], sample["completions"][1][table[j][1]]
    detail = (f"<p><b>joint action {j}</b> (reward {rewards[j]:.2f}): agent 1's answer (its <code>aux</code> is kept) "
              f"and agent 2's (its entry point is kept)</p><table><tr><th>agent 1 (aux)</th><th>agent 2 (main)</th></tr>"
              f"<tr><td style='vertical-align:top'>{code(aux)}</td><td style='vertical-align:top'>{code(main)}</td></tr></table>")
    return overview + detail


def coding_explorer(samples, max_chars: int = 1200):
    """Notebook 04's explorer: a sample slider (trainer.samples of a coding run, or `coding_sample`s)
    and a joint-action picker; shows every joint action's levels, reward and advantage (`coding_html`)
    and the chosen joint action's aux and main. Starts on the last sample's best joint action."""
    import ipywidgets as W

    samples = list(samples)
    if not samples:
        raise ValueError("coding_explorer needs at least one sample (trainer.samples is empty).")
    for s in samples:
        _coding_levels(s, 0)  # a clear error now rather than inside a callback
    slider = W.IntSlider(value=len(samples) - 1, min=0, max=len(samples) - 1, description="sample #",
                         continuous_update=False)
    pick = W.Dropdown(description="joint action")
    out = W.HTML()

    def options(*_):
        r = samples[slider.value]["rewards"]
        best = max(range(len(r)), key=lambda k: r[k])
        pick.options = [(f"j={k}: reward {v:.2f}", k) for k, v in enumerate(r)]
        pick.value = best

    def render(*_):
        if pick.value is not None:
            out.value = coding_html(samples[slider.value], pick.value, max_chars)

    options()
    slider.observe(lambda *_: (options(), render()), names="value")
    pick.observe(render, names="value")
    render()
    return _explorer_class()([W.HBox([slider, pick]), out],
                             lambda: f"<p>sample #{slider.value} of 0-{len(samples) - 1}, joint action {pick.value}</p>" + out.value)


# ---- the rollout-tree explorer (notebook 05) -------------------------------------------------------------
def tree_nodes(rollout) -> list[tuple[str, object]]:
    """Every node of a `Rollout` in depth-first order with its path from the root ("root",
    "root > j=1", "root > j=1 > j=0", ...): the joint action each step down took."""
    out = []

    def walk(node, path):
        out.append((path, node))
        for j, child in sorted(node.children.items()):
            walk(child, f"{path} > j={j}")
    walk(rollout.root, "root")
    return out


def _vals(t) -> list[float]:
    return [] if t is None else [float(v) for v in (t.tolist() if hasattr(t, "tolist") else t)]


def rollout_html(rollout, index: int = 0, max_chars: int = 300, tree: str = "") -> str:
    """A rollout tree as HTML: an overview of every node (path, turn, mean r, mean R, whether early
    termination cut its children), then node `index` of `tree_nodes` in full: each agent's prompt
    (its end, where the transition's feedback is), every joint action's texts with r, R (the
    discounted return: r + gamma * mean of the child's R) and A (the advantage among its siblings),
    and the credit each agent's samples got. `tree`: HTML put first (the explorer's tree picture)."""
    import html

    nodes = tree_nodes(rollout)
    if not 0 <= index < len(nodes):
        raise ValueError(f"rollout_html: node {index} does not exist; the tree has {len(nodes)} nodes (0-{len(nodes) - 1}).")
    rows = []
    for k, (path, nd) in enumerate(nodes):
        r, R = _vals(nd.rewards), _vals(nd.returns)
        mark = "font-weight:bold;outline:2px solid #444" if k == index else ""
        cut = "cut (siblings' mean r > threshold)" if nd.terminated_early else ("leaf" if not nd.children else f"{len(nd.children)} children")
        rows.append(f"<tr style='{mark}'><td>{k}</td><td style='text-align:left'>{html.escape(path)}</td><td>{nd.depth + 1}</td>"
                    f"<td>{sum(r) / len(r):.2f}</td><td>{(sum(R) / len(R)) if R else float('nan'):.2f}</td><td>{cut}</td></tr>")
    overview = ("<table><tr><th>node</th><th>path (joint action taken)</th><th>turn</th><th>mean r</th><th>mean R</th>"
                f"<th>children</th></tr>{''.join(rows)}</table>")
    path, nd = nodes[index]
    n = len(nd.completions)
    table = nd.table.tolist() if hasattr(nd.table, "tolist") else nd.table
    r, R, A = _vals(nd.rewards), _vals(nd.returns), _vals(nd.advantages)

    def cut(t: str, tail: bool = False) -> str:
        t = t.strip()
        if len(t) > max_chars:
            t = "[...] " + t[-max_chars:] if tail else t[:max_chars] + " [...]"
        return html.escape(t)
    cell = "style='text-align:left;vertical-align:top;white-space:pre-wrap'"
    prompts = "".join(f"<tr><td>agent {i}</td><td {cell}>{cut(p, tail=True)}</td></tr>" for i, p in enumerate(nd.prompts))
    joint = []
    for j in range(len(r)):
        child = nd.children.get(j)
        child_R = _vals(child.returns) if child is not None else []
        how = (f"{r[j]:.2f} + gamma x {sum(child_R) / len(child_R):.2f}" if child_R else "r (no child)")
        texts = "".join(f"<td {cell}>{cut(nd.completions[i][table[j][i]])}</td>" for i in range(n))
        a = A[j] if A else 0.0
        color = "#e6f4ea" if a > 0 else ("#fce8e6" if a < 0 else "#f1f3f4")
        joint.append(f"<tr style='background:{color}'><td>{j}</td>{texts}<td>{r[j]:.2f}</td>"
                     f"<td>{R[j]:.2f}<br><small>{how}</small></td><td>{a:+.2f}</td></tr>" if R else
                     f"<tr><td>{j}</td>{texts}<td>{r[j]:.2f}</td><td>-</td><td>-</td></tr>")
    heads = "".join(f"<th>agent {i}</th>" for i in range(n))
    credit = ""
    if nd.sample_advantages is not None:
        credit = ("<p>credit per agent's sample (the mean A of the joint actions containing it): "
                  + "; ".join(f"agent {i}: " + ", ".join(f"{v:+.2f}" for v in _vals(row))
                              for i, row in enumerate(nd.sample_advantages)) + "</p>")
    detail = (f"<p><b>node {index}: {html.escape(path)}</b> (turn {nd.depth + 1})</p>"
              f"<table><tr><th>prompt of</th><th>(its end)</th></tr>{prompts}</table>"
              f"<table><tr><th>j</th>{heads}<th>r</th><th>R</th><th>A</th></tr>{''.join(joint)}</table>{credit}")
    return tree + overview + detail


def rollout_explorer(rollout, max_chars: int = 300, title: str = "Rollout tree"):
    """Notebook 05's explorer over one real multi-turn `Rollout` (after `assign_advantages`): the
    tree's picture (`plot_rollout_tree`), a node picker, and the chosen node in full (`rollout_html`:
    prompts, joint actions' texts, r, R, A, each agent's credit). Starts on the root."""
    import ipywidgets as W

    nodes = tree_nodes(rollout)
    fig = plot_rollout_tree(rollout, title=title)
    plt.close(fig)
    picture = _png_img(fig, f"{title}: {len(nodes)} nodes")
    pick = W.Dropdown(options=[(f"{k}: {path} (mean r {sum(_vals(nd.rewards)) / max(len(_vals(nd.rewards)), 1):.2f})", k)
                               for k, (path, nd) in enumerate(nodes)], value=0, description="node")
    head, out = W.HTML(picture), W.HTML()

    def render(*_):
        out.value = rollout_html(rollout, pick.value, max_chars)

    pick.observe(render, names="value")
    render()
    return _explorer_class()([head, pick, out], lambda: f"<p>node {pick.value} selected</p>" + picture + out.value)


def texts_report(texts: Sequence[str], columns: dict, max_chars: int = 600,
                 agent_names: Sequence[str] | None = None, numbers: Sequence[int] | None = None) -> str:
    """STATIC side-by-side HTML of several rows answered by several runs (no widget, so it stays
    readable in a saved notebook on GitHub): for each row its input text (shortened), then one line
    per agent with one cell per run. `columns` maps a run's label to (answers, joint_rewards), with
    `answers[k][i]` agent i's answer to row k and `joint_rewards[k]` that pair's joint reward.
    `numbers`: the row numbers shown (default 0, 1, ...)."""
    import html

    def cut(t: str, n: int = max_chars) -> str:
        t = t.strip()
        return html.escape(t if len(t) <= n else t[:n] + " [...]")

    cell = "style='white-space:pre-wrap;text-align:left;vertical-align:top'"
    parts = []
    for k, x in enumerate(texts):
        runs = [(label, ans[k], rew[k]) for label, (ans, rew) in columns.items()]
        n = len(runs[0][1])
        names = list(agent_names) if agent_names else [f"agent_{i}" for i in range(n)]
        head = "".join(f"<th>{html.escape(label)} (joint reward {r:.2f})</th>" for label, _, r in runs)
        rows = "".join(f"<tr><td style='vertical-align:top'><b>{html.escape(names[i])}</b></td>"
                       + "".join(f"<td {cell}>{cut(a[i])}</td>" for _, a, _ in runs) + "</tr>" for i in range(n))
        parts.append(f"<p><b>row {k if numbers is None else numbers[k]}</b>: <i>{cut(x, 300)}</i></p><table><tr><th></th>{head}</tr>{rows}</table>")
    return "".join(parts)


def before_after_report(texts: Sequence[str], before: Sequence[Sequence[str]], after: Sequence[Sequence[str]],
                        reward_before: Sequence[float], reward_after: Sequence[float], max_chars: int = 600,
                        agent_names: Sequence[str] | None = None, numbers: Sequence[int] | None = None) -> str:
    """`texts_report` with two runs: the untrained agents ("before training") and the trained ones
    ("after training"). Unlike `before_after_explorer` it needs no widget."""
    return texts_report(texts, {"before training": (before, reward_before), "after training": (after, reward_after)},
                        max_chars=max_chars, agent_names=agent_names, numbers=numbers)



def before_after_explorer(texts: Sequence[str], before: Sequence[Sequence[str]], after: Sequence[Sequence[str]],
                          reward_before: Sequence[float], reward_after: Sequence[float], max_chars: int = 600,
                          agent_names: Sequence[str] | None = None):
    """A dropdown over held-out rows showing the untrained and the trained agents' answers to the same
    row side by side: the row `before_after_report` draws for the chosen one (the same renderer, so
    the widget and the static report a saved notebook shows can never disagree). Arguments as in
    `before_after_report`: per row, answers per agent."""
    import ipywidgets as W

    if not texts:
        raise ValueError("before_after_explorer needs at least one row.")
    pick = W.Dropdown(options=[(f"row {k}: {t.strip()[:50]!r}", k) for k, t in enumerate(texts)], value=0,
                      description="row")
    out = W.HTML()

    def render(*_):
        k = pick.value
        out.value = before_after_report([texts[k]], [before[k]], [after[k]], [reward_before[k]], [reward_after[k]],
                                        max_chars=max_chars, agent_names=agent_names, numbers=[k])
    pick.observe(render, names="value")
    render()
    return _explorer_class()([pick, out], lambda: out.value)
