"""caracal map --profile P --topology T: place an application's ranks.

The QAP's flow is the profile's point-to-point traffic (traffic.bytes, row =
sender), its distance the topology's one-way latency L between the locations the
topology describes (its ranks: host and core of each slot). p[i] = location of
rank i. The predicted cost sum_ij bytes[i][j] * L[p(i)][p(j)] (byte-seconds) is
printed for the QAP mapping and for three mappings that know nothing of the
traffic: identity (as the topology was measured), random (median of a few
seeds) and hostname order (slots sorted by host name).
"""
import json
import os
import random
import statistics
import subprocess
import tempfile
from pathlib import Path

from .. import topology
from ..errors import UsageError

PROFILE_SCHEMA = "caracal.profile/1"
RANDOM_SEEDS = (1, 2, 3, 4, 5)
# L in seconds becomes an integer matrix for the solver: units of 0.1 ns, as in libcaracal.
L_UNITS = 1e10


def load_profile(path) -> dict:
    """The profile's traffic matrix, checked; every problem is one UsageError line."""
    doc = topology.load_json(path)
    if not isinstance(doc, dict) or doc.get("schema") != PROFILE_SCHEMA:
        raise UsageError(f"{path}: not a {PROFILE_SCHEMA} document (\"schema\" is missing or different)")
    n = doc.get("nranks")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise UsageError(f'{path}: "nranks" must be a positive integer')
    tr = doc.get("traffic")
    b = tr.get("bytes") if isinstance(tr, dict) else None
    if not isinstance(b, list) or len(b) != n:
        raise UsageError(f'{path}: "traffic"."bytes" must be a {n} x {n} array (row = sender)')
    for i, row in enumerate(b):
        if not isinstance(row, list) or len(row) != n:
            raise UsageError(f"{path}: traffic.bytes[{i}] must be an array of {n} byte counts")
        for j, x in enumerate(row):
            if not isinstance(x, int) or isinstance(x, bool) or x < 0:
                raise UsageError(f"{path}: traffic.bytes[{i}][{j}] must be a non-negative integer")
    return doc


def cost(T, L, p) -> float:
    n = len(T)
    return sum(T[i][j] * L[p[i]][p[j]] for i in range(n) for j in range(n) if T[i][j])


def hostname_order(topo) -> list:
    """Rank i on the i-th slot when slots are sorted by host name (then by index)."""
    ranks = topo.get("ranks")
    n = topo["nranks"]
    hosts = [str(r.get("host", "")) if isinstance(r, dict) else "" for r in ranks] if isinstance(ranks, list) and len(ranks) == n else [""] * n
    return sorted(range(n), key=lambda k: (hosts[k], k))


def random_median(T, L, n):
    costs = []
    for s in RANDOM_SEEDS:
        p = list(range(n))
        random.Random(s).shuffle(p)
        costs.append(cost(T, L, p))
    return statistics.median(costs)


def slots(topo):
    """(host, slot) of each location. The slot is the core the location was bound to when
    the topology says so (and no other location of that host has it); otherwise "*": Open
    MPI then places the rank on that host without binding it. A core that was only where
    an unbound rank last ran is no promise, and a slot beyond the host's cores fails."""
    n = topo["nranks"]
    ranks = topo.get("ranks") if isinstance(topo.get("ranks"), list) and len(topo["ranks"]) == n else None
    if ranks is None:
        raise UsageError("the topology has no \"ranks\" array with a host per rank: cannot write a rankfile")
    hosts = []
    for k, r in enumerate(ranks):
        h = r.get("host") if isinstance(r, dict) else None
        if not isinstance(h, str) or not h or any(c.isspace() or c in "=:" for c in h):
            raise UsageError(f"topology ranks[{k}].host must be a host name")
        hosts.append(h)
    core = [r["core"] if r.get("bound") is True and isinstance(r.get("core"), int) and r["core"] >= 0 else None
            for r in ranks]
    out = []
    for k in range(n):
        same = [q for q in range(n) if hosts[q] == hosts[k] and q != k]
        unique = core[k] is not None and all(core[q] != core[k] for q in same)
        out.append((hosts[k], str(core[k]) if unique else "*"))
    return out


def rankfile_text(fmt, perm, locs) -> str:
    if fmt == "openmpi":
        return "".join(f"rank {i}={locs[p][0]} slot={locs[p][1]}\n" for i, p in enumerate(perm))
    # MPICH (Hydra): one host per line in rank order; ":1" keeps each line to one rank.
    return "".join(f"{locs[p][0]}:1\n" for p in perm)


