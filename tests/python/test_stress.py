"""A short randomized differential stress run per library (tests/stress/run.py): random
sequences of every collective family under random forced algorithms and node sizes, checked
against first principles; a failing seed prints its replay command."""
import subprocess
import sys

from conftest import ROOT


def test_stress_short(mpi):
    n = 4 if mpi == "openmpi" else 3  # MPICH busy-polls when ranks outnumber cores
    p = subprocess.run([sys.executable, str(ROOT / "tests/stress/run.py"), "--mpi", mpi, "-n", str(n),
                        "--seed", "101", "--seeds", "3", "--calls", "250", "--timeout", "240"],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "3 seeds x 250 calls (" in p.stdout and p.stdout.rstrip().endswith(": 0 failed")
