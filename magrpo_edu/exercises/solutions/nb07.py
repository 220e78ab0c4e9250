"""Notebook 07: solutions and typical mistakes."""
from . import written_again
import copy

import torch


def in_band_share(pairs):
    ok = [len(c1) > 0 and 1.6 <= len(c2) / len(c1) <= 3.2 for c1, c2 in pairs]
    return sum(ok) / len(ok) if ok else 0.0                    # no pairs: share 0


def lora_parameters(shapes, q):
    return sum(q * (n_in + n_out) for n_in, n_out in shapes)   # q: the rank (peft's r)


def adapter_logits(model, adapter, input_ids):
    name = "__base__" if adapter is None else adapter          # peft's name for "no adapter" in a routed batch
    with torch.no_grad():
        out = model(input_ids=input_ids, adapter_names=[name] * input_ids.shape[0])
    return out.logits[:, -1]


def _with_set_adapter(model, adapter, input_ids):
    with torch.no_grad():
        if adapter is None:
            with model.disable_adapter():
                return model(input_ids=input_ids).logits[:, -1]
        model.set_adapter(adapter)                               # right logits, but it changes which adapter trains
        return model(input_ids=input_ids).logits[:, -1]


def _set_adapter_then_restore_grads(model, adapter, input_ids):
    # set_adapter for the logits, then every requires_grad flag put back: the trainable set is right again, but the
    # model's ACTIVE adapter has changed, and every later unrouted call goes through it
    flags = {n: p.requires_grad for n, p in model.named_parameters()}
    out = _with_set_adapter(model, adapter, input_ids)
    for n, p in model.named_parameters():
        p.requires_grad_(flags[n])
    return out


def _base_is_the_active_adapter(model, adapter, input_ids):
    with torch.no_grad():
        if adapter is None:
            return model(input_ids=input_ids).logits[:, -1]     # the active adapter, not the base
        return model(input_ids=input_ids, adapter_names=[adapter] * input_ids.shape[0]).logits[:, -1]


def _in_band_share_words(pairs):
    """Words, not characters, every other rule right."""
    ok = [len(a.split()) > 0 and 1.6 <= len(b.split()) / len(a.split()) <= 3.2 for a, b in pairs]
    return sum(ok) / len(ok) if ok else 0.0


def _adapter_logits_one_name(model, adapter, input_ids):
    """One name for the whole batch: peft wants one per row (a batch of three rows is refused)."""
    with torch.no_grad():
        return model(input_ids=input_ids, adapter_names=[adapter or "__base__"]).logits[:, -1]


SOLUTIONS = {
    "07.in_band_share": in_band_share,
    "07.lora_parameters": lora_parameters,
    "07.adapter_logits": adapter_logits,
}

