"""Write weights/tiny/README.md (the model card) from pretrain_summary.json and evidence.json."""
from __future__ import annotations

import json
import time

from magrpo_edu.models import tiny_model_path

# How the model learned to copy an unseen entry point from its prompt, and what was tried on the way.
HISTORY = [
    "## Coding on unseen families: how this model came to be", "",
    "The rewards quoted in this history were measured before 2026-11-23's correction of the rewards to the",
    "authors' code (the coding reward then combined every definition of both answers, counted HumanEval's",
    "`assert True` lines and used a narrower thin-wrapper rule; the writing rewards used this project's own",
    "word lists). They compare the attempts with each other, not with the table above.", "",
    "The coding task's held-out families are never in the corpus, so the main agent must copy an entry point it",
    "has never seen (`def filter_short(`) from its prompt. The 4-layer model (1.07M parameters) shipped until",
    "2026-11-23 did not: it wrote a function it had memorised, under that function's name (held-out coding",
    "0.386 -> 0.396; its writing gains: length 0.423 -> 0.665, TL;DR 0.922 -> 1.956, arXiv 0.546 -> 0.762).",
    "Pretraining runs probed for copying (per-token probability of repeating the prompt's signature), in order:",
    "(1) randomly renamed entry points, and 400 extra steps on renamed problems only; (2) half the coding",
    "documents composed from parts (13 aggregations x 40 item predicates and transforms, 174 compositions, none a",
    "held-out family in disguise) under descriptive names: held-out reward 0.503 -> 0.434 after 150 steps, the",
    "entry point written in 5% of answers before and 1% after; (3) as (2) plus neutral names (`scan_records`)",
    "for 60% of the problems, varied argument names, code followed by `assert name(...) == value` lines, 1400",
    "steps; (4) as (3) plus call chains of made-up names (`def kavon_tos(ter): ...`). In (3) and (4) the model",
    "copies the FIRST token of a defined name (p = 0.78-0.98 after `assert`) but not the rest (p = 0.02 for",
    "`records` in `scan_records`, at every repetition): a 'name after def' lookup, not a general copy",
    "(induction) head. (2)-(4) took 640-760 s each.",
    "Deeper, 6 layers (1.47M parameters, `--layers 6 --width 128`): (5) the corpus of (4), 1400 steps, 927 s: the",
    "rest of a name is copied (`records` p = 0.77-0.80), sampled answers still write the entry point in about 1%",
    "of cases (held-out 0.403 -> 0.370). (6) names made of ~500 world words, slices of them and syllable strings",
    "for 85% of the problems, main functions 2/3 of the coding documents, 1600 steps, 1115 s: every token of a",
    "name is copied except the first after `def` (p <= 0.03; greedy answers shift the name by a token, `def",
    "quares(xs):` for `squares`); held-out 0.398 -> 0.393. (7) (6) plus 1500 steps on main-function documents",
    "only: the first token is copied too (p = 0.65-0.99) and MAGRPO raised held-out coding 0.459 -> 0.543 in 150",
    "steps, but the helper forgot how to write `aux` (aux_defined 0). A copy learned on whole-word names did not",
    "transfer to other tokens (`budget_after` p = 0.91, `filter_short` p = 0.00).",
    "(8) (6) plus an annealing phase (`pretrain.anneal`: 1500 steps at lr 1e-3 on batches where 60% of the",
    "documents are coding documents of BOTH agents, 40% the ordinary corpus; 1734 s in all): the helper keeps",
    "`aux` (0.396 of 0.4), the entry-point level is 0.23 of its 0.6 (~38% of answers), tests start to pass, and",
    "MAGRPO raises held-out coding, 1.104 -> 1.263 (28 rows x 16 samples; calls_aux 0.06 -> 0.12,",
    "not_thin_wrapper 0.13 -> 0.24; a second seed 1.104 -> 1.362). But arXiv fell to 0.069 -> 0.113 because",
    "long paragraphs drift into code. Keeping long documents whole while annealing (max length 768) with a 40%",
    "coding share did not help (arXiv untrained 0.040; held-out coding 1.006 -> 1.000). The 6-layer checkpoint",
    "before annealing had untrained arXiv 0.295. Branch `experiment/anneal`.",
    "(9) (6) plus 500 PACKED steps (blocks of 768 like the main steps, lr 1e-3 decaying linearly to 0) on 50%",
    "coding, 20% arXiv, 30% ordinary documents (branch `experiment/packed-anneal`): long text kept (untrained",
    "arXiv 0.460, MAGRPO 0.460 -> 0.554 in 100 steps), but the copy was only half learned (entry-point level 0.08 of 0.6, ~13% of",
    "answers) and held-out coding barely moved, 0.690 -> 0.704 (28 x 16).",
    "(10) (8) followed by such a packed phase with more arXiv: `pretrain.cooldown`, 300 steps, lr 5e-4 decaying",
    "to 0, 40% arXiv, 30% coding, 30% ordinary documents; one `magrpo-edu pretrain` command, reproduced bit for",
    "bit, ~1950 s (branch `experiment/cooldown`, with its own card and evidence run). Every task rose, but",
    "little: length 0.490 -> 0.677, TL;DR 1.134 -> 1.387 (through the length level alone), arXiv 0.297 -> 0.549,",
    "held-out coding 1.208 -> 1.257 (entry-point level 0.21 of 0.6, ~35% of answers; the 20 x 4 points along the way fell,",
    "1.20 -> 1.09; 300 steps at lr 1e-3 gave 1.245), and notebook 00's quickstart claim failed (length",
    "0.490 -> 0.526 in 200 steps; it asserts +0.1). Not shipped.",
    "(11) THIS MODEL: (10)'s corpus and phases at width 192 (3.1M parameters, SwiGLU 528; the issue allows",
    "1-5M), `magrpo-edu pretrain` with what are now its defaults; the run wrote to a scratch folder (the command",
    "above, `--width 192` then explicit) and its files were copied here. 2646 s on 2 cores, about 1.35x (10).",
    "Checked before anything else: notebook 00's quickstart cell, 0.407 -> 0.933 in 200 steps, and held-out",
    "coding at 64 new tokens, 1.202 -> 1.433 (28 x 16). With that (earlier) reward every task's",
    "held-out reward rises, coding's 20 x 4 points along the way too (1.01 -> 1.35): main_defined",
    "0.23 -> 0.26 (of 0.6: the entry point in ~40% of answers), calls_aux 0.09 -> 0.15, not_thin_wrapper",
    "0.17 -> 0.29. Our reading, not a measured cause:",
    "with more width the copy learned in the annealing phase and the long text given back by the cooldown no",
    "longer crowd each other out. arXiv gains less than on the 4-layer model (+0.16 against +0.22).",
    "Read the samples beside the numbers: after training, agent 2's length-task answer in this run is a string",
    "of repeated `w` tokens and the TL;DR answers have lost their sense while every level rose. The rewards",
    "are the paper's; with no KL term and LoRA lr 2e-3, MAGRPO finds what they pay for.",
    "",
]


