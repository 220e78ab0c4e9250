"""A run's report: history, samples, plots, results.json and results.md in its output folder."""
from __future__ import annotations

import csv
import json
import platform
import time
from pathlib import Path
from typing import Optional

import torch

from .. import distributed
from .._version import __version__
from ..tasks.prompts import SINGLE_MARKER
from ..tasks.registry import Task
from ..evaluation import markdown_table


def write_history(history: list[dict], path: Path) -> None:
    keys = sorted({k for h in history for k in h}, key=lambda k: (k != "step", k))
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(history)


def write_run_history(trainer, out_dir: Path) -> None:
    """history.json, history.csv and samples.json (the last 20 logged groups) of a trainer into out_dir."""
    (out_dir / "history.json").write_text(json.dumps(trainer.history, indent=1))
    write_history(trainer.history, out_dir / "history.csv")
    (out_dir / "samples.json").write_text(json.dumps(list(trainer.samples)[-20:], indent=1))


def before_after_examples(table, rows, samples: int, task: Task, n: int = 3) -> list[dict]:
    """The first `n` rows' first samples from the untrained (parallel) and trained (magrpo) table rows
    that kept their texts: what results.md shows next to the numbers."""
    by = {r["method"]: r for r in table if "texts" in r}
    if "parallel" not in by or "magrpo" not in by:
        return []
    field = task.prompt_field
    per_row = {m: len(by[m]["texts"]) // len(rows) if rows else samples for m in ("parallel", "magrpo")}  # resumed: may differ
    out = []
    for k, row in enumerate(rows[:n]):
        b, a = k * per_row["parallel"], k * per_row["magrpo"]
        out.append(dict(id=str(row.get("id", k)), input=str(row.get(field, "")), before=by["parallel"]["texts"][b],
                        after=by["magrpo"]["texts"][a], reward_before=by["parallel"]["pair_rewards"][b],
                        reward_after=by["magrpo"]["pair_rewards"][a]))
    return out


def of_max(value: float, top: Optional[float]) -> str:
    """A reward component beside the most it earns: "0.400 of 0.4" (a negative `top`: the most it
    deducts, "-0.050 of -0.5"); the value alone where the maximum is not known."""
    return f"{value:.3f}" if top is None else f"{value:.3f} of {top:g}"


def single_note(table: list, task: Task) -> Optional[str]:
    """One line under the comparison table saying what the single-model row's figures come from, where
    they would puzzle: a part the one model never wrote (no `###` line to split its answer at: agent
    2's part empty in every answer, and its reward what an empty part earns), or a part the task leaves
    out by design (coding: the entry point alone, no aux; char_ratio then has no value)."""
    row = next((r for r in table if r["method"] == "single"), None)
    if row is None:
        return None
    empty = [k for k in range(1, task.num_agents + 1) if row.get(f"len{k}_chars") == 0]
    if task.single_parts is not None:
        top = task.single_max()
        line = ("`single`: one model writes the whole answer, scored as the authors' single-agent baseline"
                + (f" (at most {top:g} of {task.max_reward:g})" if top is not None else ""))
        for k in empty:
            line += (f"; agent {k}'s part is left out by design (len{k}_chars 0"
                     + (", so char_ratio has no value: -" if k == 1 else "") + ")")
        return line + "."
    if not empty:
        return f"`single`: one model writes every part, split at a line `{SINGLE_MARKER}` (budget: the agents' together)."
    parts = " and ".join(f"agent {k}'s part (len{k}_chars 0)" for k in empty)
    return (f"`single`: one model writes every part, split at a line `{SINGLE_MARKER}`; it never wrote that line here, "
            f"so {parts} is empty in every answer and its reward, {row['reward']:.3f}, is what the task pays for an "
            "empty part.")


def report_run(run, after: dict, table: list, train_s: float) -> dict:
    """Report: history, samples, plots, results.json and results.md (with the agents' texts before and
    after) into the output folder; prints a few lines of headline figures and results.md's path
    (`headline_summary`), and returns the results."""
    trainer, out_dir = run.trainer, run.plan["out_dir"]
    write_run_history(trainer, out_dir)
    during = [ev for ev in trainer.eval_history if ev["step"] < trainer.step]  # the halfway evaluation
    save_figures(run, [dict(run.before, step=0)] + during + [dict(after, step=trainer.step)], table)
    results = run_results(run, after, table, train_s)
    (out_dir / "results.json").write_text(json.dumps(results, indent=2))
    (out_dir / "results.md").write_text(results_markdown(run, results, during))
    print("\n" + headline_summary(results, run.task, trainer.step, out_dir))
    return results


def save_figures(run, evals: list, table: list) -> None:
    """The report's figures into the output folder: reward.png (the training reward with the held-out `evals`:
    untrained, halfway, trained), components.png, agents.png, the task's own (`Task.report_figures`) and
    comparison.png (the baselines vs MAGRPO on the task's headline column)."""
    import matplotlib

    matplotlib.use("Agg")
    from . import figures as viz

    t, task, c, history = run.task, run.plan["run"].task, run.plan["config"], run.trainer.history
    drawn = f"{len(run.rows)} held-out rows x {run.samples} samples"
    figs = [("reward", viz.plot_rewards(history, title=f"{task}: joint reward per step", evals=evals,
                                        prompts_per_step=c.prompts_per_step,
                                        eval_label=f"held-out evaluation\n({drawn})")),
            ("components", viz.plot_components(history, maxima=t.component_max())), ("agents", viz.plot_agents(history))]
    if t.report_figures is not None:  # the task's own figures (coding: PassOrNot@k)
        figs += t.report_figures(table, task, drawn)
    figs.append(("comparison", viz.plot_comparison(table, t.headline, share_label=t.headline_label,
                                                   title=f"{task}: baselines vs MAGRPO ({t.headline}), {drawn}")))
    for name, fig in figs:
        if fig is None:  # e.g. no reward components: no empty figure
            continue
        fig.savefig(run.plan["out_dir"] / f"{name}.png", dpi=100, bbox_inches="tight")  # nothing cut at the edges
        matplotlib.pyplot.close(fig)


def run_results(run, after: dict, table: list, train_s: float) -> dict:
    """results.json: the run's settings, the evaluations before, during and after training, the comparison table
    (without its texts), the first rows' texts before and after (`examples`; the writing tasks also one row of the
    training data's own world), the training reward's first and last tenth, the times and the versions."""
    plan, r, c, t, trainer = run.plan, run.plan["run"], run.plan["config"], run.task, run.trainer
    first = trainer.history[: max(1, len(trainer.history) // 10)]
    last = trainer.history[-max(1, len(trainer.history) // 10):]
    examples = before_after_examples(table, run.rows, run.samples, t)
    table = [{k: v for k, v in row.items() if k not in ("texts", "pair_rewards")} for row in table]
    in_dist = None  # tasks with Task.in_distribution (writing): one row of the training data's own world, beside the held-out ones
    if run.in_dist_before is not None and run.in_dist_after is not None:
        b, a = run.in_dist_before, run.in_dist_after
        in_dist = dict(id=b["row"]["id"], input=b["row"][t.prompt_field], before=b["text"], after=a["text"],
                       reward_before=b["reward"], reward_after=a["reward"])
    return dict(task=r.task, model=r.model, agents=r.agents, steps=c.max_steps, num_generations=c.num_generations,
                max_new_tokens=c.max_new_tokens, learning_rate=c.learning_rate, beta=c.beta,
                prompts_per_step=c.prompts_per_step, processes=distributed.world_size(), seed=c.seed,
                device=plan["device"], save_steps=c.save_steps, resumed_at_steps=run.resumed_at,
                train_seconds=round(train_s, 1), total_seconds=round(time.time() - run.t0, 1),
                eval_rows=run.before["eval/rows"], eval_before=run.before, eval_after=after, comparison=table,
                examples=examples, train_reward_first_10pct=sum(h["reward"] for h in first) / len(first),
                train_reward_last_10pct=sum(h["reward"] for h in last) / len(last),
                in_distribution_example=in_dist, eval_during_training=trainer.eval_history,
                versions=dict(magrpo_edu=__version__, torch=torch.__version__, python=platform.python_version()))


def results_markdown(run, results: dict, during: list) -> str:
    """results.md: the settings in one line, then four sections (`_reward_lines`, `_quality_lines`, `_table_lines`,
    `_text_lines`)."""
    r, c = run.plan["run"], run.plan["config"]
    W = distributed.world_size()
    lines = [f"# {r.task}: MAGRPO on `{r.model}` ({r.agents} agents)", "",
             f"{c.max_steps} steps, G={c.num_generations}, lr={c.learning_rate}, beta={c.beta}, {c.max_new_tokens} new "
             f"tokens, seed {c.seed}, {run.plan['device']}"
             + (f", {c.prompts_per_step} prompts per step" if c.prompts_per_step > 1 else "")
             + (f" over {W} processes" if W > 1 else "") + "; "
             f"training took {results['train_seconds']:.0f} s. Evaluated on {results['eval_rows']} held-out rows, "
             f"{run.samples} joint samples each, same sampling seed before and after.", ""]
    lines += _reward_lines(run, results["eval_before"], results["eval_after"], during)
    lines += _quality_lines(run, results["eval_before"], results["eval_after"])
    lines += _table_lines(run, results)
    lines += _text_lines(run, results)
    return "\n".join(lines) + "\n"


def _reward_lines(run, before: dict, after: dict, during: list) -> list:
    """The held-out joint reward and each component, untrained, halfway and trained, each beside its maximum."""
    maxima, step = run.task.component_max(), run.trainer.step
    order = list(maxima)  # the reward's own order of its components (coding: the authors'), then the rest
    comp = sorted((k for k in after if k.startswith("eval/reward/")),
                  key=lambda k: (order.index(k[12:]) if k[12:] in order else len(order), k))

    def cells(ev: dict) -> str:
        return "".join(f" {of_max(ev.get(k, float('nan')), maxima.get(k[12:]))} |" for k in comp)
    lines = ["| | mean joint reward |" + "".join(f" {k.split('/')[-1]} |" for k in comp),
             "|---|---|" + "---|" * len(comp), f"| untrained | {before['eval/reward']:.3f} |" + cells(before)]
    lines += [f"| MAGRPO, step {ev['step']} | {ev['eval/reward']:.3f} |" + cells(ev) for ev in during]
    lines += [f"| MAGRPO, step {step} | {after['eval/reward']:.3f} |" + cells(after)]
    if any(k[12:] in maxima for k in comp):
        note = run.task.reward_note
        lines += ["", "Each component: its mean over the samples, of the most it earns (a negative maximum: the most it "
                  "deducts); the joint reward adds them up" + (f" ({note})" if note else "") + "."]
    return lines


def _quality_lines(run, before: dict, after: dict) -> list:
    """Each agent's repetition and naturalness, untrained and trained."""
    team, cols = run.team, ("repetition", "naturalness")
    lines = ["", "Text quality of the same samples (`magrpo_edu.quality`): repetition = share of repeated word 3-grams; "
             "naturalness = mean per-token NLL under the untrained model (lower = closer to its language; a gamed "
             "text such as `w w w` scores several nats more).", "",
             "| | " + " | ".join(f"{m} {a.name}" for m in cols for a in team) + " |", "|---|" + "---|" * (2 * len(team))]
    for label, ev in (("untrained", before), ("MAGRPO", after)):
        lines.append(f"| {label} | " + " | ".join(f"{ev[f'eval/{m}/{a.name}']:.3f}" if f"eval/{m}/{a.name}" in ev else "-"
                                                  for m in cols for a in team) + " |")
    return lines


def _table_lines(run, results: dict) -> list:
    """The comparison table (baselines vs MAGRPO), which of its rows are the evaluations themselves, and the
    single-model row's note."""
    table, n_rows, samples, step = results["comparison"], len(run.rows), run.samples, run.trainer.step
    per_row = {row["method"]: row["samples"] // n_rows for row in table}
    if len(set(per_row.values())) == 1:
        head = f"{n_rows} held-out rows x {samples} samples, as above"
    else:  # resumed from a checkpoint written before every row drew the evaluation's samples
        head = f"{n_rows} held-out rows; samples per row: " + ", ".join(f"{m} {k}" for m, k in per_row.items())
    same = [f"`{m}` ({who}) is the evaluation `{label}` above, on its very samples: the same reward, {ev['eval/reward']:.3f}"
            for m, who, label, ev in (("parallel", "the untrained agents", "untrained", results["eval_before"]),
                                      ("magrpo", "the trained ones", f"MAGRPO, step {step}", results["eval_after"]))
            if any(row["method"] == m and row.get("evaluation") for row in table)]
    lines = ["", f"## Baselines vs MAGRPO ({head})", ""]
    if same:
        lines += ["; ".join(same) + f". The other methods draw {samples} samples per row of their own.", ""]
    lines += [markdown_table(table, run.task.component_max())]
    note = single_note(table, run.task)
    return lines + ([note] if note is not None else [])


def _text_lines(run, results: dict) -> list:
    """The agents' texts before and after on the first held-out rows (and the in-distribution row), with the task's
    note on the model where it has one (`Task.model_notes`)."""
    t, team, in_dist = run.task, run.team, results["in_distribution_example"]
    lines = ["", "## Before and after: the agents' texts on held-out rows", "",
             "The untrained agents (parallel protocol) and the trained ones (magrpo) on the same rows, first sample "
             "each. Read them next to the numbers: a reward can rise while the texts get worse.", ""]
    note = t.model_notes.get(run.plan["run"].model)
    if note:
        lines += [note + (f" Compare with the last example, a new {t.prompt_field} from its own world."
                          if in_dist is not None else ""), ""]
    shown = [(f"{ex['id']}: joint reward", ex) for ex in results["examples"]]
    if in_dist is not None:
        shown.append(("In distribution, for comparison: a new row from the training data's own generator "
                      "(not a training row), joint reward", in_dist))
    for heading, ex in shown:
        lines += [f"### {heading} {ex['reward_before']:.2f} -> {ex['reward_after']:.2f}", "",
                  "> " + ex["input"][:300].replace("\n", " ") + (" [...]" if len(ex["input"]) > 300 else ""), ""]
        for i, (b, a) in enumerate(zip(ex["before"], ex["after"])):
            lines += [f"{team[i].name} before:", "", "```text", b.strip() or "(empty)", "```",
                      f"{team[i].name} after:", "", "```text", a.strip() or "(empty)", "```", ""]
    return lines


def headline_summary(results: dict, task: Task, step: int, out_dir: Path) -> str:
    """What the end of `magrpo-edu train` prints (a few lines; results.md has the rest, and its path is
    the last line): the held-out joint reward untrained, halfway and trained, the best baseline beside the
    trained agents on the task's headline column, the time, and where everything is."""
    before, after, rows = results["eval_before"], results["eval_after"], results["eval_rows"]
    top = f" (of {task.max_reward:g})" if task.max_reward else ""
    steps = [f"untrained {before['eval/reward']:.3f}"]
    steps += [f"step {ev['step']} {ev['eval/reward']:.3f}" for ev in results.get("eval_during_training") or []
              if ev["step"] < step]
    steps.append(f"step {step} {after['eval/reward']:.3f}")
    samples = {r["samples"] // rows for r in results["comparison"] if r.get("samples")} if rows else set()
    drawn = f"{rows} held-out rows" + (f" x {samples.pop()} samples" if len(samples) == 1 else "")
    lines = [f"{results['task']}: held-out joint reward{top} " + " -> ".join(steps) + f" ({drawn})"]
    metric = task.headline
    scored = [r for r in results["comparison"] if isinstance(r.get(metric), (int, float))]
    mine = next((r for r in scored if r["method"] == "magrpo"), None)
    others = [r for r in scored if not r["method"].startswith("magrpo")]
    if mine is not None and others:
        best = max(others, key=lambda r: r[metric])
        lines.append(f"baselines ({metric}): best {best['method']} {best[metric]:.3f}, MAGRPO {mine[metric]:.3f}")
    lines.append(f"training took {results['train_seconds']:.0f} s, the whole run {results['total_seconds']:.0f} s")
    lines.append(f"Wrote history, samples, plots and results to {out_dir}/; the full report (reward components, text "
                 "quality, the baselines' table, the agents' texts before and after):")
    lines.append(f"  {out_dir / 'results.md'}")
    return "\n".join(lines)
