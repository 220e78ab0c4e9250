"""Notebook 05: solutions and typical mistakes."""
import copy
import math

import numpy
import torch

from magrpo_edu import algorithm as A



def discounted_returns(node, gamma):
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * discounted_returns(child, gamma).mean()
    return R


def choose_threshold(means, budget):
    t = min(means) - 1.0 if means else 0.0    # below every group: nothing is expanded (no group at all: any number)
    for v in sorted(means):
        if sum(m <= v for m in means) <= budget:
            t = v                             # every group with mean <= v is expanded, and they fit
    return t


def _undiscounted(node, gamma):
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += _undiscounted(child, gamma).mean()
    return R


def _child_rewards(node, gamma):
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * child.rewards.mean()
    return R


def _in_place(node, gamma):
    R = node.rewards
    for j, child in node.children.items():
        R[j] += gamma * _in_place(child, gamma).mean()
    return R


def _discount_everything(node, gamma):           # gamma times the whole return, the turn's own reward included
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += _discount_everything(child, gamma).mean()
    return gamma * R if node.children else R


def _sum_of_children(node, gamma):                # the child's returns summed, not averaged
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * _sum_of_children(child, gamma).sum()
    return R


def _max_of_children(node, gamma):                # the best continuation, not the mean one
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * _max_of_children(child, gamma).max()
    return R


def _children_in_place(node, gamma):              # the top node cloned, the children overwritten
    def walk(nd):
        for j, child in nd.children.items():
            nd.rewards[j] += gamma * walk(child).mean()
        return nd.rewards
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * walk(child).mean()
    return R


def _one_mean_for_the_level(node, gamma):         # every joint action gets the mean over ALL children
    R = node.rewards.clone()
    if node.children:
        R[list(node.children)] += gamma * torch.cat([_one_mean_for_the_level(c, gamma) for c in node.children.values()]).mean()
    return R


def _discount_by_depth(node, gamma):             # gamma ** depth on top of the recursion: turn 3 counted as gamma**3
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma ** child.depth * _discount_by_depth(child, gamma).mean()
    return R


def _discounted_returns_iterative(node, gamma):
    """Bottom-up without recursion: the deepest nodes first."""
    order, stack = [], [node]
    while stack:
        nd = stack.pop()
        order.append(nd)
        stack.extend(nd.children.values())
    ret = {}
    for nd in reversed(order):
        R = nd.rewards.clone()
        for j, child in nd.children.items():
            R[j] = R[j] + gamma * ret[id(child)].mean()
        ret[id(nd)] = R
    return ret[id(node)]


def _threshold_midpoint(means, budget):
    """Halfway between the last mean that fits and the next one: as good a threshold."""
    values = sorted(set(means))
    if not values:
        return 0.0
    fits = [v for v in values if sum(m <= v for m in means) <= budget]
    if not fits:
        return values[0] - 0.5
    nxt = [v for v in values if v > fits[-1]]
    return (fits[-1] + nxt[0]) / 2 if nxt else fits[-1] + 1.0


SOLUTIONS = {
    "05.discounted_returns": discounted_returns,
    "05.early_termination_threshold": choose_threshold,
}

def _children_by_position(node, gamma):            # children read as a list: the i-th child taken for joint action i
    R = node.rewards.clone()
    for j, child in enumerate(node.children.values()):
        R[j] = node.rewards[j] + gamma * _children_by_position(child, gamma).mean()
    return R


def _zero_cuts_everything(means, budget):
    """Budget 0 answered with 0.0 ("rewards are >= 0"): but a node is cut only when its mean is ABOVE the threshold,
    so groups whose mean is exactly 0 are still expanded."""
    if budget <= 0:
        return 0.0
    return choose_threshold(means, budget)


def _children_by_index(node, gamma):               # node.children[j] for j in range(len(...)): KeyError 0 on {3:, 1:}
    R = node.rewards.clone()
    for j in range(len(node.children)):
        R[j] += gamma * _children_by_index(node.children[j], gamma).mean()
    return R


