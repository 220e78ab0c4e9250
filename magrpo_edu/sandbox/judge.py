"""The judge: trusted code on untrusted input, run OUTSIDE the sandbox as `python -I -S -B judge.py`.

It runs in a process of its own so that the trainer can bound its time (it is killed at the program's
deadline plus `forgeproof.JUDGE_GRACE_S`) and memory (RLIMIT_AS) whatever the lines hold. It reads one
header line (JSON: tag, limits, safe names, the plans) and then the bytes of the result pipe; it parses
each line strictly (no eval), keeps the first line of each assert that carries the run's tag, and then
writes one short JSON line per assert: ["load", error, message, line, col] for a load error, then
[index, status, error, message] ("missing": no line for it). What it wrote before it was killed counts.
Only lines for the run's asserts (index 0 to len(plans) - 1) are kept, the first of each. A host plan's values
are rebuilt from plain builtins (bounded items and depth; a set or dict with more than MAX_SHARED_HASH keys of
one hash is refused in linear time) and its assert is evaluated in a namespace of safe
builtins and `math`.

It imports only `_json`, `builtins`, `math` and `sys` (no `json`, no package module: `-I` puts neither
this folder nor site-packages on sys.path), and tests import it as `magrpo_edu.sandbox.judge`.
"""
import _json
import builtins
import math
import sys


class _Strict:
    """json.loads's settings for `_json.make_scanner`: no NaN, no Infinity."""
    strict, object_hook, object_pairs_hook, parse_float, parse_int = True, None, None, float, int

    def parse_constant(name):
        raise ValueError("not JSON: " + name)


_SCAN, _QUOTE = _json.make_scanner(_Strict), _json.encode_basestring_ascii


class BadValue(Exception):
    pass


def loads(raw: bytes):
    s = raw.decode("utf-8").strip()
    value, end = _SCAN(s, 0)
    if end != len(s):
        raise ValueError("extra data")
    return value


def dumps_line(items) -> str:
    """One output line: a JSON list of ints, strings and nulls."""
    return "[" + ", ".join("null" if v is None else str(v) if type(v) is int else _QUOTE(v) for v in items) + "]\n"


def capped_range(*args):
    r = range(*args)
    if len(r) > 10 ** 7:
        raise ValueError("range too long for an assert")
    return r


def safe_builtins(names) -> dict:
    """The builtins a host-checked assert may use (`range` capped at 10**7 items)."""
    safe = {n: getattr(builtins, n) for n in names}
    safe["range"] = capped_range
    return safe


MAX_SHARED_HASH = 32


def refuse_hash_flood(keys) -> None:
    """A set or dict whose keys share hashes costs time quadratic in how many share one (building it and
    comparing it); counting the keys of each hash is linear, and honest values never collide like that
    (hash(-1) == hash(-2) is the one pair among small ints). So no hash may be shared by more than
    MAX_SHARED_HASH keys: the cost stays linear whatever mix of colliding and distinct keys a line holds (the
    old rule, "fewer than half distinct", let half the keys share one hash)."""
    if len(keys) <= MAX_SHARED_HASH:
        return
    counts = {}
    for k in keys:
        h = hash(k)
        c = counts.get(h, 0) + 1
        if c > MAX_SHARED_HASH:
            raise BadValue("hash flood: more than %d of %d keys share one hash value" % (MAX_SHARED_HASH, len(keys)))
        counts[h] = c


def decode(x, depth: int, left: list, max_depth: int):
    """A value from the harness's tagged JSON (`left[0]`: items still allowed)."""
    left[0] -= 1
    if left[0] < 0 or depth > max_depth:
        raise BadValue("too large")
    t = type(x)
    if x is None or t is bool or t is int or t is str:
        return x
    if t is not list or not x or type(x[0]) is not str:
        raise BadValue("malformed")
    tag, rest = x[0], x[1:]
    try:
        if tag == "f" and len(rest) == 1 and type(rest[0]) is str and len(rest[0]) < 40:
            return float(rest[0])
        if tag == "c" and len(rest) == 2 and all(type(p) is str and len(p) < 40 for p in rest):
            return complex(float(rest[0]), float(rest[1]))
        if tag == "y" and len(rest) == 1 and type(rest[0]) is str:
            return bytes.fromhex(rest[0])
        if tag in ("l", "t", "s", "F"):
            items = [decode(e, depth + 1, left, max_depth) for e in rest]
            if tag in ("s", "F"):
                refuse_hash_flood(items)
            return {"l": list, "t": tuple, "s": set, "F": frozenset}[tag](items)
        if tag == "d" and len(rest) % 2 == 0:
            keys = [decode(k, depth + 1, left, max_depth) for k in rest[::2]]
            refuse_hash_flood(keys)
            return dict(zip(keys, [decode(v, depth + 1, left, max_depth) for v in rest[1::2]]))
    except (ValueError, TypeError, OverflowError) as e:  # bad float text, unhashable key, ...
        raise BadValue(str(e)) from None
    raise BadValue("malformed")


