"""Issue 60, item 5: two turns on the real model. SmolLM2-135M-Instruct's coding pair is warm-started on second turns
(an attempt, its feedback, a better answer, as `tiny-code-2turn`'s corpus has them), then trained with two-turn
MAGRPO on the strict reward (the lever screen's best, experiments/smollm2_levers.md); every pair answers the
feedback once on the held-out problems, and what the second answer did is counted test by test.

    export HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 MALLOC_MMAP_THRESHOLD_=65536   # without it: 13.2 GiB resident
    python experiments/smollm2_two_turn.py warm2                 # second-turn warm start from the shipped warm adapters
    python experiments/smollm2_two_turn.py train --seed 0        # two-turn MAGRPO (strict reward) from warm2, then eval
    python experiments/smollm2_two_turn.py eval --pair warm --seed 0    # the shipped warm start, evaluated alike
    python experiments/smollm2_two_turn.py eval --pair warm2 --seed 0   # the second-turn warm start, evaluated alike
    python experiments/smollm2_two_turn.py table                 # -> experiments/smollm2_two_turn.md and .json

The steps and why:
- Second-turn warm start (`warm2`): the shipped warm adapters (`smollm2_coding_adapters("warm")`, which teach the
  first answer's format) train on, each on its own part, with a quarter of every batch first-turn examples (the warm
  start's own: the prompt, then the reference part) and three quarters second-turn examples: `second_turn_attempts` (a
  composed problem, a first joint attempt with the faults an untrained pair makes, or none, and the better answer;
  `second_turn_examples` of the corpus, as tiny-code-2turn's documents),
  the first attempt's feedback written by the task's own transition in SmolLM2's chat form (the feedback is the
  user's next message, `feedback_transition(tokenizer=...)`), then the better answer, loss on that answer only.
  A model never shown a second turn writes its first answer again (the card: 0.70-0.84 of second mains unchanged).
- Two-turn MAGRPO (`train`): the rollout tree of the paper (G answers per agent at turn 1, G more under each joint
  first answer at turn 2; returns with discount 0.9), the strict reward at both turns, G = 4 and one problem a step
  (a two-problem step would sample 40 answers per agent), activation checkpointing (without it the backward of
  a step's 40 answers held 20 GB and was killed on a 24 GB machine), otherwise the card's recipe (lr 3e-4, beta 0, LoRA r 8 on
  every linear layer, the authors' sampling, 128 new tokens), `--steps` steps, minutes recorded. A checkpoint after
  every step (`--out`/trained_seed<k>/checkpoint): the same command resumes a stopped run exactly (30 steps
  took 127 minutes on one thread, 2 to 13 minutes a step).
- Evaluation (every pair alike): the coding task's 28 held-out problems, 4 joint answers a problem, sampling seed =
  the run's seed; each first joint answer gets the feedback and one second answer (`run_method("magrpo_2turn")`).
  Test by test (`assert_outcomes_many`): the share of second answers that pass a test their first answer failed
  (fixed) and the share that fail a test their first answer passed (broke) (`analysis.fixed_and_broken`); the
  pass-all share and PassOrNot@1 of each turn, the authors' reward of each turn, the load-bearing rate.
Everything a run writes goes to `--out`; the table phase copies each pair's settings, history and evaluation (every
answer's text, both turns) to experiments/smollm2_two_turn/, beside the table.
"""
from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments"))

from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, load_lora_agents  # noqa: E402
from magrpo_edu.agents import checkpoint_activations  # noqa: E402
from magrpo_edu.models import load_model  # noqa: E402
from magrpo_edu.tasks.coding import CODING, smollm2_coding_adapters  # noqa: E402
from magrpo_edu.tasks.coding.analysis import fixed_and_broken  # noqa: E402
from magrpo_edu.tasks.coding.corpus.second_turn import second_turn_examples as corpus_second_turn_examples  # noqa: E402
from magrpo_edu.tasks.coding.data import coding_formatters  # noqa: E402
from magrpo_edu.tasks.coding.load_bearing import strict_coding_joint_reward  # noqa: E402
from magrpo_edu.tasks.coding.reward import assert_outcomes_many, coding_levels_many, load_bearing_many  # noqa: E402
from magrpo_edu.trainer import TrainerCallback  # noqa: E402
from smollm2_coding import (NAMES, SETTINGS, adapter_optimizer, eval_rows, sampling, sft_step, train_rows,  # noqa: E402
                            warm_rows)
