#!/usr/bin/env python3
"""Randomized differential stress (tests/stress/stress.c) under random Caracal settings.

Each seed fixes everything: the sequence of calls (families, sizes, datatypes, operators,
roots, communicators created and freed, blocking or nonblocking, completion order) and the
environment drawn here from it: CARACAL_NODE_SIZE, CARACAL_COLL=force, and for every family
one of its algorithms from the table (`caracal-info --algorithms`), with a random radix
where it takes one, and for the families with level algorithms now and then a level rule
in front (`node/shm knomial:3`); with -n as a list (2,3,4) the rank count too. A failing
seed replays exactly with the same --seed, --calls and --mpi and the -n it printed.

CARACAL_LOG=algo is on: world rank 0's log lines give how many calls each algorithm ran
(its view: the communicators it is part of).

Usage: tests/stress/run.py [--mpi openmpi|mpich] [-n 4|2,3] [--seed 1] [--seeds 1]
                           [--calls 500] [--timeout 300] [--json OUT]
Exit 0 when every seed ran without a mismatch or a hang (timeout), 1 otherwise.
"""
import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = {"openmpi": ROOT / "build", "mpich": ROOT / "build-mpich"}


def launcher(mpi, n, env, argv):
    if mpi == "openmpi":
        cmd = ["mpiexec.openmpi", "--oversubscribe", "--bind-to", "none", "-n", str(n)]
        for k, v in env.items():
            cmd += ["-x", f"{k}={v}"]
    else:
        cmd = ["mpiexec.mpich", "-n", str(n)]
        for k, v in env.items():
            cmd += ["-genv", k, v]
    return cmd + argv


def draw_env(seed, algorithms, mpi):
    rng = random.Random(seed * 7919 + (mpi == "mpich"))
    env = {"LD_PRELOAD": str(BUILD[mpi] / "lib" / "libcaracal.so"), "CARACAL_COLL": "force",
           "CARACAL_NODE_SIZE": str(rng.choice([0, 1, 2, 3]))}
    for fam in algorithms["families"]:
        comm = [a["name"] for a in fam["algorithms"] if "comm" in a["scope"]]
        if fam["native_only"] or not comm or rng.random() < 0.25:
            continue  # the family's default algorithm (force)
        alg = radix(rng, rng.choice(comm))
        level = [a["name"] for a in fam["algorithms"] if "level" in a["scope"]]
        if level and rng.random() < 0.3:  # the node levels' own algorithm, the rest as drawn
            alg = f"node/{radix(rng, rng.choice(level))} {alg}"
        env[fam["setting"]] = alg
    return env


def radix(rng, alg):
    if alg in ("knomial", "nary", "knomial_seg") and rng.random() < 0.5:
        alg += f":{rng.choice([2, 3, 4])}"
    return alg


def run_seed(cmd, timeout, env):
    """(returncode or None on a hang, output); a hang kills the launcher's whole process group"""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out + err
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return None, out + err


ALGO_LINE = re.compile(r"^caracal\[0\]: (\w+) (\S+)")
RESULT_LINE = re.compile(r"stress seed \d+: (\d+) calls, (\d+) collectives at \d+ ranks, (\d+) mismatches \((.*)\)")


