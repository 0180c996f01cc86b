"""Rectangular vs binomial vs native bcast of 1 MiB on small tori (issue 18, item 4).

  python3 bench/coll/rect_bcast.py local  --dims 2x2 [--repeats 5] [--iters 10]
  sudo python3 bench/coll/rect_bcast.py testbed --dims 2x2x2 [--rate 50mbit] [--repeats 5]
  python3 bench/coll/rect_bcast.py table   (writes bench/results/rect-bcast.md from the saved runs)

`local`: every rank on this machine (Open MPI, shared memory: no links, so no link contention;
ranks above 2 share 2 cores). `testbed`: one rank per emulated host of a torus wired by
bench/coll/torus_testbed.py (one veth per torus link, tbf-limited, routed hop by hop); the
torus must be up (`torus_testbed.py up DIMS --rate R`). Each launch runs one algorithm
(CARACAL_BCAST = native, knomial:2 = Caracal's binomial, rect, rect with 16 KiB segments)
for WARMUP + ITERS calls from rank 0 (build/bin/rect_bench: a barrier before each call, the
slowest rank's time); launches are interleaved in a new random order each repeat. Results
go to bench/results/rect-bcast.json after every launch (a split run resumes and adds), with
the load average at each launch; on the testbed also the bytes each torus link carried."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import benchlib  # noqa: E402
import torus_testbed  # noqa: E402

ROOT = benchlib.ROOT
RESULTS = ROOT / "bench" / "results" / "rect-bcast.json"
CONFIGS = {
    "native": {"CARACAL_BCAST": "native"},
    "knomial:2": {"CARACAL_BCAST": "knomial:2"},
    "rect": {"CARACAL_BCAST": "rect"},
    "rect seg16k": {"CARACAL_BCAST": "rect", "CARACAL_SEGMENT_SIZE": "16k"},
}
# Open MPI 4.1's coll_tuned bcast algorithms forced one by one (the "best native
# configuration" is the fastest of these and the default, docs/collectives.md "tune"):
# 1 linear, 2 chain, 3 pipeline, 4 split binary tree, 5 binary tree, 6 binomial, 7 k-nomial,
# 8 scatter + recursive-doubling allgather, 9 scatter + ring allgather
TUNED = {1: "linear", 2: "chain", 3: "pipeline", 4: "split-binary", 5: "binary", 6: "binomial",
         7: "knomial", 8: "scatter-allgather", 9: "scatter-ring"}
for _alg, _name in TUNED.items():
    CONFIGS[f"ompi {_name}"] = {"CARACAL_BCAST": "native", "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                                "OMPI_MCA_coll_tuned_bcast_algorithm": str(_alg)}
DEFAULT_CONFIGS = ["native", "knomial:2", "rect", "rect seg16k"]


def load_doc():
    if RESULTS.exists():
        return json.loads(RESULTS.read_text())
    return {"machine": benchlib.machine_description(), "runs": []}


def save_doc(doc):
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(doc, separators=(",", ":")) + "\n")


def one_launch(mode, dims, nbytes, iters, warmup, cfg, name):
    P = 1
    for n in torus_testbed.parse_dims(dims):
        P *= n
    env = {"LD_PRELOAD": str(ROOT / "build" / "lib" / "libcaracal.so"), **CONFIGS[cfg]}
    argv = [str(ROOT / "build" / "bin" / "rect_bench"), dims, str(nbytes), str(iters), str(warmup)]
    before = None
    if mode == "local":
        cmd = benchlib.mpiexec("openmpi", P, argv, env=env)
    else:
        before = torus_testbed.link_bytes(name, P)
        cmd = torus_testbed.launch_command(name, P, argv, env)
    load = os.getloadavg()[0]
    p = benchlib.run_launch(cmd, 300)
    line = next((l for l in p.stdout.splitlines() if l.startswith("{")), None)
    if p.returncode or not line:
        sys.exit(f"rect_bcast: {cfg} failed ({p.returncode}): {p.stderr.strip()[-800:]}")
    res = json.loads(line)
    if not res["ok"]:
        sys.exit(f"rect_bcast: {cfg}: wrong data")
    out = {"mode": mode, "dims": dims, "bytes": nbytes, "config": cfg, "load1": round(load, 2),
           "times": res["times"], "when": time.strftime("%H:%M:%S")}
    if before is not None:
        after = torus_testbed.link_bytes(name, P)
        calls = iters + warmup
        # bytes per call on the busiest torus link and on all of them (control link excluded)
        per = [(after[h][d] - before[h][d]) / calls for h in after for d in after[h] if d != "cveth0"]
        out["link_bytes_max"] = round(max(per))
        out["link_bytes_total"] = round(sum(per))
    return out


def run(args):
    doc = load_doc()
    if args.mode == "testbed":
        st = json.loads(Path(f"/run/caracal-testbed/{args.name}/torus.json").read_text())
        if "x".join(map(str, st["dims"])) != args.dims:
            sys.exit(f"rect_bcast: the torus testbed {args.name} is {st['dims']}, not {args.dims}")
        rate = st["rate_bits"]
    else:
        rate = None

    def one(cfg):
        r = one_launch(args.mode, args.dims, args.bytes, args.iters, args.warmup, cfg, args.name)
        r["rate_bits"] = rate
        if args.screen:
            r["screen"] = True
        doc["runs"].append(r)
        save_doc(doc)
        return statistics.median(r["times"])

    benchlib.interleave(args.configs, args.repeats, one, seed=int(time.time()))
    table(doc)


def summarize(doc):
    groups = {}
    for r in doc["runs"]:
        key = (r["mode"], r["dims"], r["bytes"], r.get("rate_bits"), bool(r.get("screen")))
        groups.setdefault(key, {}).setdefault(r["config"], []).append(r)
    return groups


def table(doc):
    rows = []
    for (mode, dims, nbytes, rate, screen), cfgs in sorted(summarize(doc).items(),
                                                           key=lambda kv: (kv[0][0], len(kv[0][1]), kv[0][1], kv[0][4])):
        base = {}
        for cfg, runs in cfgs.items():
            times = [t for r in runs for t in r["times"]]
            launch_meds = [statistics.median(r["times"]) for r in runs]
            base[cfg] = {"median": statistics.median(times), "q1": statistics.quantiles(times, n=4)[0] if len(times) > 1 else times[0],
                         "q3": statistics.quantiles(times, n=4)[2] if len(times) > 1 else times[0],
                         "lmin": min(launch_meds), "lmax": max(launch_meds), "calls": len(times), "launches": len(runs),
                         "load": (min(r["load1"] for r in runs), max(r["load1"] for r in runs)),
                         "link_max": statistics.median([r["link_bytes_max"] for r in runs]) if "link_bytes_max" in runs[0] else None}
        where = (f"emulated torus {dims}, one rank per host, {rate / 1e6:g} Mbit/s per link and direction"
                 if mode == "testbed" else f"one node, {dims} ranks on 2 cores (Open MPI shared memory: no links)")
        rows.append(f"\n### {where}, {nbytes // 1024} KiB"
                    + (" (screening: one short launch each, to find the best native algorithm)" if screen else "") + "\n")
        natives = {c: b["median"] for c, b in base.items() if c == "native" or c.startswith("ompi ")}
        best = min(natives, key=natives.get)
        rows.append("| algorithm | median ms | IQR ms | launch medians ms | calls (launches) | vs knomial:2 | vs native |"
                    + (f" vs best native ({best}) |" if len(natives) > 1 else "")
                    + (" busiest link KiB/call |" if mode == "testbed" else "") + " load (1 min) |")
        rows.append("|---|---|---|---|---|---|---|" + ("---|" if len(natives) > 1 else "")
                    + ("---|" if mode == "testbed" else "") + "---|")
        for cfg in CONFIGS:
            if cfg not in base:
                continue
            b = base[cfg]
            kn = base.get("knomial:2", {}).get("median")
            nat = base.get("native", {}).get("median")
            rows.append(f"| {cfg} | {b['median'] * 1e3:.1f} | {b['q1'] * 1e3:.1f}-{b['q3'] * 1e3:.1f} | "
                        f"{b['lmin'] * 1e3:.1f}-{b['lmax'] * 1e3:.1f} | {b['calls']} ({b['launches']}) | "
                        f"{b['median'] / kn:.2f} | {b['median'] / nat:.2f} |"
                        + (f" {b['median'] / natives[best]:.2f} |" if len(natives) > 1 else "")
                        + (f" {b['link_max'] / 1024:.0f} |" if mode == "testbed" else "")
                        + f" {b['load'][0]:.1f}-{b['load'][1]:.1f} |")
    m = doc["machine"]
    text = ("# Rectangular vs binomial bcast on small tori\n\n"
            f"Generated by `bench/coll/rect_bcast.py` ({m['date']}, {m['cpu']}, {m['cores']} cores, {m['openmpi']}). "
            "Lower is better; `vs` columns are ratios of medians (below 1: faster than that algorithm). "
            "Analysis and the comparison with the source's figures: docs/collectives.md, "
            "\"Rectangular collectives on tori\".\n" + "\n".join(rows) + "\n")
    (ROOT / "bench" / "results" / "rect-bcast.md").write_text(text)
    print(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["local", "testbed", "table"])
    ap.add_argument("--dims", default="2x2")
    ap.add_argument("--bytes", type=int, default=1 << 20)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--name", default="torus")
    ap.add_argument("--screen", action="store_true",
                    help="mark these runs as a screening (tabulated apart from the measurement)")
    ap.add_argument("--configs", default=",".join(DEFAULT_CONFIGS),
                    help="comma-separated; 'ompi ALG' forces coll_tuned's bcast ALG "
                         f"({', '.join(TUNED.values())}); 'ompi' alone: all nine")
    args = ap.parse_args()
    names = []
    for c in args.configs.split(","):
        names += [f"ompi {t}" for t in TUNED.values()] if c == "ompi" else [c]
    bad = [c for c in names if c not in CONFIGS]
    if bad:
        print(f"rect_bcast: unknown --configs {', '.join(bad)}", file=sys.stderr)
        return 2
    args.configs = names
    if args.mode == "table":
        table(load_doc())
        return 0
    try:
        torus_testbed.parse_dims(args.dims)
    except ValueError:
        print(f"rect_bcast: bad --dims {args.dims}", file=sys.stderr)
        return 2
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
