#!/usr/bin/env python3
"""Every collective family Caracal implements, when ranks outnumber or share their cores.

The companion of bench/coll/wait.py (which covers barrier/bcast/reduce/allreduce with the
halo and rotating-root patterns): here each family's shared-memory algorithm (`shm`, where
the family has one; otherwise its node-aware `hier`), the default selection (`default`) and
the library alone (`pmpi`: PMPI_* called directly) are timed interleaved in one launch of
caracal-tune-bench (calls back to back, random order per repetition, medians and quartiles),
one launch per (library, ranks, wait strategy, family), launches in a random order per round.
Strategies: CARACAL_WAIT=futex (the default) and nap; spin only where every rank has a core.
With --busy every launch runs while one busy loop per core keeps the machine loaded.

Usage: bench/coll/wait_families.py [--ranks 4,8] [--libs openmpi,mpich] [--rounds 2]
          [--sizes 8,4K,64K,4M] [--strategies futex,nap] [--families all|LIST] [--busy]
Writes bench/results/coll-wait-families[-busy].md and .json (medians per round only).
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import benchlib  # noqa: E402

ROOT = benchlib.ROOT
BUILD = {"openmpi": "build", "mpich": "build-mpich"}
FAMILIES = ["barrier", "bcast", "reduce", "allreduce", "allgather", "allgatherv", "gather", "gatherv", "scatter",
            "scatterv", "alltoall", "alltoallv", "reduce_scatter", "reduce_scatter_block", "scan", "exscan"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", default="4,8")
    ap.add_argument("--libs", default="openmpi,mpich")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--sizes", default="8,4K,64K,4M")
    ap.add_argument("--strategies", default="futex,nap")
    ap.add_argument("--families", default="all")
    ap.add_argument("--busy", action="store_true")
    a = ap.parse_args()
    ranks = [int(x) for x in a.ranks.split(",")]
    libs = a.libs.split(",")
    fams = FAMILIES if a.families == "all" else a.families.split(",")
    bad = [f for f in fams if f not in FAMILIES] + [l for l in libs if l not in BUILD]
    if bad:
        ap.error(f"unknown family or library: {', '.join(bad)}")
    sizes = [benchlib.parse_size(s) for s in a.sizes.split(",")]
    cores = os.cpu_count() or 1
    algs = {lib: benchlib.caracal_algorithms(lib, "wait_families") for lib in libs}
    configs = []
    for lib in libs:
        for n in ranks:
            for strat in a.strategies.split(","):
                if strat == "spin" and n > cores:
                    continue   # a spinning waiter takes the core its writer needs
                for fam in fams:
                    configs.append((lib, n, strat, fam))

    def run_one(cfg):
        lib, n, strat, fam = cfg
        own = "shm" if "shm" in algs[lib].get(fam, []) else "hier"
        cands = ["pmpi", own] + (["default"] if strat == "futex" else [])
        exe = str(ROOT / BUILD[lib] / "bin" / "caracal-tune-bench")
        sz = [0] if fam == "barrier" else sizes
        argv = [exe, fam, "--sizes", ",".join(map(str, sz)), "--cands", ",".join(cands), "--reps", str(a.reps),
                "--target-us", "2000"]
        env = {"CARACAL_WAIT": strat}
        cmd = benchlib.mpiexec(lib, n, argv, env=env)
        out = benchlib.run_launch(cmd, 900, busy=a.busy)
        cells = [json.loads(ln) for ln in out.stdout.splitlines() if ln.startswith("{") and "tune-cell" in ln]
        if out.returncode or not cells:
            print(f"\nwait_families: {cfg} failed: {out.stderr[-300:]}", file=sys.stderr)
        load = os.getloadavg()[0]
        return [dict(c, load=round(load, 2)) for c in cells]

    load0 = os.getloadavg()
    results = benchlib.interleave(configs, a.rounds, run_one)
    cells = {}
    for (lib, n, strat, fam), runs in results.items():
        for rr in runs:
            by = {}
            for c in rr:
                by.setdefault(c["bytes"], {})[c["cand"]] = c["median_us"]
            for b, m in by.items():
                if m.get("pmpi"):
                    for cand, v in m.items():
                        if cand != "pmpi":
                            key = (lib, n, fam, b, "default" if cand == "default" else strat)
                            cells.setdefault(key, {"ratios": [], "native": [], "alg": cand})
                            cells[key]["ratios"].append(v / m["pmpi"])
                            cells[key]["native"].append(m["pmpi"])
    strategies = a.strategies.split(",") + ["default"]
    rows_md, summary, doc_rows = [], {}, []
    keys = sorted({k[:4] for k in cells}, key=lambda k: (libs.index(k[0]), k[1], FAMILIES.index(k[2]), k[3]))
    for k in keys:
        nat = [v for s in strategies for v in cells.get(k + (s,), {"native": []})["native"]]
        own = next((cells[k + (s,)]["alg"] for s in strategies if k + (s,) in cells and s != "default"), "-")
        row = f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {own} | {statistics.median(nat):.2f} |"
        for s in strategies:
            c = cells.get(k + (s,))
            if not c:
                row += " - |"
                continue
            m = statistics.median(c["ratios"])
            row += f" {m:.2f} ({min(c['ratios']):.2f}-{max(c['ratios']):.2f}) |"
            summary.setdefault((k[0], k[1], s), []).append((k[3], m))
            doc_rows.append(dict(lib=k[0], ranks=k[1], family=k[2], bytes=k[3], strategy=s, alg=c["alg"],
                                 ratio=round(m, 3), spread=[round(min(c["ratios"]), 3), round(max(c["ratios"]), 3)],
                                 native_us=round(statistics.median(c["native"]), 3)))
        rows_md.append(row)
    notes = []
    for (lib, n, s), ms in sorted(summary.items(), key=lambda x: (libs.index(x[0][0]), x[0][1], strategies.index(x[0][2]))):
        small = [m for b, m in ms if b <= 4096]
        goal = 0.5 if lib == "openmpi" else 0.1
        notes.append(f"- {lib}, {n} ranks, {s}: median ratio {statistics.median(m for _, m in ms):.2f}; up to 4 KiB "
                     f"{sum(m <= goal for m in small)} of {len(small)} cells meet the goal (<= {goal}x native), "
                     f"{sum(m > 1.0 for _, m in ms)} of {len(ms)} cells slower than native")
    md = ("<!-- generated by bench/coll/wait_families.py; ratio = Caracal / native per call (< 1: faster) -->\n"
          f"# Every family when ranks outnumber cores{', every core kept busy by another job' if a.busy else ''}\n\n"
          f"{cores} cores; load average {load0[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; {a.rounds} "
          f"rounds of launches in random order x {a.reps} repetitions of ~2 ms of back-to-back calls. Columns: the "
          "family's own algorithm (shm, else hier) with each wait strategy, and the default selection (futex "
          "launches), each / the library alone in the same launch; median over rounds (min-max).\n\n"
          "| library | ranks | family | bytes | algorithm | native us/call | "
          + " | ".join(f"{s} ratio" for s in strategies) + " |\n|" + "---|" * (6 + len(strategies)) + "\n"
          + "\n".join(rows_md) + "\n\n## Summary (goal of issue 16: 2x Open MPI, 10x MPICH up to 4 KiB)\n\n"
          + "\n".join(notes) + "\n")
    doc = {"schema": "caracal.bench-wait-families/1", "busy": a.busy, "machine": benchlib.machine_description(),
           "rounds": a.rounds, "reps": a.reps, "rows": doc_rows}
    benchlib.write_results("coll-wait-families" + ("-busy" if a.busy else ""), doc, md)
    print(md)


if __name__ == "__main__":
    main()
