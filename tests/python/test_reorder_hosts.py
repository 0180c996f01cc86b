"""Reorder across two emulated hosts (caracal testbed) with no topology file: libcaracal's
built-in distances (MPI_COMM_TYPE_SHARED groups) must see that round-robin placement
(ranks 0, 2 on host0; 1, 3 on host1) is bad for test_reorder's graphs, and every
constructor must then reorder with exact MPI semantics."""
import pytest

from conftest import BUILDS, run_cli
from testbed_util import emulated_hosts, unique


@pytest.fixture(scope="module")
def two_hosts():
    with emulated_hosts(unique("rrh"), 2) as name:
        yield name


def test_built_in_distances_reorder_across_hosts(two_hosts, mpi):
    exe = BUILDS[mpi] / "bin" / "test_reorder"
    p = run_cli("testbed", "run", "--name", two_hosts, "-n", "4", "--ppn", "2", "--round-robin", "--mpi", mpi,
                "--timeout", "90", "--env", "CARACAL_LOG=map", "--", exe, "better", timeout=150)
    out, err = p.stdout, p.stderr
    assert "test_reorder better: 4 ranks, 0 failures" in out, out + err
    assert p.returncode == 0, out + err
    assert "predicted cost 460 with ranks in order, 244 reordered" in err  # the ring 10, 11, 12, 13 cut at 10 and 12: optimal


def test_round_robin_placement(two_hosts, mpi):
    p = run_cli("testbed", "run", "--name", two_hosts, "-n", "4", "--ppn", "2", "--round-robin", "--mpi", mpi,
                "--native", "--timeout", "60", "--", "sh", "-c", 'echo "${OMPI_COMM_WORLD_RANK:-$PMI_RANK} $(hostname)"',
                timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    placed = dict(line.split() for line in p.stdout.splitlines() if line.strip())
    assert placed == {"0": "host0", "1": "host1", "2": "host0", "3": "host1"}, p.stdout
