"""Which MPI library a profile ran on, and its point-to-point protocol knobs.

The profile names the library in ``mpi_library`` (MPI_Get_library_version's first
line). From that string: the kind (openmpi, mpich, impi, mvapich2 or unknown), its
version, and the installed library of this machine that matches it (for measuring
and for reading the current settings). The eager/rendezvous knobs of each kind are
in EAGER_KNOBS; the current values are read from the installed library where it
exposes them (Open MPI: ompi_info --level 9; MPICH: its CVARs through mpivars, which
lists them with MPI_T; Intel MPI: impi_info, impi_tuning.py). Libraries that are not installed here (MVAPICH2) get advice
that is marked unverified.
"""
import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Dict, Optional

from .. import impi_tuning, mpilibs

KINDS = ("openmpi", "mpich", "impi", "mvapich2", "unknown")


@dataclass
class LibraryInfo:
    kind: str                 # one of KINDS
    version: str              # "4.1.4", or "" when the string has none
    text: str                 # the profile's mpi_library string
    installed: Optional[str]  # mpilibs name of the matching library on this machine, or None


def identify(text: str) -> LibraryInfo:
    """The library of a profile's ``mpi_library`` string."""
    t = text or ""
    checks = (("mvapich2", r"MVAPICH2?\s+Version:?\s*([\d.]+\w*)"),
              ("impi", r"Intel\(R\) MPI Library\s+([\d.]+)"),
              ("openmpi", r"Open MPI v([\d.]+)"),
              ("mpich", r"MPICH Version:?\s*([\d.]+\w*)"))
    for kind, pat in checks:
        m = re.search(pat, t, re.IGNORECASE)
        if m:
            return LibraryInfo(kind, m.group(1), t, _installed_match(kind, m.group(1)))
    if re.search(r"MVAPICH", t, re.I):
        return LibraryInfo("mvapich2", "", t, None)
    return LibraryInfo("unknown", "", t, None)


def _installed_match(kind: str, version: str) -> Optional[str]:
    """The mpilibs entry for this kind and major version, if it is installed here."""
    major = version.split(".")[0]
    if kind == "impi":  # the one installable here is Intel MPI 2021
        return "impi" if major == "2021" and mpilibs.get("impi").installed() else None
    name = {("openmpi", "4"): "openmpi", ("openmpi", "5"): "openmpi5", ("mpich", "4"): "mpich",
            ("mpich", "5"): "mpich5", ("mpich", "3"): None}.get((kind, major))
    if name is None:
        return None
    try:
        return name if mpilibs.get(name).installed() else None
    except Exception:  # a table entry whose prefix cannot be resolved: not installed
        return None


