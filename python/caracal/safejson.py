"""json.loads with bounds, for every document a user hands Caracal: nesting depth and
number size are limited, so a hostile or damaged file gives a one-line error instead of a
RecursionError or an OverflowError deep inside a command."""
import json

MAX_DEPTH = 64          # Caracal's own documents nest fewer than 10 levels
MAX_INT_DIGITS = 24     # beyond any count, byte total or nanosecond time a run can produce


def _depth_ok(text: str) -> bool:
    depth, in_str, esc = 0, False, False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return False
        elif ch in "]}":
            depth -= 1
    return True


def _parse_int(s: str) -> int:
    if len(s.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"number {s[:12]}... has {len(s.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
    return int(s)


def _parse_float(s: str) -> float:
    v = float(s)
    if v in (float("inf"), float("-inf")):
        raise ValueError(f"number {s[:12]}... is out of range")
    return v


def loads(text: str, **kw):
    """json.loads(text, **kw) within the bounds above; ValueError (one line) otherwise.
    JSONDecodeError still comes through as such (it is a ValueError)."""
    if not _depth_ok(text):
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    kw.setdefault("parse_int", _parse_int)
    kw.setdefault("parse_float", _parse_float)
    return json.loads(text, **kw)
