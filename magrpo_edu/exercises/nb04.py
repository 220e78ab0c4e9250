"""Checks of notebook 04's exercises (coding collaboration): the thin-wrapper rule and the coding levels."""
from __future__ import annotations

import numbers

from . import ExerciseFailed, call_answer, exercise, is_bool, not_a_wrapper, not_the_library


def rule_lines(main: str) -> list:
    """The lines of an entry point's body that the thin-wrapper rule reads, each stripped: no blank lines, whole-line
    comments, docstrings or `def ` lines (nested ones too). Given to the learner in exercise 2 (its docstring edge cases
    are optional reading); written apart from the library's `reading._body_lines`, which the check refuses as a
    shortcut to the whole rule."""
    body, in_doc = [], False
    for line in main.split("\n")[1:]:
        s = line.strip()
        if not s:
            continue
        if in_doc:                       # the first line that CONTAINS triple quotes closes the docstring
            in_doc = '"' * 3 not in s and "'" * 3 not in s
            continue
        if s.startswith(('"' * 3, "'" * 3)):   # opens one; a line with text between its quotes also closes it
            in_doc = not (s.endswith(s[:3]) and len(s) > 3)
            continue
        if not s.startswith(("#", "def ")):   # a nested `def` line is dropped too
            body.append(s)
    return body


# The one-line docstring with a comment after it (`"""Count."""  # doc`): it OPENS a docstring that is never closed.
_COMMENTED_DOC_CASE = 'def f(s):\n    """Count."""  # doc\n    n = len(s)\n    return aux(s)\n'
# The same line with a lone `"""` later that closes it (the rule: True). An answer that reads `"""Count."""  # doc` as
# a whole one-line docstring (`s.count(s[:3]) >= 2`) keeps `n = len(s)` and lets the lone `"""` open a docstring
# (False); one that opens a docstring there rightly but keeps the lines after a docstring never closed says True.
_COMMENTED_DOC_CLOSED = 'def f(s):\n    """Count."""  # doc\n    n = len(s)\n    """\n    return aux(s)\n'

