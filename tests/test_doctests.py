"""The docstring examples (the reward contract, advantages, masks, joint actions, KL, repetition, the
table's char_ratio, the reward figure's step label, the default LoRA targets, config_for, the coding reward's per-test outcomes, load-bearing helpers and
what a second turn fixed) are run as tests."""
import doctest

import pytest

import magrpo_edu.algorithm
import magrpo_edu.backends.common
import magrpo_edu.backends.fast
import magrpo_edu.models
import magrpo_edu.quality
import magrpo_edu.evaluation.protocols
import magrpo_edu.run.figures
import magrpo_edu.run.plan
import magrpo_edu.tasks.coding.analysis
import magrpo_edu.tasks.coding.reward


@pytest.mark.parametrize("module", [magrpo_edu.algorithm, magrpo_edu.backends.common, magrpo_edu.backends.fast, magrpo_edu.models, magrpo_edu.quality,
                                    magrpo_edu.evaluation.protocols, magrpo_edu.run.figures, magrpo_edu.run.plan,
                                    magrpo_edu.tasks.coding.analysis, magrpo_edu.tasks.coding.reward])
def test_docstring_examples(module):
    result = doctest.testmod(module, globs={"torch": __import__("torch"), **vars(module)}, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0, result
