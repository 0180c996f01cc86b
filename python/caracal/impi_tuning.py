"""Intel MPI's own settings as `caracal advise` gives them: the collective presets
(I_MPI_ADJUST_<COLL>=N) and the point-to-point knobs, checked against the installed library.

Intel MPI lists its variables with `impi_info` (its MPI_T control variables by their
environment names): `impi_info -e` prints every one, expert ones included, as a table
`| NAME | DEFAULT VALUE | DATA TYPE |`; `impi_info -v NAME` prints one variable's
description, for I_MPI_ADJUST_<COLL> with the accepted preset range ("range: 0-22").

Preset numbers: the Developer Reference of Intel MPI 2021 lists the algorithms of each
I_MPI_ADJUST_<COLL> in order, preset N being the N-th (DOCUMENTED below, 0 = the
library's own selection). Since 2021.14 the reference says presets are "algorithmic
derivatives" and the installed library accepts more numbers than it documents (2021.19:
bcast 0-22 for 14 documented algorithms). So the advisor measures every preset the
installed library accepts (its range from impi_info), names the documented ones by the
reference's name and the others "preset N (undocumented)", and recommends only what it
measured.
"""
import functools
import os
import re
import subprocess
from typing import Dict, List, Optional, Tuple

from . import mpilibs

# Intel MPI 2021 Developer Reference, "I_MPI_ADJUST Family Environment Variables": the
# algorithms of each collective in the order the reference numbers them (from 1).
DOCUMENTED: Dict[str, Tuple[str, ...]] = {
    "allgather": ("Recursive doubling", "Bruck's", "Ring", "Topology aware Gatherv + Bcast", "Knomial"),
    "allgatherv": ("Recursive doubling", "Bruck's", "Ring", "Topology aware Gatherv + Bcast"),
    "allreduce": ("Recursive doubling", "Rabenseifner's", "Reduce + Bcast", "Topology aware Reduce + Bcast",
                  "Binomial gather + scatter", "Topology aware binomial gather + scatter", "Shumilin's ring",
                  "Ring", "Knomial", "Topology aware SHM-based flat", "Topology aware SHM-based Knomial",
                  "Topology aware SHM-based Knary"),
    "alltoall": ("Bruck's", "Isend/Irecv + waitall", "Pair wise exchange", "Plum's"),
    "alltoallv": ("Isend/Irecv + waitall", "Plum's"),
    "barrier": ("Dissemination", "Recursive doubling", "Topology aware dissemination",
                "Topology aware recursive doubling", "Binomial gather + scatter",
                "Topology aware binomial gather + scatter", "Topology aware SHM-based flat",
                "Topology aware SHM-based Knomial", "Topology aware SHM-based Knary"),
    "bcast": ("Binomial", "Recursive doubling", "Ring", "Topology aware binomial",
              "Topology aware recursive doubling", "Topology aware ring", "Shumilin's", "Knomial",
              "Topology aware SHM-based flat", "Topology aware SHM-based Knomial",
              "Topology aware SHM-based Knary", "NUMA aware SHM-based (SSE4.2)", "NUMA aware SHM-based (AVX2)",
              "NUMA aware SHM-based (AVX512)"),
    "exscan": ("Partial results gathering", "Partial results gathering regarding layout of processes"),
    "gather": ("Binomial", "Topology aware binomial", "Shumilin's", "Binomial with segmentation"),
    "gatherv": ("Linear", "Topology aware linear", "Knomial"),
    "reduce_scatter": ("Recursive halving", "Pair wise exchange", "Recursive doubling", "Reduce + Scatterv",
                       "Topology aware Reduce + Scatterv"),
    "reduce_scatter_block": ("Recursive halving", "Pair wise exchange", "Recursive doubling", "Reduce + Scatter"),
    "reduce": ("Shumilin's", "Binomial", "Topology aware Shumilin's", "Topology aware binomial",
               "Rabenseifner's", "Topology aware Rabenseifner's", "Knomial", "Topology aware SHM-based flat",
               "Topology aware SHM-based Knomial", "Topology aware SHM-based Knary",
               "Topology aware SHM-based binomial"),
    "scan": ("Partial results gathering", "Topology aware partial results gathering"),
    "scatter": ("Binomial", "Topology aware binomial", "Shumilin's"),
    "scatterv": ("Linear", "Topology aware linear"),
}

