"""The native libraries' own tuning files: which algorithms Open MPI and MPICH can be
made to run, the environment that forces one of them for a launch, and the files
that make each library pick a given algorithm for given communicator and message
sizes on its own, without Caracal.

Cells (``write_openmpi_rules``, ``write_mpich_json``) are dicts::

    {"coll": "bcast", "comm_size": 8, "bytes_lo": 65536, "alg": 6}
    optional: "comm_size_hi" (inclusive, default comm_size: the cell is for exactly
              that many ranks) and "bytes_hi" (exclusive; default: up to the next
              cell's bytes_lo for the same communicator sizes, or unbounded).

``bytes_lo``/``bytes_hi`` are in Caracal's selection unit (caracal_coll_call_bytes):
the whole vector for bcast/reduce/allreduce/scan/exscan, one rank's block for
gather/scatter/allgather/alltoall/reduce_scatter_block, the mean block for
allgatherv/reduce_scatter, 0 for barrier/gatherv/scatterv/alltoallv. Each writer
converts to the size its library compares (documented per library below) and
leaves every cell not given to the library's own default decision. Cells a
library's file cannot express exactly are not written; the writers return one
line per such cell saying why.

Facts read from the sources of the installed versions (Open MPI v4.1.4, MPICH v4.0.2)
are cited where used; algorithm numbers and names are read at run time from the
installed library (``ompi_info``, ``libmpich``/``mpivars``).
"""
import functools
import glob
import json
import os
import re
import shutil
import subprocess
from typing import Dict, List, Optional, Sequence, Tuple

from . import mpilibs
from .errors import UsageError

MPIS = ("openmpi", "mpich")
COLLECTIVES = ("barrier", "bcast", "reduce", "allreduce", "allgather", "allgatherv",
               "gather", "gatherv", "scatter", "scatterv", "alltoall", "alltoallv",
               "reduce_scatter", "reduce_scatter_block", "scan", "exscan")

# Caracal's byte count B of a call, times what, is the size a library compares.
# "B": the same number; "Bn": B times the communicator size; "full": the library's
# size does not follow B (or differs between ranks), so only cells covering every
# size (bytes_lo 0, no bytes_hi) can be written.
_B, _BN, _FULL = "B", "Bn", "full"


class NativeTuningError(UsageError):
    """A cell or library the native tuning files cannot handle."""


def _tuning(mpi: str) -> Dict[str, str]:
    """The native tuning interface of library ``mpi`` (python/caracal/mpilibs.py's `tuning`:
    kind "openmpi" or "mpich", and where its files are). Open MPI 5 has Open MPI 4.1's
    coll/tuned, MPICH 5 MPICH 4.0's csel trees; Intel MPI's own (I_MPI_ADJUST_*) is not written."""
    if mpi not in mpilibs.NAMES:
        raise NativeTuningError(f"unknown MPI library '{mpi}' (choose {', '.join(mpilibs.NAMES)})")
    lib = mpilibs.get(mpi)
    if not lib.tuning:
        raise NativeTuningError(f"{lib.title}: its own collective tuning is not supported (only its default is measured)")
    return lib.tuning


def _kind(mpi: str) -> str:
    """"openmpi" or "mpich": which of the two tuning interfaces library ``mpi`` has."""
    return _tuning(mpi)["kind"]


def _check_mpi(mpi: str) -> None:
    _tuning(mpi)


# --------------------------------------------------------------------------------------
# Open MPI 4.1.x: coll/tuned dynamic rules
# --------------------------------------------------------------------------------------
# Collective ids: enum COLLTYPE in ompi/mca/coll/base/coll_base_functions.h (v4.1.4,
# lines 44-68): ALLGATHER=0 ALLGATHERV ALLREDUCE ALLTOALL ALLTOALLV ALLTOALLW BARRIER
# BCAST EXSCAN GATHER GATHERV REDUCE REDUCESCATTER REDUCESCATTERBLOCK SCAN SCATTER
# SCATTERV ... COLLCOUNT=22. gatherv/scatterv have no tuned algorithms in 4.1
# (coll_tuned_module.c sets them to NULL), so they are not here.
OMPI_COLL_ID = {"allgather": 0, "allgatherv": 1, "allreduce": 2, "alltoall": 3,
                "alltoallv": 4, "barrier": 6, "bcast": 7, "exscan": 8, "gather": 9,
                "reduce": 11, "reduce_scatter": 12, "reduce_scatter_block": 13,
                "scan": 14, "scatter": 15}
OMPI_COLLCOUNT = 22

# The size the rules compare (coll_tuned_decision_dynamic.c, v4.1.4): the whole vector
# for bcast/reduce/allreduce (type size * count); type size * count * comm size for
# allgather/alltoall/gather/scatter/reduce_scatter_block; the total of the receive
# counts for reduce_scatter; the mean block for allgatherv; 0 for barrier and alltoallv;
# type size * comm size (the count is ignored) for scan and exscan. scatter uses the
# send type and count, significant only at the root, so ranks may disagree: only
# whole-range cells.
OMPI_SIZE_KIND = {"bcast": _B, "reduce": _B, "allreduce": _B, "allgatherv": _B,
                  "allgather": _BN, "alltoall": _BN, "gather": _BN,
                  "reduce_scatter": _BN, "reduce_scatter_block": _BN,
                  "barrier": _FULL, "alltoallv": _FULL, "scan": _FULL, "exscan": _FULL,
                  "scatter": _FULL}

