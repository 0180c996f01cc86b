"""Which algorithms model a collective, and their predicted times over sizes and rank counts.

Flat algorithms use the top level's parameters (``net`` when a probe of emulated hosts was
given, else ``shm``); Caracal's hierarchical schedules use ``shm`` inside a node of
``node_size`` ranks and ``net`` between nodes; the source's torus models use the top
level's LogGP parameters and need a torus (its dimension count d).
"""
from dataclasses import dataclass, replace
from typing import Callable, Dict, List, Optional

from . import formulas as F, ml

COLLS = ("bcast", "reduce", "allreduce", "barrier", "allgather")


@dataclass
class Params:
    node: F.Hockney
    top: F.Hockney
    top_loggp: F.LogGP
    compute: F.Compute
    node_size: int
    torus_dims: Optional[int]   # d of the torus, None: no torus models
    k: int = 4                  # radix of the k-nomial rows (besides the binomial)
    node_shared: bool = True    # a node-level rank's concurrent flows share one link (ml.Sched)


@dataclass
class Model:
    name: str                   # as in tables and JSON
    algorithm: str              # what it models (Caracal's name where it has one)
    time: Callable[[int, float], float]


def models(coll: str, p: Params) -> List[Model]:
    """The algorithms of ``coll`` with their cost functions (P, m) -> us."""
    top, node, c, k = p.top, p.node, p.compute, p.k
    hier = f"hierarchical (node {p.node_size})"
    # Caracal's schedules as they run (ml.py): chunks in flight at once, concurrent sends
    sched = ml.Sched(node_shared=p.node_shared, combine=c.combine_us_per_byte())
    sag = replace(sched, top_bcast="scatter_allgather")
    rsag = replace(sched, top_allreduce="rsag")
    out: List[Model] = []
    if coll == "bcast":
        out += [Model("binomial", "flat binomial tree (knomial:2)", lambda P, m: F.bcast_knomial(top, P, m, 2)),
                Model(f"{k}-nomial", f"flat {k}-nomial tree (knomial:{k})", lambda P, m: F.bcast_knomial(top, P, m, k)),
                Model("hier", hier + ": knomial:2 per level, chunks and segments in flight at once",
                      lambda P, m: ml.bcast(node, top, P, m, p.node_size, sched)),
                Model("hier-sag", hier + ": leaders scatter_allgather:2 (no chunks), node knomial:2",
                      lambda P, m: ml.bcast(node, top, P, m, p.node_size, sag))]
        if p.torus_dims:
            d = p.torus_dims
            out += [Model("binomial-torus", "source's binomial multicast (LogGP)",
                          lambda P, m: F.bcast_binomial_loggp(p.top_loggp, P, m)),
                    Model("rect", f"source's rectangular multicast, d={d} (LogGP)",
                          lambda P, m: F.bcast_rect(p.top_loggp, P, m, d))]
    elif coll == "reduce":
        out += [Model("binomial", "flat binomial tree (knomial:2)", lambda P, m: F.reduce_knomial(top, c, P, m, 2)),
                Model(f"{k}-nomial", f"flat {k}-nomial tree (knomial:{k})", lambda P, m: F.reduce_knomial(top, c, P, m, k)),
                Model("hier", hier + ": knomial:2 per level",
                      lambda P, m: ml.reduce(node, top, P, m, p.node_size, sched))]
        if p.torus_dims:
            d = p.torus_dims
            out += [Model("binomial-torus", "source's binomial reduction (LogGP)",
                          lambda P, m: F.reduce_binomial_loggp(p.top_loggp, c, P, m)),
                    Model("rect", f"source's rectangular reduction, d={d} (LogGP)",
                          lambda P, m: F.reduce_rect(p.top_loggp, c, P, m, d))]
    elif coll == "allreduce":
        out += [Model("recdbl", "recursive doubling", lambda P, m: F.allreduce_recdbl(top, c, P, m)),
                Model("ring", "ring: reduce-scatter + allgather", lambda P, m: F.allreduce_ring(top, c, P, m)),
                Model("hier", hier + ": node reduce, leaders recdbl|ring, node bcast, chunks in flight at once",
                      lambda P, m: ml.allreduce(node, top, P, m, p.node_size, sched)),
                Model("hier-rsag", hier + ": node reduce, leaders rsag (Rabenseifner), node bcast, chunks in flight at once",
                      lambda P, m: ml.allreduce(node, top, P, m, p.node_size, rsag))]
        if p.torus_dims:
            d = p.torus_dims
            out += [Model("rect", f"rectangular reduce + multicast, d={d} (LogGP)",
                          lambda P, m: F.allreduce_rect(p.top_loggp, c, P, m, d))]
    elif coll == "barrier":
        out += [Model("dissemination", "dissemination", lambda P, m: F.barrier_dissemination(top, P)),
                Model("hier", hier + ": node fan-in, leaders dissemination, node fan-out",
                      lambda P, m: ml.barrier(node, top, P, p.node_size, sched))]
    elif coll == "allgather":
        out += [Model("ring", "ring", lambda P, m: F.allgather_ring(top, P, m)),
                Model("recdbl", "recursive doubling", lambda P, m: F.allgather_recdbl(top, P, m))]
    else:
        raise ValueError(coll)
    return out


def predict(coll: str, p: Params, procs: List[int], sizes: List[int]) -> List[Dict]:
    """One row per (model, P, bytes): {"model", "procs", "bytes", "us"}."""
    rows = []
    for mod in models(coll, p):
        for P in procs:
            for m in sizes:
                rows.append({"model": mod.name, "procs": P, "bytes": m,
                             "us": mod.time(P, 0 if coll == "barrier" else m)})
    return rows


def compare(rows: List[Dict], observed: Dict[tuple, float]) -> List[Dict]:
    """Predictions against observed times (measured here, or simulated: the SimGrid backend
    of the simulation issue hands its table in here). ``observed`` maps
    (model name, procs, bytes) -> us; each matched row gains "observed_us" and
    "rel_err" = (predicted - observed) / observed."""
    out = []
    for r in rows:
        key = (r["model"], r["procs"], r["bytes"])
        if key in observed and observed[key] > 0:
            o = observed[key]
            out.append({**r, "observed_us": o, "rel_err": (r["us"] - o) / o})
    return out
