"""caracal/model/ml.py (Caracal's hierarchical schedules as they run) against values worked out
by hand from the definitions, and the rule reading of bench/simulate/hier_model_check.py.
Every comparison is exact up to float rounding."""
import sys

import pytest

from caracal.model import formulas as F, ml, predict
from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench" / "simulate"))
import hier_model_check as hmc  # noqa: E402

EXACT = dict(rel=1e-12, abs=1e-12)
H = F.Hockney(1.0, 0.1)      # us, us/byte
N = F.Hockney(1.0, 0.01)     # a node level
T = F.Hockney(10.0, 0.1)     # a top level
FLAT = ml.Sched(node_shared=False)


def test_knomial_children_are_caracals_tree():
    # tree.c rooted at 0: binomial on 8; 3-nomial on 9 (digits in radix 3)
    assert ml.knomial_children(8, 2) == [[1, 2, 4], [], [3], [], [5, 6], [], [7], []]
    assert ml.knomial_children(9, 3)[0] == [1, 2, 3, 6]
    assert ml.knomial_children(9, 3)[3] == [4, 5] and ml.knomial_children(9, 3)[6] == [7, 8]
    assert ml.knomial_children(32, 32)[0] == list(range(1, 32))


def test_nchunks_follows_caracal_ml_nchunks():
    s = ml.Sched()
    assert [ml.nchunks(m, s) for m in (8, 256 << 10, (256 << 10) + 1, 1 << 20, 4 << 20)] == [1, 1, 2, 4, 12]


@pytest.mark.parametrize("value, expected", [
    # binomial on 8, m = s = 10, shared link: a parent with c children costs 1 + 10c
    # (root 3 children -> 4; rel 4, 2 children -> 7; rel 6, 1 child -> 9)
    (lambda: ml.tree_bcast(H, 8, 2, 10, 10, True), 9.0),
    # the same, each flow alone: 3 hops x (1 + 1)
    (lambda: ml.tree_bcast(H, 8, 2, 10, 10, False), 6.0),
    # 4 MiB in 12 chunks, flows of 64 KiB, not shared: 3 hops x (1 + 6553.6)
    (lambda: ml.tree_bcast(H, 8, 2, 4 << 20, 65536, False), 3 * 6554.6),
    # flat (radix 32) on 32: one hop; shared: 1 + 31 x 10 x 0.1
    (lambda: ml.tree_bcast(H, 32, 32, 10, 10, True), 32.0),
    # reduce on 4 (0 <- 1, 2; 2 <- 3), shared: rank 2 at 1 + 1 = 2, root at 2 + (1 + 2) = 5;
    # not shared 2 + 2 = 4; combining 0.5 us/B adds 10 x 0.5 at rank 2 and 2 x 10 x 0.5 at the root
    (lambda: ml.tree_reduce(H, 4, 2, 10, 10, True), 5.0),
    (lambda: ml.tree_reduce(H, 4, 2, 10, 10, False), 4.0),
    (lambda: ml.tree_reduce(H, 4, 2, 10, 10, False, 0.5), 19.0),
    # dissemination radix 3: 9 ranks 2 rounds, 10 ranks 3 rounds; radix 32 on 2 ranks: one round
    (lambda: ml.dissemination(H, 9, 3), 2.0),
    (lambda: ml.dissemination(H, 10, 3), 3.0),
    (lambda: ml.dissemination(T, 2, 32), 10.0),
    # ring on 4, one chunk of 400: 6 steps x (1 + 100 x 0.1); two chunks of 400 (m 800) on a
    # shared link: 6 x (1 + 200 x 0.1), each flow alone 6 x (1 + 10)
    (lambda: ml.allreduce_ring(H, 4, 400, 400, True), 66.0),
    (lambda: ml.allreduce_ring(H, 4, 800, 400, True), 126.0),
    (lambda: ml.allreduce_ring(H, 4, 800, 400, False), 66.0),
    # recursive doubling on 6: 2 rounds + fold-in and send-back, 4 x (1 + 1)
    (lambda: ml.allreduce_recdbl(H, 6, 10, 10, True), 8.0),
    # recursive multiplying radix 3 on 9: 2 rounds of 2 messages at once, shared 2 x (1 + 2);
    # on 10: one rank folds in and gets the result back, + 2 x (1 + 1)
    (lambda: ml.allreduce_recmul(H, 9, 10, 10, True, 3), 6.0),
    (lambda: ml.allreduce_recmul(H, 10, 10, 10, True, 3), 10.0),
    # radix 4 on 8: one full round (4) + a last of radix 2: (1 + 3) + (1 + 1)
    (lambda: ml.allreduce_recmul(H, 8, 10, 10, True, 4), 6.0),
    # each flow alone: rounds x (1 + 1) whatever the radix
    (lambda: ml.allreduce_recmul(H, 9, 10, 10, False, 3), 4.0),
])
def test_level_primitives_by_hand(value, expected):
    assert value() == pytest.approx(expected, **EXACT)


