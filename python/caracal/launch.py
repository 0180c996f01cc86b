"""Launching MPI programs with the right mpiexec, environment and flags for this machine."""
import os
import shutil
import sys
from typing import Dict, List, Optional, Sequence

from .errors import UsageError

MPIEXEC = {"openmpi": "mpiexec.openmpi", "mpich": "mpiexec.mpich"}


def mpiexec_command(mpi: str, nranks: int, argv: Sequence[str],
                    env: Optional[Dict[str, str]] = None,
                    extra: Sequence[str] = ()) -> List[str]:
    """The full launcher command line. ``env`` goes to the MPI processes only
    (not to mpiexec itself, which must not get libcaracal preloaded)."""
    exe = MPIEXEC.get(mpi)
    if exe is None:
        raise UsageError(f"unknown MPI library '{mpi}' (choose openmpi or mpich)")
    if shutil.which(exe) is None:
        raise UsageError(f"{exe} not found; run: make setup")
    if nranks < 1:
        raise UsageError(f"the number of ranks must be at least 1, not {nranks}")
    cmd = [exe]
    if mpi == "openmpi":
        # Open MPI refuses more ranks than cores without --oversubscribe; binding
        # would pin oversubscribed ranks to the same core.
        cmd += ["--oversubscribe", "--bind-to", "none"]
        for k, v in (env or {}).items():
            cmd += ["-x", f"{k}={v}"]
    else:
        for k, v in (env or {}).items():
            cmd += ["-genv", k, v]
    cmd += list(extra)
    cmd += ["-n", str(nranks)]
    cmd += list(argv)
    return cmd


def launcher_env() -> Dict[str, str]:
    """Environment for mpiexec itself: what this machine needs to run at all."""
    env = dict(os.environ)
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
