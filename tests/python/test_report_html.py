"""The HTML reports come from the jinja2 templates in caracal/templates: every section of the
report is there with its values, what a document says is escaped, the plots are embedded,
and the templates ship as package data."""
import base64
import json
import re
from pathlib import Path

from markupsafe import escape

from caracal import __version__, report_html, report_tables
from conftest import ROOT

GOOD = ROOT / "tests" / "python" / "data" / "profile-4ranks.json"
TEMPLATES = ROOT / "python" / "caracal" / "templates"


def profile(**changes):
    d = json.loads(GOOD.read_text())
    d.update(changes)
    return d


def test_profile_report_has_every_section_and_value():
    d = profile(program="/opt/app/<script>alert(1)</script>", partial=True, missing_ranks=[3])
    rep = report_tables.build(d, "p.json")
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    html = report_html.render([(rep, {"time": png, "traffic": png})])
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert f"<title>{escape(rep.title)}</title>" in html
    for label, value in rep.facts:
        assert f"<tr><th>{label}</th><td>{escape(value)}</td></tr>" in html, label
    assert '<p class="warn">PARTIAL PROFILE: the job did not finish normally' in html
    for t in rep.tables:  # a heading, a link to it, and the table's own header row
        assert f'<h2 id="p0-{t.key}">{t.title}</h2>' in html
        assert f'<a href="#p0-{t.key}">{t.title}</a>' in html
        if t.rows:
            num = ' class="num"'
            head = "".join(f"<th{num if r else ''}>{c}</th>" for c, r in zip(t.columns, t.right))
            assert f"<thead><tr>{head}</tr></thead>" in html, t.key
    # one row of the per-rank table, cell by cell (numbers right-aligned)
    assert ('<tr><td class="num">3</td><td>node2</td><td class="num">2.15 s</td><td class="num">830 ms</td>'
            '<td class="num">38.6</td></tr>') in html
    imgs = re.findall(r'<img alt="([^"]+)" src="data:image/png;base64,([A-Za-z0-9+/=]+)">', html)
    assert [a for a, _ in imgs] == ["Time per rank", "Traffic matrix"]
    assert all(base64.b64decode(b) == png for _, b in imgs)
    assert f"Written by caracal report {__version__}." in html


def test_two_profiles_get_their_own_anchors():
    rep = report_tables.build(profile(), "p.json")
    html = report_html.render([(rep, {}), (rep, {})])
    assert "<title>Caracal profiles (2)</title>" in html
    assert html.count("<h1>") == 2 and 'id="p0-ranks"' in html and 'id="p1-ranks"' in html
    assert "<img" not in html


def test_probe_report_template():
    html = report_html.page("probe-report.html.j2", title="Caracal probe report", paths=["a&b.json"],
                            text="size  latency\n<1>  2.0", images={"probe-latency": b"xyz"})
    assert "<li>a&amp;b.json</li>" in html
    assert "<pre>size  latency\n&lt;1&gt;  2.0</pre>" in html
    assert f'src="data:image/png;base64,{base64.b64encode(b"xyz").decode()}"' in html


def test_templates_are_package_data():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"templates/*.j2"' in pyproject
    names = sorted(p.name for p in TEMPLATES.glob("*.j2"))
    assert names == ["advice.html.j2", "base.html.j2", "probe-report.html.j2", "profile-report.html.j2"]
    from importlib import resources
    for n in names:
        assert resources.files("caracal").joinpath("templates", n).read_text() == (TEMPLATES / n).read_text()
    assert Path(report_html.__file__).parent / "templates" == TEMPLATES