from smollm2_tldr import provenance  # noqa: E402

WARM2 = dict(attempts=320, attempts_seed=0, steps=20, batch=8, second_share=0.75, lr=5e-4)
TRAIN = dict(G=4, P=1, lr=SETTINGS["lr"], beta=0.0, steps=30, num_turns=2, discount=0.9, reward="strict",
             activation_checkpointing=True)
EVAL_SAMPLES = 4
OUT = ROOT / "runs" / "smollm2_two_turn"
KEPT = ROOT / "experiments" / "smollm2_two_turn"


def pair(folders, trainable: bool = False):
    base, tok = load_model(SETTINGS["model"], device="cpu")
    return load_lora_agents(base, list(folders), tokenizer=tok, names=list(NAMES), trainable=trainable), tok


def warm2_folders(out: Path) -> list[Path]:
    """The second-turn warm start's adapters, [helper, main] (the warm2 phase's output)."""
    return [out / "warm2" / "adapters" / n for n in NAMES]


def second_turn_examples(tok) -> list[tuple[dict, list[str], tuple[str, str]]]:
    """WARM2["attempts"] second-turn examples (`corpus.second_turn.second_turn_examples` in SmolLM2's chat form): (row,
    each agent's second-turn prompt, the better (aux, main)); refused unless the feedback is the user's next message."""
    out, fmts = corpus_second_turn_examples(WARM2["attempts_seed"], WARM2["attempts"], tokenizer=tok), coding_formatters(tok)
    for row, nexts, _ in out:
        prompts = [f(row) for f in fmts]
        if not all(n.startswith(p) and "<|im_start|>user" in n[len(p):] for n, p in zip(nexts, prompts)):
            raise RuntimeError("the second-turn prompt is not the chat form (the feedback as the user's next message)")
    return out


def phase_warm2(out: Path) -> None:
    """Second-turn warm start of each agent's adapter, from the shipped warm adapters (see the docstring)."""
    d = out / "warm2"
    d.mkdir(parents=True, exist_ok=True)
    agents, tok = pair(smollm2_coding_adapters("warm"), trainable=True)
    fmts = coding_formatters(tok)
    t0 = time.time()
    firsts, seconds = warm_rows(), second_turn_examples(tok)
    print(f"{len(seconds)} second-turn examples ({time.time() - t0:.0f}s)", flush=True)
    model, log = agents[0].model, []
    n2 = round(WARM2["batch"] * WARM2["second_share"])
    for k, agent in enumerate(agents):
        field = ("reference_aux", "reference_main")[k]
        opt = adapter_optimizer(agent, WARM2["lr"])
        rng = random.Random(k)
        for step in range(WARM2["steps"]):
            one = rng.sample(firsts, WARM2["batch"] - n2)
            two = rng.sample(seconds, n2)
            prompts = [fmts[k](r) for r in one] + [nexts[k] for _, nexts, _ in two]
            answers = [r[field].strip() for r in one] + [better[k].strip() for _, _, better in two]
            loss = sft_step(model, opt, tok, prompts, answers)
            log.append(dict(agent=agent.name, step=step + 1, loss=round(loss, 4)))
            print(f"{agent.name} step {step + 1} loss {loss:.3f} ({time.time() - t0:.0f}s)", flush=True)
    model.save_pretrained(d / "adapters", selected_adapters=list(NAMES))
    (d / "settings.json").write_text(json.dumps(dict(pair="warm2", warm2=WARM2, base=SETTINGS, **provenance()), indent=1))
    (d / "warm2.json").write_text(json.dumps(dict(WARM2, seconds=round(time.time() - t0, 1), log=log), indent=1))


class Progress(TrainerCallback):
    def __init__(self):
        self.t0 = time.time()

    def on_log(self, trainer, rec):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # GiB (Linux: kB)
        print(f"step {rec['step']:3d} reward {rec['reward']:.2f} zero-std {rec.get('frac_reward_zero_std', float('nan')):.2f} "
              f"{rec['step_time']:.0f}s (total {time.time() - self.t0:.0f}s, peak {peak:.1f} GiB)", flush=True)


