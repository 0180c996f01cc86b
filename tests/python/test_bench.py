"""caracal bench: collective timing with Caracal preloaded and native, both libraries."""
import json
import types

import pytest

from caracal.errors import UsageError
from caracal.probe_report import report
from caracal.schema import validate


def bench(cli, tmp_path, *args, name="b.json"):
    out = tmp_path / name
    p = cli("bench", *args, "--json", out)
    return p, (json.loads(out.read_text()) if out.exists() else None)


@pytest.mark.parametrize("coll", ["barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall"])
def test_each_collective_native_and_caracal(cli, mpi, tmp_path, coll):
    for native in (False, True):
        flags = ["--native"] if native else []
        # (a 20 ms start window: this checks what is measured, not how fast; with the measured
        # window, microseconds, a loaded machine made every start late once: 0 valid repetitions)
        p, doc = bench(cli, tmp_path, coll, "--mpi", mpi, "--sizes", "8,4K", "--reps", "5",
                       "--window-us", "20000", *flags, name=f"{native}.json")
        assert p.returncode == 0, p.stderr
        assert validate(doc) == []
        assert doc["caracal"] is (not native)
        assert [pt["size"] for pt in doc["points"]] == [8, 4096]
        for pt in doc["points"]:
            assert pt["valid"] >= 1
            assert pt["min_us"] <= pt["median_us"] <= pt["p90_us"] <= pt["max_us"]


def test_barrier_sync_and_launches_pool(cli, mpi, tmp_path):
    p, doc = bench(cli, tmp_path, "allreduce", "--mpi", mpi, "--sizes", "1K,8,64", "--reps", "4",
                   "--sync", "barrier", "--launches", "2", "--native")
    assert p.returncode == 0, p.stderr
    assert validate(doc) == []
    assert doc["sync"] == "barrier" and "biased" in doc["sync_bias"]
    assert [ln["seed"] for ln in doc["launches"]] == [1, 2]
    for pt in doc["points"]:  # barrier sync never discards: 2 launches x 4 reps
        assert pt["reps"] == 8 and pt["valid"] == 8 and len(pt["launch_medians_us"]) == 2
    assert [pt["size"] for pt in doc["points"]] == [8, 64, 1024]


@pytest.mark.parametrize("args,msg", [
    (["gossip"], "unknown collective"),
    (["bcast", "--sizes", "8,x"], "--sizes"),
    (["bcast", "--sizes", "8,8"], "twice"),
    (["bcast", "--root", "5"], "--root 5"),
    (["bcast", "--reps", "0"], "at least 1"),
    (["bcast", "--sync", "psychic"], "invalid choice"),
])
def test_bench_bad_arguments(cli, args, msg):
    p = cli("bench", *args)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and msg in lines[0], p.stderr


def test_report_overlays_probe_and_bench(cli, tmp_path):
    docs = []
    for mpi in ("openmpi", "mpich"):
        out = tmp_path / f"{mpi}.json"
        cli("probe", "--mpi", mpi, "--max", "4K", "--per-octave", "1", "--budget", "0.002",
            "--trials", "1", "--json", out, check=True)
        docs.append((str(out), json.loads(out.read_text())))
    p, b = bench(cli, tmp_path, "bcast", "--sizes", "8,1K", "--reps", "3", "--native")
    docs.append((str(tmp_path / "b.json"), b))
    plots, html = tmp_path / "plots", tmp_path / "r.html"
    assert report(docs, types.SimpleNamespace(html=str(html), plots=str(plots))) == 0
    assert sorted(f.name for f in plots.iterdir()) == ["bench-bcast.png", "probe-bandwidth.png",
                                                       "probe-latency.png"]
    assert all(f.stat().st_size > 5000 for f in plots.iterdir())
    assert html.read_text().count("data:image/png;base64,") == 3
    bad = dict(docs[0][1])
    del bad["points"]
    with pytest.raises(UsageError):
        report([("bad.json", bad)], types.SimpleNamespace(html=None, plots=None))
