"""Caracal: fast MPI communication on the machine you have.

The command-line entry point is :func:`caracal.cli.main` (``caracal --help``).
"""
from pathlib import Path as _Path

# The one version number of the project: the same file sets the library's caracal_version()
# (CMakeLists.txt), the package metadata (pyproject.toml) and this, and travels with the
# package wherever it is installed (source tree, pip, cmake --install).
__version__ = _Path(__file__).with_name("VERSION").read_text().strip()
