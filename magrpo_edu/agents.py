"""Agents: causal-LM policies and how a team is built.

An `Agent` is a transformers causal LM (or one named LoRA adapter on a shared base) plus its
tokenizer, sampling settings and the team's backend (`Agent.backend`: how steps 2 and 6 run the
models, `magrpo_edu.backends`). Three ways to build a team:

* `lora_agents(base, n)`       - one frozen base, one peft LoRA adapter per agent (the default:
                                 memory grows by the adapters only);
* `separate_agents(base, n)`   - n full copies, full fine-tuning (what the paper does);
* `heterogeneous_agents(ids)`  - a different model (and tokenizer) per agent.

(`load_lora_agents` loads saved adapters; `frozen_copy` makes a reference model;
`checkpoint_activations(agents)` trades about one more forward for most of step 6's activation memory.)

Each builder picks the team's backend: `backends.FastBackend()` unless given `backend=`, e.g.
`lora_agents(base, 2, backend=PlainBackend())` for the plain one-agent-at-a-time code of
`magrpo_edu.backends.plain` (same numbers up to float rounding, slower; for reading and comparing). The
algorithm asks the team for it once (`team_backend(agents)`) and calls its three methods:
`sample` (step 2), `logprobs` (step 6) and `reference_logprobs` (pi_ref: the KL leash, the
naturalness metric). Scripts and notebooks call them the same way:

    backend = team_backend(agents)
    comps = backend.sample(agents, [[prompt_0], [prompt_1]], G, sampling_settings(config))
    logps = backend.logprobs(agents, comps)            # one (G,) tensor per agent
    (logp,) = agent.backend.logprobs([agent], [c])      # one agent

`Completions`, `sampling_settings` and the context check live in `magrpo_edu.backends`.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

import torch

from .backends import Backend, FastBackend
from .models import load_model, lora_targets, prepare_tokenizer
from .rng import seeded
from .threads import choose_threads_once


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
    base with the adapters disabled (no copy). See `backends.reference_model`."""
    reference_adapter: Optional[str] = None
    """For a LoRA agent: the name of a FROZEN adapter of the same peft model that is its pi_ref instead of the
    base with adapters off, e.g. its supervised warm start (`leash_to_adapters`); None: the base."""
    backend: Backend = field(default_factory=FastBackend, repr=False)
    """How steps 2 and 6 run this agent's team (`magrpo_edu.backends`): `FastBackend()` (the default) or
    `PlainBackend()`. Set by the team builders; all the agents of a team share one (`team_backend`)."""

    def __post_init__(self):
        choose_threads_once()  # torch's CPU threads for this process, once, where the user has not chosen them

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
        own mixed-adapter path, as the plain backend uses it; the fast path routes with `backends.fast.adapter_rows`)."""
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
                target_modules: Sequence[str] | str | None = "auto", dropout: float = 0.0,
                dtype: Any = None, device=None, names: Sequence[str] | None = None, seed: int = 0,
                backend: Optional[Backend] = None) -> list[Agent]:
    """n agents on ONE frozen base, each with its own LoRA adapter (peft named adapters).

    The base weights are shared and frozen; only the adapters train, so memory grows by a few
    percent per agent. All adapters start at B = 0, i.e. every agent starts as the base model.
    The random A matrices are drawn from a generator seeded with `seed` (the caller's RNG is left
    untouched): without it, two runs differ from step 2 on, since B = 0 hides A only at step 1.
    target_modules: peft's; "auto" (default) is `models.lora_targets(base)`: q/v projections on an embedded model,
    every linear layer on any other.
    backend: the team's `Agent.backend` (default `FastBackend()`: the agents batched on their one base).
    """
    from peft import LoraConfig, get_peft_model

    model, tok = _as_model_and_tokenizer(base, tokenizer, dtype, device)
    if target_modules == "auto":
        target_modules = lora_targets(base if isinstance(base, str) else model)
    names = list(names or [f"agent_{i}" for i in range(num_agents)])
    if len(names) != num_agents:
        raise ValueError(f"lora_agents got {len(names)} names for num_agents={num_agents}.")
    cfg = LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, target_modules=target_modules,
                     task_type="CAUSAL_LM", bias="none")
    with seeded(seed):
        peft_model = get_peft_model(model, cfg, adapter_name=names[0])
        for name in names[1:]:
            peft_model.add_adapter(name, cfg)
    for n, p in peft_model.named_parameters():  # peft leaves only the active adapter trainable
        p.requires_grad_("lora_" in n)
    # Mixed-adapter batches (adapter_names=...) need eval mode; dropout is 0 by default so eval and
    # train modes compute the same function. The trainer never switches to train mode.
    peft_model.eval()
    return [Agent(name=name, model=peft_model, tokenizer=tok, adapter=name, backend=_chosen(backend)) for name in names]


def load_lora_agents(base, adapter_dirs: Sequence[str | Path], tokenizer=None, names: Sequence[str] | None = None,
                     trainable: bool = True, dtype: Any = None, device=None,
                     backend: Optional[Backend] = None) -> list[Agent]:
    """Agents from saved LoRA adapters: `lora_agents` for a trained run.

    `adapter_dirs` are standard peft adapter folders (adapter_config.json + adapter_model.safetensors,
    as `PeftModel.save_pretrained` writes them), one per agent, all for the same `base`. Each is
    loaded as a named adapter of ONE peft model (`PeftModel.from_pretrained`, then `load_adapter`), so
    the base stays shared; `base` may also be that peft model already (the model of `lora_agents`),
    and the saved adapters join its own without a second copy of the base, and the agents can be evaluated (`evaluation.run_method`) or trained further
    (`trainable=True`). Names default to the folders' names. Plain peft loads the same folders:
    `PeftModel.from_pretrained(base, adapter_dirs[0])`. backend: as in `lora_agents`.
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
    return [Agent(name=name, model=peft_model, tokenizer=tok, adapter=name, backend=_chosen(backend)) for name in names]


