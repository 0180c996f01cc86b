"""bench/simulate/scaling.py --report: a table's Caracal cell measured with rules that choose
otherwise than scaling.py's CARACAL_ENV takes the number of a later supplementary run of the
current choice (marked, the replaced number in the note), never one of another choice or of other
SMPI options; the Goals table counts what the cells show. Fake results JSONs in tmp_path; the
expected cells are the runs' numbers, the speedups best flat / Caracal worked out here."""
import json
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench" / "simulate"))
import scaling  # noqa: E402

THRESH = "smpi/send-is-detached-thresh:0"
NATIVE = list(scaling.CARACAL_NATIVE_CFG)
# session 17's bcast rule: the leaders' radix-8 k-nomial for 1-64 KiB, a binomial tree from 64 KiB
OLD = {"CARACAL_BARRIER": scaling.CARACAL_ENV["CARACAL_BARRIER"],
       "CARACAL_BCAST": "node/knomial:32 top/knomial:32@-1k top/knomial:8@1k-64k knomial",
       "CARACAL_ALLREDUCE": scaling.CARACAL_ENV["CARACAL_ALLREDUCE"]}
NOW = {"CARACAL_BCAST": scaling.CARACAL_ENV["CARACAL_BCAST"]}
K8 = {"CARACAL_BCAST": "node/knomial:32 top/knomial:8 knomial"}  # another choice at every size


def run(ranks, mapping, variant, us, env=None, cfg=()):
    r = {"ranks": ranks, "mapping": mapping, "variant": variant, "us": us, "wall_s": 1.0, "cpu_s": 1.0,
         "peak_rss_mb": 1, "peak_pss_mb": 1, "cfg": list(cfg) + (NATIVE if env else []), "load": 1.0,
         "simulated_s": 0.01}
    if env:
        r["caracal_env"] = env
    if cfg:
        r["cfg_asked"] = list(cfg)
    return r


def doc(runs):
    return {"schema": "caracal.bench-simulate-scaling/1", "platform": "cluster", "ppn": 32,
            "caracal_env": OLD, "runs": runs}


@pytest.fixture
def results(tmp_path):
    """The table's JSON (session 17's rules) and one later file of bcast-only runs."""
    main = doc([
        run(16384, "roundrobin", "caracal", {"bcast 8": 8.9, "bcast 4096": 30.0, "bcast 4194304": 16475.0},
            OLD, [THRESH]),
        run(16384, "roundrobin", "ompi", {"bcast 8": 22.4, "bcast 4096": 216.2, "bcast 4194304": 1436.7},
            cfg=[THRESH]),
        run(1024, "roundrobin", "caracal", {"bcast 4096": 15.6}, OLD),
        run(1024, "roundrobin", "ompi", {"bcast 4096": 215.9}),
    ])
    later = doc([
        # the current rule's choice for 4 KiB at 512 leaders (scatter_allgather:32): merged
        run(16384, "roundrobin", "caracal", {"bcast 4096": 19.041}, NOW, [THRESH]),
        # another choice for 4 MiB: not merged, whatever its number
        run(16384, "roundrobin", "caracal-k8", {"bcast 4194304": 900.0}, K8, [THRESH]),
        # the current choice with another SMPI option than the detached threshold: not merged
        run(16384, "roundrobin", "caracal-ov", {"bcast 4194304": 800.0}, NOW,
            [THRESH, "smpi/os:0:3e-7:0"]),
        # the current choice, without detached sends where the table's run has them: merged, said
        run(1024, "roundrobin", "caracal", {"bcast 4096": 9.798}, NOW, [THRESH]),
    ])
    (tmp_path / "main.json").write_text(json.dumps(main))
    (tmp_path / "later.json").write_text(json.dumps(later))
    return tmp_path


def report(path, *supplement):
    cmd = [sys.executable, str(ROOT / "bench" / "simulate" / "scaling.py"), "--report",
           "--json", str(path / "main.json")] + [a for s in supplement for a in ("--supplement", s)]
    p = subprocess.run(cmd, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT / "python"),
                                                                "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg"})
    assert p.returncode == 0, p.stderr
    return (path / "main.md").read_text()


def table(md, title):
    """{case: row cells} of one '## title' table."""
    part = md.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    rows = [ln.strip("|").split(" | ") for ln in part.splitlines() if ln.startswith("| ") and "---" not in ln]
    return {r[0].strip(): [x.strip() for x in r[1:]] for r in rows[1:]}, part


