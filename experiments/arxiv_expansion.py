"""The paper's arXiv-expansion task (issue 31 item 6): MAGRPO with beta = 0 (the paper) and with a k3 KL leash.

    OMP_NUM_THREADS=2 python experiments/arxiv_expansion.py --seed 0     # one seed, both settings (~7.5 min on 2 cores),
    OMP_NUM_THREADS=2 python experiments/arxiv_expansion.py --seed 1     # appended to experiments/arxiv_expansion.json
    OMP_NUM_THREADS=2 python experiments/arxiv_expansion.py --seed 2
    python experiments/arxiv_expansion.py --report                        # writes experiments/arxiv_expansion.md

The task (Liu, Liang, Lyu, Amato, arXiv 2508.04652, its second writing experiment): agent 1 expands an abstract
into background and motivation, agent 2 into methodology and implications; the joint reward is the authors'
four-level arXiv reward (`rewards.writing.arxiv_levels`, max 3): L1 both texts have 128-256 words (+0.5, else 0),
L2 the character ratio method/background near 1-1.3, L3 the unique-word ratio near 0.7-1.3, L4 style (transition
words in both texts, content-word overlap). Every level is gated: a failed level stops scoring.

Per seed, two settings that differ only in `beta`, on the embedded tiny model with one LoRA adapter per agent
(r = 8, q/v), G = 4, learning rate 2e-3, 360 new tokens, temperature 1 (the settings of the model card's arXiv
run, `weights/tiny/README.md`, which fell 0.415 -> 0.139 in 100 steps):

    A  beta = 0     Algorithm 1 of the paper: A = R - mean(R) times the summed token log-probs, no KL term
    B  beta = 0.1   the same plus the k3 leash to the frozen untrained model (the base with adapters off), as TRL

Evaluation (one path for every run, `evaluation.run_method`, as notebooks 03 and 08): the first `--rows`
hand-written held-out abstracts (`load_writing("arxiv", "eval")`), `--samples` joint answers each, sampling seed 0,
after `--eval-at` steps and at the end; the untrained agents are the same for every run (LoRA starts as the base
model) and are evaluated once. Besides the reward and its levels: where each joint answer STOPS on the reward's
ladder (`rewards.writing.arxiv_stop_level`), each agent's word count against L1's window, naturalness and repetition
(`magrpo_edu.quality`), and the texts (all of them at the end, the first answer to the first `SHOW` abstracts on
the way).
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, lora_agents
from magrpo_edu.evaluation import run_method
from magrpo_edu.models import load_model
from magrpo_edu.tasks.writing.reward import ARXIV_WORDS, arxiv_joint_reward, arxiv_stop_level, word_count
from magrpo_edu.tasks.writing import arxiv_formatters, load_writing

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "experiments" / "arxiv_expansion.json"
SETTINGS = {"A": 0.0, "B": 0.1}   # name: beta
READING = ("<!-- reading -->", "<!-- /reading -->")   # a hand-written reading of the results, kept by --report
SHOW = 3                          # abstracts whose first joint answer is kept at every evaluation
HISTORY_KEYS = ("reward", "reward/structure", "reward/length_ratio", "reward/uniqueness", "reward/coherence",
                "reward/consistency", "kl", "completions/mean_length/agent_0", "completions/mean_length/agent_1",
                "completions/clipped_ratio/agent_0", "completions/clipped_ratio/agent_1", "frac_reward_zero_std",
                "step_time")


def ladder(texts: list[list[str]]) -> dict:
    """Per-level shares of the joint answers, and each agent's word counts against L1's window."""
    stops = [arxiv_stop_level(c1, c2) for c1, c2 in texts]
    n = len(texts)
    out = {f"stops_at_{k}": sum(s == k for s in stops) / n for k in (1, 2, 3)}
    out["reaches_style"] = sum(s == 4 for s in stops) / n
    for k in (0, 1):
        words = [word_count(t[k]) for t in texts]
        out[f"words{k + 1}"] = statistics.mean(words)
        out[f"short{k + 1}"] = sum(w < ARXIV_WORDS[0] for w in words) / n
        out[f"long{k + 1}"] = sum(w > ARXIV_WORDS[1] for w in words) / n
    return out


def evaluate(agents, rows, samples: int, max_new: int, all_texts: bool, method: str = "parallel") -> dict:
    """One held-out evaluation (run_method: the parallel protocol, sampling seed 0), with the ladder's shares."""
    r = run_method(method, agents, "arxiv", rows, arxiv_formatters(), samples=samples, max_new_tokens=max_new, seed=0,
                   keep_texts=True)
    r.update(ladder(r["texts"]))
    if not all_texts:  # on the way: only the first answer to the first SHOW abstracts
        r["texts"] = [r["texts"][k * samples] for k in range(SHOW)]
        r["pair_rewards"] = [r["pair_rewards"][k * samples] for k in range(SHOW)]
    return {k: (round(v, 5) if isinstance(v, float) else v) for k, v in r.items()}


