"""caracal map: choose where each rank runs, as a quadratic assignment problem.

Two modes, both solved by the C solver (build/bin/caracal-qap): a QAPLIB instance
(--qaplib), or an application's profile on a topology (--profile/--topology, in
map_profile.py).
"""
import json
import subprocess
from pathlib import Path

from .. import paths
from ..errors import UsageError
from . import map_profile

NAME = "map"
HELP = "place ranks by their traffic (profile) on a topology, or solve QAPLIB instances (QAP)"
DESCRIPTION = """\
Minimises sum_ij A[i][j] * B[p(i)][p(j)] over permutations p: A is traffic
between ranks, B the distance between cores, p(i) the core of rank i.

  caracal map --profile app.json --topology topo.json --out rankfile
  caracal map --profile app.json --topology topo.json --out hosts --format mpich
  caracal map --qaplib tai12a.dat                 # 1 second of robust tabu search
  caracal map --qaplib tai12a.dat --time 5 --json
  caracal map --qaplib tai12a.dat --method grasp  # GRASP alone, for comparison

The permutation is 0-based: entry i is the location of unit i. Same seed, same
search; --iterations N instead of --time makes the result independent of machine
speed. With --json the keys are n, cost, permutation, seconds, iterations,
method, seed, and best_known and gap (percent above best known) when the file's
directory holds a best-known.tsv listing the instance.

With --profile and --topology, A is the profile's traffic.bytes (row = sender)
and B the topology's latency L; the topology must describe as many ranks as the
profile has. It prints the predicted cost (bytes x seconds) of the QAP mapping
against identity, random (median of 5 seeds) and hostname order, and with --out
writes an Open MPI rankfile ("rank i=host slot=core", or slot=* where the
topology's rank was not bound to one core) or, with --format mpich,
a Hydra machinefile (one "host:1" line per rank, in rank order). --starts K runs
K searches (seeds SEED..SEED+K-1, each with the whole budget) and keeps the lowest
cost; --json then lists each search's cost under "starts".
"""


def _positive_float(text):
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not v > 0 or v == float("inf"):
        raise UsageError(f"--time needs a positive number of seconds, not '{text}'")
    return v


def add_arguments(p):
    p.add_argument("--qaplib", metavar="FILE.dat", help="QAPLIB instance: n, then matrix A, then matrix B")
    p.add_argument("--profile", metavar="PROFILE.json", help="caracal.profile/1 document (from caracal run)")
    p.add_argument("--topology", metavar="TOPO.json", help="caracal.topology/1 document (from caracal nodemap)")
    p.add_argument("--out", metavar="RANKFILE", help="write the mapping here (with --profile)")
    p.add_argument("--format", choices=("openmpi", "mpich"), default="openmpi",
                   help="openmpi: rankfile (default); mpich: machinefile in rank order")
    p.add_argument("--force", action="store_true", help="overwrite RANKFILE if it exists")
    p.add_argument("--time", metavar="SECONDS", help="time budget (default 1)")
    p.add_argument("--iterations", metavar="N", type=int,
                   help="stop after N moves (tabu) or constructions (grasp) instead of a time budget")
    p.add_argument("--seed", metavar="K", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--starts", metavar="K", type=int, default=1,
                   help="with --profile: K searches (seeds SEED..SEED+K-1, each with the full --time or "
                        "--iterations, one after the other), the lowest cost kept (default 1)")
    p.add_argument("--method", choices=("auto", "tabu", "grasp"), default="auto",
                   help="auto (= tabu, the stronger search), tabu, or grasp")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def _solver() -> Path:
    # The solver needs no MPI at run time: either build's copy will do.
    for mpi in paths.MPIS:
        exe = paths.build_dir(mpi) / "bin" / "caracal-qap"
        if exe.exists():
            return exe
    return paths.program("openmpi", "caracal-qap")  # raises with the build hint


def best_known(dat: Path):
    """(best_known, optimal) from best-known.tsv beside the file, or None."""
    tsv = dat.parent / "best-known.tsv"
    if not tsv.is_file():
        return None
    for line in tsv.read_text(errors="replace").splitlines()[1:]:
        cols = line.split("\t")
        if len(cols) >= 3 and cols[0] == dat.stem:
            try:
                return int(cols[2]), (cols[3].strip() == "yes" if len(cols) > 3 else None)
            except ValueError:
                return None
    return None


def gap_percent(cost: int, bk: int):
    if bk == 0:
        return 0.0 if cost == 0 else None
    return 100.0 * (cost - bk) / bk


def run(args):
    if (args.qaplib is None) == (args.profile is None and args.topology is None):
        raise UsageError("give either --qaplib FILE.dat or --profile PROFILE.json --topology TOPO.json")
    if args.seed < 0:
        raise UsageError(f"--seed needs a non-negative integer, not {args.seed}")
    if args.iterations is not None and args.iterations <= 0:
        raise UsageError(f"--iterations needs a positive integer, not {args.iterations}")
    if args.qaplib is None:
        if args.profile is None or args.topology is None:
            raise UsageError("--profile and --topology go together")
        if args.starts < 1:
            raise UsageError(f"--starts needs a positive integer, not {args.starts}")
        time = _positive_float(args.time) if args.time is not None else None
        return map_profile.run(args, _solver(), time)
    if args.out or args.force or args.starts != 1:
        raise UsageError("--out, --force and --starts go with --profile, not --qaplib")
    dat = Path(args.qaplib)
    if not dat.is_file():
        raise UsageError(f"no such file: {dat}")
    if args.seed < 0:
        raise UsageError(f"--seed needs a non-negative integer, not {args.seed}")
    if args.iterations is not None and args.iterations <= 0:
        raise UsageError(f"--iterations needs a positive integer, not {args.iterations}")
    cmd = [str(_solver()), str(dat), "--seed", str(args.seed), "--method", args.method, "--json"]
    if args.time is not None:
        cmd += ["--time", repr(_positive_float(args.time))]
    if args.iterations is not None:
        cmd += ["--iterations", str(args.iterations)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        msg = p.stderr.strip().splitlines()
        msg = msg[-1] if msg else f"caracal-qap failed with status {p.returncode}"
        msg = msg.removeprefix("caracal-qap: ")
        if p.returncode == 2:
            raise UsageError(msg)
        raise RuntimeError(msg)
    res = json.loads(p.stdout)
    bk = best_known(dat)
    if bk is not None:
        res["best_known"] = bk[0]
        res["gap"] = gap_percent(res["cost"], bk[0])
    if args.json:
        print(json.dumps(res))
        return 0
    print(f"cost {res['cost']}")
    if bk is not None:
        g = res["gap"]
        print(f"best known {bk[0]}" + (f" (gap {g:.3f}%)" if g is not None else ""))
    print("permutation (0-based, unit i -> location): " + " ".join(map(str, res["permutation"])))
    print(f"method {res['method']}, seed {res['seed']}, {res['iterations']} iterations, {res['seconds']:.3f} s")
    return 0
