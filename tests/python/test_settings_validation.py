"""Settings and selection rules are parsed strictly: a wrong value gives exactly one warning
per job (not one per rank) naming the setting and what is used instead, and the run goes on
with the default; a valid rule gives none."""
import os
import subprocess

import pytest

from conftest import BUILDS

LAUNCH = {"openmpi": ["mpiexec.openmpi", "--oversubscribe", "--bind-to", "none"], "mpich": ["mpiexec.mpich"]}


def run3(mpi, env):
    b = BUILDS[mpi]
    e = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
             LD_PRELOAD=str(b / "lib" / "libcaracal.so"), **env)
    # the environment reaches every rank (both launchers pass it on)
    return subprocess.run(LAUNCH[mpi] + ["-n", "3", str(b / "bin" / "test_init")], env=e,
                          capture_output=True, text=True, timeout=120)


BAD = [("CARACAL_BCAST", "foo", "not a bcast algorithm"),
       ("CARACAL_BCAST", "knomial:1", "cannot read rule"),
       ("CARACAL_ALLREDUCE", "knomial:99999999999999999999", "cannot read rule"),
       ("CARACAL_REDUCE", "shm@1k-8", "cannot read rule"),
       ("CARACAL_BARRIER", "node/foo", "for a level"),
       ("CARACAL_NODE_SIZE", "-1", "refused"),
       ("CARACAL_SHM_SLOT", "0", "refused"),
       ("CARACAL_COLL", "maybe", "not 0, 1 or force"),
       ("CARACAL_PEER_BUDGET", "1", "refused"),
       ("CARACAL_PEER_BUDGET", "-2", "refused")]


@pytest.mark.parametrize("name,value,says", BAD)
def test_bad_value_one_warning_per_job(mpi, name, value, says):
    p = run3(mpi, {name: value})
    assert p.returncode == 0, p.stderr
    warnings = [l for l in p.stderr.splitlines() if "warning" in l]
    assert len(warnings) == 1, p.stderr
    assert name in warnings[0] and value in warnings[0] and says in warnings[0]


@pytest.mark.parametrize("name,value", [("CARACAL_BCAST", "nary:1 knomial:4@1k-64k#2-8 native"),
                                        ("CARACAL_ALLREDUCE", "node/shm top/ring@1m- recdbl"),
                                        ("CARACAL_COLL", "force")])
def test_valid_rules_are_silent(mpi, name, value):
    p = run3(mpi, {name: value})
    assert p.returncode == 0, p.stderr
    assert "warning" not in p.stderr, p.stderr
