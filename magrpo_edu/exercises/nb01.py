"""Checks of notebook 01's exercises (GRPO from scratch): the masked sum of a completion's token
log-probs, the leave-one-out baseline, and GRPO's 1/|a| length-normalised loss."""
from __future__ import annotations

import torch

from ..algorithm import group_advantages, policy_loss
from . import (ExerciseFailed, call_answer, exercise, first_line, not_a_wrapper, outputs_per_group, remember_call,
               rounded_to, runs_the_library)


def _cases():
    """(token_logp (G, C), mask (G, C)) pairs: padding at the end, a completion of one token, an empty one; in the
    (5, 9) group two very unlikely real tokens and one likely padding token."""
    g = torch.Generator().manual_seed(7)
    out = []
    for G, C in ((4, 6), (3, 1), (5, 9), (2, 48)):   # (2, 48): long answers, sums near -120 (exp underflows)
        logp = -torch.rand(G, C, generator=g) * 3 - (1.0 if C > 9 else 0.1)
        lengths = torch.randint(0, C + 1, (G,), generator=g)
        lengths[0] = C                     # one completion uses every position
        if G > 2:
            lengths[1] = 0                 # one completion is empty (EOS only is masked elsewhere; here: no tokens)
        mask = (torch.arange(C).unsqueeze(0) < lengths.unsqueeze(1)).float()
        logp = torch.where(mask.bool(), logp, torch.full_like(logp, -7.5))  # what a padding token gets: not zero
        if (G, C) == (5, 9):
            # the mask, not the value, tells a real token from padding: two RARE real tokens (log-probs -25 and -60:
            # a clamp, token_logp.clamp(min=-10) or min=-50, or a filter token_logp > -5 changes their sums) and a
            # padding token the model finds likely (-0.5: a value filter keeps it)
            logp[0, 4], logp[4, 2], logp[2, 4] = -25.0, -60.0, -0.5
        out.append((logp, mask))
    return out


def _float64_case():
    """The first group's log-probs in float64 (a model run in double precision), the mask still float32: the result
    keeps the log-probs' dtype, float64 (what `token_logp * mask` gives), not a float32 made along the way."""
    logp, mask = _cases()[0]
    return logp.double(), mask


def _padded_case():
    """A group where NO completion fills the padded width C = 6 (lengths 4, 2, 3): dividing by C and dividing by the
    longest completion's length give different numbers, so the check can say which one a wrong loss did."""
    g = torch.Generator().manual_seed(5)
    lengths, C = torch.tensor([4, 2, 3]), 6
    mask = (torch.arange(C).unsqueeze(0) < lengths.unsqueeze(1)).float()
    logp = torch.where(mask.bool(), -torch.rand(3, C, generator=g) * 3 - 0.1, torch.full((3, C), -7.5))
    return logp, mask


def _certain_tokens_case():
    """A group where some REAL tokens (mask 1) have log-prob exactly 0.0, tokens the model is certain of (probability
    1): counting a completion's length as its non-zero log-probs instead of its mask gives other lengths here."""
    logp = torch.tensor([[-0.5, 0.0, -1.25, 0.0, -7.5],
                         [0.0, -2.0, -0.75, -7.5, -7.5],
                         [-1.5, 0.0, -7.5, -7.5, -7.5]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 1.0, 0.0],
                         [1.0, 1.0, 1.0, 0.0, 0.0],
                         [1.0, 1.0, 0.0, 0.0, 0.0]])
    return logp, mask


def _tensor(name: str, value, shape,
            why: str = "one value per completion: reduce over the LAST axis, the tokens") -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise ExerciseFailed(f"{name} should return a torch.Tensor, got {type(value).__name__}.")
    if tuple(value.shape) != tuple(shape):
        raise ExerciseFailed(f"{name} should return shape {tuple(shape)} ({why}), got {tuple(value.shape)}.")
    return value


def _raised(name: str, e: Exception, extra: str = "") -> ExerciseFailed:
    """The learner's exception, said in a sentence (an in-place change of an input explained)."""
    first = (str(e).splitlines() or [""])[0].rstrip(".")
    if "in-place" in first or "inplace" in first:
        extra = (" That is an in-place operation (mul_, div_, masked_fill_, *=, ...) on an input: token_logp carries "
                 "the gradient (a tensor that requires grad may not be changed in place) and the caller uses every "
                 "input again. Use out-of-place operations instead, token_logp * mask, and leave the inputs as "
                 "they are." + extra)
    return ExerciseFailed(f"{name} raised {type(e).__name__}: {first}.{extra}")


def _carries_gradient(value, leaf, mask, name, bool_mask: bool = False) -> None:
    """The loss of cell 22 calls backward() through this value: it must stay in the autograd graph."""
    if not value.requires_grad:
        raise ExerciseFailed(f"{name}'s result carries no gradient (it was rebuilt from Python floats, or detached, or "
                             "taken with .item()): the loss's backward() needs the log-probs in the graph. Compute it "
                             "with tensor operations on token_logp (multiply by the mask, sum over the tokens).")
    try:
        grad, = torch.autograd.grad(value.sum(), leaf, allow_unused=True)
    except RuntimeError as e:
        raise ExerciseFailed(f"the gradient of {name}'s result could not be computed (backward raised RuntimeError: "
                             f"{(str(e).splitlines() or [''])[0]}). "
                             + ("With a bool mask, convert it first (mask.to(token_logp.dtype)) or select with "
                                "torch.where(mask.bool(), token_logp, 0); " if bool_mask else "")
                             + "multiply token_logp by the mask and sum over the tokens.") from None
    if grad is None or not torch.allclose(grad * mask, grad):
        raise ExerciseFailed(f"{name}'s gradient reaches padding positions (or none at all): only the completion's real "
                             "tokens (mask 1) may carry gradient.")
    return grad


def _r(t: torch.Tensor, k: int = 4) -> list:
    return [round(x, k) for x in t.detach().float().tolist()]


def _rounded(got: torch.Tensor, want: torch.Tensor, places=range(7)) -> int | None:
    """The number of decimals k for which `got` is `want` rounded to k places; None when no k gives it, and when `got`
    is within the check's tolerance of `want` (float32 noise could pass for a rounding there: a rounding that fine
    is told by its gradient, 0 everywhere, instead)."""
    got, want = got.detach().double(), want.detach().double()
    if torch.allclose(got, want, atol=1e-5):
        return None
    return next((k for k in places if torch.allclose(got, torch.round(want, decimals=k), atol=1e-6, rtol=1e-7)), None)


def _one_off(logp, mask):
    """The sums a one-position slip gives: the last or the first position dropped, or the log-probs and the mask
    out of step by one (either way)."""
    m = mask.float()
    return [(logp[:, :-1] * m[:, :-1]).sum(-1), (logp[:, 1:] * m[:, 1:]).sum(-1),
            (logp[:, :-1] * m[:, 1:]).sum(-1), (logp[:, 1:] * m[:, :-1]).sum(-1)]


def _last_token_dropped(logp, mask):
    """The sums with the LAST real token of each completion left out (its EOS token, or the last token of an answer cut
    at the length limit): what `token_logp[:, :-1] * mask[:, 1:]` gives, or an EOS dropped on purpose."""
    n = mask.float().sum(-1)
    keep = torch.arange(logp.shape[1]).unsqueeze(0) < (n - 1).unsqueeze(1)
    return (logp * keep).sum(-1)


def _runs_on_bool(fn, logp, mask) -> bool:
    """Whether fn answers (G,) where given the same mask as bool: a crash on the float mask is then the mask's dtype."""
    try:
        out = fn(logp.detach().clone().requires_grad_(True), mask.bool())
    except Exception:  # noqa: BLE001  it fails either way: no evidence
        return False
    return isinstance(out, torch.Tensor) and tuple(out.shape) == tuple(logp.shape[:1])


def _sequence_crash(e: Exception, bool_mask: bool, fn=None, logp=None, mask=None):
    """What a crash of sequence_logprob says: an in-place change, a slice off by one, a bool mask not handled, a float
    mask given where the answer wants a bool one."""
    if "in-place" in str(e):
        return _raised("your function", e)
    if not bool_mask and "size of tensor" in str(e):
        return (f"your function raised RuntimeError: {first_line(e)}. token_logp and "
                "mask are both (G, C) and already aligned: position t of one is token t of the "
                "completion in the other (cell 17 took the logits at -C-1:-1 for that). Use "
                "both whole, no slice such as [:, :-1] or [:, 1:].")
    if not bool_mask and ("boolean" in str(e).lower() or "bool" in str(e).split()
                          or (fn is not None and _runs_on_bool(fn, logp, mask))):
        return (f"with a float mask (1.0 on the real tokens, 0.0 on the padding, as the notebook's mask is) your "
                f"function raised {type(e).__name__}: {first_line(e)}. torch.where, masked_fill, indexing and ~ "
                "need a BOOL mask: convert the float mask first, mask.bool() (torch.where(mask.bool(), token_logp, 0), "
                "~mask.bool()), or multiply, token_logp * mask, which takes either mask.")
    if not bool_mask:
        return _raised("your function", e)
    return (f"with a bool mask (True on the real tokens, as a tokenizer's attention mask can "
            f"come) your function raised {type(e).__name__}: {first_line(e)}. The mask "
            "may be float or bool: select with it (torch.where(mask.bool(), token_logp, 0)) or "
            "convert it first (mask.to(token_logp.dtype)).")


def _one_row_of_mask(fn, logp, mask, got) -> int | None:
    """The row k when the answer multiplies every completion by ONE row of the mask, mask[k] (row k's mask broadcast
    to all G rows: token_logp * mask[0]), on this group and on every probe group where it answers, one of them (a
    group whose row k is not real on every position) telling it from the padding summed; None otherwise."""
    readings = lambda lp, m, k: (lp * m.float()[k]).sum(-1)  # noqa: E731
    want = (logp * mask.float()).sum(-1)
    probes = [_padded_case(), _certain_tokens_case()] + _cases()
    for k in (0, 1, -1, -2):
        here = readings(logp, mask, k)
        if not torch.allclose(got, here.to(got.dtype), atol=1e-5) or torch.allclose(here, want, atol=1e-5):
            continue
        tells, agrees = False, True
        for lp, m in probes:
            try:
                out = fn(lp.clone().requires_grad_(True), m.clone())
                fits = isinstance(out, torch.Tensor) and tuple(out.shape) == lp.shape[:1]
                out = out.detach().double() if fits else None
            except Exception:  # noqa: BLE001  no evidence either way
                out = None
            if out is None:
                continue
            r = readings(lp, m, k).double()
            if not torch.allclose(out, r, atol=1e-5):
                agrees = False
                break
            tells = tells or not torch.allclose(r, lp.double().sum(-1), atol=1e-5)
        if agrees and tells:
            return k
    return None


def _one_token(logp, mask, got) -> str | None:
    """What an answer did that keeps ONE token's log-prob per completion, its lowest or its highest (.min(-1) or
    .max(-1), of token_logp * mask or of the real tokens alone), told on the completions with a real token (an empty one
    gives 0, +-inf or a fill value) where it differs from their sum; None otherwise."""
    real = mask.float().sum(-1) > 0
    if not real.any():
        return None
    m, want = mask.bool(), (logp * mask.float()).sum(-1)
    inf = torch.tensor(float("inf"), dtype=logp.dtype)
    readings = [("you took each completion's LOWEST log-prob, .min(-1)", torch.where(m, logp, inf).min(-1).values),
                ("you took each completion's HIGHEST log-prob, .max(-1)", torch.where(m, logp, -inf).max(-1).values),
                ("you took the HIGHEST of token_logp * mask over the tokens, .max(-1) (0 wherever there is padding)",
                 (logp * mask.float()).max(-1).values)]
    for what, v in readings:
        if (torch.allclose(got[real].double(), v[real].double(), atol=1e-5)
                and not torch.allclose(v[real], want[real], atol=1e-5)):
            return what
    return None