# Entry points named `f`; each teaches one corner of the authors' rule (docs/faithfulness.md, "Rewards").
WRAPPER_CASES = [
    ("def f(xs):\n    return aux(xs)\n", "one `return` line that calls aux"),
    ("def f(xs):\n    y = aux(xs)\n    return y\n", "`v = aux(...)` then `return v`"),
    ("def f(xs):\n    return [aux(x) for x in xs]\n", "one `return` line that mentions aux, doing real work"),
    ("def f(s):\n    return sum(1 for c in s if aux(c))\n", "one `return` line that mentions aux, doing real work"),
    ("def f(xs):\n    out = [aux(x) for x in xs]\n    return out\n",
     "two lines, but the first does not contain `v = aux(` (`out = [aux(` assigns a list)"),
    ('def f(xs):\n    """Double each number."""\n    # the helper does it\n    return aux(xs)\n',
     "docstrings and comments are dropped before the rule looks"),
    ("def f(xs):\n    n = 0\n    for x in xs:\n        if aux(x):\n            n += 1\n    return n\n", "a loop around aux"),
    ("def f(xs):\n    return len(xs)\n", "one `return` line that does not mention aux"),
    ("def f(s):\n    words = aux(s)\n    return len(words)\n", "aux's result used in a further statement"),
    ('def f(xs):\n    """Double each number.\n\n    The helper does all of it.\n    """\n    return aux(xs)\n',
     "a docstring over several lines is dropped whole, its middle lines too"),
    ("def f(xs):\n    y = aux(xs)\n    return xs\n", "`v = aux(...)`, but the next line does not return v"),
    ("def f(xs):\n    y = aux(xs)\n    return y + 1\n", "`v = aux(...)`, then a return that does more than return v"),
    ("def f(xs):\n    return aux(xs)  # all of it\n", "one `return` line that calls aux, with a comment after it"),
    ('def f(s):\n    """Only a docstring."""\n', "an empty body (a docstring only): the authors' rule counts it as a wrapper"),
    ("def f(s):\n    return sum(map(aux, s))\n", "one `return` line that MENTIONS aux without calling it there"),
    ("def f(s):\n    print(aux(s))\n", "one line that mentions aux but is not a `return`"),
    ("def f(s):\n    v = aux(s) + 1\n    return v\n",
     "the first line only has to CONTAIN `v = aux(` (the authors' regex); what follows on it is not read"),
    ("def f(s):\n    n = 0; v = aux(s)\n    return v\n",
     "`n = 0; v = aux(s)` is ONE line: the rule reads the body's lines of TEXT, not its statements (a `;` does not "
     "split a line), and the regex is searched anywhere in that line, so two lines, the first containing `v = aux(`"),
    ("def f(s):\n    v = aux(s)\n    return v  # done\n",
     "a comment AFTER code stays part of the line: `return v  # done` is not the line `return v`"),
    ("def f(s):\n    return auxiliary(s)\n", "one `return` line that CONTAINS the letters aux (a substring test, as the authors')"),
    ("def f(s):\n    v=aux(s)\n    return v\n", "`v=aux(` without spaces: the authors' regex allows any whitespace, none included"),
    ("def f(s):\n    return(aux(s))\n", "`return(` with no space: the one-line rule asks for a line starting with `return ` (a space)"),
    ("def f(s):\n    v = aux (s)\n    return v\n", "`aux (` with a space before the bracket: the regex allows whitespace there too"),
    ("def f(s):\n    pass\n", "a body of `pass`: one line that is not a `return`, so not a wrapper (only an EMPTY body is)"),
    ("def f(s):\n    return len(s)  # aux unused\n",
     "one `return` line whose trailing comment mentions aux: the substring test reads the whole line, comment included"),
    ('def f(xs):\n    """Count the items aux accepts.\n\n    Loops over xs.\n    """\n    n = 0\n    for x in xs:\n'
     '        if aux(x):\n            n += 1\n    return n\n',
     "a multi-line docstring, then a real loop: the docstring is dropped and the loop read (the library's reading; "
     "the authors' loop would skip everything after a lone closing quote line, as docs/faithfulness.md says in "
     "\"Rewards\", the thin-wrapper row)"),
    ("def f(s):\n    v = aux(s)\n    return (v)\n", "`return (v)` is not exactly `return v`: the second line must be that text"),
    ("def f(s):\n    s = s.strip()\n    v = aux(s)\n    return v\n",
     "THREE lines: the two-line rule needs exactly two lines, not the last two of more"),
    ("def f(s):\n    s = s.strip()\n    n = len(s)\n    return aux(s)\n",
     "THREE lines, the last `return aux(s)`: the one-line rule needs exactly ONE line, not a last line of several; a "
     "body of three or more lines is never a thin wrapper"),
    ("def f(s):\n    v = aux(s)\n    return v\n    print('never')\n",
     "THREE lines, the first two `v = aux(s)` / `return v`: the two-line rule needs EXACTLY two lines, not the first "
     "two of more (a line after the return still counts, though it never runs)"),
    ("def f(s):\n    return Aux(s)\n",
     "one `return` line with `Aux`, not `aux`: the substring test is case-sensitive, as the authors' (`\"aux\" in line`, "
     "no lower-casing)"),
    ("def f(xs):\n    '''Double each number.\n\n    The helper does it.\n    '''\n    y = aux(xs)\n    return y\n",
     "a docstring in single quotes (three of them) is dropped too"),
    ('def f(xs):\n    "Double each number."\n    return aux(xs)\n',
     "a docstring in ONE pair of quotes is not dropped: only TRIPLE-quoted docstrings are, so the body is two lines, "
     "the first not `v = aux(`"),
    ('def f(s):\n    x = """a"""\n    return aux(s)\n',
     "a line of CODE that contains triple quotes (`x = \"\"\"a\"\"\"`) is not a docstring: only a line that starts "
     "with them is one, so the body is two lines"),
    ("def f(s):\n    a = aux(s); b = aux(s)\n    return b\n",
     "`v` is the name of the FIRST match of `\\w+\\s*=\\s*aux\\s*\\(` on the line (here `a`), so `return b` is not "
     "`return v`"),
    ("def f(s):\n    n = len(s)  # count\n    return aux(s)\n",
     "a comment is only what follows a # on a code line: `n = len(s)  # count` is a line of CODE with a comment after "
     "it, not a comment line, so it stays, and the body is two lines, the first without `v = aux(`; only a line that "
     "STARTS with # is dropped"),
    ("def f(s):\n    v = aux(s)\n    return  v\n",
     "`return  v` with two spaces: whitespace INSIDE the return line counts (only the line's two ends are "
     "stripped), so the second line is not exactly `return v`"),
    ("def f(s):\n    v = auxiliary(s)\n    return v\n",
     "`v = auxiliary(s)` is no match of `\\w+\\s*=\\s*aux\\s*\\(`: after `aux` only whitespace may come before "
     "`(`, so the call must be to aux itself, not to a name that starts with aux (the ONE-line rule's substring "
     "test is another rule)"),
    ('def f(xs):\n    """\n    Double each number.\n    """\n    return aux(xs)\n',
     "a docstring whose opening `\"\"\"` stands ALONE on its line: a lone `\"\"\"` OPENS a docstring, it does not "
     "close one on the same line (it starts and ends with three quotes, but they are the same three: a line that is "
     "only the three quotes opens a docstring, so test `len(s) > 3` too; `\"\"\"\"\"\"`, six quotes, is a whole "
     "one-line docstring), so `Double each number.` is docstring, "
     "dropped up to the closing `\"\"\"`, and the body is the one line `return aux(xs)`"),
    ('def f(xs):\n    """Double each\n    number."""\n    return len(xs)\n',
     "a docstring that closes at the END of a text line (`number.\"\"\"`), not on a line of its own: the docstring "
     "ends on the first line that has the closing triple quotes, whatever stands before them, so `return len(xs)` "
     "after it is code: one `return` line without aux"),
    ('def f(s):\n    v = aux(s)\n    """the helper did it"""\n    return v\n',
     "a triple-quoted line AFTER code: the rule drops EVERY line that starts with triple quotes, wherever it stands "
     "in the body, not only a first statement (Python's own docstring); the notebook's \"triple-quoted docstrings\" "
     "are all such lines, so the body is the two lines `v = aux(s)` / `return v`"),
    ("def f(s):\n    v = aux(s)\n    return v   \n",
     "`return v` with spaces AFTER it: each line is stripped at BOTH ends (`.strip()`, not `.lstrip()`), so the "
     "second line is exactly `return v`"),
    ("def f(s):\n    return\taux(s)\n",
     "`return` followed by a TAB, not a space: the one-line rule asks for a line that starts with the text `return ` "
     "(`return` and one SPACE character), so a tab after it is no match; test `line.startswith(\"return \")`, not "
     "whether the first word (`line.split()[0]`) is `return`"),
    ('def f(s):\n    """doc\n    more"""  # note\n    return len(s)\n',
     "a docstring whose closing quotes have a comment AFTER them (`more\"\"\"  # note`): inside a docstring, the "
     "first line that CONTAINS triple quotes closes it, wherever they stand on it, not only a line that ENDS with "
     "them; so `return len(s)` after it is code: one `return` line without aux"),
    ("def f(s):\n    v = aux(s)\n    return v;\n",
     "`return v;` with a semicolon: the second line must be exactly the text `return v`; the `;` (which Python "
     "ignores) makes it another text, so do not strip it (`.rstrip(';')`): compare the stripped line as it is"),
    (_COMMENTED_DOC_CASE,
     "a one-line docstring with a comment after it (`\"\"\"Count.\"\"\"  # doc`): a line is a whole one-line "
     "docstring only if it ENDS with its quotes (holding two triple quotes is not enough: test "
     "`s.endswith(s[:3]) and len(s) > 3`, not `s.count(s[:3]) >= 2`); this one does not end with them, so it OPENS a "
     "docstring that runs through the next line holding triple quotes (none here) and swallows the rest of the body: "
     "no line is left, a thin wrapper (the authors' reading)"),
    ("def f(s):\n    v = aux(s); return v\n",
     "ONE line that holds two statements: the rule reads lines of TEXT, not statements, so this is one line that does "
     "not start with `return `: not a thin wrapper"),
    ('def f(s):\n    """Doc\n    uses \'\'\' here\n    more\n    """\n    return aux(s)\n',
     "a docstring ends at the next line holding triple quotes of EITHER kind, not only the kind that opened it: "
     "`uses \'\'\' here` closes the `\"\"\"` docstring (test `'\"\"\"' in s or \"\'\'\'\" in s`, not `q in s` for the opening "
     "q), so `more` is code and the lone `\"\"\"` after it opens a new docstring that swallows `return aux(s)`: one "
     "line, `more`, not a `return`: not a thin wrapper"),
    ('def f(s):\n    \'\'\'Count."""\n    n = len(s)\n    return aux(s)\n',
     "a line that opens with `\'\'\'` and ends with `\"\"\"`: a one-line docstring must END with ITS OWN quotes, the "
     "kind that opened it (test `s.endswith(s[:3])`, not `s.endswith('\"\"\"') or s.endswith(\"\'\'\'\")`); this one "
     "does not, so it OPENS a docstring that runs through the next line holding triple quotes (none here) and "
     "swallows the rest of the body: no line is left, a thin wrapper (the authors' reading)"),
    ('def f(s):\n    """"""\n    n = len(s)\n    return aux(s)\n',
     "`\"\"\"\"\"\"`, six quotes, is a whole one-line docstring (an empty one): it starts and ends with three quotes and "
     "is longer than three (test `len(s) > 3`, not `len(s) > 6`: only a line that is just the three quotes opens a "
     "docstring), so it drops only itself and the body is two lines, the first not `v = aux(`: not a thin wrapper"),
    ("def f(s):\n    def g(c):\n        return aux(c)\n",
     "a NESTED `def` line is dropped too: every line that starts with `def ` goes, not only the first (skipping the "
     "first line, `main.splitlines()[1:]`, keeps `def g(c):`), so the body is the one line `return aux(c)`: a thin "
     "wrapper"),
    ("def f(s):\n    res = aux(s)\n    return res\n",
     "`v` is the whole NAME before `= aux(`, `(\\w+)`, one or more word characters: with `(\\w)` the match is `s` of "
     "`res`, and `return res` is not `return s`; here the name is `res`, so this is a thin wrapper"),
    ("def f(s):\n    v1 = aux(s)\n    return v1\n",
     "a name with a DIGIT, `v1`: `\\w` matches letters, digits and `_` (`(\\w+)`, not `([A-Za-z_]+)`, which "
     "finds no name at all before `= aux(` here), so the name is `v1` and `return v1` makes a thin wrapper"),
    ("def f(s):\n    default = aux(s)\n    return default\n",
     "`default = aux(s)` is code, not a `def` line: drop a line that starts with `def ` WITH its space "
     "(`s.startswith(\"def \")`, not `s.startswith(\"def\")`, which also drops `default = ...`), so the body is "
     "`default = aux(s)` / `return default`: a thin wrapper"),
    ("def f(s):\n    v = aux\n    return v\n",
     "`v = aux` with no bracket: the regex ends with `aux\\s*\\(`, a CALL of aux (`\\b` after aux is not enough), so "
     "`v = aux` is no match and two lines without it are not a thin wrapper"),
    ("def f(s):\n    v = AUX(s)\n    return v\n",
     "`v = AUX(s)`: the regex is case-sensitive, as the authors' (no `re.I`), so `AUX(` is no call of aux and this is "
     "not a thin wrapper"),
    ('def f(s):\n    """"\n    n = len(s)\n    return aux(s)\n',
     "`\"\"\"\"`, four quotes, is a whole one-line docstring by the rule: it starts and ends with three quotes and is "
     "longer than three (`len(s) > 3`, not `len(s) >= 6`: the rule reads the text, not what Python would make of it), "
     "so it drops only itself and the body is two lines, the first not `v = aux(`: not a thin wrapper"),
    ("def f(s):\n    n = 0  # v = aux(s)\n    return v\n",
     "the regex is searched in the WHOLE first line, its comment included (the authors' reading: a comment after code "
     "stays part of the line; do not cut it at `#`), so `n = 0  # v = aux(s)` holds the match `v`, and "
     "`return v` makes a thin wrapper"),
    ("def f(s):\n    v = aux(s)\n    v = v + 1\n    return v\n",
     "THREE lines, the first `v = aux(s)` and the last `return v`: the two-line rule needs EXACTLY two lines, the "
     "`return v` right after `v = aux(`; a line between them (here one that changes v) makes three lines, and a body of "
     "three or more lines is never a thin wrapper: test `len(lines) == 2`, and read the first and the SECOND line, not "
     "the first and the last"),
    ("def f(s):\n    v == aux(s)\n    return v\n",
     "`v == aux(s)` is a COMPARISON, not an assignment: the regex `\\w+\\s*=\\s*aux\\s*\\(` has exactly ONE `=`, with "
     "only whitespace around it (`\\s*=\\s*`, not `\\s*=+\\s*`), so `==` is no match and this is not a thin wrapper"),
    ("def f(s):\n    v += aux(s)\n    return v\n",
     "`v += aux(s)` is an augmented assignment, no match of `\\w+\\s*=\\s*aux\\s*\\(`: between the name and the `=` "
     "only whitespace may stand (`\\w+\\s*=`, not `\\w+\\s*\\+?=`), so `+=` is not `v = aux(` and this is not a thin "
     "wrapper"),
    ('def f(s):\n    r"""Doc."""\n    return aux(s)\n',
     "`r\"\"\"Doc.\"\"\"` starts with the letter r, not with triple quotes: only a line that starts with the quotes "
     "THEMSELVES is a docstring (`s.startswith(('\"\"\"', \"'''\"))`, no r, u, b or f prefix stripped first), so this "
     "line is code, the body is two lines, the first not `v = aux(`: not a thin wrapper"),
    ("def f(s):\n    undef = len(s)\n    return aux(s)\n",
     "`undef = len(s)` CONTAINS `def ` (in `undef `) but does not START with it: only a line that starts with `def ` "
     "is dropped (`s.startswith(\"def \")`, not `\"def \" in s`), so the body is two lines, the first not "
     "`v = aux(`: not a thin wrapper"),
    ("",
     "an EMPTY main, the text `''`: no line is left, so it is a thin wrapper by the rule's first case (NO line), as "
     "a body of only a docstring is; do not answer False for an empty or blank text before applying the rule"),
    ("def f(s):\n    v  =  aux(s)\n    return v\n",
     "`v  =  aux(s)`, TWO spaces on each side of `=`: `\\s*` allows ANY amount of whitespace (none, one or many), not "
     "at most one space (` ?`), so the first line holds the match `v` and `return v` makes a thin wrapper"),
    ("def f(s):\n    v\t= aux(s)\n    return v\n",
     "`v<TAB>= aux(s)`, a TAB between `v` and `=`: `\\s*` allows any WHITESPACE, tabs too, not only spaces (` *`), "
     "so the first line holds the match `v` and `return v` makes a thin wrapper"),
    ("def f(s):\n    self.v = aux(s)\n    return self.v\n",
     "`self.v = aux(s)` assigns to an ATTRIBUTE: the name in `(\\w+)\\s*=\\s*aux\\s*\\(` is `\\w+`, a plain name "
     "(letters, digits, `_`; no dot), so the match is `v`, after the dot, and `return self.v` is not `return v`, so not "
     "a thin wrapper; v is a plain name, `(\\w+)`, not any run of non-spaces, `(\\S+)`, which would take `self.v` whole"),
    ("def f(s):\n    d['k'] = aux(s)\n    return d['k']\n",
     "`d['k'] = aux(s)` assigns to a SUBSCRIPT: the name in `(\\w+)\\s*=\\s*aux\\s*\\(` is `\\w+`, a plain name "
     "(letters, digits, `_`), and `]` is none of them: the line holds no match at all, so not a thin wrapper; v is a "
     "plain name, `(\\w+)`, not any run of non-spaces, `(\\S+)`, which would take `d['k']` whole"),
]