def short(v) -> str:
    try:
        r = repr(v)
    except Exception:
        return "?"
    return r if len(r) <= 120 else r[:117] + "..."


def text(x, n: int) -> str:
    try:
        return str(x)[:n]
    except Exception:
        return ""


def on_host(plan: dict, d: dict, safe: dict, max_items: int, max_depth: int) -> list:
    """[status, error, message] of a host plan: its values decoded, its assert evaluated here."""
    values = d.get("values")
    if values is None:
        status = d.get("status") if d.get("status") in ("failed", "timeout", "skipped", "not_run") else "failed"
        return [status, text(d.get("error") or "BadResult", 100), text(d.get("message") or "", 300)]
    try:
        if type(values) is not list or len(values) != len(plan["calls"]):
            raise BadValue("wrong number of values")
        left = [max_items]
        decoded = [decode(v, 0, left, max_depth) for v in values]
    except (BadValue, RecursionError) as e:
        return ["failed", "BadResult", ("the sandbox sent an unreadable value (%s)" % e)[:300]]
    ns = {"__builtins__": dict(safe), "math": math}
    ns.update({"__shipped_%d" % j: v for j, v in enumerate(decoded)})
    try:
        exec(compile(plan["code"], "<assert>", "exec"), ns)
    except AssertionError as e:
        msg = text(e, 300) if e.args else "; ".join("%s returned %s" % (c, short(v)) for c, v in zip(plan["calls"], decoded))
        return ["failed", "AssertionError", msg[:300]]
    except (Exception, SystemExit) as e:
        return ["failed", type(e).__name__, text(e, 300)]
    return ["passed", None, None]


def in_sandbox(d: dict) -> list:
    """[status, error, message] of a verdict the sandbox decided (forgeable), cleaned."""
    status = d.get("status") if d.get("status") in ("passed", "failed", "timeout", "skipped", "not_run") else "failed"
    error, message = d.get("error"), d.get("message")
    return [status, None if error is None else text(error, 100), None if message is None else text(message, 300)]


def judge(stdin, write) -> None:
    """Read the header and the result pipe's lines from the binary stream `stdin`; `write` each line out."""
    head = loads(stdin.readline())
    tag, plans, max_items, max_depth, max_line = (head["tag"], head["plans"], head["max_items"], head["max_depth"],
                                                  head["max_line"])
    safe = safe_builtins(head["safe_names"])
    verdicts, load_error = {}, None
    for raw in stdin:
        if len(raw) > max_line:
            continue
        try:
            d = loads(raw)
        except Exception:  # not JSON (ValueError, StopIteration, ...), too deep (RecursionError), too large
            continue
        if not isinstance(d, dict) or d.get("tag") != tag:
            continue  # not written by the harness
        if "load_error" in d:
            if load_error is None:
                load_error = ["load", text(d["load_error"], 100), text(d.get("message"), 300),
                              d.get("line") if type(d.get("line")) is int else None,
                              d.get("col") if type(d.get("col")) is int else None]
        elif type(d.get("index")) is int and 0 <= d["index"] < len(plans) and d["index"] not in verdicts:  # no other index is kept
            verdicts[d["index"]] = d
    if load_error is not None:
        write(dumps_line(load_error))
    for i, plan in enumerate(plans):
        d = verdicts.get(i)
        write(dumps_line([i] + (["missing", None, None] if d is None else
                                on_host(plan, d, safe, max_items, max_depth) if plan["kind"] == "host" else in_sandbox(d))))


def main() -> None:
    def write(line: str) -> None:
        sys.stdout.write(line)
        sys.stdout.flush()

    judge(sys.stdin.buffer, write)


if __name__ == "__main__":
    main()
