"""Notebook 01: solutions and typical mistakes."""
import torch


def sequence_logprob(token_logp, mask):
    return (token_logp * mask).sum(-1)


def rloo_advantages(rewards):
    G = len(rewards)
    return rewards - (rewards.sum() - rewards) / (G - 1)


def grpo_token_mean_loss(token_logp, mask, advantages):
    lengths = mask.sum(-1).clamp_min(1)
    return -(advantages * (token_logp * mask).sum(-1) / lengths).mean()


SOLUTIONS = {
    "01.sequence_logprob": sequence_logprob,
    "01.leave_one_out": rloo_advantages,
    "01.grpo_token_mean_loss": grpo_token_mean_loss,
}

def _logprob_last_dropped(token_logp, mask):  # "logits at t predict t+1" applied once more: the last position dropped
    return (token_logp * mask)[:, :-1].sum(-1)


def _logprob_shifted(token_logp, mask):       # the log-probs one position out of step with the mask
    return (token_logp[:, 1:] * mask[:, :-1]).sum(-1)


def _logprob_sliced(token_logp, mask):        # only the log-probs sliced: (G, C-1) against (G, C), a RuntimeError
    return (token_logp[:, :-1] * mask).sum(-1)


def _grpo_standardised(token_logp, mask, advantages):  # the advantages standardised again, as GRPO's A-hat
    return grpo_token_mean_loss(token_logp, mask, (advantages - advantages.mean()) / advantages.std())


def _logprob_in_place(token_logp, mask):      # masks the caller's log-probs in place: a leaf that needs grad
    token_logp.mul_(mask)
    return token_logp.sum(-1)


def _rloo_never_written(rewards):             # `==` for `=`: each advantage compared, never stored; all zeros
    G = len(rewards)
    A = torch.zeros_like(rewards)
    for g in range(G):
        A[g] == rewards[g] - (rewards.sum() - rewards[g]) / (G - 1)   # compares, and the result is thrown away
    return A


def _rloo_into_long(rewards):                 # filled into an integer tensor: each advantage truncated toward 0
    G = len(rewards)
    A = torch.zeros(G, dtype=torch.long)
    for g in range(G):
        A[g] = rewards[g] - (rewards.sum() - rewards[g]) / (G - 1)
    return A


def _logprob_into_float32(token_logp, mask):  # a loop into torch.zeros(G): float32 whatever the log-probs' dtype
    out = torch.zeros(token_logp.shape[0])
    for g in range(token_logp.shape[0]):
        out[g] = (token_logp[g] * mask[g]).sum()
    return out


def _rloo_median(rewards):                    # the others' median, not their mean
    return torch.stack([rewards[g] - torch.cat([rewards[:g], rewards[g + 1:]]).median() for g in range(len(rewards))])


def _grpo_divides_A_in_place(token_logp, mask, advantages):  # the right value, the caller's advantages divided in place
    advantages.div_(mask.sum(-1).clamp(min=1))
    return -(advantages * (token_logp * mask).sum(-1)).mean()


def _grpo_ratio_form(token_logp, mask, advantages):  # the clipped-ratio surrogate: same gradient, value -mean(A)
    ratio = torch.exp(token_logp - token_logp.detach())
    per_token = torch.min(ratio * advantages[:, None], ratio.clamp(0.8, 1.2) * advantages[:, None])
    return -((per_token * mask).sum(-1) / mask.sum(-1).clamp(min=1)).mean()


def _where_nan_gradient(token_logp, mask, advantages):
    """Guards the division with torch.where: the loss is finite, but s / 0 is still computed and its gradient is nan."""
    s, n = (token_logp * mask).sum(-1), mask.sum(-1)
    return -(advantages * torch.where(n > 0, s / n, torch.zeros_like(s))).mean()


def _logprob_eos_dropped(token_logp, mask):  # the last real token (the EOS) of each completion left out
    n = mask.sum(-1)
    return (token_logp * (torch.arange(token_logp.shape[1]) < (n - 1).unsqueeze(1))).sum(-1)


