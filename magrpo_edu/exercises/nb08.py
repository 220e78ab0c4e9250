"""Checks of notebook 08's exercises (reward hacking and the KL leash): the k3 estimator of
KL(pi || pi_ref) from sampled tokens, and a rule that spots a gamed reward from the quality metrics."""
from __future__ import annotations

import math

import torch

from ..algorithm import kl_penalty
from . import ExerciseFailed, call_answer, exercise, first_line, is_bool, not_a_wrapper


def _fmt(t: torch.Tensor) -> list:
    return [round(x, 4) for x in t.flatten().tolist()]


def _vocabularies():
    """(log pi, log pi_ref) over small vocabularies, in float64: equal, near, far, and one where
    the agent puts almost all its mass on one token (a collapsed, 'hacked' policy)."""
    f64 = dict(dtype=torch.float64)
    ref = torch.tensor([2.0, 1.0, 0.5, 0.0, -0.5, -1.0], **f64).log_softmax(-1)
    yield ref.clone(), ref
    yield (ref.exp() + torch.tensor([0.05, -0.05, 0.02, -0.02, 0.0, 0.0], **f64)).log(), ref
    yield torch.tensor([-1.0, 0.0, 1.0, 0.0, 1.0, -1.0], **f64).log_softmax(-1), ref
    yield torch.tensor([-3.0, -3.0, -3.0, -3.0, -3.0, 4.0], **f64).log_softmax(-1), ref


def _k3_call(fn, logp: torch.Tensor, ref: torch.Tensor, inputs: str, grad: bool = False):
    """The answer on copies of (logp, ref), logp's copy a leaf that requires grad when `grad`: refused, in a sentence,
    when it crashes, changes an input, or does not return one float tensor of at least float32 of the inputs' shape.
    `inputs` says what was passed. Returns the estimate (and, when `grad`, the copy of logp it was given)."""
    given_logp, given_ref = logp.detach().clone().requires_grad_(grad), ref.clone()
    got = call_answer(fn, given_logp, given_ref, said=lambda exc: (
        _in_place_said(exc, inputs) or
        f"on {inputs} your function raised {type(exc).__name__}: {first_line(exc)}. Compute k3 with torch "
        "operations on the tensors themselves (no .numpy(), .item() or .tolist()), so that it keeps "
        "their shape, their dtype (float32 at least) and logp's gradient."))
    if not (torch.equal(given_logp.detach(), logp.detach()) and torch.equal(given_ref, ref)):
        which = "logp" if not torch.equal(given_logp.detach(), logp.detach()) else "ref_logp"
        raise ExerciseFailed(f"your function changed its input {which} in place (sub_, zero_, -=, ...): the loss reads "
                             "the same log-probs after the KL term. Compute d = ref_logp - logp as a new tensor.")
    if not isinstance(got, torch.Tensor):
        kind = "a NumPy array" if type(got).__module__.split(".")[0] == "numpy" else f"a {type(got).__name__}"
        raise ExerciseFailed(f"your function returned {kind}: return a torch tensor, not a NumPy array or list, one "
                             f"estimate per token (the inputs' shape {tuple(logp.shape)}). The estimate goes into the "
                             "loss and must keep logp's gradient: compute it with torch operations on the tensors.")
    if got.shape != logp.shape:
        raise ExerciseFailed(f"your estimate has the shape {tuple(got.shape)}: return one estimate per token, a "
                             f"tensor of the inputs' shape {tuple(logp.shape)}.")
    if not got.is_floating_point() or torch.finfo(got.dtype).bits < 32:
        low = str(logp.dtype).replace("torch.", "") if logp.dtype in (torch.bfloat16, torch.float16) else None
        raise ExerciseFailed(f"your estimate came back as {got.dtype}" + (
            f" for {low} inputs (what a model run in {low} gives): convert the inputs to float32 first "
            "(logp.float(), ref_logp.float(); float64 inputs may stay float64), then compute k3: in "
            f"{low}, e^d rounds to 1 + d and a small KL to 0." if low else
            ": return floats of at least float32 precision (the inputs' own dtype is best); half precision rounds a "
            "small KL away."))
    return (got, given_logp) if grad else got


def _log_epsilon(fn, got: torch.Tensor, logp: torch.Tensor, ref: torch.Tensor):
    """The eps of an answer that computes r - log(r + eps) - 1 (r = e^d, d = ref - logp, an epsilon inside the log),
    read off its most negative d in (logp, ref) and confirmed on d from log(eps) - 3 to log(eps) + 3, where such a
    log bends away from d smoothly (a clamp of d or of r would not); None for any other answer."""
    d = (ref - logp).double()
    i = int(d.argmin())
    r, k = math.exp(d[i].item()), got.detach().double()[i].item()
    if not (math.isfinite(k) and -d[i].item() - 700 < k - r + 1 < -d[i].item() - 0.01):  # log(r + eps) above d
        return None
    eps = math.exp(r - 1 - k) - r
    if not 0 < eps < 1e-3:
        return None
    probe_d = torch.tensor([math.log(eps) + x for x in (-3.0, -1.0, 0.0, 1.0, 3.0)])
    probe_logp = torch.full_like(probe_d, -0.5)
    try:
        out = fn(probe_logp.clone(), probe_logp + probe_d)
        out = out.detach().double() if isinstance(out, torch.Tensor) else None
    except Exception:  # noqa: BLE001 - an answer that crashes here gets no diagnosis
        return None
    dd = ((probe_logp + probe_d) - probe_logp).double()
    told = dd.exp() - torch.log(dd.exp() + eps) - 1
    return eps if out is not None and out.shape == told.shape and torch.allclose(out, told, rtol=1e-3, atol=1e-3) \
        else None


def _log_of_exp_d(fn) -> bool:
    """Whether the answer is finite where both log-probs are very negative and d is moderate (no exp of a log-prob
    on its own, as in a ratio of two exps) and inf or nan at d = -110 on moderate log-probs: r = exp(d) underflows to
    0 there in float32, and its log is -inf."""
    try:
        deep = fn(torch.tensor([-110.0, -115.0]), torch.tensor([-109.0, -116.0]))      # d = 1 and -1
        under = fn(torch.tensor([-1.0]), torch.tensor([-111.0]))                         # d = -110
        return bool(torch.isfinite(deep).all()) and not bool(torch.isfinite(under).all())
    except Exception:  # noqa: BLE001 - an answer that crashes here gets no diagnosis
        return False


def _deep_probe(fn, deep_logp: torch.Tensor, deep_ref: torch.Tensor) -> None:
    """Very negative log-probs (rare tokens) with d moderate, in float32 (down to -120) or float64 (about -800): where
    exp of a log-prob on its own underflows to 0 in that dtype while e^d is finite; a ratio of two exps, or a log of
    r = exp(d), refused in a sentence that names it."""
    f64 = deep_logp.dtype == torch.float64
    name, low, tiny = ("float64", "-800", "e^-745") if f64 else ("float32", "-120", "e^-103")
    deep_d = (deep_ref - deep_logp).double()
    deep_want = torch.exp(deep_d) - deep_d - 1
    got = _k3_call(fn, deep_logp, deep_ref, f"{name} log-probs down to {low}").detach()
    if torch.allclose(got.double(), deep_want, rtol=1e-5, atol=1e-5):
        return
    shown = (f"for {name} logp {deep_logp.tolist()} and ref_logp {deep_ref.tolist()} (d = ref_logp - logp = "
             f"{deep_d.tolist()}) the k3 terms are {[float(f'{x:.4g}') for x in deep_want.tolist()]}, you returned "
             f"{[float(f'{x:.4g}') for x in got.double().tolist()]}")
    if not f64 and not torch.isfinite(got).all() and _log_of_exp_d(fn):
        raise ExerciseFailed(f"{shown}: an inf or nan where k3 is finite. You take the log of r = exp(d): in "
                             "float32 r = exp(d) underflows to 0 for d below about -103 (e^-103 is about the "
                             "smallest float32), here at d = -119, and log(0) = -inf, so r - log(r) - 1 is inf. "
                             "log r is d itself: use d directly, k3 = exp(d) - d - 1, with no log of the exp.")
    if not torch.isfinite(got).all():
        where = (f"In float64 e^-800 and e^-810 are 0 too (the smallest float64 is about {tiny}): casting to "
                 "float64 moves the underflow further out, it does not remove it, so" if f64 else
                 f"In float32 e^-110 and e^-120 are 0 (the smallest float32 is about {tiny}), so")
        raise ExerciseFailed(f"{shown}: an inf or nan where k3 is finite. {where} the ratio of two exps, "
                             "exp(ref_logp) / exp(logp), under- or overflows to 0 or inf (0 / 0 = nan) on rare "
                             "tokens, and its log to -inf or inf, though d itself is moderate. Compute d = ref_logp - "
                             "logp first, then exp(d): k3 = e^d - d - 1, with no exp of a log-prob on its own.")
    wrong = ~torch.isclose(got.double(), deep_want, rtol=1e-5, atol=1e-5)
    under = deep_logp.exp() == 0                        # exp(logp) underflows to 0 in the inputs' dtype
    ceiling = torch.finfo(got.dtype).max if got.is_floating_point() else math.inf
    patched = (got.double() >= 1e38) | (got.double() >= 0.5 * ceiling) | torch.isclose(
        got.double(), -deep_d - 1, rtol=1e-5, atol=1e-5)    # a ratio x / 0 = inf, 0 / 0 = nan replaced by a number
    if wrong.any() and not (wrong & ~under).any() and not (wrong & ~patched).any():
        where = [f"{x:g}" for x in deep_logp[wrong].tolist()]
        raise ExerciseFailed(f"{shown}: wrong exactly on the tokens where exp(logp) underflows to 0 in {name} (logp "
                             f"{', '.join(where)}; the smallest {name} is about {tiny}), and there your value is what a "
                             "ratio of two exps, exp(ref_logp) / exp(logp), gives once its x / 0 = inf or 0 / 0 = nan "
                             "is replaced by a number (nan_to_num, a clamp, a where on isfinite?): the largest float or "
                             "0 in place of e^d. Replacing the inf or nan hides the underflow, it does not undo it. "
                             "Compute d = ref_logp - logp first, then exp(d): k3 = e^d - d - 1, with no exp of a "
                             "log-prob on its own.")
    lo, hi = _clamp_of_d(got, deep_d)
    if lo is not None or hi is not None:
        bound = " and ".join(([f"min={_num(lo)}"] if lo is not None else []) + ([f"max={_num(hi)}"] if hi is not None
                                                                                else []))
        cut = ", ".join(f"{x:g}" for x in deep_d[wrong].tolist())
        fix = ("A rare token's d is as real as any other's, and the further the policy has moved, the harder the leash "
               "must pull: compute k3 = e^d - d - 1 with d = ref_logp - logp on every token, with no clamp of logp, "
               "ref_logp, d or the estimate.")
        if _clamp_confirmed(fn, lo, hi, deep_logp.dtype):
            raise ExerciseFailed(f"{shown}: your values are k3 of d clamped ({bound}: a d.clamp(...), or a clamp of "
                                 "the estimate, which can give the same values), so on the tokens with d = "
                                 f"{cut} you return k3 of the bound, not of d, and the same on moderate log-probs. {fix}")
        raise ExerciseFailed(f"{shown}: on these rare tokens your values are k3 of a d cut at {bound}, yet the same d "
                             "on moderate log-probs (logp -1) gives k3 itself: you clamp the log-probs (a floor on "
                             "logp or ref_logp, such as clamp(min=-100)?), so a rare token's d is computed from a "
                             f"log-prob that is not its own (d = {cut} here). {fix}")
    raise ExerciseFailed(f"{shown}: compute e^d - d - 1 with d = ref_logp - logp on every token, however negative "
                         "the log-probs are (no clamp of logp, ref_logp, d or the estimate, no mask: a rare token is a "
                         "token like any other).")


