"""caracal run with more ranks than cores makes waiting ranks yield (python/caracal/oversub.py):
Open MPI's mpi_yield_when_idle, MPICH through Caracal's own yielding wait loop; nothing
when every rank has a core; --no-yield and --env override it."""
import pytest

from caracal import oversub
from conftest import family


def test_settings_only_when_oversubscribed():
    assert oversub.yield_settings("openmpi", 2, cores=2) == {}
    assert oversub.yield_settings("mpich", 1, cores=4) == {}
    assert oversub.yield_settings("openmpi", 3, cores=2) == {"OMPI_MCA_mpi_yield_when_idle": "1"}
    assert oversub.yield_settings("mpich", 3, cores=2) == {"CARACAL_NATIVE_WAIT": "yield",
                                                           "CARACAL_NATIVE_BLOCKING": "nonblocking"}


def ranks_env(cli, mpi, n, *extra):
    """Run /usr/bin/env as n ranks under caracal run; each rank's environment lines."""
    p = cli("run", "-n", n, "--mpi", mpi, "--no-profile", *extra, "--", "/usr/bin/env", timeout=120)
    assert p.returncode == 0, p.stderr
    return p


KEY = {"openmpi": "OMPI_MCA_mpi_yield_when_idle=1", "mpich": "CARACAL_NATIVE_WAIT=yield"}


def test_run_applies_them(cli, mpi):
    n = oversub.usable_cores() + 1
    if n > 5:
        pytest.skip("too many cores to oversubscribe cheaply")
    p = ranks_env(cli, mpi, n)
    assert p.stdout.splitlines().count(KEY[family(mpi)]) == n
    assert "waiting ranks yield" in p.stderr and f"{n} ranks on {n - 1} cores" in p.stderr


def test_not_applied_with_a_core_each_or_no_yield(cli, mpi):
    p = ranks_env(cli, mpi, 1)
    assert KEY[family(mpi)] not in p.stdout.splitlines() and "yield" not in p.stderr
    n = oversub.usable_cores() + 1
    if n <= 5:
        p = ranks_env(cli, mpi, n, "--no-yield")
        assert "yield" not in p.stderr
        if family(mpi) == "mpich":  # (Open MPI's mpirun may set its own variable when it sees oversubscription)
            assert KEY[family(mpi)] not in p.stdout.splitlines()


def test_env_overrides_them(cli, mpi):
    n = oversub.usable_cores() + 1
    if n > 5:
        pytest.skip("too many cores to oversubscribe cheaply")
    var = KEY[family(mpi)].split("=")[0]
    p = ranks_env(cli, mpi, n, "--env", f"{var}=0")
    assert p.stdout.splitlines().count(f"{var}=0") == n


def test_library_settings_follow_no_yield(cli, mpi):
    """The library's own oversubscribed settings (mpilibs.py: Open MPI 5's yield_when_idle,
    MPICH 5's progress throttle, Intel MPI's I_MPI_THREAD_YIELD) reach every rank when ranks
    outnumber cores, and --no-yield leaves them out."""
    from caracal import mpilibs
    own = mpilibs.get(mpi).oversubscribed_env
    if not own:
        pytest.skip(f"{mpi} has no settings of its own for oversubscribed runs")
    n = oversub.usable_cores() + 1
    if n > 5:
        pytest.skip("too many cores to oversubscribe cheaply")
    lines = ranks_env(cli, mpi, n).stdout.splitlines()
    for k, v in own.items():
        assert lines.count(f"{k}={v}") == n, k
    if family(mpi) == "openmpi":
        return  # (its mpirun may set its own when it sees oversubscription)
    lines = ranks_env(cli, mpi, n, "--no-yield").stdout.splitlines()
    for k in own:
        assert not any(line.startswith(k + "=") for line in lines), k
