"""The policy of steps 2 and 6, plain: what a policy computes, one agent at a time.

A *policy* here is the team's backend for the two places where Algorithm 1 runs the models: step 2
samples each agent's G responses, step 6 scores them (the token log-probs under pi_i, and, for the
KL leash and the naturalness metric, under the frozen reference pi_ref). Every policy has the same
three methods (`Policy`), over a team of agents:

    policy.sample(agents, prompts, G, gen)               step 2: a_i^(1..G) ~ pi_i( . | o) for each prompt o
    policy.logprobs(agents, completions, per_token)      step 6: sum_t log pi_i(a_t | o, a_<t) per completion
    policy.reference_logprobs(agents, completions, T)    log pi_ref(a_t | o, a_<t) per token, no gradient

Two implementations compute the same numbers; the team builders (`agents.lora_agents`, ...) pick
one when they build the agents (`Agent.policy`), and nothing switches them at call time:

* `PlainPolicy` (this module): the textbook computation, for ONE agent at a time:
      sample(agent, prompts, G, **gen)                one `generate` over the prompts, each G times
      logprobs(agent, completions, per_token=False)   one forward over [prompt; completion]
      reference_logprobs(agent, completions, T)       the same under the frozen reference
  Read these to see what is computed; pass `policy=PlainPolicy()` to a builder to train with them.
* `fast_path.FastPolicy` (the builders' default): the same numbers faster: LoRA agents that share
  one base batched into one generate and one forward, and each prompt computed once for its G
  samples. tests/test_policy.py holds the two equal (sampled tokens, log-probs and gradients).

Also here: `Completions` (what step 2 returns), `completion_mask` (1 up to and including the first
EOS), `sampled_token_logprobs` (log pi: the logits through generate's warpers) and the one context
check, `check_prompt_lengths`.

pi is the distribution `generate` samples from: the model's logits through transformers' own
temperature, top-k and top-p warpers (`logits_warpers`), with the settings step 2 used, which
`sample` records on the Completions (`Completions.sampling`). Step 6 scores every token under that
same distribution, so the loss is the policy gradient of the sampler (algorithm deviation 12). At
temperature 1, top_k 0, top_p 1 no warper runs: log_softmax of the raw logits.

`agent` is an `agents.Agent` (a model, its tokenizer, and for a LoRA agent its adapter's name; this
module does not import agents.py, which builds on it).

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
    `check_prompt_lengths` is that check, the only one: both policies run it on every prompt they
    sample (every turn's, in a multi-turn tree), and the trainer on the first prompt when it is
    built; run it over a whole dataset's prompts to refuse them before the first step.
"""
from __future__ import annotations

import functools
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Optional, Protocol, Sequence

import torch
import torch.utils.checkpoint

from .threads import choose_threads_once


@dataclass
class Completions:
    """One agent's sampled completions for a batch of prompts (rows = prompt x sample)."""

    prompt_ids: torch.Tensor  # (B, P) left-padded
    prompt_mask: torch.Tensor  # (B, P)
    completion_ids: torch.Tensor  # (B, C) right-padded
    completion_mask: torch.Tensor  # (B, C) 1 up to and including the first EOS, 0 after
    texts: list[str]  # decoded completions, EOS and padding removed
    sampling: Optional[dict] = None
    """The temperature, top_k and top_p the tokens were drawn with (`sampler_settings`); step 6 scores
    each token under that distribution (`sampled_token_logprobs`). None: the model's raw softmax
    (completions made by hand, not by `sample`)."""

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
                "activation checkpointing with LoRA agents that share a base needs the fast policy (the team "
                "builders' default): peft routes rows to adapters only during the forward call, and the backward "
                "pass would recompute the layers through the wrong adapter. Build the agents without "
                "policy=PlainPolicy(), or switch checkpointing off.")
        logits = model(input_ids=ids, attention_mask=attn, position_ids=pos, use_cache=False, **route).logits
    P = c.prompt_ids.shape[1]
    logits = logits[:, P - 1:-1]  # the logits at position t predict token t + 1: one per completion token
    logp = sampled_token_logprobs(logits, c.completion_ids, c.sampling if sampling is None else sampling)
    logp = logp * c.completion_mask  # padding and everything after the first EOS: 0
    return logp if per_token else logp.sum(-1)


def checkpointing_layers(model) -> list:
    """The modules of `model` that transformers' activation checkpointing is switched on for
    (`model.activation_checkpointing_enable()`; `gradient_checkpointing_enable()` before transformers
    5): each decoder layer, or the decoder stack in older transformers. Empty when it is off."""
    return [m for m in model.modules() if getattr(m, "gradient_checkpointing", False) is True]