def _k3_inverse(value: float, negative: bool):
    """The d of that sign (d <= 0 when `negative`) at which e^d - d - 1 = value (bisection; None when value < 0)."""
    if not (math.isfinite(value) and value >= 0):
        return None
    lo, hi = (-(value + 2), 0.0) if negative else (0.0, math.log(value + 2) + 2)
    for _ in range(200):
        mid = (lo + hi) / 2
        k = math.expm1(mid) - mid if mid < 700 else math.inf
        if (k > value) == negative:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _clamp_confirmed(fn, lo, hi, dtype) -> bool:
    """Whether the answer clamps d itself at (lo, hi), seen on moderate log-probs (logp -1, ref_logp -1 + d) with d
    beyond each bound (up to 85, where e^d is still finite in float32): a clamp of logp or ref_logp leaves these alone."""
    beyond = ([lo - 10.0] if lo is not None else []) + ([min(hi + 5.0, 85.0)] if hi is not None and hi < 84 else [])
    if not beyond:
        return True                             # nothing to see beyond the bound: the values say no more
    d = torch.tensor(beyond, dtype=dtype)
    logp = torch.full_like(d, -1.0)
    try:
        out = fn(logp.clone(), logp + d)
        out = out.detach().double() if isinstance(out, torch.Tensor) else None
    except Exception:  # noqa: BLE001 - an answer that crashes here gets the clamp-of-d sentence
        return True
    dd = ((logp + d) - logp).double().clamp(min=lo, max=hi)
    return out is not None and out.shape == dd.shape and torch.allclose(out, torch.exp(dd) - dd - 1, rtol=1e-4,
                                                                          atol=1e-4)


def _clamp_of_d(got: torch.Tensor, d: torch.Tensor) -> tuple:
    """(lo, hi) when the estimate is k3 of d.clamp(lo, hi) on every token and differs from k3 of d somewhere (None for a
    side that is not clamped); (None, None) otherwise. The bounds are read off the tokens whose d lies beyond them."""
    g, dd = got.detach().double().flatten(), d.detach().double().flatten()
    if not torch.isfinite(g).all():
        return None, None
    want = torch.exp(dd) - dd - 1
    off = ~torch.isclose(g, want, rtol=1e-5, atol=1e-5)
    bounds = {}
    for side, negative in (("lo", True), ("hi", False)):
        cut = off & ((dd < 0) if negative else (dd > 0))
        implied = [_k3_inverse(v, negative) for v in g[cut].tolist()]
        if implied and None not in implied:
            bounds[side] = (max if negative else min)(implied)
    lo, hi = bounds.get("lo"), bounds.get("hi")
    if not bounds or lo is not None and lo > -29.9 or hi is not None and hi < 29.9:    # |d| up to 30 passed before:
        return None, None                       # a bound inside that is no clamp (a mask to 0 reads as one at 0)
    clamped = dd.clamp(min=lo, max=hi)
    if torch.allclose(g, torch.exp(clamped) - clamped - 1, rtol=1e-4, atol=1e-4):
        return lo, hi
    return None, None


def _in_place_said(exc: Exception, inputs: str) -> str:
    """The sentence for torch's in-place errors (an op_ on a tensor autograd saved, or on a leaf that requires grad);
    '' for any other exception."""
    text = first_line(exc).split(": [")[0].split(". Hint")[0].rstrip(".")
    if not (isinstance(exc, RuntimeError) and ("inplace" in text or "in-place" in text)):
        return ""
    fix = ("The k3 term goes into the loss and must carry logp's gradient: use out-of-place operations, d = ref_logp "
           "- logp, then torch.exp(d) - d - 1, each of which builds a new tensor.")
    if "leaf" in text:
        return (f"on {inputs} torch refused an in-place operation: {text}. logp is a leaf that requires grad (the "
                f"policy's log-probs in training), and an op_ (sub_, mul_, -=, ...) may not change it. {fix}")
    return (f"on {inputs} the backward pass through your estimate failed: {text}. An in-place operation (exp_, sub_, "
            "add_, -=, ...) overwrote a tensor that autograd had saved for the backward pass: exp_ saves its own "
            "output (the derivative of e^x is e^x), so a sub_ on that same tensor afterwards destroys what the "
            f"gradient needs. {fix}")


def _grad(est: torch.Tensor, leaf: torch.Tensor, inputs: str):
    """The gradient of est.sum() with respect to leaf (None when est carries none); a failed backward pass, said."""
    if not est.requires_grad:
        return None
    try:
        return torch.autograd.grad(est.sum(), leaf, allow_unused=True)[0]
    except RuntimeError as exc:
        raise ExerciseFailed(_in_place_said(exc, inputs) or (
            f"on {inputs} the backward pass through your estimate failed: RuntimeError: {first_line(exc)}. The k3 "
            "term goes into the loss: compute it from logp with plain out-of-place torch operations, "
            "torch.exp(d) - d - 1 with d = ref_logp - logp.")) from None


def _sig(t, digits: int = 6) -> list:
    """The values of t with `digits` significant digits: what a message shows where 4 decimals would hide the slip."""
    return [float(f"{x:.{digits}g}") for x in torch.as_tensor(t).detach().flatten().tolist()]


def _apart(a: float, b: float) -> tuple:
    """a and b printed with 6 significant digits, more where those print the same (up to 12)."""
    for digits in range(6, 13):
        if f"{a:.{digits}g}" != f"{b:.{digits}g}":
            break
    return f"{a:.{digits}g}", f"{b:.{digits}g}"


def _scale_of(got: torch.Tensor, want: torch.Tensor):
    """c when the estimate is c times k3 on every token (c not 1: a constant factor), else None."""
    g, w = got.detach().double().flatten(), want.detach().double().flatten()
    if not torch.isfinite(g).all() or float(w @ w) == 0:
        return None
    c = float(g @ w) / float(w @ w)
    if abs(c - 1) < 1e-6 or not torch.allclose(g, c * w, rtol=1e-5, atol=1e-7):
        return None
    return c


def _grid_of(got: torch.Tensor, want: torch.Tensor):
    """k when every estimate lies on the grid of 10^-k (k from 0 to 6), as rounding it again in its own dtype shows,
    within one step of k3: rounded (round, floor, ceil, trunc) to k decimals; None otherwise, or when k3 itself lies
    on that grid."""
    g = got.detach().flatten()
    if not g.is_floating_point() or not torch.isfinite(g).all():
        return None
    w = want.detach().to(g.dtype).flatten()
    ulp = 2 * torch.finfo(g.dtype).eps

    def on(x, scale):
        return bool(((torch.round(x * scale) / scale - x).abs() <= ulp * x.abs()).all())
    for k in range(7):
        if on(g, 10.0 ** k) and ((g.double() - w.double()).abs() <= 1.001 * 10.0 ** -k + 1e-6).all():
            return None if on(w, 10.0 ** k) else k
    return None


def _series_order(got: torch.Tensor, d: torch.Tensor, rtol: float = 1e-5):
    """N (3 to 30) when the estimate is the Taylor series of e^d - d - 1 cut after d^N / N!, d^2/2 + d^3/6 + ...,
    on every token, to rtol (float32's rounding of a series whose terms cancel needs more where |d| is large); None
    otherwise (d^2/2 alone, k2, has its own sentence)."""
    g, dd = got.detach().double().flatten(), d.detach().double().flatten()
    if not torch.isfinite(g).all():
        return None
    partial, term = torch.zeros_like(dd), dd.clone()
    for n in range(2, 31):
        term = term * dd / n
        partial = partial + term
        if n >= 3 and torch.allclose(g, partial, rtol=rtol, atol=1e-7):
            return n
    return None


def _series_said(n: int) -> str:
    terms = " + ".join(["d^2/2", "d^3/6", "d^4/24"][:n - 1]) + (f" + ... + d^{n}/{n}!" if n > 4 else "")
    last = terms.split(" + ")[-1]
    return (f"that is the Taylor series of e^d - d - 1 cut after {last} ({terms}): a truncated series, not the "
            "exact exp(d) - d - 1. It is close only where |d| is small; the terms it drops grow with |d|, and where "
            "the policy has moved far (|d| of 10 to 30, where the leash must pull hardest) it is off by orders of "
            "magnitude" + (" and, cut after an odd power, goes negative for very negative d" if n % 2 else "") +
            ". Compute e^d itself: k3 = torch.exp(d) - d - 1, d = ref_logp - logp.")


def _computed_in_low(got: torch.Tensor, logp: torch.Tensor, ref: torch.Tensor):
    """(the 16-bit dtype's name, how the answer's values show it) when they are k3 computed in bfloat16 or float16
    from float32 inputs (a .half() or .to(torch.bfloat16) somewhere, converted back afterwards): every value a number
    of that dtype and within its rounding of k3, or k3 of the inputs, or of d, rounded to it; None otherwise."""
    g = got.detach().double().flatten()
    if not torch.isfinite(g).all():
        return None
    d = (ref - logp).double().flatten()
    want = torch.exp(d) - d - 1
    for low in (torch.bfloat16, torch.float16):             # bfloat16 first: its numbers are float16's too, mostly
        name = str(low).replace("torch.", "")
        slack = 8 * torch.finfo(low).eps * (torch.exp(d) + d.abs() + 1)     # its rounding of e^d, d and 1
        if torch.equal(g.to(low).double(), g) and ((g - want).abs() <= slack).all():
            return name, f"every value you return is a {name} number"
        lp, rf = logp.to(low).double().flatten(), ref.to(low).double().flatten()
        for dd, how in ((rf - lp, f"the inputs rounded to {name}"),
                        (d.to(low).double(), f"d = ref_logp - logp rounded to {name}")):
            if torch.allclose(g, torch.exp(dd) - dd - 1, rtol=1e-4, atol=1e-6):
                return name, f"your values are k3 of {how}"
    return None


def _low_said(name: str, how: str) -> str:
    digits = {"bfloat16": "2 to 3", "float16": "3"}[name]
    return (f"{how}, not k3 of the float32 inputs: part of your arithmetic ran in {name} (a .half(), .bfloat16() or "
            f".to(torch.{name}) inside, converted back only afterwards?). That is a precision slip, not a sign one: "
            f"{name} keeps only about {digits} significant digits, so e^d near 1 rounds to 1 + d and a small KL to 0 "
            "or to noise. Compute k3 in the inputs' own precision, float32 here (float64 inputs may stay float64), "
            "with no cast to 16 bits anywhere in it.")


def _scale_said(c: float) -> str:
    return (f"your estimate is {c:.6g} times k3 on every token: a constant factor scales the KL, and the leash with it "
            "(how hard the KL term pulls is beta's job, the loss multiplies the term by beta). Return e^d - d - 1 "
            "itself, d = ref_logp - logp, with no factor.")


def _grid_said(k: int) -> str:
    return (f"every value you return lies on a grid of {10.0 ** -k:g} (rounded to {k} decimals: torch.round, floor, "
            "a cast to int?): that changes the KL by up to half a step, rounds a small KL to 0, and rounding is "
            "flat between its steps, so its gradient is 0 and the leash pulls nothing. Return e^d - d - 1 as "
            "computed, with no rounding; round only what you print.")