def test_recmul_radix_and_shape():
    assert ml.recmul_radix(8, 4, 0) == 4                  # at most the group
    assert ml.recmul_radix(8, 64, 1 << 20) == 5           # 4 scratch chunks of 1 MiB fit 4 MiB
    assert ml.recmul_shape(10, 3) == (2, 1, 1)            # 9 = 3^2 x 1, one pair folds
    assert ml.recmul_shape(32, 4) == (2, 2, 0)            # 32 = 4^2 x 2


@pytest.mark.parametrize("value, expected", [
    # 64 ranks, node 32 (2 leaders), m = 100, one chunk: top 10 + 1 x 100 x 0.1 = 20;
    # node binomial on 32, each flow alone: 5 x (1 + 1) = 10
    (lambda: ml.bcast(N, T, 64, 100, 32, FLAT), 30.0),
    # radix 32 in the node: one hop (2)
    (lambda: ml.bcast(N, T, 64, 100, 32, ml.Sched(node_k=32, node_shared=False)), 22.0),
    # barrier: fan-in and fan-out 5 x 1 each + one dissemination round 10; flat node 1 + 1 + 10
    (lambda: ml.barrier(N, T, 64, 32, FLAT), 20.0),
    (lambda: ml.barrier(N, T, 64, 32, ml.Sched(node_k=32)), 12.0),
    # allreduce 8 B: node reduce 5 x 1.08, leaders one exchange 10.8, node bcast 5 x 1.08
    (lambda: ml.allreduce(N, T, 64, 8, 32, ml.Sched(top_allreduce="recdbl", node_shared=False)), 21.6),
    # 4 MiB in 12 chunks of 349525.33 B: node reduce 5 x (1 + 3495.2533), ring on 2 leaders
    # (shared) 2 x (10 + 2 MiB x 0.1), node bcast of 64 KiB segments 5 x (1 + 655.36)
    (lambda: ml.allreduce(N, T, 64, 4 << 20, 32, ml.Sched(top_allreduce="ring", node_shared=False)),
     5 * (1 + (4 << 20) / 12 * 0.01) + 2 * (10 + (2 << 20) * 0.1) + 5 * (1 + 655.36)),
])
def test_schedules_by_hand(value, expected):
    assert value() == pytest.approx(expected, **EXACT)


def test_two_regime_line():
    h = ml.TwoRegime(F.Hockney(1.0, 0.001), F.Hockney(10.0, 0.001))
    assert h.msg(100) == pytest.approx(1.1, **EXACT) and h.msg(65536) == pytest.approx(75.536, **EXACT)
    assert (h.alpha, h.beta) == (1.0, 0.001)


