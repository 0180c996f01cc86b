"""caracal probe: NetPIPE-class point-to-point measurement (caracal-probe)."""
import os
import subprocess
import sys

from .. import launch, paths
from ..errors import UsageError
from ..tool_run import (check_output_path, machine, now_iso, parse_bytes, run_jsonlines,
                        write_json)

NAME = "probe"
HELP = "measure point-to-point latency and bandwidth over a size sweep (NetPIPE-class)"
MODES = ("pingpong", "stream", "bidir", "put", "get", "integrity", "multipair")
DESCRIPTION = """\
Sweeps message sizes between two ranks (or k pairs) and prints latency and
bandwidth per size; --json keeps the result (schema caracal.probe/1, see
docs/probe-format.md) for `caracal report`, which plots and overlays them.

Modes:
  pingpong   latency = half the round trip; bandwidth = size / latency
  stream     one direction, --window messages in flight, timed at the receiver
  bidir      both ranks send at once; bandwidth counts both directions
  put, get   one-sided; --sync fence (MPI_Win_fence) or lock (lock + MPI_Win_flush)
  integrity  no timing: every byte is checked; lists each size that came back
             corrupted (exit status 1 if any)
  multipair  k pairs stream at once (rank i -> i+k); aggregate bandwidth and
             message rate, timed by the slowest pair

Sizes: log-spaced, --per-octave points per doubling from --min to --max, each
with NetPIPE's +-3 byte neighbours (--perturb N, --no-perturb). Each size gets
--budget seconds split into --trials timed runs; the best run is the result,
the median is kept too; --min-reps stops large sizes from being starved.
--nocache rotates through buffers twice the size of the last-level cache.
--one-buffer (pingpong) sends from and receives into one buffer per rank, as
NetPIPE's default mode does; use it when comparing with NetPIPE.

Raw TCP (no MPI on the data path): --transport tcp runs pingpong or stream over
--streams K sockets, each message striped over all K; --bind ADDR (repeatable)
puts stream i on address ADDR[i mod count], so one link and K bonded links can
be compared; --bind IFACE (an interface name) means each process's own address
on its interface of that name, for processes on different hosts. Both processes
are started by mpiexec; MPI only exchanges addresses and ports.

On emulated hosts (caracal testbed, docs/testbed.md): --testbed NAME runs the
ranks there, --ppn per host (default 1: rank 0 on host0, rank 1 on host1), without
libcaracal. With `testbed up --links K --rate R`, --transport tcp --streams K
--bind cveth0 ... --bind cveth{K-1} stripes each message over K rate-limited links.

Examples:
  caracal probe                                   # Open MPI pingpong, 1 B - 1 MiB
  caracal probe --mpi mpich --mode stream --max 8M --json mpich-stream.json
  caracal probe --mode pingpong --nocache --json nocache.json
  caracal probe --mode put --sync lock --max 4M
  caracal probe --mode integrity --max 64M
  caracal probe -n 4 --mode multipair --window 32
  caracal probe --transport tcp --streams 2 --bind 127.0.0.1 --bind 127.0.0.2 --json tcp2.json
  caracal probe --testbed tb --transport tcp --streams 2 --bind cveth0 --bind cveth1 --max 8M
  caracal report openmpi.json mpich.json --plots plots/   # overlay several runs
"""


def add_arguments(p):
    p.add_argument("-n", "--np", type=int, default=2, metavar="N", help="ranks (default 2; multipair: 2k)")
    p.add_argument("--mpi", choices=paths.MPIS, default="openmpi", help="MPI library (default openmpi)")
    p.add_argument("--mode", choices=MODES, default="pingpong", help="what to measure (default pingpong)")
    p.add_argument("--min", default="1", metavar="BYTES", help="smallest size (default 1; 4K, 8M accepted)")
    p.add_argument("--max", default="1M", metavar="BYTES", help="largest size (default 1M)")
    p.add_argument("--per-octave", type=int, default=2, metavar="P", help="base sizes per doubling (default 2)")
    p.add_argument("--perturb", type=int, default=3, metavar="B", help="also measure size+-B (default 3)")
    p.add_argument("--no-perturb", action="store_true", help="base sizes only")
    p.add_argument("--nocache", action="store_true", help="rotate buffers through 2x the last-level cache")
    p.add_argument("--one-buffer", action="store_true",
                   help="pingpong: one buffer per rank for send and receive (NetPIPE's way)")
    p.add_argument("--budget", type=float, default=0.05, metavar="S", help="seconds per size (default 0.05)")
    p.add_argument("--trials", type=int, default=5, metavar="T", help="timed runs per size (default 5)")
    p.add_argument("--min-reps", type=int, default=8, metavar="R", help="at least R repetitions per run (default 8)")
    p.add_argument("--window", type=int, default=16, metavar="W", help="messages in flight: stream, multipair (default 16)")
    p.add_argument("--sync", choices=("fence", "lock"), default="fence", help="put/get completion (default fence)")
    p.add_argument("--pairs", type=int, metavar="K", help="multipair: pairs (default all ranks)")
    p.add_argument("--transport", choices=("mpi", "tcp"), default="mpi", help="mpi (default) or raw tcp")
    p.add_argument("--streams", type=int, default=1, metavar="K", help="tcp: sockets per message (default 1)")
    p.add_argument("--bind", action="append", default=[], metavar="ADDR",
                   help="tcp: IPv4 address or interface name per stream (repeatable)")
    p.add_argument("--stripe-min", default="0", metavar="BYTES",
                   help="tcp: messages below BYTES go over the first stream only (default 0: stripe all)")
    p.add_argument("--testbed", metavar="NAME", help="run on this caracal testbed's emulated hosts (needs root)")
    p.add_argument("--ppn", type=int, metavar="P", help="with --testbed: ranks per host (default 1)")
    p.add_argument("--json", metavar="OUT.json", help="write the result document here")
    p.add_argument("--force", action="store_true", help="overwrite OUT.json")
    p.add_argument("--label", help="name of this run in reports (default: library, mode, options)")
    p.add_argument("--print-sizes", action="store_true", help="print the sizes that would be measured and stop")
    p.add_argument("--timeout", type=float, default=900, metavar="S", help="give up after S seconds (default 900)")


