"""caracal nodemap: real measurements on this host (1-4 ranks, both MPIs), the
static input, and the readers' refusal of corrupt files. The two-host test is
in test_nodemap_hosts.py."""
import json
import socket
import subprocess

import pytest

from conftest import BUILDS, ROOT

NODEMAP_ARGS = ["--reps", "5", "--bw-size", "65536"]  # small: MPICH is slow oversubscribed


def check_structure(doc, n):
    """What every topology must satisfy, whatever the timings."""
    assert doc["schema"] == "caracal.topology/1"
    assert doc["nranks"] == n and len(doc["ranks"]) == n
    assert doc["pairs_measured"] + doc["pairs_estimated"] == n * (n - 1) // 2
    L, M = doc["L"], doc["measured"]
    assert len(L) == n and all(len(row) == n for row in L)
    for p in range(n):
        assert L[p][p] == 0 and M[p][p] == 0
        for q in range(n):
            assert L[p][q] == L[q][p] and M[p][q] == M[q][p]
            if p != q:
                assert L[p][q] > 0
    assert sum(M[p][q] for p in range(n) for q in range(p + 1, n)) == doc["pairs_measured"]
    names = [lv["name"] for lv in doc["levels"]]
    assert names[:2] == ["socket", "node"]
    for lo, hi in zip(doc["levels"], doc["levels"][1:]):  # levels nest
        up = {}
        for r in range(n):
            assert up.setdefault(lo["group"][r], hi["group"][r]) == hi["group"][r]
    if doc["source"] == "measured":
        check_estimates(doc)


def check_estimates(doc):
    """Each estimated pair must follow the documented rule from timed pairs:
    some r with rtt(p,r) >= ratio * rtt(r,q) (or the mirror) gave L[p][q]."""
    n, L, M = doc["nranks"], doc["L"], doc["measured"]
    ratio = doc["parameters"]["prune_ratio"]
    for p in range(n):
        for q in range(p + 1, n):
            if M[p][q]:
                continue
            ok = False
            for r in range(n):
                if r in (p, q) or not (M[p][r] and M[r][q]):
                    continue
                if L[p][r] >= ratio * L[r][q] and L[p][q] == L[p][r]:
                    ok = True
                if L[r][q] >= ratio * L[p][r] and L[p][q] == L[r][q]:
                    ok = True
            assert ok, f"pair ({p},{q}) estimated without a witness"


def c_check(mpi, path):
    return subprocess.run([str(BUILDS[mpi] / "bin" / "caracal-nodemap"), "--check", str(path)],
                          capture_output=True, text=True, timeout=60)


def c_levels(mpi, path):
    """The levels as libcaracal's reader sees them: name -> group list."""
    p = c_check(mpi, path)
    assert p.returncode == 0, p.stderr
    out = {}
    for line in p.stdout.splitlines():
        if line.startswith("level "):
            head, ids = line.split(":")
            out[head.split()[1]] = [int(x) for x in ids.split()]
    return out


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_one_host(cli, mpi, tmp_path, n):
    out = tmp_path / "topo.json"
    p = cli("nodemap", "-n", n, "--mpi", mpi, "--out", out, *NODEMAP_ARGS)
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    check_structure(doc, n)
    assert doc["source"] == "measured"
    assert {r["host"] for r in doc["ranks"]} == {socket.gethostname()}
    # one node: both levels hold everyone, and every pair is cheap enough to time
    assert [lv["name"] for lv in doc["levels"]] == ["socket", "node"]
    assert doc["levels"][1]["group"] == [0] * n
    assert [r["shm_group"] for r in doc["ranks"]] == [0] * n
    assert doc["pairs_measured"] == n * (n - 1) // 2 and doc["pairs_estimated"] == 0
    if n > 1:
        assert doc["bandwidth"]["pairs"] and all(b["bytes_per_s"] > 0 for b in doc["bandwidth"]["pairs"])
    assert f"pairs measured {n * (n - 1) // 2}, estimated 0" in p.stdout
    assert c_levels(mpi, out) == {lv["name"]: lv["group"] for lv in doc["levels"]}


def test_no_prune_and_existing_output(cli, tmp_path):
    out = tmp_path / "topo.json"
    out.write_text("keep")
    p = cli("nodemap", "-n", 2, "--out", out, *NODEMAP_ARGS)
    assert p.returncode == 2 and out.read_text() == "keep"
    assert len(p.stderr.strip().splitlines()) == 1
    p = cli("nodemap", "-n", 3, "--out", out, "--force", "--no-prune", *NODEMAP_ARGS)
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    check_structure(doc, 3)
    assert doc["parameters"]["prune"] is False and doc["pairs_measured"] == 3


