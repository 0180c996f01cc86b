"""The ``caracal`` command: one subcommand per module in caracal/commands/.

Adding a subcommand = one module with ``NAME``, ``HELP``, ``add_arguments(p)``
and ``run(args) -> int``, plus one line in COMMANDS below.
"""
import argparse
import importlib
import sys

from . import __version__
from .errors import UsageError

# Order is the order shown in --help.
# pyproject.toml's dependencies, imported where they are used
DEPENDENCIES = {"jinja2", "jsonschema", "matplotlib", "numpy", "rich"}

COMMANDS = [
    "run",
    "report",
    "probe",
    "bench",
    "tune",
    "advise",
    "tune_app",
    "nodemap",
    "map",
    "info",
    "testbed",
    "model",
    "simulate",
]

DESCRIPTION = """\
Caracal makes MPI communication fast on the machine you have, on top of your
own MPI library (Open MPI or MPICH), for unmodified applications.

Typical session:
  caracal run -n 4 --profile app.json -- ./app args   # run with Caracal, profile every MPI call
  caracal report app.json --html app.html             # where the time and bytes go
  caracal info                                        # every CARACAL_* setting and what it does
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse prints usage too; keep it short)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="caracal", description=DESCRIPTION,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"caracal {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        mod = importlib.import_module(f".commands.{name}", __package__)
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP),
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        return int(args._run(args) or 0)
    except UsageError as e:
        print(f"caracal {args.command}: {e}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as e:
        if e.name not in DEPENDENCIES:
            raise
        # an interpreter without pyproject.toml's dependencies (an installed CLI run by a bare
        # python3: CARACAL_PYTHON, -DCARACAL_INSTALL_PYTHON)
        print(f"caracal {args.command}: needs the Python package {e.name}, which {sys.executable} does not "
              f"have (pip install {e.name}, or run caracal with a Python that has it: CARACAL_PYTHON)",
              file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `caracal info | head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print(f"caracal {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
