"""caracal.topology/1 documents: reading and checking them, and turning a
hand-written static description (caracal.topology-input/1) into one.

The checks are the same as libcaracal's reader (src/map/topology_read.c), so a
file this module accepts is one the library accepts. Format:
docs/topology-format.md. Every problem is a UsageError with one line.
"""
import json
import math
from pathlib import Path

from . import safejson, schema
from .errors import UsageError

SCHEMA = "caracal.topology/1"
INPUT_SCHEMA = "caracal.topology-input/1"
MAX_LEVELS = 8
NAME_MAX = 15
# Levels a static file may name above the node, bottom to top.
UPPER_LEVELS = ("switch", "cluster", "site")
# Nominal one-way latencies (s) between two ranks whose lowest common level is
# the key; used only when a static file gives no matrix. Orders of magnitude
# of shared memory, one switch, a machine room and a campus link.
NOMINAL = {"socket": 5e-7, "node": 1e-6, "switch": 2e-5, "cluster": 1e-4, "site": 1e-3}


def _reject_constant(name):
    raise ValueError(f"{name} is not valid JSON")


def _unique_keys(pairs):
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise ValueError(f'duplicate key "{k}"')
        seen[k] = v
    return seen


def load_json(path) -> dict:
    """Strict JSON (no NaN/Infinity, no duplicate keys); one-line errors."""
    p = Path(path)
    try:
        text = p.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}")
    if not text.strip():
        raise UsageError(f"{path}: empty file")
    try:
        return safejson.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as e:
        where = "unexpected end of file (truncated?)" if e.pos >= len(text.rstrip()) else f"line {e.lineno}"
        raise UsageError(f"{path}: not valid JSON: {where}: {e.msg}")
    except ValueError as e:
        raise UsageError(f"{path}: not valid JSON: {e}")


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) or (isinstance(x, float) and x.is_integer())


def _is_num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _check_matrix(name, L, n, what="L"):
    if not isinstance(L, list) or len(L) != n:
        raise UsageError(f'{name}: "{what}" must be a {n} x {n} array of latencies')
    for p, row in enumerate(L):
        if not isinstance(row, list) or len(row) != n:
            raise UsageError(f"{name}: {what}[{p}] must be an array of {n} latencies")
        for q, x in enumerate(row):
            if not _is_num(x) or x < 0:
                raise UsageError(f"{name}: {what}[{p}][{q}] must be a non-negative number (seconds)")
    for p in range(n):
        for q in range(n):
            a, b = L[p][q], L[q][p]
            if p == q and a != 0:
                raise UsageError(f"{name}: {what}[{p}][{q}] must be 0 (the diagonal)")
            if p != q and a <= 0:
                raise UsageError(f"{name}: {what}[{p}][{q}] must be positive")
            if abs(a - b) > 1e-9 * max(a, b):
                raise UsageError(f"{name}: {what} is not symmetric: {what}[{p}][{q}] != {what}[{q}][{p}]")


def _check_nesting(name, levels, n):
    for lo, hi in zip(levels, levels[1:]):
        up = {}
        for r in range(n):
            if up.setdefault(lo["group"][r], hi["group"][r]) != hi["group"][r]:
                raise UsageError(f"{name}: level {lo['name']} does not nest in level {hi['name']}: rank {r}")


