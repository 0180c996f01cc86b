"""caracal simulate: SimGrid SMPI runs Caracal's own code (docs/simulate.md).

Real simulations (smpirun), no mocks: every platform kind is accepted by SMPI and routes a
message between every pair of its nodes' ranks; 64 simulated ranks on four 16-core nodes run
tests/simulate/sim_coll.c, whose integer results are checked exactly from first principles,
with Caracal's algorithms forced; CARACAL_LOG shows that the PMPI interposition reaches
Caracal and that its levels come from the simulated hosts."""
import json
import shutil

import pytest

from conftest import ROOT, run_cli

pytestmark = pytest.mark.skipif(shutil.which("smpicc") is None,
                                reason="SimGrid SMPI not installed (scripts/setup.sh installs libsimgrid-dev)")

SIM_COLL = ROOT / "tests" / "simulate" / "sim_coll.c"
SIM_BARRIER = ROOT / "tests" / "simulate" / "sim_barrier.c"
FORCED = ["--env", "CARACAL_COLL=force", "--env", "CARACAL_BARRIER=hier", "--env", "CARACAL_BCAST=knomial",
          "--env", "CARACAL_REDUCE=knomial", "--env", "CARACAL_ALLREDUCE=recdbl@-64k ring@64k-",
          "--env", "CARACAL_ALLGATHER=hier", "--env", "CARACAL_ALLTOALL=hier", "--env", "CARACAL_SCAN=hier"]