def _children_enumerated(node, gamma):            # enumerate(node.children): the keys, not the child nodes
    R = node.rewards.clone()
    for j, child in enumerate(node.children):
        R[j] += gamma * _children_enumerated(child, gamma).mean()
    return R


def _float64_returns(node, gamma):                # right numbers, but float64: allclose with node.returns refuses it
    R = node.rewards.clone().double()
    for j, c in node.children.items():
        R[j] += gamma * _float64_returns(c, gamma).mean()
    return R


def _two_levels_written_out(node, gamma):         # no recursion: right only for trees of up to three turns
    R = node.rewards.clone()
    for j, c in node.children.items():
        Rc = c.rewards.clone()
        for k, cc in c.children.items():
            Rc[k] += gamma * cc.rewards.mean()
        R[j] += gamma * Rc.mean()
    return R


def _threshold_sorts_in_place(means, budget):   # the right threshold, but the caller's means sorted in place
    means.sort()
    return choose_threshold(means, budget)


def _median_of_children(node, gamma):            # the middle continuation, not the mean one
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * _median_of_children(child, gamma).median()
    return R


def _rounded_returns(node, gamma):                # right, then rounded to 2 decimals: allclose with node.returns fails
    return torch.round(discounted_returns(node, gamma) * 100) / 100


def _threshold_margin_above(means, budget):      # a fixed margin above the last mean that fits: passes a close next mean
    s = sorted(means)
    k = min(budget, len(s))
    while 0 < k < len(s) and s[k - 1] == s[k]:
        k -= 1
    return s[k - 1] + 0.1 if k else s[0] - 1.0


def _threshold_margin_below(means, budget):      # a fixed margin below the first mean that does not fit: under-spends
    s = sorted(means)
    return s[-1] if budget >= len(s) else s[budget] - 0.1


def _threshold_budget_not_above_groups(means, budget):   # ties handled, but IndexError when budget > number of groups
    s, k = sorted(means), budget
    while 0 < k < len(s) and s[k - 1] == s[k]:
        k -= 1
    return s[k - 1] if k else s[0] - 1.0


def _threshold_budget_0_wraps(means, budget):    # budget 0: sorted(means)[-1], the LARGEST mean: expands everything
    s, k = sorted(means), min(budget, len(means))
    while 0 < k < len(s) and s[k - 1] == s[k]:
        k -= 1
    return s[k - 1]


def _threshold_from_the_best(means, budget):     # reverse=True: the budget counted from the best groups
    s = sorted(means, reverse=True)
    if budget == 0:
        return s[-1] - 1.0
    return s[min(budget, len(s)) - 1]


def _threshold_small_margin_above(means, budget, margin=0.06):   # a margin below the notebook's 0.0625 gap: still
    t = choose_threshold(means, budget)                            # passes a next mean 0.0375 or 0.025 up
    return t + margin if any(m <= t for m in means) else t


def _threshold_from_the_best_above_all(means, budget):   # counted from the best; budget 0 read as "above every mean"
    s = sorted(means, reverse=True)
    return s[0] + 1.0 if budget == 0 else s[min(budget, len(s)) - 1]


def _pops_children(node, gamma):
    """The right returns, but each child is popped out of node.children on the way (the tree loses its turns)."""
    R = node.rewards.clone()
    for j in list(node.children):
        child = node.children.pop(j)
        R[j] = R[j] + gamma * _pops_children(child, gamma).mean()
    return R


