"""Checks of notebook 05's exercises (multi-turn): the discounted returns of a rollout tree, and an
early-termination threshold that fits the second turn into a budget of expanded groups."""
from __future__ import annotations

import copy
import functools
import math
import numbers
import re

import torch

from ..algorithm import Node, compute_returns
from ..config import MAGRPOConfig
from . import ExerciseFailed, call_answer, exercise, is_bool, not_a_wrapper, not_the_library, plain_number


_NUMBER = re.compile(r"(?<![\w.'])\d+(?:\.\d+)?(?:e[-+]?\d+)?(?!\w)")


def _digits(literal: str) -> int:
    """The number of significant digits a number is written with ("0.13749999999999996": 17, "2.0625": 5)."""
    return len(literal.split("e")[0].replace(".", "").lstrip("0")) or 1


def _tidy(msg: str) -> str:
    """The message with every number written with more than 6 significant digits (a float's raw repr, such as
    0.13749999999999996, or 2.1479166666666667) shortened to the fewest digits, 6 or more, that still tell it apart
    from every other number the message shows (0.5 and the float32 0.5000000596046448 stay apart as 0.5 and
    0.50000006). Numbers in quotes (a learner's string) are left as they are."""
    found = [m.group() for m in _NUMBER.finditer(msg)]
    long = {w for w in found if ("." in w or "e" in w) and _digits(w) > 6}
    if not long:
        return msg
    digits = dict.fromkeys(long, 6)

    def shown(w):
        return format(float(w), f".{digits[w]}g") if w in digits and digits[w] < _digits(w) else w

    for _ in range(12):                      # a clash: two different numbers shown alike; show those longer
        by_text = {}
        for w in found:
            by_text.setdefault(shown(w), set()).add(float(w))
        clash = {w for w in long if len(by_text[shown(w)]) > 1 and digits[w] < _digits(w)}
        if not clash:
            break
        for w in clash:
            digits[w] += 1
    return _NUMBER.sub(lambda m: shown(m.group()), msg)


def _tidied(check):
    """A check whose refusal shows numbers by `_tidy` (no raw float reprs)."""
    @functools.wraps(check)
    def run(answer):
        try:
            return check(answer)
        except ExerciseFailed as exc:
            raise ExerciseFailed(_tidy(str(exc))) from None
    return run


def _fmt(t) -> list:
    return [round(float(x), 4) for x in (t.flatten().tolist() if isinstance(t, torch.Tensor) else t)]


def _node(depth, rewards, children=None):
    return Node(depth, ["", ""], [[], []], rewards=torch.tensor(rewards), children=children or {})


def _shape(node):
    """The tree's structure: which joint action of each node has a child, recursively."""
    return tuple((j, _shape(node.children[j])) for j in sorted(node.children))


def _nodes(node):
    """The node and all its descendants, depth first."""
    out = [node]
    for j in sorted(node.children):
        out += _nodes(node.children[j])
    return out


def _discount_all(node, gamma):
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += _discount_all(child, gamma).mean()
    return gamma * R if node.children else R


def _by_depth(node, gamma):
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma ** child.depth * _by_depth(child, gamma).mean()
    return R


def _by_position(node, gamma):
    R = node.rewards.clone()
    for j, child in enumerate(node.children.values()):
        R[j] += gamma * _by_position(child, gamma).mean()
    return R


def _sum_children(node, gamma):
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * _sum_children(child, gamma).sum()
    return R


def _reduce_children(node, gamma, reduce):
    """The returns with the child's returns reduced by `reduce` (max, median) instead of their mean."""
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * reduce(_reduce_children(child, gamma, reduce))
    return R


def _discounted_once(node, gamma, top=True):
    """gamma at the top node only: the child's UNdiscounted returns, so turn 3 counts gamma, not gamma ** 2."""
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += (gamma if top else 1.0) * _discounted_once(child, gamma, False).mean()
    return R


def _pooled_children(node, gamma, cat=False):
    """ONE mean over all the node's children (of their means, or of all their returns) added to every j with a child."""
    R = node.rewards.clone()
    if node.children:
        kids = [_pooled_children(c, gamma, cat) for c in node.children.values()]
        pooled = torch.cat(kids).mean() if cat else torch.stack([k.mean() for k in kids]).mean()
        for j in node.children:
            R[j] += gamma * pooled
    return R


def _first_child_only(node, gamma, for_all=False):
    """Only the first child of node.children counts: for its own joint action (or, for_all, for every j with a child)."""
    R = node.rewards.clone()
    if node.children:
        j0, first = next(iter(node.children.items()))
        part = gamma * _first_child_only(first, gamma, for_all).mean()
        for j in (node.children if for_all else [j0]):
            R[j] += part
    return R


def _last_left_out(node, gamma):
    """R_j = r_j + gamma * mean(child j's returns) for j in range(len(R) - 1) only: the LAST joint action's child never
    counted (range(len(R) - 1) read as "up to the last"), at every level."""
    R = node.rewards.clone()
    for j in range(len(R) - 1):
        if j in node.children:
            R[j] += gamma * _last_left_out(node.children[j], gamma).mean()
    return R


def _gamma_on_first_child(node, gamma):
    """gamma on the first child of node.children only: the other children's mean returns added undiscounted (a factor
    1), at every level."""
    R = node.rewards.clone()
    for k, (j, child) in enumerate(node.children.items()):
        R[j] += (gamma if k == 0 else 1.0) * _gamma_on_first_child(child, gamma).mean()
    return R


def _over_siblings(node, gamma):
    """The child's returns summed, divided by the number of the PARENT's children (not by the child's G)."""
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * _over_siblings(child, gamma).sum() / len(node.children)
    return R


def _gamma_on_reward(node, gamma, leaves=True):
    """gamma on the joint action's own reward instead of the child's mean: R_j = gamma * r_j + mean(child j's returns)
    (with `leaves`, a leaf's rewards multiplied by gamma too; without, only the r_j that have a child)."""
    R = gamma * node.rewards.clone() if leaves else node.rewards.clone()
    for j, child in node.children.items():
        R[j] = (R[j] if leaves else gamma * R[j]) + _gamma_on_reward(child, gamma, leaves).mean()
    return R


def _pooled_for_every_j(node, gamma, cat=False):
    """ONE mean over all the node's children added to EVERY joint action, those without a child too."""
    R = node.rewards.clone()
    if node.children:
        kids = [_pooled_for_every_j(c, gamma, cat) for c in node.children.values()]
        R = R + gamma * (torch.cat(kids).mean() if cat else torch.stack([k.mean() for k in kids]).mean())
    return R


def _reward_dropped(node, gamma):
    """R_j = gamma * mean(child j's returns) where j has a child: r_j overwritten (R[j] = ..., not R[j] += ...)."""
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] = gamma * _reward_dropped(child, gamma).mean()
    return R


def _one_minus_gamma(node, gamma, leaves=False):
    """R_j = (1 - gamma) * r_j + gamma * mean(child j's returns), a weighted average that shrinks r_j (with `leaves`,
    every reward, a leaf's too, multiplied by 1 - gamma)."""
    R = (1 - gamma) * node.rewards.clone() if leaves else node.rewards.clone()
    for j, child in node.children.items():
        R[j] = (R[j] if leaves else (1 - gamma) * R[j]) + gamma * _one_minus_gamma(child, gamma, leaves).mean()
    return R


def _descendants(node, gamma, of_means=False):
    """R_j = r_j + gamma * ONE mean of the rewards of every node below j (all their rewards pooled, or `of_means`, the
    mean of each node's mean reward): the turns further down not discounted again, not averaged node by node."""
    R = node.rewards.clone()
    for j, child in node.children.items():
        below = _nodes(child)
        R[j] += gamma * (torch.stack([nd.rewards.mean() for nd in below]).mean() if of_means
                         else torch.cat([nd.rewards for nd in below]).mean())
    return R


def _cut_filled(node, gamma):
    """A joint action without a child given gamma times the mean of its siblings' children's mean returns."""
    R = node.rewards.clone()
    kids = {j: _cut_filled(c, gamma).mean() for j, c in node.children.items()}
    for j in range(len(R)):
        if j in kids:
            R[j] += gamma * kids[j]
        elif kids:
            R[j] += gamma * torch.stack(list(kids.values())).mean()
    return R


def _pooled_by_depth(node, gamma, of_means=False):
    """R_j = r_j + sum over k >= 1 of gamma ** k times ONE mean of the rewards of every node k turns below j (all their
    rewards pooled, or `of_means`, the mean of each node's mean reward): each depth pooled, not averaged node by node,
    so where a branch was cut early the surviving branches' rewards stand in for it."""
    R = node.rewards.clone()
    for j, child in node.children.items():
        level, k = [child], 1
        while level:
            R[j] += gamma ** k * (torch.stack([nd.rewards.mean() for nd in level]).mean() if of_means
                                  else torch.cat([nd.rewards for nd in level]).mean())
            level, k = [c for nd in level for c in nd.children.values()], k + 1
    return R


def _over_own_size(node, gamma):
    """The child's returns summed, divided by THIS node's number of joint actions, len(node.rewards) (not the child's)."""
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * _over_own_size(child, gamma).sum() / len(node.rewards)
    return R


def _child_subtracted(node, gamma):
    """R_j = r_j - gamma * mean(child j's returns): the child term SUBTRACTED (R[j] -= ...), at every level."""
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] -= gamma * _child_subtracted(child, gamma).mean()
    return R


def _child_subtracted_at_top(node, gamma):
    """R_j = r_j - gamma * mean(child j's RIGHT returns): the child term subtracted at this node only."""
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] -= gamma * compute_returns(copy.deepcopy(child), gamma).mean()
    return R