# impi_info's "not defined" and -1: the library chooses (no fixed value to compare with)
UNSET = ("not defined", "-1", "")


def is_impi(mpi: Optional[str]) -> bool:
    """Is the mpilibs library ``mpi`` an Intel MPI: the `impi` entry, installed or not (its
    presets are named and forced the same way; what the installed library accepts comes from
    impi_info, and nothing without it), or a prefix that ships impi_info?"""
    if not mpi:
        return False
    if mpi == "impi":
        return True
    try:
        prefix = mpilibs.get(mpi).prefix
    except Exception:  # a name mpilibs does not know
        return False
    return prefix is not None and (prefix / "bin" / "impi_info").exists()


def _impi_info(mpi: str, *args: str) -> str:
    if not is_impi(mpi):
        return ""
    lib = mpilibs.get(mpi)
    exe = lib.prefix / "bin" / "impi_info"
    if not exe.exists():
        return ""
    try:
        return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60,
                              env=lib.environment()).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


@functools.lru_cache(maxsize=None)
def variables(mpi: str = "impi") -> Dict[str, str]:
    """{I_MPI_*: default value as impi_info prints it} of the installed Intel MPI ({} when it is not)."""
    out = {}
    for line in _impi_info(mpi, "-e").splitlines():
        m = re.match(r"\s*\|\s*(I_MPI_[A-Z0-9_]+)\s*\|\s*(.*?)\s*\|\s*MPI_[A-Z_]+\s*\|\s*$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def knob_exists(mpi: str, knob: str) -> bool:
    return knob in variables(mpi)


def adjust_var(coll: str) -> str:
    return f"I_MPI_ADJUST_{coll.upper()}"


@functools.lru_cache(maxsize=None)
def preset_range(mpi: str, coll: str) -> Optional[Tuple[int, int]]:
    """(lo, hi) of the presets I_MPI_ADJUST_<COLL> accepts, from impi_info -v; None when the
    installed library does not know the variable."""
    if not knob_exists(mpi, adjust_var(coll)):
        return None
    m = re.search(r"range:\s*(\d+)\s*-\s*(\d+)", _impi_info(mpi, "-v", adjust_var(coll)))
    return (int(m.group(1)), int(m.group(2))) if m else None


def preset_name(coll: str, n: int) -> str:
    """The 2021 reference's name of preset ``n`` ("preset N (undocumented)" beyond its list)."""
    doc = DOCUMENTED.get(coll, ())
    return doc[n - 1] if 1 <= n <= len(doc) else f"preset {n} (undocumented)"


def native_algorithms(mpi: str) -> Dict[str, List[Tuple[int, str]]]:
    """{collective: [(preset, label)]}: every preset the installed library accepts (0, its own
    selection, left out). Labels carry no "/" (caracal tune keys launches by them)."""
    out = {}
    for coll in DOCUMENTED:
        r = preset_range(mpi, coll)
        if r:
            out[coll] = [(n, f"preset{n}") for n in range(max(1, r[0]), r[1] + 1)]
    return out


def force_env(coll: str, preset) -> Dict[str, str]:
    """The environment that makes every call of ``coll`` run preset ``preset``."""
    return {adjust_var(coll): str(preset)}


def describe(coll: str, preset: int) -> str:
    return f"{adjust_var(coll)}={preset} ({preset_name(coll, preset)})"


def current_value(mpi: str, knob: str) -> Optional[str]:
    """The knob's value: the environment's, else impi_info's default; None where the library
    chooses it itself ("not defined", -1) or does not list the knob."""
    if os.environ.get(knob):
        return os.environ[knob]
    v = variables(mpi).get(knob)
    return None if v is None or v in UNSET else v