def _rloo_library(rewards):                   # the package's own leave-one-out, wrapped
    from magrpo_edu.algorithm import group_advantages
    return group_advantages(rewards, mode="rloo")


def _rloo_max_of_others(rewards):             # the best of the others as baseline, not their mean
    return torch.stack([rewards[g] - torch.cat([rewards[:g], rewards[g + 1:]]).max() for g in range(len(rewards))])


def _grpo_via_policy_loss(token_logp, mask, advantages):  # the package's policy_loss fed the per-completion means
    from magrpo_edu.algorithm import policy_loss
    return policy_loss((token_logp * mask).sum(-1) / mask.sum(-1).clamp_min(1), advantages)


def _grpo_advantages_by_position(token_logp, mask, advantages):  # A^(t) on token position t: A as a row, cut or
    C = token_logp.shape[1]                                         # padded with zeros to the C positions
    A = advantages[:C] if len(advantages) >= C else torch.nn.functional.pad(advantages, (0, C - len(advantages)))
    return -((A[None, :] * token_logp * mask).sum(-1) / mask.sum(-1).clamp_min(1)).mean()


MISTAKES = {
    "01.sequence_logprob": [
        lambda lp, m: torch.log(torch.where(m.bool(), lp.exp(), torch.ones_like(lp)).prod(-1)),  # log of the product: underflows
        lambda lp, m: torch.tensor([float((lp[g] * m[g]).sum()) for g in range(lp.shape[0])]),  # rebuilt from floats: no gradient
        lambda lp, m: (lp * m).sum(-1).detach(),                                # detached: no gradient
        lambda token_logp, mask: token_logp.sum(-1),                                   # padding counted (the reference code's bug)
        lambda token_logp, mask: (token_logp * mask).sum(-1) / mask.sum(-1).clamp_min(1),  # a mean, not a sum
        lambda token_logp, mask: (token_logp * mask).mean(-1),                          # a mean over the padded width
        lambda token_logp, mask: (token_logp * mask).sum(0),                            # the wrong axis: over the G completions
        lambda token_logp, mask: (token_logp * (1 - mask.float())).sum(-1),             # the mask read upside down
        lambda token_logp, mask: token_logp[mask.bool()].sum(),                         # one total for the whole group
        lambda token_logp, mask: torch.einsum("gc,gc->g", token_logp, mask),            # a bool mask: RuntimeError
        lambda lp, m: (lp * m).sum(-1).double(),                                # right values, float64: allclose fails below
        lambda lp, m: (lp.double() * m).sum(-1),                                # the same, converted before the sum
        _logprob_last_dropped, _logprob_shifted, _logprob_sliced,
        _logprob_in_place,                                                      # in place on the leaf: RuntimeError
        lambda lp, m: (lp.exp() * m).sum(-1).log(),                            # log of a sum of probabilities
        lambda lp, m: torch.logsumexp(lp.masked_fill(~m.bool(), float("-inf")), -1),  # the same, as a logsumexp
        lambda lp, m: -(lp * m).sum(-1),                                        # the sign flipped (a loss, the NLL)
        lambda lp, m: (lp * m).sum(-1).abs(),                                   # abs: the sign flipped as well
        lambda lp, m: (lp * m).sum(-1).float(),                                 # float32 from float64 log-probs
        _logprob_into_float32,                                                  # the same, a loop into torch.zeros(G)
        lambda lp, m: (lp * m).sum(-1) / m.sum(-1),                             # a mean, unguarded: 0 / 0 = nan when empty
        _logprob_eos_dropped,                                                   # the EOS, the last real token, left out
        lambda lp, m: (lp[:, :-1] * m[:, 1:]).sum(-1),                          # the mask shifted left: the same slip
        lambda lp, m: torch.where(m, lp, 0).sum(-1),                            # a float mask as torch.where's condition
        lambda lp, m: lp.masked_fill(~m, 0).sum(-1),                            # ~ on a float mask: TypeError
        lambda lp, m: (lp.exp() * m).sum(-1),                                   # a sum of probabilities, not of log-probs
        lambda lp, m: (lp * m).exp().sum(-1),                                   # the same, the padding adding exp(0) = 1
        lambda lp, m: (lp * m).sum(-1).exp(),                                   # the probability itself, not its log
        lambda lp, m: torch.round((lp * m).sum(-1), decimals=2),                # rounded to 2 decimals
        lambda lp, m: torch.round((lp * m).sum(-1), decimals=5),                # rounded inside the tolerance: gradient 0
        lambda lp, m: lp.sum(-1) * m.bool().any(-1),                           # the mask per completion: padding summed
        lambda lp, m: (lp.clamp(min=-5) * m).sum(-1),                           # clamped at -5: a rare real token (-25) raised
        lambda lp, m: (lp.clamp(min=-50) * m).sum(-1),                          # clamped at -50: the -60 token raised
        lambda lp, m: (lp * (lp > -5)).sum(-1),                                 # the VALUE, not the mask: keeps a padding
        #                                                                         token of -0.5, drops the -25 one
        lambda lp, m: (lp * m * (lp > -20)).sum(-1),                            # the mask, the rare real tokens dropped
        lambda lp, m: (lp * (lp != -7.5)).sum(-1),                              # the padding's usual value filtered out
        lambda lp, m: (lp * m[0]).sum(-1),                                      # row 0's mask broadcast to every row
        lambda lp, m: (lp * m).min(-1).values,                                  # one token's log-prob, the lowest
        lambda lp, m: torch.logsumexp(lp.masked_fill(~m.bool(), -1e9), -1),    # a logsumexp, padding filled with -1e9
        lambda lp, m: torch.log((lp.exp() * m).sum(-1).clamp_min(1e-30)),      # log(sum(exp)), the log 0 held off
    ],
    "01.leave_one_out": [
        lambda r: r.sub_((r.sum() - r) / (len(r) - 1)),                         # right values, but the rewards changed in place
        lambda r: r - r.mean(),                                     # MAGRPO's baseline, not leave-one-out
        lambda r: r - (r.sum() - r) / len(r),                       # divided by G instead of G-1
        lambda r: (r.sum() - r) / (len(r) - 1) - r,                 # the sign flipped
        lambda r: r - r.sum() / (len(r) - 1),                       # the sample itself left in the sum
        lambda r: torch.stack([x - r[r != x].mean() for x in r]),   # "the others" by value: ties are left out too
        lambda r: r - (r.sum() - r) / (len(r) - 1) if len(r) > 2 else r - r.mean(),  # G = 2 given MAGRPO's baseline
        _rloo_median,                                               # the others' median
        lambda r: (r - (r.sum() - r) / (len(r) - 1)).unsqueeze(0),  # shape (1, G), not (G,)
        lambda r: torch.round(r - (r.sum() - r) / (len(r) - 1), decimals=3),  # rounded to 3 decimals
        _rloo_never_written,                                        # `==` for `=`: every advantage 0
        _rloo_into_long,                                            # an integer tensor: the advantages truncated
        lambda r: (r - (r.sum() - r) / (len(r) - 1)).half(),        # float16: differs after 3 digits
        lambda r: r - (r.sum() - r) / 3,                            # G fixed at 4: wrong for groups of 2, 3 and 6
        _rloo_library,                                              # the package's group_advantages(mode="rloo")
        lambda r: (len(r) - 1) / len(r) * (r - r.mean()),           # notebook 0b's factor, upside down
        lambda r: (lambda a: (a - a.mean()) / a.std())(r - (r.sum() - r) / (len(r) - 1)),  # z-scored leave-one-out
        _rloo_max_of_others,                                        # the others' maximum, not their mean
        lambda r: r - (r.sum() - r) // (len(r) - 1),                # floor division: the baseline rounded down
        lambda r: (r.double() - (r.double().sum() - r.double()) / (len(r) - 1)),  # float64 from float32 rewards
        lambda r: (r - (r.sum() - r) / (len(r) - 1)).float(),      # float32 from float64 rewards
        lambda r: (r - (r.sum() - r) / (len(r) - 1)).clamp(-0.5, 0.5),  # clipped to [-0.5, 0.5]
        lambda r: (r.sum() - r) / (len(r) - 1),                     # the baseline alone, not r minus it
        lambda r: torch.stack([r[g] - r[:g].mean() for g in range(len(r))]),  # the mean of the EARLIER samples only
        #                                                             (nan for g = 0, which has none)
        lambda r: r - r.cumsum(0) / torch.arange(1, len(r) + 1),    # a running mean, r_0 .. r_g
        lambda r: r - r.median(),                                   # the median of ALL G rewards (torch's: the lower)
        lambda r: r - r.quantile(0.5),                              # the same, statistics.median's (the mean of
        #                                                             the middle two: r - mean(r) on the first group)
        lambda r: r - (r.sum() - r) / (r.unique().numel() - 1 if r.unique().numel() > 1 else 1),  # G counted as
        #                                                             the DISTINCT rewards: ties counted once
        lambda r: r - (r.sum() - r),                                # the others' sum never divided: their SUM, not
        #                                                             their mean (right only at G = 2)
        lambda r: r - (r.sum() - r) / (len(r) - 2),                 # divided by G-2, not G-1 (inf / nan at G = 2)
        lambda r: r - (r.sum() - r) / max(len(r) - 2, 1),           # the same, guarded: right only at G = 2
        lambda r: 2 * (r - r.mean()),                               # G/(G-1) fixed at 2: right only at G = 2
        lambda r: r - r.roll(1),                                    # ONE neighbour, the previous sample, as baseline
        lambda r: (r - (r.sum() - r) / (len(r) - 1)).abs(),         # abs: the sign of the advantages lost
    ],
    "01.grpo_token_mean_loss": [
        _where_nan_gradient,                                  # a finite loss with a nan gradient on an empty completion
        lambda token_logp, mask, advantages: -(advantages * ((token_logp * mask).sum(-1) / mask.sum(-1)).nan_to_num(0.0)
                                               ).mean(),      # the same trap, nan_to_num after the division

        lambda lp, m, A: (-(A * (lp * m).sum(-1) / m.sum(-1).clamp_min(1)).mean()).detach(),  # right value, no gradient
        lambda lp, m, A: -(A * (lp * m).sum(-1)).mean(),                               # MAGRPO's sum
        lambda lp, m, A: -(A * (lp * m).sum(-1) / lp.shape[1]).mean(),                 # divided by the padded width
        lambda lp, m, A: -(A * (lp * m).sum(-1) / m.sum(-1)).mean(),                   # an empty completion divides by 0
        lambda lp, m, A: -(A * lp.mean(-1)).mean(),                                    # the padding in the mean
        lambda lp, m, A: (A * (lp * m).sum(-1) / m.sum(-1).clamp_min(1)).mean(),       # the sign flipped
        lambda lp, m, A: -(A * (lp * m).sum(-1) / m.sum(-1).clamp_min(1)).sum(),       # summed over g, not averaged
        lambda lp, m, A: -(A[:, None] * lp * m).sum() / m.sum().clamp_min(1),          # DAPO's token-level mean
        lambda lp, m, A: -(A * (lp * m).sum(-1) / m.sum(-1).max().clamp_min(1)).mean(),  # the longest length for all
        _grpo_standardised,
        lambda lp, m, A: grpo_token_mean_loss(lp, m, A / A.std()),                    # divided by the std, not centred
        _grpo_divides_A_in_place,
        _grpo_ratio_form,
        lambda lp, m, A: -(A * (lp * m).sum(-1) / ((lp * m) != 0).sum(-1).clamp_min(1)).mean(),  # |a| = non-zero
        #                                                         log-probs: a real token of log-prob 0.0 not counted
        lambda lp, m, A: -((A - A.mean()) * (lp * m).sum(-1) / m.sum(-1).clamp_min(1)).mean(),  # A re-centred
        lambda lp, m, A: -(A * (lp * m).sum(-1) / m.sum(-1).median().clamp_min(1)).mean(),  # the median length for all
        lambda lp, m, A: -(A * (lp * m).sum(-1) / (lp != 0).sum(-1).clamp_min(1)).mean(),  # |a| = non-zero
        #                                                         log-probs, padding included: the padded width here
        lambda lp, m, A: -(A * (lp * m).sum(-1) / m.sum(-1).clamp_min(1)).sum() / (len(A) - 1),  # 1/(G-1), not 1/G
        lambda lp, m, A: -(A * (lp * m).sum(-1) / m.sum(-1).clamp_min(1))[m.sum(-1) > 0].mean(),  # the empty
        #                                                         completions left out of the mean
        lambda lp, m, A: -(A.mean() * (lp * m).sum(-1) / m.sum(-1).clamp_min(1)).mean(),  # A.mean() for every g
        lambda lp, m, A: -(A * (lp * m).sum(-1) / m.sum(-1).clamp_min(1)).sum() / 4,  # G fixed at 4
        lambda lp, m, A: -(A.abs() * (lp * m).sum(-1) / m.sum(-1).clamp_min(1)).mean(),  # |A|: the sign lost
        lambda lp, m, A: -(A * (lp * m).sum(-1) / m.sum(-1).clamp_min(1).sqrt()).mean(),  # divided by sqrt(|a|)
        lambda lp, m, A: torch.round(grpo_token_mean_loss(lp, m, A), decimals=2),      # rounded to 2 decimals
        lambda lp, m, A: torch.round(grpo_token_mean_loss(lp, m, A), decimals=5),      # rounded inside the
        #                                                         tolerance: the right value, gradient 0
        lambda lp, m, A: -(A.double() * (lp.double() * m).sum(-1) / m.sum(-1).clamp(min=1)).mean(),  # float64 from
        #                                                         float32 inputs
        lambda lp, m, A: grpo_token_mean_loss(lp, m, A).float(),                       # float32 from float64 log-probs
        _grpo_via_policy_loss,                                                         # MAGRPO's policy_loss, wrapped
        lambda lp, m, A: -(A * (lp * m).sum(-1, keepdim=True) / m.sum(-1, keepdim=True).clamp_min(1)).mean(),  # (G, 1)
        #                                                         columns times A: a (G, G) table, A.mean() for all
        lambda lp, m, A: -(A * (lp * m).sum(-1, keepdim=True) / m.sum(-1).clamp_min(1)).mean(),  # the sum alone
        #                                                         as a (G, 1) column: (G, G) again
        lambda lp, m, A: grpo_token_mean_loss(lp, m, A.clamp(-1, 1)),                 # the advantages clipped
        lambda lp, m, A: -(A * (lp * m).sum(-1) / m.sum().clamp_min(1)).mean(),       # the whole group's token count
        lambda lp, m, A: -(A * (lp * m).sum(-1) / (m.sum(-1) - 1).clamp_min(1)).mean(),  # |a| - 1
        lambda lp, m, A: -(A * (lp.clamp(min=-5) * m).sum(-1) / m.sum(-1).clamp(min=1)).mean(),  # log-probs
        #                                                         clamped at -5: a rare real token (-25) raised
        lambda lp, m, A: (lambda k: -(A * (lp * k).sum(-1) / k.sum(-1).clamp(min=1)).mean())(
            (lp > -5).float()),                               # the VALUE for the mask: a -0.5 padding token kept
        lambda lp, m, A: -(A * (lp * m).sum(-1) / m.sum(-1).clamp_min(1)).mean() / len(A),  # 1/G twice
        lambda lp, m, A: -(A * (lp * m).sum(-1) / m.sum(-1).clamp_min(1)).sum() / A.abs().sum(),  # / sum |A|
        lambda lp, m, A: -(A * ((lp * m).sum(-1) / m.sum(-1).clamp_min(1)).exp()).mean(),  # exp of the mean
        #                                                         log-prob: a probability, not a log-prob
        lambda lp, m, A: -(A * (lp.exp() * m).sum(-1) / m.sum(-1).clamp_min(1)).mean(),  # the mean token
        #                                                         probability
        lambda lp, m, A: -(A * (lp * m).sum(-1) / m.sum(-1).clamp_min(2)).mean(),   # max(|a|, 2): a 1-token
        #                                                         completion halved
        lambda lp, m, A: -(A * (lp * m).sum(-1) / m.sum(0).clamp_min(1)).mean(),   # lengths over axis 0, one per
        #                                                         token position: (G,) against (C,), RuntimeError
        lambda lp, m, A: -(A * (lp * m).sum(-1) / m.sum(0).clamp_min(1)[:len(A)]).mean(),  # the same, cut to G
        #                                                         entries so that it runs

        _grpo_advantages_by_position,                         # A along the token axis, cut or padded to C so it runs
        lambda lp, m, A: -((A[None, :] * lp * m).sum(-1) / m.sum(-1).clamp_min(1)).mean(),  # the same as a row:
        #                                                         (G,) against C positions, RuntimeError
    ],
}


