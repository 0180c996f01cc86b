"""caracal testbed: emulated hosts (network namespaces, veth links, bridges) with real
MPI jobs across them. Skipped, with the reason, where namespaces are refused."""
import json
import os
import re
import subprocess
import time

import pytest

from conftest import BUILDS, run_cli

NAME = f"pt{os.getpid() % 100000}"   # unique per test session: concurrent sessions do not collide


def ns_list():
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


def our_namespaces(name):
    return [line.split()[0] for line in ns_list().splitlines() if line.startswith(f"ctb-{name}-")]


def root_links():
    out = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return {m.group(1) for m in re.finditer(r"^\d+: ([^:@]+)", out, re.M)}


def up(name, *extra, env=None):
    return run_cli("testbed", "up", "--name", name, *extra, env=env, timeout=120)


def skip_unless_possible(p):
    if p.returncode == 2 and ("needs root" in p.stderr or "cannot create" in p.stderr or "not installed" in p.stderr):
        pytest.skip(p.stderr.strip())


@pytest.fixture(scope="module", params=[2, 3], ids=lambda h: f"{h}hosts")
def testbed(request):
    hosts = request.param
    name = f"{NAME}h{hosts}"
    p = up(name, "--hosts", hosts)
    skip_unless_possible(p)
    assert p.returncode == 0, p.stderr
    yield name, hosts
    p = run_cli("testbed", "down", "--name", name, timeout=60)
    assert p.returncode == 0, p.stderr
    assert our_namespaces(name) == []


def tb_run(name, mpi, n, ppn, *program, env=(), timeout=60, native=False):
    args = ["testbed", "run", "--name", name, "-n", n, "--ppn", ppn, "--mpi", mpi, "--timeout", timeout]
    for e in env:
        args += ["--env", e]
    if native:
        args.append("--native")
    return run_cli(*args, "--", *program, timeout=timeout + 60)


def test_up_is_idempotent_status_and_identity(testbed):
    name, hosts = testbed
    p = up(name, "--hosts", hosts)
    assert p.returncode == 0 and "already up" in p.stdout, p.stdout + p.stderr
    assert len(our_namespaces(name)) == hosts + 1            # the hosts and the switch
    p = run_cli("testbed", "status", "--name", name, "--json")
    assert p.returncode == 0, p.stderr
    st = json.loads(p.stdout)
    assert st["healthy"] and st["hosts"] == hosts and st["links"] == 1
    assert len({h["boot_id"] for h in st["host_list"]}) == hosts
    # a different shape while up: refused, the testbed untouched
    p = up(name, "--hosts", hosts + 1)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert len(our_namespaces(name)) == hosts + 1
    # each host: its hostname, boot_id, /etc/hosts and address
    enter = os.path.join(st["state_dir"], "enter")
    for i, h in enumerate(st["host_list"]):
        out = subprocess.run([enter, h["name"], "sh", "-c",
                              "hostname; cat /proc/sys/kernel/random/boot_id; grep -c ^10.233 /etc/hosts; "
                              "ip -o -4 addr show cveth0"], capture_output=True, text=True, timeout=30).stdout.split("\n")
        assert out[0] == f"host{i}" and out[1] == h["boot_id"] and out[2] == str(hosts), out
        assert f"10.233.0.{i + 1}/24" in out[3]