STATIC = {
    "schema": "caracal.topology-input/1",
    "ranks": [
        {"host": "n01", "package": 0, "switch": "rack1", "site": "room"},
        {"host": "n01", "package": 1, "switch": "rack1", "site": "room"},
        {"host": "n02", "switch": "rack1", "site": "room"},
        {"host": "n03", "switch": "rack2", "site": "room"},
        {"host": "far", "switch": "far", "site": "remote"},
    ],
    "latency": {"socket": 4e-7, "node": 9e-7, "world": 0.02},
}


def test_static_round_trip(cli, tmp_path):
    src, out, again = tmp_path / "machine.json", tmp_path / "topo.json", tmp_path / "again.json"
    src.write_text(json.dumps(STATIC))
    p = cli("nodemap", "--static", src, "--out", out)
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    check_structure(doc, 5)
    assert doc["source"] == "static" and doc["pairs_measured"] == 0 and doc["pairs_estimated"] == 10
    levels = {lv["name"]: lv["group"] for lv in doc["levels"]}
    assert levels == {"socket": [0, 1, 2, 3, 4], "node": [0, 0, 1, 2, 3],
                      "switch": [0, 0, 0, 1, 2], "site": [0, 0, 0, 0, 1]}
    L = doc["L"]
    assert (L[0][1], L[0][2], L[0][3], L[0][4]) == (9e-7, 2e-5, 1e-3, 0.02)  # given, default, default, given
    # the output is itself valid static input and comes back unchanged
    p = cli("nodemap", "--static", out, "--out", again)
    assert p.returncode == 0, p.stderr
    assert json.loads(again.read_text()) == doc
    for mpi in ("openmpi", "mpich"):
        assert c_levels(mpi, out) == levels
    p = cli("nodemap", "--check", out)
    assert p.returncode == 0 and "levels socket(5) node(4) switch(3) site(2)" in p.stdout


def test_static_torus_kept_and_read_by_the_library(cli, tmp_path):
    """A declared torus (docs/topology-format.md) goes into the output as written, and
    libcaracal's reader (caracal-nodemap --check) accepts it or refuses it as Python does."""
    src, out = tmp_path / "m.json", tmp_path / "t.json"
    torus = {"dims": [2, 2], "nodes": [3, 1, 0, 2]}
    src.write_text(json.dumps({"schema": "caracal.topology-input/1", "hosts": ["a", "b", "c", "d"], "torus": torus}))
    assert cli("nodemap", "--static", src, "--out", out).returncode == 0
    assert json.loads(out.read_text())["torus"] == torus
    nodemap = ROOT / "build" / "bin" / "caracal-nodemap"
    if nodemap.exists():
        assert subprocess.run([nodemap, "--check", out], capture_output=True).returncode == 0
        doc = json.loads(out.read_text())
        doc["torus"]["dims"] = [3]
        out.write_text(json.dumps(doc))
        p = subprocess.run([nodemap, "--check", out], capture_output=True, text=True)
        assert p.returncode == 2 and "torus.dims hold 3 nodes" in p.stderr


def test_static_hosts_and_matrix(cli, tmp_path):
    src, out = tmp_path / "m.json", tmp_path / "t.json"
    L = [[0, 1e-6, 5e-5], [1e-6, 0, 5e-5], [5e-5, 5e-5, 0]]
    src.write_text(json.dumps({"schema": "caracal.topology-input/1", "hosts": ["a", "a", "b"], "L": L}))
    p = cli("nodemap", "--static", src, "--out", out, "-n", 3)
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    assert doc["L"] == L and [lv["name"] for lv in doc["levels"]] == ["socket", "node"]
    assert doc["levels"][1]["group"] == [0, 0, 1]
    p = cli("nodemap", "--static", src, "--out", tmp_path / "x.json", "-n", 4)
    assert p.returncode == 2 and "describes 3 ranks" in p.stderr


BAD_STATIC = [
    ({"schema": "caracal.topology-input/1", "ranks": [{"host": "a", "switch": "s1"}, {"host": "a", "switch": "s2"}]},
     "does not nest"),
    ({"schema": "caracal.topology-input/1", "ranks": [{"host": "a", "switch": "s1"}, {"host": "b"}]}, 'has no "switch"'),
    ({"schema": "caracal.topology-input/1", "hosts": ["a", "b"], "latency": {"rack": 1e-6}}, "unknown level"),
    ({"schema": "caracal.topology-input/1", "hosts": ["a", "b"], "L": [[0, 1], [2, 0]]}, "not symmetric"),
    ({"hosts": ["a"]}, "schema"),
    ({"schema": "caracal.topology-input/1", "hosts": ["a", "b", "c"], "torus": {"dims": [2, 2]}},
     'torus.dims hold 4 nodes, the "node" level has 3 groups'),
    ({"schema": "caracal.topology-input/1", "hosts": ["a", "b"], "torus": {"dims": [2], "nodes": [1, 1]}},
     "torus.nodes must list each of the 2 node group ids once"),
]