def one_run(setting: str, seed: int, steps: int, lr: float, rows, samples: int, max_new: int, eval_at) -> dict:
    """One training run (MAGRPOTrainer.train's loop, with evaluations on the way) and its evaluations."""
    beta = SETTINGS[setting]
    base, tok = load_model("tiny")                       # a fresh model per run
    agents = lora_agents(base, num_agents=2, tokenizer=tok, seed=seed)
    cfg = MAGRPOConfig(num_agents=2, num_generations=4, max_new_tokens=max_new, learning_rate=lr, max_steps=steps,
                       beta=beta, seed=seed, progress=False)
    trainer = MAGRPOTrainer(agents, arxiv_joint_reward, arxiv_formatters(), load_writing("arxiv", "train"), cfg)
    evals, train_s = {}, 0.0
    while trainer.step < steps:
        t = time.time()
        trainer.training_step()
        train_s += time.time() - t
        if trainer.step in eval_at or trainer.step == steps:
            evals[str(trainer.step)] = evaluate(agents, rows, samples, max_new, all_texts=trainer.step == steps,
                                                method="magrpo")
            print(f"  {setting} seed {seed} step {trainer.step}: held-out {evals[str(trainer.step)]['reward']:.3f} "
                  f"[{train_s:.0f} s training]", flush=True)
    history = [{"step": h["step"], **{k: round(h[k], 5) for k in HISTORY_KEYS if k in h}} for h in trainer.history]
    return dict(setting=setting, beta=beta, lr=lr, seed=seed, steps=steps, train_seconds=round(train_s, 1),
                threads=torch.get_num_threads(), history=history, evals=evals)


def report(path: Path = OUT) -> str:
    """The markdown report of the runs in `path`."""
    data = json.loads(path.read_text())
    cfg, un, runs = data["config"], data["untrained"], data["runs"]
    seeds = sorted({r["seed"] for r in runs})
    last = str(cfg["steps"])
    ms = lambda xs: f"{statistics.mean(xs):.3f} ± {statistics.stdev(xs):.3f}" if len(xs) > 1 else f"{xs[0]:.3f}"  # noqa: E731
    lines = [f"Settings: the embedded tiny model, one LoRA adapter per agent (r = 8, q/v), G = {cfg['G']}, lr {cfg['lr']:g}, "
             f"{cfg['max_new_tokens']} new tokens, temperature 1, {cfg['steps']} steps; A: beta = 0 (the paper), "
             f"B: beta = {SETTINGS['B']} (k3 leash). Held-out: the first {cfg['rows']} hand-written abstracts x "
             f"{cfg['samples']} joint answers, sampling seed 0. Seeds {seeds}; one run per seed and setting. "
             f"Training wall time per run: " + ", ".join(f"{r['setting']}{r['seed']} {r['train_seconds']:.0f} s"
                                                         for r in runs) + f" ({runs[0]['threads']} threads).", "",
             "## Held-out reward on the way (max 3)", "",
             "| run | seed | " + " | ".join(f"step {k}" for k in ["0"] + sorted(runs[0]["evals"], key=int)) + " |",
             "|---|---|" + "---|" * (1 + len(runs[0]["evals"]))]
    for r in runs:
        lines.append(f"| {r['setting']} | {r['seed']} | {un['reward']:.3f} | " +
                     " | ".join(f"{r['evals'][k]['reward']:.3f}" for k in sorted(r["evals"], key=int)) + " |")
    cols = [("reward", "reward"), ("structure", "L1 structure (of 0.5)"), ("length_ratio", "L2 length ratio"),
            ("uniqueness", "L3 vocabulary (of 0.5)"), ("style", "L4 style"), ("stops_at_1", "stops at L1"),
            ("stops_at_2", "stops at L2"), ("stops_at_3", "stops at L3"), ("reaches_style", "reaches L4"),
            ("words1", "words, agent 1"), ("words2", "words, agent 2"), ("short1", "agent 1 < 128 words"),
            ("long1", "agent 1 > 256 words"), ("short2", "agent 2 < 128 words"), ("long2", "agent 2 > 256 words"),
            ("naturalness1", "naturalness 1"), ("naturalness2", "naturalness 2"), ("repetition1", "repetition 1"),
            ("repetition2", "repetition 2")]
    lines += ["", f"## After {cfg['steps']} steps: levels, where the answers stop, words and text quality", "",
              "Mean ± std over seeds (untrained: one evaluation). Shares are of the joint answers; 'stops at Lk' = the "
              "reward's ladder stops at level k (L1: a text outside 128-256 words, total 0).", "",
              "| quantity | untrained | " + " | ".join(f"{s}" for s in SETTINGS) + " |", "|---|---|" + "---|" * len(SETTINGS)]
    for key, name in cols:
        cells = [ms([r["evals"][last][key] for r in runs if r["setting"] == s]) for s in SETTINGS]
        lines.append(f"| {name} | {un[key]:.3f} | " + " | ".join(cells) + " |")
    lines += ["", "Per seed (after training): reward, stops at L1, words of agent 1 / agent 2, naturalness 1 / 2", ""]
    for r in runs:
        e = r["evals"][last]
        lines.append(f"- {r['setting']} seed {r['seed']}: {e['reward']:.3f}, {e['stops_at_1']:.2f}, {e['words1']:.0f} / "
                     f"{e['words2']:.0f}, {e['naturalness1']:.2f} / {e['naturalness2']:.2f}")
    lines += ["", "## Texts: the first joint answer to the first held-out abstracts", ""]
    rows = load_writing("arxiv", "eval")
    for k in range(SHOW):
        lines += [f"### Abstract {k}", "", "> " + rows[k]["abstract"], "",
                  f"- **untrained** ({un['pair_rewards'][k * cfg['samples']]:.2f}): agent 1: "
                  f"`{_short(un['texts'][k * cfg['samples']][0])}` / agent 2: `{_short(un['texts'][k * cfg['samples']][1])}`"]
        for r in runs:
            e = r["evals"][last]
            lines.append(f"- **{r['setting']} seed {r['seed']}** ({e['pair_rewards'][k * cfg['samples']]:.2f}): agent 1: "
                         f"`{_short(e['texts'][k * cfg['samples']][0])}` / agent 2: `{_short(e['texts'][k * cfg['samples']][1])}`")
        lines.append("")
    return "\n".join(lines)