def evaluate(agents, seed: int) -> dict:
    """The pair on the held-out problems, two turns: EVAL_SAMPLES joint first answers a problem, each answered once
    after its feedback; the table row of the second turn (`run_method("magrpo_2turn")`), what the second answer
    fixed and broke test by test, each turn's pass-all share, PassOrNot@1 and load-bearing rate, every text."""
    from magrpo_edu.evaluation import run_method

    t = time.time()
    rows = eval_rows("heldout")
    r = run_method("magrpo_2turn", agents, "coding", rows, coding_formatters(agents[0].tokenizer), samples=EVAL_SAMPLES,
                   seed=seed, keep_texts=True, ks=(1, EVAL_SAMPLES), **sampling())
    reps = [row for row in rows for _ in range(EVAL_SAMPLES)]
    turns = {}
    for name, texts in (("first", r.pop("first_turn_texts")), ("second", r.pop("texts"))):
        auxes, mains = [x[0] for x in texts], [x[1] for x in texts]
        lv = coding_levels_many(auxes, mains, reps)
        turns[name] = dict(auxes=auxes, mains=mains, levels=lv, outcomes=assert_outcomes_many(auxes, mains, reps),
                           load_bearing=load_bearing_many(auxes, mains, reps, lv))
    r.pop("pair_rewards", None)
    r.pop("first_turn_pair_rewards", None)
    r["turns"] = fixed_and_broken(turns["first"]["outcomes"], turns["second"]["outcomes"])
    for name, tr in turns.items():
        full = [bool(o) and all(o) for o in tr["outcomes"]]
        r[f"pass_all_{name}"] = statistics.mean(full)
        r[f"pass_or_not1_{name}"] = statistics.mean(full[k * EVAL_SAMPLES] for k in range(len(rows)))
        r[f"reward_{name}"] = statistics.mean(v["total_reward"] for v in tr["levels"])
        r[f"load_bearing_{name}"] = statistics.mean(tr["load_bearing"])
    r["unchanged_main"] = statistics.mean(a.strip() == b.strip() for a, b in zip(turns["first"]["mains"], turns["second"]["mains"]))
    problems = []
    for k, row in enumerate(rows):
        js = range(k * EVAL_SAMPLES, (k + 1) * EVAL_SAMPLES)
        problems.append(dict(task_id=row["task_id"], **{
            name: dict(rewards=[tr["levels"][j]["total_reward"] for j in js], outcomes=[tr["outcomes"][j] for j in js],
                       load_bearing=[tr["load_bearing"][j] for j in js],
                       answers=[dict(aux=tr["auxes"][j], main=tr["mains"][j]) for j in js])
            for name, tr in turns.items()}))
    r["problems"] = problems
    r["seconds_total"] = round(time.time() - t, 1)
    tt = r["turns"]
    print(f"heldout: pass-all {r['pass_all_first']:.3f} -> {r['pass_all_second']:.3f}, fixed {tt['fixed']:.3f} broke "
          f"{tt['broke']:.3f}, reward {r['reward_first']:.3f} -> {r['reward_second']:.3f}, unchanged mains "
          f"{r['unchanged_main']:.2f} ({r['seconds_total']:.0f}s)", flush=True)
    return r


def phase_eval(out: Path, which: str, seed: int) -> None:
    """A pair without two-turn MAGRPO evaluated as the trained one is: "warm" (the shipped warm start, never shown
    a second turn) or "warm2" (the second-turn warm start)."""
    folders = smollm2_coding_adapters("warm") if which == "warm" else warm2_folders(out)
    d = out / f"{which}_seed{seed}"
    d.mkdir(parents=True, exist_ok=True)
    (d / "settings.json").write_text(json.dumps(dict(pair=which, seed=seed, eval_samples=EVAL_SAMPLES, **provenance()), indent=1))
    agents, _ = pair(folders)
    (d / "eval.json").write_text(json.dumps(dict(pair=which, seed=seed, heldout=evaluate(agents, seed)), indent=1))


