"""What `caracal run` sets when a job's ranks outnumber the cores they may run on.

Then a rank that waits by busy-polling takes the core from the very rank it waits for.
Caracal's own shm waits yield and sleep on their own (src/core/wait.c); the libraries'
waits need telling (docs/collectives.md, "Waiting"):

- Open MPI: ``mpi_yield_when_idle`` (its progress loop calls sched_yield between polls).
  mpirun sets it itself when it knows a node is oversubscribed, but not with
  ``--bind-to none`` and enough slots, a rankfile, or a host list that overstates cores.
- MPICH 4.0.2: no setting of the library stops its busy-polling (measured:
  MPIR_CVAR_POLLS_BEFORE_YIELD and MPIR_CVAR_CH4_GLOBAL_PROGRESS change nothing; UCX's
  settings act below the loop that spins). Caracal then runs the program's blocking native
  waits and blocking collectives through its own wait loop, which tests, yields and naps:
  CARACAL_NATIVE_WAIT=yield and CARACAL_NATIVE_BLOCKING=nonblocking (job-wide, as that
  setting requires).
- MPICH 5 and Intel MPI have settings of their own, which launch.mpiexec_command adds as
  well (mpilibs.py, each library's oversubscribed_env): MPICH 5's progress throttle
  (MPIR_CVAR_CH4_PROGRESS_THROTTLE: usleep(1) after polls that found nothing) and Intel
  MPI's I_MPI_THREAD_YIELD=3 (usleep instead of sched_yield). They reach the waits inside
  the library (communicator setup, MPI_Finalize) that Caracal's loop does not see.
"""
import os
from typing import Dict, Optional


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask), as the ranks it launches inherit."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def yield_settings(mpi: str, nranks: int, cores: Optional[int] = None) -> Dict[str, str]:
    """Environment for every rank that makes waiting ranks give up their core; empty when
    every rank has a core of its own (then polling is fastest)."""
    cores = usable_cores() if cores is None else cores
    if nranks <= cores:
        return {}
    if mpi == "openmpi":
        return {"OMPI_MCA_mpi_yield_when_idle": "1"}
    return {"CARACAL_NATIVE_WAIT": "yield", "CARACAL_NATIVE_BLOCKING": "nonblocking"}


def describe(mpi: str, nranks: int, settings: Dict[str, str], cores: Optional[int] = None) -> str:
    cores = usable_cores() if cores is None else cores
    what = " ".join(f"{k}={v}" for k, v in settings.items())
    return (f"caracal run: {nranks} ranks on {cores} cores: waiting ranks yield their core ({what}; "
            f"--no-yield to keep the library's busy-polling)")