def _short(text: str, n: int = 300) -> str:
    t = " ".join(text.split()).replace("`", "'")
    return t if len(t) <= n else t[:n] + f" ... ({word_count(text)} words)"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--rows", type=int, default=12, help="held-out abstracts evaluated")
    p.add_argument("--samples", type=int, default=2, help="joint answers per held-out abstract")
    p.add_argument("--max-new-tokens", type=int, default=360, help="the arXiv task's budget (Task.max_new_tokens)")
    p.add_argument("--eval-at", default="20,40", help="also evaluate after these steps")
    p.add_argument("--settings", default="A,B")
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--report", action="store_true", help="write the markdown report of --out")
    a = p.parse_args()
    out = Path(a.out)
    if a.report:
        md, path = report(out), out.with_suffix(".md")
        old = path.read_text() if path.exists() else ""
        reading = old[old.find(READING[0]):old.find(READING[1]) + len(READING[1])] if READING[1] in old else ""
        path.write_text("# The arXiv-expansion task: beta = 0 (the paper) vs a k3 KL leash\n\n"
                        "Made by `experiments/arxiv_expansion.py --report` from `arxiv_expansion.json` (the reading between "
                        "the markers is written by hand and kept when the report is made again).\n\n"
                        + (reading + "\n\n" if reading else "") + md)
        print(md)
        return
    cfg = dict(steps=a.steps, lr=a.lr, G=4, rows=a.rows, samples=a.samples, max_new_tokens=a.max_new_tokens,
               eval_at=[int(x) for x in a.eval_at.split(",") if x])
    data = json.loads(out.read_text()) if out.exists() else {}
    if data and data["config"] != cfg:
        raise SystemExit(f"{out} holds runs with other settings {data['config']}; pass another --out")
    rows = load_writing("arxiv", "eval")[:a.rows]
    if "untrained" not in data:   # the untrained agents are the same for every run: evaluated once
        base, tok = load_model("tiny")
        agents = lora_agents(base, num_agents=2, tokenizer=tok, seed=0)
        data = dict(config=cfg, untrained=evaluate(agents, rows, a.samples, a.max_new_tokens, all_texts=True), runs=[])
        print(f"untrained: held-out {data['untrained']['reward']:.3f}", flush=True)
    for setting in a.settings.split(","):
        res = one_run(setting, a.seed, a.steps, a.lr, rows, a.samples, a.max_new_tokens, set(cfg["eval_at"]))
        data["runs"] = [r for r in data["runs"] if (r["setting"], r["seed"]) != (setting, a.seed)] + [res]
        data["runs"].sort(key=lambda r: (r["setting"], r["seed"]))
        out.write_text(json.dumps(data, indent=1))


if __name__ == "__main__":
    main()