# ---- eager/rendezvous knobs ---------------------------------------------------------------
# Per kind and transport ("shm": ranks on one host, "net": between hosts):
#   knob: the name as the user sets it (env variable; Open MPI MCA names go in as
#   OMPI_MCA_<name> or --mca <name>); read: how this module reads the current value;
#   default: the documented default where the library cannot be asked; includes_header:
#   the limit counts the protocol header, so a message of exactly S bytes needs S + header.
#   per_connection: the cost of a larger value, as the libraries document it.
EAGER_KNOBS = {
    ("openmpi", "shm", "4"): dict(knob="btl_vader_eager_limit", mca=True, read="ompi_info:btl:vader",
                                  cost="each on-node process keeps fragments of this size in its shared segment "
                                       "(and per peer once fast boxes are set up)"),
    ("openmpi", "shm", "5"): dict(knob="btl_sm_eager_limit", mca=True, read="ompi_info:btl:sm",
                                  cost="each on-node process keeps fragments of this size in its shared segment"),
    ("openmpi", "net", "4"): dict(knob="btl_tcp_eager_limit", mca=True, read="ompi_info:btl:tcp",
                                  cost="a buffer of this size per TCP connection"),
    ("openmpi", "net", "5"): dict(knob="btl_tcp_eager_limit", mca=True, read="ompi_info:btl:tcp",
                                  cost="a buffer of this size per TCP connection"),
    ("openmpi", "ucx", "*"): dict(knob="UCX_RNDV_THRESH", mca=False, read=None, default="auto",
                                  cost="bounce buffers of this size per endpoint"),
    ("mpich", "shm", "*"): dict(knob="MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE", mca=False, read="mpivars",
                                cost="MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_NUM_CELLS cells of this size per on-node process"),
    ("mpich", "net", "ucx"): dict(knob="UCX_RNDV_THRESH", mca=False, read=None, default="auto",
                                  cost="bounce buffers of this size per endpoint"),
    ("mpich", "net", "ofi"): dict(knob="MPIR_CVAR_CH4_OFI_EAGER_MAX_MSG_SIZE", mca=False, read="mpivars",
                                  cost="the provider's buffers of this size per endpoint"),
    # Intel MPI 2021 on one host: I_MPI_SHM_EAGER_THRESHOLD ("Eager message size threshold",
    # an expert variable impi_info lists; "not defined": the library chooses). Measured here
    # (caracal-probe ping-pong, 128 KiB, Intel MPI 2021.19, load ~25): 8.6 us with the threshold at
    # 135168 against 1.9-27 ms by default; the forward cell size (I_MPI_SHM_CELL_FWD_SIZE)
    # at 135168 left it at milliseconds, so it is not the knob that decides the protocol
    ("impi", "shm", "*"): dict(knob="I_MPI_SHM_EAGER_THRESHOLD", mca=False, read="impi_info",
                               default="not defined (Intel MPI chooses)",
                               cost="each eager message is copied through the shared-memory cells of the pair "
                                    "(I_MPI_SHM_EAGER_NUM such messages in flight)"),
    # Intel MPI 2019 and older: the documented eager threshold between hosts. Intel MPI 2021's
    # OFI netmod has none of its own (impi_info does not list I_MPI_EAGER_THRESHOLD, the
    # libfabric provider decides): eager_knob gives no knob for it
    ("impi", "net", "*"): dict(knob="I_MPI_EAGER_THRESHOLD", mca=False, read=None, default="262144",
                               cost="buffers of this size per connection"),
    ("mvapich2", "shm", "*"): dict(knob="MV2_SMP_EAGERSIZE", mca=False, read=None, default="(library default)",
                                   cost="a buffer of this size per pair of on-node processes"),
    ("mvapich2", "net", "*"): dict(knob="MV2_IBA_EAGER_THRESHOLD", mca=False, read=None,
                                   default="17408 (InfiniBand default of MVAPICH2 2.x)",
                                   cost="a registered buffer of this size per connection (memory grows "
                                        "with the number of peers)"),
}


def eager_knob(lib: LibraryInfo, transport: str) -> Optional[dict]:
    """The knob entry for this library and transport ("shm" or "net"), with the key it was
    found under; None for an unknown library."""
    major = lib.version.split(".")[0] if lib.version else "*"
    sub = "*"
    if lib.kind == "mpich" and transport == "net":
        sub = mpich_device(lib) or "ucx"
    if lib.kind == "impi" and transport == "net" and major.isdigit() and int(major) >= 2021:
        return None  # no eager threshold of its own over OFI (see EAGER_KNOBS)
    if lib.kind == "openmpi" and transport == "net" and os.environ.get("OMPI_MCA_pml") == "ucx":
        return dict(EAGER_KNOBS[("openmpi", "ucx", "*")])
    for key in ((lib.kind, transport, major), (lib.kind, transport, sub), (lib.kind, transport, "*")):
        if key in EAGER_KNOBS:
            return dict(EAGER_KNOBS[key])
    return None


def knob_env(knob: dict, value) -> Dict[str, str]:
    """The environment that sets ``knob`` to ``value`` in every rank."""
    name = ("OMPI_MCA_" + knob["knob"]) if knob.get("mca") else knob["knob"]
    return {name: str(value)}


