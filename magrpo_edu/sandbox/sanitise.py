"""The one sanitiser for text that comes back from a program: what a program writes (its output, an exception's
class name and message, the repr of a value it returned) is hostile text, and this module is the only way it
leaves the sandbox's results or enters a prompt, a log or a report.

`clean(text, max_chars)` (every `SandboxResult`: `AssertResult.error` / `.message`, the load error, the output):
  * valid text: any object becomes a `str` (its `str()`; "?" where that fails), lone surrogates included in
    what is escaped below, so the result always encodes as UTF-8 and prints;
  * printable: every character `str.isprintable` refuses (control characters, \\r, ESC and so terminal escape
    sequences, line and paragraph separators, format characters, surrogates, unassigned code points) is
    written as its Python escape (`\\r`, `\\x1b`, `\\u2028`, `\\ud800`); `lines=True` keeps \\n and \\t (program
    output);
  * bounded: at most `max_chars` characters (an escape is never cut; "..." marks a cut);
  * the trainer's secrets: the value of every variable of the trainer's environment whose name says it is a
    secret (TOKEN, KEY, SECRET, PASSWORD, ...; 8 characters or more) is replaced by "[redacted]". This is a
    second line only: the channel is closed where the kernel allows (see `magrpo_edu.sandbox`, rlimits mode).

`for_prompt(text, max_chars, tokenizer=None, max_tokens=None)` (what enters an agent's next prompt: the level
feedback's first failing test and syntax error), `clean` and then:
  * ASCII only: every other character is escaped too, so a byte-level tokenizer makes at most one token of
    each character (100 emoji cost 1,000 characters at most, never 400 tokens);
  * no special token: markers such as `<|eos|>`, `<|im_end|>`, `</s>`, `[INST]` (and, given the agent's
    tokenizer, every special or added token of it) get their first character escaped (`\\x3c|eos|>`), and the
    result is tokenised to check that no special token id is left (if one is, every `<>[]|{}` is escaped);
  * no forged report line: `#` is escaped (`\\x23`), and no line break is left, so what a program says is
    never a line of its own nor a `# Tests: ...` comment: it is only ever the tail of the feedback's
    "first failing" (or "syntax") line, after the harness's own label;
  * bounded in the agent's tokens: at most `max_tokens` tokens of `tokenizer` (cut with "...").
So the two-turn transition cannot raise on a program's text, and the feedback cannot push the next prompt
past the model's context: its program part is at most `max_chars` characters and `max_tokens` tokens.
"""
from __future__ import annotations

import os
import re
from typing import Optional

SECRET_NAMES = re.compile(r"TOKEN|SECRET|PASSW|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE|CREDENTIAL|AUTH|_KEY$|^KEY", re.I)
REDACTED = "[redacted]"
CUT = "..."


def _escape(c: str) -> str:
    o = ord(c)
    if c == "\n":
        return "\\n"
    if c == "\r":
        return "\\r"
    if c == "\t":
        return "\\t"
    if o < 0x100:
        return "\\x%02x" % o
    if o < 0x10000:
        return "\\u%04x" % o
    return "\\U%08x" % o


def _secrets() -> list[str]:
    """Values of this process's environment that name a secret (longest first)."""
    out = []
    for name, value in os.environ.items():
        if len(value) >= 8 and SECRET_NAMES.search(name):
            out.append(value)
    return sorted(set(out), key=len, reverse=True)


def _as_text(text) -> str:
    if text is None:
        return ""
    if type(text) is str:
        return text
    try:
        return str.__str__(text) if isinstance(text, str) else str(text)
    except Exception:  # noqa: BLE001 - any object's __str__ may raise anything
        return "?"


def _bounded(pieces, max_chars: int) -> str:
    """Join escaped pieces, at most max_chars characters, never cutting a piece; "..." marks a cut."""
    out, n = [], 0
    for p in pieces:
        if n + len(p) > max_chars:
            while out and n + len(CUT) > max_chars:
                n -= len(out.pop())
            return "".join(out) + (CUT if max_chars >= len(CUT) else "")
        out.append(p)
        n += len(p)
    return "".join(out)


