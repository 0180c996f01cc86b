#!/usr/bin/env python3
"""TCP connections between emulated hosts opened by collectives (MC-MPI's O(n^2)
concern, third source document): native flat collectives vs Caracal's hierarchical
ones, counted from the kernel's socket tables while the job runs.

A `caracal testbed` (--name conn, 8 hosts, 1 link). For each library (Open MPI, MPICH),
layout (hosts x ranks per host), collective (none = MPI_Init only, barrier, bcast,
reduce, allreduce, allgather, alltoall) and side (native: the library alone; caracal:
libcaracal preloaded with every family forced onto its hierarchical algorithm by rule),
one launch of bench/coll/conn_coll.c: ITERS calls (bcast and reduce rotate the root),
then a pause until the sampler has read every host once more. Meanwhile `ip netns exec <host> ss -tnpH` runs in every host namespace
every --interval seconds. A connection is counted when its two ends are on different
hosts (10.233.* addresses) and it belongs to a rank (by pid; the ranks print theirs);
the launchers' own connections (orted, hydra proxies) are counted apart. "opened" is
the union over the samples until the first rank starts MPI_Finalize (the library may
connect again to close its endpoints, seen with MPICH/UCX; counted apart as
"+finalize"). Rank pairs: distinct pairs of ranks joined by at least one connection.

Writes bench/results/connections.{json,md,png}. Needs root. Usage:
  bench/connections.py [--layouts 4x1,4x2,8x1] [--mpis openmpi,mpich] [--colls ...]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

from benchlib import ROOT, machine_description, progress, write_results

COLLS = ["none", "barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall"]
# Caracal's hierarchical algorithm of each family (docs/collectives.md), forced by rule
CARACAL_RULES = ["CARACAL_BARRIER=hier", "CARACAL_BCAST=knomial:2", "CARACAL_REDUCE=knomial:2",
                 "CARACAL_ALLREDUCE=recdbl:2", "CARACAL_ALLGATHER=hier", "CARACAL_ALLTOALL=hier"]
BUILD = {"openmpi": ("build", "mpicc.openmpi"), "mpich": ("build-mpich", "mpicc.mpich")}
SS_LINE = re.compile(r"^(\S+)\s+\d+\s+\d+\s+(\S+):(\d+)\s+(\S+):(\d+)\s*(.*)$")
PID = re.compile(r'\("([^"]*)",pid=(\d+),fd=\d+\)')
RANK_LINE = re.compile(r"conn_coll rank=(\d+) pid=(\d+) host=(\S+)")


def cli(*args, timeout=600):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.run([sys.executable, "-m", "caracal", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=timeout)


def program(lib):
    build, cc = BUILD[lib]
    exe = ROOT / build / "conn_coll"
    src = ROOT / "bench" / "coll" / "conn_coll.c"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        subprocess.run([cc, "-O2", "-o", str(exe), str(src)], check=True)
    return exe


def parse_ss(text):
    """`ss -tnpH` lines -> [(state, (ip, port), (ip, port), [(command, pid)...])]."""
    out = []
    for line in text.splitlines():
        m = SS_LINE.match(line.strip())
        if not m:
            continue
        owners = [(c, int(p)) for c, p in PID.findall(m.group(6))]
        out.append((m.group(1), (m.group(2), int(m.group(3))), (m.group(4), int(m.group(5))), owners))
    return out


def host_of(ip):
    """10.233.K.(I+1) -> host I; None for any other address (loopback...)."""
    parts = ip.split(".")
    if len(parts) == 4 and parts[:2] == ["10", "233"]:
        return int(parts[3]) - 1
    return None


class Sampler(threading.Thread):
    """Reads every host's socket table until stopped; keeps each cross-host socket end
    with its owner pids and the time it was first seen."""

    def __init__(self, spaces, interval):
        super().__init__(daemon=True)
        self.spaces, self.interval = spaces, interval
        self.ends = {}          # (local, peer) -> (first seen, pids, commands)
        self.samples = 0
        self.stop = threading.Event()
        self.lock = threading.Lock()

    def sample(self):
        with self.lock:
            self._sample()

    def _sample(self):
        now = time.monotonic()
        for ns in self.spaces:
            p = subprocess.run(["ip", "netns", "exec", ns, "ss", "-tnpH"], capture_output=True, text=True)
            for state, local, peer, owners in parse_ss(p.stdout):
                hl, hp = host_of(local[0]), host_of(peer[0])
                if hl is None or hp is None or hl == hp:
                    continue
                key = (local, peer)
                if key not in self.ends:
                    self.ends[key] = (now, {pid for _, pid in owners}, {c for c, _ in owners})
                else:
                    self.ends[key][1].update(pid for _, pid in owners)
                    self.ends[key][2].update(c for c, _ in owners)
        self.samples += 1

    def run(self):
        while not self.stop.is_set():
            self.sample()
            self.stop.wait(self.interval)


def count(ends, rank_of, until=None):
    """Connections (each counted once, from either end) and rank pairs among the socket
    ends first seen before `until`."""
    conns, launcher, pairs = set(), set(), set()
    by_key = {k: v for k, v in ends.items() if until is None or v[0] < until}
    for (local, peer), (_, pids, _) in by_key.items():
        conn = tuple(sorted([local, peer]))
        ranks = {rank_of[p] for p in pids if p in rank_of}
        other = ends.get((peer, local))
        other_ranks = {rank_of[p] for p in other[1] if p in rank_of} if other else set()
        if ranks or other_ranks:
            conns.add(conn)
            if ranks and other_ranks:
                pairs.add(tuple(sorted([min(ranks), min(other_ranks)])))
        else:
            launcher.add(conn)
    return {"connections": len(conns), "rank_pairs": len(pairs), "launcher_connections": len(launcher),
            "pairs": sorted(pairs)}


def one_run(a, lib, hosts, ppn, coll, side):
    n = hosts * ppn
    spaces = [f"ctb-{a.name}-h{i}" for i in range(hosts)]
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="conn.") as d:
        os.chmod(d, 0o777)
        args = ["testbed", "run", "--name", a.name, "-n", n, "--ppn", ppn, "--mpi", lib, "--timeout", a.timeout]
        if side == "native":
            args.append("--native")
        else:
            for r in CARACAL_RULES + ["CARACAL_LOG=algo"]:
                args += ["--env", r]
        args += ["--", program(lib), coll, a.bytes, a.iters, a.hold_ms, d]
        sampler = Sampler(spaces, a.interval)
        sampler.start()
        env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
        proc = subprocess.Popen([sys.executable, "-m", "caracal", *map(str, args)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
        # every rank done with the collectives (held.R): one more full reading of every
        # host, then `go` lets them finalize; what was first seen up to that reading (go_at)
        # was opened before MPI_Finalize
        go_at, go = None, False
        out_parts = []
        reader = threading.Thread(target=lambda: out_parts.append(proc.communicate()), daemon=True)
        reader.start()
        while reader.is_alive():
            names = os.listdir(d)
            if not go and sum(f.startswith("held.") for f in names) == n:
                sampler.sample()
                go_at = time.monotonic()
                open(os.path.join(d, "go"), "w").close()
                go = True
            reader.join(0.02)
        sampler.stop.set()
        sampler.join()
        out, err = out_parts[0]
        held = len([f for f in os.listdir(d) if f.startswith("held.")])
    rank_of = {int(m.group(2)): int(m.group(1)) for m in RANK_LINE.finditer(out)}
    row = {"mpi": lib, "hosts": hosts, "ppn": ppn, "ranks": n, "coll": coll, "side": side,
           "rc": proc.returncode, "ranks_seen": len(rank_of), "held": held, "samples": sampler.samples}
    row["go"] = go
    if proc.returncode != 0 or len(rank_of) != n or go_at is None:
        row["error"] = (err or out)[-1500:]
        return row
    row.update(count(sampler.ends, rank_of, until=go_at))
    total = count(sampler.ends, rank_of)
    row["finalize_extra"] = total["connections"] - row["connections"]
    levels = re.findall(r"levels=(\S+)", err)
    row["caracal_levels"] = levels[0] if levels else ""
    # CARACAL_LOG=algo: "caracal[R]: FAMILY ALG bytes=.. ranks=.. levels=.." per call
    row["caracal_algos"] = sorted({f"{f} {g}" for f, g in re.findall(r"caracal\[\d+\]: (\w+) (\w+)\S* bytes=", err)})
    return row


def cross_host_pairs(hosts, ppn):
    n = hosts * ppn
    return sum(1 for p in range(n) for q in range(p + 1, n) if p // ppn != q // ppn)


def markdown(rows, meta, a):
    L = ["# TCP connections between emulated hosts: native flat vs Caracal hierarchical collectives", "",
         f"caracal testbed, 1 link per host; ranks placed PPN per host in host order. One launch per cell: "
         f"{a.iters} calls of the collective ({a.bytes} bytes per message / block; bcast and reduce rotate the "
         f"root), then a pause until every host's sockets were read once more; `ss -tnpH` in every host "
         f"namespace every {a.interval} s. "
         "Cell: connections between ranks on different hosts opened before MPI_Finalize / distinct rank pairs "
         "they join (a connection is counted once, from either end; the launchers' own connections are not "
         "counted: column 'launcher'). '+f': further connections seen during MPI_Finalize. "
         "All-pairs bound: the number of rank pairs on different hosts. Caracal: libcaracal preloaded, "
         f"{' '.join(CARACAL_RULES)}; its hierarchy is built on the first collective with the library's own "
         "(native) Comm_dup/split/allgather, whose connections are included. "
         f"Load average {min(meta['loads']):.2f}-{max(meta['loads']):.2f}; {meta['date']}.", ""]
    keys = sorted({(r["mpi"], r["hosts"], r["ppn"]) for r in rows}, key=lambda k: (k[0], k[1], k[2]))
    for lib, hosts, ppn in keys:
        bound = cross_host_pairs(hosts, ppn)
        L += [f"## {lib}, {hosts} hosts x {ppn} rank(s) = {hosts * ppn} ranks (rank pairs on different hosts: "
              f"{bound}; host pairs: {hosts * (hosts - 1) // 2})", "",
              "| collective | native conns / pairs | Caracal conns / pairs | launcher (native, Caracal) | Caracal algorithm; levels |",
              "|---|---|---|---|---|"]
        for coll in COLLS:
            cell, launch, lv = {}, [], ""
            for side in ("native", "caracal"):
                r = next((x for x in rows if (x["mpi"], x["hosts"], x["ppn"], x["coll"], x["side"]) ==
                          (lib, hosts, ppn, coll, side)), None)
                if r is None:
                    cell[side] = "-"
                    continue
                if "error" in r:
                    cell[side] = f"failed (rc {r['rc']})"
                    launch.append("?")
                    continue
                extra = f" +f{r['finalize_extra']}" if r["finalize_extra"] else ""
                cell[side] = f"{r['connections']} / {r['rank_pairs']}{extra}"
                launch.append(str(r["launcher_connections"]))
                if side == "caracal":
                    lv = "; ".join(x for x in (", ".join(r.get("caracal_algos", [])), r.get("caracal_levels", "")) if x)
            if cell.get("native", "-") == "-" and cell.get("caracal", "-") == "-":
                continue
            L.append(f"| {coll} | {cell['native']} | {cell['caracal']} | {', '.join(launch)} | {lv} |")
        L.append("")
    return "\n".join(L) + "\n"


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    keys = sorted({(r["mpi"], r["hosts"], r["ppn"]) for r in rows})
    fig, axes = plt.subplots(1, len(keys), figsize=(4.2 * len(keys), 3.8), squeeze=False)
    for ax, (lib, hosts, ppn) in zip(axes[0], keys):
        xs = range(len(COLLS))
        for off, side in ((-0.2, "native"), (0.2, "caracal")):
            ys = []
            for coll in COLLS:
                r = next((x for x in rows if (x["mpi"], x["hosts"], x["ppn"], x["coll"], x["side"]) ==
                          (lib, hosts, ppn, coll, side) and "error" not in x), None)
                ys.append(r["connections"] if r else 0)
            ax.bar([x + off for x in xs], ys, width=0.4, label=side)
        ax.axhline(cross_host_pairs(hosts, ppn), ls="--", color="grey", lw=1, label="rank pairs on different hosts")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(COLLS, rotation=45, ha="right")
        ax.set_title(f"{lib} {hosts}x{ppn}")
        ax.set_ylabel("cross-host TCP connections")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--name", default="conn", help="testbed name (default conn; brought up and down here)")
    ap.add_argument("--layouts", default="4x1,4x2,8x1", help="HOSTSxPPN list (default 4x1,4x2,8x1)")
    ap.add_argument("--mpis", default="openmpi,mpich")
    ap.add_argument("--colls", default=",".join(COLLS))
    ap.add_argument("--bytes", type=int, default=1024)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--hold-ms", type=int, default=30000, help="longest pause before MPI_Finalize (default 30000)")
    ap.add_argument("--interval", type=float, default=0.2)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--keep", action="store_true", help="leave the testbed up")
    ap.add_argument("--out", default="connections")
    a = ap.parse_args()
    layouts = [tuple(int(x) for x in s.split("x")) for s in a.layouts.split(",")]
    mpis, colls = a.mpis.split(","), a.colls.split(",")
    hosts = max(h for h, _ in layouts)
    p = cli("testbed", "up", "--name", a.name, "--hosts", hosts, timeout=120)
    if p.returncode:
        raise SystemExit(f"connections: testbed up failed: {p.stderr.strip()}")
    meta = machine_description()
    loads, rows = [], []
    jobs = [(lib, h, ppn, coll, side) for lib in mpis for h, ppn in layouts for coll in colls
            for side in ("native", "caracal")]
    t0 = time.time()
    try:
        for i, job in enumerate(jobs):
            loads.append(os.getloadavg()[0])
            rows.append(one_run(a, *job))
            progress(i + 1, len(jobs), " ".join(map(str, job)))
    finally:
        if not a.keep:
            cli("testbed", "down", "--name", a.name, timeout=120)
    meta.update(loads=loads, seconds=round(time.time() - t0, 1))
    md = markdown(rows, meta, a)
    doc = {"meta": meta, "rules": CARACAL_RULES, "bytes": a.bytes, "iters": a.iters, "hold_ms": a.hold_ms,
           "rows": rows}
    write_results(a.out, doc, md)
    plot(rows, ROOT / "bench" / "results" / f"{a.out}.png")
    print(md)


if __name__ == "__main__":
    main()
