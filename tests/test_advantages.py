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


@pytest.mark.parametrize("mode,centred", [("mean", [-2.0, -1.0, 0.0, 3.0]), ("max", [-5.0, -4.0, -3.0, 0.0]),
                                          ("none", [1.0, 2.0, 3.0, 6.0])])
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
