"""Issue 60, item 3: which lever gives MAGRPO on SmolLM2-135M-Instruct coding a signal? Each lever alone, against the
card's recipe (experiments/smollm2_coding.py), from the shipped warm start, 2 seeds to screen.

    export HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1
    python experiments/smollm2_levers.py warm --seed 0            # the warm start, evaluated as every lever is
    python experiments/smollm2_levers.py shipped --seed 0         # the card's shipped MAGRPO pair (seed 0), the same way
    python experiments/smollm2_levers.py raw --seed 0             # SmolLM2 itself (fresh adapters that change nothing)
    python experiments/smollm2_levers.py train --lever card --seed 0
    python experiments/smollm2_levers.py train --lever dynamic --seed 0
    ...  (levers: LEVERS below; one thread each, two side by side on 2 cores)
    python experiments/smollm2_levers.py probe                    # lever "middle": the warm pair's pass rate per training problem
    python experiments/smollm2_levers.py table                    # -> experiments/smollm2_levers.md and .json

Levers (each changes ONE thing of the card's recipe: G = 4, two problems a step, lr 3e-4, beta 0, LoRA r 8 on every
linear layer, 128 new tokens, the authors' sampling, the authors' reward; here a fixed 75 steps, what the card's
30-minute runs reached, so a lever is compared at equal problems seen, and its minutes are recorded):
  card      the recipe itself (the control)
  dynamic   dynamic sampling (`MAGRPOConfig.dynamic_sampling`): a flat group (all J rewards equal) is dropped and another
            problem drawn, at most 4 extra a step
  leash     a KL leash (beta 0.05, k3, summed over tokens) to each agent's FROZEN warm adapter (`leash_to_adapters`),
            not to SmolLM2 with adapters off
  g8p1      G = 8 with one problem a step (the same 8 answers per agent a step)
  middle    training problems the warm pair sometimes solves: pass rate strictly between 0 and 1 in the probe
  strict    the strict reward (`tasks.coding.load_bearing`): cooperation paid only for a load-bearing helper
  strict-dynamic  the strict reward with dynamic sampling: the two levers that raised pass-all in every seed screened
            (g8p1 gained at seed 0 and collapsed at seed 1, so it is left out)

Evaluation (every row of the table alike): 4 joint answers a problem on the coding task's 28 held-out problems and on
HumanEval test[:32], sampling seed = the run's seed, the authors' sampling; reward (the authors'), PassOrNot@1 (over
the first answer of each problem) and the mean pass-all share over the 4 answers ("pass_all"), cooperation rate
(the authors', read off the text) and load-bearing rate (measured: aux replaced by a stub returning None).
Everything a run writes goes to `--out`/<lever>_seed<k>/ (settings with commit, history, samples, adapters, eval); the
table phase copies each finished run's settings, history and evaluation (every answer's text) to
experiments/smollm2_levers/<lever>_seed<k>/, beside the table.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments"))

from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, leash_to_adapters, load_lora_agents  # noqa: E402
from magrpo_edu.models import load_model  # noqa: E402
from magrpo_edu.tasks.coding import smollm2_coding_adapters  # noqa: E402
from magrpo_edu.tasks.coding.data import coding_formatters  # noqa: E402
from magrpo_edu.tasks.coding.load_bearing import strict_coding_joint_reward  # noqa: E402
from magrpo_edu.tasks.coding.reward import coding_joint_reward, coding_levels_many  # noqa: E402
from smollm2_coding import NAMES, SETS, SETTINGS, Progress, eval_rows, fresh_agents, sampling, train_rows  # noqa: E402
from smollm2_tldr import provenance  # noqa: E402

RECIPE = dict(G=SETTINGS["G"], P=SETTINGS["prompts_per_step"], lr=SETTINGS["lr"], beta=0.0, steps=75, dynamic=0,
              reward="authors", rows="all", leash=False)
LEVERS = {
    "card": {},
    "dynamic": dict(dynamic=4),
    "leash": dict(beta=0.05, leash=True),
    "g8p1": dict(G=8, P=1),
    "middle": dict(rows="middle"),
    "strict": dict(reward="strict"),
    "strict-dynamic": dict(reward="strict", dynamic=4),
}
EVAL_SAMPLES = 4
PROBE = dict(samples=4, composed=160, seed=0)
OUT = ROOT / "runs" / "smollm2_levers"


def warm_pair(trainable: bool = False):
    base, tok = load_model(SETTINGS["model"], device="cpu")
    return load_lora_agents(base, smollm2_coding_adapters("warm"), tokenizer=tok, names=list(NAMES), trainable=trainable), tok


def evaluate(agents, which: str, seed: int) -> dict:
    """The pair on one held-out set: EVAL_SAMPLES joint answers a problem (`run_method("parallel")`: the table's
    metrics, load-bearing rate included), and per problem its answers' rewards, pass-all flags and load-bearing
    flags (for differences paired by problem) with every answer's text."""
    from magrpo_edu.evaluation import run_method
    from magrpo_edu.tasks.coding.load_bearing import load_bearing_many

    t = time.time()
    rows = eval_rows(which)
    r = run_method("parallel", agents, "coding", rows, coding_formatters(agents[0].tokenizer), samples=EVAL_SAMPLES,
                   seed=seed, keep_texts=True, ks=(1, EVAL_SAMPLES), **sampling())
    texts = r.pop("texts")
    r.pop("pair_rewards", None)
    reps = [row for row in rows for _ in range(EVAL_SAMPLES)]
    auxes, mains = [x[0] for x in texts], [x[1] for x in texts]
    lv = coding_levels_many(auxes, mains, reps)  # the same programs: the sandbox's results come from memory
    t_lb = time.time()
    lb = load_bearing_many(auxes, mains, reps, lv)
    r["load_bearing_seconds"] = round(time.time() - t_lb, 2)  # from memory too: the table's run already measured it
    problems = []
    for k, row in enumerate(rows):
        js = range(k * EVAL_SAMPLES, (k + 1) * EVAL_SAMPLES)
        problems.append(dict(task_id=row["task_id"], rewards=[lv[j]["total_reward"] for j in js],
                             pass_all=[bool(lv[j]["total_asserts"] and lv[j]["passed"] == lv[j]["total_asserts"]) for j in js],
                             load_bearing=[lb[j] for j in js], calls_aux=[lv[j]["calls_aux"] > 0 for j in js],
                             answers=[dict(aux=auxes[j], main=mains[j]) for j in js]))
    r["problems"] = problems
    r["pass_all"] = statistics.mean(x for p in problems for x in p["pass_all"])
    r["seconds_total"] = round(time.time() - t, 1)
    print(f"{which}: reward {r['reward']:.3f} pass@1 {r['pass_or_not@1']:.3f} pass-all {r['pass_all']:.3f} "
          f"coop {r['cooperation_rate']:.3f} load-bearing {r.get('load_bearing_rate', float('nan')):.3f} "
          f"({r['seconds_total']:.0f}s)", flush=True)
    return r