# An answer that calls this ONE line a thin wrapper reads statements (an ast reading, a split at `;`), not lines...
_STATEMENTS_PROBE = "def f(s):\n    v = aux(s); return v\n"
# ...unless a simpler slip says True for it too: a reading of lines OR statements calls each of these False (one line
# that mentions aux without starting with `return `; one line holding two statements, the first not `v = aux(`), so an
# answer that calls one of them a thin wrapper says True to the probe for another reason (any one line with aux, a
# `return ` found anywhere in the line, a function that says True to everything).
_STATEMENTS_CONTROLS = ("def f(s):\n    print(aux(s))\n", "def f(s):\n    print(s); return aux(s)\n")


def _wrapper_truth() -> list[bool]:
    from ..tasks.coding.reading import is_thin_wrapper

    return [is_thin_wrapper(src, "f") for src, _ in WRAPPER_CASES]


def _reads_statements(fn) -> str:
    """The sentence for an answer that reads the body's statements (an ast reading, a split at `;`), not its lines:
    it calls the one line `v = aux(s); return v` a thin wrapper; "" for any other answer."""
    try:
        says = fn(_STATEMENTS_PROBE)
    except Exception:  # noqa: BLE001 - no evidence either way
        return ""
    if not (is_bool(says) and bool(says)):
        return ""
    for control in _STATEMENTS_CONTROLS:   # a simpler cause explains the True: no statement reading shown
        try:
            control_says = fn(control)
        except Exception:  # noqa: BLE001 - no evidence either way
            return ""
        if not (is_bool(control_says) and not control_says):
            return ""
    return ("Your function reads STATEMENTS, not lines (an ast reading, or a split at `;`): it calls the one line "
            "`v = aux(s); return v` a thin wrapper; the rule reads lines of TEXT (a `;` does not split a line, and a "
            "comment after code stays part of its line). ")


def _reads_unstripped(fn, src: str, want: bool) -> str:
    """The sentence for an answer that judges this main wrongly but its lines stripped (every line's indentation and
    trailing spaces removed) rightly: it does not strip each line; "" for any other answer."""
    flat = "\n".join(line.strip() for line in src.split("\n"))
    if flat == src:
        return ""
    try:
        says = fn(flat)
    except Exception:  # noqa: BLE001 - no evidence either way
        return ""
    if not (is_bool(says) and bool(says) is want):
        return ""
    return ("Your function gets this main right once its indentation and trailing spaces are removed: did you strip "
            "each line, at both ends (`line.strip()`: `    return aux(xs)` is the line `return aux(xs)`)? ")


_UNCLOSED_KEPT = ("Your function reads `\"\"\"Count.\"\"\"  # doc` rightly as OPENING a docstring (the line does not end "
                  "with its quotes: your one-line test is right), and drops the docstring when a later line closes it; "
                  "but here NO later line holds triple quotes, and you keep the lines after it: a docstring never "
                  "closed runs to the END of the body, so every line after its opening line is dropped (stay inside "
                  "it until a line holding triple quotes comes, or the lines run out). ")


def _unclosed_docstring_kept(fn) -> bool:
    """Does the answer read `\"\"\"Count.\"\"\"  # doc` as OPENING a docstring (True for `_COMMENTED_DOC_CLOSED`, as the
    rule), so that its slip on `_COMMENTED_DOC_CASE` is the lines kept after a docstring never closed, not the
    one-line docstring test (`s.count(s[:3]) >= 2`)?"""
    try:
        says = fn(_COMMENTED_DOC_CLOSED)
    except Exception:  # noqa: BLE001 - no evidence either way
        return False
    return is_bool(says) and bool(says)


