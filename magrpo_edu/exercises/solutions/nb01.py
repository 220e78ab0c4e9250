"""Notebook 01: solutions and typical mistakes."""
import torch


def sequence_logprob(token_logp, mask):
    return (token_logp * mask).sum(-1)


def rloo_advantages(rewards):
    G = len(rewards)
    return rewards - (rewards.sum() - rewards) / (G - 1)


def grpo_token_mean_loss(token_logp, mask, advantages):
    lengths = mask.sum(-1).clamp_min(1)
    return -(advantages * (token_logp * mask).sum(-1) / lengths).mean()


SOLUTIONS = {
    "01.sequence_logprob": sequence_logprob,
    "01.leave_one_out": rloo_advantages,
    "01.grpo_token_mean_loss": grpo_token_mean_loss,
}

MISTAKES = {
    "01.sequence_logprob": [
        lambda token_logp, mask: token_logp.sum(-1),                                   # padding counted (the reference code's bug)
        lambda token_logp, mask: (token_logp * mask).sum(-1) / mask.sum(-1).clamp_min(1),  # a mean, not a sum
        lambda token_logp, mask: (token_logp * mask).mean(-1),                          # a mean over the padded width
    ],
    "01.leave_one_out": [
        lambda r: r - r.mean(),                                     # MAGRPO's baseline, not leave-one-out
        lambda r: r - (r.sum() - r) / len(r),                       # divided by G instead of G-1
    ],
    "01.grpo_token_mean_loss": [
        lambda lp, m, A: -(A * (lp * m).sum(-1)).mean(),                               # MAGRPO's sum
        lambda lp, m, A: -(A * (lp * m).sum(-1) / lp.shape[1]).mean(),                 # divided by the padded width
        lambda lp, m, A: -(A * (lp * m).sum(-1) / m.sum(-1)).mean(),                   # an empty completion divides by 0
    ],
}
