"""Native tuning files (caracal.native_tuning) against the real libraries: the files
written make Open MPI 4.1 / MPICH 4.0 run the given algorithm in the given cell and
only there, results stay exact, and the environment forcing one algorithm works.

Which algorithm ran is observed, not assumed:
- a reduction with a user operation declared commutative but neither commutative nor
  associative: its result is a fingerprint of the order and bracketing the algorithm
  used (tests/python/data/native_tuning_probe.c);
- Open MPI's pml monitoring (internal messages per sender -> receiver): the message
  graph of a bcast is the algorithm's tree.
"""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from caracal import native_tuning as nt
from caracal.launch import launcher_env, mpiexec_command

PROBE = Path(__file__).parent / "data" / "native_tuning_probe.c"
MPICC = {"openmpi": "mpicc.openmpi", "mpich": "mpicc.mpich"}
N = 4  # ranks of every launch here


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    """The probe built for each library: {mpi: path}."""
    out = {}
    d = tmp_path_factory.mktemp("probe")
    for mpi, cc in MPICC.items():
        if shutil.which(cc) is None:
            pytest.fail(f"{cc} missing: run make setup")
        exe = d / f"probe_{mpi}"
        subprocess.run([cc, "-O1", "-o", str(exe), str(PROBE)], check=True, timeout=120)
        out[mpi] = str(exe)
    return out


def run(mpi, probe, mode, count, env=None, n=N, check=True):
    cmd = mpiexec_command(mpi, n, [probe[mpi], mode, str(count)], env=env)
    p = subprocess.run(cmd, env=launcher_env(), capture_output=True, text=True, timeout=60)
    if check:
        assert p.returncode == 0, f"{' '.join(cmd)}\n{p.stdout}\n{p.stderr[-3000:]}"
    return p


def answers(mpi, probe, mode, counts, env=None, n=N):
    """The probe's result lines: one per count for the order-* modes."""
    return [ln for ln in run(mpi, probe, mode, ",".join(map(str, counts)), env, n).stdout.splitlines()
            if ln.startswith(("fp=", "ok", "wrong"))]


def answer(mpi, probe, mode, count, env=None, n=N):
    lines = answers(mpi, probe, mode, [count], env, n)
    assert len(lines) == 1, lines
    return lines[0]


# ---------------------------------------------------------------- algorithm lists, env
def test_algorithms_read_from_the_installed_libraries():
    ompi = nt.native_algorithms("openmpi")
    # the coll/tuned enumerators of Open MPI 4.1.4 (ompi_info): numbers and names
    assert (1, "basic_linear") in ompi["bcast"] and (6, "binomial") in ompi["bcast"]
    assert (3, "pipeline") in ompi["bcast"]
    assert (1, "basic_linear") in ompi["allreduce"] and (4, "ring") in ompi["allreduce"]
    assert all(i != 0 for algs in ompi.values() for i, _ in algs)  # 0 = "ignore" left out
    assert "gatherv" not in ompi and "scatterv" not in ompi  # no tuned choice in 4.1
    mpich = nt.native_algorithms("mpich")
    assert ("binomial", "MPIR_Bcast_intra_binomial") in mpich["bcast"]
    assert ("pairwise", "MPIR_Reduce_scatter_block_intra_pairwise") in mpich["reduce_scatter_block"]
    assert ("linear", "MPIR_Gatherv_allcomm_linear") in mpich["gatherv"]
    assert ("nb", "MPIR_Allreduce_allcomm_nb") in mpich["allreduce"]
    assert set(ompi) <= set(nt.COLLECTIVES) and set(mpich) <= set(nt.COLLECTIVES)


def test_ompi_info_parser():
    text = ("mca:coll:tuned:param:coll_tuned_bcast_algorithm:enumerator:value:0:ignore\n"
            "mca:coll:tuned:param:coll_tuned_bcast_algorithm:enumerator:value:6:binomial\n"
            "mca:coll:tuned:param:coll_tuned_bcast_algorithm:enumerator:value:1:basic_linear\n"
            "mca:coll:tuned:param:coll_tuned_bcast_algorithm:value:ignore\n"
            "mca:coll:tuned:param:coll_tuned_use_dynamic_rules:enumerator:value:1:true\n")
    assert nt._parse_ompi_info(text) == {"bcast": [(1, "basic_linear"), (6, "binomial")]}