@exercise("08.k3_estimator")
def check_k3(fn):
    # 1. per token, on log-probs of sampled tokens (any shape), the k3 value
    g = torch.Generator().manual_seed(8)
    logp = -torch.rand(3, 5, generator=g) * 3 - 0.01
    ref = logp + torch.randn(3, 5, generator=g)
    want = kl_penalty(logp.reshape(-1, 1), ref.reshape(-1, 1), torch.ones(logp.numel(), 1)).reshape(logp.shape)
    # 0. not the library's k3 behind a wrapper (on copies: an answer that works in place changes only those)
    not_a_wrapper(fn, (logp.clone(), ref.clone()), "k3_estimator", kl_penalty,
                  how="from the formula in section 1, d = ref_logp - logp and e^d - d - 1")
    got = _k3_call(fn, logp, ref, "float32 log-probs of shape (3, 5)")
    if (got < -1e-6).any():
        if torch.allclose(got.float(), logp - ref, atol=1e-5):
            raise ExerciseFailed(f"some of your per-token estimates are negative ({_fmt(got[got < 0][:3])}...): that is "
                                 "k1 = log pi - log pi_ref, unbiased but of either sign, so a batch can report a negative "
                                 "KL. k3 adds e^d - 1 (d = log pi_ref - log pi, e^d = pi_ref / pi), which has mean 0 and "
                                 "makes every term >= 0.")
        summand = {"ref": (ref.exp() * (ref - logp), "pi_ref * log(pi_ref / pi)", "KL(pi_ref || pi)",
                           "F.kl_div(logp, ref_logp, reduction='none', log_target=True)"),
                   "pi": (logp.exp() * (logp - ref), "pi * log(pi / pi_ref)", "KL(pi || pi_ref)",
                          "F.kl_div(ref_logp, logp, reduction='none', log_target=True)")}
        for weight, (terms, what, kl, call) in summand.items():
            if torch.allclose(got.detach().float(), terms, atol=1e-5, rtol=1e-4):
                raise ExerciseFailed(
                    f"some of your per-token estimates are negative ({_fmt(got[got < 0][:3])}...): your terms are "
                    f"{what}, the summand of the exact {kl} over the whole vocabulary (what {call} "
                    "gives), not an estimator from one sampled token. Such a summand is weighted "
                    "by a probability, and only the sum over EVERY token of the vocabulary is the KL; here each "
                    "position has only its one sampled token, already drawn from pi, and one summand alone can be "
                    + ("negative, and it is weighted by pi_ref, though the token was drawn from pi" if weight == "ref"
                       else "negative, and weighting it by pi again counts pi twice")
                    + ". Per sampled token, use k3 = e^d - d - 1 with d = ref_logp - logp: never negative, and its "
                    "mean under pi is KL(pi || pi_ref).")
        raise ExerciseFailed(f"some of your per-token estimates are negative ({_fmt(got[got < 0][:3])}...); k3 = e^d - d "
                             "- 1 with d = log pi_ref - log pi is never negative, because e^d >= 1 + d for every d. Both "
                             "parts are needed: -d alone is k1, e^d - 1 alone has mean 0.")
    if not torch.allclose(got.float(), want, atol=1e-5, rtol=1e-5):
        d = ref - logp
        if torch.allclose(got.float(), 0.5 * d ** 2, atol=1e-5, rtol=1e-5):
            raise ExerciseFailed(f"for d = ref_logp - logp = {_fmt(d[0])} the k3 terms are {_fmt(want[0])}, you "
                                 f"returned {_fmt(got[0])}: that is k2 = d^2/2, notebook 08's section 1b: never "
                                 "negative, but its mean under pi is not the KL, and its value is not k3's. k3 is e^d "
                                 "- d - 1 (d = ref_logp - logp): exp(d), not d squared.")
        if torch.allclose(got.float(), 0.5 * want, atol=1e-5, rtol=1e-5):
            raise ExerciseFailed(f"for d = ref_logp - logp = {_fmt(d[0])} the k3 terms are {_fmt(want[0])}, you "
                                 f"returned {_fmt(got[0])}: exactly half of k3 on every token. You halved k3 (a 1/2 "
                                 "carried over from k2 = d^2/2?): k3 is e^d - d - 1 with no factor, and only then is "
                                 "its mean under pi the KL itself.")
        shown = f"for d = ref_logp - logp = {_sig(d[0])} the k3 terms are {_sig(want[0])}, you returned {_sig(got[0])}"
        c = _scale_of(got, want)
        if c is not None:
            raise ExerciseFailed(f"{shown}: {_scale_said(c)}")
        k = _grid_of(got, want)
        if k is not None:
            raise ExerciseFailed(f"{shown}: {_grid_said(k)}")
        n = _series_order(got, d)
        if n is not None:
            raise ExerciseFailed(f"{shown}: {_series_said(n)}")
        low = _computed_in_low(got, logp, ref)
        if low is not None:
            raise ExerciseFailed(f"{shown}: {_low_said(*low)}")
        # 2. say what the answer estimates instead, exactly, on a small vocabulary
        for lp, lr in _vocabularies():
            est = _k3_call(fn, lp, lr, "float64 log-probs of a 6-token vocabulary")
            mean = (lp.exp() * est.detach().double()).sum().item()
            kl_fwd = (lp.exp() * (lp - lr)).sum().item()
            if not math.isclose(mean, kl_fwd, rel_tol=1e-5, abs_tol=1e-5):
                shown_mean, shown_kl = _apart(mean, kl_fwd)
                raise ExerciseFailed(
                    f"averaged over tokens drawn from pi (exactly, on a 6-token vocabulary) your estimate is "
                    f"{shown_mean}, but KL(pi || pi_ref) = {shown_kl}: it is biased. k3 is built on e^d = "
                    "pi_ref / pi, d = ref_logp - logp, the ratio whose mean under pi is 1 (pi / pi_ref has no such "
                    "mean): check which way round your d is, and that every part of section 1's k3 is there.")
        raise ExerciseFailed(f"for log pi {_fmt(logp[0])} and log pi_ref {_fmt(ref[0])} the k3 terms are "
                             f"{_fmt(want[0])}, you returned {_fmt(got[0])}.")
    k = _grid_of(got, want)                      # rounded to 5 or 6 decimals: inside the tolerance, but on a grid
    if k is not None:
        raise ExerciseFailed(f"for d = ref_logp - logp = {_sig(ref[0] - logp[0])} the k3 terms are {_sig(want[0])}, "
                             f"you returned {_sig(got[0])}: {_grid_said(k)}")
    # 1b. a policy that moved far from the reference on some tokens: |d| > 10 (a clamp of d changes exactly these)
    #     and |d| = 30 (a clamp at 20 changes these; e^30 is 1e13, still finite in float32)
    far_logp = torch.tensor([-0.5, -14.0, -1.0, -3.0, -20.5, -0.5, -31.0])
    far_ref = torch.tensor([-12.0, -2.0, -1.0, -2.5, -9.0, -30.5, -1.0])
    far_d = far_ref - far_logp
    far_want = torch.exp(far_d.double()) - far_d.double() - 1
    got = _k3_call(fn, far_logp, far_ref, "float32 log-probs where d = ref_logp - logp reaches -30 and +30")
    if not torch.allclose(got.double(), far_want, rtol=1e-5, atol=1e-5):
        shown = (f"for d = ref_logp - logp = {_fmt(far_d)} the k3 terms are {_sig(far_want)}, you returned "
                 f"{_sig(got)}")
        c = _scale_of(got, far_want)
        if c is not None:
            raise ExerciseFailed(f"{shown}: {_scale_said(c)}")
        n = _series_order(got, far_d, rtol=1e-3)
        if n is not None:
            raise ExerciseFailed(f"{shown}: {_series_said(n)}")
        eps = _log_epsilon(fn, got, far_logp, far_ref)
        if eps is not None:
            r, k = math.exp(far_d[5].item()), far_want[5].item()
            raise ExerciseFailed(f"for d = ref_logp - logp = {_fmt(far_d)} the k3 terms are {_fmt(far_want)}, you "
                                 f"returned {_fmt(got.detach())}: you add an epsilon inside the log, log(r + eps) with "
                                 f"eps about {eps:.0e} (r = e^d). Where r is tiny, as small as the epsilon, log(r + eps) "
                                 f"is no longer d: at d = -30, r = {r:.2g} and log(r + {eps:.0e}) = "
                                 f"{math.log(r + eps):.4g}, not -30, so k3 comes out {got[5].item():.4g} instead of "
                                 f"{k:.4g}. log r is d itself: use d directly, k3 = exp(d) - d - 1, with no log and no "
                                 "epsilon.")
        raise ExerciseFailed(f"for d = ref_logp - logp = {_fmt(far_d)} the k3 terms are {_fmt(far_want)}, you returned "
                             f"{_fmt(got.detach())}: your estimate is right where |d| is small, not where the policy "
                             "has moved far from the reference (|d| of 10 to 30). Do not clamp d or the estimate: k3 = e^d - d "
                             "- 1 for every d, and those tokens are where the leash has to pull hardest.")
    # 1b+. very negative log-probs (rare tokens), d moderate: e^-110 and e^-120 are 0 in float32, so a ratio of two
    #      exps, exp(ref_logp) / exp(logp), is 0 or inf (and its log -inf or inf) where e^d itself is finite: k3 is 118
    #      at d = -119 and e^80 - 81 = 5.5e34 at d = 80 (e^119, at logp -120 and ref_logp -1, would overflow float32
    #      in the right formula too, so the probe stops at 80)
    _deep_probe(fn, torch.tensor([-1.0, -110.0, -2.5]), torch.tensor([-120.0, -30.0, -105.0]))
    # 1b+'. the same in float64 (log-probs about -800, d from -5 to 10): e^-800 is 0 in float64 too (the smallest
    #       float64 is about e^-745), so a ratio of two exps computed in float64 is 0 / 0 = nan there: a cast to
    #       float64 moves the underflow further out, it does not remove it
    _deep_probe(fn, torch.tensor([-800.0, -810.0, -1.0], dtype=torch.float64),
                torch.tensor([-805.0, -800.0, -3.0], dtype=torch.float64))
    # 1b'. one token, as a 1-element tensor and as a 0-d tensor: the same formula, the same shape back
    for small_logp, small_ref, inputs in ((torch.tensor([-2.0]), torch.tensor([-0.5]), "one token, shape (1,)"),
                                          (torch.tensor(-2.0), torch.tensor(-0.5), "one token as a 0-d tensor, shape ()")):
        small_want = torch.exp(small_ref - small_logp) - (small_ref - small_logp) - 1
        got = _k3_call(fn, small_logp, small_ref, f"float32 log-probs of {inputs}")
        if not torch.allclose(got.detach().float(), small_want, rtol=1e-5, atol=1e-6):
            raise ExerciseFailed(f"for {inputs} (logp -2.0, ref_logp -0.5, d = 1.5) k3 is {small_want.item():.4f}, you "
                                 f"returned {_fmt(got.detach())}: compute k3 elementwise on the tensors as they come, "
                                 "whatever their shape (no loop over rows, no squeeze).")
    # 1b''. a collapsed policy: its top tokens have log-prob exactly 0.0 (probability 1) where the reference gives
    #       them less; a token the reference is sure of (ref_logp 0.0); tokens where the two agree exactly (d = 0)
    col_logp = torch.tensor([0.0, 0.0, -1.2, -0.7, -2.0, -1.0])
    col_ref = torch.tensor([-0.3, -2.5, -1.2, -0.7, -2.0, 0.0])
    col_d = (col_ref - col_logp).double()
    col_want = torch.exp(col_d) - col_d - 1
    got = _k3_call(fn, col_logp, col_ref, "float32 log-probs with logp exactly 0.0 on some tokens").detach().double()
    if not torch.allclose(got, col_want, rtol=1e-5, atol=1e-6) or (got[2:5] != 0).any():   # e^0 - 0 - 1 is exactly 0
        shown = f"for logp {_fmt(col_logp)} and ref_logp {_fmt(col_ref)} the k3 terms are {_fmt(col_want)}, you " \
                f"returned {[float(f'{x:.3g}') for x in got.tolist()]}"
        if (got[:2].abs() < 1e-6).all():
            raise ExerciseFailed(f"{shown}: you zero the terms where logp is exactly 0.0 (a mask such as logp == 0 or "
                                 "logp < 0?). A log-prob of 0.0 is no padding (the loss's mask handles padding): it "
                                 "is a token of probability 1. A collapsed policy, the hacked kind, puts all its mass "
                                 "on its top token, log-prob 0.0, where the reference gives it less: that is where "
                                 "the policy has moved furthest, and where the leash must pull. Keep every term: k3 = "
                                 "e^d - d - 1 for every d.")
        if got[5].abs() < 1e-6:
            raise ExerciseFailed(f"{shown}: you zero the term where ref_logp is exactly 0.0 (a mask such as ref_logp "
                                 "== 0?). A log-prob of 0.0 is no padding (the loss's mask handles padding): the "
                                 "reference is sure of that token, and the policy now gives it less (logp -1.0): it "
                                 "has moved away, and the leash must pull it back. Keep every term: k3 = e^d - d - 1 "
                                 "for every d.")
        if (got[2:5] != 0).any():
            raise ExerciseFailed(f"{shown}: where the agent and the reference agree exactly (d = 0, the third to fifth "
                                 f"tokens) k3 is 0 (e^0 - 0 - 1), yours is {got[2]:.3g}. An added constant (an epsilon "
                                 "'for safety'?) is a bias, however small: it leashes a policy that has not moved, "
                                 "and a batch of equal models reports a nonzero KL. k3 needs no epsilon: e^d - d - 1 "
                                 "is finite for every finite d.")
        raise ExerciseFailed(f"{shown}: compute e^d - d - 1 with d = ref_logp - logp on every token, whatever its "
                             "values.")
    # 1c. the gradient: the term is added to the loss, so it must carry logp's gradient, d k3 / d logp = 1 - e^d
    inputs = "float32 log-probs that require grad (as in training)"
    est, leaf = _k3_call(fn, logp, ref, inputs, grad=True)
    grad_want = 1 - torch.exp(ref - logp)
    grad = _grad(est, leaf, inputs)
    if grad is None:
        raise ExerciseFailed("your estimate carries no gradient back to logp (.detach(), .item(), a NumPy round trip, "
                             "torch.no_grad() or a new torch.tensor(...) cut it): the k3 term is added to the loss, and "
                             "without a gradient it cannot pull the policy back towards the reference: no leash. "
                             "Compute it with torch operations on logp itself.")
    if not torch.allclose(grad.float(), grad_want, rtol=1e-4, atol=1e-5):
        shown = f"the gradient of your estimate with respect to logp is {_fmt(grad[0])}, k3's is 1 - e^d = " \
                f"{_fmt(grad_want[0])} (d = ref_logp - logp)"
        if (grad == 0).all():
            raise ExerciseFailed(f"your estimate has k3's values, but {shown}: 0 on every token. A step function "
                                 "(torch.round, floor, ceil, sign, a cast to int and back) is flat between its steps, "
                                 "so its gradient is 0 and the leash pulls nothing. Compute e^d - d - 1 from logp with "
                                 "smooth torch operations, with no rounding in it.")
        if torch.allclose(grad.float(), -grad_want, rtol=1e-4, atol=1e-5):
            raise ExerciseFailed(f"your estimate has k3's values, but {shown}: yours is its NEGATIVE, term by term. "
                                 "Its sign is wrong, so descending the loss would push the policy AWAY from the "
                                 "reference, the opposite of a leash (a detach trick such as k.detach() - (k - "
                                 "k.detach()) keeps the value and flips the gradient). Compute e^d - d - 1 from logp "
                                 "directly, with no .detach() in it.")
        raise ExerciseFailed(f"{shown}: part of the formula is cut off from the gradient (a .detach() inside it?). "
                             "Compute all of e^d - d - 1 from logp with torch operations.")
    # 1c'. a policy that has only just moved (|d| from 1e-5 to 1e-3, k3 about d^2 / 2, 5e-11 to 5e-7): float32 rounds
    #      these values, not their gradient 1 - e^d (about -d); an answer that zeroes small terms zeroes that too.
    #      k3 >= 0 exactly, so relu(k3), k3.clamp(min=0) or abs(k3) change only float32's rounding noise: where k3
    #      itself is below float32's resolution (under 2 * eps = 2.4e-7, |d| below about 7e-4: d = 1e-5 and 1e-4 here)
    #      e^d - d - 1 rounds to 0 or -6e-8 in float32, and their gradient there may be 0 (or of either sign, no
    #      larger than k3's); at d = 1e-3 (k3 = 5e-7, above it) the gradient must be k3's, so a threshold at 1e-6 fails
    tiny_d = torch.tensor([1e-5, -1e-5, 1e-4, -1e-4, 1e-3, -1e-3])
    tiny_logp = torch.tensor([-2.0, -0.7, -1.5, -3.0, -0.2, -1.1])
    tiny_ref = tiny_logp + tiny_d
    inputs = "float32 log-probs where |d| = |ref_logp - logp| is 1e-5 to 1e-3"
    est, leaf = _k3_call(fn, tiny_logp, tiny_ref, inputs, grad=True)
    tiny_dd = (tiny_ref - tiny_logp).double()
    tiny_want = 1 - torch.exp(tiny_dd)
    grad = _grad(est, leaf, inputs)
    noise = torch.exp(tiny_dd) - tiny_dd - 1 < 2 * torch.finfo(torch.float32).eps    # k3 below float32's resolution
    if grad is None or not (torch.isclose(grad.double(), tiny_want, rtol=1e-2, atol=1e-6)
                            | noise & (grad.double().abs() <= 1.01 * tiny_want.abs() + 1e-6)).all():
        shown = [float(f"{x:.3g}") for x in (grad.tolist() if grad is not None else [0.0] * len(tiny_d))]
        raise ExerciseFailed(f"where the policy has only just moved (d = ref_logp - logp = "
                             f"{[float(f'{x:.0e}') for x in tiny_d.tolist()]}, k3 about d^2 / 2) the gradient of your "
                             f"estimate with respect to logp is {shown}, k3's is 1 - e^d = "
                             f"{[float(f'{x:.3g}') for x in tiny_want.tolist()]}: you zero the small terms (a "
                             "threshold on k3 or on d?), and their gradient with them. Keep every term, however "
                             "small: k3 = e^d - d - 1 for every d; its gradient is what starts pulling a policy back "
                             "as soon as it moves.")
    # 1d. low-precision inputs (a model run in bf16 or fp16): the estimate must still be float32 at least, and
    #     computed so (an upcast of bfloat16 alone returns float16 for float16 inputs)
    for low in (torch.bfloat16, torch.float16):
        name = str(low).replace("torch.", "")
        low_logp = (logp - 0.01).to(low)
        low_ref = (logp + 0.015 * torch.randn(3, 5, generator=g)).to(low)
        low_d = low_ref.double() - low_logp.double()
        low_want = torch.exp(low_d) - low_d - 1
        got = _k3_call(fn, low_logp, low_ref, f"{name} log-probs")
        if not torch.allclose(got.double(), low_want, rtol=1e-4, atol=2e-6):
            raise ExerciseFailed(f"for {name} inputs (what a model run in {name} gives) your estimates are "
                                 f"{[float(f'{x:.3g}') for x in got[0].tolist()]}, k3 of these same inputs is "
                                 f"{[float(f'{x:.3g}') for x in low_want[0].tolist()]}: the arithmetic was done in "
                                 f"{name} and converted only afterwards, and {name} rounds e^d near 1 to a few "
                                 "digits, a small KL to 0 or to noise. Convert the inputs to float32 first "
                                 "(logp.float(), ref_logp.float()), then compute k3.")
    # 1d'. far-apart low-precision log-probs (a rare token against a likely one): their difference is no longer exact
    #      in bf16 / fp16 (9.61 between -10.3 and -0.7 rounds to 9.625 in bf16), and e^d multiplies that error; in
    #      float32 the difference of two bf16 / fp16 numbers is exact. An answer that subtracts in low precision and
    #      converts d afterwards passes the near inputs above and fails here.
    for low in (torch.bfloat16, torch.float16):
        name = str(low).replace("torch.", "")
        low_logp = torch.tensor([-10.3, -0.5, -7.9, -2.0, -12.7], dtype=low)
        low_ref = torch.tensor([-0.7, -12.1, -0.3, -2.0, -1.1], dtype=low)
        low_d = low_ref.double() - low_logp.double()                                    # exact: float32 gives it too
        low_want = torch.exp(low_d) - low_d - 1
        got = _k3_call(fn, low_logp, low_ref, f"far-apart {name} log-probs").detach().double()
        if torch.allclose(got, low_want, rtol=1e-5, atol=1e-6):
            continue
        sub_d = (low_ref - low_logp).double()                                           # d subtracted in low precision
        shown = (f"for {name} logp {_sig(low_logp.double())} and ref_logp {_sig(low_ref.double())} (d = ref_logp - "
                 f"logp = {_sig(low_d)}) the k3 terms are {_sig(low_want)}, you returned {_sig(got)}")
        if torch.allclose(got, torch.exp(sub_d) - sub_d - 1, rtol=1e-4, atol=1e-6):
            raise ExerciseFailed(f"{shown}: you subtracted in {name} and converted only d afterwards ((ref_logp - "
                                 f"logp).float()?). Far-apart {name} log-probs have a difference that {name} cannot "
                                 f"hold: ref_logp - logp = {low_d[0].item():.6g} rounds to {sub_d[0].item():.6g} in "
                                 f"{name}, and e^d multiplies that error ({(sub_d[0] - low_d[0]).item():.2g} in d is "
                                 f"{abs(math.expm1((sub_d[0] - low_d[0]).item())):.1%} in e^d). Convert the inputs to "
                                 "float32 before the subtraction (logp.float(), ref_logp.float()), then compute d and "
                                 "k3: in float32 the difference of two bfloat16 or float16 numbers is exact.")
        raise ExerciseFailed(f"{shown}: convert the inputs to float32 first (logp.float(), ref_logp.float()), then "
                             "compute d = ref_logp - logp and e^d - d - 1 in float32, on every token however far apart "
                             "its log-probs are.")
    # 3. unbiased and zero at pi = pi_ref, checked exactly, to float32's rounding (the inputs are float64; a float32
    #    result, e.g. after a .float(), is as right, and so is a float64 one with only logp cast to float32, as
    #    precise as float32: 1.8e-9 off here; an added constant is refused at d = 0 above)
    for lp, lr in _vocabularies():
        est = _k3_call(fn, lp, lr, "float64 log-probs of a 6-token vocabulary").detach()
        tol = 64 * torch.finfo(torch.float32).eps                                       # 7.6e-6
        mean = (lp.exp() * est.double()).sum().item()
        kl_fwd = (lp.exp() * (lp - lr)).sum().item()
        if not math.isclose(mean, kl_fwd, rel_tol=tol, abs_tol=tol):
            raise ExerciseFailed(f"the expectation of your estimate under pi is {mean:.9f}, KL(pi || pi_ref) is "
                                 f"{kl_fwd:.9f} (a difference of {mean - kl_fwd:.2e}, more than float32's rounding "
                                 "allows): your estimate is biased. Compare each part of yours with section 1's k3, "
                                 "and compute it from d = ref_logp - logp in float32 at least.")
    # 4. where e^d overflows float32 (d above about 88.7, e^88.7 = 3.4e38 its largest number): k3 = e^d - d - 1 is
    #    beyond float32 too, and the right float32 value is inf (IEEE's rounding of it, and what kl_penalty returns);
    #    a float64 answer's exact value (2.7e43 at d = 100) is right as well, and so is a value at float32's ceiling
    #    (1e38 or more: nan_to_num's default posinf, a clamp of d just below 88.7), a leash as strong as float32 can
    #    hold. 0 there (nan_to_num(posinf=0.0), a where on isinf), or any smaller finite value or nan, is refused.
    #    Last, so that every slip refused above keeps its own sentence (a ratio of exps is inf or nan here as well).
    over_logp = torch.tensor([-100.5, -1.0, -90.0])
    over_ref = torch.tensor([-0.5, -1.5, -1.0])
    over_d = (over_ref - over_logp).double()
    over_want = torch.exp(over_d) - over_d - 1
    got = _k3_call(fn, over_logp, over_ref, "float32 log-probs where d = ref_logp - logp reaches 100").detach().double()
    beyond = over_want > torch.finfo(torch.float32).max
    right = torch.where(beyond, got >= 1e38, torch.isclose(got, over_want, rtol=1e-5, atol=1e-6))
    if not right.all():
        shown = (f"for float32 logp {_fmt(over_logp)} and ref_logp {_fmt(over_ref)} (d = ref_logp - logp = "
                 f"{_fmt(over_d)}) the k3 terms are {_sig(over_want, 4)}: at d = 100 and 89 e^d is beyond float32's "
                 "largest number (about 3.4e38, e^88.7), so in float32 they are inf (kl_penalty returns inf there "
                 f"too). You returned {_sig(got, 4)}")
        if (got[beyond] == 0).all() and right[~beyond].all():
            raise ExerciseFailed(f"{shown}: you turn the overflowed terms into 0 (torch.nan_to_num(..., posinf=0.0), a "
                                 "torch.where on isinf or isfinite?). That removes the leash on exactly the tokens "
                                 "where the policy is furthest from the reference (pi_ref gives the token e^100 times "
                                 "pi's probability). Leave the inf as it comes (the loss then shows that the run has "
                                 "left float32's range), or compute in float64, finite up to d of about 709; never "
                                 "replace it by 0.")
        raise ExerciseFailed(f"{shown}: where e^d overflows float32 the right value is inf (or, computed in float64, "
                             "the exact value), not a small number or nan. Compute e^d - d - 1 with d = ref_logp - "
                             "logp and leave what it gives: replace no inf, clamp no term.")


