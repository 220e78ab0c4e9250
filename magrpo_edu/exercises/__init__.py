"""The notebooks' exercises: a stub that fails its check until the learner writes the answer.

An exercise lives in three places, kept apart so that reading the notebook does not give it away:

- the notebook: one code cell holding the stub (a function whose body is `raise NotImplementedError`,
  or a value left as `...`) and the call `answer = check("NN.name", answer)`; the cell holds nothing
  else but imports, so a test can execute it on its own;
- `magrpo_edu/exercises/nbNN.py`: the check, registered with `@exercise("NN.name")`; it raises
  `ExerciseFailed` with a sentence that says what is wrong, and returns quietly when the answer is right;
- `magrpo_edu/exercises/solutions/nbNN.py`: `SOLUTIONS["NN.name"]`, the reference answer, and
  `MISTAKES["NN.name"]`, wrong answers a learner plausibly writes (each a misreading of the notebook's text: a
  strict against a non-strict bound, absolute against change, the wrong axis, G against G-1, ...), each of which the
  check must refuse with a sentence that says what is wrong; and `VARIANTS["NN.name"]`, other correct answers
  (a loop against a vectorised form, another order, another equivalent rule), each of which it must accept.

`check` returns the answer the rest of the notebook should use. Wrong, it raises `ExerciseFailed`, so "Run all"
stops where the learner has work to do. Unsolved (the stub raises NotImplementedError, or the value is still `...`) it
shows a failed box that says so and returns the reference solution, so the cells below still run and "Run all" reaches
the end for a learner who has solved nothing yet; `exercises_left()` lists every exercise still answered by the
reference. With the environment variable `MAGRPO_EDU_SOLUTIONS=1` (tests/conftest.py
sets it for the README's test command; a learner switches it on from inside a running notebook with `use_solutions()`,
which works on Colab and Binder too) the reference stands in quietly: one line instead of the box.
`tests/test_exercises.py` runs every check on the notebook's own stub (it must fail), on the solution and
every listed variant (each must pass) and on every listed mistake (each must fail)."""
from __future__ import annotations

import importlib
import math
import os
import pkgutil
from typing import Any, Callable

__all__ = ["ExerciseFailed", "check", "exercise", "exercises", "exercises_left", "solution", "mistakes", "variants",
           "use_solutions", "solution_used"]

_CHECKS: dict[str, Callable[[Any], None]] = {}
_LEFT: dict[str, None] = {}  # exercises this process answered with the reference solution, in the order met
_CURRENT: list = [None]       # the exercise whose check is running
_PROBE: dict[str, tuple] = {}  # per exercise, the first arguments its check handed an answer (replayed below)

SOLUTIONS_ENV = "MAGRPO_EDU_SOLUTIONS"


def use_solutions(on: bool = True) -> None:
    """Switch the reference solutions on (or off) for this Python process.

    Sets the environment variable MAGRPO_EDU_SOLUTIONS that `check` reads at every call, so it takes
    effect at once, in a running notebook kernel too (Colab, Binder, Jupyter: no restart, nothing to set
    before starting Jupyter). On: an exercise left unsolved is replaced by its reference solution
    (`magrpo_edu/exercises/solutions/nbNN.py`) quietly, with one line. Off: an unsolved exercise
    shows a failed box again (and still goes on with the reference). An answer you wrote is checked either way."""
    if on:
        os.environ[SOLUTIONS_ENV] = "1"
    else:
        os.environ.pop(SOLUTIONS_ENV, None)
    print(f"reference solutions {'on' if on else 'off'}: an unsolved exercise "
          + ("uses the reference solution in magrpo_edu/exercises/solutions/" if on
             else "shows a failed box, then goes on with the reference solution"))


class ExerciseFailed(AssertionError):
    """The learner's answer is not right yet; the message says what is wrong."""


def is_bool(v: Any) -> bool:
    """True for a Python bool and for numpy's (np.bool_, whose class is named "bool" under numpy 2, "bool_" before)."""
    if isinstance(v, bool):
        return True
    try:
        import numpy
    except ImportError:  # no numpy: no numpy bool either
        return False
    return isinstance(v, numpy.bool_)


def plain_number(v: Any) -> Any:
    """A numpy (or other numbers.Real) scalar as the Python int or float it stands for, so that a check accepts
    np.float32(0.5) where it accepts 0.5; a bool (numpy's included) and anything else come back unchanged, to be
    refused by the check."""
    import numbers

    if is_bool(v) or not isinstance(v, numbers.Real):
        return v
    return int(v) if isinstance(v, numbers.Integral) else float(v)


def rounded_to(got, want, digits=range(8), close=lambda g, w: math.isclose(g, w, abs_tol=1e-12)):
    """The number of decimals k in `digits` for which `want` rounded to k places is `got` (two numbers, or two
    sequences compared item by item with `close`); None when no k gives it. A check says "you rounded" with it."""
    as_list = (lambda x: list(x)) if isinstance(want, (list, tuple)) else (lambda x: [x])
    return next((k for k in digits if all(close(g, round(w, k)) for g, w in zip(as_list(got), as_list(want)))), None)


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message ("" when it has none): what a check quotes of a learner's crash."""
    return (str(exc).splitlines() or [""])[0]


