"""Checks of notebook 02's exercises: joint actions, an agent's credit in cross mode, the shared advantage."""
from __future__ import annotations

import itertools
import numbers
from collections.abc import Mapping

from . import (ExerciseFailed, call_answer, exercise, first_line, is_bool, not_a_wrapper, not_the_library,
               rounded_to)


def _not_none(out, what: str) -> None:
    """Refuse None first: a function whose last line computes the answer but lacks `return` returns None, which the
    type checks below would misread (a generator, no length, not a tensor)."""
    if out is None:
        raise ExerciseFailed(f"your function returned None: is `return` missing? It should return {what}; a function "
                             "that computes the answer on its last line without `return` (or whose `return` sits "
                             "inside a loop or an if that was not reached) returns None.")


def _is_ndarray(v) -> bool:
    """True for a NumPy array (False where NumPy is not installed)."""
    try:
        import numpy
    except ImportError:
        return False
    return isinstance(v, numpy.ndarray)


def _shown(want: list, got: list, digits: int = 3) -> tuple[list, list]:
    """The two lists of numbers rounded for a message: to `digits` decimals, more (up to 8) while the two would print
    the same, so that a message never says "is [1.044], you returned [1.044]"."""
    while digits < 8 and [round(v, digits) for v in want] == [round(v, digits) for v in got]:
        digits += 1
    return [round(v, digits) for v in want], [round(v, digits) for v in got]


def _digits(dtype) -> int:
    """About how many significant decimal digits a float dtype keeps (float16: 3, bfloat16: 2, float32: 7)."""
    import math

    import torch

    return max(1, round(-math.log10(torch.finfo(dtype).eps)))


def _is_index(k) -> bool:
    """True for a sample index: a Python or NumPy int, or a 0-d integer tensor or array (a row of an integer tensor);
    False for a bool (True/False count as 1/0 under int(), but are no sample numbers), a str ('0'), anything else."""
    if is_bool(k):
        return False
    if isinstance(k, numbers.Integral):
        return True
    dtype = str(getattr(k, "dtype", ""))
    return tuple(getattr(k, "shape", (None,))) == () and "int" in dtype and "bool" not in dtype


def _index_slip(k) -> str:
    """What a non-int entry of a joint action is, for the message: a str, a bool, another type."""
    if isinstance(k, str):
        return (f"the str {k!r}: str(k) makes a text of the index, and texts[{k!r}] fails; drop the str(...) (or the "
                "f-string) and keep the int")
    if is_bool(k) or "bool" in str(getattr(k, "dtype", "")):
        return (f"the bool {k!r}: int() reads it as {int(bool(k))}, but True/False are no sample numbers and stop "
                "meaning anything once G > 2; keep the int g itself, not a comparison or bool(g)")
    return f"a {type(k).__name__} ({k!r})"


def _names_in(fn) -> set:
    """The names fn's code (its nested lambdas and comprehensions too) reads: globals, attributes (`itertools.x`)
    and locals; with every global that is bound to an object, the object's own __name__ (an import under another
    name, `from itertools import combinations as comb`). A message names a function only when the answer calls it."""
    code = getattr(fn, "__code__", None)
    names, todo = set(), [code] if code is not None else []
    while todo:
        co = todo.pop()
        names.update(co.co_names)
        todo += [c for c in co.co_consts if hasattr(c, "co_names")]
    glob = getattr(fn, "__globals__", {})
    names |= {getattr(glob[k], "__name__", k) for k in list(names) if k in glob}
    return names