def _reward_subtracted(node, gamma):
    """R_j = gamma * mean(child j's returns) - r_j: the reward subtracted from the child term, at every level."""
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] = gamma * _reward_subtracted(child, gamma).mean() - R[j]
    return R


def _gamma_on_sum(node, gamma):
    """R_j = gamma * (r_j + mean(child j's returns)) where j has a child: gamma on the joint action's own reward too."""
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] = gamma * (R[j] + _gamma_on_sum(child, gamma).mean())
    return R


def _shares_storage(got, node) -> bool:
    """Whether the tensor `got` is, or views, the rewards of the node or of a node below it (the same storage): a
    caller that changes the returns in place (R -= R.mean()) would change the tree's rewards too."""
    try:
        ptr = got.untyped_storage().data_ptr()
        return any(got is nd.rewards or (ptr != 0 and ptr == nd.rewards.untyped_storage().data_ptr())
                   for nd in _nodes(node))
    except Exception:  # noqa: BLE001 - a tensor without a storage to compare is no alias
        return False


def _cut_branch_hint(got, want, tree, gamma) -> str:
    """The sentence for returns right at every joint action of the node that has a child, wrong at one without (a
    branch cut early): "" when that is not the pattern (the node has no cut joint action, or a joint action with a
    child is wrong too)."""
    kids = sorted(tree.children)
    cut = [j for j in range(len(tree.rewards)) if j not in tree.children]
    got = got.float()
    if not kids or not cut or not torch.allclose(got[kids], want[kids], atol=1e-5) or torch.allclose(
            got[cut], want[cut], atol=1e-5):
        return ""
    sib = want[kids].mean()
    r = tree.rewards[cut].float()
    readings = [(r + gamma * sib, "r_j plus gamma times the mean of its siblings' RETURNS (the joint actions with a "
                                  "child)"),
                (sib.expand(len(cut)), "the mean of its siblings' returns in place of its own"),
                (r + gamma * torch.stack([compute_returns(copy.deepcopy(tree.children[j]), gamma).mean()
                                          for j in kids]).mean(), "the mean of its siblings' children's returns")]
    how = next((said for value, said in readings if torch.allclose(got[cut], value, atol=1e-5)), None)
    return ((f" Your returns are right for the joint actions with a child ({kids}) but not for those without one "
             f"({cut}: branches cut early, here {_fmt(got[cut])} against their rewards {_fmt(r)})")
            + (f": you gave a joint action without a child {how}." if how else ".")
            + " A joint action without a child has no next turn, so its return is its own reward alone, R_j = r_j: "
            "fill nothing in for it (its siblings' returns are theirs, not its). Add a child term only for the j in "
            "node.children.")


def _partial(tree) -> bool:
    """Whether some node of the tree has children for some of its joint actions but not all."""
    return any(nd.children and len(nd.children) < len(nd.rewards) for nd in _nodes(tree))


def _rounded_digits(got: list, want: list):
    """The number of decimals k (0 to 4) the returns `got` were rounded to from `want`, in any rounding mode (torch
    rounds a half to even, Python's round sees float32's binary value): every got a multiple of 10 ** -k within half a
    unit of its want; None when no k gives it."""
    for k in range(5):
        unit = 10.0 ** -k
        if all(math.isfinite(g) and abs(g - w) <= unit / 2 + 1e-5 and abs(g / unit - round(g / unit)) < 0.02
               for g, w in zip(got, want)):
            return k
    return None


def _trainer_tree(tree, gamma=0.9):
    """A copy of the tree as the notebook's next cell sees it: every node's returns and advantages already filled in
    by the trainer (at its discount, 0.9)."""
    out = copy.deepcopy(tree)
    for nd in _nodes(out):
        nd.returns = compute_returns(copy.deepcopy(nd), gamma)
        nd.advantages = nd.returns - nd.returns.mean()
    return out


_FIELDS = (("rewards", "immediate rewards"), ("returns", "returns"), ("advantages", "advantages among siblings"))


def _stored_top(node, gamma):
    """The node's stored returns, node.returns, whatever the gamma: a cache read without checking its gamma."""
    return node.returns.clone()


def _stored_child(node, gamma):
    """R_j = r_j + gamma * mean of child j's STORED returns (child.returns, filled in at the trainer's gamma)."""
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] += gamma * child.returns.mean()
    return R


def _check_stale_returns(got, tree, mine, gamma, what, trainer_gamma=0.9) -> None:
    """Refuse returns that differ from the recurrence's at this gamma on a tree whose nodes already carry the
    trainer's returns (filled in at trainer_gamma): node.returns or child.returns read as a cache."""
    want = compute_returns(copy.deepcopy(tree), gamma)
    if isinstance(got, torch.Tensor) and got.shape == want.shape and torch.allclose(got.float(), want, atol=1e-5):
        return
    shown = _fmt(got) if isinstance(got, torch.Tensor) else repr(got)
    said = (f"{what}, as the trainer hands it over (every node's returns and advantages already filled in, at gamma "
            f"{trainer_gamma}), gamma = {gamma}: the returns are {_fmt(want)}, you returned {shown}.")
    end = (" Compute R from node.rewards and node.children alone, at the gamma you are given: the notebook calls "
           "discounted_returns(node, 0.0) and (node, 1.0) on nodes the trainer filled in at its own discount.")
    if isinstance(got, torch.Tensor) and _matches(got, mine, gamma, _stored_top):
        raise ExerciseFailed(said + f" You returned the node's stored returns, node.returns (computed at another "
                             f"gamma, the trainer's {trainer_gamma}), as a cache: they are right only at that gamma, "
                             "and a fresh tree (returns None) hides it. Do not read node.returns." + end)
    if isinstance(got, torch.Tensor) and _matches(got, mine, gamma, _stored_child):
        raise ExerciseFailed(said + f" You added the mean of a child's STORED returns, child.returns (computed at "
                             f"another gamma, the trainer's {trainer_gamma}), as a cache: below the node the discount "
                             "is the trainer's, not yours. Recurse: discounted_returns(child, gamma), never "
                             "child.returns." + end)
    raise ExerciseFailed(said + " Your function gives other returns when the nodes already carry returns: do not "
                         "read node.returns, child.returns or node.advantages (the trainer's, at its own gamma)." + end)


def _check_node_fields(fn) -> None:
    """Refuse an answer that reads a node's stored returns as a cache (the trainer filled them in at gamma 0.9: the
    answer must still be the recurrence's at the gamma it is given), or changes a node's rewards, returns or
    advantages: the next cell compares the answer's returns with the trainer's node.returns, and its advantages with
    node.advantages."""
    for what, tree in _trees():
        for gamma in (0.9, 0.5, 0.0):
            mine = _trainer_tree(tree)
            before = [{f: getattr(nd, f).clone() for f, _ in _FIELDS} for nd in _nodes(mine)]
            got = call_answer(fn, mine, gamma, said=lambda e, what=what: _returns_crash(e, what, ""))
            _check_stale_returns(got, tree, _trainer_tree(tree), gamma, what)
            for k, (nd, was) in enumerate(zip(_nodes(mine), before)):
                for field, kind in _FIELDS:
                    now = getattr(nd, field)
                    if isinstance(now, torch.Tensor) and now.shape == was[field].shape and torch.equal(now, was[field]):
                        continue
                    whose = "of the node it was given" if k == 0 else "of a CHILD node"
                    shown = _fmt(now) if isinstance(now, torch.Tensor) else repr(now)
                    raise ExerciseFailed(
                        f"{what}, gamma = {gamma}: your returns are right, but your function changed "
                        f"node.{field} {whose} (the trainer's {kind}, {_fmt(was[field])}; after your call: {shown}). Leave every "
                        "node as it was: do not assign to node.returns, node.advantages or node.rewards, nor change "
                        "them in place; only return R. The next cell compares your returns with the trainer's "
                        "node.returns and node.advantages, and would stop with a bare AssertionError.")


def _matches(got, tree, gamma, *readings) -> bool:
    """Whether `got` is one of the readings' returns on this tree at this gamma (a reading that crashes: no)."""
    for reading in readings:
        try:
            if torch.allclose(got.float(), reading(copy.deepcopy(tree), gamma).float(), atol=1e-5):
                return True
        except Exception:  # noqa: BLE001 - a reading that does not apply to this tree
            pass
    return False


# 0.875, a gamma with three decimals: an answer that rounds gamma (round(gamma, 1), or to 2 decimals) is right at the
# others; 0.0 last: the paper's credit, which the notebook calls too (no child term at all)
_GAMMAS = (0.9, 0.5, 1.0, 0.875, 0.0)


def _trees():
    """Trees as the library builds them (G = 2 or 4 joint actions per node): a leaf alone, two turns,
    three turns with one branch cut by early termination (a joint action without a child), children for only some
    joint actions, and four turns (so that only a recursion, not levels written out, gets every return)."""
    yield "a single-turn root (a leaf)", _node(0, [1.0, 3.25])
    yield "two turns, G = 4", _node(0, [3.25, 0.4, 1.75, 1.5], {j: _node(1, r) for j, r in enumerate(
        ([3.25, 1.75, 2.25, 1.75], [0.4, 1.0, 1.0, 2.25], [0.0, 0.4, 1.75, 0.4], [1.0, 1.75, 1.0, 1.75]))})
    mid0 = _node(1, [0.5, 2.0], {0: _node(2, [4.0, 1.0]), 1: _node(2, [0.0, 0.4])})
    mid1 = _node(1, [3.5, 4.0])                       # its siblings averaged above the threshold: no children
    yield "three turns, one branch cut early", _node(0, [1.5, 0.4], {0: mid0, 1: mid1})
    # children is a dict keyed by the joint action j, not a list: only joint actions 3 and 1 have one here
    yield "two turns, children only for joint actions 3 and 1 (a dict keyed by j, not by position)", _node(
        0, [2.0, 0.4, 1.0, 3.0], {3: _node(1, [4.0, 2.0]), 1: _node(1, [0.0, 1.0])})
    # four turns: an answer written out for a fixed number of levels (the root, its children, theirs) stops short
    deep3 = _node(2, [1.0, 0.5], {0: _node(3, [4.0, 0.0]), 1: _node(3, [2.5, 3.0])})
    deep2 = _node(1, [0.4, 2.0], {0: deep3, 1: _node(2, [1.5, 0.0], {1: _node(3, [0.0, 4.0])})})
    yield "four turns", _node(0, [1.0, 2.5], {0: deep2, 1: _node(1, [3.0, 1.0])})


