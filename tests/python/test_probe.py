"""caracal probe: sizes, integrity hook, JSON schema, modes on both MPI libraries, raw TCP,
bad arguments. Quick on purpose: small ranges, tiny time budgets, 2 ranks."""
import json

import pytest

from caracal.schema import validate

# Fast settings: timing quality does not matter here, only that every path works.
QUICK = ["--budget", "0.002", "--trials", "1", "--min-reps", "2", "--per-octave", "1"]

# round(2^(i/2)) from 1 to 1024, each with +-3 where it stays clear of its neighbours'
PERTURBED_1K = [1, 2, 3, 4, 6, 8, 11, 16, 19, 20, 23, 26, 29, 32, 35, 42, 45, 48, 61, 64, 67,
                88, 91, 94, 125, 128, 131, 178, 181, 184, 253, 256, 259, 359, 362, 365,
                509, 512, 515, 721, 724, 727, 1021, 1024]
BASE_1K = [1, 2, 3, 4, 6, 8, 11, 16, 23, 32, 45, 64, 91, 128, 181, 256, 362, 512, 724, 1024]


def sizes(cli, *extra):
    p = cli("probe", "--print-sizes", *extra, check=True)
    return [int(x) for x in p.stdout.split()]


def test_perturbed_sizes_are_exact(cli):
    assert sizes(cli, "--min", "1", "--max", "1K") == PERTURBED_1K


def test_no_perturb_gives_base_points(cli):
    assert sizes(cli, "--min", "1", "--max", "1K", "--no-perturb") == BASE_1K


def test_perturbation_width_and_range(cli):
    got = sizes(cli, "--min", "100", "--max", "5000", "--perturb", "7", "--per-octave", "1")
    base = [100, 128, 256, 512, 1024, 2048, 4096, 5000]
    assert got[0] == 100 and got[-1] == 5000
    assert all(any(s - b in (-7, 0, 7) for b in base) for s in got)
    assert {121, 135, 4089, 4103, 4993} <= set(got)


def run_probe(cli, tmp_path, *args, name="out.json", env=None):
    out = tmp_path / name
    p = cli("probe", *args, "--json", out, env=env)
    doc = json.loads(out.read_text()) if out.exists() else None
    return p, doc


def test_integrity_clean_run(cli, mpi, tmp_path):
    p, doc = run_probe(cli, tmp_path, "--mpi", mpi, "--mode", "integrity", "--max", "4K")
    assert p.returncode == 0, p.stderr
    assert doc["corrupted"] == []
    assert all(pt["ok"] and pt["bad_bytes"] == 0 for pt in doc["points"])
    assert validate(doc) == []


@pytest.mark.parametrize("extra", [[], ["--nocache"]])
def test_integrity_catches_injected_corruption(cli, mpi, tmp_path, extra):
    p, doc = run_probe(cli, tmp_path, "--mpi", mpi, "--mode", "integrity", "--max", "4K", *extra,
                       env={"CARACAL_PROBE_CORRUPT": "1021"})
    assert p.returncode == 1
    assert doc["corrupted"] == [1021]
    bad = [pt for pt in doc["points"] if not pt["ok"]]
    # the hook flips the middle byte at both ends of every round trip
    checked = bad[0]["checked"] if bad else 0
    assert checked >= 1
    assert [(b["size"], b["bad_bytes"], b["first_bad"]) for b in bad] == [(1021, 2 * checked, 510)]
    assert "CORRUPTED" in p.stdout


@pytest.mark.parametrize("mode,extra", [
    ("pingpong", []), ("pingpong", ["--nocache"]), ("pingpong", ["--one-buffer"]), ("stream", ["--window", "4"]), ("bidir", []),
    ("put", ["--sync", "fence"]), ("put", ["--sync", "lock"]), ("get", ["--sync", "fence"]),
    ("get", ["--sync", "lock"]),
])
def test_timed_modes_produce_valid_documents(cli, mpi, tmp_path, mode, extra):
    p, doc = run_probe(cli, tmp_path, "--mpi", mpi, "--mode", mode, "--max", "64K", *QUICK, *extra)
    assert p.returncode == 0, p.stderr
    assert validate(doc) == []
    assert doc["mode"] == mode and doc["mpi"] == mpi
    got = [pt["size"] for pt in doc["points"]]
    assert got == sizes(cli, "--max", "64K", "--per-octave", "1")
    for pt in doc["points"]:
        assert pt["latency_us"] > 0 and pt["bandwidth_MBps"] > 0
        assert pt["latency_us"] <= pt["latency_us_median"]  # best of the trials is never worse
        assert pt["reps"] >= 2
    assert doc["options"].get("one_buffer", False) == ("--one-buffer" in extra)


