"""caracal model against measurement on this machine: fit the models to a fresh probe,
time Caracal's flat point-to-point algorithms with `caracal bench` (CARACAL_NODE_SIZE=1:
every rank its own node, so each schedule is the flat algorithm the model describes),
and tabulate predicted / measured.

  flock /work/bench.lock python3 bench/model_check.py [--mpi openmpi] [--procs 2,4,8]

Writes bench/results/model-check-<mpi>.md and .json (compact), keeping finished launches
in a work directory (bench/workdir.py): a new one per run, or --work DIR to resume a split
run, which is refused when DIR was made by another build, library or machine (an earlier
run's probe would otherwise be compared with today's model) and announced when reused.
Ranks above 2 share 2 cores here (oversubscribed, yielding): the model knows nothing of
that, and the table says so. The emulated hosts are bench/model_check_hosts.py's.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from benchlib import ROOT, machine_description, median, write_results
from workdir import facts, open_workdir

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
    ap.add_argument("--work", metavar="DIR", help="resume from the finished launches in DIR (default: a new "
                    "directory; refused when DIR was made by another build, library or machine)")
    a = ap.parse_args()
    global WORK
    bins = [ROOT / "build" / "lib" / "libcaracal.so", ROOT / "build" / "bin" / "caracal-probe",
            ROOT / "build" / "bin" / "caracal-collbench"]
    WORK = open_workdir("model_check", a.work, facts(a.mpi, bins, {"reps": a.reps}))
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
    loads.append(uptime())
    doc = {"schema": "caracal.model-check/1", "mpi": a.mpi, "machine": machine_description(),
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "loadavg": loads,
           "fit": {"alpha_us": lv.hockney.alpha, "beta_us_per_byte": lv.hockney.beta, "L_us": lv.loggp.L,
                   "o_us": lv.loggp.o, "o_source": lv.o_source, "fit_points": lv.points,
                   "fit_max_rel_err": lv.max_rel_err},
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
