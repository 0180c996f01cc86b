"""caracal testbed: emulated hosts on this machine (network namespaces joined by veth
links and bridges), for running MPI jobs across "hosts" with real TCP between them.

Layout of a testbed NAME (see docs/testbed.md):
  - network namespace ctb-NAME-sw: the switch, one bridge brK per link index K;
  - network namespaces ctb-NAME-hI (I = 0..H-1): host I, named hostI, with interfaces
    cveth0..cveth{K-1}, cvethK on 10.233.K.(I+1)/24 and its peer hIlK enslaved to brK;
  - the state directory (default /run/caracal-testbed/NAME): state.json, per-host
    boot_id files, the /etc/hosts every host sees, and two scripts: `enter HOST CMD...`
    (runs CMD as that host: its network namespace, plus a fresh UTS and mount namespace
    with its hostname, boot_id and /etc/hosts) and `agent` (an ssh stand-in for the MPI
    launchers: `agent [-opts] HOST COMMAND...`).
Nothing is created in the root network namespace, so a testbed cannot disturb the
machine's own interfaces, and deleting the namespaces removes every link and bridge.
"""
import fcntl
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Dict, List, Optional

from .. import frontend, launch, paths
from ..errors import UsageError
from ..progress import ProgressBar

NAME = "testbed"
HELP = "emulated multi-host testbed on this machine (network namespaces, veth links, bridges)"
DESCRIPTION = """\
Emulates H hosts on this machine: each is a network namespace with its own hostname,
boot_id and /etc/hosts, joined to the others by K veth links into K bridges (real TCP
between hosts, shared memory inside one). Needs root.

  caracal testbed up --hosts 3 [--links 2] [--rate 1gbit]
  caracal testbed run -n 6 --ppn 2 [--mpi mpich] [--env K=V] [--timeout 60] -- PROGRAM ARGS
  caracal testbed status
  caracal testbed down

`run` starts PROGRAM from host0 through the library's mpiexec (ranks placed PPN per host
in host order), with libcaracal preloaded into every rank unless --native; it returns
the program's exit status, or 124 when --timeout expired (every process inside the
testbed is then killed). Several testbeds can coexist: --name (or CARACAL_TESTBED_NAME).
"""

STATE_ROOT = "/run/caracal-testbed"
SUBNET = "10.233"          # link K of host I: 10.233.K.(I+1)/24 (exists only inside the testbed)
MAX_HOSTS = 64
MAX_LINKS = 8
TIMEOUT_EXIT = 124         # as timeout(1)
DEFAULT_TIMEOUT = 300.0


class NotPossible(Exception):
    """This machine or user cannot run a testbed (no root, no namespaces): one line, exit 2."""


class StepFailed(Exception):
    """A step of `up` failed; everything created so far is removed."""


# ---------------------------------------------------------------- naming and state

def testbed_name(args) -> str:
    name = args.name or os.environ.get("CARACAL_TESTBED_NAME") or "default"
    if not re.fullmatch(r"[a-z0-9][a-z0-9_]{0,15}", name):
        raise UsageError(f"bad testbed name '{name}' (1-16 of a-z 0-9 _, starting with a letter or digit)")
    return name


def state_dir(name: str) -> Path:
    return Path(os.environ.get("CARACAL_TESTBED_STATE") or STATE_ROOT) / name


def ns_prefix(name: str) -> str:
    return f"ctb-{name}-"


def host_ns(name: str, i: int) -> str:
    return f"ctb-{name}-h{i}"


def switch_ns(name: str) -> str:
    return f"ctb-{name}-sw"


def host_name(i: int) -> str:
    return f"host{i}"


def iface(k: int) -> str:
    return f"cveth{k}"


def address(k: int, i: int) -> str:
    return f"{SUBNET}.{k}.{i + 1}"


def read_state(name: str) -> Optional[dict]:
    f = state_dir(name) / "state.json"
    try:
        return json.loads(f.read_text())
    except (OSError, ValueError):
        return None