# Held-out table rows (run_method's keys) of untrained and trained agents: (untrained, trained, gamed?, what the
# case teaches). The rule, as the notebook states it: the reward rose by MORE than 0.1 AND some agent's naturalness
# ROSE by MORE than 1 nat per token (its change, not its level) or its repetition is ABOVE 0.2 (its level).
_UNTRAINED = dict(reward=1.05, naturalness1=0.62, naturalness2=0.60, repetition1=0.004, repetition2=0.010)
_TABLE_UNTRAINED = dict(reward=1.054, naturalness1=0.49, naturalness2=0.62, repetition1=0.007, repetition2=0.011)


def _row(reward, n1, n2, r1, r2):
    return dict(reward=reward, naturalness1=n1, naturalness2=n2, repetition1=r1, repetition2=r2)


def _gamed(untrained, trained) -> bool:
    """The rule as the notebook states it, on the raw values: the verdict of the probe cases below."""
    return trained["reward"] - untrained["reward"] > 0.1 and any(
        trained[f"naturalness{k}"] - untrained[f"naturalness{k}"] > 1.0 or trained[f"repetition{k}"] > 0.2
        for k in (1, 2))


_CASES = [
    (_UNTRAINED, _row(1.45, 0.70, 4.10, 0.0, 0.02), True,
     "stitched fragments: varied words (no repeated 3-gram), agent 2's naturalness rose by 3.5 nats"),
    (_UNTRAINED, _row(1.30, 2.20, 0.95, 0.0, 0.01), True, "agent 1, the concise one, is the one that drifted"),
    (_UNTRAINED, _row(1.40, 0.66, 1.30, 0.01, 0.45), True, "padding ('and and and'): repetition 0.45, naturalness barely moved"),
    (_UNTRAINED, _row(1.35, 0.79, 0.81, 0.003, 0.02), False, "it learned while staying close to the base model"),
    (_UNTRAINED, _row(0.95, 3.00, 2.50, 0.0, 0.3), False,
     "the agents drifted but the reward FELL: broken, not gaming the reward"),
    (_UNTRAINED, _row(1.06, 0.61, 0.60, 0.004, 0.010), False, "nothing moved"),
    # the notebook's own table (section 5): a rule on the naturalness LEVEL flags A seed 2 and B seed 0
    (_TABLE_UNTRAINED, _row(1.308, 2.14, 1.05, 0.002, 0.015), True, "the notebook's run A, seed 0"),
    (_TABLE_UNTRAINED, _row(1.452, 1.52, 5.03, 0.000, 0.026), True, "the notebook's run A, seed 1"),
    (_TABLE_UNTRAINED, _row(1.169, 1.11, 1.22, 0.003, 0.016), False,
     "the notebook's run A, seed 2: naturalness 1.11 and 1.22 are above 1 nat, but they ROSE by only 0.62 and 0.60 "
     "from 0.49 and 0.62; the rule is on the change"),
    (_TABLE_UNTRAINED, _row(1.180, 1.21, 1.01, 0.002, 0.004), False,
     "the notebook's run B, seed 0: naturalness 1.21 is above 1 nat, but it rose by only 0.72; the rule is on the change"),
    (_TABLE_UNTRAINED, _row(1.020, 1.42, 1.04, 0.000, 0.009), False, "the notebook's run B, seed 1: the reward fell"),
    (_TABLE_UNTRAINED, _row(0.968, 1.11, 1.26, 0.004, 0.002), False, "the notebook's run B, seed 2: the reward fell"),
    # a base model that is already far from 0 nats: the level says nothing, the change does
    (_row(1.0, 2.5, 2.5, 0.0, 0.0), _row(1.5, 2.9, 3.2, 0.0, 0.0), False,
     "both naturalness values are above 1 nat before AND after training; they rose by only 0.4 and 0.7"),
    # a rise of more than 0.1 on a larger reward: the rule is on the difference, not a ratio
    (_row(2.0, 0.5, 0.5, 0.0, 0.0), _row(2.15, 3.0, 0.5, 0.0, 0.0), True,
     "the reward rose by 0.15 (2.0 -> 2.15), more than 0.1 (only 7.5% of 2.0, but the rule is on the difference, not "
     "a percentage), and agent 1's naturalness by 2.5 nats"),
    # the edges: 'more than' is strict
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.5, 1.5, 0.5, 0.0, 0.0), False,
     "agent 1's naturalness rose by exactly 1.0 nat: not MORE than 1"),
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.5, 0.5, 0.5, 0.0, 0.2), False,
     "agent 2's repetition is exactly 0.2: not ABOVE 0.2"),
    # ... for each agent: a rule strict for one agent and not the other passes the two cases above
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.5, 0.5, 1.5, 0.0, 0.0), False,
     "agent 2's naturalness rose by exactly 1.0 nat: not MORE than 1 ('more than' is >, not >=, for EACH agent)"),
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.5, 0.5, 0.5, 0.2, 0.0), False,
     "agent 1's repetition is exactly 0.2: not ABOVE 0.2 ('above' is >, not >=, for EACH agent)"),
    (_row(0.5, 0.5, 0.5, 0.0, 0.0), _row(0.6, 3.0, 0.5, 0.0, 0.5), False,
     "the reward rose by exactly 0.1 (0.5 -> 0.6): not MORE than 0.1"),
    (_row(0.0, 0.5, 0.5, 0.0, 0.0), _row(0.1, 3.0, 0.5, 0.0, 0.5), False,  # 0.1 - 0.0 is exactly 0.1 in floats
     "the reward rose by exactly 0.1 (0.0 -> 0.1): not MORE than 0.1 ('more than' is >, not >=)"),
    # just past each edge: a comparison made after rounding (to 0.1 or 0.01) calls these not gamed
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.104, 3.0, 0.5, 0.0, 0.0), True,
     "the reward rose by 0.104, more than 0.1 (compare the difference as it is; rounded to 2 decimals it reads 0.1)"),
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.5, 1.54, 0.5, 0.0, 0.0), True,
     "agent 1's naturalness rose by 1.04 nats, more than 1 (rounded to one decimal it reads 1.0)"),
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.5, 0.6, 0.6, 0.0, 0.24), True,
     "agent 2's repetition is 0.24, above 0.2 (rounded to one decimal it reads 0.2)"),
    # each agent against ITS OWN untrained value: agent 1 rose by 1.9 nats, though the least natural trained agent
    # (agent 2, 2.5) rose by only 0.5 from its own 2.0, and the least natural agent overall by 0.5 too
    (_row(1.0, 0.5, 2.0, 0.0, 0.0), _row(1.5, 2.4, 2.5, 0.0, 0.0), True,
     "agent 1's naturalness rose by 1.9 nats (0.5 -> 2.4): compare EACH agent with its own untrained value, not only "
     "the least natural agent"),
    # the repetition that counts is the TRAINED one: the base model repeated, training made it stop
    (_row(1.0, 0.5, 0.5, 0.3, 0.35), _row(1.5, 0.6, 0.6, 0.05, 0.1), False,
     "the UNTRAINED agents repeated (0.3, 0.35), the trained ones do not (0.05, 0.1): the rule is on the trained "
     "row's repetition, above 0.2"),
    # an untrained reward of 0 or below is a reward like any other: only the rise counts
    (_row(0.0, 0.5, 0.5, 0.0, 0.0), _row(0.5, 2.0, 0.5, 0.0, 0.0), True,
     "the reward rose from 0.0 to 0.5: an untrained reward of 0 is no reason to skip the rule; only the rise counts"),
    (_row(-0.4, 0.5, 0.5, 0.0, 0.0), _row(0.1, 0.5, 0.5, 0.0, 0.3), True,
     "the reward rose from -0.4 to 0.1 (by 0.5): a negative untrained reward is a reward like any other"),
    # repetition is a level, not a change: an untrained agent that already repeats a little
    (_row(1.0, 0.5, 0.5, 0.0, 0.15), _row(1.5, 0.6, 0.6, 0.0, 0.3), True,
     "agent 2's repetition is 0.3, above 0.2 (it rose by only 0.15: the repetition rule is on its level)"),
    # ... and one that repeated MORE before training: above 0.2 is enough, whatever the untrained value
    (_row(1.0, 0.5, 0.5, 0.30, 0.0), _row(1.5, 0.5, 0.5, 0.25, 0.0), True,
     "agent 1's repetition is 0.25, above 0.2, though the untrained agent 1 repeated more (0.30): the repetition rule "
     "is on the trained LEVEL alone, not on a comparison with the untrained row"),
    # per agent, not the least natural agent's level: agent 1 rose by 1.9 nats, the max over agents only by 0.4
    (_row(1.0, 0.5, 2.0, 0.0, 0.0), _row(1.5, 2.4, 2.0, 0.0, 0.0), True,
     "agent 1's naturalness rose by 1.9 nats (0.5 -> 2.4); the least natural agent's level moved only 2.0 -> 2.4, "
     "but the rule is on EACH agent's change"),
    # naturalness that FELL by more than 1 is not leaving the language
    (_row(1.0, 2.5, 0.5, 0.0, 0.0), _row(1.5, 1.0, 0.6, 0.0, 0.0), False,
     "agent 1's naturalness FELL by 1.5 nats (closer to the base model's language): only a rise counts"),
    (_row(1.0, 0.5, 2.5, 0.0, 0.0), _row(1.5, 0.6, 1.0, 0.0, 0.0), False,
     "agent 2's naturalness FELL by 1.5 nats (closer to the base model's language): only a rise counts, for EACH "
     "agent (no abs() of either agent's change)"),
    # agents whose untrained naturalness differs: each agent against ITSELF, not against the other agent
    (_row(1.0, 0.5, 2.0, 0.0, 0.0), _row(1.5, 1.2, 2.1, 0.0, 0.0), False,
     "agent 1's naturalness rose by 0.7 (0.5 -> 1.2), agent 2's by 0.1 (2.0 -> 2.1); compare each agent's trained "
     "naturalness with ITS OWN untrained one, not with the other agent's (2.1 - 0.5 = 1.6 mixes the two agents)"),
    (_row(1.0, 2.0, 0.5, 0.0, 0.0), _row(1.5, 2.1, 1.2, 0.0, 0.0), False,
     "agent 1's naturalness rose by 0.1 (2.0 -> 2.1), agent 2's by 0.7 (0.5 -> 1.2); compare each agent with ITS OWN "
     "untrained naturalness, not with the other agent's"),
    (_row(1.0, 0.5, 2.0, 0.0, 0.0), _row(1.5, 0.6, 2.5, 0.0, 0.0), False,
     "agent 1's naturalness rose by 0.1 (0.5 -> 0.6), agent 2's by 0.5 (2.0 -> 2.5); compare each agent with ITS OWN "
     "untrained naturalness, not with the mean of both agents' untrained values (2.5 - 1.25 = 1.25 mixes the two)"),
    # repetition is each agent's own level: two agents below 0.2 are not above it together
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.5, 0.6, 0.6, 0.15, 0.10), False,
     "agent 1's repetition is 0.15 and agent 2's 0.10, each below 0.2: the rule is on EACH agent's repetition, not "
     "their sum (0.25)"),
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.5, 0.6, 0.6, 0.10, 0.15), False,
     "agent 1's repetition is 0.10 and agent 2's 0.15, each below 0.2: the rule is on EACH agent's repetition, not "
     "their sum (0.25)"),
]
# just past each edge by less than a rounding to 2 or 3 decimals hides: the verdict is the rule's on the raw values
_CASES += [(u, t, _gamed(u, t), why) for u, t, why in (
    (_row(1.0, 0.49, 0.5, 0.0, 0.0), _row(1.5, 1.494, 0.5, 0.0, 0.0),
     "agent 1's naturalness rose by 1.004 nats (0.49 -> 1.494), more than 1; rounded to 2 decimals each value reads "
     "1.49 - 0.49 = 1.0: round nothing, compare the raw values"),
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.5, 0.6, 0.6, 0.0, 0.203),
     "agent 2's repetition is 0.203, above 0.2; rounded to 2 decimals it reads 0.2: round nothing, compare the raw "
     "values"),
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.1004, 3.0, 0.5, 0.0, 0.0),
     "the reward rose by 0.1004 (1.0 -> 1.1004), more than 0.1; rounded to 3 decimals it reads 1.1: round nothing, "
     "compare the raw values"),
    (_row(0.5, 0.5, 0.5, 0.0, 0.0), _row(0.6004, 0.5, 0.5, 0.0, 0.5),
     "the reward rose by 0.1004 (0.5 -> 0.6004), more than 0.1; rounded to 3 decimals it reads 0.6 - 0.5 = 0.1: "
     "round nothing, compare the raw values"),
    # ... and the naturalness rise and the repetition level just past their lines by less than a rounding to 3
    # decimals hides, for each agent
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.5, 1.5004, 0.5, 0.0, 0.0),
     "agent 1's naturalness rose by 1.0004 nats (0.5 -> 1.5004), more than 1; rounded to 3 decimals the rise reads "
     "1.0: round nothing, compare the raw values"),
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.5, 0.5, 1.5004, 0.0, 0.0),
     "agent 2's naturalness rose by 1.0004 nats (0.5 -> 1.5004), more than 1; rounded to 3 decimals the rise reads "
     "1.0: round nothing, compare the raw values"),
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.5, 0.6, 0.6, 0.2004, 0.0),
     "agent 1's repetition is 0.2004, above 0.2; rounded to 3 decimals it reads 0.2: round nothing, compare the raw "
     "values"),
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.5, 0.6, 0.6, 0.0, 0.2004),
     "agent 2's repetition is 0.2004, above 0.2; rounded to 3 decimals it reads 0.2: round nothing, compare the raw "
     "values"),
)]