@contextmanager
def checkpointed_layers(model, recompute=None):
    """Activation checkpointing in step 6's forward, although the agents stay in eval mode.

    With checkpointing switched on (`agents.checkpoint_activations`), transformers keeps only each
    decoder layer's input for the backward pass and recomputes the layer's inside there (about one more
    forward; the activations of all layers but one are never held at once): what makes a real model's
    step fit a small machine (notebook 07 on SmolLM2 in float32 under Binder's 2 GB). transformers
    checkpoints a layer only in training mode, but the agents are kept in eval mode (no dropout: the
    log-probs are the sampler's; peft routes a mixed-adapter batch only in eval mode). So, while
    gradients are being recorded, this sets `training` on the checkpointed modules THEMSELVES (not on
    their children: dropout and peft's layers stay in eval mode) and makes their checkpoint function
    non-reentrant (a reentrant one gives no gradient to adapters inside a frozen base); both are
    restored after. `recompute`: a function giving the context the backward pass recomputes each layer
    in (torch.utils.checkpoint's `context_fn`): where a call routes rows to adapters only for its own
    duration (the fast path's `adapter_rows`), the recomputation needs the same routing again. Yields
    whether checkpointing runs. The numbers are the same as without it, up to float rounding
    (tests/test_policy.py)."""
    layers = checkpointing_layers(model) if torch.is_grad_enabled() else []
    saved = [(m, m.training, m.__dict__.get("_gradient_checkpointing_func")) for m in layers]
    kwargs = {"use_reentrant": False}
    if recompute is not None:
        kwargs["context_fn"] = lambda: (nullcontext(), recompute())
    try:
        for m in layers:
            m.training = True
            if getattr(m, "_gradient_checkpointing_func", None) is not None:
                m._gradient_checkpointing_func = functools.partial(torch.utils.checkpoint.checkpoint, **kwargs)
        yield bool(layers)
    finally:
        for m, training, func in saved:
            m.training = training
            if func is None:
                m.__dict__.pop("_gradient_checkpointing_func", None)
            else:
                m._gradient_checkpointing_func = func


def reference_model(agent) -> tuple:
    """The frozen untrained model pi_ref of `agent`, and the peft adapter its rows go through there:
    (model, "__base__") for a LoRA agent, (model, None) for a full model.

      * LoRA agent (`lora_agents`): the shared base with the adapters disabled: the untrained model
        exactly, since every adapter starts at B = 0 and the base never trains. No copy, no extra
        memory; one extra forward. Where `agent.reference_adapter` names a frozen adapter (its warm
        start: `agents.leash_to_adapters`), the rows go through that adapter instead. The rows are routed to peft's "__base__" (no adapter); peft's
        `disable_adapter()` context would do the same forward, but on leaving it re-enables
        gradients for the ACTIVE adapter only, freezing every other agent's adapter.
      * full-model agent (`separate_agents`, `heterogeneous_agents`): `agent.reference`, the frozen
        copy made when the agents were built (before any step).
      * a hand-made `Agent` without adapter and without `reference`: there is none (the model itself
        is only "untrained" until its first step): ValueError."""
    if agent.adapter is not None:
        return agent.model, getattr(agent, "reference_adapter", None) or "__base__"
    if agent.reference is None:
        raise ValueError(f"agent {agent.name} has no frozen reference model: build it with separate_agents / "
                         "heterogeneous_agents (reference=True), or set agent.reference = frozen_copy(model) "
                         "before training.")
    return agent.reference, None


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


