"""caracal tune: measure every algorithm here and write the selection for this machine."""
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

from .. import launch, paths
from ..errors import UsageError
from ..progress import ProgressBar
from ..tool_run import machine, now_iso, parse_bytes
from . import info as info_cmd

NAME = "tune"
HELP = "measure Caracal's and the native library's algorithms on this machine and write the rules for it"
DEFAULT_SIZES = "0,8,64,512,4K,32K,256K,1M"
DEFAULT_COLLS = ("barrier", "bcast", "reduce", "allreduce", "allgather", "allgatherv", "gather", "gatherv",
                 "scatter", "scatterv", "alltoall", "alltoallv", "reduce_scatter", "reduce_scatter_block",
                 "scan", "exscan")
RADIX = {"knomial": (2, 4), "nary": (2, 4)}  # parameter variants measured per algorithm
MARGIN = 0.03  # a Caracal algorithm replaces native only when at least 3% faster by median
STATE = "tune-state.json"

DESCRIPTION = f"""\
Measures, on this machine, every Caracal algorithm (with its radix choices) and the
MPI library's own algorithms for each collective x message size x number of ranks,
and writes the selection that is fastest here:

  DIR/caracal-rules.conf   Caracal's rules (the grammar of CARACAL_<COLL>); use them
                           with CARACAL_RULES=DIR/caracal-rules.conf, or copy the file
                           to ~/.config/caracal/rules.conf to make it your default
  DIR/native-openmpi.rules or DIR/native-mpich.json
                           the library's own tuning file, for the cells where one of
                           its non-default algorithms wins (usable without Caracal)
  DIR/tune.md, tune.json   every measured cell: native, best Caracal, ratio, winner
  DIR/{STATE}     progress; an interrupted run continues with --resume

How it measures: one launch per (ranks, collective) runs all candidates of each size
interleaved in a fresh random order per repetition, each launch with its own seed for
that order (caracal_set_rules switches the algorithm between calls); a repetition is a
native barrier and then calls back to back (as IMB times them), the slowest rank's time per call; medians and quartiles
over --reps repetitions. Each native algorithm (Open MPI coll_tuned_<coll>_algorithm,
MPICH MPIR_CVAR_<COLL>_INTRA_ALGORITHM) needs a launch of its own; it is timed next to
a Caracal reference algorithm, which scales it to the main launch. A Caracal algorithm is chosen only where its median beats
the native one by at least {int(MARGIN * 100)}%, so noise never replaces native. The rules are
exact for the measured rank counts (#N) and cover the byte range from each measured
size up to the next.

--budget bounds the whole run (e.g. 20m, 1h): launches that would not fit are left
for a later `caracal tune --resume` with the same --out.

--verify re-measures what an earlier run in DIR wrote, in new launches: per (ranks,
collective) the library alone (PMPI_*, nothing of Caracal in the way) against Caracal
with the written rules, both with the native tuning file in effect, interleaved; it
writes DIR/verify.md and DIR/verify.json (ratio = tuned Caracal / native per cell).

Examples:
  caracal tune -n 2,4 --out tune-here
  caracal tune -n 4 --colls bcast,allreduce --sizes 8,1K,64K,1M --budget 5m
  caracal tune --resume --out tune-here
  caracal tune --verify --out tune-here --reps 21
  caracal testbed up --hosts 2 && caracal tune -n 4 --testbed default --ppn 2 --out tune-2x2
  CARACAL_RULES=tune-here/caracal-rules.conf caracal run -n 4 -- ./app
"""


def add_arguments(p):
    p.add_argument("-n", "--np", default=None, metavar="N[,N...]",
                   help="rank counts to tune for (default 2; with --verify: a subset of the run's, default all)")
    p.add_argument("--mpi", choices=paths.MPIS, default="openmpi", help="MPI library (default openmpi)")
    p.add_argument("--colls", default="all", metavar="LIST",
                   help="collectives, comma-separated (default: every family with Caracal algorithms)")
    p.add_argument("--sizes", default=DEFAULT_SIZES, metavar="LIST",
                   help=f"bytes per call (block per rank for gather/scatter/alltoall types; default {DEFAULT_SIZES})")
    p.add_argument("--reps", type=int, default=11, metavar="R", help="repetitions per candidate and size (default 11)")
    p.add_argument("--budget", default="20m", metavar="T", help="time limit of the whole run: 90s, 20m, 1h (default 20m)")
    p.add_argument("--node-size", type=int, default=0, metavar="K",
                   help="treat every K consecutive ranks as a host (CARACAL_NODE_SIZE), as for a launch on several hosts")
    p.add_argument("--testbed", metavar="NAME",
                   help="launch on the emulated hosts of `caracal testbed up --name NAME` (with --ppn)")
    p.add_argument("--ppn", type=int, default=0, metavar="P", help="with --testbed: ranks per host")
    p.add_argument("--out", default="caracal-tune", metavar="DIR", help="output directory (default caracal-tune)")
    p.add_argument("--resume", action="store_true", help="continue the run recorded in DIR")
    p.add_argument("--force", action="store_true", help="start over even if DIR holds an earlier run")
    p.add_argument("--timeout", type=float, default=600, metavar="S", help="give up on a launch after S seconds")
    p.add_argument("--verify", action="store_true",
                   help="re-measure the selection an earlier run wrote in DIR against the library alone")
    p.add_argument("--no-native-algorithms", dest="native_algs", action="store_false",
                   help="measure only the native library's default choice, not each of its algorithms")


