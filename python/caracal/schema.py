"""Checking JSON documents against Caracal's schema files (schemas/*.json), with the
jsonschema package (JSON Schema 2020-12).

One checker for every kind of document: profiles (profile.py wants the first
violation, raised as SchemaViolation), topologies (topology.py) and probe and bench
results (probe_report.py wants them all, found by the document's own "schema" field).

What is ours is the wording: jsonschema's own messages quote the offending value whole
(a 10 MB array, a key with a newline in it), so every error is rewritten here from its
keyword, as one line "where: what is wrong", where is a path such as ranks[1].time_mpi
("top level" for the document itself); values and keys taken from the document are quoted
with their escapes, so a newline in them cannot break the line. Errors come in document
order, and below a value of the wrong type nothing more is reported.
"""
import json
import math
import re
from functools import lru_cache
from importlib import resources
from typing import Any, Iterator, List

_NAMES = {"object": "an object", "array": "an array", "string": "a string", "boolean": "true or false",
          "null": "null", "integer": "an integer", "number": "a number"}



@lru_cache(maxsize=None)
def validator_class():
    """JSON Schema 2020-12 with JSON's numbers as Python reads them: an integer is an int
    (1.0 is not one), and NaN and infinities are no numbers at all (jsondoc.read_json refuses
    them too). Imported on first use, so that a command that checks no document runs without
    jsonschema (cli.py names it when it is missing)."""
    import jsonschema
    base = jsonschema.Draft202012Validator
    checker = base.TYPE_CHECKER.redefine_many({
        "integer": lambda _, v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda _, v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
    })
    return jsonschema.validators.extend(base, type_checker=checker)

# The schema file of each document kind that is validated by its "schema" field.
DOCUMENT_SCHEMAS = {"caracal.probe/1": "probe-1.json", "caracal.bench/1": "bench-1.json"}


class SchemaViolation(Exception):
    """``where`` is a path such as ranks[1].time_mpi; the message says what is wrong there."""

    def __init__(self, where, message):
        super().__init__(f"{where or 'top level'}: {message}")
        self.where = where


@lru_cache(maxsize=None)
def load(name: str) -> dict:
    """The schema in caracal/schemas/``name``, e.g. ``probe-1.json`` (cached: do not modify it).
    A schema file that is not valid JSON Schema is a bug of ours: SchemaError."""
    schema = json.loads(resources.files("caracal").joinpath("schemas", name).read_text())
    validator_class().check_schema(schema)
    return schema


_validators = {}


def _validator(schema: dict):
    key = id(schema)
    if key not in _validators or _validators[key][0] is not schema:
        _validators[key] = (schema, validator_class()(_inlined(schema)))
    return _validators[key][1]


def _inlined(schema: dict) -> dict:
    """``schema`` with every "$ref": "#/$defs/NAME" replaced by that definition. Same meaning
    (our definitions do not refer to themselves), but jsonschema resolves a $ref anew at each
    value it checks: inlined, a 256-rank profile (131,000 matrix entries that are each a
    #/$defs/count) is checked in 3.6 s instead of 13 (still 2.4 times the 1.5 s of the checker
    this module replaced; measured under load, 2026-11-26)."""
    defs = schema.get("$defs", {})

    def walk(node):
        if isinstance(node, list):
            return [walk(x) for x in node]
        if not isinstance(node, dict):
            return node
        out = {k: walk(v) for k, v in node.items() if k != "$defs"}
        ref = out.pop("$ref", None)
        if ref is None:
            return out
        if not ref.startswith("#/$defs/") or ref[len("#/$defs/"):] not in defs:
            raise ValueError(f"unsupported $ref {ref}")
        target = walk(defs[ref[len("#/$defs/"):]])
        if set(out) & set(target) - {"description", "title"}:
            return {"allOf": [target], **out}  # both constrain the same keyword: keep both
        return {**target, **out}

    return walk(schema)


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


