"""Notebook 06: solutions and typical mistakes."""
import torch

from ...algorithm import credit_samples, group_advantages, joint_actions


def std_scaled_advantages(R):
    return (R - R.mean()) / (R.std() + 1e-4)


def comlrl_credit(R, G, mode):
    grid = R.view(G, G)                    # grid[k1, k2]: agent 1's sample k1 with agent 2's sample k2
    S = torch.stack([grid.sum(dim=1), grid.sum(dim=0)])   # each sample's sum of returns over its G partners
    baseline = S.mean(dim=1, keepdim=True) if mode == "mean" else S.max(dim=1, keepdim=True).values
    return S - baseline


SOLUTIONS = {
    "06.std_scaled_advantages": std_scaled_advantages,
    "06.comlrl_credit": comlrl_credit,
}


def _std_in_place(R):                         # right values, but the caller's rewards centred in place
    R -= R.mean()
    return R / (R.std() + 1e-4)


def _std_by_range(R):                         # divided by the range, max - min, not the std
    return (R - R.mean()) / (R.max() - R.min() + 1e-4)


def _comlrl_centres_R_in_place(R, G, mode):      # the right credits for 'mean', but R centred through a view
    M = R.view(G, G)
    M -= M.mean()
    S = torch.stack([M.sum(1), M.sum(0)])
    return S - S.mean(1, keepdim=True) if mode == "mean" else S - S.max(1, keepdim=True).values


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


def _std_rounded(R, digits=4):                 # right, then rounded: 4 decimals are up to 5e-5 off
    return torch.round((R - R.mean()) / (R.std() + 1e-4) * 10 ** digits) / 10 ** digits


def _comlrl_sums(R, G):
    return torch.stack([R.view(G, G).sum(1), R.view(G, G).sum(0)])


def _comlrl_loo(R, G, mode):                     # 'mean' as the mean of the OTHER G - 1 sums (leave-one-out)
    S = _comlrl_sums(R, G)
    return S - ((S.sum(1, keepdim=True) - S) / (G - 1) if mode == "mean" else S.max(1, keepdim=True).values)


def _comlrl_loo_max(R, G, mode):                 # 'max' as the largest of the OTHER G - 1 sums (leave-one-out)
    S = _comlrl_sums(R, G)
    if mode == "mean":
        return S - S.mean(1, keepdim=True)
    return S - torch.stack([torch.stack([torch.cat([row[:k], row[k + 1:]]).max() for k in range(G)]) for row in S])


def _comlrl_off_diagonal(R, G, mode):           # each sample's sum without its aligned pair M[k, k]: G - 1 cells
    M = R.view(G, G)
    S = torch.stack([M.sum(1) - M.diag(), M.sum(0) - M.diag()])
    return S - (S.mean(1, keepdim=True) if mode == "mean" else S.max(1, keepdim=True).values)


def _comlrl_zscored(R, G, mode):                 # the right credits, divided by the std of the G sums
    S = _comlrl_sums(R, G)
    return comlrl_credit(R, G, mode) / (S.std(1, keepdim=True) + 1e-4)


def _comlrl_group_advantages(R, G, mode):        # the right credits, the baseline left to the package's own
    S = _comlrl_sums(R, G)
    return torch.stack([group_advantages(S[0], mode), group_advantages(S[1], mode)]).to(R.dtype)


def _std_mean_swapped(R):                     # torch.std_mean returns (std, mean): unpacked the other way round
    mean, std = torch.std_mean(R)
    return (R - mean) / (std + 1e-4)


