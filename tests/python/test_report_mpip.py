"""The report's mpiP-level content: site IDs, App% and MPI%, min/mean/max time and size,
COV across ranks, sent and received bytes apart, the per-rank site statistics, inlined call
sites told apart, the collectives table reconciled with the calls table, C++ names shortened
in their argument list, and plots without empty panels or an exaggerating colour scale.
Synthetic profiles with numbers worked out by hand, and real profiles of tests/c programs
whose exact traffic is known."""
import json
import os

import pytest

from caracal import report_format as fmt
from caracal import report_plots, report_sites, report_tables
from caracal.profile import validate
from conftest import BUILDS, ROOT

SRC = ROOT / "tests" / "c"
HPCG = "ExchangeHalo(SparseMatrix_STRUCT const&, Vector_STRUCT&)"


def synthetic():
    """Two ranks. Rank 0: 10 s total, 2 s in MPI; rank 1: 10 s, 6 s.
    Site A: MPI_Bcast in main, 3 calls per rank of 64 B, 1 s on rank 0 and 4 s on rank 1.
    Site B: MPI_Sendrecv inlined from exchange() into main, 2 calls per rank, each rank
    sends and receives 100 B and then 150 B (calls of 200 B and 300 B), 1 s and 2 s."""
    bcast = {"call": "MPI_Bcast", "count": 6, "bytes": 384, "bytes_sent": 0, "bytes_recv": 0,
             "size_min": 64, "size_max": 64, "time": 5.0, "time_min": 0.125, "time_max": 2.5,
             "histogram": [[7, 6, 384]]}
    sendrecv = {"call": "MPI_Sendrecv", "count": 4, "bytes": 1000, "bytes_sent": 500, "bytes_recv": 500,
                "size_min": 200, "size_max": 300, "time": 3.0, "time_min": 0.25, "time_max": 1.5,
                "histogram": [[8, 2, 400], [9, 2, 600]]}
    site_a = dict(bcast, function="main", file="/src/app.cpp", line=95, inlined_into=[],
                  module="/bin/app", offset="0x10",
                  per_rank={"count": [3, 3], "time": [1.0, 4.0], "bytes": [192, 192], "time_min": [0.125, 0.5],
                            "time_max": [0.5, 2.5], "bytes_sent": [0, 0], "bytes_recv": [0, 0]})
    site_b = dict(sendrecv, function=HPCG, file="/src/exchange.hpp", line=40,
                  inlined_into=[{"function": "main", "file": "/src/app.cpp", "line": 90}],
                  module="/bin/app", offset="0x20",
                  per_rank={"count": [2, 2], "time": [1.0, 2.0], "bytes": [500, 500], "time_min": [0.25, 0.5],
                            "time_max": [0.75, 1.5], "bytes_sent": [250, 250], "bytes_recv": [250, 250]})
    return {
        "schema": "caracal.profile/1", "partial": False, "missing_ranks": [], "caracal_version": "0.1.0",
        "mpi_library": "Open MPI v4.1.4", "mpi_version": "3.1", "program": "/bin/app", "argv": [],
        "nranks": 2,
        "ranks": [{"rank": r, "host": "h", "pid": 1 + r, "time_total": 10.0, "time_mpi": m, "partial": False,
                   "comm_sizes": {"2": 1}} for r, m in ((0, 2.0), (1, 6.0))],
        "calls": [bcast, sendrecv],
        "callsites": [site_b, site_a],
        "traffic": {"messages": [[0, 2], [2, 0]], "bytes": [[0, 250], [250, 0]]},
        "collectives": [{"call": "MPI_Bcast", "comm_size": 2, "count": 3, "calls": 6, "bytes": 384,
                         "roots": {"0": 3}, "root_changes": 0, "root_calls": {"0": 6}, "root_change_calls": 0}],
    }


def table(rep, key):
    return next(t for t in rep.tables if t.key == key)


def column(t, name):
    i = t.columns.index(name)
    return [row[i] for row in t.rows]


def test_synthetic_profile_is_valid():
    validate(synthetic())