# faninout written for every rule: only bcast "chain" and reduce "chain" read it
# (as the chain fanout); 4 is coll_tuned's default init_tree_fanout/init_chain_fanout,
# which the forced (MCA) path passes too, so a rule runs what force_env measured.
OMPI_FANINOUT = 4


def _openmpi_unusable(c) -> Optional[str]:
    """Open MPI's "two_proc" algorithms (coll_base_*_two_procs) fail with an error on
    any other communicator size than 2."""
    if c.name == "two_proc" and not (c.n_lo == c.n_hi == 2):
        return "two_proc works on exactly 2 ranks only"
    return None


def _parse_ompi_info(text: str) -> Dict[str, List[Tuple[int, str]]]:
    """Algorithms per collective from `ompi_info --param coll tuned --level 9 --parsable`:
    lines mca:coll:tuned:param:coll_tuned_<coll>_algorithm:enumerator:value:<id>:<name>."""
    algs: Dict[str, List[Tuple[int, str]]] = {}
    pat = re.compile(r"^mca:coll:tuned:param:coll_tuned_([a-z_]+)_algorithm:enumerator:value:(\d+):(\S+)\s*$")
    for line in text.splitlines():
        m = pat.match(line)
        if not m:
            continue
        coll, num, name = m.group(1), int(m.group(2)), m.group(3)
        if coll in OMPI_COLL_ID and num != 0:  # 0 is "ignore": the fixed decision
            algs.setdefault(coll, []).append((num, name))
    return {c: sorted(v) for c, v in algs.items()}


def info_path(mpi: str = "openmpi") -> str:
    """The ompi_info of Open MPI ``mpi`` (Debian's on PATH, Open MPI 5's in its prefix)."""
    info = _tuning(mpi)["info"]
    exe = info if os.sep in info and os.access(info, os.X_OK) else shutil.which(info)
    if exe is None:
        raise NativeTuningError(f"{info} not found: {mpilibs.get(mpi).title} is not installed (run: make setup MPI={mpi})")
    return exe


def _openmpi_algorithms(mpi: str = "openmpi") -> Dict[str, List[Tuple[int, str]]]:
    return _ompi_info_algorithms(info_path(mpi), tuple(sorted(mpilibs.get(mpi).environment().items())))


@functools.lru_cache(maxsize=None)
def _ompi_info_algorithms(exe: str, env: Tuple[Tuple[str, str], ...]) -> Dict[str, List[Tuple[int, str]]]:
    p = subprocess.run([exe, "--param", "coll", "tuned", "--level", "9", "--parsable"],
                       capture_output=True, text=True, timeout=60, env=dict(env))
    algs = _parse_ompi_info(p.stdout)
    if p.returncode != 0 or not algs:
        raise NativeTuningError(f"ompi_info listed no coll/tuned algorithms: {p.stderr.strip()[:200]}")
    return algs


# --------------------------------------------------------------------------------------
# MPICH 4.0.x: csel JSON trees
# --------------------------------------------------------------------------------------
# Two trees decide a blocking collective in MPICH 4.0.2 with the ch4 device:
#   1. ch4 (MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE, src/mpid/ch4/src/ch4_coll.h):
#      picks a "composition" (node-aware ones for bcast/reduce/allreduce/barrier/scan,
#      or the flat call to the netmod, which for ucx is MPIR_<Coll>_impl);
#   2. MPIR (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE, generated mpir_coll.c, from
#      maint/gen_coll.py): picks the algorithm when MPIR_<Coll>_impl runs with
#      MPIR_CVAR_<COLL>_INTRA_ALGORITHM=auto.
# A file replaces the library's whole tree, and a collective missing from the MPIR tree
# aborts ("MPIR_Assert(cnt)" in MPIR_<Coll>_allcomm_auto; tested: MPI_Init already
# fails). So both files written here are the library's own default trees (read from
# libmpich, where they are compiled in as strings) with the given cells spliced in
# front: the ch4 tree routes a cell to the flat composition, the MPIR tree to the
# algorithm; everything else reaches the library's default exactly as before.

# flat composition of each collective (ch4_coll_impl.h v4.0.2: they call MPIDI_NM_mpi_X
# on the whole communicator); the others' compositions are all flat already.
MPICH_FLAT_COMPOSITION = {"bcast": "MPIDI_Bcast_intra_composition_gamma",
                          "allreduce": "MPIDI_Allreduce_intra_composition_beta",
                          "reduce": "MPIDI_Reduce_intra_composition_gamma",
                          "barrier": "MPIDI_Barrier_intra_composition_beta",
                          "scan": "MPIDI_Scan_intra_composition_beta",
                          "exscan": "MPIDI_Exscan_intra_composition_alpha"}