def test_predict_hier_rows_are_the_schedules():
    p = predict.Params(node=N, top=T, top_loggp=F.LogGP(3.0, 3.5, 0.1), compute=F.Compute(1e12, 1e12),
                       node_size=32, torus_dims=None, node_shared=False)
    bc = next(m for m in predict.models("bcast", p) if m.name == "hier")
    assert bc.time(64, 100) == pytest.approx(30.0, rel=1e-9)
    # hier-sag: the leaders' scatter_allgather:2 of 2 blocks (2 x (10 + 5)), binomial node 5 x (1 + 1)
    sag = next(m for m in predict.models("bcast", p) if m.name == "hier-sag")
    assert sag.time(64, 100) == pytest.approx(40.0, rel=1e-9)
    # hier-rsag, 8 B: node reduce and bcast 5 x (1 + 0.08) each, rsag on 2 leaders: one double,
    # so block 0 holds it and block 1 is empty: the halving and the doubling each move 8 B one
    # way, 2 x (10 + 0.8)
    rs = next(m for m in predict.models("allreduce", p) if m.name == "hier-rsag")
    assert rs.time(64, 8) == pytest.approx(10 * 1.08 + 2 * 10.8, rel=1e-9)


def test_rules_give_the_schedule():
    s = hmc.sched_for({"CARACAL_ALLREDUCE": "recdbl@-64k ring@64k- node/knomial:32"}, "allreduce", 4 << 20, 256)
    assert (s.node_k, s.top_allreduce, s.node_shared) == (32, "ring", False)
    s = hmc.sched_for({"CARACAL_ALLREDUCE": "recdbl@-64k ring@64k- top/recmul:8@-64k"}, "allreduce", 8, 256)
    assert (s.node_k, s.top_allreduce, s.top_k) == (2, "recmul", 8)
    s = hmc.sched_for({"CARACAL_BARRIER": "hier node/knomial:32 top/dissemination:8"}, "barrier", 0, 1024)
    assert (s.node_k, s.top_k) == (32, 8)
    s = hmc.sched_for({"CARACAL_BCAST": "knomial top/knomial:4@-64k"}, "bcast", 4 << 20, 1024)
    assert (s.node_k, s.top_k) == (2, 2)
    with pytest.raises(ValueError):
        hmc.sched_for({"CARACAL_BCAST": "native"}, "bcast", 8, 64)


def test_reduce_schedule_by_hand():
    # 64 ranks, node 32, m = 100, each node flow alone: node binomial reduce 5 x (1 + 1) = 10;
    # leaders (2, shared): 10 + 1 x 100 x 0.1 = 20. Combining 0.5 us/B: a subtree root of 2^j ranks
    # combines j children (50 j) after its largest child's subtree, so the node's root waits
    # 50 (1 + 2 + 3 + 4 + 5) = 750 more, the top root 50 more
    assert ml.reduce(N, T, 64, 100, 32, FLAT) == pytest.approx(30.0, **EXACT)
    assert ml.reduce(N, T, 64, 100, 32, ml.Sched(node_shared=False, combine=0.5)) == pytest.approx(830.0, **EXACT)


def test_a_changed_rule_set_gets_its_own_label():
    doc = {"runs": [{"rules": "scaling", "env": {"CARACAL_BCAST": "knomial"}, "ranks": 64}]}
    assert hmc.label_for(doc, "scaling", {"CARACAL_BCAST": "knomial"}) == "scaling"
    assert hmc.label_for(doc, "scaling", {"CARACAL_BCAST": "knomial node/knomial:32"}) == "scaling-2"


# ---- session 19: scatter_allgather bcast, rsag allreduce, knomial_seg reduce ----