# --------------------------------------------------------------------------------------------------
# The policy interface, and its plain implementation
# --------------------------------------------------------------------------------------------------
class Policy(Protocol):
    """What every policy does for a team of agents (agents[i] gets prompts[i], completions[i]):
    steps 2 and 6 of Algorithm 1. `PlainPolicy` below and `fast_path.FastPolicy` implement it."""

    def sample(self, agents: Sequence, prompts: Sequence[Sequence[str]], num_generations: int, gen: dict,
               batch_agents: bool = True) -> list[Completions]:
        """Step 2: agent i samples G = num_generations completions of each of its prompts `prompts[i]`
        (one per tree node; one in a single-turn step), rows prompt-major (row = prompt_index * G + g),
        with the sampling settings `gen` (generate kwargs: max_new_tokens, temperature, top_p, top_k;
        `sampling_settings(config)`) and each agent's own `generation_kwargs` on top. Every prompt is
        checked first (`check_prompt_lengths`): one that does not fit raises PromptTooLongError before
        it is sampled. batch_agents=False asks for one generate call per agent (the plain
        policy always makes one)."""
        ...

    def logprobs(self, agents: Sequence, completions: Sequence[Completions],
                 per_token: bool = False) -> list[torch.Tensor]:
        """Step 6: sum_t log pi_i(a_t | o, a_<t) of every agent i on `completions[i]`, (B_i,), padding
        and post-EOS tokens masked; per_token=True: the (B_i, C_i) terms (masked positions 0).
        Differentiable: the loss backpropagates through it."""
        ...

    def reference_logprobs(self, agents: Sequence, completions: Sequence[Completions],
                           temperature: float = 1.0) -> list[torch.Tensor]:
        """log pi_ref(a_t | o, a_<t) of every agent i on `completions[i]`, (B_i, C_i), under its frozen
        untrained model at `temperature`, never truncated, no gradient (`reference_logprobs`)."""
        ...


@dataclass(frozen=True)
class PlainPolicy:
    """The `Policy` of this module: each agent alone, one `generate` (`sample`) and one forward
    (`logprobs`, `reference_logprobs`) per agent, nothing shared. The readable reference; slower than
    `fast_path.FastPolicy`, which computes the same numbers up to float rounding.

    Building one (every team builder and every `Agent` builds its policy) picks torch's CPU threads
    for this process, once, as the command line does, unless the user already chose them
    (OMP_NUM_THREADS, or `torch.set_num_threads` before): `threads.choose_threads_once`."""

    def __post_init__(self):
        choose_threads_once()

    def sample(self, agents, prompts, num_generations, gen, batch_agents=True):
        return [sample(a, ps, num_generations, **generation_settings(gen, a)) for a, ps in zip(agents, prompts)]

    def logprobs(self, agents, completions, per_token=False):
        return [logprobs(a, c, per_token) for a, c in zip(agents, completions)]

    def reference_logprobs(self, agents, completions, temperature=1.0):
        return [reference_logprobs(a, c, temperature) for a, c in zip(agents, completions)]


# --------------------------------------------------------------------------------------------------
# The distribution step 2 samples from: the logits through generate's warpers
# --------------------------------------------------------------------------------------------------
SAMPLING_KEYS = ("temperature", "top_k", "top_p")
CUT_CHUNK_ELEMENTS = 2 ** 24
"""`sampled_token_logprobs` recomputes the top-k / top-p cut over at most this many logits at a time
(about 0.4 GB of temporaries): one fast-path batch of Qwen's 151,936-token vocabulary x 2 agents x
4 x 256 positions would otherwise need 7-8 GB at once."""


def sampler_settings(model, gen: dict) -> dict:
    """The temperature, top_k and top_p `generate(**gen)` samples with, as generate resolves them:
    gen's value, else the model's generation config's, else transformers' default (top_k 50!).

    >>> from types import SimpleNamespace
    >>> sampler_settings(SimpleNamespace(generation_config=SimpleNamespace(top_p=0.9)), {"temperature": 0.5})
    {'temperature': 0.5, 'top_k': 50, 'top_p': 0.9}
    """
    from transformers import GenerationConfig

    own = getattr(model, "generation_config", None)
    defaults = getattr(GenerationConfig, "_get_default_generation_params", lambda: {})()
    defaults = {"temperature": 1.0, "top_k": 50, "top_p": 1.0, **{k: defaults[k] for k in SAMPLING_KEYS if k in defaults}}
    out = {}
    for k in SAMPLING_KEYS:
        v = gen.get(k)
        v = getattr(own, k, None) if v is None else v
        out[k] = defaults[k] if v is None else v
    return out


def logits_warpers(temperature: Optional[float] = None, top_k: Optional[int] = None, top_p: Optional[float] = None):
    """transformers' own warpers that `generate(do_sample=True)` applies for these settings, in its
    order (temperature, then top-k, then top-p; `GenerationMixin._get_logits_processor`, one beam):
    (the temperature warper or None, a LogitsProcessorList of the truncating ones, maybe empty)."""
    from transformers import LogitsProcessorList, TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

    scale = TemperatureLogitsWarper(float(temperature)) if temperature is not None and temperature != 1.0 else None
    truncate = LogitsProcessorList()
    if top_k is not None and top_k != 0:
        truncate.append(TopKLogitsWarper(top_k=int(top_k), min_tokens_to_keep=1))
    if top_p is not None and top_p < 1.0:
        truncate.append(TopPLogitsWarper(top_p=float(top_p), min_tokens_to_keep=1))
    return scale, truncate


