"""caracal tune-app: profile a program, take the advice, try each setting in the program itself, keep what wins."""
import json
import os
import sys
import time
from pathlib import Path

from .. import paths, settings_file, topology
from ..errors import UsageError
from ..tool_run import machine, now_iso
from .tune import parse_budget

NAME = "tune-app"
HELP = "tune a program's MPI settings in a closed loop: profile, advise, measure each setting in the program, keep the winners"
DESCRIPTION = """\
1. runs PROGRAM once with the profiler (the baseline profile, OUT/baseline.json);
2. takes caracal advise's advice on it (collective algorithms replayed and measured,
   protocol settings proposed);
   With a placement over several hosts (--rankfile, --hostfile, --testbed), the mapping
   advice too: the traffic of the profile against --topology, or against a static
   topology of the hosts the baseline ran on; a recommended QAP placement becomes a
   variant launched with its rankfile (OUT/mapping-A<i>.rankfile);
3. runs PROGRAM with each setting alone and with all of them combined, R times each,
   interleaved with baseline runs (every round runs every variant, in a rotating order);
   a run's time is the slowest rank's MPI_Init-to-MPI_Finalize time;
4. prints before/after medians with quartile spreads, keeps the fastest variant that
   beats the baseline by at least 3% with its upper quartile below the baseline's
   median, and drops (and names) every setting that does not win in the program.

Written to OUT (default caracal-tune-app):
  settings.env    the kept settings, VAR=VALUE lines: caracal run --settings OUT/settings.env
  settings.sh     the same as `export` lines for plain mpiexec users (source it first;
                  Open MPI forwards OMPI_MCA_*, MPICH's Hydra the whole environment);
                  CARACAL_* settings need caracal run (libcaracal)
  placement.rankfile  the kept placement, when a mapping won (caracal run --rankfile)
  tune-app.md, tune-app.json  every variant's times, medians, spreads and verdicts

--budget bounds the whole loop (e.g. 10m): the repeats are cut (never below 3) to fit
an estimate from the baseline run's time, or the run refuses to start.

Examples:
  caracal tune-app -n 2 -- build/bin/records -n 2000
  caracal tune-app -n 4 --mpi mpich --repeats 7 --budget 15m -- build-mpich/bin/asp 1024
  caracal tune-app -n 8 --testbed two --rankfile scattered.rankfile -- build/bin/halo
"""


def add_arguments(p):
    p.add_argument("-n", "--np", type=int, default=2, metavar="N", help="ranks (default 2)")
    p.add_argument("--mpi", choices=paths.MPIS, default="openmpi", help="MPI library (default openmpi)")
    p.add_argument("--repeats", type=int, default=5, metavar="R", help="runs per variant (default 5, at least 3)")
    p.add_argument("--budget", default="20m", metavar="T", help="time limit of the loop: 90s, 20m, 1h (default 20m)")
    p.add_argument("--out", default="caracal-tune-app", metavar="DIR", help="output directory")
    p.add_argument("--force", action="store_true", help="overwrite an earlier result in DIR")
    p.add_argument("--timeout", type=float, default=600, metavar="S", help="give up on one run after S seconds")
    p.add_argument("--env", action="append", default=[], metavar="VAR=VALUE",
                   help="environment of every run, the baseline's too (repeatable); not part of the kept settings")
    g = p.add_argument_group("placement (mapping advice)")
    g.add_argument("--rankfile", metavar="FILE", help="the baseline's placement, a host per rank "
                   "('rank N=HOST slot=S', as caracal map writes it)")
    g.add_argument("--hostfile", metavar="FILE", help="the baseline's hosts (caracal run --hostfile)")
    g.add_argument("--topology", metavar="T.json", help="the hosts' topology for mapping advice (caracal nodemap); "
                   "default: a static one from the hosts the baseline ran on, when it ran on several")
    g.add_argument("--testbed", metavar="NAME", help="run every variant on this emulated testbed "
                   "(caracal testbed run) instead of caracal run")
    g.add_argument("--ppn", type=int, metavar="P", help="with --testbed and no --rankfile: ranks per host")
    p.add_argument("program", metavar="PROGRAM", help="the MPI program")
    p.add_argument("args", nargs="*", metavar="ARGS", help="its arguments")


