"""Where Caracal's built artefacts live.

A *build* serves one MPI library, or several with one binary interface (python/caracal/
mpilibs.py's table says which build runs on which library: BUILD_RUNS_ON). A build's lib/
and bin/ are in one of two places:

- a source tree (editable install, or PYTHONPATH=python): the build directories beside the
  package (build/, build-mpich/, build-<name>/); the repository root is two levels above this
  file, ``CARACAL_ROOT`` overrides it;
- an installed Caracal (cmake --install, make install PREFIX=..., Spack, a module): its
  prefix, whose share/caracal/install.json says which build it is (one prefix, one build), its
  lib and bin directories and its version (which must be this package's). The prefix is
  ``CARACAL_PREFIX`` (set by the installed ``caracal`` command and by the modulefile), else
  the one whose ``bin/caracal-info`` is on PATH. An explicit ``CARACAL_PREFIX`` wins over a
  build directory of the source tree; the prefix found on PATH is used only where the source
  tree has no build of that name.
"""
import json
import os
import shutil
from pathlib import Path
from typing import List, Optional

from . import __version__, mpilibs
from .errors import UsageError

MPIS = mpilibs.NAMES            # the libraries: openmpi, openmpi5, mpich, mpich5, impi
BUILDS = mpilibs.BUILDS         # ... and the builds: one per library, and abi (MPI-5 standard ABI)
INSTALL_RECORD = Path("share") / "caracal" / "install.json"
root = mpilibs.root


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


def _installed(build: str) -> Optional[dict]:
    """The installation if it is of `build`."""
    inst = installation()
    return inst if inst and inst["mpi"] == build else None


def build_dir(build: str) -> Path:
    """The directory holding lib/ and bin/ of a build: build/ (Open MPI 4.1), build-mpich/,
    build-<name>/ for the others in the source tree, or an installed prefix of that build."""
    tree = mpilibs.build_dir(build)  # checks the name
    if "CARACAL_PREFIX" not in os.environ and tree.is_dir():
        return tree
    inst = _installed(build)
    return inst["prefix"] if inst else tree


def _artefact(build: str, kind: str, name: str) -> Path:
    """lib/<name> or bin/<name> of a build, in the tree or under the installed prefix."""
    d = build_dir(build)
    inst = _installed(build)
    if inst and d == inst["prefix"]:
        return d / inst["libdir" if kind == "lib" else "bindir"] / name
    return d / kind / name


def library_file(build: str) -> Path:
    """Where a build's libcaracal.so is (or would be)."""
    return _artefact(build, "lib", "libcaracal.so")


def builds_for(mpi: str) -> List[str]:
    """The builds that run on library `mpi` (a build name itself: that build), best first."""
    if mpi in mpilibs.EXTRA_BUILDS:
        return [mpi]
    return mpilibs.BUILD_RUNS_ON[mpilibs.get(mpi).name]


def _missing(mpi: str, path: Path, builds: List[str]) -> UsageError:
    inst = installation()
    if inst and inst["mpi"] not in builds:
        return UsageError(f"the Caracal installed in {inst['prefix']} is built for {inst['mpi']}, "
                          f"not {mpi}; add --mpi {inst['mpi']} (or install a {mpi} build)")
    if inst or (root() / "src" / "CMakeLists.txt").is_file():
        how = " or ".join(f"make build MPI={b}" for b in builds)
        return UsageError(f"{path} is not built; run: {how}")
    return UsageError(f"no Caracal library found for {mpi}: set CARACAL_PREFIX to its install prefix "
                      "or put PREFIX/bin on PATH (module load caracal does both)")


def _find(mpi: str, kind: str, name: str, program: Optional[str] = None) -> Path:
    """The first of the builds that run on `mpi` that has the file; where `program`'s ABI can
    be read, one of that ABI (no build of that ABI runs on `mpi` at all: any, and caracal
    run's check of the program's library says what is wrong)."""
    builds = builds_for(mpi)
    want = mpilibs.program_abi(program) if program else None
    same = [b for b in builds if mpilibs.build_library(b)[1] == want]
    for b in same or builds:
        path = _artefact(b, kind, name)
        if path.exists():
            return path
    raise _missing(mpi, _artefact((same or builds)[0], kind, name), same or builds)


def library(mpi: str, program: Optional[str] = None, prefix: Optional[str] = None) -> Path:
    """The libcaracal.so that runs on library `mpi` (a build name such as abi: that build's):
    its own build, else one built for an ABI it implements; where `program`'s ABI can be read,
    one of that ABI. `prefix`: `mpi` is the installation there from now on, for the launcher
    too (caracal run --mpi-prefix)."""
    mpilibs.set_prefix(mpi, prefix)
    return _find(mpi, "lib", "libcaracal.so", program)


def program(mpi: str, name: str) -> Path:
    """A Caracal program (bin/<name>) of a build that runs on `mpi`."""
    return _find(mpi, "bin", name)