# The size csel compares (src/mpi/coll/src/csel.c v4.0.2, get_avg_msgsize lines 856-908,
# get_total_msgsize lines 968-1165): avg_msg_size = type size * count for bcast/reduce/
# allreduce/alltoall (send side) and is defined for nothing else; total_msg_size = type
# size * count * comm size for allgather/reduce_scatter_block, the total of the counts
# for allgatherv/reduce_scatter; gather/scatter's total is in elements, not bytes (the
# type size is overwritten), alltoallv's is each rank's own send total (ranks disagree),
# and scan/exscan/gatherv/scatterv/barrier have no size at all: whole-range cells only.
MPICH_SIZE_KEY = {"bcast": ("avg_msg_size", _B), "reduce": ("avg_msg_size", _B),
                  "allreduce": ("avg_msg_size", _B), "alltoall": ("avg_msg_size", _B),
                  "allgather": ("total_msg_size", _BN), "allgatherv": ("total_msg_size", _BN),
                  "reduce_scatter": ("total_msg_size", _BN),
                  "reduce_scatter_block": ("total_msg_size", _BN),
                  "gather": (None, _FULL), "scatter": (None, _FULL), "alltoallv": (None, _FULL),
                  "scan": (None, _FULL), "exscan": (None, _FULL), "gatherv": (None, _FULL),
                  "scatterv": (None, _FULL), "barrier": (None, _FULL)}
MPICH_INT_MAX = 2**31 - 1  # csel reads values with atoi()

# Restrictions of the blocking intra algorithms (src/mpi/coll/coll_algorithms.txt v4.0.2).
# MPIR_CVAR_<COLL>_INTRA_ALGORITHM checks them (and with MPIR_CVAR_COLLECTIVE_FALLBACK=
# error fails instead of silently running the default), but a JSON container runs the
# algorithm unchecked: the JSON tree guards each cell with the matching csel test.
MPICH_RESTRICTIONS = {
    ("barrier", "smp"): ("parent-comm",), ("bcast", "smp"): ("parent-comm",),
    ("allgather", "recursive_doubling"): ("power-of-two",),
    ("allgatherv", "recursive_doubling"): ("power-of-two",),
    ("alltoall", "brucks"): ("noinplace",), ("alltoall", "pairwise"): ("noinplace",),
    ("alltoall", "pairwise_sendrecv_replace"): ("inplace",),
    ("alltoall", "scattered"): ("noinplace",),
    ("alltoallv", "pairwise_sendrecv_replace"): ("inplace",),
    ("alltoallv", "scattered"): ("noinplace",),
    ("reduce", "smp"): ("commutative", "parent-comm"),
    ("reduce", "reduce_scatter_gather"): ("size-ge-pof2", "builtin-op"),
    ("allreduce", "smp"): ("commutative", "parent-comm"),
    ("allreduce", "reduce_scatter_allgather"): ("size-ge-pof2", "builtin-op"),
    ("reduce_scatter", "pairwise"): ("commutative",),
    ("reduce_scatter", "recursive_halving"): ("commutative",),
    ("reduce_scatter_block", "noncommutative"): ("power-of-two",),
    ("reduce_scatter_block", "pairwise"): ("commutative",),
    ("reduce_scatter_block", "recursive_halving"): ("commutative",),
    ("scan", "smp"): ("commutative", "node-consecutive"),
}
# restriction -> (test key, complementary key that always follows it)
_GUARD = {"parent-comm": ("comm_hierarchy=parent", "comm_hierarchy=any"),
          "power-of-two": ("comm_size=pow2", "comm_size=any"),
          "inplace": ("is_sendbuf_inplace=yes", "is_sendbuf_inplace=no"),
          "noinplace": ("is_sendbuf_inplace=no", "is_sendbuf_inplace=yes"),
          "commutative": ("is_commutative=yes", "is_commutative=no"),
          "builtin-op": ("is_op_built_in=yes", "is_op_built_in=no"),
          "node-consecutive": ("is_node_consecutive=yes", "is_node_consecutive=no")}


# csel defines is_commutative only for these (csel.c v4.0.2 lines 770-804; any other
# collective asserts), so scan "smp" (restriction commutative) cannot be guarded
_CSEL_HAS_COMMUTATIVE = ("allreduce", "reduce", "reduce_scatter", "reduce_scatter_block")


# Algorithms whose JSON container takes parameters (radix k, tree type, chunk size, the
# CCL backend...), added after MPICH 4.0.2: a container without them gets zeros, and MPICH
# 5.0.2 then aborts, runs out of memory or hangs (tried one cell each at 2 ranks: allreduce
# tree/ccl/recexch/k_reduce_scatter_allgather/recursive_multiplying, bcast tree/
# pipelined_tree, barrier k_dissemination/recexch, allgather recexch_doubling, alltoall
# k_brucks). MPICH's own default trees use none of them. The CVAR that forces one for a
# launch (force_env) gives it its parameters' CVAR defaults, so `caracal tune` measures
# them; a file cannot name them until this writer writes their parameters.
MPICH_PARAMETRISED = {"allgather": ("k_brucks", "recexch_doubling", "recexch_halving"),
                      "allreduce": ("ccl", "k_reduce_scatter_allgather", "recexch", "recursive_multiplying", "tree"),
                      "alltoall": ("k_brucks",), "barrier": ("k_dissemination", "recexch"),
                      "bcast": ("pipelined_tree", "tree")}


