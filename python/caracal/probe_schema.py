"""Validate a JSON document against one of Caracal's schema files.

Hand-written on purpose (Caracal depends only on matplotlib and numpy): it
understands the subset of JSON Schema our files in schemas/ use — type,
required, properties, additionalProperties (false), items, enum, const,
minimum, minItems, anyOf.
"""
import json
from importlib import resources
from typing import Any, List

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def load_schema(name: str) -> dict:
    """``name`` is a file in caracal/schemas/, e.g. ``probe-1.json``."""
    return json.loads(resources.files("caracal").joinpath("schemas", name).read_text())


def errors(doc: Any, schema: dict, where: str = "$") -> List[str]:
    """Every way ``doc`` breaks ``schema``, as 'path: problem' strings (empty = valid)."""
    out: List[str] = []
    t = schema.get("type")
    if t is not None:
        kinds = t if isinstance(t, list) else [t]
        if not any(_TYPES[k](doc) for k in kinds):
            return [f"{where}: expected {' or '.join(kinds)}, got {type(doc).__name__}"]
    if "const" in schema and doc != schema["const"]:
        out.append(f"{where}: must be {schema['const']!r}, got {doc!r}")
    if "enum" in schema and doc not in schema["enum"]:
        out.append(f"{where}: must be one of {schema['enum']}, got {doc!r}")
    if "minimum" in schema and _TYPES["number"](doc) and doc < schema["minimum"]:
        out.append(f"{where}: must be >= {schema['minimum']}, got {doc}")
    if isinstance(doc, dict):
        for key in schema.get("required", []):
            if key not in doc:
                out.append(f"{where}: missing required field '{key}'")
        props = schema.get("properties", {})
        for key, value in doc.items():
            if key in props:
                out += errors(value, props[key], f"{where}.{key}")
            elif schema.get("additionalProperties") is False:
                out.append(f"{where}: unexpected field '{key}'")
    if isinstance(doc, list):
        if len(doc) < schema.get("minItems", 0):
            out.append(f"{where}: needs at least {schema['minItems']} items, has {len(doc)}")
        if "items" in schema:
            for i, item in enumerate(doc):
                out += errors(item, schema["items"], f"{where}[{i}]")
    if "anyOf" in schema:
        tries = [errors(doc, alt, where) for alt in schema["anyOf"]]
        if all(tries):
            best = min(tries, key=len)
            out += best
    return out


SCHEMA_FILES = {"caracal.probe/1": "probe-1.json", "caracal.bench/1": "bench-1.json"}


def validate(doc: Any) -> List[str]:
    """Validate by the document's own "schema" field."""
    if not isinstance(doc, dict) or "schema" not in doc:
        return ["$: not a Caracal document (no \"schema\" field)"]
    name = SCHEMA_FILES.get(doc["schema"])
    if name is None:
        return [f"$.schema: unknown schema {doc['schema']!r}"]
    return errors(doc, load_schema(name))
