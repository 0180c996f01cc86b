#!/usr/bin/env python3
"""When to build a communicator's hierarchy: eagerly at creation, or at its first
blocking collective (what Caracal does, docs/collectives.md "When the levels are built").

build/bin/comm_dup (bench/comm_dup.c) times, at 2 ranks, MPI_Comm_dup + MPI_Comm_free,
and with libcaracal the same with the hierarchy built between them (an eager build) and
the build alone, and MPI_Init. Three configurations run interleaved in random order,
R rounds each, for Open MPI and MPICH:
  native         the program alone
  caracal        libcaracal preloaded (default settings: MPI_COMM_WORLD's hierarchy is
                 built in MPI_Init)
  caracal-coll0  libcaracal preloaded, CARACAL_COLL=0 (nothing built in MPI_Init, so the
                 program's first build also pays the once-per-process hwloc discovery)
Each run gives medians over its iterations; the results are medians over rounds, and
ratios of medians:
  dup_free caracal / native    what Caracal adds to a creation today (interposition only)
  eager / dup_free native      what a creation would cost with an eager build, relative
                               to the native library's creation
  first build, caracal-coll0    what MPI_Init now does once when collectives are on (the
                               first build of a process, hwloc discovery included); MPI_Init's
                               own duration varies with the launch by more than that, so it is
                               recorded (init_us) but not differenced

usage: bench/comm_dup.py [--rounds R] [--iterations N] [--mpi openmpi mpich] [--quick]
Writes bench/results/comm-dup.md and .json.
"""
import argparse
import json
import subprocess
import sys

from benchlib import ROOT, interleave, launcher_env, machine_description, median, mpiexec, write_results