def validate(args):
    if args.np < 1:
        raise UsageError("-n must be at least 1")
    if args.repeats < 3:
        raise UsageError("--repeats must be at least 3 (medians and quartiles)")
    args.budget_s = parse_budget(args.budget)
    if args.rankfile and args.hostfile:
        raise UsageError("--hostfile and --rankfile do not go together (a rankfile names the hosts)")
    if args.testbed:
        if args.hostfile:
            raise UsageError("--hostfile does not go with --testbed (its hosts are the testbed's; use --ppn or --rankfile)")
        if not args.rankfile and not args.ppn:
            raise UsageError("--testbed needs --ppn P or --rankfile FILE (where the baseline's ranks go)")
    elif args.ppn:
        raise UsageError("--ppn goes with --testbed only (caracal run: --hostfile or --rankfile)")
    if args.ppn is not None and args.ppn < 1:
        raise UsageError("--ppn must be at least 1")
    if args.rankfile:
        from ..frontend import read_rankfile
        n = len(read_rankfile(args.rankfile))
        if n != args.np:
            raise UsageError(f"--rankfile {args.rankfile} places {n} ranks, -n is {args.np}")
    args.topo = topology.read(args.topology) if args.topology else None
    args.base_env = {}
    for kv in args.env:
        k, sep, v = kv.partition("=")
        if not sep or not settings_file.NAME.match(k):
            raise UsageError(f"--env expects VAR=VALUE, got '{kv[:60]}'")
        args.base_env[k] = v
    from .run import resolve_program
    args.program = resolve_program(args.program)
    out = Path(args.out)
    if (out / "tune-app.json").exists() and not args.force:
        raise UsageError(f"{out}/tune-app.json exists; choose another --out or add --force")
    out.mkdir(parents=True, exist_ok=True)


def run(args):
    from ..advise import advise, apprun, render
    from ..profile import load_profile
    validate(args)
    out = Path(args.out)
    argv = [args.program] + list(args.args)
    log = lambda line: print(f"caracal tune-app: {line}", file=sys.stderr)  # noqa: E731
    load0 = os.getloadavg()[0]
    t0 = time.monotonic()
    base_prof = out / "baseline.json"
    base_place = baseline_placement(args)
    try:
        first = apprun.run_once(args.mpi, args.np, argv, dict(args.base_env), args.timeout, profile_out=str(base_prof),
                                extra=base_place, testbed=args.testbed)
    except apprun.RunError as e:
        raise UsageError(f"the baseline run failed: {e}")
    one = time.monotonic() - t0
    log(f"baseline: {first['seconds']:.4f} s (run with launcher {one:.1f} s); profile {base_prof}")
    doc = load_profile(base_prof)
    topo, topo_path = args.topo, args.topology or ""
    if topo is None:
        topo, topo_path = hosts_topology(doc, out)
    adv = advise(doc, str(base_prof), topo, topo_path, do_measure=True, log=log, measure_p2p=False)
    cands = {e["id"]: e for e in adv["advice"] if e.get("env") and e["verdict"] in ("recommended", "advice")}
    variants = {"baseline": {}}
    placements = {"baseline": base_place}
    for i, e in cands.items():
        variants[i] = dict(e["env"])
        placements[i] = base_place
    mapped = [e for e in adv["advice"] if e["area"] == "mapping" and e["verdict"] == "recommended"
              and (e.get("files") or {}).get("rankfile")]
    for e in mapped:  # the QAP placement, launched as the baseline but with its rankfile
        rf = out / f"mapping-{e['id']}.rankfile"
        rf.write_text(e["files"]["rankfile"])
        variants[e["id"]] = {}
        placements[e["id"]] = ["--rankfile", str(rf.resolve())]
        cands[e["id"]] = e
        e["commands"] = {"openmpi": f"caracal run --rankfile {rf} -- PROGRAM   (or: mpiexec --rankfile {rf} PROGRAM)",
                         "mpich": f"caracal run --mpi mpich --rankfile {rf} -n {args.np} -- PROGRAM   (it passes "
                                  "the hosts to Hydra as a machinefile in rank order)"}
    (out / "advice.json").write_text(json.dumps(adv, indent=1) + "\n")
    sys.stdout.write(render.text(adv))
    if len(cands) > 1:
        combined = {}
        for e in cands.values():
            combined.update(e.get("env") or {})
        variants["combined"] = combined
        placements["combined"] = placements[mapped[0]["id"]] if mapped else base_place
    if len(variants) == 1:
        print("caracal tune-app: the advice has no setting to try in the program; nothing written but the advice")
        _write(out, args, adv, {}, {}, {}, None, load0)
        return 0
    spent = time.monotonic() - t0
    per_round = one * len(variants)
    repeats = args.repeats
    while repeats > 3 and spent + per_round * repeats > args.budget_s:
        repeats -= 1
    if spent + per_round * repeats > args.budget_s:
        raise UsageError(f"--budget {args.budget}: {len(variants)} variants x 3 runs of about {one:.0f} s do not fit; "
                         "give a larger budget or a shorter run of the program")
    if repeats < args.repeats:
        log(f"--budget: {repeats} repeats instead of {args.repeats}")
    try:
        runs = {name: {**args.base_env, **env} for name, env in variants.items()}
        times = apprun.compare(args.mpi, args.np, argv, runs, repeats, log=log, timeout=args.timeout,
                               placements=placements, testbed=args.testbed)
    except apprun.RunError as e:
        print(f"caracal tune-app: {e}", file=sys.stderr)
        return 1
    results = {name: apprun.summary(times["baseline"], times[name]) for name in variants if name != "baseline"}
    winners = [n for n, r in results.items() if r["wins"]]
    best = min(winners, key=lambda n: results[n]["suggested"]) if winners else None
    kept = variants[best] if best else {}
    place = placements[best] if best and placements[best] != base_place else None
    _write(out, args, adv, variants, times, results, best, load0, kept, placements, place)
    return 0


