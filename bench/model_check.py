"""caracal model against measurement on this machine: fit the models to a fresh probe,
time Caracal's flat point-to-point algorithms with `caracal bench` (CARACAL_NODE_SIZE=1:
every rank its own node, so each schedule is the flat algorithm the model describes),
and tabulate predicted / measured.

  flock /work/bench.lock python3 bench/model_check.py [--mpi openmpi] [--procs 2,4,8]

Writes bench/results/model-check.md and .json (compact), keeping finished launches in a
work directory (--work DIR; a new one per run by default) so that a split run resumes when
given the same --work. An earlier run's launches are never picked up silently: a stale
probe or measurement from another day would be compared with today's model. Ranks above 2 share 2 cores here
(oversubscribed, yielding): the model knows nothing of that, and the table says so.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from benchlib import ROOT, machine_description, median, write_results

sys.path.insert(0, str(ROOT / "python"))
from caracal.model import fit, formulas as F, predict  # noqa: E402

# (collective, forced rules, model row) - flat: CARACAL_NODE_SIZE=1
CASES = [
    ("bcast", {"CARACAL_BCAST": "knomial:2"}, "binomial"),
    ("reduce", {"CARACAL_REDUCE": "knomial:2"}, "binomial"),
    ("allreduce", {"CARACAL_ALLREDUCE": "recdbl"}, "recdbl"),
    ("allreduce", {"CARACAL_ALLREDUCE": "ring"}, "ring"),
    ("barrier", {"CARACAL_BARRIER": "hier"}, "dissemination"),
    ("allgather", {"CARACAL_ALLGATHER": "ring"}, "ring"),
]
SIZES = [8, 4096, 65536, 1 << 20]
# on emulated hosts (--testbed NAME): Caracal's hierarchical schedules, point-to-point on
# both levels (the rule alone: knomial/recdbl/hier on every level), 2 ranks per host
HIER_CASES = [
    ("bcast", {"CARACAL_BCAST": "knomial:2"}, "hier"),
    ("reduce", {"CARACAL_REDUCE": "knomial:2"}, "hier"),
    ("allreduce", {"CARACAL_ALLREDUCE": "recdbl"}, "hier"),
    ("barrier", {"CARACAL_BARRIER": "hier"}, "hier"),
]
WORK = None  # the work directory (main: --work, or a new one)


def cli(*args, env=None):
    e = dict(os.environ, PYTHONPATH=str(ROOT / "python"), **(env or {}))
    p = subprocess.run([sys.executable, "-m", "caracal", *map(str, args)], capture_output=True, text=True, env=e,
                       timeout=900)
    if p.returncode:
        sys.exit(f"model_check: caracal {' '.join(map(str, args))} failed: {p.stderr.strip()[-400:]}")
    return p


def uptime():
    return open("/proc/loadavg").read().split()[:3]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpi", default="openmpi")
    ap.add_argument("--procs", default="2,4,8")
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--coll-json", metavar="FILE",
                    help="compare with the p2p rows of a bench/coll/run.py result (no new launches)")
    ap.add_argument("--testbed", metavar="NAME", help="also the hierarchical schedules on this testbed's hosts")
    ap.add_argument("--testbed-procs", default="4,8", help="ranks on the testbed, 2 per host (default 4,8)")
    ap.add_argument("--work", metavar="DIR", help="resume from the finished launches in DIR (default: a new directory)")
    a = ap.parse_args()
    global WORK
    if a.work:
        WORK = Path(a.work)
        WORK.mkdir(parents=True, exist_ok=True)
    else:
        import tempfile
        WORK = Path(tempfile.mkdtemp(prefix="caracal-model-check-"))
    print(f"model_check: launches kept in {WORK} (--work {WORK} resumes)", file=sys.stderr)
    if a.coll_json:
        return from_coll_json(a)
    loads = [uptime()]
    probes = []
    for mode in ("pingpong", "stream"):
        out = WORK / f"probe-{a.mpi}-{mode}.json"
        if not out.exists():
            cli("probe", "--mpi", a.mpi, "--mode", mode, "--min", "1", "--max", "4M" if mode == "pingpong" else "64K",
                "--no-perturb", "--json", out)
        probes.append(out)
    docs = {str(p): json.loads(p.read_text()) for p in probes}
    lv = fit.fit_levels(docs)["shm"]
    comp = fit.measure_compute()
    params = predict.Params(node=lv.hockney, top=lv.hockney, top_loggp=lv.loggp, compute=comp, node_size=1,
                            torus_dims=None)
    rows = []
    for P in [int(x) for x in a.procs.split(",")]:
        for coll, rules, model in CASES:
            tag = f"{coll}-{model}-{P}"
            out = WORK / f"bench-{a.mpi}-{tag}.json"
            if not out.exists():
                cli("bench", coll, "-n", P, "--mpi", a.mpi, "--sizes", ",".join(map(str, SIZES)),
                    "--reps", a.reps, "--json", out, env=dict(rules, CARACAL_NODE_SIZE="1"))
                loads.append(uptime())
            doc = json.loads(out.read_text())
            mod = next(m for m in predict.models(coll, params) if m.name == model)
            for pt in doc["points"]:
                if pt.get("median_us") is None:
                    continue
                m = 0 if coll == "barrier" else pt["bytes"]
                pred = mod.time(P, m)
                rows.append({"coll": coll, "model": model, "rules": rules, "procs": P, "bytes": m,
                             "measured_us": pt["median_us"], "p90_us": pt["p90_us"], "model_us": pred,
                             "rel_err": (pred - pt["median_us"]) / pt["median_us"]})
                if coll == "barrier":
                    break
    if a.testbed:
        rows += testbed_rows(a, lv, comp, loads)
    loads.append(uptime())
    doc = {"schema": "caracal.model-check/1", "mpi": a.mpi, "machine": machine_description(),
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "loadavg": loads,
           "fit": {"alpha_us": lv.hockney.alpha, "beta_us_per_byte": lv.hockney.beta, "L_us": lv.loggp.L,
                   "o_us": lv.loggp.o, "o_source": lv.o_source, "fit_points": lv.points,
                   "fit_max_rel_err": lv.max_rel_err},
           "net_fit": None if NET_FIT is None else {
               "alpha_us": NET_FIT.hockney.alpha, "beta_us_per_byte": NET_FIT.hockney.beta, "L_us": NET_FIT.loggp.L,
               "o_us": NET_FIT.loggp.o, "o_source": NET_FIT.o_source, "fit_max_rel_err": NET_FIT.max_rel_err},
           "compute": {"gamma_per_us": comp.gamma, "mem_bw_bytes_per_us": comp.mem_bw}, "rows": rows}
    write_results(f"model-check-{a.mpi}", doc, markdown(doc))


# bench/coll/run.py's p2p configuration on one node: knomial:2 trees on the node level, the
# top level a single rank, so allreduce is a node reduce + node bcast and barrier a k-nomial
# fan-in/fan-out: Caracal's hier schedules with node size = ranks
COLL_P2P = {"bcast": "binomial", "reduce": "binomial", "allreduce": "hier", "barrier": "hier"}


def from_coll_json(a):
    """Model against the committed bench/results/coll.json p2p rows of library a.mpi."""
    probe = WORK / f"probe-{a.mpi}-pingpong.json"
    stream = WORK / f"probe-{a.mpi}-stream.json"
    docs = {str(p): json.loads(p.read_text()) for p in (probe, stream) if p.exists()}
    if not docs:
        sys.exit(f"model_check: --coll-json fits the probe in --work DIR (probe-{a.mpi}-pingpong.json): none in {WORK}")
    lv = fit.fit_levels(docs)["shm"]
    comp = fit.measure_compute()
    src = json.loads(Path(a.coll_json).read_text())
    cells = {}  # repeated runs of one cell (the 2-rank rows) pooled by their median
    for r in src["rows"]:
        if r["lib"] == a.mpi and r["config"] == "p2p" and r["coll"] in COLL_P2P:
            cells.setdefault((r["coll"], r["ranks"], r["bytes"], r.get("run", "")), []).append(r["caracal_us"])
    rows = []
    for (coll, P, nbytes, run), times in cells.items():
        params = predict.Params(node=lv.hockney, top=lv.hockney, top_loggp=lv.loggp, compute=comp, node_size=P,
                                torus_dims=None)
        model = COLL_P2P[coll]
        mod = next(m for m in predict.models(coll, params) if m.name == model)
        m = 0 if coll == "barrier" else nbytes
        pred = mod.time(P, m)
        meas = median(times)
        rows.append({"coll": coll, "model": model, "rules": {"config": "p2p (bench/coll/run.py FORCE)"},
                     "procs": P, "bytes": m, "level": f"one node, bench/coll {run} x{len(times)}".strip(),
                     "measured_us": meas, "p90_us": float("nan"), "model_us": pred,
                     "rel_err": (pred - meas) / meas})
    rows.sort(key=lambda r: (r["procs"], r["coll"], r["bytes"]))
    doc = {"schema": "caracal.model-check/1", "mpi": a.mpi, "machine": machine_description(),
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "loadavg": [uptime()],
           "measured_from": a.coll_json, "probe_created": [d.get("created") for d in docs.values()],
           "fit": {"alpha_us": lv.hockney.alpha, "beta_us_per_byte": lv.hockney.beta, "L_us": lv.loggp.L,
                   "o_us": lv.loggp.o, "o_source": lv.o_source, "fit_points": lv.points,
                   "fit_max_rel_err": lv.max_rel_err},
           "compute": {"gamma_per_us": comp.gamma, "mem_bw_bytes_per_us": comp.mem_bw}, "rows": rows}
    write_results(f"model-check-coll-{a.mpi}", doc, markdown(doc))


def testbed_rows(a, shm, comp, loads):
    """Probe host0-host1 (the net level), then time the hierarchical schedules at 2 ranks
    per host and compare with the hier model (shm inside a host, net between hosts)."""
    probes = {}
    for mode in ("pingpong", "stream"):
        out = WORK / f"probe-{a.mpi}-{a.testbed}-{mode}.json"
        if not out.exists():
            cli("probe", "--mpi", a.mpi, "--testbed", a.testbed, "--mode", mode, "--min", "1",
                "--max", "4M" if mode == "pingpong" else "64K", "--no-perturb", "--json", out)
        probes[str(out)] = json.loads(out.read_text())
    net = fit.fit_levels(probes)["net"]
    params = predict.Params(node=shm.hockney, top=net.hockney, top_loggp=net.loggp, compute=comp, node_size=2,
                            torus_dims=None)
    rows = []
    for P in [int(x) for x in a.testbed_procs.split(",")]:
        for coll, rules, model in HIER_CASES:
            out = WORK / f"testbed-{a.mpi}-{a.testbed}-{coll}-{P}.jsonl"
            if not out.exists():
                envs = [x for k, v in rules.items() for x in ("--env", f"{k}={v}")]
                p = cli("testbed", "run", "--name", a.testbed, "-n", P, "--ppn", 2, "--mpi", a.mpi, *envs, "--",
                        ROOT / "build" / "bin" / "caracal-collbench", coll, "--sizes", ",".join(map(str, SIZES)),
                        "--reps", a.reps)
                out.write_text(p.stdout)
                loads.append(uptime())
            mod = next(m for m in predict.models(coll, params) if m.name == model)
            for line in out.read_text().splitlines():
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue
                if ev.get("event") != "point" or ev.get("median_us") is None:
                    continue
                m = 0 if coll == "barrier" else ev["bytes"]
                pred = mod.time(P, m)
                rows.append({"coll": coll, "model": model, "rules": rules, "procs": P, "bytes": m,
                             "level": f"testbed {P // 2} hosts x 2", "measured_us": ev["median_us"],
                             "p90_us": ev.get("p90_us", ev["median_us"]), "model_us": pred,
                             "rel_err": (pred - ev["median_us"]) / ev["median_us"]})
                if coll == "barrier":
                    break
    global NET_FIT
    NET_FIT = net
    return rows


NET_FIT = None


def _size(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB" if b >= 1024 else f"{b} B"


def markdown(doc):
    f = doc["fit"]
    out = [f"<!-- generated by bench/model_check.py -->",
           f"# caracal model against measurement ({doc['mpi']}, this machine)", "",
           f"Fit (shared memory, `caracal probe` pingpong 1 B-4 MiB + stream): alpha {f['alpha_us']:.3f} us, "
           f"beta {f['beta_us_per_byte'] * 1e3:.4f} ns/B, LogGP o {f['o_us']:.3f} us ({f['o_source']}), "
           f"L {f['L_us']:.3f} us; the single line misses some probe points by up to "
           f"{f['fit_max_rel_err']:.0%}. Combine: {doc['compute']['gamma_per_us'] / 1e3:.2f} GFLOP/s, "
           f"{doc['compute']['mem_bw_bytes_per_us'] / 1e3:.1f} GB/s (numpy).", "",
           (f"Measured: the p2p rows of `{doc['measured_from']}` (bench/coll/run.py: Caracal's forced "
            "point-to-point trees on one node, each call between native barriers, slowest rank, median of "
            "repeats; measured in an earlier session, not with this probe), against probes taken "
            f"{', '.join(map(str, doc['probe_created']))}. Ranks above 2 are oversubscribed on 2 cores."
            if doc.get("measured_from") else
            "Measured: `caracal bench` (window-synchronised starts, slowest rank, median of the reps) with "
            "Caracal's flat point-to-point algorithm forced (`CARACAL_NODE_SIZE=1` and the rule shown). "
            "Ranks above 2 are oversubscribed on 2 cores.") +
           " Error = (model - measured) / measured. Load average (1, 5, 15 min), first/last: "
           f"{', '.join('/'.join(l) for l in doc['loadavg'][:1] + doc['loadavg'][-1:])}.", "",
           "| where | collective | algorithm (rule) | ranks | bytes | measured us (P90) | model us | error |",
           "|---|---|---|---|---|---|---|---|"]
    n = doc.get("net_fit")
    if n:
        out[6:6] = [f"Emulated hosts (`caracal testbed`, TCP over veth, probe host0-host1): alpha "
                    f"{n['alpha_us']:.2f} us, beta {n['beta_us_per_byte'] * 1e3:.4f} ns/B, o {n['o_us']:.2f} us "
                    f"({n['o_source']}); worst probe point {n['fit_max_rel_err']:.0%} off the line. The testbed rows "
                    "compare `hier` (shm model inside a host, this line between hosts; 2 ranks per host).", ""]
    for r in doc["rows"]:
        rule = ",".join(r["rules"].values())
        out.append(f"| {r.get('level', 'one node, flat')} | {r['coll']} | {r['model']} ({rule}) | {r['procs']} | {_size(r['bytes'])} | "
                   f"{r['measured_us']:.2f} ({'-' if r['p90_us'] != r['p90_us'] else format(r['p90_us'], '.2f')}) | {r['model_us']:.2f} | {r['rel_err']:+.0%} |")
    errs = sorted(abs(r["rel_err"]) for r in doc["rows"])
    by_p = {}
    for r in doc["rows"]:
        by_p.setdefault(r["procs"], []).append(abs(r["rel_err"]))
    out += ["", "Median |error| per rank count: " + ", ".join(
        f"{P} ranks {sorted(v)[len(v) // 2]:.0%}" for P, v in sorted(by_p.items())) +
        f"; all rows: median {errs[len(errs) // 2]:.0%}, worst {errs[-1]:.0%}.", ""]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