def leash_to_adapters(agents: Sequence[Agent], adapter_dirs: Sequence[str | Path], suffix: str = "_ref") -> list[Agent]:
    """Make each LoRA agent's pi_ref (the KL leash's and the naturalness metric's reference) a FROZEN copy of a
    saved adapter, e.g. the warm start it began from, instead of the base with adapters off: adapter_dirs[i] is
    loaded on agent i's peft model as `<name><suffix>`, never trained, never saved with the agent's state, and
    set as `Agent.reference_adapter`. One more LoRA adapter in memory per agent (a few MB), no copy of the base.
    Returns the agents."""
    dirs = [Path(d) for d in adapter_dirs]
    if len(dirs) != len(agents):
        raise ValueError(f"leash_to_adapters got {len(dirs)} adapter folders for {len(agents)} agents; give one per agent.")
    for agent, d in zip(agents, dirs):
        if agent.adapter is None:
            raise ValueError(f"agent {agent.name} is a full model; leash_to_adapters is for LoRA agents (a full model's "
                             "reference is Agent.reference).")
        if not (d / "adapter_config.json").is_file():
            raise FileNotFoundError(f"{d} is not a peft adapter folder: it has no adapter_config.json.")
        name = f"{agent.adapter}{suffix}"
        if name not in agent.model.peft_config:
            agent.model.load_adapter(str(d), adapter_name=name, is_trainable=False)
        for n, p in agent.model.named_parameters():
            if f".{name}." in n:
                p.requires_grad_(False)
        agent.reference_adapter = name
    agents[0].model.eval()
    return list(agents)


def frozen_copy(model):
    """A deep copy of `model` with every parameter frozen, in eval mode: a reference policy pi_ref."""
    ref = copy.deepcopy(model)
    ref.requires_grad_(False)
    ref.eval()
    return ref


