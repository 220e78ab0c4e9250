"""The paper's prompt-level baselines (the paper's section on baselines: single model, parallel, sequential, discussion) and one evaluation table for all methods.

    single      writing: one model writes both parts, separated by a marker ("###"), split
                afterwards; coding: one model writes only the entry point, scored as the authors'
                single-agent baseline (no aux, no cooperation credit: max 2.1 of the 4.0)
    parallel    both agents answer their own prompt independently; the parts are scored together
    sequential  agent 2 sees agent 1's answer before writing its own
    discussion  round 1 parallel, then each agent sees the other's round-1 answer and rewrites;
                round 2 is scored
    magrpo      the parallel protocol with MAGRPO-trained agents
    magrpo_2turn  tasks with a transition (coding: level feedback): turn 1 parallel, then each
                agent gets the transition's next prompt for its joint attempt and answers again;
                turn 2 is scored

Every method takes a `Task` (tasks/task.py), which says how it is done for that task: the single
model's prompt and how its answer splits into parts, how joint answers are scored (one at a time,
or in a batch: coding's sandbox), which columns the task adds (coding: PassOrNot@k) and its
transition. With n > 2 agents, "sequential" shows agent k the answers of agents 1..k-1 and
"discussion" shows each agent the others' round-1 answers.

All use the same agents (untrained, except "magrpo") and the same per-agent prompts. Wall time is
counted as the paper does: agents that run in parallel are timed as concurrent (the slower one
counts), agents that wait for each other are summed. Every method generates one joint answer per
(row, sample) with the same sampling settings and seed.

Where we deviate from the paper: its single-model baseline is a LARGER model (Qwen3-4B for writing,
Qwen2.5-Coder-7B for coding) than its agents; here "single" is the agents' own base model (agent
1), so it measures the protocol, not a bigger model. "normalised" divides by the task's maximum
(`Task.max_reward`), also for "single" where the task scores it apart (`Task.single_agent_max`, coding's: no aux,
no cooperation credit).
"""
from __future__ import annotations

import time
from typing import Callable, Optional, Sequence, Union

import torch

from ..agents import Agent, has_reference, team_backend
from ..algorithm import call_transition, format_prompts
from ..backends import Completions, sampling_kwargs
from ..config import MAGRPOConfig
from ..quality import mean_repetition, naturalness, token_nll
from ..tasks.prompts import with_other
from ..tasks.registry import Task, get_task
from ..rng import seeded

METHODS = ("single", "parallel", "sequential", "discussion", "magrpo", "magrpo_2turn")


def untrained_methods(task: Task) -> tuple[str, ...]:
    """The baselines a comparison table runs with the untrained agents ("single" only where the task
    has a single-model prompt)."""
    return tuple(m for m in ("single", "parallel", "sequential", "discussion") if m != "single" or task.single_prompt)


def _gen(agent: Agent, prompts: list[str], gen: dict) -> tuple[list[str], int, float, Completions]:
    """One completion per prompt (G = 1 here: rows are already repeated); returns texts, tokens,
    seconds, and the Completions themselves (token ids, for the naturalness metric)."""
    t = time.perf_counter()
    (c,) = team_backend([agent]).sample([agent], [prompts], 1, gen)
    return c.texts, int(c.lengths().sum()), time.perf_counter() - t, c


def _gen_rows(agent: Agent, prompts: list[str], gen: dict, per_call: Optional[int]) -> tuple[list[str], int, float, list]:
    """`_gen` over all `prompts` at once (per_call None), or `per_call` prompts a call (one held-out row's
    samples, as `MAGRPOTrainer.evaluate` generates them): texts, tokens, seconds (summed over the calls)
    and the Completions of each call."""
    if per_call is None:
        texts, tokens, seconds, c = _gen(agent, prompts, gen)
        return texts, tokens, seconds, [c]
    texts, tokens, seconds, comps = [], 0, 0.0, []
    for i in range(0, len(prompts), per_call):
        t, n, s, c = _gen(agent, prompts[i:i + per_call], gen)
        texts += t
        tokens, seconds = tokens + n, seconds + s
        comps.append(c)
    return texts, tokens, seconds, comps