def tally(out):
    """per family and per mode counts of the result line, per family/algorithm counts of rank 0's log"""
    fams, modes, algs = {}, {}, {}
    m = next((RESULT_LINE.search(line) for line in out.splitlines() if RESULT_LINE.search(line)), None)
    if m:
        per_fam, _, per_mode = m.group(4).partition("; ")
        for part in per_fam.split(", "):
            name, n = part.rsplit(" ", 1)
            fams[name] = int(n)
        for part in per_mode.split(", "):
            name, n = part.rsplit(" ", 1)
            modes[name] = int(n)
    for line in out.splitlines():
        a = ALGO_LINE.match(line)
        if a:
            key = f"{a.group(1)} {a.group(2)}"
            algs[key] = algs.get(key, 0) + 1
    return (int(m.group(2)) if m else 0), fams, modes, algs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mpi", choices=sorted(BUILD), default="openmpi")
    ap.add_argument("-n", default="4", help="ranks, or a list drawn from per seed: 2,3 (default 4)")
    ap.add_argument("--seed", type=int, default=1, help="first seed (default 1)")
    ap.add_argument("--seeds", type=int, default=1, help="how many consecutive seeds (default 1)")
    ap.add_argument("--calls", type=int, default=500, help="collectives per seed (default 500)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per seed before it counts as a hang")
    ap.add_argument("--json", help="write a summary (seeds, environments, results) here")
    ap.add_argument("--build", help="the build directory to take bin/ and lib/ from (default: build/ for "
                                    "Open MPI, build-mpich/ for MPICH; a copy keeps a long run off later rebuilds)")
    a = ap.parse_args()
    try:
        ranks = [int(x) for x in a.n.split(",")]
    except ValueError:
        ranks = [0]
    if min(ranks) < 1 or a.seeds < 1 or a.calls < 1:
        print("stress: -n, --seeds and --calls must be at least 1", file=sys.stderr)
        return 2
    if a.build:
        BUILD[a.mpi] = Path(a.build).resolve()
    exe = BUILD[a.mpi] / "bin" / "caracal-stress"
    info = BUILD[a.mpi] / "bin" / "caracal-info"
    if not exe.exists() or not info.exists():
        print(f"stress: {exe} not built; run: make build MPI={a.mpi}", file=sys.stderr)
        return 2
    algorithms = json.loads(subprocess.run([str(info), "--algorithms"], capture_output=True, text=True,
                                           check=True).stdout)
    base = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    results, bad, hangs, total = [], 0, 0, 0
    fam_total, mode_total, alg_total = {}, {}, {}
    t0 = time.time()
    for seed in range(a.seed, a.seed + a.seeds):
        env = draw_env(seed, algorithms, a.mpi)
        env["CARACAL_LOG"] = "algo"
        n = ranks[0] if len(ranks) == 1 else random.Random(seed).choice(ranks)
        if a.mpi == "openmpi" and n > (os.cpu_count() or 1):
            env["OMPI_MCA_mpi_yield_when_idle"] = "1"  # oversubscribed: waiting ranks yield (caracal run does too)
        cmd = launcher(a.mpi, n, env, [str(exe), str(seed), str(a.calls)])
        load = os.getloadavg()[0]
        ts = time.time()
        rc, out = run_seed(cmd, a.timeout, base)
        ok = rc == 0
        collectives, fams, modes, algs = tally(out)
        total += collectives
        for tot, part in ((fam_total, fams), (mode_total, modes), (alg_total, algs)):
            for key, v in part.items():
                tot[key] = tot.get(key, 0) + v
        lines = [l for l in out.splitlines() if not l.startswith("caracal[")]
        line = next((l for l in lines if l.startswith("stress seed")), lines[-1] if lines else "")
        if rc is None:
            hangs += 1
            line = f"hang: no end after {a.timeout} s"
        results.append({"seed": seed, "ranks": n, "ok": ok, "seconds": round(time.time() - ts, 1),
                        "load": round(load, 1), "collectives": collectives,
                        "env": {k: v for k, v in env.items() if k not in ("LD_PRELOAD", "CARACAL_LOG")},
                        "result": line})
        if not ok:
            bad += 1
            settings = " ".join(f"{k}={v}" for k, v in env.items() if k != "LD_PRELOAD")
            print(f"stress: seed {seed} FAILED ({settings})\n" + "\n".join(lines)[-2000:] + "\n"
                  f"replay: tests/stress/run.py --mpi {a.mpi} -n {n} --seed {seed} --calls {a.calls}",
                  file=sys.stderr)
        sys.stderr.write(f"\rstress: {seed - a.seed + 1}/{a.seeds} seeds, {total} collectives, {bad} failed, "
                         f"{time.time() - t0:.0f} s ")
        sys.stderr.flush()
        if a.json:  # written after every seed: a long run killed midway keeps what it did
            write_summary(a, ranks, results, bad, hangs, total, fam_total, mode_total, alg_total, t0)
    sys.stderr.write("\n")
    print(f"stress: {a.mpi}, {a.n} ranks, {a.seeds} seeds x {a.calls} calls ({total} collectives): {bad} failed")
    return 1 if bad else 0


def write_summary(a, ranks, results, bad, hangs, total, fam_total, mode_total, alg_total, t0):
    summary = {"schema": "caracal.stress/2", "mpi": a.mpi, "ranks": ranks, "calls_per_seed": a.calls,
               "first_seed": a.seed, "seeds": len(results), "failed": bad, "hangs": hangs,
               "mismatched_seeds": bad - hangs, "collectives": total, "seconds": round(time.time() - t0, 1),
               "per_family": dict(sorted(fam_total.items())), "per_mode": mode_total,
               "per_algorithm_rank0": dict(sorted(alg_total.items())), "runs": results}
    Path(a.json).write_text(json.dumps(summary, indent=None, separators=(",", ":")).replace(',{"seed"', ',\n{"seed"')
                            + "\n")


if __name__ == "__main__":
    sys.exit(main())