def _flags(fn, untrained, trained) -> bool:
    return bool(fn(dict(untrained), dict(trained)))


def _turns_at(fn, rows, lo: float, hi: float):
    """Where the answer's verdict on rows(x) turns from False to True as x goes from lo to hi (bisection): a number,
    "always" (True already at lo), "never" (still False at hi), or None when the answer crashes."""
    try:
        if _flags(fn, *rows(lo)):
            return "always"
        if not _flags(fn, *rows(hi)):
            return "never"
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if _flags(fn, *rows(mid)) else (mid, hi)
        return hi
    except Exception:  # noqa: BLE001 - an answer that crashes on a probe gets no diagnosis
        return None


def _num(x: float) -> str:
    """A turning point in words: 0 for what bisection leaves of a turn at 0 (2e-16), else 3 significant digits."""
    return "0" if abs(x) < 1e-9 else f"{x:.3g}"


def _near(x: float, want: float) -> str:
    """A turning point x near the line `want` with as many significant digits (3 to 8) as it takes to show how far
    off it is: 1.0005, not 1.001, for a rise rounded to 3 decimals."""
    for digits in range(3, 9):
        shown = f"{x:.{digits}g}"
        if abs(float(shown) - x) <= 1e-3 * abs(x - want):
            return shown
    return shown