MISTAKES = {
    "05.discounted_returns": [
        _pops_children,                                   # right returns, the children taken out of the tree
_undiscounted, _child_rewards, _in_place, _discount_everything, _sum_of_children,
                              _max_of_children, _children_in_place, _one_mean_for_the_level, _discount_by_depth,
                              _children_by_position, _children_by_index, _children_enumerated, _float64_returns,
                              _two_levels_written_out, _median_of_children, _rounded_returns,
                              lambda node, gamma: discounted_returns(node, gamma).unsqueeze(-1)],   # shape (M, 1)
    "05.early_termination_threshold": [
        _threshold_sorts_in_place,
        lambda means, budget: sorted(means)[budget - 1] if budget else min(means) - 1,   # ties: one more group expanded
        lambda means, budget: sorted(means)[min(budget, len(means) - 1)],                # cut at ">= t": one group too many
        lambda means, budget: sorted(means, reverse=True)[budget - 1] if budget else max(means),  # cuts the WORST groups
        lambda means, budget: choose_threshold(means, budget) if budget else float("-inf"),  # -inf: the config refuses it
        lambda means, budget: min(means) - 1.0,                                          # expands nothing, whatever the budget
        _zero_cuts_everything,
        lambda m, b: torch.tensor(max([v for v in m if sum(x <= v for x in m) <= b], default=-1.0)),  # a 0-d tensor
        lambda m, b: numpy.array(choose_threshold(m, b)),                                # a 0-d numpy array
        _threshold_margin_above, _threshold_margin_below, _threshold_budget_not_above_groups,
        _threshold_budget_0_wraps, _threshold_from_the_best,
        lambda m, b: None if b >= len(m) else choose_threshold(m, b),                    # None: not a number
        lambda m, b: None if b == 0 else choose_threshold(m, b),                         # None at budget 0
        _threshold_small_margin_above,                                                   # + 0.06
        lambda m, b: _threshold_small_margin_above(m, b, 0.01),                          # + 0.01: a 0.0071 gap
        lambda m, b: sum(m) / len(m),                                                    # the mean of the means
        _threshold_from_the_best_above_all,
    ],
}

def _discounted_returns_float64_inside(node, gamma):
    """Summed in float64, returned in node.rewards' dtype: what the cells below compare with the trainer's."""
    R = node.rewards.double()
    for j, child in node.children.items():
        R[j] += gamma * _discounted_returns_float64_inside(child, gamma).double().mean()
    return R.to(node.rewards.dtype)


def _threshold_ties_stepped_down(means, budget):
    """The budget-th lowest mean, stepped down past a tie at the cut; every mean when the budget covers them all."""
    s = sorted(means)
    if not s:
        return 0.0
    if budget >= len(s):
        return s[-1]
    k = budget
    while k > 0 and s[k - 1] == s[k]:
        k -= 1
    return s[k - 1] if k else s[0] - 1.0


def _threshold_just_below_next(means, budget):
    """Just below the lowest mean that does not fit: every group strictly below it is expanded."""
    s = sorted(means)
    if not s:
        return 0.0
    return s[-1] + 1.0 if budget >= len(s) else math.nextafter(s[budget], -math.inf)


def _threshold_numpy_scalar(means, budget):
    """The reference rule written with numpy, returned as a numpy float32 scalar (a number MAGRPOConfig takes)."""
    a = numpy.array(means, dtype=numpy.float64)
    t = a.min() - 1.0 if a.size else 0.0
    for v in numpy.sort(a):
        if (a <= v).sum() <= budget:
            t = v
    return numpy.float32(t)


VARIANTS = {
    "05.discounted_returns": [_discounted_returns_iterative, _discounted_returns_float64_inside],
    "05.early_termination_threshold": [_threshold_midpoint,
                                       _threshold_numpy_scalar,                            # a numpy scalar: a number
                                       _threshold_ties_stepped_down, _threshold_just_below_next],
}


def _discounted_once(node, gamma, top=True):     # gamma at the top only: turn 3 counts gamma, not gamma ** 2
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += (gamma if top else 1.0) * _discounted_once(child, gamma, False).mean()
    return R


def _not_compounded(node, gamma):                 # gamma on the child's rewards, the turns below it undiscounted
    R = node.rewards.clone()
    for j, child in node.children.items():
        below = _not_compounded(child, gamma)
        R[j] += gamma * child.rewards.mean() + (below.mean() - child.rewards.mean())
    return R


