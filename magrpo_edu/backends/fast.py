"""The fast backend: what `plain.py` computes for steps 2 and 6, faster.

    FastBackend()                                                    the `Backend` of this module
    sample_completions(agents, prompts, G, gen, batch_agents=True)  backend.sample for every agent
    team_logprobs(agents, completions, per_token=False)             backend.logprobs for every agent
    token_logprobs(model, completions, row_adapters)                per-token log-probs, rows routed to adapters
    adapter_rows(model, row_adapters)                               one call of a peft model, row r through adapter r

Nothing here changes what is computed: the same sampled tokens for the same seed, the same log-probs
and gradients up to float rounding (tests/test_backends.py and tests/test_algorithm.py check each
speedup against the plain code; benchmarks/RESULTS.md and PROFILE.md measure them). Read
`plain.py` for the computation; this module only for how it is made fast.

Which backend runs is chosen when the agents are built: the team builders (`agents.lora_agents`,
`load_lora_agents`, `separate_agents`, `heterogeneous_agents`) give their agents `FastBackend()`
unless they are passed `backend=PlainBackend()` (one generate and one forward per agent; same numbers
up to float rounding, slower). `MAGRPOConfig.batch_agents=False` keeps this backend but samples each
agent in its own generate call (speedup 1 off for sampling only, to compare).

Three things make it fast:

1. Batched agents: LoRA agents on one base run as one batch (`adapter_rows`); sampling strips, from
   each agent's rows, the left padding the other agents' longer prompts added. Agents with other
   sampling settings, and full-model agents, get a batch of their own (`shared_base_groups`).
2. Cheap routing: each agent's rows are one contiguous block, so `adapter_rows` adds each adapter
   to its rows through a slice, instead of peft's per-layer index/scatter (`adapter_names=`).
3. The prompt once, not G times: the G samples of one prompt share its prefill in `generate` and
   its forward in the log-prob pass (the prompt's KV cache is copied to the G rows, and gradients
   flow back through it). With a 64-token prompt and 32 new tokens this halves the tokens of the
   log-prob forward and backward.

Deviations: none from the method; only float rounding differs from the plain path (a batched
matmul sums in another order), which can change a sampled token where two are within rounding.
The log-probs go through the same warpers as the plain path (`common.sampled_token_logprobs`, the
settings each Completions was sampled with); agents sampled with different settings are scored in
separate batches, as they were sampled.
"""
from __future__ import annotations

from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Optional, Sequence

import torch

from .common import (Completions, check_prompt_lengths, checkpointed_layers, checkpointing_layers, completions_from,
                     generation_settings, max_new_tokens_of, reference_model, sampled_token_logprobs, sampler_settings)


@dataclass(frozen=True)
class FastBackend:
    """The `Backend` of this module, the team builders' default: `sample_completions`,
    `team_logprobs`, and the reference log-probs through `token_logprobs` (each agent's rows in one
    forward: its base with the adapters off, or its frozen copy)."""

    def sample(self, agents, prompts, num_generations, gen, batch_agents=True):
        return sample_completions(agents, prompts, num_generations, gen, batch_agents)

    def logprobs(self, agents, completions, per_token=False):
        return team_logprobs(agents, completions, per_token)

    @torch.no_grad()
    def reference_logprobs(self, agents, completions, temperature=1.0):
        out = []
        for agent, c in zip(agents, completions):
            model, adapter = reference_model(agent)
            rows = None if adapter is None else [adapter] * c.prompt_ids.shape[0]
            out.append(token_logprobs(model, c, rows, {"temperature": temperature}))
        return out


# --------------------------------------------------------------------------------------------------
# Step 2: sampling a team
# --------------------------------------------------------------------------------------------------
def shared_base_groups(agents, share: bool = True, keys: Optional[Sequence] = None) -> list[list[int]]:
    """Indices of the agents that can go through ONE batched call: LoRA agents on the same peft
    model (and with equal `keys[i]` when given, e.g. their sampling settings) form a group; every
    other agent is a group of its own."""
    groups: dict = {}
    for i, a in enumerate(agents):
        k = (id(a.model), None if keys is None else keys[i]) if share and a.adapter is not None else ("solo", i)
        groups.setdefault(k, []).append(i)
    return list(groups.values())


