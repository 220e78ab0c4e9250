"""Agents: causal-LM policies, how they are built, and the two speed-critical helpers.

An `Agent` is a transformers causal LM (or one named LoRA adapter on a shared base) plus its
tokenizer and sampling settings. Three ways to build a team:

* `lora_agents(base, n)`       - one frozen base, one peft LoRA adapter per agent (the default:
                                 memory grows by the adapters only);
* `separate_agents(base, n)`   - n full copies, full fine-tuning (what the paper does);
* `heterogeneous_agents(ids)`  - a different model (and tokenizer) per agent.

The algorithm (`magrpo_edu.algorithm`) only calls two functions from here:

* `sample_completions(agents, prompts, ...)` - step 2 of the Algorithm: every agent samples G
  completions of its own prompt(s). Agents that share one peft base are sampled in ONE batched
  `generate` call, each row through its own agent's adapter; other agents one call each.
  Sampling runs under `torch.inference_mode` with the KV cache.
* `completion_logprobs(agent, batch)` - the sum over completion tokens of log pi(a_t | prompt, a_<t),
  for all of an agent's completions in one batch, padding and post-EOS tokens masked;
  `team_logprobs(agents, batches)` does it for the whole team, with one batch for all the agents
  that share a peft base (the trainer's path).

The frozen untrained model pi_ref (naturalness metric, KL leash config.beta) is
`reference_token_logprobs(agent, batch)`: LoRA agents' shared base with the adapters off (no copy),
full-model agents' `Agent.reference`, a frozen copy `separate_agents` / `heterogeneous_agents` make
when they build the team (reference=True; its memory cost is in their docstrings).

Prompts are never truncated: a prompt whose tokens plus `max_new_tokens` do not fit in the model's
context (`context_size`: config.max_position_embeddings) raises `PromptTooLongError` before
`generate` runs, naming the agent, the prompt, its length, max_new_tokens and the context size.
Cutting from the left would silently drop the instructions that open every prompt, and cutting from
the right the answer cue; training on either teaches the wrong task. `check_prompt_lengths` runs the
same check over a whole dataset's prompts, so a run can refuse them before its first step.

Three things make these fast without changing what they compute (each is tested equal to the
plain computation, values and gradients; benchmarks/RESULTS.md and PROFILE.md measure them):

1. Batched agents: LoRA agents on one base run as one batch (`adapter_rows`).
2. Cheap routing: each agent's rows are one contiguous block, so `adapter_rows` adds each adapter
   to its rows through a slice, instead of peft's per-layer index/scatter (`adapter_names=`).
3. The prompt once, not G times: the G samples of one prompt share its prefill in `generate` and
   its forward in the log-prob pass (the prompt's KV cache is copied to the G rows, and gradients
   flow back through it). With a 64-token prompt and 32 new tokens this halves the tokens of the
   log-prob forward and backward.
"""
from __future__ import annotations

import copy
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

import torch

from .models import load_model, prepare_tokenizer  # prepare_tokenizer re-exported: agents' callers used it from here


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
        own mixed-adapter path; the library's hot loops use the faster `adapter_rows`)."""
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
# Sampling (Algorithm step 2) and log-probs (the loss's sum_t log pi)
# --------------------------------------------------------------------------------------------------
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


def _eos_ids(agent: Agent):
    gen_eos = getattr(getattr(agent.model, "generation_config", None), "eos_token_id", None)
    return gen_eos if gen_eos is not None else agent.tokenizer.eos_token_id


def _plain_lora_linears(model, adapters) -> Optional[list]:
    """The LoRA Linear layers of a peft model, or None when some layer is not plain LoRA (DoRA and
    other variants, merged weights, LoRA on embeddings or convolutions): those keep peft's own path."""
    from peft.tuners.lora import Linear as LoraLinear, LoraLayer

    layers = []
    for m in model.modules():
        if not isinstance(m, LoraLayer):
            continue
        plain = (type(m) is LoraLinear and not m.merged
                 and not any(a in getattr(m, "lora_variant", {}) for a in adapters))
        if not plain:
            return None
        layers.append(m)
    return layers


