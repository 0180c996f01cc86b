"""A document that breaks its JSON Schema (schemas/*.json, checked by jsonschema) is one line
on stderr and exit 2 from the command that reads it, naming the place and what is wrong:
profiles (caracal report), topologies (caracal nodemap --check) and probe results (caracal
report), with values that would break a line (a newline in a key) escaped."""
import json

import pytest

from conftest import ROOT

PROFILE = json.loads((ROOT / "tests" / "python" / "data" / "profile-4ranks.json").read_text())
# two ranks on one node, 1 us apart: the smallest topology libcaracal accepts
TOPOLOGY = {"schema": "caracal.topology/1", "source": "static", "nranks": 2,
            "levels": [{"name": "node", "source": "static", "group": [0, 0]}],
            "pairs_measured": 0, "pairs_estimated": 1, "L": [[0, 1e-6], [1e-6, 0]]}


def one_line_error(cli, tmp_path, doc, *cmd):
    f = tmp_path / "doc.json"
    f.write_text(json.dumps(doc))
    p = cli(*cmd, f)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    return lines[0]


def changed(doc, edit):
    d = json.loads(json.dumps(doc))
    edit(d)
    return d


def test_the_unbroken_documents_pass(cli, tmp_path):
    for name, doc, cmd in (("p.json", PROFILE, ("report",)), ("t.json", TOPOLOGY, ("nodemap", "--check"))):
        f = tmp_path / name
        f.write_text(json.dumps(doc))
        p = cli(*cmd, f)
        assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["ranks"][1].update(time_mpi="x"), "invalid profile: ranks[1].time_mpi: expected a number, got 'x'"),
    (lambda d: d.update(nranks=0), "invalid profile: nranks: must be at least 1, got 0"),
    (lambda d: d.update(nranks=2.0), "invalid profile: nranks: expected an integer, got 2.0"),
    (lambda d: d["calls"][0].pop("histogram"), 'invalid profile: calls[0]: missing key "histogram"'),
    (lambda d: d["ranks"][0]["comm_sizes"].update({"a\nb": 1}),
     'invalid profile: ranks[0].comm_sizes: unexpected key "a\\nb"'),
    (lambda d: d.update(partial="no"), "invalid profile: partial: expected true or false, got 'no'"),
])
def test_profile_against_its_schema(cli, tmp_path, edit, message):
    line = one_line_error(cli, tmp_path, changed(PROFILE, edit), "report")
    assert line.endswith(message), line
    assert line.startswith("caracal report: ")


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(nranks="2"), "invalid topology: nranks: expected an integer, got '2'"),
    (lambda d: d["levels"][0].update(name=""), "invalid topology: levels[0].name: must not be empty"),
    (lambda d: d["levels"][0].update(threshold=0), "invalid topology: levels[0].threshold: must be more than 0, got 0"),
    (lambda d: d["levels"][0].update(source="guess"),
     "invalid topology: levels[0].source: expected one of 'hwloc', 'shared-memory', 'latency', 'static', got 'guess'"),
    (lambda d: d.update(levels=[]), "invalid topology: levels: needs at least 1 entries, has 0"),
    (lambda d: d["L"][1].__setitem__(0, -1), "invalid topology: L[1][0]: must be at least 0, got -1"),
    (lambda d: d.pop("pairs_measured"), 'invalid topology: top level: missing key "pairs_measured"'),
])
def test_topology_against_its_schema(cli, tmp_path, edit, message):
    line = one_line_error(cli, tmp_path, changed(TOPOLOGY, edit), "nodemap", "--check")
    assert line.endswith(message), line


@pytest.fixture(scope="module")
def probe_doc(tmp_path_factory):
    from conftest import run_cli
    out = tmp_path_factory.mktemp("probe") / "p.json"
    run_cli("probe", "--mpi", "openmpi", "--max", "64", "--budget", "0.002", "--trials", "1", "--min-reps", "2",
            "--per-octave", "1", "--json", out, check=True)
    return json.loads(out.read_text())


def test_probe_result_against_its_schema(cli, tmp_path, probe_doc):
    f = tmp_path / "ok.json"
    f.write_text(json.dumps(probe_doc))
    assert cli("report", f).returncode == 0
    cases = [
        (lambda d: d["points"][0].pop("latency_us"), 'points[0]: missing key "latency_us"'),
        (lambda d: d.update(mode="teleport"), "mode: expected one of"),
        (lambda d: d.update(ranks="two"), "ranks: expected an integer, got 'two'"),
        (lambda d: d.update(extra_field=1), 'unexpected key "extra_field"'),
    ]
    for edit, message in cases:
        line = one_line_error(cli, tmp_path, changed(probe_doc, edit), "report")
        assert "not a valid caracal.probe/1 document: " in line and message in line, line