def sample_completions(agents, prompts: Sequence[Sequence[str]], num_generations: int, gen: dict,
                       batch_agents: bool = True) -> list[Completions]:
    """`plain.sample(agents[i], prompts[i], G, **gen)` for every agent i (with its own
    `generation_kwargs` on top of `gen`), rows prompt-major: row = prompt_index * G + g.

    Agents that share one peft model and the same sampling settings are batched into ONE generate
    call with per-row adapters (batch_agents=False: one call per agent); all others get one call each.
    A prompt that with max_new_tokens does not fit in the model's context raises PromptTooLongError
    (`common.check_prompt_lengths`) before anything is generated.
    """
    for agent, ps in zip(agents, prompts):
        check_prompt_lengths(agent, ps, max_new_tokens_of(agent.model, generation_settings(gen, agent)))
    G = num_generations
    results: list[Optional[Completions]] = [None] * len(agents)
    groups = shared_base_groups(agents, share=batch_agents,
                                keys=[tuple(sorted(generation_settings(gen, a).items())) for a in agents])
    for members in groups:
        lead = agents[members[0]]
        lead_gen = generation_settings(gen, lead)
        rows: list[str] = []
        spans = []
        for i in members:
            start = len(rows)
            rows += [p for p in prompts[i] for _ in range(G)]
            spans.append((i, start, len(rows)))
        row_adapters = None
        if lead.adapter is not None:
            row_adapters = [agents[i].adapter for i, s, e in spans for _ in range(e - s)]
        ids, mask, comp = _generate(lead.model, lead.tokenizer, rows, lead_gen, row_adapters, lead.device)
        sampling = sampler_settings(lead.model, lead_gen)  # what generate sampled with (step 6 scores the tokens so)
        for i, s, e in spans:
            # Each agent keeps only its rows; strip the left padding the other agents' prompts added.
            keep = mask[s:e].any(0)
            first = int(keep.nonzero()[0]) if keep.any() else 0
            results[i] = completions_from(agents[i], ids[s:e, first:], mask[s:e, first:], comp[s:e], sampling)
    return results  # type: ignore[return-value]


def _generate(model, tokenizer, prompts: list[str], gen: dict, row_adapters, device) -> tuple:
    """Sample a completion for every row. The G rows of one prompt share ONE prefill: each distinct
    prompt (but its last token) is run once and its KV cache copied to its G rows, which `generate`
    then continues - the prompt is not recomputed G times."""
    enc = tokenizer(prompts, return_tensors="pt", padding=True)
    ids, mask = enc["input_ids"].to(device), enc["attention_mask"].to(device)
    beams = gen.get("num_beams", 1) > 1  # beam search expands the batch inside generate: peft's own routing
    shared = {}
    with torch.inference_mode():
        starts, inverse = _prompt_runs(ids, mask, row_adapters)
        if not beams and len(starts) < len(inverse) and bool(mask[starts, :-1].any(-1).all()):
            prefill = _shared_prompt_cache(model, ids[:, :-1], mask[:, :-1], row_adapters, starts, inverse)
            if prefill is not None:
                shared = {CACHE_KWARG: prefill[0]}
        routing = (nullcontext({} if row_adapters is None else {"adapter_names": list(row_adapters)}) if beams
                   else adapter_rows(model, row_adapters, lean=True))
        with routing as extra:
            out = model.generate(input_ids=ids, attention_mask=mask, do_sample=True, use_cache=True,
                                 pad_token_id=tokenizer.pad_token_id, **gen, **extra, **shared)
    return ids, mask, out[:, ids.shape[1]:]