@contextmanager
def adapter_rows(model, row_adapters: Optional[Sequence[str]]):
    """Run ONE call of a shared peft model with batch row r routed through adapter `row_adapters[r]`;
    yields the extra kwargs that call needs. `row_adapters=None`: the model's own path, no routing.

    peft's mixed-adapter batch (`adapter_names=row_adapters`) gathers and scatters each adapter's rows
    with index tensors, in every LoRA layer at every decoding step: aten::index + index_put were ~12%
    of a SmolLM2-135M step before this helper (benchmarks/PROFILE.md, in the git history). Our rows
    are agent-major - each agent's rows are one contiguous block - so a slice (a view: no copy) does
    the same job. peft computes the frozen
    base alone (rows named "__base__", its name for "no adapter"), and a forward hook on each LoRA
    Linear adds scaling * B(A(x[s:e])) to rows s:e: the same function (tests/test_algorithm.py checks
    values and gradients against peft's own path), fewer and cheaper operations.
    """
    if row_adapters is None:
        yield {}
        return
    row_adapters = list(row_adapters)
    spans = []  # (adapter, start, stop) runs of equal names
    for r, name in enumerate(row_adapters):
        if spans and spans[-1][0] == name and spans[-1][2] == r:
            spans[-1] = (name, spans[-1][1], r + 1)
        else:
            spans.append((name, r, r + 1))
    layers = _plain_lora_linears(model, {name for name, _, _ in spans})
    if layers is None:
        yield {"adapter_names": row_adapters}
        return

    n_rows = len(row_adapters)

    def hook_for(layer):
        plan = [(s, e, layer.lora_A[name], layer.lora_B[name], layer.lora_dropout[name], layer.scaling[name])
                for name, s, e in spans if name in layer.lora_A]

        def add_adapters(module, args, output):  # output = the frozen base's x W^T (+ b)
            x = args[0]
            if x.shape[0] != n_rows:  # a call that expands the batch (beam search): route with adapter_names=
                raise RuntimeError(f"adapter_rows: a batch of {x.shape[0]} rows met {n_rows} adapter names; "
                                   "for calls that expand the batch pass peft's adapter_names= instead.")
            for s, e, a, b, drop, scale in plan:
                output[s:e] += (b(a(drop(x[s:e].to(a.weight.dtype)))) * scale).to(output.dtype)
            return output
        return add_adapters

    handles = [m.register_forward_hook(hook_for(m)) for m in layers]
    try:
        yield {"adapter_names": ["__base__"] * n_rows}
    finally:
        for h in handles:
            h.remove()


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


def _max_new_tokens(model, gen: dict) -> int:
    m = gen.get("max_new_tokens")
    if m is None:
        m = getattr(getattr(model, "generation_config", None), "max_new_tokens", None)
    return int(m or 0)


def _check_fit(model, tokenizer, lengths: Sequence[int], prompts: Sequence[str], max_new_tokens: int,
               names: Optional[Sequence[str]] = None) -> None:
    """Raise PromptTooLongError when some prompt's `lengths[r]` + max_new_tokens exceeds the context."""
    ctx = context_size(model, tokenizer)
    if ctx is None:
        return
    bad = [r for r, n in enumerate(lengths) if n + max_new_tokens > ctx]
    if not bad:
        return
    r = max(bad, key=lambda j: lengths[j])
    who = f"agent {names[r]!r}: " if names is not None else ""
    n = int(lengths[r])
    over = ("is longer than the context by itself" if n > ctx else
            f"leaves {ctx - n} positions for max_new_tokens={max_new_tokens}")
    raise PromptTooLongError(
        f"{who}{len(set(prompts[j] for j in bad))} prompt(s) do not fit in the model's context of {ctx} tokens; the "
        f"longest is {n} tokens and {over} (it needs {n + max_new_tokens} = {n} + max_new_tokens {max_new_tokens}). "
        f"It begins {prompts[r][:80]!r}. Prompts are not truncated (that would drop their instructions): shorten or "
        "drop those rows, lower max_new_tokens, or use a model with a longer context.")


def check_prompt_lengths(agent: Agent, prompts: Sequence[str], max_new_tokens: int) -> None:
    """Raise PromptTooLongError (see `_check_fit`) when any of `prompts`, tokenised as sampling does,
    plus `max_new_tokens` exceeds the agent's model context: call it on a dataset's prompts before
    training so a run does not stop at the step that first meets a long row."""
    prompts = list(prompts)
    if not prompts:
        return
    lengths = [len(ids) for ids in agent.tokenizer(prompts)["input_ids"]]
    _check_fit(agent.model, agent.tokenizer, lengths, prompts, max_new_tokens, [agent.name] * len(prompts))