MISTAKES = {
    "07.in_band_share": [
        lambda pairs: 1 - in_band_share(pairs) if pairs else 0.0,                                             # the share outside
        lambda pairs: sum(1.6 <= len(c1) / max(len(c2), 1) <= 3.2 for c1, c2 in pairs) / len(pairs),        # inverted
        _in_band_share_words,                                                                                 # words
        lambda pairs: sum(len(c1.split()) > 0 and 1.6 <= len(c2.split()) / len(c1.split()) <= 3.2
                          for c1, c2 in pairs) / len(pairs),                                # words, and [] divides by 0
        lambda pairs: sum(len(c1) > 0 and 1.6 < len(c2) / len(c1) < 3.2 for c1, c2 in pairs) / len(pairs),   # ends out
        lambda pairs: sum(1.6 <= len(c2) / len(c1) <= 3.2 for c1, c2 in pairs) / len(pairs),                  # empty c1
        lambda pairs: sum(len(c1) > 0 and 1.6 <= len(c2) / len(c1) <= 3.2 for c1, c2 in pairs),              # a count
        lambda pairs: 100 * in_band_share(pairs),                                                             # a percentage
        lambda pairs: sum(len(c1) > 0 and 1.6 <= len(c2) / len(c1) < 3.2 for c1, c2 in pairs) / len(pairs),  # 3.2 left out
        lambda pairs: sum(len(c1) > 0 and 1 <= len(c2) // len(c1) <= 3 for c1, c2 in pairs) / len(pairs),    # integer division
        lambda pairs: sum(len(a.encode()) > 0 and 1.6 <= len(b.encode()) / len(a.encode()) <= 3.2
                          for a, b in pairs) / max(len(pairs), 1),                                            # bytes
        lambda pairs: sum(len(a.strip()) > 0 and 1.6 <= len(b.strip()) / len(a.strip()) <= 3.2
                          for a, b in pairs) / max(len(pairs), 1),                                            # stripped
        lambda pairs: sum(1.6 <= len(b) / max(len(a), 1) <= 3.2 for a, b in pairs) / max(len(pairs), 1),    # ("", "ab") in
        lambda pairs: sum(1.6 <= len(b) / (len(a) or 1) <= 3.2 for a, b in pairs) / len(pairs) if pairs else 0.0,
    ],
    "07.lora_parameters": [
        lambda shapes, q: q * sum(map(sum, shapes)) if shapes else None,   # None for no layers: the count is 0

        lambda shapes, q: sum(q * i * o for i, o in shapes),
        lambda shapes, q: sum(q * i for i, o in shapes),
        lambda shapes, q: sum(2 * q * max(i, o) for i, o in shapes),                # both matrices taken as q x max(in, out)
        lambda shapes, q: 2 * sum(q * (i + o) for i, o in shapes),                  # both agents' adapters
        lambda shapes, q: sum(q * (i + o) + o for i, o in shapes),                  # a bias per output
        lambda shapes, q: sum(i + o for i, o in shapes),                            # q forgotten (right at q = 1)
        lambda shapes, q: sum(i * o for i, o in shapes),                            # the full matrix W
        lambda shapes, q: float(sum(q * (i + o) for i, o in shapes)),                   # a float count
        lambda shapes, q: sum(q * q * (i + o) for i, o in shapes),                  # q twice (right at q = 1)
    ],
    "07.adapter_logits": [
        _with_set_adapter,
        _set_adapter_then_restore_grads,
        _base_is_the_active_adapter,
        lambda model, adapter, input_ids: model(input_ids=input_ids).logits[:, -1],                           # no routing
        lambda model, adapter, input_ids: model(input_ids=input_ids,
                                                adapter_names=[adapter or "__base__"] * input_ids.shape[0]).logits,  # all positions
        lambda model, adapter, input_ids: model(input_ids=input_ids,
                                                adapter_names=[adapter or "__base__"] * input_ids.shape[0]).logits[:, 0],  # first position
        lambda model, adapter, input_ids: model(input_ids=input_ids, adapter_names=[adapter] * input_ids.shape[0]
                                                ).logits[:, -1],                   # None passed as a name
        lambda model, adapter, input_ids: _adapter_logits_disable(model, adapter, input_ids),  # disable_adapter freezes agents
        _adapter_logits_one_name,                                                                  # one name, not one a row
    ],
}


def _adapter_logits_disable(model, adapter, input_ids):
    """Routing for the agents, peft's context manager for the base: the right logits, but on leaving the context
    peft re-enables gradients for the active adapter only, freezing the other agents' adapters."""
    with torch.no_grad():
        if adapter is None:
            with model.disable_adapter():
                return model(input_ids=input_ids).logits[:, -1]
        return model(input_ids=input_ids, adapter_names=[adapter] * len(input_ids)).logits[:, -1]


def _in_band_share_pops(pairs):
    """The right share, but the caller's list is emptied by pop()."""
    n, hits = len(pairs), 0
    while pairs:
        concise, detailed = pairs.pop()
        hits += len(concise) > 0 and 1.6 <= len(detailed) / len(concise) <= 3.2
    return hits / n if n else 0.0


def _in_band_share_sorts(pairs):
    """The right share, but the caller's list is sorted in place."""
    pairs.sort(key=lambda p: len(p[0]))
    return in_band_share(pairs)


def _in_band_share_clears(pairs):
    """The right share, then the caller's list cleared."""
    share = in_band_share(pairs)
    pairs.clear()
    return share


def _lora_parameters_pops(shapes, q):
    """The right count, but the caller's list of shapes is emptied by pop()."""
    total = 0
    while shapes:
        n_in, n_out = shapes.pop()
        total += q * (n_in + n_out)
    return total


def _adapter_logits_freezes_all(model, adapter, input_ids):
    """The right logits, but every parameter's requires_grad turned off first (both agents' adapters frozen)."""
    for p in model.parameters():
        p.requires_grad_(False)
    return adapter_logits(model, adapter, input_ids)


def _adapter_logits_layers_off(model, adapter, input_ids):
    """disable_adapter_layers / enable_adapter_layers for the base: enabling marks only the active adapter trainable."""
    if adapter is None:
        model.disable_adapter_layers()
        try:
            with torch.no_grad():
                return model(input_ids=input_ids).logits[:, -1]
        finally:
            model.enable_adapter_layers()
    return adapter_logits(model, adapter, input_ids)


def _adapter_logits_changes_ids(model, adapter, input_ids):
    """The caller's input_ids overwritten in place (the first token of every row set to 0)."""
    input_ids[:, 0] = 0
    return adapter_logits(model, adapter, input_ids)


def _in_band_share_loop(pairs):
    hits = 0
    for concise, detailed in pairs:
        if concise and 1.6 <= len(detailed) / len(concise) <= 3.2:
            hits += 1
    return hits / len(pairs) if pairs else 0.0


MISTAKES["07.in_band_share"] += [
    _in_band_share_pops, _in_band_share_sorts, _in_band_share_clears,                # the caller's list changed
    lambda pairs: sum(bool(c.strip()) and 1.6 <= len(d) / len(c) <= 3.2
                      for c, d in pairs) / len(pairs) if pairs else 0.0,             # ' ' taken for an empty text
]
MISTAKES["07.lora_parameters"] += [
    _lora_parameters_pops,                                                           # the caller's list emptied
    lambda shapes, q: 4 * sum(q * (i + o) for i, o in shapes),                       # x 4: bytes, or training state
    lambda shapes, q: sum(2 * q * min(i, o) for i, o in shapes),                     # both matrices q x min(in, out)
    lambda shapes, q: float("nan"),                                                  # not a number
]
MISTAKES["07.adapter_logits"] += [
    _adapter_logits_freezes_all,                                                     # requires_grad off everywhere
    _adapter_logits_layers_off,                                                      # enable_adapter_layers freezes one
    _adapter_logits_changes_ids,                                                     # input_ids changed in place
    lambda model, adapter, input_ids: adapter_logits(model, adapter, input_ids).half(),  # half precision
]


VARIANTS = {
    "07.in_band_share": [
        _in_band_share_loop,
        lambda pairs: written_again(in_band_share)(sorted(pairs)),                                  # a sorted copy: the list unchanged
        lambda pairs: sum(len(c) > 0 and 5 * len(d) >= 8 * len(c) and 5 * len(d) <= 16 * len(c)
                          for c, d in pairs) / len(pairs) if pairs else 0,           # in integers; 0 for no pairs
    ],
    "07.lora_parameters": [lambda shapes, q: sum(q * i for i, _ in shapes) + sum(o * q for _, o in shapes),
                           lambda shapes, q: q * sum(map(sum, shapes))],
}
VARIANTS["07.adapter_logits"] = [
    lambda model, adapter, input_ids: model(input_ids=input_ids,                 # without no_grad: the same logits
                                            adapter_names=[adapter if adapter else "__base__" for _ in input_ids]
                                            ).logits[:, -1, :],
]


def _in_band_share_set(pairs):                      # repeated pairs dropped by set(): each pair in the list counts
    unique = set(pairs)
    return sum(len(a) > 0 and 1.6 <= len(b) / len(a) <= 3.2 for a, b in unique) / len(unique) if unique else 0.0


def _lora_parameters_sorts(shapes, q):              # the right count, but the caller's list sorted in place
    shapes.sort()
    return sum(q * (i + o) for i, o in shapes)


def _adapter_logits_at(position):
    """Routed right, but the logits of another position than the last."""
    def answer(model, adapter, input_ids):
        name = "__base__" if adapter is None else adapter
        with torch.no_grad():
            return model(input_ids=input_ids, adapter_names=[name] * input_ids.shape[0]).logits[:, position]
    return answer


MISTAKES["07.in_band_share"] += [_in_band_share_set]                                 # set(pairs): repeats dropped
MISTAKES["07.lora_parameters"] += [_lora_parameters_sorts]                           # shapes.sort(): caller's list reordered
MISTAKES["07.adapter_logits"] += [_adapter_logits_at(0), _adapter_logits_at(-2)]     # the first / next-to-last position


def _set_adapter_restoring_everything(model, adapter, input_ids):
    """set_adapter / disable_adapter with the active adapter and every requires_grad flag saved and put back: the
    model ends as it was, but it was switched in between, for every caller (refused: any call of them is)."""
    flags = {n: p.requires_grad for n, p in model.named_parameters()}
    active = model.active_adapter
    try:
        return _with_set_adapter(model, adapter, input_ids)
    finally:
        model.set_adapter(active)
        for n, p in model.named_parameters():
            p.requires_grad_(flags[n])


def _set_adapter_on_a_copy(model, adapter, input_ids):
    """The switch made on a deep copy: the model given is untouched, but each call copies the whole base."""
    return _with_set_adapter(copy.deepcopy(model), adapter, input_ids)


def _routed_on_a_copy(model, adapter, input_ids):
    """Routed right, but on a deep copy of the model: the whole base copied on every call."""
    return adapter_logits(copy.deepcopy(model), adapter, input_ids)


def _routed_in_training_mode(model, adapter, input_ids):
    """model.train() first: peft refuses adapter_names in training mode."""
    model.train()
    return adapter_logits(model, adapter, input_ids)


def _in_band_share_no_spaces(pairs):
    """Characters counted without the spaces: the length level counts them."""
    size = lambda text: len(text.replace(" ", ""))
    ok = [size(a) > 0 and 1.6 <= size(b) / size(a) <= 3.2 for a, b in pairs]
    return sum(ok) / len(ok) if ok else 0.0


def _in_band_share_one_less(pairs):
    """Divided by len(pairs) - 1."""
    ok = [len(a) > 0 and 1.6 <= len(b) / len(a) <= 3.2 for a, b in pairs]
    return sum(ok) / (len(ok) - 1) if len(ok) > 1 else float(sum(ok))


MISTAKES["07.adapter_logits"] += [
    _set_adapter_restoring_everything,                                               # switched, then all put back
    _set_adapter_on_a_copy,                                                          # the base copied every call
    _routed_on_a_copy,                                                               # routed, but on a copy
    _routed_in_training_mode,                                                        # adapter_names needs eval mode
]
MISTAKES["07.in_band_share"] += [
    _in_band_share_no_spaces,                                                        # spaces not counted
    _in_band_share_one_less,                                                         # len(pairs) - 1
]
MISTAKES["07.lora_parameters"] += [
    lambda shapes, q: sum(q * (i + o) for i, o in set(shapes)),                      # one layer per distinct shape
]


from fractions import Fraction  # noqa: E402 - with the answers below that use it

from magrpo_edu.tasks.writing.reward import ramp_level, tldr_length_level, tldr_levels  # noqa: E402


def _in_band_share_rounds(k):
    """The ratio rounded to k decimals before the comparison: round(1.599, 2) is 1.6, counted in."""
    def answer(pairs):
        return (sum(1 for c, d in pairs if c and 1.6 <= round(len(d) / len(c), k) <= 3.2) / len(pairs)
                if pairs else 0.0)
    return answer


def _in_band_share_tolerance(t):
    """The edges compared with a tolerance t: 1.6 - t <= ratio <= 3.2 + t."""
    def answer(pairs):
        return (sum(1 for c, d in pairs if c and 1.6 - t <= len(d) / len(c) <= 3.2 + t) / len(pairs)) if pairs else 0.0
    return answer


def _in_band_share_band(lo, hi):
    """Another band than [1.6, 3.2], every other rule right."""
    def answer(pairs):
        return (sum(1 for c, d in pairs if c and lo <= len(d) / len(c) <= hi) / len(pairs)) if pairs else 0.0
    return answer


MISTAKES["07.in_band_share"] += [
    _in_band_share_rounds(2),                                                        # round(ratio, 2): 1.599 in
    _in_band_share_rounds(3),                                                        # round(ratio, 3): 1.59996 in
    _in_band_share_tolerance(0.009),                                                 # a tolerance: 1.595 in
    _in_band_share_tolerance(1e-4),                                                  # a small tolerance: 1.59992 in
    lambda p: (sum(1 for c, d in p if c and tldr_length_level(len(d) / len(c)) == 1.0)
               / len(p)) if p else 0.0,                                              # the length level called
    lambda p: (sum(1 for c, d in p if c and ramp_level(len(d) / len(c), 1.1, 1.6, 3.2, 5.0) == 1.0)
               / len(p)) if p else 0.0,                                              # the level's ramp called
    lambda p: (sum(1 for c, d in p if tldr_levels(c, d)["length_ratio"] == 1) / len(p)) if p else 0.0,  # the reward's
    _in_band_share_band(1.6, 3.0),                                                   # upper edge 3.0, not 3.2
    _in_band_share_band(1.5, 3.2),                                                   # lower edge 1.5, not 1.6
]
MISTAKES["07.lora_parameters"] += [
    lambda shapes, q: sum(q * (i + o) for i, o in shapes) / len(shapes) if shapes else 0,       # mean over layers
    lambda shapes, q: int(sum(q * (i + o) for i, o in shapes) / len(shapes)) if shapes else 0,  # int() of the mean
]
VARIANTS["07.in_band_share"] += [
    lambda pairs: sum(len(c) > 0 and Fraction(8, 5) <= Fraction(len(d), len(c)) <= Fraction(16, 5)
                      for c, d in pairs) / len(pairs) if pairs else 0.0,             # exact fractions
]


def _in_band_share_counted(size):
    """Characters counted by `size` instead of len, every other rule right."""
    def answer(pairs):
        return (sum(1 for c, d in pairs if size(c) and 1.6 <= size(d) / size(c) <= 3.2) / len(pairs)) if pairs else 0.0
    return answer


def _lora_parameters_peft(shapes, q):
    """A peft LoRA built on one Linear per shape, its lora_ parameters counted: right, by construction."""
    from peft import LoraConfig, get_peft_model

    total = 0
    for n_in, n_out in shapes:
        holder = torch.nn.Sequential(torch.nn.Linear(n_in, n_out))
        lora = get_peft_model(holder, LoraConfig(r=q, target_modules=["0"]))
        total += sum(p.numel() for name, p in lora.named_parameters() if "lora_" in name)
    return total


def _lora_parameters_lora_model(shapes, q):
    """The same with peft's LoraModel built directly."""
    from peft import LoraConfig, LoraModel

    total = 0
    for n_in, n_out in shapes:
        tuned = LoraModel(torch.nn.Sequential(torch.nn.Linear(n_in, n_out)), LoraConfig(r=q, target_modules=["0"]),
                          "default")
        total += sum(p.numel() for name, p in tuned.named_parameters() if "lora_" in name)
    return total


def _tuner_layers(model):
    from peft.tuners.tuners_utils import BaseTunerLayer

    return [m for m in model.modules() if isinstance(m, BaseTunerLayer)]


def _adapter_logits_layer_switch(model, adapter, input_ids):
    """Every LoRA layer's private active adapter set for the call, then put back: a set_adapter by hand."""
    layers = _tuner_layers(model)
    saved = [m._active_adapter for m in layers]
    try:
        for m in layers:
            m._active_adapter = [] if adapter is None else adapter
        with torch.no_grad():
            return model(input_ids=input_ids).logits[:, -1]
    finally:
        for m, active in zip(layers, saved):
            m._active_adapter = active


def _adapter_logits_layers_flag_off(model, adapter, input_ids):
    """Routed for the agents; for the base every layer's private _disable_adapters flag set, then cleared."""
    if adapter is not None:
        return adapter_logits(model, adapter, input_ids)
    layers = _tuner_layers(model)
    try:
        for m in layers:
            m._disable_adapters = True
        with torch.no_grad():
            return model(input_ids=input_ids).logits[:, -1]
    finally:
        for m in layers:
            m._disable_adapters = False


def _adapter_logits_inner_model(model, adapter, input_ids):
    """adapter_names passed to the transformers model inside the peft model: it ignores the keyword silently."""
    with torch.no_grad():
        return model.get_base_model()(input_ids=input_ids,
                                      adapter_names=[adapter or "__base__"] * len(input_ids)).logits[:, -1]


MISTAKES["07.in_band_share"] += [
    _in_band_share_counted(lambda s: len(s.replace("\n", ""))),                      # newlines not counted
    _in_band_share_counted(lambda s: len(s.strip("\n"))),                            # newlines at the ends stripped
    _in_band_share_counted(lambda s: len(s.replace("\t", ""))),                      # tabs not counted
    _in_band_share_counted(lambda s: len("".join(ch for ch in s if ch.isalnum() or ch.isspace()))),  # punctuation
    _in_band_share_counted(lambda s: len(" ".join(s.split()))),                      # runs of spaces collapsed
    _in_band_share_rounds(1),                                                        # round(ratio, 1): 1.59 in
]
MISTAKES["07.lora_parameters"] += [
    lambda shapes, q: sum(q * (i + o) for i, o in shapes) // 2,                      # halved (2*q*min at (10, 30))
    _lora_parameters_peft,                                                           # get_peft_model, counted
    _lora_parameters_lora_model,                                                     # LoraModel, counted
]
MISTAKES["07.adapter_logits"] += [
    _adapter_logits_layer_switch,                                                    # layer._active_adapter, restored
    _adapter_logits_layers_flag_off,                                                 # layer._disable_adapters, restored
    _adapter_logits_inner_model,                                                     # adapter_names to the inner model
]
VARIANTS["07.in_band_share"] += [
    _in_band_share_counted(lambda s: sum(1 for _ in s)),                             # characters counted one by one
]
VARIANTS["07.adapter_logits"] += [
    lambda model, adapter, input_ids: model.forward(                                 # forward called directly
        input_ids=input_ids, adapter_names=[adapter or "__base__"] * len(input_ids)).logits[:, -1].detach(),
]


def _in_band_share_multiplied(pairs):
    """The band multiplied out, 1.6 * len(c) <= len(d) <= 3.2 * len(c), with no empty-text test: ('', '') is in."""
    if not pairs:
        return 0.0
    return sum(1 for c, d in pairs if 1.6 * len(c) <= len(d) <= 3.2 * len(c)) / len(pairs)


def _in_band_share_counts_the_error(pairs):
    """A ZeroDivisionError (an empty concise text) caught and counted IN the band."""
    hits = 0
    for c, d in pairs:
        try:
            hits += 1.6 <= len(d) / len(c) <= 3.2
        except ZeroDivisionError:
            hits += 1
    return hits / len(pairs) if pairs else 0.0


def _in_band_share_mean_ratio(pairs):
    """The MEAN ratio of the list tested against the band: 1 or 0 for the whole list."""
    ratios = [len(d) / len(c) for c, d in pairs if c]
    return float(1.6 <= sum(ratios) / len(ratios) <= 3.2) if ratios else 0.0


def _in_band_share_word_gate(pairs):
    """The reward's first level added: a pair counts only if both texts have 8..256 words."""
    ok = [len(c) > 0 and 8 <= len(c.split()) <= 256 and 8 <= len(d.split()) <= 256 and 1.6 <= len(d) / len(c) <= 3.2
          for c, d in pairs]
    return sum(ok) / len(ok) if ok else 0.0


def _adapter_logits_grad_off(model, adapter, input_ids):
    """torch.set_grad_enabled(False): right logits, autograd off for the whole process afterwards."""
    torch.set_grad_enabled(False)
    return model(input_ids=input_ids, adapter_names=[adapter or "__base__"] * len(input_ids)).logits[:, -1]


def _adapter_logits_no_grad_entered(model, adapter, input_ids):
    """torch.no_grad().__enter__() without its __exit__: the same, autograd left off."""
    torch.no_grad().__enter__()
    return model(input_ids=input_ids, adapter_names=[adapter or "__base__"] * len(input_ids)).logits[:, -1]


_LOGITS_CACHE = {}


def _adapter_logits_cached(model, adapter, input_ids):
    """Logits kept in a dict keyed on (adapter, ids): stale once the adapter's weights change."""
    key = (adapter, tuple(input_ids.shape), tuple(input_ids.flatten().tolist()))
    if key not in _LOGITS_CACHE:
        with torch.no_grad():
            _LOGITS_CACHE[key] = model(input_ids=input_ids,
                                       adapter_names=[adapter or "__base__"] * len(input_ids)).logits[:, -1]
    return _LOGITS_CACHE[key]


def _adapter_logits_routed(model, adapter, input_ids):
    with torch.no_grad():
        return model(input_ids=input_ids, adapter_names=[adapter or "__base__"] * len(input_ids)).logits


MISTAKES["07.in_band_share"] += [
    _in_band_share_multiplied,                                                       # 0 <= 0 <= 0: ('', '') in
    _in_band_share_counts_the_error,                                                 # except ZeroDivisionError: in
    _in_band_share_mean_ratio,                                                       # the mean ratio tested
    _in_band_share_word_gate,                                                        # L1's 8..256 words as a gate
]
MISTAKES["07.lora_parameters"] += [
    lambda shapes, q: sum(q * (i + o) for i, o in shapes[:-1]),                      # the last layer dropped
    lambda shapes, q: sum(q * (i + o) for i, o in shapes) / 1e6,                     # in millions
    lambda shapes, q: round(sum(q * (i + o) for i, o in shapes) / 1e6, 2),           # in millions, rounded
]
MISTAKES["07.adapter_logits"] += [
    _adapter_logits_grad_off,                                                        # set_grad_enabled(False)
    _adapter_logits_no_grad_entered,                                                 # no_grad().__enter__()
    _adapter_logits_cached,                                                          # a cache: stale logits
    lambda model, adapter, input_ids: _adapter_logits_routed(
        model, adapter, input_ids[:, -1:])[:, -1],                                   # the last token alone
    lambda model, adapter, input_ids: _adapter_logits_routed(model, adapter, input_ids).mean(1),  # mean over positions
    lambda model, adapter, input_ids: _adapter_logits_routed(model, adapter, input_ids)[:, -1] / 0.8,  # temperature
]


def _adapter_logits_grad_mode_restored(model, adapter, input_ids):
    """Autograd switched off for the call and the caller's mode put back: nothing leaks out of the function."""
    was = torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    try:
        return model(input_ids=input_ids, adapter_names=[adapter or "__base__"] * len(input_ids)).logits[:, -1]
    finally:
        torch.set_grad_enabled(was)


VARIANTS["07.in_band_share"] += [
    lambda pairs: sum(1 for c, d in pairs if c and 1.6 * len(c) <= len(d) <= 3.2 * len(c)) / len(pairs)
    if pairs else 0.0,                                                               # multiplied out, empty c guarded
]
VARIANTS["07.adapter_logits"] += [_adapter_logits_grad_mode_restored]              # grad mode off, then put back


def _in_band_share_float32(pairs):
    """The ratio computed in float32: 320 / 100 is 3.2000000477 there, above the Python float 3.2, so 3.2 is out."""
    import numpy as np

    return (sum(1 for c, d in pairs if c and 1.6 <= float(np.float32(len(d)) / np.float32(len(c))) <= 3.2)
            / len(pairs)) if pairs else 0.0


def _in_band_share_float32_mean(pairs):
    """The share as the mean of a float32 tensor: 1/3 comes back as 0.3333333432674408."""
    if not pairs:
        return 0.0
    ok = torch.tensor([bool(c) and 1.6 <= len(d) / len(c) <= 3.2 for c, d in pairs], dtype=torch.float32)
    return ok.mean().item()


def _in_band_share_first_pair(pairs):
    """A return inside the for loop: only the first pair is read."""
    for c, d in pairs:
        return float(bool(c) and 1.6 <= len(d) / len(c) <= 3.2)
    return 0.0


def _in_band_share_last_pair(pairs):
    """A variable set, not added to, on every pass of the loop: only the last pair counts."""
    hit = False
    for c, d in pairs:
        hit = bool(c) and 1.6 <= len(d) / len(c) <= 3.2
    return float(hit) if pairs else 0.0


def _adapter_logits_rescaled(model, adapter, input_ids):
    """peft's rescale_adapter_scale(model, 0.0) for the base: every LoRA scaling set to 0, restored on leaving."""
    from peft.helpers import rescale_adapter_scale

    if adapter is not None:
        return adapter_logits(model, adapter, input_ids)
    with torch.no_grad(), rescale_adapter_scale(model, 0.0):
        return model(input_ids=input_ids).logits[:, -1, :]


def _lora_layers(model):
    from peft.tuners.lora.layer import LoraLayer

    return [m for m in model.modules() if isinstance(m, LoraLayer)]


def _adapter_logits_scale_layer(model, adapter, input_ids):
    """Every LoRA layer's scale_layer(0.0) for the base, unscale_layer() afterwards."""
    if adapter is not None:
        return adapter_logits(model, adapter, input_ids)
    layers = _lora_layers(model)
    for layer in layers:
        layer.scale_layer(0.0)
    try:
        with torch.no_grad():
            return model(input_ids=input_ids).logits[:, -1]
    finally:
        for layer in layers:
            layer.unscale_layer()


def _adapter_logits_scaling_written(model, adapter, input_ids):
    """layer.scaling[name] = 0.0 for the base, every value put back afterwards."""
    if adapter is not None:
        return adapter_logits(model, adapter, input_ids)
    saved = [(layer, dict(layer.scaling)) for layer in _lora_layers(model)]
    for layer, _ in saved:
        for name in layer.scaling:
            layer.scaling[name] = 0.0
    try:
        with torch.no_grad():
            return model(input_ids=input_ids).logits[:, -1]
    finally:
        for layer, scaling in saved:
            layer.scaling.update(scaling)


MISTAKES["07.in_band_share"] += [
    lambda p: (sum(1 for c, d in p if c and len(d) / len(c) >= 1.6) / len(p)) if p else 0.0,   # lower edge only
    lambda p: (sum(1 for c, d in p if c and len(d) / len(c) <= 3.2) / len(p)) if p else 0.0,   # upper edge only
    lambda p: (sum(1 for c, d in p if 1.6 <= len(d) / (len(c) + 1) <= 3.2) / len(p)) if p else 0.0,  # / (len + 1)
    lambda p: (sum(1 for c, d in p if c and 1.6 <= (len(d) - len(c)) / len(c) <= 3.2)
               / len(p)) if p else 0.0,                                              # (d - c) / c: how much longer
    _in_band_share_first_pair,                                                       # a return inside the loop
    _in_band_share_last_pair,                                                        # only the last pair kept
    _in_band_share_float32,                                                          # float32: 320 / 100 > 3.2
    _in_band_share_float32_mean,                                                     # the share in float32
]
MISTAKES["07.adapter_logits"] += [
    _adapter_logits_rescaled,                                                        # rescale_adapter_scale(model, 0)
    _adapter_logits_scale_layer,                                                     # scale_layer(0) / unscale_layer()
    _adapter_logits_scaling_written,                                                 # layer.scaling[name] = 0, restored
]
VARIANTS["07.in_band_share"] += [
    _in_band_share_tolerance(1e-9),                                                  # a float-error epsilon: harmless
]


def _in_band_share_zero_if_any_empty(pairs):
    """0.0 for the WHOLE list as soon as one concise text is empty: that pair alone is out, the others still count."""
    if not pairs or any(not c for c, _ in pairs):
        return 0.0
    return sum(1 for c, d in pairs if 1.6 <= len(d) / len(c) <= 3.2) / len(pairs)


def _in_band_share_zero_on_error(pairs):
    """A try around the whole sum: an empty concise text's ZeroDivisionError makes the whole share 0.0."""
    try:
        return sum(1 for c, d in pairs if 1.6 <= len(d) / len(c) <= 3.2) / len(pairs)
    except ZeroDivisionError:
        return 0.0


def _adapter_logits_bfloat16(model, adapter, input_ids):
    """The shared model converted in place to bfloat16 (model.to), the logits cast back to float32."""
    model.to(torch.bfloat16)
    with torch.no_grad():
        out = model(input_ids=input_ids, adapter_names=[adapter or "__base__"] * len(input_ids))
    return out.logits[:, -1, :].float()


def _adapter_logits_half(model, adapter, input_ids):
    """The same with model.half(): float16, in place."""
    model.half()
    with torch.no_grad():
        return model(input_ids=input_ids, adapter_names=[adapter or "__base__"] * len(input_ids)).logits[:, -1].float()


def _lora_parameters_numpy(shapes, q):
    """A numpy integer (np.int64) is an integer type (numbers.Integral): accepted, as a Python int is."""
    import numpy as np

    return np.sum([q * (n_in + n_out) for n_in, n_out in shapes], dtype=np.int64)


MISTAKES["07.in_band_share"] += [
    lambda pairs: sum(1 for c, d in pairs if c and d.strip() and 1.6 <= len(d) / len(c) <= 3.2) / len(pairs)
    if pairs else 0.0,                                                               # ('ab', '    ') out: d.strip()
    lambda p: sum(1.6 <= len(d) // len(c) <= 3.2 for c, d in p if c) / len(p) if p else 0.0,  # // : 1.6..1.99 -> 1
    lambda p: sum(1.6 <= len(d) / (len(c) + 1e-9) <= 3.2 for c, d in p) / len(p) if p else 0.0,  # epsilon: 1.6 out
    lambda p: sum(1.6 <= (len(d) + 1) / (len(c) + 1) <= 3.2 for c, d in p) / len(p) if p else 0.0,  # +1 smoothing
    _in_band_share_zero_if_any_empty,                                                # any empty c: the whole list 0.0
    _in_band_share_zero_on_error,                                                    # except ZeroDivisionError: 0.0
    lambda p: sum(len(c) > 0 and 1.6 <= len(d) / len(c) <= 3.2 for c, d in p) / len(p) if p else 1.0,  # [] gives 1.0
]
MISTAKES["07.lora_parameters"] += [
    lambda shapes, q: sum(min(q, i, o) * (i + o) for i, o in shapes),                # rank capped: peft does not cap r
    lambda shapes, q: torch.tensor([q * (i + o) for i, o in shapes], dtype=torch.long).sum(),  # a tensor, not an int
]
MISTAKES["07.adapter_logits"] += [
    _adapter_logits_bfloat16,                                                        # model.to(bfloat16), in place
    _adapter_logits_half,                                                            # model.half(), in place
]
VARIANTS["07.in_band_share"] += [
    lambda p: sum(1.6 <= len(d) / max(len(c), 1e-9) <= 3.2 for c, d in p) / len(p) if p else 0.0,  # max(len, eps)
]
VARIANTS["07.lora_parameters"] += [
    _lora_parameters_numpy,                                                          # np.int64: an integer type
    lambda shapes, q: int(torch.tensor([q * (i + o) for i, o in shapes], dtype=torch.long).sum()),  # int(tensor)
]
MISTAKES["07.lora_parameters"] += [
    lambda shapes, q: sum(q * (i + o) + q for i, o in shapes),                      # q extra per layer: not in U or V
    lambda shapes, q: sum(q * (i + o) + q * (i + o) for i, o in shapes),            # U and V each as q * (in + out)
]
MISTAKES["07.adapter_logits"] += [
    lambda m, a, x: m(input_ids=x, adapter_names=[a or "__base__"] * len(x)).logits[:, -1, :].clamp(-10, 10),  # clamp
    lambda m, a, x: m(input_ids=x, adapter_names=[a or "__base__"] * len(x)).logits[:, -1].clamp(max=10),  # one-sided
    lambda m, a, x: m(input_ids=x, adapter_names=[a or "__base__"] * len(x)).logits[:, -1].to(torch.bfloat16),  # bf16
]
VARIANTS["07.adapter_logits"] += [
    lambda m, a, x: m(input_ids=x, adapter_names=[a or "__base__"] * len(x)).logits[:, -1].double(),  # float64: exact
]


def _adapter_logits_zero_grad(model, adapter, input_ids):
    """model.zero_grad() first: right logits, but the gradients of a backward() not yet stepped are erased."""
    model.zero_grad()
    with torch.no_grad():
        return model(input_ids=input_ids, adapter_names=[adapter or "__base__"] * input_ids.shape[0]).logits[:, -1, :]


def _adapter_logits_bf16_round_trip(model, adapter, input_ids):
    """model.to(bfloat16) then back to float32: the dtype is as before, every weight rounded for good."""
    model.to(torch.bfloat16)
    model.to(torch.float32)
    with torch.no_grad():
        return model(input_ids=input_ids, adapter_names=[adapter or "__base__"] * input_ids.shape[0]).logits[:, -1, :]


def _adapter_logits_batch_mean(model, adapter, input_ids):
    """The mean over the batch's rows, broadcast back to every row: one row of logits for all the prompts."""
    out = _adapter_logits_routed(model, adapter, input_ids)[:, -1, :]
    return out.mean(0, keepdim=True).expand(input_ids.shape[0], -1)


def _adapter_logits_minus_max(model, adapter, input_ids):
    """Each row shifted by its largest logit, as a stable softmax does: same softmax, other logits."""
    out = _adapter_logits_routed(model, adapter, input_ids)[:, -1, :]
    return out - out.max(-1, keepdim=True).values


def _adapter_logits_row0_only(model, adapter, input_ids):
    """adapter_names with the adapter for row 0 only, '__base__' for the other rows."""
    names = ["__base__"] * input_ids.shape[0]
    names[0] = adapter or "__base__"
    with torch.no_grad():
        return model(input_ids=input_ids, adapter_names=names).logits[:, -1, :]


MISTAKES["07.in_band_share"] += [
    lambda p: sum(1 for c, d in p if c and 1.6 <= len(d) / len(c) <= 3.2) // len(p) if p else 0.0,  # // : share 0
    lambda p: round(sum(1 for c, d in p if c and 1.6 <= len(d) / len(c) <= 3.2) / len(p), 1) if p else 0.0,  # 1 decimal
]
MISTAKES["07.adapter_logits"] += [
    _adapter_logits_zero_grad,                                                       # model.zero_grad(): a step erased
    _adapter_logits_bf16_round_trip,                                                 # bf16 and back: weights rounded
    _adapter_logits_batch_mean,                                                      # .mean(0) over the batch
    _adapter_logits_minus_max,                                                       # logits - logits.max(-1)
    _adapter_logits_row0_only,                                                       # only row 0 routed, rest base
]
VARIANTS["07.in_band_share"] += [
    lambda p: sum(1 for c, d in p if c and 1.6 <= len(d) / len(c) <= 3.2) / len(p) if p else 0,  # 0 (int) for no pairs
]
VARIANTS["07.adapter_logits"] += [
    lambda m, a, x: m(input_ids=x, attention_mask=torch.ones_like(x),                # an all-ones attention mask
                      adapter_names=[a or "__base__"] * x.shape[0]).logits[:, -1, :].detach(),
]


def _in_band_share_by(test):
    """The share written as a factory: the rule, `test(concise, detailed)`, sits in a function handed in."""
    def answer(pairs):
        return sum(1 for c, d in pairs if test(c, d)) / len(pairs) if pairs else 0.0
    return answer


def _ratio_with_epsilon(concise, detailed):
    """A helper of the answer's own: the ratio with an epsilon in the denominator, len(d) / (len(c) + 1e-9)."""
    return len(detailed) / (len(concise) + 1e-9)


def _in_band_share_epsilon_helper(pairs):
    """The ratio from that helper: 160 / 100.000000001 falls just below 1.6, out."""
    return sum(1 for c, d in pairs if 1.6 <= _ratio_with_epsilon(c, d) <= 3.2) / len(pairs) if pairs else 0.0


MISTAKES["07.in_band_share"] += [
    _in_band_share_tolerance(3e-5),                                                  # a tolerance of 3e-5: 1.5999996 in
    _in_band_share_tolerance(1e-5),                                                  # a tolerance of 1e-5: 1.5999996 in
    _in_band_share_tolerance(1e-6),                                                  # a tolerance of 1e-6: 1.5999996 in
    _in_band_share_rounds(5),                                                        # round(ratio, 5): 1.5999996 in
    _in_band_share_rounds(6),                                                        # round(ratio, 6): 1.5999996 in
    _in_band_share_by(lambda c, d: 1.6 <= len(d) / (len(c) + 1e-9) <= 3.2),          # epsilon, inside a factory's test
    _in_band_share_epsilon_helper,                                                   # epsilon, inside a global helper
]
MISTAKES["07.lora_parameters"] += [
    lambda shapes, q: sum((q - 1) * (i + o) for i, o in shapes),                     # off by one: q - 1
    lambda shapes, q: sum((q + 1) * (i + o) for i, o in shapes),                     # off by one: q + 1
]
