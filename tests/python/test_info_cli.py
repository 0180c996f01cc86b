"""caracal info --algorithms and --hierarchy: the listing users read to learn which algorithm
runs and which levels a launch gets. Expected groups are computed from CARACAL_NODE_SIZE's
rule (every K consecutive ranks form a node; leaders are the lowest ranks)."""
import json

FAMILIES = ["barrier", "bcast", "reduce", "allreduce", "allgather", "allgatherv", "gather", "gatherv",
            "scatter", "scatterv", "alltoall", "alltoallv", "reduce_scatter",
            "reduce_scatter_block", "scan", "exscan", "alltoallw"]


def test_algorithms_lists_every_family(cli):
    doc = json.loads(cli("info", "--algorithms", "--json", check=True).stdout)
    assert [f["name"] for f in doc["families"]] == FAMILIES
    text = cli("info", "--algorithms", check=True).stdout
    for fam in FAMILIES[:-1]:
        assert f"{fam}  (CARACAL_{fam.upper()})" in text
    assert "alltoallw  (no setting)" in text and "intercommunicators" in text
    assert "MPI_THREAD_MULTIPLE" not in text  # persistent collectives run Caracal's under threads too
    assert "always native" in text and "Neighborhood collectives" in text
    for fam in doc["families"]:
        for alg in fam["algorithms"]:
            assert alg["description"] and alg["name"] in text


def test_algorithms_show_the_whole_flag(cli):
    """The table's flags column (coll/algorithms.def): scatter_allgather alone keeps a schedule's
    message whole; the listing says so beside it and nowhere else."""
    doc = json.loads(cli("info", "--algorithms", "--json", check=True).stdout)
    whole = [(f["name"], a["name"]) for f in doc["families"] for a in f["algorithms"] if a["flags"]]
    assert whole == [("bcast", "scatter_allgather")]
    assert all(a["flags"] in ([], ["whole"]) for f in doc["families"] for a in f["algorithms"])
    text = cli("info", "--algorithms", check=True).stdout
    lines = [l for l in text.splitlines() if "[whole:" in l]
    assert len(lines) == 1 and lines[0].split()[0] == "scatter_allgather"


def test_algorithms_shows_user_rule(cli):
    out = cli("info", "--algorithms", check=True, env={"CARACAL_BCAST": "nary:3"}).stdout
    bcast = out.split("bcast  (CARACAL_BCAST)")[1].split("reduce  (")[0]
    assert "rules now: nary:3 | shm@" in bcast and "[CARACAL_BCAST, then built-in default]" in bcast


def test_algorithms_shows_rules_file(cli, tmp_path):
    rules = tmp_path / "rules.conf"
    rules.write_text("# tuned\nbcast = knomial:4@32k-   # from 32 KiB\nnosuch = native\n")
    proc = cli("info", "--algorithms", check=True, env={"CARACAL_RULES": str(rules)})
    bcast = proc.stdout.split("bcast  (CARACAL_BCAST)")[1].split("reduce  (")[0]
    assert f"rules now: knomial:4@32k- | shm@" in bcast and f"[rules file {rules}, then built-in default]" in bcast
    assert proc.stderr.count("warning:") == 1 and "'nosuch' is not a collective family" in proc.stderr
    missing = cli("info", "--algorithms", check=True, env={"CARACAL_RULES": str(tmp_path / "none.conf")})
    assert "No such file" in missing.stderr and "[built-in default]" in missing.stdout


def expected_groups(n, k):
    return [list(range(s, min(s + k, n))) for s in range(0, n, k)]


def test_hierarchy_node_size(cli, mpi):
    for n, k in ((5, 2), (4, 3)):
        doc = json.loads(cli("info", "--hierarchy", "-n", n, "--node-size", k, "--mpi", mpi, "--json",
                             check=True, timeout=300).stdout)
        assert doc["ranks"] == n and len(doc["hosts"]) == n
        node = doc["levels"][0]
        assert node["kind"] == "node"
        groups = expected_groups(n, k)
        assert [g["members"] for g in node["groups"]] == groups
        assert [g["leader"] for g in node["groups"]] == [g[0] for g in groups]
        top = doc["levels"][-1]
        assert top["kind"] == "top" and top["groups"][0]["members"] == [g[0] for g in groups]
        text = cli("info", "--hierarchy", "-n", n, "--node-size", k, "--mpi", mpi, check=True, timeout=300).stdout
        assert f"{n} ranks ({mpi}): {doc['summary']}" in text


def test_hierarchy_one_rank_per_node_is_flat(cli):
    doc = json.loads(cli("info", "--hierarchy", "-n", 3, "--node-size", 1, "--json", check=True,
                         timeout=300).stdout)
    # one group of everybody at the top: no node level, no shared memory
    assert [lv["kind"] for lv in doc["levels"]] == ["top"]
    assert doc["levels"][0]["groups"] == [{"leader": 0, "members": [0, 1, 2]}]


def test_hierarchy_bad_input(cli, tmp_path):
    for args, msg in ((["-n", "0"], "-n must be at least 1"),
                      (["--node-size", "0"], "--node-size must be at least 1"),
                      (["--topology", str(tmp_path / "missing.json")], "topology file not found")):
        p = cli("info", "--hierarchy", *args)
        assert p.returncode == 2 and msg in p.stderr and p.stderr.count("\n") == 1, p.stderr
    p = cli("info", "--hierarchy", "--algorithms")
    assert p.returncode == 2
