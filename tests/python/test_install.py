"""Installation and release: one version number everywhere, the man pages are the CLI's own
help, the Spack recipe matches the build (offline: CI has no Spack), and the Python CLI
installed with `pip install .` into a fresh virtual environment finds an installed Caracal
through its prefix, with no build tree. The C side of installation (layout, find_package,
pkg-config, modulefile, make dist) is tests/install (ctest)."""
import argparse
import importlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import BUILDS, ROOT

sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "packaging" / "spack"))
import check_recipe  # noqa: E402
import gen_manpages  # noqa: E402

from caracal import __version__  # noqa: E402
from caracal.cli import COMMANDS, build_parser  # noqa: E402

VERSION = (ROOT / "python" / "caracal" / "VERSION").read_text().strip()


def clean_env(**extra):
    """The environment of a user who has none of this source tree set up."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "CARACAL_ROOT", "CARACAL_PREFIX", "VIRTUAL_ENV")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.update(extra)
    return env


# --- one version ---------------------------------------------------------------------------------

def test_one_version_number(cli):
    assert __version__ == VERSION and VERSION.count(".") == 2
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in meta["project"] and "version" in meta["project"]["dynamic"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"file": "python/caracal/VERSION"}
    assert "VERSION" in meta["tool"]["setuptools"]["package-data"]["caracal"]
    assert cli("--version", check=True).stdout.strip() == f"caracal {VERSION}"
    assert f"## [{VERSION}]" in (ROOT / "CHANGELOG.md").read_text()


def test_library_version_symbol_agrees(mpi, cli):
    """caracal-info --version prints caracal_version() of the library it is linked with."""
    build = BUILDS[mpi]
    out = subprocess.run([str(build / "bin" / "caracal-info"), "--version"], capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == VERSION == cli("--version", check=True).stdout.split()[1]
    real = (build / "lib" / "libcaracal.so").resolve().name
    assert real == f"libcaracal.so.{VERSION}"


# --- man pages -------------------------------------------------------------------------------

def test_man_pages_are_the_cli_help(tmp_path):
    assert gen_manpages.main(["gen_manpages.py", str(tmp_path)]) == 0
    pages = {p.name: p.read_text() for p in tmp_path.iterdir()}
    # a command's name is its module's NAME (module tune_app is `caracal tune-app`)
    names = [importlib.import_module(f"caracal.commands.{m}").NAME for m in COMMANDS]
    assert {"caracal.1", *(f"caracal-{c}.1" for c in names)} <= set(pages)
    subparsers = next(a for a in build_parser()._actions if a.dest == "command").choices
    for name in names:
        text = pages[f"caracal-{name}.1"]
        assert text.startswith(f".TH CARACAL-{name.upper()} 1 \"\" \"caracal {VERSION}\"")
        for action in subparsers[name]._actions:  # every option of the parser is on its page
            for opt in action.option_strings if action.help is not argparse.SUPPRESS else ():
                assert f"\\fB{opt.replace('-', chr(92) + '-')}\\fR" in text, (name, opt)
        assert f"caracal-{name}" in pages["caracal.1"].replace("\\-", "-")
    # no dates, terminal widths or paths: the same bytes every time
    again = tmp_path / "again"
    gen_manpages.main(["gen_manpages.py", str(again)])
    assert all((again / n).read_text() == t for n, t in pages.items())


def test_build_installs_the_same_man_pages(mpi, tmp_path):
    gen_manpages.main(["gen_manpages.py", str(tmp_path)])
    built = BUILDS[mpi] / "man" / "man1"
    assert sorted(p.name for p in built.iterdir()) == sorted(p.name for p in tmp_path.iterdir())
    assert (built / "caracal-run.1").read_text() == (tmp_path / "caracal-run.1").read_text()


# --- Spack recipe (offline) ------------------------------------------------------------------

def test_spack_recipe_matches_the_build():
    assert check_recipe.problems() == []
    rec = check_recipe.load_recipe()
    assert [v for v, _ in rec.versions] == [VERSION] and rec.variants == {"cli": True, "plots": True}


@pytest.mark.parametrize("old,new,problem", [
    (f'version("{VERSION}")', 'version("9.9.9")', "newest version in the recipe is 9.9.9"),
    ('self.define_from_variant("CARACAL_INSTALL_CLI", "cli")', 'self.define("CARACAL_NO_SUCH", 1)',
     "the recipe sets CARACAL_NO_SUCH, which the build does not declare"),
    ('depends_on("mpi")', 'depends_on("zlib")', "the recipe does not depend on mpi"),
    ('from spack.package import *', 'from spack.package import *\nimport spack.no_such_module',
     "ModuleNotFoundError"),
    ('depends_on("py-rich@12:", type="run", when="+cli")', 'depends_on("py-rich@12:", type="build")',
     'the CLI imports rich (pyproject.toml), but the recipe has no depends_on("py-rich"'),
    # matplotlib only for `caracal report`'s plots, but required (the Spack run of 2026-11-26
    # installed a CLI whose --html could not run)
    ('depends_on("py-matplotlib@3.5:", type="run", when="+cli +plots")', '',
     'the CLI imports matplotlib (pyproject.toml), but the recipe has no depends_on("py-matplotlib"'),
    # the site directory of a `pip install --prefix` external, which Spack's own PYTHONPATH misses
    ('"lib/python3*/site-packages", ', '',
     "leaves a Python dependency off PYTHONPATH: /"),
])
def test_spack_recipe_check_finds_mismatches(tmp_path, old, new, problem):
    text = check_recipe.RECIPE.read_text()
    assert old in text
    broken = tmp_path / "package.py"
    broken.write_text(text.replace(old, new))
    assert any(problem in p for p in check_recipe.problems(broken)), check_recipe.problems(broken)


# --- pip install . into a fresh venv, an installed prefix, no build tree ------------------------

@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A fresh venv with `pip install .` of a copy of this project (a copy: pip builds in the
    tree it is given, and build/ here is CMake's). --no-deps: numpy and matplotlib are for
    `caracal report --plots` only, and nothing here needs them. The venv sees the system's
    site-packages (for the build backend); no caracal is there (asserted below)."""
    base = tmp_path_factory.mktemp("pipinstall")
    src = base / "src"
    src.mkdir()
    for f in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / f, src / f)
    shutil.copytree(ROOT / "python", src / "python", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    env = clean_env()
    # Offline and quick: this interpreter's pip aimed at the venv (pip --python) instead of a
    # second pip bootstrapped into it, and the build backend from the system's site-packages
    # (Debian's setuptools and wheel) instead of one downloaded into an isolated build env.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(base / "venv")],
                   check=True, env=env, timeout=120)
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(base / "venv" / "bin" / "python"),
                          "install", "-q", "--no-deps", "--no-build-isolation", "--no-index", str(src)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    return base / "venv"


