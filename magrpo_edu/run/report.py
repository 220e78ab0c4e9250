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
from .baselines import markdown_table


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
    import matplotlib

    matplotlib.use("Agg")
    from . import figures as viz

    plan, r, c, t, trainer, team = run.plan, run.plan["run"], run.plan["config"], run.task, run.trainer, run.team
    task, out_dir, before = r.task, plan["out_dir"], run.before
    G, steps, lr, max_new_tokens, seed = c.num_generations, c.max_steps, c.learning_rate, c.max_new_tokens, c.seed
    prompts_per_step, samples, maxima = c.prompts_per_step, run.samples, t.component_max()
    n_rows = len(run.rows)
    drawn = f"{n_rows} held-out rows x {samples} samples"
    write_run_history(trainer, out_dir)
    during = [ev for ev in trainer.eval_history if ev["step"] < trainer.step]  # the halfway evaluation
    evals = [dict(before, step=0)] + during + [dict(after, step=trainer.step)]  # held-out: untrained, halfway, trained
    figs = [("reward", viz.plot_rewards(trainer.history, title=f"{task}: joint reward per step", evals=evals,
                                        prompts_per_step=prompts_per_step, eval_label=f"held-out evaluation\n({drawn})")),
            ("components", viz.plot_components(trainer.history, maxima=maxima)), ("agents", viz.plot_agents(trainer.history))]
    if t.report_figures is not None:  # the task's own figures (coding: PassOrNot@k)
        figs += t.report_figures(table, task, drawn)
    metric = t.headline
    figs.append(("comparison", viz.plot_comparison(table, metric, title=f"{task}: baselines vs MAGRPO ({metric}), {drawn}")))
    for name, fig in figs:
        if fig is None:  # e.g. no reward components: no empty figure
            continue
        fig.savefig(out_dir / f"{name}.png", dpi=100, bbox_inches="tight")  # nothing cut at the edges
        matplotlib.pyplot.close(fig)
    first = trainer.history[: max(1, len(trainer.history) // 10)]
    last = trainer.history[-max(1, len(trainer.history) // 10):]
    examples = before_after_examples(table, run.rows, samples, t)
    table = [{k: v for k, v in row.items() if k not in ("texts", "pair_rewards")} for row in table]
    in_dist = None  # tasks with Task.in_distribution (writing): one row of the training data's own world, beside the held-out ones
    if run.in_dist_before is not None and run.in_dist_after is not None:
        b, a = run.in_dist_before, run.in_dist_after
        in_dist = dict(id=b["row"]["id"], input=b["row"][t.prompt_field], before=b["text"], after=a["text"],
                       reward_before=b["reward"], reward_after=a["reward"])
    results = dict(task=task, model=r.model, agents=r.agents, steps=steps, num_generations=G, max_new_tokens=max_new_tokens,
                   learning_rate=lr, beta=c.beta, prompts_per_step=prompts_per_step,
                   processes=distributed.world_size(), seed=seed, device=plan["device"], save_steps=c.save_steps,
                   resumed_at_steps=run.resumed_at, train_seconds=round(train_s, 1),
                   total_seconds=round(time.time() - run.t0, 1), eval_rows=before["eval/rows"],
                   eval_before=before, eval_after=after, comparison=table, examples=examples,
                   train_reward_first_10pct=sum(h["reward"] for h in first) / len(first),
                   train_reward_last_10pct=sum(h["reward"] for h in last) / len(last),
                   in_distribution_example=in_dist, eval_during_training=trainer.eval_history,
                   versions=dict(magrpo_edu=__version__, torch=torch.__version__, python=platform.python_version()))
    (out_dir / "results.json").write_text(json.dumps(results, indent=2))
    order = list(maxima)  # the reward's own order of its components (coding: the authors'), then the rest
    comp = sorted((k for k in after if k.startswith("eval/reward/")),
                  key=lambda k: (order.index(k[12:]) if k[12:] in order else len(order), k))

    def cells(ev: dict) -> str:
        return "".join(f" {of_max(ev.get(k, float('nan')), maxima.get(k[12:]))} |" for k in comp)
    lines = [f"# {task}: MAGRPO on `{r.model}` ({r.agents} agents)", "",
             f"{steps} steps, G={G}, lr={lr}, beta={c.beta}, {max_new_tokens} new tokens, seed {seed}, {plan['device']}"
             + (f", {prompts_per_step} prompts per step" if prompts_per_step > 1 else "")
             + (f" over {distributed.world_size()} processes" if distributed.world_size() > 1 else "") + "; "
             f"training took {train_s:.0f} s. Evaluated on {before['eval/rows']} held-out rows, "
             f"{samples} joint samples each, same sampling seed before and after.", "",
             "| | mean joint reward |" + "".join(f" {k.split('/')[-1]} |" for k in comp),
             "|---|---|" + "---|" * len(comp),
             f"| untrained | {before['eval/reward']:.3f} |" + cells(before)]
    lines += [f"| MAGRPO, step {ev['step']} | {ev['eval/reward']:.3f} |" + cells(ev) for ev in during]
    lines += [f"| MAGRPO, step {trainer.step} | {after['eval/reward']:.3f} |" + cells(after)]
    if any(k[12:] in maxima for k in comp):
        lines += ["", "Each component: its mean over the samples, of the most it earns (a negative maximum: the most it "
                  "deducts); the joint reward adds them up" + (" (style = 0.4 coherence + 0.6 consistency: style counts, "
                                                               "its two parts are shown beside it)"
                                                               if {"eval/reward/style", "eval/reward/coherence"} <= set(comp)
                                                               else "") + "."]
    lines += ["", "Text quality of the same samples (`magrpo_edu.quality`): repetition = share of repeated word 3-grams; "
              "naturalness = mean per-token NLL under the untrained model (lower = closer to its language; a gamed "
              "text such as `w w w` scores several nats more).", "",
              "| | " + " | ".join(f"{m} {a.name}" for m in ("repetition", "naturalness") for a in team) + " |",
              "|---|" + "---|" * (2 * len(team))]
    for label, ev in (("untrained", before), ("MAGRPO", after)):
        lines.append(f"| {label} | " + " | ".join(f"{ev[f'eval/{m}/{a.name}']:.3f}" if f"eval/{m}/{a.name}" in ev else "-"
                                                  for m in ("repetition", "naturalness") for a in team) + " |")
    per_row = {row["method"]: row["samples"] // n_rows for row in table}
    if len(set(per_row.values())) == 1:
        head = f"{n_rows} held-out rows x {samples} samples, as above"
    else:  # resumed from a checkpoint written before every row drew the evaluation's samples
        head = f"{n_rows} held-out rows; samples per row: " + ", ".join(f"{m} {k}" for m, k in per_row.items())
    last = f"MAGRPO, step {trainer.step}"
    same = [f"`{m}` ({who}) is the evaluation `{label}` above, on its very samples: the same reward, {ev['eval/reward']:.3f}"
            for m, who, label, ev in (("parallel", "the untrained agents", "untrained", before),
                                      ("magrpo", "the trained ones", last, after))
            if any(row["method"] == m and row.get("evaluation") for row in table)]
    lines += ["", f"## Baselines vs MAGRPO ({head})", ""]
    if same:
        lines += ["; ".join(same) + f". The other methods draw {samples} samples per row of their own.", ""]
    lines += [markdown_table(table, maxima)]
    note = single_note(table, t)
    if note is not None:
        lines += [note]
    lines += ["", "## Before and after: the agents' texts on held-out rows", "",
              "The untrained agents (parallel protocol) and the trained ones (magrpo) on the same rows, first sample "
              "each. Read them next to the numbers: a reward can rise while the texts get worse.", ""]
    if r.model == "tiny" and t.in_distribution is not None:  # the writing tasks
        what = t.prompt_field  # post / abstract
        lines += ["**What the embedded tiny model can and cannot do.** It is a 3M-parameter model pretrained on a "
                  f"small synthetic world (`weights/tiny/README.md`). On these held-out, hand-written {what}s "
                  f"its texts are sentences from its own world, mostly unrelated to the {what}: read the reward gain "
                  "above as the agents learning what the joint reward pays for (lengths, structure, words), not "
                  "summarisation."
                  + (f" Compare with the last example, a new {what} from its own world." if in_dist is not None else "")
                  + " For real summaries of real posts see the SmolLM2-135M run "
                  "(notebook 07, `weights/smollm2_tldr/README.md`).", ""]
    shown = [(f"{ex['id']}: joint reward", ex) for ex in examples]
    if in_dist is not None:
        shown.append(("In distribution, for comparison: a new row from the training data's own generator "
                       "(not a training row), joint reward", in_dist))
    for heading, ex in shown:
        lines += [f"### {heading} {ex['reward_before']:.2f} -> {ex['reward_after']:.2f}", "",
                  "> " + ex["input"][:300].replace("\n", " ") + (" [...]" if len(ex["input"]) > 300 else ""), ""]
        for i, (b, a) in enumerate(zip(ex["before"], ex["after"])):
            lines += [f"{team[i].name} before:", "", "```text", b.strip() or "(empty)", "```",
                      f"{team[i].name} after:", "", "```text", a.strip() or "(empty)", "```", ""]
    (out_dir / "results.md").write_text("\n".join(lines) + "\n")
    print("\n" + headline_summary(results, t, trainer.step, out_dir))
    return results


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
