"""caracal.model.placed: flat algorithms on block-placed hosts, against values worked out by
hand from the pairings of src/bcol/p2p, and against formulas.py at the two ends (one rank
per host: every round on `net`; one host: every round on `node`). Tolerance: float
rounding only."""
import pytest

from caracal.model import formulas as F, placed

EXACT = dict(rel=1e-12, abs=1e-12)
NODE = F.Hockney(alpha=1.0, beta=0.1)
NET = F.Hockney(alpha=10.0, beta=1.0)
C = F.Compute(gamma=1.0, mem_bw=12.0)       # combine 0.25 us/byte


def test_knomial_rounds_are_caracals_tree():
    # caracal_tree_knomial, root 0: round 1 joins 0-1, 2-3, ...; round 2 joins 0-2, 4-6
    assert placed.knomial_rounds(8) == [[(0, 1), (2, 3), (4, 5), (6, 7)], [(0, 2), (4, 6)], [(0, 4)]]
    assert placed.knomial_rounds(5, 4) == [[(0, 1), (0, 2), (0, 3)], [(0, 4)]]
    assert placed.knomial_rounds(1) == []


def test_recdbl_rounds_fold_and_virtual_ranks():
    # P = 6: fold (0,1), (2,3); virtual ranks 0..3 are real 1, 3, 4, 5
    fold, exch = placed.recdbl_rounds(6)
    assert fold == [(0, 1), (2, 3)]
    assert exch == [[(1, 3), (4, 5)], [(1, 4), (3, 5)]]


@pytest.mark.parametrize("value, expected", [
    # 2 hosts x 2 ranks, m = 100: binomial round 1 (0-1, 2-3) inside hosts 1 + 10,
    # round 2 (0-2) between hosts 10 + 100
    (lambda: placed.bcast_knomial(NODE, NET, 4, 2, 100), 121.0),
    # reduce: each round also combines 100 x 0.25
    (lambda: placed.reduce_knomial(NODE, NET, C, 4, 2, 100), 171.0),
    # recdbl at 2x2: mask 1 (0-1, 2-3) inside, mask 2 (0-2, 1-3) between; + 2 combines
    (lambda: placed.allreduce_recdbl(NODE, NET, C, 4, 2, 100), 171.0),
    # dissemination at 2x2: distance 1 has 1->2 and 3->0 between hosts, distance 2 all between
    (lambda: placed.barrier_dissemination(NODE, NET, 4, 2), 20.0),
    # 3 ranks, 2 per host: recdbl folds 0-1 (inside) and exchanges 1-2 (between):
    # 110 + 25 + 2 x 11 + 25
    (lambda: placed.allreduce_recdbl(NODE, NET, C, 3, 2, 100), 182.0),
    # 4-nomial at 4 hosts x 1... 0 sends 3 messages one after another: 3 x 110
    (lambda: placed.bcast_knomial(NODE, NET, 4, 1, 100, 4), 330.0),
])
def test_placed_by_hand(value, expected):
    assert value() == pytest.approx(expected, **EXACT)


@pytest.mark.parametrize("P", [1, 2, 3, 4, 5, 6, 7, 8, 13, 16])
def test_one_rank_per_host_is_the_flat_formula_on_net(P):
    m = 4096
    assert placed.bcast_knomial(NODE, NET, P, 1, m) == pytest.approx(F.bcast_knomial(NET, P, m), **EXACT)
    assert placed.reduce_knomial(NODE, NET, C, P, 1, m) == pytest.approx(F.reduce_knomial(NET, C, P, m), **EXACT)
    assert placed.allreduce_recdbl(NODE, NET, C, P, 1, m) == pytest.approx(F.allreduce_recdbl(NET, C, P, m), **EXACT)
    assert placed.barrier_dissemination(NODE, NET, P, 1) == pytest.approx(F.barrier_dissemination(NET, P), **EXACT)
    # one host: every round inside it
    assert placed.bcast_knomial(NODE, NET, P, P, m) == pytest.approx(F.bcast_knomial(NODE, P, m), **EXACT)
    assert placed.allreduce_recdbl(NODE, NET, C, P, 64, m) == pytest.approx(F.allreduce_recdbl(NODE, C, P, m),
                                                                            **EXACT)


def test_full_4nomial_tree_is_the_flat_formula():
    assert placed.bcast_knomial(NODE, NET, 16, 1, 100, 4) == pytest.approx(F.bcast_knomial(NET, 16, 100, 4), **EXACT)


def test_placement_never_costs_more_than_all_net():
    for P in range(2, 17):
        for q in range(1, P + 1):
            assert placed.bcast_knomial(NODE, NET, P, q, 1000) <= F.bcast_knomial(NET, P, 1000) + 1e-9
            assert placed.barrier_dissemination(NODE, NET, P, q) <= F.barrier_dissemination(NET, P) + 1e-9


@pytest.mark.parametrize("call", [
    lambda: placed.bcast_knomial(NODE, NET, 0, 1, 8),
    lambda: placed.reduce_knomial(NODE, NET, C, 4, 0, 8),
    lambda: placed.allreduce_recdbl(NODE, NET, C, -1, 2, 8),
    lambda: placed.barrier_dissemination(NODE, NET, 4, 0),
    lambda: placed.bcast_knomial(NODE, NET, 4, 1, 8, 1),
])
def test_bad_input_is_refused(call):
    with pytest.raises(ValueError):
        call()
