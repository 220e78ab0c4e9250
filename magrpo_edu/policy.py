"""The policy interface, plain: step 2 of Algorithm 1 and the log-prob half of step 6, for ONE agent.

    sample(agent, prompts, G, **gen)              step 2: a^(1..G) ~ pi( . | o) for each prompt o
    logprobs(agent, completions, per_token=False) step 6: sum_t log pi(a_t | o, a_<t) per completion
    Completions, completion_mask                  what step 2 returns; 1 up to and including the first EOS

`agent` is an `agents.Agent` (a model, its tokenizer, and for a LoRA agent its adapter's name; this
module does not import agents.py, which builds on it). Both are the textbook computation, one
`generate` and one forward, and nothing else. The trainer
runs the same two computations through `magrpo_edu.fast_path` (several LoRA agents in one batch,
the prompt computed once for its G samples): `agents.sample_completions` and `agents.team_logprobs`
choose it, and tests/test_policy.py holds the two paths equal (sampled tokens, log-probs and their
gradients). Read this module for what is computed, `fast_path` for how it is made fast.

Where we deviate (from the paper's reference code and TRL; see `algorithm`'s list):
  * Padding and every token after the first EOS are masked out of sum_t log pi (algorithm deviation
    1); the sum is not divided by the completion length (deviation 9).
  * Prompts are never truncated: a prompt whose tokens plus `max_new_tokens` do not fit in the
    model's context (`context_size`: config.max_position_embeddings) raises `PromptTooLongError`
    before `generate` runs, naming the agent, the prompt, its length, max_new_tokens and the context
    size. Cutting from the left would silently drop the instructions that open every prompt, and
    cutting from the right the answer cue; training on either teaches the wrong task.
    `check_prompt_lengths` runs the same check over a whole dataset's prompts, so a run can refuse
    them before its first step.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import torch


@dataclass
class Completions:
    """One agent's sampled completions for a batch of prompts (rows = prompt x sample)."""

    prompt_ids: torch.Tensor  # (B, P) left-padded
    prompt_mask: torch.Tensor  # (B, P)
    completion_ids: torch.Tensor  # (B, C) right-padded
    completion_mask: torch.Tensor  # (B, C) 1 up to and including the first EOS, 0 after
    texts: list[str]  # decoded completions, EOS and padding removed

    def lengths(self) -> torch.Tensor:
        return self.completion_mask.sum(-1)


def completion_mask(completion_ids: torch.Tensor, eos_token_id: int | Sequence[int] | None) -> torch.Tensor:
    """1 for every token up to and including the first EOS, 0 after it (padding, or anything else).

    >>> completion_mask(torch.tensor([[5, 2, 0, 0], [5, 6, 7, 8]]), eos_token_id=2).tolist()
    [[1, 1, 0, 0], [1, 1, 1, 1]]
    """
    if eos_token_id is None:
        return torch.ones_like(completion_ids)
    eos_ids = torch.tensor([eos_token_id] if isinstance(eos_token_id, int) else list(eos_token_id),
                           device=completion_ids.device)
    is_eos = torch.isin(completion_ids, eos_ids).long()
    eos_before = torch.cumsum(is_eos, dim=-1) - is_eos  # EOS strictly before position t
    return (eos_before == 0).long()


def sample(agent, prompts: Sequence[str], G: int, **gen) -> Completions:
    """Step 2 of Algorithm 1: G completions a^(1..G) ~ pi( . | o) of each prompt o.

    Rows are prompt-major (row = prompt_index * G + g). `gen` are generate's sampling settings
    (max_new_tokens, temperature, top_p, top_k, ...; `sampling_settings(config)` gives a config's).
    """
    rows = [p for p in prompts for _ in range(G)]  # each prompt G times
    enc = agent.tokenizer(rows, return_tensors="pt", padding=True)  # left-padded (models.prepare_tokenizer)
    check_fit(agent.model, agent.tokenizer, enc["attention_mask"].sum(-1).tolist(), rows,
              max_new_tokens_of(agent.model, gen), [agent.name] * len(rows))
    ids, mask = enc["input_ids"].to(agent.device), enc["attention_mask"].to(agent.device)
    with torch.inference_mode():
        out = agent.model.generate(input_ids=ids, attention_mask=mask, do_sample=True,
                                   pad_token_id=agent.tokenizer.pad_token_id, **gen, **agent.forward_kwargs(len(rows)))
    return completions_from(agent, ids, mask, out[:, ids.shape[1]:])  # the tokens after the prompt


def logprobs(agent, completions: Completions, per_token: bool = False) -> torch.Tensor:
    """Step 6's sum_t log pi(a_t | o, a_<t) for each completion, (B,): the sum of the token log-probs
    of the completion, padding and post-EOS tokens masked. per_token=True: the (B, C) terms, 0 at
    masked positions, instead of their sums. Differentiable: the loss backpropagates through it."""
    route = agent.forward_kwargs(completions.completion_ids.shape[0])  # a LoRA agent: its own adapter
    return model_logprobs(agent.model, completions, per_token, **route)


