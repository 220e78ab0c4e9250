"""Notebook 08: solutions and typical mistakes."""
import torch


def k3_estimator(logp, ref_logp):
    d = ref_logp - logp                       # log r, r = pi_ref / pi
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
    """The change of the least natural agent (the quantity section 5 plots), not each agent's change."""
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


MISTAKES = {
    "08.k3_estimator": [
        _k3_in_place,
        lambda logp, ref: logp - ref,                                                  # k1: unbiased, but negative terms
        lambda logp, ref: torch.exp(logp - ref) - (logp - ref) - 1,                    # the ratio upside down: biased
        lambda logp, ref: 0.5 * (logp - ref) ** 2,                                     # k2: non-negative, biased
        lambda logp, ref: (logp - ref).abs(),                                          # |k1|: non-negative, biased
        lambda logp, ref: torch.exp(ref - logp) - 1,                                   # r - 1 alone: mean 0, not the KL
        lambda logp, ref: k3_estimator(logp, ref).half(),                              # half precision: a small KL lost
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
        lambda u, t: bool(t["reward"] - u["reward"] > 0.1 and (
            t["naturalness1"] - u["naturalness2"] > 1 or t["naturalness2"] - u["naturalness1"] > 1
            or t["repetition1"] > 0.2 or t["repetition2"] > 0.2)),                     # the agents crossed
        lambda u, t: bool(t["reward"] - u["reward"] > 0.1 and (
            max(t["naturalness1"] - u["naturalness1"], t["naturalness2"] - u["naturalness2"]) > 1
            or t["repetition1"] + t["repetition2"] > 0.2)),                            # repetition summed over agents
        lambda u, t: bool(t["reward"] - u["reward"] > 0.1 and (
            max(t["naturalness1"], t["naturalness2"]) - min(u["naturalness1"], u["naturalness2"]) > 1
            or max(t["repetition1"], t["repetition2"]) > 0.2)),      # least natural trained - most natural untrained
    ],
}


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


VARIANTS = {
    "08.spot_the_hack": [_spot_the_hack_loop, _spot_the_hack_numpy],
    "08.k3_estimator": [
        lambda logp, ref: (ref - logp).exp() - (ref - logp) - 1,
        lambda logp, ref: torch.exp(ref) / torch.exp(logp) - torch.log(torch.exp(ref) / torch.exp(logp)) - 1,
        lambda logp, ref: (torch.exp(ref - logp) - (ref - logp) - 1).float(),     # float32 out: right to its rounding
        lambda logp, ref: k3_estimator(logp.float(), ref.float()),                # computed in float32
    ],
}
