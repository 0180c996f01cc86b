"""General advice from the profile alone: load imbalance, dominant call sites, storms of small
messages, and blocking rooted collectives on MPI_COMM_WORLD inside loops. Nothing here is
measured: each entry says what the profile shows and what to change in the program."""
import statistics
from typing import List

from ..profile import rank_entries

IMBALANCE_COV = 0.2      # coefficient of variation of MPI time across ranks
IMBALANCE_SHARE = 0.05   # ... and the spread (max - min) at least this share of the run time
DOMINANT_SHARE = 0.25    # a call site with at least this share of all MPI time
STORM_BYTES = 1024       # messages of at most this many bytes (mean) ...
STORM_CALLS = 1000       # ... at least this many per rank ...
STORM_SHARE = 0.05       # ... taking at least this share of MPI time
LOOP_CALLS = 100         # a collective call site called at least this often per rank is in a loop
LOOP_SHARE = 0.05        # ... and worth overlapping when it takes this share of MPI time
P2P_CALLS = ("MPI_Send", "MPI_Isend", "MPI_Ssend", "MPI_Issend", "MPI_Rsend", "MPI_Irsend", "MPI_Bsend",
             "MPI_Ibsend", "MPI_Sendrecv", "MPI_Sendrecv_replace")
ROOTED = ("MPI_Bcast", "MPI_Reduce", "MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv")


def site_ref(s) -> dict:
    return {"call": s["call"], "function": s.get("function"), "file": s.get("file"), "line": s.get("line"),
            "count": s["count"], "bytes": s["bytes"], "time": s["time"]}


def where(s) -> str:
    if s.get("file") and s.get("line"):
        return f"{s['call']} at {s['file']}:{s['line']}"
    return f"{s['call']} in {s.get('function') or s.get('module', '?') + '+' + str(s.get('offset'))}"


def rules(doc) -> List[dict]:
    out = []
    ranks = [r for r in rank_entries(doc) if r is not None]
    mpi_total = sum(r["time_mpi"] for r in ranks)
    if mpi_total <= 0:
        return out
    out += imbalance(doc, ranks)
    out += dominant(doc, mpi_total)
    out += storms(doc, mpi_total)
    out += loop_collectives(doc, mpi_total)
    return out


def imbalance(doc, ranks) -> List[dict]:
    t = [r["time_mpi"] for r in ranks]
    if len(t) < 2 or statistics.mean(t) <= 0:
        return []
    cov = statistics.pstdev(t) / statistics.mean(t)
    run = max(r["time_total"] for r in ranks)
    spread = max(t) - min(t)
    if cov < IMBALANCE_COV or run <= 0 or spread < IMBALANCE_SHARE * run:
        return []
    # the sites that absorb the wait: largest spread of per-rank time
    absorbing = sorted(doc["callsites"], key=lambda s: max(s["per_rank"]["time"]) - min(s["per_rank"]["time"]),
                       reverse=True)[:3]
    busiest = min(range(len(ranks)), key=lambda i: t[i])
    return [{"area": "general", "rule": "load-imbalance",
             "title": f"load imbalance: MPI time varies by {spread:.3g} s across ranks (CoV {cov:.2f}, "
                      f"{100 * spread / run:.0f}% of the run); rank {ranks[busiest]['rank']} spends the least time in MPI "
                      f"(the others wait for it), the waiting is in " + ", ".join(where(s) for s in absorbing),
             "sites": [site_ref(s) for s in absorbing],
             "details": {"cov": round(cov, 3), "spread_s": round(spread, 6), "run_s": round(run, 6),
                         "time_mpi": [round(x, 6) for x in t]},
             "suggestion": "balance the work between ranks (the waiting ranks' MPI time is the imbalance)"}]


def dominant(doc, mpi_total) -> List[dict]:
    out = []
    for s in sorted(doc["callsites"], key=lambda s: s["time"], reverse=True):
        share = s["time"] / mpi_total
        if share < DOMINANT_SHARE:
            break
        out.append({"area": "general", "rule": "dominant-site",
                    "title": f"{where(s)} takes {100 * share:.0f}% of all MPI time "
                             f"({s['count']} calls, {s['bytes']} bytes)",
                    "sites": [site_ref(s)], "details": {"share": round(share, 3)},
                    "suggestion": "start tuning here: the advice on this site's protocol or algorithm matters most"})
    return out


def storms(doc, mpi_total) -> List[dict]:
    out, n = [], max(1, doc["nranks"])
    for s in doc["callsites"]:
        if s["call"] not in P2P_CALLS or not s["count"]:
            continue
        mean = s["bytes"] / s["count"]
        per_rank = s["count"] / n
        share = s["time"] / mpi_total
        if mean <= STORM_BYTES and per_rank >= STORM_CALLS and share >= STORM_SHARE:
            out.append({"area": "general", "rule": "small-message-storm",
                        "title": f"{where(s)}: {s['count']} messages of {mean:.0f} bytes on average "
                                 f"({100 * share:.0f}% of MPI time): aggregate them into fewer, larger messages",
                        "sites": [site_ref(s)],
                        "details": {"mean_bytes": round(mean, 1), "calls_per_rank": round(per_rank, 1),
                                    "share": round(share, 3)},
                        "suggestion": "pack the messages to the same destination into one buffer per step "
                                      "(each message pays the latency once)"})
    return out


def loop_collectives(doc, mpi_total) -> List[dict]:
    """Rooted collectives on MPI_COMM_WORLD with a single root, called in a loop."""
    world = {c["call"] for c in doc["collectives"]
             if c["comm_size"] == doc["nranks"] and len(c["roots"]) == 1 and c["call"] in ROOTED}
    out, n = [], max(1, doc["nranks"])
    for s in doc["callsites"]:
        if s["call"] not in world:
            continue
        share = s["time"] / mpi_total
        if s["count"] / n >= LOOP_CALLS and share >= LOOP_SHARE:
            nb = "MPI_I" + s["call"][4:].lower()
            out.append({"area": "general", "rule": "blocking-collective-in-loop",
                        "title": f"{where(s)}: {s['count'] // n} calls per rank on MPI_COMM_WORLD with one root "
                                 f"({100 * share:.0f}% of MPI time); use {nb} and overlap it with the next "
                                 "iteration's independent work",
                        "sites": [site_ref(s)],
                        "details": {"calls_per_rank": s["count"] // n, "share": round(share, 3)},
                        "suggestion": f"{nb} + MPI_Wait where the result is needed"})
    return out