def test_site_ids_and_time_columns():
    rep = report_tables.build(synthetic(), "p.json")
    t = table(rep, "sites-time")
    # ID 1 = most time: the Bcast (5 s) before the Sendrecv (3 s)
    assert column(t, "ID") == ["1", "2"] and column(t, "call") == ["MPI_Bcast", "MPI_Sendrecv"]
    # App %: of 20 s of all ranks' time; MPI %: of 8 s in MPI
    assert column(t, "App %") == ["25.0", "15.0"]
    assert column(t, "MPI %") == ["62.5", "37.5"]
    assert column(t, "min") == ["125 ms", "250 ms"]
    assert column(t, "mean") == ["833 ms", "750 ms"]   # 5 s / 6 calls, 3 s / 4 calls
    assert column(t, "max") == ["2.50 s", "1.50 s"]
    # COV over ranks: [1, 4] -> sd 2.1213 / mean 2.5 = 0.85; [1, 2] -> 0.7071 / 1.5 = 0.47
    assert column(t, "COV") == ["0.85", "0.47"]


def test_bytes_sent_and_received_apart_with_sizes():
    t = table(report_tables.build(synthetic(), "p.json"), "sites-bytes")
    assert column(t, "ID") == ["2", "1"]   # by bytes: 1000 B before 384 B, IDs stay those of the time order
    assert column(t, "sent") == ["500 B", "0 B"]
    assert column(t, "received") == ["500 B", "0 B"]
    assert column(t, "collective") == ["0 B", "384 B"]
    assert column(t, "min size") == ["200 B", "64 B"]
    assert column(t, "mean size") == ["250 B", "64 B"]
    assert column(t, "max size") == ["300 B", "64 B"]
    calls = table(report_tables.build(synthetic(), "p.json"), "calls")
    assert column(calls, "sent") == ["0 B", "500 B"] and column(calls, "received") == ["0 B", "500 B"]
    assert column(calls, "mean") == ["833 ms", "750 ms"]


def test_per_rank_mpi_time_cov():
    t = table(report_tables.build(synthetic(), "p.json"), "ranks")
    cov_row = next(r for r in t.rows if r[0] == "COV")
    # MPI time [2, 6]: sample sd sqrt(8) = 2.828 / mean 4 = 0.707; total [10, 10]: 0
    assert cov_row[2:4] == ["0.000", "0.707"]
    assert "min 2.00 s (rank 0), mean 4.00 s, max 6.00 s (rank 1)" in t.note


def test_cov_matches_mpips_definition():
    assert fmt.cov([1.0, 4.0]) == pytest.approx((4.5 / 1) ** 0.5 / 2.5)
    assert fmt.cov([3.0, 3.0, 3.0]) == 0.0
    assert fmt.cov([5.0]) == 0.0 and fmt.cov([]) == 0.0 and fmt.cov([0.0, 0.0]) == 0.0
    assert fmt.cov([2.0, 4.0, 6.0]) == pytest.approx(2.0 / 4.0)   # sd with n - 1 = 2


def test_site_cov_counts_only_ranks_that_called():
    s = synthetic()["callsites"][1]
    s["per_rank"] = dict(s["per_rank"], count=[3, 0], time=[1.0, 0.0])
    assert report_sites.site_cov(s) == 0.0   # one rank called it: no spread, not COV of [1, 0]


def test_per_rank_site_statistics():
    t = table(report_tables.build(synthetic(), "p.json"), "sites-ranks")
    rows = [r for r in t.rows if r[0] == "1"]
    assert [r[2] for r in rows] == ["0", "1", "*"]
    # rank 0: 3 calls, 1 s: mean 333 ms, App % 1/10, MPI % 1/2; rank 1: 4/10, 4/6; all: 5/20, 5/8
    assert rows[0][3:] == ["3", "500 ms", "333 ms", "125 ms", "10.0", "50.0"]
    assert rows[1][3:] == ["3", "2.50 s", "1.33 s", "500 ms", "40.0", "66.7"]
    assert rows[2][3:] == ["6", "2.50 s", "833 ms", "125 ms", "25.0", "62.5"]