def _generate(model, tokenizer, prompts: list[str], gen: dict, row_adapters, device,
              row_names: Optional[Sequence[str]] = None) -> tuple:
    """Sample a completion for every row. The G rows of one prompt share ONE prefill: each distinct
    prompt (but its last token) is run once and its KV cache copied to its G rows, which `generate`
    then continues - the prompt is not recomputed G times. A prompt that with max_new_tokens does not
    fit in the context raises PromptTooLongError first (`row_names[r]` names row r's agent)."""
    enc = tokenizer(prompts, return_tensors="pt", padding=True)
    _check_fit(model, tokenizer, enc["attention_mask"].sum(-1).tolist(), prompts, _max_new_tokens(model, gen), row_names)
    ids, mask = enc["input_ids"].to(device), enc["attention_mask"].to(device)
    beams = gen.get("num_beams", 1) > 1  # beam search expands the batch inside generate: peft's own routing
    shared = {}
    with torch.inference_mode():
        starts, inverse = _prompt_runs(ids, mask, row_adapters)
        if not beams and len(starts) < len(inverse) and bool(mask[starts, :-1].any(-1).all()):
            prefill = _shared_prompt_cache(model, ids[:, :-1], mask[:, :-1], row_adapters, starts, inverse)
            if prefill is not None:
                shared = {"past_key_values": prefill[0]}
        routing = (nullcontext({} if row_adapters is None else {"adapter_names": list(row_adapters)}) if beams
                   else adapter_rows(model, row_adapters))
        with routing as extra:
            out = model.generate(input_ids=ids, attention_mask=mask, do_sample=True, use_cache=True,
                                 pad_token_id=tokenizer.pad_token_id, **gen, **extra, **shared)
    return ids, mask, out[:, ids.shape[1]:]


def _split(agent: Agent, ids, mask, comp) -> Completions:
    cmask = completion_mask(comp, _eos_ids(agent))
    comp = comp.masked_fill(cmask == 0, agent.tokenizer.pad_token_id)
    texts = agent.tokenizer.batch_decode(comp, skip_special_tokens=True)
    return Completions(ids.clone(), mask.clone(), comp.clone(), cmask, texts)


def generation_settings(config, agent: Agent) -> dict:
    """The config's sampling settings, with the agent's own overrides on top."""
    gen = dict(max_new_tokens=config.max_new_tokens, temperature=config.temperature,
               top_p=config.top_p, top_k=config.top_k)
    gen.update(agent.generation_kwargs)
    return gen


def shared_base_groups(agents: Sequence[Agent], share: bool = True, key=lambda a: ()) -> list[list[int]]:
    """Indices of the agents that can go through ONE batched call: LoRA agents on the same peft
    model (and with equal `key(agent)`) form a group; every other agent is a group of its own."""
    groups: dict = {}
    for i, a in enumerate(agents):
        k = (id(a.model), key(a)) if share and a.adapter is not None else ("solo", i)
        groups.setdefault(k, []).append(i)
    return list(groups.values())


def sample_completions(agents: Sequence[Agent], prompts: Sequence[Sequence[str]], num_generations: int,
                       config) -> list[Completions]:
    """Algorithm step 2: agent i samples `num_generations` completions of each of its prompts.

    `prompts[i]` is agent i's list of prompts (one per tree node; one in a single-turn step). The
    result for agent i has rows ordered prompt-major: row = prompt_index * G + g.
    Agents that share one peft model and the same sampling settings are batched into ONE generate
    call with per-row adapter names; all others get one call each. A prompt that with max_new_tokens
    does not fit in the model's context raises PromptTooLongError before anything is generated.
    """
    G = num_generations
    results: list[Optional[Completions]] = [None] * len(agents)
    groups = shared_base_groups(agents, share=getattr(config, "batch_agents", True),
                                key=lambda a: tuple(sorted(generation_settings(config, a).items())))
    for members in groups:
        lead = agents[members[0]]
        gen = generation_settings(config, lead)
        rows: list[str] = []
        spans = []
        for i in members:
            start = len(rows)
            rows += [p for p in prompts[i] for _ in range(G)]
            spans.append((i, start, len(rows)))
        row_adapters = None
        if lead.adapter is not None:
            row_adapters = [agents[i].adapter for i, s, e in spans for _ in range(e - s)]
        row_names = [agents[i].name for i, s, e in spans for _ in range(e - s)]
        ids, mask, comp = _generate(lead.model, lead.tokenizer, rows, gen, row_adapters, lead.device, row_names)
        for i, s, e in spans:
            # Each agent keeps only its rows; strip the left padding the other agents' prompts added.
            keep = mask[s:e].any(0)
            first = int(keep.nonzero()[0]) if keep.any() else 0
            results[i] = _split(agents[i], ids[s:e, first:], mask[s:e, first:], comp[s:e])
    return results  # type: ignore[return-value]