def test_env_shapes(tmp_path):
    assert nt.force_env("openmpi", "bcast", "pipeline") == {
        "OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_bcast_algorithm": "3"}
    assert nt.force_env("openmpi", "bcast", 3) == nt.force_env("openmpi", "bcast", "3")
    assert nt.force_env("mpich", "bcast", "MPIR_Bcast_intra_binomial") == {
        "MPIR_CVAR_BCAST_DEVICE_COLLECTIVE": "0", "MPIR_CVAR_BCAST_INTRA_ALGORITHM": "binomial"}
    assert nt.force_env("mpich", "bcast", None) == {}
    assert nt.applicable("openmpi", "alltoall", "two_proc", 4) == "two_proc needs exactly 2 ranks"
    assert nt.applicable("openmpi", "alltoall", "two_proc", 2) is None
    assert nt.applicable("mpich", "allgather", "recursive_doubling", 6) is not None
    assert nt.applicable("mpich", "allgather", "recursive_doubling", 8) is None
    assert nt.applicable("mpich", "alltoall", "pairwise_sendrecv_replace", 4) == \
        "pairwise_sendrecv_replace runs in place only"
    assert nt.applicable("mpich", "allreduce", "reduce_scatter_allgather", 6, 24) is not None  # 3 < 4
    assert nt.applicable("mpich", "allreduce", "reduce_scatter_allgather", 6, 32) is None
    assert nt.applicable("mpich", "allreduce", "reduce_scatter_allgather", 6, 32, builtin_op=False)
    with pytest.raises(nt.NativeTuningError, match="cannot force bcast algorithm 'telepathy'"):
        nt.force_env("openmpi", "bcast", "telepathy")
    f = tmp_path / "t.json"
    assert nt.pass_env("mpich", f) == {"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE": str(f),
                                       "MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE": str(tmp_path / "t.ch4.json")}
    assert nt.pass_env("openmpi", f)["OMPI_MCA_coll_tuned_dynamic_rules_filename"] == str(f)


# ---------------------------------------------------------------- writers without a launch
def test_openmpi_rules_layout():
    text, notes = nt.openmpi_rules_text([
        {"coll": "allgather", "comm_size": 4, "bytes_lo": 1024, "bytes_hi": 4096, "alg": "ring"},
        {"coll": "allreduce", "comm_size": 4, "comm_size_hi": 7, "bytes_lo": 0, "alg": 1},
        {"coll": "scan", "comm_size": 4, "bytes_lo": 8, "alg": 1}])
    nums = [int(t) for ln in text.splitlines() for t in ln.split("#")[0].split()]
    # 2 collectives; allgather (id 0): sizes 1 (default), 4 (B*4: 4096..16384 ring=4), 5+;
    # allreduce (id 2): 1, 4..7 (everything basic_linear=1), 8+ (default)
    assert nums == [2,
                    0, 3, 1, 1, 0, 0, 0, 0,
                    4, 3, 0, 0, 0, 0, 4096, 4, 4, 0, 16384, 0, 0, 0,
                    5, 1, 0, 0, 0, 0,
                    2, 3, 1, 1, 0, 0, 0, 0,
                    4, 1, 0, 1, 4, 0,
                    8, 1, 0, 0, 0, 0]
    assert len(notes) == 1 and "scan" in notes[0] and "not written" in notes[0]


def test_cells_from_measured_points():
    pts = [{"coll": "bcast", "comm_size": 4, "bytes": b, "alg": a}
           for b, a in ((8, "pipeline"), (1024, "pipeline"), (65536, None), (1 << 20, "chain"))]
    pts.append({"coll": "barrier", "comm_size": 2, "bytes": 0, "alg": None})
    assert nt.cells_from_points(pts) == [
        {"coll": "bcast", "comm_size": 4, "bytes_lo": 0, "bytes_hi": 65536, "alg": "pipeline"},
        {"coll": "bcast", "comm_size": 4, "bytes_lo": 1 << 20, "bytes_hi": None, "alg": "chain"}]


