"""caracal model: the formulas against values worked out by hand, the fit against a
synthetic probe whose alpha and beta are known, and the CLI's output and bad input.

Tolerance: every comparison is pytest.approx(rel=1e-12) (float rounding only): the
hand-computed values are exact in decimal and the fit's input lies exactly on a line.
"""
import json

import pytest

from caracal.model import fit, formulas as F, predict
from conftest import run_cli

EXACT = dict(rel=1e-12, abs=1e-12)

H = F.Hockney(alpha=2.0, beta=0.5)          # us, us/byte
C = F.Compute(gamma=1.0, mem_bw=12.0)       # combine: max(1/8, 3/12) = 0.25 us/byte
G = F.LogGP(L=1.0, o=0.5, G=0.01)


def test_rounds_are_integer_logs():
    assert [F.rounds(P) for P in (1, 2, 3, 4, 5, 8, 9)] == [0, 1, 2, 2, 3, 3, 4]
    assert [F.rounds(P, 4) for P in (1, 4, 5, 16, 17)] == [0, 1, 2, 2, 3]


@pytest.mark.parametrize("value, expected", [
    # binomial bcast, P=8, m=100: 3 rounds x (2 + 50)
    (lambda: F.bcast_knomial(H, 8, 100), 156.0),
    # 4-nomial, P=8: 2 rounds x 3 sends x 52
    (lambda: F.bcast_knomial(H, 8, 100, 4), 312.0),
    # binomial reduce: 3 x (52 + 100 x 0.25)
    (lambda: F.reduce_knomial(H, C, 8, 100), 231.0),
    # recursive doubling, P=8: 3 x 77; P=6: 2 x 77 + fold-in/out 2 x 52 + one combine 25
    (lambda: F.allreduce_recdbl(H, C, 8, 100), 231.0),
    (lambda: F.allreduce_recdbl(H, C, 6, 100), 283.0),
    # ring allreduce, P=4: 6 x (2 + 25 x 0.5) + 3 x 25 x 0.25
    (lambda: F.allreduce_ring(H, C, 4, 100), 105.75),
    # allgather ring P=4, block 100: 3 x 52; recursive doubling: 2 x 2 + 300 x 0.5
    (lambda: F.allgather_ring(H, 4, 100), 156.0),
    (lambda: F.allgather_recdbl(H, 4, 100), 154.0),
    # dissemination barrier P=5: 3 x 2
    (lambda: F.barrier_dissemination(H, 5), 6.0),
    # hier bcast P=16, node 4: leaders 4 -> 2 x 52 at top, node 4 -> 2 x (1 + 10)
    (lambda: F.bcast_hier(F.Hockney(1.0, 0.1), H, 16, 100, 4), 126.0),
    # hier barrier P=16, node 4: 2 x 2 x 1 + 2 x 2
    (lambda: F.barrier_hier(F.Hockney(1.0, 0.1), H, 16, 4), 8.0),
    # the source's models, P=512, d=3, m=1000 (P^(1/3) = 8):
    # rect: 10 + 2x4x0.5 + 3 + 3x8x(1 + 1) = 65
    (lambda: F.bcast_rect(G, 512, 1000, 3), 65.0),
    # binomial: log2 512 = 9 x (10 + 1 + 1) = 108
    (lambda: F.bcast_binomial_loggp(G, 512, 1000), 108.0),
    # rect reduce, gamma = mem = 100: max(1.25, 30, 10) + 55 = 85
    (lambda: F.reduce_rect(G, F.Compute(100.0, 100.0), 512, 1000, 3), 85.0),
])
def test_formula_by_hand(value, expected):
    assert value() == pytest.approx(expected, **EXACT)


def test_rect_beats_binomial_only_for_large_messages():
    # the model's own crossover: latency terms grow as d P^(1/d) against log2 P
    assert F.bcast_rect(G, 512, 8, 3) > F.bcast_binomial_loggp(G, 512, 8)
    assert F.bcast_rect(G, 512, 1 << 20, 3) < F.bcast_binomial_loggp(G, 512, 1 << 20) / 8


def _probe(mode, times, testbed=None):
    doc = {"schema": "caracal.probe/1", "label": "synthetic", "created": "2026-11-26T00:00:00Z",
           "mode": mode, "transport": "mpi", "mpi": "openmpi", "mpi_library": "Open MPI v4.1.4",
           "ranks": 2, "active_ranks": 2,
           "options": {"min": 1, "max": 1 << 20, "per_octave": 2, "perturb": 0, "nocache": False,
                       "budget": 0.05, "trials": 5, "min_reps": 8},
           "machine": {"hostname": "vm", "cpu": "x", "cores": 2, "llc_bytes": 1 << 25}, "wall_seconds": 1.0,
           "points": [{"size": m, "reps": 10, "trials": 5, "latency_us": t, "latency_us_median": t,
                       "bandwidth_MBps": m / t, "bandwidth_MBps_median": m / t,
                       "msg_rate": 1e6 / t, "msg_rate_median": 1e6 / t} for m, t in times],
           "corrupted": []}
    if mode == "stream":
        doc["options"]["window"] = 16
    if testbed:
        doc["options"]["testbed"] = {"name": "tb", "hosts": 2, "links": 1, "rate_bits": 0, "ppn": 1}
    return doc


SIZES = [1, 8, 64, 512, 4096, 32768, 262144, 1 << 20]


