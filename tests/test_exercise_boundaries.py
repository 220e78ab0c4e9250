"""Every exercise's check is probed at each boundary its notebook states.

For each registered exercise, BOUNDARIES lists wrong answers that differ from the reference solution only at a
boundary the notebook's text states (a strict against a non-strict bound, an off-by-one, an empty input, a group
whose rewards agree, a threshold just off the stated one, a dtype or container the text allows), with a pattern
the refusal must contain where the check has a specific sentence for it. The test asserts that every exercise is
listed, that each probe is refused with ExerciseFailed (a sentence, not a crash), and that the refusal names the
boundary where a pattern is given. tests/test_exercises.py runs the listed MISTAKES and VARIANTS; this file is the
walk along the specs' edges, written from the notebooks' exercise cells."""
import math
import re

import pytest
import torch

from magrpo_edu import exercises as ex
from magrpo_edu.exercises.solutions import nb00, nb01, nb02, nb03, nb04, nb05, nb06, nb07, nb08, nb09
from magrpo_edu.quality import repetition
from magrpo_edu.tasks.writing.reward import tldr_levels, unique_words


def _ramp03(fn_value):
    """03.length_level with the value on the ramps changed by fn_value(v)."""
    return lambda r: None if (v := nb03.length_level(r)) is None else fn_value(v)


def _loo_by_value(r):
    return torch.stack([x - r[r != x].mean() for x in r])


def _threshold_ge(means, budget):          # cut at ">= t" read for "> t": ties at t left out... or one too many
    return sorted(means)[min(budget, len(means) - 1)]


def _stop(l1=None, l2=None, l3=None):
    return nb09._with(l1=l1, l2=l2, l3=l3)


def _u(a, b):
    return len(unique_words(b)) / max(1, len(unique_words(a)))


def _honest(threshold, strict=True):
    if strict:
        return lambda c1, c2: 0.0 if max(repetition(c1), repetition(c2)) > threshold else tldr_levels(c1, c2)["total"]
    return lambda c1, c2: 0.0 if max(repetition(c1), repetition(c2)) >= threshold else tldr_levels(c1, c2)["total"]


def _spot(strict=(True, True, True)):
    """08.spot_the_hack with one of its three strict bounds read as >= (reward rise, naturalness rise, repetition)."""
    cmp = [(lambda x, y: x > y) if st else (lambda x, y: x >= y) for st in strict]

    def fn(u, t):
        rose = cmp[0](t["reward"] - u["reward"], 0.1)
        drift = any(cmp[1](t[f"naturalness{k}"] - u[f"naturalness{k}"], 1.0) for k in (1, 2))
        reps = any(cmp[2](t[f"repetition{k}"], 0.2) for k in (1, 2))
        return bool(rose and (drift or reps))
    return fn


def _in_band(lo_ok, hi_ok, guard):
    def fn(pairs):
        hits = 0
        for a, b in pairs:
            if guard == "empty-out" and not a:
                continue
            ratio = len(b) / (max(len(a), 1) if guard == "max1" else len(a))
            hits += (lo_ok(ratio) and hi_ok(ratio))
        return hits / len(pairs) if pairs else 0.0
    return fn


def _adapter_squeezed(model, adapter, input_ids):
    return nb07.adapter_logits(model, adapter, input_ids).squeeze()


