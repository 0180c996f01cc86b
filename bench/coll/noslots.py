#!/usr/bin/env python3
"""Before/after for a communicator past the node's shm budget (issue 14 item 1): IMB's
pattern (bench/coll/many_comms.c: 40 live communicators, the 40th without data slots under the
default 32 MiB cap) with libcaracal of two builds preloaded in alternate launches, each
against the native library in the same launch. `before`: a build where a segment without
slots ran large bcast/reduce/allreduce by single copy; `after`: one where they go to the next
rule when single copy loses. Raw lines are appended to OUT.jsonl as they come, so a run split
in parts (one lock hold each) resumes; --table writes bench/results/NAME.md and .json.

  noslots.py --mpi openmpi --bin build/bin/many_comms --before A.so --after B.so --launches 2 --out F
  noslots.py --table --out F --name shm-noslots
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib  # noqa: E402


def run(args):
    done = 0
    if os.path.exists(args.out):
        with open(args.out) as f:
            done = sum(1 for line in f if '"launch"' in line and f'"mpi": "{args.mpi}"' in line)
    for k in range(done, 2 * args.launches):
        which = "before" if k % 2 == 0 else "after"
        lib = os.path.abspath(args.before if which == "before" else args.after)
        env = {"LD_PRELOAD": lib}
        env.update(dict(e.split("=", 1) for e in args.env))
        cmd = benchlib.mpiexec(args.mpi, 2, [args.bin, "40", str(args.reps), str(1 << 20)], env=env)
        load = os.getloadavg()
        p = benchlib.run_launch(cmd, 600)
        rows = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
        with open(args.out, "a") as f:
            f.write(json.dumps({"launch": k, "mpi": args.mpi, "which": which, "env": args.env, "rc": p.returncode,
                                "load": load, "time": time.strftime("%H:%M:%S"), "rows": rows}) + "\n")
        print(f"{args.mpi} {which} launch {k}: rc {p.returncode}, {len(rows)} rows, load {load[0]:.1f}", file=sys.stderr)


def table(args):
    launches = [json.loads(line) for line in open(args.out)]
    out = ["# A communicator past the shm budget: before/after (bench/coll/noslots.py)", "",
           "`bench/coll/many_comms.c` at 2 ranks: 40 live communicators, the 40th has no data slots",
           "under the default cap; bcast, reduce (double sum), allreduce of 64 KiB-1 MiB on the first",
           "(`comm 1`, slots) and the 40th, Caracal (default rules) against the native library in the",
           "same launch, 40 (64-256 KiB) or 16 (1 MiB) calls back to back per repeat. `before`: main at",
           "97840f1 (no slots: single copy whatever the switches); `after`: this branch (no slots:",
           "single copy only where it wins, else the next rule). Launches alternate before/after.",
           "Cell: median over launches of the Caracal/native ratio of medians (range over launches).", ""]
    for mpi in sorted({l["mpi"] for l in launches}):
        out += [f"## {mpi}", "", "| comm | coll | bytes | before | after |", "|---|---|---:|---|---|"]
        cells = {}
        for l in launches:
            if l["mpi"] != mpi:
                continue
            for r in l["rows"]:
                cells.setdefault((r["comm"], r["coll"], r["bytes"]), {}).setdefault(l["which"], []).append(r["ratio"])
        for (comm, coll, b), v in sorted(cells.items()):
            def fmt(xs):
                return f"**{statistics.median(xs):.2f}** ({min(xs):.2f}-{max(xs):.2f})" if xs else "-"
            out.append(f"| {comm} | {coll} | {b // 1024} KiB | {fmt(v.get('before', []))} | {fmt(v.get('after', []))} |")
        out += ["", "Load (1-minute average) at each launch: " +
                ", ".join(f"{l['which']} {l['load'][0]:.1f}" for l in launches if l["mpi"] == mpi), ""]
    doc = {"machine": benchlib.machine_description(), "launches": launches}
    benchlib.write_results(args.name, doc, "\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mpi", default="openmpi")
    ap.add_argument("--bin")
    ap.add_argument("--before")
    ap.add_argument("--after")
    ap.add_argument("--launches", type=int, default=2)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--out", required=True)
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--name", default="shm-noslots")
    args = ap.parse_args()
    if args.table:
        table(args)
    elif not (args.bin and args.before and args.after):
        ap.error("--bin, --before and --after are required to run")
    else:
        run(args)


if __name__ == "__main__":
    main()