def _pooled_children(node, gamma):               # ONE mean over all the children's mean returns, for every j
    R = node.rewards.clone()
    if node.children:
        pooled = torch.stack([_pooled_children(c, gamma).mean() for c in node.children.values()]).mean()
        for j in node.children:
            R[j] += gamma * pooled
    return R


def _first_child_only(node, gamma):              # only the first child of node.children counts
    R = node.rewards.clone()
    if node.children:
        j, child = next(iter(node.children.items()))
        R[j] += gamma * _first_child_only(child, gamma).mean()
    return R


def _sum_over_siblings(node, gamma):             # the child's sum over the number of the PARENT's children
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * _sum_over_siblings(child, gamma).sum() / len(node.children)
    return R


def _threshold_reverse_wraps(means, budget):     # from the best; at budget 0, [-1] is the lowest mean: it is expanded
    s = sorted(means, reverse=True)
    return s[min(budget, len(s)) - 1]


MISTAKES["05.discounted_returns"] += [_discounted_once, _not_compounded, _pooled_children, _first_child_only,
                                      _sum_over_siblings]
MISTAKES["05.early_termination_threshold"] += [
    _threshold_reverse_wraps,
    lambda means, budget: True,                                                          # a bool, not a number
]


def _library_on_a_copy(node, gamma):             # the package's compute_returns, on a copy of the tree
    return A.compute_returns(copy.deepcopy(node), gamma)


def _gamma_or_default(node, gamma):              # `gamma or 0.9`: 0.0 is falsy, so gamma = 0 computes gamma = 0.9
    gamma = gamma or 0.9
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * _gamma_or_default(child, gamma).mean()
    return R


def _gamma_on_own_reward(node, gamma):           # gamma on r_j, the child's mean return added undiscounted
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] = gamma * R[j] + _gamma_on_own_reward(child, gamma).mean()
    return R


def _pooled_for_every_joint_action(node, gamma):  # one mean over ALL the children's returns, added to every j
    R = node.rewards.clone()
    if node.children:
        R = R + gamma * torch.cat([_pooled_for_every_joint_action(c, gamma) for c in node.children.values()]).mean()
    return R


def _reward_overwritten(node, gamma):            # R[j] = gamma * ...: r_j dropped where j has a child
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] = gamma * _reward_overwritten(child, gamma).mean()
    return R


def _threshold_empty_index_error(means, budget):  # right for every non-empty list; s[0] of [] raises IndexError
    s, best = sorted(means), None
    for v in s:
        if sum(m <= v for m in s) <= budget:
            best = v
    return best if best is not None else s[0] - 1


def _threshold_min_of_empty(means, budget):      # right for every non-empty list; min([]) raises ValueError
    t = min(means) - 1.0
    for v in sorted(means):
        if sum(m <= v for m in means) <= budget:
            t = v
    return t


MISTAKES["05.discounted_returns"] += [
    A.compute_returns,                                                    # the package's own compute_returns
    lambda node, gamma: A.compute_returns(node, gamma).clone(),           # a wrapper of it
    _library_on_a_copy,                                                   # a deepcopy, then A.compute_returns
    _gamma_or_default,                                                    # gamma = 0 read as 0.9
    _gamma_on_own_reward,                                                 # gamma on r_j, not on the child's mean
    _pooled_for_every_joint_action,                                       # one pooled bonus for every j
    _reward_overwritten,                                                  # r_j dropped: R[j] = gamma * ...
]
MISTAKES["05.early_termination_threshold"] += [
    _threshold_empty_index_error,                                         # IndexError on an empty list of groups
    _threshold_min_of_empty,                                              # ValueError on an empty list of groups
    lambda means, budget: None if not means else choose_threshold(means, budget),   # None for no group
]


def _advantages_returned(node, gamma):            # R - R.mean(): the advantages among siblings, not the returns
    R = discounted_returns(node, gamma)
    return R - R.mean()


def _one_minus_gamma_on_reward(node, gamma):      # (1 - gamma) * r_j + gamma * mean: a weighted average, r_j shrunk
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] = (1 - gamma) * R[j] + gamma * _one_minus_gamma_on_reward(child, gamma).mean()
    return R


