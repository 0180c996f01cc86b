#!/usr/bin/env python3
"""caracal probe against Debian's NetPIPE (NPopenmpi), side by side on this machine.

Both run Open MPI, 2 ranks, ping-pong, the same size range (default 1 B - 8 MiB,
NetPIPE's default +-3 byte perturbations and our default ones). Rounds alternate
which tool goes first so that slow drift of a shared machine hits both alike.
Per round we keep each tool's wall time and its curve; the result is the median
over rounds at the sizes both measured, and the ratios caracal/NetPIPE.

Writes bench/results/probe-vs-netpipe.{md,json,png}.

    .venv/bin/python bench/probe_vs_netpipe.py [--rounds 3] [--max 8M] [--probe-buffers one|two]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from caracal import launch  # noqa: E402
from caracal.tool_run import machine, now_iso, parse_bytes  # noqa: E402

SMALL = [1, 2, 4, 8, 16, 32, 64]  # "small-message latency": these sizes


def large_sizes(hi):
    """"large-message bandwidth": the powers of two in the top three octaves"""
    return [1 << k for k in range(40) if hi // 8 <= (1 << k) <= hi]


def run_netpipe(lo, hi, timeout):
    """NPopenmpi writes 'bytes Mbps seconds' lines (seconds = half the round trip) to -o FILE."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "np.out"
        cmd = launch.mpiexec_command("openmpi", 2, ["NPopenmpi", "-l", str(lo), "-u", str(hi),
                                                    "-o", str(out)])
        t0 = time.monotonic()
        subprocess.run(cmd, env=launch.launcher_env(), cwd=d, check=True, timeout=timeout,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.monotonic() - t0
        curve = {}
        for line in out.read_text().split("\n"):
            f = line.split()
            if len(f) >= 3:
                size, mbps, sec = int(f[0]), float(f[1]), float(f[2])
                curve[size] = {"latency_us": sec * 1e6, "bandwidth_MBps": mbps / 8.0}
    return wall, curve


def run_probe(lo, hi, timeout, extra):
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "probe.json"
        cmd = [sys.executable, "-m", "caracal", "probe", "--mpi", "openmpi", "--mode", "pingpong",
               "--min", str(lo), "--max", str(hi), "--json", str(out)] + extra
        t0 = time.monotonic()
        subprocess.run(cmd, check=True, timeout=timeout, stdout=subprocess.DEVNULL,
                       env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))
        wall = time.monotonic() - t0
        doc = json.loads(out.read_text())
    curve = {p["size"]: {"latency_us": p["latency_us"], "bandwidth_MBps": p["bandwidth_MBps"]}
             for p in doc["points"]}
    return wall, curve, doc["mpi_library"]


def median_curve(curves, key):
    sizes = sorted(set.intersection(*[set(c) for c in curves]))
    return {s: statistics.median(c[s][key] for c in curves) for s in sizes}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--min", default="1")
    ap.add_argument("--max", default="8M")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--probe-buffers", choices=("one", "two"), default="one",
                    help="one: --one-buffer, NetPIPE's own cache mode (default); two: probe's default")
    a = ap.parse_args()
    lo, hi = parse_bytes("--min", a.min), parse_bytes("--max", a.max)
    rounds = []
    lib = ""
    for r in range(a.rounds):
        order = ["netpipe", "probe"] if r % 2 == 0 else ["probe", "netpipe"]
        rec = {"order": order}
        for tool in order:
            if tool == "netpipe":
                rec["netpipe_wall"], rec["netpipe"] = run_netpipe(lo, hi, a.timeout)
            else:
                extra = ["--one-buffer"] if a.probe_buffers == "one" else []
                rec["probe_wall"], rec["probe"], lib = run_probe(lo, hi, a.timeout, extra)
            print(f"round {r + 1}/{a.rounds}: {tool} {rec[tool + '_wall']:.1f} s", file=sys.stderr)
        rounds.append(rec)

    res = {"schema": "caracal.bench-result/1", "name": "probe-vs-netpipe", "created": now_iso(),
           "machine": machine(), "mpi_library": lib, "rounds": a.rounds, "min": lo, "max": hi,
           "probe_buffers": a.probe_buffers,
           "wall_seconds": {t: [r[t + "_wall"] for r in rounds] for t in ("netpipe", "probe")}}
    lat = {t: median_curve([r[t] for r in rounds], "latency_us") for t in ("netpipe", "probe")}
    bw = {t: median_curve([r[t] for r in rounds], "bandwidth_MBps") for t in ("netpipe", "probe")}
    common = sorted(set(lat["netpipe"]) & set(lat["probe"]))
    res["common_sizes"] = common
    res["curves"] = {t: {"latency_us": lat[t], "bandwidth_MBps": bw[t]} for t in lat}
    small = [s for s in SMALL if s in common]
    large = [s for s in large_sizes(hi) if s in common]
    # per-round ratios at the anchor sizes tell how much of a difference is noise
    res["small_latency"] = {str(s): {"netpipe_us": lat["netpipe"][s], "probe_us": lat["probe"][s],
                                     "ratio": lat["probe"][s] / lat["netpipe"][s]} for s in small}
    res["large_bandwidth"] = {str(s): {"netpipe_MBps": bw["netpipe"][s], "probe_MBps": bw["probe"][s],
                                       "ratio": bw["probe"][s] / bw["netpipe"][s]} for s in large}
    # each tool's own spread over rounds (max/min) at the anchor sizes: a ratio
    # between the tools means little where either disagrees with itself more
    for key, field, sizes in (("latency_us", "small_latency", small), ("bandwidth_MBps", "large_bandwidth", large)):
        for s in sizes:
            for t in ("netpipe", "probe"):
                v = [r[t][s][key] for r in rounds if s in r[t]]
                res[field][str(s)][t + "_rounds"] = v
                res[field][str(s)][t + "_spread"] = max(v) / min(v)
    res["small_latency_ratio_median"] = statistics.median(v["ratio"] for v in res["small_latency"].values())
    res["large_bandwidth_ratio_median"] = statistics.median(v["ratio"] for v in res["large_bandwidth"].values())
    wn, wp = statistics.median(res["wall_seconds"]["netpipe"]), statistics.median(res["wall_seconds"]["probe"])
    res["wall_ratio_median"] = wp / wn
    res["per_round"] = [{"order": r["order"], "netpipe_wall": r["netpipe_wall"], "probe_wall": r["probe_wall"],
                         "lat8_ratio": r["probe"].get(8, {}).get("latency_us", 0) / r["netpipe"][8]["latency_us"]
                         if 8 in r["netpipe"] and 8 in r["probe"] else None,
                         "bw_max_ratio": r["probe"][hi]["bandwidth_MBps"] / r["netpipe"][hi]["bandwidth_MBps"]
                         if hi in r["netpipe"] and hi in r["probe"] else None} for r in rounds]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "probe-vs-netpipe.json").write_text(json.dumps(res, indent=1) + "\n")
    plot(res, out / "probe-vs-netpipe.png")
    (out / "probe-vs-netpipe.md").write_text(markdown(res))
    print(markdown(res))


