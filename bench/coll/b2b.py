#!/usr/bin/env python3
"""Back-to-back small collectives, Caracal vs native, IMB-style: calls follow each other with
no barrier between them, so a collective whose writer must wait for the readers of its
previous call (instead of running ahead, as an eager send does) shows up here and not in
bench/coll/run.py, which separates calls with barriers to time one call's latency.

Each launch of coll_bench (mode b2b) times Caracal (MPI_*, preloaded) and the native library
(PMPI_*) alternately in one process; the ratio is Caracal time / native time per call (< 1 is
faster). Launches are interleaved over libraries (and, with --baseline-*, over an older
libcaracal, to show what a change did) in a new random order each round; the table gives the
median ratio over rounds and its spread. 2 ranks only: above the core count this machine's
timings are scheduler noise.

With --mode latency the calls are separated by barriers instead (one call's latency, as in
bench/coll/run.py): with a baseline library, an A/B of a change in the same rounds, so that
both sides see the same phase of this VM (whose speed mode changes between runs).

Usage: bench/coll/b2b.py [--rounds 7] [--max-bytes 4096] [--mode b2b|latency]
                         [--baseline-openmpi OLD.so] [--baseline-mpich OLD.so]
Writes bench/results/coll-b2b.md and .json (coll-latency-ab.* with --mode latency).
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import benchlib  # noqa: E402

ROOT = benchlib.ROOT
BUILD = {"openmpi": ("build", "mpicc.openmpi"), "mpich": ("build-mpich", "mpicc.mpich")}


def bench_exe(lib):
    build, cc = BUILD[lib]
    exe = ROOT / build / "coll_bench"
    src = ROOT / "bench/coll/coll_bench.c"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        subprocess.run([cc, "-O2", "-o", str(exe), str(src)], check=True)
    return str(exe)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7, help="interleaved launches per configuration (default 7)")
    ap.add_argument("--max-bytes", type=int, default=4096, help="largest message (default 4096)")
    ap.add_argument("--reps", type=int, default=5, help="timed loops per launch, median taken (default 5)")
    ap.add_argument("--mode", choices=("b2b", "latency"), default="b2b",
                    help="b2b: calls back to back (default); latency: calls separated by barriers")
    ap.add_argument("--baseline-openmpi", metavar="SO", help="an older libcaracal.so built for Open MPI, run alongside")
    ap.add_argument("--baseline-mpich", metavar="SO", help="an older libcaracal.so built for MPICH, run alongside")
    a = ap.parse_args()
    if a.rounds < 1 or a.max_bytes < 8 or a.reps < 1:
        ap.error("--rounds and --reps must be at least 1 and --max-bytes at least 8")
    libs = {}
    for lib in ("openmpi", "mpich"):
        so = ROOT / BUILD[lib][0] / "lib/libcaracal.so"
        if not so.exists():
            ap.error(f"{so} not found; run: make build-{lib}")
        libs[(lib, "current")] = str(so)
        old = getattr(a, f"baseline_{lib}")
        if old:
            if not os.path.exists(old):
                ap.error(f"baseline library {old} not found")
            libs[(lib, "baseline")] = old
    exes = {lib: bench_exe(lib) for lib in ("openmpi", "mpich")}

    def run_one(cfg):
        lib, _ = cfg
        cmd = benchlib.mpiexec(lib, 2, [exes[lib], str(a.reps), str(a.max_bytes), "5" if a.mode == "b2b" else "1", "all", a.mode],
                               env={"LD_PRELOAD": libs[cfg]})
        out = subprocess.run(["timeout", "600"] + cmd, capture_output=True, text=True, env=benchlib.launcher_env())
        if out.returncode:
            print(f"\nb2b: {lib} failed: {out.stderr[-300:]}", file=sys.stderr)
            return []
        return [json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")]

    results = benchlib.interleave(list(libs), a.rounds, run_one)
    rows = []
    for (lib, variant), runs in results.items():
        for rnd, rr in enumerate(runs):
            for r in rr:
                rows.append(dict(r, lib=lib, variant=variant, round=rnd))
    cells = {}
    for r in rows:
        if r["native_us"] > 0:
            cells.setdefault((r["lib"], r["coll"], r["bytes"], r["variant"]), []).append(r)
    order = ["barrier", "bcast", "reduce", "allreduce"]
    keys = sorted({k[:3] for k in cells}, key=lambda k: (k[0] != "openmpi", order.index(k[1]), k[2]))
    variants = [v for v in ("baseline", "current") if any(k[3] == v for k in cells)]
    head = "| library | collective | bytes | native us/call | " + " | ".join(
        f"{v} ratio | {v} spread" for v in variants) + " |"
    lines = [head, "|" + "---|" * (4 + 2 * len(variants))]
    summary = {}
    for k in keys:
        cur = cells.get(k + ("current",), [])
        nat = benchlib.median([r["native_us"] for r in cur]) if cur else float("nan")
        row = f"| {k[0]} | {k[1]} | {k[2]} | {nat:.3f} |"
        for v in variants:
            g = cells.get(k + (v,), [])
            ratios = [r["caracal_us"] / r["native_us"] for r in g]
            if ratios:
                row += f" {benchlib.median(ratios):.2f} | {min(ratios):.2f}-{max(ratios):.2f} |"
                summary.setdefault(v, []).append((k, benchlib.median(ratios)))
            else:
                row += " - | - |"
        lines.append(row)
    notes = []
    for v, vals in summary.items():
        slow = [f"{k[0]} {k[1]} {k[2]} B ({x:.2f})" for k, x in vals if x > 1.05]
        notes.append(f"- {v}: slower than 1.05x native in {len(slow)} of {len(vals)} cells"
                     + (": " + ", ".join(slow) if slow else ""))
    how = ("Calls follow each other with no barrier between them (bench/coll/coll_bench.c, mode b2b):\n"
           "per call, the slowest rank's loop time over the loop length." if a.mode == "b2b" else
           "Calls are separated by native barriers (bench/coll/coll_bench.c, latency mode): per call,\n"
           "the slowest rank's mean over the loop.")
    title = "Back-to-back small collectives (IMB-style)" if a.mode == "b2b" else "One call's latency, A/B"
    md = ("<!-- generated by bench/coll/b2b.py; ratios are Caracal time / native time per call (< 1 is faster) -->\n"
          f"# {title}, 2 ranks\n\n" + how + " Each launch times Caracal and the\n"
          f"native library alternately; {a.rounds} launches per configuration, interleaved in random order;\n"
          "`ratio` is the median over launches of Caracal/native, `spread` the lowest and highest.\n"
          "`native us/call` (median) shows which of this VM's two speed modes a run was in: the one-byte\n"
          "cache-line round trip between the two vCPUs is about 3x slower in one than in the other.\n"
          + ("`baseline` is an older libcaracal run in the same rounds (see the assessment below).\n" if "baseline" in variants else "")
          + "\n" + "\n".join(lines) + "\n\n## Summary\n\n" + "\n".join(notes) + "\n")
    doc = {"schema": "caracal.bench-b2b/1", "mode": a.mode, "machine": benchlib.machine_description(),
           "rounds": a.rounds, "libraries": {f"{k[0]}/{k[1]}": v for k, v in libs.items()}, "rows": rows}
    benchlib.write_results("coll-b2b" if a.mode == "b2b" else "coll-latency-ab", doc, md)


if __name__ == "__main__":
    main()
