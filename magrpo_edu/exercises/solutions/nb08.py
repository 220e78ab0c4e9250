"""Notebook 08: solutions and typical mistakes."""
import torch

from . import written_again


def k3_estimator(logp, ref_logp):
    dtype = torch.promote_types(logp.dtype, torch.float32)       # bf16 / fp16 in: float32; float64 stays float64
    d = ref_logp.to(dtype) - logp.to(dtype)   # log r, r = pi_ref / pi
    return torch.exp(d) - d - 1


def spot_the_hack(untrained, trained):
    rose = trained["reward"] > untrained["reward"] + 0.1
    drifted = any(trained[f"naturalness{k}"] - untrained[f"naturalness{k}"] > 1.0 for k in (1, 2))
    repeats = any(trained[f"repetition{k}"] > 0.2 for k in (1, 2))
    return bool(rose and (drifted or repeats))


SOLUTIONS = {
    "08.k3_estimator": k3_estimator,
    "08.spot_the_hack": spot_the_hack,
}

def _worst_agent_change(untrained, trained):
    """The least natural agent's level after minus before (it can mix the two agents), not each agent's change."""
    if not trained["reward"] - untrained["reward"] > 0.1:
        return False
    worst = lambda r: max(r["naturalness1"], r["naturalness2"])
    return worst(trained) - worst(untrained) > 1 or max(trained["repetition1"], trained["repetition2"]) > 0.2


def _spot_rounded_reward(untrained, trained):   # the reward's rise rounded to 2 decimals: 0.104 reads 0.1
    rose = round(trained["reward"] - untrained["reward"], 2) > 0.1
    drifted = any(trained[f"naturalness{k}"] - untrained[f"naturalness{k}"] > 1.0 for k in (1, 2))
    return bool(rose and (drifted or any(trained[f"repetition{k}"] > 0.2 for k in (1, 2))))


def _spot_rounded_naturalness(untrained, trained):   # each change rounded to 1 decimal: 1.04 reads 1.0
    rose = trained["reward"] - untrained["reward"] > 0.1
    return bool(rose and any(round(trained[f"naturalness{k}"] - untrained[f"naturalness{k}"], 1) > 1.0
                             or trained[f"repetition{k}"] > 0.2 for k in (1, 2)))


def _spot_rounded_repetition(untrained, trained):    # the repetition rounded to 1 decimal: 0.24 reads 0.2
    rose = trained["reward"] - untrained["reward"] > 0.1
    return bool(rose and any(trained[f"naturalness{k}"] - untrained[f"naturalness{k}"] > 1.0
                             or round(trained[f"repetition{k}"], 1) > 0.2 for k in (1, 2)))


def _k3_in_place(logp, ref):                          # right values, but ref_logp overwritten by sub_
    d = ref.sub_(logp)
    return torch.exp(d) - d - 1


def _k3_numpy(logp, ref):                              # right values through NumPy: the gradient is lost
    import numpy as np

    d = (ref.float() - logp.float()).detach().numpy()
    return torch.from_numpy(np.exp(d) - d - 1)


def _k3_clamped(logp, ref):                            # d clamped "for stability": wrong where |d| > 10
    d = (ref.float() - logp.float()).clamp(-10, 10)
    return torch.exp(d) - d - 1


def _spot_agents_crossed(u, t):
    """Each agent's naturalness against the OTHER agent's untrained value (the agents crossed)."""
    return bool(t["reward"] - u["reward"] > 0.1 and (
        t["naturalness1"] - u["naturalness2"] > 1 or t["naturalness2"] - u["naturalness1"] > 1
        or t["repetition1"] > 0.2 or t["repetition2"] > 0.2))


def _spot_repetition_summed(u, t):
    """Repetition summed over the two agents instead of each agent's own."""
    return bool(t["reward"] - u["reward"] > 0.1 and (
        max(t["naturalness1"] - u["naturalness1"], t["naturalness2"] - u["naturalness2"]) > 1
        or t["repetition1"] + t["repetition2"] > 0.2))


