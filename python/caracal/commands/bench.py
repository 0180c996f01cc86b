"""caracal bench: time one collective, ReproMPI-style (caracal-collbench)."""
import statistics
import sys

from .. import launch, paths
from ..errors import UsageError
from ..tool_run import check_output_path, machine, now_iso, parse_bytes, run_jsonlines, write_json

NAME = "bench"
HELP = "time a collective over sizes with synchronized starts, with Caracal on or off (--native)"
COLLS = ("barrier", "bcast", "reduce", "allreduce", "allgather", "allgatherv", "gather", "gatherv", "scatter",
         "scatterv", "alltoall", "alltoallv", "reduce_scatter", "reduce_scatter_block", "scan", "exscan")
SYNC_BIAS = {
    "window": ("window-based: ranks start each repetition at an agreed time on rank 0's clock "
               "(offsets from the min-RTT ping-pong, no drift model); a repetition is the last "
               "rank's end minus the start; repetitions a rank reached late are discarded"),
    "barrier": ("barrier-based: MPI_Barrier then local timing; a repetition is the max over ranks "
                "of (end - own start); biased: ranks leave the barrier at different moments, so "
                "the barrier's exit skew is counted in (over-estimates short collectives)"),
}
DESCRIPTION = """\
Times COLL at each size on N ranks, the way ReproMPI does: all ranks start a
repetition together, a repetition lasts until its slowest rank is done (max
over ranks), and min / median / P90 / max over repetitions are reported. Sizes
run in a random order (one seed per launch); --launches L repeats the whole job
L times and pools the repetitions (launch-to-launch variation is real).

Caracal is on by default: libcaracal is preloaded like `caracal run` does, so
its collectives are what gets timed. --native times the MPI library alone.
Two runs, one with --native, compare them (`caracal report a.json b.json`).

Sizes are bytes per rank (reductions and scans: doubles, rounded down to 8
bytes; gather, scatter, allgather, alltoall and reduce_scatter types: the block
per rank; v-variants with every rank's block the same). Collectives: every MPI
family but alltoallw: barrier, bcast, reduce, allreduce, allgather(v),
gather(v), scatter(v), alltoall(v), reduce_scatter(_block), scan, exscan.

--sync window (default): start times agreed on rank 0's clock, offsets
estimated first; late repetitions discarded. --sync barrier: MPI_Barrier before
each repetition; simpler but biased by the barrier's exit skew (stated in the
JSON as sync_bias).

Examples:
  caracal bench allreduce -n 4 --sizes 8,1K,64K,1M --json caracal.json
  caracal bench allreduce -n 4 --sizes 8,1K,64K,1M --native --json native.json
  caracal report caracal.json native.json --plots plots/
  caracal bench bcast --mpi mpich --sync barrier --reps 200 --launches 3
"""


def add_arguments(p):
    p.add_argument("coll", metavar="COLL", help="collective: " + ", ".join(COLLS))
    p.add_argument("-n", "--np", type=int, default=2, metavar="N", help="ranks (default 2)")
    p.add_argument("--mpi", choices=paths.MPIS, default="openmpi", help="MPI library (default openmpi)")
    p.add_argument("--sizes", default="8,1K,64K", help="comma-separated bytes per rank (default 8,1K,64K)")
    p.add_argument("--reps", type=int, default=50, metavar="R", help="repetitions per size and launch (default 50)")
    p.add_argument("--warmup", type=int, default=3, metavar="W", help="untimed calls per size (default 3)")
    p.add_argument("--sync", choices=("window", "barrier"), default="window", help="start synchronisation")
    p.add_argument("--window-us", type=int, default=0, metavar="US", help="window length (default: measured)")
    p.add_argument("--root", type=int, default=0, help="root of bcast/reduce (default 0)")
    p.add_argument("--launches", type=int, default=1, metavar="L", help="separate mpiexec launches (default 1)")
    p.add_argument("--seed", type=int, default=1, help="order seed of the first launch (default 1)")
    p.add_argument("--native", action="store_true", help="do not preload libcaracal: the MPI library alone")
    p.add_argument("--json", metavar="OUT.json", help="write the result document (caracal.bench/1)")
    p.add_argument("--force", action="store_true", help="overwrite OUT.json")
    p.add_argument("--label", help="name of this run in reports")
    p.add_argument("--timeout", type=float, default=900, metavar="S", help="give up after S seconds per launch")


def validate(args):
    if args.coll not in COLLS:
        raise UsageError(f"unknown collective '{args.coll}' (choose {', '.join(COLLS)})")
    sizes = [parse_bytes("--sizes", s) for s in args.sizes.split(",") if s.strip()]
    if not sizes:
        raise UsageError("--sizes is empty")
    if len(sizes) > 256 or max(sizes) > 1 << 28:
        raise UsageError("--sizes: at most 256 sizes, each at most 256M")
    if len(set(sizes)) != len(sizes):
        raise UsageError("--sizes lists a size twice")
    args.size_list = sizes
    for name in ("np", "reps", "launches"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name.replace('np', 'np (-n)')} must be at least 1")
    if args.warmup < 0 or args.window_us < 0 or args.seed < 0:
        raise UsageError("--warmup, --window-us and --seed cannot be negative")
    if not (0 <= args.root < args.np):
        raise UsageError(f"--root {args.root} is not a rank of a {args.np}-rank job")
    check_output_path(args.json, args.force)


