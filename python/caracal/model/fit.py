"""Model parameters from `caracal probe` documents (docs/probe-format.md), one set per level.

A document's level is where its two ranks talked: ``net`` when it ran on emulated hosts
(``options.testbed``), ``shm`` otherwise (two ranks of one node, the library's shared
memory). Per level:

* Hockney alpha, beta: from the pingpong points (one-way time per size; the probe's result,
  its best trial, `latency_us`: each trial is a mean over its repetitions, so one
  descheduling of either rank adds a time slice to a whole trial, and on a loaded machine
  the median trial measures the scheduler, not the link), by least squares
  on the *relative* error, min sum ((alpha + m beta - t) / t)^2, so that the small sizes,
  where alpha matters, weigh as much as the large ones (plain least squares on times lets
  1 MiB decide alpha, which then comes out negative).
* LogGP L, o, G: G = beta and L + 2o = alpha (a pingpong's one-way time). A pingpong cannot
  tell L from o; a ``stream`` document of the same level can: its per-message time at the
  smallest size is the sender's gap, which bounds o, so o = min(gap, alpha / 2) and
  L = alpha - 2o. Without one, o = L = alpha / 3 (stated in the output as assumed).
"""
import time
from dataclasses import dataclass
from typing import Dict, List, Optional

from ..errors import UsageError
from .formulas import Compute, Hockney, LogGP


@dataclass
class LevelFit:
    level: str
    hockney: Hockney
    loggp: LogGP
    o_source: str          # "stream" or "assumed"
    points: int
    max_rel_err: float     # of the Hockney line over the fitted points
    sources: List[str]


def level_of(doc: dict) -> str:
    return "net" if isinstance(doc.get("options"), dict) and doc["options"].get("testbed") else "shm"


def point_time(p: dict):
    """A probe point's one-way time: the best trial (`latency_us`, the probe's result), the
    median trial only where a document lacks it. Collectives are timed per repetition with
    late starts discarded (caracal-collbench), so the undisturbed trial is the comparable
    one; the median of a few trial means carries every preemption on a loaded machine
    (emulated hosts at load 6-10: median trials of 18-235 us per one-way 1-128 B message
    where the shortest 8-byte round trip took 13-17 us)."""
    return p.get("latency_us", p.get("latency_us_median"))


def _times(doc: dict, path: str):
    pts = []
    for p in doc.get("points", []):
        t = point_time(p)
        if t is None or p.get("size") is None:
            continue
        if t <= 0:
            raise UsageError(f"{path}: size {p['size']} has a non-positive time {t}")
        pts.append((float(p["size"]), float(t)))
    return pts


def hockney_fit(pts) -> Hockney:
    """alpha, beta minimising sum ((alpha + m beta - t)/t)^2 over (m, t) points."""
    if len({m for m, _ in pts}) < 2:
        raise UsageError("a pingpong fit needs at least two distinct sizes")
    # weighted normal equations with weights 1/t^2
    s00 = s01 = s11 = r0 = r1 = 0.0
    for m, t in pts:
        w = 1.0 / (t * t)
        s00 += w
        s01 += w * m
        s11 += w * m * m
        r0 += w * t
        r1 += w * m * t
    det = s00 * s11 - s01 * s01
    alpha = (r0 * s11 - r1 * s01) / det
    beta = (s00 * r1 - s01 * r0) / det
    return Hockney(alpha, beta)


def fit_levels(docs: Dict[str, dict], size_range=(0, float("inf"))) -> Dict[str, LevelFit]:
    """{path: probe document} -> {level: LevelFit}. Pingpong documents give the Hockney
    line; stream documents, when present, split alpha into L and o."""
    pp: Dict[str, list] = {}
    gaps: Dict[str, float] = {}
    srcs: Dict[str, list] = {}
    for path, doc in docs.items():
        if doc.get("schema") != "caracal.probe/1":
            raise UsageError(f"{path}: not a probe document (schema {doc.get('schema')!r}); "
                             "model parameters come from `caracal probe --json`")
        lv = level_of(doc)
        pts = [(m, t) for m, t in _times(doc, path) if size_range[0] <= m <= size_range[1]]
        if doc.get("mode") == "pingpong":
            pp.setdefault(lv, []).extend(pts)
            srcs.setdefault(lv, []).append(path)
        elif doc.get("mode") == "stream":
            if pts:
                g = min(pts)[1]
                gaps[lv] = min(gaps.get(lv, g), g)
                srcs.setdefault(lv, []).append(path)
        else:
            raise UsageError(f"{path}: mode {doc.get('mode')!r} is not used by the model "
                             "(give pingpong, and optionally stream, documents)")
    if not pp:
        raise UsageError("no pingpong document among --probe (run `caracal probe --json P.json`)")
    out = {}
    for lv, pts in pp.items():
        h = hockney_fit(pts)
        if h.alpha <= 0 or h.beta <= 0:
            raise UsageError(f"level {lv}: the fit gives alpha={h.alpha:.3g} us, beta={h.beta:.3g} us/B; "
                             "not a latency-bandwidth line (too few or too noisy sizes?)")
        if lv in gaps:
            o, src = min(gaps[lv], h.alpha / 2), "stream"
        else:
            o, src = h.alpha / 3, "assumed"
        err = max(abs(h.msg(m) - t) / t for m, t in pts)
        out[lv] = LevelFit(lv, h, LogGP(h.alpha - 2 * o, o, h.beta), src, len(pts), err, srcs[lv])
    return out


def measure_compute(n: int = 1 << 17, trials: int = 7) -> Compute:
    """This machine's combine rates, the source's gamma and beta_mem, timed with numpy:
    gamma from an in-cache double addition (a += b on 1 MiB), memory bandwidth from a copy
    of 4 MiB (the last-level cache: collectives combine messages that were just received,
    so DRAM bandwidth would overstate the cost). Best of a few trials; a model input, not a
    benchmark."""
    import numpy as np
    a, b = np.ones(n), np.ones(n)
    best = float("inf")
    for _ in range(trials):
        t0 = time.perf_counter()
        np.add(a, b, out=a)
        best = min(best, time.perf_counter() - t0)
    gamma = n / (best * 1e6)
    big = np.ones(1 << 19)
    dst = np.empty_like(big)
    best = float("inf")
    for _ in range(trials):
        t0 = time.perf_counter()
        np.copyto(dst, big)
        best = min(best, time.perf_counter() - t0)
    mem_bw = 2 * big.nbytes / (best * 1e6)  # read + write
    return Compute(gamma, mem_bw)


def compute_from(gflops: Optional[float], gbps: Optional[float]) -> Compute:
    """--gamma GFLOP/s and --mem-bw GB/s (10^9) as per-us rates; measured when not given."""
    if gflops is None or gbps is None:
        meas = measure_compute()
        gflops = gflops if gflops is not None else meas.gamma / 1e3
        gbps = gbps if gbps is not None else meas.mem_bw / 1e3
    return Compute(gflops * 1e3, gbps * 1e3)
