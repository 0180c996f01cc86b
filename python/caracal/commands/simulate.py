"""caracal simulate: Caracal's own code on a simulated platform (SimGrid SMPI)."""
import json
import os
import tempfile
from pathlib import Path

from ..errors import UsageError
from ..sim import build, platform, run as simrun

NAME = "simulate"
HELP = "run an MPI C program with Caracal on a simulated platform (SimGrid SMPI)"
DESCRIPTION = """\
Builds Caracal's sources and PROGRAM.c with smpicc, writes a SimGrid platform and
hostfile, runs smpirun, and reports the simulated time with the host's wall time
and peak memory (docs/simulate.md).

Platforms: cluster (multi-core nodes on a crossbar), torus (3-D), fattree (two
levels), wan (four clusters joined by wide-area links, MC-MPI's round trips).
Ranks go on nodes of --ppn cores in blocks, round-robin, or as a FILE lists them
(one host per rank, in rank order; `caracal map --format mpich` writes one).
Caracal sees each simulated node as a host: its node level comes from SMPI's
MPI_COMM_TYPE_SHARED. With Caracal linked, what it leaves native runs SMPI's plain
algorithms (smpi/allreduce:rdb, bcast:binomial_tree, reduce:binomial; a --cfg of the same
name wins): the selectors' SMP-aware ones set up with n^2 messages on first use.

Examples:
  caracal simulate --platform cluster --ranks 64 --ppn 16 -- tests/simulate/sim_coll.c
  caracal simulate --platform cluster --ranks 1024 --ppn 32 --mapping roundrobin \\
      --env CARACAL_ALLREDUCE=hier --out sim-out -- bench/simulate/coll_time.c allreduce 8
  caracal simulate --platform wan --ranks 256 --ppn 1 --env CARACAL_COLL=0 -- examples/halo.c

The last line of output is a JSON summary: platform, ranks, nodes, ppn, mapping,
selector, exit, simulated_s, wall_s, cpu_s, peak_rss_bytes, peak_pss_bytes (the
memory really taken: RSS counts SMPI's shared buffers once per rank); --out DIR also keeps the
platform, hostfile, program, SMPI's full log and summary.json there.
"""


def add_arguments(p):
    p.add_argument("--platform", required=True, choices=platform.KINDS)
    p.add_argument("--ranks", type=int, required=True, metavar="N")
    p.add_argument("--ppn", type=int, default=32, metavar="P", help="cores (ranks) per node (default 32)")
    p.add_argument("--mapping", default="block", metavar="block|roundrobin|FILE")
    p.add_argument("--extents", metavar="AxB...", help="torus only: its extents, any number of dimensions "
                   "(e.g. 8, 8x8, 8x8x8; default: three near a cube holding the nodes)")
    p.add_argument("--env", action="append", default=[], metavar="K=V", help="environment of the ranks (repeatable)")
    p.add_argument("--selector", default="mpich", choices=simrun.SELECTORS,
                   help="SMPI's collective algorithms for what runs native (smpi/coll-selector; default mpich: "
                        "SMPI's own 'default' is one message per pair of ranks for allgather, quadratic in host time)")
    p.add_argument("--cfg", action="append", default=[], metavar="NAME:VALUE", help="another SMPI option")
    p.add_argument("--out", metavar="DIR", help="keep platform, hostfile, program, log and summary.json here")
    p.add_argument("--no-caracal", action="store_true",
                   help="link the program without Caracal (SMPI's MPI alone: the flat baseline)")
    p.add_argument("program", nargs="+", metavar="PROGRAM.c [ARGS]")


def _env(pairs):
    env = {}
    for kv in pairs:
        k, sep, v = kv.partition("=")
        if not sep or not k:
            raise UsageError(f"--env needs K=V, not '{kv}'")
        env[k] = v
    return env


def _extents(text, kind):
    if text is None:
        return None
    if kind != "torus":
        raise UsageError("--extents is for --platform torus")
    try:
        return tuple(int(x) for x in text.lower().split("x"))
    except ValueError:
        raise UsageError(f"--extents needs extents such as 8x8, not '{text}'") from None


def run(args):
    source, prog_args = Path(args.program[0]), args.program[1:]
    env = _env(args.env)
    extents = _extents(args.extents, args.platform)
    nodes, hosts = platform.rank_hosts(args.platform, args.ranks, args.ppn, args.mapping, extents)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="caracal-sim-"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "platform.xml").write_text(platform.platform_xml(args.platform, nodes, args.ppn, extents))
    (out / "hostfile").write_text("".join(h + "\n" for h in hosts))
    lib = None if args.no_caracal else build.library(log=lambda m: print(f"caracal simulate: {m}", flush=True))
    exe = out / (source.stem + ("-smpi-native" if args.no_caracal else "-smpi"))
    if lib:
        build.program(source, lib, exe)
    else:
        build.plain_program(source, exe)
    cmd = simrun.smpirun_command(exe.resolve(), prog_args, args.ranks, (out / "platform.xml").resolve(),
                                 (out / "hostfile").resolve(), args.platform, args.selector, args.cfg,
                                 caracal=lib is not None)
    res = simrun.run(cmd, env, out, out / "smpi.log")
    summary = {"platform": args.platform, "ranks": args.ranks, "nodes": nodes, "ppn": args.ppn,
               "mapping": args.mapping if args.mapping in ("block", "roundrobin") else str(args.mapping),
               **({"extents": list(extents)} if extents else {}), "selector": args.selector, "caracal": lib is not None,
               "native_cfg": simrun.native_cfg(lib is not None, args.cfg), "env": env,
               "exit": res["exit"], "simulated_s": res["simulated_s"], "wall_s": res["wall_s"], "cpu_s": res["cpu_s"],
               "peak_rss_bytes": res["peak_rss_bytes"], "peak_pss_bytes": res["peak_pss_bytes"], "load": os.getloadavg()[0]}
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary))
    return res["exit"]