def _descendants_rewards(node, gamma):            # the mean of ALL the rewards below j, discounted once
    def below(nd):
        return [nd.rewards] + [t for c in nd.children.values() for t in below(c)]
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * torch.cat(below(child)).mean()
    return R


def _cut_filled_by_siblings(node, gamma):         # a joint action without a child given its siblings' children's mean
    R = node.rewards.clone()
    kids = {j: _cut_filled_by_siblings(c, gamma).mean() for j, c in node.children.items()}
    for j in range(len(R)):
        if j in kids:
            R[j] += gamma * kids[j]
        elif kids:
            R[j] += gamma * torch.stack(list(kids.values())).mean()
    return R


def _children_advantages(node, gamma):            # the mean ADVANTAGE of the child: always 0, so R = r
    R = node.rewards.clone()
    for j, child in node.children.items():
        Rc = _children_advantages(child, gamma)
        R[j] += gamma * (Rc - Rc.mean()).mean()
    return R


def _rounded_3(node, gamma):                      # right, then rounded to 3 decimals
    return torch.round(discounted_returns(node, gamma), decimals=3)


def _node_fields_overwritten(node, gamma):        # right R, but node.returns and node.advantages overwritten
    R = discounted_returns(node, gamma)
    node.returns = node.rewards
    node.advantages = None
    return R


def _threshold_tree_order(means, budget):         # means[budget - 1] of the list in tree order: not sorted
    return means[budget - 1]


MISTAKES["05.discounted_returns"] += [
    _advantages_returned,                                                 # [30] the advantages, R - R.mean()
    lambda node, gamma: node.rewards.clone(),                             # [31] the rewards only
    _one_minus_gamma_on_reward,                                           # [32] (1 - gamma) * r_j + gamma * mean
    _descendants_rewards,                                                 # [33] the mean of all descendants' rewards
    _cut_filled_by_siblings,                                              # [34] a cut branch filled by its siblings
    _children_advantages,                                                 # [35] + the child's mean advantage (0)
    _rounded_3,                                                           # [36] rounded to 3 decimals
    _node_fields_overwritten,                                             # [37] node.returns / advantages overwritten
]
MISTAKES["05.early_termination_threshold"] += [
    _threshold_tree_order,                                                # [25] indexed in tree order, not sorted
    lambda means, budget: choose_threshold(means, budget) if budget else float("nan"),   # [26] NaN at budget 0
]


def _returns_cached(node, gamma):                 # node.returns read as a cache: the trainer's, filled in at gamma 0.9
    if node.returns is not None:
        return node.returns.clone()
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * _returns_cached(child, gamma).mean()
    return R


def _child_returns_cached(node, gamma):           # child.returns read as a cache, one level down
    R = node.rewards.clone()
    for j, child in node.children.items():
        cr = child.returns if child.returns is not None else _child_returns_cached(child, gamma)
        R[j] += gamma * cr.mean()
    return R


def _threshold_fixed_margin(means, budget, margin=0.005):   # the last mean that fits + a fixed margin: a closer
    s = sorted(means)                                        # next mean (1e-4, 1e-6 apart) is passed and expanded
    if not s:
        return 0.0
    k = min(budget, len(s))
    while 0 < k < len(s) and s[k - 1] == s[k]:
        k -= 1
    return s[k - 1] + margin if k else s[0] - 1.0


MISTAKES["05.discounted_returns"] += [
    _returns_cached,                                                      # [38] node.returns (gamma 0.9) as a cache
    _child_returns_cached,                                                # [39] child.returns (gamma 0.9) as a cache
]
MISTAKES["05.early_termination_threshold"] += [
    _threshold_fixed_margin,                                              # [27] + 0.005: a next mean 1e-4 up
    lambda m, b: _threshold_fixed_margin(m, b, 1e-3),                     # [28] + 1e-3: a next mean 1e-4 up
    lambda m, b: _threshold_fixed_margin(m, b, 1e-5),                     # [29] + 1e-5: a next mean 1e-6 up
    lambda means, budget: sorted(means)[budget],                          # [30] one index too far: budget + 1 groups
]