@exercise("02.joint_actions")
def check_joint_actions(fn) -> None:
    """`fn(num_agents, G, mode)` -> the joint actions: one tuple per joint action, entry i = which of
    agent i's G samples it uses; "aligned": the g-th of every agent; "cross": every combination."""
    from ..algorithm import joint_actions

    not_the_library(fn, "my_joint_actions", joint_actions)

    def explains(table, mode: str, also=None) -> bool:
        """Whether fn's rows are `table(n, G)` (in any order) for EVERY (n, G) the check tries in `mode`: a hint names
        a slip only when it explains them all (for n = G = 2 a rotation of aligned mode IS the permutations). An
        (n, G) where fn fails, or returns no table of ints, is no evidence either way; `also(n, G)`, when given, is
        another table that counts as the same slip there (a filter that spares n = 1, say)."""
        for n_ in (1, 2, 3):
            for G_ in (1, 2, 4):
                try:
                    out_ = [list(row) for row in fn(n_, G_, mode)]
                    if not all(_is_index(k) for row in out_ for k in row):
                        continue
                    rows = sorted(tuple(int(k) for k in row) for row in out_)
                except Exception:  # noqa: BLE001  the learner's function may fail there: no evidence
                    continue
                if rows != sorted(tuple(row) for row in table(n_, G_)) and (
                        also is None or rows != sorted(tuple(row) for row in also(n_, G_))):
                    return False
        return True

    # Cross mode with the joint actions that repeat ONE index for every agent, (g, ..., g), filtered out (`if i != j`,
    # `if len(set(t)) > 1`); for one agent every row is such a one, unless the filter spares n = 1.
    def no_diagonal(n_, G_):
        return [t for t in itertools.product(range(G_), repeat=n_) if len(set(t)) > 1]

    # The table of `mode` over the sample indices `idx` (range(G) when right; an off-by-one range when not).
    tables = {"aligned": lambda n_, idx: [(g,) * n_ for g in idx],
              "cross": lambda n_, idx: list(itertools.product(idx, repeat=n_))}

    for n in (1, 2, 3):
        for G in (1, 2, 4):
            for mode in ("aligned", "cross"):
                out = call_answer(fn, n, G, mode, said=lambda e, n=n, G=G, mode=mode: (
                    f"for n={n} agents, G={G}, mode {mode!r} your function raised {type(e).__name__}: {first_line(e)}. "
                    "It should return the list of joint actions, one tuple per joint action."))
                _not_none(out, "the list of joint actions, one tuple per joint action")
                if not hasattr(out, "__len__"):
                    raise ExerciseFailed(f"return a list of tuples, one per joint action; you returned a "
                                         f"{type(out).__name__}, which can be read only once (a generator, or "
                                         "itertools.product(...), is empty the second time it is read): wrap it in "
                                         "list(...) or write a list comprehension [... for g in range(G)]")
                if isinstance(out, (set, frozenset)):
                    raise ExerciseFailed(f"return a list of tuples, one per joint action; you returned a {type(out).__name__}. "
                                         "\"Any order of the rows\" means the rows of a list may come in any order: the "
                                         "rows still need one. The cell after exercise 2 builds the table with "
                                         "torch.tensor(my_joint_actions(2, G, mode)), which cannot read a set "
                                         "(RuntimeError: Could not infer dtype of set), and the trainer reads joint "
                                         "action j as row j and pairs reward j with it, which a set, unordered and "
                                         "unindexable, cannot give. Build a list ([... for g in range(G)], or "
                                         "list(...) / sorted(...) around your set).")
                if isinstance(out, dict):
                    raise ExerciseFailed("return a list of tuples, one per joint action; you returned a dict, which the "
                                         "trainer cannot index: it reads joint action j as row j of the table and pairs "
                                         "reward j with it (the rows may come in any order, but as a list), and "
                                         "torch.tensor(my_joint_actions(2, G, mode)) in the cell after exercise 2 cannot "
                                         "read a dict. Build a list of the tuples, not a dict of them.")
                try:
                    if any(isinstance(k, float) or "float" in str(getattr(k, "dtype", "")) for row in out for k in row):
                        raise ExerciseFailed(f"n={n}, G={G}, {mode!r}: the entries are sample indices, ints (they index the "
                                             "agents' answers, texts[g]); you returned floats. Use range(G), not floats "
                                             "or a float tensor.")
                    bad = next(((row, k) for row in out for k in row if not _is_index(k)), None)
                    if bad is not None:
                        raise ExerciseFailed(f"n={n}, G={G}, {mode!r}: the entries are sample indices: ints, not "
                                             f"str/bool (they index the agents' answers, texts[g]); in the row "
                                             f"{tuple(bad[0])!r} you returned {_index_slip(bad[1])}. Use the ints of "
                                             "range(G) as they are.")
                    got = [tuple(int(k) for k in row) for row in out]
                except (TypeError, ValueError):
                    raise ExerciseFailed(f"return a list of tuples (one per joint action) for n={n}, G={G}, {mode!r}") from None
                want = [tuple(row) for row in joint_actions(n, G, mode).tolist()]
                if len(got) != len(set(got)):
                    raise ExerciseFailed(f"n={n}, G={G}, {mode!r}: a joint action appears twice in {got}")
                if sorted(got) != sorted(want):
                    count = f"{G} (one per sample index g)" if mode == "aligned" else f"G**n = {G ** n}"
                    hint = ""
                    if (n > 1 and sorted(got) == sorted(itertools.permutations(range(G), n))
                            and explains(lambda n_, G_: itertools.permutations(range(G_), n_), mode)):
                        hint = (f" A joint action may reuse a sample index, e.g. {(0,) * n}: itertools.permutations never "
                                "repeats one, so it misses every such joint action (all of them when G < n). "
                                + ("Cross mode is every combination, itertools.product(range(G), repeat=n), not "
                                   "permutations." if mode == "cross" else
                                   "Aligned mode is exactly those: (g, ..., g), the same g for every agent, "
                                   "[(g,) * n for g in range(G)]."))
                    elif mode == "aligned" and (step := next((st for st in (1, -1) if explains(
                            lambda n_, G_, st=st: [tuple((g + st * i) % G_ for i in range(n_)) for g in range(G_)],
                            "aligned")), None)) is not None:
                        hint = (" Aligned is (g, g, ..., g): the g-th sample of EVERY agent, [(g,) * n for g in "
                                f"range(G)]. Yours rotates the index, agent i taking sample (g {'+' if step > 0 else '-'} "
                                "i) % G: those are cross-mode pairings, not the aligned ones; use the same g for every "
                                "agent.")
                    elif (n > 1 and mode == "cross" and (comb := next((c for c in (
                            itertools.combinations_with_replacement, itertools.combinations)
                            if sorted(got) == sorted(c(range(G), n))
                            and explains(lambda n_, G_, c=c: c(range(G_), n_), mode)), None)) is not None):
                        never = " and never repeats one, (0, 0)" if comb is itertools.combinations else ""
                        # Name the itertools function only when the answer calls it: a nested loop whose inner index
                        # starts at the outer one (`for j in range(i, G)`, or range(i + 1, G)) builds the same table.
                        said = (f"itertools.{comb.__name__} keeps" if comb.__name__ in _names_in(fn) else
                                "Your table keeps")
                        fix = (f", not {comb.__name__}." if comb.__name__ in _names_in(fn) else
                               " (with loops: every inner index runs over all of range(G), not from the outer one on, "
                               f"range({'i + 1' if never else 'i'}, G)).")
                        hint = (f" {said} ONE order of each pair (each set) of sample indices, (0, 1) but not (1, 0)"
                                + never + ": yet entry i is agent i's sample, so agent 1's sample 0 with agent 2's "
                                "sample 1 is another joint action than agent 1's sample 1 with agent 2's sample 0. "
                                f"Cross mode is every combination in every order, G**n = {G ** n} of them, "
                                "itertools.product(range(G), repeat=n)" + fix)
                    elif (n > 1 and mode == "cross" and sorted(got) == sorted(no_diagonal(n, G))
                          and explains(no_diagonal, mode,
                                       also=lambda n_, G_: list(itertools.product(range(G_), repeat=n_)) if n_ == 1
                                       else no_diagonal(n_, G_))):
                        hint = (f" You left out the joint actions where every agent takes the same sample, "
                                f"{(0,) * n}, {(1,) * n}, ... (a filter such as `if i != j` or `if len(set(t)) > 1`): "
                                "cross mode INCLUDES the pairs (g, g), the aligned joint actions are among its "
                                f"combinations. Cross is every combination, G**n = {G ** n} of them, "
                                "itertools.product(range(G), repeat=n), with no filter.")
                    elif (n == 1 and mode == "cross" and not got
                          and explains(no_diagonal, mode)):
                        hint = (" With one agent every joint action is a single sample, (g,), and your table is empty: "
                                "a filter such as `if len(set(t)) > 1` (or `if i != j`) drops every joint action whose "
                                "agents all take the same sample, yet cross mode INCLUDES those, the pairs (g, g) too. "
                                "Cross is every combination, G**n, itertools.product(range(G), repeat=n), with no "
                                "filter.")
                    elif (short := next((say for say, idx in (
                            ("range(G-1) runs 0 .. G-2 and leaves out the last sample, G-1 (for G = 1 it is empty)",
                             lambda G_: range(G_ - 1)),
                            ("range(1, G) starts at 1 and leaves out sample 0 (for G = 1 it is empty); Python counts "
                             "from 0", lambda G_: range(1, G_)))
                            if sorted(got) == sorted(tables[mode](n, idx(G)))
                            and explains(lambda n_, G_, idx=idx: tables[mode](n_, idx(G_)), mode)), None)) is not None:
                        hint = (f" Your sample indices are off by one: {short}. The G samples are 0 .. G-1, "
                                f"range(G) = {list(range(G))} here: use range(G) itself"
                                + (", [(g,) * n for g in range(G)]." if mode == "aligned" else
                                   ", itertools.product(range(G), repeat=n)."))
                    elif got and all(len(row) != n for row in got):
                        hint = f" Each joint action is a tuple of n = {n} entries, one per agent (entry i: agent i's sample)."
                    elif any(k < 0 or k >= G for row in got for k in row):
                        hint = f" Sample indices run from 0 to G-1 = {G - 1} (Python's indexing)."
                    raise ExerciseFailed(f"n={n} agents, G={G}, {mode!r}: expected {count} joint actions {want}, got "
                                         f"{got}.{hint}")
    not_a_wrapper(fn, (2, 3, "cross"), "my_joint_actions", joint_actions,
                  how="from the rule above (aligned: (g, ..., g) for g in range(G); cross: every combination, "
                      "itertools.product)")


def _as_credits(out):
    """A returned credit as a float32 tensor (a tensor, a list of numbers or 0-d tensors, a NumPy array), None when it
    is none of those: what `explains` of the cross-credit check compares."""
    import torch

    try:
        if isinstance(out, (list, tuple)):
            return torch.tensor([float(x) for x in out])
        if _is_ndarray(out):
            return torch.from_numpy(out.copy()).to(torch.float32)
        return out.detach().to(torch.float32) if torch.is_tensor(out) else None
    except (TypeError, ValueError, RuntimeError):
        return None


