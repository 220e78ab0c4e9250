"""Notebook 06: solutions and typical mistakes."""
import torch

from ...algorithm import group_advantages, kl_penalty


def std_scaled_advantages(R):
    return (R - R.mean()) / (R.std() + 1e-4)


def loss_with_kl(token_logp, ref_logp, mask, advantages, beta):
    policy = -(advantages.detach() * (token_logp * mask).sum(-1)).mean()
    d = ref_logp.detach() - token_logp
    kl = ((torch.exp(d) - d - 1) * mask).sum(-1)
    return policy + beta * kl.mean()


def comlrl_credit(R, G, mode):
    grid = R.view(G, G)                    # grid[k1, k2]: agent 1's sample k1 with agent 2's sample k2
    S = torch.stack([grid.sum(dim=1), grid.sum(dim=0)])   # each sample's sum of returns over its G partners
    baseline = S.mean(dim=1, keepdim=True) if mode == "mean" else S.max(dim=1, keepdim=True).values
    return S - baseline


def _kl_per_token_mean(token_logp, ref_logp, mask, advantages, beta):
    policy = -(advantages * (token_logp * mask).sum(-1)).mean()
    d = ref_logp - token_logp
    return policy + beta * (((torch.exp(d) - d - 1) * mask).sum(-1) / mask.sum(-1)).mean()


def _kl_wrong_direction(token_logp, ref_logp, mask, advantages, beta):
    policy = -(advantages * (token_logp * mask).sum(-1)).mean()
    d = token_logp - ref_logp
    return policy + beta * ((torch.exp(d) - d - 1) * mask).sum(-1).mean()


SOLUTIONS = {
    "06.std_scaled_advantages": std_scaled_advantages,
    "06.loss_with_kl": loss_with_kl,
    "06.comlrl_credit": comlrl_credit,
}

def _kl_detached(token_logp, ref_logp, mask, advantages, beta):
    policy = -(advantages * (token_logp * mask).sum(-1)).mean()
    d = (ref_logp - token_logp).detach()                       # the KL as a number: no gradient, no leash
    return policy + beta * ((torch.exp(d) - d - 1) * mask).sum(-1).mean()


def _std_in_place(R):                         # right values, but the caller's rewards centred in place
    R -= R.mean()
    return R / (R.std() + 1e-4)


def _std_by_range(R):                         # divided by the range, max - min, not the std
    return (R - R.mean()) / (R.max() - R.min() + 1e-4)


def _kl_without_minus_one(token_logp, ref_logp, mask, advantages, beta):   # k3 = e^d - d: every token adds 1
    d = ref_logp - token_logp
    return loss_with_kl(token_logp, ref_logp, mask, advantages, 0.0) + beta * ((torch.exp(d) - d) * mask).sum(-1).mean()


def _kl_group_token_mean(token_logp, ref_logp, mask, advantages, beta):    # one mean over all the group's tokens
    d = ref_logp - token_logp
    return loss_with_kl(token_logp, ref_logp, mask, advantages, 0.0) + beta * ((torch.exp(d) - d - 1) * mask).sum() / mask.sum()


def _kl_in_the_advantage(token_logp, ref_logp, mask, advantages, beta):    # A - beta * KL: CoMLRL's reward-side KL
    d = (ref_logp - token_logp).detach()
    kl = ((torch.exp(d) - d - 1) * mask).sum(-1)
    return -((advantages - beta * kl) * (token_logp * mask).sum(-1)).mean()


def _comlrl_centres_R_in_place(R, G, mode):      # the right credits for 'mean', but R centred through a view
    M = R.view(G, G)
    M -= M.mean()
    S = torch.stack([M.sum(1), M.sum(0)])
    return S - S.mean(1, keepdim=True) if mode == "mean" else S - S.max(1, keepdim=True).values


def _kl_unsqueezes_advantages_in_place(token_logp, ref_logp, mask, advantages, beta):   # right value, but the
    A = advantages.unsqueeze_(-1)                  # caller's advantages reshaped to (G, 1) in place
    d = ref_logp - token_logp
    return (-(A * token_logp * mask).sum(-1) + beta * ((d.exp() - d - 1) * mask).sum(-1)).mean()


def _kl_masks_ref_in_place(token_logp, ref_logp, mask, advantages, beta):   # right value, the caller's ref_logp zeroed
    ref_logp.masked_fill_(mask == 0, 0.0)                                    # on the padding
    return loss_with_kl(token_logp, ref_logp, mask, advantages, beta)


