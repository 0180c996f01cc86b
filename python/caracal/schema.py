"""Checking JSON documents against Caracal's schema files (schemas/*.json).

One checker for every kind of document: profiles (profile.py wants the first
violation, raised as SchemaViolation) and probe and bench results (probe_report.py
wants them all, found by the document's own "schema" field).

It understands the subset of JSON Schema our files use: type, const, enum, minimum,
maximum, minLength, required, properties, patternProperties, additionalProperties,
items, prefixItems, minItems, maxItems, anyOf, $ref (to "#/$defs/NAME"). Everything
else (title, description, $schema, $id, $defs itself) is documentation. Hand-written
rather than the jsonschema package: numpy and matplotlib are Caracal's only runtime
dependencies.

Every message is one line, "where: what is wrong", where is a path such as
ranks[1].time_mpi ("top level" for the document itself); values and keys taken from
the document are quoted with their escapes, so a newline in them cannot break the line.
"""
import json
import math
import re
from functools import lru_cache
from importlib import resources
from typing import Any, Iterator, List

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    # NaN and infinities are not JSON numbers (jsondoc.read_json refuses them too)
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
}
_NAMES = {"object": "an object", "array": "an array", "string": "a string", "boolean": "true or false",
          "null": "null", "integer": "an integer", "number": "a number"}

# The schema file of each document kind that is validated by its "schema" field.
DOCUMENT_SCHEMAS = {"caracal.probe/1": "probe-1.json", "caracal.bench/1": "bench-1.json"}


class SchemaViolation(Exception):
    """``where`` is a path such as ranks[1].time_mpi; the message says what is wrong there."""

    def __init__(self, where, message):
        super().__init__(f"{where or 'top level'}: {message}")
        self.where = where


@lru_cache(maxsize=None)
def load(name: str) -> dict:
    """The schema in caracal/schemas/``name``, e.g. ``probe-1.json`` (cached: do not modify it)."""
    return json.loads(resources.files("caracal").joinpath("schemas", name).read_text())


def check(value, schema) -> None:
    """Raise SchemaViolation for the first place ``value`` does not follow ``schema``."""
    for v in violations(value, schema):
        raise v


def errors(value, schema) -> List[str]:
    """Every way ``value`` breaks ``schema``, one line each (empty: valid)."""
    return [str(v) for v in violations(value, schema)]


def validate(doc: Any) -> List[str]:
    """Every way ``doc`` breaks the schema its own "schema" field names (probe and bench results)."""
    if not isinstance(doc, dict) or "schema" not in doc:
        return ["top level: not a Caracal document (no \"schema\" field)"]
    name = DOCUMENT_SCHEMAS.get(doc["schema"]) if isinstance(doc["schema"], str) else None
    if name is None:
        return [f"schema: unknown schema {describe(doc['schema'])}"]
    return errors(doc, load(name))


def describe(v) -> str:
    """A value from the document, short and on one line."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return repr(v) if len(v) <= 40 else repr(v[:37] + "...")
    return "an object" if isinstance(v, dict) else "an array"


def _quote(key: str) -> str:
    """The key in double quotes, JSON-escaped, with \\u escapes for anything else that would not
    print on one line (U+2028 and the like)."""
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in json.dumps(key, ensure_ascii=False))


def _member(where: str, key: str) -> str:
    if key.isprintable() and key and not re.search(r'[.\[\]" ]', key):
        return f"{where}.{key}" if where else key
    return f"{where}[{_quote(key)}]"


def violations(value, schema, root=None, where="") -> Iterator[SchemaViolation]:
    """Every place ``value`` does not follow ``schema``, in document order (not raised).
    Below a value of the wrong type nothing more is reported."""
    root = root if root is not None else schema
    if "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/$defs/"):
            raise ValueError(f"unsupported $ref {ref}")
        yield from violations(value, root["$defs"][ref[len("#/$defs/"):]], root, where)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES[t](value) for t in types):
            want = " or ".join(_NAMES[t] for t in types)
            yield SchemaViolation(where, f"expected {want}, got {describe(value)}")
            return
    if "const" in schema and value != schema["const"]:
        yield SchemaViolation(where, f"expected {schema['const']!r}, got {describe(value)}")
    if "enum" in schema and value not in schema["enum"]:
        yield SchemaViolation(where, f"expected one of {', '.join(map(repr, schema['enum']))}, got {describe(value)}")
    if _TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            yield SchemaViolation(where, f"must be at least {schema['minimum']}, got {describe(value)}")
        if "maximum" in schema and value > schema["maximum"]:
            yield SchemaViolation(where, f"must be at most {schema['maximum']}, got {describe(value)}")
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        yield SchemaViolation(where, "must not be empty")
    if isinstance(value, dict):
        yield from _object(value, schema, root, where)
    if isinstance(value, list):
        yield from _array(value, schema, root, where)
    if "anyOf" in schema:
        tries = [list(violations(value, alt, root, where)) for alt in schema["anyOf"]]
        if all(tries):  # no alternative fits: report the one that came closest
            yield from min(tries, key=len)


def _object(value, schema, root, where):
    for key in schema.get("required", []):
        if key not in value:
            yield SchemaViolation(where, f"missing key {_quote(key)}")
    props = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extra = schema.get("additionalProperties", True)
    for key, v in value.items():
        sub = _member(where, key)
        matched = False
        if key in props:
            yield from violations(v, props[key], root, sub)
            matched = True
        for pat, s in patterns.items():
            if re.search(pat, key):
                yield from violations(v, s, root, sub)
                matched = True
        if not matched:
            if extra is False:
                yield SchemaViolation(where, f"unexpected key {_quote(key)}")
            elif isinstance(extra, dict):
                yield from violations(v, extra, root, sub)


def _array(value, schema, root, where):
    if len(value) < schema.get("minItems", 0):
        yield SchemaViolation(where, f"needs at least {schema['minItems']} entries, has {len(value)}")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        yield SchemaViolation(where, f"may have at most {schema['maxItems']} entries, has {len(value)}")
    prefix = schema.get("prefixItems", [])
    for i, v in enumerate(value):
        s = prefix[i] if i < len(prefix) else schema.get("items")
        if s is not None:
            yield from violations(v, s, root, f"{where}[{i}]")
