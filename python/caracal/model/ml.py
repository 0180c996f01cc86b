"""Caracal's hierarchical schedules (src/ml/) as they run, level by level, in microseconds.

formulas.py's ``*_hier`` rows charge each level a flat textbook algorithm on the whole message.
What Caracal does differs in three ways that decide large messages (read from the code):

* **Chunks, all in flight at once.** Above CARACAL_PIPELINE_SIZE (256 KiB) a message is cut into
  ceil(m / 256 KiB) chunks, at most 12 (ml/levels.c caracal_ml_nchunks); every chunk's tasks are
  posted together and each chunk only waits for itself across levels (ml/bcast_hier.c,
  allreduce_hier.c). Point-to-point trees further cut a message into CARACAL_SEGMENT_SIZE
  (64 KiB) segments, every segment posted as soon as it is there (bcol/p2p/tree_bcast.c); the
  k-nomial reduce is not segmented (bcol/p2p/reduce_knomial.c).
* **Concurrent sends.** A tree parent posts its sends to all its children at once, and a
  recursive-multiplying or dissemination round posts its k-1 messages at once. Whether they
  cost one message time or their sum depends on the level's link: ``shared`` (a node's one
  network link: the concurrent flows divide its bandwidth, so c flows of m bytes take
  alpha + c m beta) or not (each flow alone at the link's rate: alpha + s beta for a flow of s
  bytes whatever the others do; SimGrid's cluster loopback, a FATPIPE link, is such a level).
* **Fair sharing ends flows together.** On a shared link every chunk's flows progress at the
  same rate and end at about the same instant, so a tree level forwards nothing before it has
  (nearly) everything: the levels add up instead of overlapping as a pipeline would.

A level's cost of one message is its Hockney line (alpha + m beta), or a `TwoRegime` pair of
lines split at a size (SMPI changes its calibration, and its eager/detached protocol, at 64 KiB).
Trees are Caracal's k-nomial trees (bcol/p2p/tree.c), the critical path computed over the
tree itself. Computation (combining) is free, as in `caracal simulate` (smpi/simulate-computation:no).
"""
from dataclasses import dataclass
from typing import List, Tuple

from .formulas import Hockney, rounds


@dataclass(frozen=True)
class TwoRegime:
    """Two Hockney lines of one level: ``small`` for messages below ``split`` bytes, ``large``
    from it. ``alpha`` (an empty message) is the small line's, ``beta`` the large line's."""
    small: Hockney
    large: Hockney
    split: float = 65536

    def regime(self, m: float) -> Hockney:
        return self.small if m < self.split else self.large

    def msg(self, m: float) -> float:
        return self.regime(m).msg(m)

    @property
    def alpha(self) -> float:
        return self.small.alpha

    @property
    def beta(self) -> float:
        return self.large.beta


def _line(h, s: float) -> Hockney:
    return h.regime(s) if hasattr(h, "regime") else h


@dataclass(frozen=True)
class Sched:
    """What the rules and settings make Caracal run on a two-level hierarchy (node, top)."""
    node_k: int = 2            # node level: k-nomial radix of bcast, reduce, fan-in and fan-out
    top_k: int = 2             # top level: bcast k-nomial radix, dissemination / recmul radix
    top_allreduce: str = "best"  # recdbl | ring | recmul | best (the cheaper of recdbl and ring)
    pipeline: float = 262144   # CARACAL_PIPELINE_SIZE
    max_chunks: int = 12       # caracal_ml_nchunks' cap
    segment: float = 65536     # CARACAL_SEGMENT_SIZE
    node_shared: bool = True   # concurrent flows of a node-level rank share one link
    top_shared: bool = True    # concurrent flows of a leader share its node's link
    elem: int = 8              # bytes per element (ring needs at least one element per member)
    combine: float = 0.0       # us per byte combined (formulas.Compute.combine_us_per_byte; 0 in SMPI)


