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
Launches run in a random order per round, each launch with its own candidate order (--seed).
Per (cell, pattern) every repetition gives one paired ratio, default / library timed side by side
in that repetition; the table gives the median of those ratios over all rounds and its 95%
distribution-free interval (sign-test order statistics, as `caracal tune --verify`). The verdicts:
  LOSS   the default is slower than 1.05x the library in some pattern: the interval lies above 1.05
  LOSS?  the median is above 1.05 but the interval reaches 1.05 or below (not shown with these repetitions)
  MISS   the default is not shm although shm's interval lies below 0.95 in every pattern

The results are written every 5 launches and at the end (every launch's raw repetitions kept in
--state, default /tmp/caracal-defaults-check/NAME.json): a run stopped part way (--max-minutes,
or interrupted) continues with --resume and the same options, so a long check splits into holds
of the bench lock.

Any library Caracal builds for (`--libs openmpi5,mpich5,impi`: build-NAME/ must exist) - the
check item 4 of the MPI-libraries issue asks of every library's default table. --build NAME
runs another build's caracal-tune-bench on the libraries (one that runs on each of them,
mpilibs.BUILD_RUNS_ON): `--libs mpich5,impi --build abi` times the MPI-5 ABI build under both
libraries' ABI mode (their own libmpi_abi.so.1, through the launch's library path).

Usage: bench/coll/defaults_check.py [--ranks 2,4] [--libs openmpi,mpich] [--rounds 2]
          [--sizes 8,64,512,2K,4K,16K,64K,256K,1M] [--families all|LIST] [--patterns b2b,rotate,barrier]
          [--rules FILE] [--build NAME] [--seed N] [--out NAME] [--resume] [--max-minutes M] [--state FILE]
Writes bench/results/NAME.md and .json (default NAME: defaults-check).

--rules FILE measures a changed default before it is built: the ranks read FILE (CARACAL_RULES,
tried before the built-in rows; docs/collectives.md, Rules files) and `default` is what it says
where it has a row for the family. Give a family's whole new row, ending in a rule for every
call (e.g. `bcast = shm@512-16k#2 native`), so that nothing of the built-in row is reached.
"""
import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import benchlib  # noqa: E402
from caracal import mpilibs, paths  # noqa: E402
from caracal.commands.tune import median_ci  # noqa: E402

FAMILIES = ["barrier", "bcast", "reduce", "allreduce", "allgather", "allgatherv", "gather", "gatherv", "scatter",
            "scatterv", "alltoall", "alltoallv", "reduce_scatter", "reduce_scatter_block", "scan", "exscan"]
ROOTED = {"bcast", "reduce", "gather", "gatherv", "scatter", "scatterv"}
PATTERNS = ["b2b", "rotate", "barrier"]
LOSS, MISS = 1.05, 0.95  # the verdicts: slower than 1.05x the library; shm below 0.95x in every pattern


def fmt_ci(v):
    """'1.02 (0.99-1.05)': median and interval of a pattern's paired ratios ('-' where none)."""
    if not v:
        return "-"
    m, lo, hi, _ = v
    return f"{m:.2f}" if lo is None else f"{m:.2f} ({lo:.2f}-{hi:.2f})"