def _mpich_unguardable(c) -> Optional[str]:
    if str(c.ident) in MPICH_PARAMETRISED.get(c.coll, ()):
        return (f"algorithm {c.ident}'s selection-file entry takes parameters (radix, tree type, ...) "
                "that this writer does not write")
    for r in MPICH_RESTRICTIONS.get((c.coll, str(c.ident)), ()):
        if r == "commutative" and c.coll not in _CSEL_HAS_COMMUTATIVE:
            return (f"algorithm {c.ident} needs a commutative operation, which MPICH's "
                    f"selection cannot test for {c.coll}")
    return None


def _mpich_cap(coll: str) -> str:
    return coll[0].upper() + coll[1:]


def find_libmpich(mpi: str = "mpich") -> str:
    """Path of the library file of MPICH ``mpi`` (the real file, not a link): Debian's
    libmpich, or the `lib` its table entry names (MPICH 5's libmpi.so.12)."""
    env = os.environ.get("CARACAL_LIBMPICH")
    cands = [env] if env else []
    own = _tuning(mpi).get("lib")
    if own:
        if os.path.exists(own):
            return os.path.realpath(own)
        raise NativeTuningError(f"{own} not found: {mpi} is not installed (run: make setup MPI={mpi})")
    try:
        out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, timeout=20).stdout
        cands += re.findall(r"libmpich\.so\S*\s.*=>\s*(\S+)", out)
    except (OSError, subprocess.SubprocessError):
        pass
    cands += sorted(glob.glob("/usr/lib/*/libmpich.so*")) + sorted(glob.glob("/usr/lib/libmpich.so*"))
    for c in cands:
        if c and os.path.exists(c):
            return os.path.realpath(c)
    raise NativeTuningError("libmpich not found: MPICH is not installed (run: make setup)")


@functools.lru_cache(maxsize=None)
def _mpich_library_strings(path: str) -> Tuple[Dict[str, str], Tuple[str, ...]]:
    """The compiled-in default JSON trees ({"mpir": .., "ch4": .., "posix": ..}) and the
    algorithm container names ("MPIR_Bcast_intra_binomial", ...) of a libmpich."""
    with open(path, "rb") as f:
        data = f.read()
    trees: Dict[str, str] = {}
    for m in re.finditer(rb'\{\s*"collective=', data):
        end = data.find(b"\0", m.start())
        text = data[m.start():end].decode("ascii", "replace")
        if '"algorithm=MPIR_' in text:
            trees.setdefault("mpir", text)
        elif '"composition=MPIDI_' in text:
            trees.setdefault("ch4", text)
        elif '"algorithm=MPIDI_POSIX' in text:
            trees.setdefault("posix", text)
    names = sorted(set(m.decode() for m in re.findall(rb"algorithm=(MPIR_[A-Za-z_]+?)\0", data)))
    return trees, tuple(names)


def mpich_default_tree(which: str = "mpir", library: Optional[str] = None) -> dict:
    """MPICH's compiled-in default selection tree ("mpir" or "ch4"), as ordered dicts."""
    trees, _ = _mpich_library_strings(library or find_libmpich())
    if which not in trees:
        raise NativeTuningError(f"the {which} default selection tree was not found in {library or find_libmpich()}")
    return json.loads(trees[which])


@functools.lru_cache(maxsize=None)
def _mpivars_help(mpi: str = "mpich") -> Dict[str, str]:
    """CVAR -> help text from MPICH's `mpivars` (empty when it is not installed)."""
    name = _tuning(mpi).get("mpivars", "mpivars")
    exe = name if os.sep in name and os.access(name, os.X_OK) else shutil.which(name)
    if exe is None:
        return {}
    try:
        out = subprocess.run([exe], capture_output=True, text=True, timeout=60,
                             env=mpilibs.get(mpi).environment()).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    helps = {}
    for line in out.splitlines():
        m = re.match(r"\s*(MPIR_CVAR_[A-Z0-9_]+)\s*=.*\tVERBOSITY_\S+\t(.*)$", line)
        if m:
            helps[m.group(1)] = m.group(2)
    return helps


@functools.lru_cache(maxsize=None)
def _mpich_algorithms(mpi: str = "mpich") -> Dict[str, List[Tuple[str, str]]]:
    """(CVAR value, JSON container) of each blocking intra algorithm: the containers
    libmpich recognises (MPIR_<Coll>_intra_<alg>, MPIR_<Coll>_allcomm_<alg>); by
    MPICH's generator (maint/gen_coll.py) the CVAR value is <alg>. When mpivars is
    installed, only the values its MPIR_CVAR_<COLL>_INTRA_ALGORITHM help lists."""
    _, names = _mpich_library_strings(find_libmpich(mpi))
    helps = _mpivars_help(mpi)
    algs: Dict[str, List[Tuple[str, str]]] = {}
    for coll in COLLECTIVES:
        cap = _mpich_cap(coll)
        # mpivars prints the help's lines run together ("- Force Binomial Treenb  - Force
        # nonblocking ..."): look for "<value><spaces>- Force" anywhere in it
        h = helps.get(f"MPIR_CVAR_{coll.upper()}_INTRA_ALGORITHM")
        for name in names:
            m = re.match(rf"MPIR_{cap}_(intra|allcomm)_([a-z0-9_]+)$", name)
            if not m:
                continue
            value = m.group(2)
            # (MPICH 5's mpivars prints a one-line help without the values: no filter then)
            if h is not None and "- Force" in h and not re.search(rf"{value}\s+- Force", h):
                continue
            algs.setdefault(coll, []).append((value, name))
    if not algs:
        raise NativeTuningError("no MPIR algorithm containers found in libmpich")
    return algs