def _comlrl_mean_by_package(R, G, mode):         # 'mean' handed to the package's credit_samples, 'max' written out
    table = joint_actions(2, G, "cross")
    if mode == "mean":
        return (G * credit_samples((R - R.mean()).float(), table, G)).to(R.dtype)
    M = R.view(G, G)
    S = torch.stack([M.sum(1), M.sum(0)])
    return S - S.max(1, keepdim=True).values


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
        lambda R: (R - R.sum() / 4) / (torch.sqrt(((R - R.sum() / 4) ** 2).sum() / 3) + 1e-4),   # G = 4 throughout
        lambda R: (R - R.sum() / 4) / (torch.sqrt(((R - R.mean()) ** 2).sum() / 3) + 1e-4),     # G = 4, mean in squares
        lambda R: (R - R.mean()) / (torch.sqrt(((R - R.sum() / 4) ** 2).sum() / 3) + 1e-4),     # G = 4 in the squares only
        lambda R: (R - R.mean()) / ((((R - R.mean()) ** 2).sum() / (len(R) - 2)).sqrt() + 1e-4),   # squares by G - 2
        _std_mean_swapped,                                              # (std, mean) unpacked as (mean, std)
        lambda R: (R - R.mean()) / (R.var(unbiased=False) + 1e-4).sqrt(),   # population variance, eps under the root
        lambda R: ((R - R.mean()) / (R.std() + 1e-4)).clamp(-2, 2),     # clipped at +-2: nothing asks for a clip
        lambda R: R - R.mean(),                                         # centred, not divided by the std
        lambda R: (R - R.mean()) / R.std() + 1e-4,                      # eps added after dividing, outside the brackets
        lambda R: R - R.mean() / (R.std() + 1e-4),                      # precedence: only the mean divided
        lambda R: ((R - R.mean()) / (R.std() + 1e-4)).clamp(-3, 3),     # clipped at +-3: a group of 16 reaches 3.75
        lambda R: R - R.mean() / R.std(),                               # precedence, and no eps: nan on a group that agrees
        lambda R: (R - R.min()) / (R.std() + 1e-4),                     # centred on the min (= torch's median on [0.2, 1.0, 0.6, 0.2])
        lambda R: (R - R.mean()) / (R[:4].std() + 1e-4),                # the std of the first 4 rewards only
        lambda R: (R - R[:4].mean()) / (R[:4].std() + 1e-4),            # the mean and std of the first 4 only
        # [42] on: after every position tests/test_exercise_boundaries.py reads
        lambda R: torch.zeros_like(R) if R.std() <= 1e-3 else (R - R.mean()) / (R.std() + 1e-4),   # near-tie as a tie
        lambda R: torch.zeros_like(R) if R.std() <= 1e-6 else (R - R.mean()) / (R.std() + 1e-4),   # the same, 1e-6
        lambda R: (R - R.mean()) / (R.std() * (len(R) - 1) / len(R) + 1e-4),   # std times (G - 1)/G
        lambda R: (R - R.mean()) / ((R - R.mean()).abs().mean() + 1e-4),    # the mean absolute deviation
        lambda R: ((R - R.mean()) / (R.std() + 1e-4)).half().to(R.dtype),   # a float16 round trip
        lambda R: ((R - R.mean()) / (R.std() + 1e-4)).bfloat16().to(R.dtype),   # a bfloat16 round trip
    ],
    "06.comlrl_credit": [
        _comlrl_centres_R_in_place,
        _comlrl_group_advantages,                                                  # the package's own, on the sums
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
        _comlrl_mean_by_package,                                                   # the package's own, for 'mean' only
        lambda R, G, mode: comlrl_credit(R, G, mode) / (G - 1),                    # the sums divided by G - 1
        lambda R, G, mode: (lambda S: S - (S.sum(1, keepdim=True) / (G - 1) if mode == "mean"
                                           else S.max(1, keepdim=True).values))(_comlrl_sums(R, G)),   # mean by G - 1
        lambda R, G, mode: (lambda S: S - (S.mean(1, keepdim=True) if mode == "mean" else R.max()))(
            _comlrl_sums(R, G)),                                                   # 'max': the largest SINGLE reward
        lambda R, G, mode: (lambda S: S - (R.mean() if mode == "mean" else S.max(1, keepdim=True).values))(
            _comlrl_sums(R, G)),                                                   # 'mean': the mean SINGLE reward
        lambda R, G, mode: (lambda S: S - (S.mean(1, keepdim=True) if mode == "mean"
                                           else S.max(1, keepdim=True).values))(_comlrl_sums(R, G) / G ** 2),  # sums / G^2
        lambda R, G, mode: (lambda S: S - (S.mean(1, keepdim=True) if mode == "mean"
                                           else S.max(0, keepdim=True).values))(_comlrl_sums(R, G)),   # 'max' over the agents
        lambda R, G, mode: (lambda S: S - (S.mean(0, keepdim=True) if mode == "mean"
                                           else S.max(0, keepdim=True).values))(_comlrl_sums(R, G)),   # both over the agents
        _comlrl_loo_max,                                                           # 'max' of the OTHER G - 1 sums
        # [24], [25], [26]: after [23], before the last six (tests/test_exercise_boundaries.py reads [-6] ... [-1])
        _comlrl_off_diagonal,                                                      # each sum without its aligned pair
        lambda R, G, mode: (lambda S: S - (S.mean(1, keepdim=True) if mode == "mean"
                                           else S.sort(1).values[:, -2:-1]))(_comlrl_sums(R, G)),   # second-best for 'max'
        lambda R, G, mode: torch.stack([group_advantages(s, mode) for s in _comlrl_sums(R, G)]).to(R.dtype),  # group_advantages, per agent
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
        lambda R: (lambda std, mean: (R - mean) / (std + 1e-4))(*torch.std_mean(R)),   # std_mean unpacked right
        # computed in float32, returned in R's dtype: the near-ties are exact in float32 too
        lambda R: (lambda F: ((F - F.mean()) / (F.std() + 1e-4)).to(R.dtype))(R.float()),
    ],
    "06.comlrl_credit": [
        _comlrl_credit_loop_dtype,
        # one mean over both agents' sums: the same number, since agent 1's row sums and agent 2's column sums both
        # total the whole grid (only 'max' needs each agent's own baseline)
        lambda R, G, mode: (lambda S: S - (S.mean() if mode == "mean" else S.max(1, keepdim=True).values))(
            torch.stack([R.view(G, G).sum(1), R.view(G, G).sum(0)])),
    ],
}