def model_logprobs(model, c: Completions, per_token: bool = False, **route) -> torch.Tensor:
    """`logprobs` under any causal LM `model` (`route`: extra forward kwargs, e.g. peft's
    adapter_names=): one forward over [prompt; completion], log_softmax, the completion tokens' terms."""
    ids = torch.cat([c.prompt_ids, c.completion_ids], dim=1)
    attn = torch.cat([c.prompt_mask, c.completion_mask.to(c.prompt_mask.dtype)], dim=1)
    pos = (attn.cumsum(-1) - 1).clamp(min=0)  # as generate counts them: left padding does not shift positions
    logits = model(input_ids=ids, attention_mask=attn, position_ids=pos, use_cache=False, **route).logits
    P = c.prompt_ids.shape[1]
    logits = logits[:, P - 1:-1]  # the logits at position t predict token t + 1: one per completion token
    logp = torch.log_softmax(logits.float(), dim=-1).gather(-1, c.completion_ids.unsqueeze(-1)).squeeze(-1)
    logp = logp * c.completion_mask  # padding and everything after the first EOS: 0
    return logp if per_token else logp.sum(-1)


# --------------------------------------------------------------------------------------------------
# Helpers of both paths: sampling settings, EOS, the Completions of generated tokens
# --------------------------------------------------------------------------------------------------
def sampling_settings(config) -> dict:
    """The four sampling settings of a `MAGRPOConfig`, as generate kwargs: what step 2 samples with."""
    return dict(max_new_tokens=config.max_new_tokens, temperature=config.temperature, top_p=config.top_p,
                top_k=config.top_k)


def generation_settings(gen: dict, agent) -> dict:
    """The sampling settings `gen`, with the agent's own overrides (`Agent.generation_kwargs`) on top."""
    out = dict(gen)
    out.update(agent.generation_kwargs)
    return out


def eos_token_ids(agent):
    """The token id(s) that end a completion: the model's generation config's, else the tokenizer's."""
    gen_eos = getattr(getattr(agent.model, "generation_config", None), "eos_token_id", None)
    return gen_eos if gen_eos is not None else agent.tokenizer.eos_token_id


def completions_from(agent, ids, mask, comp) -> Completions:
    """`Completions` of generated tokens `comp` after prompts (ids, mask): masked after the first EOS,
    the masked positions set to padding, and decoded."""
    cmask = completion_mask(comp, eos_token_ids(agent))
    comp = comp.masked_fill(cmask == 0, agent.tokenizer.pad_token_id)
    texts = agent.tokenizer.batch_decode(comp, skip_special_tokens=True)
    return Completions(ids.clone(), mask.clone(), comp.clone(), cmask, texts)


# --------------------------------------------------------------------------------------------------
# Prompts that do not fit in the context (never truncated)
# --------------------------------------------------------------------------------------------------
class PromptTooLongError(ValueError):
    """A prompt's tokens plus max_new_tokens do not fit in the model's context (prompts are never truncated)."""


def context_size(model, tokenizer=None) -> Optional[int]:
    """The most positions the model takes (prompt + completion): its config's max_position_embeddings
    (n_positions for GPT-2-style configs), else the tokenizer's model_max_length when it is a real
    limit; None when neither says."""
    cfg = getattr(model, "config", None)
    n = getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None)
    if not n and tokenizer is not None:
        m = getattr(tokenizer, "model_max_length", None)
        n = m if isinstance(m, int) and m < 10**6 else None  # transformers' "no limit" is a huge sentinel
    return int(n) if n else None


def max_new_tokens_of(model, gen: dict) -> int:
    """The completion length `generate` will use: gen's max_new_tokens, else the model's default."""
    m = gen.get("max_new_tokens")
    if m is None:
        m = getattr(getattr(model, "generation_config", None), "max_new_tokens", None)
    return int(m or 0)


def check_fit(model, tokenizer, lengths: Sequence[int], prompts: Sequence[str], max_new_tokens: int,
              names: Optional[Sequence[str]] = None) -> None:
    """Raise PromptTooLongError when some prompt's `lengths[r]` + max_new_tokens exceeds the context
    (`names[r]`, when given, names row r's agent)."""
    ctx = context_size(model, tokenizer)
    if ctx is None:
        return
    bad = [r for r, n in enumerate(lengths) if n + max_new_tokens > ctx]
    if not bad:
        return
    r = max(bad, key=lambda j: lengths[j])
    who = f"agent {names[r]!r}: " if names is not None else ""
    n = int(lengths[r])
    over = (f"is longer than the context by itself, by {n - ctx} tokens: no max_new_tokens can make it fit" if n >= ctx
            else f"leaves {ctx - n} positions for max_new_tokens={max_new_tokens}")
    raise PromptTooLongError(
        f"{who}{len(set(prompts[j] for j in bad))} prompt(s) do not fit in the model's context of {ctx} tokens; the "
        f"longest is {n} tokens and {over} (it needs {n + max_new_tokens} = {n} + max_new_tokens {max_new_tokens}). "
        f"It begins {prompts[r][:80]!r}. Prompts are not truncated (that would drop their instructions): shorten or "
        "drop those rows, lower max_new_tokens, or use a model with a longer context.")


def check_prompt_lengths(agent, prompts: Sequence[str], max_new_tokens: int) -> None:
    """Raise PromptTooLongError (see `check_fit`) when any of `prompts`, tokenised as sampling does,
    plus `max_new_tokens` exceeds the agent's model context: call it on a dataset's prompts before
    training so a run does not stop at the step that first meets a long row."""
    prompts = list(prompts)
    if not prompts:
        return
    lengths = [len(ids) for ids in agent.tokenizer(prompts)["input_ids"]]
    check_fit(agent.model, agent.tokenizer, lengths, prompts, max_new_tokens, [agent.name] * len(prompts))