def test_run_places_ranks_per_host(testbed, mpi):
    name, hosts = testbed
    # ranks are placed --ppn per host in host order; a plain program is enough to see where
    p = tb_run(name, mpi, 2 * hosts, 2, "hostname", native=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert sorted(p.stdout.split()) == sorted(f"host{i}" for i in range(hosts) for _ in range(2))
    # the program's exit status comes back
    p = tb_run(name, mpi, hosts, 1, "sh", "-c", "exit 3", native=True)
    assert p.returncode == 3, p.stdout + p.stderr


def test_run_needs_enough_hosts(testbed):
    name, hosts = testbed
    p = tb_run(name, "openmpi", 2 * hosts + 1, 2, "hostname")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert f"needs {hosts + 1} hosts" in p.stderr


# Caracal's collectives against the native ones (tests/c/test_coll.c: exact results)
# with ranks on 2 or 3 emulated hosts: the hierarchy's node level is the host.
COLL_RULES = {
    "p2p": ["CARACAL_COLL=force", "CARACAL_BARRIER=hier", "CARACAL_BCAST=knomial", "CARACAL_REDUCE=knomial",
            "CARACAL_ALLREDUCE=recdbl"],
    "ring": ["CARACAL_BARRIER=hier:3", "CARACAL_BCAST=nary:1", "CARACAL_REDUCE=knomial:3",
             "CARACAL_ALLREDUCE=ring"],
    "shm": ["CARACAL_BARRIER=node/shm,hier", "CARACAL_BCAST=node/shm,knomial", "CARACAL_REDUCE=node/shm,knomial",
            "CARACAL_ALLREDUCE=node/shm,recdbl"],
}


# which rule sets run at which host count (each launch runs the whole trimmed matrix: ~30 s)
COLL_CASES = {2: ["p2p", "shm"], 3: ["p2p", "ring"]}


@pytest.mark.parametrize("rules", ["p2p", "other"])
def test_coll_across_hosts(testbed, mpi, rules):
    name, hosts = testbed
    rules = COLL_CASES[hosts][0 if rules == "p2p" else 1]
    exe = BUILDS[mpi] / "bin" / "test_coll"
    # MPICH 4.0.2's own node-aware (ch4 device) reduce returns wrong sums on split
    # communicators across these hosts (docs/testbed.md), and test_coll takes the native
    # result as the reference: compare against MPICH's generic algorithms instead.
    native_fix = ["MPIR_CVAR_DEVICE_COLLECTIVES=none"] if mpi == "mpich" else []
    p = tb_run(name, mpi, 2 * hosts, 2, str(exe), "small",
               env=COLL_RULES[rules] + native_fix + ["CARACAL_LOG=algo"], timeout=240)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-4000:]
    m = re.search(r"test_coll: (\d+) ranks, \d+ cases per rank, (\d+) run by Caracal on rank 0, (\d+) failures", out)
    assert m, out[-4000:]
    assert (int(m.group(1)), int(m.group(3))) == (2 * hosts, 0)
    assert int(m.group(2)) > 0
    # the hierarchy saw the hosts: one node group of 2 ranks per host, the hosts' leaders on top
    assert f"levels=node({hosts}x2)+top(1x{hosts})" in out, out[-4000:]


# The twelve newer families (tests/c/test_gatherfam.c, test_a2afam.c: every result computed
# from first principles, and each program fails a call that Caracal did not run) with their
# node-aware schedules forced, the node groups being the emulated hosts: leaders exchange
# whole-host blocks over TCP. 2 hosts x 2 ranks, and 3 hosts holding 2 + 2 + 1 ranks.
FAMILY_RULES = {
    "test_gatherfam": ["CARACAL_ALLGATHER=hier", "CARACAL_ALLGATHERV=hier", "CARACAL_GATHER=hier",
                       "CARACAL_GATHERV=hier", "CARACAL_SCATTER=hier", "CARACAL_SCATTERV=hier"],
    "test_a2afam": ["CARACAL_ALLTOALL=hier", "CARACAL_ALLTOALLV=hier", "CARACAL_REDUCE_SCATTER=hier",
                    "CARACAL_REDUCE_SCATTER_BLOCK=hier", "CARACAL_SCAN=hier", "CARACAL_EXSCAN=hier"],
}


@pytest.mark.parametrize("program", sorted(FAMILY_RULES))
def test_families_across_hosts(testbed, mpi, program):
    name, hosts = testbed
    n = 4 if hosts == 2 else 5
    p = tb_run(name, mpi, n, 2, str(BUILDS[mpi] / "bin" / program), "small",
               env=FAMILY_RULES[program] + ["CARACAL_LOG=algo"], timeout=300)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-4000:]
    m = re.search(rf"{program}: (\d+) ranks, (\d+) (?:calls|cases) per rank, (\d+) failures", out)
    assert m, out[-4000:]
    assert (int(m.group(1)), int(m.group(3))) == (n, 0)
    assert int(m.group(2)) > 0
    # the hierarchy saw the hosts: a node group per host, the hosts' leaders on top
    shape = "node(2x2)+top(1x2)" if hosts == 2 else "node("
    assert f"levels={shape}" in out, out[-4000:]


