"""The report's call-site tables, on par with mpiP's: a site ID for every call site, time
per site with App% and MPI% and its spread across ranks (COV), min/mean/max time and
message size, sent and received bytes kept apart, and the per-rank statistics of the
heaviest sites. Pure functions of the document, so the tests check every column.

Definitions (the same as mpiP's where mpiP has the column):
- site ID: 1 = the site with the most time (summed over ranks), then descending.
- App%: the site's time / all ranks' total time; MPI%: / all ranks' MPI time. Per rank:
  of that rank's total and MPI time.
- COV: sample standard deviation / mean of the site's time over the ranks that called it.
- size: bytes of one call (for nonblocking receives, of one completion); mean = bytes /
  those events (the histogram's count).
- sent, received: point-to-point bytes; collective: the rest of `bytes` (the collective
  buffers, docs/profile-format.md "Bytes").
"""
import os

from . import report_format as fmt


def ranked(doc) -> list:
    """[(site ID, site)], ID 1 = most time; ties by call and location, so IDs are stable."""
    key = (lambda s: (-s["time"], s["call"], s.get("file") or "", s.get("line") or 0, s.get("module") or "",
                      s.get("offset") or ""))
    return list(enumerate(sorted(doc["callsites"], key=key), 1))


def has_split(doc) -> bool:
    """Profiles from before the sent/received split (caracal 0.1) have only `bytes`."""
    return all("bytes_sent" in c for c in doc["calls"] + doc["callsites"])


def byte_split(s) -> tuple:
    """(sent, received, collective) bytes of a call or call site."""
    sent, recv = s.get("bytes_sent", 0), s.get("bytes_recv", 0)
    return sent, recv, s["bytes"] - sent - recv


def size_stats(s) -> tuple:
    """(smallest, mean, largest) bytes of one call, or None where nothing was sized. Older
    profiles have no size_min/size_max: their bounds come from the histogram's classes."""
    events = sum(h[1] for h in s["histogram"])
    if not events:
        return None
    mean = s["bytes"] / events
    if "size_min" in s:
        return s["size_min"], mean, s["size_max"]
    bins = sorted(h[0] for h in s["histogram"] if h[1])
    return fmt.bin_low(bins[0]), mean, (1 << bins[-1]) - 1 if bins[-1] else 0


def site_cov(s) -> float:
    """COV of the site's time over the ranks that called it (mpiP's Aggregate Time COV)."""
    pr = s["per_rank"]
    return fmt.cov(t for t, n in zip(pr["time"], pr["count"]) if n)


def location(s, width=48) -> str:
    if s["file"]:
        loc = f"{s['file']}:{s['line']}" if s["line"] is not None else s["file"]
        return fmt.shorten(loc, width)
    if s["module"]:
        return fmt.shorten(f"{os.path.basename(s['module'])}+{s['offset'] or '?'}", width)
    return "?"


def inlined_into(s) -> str:
    """'caller (file.c:40) < main (file.c:90)': the functions the call was inlined into,
    innermost first, each at the line where it calls the inlined one; '' if not inlined."""
    parts = []
    for f in s.get("inlined_into") or []:
        where = f"{os.path.basename(f['file'])}:{f['line']}" if f.get("file") else "?"
        parts.append(f"{fmt.function_name(f['function'], 32)} ({where})")
    return " < ".join(parts)


def sites_table(doc, top, table_cls):
    """Every site listed by ID with where it is (mpiP's 'Callsites' section)."""
    rows = []
    ids = ranked(doc)
    for i, s in ids[:top]:
        rows.append([str(i), s["call"], fmt.function_name(s["function"], 40), location(s), inlined_into(s) or "-"])
    note = (f"{min(top, len(ids))} of {len(ids)} call sites, ID 1 = most time. inlined into: the functions "
            "the call was inlined into (innermost first) and their lines, so one source line inlined in "
            "several places is told apart. Without debug information the site is module+offset.")
    return table_cls("sites", "Call sites", ["ID", "call", "function", "file:line", "inlined into"], rows,
                     [True, False, False, False, False], note)


