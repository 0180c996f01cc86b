"""The MPI library table (python/caracal/mpilibs.py): launch lines, environments, the CMake
settings and launcher script of each build, `caracal info` listing and --compiler, and one
profiled `caracal run` on each project-installed library that is built."""
import json
import os
import shlex
import subprocess

import pytest

from caracal import launch, mpilibs, paths
from caracal.errors import UsageError

from conftest import ROOT


def test_every_library_has_a_launch_line_with_its_environment():
    for name in mpilibs.NAMES:
        lib = mpilibs.get(name)
        cmd = launch.mpiexec_command(lib, 3, ["./app", "x"], env={"CARACAL_X": "a b"}) if lib.installed() else None
        if cmd is None:
            continue
        assert cmd[-4:] == ["-n", "3", "./app", "x"]
        if lib.family == "openmpi":
            assert "-x" in cmd and "CARACAL_X=a b" in cmd
        else:
            i = cmd.index("-genv")
            assert cmd[i:i + 3] == ["-genv", "CARACAL_X", "a b"]
        if cmd[0] == "sh":  # removes a stale session directory first (pid_session), then execs
            assert lib.pid_session and cmd[3] == "caracal-launch"
            cmd = cmd[4:]
        exe = cmd.index(lib.mpiexec)
        lead = dict(a.split("=", 1) for a in cmd[1:exe]) if cmd[0] == "env" else {}
        for k, v in lib.env.items():  # what the library needs leads the command unless already set
            if os.environ.get(k) != v and not k.endswith("PATH"):
                assert lead[k] == v
    assert launch.mpiexec_command("openmpi", 2, ["a"])[:4] == ["mpiexec.openmpi", "--oversubscribe", "--bind-to", "none"]
    assert launch.mpiexec_command("mpich", 2, ["a"]) == ["mpiexec.mpich", "-n", "2", "a"]


def test_library_specific_environment():
    o5 = mpilibs.get("openmpi5")
    assert o5.env["OPAL_PREFIX"] == str(mpilibs.mpi_home() / "openmpi5")
    impi = mpilibs.get("impi")
    env = impi.environment(base={"LD_LIBRARY_PATH": "/x", "FI_PROVIDER": "shm"})
    assert env["I_MPI_ROOT"] == str(mpilibs.mpi_home() / "impi")
    assert env["LD_LIBRARY_PATH"].endswith(":/x") and "caracal-shim" in env["LD_LIBRARY_PATH"]
    assert env["FI_PROVIDER"] == "shm"  # the user's choice stays
    assert impi.environment(base={})["FI_PROVIDER"] == "tcp"


def test_build_dirs_and_which_builds_run_where():
    assert paths.build_dir("openmpi") == ROOT / "build" and paths.build_dir("mpich") == ROOT / "build-mpich"
    for b in ("openmpi5", "mpich5", "impi", "abi"):
        assert paths.build_dir(b) == ROOT / f"build-{b}"
    assert mpilibs.build_library("abi") == ("mpich5", "mpi5")
    # an MPICH-ABI build runs on the MPICH-ABI libraries, the MPI-5 ABI build on MPICH 5 and Intel MPI
    for r in ("mpich5", "impi"):
        assert "mpich" in mpilibs.BUILD_RUNS_ON[r] and "abi" in mpilibs.BUILD_RUNS_ON[r]
    assert mpilibs.BUILD_RUNS_ON["openmpi"] == ["openmpi"]
    with pytest.raises(UsageError):
        paths.build_dir("lam")
    with pytest.raises(UsageError):
        mpilibs.get("lam")


def test_prefix_detection(tmp_path):
    (tmp_path / "bin").mkdir()
    with pytest.raises(UsageError, match="not an Open MPI, MPICH or Intel MPI installation"):
        mpilibs.get("openmpi", str(tmp_path))
    (tmp_path / "bin" / "ompi_info").write_text("")
    lib = mpilibs.get("mpich", str(tmp_path))
    assert lib.name == "openmpi5" and lib.mpiexec == str(tmp_path / "bin" / "mpiexec")
    assert lib.env["OPAL_PREFIX"] == str(tmp_path)