def baseline_placement(args):
    """The placement arguments of every run that does not try a mapping."""
    if args.rankfile:
        return ["--rankfile", str(Path(args.rankfile).resolve())]
    if args.hostfile:
        return ["--hostfile", str(Path(args.hostfile).resolve())]
    if args.testbed:
        return ["--ppn", str(args.ppn)]
    return []


def hosts_topology(doc, out):
    """A static topology (caracal nodemap --static) from the hosts the baseline's ranks ran on,
    in rank order: the mapping advice's input when no --topology is given. (None, "") for a
    one-host run (nothing to map)."""
    hosts = [r.get("host") for r in doc["ranks"]]
    if len(set(hosts)) < 2 or not all(isinstance(h, str) and h for h in hosts):
        return None, ""
    topo = topology.from_static({"schema": "caracal.topology-input/1", "hosts": hosts}, "the baseline's hosts")
    path = out / "baseline-topology.json"
    path.write_text(json.dumps(topo) + "\n")
    return topo, str(path)


def _write(out, args, adv, variants, times, results, best, load0, kept=None, placements=None, place=None):
    kept = kept or {}
    placements = placements or {}
    cmd = " ".join(["caracal", "tune-app"] + sys.argv[2:]) if len(sys.argv) > 2 else "caracal tune-app"
    comments = [f"kept by {cmd}", f"on {machine().get('hostname')} at {now_iso()}",
                "use: caracal run --settings THIS_FILE ...  (CARACAL_* settings need caracal run)"]
    placement = out / "placement.rankfile"
    if place:  # the kept placement: a rankfile beside the settings (an environment cannot place ranks)
        placement.write_text(Path(place[1]).read_text())
        comments.append(f"placement: add --rankfile {placement} (caracal run; mpiexec --rankfile for Open MPI, "
                        "-f with the hosts in rank order for MPICH)")
    elif placement.exists():
        placement.unlink()  # (--force: an earlier result's)
    settings_file.write(out / "settings.env", kept, comments)
    (out / "settings.sh").write_text("".join(f"# {c}\n" for c in comments) +
                                     "".join(f"export {k}='{v}'\n" for k, v in kept.items()))
    entries = {e["id"]: e for e in adv["advice"]}
    md = [f"# caracal tune-app: {os.path.basename(args.program)} {' '.join(args.args)}".rstrip(), "",
          f"{args.np} ranks, {args.mpi}" + (f" on testbed {args.testbed}" if args.testbed else "") +
          (f", every run with {' '.join(args.env)}" if args.env else "") +
          f", {now_iso()}; load average {load0:.2f} at the start, "
          f"{os.getloadavg()[0]:.2f} at the end ({os.cpu_count()} cores). Run time = slowest rank's "
          f"MPI_Init-to-MPI_Finalize seconds; median [p25-p75] of the interleaved runs.", ""]
    if results:
        b = next(iter(results.values()))
        md += [f"baseline: {b['baseline']} s [{b['baseline_spread'][0]}-{b['baseline_spread'][1]}]", "",
               "| variant | settings | median s [p25-p75] | gain | verdict |", "|---|---|---:|---:|---|"]
        for name, r in results.items():
            what = entries[name]["title"][:80] if name in entries else "all of the above together"
            env = " ".join([f"{k}={v}" for k, v in variants[name].items()] +
                           (placements[name] if placements.get(name) != placements.get("baseline") else []))
            verdict = "kept" if name == best else ("wins, but another variant is faster" if r["wins"] else "dropped")
            md.append(f"| {name}: {what} | `{env}` | {r['suggested']} [{r['suggested_spread'][0]}-"
                      f"{r['suggested_spread'][1]}] | {r['gain_percent']}% | {verdict} |")
        md += ["", f"kept: {best or 'nothing (no setting won in the program)'}"]
    (out / "tune-app.md").write_text("\n".join(md) + "\n")
    (out / "tune-app.json").write_text(json.dumps({
        "schema": "caracal.tune-app/1", "program": args.program, "argv": list(args.args), "nranks": args.np,
        "mpi": args.mpi, "env": args.base_env, "testbed": args.testbed, "created": now_iso(),
        "machine": dict(machine(), load=round(load0, 2)),
        "variants": variants, "placements": placements, "times": times, "results": results, "kept": best,
        "settings": kept, "placement": place},
        separators=(",", ":")) + "\n")
    print("\n".join(md[4:]) if results else "")
    print(f"caracal tune-app: wrote {out}/settings.env, settings.sh, tune-app.md, tune-app.json")
