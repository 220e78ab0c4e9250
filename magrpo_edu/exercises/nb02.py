"""Checks of notebook 02's exercises: joint actions, an agent's credit in cross mode, the shared advantage."""
from __future__ import annotations

from . import ExerciseFailed, exercise


@exercise("02.joint_actions")
def check_joint_actions(fn) -> None:
    """`fn(num_agents, G, mode)` -> the joint actions: one tuple per joint action, entry i = which of
    agent i's G samples it uses; "aligned": the g-th of every agent; "cross": every combination."""
    from ..algorithm import joint_actions

    for n in (1, 2, 3):
        for G in (1, 2, 4):
            for mode in ("aligned", "cross"):
                try:
                    got = [tuple(int(k) for k in row) for row in fn(n, G, mode)]
                except TypeError:
                    raise ExerciseFailed(f"return a list of tuples (one per joint action) for n={n}, G={G}, {mode!r}") from None
                want = [tuple(row) for row in joint_actions(n, G, mode).tolist()]
                if len(got) != len(set(got)):
                    raise ExerciseFailed(f"n={n}, G={G}, {mode!r}: a joint action appears twice in {got}")
                if sorted(got) != sorted(want):
                    count = f"{G} (one per sample index g)" if mode == "aligned" else f"G**n = {G ** n}"
                    raise ExerciseFailed(f"n={n} agents, G={G}, {mode!r}: expected {count} joint actions {want}, got {got}")


@exercise("02.cross_credit")
def check_cross_credit(fn) -> None:
    """`fn(r, agent)`: r is the (G, G) tensor of joint rewards of two agents in cross mode
    (r[k1, k2]: agent 1's sample k1 with agent 2's sample k2); return the (G,) credit of `agent`'s
    samples (0 = agent 1, 1 = agent 2): the mean advantage, over one baseline for all G*G joint
    actions, of the joint actions that contain the sample."""
    import torch

    from ..algorithm import credit_samples, group_advantages, joint_actions

    gen = torch.Generator().manual_seed(0)
    cases = [torch.tensor([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0], [2.0, 4.0, 6.0]]),
             torch.tensor([[1.0, 3.0], [5.0, 7.0]]), torch.full((3, 3), 2.0)]
    cases += [torch.rand(G, G, generator=gen) * 4 - 1 for G in (2, 3, 4)]
    cases += [torch.tensor([[4.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]])]  # a partner's sample matters
    for r in cases:
        G = r.shape[0]
        want = credit_samples(group_advantages(r.flatten()), joint_actions(2, G, "cross"), G)
        for agent in (0, 1):
            got = fn(r.clone(), agent)
            got = torch.as_tensor(got, dtype=torch.float32).flatten()
            if got.shape != (G,):
                raise ExerciseFailed(f"return one credit per sample of the agent ({G} numbers), got shape {tuple(got.shape)}")
            if not torch.allclose(got, want[agent], atol=1e-5):
                raise ExerciseFailed(
                    f"for r = {r.tolist()} agent {agent + 1}'s credit is {[round(v, 3) for v in want[agent].tolist()]}, you "
                    f"returned {[round(v, 3) for v in got.tolist()]}: subtract ONE mean over all {G * G} joint rewards, then "
                    f"average over the joint actions holding the sample (agent 1's sample k1 is row k1, agent 2's sample k2 "
                    "is column k2)")


@exercise("02.shared_losses")
def check_shared_losses(fn) -> None:
    """`fn(logps, rewards)`: logps is a list (one per agent) of (G,) tensors, sum_t log pi_i of each
    agent's G samples (aligned: sample g of each agent forms joint action g); rewards the (G,) joint
    rewards. Return one loss per agent, the MAGRPO loss with the SAME group-relative advantage."""
    import torch

    from ..algorithm import group_advantages, policy_loss

    gen = torch.Generator().manual_seed(1)
    for n, G in ((2, 4), (3, 2), (2, 8), (1, 4)):
        rewards = torch.rand(G, generator=gen) * 3
        if G == 2:
            rewards = torch.tensor([1.0, 1.0])  # equal rewards: no gradient at all
        logps = [(-torch.rand(G, generator=gen) * 20).requires_grad_() for _ in range(n)]
        got = fn([lp for lp in logps], rewards.clone())
        if len(got) != n:
            raise ExerciseFailed(f"return one loss per agent ({n}), got {len(got)}")
        A = group_advantages(rewards)
        for i, (loss, lp) in enumerate(zip(got, logps)):
            want = policy_loss(lp, A)
            if not torch.is_tensor(loss) or loss.dim() != 0:
                raise ExerciseFailed(f"agent {i}'s loss must be a scalar tensor (so that .backward() works), got {loss!r}")
            if abs(loss.item() - want.item()) > 1e-4:
                raise ExerciseFailed(
                    f"n={n} agents, G={G}, rewards {[round(v, 2) for v in rewards.tolist()]}: agent {i}'s loss is "
                    f"{want.item():.4f}, you returned {loss.item():.4f}. Each agent's loss is "
                    "-(1/G) sum_g A^(g) logp_i^(g), with A = r - mean(r), the same A for every agent")
            grad, = torch.autograd.grad(loss, lp, allow_unused=True)
            if grad is None or not torch.allclose(grad, -A / G, atol=1e-5):
                raise ExerciseFailed(f"agent {i}'s loss must depend on its log-probs with gradient -A/G (the advantage "
                                     "is a constant: compute it from the rewards, not from anything with a gradient)")