@pytest.mark.parametrize("build", mpilibs.BUILDS)
def test_cmake_settings_and_launcher_script(build, tmp_path):
    lib = mpilibs.get(mpilibs.build_library(build)[0])
    if not lib.installed():
        pytest.skip(f"{lib.title} not installed")
    text = mpilibs.cmake(build, str(tmp_path))
    settings = dict(line[len("set("):-1].split(" ", 1) for line in text.splitlines())
    assert settings["CARACAL_MPI_FAMILY"] == f'"{lib.family}"'
    assert settings["CARACAL_MPI_ABI"] == f'"{mpilibs.build_library(build)[1]}"'
    script = (tmp_path / "caracal-mpiexec").read_text()
    assert f"exec {shlex.quote(lib.mpiexec)}" in script
    for r in mpilibs.BUILD_RUNS_ON:
        assert (f"  {r})" in script) == (build in mpilibs.BUILD_RUNS_ON[r])
    bad = subprocess.run(["sh", str(tmp_path / "caracal-mpiexec"), "-n", "1", "true"], capture_output=True,
                         text=True, env=dict(os.environ, CARACAL_TEST_MPI="nosuch"))
    assert bad.returncode == 2 and "does not run on nosuch" in bad.stderr
    # what an installation names as its compiler: the library's own command, never a file of
    # the build tree (Intel MPI's build compiles through a caracal-mpicc that sets I_MPI_ROOT)
    command = settings["CARACAL_MPI_CC_COMMAND"].strip('"')
    assert command == lib.compiler_command(mpi5=build == "abi") and str(tmp_path) not in command
    assert settings["CARACAL_MPI_CC_PROGRAM"].strip('"') == (lib.abi_cc if build == "abi" else lib.cc)[0]
    # the tests' per-library launch settings: binding (Intel MPI pins ranks itself unless told) and
    # where the library's own shm files go in the small-/dev/shm tests
    want = {"impi": '"I_MPI_PIN=0"'}.get(build, '""')
    assert settings["CARACAL_MPI_UNPINNED_ENV"] == want
    elsewhere = settings["CARACAL_MPI_SHM_ELSEWHERE_ENV"].strip('"')
    assert ("/tmp" in elsewhere) == (lib.name in ("openmpi", "openmpi5", "impi"))


@pytest.mark.parametrize("name", mpilibs.BUILDS)
def test_info_compiler_prints_the_command_last(cli, name):
    lib = mpilibs.get(mpilibs.build_library(name)[0])
    proc = cli("info", "--mpi", name, "--compiler")
    if not lib.installed():
        assert proc.returncode == 2 and "not installed" in proc.stderr
        return
    last = proc.stdout.strip().splitlines()[-1]
    words = shlex.split(last)
    exe = words[words.index("env") + 1 + len(lib.compile_env()) if words[0] == "env" else 0]
    assert os.path.basename(exe).startswith("mpicc")
    if name == "abi":
        assert "mpicc_abi" in exe


def test_info_lists_every_library(cli):
    out = cli("info").stdout
    for name in mpilibs.NAMES:
        assert f"  {name} " in out and mpilibs.get(name).title in out


@pytest.mark.parametrize("name", ["openmpi5", "mpich5", "impi"])
def test_run_profiles_on_the_project_installed_library(cli, name, tmp_path):
    """caracal run --mpi NAME with its own build: the launcher, environment and preload work
    (the profile is written and counts the program's calls on every rank)."""
    exe = paths.build_dir(name) / "bin" / "prof_workload"
    if not exe.exists():
        pytest.skip(f"build-{name} not built")
    out = tmp_path / "p.json"
    proc = cli("run", "--mpi", name, "-n", "2", "--profile", out, "--", exe, timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["nranks"] == 2 and [r["rank"] for r in doc["ranks"]] == [0, 1]
    assert not any(r.get("partial") for r in doc["ranks"])
    assert any(c["call"] == "MPI_Allreduce" and c["count"] > 0 for c in doc["calls"])
