#!/usr/bin/env python3
"""Caracal's profiler against LLNL's mpiP on the same programs: cost per call and per run.

Three configurations run interleaved in random order (benchlib.interleave):
  native    the program alone
  caracal   libcaracal preloaded with CARACAL_PROFILE set (what `caracal run --profile` does)
  mpip      libmpiP.so preloaded (mpiP's defaults: stack walk of depth 1 with libunwind,
            source lookup with libbfd at the end)
Per call: build/bin/call_overhead's ns per call (best batch of a run, median over runs),
minus native. Per run: wall time of the whole mpiexec (launch to exit, so each profiler's
gather and report writing are included).

mpiP is not part of Caracal: give its source (a checkout of LLNL/mpiP) and this script
builds it with bench/mpip_build.sh into a scratch directory, or give a built libmpiP.so.

usage: bench/mpip_compare.py (--mpip-src DIR | --mpip-lib SO) [--mpi openmpi|mpich]
                             [--repeats R] [--quick] [--only PART] [--keep DIR]
Writes bench/results/mpip-compare-<mpi>.md and .json after each part (per_call, then each
workload); --only PART runs one part and keeps the others' results from an earlier run, so
a long comparison can be split into runs of a few minutes. --keep DIR keeps one profile of
each tool for examples/halo (the content comparison of docs/profile-vs-mpip.md).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import ROOT, interleave, launcher_env, machine_description, median, mpiexec, write_results

CONFIGS = ("native", "caracal", "mpip")
# The examples' default sizes: a few seconds each, so a part fits the bench lock's ~10 minutes.
WORKLOADS = [
    ("halo", "halo", []),
    ("records", "records", []),
]


def build_mpip(src, mpi):
    out = Path(tempfile.gettempdir()) / f"caracal-mpip-{mpi}"
    env = dict(os.environ, LOGNAME=os.environ.get("LOGNAME") or "bench")
    r = subprocess.run([str(ROOT / "bench" / "mpip_build.sh"), str(src), mpi, str(out)], env=env,
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"mpip_compare: building mpiP failed:\n{r.stderr.strip()}")
    return Path(r.stdout.strip().splitlines()[-1])


def env_for(config, caracal_lib, mpip_lib, outdir):
    if config == "native":
        return {}
    if config == "caracal":
        return {"LD_PRELOAD": str(caracal_lib),
                "CARACAL_PROFILE": str(Path(outdir) / f"p-{time.monotonic_ns()}.json")}
    return {"LD_PRELOAD": str(mpip_lib), "MPIP": f"-f {outdir}"}


def spread(xs):
    return {"median": median(xs), "min": min(xs), "max": max(xs),
            "stdev": statistics.stdev(xs) if len(xs) > 1 else 0.0}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--mpip-src", type=Path, help="a checkout of LLNL/mpiP (built here)")
    src.add_argument("--mpip-lib", type=Path, help="an already built libmpiP.so for this MPI library")
    ap.add_argument("--mpi", default="openmpi", choices=("openmpi", "mpich"))
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="small sizes and 3 repeats (smoke test of the driver)")
    ap.add_argument("--iters", type=int, default=200000,
                    help="call_overhead's iterations (MPI_Comm_rank calls; a tenth as many Isend+Irecv+Waitall, "
                         "a twentieth as many ping-pongs), per batch of 5")
    ap.add_argument("--keep", type=Path, help="keep one halo profile of each tool in this directory")
    ap.add_argument("--only", choices=["per_call"] + [w[0] for w in WORKLOADS],
                    help="run this part only; the other parts' results stay as an earlier run left them")
    args = ap.parse_args()
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    build = ROOT / ("build" if args.mpi == "openmpi" else "build-mpich")
    caracal_lib = build / "lib" / "libcaracal.so"
    for p in (caracal_lib, build / "bin" / "call_overhead"):
        if not p.exists():
            sys.exit(f"mpip_compare: {p} is not built")
    mpip_lib = args.mpip_lib or build_mpip(args.mpip_src, args.mpi)
    if not mpip_lib.exists():
        sys.exit(f"mpip_compare: {mpip_lib} does not exist")
    repeats = 3 if args.quick else args.repeats
    os.environ.setdefault("LOGNAME", "bench")  # mpiP's report header asks for it
    name = f"mpip-compare-{args.mpi}"
    doc = {"schema": "caracal.bench-mpip/1", "mpi": args.mpi, "nranks": 2, "repeats": repeats,
           "mpip": str(mpip_lib), "per_call": {}, "whole_run": {}, "runs": []}
    old = ROOT / "bench" / "results" / f"{name}.json"
    if args.only and old.exists():
        prev = json.loads(old.read_text())
        if prev.get("schema") == doc["schema"] and prev.get("mpi") == args.mpi:
            doc.update(per_call=prev["per_call"], whole_run=prev["whole_run"], runs=prev.get("runs", []))
    run = {"part": args.only or "all", "repeats": repeats, "iters": args.iters, "machine": machine_description()}

    def save():
        run["load_average_at_end"] = os.getloadavg()
        doc["runs"] = [r for r in doc["runs"] if r["part"] not in (run["part"], "all")] + [run]
        write_results(name, doc, markdown(doc))

    with tempfile.TemporaryDirectory() as tmp:
        prog = str(build / "bin" / "call_overhead")
        iters = "20000" if args.quick else str(args.iters)

        def run_calls(config):
            out = subprocess.run(mpiexec(args.mpi, 2, [prog, iters], env_for(config, caracal_lib, mpip_lib, tmp)),
                                 env=launcher_env(), capture_output=True, text=True, timeout=600, check=True).stdout
            # mpiP prints its own "mpiP: ..." lines after the program's JSON line
            return json.loads([ln for ln in out.splitlines() if ln.startswith("{")][-1])
        if args.only in (None, "per_call"):
            print("per-call cost (call_overhead)", file=sys.stderr)
            res = interleave(CONFIGS, repeats, run_calls)
            for key in res["native"][0]:
                per = {c: spread([r[key] for r in res[c]]) for c in CONFIGS}
                added = {c: per[c]["median"] - per["native"]["median"] for c in ("caracal", "mpip")}
                doc["per_call"][key] = {"ns": per, "added_ns": added,
                                        "mpip_over_caracal": added["mpip"] / added["caracal"]
                                        if added["caracal"] > 0 else None}
            save()

        for wname, exe, wargs in WORKLOADS:
            if args.only not in (None, wname):
                continue
            path = build / "bin" / exe
            if args.quick:
                wargs = []

            def run_whole(config):
                cmd = mpiexec(args.mpi, 2, [str(path)] + wargs, env_for(config, caracal_lib, mpip_lib, tmp))
                t0 = time.perf_counter()
                subprocess.run(cmd, env=launcher_env(), capture_output=True, text=True, timeout=900, check=True)
                return time.perf_counter() - t0
            print(f"whole run: {wname} {' '.join(wargs)}", file=sys.stderr)
            res = interleave(CONFIGS, repeats, run_whole)
            per = {c: spread(res[c]) for c in CONFIGS}
            doc["whole_run"][wname] = {"args": wargs, "seconds": per,
                                       "ratio": {c: per[c]["median"] / per["native"]["median"]
                                                 for c in ("caracal", "mpip")}}
            save()
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            halo = [str(build / "bin" / "halo")]
            subprocess.run(mpiexec(args.mpi, 2, halo, {"LD_PRELOAD": str(caracal_lib),
                                                       "CARACAL_PROFILE": str(args.keep / f"halo-{args.mpi}.json")}),
                           env=launcher_env(), capture_output=True, timeout=600, check=True)
            subprocess.run(mpiexec(args.mpi, 2, halo, {"LD_PRELOAD": str(mpip_lib), "MPIP": f"-f {args.keep}"}),
                           env=launcher_env(), capture_output=True, timeout=600, check=True)
    save()


def markdown(doc):
    def loads(xs):
        return ", ".join(f"{x:.1f}" for x in xs)
    m = doc["runs"][-1]["machine"]
    md = [f"# Caracal's profiler vs mpiP ({doc['mpi']}, 2 ranks, interleaved repeats)\n",
          f"Machine: {m['cpu']}, {m['cores']} cores; {m['note']}. Runs (load average 1/5/15 min at start; at end):\n"]
    md += [f"- {r['part']}: {r['repeats']} repeats" + (f" of {r['iters']} iterations" if r["part"] == "per_call" else "")
           + f", {r['machine']['date']}, load {loads(r['machine']['load_average_at_start'])}"
           f"; {loads(r['load_average_at_end'])}" for r in doc["runs"]]
    md += ["", f"mpiP: {doc['mpip']} with its defaults. Caracal: libcaracal with CARACAL_PROFILE set.\n",
           "## Added cost per call (ns; best batch of a run, median over runs [min-max of runs])\n",
           "| call | native | + Caracal | + mpiP | mpiP / Caracal |", "|---|---|---|---|---|"]
    for key, v in doc["per_call"].items():
        ns = v["ns"]

        def cell(c):
            return f"{v['added_ns'][c]:+.0f} [{ns[c]['min'] - ns['native']['median']:+.0f} .. " \
                   f"{ns[c]['max'] - ns['native']['median']:+.0f}]"
        # MPI_Comm_rank: mpiP does not time it (adds nothing), so there is no ratio to give
        ratio = f"{v['mpip_over_caracal']:.0f}x" if v["mpip_over_caracal"] and v["added_ns"]["mpip"] >= 1 else "-"
        md.append(f"| {key} | {ns['native']['median']:.0f} | {cell('caracal')} | {cell('mpip')} | {ratio} |")
    md += ["", "## Whole run (median wall time of mpiexec [min-max], ratio to native)\n",
           "| workload | native s | Caracal s | mpiP s | Caracal / native | mpiP / native |",
           "|---|---|---|---|---|---|"]
    for name, w in doc["whole_run"].items():
        s = w["seconds"]

        def sec(c):
            return f"{s[c]['median']:.3f} [{s[c]['min']:.3f}-{s[c]['max']:.3f}]"
        md.append(f"| {name} {' '.join(w['args'])} | {sec('native')} | {sec('caracal')} | {sec('mpip')} "
                  f"| {w['ratio']['caracal']:.3f} | {w['ratio']['mpip']:.3f} |")
    if not doc["whole_run"]:
        md.append("| (not measured in these runs) | | | | | |")
    md.append("")
    return "\n".join(md)


if __name__ == "__main__":
    main()
