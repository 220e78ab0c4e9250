"""Agents: causal-LM policies, how a team is built, and the team-level calls of steps 2 and 6.

An `Agent` is a transformers causal LM (or one named LoRA adapter on a shared base) plus its
tokenizer and sampling settings. Three ways to build a team:

* `lora_agents(base, n)`       - one frozen base, one peft LoRA adapter per agent (the default:
                                 memory grows by the adapters only);
* `separate_agents(base, n)`   - n full copies, full fine-tuning (what the paper does);
* `heterogeneous_agents(ids)`  - a different model (and tokenizer) per agent.

(`load_lora_agents` loads saved adapters; `frozen_copy` makes a reference model.)

The algorithm (`magrpo_edu.algorithm`) calls these team-level functions:

* `sample_completions(agents, prompts, G, gen)` - step 2 of the Algorithm: every agent samples G
  completions of its own prompt(s) with the sampling settings `gen` (generate kwargs, e.g.
  `policy.sampling_settings(config)`); it is `policy.sample` for each agent.
* `team_logprobs(agents, completions)` - step 6's sum over completion tokens of
  log pi_i(a_t | prompt, a_<t) for every agent, padding and post-EOS tokens masked, pi_i being the
  distribution the tokens were sampled from (the logits through the temperature, top-k and top-p
  warpers of `Completions.sampling`); it is
  `policy.logprobs` for each agent (`completion_logprobs(agent, completions)`: one agent).
* `reference_token_logprobs(agent, completions, temperature)` - the same under the frozen untrained
  model pi_ref at a temperature, never truncated (naturalness metric at 1, KL leash config.beta at
  the sampling temperature): LoRA agents' shared base with the adapters off (no
  copy), full-model agents' `Agent.reference`, a frozen copy `separate_agents` /
  `heterogeneous_agents` make when they build the team (reference=True; its memory cost is in their
  docstrings).

Each computes what the plain code of `magrpo_edu.policy` computes, by default through
`magrpo_edu.fast_path` (LoRA agents on one base in one batch, the prompt once for its G samples);
`fast=False`, or `magrpo_edu.fast_path.ENABLED = False` for every call, runs the plain code instead.
The names that moved to those two modules (Completions, completion_mask, adapter_rows,
PromptTooLongError, check_prompt_lengths, ...) stay importable from here.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import torch

from . import fast_path, policy
from .config import MAGRPOConfig
from .models import load_model, prepare_tokenizer  # prepare_tokenizer re-exported: agents' callers used it from here
from .policy import Completions, generation_settings, logprobs, model_logprobs, sample, sampling_settings

# The public names that moved to `policy` (the plain computation) and `fast_path` (its speedups)
# stay importable from here.
completion_mask, PromptTooLongError = policy.completion_mask, policy.PromptTooLongError
context_size, check_prompt_lengths = policy.context_size, policy.check_prompt_lengths
adapter_rows, shared_base_groups = fast_path.adapter_rows, fast_path.shared_base_groups


@dataclass
class Agent:
    """One policy pi_i: a causal LM (or a named adapter of a shared peft model) and its tokenizer."""

    name: str
    model: Any
    tokenizer: Any
    adapter: Optional[str] = None
    """Name of this agent's LoRA adapter when agents share one peft model; None for a full model."""
    generation_kwargs: dict = field(default_factory=dict)
    """Per-agent overrides of the config's sampling settings (temperature, top_p, top_k, ...)."""
    reference: Any = field(default=None, repr=False)
    """A FROZEN copy of this agent's untrained model (pi_ref), for a full-model agent: the model the
    naturalness metric (`magrpo_edu.quality`) and the KL leash (config.beta) measure against. Never
    trained, never saved in checkpoints. LoRA agents leave it None: their reference is the shared
    base with the adapters disabled (no copy). See `reference_token_logprobs`."""

    def trainable_parameters(self) -> list[torch.nn.Parameter]:
        """The parameters this agent's optimiser updates: its adapter's, or the whole model's."""
        if self.adapter is None:
            return [p for p in self.model.parameters() if p.requires_grad]
        tag = f".{self.adapter}."
        return [p for n, p in self.model.named_parameters() if "lora_" in n and tag in n]

    def named_trainable_state(self) -> dict[str, torch.Tensor]:
        """Name -> tensor of the trainable parameters (what a checkpoint must hold)."""
        if self.adapter is None:
            return {n: p for n, p in self.model.named_parameters() if p.requires_grad}
        tag = f".{self.adapter}."
        return {n: p for n, p in self.model.named_parameters() if "lora_" in n and tag in n}

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def forward_kwargs(self, batch_size: int) -> dict:
        """Extra kwargs that route a forward/generate call through this agent's adapter (peft's
        own mixed-adapter path, as `policy` uses it; the fast path routes with `fast_path.adapter_rows`)."""
        return {"adapter_names": [self.adapter] * batch_size} if self.adapter is not None else {}