def test_bad_cells_are_refused():
    with pytest.raises(nt.NativeTuningError, match="overlap"):
        nt.openmpi_rules_text([{"coll": "bcast", "comm_size": 4, "bytes_lo": 0, "bytes_hi": 100, "alg": 1},
                               {"coll": "bcast", "comm_size": 4, "bytes_lo": 50, "alg": 6}])
    with pytest.raises(nt.NativeTuningError, match="empty or negative"):
        nt.openmpi_rules_text([{"coll": "bcast", "comm_size": 4, "bytes_lo": 10, "bytes_hi": 10, "alg": 1}])
    with pytest.raises(nt.NativeTuningError, match="bad tuning cell"):
        nt.mpich_trees([{"coll": "bcast", "bytes_lo": 0, "alg": "binomial"}])
    with pytest.raises(nt.NativeTuningError, match="cannot force"):
        nt.mpich_trees([{"coll": "bcast", "comm_size": 2, "bytes_lo": 0, "alg": "ring"}])


def test_writers_take_the_algorithms_of_the_library_they_write_for():
    """caracal tune --mpi mpich5 / openmpi5 writes with that library's algorithm list (MPICH
    5.0 and Open MPI 5.0 have algorithms 4.0 / 4.1 lack: before, the writers looked them up
    in Debian's list and the tune stopped with "mpich cannot force allreduce algorithm ...").
    MPICH's algorithms whose file entry takes parameters are reported, not written."""
    from caracal import mpilibs
    for name in ("mpich5", "openmpi5"):
        if not mpilibs.get(name).installed():
            pytest.skip(f"{mpilibs.get(name).title} not installed (make setup MPI={name})")
    ring = {"coll": "allreduce", "comm_size": 2, "bytes_lo": 0, "bytes_hi": 4096, "alg": "ring"}
    tree = {"coll": "bcast", "comm_size": 2, "bytes_lo": 0, "alg": "tree"}
    with pytest.raises(nt.NativeTuningError, match="cannot force allreduce algorithm 'ring'"):
        nt.mpich_trees([ring])  # MPICH 4.0.2 has no allreduce ring
    mpir, _, notes = nt.mpich_trees([ring, tree], mpi="mpich5")
    assert "algorithm=MPIR_Allreduce_intra_ring" in str(mpir["collective=allreduce"])
    assert "Bcast_intra_tree" not in str(mpir["collective=bcast"])
    assert len(notes) == 1 and notes[0].startswith("bcast: algorithm tree's selection-file entry takes parameters")
    sparbit = {"coll": "allgather", "comm_size": 2, "bytes_lo": 0, "alg": "sparbit"}
    with pytest.raises(nt.NativeTuningError, match="cannot force allgather algorithm 'sparbit'"):
        nt.openmpi_rules_text([sparbit])  # Open MPI 4.1 has no sparbit
    text, notes = nt.openmpi_rules_text([sparbit], "openmpi5")
    assert notes == [] and "0 7 4 0  # sparbit" in text  # coll_tuned_allgather_algorithm 7 in 5.0


def test_mpich_trees_keep_the_default_and_guard_restrictions():
    default = nt.mpich_default_tree("mpir")
    mpir, ch4, notes = nt.mpich_trees([])
    assert mpir == default and ch4 == nt.mpich_default_tree("ch4") and notes == []
    mpir, ch4, notes = nt.mpich_trees([
        {"coll": "allgather", "comm_size": 4, "bytes_lo": 256, "alg": "recursive_doubling"},
        {"coll": "gather", "comm_size": 4, "bytes_lo": 256, "alg": "nb"},
        {"coll": "scan", "comm_size": 4, "bytes_lo": 0, "alg": "smp"}])
    assert list(mpir) == list(default)  # every collective, in the library's order
    ag = mpir["collective=allgather"]
    dflt = default["collective=allgather"]
    assert ag["comm_type=inter"] == dflt and ag["comm_hierarchy=node"] == dflt
    body = ag["comm_type=intra"]
    assert list(body) == ["comm_size<=3", "comm_size<=4", "comm_size=any"]
    assert body["comm_size<=3"] == dflt and body["comm_size=any"] == dflt
    # B = one rank's block; MPICH compares the total (B * 4): default below 1024 bytes
    assert list(body["comm_size<=4"]) == ["total_msg_size<=1023", "total_msg_size=any"]
    leaf = body["comm_size<=4"]["total_msg_size=any"]
    assert leaf == {"comm_size=pow2": {"algorithm=MPIR_Allgather_intra_recursive_doubling": {}},
                    "comm_size=any": dflt}
    assert ch4["collective=allgather"] == nt.mpich_default_tree("ch4")["collective=allgather"]
    # gather's size is in elements; scan smp needs a commutativity test csel lacks for scan
    assert len(notes) == 2 and notes[0].startswith("gather") and notes[1].startswith("scan: algorithm smp")
    assert mpir["collective=scan"] == default["collective=scan"]


