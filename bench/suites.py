#!/usr/bin/env python3
"""The benchmark suites users run first, natively and under Caracal, side by side.

  bench/suites.py --suite imb --src ~/src/mpi-benchmarks --mpi openmpi -n 2
  bench/suites.py --suite osu --src ~/src/osu-micro-benchmarks-7.4 --mpi mpich -n 4 --rounds 5
  bench/suites.py --suite imb --bin /opt/imb/IMB-MPI1 --mpi openmpi -n 4 --check

IMB-MPI1 (Intel MPI Benchmarks: calls back to back, the root moving to the next rank on
every call; `-off_cache` with --off-cache) and the OSU micro-benchmarks (a barrier between
calls). --src builds the suite for the chosen library into ~/.cache/caracal/suites/ (IMB:
its Makefile with the library's wrappers and the C++ bindings skipped; OSU: configure and
make); --bin takes a build you have (IMB: the IMB-MPI1 binary; OSU: the directory holding
osu_bcast & co., searched recursively). Neither suite is packaged in Debian or kept here.

Rounds alternate native and Caracal launches in a random order per round (the VM has
per-launch speed modes); each row reports the median over rounds of each side, the
spread (min-max), and the ratio Caracal / native of the medians, with the load average
before and after. Output: a Markdown table and compact JSON (--out PREFIX.md/.json).

--check runs the suites' own validation instead of timing: IMB built with -DCHECK (its
`defects` column must be 0) and OSU with `-c` (every row `Pass`; reductions on MPI_INT),
once natively and once per Caracal algorithm of each family forced by rule
(CARACAL_COLL=force and CARACAL_<FAMILY>=alg) on that family's benchmark only, with
CARACAL_LOG=algo: the report counts rank 0's calls that ran the forced algorithm and those
that went elsewhere, and lists every row that is not clean and every failed launch.
--algorithms picks runs (`native,alltoallv=shm`); --iter bounds the repetitions per size.
"""
import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from caracal import launch, oversub, paths  # noqa: E402
from caracal.commands import info as info_cmd  # noqa: E402

WRAPPERS = {"openmpi": ("mpicc.openmpi", "mpicxx.openmpi"), "mpich": ("mpicc.mpich", "mpicxx.mpich")}
# IMB-MPI1 has no Scan or Exscan (an unknown name makes it run every benchmark it has), OSU
# 7.4 neither: scan and exscan are validated by tests/c/test_a2afam.c only
IMB_BENCH = ["Barrier", "Bcast", "Reduce", "Allreduce", "Allgather", "Allgatherv", "Gather", "Gatherv", "Scatter",
             "Scatterv", "Alltoall", "Alltoallv", "Reduce_scatter", "Reduce_scatter_block"]
OSU_BENCH = ["osu_barrier", "osu_bcast", "osu_reduce", "osu_allreduce", "osu_allgather", "osu_allgatherv",
             "osu_gather", "osu_gatherv", "osu_scatter", "osu_scatterv", "osu_alltoall", "osu_alltoallv",
             "osu_reduce_scatter", "osu_reduce_scatter_block"]
OSU_REDUCTIONS = {"osu_reduce", "osu_allreduce", "osu_reduce_scatter", "osu_reduce_scatter_block"}


def die(msg):
    print(f"suites.py: {msg}", file=sys.stderr)
    sys.exit(2)


def build(suite, src, mpi, check):
    cc, cxx = WRAPPERS[mpi]
    dest = Path.home() / ".cache" / "caracal" / "suites" / f"{suite}-{mpi}{'-check' if check else ''}"
    if suite == "imb":
        exe = dest / "IMB-MPI1"
        if exe.exists():
            return exe
        if not (Path(src) / "src_cpp").is_dir():
            die(f"--src {src} is not an IMB source tree (no src_cpp/)")
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".git"))
        flags = "-DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX" + (" -DCHECK" if check else "")
        cmd = ["make", "IMB-MPI1", f"CC={cc}", f"CXX={cxx}", f"CPPFLAGS={flags}", f"-j{os.cpu_count() or 2}"]
    else:
        exe = dest
        if list(dest.rglob("osu_bcast")):
            return dest
        if not (Path(src) / "configure").exists():
            die(f"--src {src} is not an OSU source tree (no configure)")
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".git"))
        cmd = ["sh", "-c", f"./configure CC={cc} CXX={cxx} >configure.log 2>&1 && make -j{os.cpu_count() or 2}"]
    print(f"# building {suite} for {mpi} in {dest}", file=sys.stderr)
    p = subprocess.run(cmd, cwd=dest, capture_output=True, text=True)
    if p.returncode != 0:
        tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
        die(f"building {suite} failed: {' | '.join(tail)}")
    return exe


