"""The coding reward's level feedback for the second turn, without an external LLM (docs/faithfulness.md,
"Deviations": coding feedback for turn 2):
`level_feedback` says what a reviewer would tell both agents about one joint attempt, `feedback_transition` turns it
into each agent's next prompt, `prefetch_feedback` runs a batch of attempts' programs in one sandbox batch first.
"""
from __future__ import annotations

from typing import Optional, Sequence

from ...sandbox import SandboxLimits
from ...sandbox.sanitise import for_prompt
from ..prompts import chat_next_turn
from .data import scored_asserts
from .reading import calls_aux, has_return, is_thin_wrapper, rebinds_aux
from . import reward  # its sandbox results (reward._RUNS, which tests and benchmarks may replace)
from .reward import _functions, combine, parse_error


FEEDBACK_PROGRAM_CHARS, FEEDBACK_PROGRAM_TOKENS = 400, 160
"""What the level feedback shows of a program's own text (the first failing test's error and message, the syntax
error): at most this many characters and, where the transition has the agent's tokenizer, tokens of it
(`sandbox.sanitise.for_prompt`: printable ASCII, no special token, no line or `#` of its own)."""


def level_feedback(aux: str, main: str, problem: dict, limits: Optional[SandboxLimits] = None,
                   comment: bool = True, tokenizer=None) -> str:
    """What a reviewer would tell both agents about one joint attempt: whether aux and main were
    found, the syntax error with its line and column, "Tests: p/q passed" and the first failing
    assert with its error, cooperation notes; ends with "Revise your function.".

    Two forms of the same facts. `comment=True` (the raw prompts of the embedded models): every
    check, one "# name: value" comment line each, as the `tiny-code-2turn` corpus was written.
    `comment=False` (a chat model's next user message, `feedback_transition`): only what is wrong,
    in sentences, and no line that starts with the entry point's name and a colon. Why: given
    "count_words: found" as the user's message, warm-started SmolLM2 answered `def count_words:`
    (no parameters, a syntax error) in most second answers (experiments/smollm2_coding.py,
    `feedback_wording`; the card has the measured shares).

    What the program said (an exception's class name and message, a returned value's repr) and the syntax
    error are hostile text: they go through `sandbox.sanitise.for_prompt` (printable ASCII, special-token
    markers and `#` escaped, at most FEEDBACK_PROGRAM_CHARS characters and, given the agents' `tokenizer`,
    FEEDBACK_PROGRAM_TOKENS of its tokens), and never start a line."""
    entry = problem["entry_point"]
    aux_f, main_f, error, job = _feedback_job(aux, main, problem)
    if error is not None:
        error = for_prompt(error, FEEDBACK_PROGRAM_CHARS, tokenizer, FEEDBACK_PROGRAM_TOKENS)
    aux_ok, main_ok = bool(aux_f and has_return(aux_f)), bool(main_f and has_return(main_f))
    tests, failing, note = None, None, None
    if job is not None:
        r = reward._RUNS.run([job], limits)[0]  # the reward's result where it has just run
        tests = f"{r.passed}/{r.total} passed"
        first = next((a for a in r.asserts if not a.passed), None)
        if first is not None:
            said = f"{first.error}: {first.message or ''}".rstrip(": ")
            failing = f"{first.source} -> {for_prompt(said, FEEDBACK_PROGRAM_CHARS, tokenizer, FEEDBACK_PROGRAM_TOKENS)}"
        if aux_f:
            if not calls_aux(main_f, entry):
                note = f"{entry} does not call aux"
            elif rebinds_aux(main_f, entry):
                note = f"{entry} must call aux as agent 1 wrote it (no rebinding, no reflection)"
            elif is_thin_wrapper(main_f, entry):
                note = f"{entry} only wraps aux; give it real work"
    if comment:
        lines = [f"aux: {'found' if aux_ok else 'missing (define aux with a return)'}",
                 f"{entry}: {'found' if main_ok else 'missing (define it with a return)'}",
                 f"syntax: {error or 'OK'}"]
        lines += [f"Tests: {tests}"] * (tests is not None) + [f"first failing: {failing}"] * (failing is not None)
        lines += [f"note: {note}"] * (note is not None)
    else:
        lines = ["The helper aux is missing: define aux, with a return."] * (not aux_ok)
        lines += [f"The main function {entry} is missing: define it, with a return."] * (not main_ok)
        lines += [f"Syntax error: {error}"] * (error is not None)
        lines += [f"Tests: {tests}"] * (tests is not None) + [f"First failing test: {failing}"] * (failing is not None)
        lines += [f"Note: {note}."] * (note is not None)
    lines.append("Revise your function.")
    return "\n".join(("# " if comment else "") + one_line(line) for line in lines)