def parse_budget(text):
    t = text.strip().lower()
    mult = {"s": 1, "m": 60, "h": 3600}.get(t[-1:], None)
    num = t[:-1] if mult else t
    try:
        v = float(num) * (mult or 1)
    except ValueError:
        raise UsageError(f"--budget: '{text}' is not a duration (e.g. 90s, 20m, 1h)")
    if v <= 0:
        raise UsageError("--budget must be positive")
    return v


def validate(args):
    args.np = args.np or "2"
    try:
        args.np_list = sorted({int(x) for x in args.np.split(",") if x.strip()})
    except ValueError:
        raise UsageError(f"-n: '{args.np}' is not a list of rank counts")
    if not args.np_list or min(args.np_list) < 2 or max(args.np_list) > 256:
        raise UsageError("-n: rank counts from 2 to 256")
    sizes = [parse_bytes("--sizes", s) for s in args.sizes.split(",") if s.strip()]
    if not sizes or len(sizes) > 64 or max(sizes) > 1 << 26:
        raise UsageError("--sizes: 1 to 64 sizes, each at most 64M")
    if len(set(sizes)) != len(sizes):
        raise UsageError("--sizes lists a size twice")
    args.size_list = sorted(sizes)
    if args.reps < 3:
        raise UsageError("--reps must be at least 3 (medians and quartiles)")
    if args.node_size < 0:
        raise UsageError("--node-size cannot be negative")
    if args.testbed and args.ppn < 1:
        raise UsageError("--testbed needs --ppn P (ranks per emulated host)")
    if args.ppn and not args.testbed:
        raise UsageError("--ppn goes with --testbed")
    if args.testbed and args.node_size:
        raise UsageError("--node-size and --testbed exclude each other (the testbed's hosts are real to MPI)")
    args.budget_s = parse_budget(args.budget)


def candidates(mpi, colls_arg, np, node_size):
    """{family: [rule, ...]} with 'native' first: every comm-scope algorithm of the table,
    k-nomial and n-ary at each radix of RADIX; shm only where the job is one node; not rect
    (tori only: on MPI_COMM_WORLD it would measure the rule it passes to)."""
    doc = info_cmd._run_info(mpi, "--algorithms")
    fams = {f["name"]: f for f in doc["families"] if not f["native_only"]}
    wanted = list(DEFAULT_COLLS) if colls_arg == "all" else [c.strip() for c in colls_arg.split(",") if c.strip()]
    out, skipped = {}, []
    for c in wanted:
        if c not in fams and c not in DEFAULT_COLLS:
            raise UsageError(f"--colls: unknown collective '{c}' (choose from {', '.join(DEFAULT_COLLS)})")
        algs = [a for a in fams.get(c, {}).get("algorithms", []) if "comm" in a["scope"].split("+")]
        cands = ["native"]
        for a in algs:
            if a["name"] == "shm" and node_size and node_size < np:
                continue
            if a["name"] == "rect":
                continue  # runs only on periodic Cartesian communicators; tune measures MPI_COMM_WORLD
            for k in RADIX.get(a["name"], (None,)):
                cands.append(a["name"] if k is None else f"{a['name']}:{k}")
        if len(cands) == 1:
            skipped.append(c)
        else:
            out[c] = cands
    return out, skipped


def _native_module():
    """python/caracal/native_tuning.py: the native libraries' algorithm lists and tuning files."""
    try:
        from .. import native_tuning
        return native_tuning
    except ImportError:
        return None


def _state_path(out):
    return Path(out) / STATE


def _save(path, state):
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, separators=(",", ":")))
    os.replace(tmp, path)


