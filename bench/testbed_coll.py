#!/usr/bin/env python3
"""Hierarchical vs flat collectives between emulated hosts (issue 13, first experiment).

On the `caracal testbed` (network namespaces: shared memory inside a host, real TCP over
veth between hosts; needs root), each launch runs caracal-tune-bench for one collective:
Caracal's hierarchical schedules (selected per call with caracal_set_rules) and the library
alone (`pmpi`: PMPI_* called directly, nothing of Caracal in the way) are timed interleaved
in one process, in a fresh random order per repetition, IMB-style (calls back to back).
Peers, one launch each per round: `ompi` Open MPI 4.1.4 with its default coll_tuned decision
(mpi_yield_when_idle 1: the testbed sets it when ranks outnumber cores, the best native
configuration here), `han` the same with its hierarchical component coll_han selected
(OMPI_MCA_coll_han_priority=100), `mpich` MPICH 4.0.2 defaults (ch4/UCX; no setting of the
library stops its busy polling). Caracal's candidates run in each peer's launch, so every
ratio compares two columns of one launch; rounds alternate the peers' order.

Shapes: --shapes HxP (hosts x ranks per host), and --scaling H1,H2,.. at --scaling-ppn
(latency against the number of hosts, the shape of the first source document's plots).
Writes bench/results/testbed-hier.md, .json (medians only) and testbed-hier-scaling.png.

Usage (root): bench/testbed_coll.py [--shapes 4x2,2x4] [--scaling 1,2,4,8] [--scaling-ppn 2]
        [--sizes 8,4K,64K,4M] [--scaling-sizes 8,4K] [--rounds 3] [--reps 11]
        [--peers ompi,han,mpich] [--colls barrier,bcast,...]
This machine has 2 cores: every shape above 2 ranks is oversubscribed, recorded per row.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ROOT = benchlib.ROOT
NAME = "benchhier"
# Caracal's hierarchical schedules per family: rules strings as CARACAL_<COLL> takes them
# ("node/shm" = shared memory inside each host, the rest = the algorithm between hosts).
CARACAL = {
    "barrier": ["hier", "node/shm hier"],
    "bcast": ["knomial:2", "node/shm knomial:2", "node/shm knomial:4"],
    "reduce": ["knomial:2", "node/shm knomial:2"],
    "allreduce": ["node/shm recdbl", "node/shm ring", "recdbl"],
    "allgather": ["hier", "ring", "bruck"],
    "alltoall": ["hier", "pairwise", "bruck"],
}
PEERS = {"ompi": ("openmpi", []), "han": ("openmpi", ["OMPI_MCA_coll_han_priority=100"]), "mpich": ("mpich", [])}
SIZES = {"K": 1 << 10, "M": 1 << 20}


def parse_size(t):
    t = t.strip().upper()
    return int(t[:-1]) * SIZES[t[-1]] if t[-1] in SIZES else int(t)


def cli(*args, timeout):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.run([sys.executable, "-m", "caracal", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


def exe(lib):
    return str(ROOT / ("build" if lib == "openmpi" else "build-mpich") / "bin" / "caracal-tune-bench")


def launch(peer, hosts, ppn, coll, sizes, a, seed):
    lib, env = PEERS[peer]
    args = ["testbed", "run", "--name", NAME, "-n", str(hosts * ppn), "--ppn", str(ppn), "--mpi", lib,
            "--native", "--timeout", str(a.timeout)]
    for e in env:
        args += ["--env", e]
    sz = [0] if coll == "barrier" else sizes
    args += ["--", exe(lib), coll, "--sizes", ",".join(map(str, sz)), "--cands", ",".join(["pmpi"] + CARACAL[coll]),
             "--reps", str(a.reps), "--target-us", str(a.target_us), "--seed", str(seed)]
    try:
        p = cli(*args, timeout=a.timeout + 60)
    except subprocess.TimeoutExpired:
        return [], "timeout"
    cells = [json.loads(ln) for ln in p.stdout.splitlines() if ln.startswith("{") and "tune-cell" in ln]
    if p.returncode or not cells:
        err = [ln for ln in p.stderr.splitlines() if ln.strip()]
        return cells, f"exit {p.returncode}: {err[-1][:200] if err else 'no output'}"
    return cells, None


def testbed(hosts):
    cli("testbed", "down", "--name", NAME, timeout=120)
    p = cli("testbed", "up", "--name", NAME, "--hosts", str(hosts), timeout=120)
    if p.returncode:
        sys.exit(f"testbed_coll: testbed up failed: {p.stderr.strip()}")


def measure(shapes, sizes, colls, a, label):
    """rows: one per (shape, peer, coll, bytes, round) with the pmpi and every Caracal median."""
    rows, failures = [], []
    total = len(shapes) * a.rounds * len(a.peers) * len(colls)
    done = 0
    for hosts, ppn in shapes:
        testbed(hosts)
        try:
            for rnd in range(a.rounds):
                order = a.peers if rnd % 2 == 0 else a.peers[::-1]
                for peer in order:
                    for coll in colls:
                        benchlib.progress(done, total, f"{label} {hosts}x{ppn} {peer} {coll}")
                        load = os.getloadavg()[0]
                        cells, err = launch(peer, hosts, ppn, coll, sizes, a, seed=1 + rnd)
                        done += 1
                        if err:
                            failures.append(dict(hosts=hosts, ppn=ppn, peer=peer, coll=coll, round=rnd, error=err))
                        by = {}
                        for c in cells:
                            by.setdefault(c["bytes"], {})[c["cand"]] = c["median_us"]
                        for b, med in sorted(by.items()):
                            if "pmpi" in med:
                                rows.append(dict(hosts=hosts, ppn=ppn, peer=peer, coll=coll, bytes=b, round=rnd,
                                                 load=round(load, 2), native=med.pop("pmpi"), caracal=med))
        finally:
            cli("testbed", "down", "--name", NAME, timeout=120)
    benchlib.progress(total, total, label)
    return rows, failures


def summarise(rows):
    """(hosts, ppn, coll, bytes) -> {peer: {native, caracal_best, best_cand, ratio, spread}}.
    ratio = Caracal's best schedule / the peer, both medians over rounds of one launch's
    medians (< 1: Caracal faster); spread = min-max of the per-round ratios."""
    out = {}
    keys = sorted({(r["hosts"], r["ppn"], r["coll"], r["bytes"], r["peer"]) for r in rows})
    for h, p, coll, b, peer in keys:
        sel = [r for r in rows if (r["hosts"], r["ppn"], r["coll"], r["bytes"], r["peer"]) == (h, p, coll, b, peer)]
        cands = sorted({c for r in sel for c in r["caracal"]})
        med = {c: statistics.median([r["caracal"][c] for r in sel if c in r["caracal"]]) for c in cands}
        best = min(med, key=med.get)
        per_round = [r["caracal"][best] / r["native"] for r in sel if best in r["caracal"] and r["native"] > 0]
        nat = statistics.median([r["native"] for r in sel])
        out.setdefault((h, p, coll, b), {})[peer] = dict(
            native_us=round(nat, 2), caracal_us=round(med[best], 2), best=best,
            ratio=round(med[best] / nat, 3) if nat else None,
            spread=[round(min(per_round), 3), round(max(per_round), 3)] if per_round else None,
            all_caracal={c: round(v, 2) for c, v in med.items()}, rounds=len(sel))
    return out


def fmt_b(b):
    return "-" if b == 0 else (f"{b >> 20}M" if b >= 1 << 20 and b % (1 << 20) == 0 else
                               f"{b >> 10}K" if b >= 1024 and b % 1024 == 0 else str(b))


def table(summary, peers, shapes):
    lines = []
    for hosts, ppn in shapes:
        lines += [f"### {hosts} hosts x {ppn} ranks ({hosts * ppn} ranks on {os.cpu_count()} cores: "
                  f"{'oversubscribed' if hosts * ppn > (os.cpu_count() or 1) else 'a core each'})", "",
                  "| collective | bytes | " + " | ".join(f"{p} us" for p in peers) +
                  " | Caracal us (schedule) | " + " | ".join(f"vs {p} [spread]" for p in peers) + " | vs best peer |",
                  "|---|---|" + "---|" * (2 * len(peers) + 2)]
        for (h, p, coll, b), per in sorted(summary.items(), key=lambda kv: (list(CARACAL).index(kv[0][2]), kv[0][3])):
            if (h, p) != (hosts, ppn):
                continue
            ref = per.get("ompi") or next(iter(per.values()))
            nat = " | ".join(f"{per[q]['native_us']:.1f}" if q in per else "-" for q in peers)
            rat = " | ".join(f"{per[q]['ratio']:.2f} [{per[q]['spread'][0]:.2f}-{per[q]['spread'][1]:.2f}]"
                             if q in per and per[q]["spread"] else "-" for q in peers)
            best_peer = min((per[q]["native_us"], q) for q in per)
            lines.append(f"| {coll} | {fmt_b(b)} | {nat} | {ref['caracal_us']:.1f} ({ref['best']}) | {rat} | "
                         f"{ref['caracal_us'] / best_peer[0]:.2f} ({best_peer[1]}) |")
        lines.append("")
    return lines


def plot(summary, path, peers):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    colls = sorted({k[2] for k in summary}, key=list(CARACAL).index)
    sizes = sorted({k[3] for k in summary})
    fig, axes = plt.subplots(len(sizes), len(colls), figsize=(3.2 * len(colls), 2.8 * len(sizes)), squeeze=False)
    for i, b in enumerate(sizes):
        for j, coll in enumerate(colls):
            ax = axes[i][j]
            pts = sorted((k[0], v) for k, v in summary.items() if k[2] == coll and k[3] == b)
            if not pts:
                ax.axis("off")
                continue
            hs = [h for h, _ in pts]
            for q in peers:
                ys = [v[q]["native_us"] if q in v else float("nan") for _, v in pts]
                ax.plot(hs, ys, marker="o", label=f"{q} (native)")
            ys = [(v.get("ompi") or next(iter(v.values())))["caracal_us"] for _, v in pts]
            ax.plot(hs, ys, marker="s", linewidth=2.5, color="black", label="Caracal (Open MPI launch)")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xticks(hs)
            ax.set_xticklabels(map(str, hs))
            ax.set_title(f"{coll} {fmt_b(b) if b else ''}", fontsize=9)
            ax.set_xlabel("emulated hosts", fontsize=8)
            ax.set_ylabel("us per call", fontsize=8)
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle("Latency against the number of emulated hosts (median over rounds; log scales)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", default="4x2,2x4", help="hosts x ranks per host, comma-separated ('' for none)")
    ap.add_argument("--scaling", default="1,2,4,8", help="host counts for the scaling series ('' for none)")
    ap.add_argument("--scaling-ppn", type=int, default=2)
    ap.add_argument("--sizes", default="8,4K,64K,4M")
    ap.add_argument("--scaling-sizes", default="8,4K")
    ap.add_argument("--colls", default=",".join(CARACAL))
    ap.add_argument("--peers", default="ompi,han,mpich")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--target-us", type=int, default=3000, help="calls per repetition calibrated to this time")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per launch")
    ap.add_argument("--out", default="testbed-hier")
    a = ap.parse_args()
    a.peers = a.peers.split(",")
    colls = a.colls.split(",")
    bad = [c for c in colls if c not in CARACAL] + [p for p in a.peers if p not in PEERS]
    if bad:
        sys.exit(f"testbed_coll: unknown collective or peer: {', '.join(bad)}")
    shapes = [tuple(map(int, s.split("x"))) for s in a.shapes.split(",") if s]
    scaling = [(int(h), a.scaling_ppn) for h in a.scaling.split(",") if h]
    meta = dict(benchlib.machine_description(), rounds=a.rounds, reps=a.reps, target_us=a.target_us,
                caracal_schedules=CARACAL, peers={p: PEERS[p] for p in a.peers})
    t0 = time.time()
    rows, failures = measure(shapes, [parse_size(s) for s in a.sizes.split(",")], colls, a, "shapes")
    srows, sfail = measure(scaling, [parse_size(s) for s in a.scaling_sizes.split(",")], colls, a, "scaling")
    meta.update(seconds=round(time.time() - t0), load_average_at_end=os.getloadavg())
    summary, ssummary = summarise(rows), summarise(srows)
    loads = [r["load"] for r in rows + srows] or [0]
    doc = {"schema": "caracal.testbed-hier/1", "meta": meta, "failures": failures + sfail,
           "shapes": [dict(zip(("hosts", "ppn", "coll", "bytes"), k), peers=v) for k, v in summary.items()],
           "scaling": [dict(zip(("hosts", "ppn", "coll", "bytes"), k), peers=v) for k, v in ssummary.items()]}
    lines = [f"# Hierarchical (Caracal) vs flat and vs coll_han between emulated hosts", "",
             f"{meta['date']}; {os.cpu_count()} cores shared by all emulated hosts; load average at launch "
             f"{min(loads):.1f}-{max(loads):.1f}; {a.rounds} rounds (peers' order alternating) x {a.reps} repetitions "
             f"of ~{a.target_us} us of back-to-back calls; `bench/testbed_coll.py`.", "",
             "Columns: each peer's own time (us per call, median over rounds); Caracal's fastest hierarchical "
             "schedule in the Open MPI launch; `vs X` = Caracal / X measured in X's own launches (< 1: Caracal "
             "faster; spread = min-max over rounds); `vs best peer` = Caracal (Open MPI launch) / the fastest "
             "peer's time. Open MPI with mpi_yield_when_idle 1 wherever ranks outnumber cores.", ""]
    lines += table(summary, a.peers, shapes)
    if ssummary:
        lines += ["## Latency against the number of hosts", "", f"![scaling]({a.out}-scaling.png)", ""]
        lines += table(ssummary, a.peers, scaling)
        plot(ssummary, ROOT / "bench/results" / f"{a.out}-scaling.png", a.peers)
    if failures + sfail:
        lines += ["## Launches that failed", ""] + [f"- {f}" for f in failures + sfail] + [""]
    out = ROOT / "bench/results"
    (out / f"{a.out}.json").write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    (out / f"{a.out}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