def _levels(node, gamma, levels):
    """The returns computed only `levels` turns below the node (what an answer written out level by level gives)."""
    R = node.rewards.clone()
    if levels > 0:
        for j, child in node.children.items():
            R[j] += gamma * _levels(child, gamma, levels - 1).mean()
    return R


def _turns(node) -> int:
    return 1 + max((_turns(c) for c in node.children.values()), default=0)


def _returns_crash(e: Exception, what: str, by_position: str) -> str:
    """What a crash of discounted_returns says: children indexed by position, or a child's returns read too early."""
    if isinstance(e, (KeyError, IndexError)):
        return f"{what}: your function raised {type(e).__name__}: {e}. " + by_position
    if isinstance(e, AttributeError) and "'int' object" in str(e):
        return (f"{what}: your function raised AttributeError: {e}: iterating over the dict "
                "node.children gives its KEYS, the joint actions j (ints), not the child "
                "nodes. " + by_position)
    if isinstance(e, AttributeError):
        return (f"{what}: your function read an attribute the nodes here do not have yet ({e}). "
                "Returns are what you compute: start from node.rewards and recurse into "
                "node.children; do not read child.returns (the trainer fills it in later, with "
                "the very function you are writing).")
    return f"{what}: your function raised {type(e).__name__}: {e}."


def _reads_as(fn, reading, gammas=(0.9, 0.5, 1.0)) -> bool:
    """Whether `fn` gives `reading`'s returns on every tree of the check and every gamma (a crash: no)."""
    try:
        for _, tree in _trees():
            for gamma in gammas:
                got = fn(copy.deepcopy(tree), gamma)
                if not isinstance(got, torch.Tensor) or got.shape != tree.rewards.shape or not torch.allclose(
                        got.float(), reading(copy.deepcopy(tree), gamma).float(), atol=1e-5):
                    return False
        return True
    except Exception:  # noqa: BLE001 - an answer that crashes somewhere is not this reading
        return False


def _rounded_gamma(fn):
    """(k, how) where fn gives, on every tree of the check and at every gamma, the returns of gamma rounded to k
    decimals (0 to 3) by `how` ("round", "floor" for int(gamma * 10) / 10 or math.floor, "ceil"): right at the gammas
    that have k decimals or fewer, wrong at 0.875. None when no rounding reads so."""
    for k in range(4):
        for how in ("round", "floor", "ceil"):
            if all(_roundings(g, k)[how] == g for g in _GAMMAS):
                continue
            if _reads_as(fn, lambda n, g, k=k, how=how: compute_returns(n, _roundings(g, k)[how]), _GAMMAS):
                return k, how
    return None


def _rounded_gamma_hint(fn, gamma) -> str:
    """The sentence for returns computed at gamma rounded (round(gamma, 1)): "" when that is not the reading."""
    found = _rounded_gamma(fn)
    if found is None:
        return ""
    k, how = found
    used = _roundings(gamma, k)[how]
    what = {"round": f"round(gamma, {k}) gives it" if k else "round(gamma) gives it",
            "floor": (f"int(gamma * {10 ** k}) / {10 ** k} or math.floor cuts it so" if k else
                      "int(gamma) or math.floor gives it"),
            "ceil": "math.ceil rounds it UP so"}[how]
    kept = [g for g in _GAMMAS if _roundings(g, k)[how] == g]
    return (f" You ROUNDED gamma: at gamma = {gamma} your returns are those of gamma = {used:g} ({what}), and at "
            f"every gamma of the check those of gamma rounded to {k} decimal(s), so they are right only where the "
            f"rounding leaves gamma as it is (here {', '.join(map(str, kept))}). Use the argument as given, "
            "unrounded: R[j] += gamma * (mean of child j's returns), and pass gamma on in the recursion; a discount "
            "can have more decimals (0.875, 0.95, 0.99).")


def _check_every_node(fn) -> None:
    """The answer called on every node BELOW the root of each tree (depth 1, 2, 3, as the trainer's tree holds them):
    a node's returns are measured from that node, whatever its depth, so an answer that discounts from the root
    (gamma ** node.depth) is right on a root only."""
    for what, tree in _trees():
        for nd in _nodes(tree)[1:]:
            for gamma in _GAMMAS:
                where = f"{what}, its node at depth {nd.depth} (turn {nd.depth + 1})"
                got = call_answer(fn, copy.deepcopy(nd), gamma,
                                  said=lambda e, where=where: _returns_crash(e, where, ""))
                want = compute_returns(copy.deepcopy(nd), gamma)
                fits = isinstance(got, torch.Tensor) and got.shape == want.shape
                if fits and torch.allclose(got.float(), want, atol=1e-5):
                    continue
                said = (f"{where}, gamma = {gamma}: the returns are {_fmt(want)}, you returned "
                        f"{_fmt(got) if fits else repr(got)} (R_j = r_j + gamma * mean of child j's returns; R_j = r_j "
                        "where j has no child).")
                if fits and torch.allclose(got.float(), gamma ** nd.depth * want, atol=1e-5):
                    raise ExerciseFailed(
                        said + f" Your returns depend on node.depth: you returned gamma ** depth ({gamma} ** "
                        f"{nd.depth}) times the right ones, a return discounted from the ROOT. A node's return is "
                        "measured from that node: R_j = r_j + gamma * (mean of child j's returns) at every depth, its "
                        "own reward r_j undiscounted (the trainer computes every node's returns so, and the "
                        "advantages compare siblings' returns). Do not use node.depth: the recursion already "
                        "multiplies each further turn by one more gamma.")
                raise ExerciseFailed(said + " Your function is right on the root of each tree but not on this node "
                                     "below it: a node's returns are measured from that node, by the same rule at "
                                     "every depth (the trainer computes them at every node of the tree); do not read "
                                     "node.depth or anything else that depends on where the node stands.")


_NO_COPY = (" R = node.rewards is the same tensor, and so is node.rewards.float() (or .to(torch.float32), "
            ".type_as(...)) when node.rewards is already float32, as here: .float() makes no copy when the dtype "
            "does not change, so R[j] += ... writes into node.rewards itself. Only .clone() always copies.")