@functools.lru_cache(maxsize=None)
def ompi_info_params(name: str, framework: str, component: str) -> Dict[str, str]:
    """{parameter: value} of one Open MPI component from ompi_info --parsable --level 9."""
    lib = mpilibs.get(name)
    info = (lib.tuning or {}).get("info", "ompi_info")
    exe = info if os.sep in info and os.access(info, os.X_OK) else shutil.which(info)
    if not exe:
        return {}
    try:
        p = subprocess.run([exe, "--param", framework, component, "--level", "9", "--parsable"],
                           capture_output=True, text=True, timeout=60, env=lib.environment())
    except (OSError, subprocess.SubprocessError):
        return {}
    out = {}
    for line in p.stdout.splitlines():
        m = re.match(rf"mca:{framework}:{component}:param:([a-z0-9_]+):value:(.*)$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


@functools.lru_cache(maxsize=None)
def mpich_cvars(name: str) -> Dict[str, str]:
    """{CVAR: default value} of an MPICH library from its mpivars (MPI_T's CVAR list)."""
    lib = mpilibs.get(name)
    tool = (lib.tuning or {}).get("mpivars", "mpivars")
    exe = tool if os.sep in tool and os.access(tool, os.X_OK) else shutil.which(tool)
    if not exe:
        return {}
    try:
        p = subprocess.run([exe], capture_output=True, text=True, timeout=60, env=lib.environment())
    except (OSError, subprocess.SubprocessError):
        return {}
    out = {}
    for line in p.stdout.splitlines():
        m = re.match(r"\s*(MPIR_CVAR_[A-Z0-9_]+)\s*=([^\t]*)\t", line)
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out


def mpich_device(lib: LibraryInfo) -> Optional[str]:
    """"ucx" or "ofi": MPICH's ch4 netmod, from the profile's string or mpichversion."""
    m = re.search(r"ch4:(ucx|ofi)", lib.text)
    if m:
        return m.group(1)
    if lib.installed:
        exe = shutil.which("mpichversion")
        if lib.installed == "mpich" and exe:
            try:
                out = subprocess.run([exe], capture_output=True, text=True, timeout=30).stdout
                m = re.search(r"ch4:(ucx|ofi)", out)
                return m.group(1) if m else None
            except (OSError, subprocess.SubprocessError):
                return None
    return None


def current_value(lib: LibraryInfo, knob: dict) -> Optional[str]:
    """The knob's value as the installed library reports it (environment overrides first);
    None when it cannot be read here."""
    env_name = next(iter(knob_env(knob, 0)))
    if os.environ.get(env_name):
        return os.environ[env_name]
    read = knob.get("read")
    if not lib.installed or not read:
        return knob.get("default")
    if read.startswith("ompi_info:"):
        _, fw, comp = read.split(":")
        return ompi_info_params(lib.installed, fw, comp).get(knob["knob"])
    if read == "mpivars":
        return mpich_cvars(lib.installed).get(knob["knob"])
    if read == "impi_info":
        return impi_tuning.current_value(lib.installed, knob["knob"])
    return None


def knob_exists(lib_name: str, knob: str) -> bool:
    """Does the installed library ``lib_name`` know this knob (ompi_info / mpivars)? For the tests
    and for advice: a knob the library does not list is never recommended as verified."""
    if impi_tuning.is_impi(lib_name):  # (its family is mpich: it has MPICH's launcher, not its CVARs)
        return impi_tuning.knob_exists(lib_name, knob)
    kind = mpilibs.get(lib_name).family
    if kind == "openmpi":
        m = re.match(r"btl_([a-z]+)_", knob)
        if m:
            return knob in ompi_info_params(lib_name, "btl", m.group(1))
        m = re.match(r"coll_tuned_", knob)
        if m:
            return knob in ompi_info_params(lib_name, "coll", "tuned")
        return False
    return knob in mpich_cvars(lib_name)