def nchunks(m: float, s: Sched) -> int:
    """caracal_ml_nchunks: 1 up to the pipeline size, else ceil(m / size), at most 12."""
    if s.pipeline <= 0 or m <= s.pipeline:
        return 1
    return min(s.max_chunks, -(-int(m) // int(s.pipeline)))


def knomial_children(n: int, k: int) -> List[List[int]]:
    """Children of each relative rank in Caracal's k-nomial tree rooted at 0 (bcol/p2p/tree.c)."""
    k = max(k, 2)
    out = [[] for _ in range(n)]
    for rel in range(n):
        mask = 1
        while mask < n:
            if rel % (mask * k):
                break
            for j in range(1, k):
                c = rel + j * mask
                if c >= n:
                    break
                out[rel].append(c)
            mask *= k
    return out


def _hop(h, c: int, m: float, s: float, shared: bool) -> float:
    """A parent's sends to (or receives from) c children, concurrently: each child's data is m
    bytes in flows of s bytes. Shared link: the c m bytes divide its bandwidth; else each
    flow alone."""
    line = _line(h, s)
    return line.alpha + (c * m if shared else s) * line.beta


def tree_bcast(h, n: int, k: int, m: float, s: float, shared: bool) -> float:
    """Critical path of a k-nomial broadcast of m bytes (flows of s bytes) on n ranks: a rank
    sends to all its children at once once its data is in."""
    if n <= 1:
        return 0.0
    ch = knomial_children(n, k)
    t = [0.0] * n
    for v in range(n):  # a parent's relative rank is below its children's
        if ch[v]:
            d = t[v] + _hop(h, len(ch[v]), m, s, shared)
            for c in ch[v]:
                t[c] = d
    return max(t)


def tree_reduce(h, n: int, k: int, m: float, s: float, shared: bool, combine: float = 0.0) -> float:
    """Critical path of a k-nomial reduce of m bytes (flows of s bytes) on n ranks: a rank sends
    up once all its children's data is in and combined (c m bytes at `combine` us per byte)."""
    if n <= 1:
        return 0.0
    ch = knomial_children(n, k)
    done = [0.0] * n
    for v in range(n - 1, -1, -1):  # children before parents
        if ch[v]:
            done[v] = max(done[c] for c in ch[v]) + _hop(h, len(ch[v]), m, s, shared) + len(ch[v]) * m * combine
    return done[0]


def dissemination(h, n: int, k: int = 2) -> float:
    """Dissemination barrier of radix k: ceil(log_k n) rounds of k-1 empty messages each way,
    concurrent (an empty message costs alpha however many share the link)."""
    if n <= 1:
        return 0.0
    return rounds(n, min(max(k, 2), n)) * _line(h, 0).alpha


def allreduce_ring(h, n: int, m: float, chunk: float, shared: bool, combine: float = 0.0) -> float:
    """bcol/p2p/allreduce_ring.c on each chunk (all chunks at once): 2(n-1) steps; each step
    every member sends a piece of chunk/n bytes right and receives one from the left; the
    first n-1 combine what came in (m/n bytes of all chunks)."""
    if n <= 1:
        return 0.0
    piece = chunk / n
    line = _line(h, piece)
    return 2 * (n - 1) * (line.alpha + (m / n if shared else piece) * line.beta) + (n - 1) * m / n * combine


def allreduce_recdbl(h, n: int, m: float, chunk: float, shared: bool, combine: float = 0.0) -> float:
    """bcol/p2p/allreduce_recdbl.c: log2 n' exchanges of the chunk (n' the power of two at or
    below n), plus a fold-in and a send-back when n is not a power of two."""
    if n <= 1:
        return 0.0
    line = _line(h, chunk)
    step = line.alpha + (m if shared else chunk) * line.beta
    p2 = 1 << (n.bit_length() - 1)
    return (rounds(p2) + (2 if p2 != n else 0)) * step + (rounds(p2) + (p2 != n)) * m * combine


RECMUL_SCRATCH = 4 << 20  # bcol/p2p/allreduce_recmul.c CARACAL_RECMUL_SCRATCH


def recmul_radix(k: int, n: int, chunk: float) -> int:
    """caracal_recmul_radix: k at most n, lowered so that (k-1) chunks of scratch fit 4 MiB."""
    k = max(k, 2)
    if k > n:
        k = n if n >= 2 else 2
    if chunk > 0 and (k - 1) * chunk > RECMUL_SCRATCH:
        k = max(2, int(1 + RECMUL_SCRATCH // chunk))
    return k


def recmul_shape(n: int, k: int) -> Tuple[int, int, int]:
    """(full rounds of radix k, last radix r, members folded in pairs): p = k^m r <= n with
    m = floor(log_k n), r = floor(n / k^m); the first 2(n-p) ranks fold pairwise."""
    s, full = 1, 0
    while s * k <= n:
        s *= k
        full += 1
    r = n // s
    return full, r, n - s * r


def allreduce_recmul(h, n: int, m: float, chunk: float, shared: bool, k: int, combine: float = 0.0) -> float:
    """Recursive multiplying of radix k (hier17's `recmul:k`): a fold-in and a send-back when
    n is not k^m r, and per round (f members a group) f-1 messages of the chunk each way, at once."""
    if n <= 1:
        return 0.0
    k = recmul_radix(k, n, chunk)
    full, r, rem = recmul_shape(n, k)
    line = _line(h, chunk)

    def step(f):
        return line.alpha + ((f - 1) * m if shared else chunk) * line.beta + (f - 1) * m * combine
    t = full * step(k) + (step(r) if r >= 2 else 0.0)
    if rem:
        t += 2 * step(2) - m * combine  # the fold-in combines, the send-back does not
    return t


def _levels(P: int, node_size: int):
    q = min(node_size, P)
    return q, -(-P // q)


def bcast(node, top, P: int, m: float, node_size: int, s: Sched = Sched()) -> float:
    """ml/bcast_hier.c (root 0): k-nomial among the leaders, then k-nomial inside each node; a
    leader forwards a chunk down once it has it, so the deepest leader's arrival plus the node
    tree."""
    q, L = _levels(P, node_size)
    if m <= 0:
        return 0.0
    chunk = m / nchunks(m, s)
    seg = min(s.segment, chunk) if s.segment > 0 else chunk
    return tree_bcast(top, L, s.top_k, m, seg, s.top_shared) + tree_bcast(node, q, s.node_k, m, seg, s.node_shared)


def top_allreduce(top, L: int, m: float, chunk: float, s: Sched) -> float:
    ring_ok = chunk / s.elem >= L
    if s.top_allreduce == "ring" and ring_ok:
        return allreduce_ring(top, L, m, chunk, s.top_shared, s.combine)
    if s.top_allreduce == "recmul":
        return allreduce_recmul(top, L, m, chunk, s.top_shared, s.top_k, s.combine)
    rd = allreduce_recdbl(top, L, m, chunk, s.top_shared, s.combine)
    if s.top_allreduce == "best" and ring_ok:
        return min(rd, allreduce_ring(top, L, m, chunk, s.top_shared, s.combine))
    return rd


def allreduce(node, top, P: int, m: float, node_size: int, s: Sched = Sched()) -> float:
    """ml/allreduce_hier.c: k-nomial reduce inside the node (unsegmented chunks), allreduce
    among the leaders, k-nomial bcast inside the node (segmented), per chunk, chunks at once."""
    q, L = _levels(P, node_size)
    chunk = m / nchunks(m, s)
    seg = min(s.segment, chunk) if s.segment > 0 else chunk
    return (tree_reduce(node, q, s.node_k, m, chunk, s.node_shared, s.combine) + top_allreduce(top, L, m, chunk, s)
            + tree_bcast(node, q, s.node_k, m, seg, s.node_shared))


def barrier(node, top, P: int, node_size: int, s: Sched = Sched()) -> float:
    """ml/barrier_hier.c: k-nomial fan-in inside the node, dissemination of radix top_k among
    the leaders, k-nomial fan-out: empty messages, so each tree costs its depth in alphas."""
    q, L = _levels(P, node_size)
    return 2 * tree_bcast(node, q, s.node_k, 0.0, 0.0, s.node_shared) + dissemination(top, L, s.top_k)


def reduce(node, top, P: int, m: float, node_size: int, s: Sched = Sched()) -> float:
    """ml/reduce_hier.c (root 0, commutative operators): k-nomial reduce inside each node, then
    among the leaders (radix top_k), unsegmented chunks at once; a leader sends up once its
    node is in."""
    q, L = _levels(P, node_size)
    chunk = m / nchunks(m, s)
    return (tree_reduce(node, q, s.node_k, m, chunk, s.node_shared, s.combine)
            + tree_reduce(top, L, s.top_k, m, chunk, s.top_shared, s.combine))