@exercise("05.discounted_returns")
@_tidied
def check_discounted_returns(fn):
    not_the_library(fn, "discounted_returns", compute_returns)
    aliased = None          # the first (tree, gamma) where the answer returned node.rewards itself (or a view of it)
    for what, tree in _trees():
        for gamma in _GAMMAS:
            mine = copy.deepcopy(tree)
            before, shape = [nd.rewards.clone() for nd in _nodes(mine)], _shape(mine)
            keys = sorted(tree.children)
            gappy = bool(tree.children) and keys != list(range(len(keys)))
            by_position = ((f"node.children is a dict from the joint action j to its child, not a list: here its keys "
                            f"are {list(tree.children)} (only those joint actions have a child), so the i-th child is "
                            "not joint action i's, and a joint action without a child has no entry. ") if gappy else "") + (
                "Loop over node.children.items(), which gives each j with its child.")
            got = call_answer(fn, mine, gamma, said=lambda e, what=what, by_position=by_position:
                              _returns_crash(e, what, by_position))
            if not isinstance(got, torch.Tensor):
                raise ExerciseFailed(f"{what}: return a tensor of shape {tuple(tree.rewards.shape)}, one return per joint "
                                     f"action of the node (got a {type(got).__name__}).")
            if got.shape != tree.rewards.shape:
                extra = (" Drop the extra dimension: keep each R_j a number (R[j] = ..., torch.stack of 0-d tensors), "
                         "not a one-element tensor or list." if got.numel() == tree.rewards.numel() else "")
                raise ExerciseFailed(f"{what}: return a tensor of shape {tuple(tree.rewards.shape)}, one return per joint "
                                     f"action of the node, like node.rewards; yours has shape {tuple(got.shape)}." + extra)
            if got.dtype != tree.rewards.dtype:
                raise ExerciseFailed(f"{what}: your returns are {got.dtype}, node.rewards is {tree.rewards.dtype}: return "
                                     "a tensor of node.rewards' dtype (start from node.rewards.clone(), without .double() "
                                     "or .float()); the cell below compares your returns with the trainer's by "
                                     "torch.allclose, which refuses two dtypes.")
            if _shape(mine) != shape:
                raise ExerciseFailed(f"{what}: your function changed the tree itself (node.children.pop(j), del, "
                                     "clear or an assignment): after your call some node has other children than "
                                     "before. The trainer still needs the tree to compute advantages and losses: read "
                                     "node.children (its .items()), do not take children out of it.")
            if not torch.equal(mine.rewards, before[0]):
                raise ExerciseFailed("your function changed node.rewards in place: start from node.rewards.clone()."
                                     + _NO_COPY)
            if any(not torch.equal(nd.rewards, b) for nd, b in zip(_nodes(mine), before)):
                raise ExerciseFailed(f"{what}: your function changed a CHILD's rewards in place (the recursion wrote its "
                                     "returns into child.rewards); the trainer still needs every node's immediate rewards. "
                                     "Start every node, not only the top one, from a clone." + _NO_COPY)
            want = compute_returns(copy.deepcopy(tree), gamma)
            if torch.allclose(got.float(), want, atol=1e-5):
                if aliased is None and _shares_storage(got, mine):
                    aliased = (what, gamma, "node.rewards itself" if any(got is nd.rewards for nd in _nodes(mine))
                               else "a view of node.rewards (the same storage)")
                continue
            said = (f"{what}, gamma = {gamma}: the returns are {_fmt(want)}, you returned {_fmt(got)} "
                    "(R_j = r_j + gamma * mean of child j's returns; R_j = r_j where j has no child).")
            if tree.children and (rounded := _rounded_gamma_hint(fn, gamma)):
                raise ExerciseFailed(said + rounded)
            centred = want - want.mean()
            if not torch.allclose(centred, want, atol=1e-5) and torch.allclose(got.float(), centred, atol=1e-5):
                raise ExerciseFailed(said + " You returned the advantages, R - R.mean(), not the returns: return R "
                                     "itself, r_j plus gamma times the mean of child j's returns; the cell below "
                                     "subtracts the mean among siblings itself.")
            if tree.children and not torch.allclose(want, tree.rewards, atol=1e-5) and torch.allclose(
                    got.float(), tree.rewards, atol=1e-5):
                raise ExerciseFailed(said + " You returned the node's own rewards: no child's return was added (if you "
                                     "added the mean of a child's ADVANTAGES, R_c - R_c.mean(), that mean is always "
                                     "0). Add gamma times the mean of child j's RETURNS, discounted_returns(child, "
                                     "gamma), to r_j for every j in node.children.")
            if gamma == 0.0 and _reads_as(fn, compute_returns):
                other = next((g for g in (0.9, 1.0, 0.5, 0.99, 0.95, 0.8)
                              if torch.allclose(got.float(), compute_returns(copy.deepcopy(tree), g), atol=1e-5)), None)
                raise ExerciseFailed(
                    said + " Your returns are right at gamma 0.9, 0.5 and 1, but not at gamma = 0: gamma = 0 is the "
                    "paper's credit: no child term at all, R_j = r_j, the node's own rewards (the notebook calls "
                    "discounted_returns(node, 0.0))." + (
                        f" You returned the returns of gamma = {other}: a default such as `gamma = gamma or {other}` "
                        f"(or `if not gamma:`) replaces 0, a falsy number, by {other}; give no default inside the "
                        "function (the caller passes gamma), or test `gamma is None`, never the number's truth."
                        if other is not None else
                        " Do not treat 0 apart: gamma * (mean of child j's returns) is 0 when gamma is 0, so the "
                        "rule itself gives R_j = r_j."))
            if tree.children and torch.allclose(got.float(), compute_returns(copy.deepcopy(tree), 1.0), atol=1e-5):
                raise ExerciseFailed(f"{what}, gamma = {gamma}: you returned the undiscounted returns (CoMLRL 1.4.3's); "
                                     "multiply the child's mean return by gamma.")
            if tree.children and (_reads_as(fn, _descendants) or _reads_as(fn, lambda n, g: _descendants(n, g, True))):
                raise ExerciseFailed(said + " You added ONE mean of the rewards of every node below joint action j: "
                                     "each further turn must be discounted once more, through its own node. Add gamma "
                                     "times the mean of child j's RETURNS, discounted_returns(child, gamma), computed "
                                     "the same way (recursively).")
            flat = tree.rewards.clone()
            for j, child in tree.children.items():
                flat[j] += gamma * child.rewards.mean()
            if torch.allclose(got.float(), flat, atol=1e-5):
                raise ExerciseFailed(f"{what}: you added the mean of the child's immediate REWARDS; add the mean of its "
                                     "RETURNS, computed the same way (recursively), so a third turn counts too.")
            hint = ""
            digits = _rounded_digits(got.float().tolist(), want.tolist())
            deep = [k for k in range(1, _turns(tree) - 1)
                     if torch.allclose(got.float(), _levels(tree, gamma, k), atol=1e-5)]
            if digits is not None:
                hint = (f" You rounded the returns to {digits} decimal(s); return them unrounded (the next cell compares "
                        "them with the trainer's node.returns).")
            elif deep:
                hint = (f" Your returns stop {deep[0]} turn(s) below the node, as if the tree had {deep[0] + 1} turns; "
                        f"this one has {_turns(tree)}. Write the child's returns as the same function of the child "
                        "(call discounted_returns on it: recursion), so any number of turns counts.")
            elif torch.allclose(got.float(), -want, atol=1e-5):
                hint = (" You returned the returns NEGATED, -R (a cost, or a loss, in place of a return): R_j = r_j + "
                        "gamma * (mean of child j's returns), both terms with a plus; a better answer has the LARGER "
                        "return. The trainer turns returns into a loss itself (advantages times log-probs, negated).")
            elif tree.children and gamma != 0.0 and _matches(got, tree, gamma, _child_subtracted,
                                                             _child_subtracted_at_top):
                hint = (" You SUBTRACTED the child's part, R_j = r_j - gamma * (mean of child j's returns) (R[j] -= "
                        "...): a sign slip. The next turn's return ADDS to joint action j's credit (a turn 1 whose "
                        "report is answered well is worth more), it is no baseline to subtract: R_j = r_j + gamma * "
                        "(mean of child j's returns), R[j] += gamma * ..., at every depth (the siblings' mean is "
                        "subtracted later, from R, by the advantages).")
            elif tree.children and gamma != 0.0 and _matches(got, tree, gamma, _reward_subtracted):
                hint = (" You subtracted the joint action's own reward from the child's part, R_j = gamma * (mean of "
                        "child j's returns) - r_j: a sign slip. Both terms ADD: R_j = r_j + gamma * (mean of child "
                        "j's returns), R[j] = R[j] + gamma * ..., at every depth.")
            elif tree.children and gamma not in (0.0, 1.0) and (_reads_as(fn, _gamma_on_sum)
                                                                 or _reads_as(fn, _discount_all)):
                hint = (" You multiplied the joint action's own reward by gamma together with the child's part, "
                        "R_j = gamma * (r_j + mean of child j's returns): gamma belongs on the NEXT turn's part only. "
                        "r_j counts in full: R_j = r_j + gamma * (mean of child j's returns); R_j = r_j where j has "
                        "no child.")
            elif gappy and torch.allclose(got.float(), _by_position(tree, gamma), atol=1e-5):
                hint = " You matched the i-th child with joint action i. " + by_position
            elif gamma != 1.0 and _reads_as(fn, _discounted_once):
                hint = (" You discounted only once: the next turn counts gamma, but the turns after it are not "
                        "discounted further (turn 3 counts gamma, not gamma ** 2; turn 4 gamma, not gamma ** 3): the "
                        "child's returns you add are undiscounted. Add gamma times the child's DISCOUNTED returns, "
                        "computed by the same function (discounted_returns(child, gamma)), so the discount compounds: "
                        "each further turn one more factor gamma.")
            elif gamma not in (0.0, 1.0) and _matches(got, tree, gamma, _one_minus_gamma,
                                                       lambda n, g: _one_minus_gamma(n, g, leaves=True)):
                hint = (" You weighted r_j by (1 - gamma), as in a moving average: the joint action's own reward r_j "
                        "counts in full, R_j = r_j + gamma * (mean of child j's returns); only the next turn's part "
                        "is multiplied by gamma" + (", and a leaf's return is its reward, r_j."
                                                    if not tree.children else "."))
            elif _partial(tree) and _reads_as(fn, _cut_filled):
                hint = (" You gave a joint action WITHOUT a child (a branch cut early) the mean of its siblings' "
                        "children's returns: it has no next turn, so its return is its own reward alone, R_j = r_j. "
                        "Add a child term only for the j in node.children.")
            elif _cut_branch_hint(got, want, tree, gamma):
                hint = _cut_branch_hint(got, want, tree, gamma)
            elif tree.children and _matches(got, tree, gamma, _pooled_by_depth,
                                            lambda n, g: _pooled_by_depth(n, g, of_means=True)):
                hint = (" You pooled each turn below joint action j into ONE mean (gamma ** k times the mean of all "
                        "the rewards k turns down): that is right only where every node below has a child for every "
                        "joint action. Where a branch was cut early (a joint action without a child), that joint "
                        "action's later turns count as nothing in its node's mean; pooling the depth lets the "
                        "surviving branches' rewards stand in for it. Average node by node: add gamma times the mean "
                        "of child j's RETURNS, discounted_returns(child, gamma), computed the same way (recursively).")
            elif gamma not in (0.0, 1.0) and _matches(got, tree, gamma, _gamma_on_reward,
                                                       lambda n, g: _gamma_on_reward(n, g, leaves=False)):
                hint = (" You multiplied the joint action's own reward r_j by gamma and added the child's mean return "
                        "undiscounted: gamma goes on the NEXT turn's part, R_j = r_j + gamma * (mean of child j's "
                        "returns); r_j itself counts in full" + (", and a leaf's return is its reward, r_j."
                                                                 if not tree.children else "."))
            elif tree.children and gamma != 0.0 and _matches(got, tree, gamma, _reward_dropped):
                hint = (" You dropped r_j where j has a child (R[j] = gamma * ..., which overwrites the reward): "
                        "R_j is the joint action's OWN reward r_j PLUS gamma times the mean of child j's returns; "
                        "write R[j] = R[j] + gamma * ..., or R[j] += gamma * ..., from R = node.rewards.clone().")
            elif tree.children and _matches(got, tree, gamma, _pooled_children,
                                            lambda n, g: _pooled_children(n, g, cat=True), _pooled_for_every_j,
                                            lambda n, g: _pooled_for_every_j(n, g, cat=True)):
                full = len(tree.children) == len(tree.rewards)      # every joint action has a child: both readings
                every = not full and not _matches(got, tree, gamma, _pooled_children,
                                                  lambda n, g: _pooled_children(n, g, cat=True))
                hint = (" You added ONE mean, pooled over ALL the node's children's returns, to every joint action"
                        + (" that has a child: the same bonus whatever the joint action led to."
                           if not (full or every) else
                           (" (those without a child too)" if every else "")
                           + ": the same bonus for all, which the sibling mean then takes away again, so the next "
                           "turn changes no advantage.")
                        + " Each joint action j adds gamma times the mean return of ITS OWN child, node.children[j] "
                        "(the turn after a good first answer is not the turn after a bad one); a joint action without "
                        "a child adds nothing.")
            elif _reads_as(fn, _first_child_only):
                hint = (" Only the FIRST child counts in your returns: the other joint actions with a child got only "
                        "their own reward. Every joint action j with a child adds gamma times the mean of its child's "
                        "returns: loop over all of node.children.items(), not only the first.")
            elif _reads_as(fn, lambda n, g: _first_child_only(n, g, for_all=True)):
                hint = (" Every joint action with a child got the FIRST child's mean return: each joint action j adds "
                        "the mean return of ITS OWN child, node.children[j]; loop over node.children.items().")
            elif _reads_as(fn, _over_siblings):
                hint = (" You divided the sum of child j's returns by the number of the node's children "
                        "(len(node.children)), not by the child's own number of joint actions: R_j adds gamma times "
                        "the MEAN of child j's returns, child_returns.mean(), and a node may have children for only "
                        "some of its joint actions (early termination cuts the others).")
            elif tree.children and torch.allclose(got.float(), _discount_all(tree, gamma), atol=1e-5) and gamma != 1.0:
                hint = " You discounted the joint action's own reward too: only the next turn's part is multiplied by gamma."
            elif gamma != 1.0 and torch.allclose(got.float(), _by_depth(tree, gamma), atol=1e-5):
                hint = (" You discounted by gamma ** depth inside the recursion: the recursion already multiplies each "
                        "further turn by one more gamma, so use gamma itself at every level.")
            elif tree.children and any(len(c.rewards) > 1 for c in tree.children.values()) and torch.allclose(
                    got.float(), _sum_children(tree, gamma), atol=1e-5):
                hint = " You SUMMED the child's returns; R_j adds gamma times their MEAN (one child node, G joint actions)."
            elif tree.children and any(len(c.rewards) > 1 for c in tree.children.values()) and torch.allclose(
                    got.float(), _reduce_children(tree, gamma, lambda t: t.max()), atol=1e-5):
                hint = (" You took the LARGEST of the child's returns (the best continuation); R_j adds gamma times "
                        "their MEAN: the next turn's value is averaged over the G joint actions sampled there.")
            elif tree.children and any(len(c.rewards) > 1 for c in tree.children.values()) and torch.allclose(
                    got.float(), _reduce_children(tree, gamma, lambda t: t.median()), atol=1e-5):
                hint = (" You took the MEDIAN of the child's returns (torch's median is the lower middle value for an "
                        "even count); R_j adds gamma times their MEAN.")
            elif tree.children and gamma not in (0.0, 1.0) and _reads_as(fn, lambda n, g: compute_returns(n, g * g)):
                hint = (f" You discounted twice: your returns are those of gamma * gamma = {gamma * gamma:g} (gamma * "
                        "gamma * mean of child j's returns, or gamma ** 2), so the next turn counts gamma ** 2 and "
                        "every turn after it two more factors. Multiply the child's mean return by gamma ONCE: the "
                        "child's returns, discounted_returns(child, gamma), already carry the discount of the turns "
                        "below it, so the recursion compounds gamma by itself.")
            elif tree.children and (other := next((g for g in (0.9, 0.99, 0.95, 0.8, 0.5, 0.7, 0.6) if g != gamma
                                                   and _reads_as(fn, lambda n, _g, g=g: compute_returns(n, g))),
                                                  None)) is not None:
                hint = (f" At gamma = {gamma} you returned the gamma = {other} returns: your function gives the same "
                        f"returns whatever gamma it is given, as if {other} were written into it (R[j] += {other} * "
                        "...). Use the argument: R[j] += gamma * (mean of child j's returns), and pass gamma on in "
                        "the recursion, discounted_returns(child, gamma); the notebook calls it at 0.0 and 1.0 too.")
            elif tree.children and _reads_as(fn, _over_own_size):
                hint = (" You divided the sum of child j's returns by THIS node's number of joint actions "
                        f"(len(node.rewards), {len(tree.rewards)} here), not by the child's own ("
                        f"{sorted({len(c.rewards) for c in tree.children.values()})} here): R_j adds gamma times the "
                        "MEAN of child j's returns, child_returns.mean(), which divides by the child's size; a child "
                        "need not hold as many joint actions as its parent.")
            elif len(tree.rewards) - 1 in tree.children and _matches(got, tree, gamma, _last_left_out):
                last = len(tree.rewards) - 1
                hint = (f" You left out the LAST joint action: j = {last} has a child, but your R_{last} is its reward "
                        f"alone, {_fmt(got[last:])[0]} (the same slip at every node below). A loop over range(len(R) - 1) "
                        f"stops one short: range(n) already ends at n - 1, so range(len(R) - 1) never reaches j = "
                        f"{last}. Loop over node.children.items(), which gives every j that has a child, the last "
                        "one too (or over range(len(R)), with `if j in node.children`).")
            elif len(tree.children) > 1 and gamma not in (0.0, 1.0) and _matches(got, tree, gamma,
                                                                                 _gamma_on_first_child):
                first, *rest = list(tree.children)
                hint = (f" Only the FIRST child's mean return (j = {first} here) was multiplied by gamma; the other "
                        f"children's (j = {', '.join(map(str, rest))}) were added undiscounted, times 1, as if their "
                        "next turn counted in full (a factor set once, say `gamma if k == 0 else 1`, or a gamma used "
                        "up after the first child). Every joint action j with a child adds gamma times the mean of its "
                        "child's returns: R[j] += gamma * discounted_returns(child, gamma).mean() for every j in "
                        "node.children, at every depth.")
            raise ExerciseFailed(said + hint)
    if aliased is not None:
        what, gamma, how = aliased
        raise ExerciseFailed(
            f"{what}, gamma = {gamma}: your returns are right, but the tensor you returned is {how}, not "
            "a new tensor (a `return node.rewards` for a leaf, or when gamma == 0, does it; so does "
            "node.rewards.float(), no copy when node.rewards is already float32): a caller that changes "
            "the returns in place, R -= R.mean() to get the advantages, would change the node's rewards with them, "
            "and the trainer still needs them. Return a new tensor: start from R = node.rewards.clone() in every "
            "case (a leaf, gamma = 0 too), or return node.rewards.clone().")
    _check_every_node(fn)
    not_a_wrapper(fn, (copy.deepcopy(next(t for _, t in _trees() if t.children)), 0.9), "discounted_returns",
                  compute_returns, how="from the recurrence in the text, R_j = r_j + gamma * (mean of child j's "
                                       "returns)")
    _check_node_fields(fn)