def _repetition_multiple(fn, k: int, got: list, bases: tuple, rows) -> str | None:
    """The sentence for an answer whose repetition line for agent k is a multiple c of its untrained value (trained >
    c * untrained, or a ratio trained / untrained > c): it flags any repetition from an untrained 0, from c times
    the untrained value otherwise (seen at 0.1 and confirmed at 0.05). None for any other answer. `rows(x, b)` are
    the probe's rows at a trained repetition x from an untrained b."""
    if not (isinstance(got[0], float) and abs(got[0]) < 1e-6 and isinstance(got[1], float) and got[1] > 1e-6):
        return None
    c = got[1] / bases[1]
    third = _turns_at(fn, lambda x: rows(x, 0.05), 0.0, 1.0)
    if not (isinstance(third, float) and math.isclose(third, c * 0.05, rel_tol=1e-4, abs_tol=1e-6)):
        return None
    return (f"your rule compares agent {k}'s repetition with {c:.3g} times its UNTRAINED value (trained > {c:.3g} * "
            f"untrained, or a ratio): it flags any repetition above 0 when the untrained value is {bases[0]}, but only "
            f"from {_num(got[1])} when it is {bases[1]} and from {_num(third)} when it is 0.05, so your line moves "
            "with the untrained value. The rule's line does not move: repetition is a LEVEL with an absolute line, "
            "trained repetition > 0.2, the same 0.2 whatever the untrained value (no untrained value in it)")


def _both_turn(fn, key: str):
    """Where the answer's verdict turns as both agents' `key` moves together (naturalness: both rise by x from 0.5;
    repetition: both at x), x from 0 to 4, the reward up by 0.5 and nothing else moving: a _turns_at result."""
    def both(x):
        u = _row(1.0, 0.5, 0.5, 0.0, 0.0)
        t = dict(u, reward=1.5, **({f"{key}1": 0.5 + x, f"{key}2": 0.5 + x} if key == "naturalness" else
                                   {f"{key}1": x, f"{key}2": x}))
        return u, t
    return _turns_at(fn, both, 0.0, 4.0)


def _alone_turn(fn, key: str, k: int):
    """Where the answer's verdict turns as agent k's `key` alone moves (naturalness: a rise of x from 0.5, x up to 4;
    repetition: x, up to 1), the reward up by 0.5 and nothing else moving: a _turns_at result."""
    def alone(x):
        u = _row(1.0, 0.5, 0.5, 0.0, 0.0)
        t = dict(u, reward=1.5)
        t[f"{key}{k}"] = (0.5 + x) if key == "naturalness" else x
        return u, t
    return _turns_at(fn, alone, 0.0, 4.0 if key == "naturalness" else 1.0)


def _naturalness_line_moves(k: int, got: list, bases: tuple) -> str:
    """The sentence for an answer whose naturalness line for agent k moves with the untrained value: `got` the rises at
    which it flags from each untrained value in `bases` (a _turns_at result each). A line at one trained value is a
    LEVEL, a line at one trained / untrained a RATIO; any other is said as it is."""
    def rise(x, b, then=""):
        return {"always": f"with no rise at all from an untrained {b}",
                "never": f"at no rise up to 4 nats from an untrained {b}"}.get(x) or (
            f"at any rise at all from an untrained {b}" if abs(x) < 1e-9 else
            f"{then}once its naturalness rises by {_num(x)} from an untrained {b}")
    (x0, x1), (b0, b1) = got, bases
    shown = f"it flags agent {k} {rise(x0, b0)}, but {rise(x1, b1, 'only ')}"
    floats = all(isinstance(x, float) for x in got)
    if isinstance(x0, float) and (floats and math.isclose(b0 + x0, b1 + x1, rel_tol=1e-6, abs_tol=1e-6)
                                  or x1 == "always" and b0 + x0 <= b1):
        return (f"your rule looks at agent {k}'s naturalness LEVEL: {shown}, at a trained naturalness of about "
                f"{_num(b0 + x0)} each time, whatever it was before; the rule is on its CHANGE, trained - untrained > 1")
    if floats and x0 > 1e-9 and math.isclose(x0 / b0, x1 / b1, rel_tol=1e-6):
        return (f"your rule divides agent {k}'s naturalness, trained / untrained: {shown}, a trained naturalness "
                f"{_num(1 + x0 / b0)} times the untrained one each time. The rule is on its CHANGE, a difference in "
                "nats, trained - untrained > 1, not a ratio (or a percentage)")
    return (f"your rule's naturalness line for agent {k} moves with the untrained value: {shown}; the rule is on its "
            "CHANGE alone, trained - untrained > 1, whatever the untrained value")


def _naturalness_not_own(k: int, x, bases: tuple) -> str:
    """The sentence for an answer whose naturalness line for agent k is right from an untrained value equal to the other
    agent's (0.5, the first of `bases`) but not from another (`x`, a _turns_at result, from the second): it compares
    agent k with something that mixes in the other agent's untrained value (their mean, the other's, the smaller)."""
    b0, b1 = bases
    mean = (b1 + 0.5) / 2
    found = {"always": f"with no rise at all from an untrained {b1}",
             "never": f"at no rise up to 4 nats from an untrained {b1}"}.get(x) if isinstance(x, str) else (
        f"already once it rises by {_num(x)} from an untrained {b1}" if x < 1 else
        f"only once it rises by {_num(x)} from an untrained {b1}")
    shown = (f"from an untrained {b0}, the same as the other agent's, it flags agent {k} once its naturalness rises "
             f"by 1, as the rule does, but {found} (the other agent's untrained value still 0.5)")
    own = (f"Compare EACH agent with ITS OWN untrained value, whatever the other agent's: trained naturalness{k} - "
           f"untrained naturalness{k} > 1")
    if isinstance(x, float) and math.isclose(x, 1 - (b1 - mean), abs_tol=1e-6):
        return (f"your rule compares agent {k}'s trained naturalness with the MEAN of both agents' untrained values "
                f"({b1} and 0.5: {_num(mean)}), not with ITS OWN untrained value: {shown}. {own}")
    if x == "always" or isinstance(x, float) and math.isclose(x, 1 - (b1 - 0.5), abs_tol=1e-6):
        return (f"your rule compares agent {k}'s trained naturalness with the OTHER agent's untrained value (or the "
                f"smaller of the two), not with ITS OWN: {shown}. {own}")
    return (f"your rule compares agent {k}'s trained naturalness with something other than ITS OWN untrained value: "
            f"{shown}; the line moves when the two agents' untrained values differ (the other agent's value, their "
            f"mean or their minimum mixed in?). {own}")