def list_netns() -> List[str]:
    p = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return [line.split()[0] for line in p.stdout.splitlines() if line.strip()]


def our_netns(name: str) -> List[str]:
    return [ns for ns in list_netns() if ns.startswith(ns_prefix(name))]


class Lock:
    """One `up`/`down` at a time per testbed name (flock on a file beside the state dir)."""

    def __init__(self, name: str):
        root = state_dir(name).parent
        root.mkdir(parents=True, exist_ok=True)
        self.path = root / f".{name}.lock"

    def __enter__(self):
        self.fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


# ---------------------------------------------------------------- checks

def check_possible(need_tc: bool = False):
    if os.geteuid() != 0:
        raise NotPossible("needs root (network namespaces); run as root or use a machine that allows it")
    for tool in ["ip", "unshare"] + (["tc"] if need_tc else []):
        if shutil.which(tool) is None:
            raise NotPossible(f"'{tool}' is not installed (iproute2 / util-linux)")


RATE_UNITS = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12,
              "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}


def parse_rate(text: str) -> float:
    """A tc rate in bits/s: NUMBER[bit|kbit|mbit|gbit|tbit] (k/m/g/t alone = kbit...)."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([a-zA-Z]*)", text.strip())
    unit = (m.group(2).lower() if m else "") or "bit"
    if not m or unit not in RATE_UNITS:
        raise UsageError(f"bad --rate '{text}' (e.g. 100mbit, 1gbit, 2.5gbit)")
    bits = float(m.group(1)) * RATE_UNITS[unit]
    if not 8e3 <= bits <= 1e12:
        raise UsageError(f"--rate {text} is outside 8kbit..1000gbit")
    return bits


# ---------------------------------------------------------------- up

ENTER_SCRIPT = """#!/bin/sh
# enter HOST COMMAND [ARGS...]: run COMMAND as HOST of this testbed (written by caracal testbed up).
# Its network namespace, and a fresh UTS + mount namespace with the host's hostname, its
# boot_id (UCX tells machines apart by it) and the testbed's /etc/hosts.
dir=$(dirname "$(readlink -f "$0")")
host=${1:?usage: enter HOST COMMAND...}; shift
ns=$(cat "$dir/$host.ns" 2>/dev/null) || { echo "enter: no host '$host' in $dir" >&2; exit 127; }
exec ip netns exec "$ns" unshare --uts --mount --propagation private sh -c '
    hostname "$1" && mount --bind "$2/$1.boot_id" /proc/sys/kernel/random/boot_id &&
    mount --bind "$2/hosts" /etc/hosts && shift 2 && exec "$@"' sh "$host" "$dir" "$@"