# the first: the notebook's own six means (section 4), two of them only 0.0625 apart; then ties, close means with a
# tie at the cut, groups whose rewards are all 0 (common in coding: a missing entry point stops the scoring at 0), so
# a threshold of 0 still expands them, and last means closer than 0.0625, as the coding reward gives them at G = 4:
# one sample without its aux costs 0.4 / 4 = 0.1 of the mean, one failed test of four 0.25 / 4 = 0.0625 (0.0375
# apart; two failed tests against one aux 0.025), one of five 0.2 / 4 = 0.05, and two aux against three tests
# 0.2 - 0.1875 = 0.0125; with seven tests three more passed in one sample, 3/7 / 4 = 0.1071, against one aux, 0.0071
# (rounded to 4 decimals, as the notebook's means are): no fixed margin above the last mean that fits passes for a
# threshold (these means are ones float32 rounds up or keeps, so np.float32 of the right threshold still counts);
# then two groups whose means are closer still, 1e-4 and 1e-6 apart (a mean over many tests, or the float32 means the
# trainer compares, unrounded), so that no fixed margin above the last mean that fits (0.005, 1e-3, 1e-5) passes:
# the threshold must be read off the means: at or above the last that fits and below the next one up (a group is cut
# only when its mean is strictly above the threshold, so the notebook's own tau = 2.125 equals a mean).
# Every budget from 0 to two more than the number of groups; last, an empty list of groups (a step whose batch holds
# no problem to expand): rollout_tree cuts a group when its mean r > t, so with no group every finite t expands the 0
# groups there are, which fits any budget: any finite number is right, and the answer must not crash on it.
_GROUPS = ([2.0625, 2.125, 2.25, 2.5, 1.1375, 2.8125], [3.125, 1.5, 0.4, 2.0, 0.4, 3.5], [1.0, 1.0, 1.0],
           [2.0, 2.0625, 2.0625, 2.125, 1.9375], [2.4, 0.85, 4.0, 0.85, 1.6], [0.0, 1.5, 0.0],
           [2.0625, 2.025, 2.1375, 2.0, 2.2], [2.325, 2.375, 2.275], [2.2, 2.1875, 2.25, 2.1875],
           [1.6071, 1.6, 1.7], [1.5001, 0.75, 1.5, 2.0], [0.750001, 0.5, 0.75, 1.0]) + tuple(
    # last, unrounded float32 means, as rollout_tree compares them (nd.rewards.mean().item()), whose gap a ROUNDED
    # threshold misses: the midpoint of the first two rounded to 2 or 4 decimals is 1.6 (below float32's 1.6, a right
    # threshold there) or 0.75, the next mean up itself; and two neighbouring float32 means (0.5 and the next float32
    # up, 6e-8 apart) that even a margin of 1e-7 passes
    torch.tensor(m, dtype=torch.float32).tolist() for m in ([1.592857, 1.6, 1.7], [0.749999, 0.75, 1.0],
                                                            [0.5, 0.50000006, 1.0],
                                                            # a tie at the cut only 0.002 above the next lower mean
                                                            # (in tree order): a fixed step down from the tie (0.01,
                                                            # 0.05) passes that mean too and expands nothing
                                                            [0.502, 1.0, 0.5, 0.502]))


