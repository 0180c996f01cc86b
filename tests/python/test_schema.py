"""caracal.schema, the one checker of Caracal's JSON documents: the keywords our schema
files use, first violation (profiles) versus all of them (probe and bench results), and
one-line messages whatever the document holds."""
import json
from pathlib import Path

import pytest

from caracal import schema
from caracal.schema import SchemaViolation, check, errors, validate

ROOT = Path(__file__).resolve().parents[2]

POINT = {"type": "object", "required": ["x"], "additionalProperties": False,
         "properties": {"x": {"type": "integer", "minimum": 0, "maximum": 9},
                        "name": {"type": "string", "minLength": 1}}}
DOC = {
    "type": "object",
    "$defs": {"point": POINT},
    "properties": {
        "points": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"$ref": "#/$defs/point"}},
        "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}]},
        "counts": {"type": "object", "patternProperties": {"^[0-9]+$": {"type": "integer"}},
                   "additionalProperties": False},
        "either": {"anyOf": [{"type": "object", "required": ["a", "b", "c"]},
                             {"type": "object", "required": ["a", "b"]}]},
        "kind": {"enum": ["p", "q"]},
        "version": {"const": 1},
    },
}


def test_a_valid_document_has_no_violation():
    doc = {"points": [{"x": 0}, {"x": 9, "name": "n"}], "pair": ["a", 2.5], "counts": {"12": 3},
           "either": {"a": 1, "b": 2}, "kind": "q", "version": 1}
    assert errors(doc, DOC) == []
    check(doc, DOC)


@pytest.mark.parametrize("doc, message", [
    ({"points": []}, "points: needs at least 1 entries, has 0"),
    ({"points": [{"x": 1}] * 4}, "points: may have at most 3 entries, has 4"),
    ({"points": [{"x": 1}, {}]}, 'points[1]: missing key "x"'),
    ({"points": [{"x": -1}]}, "points[0].x: must be at least 0, got -1"),
    ({"points": [{"x": 10}]}, "points[0].x: must be at most 9, got 10"),
    ({"points": [{"x": True}]}, "points[0].x: expected an integer, got true"),
    ({"points": [{"x": 1, "name": ""}]}, "points[0].name: must not be empty"),
    ({"points": [{"x": 1, "y": 2}]}, 'points[0]: unexpected key "y"'),
    ({"pair": ["a", "b"]}, "pair[1]: expected a number, got 'b'"),
    ({"pair": ["a", float("nan")]}, "pair[1]: expected a number, got nan"),
    ({"counts": {"7": "x"}}, "counts.7: expected an integer, got 'x'"),
    ({"counts": {"x": 1}}, 'counts: unexpected key "x"'),
    ({"either": {"a": 1}}, 'either: missing key "b"'),  # anyOf: the alternative that came closest
    ({"kind": "r"}, "kind: expected one of 'p', 'q', got 'r'"),
    ({"version": 2}, "version: expected 1, got 2"),
    ([], "top level: expected an object, got an array"),
])
def test_first_violation(doc, message):
    with pytest.raises(SchemaViolation) as e:
        check(doc, DOC)
    assert str(e.value) == message
    assert errors(doc, DOC)[0] == message


def test_all_violations_in_document_order_and_none_below_a_wrong_type():
    doc = {"points": [{"x": -1, "y": 0}, "p"], "kind": "r"}
    assert errors(doc, DOC) == ["points[0].x: must be at least 0, got -1", 'points[0]: unexpected key "y"',
                                "points[1]: expected an object, got 'p'", "kind: expected one of 'p', 'q', got 'r'"]


def test_messages_stay_on_one_line():
    # ("$" matches before a final newline, so "1\n" is a key of the "^[0-9]+$" pattern)
    doc = {"counts": {"a\nb": 1, "1\n": "x\ny", "\u2028": 1, 'q"': 1}, "points": [{"x": 1, "z\r": 2}], "kind": "\n"}
    errs = errors(doc, DOC)
    assert len(errs) == 6
    for e in errs:
        assert len(e.splitlines()) == 1, e
    assert 'counts: unexpected key "a\\nb"' in errs
    assert 'counts: unexpected key "q\\""' in errs
    assert 'counts: unexpected key "\\u2028"' in errs
    assert "counts[\"1\\n\"]: expected an integer, got 'x\\ny'" in errs


def test_validate_picks_the_schema_by_the_documents_own_field():
    assert validate([1]) == ['top level: not a Caracal document (no "schema" field)']
    assert validate({"schema": "caracal.nope/9"}) == ["schema: unknown schema 'caracal.nope/9'"]
    assert validate({"schema": ["caracal.probe/1"]}) == ["schema: unknown schema an array"]
    errs = validate({"schema": "caracal.bench/1"})
    assert errs and all(e.startswith("top level: missing key") for e in errs)


def test_every_schema_file_loads_and_the_profile_example_passes():
    for name in list(schema.DOCUMENT_SCHEMAS.values()) + ["profile.schema.json"]:
        assert schema.load(name)["type"] == "object"
    doc = json.loads((ROOT / "tests" / "python" / "data" / "profile-4ranks.json").read_text())
    assert errors(doc, schema.load("profile.schema.json")) == []