def test_multipair_four_ranks(cli, mpi, tmp_path):
    # MPICH busy-waits when oversubscribed: keep everything tiny
    p, doc = run_probe(cli, tmp_path, "--mpi", mpi, "-n", "4", "--mode", "multipair", "--max", "64",
                       "--window", "2", *QUICK)
    assert p.returncode == 0, p.stderr
    assert validate(doc) == []
    assert doc["options"]["pairs"] == 2 and doc["active_ranks"] == 4


@pytest.mark.parametrize("streams,bind", [(1, []), (2, ["127.0.0.1", "127.0.0.2"])])
@pytest.mark.parametrize("mode", ["pingpong", "stream"])
def test_tcp_streams_on_loopback(cli, tmp_path, streams, bind, mode):
    extra = [a for b in bind for a in ("--bind", b)]
    p, doc = run_probe(cli, tmp_path, "--transport", "tcp", "--mode", mode, "--streams", str(streams),
                       *extra, "--max", "1M", *QUICK)
    assert p.returncode == 0, p.stderr
    assert validate(doc) == []
    assert doc["transport"] == "tcp" and doc["options"]["streams"] == streams
    assert doc["options"]["bind"] == bind
    assert doc["points"][-1]["size"] == 1 << 20 and doc["points"][-1]["bandwidth_MBps"] > 0


def test_tcp_bad_bind_address_is_reported(cli, tmp_path):
    p, doc = run_probe(cli, tmp_path, "--transport", "tcp", "--bind", "10.255.255.254", *QUICK)
    assert p.returncode == 1 and doc is None
    assert "10.255.255.254" in p.stderr


def test_schema_rejects_broken_documents(cli, tmp_path):
    p, doc = run_probe(cli, tmp_path, "--max", "64", *QUICK)
    assert validate(doc) == []
    broken = json.loads(json.dumps(doc))
    del broken["points"][0]["latency_us"]
    assert validate(broken)
    broken = dict(doc, ranks="two")
    assert any("ranks" in e for e in validate(broken))
    broken = dict(doc, mode="teleport")
    assert any("mode" in e for e in validate(broken))
    broken = dict(doc, extra_field=1)
    assert any("extra_field" in e for e in validate(broken))
    assert validate({"schema": "caracal.nope/9"})


@pytest.mark.parametrize("args,msg", [
    (["--max", "0"], "--max"),
    (["--min", "2K", "--max", "1K"], "smaller than --min"),
    (["--max", "12Q"], "--max expects a size"),
    (["--mode", "teleport"], "invalid choice"),
    (["--transport", "tcp", "--mode", "put"], "tcp supports"),
    (["--streams", "2"], "belong to --transport tcp"),
    (["-n", "3", "--mode", "multipair"], "even number"),
    (["--budget", "0"], "--budget"),
    (["-n", "1"], "at least 2 ranks"),
    (["--sync", "lock"], "--sync belongs"),
    (["--mode", "stream", "--one-buffer"], "--one-buffer belongs"),
    (["--nocache", "--one-buffer"], "--one-buffer belongs"),
])
def test_bad_arguments_one_line_exit_2(cli, args, msg):
    p = cli("probe", *args)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and msg in lines[0], p.stderr


def test_existing_json_not_overwritten(cli, tmp_path):
    out = tmp_path / "keep.json"
    out.write_text("precious")
    p = cli("probe", "--json", out)
    assert p.returncode == 2 and out.read_text() == "precious"


def test_program_usage_error_passes_through(cli, mpi):
    """Errors caught by caracal-probe itself (not argparse) are still one line, exit 2."""
    import subprocess
    from conftest import BUILDS
    from caracal import launch
    cmd = launch.mpiexec_command(mpi, 2, [str(BUILDS[mpi] / "bin" / "caracal-probe"), "--window", "0"])
    p = subprocess.run(cmd, env=launch.launcher_env(), capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    ours = [ln for ln in p.stderr.splitlines() if ln.startswith("caracal-probe:")]
    assert ours == ["caracal-probe: --window expects an integer from 1 to 4096, got '0'"]