def load_state(args, config):
    path = _state_path(args.out)
    if path.exists() and not args.resume and not args.force:
        raise UsageError(f"{path} holds an earlier run: continue it with --resume, or start over with --force")
    if args.resume:
        if not path.exists():
            raise UsageError(f"--resume: no earlier run in {args.out} ({STATE} not found)")
        try:
            state = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            raise UsageError(f"--resume: {path} is not readable ({e}); start over with --force")
        if state.get("config") != config:
            raise UsageError(f"--resume: {path} was a run with other settings (-n, --mpi, --sizes, --reps, "
                             "--node-size, --colls); repeat them, or start over with --force")
        return state
    return {"config": config, "machine": dict(machine(), load=round(os.getloadavg()[0], 2)), "started": now_iso(),
            "done": {}}


# The candidate order's seed of each launch: a new one per launch (from the clock, then counting
# up). With the same seed in every launch (caracal-tune-bench's default, 1) every launch of a
# collective repeated the same orders, so a candidate that followed a slow one did in all of
# them (defaults_check at 1 MiB: a native call that followed shm in 4 of 5 repetitions timed
# 1.08-1.10x the library).
_seeds = iter(range(int(time.time() * 1000) % (1 << 29), 1 << 30))


def run_launch(args, np, coll, cands, env):
    exe = paths.program(args.mpi, "caracal-tune-bench")
    argv = [str(exe), coll, "--sizes", ",".join(map(str, args.size_list if coll != "barrier" else [0])),
            "--cands", ",".join(cands), "--reps", str(args.reps), "--seed", str(next(_seeds))]
    if getattr(args, "pattern", None):  # caracal advise replays an application's call pattern
        argv += ["--pattern", args.pattern]
    import subprocess
    if getattr(args, "testbed", None):
        # through `caracal testbed run`: hostfile, launcher agent, yielding and MPICH's finalize fix
        # as every testbed run has them; the driver links libcaracal itself (--native: no preload)
        cmd = [sys.executable, "-m", "caracal", "testbed", "run", "--name", args.testbed, "-n", str(np),
               "--ppn", str(args.ppn), "--mpi", args.mpi, "--native", "--timeout", str(args.timeout)]
        for k, v in env.items():
            if k != "LD_PRELOAD":
                cmd += ["--env", f"{k}={v}"]
        cmd += ["--", *argv]
    else:
        cmd = launch.mpiexec_command(args.mpi, np, argv, env=env)
    try:
        proc = subprocess.run(cmd, env=launch.launcher_env(), capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{coll} at {np} ranks did not finish in {args.timeout:.0f} s (see --timeout)")
    cells = []
    for line in proc.stdout.splitlines():
        if line.startswith("{") and "caracal.tune-cell/1" in line:
            cells.append(json.loads(line))
    if proc.returncode != 0 or not cells:
        err = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        raise RuntimeError(f"{coll} at {np} ranks failed (exit {proc.returncode}): {err[-1] if err else 'no output'}")
    return cells


def _native_sweeps(state):
    """{(np, coll, bytes): {alg: median normalised to the main launch}}: a launch that forces
    one native algorithm also times a Caracal reference algorithm, and the native time is
    scaled by how that reference compared with itself in the main launch (launches differ
    in speed on a shared VM; the reference is unaffected by the native setting)."""
    main = {}
    for key, cells in state["done"].items():
        parts = key.split("/")
        if len(parts) == 2:
            for c in cells:
                main[(parts[0], parts[1], c["bytes"], c["cand"])] = c["median_us"]
    out = {}
    for key, cells in state["done"].items():
        parts = key.split("/")
        if len(parts) != 3:
            continue
        np_, coll, alg = parts[0], parts[1], parts[2].split("=", 1)[1]
        by_size = {}
        for c in cells:
            by_size.setdefault(c["bytes"], {})[c["cand"]] = c["median_us"]
        for b, meds in by_size.items():
            ref = next((k for k in meds if k != "native"), None)
            base = main.get((np_, coll, b, ref))
            if ref is None or not base or not meds.get(ref) or "native" not in meds:
                continue
            out.setdefault((int(np_), coll, b), {})[alg] = meds["native"] * base / meds[ref]
    return out


def analyse(state):
    """Per (np, coll, bytes): the native median, the best Caracal candidate, the best forced
    native algorithm (if measured) and the winner."""
    rows = []
    sweeps = _native_sweeps(state)
    for key, cells in state["done"].items():
        if key.count("/") != 1:
            continue
        np_, coll = key.split("/")
        by_size = {}
        for c in cells:
            by_size.setdefault(c["bytes"], []).append(c)
        for b, cs in sorted(by_size.items()):
            nat = next(c for c in cs if c["cand"] == "native")
            car = [c for c in cs if c["cand"] != "native"]
            best = min(car, key=lambda c: c["median_us"])
            wins = best["median_us"] < nat["median_us"] * (1 - MARGIN)
            row = {"ranks": int(np_), "coll": coll, "bytes": b, "native_us": nat["median_us"],
                   "native_p25_us": nat["p25_us"], "native_p75_us": nat["p75_us"],
                   "best": best["cand"], "best_us": best["median_us"], "best_p25_us": best["p25_us"],
                   "best_p75_us": best["p75_us"], "ratio": round(best["median_us"] / nat["median_us"], 3),
                   "winner": best["cand"] if wins else "native", "native_alg": None,
                   "all": {c["cand"]: c["median_us"] for c in cs}}
            sweep = sweeps.get((int(np_), coll, b))
            if sweep:
                alg, t = min(sweep.items(), key=lambda kv: kv[1])
                row["native_algs_us"] = {k: round(v, 4) for k, v in sweep.items()}
                # a forced native algorithm is chosen where it beats both the default native
                # choice and the best Caracal algorithm by the margin
                floor = min(nat["median_us"], best["median_us"] if wins else nat["median_us"])
                if t < floor * (1 - MARGIN):
                    row["winner"] = "native"
                    row["native_alg"] = alg
                    row["native_alg_us"] = round(t, 4)
            rows.append(row)
    rows.sort(key=lambda r: (r["coll"], r["ranks"], r["bytes"]))
    one_rule_per_size(rows)
    return rows


# Families whose selection cannot see the message size: a rank of gatherv, scatterv or
# alltoallv knows only its own counts, so Caracal's selection works with 0 bytes for every
# call of theirs (coll/call.h, caracal_coll_call_bytes) and a rule with a byte range would
# apply to every size or to none. They get one choice per rank count.
SIZELESS = ("gatherv", "scatterv", "alltoallv")
SIZELESS_WORST = 1.05  # a single rule may not be slower than native at any measured size by more


def one_rule_per_size(rows):
    """For SIZELESS families: per rank count, the candidate with the lowest geometric mean of
    its median over native's across the sizes, provided it is never above SIZELESS_WORST and
    the mean beats native by the margin; else native. Every row of the group gets it."""
    groups = {}
    for r in rows:
        if r["coll"] in SIZELESS:
            groups.setdefault((r["coll"], r["ranks"]), []).append(r)
    for rs in groups.values():
        best, best_mean = "native", 1.0
        for cand in rs[0]["all"]:
            if cand == "native" or any(cand not in r["all"] or r["all"]["native"] <= 0 for r in rs):
                continue
            ratios = [max(r["all"][cand], 1e-9) / r["all"]["native"] for r in rs]
            mean = statistics.geometric_mean(ratios)
            if max(ratios) <= SIZELESS_WORST and mean < best_mean:
                best, best_mean = cand, mean
        winner = best if best_mean < 1 - MARGIN else "native"
        for r in rs:
            r["winner"] = winner
            r["sizeless"] = True
            if winner != "native":  # one Caracal rule covers every size: no native cells under it
                r["native_alg"] = None
                r.pop("native_alg_us", None)


def rules_text(rows, state):
    """One `family = rules` line per family: exact rank counts, byte ranges from each
    measured size to the next, neighbouring cells with the same winner merged."""
    lines = [f"# written by caracal tune on {state['machine'].get('hostname', '?')}, {now_iso()}",
             f"# {state['config']['mpi']}, ranks {state['config']['np']}, sizes {state['config']['sizes']}; "
             f"a Caracal algorithm where it beat native by >= {int(MARGIN * 100)}% (median)"]
    fams = {}
    for r in rows:
        fams.setdefault(r["coll"], {}).setdefault(r["ranks"], []).append(r)
    for coll in sorted(fams):
        rules = []
        for np_, rs in sorted(fams[coll].items()):
            rs.sort(key=lambda r: r["bytes"])
            spans = []  # [winner, lo, hi]
            for i, r in enumerate(rs):
                lo = 0 if i == 0 else r["bytes"]
                hi = rs[i + 1]["bytes"] if i + 1 < len(rs) else None
                if spans and spans[-1][0] == r["winner"]:
                    spans[-1][2] = hi
                else:
                    spans.append([r["winner"], lo, hi])
            for w, lo, hi in spans:
                rng = "" if lo == 0 and hi is None else f"@{lo if lo else ''}-{hi if hi is not None else ''}"
                rules.append(f"{w}{rng}#{np_}")
        lines.append(f"{coll} = {' '.join(rules)}")
    return "\n".join(lines) + "\n"


def _fmt_bytes(b):
    for unit, div in (("M", 1 << 20), ("K", 1 << 10)):
        if b >= div and b % div == 0:
            return f"{b // div}{unit}"
    return str(b)


def table(rows, state, skipped):
    out = [f"# caracal tune: {state['config']['mpi']} on {state['machine'].get('hostname', '?')}", "",
           f"Started {state['started']}; load average at the start "
           f"{state['machine'].get('load', '?')}, at the end {os.getloadavg()[0]:.2f} "
           f"({os.cpu_count()} cores). Median per call (us), back to back, slowest rank; "
           f"[p25-p75]; ratio = best Caracal / native (below 1: Caracal faster).", ""]
    if skipped:
        out += [f"Not tuned (no Caracal algorithm in this build): {', '.join(skipped)}.", ""]
    out += ["| coll | ranks | bytes | native us [p25-p75] | best native algorithm (us) | best Caracal | us [p25-p75] "
            "| ratio | chosen |",
            "|---|---:|---:|---:|---|---|---:|---:|---|"]
    for r in rows:
        sweep = r.get("native_algs_us")
        nbest = "-" if not sweep else "{} ({:.2f})".format(*min(sweep.items(), key=lambda kv: kv[1]))
        chosen = r["winner"] if not r.get("native_alg") else f"native {r['native_alg']}"
        out.append(f"| {r['coll']} | {r['ranks']} | {_fmt_bytes(r['bytes'])} | {r['native_us']:.2f} "
                   f"[{r['native_p25_us']:.2f}-{r['native_p75_us']:.2f}] | {nbest} | {r['best']} | {r['best_us']:.2f} "
                   f"[{r['best_p25_us']:.2f}-{r['best_p75_us']:.2f}] | {r['ratio']:.2f} | {chosen} |")
    won = sum(1 for r in rows if r["winner"] != "native")
    out += ["", f"{won} of {len(rows)} cells go to a Caracal algorithm; the rest stay native."]
    if any(r.get("sizeless") for r in rows):
        out += ["", f"{', '.join(SIZELESS)}: a rank knows only its own counts, so Caracal's selection cannot "
                f"tell their message sizes apart; `chosen` is one algorithm per rank count (the lowest geometric "
                f"mean over native across the sizes, never above {SIZELESS_WORST}x native at any size, else "
                f"native), not the best per cell."]
    return "\n".join(out) + "\n"


def _read_rules(path):
    """{family: rules} from a rules file written by tune (`family = rules` lines)."""
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0] if line.lstrip().startswith("#") else line
        if "=" in line:
            fam, rules = line.split("=", 1)
            out[fam.strip()] = rules.strip()
    return out


