"""What both of the team's backends share (`magrpo_edu.backends`): the interface (`Backend`), what step 2 returns
(`Completions`, `completion_mask`), the distribution step 2 samples from and step 6 scores (`sampler_settings`,
`logits_warpers`, `sampled_token_logprobs`), the frozen reference pi_ref (`reference_model`), activation
checkpointing in step 6 (`checkpointed_layers`), the sampling settings of a config (`sampling_settings`) and the one
context check (`check_prompt_lengths`: prompts are never truncated).

pi is the distribution `generate` samples from: the model's logits through transformers' own
temperature, top-k and top-p warpers (`logits_warpers`), with the settings step 2 used, which
`sample` records on the Completions (`Completions.sampling`). Step 6 scores every token under that
same distribution, so the loss is the policy gradient of the sampler (algorithm deviation 12). At
temperature 1, top_k 0, top_p 1 no warper runs: log_softmax of the raw logits.
"""
from __future__ import annotations

import functools
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Optional, Protocol, Sequence

import torch
import torch.utils.checkpoint


# --------------------------------------------------------------------------------------------------
# What step 2 returns
# --------------------------------------------------------------------------------------------------
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


# --------------------------------------------------------------------------------------------------
# The frozen reference pi_ref, and activation checkpointing in step 6
# --------------------------------------------------------------------------------------------------
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
    (tests/test_backends.py)."""
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


# --------------------------------------------------------------------------------------------------
# The interface every backend implements
# --------------------------------------------------------------------------------------------------
class Backend(Protocol):
    """What every backend does for a team of agents (agents[i] gets prompts[i], completions[i]):
    steps 2 and 6 of Algorithm 1. `plain.PlainBackend` and `fast.FastBackend` implement it."""

    def sample(self, agents: Sequence, prompts: Sequence[Sequence[str]], num_generations: int, gen: dict,
               batch_agents: bool = True) -> list[Completions]:
        """Step 2: agent i samples G = num_generations completions of each of its prompts `prompts[i]`
        (one per tree node; one in a single-turn step), rows prompt-major (row = prompt_index * G + g),
        with the sampling settings `gen` (generate kwargs: max_new_tokens, temperature, top_p, top_k;
        `sampling_settings(config)`) and each agent's own `generation_kwargs` on top. Every prompt is
        checked first (`check_prompt_lengths`): one that does not fit raises PromptTooLongError before
        it is sampled. batch_agents=False asks for one generate call per agent (the plain
        backend always makes one)."""
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
def sampling_kwargs(max_new_tokens: int, temperature: float, top_p: float = 1.0, top_k: int = 0) -> dict:
    """The four sampling settings as generate kwargs, named as `MAGRPOConfig`'s fields (top_p 1 and top_k 0: no
    truncation). The one place a sampling dict is built: training (`sampling_settings`), the baselines and the
    before/after snapshot."""
    return dict(max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p, top_k=top_k)


def sampling_settings(config) -> dict:
    """The four sampling settings of a `MAGRPOConfig`, as generate kwargs: what step 2 samples with."""
    return sampling_kwargs(config.max_new_tokens, config.temperature, config.top_p, config.top_k)


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