# ---------------------------------------------------------------- the libraries, for real
def test_openmpi_rules_select_the_algorithm(probe, tmp_path):
    """allreduce basic_linear for 4 ranks and 64 <= bytes < 256, default elsewhere."""
    rules = tmp_path / "ompi.rules"
    assert nt.write_openmpi_rules(rules, [{"coll": "allreduce", "comm_size": N, "bytes_lo": 64,
                                           "bytes_hi": 256, "alg": "basic_linear"}]) == []
    env = nt.pass_env("openmpi", rules)
    forced = nt.force_env("openmpi", "allreduce", "basic_linear")
    counts, inside = (8, 16, 32, 64), (False, True, True, False)  # 4-byte elements
    got = answers("openmpi", probe, "order-allreduce", counts, env)
    default = answers("openmpi", probe, "order-allreduce", counts)
    linear = answers("openmpi", probe, "order-allreduce", counts, forced)
    assert len(got) == len(default) == len(linear) == 4
    for g, d, lin, ins in zip(got, default, linear, inside):
        assert g == (lin if ins else d) and lin != d
    # another communicator size keeps the default (basic_linear there would differ too)
    got3 = answer("openmpi", probe, "order-allreduce", 16, env, n=3)
    assert got3 == answer("openmpi", probe, "order-allreduce", 16, n=3) \
        != answer("openmpi", probe, "order-allreduce", 16, forced, n=3)
    # a malformed file: a release Open MPI ignores it without a word (the reader's
    # messages are debug-build only) and keeps its fixed decision
    bad = tmp_path / "bad.rules"
    bad.write_text("1\n2\n1\n4\n1\n64 1 0 0\n")  # first message rule not at size 0
    assert answer("openmpi", probe, "order-allreduce", 16, nt.pass_env("openmpi", bad)) == default[1]


def _message_graph(p):
    """{(sender, receiver)} of the internal (collective) messages of >= 1000 bytes that
    Open MPI's pml monitoring prints at MPI_Finalize ("I<TAB>from<TAB>to<TAB>N bytes...")."""
    edges = set()
    for m in re.finditer(r"^I\t(\d+)\t(\d+)\t(\d+) bytes", p.stdout + p.stderr, re.M):
        if int(m.group(3)) >= 1000:
            edges.add((int(m.group(1)), int(m.group(2))))
    return edges


def test_openmpi_bcast_tree_follows_the_rules(probe, tmp_path):
    """bcast pipeline (a chain 0->1->2->3) from 4000 bytes; binomial (the default) below."""
    rules = tmp_path / "bcast.rules"
    nt.write_openmpi_rules(rules, [{"coll": "bcast", "comm_size": N, "bytes_lo": 4000, "alg": "pipeline"}])
    env = dict(nt.pass_env("openmpi", rules), OMPI_MCA_pml_monitoring_enable="2",
               OMPI_MCA_pml_monitoring_enable_output="1")
    big = run("openmpi", probe, "sum-bcast", 1000, env)  # 4000 bytes
    assert "ok" in big.stdout.split()
    assert _message_graph(big) == {(0, 1), (1, 2), (2, 3)}
    small = run("openmpi", probe, "sum-bcast", 999, env)  # 3996 bytes: Open MPI's default
    assert "ok" in small.stdout.split()
    assert _message_graph(small) == {(0, 1), (0, 2), (1, 3)}  # binomial tree


def test_mpich_json_selects_the_algorithm(probe, tmp_path):
    """reduce_scatter_block pairwise for 4 ranks and blocks >= 64 bytes, default below."""
    path = tmp_path / "mpich.json"
    assert nt.write_mpich_json(path, [{"coll": "reduce_scatter_block", "comm_size": N, "bytes_lo": 64,
                                       "alg": "pairwise"}]) == []
    env = nt.pass_env("mpich", path)
    forced = nt.force_env("mpich", "reduce_scatter_block", "pairwise")
    counts, inside = (8, 16, 64), (False, True, True)  # block = 4 * count bytes
    mode = "order-reduce_scatter_block"
    got = answers("mpich", probe, mode, counts, env)
    default = answers("mpich", probe, mode, counts)
    pairwise = answers("mpich", probe, mode, counts, forced)
    assert len(got) == len(default) == len(pairwise) == 3
    for g, d, p, ins in zip(got, default, pairwise, inside):
        assert g == (p if ins else d) and p != d
    assert answer("mpich", probe, mode, 16, env, n=3) == answer("mpich", probe, mode, 16, n=3)