def native_file_name(mpi: str) -> str:
    """The native tuning file tune writes for library ``mpi``: by its family (Open MPI 4.1 and
    5.0 read coll/tuned rules, MPICH 4.0 and 5.0 csel JSON)."""
    return "native-openmpi.rules" if launch.library(mpi).family == "openmpi" else "native-mpich.json"


CONFIDENCE = 0.95  # of the interval around each verified cell's ratio


def median_ci(values, confidence=CONFIDENCE):
    """The median of `values` and a distribution-free interval for it: order statistics
    k and n+1-k with k the largest rank such that P(Binomial(n, 1/2) < k) <= (1 - confidence)/2
    (the sign-test interval; covers at least `confidence`). None for the bounds when n is too
    small for that confidence."""
    v = sorted(values)
    n = len(v)
    med = statistics.median(v)
    tail, k, acc = (1 - confidence) / 2, 0, 0.0
    for j in range(n + 1):  # acc = P(X <= j - 1) before adding P(X = j)
        acc_next = acc + math.comb(n, j) / 2 ** n
        if acc_next > tail:
            break
        acc, k = acc_next, j + 1
    if k < 1:
        return med, None, None
    return med, v[k - 1], v[n - k]


def paired_ratio(tuned, native):
    """Per repetition tuned / native (the two ran side by side in that repetition): the
    median ratio and its interval (median_ci)."""
    ratios = [t / n for t, n in zip(tuned, native) if n > 0]
    if len(ratios) < 3:
        return None, None, None
    return median_ci(ratios)