# clamps a learner may put on the log-probs, token_logp.clamp(min=-b): every b the (5, 9) group's rare tokens tell
_CLAMP_BOUNDS = sorted({k / 2 for k in range(1, 21)} | set(range(11, 101)))


def _values(t: torch.Tensor) -> str:
    """Some log-probs, as a short phrase: "log-prob -0.5", "log-probs -25 and -60"."""
    vals = sorted({round(float(v), 2) for v in t.flatten()}, reverse=True)
    shown = [f"{v:g}" for v in vals[:4]] + (["..."] if len(vals) > 4 else [])
    return ("log-prob " + shown[0] if len(shown) == 1
            else "log-probs " + ", ".join(shown[:-1]) + " and " + shown[-1])


def _value_slip(logp, mask, answers, got) -> str | None:
    """What an answer did that tells the real tokens by their log-prob's VALUE instead of the mask, when one such reading
    gives `got` here and the right answer does not: the log-probs clamped at -b, a threshold on the value in place of
    the mask, the mask with the rare real tokens dropped, the padding's usual value -7.5 filtered out. `answers(lp,
    keep)` gives the results (one or more) of an answer summing lp * keep; None when no reading explains `got`."""
    m, real = mask.float(), mask.bool()
    right = answers(logp, m)
    fits = lambda lp, keep: any(torch.allclose(got, v.to(got.dtype), atol=1e-5) for v in answers(lp, keep)) and not any(
        torch.allclose(v, w, atol=1e-5) for v in answers(lp, keep) for w in right)  # noqa: E731
    low = logp[real].min() if real.any() else logp.new_tensor(0.0)
    for b in _CLAMP_BOUNDS:
        if low < -b and fits(logp.clamp(min=-b), m):
            return (f"you clamped the log-probs at -{b:g} (token_logp.clamp(min=-{b:g}), or a max with -{b:g}), and a "
                    f"real token can be very unlikely, a rare token ({_values(logp[real & (logp < -b)])} here): do not "
                    "clamp log-probs. A real token's log-prob counts as it is, however low (it is "
                    "finite, and the mask already zeroes the padding): sum_t mask * token_logp as given.")
    levels = torch.unique(logp)
    for lo, hi in zip(levels[:-1].tolist(), levels[1:].tolist()):
        keep = (logp > (lo + hi) / 2).to(m.dtype)
        if not keep.any() or keep.all():
            continue
        kept_pad, dropped = logp[(keep > 0) & ~real], logp[(keep == 0) & real]
        if fits(logp, keep):
            return (f"you told the real tokens by their log-prob's VALUE (token_logp > t, a threshold t between {lo:.4g} "
                    f"and {hi:.4g}), not by the mask: the mask, not the value, says which tokens are real. "
                    + (f"Here a padding token has {_values(kept_pad)} (what the model gives a padding token "
                       "can be anything) and your filter kept it" if kept_pad.numel() else "")
                    + ("; " if kept_pad.numel() and dropped.numel() else "")
                    + (f"{'a' if kept_pad.numel() else 'Here a'} real token can be very unlikely, a rare token "
                       f"({_values(dropped)}), and your filter dropped it" if dropped.numel() else "")
                    + ". Multiply by the mask itself, sum_t mask * token_logp, with no test on the values.")
        if dropped.numel() and fits(logp, m * keep):
            kept_real = logp[(keep > 0) & real]
            upper = float(kept_real.min()) if kept_real.numel() else hi
            return (f"you used the mask, but also dropped the real tokens whose log-prob is below a threshold (between "
                    f"{float(dropped.max()):.4g} and {upper:.4g}): a real token can be very unlikely, a rare token ({_values(dropped)} "
                    "here), and it still counts. The mask, not the value, says which tokens are real: sum_t mask * "
                    "token_logp, with no test on the values.")
    for pad in (-7.5,):
        keep = (logp != pad).to(m.dtype)
        if fits(logp, keep):
            return (f"you left out the tokens whose log-prob is {pad:g} (token_logp != {pad:g}), the value most padding "
                    "tokens have here: the mask, not the value, says which tokens are real"
                    + (f" (here a padding token has {_values(logp[(keep > 0) & ~real])}: what the model gives "
                       "a padding token can be anything)" if ((keep > 0) & ~real).any() else "")
                    + ". Multiply by the mask itself, sum_t mask * token_logp.")
    return None


def _summed_over_completions(out, logp, mask) -> str | None:
    """What an answer of shape (C,) did when its values are the sums over axis 0, the G completions (of the masked
    log-probs or of the raw ones): one number per token position instead of one per completion; None otherwise."""
    G, C = logp.shape
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != (C,) or C == G:
        return None
    vals = out.detach().double()
    readings = ((logp.double() * mask.double()).sum(0), logp.double().sum(0))
    if not any(torch.allclose(vals, v, atol=1e-5) for v in readings):
        return None
    return (f"sequence_logprob should return shape ({G},), one value per completion; you returned shape ({C},): you "
            f"summed over axis 0 (sum(0), dim=0), the G = {G} completions, which gives one number per token POSITION. "
            f"token_logp and mask are (G, C) = ({G}, {C}): the completions along axis 0, the tokens along the LAST "
            "axis. Sum over the tokens, sum(-1): (token_logp * mask).sum(-1).")


