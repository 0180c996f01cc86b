"""Collective algorithm advice: for each heavy collective (call x communicator size), the
observed sizes, communicator size and root pattern, replayed against every native and
Caracal algorithm (measure.collective, i.e. caracal tune's measurement), and the fastest
with its exact settings.

The root pattern decides how the replay calls: `rotate` (a new root on every call) where
most consecutive calls change root; `b2b` (back to back) where the calls follow each
other with little else between them (the call's own time is most of the run); else
`barrier` (calls separated, as calls with computation between them are). Back to back
would credit pipelined algorithms with an overlap of consecutive calls that computation
between the calls does not allow."""
from typing import List, Optional

from . import library, measure
from .general import site_ref
from ..profile import rank_entries

HEAVY_SHARE = 0.05      # a collective with at least this share of all MPI time
ROTATE_SHARE = 0.5      # root changes per rooted call above which the replay rotates the root
B2B_SHARE = 0.5         # a call lasting this share of the mean interval between calls: back to back
MAX_SIZES = 3
MIN_SITE_CALLS = 0.05  # sites with fewer of the collective's calls do not set the replayed sizes
ROOTED = ("MPI_Bcast", "MPI_Reduce", "MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv")


def family(call: str) -> Optional[str]:
    """caracal tune's name of an MPI collective (MPI_Bcast -> bcast), None for the others."""
    name = call[4:].lower() if call.startswith("MPI_") else call.lower()
    return name if name in measure.tune.DEFAULT_COLLS else None


