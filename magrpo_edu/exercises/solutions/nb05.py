"""Notebook 05: solutions and typical mistakes."""


def discounted_returns(node, gamma):
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * discounted_returns(child, gamma).mean()
    return R


def choose_threshold(means, budget):
    t = min(means) - 1.0                      # below every group: nothing is expanded
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


SOLUTIONS = {
    "05.discounted_returns": discounted_returns,
    "05.early_termination_threshold": choose_threshold,
}

MISTAKES = {
    "05.discounted_returns": [_undiscounted, _child_rewards, _in_place],
    "05.early_termination_threshold": [
        lambda means, budget: sorted(means)[budget - 1] if budget else min(means) - 1,   # ties: one more group expanded
        lambda means, budget: sorted(means)[min(budget, len(means) - 1)],                # cut at ">= t": one group too many
        lambda means, budget: sorted(means, reverse=True)[budget - 1] if budget else max(means),  # cuts the WORST groups
    ],
}