def test_later_run_of_the_current_rule_replaces_the_cell_with_a_note(results):
    md = report(results, "later.json:42")
    rows, part = table(md, "16384 ranks, roundrobin mapping")
    # 4 KiB: the later run's 19.041 us, marked; speedup 216.2 / 19.041 = 11.35x
    assert rows["bcast 4096"][0] == "19.0 [1]" and rows["bcast 4096"][-1] == f"{216.2 / 19.041:.2f}x" == "11.35x"
    assert ("[1] 19.0: later.json, session 42 (run caracal: node knomial:32, top scatter_allgather:32, "
            "as scaling.py's rules choose); replaces 30.0 (main.json: node knomial:32, top knomial:8).") in part
    # 8 B: the table's own run already chose what the current rule chooses: unmarked
    assert rows["bcast 8"][0] == "8.9"
    # 4 MiB: neither the other choice's 900 nor the other options' 800; the table's number, stale
    assert rows["bcast 4194304"][0] == "16475.0 [2]\u2020" and rows["bcast 4194304"][-1] == "0.09x"
    assert "[2] \u2020 older rules: the table's run (main.json) chose node knomial:32, top knomial:2" in part
    assert "900.0" not in md and "800.0" not in md
    # 1,024: merged, and the SMPI options that differ from the table's run are said
    rows, part = table(md, "1024 ranks, roundrobin mapping")
    assert rows["bcast 4096"][0] == "9.8 [1]" and rows["bcast 4096"][-1] == f"{215.9 / 9.798:.2f}x"
    assert f"; SMPI options {THRESH}, the table's run none." in part


def test_goals_count_the_cells_shown_and_leave_stale_ones_out(results):
    md = report(results, "later.json:42")
    goals = [ln for ln in md.split("## Goals\n", 1)[1].splitlines() if ln.startswith("| 16384 | roundrobin")]
    # counted: bcast 8 (22.4 / 8.9 = 2.52x) and 4 KiB (11.35x); 4 MiB (0.09x, older rules) listed apart
    assert goals == [f"| 16384 | roundrobin (goal 1.5x) | ompi | 2 | {22.4 / 8.9:.2f}x | none | "
                     f"bcast 4194304 {1436.7 / 16475.0:.2f}x |"]


def test_without_supplements_the_tables_own_numbers_stand(results):
    (results / "none.json").write_text(json.dumps(doc([])))
    md = report(results, "none.json:1")
    rows, _ = table(md, "16384 ranks, roundrobin mapping")
    assert rows["bcast 4096"][0] == "30.0 [1]\u2020" and rows["bcast 4096"][-1] == "7.21x"


@pytest.mark.parametrize("name,text", [("missing.json", None), ("broken.json", "{")])
def test_a_bad_supplement_is_one_line_and_exit_2(results, name, text):
    if text is not None:
        (results / name).write_text(text)
    cmd = [sys.executable, str(ROOT / "bench" / "simulate" / "scaling.py"), "--report",
           "--json", str(results / "main.json"), "--supplement", name]
    p = subprocess.run(cmd, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT / "python"),
                                                                "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg"})
    assert p.returncode == 2 and p.stderr.startswith(f"scaling.py: --supplement {results / name}: ")
    assert len(p.stderr.strip().splitlines()) == 1 and not (results / "main.md").exists()


def test_rule_choice_reads_the_radix_each_level_really_runs():
    env = scaling.CARACAL_ENV
    # 8 leaders: scatter_allgather:8 runs the rounds of :32 (bcast_scatter_allgather.c: k > n runs as n)
    tsag8 = {"CARACAL_BCAST": "node/knomial:32 top/knomial:32@-1k top/knomial:8@1k-64k "
                              "top/scatter_allgather:8@64k- knomial"}
    assert scaling.rule_choice(tsag8, "bcast 4194304", 256, 32) == scaling.rule_choice(env, "bcast 4194304", 256, 32)
    assert scaling.rule_choice(tsag8, "bcast 4194304", 1024, 32) != scaling.rule_choice(env, "bcast 4194304", 1024, 32)
    # `#16-`: below 16 leaders the 4 KiB bcast is the radix-8 k-nomial, session 17's choice
    assert scaling.rule_choice(OLD, "bcast 4096", 256, 32) == scaling.rule_choice(env, "bcast 4096", 256, 32)
    assert scaling.rule_choice(OLD, "bcast 4096", 512, 32) != scaling.rule_choice(env, "bcast 4096", 512, 32)
    # a setting (e.g. one chunk) makes another schedule
    assert scaling.rule_choice(dict(NOW, CARACAL_PIPELINE_SIZE="64m"), "bcast 4194304", 1024, 32) != \
        scaling.rule_choice(NOW, "bcast 4194304", 1024, 32)