def _naturalness(agent, comps: Optional[Sequence[Optional[Completions]]]) -> Optional[float]:
    """`quality.naturalness` of the scored completions (one Completions per generate call), or None
    without them or without a reference."""
    comps = [c for c in (comps or ()) if c is not None]
    if not comps or not has_reference(agent):
        return None
    if len(comps) == 1:
        return naturalness(agent, comps[0])
    return torch.cat([token_nll(agent, c) for c in comps]).mean().item()


def _shown_others(formatter: Callable, row: dict, prompt: str, others: Sequence[str]) -> str:
    """`prompt` with the other agents' answers shown first (one line each): the formatter's own way
    when it has one (the writing formatters put it inside the chat message), else `prompts.with_other`."""
    other = "\n".join(o.strip() for o in others)
    own = getattr(formatter, "with_other", None)
    return own(row, other) if own is not None else with_other(prompt, other)


def run_method(method: str, agents: Sequence[Agent], task: Union[Task, str], rows: Sequence[dict],
               formatters: Optional[Sequence[Callable]] = None, samples: int = 2, max_new_tokens: Optional[int] = None,
               temperature: Optional[float] = None, top_p: Optional[float] = None, top_k: Optional[int] = None,
               seed: Optional[int] = None,
               ks: Sequence[int] = (1, 5, 10), keep_texts: bool = False, row_by_row: bool = False,
               config: Optional[MAGRPOConfig] = None) -> dict:
    """Evaluate one method on `rows` of `task` (a Task or a registered task's name); returns one
    table row (means over rows x samples). `formatters`: the agents' prompts (default: the task's
    for agent 1's tokenizer); `max_new_tokens`: default the task's; `temperature`, `top_p`, `top_k`: default the
    task's sampling (`Task.sampling_settings`: MAGRPOConfig's plain < the task's; the coding tasks sample as the
    authors' code does, the writing tasks plainly). A model's recipe may change a run's sampling: to evaluate as a
    run trains, pass its config (`config=`, e.g. `config_for(task, model=...)`): its max_new_tokens, temperature,
    top_p, top_k and seed, as `magrpo-edu train` and `eval` do (a value given on its own still wins).

    The task scores the joint answers (`Task.score`: its levels one joint answer at a time, or a
    batch at once) and may add columns (`Task.table_metrics`, coding: PassOrNot@k and Accuracy@k for
    k in `ks` (k <= samples), cooperation, syntax and structure rates).

    Text quality of the scored answers (`magrpo_edu.quality`), per agent part k: repetition<k>
    (share of repeated word 3-grams) and naturalness<k> (mean per-token NLL under the agent's frozen
    untrained model; an agent without a reference gets none). "single" has one completion for all
    parts: its naturalness is that whole answer's, in every column.
    magrpo_2turn also reports the first turn of the same joint actions: "first_turn_reward" and the share of
    empty answers per agent in each turn ("empty_first", "empty_second"; with `keep_texts`, "first_turn_texts").
    `keep_texts=True` adds "texts": the scored parts, one list per joint answer, row-major (row k's
    samples at k * samples ... k * samples + samples - 1), to read next to the numbers, and
    "pair_rewards", each joint answer's reward.
    `row_by_row=True` generates one row's `samples` answers per call (other samples, the same
    distribution), as `MAGRPOTrainer.evaluate` does, so that "seconds" compares with a row built from
    an evaluation (`row_from_evaluation`); the default generates all rows at once."""
    task = task if isinstance(task, Task) else get_task(task)
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {METHODS}.")
    if method == "single" and task.single_prompt is None:
        raise ValueError(f"the {task.name} task has no single-model prompt (Task.single_prompt); leave 'single' out.")
    if method == "magrpo_2turn" and task.transition is None:
        raise ValueError(f"magrpo_2turn answers again after the task's transition, and the {task.name} task has none.")
    n_agents = task.num_agents
    if len(agents) != n_agents:
        raise ValueError(f"the {task.name} task has {n_agents} agents; got {len(agents)}.")
    if formatters is None:
        formatters = task.formatters(getattr(agents[0], "tokenizer", None))
    if config is not None:  # the run's sampling and seed, where not given on their own
        max_new_tokens = config.max_new_tokens if max_new_tokens is None else max_new_tokens
        temperature, top_p = (config.temperature if temperature is None else temperature,
                              config.top_p if top_p is None else top_p)
        top_k = config.top_k if top_k is None else top_k
        seed = config.seed if seed is None else seed
    seed = 0 if seed is None else seed
    gen = sampling_kwargs(task.max_new_tokens if max_new_tokens is None else max_new_tokens,
                          **task.sampling_settings(temperature=temperature, top_p=top_p, top_k=top_k))
    per_call = samples if row_by_row else None
    reps = [r for r in rows for _ in range(samples)]
    per_rep = [format_prompts(formatters, r, f"row {i // samples}") for i, r in enumerate(reps)]  # step 1, checked
    prompts = [[p[k] for p in per_rep] for k in range(len(formatters))]
    with seeded(seed):
        if method == "single":
            tok = getattr(agents[0], "tokenizer", None)
            both, tokens, wall, c = _gen_rows(agents[0], [task.single_prompt(r, tok) for r in reps], gen, per_call)
            parts = [task.split_single(b) for b in both]
            answers = [[p[k] for p in parts] for k in range(n_agents)]
            comps = [c] * n_agents
        else:
            answers, comps, tokens, wall = [], [], 0, 0.0
            for k in range(n_agents):
                shown = prompts[k]
                if method == "sequential" and k > 0:  # agent k waits for agents 1..k-1
                    shown = [_shown_others(formatters[k], r, p, others)
                             for r, p, *others in zip(reps, prompts[k], *answers)]
                a, n, t, c = _gen_rows(agents[k], shown, gen, per_call)
                answers.append(a)
                comps.append(c)
                tokens += n
                wall = wall + t if method == "sequential" else max(wall, t)
            if method == "magrpo_2turn":
                first_answers = [list(a) for a in answers]  # scored beside the second turn (`_table_row`)
                step = task.transition_for(getattr(agents[0], "tokenizer", None))
                nxt = [call_transition(step, [p[i] for p in prompts], [a[i] for a in answers],
                                       [[(p[i], a[i])] for p, a in zip(prompts, answers)], r) for i, r in enumerate(reps)]
                tokens, wall = _round(agents, [[x[k] for x in nxt] for k in range(n_agents)], gen, answers, comps, tokens,
                                      wall, per_call)
            if method == "discussion":  # round 2: each agent sees the others' round-1 answers and rewrites
                round2 = [[_shown_others(formatters[k], r, p, [answers[j][i] for j in range(n_agents) if j != k])
                           for i, (r, p) in enumerate(zip(reps, prompts[k]))] for k in range(n_agents)]
                tokens, wall = _round(agents, round2, gen, answers, comps, tokens, wall, per_call)
    nat = [_naturalness(agents[0] if method == "single" else agents[k], c) for k, c in enumerate(comps)]
    return _table_row(method, task, rows, samples, answers, tokens, wall, nat, ks, keep_texts,
                      first_answers if method == "magrpo_2turn" else None)