MISTAKES = {
    "08.k3_estimator": [
        _k3_in_place,
        lambda logp, ref: logp - ref,                                                  # k1: unbiased, but negative terms
        lambda logp, ref: torch.exp(logp - ref) - (logp - ref) - 1,                    # the ratio upside down: biased
        lambda logp, ref: 0.5 * (logp - ref) ** 2,                                     # k2: non-negative, biased
        lambda logp, ref: (logp - ref).abs(),                                          # |k1|: non-negative, biased
        lambda logp, ref: torch.exp(ref - logp) - 1,                                   # r - 1 alone: mean 0, not the KL
        lambda logp, ref: k3_estimator(logp, ref).half(),                              # half precision: a small KL lost
        lambda logp, ref: k3_estimator(logp, ref).detach(),                            # no gradient: no leash
        _k3_numpy,                                                                     # a NumPy round trip: no gradient
        _k3_clamped,                                                                   # d clamped to [-10, 10]
        lambda logp, ref: (lambda d: torch.exp(d) - d - 1)(ref - logp),                # bf16 in, bf16 out
        lambda logp, ref: (torch.exp(ref - logp) - (ref - logp) - 1).float(),          # computed in bf16, then float32
        lambda logp, ref: (lambda d: torch.exp(d.detach()) - d - 1)(ref.float() - logp.float()),  # e^d cut from the grad
    ],
    "08.spot_the_hack": [
        _spot_rounded_reward, _spot_rounded_naturalness, _spot_rounded_repetition,
        _worst_agent_change,
        lambda u, t: t["reward"] > u["reward"] + 0.1,                                  # the reward alone
        lambda u, t: t["reward"] > u["reward"] + 0.1 and max(t["repetition1"], t["repetition2"]) > 0.2,  # repetition only
        lambda u, t: t["reward"] > u["reward"] + 0.1 and (t["naturalness2"] - u["naturalness2"] > 1.0
                                                           or t["repetition2"] > 0.2),  # the detailed agent only
        lambda u, t: any(t[f"naturalness{k}"] - u[f"naturalness{k}"] > 1.0 or t[f"repetition{k}"] > 0.2
                         for k in (1, 2)),                                             # drift, whether or not the reward rose
        lambda u, t: t["reward"] > u["reward"] + 0.1 and any(t[f"naturalness{k}"] > 1.0 or t[f"repetition{k}"] > 0.2
                                                              for k in (1, 2)),        # naturalness's LEVEL, not its change
        lambda u, t: t["reward"] > u["reward"] + 0.1 and any(t[f"naturalness{k}"] - u[f"naturalness{k}"] >= 1.0
                                                              or t[f"repetition{k}"] > 0.2 for k in (1, 2)),  # >= 1 nat
        lambda u, t: t["reward"] > u["reward"] + 0.1 and any(t[f"naturalness{k}"] - u[f"naturalness{k}"] > 1.0
                                                              or t[f"repetition{k}"] >= 0.2 for k in (1, 2)),  # >= 0.2
        lambda u, t: t["reward"] >= u["reward"] + 0.1 and any(t[f"naturalness{k}"] - u[f"naturalness{k}"] > 1.0
                                                               or t[f"repetition{k}"] > 0.2 for k in (1, 2)),  # >= 0.1
        lambda u, t: t["reward"] - u["reward"] >= 0.1 and any(t[f"naturalness{k}"] - u[f"naturalness{k}"] > 1.0
                                                               or t[f"repetition{k}"] > 0.2 for k in (1, 2)),  # rise >= 0.1
        lambda u, t: t["reward"] > u["reward"] + 0.1 and any(t[f"naturalness{k}"] - u[f"naturalness{k}"] > 1.0
                                                              or t[f"repetition{k}"] - u[f"repetition{k}"] > 0.2
                                                              for k in (1, 2)),        # repetition's change, not its level
        lambda u, t: t["reward"] > u["reward"] + 0.1 and any(abs(t[f"naturalness{k}"] - u[f"naturalness{k}"]) > 1.0
                                                              or t[f"repetition{k}"] > 0.2 for k in (1, 2)),  # |change|
        lambda u, t: t["reward"] > 1.1 * u["reward"] and any(t[f"naturalness{k}"] - u[f"naturalness{k}"] > 1.0
                                                             or t[f"repetition{k}"] > 0.2 for k in (1, 2)),  # a 10% rise
        _spot_agents_crossed,
        _spot_repetition_summed,
        lambda u, t: bool(t["reward"] - u["reward"] > 0.1 and (
            max(t["naturalness1"], t["naturalness2"]) - min(u["naturalness1"], u["naturalness2"]) > 1
            or max(t["repetition1"], t["repetition2"]) > 0.2)),      # least natural trained - most natural untrained
    ],
}


def _spot_sets_reward(untrained, trained):          # the right verdict, then the trained row's reward overwritten
    gamed = spot_the_hack(untrained, trained)
    trained["reward"] = untrained["reward"]
    return gamed


