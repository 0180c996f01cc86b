"""Flat algorithms on several hosts: each round charged at the slowest link it uses.

The flat rows of `predict.models` price every message at the top level (`net`), which is
right when every rank is its own host. With q ranks per host, placed in blocks (ranks
0..q-1 on the first host, as `caracal testbed run --ppn q` places them), some rounds of
a flat tree stay inside a host. Here the rounds are enumerated from the same pairings as
Caracal's point-to-point algorithms (src/bcol/p2p/tree.c, allreduce_recdbl.c,
barrier_dissemination.c), and a round costs what its slowest sender pays: `net` for a
message between hosts, `node` for one inside a host. Whole messages per round, no
pipelining, as in formulas.py. With q = 1 every function equals its flat formula on `net`,
with q >= P the one on `node`, where that formula is exact (k-nomial: k = 2, or P a power
of k; formulas.py charges every round k-1 sends); tests/python/test_model_placed.py checks.
"""
from typing import List, Tuple

from .formulas import Compute, Hockney

Pair = Tuple[int, int]


def _check(P: int, q: int):
    if P < 1 or q < 1:
        raise ValueError(f"P >= 1 and ranks per host >= 1 (got P={P}, q={q})")


def _link(node: Hockney, top: Hockney, q: int, a: int, b: int) -> Hockney:
    return node if a // q == b // q else top


def knomial_rounds(P: int, k: int = 2) -> List[List[Pair]]:
    """(parent, child) pairs per round of a k-nomial tree rooted at 0, root side first
    (the tree of caracal_tree_knomial: round i joins rel to rel + j k^i)."""
    if k < 2:
        raise ValueError("k >= 2")
    out, mask = [], 1
    while mask < P:
        out.append([(r, r + j * mask) for r in range(0, P, mask * k) for j in range(1, k) if r + j * mask < P])
        mask *= k
    return out


def _tree_time(node, top, q, P, m, k, per_byte):
    t = 0.0
    for pairs in knomial_rounds(P, k):
        per_sender = {}
        for a, b in pairs:
            per_sender[a] = per_sender.get(a, 0.0) + _link(node, top, q, a, b).msg(m) + m * per_byte
        t += max(per_sender.values())
    return t


def bcast_knomial(node: Hockney, top: Hockney, P: int, q: int, m: float, k: int = 2) -> float:
    """k-nomial bcast from rank 0; a parent's k-1 sends of a round go one after another."""
    _check(P, q)
    return _tree_time(node, top, q, P, m, k, 0.0)


def reduce_knomial(node: Hockney, top: Hockney, c: Compute, P: int, q: int, m: float, k: int = 2) -> float:
    """The bcast's tree backwards; each arrival is combined (m combine)."""
    _check(P, q)
    return _tree_time(node, top, q, P, m, k, c.combine_us_per_byte())


def recdbl_rounds(P: int) -> Tuple[List[Pair], List[List[Pair]]]:
    """Caracal's recursive doubling: the fold pairs (2i, 2i+1) for i < P - 2^floor(log2 P),
    then per round the exchanges between virtual ranks v and v ^ mask (virtual v is real
    2v+1 below the fold count, v + fold count above)."""
    p2 = 1 << (P.bit_length() - 1)
    rem = P - p2
    real = [2 * v + 1 if v < rem else v + rem for v in range(p2)]
    fold = [(2 * i, 2 * i + 1) for i in range(rem)]
    out, mask = [], 1
    while mask < p2:
        out.append([(real[v], real[v ^ mask]) for v in range(p2) if v < v ^ mask])
        mask *= 2
    return fold, out


def allreduce_recdbl(node: Hockney, top: Hockney, c: Compute, P: int, q: int, m: float) -> float:
    """Fold-in, log2 P' exchanges of the whole vector with a combine, send-back."""
    _check(P, q)
    comb = m * c.combine_us_per_byte()
    fold, exch = recdbl_rounds(P)
    t = sum(max(_link(node, top, q, a, b).msg(m) for a, b in r) + comb for r in exch)
    if fold:
        worst = max(_link(node, top, q, a, b).msg(m) for a, b in fold)
        t += 2 * worst + comb
    return t


def barrier_dissemination(node: Hockney, top: Hockney, P: int, q: int) -> float:
    """Round i: every rank r signals r + 2^i (mod P); the round waits for its slowest link."""
    _check(P, q)
    t, d = 0.0, 1
    while d < P:
        t += max(_link(node, top, q, r, (r + d) % P).alpha for r in range(P))
        d *= 2
    return t