def _table_row(method: str, task: Task, rows: Sequence[dict], samples: int, answers: Sequence[Sequence[str]],
               tokens: int, wall: float, nat: Sequence[Optional[float]], ks: Sequence[int], keep_texts: bool,
               first_answers: Optional[Sequence[Sequence[str]]] = None) -> dict:
    """One table row from the scored answers (answers[k]: agent k's part of every joint answer, row-major,
    `samples` per row), the tokens and generation seconds they took, and each part's naturalness."""
    reps = [r for r in rows for _ in range(samples)]
    lv = task.score(answers, reps, single=method == "single")
    n = len(lv)
    out = dict(method=method, reward=sum(v["total"] for v in lv) / n)
    out["normalised"] = out["reward"] / task.max_reward
    for k in lv[0]:
        if k != "total":
            out[k] = sum(v[k] for v in lv) / n
    for k, a in enumerate(answers, start=1):
        out[f"len{k}_chars"] = sum(map(len, a)) / n
    out.update(char_ratio=char_ratio(answers[0], answers[1]), tokens=tokens / n, seconds=wall / n, samples=n)
    for k, a in enumerate(answers, start=1):
        out[f"repetition{k}"] = mean_repetition(a)
    for k, v in enumerate(nat, start=1):
        if v is not None:
            out[f"naturalness{k}"] = v
    if first_answers is not None:  # magrpo_2turn: the same joint actions' first turn, scored alike (the feedback ran them)
        lv1 = task.score(first_answers, reps)
        out["first_turn_reward"] = sum(v["total"] for v in lv1) / n
        out["empty_first"] = [sum(not t.strip() for t in a) / n for a in first_answers]
        out["empty_second"] = [sum(not t.strip() for t in a) / n for a in answers]
    if keep_texts:
        out["texts"] = [list(joint) for joint in zip(*answers)]
        out["pair_rewards"] = [v["total"] for v in lv]
        if first_answers is not None:
            out["first_turn_texts"] = [list(joint) for joint in zip(*first_answers)]
            out["first_turn_pair_rewards"] = [v["total"] for v in lv1]
    if task.table_metrics is not None:
        out.update(task.table_metrics([lv[i * samples:(i + 1) * samples] for i in range(len(rows))], ks))
    return out


