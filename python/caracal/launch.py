"""Launching MPI programs with the right mpiexec, environment and flags for this machine.

What differs between the MPI libraries (launcher, its flags, the environment a library needs,
how a rank's variable is passed) is python/caracal/mpilibs.py's table; this module turns it
into a command line."""
import os
import shutil
import sys
from typing import Dict, List, Optional, Sequence, Union

from . import mpilibs
from .errors import UsageError

MPIEXEC = {name: mpilibs.get(name).mpiexec for name in mpilibs.NAMES}

MpiLike = Union[str, mpilibs.Library]


def library(mpi: MpiLike) -> mpilibs.Library:
    return mpi if isinstance(mpi, mpilibs.Library) else mpilibs.get(mpi)


def mpiexec_command(mpi: MpiLike, nranks: int, argv: Sequence[str],
                    env: Optional[Dict[str, str]] = None,
                    extra: Sequence[str] = (), library_yield: bool = True) -> List[str]:
    """The full launcher command line. ``env`` goes to the MPI processes only
    (not to mpiexec itself, which must not get libcaracal preloaded). ``mpi`` is a library's
    name or a resolved mpilibs.Library (another installation: --mpi-prefix). What the library
    itself needs in the environment (e.g. OPAL_PREFIX, I_MPI_ROOT) leads the command as
    `env VAR=VALUE ...`, so that callers need no more than launcher_env(). With more ranks
    than cores, the library's own settings that make its waits give up the core come too
    (its oversubscribed_env), unless library_yield is False (caracal run --no-yield)."""
    lib = library(mpi)
    exe = lib.mpiexec
    found = exe if os.sep in exe and os.access(exe, os.X_OK) else shutil.which(exe)
    if not found:
        how = "make setup" if lib.prefix is None else f"make setup MPI={lib.name}"
        raise UsageError(f"{exe} not found; run: {how}")
    if nranks < 1:
        raise UsageError(f"the number of ranks must be at least 1, not {nranks}")
    need = library_env(lib)
    if library_yield and nranks > (os.cpu_count() or 1):
        need.update({k: v for k, v in lib.oversubscribed_env.items() if k not in os.environ})
    cmd = (["env"] + [f"{k}={v}" for k, v in need.items()] if need else []) + [exe]
    stale = mpilibs.stale_session_shell(lib)
    if stale:  # a directory a killed launcher left under the pid this one will have
        cmd = ["sh", "-c", stale + '; exec "$@"', "caracal-launch"] + cmd
    cmd += lib.flags
    cmd += lib.env_args(env or {})
    cmd += list(extra)
    cmd += ["-n", str(nranks)]
    cmd += list(argv)
    return cmd


def library_env(mpi: MpiLike) -> Dict[str, str]:
    """The variables the library needs that the current environment does not already have."""
    lib = library(mpi)
    full = lib.environment(base=dict(os.environ))
    return {k: v for k, v in full.items() if os.environ.get(k) != v and (k in lib.env or k in lib.env_default)}


def launcher_env(mpi: Optional[MpiLike] = None) -> Dict[str, str]:
    """Environment for mpiexec itself: what this machine needs to run at all (and, given the
    library, what it needs; mpiexec_command puts the latter on the command line anyway)."""
    env = dict(os.environ) if mpi is None else library(mpi).environment()
    if os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


def testbed_command(name: str, mpi: str, nranks: int, ppn: int, argv: Sequence[str],
                    env: Optional[Dict[str, str]] = None, native: bool = True,
                    timeout: float = 300) -> List[str]:
    """The command that runs ``argv`` with ``nranks`` ranks, ``ppn`` per emulated host, on
    the `caracal testbed` called ``name`` (docs/testbed.md). ``env`` goes to the ranks;
    ``native``: without libcaracal (the measuring tools do not need it). The testbed's
    own --timeout bounds the run and kills what it left inside (exit 124)."""
    if nranks < 1 or ppn < 1:
        raise UsageError(f"the number of ranks and --ppn must be at least 1, not {nranks} and {ppn}")
    cmd = [sys.executable, "-m", "caracal", "testbed", "run", "--name", name, "-n", str(nranks),
           "--ppn", str(ppn), "--mpi", mpi, "--timeout", repr(float(timeout))]
    if native:
        cmd.append("--native")
    for k, v in (env or {}).items():
        cmd += ["--env", f"{k}={v}"]
    return cmd + ["--", *argv]


def testbed_env() -> Dict[str, str]:
    """Environment for `caracal testbed run` started as a child: finds this package."""
    from . import paths
    env = launcher_env()
    py = str(paths.root() / "python")
    env["PYTHONPATH"] = py + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env