def separate_agents(base, num_agents: int = 2, tokenizer=None, dtype: Any = None, device=None,
                    names: Sequence[str] | None = None, reference: bool = True,
                    devices: Sequence[str | torch.device] | None = None,
                    backend: Optional[Backend] = None) -> list[Agent]:
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
    backend: the team's `Agent.backend` (default `FastBackend()`: each prompt computed once for its G samples).
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
        agents.append(Agent(name=name, model=m, tokenizer=tok, reference=r, backend=_chosen(backend)))
    return agents


def heterogeneous_agents(models: Sequence, tokenizers: Sequence | None = None, dtype: Any = None,
                         device=None, names: Sequence[str] | None = None, reference: bool = True,
                         devices: Sequence[str | torch.device] | None = None,
                         backend: Optional[Backend] = None) -> list[Agent]:
    """One agent per given model (ids, paths or objects); models and tokenizers may all differ.

    reference=True (default) keeps a frozen copy of each agent's untrained model as its
    `Agent.reference` (naturalness metric, KL leash): memory cost one more copy of EVERY agent's
    weights (twice the weights in all). reference=False: no copies, no naturalness, no beta > 0.
    devices: one device per agent (instead of one `device` for all); each reference stays with its agent.
    backend: as in `separate_agents`."""
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
        agents.append(Agent(name=name, model=m, tokenizer=t, reference=frozen_copy(m) if reference else None,
                            backend=_chosen(backend)))
    return agents


def _chosen(backend: Optional[Backend]) -> Backend:
    """A builder's `backend=`: the fast one when None; anything without the three methods is refused."""
    if backend is None:
        return FastBackend()
    missing = [m for m in ("sample", "logprobs", "reference_logprobs") if not callable(getattr(backend, m, None))]
    if missing:
        raise ValueError(f"backend={backend!r} is not a backend: it lacks {missing}; pass PlainBackend() or FastBackend() "
                         "(magrpo_edu.backends), or leave it out for FastBackend().")
    return backend


# --------------------------------------------------------------------------------------------------
# The team's backend, and activation checkpointing
# --------------------------------------------------------------------------------------------------
def checkpoint_activations(agents: Sequence[Agent]) -> None:
    """Switch on transformers' activation (gradient) checkpointing for every model of the team: step 6's
    backward pass then recomputes each decoder layer instead of holding every layer's activations, about
    one more forward of time for a fraction of the memory (`backends.common.checkpointed_layers` says how it runs
    while the agents stay in eval mode). For a real model on a small machine: SmolLM2-135M's live steps
    in notebook 07 (float32, 2 agents x 2 samples of a ~200-token post) peak about 1 GB lower with it.
    The same losses and gradients up to float rounding; sampling and the reference are unchanged."""
    seen = set()
    for agent in agents:
        model = agent.model.get_base_model() if hasattr(agent.model, "get_base_model") else agent.model
        if id(model) in seen:
            continue
        seen.add(id(model))
        enable = getattr(model, "activation_checkpointing_enable", None)  # transformers >= 5.? (the old name warns)
        if enable is not None:
            enable()
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})


def team_backend(agents: Sequence[Agent]) -> Backend:
    """The backend all of `agents` share (`Agent.backend`, chosen when they were built): what the
    algorithm calls for steps 2 and 6, once a step. Two teams built apart with equal backends (FastBackend() and
    FastBackend()) make one team; agents with different backends are refused."""
    backends = list(dict.fromkeys(a.backend for a in agents))
    if len(backends) != 1:
        raise ValueError(f"the agents {[a.name for a in agents]} do not share one backend (they have {backends}); build "
                         "them with the same backend= (or set agent.backend on each), so steps 2 and 6 run one way.")
    return backends[0]


def has_reference(agent: Agent) -> bool:
    """Whether the agent has a frozen untrained reference pi_ref (LoRA: the base; else `Agent.reference`)."""
    return getattr(agent, "adapter", None) is not None or getattr(agent, "reference", None) is not None

