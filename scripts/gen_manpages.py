#!/usr/bin/env python3
"""Write the man pages of `caracal` and of each of its subcommands from the CLI's own
argparse parsers (caracal.cli.build_parser), so a page says exactly what --help says.

    PYTHONPATH=python python3 scripts/gen_manpages.py OUTDIR     # OUTDIR/caracal.1, caracal-run.1, ...

Nested subcommands get their own pages (caracal-testbed-up.1). The output depends only on
the parsers and the version: no dates, so rebuilding gives the same bytes. The build runs
this (cmake/CaracalInstall.cmake) and cmake --install puts the pages in share/man/man1.
"""
import argparse
import os
import sys
from pathlib import Path

from caracal import __version__
from caracal.cli import build_parser

ENVIRONMENT = [
    ("CARACAL_PREFIX", "Prefix of an installed Caracal (set by the installed caracal command and by "
                       "`module load caracal`): its lib/ and bin/ are used for the MPI library it was "
                       "built for."),
    ("CARACAL_ROOT", "Source tree whose build directories (build/, build-mpich/) a source checkout of the "
                     "CLI uses (default: the tree the package is in)."),
    ("CARACAL_*", "Every setting of the library itself; `caracal info` lists them with their defaults."),
]


def roff(text: str) -> str:
    """Escape text for roff: backslashes, hyphens, and control characters at line starts."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(("\\&" + ln) if ln[:1] in (".", "'") else ln for ln in text.split("\n"))


def invocation(formatter, action) -> str:
    """'-n N, --np N' as '\\fB\\-n\\fR \\fIN\\fR, ...'."""
    parts = []
    for piece in formatter._format_action_invocation(action).split(", "):
        words = piece.split(" ", 1)
        s = f"\\fB{roff(words[0])}\\fR"
        if len(words) > 1:
            s += f" \\fI{roff(words[1])}\\fR"
        parts.append(s)
    return ", ".join(parts)


def subcommands(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            return [(name, sub, helps.get(name, "")) for name, sub in action.choices.items()]
    return []


def page(words, parser, summary, pages, see_also) -> None:
    name = "-".join(words)
    formatter = parser._get_formatter()
    usage = parser.format_usage().strip()
    usage = usage[len("usage: "):] if usage.startswith("usage: ") else usage
    out = [f'.TH {name.upper()} 1 "" "caracal {__version__}" "Caracal Manual"',
           ".SH NAME", f"{name} \\- {roff(summary)}",
           ".SH SYNOPSIS", ".nf", roff(usage), ".fi"]
    if parser.description:
        out += [".SH DESCRIPTION", ".nf", roff(parser.description.rstrip()), ".fi"]
    subs = subcommands(parser)
    for group in parser._action_groups:
        actions = [a for a in group._group_actions
                   if a.help is not argparse.SUPPRESS and not isinstance(a, argparse._SubParsersAction)]
        if not actions:
            continue
        title = {"positional arguments": "ARGUMENTS", "options": "OPTIONS",
                 "optional arguments": "OPTIONS"}.get(group.title, (group.title or "OPTIONS").upper())
        out.append(f".SH {roff(title)}")
        for a in actions:
            out += [".TP", invocation(formatter, a), roff(formatter._expand_help(a) if a.help else "")]
    if subs:
        out.append(".SH COMMANDS")
        for sub_name, _, sub_help in subs:
            out += [".TP", f"\\fB{roff(sub_name)}\\fR", roff(sub_help or ""),
                    f"See \\fB{roff(name + '-' + sub_name)}\\fR(1)."]
    if len(words) == 1:
        out.append(".SH ENVIRONMENT")
        for var, doc in ENVIRONMENT:
            out += [".TP", f"\\fB{roff(var)}\\fR", roff(doc)]
    refs = [f"\\fB{roff(name + '-' + s)}\\fR(1)" for s, _, _ in subs] + see_also
    if refs:
        out += [".SH SEE ALSO", ",\n".join(refs)]
    pages[f"{name}.1"] = "\n".join(out) + "\n"
    for sub_name, sub, sub_help in subs:
        page(words + [sub_name], sub, sub_help or sub_name, pages, [f"\\fB{roff(name)}\\fR(1)"])


def all_pages() -> dict:
    pages = {}
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "80"  # argparse wraps usage lines to the terminal: the same bytes everywhere
    try:
        page(["caracal"], build_parser(), "fast MPI communication on the machine you have", pages, [])
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved
    return pages


def main(argv) -> int:
    if len(argv) != 2:
        print("usage: gen_manpages.py OUTDIR", file=sys.stderr)
        return 2
    outdir = Path(argv[1])
    outdir.mkdir(parents=True, exist_ok=True)
    for fname, text in sorted(all_pages().items()):
        (outdir / fname).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
