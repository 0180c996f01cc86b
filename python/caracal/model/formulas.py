"""Closed-form costs of collective algorithms, in microseconds.

Two families of parameters (python/caracal/model/fit.py fits both from probe documents):

* Hockney: a message of m bytes costs ``alpha + m * beta`` (alpha in us, beta in us/byte).
* LogGP: latency ``L``, per-message CPU overhead ``o`` at each end, and ``G`` us/byte on
  the link (the link bandwidth of the source's formulas is Bn = 1/G). A pingpong's
  one-way time is ``L + 2o + m G``, so Hockney's alpha = L + 2o and beta = G.

Reductions also pay for combining: ``combine_us_per_byte`` is the source's
max[1/(8 gamma), 3/beta_mem] per byte (gamma: double additions per us; beta_mem: memory
bandwidth in bytes per us; a combine reads two operands and writes one, hence the 3).

Every function takes P (ranks) and m (bytes: the whole vector for bcast, reduce and
allreduce; one rank's block for allgather) and returns us. log2 is rounded up where an
algorithm takes whole rounds. The formulas and their derivations are in docs/model.md.
"""
import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Hockney:
    alpha: float  # us per message
    beta: float   # us per byte

    def msg(self, m: float) -> float:
        return self.alpha + m * self.beta


@dataclass(frozen=True)
class LogGP:
    L: float  # us, wire latency
    o: float  # us, overhead per message at one end
    G: float  # us per byte (1 / link bandwidth)

    @property
    def hockney(self) -> Hockney:
        return Hockney(self.L + 2 * self.o, self.G)


@dataclass(frozen=True)
class Compute:
    gamma: float     # double-precision additions per us
    mem_bw: float    # bytes per us

    def combine_us_per_byte(self) -> float:
        return max(1.0 / (8.0 * self.gamma), 3.0 / self.mem_bw)


def rounds(P: int, k: int = 2) -> int:
    """Rounds of a k-nomial tree on P ranks: ceil(log_k P), exact in integers."""
    if P < 1 or k < 2:
        raise ValueError("P >= 1 and k >= 2")
    r, reach = 0, 1
    while reach < P:
        reach *= k
        r += 1
    return r


def _pow2(P: int) -> bool:
    return P & (P - 1) == 0


# ---- flat algorithms (one level, Hockney parameters) ----

def bcast_knomial(h: Hockney, P: int, m: float, k: int = 2) -> float:
    """k-nomial tree: ceil(log_k P) rounds; in each a parent sends k-1 whole messages one
    after another (k = 2: the binomial tree, ceil(log2 P)(alpha + m beta))."""
    return rounds(P, k) * (k - 1) * h.msg(m)


def reduce_knomial(h: Hockney, c: Compute, P: int, m: float, k: int = 2) -> float:
    """The k-nomial bcast run backwards, each parent combining k-1 arrivals per round."""
    return rounds(P, k) * (k - 1) * (h.msg(m) + m * c.combine_us_per_byte())


def allreduce_recdbl(h: Hockney, c: Compute, P: int, m: float) -> float:
    """Recursive doubling: log2 P' exchanges of the whole vector (P' the power of two at or
    below P) plus, when P is not one, a fold-in before and a send-back after."""
    p2 = 1 << (P.bit_length() - 1)
    t = rounds(p2) * (h.msg(m) + m * c.combine_us_per_byte())
    if not _pow2(P):
        t += 2 * h.msg(m) + m * c.combine_us_per_byte()
    return t


def allreduce_ring(h: Hockney, c: Compute, P: int, m: float) -> float:
    """Reduce-scatter then allgather around a ring: 2(P-1) steps of m/P bytes, P-1 of them
    combining."""
    if P == 1:
        return 0.0
    return 2 * (P - 1) * h.msg(m / P) + (P - 1) * (m / P) * c.combine_us_per_byte()


def allgather_ring(h: Hockney, P: int, m: float) -> float:
    """P-1 steps, each passing one rank's block of m bytes to the next rank."""
    return (P - 1) * h.msg(m)


def allgather_recdbl(h: Hockney, P: int, m: float) -> float:
    """log2 P exchanges of doubling size: log2 P alpha + (P-1) m beta (P a power of two;
    otherwise rounds are counted up, an optimistic bound)."""
    return rounds(P) * h.alpha + (P - 1) * m * h.beta


def barrier_dissemination(h: Hockney, P: int) -> float:
    """ceil(log2 P) rounds of one empty message."""
    return rounds(P) * h.alpha


# ---- Caracal's hierarchical schedules (src/ml/): one flat algorithm per level ----

