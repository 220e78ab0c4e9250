"""Step 5: group-relative advantages against numbers computed by hand."""
import pytest
import torch

from magrpo_edu import group_advantages

R = torch.tensor([1.0, 2.0, 3.0, 6.0])  # mean 3, max 6, unbiased std = sqrt(14/3)


def test_mean_is_magrpo():
    assert group_advantages(R).tolist() == [-2.0, -1.0, 0.0, 3.0]


def test_none_is_mareinforce():
    assert group_advantages(R, mode="none").tolist() == [1.0, 2.0, 3.0, 6.0]


def test_rloo_is_leave_one_out_mean():
    # R_g - mean of the other three: 1-11/3, 2-10/3, 3-9/3, 6-6/3
    expected = [1 - 11 / 3, 2 - 10 / 3, 3 - 9 / 3, 6 - 6 / 3]
    assert torch.allclose(group_advantages(R, mode="rloo"), torch.tensor(expected))


def test_max_is_remax():
    assert group_advantages(R, mode="max").tolist() == [-5.0, -4.0, -3.0, 0.0]


@pytest.mark.parametrize("mode,centred", [("mean", [-2.0, -1.0, 0.0, 3.0]), ("max", [-5.0, -4.0, -3.0, 0.0])])
def test_group_scaling_divides_by_unbiased_std(mode, centred):
    std = (14 / 3) ** 0.5
    got = group_advantages(R, mode=mode, scale="group")
    assert torch.allclose(got, torch.tensor(centred) / (std + 1e-4), atol=1e-6)


def test_clip():
    assert group_advantages(torch.tensor([0.0, 0.0, 0.0, 40.0]), clip=10).tolist() == [-10.0, -10.0, -10.0, 10.0]


def test_last_dimension_is_the_group():
    r = torch.tensor([[1.0, 3.0], [10.0, 10.0]])
    assert group_advantages(r).tolist() == [[-1.0, 1.0], [0.0, 0.0]]


def test_equal_rewards_give_zero_advantage_even_scaled():
    assert group_advantages(torch.ones(4), scale="group").abs().max().item() == 0.0


@pytest.mark.parametrize("kw,msg", [(dict(mode="median"), "mode='median'"), (dict(scale="batch"), "scale='batch'")])
def test_bad_arguments(kw, msg):
    with pytest.raises(ValueError, match=msg):
        group_advantages(R, **kw)


def test_group_of_one_is_an_error():
    with pytest.raises(ValueError, match="at least 2"):
        group_advantages(torch.tensor([1.0]))


@pytest.mark.parametrize("mode", ["mean", "none", "rloo", "max"])
def test_zscore_is_comlrl_after_the_baseline(mode):
    # CoMLRL 1.4.3: z-score of the advantages AFTER the baseline: re-centred, population std, floor 1e-6.
    R = torch.tensor([1.0, 2.0, 4.0, 9.0])
    A = group_advantages(R, mode=mode)
    mu = A.mean()
    sd = ((A - mu) ** 2).mean().sqrt()  # population std, by hand
    assert torch.allclose(group_advantages(R, mode=mode, scale="zscore"), (A - mu) / sd)


def test_zscore_and_group_differ():
    R = torch.tensor([1.0, 2.0, 4.0, 9.0])  # sample std of R (TRL) vs population std of A (CoMLRL)
    assert not torch.allclose(group_advantages(R, scale="zscore"), group_advantages(R, scale="group"), atol=1e-3)
    assert group_advantages(torch.ones(4), scale="zscore").abs().max().item() == 0.0  # floor: no division by 0


def _reference_cross_credit(rewards, table, G, mode, scale):
    # The reference's reading (spec section 2, step 3): each sample's SUMMED returns over the joint
    # actions that contain it, then the advantage among those G sums.
    n = table.shape[1]
    sums = torch.stack([torch.zeros(G).index_add_(0, table[:, i], rewards) for i in range(n)])
    return group_advantages(sums, mode=mode, scale=scale)


@pytest.mark.parametrize("mode,scale,proportional", [
    ("mean", "none", True), ("none", "none", True), ("rloo", "none", True),
    ("max", "none", False), ("mean", "group", False), ("mean", "zscore", False)])
def test_cross_mean_credit_vs_reference_sum(mode, scale, proportional):
    # Our credit (advantages over the J joint rewards, then the mean per sample) is the reference's
    # times a constant ONLY for the linear baselines without std scaling: 1/G**(n-1), and for rloo
    # also the ratio of the two leave-one-out factors (the docstring and deviation 2 say so).
    from magrpo_edu.algorithm import credit_samples, joint_actions

    G, n = 3, 2
    table = joint_actions(n, G, "cross")
    rewards = torch.tensor([0.0, 1.0, 5.0, 2.0, 2.5, 0.5, 3.0, 7.0, 1.5])
    ours = credit_samples(group_advantages(rewards, mode=mode, scale=scale), table, G)
    ref = _reference_cross_credit(rewards, table, G, mode, scale)
    J = G ** n
    constant = G ** (n - 1) * ((G / (G - 1)) / (J / (J - 1)) if mode == "rloo" else 1.0)
    assert torch.allclose(ours * constant, ref, atol=1e-5) is proportional
    if not proportional:  # not proportional with ANY constant either
        ratio = ref.flatten() / ours.flatten()
        assert ratio.max() - ratio.min() > 1e-3


def test_config_accepts_both_scalings_by_name():
    from magrpo_edu import MAGRPOConfig

    assert MAGRPOConfig(scale_rewards="zscore").scale_rewards == "zscore"
    assert MAGRPOConfig(scale_rewards="group").scale_rewards == "group"


@pytest.mark.parametrize("mode", ["mean", "none", "rloo", "max"])
@pytest.mark.parametrize("scale", ["none", "group", "zscore"])
@pytest.mark.parametrize("value", [0.0, 1.0, 2.98])
def test_equal_rewards_give_zero_advantage_but_for_plain_mareinforce(mode, scale, value):
    """Issue 35, item 2: a group whose rewards are all equal teaches nothing, under every baseline and
    scaling, except plain MAREINFORCE (A = R); never a NaN. advantage='none' with scale='group' (which
    divided the un-centred R by ~0: 1.0 -> 10000) is refused, by the function and by the config."""
    from magrpo_edu import MAGRPOConfig

    R = torch.full((4,), value)
    if (mode, scale) == ("none", "group"):
        with pytest.raises(ValueError, match="advantage='none' with scale_rewards='group' is refused"):
            group_advantages(R, mode=mode, scale=scale)
        with pytest.raises(ValueError, match="advantage='none' with scale_rewards='group' is refused"):
            MAGRPOConfig(advantage="none", scale_rewards="group")
        return
    A = group_advantages(R, mode=mode, scale=scale, clip=10.0)
    assert not torch.isnan(A).any()
    expected = R if (mode, scale) == ("none", "none") else torch.zeros(4)
    assert torch.equal(A, expected), (mode, scale, A)