# --------------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------------
def _as_model_and_tokenizer(base, tokenizer, dtype, device):
    """A model given by name (registry name, hub id or folder: `models.load_model`) or as an object."""
    if isinstance(base, str):
        return load_model(base, dtype=dtype, device=device)
    if tokenizer is None:
        raise ValueError("A model object was given without its tokenizer: pass tokenizer=...")
    if device is not None:
        base = base.to(device)
    return base, prepare_tokenizer(tokenizer)


def lora_agents(base, num_agents: int = 2, tokenizer=None, r: int = 8, alpha: int = 16,
                target_modules: Sequence[str] | str | None = "all-linear", dropout: float = 0.0,
                dtype: Any = None, device=None, names: Sequence[str] | None = None, seed: int = 0) -> list[Agent]:
    """n agents on ONE frozen base, each with its own LoRA adapter (peft named adapters).

    The base weights are shared and frozen; only the adapters train, so memory grows by a few
    percent per agent. All adapters start at B = 0, i.e. every agent starts as the base model.
    The random A matrices are drawn from a generator seeded with `seed` (the caller's RNG is left
    untouched): without it, two runs differ from step 2 on, since B = 0 hides A only at step 1.
    """
    from peft import LoraConfig, get_peft_model

    model, tok = _as_model_and_tokenizer(base, tokenizer, dtype, device)
    names = list(names or [f"agent_{i}" for i in range(num_agents)])
    if len(names) != num_agents:
        raise ValueError(f"lora_agents got {len(names)} names for num_agents={num_agents}.")
    cfg = LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, target_modules=target_modules,
                     task_type="CAUSAL_LM", bias="none")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        peft_model = get_peft_model(model, cfg, adapter_name=names[0])
        for name in names[1:]:
            peft_model.add_adapter(name, cfg)
    for n, p in peft_model.named_parameters():  # peft leaves only the active adapter trainable
        p.requires_grad_("lora_" in n)
    # Mixed-adapter batches (adapter_names=...) need eval mode; dropout is 0 by default so eval and
    # train modes compute the same function. The trainer never switches to train mode.
    peft_model.eval()
    return [Agent(name=name, model=peft_model, tokenizer=tok, adapter=name) for name in names]


