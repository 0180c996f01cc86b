#!/usr/bin/env python3
"""Caracal's default selection against the library alone, per library: is any default cell
slower than native?

For each (ranks, family) one launch of the build's caracal-tune-bench times three candidates
interleaved (each repetition in a fresh random order): `pmpi` (the library's PMPI_* entry,
nothing of Caracal), `native` (the library's algorithm reached through Caracal's entry, as a
call the rules send native) and `default` (the built-in selection of that build). Launches
run in a random order per round; a cell's ratio is default / pmpi per round, and the table
gives the median over rounds with min-max. The families are those whose built-in rules name
a Caracal algorithm somewhere (src/coll/select.c); the sizes include each rule's edges.

Usage: bench/coll/defaults.py --lib openmpi5 [--ranks 2,4] [--rounds 3] [--reps 7]
          [--families barrier,bcast,...] [--sizes 8,64,...]
Writes bench/results/coll-<lib>.md and .json (compact; medians per round only).
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import benchlib  # noqa: E402
from caracal import launch, mpilibs, paths  # noqa: E402

FAMILIES = ["barrier", "bcast", "reduce", "allreduce", "reduce_scatter", "reduce_scatter_block"]
SIZES = "8,64,512,2K,4K,8K,16K,32K,64K,256K,1M,4M"
SCALE = {"K": 1 << 10, "M": 1 << 20}
LIMIT = 1.05  # issue 15: no default cell slower than 1.05x native


def parse_size(t):
    t = t.strip().upper()
    return int(t[:-1]) * SCALE[t[-1]] if t[-1] in SCALE else int(t)


def fmt_bytes(b):
    return f"{b >> 20}M" if b >= 1 << 20 and b % (1 << 20) == 0 else f"{b >> 10}K" if b >= 1024 and b % 1024 == 0 else str(b)


def library_version(lib):
    """The library's own version line (mpiexec --version's first line)."""
    try:
        cmd = [mpilibs.get(lib).mpiexec, "--version"]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30, env=launch.launcher_env(lib)).stdout
        lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
        for ln in lines:
            if "Version" in ln or "Open MPI" in ln or "Intel" in ln:
                return ln
        return lines[0] if lines else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True, choices=mpilibs.NAMES)
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--sizes", default=SIZES)
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--out", help="results name (default coll-<lib>)")
    a = ap.parse_args()
    ranks = [int(x) for x in a.ranks.split(",")]
    fams = a.families.split(",")
    bad = [f for f in fams if f not in FAMILIES]
    if bad:
        ap.error(f"unknown family: {', '.join(bad)} (choose from {', '.join(FAMILIES)})")
    sizes = [parse_size(s) for s in a.sizes.split(",")]
    exe = paths.build_dir(a.lib) / "bin" / "caracal-tune-bench"
    if not exe.exists():
        sys.exit(f"defaults: {exe} is not built (cmake --build {paths.build_dir(a.lib)})")
    cands = ["pmpi", "native", "default"]
    configs = [(n, fam) for n in ranks for fam in fams]

    def run_one(cfg):
        n, fam = cfg
        sz = [0] if fam == "barrier" else sizes
        argv = [str(exe), fam, "--sizes", ",".join(map(str, sz)), "--cands", ",".join(cands),
                "--reps", str(a.reps), "--target-us", "2000"]
        out = benchlib.run_launch(benchlib.mpiexec(a.lib, n, argv, env={"LD_PRELOAD": ""}), 600)
        cells = [json.loads(ln) for ln in out.stdout.splitlines() if ln.startswith("{") and "tune-cell" in ln]
        if out.returncode or not cells:
            print(f"\ndefaults: {a.lib} {cfg} failed: {out.stderr[-300:]}", file=sys.stderr)
        return {"cells": cells, "load": round(os.getloadavg()[0], 2)}

    load0 = os.getloadavg()
    results = {c: [] for c in configs}
    rng = random.Random(1)
    for rnd in range(a.rounds):  # launches in a new random order each round; results written after each
        order = list(configs)
        rng.shuffle(order)
        for i, c in enumerate(order):
            benchlib.progress(rnd * len(configs) + i, a.rounds * len(configs), f"round {rnd + 1} {c}")
            results[c].append(run_one(c))
        write(a, configs, results, load0, rnd + 1)


def write(a, configs, results, load0, rounds_done):
    rows, md_rows, worst = [], [], []
    loads = [r["load"] for runs in results.values() for r in runs]
    for (n, fam) in configs:
        per = {}  # bytes -> cand -> [median_us per round]
        for r in results[(n, fam)]:
            for c in r["cells"]:
                per.setdefault(c["bytes"], {}).setdefault(c["cand"], []).append(c["median_us"])
        for b in sorted(per):
            m = per[b]
            if len(m.get("pmpi", [])) != len(m.get("default", [])) or not m.get("pmpi"):
                continue
            rd = [d / p for d, p in zip(m["default"], m["pmpi"])]
            rn = [d / p for d, p in zip(m["native"], m["pmpi"])]
            ratio, nratio = statistics.median(rd), statistics.median(rn)
            row = dict(lib=a.lib, ranks=n, family=fam, bytes=b, pmpi_us=round(statistics.median(m["pmpi"]), 3),
                       default_ratio=round(ratio, 3), default_spread=[round(min(rd), 3), round(max(rd), 3)],
                       native_ratio=round(nratio, 3), native_spread=[round(min(rn), 3), round(max(rn), 3)],
                       rounds=len(rd))
            rows.append(row)
            flag = " **>1.05**" if ratio > LIMIT else ""
            md_rows.append(f"| {n} | {fam} | {fmt_bytes(b)} | {row['pmpi_us']:.2f} | {ratio:.2f} ({min(rd):.2f}-{max(rd):.2f}){flag} "
                           f"| {nratio:.2f} ({min(rn):.2f}-{max(rn):.2f}) |")
            if ratio > LIMIT:
                worst.append(row)
    title = mpilibs.get(a.lib).title
    version = library_version(a.lib)
    md = (f"<!-- generated by bench/coll/defaults.py --lib {a.lib}; ratio = Caracal / the library alone per call "
          "(< 1: faster) -->\n"
          f"# Default selection vs native: {title}\n\n"
          f"Library: {version or title}. {os.cpu_count()} cores (shared); load average {load0[0]:.1f} at the start, "
          f"{min(loads, default=0):.1f}-{max(loads, default=0):.1f} after the launches, {os.getloadavg()[0]:.1f} at the end. "
          f"{rounds_done} rounds of launches in random order, each with {a.reps} repetitions of ~2 ms of back-to-back calls "
          "per candidate (interleaved in a random order). `default`: the build's built-in selection; `native`: the "
          "library's own algorithm through Caracal's entry (what a call the rules leave native costs); both divided "
          "by `pmpi` (PMPI_*, nothing of Caracal) of the same repetition round; median over rounds (min-max).\n\n"
          "| ranks | family | bytes | pmpi us/call | default / pmpi | native / pmpi |\n|---|---|---|---|---|---|\n"
          + "\n".join(md_rows) + "\n\n"
          + (f"{len(worst)} of {len(rows)} cells have a default slower than {LIMIT}x: "
             + ", ".join(f"{w['ranks']}/{w['family']}/{fmt_bytes(w['bytes'])} {w['default_ratio']:.2f}" for w in worst)
             if worst else f"No default cell above {LIMIT}x native ({len(rows)} cells).") + "\n")
    doc = {"schema": "caracal.bench-defaults/1", "lib": a.lib, "library": version, "machine": benchlib.machine_description(),
           "rounds": rounds_done, "reps": a.reps, "load_during": [min(loads, default=0), max(loads, default=0)], "rows": rows}
    benchlib.write_results(a.out or f"coll-{a.lib}", doc, md)
    if rounds_done == a.rounds:
        print(md)


if __name__ == "__main__":
    main()