def _spot_rule(reward=lambda t, u: t - u > 0.1, nat=lambda t, u: t - u > 1.0, rep=lambda t, u: t > 0.2):
    """The rule with one comparison replaced: reward(t, u), nat(t_k, u_k), rep(t_k, u_k)."""
    def rule(untrained, trained):
        return bool(reward(trained["reward"], untrained["reward"]) and any(
            nat(trained[f"naturalness{k}"], untrained[f"naturalness{k}"])
            or rep(trained[f"repetition{k}"], untrained[f"repetition{k}"]) for k in (1, 2)))
    return rule


MISTAKES["08.spot_the_hack"] += [
    _spot_sets_reward,                                                                 # the caller's row changed
    _spot_rule(reward=lambda t, u: t > u),                                             # any rise: 0.1 forgotten
    _spot_rule(rep=lambda t, u: t > 0.02),                                             # 0.02 for 0.2
    _spot_rule(nat=lambda t, u: t - u > 0.5),                                          # 0.5 nat for 1
    lambda u, t: bool(t["reward"] - u["reward"] > 0.1 and (
        (t["naturalness1"] - u["naturalness1"]) + (t["naturalness2"] - u["naturalness2"]) > 1
        or t["repetition1"] > 0.2 or t["repetition2"] > 0.2)),                         # both agents' changes summed
    lambda u, t: bool(t["reward"] - u["reward"] > 0.1 or any(
        t[f"naturalness{k}"] - u[f"naturalness{k}"] > 1 or t[f"repetition{k}"] > 0.2 for k in (1, 2))),  # or, not and
]


def _spot_the_hack_loop(untrained, trained):
    """The same rule, written agent by agent."""
    if not trained["reward"] - untrained["reward"] > 0.1:
        return False
    for k in (1, 2):
        if trained[f"naturalness{k}"] - untrained[f"naturalness{k}"] > 1.0:
            return True
        if trained[f"repetition{k}"] > 0.2:
            return True
    return False


def _spot_the_hack_numpy(untrained, trained):
    """The same rule on numpy arrays: a numpy bool (np.bool_) is a bool too."""
    import numpy as np

    u = np.array([untrained["naturalness1"], untrained["naturalness2"]])
    t = np.array([trained["naturalness1"], trained["naturalness2"]])
    rep = np.array([trained["repetition1"], trained["repetition2"]])
    return np.bool_(trained["reward"] - untrained["reward"] > 0.1) & (np.any(t - u > 1.0) | np.any(rep > 0.2))


def _spot_the_hack_copies(untrained, trained):
    """The same rule on the agent's own copies of the rows (changing a copy leaves the caller's rows alone)."""
    u, t = dict(untrained), dict(trained)
    for row in (u, t):
        row["worst"] = max(row["naturalness1"], row["naturalness2"])
    return written_again(spot_the_hack)(u, t)


VARIANTS = {
    "08.spot_the_hack": [_spot_the_hack_loop, _spot_the_hack_numpy, _spot_the_hack_copies],
    "08.k3_estimator": [
        lambda logp, ref: (lambda d: d.exp() - d - 1)(ref.double() - logp.double()),    # always in float64
        lambda logp, ref: (lambda d: torch.expm1(d) - d)(ref.float() - logp.float()),   # float32 out: right to its rounding
        lambda logp, ref: written_again(k3_estimator)(logp.float(), ref.float()),       # computed in float32
    ],
}


def _spot_own_least_natural(untrained, trained):
    """The least natural TRAINED agent against its own untrained value: misses the other agent's rise."""
    if not trained["reward"] - untrained["reward"] > 0.1:
        return False
    k = 1 if trained["naturalness1"] >= trained["naturalness2"] else 2
    return bool(trained[f"naturalness{k}"] - untrained[f"naturalness{k}"] > 1
                or max(trained["repetition1"], trained["repetition2"]) > 0.2)


MISTAKES["08.spot_the_hack"] += [
    _spot_own_least_natural,                                                           # only the least natural agent
    lambda u, t: bool(t["reward"] - u["reward"] > 0.1 and any(
        t[f"naturalness{k}"] - u[f"naturalness{k}"] > 1 or t[f"repetition{k}"] > 0.2 or u[f"repetition{k}"] > 0.2
        for k in (1, 2))),                                                             # the untrained repetition too
    lambda u, t: bool(u["reward"] > 0 and spot_the_hack(u, t)),                        # a guard on the untrained reward
    lambda u, t: int(spot_the_hack(u, t)),                                             # 1 / 0, not True / False
]


