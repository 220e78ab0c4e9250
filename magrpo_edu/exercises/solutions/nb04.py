"""Reference answers and typical mistakes for notebook 04's exercises."""
from . import written_again
import re

from ..nb04 import rule_lines as _body_lines   # the lines the rule reads, given to the learner in the notebook


def thin_wrapper(main: str) -> bool:
    body = _body_lines(main)
    if len(body) == 1:
        return body[0].startswith("return ") and "aux" in body[0]
    if len(body) == 2:
        m = re.search(r"(?<!\w)(\w+)\s*=\s*aux\s*\(", body[0])   # the authors' regex, searched in the whole line
        return bool(m) and body[1] == f"return {m.group(1)}"
    return not body


def coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    reward = 0.4 if aux_defined else 0.0
    if not main_defined:
        return reward
    reward += 0.6
    if not parses:
        return reward
    reward += 0.5 + (passed / total if total else 0.0)   # no test (total = 0): the tests level is 0
    if passed >= 1 and aux_found and calls_aux:   # the bonus needs an aux, with or without a return
        reward += 0.5 if thin_wrapper else 1.5
    return reward


def _any_match_returned(main: str) -> bool:  # any `v = aux(` on the first line, not only the first match's v
    body = _body_lines(main)
    if len(body) == 2:
        names = re.findall(r"(?<!\w)(\w+)\s*=\s*aux\s*\(", body[0])
        return any(body[1] == f"return {v}" for v in names)
    return thin_wrapper(main)


def _only_return_aux(main: str) -> bool:  # the everyday meaning of "wrapper"
    return "return aux(" in main and main.count("\n") <= 2


def _one_line_any(main: str) -> bool:  # forgets that the line must mention aux
    lines = [x for x in main.split("\n")[1:] if x.strip() and not x.strip().startswith(("#", '"""'))]
    return len(lines) == 1


