#!/usr/bin/env python3
"""Does the default selection ever lose to the library? Every family, three call patterns.

The built-in defaults (src/coll/select.c) were chosen from one call pattern at a time, and
the patterns disagree: a 2-rank shm bcast beats Open MPI's when the root moves on every call
(IMB) and loses to it from one fixed root back to back. This script times, in one launch of
caracal-tune-bench per (library, ranks, pattern, family), the default selection (`default`),
the family's shared-memory algorithm (`shm`, where it has one) and the library alone (`pmpi`:
PMPI_* called directly), interleaved in a random order per repetition, in each pattern:

  b2b      calls back to back from root 0 (what `caracal tune` measures)
  rotate   back to back, the root moving to the next rank on every call (IMB-MPI1; rooted
           families only)
  barrier  a native barrier before every call, only the call timed (the OSU benchmarks)

A cell is (library, ranks, family, bytes); its verdict takes the worst pattern:
  LOSS  the default is slower than 1.05x the library in some pattern
  MISS  the default is native but shm beats the library (<= 0.95x) in every pattern
Launches run in a random order per round, each launch with its own candidate order (--seed);
the table gives medians over rounds.

Any library Caracal builds for (`--libs openmpi5,mpich5,impi`: build-NAME/ must exist) - the
check item 4 of the MPI-libraries issue asks of every library's default table.

Usage: bench/coll/defaults_check.py [--ranks 2,4] [--libs openmpi,mpich] [--rounds 2]
          [--sizes 8,64,512,2K,4K,16K,64K,256K,1M] [--families all|LIST] [--patterns b2b,rotate,barrier]
          [--rules FILE] [--seed N] [--out NAME]
Writes bench/results/NAME.md and .json (default NAME: defaults-check).

--rules FILE measures a changed default before it is built: the ranks read FILE (CARACAL_RULES,
tried before the built-in rows; docs/collectives.md, Rules files) and `default` is what it says
where it has a row for the family. Give a family's whole new row, ending in a rule for every
call (e.g. `bcast = shm@512-16k#2 native`), so that nothing of the built-in row is reached.
"""
import argparse
import itertools
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import benchlib  # noqa: E402
from caracal import mpilibs, paths  # noqa: E402

FAMILIES = ["barrier", "bcast", "reduce", "allreduce", "allgather", "allgatherv", "gather", "gatherv", "scatter",
            "scatterv", "alltoall", "alltoallv", "reduce_scatter", "reduce_scatter_block", "scan", "exscan"]
