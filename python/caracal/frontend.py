"""What `caracal run` (and the other launching commands) add around mpiexec so that it
behaves as a front end: checked rank counts, the launcher's placement options (hostfile,
rankfile, raw mpiexec arguments), a check that the program uses the chosen MPI library,
and a supervised launch that forwards SIGINT/SIGTERM/SIGHUP to the job.

Kept apart from launch.py (which builds the plain command line) so that each piece can
change on its own."""
import collections
import ctypes
import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from .errors import UsageError

# The most ranks any Caracal file format describes (topology reader, profile merge).
MAX_RANKS = 1 << 20
# Without a hostfile, rankfile or host list every rank runs on this machine: beyond this
# many ranks per core a launch only thrashes (or, for huge -n, never gets going).
LOCAL_RANKS_PER_CORE = 64

# mpiexec options that spread ranks over other hosts (then the local cap does not apply)
HOST_OPTIONS = {"--host", "-host", "-H", "--hostfile", "-hostfile", "--machinefile", "-machinefile",
                "-f", "-hosts", "--hosts", "--rankfile", "-rf", "--default-hostfile"}


def check_nranks(n: int, spread: bool, what: str = "-n") -> None:
    """Refuse rank counts no launch can honour, with one line naming the limit."""
    if n < 1:
        raise UsageError(f"{what} {n}: the number of ranks must be at least 1")
    if n > MAX_RANKS:
        raise UsageError(f"{what} {n}: at most {MAX_RANKS} ranks are supported")
    if not spread:
        cores = os.cpu_count() or 1
        cap = LOCAL_RANKS_PER_CORE * cores
        if n > cap:
            raise UsageError(f"{what} {n}: all ranks would run on this machine, which has {cores} core"
                             f"{'s' if cores != 1 else ''}; at most {cap} ({LOCAL_RANKS_PER_CORE} per core) "
                             "without --hostfile or --rankfile")


def spreads_hosts(mpiexec_args: Sequence[str]) -> bool:
    return any(a.split("=", 1)[0] in HOST_OPTIONS for a in mpiexec_args)


# ---- rankfiles (Open MPI's format, as `caracal map` writes them) ----

RANKFILE_LINE = re.compile(r"rank\s+(\d+)\s*=\s*(\S+)\s+slot\s*=\s*(\S+)")
RANKFILE_MAX_BYTES = 64 << 20


def read_small_text(path, max_bytes: int, missing: str, what: str) -> str:
    """The text of a small user-given file, or one UsageError line: `missing` when it is not
    a file, `{path}: larger than N MiB, not a {what}`, or why it cannot be read."""
    p = Path(path)
    if not p.is_file():
        raise UsageError(missing)
    if p.stat().st_size > max_bytes:
        raise UsageError(f"{path}: larger than {max(max_bytes >> 20, 1)} MiB, not a {what}")
    try:
        return p.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None


def read_rankfile(path: str) -> List[Tuple[int, str, str]]:
    """(rank, host, slot) per line, in rank order; UsageError naming the line otherwise."""
    text = read_small_text(path, RANKFILE_MAX_BYTES, f"rankfile not found: {path}", "rankfile")
    entries, seen = [], {}
    for i, line in enumerate(text.splitlines(), 1):
        s = line.split("#", 1)[0].strip()
        if not s:
            continue
        m = RANKFILE_LINE.fullmatch(s)
        if not m:
            raise UsageError(f"{path}:{i}: expected 'rank N=HOST slot=S', found '{s[:60]}'")
        r = int(m.group(1))
        if r >= MAX_RANKS:
            raise UsageError(f"{path}:{i}: rank {m.group(1)[:20]} is beyond the {MAX_RANKS} supported")
        if r in seen:
            raise UsageError(f"{path}:{i}: rank {r} appears twice (first on line {seen[r]})")
        seen[r] = i
        entries.append((r, m.group(2), m.group(3)))
    if not entries:
        raise UsageError(f"{path}: no 'rank N=HOST slot=S' lines")
    entries.sort()
    missing = next((k for k, e in enumerate(entries) if e[0] != k), None)
    if missing is not None:
        raise UsageError(f"{path}: rank {missing} has no line (ranks must run from 0 without gaps)")
    return entries


