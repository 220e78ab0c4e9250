"""The plain backend of steps 2 and 6: what a backend computes, one agent at a time, nothing shared.

    sample(agent, prompts, G, **gen)                one `generate` over the prompts, each G times (step 2)
    logprobs(agent, completions, per_token=False)   one forward over [prompt; completion] (step 6)
    reference_logprobs(agent, completions, T)       the same under the frozen reference pi_ref
    PlainBackend()                                  those three for a team (`common.Backend`)

Read these to see what is computed; pass `backend=PlainBackend()` to a team builder to train with them.
`fast.FastBackend` (the builders' default) computes the same numbers faster (tests/test_backends.py).

`agent` is an `agents.Agent` (a model, its tokenizer, and for a LoRA agent its adapter's name; this
package does not import agents.py, which builds on it).

Where we deviate (from the paper's reference code and TRL; see `algorithm`'s list):
  * Padding and every token after the first EOS are masked out of sum_t log pi (algorithm deviation
    1); the sum is not divided by the completion length (deviation 9).
  * The log-probs are the sampler's, top-k and top-p included; TRL divides by the temperature only
    (deviation 12).
  * Prompts are never truncated: a prompt whose tokens plus `max_new_tokens` do not fit in the
    model's context (`context_size`: config.max_position_embeddings) raises `PromptTooLongError`
    before `generate` runs, naming the agent, the prompt, its length, max_new_tokens and the context
    size. Cutting from the left would silently drop the instructions that open every prompt, and
    cutting from the right the answer cue; training on either teaches the wrong task.
    `check_prompt_lengths` (common.py) is that check, the only one: both backends run it on every prompt
    they sample (every turn's, in a multi-turn tree), and the trainer on the first prompt when it is
    built; run it over a whole dataset's prompts to refuse them before the first step.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import torch

from .common import (Completions, check_prompt_lengths, checkpointed_layers, completions_from, generation_settings,
                     max_new_tokens_of, reference_model, sampled_token_logprobs, sampler_settings)


def sample(agent, prompts: Sequence[str], G: int, **gen) -> Completions:
    """Step 2 of Algorithm 1: G completions a^(1..G) ~ pi( . | o) of each prompt o.

    Rows are prompt-major (row = prompt_index * G + g). `gen` are generate's sampling settings
    (max_new_tokens, temperature, top_p, top_k, ...; `sampling_settings(config)` gives a config's).
    """
    check_prompt_lengths(agent, prompts, max_new_tokens_of(agent.model, gen))  # never truncated: refused
    rows = [p for p in prompts for _ in range(G)]  # each prompt G times
    enc = agent.tokenizer(rows, return_tensors="pt", padding=True)  # left-padded (models.prepare_tokenizer)
    ids, mask = enc["input_ids"].to(agent.device), enc["attention_mask"].to(agent.device)
    with torch.inference_mode():
        out = agent.model.generate(input_ids=ids, attention_mask=mask, do_sample=True,
                                   pad_token_id=agent.tokenizer.pad_token_id, **gen, **agent.forward_kwargs(len(rows)))
    sampling = sampler_settings(agent.model, gen)  # what generate samples with: step 6 scores the tokens so
    return completions_from(agent, ids, mask, out[:, ids.shape[1]:], sampling)  # the tokens after the prompt


def logprobs(agent, completions: Completions, per_token: bool = False) -> torch.Tensor:
    """Step 6's sum_t log pi(a_t | o, a_<t) for each completion, (B,): the sum of the token log-probs
    of the completion, padding and post-EOS tokens masked. per_token=True: the (B, C) terms, 0 at
    masked positions, instead of their sums. Differentiable: the loss backpropagates through it.

    pi is the distribution step 2 drew the tokens from: the model's logits through the warpers of
    `completions.sampling` (temperature, top-k, top-p), so the loss is the policy gradient of the
    sampler itself (`sampled_token_logprobs`)."""
    route = agent.forward_kwargs(completions.completion_ids.shape[0])  # a LoRA agent: its own adapter
    return model_logprobs(agent.model, completions, per_token, **route)


def model_logprobs(model, c: Completions, per_token: bool = False, sampling: Optional[dict] = None,
                   **route) -> torch.Tensor:
    """`logprobs` under any causal LM `model` (`route`: extra forward kwargs, e.g. peft's
    adapter_names=): one forward over [prompt; completion], the warpers, log_softmax, the completion
    tokens' terms. `sampling` (temperature, top_k, top_p) overrides `c.sampling`, the settings the
    tokens were drawn with; {} scores them under the raw softmax."""
    ids = torch.cat([c.prompt_ids, c.completion_ids], dim=1)
    attn = torch.cat([c.prompt_mask, c.completion_mask.to(c.prompt_mask.dtype)], dim=1)
    pos = (attn.cumsum(-1) - 1).clamp(min=0)  # as generate counts them: left padding does not shift positions
    with checkpointed_layers(model) as checkpointing:
        if checkpointing and route.get("adapter_names") is not None:
            raise NotImplementedError(
                "activation checkpointing with LoRA agents that share a base needs the fast backend (the team "
                "builders' default): peft routes rows to adapters only during the forward call, and the backward "
                "pass would recompute the layers through the wrong adapter. Build the agents without "
                "backend=PlainBackend(), or switch checkpointing off.")
        logits = model(input_ids=ids, attention_mask=attn, position_ids=pos, use_cache=False, **route).logits
    P = c.prompt_ids.shape[1]
    logits = logits[:, P - 1:-1]  # the logits at position t predict token t + 1: one per completion token
    logp = sampled_token_logprobs(logits, c.completion_ids, c.sampling if sampling is None else sampling)
    logp = logp * c.completion_mask  # padding and everything after the first EOS: 0
    return logp if per_token else logp.sum(-1)


@torch.no_grad()
def reference_logprobs(agent, completions: Completions, temperature: float = 1.0) -> torch.Tensor:
    """log pi_ref(a_t | o, a_<t) per row and completion token, (B, C), masked positions 0, no gradient:
    `logprobs` under the agent's frozen untrained model (`reference_model`).

    pi_ref is the reference model's softmax at `temperature` (transformers' TemperatureLogitsWarper),
    never truncated by top-k / top-p. The KL leash passes the temperature the completions were
    sampled at (`algorithm.agent_losses`), as TRL does: at the first step pi = pi_ref and the KL is 0.
    The naturalness metric keeps temperature 1 (`quality.token_nll`): it is a property of the text
    under the untrained model, comparable between runs sampled at different temperatures. Top-k /
    top-p are left out because a truncated reference gives -inf to every token outside its own kept
    set, and the KL would be infinite as soon as the policy drew one (`algorithm` deviation 11)."""
    model, adapter = reference_model(agent)
    route = {} if adapter is None else {"adapter_names": [adapter] * completions.prompt_ids.shape[0]}
    return model_logprobs(model, completions, per_token=True, sampling={"temperature": temperature}, **route)


@dataclass(frozen=True)
class PlainBackend:
    """The `Backend` of this module: each agent alone, one `generate` (`sample`) and one forward
    (`logprobs`, `reference_logprobs`) per agent, nothing shared. The readable reference; slower than
    `backends.fast.FastBackend`, which computes the same numbers up to float rounding."""

    def sample(self, agents, prompts, num_generations, gen, batch_agents=True):
        return [sample(a, ps, num_generations, **generation_settings(gen, a)) for a, ps in zip(agents, prompts)]

    def logprobs(self, agents, completions, per_token=False):
        return [logprobs(a, c, per_token) for a, c in zip(agents, completions)]

    def reference_logprobs(self, agents, completions, temperature=1.0):
        return [reference_logprobs(a, c, temperature) for a, c in zip(agents, completions)]