def test_inlined_site_shows_its_caller_and_a_short_name():
    t = table(report_tables.build(synthetic(), "p.json"), "sites")
    row = next(r for r in t.rows if r[0] == "2")
    assert row[2] == "ExchangeHalo(...)"
    assert row[3] == "/src/exchange.hpp:40"
    assert row[4] == "main (app.cpp:90)"


@pytest.mark.parametrize("name,width,short", [
    (HPCG, 40, "ExchangeHalo(...)"),
    (HPCG, 50, "ExchangeHalo(SparseMatrix_STRUCT const&, ...)"),
    (HPCG, 80, HPCG),
    ("ComputeSPMV_ref(SparseMatrix_STRUCT const&, Vector_STRUCT&, Vector_STRUCT&)", 30, "ComputeSPMV_ref(...)"),
    ("ns::Solver<double>::exchange(ns::Grid<double, 3> const&, int) const", 40,
     "ns::Solver<double>::exchange(...) const"),
    ("std::vector<int, std::allocator<int> >::push_back(int const&)", 30, "std::vector<...>::push_back(...)"),
    ("a_c_function_with_a_very_long_name_and_no_arguments_at_all", 20,
     "a_c_function_with_a_very_long_name_and_no_arguments_at_all"),
    (None, 20, "?"),
])
def test_function_names_keep_the_name(name, width, short):
    assert fmt.function_name(name, width) == short


def test_collectives_reconcile_with_calls():
    d = synthetic()
    assert report_tables.reconcile(d) == [("MPI_Bcast", 6, 6)]
    rep = report_tables.build(d, "p.json")
    t = table(rep, "collectives")
    assert column(t, "operations") == ["3"] and column(t, "calls") == ["6"]
    assert "add up to its count in the calls table" in t.note
    assert not rep.warnings
    d["collectives"][0]["calls"] = 4   # e.g. two calls made from Fortran, accounted as calls only
    rep = report_tables.build(d, "p.json")
    assert report_tables.reconcile(d) == [("MPI_Bcast", 4, 6)]
    assert any("MPI_Bcast: the collectives table accounts 4 calls, the calls table counts 6" in w
               for w in rep.warnings)


def test_old_profiles_without_the_split_still_render():
    d = synthetic()
    for s in d["calls"] + d["callsites"]:
        for k in ("bytes_sent", "bytes_recv", "size_min", "size_max"):
            del s[k]
    for s in d["callsites"]:
        del s["inlined_into"]
        for k in ("time_min", "time_max", "bytes_sent", "bytes_recv"):
            del s["per_rank"][k]
    validate(d)
    rep = report_tables.build(d, "p.json")
    t = table(rep, "sites-bytes")
    assert "bytes" in t.columns and "sent" not in t.columns
    # bounds of the size classes: 200 B lies in [128, 256), 300 B in [256, 512)
    assert column(t, "min size")[0] == "128 B" and column(t, "max size")[0] == "511 B"
    assert table(rep, "sites-ranks").rows[0][4] == "-"   # no per-rank max


def test_size_plot_has_no_empty_panels():
    d = synthetic()
    d["calls"].append({"call": "MPI_Waitall", "count": 50, "bytes": 0, "bytes_sent": 0, "bytes_recv": 0,
                       "size_min": 0, "size_max": 0, "time": 1.0, "time_min": 0.01, "time_max": 0.1,
                       "histogram": [[0, 50, 0]]})
    assert [c["call"] for c in report_plots.size_panels(d)] == ["MPI_Sendrecv", "MPI_Bcast"]
    sizes = table(report_tables.build(d, "p.json"), "sizes")
    assert column(sizes, "call") == ["MPI_Sendrecv", "MPI_Bcast"]


@pytest.mark.parametrize("lo,hi,scale,vmin,vmax", [
    (800, 1000, "linear from 0", 0, 1000),          # 25% apart: colours 80% and 100% of the scale
    (5, 500, "linear from 0", 0, 500),
    (3, 5000, "log scale", 1, 10000),               # whole decades around the data
])
def test_heatmap_scale_does_not_exaggerate(lo, hi, scale, vmin, vmax):
    norm, text = report_plots.heatmap_norm(lo, hi)
    assert text == scale and (norm.vmin, norm.vmax) == (vmin, vmax)
    if scale.startswith("linear"):
        assert norm(lo) == pytest.approx(lo / hi)