def phase_warm(out: Path, seed: int, shipped: bool = False, raw: bool = False) -> None:
    """The warm start (or, `shipped`, the card's shipped seed-0 MAGRPO pair: the card's recipe for 78 steps in its 30
    minutes; or, `raw`, SmolLM2 itself, the issue's HumanEval bar) evaluated as every lever is."""
    name = "card-shipped" if shipped else "raw" if raw else "warm"
    d = out / f"{name}_seed{seed}"
    d.mkdir(parents=True, exist_ok=True)
    (d / "settings.json").write_text(json.dumps(dict(lever=name, seed=seed, eval_samples=EVAL_SAMPLES, **provenance()), indent=1))
    if shipped:
        base, tok = load_model(SETTINGS["model"], device="cpu")
        agents = load_lora_agents(base, smollm2_coding_adapters("trained"), tokenizer=tok, names=list(NAMES), trainable=False)
    elif raw:
        agents, _ = fresh_agents()
    else:
        agents, _ = warm_pair()
    res = {}
    for which in SETS:
        res[which] = evaluate(agents, which, seed)
        (d / "eval.json").write_text(json.dumps(res, indent=1))


def middle_rows() -> list[dict]:
    """The training problems the probe found the warm pair to solve sometimes (0 < pass-all share < 1)."""
    f = OUT / "probe.json"  # the probe's own output; its kept copy beside the table where no run folder is left
    probe = json.loads((f if f.exists() else ROOT / "experiments" / "smollm2_levers" / "probe.json").read_text())
    keep = {p["task_id"] for p in probe["problems"] if 0 < p["pass_all"] < 1}
    return [r for r in train_rows() if r["task_id"] in keep]


