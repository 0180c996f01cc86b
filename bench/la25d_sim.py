#!/usr/bin/env python3
"""2D against 2.5D matrix multiplication and LU on a simulated torus (issue 18, item 4: time at
scale by simulation, checked against the model).

  bench/la25d_sim.py run [--grids 64:1,64:4,256:1,256:4] [--n 1024]
  bench/la25d_sim.py table      (bench/results/la25d-sim.md from the JSON)

Each (program, p, c) is one `caracal simulate --platform torus --ranks p --ppn 1` run of
examples/mm25d.c or lu25d.c (Caracal's own code and the examples' own code under SMPI; the
torus nodes near a cube, one rank each), saved to bench/results/la25d-sim.json as it ends.
The simulation charges communication only (smpi/simulate-computation:no), so the programs'
`time_s` is their communication time on the simulated torus; the self-check still runs
(exit 0 only when it passes). The model (python/caracal/model/la25d.py) is given the
simulated link's Hockney line (bench/results/rect-model-sim-pingpong.json, sizes from
16 KiB, as bench/coll/rect_model_check.py fits it) and no compute, and compared per cell."""
import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "python"))
from caracal.model import fit, formulas as F, la25d  # noqa: E402

RES = ROOT / "bench" / "results"
OUT = RES / "la25d-sim.json"
LU_B = 32


def one(prog, p, c, n):
    args = ["-n", str(n), "-c", str(c)] + (["-b", str(LU_B)] if prog == "lu25d" else [])
    cmd = [sys.executable, "-m", "caracal", "simulate", "--platform", "torus", "--ranks", str(p), "--ppn", "1",
           "--", str(ROOT / "examples" / f"{prog}.c"), *args]
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))
    lines = r.stdout.strip().splitlines()
    line = next((ln for ln in lines if ln.startswith(prog + " ")), None)
    try:
        summary = json.loads(lines[-1])
    except (IndexError, ValueError):
        summary = None
    if not line or not summary or summary["exit"] != 0:
        sys.exit(f"la25d_sim: {prog} p={p} c={c} failed: {r.stdout[-1500:]} {r.stderr[-800:]}")
    kv = dict(re.findall(r"(\w+)=(\S+)", line))
    return {"prog": prog, "p": p, "c": c, "n": n, "time_s": float(kv["time_s"]), "words": float(kv["words_per_rank"]),
            "check": kv["check"], "wall_s": summary["wall_s"], "peak_rss_mb": round(summary["peak_rss_bytes"] / 2**20),
            "load1": round(summary["load"], 2), "when": time.strftime("%Y-%m-%d %H:%M:%S")}


def load():
    return json.loads(OUT.read_text()) if OUT.exists() else {"schema": "caracal.bench-la25d-sim/1", "runs": []}


def run(a):
    doc = load()
    done = {(r["prog"], r["p"], r["c"], r["n"]) for r in doc["runs"]}
    for g in a.grids.split(","):
        p, c = map(int, g.split(":"))
        for prog in ("mm25d", "lu25d"):
            if (prog, p, c, a.n) in done:
                continue
            r = one(prog, p, c, a.n)
            doc["runs"].append(r)
            OUT.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
            print(f"{prog} p={p} c={c}: {r['time_s'] * 1e3:.2f} ms simulated, wall {r['wall_s']:.0f} s, "
                  f"{r['peak_rss_mb']} MB", flush=True)
    table(a)


def sim_link():
    pts = [(float(m), float(t)) for m, t in json.loads((RES / "rect-model-sim-pingpong.json").read_text())["points"]
           if m >= 16384]
    return fit.hockney_fit(pts)