# --------------------------------------------------------------------------------------------------
# Step 6: log-probs of a team
# --------------------------------------------------------------------------------------------------
def team_logprobs(agents, comps: Sequence[Completions], per_token: bool = False) -> list[torch.Tensor]:
    """`plain.logprobs(agents[i], comps[i], per_token)` for every agent i. Agents that share one peft
    base go through ONE batch: all their rows together, each row routed through its own agent's
    adapter (`adapter_rows`); agents whose completions were sampled with other settings
    (`Completions.sampling`), and other agents, get one batch each. Same values, fewer passes.
    per_token=True: the (B_i, C_i) token log-probs (masked positions 0) instead of their sums."""
    out: list[Optional[torch.Tensor]] = [None] * len(agents)
    fn = token_logprobs if per_token else _logprobs
    settings = [tuple(sorted((c.sampling or {}).items())) for c in comps]
    for members in shared_base_groups(agents, keys=settings):
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


def token_logprobs(model, c: Completions, row_adapters: Optional[Sequence[str]],
                   sampling: Optional[dict] = None) -> torch.Tensor:
    """log pi(a_t | prompt, a_<t) per row and completion token, (B, C), 0 at masked positions; row r
    through peft adapter `row_adapters[r]` (None: the model's own path; "__base__": no adapter).
    pi: the logits through the warpers of `sampling`, by default `c.sampling` (the settings the
    tokens were drawn with; `common.sampled_token_logprobs`, as the plain path).

    The G rows of one prompt share one prompt forward (its KV cache is copied to each row), so the
    prompt is computed once per agent and node instead of G times: the same values (tested against
    `plain.logprobs`, a plain forward over [prompt; completion]), and gradients flow through the
    shared prompt states exactly as through G copies. Only the completion positions' logits are
    materialised."""
    C = c.completion_ids.shape[1]
    attn = torch.cat([c.prompt_mask, c.completion_mask.to(c.prompt_mask.dtype)], dim=1)
    pos = (attn.cumsum(-1) - 1).clamp(min=0)
    starts, inverse = _prompt_runs(c.prompt_ids, c.prompt_mask, row_adapters)
    shared = None
    if len(starts) < len(inverse) and C > 1 and not _checkpointing(model):
        shared = _shared_prompt_cache(model, c.prompt_ids, c.prompt_mask, row_adapters, starts, inverse)
    if shared is None and _checkpointing(model):  # activation checkpointing (`common.checkpointed_layers`)
        ids = torch.cat([c.prompt_ids, c.completion_ids], dim=1)
        # The lean routing (each LoRA Linear's forward replaced for the call), and the SAME routing again
        # when the backward pass recomputes a layer, after this call has returned.
        route = lambda: adapter_rows(model, row_adapters, lean=True)  # noqa: E731
        with route() as extra, checkpointed_layers(model, recompute=route):
            if extra:
                raise NotImplementedError(
                    "activation checkpointing needs the agents' LoRA layers to be plain LoRA Linear layers that this "
                    "library routes itself (not DoRA or other variants, merged weights, or forwards patched by "
                    "another library): the backward pass recomputes each layer after the call, when peft's own "
                    "routing is gone. Switch checkpointing off for these agents.")
            out = model(input_ids=ids, attention_mask=attn, position_ids=pos, use_cache=False, logits_to_keep=C + 1)
        logits = out.logits[:, -(C + 1):-1, :]
    elif shared is None:  # one forward over [prompt; completion] for all rows
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
                        use_cache=True, **{CACHE_KWARG: cache}, **extra)
        logits = torch.cat([first[:, None], out.logits], dim=1)
    logp = sampled_token_logprobs(logits, c.completion_ids, c.sampling if sampling is None else sampling)
    return logp * c.completion_mask


def _logprobs(model, c: Completions, row_adapters: Optional[Sequence[str]]) -> torch.Tensor:
    """sum_t log pi(a_t | prompt, a_<t) per row, (B,): `token_logprobs` summed over the completion."""
    return token_logprobs(model, c, row_adapters).sum(-1)


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
                       [t for c in parts for t in c.texts], parts[0].sampling)  # team_logprobs: all parts share it


# --------------------------------------------------------------------------------------------------
# Speedup 3: the prompt once, not G times
# --------------------------------------------------------------------------------------------------
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


