"""`caracal run` as a front end (issue 14 item 4), with real launches on both libraries:
launcher options passed through (hostfile, rankfile as `caracal map` writes it, raw
mpiexec arguments), Open MPI's yielding kept for an oversubscribing rankfile, the program
checked against the chosen library, signals forwarded with the profile pieces merged,
leftover pieces merged by `caracal report`, a missing profile reported by the exit status,
--no-profile over the environment, rank counts capped."""
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from caracal import launch
from conftest import BUILDS, ROOT, family

# a library whose programs the other cannot run (another ABI), and its build
OTHER = {"openmpi": "mpich", "mpich": "openmpi", "openmpi5": "mpich", "mpich5": "openmpi", "impi": "openmpi"}


def exe(mpi, name):
    return BUILDS[mpi] / "bin" / name


def one_line_exit_2(p, *needles):
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    for n in needles:
        assert n in lines[0], lines[0]


def static_topology(cli, tmp_path, hosts):
    src = tmp_path / "machine.json"
    src.write_text(json.dumps({"schema": "caracal.topology-input/1", "hosts": hosts}))
    out = tmp_path / "topo.json"
    cli("nodemap", "--static", src, "--out", out, check=True, timeout=60)
    return out


def rank_processes(marker: str):
    """PIDs of processes whose environment mentions marker (the test's own profile path)."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(d))
        except OSError:
            pass
    return found


# ---- placement options ----

def test_rankfile_from_map_runs_as_is(cli, mpi, tmp_path):
    """The rankfile `caracal map` writes for this host runs through caracal run unchanged:
    -n comes from it, the ranks are where it says, and the profile is complete."""
    n = 4
    prof = tmp_path / "pairs.json"
    cli("run", "--mpi", mpi, "-n", n, "--profile", prof, "--", exe(mpi, "map_pairs"), check=True, timeout=300)
    topo = static_topology(cli, tmp_path, [socket.gethostname()] * n)
    rf = tmp_path / "rankfile"
    cli("map", "--profile", prof, "--topology", topo, "--out", rf, "--iterations", "200", check=True, timeout=120)
    out = tmp_path / "again.json"
    p = cli("run", "--mpi", mpi, "--rankfile", rf, "--profile", out, "--", exe(mpi, "map_pairs"), timeout=300)
    assert p.returncode == 0, p.stderr
    d = json.loads(out.read_text())
    assert d["nranks"] == n and d["partial"] is False
    assert {r["host"] for r in d["ranks"]} == {socket.gethostname()}


def test_oversubscribing_rankfile_keeps_yielding(cli, tmp_path):
    """Open MPI: more ranks in the rankfile than cores -> mpi_yield_when_idle 1 reaches the
    ranks (without it they busy-poll on shared cores); within the cores it is left alone."""
    cores = os.cpu_count() or 1
    host = socket.gethostname()
    for n, expect in ((cores + 1, True), (1, False)):
        rf = tmp_path / f"rf{n}"
        rf.write_text("".join(f"rank {i}={host} slot=*\n" for i in range(n)))
        p = cli("run", "--rankfile", rf, "--no-profile", "--", "/usr/bin/env", timeout=120)
        assert p.returncode == 0, p.stderr
        lines = [l for l in p.stdout.splitlines() if l.startswith("OMPI_MCA_mpi_yield_when_idle=")]
        if expect:
            assert len(lines) == n and all(l.endswith("=1") for l in lines), p.stdout[-2000:]
        else:
            assert not lines, lines


def test_hostfile_and_mpiexec_args(cli, mpi, tmp_path):
    hf = tmp_path / "hosts"
    hf.write_text("localhost slots=4\n" if family(mpi) == "openmpi" else "localhost:4\n")
    env_flag = ["-x", "CARACAL_TEST_PASSED=yes"] if family(mpi) == "openmpi" else ["-genv", "CARACAL_TEST_PASSED", "yes"]
    p = cli("run", "--mpi", mpi, "-n", 2, "--hostfile", hf, "--no-profile", "--mpiexec-args", *env_flag,
            "--", "/usr/bin/env", timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("CARACAL_TEST_PASSED=yes") == 2, p.stdout[-2000:]
    out = tmp_path / "p.json"
    p = cli("run", "--mpi", mpi, "-n", 2, "--hostfile", hf, "--profile", out, "--", exe(mpi, "prof_workload"),
            timeout=300)
    assert p.returncode == 0, p.stderr
    assert json.loads(out.read_text())["nranks"] == 2


def test_bad_placement_options(cli, tmp_path):
    rf = tmp_path / "rf"
    rf.write_text("rank 0=a slot=*\nrank 2=a slot=*\n")
    one_line_exit_2(cli("run", "--rankfile", rf, "--", "/bin/true"), "rank 1 has no line")
    rf.write_text("rank 0=a slot=*\nthis is not a rankfile\n")
    one_line_exit_2(cli("run", "--rankfile", rf, "--", "/bin/true"), f"{rf}:2:")
    rf.write_text("rank 0=a slot=*\n")
    one_line_exit_2(cli("run", "--rankfile", rf, "-n", 3, "--", "/bin/true"), "places only 1")
    one_line_exit_2(cli("run", "--rankfile", rf, "--hostfile", rf, "--", "/bin/true"), "do not go together")
    one_line_exit_2(cli("run", "--hostfile", tmp_path / "none", "--", "/bin/true"), "hostfile not found")


# ---- the program and the library ----

def test_program_built_for_the_other_library(cli, mpi):
    """A program of the other MPI would crash in MPI_Init: one line and exit 2 instead."""
    p = cli("run", "--mpi", mpi, "-n", 2, "--", exe(OTHER[mpi], "prof_workload"), timeout=60)
    one_line_exit_2(p, "is linked against", f"--mpi {OTHER[mpi]}")


# ---- the profile ----

def test_profile_not_written_is_an_error(cli, tmp_path):
    """A program that never initializes MPI writes no profile: exit 1, and says so."""
    out = tmp_path / "p.json"
    p = cli("run", "-n", 1, "--profile", out, "--", "/bin/true", timeout=60)
    assert p.returncode == 1, p.stderr
    assert "no profile was written" in p.stderr
    assert cli("run", "-n", 1, "--no-profile", "--", "/bin/true", timeout=60).returncode == 0


def test_no_profile_beats_the_environment(cli, mpi, tmp_path):
    inherited = tmp_path / "inherited.json"
    p = cli("run", "--mpi", mpi, "-n", 2, "--no-profile", "--", exe(mpi, "prof_workload"),
            env={"CARACAL_PROFILE": str(inherited)}, timeout=300)
    assert p.returncode == 0, p.stderr
    assert not list(tmp_path.iterdir()), list(tmp_path.iterdir())
    one_line_exit_2(cli("run", "--no-profile", "--profile", inherited, "--", "/bin/true"), "contradict")


def test_report_merges_leftover_pieces(cli, mpi, tmp_path):
    """A job whose front end was killed leaves OUT.rank<N>.json pieces: report merges them."""
    out = tmp_path / "p.json"
    lib = BUILDS[mpi] / "lib" / "libcaracal.so"
    # the library's own launcher, without the CLI: its flags and environment from mpilibs.py
    cmd = launch.mpiexec_command(mpi, 3, [str(exe(mpi, "prof_crash")), "segv"],
                                 env={"LD_PRELOAD": str(lib), "CARACAL_PROFILE": str(out)})
    subprocess.run(cmd, env=launch.launcher_env(mpi), capture_output=True, timeout=120)
    pieces = sorted(tmp_path.glob("p.json.rank*.json"))
    assert pieces and not out.exists()
    p = cli("report", out, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "merged" in p.stderr and "partial" in p.stderr
    d = json.loads(out.read_text())
    assert d["partial"] is True and len(d["ranks"]) == len(pieces)
    assert not list(tmp_path.glob("p.json.rank*"))


# ---- signals ----

def start_waiting_job(mpi, out, tmp_path):
    cmd = [sys.executable, "-m", "caracal", "run", "--mpi", mpi, "-n", "2", "--profile", str(out), "--",
           str(exe(mpi, "prof_crash")), "wait"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=tmp_path)
    deadline = time.monotonic() + 120
    line = ""
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if "ready" in line or not line:
            break
    if "ready" not in line:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail(f"the job did not start: {proc.stderr.read()[-2000:]}")
    return proc


def finish(proc, timeout=60):
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_is_forwarded_and_pieces_merged(mpi, tmp_path, sig):
    out = tmp_path / "p.json"
    proc = start_waiting_job(mpi, out, tmp_path)
    t0 = time.monotonic()
    proc.send_signal(sig)  # to caracal run alone, not its group
    rc = finish(proc)
    took = time.monotonic() - t0
    err = proc.stderr.read()
    assert rc == 128 + sig, (rc, err)
    assert took < 30, took
    d = json.loads(out.read_text())
    assert d["partial"] is True and d["ranks"], err
    assert all(r["partial"] for r in d["ranks"])
    assert not list(tmp_path.glob("p.json.rank*"))
    time.sleep(1)
    assert not rank_processes(str(out)), "ranks left running"


def test_killed_front_end_takes_the_job_along(cli, mpi, tmp_path):
    """SIGKILL to caracal run cannot be forwarded: the launcher still ends (parent-death
    signal), nothing keeps running, and `caracal report` merges whatever pieces there are."""
    out = tmp_path / "p.json"
    proc = start_waiting_job(mpi, out, tmp_path)
    proc.kill()
    finish(proc)
    deadline = time.monotonic() + 30
    while rank_processes(str(out)) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = rank_processes(str(out))
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, "ranks left running after the front end died"
    if list(tmp_path.glob("p.json.rank*.json")):
        p = cli("report", out, timeout=120)
        assert p.returncode == 0 and "merged" in p.stderr, p.stderr


# ---- rank counts ----

@pytest.mark.parametrize("n, needle", [("99999999999999999999", "at most 1048576"), ("0", "at least 1"),
                                       ("-3", "at least 1"), ("100000", "on this machine")])
def test_rank_count_caps(cli, n, needle):
    one_line_exit_2(cli("run", "-n", n, "--", "/bin/true", timeout=30), needle)


def test_nodemap_refuses_huge_rank_counts(cli, tmp_path):
    t0 = time.monotonic()
    one_line_exit_2(cli("nodemap", "-n", 100000, "--out", tmp_path / "t.json", timeout=30), "on this machine")
    assert time.monotonic() - t0 < 30


# ---- the pieces, without launching ----

def test_rankfile_reading_and_oversubscription(tmp_path):
    sys.path.insert(0, str(ROOT / "python"))
    from caracal import frontend
    rf = tmp_path / "rf"
    rf.write_text("# from caracal map\nrank 1=a slot=*\nrank 0=a slot=*\n\nrank 2=b slot=0\nrank 3=b slot=1  # bound\n")
    e = frontend.read_rankfile(str(rf))
    assert e == [(0, "a", "*"), (1, "a", "*"), (2, "b", "0"), (3, "b", "1")]
    assert not frontend.rankfile_oversubscribed(e, cores=2)
    assert frontend.rankfile_oversubscribed(e, cores=1)  # two ranks on host a
    assert frontend.rankfile_oversubscribed([(0, "a", "3"), (1, "a", "3")], cores=8)  # one core, two ranks
    assert frontend.machinefile_from_rankfile(e) == "a:1\na:1\nb:1\nb:1\n"
    assert frontend.without_default_binding(["x", "--oversubscribe", "--bind-to", "none", "-n", "2"]) == \
        ["x", "--oversubscribe", "-n", "2"]
    p = frontend.Placement("mpich", None, str(rf), ["-v"], {})
    try:
        assert p.ranks == 4 and p.args[0] == "-f" and p.args[-1] == "-v"
        assert open(p.args[1]).read() == "a:1\na:1\nb:1\nb:1\n"
    finally:
        p.cleanup()
    assert not os.path.exists(p.args[1])
    crowded = tmp_path / "crowded"
    crowded.write_text("".join(f"rank {i}=a slot=*\n" for i in range((os.cpu_count() or 1) + 1)))
    assert "mpi_yield_when_idle" in frontend.Placement("openmpi", None, str(crowded), [], {}).args
    p = frontend.Placement("openmpi", None, str(crowded), [], {"OMPI_MCA_mpi_yield_when_idle": "0"})
    assert "mpi_yield_when_idle" not in p.args  # the user's own choice stands
    p = frontend.Placement("openmpi", None, str(crowded), ["--mca", "mpi_yield_when_idle", "0"], {})
    assert p.args.count("mpi_yield_when_idle") == 1
    assert frontend.spreads_hosts(["--host", "a,b"]) and frontend.spreads_hosts(["--hostfile=h"])
    assert not frontend.spreads_hosts(["--mca", "btl", "self"])
