"""Notebook 02: reference solutions and typical mistakes."""
import itertools

import numpy as np
import torch

from magrpo_edu.algorithm import credit_samples, group_advantages, joint_actions, policy_loss


def joint_table(num_agents, G, mode):
    if mode == "aligned":
        return [(g,) * num_agents for g in range(G)]
    return list(itertools.product(range(G), repeat=num_agents))


def cross_credit(r, agent):
    A = r - r.mean()                       # one baseline over all G*G joint actions
    return A.mean(dim=1) if agent == 0 else A.mean(dim=0)


def shared_losses(logps, rewards):
    A = rewards - rewards.mean()           # ONE advantage vector for the whole team
    return [-(A * lp).mean() for lp in logps]


def _no_baseline(logps, rewards):             # the rewards themselves as the weights: REINFORCE, no baseline
    return [-(rewards * lp).mean() for lp in logps]


def _centred_in_place(logps, rewards):        # right losses, but the caller's rewards centred in place
    rewards -= rewards.mean()
    return [-(rewards * lp).mean() for lp in logps]


def _joint_logprob(logps, rewards):           # the joint log-prob sum_i log pi_i in every agent's loss
    A = rewards - rewards.mean()
    return [-(A * sum(logps)).mean() for _ in logps]


def _cross_credit_loop_list(r, agent):        # right values, but a Python list of 0-d tensors: no mask
    G = r.shape[0]
    mean = r.mean()
    if agent == 0:
        return [sum(r[k, b] - mean for b in range(G)) / G for k in range(G)]
    return [sum(r[a, k] - mean for a in range(G)) / G for k in range(G)]


def _joint_actions_no_return(num_agents, G, mode):   # the table built, but no `return`: None
    [(g,) * num_agents for g in range(G)] if mode == "aligned" else list(itertools.product(range(G), repeat=num_agents))


def _cross_credit_no_return(r, agent):         # the credit computed, but no `return`: None
    (r - r.mean()).mean(dim=1 - agent)


def _shared_losses_no_return(logps, rewards):  # the losses computed, but no `return`: None
    A = rewards - rewards.mean()
    [-(A * lp).mean() for lp in logps]


def _cross_credit_by_hand(r, agent):          # the by-hand G = 2 cell copied: right for G = 2 only
    mean = (r[0, 0] + r[0, 1] + r[1, 0] + r[1, 1]) / 4
    if agent == 0:
        return torch.stack([((r[0, 0] - mean) + (r[0, 1] - mean)) / 2, ((r[1, 0] - mean) + (r[1, 1] - mean)) / 2])
    return torch.stack([((r[0, 0] - mean) + (r[1, 0] - mean)) / 2, ((r[0, 1] - mean) + (r[1, 1] - mean)) / 2])


def _shared_losses_two_agents(logps, rewards):  # two agents hard-coded: logps[0] and logps[1], whatever len(logps)
    A = rewards - rewards.mean()
    return [-(A * logps[0]).mean(), -(A * logps[1]).mean()]


def _losses_share_a_graph(logps, rewards):    # right values, but split from one tensor: one graph for all the agents
    A = rewards - rewards.mean()
    return list(-(A * torch.stack(logps)).mean(dim=1))


def _cross_one_order(num_agents, G, mode):    # nested loops, the inner from the outer index on: range(i, G)
    if mode == "aligned":
        return [(g,) * num_agents for g in range(G)]
    rows = [(g,) for g in range(G)]
    for _ in range(num_agents - 1):
        rows = [row + (j,) for row in rows for j in range(row[-1], G)]
    return rows


def _cross_one_order_distinct(num_agents, G, mode):  # the same with range(i + 1, G): one order, never (g, g)
    if mode == "aligned":
        return [(g,) * num_agents for g in range(G)]
    rows = [(g,) for g in range(G)]
    for _ in range(num_agents - 1):
        rows = [row + (j,) for row in rows for j in range(row[-1] + 1, G)]
    return rows


def _ratio_form(logps, rewards):              # TRL's on-policy ratio exp(lp - lp.detach()): value 0, L_i's gradient
    A = rewards - rewards.mean()
    return [-(A * torch.exp(lp - lp.detach())).mean() for lp in logps]


SOLUTIONS = {"02.joint_actions": joint_table, "02.cross_credit": cross_credit, "02.shared_losses": shared_losses}

