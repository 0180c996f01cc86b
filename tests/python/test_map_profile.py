"""caracal map --profile --topology: a real profile of a known heavy-pair pattern
(tests/c/map_pairs.c: rank i talks mostly to rank i + n/2) on static topologies."""
import json
import os
import re
import subprocess

import pytest
from conftest import BUILDS


def profile(cli, tmp_path, mpi, n):
    out = tmp_path / f"pairs-{mpi}-{n}.json"
    cli("run", "--mpi", mpi, "-n", n, "--profile", out, "--", BUILDS[mpi] / "bin" / "map_pairs", check=True, timeout=300)
    return out


def static_topology(cli, tmp_path, hosts, name="topo.json"):
    src = tmp_path / (name + ".in")
    src.write_text(json.dumps({"schema": "caracal.topology-input/1", "hosts": hosts}))
    out = tmp_path / name
    cli("nodemap", "--static", src, "--out", out, check=True)
    return out


def host_of(topo_path, perm):
    hosts = [r["host"] for r in json.loads(topo_path.read_text())["ranks"]]
    return [hosts[p] for p in perm]


def test_heavy_pairs_share_a_host(cli, tmp_path, mpi):
    prof = profile(cli, tmp_path, mpi, 4)
    T = json.loads(prof.read_text())["traffic"]["bytes"]
    assert T[0][2] > 1000 * T[0][1] > 0  # the pattern really is there
    topo = static_topology(cli, tmp_path, ["a", "a", "b", "b"])  # identity = hostname order = bad
    rf = tmp_path / "rankfile"
    p = cli("map", "--profile", prof, "--topology", topo, "--out", rf, "--json", "--iterations", "500", check=True)
    r = json.loads(p.stdout)
    h = host_of(topo, r["permutation"])
    assert h[0] == h[2] and h[1] == h[3] and h[0] != h[1]
    c = r["cost"]
    assert c["qap"] <= c["identity"] and c["qap"] <= c["hostname"] and c["qap"] < c["identity"]
    lines = rf.read_text().splitlines()
    assert len(lines) == 4
    for i, line in enumerate(lines):  # a static topology knows no cores: any slot on the host
        m = re.fullmatch(r"rank (\d+)=(\w+) slot=\*", line)
        assert m and int(m.group(1)) == i and m.group(2) == h[i], line


def test_bound_cores_become_slots(cli, tmp_path):
    prof = profile(cli, tmp_path, "openmpi", 4)
    topo = static_topology(cli, tmp_path, ["a", "a", "b", "b"])
    doc = json.loads(topo.read_text())
    for k, r in enumerate(doc["ranks"]):  # as nodemap records ranks bound to one core each
        r.update(core=k % 2, bound=True)
    doc["ranks"][3]["bound"] = False  # unbound: its core is only where it last ran
    topo.write_text(json.dumps(doc))
    rf = tmp_path / "rf"
    r = json.loads(cli("map", "--profile", prof, "--topology", topo, "--out", rf, "--json", check=True).stdout)
    lines = rf.read_text().splitlines()
    for i, p in enumerate(r["permutation"]):
        want = "*" if p == 3 else str(p % 2)
        assert lines[i] == f"rank {i}={doc['ranks'][p]['host']} slot={want}"


def test_files_launch(cli, tmp_path):
    """The rankfile and machinefile written for this host are accepted by the launchers."""
    import socket
    host = socket.gethostname()
    prof = profile(cli, tmp_path, "openmpi", 4)
    topo = static_topology(cli, tmp_path, [host] * 4)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    rf, mf = tmp_path / "rankfile", tmp_path / "machinefile"
    cli("map", "--profile", prof, "--topology", topo, "--out", rf, check=True)
    cli("map", "--profile", prof, "--topology", topo, "--out", mf, "--format", "mpich", check=True)
    for cmd in (["mpiexec.openmpi", "--oversubscribe", "--rankfile", str(rf), "-n", "4", "hostname"],
                ["mpiexec.mpich", "-f", str(mf), "-n", "4", "hostname"]):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
        assert p.returncode == 0, (cmd, p.stdout, p.stderr)
        assert p.stdout.split() == [host] * 4


def test_text_report_and_mpich_machinefile(cli, tmp_path):
    prof = profile(cli, tmp_path, "openmpi", 4)
    topo = static_topology(cli, tmp_path, ["a", "b", "a", "b"])  # round robin: identity already good
    mf = tmp_path / "hosts"
    p = cli("map", "--profile", prof, "--topology", topo, "--out", mf, "--format", "mpich", check=True)
    for label in ("QAP mapping", "identity", "random (median of 5)", "hostname order"):
        assert label in p.stdout
    lines = mf.read_text().splitlines()
    assert len(lines) == 4 and all(re.fullmatch(r"[ab]:1", x) for x in lines)
    hosts = [x[0] for x in lines]
    assert hosts[0] == hosts[2] and hosts[1] == hosts[3]
    # an existing output is kept unless --force
    before = mf.read_text()
    p = cli("map", "--profile", prof, "--topology", topo, "--out", mf)
    assert p.returncode == 2 and "exists" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert mf.read_text() == before
    cli("map", "--profile", prof, "--topology", topo, "--out", mf, "--force", check=True)


@pytest.mark.parametrize("n", [1, 2])
def test_small_jobs(cli, tmp_path, n):
    prof = profile(cli, tmp_path, "openmpi", n)
    topo = static_topology(cli, tmp_path, ["a", "b"][:n])
    rf = tmp_path / "rf"
    r = json.loads(cli("map", "--profile", prof, "--topology", topo, "--out", rf, "--json", check=True).stdout)
    assert sorted(r["permutation"]) == list(range(n))
    assert len(rf.read_text().splitlines()) == n


def one_line_exit_2(p, *words):
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    for w in words:
        assert w in p.stderr, p.stderr


def test_bad_inputs(cli, tmp_path):
    prof = profile(cli, tmp_path, "openmpi", 4)
    topo = static_topology(cli, tmp_path, ["a", "a", "b", "b"])
    text = prof.read_text()
    cases = {
        "truncated.json": text[: len(text) // 2],
        "empty.json": "",
        "notjson.json": "this is not json\n",
        "schema.json": json.dumps({"schema": "caracal.topology/1", "nranks": 4}),
    }
    doc = json.loads(text)
    doc["traffic"]["bytes"] = doc["traffic"]["bytes"][:3]
    cases["shape.json"] = json.dumps(doc)
    doc = json.loads(text)
    doc["traffic"]["bytes"][1][2] = -5
    cases["negative.json"] = json.dumps(doc)
    for name, body in cases.items():
        bad = tmp_path / name
        bad.write_text(body)
        one_line_exit_2(cli("map", "--profile", bad, "--topology", topo), name)
    one_line_exit_2(cli("map", "--profile", tmp_path / "missing.json", "--topology", topo), "missing.json")
    # topology: truncated, and the wrong number of ranks
    ttext = topo.read_text()
    (tmp_path / "ttrunc.json").write_text(ttext[: len(ttext) * 2 // 3])
    one_line_exit_2(cli("map", "--profile", prof, "--topology", tmp_path / "ttrunc.json"), "ttrunc.json")
    small = static_topology(cli, tmp_path, ["a", "b"], name="two.json")
    one_line_exit_2(cli("map", "--profile", prof, "--topology", small), "4 ranks", "2")
    # modes do not mix
    one_line_exit_2(cli("map", "--profile", prof), "--topology")
    one_line_exit_2(cli("map", "--qaplib", prof, "--profile", prof, "--topology", topo), "either")
    one_line_exit_2(cli("map"), "either")