def violations(value, schema) -> List[SchemaViolation]:
    """Every place ``value`` does not follow ``schema``, in document order (not raised).
    Below a value of the wrong type, and beside its type error, nothing more is reported."""
    found = []  # (order key, SchemaViolation)
    for err in _validator(schema).iter_errors(value):
        found += _explain(err, value)
    found.sort(key=lambda f: f[0])  # stable: one place's errors stay in the schema's order
    wrong_type = {k for k, v in found if v.type_error}
    out, seen = [], set()
    for k, v in found:
        below = any(k[:len(t)] == t for t in wrong_type if len(t) < len(k))
        if below or (k in wrong_type and not v.type_error) or str(v) in seen:
            continue
        seen.add(str(v))
        out.append(v)
    return out


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


def _where(root, path) -> tuple:
    """The printed path of a place in the document and its order key (each step's position in
    its container, so sorting by it is document order)."""
    text, order, node = "", [], root
    for step in path:
        if isinstance(step, int):
            text += f"[{step}]"
            order.append(step)
        else:
            text = _member(text, step)
            order.append(list(node).index(step))
        node = node[step]
    return text, tuple(order)


def _violation(where, message, type_error=False):
    v = SchemaViolation(where, message)
    v.type_error = type_error
    return v


# Keywords whose message is one line from the schema's value (want) and the document's (value)
_ONE_LINE = {
    "const": lambda want, value: f"expected {want!r}, got {describe(value)}",
    "enum": lambda want, value: f"expected one of {', '.join(map(repr, want))}, got {describe(value)}",
    "minimum": lambda want, value: f"must be at least {want}, got {describe(value)}",
    "maximum": lambda want, value: f"must be at most {want}, got {describe(value)}",
    "exclusiveMinimum": lambda want, value: f"must be more than {want}, got {describe(value)}",
    "exclusiveMaximum": lambda want, value: f"must be less than {want}, got {describe(value)}",
    "minLength": lambda want, value: ("must not be empty" if want == 1
                                      else f"must have at least {want} characters, got {describe(value)}"),
    "maxLength": lambda want, value: f"may have at most {want} characters, got {describe(value)}",
    "minItems": lambda want, value: f"needs at least {want} entries, has {len(value)}",
    "maxItems": lambda want, value: f"may have at most {want} entries, has {len(value)}",
}


def _explain(err, doc) -> Iterator[tuple]:
    """(order key, SchemaViolation) for one jsonschema error in ``doc``, in our words."""
    where, order = _where(doc, err.absolute_path)
    kw, want, value, schema = err.validator, err.validator_value, err.instance, err.schema
    if kw == "type":
        types = want if isinstance(want, list) else [want]
        yield order, _violation(where, f"expected {' or '.join(_NAMES[t] for t in types)}, got {describe(value)}", True)
    elif kw in _ONE_LINE:
        yield order, _violation(where, _ONE_LINE[kw](want, value))
    elif kw == "required":
        # jsonschema reports each missing key as an error of its own: each of them names them
        # all here, and violations() drops the repeats
        for key in want:
            if key not in value:
                yield order + (-1,), _violation(where, f"missing key {_quote(key)}")
    elif kw == "additionalProperties":
        known = set(schema.get("properties", {}))
        patterns = list(schema.get("patternProperties", {}))
        keys = list(value)
        for i, key in enumerate(keys):
            if key not in known and not any(re.search(p, key) for p in patterns):
                yield order + (i,), _violation(where, f"unexpected key {_quote(key)}")
    elif kw in ("anyOf", "oneOf") and err.context:
        # no alternative fits: report the one that came closest (fewest errors)
        by_alt = {}
        for sub in err.context:
            by_alt.setdefault(sub.relative_schema_path[0], []).append(sub)
        closest = min(by_alt.values(), key=len)
        for sub in closest:
            yield from _explain(sub, doc)
    else:  # a keyword our schema files do not use yet: its name and the expected value
        yield order, _violation(where, f"does not satisfy {kw} {json.dumps(want)[:60]}")
