"""A small JSON Schema checker for the subset Caracal's schema files use.

Keywords: type, const, enum, minimum, maximum, minLength, required,
properties, patternProperties, additionalProperties, items, prefixItems,
minItems, maxItems, $ref (to "#/$defs/NAME"). Everything else (title,
description, $schema, $id, $defs itself) is documentation. We check by hand
instead of depending on the jsonschema package: numpy and matplotlib are
Caracal's only runtime dependencies.
"""
import math
import re

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
}
_NAMES = {"object": "an object", "array": "an array", "string": "a string", "boolean": "true or false",
          "null": "null", "integer": "an integer", "number": "a number"}


class SchemaViolation(Exception):
    """``where`` is a path such as ranks[1].time_mpi; the message says what is wrong there."""

    def __init__(self, where, message):
        super().__init__(f"{where or 'top level'}: {message}")
        self.where = where


def describe(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return repr(v) if len(v) <= 40 else repr(v[:37] + "...")
    return "an object" if isinstance(v, dict) else "an array"


def check(value, schema, root=None, where=""):
    """Raise SchemaViolation for the first place ``value`` does not follow ``schema``."""
    root = root if root is not None else schema
    if "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/$defs/"):
            raise ValueError(f"unsupported $ref {ref}")
        check(value, root["$defs"][ref[len("#/$defs/"):]], root, where)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES[t](value) for t in types):
            want = " or ".join(_NAMES[t] for t in types)
            raise SchemaViolation(where, f"expected {want}, got {describe(value)}")
    if "const" in schema and value != schema["const"]:
        raise SchemaViolation(where, f"expected {schema['const']!r}, got {describe(value)}")
    if "enum" in schema and value not in schema["enum"]:
        raise SchemaViolation(where, f"expected one of {', '.join(map(repr, schema['enum']))}, got {describe(value)}")
    if _TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            raise SchemaViolation(where, f"must be at least {schema['minimum']}, got {describe(value)}")
        if "maximum" in schema and value > schema["maximum"]:
            raise SchemaViolation(where, f"must be at most {schema['maximum']}, got {describe(value)}")
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        raise SchemaViolation(where, "must not be empty")
    if isinstance(value, dict):
        _check_object(value, schema, root, where)
    if isinstance(value, list):
        _check_array(value, schema, root, where)


def _check_object(value, schema, root, where):
    for key in schema.get("required", []):
        if key not in value:
            raise SchemaViolation(where, f"missing key \"{key}\"")
    props = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extra = schema.get("additionalProperties", True)
    for key, v in value.items():
        sub = f"{where}.{key}" if where else key
        matched = False
        if key in props:
            check(v, props[key], root, sub)
            matched = True
        for pat, s in patterns.items():
            if re.search(pat, key):
                check(v, s, root, sub)
                matched = True
        if not matched:
            if extra is False:
                raise SchemaViolation(where, f"unexpected key \"{key}\"")
            if isinstance(extra, dict):
                check(v, extra, root, sub)


def _check_array(value, schema, root, where):
    if len(value) < schema.get("minItems", 0):
        raise SchemaViolation(where, f"needs at least {schema['minItems']} entries, has {len(value)}")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        raise SchemaViolation(where, f"may have at most {schema['maxItems']} entries, has {len(value)}")
    prefix = schema.get("prefixItems", [])
    for i, v in enumerate(value):
        s = prefix[i] if i < len(prefix) else schema.get("items")
        if s is not None:
            check(v, s, root, f"{where}[{i}]")
