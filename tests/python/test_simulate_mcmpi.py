"""MC-MPI's ingredients inside a simulation (bench/simulate/mcmpi_mapping.py): caracal-nodemap
built for SMPI measures L on the wide-area platform with landmark pruning, and a Caracal
profile taken under SMPI gives the traffic matrix T. Real simulations (smpirun), checked
from first principles."""
import json
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, run_cli
from test_nodemap import check_structure

sys.path.insert(0, str(ROOT / "python"))
from caracal.sim import build, platform, run as simrun  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("smpicc") is None,
                                reason="SimGrid SMPI not installed (scripts/setup.sh installs libsimgrid-dev)")


def test_nodemap_landmarks_prune_by_the_triangle_inequality(tmp_path):
    """wan, 8 ranks, one per node: sites {0,1} {2,3} {4,5} {6,7}. Every rank leads its own group;
    --landmarks 2 keeps ranks 0 and 4 (groups i = 0 and 4 of 8). Phase 1 times the 13 pairs
    with rank 0 or 4. A pair (1, q) with q outside site 0 is estimated through r = 0 (rank 1 is
    one intra-site hop from 0, q a wide-area hop: ratio >= 4), likewise (5, q) through 4: 9
    pairs. Left for phase 2: (2,3), (6,7) and the four pairs between sites 1 and 3 (no
    landmark is near either end): 19 timed in all."""
    exe = build.nodemap_program(tmp_path / "nodemap-smpi")
    nodes, hosts = platform.rank_hosts("wan", 8, 1, "block")
    (tmp_path / "platform.xml").write_text(platform.platform_xml("wan", nodes, 1))
    (tmp_path / "hostfile").write_text("".join(h + "\n" for h in hosts))
    topo = tmp_path / "topo.json"
    cmd = simrun.smpirun_command(exe, ["--out", str(topo), "--landmarks", "2", "--reps", "3", "--warmup", "1",
                                       "--bw-size", "0"], 8, tmp_path / "platform.xml", tmp_path / "hostfile", "wan")
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    doc = json.loads(topo.read_text())
    check_structure(doc, 8)
    assert doc["parameters"]["landmarks"] == 2
    # the simulated hosts (a mapping file written from this topology must name them)
    assert [r["host"] for r in doc["ranks"]] == hosts
    assert doc["pairs_measured"] == 19 and doc["pairs_estimated"] == 9
    M, L = doc["measured"], doc["L"]
    estimated = {(p, q) for p in range(8) for q in range(p + 1, 8) if not M[p][q]}
    assert estimated == {(1, q) for q in (2, 3, 5, 6, 7)} | {(2, 5), (3, 5), (5, 6), (5, 7)}
    for q in (2, 3, 5, 6, 7):  # through landmark 0: rank 1's distance is rank 0's
        assert L[1][q] == L[0][q]
    # the sites are found from the measured latencies: one tier above the nodes
    assert doc["levels"][-1]["group"] == [0, 0, 1, 1, 2, 2, 3, 3]


def test_profile_under_smpi_counts_the_traffic(tmp_path):
    """is_kernel sends every key once per iteration (to its own range's rank, itself included):
    the profile's traffic matrix sums to ranks x keys x 4 bytes x iterations, and the bytes the
    receives report (MPI_Get_count under SMPI, which lacks MPI_Get_elements_x) sum to the same."""
    prof = tmp_path / "prof.json"
    p = run_cli("simulate", "--platform", "wan", "--ranks", 8, "--ppn", 2, "--env", f"CARACAL_PROFILE={prof}",
                "--env", "CARACAL_PROFILE_RESOLVE=0", "--", ROOT / "bench" / "simulate" / "is_kernel.c", 1000, 2,
                timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "check ok" in p.stdout
    doc = json.loads(prof.read_text())
    total = 8 * 1000 * 4 * 2
    assert sum(map(sum, doc["traffic"]["bytes"])) == total
    assert sum(c["bytes_recv"] for c in doc["calls"]) == total
    assert sum(c["bytes_sent"] for c in doc["calls"]) == total