def _positive(name, v, lo=1):
    if v is None or v < lo:
        raise UsageError(f"{name} must be at least {lo}, got {v}")


def validate(args):
    args.min_b = parse_bytes("--min", args.min)
    args.max_b = parse_bytes("--max", args.max)
    args.stripe_min_b = parse_bytes("--stripe-min", args.stripe_min)
    if args.min_b < 1:
        raise UsageError("--min must be at least 1 byte")
    if args.max_b < args.min_b:
        raise UsageError(f"--max ({args.max}) is smaller than --min ({args.min})")
    if args.max_b > 1 << 30:
        raise UsageError("--max is at most 1G")
    _positive("--per-octave", args.per_octave)
    _positive("--perturb", args.perturb, 0)
    _positive("--trials", args.trials)
    _positive("--min-reps", args.min_reps)
    _positive("--window", args.window)
    _positive("--streams", args.streams)
    if args.streams > 64:
        raise UsageError("--streams is at most 64")
    if not (0 < args.budget <= 3600):
        raise UsageError(f"--budget must be in (0, 3600] seconds, got {args.budget}")
    if args.np < 2:
        raise UsageError(f"probe needs at least 2 ranks, got -n {args.np}")
    if args.transport == "tcp":
        if args.mode not in ("pingpong", "stream"):
            raise UsageError(f"--transport tcp supports the pingpong and stream modes, not {args.mode}")
        if args.np != 2:
            raise UsageError("--transport tcp runs exactly 2 processes (-n 2)")
    elif args.bind or args.streams != 1 or args.stripe_min != "0":
        raise UsageError("--streams, --stripe-min and --bind belong to --transport tcp")
    if args.mode == "multipair":
        pairs = args.pairs or args.np // 2
        if args.pairs is None and args.np % 2:
            raise UsageError(f"multipair needs an even number of ranks, got -n {args.np} (or give --pairs)")
        if 2 * pairs > args.np:
            raise UsageError(f"--pairs {pairs} needs {2 * pairs} ranks, -n is {args.np}")
    elif args.pairs is not None:
        raise UsageError("--pairs belongs to --mode multipair")
    if args.mode not in ("put", "get") and args.sync != "fence":
        raise UsageError("--sync belongs to --mode put or get")
    if args.one_buffer and (args.mode != "pingpong" or args.nocache or args.transport != "mpi"):
        raise UsageError("--one-buffer belongs to --mode pingpong over MPI without --nocache")
    if args.ppn is not None and not args.testbed:
        raise UsageError("--ppn belongs to --testbed")
    if args.testbed and args.transport == "tcp" and not args.bind:
        raise UsageError("--testbed with --transport tcp needs --bind (an interface per stream, e.g. --bind cveth0)")
    if args.testbed and args.ppn is not None and args.ppn < 1:
        raise UsageError(f"--ppn must be at least 1, got {args.ppn}")
    check_output_path(args.json, args.force)


def probe_argv(args):
    a = ["--mode", args.mode, "--transport", args.transport, "--min", str(args.min_b),
         "--max", str(args.max_b), "--per-octave", str(args.per_octave),
         "--perturb", str(0 if args.no_perturb else args.perturb), "--budget", repr(args.budget),
         "--trials", str(args.trials), "--min-reps", str(args.min_reps), "--window", str(args.window),
         "--sync", args.sync, "--streams", str(args.streams), "--stripe-min", str(args.stripe_min_b)]
    if args.nocache:
        a.append("--nocache")
    if args.one_buffer:
        a.append("--one-buffer")
    if args.pairs:
        a += ["--pairs", str(args.pairs)]
    for b in args.bind:
        a += ["--bind", b]
    if args.print_sizes:
        a.append("--print-sizes")
    return a


