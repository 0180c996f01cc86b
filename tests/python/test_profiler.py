"""The profiler against a known workload (tests/c/prof_workload.c and its Fortran twin):
counts, bytes, histograms, the traffic matrix, collectives and call sites must match the
exact numbers below, at 1-4 ranks, on Open MPI and MPICH."""
import json
import os
import re
import subprocess

import pytest

from conftest import BUILDS, LIBRARY_VERSION_PREFIX, ROOT, family, skip_without_fortran

SRC = ROOT / "tests" / "c"


def expected(n):
    """What prof_workload does on n ranks, summed over ranks (see the source)."""
    p = n - 1  # peers per rank
    calls = {
        "MPI_Comm_rank": (n, 0), "MPI_Comm_size": (n, 0),
        "MPI_Send": (n * (3 * p + 1), n * 300 * p),      # K=3 x 100 B per peer, plus one to MPI_PROC_NULL
        "MPI_Recv": (n * 3 * p, n * 300 * p),
        "MPI_Irecv": (n * p, n * 400 * p),               # bytes known at MPI_Waitall
        "MPI_Isend": (n * p, n * 400 * p),
        "MPI_Waitall": (n, 0),
        "MPI_Sendrecv": (2 * n, 2 * n * 80),             # 40 B each way, twice
        "MPI_Bcast": (5 * n, 5 * n * 64),
        "MPI_Allreduce": (2 * n, 2 * n * 16),
        "MPI_Barrier": (n, 0),                           # the paused one is not counted
    }
    calls = {k: v for k, v in calls.items() if v[0]}
    msgs = [[0] * n for _ in range(n)]
    nbytes = [[0] * n for _ in range(n)]
    for r in range(n):
        for q in range(n):
            if q != r:
                msgs[r][q] += 3 + 1
                nbytes[r][q] += 300 + 400
        nxt = (r + 1) % n
        msgs[r][nxt] += 2
        nbytes[r][nxt] += 80
    roots = {}
    for i in range(5):
        roots[str(i % n)] = roots.get(str(i % n), 0) + 1
    coll = {
        "MPI_Bcast": {"count": 5, "bytes": 5 * 64 * n, "roots": roots, "root_changes": 4 if n > 1 else 0},
        "MPI_Allreduce": {"count": 2, "bytes": 2 * 16 * n, "roots": {}, "root_changes": 0},
        "MPI_Barrier": {"count": 1, "bytes": 0, "roots": {}, "root_changes": 0},
    }
    return calls, msgs, nbytes, coll


def marker_line(src, marker):
    for i, line in enumerate(src.read_text().splitlines(), 1):
        if marker in line:
            return i
    raise AssertionError(f"{marker} not in {src}")


def run_profiled(cli, mpi, n, prog, out, *args, env=()):
    if "_f" in prog:  # prof_workload_f, _f08, prof_persistent_f
        skip_without_fortran(mpi)
    exe = BUILDS[mpi] / "bin" / prog
    extra = [a for kv in env for a in ("--env", kv)]
    return cli("run", "--mpi", mpi, "-n", n, "--profile", out, *extra, "--", exe, *args, timeout=300)


def check_document(d, n, mpi):
    calls, msgs, nbytes, coll = expected(n)
    assert d["schema"] == "caracal.profile/1"
    assert d["partial"] is False and d["missing_ranks"] == []
    assert d["mpi_library"].startswith(LIBRARY_VERSION_PREFIX[mpi]), d["mpi_library"]
    assert d["nranks"] == n
    assert [r["rank"] for r in d["ranks"]] == list(range(n))
    for r in d["ranks"]:
        assert r["comm_sizes"] == {str(n): 1}
        assert r["mpi_library"] == d["mpi_library"]
        assert 0 < r["time_mpi"] <= r["time_total"]
    assert {c["call"]: (c["count"], c["bytes"]) for c in d["calls"]} == calls
    send = next(c for c in d["calls"] if c["call"] == "MPI_Send")
    hist = [[0, n, 0]] + ([[7, 3 * (n - 1) * n, 300 * (n - 1) * n]] if n > 1 else [])
    assert send["histogram"] == hist  # 100 B lies in bin 7 = [64, 128)
    assert d["traffic"] == {"messages": msgs, "bytes": nbytes}
    got = {c["call"]: {k: c[k] for k in ("count", "bytes", "roots", "root_changes")}
           for c in d["collectives"] if c["comm_size"] == n}
    assert got == coll
    assert all(c["comm_size"] == n for c in d["collectives"])
    # call sites add up to the per-call totals
    for call, (count, nb) in calls.items():
        sites = [s for s in d["callsites"] if s["call"] == call]
        assert sum(s["count"] for s in sites) == count
        assert sum(s["bytes"] for s in sites) == nb


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("prog,src,function", [
    ("prof_workload", "prof_workload.c", "main"),
    ("prof_workload_f", "prof_workload_f.f90", "MAIN__"),
    ("prof_workload_f08", "prof_workload_f08.f90", "MAIN__"),
])
def test_known_workload(cli, mpi, n, prog, src, function, tmp_path):
    out = tmp_path / "p.json"
    p = run_profiled(cli, mpi, n, prog, out)
    assert p.returncode == 0, p.stderr
    d = json.loads(out.read_text())
    check_document(d, n, mpi)
    # the Bcast call site: the application's line, not a Caracal frame
    line = marker_line(SRC / src, "SITE:bcast")
    sites = [s for s in d["callsites"] if s["call"] == "MPI_Bcast"]
    assert len(sites) == 1
    s = sites[0]
    assert (s["function"], os.path.basename(s["file"]), s["line"]) == (function, src, line)
    assert s["module"] == str(BUILDS[mpi] / "bin" / prog)
    assert s["per_rank"]["count"] == [5] * n
    assert s["histogram"] == [[7, 5 * n, 5 * n * 64]]
    # rank 0's short summary on stderr
    assert f"caracal: profile of {n} ranks written to {out}" in p.stderr


