"""bench/model_check_hosts.py and bench/workdir.py without MPI: the rules each schedule is
forced with, the predictions (against formulas.py and hand values), the rated link's
two-part fit on a synthetic tbf-like probe, bad input (one line, exit 2), and work
directories that are reused only for the same build, library, machine and settings."""
import json
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import model_check_hosts as mch  # noqa: E402
import workdir  # noqa: E402
from caracal.model import formulas as F  # noqa: E402

EXACT = dict(rel=1e-12, abs=1e-12)
SHM = F.Hockney(1.0, 0.1)
NET = F.Hockney(10.0, 1.0)
C = F.Compute(gamma=1.0, mem_bw=12.0)       # combine 0.25 us/byte


def test_rules_force_point_to_point_on_both_levels_or_flat():
    assert mch.rules("bcast", "hier") == {"CARACAL_BCAST": "node/knomial:2 knomial:2"}
    assert mch.rules("allreduce", "flat") == {"CARACAL_ALLREDUCE": "recdbl", "CARACAL_NODE_SIZE": "1"}
    assert mch.rules("barrier", "hier") == {"CARACAL_BARRIER": "node/knomial:2 hier"}


@pytest.mark.parametrize("args, expected", [
    # hier at 2 hosts x 2: node binomial 11 + top binomial 110 (m = 100)
    (("bcast", "hier", 2, 2, 100), ("hier", 121.0, None)),
    # flat at 2x2: caracal model prices both rounds on net (220); placed: 11 + 110
    (("bcast", "flat", 2, 2, 100), ("binomial", 220.0, 121.0)),
    # flat reduce at 4x1: 2 rounds x (110 + 25), no placed variant with one rank per host
    (("reduce", "flat", 4, 1, 100), ("binomial", 270.0, None)),
    # barrier hier at 2x2: node fan-in + fan-out 2 x 1 + one dissemination round 10; m ignored
    (("barrier", "hier", 2, 2, 4096), ("hier", 12.0, None)),
    (("barrier", "flat", 2, 2, 4096), ("dissemination", 20.0, 20.0)),
    # allreduce flat 2x1: one recdbl exchange 110 + combine 25
    (("allreduce", "flat", 2, 1, 100), ("recdbl", 135.0, None)),
])
def test_predictions_by_hand(args, expected):
    name, t, alt = mch.predictions(*args, SHM, NET, C)
    assert name == expected[0]
    assert t == pytest.approx(expected[1], **EXACT)
    assert alt == (None if expected[2] is None else pytest.approx(expected[2], **EXACT))


def _probe(points, mode="pingpong"):
    return {"schema": "caracal.probe/1", "mode": mode, "options": {"testbed": "t"},
            "points": [{"size": m, "latency_us_median": t} for m, t in points]}


def test_rated_link_takes_the_two_part_fit():
    # tbf-like: 50 us and 1 GB/s up to a 64 KiB burst, then 0.16 us/B beyond it; the
    # least-squares line follows the small sizes (beta ~0.001) and would miss the rate
    sizes = [1, 64, 1024, 16384, 65536, 262144, 524288, 1048576]
    pts = [(m, 50.0 + 0.001 * m + max(0, m - 65536) * 0.16) for m in sizes]
    lf, how = mch.net_fit({"p.json": _probe(pts)}, rated=True)
    assert how.startswith("two-part") and "least squares would give" in how
    assert lf.hockney.alpha == pytest.approx(statistics_median([50.001, 50.064, 51.024]), **EXACT)
    # past the burst every size pays the rate: the slope is the rate's (plus the copy's
    # 0.001), not the 12% shallower median of (t - alpha)/m the burst would make it
    assert lf.hockney.beta == pytest.approx(0.161, **EXACT)
    assert lf.o_source == "assumed"


def test_the_fit_takes_the_best_trial():
    # the probe's result is its best trial; the median trial carries preemptions
    doc = _probe([(1, 0.0), (1048576, 0.0)])
    doc["points"] = [{"size": 1, "latency_us": 10.002, "latency_us_median": 25.0},
                     {"size": 1048576, "latency_us": 10.0 + 1048576 * 0.002, "latency_us_median": 900.0}]
    lf, _ = mch.net_fit({"p.json": doc}, rated=False)
    # (the median trials would give alpha 25)
    assert (lf.hockney.alpha, lf.hockney.beta) == (pytest.approx(10.0, rel=1e-9), pytest.approx(0.002, rel=1e-9))