ROOTED = {"bcast", "reduce", "gather", "gatherv", "scatter", "scatterv"}
PATTERNS = ["b2b", "rotate", "barrier"]
LOSS, MISS = 1.05, 0.95  # the verdicts: slower than 1.05x the library; shm at most 0.95x in every pattern


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", default="2,4", help="comma-separated rank counts (default 2,4)")
    ap.add_argument("--libs", default="openmpi,mpich", help="libraries by name (" + ", ".join(mpilibs.NAMES) + "), each built")
    ap.add_argument("--rounds", type=int, default=2, help="launches per configuration (default 2)")
    ap.add_argument("--reps", type=int, default=7, help="repetitions per launch (default 7)")
    ap.add_argument("--sizes", default="8,64,512,2K,4K,16K,64K,256K,1M")
    ap.add_argument("--families", default="all")
    ap.add_argument("--patterns", default="b2b,rotate,barrier")
    ap.add_argument("--rules", metavar="FILE", help="a rules file the default reads first (a changed default, unbuilt)")
    ap.add_argument("--out", default="defaults-check", help="result name in bench/results/")
    ap.add_argument("--seed", type=int, default=None,
                    help="candidate order of the first launch (the k-th launch takes seed+k; default: from the clock)")
    a = ap.parse_args()
    try:
        ranks = [int(x) for x in a.ranks.split(",")]
        sizes = [benchlib.parse_size(s) for s in a.sizes.split(",")]
    except (ValueError, KeyError):
        ap.error("--ranks takes integers, --sizes sizes such as 8,4K,1M")
    libs, pats = a.libs.split(","), a.patterns.split(",")
    fams = FAMILIES if a.families == "all" else a.families.split(",")
    bad = [f for f in fams if f not in FAMILIES] + [l for l in libs if l not in mpilibs.NAMES] + [p for p in pats if p not in PATTERNS]
    if bad or a.rounds < 1 or any(n < 2 for n in ranks):
        ap.error(f"unknown family, library or pattern: {', '.join(bad)}" if bad else "--rounds >= 1, --ranks >= 2")
    if a.rules and not os.path.isfile(a.rules):
        ap.error(f"--rules: no file {a.rules}")
    rules_text = Path(a.rules).read_text() if a.rules else ""
    env = {"CARACAL_RULES": os.path.abspath(a.rules)} if a.rules else None
    algs = {lib: benchlib.caracal_algorithms(lib, "defaults_check") for lib in libs}
    # every launch its own candidate order: with one seed for all, each launch repeated the
    # same orders, and a candidate that always followed a slow one measured slow in every round
    seed0 = a.seed if a.seed is not None else int(time.time()) % (1 << 29)
    launches = itertools.count()
    configs = [(lib, n, pat, fam) for lib in libs for n in ranks for pat in pats for fam in fams
               if pat != "rotate" or fam in ROOTED]

    def run_one(cfg):
        lib, n, pat, fam = cfg
        cands = ["pmpi", "default"] + (["shm"] if "shm" in algs[lib].get(fam, []) else [])
        exe = str(paths.build_dir(lib) / "bin" / "caracal-tune-bench")
        argv = [exe, fam, "--sizes", "0" if fam == "barrier" else ",".join(map(str, sizes)), "--cands", ",".join(cands),
                "--reps", str(a.reps), "--target-us", "1000", "--pattern", pat, "--seed", str(seed0 + next(launches))]
        out = benchlib.run_launch(benchlib.mpiexec(lib, n, argv, env), 900)
        cells = [json.loads(ln) for ln in out.stdout.splitlines() if ln.startswith("{") and "tune-cell" in ln]
        if out.returncode or not cells:
            print(f"\ndefaults_check: {cfg} failed: {out.stderr[-300:]}", file=sys.stderr)
        elif "caracal" in out.stderr:  # e.g. a refused rule of --rules: the default measured is not the one meant
            print(f"\ndefaults_check: {cfg}: {out.stderr.strip()[-300:]}", file=sys.stderr)
        return cells

    load0 = os.getloadavg()
    results = benchlib.interleave(configs, a.rounds, run_one)
    # ratios[(lib, n, fam, bytes)][pattern][cand] = [ratio per round]; native us likewise
    ratios, native = {}, {}
    for (lib, n, pat, fam), runs in results.items():
        for rr in runs:
            by = {}
            for c in rr:
                by.setdefault(c["bytes"], {})[c["cand"]] = c["median_us"]
            for b, m in by.items():
                if not m.get("pmpi"):
                    continue
                native.setdefault((lib, n, fam, b), {}).setdefault(pat, []).append(m["pmpi"])
                for cand in ("default", "shm"):
                    if cand in m:
                        ratios.setdefault((lib, n, fam, b), {}).setdefault(pat, {}).setdefault(cand, []).append(
                            m[cand] / m["pmpi"])
    med = statistics.median
    rows, doc_rows, counts = [], [], {}
    for k in sorted(ratios, key=lambda k: (libs.index(k[0]), k[1], FAMILIES.index(k[2]), k[3])):
        per = ratios[k]
        d = {p: med(per[p]["default"]) for p in per if "default" in per[p]}
        s = {p: med(per[p]["shm"]) for p in per if "shm" in per[p]}
        worst_d = max(d.values()) if d else None
        # the default ran native here when it measured as the library did in every pattern; a
        # cell the default gives to Caracal is told apart by its own ratio, so only MISS needs it
        verdict = "LOSS" if worst_d is not None and worst_d > LOSS else ""
        if not verdict and s and max(s.values()) <= MISS and worst_d is not None and worst_d > MISS:
            verdict = "MISS"
        counts.setdefault((k[0], k[1]), {"cells": 0, "LOSS": 0, "MISS": 0})
        counts[(k[0], k[1])]["cells"] += 1
        if verdict:
            counts[(k[0], k[1])][verdict] += 1
        nat = med([v for p in native[k] for v in native[k][p]])
        cols = " | ".join(f"{d[p]:.2f}" if p in d else "-" for p in pats)
        scols = " | ".join(f"{s[p]:.2f}" if p in s else "-" for p in pats)
        rows.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {nat:.2f} | {cols} | {scols} | {verdict} |")
        doc_rows.append(dict(lib=k[0], ranks=k[1], family=k[2], bytes=k[3], native_us=round(nat, 3),
                             default={p: round(v, 3) for p, v in d.items()},
                             shm={p: round(v, 3) for p, v in s.items()}, verdict=verdict))
    head = ("| library | ranks | family | bytes | native us | " + " | ".join(f"default {p}" for p in pats) + " | "
            + " | ".join(f"shm {p}" for p in pats) + " | verdict |\n|" + "---|" * (6 + 2 * len(pats)) + "\n")
    summary = "\n".join(f"- {lib}, {n} ranks: {c['cells']} cells, {c['LOSS']} where the default is slower than "
                        f"{LOSS}x the library in some pattern, {c['MISS']} where shm beats it in every pattern but "
                        "the default does not take it" for (lib, n), c in sorted(counts.items()))
    load1 = os.getloadavg()
    titles = {lib: mpilibs.get(lib).title for lib in libs}  # machine_description names Debian's two only
    md = ("<!-- generated by bench/coll/defaults_check.py; ratio = time / the library's time (< 1: faster) -->\n"
          "# The default selection against the library, in three call patterns\n\n"
          + "; ".join(f"{lib}: {t}" for lib, t in titles.items()) + ". "
          f"{os.cpu_count()} cores; load average {load0[0]:.1f} at the start, {load1[0]:.1f} at the end; "
          f"{a.rounds} rounds of launches in random order x {a.reps} repetitions of ~1 ms of calls per candidate. "
          "Patterns: b2b = back to back from root 0, rotate = back to back with the root moving every call (IMB), "
          "barrier = a native barrier before every call, only the call timed (OSU). Median over rounds of "
          f"candidate / library in the same launch (candidates in a fresh order per repetition, seeded {seed0} + the launch's "
          "index; one untimed call of each candidate before its repetition). Verdict: LOSS = default > 1.05x in some pattern; MISS = the "
          "default does not take shm although shm <= 0.95x in every pattern.\n\n" + head + "\n".join(rows)
          + "\n\n## Summary\n\n" + summary + "\n"
          + (f"\n`default` read the rules file {a.rules} first (a changed default, measured before it was built):\n\n"
             + "".join(f"    {ln}\n" for ln in rules_text.splitlines()) if a.rules else ""))
    doc = {"schema": "caracal.bench-defaults-check/1", "machine": dict(benchlib.machine_description(), load_average_at_start=load0), "libraries": titles,
           "load_average_at_end": load1, "rounds": a.rounds,
           "reps": a.reps, "patterns": pats, "seed": seed0, "rules": rules_text or None, "rows": doc_rows}
    benchlib.write_results(a.out, doc, md)
    print(summary)


if __name__ == "__main__":
    main()
