"""Where Caracal's built artefacts live.

The package runs from the source tree (editable install): the repository root
is two levels above this file. ``CARACAL_ROOT`` overrides it. Which build serves which
MPI library is python/caracal/mpilibs.py's table.
"""
from pathlib import Path
from typing import Optional

from . import mpilibs
from .errors import UsageError

MPIS = mpilibs.NAMES            # the libraries: openmpi, openmpi5, mpich, mpich5, impi
BUILDS = mpilibs.BUILDS         # ... and the builds: one per library, and abi (MPI-5 standard ABI)
root = mpilibs.root


def build_dir(build: str) -> Path:
    """build/ (Open MPI 4.1), build-mpich/, build-<name>/ for the others."""
    return mpilibs.build_dir(build)


def _build_for(mpi: str, program: Optional[str] = None) -> str:
    if mpi in mpilibs.EXTRA_BUILDS:
        return mpi
    return mpilibs.pick_build(mpi, program)


def library(mpi: str, program: Optional[str] = None, prefix: Optional[str] = None) -> Path:
    """The libcaracal.so that runs on library `mpi` (and, where `program`'s ABI can be read,
    matches it): its own build, else one built for an ABI it implements. `prefix`: `mpi` is
    the installation there from now on, for the launcher too (caracal run --mpi-prefix)."""
    mpilibs.set_prefix(mpi, prefix)
    return build_dir(_build_for(mpi, program)) / "lib" / "libcaracal.so"


def program(mpi: str, name: str) -> Path:
    exe = build_dir(_build_for(mpi)) / "bin" / name
    if not exe.exists():
        raise UsageError(f"{exe} is not built; run: make build MPI={mpi}")
    return exe