def test_run_timeout_kills_everything(testbed, mpi):
    name, hosts = testbed
    t0 = time.monotonic()
    p = tb_run(name, mpi, hosts, 1, "sleep", "600", timeout=3, native=True)
    took = time.monotonic() - t0
    assert p.returncode == 124, p.stdout + p.stderr
    assert "timed out after 3 s" in p.stderr
    assert took < 30
    st = json.loads(run_cli("testbed", "status", "--name", name, "--json").stdout)
    assert st["processes"] == 0


def test_bad_input_is_one_line_exit_2():
    name = f"{NAME}bad"
    for args in (["up", "--hosts", "0"], ["up", "--hosts", "2", "--rate", "fast"], ["up", "--hosts", "2", "--links", "9"],
                 ["up", "--hosts", "x"], ["up", "--name", "Bad/Name", "--hosts", "2"],
                 ["run", "-n", "2", "--ppn", "1", "--env", "NOEQUALS", "--", "true"],
                 ["run", "-n", "2", "--ppn", "1", "--", "true"],       # not up
                 ["frobnicate"]):
        if "--name" not in args and args[0] in ("up", "run"):
            args = [args[0], "--name", name, *args[1:]]
        p = run_cli("testbed", *args, timeout=60)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1, (args, p.stderr)
    assert our_namespaces(name) == []


@pytest.mark.parametrize("step", ["state", "bridges", "host1", "rate", "final"])
def test_failed_up_leaves_nothing_behind(step):
    name = f"{NAME}f"
    before = root_links()
    p = up(name, "--hosts", 3, "--links", 2, "--rate", "100mbit", env={"CARACAL_TESTBED_FAIL_AT": step})
    skip_unless_possible(p)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "failed on purpose" in p.stderr and "removed" in p.stderr
    assert our_namespaces(name) == []
    assert not os.path.exists(f"/run/caracal-testbed/{name}")
    new = root_links() - before
    assert not {n for n in new if re.fullmatch(r"cveth\d+|h\d+l\d+|br\d+", n)}, new
    # down after a failed up, twice: nothing to do, fine
    for _ in range(2):
        p = run_cli("testbed", "down", "--name", name, timeout=60)
        assert p.returncode == 0 and "not up" in p.stdout, p.stdout + p.stderr


def test_links_and_rate():
    name = f"{NAME}r"
    p = up(name, "--hosts", 2, "--links", 2, "--rate", "200mbit")
    skip_unless_possible(p)
    try:
        assert p.returncode == 0, p.stderr
        st = json.loads(run_cli("testbed", "status", "--name", name, "--json").stdout)
        assert st["interfaces"] == ["cveth0", "cveth1"] and st["rate_bits"] == 200e6
        ns = st["host_list"][1]["netns"]
        for k in range(2):
            q = subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "show", "dev", f"cveth{k}"],
                               capture_output=True, text=True).stdout
            assert "tbf" in q and "200Mbit" in q, q
            a = subprocess.run(["ip", "-n", ns, "-o", "-4", "addr", "show", f"cveth{k}"],
                               capture_output=True, text=True).stdout
            assert f"10.233.{k}.2/24" in a
        q = subprocess.run(["ip", "netns", "exec", st["switch_netns"], "tc", "qdisc", "show", "dev", "h1l1"],
                           capture_output=True, text=True).stdout
        assert "tbf" in q and "200Mbit" in q
    finally:
        for _ in range(2):   # down twice: the second has nothing to do
            p = run_cli("testbed", "down", "--name", name, timeout=60)
            assert p.returncode == 0, p.stderr
    assert our_namespaces(name) == []
    p = run_cli("testbed", "status", "--name", name)
    assert p.returncode == 1 and "not up" in p.stdout


def test_mpich_finalize_does_not_hang_across_hosts(testbed):
    """MPICH 4.0.2 hung in MPI_Finalize in 3 of 4 runs across these hosts (a rank's TCP
    endpoint close waits for a peer already in the PMI barrier, see docs/testbed.md);
    the testbed's preload keeps every rank progressing until all closes are done."""
    name, hosts = testbed
    exe = BUILDS["mpich"] / "bin" / "test_init"
    for attempt in range(4):
        p = tb_run(name, "mpich", 2 * hosts, 2, str(exe), timeout=60)
        assert p.returncode == 0, f"attempt {attempt}: {p.returncode}\n{p.stdout}\n{p.stderr}"