def time_table(doc, top, mpi_total, app_total, table_cls):
    """Top sites by time: App%, MPI%, min/mean/max of one call, COV across ranks."""
    rows = []
    for i, s in ranked(doc)[:top]:
        mean = s["time"] / s["count"] if s["count"] else None
        rows.append([str(i), s["call"], fmt.function_name(s["function"], 28), fmt.count(s["count"]),
                     fmt.seconds(s["time"]), fmt.percent(s["time"], app_total), fmt.percent(s["time"], mpi_total),
                     fmt.seconds(s["time_min"]), fmt.seconds(mean), fmt.seconds(s["time_max"]),
                     f"{site_cov(s):.2f}"])
    cols = ["ID", "call", "function", "count", "time", "App %", "MPI %", "min", "mean", "max", "COV"]
    return table_cls("sites-time", "Top call sites by time", cols, rows, [True, False, False] + [True] * 8,
                     "time summed over ranks; min, mean, max: one call; App % and MPI %: of all ranks' total "
                     "and MPI time; COV: spread of the site's time over the ranks that called it "
                     "(sample standard deviation / mean, as mpiP).")


def bytes_table(doc, top, table_cls):
    """Top sites by bytes: sent, received and collective bytes apart; min/mean/max size."""
    split = has_split(doc)
    moving = [(i, s) for i, s in ranked(doc) if s["bytes"] > 0]
    moving.sort(key=lambda p: (-p[1]["bytes"], p[0]))
    rows = []
    for i, s in moving[:top]:
        sizes = size_stats(s)
        lo, mean, hi = (fmt.size(x) for x in sizes) if sizes else ("-", "-", "-")
        row = [str(i), s["call"], fmt.function_name(s["function"], 28), fmt.count(s["count"])]
        if split:
            row += [fmt.size(b) for b in byte_split(s)]
        else:
            row.append(fmt.size(s["bytes"]))
        rows.append(row + [lo, mean, hi])
    cols = ["ID", "call", "function", "count"] + (["sent", "received", "collective"] if split else ["bytes"])
    cols += ["min size", "mean size", "max size"]
    note = (f"{min(top, len(moving))} of {len(moving)} call sites that move data. sent and received: "
            "point-to-point (a Sendrecv has both); collective: the call's buffer (docs/profile-format.md)."
            if split else "This profile predates the sent/received split: bytes are both together.")
    if not all("size_min" in s for _, s in moving):
        note += " min/max size: the bounds of the size classes seen."
    return table_cls("sites-bytes", "Top call sites by bytes", cols, rows,
                     [True, False, False] + [True] * (len(cols) - 3), note)


def per_rank_table(doc, ranks, top, max_ranks, table_cls):
    """mpiP's 'Callsite Time statistics': for the heaviest sites, one row per rank and '*'."""
    app = {r["rank"]: r["time_total"] for r in ranks if r}
    mpi = {r["rank"]: r["time_mpi"] for r in ranks if r}
    app_all, mpi_all = sum(app.values()), sum(mpi.values())
    rows = []
    for i, s in ranked(doc)[:top]:
        pr = s["per_rank"]
        called = [r for r, n in enumerate(pr["count"]) if n]
        if len(called) > max_ranks:  # the slowest and the fastest few, as the rank table does
            by_time = sorted(called, key=lambda r: -pr["time"][r])
            called = sorted(by_time[:max_ranks // 2] + by_time[-(max_ranks - max_ranks // 2):])
        for r in called:
            n = pr["count"][r]
            lo = pr["time_min"][r] if "time_min" in pr else None
            hi = pr["time_max"][r] if "time_max" in pr else None
            rows.append([str(i), s["call"], str(r), fmt.count(n), fmt.seconds(hi), fmt.seconds(pr["time"][r] / n),
                         fmt.seconds(lo), fmt.percent(pr["time"][r], app.get(r)),
                         fmt.percent(pr["time"][r], mpi.get(r))])
        mean = s["time"] / s["count"] if s["count"] else None
        rows.append([str(i), s["call"], "*", fmt.count(s["count"]), fmt.seconds(s["time_max"]), fmt.seconds(mean),
                     fmt.seconds(s["time_min"]), fmt.percent(s["time"], app_all), fmt.percent(s["time"], mpi_all)])
    cols = ["ID", "call", "rank", "count", "max", "mean", "min", "App %", "MPI %"]
    return table_cls("sites-ranks", "Call site statistics per rank", cols, rows,
                     [True, False] + [True] * 7,
                     f"The {min(top, len(doc['callsites']))} sites with the most time; max, mean, min: one call; "
                     "App % and MPI %: of that rank's total and MPI time ('*': all ranks).")