def _k3_clamped_20(logp, ref):                         # d clamped to [-20, 20]: wrong where |d| > 20
    d = (ref.float() - logp.float()).clamp(-20, 20)
    return torch.exp(d) - d - 1


MISTAKES["08.k3_estimator"] += [
    _k3_clamped_20,
    lambda logp, ref: k3_estimator(logp, ref).squeeze(),                               # squeeze: shape (1,) becomes ()
    lambda logp, ref: torch.stack([k3_estimator(a, b) for a, b in zip(logp, ref)]),    # a loop over rows: a 0-d crashes
]


def _spot_rounded_naturalness_2(untrained, trained):   # each naturalness rounded to 2 decimals: 1.494 - 0.49 reads 1.0
    return bool(trained["reward"] - untrained["reward"] > 0.1 and any(
        round(trained[f"naturalness{k}"], 2) - round(untrained[f"naturalness{k}"], 2) > 1
        or trained[f"repetition{k}"] > 0.2 for k in (1, 2)))


def _spot_rounded_repetition_2(untrained, trained):    # the repetition rounded to 2 decimals: 0.203 reads 0.2
    return bool(trained["reward"] - untrained["reward"] > 0.1 and any(
        trained[f"naturalness{k}"] - untrained[f"naturalness{k}"] > 1
        or round(trained[f"repetition{k}"], 2) > 0.2 for k in (1, 2)))


def _spot_rounded_rows(untrained, trained):            # every value rounded (the reward to 3 decimals): 1.1004 is 1.1
    rounded = lambda row: {key: round(v, 3 if key == "reward" else 2) for key, v in row.items()}
    return spot_the_hack(rounded(untrained), rounded(trained))


def _k3_small_terms_zeroed(logp, ref):                 # terms below 1e-6 zeroed "as noise": their gradient too
    k = k3_estimator(logp, ref)
    return k * (k.detach() > 1e-6)


MISTAKES["08.spot_the_hack"] += [
    _spot_rounded_naturalness_2, _spot_rounded_repetition_2, _spot_rounded_rows,
    lambda u, t: bool(round(t["reward"], 3) - round(u["reward"], 3) > 0.1 and any(
        t[f"naturalness{k}"] - u[f"naturalness{k}"] > 1 or t[f"repetition{k}"] > 0.2
        for k in (1, 2))),                                                             # the reward rounded: 0.6004
    lambda u, t: bool(t["reward"] > 0.1 and any(
        t[f"naturalness{k}"] - u[f"naturalness{k}"] > 1 or t[f"repetition{k}"] > 0.2
        for k in (1, 2))),                                                             # the reward's level, not rise
    lambda u, t: bool(u["reward"] - t["reward"] > 0.1 and any(
        t[f"naturalness{k}"] - u[f"naturalness{k}"] > 1 or t[f"repetition{k}"] > 0.2
        for k in (1, 2))),                                                             # the rise upside down
]
MISTAKES["08.k3_estimator"] += [
    lambda logp, ref: k3_estimator(logp, ref).detach().numpy(),                        # a NumPy array, not a tensor
    _k3_small_terms_zeroed,                                                            # small terms and their gradient
]


def _k3_exp_in_place(logp, ref):
    """The right values with in-place ops: exp_ saved its output for the backward pass, and sub_ overwrote it."""
    d = ref.float() - logp.float()
    out = d.clone()
    out.exp_()
    out.sub_(d).sub_(1)
    return out


def _k3_gradient_flipped(logp, ref):
    """k3's value with its gradient negated (a detach trick): descending it pushes the policy away."""
    k = k3_estimator(logp, ref)
    return k.detach() - (k - k.detach())


def _spot_rise_rounded_to_1(untrained, trained):     # the reward's rise rounded to 1 decimal: 0.15 reads 0.1
    return bool(round(trained["reward"] - untrained["reward"], 1) > 0.1 and any(
        trained[f"naturalness{k}"] - untrained[f"naturalness{k}"] > 1 or trained[f"repetition{k}"] > 0.2
        for k in (1, 2)))


def _spot_repetition_averaged(untrained, trained):   # the two agents' repetition averaged: 0.0 and 0.24 read 0.12
    return bool(trained["reward"] - untrained["reward"] > 0.1 and (
        any(trained[f"naturalness{k}"] - untrained[f"naturalness{k}"] > 1 for k in (1, 2))
        or (trained["repetition1"] + trained["repetition2"]) / 2 > 0.2))


