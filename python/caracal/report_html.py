"""The profile report as one self-contained HTML file: the tables, and the
plots embedded as base64 PNG. Nothing is fetched from the network."""
import base64
import html

from . import __version__
from .report_tables import Report, Table

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; border-bottom: 2px solid #ddd; padding-bottom: .3em; }
h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0; font-size: .9em; }
th, td { padding: .25em .7em; border-bottom: 1px solid #e4e4e4; text-align: left; white-space: nowrap; }
th { background: #f5f5f5; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
table.facts th { background: none; font-weight: 600; }
table.facts td { white-space: normal; }
p.note { color: #666; font-size: .85em; margin: .2em 0 1em; }
p.warn { background: #fff3cd; border: 1px solid #e0c36c; padding: .6em; }
figure { margin: 1em 0; }
figure img { max-width: 100%; border: 1px solid #eee; }
nav a { margin-right: 1em; }
footer { margin-top: 3em; color: #888; font-size: .8em; }
"""

PLOT_TITLES = {"time": "Time per rank", "traffic": "Traffic matrix", "sizes": "Message sizes"}


def render(reports) -> str:
    """reports: list of (Report, {plot name: PNG bytes})."""
    e = html.escape
    title = reports[0][0].title if len(reports) == 1 else f"Caracal profiles ({len(reports)})"
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{e(title)}</title><style>{CSS}</style></head><body>"]
    for i, (rep, plots) in enumerate(reports):
        out += _one(rep, plots, f"p{i}")
    out.append(f"<footer>Written by caracal report {e(__version__)}.</footer></body></html>")
    return "\n".join(out) + "\n"


def _one(rep: Report, plots: dict, prefix: str) -> list:
    e = html.escape
    out = [f"<h1>{e(rep.title)}</h1>", '<table class="facts">']
    out += [f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in rep.facts]
    out.append("</table>")
    out += [f'<p class="warn">{e(w)}</p>' for w in rep.warnings]
    links = [f'<a href="#{prefix}-{t.key}">{e(t.title)}</a>' for t in rep.tables]
    links += [f'<a href="#{prefix}-plot-{name}">{e(PLOT_TITLES.get(name, name))}</a>' for name in plots]
    out.append("<nav>" + " ".join(links) + "</nav>")
    for t in rep.tables:
        out += _table(t, prefix)
    for name, png in plots.items():
        data = base64.b64encode(png).decode("ascii")
        label = PLOT_TITLES.get(name, name)
        out.append(f'<h2 id="{prefix}-plot-{e(name)}">{e(label)}</h2>')
        out.append(f'<figure><img alt="{e(label)}" src="data:image/png;base64,{data}"></figure>')
    return out


def _table(t: Table, prefix: str) -> list:
    e = html.escape
    out = [f'<h2 id="{prefix}-{e(t.key)}">{e(t.title)}</h2>']
    if not t.rows:
        out.append("<p>(none)</p>")
    else:
        def cells(tag, row):
            return "".join(f'<{tag}{" class=num" if r else ""}>{e(str(c))}</{tag}>' for c, r in zip(row, t.right))

        out.append("<table><thead><tr>" + cells("th", t.columns) + "</tr></thead><tbody>")
        out += ["<tr>" + cells("td", r) + "</tr>" for r in t.rows]
        out.append("</tbody></table>")
    if t.note:
        out.append(f'<p class="note">{e(t.note)}</p>')
    return out
