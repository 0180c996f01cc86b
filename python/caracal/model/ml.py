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

import numpy as np

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
    top_k: int = 2             # top level: bcast k-nomial / scatter_allgather radix, dissemination / recmul radix
    top_allreduce: str = "best"  # recdbl | ring | recmul | rsag | best (the cheaper of recdbl and ring)
    node_bcast: str = "knomial"  # bcast's node level: knomial | scatter_allgather
    top_bcast: str = "knomial"   # bcast's top level: knomial | scatter_allgather
    node_reduce: str = "knomial"  # allreduce's node-level reduce: knomial | knomial_seg
    pipeline: float = 262144   # CARACAL_PIPELINE_SIZE
    max_chunks: int = 12       # caracal_ml_nchunks' cap
    segment: float = 65536     # CARACAL_SEGMENT_SIZE
    reduce_segment: float = 131072  # CARACAL_REDUCE_SEGMENT (knomial_seg)
    reduce_window: int = 4     # CARACAL_REDUCE_SEGMENTS (knomial_seg's segments in flight per rank)
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


def _starts(n: int, count: int, elem: float) -> List[float]:
    """Byte offset of each of n blocks and of the end (block_start in bcast_scatter_allgather.c
    and allreduce_rsag.c): count elements cut as evenly as count allows, the first count % n
    blocks one element longer."""
    base, extra = divmod(count, n)
    return [(b * base + min(b, extra)) * elem for b in range(n + 1)]


def _flow(h, s: float, load: float, shared: bool) -> float:
    """One flow of s bytes among others: its line's alpha, then at its link's share when the link
    carries `load` bytes at once (shared), else alone at the link's rate."""
    line = _line(h, s)
    return line.alpha + (load if shared else s) * line.beta


def sag_radix(k: int, n: int) -> int:
    """caracal_p2p_bcast_scatter_allgather's radix: at least 2; above n, n (the same rounds)."""
    k = max(k, 2)
    return k if k <= n else (n if n > 2 else 2)


def _sag_subtree(v: int, n: int, k: int) -> int:
    """Blocks rank v holds after the scatter: its k-nomial subtree [v, v + sub)."""
    if v == 0:
        return n
    low = 1
    while v % (low * k) == 0:
        low *= k
    return min(low, n - v)