def test_mpich_bcast_goes_through_the_flat_composition_to_the_algorithm(probe, tmp_path):
    """bcast is decided by ch4 first (node-aware compositions): the ch4 file routes the
    cell to the flat composition and the MPIR file picks the algorithm. MPICH's error
    stack of an (erroneous, truncating) bcast names the functions that ran."""
    path = tmp_path / "bcast.json"
    nt.write_mpich_json(path, [{"coll": "bcast", "comm_size": N, "bytes_lo": 1024,
                                "alg": "scatter_ring_allgather"}])
    env = nt.pass_env("mpich", path)
    with_file = run("mpich", probe, "truncated-bcast", 1000, env, check=False)
    out = with_file.stdout + with_file.stderr
    assert "MPIDI_Bcast_intra_composition_gamma" in out and "MPIR_Bcast_intra_scatter_ring_allgather" in out, out
    assert "MPIR_Bcast_intra_binomial" not in out
    default = run("mpich", probe, "truncated-bcast", 1000, check=False)
    out = default.stdout + default.stderr
    assert "MPIR_Bcast_intra_binomial" in out and "scatter_ring" not in out, out
    below = run("mpich", probe, "truncated-bcast", 200, env, check=False)  # 800 bytes
    out = below.stdout + below.stderr
    assert "MPIR_Bcast_intra_binomial" in out and "scatter_ring" not in out, out


