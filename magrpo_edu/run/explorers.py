"""Explorers for the notebooks (ipywidgets): they only select already-computed data, and each also
carries a static HTML copy of what it shows (GitHub and nbviewer draw no widget): see
`magrpo_edu.display.explorer_class`. A task with its own view of a group brings it as `Task.explorer` (the
coding task's, tasks/coding/explorer.py); `task_explorer` picks it. The figures are in `figures.py`;
`magrpo_edu.viz` hands both on under one name.
"""
from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt

from ..display import explorer_class
from ..tasks.registry import Task
from .figures import plot_rollout_tree


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
    head = "".join(f"<th>agent {i + 1}</th>" for i in range(n))  # agents count from 1, as in the text
    rows = []
    for j, (r, a) in enumerate(zip(sample["rewards"], sample["advantages"])):
        cells = "".join(
            f"<td style='text-align:left;vertical-align:top;white-space:pre-wrap'>{html.escape(sample['completions'][i][table[j][i]][:max_chars])}</td>"
            for i in range(n))
        color = "#e6f4ea" if a > 0 else ("#fce8e6" if a < 0 else "#f1f3f4")
        rows.append(f"<tr style='background:{color}'><td>{j}</td>{cells}<td>{r:.3f}</td><td>{a:+.3f}</td></tr>")
    title = (f"<b>step {sample.get('step', '?')}</b> - mean {'joint ' if n > 1 else ''}reward "
             f"{sum(sample['rewards']) / len(sample['rewards']):.3f}")
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
    agents = W.SelectMultiple(options=[(f"agent {i + 1}", i) for i in range(n)], value=tuple(range(n)), description="agents",
                              rows=min(n, 4))
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
    return explorer_class()([W.HBox([slider, agents]), out],
                             lambda: f"<p>sample #{slider.value} of 0-{len(samples) - 1}</p>" + out.value)


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
    prompts = "".join(f"<tr><td>agent {i + 1}</td><td {cell}>{cut(p, tail=True)}</td></tr>" for i, p in enumerate(nd.prompts))
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
    heads = "".join(f"<th>agent {i + 1}</th>" for i in range(n))
    credit = ""
    if nd.sample_advantages is not None:
        credit = ("<p>credit per agent's sample (the mean A of the joint actions containing it): "
                  + "; ".join(f"agent {i + 1}: " + ", ".join(f"{v:+.2f}" for v in _vals(row))
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
    return explorer_class()([head, pick, out], lambda: f"<p>node {pick.value} selected</p>" + picture + out.value)


def texts_report(texts: Sequence[str], columns: dict, max_chars: int = 600,
                 agent_names: Sequence[str] | None = None, numbers: Sequence[int] | None = None,
                 row_name: str = "row") -> str:
    """STATIC side-by-side HTML of several rows answered by several runs (no widget, so it stays
    readable in a saved notebook on GitHub): for each row its input text (shortened), then one line
    per agent with one cell per run. `columns` maps a run's label to (answers, joint_rewards), with
    `answers[k][i]` agent i's answer to row k and `joint_rewards[k]` that pair's joint reward.
    `numbers`: the row numbers shown (default 0, 1, ...); `row_name`: what a row is called ("post", "problem")."""
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
        what = "joint reward" if n > 1 else "reward"     # one agent: no joint action, its own reward
        head = "".join(f"<th>{html.escape(label)} ({what} {r:.2f})</th>" for label, _, r in runs)
        rows = "".join(f"<tr><td style='vertical-align:top'><b>{html.escape(names[i])}</b></td>"
                       + "".join(f"<td {cell}>{cut(a[i])}</td>" for _, a, _ in runs) + "</tr>" for i in range(n))
        parts.append(f"<p><b>{html.escape(row_name)} {k if numbers is None else numbers[k]}</b>: <i>{cut(x, 300)}</i></p><table><tr><th></th>{head}</tr>{rows}</table>")
    return "".join(parts)


def before_after_report(texts: Sequence[str], before: Sequence[Sequence[str]], after: Sequence[Sequence[str]],
                        reward_before: Sequence[float], reward_after: Sequence[float], max_chars: int = 600,
                        agent_names: Sequence[str] | None = None, numbers: Sequence[int] | None = None,
                        row_name: str = "row") -> str:
    """`texts_report` with two runs: the untrained agents ("before training") and the trained ones
    ("after training"). Unlike `before_after_explorer` it needs no widget."""
    return texts_report(texts, {"before training": (before, reward_before), "after training": (after, reward_after)},
                        max_chars=max_chars, agent_names=agent_names, numbers=numbers, row_name=row_name)



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
    return explorer_class()([pick, out], lambda: out.value)


def task_explorer(samples, task: Task, **kwargs):
    """The explorer of `task`'s groups: its own (`Task.explorer`; coding: every joint action's levels and both
    programs) where it has one, else `group_explorer` (every agent's completions, rewards and advantages)."""
    return (task.explorer or group_explorer)(samples, **kwargs)