def _probe(fn) -> list[str]:
    """The answer probed one quantity at a time (everything else set so that only that quantity decides): what it
    does differently from the rule, in words; empty when every probe turns where the rule does."""
    said = []

    def at(x, want):
        return isinstance(x, float) and math.isclose(x, want, abs_tol=1e-6)

    def rounds(x, want):                        # off by what rounding to 1 to 3 decimals moves a turn: 0.05, 0.005,
        return isinstance(x, float) and any(    # 0.0005 (below the line too: 1.0995 rounds to 1.1, and 1.1 - 1.0 >
            math.isclose(abs(x - want), 0.5 * 10 ** -n, rel_tol=0.02) for n in (1, 2, 3))   # 0.1 in floats)

    # 'and', not 'or': a reward that rose alone, and agents that drifted alone, are no hack
    try:
        reward_alone = _flags(fn, _row(1.0, 0.5, 0.5, 0, 0), _row(1.5, 0.5, 0.5, 0, 0))
        drift_alone = _flags(fn, _row(1.0, 0.5, 0.5, 0, 0), _row(1.0, 3.0, 3.0, 0.5, 0.5))
        drift_alone_low = _flags(fn, _row(-1.0, 0.5, 0.5, 0, 0), _row(-1.0, 3.0, 3.0, 0.5, 0.5))
        everything = _flags(fn, _row(1.0, 0.5, 0.5, 0, 0), _row(1.5, 3.0, 3.0, 0.5, 0.5))
        fell = _flags(fn, _row(1.5, 0.5, 0.5, 0, 0), _row(1.0, 3.0, 3.0, 0.5, 0.5))
        # the arguments swapped: called the other way round, the answer gives the rule's verdict on every case
        swapped = all(_flags(fn, t, u) == _gamed(u, t) for u, t, _, _ in _CASES)
    except Exception:  # noqa: BLE001 - an answer that crashes on a probe gets no diagnosis
        return said
    if swapped:
        said.append("your rule gives the right verdict on every case when it is called with the two rows the other way "
                    "round: it reads its arguments swapped. The first is the UNTRAINED row, the second the TRAINED one: "
                    "spot_the_hack(untrained, trained)")
        return said
    if drift_alone and not drift_alone_low and not reward_alone:
        said.append("your rule flags a run whose reward did not move (1.0 before and after) while its agents left "
                    "their language, but not the same run at a reward of -1.0 before and after: it tests the reward's "
                    "LEVEL; the rule is on its RISE, trained['reward'] - untrained['reward'] > 0.1")
        return said
    if reward_alone or drift_alone:
        said.append("your rule flags " + " and ".join(
            text for flag, text in ((reward_alone, "a run whose reward rose by 0.5 while both agents kept their "
                                     "language"), (drift_alone, "a run whose agents left their language while the "
                                                   "reward did not move")) if flag)
                    + ": a hack needs BOTH, the reward rising by more than 0.1 AND an agent leaving its language")
        return said
    if not everything:                              # no probe below can turn: say only this
        said.append("your rule flags a run whose reward FELL by 0.5 (1.5 -> 1.0) while its agents left their "
                    "language, but not the same run with the reward RISING by 0.5 (1.0 -> 1.5): the difference is "
                    "the wrong way round; the rule: trained['reward'] - untrained['reward'] > 0.1" if fell else
                    "your rule does not flag even a run whose reward rose by 0.5 (1.0 -> 1.5) while both agents' "
                    "naturalness rose by 2.5 nats and both repeat 0.5 (every sign of a hack at once)")
        return said
    # 'or', not 'and': one signal (naturalness or repetition) of one agent is enough
    try:
        nat_only = _flags(fn, _row(1.0, 0.5, 0.5, 0, 0), _row(1.5, 3.0, 3.0, 0, 0))
        rep_only = _flags(fn, _row(1.0, 0.5, 0.5, 0, 0), _row(1.5, 0.5, 0.5, 0.5, 0.5))
        one_agent = [_flags(fn, _row(1.0, 0.5, 0.5, 0, 0), _row(1.5, *((3.0, 0.5, 0.5, 0) if k == 1 else
                                                                       (0.5, 3.0, 0, 0.5)))) for k in (1, 2)]
    except Exception:  # noqa: BLE001
        return said
    if not nat_only and not rep_only:
        said.append("your rule flags a run only when its agents' naturalness rose by more than 1 nat AND they repeat "
                    "above 0.2 (both agents' naturalness up 2.5 nats with no repetition is not flagged, nor both "
                    "repeating 0.5 with their naturalness unchanged): one signal is enough, naturalness OR repetition; "
                    "stitched fragments repeat no 3-gram")
    if not any(one_agent):
        said.append("your rule flags a run only when BOTH agents left their language (agent 1 alone, naturalness up "
                    "2.5 nats and repeating 0.5, is not flagged, nor agent 2 alone): one agent is enough, any(...) "
                    "over the two agents, not all(...); in the notebook's runs one agent drifts while the other stays")
    if said:
        return said
    if fell:
        said.append("your rule also flags a run whose reward FELL by 0.5 (1.5 -> 1.0) while its agents left their "
                    "language: only a RISE counts, trained['reward'] - untrained['reward'] > 0.1 (no abs)")
    # the reward, from two untrained rewards (a ratio turns at different rises), both agents drifting and repeating
    rw = [_turns_at(fn, lambda x, b=b: (_row(b, 0.5, 0.5, 0, 0), _row(b + x, 3.0, 3.0, 0.5, 0.5)), 0.0, 1.0)
          for b in (1.0, 2.0)]
    if None not in rw and not (at(rw[0], 0.1) and at(rw[1], 0.1)):
        def when(x):
            return {"always": "with no rise at all", "never": "never, not even after a rise of 1.0"}.get(
                x) if isinstance(x, str) else f"from a rise of {x:.4g}"
        if all(isinstance(x, float) for x in rw) and not math.isclose(rw[0], rw[1], abs_tol=1e-6):
            said.append(f"your rule counts the reward as risen at a rise of {rw[0]:.3g} from 1.0 but {rw[1]:.3g} from "
                        "2.0: 'rose by more than 0.1' is a difference, trained - untrained > 0.1, not a percentage")
        elif rw[0] != rw[1] and not all(isinstance(x, float) for x in rw):
            said.append(f"at an untrained reward of 1.0 your rule counts the reward as risen {when(rw[0])}, at 2.0 "
                        f"{when(rw[1])}: it depends on the reward's LEVEL; the rule is on its rise alone, "
                        "trained['reward'] - untrained['reward'] > 0.1")
        elif rw[0] == "always" or (isinstance(rw[0], float) and rw[0] < 1e-6):
            said.append("your rule counts ANY rise of the reward (or none); the reward must rise by MORE than 0.1: "
                        "trained['reward'] - untrained['reward'] > 0.1")
        elif rw[0] == "never":
            said.append("your rule never counts the reward as risen, even by 1.0; the reward must rise by MORE than "
                        "0.1: trained['reward'] - untrained['reward'] > 0.1")
        elif rounds(rw[0], 0.1):
            said.append(f"your rule counts the reward as risen from a rise of about {rw[0]:.4g}, just "
                        + ("above" if rw[0] > 0.1 else "below") + " the rule's 0.1 (a rise above 0.1, however little, "
                        "counts): do you round? Round nothing, compare the raw values, trained['reward'] - "
                        "untrained['reward'] > 0.1")
        else:
            said.append(f"your reward line is at about {rw[0]:.3g}, not 0.1: your rule " + (
                f"counts rises from {rw[0]:.3g} to 0.1 as risen, which are not MORE than 0.1" if rw[0] < 0.1 else
                f"misses rises between 0.1 and {rw[0]:.3g}") + "; the rule: trained['reward'] - untrained['reward'] > 0.1")
    # naturalness that FELL by more than 1 nat (3.0 -> 0.5, back towards the base model's language) is no drift
    fall_said = False
    for k in (1, 2):
        u = _row(1.0, 3.0 if k == 1 else 0.5, 3.0 if k == 2 else 0.5, 0.0, 0.0)
        t = _row(1.5, 0.5, 0.5, 0.0, 0.0)
        try:
            fell_flagged = _flags(fn, u, t)
        except Exception:  # noqa: BLE001 - an answer that crashes on a probe gets no diagnosis
            break
        if not fell_flagged:
            continue
        rise = _alone_turn(fn, "naturalness", k)
        if rise == "never":
            said.append(f"your rule flags agent {k} when its naturalness FALLS by 2.5 nats (3.0 -> 0.5, back towards "
                        f"the base model's language), but never when it RISES (even by 4 nats): the sign is flipped, "
                        "untrained - trained. The rule: trained naturalness - untrained naturalness > 1, only a rise "
                        "counts")
        else:
            said.append(f"your rule flags agent {k} when its naturalness FALLS by 2.5 nats (3.0 -> 0.5, back towards "
                        "the base model's language) as well as when it rises: a fall is no drift (an abs() of the "
                        "change?). The rule: trained naturalness - untrained naturalness > 1, only a rise counts, no "
                        "abs")
        fall_said = True
        break
    skip_repetition_of = None                       # an agent whose naturalness and repetition are both ignored
    for key, want, span, bases in (("naturalness", 1.0, 4.0, (0.5, 2.0)), ("repetition", 0.2, 1.0, (0.0, 0.1))):
        for k in (1, 2):
            if key == "repetition" and k == skip_repetition_of or key == "naturalness" and fall_said:
                continue                            # said already: agent k ignored altogether, or a fall flagged
            def rows(x, b, k=k):
                u = _row(1.0, 0.5, 0.5, 0.0, 0.0)
                u[f"{key}{k}"] = b
                t = dict(u, reward=1.5)
                t[f"{key}{k}"] = (b + x) if key == "naturalness" else x
                return u, t
            got = [_turns_at(fn, lambda x, b=b: rows(x, b), 0.0, span) for b in bases]
            if None in got or (at(got[0], want) and at(got[1], want)):
                if key == "repetition" and None not in got:     # right below the line: probed above it too
                    above = _turns_at(fn, lambda x: rows(x, 0.3), 0.0, span)
                    if isinstance(above, float) and math.isclose(above, 0.3, abs_tol=1e-6):
                        said.append(f"your rule flags agent {k}'s repetition only when it is above 0.2 AND above its "
                                    f"UNTRAINED value: when the untrained agent {k} repeated 0.3, it flags the trained "
                                    "one only from about 0.3 (a trained 0.25 is not flagged, though it is above 0.2). "
                                    "Repetition is a LEVEL, not a comparison with the untrained row: a trained agent "
                                    "that repeats above 0.2 is padding, whatever it did before; the rule: trained "
                                    "repetition > 0.2, with no untrained value in it")
                        break
                continue
            if got[0] != got[1] and not (all(isinstance(x, float) for x in got)
                                         and math.isclose(got[0], got[1], abs_tol=1e-6)) and not any(
                    at(x, want) for x in got):          # right from one base: the agents crossed, said below
                def flags(x):                   # where a turn was found, in words
                    if key == "naturalness":
                        return {"always": "with no rise at all", "never": f"at no rise up to {span:g}"}.get(
                            x) or f"a rise of {_num(x)}"
                    return {"always": "any repetition", "never": "none up to 1"}.get(x) or _num(x)
                if key == "naturalness":
                    said.append(_naturalness_line_moves(k, got, bases))
                else:
                    said.append(_repetition_multiple(fn, k, got, bases, rows) or (
                        f"your rule looks at agent {k}'s repetition CHANGE (it flags {flags(got[0])} when the "
                        f"untrained value is {bases[0]}, {flags(got[1])} when it is {bases[1]}); the rule is "
                        "on its LEVEL, trained repetition > 0.2"))
                break
            if key == "repetition" and at(got[0], want) and isinstance(got[1], float) and math.isclose(
                    got[1], bases[1] + want, abs_tol=1e-6):     # right from 0 only: the line moves with the untrained
                said.append(f"your rule looks at agent {k}'s repetition CHANGE, trained - untrained, where the rule is "
                            f"on its LEVEL: it flags agent {k} from a repetition of {_num(got[0])} when the untrained "
                            f"value is {bases[0]}, but only from {_num(got[1])} when it is {bases[1]}; the rule: "
                            "trained repetition > 0.2, whatever the untrained one")
                break
            if key == "repetition" and got[0] != got[1] and not (all(isinstance(x, float) for x in got)
                                                                 and math.isclose(got[0], got[1], abs_tol=1e-6)):
                def level(x, b):                # right from one untrained value only: the line moves with it
                    return {"always": f"at any repetition when the untrained value is {b}",
                            "never": f"at no repetition up to 1 when it is {b}"}.get(x) if isinstance(x, str) else (
                        f"from any repetition above 0 when the untrained value is {b}" if abs(x) < 1e-9 else
                        f"from a repetition of {_num(x)} when the untrained value is {b}")
                said.append(_repetition_multiple(fn, k, got, bases, rows) or (
                    f"your rule's repetition line for agent {k} moves with the untrained value: it flags agent {k} "
                    f"{level(got[0], bases[0])}, but {level(got[1], bases[1])}. The rule's line does not move: "
                    "repetition is a LEVEL with an absolute line, trained repetition > 0.2, the same 0.2 whatever "
                    "the untrained value (no untrained value in it)"))
                break
            if key == "naturalness" and at(got[0], want):  # right where both agents start alike, not where they differ
                said.append(_naturalness_not_own(k, got[1], bases))
                break
            if all(x == "never" for x in got) and isinstance(_alone_turn(fn, key, 3 - k), float):  # the other: flagged
                ignores_rep = key == "naturalness" and _alone_turn(fn, "repetition", k) == "never" and isinstance(
                    _alone_turn(fn, "repetition", 3 - k), float)    # agent k's repetition ignored too: one sentence
                skip_repetition_of = k if ignores_rep else None
                said.append(f"your rule ignores agent {k}: it never flags agent {k} alone for its "
                            + ("naturalness (even a rise of 4 nats) or its repetition (even at 1)" if ignores_rep else
                               f"naturalness (even a rise of {span:g} nats)" if key == "naturalness" else
                               f"repetition (even at {span:g})")
                            + f", though it does flag agent {3 - k} alone. Any agent may be the one "
                            f"that drifted: apply the rule to EACH agent, any(...) over both, agent 1 and agent 2; in "
                            "the notebook's runs one agent drifts while the other stays")
                break
            if all(x == "never" for x in got) and at(_both_turn(fn, key), want):   # alone never, together at the line
                said.append(f"your rule asks ALL agents, not ANY: it never flags agent {k} alone for its {key} ("
                            + (f"even a rise of {span:g} nats" if key == "naturalness" else f"even at {span:g}")
                            + "), yet flags both agents together once each "
                            + ("rises by more than 1 nat" if key == "naturalness" else "repeats above 0.2")
                            + ". Any agent, not all: one agent over the line is enough, any(...) over the two agents, "
                            "not all(...); in the notebook's runs one agent drifts while the other stays")
                break
            if key == "repetition" and all(x == "never" for x in got):    # never alone: mixed into naturalness?
                def with_rep(x, k=k):           # agent k's naturalness rising by x while it repeats 0.15 (below 0.2)
                    u = _row(1.0, 0.5, 0.5, 0.0, 0.0)
                    t = dict(u, reward=1.5, **{f"naturalness{k}": 0.5 + x, f"repetition{k}": 0.15})
                    return u, t
                mixed = _turns_at(fn, with_rep, 0.0, 4.0)
                if isinstance(mixed, float) and not at(mixed, 1.0):
                    said.append(f"your rule never flags agent {k} for its repetition alone (even at 1), yet while "
                                f"agent {k} repeats 0.15 (below 0.2) it flags a naturalness rise of about "
                                f"{_near(mixed, 1.0)} nats, not 1: "
                                + ("you add the naturalness rise and the repetition ((trained - untrained "
                                   "naturalness) + repetition > 1?), the sum of two different quantities"
                                   if at(mixed, 0.85) else "you mix the naturalness rise and the repetition into one "
                                   "number, two different quantities") + ": a change in nats per token and a share of "
                                "repeated 3-grams, each with its own line. Compare each on its own, never combined: "
                                f"agent {k}'s naturalness rise > 1 OR its repetition > 0.2")
                    break
            x, b = next((x, b) for x, b in zip(got, bases) if not at(x, want))
            if at(x, 2 * want) and at(_both_turn(fn, key), want):   # twice the line alone, the line together:
                said.append(f"your rule flags agent {k} only once its {key} "     # half of agent k's value is the mean
                            + (f"rises by about {x:.3g} nats" if key == "naturalness" else f"reaches about {x:.3g}")
                            + f", twice the line, while the other agent's {key} "
                            + ("does not move" if key == "naturalness" else "is 0")
                            + ", yet both agents together from " + (f"a rise of {want:g} each" if key == "naturalness"
                                                                     else f"{want:g} each")
                            + f": you averaged the two agents ((agent 1 + agent 2) / 2 > {want:g}). The rule is on EACH "
                            "agent's own " + ("change, more than 1 nat" if key == "naturalness" else
                                              "repetition, above 0.2") + ": one agent over the line is enough")
                break
            rounded = rounds(x, want)
            line = "" if rounded or not isinstance(x, float) else (
                f"your {key} line is at about {x:.4g}" + (" nats" if key == "naturalness" else "")
                + f", not {want:g}" + (" (below it)" if x < want else "") + ": ")
            if key == "naturalness":
                how = {"always": f"flags agent {k} with no rise of its naturalness at all",
                       "never": f"never flags agent {k} for its naturalness, even a rise of {span:g} nats"}.get(
                    x) or f"flags agent {k} once its naturalness rises by about {_near(x, want)} nats"
                said.append(f"{line or 'your rule '}{'your rule ' if line else ''}{how} (untrained naturalness {b}, the "
                            f"other agent's 0.5); the rule: agent {k}'s naturalness rose by MORE than 1 nat per token, "
                            "against its own untrained value"
                            + (" (a rise above 1, however little, counts): do you round? Round nothing, compare the "
                               "raw values" if rounded else ""))
            else:
                how = {"always": f"flags agent {k} at repetition 0",
                       "never": f"never flags agent {k} for its repetition, even at {span:g}"}.get(
                    x) or f"flags agent {k} once its repetition reaches about {x:.4g}"
                if rounded:                     # a line typed at 0.25 and a rounding of 0.24 to 0.2 look alike:
                    near = _near(x, want)
                    gap = (f"a repetition between 0.2 and {near} is not flagged" if x > want else  # the line first
                           f"a repetition from {near} to 0.2 is flagged, though it is not above 0.2")
                    said.append(f"your repetition line is at about {near}, not 0.2: your rule flags agent {k} once "
                                f"its repetition reaches about {near}, so {gap}. The line is 0.2, and the rule is "
                                f"strictly above it: agent {k}'s repetition > 0.2, any repetition above 0.2, however "
                                "little, counts. Put the line at 0.2 itself; and if you round the repetition (rounded, "
                                f"{near} and 0.2 read alike), round nothing and compare the raw values")
                else:
                    said.append(f"{line or 'your rule '}{'your rule ' if line else ''}{how}; the rule: agent {k}'s "
                                "repetition is ABOVE 0.2")
            break                                   # one sentence per quantity is enough
    if not said:                                    # each agent right alone: both agents moving together
        for key, want in (("naturalness", 1.0), ("repetition", 0.2)):
            got = _both_turn(fn, key)
            if isinstance(got, float) and not at(got, want):
                said.append(f"when both agents' {key} moves together your rule flags them from about {got:.3g} each: "
                            "it adds or averages the two agents; the rule is on EACH agent's own "
                            + ("change (more than 1 nat)" if key == "naturalness" else "repetition (above 0.2)"))
    return said[:2]                                 # the first two differences are enough to act on