def load_lora_agents(base, adapter_dirs: Sequence[str | Path], tokenizer=None, names: Sequence[str] | None = None,
                     trainable: bool = True, dtype: Any = None, device=None) -> list[Agent]:
    """Agents from saved LoRA adapters: `lora_agents` for a trained run.

    `adapter_dirs` are standard peft adapter folders (adapter_config.json + adapter_model.safetensors,
    as `PeftModel.save_pretrained` writes them), one per agent, all for the same `base`. Each is
    loaded as a named adapter of ONE peft model (`PeftModel.from_pretrained`, then `load_adapter`), so
    the base stays shared; `base` may also be that peft model already (the model of `lora_agents`),
    and the saved adapters join its own without a second copy of the base, and the agents can be evaluated (`baselines.run_method`) or trained further
    (`trainable=True`). Names default to the folders' names. Plain peft loads the same folders:
    `PeftModel.from_pretrained(base, adapter_dirs[0])`.
    """
    from peft import PeftModel

    dirs = [Path(d) for d in adapter_dirs]
    if not dirs:
        raise ValueError("load_lora_agents needs at least one adapter folder.")
    for d in dirs:
        if not (d / "adapter_config.json").is_file():
            raise FileNotFoundError(f"{d} is not a peft adapter folder: it has no adapter_config.json "
                                    "(save one with PeftModel.save_pretrained, or trainer.save for a checkpoint).")
    names = list(names or [d.name for d in dirs])
    if len(names) != len(dirs) or len(set(names)) != len(names):
        raise ValueError(f"load_lora_agents needs one distinct name per adapter folder; got {names} for {len(dirs)}.")
    model, tok = _as_model_and_tokenizer(base, tokenizer, dtype, device)
    if isinstance(model, PeftModel):  # e.g. the model of lora_agents: add the saved adapters beside its own
        peft_model, todo = model, list(zip(dirs, names))
        clash = [nm for nm in names if nm in peft_model.peft_config]
        if clash:
            raise ValueError(f"the peft model already has adapter(s) named {clash}; pass other names=...")
    else:
        peft_model = PeftModel.from_pretrained(model, str(dirs[0]), adapter_name=names[0], is_trainable=trainable)
        todo = list(zip(dirs[1:], names[1:]))
    for d, name in todo:
        peft_model.load_adapter(str(d), adapter_name=name, is_trainable=trainable)
    tags = tuple(f".{nm}." for nm in names)
    for n, p in peft_model.named_parameters():
        if any(t in n for t in tags):
            p.requires_grad_(trainable and "lora_" in n)
        elif "lora_" not in n:
            p.requires_grad_(False)
    peft_model.eval()  # as lora_agents: mixed-adapter batches need eval mode
    return [Agent(name=name, model=peft_model, tokenizer=tok, adapter=name) for name in names]


def frozen_copy(model):
    """A deep copy of `model` with every parameter frozen, in eval mode: a reference policy pi_ref."""
    ref = copy.deepcopy(model)
    ref.requires_grad_(False)
    ref.eval()
    return ref


def separate_agents(base, num_agents: int = 2, tokenizer=None, dtype: Any = None, device=None,
                    names: Sequence[str] | None = None, reference: bool = True,
                    devices: Sequence[str | torch.device] | None = None) -> list[Agent]:
    """n independent full copies of one model, fully fine-tuned (the paper's setting).

    reference=True (default) also keeps ONE frozen copy of the untrained model, shared by all the
    agents as `Agent.reference` (they all start from it): the naturalness metric and the KL leash
    measure against it. Memory cost: one more copy of the weights for the whole team (n + 1 copies
    instead of n), no optimiser state, no gradients. reference=False saves that memory; the agents
    then have no naturalness metric and cannot train with config.beta > 0.

    devices: one device per agent (e.g. ["cuda:0", "cuda:1"]; the authors' library also puts agents on
    separate GPUs): agent i's copy lives on devices[i], and the frozen reference is kept once per
    DISTINCT device, so each agent's reference forward runs where the agent is. Sampling and log-probs
    run on each agent's device, rewards on CPU (they read texts), and `algorithm.agent_losses` moves
    the advantages to each agent's device.
    """
    if devices is not None:
        devices = [torch.device(d) for d in devices]
        if len(devices) != num_agents:
            raise ValueError(f"separate_agents got {len(devices)} devices for num_agents={num_agents}: give one per agent.")
    model, tok = _as_model_and_tokenizer(base, tokenizer, dtype, device)
    names = list(names or [f"agent_{i}" for i in range(num_agents)])
    ref = frozen_copy(model) if reference else None  # before any agent can train
    models = [model] + [copy.deepcopy(model) for _ in names[1:]]
    refs: dict = {}
    agents = []
    for i, (name, m) in enumerate(zip(names, models)):
        r = ref
        if devices is not None:
            m = m.to(devices[i])
            if ref is not None:
                key = str(devices[i])
                if key not in refs:
                    refs[key] = (ref if not refs else frozen_copy(ref)).to(devices[i])
                r = refs[key]
        m.requires_grad_(True)
        m.eval()  # no dropout during sampling or loss: on-policy log-probs match the sampler
        agents.append(Agent(name=name, model=m, tokenizer=tok, reference=r))
    return agents


