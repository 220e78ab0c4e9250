"""The paper's prompt-level baselines (spec section 6) and one evaluation table for all methods.

    single      writing: one model writes both parts, separated by a marker ("###"), split
                afterwards; coding: one model writes only the entry point, scored as the authors'
                single-agent baseline (no aux, no cooperation credit: max 2.1 of the 4.0)
    parallel    both agents answer their own prompt independently; the parts are scored together
    sequential  agent 2 sees agent 1's answer before writing its own
    discussion  round 1 parallel, then each agent sees the other's round-1 answer and rewrites;
                round 2 is scored
    magrpo      the parallel protocol with MAGRPO-trained agents
    magrpo_2turn  coding only: turn 1 parallel, then each agent gets the level feedback on its
                joint attempt (the multi-turn transition) and answers again; turn 2 is scored

All use the same agents (untrained, except "magrpo") and the same per-agent prompts. Wall time is
counted as the paper does: agents that run in parallel are timed as concurrent (the slower one
counts), agents that wait for each other are summed. Every method generates one joint answer per
(row, sample) with the same sampling settings and seed.

Where we deviate from the paper: its single-model baseline is a LARGER model (Qwen3-4B for writing,
Qwen2.5-Coder-7B for coding) than its agents; here "single" is the agents' own base model (agent
1), so it measures the protocol, not a bigger model. "normalised" divides by the task's maximum
(4.0 for coding, also for "single", whose own maximum is 2.1).
"""
from __future__ import annotations

import time
from typing import Callable, Optional, Sequence

import torch

from .agents import Agent, Completions, has_reference, sample_completions
from .quality import mean_repetition, naturalness
from .tasks.prompts import SINGLE_INSTRUCTIONS, SINGLE_MARKER, chat_prompt, single_prompt, with_other
from .tasks.registry import get_task

METHODS = ("single", "parallel", "sequential", "discussion", "magrpo", "magrpo_2turn")


def untrained_methods(task: str) -> tuple[str, ...]:
    """The baselines a comparison table runs with the untrained agents for a prompt task ("single"
    only where the task has single-model instructions)."""
    return tuple(m for m in ("single", "parallel", "sequential", "discussion") if m != "single" or task in SINGLE_INSTRUCTIONS)


def _sampling(max_new_tokens: int, temperature: float) -> dict:
    """The baselines' sampling settings (generate kwargs): no top-p or top-k cut, as MAGRPOConfig's defaults."""
    return dict(max_new_tokens=max_new_tokens, temperature=temperature, top_p=1.0, top_k=0)


def _gen(agent: Agent, prompts: list[str], gen: dict) -> tuple[list[str], int, float, Completions]:
    """One completion per prompt (G = 1 here: rows are already repeated); returns texts, tokens,
    seconds, and the Completions themselves (token ids, for the naturalness metric)."""
    t = time.perf_counter()
    (c,) = sample_completions([agent], [prompts], 1, gen)
    return c.texts, int(c.lengths().sum()), time.perf_counter() - t, c


def _naturalness(agent, c: Optional[Completions]) -> Optional[float]:
    """`quality.naturalness` of the scored completions, or None without them or without a reference."""
    return naturalness(agent, c) if c is not None and has_reference(agent) else None


def _single_prompt(agent: Agent, task: str, text: str) -> str:
    """The single-model prompt; for a writing task through the agent's chat template when its tokenizer
    has one, as the task's own formatters do (an instruct model given the raw prompt answers nonsense)."""
    tok = getattr(agent, "tokenizer", None)
    if task != "coding" and getattr(tok, "chat_template", None):
        return chat_prompt(tok, f"{SINGLE_INSTRUCTIONS[task]}\n\n{text}")
    return single_prompt(task, text)


def _shown_other(formatter: Callable, row: dict, prompt: str, other: str) -> str:
    """`prompt` with the other agent's answer shown first: the formatter's own way when it has one
    (the writing formatters put it inside the chat message), else `prompts.with_other`."""
    own = getattr(formatter, "with_other", None)
    return own(row, other) if own is not None else with_other(prompt, other)