def _cache_kwarg() -> str:
    """The name under which `generate` and a model's forward take a KV cache: `cache` in transformers'
    current API (5.x: `past_key_values` still works there, with a FutureWarning on every call, and the
    forward drops it in 5.40), `past_key_values` in the releases before `cache` existed."""
    import inspect

    from transformers import GenerationMixin

    return "cache" if "cache" in inspect.signature(GenerationMixin.prepare_inputs_for_generation).parameters \
        else "past_key_values"


CACHE_KWARG = _cache_kwarg()


def output_cache(out):
    """The KV cache a forward returned (`out.cache`; `out.past_key_values` before transformers renamed
    it, a name that now logs a deprecation notice when read)."""
    return getattr(out, "cache") if CACHE_KWARG == "cache" else getattr(out, "past_key_values", None)


def _checkpointing(model) -> bool:
    """Activation checkpointing will run in this forward (`common.checkpointed_layers`): transformers
    then drops the KV cache, so the prompt cannot be shared; each row runs its whole sequence."""
    return torch.is_grad_enabled() and bool(checkpointing_layers(model))


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
    cache = output_cache(out)
    if cache is None or not hasattr(cache, "batch_select_indices"):
        return None
    cache.batch_select_indices(inverse)
    return cache, out.logits[:, -1][inverse]


