"""The profile report for the terminal: rich tables on a terminal, plain aligned text
(mpiP style) everywhere else, so pipes, logs and the tests that read the output get the
same columns whatever rich would make of them."""
from .progress import decorated
from .report_tables import Report, Table


def write(rep: Report, stream) -> None:
    """The report onto ``stream``: drawn by rich if it is a terminal, else render(rep)."""
    if not decorated(stream):
        stream.write(render(rep))
        return
    from rich.console import Console
    console = Console(file=stream)
    report = rich_report(rep)
    # a table wider than the terminal runs off its edge, as the plain one does, rather than
    # having rich cut its cells short
    wide = console.options.update_width(1 << 16)
    need = max(console.measure(part, options=wide).maximum for part in report.renderables[2:] or [""])
    if need > console.width:
        console = Console(file=stream, width=need)
    console.print(report)


def rich_report(rep: Report):
    """The report as one rich renderable (title, facts, warnings, tables)."""
    from rich import box
    from rich.console import Group
    from rich.table import Table as RichTable
    from rich.text import Text
    parts = [Text(rep.title, style="bold")]
    facts = RichTable(box=None, show_header=False, pad_edge=False)
    facts.add_column(style="bold")
    facts.add_column()
    for k, v in rep.facts:
        facts.add_row(Text(k), Text(v))
    parts.append(facts)
    parts += [Text(f"!! {w}", style="bold yellow") for w in rep.warnings]
    for t in rep.tables:
        table = RichTable(title=Text(t.title, style="bold"), title_justify="left", box=box.SIMPLE_HEAD,
                          caption=Text(t.note) if t.note else None, caption_justify="left")
        for col, right in zip(t.columns, t.right):
            table.add_column(Text(col), justify="right" if right else "left", no_wrap=True)
        for row in t.rows:
            table.add_row(*(Text(str(c)) for c in row))
        parts.append(table if t.rows else Group(Text(t.title, style="bold"), Text("(none)")))
    return Group(*parts)


def render(rep: Report) -> str:
    """The report as plain text."""
    out = [rep.title, "=" * len(rep.title)]
    width = max(len(k) for k, _ in rep.facts)
    out += [f"{k:<{width}}  {v}" for k, v in rep.facts]
    for w in rep.warnings:
        out += ["", f"!! {w}"]
    for t in rep.tables:
        out += ["", *table(t)]
    return "\n".join(out) + "\n"


def table(t: Table) -> list:
    lines = [t.title, "-" * len(t.title)]
    if not t.rows:
        lines.append("(none)")
    else:
        widths = [max(len(str(c)) for c in col) for col in zip(t.columns, *t.rows)]

        def line(cells):
            parts = [str(c).rjust(w) if r else str(c).ljust(w) for c, w, r in zip(cells, widths, t.right)]
            return "  ".join(parts).rstrip()

        lines.append(line(t.columns))
        lines += [line(r) for r in t.rows]
    if t.note:
        lines.append(t.note)
    return lines