def run_method(method: str, agents: Sequence[Agent], formatters: Sequence[Callable], rows: Sequence[dict],
               levels_fn: Optional[Callable[[str, str], dict]], task: str, max_reward: float, samples: int = 2,
               max_new_tokens: int = 64, temperature: float = 1.0, seed: int = 0, ks: Sequence[int] = (1, 5, 10),
               keep_texts: bool = False) -> dict:
    """Evaluate one method on `rows`; returns one table row (means over rows x samples).

    Writing tasks score each pair with `levels_fn(c1, c2)`. For task "coding" (levels_fn unused)
    all programs run in the sandbox at once, and the row adds the paper's coding metrics:
    PassOrNot@k and Accuracy@k for k in `ks` (k <= samples), cooperation, syntax and structure rates.

    Text quality of the scored answers (`magrpo_edu.quality`), per agent part: repetition1 /
    repetition2 (share of repeated word 3-grams) and naturalness1 / naturalness2 (mean per-token NLL
    under the agent's frozen untrained model; an agent without a reference gets none). "single" has
    one completion for both parts: its naturalness is that whole answer's, in both columns.
    `keep_texts=True` adds "texts": the scored [part 1, part 2] pairs, row-major (row k's samples
    at k * samples ... k * samples + samples - 1), to read next to the numbers, and "pair_rewards",
    each pair's joint reward."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {METHODS}.")
    if method == "single" and task not in SINGLE_INSTRUCTIONS:
        raise ValueError(f"the single-model baseline has instructions for the {', '.join(SINGLE_INSTRUCTIONS)} prompts, "
                         f"not for {task!r}; add them to magrpo_edu.tasks.prompts.SINGLE_INSTRUCTIONS or leave it out.")
    gen = _sampling(max_new_tokens, temperature)
    field = get_task(task).prompt_field
    reps = [r for r in rows for _ in range(samples)]
    p1 = [formatters[0](r) for r in reps]
    p2 = [formatters[1](r) for r in reps]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if method == "single":
            both, tokens, wall, c1 = _gen(agents[0], [_single_prompt(agents[0], task, r[field]) for r in reps], gen)
            c2 = c1
            if task == "coding":  # one answer: the entry point alone, no aux
                a1, a2 = [""] * len(both), list(both)
            else:
                parts = [(b.split(SINGLE_MARKER, 1) + [""])[:2] for b in both]
                a1, a2 = [p[0].strip() for p in parts], [p[1].strip() for p in parts]
        else:
            a1, n1, t1, c1 = _gen(agents[0], p1, gen)
            if method == "sequential":
                a2, n2, t2, c2 = _gen(agents[1], [_shown_other(formatters[1], r, p, a) for r, p, a in zip(reps, p2, a1)], gen)
                tokens, wall = n1 + n2, t1 + t2
            else:
                a2, n2, t2, c2 = _gen(agents[1], p2, gen)
                tokens, wall = n1 + n2, max(t1, t2)
                if method == "magrpo_2turn":
                    if task != "coding":
                        raise ValueError("magrpo_2turn uses the coding level feedback; it needs task='coding'.")
                    from .rewards.coding import feedback_transition

                    step = feedback_transition()
                    nxt = [step([x1, x2], [y1, y2], [[(x1, y1)], [(x2, y2)]], r) for x1, x2, y1, y2, r in zip(p1, p2, a1, a2, reps)]
                    b1, m1, s1, c1 = _gen(agents[0], [n[0] for n in nxt], gen)
                    b2, m2, s2, c2 = _gen(agents[1], [n[1] for n in nxt], gen)
                    a1, a2, tokens, wall = b1, b2, tokens + m1 + m2, wall + max(s1, s2)
                if method == "discussion":
                    b1, m1, s1, c1 = _gen(agents[0], [_shown_other(formatters[0], r, p, a) for r, p, a in zip(reps, p1, a2)], gen)
                    b2, m2, s2, c2 = _gen(agents[1], [_shown_other(formatters[1], r, p, a) for r, p, a in zip(reps, p2, a1)], gen)
                    a1, a2, tokens, wall = b1, b2, tokens + m1 + m2, wall + max(s1, s2)
    if task == "coding":
        lv = coding_batch_levels(a1, a2, reps, single=method == "single")
    else:
        lv = [levels_fn(x, y) for x, y in zip(a1, a2)]
    n = len(lv)
    out = dict(method=method, reward=sum(v["total"] for v in lv) / n)
    out["normalised"] = out["reward"] / max_reward
    for k in lv[0]:
        if k != "total":
            out[k] = sum(v[k] for v in lv) / n
    out.update(len1_chars=sum(map(len, a1)) / n, len2_chars=sum(map(len, a2)) / n,
               char_ratio=sum(len(y) / max(1, len(x)) for x, y in zip(a1, a2)) / n,
               tokens=tokens / n, seconds=wall / n, samples=n,
               repetition1=mean_repetition(a1), repetition2=mean_repetition(a2))
    for k, (agent, c) in enumerate(((agents[0], c1), (agents[0] if method == "single" else agents[1], c2)), start=1):
        nat = _naturalness(agent, c)
        if nat is not None:
            out[f"naturalness{k}"] = nat
    if keep_texts:
        out["texts"] = [[x, y] for x, y in zip(a1, a2)]
        out["pair_rewards"] = [v["total"] for v in lv]
    if task == "coding":
        out.update(coding_metrics([lv[i * samples:(i + 1) * samples] for i in range(len(rows))], ks))
    return out


def answer_snapshot(agents: Sequence[Agent], formatters: Sequence[Callable], rows: Sequence[dict], reward_fn: Callable,
                    max_new_tokens: int = 48, temperature: float = 1.0, seed: int = 1) -> tuple[list[list[str]], list[float]]:
    """One joint answer per row (the parallel protocol, a fixed sampling seed, the caller's RNG left
    untouched): each row's answers [agent 1, agent 2, ...] and that joint action's reward
    (`reward_fn(completions, row)`, the trainer's contract). Take one before and one after training
    with the same seed and show them side by side with `viz.before_after_report`."""
    from .algorithm import joint_rewards

    gen = _sampling(max_new_tokens, temperature)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        outs = sample_completions(agents, [[f(r) for r in rows] for f in formatters], 1, gen)
    texts = [[o.texts[k] for o in outs] for k in range(len(rows))]
    rewards = [joint_rewards(reward_fn, [[t] for t in tk], row)[0].item() for tk, row in zip(texts, rows)]
    return texts, rewards


def coding_batch_levels(auxes: Sequence[str], mains: Sequence[str], rows: Sequence[dict],
                        single: bool = False) -> list[dict]:
    """Coding levels of many samples (one parallel sandbox batch), with "total" = the reward and
    "total_asserts" = the number of asserts, as this table's metrics read them. `single=True`
    scores `mains` as single-agent answers (auxes ignored, max 2.1)."""
    from .rewards.coding import coding_levels_many

    out = coding_levels_many(auxes, mains, rows, single=single)
    for lv in out:
        lv["total_asserts"] = lv.pop("total")
        lv["total"] = lv.pop("total_reward")
    return out


def coding_metrics(levels_per_problem: Sequence[Sequence[dict]], ks: Sequence[int] = (1, 5, 10)) -> dict:
    """The paper's coding metrics from per-problem lists of sample levels (in sampling order).

    PassOrNot@k: share of problems where one of the first k samples passes ALL asserts.
    Accuracy@k:  mean over problems of the best pass fraction among the first k samples.
    cooperation_rate: share of samples that earn the cooperation bonus (> 0: >= 1 test passed, an
                      aux was extracted, and main calls it).
    syntax_rate: share of samples whose combined program parses.
    structure_rate: share of samples that define the entry point with a return (the paper's
                    structure rate; aux is optional at level 1)."""
    flat = [lv for per in levels_per_problem for lv in per]
    out = {}
    for k in ks:
        if all(len(per) >= k for per in levels_per_problem):
            out[f"pass_or_not@{k}"] = sum(any(lv["total_asserts"] and lv["passed"] == lv["total_asserts"] for lv in per[:k])
                                          for per in levels_per_problem) / len(levels_per_problem)
            out[f"accuracy@{k}"] = sum(max(lv["passed"] / lv["total_asserts"] if lv["total_asserts"] else 0.0 for lv in per[:k])
                                       for per in levels_per_problem) / len(levels_per_problem)
    out["cooperation_rate"] = sum(lv["calls_aux"] > 0 for lv in flat) / len(flat)
    out["syntax_rate"] = sum(lv["syntax"] > 0 for lv in flat) / len(flat)
    out["structure_rate"] = sum(lv["main_defined"] > 0 for lv in flat) / len(flat)
    return out


def compare(agents_untrained, agents_trained, formatters, rows, levels_fn, task: str, max_reward: float, **kw) -> list[dict]:
    """The four baselines on the untrained agents and MAGRPO on the trained ones, one row each.

    Pass `agents_trained=None` to get only the baselines (e.g. before training)."""
    table = [run_method(m, agents_untrained, formatters, rows, levels_fn, task, max_reward, **kw)
             for m in ("single", "parallel", "sequential", "discussion")]
    if agents_trained is not None:
        table.append(run_method("magrpo", agents_trained, formatters, rows, levels_fn, task, max_reward, **kw))
    return table


def markdown_table(table: Sequence[dict]) -> str:
    """The comparison as a markdown table (wall time: parallel agents counted as concurrent)."""
    cols = ["reward", "normalised", "structure", "length_ratio", "uniqueness", "coherence", "consistency",
            "pass_or_not@1", "pass_or_not@5", "pass_or_not@10", "accuracy@1", "accuracy@5", "accuracy@10",
            "tests", "cooperation_rate", "syntax_rate", "structure_rate",
            "repetition1", "repetition2", "naturalness1", "naturalness2",
            "len1_chars", "len2_chars", "char_ratio", "tokens", "seconds"]
    cols = [c for c in cols if c in table[0]]
    head = "| method | " + " | ".join(cols) + " |\n|---|" + "---|" * len(cols) + "\n"
    body = "".join("| " + r["method"] + " | " + " | ".join(f"{r[c]:.3f}" if isinstance(r[c], float) else str(r[c]) for c in cols) + " |\n"
                   for r in table)
    return head + body + ("\nseconds = generation wall time per joint answer; agents that run in parallel are counted as "
                          "concurrent (the slower one), as the paper does; sequential and discussion rounds add up. "
                          "repetition = share of repeated word 3-grams; naturalness = mean per-token NLL under the "
                          "untrained model (lower = more like its language).\n")