def _no_gates(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    return (0.4 * aux_defined + 0.6 * main_defined + 0.5 * parses + passed / total
            + (0.5 if calls_aux else 0) + (1.0 if calls_aux and not thin_wrapper else 0))


def _bonus_without_tests(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # forgets the gate "at least one test passed": pays the bonus where no test passed too
    reward = coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    if main_defined and parses and passed == 0 and aux_found and calls_aux:
        reward += 0.5 if thin_wrapper else 1.5
    return reward


def _body(main: str, multiline_docstrings: bool = True) -> list:
    """The body lines without blank lines, comments and docstrings (or, as a slip, one-line docstrings only)."""
    body, in_doc = [], False
    for line in main.split("\n")[1:]:
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if multiline_docstrings and (in_doc or s.startswith(('"""', "'''"))):
            in_doc = not (s.endswith(('"""', "'''")) and (in_doc or len(s) > 3))
            continue
        if not multiline_docstrings and s.startswith(('"""', "'''")) and s.endswith(('"""', "'''")) and len(s) > 3:
            continue
        body.append(s)
    return body


def _one_line_docstrings_only(main: str) -> bool:       # a docstring's middle lines counted as code
    body = _body(main, multiline_docstrings=False)
    if len(body) == 1:
        return body[0].startswith("return ") and "aux" in body[0]
    if len(body) == 2:
        m = re.search(r"(?<!\w)(\w+)\s*=\s*aux\s*\(", body[0])   # the authors' regex, searched in the whole line
        return bool(m) and body[1] == f"return {m.group(1)}"
    return not body


def _two_lines_any_return(main: str) -> bool:            # `v = aux(...)` then ANY return
    body = _body(main)
    if len(body) == 1:
        return body[0].startswith("return ") and "aux" in body[0]
    return len(body) == 2 and "= aux(" in body[0] and body[1].startswith("return ")


def _docstrings_kept(main: str) -> bool:                 # forgets to drop docstrings and comments
    body = [x.strip() for x in main.split("\n")[1:] if x.strip()]
    if len(body) == 1:
        return body[0].startswith("return ") and "aux" in body[0]
    if len(body) == 2 and "=" in body[0]:
        var, _, value = body[0].partition("=")
        return value.strip().startswith("aux(") and body[1] == f"return {var.strip()}"
    return False


def _passed_count(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the tests level as the number passed, not the share
    return coding_reward(aux_found, aux_defined, main_defined, parses, passed, 1, calls_aux, thin_wrapper)


def _aux_behind_the_gate(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # a missing entry point pays nothing, aux's 0.4 included
    return coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper) if main_defined else 0.0


def _bonus_one_point(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # "not a thin wrapper: 1.0" read as the whole bonus, not on top of calling aux's 0.5
    r = coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    return r - 0.5 if main_defined and parses and passed >= 1 and aux_found and calls_aux and not thin_wrapper else r


def _bonus_needs_every_test(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    return coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux and passed == total, thin_wrapper)


def _not_thin_without_calling(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the +1.0 paid to any main that is not a thin wrapper, whether it calls aux or not
    r = coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    if main_defined and parses and passed >= 1 and aux_found and not calls_aux and not thin_wrapper:
        r += 1.0
    return r


def _bonus_needs_aux_return(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the bonus gated on aux's 0.4 (aux with a return); the authors need only an extracted aux
    return coding_reward(aux_defined, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)


def _coding_reward_table(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    """The same reward as a sum of gated terms."""
    l1 = 0.4 * aux_defined
    go2 = main_defined
    go3 = go2 and parses
    bonus = go3 and passed > 0 and aux_found and calls_aux
    share = passed / total if total else 0.0        # no test (total = 0): the tests level is 0
    return l1 + 0.6 * go2 + (0.5 + share) * go3 + (0.5 + 1.0 * (not thin_wrapper)) * bonus


def _bonus_without_aux(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the bonus paid whenever the main calls aux, whether agent 1 wrote one or not
    return coding_reward(True, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)


def _tests_all_or_nothing(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    r = coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    return r - passed / total + (passed == total) if main_defined and parses else r


def _thin_wrapper_earns_nothing(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    r = coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    return r - 0.5 if main_defined and parses and passed >= 1 and aux_found and calls_aux and thin_wrapper else r


def _regex_with_spaces_only(main: str) -> bool:     # `(\w+) = aux\(` literally: `v=aux(s)` missed
    b = _body_lines(main)
    if len(b) == 2:
        m = re.search(r"(\w+) = aux\(", b[0])
        return bool(m) and b[1] == f"return {m.group(1)}"
    return thin_wrapper(main)


def _return_without_space(main: str) -> bool:       # `return(aux(s))` read as a one-line return
    b = _body_lines(main)
    if len(b) == 1:
        return b[0].startswith("return") and "aux" in b[0]
    return thin_wrapper(main)


def _tests_half(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the tests level scaled to 0.5 (like the syntax level): `reward += 0.5 * passed / total`
    r = coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    return r - 0.5 * passed / total if main_defined and parses else r


def _rounded_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the reward rounded to one decimal: 3.25 reads 3.2
    return round(coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper), 1)


def _no_stop_at_l2(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # a parse failure withholds only the syntax 0.5: the tests and the bonus are still paid (no L2 stop)
    reward = 0.4 if aux_defined else 0.0
    if not main_defined:
        return reward
    reward += 0.6 + (0.5 if parses else 0.0) + passed / total
    if passed >= 1 and aux_found and calls_aux:
        reward += 0.5 if thin_wrapper else 1.5
    return reward


def _l2_ignored(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # `parses` never read: a program that does not parse scored as one that does
    return coding_reward(aux_found, aux_defined, main_defined, True, passed, total, calls_aux, thin_wrapper)


SOLUTIONS = {"04.thin_wrapper": thin_wrapper, "04.levels": coding_reward}
MISTAKES = {
    "04.thin_wrapper": [_any_match_returned, _only_return_aux, _one_line_any, _one_line_docstrings_only, _two_lines_any_return,
                        _docstrings_kept, _regex_with_spaces_only, _return_without_space],
    "04.levels": [_no_gates, _bonus_without_tests, _passed_count, _aux_behind_the_gate, _bonus_one_point,
                  _bonus_needs_every_test, _not_thin_without_calling, _bonus_needs_aux_return, _bonus_without_aux,
                  _tests_all_or_nothing, _thin_wrapper_earns_nothing, _tests_half, _rounded_reward, _no_stop_at_l2,
                  _l2_ignored],
}
VARIANTS = {"04.levels": [_coding_reward_table]}


def _thin_wrapper_ast(main: str) -> bool:
    """The same rule read off the syntax tree: docstrings are expression statements, comments are gone."""
    import ast

    fn = ast.parse(main).body[0]
    body = [st for st in fn.body if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant)
                                         and isinstance(st.value.value, str))]
    if not body:
        return True
    if len(body) == 1:
        return isinstance(body[0], ast.Return) and "aux" in ast.unparse(body[0])
    if len(body) == 2 and isinstance(body[0], ast.Assign) and isinstance(body[1], ast.Return):
        target, value, ret = body[0].targets[0], body[0].value, body[1].value
        return (isinstance(target, ast.Name) and ast.unparse(value).startswith("aux(")  # the regex reads only the start
                and isinstance(ret, ast.Name) and ret.id == target.id)
    return False


VARIANTS["04.thin_wrapper"] = []  # the AST reading drops comments the authors' text rule keeps: not an equivalent form


def _thin_wrapper_numpy_bool(main: str):          # a numpy bool is a bool too (numpy 2 names its class "bool")
    import numpy

    return numpy.bool_(written_again(thin_wrapper)(main))


VARIANTS["04.thin_wrapper"].append(_thin_wrapper_numpy_bool)


def _empty_not_wrapper(main: str) -> bool:        # an empty body judged "not a wrapper" (the authors: a wrapper)
    return bool(_body_lines(main)) and thin_wrapper(main)


def _one_line_needs_call(main: str) -> bool:      # the one line must CALL aux( (the authors: mention aux anywhere)
    import re
    b = _body_lines(main)
    if len(b) == 1:
        return b[0].startswith("return ") and re.search(r"\baux\(", b[0]) is not None
    return thin_wrapper(main)


def _one_line_not_return(main: str) -> bool:      # any one line mentioning aux (the authors: it must start `return `)
    b = _body_lines(main)
    return "aux" in b[0] if len(b) == 1 else thin_wrapper(main)


def _two_lines_whole_call(main: str) -> bool:     # `v = aux(...)` read as the whole first line (the authors: its start)
    import re
    b = _body_lines(main)
    if len(b) == 2:
        m = re.fullmatch(r"(\w+) = aux\(.*\)", b[0])
        return bool(m) and b[1] == f"return {m.group(1)}"
    return thin_wrapper(main)


def _any_string_line_dropped(main: str) -> bool:  # `"Doc."` dropped as a docstring (the rule: triple quotes only)
    def one_quote_string(line: str) -> bool:
        t = line.strip()
        return len(t) > 1 and t[0] in "\"'" and t[-1] == t[0] and not t.startswith(('"' * 3, "'" * 3))
    return thin_wrapper("\n".join(x for x in main.split("\n") if not one_quote_string(x)))


def _two_lines_or_more(main: str) -> bool:        # the two-line rule read on the first two of two OR MORE lines
    b = _body_lines(main)
    if len(b) >= 2:
        m = re.search(r"(?<!\w)(\w+)\s*=\s*aux\s*\(", b[0])
        return bool(m) and b[1] == f"return {m.group(1)}"
    return thin_wrapper(main)


def _aux_any_case(main: str) -> bool:             # `"aux" in line.lower()`: `Aux(s)` read as aux (the authors: exact case)
    b = _body_lines(main)
    if len(b) == 1:
        return b[0].startswith("return ") and "aux" in b[0].lower()
    return thin_wrapper(main)


def _last_line_returns_aux(main: str) -> bool:   # the one-line rule read on the LAST line of three or more
    b = _body_lines(main)
    if len(b) >= 3:
        return b[-1].startswith("return ") and "aux" in b[-1]
    return thin_wrapper(main)


def _hash_line_dropped(main: str) -> bool:       # any line with a # dropped (a comment is only what follows the #)
    return thin_wrapper("\n".join(x for x in main.split("\n") if "#" not in x))


def _return_line_normalised(main: str) -> bool:   # `return  v` read as `return v` (whitespace inside the line counts)
    b = _body_lines(main)
    if len(b) == 2:
        m = re.search(r"(?<!\w)(\w+)\s*=\s*aux\s*\(", b[0])
        return bool(m) and " ".join(b[1].split()) == f"return {m.group(1)}"
    return thin_wrapper(main)


def _regex_without_bracket(main: str) -> bool:    # `v = aux` without `\(`: `v = auxiliary(s)` read as a call of aux
    b = _body_lines(main)
    if len(b) == 2:
        m = re.search(r"(\w+)\s*=\s*aux", b[0])
        return bool(m) and b[1] == f"return {m.group(1)}"
    return thin_wrapper(main)


MISTAKES["04.thin_wrapper"] += [_empty_not_wrapper, _one_line_needs_call, _one_line_not_return, _two_lines_whole_call,
                                _any_string_line_dropped,
                                _two_lines_or_more, _aux_any_case, _last_line_returns_aux,
                                _hash_line_dropped, _return_line_normalised, _regex_without_bracket]


def _tests_over_four(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the tests level as passed / 4 (or passed * 0.25, the same numbers): the count_vowels problem's total, not the
    # problem's own; right only for a test of 4 asserts
    r = coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    return r - passed / total + passed / 4 if main_defined and parses else r


def _share_rounded(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the share rounded to 2 decimals: 1/3 reads 0.33
    r = coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    return r - passed / total + round(passed / total, 2) if main_defined and parses else r


def _reward_rounded_2(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the whole reward rounded to 2 decimals: 3.3333 reads 3.33
    r = coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    return round(r, 2)


def _bonus_needs_two_tests(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the bonus gated on `passed > 1`: one passed test is enough
    return coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux and passed > 1,
                         thin_wrapper)


MISTAKES["04.levels"] += [_tests_over_four, _share_rounded, _reward_rounded_2,
                          _bonus_needs_two_tests]


def _rule_on_lines(body: list) -> bool:          # the reference's rule, on lines already read (the mistakes below)
    if len(body) == 1:
        return body[0].startswith("return ") and "aux" in body[0]
    if len(body) == 2:
        m = re.search(r"(?<!\w)(\w+)\s*=\s*aux\s*\(", body[0])
        return bool(m) and body[1] == f"return {m.group(1)}"
    return not body


def _lines_then_rule(main: str, keep=lambda s: s.strip(), opens_and_closes=None, closes=None,
                     first_only: bool = False) -> bool:
    """The reference's reading with one step of the line handling swapped (the rule's tail unchanged)."""
    q = ('"' * 3, "'" * 3)
    opens_and_closes = opens_and_closes or (lambda s: s.endswith(q) and len(s) > 3)
    closes = closes or (lambda s: q[0] in s or q[1] in s)
    body, in_doc = [], False
    for line in main.split("\n")[1:]:
        s = keep(line)
        if not s or s.startswith("#"):
            continue
        if in_doc:
            in_doc = not closes(s)
            continue
        if s.startswith(q) and not (first_only and body):
            in_doc = not opens_and_closes(s)
            continue
        body.append(s)
    return _rule_on_lines(body)


def _lone_quotes_one_line(main: str) -> bool:     # `"""` alone read as a whole one-line docstring (starts AND ends
    return _lines_then_rule(main, opens_and_closes=lambda s: s.endswith(('"' * 3, "'" * 3)))   # with three quotes)


def _closes_on_quotes_line(main: str) -> bool:    # a docstring closed only by a line that is exactly `"""`
    return _lines_then_rule(main, closes=lambda s: s in ('"' * 3, "'" * 3))


def _docstring_first_only(main: str) -> bool:     # only a FIRST statement dropped (Python's docstring; the rule: any)
    return _lines_then_rule(main, first_only=True)


def _lines_lstripped(main: str) -> bool:          # `.lstrip()`: trailing spaces kept (`return v   ` is not `return v`)
    return _lines_then_rule(main, keep=str.lstrip)


def _thin_wrapper_library_lines(main: str) -> bool:   # the library's line loop: a docstring closes on any line that
    body, in_doc = [], False                           # CONTAINS triple quotes; `def ` lines dropped
    for line in main.split("\n"):
        s = line.strip()
        if not s:
            continue
        if in_doc:
            in_doc = '"' * 3 not in s and "'" * 3 not in s
            continue
        if s.startswith(('"' * 3, "'" * 3)):
            in_doc = not (s.endswith(s[:3]) and len(s) > 3)
            continue
        if not s.startswith(("#", "def ")):
            body.append(s)
    return _rule_on_lines(body)


MISTAKES["04.thin_wrapper"] += [_lone_quotes_one_line, _closes_on_quotes_line, _docstring_first_only, _lines_lstripped]
VARIANTS["04.thin_wrapper"].append(_thin_wrapper_library_lines)


def _library_wrapper(main: str) -> bool:          # the library's own rule, wrapped: passes by construction
    from magrpo_edu.tasks.coding.reading import is_thin_wrapper

    return is_thin_wrapper(main, "f")


def _return_first_word(main: str) -> bool:        # `return` read as the first word: `return\taux(s)` taken (the rule:
    b = _body_lines(main)                          # the line starts with `return ` and its space)
    if len(b) == 1:
        return b[0].split()[0] == "return" and "aux" in b[0]
    return thin_wrapper(main)


def _docstring_closes_at_line_end(main: str) -> bool:   # a docstring closed only by a line that ENDS with its quotes
    body, q = [], None                                    # (the rule: the first line that CONTAINS them)
    for line in main.split("\n")[1:]:
        s = line.strip()
        if not s:
            continue
        if q:
            if s.endswith(q):
                q = None
            continue
        if s.startswith(('"' * 3, "'" * 3)):
            if not (s.endswith(s[:3]) and len(s) > 3):
                q = s[:3]
            continue
        if not s.startswith("#"):
            body.append(s)
    return _rule_on_lines(body)


def _semicolon_stripped(main: str) -> bool:       # `return v;` read as `return v` (the rule: exactly that text)
    b = _body_lines(main)
    if len(b) == 2:
        m = re.search(r"(?<!\w)(\w+)\s*=\s*aux\s*\(", b[0])
        return bool(m) and b[1].rstrip(";") == f"return {m.group(1)}"
    return thin_wrapper(main)


MISTAKES["04.thin_wrapper"] += [_library_wrapper, _return_first_word, _docstring_closes_at_line_end,
                                _semicolon_stripped]


def _bonus_needs_half(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the bonus gated on `passed / total >= 0.5`: one passed test is enough
    return coding_reward(aux_found, aux_defined, main_defined, parses, passed, total,
                         calls_aux and passed / total >= 0.5, thin_wrapper)


def _thin_wrapper_sign_flipped(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # `1.5 if thin_wrapper else 0.5`: the +1.0 paid to the thin wrapper
    return coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, not thin_wrapper)


def _aux_paid_when_found(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # aux's 0.4 paid for aux_found (an aux without a return too), not aux_defined
    return coding_reward(aux_found, aux_found, main_defined, parses, passed, total, calls_aux, thin_wrapper)


MISTAKES["04.levels"] += [_bonus_needs_half, _thin_wrapper_sign_flipped, _aux_paid_when_found]


def _total_zero_divides(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # `reward += 0.5 + passed / total` unguarded: a problem with no test (total = 0) raises ZeroDivisionError
    reward = 0.4 if aux_defined else 0.0
    if not main_defined:
        return reward
    reward += 0.6
    if not parses:
        return reward
    reward += 0.5 + passed / total
    if passed >= 1 and aux_found and calls_aux:
        reward += 0.5 if thin_wrapper else 1.5
    return reward


def _total_zero_full_share(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # `passed / total if total else 1.0`: no test read as every test passed (2.5 where the library pays 1.5)
    r = coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    return r + 1.0 if main_defined and parses and total == 0 else r


def _share_failed(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # `(total - passed) / total`: the share of tests FAILED paid
    r = coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    return r - passed / total + (total - passed) / total if main_defined and parses else r


def _share_over_total_plus_one(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # `passed / (total + 1)`: every test passed earns less than 1.0
    r = coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    return r - (passed / total if total else 0.0) + passed / (total + 1) if main_defined and parses else r


def _thin_wrapper_minus_one(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # `0.5 + (-1.0 if thin_wrapper else 1.0)`: the +1.0 subtracted from a thin wrapper, not withheld
    r = coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    return r - 1.0 if main_defined and parses and passed >= 1 and aux_found and calls_aux and thin_wrapper else r


def _no_stop_at_entry_point(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # a missing entry point withholds only its 0.6: the syntax, tests and bonus are still paid (no L1 stop)
    reward = (0.4 if aux_defined else 0.0) + (0.6 if main_defined else 0.0)
    if not parses:
        return reward
    reward += 0.5 + (passed / total if total else 0.0)
    if passed >= 1 and aux_found and calls_aux:
        reward += 0.5 if thin_wrapper else 1.5
    return reward


def _bonus_parts_swapped(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # calling aux +1.0 and not a thin wrapper +0.5: `1.0 if thin_wrapper else 1.5`
    r = coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    return r + 0.5 if main_defined and parses and passed >= 1 and aux_found and calls_aux and thin_wrapper else r


def _syntax_tests_swapped(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # L2 pays 1.0 and L3 0.5 * passed / total: `reward += 1.0 + 0.5 * passed / total`
    r = coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    share = passed / total if total else 0.0
    return r + 0.5 - share / 2 if main_defined and parses else r


MISTAKES["04.levels"] += [_total_zero_divides, _total_zero_full_share, _share_failed, _share_over_total_plus_one,
                          _thin_wrapper_minus_one, _no_stop_at_entry_point, _bonus_parts_swapped, _syntax_tests_swapped]


def _coding_reward_short_names(af, ad, md, ok, p, n, calls, thin):   # the facts in the documented order, renamed
    r = 0.4 if ad else 0.0
    if not md:
        return r
    r += 0.6
    if not ok:
        return r
    r += 0.5 + (p / n if n else 0.0)
    if p >= 1 and af and calls:
        r += 0.5 + (0.0 if thin else 1.0)
    return r


def _coding_reward_keywords(passed, total, *, thin_wrapper, calls_aux, parses, main_defined, aux_defined, aux_found):
    # the eight names in another order: the check passes them by keyword then
    return written_again(coding_reward)(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)


VARIANTS["04.levels"] += [_coding_reward_short_names, _coding_reward_keywords]


def _docstring_two_quotes_one_line(main: str) -> bool:   # a line holding TWO triple quotes read as a whole one-line
    body, q = [], None                                     # docstring (the rule: only a line that ENDS with them), so
    for line in main.split("\n")[1:]:                     # `"""Count."""  # doc` drops only itself
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if q:
            if q in s:
                q = None
            continue
        if s.startswith(('"' * 3, "'" * 3)):
            if s.count(s[:3]) >= 2:
                continue
            q = s[:3]
            continue
        body.append(s)
    return _rule_on_lines(body)


def _split_at_semicolons(main: str) -> bool:     # `;` read as a line break: `n = 0; v = aux(s)` read as two lines
    return _rule_on_lines([part.strip() for s in _body_lines(main) for part in s.split(";") if part.strip()])


MISTAKES["04.thin_wrapper"] += [_docstring_two_quotes_one_line,
                                _thin_wrapper_ast,   # the body's STATEMENTS read (ast), not its lines of text
                                _split_at_semicolons]


def _docstring_closed_by_own_kind(main: str) -> bool:   # a docstring closed only by the kind of quotes that opened it
    rest = [x.strip() for x in main.split("\n")[1:]]      # (the rule: the next line holding triple quotes of EITHER kind)
    body, i = [], 0
    while i < len(rest):
        s = rest[i]
        i += 1
        if not s or s.startswith("#"):
            continue
        if s.startswith(('"' * 3, "'" * 3)):
            q = s[:3]
            if not (s.endswith(q) and len(s) > 3):
                while i < len(rest) and q not in rest[i]:
                    i += 1
                i += 1
            continue
        body.append(s)
    return _rule_on_lines(body)


def _lines_not_stripped(main: str) -> bool:       # the lines kept with their indentation: `    return aux(xs)` does not
    body = [x for x in main.split("\n")[1:]         # start with `return `
            if x.strip() and not x.strip().startswith(("#", '"' * 3, "'" * 3))]
    return _rule_on_lines(body)


MISTAKES["04.thin_wrapper"] += [_docstring_closed_by_own_kind, _lines_not_stripped]


def _tests_integer_division(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # `passed // total`: integer division, 0 until every test passes
    r = coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    return r - (passed / total if total else 0.0) + (passed // total if total else 0.0) if main_defined and parses else r


def _l1_l2_swapped(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # aux pays 0.6 and the entry point 0.4
    r = coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    return r + (0.2 if aux_defined else 0.0) - (0.2 if main_defined else 0.0)


def _reward_as_bool(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # whether a reward is earned, not the reward
    return coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper) > 0


def _reward_as_text(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the right value as a str: f"{reward:.2f}"
    return f"{coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):.2f}"


def _never_called_penalised(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # -0.5 for a main that never calls aux (the table's penalty is for a main that calls aux and drops its result)
    r = coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    return r - 0.5 if main_defined and parses and passed >= 1 and aux_found and not calls_aux else r


def _bonus_times_share(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the bonus scaled by the share passed / total, not paid in full
    r = coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    if main_defined and parses and passed >= 1 and aux_found and calls_aux:
        r -= (0.5 if thin_wrapper else 1.5) * (1 - passed / total)
    return r


MISTAKES["04.levels"] += [_tests_integer_division, _l1_l2_swapped, _reward_as_bool, _reward_as_text,
                          _never_called_penalised, _bonus_times_share]


_coding_reward_again = written_again(coding_reward)   # the reference's rule under its own code object: the mistakes
# below differ from it only at a gate, which the check must reach (not refuse them as calls of the reference)


def _gate_fixed_aux(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # `if not main_defined: return 0.4`: aux's 0.4 paid at the gate whether aux_defined or not
    if not main_defined:
        return 0.4
    return _coding_reward_again(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)


def _no_parse_fixed(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # `if main_defined and not parses: return 1.0`: a fixed 1.0, aux's 0.4 included whether aux_defined or not
    if main_defined and not parses:
        return 1.0
    return _coding_reward_again(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)


def _no_tests_fixed(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # `if main_defined and parses and total == 0: return 1.5`: a fixed 1.5, aux's 0.4 included whether defined or not
    if main_defined and parses and total == 0:
        return 1.5
    return _coding_reward_again(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)


def _gate_aux_found(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # `r = 0.4 if aux_found else 0.0` before the entry-point gate (aux_defined read only after it)
    if not main_defined:
        return 0.4 if aux_found else 0.0
    return _coding_reward_again(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)


def _share_of_four(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the reward divided by its maximum, 4.0: a share of 4, not the summed points
    return _coding_reward_again(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper) / 4


def _capped_below_four(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # `min(reward, 3.5)`: a cap below the 4.0 that every level earned adds up to
    return min(_coding_reward_again(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper), 3.5)


def _reward_as_dict(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the reward wrapped in a dict: `{"total": reward}`
    return {"total": _coding_reward_again(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux,
                                   thin_wrapper)}


MISTAKES["04.levels"] += [_gate_fixed_aux, _no_parse_fixed, _no_tests_fixed, _gate_aux_found, _share_of_four,
                          _capped_below_four, _reward_as_dict]


def _one_line_doc_any_quotes(main: str) -> bool:   # a one-line docstring ending with EITHER kind of quotes, not its own:
    return _lines_then_rule(main, opens_and_closes=lambda s: s.endswith(('"' * 3, "'" * 3)) and len(s) > 3)


def _one_line_doc_needs_text(main: str) -> bool:   # `len(s) > 6`: the empty docstring `""""""` read as opening one
    return _lines_then_rule(main, opens_and_closes=lambda s: len(s) > 6 and s.endswith(s[:3]))


MISTAKES["04.thin_wrapper"] += [_one_line_doc_any_quotes, _one_line_doc_needs_text]


def _total_zero_first(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # `if total == 0: return (0.4 if aux_defined else 0.0) + 0.6 + 0.5` before the gates: 1.5 with no entry point too
    if total == 0:
        return (0.4 if aux_defined else 0.0) + 0.6 + 0.5
    return _coding_reward_again(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)


def _total_zero_first_main(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the same guard with the entry-point gate, `+ (1.1 if main_defined else 0)`: 1.5 for a program that does not parse
    if total == 0:
        return (0.4 if aux_defined else 0.0) + (1.1 if main_defined else 0.0)
    return _coding_reward_again(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)


def _thin_wrapper_no_test_penalised(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux,
                                    thin_wrapper):
    # `-0.5` for a thin wrapper that passes no test (the bonus withheld AND a penalty)
    r = _coding_reward_again(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    return r - 0.5 if main_defined and parses and thin_wrapper and passed == 0 else r


def _thin_wrapper_before_call(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # `if thin_wrapper: +0.5 elif calls_aux: +1.5`: a thin wrapper that never calls aux still gets +0.5
    r = _coding_reward_again(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    return r + 0.5 if main_defined and parses and passed >= 1 and aux_found and thin_wrapper and not calls_aux else r


def _levels_averaged(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the levels reached kept in a list and AVERAGED, not summed
    levels = [0.4 if aux_defined else 0.0]
    if main_defined:
        levels.append(0.6)
        if parses:
            levels += [0.5, passed / total if total else 0.0]
            if passed >= 1 and aux_found and calls_aux:
                levels.append(0.5 if thin_wrapper else 1.5)
    return sum(levels) / len(levels)


def _reward_negated(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # `-reward`: the reward returned as a loss
    return -_coding_reward_again(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)


def _total_over_passed(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the tests level upside down: `total / passed if passed else 0.0`
    r = _coding_reward_again(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    if main_defined and parses:
        r += (total / passed if passed else 0.0) - (passed / total if total else 0.0)
    return r


def _share_sign_flipped(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # `(passed - total) / total`: the tests level's sign flipped, a penalty for the tests failed
    r = _coding_reward_again(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    if main_defined and parses and total:
        r += (passed - total) / total - passed / total
    return r


MISTAKES["04.levels"] += [_total_zero_first, _total_zero_first_main, _thin_wrapper_no_test_penalised,
                          _thin_wrapper_before_call, _levels_averaged, _reward_negated, _total_over_passed,
                          _share_sign_flipped]


def _wrapper_rule_with(main: str, name: str = r"(?<!\w)(\w+)", after_aux: str = r"\s*\(", flags: int = 0,
                       is_def=lambda s: s.startswith("def "), doc_len: int = 4, cut_comment: bool = False,
                       from_first: bool = False):
    """The reference's rule with one step changed (the mistakes below)."""
    body, in_doc = [], False
    for line in main.split("\n")[1:]:
        s = line.strip()
        if not s:
            continue
        if in_doc:
            in_doc = '"' * 3 not in s and "'" * 3 not in s
            continue
        if s.startswith(('"' * 3, "'" * 3)):
            in_doc = not (s.endswith(s[:3]) and len(s) >= doc_len)
            continue
        if s.startswith("#") or not from_first and is_def(s):
            continue
        body.append(s)
    if len(body) == 2:
        first = body[0].split("#")[0] if cut_comment else body[0]
        m = re.search(name + r"\s*=\s*aux" + after_aux, first, flags)
        return bool(m) and body[1] == f"return {m.group(1)}"
    return _rule_on_lines(body)


def _nested_def_kept(main: str) -> bool:         # `main.splitlines()[1:]`: only the first `def` line dropped
    return _wrapper_rule_with(main, from_first=True)


def _def_without_space(main: str) -> bool:       # `s.startswith("def")`: `default = aux(s)` dropped as a def line
    return _wrapper_rule_with(main, is_def=lambda s: s.startswith("def"))


def _one_character_name(main: str) -> bool:      # `(\w)`: the name read as ONE character (`s` of `res`)
    return _wrapper_rule_with(main, name=r"(\w)")


def _name_letters_only(main: str) -> bool:       # `([A-Za-z_]+)`: a name with a digit (`v1`) never matches
    return _wrapper_rule_with(main, name=r"([A-Za-z_]+)")


def _aux_word_not_call(main: str) -> bool:       # `aux\b` for `aux\s*\(`: `v = aux` (no call) read as a match
    return _wrapper_rule_with(main, after_aux=r"\b")


def _regex_ignore_case(main: str) -> bool:       # `re.I`: `v = AUX(s)` read as a call of aux
    return _wrapper_rule_with(main, flags=re.I)


def _one_line_doc_six_chars(main: str) -> bool:  # `len(s) >= 6`: `""""` (four quotes) read as opening a docstring
    return _wrapper_rule_with(main, doc_len=6)


def _regex_before_comment(main: str) -> bool:    # the regex searched in `b[0].split("#")[0]`: the comment cut off
    return _wrapper_rule_with(main, cut_comment=True)


MISTAKES["04.thin_wrapper"] += [_nested_def_kept, _def_without_space, _one_character_name, _name_letters_only,
                                _aux_word_not_call, _regex_ignore_case, _one_line_doc_six_chars, _regex_before_comment]


def _first_last_of_two_or_three(main: str) -> bool:   # `len(b) in (2, 3)`, then the first and the LAST line read:
    b = _body_lines(main)                              # `v = aux(s)` / `v = v + 1` / `return v` taken (the rule: two)
    if len(b) in (2, 3):
        m = re.search(r"(\w+)\s*=\s*aux\s*\(", b[0])
        return bool(m) and b[-1] == f"return {m.group(1)}"
    return _rule_on_lines(b)


def _first_and_last_lines(main: str) -> bool:     # the first and the last line of two OR MORE (the rule: exactly two)
    b = _body_lines(main)
    if len(b) >= 2:
        m = re.search(r"(\w+)\s*=\s*aux\s*\(", b[0])
        return bool(m) and b[-1] == f"return {m.group(1)}"
    return _rule_on_lines(b)


def _regex_equals_repeated(main: str) -> bool:    # `=+` for `=`: the comparison `v == aux(s)` read as an assignment
    b = _body_lines(main)
    if len(b) == 2:
        m = re.search(r"(\w+)\s*=+\s*aux\s*\(", b[0])
        return bool(m) and b[1] == f"return {m.group(1)}"
    return _rule_on_lines(b)


def _regex_augmented(main: str) -> bool:          # `\+?=` for `=`: `v += aux(s)` read as `v = aux(s)`
    b = _body_lines(main)
    if len(b) == 2:
        m = re.search(r"(\w+)\s*\+?=\s*aux\s*\(", b[0])
        return bool(m) and b[1] == f"return {m.group(1)}"
    return _rule_on_lines(b)


MISTAKES["04.thin_wrapper"] += [_first_last_of_two_or_three, _first_and_last_lines, _regex_equals_repeated,
                                _regex_augmented]


def _no_aux_stops_scoring(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # `if not aux_found: return 0`: a missing aux read as a gate (aux is optional: it withholds only its 0.4 and the bonus)
    if not aux_found:
        return 0
    return _coding_reward_again(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)


def _no_aux_return_stops_scoring(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # `if not aux_defined: return 0.0`: the same gate on aux_defined (an aux without a return stops scoring too)
    if not aux_defined:
        return 0.0
    return _coding_reward_again(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)


MISTAKES["04.levels"] += [_no_aux_stops_scoring, _no_aux_return_stops_scoring]


def _prefix_stripped_docstring(main: str) -> bool:   # an r/u prefix stripped before the triple-quote test: `r"""Doc."""`
    q = ('"' * 3, "'" * 3)                              # read as a docstring (the rule: only a line starting with the
    body, in_doc = [], False                            # quotes themselves is one)
    for line in main.split("\n")[1:]:
        s = line.strip()
        if not s:
            continue
        if in_doc:
            in_doc = q[0] not in s and q[1] not in s
            continue
        st = s[1:] if s[:1] in "rRuU" and s[1:4] in q else s
        if st.startswith(q):
            in_doc = not (st.endswith(st[:3]) and len(st) > 3)
            continue
        if not s.startswith(("#", "def ")):
            body.append(s)
    return _rule_on_lines(body)


def _empty_main_not_wrapper(main: str) -> bool:      # `False if not main.strip()`: an empty main refused before the rule
    return False if not main.strip() else _rule_on_lines(_body_lines(main))   # (the rule: no line left, True)


def _def_anywhere_dropped(main: str) -> bool:        # `if "def " in s: continue`: `undef = len(s)` dropped (the rule:
    return _wrapper_rule_with(main, is_def=lambda s: "def " in s)   # only a line that STARTS with `def `)


def _unclosed_docstring_kept(main: str) -> bool:     # the one-line test right (`s.endswith(q) and len(s) > 3`), but a
    rest = [x.strip() for x in main.split("\n")[1:]]   # docstring with NO closing line drops only its opening line,
    body, i = [], 0                                    # the lines after it kept (the rule: it runs to the end)
    while i < len(rest):
        s = rest[i]
        i += 1
        if not s or s.startswith(("#", "def ")):
            continue
        if s.startswith(('"' * 3, "'" * 3)):
            if not (s.endswith(s[:3]) and len(s) > 3):
                close = next((j for j in range(i, len(rest)) if '"' * 3 in rest[j] or "'" * 3 in rest[j]), None)
                if close is not None:
                    i = close + 1
            continue
        body.append(s)
    return _rule_on_lines(body)


MISTAKES["04.thin_wrapper"] += [_prefix_stripped_docstring, _empty_main_not_wrapper, _def_anywhere_dropped,
                                _unclosed_docstring_kept]


def _bonus_share_over_fifth(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the bonus gated on a share, `passed / total > 0.2` (the rule: at least ONE passed test; 1 of 7 opens it)
    reward = 0.4 if aux_defined else 0.0
    if not main_defined:
        return reward
    reward += 0.6
    if not parses:
        return reward
    reward += 0.5 + (passed / total if total else 0.0)
    if total and passed / total > 0.2 and aux_found and calls_aux:
        reward += 0.5 if thin_wrapper else 1.5
    return reward


def _bonus_share_quarter(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the same with `passed / total >= 0.25`: one test of four, but not one of seven
    reward = 0.4 if aux_defined else 0.0
    if not main_defined:
        return reward
    reward += 0.6
    if not parses:
        return reward
    reward += 0.5 + (passed / total if total else 0.0)
    if total and passed / total >= 0.25 and aux_found and calls_aux:
        reward += 0.5 if thin_wrapper else 1.5
    return reward


def _reward_rounded_4(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the whole reward rounded to 4 decimals: 3.3333333 reads 3.3333
    return round(_coding_reward_again(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux,
                                      thin_wrapper), 4)


MISTAKES["04.levels"] += [_bonus_share_over_fifth, _bonus_share_quarter, _reward_rounded_4]


def _regex_one_space_at_most(main: str) -> bool:   # ` ?` for `\s*`: `v  =  aux(s)` (two spaces) missed
    b = _body_lines(main)
    if len(b) == 2:
        m = re.search(r"(\w+) ?= ?aux ?\(", b[0])
        return bool(m) and b[1] == f"return {m.group(1)}"
    return _rule_on_lines(b)


def _regex_spaces_not_tabs(main: str) -> bool:     # ` *` for `\s*`: spaces only, `v<TAB>= aux(s)` missed
    b = _body_lines(main)
    if len(b) == 2:
        m = re.search(r"(\w+) *= *aux *\(", b[0])
        return bool(m) and b[1] == f"return {m.group(1)}"
    return _rule_on_lines(b)


MISTAKES["04.thin_wrapper"] += [_regex_one_space_at_most, _regex_spaces_not_tabs]


def _bonus_share_tenth(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the bonus gated on a low share, `passed / total >= 0.1` (1 of 7 opens it, 1 of 12 does not; the rule: ONE test)
    reward = 0.4 if aux_defined else 0.0
    if not main_defined:
        return reward
    reward += 0.6
    if not parses:
        return reward
    reward += 0.5 + (passed / total if total else 0.0)
    if total and passed / total >= 0.1 and aux_found and calls_aux:
        reward += 0.5 if thin_wrapper else 1.5
    return reward


def _bonus_share_over_014(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the same with `passed / total > 0.14`, just under the 1 of 7 (0.143) of the 7-assert test
    reward = 0.4 if aux_defined else 0.0
    if not main_defined:
        return reward
    reward += 0.6
    if not parses:
        return reward
    reward += 0.5 + (passed / total if total else 0.0)
    if total and passed / total > 0.14 and aux_found and calls_aux:
        reward += 0.5 if thin_wrapper else 1.5
    return reward


def _minus_half_when_not_calling(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # the table's -0.5 read loosely: subtracted from every main that passes a test but does not call aux, an aux found
    # or not (the exercise leaves the penalty out: a main that does not call aux earns no bonus, and loses nothing)
    reward = 0.4 if aux_defined else 0.0
    if not main_defined:
        return reward
    reward += 0.6
    if not parses:
        return reward
    reward += 0.5
    if total == 0:
        return reward
    reward += passed / total
    if passed >= 1 and aux_found and calls_aux:
        reward += 0.5 if thin_wrapper else 1.5
    elif passed >= 1 and not calls_aux:
        reward -= 0.5
    return reward


def _minus_half_when_caller_fails(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # -0.5 for a main that calls aux (not a thin wrapper) but passes no test (the rule: no bonus, nothing taken away)
    reward = 0.4 if aux_defined else 0.0
    if not main_defined:
        return reward
    reward += 0.6
    if not parses:
        return reward
    reward += 0.5
    if total == 0:
        return reward
    reward += passed / total
    if passed >= 1 and aux_found and calls_aux:
        reward += 0.5 if thin_wrapper else 1.5
    elif calls_aux and passed == 0 and not thin_wrapper:
        reward -= 0.5
    return reward


def _bonus_gate_passed_zero(aux_found, aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # `passed >= 0` as the bonus gate (always true), behind a right early return at total = 0
    reward = 0.4 if aux_defined else 0.0
    if not main_defined:
        return reward
    reward += 0.6
    if not parses:
        return reward
    reward += 0.5
    if total == 0:
        return reward
    reward += passed / total
    if passed >= 0 and aux_found and calls_aux:
        reward += 0.5 if thin_wrapper else 1.5
    return reward


MISTAKES["04.levels"] += [_bonus_share_tenth, _bonus_share_over_014, _minus_half_when_not_calling,
                          _minus_half_when_caller_fails, _bonus_gate_passed_zero]


def _regex_non_space_name(main: str) -> bool:     # `(\S+)` for `(\w+)`: `self.v = aux(s)` / `return self.v` taken (the
    return _wrapper_rule_with(main, name=r"(\S+)")  # rule: v is a plain name, no dotted or subscripted target)


MISTAKES["04.thin_wrapper"] += [_regex_non_space_name]