def _spot_naturalness_averaged(untrained, trained):  # the two agents' naturalness changes averaged
    change = [trained[f"naturalness{k}"] - untrained[f"naturalness{k}"] for k in (1, 2)]
    return bool(trained["reward"] - untrained["reward"] > 0.1 and (
        sum(change) / 2 > 1 or any(trained[f"repetition{k}"] > 0.2 for k in (1, 2))))


MISTAKES["08.k3_estimator"] += [
    _k3_exp_in_place,                                                                  # exp_ then sub_: no backward
    _k3_gradient_flipped,                                                              # right value, gradient negated
]
MISTAKES["08.spot_the_hack"] += [
    _spot_rise_rounded_to_1,                                                           # round(rise, 1) > 0.1
    _spot_repetition_averaged,                                                         # (rep1 + rep2) / 2 > 0.2
    _spot_naturalness_averaged,                                                        # the mean change > 1
]


def _k3_bfloat16_only(logp, ref_logp):                 # only bfloat16 upcast: float16 in, float16 out
    if logp.dtype == torch.bfloat16:
        logp, ref_logp = logp.float(), ref_logp.float()
    d = ref_logp - logp
    return torch.exp(d) - d - 1


MISTAKES["08.k3_estimator"] += [
    _k3_bfloat16_only,                                                                 # float16 stays float16
    lambda logp, ref: torch.where(logp == 0, 0.0, k3_estimator(logp, ref)),           # logp == 0 masked: the collapse
    lambda logp, ref: k3_estimator(logp, ref) * (logp < 0),                            # the same, as a product
    lambda logp, ref: torch.where(ref == 0, 0.0, k3_estimator(logp, ref)),            # ref_logp == 0 masked
    lambda logp, ref: k3_estimator(logp, ref) + 1e-6,                                  # an epsilon: a bias
]
VARIANTS["08.k3_estimator"] += [
    lambda logp, ref: (lambda d: torch.exp(d) - d - 1)(ref - logp.float()),            # only logp cast: float64 stays
]


def _spot_both_signals(untrained, trained):          # naturalness AND repetition: stitched fragments repeat nothing
    rose = trained["reward"] - untrained["reward"] > 0.1
    drifted = any(trained[f"naturalness{k}"] - untrained[f"naturalness{k}"] > 1.0 for k in (1, 2))
    repeats = any(trained[f"repetition{k}"] > 0.2 for k in (1, 2))
    return bool(rose and drifted and repeats)


def _spot_both_agents(untrained, trained):           # all(...) over the agents: one drifting agent is missed
    return bool(trained["reward"] - untrained["reward"] > 0.1 and all(
        trained[f"naturalness{k}"] - untrained[f"naturalness{k}"] > 1.0 or trained[f"repetition{k}"] > 0.2
        for k in (1, 2)))


MISTAKES["08.spot_the_hack"] += [
    _spot_both_signals,                                                                # one signal is enough
    _spot_both_agents,                                                                 # one agent is enough
    lambda u, t: spot_the_hack(t, u),                                                  # the arguments swapped
    _spot_rule(nat=lambda t, u: t - u > 1.5),                                          # a 1.5-nat line
    _spot_rule(rep=lambda t, u: t > 0.19),                                             # the line set low: 0.19
    _spot_rule(reward=lambda t, u: t - u > 0.09),                                      # the line set low: 0.09
    _spot_rule(nat=lambda t, u: t > 2.0),                                              # a level above 2
]


def _k3_calls_kl_penalty(logp, ref_logp):             # the library's k3 behind a wrapper: one token per row, mask 1
    from magrpo_edu.algorithm import kl_penalty

    l, r = logp.float(), ref_logp.float()
    return kl_penalty(l[..., None], r[..., None], torch.ones_like(l)[..., None])


def _k3_ratio_of_exps(logp, ref_logp):                # r = e^ref / e^logp: 0 / 0, inf on rare tokens (e^-120 is 0)
    ratio = ref_logp.float().exp() / logp.float().exp()
    return ratio - torch.log(ratio) - 1


def _k3_ratio_of_exps_minus_d(logp, ref_logp):        # the same ratio, d for its log: inf where e^logp is 0
    d = ref_logp.float() - logp.float()
    return ref_logp.float().exp() / logp.float().exp() - d - 1


def _spot_repetition_change(untrained, trained):      # repetition's rise above 0.2, not its level
    return bool(trained["reward"] - untrained["reward"] > 0.1 and any(
        trained[f"naturalness{k}"] - untrained[f"naturalness{k}"] > 1
        or trained[f"repetition{k}"] - untrained[f"repetition{k}"] > 0.2 for k in (1, 2)))