def summarise(state, libs, pats):
    """Rows and per-(library, ranks) counts from every launch done so far."""
    ratios, native = {}, {}  # ratios[key][pattern][cand] = [paired ratio per repetition]
    for k, launch in state["done"].items():
        lib, n, pat, fam = state["plan"][int(k)]
        by = {}
        for c in launch["cells"]:
            by.setdefault(c["bytes"], {})[c["cand"]] = c.get("reps_us", [])
        for b, m in by.items():
            nat = m.get("pmpi")
            if not nat:
                continue
            key = (lib, n, fam, b)
            native.setdefault(key, []).extend(nat)
            for cand in ("default", "shm"):
                if cand in m:
                    ratios.setdefault(key, {}).setdefault(pat, {}).setdefault(cand, []).extend(
                        t / x for t, x in zip(m[cand], nat) if x > 0)
    rows, counts = [], {}
    for key in sorted(ratios, key=lambda k: (libs.index(k[0]), k[1], FAMILIES.index(k[2]), k[3])):
        per = ratios[key]
        d = {p: (*median_ci(per[p]["default"]), len(per[p]["default"])) for p in per if per[p].get("default")}
        s = {p: (*median_ci(per[p]["shm"]), len(per[p]["shm"])) for p in per if per[p].get("shm")}
        verdict = ""
        if any(v[1] is not None and v[1] > LOSS for v in d.values()):
            verdict = "LOSS"
        elif any(v[0] > LOSS for v in d.values()):
            verdict = "LOSS?"
        elif (s and len(s) == len(d) and all(v[2] is not None and v[2] < MISS for v in s.values())
              and max(v[0] for v in d.values()) > MISS):
            verdict = "MISS"
        c = counts.setdefault(key[:2], {"cells": 0, "LOSS": 0, "LOSS?": 0, "MISS": 0, "list": []})
        c["cells"] += 1
        if verdict:
            c[verdict] += 1
            c["list"].append(f"{verdict} {key[2]} {key[3]} B")
        nat = sorted(native[key])
        q = statistics.quantiles(nat, n=4) if len(nat) > 1 else [nat[0]] * 3
        rows.append(dict(lib=key[0], ranks=key[1], family=key[2], bytes=key[3], native_us=round(q[1], 3),
                         native_p25_us=round(q[0], 3), native_p75_us=round(q[2], 3),
                         default={p: [round(x, 3) if x is not None else None for x in v[:3]] + [v[3]] for p, v in d.items()},
                         shm={p: [round(x, 3) if x is not None else None for x in v[:3]] + [v[3]] for p, v in s.items()},
                         verdict=verdict))
    return rows, counts