# ---- real profiles ----

def run(cli, mpi, n, prog, out):
    p = cli("run", "--mpi", mpi, "-n", n, "--profile", out, "--", BUILDS[mpi] / "bin" / prog, timeout=300)
    assert p.returncode == 0, p.stderr
    d = json.loads(out.read_text())
    validate(d)
    return d


def marker_line(src, marker):
    return next(i for i, line in enumerate(src.read_text().splitlines(), 1) if marker in line)


def test_workload_sent_received_sizes_and_reconciliation(cli, mpi, tmp_path):
    """tests/c/prof_workload.c on 3 ranks (test_profiler.expected has the full accounting)."""
    n, p = 3, 2
    d = run(cli, mpi, n, "prof_workload", tmp_path / "p.json")
    got = {c["call"]: (c["bytes_sent"], c["bytes_recv"], c["size_min"], c["size_max"]) for c in d["calls"]}
    assert got["MPI_Send"] == (n * 300 * p, 0, 0, 100)        # 100 B messages and one to MPI_PROC_NULL
    assert got["MPI_Recv"] == (0, n * 300 * p, 100, 100)
    assert got["MPI_Isend"] == (n * 400 * p, 0, 400, 400)
    assert got["MPI_Irecv"] == (0, n * 400 * p, 400, 400)       # sized at completion
    assert got["MPI_Sendrecv"] == (2 * n * 40, 2 * n * 40, 80, 80)   # 40 B each way: one call moves 80 B
    assert got["MPI_Bcast"] == (0, 0, 64, 64)
    assert got["MPI_Allreduce"] == (0, 0, 16, 16)
    for s in d["callsites"]:
        pr = s["per_rank"]
        assert sum(pr["bytes_sent"]) == s["bytes_sent"] and sum(pr["bytes_recv"]) == s["bytes_recv"]
        assert min(t for t, c in zip(pr["time_min"], pr["count"]) if c) == s["time_min"]
        assert max(pr["time_max"]) == s["time_max"]
        assert all(lo <= hi for lo, hi in zip(pr["time_min"], pr["time_max"]))
    # every collective call counted in the calls table is in the collectives table
    assert report_tables.reconcile(d) == [("MPI_Allreduce", 2 * n, 2 * n), ("MPI_Barrier", n, n),
                                          ("MPI_Bcast", 5 * n, 5 * n)]
    rep = report_tables.build(d, "p.json")
    assert not rep.warnings


def test_inlined_call_sites_are_told_apart(cli, mpi, tmp_path):
    """tests/c/prof_inlined.c: one Sendrecv_replace line inlined at two places of main."""
    src = SRC / "prof_inlined.c"
    d = run(cli, mpi, 2, "prof_inlined", tmp_path / "p.json")
    sites = sorted((s for s in d["callsites"] if s["call"] == "MPI_Sendrecv_replace"),
                   key=lambda s: s["inlined_into"][0]["line"])
    assert [(s["function"], os.path.basename(s["file"]), s["line"]) for s in sites] == \
        [("ring_exchange", "prof_inlined.c", marker_line(src, "SITE:inlined"))] * 2
    assert [[(f["function"], os.path.basename(f["file"]), f["line"]) for f in s["inlined_into"]] for s in sites] == \
        [[("main", "prof_inlined.c", marker_line(src, "CALLER:first"))],
         [("main", "prof_inlined.c", marker_line(src, "CALLER:second"))]]
    # 3 calls of 16 B each way, then one of 64 B, on each of 2 ranks
    assert [(s["count"], s["bytes_sent"], s["bytes_recv"], s["size_max"]) for s in sites] == \
        [(6, 96, 96, 32), (2, 128, 128, 128)]
    text = report_tables.build(d, "p.json")
    row = [r for r in table(text, "sites").rows if r[1] == "MPI_Sendrecv_replace"]
    assert sorted(r[4] for r in row) == [f"main (prof_inlined.c:{marker_line(src, 'CALLER:first')})",
                                         f"main (prof_inlined.c:{marker_line(src, 'CALLER:second')})"]
