"""Launching MPI programs with the right mpiexec, environment and flags for this machine."""
import os
import shutil
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
