#!/usr/bin/env python3
"""Caracal's collectives vs native Open MPI and native MPICH: barrier, bcast, reduce,
allreduce from 8 B to 4 MiB at 2 ranks and at 4 and 8 ranks (oversubscribed on small
machines). Every run times Caracal (MPI_*, preloaded) and the native library (PMPI_*)
alternately in the same process, medians of repeats (bench/coll/coll_bench.c). Three
Caracal configurations: the default selection, and forced p2p and shm algorithms.
Writes bench/results/coll.json (every row) and bench/results/coll.md (ratio table).

Usage: bench/coll/run.py [--reps N] [--quick] [--ranks 2,4,8] [--configs default,p2p,...]
With --ranks, rows of other rank counts are kept from the previous coll.json (marked
"run": "previous").
"""
import argparse, json, os, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIBS = {"openmpi": ("build", "mpicc.openmpi", "mpiexec.openmpi"), "mpich": ("build-mpich", "mpicc.mpich", "mpiexec.mpich")}
FORCE = {"BCAST": "knomial:2", "REDUCE": "knomial:2", "ALLREDUCE": "recdbl:2@-64k ring:2", "BARRIER": "hier:2"}
CONFIGS = {
    "default": {},
    "p2p": {f"CARACAL_{k}": v for k, v in FORCE.items()},
    "shm": {f"CARACAL_{k}": f"node/shm {v}" for k, v in FORCE.items()},
    # the same without single copy (process_vm_readv): copy-in/copy-out through the segment only
    "shm-copy": dict({f"CARACAL_{k}": f"node/shm {v}" for k, v in FORCE.items()}, CARACAL_SHM_CMA="0"),
    # the same with single copy for every collective (by default only in groups of 3+ and not for reduce)
    "shm-cma": dict({f"CARACAL_{k}": f"node/shm {v}" for k, v in FORCE.items()}, CARACAL_SHM_CMA_BCAST="1",
                    CARACAL_SHM_CMA_REDUCE="1", CARACAL_SHM_CMA_ALLREDUCE="1"),
}
COLUMNS = ("default", "p2p", "shm", "shm-copy", "shm-cma")