# --------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------
def native_algorithms(mpi: str) -> Dict[str, List[Tuple[object, str]]]:
    """The algorithms the library can be forced to run, per Caracal collective name.
    Open MPI: [(number, name)] of coll/tuned (the MCA enumerator; 0 "ignore" left out).
    MPICH: [(CVAR value, JSON algorithm name)], e.g. ("binomial", "MPIR_Bcast_intra_binomial")."""
    if _kind(mpi) == "openmpi":
        return {c: list(v) for c, v in _openmpi_algorithms(mpi).items()}
    return {c: list(v) for c, v in _mpich_algorithms(mpi).items()}


def _resolve(mpi: str, coll: str, alg) -> Tuple[object, str]:
    """The (id, name) pair of ``alg`` (either of the two, or the number as a string)."""
    if coll not in COLLECTIVES:
        raise NativeTuningError(f"unknown collective '{coll}'")
    algs = native_algorithms(mpi).get(coll, [])
    for ident, name in algs:
        if alg == ident or alg == name or str(alg) == str(ident):
            return ident, name
    known = ", ".join(f"{i}={n}" if _kind(mpi) == "openmpi" else str(i) for i, n in algs) or "none"
    raise NativeTuningError(f"{mpi} cannot force {coll} algorithm '{alg}' (known: {known})")


def force_env(mpi: str, coll: str, alg) -> Dict[str, str]:
    """Environment that makes every call of ``coll`` in one launch run native algorithm
    ``alg`` (None: the library's default, {}).
    Open MPI: coll_tuned_use_dynamic_rules=1 + coll_tuned_<coll>_algorithm=<number>.
    MPICH: MPIR_CVAR_<COLL>_DEVICE_COLLECTIVE=0 (skip ch4's node-aware compositions, so
    MPIR_<Coll>_impl runs on the whole communicator) + MPIR_CVAR_<COLL>_INTRA_ALGORITHM=
    <value>. MPICH's fallback stays at its default (silent): a call the algorithm's
    restrictions exclude runs MPICH's automatic choice instead. (With
    MPIR_CVAR_COLLECTIVE_FALLBACK=error the smp algorithms fail: they call the same
    collective on their node subcommunicator, where the forced value applies again and
    its parent-comm restriction fails - tested.) ``applicable`` tells the cells where
    the forced algorithm really runs."""
    _check_mpi(mpi)
    if alg is None:
        return {}
    ident, _ = _resolve(mpi, coll, alg)
    if _kind(mpi) == "openmpi":
        return {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                f"OMPI_MCA_coll_tuned_{coll}_algorithm": str(ident)}
    up = coll.upper()
    return {f"MPIR_CVAR_{up}_DEVICE_COLLECTIVE": "0",
            f"MPIR_CVAR_{up}_INTRA_ALGORITHM": str(ident)}


def applicable(mpi: str, coll: str, alg, comm_size: int, nbytes: Optional[int] = None, *,
               in_place: bool = False, commutative: bool = True, builtin_op: bool = True,
               elem_size: int = 8) -> Optional[str]:
    """Why native algorithm ``alg`` cannot run a call of ``coll`` on ``comm_size`` ranks
    (Caracal's byte count ``nbytes``, elements of ``elem_size`` bytes for reductions),
    or None when it can. Open MPI: the two_proc algorithms need exactly 2 ranks (others
    error out). MPICH: the restrictions of coll_algorithms.txt (v4.0.2) that the call
    can show: power-of-two sizes, in place or not, commutative and built-in operations,
    count >= the largest power of two <= comm_size (checked when ``nbytes`` is given);
    parent-comm and node-consecutive depend on the placement and are not checked."""
    ident, name = _resolve(mpi, coll, alg)
    if _kind(mpi) == "openmpi":
        if name == "two_proc" and comm_size != 2:
            return "two_proc needs exactly 2 ranks"
        return None
    pof2 = 1 << (max(comm_size, 1).bit_length() - 1)
    for r in MPICH_RESTRICTIONS.get((coll, str(ident)), ()):
        if r == "power-of-two" and pof2 != comm_size:
            return f"{ident} needs a power-of-two number of ranks"
        if r == "inplace" and not in_place:
            return f"{ident} runs in place only"
        if r == "noinplace" and in_place:
            return f"{ident} does not run in place"
        if r == "commutative" and not commutative:
            return f"{ident} needs a commutative operation"
        if r == "builtin-op" and not builtin_op:
            return f"{ident} needs a built-in operation"
        if r == "size-ge-pof2" and nbytes is not None and nbytes // max(elem_size, 1) < pof2:
            return f"{ident} needs at least {pof2} elements on {comm_size} ranks"
    return None