"""

AGENT_SCRIPT = """#!/bin/sh
# The launchers' remote shell (Open MPI plm_rsh_agent, MPICH hydra launcher-exec):
# agent [-options] HOST COMMAND... runs COMMAND (one shell string, as ssh would) on HOST.
while [ $# -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done
host=$1; shift
exec "$(dirname "$(readlink -f "$0")")/enter" "$host" sh -c "$*"
"""


def sh(cmd: List[str], what: str):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        msg = (p.stderr or p.stdout).strip().splitlines()
        raise StepFailed(f"{what}: {' '.join(cmd)}: {msg[-1] if msg else f'exit {p.returncode}'}")


def fail_hook(step: str):
    """CARACAL_TESTBED_FAIL_AT=STEP makes that step of `up` fail (tests of the cleanup)."""
    if os.environ.get("CARACAL_TESTBED_FAIL_AT") == step:
        raise StepFailed(f"{step}: failed on purpose (CARACAL_TESTBED_FAIL_AT)")


def tbf(ns: str, dev: str, bits: float) -> List[str]:
    # burst: at least 10 ms of traffic (tbf needs rate/HZ at the least) and 64 KiB (one TSO
    # segment); latency bounds the queue.
    burst = max(65536, int(bits / 8 / 100))
    return ["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "tbf",
            "rate", f"{int(bits)}bit", "burst", str(burst), "latency", "50ms"]


def destroy(name: str) -> int:
    """Kill every process inside the testbed, delete its namespaces and state. Returns
    the number of namespaces deleted."""
    spaces = our_netns(name)
    kill_inside(spaces)
    for ns in spaces:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    shutil.rmtree(state_dir(name), ignore_errors=True)
    return len(spaces)


def processes_inside(spaces: List[str]) -> List[int]:
    pids = []
    for ns in spaces:
        p = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
        pids += [int(x) for x in p.stdout.split() if x.isdigit()]
    return [p for p in pids if p != os.getpid()]


def kill_inside(spaces: List[str]) -> int:
    """TERM then KILL every process in these namespaces; returns how many there were."""
    pids = processes_inside(spaces)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") for p in pids):
            time.sleep(0.05)
        pids = [p for p in pids if os.path.exists(f"/proc/{p}")]
        if not pids:
            break
    return len(pids)


def healthy(name: str, st: dict) -> bool:
    have = set(our_netns(name))
    want = {switch_ns(name)} | {host_ns(name, i) for i in range(st["hosts"])}
    d = state_dir(name)
    return want == have and all((d / f).exists() for f in ("enter", "agent", "hosts"))


def create(name: str, hosts: int, links: int, rate: Optional[float]) -> dict:
    d = state_dir(name)
    d.mkdir(parents=True, exist_ok=False)
    sw = switch_ns(name)
    fail_hook("state")
    (d / "enter").write_text(ENTER_SCRIPT)
    (d / "agent").write_text(AGENT_SCRIPT)
    for f in ("enter", "agent"):
        (d / f).chmod(0o755)
    lines = ["127.0.0.1 localhost"] + [f"{address(0, i)} {host_name(i)}" for i in range(hosts)]
    (d / "hosts").write_text("\n".join(lines) + "\n")

    sh(["ip", "netns", "add", sw], "switch namespace")
    sh(["ip", "-n", sw, "link", "set", "lo", "up"], "switch loopback")
    for k in range(links):
        sh(["ip", "-n", sw, "link", "add", f"br{k}", "type", "bridge"], f"bridge {k}")
        sh(["ip", "-n", sw, "link", "set", f"br{k}", "up"], f"bridge {k}")
    fail_hook("bridges")
    host_rows = []
    bar = ProgressBar(hosts, f"testbed {name}: hosts")
    with bar:  # a few hundred ip(8) calls for 64 hosts
        for i in range(hosts):
            _create_host(name, d, sw, i, links, rate, host_rows)
            bar.step()
    st = {"name": name, "hosts": hosts, "links": links, "rate_bits": rate,
          "interfaces": [iface(k) for k in range(links)], "switch_netns": sw,
          "host_list": host_rows, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    fail_hook("final")
    tmp = d / "state.json.tmp"
    tmp.write_text(json.dumps(st, indent=1) + "\n")
    tmp.rename(d / "state.json")   # state.json exists only for a complete testbed
    return st


def _create_host(name: str, d: Path, sw: str, i: int, links: int, rate: Optional[float], host_rows: list):
    """Host i of the testbed: its namespace, its links to the switch's bridges."""
    ns = host_ns(name, i)
    sh(["ip", "netns", "add", ns], f"host {i} namespace")
    sh(["ip", "-n", ns, "link", "set", "lo", "up"], f"host {i} loopback")
    boot_id = str(uuid.uuid4())
    (d / f"{host_name(i)}.boot_id").write_text(boot_id + "\n")
    (d / f"{host_name(i)}.ns").write_text(ns + "\n")
    for k in range(links):
        port = f"h{i}l{k}"
        # Created directly in the two namespaces: nothing ever appears in the root one.
        sh(["ip", "link", "add", iface(k), "netns", ns, "type", "veth", "peer", "name", port, "netns", sw],
           f"host {i} link {k}")
        sh(["ip", "-n", ns, "addr", "add", f"{address(k, i)}/24", "dev", iface(k)], f"host {i} link {k}")
        sh(["ip", "-n", ns, "link", "set", iface(k), "up"], f"host {i} link {k}")
        sh(["ip", "-n", sw, "link", "set", port, "master", f"br{k}"], f"host {i} link {k}")
        sh(["ip", "-n", sw, "link", "set", port, "up"], f"host {i} link {k}")
        if rate:
            fail_hook("rate")
            # both directions: the host's egress and the switch port's egress towards it
            sh(tbf(ns, iface(k), rate), f"host {i} link {k} rate")
            sh(tbf(sw, port, rate), f"host {i} link {k} rate")
    host_rows.append({"name": host_name(i), "netns": ns, "boot_id": boot_id,
                      "addresses": [address(k, i) for k in range(links)]})
    fail_hook(f"host{i}")


def cmd_up(args) -> int:
    name = testbed_name(args)
    if not 1 <= args.hosts <= MAX_HOSTS:
        raise UsageError(f"--hosts must be 1..{MAX_HOSTS}, not {args.hosts}")
    if not 1 <= args.links <= MAX_LINKS:
        raise UsageError(f"--links must be 1..{MAX_LINKS}, not {args.links}")
    rate = parse_rate(args.rate) if args.rate else None
    check_possible(need_tc=rate is not None)
    with Lock(name):
        st = read_state(name)
        if st is not None and healthy(name, st):
            if (st["hosts"], st["links"], st["rate_bits"]) == (args.hosts, args.links, rate):
                print(f"testbed {name}: already up ({args.hosts} hosts, {args.links} links)")
                return 0
            raise UsageError(f"testbed {name} is up with {st['hosts']} hosts, {st['links']} links, "
                             f"rate {fmt_rate(st['rate_bits'])}: run `caracal testbed down` first")
        destroy(name)           # pieces of an interrupted up or a broken testbed
        # Can namespaces be made here at all? (a container may refuse)
        probe = f"{ns_prefix(name)}probe"
        p = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
        if p.returncode != 0:
            raise NotPossible(f"cannot create network namespaces here ({(p.stderr.strip() or 'ip netns add failed')})")
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)
        if subprocess.run(["unshare", "--uts", "--mount", "true"], capture_output=True).returncode != 0:
            raise NotPossible("cannot create UTS/mount namespaces here (unshare --uts --mount failed)")
        try:
            st = create(name, args.hosts, args.links, rate)
        except BaseException as e:   # including KeyboardInterrupt: never leave pieces behind
            destroy(name)
            if isinstance(e, StepFailed):
                print(f"caracal testbed: up failed, removed what it had created: {e}", file=sys.stderr)
                return 1
            if isinstance(e, OSError):
                print(f"caracal testbed: up failed, removed what it had created: {e}", file=sys.stderr)
                return 1
            raise
    print(f"testbed {name}: {args.hosts} hosts (host0..host{args.hosts - 1}), {args.links} link(s) per host"
          f"{', rate ' + fmt_rate(rate) if rate else ''}; state in {state_dir(name)}")
    return 0