def _kl_scales_mask_in_place_after(token_logp, ref_logp, mask, advantages, beta):   # right value, but mask.mul_
    loss = loss_with_kl(token_logp, ref_logp, mask, advantages, beta)                # after the loss: backward
    mask.mul_(1.0)                                                                     # refuses it (autograd's version
    return loss                                                                        # counter), values unchanged


def _std_fixed_G(R):                          # written for the notebook's groups of 4: the squares divided by 3
    c = R - R.mean()
    return c / ((c ** 2).sum() / 3).sqrt().add(1e-4)


def _std_from_floats(R):                      # the right numbers, through Python floats: float32 whatever R is
    mean = sum(R.tolist()) / len(R)
    return torch.tensor([(x - mean) / (R.std().item() + 1e-4) for x in R.tolist()])


def _comlrl_credit_loop(R, G, mode):             # right for float32 R; torch.zeros makes float32 whatever R is
    sums = torch.zeros(2, G)
    for j in range(G * G):
        g1, g2 = divmod(j, G)                  # joint_actions(2, G, "cross") lists (g1, g2) row by row
        sums[0, g1] += R[j]
        sums[1, g2] += R[j]
    return torch.stack([row - (row.mean() if mode == "mean" else row.max()) for row in sums])


def _comlrl_credit_loop_dtype(R, G, mode):       # the same loop, its sums in R's dtype
    sums = torch.zeros(2, G, dtype=R.dtype)
    for j in range(G * G):
        g1, g2 = divmod(j, G)
        sums[0, g1] += R[j]
        sums[1, g2] += R[j]
    return torch.stack([row - (row.mean() if mode == "mean" else row.max()) for row in sums])


def _kl_inverts_float_mask(token_logp, ref_logp, mask, advantages, beta):   # ~mask: mask is float 0/1, not bool
    return loss_with_kl(token_logp, ref_logp.masked_fill(~mask, 0.0), mask, advantages, beta)


def _std_rounded(R, digits=4):                 # right, then rounded: 4 decimals are up to 5e-5 off
    return torch.round((R - R.mean()) / (R.std() + 1e-4) * 10 ** digits) / 10 ** digits


def _comlrl_sums(R, G):
    return torch.stack([R.view(G, G).sum(1), R.view(G, G).sum(0)])


def _comlrl_loo(R, G, mode):                     # 'mean' as the mean of the OTHER G - 1 sums (leave-one-out)
    S = _comlrl_sums(R, G)
    return S - ((S.sum(1, keepdim=True) - S) / (G - 1) if mode == "mean" else S.max(1, keepdim=True).values)


def _comlrl_zscored(R, G, mode):                 # the right credits, divided by the std of the G sums
    S = _comlrl_sums(R, G)
    return comlrl_credit(R, G, mode) / (S.std(1, keepdim=True) + 1e-4)


def _kl_no_unsqueeze(token_logp, ref_logp, mask, advantages, beta):   # (G,) * (G, C): a size mismatch
    d = ref_logp - token_logp
    return (-(advantages * token_logp * mask).sum(-1) + beta * ((d.exp() - d - 1) * mask).sum(-1)).mean()


def _kl_true_kl_term(token_logp, ref_logp, mask, advantages, beta):   # pi * (log pi - log pi_ref), not k3
    return (loss_with_kl(token_logp, ref_logp, mask, advantages, 0.0)
            + beta * (token_logp.exp() * (token_logp - ref_logp) * mask).sum(-1).mean())


def _kl_both_by_G_minus_1(token_logp, ref_logp, mask, advantages, beta):   # both terms summed, divided by G - 1
    return loss_with_kl(token_logp, ref_logp, mask, advantages, beta) * len(advantages) / (len(advantages) - 1)


