"""What a profile report says, as plain data: a header and a list of tables.

The terminal (report_text) and HTML (report_html) renderings both draw from
this, so they always agree.
"""
import os
from dataclasses import dataclass, field
from typing import List, Optional

from . import report_format as fmt
from . import report_sites as sites
from .profile import rank_entries

# Above this many ranks the per-rank table shows a summary and the busiest ranks.
RANK_ROWS_MAX = 16


@dataclass
class Table:
    key: str                  # stable id, used as HTML anchor
    title: str
    columns: List[str]
    rows: List[list]          # formatted cells (str)
    right: List[bool]         # right-align column i (numbers)
    note: Optional[str] = None


@dataclass
class Report:
    title: str
    facts: List[tuple]        # (label, value) lines of the header
    warnings: List[str] = field(default_factory=list)
    tables: List[Table] = field(default_factory=list)


def build(doc: dict, path: str, top: int = 10) -> Report:
    ranks = rank_entries(doc)
    present = [r for r in ranks if r is not None]
    mpi_total = sum(r["time_mpi"] for r in present)
    app_total = sum(r["time_total"] for r in present)
    rep = Report(title=f"Caracal profile: {os.path.basename(doc['program'])}", facts=[
        ("profile", str(path)),
        ("program", " ".join([doc["program"], *doc["argv"]])),
        ("MPI library", f"{doc['mpi_library']} (MPI {doc['mpi_version']})"),
        ("ranks", f"{doc['nranks']} on {len({r['host'] for r in present})} host(s)"),
        ("time", f"{fmt.seconds(max((r['time_total'] for r in present), default=0))} wall (slowest rank); "
                 f"MPI {fmt.percent(mpi_total, app_total)}% of all ranks' time"),
        ("caracal", doc["caracal_version"]),
    ])
    if doc["partial"]:
        missing = doc["missing_ranks"]
        cut = [r["rank"] for r in present if r["partial"]]
        text = "PARTIAL PROFILE: the job did not finish normally"
        if cut:
            text += f"; ranks {_ranklist(cut)} stopped before MPI_Finalize"
        if missing:
            text += f"; no data at all from ranks {_ranklist(missing)}"
        rep.warnings.append(text + ". Totals cover only what was recorded.")
    rep.tables = [
        _per_rank(ranks),
        _per_call(doc, mpi_total, app_total),
        sites.sites_table(doc, top, Table),
        sites.time_table(doc, top, mpi_total, app_total, Table),
        sites.bytes_table(doc, top, Table),
        sites.per_rank_table(doc, ranks, min(top, 5), RANK_ROWS_MAX, Table),
        _sizes(doc),
        _collectives(doc),
        _traffic(doc, top),
    ]
    rep.warnings += [m for m in (_mismatch(r) for r in reconcile(doc)) if m]
    return rep


def _ranklist(rs) -> str:
    rs = sorted(rs)
    return ", ".join(map(str, rs[:12])) + (f" and {len(rs) - 12} more" if len(rs) > 12 else "")


def _per_rank(ranks) -> Table:
    cols = ["rank", "host", "total", "MPI", "MPI %"]
    present = [r for r in ranks if r is not None]

    def row(r):
        return [str(r["rank"]), r["host"], fmt.seconds(r["time_total"]), fmt.seconds(r["time_mpi"]),
                fmt.percent(r["time_mpi"], r["time_total"])]

    note = None
    if len(ranks) <= RANK_ROWS_MAX:
        rows = [row(r) if r else [str(i), "(no data)", "-", "-", "-"] for i, r in enumerate(ranks)]
    else:
        frac = sorted(present, key=lambda r: r["time_mpi"] / r["time_total"] if r["time_total"] else 0)
        shown = frac[-5:][::-1] + frac[:1]
        rows = [row(r) for r in shown]
        note = (f"{len(ranks)} ranks: the five with the highest MPI share and the lowest; "
                "the time-per-rank plot shows all.")
    if present:
        tot = sum(r["time_total"] for r in present)
        mpi = sum(r["time_mpi"] for r in present)
        rows.append(["all", "", fmt.seconds(tot), fmt.seconds(mpi), fmt.percent(mpi, tot)])
        rows.append(["COV", "", f"{fmt.cov(r['time_total'] for r in present):.3f}",
                     f"{fmt.cov(r['time_mpi'] for r in present):.3f}", ""])
        lo = min(present, key=lambda r: r["time_mpi"])
        hi = max(present, key=lambda r: r["time_mpi"])
        balance = (f"MPI time per rank: min {fmt.seconds(lo['time_mpi'])} (rank {lo['rank']}), mean "
                   f"{fmt.seconds(mpi / len(present))}, max {fmt.seconds(hi['time_mpi'])} (rank {hi['rank']}); "
                   "COV = sample standard deviation / mean over ranks (mpiP's load-balance measure).")
        note = f"{note} {balance}" if note else balance
    return Table("ranks", "MPI time per rank", cols, rows, [True, False, True, True, True], note)


