#!/usr/bin/env python3
"""`caracal model` against the emulated tori and the simulated ones (issue 18, item 2's checks).

  sudo python3 bench/coll/rect_model_check.py probe --name torus   (under flock /work/bench.lock)
  python3 bench/coll/rect_model_check.py simprobe   (a pingpong on the simulated torus)
  python3 bench/coll/rect_model_check.py table

`probe`: caracal-probe (pingpong, then stream) between two neighbouring hosts of the emulated
torus (bench/coll/torus_testbed.py; host0 and host1 share one tbf-limited link), over the
torus addresses as the benchmark's MPI traffic goes; the documents are written to
bench/results/rect-model-probe-{pingpong,stream}.json with options.testbed set, so
`caracal model` fits them as the `net` level.

`table`: fits those documents (python/caracal/model/fit.py), predicts the 1 MiB bcast on the
2x2 and 2x2x2 tori with each model (binomial = Caracal's knomial:2, Hockney; the source's
binomial and rectangular multicasts, LogGP) and compares with the medians measured by
bench/coll/rect_bcast.py (bench/results/rect-bcast.json) through
caracal.model.predict.compare; then the same models with the simulated link (fitted to a
pingpong between neighbours of the simulated torus, bench/coll/sim_pingpong.c under
`caracal simulate`: SMPI's size-dependent latency and bandwidth factors make the link's
nominal 12.5 GB/s and 1 us wrong for MPI messages) against the simulated times of
bench/coll/rect_sim.py (bench/results/rect-sim.json). Writes bench/results/rect-model-check.md
and .json.

Rows per observation: `binomial` (Hockney; the source's LogGP binomial is the same number
for P a power of two), `rect` (the source's formula as written: m/Bn, one link), `rect/k`
(the same with the m term over the k links a node sends on: 2d on the simulated tori, d on
the emulated ones, whose size-2 dimensions have one link per pair) and `rect pipelined`
(Caracal's schedule, rect_steps.c: segments per tree + height rounds, each moving one
segment, or two where two trees share a physical link)."""
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
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(HERE))
from caracal.model import fit, formulas as F, predict  # noqa: E402
from caracal.tool_run import run_jsonlines  # noqa: E402
import torus_testbed  # noqa: E402

RES = ROOT / "bench" / "results"
PROBES = {"pingpong": RES / "rect-model-probe-pingpong.json", "stream": RES / "rect-model-probe-stream.json"}
SIMPROBE = RES / "rect-model-sim-pingpong.json"
NET_SMALL, NET_LARGE = 1024, 262144  # alpha from sizes up to 1 KiB, beta from 256 KiB up (below: tbf's burst)
SIM_FIT_MIN = 16384   # the sizes Caracal's segments have (16-64 KiB) and up
# measured/simulated configuration -> the model row that describes it
ROWS = {"knomial:2": "binomial", "rect": "rect", "rect seg16k": "rect"}


def probe(args):
    st = json.loads(Path(f"/run/caracal-testbed/{args.name}/torus.json").read_text())
    for mode, path in PROBES.items():
        argv = [str(ROOT / "build" / "bin" / "caracal-probe"), "--mode", mode, "--min", "1", "--max", "1048576",
                "--per-octave", "1", "--perturb", "0", "--trials", "3", "--min-reps", "4", "--budget", "0.05"]
        cmd = torus_testbed.launch_command(args.name, 2, argv, {})
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        load = os.getloadavg()
        res = run_jsonlines(cmd, env, "caracal-probe", mode, lambda p: None, 600)
        for p in res["points"]:
            p.pop("index", None)
        doc = {"schema": "caracal.probe/1", "label": f"torus link {mode}", "mode": mode, "transport": "mpi",
               "mpi": "openmpi", "mpi_library": res["start"].get("mpi_library", ""), "ranks": 2,
               "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "options": {"testbed": {"name": args.name, "torus": st["dims"], "rate_bits": st["rate_bits"],
                                       "link": "host0-host1 (one torus link)"}},
               "load_average": [round(x, 2) for x in load], "wall_seconds": round(res["wall"], 3),
               "points": res["points"], "corrupted": []}
        path.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
        print(f"{mode}: {len(res['points'])} sizes, wall {res['wall']:.1f} s, load {load[0]:.1f}")


