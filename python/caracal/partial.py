"""Partial profiles: when a job ends in MPI_Abort, a crash or a signal, each rank that
could still run code wrote its own piece, OUT.rank<N>.json (caracal.profile/1 with one
rank). finish_profile merges the pieces into OUT, marked partial, with the ranks that
left nothing listed in missing_ranks. The merge follows docs/profile-format.md: sums,
minima and maxima; call sites keyed by (call, module, offset); collectives recomputed
from their per-rank-call fields."""
import json
import os
import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from . import safejson

PIECE = re.compile(r"\.rank(\d+)\.json$")
PER_RANK_SUMS = ("count", "time", "bytes", "bytes_sent", "bytes_recv")
PER_RANK_MIN, PER_RANK_MAX = ("time_min",), ("time_max",)


def _pieces(out: Path) -> List[Tuple[int, Path]]:
    found = []
    for p in out.parent.glob(out.name + ".rank*.json"):
        m = PIECE.search(p.name)
        if m and p.name == f"{out.name}.rank{m.group(1)}.json":
            found.append((int(m.group(1)), p))
    return sorted(found)


def leftover_pieces(out) -> List[Path]:
    """The per-rank pieces OUT.rank<N>.json that a run left beside OUT."""
    return [p for _, p in _pieces(Path(out))]


def _merge_stat(a: dict, b: dict) -> None:
    if b.get("count", 0) and (not a.get("count", 0) or b["time_min"] < a["time_min"]):
        a["time_min"] = b["time_min"]
    a["time_max"] = max(a.get("time_max", 0), b.get("time_max", 0))
    if "size_min" in b and any(h[1] for h in b.get("histogram", [])):
        sized = any(h[1] for h in a.get("histogram", []))
        a["size_min"] = min(a["size_min"], b["size_min"]) if sized else b["size_min"]
        a["size_max"] = max(a.get("size_max", 0), b["size_max"])
    for k in ("count", "bytes", "bytes_sent", "bytes_recv", "time"):
        a[k] = a.get(k, 0) + b.get(k, 0)
    hist: Dict[int, List[int]] = {h[0]: [h[1], h[2]] for h in a.get("histogram", [])}
    for bin_, n, nbytes in b.get("histogram", []):
        e = hist.setdefault(bin_, [0, 0])
        e[0] += n
        e[1] += nbytes
    a["histogram"] = [[k, v[0], v[1]] for k, v in sorted(hist.items())]


def _blank_stat() -> dict:
    return {"count": 0, "bytes": 0, "bytes_sent": 0, "bytes_recv": 0, "size_min": 0, "size_max": 0, "time": 0.0,
            "time_min": 0.0, "time_max": 0.0, "histogram": []}


def merge(docs: List[dict], nranks: int) -> dict:
    """Merge per-rank pieces (each describing one rank) into one partial document."""
    first = docs[0]
    out = {k: first.get(k) for k in ("schema", "caracal_version", "mpi_library", "mpi_version", "program", "argv",
                                     "profile")}
    ranks = sorted((r for d in docs for r in d.get("ranks", [])), key=lambda r: r["rank"])
    present = {r["rank"] for r in ranks}
    out.update(partial=True, missing_ranks=[r for r in range(nranks) if r not in present], nranks=nranks,
               ranks=ranks)

    calls: Dict[str, dict] = {}
    sites: Dict[tuple, dict] = {}
    msgs = [[0] * nranks for _ in range(nranks)]
    nbytes = [[0] * nranks for _ in range(nranks)]
    coll: Dict[tuple, dict] = {}
    for d in docs:
        for c in d.get("calls", []):
            e = calls.setdefault(c["call"], dict(_blank_stat(), call=c["call"]))
            _merge_stat(e, c)
        for s in d.get("callsites", []):
            key = (s["call"], s.get("module"), s.get("offset"))
            if key not in sites:
                sites[key] = dict(_blank_stat(), call=s["call"], function=None, file=None, line=None,
                                  inlined_into=[], module=s.get("module"), offset=s.get("offset"),
                                  per_rank={k: [0] * nranks for k in PER_RANK_SUMS + PER_RANK_MIN + PER_RANK_MAX})
            e = sites[key]
            for k in ("function", "file", "line"):
                if e[k] is None and s.get(k) is not None:
                    e[k] = s[k]
            if not e["inlined_into"] and s.get("inlined_into"):
                e["inlined_into"] = s["inlined_into"]
            _merge_stat(e, s)
            pr = s.get("per_rank", {})
            for k in PER_RANK_SUMS + PER_RANK_MIN + PER_RANK_MAX:
                for i, v in enumerate(pr.get(k, [])[:nranks]):
                    cur = e["per_rank"][k]
                    if k in PER_RANK_SUMS:
                        cur[i] += v
                    elif k in PER_RANK_MAX:
                        cur[i] = max(cur[i], v)
                    elif v:  # a piece's entries for the other ranks are 0, not minima
                        cur[i] = min(cur[i], v) if cur[i] else v
        t = d.get("traffic", {})
        for i, row in enumerate(t.get("messages", [])[:nranks]):
            for j, v in enumerate(row[:nranks]):
                msgs[i][j] += v
        for i, row in enumerate(t.get("bytes", [])[:nranks]):
            for j, v in enumerate(row[:nranks]):
                nbytes[i][j] += v
        for c in d.get("collectives", []):
            e = coll.setdefault((c["call"], c["comm_size"]), {"call": c["call"], "comm_size": c["comm_size"],
                                                              "calls": 0, "bytes": 0, "root_change_calls": 0,
                                                              "root_calls": {}})
            e["calls"] += c.get("calls", 0)
            e["bytes"] += c.get("bytes", 0)
            e["root_change_calls"] += c.get("root_change_calls", 0)
            for root, n in c.get("root_calls", {}).items():
                e["root_calls"][root] = e["root_calls"].get(root, 0) + n
    for e in coll.values():  # per operation: every member of the communicator made one call
        size = max(e["comm_size"], 1)
        e["count"] = e["calls"] // size
        e["root_changes"] = e["root_change_calls"] // size
        e["roots"] = {r: n // size for r, n in e["root_calls"].items()}
    out["calls"] = sorted(calls.values(), key=lambda c: -c["time"])
    out["callsites"] = sorted(sites.values(), key=lambda s: -s["time"])
    out["traffic"] = {"messages": msgs, "bytes": nbytes}
    out["collectives"] = list(coll.values())
    return out


def finish_profile(out: Path) -> Optional[str]:
    """'complete' if OUT exists; 'partial' after merging OUT.rank<N>.json pieces into OUT
    (the pieces are removed); None if there is nothing at all."""
    out = Path(out)
    for tmp in out.parent.glob(out.name + ".rank*.json.tmp*"):
        tmp.unlink(missing_ok=True)  # a rank killed while writing its piece
    if out.exists():
        return "complete"
    pieces = _pieces(out)
    docs = []
    for _, p in pieces:
        try:
            docs.append(safejson.loads(p.read_text()))
        except (OSError, ValueError):
            continue  # a piece cut short by the crash: that rank counts as missing
    if not docs:
        for _, p in pieces:
            p.unlink(missing_ok=True)
        return None
    nranks = max(int(d.get("nranks", 0)) for d in docs)
    merged = merge(docs, nranks)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(merged, indent=1) + "\n")
    os.replace(tmp, out)
    for _, p in pieces:
        p.unlink(missing_ok=True)
    return "partial"