def call_answer(fn, *args, said: Callable[[Exception], Any], **kwargs) -> Any:
    """Every check's first step: the learner's answer called on `args`, its crash said in a sentence.

    The unsolved stub's NotImplementedError passes through (`check` then answers with the reference solution); any
    other exception becomes ExerciseFailed(said(exc)), never a traceback. `said` returns the sentence, or a whole
    ExerciseFailed when the kind of crash calls for its own advice (a division by zero, an in-place change)."""
    remember_call(fn, args, kwargs)
    try:
        return fn(*args, **kwargs)
    except NotImplementedError:   # the stub: unsolved, not wrong
        raise
    except Exception as exc:  # noqa: BLE001  the learner's error, said in a sentence
        told = said(exc)
        raise (told if isinstance(told, ExerciseFailed) else ExerciseFailed(told)) from None


def outputs_per_group(fn, groups, given: Callable, read: Callable) -> list:
    """fn's answer for every group of the check, `read(answer, group)` (None where fn fails, or where `read` refuses
    the answer: wrong type or length). Hints that name a slip only when it explains EVERY group use it: a group where
    the learner's function fails is no evidence either way. `given(group)` is what fn receives (a list, a tensor)."""
    outs = []
    for group in groups:
        try:
            outs.append(read(fn(given(group)), group))
        except Exception:  # noqa: BLE001  the learner's function may fail on another group: no evidence there
            outs.append(None)
    return outs


def not_the_library(fn, name: str, own) -> None:
    """Refuse the package's own function as an answer: the exercise asks for the rule written out, and the
    library's function passes by construction."""
    if fn is own or getattr(fn, "__code__", None) is getattr(own, "__code__", object()):
        raise ExerciseFailed(f"that is the package's own `{own.__name__}`: it passes by construction and teaches nothing. "
                             f"Write `{name}` from the rule in the text, then compare it with `{own.__name__}` yourself.")


def runs_the_library(fn, args, *own) -> Any:
    """The first of the package's functions `own` that fn(*args) runs, however it reaches it (a wrapper,
    functools.partial, the module's attribute), watched with sys.setprofile for one call; None when it runs none of
    them, or when a profiler is already set (left alone). An exception of fn is swallowed: the check has called the
    answer already, only the calls matter here."""
    import sys

    if sys.getprofile() is not None:
        return None
    # By identity: code objects compare by value, so a learner's function with the reference's body on the same
    # line number would otherwise count as running it.
    codes, seen = {id(f.__code__): f for f in own}, []

    def watch(frame, event, arg):
        if event == "call" and id(frame.f_code) in codes:
            seen.append(codes[id(frame.f_code)])
    sys.setprofile(watch)
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - only the call to `own` matters here
        pass
    finally:
        sys.setprofile(None)
    return seen[0] if seen else None


def remember_call(call, args, kwargs=None) -> None:
    """Keep the first call a running check makes of the learner's answer (the answer itself, or a helper of the check
    handed the answer), for `_not_the_solution` to replay."""
    if _CURRENT[0] is not None and _CURRENT[0] not in _PROBE:
        _PROBE[_CURRENT[0]] = (call, tuple(args), dict(kwargs or {}))


def _not_the_solution(name: str, answer: Any) -> None:
    """After an answer passed: refuse it if it runs the reference solution (`solution(name)(...)`, or the function
    imported from exercises/solutions/): it passes by construction, as the package's own functions would. The
    reference object itself (what an unsolved exercise falls back to) is left alone."""
    ref = solution(name)
    if answer is ref or getattr(answer, "__code__", None) is getattr(ref, "__code__", object()):
        return
    probe = _PROBE.get(name)
    if probe is None or not hasattr(ref, "__code__"):
        return
    call, args, kwargs = probe
    if runs_the_library(lambda *a: call(*a, **kwargs), args, ref) is not None:
        raise ExerciseFailed(f"your function calls the reference solution of {name} ({_solutions_file(name)}): it "
                             "passes by construction and teaches nothing. Write it yourself from the text (or run "
                             "`use_solutions()` to skip the exercise openly).")


def not_a_wrapper(fn, args, name: str, *own, how: str = "") -> None:
    """Refuse an answer that hands its work to one of the package's own functions `own` (`lambda *a: own(*a)`, or an
    own rule compared with it inside): it passes by construction, as the function itself would (`not_the_library`
    catches only the function object). `how` replaces the default advice, "from the rule in the text"."""
    remember_call(fn, args)
    used = runs_the_library(fn, args, *own)
    if used is not None:
        raise ExerciseFailed(f"your function calls the package's own `{used.__name__}`: it passes by construction and "
                             f"teaches nothing. Write `{name}` {how or 'from the rule in the text'}, without calling "
                             f"`{used.__name__}`, then compare the two outside your function.")


