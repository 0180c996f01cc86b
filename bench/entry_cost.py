#!/usr/bin/env python3
"""Caracal's own instructions per call on calls that go to the library, and on empty calls (callgrind).

For each collective and element count, one rank runs N calls of MPI_<coll> with libcaracal
preloaded under valgrind's callgrind; the per-call cost is the inclusive instruction count of
Caracal's MPI_<coll> wrapper minus that of the library's PMPI_<coll> under it, divided by N.
The same program also runs without Caracal: `alone` is the library's own MPI_<coll>, the
figure to beat. Empty calls (0 bytes) do not reach the library under Caracal (it finishes
them itself, docs/collectives.md "Zero-byte calls"): their `library` column is 0 and
`through Caracal` is all Caracal's.
Instructions, not time: exact and repeatable on a shared machine, and what Caracal adds to a
small native call (a few ns per 10 instructions here). One rank: every call goes native by the
rules and nothing waits. Optional --before FILE: a JSON written by an earlier run (another
build) shown beside.

Usage: bench/entry_cost.py [--mpi openmpi|openmpi5|mpich|mpich5|impi] [--calls 100000] [--out NAME]
                           [--before JSON] [--lib SO] [--only COLL/BYTES,...]
--only takes any of entry_cost.c's collectives at any multiple of 8 bytes (e.g. alltoall/8).
Writes bench/results/NAME.md and .json (default NAME: entry-cost-<mpi>).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib  # noqa: E402
from caracal import mpilibs  # noqa: E402

ROOT = benchlib.ROOT
# (allreduce and barrier are left out: at one rank their rules pick the node segment, so their
# calls are Caracal's own algorithm, not a native call)
CELLS = [("bcast", 0), ("reduce", 0), ("allreduce", 0), ("gather", 0), ("scatter", 0), ("allgather", 0),
         ("alltoall", 0), ("scan", 0), ("exscan", 0), ("reduce_scatter_block", 0), ("allgatherv", 0),
         ("reduce_scatter", 0),
         ("bcast", 2), ("reduce", 2), ("gather", 2),
         ("scatter", 2), ("allgather", 2), ("alltoall", 2), ("scan", 2), ("exscan", 2),
         ("reduce_scatter_block", 2), ("gatherv", 2), ("scatterv", 2), ("allgatherv", 2), ("reduce_scatter", 2),
         ("alltoall", 1), ("gather", 1), ("gatherv", 1)]  # 8 B: the defaults check's smallest cells

ONLY_COLLS = sorted({c for c, _ in CELLS} | {"allreduce", "barrier"})


def inclusive(cg_file, pattern):
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", cg_file], capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s.*:(P?MPI_\w+) \[", line)
        if m and m.group(2) == pattern:
            return int(m.group(1).replace(",", ""))
    return None


def library_alone(cg_file, name):
    """The library's own MPI_<coll> (one function under either name: MPI_X is a weak alias of PMPI_X)."""
    found = [v for v in (inclusive(cg_file, name), inclusive(cg_file, "P" + name)) if v is not None]
    return max(found) if found else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mpi", default="openmpi", choices=mpilibs.NAMES)
    ap.add_argument("--calls", type=int, default=100000)
    ap.add_argument("--out", default=None)
    ap.add_argument("--before", default=None, help="JSON of an earlier run to show beside")
    ap.add_argument("--lib", default=None, help="a libcaracal.so other than the build's (e.g. an earlier commit's)")
    ap.add_argument("--only", default=None, metavar="COLL/BYTES,...", help="these rows only (e.g. gather/16,bcast/0)")
    a = ap.parse_args()
    mpi = mpilibs.get(a.mpi)
    lib = Path(a.lib) if a.lib else mpilibs.build_dir(a.mpi) / "lib" / "libcaracal.so"
    if not lib.exists():
        sys.exit(f"entry_cost: {lib} is missing: build it first (make build MPI={a.mpi})")
    before_doc = json.load(open(a.before)) if a.before else {}
    before = before_doc.get("cells", {})
    tmp = tempfile.mkdtemp(prefix="caracal-entry-")
    exe = os.path.join(tmp, "entry_cost")
    subprocess.run(f"{mpi.compiler_command()} -O2 -o {exe} {ROOT / 'bench/coll/entry_cost.c'}", shell=True, check=True,
                   env=mpi.environment())
    env = dict(mpi.environment(), LD_PRELOAD=str(lib), OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cells = {}
    cells_wanted = CELLS
    if a.only:
        cells_wanted = []
        for w in a.only.split(","):
            coll, _, b = w.partition("/")
            if coll not in ONLY_COLLS or not b.isdigit() or int(b) % 8:
                ap.error(f"--only: COLL/BYTES with COLL one of {', '.join(ONLY_COLLS)} and BYTES a multiple of 8, not '{w}'")
            cells_wanted.append((coll, int(b) // 8))
    for coll, count in cells_wanted:
        cg = os.path.join(tmp, f"cg.{coll}.{count}")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}", exe, coll, str(count),
                        str(a.calls)], env=env, capture_output=True, check=True)
        name = "MPI_" + coll.capitalize()
        whole, native = inclusive(cg, name), inclusive(cg, "P" + name)
        if native is None and count == 0:
            native = 0  # an empty call Caracal finished itself
        if whole is None or native is None:
            sys.exit(f"entry_cost: no callgrind count for {name} (is libcaracal built with symbols?)")
        cga = cg + ".alone"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={cga}", exe, coll, str(count),
                        str(a.calls)], env={k: v for k, v in env.items() if k != "LD_PRELOAD"},
                       capture_output=True, check=True)
        alone = library_alone(cga, name)
        key = f"{coll}/{count * 8}"
        cells[key] = {"native_ir": round(native / a.calls, 1), "caracal_ir": round((whole - native) / a.calls, 1),
                      "total_ir": round(whole / a.calls, 1),
                      "alone_ir": round(alone / a.calls, 1) if alone is not None else None}
        print(f"{key}: library {cells[key]['native_ir']}, Caracal's own {cells[key]['caracal_ir']}, "
              f"through Caracal {cells[key]['total_ir']}, library alone {cells[key]['alone_ir']}", file=sys.stderr)
    git = subprocess.run(["git", "-C", str(Path(lib).resolve().parent), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True)
    doc = {"schema": "caracal.entry-cost/1", "mpi": a.mpi, "calls": a.calls, "commit": git.stdout.strip(),
           "machine": benchlib.machine_description(), "cells": cells}
    name = a.out or f"entry-cost-{a.mpi}"
    (ROOT / "bench/results" / f"{name}.json").write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    lines = ["<!-- generated by bench/entry_cost.py -->",
             f"# Caracal's own instructions per call on calls that go to the library, and on empty calls ({a.mpi})", "",
             f"callgrind, one rank, {a.calls} calls per row, libcaracal from the checkout at {doc['commit']}: instructions per call of the "
             "library's PMPI function, and what Caracal adds around it (its wrapper, the entry point, the decision). "
             "Instructions are exact and do not depend on the machine's load. `alone`: the same calls without Caracal "
             "(the library's MPI function); `through Caracal`: Caracal's MPI function, the library's part included; "
             "0-byte calls do not reach the library under Caracal (`library` 0)." +
             (f" `before`: the same run with libcaracal at {before_doc.get('commit', '?')}." if a.before else ""), "",
             "| collective | bytes | alone | through Caracal | ratio | library | Caracal's own" + (" | before |" if before else " |"),
             "|---|---:|---:|---:|---:|---:|---:" + ("|---:|" if before else "|")]
    for key, c in cells.items():
        coll, b = key.split("/")
        ratio = f"{c['total_ir'] / c['alone_ir']:.2f}" if c.get("alone_ir") else "-"
        row = f"| {coll} | {b} | {c.get('alone_ir', '-')} | {c['total_ir']} | {ratio} | {c['native_ir']} | {c['caracal_ir']}"
        if before:
            row += f" | {before.get(key, {}).get('caracal_ir', '-')}"
        lines.append(row + " |")
    (ROOT / "bench/results" / f"{name}.md").write_text("\n".join(lines) + "\n")
    print(f"wrote bench/results/{name}.md", file=sys.stderr)


if __name__ == "__main__":
    main()
