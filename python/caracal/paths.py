"""Where Caracal's built artefacts live.

The package runs from the source tree (editable install): the repository root
is two levels above this file. ``CARACAL_ROOT`` overrides it.
"""
import os
from pathlib import Path

from .errors import UsageError

MPIS = ("openmpi", "mpich")
BUILD_DIRS = {"openmpi": "build", "mpich": "build-mpich"}


def root() -> Path:
    env = os.environ.get("CARACAL_ROOT")
    return Path(env) if env else Path(__file__).resolve().parents[2]


def build_dir(mpi: str) -> Path:
    if mpi not in MPIS:
        raise UsageError(f"unknown MPI library '{mpi}' (choose openmpi or mpich)")
    return root() / BUILD_DIRS[mpi]


def library(mpi: str) -> Path:
    lib = build_dir(mpi) / "lib" / "libcaracal.so"
    if not lib.exists():
        flag = "" if mpi == "openmpi" else f" MPI={mpi}"
        raise UsageError(f"{lib} is not built; run: make build{flag}")
    return lib


def program(mpi: str, name: str) -> Path:
    exe = build_dir(mpi) / "bin" / name
    if not exe.exists():
        flag = "" if mpi == "openmpi" else f" MPI={mpi}"
        raise UsageError(f"{exe} is not built; run: make build{flag}")
    return exe
