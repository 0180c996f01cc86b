#!/usr/bin/env python3
"""Waiting strategies when ranks outnumber or share their cores (core/wait.h).

For each library, rank count and strategy, one launch of coll_bench times Caracal's forced
shm collectives (MPI_*) and the native library (PMPI_*) alternately in one process, calls
back to back (IMB style) or separated by barriers (--mode latency). Strategies: `futex`
(the default: spin, then sleep on the awaited flag; yield first where ranks outnumber
cores), `nap` (the earlier spin/yield/nap), `spin` (never give up the core; only where
every rank has a core), `default` (the default selection, no forced rules), `nopoke`
(futex without native progress pokes, CARACAL_WAIT_POKE_US=0: what the pokes cost) and
`yield` (futex, and native blocking waits and collectives through Caracal's yielding wait
loop: CARACAL_NATIVE_WAIT=yield CARACAL_NATIVE_BLOCKING=nonblocking). With --busy, every
launch runs while one busy loop per core keeps the machine loaded (the "second job" case),
so Caracal and native see the same load. Launches are interleaved in a new random order each
round; the table gives the median over rounds of Caracal/native per call and its spread.
Where ranks outnumber cores, MPICH's native barrier, allreduce and 4 KiB reduce loops run 2
calls and Caracal's 200, its bcast and short reduce 200 on both sides, and each side's loop starts after its own
library's barrier (iteration_scales says why); --add merges a split run (one library or rank
count per lock hold) into the existing table. Spreads are the quartiles (p25-p75) over
launches; with futex and spin both run at a rank count, a section compares them directly.

Patterns (--pattern): `coll` (barrier, bcast, reduce, allreduce, coll_bench.c), `halo` (a
ring halo exchange of native point-to-point then an 8-byte allreduce per iteration,
wait_mix.c) and `rotate` (IMB's Bcast: the root moves to the next rank on every call).

Usage: bench/coll/wait.py [--ranks 2,4,8,16] [--rounds 5] [--max-bytes 4096] [--busy]
                          [--mode b2b|latency] [--libs openmpi,mpich] [--pattern coll|halo|rotate]
                          [--strategies futex,nap,spin,default,nopoke,yield] [--rules FILE]
                          [--colls barrier,bcast,reduce,allreduce] [--add] [--out NAME]
--rules FILE adds the strategy `rules`: no forced rules, the ranks read FILE first
(CARACAL_RULES), so a changed default is measured against native and the built-in default
before it is built (bench/coll/candidates/ holds the ones measured for select.c).
Writes bench/results/coll-wait[-PATTERN][-busy][-latency].md and .json (or --out NAME).
The full table (item 4 of issue 16) is every pattern at --ranks 2,4,8,16 on a quiet machine,
and each pattern at --ranks 2 --busy.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import benchlib  # noqa: E402

ROOT = benchlib.ROOT
BUILD = {"openmpi": ("build", "mpicc.openmpi"), "mpich": ("build-mpich", "mpicc.mpich")}
FORCED = {"CARACAL_BARRIER": "shm", "CARACAL_BCAST": "shm", "CARACAL_REDUCE": "shm", "CARACAL_ALLREDUCE": "shm"}
STRATEGIES = {  # environment of each strategy besides FORCED (default: none at all)
    "futex": {"CARACAL_WAIT": "futex"}, "nap": {"CARACAL_WAIT": "nap"}, "spin": {"CARACAL_WAIT": "spin"},
    "default": None, "nopoke": {"CARACAL_WAIT": "futex", "CARACAL_WAIT_POKE_US": "0"},
    "yield": {"CARACAL_WAIT": "futex", "CARACAL_NATIVE_WAIT": "yield", "CARACAL_NATIVE_BLOCKING": "nonblocking"}}
ORDER = ["barrier", "bcast", "reduce", "allreduce", "halo+allreduce", "bcast-rotate"]


def bench_exe(lib, name="coll_bench"):
    build, cc = BUILD[lib]
    exe = ROOT / build / name
    src = ROOT / f"bench/coll/{name}.c"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        subprocess.run([cc, "-O2", "-o", str(exe), str(src)], check=True)
    return str(exe)


def iteration_scales(lib, n, cores):
    """[(collectives, native scale, Caracal scale, keep)]: calls per timed loop (x coll_bench's
    200 up to 4 KiB), native and Caracal apart, one coll_bench launch per entry, whose rows
    are kept where keep(collective, bytes).
    Where ranks outnumber cores the native call is slow (MPICH busy-polls: milliseconds per
    call; Open MPI yields: tens to hundreds of us), so few native calls keep a launch short.
    Caracal's loop gets its own, longer count (Open MPI: the same 200 calls on both sides; its
    earlier 0.2 gave 40, which an eager native bcast buffers whole), and starts after Caracal's own barrier
    (coll_bench's `own`): with 2 Caracal calls after a native barrier (the earlier 0.01 scale
    for MPICH) the loop measured how late the last rank left that busy-polling barrier - up to a
    scheduler timeslice, milliseconds - not the collective. Per-call time is still the loop's
    time / its calls on the slowest rank, the two sides interleaved, alternating which goes
    first.
    Few native calls are fair only where every native call synchronises every rank (barrier,
    allreduce, and MPICH's reduce from 2 KiB, MPIR_CVAR_REDUCE_SHORT_MSG_SIZE, which is
    reduce-scatter + gather): then a call costs about the same in a loop of 2, 20 or 200
    (allreduce, 4 ranks, one trial at load 15: 6-68, 22-82, 18-80 ms). MPICH's bcast and its
    short reduce are eager: the senders run ahead, so 2 calls charge the late exit from the
    barrier to each call (reduce 8-512 B: 8-13 ms per call with 2 calls, 0.6-1.7 with 20,
    0.3-0.9 with 200), and the earlier table compared 2 native bcasts (4-47 us in all, the
    root never waits) with 200 Caracal calls. Those run 200 calls on both sides, in a second
    coll_bench launch of the same slot."""
    if n <= cores or lib == "openmpi":  # Open MPI's calls are not slow enough to need fewer
        return [("all", "1", "1", lambda coll, b: True)]
    return [("barrier,reduce,allreduce", "0.01", "1", lambda coll, b: coll != "reduce" or b > 2048),
            ("bcast,reduce", "1", "1", lambda coll, b: coll == "bcast" or b <= 2048)]


def mix_scales(lib, n, cores, pattern):
    """(native scale, Caracal scale) of wait_mix's calls (x 200 up to 4 KiB); Caracal's loop starts
    after Caracal's own barrier (`own`), as coll_bench's does (iteration_scales says why).
    Where ranks outnumber cores: the rotating bcast 200 calls on Open MPI (its eager bcast buffers
    40 whole); on MPICH 20 native calls (a rotating root makes each call wait for the previous
    root: 4-20 ms per native call at 4-8 ranks, so 200 took a minute a launch) and 200 of
    Caracal's: the rotating root chains the calls, so neither side runs ahead of the other and a
    loop of 20 native calls is ~100 ms against a timeslice of lateness. Until session 15 both
    sides ran 20 after a native barrier and Caracal's 20 fast calls carried that lateness. The
    halo synchronises every iteration on both sides (native point-to-point): Open MPI 40, MPICH
    10 on both sides (each MPICH iteration takes 15-150 ms there; the earlier 2 were one
    timeslice of barrier lateness away from the measured time)."""
    if n <= cores:
        return "1", "1"
    return {("openmpi", "rotate"): ("1", "1"), ("mpich", "rotate"): ("0.1", "1"),
            ("openmpi", "halo"): ("0.2", "0.2"), ("mpich", "halo"): ("0.05", "0.05")}[lib, pattern]


def quartiles(xs):
    """(p25, p75) of xs, linearly interpolated (one value: that value twice)."""
    ys = sorted(xs)
    if len(ys) < 2:
        return ys[0], ys[0]
    q = statistics.quantiles(ys, n=4, method="inclusive")
    return q[0], q[2]


def uptime():
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", default="2,4,8", help="comma-separated rank counts (default 2,4,8)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved launches per configuration (default 5)")
    ap.add_argument("--max-bytes", type=int, default=4096, help="largest message (default 4096)")
    ap.add_argument("--mode", choices=("b2b", "latency"), default="b2b")
    ap.add_argument("--busy", action="store_true", help="keep every core busy with a loop during each launch")
    ap.add_argument("--libs", default="openmpi,mpich")
    ap.add_argument("--pattern", choices=("coll", "halo", "rotate"), default="coll")
    ap.add_argument("--strategies", default="futex,nap,spin,default",
                    help="comma-separated, from " + ",".join(STRATEGIES) + " (default futex,nap,spin,default)")
    ap.add_argument("--rules", metavar="FILE",
                    help="strategy `rules`: no forced rules, the ranks read FILE first (CARACAL_RULES): a changed "
                         "default measured before it is built")
    ap.add_argument("--colls", default="all", help="coll pattern only: the collectives to run (default all four)")
    ap.add_argument("--add", action="store_true",
                    help="add to the existing result (a split run): library and rank counts not run now keep their rows")
    ap.add_argument("--out", help="result name in bench/results/ (default coll-wait[-PATTERN][-busy][-latency])")
    a = ap.parse_args()
    try:
        ranks = [int(x) for x in a.ranks.split(",")]
    except ValueError:
        ap.error("--ranks takes integers, e.g. 2,4,8")
    libs = a.libs.split(",")
    strategies = a.strategies.split(",")
    if any(l not in BUILD for l in libs) or any(n < 2 for n in ranks) or a.rounds < 1:
        ap.error("--libs from openmpi,mpich; --ranks at least 2; --rounds at least 1")
    if a.rules:
        if not os.path.isfile(a.rules):
            ap.error(f"--rules: no file {a.rules}")
        STRATEGIES["rules"] = {"CARACAL_RULES": os.path.abspath(a.rules)}
        strategies += [] if "rules" in strategies else ["rules"]
    if any(s not in STRATEGIES for s in strategies):
        ap.error("--strategies from " + ",".join(STRATEGIES) + " (rules: with --rules FILE)")
    colls = None if a.colls == "all" else set(a.colls.split(","))
    if colls and (a.pattern != "coll" or not colls <= {"barrier", "bcast", "reduce", "allreduce"}):
        ap.error("--colls: some of barrier,bcast,reduce,allreduce, with --pattern coll")
    cores = os.cpu_count() or 1
    exes = {lib: bench_exe(lib, "coll_bench" if a.pattern == "coll" else "wait_mix") for lib in libs}
    configs = []
    for lib in libs:
        for n in ranks:
            for strat in strategies:
                if strat == "spin" and n > cores:
                    continue  # a spinning waiter takes the core its writer needs
                configs.append((lib, n, strat))

    def run_one(cfg):
        lib, n, strat = cfg
        env = {"LD_PRELOAD": str(ROOT / BUILD[lib][0] / "lib/libcaracal.so")}
        if strat == "rules":
            env.update(STRATEGIES[strat])
        elif STRATEGIES[strat] is not None:
            env.update(FORCED, **STRATEGIES[strat])
        if a.pattern == "coll":
            argvs = []
            for cs, scale, cscale, keep in iteration_scales(lib, n, cores):
                run = cs.split(",") if cs != "all" else ["barrier", "bcast", "reduce", "allreduce"]
                run = [c for c in run if colls is None or c in colls]
                if run:
                    argvs.append(([exes[lib], "3", str(a.max_bytes), scale, ",".join(run), a.mode, cscale, "own"], keep))
        else:
            scale, cscale = mix_scales(lib, n, cores, a.pattern)
            argvs = [([exes[lib], a.pattern, "3", str(a.max_bytes), scale, cscale, "own"], lambda coll, b: True)]
        got = []
        for argv, keep in argvs:
            cmd = benchlib.mpiexec(lib, n, argv, env=env)
            out = benchlib.run_launch(cmd, 600, busy=a.busy)
            if out.returncode:
                print(f"\nwait: {cfg} failed: {out.stderr[-300:]}", file=sys.stderr)
                continue
            got += [r for r in (json.loads(l) for l in out.stdout.splitlines() if l.startswith("{"))
                    if keep(r["coll"], r["bytes"])]
        return got

    name = a.out or ("coll-wait" + ("" if a.pattern == "coll" else "-" + a.pattern)
                     + ("-busy" if a.busy else "") + ("" if a.mode == "b2b" else "-latency"))
    part = {"libs": libs, "ranks": ranks, "strategies": strategies, "rounds": a.rounds,
            "date": benchlib.machine_description()["date"], "load_at_start": os.getloadavg(), "uptime_at_start": uptime(),
            "method": "own call counts per side (MPICH where ranks outnumber cores: barrier, allreduce and "
                      "reduce above 2 KiB native 2 calls, Caracal 200; bcast and reduce up to 2 KiB 200 on both), "
                      "Caracal's loop after its own barrier"
                      if a.pattern == "coll" else
                      "wait_mix, own call counts per side where ranks outnumber cores (mix_scales: MPICH rotate "
                      "native 20 calls, Caracal 200; halo MPICH 10 iterations each, Open MPI 40), Caracal's loop "
                      "after its own barrier",
            "rules": Path(a.rules).read_text() if a.rules else None}
    results = benchlib.interleave(configs, a.rounds, run_one)
    part["load_at_end"] = os.getloadavg()
    part["uptime_at_end"] = uptime()
    rows, parts = [], [part]
    for cfg, runs in results.items():
        for rnd, rr in enumerate(runs):
            for r in rr:
                rows.append(dict(r, lib=cfg[0], ranks=cfg[1], strategy=cfg[2], round=rnd))
    if a.add:  # a split run: keep the earlier parts' rows of every configuration not run now
        old = benchlib.ROOT / "bench" / "results" / f"{name}.json"
        if old.exists():
            prev = json.loads(old.read_text())
            ran = {(l, n) for l, n, _ in configs}  # a library and rank count run now replaces every earlier row of it
            rows += [r for r in prev["rows"] if (r["lib"], r["ranks"]) not in ran]
            if "parts" not in prev:  # written before split runs and separate iteration counts
                kept = [r for r in prev["rows"]]
                prev["parts"] = [{"libs": sorted({r["lib"] for r in kept}), "ranks": sorted({r["ranks"] for r in kept}),
                                  "strategies": sorted({r["strategy"] for r in kept}), "rounds": prev.get("rounds"),
                                  "date": prev["machine"]["date"], "load_at_start": prev["machine"]["load_average_at_start"],
                                  "load_at_end": [float("nan")], "method": "earlier method: one call count for both "
                                  "sides, a native barrier before each loop"}]
            parts = prev["parts"] + parts
    # a part is listed while some library and rank count of it is not re-run by a later part
    covered, kept = set(), []
    for p in reversed(parts):
        pairs = {(l, n) for l in p["libs"] for n in p["ranks"]}
        if pairs - covered:
            kept.append(p)
        covered |= pairs
    parts = kept[::-1]
    libs = [l for l in BUILD if any(r["lib"] == l for r in rows)]
    strategies = [s for s in STRATEGIES if any(r["strategy"] == s for r in rows)]
    cells = {}
    for row in rows:
        if row["native_us"] > 0:
            cells.setdefault((row["lib"], row["ranks"], row["coll"], row["bytes"], row["strategy"]), []).append(row)
    keys = sorted({k[:4] for k in cells}, key=lambda k: (libs.index(k[0]), k[1], ORDER.index(k[2]), k[3]))
    lines = ["| library | ranks | collective | bytes | calls native/Caracal | native us/call (spread) | "
             + " | ".join(f"{s} us/call, ratio (spread)" for s in strategies) + " |",
             "|" + "---|" * (6 + len(strategies))]
    summary, goal = {}, {}
    for k in keys:
        every = [r for s in strategies for r in cells.get(k + (s,), [])]
        nat = [r["native_us"] for r in every]
        calls = f"{every[0]['iters']}/{every[0].get('caracal_iters', every[0]['iters'])}"
        nlo, nhi = quartiles(nat)
        row = f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {calls} | {benchlib.median(nat):.2f} ({nlo:.2f}-{nhi:.2f}) |"
        for s in strategies:
            g = cells.get(k + (s,), [])
            ratios = [r["caracal_us"] / r["native_us"] for r in g]
            if ratios:
                m = benchlib.median(ratios)
                lo, hi = quartiles(ratios)
                row += f" {benchlib.median([r['caracal_us'] for r in g]):.2f}, {m:.2f} ({lo:.2f}-{hi:.2f}) |"
                summary.setdefault((k[0], k[1], s), []).append(m)
                if k[3] <= 4096:
                    goal.setdefault((k[0], k[1], s), []).append((m, f"{k[2]} {k[3]} B {m:.2f}"))
            else:
                row += " - |"
        lines.append(row)
    # issue 16's goal at 4 and 8 ranks: up to 4 KiB, at most 1/2 of Open MPI's time, 1/10 of MPICH's
    target = {"openmpi": 0.5, "mpich": 0.1}
    goals = []
    for (lib, n, s), ms in sorted(goal.items(), key=lambda x: (libs.index(x[0][0]), x[0][1], strategies.index(x[0][2]))):
        miss = [t for m, t in ms if m > target[lib]]
        goals.append(f"- {lib}, {n} ranks, {s}: {len(ms) - len(miss)} of {len(ms)} cells at most {target[lib]}x native"
                     + (f"; not: {', '.join(miss)}" if miss else ""))
    notes = []
    for (lib, n, s), ms in sorted(summary.items(), key=lambda x: (libs.index(x[0][0]), x[0][1], strategies.index(x[0][2]))):
        notes.append(f"- {lib}, {n} ranks, {s}: median ratio {benchlib.median(ms):.2f}, "
                     f"{sum(m <= 0.5 for m in ms)} of {len(ms)} cells at least 2x faster than native, "
                     f"{sum(m > 1.0 for m in ms)} slower")
    # issue 16's 2-rank goal: the futex path within 3% of the spin path (a quiet machine)
    pair, vs_spin = {}, []
    for k in keys:
        f, sp = cells.get(k + ("futex",)), cells.get(k + ("spin",))
        if not f or not sp:
            continue
        tf, ts = benchlib.median([r["caracal_us"] for r in f]), benchlib.median([r["caracal_us"] for r in sp])
        rf = benchlib.median([r["caracal_us"] / r["native_us"] for r in f])
        rs = benchlib.median([r["caracal_us"] / r["native_us"] for r in sp])
        pair.setdefault(k[:2], []).append((tf / ts, rf / rs))
        vs_spin.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {ts:.3f} | {tf:.3f} | {tf / ts:.3f} | {rf / rs:.3f} |")
    if vs_spin:
        geo = lambda xs: statistics.geometric_mean(xs)  # noqa: E731
        vs_spin = (["| library | ranks | collective | bytes | spin us/call | futex us/call | futex/spin (times) "
                    "| futex/spin (ratios to native) |", "|---|---|---|---|---|---|---|---|"] + vs_spin + [""]
                   + [f"- {l}, {n} ranks: geometric mean over {len(v)} cells futex/spin {geo([t for t, _ in v]):.3f} "
                      f"by times, {geo([r for _, r in v]):.3f} by ratios to native; cells above 1.03: "
                      f"{sum(t > 1.03 for t, _ in v)} by times, {sum(r > 1.03 for _, r in v)} by ratios"
                      for (l, n), v in pair.items()])
    md = ("<!-- generated by bench/coll/wait.py; ratios are Caracal time / native time per call (< 1 is faster) -->\n"
          f"# Waiting strategies, {dict(coll='collectives', halo='halo exchange + allreduce', rotate='bcast with a rotating root')[a.pattern]}, "
          f"{'calls back to back' if a.mode == 'b2b' or a.pattern != 'coll' else 'one call latency'}"
          f"{', every core kept busy by another job' if a.busy else ''}\n\n"
          f"{cores} cores. Forced shm "
          "collectives (CARACAL_<COLL>=shm) with CARACAL_WAIT set to each strategy, and the default selection.\n"
          "`native us/call` is the median over every launch of the configuration's row; each strategy's cell "
          "gives Caracal's median us/call and the median (p25-p75) over launches of Caracal/native.\n"
          "Per call = a timed loop's time / its calls on the slowest rank, Caracal and native alternately in "
          "one launch, alternating which goes first. Where ranks outnumber cores the two sides run their own "
          "number of calls (`calls native/Caracal`): the native call takes milliseconds there (MPICH "
          "busy-polls), and Caracal's loop starts after Caracal's own barrier, since a few Caracal calls "
          "right after a busy-polling native barrier measured how late the last rank left it. Few native "
          "calls are fair only for calls that synchronise every rank; MPICH's eager bcast and reduce up to "
          "2 KiB (the senders run ahead) run the same count on both sides "
          "(bench/coll/wait.py, iteration_scales).\n\n"
          + "".join(f"- run {i + 1}: {', '.join(p['libs'])} at {','.join(map(str, p['ranks']))} ranks, "
                    f"{','.join(p['strategies'])}, {p['rounds']} launches per configuration interleaved in random "
                    f"order, {p['date']}, load average {p['load_at_start'][0]:.1f} at the start, "
                    f"{p['load_at_end'][0]:.1f} at the end" + (f" ({p['method']})" if p.get("method") else "")
                    + (f"; uptime at the start: `{p['uptime_at_start']}`, at the end: `{p['uptime_at_end']}`"
                       if p.get("uptime_at_start") else "") + "\n" for i, p in enumerate(parts))
          + "".join(f"\nRun {i + 1}'s strategy `rules` read this rules file first (CARACAL_RULES; a changed default "
                    "measured before it was built):\n\n" + "".join(f"    {ln}\n" for ln in p["rules"].splitlines())
                    for i, p in enumerate(parts) if p.get("rules"))
          + "\n" + "\n".join(lines) + "\n\n## Summary\n\n" + "\n".join(notes)
          + "\n\n## Goal of issue 16 (up to 4 KiB: <= 0.5x Open MPI, <= 0.1x MPICH)\n\n" + "\n".join(goals) + "\n"
          + ("\n## futex against spin (issue 16: within 3% of the spin path where every rank has a core)\n\n"
             "Medians over launches of each side; < 1: futex faster.\n\n" + "\n".join(vs_spin) + "\n" if vs_spin else ""))
    doc = {"schema": "caracal.bench-wait/2", "mode": a.mode, "busy": a.busy, "pattern": a.pattern,
           "machine": benchlib.machine_description(), "parts": parts, "rows": rows}
    benchlib.write_results(name, doc, md)


if __name__ == "__main__":
    main()
