#!/usr/bin/env python3
"""Caracal's host memory per simulated rank, one source tree against another (issue 19: the
hierarchy build's and the rule table's memory under SMPI, where all ranks share one process).

  bench/simulate/rank_memory.py --root TREE --label LABEL --ranks 1024,4096
  bench/simulate/rank_memory.py --report

Each run is `caracal simulate` (mmap privatization, 32-core nodes) of TREE's
bench/simulate/coll_time.c with barriers only and CARACAL_BARRIER=hier, built from TREE's
sources (the SMPI library is cached by content hash), saved to the JSON as it ends. A tree
other than this one is a `git archive` of the commit to compare, e.g.
  mkdir /tmp/base && git archive 7ce95e8 | tar -x -C /tmp/base
Simulations need no bench lock (simulated times do not depend on the host's load): run at
idle priority; above 4,096 ranks take /work/sim-big.lock and check free memory first.
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
JSON = ROOT / "bench" / "results" / "simulate-rank-memory.json"


def one_run(tree, ranks, label, commit):
    cmd = [sys.executable, "-m", "caracal", "simulate", "--platform", "cluster", "--ranks", str(ranks),
           "--ppn", "32", "--cfg", "smpi/privatization:mmap", "--env", "CARACAL_BARRIER=hier",
           "--", str(tree / "bench" / "simulate" / "coll_time.c"), "2"]
    env = dict(os.environ, PYTHONPATH=str(tree / "python"), COLL_TIME_ONLY="barrier")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tree)
    try:
        s = json.loads(p.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise SystemExit(f"rank_memory: {label} {ranks}: no summary\n{p.stderr[-2000:]}")
    return summary_row(s, ranks, label, commit)


def summary_row(s, ranks, label, commit):
    """One run's record from `caracal simulate`'s summary line."""
    if s["exit"] != 0:
        raise SystemExit(f"rank_memory: {label} {ranks}: exit {s['exit']}")
    return {"label": label, "commit": commit, "ranks": ranks, "pss_mb": round(s["peak_pss_bytes"] / 2**20, 1),
            "rss_mb": round(s["peak_rss_bytes"] / 2**20), "wall_s": round(s["wall_s"], 1),
            "cpu_s": round(s["cpu_s"], 1), "load": round(s["load"], 1)}


def load(path):
    return json.loads(path.read_text()) if path.exists() else {"schema": "caracal.bench-simulate-rank-memory/1",
                                                               "runs": []}


def save(path, doc):
    path.write_text(json.dumps(doc, separators=(",", ":")) + "\n")


def measure(args):
    path, tree = Path(args.json), Path(args.root).resolve()
    doc = load(path)
    done = {(r["label"], r["ranks"]) for r in doc["runs"]}
    for ranks in [int(x) for x in args.ranks.split(",")]:
        if (args.label, ranks) not in done:
            r = one_run(tree, ranks, args.label, args.commit)
            print(json.dumps(r), flush=True)
            doc["runs"].append(r)
            save(path, doc)


def report(args):
    doc = load(Path(args.json))
    labels = list(dict.fromkeys(r["label"] for r in doc["runs"]))
    lines = ["# Caracal's memory per simulated rank, before and after (issue 19)", "",
             "bench/simulate/rank_memory.py: `caracal simulate` of bench/simulate/coll_time.c, barriers only "
             "(CARACAL_BARRIER=hier), cluster of 32-core nodes, block mapping, mmap privatization. Pss = peak proportional "
             "set size of the simulation (SMPI and every rank; all ranks are one process). CPU s: the "
             "simulation's own. Wall s on the shared 2-core machine, at idle priority or nice 10 (load as given: "
             "mostly waiting).", "",
             "| ranks | source | commit | Pss MB | Pss per rank | CPU s | wall s | load |",
             "|---:|---|---|---:|---:|---:|---:|---:|"]
    for ranks in sorted({r["ranks"] for r in doc["runs"]}):
        for label in labels:
            for r in doc["runs"]:
                if r["ranks"] == ranks and r["label"] == label:
                    stop = "" if r.get("finished", True) else " (stopped unfinished: at least)"
                    lines.append(f"| {ranks} | {label}{stop} | {r['commit']} | {r['pss_mb']:.0f} | "
                                 f"{r['pss_mb'] * 1024 / ranks:.0f} KB | {r['cpu_s']:.0f} | {r['wall_s']:.0f} | "
                                 f"{r['load']} |")
    lines += [""] + doc.get("notes", [])
    out = Path(args.json).with_suffix(".md")
    out.write_text("\n".join(lines) + "\n")
    print(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=str(ROOT), help="the source tree to build and run")
    ap.add_argument("--label", default="this tree")
    ap.add_argument("--commit", default="", help="the commit TREE holds (recorded)")
    ap.add_argument("--ranks", default="1024,4096")
    ap.add_argument("--json", default=str(JSON))
    ap.add_argument("--report", action="store_true")
    args = ap.parse_args()
    report(args) if args.report else measure(args)


if __name__ == "__main__":
    main()