def _q(sorted_v, q):
    if not sorted_v:
        return None
    pos = q * (len(sorted_v) - 1)
    i = int(pos)
    if i + 1 < len(sorted_v):
        return sorted_v[i] + (pos - i) * (sorted_v[i + 1] - sorted_v[i])
    return sorted_v[-1]


def _fmt(v):
    return f"{v:10.2f}" if v is not None else f"{'-':>10}"


def run(args):
    validate(args)
    exe = paths.program(args.mpi, "caracal-collbench")
    env = {}
    if not args.native:
        env["LD_PRELOAD"] = str(paths.library(args.mpi))
    label = args.label or f"{args.mpi} {args.coll} n={args.np} {'native' if args.native else 'caracal'}"
    print(f"# caracal bench: {label}, sync {args.sync}, {args.reps} reps x {args.launches} launch(es)")
    print(f"{'bytes':>10}  {'launch':>6}  {'valid':>5}  {'min us':>10}  {'median us':>10}  {'p90 us':>10}  {'max us':>10}")
    samples = {s: [] for s in args.size_list}
    medians = {s: [] for s in args.size_list}
    ran = {s: 0 for s in args.size_list}  # repetitions run (late ones are re-run, up to 4x)
    nbytes, launches, start = {}, [], None
    wall = 0.0
    for li in range(args.launches):
        seed = args.seed + li
        argv = [str(exe), args.coll, "--sizes", ",".join(map(str, args.size_list)), "--reps", str(args.reps),
                "--warmup", str(args.warmup), "--sync", args.sync, "--seed", str(seed),
                "--root", str(args.root), "--window-us", str(args.window_us)]
        cmd = launch.mpiexec_command(args.mpi, args.np, argv, env=env)

        def row(p, li=li):
            print(f"{p['size']:>10}  {li:>6}  {p['valid']:>5}  {_fmt(p.get('min_us'))}  "
                  f"{_fmt(p.get('median_us'))}  {_fmt(p.get('p90_us'))}  {_fmt(p.get('max_us'))}")
        try:
            res = run_jsonlines(cmd, launch.launcher_env(), "caracal-collbench", label, row,
                                args.timeout)
        except RuntimeError as e:
            print(f"caracal bench: {e}", file=sys.stderr)
            return 1
        start = res["start"]
        wall += res["wall"]
        if not args.native and not start.get("caracal_preloaded"):
            print("caracal bench: libcaracal was not preloaded into the ranks", file=sys.stderr)
            return 1
        launches.append({"seed": seed, "seconds": round(res["wall"], 3),
                         "clock_max_offset_us": start.get("clock_max_offset_us", 0.0),
                         "clock_min_rtt_us": start.get("clock_min_rtt_us", 0.0)})
        for p in res["points"]:
            samples[p["size"]] += p.get("samples_us", [])
            medians[p["size"]].append(p.get("median_us"))
            ran[p["size"]] += p["reps"]
            nbytes[p["size"]] = p["bytes"]
    points = []
    for s in sorted(args.size_list):
        v = sorted(samples[s])
        points.append({"size": s, "bytes": nbytes.get(s, s), "reps": ran[s],
                       "valid": len(v), "min_us": v[0] if v else None, "median_us": _q(v, 0.5),
                       "p90_us": _q(v, 0.9), "max_us": v[-1] if v else None,
                       "launch_medians_us": medians[s]})
    if args.launches > 1:
        print("# pooled over launches")
        for p in points:
            spread = [m for m in p["launch_medians_us"] if m is not None]
            extra = f"  launch medians {min(spread):.2f}-{max(spread):.2f}" if spread else ""
            print(f"{p['size']:>10}  {'all':>6}  {p['valid']:>5}  {_fmt(p['min_us'])}  {_fmt(p['median_us'])}"
                  f"  {_fmt(p['p90_us'])}  {_fmt(p['max_us'])}{extra}")
    doc = {"schema": "caracal.bench/1", "label": label, "created": now_iso(),
           "command": ["caracal"] + sys.argv[1:], "coll": args.coll, "mpi": args.mpi,
           "mpi_library": start.get("mpi_library", ""), "ranks": args.np, "caracal": not args.native,
           "sync": args.sync, "sync_bias": SYNC_BIAS[args.sync], "reps": args.reps,
           "launches": launches, "machine": machine(), "wall_seconds": round(wall, 3), "points": points}
    if args.json:
        write_json(args.json, doc)
        print(f"caracal bench: wrote {args.json}", file=sys.stderr)
    return 0