def test_mpich_rejects_a_malformed_file(probe, tmp_path):
    """MPICH parses the file strictly: a syntax error or an unknown algorithm aborts."""
    good = tmp_path / "good.json"
    nt.write_mpich_json(good, [])
    assert answer("mpich", probe, "sum-allreduce", 8, nt.pass_env("mpich", good)) == "ok"
    text = good.read_text()
    for name, bad_text in (("syntax", text[: len(text) // 2]),
                           ("algorithm", text.replace("MPIR_Bcast_intra_binomial", "MPIR_Bcast_intra_psychic", 1))):
        assert bad_text != text
        bad = tmp_path / f"bad-{name}.json"
        bad.write_text(bad_text)
        env = dict(nt.pass_env("mpich", good), MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=str(bad))
        p = run("mpich", probe, "sum-allreduce", 8, env, check=False)
        assert p.returncode != 0 and "ok" not in p.stdout.split(), (name, p.stdout, p.stderr[-500:])


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_results_stay_exact_under_a_file(probe, tmp_path, mpi):
    """Non-default algorithms for bcast/reduce/allreduce/allgather/alltoall in some
    cells: every collective still computes exactly the expected values, in and out of
    the cells (sum-all checks all five)."""
    pick = {"openmpi": {"bcast": "scatter_allgather_ring", "reduce": "binary", "allreduce": "ring",
                        "allgather": "neighbor", "alltoall": "linear_sync"},
            "mpich": {"bcast": "scatter_ring_allgather", "reduce": "reduce_scatter_gather",
                      "allreduce": "reduce_scatter_allgather", "allgather": "ring", "alltoall": "scattered"}}[mpi]
    cells = [{"coll": c, "comm_size": N, "bytes_lo": 1024, "bytes_hi": 1 << 20, "alg": a} for c, a in pick.items()]
    path = tmp_path / ("t.json" if mpi == "mpich" else "t.rules")
    writer = nt.write_mpich_json if mpi == "mpich" else nt.write_openmpi_rules
    assert writer(path, cells) == []
    env = nt.pass_env(mpi, path)
    # 4000-byte vectors / blocks: in the cells; 12 bytes: not
    assert answer(mpi, probe, "sum-all", "1000,3", env) == "ok"


def test_mpich_accepts_every_algorithm_of_every_collective(probe, tmp_path):
    """One file with a cell for each algorithm MPICH can force (every guard and size test
    this module writes): MPICH parses it (a bad key would abort MPI_Init) and the
    collectives in the cells exercised (B = 40, 1200 and 4000 bytes) stay exact."""
    cells, notes_expected = [], 0
    for coll, algs in nt.native_algorithms("mpich").items():
        whole = nt.MPICH_SIZE_KEY[coll][1] == "full"
        for i, (value, _) in enumerate(algs):
            if whole:  # one whole-range cell per communicator size
                cells.append({"coll": coll, "comm_size": N + i, "bytes_lo": 0, "alg": value})
            else:
                cells.append({"coll": coll, "comm_size": N, "comm_size_hi": N + 1,
                              "bytes_lo": i * 1024, "bytes_hi": (i + 1) * 1024, "alg": value})
            notes_expected += (coll, value) == ("scan", "smp")
    path = tmp_path / "all.json"
    assert len(nt.write_mpich_json(path, cells)) == notes_expected
    assert answer("mpich", probe, "sum-all", "10,300,1000", nt.pass_env("mpich", path)) == "ok"


def test_openmpi_runs_every_algorithm_exactly_from_a_file(probe, tmp_path):
    """One rules file with algorithm i of each collective in [1024 i, 1024 (i+1)) bytes:
    launches hitting each range run every algorithm of bcast, reduce, allreduce,
    allgather and alltoall, all exact. two_proc (2 ranks only) is reported, not written."""
    cells, skipped = [], 0
    for coll, algs in nt.native_algorithms("openmpi").items():
        whole = nt.OMPI_SIZE_KIND[coll] == "full"
        for i, (num, name) in enumerate(algs):
            if whole:
                cells.append({"coll": coll, "comm_size": N + i, "bytes_lo": 0, "alg": num})
            else:
                cells.append({"coll": coll, "comm_size": N, "bytes_lo": i * 1024,
                              "bytes_hi": (i + 1) * 1024, "alg": num})
            skipped += name == "two_proc"
    path = tmp_path / "all.rules"
    notes = nt.write_openmpi_rules(path, cells)
    assert len(notes) == skipped >= 2 and all("two_proc" in n for n in notes)
    longest = max(len(nt.native_algorithms("openmpi")[c]) for c in ("bcast", "reduce", "allreduce",
                                                                   "allgather", "alltoall"))
    counts = ",".join(str((i * 1024 + 512) // 4) for i in range(longest))  # middle of range i
    assert answer("openmpi", probe, "sum-all", counts, nt.pass_env("openmpi", path)) == "ok"


# ---- the libraries from the Python package index: by their family's tuning interface ----------
@pytest.mark.parametrize("name", ["openmpi5", "mpich5"])
def test_new_libraries_list_their_own_algorithms(name):
    """Open MPI 5 answers through its own ompi_info, MPICH 5 through its own libmpi (not
    Debian's, which the name-based code used to ask): the lists are read from that prefix."""
    from caracal import mpilibs
    lib = mpilibs.get(name)
    if not lib.installed():
        pytest.skip(f"{lib.title} not installed (scripts/setup.sh {name})")
    algs = nt.native_algorithms(name)
    assert {"bcast", "allreduce", "reduce"} <= set(algs)
    if name == "mpich5":
        assert nt.find_libmpich(name).startswith(str(lib.prefix))
        assert nt.force_env(name, "bcast", "binomial") == {"MPIR_CVAR_BCAST_DEVICE_COLLECTIVE": "0",
                                                           "MPIR_CVAR_BCAST_INTRA_ALGORITHM": "binomial"}
        assert "collective=bcast" in nt.mpich_default_tree("mpir", nt.find_libmpich(name))
    else:
        assert nt.info_path(name).startswith(str(lib.prefix))
        ident = dict((n, i) for i, n in algs["bcast"])["binomial"]
        assert nt.force_env(name, "bcast", "binomial")["OMPI_MCA_coll_tuned_bcast_algorithm"] == str(ident)


def test_intel_mpi_tuning_is_refused_in_one_line():
    with pytest.raises(nt.NativeTuningError, match="not supported"):
        nt.native_algorithms("impi")
    with pytest.raises(nt.NativeTuningError, match="unknown MPI library"):
        nt.native_algorithms("lam")


def test_tune_names_the_native_file_by_family():
    from caracal.commands.tune import native_file_name
    assert [native_file_name(m) for m in ("openmpi", "openmpi5", "mpich", "mpich5", "impi")] == \
        ["native-openmpi.rules"] * 2 + ["native-mpich.json"] * 3
