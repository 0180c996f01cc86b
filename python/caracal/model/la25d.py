"""Words and time of examples/mm25d.c and lu25d.c on a q x q x c grid (q = sqrt(p/c)),
by the same schedule the programs run, with each collective costed by
python/caracal/model/formulas.py (the cheaper of a binomial tree and van de Geijn's
scatter-allgather / reduce-scatter-gather, as a tuned library would pick).

Words are 8-byte doubles per rank, counted as Caracal's profile counts them (a bcast or
reduce counts its buffer on every member), averaged over ranks, so they compare with the
programs' own `words_per_rank` and with profiles.
"""
import math

from . import formulas as F


def grid_side(p: int, c: int) -> int:
    q = math.isqrt(p // c) if c >= 1 and p % c == 0 else 0
    if q * q * c != p:
        raise ValueError(f"p={p}, c={c}: p/c is not a square")
    return q


def words_mm(n: int, p: int, c: int) -> float:
    """mm25d per rank: SUMMA 2 n^2/(q c) (A and B panels over 1/c of the inner dimension);
    c > 1 adds the depth bcast of A and B and the depth reduce of C, 3 (n/q)^2."""
    q = grid_side(p, c)
    return 2 * n * n / (q * c) + (3 * n * n / (q * q) if c > 1 else 0)


def bound_25d(n: int, p: int, c: int) -> float:
    """The 2.5D lower bound's order, n^2 / sqrt(c p) (constant 1)."""
    return n * n / math.sqrt(c * p)


def time_mm(n, p, c, h: F.Hockney, comb: F.Compute, gflops_per_rank: float, b: int = 64) -> dict:
    """Seconds: compute 2n^3/(p F) and the communication of the schedule (critical path:
    one rank's sequence of collectives, nothing overlapped)."""
    q = grid_side(p, c)
    blk = 8.0 * (n / q) ** 2
    comm = 0.0
    if c > 1:
        comm += 2 * F.bcast_best(h, c, blk) + F.reduce_best(h, comb, c, blk)
    steps = math.ceil(n / c / b)
    panel = 8.0 * (n / q) * b
    comm += steps * 2 * F.bcast_best(h, q, panel)
    comp = 2.0 * n ** 3 / p / (gflops_per_rank * 1e3)  # us
    return {"compute_s": comp / 1e6, "comm_s": comm / 1e6, "total_s": (comp + comm) / 1e6}


def time_lu(n, p, c, h: F.Hockney, comb: F.Compute, gflops_per_rank: float, b: int = 64) -> dict:
    """Seconds for lu25d's schedule (tournament pivoting): per panel the depth reductions
    (c > 1), the candidates' allgather, the pivots, the L bcast along rows and the U12
    allreduce along columns; compute 2n^3/(3p F)."""
    q = grid_side(p, c)
    comm = 0.0
    for kb in range(0, n, b):
        rows = (n - kb) / q
        if c > 1:
            comm += F.reduce_best(h, comb, c, 8 * rows * b)                 # panel onto layer u
            comm += F.bcast_knomial(h, c, 8 * b)                            # pivots along depth
            comm += F.reduce_best(h, comb, c, 8 * (b / q) * max(rows - b / q, 0))  # pivot rows
        comm += F.allgather_ring(h, q, 8 * b * (b + 1))                     # tournament
        comm += F.bcast_knomial(h, q, 8 * b)                                # pivots along the row
        comm += F.allreduce_recdbl(h, comb, q, 8 * b * b) if q > 1 else 0   # L11
        comm += F.bcast_best(h, q, 8 * (b * b + rows * b))                  # L panel along rows
        comm += min(F.allreduce_recdbl(h, comb, q, 8 * b * rows),
                    F.allreduce_ring(h, comb, q, 8 * b * rows)) if q > 1 else 0  # U12
    comp = 2.0 / 3.0 * n ** 3 / p / (gflops_per_rank * 1e3)
    return {"compute_s": comp / 1e6, "comm_s": comm / 1e6, "total_s": (comp + comm) / 1e6}