def _per_call(doc, mpi_total, app_total) -> Table:
    split = sites.has_split(doc)
    cols = ["call", "count", "time", "MPI %", "App %", "min", "mean", "max"]
    cols += ["sent", "received", "collective"] if split else ["bytes"]
    cols += ["mean size"]
    rows = []
    for c in sorted(doc["calls"], key=lambda c: -c["time"]):
        sizes = sites.size_stats(c)
        row = [c["call"], fmt.count(c["count"]), fmt.seconds(c["time"]), fmt.percent(c["time"], mpi_total),
               fmt.percent(c["time"], app_total), fmt.seconds(c["time_min"]),
               fmt.seconds(c["time"] / c["count"]) if c["count"] else "-", fmt.seconds(c["time_max"])]
        row += [fmt.size(b) for b in sites.byte_split(c)] if split else [fmt.size(c["bytes"])]
        rows.append(row + [fmt.size(sizes[1]) if sizes and c["bytes"] else "-"])
    return Table("calls", "Time per MPI call, summed over ranks", cols, rows, [False] + [True] * (len(cols) - 1),
                 "min, mean, max: one call; App % is of all ranks' total time. sent and received: "
                 "point-to-point bytes; collective: the collective calls' buffers (docs/profile-format.md).")




def _sizes(doc) -> Table:
    cols = ["call", "count", "bytes", "smallest", "most calls", "most bytes", "largest"]
    rows = []
    for c in sorted(doc["calls"], key=lambda c: -c["bytes"]):
        h = [b for b in c["histogram"] if b[1] > 0]
        if not h or not c["bytes"]:  # calls that never move data (Wait, Barrier, ...) have no sizes to show
            continue
        bins = sorted(b[0] for b in h)
        most_calls = max(h, key=lambda b: (b[1], -b[0]))
        most_bytes = max(h, key=lambda b: (b[2], -b[0]))
        rows.append([c["call"], fmt.count(c["count"]), fmt.size(c["bytes"]), fmt.bin_range(bins[0]),
                     f"{fmt.bin_range(most_calls[0])} ({fmt.percent(most_calls[1], c['count'])}%)",
                     f"{fmt.bin_range(most_bytes[0])} ({fmt.percent(most_bytes[2], c['bytes'])}%)",
                     fmt.bin_range(bins[-1])])
    return Table("sizes", "Message sizes per call", cols, rows, [False, True, True, True, True, True, True],
                 "Sizes in bytes, in power-of-two classes [from, to); K = 1024, M = 1024 K.")


def _rank_calls(c) -> int:
    """Calls summed over ranks (older profiles have only the per-operation count)."""
    return c["calls"] if "calls" in c else c["count"] * c["comm_size"]


def reconcile(doc) -> list:
    """Per collective function: (call, calls in the collectives table summed over its
    communicator sizes, count in the calls table). The two are equal when every call was
    accounted as a collective; from Fortran some collectives count calls and time only
    (docs/profile-format.md, Limits)."""
    colls = {}
    for c in doc["collectives"]:
        colls[c["call"]] = colls.get(c["call"], 0) + _rank_calls(c)
    counts = {c["call"]: c["count"] for c in doc["calls"]}
    return [(name, n, counts.get(name, 0)) for name, n in sorted(colls.items())]


def _mismatch(r) -> str:
    name, in_colls, in_calls = r
    if in_colls == in_calls:
        return ""
    return (f"{name}: the collectives table accounts {fmt.count(in_colls)} calls, the calls table counts "
            f"{fmt.count(in_calls)} (calls made from Fortran or paused on some ranks are counted only there).")


def _collectives(doc) -> Table:
    cols = ["call", "comm size", "operations", "calls", "bytes", "avg size", "roots", "root changes"]
    rows = []
    for c in sorted(doc["collectives"], key=lambda c: (-c["count"], c["call"])):
        roots = sorted(((int(k), v) for k, v in c["roots"].items()), key=lambda kv: (-kv[1], kv[0]))
        if not roots:
            text = "-"
        else:
            text = " ".join(f"{r}:{n}" for r, n in roots[:4])
            if len(roots) > 4:
                text += f" (+{len(roots) - 4} more)"
        calls = _rank_calls(c)
        rows.append([c["call"], str(c["comm_size"]), fmt.count(c["count"]), fmt.count(calls), fmt.size(c["bytes"]),
                     fmt.size(c["bytes"] / calls) if calls else "-", text, fmt.count(c["root_changes"])])
    agree = [r for r in reconcile(doc) if r[1] == r[2]]
    note = ("operations: collective operations (every member of the communicator calls once); calls: summed "
            "over ranks, as in the calls table; avg size: bytes per call on one rank. roots: root rank:operations, "
            "most used first; root changes: consecutive operations whose root differs from the previous one's.")
    if agree and len(agree) == len(reconcile(doc)):
        note += " Each collective's calls here add up to its count in the calls table."
    return Table("collectives", "Collectives", cols, rows, [False, True, True, True, True, True, False, True], note)


def _traffic(doc, top) -> Table:
    msgs, byts = doc["traffic"]["messages"], doc["traffic"]["bytes"]
    n = doc["nranks"]
    total_b = sum(map(sum, byts))
    total_m = sum(map(sum, msgs))
    pairs = [(byts[s][d], msgs[s][d], s, d) for s in range(n) for d in range(n) if msgs[s][d] or byts[s][d]]
    pairs.sort(key=lambda p: (-p[0], -p[1], p[2], p[3]))
    cols = ["sender", "receiver", "messages", "bytes", "% bytes", "avg size"]
    rows = [[str(s), str(d), fmt.count(m), fmt.size(b), fmt.percent(b, total_b), fmt.size(b / m) if m else "-"]
            for b, m, s, d in pairs[:top]]
    note = (f"Point-to-point only: {fmt.count(total_m)} messages, {fmt.size(total_b)} between "
            f"{len(pairs)} pairs of ranks" + (f"; top {top} shown." if len(pairs) > top else "."))
    return Table("traffic", "Point-to-point traffic, top pairs by bytes", cols, rows, [True] * 6, note)
