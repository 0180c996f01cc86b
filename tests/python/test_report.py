"""caracal report on profiles: tables, plots, HTML; every kind of bad input is one line and exit 2."""
import base64
import copy
import json
import re
from pathlib import Path

import pytest

from conftest import BUILDS, ROOT

DATA = Path(__file__).resolve().parent / "data"
GOOD = DATA / "profile-4ranks.json"


def doc():
    return json.loads(GOOD.read_text())


def write(tmp_path, d, name="p.json"):
    p = tmp_path / name
    p.write_text(json.dumps(d))
    return p


def test_text_report_lists_call_sites_and_ranks(cli):
    p = cli("report", GOOD, check=True)
    out = p.stdout
    assert "Open MPI v4.1.4" in out and "4 on 2 host(s)" in out
    assert "examples/asp.c:151" in out and "src/halo/exchange.c:120" in out
    assert "libsolver.so+0x7f3a" in out  # no debug info: module+offset
    # rank 3: 0.83 s of 2.15 s in MPI
    assert re.search(r"^\s+3\s+node2\s+2\.15 s\s+830 ms\s+38\.6$", out, re.M)
    # the broadcast root moves through all four ranks
    assert "0:512 1:512 2:512 3:512" in out
    assert "PARTIAL" not in out
    assert p.stderr == ""


def test_top_limits_call_sites(cli):
    out = cli("report", GOOD, "--top", "2", check=True).stdout
    assert "2 of 9 call sites" in out
    assert "examples/asp.c:187" not in out.split("Top call sites by bytes")[0]


def test_partial_profile_is_flagged(cli, tmp_path):
    d = doc()
    d["partial"] = True
    d["missing_ranks"] = [2]
    d["ranks"] = [r for r in d["ranks"] if r["rank"] != 2]
    d["ranks"][0]["partial"] = True
    out = cli("report", write(tmp_path, d), check=True).stdout
    assert "PARTIAL PROFILE" in out and "no data at all from ranks 2" in out
    assert re.search(r"^\s+2\s+\(no data\)", out, re.M)


def test_plots_are_readable_pngs(cli, tmp_path):
    import matplotlib.image as mpimg
    out = tmp_path / "plots" / "deeper"
    mine = tmp_path / "plots" / "keep.txt"
    cli("report", GOOD, "--plots", out, check=True)
    pngs = sorted(out.glob("*.png"))
    assert [p.name for p in pngs] == ["profile-4ranks-sizes.png", "profile-4ranks-time.png",
                                      "profile-4ranks-traffic.png"]
    for png in pngs:
        img = mpimg.imread(png)
        assert img.shape[0] > 100 and img.shape[1] > 100
        assert img.std() > 0.01  # not a blank canvas
    assert not mine.exists()


def test_html_is_self_contained(cli, tmp_path):
    out = tmp_path / "r.html"
    cli("report", GOOD, "--html", out, check=True)
    html = out.read_text()
    for site in ("examples/asp.c:151", "src/halo/exchange.c:124", "src/halo/solver.c:77"):
        assert f"<td>{site}</td>" in html
    imgs = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(imgs) == 3
    assert all(base64.b64decode(i).startswith(b"\x89PNG") for i in imgs)
    assert not re.search(r'(src|href)="(https?:)?//', html)  # nothing fetched from the network


def test_many_ranks_and_one_rank(cli, tmp_path):
    for n in (1, 64):
        d = doc()
        d["nranks"] = n
        d["ranks"] = [dict(d["ranks"][0], rank=r) for r in range(n)]
        d["traffic"] = {"messages": [[1 if (r + 1) % n == c else 0 for c in range(n)] for r in range(n)],
                        "bytes": [[8 if (r + 1) % n == c else 0 for c in range(n)] for r in range(n)]}
        for s in d["callsites"]:
            s["per_rank"] = {k: [v[0]] * n for k, v in s["per_rank"].items()}
        for c in d["collectives"]:
            c["comm_size"] = n
            c["roots"] = {"0": c["count"]} if c["roots"] else {}
        p = cli("report", write(tmp_path, d, f"n{n}.json"), "--plots", tmp_path / "plots", check=True)
        assert f"{n} on 1 host(s)" in p.stdout
        assert (tmp_path / "plots" / f"n{n}-traffic.png").stat().st_size > 0


def one_line_exit_2(p, *needles):
    assert p.returncode == 2, p.stdout + p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("caracal report: ")
    for n in needles:
        assert n in lines[0], lines[0]


def test_missing_file(cli, tmp_path):
    one_line_exit_2(cli("report", tmp_path / "nope.json"), "no such file")