def _fits(means, budget):
    """The largest mean v whose threshold t = v fits the budget (None when no mean does), and the next mean up."""
    values = sorted(set(means))
    fit = [v for v in values if sum(m <= v for m in means) <= budget]
    last = fit[-1] if fit else None
    nxt = next((v for v in values if last is None or v > last), None)
    return last, nxt


def _groups(k: int) -> str:
    return f"{k} group" if k == 1 else f"{k} groups"


def _mid(a: float, b: float) -> float:
    """The midpoint of two means, as the hints show it (rounded off float noise, still strictly between them)."""
    m = (a + b) / 2
    r = round(m, 12)
    return r if a < r < b else m


_WHY_MID = ("(a group is cut only when its mean r is strictly ABOVE the threshold, so every value from the first up "
            "to but not including the second expands the same groups; use the means as given, unrounded)")


def _between(last, nxt) -> str:
    """The advice "a threshold at or above the last mean that fits and below the next one up (that mean itself, or
    their midpoint)", the notebook's rule (a group is cut when its mean is strictly above tau: tau = 2.125 there equals
    a mean), for `last` and `nxt` as `_fits` gives them (last None: no group fits; nxt None: every group fits)."""
    if last is None:
        return f"a threshold below the lowest mean, {nxt} (no group fits: expand nothing)"
    if nxt is None:
        return (f"a threshold at or above the largest mean, {last} (every group fits: max(means) itself, or "
                "max(means) + 1.0, clear of any rounding)")
    return (f"a threshold at or above the last mean that fits, {last}, and below the next one up, {nxt}: {last} "
            f"itself, or their midpoint, {_mid(last, nxt)} " + _WHY_MID)


def _indexes_one_too_far(fn, means) -> bool:
    """Whether fn gives sorted(means)[budget] at every budget from 1 to the number of groups less one: the
    budget-th index, one past the last group that fits (indices start at 0)."""
    s = sorted(means)
    if len(s) < 2:
        return False
    try:
        for b in range(1, len(s)):
            t = fn(list(means), b)
            if is_bool(t) or not isinstance(t, numbers.Real) or float(t) != s[b]:
                return False
        return True
    except Exception:  # noqa: BLE001 - an answer that crashes somewhere is not this reading
        return False


def _one_too_far_hint(means, budget, t) -> str:
    """The sentence for a threshold read at sorted(means)[budget]: one index past the last group that fits."""
    last, nxt = _fits(means, budget)
    return (f" You indexed one too far: sorted(means)[{budget}] = {t} is the mean of group number {budget + 1} "
            "counted from the worst (indices start at 0), and a threshold equal to it expands that group too; the "
            "budget-th worst group is sorted(means)[budget - 1]. (The same threshold comes from reading the tree as "
            "expanding only the groups strictly BELOW the threshold, the first mean that does not fit: it expands "
            "those at or below it.) "
            + ("At budget 0 no group fits (and [-1] would be the LARGEST mean): return a number below the lowest mean."
               if budget == 0 else
               "Mind a tie at the cut (step below it), and put the threshold at or above the last mean that fits "
               f"and below the next one up, here {_between(last, nxt)}."))


def _reads_strictly_below(fn) -> bool:
    """Whether fn reads the tree's rule as "a group is expanded when its mean is strictly BELOW the threshold" on every
    group of the check and every budget: it gives the first mean that does not fit (the next one up, as `_fits` gives
    it: sorted(means)[budget], a tie stepped down or not), and a number above the largest mean where every group
    fits (that reading's "expand all")."""
    try:
        for m in _GROUPS:
            for b in range(len(m) + 3):
                _, nxt = _fits(m, b)
                t = plain_number(fn(list(m), b))
                if is_bool(t) or not isinstance(t, numbers.Real) or (
                        t != nxt if nxt is not None else not t > max(m)):
                    return False
        return True
    except Exception:  # noqa: BLE001 - an answer that crashes somewhere is not this reading
        return False


def _strictly_below_hint(means, budget, t) -> str:
    """The sentence for a threshold read off the rule misread as "expanded when the mean is strictly BELOW it"."""
    last, nxt = _fits(means, budget)
    at = sum(m == t for m in means)
    return (" You read the rule the other way round at the threshold itself: as \"a group is expanded when its mean "
            "is strictly BELOW the threshold\", so you returned the first mean that does not fit, sorted(means)"
            f"[{budget}] = {t} (and a number above every mean when all fit). The tree CUTS a group when its mean r is "
            "strictly ABOVE the threshold, so a group whose mean EQUALS the threshold is expanded: your threshold "
            f"expands {'that group' if at == 1 else f'the {at} groups at {t}'} too, past the budget. "
            + ("No group fits here: return a number below the lowest mean, not the lowest mean itself; here put "
               if last is None else
               f"Return the last mean that fits, {last}, not the first that does not (any number from {last} up to "
               f"but not including {t} expands the same groups); here put ") + f"{_between(last, nxt)}.")


def _roundings(x: float, k: int) -> dict:
    """x rounded to k decimals in each way a learner rounds: round(x, k), cut (int(), math.floor, //) and up."""
    unit = 10 ** k
    return {"round": round(x, k), "floor": math.floor(x * unit) / unit, "trunc": math.trunc(x * unit) / unit,
            "ceil": math.ceil(x * unit) / unit}


def _rounded_threshold(fn, means, budget, t):
    """(k, how, ints) where the threshold t is rounded to k decimals (0 to 8) from a threshold that fits (the midpoint
    between the last mean that fits and the next one up, or the last mean that fits itself) by `how` ("round", or
    "floor"/"trunc" for int(), math.floor, //, or "ceil"), where the rounding moved it out of the gap between them,
    and fn rounds so at every budget of these means that leaves a gap (a threshold that is a mean only by chance is
    not read as rounded); `ints` whether fn returned a Python int at every budget (int(x), or round(x) without
    digits). None when t is no such rounded number."""
    last, nxt = _fits(means, budget)
    if last is None or nxt is None or last <= t < nxt:
        return None
    try:
        got = {b: plain_number(fn(list(means), b)) for b in range(1, len(means))}
    except Exception:  # noqa: BLE001 - an answer that crashes at another budget is not this reading
        return None
    if any(is_bool(g) or not isinstance(g, numbers.Real) for g in got.values()):
        return None
    ints = all(isinstance(g, int) for g in got.values())
    order = ("floor", "trunc", "round", "ceil") if ints else ("round", "floor", "trunc", "ceil")

    def rounded(b, k, how):
        lo, hi = _fits(means, b)
        return lo is None or hi is None or any(math.isclose(got[b], _roundings(x, k)[how], rel_tol=0, abs_tol=1e-12)
                                               for x in ((lo + hi) / 2, lo))

    for k in range(9):
        for how in order:
            if any(math.isclose(t, _roundings(x, k)[how], rel_tol=0, abs_tol=1e-12) for x in ((last + nxt) / 2, last)) \
                    and all(rounded(b, k, how) for b in got):
                return k, how, ints
    return None


def _rounded_threshold_hint(fn, means, budget, t) -> str:
    """The sentence for a threshold rounded out of the gap between the last mean that fits and the next one up: which
    rounding (int(), round(x, k), a floor), and where it took the threshold (below the last mean that fits, which is
    then cut; or onto or past the next one up, which is then expanded)."""
    k, how, ints = _rounded_threshold(fn, means, budget, t)
    last, nxt = _fits(means, budget)
    if ints and how in ("floor", "trunc"):
        what = "a whole number, an int: int(x) (like math.floor(x) or x // 1) DROPS the decimals"
    elif ints:
        what = "a whole number, an int: round(x) without a number of digits rounds to a whole number"
    elif how == "round":
        what = f"a ROUNDED number (round(x, {k}) gives it)"
    elif how == "ceil":
        what = f"a number rounded UP to {k} decimal(s) (math.ceil gives it)"
    else:
        what = (f"a number CUT to {k} decimal(s) (int(x * {10 ** k}) / {10 ** k} or math.floor gives it): the "
                "decimals after it are dropped")
    if t < last:
        where = (f" That took it BELOW the last mean that fits, {last}: that group's mean is now above the threshold, "
                 "so it is cut, and the budget is not spent.")
    else:
        where = (f" That took it {'onto' if t == nxt else 'past'} the next mean up, {nxt} (only {nxt - last:g} above the last mean that fits, "
                 f"{last}; the trainer compares unrounded float32 means), which is then expanded too.")
    return (f" Your threshold {t} is {what}." + where + " Do not round the threshold (nor the means): return the last "
            f"mean that fits itself, as it is in `means`, or the midpoint, unrounded; here {_between(last, nxt)}.")


