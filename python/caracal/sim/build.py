"""Building libcaracal and a program for SimGrid SMPI (docs/simulate.md "Building").

SMPI's mpi.h declares every MPI_* weak and every PMPI_* strong, and smpicc links a program
as a shared object that smpirun loads once per rank (dlopen privatization: each rank its own
copy of every global). So Caracal's sources are compiled with smpicc into a static archive
linked whole (-Wl,--whole-archive: a plain -l archive is not pulled in, nothing refers to it
before MPI_* resolve to SMPI's weak ones) into the program: its strong MPI_* win and every
rank has its own Caracal state. LD_PRELOAD would need -no-privatize, one Caracal shared by
all ranks. Caracal's thread-locals are built as plain globals (-D__thread=): every simulated
rank runs on the one host thread, so a thread-local would be shared by all ranks, while
globals are privatized per rank (run.py: smpi/privatization:mmap). Caracal's own malloc and
calloc are the C library's (-DSMPI_NO_OVERRIDE_MALLOC): smpicc's forced smpi_helpers.h would
give every block of at least smpi/auto-shared-malloc-thresh bytes one physical copy shared by
all ranks allocating at that line, garbage for what Caracal decides with (the hierarchy's keys
at 8,192 ranks: every rank saw the same). The program's own allocations keep SMPI's rule.
The archive is cached by the hash of the sources and of smpicc's version.
"""
import hashlib
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import List

from .. import mpilibs
from ..errors import UsageError

SOURCE_DIRS = ("core", "prof", "map", "coll", "coll/*", "ml", "sbgp", "bcol/p2p", "bcol/shm")
# thread-locals become per-rank globals (see above); their tls_model attributes vanish; Caracal's
# memory is each rank's own, never auto-shared (see above). CFLAGS[:2] also build programs.
CFLAGS = ["-O2", "-g", "-D__thread=", "-Dtls_model(m)=unused", "-DSMPI_NO_OVERRIDE_MALLOC"]
LIBS = ["-lhwloc", "-ldl", "-lm"]


def smpicc() -> str:
    exe = shutil.which("smpicc")
    if not exe:
        raise UsageError("smpicc not found: install SimGrid (Debian: apt-get install libsimgrid-dev)")
    return exe


def source_root() -> Path:
    src = mpilibs.root() / "src"
    if not (src / "interpose" / "gen_wrappers.py").is_file():
        raise UsageError(f"caracal simulate builds Caracal from its sources, and {src} has none "
                         "(run it from a source tree, or set CARACAL_ROOT)")
    return src


def sources(src: Path) -> List[Path]:
    out = []
    for d in SOURCE_DIRS:
        out += sorted(src.glob(f"{d}/*.c"))
    return out


def _version() -> str:
    try:
        return subprocess.run([smpicc(), "--version"], capture_output=True, text=True).stdout
    except OSError:
        return ""


def _digest(src: Path, files: List[Path]) -> str:
    h = hashlib.sha256(_version().encode())
    h.update(" ".join(CFLAGS).encode())
    for f in files + sorted(src.glob("**/*.h")) + sorted(src.glob("**/*.def")) + \
            [src / "interpose" / "gen_wrappers.py", src / "interpose" / "mpi_h.c"]:
        h.update(str(f.relative_to(src)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "caracal" / "smpi"


def _run(cmd, what):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        msg = (r.stderr or r.stdout).strip().splitlines()
        raise UsageError(f"{what} failed: {' '.join(str(c) for c in cmd[:3])} ...: "
                         f"{msg[-1] if msg else 'exit ' + str(r.returncode)}")
    return r


def library(jobs: int = 0, log=None) -> Path:
    """libcaracal-smpi.a for this source tree, built once (cached by content hash)."""
    src = source_root()
    files = sources(src)
    out = cache_dir() / _digest(src, files)
    lib = out / "libcaracal-smpi.a"
    if lib.is_file():
        return lib
    cc = smpicc()
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "obj").mkdir(parents=True)
    if log:
        log(f"building libcaracal for SMPI ({len(files)} files) in {out}")
    _run([cc, "-E", "-P", str(src / "interpose" / "mpi_h.c"), "-o", str(tmp / "mpi_h.i")], "preprocessing mpi.h")
    _run([sys.executable, str(src / "interpose" / "gen_wrappers.py"), str(tmp / "mpi_h.i"),
          str(src / "core" / "interpose.def"), str(tmp / "wrappers.c"), str(tmp / "gen_funcs.h")],
         "generating the wrappers")
    inc = ["-I", str(src.parent / "include"), "-I", str(src), "-I", str(src / "core"), "-I", str(tmp)]
    defs = [f'-DCARACAL_VERSION="{_caracal_version()}"']

    def compile_one(i_f):
        i, f = i_f
        obj = tmp / "obj" / f"{i:03d}_{f.stem}.o"
        _run([cc, *CFLAGS, *defs, *inc, "-c", str(f), "-o", str(obj)], f"compiling {f.name}")
        return obj

    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        objs = list(pool.map(compile_one, enumerate(files + [tmp / "wrappers.c"])))
    _run(["ar", "rcs", str(tmp / "libcaracal-smpi.a"), *map(str, objs)], "archiving")
    shutil.rmtree(tmp / "obj")
    if out.exists():  # another build finished first: same content
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        tmp.rename(out)
    return lib


def _caracal_version() -> str:
    from .. import __version__
    return __version__


def program(source: Path, lib: Path, out: Path, extra: List[str] = ()) -> Path:
    """The program linked with the whole archive (its MPI_* override SMPI's weak ones)."""
    if not source.is_file():
        raise UsageError(f"{source}: no such C source file")
    if source.suffix != ".c":
        raise UsageError(f"{source}: caracal simulate builds C programs (PROGRAM.c)")
    include = source_root().parent / "include"
    # -Bsymbolic: the program's calls to MPI_* bind to Caracal's, inside the program. smpirun
    # loads the program once (mmap privatization) after libsimgrid, whose MPI_* would
    # otherwise come first in the global scope; dlopen privatization binds locally by itself
    _run([smpicc(), *CFLAGS[:2], "-I", str(include), *extra, "-Wl,-Bsymbolic", str(source), "-Wl,--whole-archive", str(lib),
          "-Wl,--no-whole-archive", *LIBS, "-o", str(out)], f"building {source.name}")
    return out


def plain_program(source: Path, out: Path) -> Path:
    """The program on SMPI alone (the native baseline)."""
    if not source.is_file():
        raise UsageError(f"{source}: no such C source file")
    _run([smpicc(), *CFLAGS[:2], str(source), "-lm", "-o", str(out)], f"building {source.name}")
    return out


NODEMAP_SOURCES = ("main", "place", "pingpong", "measure", "levels", "output")


def nodemap_program(out: Path) -> Path:
    """caracal-nodemap (tools/nodemap) for SMPI, without Caracal (the tool's own traffic is
    never interposed, as in the CMake build): latency measured inside a simulation, with
    MC-MPI's triangle pruning (bench/simulate/mcmpi_mapping.py)."""
    root = source_root().parent
    srcs = [root / "tools" / "nodemap" / f"{f}.c" for f in NODEMAP_SOURCES]
    srcs += [root / "src" / "map" / "topology_read.c", root / "src" / "map" / "json_read.c"]
    _run([smpicc(), *CFLAGS[:2], f'-DCARACAL_VERSION="{_caracal_version()}"', "-I", str(root / "src" / "map"),
          *map(str, srcs), "-lhwloc", "-lm", "-o", str(out)], "building caracal-nodemap")
    return out