def test_truncated_json(cli, tmp_path):
    p = tmp_path / "t.json"
    p.write_text(GOOD.read_text()[:3000])
    one_line_exit_2(cli("report", p), "truncated")


def test_corrupt_json(cli, tmp_path):
    p = tmp_path / "c.json"
    text = GOOD.read_text()
    p.write_text(text[:2000] + "}}garbage{" + text[2000:])
    one_line_exit_2(cli("report", p), "corrupt JSON at line")


@pytest.mark.parametrize("content", [b"", b"\xff\xfe\x00binary", b"[1, 2]", b'{"nothing": 1}'])
def test_not_a_document(cli, tmp_path, content):
    p = tmp_path / "x.json"
    p.write_bytes(content)
    one_line_exit_2(cli("report", p), str(p))


def test_unknown_schema(cli, tmp_path):
    d = doc()
    d["schema"] = "caracal.recipe/1"
    one_line_exit_2(cli("report", write(tmp_path, d)), 'unknown schema "caracal.recipe/1"')


def test_probe_documents_go_to_probe_report(cli, tmp_path):
    p = cli("report", write(tmp_path, {"schema": "caracal.probe/1"}))
    try:
        import caracal.probe_report  # noqa: F401
    except ModuleNotFoundError:
        one_line_exit_2(p, "caracal.probe_report")
    else:
        assert "unknown schema" not in p.stderr


def _drop(d, *path):
    for k in path[:-1]:
        d = d[k]
    del d[path[-1]]


BROKEN = {
    "missing top-level key": (lambda d: _drop(d, "traffic"), 'missing key "traffic"'),
    "missing rank key": (lambda d: _drop(d, "ranks", 1, "time_mpi"), 'ranks[1]: missing key "time_mpi"'),
    "wrong type": (lambda d: d["calls"][0].update(count="many"), "calls[0].count: expected an integer"),
    "negative time": (lambda d: d["ranks"][0].update(time_total=-1), "ranks[0].time_total: must be at least 0"),
    "matrix rows": (lambda d: d["traffic"]["bytes"].pop(), "traffic.bytes: has 3 rows"),
    "matrix columns": (lambda d: d["traffic"]["messages"][2].append(0), "traffic.messages[2]: has 5 columns"),
    "ranks count": (lambda d: d["ranks"].pop(), "ranks: has 3 entries for nranks = 4"),
    "rank order": (lambda d: d["ranks"].reverse(), "ranks[0].rank: expected 0"),
    "per_rank length": (lambda d: d["callsites"][2]["per_rank"]["time"].pop(), "callsites[2].per_rank.time"),
    "root out of range": (lambda d: d["collectives"][0]["roots"].update({"7": 1}), "root 7 is not below"),
    "histogram bin": (lambda d: d["calls"][0]["histogram"].append([3, 1]), "calls[0].histogram[1]"),
    "wrong schema version": (lambda d: d.update(schema="caracal.profile/2"), "caracal.profile/2"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_invalid_profile(cli, tmp_path, case):
    d = doc()
    change, needle = BROKEN[case]
    change(d)
    one_line_exit_2(cli("report", write(tmp_path, d)), needle)


def test_load_profile_accepts_the_example_and_rejects_damage(tmp_path):
    from caracal.errors import UsageError
    from caracal.profile import load_profile
    assert load_profile(GOOD)["nranks"] == 4
    d = doc()
    d["nranks"] = 0
    with pytest.raises(UsageError, match="nranks: must be at least 1"):
        load_profile(write(tmp_path, d))


def test_schema_file_matches_the_documented_keys():
    """Every key of the example in docs/profile-format.md is in the JSON Schema and vice versa."""
    from caracal.profile import json_schema
    s = json_schema()
    text = (ROOT / "docs" / "profile-format.md").read_text()
    documented = set(re.findall(r'"([a-z_]+)":', text))
    assert set(s["required"]) <= documented
    assert set(s["properties"]) == set(s["required"])


def test_report_on_a_real_profile(cli, tmp_path, mpi):
    """The profiler's document for examples/asp at 2 ranks passes validation and renders."""
    asp = BUILDS[mpi] / "bin" / "asp"
    if not asp.exists():
        pytest.fail("build/bin/asp is not built: run make test")
    out = tmp_path / "asp.json"
    run = cli("run", "-n", "2", "--mpi", mpi, "--profile", out, "--", asp, "64", timeout=300)
    assert run.returncode == 0, run.stderr
    assert out.exists(), "caracal run wrote no profile"
    p = cli("report", out, "--plots", tmp_path / "plots", "--html", tmp_path / "r.html", check=True)
    assert "MPI_Bcast" in p.stdout and "asp" in p.stdout
    assert (tmp_path / "r.html").stat().st_size > 0