def run(lib, np_, env, reps, scale):
    build, cc, mpiexec = LIBS[lib]
    exe = os.path.join(ROOT, build, "coll_bench")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(os.path.join(ROOT, "bench/coll/coll_bench.c")):
        subprocess.run([cc, "-O2", "-o", exe, os.path.join(ROOT, "bench/coll/coll_bench.c")], check=True)
    lib_so = os.path.join(ROOT, build, "lib/libcaracal.so")
    allenv = dict(env, LD_PRELOAD=lib_so)
    if lib == "openmpi":
        cmd = [mpiexec, "--oversubscribe", "--bind-to", "none", "-n", str(np_)]
        for k, v in allenv.items():
            cmd += ["-x", f"{k}={v}"]
    else:
        cmd = [mpiexec, "-n", str(np_)]
        for k, v in allenv.items():
            cmd += ["-genv", k, v]
    cmd += [exe, str(reps), str(4 << 20), str(scale)]
    penv = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    out = subprocess.run(["timeout", "900"] + cmd, capture_output=True, text=True, env=penv)
    if out.returncode:
        print(f"bench: {lib} np={np_} failed: {out.stderr[-500:]}", file=sys.stderr)
        return []
    return [json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--ranks", default="2,4,8")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--repeat", type=int, default=1,
                    help="run the whole plan this many times, interleaved; the table shows medians over repeats")
    a = ap.parse_args()
    ranks = {int(x) for x in a.ranks.split(",")}
    configs = a.configs.split(",")
    plan = [("openmpi", 2, 1.0), ("openmpi", 4, 0.5), ("openmpi", 8, 0.25),
            ("mpich", 2, 1.0), ("mpich", 4, 0.05), ("mpich", 8, 0.02)]
    plan = [p for p in plan if p[1] in ranks]
    res = os.path.join(ROOT, "bench/results")
    rows = []
    try:  # keep what this run does not redo
        with open(os.path.join(res, "coll.json")) as f:
            old = json.load(f)["rows"]
        redo = {(lib, np_, cfg) for lib, np_, _ in plan for cfg in configs}
        rows = [dict(x, run=x.get("run", "previous")) for x in old if (x["lib"], x["ranks"], x["config"]) not in redo]
    except (OSError, ValueError, KeyError):
        pass
    t0 = time.time()
    for rep, (lib, np_, scale) in [(k, p) for k in range(a.repeat) for p in plan]:
        for cfg in configs:
            env = CONFIGS[cfg]
            load0 = os.getloadavg()[0]
            r = run(lib, np_, env, a.reps if np_ == 2 else max(3, a.reps // 2), scale * (0.3 if a.quick else 1))
            for x in r:
                x.update(lib=lib, config=cfg, run="this", repeat=rep, load=[round(load0, 2), round(os.getloadavg()[0], 2)])
            rows += r
            print(f"bench: {lib} np={np_} {cfg}: {len(r)} rows ({time.time() - t0:.0f}s, load {load0:.1f} -> "
                  f"{os.getloadavg()[0]:.1f})", file=sys.stderr)
    os.makedirs(res, exist_ok=True)
    with open(os.path.join(res, "coll.json"), "w") as f:
        json.dump({"schema": "caracal.bench-coll/1", "host": os.uname().nodename, "cpus": os.cpu_count(),
                   "rows": rows}, f, indent=1)
    write_table(rows, os.path.join(res, "coll.md"))


def fmt_bytes(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB" if b >= 1024 else f"{b} B"


def write_table(rows, path):
    # one entry per cell and configuration: medians over repeats (of each ratio, and of native us)
    groups = {}
    for r in rows:
        groups.setdefault((r["lib"], r["ranks"], r["coll"], r["bytes"], r["config"]), []).append(r)
    idx = {}
    for k, g in groups.items():
        ok = [r for r in g if r["native_us"] > 0]
        if not ok:
            continue
        ratios = [r["caracal_us"] / r["native_us"] for r in ok]
        ratio = statistics.median(ratios)
        nat = statistics.median(r["native_us"] for r in ok)
        fast = [r for r in ok if r.get("native_min_us", 0) > 0]
        fastest = min(r["caracal_min_us"] for r in fast) / min(r["native_min_us"] for r in fast) if fast else None
        idx[k] = dict(g[0], native_us=nat, caracal_us=ratio * nat, repeats=len(ok), lo=min(ratios), hi=max(ratios),
                      fastest=fastest)
    keys = sorted({(r["lib"], r["ranks"], r["coll"], r["bytes"]) for r in rows},
                  key=lambda k: (k[0] != "openmpi", k[1], ["barrier", "bcast", "reduce", "allreduce"].index(k[2]), k[3]))
    lines = ["| library | ranks | collective | bytes | native us | default | default spread | default fastest | p2p | shm | shm-copy | shm-cma | native MPICH / native Open MPI |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for lib, np_, coll, b in keys:
        base = idx.get((lib, np_, coll, b, "default"))
        if not base:
            continue
        cells = []
        for cfg in COLUMNS:
            r = idx.get((lib, np_, coll, b, cfg))
            cells.append(f"{r['caracal_us'] / r['native_us']:.2f}" if r and r["native_us"] > 0 else "-")
            if cfg == "default":
                cells.append(f"{r['lo']:.2f}-{r['hi']:.2f}" if r and r["repeats"] > 1 else "-")
                cells.append(f"{r['fastest']:.2f}" if r and r.get("fastest") else "-")
        other = idx.get(("mpich", np_, coll, b, "default")), idx.get(("openmpi", np_, coll, b, "default"))
        cross = f"{other[0]['native_us'] / other[1]['native_us']:.2f}" if all(other) else "-"
        lines.append(f"| {lib} | {np_} | {coll} | {fmt_bytes(b)} | {base['native_us']:.2f} | {' | '.join(cells)} | {cross} |")
    summary = ["", "## Targets (computed from the rows above)", ""]
    for lib in ("openmpi", "mpich"):
        rows2 = [k for k in keys if k[0] == lib and k[1] == 2 and k[2] != "barrier"]
        def ratio(k, cfg):
            r = idx.get(k + (cfg,))
            return r["caracal_us"] / r["native_us"] if r and r["native_us"] > 0 else None
        def best(k):
            v = [x for x in (ratio(k, c) for c in COLUMNS) if x is not None]
            return min(v) if v else None
        def fastest(k):
            r = idx.get(k + ("default",))
            return r.get("fastest") if r else None
        small = [k for k in rows2 if k[3] <= 4096]
        large = [k for k in rows2 if k[3] >= 1 << 20]
        lat_ok = [k for k in small if best(k) is not None and best(k) <= 0.5]
        bw_ok = [k for k in large if best(k) is not None and best(k) <= 1 / 1.3]
        bw_def = [k for k in large if ratio(k, "default") is not None and ratio(k, "default") <= 1 / 1.3]
        bw_fast = [k for k in large if fastest(k) is not None and fastest(k) <= 1 / 1.3]
        alln = [k for k in keys if k[0] == lib]
        slow = [k for k in alln if ratio(k, "default") is not None and ratio(k, "default") > 1.05]
        summary.append(f"- {lib}, 2 ranks: latency <= 0.5x native (best Caracal algorithm) in {len(lat_ok)} of "
                       f"{len(small)} cells up to 4 KiB: {', '.join(f'{c} {fmt_bytes(b)}' for _, _, c, b in lat_ok) or 'none'}")
        summary.append(f"- {lib}, 2 ranks: bandwidth >= 1.3x native from 1 MiB in {len(bw_ok)} of {len(large)} cells: "
                       f"{', '.join(f'{c} {fmt_bytes(b)}' for _, _, c, b in bw_ok) or 'none'}")
        summary.append(f"- {lib}, 2 ranks, default selection: bandwidth >= 1.3x native from 1 MiB in {len(bw_def)} of "
                       f"{len(large)} cells by median ({', '.join(f'{c} {fmt_bytes(b)}' for _, _, c, b in bw_def) or 'none'}), "
                       f"{len(bw_fast)} of {len(large)} by fastest call")
        summary.append(f"- {lib}, all rank counts: default selection slower than 1.05x native in {len(slow)} of "
                       f"{len(alln)} cells: {', '.join(f'{c} {fmt_bytes(b)} @{n}' for _, n, c, b in slow) or 'none'}")
    loads = [l for r in rows if r.get("run") == "this" for l in r.get("load", [])]
    if loads:
        summary.append(f"- load average (1 min) during this run: {min(loads):.1f} to {max(loads):.1f} on {os.cpu_count()} cores")
    if any(r.get("run") == "previous" for r in rows):
        summary.append("- rows of " + ", ".join(sorted({f"{r['lib']} {r['ranks']} ranks {r['config']}" for r in rows if r.get("run") == "previous"}))
                       + " are kept from an earlier run (see coll-assessment.md for which)")
    with open(path, "w") as f:
        f.write("<!-- generated by bench/coll/run.py; ratios are Caracal time / native time (< 1 is faster) -->\n")
        f.write("# Caracal collectives vs native (bench/coll)\n\n")
        f.write("Columns: `native us` = native library, microseconds per call (median of repeats; each call\n"
                "between native barriers, slowest rank; with --repeat, the median over repeated interleaved\n"
                "runs, and each ratio the median of the per-run ratios). `default`, `p2p`, `shm`, `shm-copy`, `shm-cma` = Caracal time /\n"
                "native time with the default selection, forced point-to-point algorithms, forced node-level\n"
                "shared memory (with the default single-copy settings), forced shared memory with\n"
                "copy-in/copy-out only, and forced shared memory with single copy for every collective.\n"
                "`default spread` = lowest and highest per-run ratio over the repeats; `default fastest` =\n"
                "the fastest single Caracal call over the fastest single native call (slowest rank per call,\n"
                "all repeats): the least disturbed calls on a shared machine. Where the default selection is `native` the\n"
                "`default` column times the same native code twice, so its spread is the noise floor of the\n"
                "machine at the time of the run: read every ratio against it.\n\n")
        f.write("\n".join(lines) + "\n" + "\n".join(summary) + "\n")


if __name__ == "__main__":
    main()
