"""caracal nodemap: discover the machine's topology (or take it from a static
file) and write a caracal.topology/1 document."""
import json
import subprocess
import sys
from pathlib import Path

from .. import frontend, launch, paths, topology
from ..errors import UsageError
from ..progress import ProgressBar

NAME = "nodemap"
HELP = "discover where ranks run and how far apart they are; write a caracal.topology/1 file"
DESCRIPTION = """\
Runs caracal-nodemap under mpiexec with N ranks, placed as your application's
ranks will be. It records each rank's host, shared-memory group and hwloc
placement, measures latency between pairs (pairs that the triangle inequality
makes predictable are estimated instead), measures bandwidth for a sample of
pairs, and groups ranks into levels: socket < node < switch/cluster < site.

Where nothing can be measured, --static FILE turns a hand-written description
(docs/topology-format.md) into the same format. --check FILE reads one back.

Use the result with:  CARACAL_TOPOLOGY=TOPO.json caracal run ...

On emulated hosts (caracal testbed, docs/testbed.md): --testbed NAME --ppn P runs
the N ranks there, P per host in host order, as `caracal testbed run` places them.

Examples:
  caracal nodemap -n 4 --out topo.json
  caracal nodemap -n 8 --mpi mpich --hostfile hosts --out topo.json
  caracal nodemap --testbed tb -n 8 --ppn 2 --out topo.json
  caracal nodemap --static machine.json --out topo.json
"""


def add_arguments(p):
    p.add_argument("-n", "--np", type=int, default=None, metavar="N", help="number of ranks (default 2)")
    p.add_argument("--mpi", choices=paths.MPIS, default="openmpi", help="MPI library (default openmpi)")
    p.add_argument("--out", metavar="TOPO.json", help="where to write the topology")
    p.add_argument("--force", action="store_true", help="overwrite TOPO.json if it exists")
    p.add_argument("--static", metavar="FILE", help="no measuring: convert this hand-written topology")
    p.add_argument("--check", metavar="TOPO.json", help="check a topology file and print its summary")
    p.add_argument("--hostfile", metavar="FILE", help="hosts to run on (passed to mpiexec)")
    p.add_argument("--testbed", metavar="NAME", help="run on this caracal testbed's emulated hosts (needs root)")
    p.add_argument("--ppn", type=int, metavar="P", help="with --testbed: ranks per host (default 1)")
    p.add_argument("--timeout", type=float, default=600, metavar="S",
                   help="with --testbed: give up after S seconds (default 600)")
    p.add_argument("--reps", type=int, default=30, metavar="N", help="ping-pongs per measured pair (default 30)")
    p.add_argument("--ratio", type=float, default=4.0, metavar="R",
                   help="estimate rtt(p,q) ~ rtt(p,r) when rtt(p,r) >= R * rtt(r,q) (default 4)")
    p.add_argument("--gap", type=float, default=2.0, metavar="G",
                   help="a jump by this factor in sorted inter-node latencies separates levels (default 2)")
    p.add_argument("--no-prune", action="store_true", help="measure every pair")
    p.add_argument("--landmarks", type=int, default=0, metavar="K",
                   help="time every rank against only K group leaders, spread over the groups "
                        "(default 0: every group's leader; with one rank per node that is every pair)")
    p.add_argument("--bw-size", type=int, default=1 << 20, metavar="BYTES",
                   help="message size for bandwidth (default 1 MiB; 0 = no bandwidth)")


def _out_path(args) -> Path:
    if not args.out:
        raise UsageError("--out TOPO.json is required")
    out = Path(args.out).resolve()
    if out.exists() and not args.force:
        raise UsageError(f"{args.out} exists; choose another --out or add --force")
    if not out.parent.is_dir():
        raise UsageError(f"directory does not exist: {out.parent}")
    return out


def _dumps(doc) -> str:
    """One key per line; arrays of ranks, levels and matrix rows one item per line."""
    parts = []
    for k, v in doc.items():
        if isinstance(v, list) and v and isinstance(v[0], (dict, list)):
            body = ",\n".join("    " + json.dumps(x) for x in v)
            parts.append(f"  {json.dumps(k)}: [\n{body}\n  ]")
        else:
            parts.append(f"  {json.dumps(k)}: {json.dumps(v)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def _write(doc, out: Path):
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(_dumps(doc))
    tmp.replace(out)


def run(args):
    if args.check:
        if args.static or args.out:
            raise UsageError("--check does not go with --static or --out")
        doc = topology.read(args.check)
        print(f"{args.check}: {topology.summary(doc)}")
        return 0
    out = _out_path(args)
    if args.static:
        doc = topology.from_static(topology.load_json(args.static), args.static)
        if args.np is not None and args.np != doc["nranks"]:
            raise UsageError(f"{args.static} describes {doc['nranks']} ranks, not -n {args.np}")
        topology.check(doc, args.static)  # what we write, libcaracal must accept
        _write(doc, out)
        print(f"caracal nodemap: {topology.summary(doc)}; written to {out}")
        return 0

    n = 2 if args.np is None else args.np
    frontend.check_nranks(n, spread=bool(args.hostfile))  # -n 100000 on one machine never gets going
    if args.reps < 1:
        raise UsageError(f"--reps must be at least 1, not {args.reps}")
    if not args.ratio > 1 or not args.gap > 1:
        raise UsageError("--ratio and --gap must be greater than 1")
    if args.bw_size < 0:
        raise UsageError("--bw-size must not be negative")
    if args.landmarks < 0:
        raise UsageError(f"--landmarks must not be negative, not {args.landmarks}")
    if args.ppn is not None and not args.testbed:
        raise UsageError("--ppn belongs to --testbed")
    if args.testbed and args.hostfile:
        raise UsageError("--testbed places the ranks itself: no --hostfile")
    if args.testbed and (args.ppn or 1) < 1:
        raise UsageError(f"--ppn must be at least 1, not {args.ppn}")
    extra = []
    if args.hostfile:
        if not Path(args.hostfile).is_file():
            raise UsageError(f"hostfile not found: {args.hostfile}")
        extra = ["--hostfile" if launch.library(args.mpi).family == "openmpi" else "-f", str(Path(args.hostfile).resolve())]
    prog = [str(paths.program(args.mpi, "caracal-nodemap")), "--out", str(out), "--reps", str(args.reps),
            "--ratio", repr(args.ratio), "--gap", repr(args.gap), "--bw-size", str(args.bw_size),
            "--landmarks", str(args.landmarks)]
    if args.no_prune:
        prog.append("--no-prune")
    if out.exists():
        out.unlink()  # --force: an old file must not pass for the new one
    env = launch.launcher_env()
    if args.testbed:
        from .testbed import require_up
        ppn = args.ppn or 1
        require_up(args.testbed, -(-n // ppn))
        cmd = launch.testbed_command(args.testbed, args.mpi, n, ppn, prog, timeout=args.timeout)
        env = launch.testbed_env()
    else:
        cmd = launch.mpiexec_command(args.mpi, n, prog, extra=extra)
    sys.stdout.flush()
    # caracal-nodemap reports nothing until it is done: the bar shows only that it runs, and
    # for how long
    with ProgressBar(None, f"nodemap: {n} ranks, {n * (n - 1) // 2} pairs"):
        rc = subprocess.call(cmd, env=env)
    if rc != 0:
        print(f"caracal nodemap: caracal-nodemap failed (exit status {rc})", file=sys.stderr)
        return rc if rc == 2 else 1
    doc = topology.read(out)
    print(f"caracal nodemap: {topology.summary(doc)}; written to {out}")
    return 0