def _discounted_from_the_root(node, gamma):       # gamma ** node.depth on r: right at a root, 0.9 * r a turn down
    R = gamma ** node.depth * node.rewards.clone()
    for j, child in node.children.items():
        R[j] += _discounted_from_the_root(child, gamma).mean()
    return R


def _pooled_by_depth(node, gamma):               # gamma ** k times ONE mean of all the rewards k turns below j
    R = node.rewards.clone()
    for j, child in node.children.items():
        level, k = [child], 1
        while level:
            R[j] += gamma ** k * torch.cat([n.rewards for n in level]).mean()
            level, k = [c for n in level for c in n.children.values()], k + 1
    return R


def _cut_filled_by_siblings_returns(node, gamma):   # a joint action without a child: r_j + gamma * its siblings' mean R
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * _cut_filled_by_siblings_returns(child, gamma).mean()
    cut = [j for j in range(len(R)) if j not in node.children]
    if node.children and cut:
        R[cut] = node.rewards[cut] + gamma * R[list(node.children)].mean()
    return R


def _threshold_rounded(means, budget, digits=2):  # the midpoint, rounded: 1.6 on float32 means 1.592857 and 1.6
    s = sorted(means)
    if not s:
        return 0.0
    k = min(budget, len(s))
    while 0 < k < len(s) and s[k - 1] == s[k]:
        k -= 1
    if k == 0:
        return s[0] - 1.0
    return s[-1] + 1.0 if k == len(s) else round((s[k - 1] + s[k]) / 2, digits)


def _threshold_tiny_margin(means, budget):        # the last mean that fits + 1e-7: passes a float32 neighbour 6e-8 up
    s = sorted(means)
    if not s:
        return 0.0
    k = min(budget, len(s))
    while 0 < k < len(s) and s[k - 1] == s[k]:
        k -= 1
    return s[k - 1] + 1e-7 if k else s[0] - 1.0


MISTAKES["05.discounted_returns"] += [
    _discounted_from_the_root,                                            # [40] gamma ** depth: from the root
    _pooled_by_depth,                                                     # [41] each depth's rewards pooled
    _cut_filled_by_siblings_returns,                                      # [42] a cut branch: + its siblings' mean R
]
MISTAKES["05.early_termination_threshold"] += [
    _threshold_rounded,                                                   # [31] midpoint rounded to 2 decimals
    lambda m, b: _threshold_rounded(m, b, 4),                             # [32] midpoint rounded to 4 decimals
    _threshold_tiny_margin,                                               # [33] + 1e-7: a float32 neighbour passed
]


def _threshold_tie_fixed_step(means, budget, step=0.01):   # a fixed step below a tie at the cut: skips a mean that
    s, c0 = sorted(means), min(budget, len(means))           # fits only 0.002 below the tie (0.5 under 0.502)
    if not s:
        return 0.0
    if c0 == 0:
        return s[0] - 1.0
    if c0 < len(s) and s[c0 - 1] == s[c0]:
        return s[c0 - 1] - step
    return float(s[c0 - 1])


def _leaf_rewards_itself(node, gamma):           # a leaf returns node.rewards itself: R -= R.mean() changes the tree
    if not node.children:
        return node.rewards
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * _leaf_rewards_itself(child, gamma).mean()
    return R


def _gamma_0_rewards_itself(node, gamma):        # gamma == 0 returns node.rewards itself, not a new tensor
    if gamma == 0:
        return node.rewards
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * _gamma_0_rewards_itself(child, gamma).mean()
    return R


def _leaf_rewards_view(node, gamma):             # a leaf returns node.rewards[:], a view: the same storage
    if not node.children:
        return node.rewards[:]
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * _leaf_rewards_view(child, gamma).mean()
    return R


def _gamma_hard_coded(node, gamma):              # 0.9 written in: the argument gamma ignored
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += 0.9 * _gamma_hard_coded(child, gamma).mean()
    return R


