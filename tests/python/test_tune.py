"""caracal tune on the real libraries: the rules it writes are read without a warning and
select, in a real run, exactly the algorithm its table says won; --resume, --budget and bad
input behave. (How fast anything is, is measured, not asserted: bench/results.)"""
import json

from conftest import BUILDS


def tune(cli, tmp_path, mpi, *extra, check=True):
    return cli("tune", "-n", "3", "--mpi", mpi, "--colls", "bcast,barrier", "--sizes", "8,64K", "--reps", "3",
               "--out", tmp_path / "t", *extra, check=check, timeout=600)


def test_tune_rules_select_the_measured_winner(cli, tmp_path, mpi):
    proc = tune(cli, tmp_path, mpi)
    out = tmp_path / "t"
    doc = json.loads((out / "tune.json").read_text())
    cells = {(r["coll"], r["ranks"], r["bytes"]) for r in doc["rows"]}
    assert cells == {("bcast", 3, 8), ("bcast", 3, 65536), ("barrier", 3, 0)}
    for r in doc["rows"]:  # every candidate was measured, the choice follows the rule stated
        assert "native" in r["all"] and len(r["all"]) >= 3
        # (a forced native algorithm beating both makes the cell native: native_alg)
        assert r["winner"] == ("native" if r.get("native_alg") else
                               r["best"] if r["best_us"] < r["native_us"] * 0.97 else "native")
    rules = out / "caracal-rules.conf"
    info = cli("info", "--algorithms", "--mpi", mpi, check=True, env={"CARACAL_RULES": str(rules)})
    assert "warning" not in info.stderr and f"rules file {rules}" in info.stdout
    # the 64 KiB bcast at 3 ranks runs what the table chose, on every rank
    win = next(r["winner"] for r in doc["rows"] if r["coll"] == "bcast" and r["bytes"] == 65536)
    exe = BUILDS[mpi] / "bin" / "test_rules_file"
    run = cli("run", "--tuned", out, "--no-profile", "-n", 3, "--mpi", mpi, "--env", "CARACAL_LOG=algo",
              "--env", "CARACAL_LOG_RANKS=all", exe, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = [ln for ln in (run.stdout + run.stderr).splitlines() if ": bcast " in ln]
    assert len(lines) == 9  # 3 calls x 3 ranks
    assert all(ln.split(": bcast ")[1].split()[0] == win for ln in lines), (win, lines)
    assert "wrote" in proc.stdout


def test_tune_resume_and_budget(cli, tmp_path):
    mpi = "openmpi"
    # without the native algorithm sweeps: two launches (bcast, barrier) to count
    tiny = tune(cli, tmp_path, mpi, "--budget", "0.01s", "--no-native-algorithms")
    assert "budget" in tiny.stdout and "--resume" in tiny.stdout
    state = json.loads((tmp_path / "t" / "tune-state.json").read_text())
    assert len(state["done"]) == 1  # the first launch always runs; the second did not fit
    again = tune(cli, tmp_path, mpi, "--no-native-algorithms", check=False)
    assert again.returncode == 2 and "--resume" in again.stderr
    resumed = tune(cli, tmp_path, mpi, "--resume", "--no-native-algorithms")
    assert "1 done before" in resumed.stdout
    state = json.loads((tmp_path / "t" / "tune-state.json").read_text())
    assert len(state["done"]) == 2
    other = cli("tune", "-n", "2", "--colls", "bcast,barrier", "--sizes", "8,64K", "--reps", "3",
                "--out", tmp_path / "t", "--resume")
    assert other.returncode == 2 and "other settings" in other.stderr


def test_tune_bad_input(cli, tmp_path):
    for args, msg in ((["--budget", "soon"], "--budget"), (["-n", "1"], "-n"), (["--sizes", "8,8"], "twice"),
                      (["--colls", "fastest"], "unknown collective"), (["--reps", "1"], "--reps")):
        p = cli("tune", "--out", tmp_path / "bad", *args)
        assert p.returncode == 2 and msg in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not (tmp_path / "bad" / "tune-state.json").exists()


def test_tune_verify_remeasures_every_cell(cli, tmp_path):
    mpi = "openmpi"
    missing = cli("tune", "--verify", "--out", tmp_path / "none")
    assert missing.returncode == 2 and "no finished tune run" in missing.stderr
    tune(cli, tmp_path, mpi, "--no-native-algorithms")
    out = tmp_path / "t"
    ver = cli("tune", "--verify", "--out", out, "--reps", "3", check=True, timeout=600)
    doc = json.loads((out / "verify.json").read_text())
    tuned = json.loads((out / "tune.json").read_text())
    # every tuned cell re-measured once, both sides timed, the ratio and the summary agree
    assert {(r["coll"], r["ranks"], r["bytes"]) for r in doc["rows"]} == \
        {(r["coll"], r["ranks"], r["bytes"]) for r in tuned["rows"]}
    for r in doc["rows"]:
        assert r["native_us"] > 0 and r["tuned_us"] > 0 and r["ratio"] > 0
        assert r["chosen"] == next(t["winner"] for t in tuned["rows"]
                                   if (t["coll"], t["ranks"], t["bytes"]) == (r["coll"], r["ranks"], r["bytes"]))
        # 3 repetitions are too few for a 95% interval: no bound, so no cell is called above
        assert r["ci_lo"] is None and r["vs_1"] == "tie"
    s = doc["summary"]
    assert s["cells"] == 3 and s["above_1"] == 0 and s["below_1"] + s["tie_1"] == 3
    assert "3 of 3 cells not above 1.00x" in ver.stdout and (out / "verify.md").exists()
    assert "only when its whole interval lies above 1.00" in (out / "verify.md").read_text()


def test_verify_intervals_from_first_principles():
    """The sign-test interval of a median: n = 21 at 95% takes order statistics 6 and 16
    (P(Binomial(21, 1/2) <= 5) = 0.0133 <= 0.025 < P(<= 6) = 0.0392); n = 5 has none.
    A cell is above a limit only when its whole interval is."""
    from caracal.commands.tune import median_ci, paired_ratio, verdict
    med, lo, hi = median_ci(list(range(1, 22)))
    assert (med, lo, hi) == (11, 6, 16)
    assert median_ci([1, 2, 3, 4, 5]) == (3, None, None)
    ratio, lo, hi = paired_ratio([2.0 * x for x in range(1, 22)], [float(x) for x in range(1, 22)])
    assert ratio == 2.0 and lo == 2.0 and hi == 2.0 and verdict(lo, hi, 1.05) == "above"
    assert verdict(0.97, 1.02, 1.0) == "tie" and verdict(0.9, 0.99, 1.0) == "below" and verdict(None, None, 1) == "tie"


def test_sizeless_families_get_one_rule_per_rank_count():
    """gatherv/scatterv/alltoallv: Caracal's selection sees 0 bytes for every call of theirs, so
    tune must not write byte ranges for them: one choice per rank count, never much worse than
    native at any size (a real bug: alltoallv's 0-byte winner ran at every size)."""
    from caracal.commands.tune import one_rule_per_size, rules_text

    def row(coll, n, b, native, **cands):
        return {"coll": coll, "ranks": n, "bytes": b, "winner": "native", "native_alg": None,
                "all": {"native": native, **cands}}
    rows = [row("alltoallv", 4, 0, 1.0, pairwise=0.1, hier=0.9),      # pairwise wins big at 0 B...
            row("alltoallv", 4, 64, 1.0, pairwise=2.0, hier=0.8),     # ...and loses 2x at 64 B
            row("alltoallv", 4, 4096, 1.0, pairwise=0.5, hier=0.9),
            row("gatherv", 2, 0, 1.0, linear=1.2), row("gatherv", 2, 8, 1.0, linear=0.5)]
    one_rule_per_size(rows)
    assert {r["winner"] for r in rows if r["coll"] == "alltoallv"} == {"hier"}  # never above 1.05x
    assert {r["winner"] for r in rows if r["coll"] == "gatherv"} == {"native"}  # linear is 1.2x at 0 B
    text = rules_text(rows, {"machine": {}, "config": {"mpi": "openmpi", "np": [2, 4], "sizes": [0]}})
    assert "alltoallv = hier#4" in text and "gatherv = native#2" in text and "@" not in text


def test_rect_is_not_a_tune_candidate(monkeypatch):
    """rect runs only on periodic Cartesian communicators; tune measures MPI_COMM_WORLD, where a
    `rect` rule passes to the next one: a "rect" cell would time that rule under rect's name."""
    from caracal.commands import tune as tune_cmd

    algs = [{"name": n, "scope": "comm"} for n in ("knomial", "rect", "shm")]
    doc = {"families": [{"name": "bcast", "native_only": False, "algorithms": algs}]}
    monkeypatch.setattr(tune_cmd.info_cmd, "_run_info", lambda mpi, *a: doc)
    cands, skipped = tune_cmd.candidates("openmpi", "bcast", 4, None)
    assert "rect" not in cands["bcast"] and "shm" in cands["bcast"] and cands["bcast"][0] == "native"
    assert any(c.startswith("knomial") for c in cands["bcast"]) and not skipped


def test_every_launch_has_its_own_candidate_order(monkeypatch):
    """caracal-tune-bench shuffles the candidates from --seed (default 1): with one seed for every
    launch, each launch of a collective repeated the same orders, and a candidate that followed a
    slow one did so in every launch. run_launch gives each launch a seed of its own."""
    import subprocess
    from types import SimpleNamespace
    from caracal.commands import tune as tune_cmd

    argvs = []

    def fake_run(cmd, **kw):  # records the launch's command line, prints one cell
        argvs.append(cmd)
        return SimpleNamespace(returncode=0, stderr="", stdout='{"schema": "caracal.tune-cell/1"}\n')
    monkeypatch.setattr(subprocess, "run", fake_run)
    args = SimpleNamespace(mpi="openmpi", size_list=[8], reps=3, timeout=10, pattern=None, testbed=None)
    for _ in range(3):
        tune_cmd.run_launch(args, 2, "bcast", ["native", "shm"], {})
    seeds = [cmd[cmd.index("--seed") + 1] for cmd in argvs]
    assert len(set(seeds)) == 3 and all(s.isdigit() for s in seeds)