def solve(T, L, n, solver, seed, time, iterations):
    """QAP permutation from the C solver, through a QAPLIB file (n, flow, distance)."""
    if n == 1:
        return [0]
    Li = [[0 if p == q else max(1, round(L[p][q] * L_UNITS)) for q in range(n)] for p in range(n)]
    fd, dat = tempfile.mkstemp(suffix=".dat", prefix="caracal-map-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(f"{n}\n\n")
            f.write("\n".join(" ".join(map(str, row)) for row in T) + "\n\n")
            f.write("\n".join(" ".join(map(str, row)) for row in Li) + "\n")
        cmd = [str(solver), dat, "--seed", str(seed), "--json"]
        if time is not None:
            cmd += ["--time", repr(time)]
        if iterations is not None:
            cmd += ["--iterations", str(iterations)]
        p = subprocess.run(cmd, capture_output=True, text=True)
    finally:
        os.unlink(dat)
    if p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or [f"caracal-qap failed with status {p.returncode}"])[-1]
        msg = msg.removeprefix("caracal-qap: ").replace(dat + ": ", "")
        if p.returncode == 2:
            raise UsageError(f"traffic and latency: {msg}")
        raise RuntimeError(msg)
    return json.loads(p.stdout)["permutation"]


def run(args, solver, time):
    if args.out and Path(args.out).exists() and not args.force:
        raise UsageError(f"{args.out} exists; choose another --out or add --force")
    if args.out and not Path(args.out).resolve().parent.is_dir():
        raise UsageError(f"directory does not exist: {Path(args.out).resolve().parent}")
    prof = load_profile(args.profile)
    topo = topology.read(args.topology)
    n = prof["nranks"]
    if topo["nranks"] != n:
        raise UsageError(f"{args.profile} has {n} ranks but {args.topology} describes {topo['nranks']}: "
                         "measure the topology with as many ranks as the application")
    if prof.get("partial"):
        print(f"caracal map: note: {args.profile} is partial (some ranks did not finish); using what it has")
    T = prof["traffic"]["bytes"]
    L = topo["L"]
    locs = slots(topo) if args.out else None
    # Several searches from different seeds: on instances where the locations form a few
    # groups (sites, nodes) one tabu walk can settle in a poor partition of the ranks
    # (bench/results/mcmpi-mapping.md: seed 1 stops 21% above seed 2 on halo at 256 ranks).
    starts = []
    for seed in range(args.seed, args.seed + getattr(args, "starts", 1)):
        p = solve(T, L, n, solver, seed, time, args.iterations)
        starts.append((cost(T, L, p), seed, p))
    _, _, qap = min(starts, key=lambda s: (s[0], s[1]))
    ident = list(range(n))
    host = hostname_order(topo)
    costs = {"qap": cost(T, L, qap), "identity": cost(T, L, ident),
             "random": random_median(T, L, n), "hostname": cost(T, L, host)}
    # The solver works on rounded latencies: never hand out a mapping that the exact
    # costs show to be worse than one of the simple ones.
    for name, p in (("identity", ident), ("hostname", host)):
        if costs[name] < costs["qap"]:
            qap, costs["qap"] = p, costs[name]
    if args.out:
        tmp = Path(args.out).with_name(Path(args.out).name + ".tmp")
        tmp.write_text(rankfile_text(args.format, qap, locs))
        tmp.replace(args.out)
    if args.json:
        print(json.dumps({"nranks": n, "permutation": qap, "cost": costs, "format": args.format, "out": args.out,
                          "starts": [{"seed": sd, "cost": c} for c, sd, _ in starts]}))
        return 0
    print(f"caracal map: {n} ranks, {sum(map(sum, T))} bytes point-to-point; predicted cost (byte-seconds, "
          "sum of bytes x latency):")
    for name, label in (("qap", "QAP mapping"), ("identity", "identity"), ("random", f"random (median of {len(RANDOM_SEEDS)})"),
                        ("hostname", "hostname order")):
        c = costs[name]
        ratio = "" if name == "qap" else (f"   QAP / this = {costs['qap'] / c:.3f}" if c > 0 else "   QAP / this = -")
        print(f"  {label:<22} {c:.6g}{ratio}")
    if len(starts) > 1:
        print("  searches (seed: cost): " + ", ".join(f"{sd}: {c:.6g}" for c, sd, _ in starts))
    print("mapping (rank -> topology location): " + " ".join(map(str, qap)))
    if args.out:
        use = (f"caracal run --rankfile {args.out} -- PROGRAM" if args.format == "openmpi"
               else f"caracal run --mpi mpich --hostfile {args.out} -n {n} -- PROGRAM")
        print(f"written {args.out}; run with: {use}")
    return 0