@exercise("02.cross_credit")
def check_cross_credit(fn) -> None:
    """`fn(r, agent)`: r is the (G, G) tensor of joint rewards of two agents in cross mode
    (r[k1, k2]: agent 1's sample k1 with agent 2's sample k2); return the (G,) credit of `agent`'s
    samples (0 = agent 1, 1 = agent 2): the mean advantage, over one baseline for all G*G joint
    actions, of the joint actions that contain the sample."""
    import torch

    from ..algorithm import credit_samples, group_advantages, joint_actions

    gen = torch.Generator().manual_seed(0)
    # The first matrix tells the slips apart: its min (1) is not 0, so r - r.min() is not the rewards themselves, and
    # its max (9) is not the sum over G (30 / 3 = 10), so the MAReMax baseline is not the sum-over-G one.
    cases = [torch.tensor([[1.0, 2.0, 4.0], [2.0, 2.0, 2.0], [3.0, 5.0, 9.0]]),
             torch.tensor([[1.0, 3.0], [5.0, 7.0]]), torch.full((3, 3), 2.0)]
    cases += [torch.rand(G, G, generator=gen) * 4 - 1 for G in (2, 3, 4)]
    cases += [torch.tensor([[4.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]])]  # a partner's sample matters

    def explains(credit_of) -> bool:
        """Whether `credit_of(r, agent)` is what fn returns for both agents of EVERY case: a hint names a slip only
        when it explains them all. A case where fn fails, or returns no G numbers, is no evidence either way."""
        for r_ in cases:
            for agent_ in (0, 1):
                try:
                    out = _as_credits(fn(r_.clone(), agent_))
                except Exception:  # noqa: BLE001  the learner's function may fail on another case: no evidence
                    continue
                want_ = credit_of(r_, agent_)
                if out is None or out.shape != want_.shape:
                    continue
                if not torch.allclose(out, want_.to(torch.float32), atol=1e-5):
                    return False
        return True

    def credit(r_, agent_):
        return (r_ - r_.mean()).mean(dim=1 - agent_)

    def one_entry(r_, got_) -> str | None:
        """Which single row or column of A = r - r.mean() (or of r itself) got_ is, said for the message ("column 0
        of A = r - r.mean()"): the credit of sample k taken from ONE joint action, not averaged; None when none."""
        G_ = r_.shape[0]
        for of, name_ in ((r_ - r_.mean(), "A = r - r.mean()"), (r_, "r")):
            for j in range(G_):
                for line, say in ((of[:, j], f"column {j}"), (of[j], f"row {j}")):
                    if torch.allclose(got_, line.to(torch.float32), atol=1e-5):
                        return f"{say} of {name_}"
        return None

    def explains_one_entry() -> bool:
        """Whether fn's answer is ONE row or column of A (or r) in EVERY case, for both agents (the same slip,
        whichever line it picks): a case where fn fails, or returns no G numbers, is no evidence either way."""
        for r_ in cases:
            for agent_ in (0, 1):
                try:
                    out = _as_credits(fn(r_.clone(), agent_))
                except Exception:  # noqa: BLE001  the learner's function may fail on another case: no evidence
                    continue
                if out is None or out.shape != (r_.shape[0],):
                    continue
                if one_entry(r_, out) is None:
                    return False
        return True

    def partner_slice(r_, a_, take, div: str):
        """The credit averaged over a slice `take` of the partner's samples only: A[:, 1:] for agent 1 (a_ = 0),
        A[1:, :] for agent 2, A = r - r.mean(); their mean, or their sum divided by G."""
        part = take((r_ - r_.mean()).T if a_ == 0 else r_ - r_.mean())   # (partner samples kept, G)
        return part.mean(dim=0) if div == "mean" else part.sum(dim=0) / r_.shape[0]

    # Off-by-one slices (a range(1, G) or range(G - 1) loop, r[1:], r[:-1]): (the message's hint, credit_of).
    sliced = []
    for cut, left, idx in (("[1:]", "first", "0"), ("[:-1]", "last", "G-1")):
        take = (lambda t: t[1:]) if cut == "[1:]" else (lambda t: t[:-1])
        for of, what in ((f"r{cut}", f"{left} row, agent 1's sample {idx}"),
                         (f"r[:, {cut[1:-1]}]", f"{left} column, agent 2's sample {idx}"),
                         (f"r.flatten(){cut}", f"{left} joint reward, r[{idx}, {idx}]")):
            pick = ((lambda t, take=take: take(t)) if of.startswith("r[") and not of.startswith("r[:") else
                    (lambda t, take=take: take(t.T)) if of.startswith("r[:") else
                    (lambda t, take=take: take(t.flatten())))
            sliced.append((f" Your baseline is the mean of {of}, an off-by-one slice that leaves out the {what}: the "
                           "baseline is ONE mean over ALL G*G joint rewards, r.mean(), no slice (a loop over "
                           "range(1, G) or range(G - 1) drops one the same way).",
                           lambda r_, a_, pick=pick: (r_ - pick(r_).mean()).mean(dim=1 - a_)))
        # the mean over the partner's samples taken over a slice of them: A[:, 1:] (agent 1), A[1:, :] (agent 2)
        for div in ("mean", "sum"):
            sliced.append((f" You averaged each sample's advantages over a slice of the partner's samples, "
                           f"A[:, {cut[1:-1]}] for agent 1 or A[{cut[1:-1]}, :] for agent 2 (A = r - r.mean()): an "
                           f"off-by-one slice that leaves out the partner's {left} sample, index {idx}. Sample k is in G joint "
                           "actions, one per partner sample (row k for agent 1, column k for agent 2): average ALL "
                           "of them, A.mean(dim=1) or A.mean(dim=0), no slice (a loop over range(1, G) or "
                           "range(G - 1) drops one the same way).",
                           lambda r_, a_, take=take, div=div: partner_slice(r_, a_, take, div)))

    # Answers that hold for G = 2 only (the by-hand cell's / 4 and / 2 kept): (what the message says, credit_of).
    assumes_g2 = [
        ("your baseline divides the sum of the rewards by 4 and your mean divides by 2, r.sum() / 4 and ... / 2",
         lambda r_, a_: (r_ - r_.sum() / 4).sum(dim=1 - a_) / 2),
        ("your baseline divides the sum of the rewards by 4 = 2 * 2, r.sum() / 4, not by G * G (r.mean())",
         lambda r_, a_: (r_ - r_.sum() / 4).mean(dim=1 - a_)),
        ("you divide the sum over the joint actions holding a sample by 2, not by G (.mean(dim=...))",
         lambda r_, a_: (r_ - r_.mean()).sum(dim=1 - a_) / 2),
    ]
    # Advantages (or credits) made non-negative or clipped: (the message's hint, credit_of).
    abs_said = (" You took the absolute value, .abs(), of the advantages (or of the credits): a sample whose joint "
                 "actions score below the mean must keep its NEGATIVE credit, so that it is made less likely; drop "
                 "the .abs().")
    clipped = [(abs_said, lambda r_, a_: (r_ - r_.mean()).abs().mean(dim=1 - a_)),
               (abs_said, lambda r_, a_: (r_ - r_.mean()).mean(dim=1 - a_).abs())]
    for c in (1.0, 0.5, 2.0, 3.0, 5.0):
        said = (f" You clipped the advantages (or the credits) to [-{c:g}, {c:g}], .clamp(-{c:g}, {c:g}): how far a "
                "joint action lies above or below the mean is cut off there, so the best and the worst samples weigh "
                "no more than a near-tie. The credit is unclipped: drop the .clamp(...).")
        clipped += [(said, lambda r_, a_, c=c: (r_ - r_.mean()).clamp(-c, c).mean(dim=1 - a_)),
                    (said, lambda r_, a_, c=c: (r_ - r_.mean()).mean(dim=1 - a_).clamp(-c, c))]

    for r in cases:
        G = r.shape[0]
        want = credit_samples(group_advantages(r.flatten()), joint_actions(2, G, "cross"), G)
        for agent in (0, 1):
            given = r.clone()
            got = call_answer(fn, given, agent, said=lambda e, r=r, agent=agent: (
                f"for r = {r.tolist()} and agent = {agent} your function raised {type(e).__name__}: {first_line(e)}. "
                "It receives the (G, G) tensor of joint rewards and the agent's index (0 or 1), and returns G credits."))
            _not_none(got, f"the ({G},) tensor of the agent's credits")
            if not torch.equal(given, r):
                raise ExerciseFailed(f"for r = {r.tolist()} your function changed the tensor it was given (in place, e.g. "
                                     "r -= r.mean()): the trainer's logged rewards would be overwritten, and the second "
                                     "agent's call would see centred rewards. Compute on a new tensor (r - r.mean()).")
            dtype = None        # the precision the answer was computed in, when it says one (a float16 slip)
            if isinstance(got, (list, tuple)):  # G numbers, but the next cell masks them: c[act1 == 0]
                kind = type(got).__name__
                if got and all(torch.is_tensor(x) for x in got):
                    raise ExerciseFailed(f"return a ({G},) tensor: the next cell indexes your credits with a boolean "
                                         f"mask, c[act1 == 0], which a Python {kind} cannot take (TypeError); you "
                                         f"returned a {kind} of {len(got)} 0-d tensors. Join them with "
                                         "torch.stack(...), or compute on whole rows and columns, "
                                         "(r - r.mean()).mean(dim=...).")
                raise ExerciseFailed(f"return a ({G},) tensor: the next cell indexes your credits with a boolean mask, "
                                     f"c[act1 == 0], which a Python {kind} cannot take (TypeError); you returned a "
                                     f"{kind}. Drop the .tolist() (or the list(...)) and return the tensor "
                                     "(r - r.mean()).mean(dim=...) itself.")
            if _is_ndarray(got):  # a NumPy array of G numbers: the same numbers (it takes the mask too), dtype kept
                try:
                    got = torch.from_numpy(got.copy())
                except (TypeError, ValueError, RuntimeError):
                    pass  # not numbers (an object array): refused below
            if not isinstance(got, torch.Tensor):
                raise ExerciseFailed(f"return the credits as a ({G},) tensor, one number per sample of the agent (the "
                                     "next cell indexes it with a boolean mask, c[act1 == 0]); you returned a "
                                     f"{type(got).__name__}. Compute with tensor operations on r (r - r.mean(), then "
                                     ".mean(dim=...)).")
            dtype = got.dtype if dtype is None else dtype
            got = got.detach().to(torch.float32)
            if got.shape != (G,) and G != 2 and tuple(got.shape) == (2,):
                raise ExerciseFailed(f"for r = {r.tolist()} (G = {G}) you returned 2 credits: your function assumes "
                                     "G = 2, as the by-hand cell above does (r[0, 0] ... r[1, 1], / 4, / 2). Read G "
                                     "from r.shape[0] and work on whole rows and columns, (r - r.mean()).mean(dim=...), "
                                     f"so that it returns one credit per sample, shape ({G},), for any G.")
            if got.shape != (G,):
                raise ExerciseFailed(f"return one credit per sample of the agent, shape ({G},): {G} numbers in one "
                                     f"row; got shape {tuple(got.shape)}"
                                     + (" (keepdim=True, unsqueeze or [None] adds an axis of size 1: reduce without "
                                        "keepdim)" if got.numel() == G else ""))
            if not torch.allclose(got, want[agent], atol=1e-5):
                hint = ""
                shown_want, shown_got = _shown(want[agent].tolist(), got.tolist())
                if (dtype.is_floating_point and torch.finfo(dtype).eps > torch.finfo(r.dtype).eps
                        and torch.allclose(got, want[agent], rtol=0,
                                           atol=8 * torch.finfo(dtype).eps * max(1.0, r.abs().max().item()))):
                    raise ExerciseFailed(f"for r = {r.tolist()} agent {agent + 1}'s credit is {shown_want}, you returned "
                                         f"{shown_got}: close but not equal, because your answer is in {dtype} "
                                         f"(r is {r.dtype}). {str(dtype).replace('torch.', '')} keeps only about "
                                         f"{_digits(dtype)} significant digits, so its means are off in the later "
                                         f"digits. Compute in r's own dtype: no .half(), .to(torch.float16) or "
                                         "bfloat16 (nor a low-precision NumPy array).")
                if "int" in str(dtype):
                    raise ExerciseFailed(f"for r = {r.tolist()} agent {agent + 1}'s credit is {shown_want}, you returned "
                                         f"{[int(v) for v in got.tolist()]}: your credits are integers ({dtype}), a "
                                         ".long(), .int() or int() cast, or an integer dtype=. An integer drops the "
                                         "fraction, truncating toward 0 (-1.333 becomes -1, and -0.99999, a mean "
                                         "computed in floats, becomes 0). A credit is a mean of advantages, a "
                                         "fraction: return the float tensor as computed, with no integer cast.")
                if torch.allclose(got, want[1 - agent], atol=1e-5) and not torch.allclose(want[0], want[1], atol=1e-5):
                    hint = (" That is the OTHER agent's credit: agent 1's sample k1 is row k1 (average over dim 1), "
                            "agent 2's sample k2 is column k2 (average over dim 0).")
                elif G != 2 and (two := next((say for say, of in assumes_g2 if torch.allclose(
                        got, of(r, agent), atol=1e-5) and explains(of)), None)) is not None:
                    hint = (f" Your function assumes G = 2, as the by-hand cell above does: {two}. Read G from "
                            "r.shape[0] (or let r.mean() and .mean(dim=...) count for you), so that it holds for "
                            f"any G; here G = {G}.")
                elif (clip := next((say for say, of in clipped if torch.allclose(got, of(r, agent), atol=1e-5)
                                    and explains(of)), None)) is not None:
                    hint = clip
                elif torch.allclose(got, want[agent] * G, atol=1e-5):
                    hint = (f" You SUMMED the {G} advantages of the joint actions holding the sample; the credit is their "
                            "mean here (CoMLRL sums the combinations' returns and centres the G sums: with the mean baseline, G times this "
                            "credit).")
                elif (torch.allclose(got, want[agent] / G, atol=1e-5)
                      and explains(lambda r_, a_: credit(r_, a_) / r_.shape[0])):
                    hint = (f" Yours is G times too small, G = {G}: you divided the sum over the {G} joint actions "
                            f"holding the sample by G*G = {G * G}, the count of ALL joint rewards (or divided the mean "
                            f"by G once more). The credit averages only the {G} joint actions that hold the sample: "
                            f"their sum divided by G = {G}, i.e. .mean(dim=...).")
                elif (torch.allclose(got, (r - r.mean()).diagonal(), atol=1e-5)
                      and explains(lambda r_, a_: (r_ - r_.mean()).diagonal())):
                    hint = (" You returned the advantages of the G aligned joint actions (g, g), the diagonal of "
                            "r - r.mean(): that is aligned mode, where sample g is in one joint action only. In cross "
                            f"mode sample k is in {G} joint actions, row k for agent 1 and column k for agent 2: "
                            "average the advantages over all of them, A.mean(dim=1) or A.mean(dim=0).")
                elif (entry := one_entry(r, got)) is not None and explains_one_entry():
                    hint = (f" You took ONE joint action per sample as its credit: yours is {entry}, one entry "
                            "r[k, j] for sample k (or r[j, k]) instead of the mean over the partner's samples. "
                            f"Sample k is in G = {G} joint actions, one per partner sample (row k for agent 1, "
                            "column k for agent 2): its credit is the MEAN of their advantages, A.mean(dim=1) for "
                            "agent 1 or A.mean(dim=0) for agent 2, with A = r - r.mean(); no indexing such as "
                            "A[k, 0], A[agent] or A[:, 0]."
                            + (" Subtract the baseline, r.mean(), too." if entry.endswith(" of r") else ""))
                elif torch.allclose(got, r.mean(dim=1 - agent), atol=1e-5):
                    hint = " You averaged the rewards, not the advantages: subtract the mean of all G*G rewards first."
                elif torch.allclose(got, r.diagonal() - r.diagonal().mean(), atol=1e-5):
                    hint = (" You used only the diagonal, the G aligned joint actions; cross mode credits a sample with "
                            "every joint action that holds it, G of them.")
                elif torch.allclose(got, torch.zeros_like(got), atol=1e-6) and want[agent].abs().max() > 1e-5:
                    hint = (" Every credit you returned is 0: a baseline per row (or per column) cancels each sample's "
                            f"own mean; subtract ONE baseline, the mean of all {G * G} joint rewards, from every "
                            "joint reward.")
                elif torch.allclose(got, -want[agent], atol=1e-5):
                    hint = (" The sign is flipped: the advantage is reward minus baseline, r - r.mean(), so a sample "
                            "whose joint actions beat the mean gets a positive credit.")
                elif any(torch.allclose(got, want[agent] / sd, atol=1e-5)
                         for sd in (r.std(), r.std() + 1e-8, r.std(unbiased=False), r.std() + 1e-4)):
                    hint = (" You divided the advantages by the rewards' std; MAGRPO's advantage is r - mean(r), "
                            "unscaled.")
                elif torch.allclose(got, (r - r.sum() / G).mean(dim=1 - agent), atol=1e-5):
                    hint = (f" Your baseline is the sum of the rewards divided by G = {G}; the mean of all {G * G} joint "
                            f"rewards divides by G * G = {G * G}, r.mean().")
                elif torch.allclose(got, (r - r.max()).mean(dim=1 - agent), atol=1e-5):
                    hint = (" You subtracted the best joint reward, r.max(), as the baseline (MAReMax, notebook 06): "
                            "every credit comes out at or below 0, so no sample is ever made more likely; here the "
                            f"baseline is the MEAN of all {G * G} joint rewards, r.mean().")
                elif torch.allclose(got, (r - r.min()).mean(dim=1 - agent), atol=1e-5):
                    hint = (" You subtracted the worst joint reward, r.min(), as the baseline: every credit comes out at "
                            "or above 0, so even the worst sample is made more likely; the baseline is the MEAN of all "
                            f"{G * G} joint rewards, r.mean(), so that samples below it get a negative credit.")
                elif torch.allclose(got, (r - (r.sum() - r) / (G * G - 1)).mean(dim=1 - agent), atol=1e-5):
                    hint = (" You took a leave-one-out baseline, each joint reward minus the mean of the OTHER "
                            f"{G * G - 1} (notebook 01's RLOO): that makes every credit G*G/(G*G-1) = {G * G}/{G * G - 1} "
                            "times too large. Cross mode's baseline is ONE mean over all "
                            f"{G * G} joint rewards, the joint action's own included: A = r - r.mean().")
                elif torch.allclose(got, want[agent] * G / (G - 1), atol=1e-5):
                    hint = (f" Yours is G/(G-1) = {G}/{G - 1} times the credit: you divided the sum over the {G} joint "
                            f"actions holding the sample by G-1 = {G - 1} instead of G = {G} (or took a leave-one-out "
                            "baseline over the samples' credits); the credit is their MEAN, .mean(dim=...), after "
                            f"ONE baseline, the mean of all {G * G} joint rewards.")
                elif any(torch.allclose(got, (r - b).mean(dim=1 - agent), atol=1e-5)
                         for b in (r.median(), r.flatten().quantile(0.5))):
                    hint = (" You subtracted the median of the joint rewards as the baseline; the baseline is their "
                            f"MEAN, r.mean(), over all {G * G} joint rewards (a median ignores how far the best and worst "
                            "joint actions lie from the rest).")
                elif torch.allclose(got, (r - r.diagonal().mean()).mean(dim=1 - agent), atol=1e-5):
                    hint = (" Your baseline is the mean of the diagonal, the G aligned joint actions r[g, g] only; "
                            f"cross mode's baseline is ONE mean over all {G * G} joint rewards, r.mean(), the "
                            "off-diagonal pairs included.")
                elif (cut := next((say for say, of in sliced if torch.allclose(got, of(r, agent), atol=1e-5)
                                   and explains(of)), None)) is not None:
                    hint = cut
                elif (k := rounded_to(got.tolist(), want[agent].tolist(), range(6),
                                      close=lambda a, b: abs(a - b) <= 1e-6)) is not None:
                    raise ExerciseFailed(f"for r = {r.tolist()} agent {agent + 1}'s credit is "
                                         f"{[round(v, 6) for v in want[agent].tolist()]}, you returned "
                                         f"{[round(v, 6) for v in got.tolist()]}: close but not equal, you rounded to "
                                         f"{k} decimal(s). Do not round: return the means as computed.")
                raise ExerciseFailed(
                    f"for r = {r.tolist()} agent {agent + 1}'s credit is {shown_want}, you "
                    f"returned {shown_got}: subtract ONE mean over all {G * G} joint rewards, then "
                    f"average over the joint actions holding the sample (agent 1's sample k1 is row k1, agent 2's sample k2 "
                    "is column k2)." + hint)
    not_a_wrapper(fn, (cases[0].clone(), 0), "my_cross_credit", credit_samples, group_advantages,
                  how="from the lines of the cell above (A = r - r.mean(), then A.mean(dim=...))")


