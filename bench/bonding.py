#!/usr/bin/env python3
"""Channel bonding on emulated hosts (MP_Lite, second source document): one message
striped over K TCP connections, one per link, each link rate-limited by tbf.

A `caracal testbed` with 2 hosts and --links 4 --rate R (R per link and direction);
`caracal probe --testbed --transport tcp --streams K --bind cveth0 .. cveth{K-1}` for
K = 1, 2, 4: rank 0 on host0, rank 1 on host1, stream i on link i (10.233.i.x), every
message cut into K chunks progressed together. Two modes per K:
  pingpong  NetPIPE's: latency = half the round trip, bandwidth = size / latency;
  stream    one direction, --window messages back to back, timed at the receiver: the
            sustained rate (tbf's burst, 10 ms of traffic per link, is spent at once,
            while a ping-pong lets the bucket refill during the reply).
Launches are interleaved (a new random order of the configurations every round) and
repeated --rounds times; each launch reports probe's median over its trials per size;
the table gives the median over rounds and the spread (min-max), and the speed-up of
K links over one link (ratio of the medians). Goal (issue 13): >= 1.8x with 2 links
and >= 3.4x with 4 at large messages. The load average is recorded per launch.

Writes bench/results/bonding.{json,md,png}. Needs root (network namespaces) and the
Open MPI build (caracal-probe; MPI only sets the sockets up). Usage:
  bench/bonding.py [--rate 200mbit] [--links 1,2,4] [--rounds 3] [--max 8M] [--name bond]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import ROOT, interleave, machine_description, write_results

MPI_STREAM = "openmpi-stream"   # optional row: Open MPI's own use of the links
MODES = {  # mode: probe arguments besides --max
    "pingpong": ["--min", "1K", "--per-octave", "1", "--budget", "0.3", "--trials", "3", "--min-reps", "1"],
    "stream": ["--min", "64K", "--per-octave", "1", "--budget", "0.3", "--trials", "3", "--min-reps", "1",
               "--window", "4"],
}


def cli(*args, timeout=900):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.run([sys.executable, "-m", "caracal", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=timeout)


def probe_once(a, mode, k, tmp):
    out = os.path.join(tmp, f"{mode}-{k}.json")
    if mode == MPI_STREAM:
        # Open MPI itself: ob1 over one btl tcp module per link (the testbed gives it
        # btl_tcp_if_include = every link), no striping of ours
        how = ["--transport", "mpi", "--mode", "stream", "--max", a.stream_max, *MODES["stream"]]
    else:
        binds = [x for i in range(k) for x in ("--bind", f"cveth{i}")]
        how = ["--transport", "tcp", "--mode", mode, "--streams", k, *binds, "--stripe-min", a.stripe_min,
               "--max", a.max if mode == "pingpong" else a.stream_max, *MODES[mode]]
    load = os.getloadavg()[0]
    t0 = time.monotonic()
    p = cli("probe", "--testbed", a.name, "--mpi", a.mpi, *how, "--no-perturb",
            "--label", f"{mode} x{k}", "--json", out, "--force", "--timeout", 600)
    if p.returncode != 0:
        raise SystemExit(f"bonding: probe {mode} x{k} failed ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    doc = json.load(open(out))
    return {"load_before": load, "load_after": os.getloadavg()[0], "seconds": round(time.monotonic() - t0, 1),
            "points": [{"size": q["size"], "latency_us": q["latency_us_median"],
                        "bandwidth_MBps": q["bandwidth_MBps_median"], "best_MBps": q["bandwidth_MBps"]}
                       for q in doc["points"]]}


def summarise(runs, links, modes):
    """{mode: {size: {k: {"median", "min", "max", "latency_us"}}}} over the rounds."""
    out = {}
    for mode in modes:
        sizes = sorted({q["size"] for r in runs[(mode, links[0])] for q in r["points"]})
        table = {}
        for s in sizes:
            row = {}
            for k in links:
                bw = [q["bandwidth_MBps"] for r in runs[(mode, k)] for q in r["points"] if q["size"] == s]
                lat = [q["latency_us"] for r in runs[(mode, k)] for q in r["points"] if q["size"] == s]
                row[k] = {"median": statistics.median(bw), "min": min(bw), "max": max(bw),
                          "latency_us": statistics.median(lat)}
            table[s] = row
        out[mode] = table
    return out


def fmt_size(n):
    for unit, f in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= f and n % f == 0:
            return f"{n // f}{unit}"
    return str(n)


def markdown(a, summary, links, meta, mpi_rows=None):
    line_rate = a.rate_bits / 8 / 1e6
    L = [f"# Channel bonding on emulated hosts: 1 message striped over {', '.join(map(str, links))} TCP links",
         "",
         f"2 hosts (caracal testbed, {meta['cores']} cores shared by everything), {max(links)} veth links per host, "
         f"each limited by tbf to {a.rate} per direction ({line_rate:.1f} MB/s; burst 10 ms of traffic). "
         f"`caracal probe --transport tcp --streams K --bind cveth0..cveth{{K-1}}`, rank 0 on host0, rank 1 on "
         f"host1, stream i on link i, messages below {a.stripe_min} bytes on link 0 only (--stripe-min). {a.rounds} interleaved rounds (random order per round), each launch the "
         f"median of 3 trials per size; cells: median over rounds [min-max] in MB/s (10^6 B/s), speed-up = "
         f"median(K links) / median(1 link). Load average during the runs: "
         f"{min(meta['loads']):.2f}-{max(meta['loads']):.2f}. {meta['date']}.",
         ""]
    for mode, table in summary.items():
        L += [f"## {mode}", ""]
        head = "| bytes | " + " | ".join(f"{k} link{'s' if k > 1 else ''} MB/s" for k in links)
        head += " | " + " | ".join(f"x{k}" for k in links if k > 1)
        if mode == "pingpong":
            head += " | " + " | ".join(f"latency us, {k}" for k in links)
        L += [head + " |", "|" + "---|" * (head.count("|"))]
        for s, row in table.items():
            cells = [f"{row[k]['median']:.1f} [{row[k]['min']:.1f}-{row[k]['max']:.1f}]" for k in links]
            cells += [f"{row[k]['median'] / row[links[0]]['median']:.2f}" for k in links if k > 1]
            if mode == "pingpong":
                cells += [f"{row[k]['latency_us']:.0f}" for k in links]
            L.append(f"| {fmt_size(s)} | " + " | ".join(cells) + " |")
        L.append("")
    L += ["## Goal (issue 13: >= 1.8x with 2 links, >= 3.4x with 4, large messages)", ""]
    for mode, table in summary.items():
        big = max(table)
        row = table[big]
        for k in links:
            if k == 1:
                continue
            x = row[k]["median"] / row[1]["median"]
            goal = {2: 1.8, 4: 3.4}.get(k)
            verdict = "" if goal is None else (" - met" if x >= goal else f" - NOT met (goal {goal}x)")
            L.append(f"- {mode}, {fmt_size(big)}: {k} links {row[k]['median']:.1f} MB/s vs 1 link "
                     f"{row[1]['median']:.1f} MB/s = {x:.2f}x; line rate {k * line_rate:.1f} MB/s "
                     f"({row[k]['median'] / (k * line_rate) * 100:.0f}% of it){verdict}")
    L.append("")
    if mpi_rows and "stream" in summary:
        k = max(links)
        L += [f"## Open MPI's own striping: MPI stream over its {k} btl tcp modules (one per link)", "",
              f"`caracal probe --transport mpi --mode stream` on the same testbed: ob1 sends large messages over "
              f"every btl tcp module it has (the testbed gives it all {k} links). Against the raw TCP stream above.", "",
              f"| bytes | Open MPI MB/s | tcp x1 MB/s | tcp x{k} MB/s | Open MPI / tcp x1 |", "|---|---|---|---|---|"]
        for s, r in mpi_rows.items():
            row = summary["stream"].get(s)
            if not row:
                continue
            L.append(f"| {fmt_size(s)} | {r['median']:.1f} [{r['min']:.1f}-{r['max']:.1f}] | "
                     f"{row[1]['median']:.1f} | {row[k]['median']:.1f} | {r['median'] / row[1]['median']:.2f} |")
        L.append("")
    return "\n".join(L) + "\n"


def plot(summary, links, a, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    modes = list(summary)
    fig, axes = plt.subplots(2, len(modes), figsize=(6 * len(modes), 8), squeeze=False)
    line_rate = a.rate_bits / 8 / 1e6
    for j, mode in enumerate(modes):
        table = summary[mode]
        sizes = list(table)
        ax, sx = axes[0][j], axes[1][j]
        for k in links:
            med = [table[s][k]["median"] for s in sizes]
            lo = [m - table[s][k]["min"] for m, s in zip(med, sizes)]
            hi = [table[s][k]["max"] - m for m, s in zip(med, sizes)]
            c = ax.errorbar(sizes, med, yerr=[lo, hi], marker="o", ms=3, capsize=2, label=f"{k} link(s)")
            ax.axhline(k * line_rate, ls=":", color=c[0].get_color(), lw=1)
            if k > 1:
                sx.plot(sizes, [table[s][k]["median"] / table[s][links[0]]["median"] for s in sizes], marker="o",
                        ms=3, label=f"{k} links / 1")
                sx.axhline(k, ls=":", color="grey", lw=1)
        for g in (1.8, 3.4):
            sx.axhline(g, ls="--", color="red", lw=0.8)
        ax.set(xscale="log", yscale="log", xlabel="message bytes", ylabel="MB/s (median over rounds)",
               title=f"tcp {mode}, {a.rate} per link (dotted: K x line rate)")
        sx.set(xscale="log", xlabel="message bytes", ylabel="speed-up over 1 link",
               title=f"{mode}: speed-up (dashed: goals 1.8x, 3.4x)")
        ax.legend()
        sx.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--name", default="bond", help="testbed name (default bond; brought up and down here)")
    ap.add_argument("--rate", default="200mbit", help="tbf rate per link and direction (default 200mbit)")
    ap.add_argument("--links", default="1,2,4", help="link counts to compare (default 1,2,4)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max", default="8M", help="largest pingpong message (default 8M)")
    ap.add_argument("--stream-max", default="4M", help="largest stream message (default 4M)")
    ap.add_argument("--modes", default="pingpong,stream",
                    help=f"pingpong, stream and/or {MPI_STREAM} (Open MPI's own stream over all links)")
    ap.add_argument("--mpi", default="openmpi", help="launcher (MPI carries only the set-up)")
    ap.add_argument("--stripe-min", default="0", help="probe --stripe-min: smaller messages on one link (default 0)")
    ap.add_argument("--keep", action="store_true", help="leave the testbed up")
    ap.add_argument("--out", default="bonding", help="results name under bench/results (default bonding)")
    a = ap.parse_args()
    links = [int(x) for x in a.links.split(",")]
    if links[0] != 1:
        raise SystemExit("bonding: --links must start with 1 (the baseline)")
    modes = a.modes.split(",")
    sys.path.insert(0, str(ROOT / "python"))
    from caracal.commands.testbed import parse_rate
    a.rate_bits = parse_rate(a.rate)
    p = cli("testbed", "up", "--name", a.name, "--hosts", 2, "--links", max(links), "--rate", a.rate, timeout=120)
    if p.returncode:
        raise SystemExit(f"bonding: testbed up failed: {p.stderr.strip()}")
    meta = machine_description()
    t0 = time.time()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            configs = [(m, k) for m in modes if m != MPI_STREAM for k in links]
            if MPI_STREAM in modes:
                configs.append((MPI_STREAM, max(links)))
            runs = interleave(configs, a.rounds, lambda c: probe_once(a, c[0], c[1], tmp))
    finally:
        if not a.keep:
            cli("testbed", "down", "--name", a.name, timeout=120)
    (ROOT / "bench" / "results").mkdir(exist_ok=True)   # the raw runs first: nothing measured is lost
    (ROOT / "bench" / "results" / f"{a.out}.raw.json").write_text(
        json.dumps({f"{m} x{k}": v for (m, k), v in runs.items()}))
    meta["loads"] = [r[x] for rs in runs.values() for r in rs for x in ("load_before", "load_after")]
    meta["seconds"] = round(time.time() - t0, 1)
    summary = summarise(runs, links, [m for m in modes if m != MPI_STREAM])
    mpi_rows = {}
    if MPI_STREAM in modes:
        k = max(links)
        for s in sorted({q["size"] for r in runs[(MPI_STREAM, k)] for q in r["points"]}):
            bw = [q["bandwidth_MBps"] for r in runs[(MPI_STREAM, k)] for q in r["points"] if q["size"] == s]
            mpi_rows[s] = {"median": statistics.median(bw), "min": min(bw), "max": max(bw)}
    doc = {"meta": meta, "rate": a.rate, "stripe_min": a.stripe_min, "rate_bits": a.rate_bits, "links": links, "rounds": a.rounds,
           "modes": {m: MODES.get(m, MODES["stream"]) for m in modes},
           "runs": {f"{m} x{k}": v for (m, k), v in runs.items()},
           "summary": {m: {str(s): {str(k): v for k, v in row.items()} for s, row in t.items()}
                       for m, t in summary.items()},
           "openmpi_stream": {str(s): v for s, v in mpi_rows.items()}}
    md = markdown(a, summary, links, meta, mpi_rows)
    write_results(a.out, doc, md)
    plot(summary, links, a, ROOT / "bench" / "results" / f"{a.out}.png")
    print(md)


if __name__ == "__main__":
    main()