def clean(text, max_chars: int, *, lines: bool = False, ascii_only: bool = False, escape: str = "") -> str:
    """`text` valid, printable and at most `max_chars` characters (see the module docstring). `lines`: keep
    \\n and \\t; `ascii_only`: escape every non-ASCII character too; `escape`: more characters to escape."""
    text = _as_text(text)
    text = text[:max_chars + 1]  # every character is one piece or more: nothing past this can be kept
    for secret in _secrets():
        if secret in text:
            text = text.replace(secret, REDACTED)
    plain = (_PLAIN_LINES if lines else _PLAIN).fullmatch(text)
    if plain and not (escape and any(c in text for c in escape)):
        return text if len(text) <= max_chars else _bounded(text, max_chars)
    keep = "\n\t" if lines else ""
    pieces = []
    for c in text:
        if c in keep or (" " <= c <= "~" or not ascii_only and c > "~" and c.isprintable()) and c not in escape:
            pieces.append(c)
        else:
            pieces.append(_escape(c))
    return _bounded(pieces, max_chars)


_PLAIN, _PLAIN_LINES = re.compile(r"[ -~]*"), re.compile(r"[ -~\n\t]*")  # nothing to escape


# <|anything|>, <s>, </s>, <unk>, <<SYS>>, <start_of_turn>: a '<' that opens such a tag; [INST], [/INST]
_MARKER = re.compile(r"<(?=[|/<]|[A-Za-z_][\w.\-]{0,40}>)|\[(?=/?[A-Z][A-Z_]{1,20}\])")


def _special_strings(tokenizer) -> list[str]:
    names = set()
    for attr in ("all_special_tokens", "additional_special_tokens"):
        try:
            names.update(str(t) for t in (getattr(tokenizer, attr, None) or ()))
        except Exception:  # noqa: BLE001 - any tokenizer
            pass
    try:
        names.update(str(t) for t in (tokenizer.get_added_vocab() or {}))
    except Exception:  # noqa: BLE001
        pass
    return sorted((n for n in names if n), key=len, reverse=True)


def _special_ids(tokenizer) -> set:
    ids = set()
    try:
        ids.update(int(i) for i in (tokenizer.all_special_ids or ()))
    except Exception:  # noqa: BLE001
        pass
    try:
        ids.update(int(i) for i in (tokenizer.get_added_vocab() or {}).values())
    except Exception:  # noqa: BLE001
        pass
    return ids


def _token_ids(tokenizer, text: str) -> list:
    try:
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])
    except TypeError:
        return list(tokenizer(text)["input_ids"])


def for_prompt(text, max_chars: int, tokenizer=None, max_tokens: Optional[int] = None) -> str:
    """Program text made safe to put into an agent's next prompt (see the module docstring): `clean`, ASCII
    only, `#` and special-token markers escaped, at most `max_chars` characters and, given `tokenizer`, at
    most `max_tokens` of its tokens."""
    out = clean(text, max_chars, ascii_only=True, escape="#")
    out = _MARKER.sub(lambda m: _escape(m.group(0)), out)
    if tokenizer is not None:
        for s in _special_strings(tokenizer):
            while s in out:
                out = out.replace(s, _escape(s[0]) + s[1:])
        special = _special_ids(tokenizer)
        if special and special.intersection(_token_ids(tokenizer, out)):
            out = re.sub(r"[<>\[\]|{}]", lambda m: _escape(m.group(0)), out)
            if special.intersection(_token_ids(tokenizer, out)):
                out = "(text not shown: it tokenises to special tokens)"
    if len(out) > max_chars:
        out = _bounded(re.findall(r"\\x..|\\u....|\\U........|\\[nrt]|.", out), max_chars)
    if tokenizer is not None and max_tokens is not None and len(_token_ids(tokenizer, out)) > max_tokens:
        pieces = re.findall(r"\\x..|\\u....|\\U........|\\[nrt]|.", out)
        lo, hi = 0, len(pieces)  # the longest prefix (in pieces) that fits with the cut mark
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if len(_token_ids(tokenizer, "".join(pieces[:mid]) + CUT)) <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        out = "".join(pieces[:lo]) + CUT
    return out