MISTAKES = {
    "06.std_scaled_advantages": [
        lambda R: (R - R.mean()) / R.std(),                             # no eps: nan on a group that agrees
        lambda R: group_advantages(R, "mean", "group"),                 # the package's own, wrapped
        lambda R: (R - R.mean()) / (R.std(unbiased=False) + 1e-4),      # population std
        lambda R: (R - R.mean()) / (R.var() + 1e-4).sqrt(),             # eps under the square root
        lambda R: (R - R.mean()) / R.std().clamp_min(1e-4),             # max(std, eps), not std + eps
        lambda R: (R - R.mean()) / R.std() if R.std() > 0 else torch.zeros_like(R),   # a zero-std guard, no eps
        lambda R: (R.mean() - R) / (R.std() + 1e-4),                    # the sign flipped
        lambda R: R / (R.std() + 1e-4),                                 # scaled, not centred
        lambda R: (R - R.mean()) / (R.std() + 1e-8),                    # an eps, but far below 1e-4
        lambda R: (R - R.mean()) / (R.std() + 2e-4),                    # an eps, twice TRL's
        _std_in_place,
        _std_by_range,
        _std_rounded,                                                   # rounded to 4 decimals
        lambda R: _std_rounded(R, 3),                                   # rounded to 3 decimals
        lambda R: (R - R.mean()) / R.std(unbiased=False).clamp_min(1e-6),   # CoMLRL's z-score
        lambda R: (R - R.median()) / (R.std() + 1e-4),                  # centred on the median
        lambda R: (R - R.max()) / (R.std() + 1e-4),                     # centred on the max (MAReMax's baseline)
        lambda R: (R - (R.sum() - R) / (len(R) - 1)) / (R.std() + 1e-4),   # leave-one-out (MARLOO's baseline)
        _std_fixed_G,                                                   # G - 1 = 3 written into the code
        lambda R: (R - R.sum() / 4) / (R.std() + 1e-4),                 # the mean of a group of 4, whatever G
        lambda R: std_scaled_advantages(R.double()),                    # float64, not R's dtype
        _std_from_floats,                                               # float32, not R's dtype
        lambda R: (R - R.sum() / (len(R) - 1)) / (R.std() + 1e-4),      # the mean's divisor G - 1, not G
        lambda R: (R - R.mean()) / (R.var() + 1e-4),                    # the variance, not the std
        lambda R: (R - R.sum()) / (R.std() + 1e-4),                     # the sum, not the mean
        lambda R: ((R - R.mean()) / (R.std() + 1e-4)).abs(),            # |A|: no negative advantage
        lambda R: (R - R.mean() + 1e-4) / (R.std() + 1e-4),             # eps in the numerator too
    ],
    "06.loss_with_kl": [
        _kl_per_token_mean, _kl_wrong_direction,
        lambda lp, ref, m, A, beta: -(A * (lp * m).sum(-1)).mean() + beta * kl_penalty(lp, ref, m).mean(),  # wrapped
        lambda lp, ref, m, A, beta: -(A * (lp * m).sum(-1)).mean() + beta * (ref - lp).sum(-1).mean(),
        lambda lp, ref, m, A, beta: loss_with_kl(lp, ref, m, A, 0.0) - beta * (loss_with_kl(lp, ref, m, A, 1.0)
                                                                              - loss_with_kl(lp, ref, m, A, 0.0)),  # - beta KL
        lambda lp, ref, m, A, beta: loss_with_kl(lp, ref, m, A, 0.0) + beta * len(A) * (
            loss_with_kl(lp, ref, m, A, 1.0) - loss_with_kl(lp, ref, m, A, 0.0)),                        # KL summed over g
        lambda lp, ref, m, A, beta: -(A * (lp * m).sum(-1)).mean() + beta * (
            torch.exp(ref - lp) - (ref - lp) - 1).sum(-1).mean(),                                        # KL over the padding
        lambda lp, ref, m, A, beta: -(A * lp.sum(-1)).mean() + beta * (
            (torch.exp(ref - lp) - (ref - lp) - 1) * m).sum(-1).mean(),                                  # policy over the padding
        _kl_detached,
        lambda lp, ref, m, A, beta: loss_with_kl(lp, ref, m, A, 1.0),                                   # beta ignored
        lambda lp, ref, m, A, beta: -(A * (lp * m).sum(-1)).mean() + beta * (0.5 * (ref - lp) ** 2 * m).sum(-1).mean(),  # k2
        _kl_without_minus_one, _kl_group_token_mean, _kl_in_the_advantage,
        _kl_unsqueezes_advantages_in_place, _kl_masks_ref_in_place,
        lambda lp, ref, m, A, beta: loss_with_kl(lp.mul_(m), ref, m, A, beta),                          # token_logp in place
        _kl_inverts_float_mask,
        _kl_scales_mask_in_place_after,
        lambda lp, ref, m, A, beta: -(A * (lp * m).sum(-1)).mean(),                                     # no KL term
        lambda lp, ref, m, A, beta: -loss_with_kl(lp, ref, m, A, 0.0) + beta * (
            loss_with_kl(lp, ref, m, A, 1.0) - loss_with_kl(lp, ref, m, A, 0.0)),                        # policy sign flipped
        lambda lp, ref, m, A, beta: -(A * (lp * m).sum(-1) / m.sum(-1)).mean() + beta * (
            (torch.exp(ref - lp) - (ref - lp) - 1) * m).sum(-1).mean(),                                  # GRPO's token mean
        lambda lp, ref, m, A, beta: loss_with_kl(lp, ref, m, A, 0.0) + beta * (
            (torch.exp(ref - lp) - (ref - lp) - 1) * m).mean(),                                          # KL / C: mean over all
        lambda lp, ref, m, A, beta: loss_with_kl(lp, ref, m, A, 0.0) + beta * (
            (torch.exp(ref - lp) - (ref - lp) - 1) * m).sum(-1).mean() / len(A),                         # KL / G twice
        _kl_true_kl_term,
        _kl_both_by_G_minus_1,
        _kl_no_unsqueeze,
    ],
    "06.comlrl_credit": [
        _comlrl_centres_R_in_place,
        lambda R, G, mode: comlrl_credit(R, G, mode).flip(0),                                     # agents swapped
        lambda R, G, mode: comlrl_credit(R, G, mode) / G,                                          # the mean, not the sum
        lambda R, G, mode: torch.stack([(R - (R.mean() if mode == "mean" else R.max())).view(G, G).sum(1),
                                        (R - (R.mean() if mode == "mean" else R.max())).view(G, G).sum(0)]),  # single-reward baseline
        lambda R, G, mode: comlrl_credit(R, G, "mean"),                                            # mode ignored
        lambda R, G, mode: (lambda S: S - (S.mean() if mode == "mean" else S.max()))(
            torch.stack([R.view(G, G).sum(1), R.view(G, G).sum(0)])),                              # one baseline for both agents
        lambda R, G, mode: torch.stack([R.view(G, G).sum(1), R.view(G, G).sum(0)]),                # no baseline
        lambda R, G, mode: comlrl_credit(R.double(), G, mode),                                     # float64, not R's dtype
        lambda R, G, mode: comlrl_credit(R, 3, mode),                           # G hard-coded to section 3's grid
        lambda R, G, mode: comlrl_credit(R, G, mode).T,                          # transposed: (G, 2), one row per sample
        _comlrl_credit_loop,                                                       # float32, not R's dtype
        lambda R, G, mode: comlrl_credit(R.double(), G, mode).float(),              # float32, not R's dtype
        lambda R, G, mode: -comlrl_credit(R, G, mode),                             # the sign flipped: b - S
        lambda R, G, mode: torch.round(comlrl_credit(R, G, mode) * 1000) / 1000,   # rounded to 3 decimals
        lambda R, G, mode: (lambda S: S - (S.mean(1, keepdim=True) if mode == "mean"
                                           else S.min(1, keepdim=True).values))(_comlrl_sums(R, G)),   # min for 'max'
        _comlrl_loo,                                                               # leave-one-out among the sums
        lambda R, G, mode: (lambda S: S - (S.mean(1, keepdim=True) if mode == "mean" else S.max(1, keepdim=True).values))(
            torch.stack([R.view(G, G).sum(1), R.view(G, G).sum(1)])),             # agent 2 summed over rows too
        lambda R, G, mode: (lambda d: torch.stack([d, d]) - (d.mean() if mode == "mean" else d.max()))(
            R.view(G, G).diagonal()),                                              # the aligned diagonal only
        _comlrl_zscored,
        lambda R, G, mode: (lambda S: S - (S.mean(1) if mode == "mean" else S.max(1).values))(
            _comlrl_sums(R, G)),                                                   # no keepdim: wrong at G = 2
    ],
}