def phase_probe(out: Path) -> None:
    """The warm pair's pass-all share on training problems: PROBE["samples"] answers to each of PROBE["composed"]
    composed problems (a seeded sample of the 400) and every HumanEval training problem, one problem's answers a
    generation call (`row_by_row`: the memory of one batch, not of all of them)."""
    from magrpo_edu.evaluation import run_method

    agents, tok = warm_pair()
    rows = train_rows()
    composed = [r for r in rows if not r["task_id"].startswith("HumanEval")]
    he = [r for r in rows if r["task_id"].startswith("HumanEval")]
    picked = random.Random(PROBE["seed"]).sample(composed, PROBE["composed"]) + he
    t = time.time()
    r = run_method("parallel", agents, "coding", picked, coding_formatters(tok), samples=PROBE["samples"],
                   seed=PROBE["seed"], keep_texts=True, ks=(1,), row_by_row=True, **sampling())  # one problem a call:
    # all 258 x 4 answers in one batch took 21 GB and was killed (24 GB machine)
    texts = r["texts"]
    reps = [row for row in picked for _ in range(PROBE["samples"])]
    lv = coding_levels_many([x[0] for x in texts], [x[1] for x in texts], reps)
    problems = []
    for k, row in enumerate(picked):
        per = lv[k * PROBE["samples"]:(k + 1) * PROBE["samples"]]
        problems.append(dict(task_id=row["task_id"], pass_all=statistics.mean(
            float(v["total_asserts"] > 0 and v["passed"] == v["total_asserts"]) for v in per),
            rewards=[v["total_reward"] for v in per]))
    middle = [p for p in problems if 0 < p["pass_all"] < 1]
    res = dict(PROBE, seconds=round(time.time() - t, 1), problems=problems, middle=len(middle),
               flat=sum(max(p["rewards"]) == min(p["rewards"]) for p in problems), **provenance())
    (out / "probe.json").write_text(json.dumps(res, indent=1))
    print(f"probe: {len(middle)} of {len(problems)} problems in (0, 1); {res['flat']} with equal rewards "
          f"({res['seconds']:.0f}s)", flush=True)


def phase_train(out: Path, lever: str, seed: int) -> None:
    s = dict(RECIPE, **LEVERS[lever])
    d = out / f"{lever}_seed{seed}"
    d.mkdir(parents=True, exist_ok=True)
    (d / "settings.json").write_text(json.dumps(dict(lever=lever, seed=seed, recipe=s, eval_samples=EVAL_SAMPLES,
                                                     base=SETTINGS, **provenance()), indent=1))
    torch.manual_seed(seed)
    agents, tok = warm_pair(trainable=True)
    if s["leash"]:
        leash_to_adapters(agents, smollm2_coding_adapters("warm"))
    rows = middle_rows() if s["rows"] == "middle" else train_rows()
    reward = strict_coding_joint_reward if s["reward"] == "strict" else coding_joint_reward
    ss = SETTINGS
    cfg = MAGRPOConfig(num_agents=2, num_generations=s["G"], max_new_tokens=ss["max_new_tokens"], temperature=ss["temperature"],
                       top_p=ss["top_p"], top_k=ss["top_k"], learning_rate=s["lr"], beta=s["beta"], max_steps=s["steps"],
                       prompts_per_step=s["P"], dynamic_sampling=s["dynamic"], seed=seed, progress=False)
    trainer = MAGRPOTrainer(agents, reward, coding_formatters(tok), rows, cfg, callbacks=[Progress()])
    t = time.time()
    while trainer.step < s["steps"]:
        trainer.training_step()
    train_s = time.time() - t
    agents[0].model.save_pretrained(d / "adapters", selected_adapters=list(NAMES))
    (d / "history.json").write_text(json.dumps(trainer.history, indent=1))
    (d / "samples.json").write_text(json.dumps(list(trainer.samples), indent=1))
    res = dict(lever=lever, seed=seed, steps_done=trainer.step, train_rows=len(rows), train_minutes=round(train_s / 60, 1),
               threads=torch.get_num_threads())
    for which in SETS:
        res[which] = evaluate(agents, which, seed)
        (d / "eval.json").write_text(json.dumps(res, indent=1))