@pytest.mark.parametrize("value, expected", [
    # 4 blocks of 10 B, radix 2 (H: alpha 1, beta 0.1). Scatter: root to 2 (blocks 2-3, 20 B) at
    # 1 + 2 = 3, then to 1 (10 B) at 3 + 2 = 5; 2 to 3 at 3 + 2 = 5. Bruck round 1 (all start at
    # 5): 0 -> 3 block 0 and 2 -> 1 block 2 (1 and 3 hold what 0 and 2 would get): 7. Round 2:
    # 0 -> 2 blocks 0-1, 1 -> 3 blocks 1-2, 3 -> 1 blocks 3, 0 (wraps: two messages, 20 B in
    # all on each link): 7 + 1 + 2 = 10
    (lambda: ml.bcast_scatter_allgather(H, 4, 2, 40, True), 10.0),
    # radix 4 on 4: scatter 3 x 10 B at once, 1 + 3 = 4 shared (1 + 1 = 2 alone); one Bruck round,
    # the root sends block 0 to 3 ranks, the others theirs to the 2 non-roots, every non-root
    # receives 30 B: 4 + 1 + 3 = 8 shared, 2 + 2 = 4 alone
    (lambda: ml.bcast_scatter_allgather(H, 4, 4, 40, True), 8.0),
    (lambda: ml.bcast_scatter_allgather(H, 4, 4, 40, False), 4.0),
    # radix 8 on 4 runs radix 4 (k > n: n)
    (lambda: ml.bcast_scatter_allgather(H, 4, 8, 40, True), 8.0),
    # 10 B on 3: blocks 4, 3, 3. Scatter: 0 -> 2 (3 B) 1.3, 0 -> 1 (3 B) 2.6. Round 1: 0 -> 2
    # block 0 at max(2.6, 1.3) + 1.4 = 4.0; 2 -> 1 block 2 at 2.6 + 1.3 = 3.9. Round 2 (2 has
    # 0 and 2, 1 has 1 and 2): 0 -> 1 block 0, max(4.0, 3.9) + 1.4 = 5.4; 1 -> 2 block 1, 5.3
    (lambda: ml.bcast_scatter_allgather(H, 3, 2, 10, True), 5.4),
    # rsag on 4, 40 B (elem 1): halving 20 B then 10 B each way, doubling 10 then 20:
    # 4 alphas + 60 B x 0.1 = 10; two chunks at once on a shared link (m 80): 4 + 12 = 16
    (lambda: ml.allreduce_rsag(H, 4, 40, 40, True, 1), 10.0),
    (lambda: ml.allreduce_rsag(H, 4, 80, 40, True, 1), 16.0),
    (lambda: ml.allreduce_rsag(H, 4, 80, 40, False, 1), 10.0),
    # combining 0.5 us/B what each halving step receives: + 20 x 0.5 + 10 x 0.5
    (lambda: ml.allreduce_rsag(H, 4, 40, 40, True, 1, 0.5), 25.0),
    # on 6: ranks 1 and 3 take 0's and 2's 40 B (5), halving pairs (1, 3) at 5 + 3 and (4, 5) at
    # 3, then 8 + 2 = 10, doubling 12, 15; fold-out 40 B back: 20
    (lambda: ml.allreduce_rsag(H, 6, 40, 40, True, 1), 20.0),
    # 12 MiB of doubles on 2 (beta 1e-6 us/B): the halving step's 6 MiB in pieces of 4 and 2 MiB
    # (two alphas), the doubling step's 6 MiB whole: 3 + 12 MiB x 1e-6
    (lambda: ml.allreduce_rsag(F.Hockney(1.0, 1e-6), 2, 12 << 20, 12 << 20, True), 3 + 12.582912),
    # on 3: fold-in of 12 MiB in 3 pieces (3 alphas), then as on 2, fold-out whole: 7 + 36 MiB x 1e-6
    (lambda: ml.allreduce_rsag(F.Hockney(1.0, 1e-6), 3, 12 << 20, 12 << 20, True), 7 + 37.748736),
    # knomial_seg on 2, 40 B in 4 segments of 10, window 2, each flow alone (1 + 1): segments
    # 0 and 1 at 2; 2 and 3 once the root has combined 0 and 1 and the child's sends ended: 4
    (lambda: ml.reduce_knomial_seg(H, 2, 2, 40, 40, False, 10, 2, 1), 4.0),
    # flat on 32: every child alone, the same
    (lambda: ml.reduce_knomial_seg(H, 32, 32, 40, 40, False, 10, 2, 1), 4.0),
    # shared: the root's link carries 1 child x 2 segments: flows 1 + 2 = 3, twice: 6
    (lambda: ml.reduce_knomial_seg(H, 2, 2, 40, 40, True, 10, 2, 1), 6.0),
    # binomial on 4 (0 <- 1, 2; 2 <- 3), 2 segments, window 1: segment 0 at rank 2 at 2, at the
    # root at 4; rank 2 posts segment 1's receive once its send of 0 ended (4): 3's arrives at 6,
    # the root's at 8
    (lambda: ml.reduce_knomial_seg(H, 4, 2, 20, 20, False, 10, 1, 1), 8.0),
    # combining 0.5 us/B at the root (5 a segment): 7, 12, then 17 and 22
    (lambda: ml.reduce_knomial_seg(H, 2, 2, 40, 40, False, 10, 2, 1, 0.5), 22.0),
])
def test_session19_primitives_by_hand(value, expected):
    assert value() == pytest.approx(expected, **EXACT)