def heterogeneous_agents(models: Sequence, tokenizers: Sequence | None = None, dtype: Any = None,
                         device=None, names: Sequence[str] | None = None, reference: bool = True,
                         devices: Sequence[str | torch.device] | None = None) -> list[Agent]:
    """One agent per given model (ids, paths or objects); models and tokenizers may all differ.

    reference=True (default) keeps a frozen copy of each agent's untrained model as its
    `Agent.reference` (naturalness metric, KL leash): memory cost one more copy of EVERY agent's
    weights (twice the weights in all). reference=False: no copies, no naturalness, no beta > 0.
    devices: one device per agent (instead of one `device` for all); each reference stays with its agent."""
    if devices is not None and len(devices) != len(models):
        raise ValueError(f"heterogeneous_agents got {len(devices)} devices for {len(models)} models: give one per agent.")
    tokenizers = list(tokenizers) if tokenizers is not None else [None] * len(models)
    names = list(names or [f"agent_{i}" for i in range(len(models))])
    per_device = list(devices) if devices is not None else [device] * len(models)
    agents = []
    for name, base, tok, dev in zip(names, models, tokenizers, per_device):
        m, t = _as_model_and_tokenizer(base, tok, dtype, dev)
        m.requires_grad_(True)
        m.eval()
        agents.append(Agent(name=name, model=m, tokenizer=t, reference=frozen_copy(m) if reference else None))
    return agents




# --------------------------------------------------------------------------------------------------
# Steps 2 and 6 for a team: the plain code of `policy`, or its fast path
# --------------------------------------------------------------------------------------------------
def _fast(fast: Optional[bool]) -> bool:
    return fast_path.ENABLED if fast is None else fast


def sample_completions(agents: Sequence[Agent], prompts: Sequence[Sequence[str]], num_generations: int,
                       gen: Mapping[str, Any] | MAGRPOConfig, *, batch_agents: bool = True,
                       fast: Optional[bool] = None) -> list[Completions]:
    """Algorithm step 2: agent i samples `num_generations` completions of each of its prompts.

    `prompts[i]` is agent i's list of prompts (one per tree node; one in a single-turn step). The
    result for agent i has rows ordered prompt-major: row = prompt_index * G + g. `gen`: the sampling
    settings (generate kwargs: max_new_tokens, temperature, top_p, top_k, ...), each agent's
    `generation_kwargs` on top; a `MAGRPOConfig` in their place gives its four
    (`policy.sampling_settings`: max_new_tokens, temperature, top_p, top_k; nothing else is read).
    fast (default `fast_path.ENABLED`): `fast_path.sample_completions`, which batches the agents that
    share one peft model (batch_agents=False: one generate call per agent); else `policy.sample` per
    agent. A prompt that with max_new_tokens does not fit in the model's context raises
    PromptTooLongError before anything is generated.
    """
    gen = dict(gen) if isinstance(gen, Mapping) else sampling_settings(gen)  # a MAGRPOConfig: its four settings
    if _fast(fast):
        return fast_path.sample_completions(agents, prompts, num_generations, gen, batch_agents)
    return [sample(a, p, num_generations, **generation_settings(gen, a)) for a, p in zip(agents, prompts)]