def cells_from_points(points) -> List[dict]:
    """Cells for the writers from measured points {coll, comm_size, bytes, alg} (alg None:
    the library's default won there), one list covering every measured size: per
    collective and communicator size, each point stands for [its bytes, the next
    measured bytes) - the first from 0, the last unbounded, as caracal tune's Caracal
    rules - and neighbours with the same algorithm merge. Only non-default spans are
    returned, each with its bytes_hi, so a default point between two cells stays default."""
    groups: Dict[Tuple[str, int], List[dict]] = {}
    for p in points:
        groups.setdefault((p["coll"], int(p["comm_size"])), []).append(p)
    cells = []
    for (coll, n), ps in sorted(groups.items()):
        ps = sorted(ps, key=lambda p: int(p["bytes"]))
        spans: List[list] = []  # [alg, lo, hi]
        for i, p in enumerate(ps):
            lo = 0 if i == 0 else int(p["bytes"])
            hi = int(ps[i + 1]["bytes"]) if i + 1 < len(ps) else None
            if spans and spans[-1][0] == p.get("alg"):
                spans[-1][2] = hi
            else:
                spans.append([p.get("alg"), lo, hi])
        for alg, lo, hi in spans:
            if alg is not None:
                cells.append({"coll": coll, "comm_size": n, "bytes_lo": lo, "bytes_hi": hi, "alg": alg})
    return cells


def mpich_ch4_path(path) -> str:
    """The companion ch4-level file write_mpich_json writes next to ``path``."""
    path = str(path)
    base = path[:-5] if path.endswith(".json") else path
    return base + ".ch4.json"


def pass_env(mpi: str, path) -> Dict[str, str]:
    """Environment that makes the library read the tuning file at ``path``."""
    path = os.path.abspath(str(path))
    if _kind(mpi) == "openmpi":
        return {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                "OMPI_MCA_coll_tuned_dynamic_rules_filename": path}
    return {"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE": path,
            "MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE": mpich_ch4_path(path)}


# --------------------------------------------------------------------------------------
# Cells -> per-collective segments of communicator sizes, each with message ranges
# --------------------------------------------------------------------------------------
class _Cell:
    __slots__ = ("coll", "n_lo", "n_hi", "b_lo", "b_hi", "ident", "name", "src")

    def __init__(self, mpi: str, d: dict):
        try:
            self.coll = d["coll"]
            self.n_lo = int(d["comm_size"])
            self.n_hi = int(d.get("comm_size_hi", d["comm_size"]))
            self.b_lo = int(d["bytes_lo"])
            self.b_hi = None if d.get("bytes_hi") is None else int(d["bytes_hi"])
            alg = d["alg"]
        except (KeyError, TypeError, ValueError) as e:
            raise NativeTuningError(f"bad tuning cell {d!r}: {e}") from None
        if self.n_lo < 1 or self.n_hi < self.n_lo or self.b_lo < 0 or \
                (self.b_hi is not None and self.b_hi <= self.b_lo):
            raise NativeTuningError(f"bad tuning cell {d!r}: empty or negative range")
        self.ident, self.name = _resolve(mpi, self.coll, alg)
        self.src = d

    def full(self) -> bool:
        return self.b_lo == 0 and self.b_hi is None


def _segments(cells: List[_Cell], per_size: bool, max_segments: int = 4096):
    """Split the communicator sizes of one collective's cells into segments [a, b]
    (b None: unbounded) over which the same cells apply. ``per_size``: one segment per
    size inside the cells' ranges (when the library's size depends on it)."""
    points = {1}
    for c in cells:
        points.add(c.n_lo)
        points.add(c.n_hi + 1)
        if per_size:
            if c.n_hi - c.n_lo > max_segments:
                raise NativeTuningError(f"{c.coll}: communicator range {c.n_lo}-{c.n_hi} too wide "
                                        "for a size that depends on the communicator size")
            points.update(range(c.n_lo, c.n_hi + 2))
    pts = sorted(points)
    segs = []
    for i, a in enumerate(pts):
        b = pts[i + 1] - 1 if i + 1 < len(pts) else None
        active = [c for c in cells if c.n_lo <= a and (b is not None and b <= c.n_hi)]
        segs.append((a, b, active))
    if len(segs) > max_segments:
        raise NativeTuningError(f"{cells[0].coll}: more than {max_segments} communicator-size segments")
    return segs


def _ranges(active: List[_Cell]) -> List[Tuple[int, Optional[int], _Cell]]:
    """The cells of one segment as sorted, non-overlapping [lo, hi) ranges in B (hi None:
    unbounded). A cell without bytes_hi ends where the next one starts."""
    cs = sorted(active, key=lambda c: c.b_lo)
    out = []
    for i, c in enumerate(cs):
        nxt = cs[i + 1] if i + 1 < len(cs) else None
        hi = c.b_hi
        if nxt is not None:
            if nxt.b_lo == c.b_lo or (hi is not None and nxt.b_lo < hi):
                raise NativeTuningError(f"{c.coll}: cells {c.src!r} and {nxt.src!r} overlap")
            if hi is None:
                hi = nxt.b_lo
        out.append((c.b_lo, hi, c))
    return out


