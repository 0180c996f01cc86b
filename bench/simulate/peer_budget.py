#!/usr/bin/env python3
"""Connection budget (issue 19, MC-MPI): distinct peers per rank and simulated time of Caracal's
barrier, bcast, allreduce and alltoall, flat, hierarchical and under CARACAL_PEER_BUDGET, on a
simulated cluster of 32-core nodes (`caracal simulate --platform cluster`, block mapping).

  bench/simulate/peer_budget.py --work DIR [--ranks 1024] [--configs flat,hier,budget2,budget4]
  bench/simulate/peer_budget.py --work DIR --report     # bench/results/peer-budget.{md,json}

Each configuration is one simulation of bench/simulate/peer_count.c, which counts each rank's
peers with caracal_peers (Caracal's own counter: every message its algorithms post) and
classifies them by simulated host. Configurations (Caracal's schedules chosen by rule, so
that Caracal, not SMPI's collectives, runs every call):
  flat     CARACAL_NODE_SIZE=1: Caracal sees every rank as its own node, so its levels are one
           group of all ranks: dissemination barrier, binomial bcast, recursive-doubling
           allreduce over every rank; alltoall pairwise.
  hier     the simulated hosts are Caracal's nodes: k-nomial fan-in / binomial inside a node,
           the same primitives among the node leaders; alltoall node-aggregated (hier).
  budgetB  hier with CARACAL_PEER_BUDGET=B: the leaders' primitives become n-ary trees of
           arity B-1 where they would exceed B.
Only communication takes simulated time (smpi/simulate-computation:no): one run per
configuration. Results are saved after each simulation (resumable).
"""
import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PPN = 32
RULES = ["CARACAL_BARRIER=hier", "CARACAL_BCAST=knomial:2", "CARACAL_REDUCE=knomial:2", "CARACAL_ALLREDUCE=recdbl"]
CONFIGS = {
    "flat": RULES + ["CARACAL_NODE_SIZE=1", "CARACAL_ALLTOALL=pairwise"],
    "hier": RULES + ["CARACAL_ALLTOALL=hier"],
    "budget2": RULES + ["CARACAL_ALLTOALL=hier", "CARACAL_PEER_BUDGET=2"],
    "budget4": RULES + ["CARACAL_ALLTOALL=hier", "CARACAL_PEER_BUDGET=4"],
}
LINE = re.compile(r"^peer_count: (\w+) (\d+) (.*)$")


