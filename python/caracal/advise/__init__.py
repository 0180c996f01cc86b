"""caracal advise: MPI Advisor's four areas (point-to-point protocol, collective algorithm,
mapping, general) from a profile, with every recommendation that can be measured here
measured before it is given (docs/advice-format.md).

``advise(...)`` returns the caracal.advice/1 document; ``report_section(profile)`` is the
hook the profile report calls: the advice that needs no launch (nothing measured), as
report tables.
"""
import os
import shlex
from typing import List, Optional

from .. import __version__, schema
from ..errors import UsageError
from ..profile import rank_entries
from ..tool_run import machine, now_iso
from . import apprun, collective, general, library, mapping, measure, p2p

SCHEMA = "caracal.advice/1"
AREAS = ("p2p", "collective", "mapping", "general")
P2P_RUNS = 3  # re-runs of the program per setting when measuring protocol advice


def mpi_time(doc) -> float:
    return sum(r["time_mpi"] for r in rank_entries(doc) if r is not None)


def advise(doc: dict, path: str, topo: Optional[dict] = None, topo_path: str = "",
           do_measure: bool = True, log=None, measure_p2p: bool = True) -> dict:
    """The advice document for profile ``doc``. ``log(line)`` hears about each measurement.
    measure_p2p=False leaves protocol advice unmeasured (tune-app measures it in the program)."""
    lib = library.identify(doc.get("mpi_library", ""))
    total = mpi_time(doc)
    entries: List[dict] = []
    notes: List[str] = []
    if lib.kind == "unknown":
        notes.append(f"the MPI library of this profile is not one Caracal knows ({doc.get('mpi_library')!r}): "
                     "general advice only (no protocol, algorithm or mapping settings)")
    else:
        e = p2p.rule(doc, lib, total)
        if e:
            entries.append(e)
        elif p2p.transport(doc) == "net" and library.eager_knob(lib, "net") is None:
            notes.append(f"{lib.kind} {lib.version} has no eager threshold of its own between hosts (Intel MPI "
                         "2021 over OFI: the libfabric provider decides; I_MPI_EAGER_THRESHOLD was Intel MPI "
                         "2019's): no protocol advice between hosts")
        entries += collective.heavy(doc, total)
        if topo is not None:
            m = mapping.rule(doc, topo, topo_path)
            if m:
                entries.append(m)
    entries += general.rules(doc)
    measurable = lib.installed is not None and lib.kind in ("openmpi", "mpich", "impi")
    if lib.kind == "mvapich2":
        notes.append("MVAPICH2 is not installable on this machine: its advice (MV2_* settings) is unverified")
    elif lib.kind != "unknown" and not lib.installed:
        notes.append(f"{lib.kind} {lib.version} is not installed here: its advice cannot be measured or verified")
    for e in entries:
        _measure(e, doc, lib, do_measure and measurable and (measure_p2p or e["area"] != "p2p"), log)
        _commands(e, doc, lib)
    for i, e in enumerate(entries):
        e["id"] = f"A{i + 1}"
    doc = {"schema": SCHEMA, "caracal_version": __version__, "created": now_iso(),
            "profile": str(path), "program": doc.get("program"), "argv": doc.get("argv", []),
            "nranks": doc["nranks"], "mpi_library": doc.get("mpi_library", ""),
            "library": {"kind": lib.kind, "version": lib.version, "installed": lib.installed},
            "measured": bool(do_measure and measurable),
            "machine": dict(machine(), load=round(os.getloadavg()[0], 2)),
            "notes": notes, "advice": entries}
    check(doc)
    return doc


def check(adv: dict) -> None:
    """``adv`` against schemas/advice-1.json (a violation is a bug of ours, not bad input)."""
    schema.check(adv, schema.load("advice-1.json"))