def test_linked_without_preload(mpi, tmp_path):
    """-lcaracal instead of LD_PRELOAD gives the same document."""
    from caracal import launch
    out = tmp_path / "p.json"
    cmd = launch.mpiexec_command(mpi, 2, [str(BUILDS[mpi] / "bin" / "prof_workload_linked")],
                                 env={"CARACAL_PROFILE": str(out)})
    p = subprocess.run(cmd, env=launch.launcher_env(), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "LD_PRELOAD" not in os.environ
    check_document(json.loads(out.read_text()), 2, mpi)


def test_resolve_off_keeps_sites(cli, mpi, tmp_path):
    out = tmp_path / "p.json"
    p = run_profiled(cli, mpi, 2, "prof_workload", out, env=["CARACAL_PROFILE_RESOLVE=0"])
    assert p.returncode == 0, p.stderr
    d = json.loads(out.read_text())
    check_document(d, 2, mpi)
    assert all(s["file"] is None and s["line"] is None for s in d["callsites"])
    assert {s["module"] for s in d["callsites"]} == {str(BUILDS[mpi] / "bin" / "prof_workload")}


def test_unknown_setting_warns_once(cli, mpi, tmp_path):
    """An unknown CARACAL_* name warns once per job; the test harness's own variables do not."""
    env = ["CARACAL_FOO=1", "CARACAL_PYTEST_MPILIBS=openmpi5"]
    p = run_profiled(cli, mpi, 2, "prof_workload", tmp_path / "p.json", env=env)
    assert p.returncode == 0, p.stderr
    lines = [l for l in p.stderr.splitlines() if "CARACAL_FOO" in l]
    assert len(lines) == 1 and "unknown setting CARACAL_FOO" in lines[0], p.stderr
    assert "PYTEST" not in p.stderr, p.stderr


@pytest.mark.parametrize("mode", ["abort", "segv"])
def test_partial_profile(cli, mpi, mode, tmp_path):
    """The last rank calls MPI_Abort or segfaults: what the ranks had is still there."""
    n = 3
    out = tmp_path / "p.json"
    p = run_profiled(cli, mpi, n, "prof_crash", out, mode)
    assert p.returncode != 0
    assert "partial profile written" in p.stderr
    d = json.loads(out.read_text())
    assert d["partial"] is True
    present = [r["rank"] for r in d["ranks"]]
    assert n - 1 in present  # the rank that aborted or crashed wrote its piece
    assert sorted(present + d["missing_ranks"]) == list(range(n))
    assert all(r["partial"] for r in d["ranks"])
    calls = {c["call"]: (c["count"], c["bytes"]) for c in d["calls"]}
    k = len(present)
    assert calls["MPI_Bcast"] == (3 * k, 3 * k * 16)
    assert calls["MPI_Send"] == (2 * k, 0)
    assert d["traffic"]["messages"] == [[0] * n for _ in range(n)]
    assert [c["root_calls"] for c in d["collectives"] if c["call"] == "MPI_Bcast"] == [{"0": 3 * k}]
    assert not list(tmp_path.glob("p.json.rank*"))  # pieces merged and removed


def test_exit_without_finalize(cli, mpi, tmp_path):
    """No MPI_Finalize at all: the exit path still leaves every rank's data."""
    n = 2
    out = tmp_path / "p.json"
    p = run_profiled(cli, mpi, n, "prof_crash", out, "nofinalize")
    assert "partial profile written" in p.stderr, p.stderr
    d = json.loads(out.read_text())
    assert d["partial"] is True
    present = [r["rank"] for r in d["ranks"]]
    # MPICH's launcher may kill the other rank as soon as one exits without MPI_Finalize
    assert present and sorted(present + d["missing_ranks"]) == list(range(n))
    if family(mpi) == "openmpi":
        assert present == [0, 1]
    k = len(present)
    calls = {c["call"]: (c["count"], c["bytes"]) for c in d["calls"]}
    assert calls["MPI_Bcast"] == (3 * k, 3 * k * 16)
    assert [c["root_calls"] for c in d["collectives"]] == [{"0": 3 * k}]


def expected_comms(n):
    """What prof_comms does on n ranks (see the source)."""
    calls = {"MPI_Comm_rank": [0, 0], "MPI_Comm_size": [0, 0]}
    msgs = [[0] * n for _ in range(n)]
    nbytes = [[0] * n for _ in range(n)]
    coll = {}
    sizes = []

    def add(call, count, b=0):
        e = calls.setdefault(call, [0, 0])
        e[0] += count
        e[1] += b

    def add_coll(call, m, root, b):
        e = coll.setdefault((call, m), {"calls": 0, "bytes": 0, "root_calls": {}, "root_change_calls": 0})
        e["calls"] += 1
        e["bytes"] += b
        e["root_calls"][str(root)] = e["root_calls"].get(str(root), 0) + 1

    for r in range(n):
        members = [q for q in range(n) if q % 2 == r % 2]
        m, sr = len(members), members.index(r)
        add("MPI_Comm_rank", 3)          # world once, each half once
        add("MPI_Comm_size", 3)
        add("MPI_Comm_split", 2)
        add("MPI_Comm_free", 3)
        if m > 1:
            add("MPI_Send_init", 1)
            add("MPI_Recv_init", 1, 40)   # two completed 20-byte receives
            add("MPI_Start", 4, 40)       # two 20-byte sends started
            add("MPI_Waitall", 2)
            add("MPI_Request_free", 2)
            dest = members[(sr + 1) % m]
            msgs[r][dest] += 2
            nbytes[r][dest] += 40
        add("MPI_Gather", 1, 12)
        add_coll("MPI_Gather", m, 0, 12)
        add("MPI_Scatter", 1, 8)
        add_coll("MPI_Scatter", m, m - 1, 8)
        add("MPI_Bcast", 2, 8)
        add_coll("MPI_Bcast", m, m - 1, 4)
        add_coll("MPI_Bcast", m, 0, 4)
        add("MPI_Comm_dup", 1)
        add("MPI_Irecv", 1, 56)
        add("MPI_Isend", 1, 56)
        msgs[r][(r + 1) % n] += 1
        nbytes[r][(r + 1) % n] += 56
        sizes.append({str(n): 2, str(m): 2} if m != n else {str(n): 4})
    return {k: tuple(v) for k, v in calls.items()}, msgs, nbytes, coll, sizes


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_communicators_persistent_testsome(cli, mpi, n, tmp_path):
    out = tmp_path / "p.json"
    p = run_profiled(cli, mpi, n, "prof_comms", out)
    assert p.returncode == 0, p.stderr
    d = json.loads(out.read_text())
    calls, msgs, nbytes, coll, sizes = expected_comms(n)
    got = {c["call"]: (c["count"], c["bytes"]) for c in d["calls"]}
    testsome = got.pop("MPI_Testsome")  # how often it polls is up to timing
    assert testsome[0] >= n and testsome[1] == 0
    assert got == calls
    assert d["traffic"] == {"messages": msgs, "bytes": nbytes}
    assert {(c["call"], c["comm_size"]): {k: c[k] for k in ("calls", "bytes", "root_calls", "root_change_calls")}
            for c in d["collectives"]} == coll
    assert [r["comm_sizes"] for r in d["ranks"]] == sizes


@pytest.mark.parametrize("n", [1, 2, 3])
def test_fortran_persistent(cli, mpi, n, tmp_path):
    out = tmp_path / "p.json"
    p = run_profiled(cli, mpi, n, "prof_persistent_f", out)
    assert p.returncode == 0, p.stderr
    d = json.loads(out.read_text())
    assert {c["call"]: (c["count"], c["bytes"]) for c in d["calls"]} == {
        "MPI_Comm_rank": (n, 0), "MPI_Comm_size": (n, 0),
        "MPI_Ssend_init": (n, 0), "MPI_Recv_init": (n, 60 * n),   # 3 completed 20-byte receives per rank
        "MPI_Startall": (3 * n, 60 * n), "MPI_Waitall": (3 * n, 0), "MPI_Request_free": (2 * n, 0)}
    msgs = [[3 if j == (i + 1) % n else 0 for j in range(n)] for i in range(n)]
    assert d["traffic"] == {"messages": msgs, "bytes": [[20 * m for m in row] for row in msgs]}