def _split_cells(mpi: str, cells: Sequence[dict], kinds: Dict[str, str], check=None):
    """Validated cells per collective, and the notes of the ones that cannot be written
    (``check(cell)``: a reason the file cannot express the cell, or None)."""
    notes: List[str] = []
    per_coll: Dict[str, List[_Cell]] = {}
    for d in cells:
        c = _Cell(mpi, d)
        why = check(c) if check else None
        if why:
            notes.append(f"{c.coll}: {why}; cell {d!r} not written")
            continue
        kind = kinds.get(c.coll)
        if kind is None:
            notes.append(f"{c.coll}: {mpi}'s tuning file has no rules for this collective; cell {d!r} not written")
            continue
        if kind == _FULL and not c.full():
            notes.append(f"{c.coll}: {mpi} does not select this collective by message size; "
                         f"cell {d!r} not written (only whole-range cells, bytes_lo 0 and no bytes_hi)")
            continue
        per_coll.setdefault(c.coll, []).append(c)
    return per_coll, notes


# --------------------------------------------------------------------------------------
# Open MPI writer
# --------------------------------------------------------------------------------------
def openmpi_rules_text(cells: Sequence[dict], mpi: str = "openmpi") -> Tuple[str, List[str]]:
    """The rules file's text and the notes of cells not written (see write_openmpi_rules)."""
    per_coll, notes = _split_cells(mpi, cells, OMPI_SIZE_KIND, _openmpi_unusable)
    lines = ["# Open MPI coll/tuned dynamic rules, written by caracal (native_tuning.py).",
             "# Read with: --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename FILE",
             "# Layout (coll_tuned_dynamic_file.c): number of collectives; per collective: its id,",
             "# number of communicator sizes; per size: the size, number of message rules; per",
             "# rule: message size (bytes, as the library computes it), algorithm, faninout, segsize.",
             "# A communicator uses the rules of the largest listed size <= its size; a message the",
             "# rule of the largest listed message size <= its size. Algorithm 0 = the library's",
             "# own (fixed) decision.",
             f"{len(per_coll)}"]
    for coll in sorted(per_coll, key=lambda c: OMPI_COLL_ID[c]):
        kind = OMPI_SIZE_KIND[coll]
        segs = _segments(per_coll[coll], per_size=(kind == _BN))
        lines.append(f"{OMPI_COLL_ID[coll]}  # collective id: {coll}")
        lines.append(f"{len(segs)}  # communicator sizes")
        for a, b, active in segs:
            factor = a if kind == _BN else 1
            rules = [(0, 0)]
            for lo, hi, c in _ranges(active):
                rules = [r for r in rules if r[0] != lo * factor]
                rules.append((lo * factor, int(c.ident)))
                if hi is not None:
                    rules.append((hi * factor, 0))
            rules.sort()
            upto = f"{a}" if b == a else (f"{a}-{b}" if b is not None else f"{a} and more")
            lines.append(f"{a}  # ranks: {upto}")
            lines.append(f"{len(rules)}  # message rules")
            names = {int(c.ident): c.name for c in active}
            for size, alg in rules:
                label = names.get(alg, "default") if alg else "default"
                lines.append(f"{size} {alg} {OMPI_FANINOUT if alg else 0} 0  # {label}")
    return "\n".join(lines) + "\n", notes


def write_openmpi_rules(path, cells: Sequence[dict], mpi: str = "openmpi") -> List[str]:
    """Write Open MPI 4.1's (or 5.0's: the same format) coll/tuned dynamic rules file for
    ``cells``, whose algorithms are those of library ``mpi`` (Open MPI 5.0 has more: sparbit).

    Format (coll_tuned_dynamic_file.c, v4.1.4, read by ompi_coll_base_file_getnext_long:
    numbers as strtol %li, anything else skipped, '#' to end of line a comment):
    ``N_COLLECTIVES`` then per collective ``ID N_COMM_SIZES`` then per size
    ``COMM_SIZE N_MSG_RULES`` then per rule ``MSG_SIZE ALG FANINOUT SEGSIZE``; the first
    rule of each size must be for message size 0. Selection (coll_tuned_dynamic_rules.c):
    the largest comm size <= the communicator's (else the first entry), then the largest
    message size <= the call's; algorithm 0 falls back to the library's fixed decision.
    So every collective written here starts with a size-1 entry of algorithm 0, and
    every range a cell leaves ends with a rule of algorithm 0: other cells keep Open MPI's
    default. Collectives not in the file are not affected at all.

    A malformed file is silently ignored by a release build of Open MPI (its messages
    are OPAL_OUTPUT, compiled out), so this writer only writes what it checked.
    Returns the notes of the cells it could not write."""
    text, notes = openmpi_rules_text(cells, mpi)
    with open(path, "w") as f:
        f.write(text)
    return notes


# --------------------------------------------------------------------------------------
# MPICH writer
# --------------------------------------------------------------------------------------
def _default_of(tree: dict, coll: str) -> dict:
    key = f"collective={coll}"
    if key not in tree:
        raise NativeTuningError(f"MPICH's default tree has no {key}")
    return tree[key]


def _le(key: str, value: int) -> str:
    return f"{key}<={min(value, MPICH_INT_MAX)}"


def _guarded(coll: str, value: str, leaf: dict, default: dict) -> dict:
    """leaf, under the csel tests of the algorithm's restrictions; default otherwise."""
    node = leaf
    for r in reversed(MPICH_RESTRICTIONS.get((coll, value), ())):
        if r == "size-ge-pof2":
            node = {"count<pow2": default, "count=any": node}
        else:
            yes, other = _GUARD[r]
            node = {yes: node, other: default}
    return node


