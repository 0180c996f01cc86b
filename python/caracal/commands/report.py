"""caracal report: terminal tables, plots and an HTML report from profiles
(and, through caracal.probe_report, from probe and benchmark results)."""
import importlib
import os
import sys
from pathlib import Path

from ..errors import UsageError
from ..jsondoc import read_json, schema_of

NAME = "report"
HELP = "summarise a profile (caracal.profile/1): top call sites, MPI time per rank, traffic, plots, HTML"
DESCRIPTION = """\
Reads one or more JSON documents and reports on them. A profile
(caracal.profile/1, written by caracal run) gives mpiP-style tables: MPI time
per rank and per call, the top call sites by time and by bytes, message sizes,
collectives and their roots, and the busiest pairs of ranks. Probe and
benchmark results (caracal.probe/1, caracal.bench/1) are reported by the
probe report.

Examples:
  caracal report app.json
  caracal report app.json --plots plots/ --html app.html
"""

PROFILE = "caracal.profile/1"
PROBE_SCHEMAS = ("caracal.probe/1", "caracal.bench/1")


def add_arguments(p):
    p.add_argument("files", nargs="+", metavar="FILE.json",
                   help="profile (caracal.profile/1) or probe/bench results (caracal.probe/1, caracal.bench/1)")
    p.add_argument("--html", metavar="OUT.html", help="also write one self-contained HTML report")
    p.add_argument("--plots", metavar="DIR",
                   help="also write PNG plots (traffic heatmap, size histograms, time per rank) to DIR")
    p.add_argument("--top", type=int, default=10, metavar="N", help="call sites and rank pairs to list (default 10)")


def run(args):
    if args.top < 1:
        raise UsageError(f"--top must be at least 1, not {args.top}")
    profiles, others = [], []
    for path in args.files:
        merge_leftover_pieces(path)
        doc = read_json(path)
        schema = schema_of(path, doc)
        if schema == PROFILE:
            from ..profile import validate
            validate(doc, path)
            profiles.append((path, doc))
        elif schema in PROBE_SCHEMAS:
            others.append((path, doc))
        else:
            known = ", ".join((PROFILE,) + PROBE_SCHEMAS)
            raise UsageError(f"{path}: unknown schema \"{schema}\" (caracal report reads {known})")
    if profiles and others and args.html:
        raise UsageError("--html takes either profiles or probe/bench results; report them separately")
    plot_dir = _plot_dir(args.plots) if args.plots and profiles else None
    html_out = _html_path(args.html) if args.html and profiles else None
    if profiles:
        _report_profiles(profiles, args, plot_dir, html_out)
    if others:
        try:
            probe_report = importlib.import_module("caracal.probe_report")
        except ModuleNotFoundError as e:
            if e.name != "caracal.probe_report":
                raise
            raise UsageError(f"{others[0][0]}: reporting {others[0][1]['schema']} documents needs "
                             "caracal.probe_report, which this installation does not have") from None
        return probe_report.report(others, args) or 0
    return 0


def merge_leftover_pieces(path) -> None:
    """A job killed with its front end (a group kill, SIGKILL) leaves the ranks' pieces,
    PATH.rank<N>.json, and no PATH: merge them into PATH (partial) as `caracal run` would."""
    p = Path(path)
    if p.exists():
        return
    from ..partial import finish_profile, leftover_pieces
    n = len(leftover_pieces(p))
    if not n:
        return
    if not os.access(p.resolve().parent, os.W_OK | os.X_OK):
        raise UsageError(f"{path}: no such file, and its {n} per-rank pieces cannot be merged here "
                         f"(directory not writable)")
    if finish_profile(p) == "partial":
        print(f"caracal report: {path} did not exist; merged {n} per-rank piece{'s' if n != 1 else ''} "
              "left by an interrupted run into it (partial profile)", file=sys.stderr)


def _plot_dir(d) -> Path:
    p = Path(d)
    if p.exists() and not p.is_dir():
        raise UsageError(f"--plots {d}: exists and is not a directory")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--plots {d}: cannot create directory: {e.strerror or e}") from None
    return p


def _html_path(f) -> Path:
    p = Path(f)
    if p.is_dir():
        raise UsageError(f"--html {f}: is a directory")
    if not p.resolve().parent.is_dir():
        raise UsageError(f"--html {f}: directory {p.resolve().parent} does not exist")
    return p


def _report_profiles(profiles, args, plot_dir, html_out):
    from .. import report_tables, report_text
    reports = [report_tables.build(doc, path, args.top) for path, doc in profiles]
    for i, rep in enumerate(reports):
        if i:
            print()
        report_text.write(rep, sys.stdout)
    if not (plot_dir or html_out):
        return
    from .. import report_plots  # matplotlib is slow to import: only when plots are wanted
    rendered = [report_plots.render_all(doc) for _, doc in profiles]
    written = []
    if plot_dir:
        stems = _unique_stems([path for path, _ in profiles])
        for stem, plots in zip(stems, rendered):
            for name, png in plots.items():
                out = plot_dir / f"{stem}-{name}.png"
                _write(out, png, "--plots")
                written.append(out)
    if html_out:
        from .. import report_html
        _write(html_out, report_html.render(list(zip(reports, rendered))).encode("utf-8"), "--html")
        written.append(html_out)
    print(f"\nwrote {', '.join(map(str, written))}")


def _unique_stems(paths):
    """One file-name prefix per profile: its name without .json, numbered if two collide."""
    stems, seen = [], {}
    for p in paths:
        stem = Path(p).name
        stem = stem[:-5] if stem.endswith(".json") else stem
        n = seen.get(stem, 0)
        seen[stem] = n + 1
        stems.append(stem if n == 0 else f"{stem}-{n + 1}")
    return stems


def _write(path: Path, data: bytes, option: str):
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)  # a reader never sees half a file
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"{option}: cannot write {path}: {e.strerror or e}") from None
