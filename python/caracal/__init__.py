"""Caracal: fast MPI communication on the machine you have.

The command-line entry point is :func:`caracal.cli.main` (``caracal --help``).
"""
__version__ = "0.1.0"