def team_logprobs(agents: Sequence[Agent], comps: Sequence[Completions], per_token: bool = False,
                  fast: Optional[bool] = None) -> list[torch.Tensor]:
    """Step 6's sum_t log pi_i(a_t | prompt, a_<t) of every agent i on `comps[i]`, (B_i,), padding and
    post-EOS tokens masked; per_token=True: the (B_i, C_i) token log-probs (masked positions 0).
    fast (default `fast_path.ENABLED`): `fast_path.team_logprobs` (one batch for all the agents that
    share a peft base); else `policy.logprobs` per agent."""
    if _fast(fast):
        return fast_path.team_logprobs(agents, comps, per_token)
    return [logprobs(a, c, per_token) for a, c in zip(agents, comps)]


def completion_logprobs(agent: Agent, c: Completions, per_token: bool = False,
                        fast: Optional[bool] = None) -> torch.Tensor:
    """`team_logprobs` of one agent: sum_t log pi(a_t | prompt, a_<t) per row of `c`, (B,)."""
    return team_logprobs([agent], [c], per_token, fast)[0]


def has_reference(agent: Agent) -> bool:
    """Whether the agent has a frozen untrained reference pi_ref (LoRA: the base; else `Agent.reference`)."""
    return getattr(agent, "adapter", None) is not None or getattr(agent, "reference", None) is not None


@torch.no_grad()
def reference_token_logprobs(agent: Agent, c: Completions, temperature: float = 1.0, *,
                             fast: Optional[bool] = None) -> torch.Tensor:
    """log pi_ref(a_t | prompt, a_<t) per row and completion token, (B, C), masked positions 0, no grad.

    pi_ref is the reference model's softmax at `temperature` (transformers' TemperatureLogitsWarper),
    never truncated by top-k / top-p. The KL leash passes the temperature the completions were
    sampled at (`algorithm.agent_losses`), as TRL does: at the first step pi = pi_ref and the KL is 0.
    The naturalness metric keeps temperature 1 (`quality.token_nll`): it is a property of the text
    under the untrained model, comparable between runs sampled at different temperatures. Top-k /
    top-p are left out because a truncated reference gives -inf to every token outside its own kept
    set, and the KL would be infinite as soon as the policy drew one (`algorithm` deviation 11).

    What "the frozen untrained model" pi_ref is, per kind of agent:
      * LoRA agent (`lora_agents`): the shared base with the adapters disabled: the untrained model
        exactly, since every adapter starts at B = 0 and the base never trains. No copy, no extra
        memory; one extra forward. The rows are routed to peft's "__base__" (no adapter);
        peft's `disable_adapter()` context would do the same forward, but on leaving
        it re-enables gradients for the ACTIVE adapter only, freezing every other agent's adapter.
      * full-model agent (`separate_agents`, `heterogeneous_agents`): `agent.reference`, the frozen
        copy made when the agents were built (before any step).
      * a hand-made `Agent` without adapter and without `reference`: there is none (the model itself
        is only "untrained" until its first step); this raises ValueError: set `reference=frozen_copy(model)`
        before training.
    fast as in `team_logprobs`.
    """
    if agent.adapter is not None:
        model, rows = agent.model, ["__base__"] * c.prompt_ids.shape[0]
    elif agent.reference is None:
        raise ValueError(f"agent {agent.name} has no frozen reference model: build it with separate_agents / "
                         "heterogeneous_agents (reference=True), or set agent.reference = frozen_copy(model) "
                         "before training.")
    else:
        model, rows = agent.reference, None
    sampling = {"temperature": temperature}
    if _fast(fast):
        return fast_path.token_logprobs(model, c, rows, sampling)
    return model_logprobs(model, c, per_token=True, sampling=sampling, **({} if rows is None else {"adapter_names": rows}))