def fmt_rate(bits: Optional[float]) -> str:
    if not bits:
        return "unlimited"
    for unit, f in (("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3)):
        if bits >= f:
            return f"{bits / f:g}{unit}"
    return f"{bits:g}bit"


# ---------------------------------------------------------------- down, status

def cmd_down(args) -> int:
    name = testbed_name(args)
    check_possible()
    with Lock(name):
        had_state = state_dir(name).exists()
        n = destroy(name)
    if n or had_state:
        print(f"testbed {name}: down ({n} namespaces removed)")
    else:
        print(f"testbed {name}: not up (nothing to remove)")
    return 0


def cmd_status(args) -> int:
    name = testbed_name(args)
    check_possible()
    st = read_state(name)
    spaces = our_netns(name)
    if st is None:
        if spaces:
            print(f"testbed {name}: broken ({len(spaces)} namespaces without state; run `caracal testbed down`)")
            return 1
        print(f"testbed {name}: not up")
        return 1
    ok = healthy(name, st)
    if args.json:
        st = dict(st, healthy=ok, processes=len(processes_inside(spaces)), state_dir=str(state_dir(name)))
        print(json.dumps(st, indent=1))
        return 0 if ok else 1
    print(f"testbed {name}: {'up' if ok else 'BROKEN (run caracal testbed down; up)'}, {st['hosts']} hosts, "
          f"{st['links']} link(s) per host, rate {fmt_rate(st['rate_bits'])}, since {st['created']}")
    print(f"  state {state_dir(name)}; switch namespace {st['switch_netns']}; "
          f"{len(processes_inside(spaces))} processes inside")
    for h in st["host_list"]:
        addrs = ", ".join(f"{iface(k)} {a}" for k, a in enumerate(h["addresses"]))
        print(f"  {h['name']:<8} netns {h['netns']:<16} {addrs}  boot_id {h['boot_id'][:8]}")
    return 0 if ok else 1


# ---------------------------------------------------------------- run

def parse_env(items: List[str]) -> Dict[str, str]:
    env = {}
    for item in items:
        k, sep, v = item.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
            raise UsageError(f"bad --env '{item}' (expected NAME=VALUE)")
        env[k] = v
    return env


def finalize_shim() -> Path:
    """The preload that keeps MPICH 4.0.2's finalize from hanging across hosts
    (tools/testbed/ucx_finalize.c; docs/testbed.md)."""
    override = os.environ.get("CARACAL_TESTBED_FINALIZE_SHIM")
    lib = Path(override) if override else paths.build_dir("mpich") / "lib" / "libcaracal-ucx-finalize.so"
    if not lib.exists():
        raise UsageError(f"{lib} is not built; run: make build-mpich")
    return lib


def mpich_env(st: dict, run_dir: Optional[Path]) -> Dict[str, str]:
    """What MPICH's ranks need across the testbed's hosts (see docs/testbed.md)."""
    env = {"UCX_NET_DEVICES": ",".join(st["interfaces"])}
    if run_dir is not None:
        env["CARACAL_TESTBED_FINALIZE_DIR"] = str(run_dir)
    return env


def launch_command(mpi: str, st: dict, d: Path, nranks: int, ppn: int, argv: List[str],
                   rank_env: Dict[str, str], yield_idle: bool, run_dir: Optional[Path] = None,
                   round_robin: bool = False, rankfile: Optional[str] = None):
    """The launch from host0. ``rankfile``: a host per rank ('rank N=hostI slot=S' lines,
    as `caracal map` and `caracal advise` write them) instead of PPN ranks per host."""
    nhosts = math.ceil(nranks / ppn)
    names = [host_name(i) for i in range(nhosts)]
    placed = [h for _, h, _ in frontend.read_rankfile(rankfile)] if rankfile else None
    ifaces = ",".join(st["interfaces"])
    agent = str(d / "agent")
    hostfile = d / f"hostfile.{mpi}.{os.getpid()}"
    if mpi == "openmpi":
        if placed:  # every host the rankfile names, with as many slots as it puts there
            hostfile.write_text("".join(f"{h} slots={placed.count(h)}\n" for h in dict.fromkeys(placed)))
        else:
            hostfile.write_text("".join(f"{h} slots={ppn}\n" for h in names))
        cmd = ["mpiexec.openmpi", "--hostfile", str(hostfile),
               *(["--rankfile", str(Path(rankfile).resolve())] if placed else ["--bind-to", "none"]),
               *(["--map-by", "node"] if round_robin else []),
               "--mca", "plm_rsh_agent", agent,
               "--mca", "btl_tcp_if_include", ifaces, "--mca", "oob_tcp_if_include", st["interfaces"][0]]
        if yield_idle and "OMPI_MCA_mpi_yield_when_idle" not in rank_env:
            cmd += ["--mca", "mpi_yield_when_idle", "1"]
        env = {"UCX_NET_DEVICES": ifaces, **rank_env}
        for k, v in env.items():
            cmd += ["-x", f"{k}={v}"]
    else:
        # hydra fills each host's count in turn and cycles through the file: with 1 per
        # line, rank r lands on host r mod H
        if placed:  # one rank per line, in rank order (frontend.machinefile_from_rankfile)
            hostfile.write_text("".join(f"{h}:1\n" for h in placed))
        else:
            hostfile.write_text("".join(f"{h}:{1 if round_robin else ppn}\n" for h in names))
        cmd = ["mpiexec.mpich", "-f", str(hostfile), "-launcher", "ssh", "-launcher-exec", agent,
               "-iface", st["interfaces"][0]]
        env = {**mpich_env(st, run_dir), **rank_env}
        for k, v in env.items():
            cmd += ["-genv", k, v]
    return cmd + ["-n", str(nranks)] + argv, hostfile


def cmd_run(args) -> int:
    name = testbed_name(args)
    if args.ppn is None and not args.rankfile:
        raise UsageError("--ppn is required (or --rankfile)")
    if args.np < 1 or (args.ppn is not None and args.ppn < 1):
        raise UsageError("-n and --ppn must be at least 1")
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    rank_env = parse_env(args.env)
    if args.rankfile:
        placed = [h for _, h, _ in frontend.read_rankfile(args.rankfile)]
        if len(placed) != args.np:
            raise UsageError(f"--rankfile {args.rankfile} places {len(placed)} ranks, -n is {args.np}")
        if args.round_robin:
            raise UsageError("--rankfile and --round-robin do not go together (the rankfile places every rank)")
        args.ppn = max(placed.count(h) for h in placed)
    check_possible()
    st = read_state(name)
    if st is None or not healthy(name, st):
        raise UsageError(f"testbed {name} is not up (run: caracal testbed up --hosts H)")
    if args.rankfile:
        known = {host_name(i) for i in range(st["hosts"])}
        bad = next((h for h in placed if h not in known), None)
        if bad:
            raise UsageError(f"--rankfile {args.rankfile}: {bad} is not a host of testbed {name} "
                             f"(host0..host{st['hosts'] - 1})")
    nhosts = math.ceil(args.np / args.ppn)
    if nhosts > st["hosts"]:
        raise UsageError(f"-n {args.np} --ppn {args.ppn} needs {nhosts} hosts; testbed {name} has {st['hosts']}")
    if shutil.which(launch.MPIEXEC[args.mpi]) is None:
        raise UsageError(f"{launch.MPIEXEC[args.mpi]} not found; run: make setup")
    from .run import resolve_program
    program = resolve_program(args.program)
    preload = [] if args.native else [str(paths.library(args.mpi))]
    d = state_dir(name)
    run_dir = None
    if args.mpi == "mpich" and not args.no_finalize_fix:
        preload.insert(0, str(finalize_shim()))
        run_dir = Path(tempfile.mkdtemp(prefix="finalize.", dir=d))
    if preload:
        rank_env = {"LD_PRELOAD": ":".join(preload), **rank_env}
    yield_idle = not args.busy_poll and args.np > (os.cpu_count() or 1)
    cmd, hostfile = launch_command(args.mpi, st, d, args.np, args.ppn, [program, *args.args], rank_env, yield_idle,
                                   run_dir, round_robin=args.round_robin, rankfile=args.rankfile)
    env = launch.launcher_env()
    env.pop("LD_PRELOAD", None)
    if args.verbose:
        print("caracal testbed run: host0$ " + " ".join(shlex.quote(c) for c in cmd), file=sys.stderr)
    spaces = our_netns(name)
    proc = subprocess.Popen([str(d / "enter"), host_name(0), *cmd], env=env, start_new_session=True)
    try:
        rc = proc.wait(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        n = kill_inside(spaces)
        _kill_group(proc)
        print(f"caracal testbed run: timed out after {args.timeout:g} s; killed {n} processes in testbed {name}",
              file=sys.stderr)
        rc = TIMEOUT_EXIT
    except KeyboardInterrupt:
        kill_inside(spaces)
        _kill_group(proc)
        raise
    finally:
        try:
            hostfile.unlink()
        except OSError:
            pass
        if run_dir is not None:
            shutil.rmtree(run_dir, ignore_errors=True)
    return rc if rc >= 0 else 128 - rc


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


# ---------------------------------------------------------------- arguments

def add_arguments(p):
    sub = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    sub.required = True

    def common(q):
        q.add_argument("--name", help="testbed name (default: $CARACAL_TESTBED_NAME or 'default')")

    up = sub.add_parser("up", help="create the hosts, links and bridges (idempotent)")
    common(up)
    up.add_argument("--hosts", type=int, required=True, metavar="H", help="number of emulated hosts")
    up.add_argument("--links", type=int, default=1, metavar="K", help="veth links (and bridges) per host (default 1)")
    up.add_argument("--rate", metavar="RATE", help="tbf rate limit per link and direction, e.g. 1gbit")
    up.set_defaults(_action=cmd_up)

    run = sub.add_parser("run", help="run an MPI program across the hosts, from host0")
    common(run)
    run.add_argument("-n", "--np", type=int, required=True, metavar="N", help="number of ranks")
    run.add_argument("--ppn", type=int, default=None, metavar="P",
                     help="ranks per host (host0 first); required unless --rankfile places them")
    run.add_argument("--mpi", choices=("openmpi", "mpich"), default="openmpi",
                     help="MPI library (default openmpi; the testbed drives Debian's two)")
    run.add_argument("--env", action="append", default=[], metavar="K=V", help="environment of every rank (repeatable)")
    run.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S",
                     help=f"kill everything in the testbed after S seconds, exit 124 (default {DEFAULT_TIMEOUT:g})")
    run.add_argument("--native", action="store_true", help="without libcaracal (the library's own collectives)")
    run.add_argument("--busy-poll", action="store_true",
                     help="Open MPI: keep busy-polling even when ranks outnumber cores (default: mpi_yield_when_idle 1)")
    run.add_argument("--no-finalize-fix", action="store_true",
                     help="MPICH: without the preload that keeps MPI_Finalize from hanging across hosts "
                          "(docs/testbed.md; to see the hang)")
    run.add_argument("--round-robin", action="store_true",
                     help="rank r on host r mod H (H = ceil(N/PPN)) instead of PPN consecutive ranks per host")
    run.add_argument("--rankfile", metavar="FILE",
                     help="a host per rank ('rank N=hostI slot=S' lines, as caracal map and caracal advise "
                          "write them): Open MPI --rankfile, MPICH a machinefile in rank order")
    run.add_argument("-v", "--verbose", action="store_true", help="print the launch command")
    run.add_argument("program", metavar="PROGRAM")
    run.add_argument("args", nargs=argparse_remainder(), metavar="ARGS")
    run.set_defaults(_action=cmd_run)

    status = sub.add_parser("status", help="show the testbed (exit 1 when not up)")
    common(status)
    status.add_argument("--json", action="store_true", help="the state as JSON")
    status.set_defaults(_action=cmd_status)

    down = sub.add_parser("down", help="kill what runs inside, remove hosts, links, bridges and state")
    common(down)
    down.set_defaults(_action=cmd_down)


def require_up(name: str, nhosts: int) -> dict:
    """For the tools that run on a testbed (probe, nodemap, info --testbed): the state of
    testbed ``name``, which must be up with at least ``nhosts`` hosts; else one line."""
    testbed_name(argparse_namespace(name=name))
    try:
        check_possible()
    except NotPossible as e:
        raise UsageError(f"--testbed: {e}")
    st = read_state(name)
    if st is None or not healthy(name, st):
        raise UsageError(f"testbed {name} is not up (run: caracal testbed up --name {name} --hosts H)")
    if nhosts > st["hosts"]:
        raise UsageError(f"needs {nhosts} hosts; testbed {name} has {st['hosts']}")
    return st


def argparse_namespace(**kw):
    import argparse
    return argparse.Namespace(**kw)


def argparse_remainder():
    import argparse
    return argparse.REMAINDER


def run(args) -> int:
    try:
        return args._action(args)
    except NotPossible as e:
        print(f"caracal testbed: {e}", file=sys.stderr)
        return 2