# The authors' rule, said once in a refusal of 04.thin_wrapper: its three cases, on the lines `rule_lines` gives.
_RULE = ("The rule, on the lines `rule_lines(main)` gives: a thin wrapper is NO line; ONE line that starts with "
         "`return ` and contains `aux`; or exactly TWO lines, the first containing a match of "
         "`\\w+\\s*=\\s*aux\\s*\\(` (its name v, the first match, `re.search`), the second exactly `return v`. "
         "Nothing else is.")
# How `rule_lines` reads docstrings: added to a refusal only for a main that holds triple quotes.
_RULE_DOCSTRINGS = (" Docstrings (`rule_lines` drops them): a line that starts with triple quotes is a whole docstring "
                    "if it also ENDS with the SAME three quotes and is longer than them (`\"\"\"\"\"\"` is one); else "
                    "the docstring runs through the next line holding triple quotes of EITHER kind (to the end of the "
                    "body if none does).")


def _rule_for(src: str) -> str:
    """The rule's text for a refusal on this main: its three cases, and how docstrings are read where it has one."""
    return _RULE + (_RULE_DOCSTRINGS if '"' * 3 in src or "'" * 3 in src else "")


@exercise("04.thin_wrapper")
def check_thin_wrapper(fn) -> None:
    """`fn(main_source) -> bool` must agree with the library's `is_thin_wrapper` on every case."""
    if not callable(fn):
        raise ExerciseFailed("give a function thin_wrapper(main: str) -> bool")
    from ..tasks.coding.reading import _body_lines, is_thin_wrapper

    not_the_library(fn, "thin_wrapper", is_thin_wrapper)
    # a wrapper (`lambda main: is_thin_wrapper(main, "f")`, or the library's line reading under an own rule) passes by
    # construction
    not_a_wrapper(fn, (WRAPPER_CASES[0][0],), "thin_wrapper", is_thin_wrapper, _body_lines,
                  how="from the rule in the text (drop blank lines, whole-line comments and triple-quoted docstrings; "
                      "then NO line, ONE `return ` line that contains aux, or `v = aux(` then `return v`)")
    for (src, why), want in zip(WRAPPER_CASES, _wrapper_truth()):
        got = call_answer(fn, src, said=lambda exc, src=src, why=why: (
            f"thin_wrapper raised {type(exc).__name__}: {exc} for this main ({why}):\n{src}"
            "It takes the main's source text and returns True or False."))
        if not is_bool(got):
            raise ExerciseFailed(f"return True or False (a bool), not {got!r}, for this main:\n{src}")
        if bool(got) is not want:
            if src == _COMMENTED_DOC_CASE and _unclosed_docstring_kept(fn):   # its slip is not the one-line test
                raise ExerciseFailed(f"thin_wrapper says {got!r} for this main; the rule (the library's reading of the "
                                     f"authors' code) says {want}:\n{src}" + _UNCLOSED_KEPT + _rule_for(src))
            raise ExerciseFailed(f"thin_wrapper says {got!r} for this main ({why}); the rule (the library's reading of the "
                                 f"authors' code) says {want}:\n{src}"
                                 + (_reads_statements(fn) or _reads_unstripped(fn, src, want)) + _rule_for(src))


# (aux, main) pairs on notebook 04's count_vowels problem: each earns a different set of levels.
LEVEL_CASES = [
    ("def aux(c):\n    return c.lower() in 'aeiou'\n", "def count_vowels(s):\n    n = 0\n    for c in s:\n        if aux(c):\n            n += 1\n    return n\n"),
    ("def aux(c):\n    return c.lower() in 'aeiou'\n", "def count_vowels(s):\n    return sum(1 for c in s if aux(c))\n"),
    # a main that does not call aux and passes 2 of the 4 tests (half the share: 0.5 of L3, no bonus)
    ("def aux(c):\n    return c.lower() in 'aeiou'\n", "def count_vowels(s):\n    return s.count('a') + s.count('e')\n"),
    ("", "def count_vowels(s):\n    n = 0\n    for c in s:\n        if c in 'aeiouAEIOU':\n            n += 1\n    return n\n"),
    ("def aux(c):\n    return c.lower() in 'aeiou'\n", "def count_vowel(s):\n    return 0\n"),
    ("def aux(c):\n    return c.lower() in 'aeiou'\n", "def count_vowels(s):\n    n = 0\n    for c in s\n        n += aux(c)\n    return n\n"),
    ("def aux(c):\n    return c == 'a'\n", "def count_vowels(s):\n    hits = [c for c in s if aux(c)]\n    return len(hits) * 0\n"),
    ("def aux(c):\n    return c.lower() in 'aeiou'\n", "def count_vowels(s):\n    hits = [c for c in s if aux(c)]\n    return -1 - len(hits)\n"),
    # no aux at all, a main that calls it: every call fails, but the empty-input test passes, and no bonus is paid
    ("def helper(c):\n    return c in 'aeiou'\n", "def count_vowels(s):\n    n = 0\n    for c in s:\n        if aux(c):\n            n += 1\n    return n\n"),
    # aux found but without a return: no 0.4, yet the bonus is paid (it needs an extracted aux, not its return)
    ("def aux(c):\n    print(c)\n", "def count_vowels(s):\n    n = 0\n    for c in s:\n        if aux(c) is None and c.lower() in 'aeiou':\n            n += 1\n    return n\n"),
    # aux misses the capitals: 3 of the 4 tests pass (more than half, not all), with the full bonus
    ("def aux(c):\n    return c in 'aeiou'\n", "def count_vowels(s):\n    n = 0\n    for c in s:\n        if aux(c):\n            n += 1\n    return n\n"),
    # aux_defined False at each gate (no aux; an aux without a return): what stands there is 0.0, not aux's 0.4, so
    # an answer that returns a fixed 0.4 (no entry point) or 1.0 (no parse) is caught
    ("", "def count_vowel(s):\n    return 0\n"),
    ("def aux(c):\n    print(c)\n", "def count_vowel(s):\n    return 0\n"),
    ("", "def count_vowels(s):\n    n = 0\n    for c in s\n        n += 1\n    return n\n"),
    # a thin wrapper that passes no test: no bonus, and nothing taken away (no -0.5)
    ("def aux(s):\n    return -1\n", "def count_vowels(s):\n    return aux(s)\n"),
    # a thin wrapper by the one-line rule that never CALLS aux (`map(aux, s)`: calls_aux False): no bonus, not +0.5
    ("def aux(c):\n    return c.lower() in 'aeiou'\n", "def count_vowels(s):\n    return sum(map(aux, s))\n"),
]


def _test_of(*asserts) -> str:
    """A `check(candidate)` test with one `assert candidate(text) == n` per (text, n)."""
    return "def check(candidate):\n" + "".join(f"    assert candidate({t!r}) == {n}\n" for t, n in asserts)


