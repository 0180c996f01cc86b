"""The profile report as plain-text tables for the terminal (mpiP style)."""
from .report_tables import Report, Table


def render(rep: Report) -> str:
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