VARIANTS = {
    "06.std_scaled_advantages": [
        lambda R: (R - R.sum() / len(R)) / (((R - R.mean()) ** 2).sum() / (len(R) - 1)).sqrt().add(1e-4),
        lambda R: (lambda A: A.sub_(A.mean()).div_(R.std() + 1e-4))(R.clone()),   # in place, on a copy
        lambda R: torch.tensor([(x - R.mean().item()) / (R.std().item() + 1e-4) for x in R.tolist()], dtype=R.dtype),
    ],
    "06.loss_with_kl": [
        lambda lp, ref, m, A, beta: (-(A[:, None] * lp * m).sum(-1) + beta * ((ref - lp).exp() - (ref - lp) - 1).mul(m).sum(-1)).mean(),
        lambda lp, ref, m, A, beta: loss_with_kl(lp, ref.masked_fill(m == 0, 0.0), m, A, beta),   # masked out of place
        lambda lp, ref, m, A, beta: loss_with_kl(lp, ref.masked_fill(~m.bool(), 0.0), m, A, beta),   # the mask as bools
    ],
    "06.comlrl_credit": [
        _comlrl_credit_loop_dtype,
        # one mean over both agents' sums: the same number, since agent 1's row sums and agent 2's column sums both
        # total the whole grid (only 'max' needs each agent's own baseline)
        lambda R, G, mode: (lambda S: S - (S.mean() if mode == "mean" else S.max(1, keepdim=True).values))(
            torch.stack([R.view(G, G).sum(1), R.view(G, G).sum(0)])),
    ],
}