def _threshold_hint(means, budget, t):
    """A sentence for three readings of the budget whatever the count: index -1 at budget 0, a threshold above every
    mean read as "expand nothing", and counting from the best."""
    s = sorted(means)
    if not s:
        return ""
    if budget == 0 and t == s[-1]:
        return (" A threshold at the LARGEST mean expands every group: if you wrote sorted(means)[budget - 1], at "
                "budget 0 that is sorted(means)[-1] (a negative index counts from the end). The budget may be 0: "
                "then expand nothing, with a threshold below the lowest mean.")
    if budget < len(s) and t > s[-1]:
        return (f" A threshold above the LARGEST mean ({s[-1]}) expands every group: the tree cuts a group only when "
                "its mean r is strictly ABOVE the threshold, so a higher threshold expands MORE groups, not fewer. "
                + ("The budget may be 0: then expand nothing, with a threshold below the lowest mean." if budget == 0
                   else "Spend the budget on the worst groups, the lowest means: count from sorted(means)."))
    if 1 <= budget <= len(s) and t == s[::-1][budget - 1] and t != s[budget - 1]:
        return (f" You counted the budget from the BEST groups (sorted(means, reverse=True)[{budget - 1}] = {t}): the "
                "tree expands every group whose mean r is at or BELOW the threshold, so the second turn goes to the "
                "worst groups, the lowest means; count from sorted(means).")
    return ""


def _picks_at_every_budget(fn, means, order) -> bool:
    """Whether fn gives order[budget - 1] at every budget from 1 to the number of groups: the answer reads the means
    in that order (the caller passes an order that differs from sorted(means), where the reading is a slip)."""
    try:
        for b in range(1, len(means) + 1):
            t = fn(list(means), b)
            if is_bool(t) or not isinstance(t, numbers.Real) or float(t) != order[b - 1]:
                return False
        return True
    except Exception:  # noqa: BLE001 - an answer that crashes somewhere is not this reading
        return False


def _cut_counted(means, budget, strict, first):
    """The threshold of a loop over sorted(means) with the comparison reversed: the groups ABOVE v counted against the
    budget (sum(m > v), strict, or sum(m >= v)), keeping the first or the last v that passes; None where none does."""
    ok = [v for v in sorted(means) if sum((m > v) if strict else (m >= v) for m in means) <= budget]
    return (ok[0] if first else ok[-1]) if ok else None


def _counts_the_cut(fn) -> bool:
    """Whether fn gives one `_cut_counted` reading's threshold wherever that reading gives one, on every group of the
    check and every budget up to the number of groups (the reading's fallback, where no v passes, is the learner's)."""
    for strict in (True, False):
        for first in (True, False):
            try:
                if all(_cut_counted(m, b, strict, first) is None
                       or _same_number(fn(list(m), b), _cut_counted(m, b, strict, first))
                       for m in _GROUPS for b in range(len(m) + 1)):
                    return True
            except Exception:  # noqa: BLE001 - an answer that crashes somewhere is not this reading
                pass
    return False


def _same_number(got, want) -> bool:
    """Whether the answer `got` is the number `want` (a numpy scalar too; a bool or anything else: no)."""
    got = plain_number(got)
    return not is_bool(got) and isinstance(got, numbers.Real) and math.isclose(got, want, rel_tol=0, abs_tol=1e-12)


def _cut_counted_hint(means, budget, t) -> str:
    """The sentence for a threshold whose groups ABOVE it (the ones the tree cuts) were counted against the budget."""
    last, nxt = _fits(means, budget)
    cut, expanded = sum(m > t for m in means), sum(m <= t for m in means)
    here = (f" Here your threshold is the LARGEST mean, {t}: no group is above it, so it cuts none and expands all "
            f"{expanded}." if t == max(means) else
            f" Here your threshold {t} cuts none of the {len(means)} groups: it expands them all." if not cut else
            f" Here your threshold {t} cuts {_groups(cut)} and expands the other {expanded}.")
    return (" You counted the groups ABOVE the threshold against the budget (sum(m > v ...) or sum(m >= v ...): the "
            "comparison reversed): those are the groups the tree CUTS. The budget counts the groups it EXPANDS, those "
            "whose mean r is at or BELOW the threshold: keep the largest v with sum(m <= v for m in means) <= budget."
            + here + f" Put {_between(last, nxt)}.")


def _zero_threshold_hint(means, budget, t) -> str:
    """The sentence for a threshold of 0 that was to expand nothing (a default of 0.0, or a threshold clamped at 0),
    where some groups' mean is exactly 0: "" when that is not the case."""
    last, _ = _fits(means, budget)
    if t != 0 or last is not None or not means or min(means) != 0:
        return ""
    zeros = sum(m == 0 for m in means)
    return (f" A threshold of 0 still expands groups: the tree cuts a group only when its mean r is strictly ABOVE "
            f"the threshold, and {_groups(zeros)} here {'has' if zeros == 1 else 'have'} the mean 0.0 (every answer "
            "scored 0, common in coding: a missing entry point stops the scoring at 0), which t = 0 expands. Rewards "
            "are at least 0, but a mean can BE 0: a default of 0.0 when no group fits, or a threshold clamped at 0 "
            "(max(0, t), max(t, 0.0)), is no way to expand nothing. Return a number below the lowest mean, "
            f"min(means) - 1.0 ({min(means) - 1.0} here), unclamped.")


def _counts_from_the_best(fn, means) -> bool:
    """The budget spent on the BEST groups: fn gives sorted(means, reverse=True)[budget - 1] at every budget, where
    that differs from counting from the worst (sorted(means))."""
    rev = sorted(means, reverse=True)
    return rev != sorted(means) and _picks_at_every_budget(fn, means, rev)


def _indexes_tree_order(fn, means) -> bool:
    """The means indexed without sorting them first: fn gives means[budget - 1], the list as given (tree order), at
    every budget, where the list is not sorted."""
    return list(means) != sorted(means) and _picks_at_every_budget(fn, means, list(means))


def _tree_order_hint(means, budget, t) -> str:
    """The sentence for a threshold read off the unsorted list: means[budget - 1] in tree order."""
    s = sorted(means)
    at = (f" At budget 0, means[-1] is the LAST group's mean ({t}), and a threshold equal to a group's mean still "
          "expands that group; at budget 0 expand nothing, with a threshold below the lowest mean." if budget == 0
          else f" Here means[{budget - 1}] = {t}, but sorted(means)[{budget - 1}] = {s[min(budget, len(s)) - 1]}.")
    return (" Sort the means first (lowest first, sorted(means)): you indexed them in tree order, the order the "
            f"problems come in ({list(means)}), so means[budget - 1] is the mean of whichever group stands there, not "
            "of the worst groups the budget goes to. Mind the ties too." + at)


def _from_the_best_hint(means, budget, t) -> str:
    """The sentence for a threshold counted from the best groups (reverse=True), at the budget it failed."""
    rev = sorted(means, reverse=True)
    at = ""
    if budget == 0 and t == rev[-1]:
        at = (f" At budget 0, sorted(means, reverse=True)[budget - 1] is [-1], the LOWEST mean ({t}), and a threshold "
              "equal to a group's mean still expands that group.")
    elif budget == 0 and t >= rev[0]:
        at = (f" At budget 0 your threshold {t} is at or above the LARGEST mean ({rev[0]}), which expands every group: "
              "the tree cuts a group only when its mean r is strictly ABOVE the threshold, so a higher threshold "
              "expands MORE groups, not fewer.")
    elif 1 <= budget <= len(rev):
        at = f" Here sorted(means, reverse=True)[{budget - 1}] = {rev[budget - 1]}."
    return (" You counted the budget from the BEST groups (sorted(means, reverse=True), as if the tree expanded the "
            "highest means): the tree expands every group whose mean r is at or BELOW the threshold, so the second "
            "turn goes to the WORST groups, the lowest means. Count from sorted(means), and at budget 0 expand "
            "nothing, with a threshold below the lowest mean." + at)


def _tie_step(fn, means, budget, t):
    """The fixed step d by which t sits below a tie at the cut (the next mean up, shared by two or more groups that
    do not all fit), where it passed the last mean that fits too, and fn steps so (nxt - d) wherever such a tie
    straddles the budget above a mean that fits, in every group of the check; None when t is no such step."""
    last, nxt = _fits(means, budget)
    if last is None or nxt is None or t >= last or sum(m == nxt for m in means) < 2:
        return None
    d = nxt - t

    def stepped(m, b):
        lo, hi = _fits(m, b)
        if lo is None or hi is None or sum(x == hi for x in m) < 2 or not sum(x <= lo for x in m) < b:
            return True                              # no tie straddles the budget here
        got = plain_number(fn(list(m), b))
        return not is_bool(got) and isinstance(got, numbers.Real) and math.isclose(got, hi - d, rel_tol=0,
                                                                                    abs_tol=1e-9)

    try:
        return d if all(stepped(m, b) for m in _GROUPS for b in range(1, len(m))) else None
    except Exception:  # noqa: BLE001 - an answer that crashes elsewhere is not this reading
        return None


def _tie_step_hint(fn, means, budget, t) -> str:
    """The sentence for a threshold a fixed step below a tie at the cut that skipped the last mean that fits."""
    d = _tie_step(fn, means, budget, t)
    last, nxt = _fits(means, budget)
    tie = sum(m == nxt for m in means)
    return (f" You stepped a fixed {d:g} below the tie ({tie} groups share the mean {nxt} and do not all fit): a "
            f"fixed step below a tie can skip a group just below it: here the next lower mean, {last}, is only "
            f"{nxt - last:g} below the tie, so your threshold {t} passes it and cuts that group too. No fixed step is "
            f"safe: step to the next lower mean (the last mean that fits, sorted(means)[k - 1] once k is stepped "
            f"down past the tie), or put {_between(last, nxt)}.")


