"""The example programs' command lines: -h teaches, bad arguments are one line and exit 2.
(Their results are checked by the ctest runs in tests/c at 1-4 ranks.)"""
import os
import subprocess

import pytest

from conftest import BUILDS

BAD = {
    "asp": [["-x"], ["0"], ["abc"], ["64", "10", "extra"], ["-s"]],
    "halo": [["-q"], ["0"], ["8", "8", "8", "0"], ["-r", "0"], ["1", "2", "3", "4", "5"]],
    "records": [["-s", "12"], ["-s", "100"], ["-w", "101"], ["-n"], ["stray"]],
    "mm25d": [["-x"], ["-n"], ["-n", "0"], ["-c", "2"], ["-b", "abc"]],
    "lu25d": [["-P", "full"], ["-n", "-3"], ["-c", "3"], ["-q"], ["-b", "0"]],
}


def run_example(mpi, name, args):
    exe = BUILDS[mpi] / "bin" / name
    if not exe.exists():
        pytest.fail(f"{exe} is not built: run make test")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # A singleton MPI process (no mpiexec): what a user typing the command gets.
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.parametrize("name", sorted(BAD))
def test_help_exits_0(mpi, name):
    p = run_example(mpi, name, ["-h"])
    assert p.returncode == 0
    assert p.stdout.startswith(f"usage: {name} ")


@pytest.mark.parametrize("name,args", [(n, a) for n in sorted(BAD) for a in BAD[n]])
def test_bad_arguments_one_line_exit_2(mpi, name, args):
    p = run_example(mpi, name, args)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{name}: "), p.stderr
    assert p.stdout == ""