@pytest.mark.parametrize("doc,msg", BAD_STATIC)
def test_static_bad_input(cli, tmp_path, doc, msg):
    src = tmp_path / "m.json"
    src.write_text(json.dumps(doc))
    p = cli("nodemap", "--static", src, "--out", tmp_path / "t.json")
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and msg in lines[0] and str(src) in lines[0]
    assert not (tmp_path / "t.json").exists()


def _valid_topology_text(tmp_path, cli):
    src, out = tmp_path / "m.json", tmp_path / "valid.json"
    src.write_text(json.dumps(STATIC))
    cli("nodemap", "--static", src, "--out", out, check=True)
    return out.read_text()


def _corruptions(text):
    doc = json.loads(text)

    def edit(f):
        d = json.loads(text)
        f(d)
        return json.dumps(d)

    yield "empty", ""
    for frac in (0.1, 0.5, 0.9):
        yield f"truncated at {frac}", text[: int(len(text) * frac)]
    yield "truncated by one byte", text.rstrip()[:-1]
    yield "garbage", "\x00\x01 not json"
    yield "trailing comma", text.rstrip()[:-1].rstrip() + ",}"
    yield "trailing data", text + "{}"
    yield "NaN", text.replace("0.001", "NaN", 1)
    yield "duplicate key", text.replace('"nranks": 5', '"nranks": 5, "nranks": 5', 1)
    yield "top level array", "[" + text + "]"
    yield "wrong schema", edit(lambda d: d.update(schema="caracal.profile/1"))
    yield "nranks mismatch", edit(lambda d: d.update(nranks=6))
    yield "pairs do not add up", edit(lambda d: d.update(pairs_estimated=9))
    yield "short group", edit(lambda d: d["levels"][0]["group"].pop())
    yield "unused group id", edit(lambda d: d["levels"][0].update(group=[0, 1, 2, 3, 5]))
    yield "not nested", edit(lambda d: d["levels"][2].update(group=[0, 1, 0, 1, 2]))
    yield "asymmetric L", edit(lambda d: d["L"][0].__setitem__(1, 1.0))
    yield "nonzero diagonal", edit(lambda d: d["L"][2].__setitem__(2, 1e-6))
    yield "negative latency", edit(lambda d: [d["L"][0].__setitem__(1, -1.0), d["L"][1].__setitem__(0, -1.0)])
    yield "L short row", edit(lambda d: d["L"][3].pop())
    yield "missing L", edit(lambda d: d.pop("L"))
    yield "duplicate level", edit(lambda d: d["levels"][3].update(name="switch"))
    assert doc  # the base text itself is valid


def test_corrupt_topology_files(cli, tmp_path):
    text = _valid_topology_text(tmp_path, cli)
    for i, (what, bad) in enumerate(_corruptions(text)):
        f = tmp_path / f"bad{i}.json"
        f.write_text(bad)
        results = {"caracal nodemap --check": cli("nodemap", "--check", f),
                   "caracal nodemap --static": cli("nodemap", "--static", f, "--out", tmp_path / f"o{i}.json")}
        for mpi in ("openmpi", "mpich"):
            results[f"caracal-nodemap --check ({mpi})"] = c_check(mpi, f)
        for tool, p in results.items():
            lines = p.stderr.strip().splitlines()
            assert p.returncode == 2, f"{what}: {tool} exit {p.returncode}"
            assert len(lines) == 1 and str(f) in lines[0], f"{what}: {tool}: {p.stderr!r}"
        assert not (tmp_path / f"o{i}.json").exists()


def test_bad_options(cli, tmp_path):
    for args in (["--out", tmp_path / "x.json", "--ratio", "0.5"], ["--check", tmp_path / "missing.json"],
                 ["-n", "2"], ["--out", tmp_path / "no" / "dir.json"]):
        p = cli("nodemap", *args)
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, (args, p.stderr)
    exe = str(BUILDS["openmpi"] / "bin" / "caracal-nodemap")
    p = subprocess.run([exe, "--check"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
