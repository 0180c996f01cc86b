#!/usr/bin/env python3
"""Randomized differential stress (tests/stress/stress.c) under random Caracal settings.

Each seed fixes everything: the sequence of calls (families, sizes, datatypes, operators,
roots, communicators created and freed, blocking or nonblocking, completion order) and the
environment drawn here from it: CARACAL_NODE_SIZE, CARACAL_COLL=force, and for every family
one of its algorithms from the table (`caracal-info --algorithms`), with a random radix
where it takes one. A failing seed replays exactly with the same --seed, -n and --mpi.

Usage: tests/stress/run.py [--mpi openmpi|mpich] [-n 4] [--seed 1] [--seeds 1]
                           [--calls 500] [--json OUT]
Exit 0 when every seed ran without a mismatch or a hang (timeout), 1 otherwise.
"""
import argparse
import json
import os
import random
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
        alg = rng.choice(comm)
        if alg in ("knomial", "nary", "knomial_seg") and rng.random() < 0.5:
            alg += f":{rng.choice([2, 3, 4])}"
        env[fam["setting"]] = alg
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mpi", choices=sorted(BUILD), default="openmpi")
    ap.add_argument("-n", type=int, default=4, help="ranks (default 4)")
    ap.add_argument("--seed", type=int, default=1, help="first seed (default 1)")
    ap.add_argument("--seeds", type=int, default=1, help="how many consecutive seeds (default 1)")
    ap.add_argument("--calls", type=int, default=500, help="collectives per seed (default 500)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per seed before it counts as a hang")
    ap.add_argument("--json", help="write a summary (seeds, environments, results) here")
    a = ap.parse_args()
    if a.n < 1 or a.seeds < 1 or a.calls < 1:
        print("stress: -n, --seeds and --calls must be at least 1", file=sys.stderr)
        return 2
    exe = BUILD[a.mpi] / "bin" / "caracal-stress"
    info = BUILD[a.mpi] / "bin" / "caracal-info"
    if not exe.exists() or not info.exists():
        print(f"stress: {exe} not built; run: make build MPI={a.mpi}", file=sys.stderr)
        return 2
    algorithms = json.loads(subprocess.run([str(info), "--algorithms"], capture_output=True, text=True,
                                           check=True).stdout)
    base = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    results, bad = [], 0
    t0 = time.time()
    for seed in range(a.seed, a.seed + a.seeds):
        env = draw_env(seed, algorithms, a.mpi)
        cmd = launcher(a.mpi, a.n, env, [str(exe), str(seed), str(a.calls)])
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout, env=base)
            ok, out = p.returncode == 0, (p.stdout + p.stderr).strip()
        except subprocess.TimeoutExpired:
            ok, out = False, f"hang: no end after {a.timeout} s"
        line = next((l for l in out.splitlines() if l.startswith("stress seed")), out.splitlines()[-1] if out else "")
        results.append({"seed": seed, "ok": ok, "env": {k: v for k, v in env.items() if k != "LD_PRELOAD"},
                        "result": line})
        if not ok:
            bad += 1
            settings = " ".join(f"{k}={v}" for k, v in env.items() if k != "LD_PRELOAD")
            print(f"stress: seed {seed} FAILED ({settings})\n{out[-2000:]}\n"
                  f"replay: tests/stress/run.py --mpi {a.mpi} -n {a.n} --seed {seed} --calls {a.calls}",
                  file=sys.stderr)
        sys.stderr.write(f"\rstress: {seed - a.seed + 1}/{a.seeds} seeds, {bad} failed, {time.time() - t0:.0f} s ")
    sys.stderr.write("\n")
    summary = {"schema": "caracal.stress/1", "mpi": a.mpi, "ranks": a.n, "calls_per_seed": a.calls,
               "seeds": a.seeds, "failed": bad, "collectives": a.calls * a.seeds, "seconds": round(time.time() - t0, 1),
               "runs": results}
    if a.json:
        Path(a.json).write_text(json.dumps(summary, indent=1) + "\n")
    print(f"stress: {a.mpi}, {a.n} ranks, {a.seeds} seeds x {a.calls} calls: {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