def _stds(rewards) -> list:
    """The stds a learner may divide the advantages by (z-scoring): sample or population std, with or without a small
    epsilon; the exact zero of equal rewards left out (its nan is said apart)."""
    sds = [sd + eps for sd in (rewards.std(), rewards.std(unbiased=False)) for eps in (0.0, 1e-8, 1e-6, 1e-5, 1e-4)]
    return [sd for sd in sds if sd > 0]


def _rank_advantages(rewards) -> list:
    """Advantages a learner may build from the rewards' RANKS instead of their values (0..G-1 or 1..G, centred or
    not, scaled by G-1, G or the ranks' std): a rank-based (argsort) advantage."""
    G = len(rewards)
    out = []
    for base in (rewards.argsort().argsort().float(), rewards.argsort().argsort().float() + 1):
        for ranks in (base, base - base.mean()):
            scales = [1.0, float(G - 1), float(G)] + [float(sd) for sd in (ranks.std(), ranks.std(unbiased=False))
                                                     if G > 1 and sd > 0]
            out += [ranks / sc for sc in scales if sc > 0]
    return out


def _loss_value(loss) -> float:
    """A returned loss as a Python float (a tensor detached first, a number as it is); nan when it is neither."""
    try:
        return float(loss.detach()) if hasattr(loss, "detach") else float(loss)
    except (TypeError, ValueError, RuntimeError):
        return float("nan")


