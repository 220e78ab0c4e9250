"""The guard against answers that call the reference solution must look functions up by identity: code objects
compare by value, so a learner's function with the reference's body, defined on the reference's line number, used to
count as running the reference and was refused (round 8 of the course review)."""
import inspect
import textwrap

import pytest
import torch

from magrpo_edu.exercises import ExerciseFailed, check, solution


def _written_again(name: str):
    """The reference answer of `name`, compiled anew from its source at its own first line, in a learner's file."""
    ref = solution(name)
    src = textwrap.dedent(inspect.getsource(ref))
    namespace = {"torch": torch}
    exec(compile("\n" * (ref.__code__.co_firstlineno - 1) + src, "<learner cell>", "exec"), namespace)
    mine = namespace[ref.__name__]
    assert mine.__code__ == ref.__code__ and mine.__code__ is not ref.__code__   # equal by value, not the same object
    return mine


@pytest.mark.parametrize("name", ["01.sequence_logprob", "01.leave_one_out"])
def test_an_answer_equal_to_the_reference_is_the_learners_own(name):
    check(name, _written_again(name))


def test_an_answer_that_calls_the_reference_is_still_refused():
    ref = solution("01.sequence_logprob")
    with pytest.raises(ExerciseFailed, match="calls the reference solution"):
        check("01.sequence_logprob", lambda token_logp, mask: ref(token_logp, mask))