# (test, aux, main): count_vowels with a test of 3, 5, 7 and 12 asserts, made for the check (every stored problem has 4),
# so that the tests level is read as passed / total for the problem's own total, not as passed / 4.
OTHER_TOTALS = [
    # aux counts only 'a': 1 of 3 passes (the empty text), with the full bonus
    (_test_of(("hello", 2), ("AEIOU xyz", 5), ("", 0)), "def aux(c):\n    return c == 'a'\n",
     "def count_vowels(s):\n    n = 0\n    for c in s:\n        if aux(c):\n            n += 1\n    return n\n"),
    # a main that does not call aux: 3 of 5 pass, no bonus
    (_test_of(("banana", 3), ("", 0), ("tree", 2), ("hello", 2), ("AEIOU xyz", 5)),
     "def aux(c):\n    return c.lower() in 'aeiou'\n",
     "def count_vowels(s):\n    return s.count('a') + s.count('e')\n"),
    # a thin wrapper of an aux that counts only 'a': 2 of 7 pass, the +0.5 only
    (_test_of(("hello", 2), ("AEIOU xyz", 5), ("", 0), ("banana", 3), ("queue", 4), ("idea", 3), ("moon", 2)),
     "def aux(c):\n    return c == 'a'\n", "def count_vowels(s):\n    return sum(1 for c in s if aux(c))\n"),
    # aux counts only 'a': 1 of 7 passes (the empty text), a share of 0.14, with the full bonus: ONE passed test opens
    # it, so a bonus gated on a share (`passed / total > 0.2`, `>= 0.25`) is caught
    (_test_of(("hello", 2), ("AEIOU xyz", 5), ("", 0), ("tree", 2), ("queue", 4), ("idea", 3), ("moon", 2)),
     "def aux(c):\n    return c == 'a'\n",
     "def count_vowels(s):\n    n = 0\n    for c in s:\n        if aux(c):\n            n += 1\n    return n\n"),
    # the same with 12 asserts: 1 passes, a share of 0.08, with the full bonus, so that a share gate with a low cut
    # (`passed / total >= 0.1`, `> 0.14`) is caught too
    (_test_of(("hello", 2), ("AEIOU xyz", 5), ("", 0), ("tree", 2), ("queue", 4), ("idea", 3), ("moon", 2),
              ("house", 3), ("pie", 2), ("open", 2), ("unit", 2), ("echo", 2)),
     "def aux(c):\n    return c == 'a'\n",
     "def count_vowels(s):\n    n = 0\n    for c in s:\n        if aux(c):\n            n += 1\n    return n\n"),
]

# count_vowels with a test that has NO assert mentioning `candidate` (total = 0), for a pair that parses and cooperates:
# the tests level is 0 and scoring stops there (no bonus: no test passed), so the library pays 0.4 + 0.6 + 0.5 = 1.5.
NO_TESTS = ("def check(candidate):\n    assert True\n", LEVEL_CASES[0][0], LEVEL_CASES[0][1])
# the same test for a main alone (no aux: aux_defined False): 0.6 + 0.5 = 1.1, so a fixed 1.5 for total = 0 is caught
NO_TESTS_NO_AUX = (NO_TESTS[0], "", LEVEL_CASES[3][1])
# the same test where a gate stops first: no entry point (0.4, aux's alone) and a program that does not parse (1.0), so
# an answer that handles total = 0 before the gates (a fixed 1.5 or 1.1) is caught
NO_TESTS_NO_MAIN = (NO_TESTS[0], LEVEL_CASES[4][0], LEVEL_CASES[4][1])
NO_TESTS_NO_PARSE = (NO_TESTS[0], LEVEL_CASES[5][0], LEVEL_CASES[5][1])

# The facts in the order of the documented signature: the check calls the answer with them positionally (by keyword
# where its parameters carry these eight names, in any order), so a learner may name the parameters as they like.
FACT_NAMES = ("aux_found", "aux_defined", "main_defined", "parses", "passed", "total", "calls_aux", "thin_wrapper")


def _facts(aux: str, main: str, problem: dict) -> dict:
    """What a reader can see of one pair, the inputs of the learner's function."""
    from ..tasks.coding.reading import calls_aux, extract_function, has_return, is_thin_wrapper
    from ..tasks.coding.reward import combine, parse_error
    from ..sandbox import run_program
    from ..tasks.coding.data import extract_asserts

    entry = problem["entry_point"]
    aux_f, main_f = extract_function(aux, "aux"), extract_function(main, entry)
    program = combine(aux_f, main_f, problem)
    asserts = extract_asserts(problem["test"], entry)
    parses = parse_error(program) is None
    ran = run_program(program, asserts) if parses and main_f and asserts else None
    return dict(aux_found=bool(aux_f), aux_defined=bool(aux_f) and has_return(aux_f), main_defined=bool(main_f) and has_return(main_f),
                parses=parses, passed=ran.passed if ran else 0, total=len(asserts),
                calls_aux=calls_aux(main_f, entry), thin_wrapper=is_thin_wrapper(main_f, entry))


_ALL_OR_NOTHING = "the tests level pays the SHARE passed / total, not all or nothing"
_INTEGER_DIVISION = ("your tests level is 1 only when every test passed and 0 otherwise: `passed // total` is INTEGER "
                     "division (0 until every test passes; write `/`), and `1.0 if passed == total` is all or nothing "
                     "too; the tests level pays the SHARE passed / total (0.75 for 3 of 4)")
_TOTAL_ZERO_FIRST = ("with no test (total = 0) you return before the gates: a pair with no test still meets them first "
                     "(no entry point: aux's 0.4 at most; a program that does not parse: 1.0 at most); keep the gates "
                     "where they are and guard only the division, `passed / total if total else 0.0`")
_NEVER_CALLED = ("a main that never calls aux earns no bonus, but it loses nothing: no -0.5 (the table's -0.5 penalty is "
                 "left out of this exercise, it is not in the signature; it is for a main that CALLS aux and drops its "
                 "result, which none of the eight facts shows); when calls_aux is False add nothing")
_FAILED_CALLER = ("a main that calls aux but passes no test earns no bonus, and nothing is taken away: no -0.5 (the "
                  "table's -0.5 penalty is left out of this exercise, it is not in the signature; it is for a main that "
                  "drops aux's result, which none of the eight facts shows); when no test passed add nothing")


_NO_AUX_STOPS = ("with {missing} you stop scoring and return 0: aux is OPTIONAL, and a missing aux never stops "
                 "scoring; it only withholds aux's 0.4 (and, with no aux found, the bonus), while a main alone still "
                 "earns the entry point's 0.6, the syntax 0.5 and the tests share (2.1 for every test passed). The only "
                 "gates are the entry point (main_defined) and the parse; write `reward = 0.4 if aux_defined else 0.0` "
                 "and go on, with no return there")


