"""caracal info: version, MPI libraries found, and every CARACAL_* setting."""
import json
import shutil
import subprocess

from .. import __version__, paths
from ..errors import UsageError

NAME = "info"
HELP = "show Caracal's version, the MPI libraries it is built for, and every CARACAL_* setting"
DESCRIPTION = """\
Prints Caracal's settings table: every CARACAL_* environment variable, its type,
default and meaning. Set them in the environment of the MPI processes
(caracal run passes your environment through), e.g.

  CARACAL_LOG=algo caracal run -n 4 -- ./app
"""


def add_arguments(p):
    p.add_argument("--json", action="store_true", help="print the settings table as JSON")


def settings(mpi=None):
    for m in ([mpi] if mpi else paths.MPIS):
        exe = paths.build_dir(m) / "bin" / "caracal-info"
        if exe.exists():
            out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
            return json.loads(out)
    raise UsageError("caracal-info is not built; run: make build")


def run(args):
    table = settings()
    if args.json:
        print(json.dumps(table, indent=2))
        return 0
    print(f"caracal {__version__}")
    for m in paths.MPIS:
        lib = paths.build_dir(m) / "lib" / "libcaracal.so"
        launcher = shutil.which(f"mpiexec.{m}")
        state = str(lib) if lib.exists() else "not built"
        print(f"  {m:8s} library: {state}; launcher: {launcher or 'not installed'}")
    print("\nSettings (environment variables):")
    width = max(len(s["name"]) for s in table["settings"])
    for s in table["settings"]:
        default = s["default"] if s["default"] != "" else "(empty)"
        print(f"  {s['name']:<{width}}  {s['type']:<6} default {default}")
        print(f"  {'':<{width}}  {s['doc']}")
    return 0
