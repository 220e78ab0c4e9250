"""Coding collaboration learned on unseen families: MAGRPO on `tiny-code` (and `tiny-code-2turn`), 3 seeds, one turn and two.

    # the recipe (the coding task's LoRA default, Task.lora_recipe) on tiny-code: ~8 min a seed on 2 cores, appends
    # to experiments/coding_collaboration.json
    OMP_NUM_THREADS=2 python experiments/coding_collaboration.py --paper-sampling --lr 1e-3 --generations 8 --prompts-per-step 2 --eval-at 100 --seed 0
    ... --seed 1, --seed 2
    # two turns against one at equal wall time, on tiny-code-2turn (the model that answers the feedback turn):
    # the single-turn recipe, also scored after one round of level feedback (--second-turn-eval), then two-turn
    # MAGRPO with the same problems per step and learning rate, G = 4 (a step's tree is 4 first answers and 4 x 4
    # second answers per problem and agent); the two-turn run's baselines are the single-turn run's (the same
    # untrained answers: same model, rows, samples and sampling seed)
    OMP_NUM_THREADS=2 python experiments/coding_collaboration.py --model tiny-code-2turn --paper-sampling --lr 1e-3 --generations 8 --prompts-per-step 2 --eval-at 100,170 --second-turn-eval --seed 0
    OMP_NUM_THREADS=2 python experiments/coding_collaboration.py --model tiny-code-2turn --paper-sampling --turns 2 --lr 1e-3 --generations 4 --prompts-per-step 2 --only-parallel --seed 0
    ... --seed 1, --seed 2
    python experiments/coding_collaboration.py --report                        # writes experiments/coding_collaboration.md

Per seed: two agents on an embedded code model (`--model`, default `tiny-code`) (`--team`: LoRA r = 8 on q/v by default); the untrained
pair and the paper's prompt-level baselines (single, parallel, sequential, discussion: `evaluation.run_method`)
answer every held-out row (`load_coding("eval")`, 28 rows of 18 families never seen by the model or the training
split) `--samples` times; MAGRPO trains on the training split (`load_coding("train")`) for at most `--steps` steps
and `--budget` seconds of wall time (G = `--generations`, `--prompts-per-step` problems per optimiser step, 64 new
tokens); then the trained pair answers the same rows with the same sampling seed. The sampling seed of every
evaluation is the training seed, so the spread over seeds covers both the training run and the evaluation samples.
Reported per method: the coding reward (max 4), PassOrNot@1 / @k, the cooperation rate and the share of samples
earning each level; where the answers are lost, gate by gate; and each held-out family's first sample before and
after, side by side, with its levels.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, lora_agents, separate_agents  # noqa: E402
from magrpo_edu.evaluation import run_method  # noqa: E402
from magrpo_edu.models import load_model  # noqa: E402
from magrpo_edu.tasks.coding.analysis import LEVEL_SHARES, gate_shares, level_shares  # noqa: E402
from magrpo_edu.tasks.coding.reward import coding_joint_reward, coding_levels  # noqa: E402
from magrpo_edu.tasks.coding.corpus.rows import composed_coding_rows  # noqa: E402
from magrpo_edu.tasks.coding.data import coding_formatters, load_coding, without_empty_inputs  # noqa: E402
from magrpo_edu.tasks.coding import CODING  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "experiments" / "coding_collaboration.json"
BASELINES = ("single", "parallel", "sequential", "discussion")


PLAIN = dict(temperature=1.0, top_p=1.0, top_k=0)
"""MAGRPOConfig's plain sampling: what this experiment trains and evaluates with unless --paper-sampling (run_method
would otherwise sample as the coding task does)."""


def evaluate(method: str, agents, rows, samples: int, seed: int, turns: int = 1, sampling: dict | None = None) -> dict:
    # the agents' tokenizer picks the prompt's form: raw for the embedded models, the chat template for an instruct model
    r = run_method(method, agents, "coding", rows, coding_formatters(agents[0].tokenizer), samples=samples, seed=seed, keep_texts=True,
                   ks=(1, samples), **{**PLAIN, **(sampling or {})})
    reps = [row for row in rows for _ in range(samples)]
    texts = r.pop("texts")
    second_pairs = r.pop("pair_rewards")
    first = r.pop("first_turn_texts", None)  # magrpo_2turn: the same joint actions' first answers
    first_pairs = r.pop("first_turn_pair_rewards", None)
    if first is not None:  # how the second answer of each joint action compares with its first
        r["turn_changes"] = dict(better=sum(b > a for a, b in zip(first_pairs, second_pairs)),
                                 same=sum(b == a for a, b in zip(first_pairs, second_pairs)),
                                 worse=sum(b < a for a, b in zip(first_pairs, second_pairs)))
        r["first_turn_samples"] = [dict(task_id=rows[k]["task_id"], aux=first[k * samples][0], main=first[k * samples][1])
                                   for k in range(len(rows))]
    if method != "single":
        auxes, mains = [t[0] for t in texts], [t[1] for t in texts]
        r["levels"] = level_shares(auxes, mains, reps)
        # the same answers scored without the empty-input asserts (which a loop over nothing passes)
        r["levels_no_empty"] = level_shares(auxes, mains, [without_empty_inputs(row) for row in reps])
    r["first_samples"] = [dict(task_id=rows[k]["task_id"], aux=texts[k * samples][0], main=texts[k * samples][1])
                          for k in range(len(rows))]
    return r


def one_seed(seed: int, steps: int, samples: int, model: str, turns: int, budget_s: float = 300.0,
             lr: float = 2e-3, beta: float = 0.0, generations: int = 4, baselines=BASELINES,
             sampling: dict | None = None, train_rows: str = "train", eval_at=(), team: str = "lora-qv", prompts_per_step: int = 1,
             second_turn_eval: bool = False) -> dict:
    sampling = sampling or {}
    torch.manual_seed(seed)
    base, tok = load_model(model)
    agents = build_team(team, base, tok)
    train = load_coding("train") if train_rows == "train" else composed_coding_rows(400, seed=seed)
    rows = load_coding("eval")
    t = time.time()
    table = {m: evaluate(m, agents, rows, samples, seed, sampling=sampling) for m in baselines}
    if turns > 1 or second_turn_eval:  # the untrained pair with the same second turn: the two-turn run's own footing
        table["untrained_2turn"] = evaluate("magrpo_2turn", agents, rows, samples, seed, sampling=sampling)
    eval_s = time.time() - t
    cfg = MAGRPOConfig(num_agents=2, num_generations=generations, max_new_tokens=64, learning_rate=lr, beta=beta,
                       max_steps=steps, seed=seed, num_turns=turns, progress=False,
                       prompts_per_step=prompts_per_step, **sampling)
    trainer = MAGRPOTrainer(agents, coding_joint_reward, coding_formatters(), train, cfg,
                            transition=_transition() if turns > 1 else None)
    train_s, at = 0.0, {}
    while trainer.step < steps and train_s < budget_s:  # MAGRPOTrainer.train's loop, with a wall-time cap
        t = time.time()
        trainer.training_step()
        train_s += time.time() - t
        if trainer.step in eval_at:  # an evaluation on the way (not counted as training time)
            at[trainer.step] = evaluate("magrpo", agents, rows, samples, seed, sampling=sampling)
            at[trainer.step]["train_seconds"] = round(train_s, 1)
    table["magrpo"] = evaluate("magrpo", agents, rows, samples, seed, sampling=sampling)
    if turns > 1 or second_turn_eval:  # a single-turn pair given the same feedback: is the gain the training or the turn?
        table["magrpo_2turn"] = evaluate("magrpo_2turn", agents, rows, samples, seed, sampling=sampling)
    hist = trainer.history
    curve = [(h["step"], round(h["reward"], 3)) for h in hist[:: max(1, len(hist) // 20)]]
    return dict(seed=seed, model=model, weights=weights_id(model), team=team, prompts_per_step=prompts_per_step, steps=steps, lr=lr, beta=beta, generations=generations, sampling=sampling, train_rows=train_rows, steps_done=trainer.step, budget_s=budget_s, on_the_way={str(k): v for k, v in at.items()}, turns=turns, samples=samples, rows=len(rows), train_seconds=round(train_s, 1),
                eval_seconds_baselines=round(eval_s, 1), threads=torch.get_num_threads(), training_reward=curve, table=table)


TEAMS = ("lora-qv", "lora-all", "lora-all-r16", "separate")


def weights_id(model: str) -> str | None:
    """The first 8 hex digits of an embedded model's weights file's sha256 (None for other models), saved with
    each run since the second-turn documents: runs on different weights never mix in the report. (The runs on
    tiny-code-2turn's weights were made while it was called tiny-code; their model field was set to its name
    afterwards, the weights field unchanged.)"""
    import hashlib

    from magrpo_edu.models import tiny_model_path

    try:
        path = tiny_model_path(model) / "model.safetensors"
    except (KeyError, ValueError):
        return None
    return hashlib.sha256(path.read_bytes()).hexdigest()[:8] if path.exists() else None


def build_team(team: str, base, tok):
    """The two agents: LoRA r = 8 on q/v (the first recipe), LoRA on every linear layer (r = 8 or 16),
    or two separate full copies of the model (full fine-tuning, as in the paper)."""
    if team == "separate":
        return separate_agents(base, 2, tokenizer=tok)
    if team == "lora-qv":
        return lora_agents(base, 2, tokenizer=tok, target_modules=["q_proj", "v_proj"])
    return lora_agents(base, 2, tokenizer=tok, target_modules="all-linear", r=16 if team.endswith("r16") else 8,
                       alpha=32 if team.endswith("r16") else 16)


def _transition():
    from magrpo_edu.tasks.coding.feedback import feedback_transition

    return feedback_transition()


def _ms(values) -> str:
    m = statistics.mean(values)
    s = statistics.pstdev(values) if len(values) > 1 else 0.0
    return f"{m:.3f} ± {s:.3f}"


def report(path: Path = OUT) -> str:
    """The markdown report of every seed in `path` (mean ± population std over seeds)."""
    runs = json.loads(path.read_text())
    lines = turns_comparison(runs)
    current = runs[-1].get("weights") if runs else None
    groups = sorted(_groups(runs).items(), key=lambda kv: kv[1][0].get("weights") != current)  # the newest weights first
    for key, group in groups:
        seeds = [r["seed"] for r in group]
        g0 = group[0]
        lines += [f"## {key}: seeds {seeds}", "",
                  f"{', '.join(str(r['steps_done']) for r in group)} MAGRPO steps (of at most {g0['steps']}, capped at {g0['budget_s']:.0f} s) ({g0['turns']} turn(s)), training wall time "
                  f"{', '.join(str(r['train_seconds']) for r in group)} s on {g0['threads']} threads; evaluation: "
                  f"{g0['rows']} held-out rows x {g0['samples']} samples, sampling seed = training seed.", "",
                  "| method | reward (max 4) | PassOrNot@1 | PassOrNot@" + str(g0["samples"]) + " | cooperation rate | "
                  "tests any | all tests | calls aux | not thin wrapper | reward without empty-input tests | cooperation without them |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for m in group[0]["table"]:
            rs = [r["table"][m] for r in group]
            lv = [r.get("levels") for r in rs]
            lvl = lambda k: _ms([x[k] for x in lv]) if all(lv) else "-"  # noqa: E731
            nes = [r.get("levels_no_empty") for r in rs]
            ne = lambda k: "-" if not all(nes) else _ms([x["reward"] if k == "reward" else _coop(x) for x in nes])  # noqa: E731
            lines.append(f"| {m} | {_ms([r['reward'] for r in rs])} | {_ms([r['pass_or_not@1'] for r in rs])} | "
                         f"{_ms([r['pass_or_not@' + str(g0['samples'])] for r in rs])} | "
                         f"{_ms([r['cooperation_rate'] for r in rs])} | {lvl('tests_any')} | {lvl('tests_all')} | "
                         f"{lvl('calls_aux')} | {lvl('not_thin_wrapper')} | {ne('reward')} | {ne('coop')} |")
        if all("untrained_2turn" in r["table"] and "magrpo_2turn" in r["table"] for r in group):
            g2 = [r["table"]["magrpo_2turn"]["reward"] - r["table"]["untrained_2turn"]["reward"] for r in group]
            lines += ["", f"Two turns, trained pair after feedback minus the untrained pair after the same feedback: {_ms(g2)} "
                      f"(per seed: {', '.join(f'{x:+.3f}' for x in g2)})."]
        gain = [r["table"]["magrpo"]["reward"] - r["table"]["parallel"]["reward"] for r in group]
        best = [max(r["table"][m]["reward"] for m in BASELINES if m in r["table"]) for r in group]
        lines += ["", f"Gain over the untrained pair (parallel): {_ms(gain)} (per seed: "
                  f"{', '.join(f'{x:+.3f}' for x in gain)}; target >= +0.600, 0.15 of the maximum). Trained minus the best "
                  "baseline per seed: " + ", ".join(f"{r['table']['magrpo']['reward'] - b:+.3f}" for r, b in zip(group, best)) + ".", ""]
        way = sorted({int(k) for r in group for k in r.get("on_the_way", {})})
        if way:
            lines += ["On the way (the same evaluation after fewer steps; training seconds in brackets):", "",
                      "| after step | " + " | ".join(f"seed {r['seed']}" for r in group) + " | mean reward | mean PassOrNot@1 | mean cooperation |",
                      "|---|" + "---|" * (len(group) + 3)]
            for k in way:
                ev = [r["on_the_way"].get(str(k)) for r in group]
                if not all(ev):
                    continue
                lines.append(f"| {k} | " + " | ".join(f"{e['reward']:.3f} ({e['train_seconds']:.0f} s)" for e in ev) +
                             f" | {statistics.mean(e['reward'] for e in ev):.3f} | {statistics.mean(e['pass_or_not@1'] for e in ev):.3f} | "
                             f"{statistics.mean(e['cooperation_rate'] for e in ev):.3f} |")
            lines.append("")
        lines += _chain(group)
        r = group[0]
        lines += [f"### Programs before and after (seed {r['seed']}, the first sample of each held-out family)", ""]
        seen, by_id = set(), {x["task_id"]: x for x in load_coding("eval")}
        for before, after in zip(r["table"]["parallel"]["first_samples"], r["table"]["magrpo"]["first_samples"]):
            row = by_id[before["task_id"]]
            if row["family"] in seen:
                continue
            seen.add(row["family"])
            lb, la = coding_levels(before["aux"], before["main"], row), coding_levels(after["aux"], after["main"], row)
            lines += [f"**{before['task_id']}**: untrained {lb['total_reward']:.2f} ({_earned(lb)}) -> trained "
                      f"{la['total_reward']:.2f} ({_earned(la)})", "",
                      "| untrained aux | untrained main | trained aux | trained main |", "|---|---|---|---|",
                      f"| {_cell(before['aux'])} | {_cell(before['main'])} | {_cell(after['aux'])} | {_cell(after['main'])} |", ""]
    return "\n".join(lines)


def turns_comparison(runs: list[dict]) -> list[str]:
    """Two-turn MAGRPO against single-turn MAGRPO at equal wall time (issue 47): for the newest weights,
    the single-turn recipe's seeds (evaluated after one round of level feedback too, `--second-turn-eval`)
    beside the two-turn seeds, per seed: the untrained pair's first answer and its answer after the same
    feedback, each trained pair's first answer and its answer after feedback; then the texts."""
    current = runs[-1].get("weights") if runs else None
    one = {r["seed"]: r for r in runs if r.get("weights") == current and r["turns"] == 1 and "magrpo_2turn" in r["table"]}
    two = {r["seed"]: r for r in runs if r.get("weights") == current and r["turns"] == 2}
    seeds = sorted(set(one) & set(two))
    if not seeds:
        return []
    rw = lambda r, m: r["table"][m]["reward"]  # noqa: E731
    o1, t2 = one[seeds[0]], two[seeds[0]]
    lines = [f"## Two turns against one, at equal wall time (weights {current}): seeds {seeds}", "",
             f"Single turn: `{_key(o1)}`, {', '.join(str(one[s]['steps_done']) for s in seeds)} steps. "
             f"Two turns: `{_key(t2)}`, {', '.join(str(two[s]['steps_done']) for s in seeds)} steps (each step: G first "
             "answers per agent, then G second answers after the level feedback for each of the G x G joint first "
             f"answers). Both capped at {o1['budget_s']:.0f} s of training on the same machine; evaluated on the same "
             f"{o1['rows']} held-out rows x {o1['samples']} samples with the same sampling seed, so the untrained "
             "columns of both runs are the same answers. \"After feedback\": the pair answers again after one round "
             "of level feedback on its first answers (the two-turn protocol).", "",
             "| seed | untrained | untrained after feedback | single-turn trained | single-turn trained after feedback | "
             "two-turn trained, first answer | two-turn trained after feedback | two-turn after feedback minus single-turn |",
             "|---|---|---|---|---|---|---|---|"]
    cols = []
    for s in seeds:
        a, b = one[s], two[s]
        row = [rw(a, "parallel"), rw(a, "untrained_2turn"), rw(a, "magrpo"), rw(a, "magrpo_2turn"), rw(b, "magrpo"),
               rw(b, "magrpo_2turn")]
        row.append(row[5] - row[2])
        cols.append(row)
        lines.append(f"| {s} | " + " | ".join(f"{x:.3f}" if k < 6 else f"{x:+.3f}" for k, x in enumerate(row)) + " |")
    lines.append("| mean ± std | " + " | ".join(_ms([c[k] for c in cols]) for k in range(7)) + " |")
    d = [c[6] for c in cols]
    lines += ["", f"Target: the two-turn pair's final reward above the single-turn pair's by >= 0.2 of 4 on the mean over "
              f"seeds; measured {statistics.mean(d):+.3f} (per seed {', '.join(f'{x:+.3f}' for x in d)}). The untrained "
              f"pair's second answer gains {statistics.mean(c[1] - c[0] for c in cols):+.3f} over its first (no training); "
              f"two-turn training moves the answer after feedback by {statistics.mean(c[5] - c[1] for c in cols):+.3f} over the "
              f"untrained pair's, single-turn training moves the first answer by {statistics.mean(c[2] - c[0] for c in cols):+.3f}.", ""]
    empties = [(two[s]["table"]["untrained_2turn"].get("empty_second"), two[s]["table"]["magrpo_2turn"].get("empty_second")) for s in seeds]
    if all(e[0] and e[1] for e in empties):
        lines += ["Empty second answers (agent 1, agent 2), untrained -> two-turn trained: " + "; ".join(
            f"seed {s}: {e[0][0]:.2f}, {e[0][1]:.2f} -> {e[1][0]:.2f}, {e[1][1]:.2f}" for s, e in zip(seeds, empties)) + ".", ""]
    r = two[seeds[0]]
    lines += [f"### First and second answers, untrained and two-turn trained (seed {r['seed']}, the first sample of each held-out family)", ""]
    seen, by_id = set(), {x["task_id"]: x for x in load_coding("eval")}
    u, t = r["table"]["untrained_2turn"], r["table"]["magrpo_2turn"]
    for k, (u1, u2, t1, t2_) in enumerate(zip(u["first_turn_samples"], u["first_samples"], t["first_turn_samples"], t["first_samples"])):
        row = by_id[u1["task_id"]]
        if row["family"] in seen:
            continue
        seen.add(row["family"])
        sc = lambda x: coding_levels(x["aux"], x["main"], row)["total_reward"]  # noqa: E731
        lines += [f"**{u1['task_id']}**: untrained {sc(u1):.2f} -> after feedback {sc(u2):.2f}; trained {sc(t1):.2f} -> "
                  f"after feedback {sc(t2_):.2f}", "",
                  "| | aux | main |", "|---|---|---|",
                  f"| untrained, first | {_cell(u1['aux'])} | {_cell(u1['main'])} |",
                  f"| untrained, after feedback | {_cell(u2['aux'])} | {_cell(u2['main'])} |",
                  f"| trained, first | {_cell(t1['aux'])} | {_cell(t1['main'])} |",
                  f"| trained, after feedback | {_cell(t2_['aux'])} | {_cell(t2_['main'])} |", ""]
    return lines


