"""caracal model against measurement on emulated hosts (`caracal testbed`): the cluster
collectives' models (Caracal's hierarchical schedules and the flat trees) with parameters
fitted to probes taken here, against Caracal's forced schedules timed across the veth links.

  flock /work/bench.lock python3 bench/model_check_hosts.py [--rate 50mbit] [--shapes 2x1,2x2,4x1]

Per run: a testbed of the largest shape's hosts (`--name`, brought up and down here; tbf
rate per link and direction with --rate, none without: then the link is TCP over veth,
as fast as the 2 cores move it); the two model levels probed where they are, `shm` with
`caracal probe` between two ranks of this machine, `net` with `caracal probe --testbed`
between host0 and host1 (pingpong and stream each); `caracal.model.fit` fits them
(on a rated link tbf lets a burst through at the CPU's speed, and a single least-squares
line then misses the rate: there alpha is the median one-way time up to 1 KiB and beta the
least-squares slope from 256 KiB, which the burst shifts but does not tilt; the table gives
both). Then, per round, shape
(hosts x ranks per host, block placement) and collective, `caracal-collbench` (window-
synchronised starts, slowest rank, median of --reps) with Caracal's schedule forced:

  hier: `node/knomial:2` inside a host (point-to-point, as the model's node level) and the
        top level's rule between hosts (bcast/reduce knomial:2, allreduce recdbl, barrier
        hier = dissemination among leaders) -> model row `hier` (shm in, net between);
  flat: the same comm rule with CARACAL_NODE_SIZE=1 (every rank its own group) -> the
        model's flat row (binomial, recdbl, dissemination) priced on `net` as `caracal
        model` prices it, and, with several ranks per host, caracal.model.placed's variant
        (each round at its slowest link).

Open MPI 4.1.4 only: `caracal testbed run` launches it with --bind-to none and, when ranks
outnumber cores, mpi_yield_when_idle 1. MPICH 4.0.2 across namespaces needs the testbed's
finalize workaround and busy-polls when oversubscribed (4 ranks, 2 cores), which would time
the scheduler; Open MPI is enough to check the model. Finished launches are kept in a work
directory (bench/workdir.py; --work DIR resumes a split run of the same build and
settings). Writes bench/results/model-check-hosts-openmpi[-RATE].md and .json (compact).
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchlib import ROOT, machine_description, median, parse_size, write_results
from workdir import facts, open_workdir

sys.path.insert(0, str(ROOT / "python"))
from caracal.errors import UsageError  # noqa: E402
from caracal.model import fit, formulas as F, placed, predict  # noqa: E402

COLLS = ("bcast", "reduce", "allreduce", "barrier")
TOP_RULE = {"bcast": "knomial:2", "reduce": "knomial:2", "allreduce": "recdbl", "barrier": "hier"}
FLAT_MODEL = {"bcast": "binomial", "reduce": "binomial", "allreduce": "recdbl", "barrier": "dissemination"}
ENV = {"bcast": "CARACAL_BCAST", "reduce": "CARACAL_REDUCE", "allreduce": "CARACAL_ALLREDUCE",
       "barrier": "CARACAL_BARRIER"}
NET_SMALL, NET_LARGE = 1024, 256 * 1024   # the two-part fit of a rated link
PROBE_TRIALS = 15


def rules(coll, sched):
    """The environment forcing `sched` (hier|flat) for `coll`."""
    if sched == "hier":
        return {ENV[coll]: f"node/knomial:2 {TOP_RULE[coll]}"}
    return {ENV[coll]: TOP_RULE[coll], "CARACAL_NODE_SIZE": "1"}


def parse_shapes(text):
    """'2x1,2x2,4x1' -> [(hosts, ranks per host)]; ValueError with the reason."""
    out = []
    for t in text.split(","):
        parts = t.strip().lower().split("x")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise ValueError(f"shape {t.strip()!r} is not HOSTSxRANKS (e.g. 2x2)")
        h, q = int(parts[0]), int(parts[1])
        if not 2 <= h <= 8 or not 1 <= q <= 4:
            raise ValueError(f"shape {t.strip()!r}: 2-8 hosts of 1-4 ranks")
        out.append((h, q))
    return out


def two_part_fit(docs):
    """A rated link's line: alpha the median one-way time up to NET_SMALL, beta the
    least-squares slope of the sizes from NET_LARGE. tbf lets a burst (64 KiB) through at
    the CPU's speed before the rate applies, so every large message costs
    alpha + (m - burst)/rate: the burst shifts the large sizes' line but does not tilt it,
    and their slope is 1/rate. (The median of (t - alpha)/m, the fit before, reads the
    burst as bandwidth: 11.5% shallow on a 50 Mbit/s probe of 256 KiB-1 MiB.) The line then charges
    a large message burst/rate more than tbf does (10 ms at 50 Mbit/s, 6% of 1 MiB)."""
    pp = next(d for d in docs.values() if d["mode"] == "pingpong")
    pts = [(p["size"], fit.point_time(p)) for p in pp["points"]]
    small = [t for m, t in pts if m <= NET_SMALL]
    large = [(m, t) for m, t in pts if m >= NET_LARGE]
    if not small or len({m for m, _ in large}) < 2:
        raise UsageError(f"the two-part fit needs sizes up to {NET_SMALL} and two from {NET_LARGE} bytes")
    alpha = statistics.median(small)
    mm = statistics.fmean(m for m, _ in large)
    tm = statistics.fmean(t for _, t in large)
    beta = sum((m - mm) * (t - tm) for m, t in large) / sum((m - mm) ** 2 for m, _ in large)
    st = next((d for d in docs.values() if d["mode"] == "stream"), None)
    o = min(min(fit.point_time(p) for p in st["points"]), alpha / 2) if st else alpha / 3
    err = max(abs(alpha + m * beta - t) / t for m, t in pts)
    return fit.LevelFit("net", F.Hockney(alpha, beta), F.LogGP(alpha - 2 * o, o, beta),
                        "stream" if st else "assumed", len(pts), err, list(docs))


def net_fit(docs, rated):
    """(LevelFit, how). The bare veth: least squares on the relative error, as `caracal
    model` fits. A rated link: the two-part fit, since tbf passes a burst (64 KiB at
    50 Mbit/s) at the CPU's speed and the many small sizes then pull the least-squares
    slope to that speed (the line would miss 1 MiB by the rate); `how` also gives the
    least-squares line for comparison."""
    try:
        ls = fit.fit_levels(docs)["net"]
        ls_text = f"least squares would give alpha {ls.hockney.alpha:.1f} us, beta {ls.hockney.beta * 1e3:.3f} ns/B"
    except UsageError as e:
        ls, ls_text = None, f"least squares fails: {e}"
    if not rated:
        if ls is None:
            raise UsageError(ls_text)
        return ls, "least squares on the relative error (caracal model's fit)"
    return two_part_fit(docs), f"two-part (alpha median up to 1 KiB, beta the slope from 256 KiB); {ls_text}"


def predictions(coll, sched, hosts, q, m, shm, net, comp):
    """(caracal model's row name, its time, placed variant or None) in us."""
    P = hosts * q
    params = predict.Params(node=shm, top=net, top_loggp=F.LogGP(net.alpha / 3, net.alpha / 3, net.beta),
                            compute=comp, node_size=q, torus_dims=None)
    name = "hier" if sched == "hier" else FLAT_MODEL[coll]
    m = 0 if coll == "barrier" else m
    t = next(x for x in predict.models(coll, params) if x.name == name).time(P, m)
    alt = None
    if sched == "flat" and q > 1:
        alt = {"bcast": lambda: placed.bcast_knomial(shm, net, P, q, m),
               "reduce": lambda: placed.reduce_knomial(shm, net, comp, P, q, m),
               "allreduce": lambda: placed.allreduce_recdbl(shm, net, comp, P, q, m),
               "barrier": lambda: placed.barrier_dissemination(shm, net, P, q)}[coll]()
    return name, t, alt


def cli(*args, env=None, timeout=900, check=True):
    e = dict(os.environ, PYTHONPATH=str(ROOT / "python"), **(env or {}))
    p = subprocess.run([sys.executable, "-m", "caracal", *map(str, args)], capture_output=True, text=True, env=e,
                       timeout=timeout)
    if check and p.returncode:
        sys.exit(f"model_check_hosts: caracal {' '.join(map(str, args[:4]))} ... failed ({p.returncode}): "
                 f"{p.stderr.strip()[-400:]}")
    return p


def loadavg():
    return [float(x) for x in open("/proc/loadavg").read().split()[:3]]


def probes(a, work):
    docs = {"shm": {}, "net": {}}
    for level in ("shm", "net"):
        for mode in ("pingpong", "stream"):
            out = work / f"probe-{level}-{mode}.json"
            if not out.exists():
                top = "1M" if (level == "net" and a.rate) else "4M"
                extra = ["--testbed", a.name] if level == "net" else []
                # 15 short trials, not 5: the fit takes the best trial, and a trial of fewer
                # repetitions is more likely to run undisturbed on a shared machine
                cli("probe", "--mpi", "openmpi", "--mode", mode, "--min", "1", "--max", top if mode == "pingpong"
                    else "64K", "--no-perturb", "--trials", PROBE_TRIALS, *extra, "--json", out)
            docs[level][str(out)] = json.loads(out.read_text())
    return docs


def launch(a, work, rnd, hosts, q, coll, sched):
    out = work / f"r{rnd}-{hosts}x{q}-{sched}-{coll}.jsonl"
    if not out.exists():
        envs = [x for k, v in rules(coll, sched).items() for x in ("--env", f"{k}={v}")]
        sizes = "0" if coll == "barrier" else ",".join(map(str, a.sizes))
        before = loadavg()
        p = cli("testbed", "run", "--name", a.name, "-n", hosts * q, "--ppn", q, "--mpi", "openmpi",
                "--timeout", a.timeout, *envs, "--", ROOT / "build" / "bin" / "caracal-collbench", coll,
                "--sizes", sizes, "--reps", a.reps, "--seed", 1 + rnd, timeout=a.timeout + 60)
        out.write_text(p.stdout + json.dumps({"event": "load", "before": before, "after": loadavg()}) + "\n")
    pts, load, rtt = {}, None, None
    for line in out.read_text().splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if ev.get("event") == "start":   # its clock sync: the shortest of 20 8-byte round trips
            rtt = ev.get("clock_min_rtt_us")
        elif ev.get("event") == "point":   # median_us absent: no repetition started in its window
            pts[0 if coll == "barrier" else ev["bytes"]] = dict(ev, sync_min_rtt_us=rtt)
        elif ev.get("event") == "load":
            load = ev
    return pts, load


def testbed_up(a, hosts):
    cli("testbed", "down", "--name", a.name, timeout=120, check=False)
    cli("testbed", "up", "--name", a.name, "--hosts", hosts, *(["--rate", a.rate] if a.rate else []), timeout=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default="2x1,2x2,4x1", help="HOSTSxRANKS per host, comma-separated")
    ap.add_argument("--sizes", default="8,4K,1M", help="message sizes (barrier: none)")
    ap.add_argument("--rate", help="tbf rate per link and direction (e.g. 50mbit; default none: the bare veth)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2, help="launches per cell, interleaved (default 2)")
    ap.add_argument("--name", default="mchk", help="testbed name (brought up and down here)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per launch")
    ap.add_argument("--work", metavar="DIR", help="resume the finished launches in DIR (default: a new directory)")
    ap.add_argument("--out", help="results name (default model-check-hosts-openmpi[-RATE])")
    a = ap.parse_args()
    try:
        shapes = parse_shapes(a.shapes)
    except ValueError as e:
        ap.exit(2, f"model_check_hosts: {e}\n")
    try:
        a.sizes = [parse_size(s) for s in a.sizes.split(",")]
    except (ValueError, KeyError, IndexError):
        ap.exit(2, f"model_check_hosts: bad --sizes {a.sizes!r} (bytes, e.g. 8,4K,1M)\n")
    if a.reps < 1 or a.rounds < 1 or min(a.sizes) < 0:
        ap.exit(2, "model_check_hosts: --reps and --rounds are at least 1, sizes not negative\n")
    bins = [ROOT / "build" / "lib" / "libcaracal.so", ROOT / "build" / "bin" / "caracal-probe",
            ROOT / "build" / "bin" / "caracal-collbench"]
    settings = {"rate": a.rate, "reps": a.reps, "sizes": a.sizes, "testbed_hosts": max(h for h, _ in shapes),
                "probe_trials": PROBE_TRIALS}
    work = open_workdir("model_check_hosts", a.work, facts("openmpi", bins, settings))
    loads = [loadavg()]
    testbed_up(a, settings["testbed_hosts"])
    try:
        docs = probes(a, work)
        cells = {}
        order = [(h, q, coll, sched) for h, q in shapes for coll in COLLS for sched in ("hier", "flat")]
        for rnd in range(a.rounds):
            random.Random(rnd).shuffle(order)    # a new order per round, the same on resume
            for i, (h, q, coll, sched) in enumerate(order):
                print(f"model_check_hosts: round {rnd + 1}/{a.rounds} {i + 1}/{len(order)} {h}x{q} {sched} {coll}",
                      file=sys.stderr)
                pts, load = launch(a, work, rnd, h, q, coll, sched)
                for m, ev in pts.items():
                    cells.setdefault((h, q, coll, sched, m), []).append((ev, load))
    finally:
        cli("testbed", "down", "--name", a.name, timeout=120, check=False)
    loads.append(loadavg())
    shm = fit.fit_levels(docs["shm"])["shm"]
    net, how = net_fit(docs["net"], bool(a.rate))
    comp = fit.measure_compute()
    rows = []
    missing = []
    for (h, q, coll, sched, m), evs in sorted(cells.items()):
        meds = [ev["median_us"] for ev, _ in evs if ev.get("median_us") is not None]
        if not meds:
            missing.append({"hosts": h, "ppn": q, "coll": coll, "sched": sched, "bytes": m, "launches": len(evs)})
            continue
        meas = median(meds)
        name, t, alt = predictions(coll, sched, h, q, m, shm.hockney, net.hockney, comp)
        rows.append({"hosts": h, "ppn": q, "ranks": h * q, "coll": coll, "sched": sched, "rules": rules(coll, sched),
                     "bytes": m, "measured_us": meas, "launch_medians_us": meds,
                     "p90_us": max(ev["p90_us"] for ev, _ in evs if ev.get("p90_us") is not None),
                     "model": name, "model_us": t, "rel_err": (t - meas) / meas, "placed_us": alt,
                     "placed_err": None if alt is None else (alt - meas) / meas,
                     "sync_min_rtt_us": [ev.get("sync_min_rtt_us") for ev, _ in evs],
                     "load": [ld["before"][0] for _, ld in evs if ld]})
    lv = lambda f: {"alpha_us": f.hockney.alpha, "beta_us_per_byte": f.hockney.beta, "o_us": f.loggp.o,
                    "o_source": f.o_source, "fit_points": f.points, "fit_max_rel_err": f.max_rel_err}
    doc = {"schema": "caracal.model-check-hosts/1", "mpi": "openmpi", "machine": machine_description(),
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "rate": a.rate, "shapes": shapes,
           "reps": a.reps, "rounds": a.rounds, "loadavg": loads, "work": str(work),
           "probes_created": {k: [d.get("created") for d in v.values()] for k, v in docs.items()},
           "fit": {"shm": lv(shm), "net": dict(lv(net), how=how, probe_trials=PROBE_TRIALS,
                                                 rate_bits=next(iter(docs["net"].values()))["options"]["testbed"]
                                                 .get("rate_bits"))},
           "compute": {"gamma_per_us": comp.gamma, "mem_bw_bytes_per_us": comp.mem_bw}, "rows": rows,
           "missing": missing}
    write_results(a.out or "model-check-hosts-openmpi" + (f"-{a.rate}" if a.rate else ""), doc, markdown(doc))


def _size(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB" if b >= 1024 else f"{b} B"


def rate_check(n):
    """The fitted bandwidth against the configured tbf rate (none on the bare veth)."""
    if not n.get("rate_bits"):
        return []
    fitted = 8e6 / n["beta_us_per_byte"]
    return ["", f"Configured rate {n['rate_bits'] / 1e6:g} Mbit/s; fitted {fitted / 1e6:.1f} Mbit/s "
                f"({fitted / n['rate_bits'] - 1:+.1%})."]


def sync_check(rows, alpha):
    """collbench's own clock sync at 2x1: the shortest of 20 8-byte round trips per launch,
    an estimate of the one-way latency independent of the probe."""
    rtts = [x for r in rows if (r["hosts"], r["ppn"]) == (2, 1) for x in r.get("sync_min_rtt_us", []) if x]
    if not rtts:
        return []
    return ["", f"collbench's clock sync at 2x1 (20 8-byte round trips per launch, shortest kept): "
                f"{min(rtts):.1f}-{max(rtts):.1f} us round trip, median {median(rtts):.1f}: one way "
                f"{median(rtts) / 2:.1f} us against the net fit's alpha {alpha:.1f} us."]


def markdown(doc):
    s, n = doc["fit"]["shm"], doc["fit"]["net"]
    load = [r for row in doc["rows"] for r in row["load"]] or [float("nan")]
    link = f"tbf {doc['rate']} per link and direction" if doc["rate"] else "no rate limit (TCP over veth)"
    out = ["<!-- generated by bench/model_check_hosts.py -->",
           f"# caracal model against emulated hosts (Open MPI, {link})", "",
           f"Testbed: `caracal testbed` hosts joined by veth pairs and a bridge, {link}; ranks placed in blocks "
           f"(`--ppn`); Open MPI 4.1.4 over TCP between hosts, shared memory inside. {doc['rounds']} launch(es) "
           f"per cell, interleaved in a new order per round; each launch `caracal-collbench` (window-synchronised "
           f"starts, slowest rank, median of {doc['reps']} reps); measured = median of the launches' medians. "
           f"Load average (1 min) before each launch: {min(load):.1f}-{max(load):.1f}; at start/end "
           f"{doc['loadavg'][0][0]:.1f}/{doc['loadavg'][-1][0]:.1f}.", "",
           f"Fit, shm (`caracal probe` here): alpha {s['alpha_us']:.3f} us, beta {s['beta_us_per_byte'] * 1e3:.4f} "
           f"ns/B (worst probe point {s['fit_max_rel_err']:.0%} off). Fit, net (`caracal probe --testbed`, host0 "
           f"to host1): alpha {n['alpha_us']:.2f} us, beta {n['beta_us_per_byte'] * 1e3:.4f} ns/B "
           f"({1 / n['beta_us_per_byte']:.0f} MB/s), {n['how']}; worst probe point {n['fit_max_rel_err']:.0%} off.",
           *rate_check(n), *sync_check(doc["rows"], n["alpha_us"]),
           "",
           "hier = Caracal's hierarchical schedule, `node/knomial:2` inside a host and the rule shown between "
           "hosts, model `hier` (shm inside, net between). flat = the same rule with `CARACAL_NODE_SIZE=1`, "
           "model as `caracal model` prices it (every message on net) and, with 2+ ranks per host, "
           "`placed` (each round at its slowest link, caracal.model.placed). Error = (model - measured) / "
           "measured.", "",
           "| hosts x ranks | collective | schedule (rule) | bytes | measured us (launches) | model | model us | error | placed us | error |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        rule = next(v for k, v in r["rules"].items() if k != "CARACAL_NODE_SIZE")
        meds = "/".join(f"{x:.0f}" if x >= 100 else f"{x:.1f}" for x in r["launch_medians_us"])
        alt = "" if r["placed_us"] is None else f"{r['placed_us']:.1f} | {r['placed_err']:+.0%}"
        out.append(f"| {r['hosts']}x{r['ppn']} | {r['coll']} | {r['sched']} ({rule}) | {_size(r['bytes'])} | "
                   f"{r['measured_us']:.1f} ({meds}) | {r['model']} | {r['model_us']:.1f} | {r['rel_err']:+.0%} | "
                   f"{alt or ' | '} |")
    for r in doc["missing"]:
        out.append(f"| {r['hosts']}x{r['ppn']} | {r['coll']} | {r['sched']} | {_size(r['bytes'])} | no repetition "
                   f"started in its window in {r['launches']} launch(es) | | | | | |")
    errs = sorted(abs(r["rel_err"]) for r in doc["rows"])
    best = sorted(abs(r["placed_err"] if r["placed_err"] is not None else r["rel_err"]) for r in doc["rows"])
    if errs:
        out += ["", f"Median |error| over the {len(errs)} rows: {errs[len(errs) // 2]:.0%} (worst {errs[-1]:.0%}); "
                f"with the placed model for the flat rows at 2+ ranks per host: {best[len(best) // 2]:.0%}.", ""]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