def _rloo_loop(rewards):
    G = len(rewards)
    return torch.stack([rewards[g] - sum(rewards[k] for k in range(G) if k != g) / (G - 1) for g in range(G)])


def _grpo_loop(token_logp, mask, advantages):
    total = 0.0
    for g in range(len(advantages)):
        n = max(int(mask[g].sum().item()), 1)
        total = total - advantages[g] * (token_logp[g] * mask[g]).sum() / n
    return total / len(advantages)


def _grpo_divides_a_copy(token_logp, mask, advantages):  # in place, but on its own copy: the caller's A untouched
    A = advantages.clone()
    A /= mask.sum(-1).clamp(min=1)
    return -(A * (token_logp * mask).sum(-1)).mean()


VARIANTS = {
    "01.sequence_logprob": [
        lambda token_logp, mask: torch.where(mask.bool(), token_logp, torch.zeros_like(token_logp)).sum(-1),
        lambda token_logp, mask: token_logp.masked_fill(mask == 0, 0.0).sum(dim=1),
        lambda token_logp, mask: (token_logp * mask.to(token_logp.dtype)).sum(-1),    # the mask converted to the log-probs' dtype
    ],
    "01.leave_one_out": [
        _rloo_loop,
        lambda r: len(r) / (len(r) - 1) * (r - r.mean()),           # the identity notebook 06 uses
        lambda r: r - torch.stack([torch.cat([r[:g], r[g + 1:]]).mean() for g in range(len(r))]),  # the others by position
    ],
    "01.grpo_token_mean_loss": [
        _grpo_loop,
        lambda lp, m, A: -(A * (lp * m).sum(-1) / torch.clamp(m.sum(-1), min=1)).sum() / len(A),
        _grpo_divides_a_copy,
        lambda lp, m, A: -(A * (lp * m).sum(-1) / (m.sum(-1) + 1e-8)).mean(),        # an eps guard: |a| + 1e-8 is
        #                                                         |a| in float32 for |a| >= 1, and 0 / 1e-8 = 0 when empty
        lambda lp, m, A: -(A * (lp * m).sum(-1) / m.sum(-1).clamp_min(1e-8)).mean(),  # the same, clamp_min(1e-8)
        lambda lp, m, A: -torch.dot(A, (lp * m).sum(-1) / m.sum(-1).clamp(min=1)) / len(A),  # a dot product over g
        lambda lp, m, A: -(A @ ((lp * m).sum(-1) / m.sum(-1).clamp(min=1))) / len(A),        # the same with @
        lambda lp, m, A: -torch.einsum("g,g->", A, (lp * m).sum(-1) / m.sum(-1).clamp(min=1)) / len(A),  # einsum
    ],
}