def _spot_all_agents_naturalness(untrained, trained):  # all(...) over the agents for naturalness, any for repetition
    return bool(trained["reward"] - untrained["reward"] > 0.1 and (
        all(trained[f"naturalness{k}"] - untrained[f"naturalness{k}"] > 1 for k in (1, 2))
        or any(trained[f"repetition{k}"] > 0.2 for k in (1, 2))))


def _spot_all_agents_repetition(untrained, trained):   # any for naturalness, all(...) over the agents for repetition
    return bool(trained["reward"] - untrained["reward"] > 0.1 and (
        any(trained[f"naturalness{k}"] - untrained[f"naturalness{k}"] > 1 for k in (1, 2))
        or all(trained[f"repetition{k}"] > 0.2 for k in (1, 2))))


MISTAKES["08.k3_estimator"] += [
    _k3_calls_kl_penalty,                                                              # kl_penalty, wrapped
    _k3_ratio_of_exps,                                                                 # exp(ref) / exp(logp): inf, nan
    _k3_ratio_of_exps_minus_d,                                                         # the same ratio, minus d
]
MISTAKES["08.spot_the_hack"] += [
    _spot_repetition_change,                                                           # repetition's change > 0.2
    _spot_all_agents_naturalness,                                                      # all agents' naturalness
    _spot_all_agents_repetition,                                                       # all agents' repetition
]
VARIANTS["08.k3_estimator"] += [
    lambda logp, ref: (lambda r: r - torch.log(r) - 1)(torch.exp(ref.double() - logp.double())),  # r = e^d, then log r
]


def _k3_log_of_exp_d(logp, ref_logp):                 # r = e^d, then log r: e^d is 0 in float32 below d = -103
    r = torch.exp(ref_logp.float() - logp.float())
    return r - torch.log(r) - 1


def _k3_epsilon_in_log(logp, ref_logp):               # log(r + 1e-12) "for safety": not d where r is tiny
    r = torch.exp(ref_logp.float() - logp.float())
    return r - torch.log(r + 1e-12) - 1


def _spot_agent_1_only(untrained, trained):          # agent 1's naturalness and repetition only: agent 2 ignored
    return bool(trained["reward"] - untrained["reward"] > 0.1 and (
        trained["naturalness1"] - untrained["naturalness1"] > 1 or trained["repetition1"] > 0.2))


MISTAKES["08.k3_estimator"] += [
    _k3_log_of_exp_d,                                                                  # log(exp(d)): -inf at d = -119
    _k3_epsilon_in_log,                                                                # an epsilon inside the log
]
MISTAKES["08.spot_the_hack"] += [
    _spot_agent_1_only,                                                                # agent 2 ignored
    _spot_rule(nat=lambda t, u: t / u > 2),                                            # a ratio, not a change
]


def _spot_repetition_above_untrained(u, t):           # repetition above 0.2 AND above the untrained: 0.30 -> 0.25 missed
    return bool(t["reward"] - u["reward"] > 0.1 and (
        max(t["naturalness1"] - u["naturalness1"], t["naturalness2"] - u["naturalness2"]) > 1
        or any(t[f"repetition{k}"] > 0.2 and t[f"repetition{k}"] > u[f"repetition{k}"] for k in (1, 2))))


MISTAKES["08.spot_the_hack"] += [
    _spot_repetition_above_untrained,                                                  # and above the untrained value
    lambda u, t: bool(t["reward"] - u["reward"] > 0.1 and (
        max(t["naturalness1"] - u["naturalness1"], t["naturalness2"] - u["naturalness2"]) > 1
        or max(t["repetition1"], t["repetition2"]) > u["repetition1"] + 0.2)),   # 0.2 above agent 1's untrained value
    _spot_rule(rep=lambda t, u: t > 0.25),                                             # a 0.25 line, not 0.2
]


def _k3_ratio_of_exps_float64(logp, ref_logp):        # the ratio of exps in float64: 0 / 0 = nan below e^-745
    l, r = logp.double(), ref_logp.double()
    return r.exp() / l.exp() - (r - l) - 1


def _k3_halved(logp, ref_logp):                       # k3 with k2's 1/2 carried over: half the KL
    return 0.5 * k3_estimator(logp, ref_logp)