def _discounted_twice(node, gamma):              # gamma * gamma: every turn discounted twice
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * gamma * _discounted_twice(child, gamma).mean()
    return R


def _over_this_nodes_size(node, gamma):          # the child's sum divided by THIS node's M, not the child's size
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * _over_this_nodes_size(child, gamma).sum() / len(node.rewards)
    return R


MISTAKES["05.discounted_returns"] += [
    _leaf_rewards_itself,                                                 # [43] a leaf: node.rewards itself
    _gamma_0_rewards_itself,                                              # [44] gamma 0: node.rewards itself
    _leaf_rewards_view,                                                   # [45] a leaf: node.rewards[:], a view
    _gamma_hard_coded,                                                    # [46] 0.9 hard-coded, gamma ignored
    _discounted_twice,                                                    # [47] gamma * gamma
    _over_this_nodes_size,                                                # [48] sum / len(node.rewards)
]
MISTAKES["05.early_termination_threshold"] += [
    _threshold_tie_fixed_step,                                            # [34] 0.01 below a tie: skips 0.5 < 0.502
    lambda m, b: _threshold_tie_fixed_step(m, b, 0.05),                   # [35] 0.05 below a tie
    lambda m, b: _threshold_tie_fixed_step(m, b, 0.06),                   # [36] 0.06 below a tie
]


def _returns_new_tensor_early(node, gamma):
    """A leaf, or gamma == 0, answered early, with a NEW tensor (node.rewards.clone())."""
    if not node.children or gamma == 0:
        return node.rewards.clone()
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * _returns_new_tensor_early(child, gamma).mean()
    return R


def _threshold_tie_to_next_lower(means, budget):
    """Past a tie at the cut, step to the next lower mean (not a fixed step): the reviewer's rule, fixed."""
    s, c0 = sorted(means), min(budget, len(means))
    if not s:
        return 0.0
    while 0 < c0 < len(s) and s[c0 - 1] == s[c0]:
        c0 -= 1
    return float(s[c0 - 1]) if c0 else s[0] - 1.0


VARIANTS["05.discounted_returns"] += [_returns_new_tensor_early]
VARIANTS["05.early_termination_threshold"] += [_threshold_tie_to_next_lower]


def _returns_child_subtracted(node, gamma):      # R[j] -= gamma * ...: the child's part subtracted, a sign slip
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] -= gamma * _returns_child_subtracted(child, gamma).mean()
    return R


def _returns_reward_subtracted(node, gamma):     # gamma * mean(child's returns) - r_j: the reward subtracted
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] = gamma * _returns_reward_subtracted(child, gamma).mean() - R[j]
    return R


def _returns_negated(node, gamma):               # -R: the returns negated, as a cost
    return -discounted_returns(node, gamma)


def _returns_gamma_on_sum(node, gamma):          # gamma * (r_j + mean(child's returns)): gamma on r_j too
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] = gamma * (R[j] + _returns_gamma_on_sum(child, gamma).mean())
    return R


def _threshold_counts_above(means, budget, strict=True):   # sum(m > v) <= budget: the groups CUT counted, the
    t = min(means) - 1.0 if means else 0.0                   # comparison reversed (strict=False: sum(m >= v))
    for v in sorted(means):
        if sum((m > v) if strict else (m >= v) for m in means) <= budget:
            t = v
    return t


def _threshold_clamped_at_zero(means, budget):   # max(0.0, t): t = 0 still expands the groups whose mean is 0
    return max(0.0, choose_threshold(means, budget))


def _threshold_zero_by_default(means, budget):   # 0.0 when no group fits: expands the groups whose mean is 0
    t = 0.0
    for v in sorted(means):
        if sum(m <= v for m in means) <= budget:
            t = v
    return t


def _threshold_first_that_does_not_fit(means, budget):   # read as "expands the groups strictly BELOW t": the first
    s = sorted(means)                                      # mean that does not fit, which t = it expands too
    if not s:
        return 0.0
    return s[budget] if budget < len(s) else s[-1] + 1.0


