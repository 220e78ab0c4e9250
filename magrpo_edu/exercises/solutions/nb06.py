"""Notebook 06: solutions and typical mistakes."""
import torch


def std_scaled_advantages(R):
    return (R - R.mean()) / (R.std() + 1e-4)


def loss_with_kl(token_logp, ref_logp, mask, advantages, beta):
    policy = -(advantages.detach() * (token_logp * mask).sum(-1)).mean()
    d = ref_logp.detach() - token_logp
    kl = ((torch.exp(d) - d - 1) * mask).sum(-1)
    return policy + beta * kl.mean()


def cross_credit(R, G):
    A = (R - R.mean()).view(G, G)          # A[k1, k2]: agent 1's sample k1 with agent 2's sample k2
    return torch.stack([A.mean(dim=1), A.mean(dim=0)])


def _kl_per_token_mean(token_logp, ref_logp, mask, advantages, beta):
    policy = -(advantages * (token_logp * mask).sum(-1)).mean()
    d = ref_logp - token_logp
    return policy + beta * (((torch.exp(d) - d - 1) * mask).sum(-1) / mask.sum(-1)).mean()


def _kl_wrong_direction(token_logp, ref_logp, mask, advantages, beta):
    policy = -(advantages * (token_logp * mask).sum(-1)).mean()
    d = token_logp - ref_logp
    return policy + beta * ((torch.exp(d) - d - 1) * mask).sum(-1).mean()


SOLUTIONS = {
    "06.std_scaled_advantages": std_scaled_advantages,
    "06.loss_with_kl": loss_with_kl,
    "06.cross_credit": cross_credit,
}

MISTAKES = {
    "06.std_scaled_advantages": [
        lambda R: (R - R.mean()) / R.std(),                             # no eps: nan on a group that agrees
        lambda R: (R - R.mean()) / (R.std(unbiased=False) + 1e-4),      # population std
    ],
    "06.loss_with_kl": [_kl_per_token_mean, _kl_wrong_direction,
                        lambda lp, ref, m, A, beta: -(A * (lp * m).sum(-1)).mean() + beta * (ref - lp).sum(-1).mean()],
    "06.cross_credit": [
        lambda R, G: torch.stack([(R - R.mean()).view(G, G).mean(0), (R - R.mean()).view(G, G).mean(1)]),   # agents swapped
        lambda R, G: torch.stack([R.view(G, G).mean(1), R.view(G, G).mean(0)]),                             # rewards, no baseline
    ],
}