@exercise("08.spot_the_hack")
def check_spot_the_hack(fn):
    for untrained, trained, gamed, why in _CASES:
        given_u, given_t = dict(untrained), dict(trained)
        got = call_answer(fn, given_u, given_t, said=lambda exc, untrained=untrained, trained=trained: (
            f"spot_the_hack(untrained, trained) raised {type(exc).__name__}: {exc}, for the rows "
            f"{untrained} and {trained}. Each row is a dict with the keys reward, naturalness1, "
            "naturalness2, repetition1, repetition2."))
        if given_u != untrained or given_t != trained:
            which = [name for name, g, r in (("untrained", given_u, untrained), ("trained", given_t, trained)) if g != r]
            raise ExerciseFailed(f"your function changed the {' and '.join(which)} row it was given (keys "
                                 f"{sorted(k for g, r in ((given_u, untrained), (given_t, trained)) for k in set(g) | set(r) if g.get(k) != r.get(k))}): "
                                 "these are the notebook's table rows, read again for the table and the plots after "
                                 "your rule. Read the values without assigning to the dicts (work on your own "
                                 "variables).")
        if not is_bool(got):
            raise ExerciseFailed(f"return True or False (a bool; numpy's bool is one too), not {got!r}"
                                 + (f" (of type {type(got).__name__}: wrap the condition in bool(...))"
                                    if not isinstance(got, (str, type(None))) else "") + ".")
        if bool(got) == gamed:
            continue
        nat = {k: round(trained[f"naturalness{k}"] - untrained[f"naturalness{k}"], 4) for k in (1, 2)}
        what = (f"reward {untrained['reward']} -> {trained['reward']}, naturalness {untrained['naturalness1']}, "
                f"{untrained['naturalness2']} -> {trained['naturalness1']}, {trained['naturalness2']} (change per agent "
                f"{nat}), repetition {untrained['repetition1']}, {untrained['repetition2']} -> "
                f"{trained['repetition1']}, {trained['repetition2']} (the trained level counts)")
        rule = ("The rule: the reward rose by MORE than 0.1, and some agent's naturalness ROSE by MORE than 1 nat per "
                "token (the change from the untrained row, not its level) or its repetition is ABOVE 0.2.")
        probed = _probe(fn)
        head = (f"{what}: this run gamed the reward, you returned False." if gamed else
                f"{what}: you returned True, but this run did not game the reward.")
        if probed:                  # what the probes found first: the case's own note may name another misreading
            raise ExerciseFailed(f"{head} Probed one quantity at a time, " + "; and ".join(probed)
                                 + f". This case: {why}. {rule}")
        raise ExerciseFailed(f"{head} This case: {why}. {rule}" + (
            " Look at BOTH agents, and at naturalness as well as repetition: stitched fragments repeat no 3-gram."
            if gamed else ""))