def _measure(e: dict, doc, lib, do_measure: bool, log) -> None:
    """Measure ``e`` when possible; label it otherwise. Sets e["status"] and e["verdict"]."""
    if e["area"] == "general":
        e["status"] = "observed"
        e.setdefault("verdict", "advice")
        return
    if e["area"] == "mapping":
        e["status"] = "predicted"
        e.setdefault("verdict", "recommended" if e["gain"]["wins"] else "keep")
        return
    if lib.kind == "mvapich2" or not lib.installed:
        e["status"], e["verdict"] = "unverified", "advice"
        e.setdefault("gain", {"measured": False, "method": "not measured: the library is not installed here"})
        return
    if not do_measure:
        e["status"], e["verdict"] = "unmeasured", "advice"
        e.setdefault("gain", {"measured": False, "method": "not measured (--no-measure, or from the report)"})
        return
    try:
        if e["area"] == "p2p":
            e["gain"] = _measure_p2p(e, doc, lib, log)
            e["status"] = "measured"
            e["verdict"] = "recommended" if e["gain"]["wins"] else "not recommended"
            if not e["gain"]["wins"]:
                e["title"] += f"; measured: no gain here ({e['gain']['gain_percent']}%)"
            else:
                e["title"] += f"; measured: {e['gain']['gain_percent']}% faster"
        elif e["area"] == "collective":
            if log:
                log(f"replaying {e['collective']} on {e['comm_size']} ranks, sizes {e['sizes']}, {e['pattern']}")
            rows = measure.collective(lib.installed, e["collective"], e["comm_size"], e["sizes"], e["pattern"],
                                      node_size=node_size(doc) if e["comm_size"] == doc["nranks"] else 0)
            collective.apply_measurement(e, lib, rows)
            e["status"] = "measured"
            e.setdefault("verdict", "recommended" if e["gain"]["wins"] else "keep")
    except (RuntimeError, UsageError, OSError, ValueError) as x:
        # a launch that failed or timed out (MeasureError, RunError), a library that cannot
        # list its algorithms: the advice stays, labelled unmeasured, with the reason
        e["status"], e["verdict"] = "unmeasured", "advice"
        why = (str(x).splitlines() or [type(x).__name__])[0][:200]
        e["gain"] = {"measured": False, "method": f"measurement failed: {why}"}


def node_size(doc) -> int:
    """Ranks per host of a profile spread over several hosts with the same number on each (the
    replay on this one host then treats every that many consecutive ranks as a host:
    CARACAL_NODE_SIZE); 0 for one host or uneven hosts."""
    hosts = [r.get("host") for r in doc["ranks"]]
    per = {h: hosts.count(h) for h in hosts}
    if len(per) < 2 or len(set(per.values())) != 1:
        return 0
    k = next(iter(per.values()))
    blocks = all(len({hosts[i] for i in range(b, b + k)}) == 1 for b in range(0, len(hosts), k))
    return k if blocks else 0


def _measure_p2p(e, doc, lib, log) -> dict:
    """The program itself, re-run with and without the setting (apprun); a ping-pong at the
    advised size where the program is not here to run."""
    prog = doc.get("program")
    if prog and os.path.isfile(prog) and os.access(prog, os.X_OK):
        argv = [prog] + list(doc.get("argv", []))
        times = apprun.compare(lib.installed, doc["nranks"], argv, {"default": {}, "suggested": e["env"]},
                               P2P_RUNS, log=log)
        g = apprun.summary(times["default"], times["suggested"])
        g.update(measured=True, load=round(os.getloadavg()[0], 2),
                 method=f"the program re-run {P2P_RUNS} times per setting, interleaved; slowest rank's "
                        f"MPI_Init-to-Finalize time")
        return g
    if log:
        log(f"{prog} is not here to re-run: ping-pong at {max(e['sizes'])} bytes instead")
    return measure.p2p(lib.installed, e["sizes"], e["env"])


def _commands(e: dict, doc, lib) -> None:
    """The exact command lines that apply ``e``'s settings."""
    env = e.get("env")
    if not env or e.get("verdict") in ("keep", "not recommended"):
        return
    prog = shlex.join([doc.get("program") or "PROGRAM"] + list(doc.get("argv", [])))
    n = doc["nranks"]
    mpi = lib.installed or lib.kind
    caracal = f"caracal run -n {n}" + (f" --mpi {mpi}" if mpi not in ("openmpi", None) else "") + \
              "".join(f" --env {k}={v}" for k, v in env.items()) + f" -- {prog}"
    cmds = {"caracal": caracal}
    if not e.get("under_caracal"):
        if lib.kind == "openmpi":
            mca = [(k[len("OMPI_MCA_"):], v) for k, v in env.items() if k.startswith("OMPI_MCA_")]
            rest = [(k, v) for k, v in env.items() if not k.startswith("OMPI_MCA_")]
            cmds["mpiexec"] = f"mpiexec -n {n}" + "".join(f" --mca {k} {v}" for k, v in mca) + \
                              "".join(f" -x {k}={v}" for k, v in rest) + f" {prog}"
        elif lib.kind in ("mpich", "impi", "mvapich2"):
            cmds["mpiexec"] = f"mpiexec -n {n}" + "".join(f" -genv {k} {v}" for k, v in env.items()) + f" {prog}"
    e["commands"] = cmds


# ---- the hook of the profile report -----------------------------------------------------
def report_section(doc: dict, path: str = "profile"):
    """The advice that needs no launch, as report tables (report_tables.Table): for the text
    and HTML profile reports. Nothing is measured; each row says so."""
    from . import render
    return render.tables(advise(doc, path, do_measure=False))