def _mpich_coll_tree(coll: str, cells: List[_Cell], default: dict, level: str,
                     notes: List[str]) -> dict:
    """One collective's selection: the cells' comm_size chain in front of ``default``
    (the library's subtree for the collective, reached by every range without a cell)."""
    size_key, kind = MPICH_SIZE_KEY[coll]
    body: Dict[str, dict] = {}
    for a, b, active in _segments(cells, per_size=(kind == _BN)):
        key = "comm_size=any" if b is None else _le("comm_size", b)
        factor = a if kind == _BN else 1
        chain: Dict[str, dict] = {}
        prev: Optional[int] = 0
        for lo, hi, c in _ranges(active):
            if level == "ch4":  # route to the flat composition: MPIR's tree decides
                leaf = {f"composition={MPICH_FLAT_COMPOSITION[coll]}": {}}
            else:
                leaf = {f"algorithm={c.name}": {}}
            leaf = _guarded(coll, str(c.ident), leaf, default)
            if size_key is None:  # a whole-range cell (_split_cells let only those in)
                chain = leaf
                prev = None
                break
            if lo * factor > MPICH_INT_MAX:
                if level == "mpir":
                    notes.append(f"{coll}: cell {c.src!r} starts above 2^31-1 bytes, which "
                                 "MPICH's selection cannot express; not written")
                break
            if lo * factor > prev:
                chain[_le(size_key, lo * factor - 1)] = default
            if hi is None or hi * factor - 1 >= MPICH_INT_MAX:
                chain[f"{size_key}=any"] = leaf
                prev = None
                break
            chain[_le(size_key, hi * factor - 1)] = leaf
            prev = hi * factor
        if not chain:
            body[key] = default
            continue
        if prev is not None:
            chain[f"{size_key}=any"] = default
        body[key] = chain
    # intercommunicators and the node / node-roots subcommunicators of MPICH's own
    # node-aware compositions keep the default: the cells were measured on flat intracomms
    return {"comm_type=inter": default, "comm_hierarchy=node": default,
            "comm_hierarchy=node_roots": default, "comm_type=intra": body}


def mpich_trees(cells: Sequence[dict], library: Optional[str] = None, mpi: str = "mpich"):
    """(MPIR tree, ch4 tree, notes) for ``cells`` (see write_mpich_json)."""
    library = library or find_libmpich(mpi)
    per_coll, notes = _split_cells(mpi, cells, {c: MPICH_SIZE_KEY[c][1] for c in MPICH_SIZE_KEY},
                                   _mpich_unguardable)
    mpir_default = mpich_default_tree("mpir", library)
    ch4_default = mpich_default_tree("ch4", library)
    mpir, ch4 = {}, {}
    for key, sub in mpir_default.items():
        coll = key.split("=", 1)[1]
        mpir[key] = _mpich_coll_tree(coll, per_coll[coll], sub, "mpir", notes) if coll in per_coll else sub
    for key, sub in ch4_default.items():
        coll = key.split("=", 1)[1]
        if coll in per_coll and coll in MPICH_FLAT_COMPOSITION:
            ch4[key] = _mpich_coll_tree(coll, per_coll[coll], sub, "ch4", notes)
        else:
            ch4[key] = sub
    return mpir, ch4, notes


def write_mpich_json(path, cells: Sequence[dict], library: Optional[str] = None, mpi: str = "mpich") -> List[str]:
    """Write MPICH 4.0's (or 5.0's) selection files for ``cells``, whose algorithms are those
    of library ``mpi`` (MPICH 5.0 has more: tree, recexch, ...; its default trees from
    ``library``, else that library's file): ``path`` (the MPIR tree, for
    MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE) and mpich_ch4_path(path) (the ch4 tree,
    for MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE); pass_env gives both.

    Grammar (src/mpi/coll/src/csel.c v4.0.2, parse_json_tree): nested objects whose keys
    are tests; sibling keys are tried in file order (json-c keeps it), the first that
    holds is descended into and there is no backtracking; a key "algorithm=NAME" (MPIR
    tree) or "composition=NAME" (ch4 tree) with an object value is a leaf. Tests used
    here: collective=X, comm_type=intra|inter, comm_hierarchy=parent|node|node_roots|any,
    comm_size<=N, comm_size=pow2|any, avg_msg_size<=N|=any, total_msg_size<=N|=any,
    count<pow2, count=any, is_commutative=, is_op_built_in=, is_sendbuf_inplace=,
    is_node_consecutive=yes|no (N: int, atoi). ("comm_size<N" is avoided: 4.0.2's search
    compares it with <=, line 1212.) An unknown key, algorithm or a syntax error aborts
    MPI_Init ("Internal error"); a missing file crashes it.

    Each tree is MPICH's compiled-in default with, for each collective that has cells,
    a comm_size chain in front (one entry per size where the library's size depends on
    it); ranges without a cell lead back to the collective's default subtree.
    Returns the notes of the cells it could not write."""
    mpir, ch4, notes = mpich_trees(cells, library, mpi)
    with open(path, "w") as f:
        json.dump(mpir, f, indent=1)
        f.write("\n")
    with open(mpich_ch4_path(path), "w") as f:
        json.dump(ch4, f, indent=1)
        f.write("\n")
    return notes