def sampled_token_logprobs(logits: torch.Tensor, tokens: torch.Tensor, sampling: Optional[dict]) -> torch.Tensor:
    """log p(token) for each position of `logits` (B, C, V) and `tokens` (B, C), where p is the
    distribution `generate` samples from with `sampling` (temperature, top_k, top_p): softmax of the
    logits divided by the temperature, with the tokens outside the top-k / top-p set at -inf
    (transformers' warpers, `logits_warpers`). At temperature 1, top_k 0, top_p 1 (or sampling None)
    it is log_softmax of the raw logits.

    A sampled token is inside the kept set, so its log-prob is finite. The kept set is recomputed
    here in another float order than generate's (a full forward, not the KV-cached step), so a token
    within rounding of the cut could fall out: each position's own token is always kept, which also
    keeps padding positions finite (no -inf * 0 = NaN in the masked sum). The cut is a constant mask
    (computed without gradient: it is piecewise constant in the logits); gradients flow through the
    kept logits only."""
    scale, truncate = logits_warpers(**(sampling or {}))
    scores = logits.float()
    if scale is not None or truncate:
        B, C, V = scores.shape
        scores, own = scores.reshape(B * C, V), tokens.reshape(B * C, 1)  # the warpers take (rows, vocab)
        if scale is not None:
            scores = scale(None, scores)  # logits / T
        if truncate:
            with torch.no_grad():  # which tokens the cut drops: a constant mask, no graph through the sort;
                # in row chunks, as top-p's sort, softmax and cumsum hold ~25 bytes per (row, vocab) entry
                rows = max(1, CUT_CHUNK_ELEMENTS // V)
                dropped = torch.cat([truncate(None, part).isneginf() for part in scores.detach().split(rows)])
            dropped.scatter_(-1, own, False)  # the token drawn at each position is always kept
            scores = scores.masked_fill(dropped, float("-inf"))
        scores = scores.view(B, C, V)
    return torch.log_softmax(scores, dim=-1).gather(-1, tokens.unsqueeze(-1)).squeeze(-1)


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


def completions_from(agent, ids, mask, comp, sampling: Optional[dict] = None) -> Completions:
    """`Completions` of generated tokens `comp` after prompts (ids, mask), drawn with `sampling`
    (`sampler_settings`): masked after the first EOS, the masked positions set to padding, and decoded."""
    cmask = completion_mask(comp, eos_token_ids(agent))
    comp = comp.masked_fill(cmask == 0, agent.tokenizer.pad_token_id)
    texts = agent.tokenizer.batch_decode(comp, skip_special_tokens=True)
    return Completions(ids.clone(), mask.clone(), comp.clone(), cmask, texts, sampling)


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


def check_prompt_lengths(agent, prompts: Sequence[str], max_new_tokens: int) -> None:
    """The context check: raise PromptTooLongError when any of `prompts`, tokenised as sampling does,
    plus `max_new_tokens` exceeds the agent's model context (`context_size`; no limit known: no check).
    Both policies run it on every prompt they sample; call it on a dataset's prompts before training
    so a run does not stop at the step that first meets a long row. The message names the agent, how
    many prompts do not fit, the longest one's length and how it begins, and what to do."""
    prompts = list(prompts)
    ctx = context_size(agent.model, agent.tokenizer)
    if not prompts or ctx is None:
        return
    lengths = [len(ids) for ids in agent.tokenizer(prompts)["input_ids"]]
    bad = [r for r, n in enumerate(lengths) if n + max_new_tokens > ctx]
    if not bad:
        return
    r = max(bad, key=lambda j: lengths[j])
    n = int(lengths[r])
    over = (f"is longer than the context by itself, by {n - ctx} tokens: no max_new_tokens can make it fit" if n >= ctx
            else f"leaves {ctx - n} positions for max_new_tokens={max_new_tokens}")
    raise PromptTooLongError(
        f"agent {agent.name!r}: {len(set(prompts[j] for j in bad))} prompt(s) do not fit in the model's context of "
        f"{ctx} tokens; the longest is {n} tokens and {over} (it needs {n + max_new_tokens} = {n} + max_new_tokens "
        f"{max_new_tokens}). It begins {prompts[r][:80]!r}. Prompts are not truncated (that would drop their "
        "instructions): shorten or drop those rows, lower max_new_tokens, or use a model with a longer context.")