def _levels(node: Hockney, top: Hockney, P: int, node_size: int):
    q = min(node_size, P)
    return q, -(-P // q)  # ranks per node group, leaders


def bcast_hier(node: Hockney, top: Hockney, P: int, m: float, node_size: int, k: int = 2) -> float:
    """bcast_hier: k-nomial among node leaders, then k-nomial inside each node."""
    q, leaders = _levels(node, top, P, node_size)
    return bcast_knomial(top, leaders, m, k) + bcast_knomial(node, q, m, k)


def reduce_hier(node: Hockney, top: Hockney, c: Compute, P: int, m: float, node_size: int, k: int = 2) -> float:
    q, leaders = _levels(node, top, P, node_size)
    return reduce_knomial(node, c, q, m, k) + reduce_knomial(top, c, leaders, m, k)


def allreduce_hier(node: Hockney, top: Hockney, c: Compute, P: int, m: float, node_size: int) -> float:
    """allreduce_hier: reduce inside the node, allreduce among leaders (recursive doubling
    or ring, whichever the model finds cheaper: Caracal's rules switch at a size), then
    bcast inside the node."""
    q, leaders = _levels(node, top, P, node_size)
    top_t = min(allreduce_recdbl(top, c, leaders, m), allreduce_ring(top, c, leaders, m)) if leaders > 1 else 0.0
    return reduce_knomial(node, c, q, m) + top_t + bcast_knomial(node, q, m)


def barrier_hier(node: Hockney, top: Hockney, P: int, node_size: int) -> float:
    """Fan-in inside the node, dissemination among leaders, fan-out inside the node."""
    q, leaders = _levels(node, top, P, node_size)
    return 2 * rounds(q) * node.alpha + barrier_dissemination(top, leaders)


# ---- the source's torus models (Solomonik, Bhatele, Demmel, SC11), LogGP ----

def bcast_binomial_loggp(g: LogGP, P: int, m: float) -> float:
    """Binomial multicast on a torus: log2(P) (m/Bn + 2o + L) (the source uses log2 P,
    not rounded)."""
    return math.log2(P) * (m * g.G + 2 * g.o + g.L)


def _rect_latency(g: LogGP, P: int, d: int) -> float:
    return 2 * (d + 1) * g.o + 3 * g.L + d * P ** (1.0 / d) * (2 * g.o + g.L)


def bcast_rect(g: LogGP, P: int, m: float, d: int) -> float:
    """Rectangular multicast on a d-dimensional torus of P nodes: the message split over 2d
    edge-disjoint trees, pipelined: m/Bn + 2(d+1)o + 3L + d P^(1/d) (2o + L)."""
    return m * g.G + _rect_latency(g, P, d)


def reduce_rect(g: LogGP, c: Compute, P: int, m: float, d: int) -> float:
    """Rectangular reduction: the bcast's trees in reverse, bounded by the slowest of
    combining (m/(8 gamma)), memory (3m/beta) and the link (m/Bn):
    max[m/(8 gamma), 3m/beta, m/Bn] + 2(d+1)o + 3L + d P^(1/d)(2o + L)."""
    return max(m / (8 * c.gamma), 3 * m / c.mem_bw, m * g.G) + _rect_latency(g, P, d)


def reduce_binomial_loggp(g: LogGP, c: Compute, P: int, m: float) -> float:
    """Binomial reduction in the source's terms: log2(P) (m/Bn + m combine + 2o + L)."""
    return math.log2(P) * (m * g.G + m * c.combine_us_per_byte() + 2 * g.o + g.L)


def allreduce_rect(g: LogGP, c: Compute, P: int, m: float, d: int) -> float:
    """Rectangular reduction to a root, then rectangular multicast from it."""
    return reduce_rect(g, c, P, m, d) + bcast_rect(g, P, m, d)


# ---- large-message trees used by dense linear algebra (van de Geijn's bcast) ----

def bcast_scatter_allgather(h: Hockney, P: int, m: float) -> float:
    """Binomial scatter of m/P pieces then ring allgather:
    (ceil(log2 P) + P - 1) alpha + 2 (P-1)/P m beta."""
    if P == 1:
        return 0.0
    return (rounds(P) + P - 1) * h.alpha + 2 * (P - 1) / P * m * h.beta


def reduce_scatter_gather(h: Hockney, c: Compute, P: int, m: float) -> float:
    """Ring reduce-scatter then binomial gather to the root:
    (P - 1 + ceil(log2 P)) alpha + 2 (P-1)/P m beta + (P-1)/P m combine."""
    if P == 1:
        return 0.0
    return (P - 1 + rounds(P)) * h.alpha + 2 * (P - 1) / P * m * h.beta + (P - 1) / P * m * c.combine_us_per_byte()


def bcast_best(h: Hockney, P: int, m: float) -> float:
    return min(bcast_knomial(h, P, m), bcast_scatter_allgather(h, P, m))


def reduce_best(h: Hockney, c: Compute, P: int, m: float) -> float:
    return min(reduce_knomial(h, c, P, m), reduce_scatter_gather(h, c, P, m))