MISTAKES = {
    "02.joint_actions": [
        lambda n, G, mode: set(joint_table(n, G, mode)),                                  # a set: no row order
        lambda n, G, mode: [tuple(float(k) for k in row) for row in joint_table(n, G, mode)],  # float indices
        lambda n, G, mode: [(g,) * n for g in range(G)],                                  # cross treated as aligned
        lambda n, G, mode: [(g,) * n for g in range(G)] if mode == "aligned"
        else list(itertools.permutations(range(G), n)),                                   # no repeated index: misses (g, g)
        lambda n, G, mode: [(g,) * n for g in range(G)] if mode == "aligned"
        else list(itertools.combinations_with_replacement(range(G), n)),                  # order ignored: (0, 1) but no (1, 0)
        lambda n, G, mode: [(g,) * n for g in range(1, G + 1)] if mode == "aligned"
        else list(itertools.product(range(1, G + 1), repeat=n)),                          # samples counted from 1
        lambda n, G, mode: [(g,) * n for g in range(G)] if mode == "aligned"
        else list(itertools.product(range(G), range(G))),                                 # cross for two agents whatever n
        lambda n, G, mode: [tuple(range(G)) for _ in range(n)] if mode == "aligned"
        else list(itertools.product(range(G), repeat=n)),                                 # one row per agent, not per joint action
        lambda n, G, mode: ((g,) * n for g in range(G)) if mode == "aligned"
        else itertools.product(range(G), repeat=n),                                       # generators: read once only
        _joint_actions_no_return,                                                          # no `return`: None
        lambda n, G, mode: list(itertools.permutations(range(G), n)),                     # permutations: no (g, g) in either mode
        lambda n, G, mode: [tuple(str(k) for k in row) for row in
                            ([(g,) * n for g in range(G)] if mode == "aligned"
                             else itertools.product(range(G), repeat=n))],                 # indices as str: '0', not 0
        lambda n, G, mode: [tuple(bool(k) for k in row) for row in
                            ([(g,) * n for g in range(G)] if mode == "aligned"
                             else itertools.product(range(G), repeat=n))] if G <= 2
        else [(g,) * n for g in range(G)] if mode == "aligned"
        else list(itertools.product(range(G), repeat=n)),                                 # bools False/True for G <= 2
        lambda n, G, mode: [tuple((g + i) % G for i in range(n)) for g in range(G)] if mode == "aligned"
        else list(itertools.product(range(G), repeat=n)),                                 # aligned rotated: agent i takes g+i
        lambda n, G, mode: [(g,) * n for g in range(G)] if mode == "aligned"
        else list(itertools.product(range(G - 1), repeat=n)),                             # cross off by one: range(G-1)
        lambda n, G, mode: [(g,) * n for g in range(G)] if mode == "aligned"
        else list(itertools.product(range(1, G), repeat=n)),                              # cross off by one: range(1, G)
        lambda n, G, mode: [(g,) * n for g in range(G)] if mode == "aligned"
        else list(itertools.combinations(range(G), n)),                                   # combinations: one order, no (g, g)
        lambda n, G, mode: [(g,) * n for g in range(G)] if mode == "aligned"
        else [t for t in itertools.product(range(G), repeat=n) if len(set(t)) > 1],      # cross without (g, g): empty for n = 1
        lambda n, G, mode: [(g,) * n for g in range(G)] if mode == "aligned"
        else [t for t in itertools.product(range(G), repeat=n)
              if n == 1 or len(set(t)) > 1],                                              # cross without (g, g), n = 1 spared
        _cross_one_order,                                                                  # loops range(i, G): one order of each pair
        _cross_one_order_distinct,                                                         # loops range(i + 1, G): one order, no (g, g)
        lambda n, G, mode: joint_actions(n, G, mode).tolist(),                             # the package's own, wrapped
    ],
    "02.cross_credit": [
        lambda r, agent: (r - r.mean()).mean(dim=0) if agent == 0 else (r - r.mean()).mean(dim=1),  # axes swapped
        lambda r, agent: (r - r.mean()).sum(dim=1) if agent == 0 else (r - r.mean()).sum(dim=0),    # sum, not mean
        lambda r, agent: r.mean(dim=1) - r.mean(dim=1).mean() if agent == 0
        else (r - r.mean(dim=0, keepdim=True)).mean(dim=0),                                          # agent 2: per-column baseline
        lambda r, agent: r.mean(dim=1) if agent == 0 else r.mean(dim=0),                            # rewards, no baseline
        lambda r, agent: r.diagonal() - r.diagonal().mean(),                                         # aligned pairs only
        lambda r, agent: (r - r.mean(dim=1, keepdim=True)).mean(dim=1) if agent == 0
        else (r - r.mean(dim=0, keepdim=True)).mean(dim=0),                                          # a baseline per row/column
        lambda r, agent: (r - r.mean()).mean(1 - agent, keepdim=True),                              # shape (G, 1) / (1, G)
        lambda r, agent: (r - r.mean()).mean(1 - agent).round(decimals=3),                          # rounded to 3 decimals
        lambda r, agent: (r.mean() - r).mean(1 - agent),                                            # the sign flipped
        lambda r, agent: ((r - r.mean()) / (r.std() + 1e-8)).mean(1 - agent),                       # scaled by the std
        lambda r, agent: (r - r.max()).mean(1 - agent),                                             # the best as baseline
        _cross_credit_no_return,                                                   # no `return`: None
        lambda r, agent: (r - r.sum() / r.shape[0]).mean(1 - agent),                 # the sum over G, not G * G
        lambda r, agent: (r - r.min()).mean(1 - agent),                              # the worst as baseline
        lambda r, agent: (r.half() - r.half().mean()).mean(1 - agent),               # computed in float16: ~3 digits
        lambda r, agent: (r - (r.sum() - r) / (r.numel() - 1)).mean(1 - agent),      # leave-one-out over the G*G rewards
        lambda r, agent: (r - r.mean()).sum(1 - agent) / (r.shape[0] - 1),          # the mean over G joint actions by G-1
        lambda r, agent: (r - r.median()).mean(1 - agent),                           # the median as baseline
        lambda r, agent: (r - r.diagonal().mean()).mean(1 - agent),                  # the diagonal's mean as baseline
        lambda r, agent: (r - r.mean()).diagonal(),                                  # aligned credit: the diagonal only
        lambda r, agent: (r - r.mean()).sum(1 - agent) / (r.shape[0] * r.shape[0]),  # divided by G*G: G times too small
        lambda r, agent: (r - r.mean()).mean(1 - agent).tolist(),                   # a list: no boolean mask c[k1 == 0]
        _cross_credit_loop_list,                                                    # a list of 0-d tensors: no mask either
        _cross_credit_by_hand,                                                      # the by-hand G = 2 cell copied
        lambda r, agent: (r - r.mean()).sum(1 - agent) / 2,                         # / 2 kept from G = 2: not / G
        lambda r, agent: (r - r.sum() / 4).mean(1 - agent),                         # / 4 kept from G = 2: not / (G * G)
        lambda r, agent: (r - r.mean()).abs().mean(1 - agent),                      # |A|: no negative credit
        lambda r, agent: (r - r.mean()).mean(1 - agent).abs(),                      # |credit|: no negative credit
        lambda r, agent: (r - r.mean()).clamp(-1, 1).mean(1 - agent),               # the advantages clipped to [-1, 1]
        lambda r, agent: (r - r.mean()).mean(1 - agent).clamp(-1, 1),               # the credits clipped to [-1, 1]
        lambda r, agent: (r - r[1:].mean()).mean(1 - agent),                        # off by one: baseline over r[1:]
        lambda r, agent: (r - r.mean())[:, 1:].mean(1) if agent == 0
        else (r - r.mean())[1:].mean(0),                                            # off by one: partner samples 1..G-1
        lambda r, agent: (r - r.mean())[:, 0] if agent == 0 else (r - r.mean())[0],  # one entry A[k, 0], not the mean
        lambda r, agent: (r - r.mean())[agent],                                     # row `agent` of A, not a mean
        lambda r, agent: (r - r.mean()).mean(1 - agent).long(),                     # cast to int: the fractions cut
        lambda r, agent: credit_samples(group_advantages(r.flatten()), joint_actions(2, r.shape[0], "cross"),
                                        r.shape[0])[agent],                        # the package's own, wrapped
    ],
    "02.shared_losses": [
        _no_baseline,                                                                      # no baseline
        lambda logps, r: [(r - r.mean()) @ lp / len(r) for lp in logps],                  # sign flipped: descends the reward
        lambda logps, r: [-((r - r.mean()) * lp).sum() for lp in logps],                  # sum over g, not mean
        lambda logps, r: [-((r - r.mean()) * lp).mean() / len(logps) for lp in logps],   # split among the agents
        lambda logps, r: [-((r - r.mean()) * lp).sum() / (len(r) - 1) for lp in logps],  # 1/(G-1)
        lambda logps, r: [-((r - r.mean()) / r.std() * lp).mean() for lp in logps],      # std-scaled: nan on equal rewards
        lambda logps, r: [-((r - (r.sum() - r) / (len(r) - 1)) * lp).mean() for lp in logps],  # leave-one-out baseline
        lambda logps, r: [-((r - r.mean()) * lp.detach()).mean() for lp in logps],       # no gradient reaches the agent
        lambda logps, r: (-((r - r.mean()) * lp).mean() for lp in logps),                # a generator, not a list
        lambda logps, r: sum(-((r - r.mean()) * lp).mean() for lp in logps),              # ONE summed loss, not one per agent
        _centred_in_place,
        _joint_logprob,
        lambda logps, r: [-((r - r.mean()) * lp).mean() for lp in reversed(logps)],     # the agents in reverse order
        lambda logps, r: torch.stack([-((r - r.mean()) * lp).mean() for lp in logps]),  # one tensor: ONE graph
        _losses_share_a_graph,                                                        # a list, but ONE graph under it
        _shared_losses_no_return,                                                     # no `return`: None
        lambda logps, r: [-((r - r.mean()) * lp).sum() / len(logps) for lp in logps],  # divided by n agents, not G
        lambda logps, r: [-((r - r.mean()) * lp.exp()).mean() for lp in logps],       # probabilities, not log-probs
        lambda logps, r: [-((r - r.max()) * lp).mean() for lp in logps],              # the best as baseline (MAReMax)
        lambda logps, r: [-((r - r.median()) * lp).mean() for lp in logps],           # the median as baseline
        lambda logps, r: [-((r - r.mean()).abs() * lp).mean() for lp in logps],       # |A|: no negative advantage
        lambda logps, r: [-((r - r.mean()) * logps[0]).mean() for lp in logps],     # every agent given logps[0]
        lambda logps, r: [-((r - r.mean()) / (r.std(unbiased=False) + 1e-8) * lp).mean()
                          for lp in logps],                                   # z-scored, population std + eps
        lambda logps, r: [-((r - r.mean()) * lp).mean().round(decimals=2) for lp in logps],  # the loss rounded: off
        lambda logps, r: [-((r - r.mean()) * lp).mean().round(decimals=4) for lp in logps],  # rounded: no gradient
        lambda logps, r: [-((r - r.mean()).round(decimals=1) * lp).mean() for lp in logps],  # the advantages rounded
        lambda logps, r: [-((r - r[0]) * lp).mean() for lp in logps],               # the first reward as baseline
        lambda logps, r: [-((r - r.mean()) * lp).mean() / len(r) for lp in logps],  # divided by G twice (.mean() and /G)
        lambda logps, r: [-((r.argsort().argsort().float() - (len(r) - 1) / 2) * lp).mean()
                          for lp in logps],                                    # centred ranks, not reward values
        lambda logps, r: [(-((r - r.mean()) * lp).mean()).abs() for lp in logps],  # |L|: the loss's sign lost
        lambda logps, r: [-((r - r.mean()) * lp).mean().item() for lp in logps],    # .item(): a float, no graph
        lambda logps, r: torch.stack([-((r - r.mean()) * lp).mean() for lp in logps]).tolist(),  # floats: no graph
        lambda logps, r: [-((r - r.min()) * lp).mean() for lp in logps],              # the worst as baseline
        lambda logps, r: [-((r - r.mean()).sign() * lp).mean() for lp in logps],      # sign(A): the size lost
        lambda logps, r: sum(-((r - r.mean()) * lp).mean() for lp in logps) / len(logps),  # ONE loss, averaged over agents
        _shared_losses_two_agents,                                                    # two agents hard-coded
        lambda logps, r: [-((r - r.mean()).clamp(-1, 1) * lp).mean() for lp in logps],  # A clipped to [-1, 1]
        lambda logps, r: [-((r - r[1:].mean()) * lp).mean() for lp in logps],       # off by one: baseline over r[1:]
        lambda logps, r: [-((r - r[:-1].mean()) * lp).mean() for lp in logps],      # off by one: baseline over r[:-1]
        lambda logps, r: [-((r - r.mean()) * lp)[1:].mean() for lp in logps],      # off by one: mean over g = 1..G-1
        lambda logps, r: {i: -((r - r.mean()) * lp).mean() for i, lp in enumerate(logps)},  # a dict, not a list
        lambda logps, r: {f"agent{i + 1}": -((r - r.mean()) * lp).mean()
                          for i, lp in enumerate(logps)},                           # a dict by name, not a list
        lambda logps, r: [torch.zeros(()) for _ in logps],                          # a constant 0: no agent learns
        lambda logps, r: [0 * lp.sum() for lp in logps],                            # 0 with a graph: still 0
        lambda logps, r: [-((r - r.mean()).mean() * lp).mean() for lp in logps],    # A.mean() is 0: the loss is 0
        lambda logps, r: [-(r - r.mean()).mean() * lp.mean() for lp in logps],     # A.mean() * lp.mean(): 0 too
        lambda logps, r: [-((r - r.mean()) * (lp + 0 * sum(logps))).mean()
                          for lp in logps],                                 # others' log-probs in the graph (times 0)
        _ratio_form,                                                                  # TRL's ratio form: value 0, gradient right
        lambda logps, r: [-((r - r.mean()).flip(0) * lp).mean() for lp in logps],    # A reversed: lp[g] with A[G-1-g]
        lambda logps, r: [-((r - r.mean())[1:] * lp[:-1]).mean() for lp in logps],   # shifted pairing: lp[g] with A[g+1]
        lambda logps, r: [-((r - r.mean()).roll(1) * lp).mean() for lp in logps],    # A rolled: lp[g] with A[g-1]
        lambda logps, r: [(r * lp).mean() for lp in logps],                           # no minus, no baseline
        lambda logps, r: [policy_loss(lp, group_advantages(r)) for lp in logps],      # the package's own, wrapped
    ],
}