CONFIGS = ("native", "caracal", "caracal-coll0")
BUILD = {"openmpi": "build", "mpich": "build-mpich"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--mpi", nargs="+", default=["openmpi", "mpich"], choices=sorted(BUILD))
    ap.add_argument("--quick", action="store_true", help="3 rounds of 20 iterations (smoke test of the driver)")
    args = ap.parse_args()
    if args.rounds < 1 or args.iterations < 1:
        print("comm_dup.py: --rounds and --iterations must be positive", file=sys.stderr)
        sys.exit(2)
    rounds, iters = (3, 20) if args.quick else (args.rounds, args.iterations)
    doc = {"schema": "caracal.bench-comm-dup/1", "nranks": 2, "rounds": rounds, "iterations": iters,
           "machine": machine_description(), "mpi": {}}

    for mpi in args.mpi:
        build = ROOT / BUILD[mpi]
        prog, lib = build / "bin" / "comm_dup", build / "lib" / "libcaracal.so"
        if not prog.exists() or not lib.exists():
            print(f"comm_dup.py: {prog} or {lib} missing; run make build-{mpi}", file=sys.stderr)
            sys.exit(2)

        def run(config):
            env = {} if config == "native" else {"LD_PRELOAD": str(lib)}
            if config == "caracal-coll0":
                env["CARACAL_COLL"] = "0"
            out = subprocess.run(mpiexec(mpi, 2, [str(prog), str(iters)], env), env=launcher_env(),
                                 capture_output=True, text=True, timeout=300, check=True).stdout
            return json.loads(out.strip().splitlines()[-1])
        print(f"{mpi}: {rounds} rounds x {len(CONFIGS)} configs", file=sys.stderr)
        res = interleave(CONFIGS, rounds, run)
        dup_n = median([r["dup_free_us"] for r in res["native"]])
        dup_c = median([r["dup_free_us"] for r in res["caracal"]])
        eager = median([r["eager_dup_free_us"] for r in res["caracal"]])
        build_us = median([r["build_us"] for r in res["caracal"]])
        first_cold = median([r["first_build_us"] for r in res["caracal-coll0"]])
        init = {c: median([r["init_us"] for r in res[c]]) for c in CONFIGS}
        doc["mpi"][mpi] = {
            "runs": res,
            "median_us": {"dup_free_native": dup_n, "dup_free_caracal": dup_c, "eager_dup_free_caracal": eager,
                          "build_caracal": build_us, "first_build_without_init_build": first_cold,
                          "init": init},
            "ratio": {"dup_free_caracal_over_native": dup_c / dup_n, "eager_over_dup_free_native": eager / dup_n,
                      "eager_over_dup_free_caracal": eager / dup_c,
},
            "range_over_rounds_us": {
                "build_caracal": [min(r["build_us"] for r in res["caracal"]),
                                  max(r["build_us"] for r in res["caracal"])],
                "first_build_without_init_build": [min(r["first_build_us"] for r in res["caracal-coll0"]),
                                                   max(r["first_build_us"] for r in res["caracal-coll0"])]},
        }

    m = doc["machine"]
    md = [f"# Hierarchy build: eager at creation or lazy at first blocking collective (2 ranks, {rounds} "
          f"interleaved rounds of {iters} iterations)\n",
          f"Machine: {m['cpu']}, {m['cores']} cores, {m['date']}; {m['note']}.\n",
          "Driver `bench/comm_dup.py`, program `bench/comm_dup.c`. Per run: median over iterations of the "
          "slowest rank; below: median over rounds (native and caracal runs interleaved in random order).\n",
          "| MPI | dup+free caracal / native | eager dup+build+free / native dup+free | "
          "build / native dup+free | build range over rounds (us) |", "|---|---|---|---|---|"]
    for mpi, v in doc["mpi"].items():
        r, u = v["ratio"], v["median_us"]
        lo, hi = v["range_over_rounds_us"]["build_caracal"]
        md.append(f"| {mpi} | {r['dup_free_caracal_over_native']:.2f} | x{r['eager_over_dup_free_native']:.0f} | "
                  f"x{u['build_caracal'] / u['dup_free_native']:.0f} | {lo:.0f}-{hi:.0f} |")
    md += ["", "The first build in a process (CARACAL_COLL=0, so MPI_Init built nothing; with collectives on, "
           "MPI_Init does this once), relative to the steady build above:\n",
           "| MPI | first build / steady build | first build range over rounds (us) |", "|---|---|---|"]
    for mpi, v in doc["mpi"].items():
        u = v["median_us"]
        lo, hi = v["range_over_rounds_us"]["first_build_without_init_build"]
        md.append(f"| {mpi} | x{u['first_build_without_init_build'] / u['build_caracal']:.0f} | {lo:.0f}-{hi:.0f} |")
    md += ["", "Medians in microseconds (for the ratios above; absolute times on a shared machine are "
           "not results):\n", "| MPI | dup+free native | dup+free caracal | eager dup+build+free | build |",
           "|---|---|---|---|---|"]
    for mpi, v in doc["mpi"].items():
        u = v["median_us"]
        md.append(f"| {mpi} | {u['dup_free_native']:.1f} | {u['dup_free_caracal']:.1f} | "
                  f"{u['eager_dup_free_caracal']:.1f} | {u['build_caracal']:.1f} |")
    md += ["", "## Reading\n", reading(doc), ""]
    write_results("comm-dup", doc, "\n".join(md))


def reading(doc):
    """The conclusion, with this run's numbers."""
    mpis = doc["mpi"]
    eager = " and ".join(f"x{v['ratio']['eager_over_dup_free_native']:.0f} ({m})" for m, v in mpis.items())
    build = " and ".join(f"{v['median_us']['build_caracal']:.0f} us ({m})" for m, v in mpis.items())
    cold = " and ".join(f"{v['median_us']['first_build_without_init_build'] / 1000:.1f} ms ({m})"
                        for m, v in mpis.items())
    return (f"Building the hierarchy at creation would make every MPI_Comm_dup/split + free cost {eager} "
            f"what the native library's does at 2 ranks, for every communicator, including those that never run "
            f"a collective (libraries duplicate communicators to keep their traffic apart). Built lazily at the "
            f"first blocking collective, the same build ({build} here, median) is paid once, only by "
            f"communicators that run a blocking collective. "
            f"Hence: lazy at the first blocking collective, and MPI_COMM_WORLD in MPI_Init, where every rank is. "
            f"The first build in a process also discovers the node with hwloc ({cold} without the MPI_Init build); "
            f"with collectives on, MPI_Init now pays it once, so no collective does. Larger "
            f"communicators cost more per build (more splits, larger allgathers); not measured here (timings "
            f"above 2 ranks are noise on this machine).")


if __name__ == "__main__":
    main()
