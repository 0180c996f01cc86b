"""Settings and selection rules are parsed strictly: a wrong value gives exactly one warning
per job (not one per rank) naming the setting and what is used instead, and the run goes on
with the default; a valid rule gives none."""
import os
import subprocess
import sys

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


# Settings whose strings are parsed where they are used: strict like the others
MORE_BAD = [("CARACAL_LOG", "algo,algos", "not a log topic"),
            ("CARACAL_LOG_RANKS", "first", "not a rank number"),
            ("CARACAL_SHM_CMA", "maybe", "not auto, 1 or 0"),
            ("CARACAL_SHM_CMA_BCAST", "2", "not auto, 1 or 0")]


@pytest.mark.parametrize("name,value,says", MORE_BAD)
def test_string_settings_one_warning_per_job(name, value, says):
    # the warning comes from rank 0's first use; CARACAL_COLL=force makes every rank build
    # its segment (the SHM_CMA settings are read there)
    p = run3("openmpi", {name: value, "CARACAL_COLL": "force", "CARACAL_NODE_SIZE": "3"})
    assert p.returncode == 0, p.stderr
    warnings = [l for l in p.stderr.splitlines() if "warning" in l]
    assert len(warnings) == 1, p.stderr
    assert name in warnings[0] and value in warnings[0] and says in warnings[0]


def check(env, *args):
    """caracal info --check with only these CARACAL_* settings (the test harness's own stay)."""
    base = {k: "" for k in os.environ if k.startswith("CARACAL_") and not k.startswith("CARACAL_PYTEST")}
    clean = {k: v for k, v in os.environ.items() if k not in base}
    return subprocess.run([sys.executable, "-m", "caracal", "info", "--check", *map(str, args)], env=dict(clean, **env),
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("name,value,says", BAD + MORE_BAD +
                         [("CARACAL_REORDER_TIME", "soon", "not a positive number"),
                          ("CARACAL_WAIT", "busy", "not auto, futex, spin or nap"),
                          ("CARACAL_TOPOLOGY", "/nonexistent/topo.json", "CARACAL_TOPOLOGY ignored"),
                          ("CARACAL_PROFILE", "/nonexistent/p.json", "not writable"),
                          ("CARACAL_FOO", "1", "unknown setting")])
def test_info_check_names_each_problem(name, value, says):
    p = check({name: value})
    assert p.returncode == 2, p.stdout + p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and name in lines[0] and says in lines[0], p.stderr
    assert lines[0].startswith("caracal: ") and "1 problem" in p.stdout


def test_info_check_passes_valid_settings_and_reads_a_settings_file(tmp_path):
    good = {"CARACAL_BCAST": "nary:1 knomial:4@1k-64k#2-8 native", "CARACAL_ALLREDUCE": "node/shm top/ring@1m- recdbl",
            "CARACAL_SHM_CAP": "16m", "CARACAL_LOG": "algo,init", "CARACAL_SHM_CMA": "off",
            "CARACAL_PROFILE": str(tmp_path / "p.json")}
    p = check(good)
    assert p.returncode == 0 and p.stderr == "" and "valid" in p.stdout, p.stdout + p.stderr
    f = tmp_path / "settings.env"
    f.write_text("CARACAL_SPIN_US=-5\nCARACAL_SCAN=knomial:0\n")
    p = check(good, "--settings", f)
    assert p.returncode == 2 and "2 problems" in p.stdout, p.stdout + p.stderr
    assert "CARACAL_SPIN_US=-5" in p.stderr and "knomial:0" in p.stderr
    assert not (tmp_path / "p.json").exists()  # nothing was run