@pytest.fixture
def prefix(mpi, tmp_path):
    """This library's build installed with cmake --install into a scratch prefix."""
    p = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", str(BUILDS[mpi]), "--prefix", str(p)], check=True,
                   capture_output=True, timeout=120)
    return p


def mpi_program(mpi, tmp_path):
    """A plain MPI program (no Caracal in it) that Caracal must interpose on when preloaded."""
    c = tmp_path / "plain.c"
    c.write_text('#include <mpi.h>\n#include <stdio.h>\nint main(int c, char **v) { int r, s, x;\n'
                 '  MPI_Init(&c, &v); MPI_Comm_rank(MPI_COMM_WORLD, &r);\n'
                 '  MPI_Allreduce(&r, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); x = s;\n'
                 '  MPI_Comm_size(MPI_COMM_WORLD, &s); if (!r) printf("sum %d of %d\\n", x, s);\n'
                 '  MPI_Finalize(); return 0; }\n')
    exe = tmp_path / "plain"
    subprocess.run([f"mpicc.{mpi}", str(c), "-o", str(exe)], check=True, timeout=120)
    return exe


def test_pip_installed_cli_uses_installed_prefix(venv, prefix, mpi, tmp_path):
    caracal = venv / "bin" / "caracal"
    site = subprocess.run([str(venv / "bin" / "python"), "-c", "import caracal; print(caracal.__file__)"],
                          capture_output=True, text=True, env=clean_env(), check=True, cwd=tmp_path).stdout
    assert site.startswith(str(venv)), site  # the venv's copy, not this source tree
    assert subprocess.run([str(caracal), "--version"], capture_output=True, text=True, env=clean_env(),
                          cwd=tmp_path).stdout.strip() == f"caracal {VERSION}"
    exe = mpi_program(mpi, tmp_path)
    lib = prefix / "lib" / "libcaracal.so"
    on_path = clean_env(PATH=f"{prefix / 'bin'}:{os.environ['PATH']}")
    by_var = clean_env(CARACAL_PREFIX=str(prefix))
    for env in (on_path, by_var):  # found through PATH (caracal-info) and through CARACAL_PREFIX
        info = subprocess.run([str(caracal), "info"], capture_output=True, text=True, env=env, cwd=tmp_path)
        assert info.returncode == 0 and f"{mpi:8s} library: {lib};" in info.stdout, info.stdout + info.stderr
        prof = tmp_path / f"p-{len(env)}.json"
        run = subprocess.run([str(caracal), "run", "-n", "2", "--mpi", mpi, "--profile", str(prof), "--force",
                              "--", str(exe)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
        assert run.returncode == 0 and "sum 1 of 2" in run.stdout, run.stdout + run.stderr
        doc = json.loads(prof.read_text())  # written by the preloaded prefix library's profiler
        assert doc["schema"] == "caracal.profile/1" and doc["nranks"] == 2 and doc["caracal_version"] == VERSION
    record = prefix / "share" / "caracal" / "install.json"
    doc = json.loads(record.read_text())
    record.write_text(json.dumps(dict(doc, version="0.0.1")))
    old = subprocess.run([str(caracal), "run", "-n", "2", "--mpi", mpi, "--no-profile", "--", str(exe)],
                         capture_output=True, text=True, env=by_var, cwd=tmp_path)
    assert old.returncode == 2 and f"is version 0.0.1, this caracal command is {VERSION}" in old.stderr, old.stderr
    record.write_text(json.dumps(doc))
    other = "mpich" if mpi == "openmpi" else "openmpi"
    wrong = subprocess.run([str(caracal), "run", "-n", "2", "--mpi", other, "--no-profile", "--", str(exe)],
                           capture_output=True, text=True, env=by_var, cwd=tmp_path)
    assert wrong.returncode == 2 and f"is built for {mpi}, not {other}; add --mpi {mpi}" in wrong.stderr


def test_pip_installed_cli_without_any_caracal(venv, tmp_path):
    caracal = str(venv / "bin" / "caracal")
    none = subprocess.run([caracal, "run", "-n", "2", "--", "/bin/true"], capture_output=True, text=True,
                          env=clean_env(), cwd=tmp_path)
    assert none.returncode == 2 and "no Caracal library found for openmpi" in none.stderr, none.stderr
    bad = subprocess.run([caracal, "run", "-n", "2", "--", "/bin/true"], capture_output=True, text=True,
                         env=clean_env(CARACAL_PREFIX=str(tmp_path)), cwd=tmp_path)
    assert bad.returncode == 2 and f"CARACAL_PREFIX={tmp_path} is not a Caracal installation" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