def verdict(lo, hi, limit):
    """'above' when the interval lies wholly above `limit`, 'below' wholly below, else 'tie'."""
    if lo is None:
        return "tie"
    return "above" if lo > limit else "below" if hi < limit else "tie"


def verify(args):
    """Re-measure DIR's selection: PMPI alone vs Caracal with the written rules, per cell."""
    out = Path(args.out)
    try:
        doc = json.loads((out / "tune.json").read_text())
        config, tuned_rows = doc["config"], doc["rows"]
        rules = _read_rules(out / "caracal-rules.conf")
    except (OSError, ValueError, KeyError) as e:
        raise UsageError(f"--verify: no finished tune run in {out} ({e}); run caracal tune --out {out} first")
    if args.reps < 3:
        raise UsageError("--reps must be at least 3 (medians and quartiles)")
    args.mpi, args.size_list = config["mpi"], config["sizes"]
    args.testbed, args.ppn = config.get("testbed"), config.get("ppn", 0)
    env = {"LD_PRELOAD": "", "CARACAL_RULES": "none"}
    if config.get("node_size"):
        env["CARACAL_NODE_SIZE"] = str(config["node_size"])
    native = _native_module()
    nfile = out / native_file_name(args.mpi)
    if native and nfile.exists():
        env.update(native.pass_env(args.mpi, str(nfile)))
    chosen = {(r["ranks"], r["coll"], r["bytes"]): (f"native {r['native_alg']}" if r.get("native_alg")
                                                   else r["winner"]) for r in tuned_rows}
    wanted = config["np"]
    if args.np:
        try:
            wanted = [n for n in config["np"] if n in {int(x) for x in args.np.split(",") if x.strip()}]
        except ValueError:
            raise UsageError(f"-n: '{args.np}' is not a list of rank counts")
        if not wanted:
            raise UsageError(f"-n {args.np}: the run in {out} measured {config['np']}")
    jobs = [(np_, coll) for np_ in wanted for coll in sorted(rules)
            if any(k[0] == np_ and k[1] == coll for k in chosen)]
    print(f"# caracal tune --verify: {args.mpi}, {len(jobs)} launches, {args.reps} repetitions, "
          f"native file: {nfile.name if nfile.exists() else 'none'}")
    load0 = os.getloadavg()[0]
    bar = ProgressBar(len(jobs), "verify")
    rows, failed = [], []
    for np_, coll in jobs:
        bar.draw()
        try:
            cells = run_launch(args, np_, coll, ["pmpi", rules[coll]], env)
        except RuntimeError as e:
            failed.append(str(e))
            bar.step()
            continue
        by = {}
        for c in cells:
            by.setdefault(c["bytes"], {})["pmpi" if c["cand"] == "pmpi" else "tuned"] = c
        for b, d in sorted(by.items()):
            if len(d) < 2:
                continue
            n, t = d["pmpi"], d["tuned"]
            ratio, lo, hi = paired_ratio(t.get("reps_us", []), n.get("reps_us", []))
            rows.append({"ranks": np_, "coll": coll, "bytes": b, "chosen": chosen.get((np_, coll, b), "?"),
                         "native_us": n["median_us"], "native_p25_us": n["p25_us"], "native_p75_us": n["p75_us"],
                         "tuned_us": t["median_us"], "tuned_p25_us": t["p25_us"], "tuned_p75_us": t["p75_us"],
                         "ratio": round(ratio, 3) if ratio is not None else None,
                         "ci_lo": round(lo, 3) if lo is not None else None,
                         "ci_hi": round(hi, 3) if hi is not None else None,
                         "vs_1": verdict(lo, hi, 1.0), "vs_1.05": verdict(lo, hi, 1.05)})
        bar.step()
    bar.clear()
    for e in failed:
        print(f"caracal tune --verify: {e}", file=sys.stderr)
    rat = [r for r in rows if r["ratio"] is not None]
    above = [r for r in rat if r["vs_1"] == "above"]
    above105 = [r for r in rat if r["vs_1.05"] == "above"]
    below = sum(1 for r in rat if r["vs_1"] == "below")
    met = len(rat) - len(above)
    share = met / len(rat) if rat else 0.0
    worst = max(rat, key=lambda r: r["ci_lo"] if r["ci_lo"] is not None else 0) if rat else None
    summary = {"cells": len(rat), "confidence": CONFIDENCE, "below_1": below, "tie_1": met - below,
               "above_1": len(above), "above_1.05": len(above105), "met_share": round(share, 4),
               "goal_met": bool(rat) and share >= 0.95 and not above105,
               "median_ratios_at_most_1": sum(1 for r in rat if r["ratio"] <= 1.0),
               "worst_lower_bound": worst["ci_lo"] if worst else None,
               "worst_cell": f"{worst['coll']} n={worst['ranks']} {_fmt_bytes(worst['bytes'])}" if worst else None,
               "failed_launches": failed}
    pct = int(CONFIDENCE * 100)
    md = [f"# caracal tune --verify: {args.mpi} on {machine().get('hostname', '?')}", "",
          f"Re-measured {now_iso()} in new launches; load average at the start {load0:.2f}, at the end "
          f"{os.getloadavg()[0]:.2f} "
          f"({os.cpu_count()} cores); {args.reps} repetitions per cell. `native` = the library alone "
          f"(PMPI_*){' with ' + nfile.name if nfile.exists() else ''}; `tuned` = Caracal with "
          f"{out.name}/caracal-rules.conf; both in the same launch, interleaved (a fresh random order in "
          f"every repetition), back to back, slowest rank, median [p25-p75] us. `chosen` = what the tune "
          f"run picked for the cell.", "",
          f"**The rule.** ratio = the median over repetitions of tuned / native within the repetition (the "
          f"two ran side by side); `{pct}% CI` = a distribution-free {pct}% interval for that median (sign-test "
          f"order statistics). A cell counts as **above 1.00x only when its whole interval lies above 1.00** "
          f"(`above`); `below` = the whole interval below 1.00; `tie` = the interval contains 1.00 (not "
          f"distinguishable from the library with these repetitions). The goal: at most 1.00x in at least "
          f"95% of cells (not `above`) and never above 1.05x (no interval wholly above 1.05). With about "
          f"{len(rat)} cells, a one-sided {100 - (100 - pct) // 2}% bound still puts about "
          f"{len(rat) * (1 - CONFIDENCE) / 2:.0f} cells wholly above 1.00 by chance where Caracal equals the library.", "",
          f"**{met} of {len(rat)} cells met ({100 * share:.1f}%): {below} below, {met - below} tie; "
          f"{len(above)} above 1.00x, {len(above105)} above 1.05x; goal "
          f"{'met' if summary['goal_met'] else 'not met'}.** (Median ratio at most 1.00 in "
          f"{summary['median_ratios_at_most_1']} cells.) Highest lower bound {summary['worst_lower_bound']} "
          f"({summary['worst_cell']})." + (f" {len(failed)} launch(es) failed." if failed else ""),
          "", f"| coll | ranks | bytes | chosen | native us [p25-p75] | tuned us [p25-p75] | ratio | {pct}% CI | vs 1.00 |",
          "|---|---:|---:|---|---:|---:|---:|---|---|"]
    for r in rows:
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.3f}"
        ci = "-" if r["ci_lo"] is None else f"{r['ci_lo']:.3f}-{r['ci_hi']:.3f}"
        mark = r["vs_1"] + (" (>1.05)" if r["vs_1.05"] == "above" else "")
        md.append(f"| {r['coll']} | {r['ranks']} | {_fmt_bytes(r['bytes'])} | {r['chosen']} | {r['native_us']:.2f} "
                  f"[{r['native_p25_us']:.2f}-{r['native_p75_us']:.2f}] | {r['tuned_us']:.2f} "
                  f"[{r['tuned_p25_us']:.2f}-{r['tuned_p75_us']:.2f}] | {ratio} | {ci} | {mark} |")
    (out / "verify.md").write_text("\n".join(md) + "\n")
    (out / "verify.json").write_text(json.dumps({"schema": "caracal.tune-verify/2", "config": config,
                                                 "machine": dict(machine(), load=round(load0, 2)), "reps": args.reps,
                                                 "summary": summary,
                                                 "rows": rows}, separators=(",", ":")) + "\n")
    print(f"{met} of {len(rat)} cells not above 1.00x native ({pct}% intervals: {below} below, {met - below} tie, "
          f"{len(above)} above, {len(above105)} above 1.05x); wrote {out}/verify.md, {out}/verify.json")
    return 1 if failed else 0