def _over_budget_hint(means, budget, t, best):
    """The sentence for a threshold that expands more than the budget, with no tie at it (the tie has its own)."""
    last, nxt = _fits(means, budget)
    here = f" Every group whose mean r is at or below the threshold is expanded, here {sorted(m for m in means if m <= t)}."
    if abs(t - sum(means) / len(means)) < 1e-9:
        return (f" {t} is the mean of the group means: it does not depend on the budget. Count from the worst group "
                "(sorted(means)), and put " + (
                    f"{_between(last, nxt)}." if last is not None else "the threshold below the lowest mean, "
                    f"{min(means)}: here no group fits."))
    if last is None:
        low = min(means)
        tie = sum(m == low for m in means)
        return here + (f" The {tie} lowest groups share the mean {low} and do not all fit" if tie > budget > 0
                       else f" The budget is {budget}") + (f": expand nothing, with a threshold below the lowest mean, "
                                                            f"{low}.")
    beyond = [v for v in sorted(set(means)) if v > nxt]
    if t < (beyond[0] if beyond else math.inf):        # past exactly one more mean: a margin above `last`
        return here + (f" You put the threshold a fixed margin above the last mean that fits, {last}: here the next "
                       f"mean up is only {nxt - last:g} above it (rewards are discrete, but two groups' means can be "
                       f"that close, and the float32 means the trainer compares closer still), so your margin of "
                       f"{t - last:g} passes it and expands that group too. No fixed margin is safe: read the "
                       f"threshold off the means and put {_between(last, nxt)}.")
    return here + f" The budget allows the {best} worst: put {_between(last, nxt)}."


_EMPTY = ("An empty list of groups must give a finite number too: with no group there is nothing to expand, and "
          "the tree cuts a group only when its mean r is above the threshold, so ANY finite number (0.0, say) expands "
          "the 0 groups there are, within every budget. Handle `means == []` before min(means), max(means) or "
          "sorted(means)[k].")


def _threshold_crash(exc: Exception, means: list, budget: int) -> str:
    """What a crash of choose_threshold says: an IndexError at a budget of 0 or of every group gets a hint, and any
    crash on an empty list of groups says what it must give."""
    hint = ""
    if not means:
        hint = " " + _EMPTY
    elif isinstance(exc, IndexError) and budget >= len(means):
        hint = (f" The budget can reach or pass the number of groups ({len(means)} here): then every group "
                "fits: return a number at or above the largest mean (max(means), or max(means) + 1.0).")
    elif isinstance(exc, IndexError) and budget == 0:
        hint = " The budget may be 0: then expand nothing, with a threshold below the lowest mean."
    return f"choose_threshold({means}, {budget}) raised {type(exc).__name__}: {str(exc).rstrip('.')}." + hint


@exercise("05.early_termination_threshold")
@_tidied
def check_threshold(fn):
    # every budget up to the number of groups first, then budgets above it (an answer may also fail those, and the
    # lesson of a wrong rule on a tie reads better than an IndexError)
    cases = [(m, b) for m in _GROUPS for b in range(len(m) + 1)] + [(m, len(m) + k) for m in _GROUPS for k in (1, 2)]
    cases += [([], b) for b in (0, 1, 2)]
    for means, budget in cases:
        best = max([0] + [sum(m <= v for m in means) for v in means if sum(m <= v for m in means) <= budget])
        given = list(means)
        t = call_answer(fn, given, budget, said=lambda exc, means=means, budget=budget: _threshold_crash(exc, means, budget))
        if given != list(means):
            raise ExerciseFailed(f"choose_threshold({list(means)}, {budget}) changed the list it was given to "
                                 f"{given} (means.sort() sorts in place): the caller's group means, in tree order, "
                                 "are gone. Work on a copy: sorted(means).")
        if isinstance(t, torch.Tensor) or type(t).__name__ == "ndarray":
            kind = "torch tensor" if isinstance(t, torch.Tensor) else "numpy array"
            raise ExerciseFailed(f"return a Python number, e.g. float(x), not a {kind} ({t!r}): the cells "
                                 "below pass it to MAGRPOConfig(early_termination_threshold=...), which takes a "
                                 "number (a numpy scalar is one) and refuses a tensor or an array, 0-d too.")
        if t is None:
            last, nxt = _fits(means, budget)
            todo = ("here the list of groups is empty. " + _EMPTY if not means else
                    "when every group fits, as here, return a number at or above the largest mean (max(means), "
                    "or max(means) + 1.0)."
                    if budget >= len(means) else
                    f"here the budget, {budget}, is below the number of groups, {len(means)}, and "
                    + (f"put {_between(last, nxt)}." if last is not None
                       else "no group fits: expand nothing, with a threshold below the lowest mean."))
            raise ExerciseFailed(f"choose_threshold({means}, {budget}) returned None: MAGRPOConfig reads None as \"expand "
                                 "every group\", but the exercise asks for a finite number whatever the budget; " + todo)
        if is_bool(t):
            raise ExerciseFailed(f"choose_threshold({means}, {budget}) returned the bool {t!r}: return a number, not a "
                                 "bool. The threshold is a mean reward r, a float such as the last mean that fits "
                                 "(or the midpoint between it and the next one up; a bool counts as 1 or 0 and says "
                                 "nothing of the groups); to expand nothing, return any number below the lowest mean.")
        if isinstance(t, numbers.Real) and math.isnan(t):
            raise ExerciseFailed(f"choose_threshold({means}, {budget}): return a finite number (got NaN): every "
                                 "comparison with NaN is False, so it is no threshold, and MAGRPOConfig refuses it. A "
                                 "NaN comes from float('nan'), 0 / 0 or the mean of an empty list. " + (
                                     _EMPTY if not means else
                                     "To expand nothing, return any number below the lowest mean."))
        if isinstance(t, (str, bytes)):
            raise ExerciseFailed(f"choose_threshold({means}, {budget}) returned the string {t!r}, not a number: str(x), "
                                 "an f-string or format() gives the TEXT of a number, which MAGRPOConfig refuses and "
                                 "which compares with no mean r. Return the number itself, a float (the last mean "
                                 "that fits, say); to show it, print it outside the function.")
        if not isinstance(t, numbers.Real):
            raise ExerciseFailed(f"choose_threshold({means}, {budget}) returned a {type(t).__name__} ({t!r}), not a "
                                 "number: return ONE float, the threshold (a mean reward r, the last mean that fits, "
                                 "say), which MAGRPOConfig(early_termination_threshold=...) takes; not the groups or "
                                 "their means.")
        if not math.isfinite(t):
            raise ExerciseFailed(f"return a finite number, got {t!r}: MAGRPOConfig's early_termination_threshold is "
                                 "None (expand every group) or a finite number, never an infinity; to expand nothing, "
                                 "return any number below the lowest mean.")
        try:  # what the cells below do with it: the check accepts exactly what the config accepts
            t = MAGRPOConfig(early_termination_threshold=t).early_termination_threshold
        except ValueError as exc:
            raise ExerciseFailed(f"the cells below pass your threshold to MAGRPOConfig, which refuses it: {exc}") from None
        expanded = sum(m <= t for m in means)          # rollout_tree cuts a node when its mean r > t
        said = f"groups with mean r {means}, budget {budget}: threshold {t} "
        hint = _threshold_hint(means, budget, t)
        read = False     # whether one of the readings below (from the best, tree order) explains the threshold
        if (expanded > budget or expanded < best) and _counts_from_the_best(fn, means):
            hint, read = _from_the_best_hint(means, budget, t), True
        if (expanded > budget or expanded < best) and means and t == means[budget - 1 if budget else -1] \
                and _indexes_tree_order(fn, means):
            hint, read = _tree_order_hint(means, budget, t), True
        if (expanded > budget or expanded < best) and means and not read and _counts_the_cut(fn):
            hint = _cut_counted_hint(means, budget, t)
        if expanded > budget:
            below, at = sum(m < t for m in means), sum(m == t for m in means)
            if t == _fits(means, budget)[1] and _reads_strictly_below(fn):
                hint = _strictly_below_hint(means, budget, t)
            elif hint:
                pass
            elif _zero_threshold_hint(means, budget, t):
                hint = _zero_threshold_hint(means, budget, t)
            elif _rounded_threshold(fn, means, budget, t) is not None:
                hint = _rounded_threshold_hint(fn, means, budget, t)
            elif below <= budget and at >= 2:
                last, _ = _fits(means, budget)
                lower = (f"to the next lower mean, {last} (or any number from it up to but not including {t}: "
                         f"their midpoint, {_mid(last, t)})"
                         if last is not None else f"below them (no mean is lower), {t} - 1.0, say")
                hint = (f" {at} groups share the mean {t}, and a threshold equal to it expands all of them; they do "
                        f"not all fit, so expand none of them: step down {lower} (rewards are discrete: mind "
                        "the ties).")
            elif below <= budget:
                last, _ = _fits(means, budget)
                hint = (" The tree cuts a group only when its mean r is strictly ABOVE the threshold; a group whose "
                        "mean equals it is expanded.")
                hint += (_one_too_far_hint(means, budget, t) if t == sorted(means)[budget]
                         and _indexes_one_too_far(fn, means) else f" Put {_between(last, t)}.")
            else:
                hint = _over_budget_hint(means, budget, t, best)
            raise ExerciseFailed(said + f"expands {_groups(expanded)}, more than the budget." + hint)
        if expanded < best:
            if not hint and _rounded_threshold(fn, means, budget, t) is not None:
                hint = _rounded_threshold_hint(fn, means, budget, t)
            if not hint and _tie_step(fn, means, budget, t) is not None:
                hint = _tie_step_hint(fn, means, budget, t)
            if not hint:
                last, nxt = _fits(means, budget)
                hint = (f" Every group whose mean r is at or below the threshold is expanded; the {best} worst fit: "
                        f"put {_between(last, nxt)}.")
            raise ExerciseFailed(said + f"expands only {_groups(expanded)}; {best} of the worst fit the budget."
                                 + hint)