def osu_binary(base, name):
    hits = [p for p in Path(base).rglob(name) if p.is_file() and os.access(p, os.X_OK)]
    return hits[0] if hits else None


def parse_imb(text):
    """{(benchmark, bytes): (t_avg_us, defects or None)} from IMB-MPI1's tables, by the
    columns their header names (t_avg[usec] or t[usec]; defects in the -check build)."""
    out, bench, cols = {}, None, None
    for line in text.splitlines():
        m = re.match(r"# Benchmarking (\S+)", line)
        if m:
            bench, cols = m.group(1), None
            continue
        f = line.split()
        if bench and f and f[0] in ("#bytes", "#repetitions"):
            cols = f
            continue
        # other lines that start with a number (the -check build's notes) are not rows
        if not (bench and cols and len(f) == len(cols) and f[0].isdigit()):
            continue
        try:
            row = dict(zip(cols, f))
            t = float(row.get("t_avg[usec]", row.get("t[usec]")))
            out[(bench, int(row.get("#bytes", 0)))] = (t, float(row["defects"]) if "defects" in row else None)
        except (TypeError, ValueError):
            continue
    return out


def parse_osu(name, text):
    out = {}
    for line in text.splitlines():
        f = line.split()
        if not f or line.startswith("#"):
            continue
        try:
            if name == "osu_barrier":
                out[(name, 0)] = (float(f[0]), f[1] if len(f) > 1 else None)
            else:
                out[(name, int(f[0]))] = (float(f[1]), f[2] if len(f) > 2 else None)
        except (ValueError, IndexError):
            continue
    return out