def check(doc, name) -> dict:
    """Check a caracal.topology/1 document as libcaracal does; returns it."""
    if not isinstance(doc, dict):
        raise UsageError(f"{name}: not a {SCHEMA} document (the top level is not an object)")
    kind = doc.get("schema")
    if kind != SCHEMA:
        shown = f'"{kind}"' if isinstance(kind, str) else "missing or not a string"
        raise UsageError(f"{name}: not a {SCHEMA} document (\"schema\" is {shown})")
    try:  # keys, types and ranges: schemas/topology.schema.json; how values relate: below
        schema.check(doc, schema.load("topology.schema.json"))
    except schema.SchemaViolation as e:
        raise UsageError(f"{name}: invalid topology: {e}") from None
    n = doc.get("nranks")
    if not _is_int(n) or not 1 <= n <= 1 << 20:
        raise UsageError(f'{name}: "nranks" must be an integer from 1 to {1 << 20}')
    n = int(n)
    if doc.get("source") not in ("measured", "static"):
        raise UsageError(f'{name}: "source" must be "measured" or "static"')
    pairs = n * (n - 1) // 2
    pm, pe = doc.get("pairs_measured"), doc.get("pairs_estimated")
    if not (_is_int(pm) and _is_int(pe) and 0 <= pm <= pairs and 0 <= pe <= pairs and pm + pe == pairs):
        raise UsageError(f'{name}: "pairs_measured" + "pairs_estimated" must be integers adding up to {pairs} (all pairs)')
    levels = doc.get("levels")
    if not isinstance(levels, list) or not 1 <= len(levels) <= MAX_LEVELS:
        raise UsageError(f'{name}: "levels" must be an array of 1 to {MAX_LEVELS} levels')
    seen = set()
    for i, lv in enumerate(levels):
        nm = lv.get("name") if isinstance(lv, dict) else None
        if not isinstance(nm, str) or not 1 <= len(nm.encode()) <= NAME_MAX:
            raise UsageError(f"{name}: levels[{i}].name must be a string of 1 to {NAME_MAX} characters")
        if nm in seen:
            raise UsageError(f'{name}: level "{nm}" appears twice')
        seen.add(nm)
        g = lv.get("group")
        if not isinstance(g, list) or len(g) != n:
            raise UsageError(f"{name}: levels[{i}].group must be an array of {n} group ids (one per rank)")
        for r, x in enumerate(g):
            if not _is_int(x) or not 0 <= x <= n - 1:
                raise UsageError(f"{name}: levels[{i}].group[{r}] must be an integer from 0 to {n - 1}")
        used = set(int(x) for x in g)
        for k in range(max(used) + 1):
            if k not in used:
                raise UsageError(f"{name}: levels[{i}] ({nm}): group id {k} is unused (ids must be 0..k-1)")
    _check_nesting(name, levels, n)
    _check_matrix(name, doc.get("L"), n)
    if "torus" in doc:
        _check_torus(name, doc["torus"], levels)
    return doc


def _check_torus(name, to, levels):
    """The optional "torus": {"dims": [...], "nodes": [...]} joining the `node` groups
    (docs/topology-format.md), checked as src/map/topology_read.c checks it."""
    dims = to.get("dims") if isinstance(to, dict) else None
    if not isinstance(dims, list) or not 1 <= len(dims) <= MAX_LEVELS or not all(_is_int(x) and x >= 1 for x in dims):
        raise UsageError(f'{name}: "torus" must be an object with "dims": 1 to {MAX_LEVELS} positive extents')
    node = next((lv for lv in levels if lv.get("name") == "node"), None)
    if node is None:
        raise UsageError(f'{name}: "torus" joins the "node" groups, but there is no "node" level')
    ng = len(set(node["group"]))
    if math.prod(dims) != ng:
        raise UsageError(f'{name}: torus.dims hold {math.prod(dims)} nodes, the "node" level has {ng} groups')
    nodes = to.get("nodes", list(range(ng)))
    if not isinstance(nodes, list) or sorted(nodes) != list(range(ng)) or not all(_is_int(x) for x in nodes):
        raise UsageError(f"{name}: torus.nodes must list each of the {ng} node group ids once")


def read(path) -> dict:
    return check(load_json(path), str(path))


def dense(keys):
    """Group ids 0..k-1 in order of first appearance."""
    ids = {}
    return [ids.setdefault(k, len(ids)) for k in keys]


def _static_ranks(doc, name):
    ranks, hosts = doc.get("ranks"), doc.get("hosts")
    if (ranks is None) == (hosts is None):
        raise UsageError(f'{name}: give exactly one of "ranks" (objects) or "hosts" (one host name per rank)')
    if hosts is not None:
        if not isinstance(hosts, list) or not hosts or not all(isinstance(h, str) and h for h in hosts):
            raise UsageError(f'{name}: "hosts" must be a non-empty array of host names')
        return [{"host": h} for h in hosts]
    if not isinstance(ranks, list) or not ranks:
        raise UsageError(f'{name}: "ranks" must be a non-empty array of objects')
    allowed = {"host", "package"} | set(UPPER_LEVELS)
    for r, x in enumerate(ranks):
        if not isinstance(x, dict):
            raise UsageError(f"{name}: ranks[{r}] must be an object")
        extra = set(x) - allowed
        if extra:
            raise UsageError(f"{name}: ranks[{r}] has unknown key \"{sorted(extra)[0]}\" (known: {', '.join(sorted(allowed))})")
        if not isinstance(x.get("host"), str) or not x["host"]:
            raise UsageError(f'{name}: ranks[{r}].host must be a non-empty string')
        if "package" in x and (not _is_int(x["package"]) or x["package"] < 0):
            raise UsageError(f"{name}: ranks[{r}].package must be a non-negative integer")
        for lv in UPPER_LEVELS:
            if lv in x and (not isinstance(x[lv], str) or not x[lv]):
                raise UsageError(f"{name}: ranks[{r}].{lv} must be a non-empty string")
    return ranks