def _chain(group: list[dict]) -> list[str]:
    """Where the reward's gates lose the answers, untrained pair vs trained pair (mean over seeds): each
    level's share and its share among the answers that passed the gate before it. The reward is a chain
    (entry point defined -> parses -> >= 1 test passes -> the cooperation bonus), so a loss early in it
    costs everything after it."""
    if not all("levels" in r["table"].get(m, {}) for r in group for m in ("parallel", "magrpo")):
        return []
    mean = {m: {k: statistics.mean(r["table"][m]["levels"][k] for r in group) for k in LEVEL_SHARES}
            for m in ("parallel", "magrpo")}
    out = ["Where the answers are lost, gate by gate (share of all answers, and in brackets the share of those that "
           "passed the gate before; mean over seeds):", "",
           "| gate | untrained pair | trained pair |", "|---|---|---|"]
    cell = lambda share, given: f"{share:.2f}" + ("" if given is None else f" ({given:.2f})")  # noqa: E731
    for (name, *before), (_, *after) in zip(gate_shares(mean["parallel"]), gate_shares(mean["magrpo"])):
        out.append(f"| {name} | {cell(*before)} | {cell(*after)} |")
    return out + [""]


def _coop(shares: dict) -> float:
    """The cooperation rate from level shares: answers earning the bonus (main calls aux after >= 1 passed test)."""
    return shares["calls_aux"]


