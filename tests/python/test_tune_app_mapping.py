"""Mapping advice in caracal tune-app's closed loop, on two emulated hosts: `testbed run
--rankfile` places each rank where the file says, and tune-app launches the QAP placement of
the advice as a variant of its own (its rankfile), keeping it only where it won."""
import json
import statistics

import pytest

from conftest import BUILDS, run_cli
from testbed_util import emulated_hosts, unique


@pytest.fixture(scope="module")
def two_hosts():
    with emulated_hosts(unique("tam"), 2) as name:
        yield name


def rankfile(path, hosts):
    path.write_text("".join(f"rank {r}=host{h} slot=*\n" for r, h in enumerate(hosts)))
    return path


def test_testbed_run_rankfile(two_hosts, mpi, tmp_path):
    rf = rankfile(tmp_path / "rf", [1, 0, 0, 1])
    p = run_cli("testbed", "run", "--name", two_hosts, "-n", 4, "--rankfile", rf, "--mpi", mpi, "--native",
                "--timeout", 60, "--", "sh", "-c", 'echo "${OMPI_COMM_WORLD_RANK:-$PMI_RANK} $(hostname)"',
                timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    placed = dict(line.split() for line in p.stdout.splitlines() if line.strip())
    assert placed == {"0": "host1", "1": "host0", "2": "host0", "3": "host1"}, p.stdout
    for hosts, n, words in (([0, 5, 0, 1], 4, "host5 is not a host of testbed"), ([0, 1], 4, "places 2 ranks, -n is 4")):
        r = run_cli("testbed", "run", "--name", two_hosts, "-n", n, "--rankfile", rankfile(tmp_path / "bad", hosts),
                    "--", "true")
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and words in r.stderr, r.stderr


def test_tune_app_tries_the_qap_placement(two_hosts, mpi, tmp_path):
    """map_pairs: rank i exchanges 64 KiB with rank i + 2 (of 4). Placed 0 0 1 1 (hosts), every
    heavy pair crosses hosts; the advice's rankfile must pair them on one host, run as a
    variant of its own; the verdicts follow from the recorded times."""
    base = rankfile(tmp_path / "base.rankfile", [0, 0, 1, 1])
    out = tmp_path / "ta"
    p = run_cli("tune-app", "--mpi", mpi, "-n", 4, "--testbed", two_hosts, "--rankfile", base, "--repeats", 3,
                "--timeout", 120, "--out", out, "--", BUILDS[mpi] / "bin" / "map_pairs", timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    adv = json.loads((out / "advice.json").read_text())
    (m,) = [e for e in adv["advice"] if e["area"] == "mapping"]
    assert m["verdict"] == "recommended" and m["status"] == "predicted"
    doc = json.loads((out / "tune-app.json").read_text())
    assert doc["placements"]["baseline"] == ["--rankfile", str(base.resolve())]
    flag, rf = doc["placements"][m["id"]]
    assert flag == "--rankfile" and doc["variants"][m["id"]] == {}
    hosts = [line.split("=")[1].split()[0] for line in open(rf).read().splitlines()]
    assert hosts[0] == hosts[2] and hosts[1] == hosts[3] and hosts[0] != hosts[1], hosts
    base_t = doc["times"]["baseline"]
    for name, r in doc["results"].items():
        assert r["suggested"] == round(statistics.median(doc["times"][name]), 5)
        assert r["wins"] == (r["suggested"] < r["baseline"] * 0.97 and r["suggested_spread"][1] < statistics.median(base_t))
    kept = doc["kept"]
    assert (kept is None) == (not any(r["wins"] for r in doc["results"].values()))
    if kept and doc["placements"][kept] != doc["placements"]["baseline"]:
        assert (out / "placement.rankfile").read_text() == open(doc["placements"][kept][1]).read()
        assert "--rankfile" in (out / "settings.env").read_text()
    else:
        assert not (out / "placement.rankfile").exists()