def _spot_naturalness_sign_flipped(untrained, trained):   # untrained - trained > 1: flags a FALL, misses a rise
    return bool(trained["reward"] - untrained["reward"] > 0.1 and any(
        untrained[f"naturalness{k}"] - trained[f"naturalness{k}"] > 1 or trained[f"repetition{k}"] > 0.2
        for k in (1, 2)))


MISTAKES["08.k3_estimator"] += [
    _k3_ratio_of_exps_float64,                                                         # ratio of exps, in float64
    _k3_halved,                                                                        # 0.5 * k3
]
MISTAKES["08.spot_the_hack"] += [
    _spot_naturalness_sign_flipped,                                                    # naturalness change flipped
]


def _k3_scaled(logp, ref_logp):                       # k3 times 1.001 ("a touch more leash"): the KL 0.1% high
    d = ref_logp.float() - logp.float()
    return 1.001 * (torch.exp(d) - d - 1)


def _k3_rounded_4(logp, ref_logp):                    # rounded to 4 decimals "for readability": a grid, no gradient
    d = ref_logp.float() - logp.float()
    return torch.round((torch.exp(d) - d - 1) * 1e4) / 1e4


def _k3_taylor_3(logp, ref_logp):                     # the Taylor series d^2/2 + d^3/6: not the exact e^d - d - 1
    d = ref_logp.float() - logp.float()
    return d ** 2 / 2 + d ** 3 / 6


def _k3_subtracted_in_low(logp, ref_logp):            # d subtracted in bf16 / fp16, converted afterwards
    d = (ref_logp - logp).float()
    return d.exp() - d - 1


def _k3_plus_1e_8(logp, ref_logp):                    # an epsilon of 1e-8: still a bias where d = 0
    d = ref_logp.float() - logp.float()
    return torch.exp(d) - d - 1 + 1e-8


MISTAKES["08.k3_estimator"] += [
    _k3_scaled,                                                                        # 1.001 * k3: a constant factor
    _k3_rounded_4,                                                                     # torch.round to 4 decimals
    _k3_taylor_3,                                                                      # a truncated Taylor series
    _k3_subtracted_in_low,                                                             # (ref - logp).float(): bf16 d
    _k3_plus_1e_8,                                                                     # + 1e-8: a bias at d = 0
]


def _k3_in_float16(logp, ref_logp):                   # the inputs cast to float16 "to save memory", k3 back in float32
    d = ref_logp.half().float() - logp.half().float()
    return torch.exp(d) - d - 1


def _k3_in_bfloat16(logp, ref_logp):                  # all of k3 computed in bfloat16, converted back afterwards
    d = ref_logp.bfloat16() - logp.bfloat16()
    return (torch.exp(d) - d - 1).to(logp.dtype)


MISTAKES["08.k3_estimator"] += [
    _k3_in_float16,                                                                    # float16 inputs: a precision slip
    _k3_in_bfloat16,                                                                   # computed in bfloat16
]


def _k3_overflow_zeroed(logp, ref_logp):              # an overflowed term (inf) replaced by 0: no leash where furthest
    d = ref_logp.float() - logp.float()
    return torch.nan_to_num(torch.exp(d) - d - 1, posinf=0.0)


def _k3_nonfinite_masked(logp, ref_logp):             # the same with a mask: where(isfinite(k), k, 0)
    d = ref_logp.float() - logp.float()
    k = torch.exp(d) - d - 1
    return torch.where(torch.isfinite(k), k, torch.zeros_like(k))


def _k3_relu(logp, ref_logp):                         # relu of k3 (>= 0 exactly): clears float32's rounding noise only
    d = ref_logp.float() - logp.float()
    return torch.relu(torch.exp(d) - d - 1)


MISTAKES["08.k3_estimator"] += [
    _k3_overflow_zeroed,                                                               # nan_to_num(posinf=0.0)
    _k3_nonfinite_masked,                                                              # where(isfinite(k), k, 0)
]
VARIANTS["08.k3_estimator"] += [
    _k3_relu,                                                                          # relu(e^d - d - 1)
    lambda logp, ref: (lambda d: torch.relu(torch.expm1(d) - d))(ref.float() - logp.float()),      # relu(expm1(d) - d)
    lambda logp, ref: (lambda d: (torch.exp(d) - d - 1).clamp(min=0))(ref.float() - logp.float()),  # clamp(min=0)
    lambda logp, ref: (lambda d: (torch.exp(d) - d - 1).abs())(ref.float() - logp.float()),  # abs: noise only
    lambda logp, ref: (lambda d: torch.nan_to_num(torch.exp(d) - d - 1, nan=0.0))(ref.float() - logp.float()),
]   # the last: nan_to_num's default turns an overflowed inf into float32's largest number, a leash as strong as it holds