def _earned(lv: dict) -> str:
    names = [k for k in ("aux_defined", "main_defined", "syntax", "calls_aux", "not_thin_wrapper") if lv[k] > 0]
    return ", ".join(names + [f"tests {lv['passed']}/{lv['total_asserts']}"])


def _cell(code: str) -> str:
    return "<pre>" + code.strip().replace("|", "&#124;").replace("\n", "<br>") + "</pre>" if code.strip() else "(empty)"


def _key(r: dict) -> str:
    return (f"{r['model']}{' (weights ' + r['weights'] + ')' if r.get('weights') else ''}, {r['turns']} turn(s), {r['steps']} steps, lr {r.get('lr', 2e-3):g}, beta {r.get('beta', 0.0):g}, "
            f"G {r.get('generations', 4)}, train {r.get('train_rows', 'train')}" + ("" if r.get("team", "lora-qv") == "lora-qv" else f", team {r['team']}")
            + ("" if r.get("prompts_per_step", 1) == 1 else f", {r['prompts_per_step']} prompts per step") + "".join(f", {k} {v:g}" for k, v in r.get("sampling", {}).items()))


def _groups(runs: list[dict]) -> dict:
    out: dict = {}
    for r in runs:
        out.setdefault(_key(r), []).append(r)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--samples", type=int, default=4)
    p.add_argument("--budget", type=float, default=300.0, help="training wall-time cap in seconds (5 minutes)")
    p.add_argument("--turns", type=int, default=1)
    p.add_argument("--model", default="tiny-code")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--beta", type=float, default=0.0, help="KL leash to the untrained model (0: the paper)")
    p.add_argument("--generations", type=int, default=4, help="G, samples per agent per step")
    p.add_argument("--paper-sampling", action="store_true",
                   help="sample as the authors' code does (temperature 0.7, top-p 0.9, top-k 50) in training and evaluation")
    p.add_argument("--train-rows", choices=("train", "composed"), default="train",
                   help="train on load_coding('train') (44 rows, 22 names) or 400 composed_coding_rows (fresh names)")
    p.add_argument("--team", choices=TEAMS, default="lora-qv", help="the agents: LoRA q/v, LoRA all-linear, or separate full copies")
    p.add_argument("--prompts-per-step", type=int, default=1, help="training problems per optimiser step (1: the paper)")
    p.add_argument("--eval-at", default="", help="also evaluate the pair after these steps, e.g. 100,200")
    p.add_argument("--only-parallel", action="store_true", help="evaluate only the untrained pair (parallel) before training")
    p.add_argument("--second-turn-eval", action="store_true",
                   help="a single-turn run: also evaluate the untrained and the trained pair after one round of level feedback")
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--report", action="store_true", help="write the markdown report of the runs in --out")
    a = p.parse_args()
    out = Path(a.out)
    if a.report:
        md = report(out)
        out.with_suffix(".md").write_text("# Coding collaboration on held-out families\n\n"
                                          "Made by `experiments/coding_collaboration.py`; mean ± std over seeds.\n\n" + md)
        print(md)
        return
    res = one_seed(a.seed, a.steps, a.samples, a.model, a.turns, a.budget, a.lr, a.beta, a.generations,
                   ("parallel",) if a.only_parallel else BASELINES,
                   CODING.sampling if a.paper_sampling else None, a.train_rows,
                   tuple(int(x) for x in a.eval_at.split(",") if x), a.team, a.prompts_per_step, a.second_turn_eval)
    runs = json.loads(out.read_text()) if out.exists() else []
    runs = [r for r in runs if (r["seed"], _key(r)) != (res["seed"], _key(res))] + [res]
    out.write_text(json.dumps(runs, indent=1))
    t = res["table"]
    print({m: round(v["reward"], 3) for m, v in t.items()}, "train", res["train_seconds"], "s")


if __name__ == "__main__":
    main()
