"""bench/connections.py: counting TCP connections between emulated hosts from `ss`
output (unit tests), and one live run on a 2-host testbed: Caracal's hierarchical
alltoall joins only the hosts' leaders across hosts, beyond what its set-up opened."""
import sys
import time
import types

import pytest

from conftest import ROOT, BUILDS
from testbed_util import emulated_hosts, unique

sys.path.insert(0, str(ROOT / "bench"))
import connections  # noqa: E402

SS = """\
ESTAB 0      0      10.233.0.1:40000 10.233.0.2:5000  users:(("conn_coll",pid=101,fd=20))
ESTAB 0      0      10.233.0.1:40002 10.233.0.3:5001  users:(("conn_coll",pid=102,fd=21))
ESTAB 0      0      10.233.0.1:40004 10.233.0.2:6000  users:(("orted",pid=900,fd=9))
ESTAB 0      0      127.0.0.1:40006  127.0.0.1:7000   users:(("conn_coll",pid=101,fd=22))
ESTAB 0      0      10.233.0.1:40008 10.233.0.1:7001  users:(("conn_coll",pid=101,fd=23))
SYN-SENT 0   1      10.233.0.1:40010 10.233.0.4:5002  users:(("conn_coll",pid=101,fd=24),("conn_coll",pid=105,fd=3))
garbage line
"""


def test_parse_ss():
    rows = connections.parse_ss(SS)
    assert len(rows) == 6
    assert rows[0] == ("ESTAB", ("10.233.0.1", 40000), ("10.233.0.2", 5000), [("conn_coll", 101)])
    assert rows[5][3] == [("conn_coll", 101), ("conn_coll", 105)]
    assert [connections.host_of(ip) for ip in ("10.233.0.1", "10.233.3.8", "127.0.0.1", "10.1.0.1")] == [0, 7, None, None]


def test_count_once_per_connection_with_rank_pairs():
    t = 1.0
    ends = {
        # rank 0 (pid 101, host0) <-> rank 2 (pid 201, host1), seen from both ends
        (("10.233.0.1", 40000), ("10.233.0.2", 5000)): (t, {101}, {"conn_coll"}),
        (("10.233.0.2", 5000), ("10.233.0.1", 40000)): (t, {201}, {"conn_coll"}),
        # rank 1 -> rank 3, only one end seen
        (("10.233.0.1", 40002), ("10.233.0.2", 5001)): (t, {102}, {"conn_coll"}),
        # the launcher's daemons
        (("10.233.0.1", 40004), ("10.233.0.2", 6000)): (t, {900}, {"orted"}),
        (("10.233.0.2", 6000), ("10.233.0.1", 40004)): (t, {901}, {"orted"}),
        # opened later (during MPI_Finalize): rank 0 <-> rank 3
        (("10.233.0.1", 40010), ("10.233.0.2", 5002)): (5.0, {101}, {"conn_coll"}),
        (("10.233.0.2", 5002), ("10.233.0.1", 40010)): (5.0, {202}, {"conn_coll"}),
    }
    rank_of = {101: 0, 102: 1, 201: 2, 202: 3}
    before = connections.count(ends, rank_of, until=2.0)
    assert (before["connections"], before["rank_pairs"], before["launcher_connections"]) == (2, 1, 1)
    assert before["pairs"] == [(0, 2)]
    total = connections.count(ends, rank_of)
    assert (total["connections"], total["rank_pairs"]) == (3, 2)


def test_cross_host_pairs():
    assert connections.cross_host_pairs(4, 2) == 24 and connections.cross_host_pairs(8, 1) == 28
    assert connections.cross_host_pairs(2, 2) == 4


@pytest.fixture(scope="module")
def two_hosts():
    with emulated_hosts(unique("cnx"), 2) as name:
        yield name


def test_live_alltoall_connections_openmpi(two_hosts):
    if not (BUILDS["openmpi"] / "lib" / "libcaracal.so").exists():
        pytest.fail("openmpi build missing: run make build-openmpi")
    a = types.SimpleNamespace(name=two_hosts, timeout=90, bytes=1024, iters=5, hold_ms=20000, interval=0.1)
    rows = {}
    for coll in ("none", "alltoall"):
        for side in ("native", "caracal"):
            r = connections.one_run(a, "openmpi", 2, 2, coll, side)
            assert "error" not in r, r
            assert r["ranks_seen"] == 4 and r["held"] == 4 and r["go"] and r["samples"] >= 2, r
            rows[coll, side] = r
            time.sleep(0.2)
    cross = {(p, q) for p in range(4) for q in range(p + 1, 4) if p // 2 != q // 2}
    for r in rows.values():
        assert set(map(tuple, r["pairs"])) <= cross, r["pairs"]   # shared memory inside a host
    # the native library's alltoall talks to every rank on the other host
    assert rows["alltoall", "native"]["rank_pairs"] == 4, rows["alltoall", "native"]
    # Caracal's: one exchange between the two hosts' leaders (ranks 0 and 2), on top of the
    # connections its hierarchy set-up (native collectives in MPI_Init) opened
    car = rows["alltoall", "caracal"]
    assert "alltoall hier" in car["caracal_algos"], car
    setup = set(map(tuple, rows["none", "caracal"]["pairs"]))
    assert set(map(tuple, car["pairs"])) <= setup | {(0, 2)}, (car["pairs"], setup)
