"""caracal nodemap across emulated hosts (caracal testbed): 2 hosts with 2 ranks each,
TCP between them and shared memory inside each; `--testbed` places the ranks."""
import json

import pytest

from conftest import run_cli
from test_nodemap import NODEMAP_ARGS, c_levels, check_structure
from testbed_util import emulated_hosts, unique


@pytest.fixture(scope="module")
def two_hosts():
    with emulated_hosts(unique("nmh"), 2) as name:
        yield name


def test_two_hosts(two_hosts, mpi, tmp_path):
    out = tmp_path / "topo.json"
    p = run_cli("nodemap", "--testbed", two_hosts, "-n", "4", "--ppn", "2", "--mpi", mpi, "--timeout", "120",
                "--out", out, "--force", *NODEMAP_ARGS, timeout=200)
    assert p.returncode == 0, p.stdout + p.stderr
    doc = json.loads(out.read_text())
    check_structure(doc, 4)
    # --ppn 2 puts ranks 0,1 on host0 and 2,3 on host1
    assert [r["host"] for r in doc["ranks"]] == ["host0", "host0", "host1", "host1"]
    levels = {lv["name"]: lv["group"] for lv in doc["levels"]}
    assert levels["node"] == [0, 0, 1, 1]
    assert [r["shm_group"] for r in doc["ranks"]] == [0, 0, 1, 1]
    assert levels["socket"] == [0, 0, 1, 1]  # one package per host here; sockets never span hosts
    # two nodes: no tier above node can be told apart
    assert list(levels) == ["socket", "node"]
    # phase 1 times (0,1), (2,3) and everyone against the landmarks 0 and 2; only (1,3) may be estimated
    M = doc["measured"]
    assert all(M[p][q] for p, q in [(0, 1), (2, 3), (0, 2), (0, 3), (1, 2)])
    assert doc["pairs_measured"] in (5, 6)
    assert c_levels(mpi, out) == levels


def test_testbed_options_are_checked(two_hosts, tmp_path):
    out = tmp_path / "t.json"
    p = run_cli("nodemap", "-n", "2", "--ppn", "2", "--out", out)
    assert p.returncode == 2 and "--ppn belongs to --testbed" in p.stderr
    p = run_cli("nodemap", "--testbed", two_hosts, "-n", "6", "--ppn", "2", "--out", out)
    assert p.returncode == 2 and "needs 3 hosts" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    p = run_cli("nodemap", "--testbed", "nosuchbed", "-n", "2", "--out", out)
    assert p.returncode == 2 and "not up" in p.stderr
    assert not out.exists()


def test_topology_gives_the_hierarchy_of_the_hostnames(two_hosts, mpi, tmp_path):
    """Discovery: CARACAL_TOPOLOGY from nodemap's document gives libcaracal the same levels
    and groups as the hostnames do (MPI_COMM_TYPE_SHARED and hwloc)."""
    out = tmp_path / "topo.json"
    p = run_cli("nodemap", "--testbed", two_hosts, "-n", "4", "--ppn", "2", "--mpi", mpi, "--timeout", "120",
                "--out", out, *NODEMAP_ARGS, timeout=200)
    assert p.returncode == 0, p.stdout + p.stderr
    docs = []
    for extra in ([], ["--topology", out]):
        p = run_cli("info", "--hierarchy", "-n", "4", "--testbed", two_hosts, "--ppn", "2", "--mpi", mpi, "--json",
                    *extra, timeout=200)
        assert p.returncode == 0, p.stdout + p.stderr
        docs.append(json.loads(p.stdout))
    by_name, by_topo = ([(lv["kind"], [g["members"] for g in lv["groups"]]) for lv in d["levels"]] for d in docs)
    assert by_name == by_topo, (by_name, by_topo)
    # and it is the hosts': two node groups, their leaders on top
    assert ("node", [[0, 1], [2, 3]]) in by_name and by_name[-1] == ("top", [[0, 2]]), by_name
    assert docs[1]["hosts"] == ["host0", "host0", "host1", "host1"]
