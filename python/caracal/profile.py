"""Loading and validating profile documents (caracal.profile/1, docs/profile-format.md).

The structure (keys, types, ranges) is in schemas/profile.schema.json; the
checks that relate one value to another (matrix shapes, one entry per rank)
are here. Anything wrong becomes one UsageError line naming the file and
the place in the document.
"""
from .errors import UsageError
from .jsondoc import read_json, schema_of
from .schema import SchemaViolation, check, load

SCHEMA = "caracal.profile/1"
# callsites[].per_rank lists, nranks entries each
PER_RANK_LISTS = ("count", "time", "bytes", "time_min", "time_max", "bytes_sent", "bytes_recv")


def json_schema() -> dict:
    """schemas/profile.schema.json (shared, cached: do not modify it)."""
    return load("profile.schema.json")


def load_profile(path) -> dict:
    """The profile in ``path``, checked; UsageError with one line if it is not a valid profile."""
    doc = read_json(path)
    validate(doc, path)
    return doc


def validate(doc: dict, path="profile") -> None:
    schema = schema_of(path, doc)
    if schema != SCHEMA:
        raise UsageError(f"{path}: schema is \"{schema}\", expected \"{SCHEMA}\"")
    try:
        check(doc, json_schema())
        _check_consistency(doc)
    except SchemaViolation as e:
        raise UsageError(f"{path}: invalid profile: {e}") from None


def _check_consistency(doc):
    n = doc["nranks"]
    partial = doc["partial"]
    seen = set()
    for i, r in enumerate(doc["ranks"]):
        if r["rank"] >= n:
            raise SchemaViolation(f"ranks[{i}].rank", f"{r['rank']} is not below nranks ({n})")
        if r["rank"] in seen:
            raise SchemaViolation(f"ranks[{i}].rank", f"rank {r['rank']} appears twice")
        seen.add(r["rank"])
        if not partial and r["rank"] != i:
            raise SchemaViolation(f"ranks[{i}].rank", f"expected {i} (entries are in rank order)")
    if not partial and len(doc["ranks"]) != n:
        raise SchemaViolation("ranks", f"has {len(doc['ranks'])} entries for nranks = {n}")
    for i, m in enumerate(doc["missing_ranks"]):
        if m >= n:
            raise SchemaViolation(f"missing_ranks[{i}]", f"{m} is not below nranks ({n})")
    for name in ("messages", "bytes"):
        _square(doc["traffic"][name], n, f"traffic.{name}")
    for i, site in enumerate(doc["callsites"]):
        for key, values in site["per_rank"].items():
            if key in PER_RANK_LISTS and len(values) != n:
                raise SchemaViolation(f"callsites[{i}].per_rank.{key}",
                                      f"has {len(values)} entries for nranks = {n}")
    for i, c in enumerate(doc["collectives"]):
        if c["comm_size"] > n:
            raise SchemaViolation(f"collectives[{i}].comm_size", f"{c['comm_size']} exceeds nranks ({n})")
        for root in c["roots"]:
            if int(root) >= c["comm_size"]:
                raise SchemaViolation(f"collectives[{i}].roots",
                                      f"root {root} is not below comm_size ({c['comm_size']})")


def _square(matrix, n, where):
    if len(matrix) != n:
        raise SchemaViolation(where, f"has {len(matrix)} rows, expected nranks x nranks = {n} x {n}")
    for i, row in enumerate(matrix):
        if len(row) != n:
            raise SchemaViolation(f"{where}[{i}]", f"has {len(row)} columns, expected {n} (nranks)")


def rank_entries(doc) -> list:
    """Rank entries indexed by rank; None for ranks a partial profile has no data for."""
    out = [None] * doc["nranks"]
    for r in doc["ranks"]:
        out[r["rank"]] = r
    return out