def simulate(work, name, ranks):
    out = work / f"run-{name}-{ranks}"
    cmd = [sys.executable, "-m", "caracal", "simulate", "--platform", "cluster", "--ranks", str(ranks), "--ppn",
           str(PPN), "--out", str(out)]
    for e in CONFIGS[name]:
        cmd += ["--env", e]
    cmd += ["--", str(HERE / "peer_count.c")]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))
    (work / f"{name}-{ranks}.log").write_text(p.stdout + p.stderr)
    try:
        s = json.loads(p.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise SystemExit(f"peer_budget: {name} {ranks}: no summary, see {work}/{name}-{ranks}.log")
    cases = []
    for ln in p.stdout.splitlines():
        m = LINE.match(ln)
        if m:
            kv = dict(x.split("=") for x in m.group(3).split())
            cases.append({"coll": m.group(1), "bytes": int(m.group(2)),
                          **{k: (float(v) if "." in v else int(v)) for k, v in kv.items()}})
    if s["exit"] or not cases:
        raise SystemExit(f"peer_budget: {name} {ranks}: exit {s['exit']}, see {work}/{name}-{ranks}.log")
    return {"config": name, "ranks": ranks, "env": CONFIGS[name], "cases": cases, "simulated_s": s["simulated_s"],
            "wall_s": s["wall_s"], "cpu_s": s["cpu_s"], "peak_pss_mb": round(s["peak_pss_bytes"] / 2**20),
            "peak_rss_mb": round(s["peak_rss_bytes"] / 2**20), "load": round(s["load"], 1)}


def measure(args):
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    path = work / "runs.json"
    state = json.loads(path.read_text()) if path.exists() else {"runs": []}
    done = {(r["config"], r["ranks"]) for r in state["runs"]}
    for ranks in map(int, args.ranks.split(",")):
        for name in args.configs.split(","):
            if (name, ranks) in done:
                continue
            r = simulate(work, name, ranks)
            state["runs"].append(r)
            path.write_text(json.dumps(state, separators=(",", ":")) + "\n")
            print(json.dumps({k: v for k, v in r.items() if k != "cases"}), flush=True)


def report(args):
    work = Path(args.work).resolve()
    state = json.loads((work / "runs.json").read_text())
    runs = state["runs"]
    lines = ["# Connection budget: peers per rank, flat vs hierarchical vs CARACAL_PEER_BUDGET (simulated)", "",
             "`caracal simulate --platform cluster --ppn 32` (block mapping; 1 us / 12.5 GB/s links, crossbar), "
             "bench/simulate/peer_count.c, script bench/simulate/peer_budget.py. Peers are counted by Caracal "
             "(`caracal_peers`: every message its algorithms post, as a world rank) in the first call of each case, "
             "and classified by simulated host; times are the slowest rank's mean of the next 2 calls (alltoall: 1), "
             "simulated. Every call runs Caracal's algorithms (rules below), not SMPI's.", "",
             "- **flat**: CARACAL_NODE_SIZE=1, so Caracal's levels are one group of all ranks (dissemination barrier, "
             "binomial bcast, recursive-doubling allreduce over every rank), alltoall pairwise.",
             "- **hier**: the simulated hosts are Caracal's nodes (k-nomial/binomial inside a node, the same "
             "primitives among the node leaders), alltoall node-aggregated (`hier`).",
             "- **budgetB**: hier with CARACAL_PEER_BUDGET=B (the leaders' trees get arity B-1 where the rule's "
             "primitive would exceed B).", "",
             "off-node max / mean: distinct peers on other hosts per rank (max over ranks / mean); member: the most "
             "off-node peers of a rank that does not lead its host; all: distinct peers of any kind (max).", ""]
    for ranks in sorted({r["ranks"] for r in runs}):
        sel = [r for r in runs if r["ranks"] == ranks]
        order = [c for c in CONFIGS if any(r["config"] == c for r in sel)]
        by = {r["config"]: {(c["coll"], c["bytes"]): c for c in r["cases"]} for r in sel}
        nodes = sel[0]["cases"][0]["nodes"]
        lines += [f"## {ranks} ranks ({nodes} nodes of {PPN})", "",
                  "| case | " + " | ".join(f"{c}: off-node max / mean / member / all" for c in order) + " | "
                  + " | ".join(f"{c} us" for c in order) + " |",
                  "|---|" + "---:|" * (2 * len(order))]
        for key in sel[0]["cases"]:
            k = (key["coll"], key["bytes"])
            label = f"{k[0]} {k[1]} B" if k[0] != "barrier" else "barrier"
            cells = []
            for c in order:
                x = by[c].get(k)
                cells.append("-" if not x else f"{x['offnode_max']} / {x['offnode_mean']:.2f} / "
                             f"{x['member_offnode_max']} / {x['peers_max']}")
            times = [("-" if not by[c].get(k) else f"{by[c][k]['us']:.1f}") for c in order]
            lines.append(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(times) + " |")
        lines += ["", "Host cost: " + "; ".join(
            f"{r['config']} {r['wall_s']:.0f} s wall, {r['cpu_s']:.0f} s CPU, peak Pss {r['peak_pss_mb']} MB "
            f"(load {r['load']})" for r in sel) + ".", ""]
    lines += state.get("notes", [])
    md = "\n".join(lines) + "\n"
    res = ROOT / "bench" / "results"
    (res / "peer-budget.md").write_text(md)
    doc = {"schema": "caracal.bench-peer-budget/1", "platform": "cluster", "ppn": PPN, "program":
           "bench/simulate/peer_count.c", "configs": CONFIGS, "runs": runs}
    (res / "peer-budget.json").write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    print(md)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", required=True)
    ap.add_argument("--ranks", default="1024")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--report", action="store_true")
    args = ap.parse_args()
    return report(args) if args.report else measure(args)


if __name__ == "__main__":
    sys.exit(main())
