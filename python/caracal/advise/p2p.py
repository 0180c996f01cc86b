"""Point-to-point protocol advice: messages just above the eager limit of the transport in use.

A message above the eager limit goes by rendezvous: the sender waits for the receiver to
post its receive (and a handshake), which costs a round trip per message and serialises
ranks that would otherwise overlap. MPI Advisor's CFOUR case: records of 128 KiB, over
MVAPICH2's 17 KB limit. The rule looks at every send call site's size histogram; where
most calls are above the current limit and below EAGER_MAX (beyond which an eager copy
costs more than the handshake saves, and the buffers become large), it suggests the
smallest limit that covers them, rounded up to 4 KiB with room for the protocol header.
"""
from typing import List, Optional

from . import library

SEND_CALLS = ("MPI_Send", "MPI_Isend", "MPI_Ssend", "MPI_Issend", "MPI_Rsend", "MPI_Irsend", "MPI_Bsend",
              "MPI_Ibsend", "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Start", "MPI_Startall")
SYNCHRONOUS = ("MPI_Ssend", "MPI_Issend")  # rendezvous by definition: no eager limit helps them
EAGER_MAX = 1 << 20     # never suggest an eager limit above 1 MiB
HEADER = 256            # room for the protocol header (Open MPI's limits include it)
SITE_SHARE = 0.5        # at least this share of a site's calls above the limit
TIME_SHARE = 0.01       # ... and the site at least this share of the job's MPI time


def _sizes(site) -> List[tuple]:
    """[(representative bytes, calls)] of a site: the exact mean where every call fell into one
    log2 bin (bin k holds [2^(k-1), 2^k)), else the top of each bin (the worst case)."""
    bins = [(b, c) for b, c, _ in site["histogram"] if c > 0]
    if site["call"] in ("MPI_Sendrecv", "MPI_Sendrecv_replace"):
        # bytes are sent + received: half of that is one message
        return [(max(1, site["bytes"] // max(1, site["count"]) // 2), site["count"])] if site["count"] else []
    if len(bins) == 1:
        return [(site["bytes"] // max(1, site["count"]), bins[0][1])]
    return [((1 << b) - 1 if b > 0 else 0, c) for b, c in bins]


def round_up(n: int, to: int = 4096) -> int:
    return -(-n // to) * to


def transport(doc) -> str:
    hosts = {r.get("host") for r in doc["ranks"]}
    return "shm" if len(hosts) <= 1 else "net"


def rule(doc, lib: library.LibraryInfo, mpi_time: float) -> Optional[dict]:
    """One advice entry (without measurement) or None."""
    if lib.kind == "unknown":
        return None
    tr = transport(doc)
    knob = library.eager_knob(lib, tr)
    if knob is None:
        return None
    cur = library.current_value(lib, knob)
    try:
        limit = int(cur)
    except (TypeError, ValueError):
        limit = None
    sites, biggest = [], 0
    for s in doc["callsites"]:
        if s["call"] not in SEND_CALLS or s["call"] in SYNCHRONOUS or not s["count"]:
            continue
        sizes = _sizes(s)
        if limit is None:  # no limit known: the sites whose messages could be eager at all
            above = [(b, c) for b, c in sizes if 0 < b <= EAGER_MAX]
            over = sum(c for b, c in sizes if b > 0)
        else:
            above = [(b, c) for b, c in sizes if b + HEADER > limit and b <= EAGER_MAX]
            over = sum(c for b, c in sizes)
        n_above = sum(c for _, c in above)
        if not n_above or n_above < SITE_SHARE * over or s["time"] < TIME_SHARE * mpi_time:
            continue
        biggest = max(biggest, max(b for b, _ in above))
        sites.append({"call": s["call"], "function": s.get("function"), "file": s.get("file"),
                      "line": s.get("line"), "count": s["count"], "bytes": s["bytes"], "time": s["time"],
                      "calls_above_limit": n_above, "sizes": sorted({b for b, _ in above})})
    if not sites or limit is None and not knob.get("default"):
        return None
    suggested = round_up(biggest + HEADER)
    if limit is not None and suggested <= limit:
        return None
    env = library.knob_env(knob, suggested)
    name = knob["knob"]
    where = "on one host (shared memory)" if tr == "shm" else "between hosts"
    return {"area": "p2p", "rule": "eager-limit",
            "title": f"{sum(s['calls_above_limit'] for s in sites)} sends of up to {biggest} bytes go by rendezvous "
                     f"{where}: raise {name} from {cur if cur is not None else knob.get('default', '?')} to {suggested}",
            "sites": sites, "knob": name, "current": cur, "suggested": str(suggested), "env": env,
            "cost": f"memory: {knob['cost']} ({suggested} bytes instead of {cur})",
            "sizes": sorted({b for s in sites for b in s["sizes"]}),
            "transport": tr}