def simprobe(_args):
    cmd = [sys.executable, "-m", "caracal", "simulate", "--platform", "torus", "--extents", "8", "--ranks", "2",
           "--ppn", "1", "--no-caracal", "--", str(HERE / "sim_pingpong.c")]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith('{"points"')), None)
    if p.returncode or not line:
        sys.exit(f"rect_model_check: the simulated pingpong failed: {p.stdout[-800:]} {p.stderr[-800:]}")
    SIMPROBE.write_text(json.dumps({"platform": "torus 8 (neighbours node-0, node-1)", **json.loads(line)}) + "\n")
    print(line)


def links_per_node(dims):
    """Physical links a node sends on: 2 per dimension, 1 in a dimension of size 2 on the
    emulated tori (one veth per pair); the simulated ones have 2 there too (wrap-around)."""
    return sum(1 if n == 2 else 2 for n in dims if n > 1)


def rect_pipelined(h, dims, m, seg, share):
    """Caracal's rect bcast schedule: rounds = segments per tree + height, each round one
    segment per link (`share` where two trees cross one physical link)."""
    d = len([n for n in dims if n > 1])
    part = m / (2 * d)
    nseg = math.ceil(part / seg)
    height = sum(n - 1 for n in dims) + 1 if d > 1 else dims[0] - 1
    return (nseg + height) * (h.alpha + share * min(seg, part) * h.beta)


def rows_for(where, dims, cfg, P, m, observed_us, h, g, links, share, extra):
    d = len(dims)
    seg = 16384 if "seg16k" in cfg else 65536
    models = {"binomial": lambda: F.bcast_knomial(h, P, m, 2),
              "rect": lambda: F.bcast_rect(g, P, m, d),
              f"rect/{links}": lambda: F.bcast_rect(F.LogGP(g.L, g.o, g.G / links), P, m, d),
              "rect pipelined": lambda: rect_pipelined(h, dims, m, seg, share)}
    names = ["binomial"] if cfg == "knomial:2" else ["rect", f"rect/{links}", "rect pipelined"]
    rows = [{"model": n, "procs": P, "bytes": m, "us": models[n]()} for n in names]
    return [{"where": where, "config": cfg, **c, **extra}
            for c in predict.compare(rows, {(n, P, m): observed_us for n in names})]


def emulated_rows(lf):
    doc = json.loads((RES / "rect-bcast.json").read_text())
    groups = {}
    for r in doc["runs"]:
        if r["mode"] == "testbed" and not r.get("screen") and r["config"] in ROWS:
            groups.setdefault((r["dims"], r["config"]), []).append(r)
    out = []
    for (dims, cfg), runs in sorted(groups.items()):
        ext = torus_testbed.parse_dims(dims)
        meas = statistics.median([t for r in runs for t in r["times"]]) * 1e6
        share = 2 if 2 in ext else 1   # the + and - trees of a size-2 dimension share its one link
        out += rows_for(f"emulated {dims}", ext, cfg, math.prod(ext), runs[0]["bytes"], meas, lf.hockney, lf.loggp,
                        links_per_node(ext), share,
                        {"load": [min(r["load1"] for r in runs), max(r["load1"] for r in runs)]})
    return out


def simulated_rows(h):
    doc = json.loads((RES / "rect-sim.json").read_text())
    g = F.LogGP(L=h.alpha, o=0.0, G=h.beta)  # no host overhead in the simulation (computation is free)
    out = []
    for r in sorted(doc["runs"], key=lambda r: (r["ranks"], r["config"])):
        if r["config"] not in ROWS:
            continue
        ext = [int(x) for x in r["torus"].split("x")]
        out += rows_for(f"simulated {r['torus']}", ext, r["config"], r["ranks"], r["bytes"],
                        statistics.median(r["times"]) * 1e6, h, g, 2 * len(ext), 1, {})
    return out