def phase_train(out: Path, seed: int, steps: int) -> None:
    s = dict(TRAIN, steps=steps)
    d = out / f"trained_seed{seed}"
    d.mkdir(parents=True, exist_ok=True)
    (d / "settings.json").write_text(json.dumps(dict(pair="trained", seed=seed, train=s, warm2=WARM2, eval_samples=EVAL_SAMPLES,
                                                     base=SETTINGS, **provenance()), indent=1))
    torch.manual_seed(seed)
    agents, tok = pair(warm2_folders(out), trainable=True)
    if s["activation_checkpointing"]:  # without it a step's backward held 20 GB and was killed (24 GB machine)
        checkpoint_activations(agents)
    ss = SETTINGS
    cfg = MAGRPOConfig(num_agents=2, num_generations=s["G"], max_new_tokens=ss["max_new_tokens"], temperature=ss["temperature"],
                       top_p=ss["top_p"], top_k=ss["top_k"], learning_rate=s["lr"], beta=s["beta"], max_steps=s["steps"],
                       prompts_per_step=s["P"], num_turns=s["num_turns"], discount=s["discount"], seed=seed, progress=False,
                       save_steps=1)
    trainer = MAGRPOTrainer(agents, strict_coding_joint_reward, coding_formatters(tok), train_rows(), cfg,
                            transition=CODING.transition_for(tok), callbacks=[Progress()], checkpoint_dir=d / "checkpoint")
    if (d / "checkpoint").exists():  # a stopped run goes on where it was (the checkpoint resumes it exactly)
        trainer.load_checkpoint(d / "checkpoint")
        print(f"resumed at step {trainer.step}", flush=True)
    while trainer.step < s["steps"]:
        trainer.training_step()
    agents[0].model.save_pretrained(d / "adapters", selected_adapters=list(NAMES))
    (d / "history.json").write_text(json.dumps(trainer.history, indent=1))
    train_s = sum(r["step_time"] for r in trainer.history)  # over every session the run took
    res = dict(pair="trained", seed=seed, steps_done=trainer.step, train_minutes=round(train_s / 60, 1),
               threads=torch.get_num_threads())
    res["heldout"] = evaluate(agents, seed)
    (d / "eval.json").write_text(json.dumps(res, indent=1))


def _paired(a: dict, b: dict, key: str) -> tuple[float, float]:
    """Mean and standard error over problems (paired by task_id) of b's minus a's pass-all share in turn `key`."""
    full = lambda p: statistics.mean(bool(o) and all(o) for o in p[key]["outcomes"])  # noqa: E731
    pa = {p["task_id"]: full(p) for p in a["problems"]}
    d = [full(p) - pa[p["task_id"]] for p in b["problems"] if p["task_id"] in pa]
    return statistics.mean(d), statistics.stdev(d) / len(d) ** 0.5