def heavy(doc, mpi_total: float) -> List[dict]:
    """Advice skeletons (unmeasured) for the heavy collectives."""
    out = []
    ranks = [r for r in rank_entries(doc) if r is not None]
    run = max((r["time_total"] for r in ranks), default=0)
    n = max(1, len(ranks))
    for c in doc["collectives"]:
        fam = family(c["call"])
        if fam is None or c["comm_size"] < 2 or not c["calls"]:
            continue
        sites = [s for s in doc["callsites"] if s["call"] == c["call"]]
        t = sum(s["time"] for s in sites)
        if mpi_total <= 0 or t < HEAVY_SHARE * mpi_total:
            continue
        # sizes: the exact mean per site where all its calls are one size bin, else the bins' tops
        sizes = set()
        calls = sum(s["count"] for s in sites)
        for s in sites:
            if s["count"] < MIN_SITE_CALLS * calls:
                continue  # a rare call (a final check) says nothing about the loop's sizes
            bins = [(b, k) for b, k, _ in s["histogram"] if k > 0]
            if len(bins) == 1:
                sizes.add(s["bytes"] // max(1, s["count"]))
            else:
                sizes.update((1 << b) - 1 if b else 0 for b, k in sorted(bins, key=lambda x: -x[1])[:MAX_SIZES])
        if fam == "barrier":
            sizes = {0}
        sizes = sorted(sizes)[-MAX_SIZES:]
        changes = c.get("root_change_calls", 0) / max(1, c["calls"])
        if c["call"] in ROOTED and changes >= ROTATE_SHARE:
            pattern = "rotate"
        elif run > 0 and c["count"] and _per_call(sites) >= B2B_SHARE * run / c["count"]:
            # each call takes at least half of the mean interval between calls: they follow
            # each other closely
            pattern = "b2b"
        else:
            pattern = "barrier"
        roots = "-" if c["call"] not in ROOTED else (
            f"fixed root {next(iter(c['roots']))}" if len(c["roots"]) == 1 else
            f"{len(c['roots'])} roots, {c['root_changes']} changes in {c['count']} calls")
        out.append({"area": "collective", "rule": "collective-algorithm",
                    "title": f"{c['call']} on {c['comm_size']} ranks, {', '.join(map(str, sizes))} bytes, {roots}: "
                             f"{100 * t / mpi_total:.0f}% of MPI time",
                    "sites": [site_ref(s) for s in sites], "collective": fam, "comm_size": c["comm_size"],
                    "sizes": sizes, "pattern": pattern, "roots": roots, "share": round(t / mpi_total, 3)})
    return out


def _per_call(sites) -> float:
    """Mean time of one call (one rank) at the sites that make up the loop: a rare call (a final
    check absorbing the other ranks' wait) would make the loop's calls look long."""
    calls = sum(s["count"] for s in sites)
    main = [s for s in sites if s["count"] >= MIN_SITE_CALLS * calls] or sites
    return sum(s["time"] for s in main) / max(1, sum(s["count"] for s in main))


def apply_measurement(entry: dict, lib: library.LibraryInfo, rows: List[dict]) -> None:
    """Fill ``entry`` from tune's rows: the winner per size, its settings and the gain."""
    mpi = lib.installed
    fam = entry["collective"]
    per_size = []
    for r in rows:
        if r.get("native_alg"):
            win, us = f"native {r['native_alg']}", r["native_alg_us"]
        elif r["winner"] != "native":
            win, us = r["winner"], r["best_us"]
        else:
            win, us = "native", r["native_us"]
        per_size.append({"bytes": r["bytes"], "native_us": r["native_us"],
                         "native_spread_us": [r["native_p25_us"], r["native_p75_us"]],
                         "winner": win, "winner_us": round(us, 4),
                         "gain_percent": round(100 * (1 - us / r["native_us"]), 1) if r["native_us"] > 0 else None,
                         "all_us": {**r["all"], **{f"native {k}": v for k, v in r.get("native_algs_us", {}).items()}}})
    entry["measured_sizes"] = per_size
    winners = {p["winner"] for p in per_size}
    base = sum(p["native_us"] for p in per_size)
    best = sum(p["winner_us"] for p in per_size)
    entry["gain"] = {"measured": True, "method": f"caracal tune's replay ({entry['pattern']} pattern, "
                                                 f"{measure.COLL_REPS} interleaved repetitions per candidate)",
                     "unit": "us", "baseline": round(base, 3), "suggested": round(best, 3),
                     "gain_percent": round(100 * (1 - best / base), 1) if base > 0 else None,
                     "wins": winners != {"native"}}
    if winners == {"native"}:
        entry["verdict"] = "keep"
        entry["title"] += f"; measured: the library's own choice is the fastest here"
        return
    # one setting for the whole family: the winner of the heaviest size
    top = max(per_size, key=lambda p: p["bytes"])
    win = top["winner"] if top["winner"] != "native" else next(p["winner"] for p in per_size if p["winner"] != "native")
    if win.startswith("native "):
        env, label = measure.native_setting(mpi, fam, win.split(" ", 1)[1])
        entry["env"] = env
        entry["suggested"] = label
        entry["under_caracal"] = False
        if lib.kind == "openmpi":
            entry["warnings"] = openmpi_preempting(mpi)
    else:
        entry["env"] = {f"CARACAL_{fam.upper()}": win}
        entry["suggested"] = f"Caracal {win}"
        entry["under_caracal"] = True
    entry["knob"] = ", ".join(entry["env"])
    entry["current"] = "the library's default selection"
    entry["title"] += f"; measured: {entry['suggested']} is {entry['gain']['gain_percent']}% faster than the default"


def openmpi_preempting(mpi: str) -> List[str]:
    """Open MPI components that would take a collective before coll/tuned (higher priority)."""
    out = []
    tuned = library.ompi_info_params(mpi, "coll", "tuned").get("coll_tuned_priority", "30")
    for comp in ("han", "hcoll", "ucc", "adapt"):
        pr = library.ompi_info_params(mpi, "coll", comp).get(f"coll_{comp}_priority")
        try:
            if pr is not None and int(pr) > int(tuned):
                out.append(f"coll/{comp} has priority {pr} > tuned's {tuned}: it takes the call first; "
                           f"exclude it (OMPI_MCA_coll=^{comp}) for the tuned setting to apply")
        except ValueError:
            pass
    return out