def run_once(args, exe, env, check=False, benchmarks=None):
    """One pass over the selected benchmarks; {(bench, bytes): (time_us, check)}, and the
    ranks' stderr (CARACAL_LOG=algo lines)."""
    res, err = {}, []
    benchmarks = benchmarks or args.benchmarks
    if args.suite == "imb":
        argv = [str(exe), *benchmarks, "-npmin", str(args.np), "-msglog", f"0:{args.maxlog}"]
        if args.off_cache:
            argv += ["-off_cache", "-1"]
        if args.iter:
            argv += ["-iter", str(args.iter)]
        elif args.mpi == "mpich" and args.np > (os.cpu_count() or 1):
            argv += ["-iter", "50"]  # MPICH busy-polls when oversubscribed: 8-16 ms per call
        cmd = launch.mpiexec_command(args.mpi, args.np, argv, env=env)
        p = subprocess.run(cmd, env=launch.launcher_env(), capture_output=True, text=True, timeout=args.timeout)
        if p.returncode != 0:
            raise RuntimeError(f"IMB-MPI1 failed ({p.returncode}): {(p.stderr.strip().splitlines() or [''])[-1]}")
        res.update(parse_imb(p.stdout))
        return res, p.stderr
    for name in benchmarks:
        b = osu_binary(exe, name)
        if not b:
            continue
        # osu_barrier takes neither a size range nor -c (it has nothing to validate)
        argv = [str(b)] + ([] if name == "osu_barrier" else ["-m", f"1:{1 << args.maxlog}"] + (["-c"] if check else []))
        if check and name in OSU_REDUCTIONS:
            # OSU reduces MPI_CHAR by default, for which MPI defines no MPI_SUM: from 16 B at 4
            # ranks its -c check fails with Open MPI alone. Integers are what it can check.
            argv += ["-T", "mpi_int"]
        if args.iter:
            argv += ["-i", str(args.iter), "-x", str(max(1, args.iter // 10))]
        elif args.mpi == "mpich" and args.np > (os.cpu_count() or 1):
            argv += ["-i", "50", "-x", "5"]
        cmd = launch.mpiexec_command(args.mpi, args.np, argv, env=env)
        p = subprocess.run(cmd, env=launch.launcher_env(), capture_output=True, text=True, timeout=args.timeout)
        if p.returncode != 0:
            raise RuntimeError(f"{name} failed ({p.returncode}): {(p.stderr.strip().splitlines() or [''])[-1]}")
        res.update(parse_osu(name, p.stdout))
        err.append(p.stderr)
    return res, "".join(err)


def timing(args, exe):
    lib = str(paths.library(args.mpi))
    extra = dict(kv.split("=", 1) for kv in args.env)
    sides = {"native": {}, "caracal": {"LD_PRELOAD": lib, **extra}}
    samples = {"native": {}, "caracal": {}}
    load = [os.getloadavg()[0]]
    for r in range(args.rounds):
        order = list(sides)
        random.shuffle(order)
        for side in order:
            t0 = time.monotonic()
            for key, (t, _) in run_once(args, exe, sides[side])[0].items():
                samples[side].setdefault(key, []).append(t)
            print(f"# round {r + 1}/{args.rounds} {side}: {time.monotonic() - t0:.1f} s", file=sys.stderr)
    load.append(os.getloadavg()[0])
    rows = []
    for key in sorted(set(samples["native"]) & set(samples["caracal"])):
        n, c = samples["native"][key], samples["caracal"][key]
        mn, mc = statistics.median(n), statistics.median(c)
        rows.append({"bench": key[0], "bytes": key[1], "native_us": round(mn, 3), "native_min": min(n),
                     "native_max": max(n), "caracal_us": round(mc, 3), "caracal_min": min(c), "caracal_max": max(c),
                     "ratio": round(mc / mn, 3) if mn > 0 else None})
    return rows, load


def family_benchmarks(args, family):
    """The selected benchmarks that call `family` (IMB Reduce_scatter, OSU osu_reduce_scatter)."""
    return [b for b in args.benchmarks if b.lower().replace("osu_", "") == family]


def algo_counts(stderr, family):
    """{algorithm: calls} of `family` in the ranks' CARACAL_LOG=algo lines."""
    out = {}
    for m in re.finditer(rf"^caracal\[\d+\]: {family} (\S+)", stderr, re.M):
        alg = m.group(1).split(":")[0]
        out[alg] = out.get(alg, 0) + 1
    return out


def validation(args, exe):
    """Every row's check column, natively and with each Caracal algorithm forced. A forced
    run calls only its family's benchmarks, with CARACAL_LOG=algo: the report counts the
    calls that ran the forced algorithm and those that went elsewhere (a shm rule on a
    communicator of several node groups falls back to the next rule; a zero-byte call
    returns before selection and logs nothing)."""
    doc = info_cmd._run_info(args.mpi, "--algorithms")
    lib = str(paths.library(args.mpi))
    extra = dict(kv.split("=", 1) for kv in args.env)
    yields = oversub.yield_settings(args.mpi, args.np)
    extra.update(yields)
    # the library alone; where its waits only yield through Caracal's (MPICH oversubscribed:
    # it busy-polls), through Caracal with every collective native, as `caracal run` does
    native = {"LD_PRELOAD": lib, "CARACAL_COLL": "0", **yields} if any(k.startswith("CARACAL_") for k in yields) else {}
    runs = [("native", None, None, native, args.benchmarks)]
    wanted = set(args.algorithms.split(",")) if args.algorithms else None
    for fam in doc["families"]:
        benches = family_benchmarks(args, fam["name"])
        for a in fam["algorithms"]:
            if fam["native_only"] or "comm" not in a["scope"].split("+") or not benches:
                continue
            label = f"{fam['name']}={a['name']}"
            if wanted is not None and label not in wanted:
                continue
            runs.append((label, fam["name"], a["name"],
                         {"LD_PRELOAD": lib, "CARACAL_COLL": "force", fam["setting"]: a["name"],
                          "CARACAL_LOG": "algo", **extra}, benches))
    if wanted is not None and "native" not in wanted:
        runs = runs[1:]
    report = []
    for label, family, alg, env, benches in runs:
        t0 = time.monotonic()
        try:
            res, err = run_once(args, exe, env, check=True, benchmarks=benches)
            failed = None
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            res, err, failed = {}, "", str(e).splitlines()[0][:200]
        bad = [(k, v[1]) for k, v in res.items() if v[1] not in (None, 0.0, "Pass")]
        unchecked = [k for k, v in res.items() if v[1] is None]
        calls = algo_counts(err, family) if family else {}
        forced = calls.get(alg, 0) if alg else None
        report.append({"run": label, "via_caracal": bool(env) and not family,
                       "benchmarks": [b.replace("osu_", "") for b in benches], "rows": len(res),
                       "defects": len(bad), "unchecked": len(unchecked), "failed": failed,
                       "forced_calls": forced, "other_calls": {k: v for k, v in calls.items() if k != alg},
                       "bad": [f"{k[0]} {k[1]} B: {v}" for k, v in bad], "seconds": round(time.monotonic() - t0, 1)})
        print(f"# {label}: {len(res)} rows, {len(bad)} not clean, forced calls {forced}, others "
              f"{report[-1]['other_calls']}{', FAILED ' + failed if failed else ''} "
              f"({time.monotonic() - t0:.0f} s)", file=sys.stderr, flush=True)
    return report


def check_table(args, report):
    """Markdown: one row per run, the benchmarks it ran, clean or not, and what ran."""
    lines = ["| forced algorithm | benchmarks | rows | defects | calls logged with it | calls logged otherwise |",
             "|---|---|---:|---:|---:|---|"]
    for r in report:
        other = ", ".join(f"{k} {v}" for k, v in sorted(r["other_calls"].items())) or "-"
        defects = ("FAILED: " + r["failed"]) if r["failed"] else (
            str(r["defects"]) + (f" ({'; '.join(r['bad'][:3])})" if r["bad"] else ""))
        if not r["failed"] and r["unchecked"]:
            defects += f" ({r['unchecked']} rows without a check column)"
        benches = ", ".join(r["benchmarks"]) if r["run"] != "native" else "all" + (
            " (CARACAL_COLL=0: the library's collectives, Caracal's yielding waits)" if r.get("via_caracal") else "")
        forced = "-" if r["forced_calls"] is None else str(r["forced_calls"])
        lines.append(f"| {r['run']} | {benches} | {r['rows']} | {defects} | {forced} | {other} |")
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", choices=("imb", "osu"), required=True)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--src", help="source tree to build the suite from")
    g.add_argument("--bin", help="an existing build (IMB-MPI1 binary, or OSU build directory)")
    p.add_argument("--mpi", choices=paths.MPIS, default="openmpi")
    p.add_argument("-n", "--np", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--maxlog", type=int, default=20, help="largest message 2^MAXLOG bytes (default 20: 1 MiB)")
    p.add_argument("--benchmarks", help="comma-separated subset (IMB names like Bcast; OSU names like osu_bcast)")
    p.add_argument("--off-cache", action="store_true", help="IMB -off_cache -1 (buffers not in cache)")
    p.add_argument("--check", action="store_true", help="run the suites' validation with every algorithm forced")
    p.add_argument("--env", action="append", default=[], metavar="K=V", help="extra environment for the Caracal side")
    p.add_argument("--iter", type=int, help="iterations per message size (IMB -iter; OSU -i, and -x a tenth)")
    p.add_argument("--algorithms", help="--check: only these runs (e.g. native,alltoallv=shm)")
    p.add_argument("--timeout", type=float, default=1800)
    p.add_argument("--out", help="write OUT.md and OUT.json")
    args = p.parse_args()
    if args.np < 2 or args.rounds < 1 or not 0 <= args.maxlog <= 24:
        die("-n must be at least 2, --rounds at least 1, --maxlog 0..24")
    if any("=" not in kv for kv in args.env):
        die("--env takes K=V")
    args.benchmarks = args.benchmarks.split(",") if args.benchmarks else (IMB_BENCH if args.suite == "imb" else OSU_BENCH)
    if args.src:
        exe = build(args.suite, args.src, args.mpi, args.check)
    else:
        exe = Path(args.bin)
        if not exe.exists():
            die(f"--bin {exe} does not exist")
    head = f"{args.suite.upper()} on {args.mpi}, {args.np} ranks, {os.cpu_count()} cores"
    if args.check:
        load, began = [os.getloadavg()[0]], time.strftime("%Y-%m-%d %H:%M", time.gmtime())
        report = validation(args, exe)
        load.append(os.getloadavg()[0])
        bad = sum(r["defects"] for r in report)
        failed = sum(1 for r in report if r["failed"])
        lines = [f"# {head}: validation with every Caracal algorithm forced", "",
                 f"Environment of the forced runs: {' '.join(args.env) or '-'}; up to 2^{args.maxlog} B"
                 f"{f', {args.iter} iterations' if args.iter else ''}. {began}-{time.strftime('%H:%M', time.gmtime())} "
                 f"UTC, load average {load[0]:.2f} before, {load[1]:.2f} after.", "",
                 "`bench/suites.py " + " ".join(sys.argv[1:]) + "`", ""]
        lines += check_table(args, report)
        doc = {"suite": args.suite, "mpi": args.mpi, "np": args.np, "env": args.env, "maxlog": args.maxlog,
               "iter": args.iter, "load": load, "check": report}
        lines.append(f"\n{bad} rows not clean and {failed} failed launches in {len(report)} runs.")
    else:
        rows, load = timing(args, exe)
        lines = [f"# {head}: Caracal / native", "",
                 f"{args.rounds} rounds, native and Caracal launches alternated in random order; median over "
                 f"rounds (min-max) of each suite's average time per call in us. Load average {load[0]:.2f} before, "
                 f"{load[1]:.2f} after.{' IMB -off_cache.' if args.off_cache else ''}", "",
                 "| benchmark | bytes | native us (min-max) | Caracal us (min-max) | ratio |", "|---|---:|---:|---:|---:|"]
        for r in rows:
            lines.append(f"| {r['bench']} | {r['bytes']} | {r['native_us']:.2f} ({r['native_min']:.2f}-"
                         f"{r['native_max']:.2f}) | {r['caracal_us']:.2f} ({r['caracal_min']:.2f}-{r['caracal_max']:.2f})"
                         f" | {r['ratio'] if r['ratio'] is not None else '-'} |")
        doc = {"suite": args.suite, "mpi": args.mpi, "np": args.np, "rounds": args.rounds, "load": load,
               "off_cache": args.off_cache, "rows": rows}
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out + ".md").write_text(text)
        Path(args.out + ".json").write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
