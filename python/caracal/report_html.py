"""The HTML reports of `caracal report --html`, from the jinja2 templates in
caracal/templates (package data): profiles (profile-report.html.j2, the tables of
report_tables and the plots) and probe / bench results (probe-report.html.j2). Each is one
self-contained file: the plots are embedded as base64 PNG, nothing is fetched from the
network, and every value from a document is HTML-escaped (autoescape)."""
import base64
from functools import lru_cache

from . import __version__

PLOT_TITLES = {"time": "Time per rank", "traffic": "Traffic matrix", "sizes": "Message sizes"}


@lru_cache(maxsize=None)
def _environment():
    import jinja2
    env = jinja2.Environment(loader=jinja2.PackageLoader("caracal", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["b64"] = lambda data: base64.b64encode(data).decode("ascii")
    return env


def page(template: str, **values) -> str:
    """The template filled in; ``title`` and the version are the base template's."""
    return _environment().get_template(template).render(version=__version__, **values)


def render(reports) -> str:
    """The profile report; reports: list of (report_tables.Report, {plot name: PNG bytes})."""
    title = reports[0][0].title if len(reports) == 1 else f"Caracal profiles ({len(reports)})"
    return page("profile-report.html.j2", title=title, reports=reports, plot_titles=PLOT_TITLES)
