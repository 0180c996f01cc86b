"""Hostile or damaged documents: one line and exit 2 from every reader, never a traceback;
the profile writer never follows a planted symlink."""
import os
import subprocess

import pytest

from conftest import ROOT

DEEP = "[" * 100000 + "]" * 100000
BIG = '{"schema": "caracal.profile/1", "nranks": ' + "9" * 400 + "}"


@pytest.mark.parametrize("text", [DEEP, BIG, '{"schema": "caracal.topology/1", "ranks": 1e999}'])
@pytest.mark.parametrize("cmd", [("report",), ("nodemap", "--check"), ("map", "--topology")])
def test_reader_gives_one_line(cli, tmp_path, text, cmd):
    f = tmp_path / "bad.json"
    f.write_text(text)
    args = list(cmd) + [f]
    if cmd[0] == "map":
        args = ["map", "--profile", f, "--topology", f, "--out", tmp_path / "rf"]
    p = cli(*args)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_profile_temp_file_does_not_follow_symlink(tmp_path):
    """Symlinks planted at the temporary names the rank would use (its pid is known to a
    wrapper that execs the program) must not be written through."""
    victim = tmp_path / "victim"
    victim.write_text("precious")
    out = tmp_path / "p.json"
    lib = ROOT / "build" / "lib" / "libcaracal.so"
    prog = ROOT / "build" / "bin" / "prof_workload"
    if not lib.exists() or not prog.exists():
        pytest.fail("build/ missing: run make test")
    plant = (f'for n in "{out}.tmp$$" "{out}.tmp$$.0" "{out}.tmp$$.1"; do ln -s "{victim}" "$n"; done; '
             f'exec "{prog}"')
    env = dict(os.environ, LD_PRELOAD=str(lib), CARACAL_PROFILE=str(out), OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    r = subprocess.run(["mpiexec.openmpi", "-n", "1", "sh", "-c", plant], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert victim.read_text() == "precious"
    assert out.read_text().lstrip().startswith("{")
