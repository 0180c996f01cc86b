"""Mapping advice: the profile's point-to-point traffic against the topology's latencies
through the QAP mapper of `caracal map` (commands/map_profile.py, the caracal-qap solver).
Recommended when the predicted cost (sum of bytes x latency) falls by at least THRESHOLD
against the placement the job had (identity). The gain is a prediction of the model, not
a measurement: the entry says so."""
from typing import Optional

from ..commands import map as map_cmd, map_profile
from ..errors import UsageError

THRESHOLD = 0.10


def rule(doc, topo: dict, topo_path: str) -> Optional[dict]:
    n = doc["nranks"]
    if topo["nranks"] != n:
        raise UsageError(f"{topo_path} describes {topo['nranks']} ranks, the profile has {n}: measure the "
                         "topology with as many ranks as the application")
    T = doc["traffic"]["bytes"]
    if not any(any(row) for row in T):
        return None
    L = topo["L"]
    perm = map_profile.solve(T, L, n, map_cmd._solver(), 1, 1.0, None)
    ident = list(range(n))
    c_qap, c_id = map_profile.cost(T, L, perm), map_profile.cost(T, L, ident)
    if c_qap > c_id:
        perm, c_qap = ident, c_id
    gain = 1 - c_qap / c_id if c_id > 0 else 0.0
    entry = {"area": "mapping", "rule": "qap-placement", "sites": [],
             "details": {"cost_identity": c_id, "cost_qap": c_qap, "permutation": perm,
                         "predicted_gain_percent": round(100 * gain, 1), "threshold_percent": 100 * THRESHOLD},
             "gain": {"measured": False, "method": "QAP cost model (bytes x latency of the topology)",
                      "gain_percent": round(100 * gain, 1), "wins": gain >= THRESHOLD}}
    if gain < THRESHOLD:
        entry["title"] = (f"mapping: the QAP placement would cut the predicted communication cost by "
                          f"{100 * gain:.1f}% only (threshold {100 * THRESHOLD:.0f}%): keep the current placement")
        entry["verdict"] = "keep"
        return entry
    try:
        locs = map_profile.slots(topo)
        entry["files"] = {"rankfile": map_profile.rankfile_text("openmpi", perm, locs),
                          "machinefile": map_profile.rankfile_text("mpich", perm, locs)}
    except UsageError as e:  # a topology without hosts per rank: the permutation still holds
        entry["files"] = {}
        entry["details"]["no_files"] = str(e)
    entry["title"] = (f"mapping: place ranks by the QAP solution (rank i -> topology location "
                      f"{' '.join(map(str, perm))}); predicted communication cost {100 * gain:.0f}% lower")
    entry["suggested"] = " ".join(map(str, perm))
    entry["commands"] = {"openmpi": "caracal run --rankfile RANKFILE -- PROGRAM   "
                                    "(or: mpiexec --rankfile RANKFILE PROGRAM)",
                         "mpich": f"caracal run --mpi mpich --hostfile MACHINEFILE -n {n} -- PROGRAM   "
                                  f"(or: mpiexec -f MACHINEFILE -n {n} PROGRAM)"}
    return entry