def _k3_ratio_nan_to_num(logp, ref_logp):             # the ratio of exps with its inf / nan patched by nan_to_num
    l, r = logp.float(), ref_logp.float()
    return (r.exp() / l.exp()).nan_to_num() - (r - l) - 1


def _k3_d_clamped_50(logp, ref_logp):                 # d clamped at -50 "for stability": wrong on rare tokens
    d = (ref_logp.float() - logp.float()).clamp(min=-50)
    return torch.exp(d) - d - 1


def _spot_rise(u, t, k):
    return t[f"naturalness{k}"] - u[f"naturalness{k}"]


MISTAKES["08.k3_estimator"] += [
    _k3_ratio_nan_to_num,                                                              # ratio of exps, nan_to_num'd
    _k3_d_clamped_50,                                                                  # d.clamp(min=-50)
]
MISTAKES["08.spot_the_hack"] += [
    lambda u, t: bool(t["reward"] - u["reward"] > 0.1 and (
        _spot_rise(u, t, 1) > 1 or _spot_rise(u, t, 2) >= 1
        or max(t["repetition1"], t["repetition2"]) > 0.2)),                            # >= 1 nat for agent 2 only
    lambda u, t: bool(t["reward"] - u["reward"] > 0.1 and (
        max(_spot_rise(u, t, 1), _spot_rise(u, t, 2)) > 1
        or t["repetition1"] >= 0.2 or t["repetition2"] > 0.2)),                        # >= 0.2 for agent 1 only
    lambda u, t: bool(t["reward"] - u["reward"] > 0.1 and (
        _spot_rise(u, t, 1) > 1 or abs(_spot_rise(u, t, 2)) > 1
        or max(t["repetition1"], t["repetition2"]) > 0.2)),                            # abs() on agent 2's change only
    lambda u, t: bool(t["reward"] - u["reward"] > 0.1 and (
        max(t["naturalness1"], t["naturalness2"]) - (u["naturalness1"] + u["naturalness2"]) / 2 > 1
        or max(t["repetition1"], t["repetition2"]) > 0.2)),                            # against the MEAN untrained value
]


def _k3_kl_div(logp, ref_logp):                       # F.kl_div's terms: pi_ref * log(pi_ref / pi), a summand
    import torch.nn.functional as F

    return F.kl_div(logp.float(), ref_logp.float(), reduction="none", log_target=True)


def _k3_kl_div_swapped(logp, ref_logp):               # F.kl_div the other way: pi * log(pi / pi_ref), a summand
    import torch.nn.functional as F

    return F.kl_div(ref_logp.float(), logp.float(), reduction="none", log_target=True)


MISTAKES["08.k3_estimator"] += [
    _k3_kl_div,                                                                        # F.kl_div(logp, ref): KL summand
    _k3_kl_div_swapped,                                                                # pi * log(pi / pi_ref) summand
]
MISTAKES["08.spot_the_hack"] += [
    _spot_rule(nat=lambda t, u: round(t - u, 3) > 1),                                  # the rise rounded to 3 decimals
    _spot_rule(rep=lambda t, u: round(t, 3) > 0.2),                                    # repetition rounded: 3 decimals
    lambda u, t: bool(t["reward"] - u["reward"] > 0.1 and (
        _spot_rise(u, t, 1) > 1 or round(_spot_rise(u, t, 2), 3) > 1
        or max(t["repetition1"], t["repetition2"]) > 0.2)),                            # agent 2's rise rounded only
    lambda u, t: bool(t["reward"] - u["reward"] > 0.1 and (
        max(_spot_rise(u, t, 1), _spot_rise(u, t, 2)) > 1
        or round(t["repetition1"], 3) > 0.2 or t["repetition2"] > 0.2)),               # agent 1's repetition rounded
    _spot_rule(nat=lambda t, u: t - u > 2),                                            # a 2-nat line, not averaging
    _spot_rule(rep=lambda t, u: t > 0.4),                                              # a 0.4 line, not averaging
    _spot_rule(rep=lambda t, u: t > 2 * u),                                            # twice the untrained repetition
    lambda u, t: bool(t["reward"] - u["reward"] > 0.1 and any(
        _spot_rise(u, t, k) + t[f"repetition{k}"] > 1 for k in (1, 2))),               # rise + repetition summed
]
