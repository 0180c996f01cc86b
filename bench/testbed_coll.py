#!/usr/bin/env python3
"""Hierarchical (Caracal, forced p2p algorithms over the host hierarchy) vs flat native
collectives on the emulated-host testbed (caracal testbed; needs root): 2 hosts x 2 ranks
by default. Each launch of bench/coll/coll_bench.c times Caracal (MPI_*) and the native
library (PMPI_*) alternately in the same process (medians of --reps repeats), so the two
columns of a row share the machine's state. Native peers: Open MPI's default (tuned) with
mpi_yield_when_idle 1 (the testbed's default when ranks outnumber cores), Open MPI with
coll_han (its hierarchical component) selected, and MPICH. Launches are interleaved
across --rounds; the table shows the median over rounds and the spread (min-max).

Writes bench/results/testbed_coll.json (every row) and bench/results/testbed_coll.md.
Usage (root): bench/testbed_coll.py [--hosts 2] [--ppn 2] [--rounds 2] [--reps 5]
              [--max-bytes 65536] [--scale 0.2] [--peers ompi,han,mpich]
Every host here shares the machine's cores: the table records the load average and
whether ranks outnumber cores.
"""
import argparse, json, os, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = {"openmpi": ("build", "mpicc.openmpi"), "mpich": ("build-mpich", "mpicc.mpich")}
FORCE = ["CARACAL_BARRIER=hier:2", "CARACAL_BCAST=knomial:2", "CARACAL_REDUCE=knomial:2",
         "CARACAL_ALLREDUCE=recdbl:2@-64k,ring:2"]
PEERS = {  # name: (library, native-side environment)
    "ompi": ("openmpi", []),
    "han": ("openmpi", ["OMPI_MCA_coll_han_priority=100"]),
    "mpich": ("mpich", []),
}
NAME = "benchcoll"


def cli(*args, timeout=600):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    return subprocess.run([sys.executable, "-m", "caracal", *args], capture_output=True, text=True,
                          env=env, timeout=timeout)


def bench_exe(lib):
    build, cc = BUILD[lib]
    exe = os.path.join(ROOT, build, "coll_bench")
    src = os.path.join(ROOT, "bench/coll/coll_bench.c")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        subprocess.run([cc, "-O2", "-o", exe, src], check=True)
    return exe


def launch(peer, a):
    lib, native_env = PEERS[peer]
    args = ["testbed", "run", "--name", NAME, "-n", str(a.hosts * a.ppn), "--ppn", str(a.ppn), "--mpi", lib,
            "--timeout", "120"]
    for e in FORCE + native_env:
        args += ["--env", e]
    args += ["--", bench_exe(lib), str(a.reps), str(a.max_bytes), str(a.scale)]
    p = cli(*args, timeout=200)
    if p.returncode:
        print(f"testbed_coll: {peer} failed ({p.returncode}): {p.stderr[-400:]}", file=sys.stderr)
        return []
    return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=2)
    ap.add_argument("--ppn", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--max-bytes", type=int, default=65536)
    ap.add_argument("--scale", type=float, default=0.2)
    ap.add_argument("--peers", default="ompi,han,mpich")
    a = ap.parse_args()
    peers = a.peers.split(",")
    p = cli("testbed", "up", "--name", NAME, "--hosts", str(a.hosts))
    if p.returncode:
        sys.exit(f"testbed_coll: testbed up failed: {p.stderr.strip()}")
    rows, load = [], [os.getloadavg()[0]]
    t0 = time.time()
    try:
        for rnd in range(a.rounds):
            order = peers if rnd % 2 == 0 else peers[::-1]   # interleaved, alternating order
            for peer in order:
                for r in launch(peer, a):
                    rows.append(dict(r, peer=peer, round=rnd))
                load.append(os.getloadavg()[0])
    finally:
        cli("testbed", "down", "--name", NAME)
    meta = {"hosts": a.hosts, "ppn": a.ppn, "cores": os.cpu_count(), "oversubscribed": a.hosts * a.ppn > os.cpu_count(),
            "rounds": a.rounds, "reps": a.reps, "load_avg_1min": load, "seconds": round(time.time() - t0, 1),
            "caracal_rules": FORCE}
    out = os.path.join(ROOT, "bench/results")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "testbed_coll.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    lines = [f"# Hierarchical vs flat on the testbed: {a.hosts} hosts x {a.ppn} ranks",
             "",
             f"{a.hosts * a.ppn} ranks on {os.cpu_count()} cores (oversubscribed: {meta['oversubscribed']}); "
             f"load average {min(load):.1f}-{max(load):.1f}; {a.rounds} interleaved rounds x {a.reps} repeats; "
             f"Caracal: {' '.join(FORCE)}. us per call, median over rounds [min-max]; ratio = native / Caracal "
             "(> 1: Caracal faster). ompi = Open MPI tuned with mpi_yield_when_idle 1; han = Open MPI coll_han; "
             "mpich = MPICH 4.0.2 defaults (its device reduce is wrong on split communicators across hosts, "
             "docs/testbed.md; not exercised here: MPI_COMM_WORLD only).",
             "",
             "| peer | collective | bytes | native us | Caracal us | ratio |",
             "|---|---|---|---|---|---|"]
    keys = sorted({(r["peer"], r["coll"], r["bytes"]) for r in rows}, key=lambda k: (peers.index(k[0]), k[1], k[2]))
    for peer, coll, nbytes in keys:
        sel = [r for r in rows if (r["peer"], r["coll"], r["bytes"]) == (peer, coll, nbytes)]
        nat = [r["native_us"] for r in sel]
        car = [r["caracal_us"] for r in sel]
        lines.append(f"| {peer} | {coll} | {nbytes} | {statistics.median(nat):.1f} [{min(nat):.1f}-{max(nat):.1f}] | "
                     f"{statistics.median(car):.1f} [{min(car):.1f}-{max(car):.1f}] | "
                     f"{statistics.median(nat) / statistics.median(car):.2f} |")
    with open(os.path.join(out, "testbed_coll.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