def summary(p):
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_forced_collectives_64_ranks_exact_and_reach_caracal(tmp_path):
    p = run_cli("simulate", "--platform", "cluster", "--ranks", 64, "--ppn", 16, "--out", tmp_path,
                *FORCED, "--env", "CARACAL_LOG=init,algo", "--", SIM_COLL, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "sim_coll: ok 64 ranks" in p.stdout
    s = summary(p)
    assert s["exit"] == 0 and s["ranks"] == 64 and s["nodes"] == 4 and s["simulated_s"] > 0
    assert s["peak_rss_bytes"] > 0 and s["wall_s"] > 0 and s["cpu_s"] > 0
    # sampled Pss: below the RSS peak, which counts shared pages once per mapping
    assert 0 < s["peak_pss_bytes"] <= s["peak_rss_bytes"]
    # the levels are the simulated hosts (MPI_COMM_TYPE_SHARED under SMPI)
    assert "hierarchy of communicator: node(4x16)+top(1x4), 64 ranks" in p.stdout
    # the MPI_* calls reached Caracal's algorithms, level by level
    for line in ("barrier hier", "bcast knomial", "reduce knomial", "allreduce recdbl", "allreduce ring",
                 "allgather hier", "alltoall hier", "scan hier"):
        assert f"caracal[0]: {line}" in p.stdout, line


def test_radix_k_top_level_exact_under_smpi(tmp_path):
    """The radix-k top-level primitives (dissemination:3, recmul:3, and the bcast's
    scatter_allgather:3: 8 B over 7 leaders has empty blocks) among 7 node leaders (7 = 3*2 + a
    fold), with a flat node fan-in: sim_coll's exact results, and the log names them."""
    p = run_cli("simulate", "--platform", "cluster", "--ranks", 28, "--ppn", 4, "--mapping", "roundrobin",
                "--env", "CARACAL_COLL=force", "--env", "CARACAL_BARRIER=node/knomial:4 top/dissemination:3 hier",
                "--env", "CARACAL_BCAST=node/knomial:4 top/scatter_allgather:3 knomial", "--env", "CARACAL_REDUCE=knomial",
                "--env", "CARACAL_ALLREDUCE=node/knomial:4 top/recmul:3 recdbl",
                "--env", "CARACAL_LOG=algo", "--", SIM_COLL, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "sim_coll: ok 28 ranks" in p.stdout
    assert "node=knomial:4 top=dissemination:3" in p.stdout and "node=knomial:4 top=recmul:3" in p.stdout
    assert "node=knomial:4 top=scatter_allgather:3" in p.stdout


def test_round_robin_mapping_groups_by_host(tmp_path):
    p = run_cli("simulate", "--platform", "cluster", "--ranks", 16, "--ppn", 4, "--mapping", "roundrobin",
                *FORCED, "--env", "CARACAL_LOG=hier", "--", SIM_COLL, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "sim_coll: ok 16 ranks" in p.stdout
    assert "node(4x4)={0,4,8,12}{1,5,9,13}{2,6,10,14}{3,7,11,15} top(1x4)={0,1,2,3}" in p.stdout


def test_every_rank_reads_the_same_levels_private_to_caracal(tmp_path):
    """Under SMPI rank 0 computes the levels and every other rank reads them from one shared
    table (sbgp/hier_table.h): every rank must log the levels of the simulated hosts. A 64-byte
    auto-shared threshold would give the program's blocks of 64 bytes and more one copy for all
    ranks; Caracal's own memory must stay private under it (the keys of 24 ranks are 192 bytes:
    shared, every rank saw the same key). With Caracal linked, SMPI's plain algorithms run what
    it leaves native."""
    p = run_cli("simulate", "--platform", "cluster", "--ranks", 24, "--ppn", 4, "--mapping", "roundrobin",
                "--cfg", "smpi/auto-shared-malloc-thresh:64", "--env", "CARACAL_LOG=hier",
                "--env", "CARACAL_LOG_RANKS=all", "--", SIM_BARRIER, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    want = ("hier ranks=24 node(6x4)={0,6,12,18}{1,7,13,19}{2,8,14,20}{3,9,15,21}{4,10,16,22}{5,11,17,23} "
            "top(1x6)={0,1,2,3,4,5}")
    lines = [ln.split(": ", 1)[1] for ln in p.stdout.splitlines() if ": hier ranks=" in ln]
    assert lines == [want] * 24
    assert summary(p)["native_cfg"] == ["smpi/allreduce:rdb", "smpi/bcast:binomial_tree", "smpi/reduce:binomial"]
    assert "Switch to algorithm rdb for collective allreduce" in p.stdout


def test_without_caracal_no_caracal_lines(tmp_path):
    p = run_cli("simulate", "--platform", "cluster", "--ranks", 8, "--ppn", 4, "--no-caracal",
                "--env", "CARACAL_LOG=all", "--", SIM_COLL, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "sim_coll: ok 8 ranks" in p.stdout and "caracal[" not in p.stdout
    assert summary(p)["native_cfg"] == []  # SMPI's selector alone: the flat baseline


@pytest.mark.parametrize("kind,ranks,ppn", [("torus", 16, 2), ("fattree", 24, 1), ("wan", 8, 1)])
def test_platform_accepted_by_smpi(tmp_path, kind, ranks, ppn):
    p = run_cli("simulate", "--platform", kind, "--ranks", ranks, "--ppn", ppn, "--out", tmp_path,
                *FORCED, "--", SIM_COLL, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"sim_coll: ok {ranks} ranks" in p.stdout
    assert (tmp_path / "platform.xml").read_text().startswith("<?xml")


def test_wan_round_trip_is_the_wide_area_one(tmp_path):
    """Block mapping with 2 ranks per site: ranks 0 and 2 sit in sites 0 and 1, whose one-way
    latency is 4.3 ms / 2; the simulated run must take at least one such crossing."""
    p = run_cli("simulate", "--platform", "wan", "--ranks", 8, "--ppn", 2, "--no-caracal", "--",
                SIM_COLL, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert summary(p)["simulated_s"] >= 0.00215


def test_bad_input_exit_2(tmp_path):
    bad = tmp_path / "map.txt"
    bad.write_text("node-0\nnode-99\n")
    for args, msg in ((["--ranks", 2, "--mapping", bad], "not on the cluster platform"),
                      (["--ranks", 3, "--mapping", bad], "2 ranks listed"),
                      (["--ranks", 0], "must be positive"),
                      (["--ranks", 2, "--env", "NOEQUALS"], "--env needs K=V"),
                      (["--ranks", 2, "--extents", "8"], "--extents is for --platform torus")):
        p = run_cli("simulate", "--platform", "cluster", *args, "--", SIM_COLL)
        assert p.returncode == 2 and msg in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    for args, msg in ((["--ranks", 9, "--extents", "2x4"], "holds 8 nodes, not the 9 needed"),
                      (["--ranks", 4, "--extents", "2xx"], "--extents needs extents such as 8x8")):
        p = run_cli("simulate", "--platform", "torus", "--ppn", 1, *args, "--", SIM_COLL)
        assert p.returncode == 2 and msg in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    p = run_cli("simulate", "--platform", "cluster", "--ranks", 2, "--", tmp_path / "missing.c")
    assert p.returncode == 2 and "no such C source file" in p.stderr