def write(a, state, libs, pats, rules_text, final):
    rows, counts = summarise(state, libs, pats)
    loads = [l["load"][0] for l in state["done"].values()]
    done, total = len(state["done"]), len(state["plan"])
    titles = {lib: mpilibs.get(lib).title + (f", libcaracal and the benchmark of build {a.build}" if a.build else "")
              for lib in libs}
    head = ("| library | ranks | family | bytes | native us (p25-p75) | "
            + " | ".join(f"default {p}" for p in pats) + " | " + " | ".join(f"shm {p}" for p in pats)
            + " | verdict |\n|" + "---|" * (6 + 2 * len(pats)) + "\n")
    lines = [f"| {r['lib']} | {r['ranks']} | {r['family']} | {r['bytes']} | {r['native_us']:.2f} "
             f"({r['native_p25_us']:.2f}-{r['native_p75_us']:.2f}) | "
             + " | ".join(fmt_ci(r["default"].get(p)) for p in pats) + " | "
             + " | ".join(f"{r['shm'][p][0]:.2f}" if p in r["shm"] else "-" for p in pats) + f" | {r['verdict']} |"
             for r in rows]
    summary = "\n".join(
        f"- {lib}, {n} ranks: {c['cells']} cells; {c['LOSS']} LOSS (interval above {LOSS}x in some pattern), "
        f"{c['LOSS?']} LOSS? (median above {LOSS}x, interval not), {c['MISS']} MISS"
        + (": " + ", ".join(c["list"]) if c["list"] else "") for (lib, n), c in sorted(counts.items()))
    status = ("" if done == total else
              f"\n**Partial: {done} of {total} launches** (continue with --resume and the same options).\n")
    md = ("<!-- generated by bench/coll/defaults_check.py; ratio = time / the library's time (< 1: faster) -->\n"
          "# The default selection against the library, in three call patterns\n\n"
          + "; ".join(f"{lib}: {t}" for lib, t in titles.items()) + ". "
          f"{os.cpu_count()} cores; `uptime` load average (1 min) {state['load_start'][0]:.2f} at the start, "
          f"{min(loads):.2f}-{max(loads):.2f} (median {statistics.median(loads):.2f}) before the launches, "
          f"{os.getloadavg()[0]:.2f} at the end; started {state['started']}, written {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}. "
          f"{a.rounds} rounds of launches in random order x {a.reps} repetitions of ~1 ms of calls per candidate "
          "(candidates in a fresh order per repetition, each launch its own seed: "
          f"{state['seed']} + the launch's index; one untimed call of each candidate before its repetition). "
          "Patterns: b2b = back to back from root 0, rotate = back to back with the root moving every call (IMB; "
          "rooted families only), barrier = a native barrier before every call, only the call timed (OSU). "
          "Each default cell: the median over all repetitions of all rounds of default / library timed side "
          "by side in the same repetition, and its 95% interval (sign-test order statistics). shm: the median only. "
          f"Verdict: LOSS = interval above {LOSS}x in some pattern; LOSS? = median above {LOSS}x but the interval "
          f"is not; MISS = the default does not take shm although shm's interval is below {MISS}x in every pattern.\n"
          + status + "\n" + head + "\n".join(lines) + "\n\n## Summary\n\n" + summary + "\n"
          + (f"\n`default` read the rules file {a.rules} first (a changed default, measured before it was built):\n\n"
             + "".join(f"    {ln}\n" for ln in rules_text.splitlines()) if rules_text else ""))
    doc = {"schema": "caracal.bench-defaults-check/2", "machine": dict(state["machine"], load_average_at_start=state["load_start"]),
           "libraries": titles, "load_average_at_end": os.getloadavg(), "launch_loads": [round(x, 2) for x in loads],
           "launches_done": done, "launches": total, "rounds": a.rounds, "reps": a.reps, "patterns": pats,
           "seed": state["seed"], "rules": rules_text or None, "build": a.build,
           "cell": "default/shm: [median of paired ratios, 95% CI low, high, repetitions]", "rows": rows}
    if final or done % 5 == 0:
        benchlib.write_results(a.out, doc, md)
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", default="2,4", help="comma-separated rank counts (default 2,4)")
    ap.add_argument("--libs", default="openmpi,mpich", help="libraries by name (" + ", ".join(mpilibs.NAMES) + "), each built")
    ap.add_argument("--rounds", type=int, default=3, help="launches per configuration (default 3)")
    ap.add_argument("--reps", type=int, default=7, help="repetitions per launch (default 7)")
    ap.add_argument("--sizes", default="8,64,512,2K,4K,16K,64K,256K,1M")
    ap.add_argument("--families", default="all")
    ap.add_argument("--patterns", default="b2b,rotate,barrier")
    ap.add_argument("--rules", metavar="FILE", help="a rules file the default reads first (a changed default, unbuilt)")
    ap.add_argument("--build", choices=mpilibs.BUILDS, default=None,
                    help="whose caracal-tune-bench runs (default: each library's own build; e.g. abi)")
    ap.add_argument("--out", default="defaults-check", help="result name in bench/results/")
    ap.add_argument("--seed", type=int, default=None,
                    help="candidate order of the first launch (the k-th launch takes seed+k; default: from the clock)")
    ap.add_argument("--state", default=None, help="raw launches kept here (default /tmp/caracal-defaults-check/NAME.json)")
    ap.add_argument("--resume", action="store_true", help="continue the run kept in --state (same options)")
    ap.add_argument("--max-minutes", type=float, default=0, help="start no launch after M minutes (0: no limit)")
    a = ap.parse_args()
    try:
        ranks = [int(x) for x in a.ranks.split(",")]
        sizes = [benchlib.parse_size(s) for s in a.sizes.split(",")]
    except (ValueError, KeyError):
        ap.error("--ranks takes integers, --sizes sizes such as 8,4K,1M")
    libs, pats = a.libs.split(","), a.patterns.split(",")
    fams = FAMILIES if a.families == "all" else a.families.split(",")
    bad = [f for f in fams if f not in FAMILIES] + [l for l in libs if l not in mpilibs.NAMES] + [p for p in pats if p not in PATTERNS]
    if bad or a.rounds < 1 or a.reps < 1 or any(n < 2 for n in ranks):
        ap.error(f"unknown family, library or pattern: {', '.join(bad)}" if bad else "--rounds, --reps >= 1, --ranks >= 2")
    wrong = [l for l in libs if a.build and l in mpilibs.NAMES and a.build not in mpilibs.BUILD_RUNS_ON[l]]
    if wrong:
        ap.error(f"--build {a.build} does not run on {', '.join(wrong)}")
    if a.rules and not os.path.isfile(a.rules):
        ap.error(f"--rules: no file {a.rules}")
    rules_text = Path(a.rules).read_text() if a.rules else ""
    env = {"CARACAL_RULES": os.path.abspath(a.rules)} if a.rules else None
    state_path = Path(a.state or f"/tmp/caracal-defaults-check/{a.out}.json")
    options = dict(libs=libs, ranks=ranks, sizes=sizes, families=fams, patterns=pats, rounds=a.rounds, reps=a.reps,
                   rules=rules_text)
    if a.build:  # (absent otherwise: runs kept before the option existed resume as they were)
        options["build"] = a.build
    if a.resume:
        try:
            state = json.loads(state_path.read_text())
        except (OSError, ValueError) as e:
            ap.error(f"--resume: no run kept in {state_path} ({e})")
        if state["options"] != options:
            ap.error(f"--resume: {state_path} was started with other options ({state['options']})")
    else:
        configs = [(lib, n, pat, fam) for lib in libs for n in ranks for pat in pats for fam in fams
                   if pat != "rotate" or fam in ROOTED]
        # every launch its own candidate order: with one seed for all, each launch repeated the
        # same orders, and a candidate that always followed a slow one measured slow in every round
        seed0 = a.seed if a.seed is not None else int(time.time()) % (1 << 29)
        rng, plan = random.Random(seed0), []
        for _ in range(a.rounds):  # launches in a random order per round
            order = list(configs)
            rng.shuffle(order)
            plan += order
        state = {"options": options, "seed": seed0, "plan": plan, "done": {}, "load_start": os.getloadavg(),
                 "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                 "machine": benchlib.machine_description()}
    state["plan"] = [tuple(p) for p in state["plan"]]
    algs = {lib: benchlib.caracal_algorithms(a.build or lib, "defaults_check") for lib in libs}
    t_start = time.monotonic()
    todo = [k for k in range(len(state["plan"])) if str(k) not in state["done"]]
    try:  # interrupted (Ctrl-C, a hold's timeout): the launches done are written below
        for i, k in enumerate(todo):
            if a.max_minutes and time.monotonic() - t_start > 60 * a.max_minutes:
                print(f"\ndefaults_check: {a.max_minutes} minutes used, {len(todo) - i} launches left: "
                      f"continue with --resume", file=sys.stderr)
                break
            lib, n, pat, fam = state["plan"][k]
            benchlib.progress(len(state["done"]), len(state["plan"]), f"{lib} {pat} {fam}")
            cands = ["pmpi", "default"] + (["shm"] if "shm" in algs[lib].get(fam, []) else [])
            exe = str(paths.build_dir(a.build or lib) / "bin" / "caracal-tune-bench")
            argv = [exe, fam, "--sizes", "0" if fam == "barrier" else ",".join(map(str, sizes)), "--cands", ",".join(cands),
                    "--reps", str(a.reps), "--target-us", "1000", "--pattern", pat, "--seed", str(state["seed"] + k)]
            load = os.getloadavg()
            out = benchlib.run_launch(benchlib.mpiexec(lib, n, argv, env), 900)
            cells = [json.loads(ln) for ln in out.stdout.splitlines() if ln.startswith("{") and "tune-cell" in ln]
            if out.returncode or not cells:
                print(f"\ndefaults_check: {state['plan'][k]} failed: {out.stderr[-300:]}", file=sys.stderr)
                continue
            if "caracal" in out.stderr:  # e.g. a refused rule of --rules: the default measured is not the one meant
                print(f"\ndefaults_check: {state['plan'][k]}: {out.stderr.strip()[-300:]}", file=sys.stderr)
            state["done"][str(k)] = {"load": load, "cells": cells}
            state_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = state_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(state, separators=(",", ":")))
            tmp.replace(state_path)
            write(a, state, libs, pats, rules_text, final=False)
    except KeyboardInterrupt:
        print("\ndefaults_check: interrupted; continue with --resume", file=sys.stderr)
    benchlib.progress(len(state["done"]), len(state["plan"]), "")
    if not state["done"]:
        sys.exit("defaults_check: no launch finished")
    counts = write(a, state, libs, pats, rules_text, final=True)
    for (lib, n), c in sorted(counts.items()):
        print(f"{lib}, {n} ranks: {c['cells']} cells, {c['LOSS']} LOSS, {c['LOSS?']} LOSS?, {c['MISS']} MISS"
              + (": " + ", ".join(c["list"]) if c["list"] else ""))


if __name__ == "__main__":
    main()