def load_seconds() -> dict:
    import subprocess
    import sys

    # The one-time `import transformers`, measured in a fresh interpreter (this one may have imported it).
    code = "import time; t = time.perf_counter(); import transformers; print(time.perf_counter() - t)"
    imp = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    from magrpo_edu.models import load_model

    load_model("tiny")  # first call also initialises tokenizers
    t = time.perf_counter()
    load_model("tiny")
    return dict(import_transformers_s=round(imp, 2), load_model_s=round(time.perf_counter() - t, 3))


def _peak(r: dict) -> tuple:
    """(step, held-out reward) of the best point along one evidence run."""
    return max(r.get("trajectory", []), key=lambda sv: sv[1], default=(0, 0.0))


def write_card() -> str:
    d = tiny_model_path()
    s = json.loads((d / "pretrain_summary.json").read_text())
    cfg = json.loads((d / "config.json").read_text())
    ev = json.loads((d / "evidence.json").read_text()) if (d / "evidence.json").exists() else {}
    ls = load_seconds()
    lines = [
        "# magrpo-edu embedded tiny model", "",
        "A Llama-architecture causal LM pretrained by this project on its own synthetic corpus, shipped inside the",
        "package so every notebook runs offline on a laptop CPU, on Binder and in CI. It is a teaching model: it",
        "writes short template-like posts, summaries, abstracts and helper/main functions, nothing more.", "",
        "## Facts", "",
        f"- parameters: {s['params']:,} ({cfg['num_hidden_layers']} layers, width {cfg['hidden_size']}, {cfg['num_attention_heads']} heads, "
        f"SwiGLU {cfg['intermediate_size']}, tied embeddings, trained on {s['block']}-token rows, {cfg['max_position_embeddings']} positions)",
        f"- tokenizer: byte-level BPE trained with `tokenizers`, {s['vocab_size']} tokens incl. `<|pad|>`, `<|bos|>`, `<|eos|>` (tokenizer.json)",
        f"- corpus: {s['corpus_docs']:,} documents, {s['corpus_tokens']:,} tokens from `magrpo_edu.pretraining.corpus` (seed {s['seed']}); never filtered by a reward",
        f"- pretraining: {s['steps']} steps x {s['batch_size']} x {s['block']} tokens ({s['tokens_seen']:,} tokens seen), AdamW lr {s['lr']} with warm-up and cosine decay",
    ]
    if s.get("anneal_steps"):
        lines.append(f"- then annealing: {s['anneal_steps']} steps at lr {s['anneal_lr']} on batches of 12 documents, {s['anneal_coding_share']:.0%} of them coding documents (`pretrain.anneal`)")
    if s.get("cooldown_steps"):
        lines.append(f"- then cooldown: {s['cooldown_steps']} packed steps, lr {s['cooldown_lr']} decaying linearly to 0, on {s['cooldown_arxiv_share']:.0%} arXiv, "
                     f"{s['cooldown_coding_share']:.0%} coding, {1 - s['cooldown_arxiv_share'] - s['cooldown_coding_share']:.0%} ordinary documents (`pretrain.cooldown`)")
    lines += [
        f"- wall time: {s['wall_s']:.0f} s on {s['device']} ({s['threads']} threads, {s['machine']}, torch {s['torch']})",
        f"- final loss (mean of the last 50 steps): {s['final_loss_mean_last_50']:.3f} nats/token (curve: loss.png, loss.csv; the main steps alone ended at {s.get('final_loss_main_mean_last_50', s['final_loss_mean_last_50']):.3f})",
        f"- size on disk: model.safetensors {round((d / 'model.safetensors').stat().st_size / 1e6, 1)} MB",
        f"- loading: `load_model(\"tiny\")` takes {ls['load_model_s']:.3f} s once transformers is imported; the one-time `import transformers` took {ls['import_transformers_s']:.1f} s here",
        "", "Reproduce (same command, same seed):", "", "```", s["command"], "```", "",
    ]
    if "weights/tiny" not in s["command"]:
        lines += ["The run wrote to a scratch folder and its files were copied here; with `--out weights/tiny`",
                  "the command writes them in place (the output folder does not change the weights).", ""]
    lines += [
        "The low loss says mostly that the corpus is templated; it is a small world on purpose.", "",
    ]
    if ev:
        lines += ["## Evidence that it serves MAGRPO", "",
                  "Two agents = two LoRA adapters (r = 8, q/v projections) on this model, G = 4, lr 2e-3,",
                  "evaluated on held-out rows (the eval split) with the same sampling seed before and after a short MAGRPO run",
                  "(`python experiments/tiny_model_evidence.py`, 2 CPU cores). The TL;DR, arXiv and coding rows were re-run on",
                  "2026-11-23 with the rewards as the authors' code computes them (docs/faithfulness.md); the length reward did",
                  "not change, so its row is the run that shipped the model.", "",
                  "| task | reward | steps | train time | held-out rows x samples | untrained | after MAGRPO |", "|---|---|---|---|---|---|---|"]
        names = {"length": "length ratio (quick demo, max 1)", "tldr": "TL;DR four levels (max 2.98)", "arxiv": "arXiv four levels (max 3)", "coding": "coding levels (max 4), held-out families"}
        for task, r in ev.items():
            lines.append(f"| {task} | {names.get(task, task)} | {r['steps']} | {r['train_seconds']:.0f} s | {r['eval_rows']} x {r.get('eval_generations', 4)} | "
                         f"{r['before']['eval/reward']:.3f} | {r['after']['eval/reward']:.3f} |")
        lines += ["", "Held-out reward along the way (step: reward; 20 rows x 4 samples, the same rows and sampling seed at",
                  "every point; coding's before/after in the table use all 28 rows x 16 samples, see the script):", ""]
        for task, r in ev.items():
            if r.get("trajectory"):
                lines.append(f"- {task}: " + ", ".join(f"{s}: {v:.3f}" for s, v in r["trajectory"]))
        lines += ["", "MAGRPO here has no KL term and a high LoRA learning rate (2e-3): runs peak and can then drift. An",
                  "earlier 250-step TL;DR run of the same setting rose like the one above and then fell back to 1.183 at",
                  "step 250 (agent 2 degenerates into repeated rare words that game the vocabulary level); the 150-step",
                  "length was chosen from that earlier run's training curve and kept since."]
        for task, r in ev.items():
            peak_step, peak = _peak(r)
            if peak - r["after"]["eval/reward"] > 0.05:
                lines.append(f"In this run {task} peaked at step {peak_step} ({peak:.3f}) and ended at {r['after']['eval/reward']:.3f}.")
        lines.append("")
        for task, r in ev.items():
            comps = sorted(k for k in r["after"] if k.startswith("eval/reward/"))
            if comps:
                lines.append(f"{task} components, untrained -> trained: " + ", ".join(
                    f"{k.split('/')[-1]} {r['before'][k]:.2f} -> {r['after'][k]:.2f}" for k in comps))
                lines.append("")
        for task, r in ev.items():
            lines += [f"### Samples: {task}", "", "Agent 1's prompt:", "", "```", r["prompt_agent_1"], "```", ""]
            for when in ("before", "after"):
                for i, comp in enumerate(r[f"samples_{when}"]):
                    lines.append(f"- {when}, agent {i + 1}: `{comp[0][:300].strip()}`")
            lines.append("")
        if "arxiv" in ev and ev["arxiv"]["after"]["eval/reward"] == 0:
            lines += ["Honest limitation: the arXiv reward stayed 0 (its first level asks for 128-256 words from EACH agent),",
                      "so MAGRPO got no signal on that task.", ""]
        if "coding" in ev and ev["coding"]["after"].get("eval/reward/main_defined", 1) < 0.1:
            lines += ["Honest limitation: on the held-out families (never in the corpus) the model almost never writes the",
                      "entry point (main_defined above), so the pair earns little more than the aux level (0.4) and MAGRPO",
                      "has little variation in the group to learn from. On the training families MAGRPO does raise the",
                      "reward (notebooks 04 and 05); unseen functions need a real code model (on a GPU) or a model like",
                      "the attempts below.", ""]
        if "coding" in ev and ev["coding"]["after"].get("eval/reward/not_thin_wrapper", 1) < 0.05:
            lines += ["Coding and the thin-wrapper rule: by the authors' rule any one-line `return ...` that mentions aux is",
                      "a thin wrapper, and this model's corpus teaches exactly such mains (`return sum(1 for c in s if",
                      "aux(c))`), so its answers almost never earn the +1.0 not-a-wrapper bonus (not_thin_wrapper above).",
                      "Under the narrower rule this project used before 2026-11-23 that bonus was most of the held-out gain",
                      "(not_thin_wrapper 0.17 -> 0.29 of 1.0, total 1.202 -> 1.433).", ""]
        for task, r in ev.items():
            gain = r["after"]["eval/reward"] - r["before"]["eval/reward"]
            if gain < -0.05:
                peak_step, peak = _peak(r)
                lines += [f"Honest limitation: on {task} the held-out reward FELL in this run, {r['before']['eval/reward']:.3f} -> "
                          f"{r['after']['eval/reward']:.3f} (best {peak:.3f} at step {peak_step}): the agents drifted away from texts",
                          "the reward's first level accepts (see the components above), with no KL term to hold them.", ""]
            elif gain < 0.1:
                lines += [f"Honest limitation: on {task} this run moved the held-out reward by only {gain:+.3f}, within what a",
                          "different seed or sample can change; the task's training reward and components are the better guide.", ""]
    else:
        lines += ["## Evidence", "", "Not yet run: `python experiments/tiny_model_evidence.py`.", ""]
    lines += HISTORY
    text = "\n".join(lines)
    (d / "README.md").write_text(text)
    return text


if __name__ == "__main__":
    print(write_card())