def net_fit(docs):
    pp = next(d for d in docs.values() if d["mode"] == "pingpong")
    pts = [(p["size"], p.get("latency_us_median", p.get("latency_us"))) for p in pp["points"]]
    alpha = statistics.median([t for m, t in pts if m <= NET_SMALL])
    beta = statistics.median([(t - alpha) / m for m, t in pts if m >= NET_LARGE])
    st = next((d for d in docs.values() if d["mode"] == "stream"), None)
    o = min(min(p.get("latency_us_median", p.get("latency_us")) for p in st["points"]), alpha / 2) if st else alpha / 3
    big = [(m, t) for m, t in pts if m >= NET_LARGE]
    err = max(abs(alpha + m * beta - t) / t for m, t in big)
    return fit.LevelFit("net", F.Hockney(alpha, beta), F.LogGP(alpha - 2 * o, o, beta), "stream" if st else "assumed",
                        len(pts), err, list(docs))


def table(_args):
    docs = {str(p): json.loads(p.read_text()) for p in PROBES.values() if p.exists()}
    lines = ["# `caracal model` against the emulated and simulated tori (1 MiB bcast)", "",
             "Generated by `bench/coll/rect_model_check.py`. Error = (model - observed) / observed. Models "
             "(docs/model.md): `binomial` = Caracal's knomial:2 with the Hockney line, `binomial-torus` and `rect` = the "
             "source's LogGP formulas as written (rect: m/Bn + 2(d+1)o + 3L + d P^(1/d)(2o + L), with Bn one link).", ""]
    rows = []
    if docs:
        lf = net_fit(docs)
        lines += [f"Emulated link (probe between neighbouring hosts of the torus, {', '.join(Path(p).name for p in docs)}; "
                  f"a single least-squares line fails here, alpha < 0: tbf lets a 64 KiB burst through at once, so "
                  f"alpha is the median one-way time up to {NET_SMALL} B and beta the median (t - alpha)/m from "
                  f"{NET_LARGE // 1024} KiB): "
                  f"alpha {lf.hockney.alpha:.1f} us, beta {lf.hockney.beta * 1e3:.2f} ns/B "
                  f"({1 / lf.hockney.beta:.2f} MB/s), LogGP L {lf.loggp.L:.1f} us, o {lf.loggp.o:.1f} us "
                  f"({lf.o_source}); the line misses the probe from {NET_LARGE // 1024} KiB by at most {lf.max_rel_err:.0%}. "
                  f"Probe load average: {', '.join(str(d.get('load_average', ['?'])[0]) for d in docs.values())}.", ""]
        rows += emulated_rows(lf)
    if (RES / "rect-sim.json").exists() and SIMPROBE.exists():
        pts = [(float(m), float(t)) for m, t in json.loads(SIMPROBE.read_text())["points"] if m >= SIM_FIT_MIN]
        h = fit.hockney_fit(pts)
        err = max(abs(h.msg(m) - t) / t for m, t in pts)
        lines += [f"Simulated link (bench/coll/sim_pingpong.c between neighbours of a simulated ring, sizes from "
                  f"{SIM_FIT_MIN // 1024} KiB): alpha {h.alpha:.2f} us, beta {h.beta * 1e3:.4f} ns/B "
                  f"({1 / h.beta / 1e3:.2f} GB/s; the platform's links are 12.5 GB/s and 1 us: SMPI's factors), "
                  f"o = 0, L = alpha; the line misses its worst point by {err:.0%}.", ""]
        rows += simulated_rows(h)
    lines += ["| where | observed (config) | model | ranks | observed us | model us | error |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['where']} | {r['config']} | {r['model']} | {r['procs']} | {r['observed_us']:.1f} | "
                     f"{r['us']:.1f} | {r['rel_err']:+.0%} |")
    errs = [abs(r["rel_err"]) for r in rows]
    if errs:
        lines += ["", f"Median |error| over the {len(errs)} cells: {statistics.median(errs):.0%}."]
    text = "\n".join(lines) + "\n"
    (RES / "rect-model-check.md").write_text(text)
    (RES / "rect-model-check.json").write_text(json.dumps({"rows": rows}, separators=(",", ":")) + "\n")
    print(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["probe", "simprobe", "table"])
    ap.add_argument("--name", default="torus")
    a = ap.parse_args()
    {"probe": probe, "simprobe": simprobe, "table": table}[a.mode](a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