def rankfile_oversubscribed(entries: Sequence[Tuple[int, str, str]], cores: Optional[int] = None) -> bool:
    """Whether the ranks of a rankfile outnumber cores somewhere: more ranks on one host than
    this machine has cores (hosts are taken to be alike), or two ranks bound to one core.
    Open MPI decides its idle yielding (mpi_yield_when_idle) from the slots it allocated,
    not from a rankfile's placement, so such a job would busy-poll on shared cores."""
    cores = cores or os.cpu_count() or 1
    per_host = collections.Counter(h for _, h, _ in entries)
    if any(c > cores for c in per_host.values()):
        return True
    bound = collections.Counter((h, s) for _, h, s in entries if s != "*")
    return any(c > 1 for c in bound.values())


def machinefile_from_rankfile(entries: Sequence[Tuple[int, str, str]]) -> str:
    """MPICH (Hydra) has no rankfile: the same placement as a machinefile in rank order
    (one rank per line; the cores are not bound)."""
    return "".join(f"{h}:1\n" for _, h, _ in entries)


def yield_requested(mpiexec_args: Sequence[str], env: Dict[str, str]) -> bool:
    """The user already said how Open MPI should wait (environment or mpiexec argument)."""
    return "OMPI_MCA_mpi_yield_when_idle" in env or "mpi_yield_when_idle" in mpiexec_args


class Placement:
    """The launcher arguments for --hostfile / --rankfile / --mpiexec-args, and the number
    of ranks a rankfile implies. Call cleanup() after the launch (a converted machinefile)."""

    def __init__(self, mpi: str, hostfile: Optional[str], rankfile: Optional[str],
                 mpiexec_args: Sequence[str], env: Dict[str, str]):
        if hostfile and rankfile:
            raise UsageError("--hostfile and --rankfile do not go together (a rankfile names the hosts)")
        self.args: List[str] = []
        self.ranks: Optional[int] = None  # what a rankfile describes
        self.oversubscribed = False
        self._tmp: Optional[str] = None
        if hostfile:
            if not Path(hostfile).is_file():
                raise UsageError(f"hostfile not found: {hostfile}")
            self.args += ["--hostfile" if mpi == "openmpi" else "-f", str(Path(hostfile).resolve())]
        if rankfile:
            entries = read_rankfile(rankfile)
            self.ranks = len(entries)
            if mpi == "openmpi":
                self.args += ["--rankfile", str(Path(rankfile).resolve())]
                self.oversubscribed = rankfile_oversubscribed(entries)
                if self.oversubscribed and not yield_requested(mpiexec_args, env):
                    self.args += ["--mca", "mpi_yield_when_idle", "1"]
            else:
                fd, self._tmp = tempfile.mkstemp(prefix="caracal-machinefile-")
                with os.fdopen(fd, "w") as f:
                    f.write(machinefile_from_rankfile(entries))
                self.args += ["-f", self._tmp]
        self.args += list(mpiexec_args)
        self.spread = bool(hostfile or rankfile or spreads_hosts(mpiexec_args))

    def cleanup(self):
        if self._tmp:
            try:
                os.unlink(self._tmp)
            except OSError:
                pass
            self._tmp = None


def without_default_binding(cmd: List[str]) -> List[str]:
    """A rankfile binds each rank to its slot: drop launch.py's default `--bind-to none`."""
    out, i = [], 0
    while i < len(cmd):
        if cmd[i] == "--bind-to" and i + 1 < len(cmd) and cmd[i + 1] == "none":
            i += 2
            continue
        out.append(cmd[i])
        i += 1
    return out


# ---- is the program built for the chosen library? ----

MPI_CORE_LIB = re.compile(r"lib(mpi|mpich)\.so(\.\d+)*")
LDD_LINE = re.compile(r"^\s*(\S+)\s+=>\s+(\S+)\s+\(0x[0-9a-f]+\)\s*$")


def mpi_libraries(path: str, env: Optional[Dict[str, str]] = None) -> Optional[List[str]]:
    """Real paths of the MPI core libraries (libmpi.so.N, libmpich.so.N) path loads, also
    through other libraries; None if that cannot be told (not a dynamic ELF program: a
    script, a static program, no ldd)."""
    try:
        with open(path, "rb") as f:
            if f.read(4) != b"\x7fELF":
                return None
        # without LD_PRELOAD: libcaracal preloaded would bring its own MPI library into the list
        clean = {k: v for k, v in (env if env is not None else os.environ).items() if k != "LD_PRELOAD"}
        p = subprocess.run(["ldd", path], capture_output=True, text=True, timeout=30, env=clean)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0:
        return None
    found = []
    for line in p.stdout.splitlines():
        m = LDD_LINE.match(line)
        if m and MPI_CORE_LIB.fullmatch(m.group(1)):
            found.append(os.path.realpath(m.group(2)))
    return sorted(set(found))