def _feedback_job(aux: str, main: str, problem: dict) -> tuple[str, str, Optional[str], Optional[tuple]]:
    """What `level_feedback` reads of one joint attempt: the extracted aux and main, the combined
    program's syntax error (None if it parses), and the sandbox job it runs ((program, asserts, entry
    point); None where it runs nothing: a syntax error, no main with a return, no host-checkable assert)."""
    entry = problem["entry_point"]
    aux_f, main_f = _functions(aux, main, entry, single=False)
    program = combine(aux_f, main_f, problem)
    error = parse_error(program)
    asserts = scored_asserts(problem["test"], entry)
    job = (program, asserts, entry) if error is None and main_f and has_return(main_f) and asserts else None
    return aux_f, main_f, error, job


def prefetch_feedback(attempts: Sequence[tuple[str, str, dict]], limits: Optional[SandboxLimits] = None) -> int:
    """Run, in one parallel batch, the programs `level_feedback` would run for `attempts` ((aux, main,
    problem) each), so that the next `level_feedback` calls for them read the results from memory (the
    same cache the reward fills). For callers that write feedback for many attempts at once (the
    second-turn documents of the code corpus); at most 256 attempts a call (the cache keeps 512).
    Returns how many programs ran."""
    if len(attempts) > 256:
        raise ValueError(f"prefetch_feedback: {len(attempts)} attempts; give at most 256 a call.")
    jobs = [job for job in (_feedback_job(aux, main, problem)[3] for aux, main, problem in attempts) if job is not None]
    if jobs:
        reward._RUNS.run(jobs, limits)
    return len(jobs)


def one_line(text: str) -> str:
    """`text` on one line: every line break (\\n, \\r, and the others `str.splitlines` knows) becomes " / ",
    so an exception message or an assert cannot start a line of its own in the next prompt (a forged
    "# Tests: 4/4 passed")."""
    return " / ".join(text.splitlines()) if text else text


def feedback_transition(limits: Optional[SandboxLimits] = None, tokenizer=None):
    """A `transition(prompts, completions, histories, row)` for `MAGRPOConfig(num_turns=2)`: each
    agent's next prompt is its first prompt, its own previous answer, and the level feedback. Each
    agent sees only its own history (plus the shared feedback facts). The programs are not run again:
    the feedback reuses the results the reward has just computed for the same joint actions.

    Two forms, chosen per prompt. A raw prompt (the embedded models) continues as a document: the
    answer, then the feedback as comment lines, and the model writes on. A prompt in `tokenizer`'s
    chat template (an instruct model such as SmolLM2-135M-Instruct, `coding_formatters(tokenizer)`)
    continues as a conversation (`prompts.chat_next_turn`): the answer closes the assistant's turn,
    the feedback is the user's next message (`level_feedback(comment=False)`: only what is wrong, in
    sentences), and the assistant answers it. Without
    this, an instruct model would read the feedback inside its own turn and be asked to go on
    writing its finished answer."""
    def transition(prompts, completions, histories, row):
        feedback: dict = {}  # comment form -> the text, written once for the joint attempt

        def said(comment: bool) -> str:
            if comment not in feedback:
                feedback[comment] = level_feedback(completions[0], completions[1], row, limits, comment=comment,
                                                   tokenizer=tokenizer)
            return feedback[comment]

        out = []
        for hist, completion in zip(histories, completions):
            first, answer = hist[0][0], completion.rstrip()
            chat = chat_next_turn(tokenizer, first, answer, said(False)) if tokenizer is not None else None
            out.append(chat if chat is not None else f"{first}{answer}\n{said(True)}\n")
        return out
    return transition