@exercise("01.sequence_logprob")
def check_sequence_logprob(fn):
    for logp, mask in _cases() + [_float64_case()]:
        for m in (mask, mask.bool()):
            leaf = logp.clone().requires_grad_(True)
            given = m.clone()
            out = call_answer(fn, leaf, given, said=lambda e, m=m, logp=logp: _sequence_crash(
                e, m.dtype == torch.bool, fn, logp, m))
            if not torch.equal(given, m) or not torch.equal(leaf.detach(), logp):
                raise ExerciseFailed("your function changed its inputs in place (mask or token_logp): the caller uses "
                                     "them again. Use out-of-place operations, token_logp * mask, and leave the "
                                     "inputs as they are.")
            if (axis0 := _summed_over_completions(out, logp, m)) is not None:
                raise ExerciseFailed(axis0)
            got = _tensor("sequence_logprob(token_logp, mask)", out, logp.shape[:1])
            if got.dtype != logp.dtype:
                raise ExerciseFailed(f"sequence_logprob returned a {got.dtype} tensor from {logp.dtype} token log-probs "
                                     f"(and a {m.dtype} mask): keep the log-probs' dtype, no .double(), .half() or "
                                     ".to(...) on them or on the result. The next cell compares your log-probs with "
                                     "the library's with torch.allclose, which refuses two different dtypes; a float "
                                     "mask or mask.to(token_logp.dtype) keeps it"
                                     + (" (and a result built in torch.zeros(G) or torch.tensor([...]) is float32 "
                                        "unless told otherwise: torch.zeros(G, dtype=token_logp.dtype))"
                                        if got.dtype == torch.float32 else "") + ".")
            want = (logp * mask).sum(-1)
            eos = _last_token_dropped(logp, mask)
            if (torch.allclose(got.detach(), eos, atol=1e-5) and not torch.allclose(eos, want, atol=1e-5)
                    and not torch.allclose(got.detach(), _one_off(logp, mask)[0], atol=1e-5)):
                raise ExerciseFailed(f"for completions of {mask.sum(-1).int().tolist()} real tokens the sums are "
                                     f"{_r(want)}, you returned {_r(got)}: you left out the LAST real token of each "
                                     "completion (the mask shifted by one, mask[:, 1:], or the end-of-sequence token "
                                     "dropped on purpose). That token is the EOS token (or the last word of an answer "
                                     "cut at the length limit), and it is part of the answer: the model chose to stop "
                                     "there as it chose every other token, and the mask is 1 on it (1 up to and "
                                     "including the first EOS). Its log-prob is counted: sum mask * token_logp over all "
                                     "C positions as they are, no slice, no shifted mask, no special case for EOS.")
            if any(torch.allclose(got.detach(), slip, atol=1e-5) and not torch.allclose(slip, want, atol=1e-5)
                   for slip in _one_off(logp, mask)):
                raise ExerciseFailed(f"for completions of {mask.sum(-1).int().tolist()} real tokens the sums are "
                                     f"{_r(want)}, you returned {_r(got)}: one position off (a slice such as "
                                     "[:, :-1] or [:, 1:], or the mask shifted against the log-probs). token_logp is "
                                     "already aligned: token_logp[g, t] is the log-prob of token t of completion g, "
                                     "and mask[g, t] says whether that token is real; sum them position by position, "
                                     "all C of them.")
            # the log of a sum of probabilities (a logsumexp), told on the completions with a real token: an empty
            # one gives log 0 = -inf, or whatever the padding was filled with (-1e9) or the sum clamped at (1e-30)
            log_of_sum = (logp.exp() * mask).sum(-1).log()    # -inf for an empty completion: log 0
            real = mask.float().sum(-1) > 0
            if (real.any() and torch.allclose(got.detach()[real], log_of_sum[real].to(got.dtype), atol=1e-5)
                    and not torch.allclose(log_of_sum[real], want[real], atol=1e-5)):
                at_empty = got.detach()[~real]
                empty = torch.isinf(at_empty).any() and torch.isinf(at_empty).all()
                other = at_empty.numel() and not empty and not torch.allclose(at_empty, torch.zeros_like(at_empty))
                raise ExerciseFailed(f"for completions of {mask.sum(-1).int().tolist()} real tokens the sums of the "
                                     f"log-probs are {_r(want)}, you returned {_r(got)}: the log of a SUM of "
                                     "probabilities, log(sum_t mask * exp(token_logp)) (a logsumexp), not the sum of "
                                     "the log-probs."
                                     + (" The -inf is not an underflow: an empty completion (no real token) sums "
                                        "no probability, and log 0 = -inf; its log-prob is the empty sum of "
                                        "log-probs, 0." if empty else "")
                                     + (f" An empty completion (no real token) sums no probability: it got "
                                        f"{float(at_empty[0]):.4g} from you (log 0 = -inf, held off by the value the "
                                        "padding was filled with or the sum clamped at); its log-prob is the empty "
                                        "sum of log-probs, 0." if other else "")
                                     + " A completion's log-prob is the sum of its tokens' log-probs (the log of "
                                     "their PRODUCT): sum_t mask[g, t] * token_logp[g, t], no exp, no log and no "
                                     "logsumexp.")
            probs = {"(token_logp.exp() * mask).sum(-1), the SUM of the real tokens' probabilities":
                     (logp.exp() * mask).sum(-1),
                     "(token_logp * mask).exp().sum(-1), the sum of probabilities, each padding position adding "
                     "exp(0) = 1": (logp * mask).exp().sum(-1),
                     "exp of the sum, the completion's PROBABILITY itself (the product of its tokens' probabilities)":
                     want.exp()}
            said = next((w for w, v in probs.items() if torch.allclose(got.detach(), v, atol=1e-5)
                         and not torch.allclose(v, want, atol=1e-5)), None)
            if said is not None:
                raise ExerciseFailed(f"for completions of {mask.sum(-1).int().tolist()} real tokens the sums of the "
                                     f"log-probs are {_r(want)}, you returned {_r(got)}: that is {said}, not a "
                                     "log-prob (a log-prob is <= 0; a probability is between 0 and 1). The "
                                     "completion's log-prob is the sum of its tokens' LOG-probs, as given: "
                                     "sum_t mask[g, t] * token_logp[g, t], no exp.")
            if torch.allclose(got.detach(), -want, atol=1e-5) and not torch.allclose(want, -want, atol=1e-5):
                raise ExerciseFailed(f"for completions of {mask.sum(-1).int().tolist()} real tokens the sums are "
                                     f"{_r(want)}, you returned {_r(got)}: the sign is flipped. A probability is at "
                                     "most 1, so each token's log-prob is <= 0 and so is their sum; a minus sign (the "
                                     "negative log-likelihood, a loss) or abs() makes it positive. Return sum_t mask * "
                                     "token_logp as it is: no minus, no abs (the loss puts its own minus in front).")
            if (one := _one_token(logp, mask, got.detach())) is not None:
                raise ExerciseFailed(f"for completions of {mask.sum(-1).int().tolist()} real tokens the sums are "
                                     f"{_r(want)}, you returned {_r(got)}: {one}, one token's log-prob per "
                                     "completion, not the SUM over its tokens. A completion's log-prob is the sum of "
                                     "its tokens' log-probs (the log of the product of their probabilities): every "
                                     "real token counts. Reduce over the tokens with a sum, not a min or a max.")
            lengths, bad = mask.float().sum(-1), ~torch.isfinite(got.detach())
            if (bad.any() and torch.equal(bad, lengths == 0) and (lengths > 0).any()
                    and torch.allclose(got.detach()[~bad], (want / lengths)[~bad], atol=1e-5)):
                raise ExerciseFailed(f"for completions of {lengths.int().tolist()} real tokens the sums are "
                                     f"{_r(want)}, you returned {_r(got)}: you AVERAGED the token log-probs, dividing "
                                     "by the number of real tokens (mask.sum(-1)), and an empty completion (no real "
                                     "token) gave 0 / 0 = nan. A completion's log-prob is the SUM of its tokens' "
                                     "log-probs (the log of the product of their probabilities), not their mean, and "
                                     "an empty completion's sum is 0. Return sum_t mask * token_logp with no division "
                                     "(not a guarded one either, clamp_min(1): that is still a mean).")
            if bad.any() and (lengths[bad] == 0).all() and torch.isfinite(want).all():
                raise ExerciseFailed(f"for completions of {lengths.int().tolist()} real tokens the sums are "
                                     f"{_r(want)}, you returned {_r(got)}: the empty completion (no real token, its "
                                     "mask all 0) gave inf or nan, a division by its length 0 (0 / 0 = nan). Its "
                                     "log-prob is the empty sum, 0. Return sum_t mask * token_logp, with no division "
                                     "by the length.")
            if not torch.isfinite(got.detach()).all() and torch.isfinite(want).all():
                raise ExerciseFailed(f"for completions of {mask.sum(-1).int().tolist()} real tokens the sums are "
                                     f"{_r(want)}, you returned {_r(got)}: a long answer's probability, the product of "
                                     "its tokens' probabilities, is below the smallest float (exp(-120) is 0 in float32), "
                                     "so its log is -inf. Sum the log-probs directly, sum_t mask * token_logp: no exp, "
                                     "no product.")
            # the mask forgotten, inverted, or read per completion: said by the VALUES, before the gradient (which
            # reaches the padding in all three, a sentence that would not name the slip)
            lengths, vals = mask.float().sum(-1), got.detach()
            padded = logp.sum(-1)
            if (torch.allclose(vals, (logp * (1 - mask.float())).sum(-1), atol=1e-5)
                    and not torch.allclose((logp * (1 - mask.float())).sum(-1), want, atol=1e-5)):
                raise ExerciseFailed(f"for completions of {lengths.int().tolist()} real tokens the sums are "
                                     f"{_r(want)}, you returned {_r(vals)}: your mask is inverted, you summed the "
                                     "padding and left out the answer (1 - mask, ~mask, or mask == 0). The mask is 1 "
                                     "on the completion's real tokens and 0 on the padding: multiply by the mask "
                                     "itself, sum_t mask * token_logp.")
            if (k := _one_row_of_mask(fn, logp, mask, vals)) is not None:
                row, j = mask.float()[k], k % logp.shape[0]
                raise ExerciseFailed(f"for completions of {lengths.int().tolist()} real tokens the sums are "
                                     f"{_r(want)}, you returned {_r(vals)}: you multiplied every completion by ONE "
                                     f"row of the mask, mask[{k}], completion {j}'s mask alone (here real on "
                                     f"{int(row.sum())} of the C = {logp.shape[1]} positions): a (C,) row "
                                     "broadcasts to all G rows, so every completion was summed over completion "
                                     f"{j}'s positions, not its own (its padding counted, or its real tokens left "
                                     "out). Each completion needs its own row of the mask: token_logp * mask, both "
                                     "(G, C), position by position, then the sum over the tokens.")
            if torch.allclose(vals, padded, atol=1e-5) and not torch.allclose(padded, want, atol=1e-5):
                raise ExerciseFailed(f"for completions of {lengths.int().tolist()} real tokens the sums are "
                                     f"{_r(want)}, you returned {_r(vals)}: you summed the padding too (every one of "
                                     f"the C = {logp.shape[1]} positions; a padding token's log-prob is not 0, here "
                                     "-7.5). Multiply by the mask before summing over the tokens, sum_t mask * "
                                     "token_logp: the padding is not part of the completion.")
            per_row = padded * (lengths > 0)
            if torch.allclose(vals, per_row, atol=1e-5) and not torch.allclose(per_row, want, atol=1e-5):
                raise ExerciseFailed(f"for completions of {lengths.int().tolist()} real tokens the sums are "
                                     f"{_r(want)}, you returned {_r(vals)}: you summed the padding too, every one of "
                                     f"the C = {logp.shape[1]} positions of a non-empty completion. A mask reduced "
                                     "per completion (mask.any(-1), mask.max(-1), ...) only zeroes an empty one; "
                                     "multiply by the mask position by position before summing, sum_t mask[g, t] * "
                                     "token_logp[g, t].")
            slip = _value_slip(logp, mask, lambda lp, keep: [(lp * keep).sum(-1)], vals)
            if slip is not None:
                raise ExerciseFailed(f"for completions of {lengths.int().tolist()} real tokens the sums are "
                                     f"{_r(want)}, you returned {_r(vals)}: {slip}")
            grad = _carries_gradient(got, leaf, mask, "sequence_logprob", bool_mask=m.dtype == torch.bool)
            got = got.detach()
            if (k := _rounded(got, want)) is not None:
                raise ExerciseFailed(f"for completions of {mask.sum(-1).int().tolist()} real tokens the sums are "
                                     f"{_r(want, 6)}, you returned {_r(got, 6)}: you rounded them to {k} "
                                     f"decimal{'' if k == 1 else 's'}. Do not round: the next cell compares your "
                                     "log-probs with the library's, and a rounding's gradient is 0 (torch.round is a "
                                     "staircase), so the loss built on them would train nothing. Return sum_t mask * "
                                     "token_logp as computed.")
            if not torch.allclose(got, want, atol=1e-5):
                lengths = mask.sum(-1).clamp_min(1)
                if torch.allclose(got, want / lengths, atol=1e-5) or torch.allclose(got, want / logp.shape[1], atol=1e-5):
                    raise ExerciseFailed("you averaged the token log-probs; MAGRPO's loss takes their SUM "
                                         "(log pi of the whole completion is the sum of its tokens' log-probs).")
                raise ExerciseFailed(f"for token log-probs {[_r(row, 2) for row in logp]} with mask "
                                     f"{mask.int().tolist()} the sums are {_r(want)}, you returned {_r(got)}.")
            if not torch.allclose(grad.to(mask.dtype), mask, atol=1e-5):
                raise ExerciseFailed("your sums have the right values but the wrong gradient"
                                     + (" (0 everywhere: a rounding, torch.round, or another staircase has gradient "
                                        "0)" if not grad.any() else "")
                                     + ": the gradient of a sum with respect to each real token's log-prob is 1, "
                                     "and the loss's backward() goes through it. Return sum_t mask * token_logp with "
                                     "tensor operations, nothing rounded, detached or rebuilt.")


def _others(R: torch.Tensor, g: int) -> torch.Tensor:
    return torch.cat([R[:g], R[g + 1:]])


def _outputs(fn, groups) -> list:
    """fn's advantages for every group of rewards, as float tensors (None where it fails or gives another shape)."""
    return outputs_per_group(fn, groups, torch.tensor, lambda out, r: out.detach().float() if isinstance(
        out, torch.Tensor) and tuple(out.shape) == (len(r),) else None)


def _neighbour_shift(fn, groups, R, got) -> int | None:
    """The shift s (1: the previous sample, -1: the next) when the answer subtracts ONE neighbour's reward,
    r - rewards.roll(s), on this group and on every other where it answers; None otherwise."""
    for s in (1, -1):
        if torch.allclose(got, R.float() - R.float().roll(s), atol=1e-5) and all(
                o is None or torch.allclose(o, torch.tensor(x) - torch.tensor(x).roll(s), atol=1e-5)
                for x, o in zip(groups, _outputs(fn, groups))):
            return s
    return None


def _fixed_factor(fn, groups, R, got) -> float | None:
    """The factor c when the answer is c times r - mean(r) with the same c for this group and every other where it
    answers (2 (r - mean(r)): G/(G-1) at G = 2 only); None otherwise, and for c = 0, 1 or -G/(G-1) (said before)."""
    d = R.float() - R.float().mean()
    if not d.any():
        return None
    c = float((got * d).sum() / (d * d).sum())
    if abs(c) < 1e-6 or abs(c - 1) < 1e-6 or not torch.allclose(got, c * d, atol=1e-5):
        return None
    if all(o is None or torch.allclose(o, c * (torch.tensor(x) - torch.tensor(x).mean()), atol=1e-5)
           for x, o in zip(groups, _outputs(fn, groups))):
        return c
    return None


def _earlier_means(X: torch.Tensor) -> torch.Tensor:
    """r_g minus the mean of the samples BEFORE g, r_0 .. r_(g-1) (nan at g = 0, which has none)."""
    before = X.cumsum(0) - X
    return X - before / torch.arange(len(X), dtype=X.dtype)


def _running_means(X: torch.Tensor) -> torch.Tensor:
    """r_g minus the running mean of r_0 .. r_g, the sample itself included."""
    return X - X.cumsum(0) / torch.arange(1, len(X) + 1, dtype=X.dtype)