def table(_a):
    doc = load()
    h = sim_link()
    comb = F.Compute(1e12, 1e12)   # combining is free in the simulation too
    rows = ["| program | p | c | grid | n | simulated comm ms | model comm ms | error | words/rank | "
            "2.5D / 2D time | 2.5D / 2D words | host wall s, peak MB |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    base = {(r["prog"], r["p"], r["n"]): r for r in doc["runs"] if r["c"] == 1}
    cells = []
    for r in sorted(doc["runs"], key=lambda r: (r["prog"], r["p"], r["c"])):
        q = la25d.grid_side(r["p"], r["c"])
        f = la25d.time_mm if r["prog"] == "mm25d" else la25d.time_lu
        kw = {"b": LU_B} if r["prog"] == "lu25d" else {}
        model_ms = f(r["n"], r["p"], r["c"], h, comb, 1e9, **kw)["comm_s"] * 1e3
        err = (model_ms - r["time_s"] * 1e3) / (r["time_s"] * 1e3)
        b = base.get((r["prog"], r["p"], r["n"]))
        ratio_t = f"{r['time_s'] / b['time_s']:.2f}" if b and r["c"] > 1 else "-"
        ratio_w = f"{r['words'] / b['words']:.2f}" if b and r["c"] > 1 else "-"
        rows.append(f"| {r['prog']} | {r['p']} | {r['c']} | {q}x{q}x{r['c']} | {r['n']} | {r['time_s'] * 1e3:.2f} | "
                    f"{model_ms:.2f} | {err:+.0%} | {r['words']:.0f} | {ratio_t} | {ratio_w} | "
                    f"{r['wall_s']:.0f}, {r['peak_rss_mb']} |")
        cells.append({**r, "model_comm_ms": round(model_ms, 4), "rel_err": round(err, 4)})
    # the same model at the source's scale, with the simulated link and the flop rate of
    # bench/la25d.py's assumed BG/P-like node (compute is not simulated)
    gfl = 13.6 * 0.85
    big = ["| p | n | c | MM comm s | MM total s | MM 2.5D/2D total | LU comm s | LU total s | LU 2.5D/2D total | "
           "MM words/rank 2.5D/2D |", "|---|---|---|---|---|---|---|---|---|---|"]
    scale = []
    for p_, n_ in ((256, 1024), (4096, 32768), (16384, 32768), (16384, 65536)):
        ref = None
        for c in (1, 4, 16):
            try:
                la25d.grid_side(p_, c)
            except ValueError:
                continue
            if c ** 3 > p_:
                continue
            mm = la25d.time_mm(n_, p_, c, h, comb, gfl)
            lu = la25d.time_lu(n_, p_, c, h, comb, gfl, b=LU_B)
            w = la25d.words_mm(n_, p_, c)
            ref = ref or (mm, lu, w)
            big.append(f"| {p_} | {n_} | {c} | {mm['comm_s']:.4g} | {mm['total_s']:.4g} | "
                       f"{mm['total_s'] / ref[0]['total_s']:.2f} | {lu['comm_s']:.4g} | {lu['total_s']:.4g} | "
                       f"{lu['total_s'] / ref[1]['total_s']:.2f} | {w / ref[2]:.2f} |")
            scale.append({"p": p_, "n": n_, "c": c, "mm": mm, "lu": lu, "words_mm": w})
    text = ("# 2D vs 2.5D MM and LU on a simulated torus (SimGrid SMPI)\n\n"
            "Generated by `bench/la25d_sim.py` from bench/results/la25d-sim.json. examples/mm25d.c and lu25d.c "
            f"(LU: tournament pivoting, b = {LU_B}) with Caracal under `caracal simulate --platform torus --ppn 1`; "
            "computation is free in the simulation, so times are communication only; every run's self-check passed. "
            f"Model: python/caracal/model/la25d.py with the simulated link's Hockney line (alpha {h.alpha:.2f} us, "
            f"{1 / h.beta / 1e3:.2f} GB/s, from bench/results/rect-model-sim-pingpong.json), no compute. "
            "Analysis: docs/model.md, \"The 2.5D examples\".\n\n" + "\n".join(rows) + "\n\n"
            "## The model at scale\n\nThe same model with the simulated link and a BG/P-like node's flop rate "
            f"({gfl:.1f} GFLOP/s, bench/la25d.py), c = 1, 4, 16 where c^3 <= p: ratios against c = 1 at the same p and n.\n\n"
            + "\n".join(big) + "\n")
    (RES / "la25d-sim.md").write_text(text)
    (RES / "la25d-sim-check.json").write_text(json.dumps({"cells": cells, "model_scale": scale},
                                                         separators=(",", ":")) + "\n")
    print(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["run", "table"])
    ap.add_argument("--grids", default="64:1,64:4,256:1,256:4")
    ap.add_argument("--n", type=int, default=1024)
    a = ap.parse_args()
    if a.mode == "run":
        for g in a.grids.split(","):
            try:
                p, c = map(int, g.split(":"))
                la25d.grid_side(p, c)
            except ValueError:
                print(f"la25d_sim: bad grid {g} (p:c with p/c a square)", file=sys.stderr)
                return 2
        run(a)
    else:
        table(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