def _slips(f: dict, want: float) -> list:
    """(the reward a likely misreading gives for the facts f, what to say about it): each a function of the facts."""
    tests_on = f["main_defined"] and f["parses"]
    ratio = f["passed"] / f["total"] if f["total"] else 0.0   # no scored assert: the tests level is 0
    share = ratio if tests_on else 0.0
    bonus = 0.5 + (0.0 if f["thin_wrapper"] else 1.0)
    paid = tests_on and f["passed"] >= 1 and f["calls_aux"]
    past_l2 = f["main_defined"]          # the no-parse slips: what scoring on past L2 would pay
    nb_paid = f["passed"] >= 1 and f["aux_found"] and f["calls_aux"]
    base = (0.4 if f["aux_defined"] else 0.0) + (0.6 if f["main_defined"] else 0.0) + (0.5 + share if tests_on else 0.0)
    return [
        (base + (bonus if paid else 0.0), "the cooperation bonus needs an EXTRACTED aux (aux_found): without a "
         "function named aux in agent 1's answer there is no bonus, even if the main calls aux"),
        (base + (bonus if paid and f["aux_defined"] else 0.0), "the bonus needs aux to be FOUND, not to have a "
         "return: an aux without a return earns no 0.4 but still opens the bonus"),
        (want - share + ((1.0 if f["passed"] == f["total"] else 0.0) if tests_on else 0.0), _ALL_OR_NOTHING),
        (want - share + (f["passed"] if tests_on else 0.0),
         "the tests level pays the share passed / total (at most 1.0), not the count"),
        (want - share / 2, "the tests level pays the whole share passed / total, up to 1.0 (all tests passed), not "
         "half of it: L3 is worth 1.0"),
        (want - (0.5 if paid and f["aux_found"] and f["thin_wrapper"] else 0.0),
         "a thin wrapper that calls aux still earns the +0.5 for calling it; only the +1.0 is withheld"),
        (want - (0.5 if paid and f["aux_found"] and not f["thin_wrapper"] else 0.0),
         "a main that calls aux and is not a thin wrapper earns 0.5 + 1.0 = 1.5 of bonus, not 1.0"),
        (want - (0.4 if f["aux_defined"] and not f["main_defined"] else 0.0),
         "aux's 0.4 is paid before the gate: a missing entry point stops the scoring AFTER it"),
        (want + (0.5 + ratio if f["main_defined"] and not f["parses"] else 0.0),
         "a program that does not parse stops at L2: no syntax points, no tests, no bonus"),
        (want + (0.5 + ratio + (bonus if nb_paid else 0.0) if past_l2 and not f["parses"] else 0.0),
         "a program that does not parse stops scoring at L2: it keeps aux's 0.4 and the entry point's 0.6, and earns no "
         "syntax 0.5, no tests share and no bonus, whatever `passed` says"),
        (want + (ratio + (bonus if nb_paid else 0.0) if past_l2 and not f["parses"] else 0.0),
         "a program that does not parse stops scoring at L2: you withhold only its syntax 0.5 and go on paying the "
         "tests share and the bonus; return right after the 0.6 when `parses` is False"),
        # None on a pair with no test (total = 0): no evidence either way (an answer with this slip may return 1.5
        # there before its bonus gate, as the reference may, or pay the bonus there too)
        (None if not f["total"] else
         want + (bonus if tests_on and f["passed"] == 0 and f["calls_aux"] and f["aux_found"] else 0.0),
         "the bonus needs at least one passed test (`passed >= 1`; `passed >= 0` is always true)"),
        (want - (bonus if paid and f["aux_found"] and f["passed"] < f["total"] else 0.0),
         "the bonus needs at least ONE passed test, not all of them"),
        (want - (bonus if paid and f["aux_found"] and f["passed"] == 1 else 0.0),
         "the bonus needs at least ONE passed test, `passed >= 1`: one passed test is enough, not `passed > 1`"),
        (want - share + (f["passed"] / 4 if tests_on else 0.0),
         "the tests level is passed / total for the problem's own number of asserts, not 4 (`passed * 0.25` or "
         "`passed / 4` is right only for a test of 4 asserts): divide by `total`"),
        (want + (1.0 if tests_on and f["passed"] >= 1 and f["aux_found"] and not f["calls_aux"]
                 and not f["thin_wrapper"] else 0.0),
         "the +1.0 for not being a thin wrapper is part of the bonus: only a main that calls aux earns it"),
        (want - (bonus if paid and f["aux_found"] and ratio < 0.5 else 0.0),
         "the bonus needs at least ONE passed test (`passed >= 1`), not half of them (`passed / total >= 0.5`)"),
        (base + (0.5 + (1.0 if f["thin_wrapper"] else 0.0) if paid and f["aux_found"] else 0.0),
         "your thin-wrapper sign is flipped: the +1.0 goes to a main that is NOT a thin wrapper (1.5 of bonus in all), "
         "a thin wrapper earns only the 0.5 for calling aux (`0.5 if thin_wrapper else 1.5`)"),
        (want + (0.4 if f["aux_found"] and not f["aux_defined"] else 0.0),
         "aux's 0.4 is paid for aux DEFINED with a `return` (aux_defined), not for aux merely found (aux_found): an "
         "aux without a return earns no 0.4 (though it still opens the bonus)"),
        (want + (1.0 if tests_on and f["total"] == 0 else 0.0),
         "with NO test (total = 0: no assert mentions `candidate`) the tests level is 0, not 1.0 (nothing passed; "
         "the library stops scoring there, no bonus), so a pair that parses earns 0.4 + 0.6 + 0.5 = 1.5 at most: "
         "`passed / total if total else 0.0`"),
        (want - share + ((1.0 - ratio) if tests_on and f["total"] else 0.0),
         "the tests level pays the share of tests PASSED, passed / total, not the share failed, (total - passed) / total"),
        (want - share + (f["passed"] / (f["total"] + 1) if tests_on else 0.0),
         "the tests level is passed / total, not passed / (total + 1): divide by total, the number of scored asserts, "
         "so that every test passed earns the full 1.0"),
        (want - (1.0 if paid and f["aux_found"] and f["thin_wrapper"] else 0.0),
         "a thin wrapper that calls aux earns +0.5 of bonus: the +1.0 for not being a thin wrapper is withheld, not "
         "subtracted (`0.5 + (0.0 if thin_wrapper else 1.0)`, not `0.5 + (-1.0 if thin_wrapper else 1.0)`)"),
        (want + ((0.5 + ratio + (bonus if nb_paid else 0.0) if f["parses"] else 0.0) if not f["main_defined"] else 0.0),
         "a missing entry point (main_defined False) STOPS scoring right after aux's 0.4: no syntax 0.5, no tests "
         "share and no bonus; return the reward as it stands when main_defined is False, before the parse test"),
        (want + (0.5 if paid and f["aux_found"] and f["thin_wrapper"] else 0.0),
         "you swapped the bonus's two parts: calling aux earns +0.5 and NOT being a thin wrapper +1.0 more, so a thin "
         "wrapper earns 0.5 (`0.5 if thin_wrapper else 1.5`), not 1.0"),
        (want + (0.5 - share / 2 if tests_on else 0.0),
         "you swapped the 0.5 and the 1.0 of L2 and L3: the syntax level pays 0.5, the tests level up to 1.0 "
         "(`0.5 + passed / total`, not `1.0 + 0.5 * passed / total`)"),
        (want - share + ((f["passed"] // f["total"] if f["total"] else 0.0) if tests_on else 0.0), _INTEGER_DIVISION),
        (want + (0.2 if f["aux_defined"] else 0.0) - (0.2 if f["main_defined"] else 0.0),
         "you swapped aux's 0.4 and the entry point's 0.6 (both L1): aux (defined, with a return) earns 0.4, the entry "
         "point 0.6 (`reward = 0.4 if aux_defined else 0.0`, then `reward += 0.6`)"),
        (want - (0.5 if tests_on and not f["calls_aux"] and f["passed"] >= 1 and f["aux_found"] else 0.0), _NEVER_CALLED),
        (want - (0.5 if tests_on and not f["calls_aux"] and f["aux_found"] else 0.0), _NEVER_CALLED),
        (want - (0.5 if tests_on and not f["calls_aux"] else 0.0), _NEVER_CALLED),
        (want - (0.5 if tests_on and not f["calls_aux"] and f["passed"] >= 1 else 0.0), _NEVER_CALLED),
        # a main that calls aux and passes no test (not a thin wrapper, or any), with or without the pairs of no test
        (want - (0.5 if tests_on and f["calls_aux"] and f["passed"] == 0 and f["total"] and not f["thin_wrapper"]
                 else 0.0), _FAILED_CALLER),
        (want - (0.5 if tests_on and f["calls_aux"] and f["passed"] == 0 and not f["thin_wrapper"] else 0.0),
         _FAILED_CALLER),
        (want - (0.5 if tests_on and f["calls_aux"] and f["passed"] == 0 and f["total"] else 0.0), _FAILED_CALLER),
        (want - (0.5 if tests_on and f["calls_aux"] and f["passed"] == 0 else 0.0), _FAILED_CALLER),
        (want - (bonus * (1.0 - ratio) if paid and f["aux_found"] else 0.0),
         "the bonus is paid in full once at least ONE test passed: 0.5 for calling aux, 1.0 more for not being a "
         "thin wrapper; it is not scaled by the share passed / total (that share is the tests level's alone)"),
        (want + (0.4 if not f["main_defined"] and not f["aux_defined"] else 0.0),
         "with no entry point (main_defined False) you return a fixed 0.4: return the reward as it stands at the "
         "gate, aux's 0.4 only where aux_defined is True (0.0 without it)"),
        (want + (0.4 if not f["main_defined"] and f["aux_found"] and not f["aux_defined"] else 0.0),
         "at the entry-point gate you pay aux's 0.4 for aux_found: it needs aux_defined (an aux with a `return`) "
         "there too; compute `reward = 0.4 if aux_defined else 0.0` once, before the gate, and return that reward"),
        (want + (0.4 if f["main_defined"] and not f["parses"] and not f["aux_defined"] else 0.0),
         "a program that does not parse gets a fixed 1.0 from you: return the reward as it stands at L2, the entry "
         "point's 0.6 plus aux's 0.4 only where aux_defined is True (0.6 without it)"),
        (want + (0.4 if tests_on and f["total"] == 0 and not f["aux_defined"] else 0.0),
         "with no test (total = 0) you return a fixed 1.5: add the levels up, 0.6 + 0.5 plus aux's 0.4 only where "
         "aux_defined is True (1.1 without it)"),
        (want / 4,
         "you divide the reward by its maximum, 4.0: return the summed points, not a share of 4 (a pair that earns "
         "every level gets 4.0, not 1.0)"),
        (want if f["total"] else (0.4 if f["aux_defined"] else 0.0) + 1.1, _TOTAL_ZERO_FIRST),
        (want if f["total"] else (0.4 if f["aux_defined"] else 0.0) + (1.1 if f["main_defined"] else 0.0),
         _TOTAL_ZERO_FIRST),
        (want - (0.5 if tests_on and f["thin_wrapper"] and f["passed"] == 0 else 0.0),
         "a thin wrapper that passes no test earns no bonus, but loses nothing: no -0.5 (the table's -0.5 is for a main "
         "that calls aux and drops its result, a case none of the eight facts shows); add nothing when no test passed"),
        (want + (0.5 if tests_on and f["passed"] >= 1 and f["aux_found"] and f["thin_wrapper"] and not f["calls_aux"]
                 else 0.0),
         "the bonus's +0.5 is for CALLING aux: a thin wrapper that never calls it (calls_aux False, e.g. `return "
         "sum(map(aux, s))` mentions aux without `aux(`) earns no bonus at all; test calls_aux before thin_wrapper"),
        (want - share + ((f["total"] / f["passed"] if f["passed"] else 0.0) if tests_on else 0.0),
         "your tests level is total / passed, upside down: the share of tests passed is passed / total (0.75 for 3 of "
         "4), never above 1.0"),
        (want - share + ((f["passed"] - f["total"]) / f["total"] if tests_on and f["total"] else 0.0),
         "your tests level is (passed - total) / total, its sign flipped into a penalty for the tests failed: it pays "
         "the share PASSED, passed / total, from 0.0 (none) to 1.0 (all), never below 0"),
        (want if f["aux_found"] else 0.0, _NO_AUX_STOPS.format(missing="no aux at all (aux_found False)")),
        (want if f["aux_defined"] else 0.0,
         _NO_AUX_STOPS.format(missing="no aux defined with a `return` (aux_defined False)")),
    ]


def _as_number(got):
    if isinstance(got, numbers.Real) and not isinstance(got, bool):
        return float(got)          # a numpy or Fraction number is a number too
    return got


def _is_right(got, want: float) -> bool:
    return not isinstance(got, bool) and isinstance(got, (int, float)) and abs(got - want) <= 1e-6


def _by_keyword(fn) -> bool:
    """Call the answer with the facts by keyword? Yes where its parameters carry the eight names (in any order) or
    it takes **kwargs only; else positionally, in the documented order (`FACT_NAMES`), whatever it names them."""
    import inspect

    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):   # no signature to read (a builtin, a C callable): the documented order
        return False
    named = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    kinds = {p.kind for p in params}
    return set(FACT_NAMES) <= named or (inspect.Parameter.VAR_KEYWORD in kinds
                                        and inspect.Parameter.VAR_POSITIONAL not in kinds and not named)


def _call(fn, facts: dict):
    """The learner's reward for one set of facts (see `_by_keyword`)."""
    return fn(**facts) if _by_keyword(fn) else fn(*(facts[k] for k in FACT_NAMES))


def _share_gate(gots: list, kept: list) -> str:
    """The sentence for an answer that gates the bonus on a SHARE of tests passed (`passed / total > 0.2`, `>= 0.25`):
    right on every pair but for the bonus withheld where the share passed is below some cut and paid above it; "" for
    any other answer."""
    def share(f):
        return f["passed"] / f["total"]

    withheld, paid = [], []
    for g, (f, w) in zip(gots, kept):
        pays = f["main_defined"] and f["parses"] and f["passed"] >= 1 and f["aux_found"] and f["calls_aux"]
        if abs(g - w) <= 1e-6:
            paid += [f] if pays else []
        elif pays and abs(g - (w - (0.5 if f["thin_wrapper"] else 1.5))) <= 1e-6:
            withheld.append(f)
        else:
            return ""
    if not withheld or not paid or max(map(share, withheld)) >= min(map(share, paid)):
        return ""
    lo, hi = max(withheld, key=share), min(paid, key=share)
    return (f"you withhold the bonus where {lo['passed']} of {lo['total']} tests passed (a share of "
            f"{share(lo):.2f}) yet pay it where {hi['passed']} of {hi['total']} passed ({share(hi):.2f}): the bonus "
            "needs at least ONE passed test (`passed >= 1`), not a share of them (a cut on `passed / total`, "
            "`> 0.2`, `>= 0.1` or any other: a test with more asserts falls under it); one passed test opens it, "
            "whatever the total")


def _levels_hints(fn, cases: list) -> list:
    """The sentences for the misreadings the learner's function agrees with on EVERY pair (cases: (facts, reward)),
    so that a hint names the learner's own slip, not one that happens to give the same number on one pair. A pair
    with no test (total = 0), or with no passed test (passed = 0: an answer that divides by passed), on which the answer
    divides by zero is no evidence either way (that crash has its own sentence when the check reaches it); any other
    crash: no diagnosis."""
    gots, kept = [], []
    for facts, want in cases:
        try:
            gots.append(_as_number(_call(fn, dict(facts))))
            kept.append((facts, want))
        except ZeroDivisionError:
            if facts["total"] and facts["passed"]:   # a division by total = 0 (or by passed = 0, total / passed)
                return []
        except Exception:  # noqa: BLE001 - an answer that crashes on another pair: no diagnosis
            return []
    if not all(isinstance(g, (int, float)) and not isinstance(g, bool) for g in gots):
        return []
    slips = [_slips(facts, want) for facts, want in kept]
    hints = list(dict.fromkeys(slips[0][j][1] for j in range(len(slips[0]))   # a slip's None: no evidence on that pair
                               if all(s[j][0] is None or abs(g - s[j][0]) <= 1e-6 for g, s in zip(gots, slips))))
    cap = max(gots)
    if cap < max(w for _, w in kept) - 1e-6 and all(abs(g - min(w, cap)) <= 1e-6 for g, (_, w) in zip(gots, kept)):
        hints.append(f"your rewards stop at {cap:.10g} (`min(reward, {cap:.10g})`): the levels add up to 4.0 at most by "
                     "themselves; return the summed points, with no cap")
    if any(abs(w) > 1e-9 for _, w in kept) and all(abs(g + w) <= 1e-6 for g, (_, w) in zip(gots, kept)):
        hints.append("your rewards are the library's with the sign flipped: the levels are points EARNED, added up to a "
                     "reward from 0.0 to 4.0 (not a loss or a cost); return `reward`, not `-reward`")
    counts = [next((m for m in range(1, 7) if abs(g * m - w) <= 1e-6), None) for g, (_, w) in zip(gots, kept)]
    if all(counts) and any(m > 1 for m in counts) and not any(h.startswith("you divide the reward by its maximum")
                                                             for h in hints):
        k = max(counts)
        hints.append(f"your rewards are the library's divided by a count of levels (by {k} on some pair): you AVERAGE "
                     "the levels; the reward is their SUM (0.4 + 0.6 + 0.5 + passed / total + bonus, 4.0 at most), not "
                     "their mean: add the points up, with no division")
    if not hints:
        hints += [h for h in [_share_gate(gots, kept)] if h]
    if _INTEGER_DIVISION in hints and _ALL_OR_NOTHING in hints:   # the pair of total = 0 raised: the sentence
        hints.remove(_ALL_OR_NOTHING)                              # naming both readings says it
    for k in range(6):          # rounded: within half a unit of the k-th decimal, and a whole number of such units
        # (6 decimals and more are within the check's 1e-6: accepted)
        if all(abs(g - w) <= 0.5 * 10 ** -k + 1e-9 and abs(g * 10 ** k - round(g * 10 ** k)) <= 1e-6
               for g, (_, w) in zip(gots, kept)):
            hints.append(f"your rewards are rounded to {k} decimal(s) (the reward, or a part of it such as the "
                         "share passed / total, rounded); round nothing, as the library does (3.25 for one test of four "
                         "passed with the full bonus)")
            break
    return hints


def _gate_here(facts: dict, short: bool = False) -> str:
    """The reminder of the gate these facts meet ("" where none stops or withholds anything); `short`: the learner's
    reward is below the library's here, so the bonus gate's reminder adds that it takes nothing away."""
    if not facts["main_defined"]:
        return (" Remember the gate here: no entry point (main_defined False) stops scoring right after aux's 0.4 "
                "(no syntax, tests or bonus)" + (", and aux_defined is False, so not even that 0.4: 0.0."
                                                  if not facts["aux_defined"] else "."))
    if not facts["parses"]:
        return (" Remember the gate here: a program that does not parse stops scoring at L2, after the entry point's "
                "0.6 (no syntax 0.5, tests or bonus, whatever `passed` says)"
                + (", and aux_defined is False, so no 0.4 before it: 0.6." if not facts["aux_defined"] else "."))
    if facts["total"] == 0:
        return (" Remember the gate here: no test at all (total = 0) gives a tests level of 0 and stops scoring "
                "after the syntax 0.5 (no bonus).")
    if facts["calls_aux"] and (facts["passed"] == 0 or not facts["aux_found"]):
        return (" Remember the gate here: the cooperation bonus needs at least one passed test and an extracted aux "
                "(aux_found); this gate comes before the call test, so a main that calls aux earns no bonus without "
                "them" + ("; and nothing is taken away there (no -0.5)." if short else "."))
    return ""


def _type_said(got, want: float) -> str:
    """The sentence for a reward that is not a number (a bool, a str); "" for any other answer."""
    if is_bool(got):
        return (f" Your reward is a bool, {got!r}: coding_reward returns the reward as a NUMBER, the levels earned added "
                "up (a float from 0.0 to 4.0), not whether something was earned"
                + (" (`aux_defined and 0.4` is False, not 0.0, where aux_defined is False: write "
                   "`0.4 if aux_defined else 0.0`)." if not got else "."))
    if isinstance(got, str):
        try:
            same = abs(float(got) - want) <= 1e-6
        except ValueError:
            same = False
        return (f" Your reward is a str, {got!r}" + (": the right value, but as text" if same else "")
                + ": return the number itself, a float (no str(), f-string or format()).")
    if isinstance(got, dict):
        return (f" Your reward is a dict, {got!r}: return a float, not a dict: the summed points themselves "
                "(`return reward`, not `return {\"total\": reward}`).")
    if not isinstance(got, numbers.Real):
        return (f" Your reward is a {type(got).__name__}, {got!r}: return a float, the summed points themselves "
                "(`return reward`).")
    return ""



def _crash_said(exc: Exception, facts: dict):
    """The sentence for the learner's function raising on `facts` (its own for a division by a total of 0)."""
    if isinstance(exc, ZeroDivisionError) and facts["total"] == 0:
        return ExerciseFailed(
            f"for the facts {facts} your coding_reward raised ZeroDivisionError: {exc}. A problem may have NO test "
            "(total = 0: no assert mentions `candidate`); then the tests level is 0 and scoring stops after the "
            "syntax 0.5 (no bonus: no test passed), so this pair earns 0.4 + 0.6 + 0.5 = 1.5. Divide only when "
            "there is a test: `passed / total if total else 0.0`.")
    if isinstance(exc, ZeroDivisionError) and facts["passed"] == 0:
        return ExerciseFailed(
            f"for the facts {facts} your coding_reward raised ZeroDivisionError: {exc}. No test passed here (passed = 0): "
            "if you divide by passed, the tests level is upside down: it is passed / total, the share of tests passed "
            "(0.0 here), not total / passed.")
    return (f"for the facts {facts} your coding_reward raised {type(exc).__name__}: {exc}. The check calls it with "
            f"the eight facts in this order, {', '.join(FACT_NAMES)} (by keyword where your parameters carry these "
            "names), and it returns one number.")


@exercise("04.levels")
def check_levels(fn) -> None:
    """`fn(*facts) -> float` (the eight facts in `FACT_NAMES`' order) must give the library's coding reward on
    every pair."""
    if not callable(fn):
        raise ExerciseFailed("give a function coding_reward(aux_found, aux_defined, main_defined, parses, passed, total, "
                             "calls_aux, thin_wrapper) -> float")
    from ..tasks.coding.reward import coding_levels
    from ..tasks.coding import load_coding

    problem = next(r for r in load_coding("train") if r["entry_point"] == "count_vowels")
    # every pair's facts and reward, computed before the learner's function is called
    cases = [(_facts(aux, main, problem), coding_levels(aux, main, problem)["total_reward"]) for aux, main in LEVEL_CASES]
    labels = [f"aux: {aux.strip()!r}, main: {main.strip()!r}" for aux, main in LEVEL_CASES]   # short: shown whole
    # No pair can show the L2 stop on passed tests (a program that does not parse runs no test, so passed is 0): two
    # made-up fact sets do, the no-parse pair's facts with tests passed. The library stops at L2 whatever passed says,
    # so their reward is that pair's.
    facts0, want0 = next((f, w) for f, w in cases if f["main_defined"] and not f["parses"])
    for p in sorted({max(1, facts0["total"] // 2), facts0["total"]}):
        cases.append((dict(facts0, passed=p), want0))
        labels.append(f"facts made up for the check, no pair behind them: the program does not parse, yet {p} of "
                      f"{facts0['total']} tests 'passed'; L2 stops scoring, so the tests and the bonus are never reached")
    # count_vowels with a test of 3, 5, 7 and 12 asserts: the tests level is passed / total, whatever the total
    for test, aux, main in OTHER_TOTALS:
        other = dict(problem, test=test)
        cases.append((_facts(aux, main, other), coding_levels(aux, main, other)["total_reward"]))
        labels.append(f"count_vowels with a test of {test.count('assert ')} asserts, made for the check; aux: "
                      f"{aux.strip()!r}, main: {main.strip()!r}")
    # last, so that an answer with another slip meets its own pair first: a test with no scored assert (total = 0)
    for test, aux, main in (NO_TESTS, NO_TESTS_NO_AUX, NO_TESTS_NO_MAIN, NO_TESTS_NO_PARSE):
        other = dict(problem, test=test)
        cases.append((_facts(aux, main, other), coding_levels(aux, main, other)["total_reward"]))
        labels.append(f"count_vowels with a test that has NO assert mentioning `candidate` (total = 0), made for the "
                      f"check; aux: {aux.strip()!r}, main: {main.strip()!r}")
    for label, (facts, want) in zip(labels, cases):
        got = _as_number(call_answer(_call, fn, dict(facts), said=lambda exc, facts=facts: _crash_said(exc, facts)))
        if not _is_right(got, want):
            said = _type_said(got, want)
            hints = [] if said else _levels_hints(fn, cases)
            told = repr(round(got, 10)) if isinstance(got, float) else repr(got)   # 3.33, not 3.3299999999999996
            # 3.3333, not 3.33; with more decimals where yours reads the same to 4 (3.33333 against your 3.3333)
            shown = (f"{want:.2f}" if abs(want - round(want, 2)) < 1e-9
                     else next((t for t in (f"{want:.{d}f}" for d in range(4, 10)) if t != told), f"{want:.10f}"))
            raise ExerciseFailed(f"for the facts {facts} your reward is {told}; the library's is {shown} "
                                 f"({label})." + (said or _gate_here(facts, short=got < want))
                                 + (" Your rewards on every set of facts fit this slip: " + "; ".join(hints) + "." if hints else ""))