def _bruck_arrays(n: int, k: int, m: float, elem: float = 1):
    """Each Bruck round of bcast_scatter_allgather.c as arrays (senders, receivers, bytes), one
    entry per message (numpy: the CLI prices tens of thousands of leaders)."""
    k = sag_radix(k, n)
    at = np.array(_starts(n, int(m // elem), elem), dtype=float)
    v = np.arange(n)
    sub = np.array([_sag_subtree(x, n, k) for x in range(n)])
    rounds, mask = [], 1
    while mask < n:
        src, dst, size = [], [], []
        for j in range(1, k):
            d = j * mask
            if d >= n:
                break
            cnt = min(mask, n - d)
            to = (v - d) % n
            held = np.clip(sub[to] - d, 0, cnt)
            first, c = (v + held) % n, cnt - held
            wrap = first + c > n  # two pieces: [first, n) and [0, first + c - n)
            one = np.where(wrap, at[n] - at[first], at[np.minimum(first + c, n)] - at[first])
            two = np.where(wrap, at[np.where(wrap, first + c - n, 0)] - at[0], 0.0)
            for x in (one, two):
                keep = (c > 0) & (x > 0)
                src.append(v[keep]), dst.append(to[keep]), size.append(x[keep])
        rounds.append((np.concatenate(src), np.concatenate(dst), np.concatenate(size)))
        mask *= k
    return rounds


def sag_bruck_rounds(n: int, k: int, m: float, elem: float = 1) -> List[List[Tuple[int, int, float]]]:
    """The messages (sender, receiver, bytes) of each Bruck round of bcast_scatter_allgather.c
    (relative ranks), sorted: at round i each rank v sends blocks [v, v + c) mod n,
    c = min(k^i, n - d), to v - d (d = j k^i, j = 1..k-1, d < n), less the first blocks the
    receiver holds from the scatter; a range that wraps past block n-1 is two messages, an empty
    piece none."""
    return [sorted((int(a), int(b), float(x)) for a, b, x in zip(*r)) for r in _bruck_arrays(n, k, m, elem)]


def _flows(h, x, load, shared: bool):
    """_flow over arrays of flows."""
    if hasattr(h, "regime"):
        small = x < h.split
        alpha = np.where(small, h.small.alpha, h.large.alpha)
        beta = np.where(small, h.small.beta, h.large.beta)
    else:
        alpha, beta = h.alpha, h.beta
    return alpha + (load if shared else x) * beta


def bcast_scatter_allgather(h, n: int, k: int, m: float, shared: bool, elem: float = 1, per_rank: bool = False):
    """bcol/p2p/bcast_scatter_allgather.c (root 0): m bytes in n blocks (elements of `elem`
    bytes; the hierarchy moves bytes, elem 1), the last rank's return. Rendezvous: a send ends
    when its data is in, and a flow starts when both sides have posted.

    Scatter: a rank posts its receive at the start; once its subtree is in, it hands each child
    c = v + j k^i (j = 1..k-1, the k-1 of one i at once, largest subtrees first) c's subtree,
    one message each, and waits for those sends before the next i: so the children of one i
    share the parent's link (their bytes summed), the i's add up.
    Allgather (Bruck, round i for k^i < n): every rank posts all its sends and receives of the
    round (k-1 ranges, a range that wraps past block n-1 as two messages, none for blocks the
    receiver already holds from the scatter), then waits for all of them: a message starts when
    both its ends have finished the previous round and ends alpha + (the bytes its sender sends
    or its receiver receives in the round, the larger: separate directions of the link) beta
    later; a rank's round ends with its last message (at once when it has none).
    per_rank: each relative rank's return instead of the last."""
    if n <= 1 or m <= 0:
        return [0.0] * max(n, 1) if per_rank else 0.0
    k = sag_radix(k, n)
    at = _starts(n, int(m // elem), elem)
    sub = [_sag_subtree(v, n, k) for v in range(n)]
    have = [0.0] * n   # when v's subtree is in (an empty one: at once, nothing to receive)
    start = [0.0] * n  # when v's scatter sends are done: its allgather starts
    for v in range(n):  # a parent's relative rank is below its children's
        t = have[v]
        if v == 0:
            mask = 1
            while mask * k < n:
                mask *= k
        else:
            mask = 1
            while v % (mask * k) == 0:
                mask *= k
            mask //= k
        while mask >= 1:
            kids = [(c, at[c + sub[c]] - at[c]) for c in (v + j * mask for j in range(1, k)) if c < n]
            load = sum(b for _, b in kids)
            end = t
            for c, b in kids:
                if b > 0:
                    have[c] = t + _flow(h, b, load, shared)
                    end = max(end, have[c])
            t = end
            mask //= k
        start[v] = t
    start = np.array(start)
    for a, b, x in _bruck_arrays(n, k, m, elem):
        out = np.bincount(a, weights=x, minlength=n)
        inn = np.bincount(b, weights=x, minlength=n)
        e = np.maximum(start[a], start[b]) + _flows(h, x, np.maximum(out[a], inn[b]), shared)
        end = start.copy()
        np.maximum.at(end, a, e)
        np.maximum.at(end, b, e)
        start = end
    start = [float(x) for x in start]
    return start if per_rank else max(start)


RSAG_SCRATCH = 4 << 20  # bcol/p2p/allreduce_rsag.c CARACAL_RSAG_SCRATCH


def allreduce_rsag(h, n: int, m: float, chunk: float, shared: bool, elem: float = 8, combine: float = 0.0,
                   per_rank: bool = False):
    """bcol/p2p/allreduce_rsag.c on each chunk (all chunks at once: on a shared link a step's
    bytes times m/chunk), the last rank's return. p = 2^floor(log2 n); the first 2(n-p) ranks
    fold: each even one sends its chunk to the odd one (which combines it) and gets the result
    back at the end. Among the p, each step is one exchange with one partner, both directions
    at once (separate directions of the link): alpha + (the larger of the two) beta, starting
    when both partners have finished the previous step. Halving steps (log2 p: the range of p
    blocks halves; send the other half, receive and combine mine) and the fold-in are cut into
    pieces of at most 4 MiB, one after the other (each its alpha); the doubling steps (the
    ranges back, straight into the result) and the fold-out are whole. Combining a piece: both
    partners wait for the slower (its larger direction). per_rank: each rank's return instead of
    the last."""
    if n <= 1 or chunk <= 0:
        return [0.0] * max(n, 1) if per_rank else 0.0
    count = int(chunk // elem)
    piece = max(1, min(count, RSAG_SCRATCH // int(elem))) if count else 1
    scale = m / chunk if shared else 1.0
    p = 1 << (n.bit_length() - 1)
    rem = n - p
    at = _starts(p, count, 1)  # in elements

    memo = {}  # (a step's cost depends only on its larger direction and slicing: p ranks share a few)

    def xchg(s_cnt, r_cnt, sliced):
        most = max(s_cnt, r_cnt)
        if (most, sliced) in memo:
            return memo[most, sliced]
        memo[most, sliced] = _xchg(most, sliced)
        return memo[most, sliced]

    def _xchg(most, sliced):
        if most <= 0:
            return 0.0
        step = piece if sliced else most
        t, first = 0.0, 0
        while first < most:
            x = min(step, most - first) * elem  # this piece's larger direction
            line = _line(h, x)
            t += line.alpha + x * scale * line.beta + (x * combine if sliced else 0.0)
            first += step
        return t

    def cost(s_cnt, r_cnt, sliced):  # xchg over arrays (numpy: the CLI prices tens of thousands of leaders)
        most = np.maximum(s_cnt, r_cnt)
        vals, inv = np.unique(most, return_inverse=True)
        return np.array([xchg(int(x), 0, sliced) for x in vals])[inv.reshape(-1)]
    at = np.array(at)
    q = np.arange(p)
    t = np.where(q < rem, xchg(count, count, True), 0.0)  # fold-in (newrank q < rem: odd rank 2q+1)
    lo, hi = np.zeros(p, dtype=np.int64), np.full(p, p, dtype=np.int64)
    mask = 1
    while mask < p:  # recursive halving: both partners hold [lo, hi); the upper (bit set) keeps its upper half
        mid = lo + (hi - lo) // 2
        up = (q & mask) != 0
        c = cost(np.where(up, at[mid] - at[lo], at[hi] - at[mid]), np.where(up, at[hi] - at[mid], at[mid] - at[lo]), True)
        lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
        t = np.maximum(t, t[q ^ mask]) + c
        mask <<= 1
    mask = p >> 1
    while mask >= 1:  # recursive doubling: the partner holds the range beside mine, of my range's size
        size = hi - lo
        up = (q & mask) != 0
        other = np.where(up, at[lo] - at[np.maximum(lo - size, 0)], at[np.minimum(hi + size, p)] - at[hi])
        c = cost(at[hi] - at[lo], other, False)
        lo, hi = np.where(up, lo - size, lo), np.where(up, hi, hi + size)
        t = np.maximum(t, t[q ^ mask]) + c
        mask >>= 1
    t = [float(x) for x in t]
    back = xchg(count, 0, False)  # fold-out: the result to the even rank, whole
    ranks = [t[q] + back for q in range(rem) for _ in (0, 1)] + t[rem:]  # real ranks 2q, 2q+1, then the rest
    return ranks if per_rank else max(ranks)


def reduce_knomial_seg(h, n: int, k: int, m: float, chunk: float, shared: bool, segment: float,
                       window: int, elem: float = 8, combine: float = 0.0) -> float:
    """bcol/p2p/reduce_knomial_seg.c on each chunk (all chunks at once), root 0: the chunk in
    segments of `segment` bytes; a rank posts its children's receives of at most `window`
    segments ahead (segment s once s - window is combined and its partial result's send has
    ended), combines segments in order once every child's is in, and sends each up once the
    send of segment s - window has ended (its slot). Rendezvous: a flow starts when both sides
    have posted, a send ends when its data is in. A flow of one segment: alpha + S beta alone;
    on a shared link the parent's c children's `window` segments in flight (times m/chunk
    chunks) share it: alpha + c window S (m/chunk) beta. Computed segment by segment over the
    tree itself; the root's last segment combined is the time."""
    if n <= 1 or chunk <= 0:
        return 0.0
    count = int(chunk // elem)
    if count <= 0:  # no element: nothing is sent
        return 0.0
    segc = max(1, min(count, int(segment // elem))) if segment > 0 else count
    nseg = -(-count // segc)
    w = max(1, min(window, nseg))
    seg = [min(segc, count - s * segc) * elem for s in range(nseg)]
    ch = knomial_children(n, k)
    post = [[0.0] * nseg for _ in range(n)]   # v's send of segment s posted (root: combined)
    done = [[0.0] * nseg for _ in range(n)]   # that send ended (the data is in at the parent)
    ready = [[0.0] * nseg for _ in range(n)]  # v's receives of segment s posted
    for s in range(nseg):
        for v in range(n - 1, -1, -1):  # children before parents
            prev = post[v][s - 1] if s else 0.0
            if s >= w:
                ready[v][s] = max(ready[v][s - 1], done[v][s - w] if v else post[v][s - w])
            elif s:
                ready[v][s] = ready[v][s - 1]
            arrived = prev
            for c in ch[v]:
                line = _line(h, seg[s])
                load = len(ch[v]) * w * seg[s] * m / chunk if shared else seg[s]
                done[c][s] = max(post[c][s], ready[v][s]) + line.alpha + load * line.beta
                arrived = max(arrived, done[c][s])
            arrived += len(ch[v]) * seg[s] * combine
            post[v][s] = max(arrived, done[v][s - w] if v and s >= w else 0.0)
    return post[0][nseg - 1]


def _levels(P: int, node_size: int):
    q = min(node_size, P)
    return q, -(-P // q)


def bcast(node, top, P: int, m: float, node_size: int, s: Sched = Sched()) -> float:
    """ml/bcast_hier.c (root 0): k-nomial (or scatter_allgather) among the leaders, then inside
    each node; a leader forwards a chunk down once it has it, so the deepest leader's arrival plus
    the node level. A level running scatter_allgather turns the chunks off (one chunk: the node
    level starts once the leader has the whole message)."""
    q, L = _levels(P, node_size)
    if m <= 0:
        return 0.0
    sag = "scatter_allgather" in (s.node_bcast, s.top_bcast)
    chunk = m if sag else m / nchunks(m, s)
    seg = min(s.segment, chunk) if s.segment > 0 else chunk

    def level(h, n, alg, k, shared):
        if alg == "scatter_allgather":
            return bcast_scatter_allgather(h, n, k, m, shared)
        return tree_bcast(h, n, k, m, seg, shared)
    return level(top, L, s.top_bcast, s.top_k, s.top_shared) + level(node, q, s.node_bcast, s.node_k, s.node_shared)


def top_allreduce(top, L: int, m: float, chunk: float, s: Sched) -> float:
    ring_ok = chunk / s.elem >= L
    if s.top_allreduce == "ring" and ring_ok:
        return allreduce_ring(top, L, m, chunk, s.top_shared, s.combine)
    if s.top_allreduce == "recmul":
        return allreduce_recmul(top, L, m, chunk, s.top_shared, s.top_k, s.combine)
    if s.top_allreduce == "rsag":
        return allreduce_rsag(top, L, m, chunk, s.top_shared, s.elem, s.combine)
    rd = allreduce_recdbl(top, L, m, chunk, s.top_shared, s.combine)
    if s.top_allreduce == "best" and ring_ok:
        return min(rd, allreduce_ring(top, L, m, chunk, s.top_shared, s.combine))
    return rd


def allreduce(node, top, P: int, m: float, node_size: int, s: Sched = Sched()) -> float:
    """ml/allreduce_hier.c: k-nomial reduce inside the node (unsegmented chunks, or knomial_seg's
    segments), allreduce among the leaders, k-nomial bcast inside the node (segmented), per
    chunk, chunks at once."""
    q, L = _levels(P, node_size)
    chunk = m / nchunks(m, s)
    seg = min(s.segment, chunk) if s.segment > 0 else chunk
    if s.node_reduce == "knomial_seg":
        red = reduce_knomial_seg(node, q, s.node_k, m, chunk, s.node_shared, s.reduce_segment, s.reduce_window,
                                 s.elem, s.combine)
    else:
        red = tree_reduce(node, q, s.node_k, m, chunk, s.node_shared, s.combine)
    return red + top_allreduce(top, L, m, chunk, s) + tree_bcast(node, q, s.node_k, m, seg, s.node_shared)


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