@exercise("02.shared_losses")
def check_shared_losses(fn) -> None:
    """`fn(logps, rewards)`: logps is a list (one per agent) of (G,) tensors, sum_t log pi_i of each
    agent's G samples (aligned: sample g of each agent forms joint action g); rewards the (G,) joint
    rewards. Return one loss per agent, the MAGRPO loss with the SAME group-relative advantage."""
    import torch

    from ..algorithm import group_advantages, policy_loss

    gen = torch.Generator().manual_seed(1)
    cases = []
    for n, G in ((2, 4), (3, 2), (2, 8), (1, 4)):
        rewards = torch.rand(G, generator=gen) * 3
        if G == 2:
            rewards = torch.tensor([1.0, 1.0])  # equal rewards: no gradient at all
        cases.append((n, G, rewards, [(-torch.rand(G, generator=gen) * 20).requires_grad_() for _ in range(n)]))

    def explains(loss_of) -> bool:
        """Whether `loss_of(lp, rewards)` (a float) is what fn returns for every agent of EVERY case: a hint names a
        slip only when it explains them all (the first case's best reward is its first, say, so r - r[0] and
        r - r.max() agree there). A case where fn fails, or returns no list of n losses, is no evidence either way."""
        for _n, _G, rw, lps in cases:
            try:
                out = list(fn(list(lps), rw.clone()))
            except Exception:  # noqa: BLE001  the learner's function may fail on another case: no evidence there
                continue
            if len(out) != len(lps):
                continue
            if any(not abs(_loss_value(o) - loss_of(lp, rw)) <= 1e-4 for o, lp in zip(out, lps)):
                return False
        return True

    def explains_one(total_of) -> bool:
        """Whether `total_of(logps, rewards)` (a float) is the ONE number fn returns for EVERY case, where it returns a
        single number instead of a list (the agents' losses summed or averaged). A case where fn fails, or returns
        anything else, is no evidence either way; with one agent, or equal rewards, the sum and the mean agree."""
        for _n, _G, rw, lps in cases:
            try:
                out = fn(list(lps), rw.clone())
            except Exception:  # noqa: BLE001  the learner's function may fail on another case: no evidence there
                continue
            if not (torch.is_tensor(out) and out.dim() == 0):
                continue
            if not abs(_loss_value(out) - total_of(lps, rw)) <= 1e-4:
                return False
        return True

    # Off-by-one slices (a loop over range(1, G) or range(G - 1), rewards[1:], rewards[:-1]): (hint, loss_of).
    sliced = []
    for cut, left in (("[1:]", "the first, index 0,"), ("[:-1]", "the last, index G-1,")):
        take = (lambda t: t[1:]) if cut == "[1:]" else (lambda t: t[:-1])
        loop = "range(1, G)" if cut == "[1:]" else "range(G - 1)"
        sliced.append((f" Your baseline is the mean of rewards{cut}, an off-by-one slice that leaves out {left} of "
                       "the G rewards: MAGRPO's baseline is the mean of ALL G rewards, rewards.mean(), no slice (a loop "
                       f"over {loop} drops one the same way).",
                       lambda lp_, rw, take=take: policy_loss(lp_, rw - take(rw).mean()).item()))
        for div in ("mean", "sum"):
            sliced.append((f" You averaged A * lp over (A * lp){cut}, an off-by-one slice that leaves out {left} of "
                           "the G joint actions: the loss averages ALL G of them, -(A * lp).mean(), no slice (a loop "
                           f"over {loop} drops one the same way).",
                           lambda lp_, rw, take=take, div=div: (
                               lambda part: -(part.mean() if div == "mean" else part.sum() / len(rw)))(
                                   take(group_advantages(rw).detach() * lp_)).item()))

    # The advantages paired with the wrong joint actions: reward g belongs to joint action g, made of sample g of every
    # agent, so lp[g] is weighed by A[g]; (the message's hint, loss_of). A reversed, A rolled, or A[1:] against lp[:-1].
    def mispaired(lp_, rw, pair):
        A_ = group_advantages(rw).detach()
        a_, l_, div = pair(A_, lp_)
        return (-(a_ * l_).sum() / div(len(rw))).item()

    paired = [(" You paired the log-probs with the advantages in REVERSED order, lp[g] with A[G-1-g] (A.flip(0), "
               "reversed(...), or [::-1] on one of the two): reward g belongs to joint action g, made of sample g of "
               "every agent (aligned), so lp[g] is weighed by A[g], the same index, neither reversed.",
               lambda A_, l_: (A_.flip(0), l_, lambda G_: G_))]
    for k in (1, -1):
        paired.append((f" You paired the log-probs with the advantages shifted by one, lp[g] with A[g {'-' if k > 0 else '+'}"
                       f" 1] (A.roll({k}), torch.roll, or an index off by one wrapping round): reward g belongs to "
                       "joint action g, made of sample g of every agent (aligned), so lp[g] is weighed by A[g], the "
                       "same index.", lambda A_, l_, k=k: (A_.roll(k), l_, lambda G_: G_)))
    for a_cut, l_cut in (("[1:]", "[:-1]"), ("[:-1]", "[1:]")):
        for div, said in ((lambda G_: G_ - 1, ".mean()"), (lambda G_: G_, ".sum() / G")):
            paired.append((f" You paired the log-probs with the advantages shifted by one, A{a_cut} * lp{l_cut} "
                           f"(then {said}): lp[g] meets the advantage of joint action g {'+' if a_cut == '[1:]' else '-'}"
                           " 1, and one joint action drops out. Reward g belongs to joint action g, made of sample g "
                           "of every agent (aligned), so lp[g] is weighed by A[g]: -(A * lp).mean() over all G, the "
                           "same index, no slices.",
                           lambda A_, l_, a_cut=a_cut, div=div: (
                               (A_[1:], l_[:-1], div) if a_cut == "[1:]" else (A_[:-1], l_[1:], div))))

    def gradient_is_right(loss, lp, A) -> bool:
        """Whether loss's gradient with respect to lp is L_i's, -A/G (and not 0): the same update, whatever its value
        (the graph is kept: the check's own backward comes later)."""
        if not (torch.is_tensor(loss) and loss.requires_grad) or not A.abs().max() > 1e-6:
            return False
        try:
            g, = torch.autograd.grad(loss, lp, retain_graph=True, allow_unused=True)
        except RuntimeError:
            return False
        return g is not None and torch.allclose(g, -A / len(A), atol=1e-6)

    for n, G, rewards, logps in cases:
        given = rewards.clone()
        got = call_answer(fn, [lp for lp in logps], given, said=lambda e, n=n, G=G: (
            f"for {n} agent(s) and G={G} your function raised {type(e).__name__}: {first_line(e)}. It receives a list "
            f"of {n} (G,) log-prob tensors and the (G,) rewards, and returns a list of one loss per agent."))
        _not_none(got, f"a list of one loss per agent ({n} here)")
        if isinstance(got, Mapping):
            keys = list(got.keys())
            raise ExerciseFailed(f"return a list with one loss per agent ({n} here), `[... for lp in logps]`, loss i from "
                                 f"logps[i]; you returned a {type(got).__name__} (keys {keys[:3]!r}"
                                 + (", ..." if len(keys) > 3 else "") + "). The stag hunt below pairs your losses "
                                 "with the agents' optimisers, `for opt, loss in zip(opts, losses)`, and a dict yields "
                                 "its KEYS there, not the losses. Return a list in the order of logps, no keys: "
                                 "`[-(A * lp).mean() for lp in logps]`.")
        if not torch.equal(given, rewards):
            raise ExerciseFailed(f"for rewards {[round(v, 2) for v in rewards.tolist()]} your function changed the "
                                 "rewards tensor it was given (in place, e.g. rewards -= rewards.mean()): the trainer's "
                                 "logged rewards would be overwritten. Compute the advantage as a new tensor, "
                                 "A = rewards - rewards.mean().")
        if not hasattr(got, "__len__") or (torch.is_tensor(got) and got.dim() == 0):
            if torch.is_tensor(got):
                if explains_one(lambda lps, rw: sum(policy_loss(lp, group_advantages(rw)).item() for lp in lps) / len(lps)):
                    raise ExerciseFailed(f"return a list with one loss per agent ({n} here), `[... for lp in logps]`; "
                                         "you returned ONE scalar tensor, the MEAN of the agents' losses (their sum / "
                                         f"{n}): averaged, each agent's gradient is 1/{n} of its own loss's, and no "
                                         "agent's "
                                         "optimiser has its own loss to step on. Each agent gets the WHOLE loss with "
                                         "the shared advantage: return the list itself, no mean and no sum over "
                                         "agents.")
                if explains_one(lambda lps, rw: sum(policy_loss(lp, group_advantages(rw)).item() for lp in lps)):
                    raise ExerciseFailed(f"return a list with one loss per agent ({n} here), `[... for lp in logps]`; "
                                         "you returned ONE scalar tensor. Each agent gets the whole loss with the "
                                         "shared advantage, for its own optimiser: do not add the agents' losses "
                                         "together.")
                raise ExerciseFailed(f"return a list with one loss per agent ({n} here), `[... for lp in logps]`; you "
                                     "returned ONE scalar tensor. Each agent gets the whole loss with the shared "
                                     "advantage, for its own optimiser: do not join the agents' losses into one.")
            what = f"a {type(got).__name__}" + (" (a generator expression, in round brackets)"
                                                if type(got).__name__ == "generator" else "")
            raise ExerciseFailed(f"return a list with one loss per agent ({n} here), `[... for lp in logps]` in square "
                                 f"brackets; you returned {what}, which has no length and cannot be indexed by agent, "
                                 "and is empty once it has been read through.")
        if torch.is_tensor(got):
            raise ExerciseFailed(f"return a list of {n} separate losses, `[... for lp in logps]`; you returned one "
                                 f"tensor of shape {tuple(got.shape)} (torch.stack or torch.tensor of the losses?). "
                                 "torch.stack joins the agents' losses into ONE graph: the stag hunt below calls "
                                 "loss.backward() on each agent's loss in turn, and the second call fails with "
                                 "\"Trying to backward through the graph a second time\". Return the list itself.")
        if len(got) != n:
            fixed = (" Your function returns 2 losses whatever the number of agents: it assumes two agents "
                     "(logps[0] and logps[1], or range(2)), but the check also runs 1 and 3 agents. Read n from the input, n = len(logps), and build one loss for each tensor in it: "
                     "`[... for lp in logps]`." if len(got) == 2 else
                     " The check runs 1, 2 and 3 agents: one loss for each tensor of logps, n = len(logps), "
                     "`[... for lp in logps]`.")
            raise ExerciseFailed(f"for {n} agent(s) (len(logps) = {n}) return one loss per agent, {n}; you returned "
                                 f"{len(got)}." + fixed)
        A = group_advantages(rewards)
        for i, (loss, lp) in enumerate(zip(got, logps)):
            want = policy_loss(lp, A)
            if isinstance(loss, numbers.Real) and not is_bool(loss):
                raise ExerciseFailed(f"agent {i + 1}'s (logps[{i}]) loss is a plain Python number ({type(loss).__name__} "
                                     f"{float(loss):.4f}), not a tensor: .item() or float() (or .tolist()) turns the "
                                     "loss into a number and cuts it from the autograd graph, so no gradient reaches "
                                     "the agent's log-probs and loss.backward() cannot run. Return the 0-d tensor "
                                     "itself, -(A * lp).mean(), without .item() or float().")
            if not torch.is_tensor(loss) or loss.dim() != 0:
                raise ExerciseFailed(f"agent {i + 1}'s (logps[{i}]) loss must be one number as a 0-d tensor (shape (), like "
                                     f"policy_loss's: a mean, not a (1,) or (G,) tensor), got {loss!r}")
            if not abs(loss.item() - want.item()) <= 1e-4:        # a nan fails here too
                got_v, want_v = loss.item(), want.item()
                hint = ""
                if got_v != got_v:
                    hint = (" Your loss is nan: with equal rewards every advantage is 0 and so is the loss; do not divide "
                            "by the rewards' std (MAGRPO does not scale A).")
                elif abs(got_v) <= 1e-4 and gradient_is_right(loss, lp, A):
                    hint = (" Your loss's value is 0, but its gradient is right, L_i's (-A/G): that is TRL's on-policy "
                            "ratio form (the HF course's GRPO chapter too), -(A * exp(lp - lp.detach())).mean(), whose "
                            "ratio is 1 in value, so the loss's value is -mean(A) = 0, while its gradient is L_i's. "
                            "It would train the same, but the exercise asks for the value of L_i as written, "
                            "-(1/G) sum_g A^(g) logp_i^(g) (the value is what is logged and compared): weigh the "
                            "log-probs themselves, -(A * lp).mean(), no exp(lp - lp.detach()).")
                elif abs(got_v) <= 1e-4 and explains(lambda lp_, rw: 0.0):
                    hint = (" Your loss is 0 for every input (every agent, every group), so no agent ever learns. "
                            "A = r - mean(r) is centred: its G entries sum to 0 by construction, so a loss built from "
                            "A.mean() or A.sum() (A.mean() * lp.mean(), (A.mean() * lp).mean(), A.sum() * lp.sum()) "
                            "is 0 whatever the rewards; a constant such as torch.zeros(()) or 0 * lp.sum() is 0 too. "
                            "Weigh each log-prob by ITS OWN joint action's advantage, elementwise, then average: "
                            "-(A * lp).mean().")
                elif abs(got_v + want_v) <= 1e-4 and (
                        explains(lambda lp_, rw: abs(policy_loss(lp_, group_advantages(rw)).item()))
                        or explains(lambda lp_, rw: -abs(policy_loss(lp_, group_advantages(rw)).item()))):
                    hint = (" You took the absolute value of the loss (.abs() or abs()): the loss's sign is lost, |L| is "
                            "not L, so for some agents the step goes the wrong way. A negative loss is fine (it is "
                            "negative whenever the joint actions with A > 0 are already the likelier ones): return "
                            "-(A * lp).mean() as computed, no abs().")
                elif abs(got_v + want_v) <= 1e-4:
                    hint = " The sign is flipped: descending the loss must RAISE the log-probs of joint actions with A > 0."
                elif G > 1 and abs(got_v - want_v * G / (G - 1)) <= 1e-4:
                    hint = (f" Yours is G/(G-1) = {G}/{G - 1} times the loss: you divided by G-1 instead of G, or took "
                            "the leave-one-out baseline (the mean of the OTHER G-1 rewards); MAGRPO's baseline is the mean "
                            "of all G rewards, the joint action's own included, and the loss averages the G joint actions.")
                elif any(abs(got_v - policy_loss(lp, A / sd).item()) <= 1e-4 for sd in _stds(rewards)):
                    hint = (" You divided the advantages by the rewards' std, i.e. z-scored the rewards ((r - mean) / std, "
                            "as GRPO does); MAGRPO's advantage is r - mean(r), unscaled: drop the division.")
                elif abs(got_v - want_v * G) <= 1e-4:
                    hint = f" You summed over the G = {G} joint actions; the loss averages them (1/G)."
                elif n > 1 and abs(got_v - policy_loss(sum(logps), A).item()) <= 1e-4:
                    hint = (f" You used the joint log-prob, the sum of all {n} agents' log-probs, in every loss; agent "
                            "i's loss weighs ITS OWN log-probs, logps[i] (log pi_i): the others' belong to the other "
                            "agents' losses and optimisers.")
                elif abs(got_v - policy_loss(lp, rewards).item()) <= 1e-4:
                    hint = (" You weighted the log-probs by the rewards themselves, with no baseline: subtract the "
                            "group's mean first, A = r - mean(r), so that a joint action below the mean is made LESS "
                            "likely.")
                elif (abs(got_v + policy_loss(lp, rewards).item()) <= 1e-4
                      and explains(lambda lp_, rw: -policy_loss(lp_, rw).item())):
                    hint = (" You left out both the minus sign and the baseline: yours is (rewards * lp).mean(). "
                            "Subtract the group's mean, A = r - mean(r), so that a joint action below the mean is made "
                            "LESS likely, and put the minus in front, -(A * lp).mean(): the optimiser DESCENDS the "
                            "loss, and descending it must raise the log-probs of joint actions with A > 0.")
                elif abs(got_v - want_v / G) <= 1e-4:
                    hint = (f" Yours is the loss divided by G = {G} once more: you divided by G twice. .mean() already "
                            "divides the sum over the G joint actions by G: write -(A * lp).mean(), or "
                            "-(A * lp).sum() / G, not both.")
                elif abs(got_v - want_v / n) <= 1e-4:
                    hint = (f" You split the loss among the {n} agents; each agent gets the WHOLE loss with the shared "
                            "advantage (its own optimiser steps on it).")
                elif n != G and abs(got_v - want_v * G / n) <= 1e-4:
                    hint = (f" You divided by the number of agents, len(logps) = {n}; the loss averages the G = {G} "
                            "joint actions: divide the sum by G = len(rewards), or take .mean() over the G samples.")
                elif abs(got_v - policy_loss(lp.exp(), A).item()) <= 1e-4:
                    hint = (" You weighted the probabilities, logps[i].exp(); the loss weighs the LOG-probabilities "
                            "as given (the gradient of log pi_i is the policy gradient's score).")
                elif (abs(got_v - policy_loss(lp, rewards - rewards[0]).item()) <= 1e-4
                      and explains(lambda lp_, rw: policy_loss(lp_, rw - rw[0]).item())):
                    hint = (" You subtracted the first reward, rewards[0], as the baseline: every advantage is measured "
                            "against joint action 0, whatever it scored. The baseline is the group's MEAN, "
                            "rewards.mean(), over all G rewards.")
                elif (abs(got_v - policy_loss(lp, rewards - rewards.max()).item()) <= 1e-4
                      and explains(lambda lp_, rw: policy_loss(lp_, rw - rw.max()).item())):
                    hint = (" You subtracted the best reward, rewards.max(), as the baseline (MAReMax, notebook 06); "
                            "MAGRPO's baseline is the MEAN of the G rewards, rewards.mean().")
                elif (abs(got_v - policy_loss(lp, rewards - rewards.min()).item()) <= 1e-4
                      and explains(lambda lp_, rw: policy_loss(lp_, rw - rw.min()).item())):
                    hint = (" You subtracted the worst reward, rewards.min(), as the baseline: every advantage comes "
                            "out at or above 0, so every joint action is made more likely, the worst one too (only by "
                            "less). MAGRPO's baseline is the MEAN of the G rewards, rewards.mean(), so that a joint "
                            "action below it gets a negative advantage and is made less likely.")
                elif any(abs(got_v - policy_loss(lp, rewards - b).item()) <= 1e-4
                         for b in (rewards.median(), rewards.quantile(0.5))):
                    hint = (" You subtracted the median reward; MAGRPO's baseline is the MEAN of the G rewards, "
                            "rewards.mean().")
                elif any(abs(got_v - policy_loss(lp, a).item()) <= 1e-4 for a in _rank_advantages(rewards)):
                    hint = (" You used the rewards' RANKS (argsort) as the advantages; MAGRPO's advantage is the rewards' "
                            "own values minus their mean, A = r - mean(r): how far a joint action lies above or below "
                            "the mean matters, not only its place in the order.")
                elif abs(got_v - policy_loss(lp, A.abs()).item()) <= 1e-4:
                    hint = (" You took the absolute value of the advantage: a joint action below the mean must keep its "
                            "NEGATIVE advantage, so that the loss makes it less likely.")
                elif (c := next((c for c in (1.0, 0.5, 2.0, 3.0, 5.0)
                                 if abs(got_v - policy_loss(lp, A.clamp(-c, c)).item()) <= 1e-4
                                 and explains(lambda lp_, rw, c=c: policy_loss(
                                     lp_, group_advantages(rw).clamp(-c, c)).item())), None)) is not None:
                    hint = (f" You clipped the advantages to [-{c:g}, {c:g}], A.clamp(-{c:g}, {c:g}): how far a joint "
                            "action lies above or below the mean is cut off there, so the best and the worst weigh no "
                            "more than a near-miss. MAGRPO's advantage is unclipped, A = r - mean(r): drop the "
                            ".clamp(...).")
                elif (abs(got_v - policy_loss(lp, A.sign()).item()) <= 1e-4
                      and explains(lambda lp_, rw: policy_loss(lp_, group_advantages(rw).sign()).item())):
                    hint = (" You kept only the advantage's sign, A.sign() (+1 above the mean, -1 below): how far a "
                            "joint action lies from the mean is lost, a near-tie weighs as much as the best. Weigh each "
                            "log-prob by A itself, A = r - mean(r), unscaled.")
                elif (j := next((j for j in range(n) if j != i and abs(got_v - policy_loss(logps[j], A).item()) <= 1e-4),
                                None)) is not None:
                    same = all(abs(float(o.detach()) - policy_loss(logps[j], A).item()) <= 1e-4 for o in got)
                    hint = (f" That is agent {j + 1}'s loss, from logps[{j}]: " + (
                        f"every loss you returned uses logps[{j}]; loss i must use agent i's own log-probs, logps[i]."
                        if same else "return the losses in the order of logps, loss i from logps[i] (no reversed(), no "
                        "sorting), so that each agent's optimiser steps on its own loss."))
                elif (cut := next((say for say, loss_of in sliced if abs(got_v - loss_of(lp, rewards)) <= 1e-4
                                   and explains(loss_of)), None)) is not None:
                    hint = cut
                elif G > 1 and (mis := next((say for say, pair in paired
                                             if abs(got_v - mispaired(lp, rewards, pair)) <= 1e-4
                                             and explains(lambda lp_, rw, pair=pair: mispaired(lp_, rw, pair))),
                                            None)) is not None:
                    hint = mis
                elif (k := rounded_to(got_v, want_v, range(6), close=lambda a, b: abs(a - b) <= 1e-6)) is not None:
                    raise ExerciseFailed(f"n={n} agents, G={G}, rewards {[round(v, 2) for v in rewards.tolist()]}: agent "
                                         f"{i}'s loss is {want_v:.6f}, you returned {got_v:.6f}: close but not equal, "
                                         f"you rounded the loss to {k} decimal(s). Do not round: return the mean as "
                                         "computed (torch.round also has gradient 0, so the agent would not learn).")
                elif (k := next((k for k in range(6)
                                 if abs(got_v - policy_loss(lp, A.round(decimals=k)).item()) <= 1e-5), None)) is not None:
                    hint = (f" You rounded the advantages to {k} decimal(s); use A = r - mean(r) as computed, unrounded "
                            "(a rounded A weighs the log-probs a little wrong, or not at all where it rounds to 0).")
                elif gradient_is_right(loss, lp, A):
                    hint = (f" Its gradient is right, L_i's (-A/G), but its value is off by {got_v - want_v:+.4f}, a "
                            "term without gradient (a constant, or something detached): the exercise asks for the "
                            "value of L_i as written, -(1/G) sum_g A^(g) logp_i^(g), with nothing added.")
                raise ExerciseFailed(
                    f"n={n} agents, G={G}, rewards {[round(v, 2) for v in rewards.tolist()]}: agent {i + 1}'s (logps[{i}]) loss is "
                    f"{want_v:.4f}, you returned {got_v:.4f}. Each agent's loss is "
                    "-(1/G) sum_g A^(g) logp_i^(g), with A = r - mean(r), the same A for every agent." + hint)
            if not loss.requires_grad:
                raise ExerciseFailed(f"agent {i + 1}'s (logps[{i}]) loss carries no gradient (it was computed from detached log-probs, or "
                                     "with .item()): the log-probs must stay in the graph, only the advantage is a constant")
        # As the stag hunt does: loss.backward() on each agent's loss in turn, no retain_graph.
        for i, loss in enumerate(got):
            before = [None if lp.grad is None else lp.grad.clone() for lp in logps]
            try:
                loss.backward()
            except RuntimeError as e:
                if "second time" in str(e) or "freed" in str(e):
                    raise ExerciseFailed(f"n={n} agents: agent {i + 1}'s (logps[{i}]) loss.backward() failed after the earlier agents' "
                                         "(\"Trying to backward through the graph a second time\"): your losses share "
                                         "one graph (torch.stack of the losses, or one tensor of all the agents' "
                                         "log-probs split afterwards). The stag hunt below calls loss.backward() on "
                                         "each agent's loss in turn: return a list of separate losses, agent i's "
                                         "computed from logps[i] alone.") from None
                raise ExerciseFailed(f"agent {i + 1}'s (logps[{i}]) loss.backward() raised RuntimeError: "
                                     f"{(str(e).splitlines() or [''])[0]}.") from None
            for j, lp in enumerate(logps):
                grad = lp.grad if before[j] is None else lp.grad - before[j]
                want_grad = -A / G if j == i else torch.zeros_like(A)
                if (grad is None and j == i) or (grad is not None and not torch.allclose(grad, want_grad, atol=1e-5)):
                    hint = ""
                    if j == i and want_grad.abs().max() > 1e-6 and (grad is None or not grad.any()):
                        hint = (f" Your loss passes NO gradient back to logps[{i}] although its value is right (to 1e-4): "
                                "rounding (torch.round, floor, ceil) has gradient 0 everywhere; do not round the loss, "
                                "return the mean as computed.")
                    elif j == i and (k := next((k for k in range(6) if torch.allclose(
                            grad, -A.round(decimals=k) / G, atol=1e-7)), None)) is not None:
                        hint = (f" Your gradient is -round(A, {k})/G: you rounded the advantages to {k} decimal(s); use "
                                "A = r - mean(r) as computed, unrounded.")
                    raise ExerciseFailed(f"agent {i + 1}'s loss must depend on its own log-probs, logps[{i}], with gradient "
                                         "-A/G, and on no other agent's (the advantage is a constant: compute it "
                                         "from the rewards, not from anything with a gradient)." + hint)
    # The stag hunt's log-probs are no leaves: torch.log(probs[i][acts[i]]), one graph per agent from its logits. A
    # loss that reaches into another agent's log-probs (0 * sum(logps), say) has the right value and a zero gradient
    # there, which the leaves above cannot tell apart; but its backward frees that agent's graph, and the other
    # agent's own loss.backward() then fails. Run the stag hunt's loop once on such log-probs.
    logits = [torch.randn(2, generator=gen).requires_grad_() for _ in range(2)]
    acts = [torch.tensor([0, 1, 0, 1]), torch.tensor([0, 0, 1, 1])]
    hunt = [torch.log(torch.softmax(lg, dim=-1)[a]) for lg, a in zip(logits, acts)]
    try:
        losses = list(fn(hunt, torch.tensor([8.0, 3.0, 3.0, 6.0])))
    except Exception:  # noqa: BLE001  it passed every case above: nothing more to say here
        losses = []
    for i, loss in enumerate(losses):
        try:
            loss.backward()
        except RuntimeError as e:
            if "second time" in str(e) or "freed" in str(e):
                raise ExerciseFailed(f"agent {i + 1}'s loss.backward() fails in the stag hunt (\"Trying to backward "
                                     "through the graph a second time\"), where each agent's log-probs come from its "
                                     "own logits, torch.log(probs[i][acts[i]]): an earlier agent's loss reaches into "
                                     f"agent {i + 1}'s log-probs (logps[{i}] is in its graph, even multiplied by 0, "
                                     "e.g. `lp + 0 * sum(logps)`), so that loss's backward freed agent "
                                     f"{i + 1}'s graph. Its value and gradients are right, but agent i's loss must "
                                     "be built from logps[i] alone: `[-(A * lp).mean() for lp in logps]`.") from None
            break
        except Exception:  # noqa: BLE001  not a tensor loss: refused above already
            break
    not_a_wrapper(fn, ([-torch.rand(4, generator=gen).requires_grad_() for _ in range(2)], torch.rand(4, generator=gen)),
                  "my_shared_losses", policy_loss, group_advantages,
                  how="from the lines above (A = rewards - rewards.mean(), then -(A * lp).mean() for each agent)")