def exercise(name: str):
    """Register `fn(answer)` as the check of exercise `name` ("NN.short_name", NN = the notebook)."""
    def register(fn):
        if name in _CHECKS:
            raise ValueError(f"exercise {name!r} is registered twice")
        _CHECKS[name] = fn
        return fn
    return register


def _load_all() -> None:
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("nb"):
            importlib.import_module(f"{__name__}.{info.name}")


def exercises() -> list[str]:
    """Every registered exercise name, sorted (notebook order)."""
    _load_all()
    return sorted(_CHECKS)


def _solutions_module(name: str):
    nb = name.split(".", 1)[0]
    return importlib.import_module(f"{__name__}.solutions.nb{nb}")


def _solutions_file(name: str) -> str:
    return f"magrpo_edu/exercises/solutions/nb{name.split('.', 1)[0]}.py"


def solution(name: str) -> Any:
    """The reference answer of exercise `name` (kept in `exercises/solutions/nbNN.py`)."""
    return _solutions_module(name).SOLUTIONS[name]


def mistakes(name: str) -> list:
    """Plausible wrong answers to exercise `name`; its check refuses each."""
    return list(getattr(_solutions_module(name), "MISTAKES", {}).get(name, []))


def variants(name: str) -> list:
    """Other correct answers to exercise `name` (besides the reference solution); its check accepts each."""
    return list(getattr(_solutions_module(name), "VARIANTS", {}).get(name, []))


def _run_check(name: str, answer: Any) -> None:
    if name not in _CHECKS:   # its notebook's checks not imported yet (a test run alone, say)
        _load_all()
    if answer is ...:
        raise NotImplementedError(f"exercise {name}: replace the `...` with your answer")
    _CURRENT[0] = name
    _PROBE.pop(name, None)
    try:
        _CHECKS[name](answer)
    finally:
        _CURRENT[0] = None
    _not_the_solution(name, answer)


class _Unsolved:
    """The failed box an unsolved exercise shows: red in Jupyter (HTML), plain text anywhere else."""

    def __init__(self, name: str):
        self.name = name

    def lines(self) -> list[str]:
        return [f"✗ exercise {self.name} is not solved yet.",
                "  Write your answer in this cell in place of the `...` or the `raise NotImplementedError`, and run the",
                "  cell again. Until then the cells below go on with the reference solution,",
                f"  {_solutions_file(self.name)}, so \"Run all\" reaches the end; `exercises_left()` lists every",
                "  exercise still left. (`use_solutions()`, i.e. MAGRPO_EDU_SOLUTIONS=1, turns this box into one line.)"]

    def __repr__(self) -> str:
        return "\n".join(self.lines())

    def _repr_html_(self) -> str:
        import html

        body = "<br>".join(html.escape(line.strip()) for line in self.lines())
        return ('<div style="border:2px solid #c62828;background:#fdecea;color:#000;padding:6px 10px;'
                f'border-radius:4px;font-family:sans-serif">{body}</div>')


def _show(box: _Unsolved) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import display
        if get_ipython() is not None:
            display(box)
            return
    except ImportError:
        pass
    print(repr(box))


def exercises_left() -> list[str]:
    """Every exercise this Python process (a notebook's kernel) met unsolved and answered with the reference
    solution, in the order met; prints them, or that every exercise met was solved."""
    left = list(_LEFT)
    if left:
        print(f"{len(left)} exercise(s) answered by the reference solution, still yours to solve: " + ", ".join(left))
    else:
        print("every exercise met in this session was solved by you")
    return left


def solution_used(name: str) -> bool:
    """Whether this kernel answered exercise `name` with the reference solution (unsolved, or `use_solutions()`): a
    later cell that runs the answer can then say whose answer it ran."""
    return name in _LEFT


def check(name: str, answer: Any) -> Any:
    """Check the learner's answer to exercise `name` and return the answer to use from here on.

    Right: prints a short confirmation and returns `answer`. Wrong: raises ExerciseFailed saying what
    is wrong ("Run all" stops there). Unsolved stub: the reference solution is checked and returned in its place, with
    a failed box that says so (one line when MAGRPO_EDU_SOLUTIONS=1, `use_solutions()`), and the exercise is listed
    by `exercises_left()`."""
    if name not in _CHECKS:
        _load_all()
    if name not in _CHECKS:
        raise KeyError(f"no exercise named {name!r}; known: {', '.join(exercises())}")
    try:
        _run_check(name, answer)
    except NotImplementedError:
        answer = solution(name)
        _run_check(name, answer)
        _LEFT[name] = None
        if os.environ.get(SOLUTIONS_ENV) == "1":
            print(f"exercise {name}: not solved here; using the reference solution of {_solutions_file(name)} "
                  "(MAGRPO_EDU_SOLUTIONS=1)")
        else:
            _show(_Unsolved(name))
        return answer
    _LEFT.pop(name, None)
    print(f"exercise {name}: correct")
    return answer
