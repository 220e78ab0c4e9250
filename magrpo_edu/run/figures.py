"""Figures for the notebooks and the `magrpo-edu train` report.

Every plot is a function that takes a trainer's `history` (list of dicts) or its `samples` and
returns a matplotlib Figure of fixed size, so GitHub, nbviewer and nbval all see an image.
`LiveRewardPlot` is a callback that redraws one figure in place through a display handle. The
ipywidgets explorers are in `explorers.py`; `magrpo_edu.viz` hands both on under one name.
"""
from __future__ import annotations

from typing import Optional, Sequence

import matplotlib.pyplot as plt

from ..display import FIGSIZE


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


def steps_label(prompts_per_step: int = 1) -> str:
    """The x axis of a training curve: what one step is (`MAGRPOConfig.prompts_per_step` prompts, one group each).

    >>> steps_label(2)
    'training step (2 prompts, 2 groups per step)'
    """
    p = prompts_per_step
    return "training step (one prompt, one group per step)" if p == 1 else f"training step ({p} prompts, {p} groups per step)"


def plot_rewards(history: Sequence[dict], title: str = "Joint reward per step", window: int = 10, ax=None,
                 evals: Sequence[dict] = (), prompts_per_step: int = 1, eval_label: str = "held-out evaluation",
                 ylabel: str = "joint reward"):
    """Mean joint reward per step with a +/- std band (cut to the group's own min and max, so it never
    leaves the rewards the group got), min/max markers and a moving average; the legend outside the data.
    `evals`: held-out evaluations ({"step", "eval/reward"}, e.g. untrained at step 0, halfway, trained),
    drawn as black diamonds on the same axis (the training curve is on training prompts, these on
    held-out rows with a fixed seed), labelled `eval_label`. `prompts_per_step`: the run's
    (`MAGRPOConfig.prompts_per_step`), for the x axis: each point is the mean over that many groups. `ylabel`: the
    y axis ("reward" for one agent, whose reward is its own, not joint)."""
    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=FIGSIZE, layout="constrained")
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
        ax.plot(es, ev, "D-", color="black", ms=6, lw=1.0, label=eval_label)
    ax.set_xlabel(steps_label(prompts_per_step))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, borderaxespad=0)
    ax.grid(alpha=0.3)
    return fig or ax.figure


def _of_max(name: str, maxima: Optional[dict]) -> str:
    m = (maxima or {}).get(name)
    return name if m is None else f"{name} (max {m:g})" if m >= 0 else f"{name} (down to {m:g})"


def plot_components(history: Sequence[dict], window: int = 10, title: str = "Reward components",
                    maxima: Optional[dict] = None):
    """Every logged reward/<component> (moving average), one line each, named with the most it earns
    where `maxima` (`Task.component_max`) says; a component `maxima` leaves out is a diagnostic the
    reward logs but does not pay (the coding task's `load_bearing`, a share of answers): a dotted grey
    line on its own right-hand axis (a share, 0 to 1, not points), named so; one legend for both axes.
    None when the reward has no components (e.g. the length-ratio task), so no empty figure is drawn."""
    keys = sorted({k for h in history for k in h if k.startswith("reward/")})
    if not keys:
        return None
    if maxima:   # the reward's own order (Task.component_max lists the levels in order), diagnostics last
        order = {f"reward/{name}": i for i, name in enumerate(maxima)}
        keys.sort(key=lambda k: order.get(k, len(order)))
    fig, ax = plt.subplots(figsize=FIGSIZE, layout="constrained")
    diagnostics = [k for k in keys if maxima is not None and k.split("/", 1)[1] not in maxima]
    right = ax.twinx() if diagnostics else None
    for k in keys:
        s, v = _series(history, k)
        name = k.split("/", 1)[1]
        if k in diagnostics:
            right.plot(s, smooth(v, window), color="0.5", ls=":", label=f"{name} (diagnostic, not paid; right axis)")
        else:
            ax.plot(s, smooth(v, window), label=_of_max(name, maxima))
    ax.set_xlabel("training step")
    ax.set_ylabel(f"{'points' if maxima else 'component mean'} (moving avg {window})")
    if right is not None:
        right.set_ylim(-0.02, 1.02)
        right.set_ylabel("share of answers (diagnostic)")
    ax.set_title(title)
    handles = [h for a in (ax, right) if a is not None for h in a.get_lines()]
    ax.legend(handles, [h.get_label() for h in handles], loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2,
              fontsize=8, frameon=False)                              # below the axes: clear of both y labels
    ax.grid(alpha=0.3)
    return fig