def test_scatter_allgather_and_rsag_schedules_by_hand():
    # 64 ranks (2 leaders), 100 B: leaders scatter_allgather of 2 blocks: 10 + 5, 10 + 5; flat node 2
    sag = ml.Sched(node_k=32, top_k=32, top_bcast="scatter_allgather", node_shared=False)
    assert ml.bcast(N, T, 64, 100, 32, sag) == pytest.approx(32.0, **EXACT)
    # no chunks where a level runs it: unsegmented, the node tree moves all 4 MiB, not 1/12 of it
    whole = ml.Sched(node_k=32, top_k=32, top_bcast="scatter_allgather", node_shared=False, segment=0)
    assert ml.bcast(N, T, 64, 4 << 20, 32, whole) == pytest.approx(2 * (10 + (2 << 20) * 0.1) + 1 + (4 << 20) * 0.01,
                                                                   **EXACT)
    # 4 MiB allreduce, no chunks: node knomial_seg of 64 segments of 64 KiB, 2 in flight, each alone:
    # 32 x (1 + 655.36); rsag on 2 leaders: 2 x (10 + 2 MiB x 0.1); node bcast 1 + 655.36
    rs = ml.Sched(node_k=32, top_allreduce="rsag", node_reduce="knomial_seg", pipeline=0, reduce_segment=65536,
                  reduce_window=2, node_shared=False)
    assert ml.allreduce(N, T, 64, 4 << 20, 32, rs) == pytest.approx(
        32 * 656.36 + 2 * (10 + (2 << 20) * 0.1) + 656.36, **EXACT)


def test_session19_rules_give_the_schedule():
    s = hmc.sched_for(hmc.CARACAL_ENV, "bcast", 4 << 20, 1024)
    assert (s.node_bcast, s.node_k, s.top_bcast, s.top_k) == ("knomial", 32, "scatter_allgather", 32)
    # 1-64 KiB: scatter_allgather:32 from 16 leaders (the top level's group size, `#16-`), the
    # radix-8 k-nomial below (simulate-bcast-4k.md)
    s = hmc.sched_for(hmc.CARACAL_ENV, "bcast", 4096, 1024)
    assert (s.top_bcast, s.top_k) == ("scatter_allgather", 32)
    s = hmc.sched_for(hmc.CARACAL_ENV, "bcast", 4096, 512)
    assert (s.top_bcast, s.top_k) == ("scatter_allgather", 32)
    s = hmc.sched_for(hmc.CARACAL_ENV, "bcast", 4096, 256)
    assert (s.top_bcast, s.top_k) == ("knomial", 8)
    env = hmc.load_rules(f"rsag={ROOT / 'bench/simulate/rules/allreduce-rsag.env'}")[1]
    s = hmc.sched_for(env, "allreduce", 4 << 20, 256)
    assert (s.node_reduce, s.node_k, s.top_allreduce, s.pipeline, s.reduce_segment, s.reduce_window) == \
        ("knomial_seg", 32, "rsag", 0, 65536, 2)
    s = hmc.sched_for(env, "allreduce", 4096, 256)
    assert (s.node_reduce, s.top_allreduce, s.top_k) == ("knomial", "recmul", 8)
    with pytest.raises(ValueError):
        hmc.sched_for({"CARACAL_BCAST": "knomial top/nary:4"}, "bcast", 8, 64)


