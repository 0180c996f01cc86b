#!/usr/bin/env python3
"""Binomial vs rectangular bcast of 1 MiB on simulated tori (issue 18, item 4): a ring of 8,
8x8 and 8x8x8, one rank per node, Caracal's own code under SimGrid SMPI.

  bench/coll/rect_sim.py run [--tori 8,8x8,8x8x8] [--configs native,knomial:2,rect,rect seg16k]
  bench/coll/rect_sim.py table      (bench/results/rect-sim.md and .png from the JSON)

Each (torus, configuration) is one `caracal simulate --platform torus --extents T --ppn 1`
run of build's bench program bench/coll/rect_bench.c (a barrier, then the bcast from rank 0;
the slowest rank's time), saved to bench/results/rect-sim.json as soon as it ends (a split run
resumes). The platform (python/caracal/sim/platform.py): SimGrid's TORUS cluster, one link per
direction (SPLITDUPLEX) of 12.5 GB/s and 1 us per hop, dimension-ordered routes. Simulated
times are deterministic (smpi/simulate-computation:no: only communication takes time), so one
launch of a few calls per cell suffices, and the host's load changes wall time only.
`native` is SMPI's own bcast (its mpich selector: scatter + allgather for 1 MiB)."""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RESULTS = ROOT / "bench" / "results" / "rect-sim.json"
CONFIGS = {
    "native": {"CARACAL_BCAST": "native"},
    "knomial:2": {"CARACAL_BCAST": "knomial:2"},
    "rect": {"CARACAL_BCAST": "rect"},
    "rect seg16k": {"CARACAL_BCAST": "rect", "CARACAL_SEGMENT_SIZE": "16k"},
}
LINK_BPS = 12.5e9          # the platform's link bandwidth per direction (platform.NODE_BW)
NBYTES = 1 << 20


def dims_of(torus):
    return [int(x) for x in torus.split("x")]


def one_run(torus, cfg, iters, warmup):
    P = math.prod(dims_of(torus))
    cmd = [sys.executable, "-m", "caracal", "simulate", "--platform", "torus", "--extents", torus,
           "--ranks", str(P), "--ppn", "1"]
    for k, v in CONFIGS[cfg].items():
        cmd += ["--env", f"{k}={v}"]
    cmd += ["--", str(HERE / "rect_bench.c"), torus, str(NBYTES), str(iters), str(warmup)]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = p.stdout.strip().splitlines()
    try:
        summary = json.loads(lines[-1])
        res = json.loads(next(ln for ln in lines if ln.startswith('{"dims"')))
    except (IndexError, ValueError, StopIteration):
        sys.exit(f"rect_sim: {torus} {cfg}: no result:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    if summary["exit"] != 0 or not res["ok"]:
        sys.exit(f"rect_sim: {torus} {cfg}: exit {summary['exit']}, ok {res['ok']}")
    return {"torus": torus, "ranks": P, "config": cfg, "bytes": NBYTES, "times": res["times"],
            "wall_s": summary["wall_s"], "peak_rss_mb": round(summary["peak_rss_bytes"] / 2**20),
            "load1": round(summary["load"], 2), "when": time.strftime("%Y-%m-%d %H:%M:%S")}


def load():
    return json.loads(RESULTS.read_text()) if RESULTS.exists() else {
        "schema": "caracal.bench-rect-sim/1", "link_bytes_per_s": LINK_BPS, "runs": []}


def run(args):
    doc = load()
    done = {(r["torus"], r["config"]) for r in doc["runs"]}
    for torus in args.tori.split(","):
        for cfg in args.configs.split(","):
            if (torus, cfg) in done:
                continue
            r = one_run(torus, cfg, args.iters, args.warmup)
            doc["runs"].append(r)
            RESULTS.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
            print(f"{torus} {cfg}: {statistics.median(r['times']) * 1e6:.1f} us "
                  f"(wall {r['wall_s']:.0f} s, {r['peak_rss_mb']} MB)", flush=True)
    table(doc)


def cells(doc):
    out = {}
    for r in doc["runs"]:
        out.setdefault(r["torus"], {})[r["config"]] = r
    return out


def table(doc):
    link_us = NBYTES / doc["link_bytes_per_s"] * 1e6
    rows = ["| torus | ranks | d | " + " | ".join(f"{c} us" for c in CONFIGS)
            + " | binomial / rect | binomial / rect seg16k | source: up to 2d | bound m/(2d B) us | host wall s, peak MB |",
            "|---|---|---|" + "---|" * len(CONFIGS) + "---|---|---|---|---|"]
    plot = []
    for torus, cfgs in sorted(cells(doc).items(), key=lambda kv: math.prod(dims_of(kv[0]))):
        d = len(dims_of(torus))
        med = {c: statistics.median(cfgs[c]["times"]) * 1e6 for c in CONFIGS if c in cfgs}
        kn = med.get("knomial:2")
        ratio = lambda c: f"{kn / med[c]:.2f}x" if kn and c in med else "-"  # noqa: E731
        wall = max(r["wall_s"] for r in cfgs.values())
        mem = max(r["peak_rss_mb"] for r in cfgs.values())
        rows.append(f"| {torus} | {math.prod(dims_of(torus))} | {d} | "
                    + " | ".join(f"{med[c]:.1f}" if c in med else "-" for c in CONFIGS)
                    + f" | {ratio('rect')} | {ratio('rect seg16k')} | {2 * d}x | {link_us / (2 * d):.1f} | "
                    f"{wall:.0f}, {mem} |")
        plot.append((torus, med))
    text = ("# Binomial vs rectangular bcast on simulated tori (SimGrid SMPI)\n\n"
            "Generated by `bench/coll/rect_sim.py` from bench/results/rect-sim.json. 1 MiB from rank 0, one rank per "
            "node of a SimGrid TORUS (12.5 GB/s and 1 us per link and direction, dimension-ordered routes), "
            "Caracal's own code (`caracal simulate`); simulated time of the slowest rank per call (deterministic: "
            "every call of a launch takes the same time). `native` is SMPI's mpich-selector bcast. "
            f"One link moves 1 MiB in {link_us:.1f} us. Analysis: docs/collectives.md, \"Rectangular collectives on "
            "tori\".\n\n" + "\n".join(rows) + "\n")
    (ROOT / "bench" / "results" / "rect-sim.md").write_text(text)
    print(text)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(6, 3.6))
    xs = range(len(plot))
    for i, c in enumerate(CONFIGS):
        ax.bar([x + (i - 1.5) * 0.2 for x in xs], [m.get(c, 0) for _, m in plot], 0.2, label=c)
    ax.plot([x for x in xs], [link_us / (2 * len(dims_of(t))) for t, _ in plot], "k_", markersize=30,
            label="m / (2d B)")
    ax.set_xticks(list(xs), [t for t, _ in plot])
    ax.set_ylabel("simulated us per 1 MiB bcast")
    ax.set_xlabel("torus (one rank per node)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(ROOT / "bench" / "results" / "rect-sim.png", dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["run", "table"])
    ap.add_argument("--tori", default="8,8x8,8x8x8")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    a = ap.parse_args()
    if a.mode == "table":
        table(load())
        return 0
    bad = [c for c in a.configs.split(",") if c not in CONFIGS]
    try:
        [dims_of(t) for t in a.tori.split(",")]
    except ValueError:
        bad.append(a.tori)
    if bad:
        print(f"rect_sim: unknown {', '.join(bad)}", file=sys.stderr)
        return 2
    run(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