# exercise -> [(the boundary the notebook states, a wrong answer that crosses it, a pattern of the refusal or None)]
BOUNDARIES = {
    "00.group_advantages": [
        ("a group whose rewards agree: every advantage 0 (a std-scaled answer divides by 0)",
         lambda r: [(x - sum(r) / len(r)) / (sum((y - sum(r) / len(r)) ** 2 for y in r) / len(r)) ** 0.5 for x in r],
         None),
        ("the mean of all G rewards, not of the G-1 others", lambda r: [x - (sum(r) - x) / (len(r) - 1) for x in r],
         "leave-one-out"),
        ("G, not G-1, in the mean", lambda r: [x - sum(r) / (len(r) - 1) for x in r], None),
        ("a NEW list: the caller's rewards untouched", nb00._in_place, "NEW list"),
        ("exact values, not rounded", lambda r: [round(x - sum(r) / len(r), 4) for x in r], "do not round"),
        ("advantage i belongs to reward i", lambda r: sorted(x - sum(r) / len(r) for x in r), "order of the rewards"),
        ("a list of advantages, not the mean", lambda r: sum(r) / len(r), "group's mean reward"),
        ("the size of r - mean, not its sign", lambda r: [float(x > sum(r) / len(r)) - float(x < sum(r) / len(r))
                                                         for x in r], "SIGN"),
        ("rounded to 5 decimals, said as 5", lambda r: [round(x - sum(r) / len(r), 5) for x in r], "to 5 decimals"),
        ("r - mean itself, not divided by G again", nb00._divided_by_G, "divided them by G"),
        ("the mean with /, not // (a whole number)", nb00._floor_mean, "floor division"),
        ("the rule written out, not the package's", nb00.MISTAKES["00.group_advantages"][26], "package's own `group_advantages`"),
        ("the mean, not the max (MAReMax)", nb00.MISTAKES["00.group_advantages"][1], "MAReMax's baseline"),
        ("no clamp: r - mean, whatever its size", nb00.MISTAKES["00.group_advantages"][27], "nothing else: here"),
        ("G, not G-1, in the mean", nb00.MISTAKES["00.group_advantages"][3], "divided the sum by G-1"),
    ],
    "00.length_ratio_reward": [
        ("an EMPTY concise answer earns 0", lambda a, b: 1.0 if not a else nb00.length_ratio_reward(a, b),
         "empty concise answer earns 0"),
        ("a concise answer of spaces is not empty", lambda a, b: 0.0 if not a.strip() else nb00.length_ratio_reward(a, b),
         "is not empty"),
        ("an empty DETAILED answer: ratio 0, reward exp(-2)", lambda a, b: 0.0 if not b else nb00.length_ratio_reward(a, b),
         None),
        ("both empty: 0", lambda a, b: 1.0 if not a and not b else nb00.length_ratio_reward(a, b), None),
        ("an empty concise answer must not divide by zero",
         lambda a, b: math.exp(-max(2 - len(b) / len(a), 0, len(b) / len(a) - 3)), "divide by zero"),
        ("spaces at the ends count", lambda a, b: nb00.length_ratio_reward(a.strip(), b.strip()), "leading/trailing"),
        ("characters, not UTF-8 bytes", lambda a, b: nb00.length_ratio_reward(a.encode(), b.encode()), "bytes"),
        ("the band's upper edge: above 3 is exp(-(ratio - 3))",
         lambda a, b: 0.0 if not a else (lambda l: 1.0 if l >= 2 else math.exp(-(2 - l)))(len(b) / len(a)), "UPPER edge"),
        ("the rule written out, not the package's", nb00.MISTAKES["00.length_ratio_reward"][30], "package's own `length_ratio_reward`"),
        ("unscaled: not x100", nb00.MISTAKES["00.length_ratio_reward"][31], "multiplied the reward by 100"),
        ("exp(-δ), not exp(-δ/2)", nb00.MISTAKES["00.length_ratio_reward"][32], "halved the distance"),
        ("the nearer end above 3", nb00.MISTAKES["00.length_ratio_reward"][33], r"always to 2.*FARTHER"),
        ("the nearer end below 2", nb00.MISTAKES["00.length_ratio_reward"][34], r"always to 3.*FARTHER"),
        ("the ratio unrounded", nb00.MISTAKES["00.length_ratio_reward"][35], "rounded the ratio to 1 decimal"),
        ("characters as written: no .rstrip()", nb00.MISTAKES["00.length_ratio_reward"][36], r"you stripped the texts \(\.rstrip\(\)\)"),
        ("the edges inside: never above 1", nb00.MISTAKES["00.length_ratio_reward"][37], r"reward above 1 is impossible.*At the edge, ratio = 2"),
        ("stripped after the empty test: ' ' divides by zero", nb00.MISTAKES["00.length_ratio_reward"][38], r"divide by zero.*you stripped the texts"),
    ],
    "01.leave_one_out": [
        ("G-1 others, not G", lambda r: r - (r.sum() - r) / len(r), "G = "),
        ("the others by POSITION: ties are others too", _loo_by_value, "POSITION"),
        ("the sample itself left out of the sum", lambda r: r - r.sum() / (len(r) - 1), "ALL G rewards"),
        ("two samples that differ: the other one is the baseline",
         lambda r: r - (r.sum() - r) / (len(r) - 1) if len(r) > 2 else r - r.mean(), r"\[0\.0, 1\.0\]"),
        ("each advantage stored with =, not compared with ==",
         lambda r: (A := torch.zeros_like(r), [A[g] == r[g] - (r.sum() - r[g]) / (len(r) - 1) for g in range(len(r))])[0],
         "every advantage is 0"),
        ("fractions: not an integer tensor", lambda r: (r - (r.sum() - r) / (len(r) - 1)).long(), "integer tensor"),
        ("the rewards' dtype kept, not float16", lambda r: (r - (r.sum() - r) / (len(r) - 1)).half(), "float16"),
        ("G from the rewards: groups of 2, 3 and 6 too", lambda r: r - (r.sum() - r) / 3, "fixed G = 4"),
        ("the formula, not group_advantages(mode='rloo')", nb01.MISTAKES["01.leave_one_out"][14], "package's own `group_advantages`"),
        ("G/(G-1), not (G-1)/G", nb01.MISTAKES["01.leave_one_out"][15], r"\(G-1\)/G = 3/4 times"),
        ("no std scaling", nb01.MISTAKES["01.leave_one_out"][16], "standard deviation"),
        ("the others' mean, not max", nb01.MISTAKES["01.leave_one_out"][17], "MAXIMUM of the other rewards"),
        ("/, not //", nb01.MISTAKES["01.leave_one_out"][18], "floor division"),
        ("float32 kept", nb01.MISTAKES["01.leave_one_out"][19], r"torch\.float64 from torch\.float32 rewards"),
        ("float64 kept", nb01.MISTAKES["01.leave_one_out"][20], r"torch\.float32 from torch\.float64 rewards"),
        ("no clipping", nb01.MISTAKES["01.leave_one_out"][21], r"clipped them to \[-0\.5, 0\.5\]"),
    ],
    "01.sequence_logprob": [
        ("a bool mask", lambda lp, m: torch.einsum("gc,gc->g", lp, m), "bool mask"),
        ("an empty completion sums to 0 (a mean divides by 0)", lambda lp, m: (lp * m).sum(-1) / m.sum(-1), None),
        ("the padding left out", lambda lp, m: lp.sum(-1), "padding"),
        ("the log-probs' dtype kept", lambda lp, m: (lp * m).sum(-1).double(), "dtype"),
        ("float64 log-probs give float64 sums", lambda lp, m: (lp * m).sum(-1).float(), "float64 token log-probs"),
        ("the sum of the log-probs, not a logsumexp",
         lambda lp, m: torch.logsumexp(lp.masked_fill(~m.bool(), float("-inf")), -1), "log of a SUM"),
        ("an empty completion: 0, not log 0", lambda lp, m: (lp.exp() * m).sum(-1).log(), "not an underflow"),
        ("log-probs are <= 0: no minus", lambda lp, m: -(lp * m).sum(-1), "sign is flipped"),
        ("log-probs are <= 0: no abs", lambda lp, m: (lp * m).sum(-1).abs(), "sign is flipped"),
        ("a sum, not an unguarded mean", nb01.MISTAKES["01.sequence_logprob"][22], r"AVERAGED.*0 / 0 = nan"),
        ("the EOS token counts", nb01.MISTAKES["01.sequence_logprob"][23], "EOS token.*part of the answer"),
        ("mask not shifted", nb01.MISTAKES["01.sequence_logprob"][24], "LAST real token"),
        ("float mask: torch.where", nb01.MISTAKES["01.sequence_logprob"][25], r"float mask.*mask\.bool\(\)"),
        ("float mask: ~", nb01.MISTAKES["01.sequence_logprob"][26], r"float mask.*mask\.bool\(\)"),
        ("log-probs, not probabilities", nb01.MISTAKES["01.sequence_logprob"][27], "SUM of the real tokens' probabilities"),
        ("padding not exp(0)", nb01.MISTAKES["01.sequence_logprob"][28], r"exp\(0\) = 1"),
        ("log-prob, not probability", nb01.MISTAKES["01.sequence_logprob"][29], "PROBABILITY itself"),
        ("unrounded sums", nb01.MISTAKES["01.sequence_logprob"][30], "rounded them to 2 decimals"),
        ("rounding: zero gradient", nb01.MISTAKES["01.sequence_logprob"][31], "0 everywhere.*torch.round"),
        ("the padding left out (values first)", nb01.MISTAKES["01.sequence_logprob"][3], r"summed the padding too.*Multiply by the mask"),
        ("the mask not inverted", nb01.MISTAKES["01.sequence_logprob"][7], "mask is inverted"),
        ("the mask position by position", nb01.MISTAKES["01.sequence_logprob"][32], r"summed the padding too.*mask\.any\(-1\)"),
    ],
    "01.grpo_token_mean_loss": [
        ("an empty completion: max(|a|, 1)", lambda lp, m, A: -(A * (lp * m).sum(-1) / m.sum(-1)).mean(), "max"),
        ("max(|a|, 1), not |a| + 1", lambda lp, m, A: -(A * (lp * m).sum(-1) / (m.sum(-1) + 1)).mean(), r"\+ 1"),
        ("no completion fills the padded width", lambda lp, m, A: -(A * (lp * m).sum(-1) / lp.shape[1]).mean(),
         "padded width"),
        ("each completion's OWN length, not the longest",
         lambda lp, m, A: -(A * (lp * m).sum(-1) / m.sum(-1).max().clamp_min(1)).mean(), "longest"),
        ("each completion's OWN length, not the median",
         lambda lp, m, A: -(A * (lp * m).sum(-1) / m.sum(-1).median().clamp_min(1)).mean(), "MEDIAN"),
        ("the advantages as given, not re-centred",
         lambda lp, m, A: -((A - A.mean()) * (lp * m).sum(-1) / m.sum(-1).clamp_min(1)).mean(), "re-centre"),
        ("lengths from the mask", nb01.MISTAKES["01.grpo_token_mean_loss"][18], r"token_logp != 0.*mask\.sum\(-1\)"),
        ("1/G, not 1/(G-1)", nb01.MISTAKES["01.grpo_token_mean_loss"][19], "by G-1 = 3"),
        ("empty completions in the mean", nb01.MISTAKES["01.grpo_token_mean_loss"][20], "non-empty completions only"),
        ("each completion's own advantage", nb01.MISTAKES["01.grpo_token_mean_loss"][21], r"A\.mean\(\)"),
        ("G from the inputs", nb01.MISTAKES["01.grpo_token_mean_loss"][22], "you fixed G = 4"),
        ("no abs", nb01.MISTAKES["01.grpo_token_mean_loss"][23], r"\|A\^\(g\)\|"),
        ("|a|, not sqrt", nb01.MISTAKES["01.grpo_token_mean_loss"][24], "SQUARE ROOT"),
        ("loss unrounded", nb01.MISTAKES["01.grpo_token_mean_loss"][25], "rounded it to 2 decimals"),
        ("rounding: zero gradient", nb01.MISTAKES["01.grpo_token_mean_loss"][26], "0 everywhere.*torch.round"),
        ("float32 kept", nb01.MISTAKES["01.grpo_token_mean_loss"][27], r"torch\.float64 from torch\.float32"),
        ("float64 kept", nb01.MISTAKES["01.grpo_token_mean_loss"][28], r"torch\.float32 from torch\.float64"),
        ("the formula, not policy_loss wrapped", nb01.MISTAKES["01.grpo_token_mean_loss"][29], "package's own `policy_loss`"),
    ],
    "02.joint_actions": [
        ("sample indices 0 .. G-1", lambda n, G, mode: [tuple(k + 1 for k in row) for row in nb02.joint_table(n, G, mode)],
         "0 to G-1"),
        ("cross for n agents, not two", nb02.MISTAKES["02.joint_actions"][4], None),
        ("repeated indices (g, g) are joint actions", nb02.MISTAKES["02.joint_actions"][1], None),
        ("a table returned, not None (no `return`)", nb02._joint_actions_no_return, "is `return` missing"),
        ("written out, not the package's joint_actions wrapped",
         lambda n, G, mode: nb02.joint_actions(n, G, mode).tolist(), "package's own `joint_actions`"),
        ("cross mode repeats indices: product, not permutations", nb02.MISTAKES["02.joint_actions"][3], r"itertools\.product.*not permutations"),
        ("aligned is (g, ..., g): not permutations", nb02.MISTAKES["02.joint_actions"][10], "permutations never repeats"),
        ("sample indices are ints, not str", nb02.MISTAKES["02.joint_actions"][11], r"ints, not str/bool.*the str '0'"),
        ("sample indices are ints, not bool", nb02.MISTAKES["02.joint_actions"][12], r"ints, not str/bool.*the bool False"),
        ("aligned is (g, ..., g), not a rotation", nb02.MISTAKES["02.joint_actions"][13], "the g-th sample of EVERY agent"),
    ],
    "02.cross_credit": [
        ("the MEAN over a sample's G joint actions, not the sum", nb02.MISTAKES["02.cross_credit"][1], "SUMMED"),
        ("agent 1's samples are rows", nb02.MISTAKES["02.cross_credit"][0], "OTHER agent"),
        ("ONE baseline over all G*G rewards", nb02.MISTAKES["02.cross_credit"][5], "ONE mean"),
        ("credits returned, not None (no `return`)", nb02._cross_credit_no_return, "is `return` missing"),
        ("written out, not the package's credit_samples wrapped", nb02.MISTAKES["02.cross_credit"][-1], "package's own"),
        ("a mean baseline, not the min", nb02.MISTAKES["02.cross_credit"][13], r"r\.min\(\)"),
        ("r's own dtype, not float16", nb02.MISTAKES["02.cross_credit"][14], "float16"),
        ("the mean baseline, not the max", nb02.MISTAKES["02.cross_credit"][10], "MAReMax"),
        ("ONE mean, not leave-one-out", nb02.MISTAKES["02.cross_credit"][15], r"leave-one-out.*ONE mean over all"),
        ("mean over G, not G-1", nb02.MISTAKES["02.cross_credit"][16], "by G-1"),
        ("the mean baseline, not the median", nb02.MISTAKES["02.cross_credit"][17], "median"),
        ("all G*G rewards, not the diagonal's mean", nb02.MISTAKES["02.cross_credit"][18], "mean of the diagonal"),
        ("cross credit, not the aligned diagonal", nb02.MISTAKES["02.cross_credit"][19], r"diagonal of r - r\.mean\(\)"),
        ("divided by G, not G*G", nb02.MISTAKES["02.cross_credit"][20], "G times too small"),
    ],
    "02.shared_losses": [
        ("equal rewards: advantage 0, not nan (std-scaled)", nb02.MISTAKES["02.shared_losses"][5], "std"),
        ("equal rewards: a loss of 0 that still carries the gradient (0 here)",
         lambda logps, r: [torch.tensor(0.0) for _ in logps] if bool((r == r[0]).all()) else nb02.shared_losses(logps, r),
         "no gradient"),
        ("1/G, not 1/(G-1)", nb02.MISTAKES["02.shared_losses"][4], "G-1"),
        ("every agent the WHOLE loss", nb02.MISTAKES["02.shared_losses"][3], "split"),
        ("one loss per agent, in a list", lambda logps, r: (x for x in nb02.shared_losses(logps, r)), "list"),
        ("losses returned, not None (no `return`)", nb02._shared_losses_no_return, "is `return` missing"),
        ("1/G, not 1/n (the number of agents)",
         lambda logps, r: [-((r - r.mean()) * lp).sum() / len(logps) for lp in logps], "number of agents"),
        ("log-probs, not probabilities", lambda logps, r: [-((r - r.mean()) * lp.exp()).mean() for lp in logps],
         "LOG-probabilities"),
        ("the mean baseline, not the max", lambda logps, r: [-((r - r.max()) * lp).mean() for lp in logps], "MAReMax"),
        ("the mean baseline, not the median", lambda logps, r: [-((r - r.median()) * lp).mean() for lp in logps],
         "median"),
        ("a negative advantage stays negative", lambda logps, r: [-((r - r.mean()).abs() * lp).mean() for lp in logps],
         "absolute value"),
        ("written out, not the package's policy_loss wrapped",
         lambda logps, r: [nb02.policy_loss(lp, r - r.mean()) for lp in logps], "package's own `policy_loss`"),
        ("z-scored with the population std", nb02.MISTAKES["02.shared_losses"][22], "z-scored"),
        ("the loss unrounded (value off)", nb02.MISTAKES["02.shared_losses"][23], "rounded the loss to 2"),
        ("the loss unrounded (no gradient)", nb02.MISTAKES["02.shared_losses"][24], "NO gradient"),
        ("the advantages unrounded", nb02.MISTAKES["02.shared_losses"][25], "rounded the advantages"),
        ("the mean baseline, not rewards[0]", nb02.MISTAKES["02.shared_losses"][26], r"first reward, rewards\[0\]"),
        ("divided by G once", nb02.MISTAKES["02.shared_losses"][27], "divided by G twice"),
        ("reward values, not ranks", nb02.MISTAKES["02.shared_losses"][28], "RANKS"),
        ("the loss's sign kept (no abs)", nb02.MISTAKES["02.shared_losses"][29], r"\|L\| is not L"),
        ("a tensor, not .item()", nb02.MISTAKES["02.shared_losses"][30], "cuts it from the autograd graph"),
        ("a tensor, not .tolist() floats", nb02.MISTAKES["02.shared_losses"][31], "cuts it from the autograd graph"),
        ("the mean baseline, not the min", nb02.MISTAKES["02.shared_losses"][32], r"worst reward, rewards\.min\(\)"),
        ("A itself, not sign(A)", nb02.MISTAKES["02.shared_losses"][33], r"A\.sign\(\)"),
        ("one loss per agent, not their mean", nb02.MISTAKES["02.shared_losses"][34], "MEAN of the agents' losses"),
    ],
    "03.length_level": [
        ("r = 1.1 pays 0 and scoring goes on", nb03._length_level_strict(True, False), "Both ends"),
        ("r = 5.0 pays 0 and scoring goes on", nb03._length_level_strict(False, True), "Both ends"),
        ("r = 5.0001 stops", lambda r: nb03.length_level(round(r, 3)), "scoring stops"),
        ("r = 1.0999 stops", lambda r: nb03.length_level(round(r, 2)), "scoring stops"),
        ("outside: None, not 0", nb03._length_level_zero_outside, "return None"),
        ("straight ramps off their midpoints (rounded)", _ramp03(lambda v: round(v, 1)), "rounded"),
        ("straight ramps off their midpoints (smoothstep)", _ramp03(lambda v: 3 * v ** 2 - 2 * v ** 3), "STRAIGHT"),
        ("exact, not rounded to 4 places (said as 4)", _ramp03(lambda v: round(v, 4)), "rounded it to 4 decimals"),
        ("not the package's own tldr_length_level", nb03.MISTAKES["03.length_level"][-4], r"package's own `tldr_length_level`"),
        ("not a wrapper of tldr_length_level", nb03.MISTAKES["03.length_level"][-3], r"calls the package's own `tldr_length_level`"),
        ("not ramp_level with the bounds filled in", nb03.MISTAKES["03.length_level"][-2], r"calls the package's own `ramp_level`"),
        ("a Python float, not float32", nb03.MISTAKES["03.length_level"][-1], r"float32 keeps about 7 digits: return a Python float"),
        ("upper ramp falls", nb03.MISTAKES["03.length_level"][1], r"your upper ramp rises; it falls from 1 at 3\.2 to 0 at 5\.0"),
        ("lower ramp rises", nb03.MISTAKES["03.length_level"][10], r"your lower ramp falls; it rises from 0 at 1\.1 to 1 at 1\.6"),
        ("both ramps flipped", nb03.MISTAKES["03.length_level"][11], r"lower ramp falls.*And your upper ramp rises"),
        ("a float, not its text", nb03.MISTAKES["03.length_level"][12], r"you returned a str, '0\.0000'.*Return a Python float, or None where scoring stops"),
        ("a float, not a tuple", nb03.MISTAKES["03.length_level"][13], r"you returned a tuple of 1 item.*not a tuple holding it"),
        ("a float, not a 1-item array", nb03.MISTAKES["03.length_level"][14], r"numpy array of shape \(1,\).*Return a Python float"),
        ("a float, not a 0-d array", nb03.MISTAKES["03.length_level"][15], r"0-d numpy array.*right value.*float\(\.\.\.\)"),
        ("a float, not a 0-d tensor", nb03.MISTAKES["03.length_level"][16], r"0-d torch tensor.*right value.*float\(\.\.\.\)"),
        ("upper ramp ends at 5.0", nb03.MISTAKES["03.length_level"][17], r"your upper ramp reaches 0 at 5\.2, not 5\.0"),
    ],
    "03.coherence_T": [
        ("kappa = 0: T = 0", nb03._coherence_no_zero_case, None),
        ("kappa = 1: T = 0.4", nb03._coherence_no_minus_one, None),
        ("a substring of the LOWER-CASED text", nb03._coherence_case_sensitive, "lower-case"),
        ("a substring ('as' in 'has'), not a whole word", nb03._coherence_whole_words, "SUBSTRING"),
        ("the text as written: a newline or two spaces between words is no phrase",
         nb03._coherence_whitespace_collapsed, "as written"),
        ("not the package's own coherence_T", nb03.MISTAKES["03.coherence_T"][-3], r"package's own `coherence_T`"),
        ("not a wrapper of coherence_T", nb03.MISTAKES["03.coherence_T"][-2], r"calls the package's own `coherence_T`"),
        ("κ not counted by transition_categories", nb03.MISTAKES["03.coherence_T"][-1], r"calls the package's own `transition_categories`"),
        ("categories counted, not phrases", nb03.MISTAKES["03.coherence_T"][1], r"you counted phrases; κ \(kappa\) counts CATEGORIES"),
        ("a float, not a 0-d array", nb03.MISTAKES["03.coherence_T"][13], r"0-d numpy array.*right value.*Return a Python float"),
        ("a float, not a 0-d tensor", nb03.MISTAKES["03.coherence_T"][14], r"0-d torch tensor.*right value.*Return a Python float"),
    ],
    "03.honest_tldr_reward": [
        ("exactly 1/5 repeated is not above 0.2 (a lower threshold)", _honest(0.19), "with 0.2 itself"),
        ("exactly 1/5 repeated is not above 0.2 (>= on a rounded threshold)", _honest(0.1999, strict=False),
         "with 0.2 itself"),
        ("0.205 is above 0.2 (a higher threshold)", _honest(0.21), "only just above 0.2"),
        ("0.205 is above 0.2 (>= 0.21)", _honest(0.21, strict=False), "only just above 0.2"),
        ("EITHER text", nb03.MISTAKES["03.honest_tldr_reward"][-4], None),
        ("the texts as written: a completion's leading space counts", nb03._honest_stripped, "as the agents wrote"),
        ("the texts as written: a newline or two spaces count", nb03._honest_whitespace_normalised,
         "as the agents wrote"),
        ("the texts as written: a final newline counts", nb03._honest_rstripped, "strip the texts' ends"),
        ("the texts as written: a newline is no space (a phrase across it is none)",
         nb03._honest_newlines_as_spaces, "make the newlines spaces"),
        ("repetition's words: split on any whitespace, newlines too", nb03._honest_space_split, "any whitespace"),
        ("the reward is the number 0.0, not False", nb03._honest_false, "NUMBER"),
        ("exactly 1/5 is not above 0.2 (>=)", nb03.MISTAKES["03.honest_tldr_reward"][-5], r"exactly 1/5 is not above 0\.2: the cut is repetition > 0\.2"),
        ("cut, not minus 1", nb03.MISTAKES["03.honest_tldr_reward"][32], r"cut to 0\.0, not a reduction"),
        ("cut, not halved", nb03.MISTAKES["03.honest_tldr_reward"][33], r"cut to 0\.0, not a reduction"),
        ("cut, not min(0.5, total)", nb03.MISTAKES["03.honest_tldr_reward"][34], r"cut to 0\.0, not a reduction"),
        ("0.0, not None", nb03.MISTAKES["03.honest_tldr_reward"][35], r"return the float 0\.0"),
        ("c2 checked too", nb03.MISTAKES["03.honest_tldr_reward"][36], r"you never checked the detailed text c2"),
        ("cut, not a penalty below 0", nb03.MISTAKES["03.honest_tldr_reward"][37], r"cut to 0\.0, not a penalty"),
        ("padded concise: cut, not halved", nb03.MISTAKES["03.honest_tldr_reward"][38], r"cut to 0\.0, not a reduction"),
        ("c1 checked too", nb03.MISTAKES["03.honest_tldr_reward"][17], r"you never checked the concise text c1"),
        ("a float, not a 0-d tensor", nb03.MISTAKES["03.honest_tldr_reward"][39], r"0-d torch tensor.*right value.*Return a Python float"),
        ("the number 0.0, not the str '0'", nb03.MISTAKES["03.honest_tldr_reward"][40], r"you returned a str, '0'.*not its text"),
        ("exactly 1/5 (>=), repetition under another name", nb03.MISTAKES["03.honest_tldr_reward"][41], r"exactly 1/5 is not above 0\.2: the cut is repetition > 0\.2"),
        ("exactly 1/5 (>=), through the module", nb03.MISTAKES["03.honest_tldr_reward"][42], r"exactly 1/5 is not above 0\.2: the cut is repetition > 0\.2"),
    ],
    "04.levels": [
        ("the bonus needs at least ONE passed test (exactly one passes here)",
         lambda aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper:
         nb04.coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux and passed > 1,
                            thin_wrapper), None),
        ("no passed test: no bonus", nb04._bonus_without_tests, None),
        ("aux's 0.4 before the gate", nb04._aux_behind_the_gate, "(?i)before the gate"),
        ("the share passed / total, not all or nothing", nb04._tests_all_or_nothing, "SHARE"),
        ("the bonus needs ONE passed test, not half", nb04.MISTAKES["04.levels"][19], r"not half of them"),
        ("the +1.0 goes to a main that is NOT a thin wrapper", nb04.MISTAKES["04.levels"][20], r"thin-wrapper sign is flipped"),
        ("aux's 0.4 needs aux_defined, not aux_found", nb04.MISTAKES["04.levels"][21], r"not for aux merely found"),
        ("no test: total = 0 divides by zero", nb04.MISTAKES["04.levels"][22], r"NO test \(total = 0"),
        ("no test is a tests level of 0, not 1.0", nb04.MISTAKES["04.levels"][23], r"the tests level is 0, not 1\.0"),
        ("the share passed, not failed", nb04.MISTAKES["04.levels"][24], r"not the share failed"),
        ("divide by total, not total + 1", nb04.MISTAKES["04.levels"][25], r"not passed / \(total \+ 1\)"),
        ("a thin wrapper's +1.0 withheld, not subtracted", nb04.MISTAKES["04.levels"][26], r"withheld, not\s+subtracted"),
        ("no entry point stops scoring", nb04.MISTAKES["04.levels"][27], r"STOPS scoring right after aux's 0\.4"),
        ("bonus: 0.5 for calling, 1.0 for not thin", nb04.MISTAKES["04.levels"][28], r"swapped the bonus's two parts"),
        ("syntax 0.5, tests 1.0", nb04.MISTAKES["04.levels"][29], r"swapped the 0\.5 and the 1\.0 of L2 and L3"),
        ("the share, not passed // total", nb04.MISTAKES["04.levels"][30], r"INTEGER\s+division"),
        ("aux 0.4, entry point 0.6", nb04.MISTAKES["04.levels"][31], r"swapped aux's 0\.4 and the entry point's 0\.6"),
        ("a number, not a bool", nb04.MISTAKES["04.levels"][32], r"Your reward is a bool"),
        ("a number, not a str", nb04.MISTAKES["04.levels"][33], r"Your reward is a str"),
        ("no -0.5 for a main that never calls aux", nb04.MISTAKES["04.levels"][34], r"it loses nothing: no -0\.5"),
        ("the bonus in full, not scaled by the share", nb04.MISTAKES["04.levels"][35], r"not scaled by the share"),
        ("no entry point: 0.0 without aux_defined, not a fixed 0.4", nb04.MISTAKES["04.levels"][36], r"you return a fixed 0\.4"),
        ("no parse: 0.6 without aux_defined, not a fixed 1.0", nb04.MISTAKES["04.levels"][37], r"fixed 1\.0 from you"),
        ("no test: 1.1 without aux_defined, not a fixed 1.5", nb04.MISTAKES["04.levels"][38], r"you return a fixed 1\.5"),
        ("at the gate aux's 0.4 needs aux_defined", nb04.MISTAKES["04.levels"][39], r"aux's 0\.4 for aux_found"),
        ("the summed points, not reward / 4", nb04.MISTAKES["04.levels"][40], r"not a share of 4"),
        ("no cap below 4.0", nb04.MISTAKES["04.levels"][41], r"min\(reward, 3\.5\)"),
        ("a float, not a dict", nb04.MISTAKES["04.levels"][42], r"return a float, not a dict"),
        ("the reward shown formatted", nb04.MISTAKES["04.levels"][16], r"your reward is 3\.33;"),
    ],
    "04.thin_wrapper": [
        ("NO line at all is a wrapper", nb04._empty_not_wrapper, None),
        ("exactly TWO lines, not the last two of more", lambda m: (lambda b: len(b) >= 2 and bool(
            re.search(r"(?<!\w)(\w+)\s*=\s*aux\s*\(", b[-2])) and b[-1] == "return " + re.search(
            r"(?<!\w)(\w+)\s*=\s*aux\s*\(", b[-2]).group(1) if len(b) > 2 else nb04.thin_wrapper(m))(nb04._body_lines(m)),
         "THREE lines"),
        ("`return ` with its space", nb04._return_without_space, None),
        ("only TRIPLE-quoted docstrings are dropped", nb04._any_string_line_dropped, "ONE pair of quotes"),
        ("a docstring over SEVERAL lines: a lone opening `\"\"\"` opens it", nb04._lone_quotes_one_line,
         "stands ALONE on its line"),
        ("a docstring over several lines closes on its closing quotes, text before them too",
         nb04._closes_on_quotes_line, "closes at the END of a text line"),
        ("triple-quoted docstrings dropped wherever they stand", nb04._docstring_first_only,
         "wherever it stands"),
        ("the lines stripped: at both ends", nb04._lines_lstripped, r"BOTH ends \(`\.strip\(\)`"),
        ("the package's own rule, wrapped", nb04.MISTAKES["04.thin_wrapper"][23], r"calls the package's own `is_thin_wrapper`"),
        ("`return ` with its space: a tab is no match", nb04.MISTAKES["04.thin_wrapper"][24], r"followed by a TAB"),
        ("a docstring closes on the first line that CONTAINS its quotes", nb04.MISTAKES["04.thin_wrapper"][25], r"CONTAINS triple quotes closes it"),
        ("exactly `return v`: a trailing `;` counts", nb04.MISTAKES["04.thin_wrapper"][26], r"`return v;` with a semicolon"),
        ("one-line docstring only if the line ENDS with its quotes", nb04.MISTAKES["04.thin_wrapper"][27], r"holding two triple quotes is not enough"),
        ("lines, not ast statements", nb04.MISTAKES["04.thin_wrapper"][28], r"reads STATEMENTS, not lines"),
        ("lines, not a split at ;", nb04.MISTAKES["04.thin_wrapper"][29], r"reads STATEMENTS, not lines"),
        ("a docstring ends at triple quotes of EITHER kind", nb04.MISTAKES["04.thin_wrapper"][30], r"triple quotes of EITHER kind"),
        ("each line stripped", nb04.MISTAKES["04.thin_wrapper"][31], r"did you strip each line"),
        ("one-line docstring ends with ITS OWN quotes", nb04.MISTAKES["04.thin_wrapper"][32], r"END with ITS OWN quotes"),
        ('""""""' " is a one-line docstring", nb04.MISTAKES["04.thin_wrapper"][33], r"not `len\(s\) > 6`"),
    ],
    "05.discounted_returns": [
        ("children keyed by j, some joint actions without a child", nb05._children_by_index, "dict"),
        ("a leaf's return is its reward; the own reward not discounted", nb05._discount_everything, None),
        ("gamma = 1 is the undiscounted sum; gamma, not gamma ** depth", nb05._discount_by_depth, "gamma \\*\\* depth"),
        ("a tensor of node.rewards' dtype (the next cell's allclose)", nb05._float64_returns, "dtype"),
        ("any number of turns: a recursion, not two levels written out", nb05._two_levels_written_out, "recursion"),
        ("gamma compounds: turn 3 counts gamma ** 2", nb05._discounted_once, "discounted only once"),
        ("gamma compounds, written as one gamma on the child's rewards", nb05._not_compounded, "discounted only once"),
        ("each joint action its OWN child", nb05._pooled_children, "ONE mean, pooled"),
        ("every child, not the first", nb05._first_child_only, "Only the FIRST child"),
        ("the mean over the child's joint actions, not the parent's children", nb05._sum_over_siblings,
         r"number of the node's children"),
        ("the package's own compute_returns", nb05.MISTAKES["05.discounted_returns"][23], r"package's own `compute_returns`"),
        ("a wrapper: compute_returns(n, g).clone()", nb05.MISTAKES["05.discounted_returns"][24], r"calls the package's own `compute_returns`"),
        ("a deepcopy, then A.compute_returns", nb05.MISTAKES["05.discounted_returns"][25], r"calls the package's own `compute_returns`"),
        ("gamma = 0 is a gamma: `gamma or 0.9`", nb05.MISTAKES["05.discounted_returns"][26], r"gamma = 0 is the paper's credit: no child term at all"),
        ("gamma on the child's mean, not on r_j", nb05.MISTAKES["05.discounted_returns"][27], r"own reward r_j by gamma"),
        ("each joint action its own child, not one pooled bonus", nb05.MISTAKES["05.discounted_returns"][28], r"ONE mean, pooled over ALL"),
        ("r_j kept: R[j] += gamma * ...", nb05.MISTAKES["05.discounted_returns"][29], r"You dropped r_j"),
        ("the returns, not the advantages R - R.mean()", nb05.MISTAKES["05.discounted_returns"][30], r"You returned the advantages"),
        ("the children's returns added, not the rewards only", nb05.MISTAKES["05.discounted_returns"][31], r"node's own rewards: no child's return was added"),
        ("r_j in full, not (1 - gamma) * r_j", nb05.MISTAKES["05.discounted_returns"][32], r"by \(1 - gamma\)"),
        ("each turn through its own node, not one mean of all descendants", nb05.MISTAKES["05.discounted_returns"][33], r"ONE mean of the rewards of every node"),
        ("a cut branch is r_j alone", nb05.MISTAKES["05.discounted_returns"][34], r"WITHOUT a child"),
        ("the mean advantage of a child is 0", nb05.MISTAKES["05.discounted_returns"][35], r"ADVANTAGES.*always 0"),
        ("unrounded: 3 decimals", nb05.MISTAKES["05.discounted_returns"][36], r"rounded the returns to 3 decimal"),
        ("node.returns / node.advantages left as they were", nb05.MISTAKES["05.discounted_returns"][37], r"your returns are right, but your function changed node\.advantages"),
        ("the trainer's tree: node.returns is no cache", nb05.MISTAKES["05.discounted_returns"][38], r"You returned the node's stored returns, node\.returns \(computed at another gamma"),
        ("the trainer's tree: child.returns is no cache", nb05.MISTAKES["05.discounted_returns"][39], r"mean of a child's STORED returns, child\.returns \(computed at another gamma"),
    ],
    "05.early_termination_threshold": [
        ("a group whose mean EQUALS the threshold is expanded (ties)", _threshold_ge, "equals it is expanded"),
        ("budget 0: groups at exactly 0 are still expanded by t = 0", nb05._zero_cuts_everything, None),
        ("budget 0: a finite number, not -inf", nb05.MISTAKES["05.early_termination_threshold"][4], "finite"),
        ("budget = every group: all expanded",
         lambda means, budget: nb05.choose_threshold(means, min(budget, len(means) - 1)), "fit the budget"),
        ("a number MAGRPOConfig takes, not a 0-d tensor",
         lambda means, budget: torch.tensor(nb05.choose_threshold(means, budget)), "Python number"),
        ("a number, not a bool", lambda means, budget: True, "not a bool"),
        ("the WORST groups are expanded: the budget counted from the lowest means", nb05._threshold_reverse_wraps,
         "counted the budget from the BEST groups"),
        ("an empty list of groups: IndexError", nb05.MISTAKES["05.early_termination_threshold"][22], r"empty list of groups must give a finite number"),
        ("an empty list of groups: min([]) ValueError", nb05.MISTAKES["05.early_termination_threshold"][23], r"empty list of groups must give a finite number"),
        ("an empty list of groups: a number, not None", nb05.MISTAKES["05.early_termination_threshold"][24], r"returned None.*list of groups is empty"),
        ("sorted, not tree order", nb05.MISTAKES["05.early_termination_threshold"][25], r"you indexed them in tree order"),
        ("budget 0: finite, not NaN", nb05.MISTAKES["05.early_termination_threshold"][26], r"a finite number \(got NaN\)"),
        ("no fixed margin: + 0.005 passes a mean 1e-4 up", nb05.MISTAKES["05.early_termination_threshold"][27], r"fixed margin above the last mean that fits.*only 0\.0001 above"),
        ("no fixed margin: + 1e-3 passes a mean 1e-4 up", nb05.MISTAKES["05.early_termination_threshold"][28], r"fixed margin above the last mean that fits.*only 0\.0001 above"),
        ("no fixed margin: + 1e-5 passes a mean 1e-6 up", nb05.MISTAKES["05.early_termination_threshold"][29], r"fixed margin above the last mean that fits.*only 1e-06 above"),
        ("sorted(means)[budget - 1], not [budget]", nb05.MISTAKES["05.early_termination_threshold"][30], r"You indexed one too far"),
    ],
    "06.std_scaled_advantages": [
        ("a group that agrees: eps keeps it finite", lambda R: (R - R.mean()) / R.std(), "eps"),
        ("the SAMPLE std (G-1)", lambda R: (R - R.mean()) / (R.std(unbiased=False) + 1e-4), "SAMPLE"),
        ("eps ADDED to the std, not a floor", lambda R: (R - R.mean()) / R.std().clamp_min(1e-4), "ADDS"),
        ("eps = 1e-4", lambda R: (R - R.mean()) / (R.std() + 1e-6), "1e-4"),
        ("eps = 1e-4, not one too small to see", lambda R: (R - R.mean()) / (R.std() + 1e-8), "too small to show"),
        ("eps = 1e-4, not 2e-4", lambda R: (R - R.mean()) / (R.std() + 2e-4), "eps = 0.0002"),
        ("the group MEAN, not the median", lambda R: (R - R.median()) / (R.std() + 1e-4), "median"),
        ("the mean of all G, not of the G-1 others",
         lambda R: (R - (R.sum() - R) / (len(R) - 1)) / (R.std() + 1e-4), "leave-one-out"),
        ("any G, not the notebook's 4", nb06._std_fixed_G, "G written into the code"),
        ("R's dtype (float32 R)", lambda R: nb06.std_scaled_advantages(R.double()), "R's dtype"),
        ("R's dtype (float64 R)", nb06._std_from_floats, "R's dtype"),
        ("the mean divides by G, not G - 1", lambda R: (R - R.sum() / (len(R) - 1)) / (R.std() + 1e-4),
         "divides the sum by G - 1"),
        ("the std, not the variance", lambda R: (R - R.mean()) / (R.var() + 1e-4), "variance"),
        ("the mean, not the sum", lambda R: (R - R.sum()) / (R.std() + 1e-4), "SUM of the rewards"),
        ("a negative advantage stays negative", lambda R: ((R - R.mean()) / (R.std() + 1e-4)).abs(), "absolute value"),
        ("eps in the divisor only", lambda R: (R - R.mean() + 1e-4) / (R.std() + 1e-4), "numerator"),
        ("written out, not group_advantages wrapped", nb06.MISTAKES["06.std_scaled_advantages"][1], "package's own"),
        ("G from len(R), not 4 (throughout)", nb06.MISTAKES["06.std_scaled_advantages"][27], "G written into the code"),
        ("G from len(R), not 4 (centring only)", nb06.MISTAKES["06.std_scaled_advantages"][28], "G written into the code"),
        ("G from len(R), not 4 (squares only)", nb06.MISTAKES["06.std_scaled_advantages"][29], "G written into the code"),
        ("the squares by G - 1, not G - 2", nb06.MISTAKES["06.std_scaled_advantages"][30], "G - 2"),
        ("std_mean returns (std, mean)", nb06.MISTAKES["06.std_scaled_advantages"][31], r"returns \(std, mean\)"),
        ("sample std, eps outside the root", nb06.MISTAKES["06.std_scaled_advantages"][32], "POPULATION variance plus eps"),
        ("no clip of the advantages", nb06.MISTAKES["06.std_scaled_advantages"][33], r"clipped the advantages"),
        ("divided by the std", nb06.MISTAKES["06.std_scaled_advantages"][34], r"did not divide by the std"),
    ],
    "06.comlrl_credit": [
        ("agent 1 sums a ROW", lambda R, G, mode: nb06.comlrl_credit(R, G, mode).flip(0), "swapped"),
        ("written out, not group_advantages on the sums", nb06._comlrl_group_advantages, "package's own"),
        ("mode 'max' subtracts the largest sum",
         lambda R, G, mode: nb06.comlrl_credit(R, G, "mean"), "Read `mode`"),
        ("R's dtype (the next cell's allclose)", lambda R, G, mode: nb06.comlrl_credit(R.double(), G, mode), "dtype"),
        ("R's dtype for a float64 R too", nb06._comlrl_credit_loop, "R's dtype"),
        ("S minus the baseline, not b - S", lambda R, G, mode: -nb06.comlrl_credit(R, G, mode), "sign is flipped"),
        ("unrounded", lambda R, G, mode: torch.round(nb06.comlrl_credit(R, G, mode) * 1e4) / 1e4, "rounded them"),
        ("'max': every credit <= 0", nb06.MISTAKES["06.comlrl_credit"][-6], "SMALLEST"),
        ("the mean of all G sums, the own included", nb06._comlrl_loo, "leave-one-out"),
        ("agent 2 sums a COLUMN", nb06.MISTAKES["06.comlrl_credit"][-4], "COLUMN"),
        ("every joint action of the sample, not the diagonal", nb06.MISTAKES["06.comlrl_credit"][-3], "diagonal"),
        ("unscaled credits", nb06._comlrl_zscored, "std of the agent's G sums"),
        ("a (2, 1) baseline: keepdim at G = 2", nb06.MISTAKES["06.comlrl_credit"][-1], "keepdim"),
        ("a (2, 1) baseline: keepdim at G = 3",
         lambda R, G, mode: (lambda S: S - (S.mean(1) if mode == "mean" else S.max(1, keepdim=True).values))(
             nb06._comlrl_sums(R, G)), "keepdim"),
        ("written out for 'mean' too", nb06.MISTAKES["06.comlrl_credit"][15], "own `credit_samples`"),
        ("the sums undivided, not by G - 1", nb06.MISTAKES["06.comlrl_credit"][16], "divided the sums by G - 1"),
        ("the mean of the sums divides by G", nb06.MISTAKES["06.comlrl_credit"][17], "divides the sum of the G sums by G - 1"),
        ("'max': the largest SUM, not R.max()", nb06.MISTAKES["06.comlrl_credit"][18], r"largest SINGLE reward"),
        ("'mean': the mean of the sums, not R.mean()", nb06.MISTAKES["06.comlrl_credit"][19], r"mean of the G \* G single rewards"),
        ("the sums undivided, not by G*G", nb06.MISTAKES["06.comlrl_credit"][20], r"divided by G \* G"),
    ],
    "07.in_band_share": [
        ("the share IN the band, not outside it", lambda pairs: 1 - nb07.in_band_share(pairs) if pairs else 0.0, "OUTSIDE"),
        ("1.6 is in the band", _in_band(lambda x: x > 1.6, lambda x: x <= 3.2, "empty-out"), "1.6 itself"),
        ("3.2 is in the band", _in_band(lambda x: x >= 1.6, lambda x: x < 3.2, "empty-out"), "3.2 itself"),
        ("an empty concise text is out, whatever the detailed one",
         _in_band(lambda x: x >= 1.6, lambda x: x <= 3.2, "max1"), "max\\(len\\(concise\\), 1\\)"),
        ("no pairs: share 0.0", lambda pairs: sum(bool(a) and 1.6 <= len(b) / len(a) <= 3.2 for a, b in pairs) / len(pairs),
         "empty list of pairs"),
        ("characters as len counts them, spaces included", nb07._in_band_share_no_spaces, "spaces included"),
        ("ratio not rounded (2 decimals)", nb07.MISTAKES["07.in_band_share"][21], "round the ratio to 2 decimals"),
        ("ratio not rounded (3 decimals)", nb07.MISTAKES["07.in_band_share"][22], "round the ratio to 3 decimals"),
        ("no tolerance of 0.009 at the edges", nb07.MISTAKES["07.in_band_share"][23], "compare with a tolerance"),
        ("no tolerance of 1e-4 at the edges", nb07.MISTAKES["07.in_band_share"][24], "compare with a tolerance"),
        ("not a wrapper of the length level", nb07.MISTAKES["07.in_band_share"][25], "own `tldr_length_level`"),
        ("not a wrapper of the ramp", nb07.MISTAKES["07.in_band_share"][26], "own `ramp_level`"),
        ("not a wrapper of tldr_levels", nb07.MISTAKES["07.in_band_share"][27], "own `tldr_levels`"),
        ("the upper edge is 3.2, not 3.0", nb07.MISTAKES["07.in_band_share"][28], "upper edge is 3\\.2"),
        ("the lower edge is 1.6, not 1.5", nb07.MISTAKES["07.in_band_share"][29], "lower edge is 1\\.6"),
        ("newlines count as characters", nb07.MISTAKES["07.in_band_share"][30], "newlines are characters: len counts them"),
        ("newlines at the ends count too", nb07.MISTAKES["07.in_band_share"][31], "newlines are characters, at the ends"),
        ("tabs count as characters", nb07.MISTAKES["07.in_band_share"][32], "tabs are characters: len counts them"),
        ("punctuation counts as characters", nb07.MISTAKES["07.in_band_share"][33], "punctuation is characters: len counts"),
        ("a run of spaces inside the text counts", nb07.MISTAKES["07.in_band_share"][34], "run of spaces INSIDE the text"),
        ("ratio not rounded to 1 decimal", nb07.MISTAKES["07.in_band_share"][35], "pair of 100 and 159 characters .*round the ratio to 1 decimal"),
        ("an empty concise text is out, ('', '') too", nb07.MISTAKES["07.in_band_share"][36], r"0 <= 0 <= 0"),
        ("an empty concise text is out, not caught as ZeroDivisionError", nb07.MISTAKES["07.in_band_share"][37], r"except ZeroDivisionError:"),
        ("each pair's own ratio, not the mean ratio", nb07.MISTAKES["07.in_band_share"][38], r"ONE ratio for the whole list"),
        ("no word-count gate (L1's 8..256 words)", nb07.MISTAKES["07.in_band_share"][39], r"fewer than 8 or more than 256 words"),
    ],
    "07.lora_parameters": [
        ("q = 1 is not every q: the rank forgotten", lambda shapes, q: sum(i + o for i, o in shapes), "rank q is missing"),
        ("q counted once", lambda shapes, q: sum(q * q * (i + o) for i, o in shapes), "q counted twice"),
        ("every layer counts, two of one shape too", lambda shapes, q: sum(q * (i + o) for i, o in set(shapes)),
         "every layer has its own adapter"),
        ("the sum over layers, not the mean", nb07.MISTAKES["07.lora_parameters"][16], "MEAN over the layers"),
        ("int() of the mean is still the mean", nb07.MISTAKES["07.lora_parameters"][17], "MEAN over the layers"),
        ("half the count, not 2*q*min", nb07.MISTAKES["07.lora_parameters"][18], "half the answer"),
        ("not a get_peft_model count", nb07.MISTAKES["07.lora_parameters"][19], r"runs peft \(`get_peft_model`\).*Count from the shapes"),
        ("not a LoraModel count", nb07.MISTAKES["07.lora_parameters"][20], r"runs peft .*Count from the shapes"),
        ("every layer counts, the last one too", nb07.MISTAKES["07.lora_parameters"][21], r"LAST layer is missing"),
        ("the count itself, not in millions", nb07.MISTAKES["07.lora_parameters"][22], r"in millions \(the count divided by 1e6\)"),
        ("the count itself, not millions rounded", nb07.MISTAKES["07.lora_parameters"][23], r"in millions .*rounded to 2 decimal"),
    ],
    "07.adapter_logits": [
        ("a batch of ONE row keeps its batch dimension", _adapter_squeezed, "squeeze"),
        ("None is the base model, named '__base__'", nb07.MISTAKES["07.adapter_logits"][6], "__base__"),
        ("no set_adapter, even with everything put back", nb07._set_adapter_restoring_everything, "put everything back"),
        ("no set_adapter on a copy either", nb07._set_adapter_on_a_copy, "copied the model"),
        ("no layer._active_adapter switch, even restored", nb07.MISTAKES["07.adapter_logits"][19], r"_active_adapter = .*refuses it even when you restore it"),
        ("no layer._disable_adapters switch, even restored", nb07.MISTAKES["07.adapter_logits"][20], "ran with adapters off"),
        ("adapter_names to the peft model, not the inner one", nb07.MISTAKES["07.adapter_logits"][21], "Pass it to the peft model you were given"),
        ("autograd not switched off for the process (set_grad_enabled)", nb07.MISTAKES["07.adapter_logits"][22], r"switched autograd off for the whole process.*with torch\.no_grad\(\):"),
        ("autograd not switched off (no_grad().__enter__())", nb07.MISTAKES["07.adapter_logits"][23], r"switched autograd off for the whole process"),
        ("fresh logits on every call, no cache", nb07.MISTAKES["07.adapter_logits"][24], r"stale"),
        ("the whole prompt, not the last token alone", nb07.MISTAKES["07.adapter_logits"][25], r"last token ALONE"),
        ("the last position, not the mean over positions", nb07.MISTAKES["07.adapter_logits"][26], r"MEAN of the logits"),
        ("the logits as they are, no temperature", nb07.MISTAKES["07.adapter_logits"][27], r"divided by 0\.8.*temperature"),
    ],
    "08.k3_estimator": [
        ("every term >= 0 (k1 is not)", lambda logp, ref: logp - ref, "k1"),
        ("the mean under pi is the KL (r - 1 alone has mean 0)", lambda logp, ref: torch.exp(ref - logp) - 1, None),
        ("float32 at least", lambda logp, ref: nb08.k3_estimator(logp, ref).half(), "precision"),
        ("float32 at least for float16 inputs too (16-bit, not only bfloat16)", nb08._k3_bfloat16_only, "float16"),
        ("every token, a log-prob of exactly 0.0 too",
         lambda logp, ref: torch.where(logp == 0, 0.0, nb08.k3_estimator(logp, ref)), "log-prob of 0.0 is no padding"),
        ("k3 is not a wrapper of kl_penalty", nb08.MISTAKES["08.k3_estimator"][25], "own `kl_penalty`"),
        ("e^d, not a ratio of two exps (float32 underflow)", nb08.MISTAKES["08.k3_estimator"][26], r"Compute d = ref_logp - logp first, then exp\(d\)"),
        ("the ratio of exps minus d still overflows", nb08.MISTAKES["08.k3_estimator"][27], "ratio of two exps"),
        ("log(exp(d)) underflows: use d itself", nb08.MISTAKES["08.k3_estimator"][28], r"You take the log of r = exp\(d\).*underflows to 0"),
        ("no epsilon inside the log", nb08.MISTAKES["08.k3_estimator"][29], r"epsilon inside the log"),
        ("a ratio of exps underflows in float64 too", nb08.MISTAKES["08.k3_estimator"][30], r"float64 moves the underflow further out.*ratio of two exps"),
        ("k2 = d^2/2 is not k3", nb08.MISTAKES["08.k3_estimator"][3], r"that is k2 = d\^2/2"),
        ("k3 with no 1/2 factor", nb08.MISTAKES["08.k3_estimator"][31], r"You halved k3"),
    ],
    "08.spot_the_hack": [
        ("a reward rise of exactly 0.1 is not MORE than 0.1", _spot(strict=(False, True, True)), "exactly 0.1"),
        ("a naturalness rise of exactly 1.0 is not MORE than 1", _spot(strict=(True, False, True)), "exactly 1.0"),
        ("a repetition of exactly 0.2 is not ABOVE 0.2", _spot(strict=(True, True, False)), "exactly 0.2"),
        ("each agent's naturalness against its OWN untrained one", nb08._spot_agents_crossed, "ITS OWN"),
        ("each agent's repetition, not their sum", nb08._spot_repetition_summed, "not their sum"),
        ("at least one agent: one is enough", nb08._spot_both_agents, "one agent is enough"),
        ("naturalness OR repetition: one signal is enough", nb08._spot_both_signals, "one signal is enough"),
        ("untrained row first, trained second", lambda u, t: nb08.spot_the_hack(t, u), "swapped"),
        ("repetition is a level, not a change", nb08.MISTAKES["08.spot_the_hack"][45], "repetition CHANGE"),
        ("any agent's naturalness, not all", nb08.MISTAKES["08.spot_the_hack"][46], "ALL agents, not ANY"),
        ("any agent's repetition, not all", nb08.MISTAKES["08.spot_the_hack"][47], "ALL agents, not ANY"),
        ("every agent, agent 2 too", nb08.MISTAKES["08.spot_the_hack"][48], r"ignores agent 2"),
        ("naturalness change, not a ratio", nb08.MISTAKES["08.spot_the_hack"][49], r"trained / untrained.*not a ratio"),
        ("repetition above 0.2 is enough, not also above the untrained", nb08.MISTAKES["08.spot_the_hack"][50], r"above 0\.2 AND above its UNTRAINED value"),
        ("repetition against 0.2, not untrained + 0.2", nb08.MISTAKES["08.spot_the_hack"][51], r"repetition CHANGE"),
        ("the repetition line is 0.2, not 0.25", nb08.MISTAKES["08.spot_the_hack"][52], r"line is at about 0\.25, not 0\.2.*strictly above"),
        ("naturalness trained - untrained, not untrained - trained", nb08.MISTAKES["08.spot_the_hack"][53], r"FALLS by 2\.5 nats.*sign is flipped"),
    ],
    "09.vocabulary_level": [
        ("u = 0.5 and u = 1.7 are inside", nb09._mistake_open_edges, "Both ends"),
        ("outside [0.5, 1.7]: None, not 0", nb09._mistake_zero_outside, "scoring stops"),
        ("straight ramps off their midpoints",
         lambda u: None if (v := nb09.vocabulary_level(u)) is None else 0.5 * (3 * (2 * v) ** 2 - 2 * (2 * v) ** 3),
         None),
        ("a number (a float), not a 0-d tensor", nb09._vocabulary_as_tensor, "return a Python float"),
        ("not a wrapper of ramp_level", nb09.MISTAKES["09.vocabulary_level"][10], "own `ramp_level`"),
        ("not the library off the flat 0.5", nb09.MISTAKES["09.vocabulary_level"][11], r"own `arxiv_unique_level`"),
        ("the flat top pays 0.5, not 1.0", nb09.MISTAKES["09.vocabulary_level"][12], r"on the flat \[0\.7, 1\.3\] you pay 1\.0"),
        ("the ramps are scaled by 0.5", nb09.MISTAKES["09.vocabulary_level"][13], r"left out the ramps' 0\.5 scale"),
        ("the points are not rounded", nb09.MISTAKES["09.vocabulary_level"][14], r"rounded to 2 decimals"),
        ("L3 is worth 0.5, not 1", nb09.MISTAKES["09.vocabulary_level"][2], r"twice the level's.*out of 1"),
    ],
    "09.stop_level": [
        ("128 and 256 words are inside", _stop(l1=lambda a, b: all(128 < len(c.split()) < 256 for c in (a, b))), None),
        ("l = 0.8 and 1.5 are inside", _stop(l2=lambda a, b: 0.8 < len(b) / len(a) < 1.5), None),
        ("u = 0.5 and 1.7 are inside", _stop(l3=lambda a, b: 0.5 < _u(a, b) < 1.7), None),
        ("l = 0.799 and 1.504 are outside (not rounded to 0.8, 1.5)",
         _stop(l2=lambda a, b: 0.8 <= round(len(b) / len(a), 2) <= 1.5), r"0\.799 is below 0\.8, though it reads 0\.8"),
        ("u = 0.498 and 1.704 are outside (not rounded to 0.5, 1.7)",
         _stop(l3=lambda a, b: 0.5 <= round(_u(a, b), 1) <= 1.7), r"0\.498.*reads 0\.5"),
        ("l = 1.51 is outside: L2's upper edge is 1.5, not 1.55",
         _stop(l2=lambda a, b: 0.8 <= len(b) / len(a) <= 1.55), r"1\.51 through, above 1\.5: the upper bound is wrong"),
        ("u = 1.704 is outside: L3's upper edge is 1.7, not 1.71",
         _stop(l3=lambda a, b: 0.5 <= _u(a, b) <= 1.71), r"1\.704.*upper edge is 1\.7 itself"),
        ("l = 0.799 is outside: L2's lower edge is 0.8, not 0.795",
         _stop(l2=lambda a, b: 0.795 <= len(b) / len(a) <= 1.5), r"0\.799 through, below 0\.8: the lower bound is wrong"),
        ("u = 0.498 is outside: L3's lower edge is 0.5, not 0.45",
         _stop(l3=lambda a, b: bool(unique_words(a)) and 0.45 <= len(unique_words(b)) / len(unique_words(a)) <= 1.7),
         r"0\.498 through, below 0\.5: the lower bound is wrong"),
        ("the gates in order: L2 before L3", nb09._mistake_l3_before_l2, "FIRST gate"),
        ("a level is an int", lambda a, b: float(nb09.stop_level(a, b)), "return an int"),
        ("digits are \\w: numbers are words",
         _stop(l3=lambda a, b: 0.5 <= len(set(re.findall("[a-z]+", b.lower())))
               / max(1, len(set(re.findall("[a-z]+", a.lower())))) <= 1.7), "numbers are words"),
        ("whitespace words: str.split(), line breaks included",
         _stop(l1=lambda a, b: all(128 <= len(c.split(" ")) <= 256 for c in (a, b))), "line breaks"),
        ("0 points at u = 0.5 is no stop", nb09.MISTAKES["09.stop_level"][40], "read L3's 0 points at its edge"),
        ("a level is an int, not a str", nb09.MISTAKES["09.stop_level"][41], "return an int, not a str"),
        ("not arxiv_stop_level's body with its pieces", nb09.MISTAKES["09.stop_level"][42], r"`arxiv_length_level` and `arxiv_unique_level`"),
        ("L3 not by arxiv_unique_level", nb09.MISTAKES["09.stop_level"][43], r"own `arxiv_unique_level`.*L3 written out"),
        ("256 words inside: only the upper edge named", nb09.MISTAKES["09.stop_level"][44], r"the lower edge is right, the upper one is not"),
        ("300 words stop L1: its edge, not the gates' order", nb09.MISTAKES["09.stop_level"][45], r"300 words are above 256: L1 stops it.*order is right"),
    ],
}

PROBES = [(name, what, answer, pattern) for name, probes in sorted(BOUNDARIES.items())
          for what, answer, pattern in probes]


def test_every_exercise_has_its_boundaries_probed():
    assert sorted(BOUNDARIES) == ex.exercises(), "list the stated boundaries of every exercise (and only those)"
    for name, probes in BOUNDARIES.items():
        assert len(probes) >= 2, f"{name}: probe each boundary its notebook states (at least two)"


@pytest.mark.parametrize("name,what,answer,pattern", PROBES, ids=[f"{p[0]}: {p[1][:50]}" for p in PROBES])
def test_a_wrong_answer_at_a_stated_boundary_is_refused_with_a_sentence(name, what, answer, pattern, monkeypatch):
    monkeypatch.delenv("MAGRPO_EDU_SOLUTIONS", raising=False)
    with pytest.raises(ex.ExerciseFailed) as refused:
        ex.check(name, answer)
    message = str(refused.value)
    assert len(message) > 40, f"{name} ({what}): say what is wrong, not only 'wrong'"
    if pattern:
        assert re.search(pattern, message), f"{name} ({what}): the refusal should name the boundary; it said: {message}"
