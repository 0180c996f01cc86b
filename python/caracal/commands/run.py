"""caracal run: launch an MPI program with libcaracal preloaded and profile it."""
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .. import launch, paths
from ..errors import UsageError

NAME = "run"
HELP = "run an MPI program with Caracal (and its profiler) on Open MPI or MPICH"
DESCRIPTION = """\
Launches PROGRAM with the chosen library's mpiexec and libcaracal preloaded into
every rank (the launcher itself is left alone). Adds what this machine needs:
running as root, more ranks than cores.

The profiler is on unless --no-profile is given: at MPI_Finalize the ranks'
profiles are gathered into one JSON document (schema caracal.profile/1). A job
that ends in MPI_Abort or a crash still leaves what each rank had; caracal run
merges those pieces into the profile, marked partial.

Examples:
  caracal run -n 2 -- build/bin/asp 512
  caracal run -n 4 --mpi mpich --profile halo.json -- build-mpich/bin/halo
  caracal run -n 4 --tuned caracal-tune -- ./app      # the selection `caracal tune` measured here
"""


def tuned_env(mpi: str, directory: str) -> dict:
    """CARACAL_RULES and the native library's tuning file from a `caracal tune` output."""
    d = Path(directory)
    rules = d / "caracal-rules.conf"
    if not rules.is_file():
        raise UsageError(f"--tuned {directory}: no caracal-rules.conf there (run caracal tune --out {directory})")
    env = {"CARACAL_RULES": str(rules.resolve())}
    native = d / ("native-openmpi.rules" if mpi == "openmpi" else "native-mpich.json")
    if native.is_file():
        from .. import native_tuning
        env.update(native_tuning.pass_env(mpi, str(native.resolve())))
    return env


def add_arguments(p):
    p.add_argument("-n", "--np", type=int, default=2, metavar="N", help="number of ranks (default 2)")
    p.add_argument("--mpi", choices=paths.MPIS, default="openmpi", help="MPI library (default openmpi)")
    p.add_argument("--mpi-prefix", metavar="DIR",
                   help="run on another installation of Open MPI, MPICH or Intel MPI (its bin/mpiexec), "
                        "with libcaracal of a build for that kind of library (docs/mpi-libraries.md)")
    p.add_argument("--profile", metavar="OUT.json",
                   help="where to write the profile (default caracal-PROGRAM-DATE.json in the current directory)")
    p.add_argument("--force", action="store_true", help="overwrite OUT.json if it exists")
    p.add_argument("--no-profile", action="store_true", help="run with Caracal but without the profiler")
    p.add_argument("--env", action="append", default=[], metavar="VAR=VALUE",
                   help="set an environment variable in every rank (repeatable)")
    p.add_argument("--tuned", metavar="DIR",
                   help="use what `caracal tune --out DIR` wrote: its rules (CARACAL_RULES) and, where one of "
                        "the library's own algorithms won, the library's tuning file")
    p.add_argument("program", metavar="PROGRAM", help="the MPI program to run")
    p.add_argument("args", nargs="*", metavar="ARGS", help="its arguments")


def resolve_program(prog: str) -> str:
    if os.sep in prog:
        if not os.path.isfile(prog):
            raise UsageError(f"program not found: {prog}")
        if not os.access(prog, os.X_OK):
            raise UsageError(f"program is not executable: {prog}")
        return os.path.abspath(prog)
    found = shutil.which(prog)
    if not found:
        raise UsageError(f"program not found: {prog} (not a file and not on PATH)")
    return found


def profile_path(args, program: str) -> Path:
    if args.profile:
        out = Path(args.profile).resolve()
        if out.exists() and not args.force:
            raise UsageError(f"{args.profile} exists; choose another --profile or add --force")
        if not out.parent.is_dir():
            raise UsageError(f"directory does not exist: {out.parent}")
        return out
    stem = f"caracal-{Path(program).name}-{time.strftime('%Y%m%d-%H%M%S')}"
    out, i = Path.cwd() / f"{stem}.json", 1
    while out.exists():  # never overwrite what the user has
        out, i = Path.cwd() / f"{stem}-{i}.json", i + 1
    return out


def run(args):
    program = resolve_program(args.program)
    lib = paths.library(args.mpi, program, prefix=args.mpi_prefix)  # the build of the program's ABI
    env = {"LD_PRELOAD": str(lib)}
    if args.tuned:
        env.update(tuned_env(args.mpi, args.tuned))
    for kv in args.env:
        if "=" not in kv:
            raise UsageError(f"--env expects VAR=VALUE, got '{kv}'")
        k, v = kv.split("=", 1)
        env[k] = v
    out = None
    if not args.no_profile:
        out = profile_path(args, program)
        if out.exists():
            out.unlink()  # --force: the old profile must not pass for the new one
        env["CARACAL_PROFILE"] = str(out)
    cmd = launch.mpiexec_command(args.mpi, args.np, [program] + list(args.args), env=env)
    sys.stdout.flush()
    rc = subprocess.call(cmd, env=launch.launcher_env())
    if out is not None:
        report_profile(out, rc)
    return rc


def report_profile(out: Path, rc: int):
    try:
        from ..partial import finish_profile  # merges per-rank partial pieces if the job died
    except ImportError:
        finish_profile = None
    state = finish_profile(out) if finish_profile else ("complete" if out.exists() else None)
    if state is None:
        print(f"caracal run: no profile was written (exit status {rc})", file=sys.stderr)
    elif state == "partial":
        print(f"caracal run: job ended early (exit status {rc}); partial profile written to {out}", file=sys.stderr)
    else:
        print(f"caracal run: profile written to {out}", file=sys.stderr)