def check_program_library(mpi: str, program: str, caracal_lib: Path, env: Optional[Dict[str, str]] = None,
                          others: Optional[Dict[str, Path]] = None, compiler: Optional[str] = None) -> None:
    """UsageError (one line, exit 2) when program loads an MPI library other than the one
    libcaracal for `mpi` was built against: such a program crashes in MPI_Init (two MPI
    libraries in one process) instead of saying what is wrong."""
    mine = mpi_libraries(program, env)
    if not mine:
        return  # not an MPI program we can inspect: let it run
    wanted = mpi_libraries(str(caracal_lib), env) or []
    if set(mine) & set(wanted):
        return
    hint = ""
    for name, lib in (others or {}).items():
        if name != mpi and set(mine) & set(mpi_libraries(str(lib), env) or []):
            hint = f"; run it with --mpi {name}"
            break
    if not hint:
        hint = f"; rebuild it with {mpi}'s compiler wrapper ({compiler or 'mpicc.' + mpi})"
    raise UsageError(f"{program} is linked against {', '.join(mine)}, but --mpi {mpi} uses "
                     f"{', '.join(wanted) or 'another MPI library'}{hint}")


# ---- the supervised launch ----

LAUNCHER_NAMES = {"mpiexec", "mpirun", "orterun", "orted", "prterun", "prted", "hydra_pmi_proxy",
                  "mpiexec.hydra", "mpiexec.openmpi", "mpiexec.mpich", "mpirun.openmpi", "mpirun.mpich",
                  "ssh", "rsh"}


def _children_map() -> Dict[int, List[int]]:
    kids: Dict[int, List[int]] = collections.defaultdict(list)
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        kids[ppid].append(int(d))
    return kids


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def local_ranks(launcher_pid: int) -> List[int]:
    """The processes under the launcher that are not launcher machinery: this machine's ranks
    (and whatever they run through: a wrapper script and the program under it)."""
    kids = _children_map()
    out, todo = [], list(kids.get(launcher_pid, []))
    while todo:
        pid = todo.pop()
        if _comm(pid) not in LAUNCHER_NAMES:
            out.append(pid)
        todo += kids.get(pid, [])
    return out


def _signal_all(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def _parent_death_signal():
    """For the child: SIGTERM when `caracal run` itself dies (even by SIGKILL), so a killed
    front end never leaves the launcher running unsupervised."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def arm():
        prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(143)
    return arm


FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def run_supervised(cmd: Sequence[str], env: Dict[str, str], ranks_grace: float = 3.0,
                   launcher_grace: float = 10.0) -> int:
    """Run the launcher in its own session and wait for it. On SIGINT, SIGTERM or SIGHUP:
    first SIGTERM to this machine's ranks (each writes its profile piece, and the launcher
    ends the job when it sees them go), after ranks_grace seconds the signal to the launcher
    itself (ranks on other hosts), after launcher_grace more SIGKILL to everything left.
    A second signal skips to the next step. Returns the launcher's status, or 128 + the
    signal when one arrived."""
    got: List[int] = []

    def on_signal(sig, _frame):
        got.append(sig)

    old = {s: signal.signal(s, on_signal) for s in FORWARDED}
    try:
        proc = subprocess.Popen(list(cmd), env=env, start_new_session=True, preexec_fn=_parent_death_signal())
    except BaseException:
        for s, h in old.items():
            signal.signal(s, h)
        raise
    try:
        step, step_at, handled = 0, 0.0, 0
        while True:
            try:
                rc = proc.wait(timeout=0.1)
                break
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            advance = len(got) > handled  # a new signal arrived
            handled = len(got)
            if step == 1 and now - step_at >= ranks_grace:
                advance = True
            if step == 2 and now - step_at >= launcher_grace:
                advance = True
            if not advance or step >= 3:
                continue
            step, step_at = step + 1, now
            if step == 1:
                ranks = local_ranks(proc.pid)
                if ranks:
                    _signal_all(ranks, signal.SIGTERM)
                else:  # nothing of the job on this machine (yet): straight to the launcher
                    step = 2
                    _signal_all([proc.pid], got[0])
            elif step == 2:
                _signal_all([proc.pid], got[0])
            else:
                _signal_all(local_ranks(proc.pid), signal.SIGKILL)
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    if got:
        return 128 + got[0]
    return rc