def test_fit_recovers_known_alpha_beta_and_splits_o_with_stream():
    shm = _probe("pingpong", [(m, 1.5 + m * 0.001) for m in SIZES])
    net = _probe("pingpong", [(m, 40.0 + m * 0.08) for m in SIZES], testbed=True)
    stream = _probe("stream", [(m, 3.0 + m * 0.08) for m in SIZES[:4]], testbed=True)
    lv = fit.fit_levels({"a": shm, "b": net, "c": stream})
    assert lv["shm"].hockney.alpha == pytest.approx(1.5, rel=1e-9)
    assert lv["shm"].hockney.beta == pytest.approx(0.001, rel=1e-9)
    assert lv["shm"].o_source == "assumed" and lv["shm"].loggp.o == pytest.approx(0.5, rel=1e-9)
    assert lv["net"].hockney.alpha == pytest.approx(40.0, rel=1e-9)
    assert lv["net"].hockney.beta == pytest.approx(0.08, rel=1e-9)
    # stream's smallest size: 3.0 + 0.08 us per message is the gap, so o = 3.08, L = 40 - 6.16
    assert lv["net"].o_source == "stream"
    assert lv["net"].loggp.o == pytest.approx(3.08, rel=1e-9)
    assert lv["net"].loggp.L == pytest.approx(40.0 - 6.16, rel=1e-9)
    assert lv["net"].max_rel_err == pytest.approx(0.0, abs=1e-9)


def test_fit_weighs_small_sizes():
    # 10% noise on the largest point must not move alpha by more than a few percent
    pts = [(m, 1.5 + m * 0.001) for m in SIZES]
    pts[-1] = (pts[-1][0], pts[-1][1] * 1.1)
    h = fit.hockney_fit(pts)
    assert h.alpha == pytest.approx(1.5, rel=0.05)


def test_compare_hook_gives_relative_error():
    p = predict.Params(node=H, top=H, top_loggp=G, compute=C, node_size=4, torus_dims=None)
    rows = predict.predict("bcast", p, [8], [100])
    got = predict.compare(rows, {("binomial", 8, 100): 130.0})
    assert len(got) == 1 and got[0]["rel_err"] == pytest.approx(26.0 / 130.0, **EXACT)


def test_cli_table_and_json(tmp_path):
    shm = tmp_path / "shm.json"
    shm.write_text(json.dumps(_probe("pingpong", [(m, 2.0 + m * 0.5) for m in SIZES])))
    out = tmp_path / "m.json"
    p = run_cli("model", "--probe", shm, "--coll", "bcast", "--bytes", "100", "--procs", "8",
                "--torus", "8x8x8", "--gamma", "0.001", "--mem-bw", "0.012", "--json", out,
                "--plot", tmp_path / "m.png")
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    got = {(r["model"], r["procs"]): r["us"] for r in doc["predictions"]}
    assert got[("binomial", 8)] == pytest.approx(156.0, rel=1e-9)      # as by hand above
    # o = L = alpha/3 (no stream document): rect on 512 = 50 + 8 x 2/3 + 2 + 3 x 8 x 2
    assert got[("rect", 512)] == pytest.approx(50 + 16 / 3 + 2 + 48, rel=1e-9)
    assert (tmp_path / "m.png").stat().st_size > 0
    assert "binomial" in p.stdout and "P=512" in p.stdout


@pytest.mark.parametrize("args, needle", [
    (["--coll", "gather"], "unknown collective"),
    (["--coll", "bcast", "--torus", "8x1"], "--torus"),
    (["--coll", "bcast", "--procs", "0"], "--procs"),
    (["--coll", "bcast", "--bytes", "1Q"], "--bytes"),
])
def test_cli_bad_input_one_line_exit_2(tmp_path, args, needle):
    shm = tmp_path / "shm.json"
    shm.write_text(json.dumps(_probe("pingpong", [(m, 2.0 + m * 0.5) for m in SIZES])))
    p = run_cli("model", "--probe", shm, *args)
    assert p.returncode == 2 and needle in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_cli_rejects_a_document_that_is_not_a_probe(tmp_path):
    bad = tmp_path / "bench.json"
    bad.write_text(json.dumps({"schema": "caracal.probe/1", "mode": "pingpong"}))
    p = run_cli("model", "--probe", bad, "--coll", "bcast")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and str(bad) in p.stderr, p.stderr


def test_mm25d_words_by_hand():
    from caracal.model import la25d
    # n=13, p=8, c=2 (q=2): SUMMA 2*169/(2*2) = 84.5, replication + reduction 3*169/4 = 126.75
    assert la25d.words_mm(13, 8, 2) == pytest.approx(211.25, **EXACT)
    assert la25d.words_mm(9, 4, 1) == pytest.approx(81.0, **EXACT)
    with pytest.raises(ValueError):
        la25d.grid_side(8, 1)


def test_scatter_allgather_bcast_by_hand():
    # P=4, m=100: (2 + 3) x 2 + 2 x 3/4 x 100 x 0.5 = 10 + 75
    assert F.bcast_scatter_allgather(H, 4, 100) == pytest.approx(85.0, **EXACT)
    # reduce: (3 + 2) x 2 + 75 + 3/4 x 100 x 0.25 = 103.75
    assert F.reduce_scatter_gather(H, C, 4, 100) == pytest.approx(103.75, **EXACT)