def plot_agents(history: Sequence[dict], window: int = 10):
    """Per-agent loss and mean completion length (tokens), side by side; one legend for both panels
    (an agent has one colour in both), outside the data."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(FIGSIZE[0] * 1.3, FIGSIZE[1]), layout="constrained")
    agents = sorted({k.rsplit("/", 1)[1] for h in history for k in h
                     if k.startswith(("loss/", "completions/mean_length/"))})
    for i, name in enumerate(agents):
        for a, key in ((a1, f"loss/{name}"), (a2, f"completions/mean_length/{name}")):
            s, v = _series(history, key)
            if s:
                a.plot(s, smooth(v, window), color=f"C{i}", label=name)
    a1.set_title(f"policy loss per agent (moving avg {window})", fontsize=10)
    a2.set_title(f"completion length per agent (moving avg {window})", fontsize=10)
    a1.set_ylabel("-mean(A·Σ log π)\n+ β·mean(Σ k3)")
    a2.set_ylabel("tokens")
    for a in (a1, a2):
        a.set_xlabel("training step")
        a.grid(alpha=0.3)
    handles = {label: h for a in (a1, a2) for h, label in zip(*a.get_legend_handles_labels())}
    if handles:
        fig.legend(list(handles.values()), list(handles), fontsize=8, loc="outside right upper")
    return fig


def plot_quality(history: Sequence[dict], eval_history: Sequence[dict] = (), window: int = 10,
                 title: str = "Reward and text quality"):
    """Is the reward learned as readable text? Three panels over steps: the joint reward (moving
    average, and eval/reward at eval points), each agent's repetition (share of repeated word
    3-grams: training steps as lines, eval points as markers), and each agent's naturalness (mean
    per-token NLL under the untrained model, eval points only, drawn as points with no line between them:
    lower = more natural). A gamed
    reward shows as reward up while repetition or naturalness climbs."""
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(FIGSIZE[0] * 1.6, FIGSIZE[1]))
    s, v = _series(history, "reward")
    if s:
        a1.plot(s, v, lw=0.8, color="C0", alpha=0.4, label="train, each step")
        a1.plot(s, smooth(v, window), lw=2.0, color="C0", label=f"train, moving avg ({window})")
    s, v = _series(eval_history, "eval/reward")
    if s:
        a1.plot(s, v, "o", ms=5, color="C1", label="eval (measured only here)")  # points: nothing is known between them
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
            a3.plot(s, v, "o", ms=5, color=color, label=name)
    a1.set_title("joint reward" if len(agents) > 1 else "reward")  # one agent (GRPO): its own reward, nothing joint
    a2.set_title("repetition (repeated 3-grams)")
    a2.set_ylim(-0.02, 1.02)
    a3.set_title("naturalness (NLL/token, lower = more natural)")
    a1.set_ylabel("joint reward")
    a2.set_ylabel("share of word 3-grams (0-1)")
    a3.set_ylabel("nats per token")
    for a in (a1, a2, a3):
        a.set_xlabel("step")
        a.grid(alpha=0.3)
        if a.get_legend_handles_labels()[0]:  # below the panel, never over the data
            a.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, frameon=False)
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


def plot_comparison(table: Sequence[dict], metric: str = "reward", label_key: str = "method", title: str | None = None,
                    share_label: str | None = None):
    """Bars of one metric for several methods (e.g. baselines vs MAGRPO). A metric on a 0-1 scale (the normalised
    reward, a rate such as `cooperation_rate` or `load_bearing_rate`; or any, given `share_label`, its axis label, as
    the report passes a task's `headline_label`) is drawn on the whole range 0-1, so bars compare honestly."""
    if share_label is None and metric == "normalised":
        share_label = "normalised reward (reward / max reward, 0-1)"
    elif share_label is None and metric.endswith("_rate"):
        share_label = f"{metric.replace('_', ' ')} (share of answers, 0-1)"
    fig, ax = plt.subplots(figsize=FIGSIZE, layout="constrained")
    names = [str(r[label_key]) for r in table]
    vals = [r[metric] for r in table]
    ax.bar(names, vals, color=[f"C{i}" for i in range(len(names))])
    for i, v in enumerate(vals):
        ax.text(i, v, f"{v:.2f}", ha="center", va="bottom", fontsize=8)
    ax.set_ylabel(share_label or metric)
    if share_label is not None:
        ax.set_ylim(0, 1.08)
    ax.set_title(title or f"{metric} by method", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
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
    """Aligned vs cross joint actions of 2 agents as G x G grids (rows: agent 1's sample g1, columns:
    agent 2's sample g2, the notebooks' notation). Aligned uses the diagonal (G joint actions); cross uses every
    cell (G**2). With `rewards` (a G x G array of joint rewards) the cross grid is coloured by reward, each
    number written in black on light cells and white on dark ones."""
    import numpy as np

    fig, (a1, a2) = plt.subplots(1, 2, figsize=FIGSIZE)
    a1.imshow(np.eye(G), cmap="Blues", vmin=0, vmax=1.4)
    for g in range(G):
        a1.text(g, g, f"j={g}", ha="center", va="center", fontsize=8)
    a1.set_title(f"aligned: {G} joint actions")
    grid = np.ones((G, G)) if rewards is None else np.asarray(rewards, dtype=float)
    # every cell is a joint action: without rewards, each takes the colour of aligned's diagonal (the same scale)
    im = a2.imshow(grid, cmap="Blues", vmin=0, vmax=1.4) if rewards is None else a2.imshow(grid, cmap="viridis")
    for g1 in range(G):
        for g2 in range(G):
            label = f"j={g1 * G + g2}" if rewards is None else f"{grid[g1, g2]:.2f}"
            light = rewards is None or im.norm(grid[g1, g2]) > 0.5          # viridis is light in its upper half
            a2.text(g2, g1, label, ha="center", va="center", fontsize=7, color="k" if light else "w")
    a2.set_title(f"cross: {G * G} joint actions" + ("" if rewards is None else " (joint reward)"))
    if rewards is not None:
        fig.colorbar(im, ax=a2, fraction=0.046)
    for ax in (a1, a2):
        ax.set_xlabel("agent 2's sample $g_2$")
        ax.set_ylabel("agent 1's sample $g_1$")
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
            plot_rewards(trainer.history, window=self.window, ax=self.ax,
                         prompts_per_step=getattr(trainer.config, "prompts_per_step", 1))
            self.fig.tight_layout()
            if self.handle is not None:
                self.handle.update(self.fig)
