"""Work directories of resumable benchmark drivers, never reused by accident.

A driver keeps its finished launches (probes, timings) in a work directory so that a run
split over several bench-lock holds resumes. Without --work it gets a new directory; with
--work DIR it resumes DIR only when DIR's `work.json` records the same facts as now: the
build (sha256 of libcaracal and of the tools the driver runs), the MPI library, the
machine (host name, CPU, kernel) and the driver's own settings that change what a launch
measures (a testbed's shape and rate). Anything else is refused in one line, naming the
fact that differs, and a reused directory is announced with when it was made, so a stale
probe from another build, machine or session is never compared with today's model.
"""
import hashlib
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FACTS = "work.json"


def _refuse(line: str):
    print(line, file=sys.stderr)
    sys.exit(2)


def _sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


def _cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def _mpi_version(mpi: str) -> str:
    exe = {"openmpi": "mpiexec.openmpi", "mpich": "mpiexec.mpich"}.get(mpi, mpi)
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return next((l.strip() for l in out.splitlines() if l.strip()), "unknown")


def facts(mpi: str, binaries, settings=None) -> dict:
    """What must match for a work directory's launches to be reused."""
    out = {"machine": {"host": platform.node(), "cpu": _cpu(), "kernel": platform.release()},
           "mpi": {"name": mpi, "version": _mpi_version(mpi)},
           "build": {}, "settings": settings or {}}
    for b in binaries:
        b = Path(b)
        if not b.exists():
            _refuse(f"{Path(sys.argv[0]).name}: {b} is missing (build first)")
        out["build"][b.name] = _sha(b)
    return out


def _differ(old: dict, new: dict, prefix=""):
    for k in sorted(set(old) | set(new)):
        a, b = old.get(k), new.get(k)
        if isinstance(a, dict) and isinstance(b, dict):
            d = _differ(a, b, f"{prefix}{k}.")
            if d:
                return d
        elif a != b:
            return f"{prefix}{k}: {a!r} then, {b!r} now"
    return None


def open_workdir(tool: str, given, now: dict, log=None) -> Path:
    """A new directory (given None) or `given` when its recorded facts equal `now`.
    Exits with status 2 and one line when `given` was made for something else."""
    log = log or sys.stderr
    if given is None:
        work = Path(tempfile.mkdtemp(prefix=f"caracal-{tool}-"))
        (work / FACTS).write_text(json.dumps({"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                              "facts": now}, indent=1))
        print(f"{tool}: launches kept in {work} (--work {work} resumes)", file=log)
        return work
    work = Path(given)
    if work.exists() and not work.is_dir():
        _refuse(f"{tool}: --work {work} is not a directory")
    kept = sorted(p.name for p in work.iterdir() if p.name != FACTS) if work.exists() else []
    rec = work / FACTS
    if rec.exists():
        try:
            old = json.loads(rec.read_text())
            then, created = old["facts"], old["created"]
        except (ValueError, KeyError, TypeError):
            _refuse(f"{tool}: --work {work}: {FACTS} is unreadable; use a new directory")
        diff = _differ(then, now)
        if diff:
            _refuse(f"{tool}: --work {work} was made for another build, library, machine or setting "
                    f"({diff}); use a new directory")
        print(f"{tool}: resuming {work} (made {created}, same build, library, machine and settings): "
              f"{len(kept)} finished file(s) reused", file=log)
        return work
    if kept:
        _refuse(f"{tool}: --work {work} holds {len(kept)} file(s) but no {FACTS}: cannot tell which build "
                "made them; use a new directory")
    work.mkdir(parents=True, exist_ok=True)
    rec.write_text(json.dumps({"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "facts": now},
                              indent=1))
    print(f"{tool}: launches kept in {work}", file=log)
    return work
