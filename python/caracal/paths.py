"""Where Caracal's built artefacts live.

In a source tree (editable install, or PYTHONPATH=python) they are in the build directories
beside the package: the repository root is two levels above this file; ``CARACAL_ROOT``
overrides it. An installed Caracal (cmake --install, make install PREFIX=..., Spack, a
module) has them under its prefix: lib/, bin/ and share/caracal/install.json, which says
which MPI library that build is for (one prefix, one library) and its version (which must be
this package's). The prefix is ``CARACAL_PREFIX`` (set by the installed ``caracal`` command
and by the modulefile), else the one whose ``bin/caracal-info`` is on PATH. An explicit
``CARACAL_PREFIX`` wins over a build directory of the source tree; the prefix found on PATH
is used only where the source tree has no build for that library.
"""
import json
import os
import shutil
from pathlib import Path
from typing import Optional

from . import __version__
from .errors import UsageError

MPIS = ("openmpi", "mpich")
BUILD_DIRS = {"openmpi": "build", "mpich": "build-mpich"}
INSTALL_RECORD = Path("share") / "caracal" / "install.json"


def root() -> Path:
    env = os.environ.get("CARACAL_ROOT")
    return Path(env) if env else Path(__file__).resolve().parents[2]


def installation() -> Optional[dict]:
    """The installed Caracal's record (install.json) with its "prefix", or None."""
    env = os.environ.get("CARACAL_PREFIX")
    if env:
        prefix = Path(env)
    else:
        exe = shutil.which("caracal-info")
        if not exe:
            return None
        prefix = Path(exe).resolve().parent.parent
    try:
        doc = json.loads((prefix / INSTALL_RECORD).read_text())
        doc["mpi"], doc["libdir"], doc["bindir"]  # noqa: B018 (the keys we rely on)
    except (OSError, ValueError, KeyError, TypeError):
        if env:
            raise UsageError(f"CARACAL_PREFIX={env} is not a Caracal installation "
                             f"(no readable {prefix / INSTALL_RECORD})") from None
        return None
    doc["prefix"] = prefix
    if doc.get("version") != __version__:  # the CLI and the library must be one release
        raise UsageError(f"the Caracal installed in {prefix} is version {doc.get('version')}, this caracal "
                         f"command is {__version__}: run {prefix / doc['bindir'] / 'caracal'} instead, "
                         f"or install the CLI of version {doc.get('version')}")
    return doc


def _installed_for(mpi: str) -> Optional[dict]:
    inst = installation()
    return inst if inst and inst["mpi"] == mpi else None


def build_dir(mpi: str) -> Path:
    """The directory holding lib/ and bin/ for this MPI library: a build directory of the
    source tree or an installed prefix."""
    if mpi not in MPIS:
        raise UsageError(f"unknown MPI library '{mpi}' (choose openmpi or mpich)")
    tree = root() / BUILD_DIRS[mpi]
    if "CARACAL_PREFIX" not in os.environ and tree.is_dir():
        return tree
    inst = _installed_for(mpi)
    return inst["prefix"] if inst else tree


def _missing(mpi: str, path: Path) -> UsageError:
    inst = installation()
    if inst and inst["mpi"] != mpi:
        return UsageError(f"the Caracal installed in {inst['prefix']} is built for {inst['mpi']}, "
                          f"not {mpi}; add --mpi {inst['mpi']} (or install a {mpi} build)")
    if inst or (root() / "src" / "CMakeLists.txt").is_file():
        flag = "" if mpi == "openmpi" else f" MPI={mpi}"
        return UsageError(f"{path} is not built; run: make build{flag}")
    return UsageError(f"no Caracal library found for {mpi}: set CARACAL_PREFIX to its install prefix "
                      "or put PREFIX/bin on PATH (module load caracal does both)")


def library(mpi: str) -> Path:
    inst = _installed_for(mpi)
    if inst and build_dir(mpi) == inst["prefix"]:
        lib = inst["prefix"] / inst["libdir"] / "libcaracal.so"
    else:
        lib = build_dir(mpi) / "lib" / "libcaracal.so"
    if not lib.exists():
        raise _missing(mpi, lib)
    return lib


def program(mpi: str, name: str) -> Path:
    inst = _installed_for(mpi)
    if inst and build_dir(mpi) == inst["prefix"]:
        exe = inst["prefix"] / inst["bindir"] / name
    else:
        exe = build_dir(mpi) / "bin" / name
    if not exe.exists():
        raise _missing(mpi, exe)
    return exe