def default_label(args):
    parts = [args.mpi if args.transport == "mpi" else f"tcp x{args.streams}", args.mode]
    if args.mode in ("put", "get"):
        parts.append(args.sync)
    if args.nocache:
        parts.append("nocache")
    if args.one_buffer:
        parts.append("one buffer")
    if args.mode == "multipair":
        parts.append(f"{args.pairs or args.np // 2} pairs")
    return " ".join(parts)


def _row(p, integrity):
    if integrity:
        state = "ok" if p["ok"] else f"CORRUPTED ({p['bad_bytes']} bytes, first at {p.get('first_bad')})"
        return f"{p['size']:>10}  {p['checked']:>7}  {state}"
    return (f"{p['size']:>10}  {p['reps']:>8}  {p['latency_us']:>11.3f}  {p['latency_us_median']:>11.3f}"
            f"  {p['bandwidth_MBps']:>10.1f}  {p['msg_rate']:>12.0f}")


def header(integrity):
    if integrity:
        return f"{'bytes':>10}  {'checked':>7}  result"
    return (f"{'bytes':>10}  {'reps':>8}  {'usec(best)':>11}  {'usec(med)':>11}"
            f"  {'MB/s(best)':>10}  {'msgs/s':>12}")


def run(args):
    validate(args)
    exe = paths.program(args.mpi, "caracal-probe")
    argv = [str(exe)] + probe_argv(args)
    env = launch.launcher_env()
    if args.print_sizes:
        cmd = launch.mpiexec_command(args.mpi, 2, argv)
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
        if out.returncode:
            raise UsageError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "caracal-probe failed")
        sys.stdout.write(out.stdout)
        return 0
    # the test-only corruption hook (docs/probe-format.md) must reach the ranks
    hook = {k: os.environ[k] for k in ("CARACAL_PROBE_CORRUPT",) if os.environ.get(k)}
    testbed_info = None
    timeout = args.timeout
    if args.testbed:
        from .testbed import require_up
        ppn = args.ppn or 1
        st = require_up(args.testbed, -(-args.np // ppn))
        testbed_info = {"name": args.testbed, "hosts": st["hosts"], "links": st["links"],
                        "rate_bits": st["rate_bits"] or 0, "ppn": ppn}
        cmd = launch.testbed_command(args.testbed, args.mpi, args.np, ppn, argv, env=hook, timeout=args.timeout)
        env = launch.testbed_env()
        timeout = args.timeout + 30   # the testbed's own timeout first: it cleans up inside
    else:
        cmd = launch.mpiexec_command(args.mpi, args.np, argv, env=hook)
    integrity = args.mode == "integrity"
    label = args.label or default_label(args)
    print(f"# caracal probe: {label}, {args.np} ranks, {args.min} - {args.max} bytes")
    print(header(integrity))
    try:
        res = run_jsonlines(cmd, env, "caracal-probe", label,
                            lambda p: print(_row(p, integrity)), timeout)
    except RuntimeError as e:
        print(f"caracal probe: {e}", file=sys.stderr)
        return 1
    start = res["start"]
    for p in res["points"]:
        p.pop("index", None)
    corrupted = [p["size"] for p in res["points"] if integrity and not p["ok"]]
    mach = machine(start.get("llc_bytes"))
    if args.nocache:
        mach["region_bytes"] = int(start.get("region_bytes", 0))
    options = {"min": args.min_b, "max": args.max_b, "per_octave": args.per_octave,
               "perturb": 0 if args.no_perturb else args.perturb, "nocache": bool(args.nocache),
               "budget": args.budget, "trials": args.trials, "min_reps": args.min_reps}
    if args.one_buffer:
        options["one_buffer"] = True
    if args.mode in ("stream", "multipair"):
        options["window"] = args.window
    if args.mode in ("put", "get"):
        options["sync"] = args.sync
    if args.mode == "multipair":
        options["pairs"] = args.pairs or args.np // 2
    if args.transport == "tcp":
        options["streams"] = args.streams
        options["bind"] = list(args.bind)
        options["stripe_min"] = args.stripe_min_b
    if testbed_info:
        options["testbed"] = testbed_info
    doc = {"schema": "caracal.probe/1", "label": label, "created": now_iso(),
           "command": ["caracal"] + sys.argv[1:],
           "mode": args.mode, "transport": args.transport, "mpi": args.mpi,
           "mpi_library": start.get("mpi_library", ""), "ranks": args.np,
           "active_ranks": int(start.get("active_ranks", 2)), "options": options,
           "machine": mach, "wall_seconds": round(res["wall"], 3),
           "points": res["points"], "corrupted": corrupted}
    if integrity:
        print(f"# integrity: {len(res['points'])} sizes checked, "
              + (f"CORRUPTED at sizes {corrupted}" if corrupted else "no corruption"))
    else:
        pts = res["points"]
        print(f"# smallest size {pts[0]['size']} B: {pts[0]['latency_us']:.3f} us;"
              f" best bandwidth {max(p['bandwidth_MBps'] for p in pts):.1f} MB/s;"
              f" wall {res['wall']:.1f} s")
    if args.json:
        write_json(args.json, doc)
        print(f"caracal probe: wrote {args.json}", file=sys.stderr)
    return 1 if corrupted else 0