def plot(res, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    for ax, key, ylab in ((axes[0], "latency_us", "latency, half round trip (us)"),
                          (axes[1], "bandwidth_MBps", "bandwidth (MB/s)")):
        for tool, name in (("netpipe", "NetPIPE (NPopenmpi)"), ("probe", "caracal probe")):
            c = res["curves"][tool][key]
            xs = sorted(c)
            ax.plot(xs, [c[x] for x in xs], marker=".", ms=3, lw=1, label=name)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel(ylab)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(f"Open MPI ping-pong, 2 ranks, median of {res['rounds']} alternating rounds")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def markdown(res):
    m = res["machine"]
    L = [f"# caracal probe vs NetPIPE (NPopenmpi)", "",
         f"Machine: {m['cpu']}, {m['cores']} cores (shared with other jobs), host {m['hostname']}; "
         f"{res['mpi_library']}; 2 ranks, ping-pong, {res['min']} B - {res['max']} B. "
         f"Created {res['created']} by `bench/probe_vs_netpipe.py`.", "",
         f"{res['rounds']} rounds, alternating which tool runs first; every number below is the "
         f"median over rounds (each tool itself reports the best of its trials per size). "
         f"Sizes compared: the {len(res['common_sizes'])} both tools measured. "
         + ("caracal probe ran with `--one-buffer` (send from and receive into one buffer per rank, "
            "as NetPIPE's default mode does). " if res.get("probe_buffers") == "one" else "")
         + "Spread = a tool's max/min over the rounds at that size.", "",
         "## Small-message latency (us)", "", "| bytes | NetPIPE | caracal probe | ratio | NetPIPE spread | probe spread |",
         "|---:|---:|---:|---:|---:|---:|"]
    for s, v in res["small_latency"].items():
        L.append(f"| {s} | {v['netpipe_us']:.3f} | {v['probe_us']:.3f} | {v['ratio']:.3f} "
                 f"| {v.get('netpipe_spread', 0):.2f} | {v.get('probe_spread', 0):.2f} |")
    L += ["", f"Median ratio: **{res['small_latency_ratio_median']:.3f}**", "",
          "## Large-message bandwidth (MB/s)", "", "| bytes | NetPIPE | caracal probe | ratio | NetPIPE spread | probe spread |",
         "|---:|---:|---:|---:|---:|---:|"]
    for s, v in res["large_bandwidth"].items():
        L.append(f"| {s} | {v['netpipe_MBps']:.0f} | {v['probe_MBps']:.0f} | {v['ratio']:.3f} "
                 f"| {v.get('netpipe_spread', 0):.2f} | {v.get('probe_spread', 0):.2f} |")
    wn, wp = res["wall_seconds"]["netpipe"], res["wall_seconds"]["probe"]
    L += ["", f"Median ratio: **{res['large_bandwidth_ratio_median']:.3f}**", "",
          "## Wall time of one sweep (s)", "", "| round | first | NetPIPE | caracal probe |", "|---:|---|---:|---:|"]
    for i, r in enumerate(res["per_round"]):
        L.append(f"| {i + 1} | {r['order'][0]} | {r['netpipe_wall']:.1f} | {r['probe_wall']:.1f} |")
    L += ["", f"Median wall-time ratio caracal/NetPIPE: **{res['wall_ratio_median']:.3f}** "
          f"(caracal probe measures {len(res['curves']['probe']['latency_us'])} sizes, "
          f"NetPIPE {len(res['curves']['netpipe']['latency_us'])}).", "",
          "Per-round ratios at 8 B latency and at the largest size's bandwidth (noise check): "
          + ", ".join(f"{r['lat8_ratio']:.2f}/{r['bw_max_ratio']:.2f}" for r in res["per_round"]
                      if r["lat8_ratio"] and r["bw_max_ratio"]), "",
          "![overlay](probe-vs-netpipe.png)", ""]
    return "\n".join(L)


if __name__ == "__main__":
    main()
