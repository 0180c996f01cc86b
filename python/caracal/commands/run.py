"""caracal run: launch an MPI program with libcaracal preloaded and profile it."""
import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .. import frontend, launch, mpilibs, oversub, paths
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

Placement goes to the launcher as given: --hostfile FILE, --rankfile FILE (the
rankfile `caracal map` writes; -n defaults to its number of ranks; with MPICH it
becomes a machinefile in rank order), and everything after --mpiexec-args up to
`--`. A rankfile that puts more ranks on a host than it has cores keeps Open MPI
yielding when idle (mpi_yield_when_idle 1), as its own oversubscribed mapping does.

The program must use the library chosen with --mpi (checked before the launch).
SIGINT, SIGTERM and SIGHUP reach the ranks (which write their profile pieces) and
the launcher; the pieces are merged on the way out. The exit status is the job's,
128 + the signal when one stopped it, and non-zero when the profile asked for was
not written.

Examples:
  caracal run -n 2 -- build/bin/asp 512
  caracal run --rankfile rankfile -- build/bin/halo      # as `caracal map --out rankfile` placed it
  caracal run -n 4 --mpiexec-args --mca btl self,vader -- ./app
  caracal run -n 4 --mpi mpich --profile halo.json -- build-mpich/bin/halo
  caracal run -n 4 --tuned caracal-tune -- ./app      # the selection `caracal tune` measured here
  caracal run -n 2 --settings tuned/settings.env -- ./app   # what `caracal tune-app` kept
"""


def tuned_env(mpi: str, directory: str) -> dict:
    """CARACAL_RULES and the native library's tuning file from a `caracal tune` output."""
    d = Path(directory)
    rules = d / "caracal-rules.conf"
    if not rules.is_file():
        raise UsageError(f"--tuned {directory}: no caracal-rules.conf there (run caracal tune --out {directory})")
    env = {"CARACAL_RULES": str(rules.resolve())}
    from .tune import native_file_name
    native = d / native_file_name(mpi)
    if native.is_file():
        from .. import native_tuning
        env.update(native_tuning.pass_env(mpi, str(native.resolve())))
    return env


def add_arguments(p):
    p.add_argument("-n", "--np", type=int, default=None, metavar="N",
                   help="number of ranks (default: the rankfile's, else 2)")
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
    p.add_argument("--settings", metavar="FILE",
                   help="VAR=VALUE lines set in every rank (what `caracal tune-app` keeps); --env wins over them")
    p.add_argument("--tuned", metavar="DIR",
                   help="use what `caracal tune --out DIR` wrote: its rules (CARACAL_RULES) and, where one of "
                        "the library's own algorithms won, the library's tuning file")
    add_launcher_arguments(p)
    p.add_argument("--no-yield", action="store_true",
                   help="with more ranks than cores, leave the library's waits as they are (busy-polling)")
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


def add_launcher_arguments(p):
    """Options that go to mpiexec (frontend.Placement)."""
    p.add_argument("--hostfile", metavar="FILE", help="hosts to run on (Open MPI --hostfile, MPICH -f)")
    p.add_argument("--rankfile", metavar="FILE",
                   help="Open MPI rankfile ('rank N=HOST slot=S' lines, as `caracal map --out` writes)")
    p.add_argument("--mpiexec-args", nargs=argparse.REMAINDER, default=[], metavar="ARG",
                   help="everything after this, up to `--`, goes to mpiexec as is")


def rank_env(args, program_env: dict) -> dict:
    """--env VAR=VALUE pairs on top of what caracal run sets."""
    env = dict(program_env)
    for kv in args.env:
        if "=" not in kv:
            raise UsageError(f"--env expects VAR=VALUE, got '{kv}'")
        k, v = kv.split("=", 1)
        env[k] = v
    return env


def launch_env(args) -> dict:
    """The launcher's own environment. --no-profile wins over an inherited CARACAL_PROFILE
    (the launcher passes its environment on to the ranks)."""
    env = launch.launcher_env()
    if args.no_profile:
        env.pop("CARACAL_PROFILE", None)
    return env


