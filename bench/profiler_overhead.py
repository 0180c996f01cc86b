#!/usr/bin/env python3
"""Profiler overhead, measured side by side in one run.

For each workload, three configurations run interleaved in random order:
  native    the program alone
  preload   libcaracal preloaded, profiler off (the cost of interposition)
  profile   libcaracal preloaded with CARACAL_PROFILE set (what `caracal run` does)
Whole-run overhead = median wall time of the mpiexec command (launch to exit, so the
profile gather and write at finalize are included) relative to native.
Per-call cost = build/bin/call_overhead's ns per call (min over batches within a
run, median over runs) minus native.

usage: bench/profiler_overhead.py [--mpi openmpi|mpich] [--repeats R] [--quick]
Writes bench/results/profiler-overhead-<mpi>.md and .json.
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import ROOT, interleave, launcher_env, machine_description, median, mpiexec, write_results

CONFIGS = ("native", "preload", "profile")

# Whole-run workloads: (name, program, args). Sized to run a few seconds at 2 ranks.
WORKLOADS = [
    ("asp", "asp", ["1536"]),
    ("halo", "halo", ["-n", "160", "160", "160", "400"]),
    ("records", "records", ["-n", "20000"]),
]


def env_for(config, lib, tmp):
    if config == "native":
        return {}
    env = {"LD_PRELOAD": str(lib)}
    if config == "profile":
        env["CARACAL_PROFILE"] = str(Path(tmp) / f"p-{time.monotonic_ns()}.json")
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mpi", default="openmpi", choices=("openmpi", "mpich"))
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="small sizes and 3 repeats (smoke test of the driver)")
    args = ap.parse_args()
    build = ROOT / ("build" if args.mpi == "openmpi" else "build-mpich")
    lib = build / "lib" / "libcaracal.so"
    repeats = 3 if args.quick else args.repeats
    doc = {"schema": "caracal.bench-overhead/1", "mpi": args.mpi, "nranks": 2, "repeats": repeats,
           "machine": machine_description(), "whole_run": {}, "per_call": {}}

    with tempfile.TemporaryDirectory() as tmp:
        # Per-call cost.
        prog = str(build / "bin" / "call_overhead")
        iters = "20000" if args.quick else "400000"

        def run_calls(config):
            out = subprocess.run(mpiexec(args.mpi, 2, [prog, iters], env_for(config, lib, tmp)),
                                 env=launcher_env(), capture_output=True, text=True, timeout=600, check=True).stdout
            return json.loads(out.strip().splitlines()[-1])
        print("per-call cost (call_overhead)", file=sys.stderr)
        res = interleave(CONFIGS, repeats, run_calls)
        for key in res["native"][0]:
            med = {c: median([r[key] for r in res[c]]) for c in CONFIGS}
            doc["per_call"][key] = {"median_ns": med,
                                    "added_ns_preload": med["preload"] - med["native"],
                                    "added_ns_profile": med["profile"] - med["native"]}

        # Whole-run overhead.
        for name, exe, wargs in WORKLOADS:
            path = build / "bin" / exe
            if not path.exists():
                print(f"skipping {name}: {path} not built", file=sys.stderr)
                continue
            if args.quick:
                wargs = []

            def run_whole(config):
                cmd = mpiexec(args.mpi, 2, [str(path)] + wargs, env_for(config, lib, tmp))
                t0 = time.perf_counter()
                subprocess.run(cmd, env=launcher_env(), capture_output=True, text=True, timeout=900, check=True)
                return time.perf_counter() - t0
            print(f"whole run: {name} {' '.join(wargs)}", file=sys.stderr)
            res = interleave(CONFIGS, repeats, run_whole)
            med = {c: median(res[c]) for c in CONFIGS}
            doc["whole_run"][name] = {"args": wargs, "seconds": res, "median_s": med,
                                      "ratio_preload": med["preload"] / med["native"],
                                      "ratio_profile": med["profile"] / med["native"]}

    md = [f"# Profiler overhead ({args.mpi}, 2 ranks, {repeats} interleaved repeats)\n",
          f"Machine: {doc['machine']['cpu']}, {doc['machine']['cores']} cores, {doc['machine']['date']}; "
          f"{doc['machine']['note']}.\n",
          "## Whole run (median wall time of mpiexec, ratio to native; target: profile <= 1.01)\n",
          "`preload` also runs Caracal's own collectives, so `profile / preload` isolates the profiler.\n",
          "| workload | preload / native | profile / native | profile / preload |", "|---|---|---|---|"]
    for name, w in doc["whole_run"].items():
        md.append(f"| {name} {' '.join(w['args'])} | {w['ratio_preload']:.3f} | {w['ratio_profile']:.3f} "
                  f"| {w['median_s']['profile'] / w['median_s']['preload']:.3f} |")
    md += ["", "## Added cost per intercepted call (ns, median over runs of the best batch)\n",
           "| call | native ns | + preload | + profile |", "|---|---|---|---|"]
    for key, v in doc["per_call"].items():
        md.append(f"| {key} | {v['median_ns']['native']:.1f} | {v['added_ns_preload']:+.1f} | {v['added_ns_profile']:+.1f} |")
    md.append("")
    write_results(f"profiler-overhead-{args.mpi}", doc, "\n".join(md))


if __name__ == "__main__":
    main()