def test_scatter_allgather_rounds_move_each_missing_block_once():
    # 4 blocks, radix 2: round 1 sends only what 1 and 3 lack; round 2's 3 -> 1 wraps (blocks 3, 0)
    assert ml.sag_bruck_rounds(4, 2, 40) == [[(0, 3, 10), (2, 1, 10)],
                                            [(0, 2, 20), (1, 3, 20), (3, 1, 10), (3, 1, 10)]]
    # any n and radix: a rank receives in the allgather exactly the bytes its scatter subtree lacks
    for n in range(2, 20):
        for k in (2, 3, 4, 32):
            m = 1000 + n  # uneven blocks
            at = ml._starts(n, m, 1)
            got = [0] * n
            for rnd in ml.sag_bruck_rounds(n, k, m):
                for _, dst, b in rnd:
                    got[dst] += b
            kk = ml.sag_radix(k, n)
            assert got == [m - (at[v + ml._sag_subtree(v, n, kk)] - at[v]) for v in range(n)], (n, k)


def test_scatter_allgather_per_rank_waits():
    # a message starts when its receiver has finished the previous round too: 30 B on 3, radix 2,
    # blocks of 10. Scatter: 0 -> 2 at 2, 0 -> 1 at 4; rank 2 (no children) starts the Bruck at 2.
    # Round 1: 0 -> 2 and 2 -> 1 (1 starts at 4) at 6; round 2: 0 -> 1, 1 -> 2 at 8: all 8
    assert ml.bcast_scatter_allgather(H, 3, 2, 30, True, per_rank=True) == pytest.approx([8.0] * 3, **EXACT)
    # a message's share is the larger of its sender's and its receiver's bytes of the round: 8 B on
    # 7, radix 3 (block 0 2 B, the others 1). Scatter: 0 -> 3 (3 B), 6 (1 B) at 1.4; 0 -> 1, 2 and
    # 3 -> 4, 5 at 2.6. Round 1 ends at 3.8 for ranks 2, 3, 4 and 4.0 for 6. Round 2: rank 3 sends
    # 1 B to 4 (4 receives 5 B: 3.8 + 1.5) and receives 1 B from 2 (5.3) and 1 + 3 B from 6
    # (3 receives 5 B: 4.0 + 1.5 = 5.5)
    assert ml.bcast_scatter_allgather(H, 7, 3, 8, True, per_rank=True)[3] == pytest.approx(5.5, **EXACT)
    # uneven blocks (5 elements on 4: 2, 1, 1, 1): a step costs its larger direction. Halving: 3 of
    # 5 (1.3), then 2 (ranks 0, 2: 2.5) or 1 (ranks 1, 3: 2.4); doubling: 0 <-> 2 trade blocks 0
    # and 1 (2: 3.7), 1 <-> 3 blocks 2 and 3 (3.5); then halves of 3 and 2: 3.7 + 1.3 = 5 for all
    assert ml.allreduce_rsag(H, 4, 5, 5, True, 1, per_rank=True) == pytest.approx([5.0] * 4, **EXACT)
    # rsag per rank: on 6 the folded even ranks 0 and 2 get the result last (20), the others at 15
    assert ml.allreduce_rsag(H, 6, 40, 40, True, 1, per_rank=True) == pytest.approx([20, 20, 20, 20, 15, 15], **EXACT)