def from_static(doc, name) -> dict:
    """A caracal.topology/1 document from a caracal.topology-input/1 one
    (or a caracal.topology/1 one, checked and written back normalised)."""
    if isinstance(doc, dict) and doc.get("schema") == SCHEMA:
        doc = check(doc, name)
        out = dict(doc)
        out["levels"] = [dict(lv, group=dense(lv["group"])) for lv in doc["levels"]]
        return out
    if not isinstance(doc, dict) or doc.get("schema") != INPUT_SCHEMA:
        raise UsageError(f'{name}: a static topology must have "schema": "{INPUT_SCHEMA}" (or be a {SCHEMA} document)')
    unknown = set(doc) - {"schema", "ranks", "hosts", "latency", "L", "comment", "torus"}
    if unknown:
        raise UsageError(f'{name}: unknown key "{sorted(unknown)[0]}" in a static topology')
    ranks = _static_ranks(doc, name)
    n = len(ranks)
    levels = [
        {"name": "socket", "source": "static", "group": dense((x["host"], int(x.get("package", 0))) for x in ranks)},
        {"name": "node", "source": "static", "group": dense(x["host"] for x in ranks)},
    ]
    for lv in UPPER_LEVELS:
        have = [lv in x for x in ranks]
        if any(have) and not all(have):
            raise UsageError(f'{name}: ranks[{have.index(False)}] has no "{lv}" while other ranks do')
        if all(have):
            levels.append({"name": lv, "source": "static", "group": dense(x[lv] for x in ranks)})
    _check_nesting(name, levels, n)

    lat = doc.get("latency", {})
    if not isinstance(lat, dict):
        raise UsageError(f'{name}: "latency" must be an object of level name -> seconds')
    names = [lv["name"] for lv in levels]
    for k, v in lat.items():
        if k not in names + ["world"]:
            raise UsageError(f'{name}: latency for unknown level "{k}" (levels here: {", ".join(names + ["world"])})')
        if not _is_num(v) or v <= 0:
            raise UsageError(f'{name}: latency "{k}" must be a positive number of seconds')
    nominal = {k: lat.get(k, NOMINAL[k]) for k in names}
    nominal["world"] = lat.get("world", 10 * nominal[names[-1]])
    if "L" in doc:
        _check_matrix(name, doc["L"], n)
        L = [[float(x) for x in row] for row in doc["L"]]
    else:
        def common(p, q):
            for lv in levels:
                if lv["group"][p] == lv["group"][q]:
                    return lv["name"]
            return "world"
        L = [[0.0 if p == q else float(nominal[common(p, q)]) for q in range(n)] for p in range(n)]
    if "torus" in doc:
        _check_torus(name, doc["torus"], levels)
    return {
        "schema": SCHEMA,
        "source": "static",
        "nranks": n,
        "ranks": [{"rank": r, "host": x["host"], "shm_group": levels[1]["group"][r], "package": int(x.get("package", 0)),
                   "numa": -1, "core": -1, "pu": -1, "bound": False} for r, x in enumerate(ranks)],
        "levels": levels,
        "pairs_measured": 0,
        "pairs_estimated": n * (n - 1) // 2,
        "L": L,
        "measured": [[0] * n for _ in range(n)],
        "bandwidth": {"message_size": 0, "pairs": []},
        **({"torus": doc["torus"]} if "torus" in doc else {}),
    }


def summary(doc) -> str:
    levels = " ".join(f"{lv['name']}({len(set(lv['group']))})" for lv in doc["levels"])
    return (f"{doc['nranks']} ranks, levels {levels}; pairs measured {doc['pairs_measured']}, "
            f"estimated {doc['pairs_estimated']}")
