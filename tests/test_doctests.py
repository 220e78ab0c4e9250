"""The docstring examples (the reward contract, advantages, masks, joint actions, KL, repetition) are run as tests."""
import doctest

import pytest

import magrpo_edu.algorithm
import magrpo_edu.fast_path
import magrpo_edu.policy
import magrpo_edu.quality


@pytest.mark.parametrize("module", [magrpo_edu.algorithm, magrpo_edu.policy, magrpo_edu.fast_path, magrpo_edu.quality])
def test_docstring_examples(module):
    result = doctest.testmod(module, globs={"torch": __import__("torch"), **vars(module)}, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0, result