def completion_logprobs(agent: Agent, c: Completions) -> torch.Tensor:
    """sum_t log pi_i(a_t | prompt, a_<t) over each row's completion tokens (padding masked), (B,).

    All rows in one batch: each distinct prompt is run once and the completions on top of its KV
    cache (or, when no prompt repeats, one forward over [prompt; completion]). Position ids are
    computed from the attention mask, as `generate` does, so left padding does not shift RoPE
    positions. Only the completion positions' logits are materialised.
    """
    rows = None if agent.adapter is None else [agent.adapter] * c.prompt_ids.shape[0]
    return _logprobs(agent.model, c, rows)


def _prompt_runs(prompt_ids: torch.Tensor, prompt_mask: torch.Tensor,
                 row_adapters: Optional[Sequence[str]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Runs of consecutive rows with the same prompt (and adapter): the G samples of one prompt.
    Returns the first row of each run and, for every row, the index of its run.

    >>> s, inv = _prompt_runs(torch.tensor([[1, 2], [1, 2], [3, 4]]), torch.ones(3, 2), None)
    >>> s.tolist(), inv.tolist()
    ([0, 2], [0, 0, 1])
    """
    B = prompt_ids.shape[0]
    new = torch.ones(B, dtype=torch.bool, device=prompt_ids.device)
    if B > 1:
        new[1:] = (prompt_ids[1:] != prompt_ids[:-1]).any(-1) | (prompt_mask[1:] != prompt_mask[:-1]).any(-1)
        if row_adapters is not None:
            new[1:] |= torch.tensor([a != b for a, b in zip(row_adapters[1:], row_adapters[:-1])], device=new.device)
    return new.nonzero().squeeze(-1), new.long().cumsum(0) - 1


def _checkpointing(model) -> bool:
    """Gradient checkpointing is active (transformers then turns the KV cache off)."""
    return model.training and any(getattr(m, "gradient_checkpointing", False) is True for m in model.modules())


def _shared_prompt_cache(model, ids, mask, row_adapters, starts, inverse):
    """Run each distinct prompt ONCE (not once per sample) and give every row a copy of its prompt's
    KV cache (`Cache.batch_select_indices`, differentiable). Returns the cache and the logits at each
    row's last prompt token, or None when the model's cache cannot do it."""
    u_adapters = None if row_adapters is None else [row_adapters[i] for i in starts.tolist()]
    u_mask = mask[starts]
    pos = (u_mask.cumsum(-1) - 1).clamp(min=0)
    with adapter_rows(model, u_adapters) as extra:
        out = model(input_ids=ids[starts], attention_mask=u_mask, position_ids=pos, use_cache=True, logits_to_keep=1,
                    **extra)
    cache = out.past_key_values
    if cache is None or not hasattr(cache, "batch_select_indices"):
        return None
    cache.batch_select_indices(inverse)
    return cache, out.logits[:, -1][inverse]


def _token_logprobs(model, c: Completions, row_adapters: Optional[Sequence[str]]) -> torch.Tensor:
    """log pi(a_t | prompt, a_<t) per row and completion token, (B, C), 0 at masked positions. The G rows of one prompt share one prompt forward
    (its KV cache is copied to each row), so the prompt is computed once per agent and node instead
    of G times: the same values (tested against a plain forward over [prompt; completion]), and
    gradients flow through the shared prompt states exactly as through G copies."""
    C = c.completion_ids.shape[1]
    attn = torch.cat([c.prompt_mask, c.completion_mask.to(c.prompt_mask.dtype)], dim=1)
    pos = (attn.cumsum(-1) - 1).clamp(min=0)
    starts, inverse = _prompt_runs(c.prompt_ids, c.prompt_mask, row_adapters)
    shared = None
    if len(starts) < len(inverse) and C > 1 and not _checkpointing(model):
        shared = _shared_prompt_cache(model, c.prompt_ids, c.prompt_mask, row_adapters, starts, inverse)
    if shared is None:  # one forward over [prompt; completion] for all rows
        ids = torch.cat([c.prompt_ids, c.completion_ids], dim=1)
        with adapter_rows(model, row_adapters) as extra:
            out = model(input_ids=ids, attention_mask=attn, position_ids=pos, use_cache=False, logits_to_keep=C + 1,
                        **extra)
        logits = out.logits[:, -(C + 1):-1, :]  # logits at t predict token t+1
    else:  # the completions (all but the last token) on top of the shared prompt cache
        cache, first = shared
        P = c.prompt_ids.shape[1]
        with adapter_rows(model, row_adapters) as extra:
            out = model(input_ids=c.completion_ids[:, :-1], attention_mask=attn[:, :-1], position_ids=pos[:, P:-1],
                        past_key_values=cache, use_cache=True, **extra)
        logits = torch.cat([first[:, None], out.logits], dim=1)
    logp = torch.log_softmax(logits.float(), dim=-1).gather(-1, c.completion_ids.unsqueeze(-1)).squeeze(-1)
    return logp * c.completion_mask


def _logprobs(model, c: Completions, row_adapters: Optional[Sequence[str]]) -> torch.Tensor:
    """sum_t log pi(a_t | prompt, a_<t) per row, (B,): `_token_logprobs` summed over the completion."""
    return _token_logprobs(model, c, row_adapters).sum(-1)


def _stack(parts: Sequence[Completions], pad_id: int) -> Completions:
    """Rows of several Completions in one: prompts re-padded on the left, completions on the right."""
    P = max(c.prompt_ids.shape[1] for c in parts)
    C = max(c.completion_ids.shape[1] for c in parts)
    left = lambda t, v: torch.nn.functional.pad(t, (P - t.shape[1], 0), value=v)  # noqa: E731
    right = lambda t, v: torch.nn.functional.pad(t, (0, C - t.shape[1]), value=v)  # noqa: E731
    return Completions(torch.cat([left(c.prompt_ids, pad_id) for c in parts]),
                       torch.cat([left(c.prompt_mask, 0) for c in parts]),
                       torch.cat([right(c.completion_ids, pad_id) for c in parts]),
                       torch.cat([right(c.completion_mask, 0) for c in parts]),
                       [t for c in parts for t in c.texts])


def team_logprobs(agents: Sequence[Agent], comps: Sequence[Completions], per_token: bool = False
                  ) -> list[torch.Tensor]:
    """`completion_logprobs` of every agent i on `comps[i]`. Agents that share one peft base go
    through ONE batch: all their rows together, each row routed through its own agent's adapter
    (`adapter_rows`); other agents get one batch each. Same values, fewer passes.
    per_token=True: the (B_i, C_i) token log-probs (masked positions 0) instead of their sums."""
    out: list[Optional[torch.Tensor]] = [None] * len(agents)
    fn = _token_logprobs if per_token else _logprobs
    for members in shared_base_groups(agents):
        if len(members) == 1:
            a = agents[members[0]]
            rows = None if a.adapter is None else [a.adapter] * comps[members[0]].prompt_ids.shape[0]
            out[members[0]] = fn(a.model, comps[members[0]], rows)
            continue
        lead = agents[members[0]]
        merged = _stack([comps[i] for i in members], lead.tokenizer.pad_token_id)
        names = [agents[i].adapter for i in members for _ in range(comps[i].prompt_ids.shape[0])]
        logp = fn(lead.model, merged, names)
        for i, part in zip(members, logp.split([comps[i].prompt_ids.shape[0] for i in members])):
            out[i] = part[:, :comps[i].completion_ids.shape[1]] if per_token else part
    return out  # type: ignore[return-value]


def has_reference(agent: Agent) -> bool:
    """Whether the agent has a frozen untrained reference pi_ref (LoRA: the base; else `Agent.reference`)."""
    return getattr(agent, "adapter", None) is not None or getattr(agent, "reference", None) is not None


@torch.no_grad()
def reference_token_logprobs(agent: Agent, c: Completions) -> torch.Tensor:
    """log pi_ref(a_t | prompt, a_<t) per row and completion token, (B, C), masked positions 0, no grad.

    What "the frozen untrained model" pi_ref is, per kind of agent:
      * LoRA agent (`lora_agents`): the shared base with the adapters disabled: the untrained model
        exactly, since every adapter starts at B = 0 and the base never trains. No copy, no extra
        memory; one extra forward. The rows are routed to peft's "__base__" (no adapter) through
        `adapter_rows`; peft's `disable_adapter()` context would do the same forward, but on leaving
        it re-enables gradients for the ACTIVE adapter only, freezing every other agent's adapter.
      * full-model agent (`separate_agents`, `heterogeneous_agents`): `agent.reference`, the frozen
        copy made when the agents were built (before any step).
      * a hand-made `Agent` without adapter and without `reference`: there is none (the model itself
        is only "untrained" until its first step); this raises ValueError: set `reference=frozen_copy(model)`
        before training.
    """
    if agent.adapter is not None:
        return _token_logprobs(agent.model, c, ["__base__"] * c.prompt_ids.shape[0])
    if agent.reference is None:
        raise ValueError(f"agent {agent.name} has no frozen reference model: build it with separate_agents / "
                         "heterogeneous_agents (reference=True), or set agent.reference = frozen_copy(model) "
                         "before training.")
    return _token_logprobs(agent.reference, c, None)