def _threshold_minus_one_for_none(means, budget):   # -1.0 when no group fits: the notebook's means are in [0, 4],
    t = -1.0                                          # so -1.0 is below every group
    for v in sorted(means):
        if sum(m <= v for m in means) <= budget:
            t = v
    return t


MISTAKES["05.discounted_returns"] += [
    _returns_child_subtracted,                                            # [49] r_j - gamma * mean: sign slip
    _returns_reward_subtracted,                                           # [50] gamma * mean - r_j: sign slip
    _returns_negated,                                                     # [51] -R: the returns negated
    _returns_gamma_on_sum,                                                # [52] gamma * (r_j + mean)
]
MISTAKES["05.early_termination_threshold"] += [
    _threshold_counts_above,                                              # [37] sum(m > v) <= budget: reversed
    lambda m, b: _threshold_counts_above(m, b, strict=False),             # [38] sum(m >= v) <= budget: reversed
    _threshold_clamped_at_zero,                                           # [39] max(0.0, t)
    _threshold_zero_by_default,                                           # [40] 0.0 when no group fits
    _threshold_first_that_does_not_fit,                                   # [41] the first mean that does not fit
]
VARIANTS["05.early_termination_threshold"] += [_threshold_minus_one_for_none]


def _returns_last_left_out(node, gamma):         # range(len(R) - 1): stops one short, the last joint action's child lost
    R = node.rewards.clone()
    for j in range(len(R) - 1):
        if j in node.children:
            R[j] += gamma * _returns_last_left_out(node.children[j], gamma).mean()
    return R


def _returns_gamma_first_child_only(node, gamma):   # gamma on the first child only, the others added undiscounted
    R = node.rewards.clone()
    for k, (j, child) in enumerate(node.children.items()):
        R[j] += (gamma if k == 0 else 1) * _returns_gamma_first_child_only(child, gamma).mean()
    return R


MISTAKES["05.discounted_returns"] += [
    _returns_last_left_out,                                               # [53] range(len(R) - 1): last j left out
    _returns_gamma_first_child_only,                                      # [54] gamma on the first child only
]
MISTAKES["05.early_termination_threshold"] += [
    lambda m, b: str(choose_threshold(m, b)),                             # [42] the threshold as a string
    lambda m, b: int(choose_threshold(m, b)),                             # [43] int(): the decimals dropped
    lambda m, b: round(choose_threshold(m, b), 1),                        # [44] round(t, 1): below the last mean
]


def _returns_gamma_rounded(node, gamma, digits=1):   # round(gamma, 1): right at 0.9, 0.5, 1, 0; 0.875 computed as 0.9
    g = round(gamma, digits)
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += g * _returns_gamma_rounded(child, gamma, digits).mean()
    return R


def _returns_float_as_copy(node, gamma):         # .float() read as a copy: node.rewards is float32, so it is no copy
    R = node.rewards.float()
    for j, child in node.children.items():
        R[j] += gamma * _returns_float_as_copy(child, gamma).mean()
    return R


def _threshold_expanded_below(means, budget):   # read as "expanded iff mean < tau": the first mean that does not
    s = sorted(means)                              # fit (a tie stepped down), which tau = it expands too
    if not s:
        return 0.0
    k = min(budget, len(s))
    while 0 < k < len(s) and s[k - 1] == s[k]:
        k -= 1
    return s[k] if k < len(s) else s[-1] + 1


MISTAKES["05.discounted_returns"] += [
    _returns_gamma_rounded,                                               # [55] round(gamma, 1): 0.875 as 0.9
    lambda node, gamma: _returns_gamma_rounded(node, gamma, 2),           # [56] round(gamma, 2): 0.875 as 0.88
    _returns_float_as_copy,                                               # [57] node.rewards.float(): no copy
]
MISTAKES["05.early_termination_threshold"] += [
    _threshold_expanded_below,                                            # [45] expanded iff mean < tau
]