def statistics_median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def test_a_straight_link_keeps_caracal_models_fit():
    pts = [(m, 30.0 + 0.002 * m) for m in (1, 1024, 65536, 1048576)]
    lf, how = mch.net_fit({"p.json": _probe(pts)}, rated=False)
    assert how.startswith("least squares")
    assert (lf.hockney.alpha, lf.hockney.beta) == (pytest.approx(30.0, rel=1e-9), pytest.approx(0.002, rel=1e-9))


def test_two_part_fit_needs_both_ends():
    with pytest.raises(mch.UsageError):
        mch.two_part_fit({"p.json": _probe([(1, 5.0), (1024, 6.0)])})


@pytest.mark.parametrize("text", ["2x", "1x2", "2x0", "9x1", "2x2,x", "2by2"])
def test_bad_shapes(text):
    with pytest.raises(ValueError):
        mch.parse_shapes(text)


@pytest.mark.parametrize("args, says", [
    (["--shapes", "2x9"], "2-8 hosts of 1-4 ranks"),
    (["--sizes", "8,4Q"], "bad --sizes"),
    (["--reps", "0"], "at least 1"),
])
def test_bad_input_one_line_exit_2(args, says):
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "model_check_hosts.py"), *args],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and says in lines[0], p.stderr


def _facts(lib_bytes, tmp_path, rate=None):
    lib = tmp_path / "libcaracal.so"
    lib.write_bytes(lib_bytes)
    return workdir.facts("openmpi", [lib], {"rate": rate})


def test_new_workdir_records_its_facts(tmp_path, capsys):
    now = _facts(b"build 1", tmp_path)
    work = workdir.open_workdir("t", None, now)
    try:
        assert json.loads((work / workdir.FACTS).read_text())["facts"] == now
        assert "launches kept in" in capsys.readouterr().err
    finally:
        (work / workdir.FACTS).unlink()
        work.rmdir()


def test_workdir_resumes_only_the_same_build_and_settings(tmp_path, capsys):
    work = tmp_path / "w"
    now = _facts(b"build 1", tmp_path)
    assert workdir.open_workdir("t", work, now) == work
    (work / "probe.json").write_text("{}")
    assert workdir.open_workdir("t", work, now) == work
    assert "1 finished file(s) reused" in capsys.readouterr().err
    for other in (_facts(b"build 2", tmp_path), _facts(b"build 1", tmp_path, rate="50mbit")):
        with pytest.raises(SystemExit) as e:
            workdir.open_workdir("t", work, other)
        assert e.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "another build" in err[0] and "use a new directory" in err[0]


def test_workdir_without_facts_is_refused(tmp_path, capsys):
    (tmp_path / "probe-openmpi-pingpong.json").write_text("{}")   # a stale cache of old
    with pytest.raises(SystemExit) as e:
        workdir.open_workdir("t", tmp_path, {"mpi": "openmpi"})
    assert e.value.code == 2
    assert "cannot tell which build" in capsys.readouterr().err


def test_table_lists_cells_without_a_measurement():
    fitd = {"alpha_us": 1.0, "beta_us_per_byte": 0.001, "o_us": 0.3, "o_source": "stream", "fit_points": 9,
            "fit_max_rel_err": 0.2}
    row = {"hosts": 2, "ppn": 2, "ranks": 4, "coll": "bcast", "sched": "flat",
           "rules": {"CARACAL_BCAST": "knomial:2", "CARACAL_NODE_SIZE": "1"}, "bytes": 4096, "measured_us": 20.0,
           "launch_medians_us": [19.0, 21.0], "p90_us": 25.0, "model": "binomial", "model_us": 30.0, "rel_err": 0.5,
           "placed_us": 15.0, "placed_err": -0.25, "load": [1.5, 2.0]}
    doc = {"rate": None, "rounds": 2, "reps": 20, "loadavg": [[1.0, 1, 1], [2.0, 2, 2]],
           "fit": {"shm": fitd, "net": dict(fitd, how="least squares")}, "rows": [row],
           "missing": [{"hosts": 4, "ppn": 1, "coll": "reduce", "sched": "hier", "bytes": 8, "launches": 2}]}
    md = mch.markdown(doc)
    assert "| 2x2 | bcast | flat (knomial:2) | 4 KiB | 20.0 (19.0/21.0) | binomial | 30.0 | +50% | 15.0 | -25% |" in md
    assert "| 4x1 | reduce | hier | 8 B | no repetition started in its window in 2 launch(es)" in md
    assert "1.5-2.0" in md and "placed model for the flat rows at 2+ ranks per host: 25%" in md
