"""The coding task's explorer (notebook 04; `Task.explorer`): one group of joint actions as a table of the levels
each earned (tests as passed/asserts), its reward and advantage, and one joint action's aux and main side by side.
A widget with a static HTML copy (`magrpo_edu.display.explorer_class`); `viz.task_explorer(samples, CODING)` finds it through the task."""
from __future__ import annotations

from typing import Optional, Sequence

from ...display import explorer_class
from .reward import LEVEL_MAX, MAX_REWARD


CODING_LEVEL_MAX = LEVEL_MAX
"""The coding reward's levels and what each earns at most (the coding task's `level_max`)."""
CODING_MAX = MAX_REWARD


def coding_sample(auxes: Sequence[str], mains: Sequence[str], levels: Sequence[dict], **extra) -> dict:
    """A sample the coding explorer reads, from answers scored outside training: agent 1's `auxes`,
    agent 2's `mains` (joint action j = (auxes[j], mains[j])) and their levels as
    `tasks.coding.coding_batch_levels` (or `tasks.coding.reward.coding_levels`, one per pair)
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
                         "reward (trainer.samples) or build them with coding_sample (this module).")
    return {k: comps[k][j] for k in CODING_LEVEL_MAX if k in comps}


def _tests_label(lv: dict) -> str:
    asserts = lv.get("total_asserts")
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
    overview = (f"<p><b>{html.escape(str(title))}</b>: {J} joint actions, mean reward {sum(rewards) / J:.2f} (max {CODING_MAX:.1f})</p>"
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
    return explorer_class()([W.HBox([slider, pick]), out],
                             lambda: f"<p>sample #{slider.value} of 0-{len(samples) - 1}, joint action {pick.value}</p>" + out.value)