def check_library(args, program: str, lib, env: dict):
    """The program must load the MPI library libcaracal was built for, as the launch will
    resolve it (the library's own environment: LD_LIBRARY_PATH of a project-installed one)."""
    others = {}
    for name in paths.MPIS:
        if name == args.mpi:
            continue
        try:
            others[name] = paths.library(name)
        except UsageError:
            pass
    run_env = {**os.environ, **launch.library_env(args.mpi), **env}
    frontend.check_program_library(args.mpi, program, lib, env=run_env, others=others,
                                   compiler=mpilibs.get(args.mpi).cc[0])


def run(args):
    if args.no_profile and args.profile:
        raise UsageError("--profile and --no-profile contradict each other")
    program = resolve_program(args.program)
    lib = paths.library(args.mpi, program, prefix=args.mpi_prefix)  # the build of the program's ABI
    family = mpilibs.get(args.mpi).family  # whose launcher: openmpi or mpich (Hydra)
    env = {"LD_PRELOAD": str(lib)}
    if args.tuned:
        env.update(tuned_env(family, args.tuned))
    if args.settings:
        from .. import settings_file
        env.update(settings_file.read(args.settings))
    env = rank_env(args, env)
    lenv = launch_env(args)
    place = frontend.Placement(family, args.hostfile, args.rankfile, args.mpiexec_args, {**lenv, **env})
    try:
        nranks = args.np if args.np is not None else (place.ranks or 2)
        frontend.check_nranks(nranks, place.spread)
        if place.ranks is not None and nranks > place.ranks:
            raise UsageError(f"-n {nranks}: the rankfile {args.rankfile} places only {place.ranks} ranks")
        check_library(args, program, lib, env)
        # ranks outnumbering this machine's cores (one-host launches; a hostfile or rankfile
        # says where ranks go): the library's waits yield (python/caracal/oversub.py);
        # --tuned and --env above win over these
        if not args.no_yield and not args.hostfile and not args.rankfile:
            yields = oversub.yield_settings(family, nranks)
            if yields:
                for k, v in yields.items():
                    env.setdefault(k, v)
                print(oversub.describe(family, nranks, yields), file=sys.stderr)
        out = None
        if args.no_profile:
            env["CARACAL_PROFILE"] = ""  # off in every rank, also where the launcher forwards its environment
        else:
            out = profile_path(args, program)
            if not os.access(out.parent, os.W_OK | os.X_OK):
                raise UsageError(f"cannot write the profile into {out.parent} (no write permission or a "
                                 "read-only file system); choose another --profile or --no-profile")
            if out.exists():
                out.unlink()  # --force: the old profile must not pass for the new one
            env["CARACAL_PROFILE"] = str(out)
        cmd = launch.mpiexec_command(args.mpi, nranks, [program] + list(args.args), env=env, extra=place.args,
                                     library_yield=not args.no_yield)
        if args.rankfile and family == "openmpi":
            cmd = frontend.without_default_binding(cmd)
        sys.stdout.flush()
        rc = frontend.run_supervised(cmd, lenv)
    finally:
        place.cleanup()
    if out is not None:
        written = report_profile(out, rc)
        if not written and rc == 0:
            return 1  # a profile was asked for (it is on by default) and there is none
    return rc


def report_profile(out: Path, rc: int):
    try:
        from ..partial import finish_profile  # merges per-rank partial pieces if the job died
    except ImportError:
        finish_profile = None
    state = finish_profile(out) if finish_profile else ("complete" if out.exists() else None)
    if state is None:
        print(f"caracal run: no profile was written to {out} (exit status {rc})", file=sys.stderr)
    elif state == "partial":
        print(f"caracal run: job ended early (exit status {rc}); partial profile written to {out}", file=sys.stderr)
    else:
        print(f"caracal run: profile written to {out}", file=sys.stderr)
    return state is not None