def write_table(out: Path, dest: Path = ROOT / "experiments") -> str:
    """`dest`/smollm2_two_turn.json and .md from every finished pair under `out` (or the kept copies)."""
    runs = {}
    order = {"warm": 0, "warm2": 1, "trained": 2}
    for d in sorted(out.glob("*_seed*"), key=lambda d: (order.get(d.name.rsplit("_seed", 1)[0], 3), d.name)):
        f = d / "eval.json"
        if f.exists():
            whole = json.loads(f.read_text())
            runs[d.name] = dict(eval=whole["heldout"], train_minutes=whole.get("train_minutes"),
                                settings=json.loads((d / "settings.json").read_text()),
                                history=json.loads((d / "history.json").read_text()) if (d / "history.json").exists() else None)
    lines = ["# Two turns on SmolLM2-135M-Instruct coding (issue 60, item 5)", "",
             "Made by `experiments/smollm2_two_turn.py` (its docstring says how). The coding task's 28 held-out problems, "
             f"{EVAL_SAMPLES} joint answers a problem, each answered once after its feedback. *fixed*: the share of second "
             "answers that pass a test their first answer failed; *broke*: the share that fail a test their first answer "
             "passed (both counted test by test). Pass-all: the share of answers passing every test; PassOrNot@1 over "
             "each problem's first answer; reward: the authors'. One evaluation draw per row.", "",
             "| pair | seed | fixed | broke | pass-all 1st -> 2nd | PassOrNot@1 1st -> 2nd | reward 1st -> 2nd | "
             "load-bearing 1st -> 2nd | mains unchanged | train min |", "|---|---|---|---|---|---|---|---|---|---|"]
    table = {}
    for name, run in runs.items():
        e, st, tm = run["eval"], run["settings"], run["train_minutes"]
        row = dict(pair=st["pair"], seed=st.get("seed"), fixed=e["turns"]["fixed"], broke=e["turns"]["broke"],
                   pass_all=[e["pass_all_first"], e["pass_all_second"]],
                   pass_or_not1=[e["pass_or_not1_first"], e["pass_or_not1_second"]],
                   reward=[e["reward_first"], e["reward_second"]], load_bearing=[e["load_bearing_first"], e["load_bearing_second"]],
                   unchanged_main=e["unchanged_main"], train_minutes=tm, commit=st.get("commit"))
        h = run["history"]
        if h:  # what training saw: flat groups (no signal) and each turn's reward, first and last quarter of the steps
            q = max(1, len(h) // 4)
            mean = lambda rs, k: round(statistics.mean(r[k] for r in rs), 4)  # noqa: E731
            row["training"] = dict(steps=len(h), zero_std=mean(h, "frac_reward_zero_std"),
                                   turn_1=[mean(h[:q], "reward/turn_1"), mean(h[-q:], "reward/turn_1")],
                                   turn_2=[mean(h[:q], "reward/turn_2"), mean(h[-q:], "reward/turn_2")])
        table[name] = row
        f2 = lambda xs: f"{xs[0]:.2f} -> {xs[1]:.2f}"  # noqa: E731
        lines.append(f"| {row['pair']} | {row['seed']} | {row['fixed']:.2f} | {row['broke']:.2f} | {f2(row['pass_all'])} | "
                     f"{f2(row['pass_or_not1'])} | {f2(row['reward'])} | {f2(row['load_bearing'])} | "
                     f"{row['unchanged_main']:.2f} | {'' if tm is None else tm} |")
    trained = [(n, table[n]["training"]) for n in table if "training" in table[n]]
    if trained:
        lines += ["", "What two-turn training saw (strict reward, each step's groups; first and last quarter of the steps):"]
        lines += [f"- {n}: {t['steps']} steps, {t['zero_std']:.2f} of the groups flat (no reward variance: no gradient); "
                  f"training reward, first turn {t['turn_1'][0]:.2f} -> {t['turn_1'][1]:.2f}, second turn "
                  f"{t['turn_2'][0]:.2f} -> {t['turn_2'][1]:.2f}" for n, t in trained]
    base = next((runs[n]["eval"] for n in runs if n.startswith("warm_")), None)
    if base is not None:
        lines += ["", "Pass-all against the shipped warm start's, turn by turn (paired by problem, mean ± SE over the 28 "
                  "problems):"]
        for name, run in runs.items():
            if not name.startswith("warm_"):
                said = []
                for turn in ("first", "second"):
                    m, se = _paired(base, run["eval"], turn)
                    table[name][f"{turn}_pass_all_vs_warm"] = [round(m, 4), round(se, 4)]
                    said.append(f"{turn} turn {m:+.2f} ± {se:.2f}")
                lines.append(f"- {name}: " + ", ".join(said))
    (dest / "smollm2_two_turn.json").write_text(json.dumps(table, indent=1))
    md = "\n".join(lines) + "\n"
    (dest / "smollm2_two_turn.md").write_text(md)
    return md


def keep(out: Path) -> None:
    """Copy each finished pair's settings, history and evaluation beside the table (experiments/smollm2_two_turn/)."""
    for d in sorted(out.glob("*_seed*")):
        if (d / "eval.json").exists():
            (KEPT / d.name).mkdir(parents=True, exist_ok=True)
            for f in ("settings.json", "history.json", "eval.json"):
                if (d / f).exists():
                    shutil.copy(d / f, KEPT / d.name / f)
    if (out / "warm2" / "warm2.json").exists():
        (KEPT / "warm2").mkdir(parents=True, exist_ok=True)
        for f in ("settings.json", "warm2.json"):
            shutil.copy(out / "warm2" / f, KEPT / "warm2" / f)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("phase", choices=["warm2", "train", "eval", "table"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=TRAIN["steps"], help="train: two-turn MAGRPO steps")
    ap.add_argument("--pair", choices=["warm", "warm2"], default="warm", help="eval: which untrained pair")
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.phase == "warm2":
        phase_warm2(out)
    elif a.phase == "train":
        phase_train(out, a.seed, a.steps)
    elif a.phase == "eval":
        phase_eval(out, a.pair, a.seed)
    else:
        keep(out)
        print(write_table(KEPT))


if __name__ == "__main__":
    main()