def run(args):
    if args.verify:
        return verify(args)
    validate(args)
    cands = {}
    skipped_all = set()
    for np_ in args.np_list:
        c, skipped = candidates(args.mpi, args.colls, np_, args.node_size or args.ppn)
        cands[np_] = c
        skipped_all.update(skipped)
    if not any(cands.values()):
        raise UsageError("nothing to tune: none of --colls has a Caracal algorithm in this build")
    config = {"mpi": args.mpi, "np": args.np_list, "sizes": args.size_list, "reps": args.reps,
              "node_size": args.node_size, "colls": args.colls}
    if args.testbed:
        config.update(testbed=args.testbed, ppn=args.ppn)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    state = load_state(args, config)
    native = _native_module()
    nalgs = {}
    if args.native_algs and native:
        try:
            nalgs = native.native_algorithms(args.mpi)
        except Exception as e:  # the library's listing is best effort: tune Caracal anyway
            print(f"caracal tune: cannot list {args.mpi}'s algorithms ({e}); measuring its default only",
                  file=sys.stderr)
    jobs = []  # (key, np, coll, candidates, extra env)
    for np_ in args.np_list:
        for coll, cl in cands[np_].items():
            jobs.append((f"{np_}/{coll}", np_, coll, cl, {}))
            for alg_id, alg_name in nalgs.get(coll, []):
                if native.applicable(args.mpi, coll, alg_id, np_):
                    continue  # cannot run here at all (e.g. Open MPI's two_proc beyond 2 ranks errors out)
                jobs.append((f"{np_}/{coll}/native={alg_name}", np_, coll, ["native", cl[1]],
                             native.force_env(args.mpi, coll, alg_id)))
    todo = [j for j in jobs if j[0] not in state["done"]]
    env = {"LD_PRELOAD": ""}  # the driver links libcaracal itself
    if args.node_size:
        env["CARACAL_NODE_SIZE"] = str(args.node_size)
    print(f"# caracal tune: {args.mpi}, ranks {args.np_list}, {len(jobs)} launches "
          f"({len(jobs) - len(todo)} done before), budget {args.budget}, output {out}/")
    bar = ProgressBar(len(todo), "tune")
    t0, walls, left = time.monotonic(), [], []
    for i, (key, np_, coll, cl, extra) in enumerate(todo):
        est = statistics.median(walls) if walls else 0
        if time.monotonic() - t0 + est > args.budget_s:
            left = todo[i:]
            break
        bar.draw()
        ts = time.monotonic()
        try:
            cells = run_launch(args, np_, coll, cl, {**env, **extra})
        except RuntimeError as e:
            bar.clear()
            print(f"caracal tune: {e}", file=sys.stderr)
            _save(_state_path(out), state)
            return 1
        walls.append(time.monotonic() - ts)
        for c in cells:
            c.pop("reps_us", None)  # the tune ranks by medians; the state stays small
        state["done"][key] = cells
        _save(_state_path(out), state)
        bar.clear()
        if key.count("/") == 1:
            rows = analyse({"done": {key: cells}})
            best = ", ".join(f"{_fmt_bytes(r['bytes'])}:{r['winner']}({r['ratio']:.2f})" for r in rows)
        else:
            best = "native " + key.split("=", 1)[1] + ": " + ", ".join(
                f"{_fmt_bytes(c['bytes'])}:{c['median_us']:.2f}us" for c in cells if c["cand"] == "native")
        print(f"{coll:>20} n={np_}  {walls[-1]:5.1f}s  {best}")
        bar.step()
    bar.clear()
    rows = analyse(state)
    (out / "caracal-rules.conf").write_text(rules_text(rows, state))
    (out / "tune.md").write_text(table(rows, state, sorted(skipped_all)))
    (out / "tune.json").write_text(json.dumps({"schema": "caracal.tune/1", "config": config,
                                               "machine": state["machine"], "started": state["started"],
                                               "rows": rows}, separators=(",", ":")) + "\n")
    if left:
        print(f"caracal tune: the budget ({args.budget}) is used up with {len(left)} launch(es) left; "
              f"the files cover what was measured; continue with: caracal tune --resume --out {out} "
              f"(and the same options)")
    # every measured point (default ones too) so that each cell ends where the next measured
    # size is not won by the same native algorithm, as in caracal-rules.conf
    native_cells = native.cells_from_points(
        [{"coll": r["coll"], "comm_size": r["ranks"], "bytes": r["bytes"], "alg": r.get("native_alg")}
         for r in rows]) if native else []
    if native_cells and native:
        name = native_file_name(args.mpi)
        if launch.library(args.mpi).family == "openmpi":
            notes = native.write_openmpi_rules(str(out / name), native_cells, args.mpi)
        else:  # the default trees the file extends are this library's own (MPICH 4.0 or 5.0)
            notes = native.write_mpich_json(str(out / name), native_cells, native.find_libmpich(args.mpi), args.mpi)
        for note in notes:  # a cell the file cannot hold keeps the library's default there
            print(f"caracal tune: {name}: {note}")
        print(f"wrote {out}/{name}: {len(native_cells) - len(notes)} cell(s) where one of {args.mpi}'s own "
              f"algorithms wins; usable without Caracal: " + " ".join(f"{k}={v}" for k, v in
                                                          native.pass_env(args.mpi, str(out / name)).items()))
    won = sum(1 for r in rows if r["winner"] != "native")
    print(f"wrote {out}/caracal-rules.conf ({won} of {len(rows)} cells to Caracal), {out}/tune.md, {out}/tune.json")
    print(f"use: CARACAL_RULES={out}/caracal-rules.conf caracal run ...  "
          f"(or copy it to ~/.config/caracal/rules.conf)")
    return 0