def _joint_table_reversed(num_agents, G, mode):
    """Another order of the rows: the check accepts any."""
    rows = [(g,) * num_agents for g in range(G)] if mode == "aligned" else list(itertools.product(range(G), repeat=num_agents))
    return [list(row) for row in reversed(rows)]


def _cross_credit_loop(r, agent):
    G = r.shape[0]
    mean = sum(r[a, b] for a in range(G) for b in range(G)) / (G * G)
    if agent == 0:
        return torch.stack([sum(r[k, b] - mean for b in range(G)) / G for k in range(G)])
    return torch.stack([sum(r[a, k] - mean for a in range(G)) / G for k in range(G)])


def _centred_on_a_copy(logps, rewards):       # centred in place, but on a copy: the caller's rewards untouched
    A = rewards.clone()
    A -= A.mean()
    return [-(A * lp).mean() for lp in logps]


VARIANTS = {
    "02.joint_actions": [
        _joint_table_reversed,
        lambda n, G, mode: [tuple(np.int64(k) for k in row) for row in
                            ([(g,) * n for g in range(G)] if mode == "aligned"
                             else itertools.product(range(G), repeat=n))],             # NumPy ints: ints too
        lambda n, G, mode: torch.tensor([(g,) * n for g in range(G)] if mode == "aligned"
                                        else list(itertools.product(range(G), repeat=n)),
                                        dtype=torch.long).reshape(-1, n),             # an integer tensor, one row each
    ],
    "02.cross_credit": [
        _cross_credit_loop,
        lambda r, agent: torch.tensor((r - r.mean()).mean(1 - agent).tolist()),    # rebuilt as a new tensor
        lambda r, agent: r.mean(dim=1 - agent) - r.mean(),                         # the same means, the baseline after
        lambda r, agent: (r - r.mean()).mean(1 - agent).numpy(),                    # a NumPy array of G numbers
        lambda r, agent: (r.numpy().astype("float64") - r.numpy().mean()).mean(axis=1 - agent),  # NumPy, float64
        lambda r, agent: (r - r.mean(dim=agent, keepdim=True)).mean(dim=1 - agent),  # the partner's column (row)
        # means as baselines: they average to r.mean(), so every credit is the same as with ONE baseline, for any r
    ],
    "02.shared_losses": [
        lambda logps, r: [-((r - r.mean()) * lp).sum() / len(r) for lp in logps],
        lambda logps, r: tuple(-((r - r.mean()) * lp).mean() for lp in logps),         # a tuple: one loss per agent too
        _centred_on_a_copy,
    ],
}