def _paired(a: dict, b: dict, first: bool = False) -> tuple[float, float, int]:
    """Mean and standard error of b - a in the per-problem pass-all share (problems paired by task_id); `first`: in
    the first answer's pass-all flag, i.e. the difference in PassOrNot@1."""
    share = (lambda p: float(p["pass_all"][0])) if first else (lambda p: statistics.mean(p["pass_all"]))  # noqa: E731
    pa = {p["task_id"]: share(p) for p in a["problems"]}
    d = [share(p) - pa[p["task_id"]] for p in b["problems"] if p["task_id"] in pa]
    se = statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else float("nan")
    return statistics.mean(d), se, len(d)


def _moved(a: dict, b: dict) -> tuple[int, int, int, int]:
    """Problems (paired by task_id) that pass every test in more / fewer of b's answers than a's, and those b solves
    at least once where a never did / a solved at least once and b never does."""
    na = {p["task_id"]: sum(p["pass_all"]) for p in a["problems"]}
    nb = {p["task_id"]: sum(p["pass_all"]) for p in b["problems"] if p["task_id"] in na}
    return (sum(nb[t] > na[t] for t in nb), sum(nb[t] < na[t] for t in nb),
            sum(nb[t] > 0 == na[t] for t in nb), sum(na[t] > 0 == nb[t] for t in nb))