# --------------------------------------------------------------------------------------------------
# Speedups 1 and 2: several adapters in one call, each through a slice of the rows
# --------------------------------------------------------------------------------------------------
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
def adapter_rows(model, row_adapters: Optional[Sequence[str]], lean: bool = False):
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

    lean=True (sampling, where every decoding step calls every LoRA layer once): the same sum, with
    peft's own code skipped - for the duration of the call each LoRA Linear's forward IS base layer
    plus the slices (an instance attribute over peft's method), and no adapter_names go to peft, so
    neither peft's per-layer pre-hooks, its argument checks and per-row index lists, nor a forward
    hook run. The same operations on the same tensors in the same order as the hook: bit for bit the
    same logits and sampled tokens (tests/test_algorithm.py), less Python per decoding step
    (benchmarks/PROFILE.md, "One sampling call per token"). Under a gradient, a forward that activation
    checkpointing re-runs after the call would miss the replacement: `token_logprobs` then enters the
    same routing again for the recomputation (`common.checkpointed_layers`' `recompute`).
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

    def plan_of(layer):
        # (rows, A, B, dropout or None, scaling) per adapter: rows None for all of them; A and B as
        # (weight, bias) for F.linear, what nn.Linear.forward calls; None for peft's nn.Identity dropout
        # (lora_dropout=0). The same operations as the modules, without a Module call each.
        return [(slice(s, e) if e - s < n_rows else None,
                 (layer.lora_A[name].weight, layer.lora_A[name].bias), (layer.lora_B[name].weight, layer.lora_B[name].bias),
                 None if isinstance(layer.lora_dropout[name], torch.nn.Identity) else layer.lora_dropout[name],
                 layer.scaling[name])
                for name, s, e in spans if name in layer.lora_A]

    linear = torch.nn.functional.linear

    def add_adapters_to(output, x, plan):  # output = the frozen base's x W^T (+ b)
        if x.shape[0] != n_rows:  # a call that expands the batch (beam search): route with adapter_names=
            raise RuntimeError(f"adapter_rows: a batch of {x.shape[0]} rows met {n_rows} adapter names; "
                               "for calls that expand the batch pass peft's adapter_names= instead.")
        for rows, a, b, drop, scale in plan:  # output[rows] += scale * B(A(dropout(x[rows]))); rows None: all
            h = x if rows is None else x[rows]
            h = h if h.dtype == a[0].dtype else h.to(a[0].dtype)
            h = linear(linear(h if drop is None else drop(h), *a), *b) * scale
            h = h if h.dtype == output.dtype else h.to(output.dtype)
            if rows is None:
                output += h
            else:
                output[rows] += h
        return output

    if lean and not any("forward" in vars(m) for m in layers):  # (a forward already patched, e.g. accelerate's: hooks)
        def lean_forward(layer):
            base, plan = layer.base_layer, plan_of(layer)
            stacked = _stacked_adapters(layer, spans, n_rows)

            def forward(x, *args, **kwargs):
                output = base(x, *args, **kwargs)
                if stacked is not None and x.shape[0] == n_rows and output.is_contiguous():
                    return _add_stacked_adapters(output, x, *stacked)
                return add_adapters_to(output, x, plan)
            return forward

        for m in layers:
            m.forward = lean_forward(m)
        try:
            yield {}
        finally:
            for m in layers:
                vars(m).pop("forward", None)
        return

    def hook_for(layer):
        plan = plan_of(layer)

        def add_adapters(module, args, output):
            return add_adapters_to(output, args[0], plan)
        return add_adapters

    handles = [m.register_forward_hook(hook_for(m)) for m in layers]
    try:
        yield {"adapter_names": ["__base__"] * n_rows}
    finally:
        for h in handles:
            h.remove()


# --------------------------------------------------------------------------------------------------
# On a GPU: every agent's adapter in two batched matmuls
# --------------------------------------------------------------------------------------------------
STACKED_ADAPTERS_ON = ("cuda",)
"""Device types on which sampling (`adapter_rows(..., lean=True)`) adds the agents' adapters with ONE
batched matmul pair per layer (`_add_stacked_adapters`) instead of a slice, two matmuls, a scale and an
add per agent. A decoding step on a GPU is bound by kernel launches, not arithmetic (benchmarks/
RESULTS_cuda.md): this cuts the LoRA kernels per layer and token from about 5 per agent to 2 in all. Not on
the CPU, whose histories stay bit for bit what they were (the batched sum rounds in another order);
tests/test_algorithm.py checks the values against the per-agent slices on the CPU by adding "cpu" here."""


def _stacked_adapters(layer, spans, n_rows):
    """(A, B) stacked over the agents for `_add_stacked_adapters`, A (n, d_in, r) and B (n, r, d_out)
    with each adapter's scaling folded into its B; None where the batched form does not apply: under a
    gradient (sampling runs without one), on a device type not in STACKED_ADAPTERS_ON, fewer than two
    spans, spans of unequal length (the rows cannot be viewed as (n, k, d)), an agent without an adapter
    in this layer, LoRA biases or dropout, or adapters of different ranks or dtypes."""
    if torch.is_grad_enabled() or len(spans) < 2 or len({e - s for _, s, e in spans}) > 1 or spans[-1][2] != n_rows:
        return None
    names = [name for name, _, _ in spans]
    if not all(name in layer.lora_A for name in names):
        return None
    As = [layer.lora_A[name] for name in names]
    Bs = [layer.lora_B[name] for name in names]
    if As[0].weight.device.type not in STACKED_ADAPTERS_ON:
        return None
    if (any(m.bias is not None for m in As + Bs)
            or not all(isinstance(layer.lora_dropout[name], torch.nn.Identity) for name in names)
            or len({(a.weight.shape, a.weight.dtype, b.weight.shape, b.weight.dtype) for a, b in zip(As, Bs)}) > 1):
        return None
    A = torch.stack([a.weight.t() for a in As])                                        # (n, d_in, r)
    B = torch.stack([b.weight.t() * layer.scaling[name] for b, name in zip(Bs, names)])  # (n, r, d_out)
    return A, B


def _add_stacked_adapters(output, x, A, B):
    """output += scaling_i * B_i(A_i(x)) for every agent i's block of rows at once: the rows, agent-major,
    viewed as (n, k * T, d) and multiplied by the stacked adapters (one bmm and one baddbmm). The same
    sum as `adapter_rows`' per-agent slices, up to float rounding."""
    h = x.reshape(A.shape[0], -1, x.shape[-1])
    h = torch.bmm(h if h.dtype == A.dtype else h.to(A.dtype), A)  # (n, k * T, r)
    out = output.view(A.shape[0], -1, output.shape[-1])
    if out.dtype == h.dtype:
        out.baddbmm_(h, B)
    else:
        out += torch.bmm(h, B).to(out.dtype)
    return output
