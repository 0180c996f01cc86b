"""Reading Caracal's JSON documents, with one clear line for every way a file can be bad."""
import json
from pathlib import Path

from . import safejson
from .errors import UsageError


def read_json(path) -> dict:
    """The document in ``path`` as a dict; UsageError (one line) if it cannot be read."""
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{path}: no such file")
    if p.is_dir():
        raise UsageError(f"{path}: is a directory, not a JSON document")
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise UsageError(f"{path}: cannot read: {e.strerror or e}") from None
    if not raw.strip():
        raise UsageError(f"{path}: file is empty (was the run interrupted before the profile was written?)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not a JSON document (not UTF-8 text)") from None
    try:
        doc = safejson.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        # An error at the very end means the writer stopped early; anything
        # else is damage in the middle.
        if e.pos >= len(text.rstrip()):
            raise UsageError(f"{path}: truncated JSON (ends at line {e.lineno}); "
                             "the file was cut off while being written") from None
        raise UsageError(f"{path}: corrupt JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    except ValueError as e:  # NaN / Infinity
        raise UsageError(f"{path}: corrupt JSON: {e}") from None
    if not isinstance(doc, dict):
        raise UsageError(f"{path}: not a Caracal document (top level is a JSON {_kind(doc)}, "
                         "expected an object with a \"schema\" key)")
    return doc


def schema_of(path, doc: dict) -> str:
    s = doc.get("schema")
    if not isinstance(s, str):
        raise UsageError(f"{path}: not a Caracal document (no \"schema\" key)")
    return s


def _reject_constant(name):
    raise ValueError(f"{name} is not a number JSON allows")


def _kind(v) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean",
            int: "number", float: "number", type(None): "null"}.get(type(v), type(v).__name__)