def _training(d: Path) -> dict:
    """What the training history says: the share of flat groups, the load-bearing share and (with a leash) the KL
    estimate in the first and last quarter of the steps, dynamic sampling's draws."""
    f = d / "history.json"
    if not f.exists():
        return {}
    h = json.loads(f.read_text())
    q = max(1, len(h) // 4)
    mean = lambda rs, k: statistics.mean(r[k] for r in rs) if rs and k in rs[0] else None  # noqa: E731
    return dict(steps=len(h), zero_std=mean(h, "frac_reward_zero_std"), reward_first=mean(h[:q], "reward"),
                reward_last=mean(h[-q:], "reward"), load_bearing_first=mean(h[:q], "reward/load_bearing"),
                load_bearing_last=mean(h[-q:], "reward/load_bearing"), draws=mean(h, "dynamic/draws"),
                kl_first=mean(h[:q], "kl"), kl_last=mean(h[-q:], "kl"))  # the leash: mean per-token k3 to its reference


EXAMPLE_LEVER = "strict"  # the lever whose worked example the notebooks show: the shipped pair (issue 60)


def worked_example(runs: dict, lever: str = EXAMPLE_LEVER) -> dict | None:
    """One held-out problem where `lever`'s pair (its first seed) passes more often than the warm start at the same
    sampling seed: the largest gain in the problem's pass-all share (ties: a passing answer whose helper is
    load-bearing first, then the task id), with a warm answer that fails and a trained one that passes, as they
    were written. None where no problem gained."""
    if lever not in runs or "warm" not in runs:
        return None
    seed = next((k for k in sorted(runs[lever]) if k in runs["warm"]), None)
    if seed is None:
        return None
    warm = {p["task_id"]: p for p in runs["warm"][seed]["eval"]["heldout"]["problems"]}
    best = None
    for p in runs[lever][seed]["eval"]["heldout"]["problems"]:
        w = warm.get(p["task_id"])
        if w is None:
            continue
        gain = statistics.mean(p["pass_all"]) - statistics.mean(w["pass_all"])
        passing = [j for j, ok in enumerate(p["pass_all"]) if ok]
        if gain <= 0 or not passing or all(w["pass_all"]):
            continue
        lb = [j for j in passing if p["load_bearing"][j]]
        key = (gain, bool(lb), [-ord(c) for c in p["task_id"]])
        if best is None or key > best[0]:
            best = (key, p, w, (lb or passing)[0], w["pass_all"].index(False))
    if best is None:
        return None
    _, p, w, j, i = best
    return dict(lever=lever, seed=seed, task_id=p["task_id"], warm_passes=sum(w["pass_all"]), trained_passes=sum(p["pass_all"]),
                answers=len(p["pass_all"]), warm_answer=w["answers"][i], warm_reward=w["rewards"][i],
                trained_answer=p["answers"][j], trained_reward=p["rewards"][j], trained_load_bearing=p["load_bearing"][j])


def _share_if_not_aux(ev: dict) -> float:
    """The share of an evaluation's mains that filter with `if not aux(...)`: the template the leash run's mains
    collapsed to (its answers, read after the run; the warm start writes it in about a fifth)."""
    mains = [a["main"] for p in ev["problems"] for a in p["answers"]]
    return sum("if not aux(" in m for m in mains) / len(mains)


def write_table(out: Path, dest: Path = ROOT / "experiments") -> str:
    """`dest`/smollm2_levers.json and .md from every finished run under `out` (a lever's row: its seeds' mean;
    each seed's gain in pass-all over the warm start of the same sampling seed, paired by problem); returns the .md.
    `out` may be the kept copies themselves (experiments/smollm2_levers/): tests/test_smollm2_coding.py
    regenerates the committed table from them."""
    runs = {}
    for d in sorted(out.glob("*_seed*")):
        f = d / "eval.json"
        ev = json.loads(f.read_text()) if f.exists() else {}
        if not all(w in ev for w in SETS):
            continue
        lever, seed = d.name.rsplit("_seed", 1)
        runs.setdefault(lever, {})[int(seed)] = dict(eval=ev, training=_training(d),
                                                    settings=json.loads((d / "settings.json").read_text()))
    keep = dest / "smollm2_levers"  # each finished run's settings, history and evaluation (every answer)
    for lever, by_seed in runs.items():
        for k in by_seed:
            src, dst = out / f"{lever}_seed{k}", keep / f"{lever}_seed{k}"
            if src.resolve() == dst.resolve():
                continue
            dst.mkdir(parents=True, exist_ok=True)
            for name in ("settings.json", "history.json", "eval.json"):
                if (src / name).exists():
                    shutil.copyfile(src / name, dst / name)
    warm = runs.get("warm", {})
    # Each seed's gain is paired with the warm start's evaluation at the same sampling seed where it was run, else with
    # the first one's (two models' answers share no randomness, so the pairing is by problem either way).
    warm_seed = lambda k: k if k in warm else min(warm)  # noqa: E731
    table = []
    for lever in ["raw", "warm", "card-shipped", *LEVERS]:
        if lever not in runs:
            continue
        seeds = sorted(runs[lever])
        row = dict(lever=lever, seeds=seeds, commit=sorted({runs[lever][k]["settings"].get("commit") for k in seeds}))
        compared = bool(warm) and lever != "warm"
        for which in SETS:
            ev = [runs[lever][k]["eval"][which] for k in seeds]

            def vs_warm(f, **kw):  # f(the warm start's evaluation, this seed's), one entry per seed; None: no comparison
                return [f(warm[warm_seed(k)]["eval"][which], runs[lever][k]["eval"][which], **kw) if compared else None
                        for k in seeds]
            row[which] = dict(reward=statistics.mean(e["reward"] for e in ev),
                              pass_or_not1=statistics.mean(e["pass_or_not@1"] for e in ev),
                              pass_or_not1_per_seed=[e["pass_or_not@1"] for e in ev],
                              pass1_gain_vs_warm=vs_warm(_paired, first=True),
                              pass_all=statistics.mean(e["pass_all"] for e in ev),
                              cooperation=statistics.mean(e["cooperation_rate"] for e in ev),
                              load_bearing=statistics.mean(e["load_bearing_rate"] for e in ev),
                              gain_vs_warm=vs_warm(_paired),
                              warm_seed=[warm_seed(k) if compared else None for k in seeds],
                              moved=vs_warm(_moved),
                              if_not_aux=statistics.mean(_share_if_not_aux(e) for e in ev))
        row["training"] = [runs[lever][k]["training"] for k in seeds]
        row["train_minutes"] = [runs[lever][k]["eval"].get("train_minutes") for k in seeds]
        table.append(row)
    example = worked_example(runs)
    (dest / "smollm2_levers.json").write_text(json.dumps(dict(eval_samples=EVAL_SAMPLES, recipe=RECIPE, levers=LEVERS,
                                                                              table=table, example=example), indent=1))
    f2 = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731

    def gains(g):
        return "; ".join("-" if x is None else f"{x[0]:+.2f} ± {x[1]:.2f}" for x in g)
    lines = ["# SmolLM2-135M-Instruct coding: the levers of issue 60, one at a time", "",
             "Written by `python experiments/smollm2_levers.py table` from the runs under runs/smollm2_levers/, whose settings, "
             "histories and answers are kept in experiments/smollm2_levers/ (the script's "
             "docstring has the commands and what each lever changes). Every row is evaluated alike: "
             f"{EVAL_SAMPLES} joint answers a problem, sampling seed = the run's seed, the authors' sampling. "
             "PassOrNot@1: the first answer passes every test (the row's mean, then each seed's); pass-all: the share of "
             "all answers that do; gain: the lever's value minus the warm start's at the same sampling seed (seed 0's "
             "evaluation where the warm start was not evaluated at that seed: the `warm` row lists its seeds), paired by "
             "problem, ± its standard error, one entry per seed; problems up / down: those whose answers pass every test more "
             "/ less often than the warm start's, in brackets those solved at least once where the warm start never was / "
             "solved by the warm start and never here. Cooperation: the authors' (the main's text calls aux); load-bearing: "
             "the main passes fewer tests with aux replaced by a stub returning None. Mains with `if not aux(`: the share of "
             "the mains that filter with that negated call, the template the leash run collapsed to. Each value is the "
             "mean over the row's seeds; one seed is one run.", ""]
    for which, title in (("heldout", "the coding task's 28 held-out problems"), ("humaneval", "HumanEval test[:32]")):
        lines += [f"## {title}", "", "| lever | seeds | reward (of 4) | PassOrNot@1 (per seed) | gain in PassOrNot@1 vs warm | "
                  "pass-all | gain in pass-all vs warm | problems up / down (newly solved / lost) | cooperation | load-bearing | "
                  "training flat groups | train minutes | mains with `if not aux(` |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in table:
            c = r[which]
            zs = [t.get("zero_std") for t in r["training"]]
            per = "; ".join(f"{v:.2f}" for v in c["pass_or_not1_per_seed"])
            lines.append(f"| {r['lever']} | {', '.join(map(str, r['seeds']))} | {c['reward']:.2f} | {c['pass_or_not1']:.2f} ({per}) | "
                         f"{gains(c['pass1_gain_vs_warm'])} | "
                         f"{c['pass_all']:.2f} | {gains(c['gain_vs_warm'])} | "
                         f"{'; '.join('-' if m is None else f'{m[0]} / {m[1]} ({m[2]} / {m[3]})' for m in c['moved'])} | "
                         f"{c['cooperation']:.2f} | {c['load_bearing']:.2f} | "
                         f"{'; '.join(f2(z) for z in zs)} | {'; '.join('-' if m is None else f'{m:.0f}' for m in r['train_minutes'])} | "
                         f"{c['if_not_aux']:.2f} |")
        lines.append("")
    text = "\n".join(lines) + "\n"
    (dest / "smollm2_levers.md").write_text(text)
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("phase", choices=["warm", "shipped", "raw", "probe", "train", "table"])
    ap.add_argument("--lever", choices=list(LEVERS), default="card")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.phase in ("warm", "shipped", "raw"):
        phase_warm(out, a.seed, shipped=a.phase == "shipped", raw=a.phase == "raw")
    elif a.phase == "probe":
        phase_probe(out)
    elif a.phase == "train":
        phase_train(out, a.lever, a.seed)
    else:
        print(write_table(out))


if __name__ == "__main__":
    main()