def _earlier_only(fn, groups, R, got) -> str | None:
    """What the answer did when its baselines use only the samples up to g (the mean of the earlier ones, sample 0
    aside, or a running mean with the sample itself), on this group and every other where it answers; None otherwise."""
    readings = [
        (_earlier_means, slice(1, None),
         "from the second sample on you subtracted the mean of the EARLIER samples only, r_0 .. r_(g-1) "
         "(rewards[:g].mean(), a running mean), leaving out the samples after g"
         + (" (and sample 0, with no earlier samples, got nan: the mean of nothing)"
            if not torch.isfinite(got[:1]).all() else "")),
        (_running_means, slice(None),
         "you subtracted a running mean, the mean of r_0 .. r_g (rewards[:g + 1].mean(), or cumsum / count): it "
         "includes the sample's own reward and leaves out the samples after g"),
    ]
    for reading, part, what in readings:
        if torch.allclose(got[part], reading(R.float())[part], atol=1e-5) and all(
                o is None or torch.allclose(o[part], reading(torch.tensor(x))[part], atol=1e-5)
                for x, o in zip(groups, _outputs(fn, groups))):
            return what
    return None


# medians of ALL G rewards a learner may subtract for the mean: (how it is written, the median of a group)
_ALL_MEDIANS = [
    ("rewards.median(), torch's median, the LOWER of the two middle rewards when G is even",
     lambda X: X.sort().values[(len(X) - 1) // 2]),
    ("rewards.quantile(0.5) or statistics.median, the mean of the two middle rewards when G is even",
     lambda X: X.quantile(0.5)),
    ("sorted(rewards)[G // 2], the upper middle", lambda X: X.sort().values[len(X) // 2]),
]


def _median_of_all(fn, groups, R, got) -> tuple | None:
    """(how it is written, the median here) of the one median of ALL G rewards the answer subtracts on this group and
    on every other where it answers (and where median and mean differ in one group at least); None otherwise."""
    outs = _outputs(fn, groups)
    for what, median in _ALL_MEDIANS:
        if not torch.allclose(got, R.float() - median(R.float()), atol=1e-5):
            continue
        if all(o is None or torch.allclose(o, torch.tensor(x) - median(torch.tensor(x)), atol=1e-5)
               for x, o in zip(groups, outs)) and any(
                o is not None and abs(float(median(torch.tensor(x))) - sum(x) / len(x)) > 1e-6
                for x, o in zip(groups, outs)):
            return what, float(median(R.float()))
    return None


def _distinct_count(fn, groups, R, got) -> int | None:
    """The number u of DISTINCT rewards when the answer divides the sum of the others by u - 1 (rewards.unique(), ties
    counted once) on this group, where a tie makes u < G, and on every other group with two distinct rewards or more
    where it answers (a group of equal rewards, u = 1, tells only how the answer guards u - 1 = 0); None otherwise."""
    def reading(X):
        u = X.unique().numel()
        return X - (X.sum() - X) / (u - 1)
    u = R.unique().numel()
    if not 2 <= u < len(R) or not torch.allclose(got, reading(R.float()), atol=1e-5):
        return None
    if all(o is None or torch.tensor(x).unique().numel() < 2 or torch.allclose(o, reading(torch.tensor(x)), atol=1e-5)
           for x, o in zip(groups, _outputs(fn, groups))):
        return u
    return None


def _divisor_slip(fn, groups, R, got) -> str | None:
    """What the answer did with the others' sum when one reading explains this group and every other where it answers:
    the sum not divided at all, r_g - (sum of the others), or divided by G-2 in place of G-1 (a group of 2, where G-2 is
    0, is no evidence either way: a division by zero, or a guard); None otherwise. Said before "you fixed G", which a
    divisor that follows G would only seem to be on one group."""
    G = len(R)
    readings = [
        (lambda X: X - (X.sum() - X), lambda n: True,
         f"you did not divide the sum of the other rewards: r_g - (sum of the others) subtracts their SUM, not their "
         f"mean. Leave-one-out's baseline is the MEAN of the G-1 = {G - 1} other rewards: divide their sum by G-1, "
         "r_g - (sum of the others) / (G-1), with G = len(rewards)."),
        (lambda X: X - (X.sum() - X) / (len(X) - 2), lambda n: n > 2,
         f"you divided the sum of the others by G-2 = {G - 2}, not by G-1 = {G - 1}. Sample g has G-1 others (all G "
         "samples but itself), and their mean divides their sum by how many they are, G-1 (G-2 would also divide by "
         "zero in a group of two): r_g - (sum of the others) / (len(rewards) - 1)."),
    ]
    for reading, applies, what in readings:
        if applies(G) and torch.allclose(got, reading(R.float()), atol=1e-5) and all(
                o is None or not applies(len(x)) or torch.allclose(o, reading(torch.tensor(x)), atol=1e-5)
                for x, o in zip(groups, _outputs(fn, groups))):
            return what
    return None


@exercise("01.leave_one_out")
def check_leave_one_out(fn):
    # [0.5, 1, 0.25, 0.75]: the others' median and the mean of all G differ from the others' mean and from each other;
    # two samples: [2.0, 2.0] agrees (every baseline gives 0), [0.0, 1.0] does not (leave-one-out gives -1 and 1,
    # twice r - mean(r)); a group that agrees; negative rewards
    # no reward of the first group is 0, so "all G by G-1" and "one sample's baseline for every g" differ there
    groups = [[0.5, 1.0, 0.25, 0.75], [0.0, 1.0, 0.5, 0.5], [2.0, 2.0], [0.0, 1.0], [0.3, 0.3, 0.3],
              [1.0, -1.0, 4.0, 0.0, 2.5, 0.0], [0.0, 0.0, 0.0, 1.0]]
    not_a_wrapper(fn, (torch.tensor(groups[0]),), "rloo_advantages", group_advantages,
                  how="from the formula in the text, r_g - (sum of the others) / (G-1)")
    for r in groups:
        R = torch.tensor(r)
        want = group_advantages(R, mode="rloo")           # before the learner's function sees the rewards
        given = R.clone()
        out = call_answer(fn, given, said=lambda e, r=r: f"for rewards {r} your function raised {type(e).__name__}: "
                          f"{first_line(e)}. It receives a 1-D tensor of G rewards and returns a new tensor of G advantages.")
        if not torch.equal(given, R):
            raise ExerciseFailed(f"for rewards {r} your function changed the rewards tensor it was given (in place, e.g. "
                                 "sub_ or -=): the caller still needs the rewards. Return a new tensor.")
        got = _tensor("rloo_advantages(rewards)", out, R.shape,
                      f"one advantage per sample, the shape of rewards itself: no unsqueeze, [None] or keepdim; "
                      f"rewards is 1-D, {len(r)} numbers with no token axis")
        dtype, got = got.dtype, got.float()
        if dtype != R.dtype and dtype.is_floating_point and dtype not in (torch.float16, torch.bfloat16):
            raise ExerciseFailed(_dtype_changed("rloo_advantages", dtype, R.dtype, "rewards", "advantages"))
        if not torch.allclose(got, want, atol=1e-5):
            G = len(r)
            shown, gave = [round(x, 6) for x in want.tolist()], [round(x, 6) for x in got.tolist()]
            if dtype == torch.bool:
                raise ExerciseFailed(f"for rewards {r} the leave-one-out advantages are {shown}, you returned a "
                                     f"torch.bool tensor, {gave}: True/False says only on which side of its baseline a "
                                     "sample is; the advantage is the difference itself, r_g - (sum of the others) / "
                                     "(G-1), a float of the rewards' dtype.")
            if not dtype.is_floating_point:
                raise ExerciseFailed(f"for rewards {r} the leave-one-out advantages are {shown}, you returned a {dtype} "
                                     f"tensor, {gave}: an integer tensor cannot hold the advantages, it truncates them "
                                     "(toward 0) as they are written into it. Keep the rewards' dtype: compute r - (sum "
                                     "of the others) / (G-1) on the rewards tensor itself, or fill "
                                     "torch.zeros_like(rewards), not a tensor made with dtype=torch.long (or "
                                     "torch.tensor of Python ints).")
            if dtype in (torch.float16, torch.bfloat16):
                raise ExerciseFailed(f"for rewards {r} the leave-one-out advantages are {shown}, you returned a {dtype} "
                                     f"tensor from {R.dtype} rewards, {gave}: {dtype} keeps about "
                                     f"{3 if dtype == torch.float16 else 2} significant digits, so the numbers differ "
                                     f"from the {R.dtype} ones after that. Keep the rewards' dtype, no .half(), "
                                     ".bfloat16() or .to(...) on the rewards or on the result.")
            if not got.any() and want.any():
                # all zeros: the result never written, or the advantages rounded to whole numbers? On rewards whose
                # advantages are -6.5, 8.5 and -2.0 rounding keeps something; a result never written stays 0.
                try:
                    again = fn(torch.tensor([0.0, 10.0, 3.0]))
                    never_written = isinstance(again, torch.Tensor) and again.numel() == 3 and not again.any()
                except Exception:  # noqa: BLE001  the first group told enough
                    never_written = True
                if never_written:
                    raise ExerciseFailed(f"for rewards {r} the leave-one-out advantages are {shown}, you returned "
                                         f"{gave}: every advantage is 0. Was the result ever written? In a loop, "
                                         "`A[g] == r[g] - ...` compares and throws the value away; `A[g] = r[g] - ...` "
                                         "assigns it. Return r_g - (sum of the others) / (G-1) for every g.")
            baseline = R.sum() - R
            if torch.allclose(got, baseline / (G - 1), atol=1e-5):
                raise ExerciseFailed(f"for rewards {r} the leave-one-out advantages are {shown}, you returned {gave}: "
                                     "that is the baseline alone, the mean of the OTHER G-1 rewards, (sum of the "
                                     "others) / (G-1). The advantage is the sample's own reward MINUS it: A^(g) = r_g - "
                                     "(sum of the others) / (G-1).")
            if (how := _earlier_only(fn, groups, R, got)) is not None:
                raise ExerciseFailed(f"for rewards {r} the leave-one-out advantages are {shown}, you returned {gave}: "
                                     f"{how}. Leave-one-out's baseline for sample g is the mean of ALL the other G-1 "
                                     "samples, those before g AND after it: (rewards.sum() - rewards[g]) / (G-1), "
                                     "for every g.")
            if not torch.isfinite(got).all():
                raise ExerciseFailed(f"for rewards {r} you returned {got.tolist()}: leave out the sample by its POSITION g, "
                                     "not by its value; another sample with the same reward is still one of the others.")
            if torch.allclose(got, -want, atol=1e-5):
                raise ExerciseFailed(f"for rewards {r} you returned the advantages with the sign flipped: r_g minus the "
                                     "others' mean, so a sample better than the others gets a positive advantage.")
            if (want < -1e-6).any() and torch.allclose(got, want.abs(), atol=1e-5):
                raise ExerciseFailed(f"for rewards {r} the leave-one-out advantages are {shown}, you returned {gave}: "
                                     "their absolute values (abs()), so a sample worse than the others' mean got a "
                                     "positive advantage too, and would be made MORE likely. The sign is the point: "
                                     "A^(g) = r_g - (sum of the others) / (G-1) is negative when r_g is below the "
                                     "others' mean. Return it as it is, no abs().")
            if (shift := _neighbour_shift(fn, groups, R, got)) is not None:
                raise ExerciseFailed(f"for rewards {r} the leave-one-out advantages are {shown}, you returned {gave}: "
                                     "you subtracted ONE other sample's reward, the "
                                     f"{'previous' if shift == 1 else 'next'} one (rewards.roll({shift}), "
                                     f"r_(g{'-' if shift == 1 else '+'}1), wrapping around), not the mean of ALL the "
                                     f"other G-1 = {G - 1} rewards (the two agree only at "
                                     "G = 2, where there is one other). Leave-one-out's baseline for sample g is "
                                     "(sum of the others) / (G-1).")
            bound = got.abs().max()
            loo_of = lambda X: X - (X.sum() - X) / (len(X) - 1)  # noqa: E731
            if 0 < bound < want.abs().max() - 1e-5 and torch.allclose(got, want.clamp(-bound, bound), atol=1e-5) and all(
                    o is None or torch.allclose(o, loo_of(torch.tensor(x)).clamp(-bound, bound), atol=1e-5)
                    for x, o in zip(groups, _outputs(fn, groups))):
                raise ExerciseFailed(f"for rewards {r} the leave-one-out advantages are {shown}, you returned {gave}: "
                                     f"you clipped them to [-{bound:.4g}, {bound:.4g}]. The formula has no clip: "
                                     "A^(g) = r_g - (sum of the others) / (G-1), whatever its size (the trainer's "
                                     "advantage_clip of +-10 is a setting applied afterwards, not part of it).")
            if (med := _median_of_all(fn, groups, R, got)) is not None:
                what, m = med
                raise ExerciseFailed(f"for rewards {r} the leave-one-out advantages are {shown}, you returned {gave}: "
                                     f"you subtracted the MEDIAN of all G rewards ({what}), {m:g} here, from every "
                                     "sample. Leave-one-out's baseline is the MEAN of the OTHER G-1 rewards, (sum of "
                                     f"the others) / (G-1), here {_r((R.sum() - R) / (G - 1))}: a different number "
                                     "for each sample, its own reward left out (a median also ignores how far the "
                                     "best and worst samples lie).")
            one_baseline = lambda X, o: any(torch.allclose(o, X - _others(X, k).mean(), atol=1e-5)  # noqa: E731
                                            for k in range(len(X)))
            if one_baseline(R, got) and all(o is None or one_baseline(torch.tensor(x), o)
                                            for x, o in zip(groups, _outputs(fn, groups))):
                raise ExerciseFailed(f"for rewards {r} you subtracted ONE baseline from every sample (the mean of all "
                                     "rewards but one fixed sample's): leave-one-out leaves out each sample's OWN "
                                     "reward, so sample g's baseline is the mean of the other G-1, a different number "
                                     "for each g.")
            if torch.allclose(got, R - R.sum() / (G - 1), atol=1e-5):
                raise ExerciseFailed(f"for rewards {r} you divided the sum of ALL G rewards by G-1; leave-one-out sums "
                                     f"the G-1 = {G - 1} OTHER rewards (sum minus r_g) and divides by G-1.")
            if torch.allclose(got, R - R.mean(), atol=1e-5):
                raise ExerciseFailed(f"for rewards {r} you returned r - mean(all G rewards), MAGRPO's advantage; "
                                     "leave-one-out subtracts the mean of the OTHER G-1 rewards.")
            if torch.allclose(got, R - (R.sum() - R) / G, atol=1e-5):
                raise ExerciseFailed(f"for rewards {r} you divided the sum of the other rewards by G = {G}; "
                                     f"there are G-1 = {G - 1} other rewards.")
            if (slip := _divisor_slip(fn, groups, R, got)) is not None:
                raise ExerciseFailed(f"for rewards {r} the leave-one-out advantages are {shown}, you returned {gave}: "
                                     + slip)
            if (u := _distinct_count(fn, groups, R, got)) is not None:
                raise ExerciseFailed(f"for rewards {r} the leave-one-out advantages are {shown}, you returned {gave}: "
                                     f"you divided the sum of the others by {u - 1}, the number of DISTINCT rewards "
                                     f"minus 1 (rewards.unique() has {u} values here). G is the number of samples, "
                                     f"len(rewards) = {G}, not the number of distinct values: two samples with the "
                                     "same reward (a tie) are still separate samples, each one of the others. Divide "
                                     f"by G-1 = {G - 1}: r_g - (sum of the others) / (len(rewards) - 1).")
            fixed = [d for d in range(1, 10) if d not in (G - 1, G)
                     and torch.allclose(got, R - (R.sum() - R) / d, atol=1e-5) and all(
                         o is None or torch.allclose(o, torch.tensor(x) - (sum(x) - torch.tensor(x)) / d, atol=1e-5)
                         for x, o in zip(groups, _outputs(fn, groups)))]
            if fixed:
                sizes = sorted({len(x) for x in groups})
                raise ExerciseFailed(f"for rewards {r} (G = {G}) you divided the sum of the others by {fixed[0]}: you "
                                     f"fixed G = {fixed[0] + 1}; the check also uses groups of "
                                     f"{', '.join(map(str, sizes[:-1]))} and {sizes[-1]} samples. Take G from the "
                                     f"rewards, G = len(rewards), and divide by G-1 (here {G - 1}).")
            medians = [torch.stack([R[g] - _others(R, g).median() for g in range(G)]),          # torch: the lower one
                       torch.stack([R[g] - _others(R, g).quantile(0.5) for g in range(G)])]     # statistics.median
            if any(torch.allclose(got, m, atol=1e-5) for m in medians):
                raise ExerciseFailed(f"for rewards {r} you subtracted the MEDIAN of the other rewards; leave-one-out "
                                     f"subtracts their MEAN, (sum of the other G-1 = {G - 1} rewards) / (G-1).")
            if torch.allclose(got, (G - 1) / G * (R - R.mean()), atol=1e-5):
                raise ExerciseFailed(f"for rewards {r} the leave-one-out advantages are {shown}, you returned {gave}: "
                                     f"(G-1)/G = {G - 1}/{G} times r - mean(r), the factor upside down. Section 0b's "
                                     "identity reads r - mean(r) = (G-1)/G x (r_g - mean of the others), so the "
                                     f"leave-one-out advantage is G/(G-1) = {G}/{G - 1} times r - mean(r), LARGER than "
                                     "it (leave-one-out removes the shrinking factor); or compute it directly, r_g - "
                                     "(sum of the others) / (G-1).")
            loo = R - (R.sum() - R) / (G - 1)
            if any(torch.allclose(got, loo / (s + eps), atol=1e-5)
                   for s in (loo.std(), loo.std(unbiased=False), R.std(), R.std(unbiased=False)) if s > 0
                   for eps in (0.0, 1e-8, 1e-6, 1e-4)):
                raise ExerciseFailed(f"for rewards {r} the leave-one-out advantages are {shown}, you returned {gave}: "
                                     "you divided them by a standard deviation (z-scores, (A - mean) / std). "
                                     "Leave-one-out does not rescale: A^(g) = r_g - (sum of the others) / (G-1), "
                                     "nothing else (dividing by the std is TRL's scale_rewards, notebook 06).")
            if torch.allclose(got, torch.stack([R[g] - _others(R, g).max() for g in range(G)]), atol=1e-5):
                raise ExerciseFailed(f"for rewards {r} the leave-one-out advantages are {shown}, you returned {gave}: "
                                     "you subtracted the MAXIMUM of the other rewards, the best other sample; "
                                     f"leave-one-out subtracts their MEAN, (sum of the other G-1 = {G - 1} rewards) / "
                                     "(G-1).")
            if torch.allclose(got, R - R.max(), atol=1e-5):
                raise ExerciseFailed(f"for rewards {r} the leave-one-out advantages are {shown}, you returned {gave}: "
                                     "you subtracted the group's best reward, max(r) (MAReMax's baseline, notebook 06); "
                                     "leave-one-out subtracts the MEAN of the OTHER G-1 rewards, (sum of the others) / "
                                     "(G-1).")
            floored = lambda X: torch.div(X.sum() - X, len(X) - 1, rounding_mode="floor")  # noqa: E731  (sum - r) // (G-1)
            if torch.allclose(got, R - floored(R), atol=1e-5) and all(
                    o is None or torch.allclose(o, torch.tensor(x) - floored(torch.tensor(x)), atol=1e-5)
                    for x, o in zip(groups, _outputs(fn, groups))):
                raise ExerciseFailed(f"for rewards {r} the leave-one-out advantages are {shown}, you returned {gave}: "
                                     "you divided with // (floor division), which rounds each baseline DOWN to a whole "
                                     f"number: (sum of the others) // (G-1) = {_r(floored(R))}, but the others' means "
                                     f"are {_r((R.sum() - R) / (G - 1))}. Divide with /.")
            if (k := rounded_to(got.tolist(), want.tolist(), range(6),
                                close=lambda a, b: abs(a - b) <= 1e-6)) is not None:
                raise ExerciseFailed(f"for rewards {r} the leave-one-out advantages are "
                                     f"{[round(x, 6) for x in want.tolist()]}, you returned "
                                     f"{[round(x, 6) for x in got.tolist()]}: close but not equal, you rounded to {k} decimal(s). Do not "
                                     "round: return r_g - (sum of the others) / (G-1) as computed.")
            if (c := _fixed_factor(fn, groups, R, got)) is not None:
                G0 = next((n for n in range(2, 17) if abs(c - n / (n - 1)) < 1e-6), None)
                raise ExerciseFailed(f"for rewards {r} the leave-one-out advantages are {shown}, you returned {gave}: "
                                     f"{c:.4g} times r - mean(r), the same factor for every group. Section 0b's "
                                     "identity makes the leave-one-out advantage G/(G-1) times r - mean(r), a factor "
                                     f"that follows G: here G = {G}, G/(G-1) = {G}/{G - 1}"
                                     + (f"; {c:.4g} is G/(G-1) only at G = {G0}" if G0 else "")
                                     + ". Take G from the rewards, G = len(rewards), or compute r_g - (sum of the "
                                     "others) / (G-1) directly.")
            raise ExerciseFailed(f"for rewards {r} the leave-one-out advantages are "
                                 f"{[round(x, 4) for x in want.tolist()]}, you returned {[round(x, 4) for x in got.tolist()]}.")
    # float64 rewards give float64 advantages (a result built in torch.zeros(G) or torch.tensor([...]) is float32)
    R = torch.tensor(groups[0], dtype=torch.float64)
    out = call_answer(fn, R.clone(), said=lambda e: f"for float64 rewards {groups[0]} your function raised "
                      f"{type(e).__name__}: {first_line(e)}. It receives a 1-D tensor of G rewards, of any float dtype.")
    got = _tensor("rloo_advantages(rewards)", out, R.shape)
    if got.dtype != R.dtype:
        raise ExerciseFailed(_dtype_changed("rloo_advantages", got.dtype, R.dtype, "rewards", "advantages"))


def _dtype_changed(name: str, got, want, inputs: str, what: str) -> str:
    """The sentence for an answer whose result changed its inputs' dtype (sequence_logprob's has its own)."""
    return (f"{name} returned {what} of dtype {got} from {want} {inputs}: keep the dtype of the {inputs}, no "
            ".double(), .float(), .half() or .to(...) on them or on the result"
            + (" (and a result built in torch.zeros(...) or torch.tensor([...]) is float32 unless told otherwise: "
               "torch.zeros_like(...), or dtype=... of the inputs)" if got == torch.float32 else "")
            + ". " + ("The library's group_advantages gives float64 advantages for float64 rewards and float32 ones "
                      "for float32 rewards (other dtypes it computes in float32)" if inputs == "rewards" else
                      "The library's loss follows the dtype of its log-probs (float64 log-probs give a float64 loss, by "
                      "torch's type promotion; float32 ones a float32 loss)")
            + f", so here the library's {'advantages are' if inputs == 'rewards' else 'loss is'} {want}; and "
            "torch.allclose refuses two different dtypes (it raises RuntimeError), so comparing your result with the "
            "library's or the trainer's would fail.")


def _grpo(logp, mask, A):
    return -(A * (logp * mask).sum(-1) / mask.sum(-1).clamp_min(1)).mean()


def _standardised(A):
    """The advantages divided by their std, centred again or not, with or without an eps, sample or population std."""
    return [(A - A.mean()) / A.std(), A / A.std(), (A - A.mean()) / (A.std() + 1e-4), (A - A.mean()) / (A.std() + 1e-8),
            (A - A.mean()) / A.std(unbiased=False)]


def _counts_nonzero_logprobs(fn) -> bool:
    """Whether fn counts a completion's length as its non-zero log-probs, (token_logp != 0).sum(-1) (padding
    included) or (token_logp * mask != 0).sum(-1), read off the group with certain tokens, where both counts differ
    from the mask's lengths and from the padded width C."""
    logp, mask = _certain_tokens_case()
    A = torch.tensor([0.7, -1.1, 0.4])
    try:
        got = fn(logp.clone().requires_grad_(True), mask.clone(), A.clone())
        got = got.detach().float().reshape(())
    except Exception:  # noqa: BLE001  no evidence either way
        return False
    s = (logp * mask).sum(-1)
    return any(torch.allclose(got, -(A * s / n.clamp_min(1)).mean(), atol=1e-5)
               for n in ((logp != 0).sum(-1), ((logp * mask) != 0).sum(-1)))


def _loss_cases() -> list:
    """(token_logp, mask, advantages) of every group the loss is checked on."""
    g = torch.Generator().manual_seed(3)
    return [(logp, mask, torch.randn(logp.shape[0], generator=g))
            for logp, mask in _cases() + [_padded_case(), _certain_tokens_case()]]


def _loss_outputs(fn) -> list:
    """fn's loss on every group of _loss_cases, as a float (None where it fails or gives no one-element tensor)."""
    outs = []
    for logp, mask, A in _loss_cases():
        try:
            out = fn(logp.clone().requires_grad_(True), mask.clone(), A.clone())
            outs.append(float(out.detach().reshape(())) if isinstance(out, torch.Tensor) and out.numel() == 1 else None)
        except Exception:  # noqa: BLE001  the learner's function may fail on another group: no evidence there
            outs.append(None)
    return outs


def _fixed_G(fn) -> int | None:
    """The number d the answer divides the SUM over the completions by whatever the group size (a G written in),
    when one d explains every group and differs from G in one of them; None otherwise (d = 1, a plain sum, has its
    own sentence)."""
    cases, outs = _loss_cases(), _loss_outputs(fn)
    sums = [float(_grpo(lp, m, A)) * lp.shape[0] for lp, m, A in cases]      # the sum over g, before any 1/G
    for d in range(2, 17):
        if all(o is None or abs(o - s / d) <= 1e-5 * max(1.0, abs(s)) for o, s in zip(outs, sums)) and any(
                o is not None and lp.shape[0] != d for o, (lp, _, _) in zip(outs, cases)):
            return d
    return None


def _makes_square(fn) -> tuple | None:
    """The shape (G, G) when fn, on a group of G = 4 completions of C = 6 positions, builds a (G, G) tensor along the
    way (a (G, 1) column, keepdim=True, broadcast against the (G,) advantages), watched with a TorchFunctionMode;
    None when it builds none, or fails."""
    from torch.overrides import TorchFunctionMode

    logp, mask, A = _loss_cases()[0]
    G, seen = logp.shape[0], []

    class _Watch(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if isinstance(out, torch.Tensor) and tuple(out.shape) == (G, G):
                seen.append(func)
            return out
    try:
        with _Watch():
            fn(logp.clone().requires_grad_(True), mask.clone(), A.clone())
    except Exception:  # noqa: BLE001  no evidence either way
        return None
    return (G, G) if seen else None


def _clamped_lengths(fn) -> int | None:
    """The guard k > 1 when the answer divides each completion's sum by max(|a^(g)|, k) (lengths.clamp_min(k)) on every
    group where it answers, and that differs from max(|a^(g)|, 1) in one group at least (a completion shorter than k
    tokens, not empty); None otherwise."""
    cases, outs = _loss_cases(), _loss_outputs(fn)
    for k in (2, 3, 4, 5):
        readings = [float(-(A * (lp * m).sum(-1) / m.sum(-1).clamp_min(k)).mean()) for lp, m, A in cases]
        if all(o is None or abs(o - v) <= 1e-5 * max(1.0, abs(v)) for o, v in zip(outs, readings)) and any(
                o is not None and abs(v - float(_grpo(lp, m, A))) > 1e-5 for o, v, (lp, m, A) in zip(outs, readings, cases)):
            return k
    return None


def _square_case():
    """A group of G = 4 completions padded to C = 4 positions (lengths 4, 2, 3, 1): mask.sum(0), the count per token
    POSITION (4, 3, 2, 1), then has the shape of the lengths, so an answer that takes the lengths over axis 0 runs."""
    g = torch.Generator().manual_seed(11)
    lengths, C = torch.tensor([4, 2, 3, 1]), 4
    mask = (torch.arange(C).unsqueeze(0) < lengths.unsqueeze(1)).float()
    logp = torch.where(mask.bool(), -torch.rand(4, C, generator=g) * 3 - 0.1, torch.full((4, C), -7.5))
    return logp, mask, torch.tensor([0.9, -1.3, 0.4, 0.6])


def _lengths_axis_slip(fn, logp, err: Exception | None = None) -> str | None:
    """What an answer did that takes the lengths over axis 0, mask.sum(0) (one count per token position, not one
    length per completion), read off the square group where that runs; None when it does not give that reading
    there. `err` is its crash on the group of `logp`, a (G,) against a (C,) tensor."""
    lp, m, A = _square_case()
    try:
        out = fn(lp.clone().requires_grad_(True), m.clone(), A.clone())
        out = out.detach().double().reshape(())
    except Exception:  # noqa: BLE001  no evidence either way
        return None
    s = (lp * m).sum(-1).double()
    wrong, right = -(A * s / m.sum(0).clamp_min(1)).mean(), _grpo(lp, m, A).double()
    if not torch.allclose(out, wrong, atol=1e-5) or torch.allclose(out, right, atol=1e-5):
        return None
    G, C = logp.shape
    return ("you took the lengths over the wrong axis: mask.sum(0) sums over axis 0, the G completions, and gives one "
            f"count per token POSITION, shape (C,) = ({C},), not one length per completion"
            + (f" (here that (C,) tensor met the (G,) = ({G},) advantages and sums, and your function raised "
               f"{type(err).__name__}: {first_line(err).rstrip('.')})" if err is not None else "")
            + ". |a^(g)| is the number of real tokens of completion g: mask.sum(-1), over the LAST axis, the tokens, "
            "shape (G,), then max(|a^(g)|, 1), lengths = mask.sum(-1).clamp_min(1).")


def _uses_policy_loss(fn, args) -> str | None:
    """What to say of an answer that calls the package's `policy_loss` (however it reaches it), None when it does not.
    Handed the per-completion MEANS, policy_loss gives GRPO's value: the answer is right then, and the sentence says
    so, and that the exercise asks for it without policy_loss (the notebook's text does too); it never shows the
    reference code."""
    remember_call(fn, args)
    if runs_the_library(fn, args, policy_loss) is None:
        return None
    outs, cases = _loss_outputs(fn), _loss_cases()
    right = any(o is not None for o in outs) and all(
        o is not None and abs(o - float(_grpo(lp, m, A))) <= 1e-5 * max(1.0, abs(float(_grpo(lp, m, A))))
        for o, (lp, m, A) in zip(outs, cases))
    what = ("your function calls the package's own `policy_loss`, MAGRPO's loss -mean(advantages * x) over "
            "per-completion log-probs x")
    if right:
        return (f"{what}; handed the per-completion MEANS of the token log-probs, as yours is, it does give GRPO's "
                "value: your loss is correct. But the exercise asks for it without the library's `policy_loss` (its "
                "text says so): weighting each completion by its own advantage A^(g), averaging over the G "
                "completions and the minus sign in front are what policy_loss does for you, and they are the "
                "exercise. Write them yourself with tensor operations, then compare your loss with policy_loss's "
                "outside your function.")
    return (f"{what}, and what it returns here is not GRPO's loss: whatever it is handed, the exercise asks for the "
            "loss without the library's `policy_loss` (its text says so). Write it from the formula, -(1/G) sum_g "
            "A^(g) (1/max(|a^(g)|, 1)) sum_t mask_{g,t} log pi, with tensor operations on token_logp, mask and "
            "advantages; then compare it with policy_loss outside your function.")


def _by_position(A, C):
    """The G advantages laid along the C token positions, as an answer that broadcasts them as a row does (cut to C,
    or padded with zeros to C)."""
    return A[:C] if len(A) >= C else torch.nn.functional.pad(A, (0, C - len(A)))


def _advantages_axis_slip(fn, logp, err: Exception | None = None) -> str | None:
    """What an answer did that lays the advantages along the TOKEN axis (advantages[None, :], a (1, G) row against the
    (G, C) log-probs: token t of every completion weighted by A^(t)), on every group where it answers (or, when it
    crashed on this one, `err`, a (G,) row against C positions, on the square group, G = C, where that runs); None
    when that reading does not explain it."""
    def reading(lp, m, A):
        return -((_by_position(A, lp.shape[1])[None, :] * lp * m).sum(-1) / m.sum(-1).clamp_min(1)).mean()
    cases = [_square_case()] if err is not None else _loss_cases()
    told = False
    for lp, m, A in cases:
        try:
            out = fn(lp.clone().requires_grad_(True), m.clone(), A.clone())
            out = out.detach().double().reshape(())
        except Exception:  # noqa: BLE001  no evidence either way
            if err is not None:
                return None
            continue
        v = reading(lp, m, A).double()
        if not torch.allclose(out, v, atol=1e-5):
            return None
        told = told or not torch.allclose(v, _grpo(lp, m, A).double(), atol=1e-5)
    if not told:
        return None
    G, C = logp.shape
    return ("you laid the advantages along the wrong axis, the TOKEN axis: as a row, advantages[None, :] (or the (G,) "
            f"advantages broadcast against the (G, C) = ({G}, {C}) log-probs), A^(t) meets token POSITION t of every "
            "completion, not completion g's tokens"
            + (f" (here the G = {G} advantages met C = {C} positions, and your function raised "
               f"{type(err).__name__}: {first_line(err).rstrip('.')}; on a group with G = C it runs, and gives that "
               "wrong loss)" if err is not None else "")
            + ". A^(g) belongs to completion g, a ROW of token_logp: per token, make it a column, advantages[:, None], "
            "shape (G, 1); or weight the per-completion values, shape (G,), after summing over the tokens.")


_NAN_GRADIENT = ("with a completion with no tokens (all of its mask 0) your loss is finite but its GRADIENT is nan: "
                 "torch.where(n > 0, s / n, 0) or (s / n).nan_to_num() still compute s / 0, and backward multiplies 0 "
                 "by inf there. Divide by max(|a^(g)|, 1) (lengths.clamp_min(1)) instead, so nothing is ever divided "
                 "by zero.")


@exercise("01.grpo_token_mean_loss")
def check_grpo_token_mean_loss(fn):
    # an answer that hands its work to MAGRPO's policy_loss: refused, with a sentence that says whether its value is
    # GRPO's (the per-completion means handed to it) or not, and never the reference code itself
    logp, mask, A = _loss_cases()[0]
    if (said := _uses_policy_loss(fn, (logp.clone().requires_grad_(True), mask.clone(), A.clone()))) is not None:
        raise ExerciseFailed(said)
    for logp, mask, A in _loss_cases():
        lengths = mask.sum(-1)
        want = _grpo(logp, mask, A)                 # before the learner's function sees the inputs
        leaf = logp.clone().requires_grad_(True)
        given_mask, given_A = mask.clone(), A.clone()
        got = call_answer(fn, leaf, given_mask, given_A, said=lambda e, logp=logp: (
            _lengths_axis_slip(fn, logp, e) or _advantages_axis_slip(fn, logp, e)
            or _raised("your grpo_token_mean_loss", e)))
        for what, given, orig in (("advantages", given_A, A), ("mask", given_mask, mask),
                                  ("token_logp", leaf.detach(), logp)):
            if not torch.equal(given, orig):
                raise ExerciseFailed(f"your function changed the {what} tensor it was given, in place (div_, mul_, "
                                     "/=, *=, ...): the caller uses its inputs again after the loss (in MAGRPO "
                                     "every agent's loss weighs the same advantages). Compute the loss with "
                                     "out-of-place operations, e.g. -(advantages * (token_logp * mask).sum(-1) / "
                                     "lengths).mean(), and leave the inputs as they are.")
        if not isinstance(got, torch.Tensor) or got.numel() != 1:
            raise ExerciseFailed("grpo_token_mean_loss should return the loss as a one-element tensor (a scalar).")
        if not got.requires_grad:
            raise ExerciseFailed("your loss carries no gradient (detached, or rebuilt from Python floats): training "
                                 "calls loss.backward(), so the token log-probs must stay in the graph.")
        if got.dtype != want.dtype:
            raise ExerciseFailed(_dtype_changed("grpo_token_mean_loss", got.dtype, want.dtype,
                                                "token log-probs and advantages", "a loss"))
        graph = got
        got = got.detach()
        got = got.float().reshape(())
        try:
            grad, = torch.autograd.grad(graph.sum(), leaf, allow_unused=True, retain_graph=True)
            wleaf = logp.clone().requires_grad_(True)
            want_grad, = torch.autograd.grad(_grpo(wleaf, mask, A), wleaf)
            same_gradient = grad is not None and torch.allclose(grad.float(), want_grad, atol=1e-5)
        except RuntimeError:
            grad, same_gradient = None, False
        if torch.allclose(got, want, atol=1e-5):
            if grad is not None and not torch.isfinite(grad).all() and not (lengths > 0).all():
                raise ExerciseFailed(_NAN_GRADIENT)
            if not same_gradient:
                raise ExerciseFailed(f"for this group your loss has the right value, {got.item():.5f}, but not the "
                                     "right gradient"
                                     + (": it is 0 everywhere, a rounding (torch.round, .round(decimals=...)) or "
                                        "another staircase has gradient 0, so backward() would train nothing"
                                        if grad is not None and not grad.any() else "")
                                     + ". Compute the loss with tensor operations on token_logp, nothing rounded or "
                                     "detached: -(advantages * (token_logp * mask).sum(-1) / lengths).mean().")
            continue
        if not torch.isfinite(got):
            raise ExerciseFailed("a completion with no tokens (all of its mask 0) made your loss inf or nan: divide by "
                                 "max(|a^(g)|, 1).")
        if (k := _rounded(got, want)) is not None:
            raise ExerciseFailed(f"for this group the GRPO loss is {want.item():.7f}, you returned {got.item():.7f}: "
                                 f"you rounded it to {k} decimal{'' if k == 1 else 's'}. Do not round: torch.round's "
                                 "gradient is 0 everywhere, so backward() would train nothing; return the loss as "
                                 "computed.")
        if (d := _fixed_G(fn)) is not None:
            sizes = sorted({lp.shape[0] for lp, _, _ in _loss_cases()})
            raise ExerciseFailed(f"for this group of G = {logp.shape[0]} completions you divided the sum over the "
                                 f"completions by {d}: you fixed G = {d}; the check also uses groups of "
                                 f"{', '.join(map(str, sizes[:-1]))} and {sizes[-1]} completions. Take G from the "
                                 "inputs, .mean() over the completions (or divide by len(advantages)).")
        if (axis := _lengths_axis_slip(fn, logp)) is not None:
            raise ExerciseFailed(f"for this group the GRPO loss is {want.item():.5f}, you returned {got.item():.5f}: "
                                 + axis)
        if (G_shape := _makes_square(fn)) is not None:
            raise ExerciseFailed(f"for this group the GRPO loss is {want.item():.5f}, you returned {got.item():.5f}: "
                                 f"your function builds a (G, G) = {G_shape} table on the way. A per-completion "
                                 "quantity kept as a (G, 1) column, as .sum(-1, keepdim=True) makes (or [:, None], "
                                 ".unsqueeze(-1)), times the advantages, shape (G,), broadcasts to every pair "
                                 "(completion i, advantage j), so every completion is weighted by every advantage "
                                 "(with both the sum and the length as columns, the table's mean is A.mean() times "
                                 "the mean of the normalised log-probs). Keep every per-completion quantity 1-D, "
                                 "shape (G,): (token_logp * mask).sum(-1) and mask.sum(-1), no keepdim=True, so that "
                                 "A^(g) meets completion g only.")
        if torch.allclose(got, _grpo(logp, mask, A.abs()), atol=1e-5):
            raise ExerciseFailed(f"you weighted each completion by |A^(g)|, the advantages' absolute value (here "
                                 f"{_r(A.abs())} for advantages {_r(A)}): every sampled completion would be made MORE "
                                 "likely. The sign is the point: a positive advantage raises a completion's "
                                 "log-prob, a negative one lowers it. Use `advantages` as given, no abs().")
        if torch.allclose(got, -(A * (logp * mask).sum(-1) / lengths.clamp_min(1).sqrt()).mean(), atol=1e-5):
            raise ExerciseFailed(f"you divided each completion's sum by the SQUARE ROOT of its length (lengths "
                                 f"{lengths.int().tolist()}); GRPO divides it by the length itself, |a^(g)| = "
                                 "mask.sum(-1), then max(|a^(g)|, 1): the mean of the completion's token log-probs.")
        magrpo = policy_loss((logp * mask).sum(-1), A)
        median = next((m for m in (lengths.median(), lengths.quantile(0.5))   # torch's (the lower middle), numpy's
                       if torch.allclose(got, -(A * (logp * mask).sum(-1) / m.clamp_min(1)).mean(), atol=1e-5)), None)
        if median is not None and torch.allclose(got, magrpo, atol=1e-5):
            continue          # the median length, 0 or 1, clamped to 1: MAGRPO's sum as well here; a later group tells
        if median is not None:
            raise ExerciseFailed(f"you divided every completion by the MEDIAN length of the group ({float(median):g} "
                                 f"real tokens here, for lengths {lengths.int().tolist()}); GRPO divides each "
                                 "completion's sum by its OWN length |a^(g)| (mask.sum(-1), one length per "
                                 "completion, then max(|a^(g)|, 1)).")
        if torch.allclose(got, magrpo, atol=1e-5):
            raise ExerciseFailed("that is MAGRPO's loss (the SUM over tokens); GRPO divides each completion's sum by its "
                                 "own length |a^(g)| first.")
        if torch.allclose(got, -(A * (logp * mask).sum(-1) / logp.shape[1]).mean(), atol=1e-5) and (
                lengths.max() == logp.shape[1]):
            continue          # C or the longest length? here they are equal: the group with no full-length completion tells
        if torch.allclose(got, -(A * (logp * mask).sum(-1) / lengths.max().clamp_min(1)).mean(), atol=1e-5):
            raise ExerciseFailed(f"you divided every completion by the longest one's length ({int(lengths.max())} real "
                                 "tokens here); GRPO divides each completion's sum by its OWN length |a^(g)| "
                                 "(mask.sum(-1), one length per completion).")
        if torch.allclose(got, -(A * (logp * mask).sum(-1) / logp.shape[1]).mean(), atol=1e-5):
            if _counts_nonzero_logprobs(fn):
                raise ExerciseFailed(f"for completions of {lengths.int().tolist()} real tokens (mask 1) you counted "
                                     "each length as the number of NON-ZERO log-probs, (token_logp != 0).sum(-1): "
                                     "here a padding token's log-prob is -7.5, not 0 (what the model gives a padding "
                                     "token can be anything), so every position counted and you divided by the padded "
                                     f"width C = {logp.shape[1]}. And a real token the model is certain of has "
                                     "log-prob 0.0, in theory, and still counts. The mask is the rule, not the "
                                     "log-probs' values: |a^(g)| = mask.sum(-1), then max(|a^(g)|, 1).")
            raise ExerciseFailed(f"you divided by the padded width C = {logp.shape[1]}; |a^(g)| is the number of real "
                                 "tokens of completion g (mask.sum(-1)).")
        for nonzero in (((logp * mask) != 0).sum(-1), (logp != 0).sum(-1)):
            if (not torch.equal(nonzero, lengths.long()) and any(
                    torch.allclose(got, -(A * (logp * mask).sum(-1) / n).mean(), atol=1e-5)
                    for n in (nonzero.clamp_min(1), nonzero.float()))):
                raise ExerciseFailed(f"for completions of {lengths.int().tolist()} real tokens (mask 1) you divided by "
                                     f"{nonzero.tolist()}, the number of NON-ZERO log-probs: a real token the model "
                                     "is certain of has log-prob exactly 0.0 and still counts, and a padding token's "
                                     "log-prob need not be 0. The mask is the rule, not the log-probs' values: "
                                     "|a^(g)| = mask.sum(-1), then max(|a^(g)|, 1).")
        if torch.allclose(got, -(A * logp.sum(-1) / lengths.clamp_min(1)).mean(), atol=1e-5):
            raise ExerciseFailed("the right lengths, but the padding entered your sums: multiply token_logp by the mask "
                                 "before summing over t.")
        if (k := _clamped_lengths(fn)) is not None and torch.allclose(
                got, -(A * (logp * mask).sum(-1) / lengths.clamp_min(k)).mean(), atol=1e-5):
            raise ExerciseFailed(f"for completions of {lengths.int().tolist()} real tokens the GRPO loss is "
                                 f"{want.item():.5f}, you returned {got.item():.5f}: you divided each completion's "
                                 f"sum by max(|a^(g)|, {k}) (lengths.clamp_min({k})), not max(|a^(g)|, 1): that "
                                 f"changes the divisor of every completion shorter than {k} tokens (a 1-token "
                                 f"completion's sum divided by {k}, not by 1; the empty one's by {k}). The guard only "
                                 "keeps an empty completion from dividing by zero; every other completion is divided "
                                 "by its own length |a^(g)| = mask.sum(-1): lengths.clamp_min(1).")
        if torch.allclose(got, -(A * (logp * mask).sum(-1) / (lengths + 1)).mean(), atol=1e-5):
            raise ExerciseFailed("you divided by |a^(g)| + 1; the guard is max(|a^(g)|, 1), which changes only an empty "
                                 "completion's divisor.")
        if torch.allclose(got, -(A * logp.mean(-1)).mean(), atol=1e-5):
            raise ExerciseFailed("the padding entered your mean: average over the masked tokens only.")
        if torch.allclose(got, (A * (logp * mask).sum(-1) / lengths.clamp_min(1)).mean(), atol=1e-5):
            raise ExerciseFailed("the sign is flipped: the loss is MINUS the advantage-weighted log-probs, so that "
                                 "descending it raises the log-probs of answers with a positive advantage.")
        if torch.allclose(got, want * logp.shape[0], atol=1e-5):
            raise ExerciseFailed(f"you summed over the G = {logp.shape[0]} completions; the loss AVERAGES them (1/G).")
        G, nonempty = logp.shape[0], int((lengths > 0).sum())
        if G > 1 and nonempty != G - 1 and torch.allclose(got, want * G / (G - 1), atol=1e-5):
            raise ExerciseFailed(f"you divided the sum over the G = {G} completions by G-1 = {G - 1}; the loss "
                                 f"AVERAGES them, 1/G = 1/{G} (G-1 belongs to leave-one-out's baseline, the mean of "
                                 "the OTHER rewards, not to the loss): .mean() over the G completions.")
        if 0 < nonempty < G and nonempty != 1 and torch.allclose(got, want * G / nonempty, atol=1e-5):
            if nonempty == G - 1:                  # G-1 and the non-empty count coincide here: name both readings
                raise ExerciseFailed(f"for completions of {lengths.int().tolist()} real tokens you divided the sum "
                                     f"over the completions by {nonempty} (G-1, or the number of non-empty "
                                     f"completions); the loss averages over all G = {G}, 1/G, an empty completion "
                                     "included: .mean() over every completion.")
            raise ExerciseFailed(f"for completions of {lengths.int().tolist()} real tokens you averaged over the "
                                 f"{nonempty} non-empty completions only; the loss averages over all G = {G}, "
                                 "1/G. An empty completion's term is 0 (its sum is 0, divided by max(0, 1) = 1), "
                                 "but it still counts in the 1/G: .mean() over every completion, no filter.")
        if torch.allclose(got, -(A.mean() * (logp * mask).sum(-1) / lengths.clamp_min(1)).mean(), atol=1e-5):
            raise ExerciseFailed(f"you weighted every completion by the advantages' MEAN, A.mean() = "
                                 f"{A.mean().item():.4f}, instead of its OWN advantage A^(g): the formula pairs "
                                 "completion g's length-normalised log-prob with A^(g), element by element, "
                                 "advantages * (token_logp * mask).sum(-1) / lengths, then averages over g.")
        if torch.allclose(got, -(A[:, None] * logp * mask).sum() / mask.sum().clamp_min(1), atol=1e-5):
            raise ExerciseFailed("you divided by the total number of tokens of the whole group (DAPO's token-level "
                                 "mean); GRPO divides each completion's sum by its OWN length |a^(g)|, then averages "
                                 "the G completions.")
        if torch.allclose(got, _grpo(logp, mask, A - A.mean()), atol=1e-5):
            raise ExerciseFailed(f"you re-centred the advantages (A - A.mean(); their mean here is {A.mean().item():.4f}): "
                                 "the advantages are given, the A^(g) of the formula, already computed from the "
                                 "rewards by the caller. Do not re-centre them: use `advantages` as given.")
        if any(torch.allclose(got, _grpo(logp, mask, a), atol=1e-5) for a in _standardised(A)):
            raise ExerciseFailed("you standardised the advantages ((A - mean) / std, as the A-hat of GRPO's objective "
                                 "in section 5 does); this function receives them ready-made, the A^(g) of the "
                                 "formula: use `advantages` as given (the paper's A = r - mean(r) is centred only, "
                                 "with no /std(r)).")
        clipped = next((b for b in (0.5, 1.0, 1.5, 2.0, 3.0, 5.0) if (A.abs() > b + 1e-6).any()
                        and torch.allclose(got, _grpo(logp, mask, A.clamp(-b, b)), atol=1e-5)), None)
        if clipped is not None:
            raise ExerciseFailed(f"for this group the GRPO loss is {want.item():.5f}, you returned {got.item():.5f}: "
                                 f"you clipped the advantages to [-{clipped:g}, {clipped:g}] (A.clamp(...)), here "
                                 f"{_r(A)} became {_r(A.clamp(-clipped, clipped))}. The formula weights completion g "
                                 "by A^(g) as given, whatever its size (a clip, like the trainer's advantage_clip, is "
                                 "a setting applied to the advantages before the loss, not part of it): use "
                                 "`advantages` as they are, no clamp.")
        total = mask.sum()
        if torch.allclose(got, -(A * (logp * mask).sum(-1) / total.clamp_min(1)).mean(), atol=1e-5):
            raise ExerciseFailed(f"for this group the GRPO loss is {want.item():.5f}, you returned {got.item():.5f}: "
                                 f"you divided every completion's sum by mask.sum() = {int(total)}, the number of "
                                 "real tokens of the WHOLE group, the same divisor for all. |a^(g)| is completion "
                                 f"g's own length, mask.sum(-1) (here {lengths.int().tolist()}), one per completion: "
                                 "sum over the LAST axis, the tokens, then max(|a^(g)|, 1).")
        if any(torch.isfinite(v) and torch.allclose(got, v, atol=1e-5)
               for v in (-(A * (logp * mask).sum(-1) / n).mean() for n in ((lengths - 1).clamp_min(1), lengths - 1))):
            raise ExerciseFailed(f"for this group the GRPO loss is {want.item():.5f}, you returned {got.item():.5f}: "
                                 f"you divided each completion's sum by |a^(g)| - 1 (lengths {lengths.int().tolist()} "
                                 "minus 1). |a^(g)| is the number of real tokens of completion g, mask.sum(-1), its "
                                 "last token (the EOS) included, nothing subtracted; divide by max(|a^(g)|, 1).")
        G = logp.shape[0]
        if G > 1 and torch.allclose(got, want / G, atol=1e-5):
            raise ExerciseFailed(f"for this group the GRPO loss is {want.item():.5f}, you returned {got.item():.5f}: "
                                 f"you divided by G twice, 1/G^2 = 1/{G * G}: .mean() over the G = {G} completions "
                                 "already divides their sum by G. Take .mean() alone, or .sum() / len(advantages), "
                                 "not both.")
        if torch.allclose(got, want * G / A.abs().sum(), atol=1e-5):
            raise ExerciseFailed(f"for this group the GRPO loss is {want.item():.5f}, you returned {got.item():.5f}: "
                                 "you divided the sum over the completions by the advantages' total size, sum_g "
                                 f"|A^(g)| = advantages.abs().sum() = {A.abs().sum().item():.4f}. The loss AVERAGES "
                                 f"the G = {G} completions, 1/G: .mean() over them, each weighted by its advantage "
                                 "as given, with no normalisation by the advantages.")
        s_g, n_g = (logp * mask).sum(-1), lengths.clamp_min(1)
        probs = {"exp of each completion's mean log-prob, exp((1/|a^(g)|) sum_t log pi), a probability (the geometric "
                 "mean of its tokens' probabilities)": -(A * (s_g / n_g).exp()).mean(),
                 "the mean of each completion's token PROBABILITIES, (1/|a^(g)|) sum_t mask * exp(token_logp)":
                 -(A * (logp.exp() * mask).sum(-1) / n_g).mean()}
        said = next((w for w, v in probs.items() if torch.allclose(got, v, atol=1e-5)), None)
        if said is not None:
            raise ExerciseFailed(f"for this group the GRPO loss is {want.item():.5f}, you returned {got.item():.5f}: "
                                 f"you weighted {said}, not the mean LOG-prob. The formula pairs A^(g) with "
                                 "(1/max(|a^(g)|, 1)) sum_t mask_{g,t} log pi, the token log-probs as given: no exp.")
        slip = _value_slip(logp, mask, lambda lp, keep: [-(A * (lp * keep).sum(-1) / n).mean() for n in (
            keep.sum(-1).clamp_min(1), mask.sum(-1).clamp_min(1))], got)
        if slip is not None:
            raise ExerciseFailed(f"for completions of {lengths.int().tolist()} real tokens the GRPO loss is "
                                 f"{want.item():.5f}, you returned {got.item():.5f}: "
                                 + slip.replace("sum_t mask * token_logp", "(token_logp * mask).sum(-1)"))
        if same_gradient:
            ratio_form = any(torch.allclose(got, v, atol=1e-5) for v in (-(A * (lengths > 0)).mean(), -A.mean()))
            raise ExerciseFailed(f"for this group the GRPO loss (ratio 1, no clipping, no KL) is {want.item():.5f}, "
                                 f"you returned {got.item():.5f}: the right gradient but another value"
                                 + (": that is the ratio (surrogate) form, rho = exp(token_logp - token_logp.detach())"
                                    " times A, whose value is -mean(A) since rho = 1" if ratio_form else "")
                                 + ". The exercise asks the log-prob form of the formula, -(1/G) sum_g A^(g) "
                                 "(1/|a^(g)|) sum_t mask_{g,t} log pi, with the log-probs themselves: its value is "
                                 "what the next cell prints next to MAGRPO's loss.")
        if (axis := _advantages_axis_slip(fn, logp)) is not None:
            raise ExerciseFailed(f"for this group the GRPO loss is {want.item():.5f}, you returned {got.item():.5f}: "
                                 + axis)
        raise ExerciseFailed(f"for this group the GRPO loss (ratio 1, no clipping, no KL) is {want.item():.5f}, "
                             f"you returned {got.item():.5f}.")
    # float64 log-probs give a float64 loss; the advantages come in the log-probs' dtype too (the exercise asks for a
    # loss in token_logp's dtype, not for mixing dtypes: with float32 advantages, torch.dot(advantages, x), advantages
    # @ x or an einsum, all correct, would raise on float64 x where elementwise code promotes)
    logp, mask = _float64_case()
    A = torch.tensor([0.5, -1.0, 0.25, 0.25], dtype=logp.dtype)
    out = call_answer(fn, logp.clone().requires_grad_(True), mask.clone(), A.clone(),
                      said=lambda e: _raised("with float64 token log-probs and advantages, your grpo_token_mean_loss",
                                             e))
    if isinstance(out, torch.Tensor) and out.dtype != _grpo(logp, mask, A).dtype:
        raise ExerciseFailed(_dtype_changed("grpo_token_mean_loss", out.dtype, _grpo(logp, mask, A).dtype,
                                            "token log-probs", "a loss"))
    # a completion with no tokens must not divide by zero
    logp, mask = torch.zeros(2, 3), torch.tensor([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    leaf = (logp - 1.0).requires_grad_(True)
    out = call_answer(fn, leaf, mask, torch.tensor([1.0, -1.0]),
                      said=lambda e: _raised("with an empty completion (all of its mask 0), your grpo_token_mean_loss", e))
    if not torch.isfinite(torch.as_tensor(out)).all():
        raise ExerciseFailed("a completion with no tokens (all of its mask 0) made your loss inf or nan: divide by "
                             "max(|a^(g)|, 1).")
    # ... nor its gradient: torch.where(n > 0, s / n, 0) or (s / n).nan_to_num() give a finite loss, but s / 0 is
    # still computed, and its gradient (0 * inf) is nan, which the optimiser would write into every weight
    grad = torch.autograd.grad(out, leaf, allow_unused=True)[0] if torch.is_tensor(out) and out.requires_grad else None
    if grad is not None and not torch.isfinite(grad).all():
        raise ExerciseFailed(_NAN_GRADIENT)