def char_ratio(first: Sequence[str], second: Sequence[str]) -> Optional[float]:
    """Mean of chars(second) / chars(first) over the joint answers whose first part is not empty; None
    when every first part is empty (a ratio to nothing is no number: the single coding baseline has
    no aux).

    >>> char_ratio(["ab", "", "abcd"], ["abcd", "xyz", "ab"])
    1.25
    >>> char_ratio(["", ""], ["def f(): ...", "x"]) is None
    True
    """
    ratios = [len(y) / len(x) for x, y in zip(first, second) if len(x)]
    return sum(ratios) / len(ratios) if ratios else None


def row_from_evaluation(method: str, task: Union[Task, str], rows: Sequence[dict], metrics: dict, samples: dict,
                        agent_names: Sequence[str], ks: Sequence[int] = (1, 5, 10), keep_texts: bool = False) -> dict:
    """A table row (as `run_method`'s) from the samples of a trainer evaluation
    (`MAGRPOTrainer.evaluate(..., return_samples=True)` -> (metrics, samples)) on `rows`: the parallel
    protocol's joint answers, scored as the table scores them, so the row's reward IS the evaluation's
    eval/reward (one figure for one quantity). Naturalness is the evaluation's (the same completions);
    seconds is its generation time (one row's samples per call, the agents together)."""
    task = task if isinstance(task, Task) else get_task(task)
    per_row = samples["per_row"]
    if samples["rows"] != len(rows) or any(len(t) != len(rows) * per_row for t in samples["texts"]):
        raise ValueError(f"the evaluation's samples are of {samples['rows']} rows x {per_row}; the table has {len(rows)} rows.")
    nat = [metrics.get(f"eval/naturalness/{name}") for name in agent_names]
    out = _table_row(method, task, rows, per_row, samples["texts"], samples["tokens"], samples["seconds"], nat,
                     tuple(k for k in ks if k <= per_row), keep_texts)
    out["evaluation"] = True  # the row IS an evaluation (results.md says so beside the table)
    return out


def _round(agents, prompts, gen, answers, comps, tokens, wall, per_call=None):
    """Every agent answers its own new prompts at once (a second turn or a discussion round), replacing
    `answers` and `comps` in place; returns the tokens and wall time so far (the round is timed as
    concurrent: the slowest agent counts)."""
    slowest = 0.0
    for k, (agent, shown) in enumerate(zip(agents, prompts)):
        answers[k], n, t, comps[k] = _gen_rows(agent, shown, gen, per_call)
        tokens, slowest = tokens + n, max(slowest, t)
    return tokens, wall + slowest
