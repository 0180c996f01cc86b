#!/usr/bin/env python3
"""Hierarchical (Caracal) against flat: barrier, bcast and allreduce (8 B, 4 KiB, 4 MiB) on a
simulated cluster of 32-core nodes, block and round-robin mapping, against SMPI's own
algorithms (selectors ompi, mpich, mvapich2, impi) -- the first source document's scaling plots.

  bench/simulate/scaling.py --ranks 64,256,1024 [--json bench/results/simulate-scaling.json]
  bench/simulate/scaling.py --report            # table (md) and plot from the JSON

Each (ranks, mapping, variant) is one `caracal simulate` run of bench/simulate/coll_time.c,
saved to the JSON as soon as it ends (a split run resumes). Simulated times are deterministic
(smpi/simulate-computation:no); wall time, peak memory and load describe the host's cost.
Runs above 4,096 ranks take many GB: run them under `flock /work/bench.lock` with >= 20 GiB free.
"""
import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SELECTORS = ("ompi", "mpich", "mvapich2", "impi")
# Caracal's hierarchical algorithms on the levels the simulated hosts give (node, top); a run's
# own set: --caracal-env KEY=VALUE (repeated; replaces this whole set), recorded with the run.
# Session 17 (bench/results/simulate-radix-choice.md, measured at 64, 256 and 1,024 ranks round-robin):
# the node level a flat fan-in/fan-out (k-nomial of radix 32 = the node: what the shm BCOL does with
# flags, point-to-point under SMPI), the leaders radix 32 below 1 KiB (1,024 ranks: one round over 32
# leaders, 5.3 us against 9.3 at radix 8/16 and 21.4 at radix 2) and radix 8 from 1 KiB to 64 KiB (4 KiB:
# bcast 15.6 us, allreduce 13.7 against 17.8 / 19.2 at radix 32: k-1 messages of 4 KiB share a link).
# Session 18 (bench/results/simulate-bcast-sag.md): the leaders' bcast from 64 KiB is scatter + allgather of
# radix 32 (4 MiB at 1,024 ranks: 761 us, radix 8 935, 2 1,054; the k-nomial's whole-message hops took 16,475 us
# at 16,384 ranks; below 64 KiB unchanged).
# Session 19 (bench/results/simulate-bcast-4k.md): from 1 KiB to 64 KiB the leaders' bcast is scatter_allgather:32
# too where there are at least 16 leaders (`#16-`: the top level's group size). 4 KiB: 10.6 us at 512 ranks (radix-8
# k-nomial 14.7), 9.8 at 1,024 (15.6), 18.9 at 4,096 (27.4), 19.0 at 16,384 (30.0, which lost to flat ompi with block
# mapping, 26.4); with 2 and 8 leaders (64 and 256 ranks) it is slower (7.8 / 10.4 against 5.0 / 7.6): k-nomial there.
# Until session 16: {"CARACAL_BARRIER": "hier", "CARACAL_BCAST": "knomial", "CARACAL_ALLREDUCE": "recdbl@-64k ring@64k-"}.
CARACAL_ENV = {"CARACAL_BARRIER": "node/knomial:32 top/dissemination:32 hier",
               "CARACAL_BCAST": "node/knomial:32 top/knomial:32@-1k top/scatter_allgather:32@1k-64k#16- top/knomial:8@1k-64k top/scatter_allgather:32@64k- knomial",
               "CARACAL_ALLREDUCE": "node/knomial:32 top/recmul:32@-1k top/recmul:8@1k-64k recdbl@-64k ring@64k-"}
# What SMPI runs for Caracal's own native calls (its start-up and hierarchy-build agreements,
# gather and the report's reduces): `caracal simulate` adds SMPI's plain algorithms for a run
# with Caracal (sim/run.py CARACAL_NATIVE_CFG: the selectors' SMP-aware ones set up with n^2
# messages on a communicator's first use). The timed calls are Caracal's, so they do not change.
sys.path.insert(0, str(ROOT / "python"))
from caracal.sim.run import CARACAL_NATIVE_CFG  # noqa: E402
LINE = re.compile(r"coll_time: (\w+) (\d+) ranks=(\d+) us=([0-9.]+) min=([0-9.]+)")

# Later result files (in bench/results) that measured some of the report's Caracal cases alone
# (--only, --min-bytes), with the rules that are now CARACAL_ENV: --report shows their number in a
# cell whose own run chose otherwise (or has none), with a note naming the file, the session and
# the number replaced (`current_cells`). Only their `runs` are read (not `extra`); a run counts
# for a cell when platform, ppn, ranks, mapping and case are the cell's and, for that case, its
# rules choose what CARACAL_ENV chooses on every level (`rule_choice`). Later entries win.
# `sessions`: "RANKS MAPPING" -> the session of a run measured after the file's own session.
SUPPLEMENTS = [
    {"json": "simulate-bcast-sag.json", "session": "18", "sessions": {"16384 block": "19"}},
    {"json": "simulate-bcast-4k.json", "session": "19"},
]
# The only SMPI option a supplementary run may have beyond (or lack against) the cell's own run,
# said in the note: the 16,384-rank runs' model (docs/simulate.md, "SimGrid's detached sends").
SUPPLEMENT_OPTIONS = ("smpi/send-is-detached-thresh",)


def is_caracal(variant):
    """Caracal's variants: `caracal` (the table's), `caracal-LABEL` (other rule sets, --caracal-env)."""
    return variant == "caracal" or variant.startswith("caracal-")


def one_run(ranks, mapping, variant, ppn, iters, cfg=(), max_bytes=0, caracal_env=None, only="", knomial=0,
            min_bytes=0):
    cmd = [sys.executable, "-m", "caracal", "simulate", "--platform", "cluster", "--ranks", str(ranks),
           "--ppn", str(ppn), "--mapping", mapping, "--cfg", "smpi/auto-shared-malloc-thresh:65536"]
    for c in cfg:
        cmd += ["--cfg", c]
    caracal_env = caracal_env or CARACAL_ENV
    if is_caracal(variant):
        for k, v in caracal_env.items():
            cmd += ["--env", f"{k}={v}"]
    else:
        cmd += ["--no-caracal", "--selector", variant]
    cmd += ["--", str(HERE / "coll_time.c"), str(iters)]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    if max_bytes:
        env["COLL_TIME_MAX_BYTES"] = str(max_bytes)
    if min_bytes:  # e.g. the 4 MiB cases alone (their own rule sets, the largest runs)
        env["COLL_TIME_MIN_BYTES"] = str(min_bytes)
    if only:  # one family per simulation: a slow one does not hold up the others
        env["COLL_TIME_ONLY"] = only
    if knomial:  # the ompi selector's small bcast without its n^2 set-up (smpi_knomial.h)
        env["COLL_TIME_KNOMIAL"] = str(knomial)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    used = list(cfg) + (list(CARACAL_NATIVE_CFG) if is_caracal(variant) else [])
    r = parse_run(ranks, mapping, variant, used, p.stdout, p.stderr)
    r.update({"only": only} if only else {}, **({"knomial": knomial} if knomial else {}))
    if max_bytes:
        r["max_bytes"] = max_bytes
    if min_bytes:
        r["min_bytes"] = min_bytes
    if is_caracal(variant):
        r["caracal_env"] = dict(caracal_env)
    return r


def parse_run(ranks, mapping, variant, cfg, stdout, stderr=""):
    """One run's entry from `caracal simulate`'s output (its last line is the JSON summary)."""
    try:
        summary = json.loads(stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise SystemExit(f"scaling: {ranks} {mapping} {variant}: no summary:\n{stdout[-2000:]}\n{stderr[-2000:]}")
    times = {f"{m[1]} {m[2]}": float(m[4]) for m in LINE.finditer(stdout)}
    r = {"ranks": ranks, "mapping": mapping, "variant": variant, "us": times,
         "wall_s": summary["wall_s"], "cpu_s": summary.get("cpu_s"),
         "peak_rss_mb": round(summary["peak_rss_bytes"] / 2**20),
         "peak_pss_mb": round(summary.get("peak_pss_bytes", 0) / 2**20), "cfg": list(cfg),
         "load": round(summary["load"], 1), "simulated_s": summary["simulated_s"]}
    if summary["exit"] != 0:  # SMPI's own algorithm aborted: keep the cases it finished
        errs = [ln for ln in stdout.splitlines() if "CRITICAL" in ln]
        r["failed"] = (errs[0].split("] ", 2)[-1] if errs else f"exit {summary['exit']}")[:200]
    return r


def measure(args):
    path = Path(args.json)
    doc = json.loads(path.read_text()) if path.exists() else {
        "schema": "caracal.bench-simulate-scaling/1", "platform": "cluster", "ppn": args.ppn,
        "caracal_env": CARACAL_ENV, "runs": []}
    env = dict(kv.split("=", 1) for kv in args.caracal_env) if args.caracal_env else None
    done = {(r["ranks"], r["mapping"], r["variant"], tuple(r.get("cfg_asked", ())), r.get("only", ""))
            for r in doc["runs"]}
    for ranks in [int(x) for x in args.ranks.split(",")]:
        for mapping in args.mappings.split(","):
            for variant in args.variants.split(","):
                if (ranks, mapping, variant, tuple(args.cfg), args.only) in done:
                    continue
                r = one_run(ranks, mapping, variant, args.ppn, args.iters, args.cfg,
                            args.max_bytes if ranks > args.max_bytes_above else 0, env, args.only,
                            0 if is_caracal(variant) else args.knomial, args.min_bytes)
                if args.cfg:  # a run with other SMPI options (e.g. per-message overheads) is its own row
                    r["cfg_asked"] = list(args.cfg)
                if args.note:
                    r["note"] = args.note
                print(json.dumps(r), flush=True)
                if path.exists():  # re-read: another run or a note may have been added meanwhile
                    doc = json.loads(path.read_text())
                doc["runs"].append(r)
                path.write_text(json.dumps(doc, indent=None, separators=(",", ":")) + "\n")


def import_out(args):
    """Add a run made by hand (`caracal simulate ... > FILE`, e.g. the largest sizes under
    flock /work/sim-big.lock) to the JSON: --import FILE --ranks N --mappings M --variants V."""
    path = Path(args.json)
    doc = json.loads(path.read_text())
    r = parse_run(int(args.ranks), args.mappings, args.variants, args.cfg, Path(args.import_out).read_text())
    if is_caracal(args.variants):
        r["caracal_env"] = dict(kv.split("=", 1) for kv in args.caracal_env) if args.caracal_env else CARACAL_ENV
    if args.note:
        r["note"] = args.note
    if args.paused:  # SIGSTOPped through a quiet window: wall_s counts the pause, running_s not
        r["paused_s"] = args.paused
        r["running_s"] = round(r["wall_s"] - args.paused, 1)
    doc["runs"] = [x for x in doc["runs"] if (x["ranks"], x["mapping"], x["variant"]) !=
                   (r["ranks"], r["mapping"], r["variant"])] + [r]
    path.write_text(json.dumps(doc, indent=None, separators=(",", ":")) + "\n")
    print(json.dumps(r))


# The goals of issue 19, one by one, as of the recorded runs; kept with the script that writes
# the table. STATUS_S16: session 16's account, for simulate-scaling-s16.json (the old metric).
STATUS_S16 = [
    "## Issue 19's goals, one by one (session 16)",
    "",
    "- **A 16,384-rank run within 10 minutes and 8 GiB here**: met. Caracal, round-robin, barrier/bcast/allreduce "
    "up to 4 KiB, 2 iterations, run alone on the machine: 253 s wall, 237 s CPU, 2.6 GiB Pss, load 1.2. The "
    "earlier runs beside other work took 1,222 s (round-robin, 214 s CPU) and 782 s (block, 199 s CPU) of wall "
    "at load 8-19, with the same simulated times. What it took (docs/simulate.md): SMPI's "
    "plain algorithms for Caracal's native calls (now `caracal simulate`'s default), `smpi/send-is-detached-thresh:0` "
    "(SimGrid 3.32 walks one list of every detached message in flight at each completion: at 8,192 ranks 85% "
    "of the CPU before the world hierarchy was built), a private duplicate that shares the world's group (SMPI's "
    "dup copies 12 bytes x n per rank), one levels table for every rank with a gather to rank 0 instead of every "
    "rank's allgather, Caracal's memory kept out of SMPI's auto-shared malloc (from 8,192 ranks the hierarchy's "
    "keys were shared garbage, every rank saw one key), and vm.max_map_count raised (mmap privatization needs "
    "more than 65,530 maps at 16,384 ranks). Before: no 16,384-rank run got through MPI_Init (379 s of CPU).",
    "- **1.5x the best flat at 16,384 ranks, round-robin; never slower with block**: not met where measured, "
    "and mostly not measurable here. The only flat selector SMPI can simulate at 16,384 ranks on this machine "
    "is ompi: mpich, mvapich2 and impi set up their SMP layout with a ring allgather of n^2 = 268 M messages on "
    "first use. ompi round-robin: barrier 39.8 us against Caracal's 42.3 (0.94x); its first (untimed) 8 B bcast "
    "had not ended after 9 minutes of CPU and the run was stopped (598 s of CPU, 5.3 GiB Pss), so bcast and "
    "allreduce have no flat number at 16,384 ranks. ompi block: barrier 56.9 us against Caracal's 42.3 (1.35x), "
    "then killed at the session's cut-off inside its first bcast (no host cost recorded). Caracal's times are the same with block and round-robin mapping (42.3 / 22.8 / 33.4 / "
    "42.4 / 46.2 us): on the crossbar cluster its levels are the hosts either way. At the sizes where every "
    "selector ran (64, 256) the goal does not hold in every case (round-robin min 0.71x and 0.48x, block 0.71x "
    "and 0.50x: barrier, 8 B bcast and 4 KiB allreduce lose; the 4 MiB cases win 1.15-2.5x).",
    "- **Model at 16,384 ranks**: no message is sent detached there (a send ends when its data has arrived); at "
    "64 ranks this leaves barrier, allreduce and 4 MiB times unchanged and makes the bcasts 0.6-2.4 us slower "
    "for Caracal and ompi alike (model check below), so the 16,384 row is comparable within itself and close "
    "to the smaller rows.",
    "- **4,096 ranks**: Caracal round-robin only (session 15); no flat baseline at 4,096 (not run this session).",
    "- **Connection budget at 16,384 ranks**: not run (bench/results/peer-budget.md holds 1,024 ranks; its "
    "alltoall is n^2 messages, 268 M at 16,384).",
    "- **MC-MPI's 3x over random and within 5% of the best hostname order**: unchanged here "
    "(bench/results/mcmpi-mapping.md).",
    "",
]


OLD_METRIC = ("**Old metric** (session 16 and before): each rank timed ITERS back-to-back calls from its "
              "own start after a barrier, and the slowest rank's mean was reported; it depended on each "
              "variant's barrier skew and let pipelined bcasts overlap. Not comparable with "
              "simulate-scaling.md (common start, commit 00de5b1).")


# Session 17 (the common-start metric, radix-k top levels); filled from the recorded runs.
STATUS = [
    "## Issue 19's goals, one by one (sessions 17 to 19)",
    "",
    "- **1.5x the best flat at 16,384 ranks, round-robin**: met in this model for every case in the table "
    "(min 1.52x, the 4 MiB bcast). Caracal with scaling.py's current rules (header; cells marked [n] come from "
    "the later bcast-only runs named under the table) against SMPI's ompi selector, the only flat one that runs "
    "at 16,384 ranks here (simulate-scaling-flat17.json: SMPI's algorithms, the k-nomial bcast rebuilt from "
    "point-to-point because SMPI's sets up with n^2 messages): barrier 9.4 us against 39.8 (4.25x), bcast 8 B "
    "8.9 / 22.4 (2.52x), 4 KiB 19.0 / 216.2 (11.35x; the leaders' radix-8 k-nomial of session 17 took 30.0, "
    "7.22x), 4 MiB 945.5 / 1,436.7 (1.52x; session 17's binomial tree of whole 4 MiB messages took "
    "16,475.0, 0.09x; simulate-bcast-sag.md), allreduce 8 B 9.4 / 62.3 (6.63x), 4 KiB 22.3 / 617.0 (27.65x). "
    "The 4 MiB allreduce is not in the table: Caracal's run of it at 16,384 used another rule set "
    "(bench/simulate/rules/allreduce-rsag.env, not CARACAL_ENV), 18.8x against SMPI's Rabenseifner "
    "(simulate-allreduce-rsag.md). The other selectors (mpich, mvapich2, impi) cannot be simulated at 16,384 "
    "here, so 'best flat' there is ompi's.",
    "- **Never slower with block mapping, 16,384 ranks** (session 19: flat ompi block measured): **met with "
    "the current rules** (min 1.39x); session 17's rules lost the 4 KiB bcast. Caracal block (its times equal "
    "round-robin's to the nanosecond wherever both were run) against flat ompi block: barrier 9.4 / 56.9 us "
    "(6.09x), bcast 8 B 8.9 / 21.4 (2.42x), bcast 4 KiB 19.0 / 26.4 (1.39x) with the leaders' "
    "scatter_allgather:32 (the current rule from 16 leaders, 1 KiB-64 KiB; simulate-bcast-4k.md) where their "
    "radix-8 k-nomial took 30.0 (0.88x), bcast 4 MiB 945.5 / 12,688.3 (13.42x; simulate-bcast-sag.md), "
    "allreduce 8 B 9.4 / 60.7 (6.46x), 4 KiB 22.3 / 136.9 (6.14x). Block mapping gives ompi's radix-4 tree "
    "its last rounds inside the nodes (4 KiB: 216.2 us round-robin -> 26.4); the k-nomial's 3 rounds of whole "
    "4 KiB messages over 512 leaders lost to it, the scatter's shrinking blocks and 2 Bruck rounds of 8 B blocks "
    "do not. At 64 and 256 ranks block wins every case up to 4 KiB (1.13-3.45x), and the 4 MiB cases at 256 "
    "(bcast 2.07x with the current rule, allreduce 1.28x); the 64-rank 4 MiB bcast was measured with session "
    "17's rule only (\u2020).",
    "- **4,096 ranks** (session 19, round-robin, `smpi/send-is-detached-thresh:0` like the flat rows): against "
    "the best of ompi and mvapich2 (flat17's runs) 3.39x (barrier), 2.05x (8 B bcast), 1.77x (4 KiB bcast, "
    "18.9 us against mvapich2's SMP-aware 33.5; session 17's radix-8 k-nomial 27.4, 1.22x), **1.43x (4 MiB "
    "bcast, 981.9 against ompi's 1,408.7)**, 5.32x (8 B allreduce), 1.84x (4 KiB allreduce, mvapich2's 36.1). "
    "The goal is set at 16,384; at 4,096 flat ompi's 4 MiB bcast stays within 1.5x of Caracal's. The 4 MiB "
    "allreduce at 4,096: simulate-allreduce-rsag.md (its own rule set). Block at 4,096: flat ompi block "
    "(session 19) 48.8 / 17.4 / 21.4 us (barrier, bcast 8 B, 4 KiB) against Caracal's 9.3 / 8.8 / 18.9 (its "
    "round-robin times): 5.23x, 1.97x and 1.13x (session 17's radix-8 k-nomial, 27.4 us, lost: 0.78x); "
    "Caracal's block run was stopped in its 4 MiB bcast (memory for the 16,384-rank budget run) and its "
    "allreduces not run.",
    "- **Honesty check**: SMPI charges no CPU per message. With 0.3 us per send and receive, at 1,024 ranks "
    "round-robin these rules keep 1.50x (barrier), 1.13x (8 B allreduce), 7.6x / 2.6x (4 KiB) over flat "
    "ompi and lose the 8 B bcast (0.81x); radix 8 everywhere does better there (2.75x, 2.06x, 1.17x). Without "
    "detached sends (the 16,384 runs' model, which charges only nonblocking sends) the same picture: 1.94 / "
    "0.77 / 1.71 / 4.95 / 3.71x, radix 8 2.74 / 1.17 / 2.42 / 6.49 / 4.45x (simulate-overhead.md). 16,384 "
    "ranks with the overhead, and radix 8 everywhere at 16,384 without it: not run (session 19's queue reached "
    "the 10:50 cut-off). Session 19's 4 KiB bcast rule pays for its extra messages there: at 1,024 ranks with "
    "0.3 us per message (no detached sends) 42.1 us against the radix-8 k-nomial's 23.0 and flat ompi's 113.9 "
    "(2.71x instead of 4.95x; simulate-bcast-4k.md).",
    "- **Rules chosen by measurement** at 64, 256, 1,024 ranks: bench/results/simulate-radix-choice.md.",
    "- **Host cost at 16,384** (Caracal, up to 4 KiB, session-17 rules): round-robin 461 s CPU, 3.5 GiB Pss, "
    "2,187 s wall beside 3-4 other simulations (load 6-11); block 524 s CPU, 3.1 GiB Pss, 1,151 s wall "
    "running plus 2,582 s stopped by other helpers' quiet windows. Within 8 GiB; the CPU time is within 10 "
    "minutes, a lone wall time with these rules was not measured (session 16's rules: 253 s wall alone). "
    "Flat ompi block (session 19): 132 / 226 / 140 s CPU and 0.41-0.46 GiB Pss for the barrier, bcast and "
    "allreduce families, 917 / 2,686 / 1,027 s wall at load 14-18 (other helpers' tests at the same priority). "
    "Caracal at 4,096 round-robin: 259 + 62 s CPU, 1.0 / 0.55 GiB Pss.",
    "",
]


CURRENT_NOTE = ("Cells from later runs: where a later result file (scaling.py's SUPPLEMENTS) measured a "
                "case with scaling.py's current rules (CARACAL_ENV), or rules choosing the same primitive "
                "on every level for it, and the table's own run chose otherwise, the Caracal cell is that "
                "number, marked [n]: the note under the table names the file, the session and the number "
                "replaced (a radix above a level's group runs as the group's size: scatter_allgather:32 over 8 "
                "leaders runs as :8). [n]\u2020: the table's run chose otherwise and no later run measured the "
                "current choice (not counted in the Goals table).")
KNOMIAL_NOTE = ("ompi here: SMPI's ompi selector, except that its bcasts and allreduces below 8 KiB (a k-nomial "
                "bcast of factor 4, alone or after a binomial reduce) run rebuilt from point-to-point "
                "(COLL_TIME_KNOMIAL=4, bench/simulate/smpi_knomial.h): SMPI's own sets up with an n^2 ring "
                "allgather on first use. Equal to SMPI's own to the nanosecond where both run (256 and 1,024 ranks).")


def variants(runs, ranks, mapping):
    """{variant: {"us": every case its runs at this size measured, "runs": [...]}}: a variant may
    be simulated one family per run (--only), later runs winning."""
    out = {}
    for r in runs:
        if r["ranks"] == ranks and r["mapping"] == mapping:
            v = out.setdefault(r["variant"], {"us": {}, "runs": []})
            v["us"].update(r["us"])
            v["runs"].append(r)
    return out


def rule_choice(env, case, ranks, ppn):
    """What Caracal runs for `case` ("bcast 4096") on `ranks` ranks of the cluster (a node level of
    ppn ranks, a top level of one leader per node) under the rules `env`: the family's variable,
    the communicator's rule, each level's primitive with the radix it really runs (coll/select.c:
    the first matching rule; a radix below 2 runs as 2, one above the group as the group's size:
    tree.c, bcast_scatter_allgather.c), rules of other level kinds, and the settings (keys other
    than the three families'). Two rule sets with equal choices run the same schedule for it."""
    import hier_model_check as hmc  # here, not at the top: it imports this module's CARACAL_ENV
    family, nbytes = case.split()[0], int(case.split()[1])
    key = hmc.FAMILY[family]
    rules = hmc.parse_rules(env.get(key, ""))
    comm = hmc.select(rules, "comm", nbytes, ranks)

    def level(kind, n):
        alg = hmc.select(rules, kind, nbytes, n) or comm
        if alg and alg[0] in ("knomial", "scatter_allgather"):
            k = max(alg[1], 2)
            alg = (alg[0], k if k <= n else max(n, 2))
        return alg
    others = tuple(r for r in rules if r[0] not in ("comm", "node", "top"))
    settings = tuple(sorted((k, v) for k, v in env.items() if k not in hmc.FAMILY.values()))
    return (key, comm, level("node", min(ppn, ranks)), level("top", -(-ranks // ppn)), others, settings)


def choice_text(choice):
    """'node knomial:32, top scatter_allgather:32' (+ settings) for a rule_choice."""
    def alg(a):
        return "none" if a is None else a[0] + (f":{a[1]}" if a[1] else "")
    out = [f"node {alg(choice[2])}", f"top {alg(choice[3])}"]
    out += [f"{k}={v}" for k, v in choice[5]]
    return ", ".join(out)


def smpi_options(r):
    """The SMPI options a run asked for (its cfg without what `caracal simulate` adds for Caracal)."""
    return sorted(set(r.get("cfg", [])) - set(CARACAL_NATIVE_CFG))


def load_supplements(doc, base, entries):
    """The Caracal runs of each supplementary JSON (entries as SUPPLEMENTS, paths relative to
    `base`), each tagged with its file (_src) and session (_session); nothing from a file of
    another platform, ppn or metric than `doc`."""
    out = []
    for e in entries:
        path = Path(base) / e["json"]
        try:
            sup = json.loads(path.read_text())
        except (OSError, ValueError) as exc:  # (before any report file is written)
            print(f"scaling.py: --supplement {path}: {exc.strerror if isinstance(exc, OSError) else exc}",
                  file=sys.stderr)
            sys.exit(2)
        if (sup.get("platform"), sup.get("ppn"), sup.get("metric") == "s16") != \
                (doc.get("platform"), doc.get("ppn"), doc.get("metric") == "s16"):
            continue
        for r in sup["runs"]:
            if is_caracal(r["variant"]):
                out.append(dict(r, caracal_env=r.get("caracal_env") or sup.get("caracal_env", {}),
                                _src=e["json"],
                                _session=e.get("sessions", {}).get(f"{r['ranks']} {r['mapping']}", e["session"])))
    return out


def current_cells(doc, sel, ranks, mapping, cases, supplements, env=None):
    """{case: (us or None, note or None, stale)} for the Caracal column of one table: the table's
    own number where its run chose what `env` (CARACAL_ENV) chooses for the case; else the last
    supplementary run that did (note: file, session, run, the number it replaces, and the SMPI
    options where they differ from the table's run); else the table's number, stale (its run chose
    otherwise and nothing later measured the current choice)."""
    env = env or CARACAL_ENV
    ppn = doc["ppn"]
    own = sel.get("caracal", {"runs": []})["runs"]
    out = {}
    for c in cases:
        want = rule_choice(env, c, ranks, ppn)
        base = next((r for r in reversed(own) if c in r["us"]), None)
        base_env = base and (base.get("caracal_env") or doc["caracal_env"])
        if base and rule_choice(base_env, c, ranks, ppn) == want:
            out[c] = (base["us"][c], None, False)
            continue
        ref = base or (own[-1] if own else None)  # the run whose SMPI options the table's row has
        cands = [r for r in supplements if (r["ranks"], r["mapping"]) == (ranks, mapping) and c in r["us"]
                 and all(o.startswith(SUPPLEMENT_OPTIONS) for o in
                         set(smpi_options(r)) ^ set(smpi_options(ref) if ref else []))
                 and rule_choice(r["caracal_env"], c, ranks, ppn) == want]
        if not cands:
            out[c] = (base["us"][c], f"\u2020 older rules: the table's run ({base.get('_src', 'this JSON')}) chose "
                      f"{choice_text(rule_choice(base_env, c, ranks, ppn))} for this case, scaling.py's rules "
                      f"choose {choice_text(want)}; not measured with them since, not counted in the Goals table.",
                      True) if base else (None, None, False)
            continue
        r = cands[-1]
        note = (f"{r['us'][c]:.1f}: {r['_src']}, session {r['_session']} (run {r['variant']}: "
                f"{choice_text(want)}, as scaling.py's rules choose); ")
        note += (f"replaces {base['us'][c]:.1f} ({base.get('_src', 'this JSON')}: "
                 f"{choice_text(rule_choice(base_env, c, ranks, ppn))})" if base else "the table's run has none")
        if ref and smpi_options(r) != smpi_options(ref):
            note += (f"; SMPI options {', '.join(smpi_options(r)) or 'none'}, the table's run "
                     f"{', '.join(smpi_options(ref)) or 'none'}")
        out[c] = (r["us"][c], note + ".", False)
    return out


def report(args):
    doc = json.loads(Path(args.json).read_text())
    name = Path(args.json).name
    runs = [dict(r, _src=name) for r in doc["runs"]] + [
        dict(r, _src=Path(f).name) for f in args.with_json for r in json.loads(Path(f).read_text())["runs"]
        if r.get("variant") in ("caracal",) + SELECTORS and all(
            c.startswith("smpi/send-is-detached-thresh") for c in r.get("cfg_asked", ()))]
    old = doc.get("metric") == "s16"
    supplements = [] if old else load_supplements(doc, Path(args.json).parent, [
        {"json": f.rpartition(":")[0] or f, "session": f.rpartition(":")[2] if ":" in f else "?"}
        if isinstance(f, str) else f for f in (args.supplement if args.supplement is not None else SUPPLEMENTS)])
    cases = ["barrier 0", "bcast 8", "bcast 4096", "bcast 4194304", "allreduce 8", "allreduce 4096",
             "allreduce 4194304"]
    lines = ["# Simulated scaling: Caracal's hierarchical collectives vs SMPI's flat ones"
             + (" (old metric, session 16)" if old else ""), ""] + ([OLD_METRIC, ""] if old else [
             "Metric (commit 00de5b1): every timed call starts at one simulated instant on every rank; its "
             "time is from there to the last rank's return (bench/simulate/coll_time.c). Session 16's rows, "
             "timed otherwise: simulate-scaling-s16.md.", ""]) + [
             f"Cluster of {doc['ppn']}-core nodes (docs/simulate.md), `caracal simulate`, "
             "bench/simulate/coll_time.c; simulated microseconds per call (slowest rank). "
             "best flat = the fastest of SMPI's selectors ompi, mpich, mvapich2, impi; "
             "speedup = best flat / Caracal (> 1: Caracal faster). Caracal"
             + ("" if old else ", the tables' own runs (unless a table names their rules)") + ": "
             + ", ".join(f"{k}={v}" for k, v in doc["caracal_env"].items()) + "."
             + ("" if old else " " + CURRENT_NOTE + " Current rules: "
                + ", ".join(f"{k}={v}" for k, v in CARACAL_ENV.items()) + "."),
             "", "Host cost: wall seconds (at idle priority on a shared 2-core machine, load as given: "
             "mostly waiting), CPU seconds where recorded, and memory: Pss where recorded (what the "
             "run really takes), else the RSS, which counts SMPI's shared 4 MiB buffers once per rank "
             "(docs/simulate.md, \"Host memory\"). Runs before session 12 used dlopen privatization.", ""]
    keys = sorted({(r["ranks"], r["mapping"]) for r in doc["runs"]})
    cells = {}  # (ranks, mapping) -> current_cells
    for ranks, mapping in keys:
        sel = variants(runs, ranks, mapping)
        if not sel:
            continue
        cells[ranks, mapping] = cur = {c: (sel.get("caracal", {"us": {}})["us"].get(c), None, False)
                                       for c in cases} if old else \
            current_cells(doc, sel, ranks, mapping, cases, supplements)
        # the rules of the run of every family (a one-family run, e.g. flat17's bcast at 16,384, may
        # carry other families' rules it did not use)
        full = [r for r in sel.get("caracal", {"runs": []})["runs"] if not r.get("only")]
        env = (full or sel["caracal"]["runs"])[-1].get("caracal_env") if "caracal" in sel else None
        rules = [] if not env or env == doc["caracal_env"] else [
            "Caracal's rules in this run: " + ", ".join(f"{k}={v}" for k, v in env.items()) + ".", ""]
        lines += [f"## {ranks} ranks, {mapping} mapping", ""] + rules + [
                  "| case | Caracal | " + " | ".join(SELECTORS) + " | best flat | speedup |",
                  "|---|---:|" + "---:|" * len(SELECTORS) + "---:|---:|"]
        notes = []
        for c in cases:
            car, note, stale = cur[c]
            mark = ""
            if note:
                notes.append(note)
                mark = f" [{len(notes)}]" + ("\u2020" if stale else "")
            flats = [sel[s]["us"].get(c) if s in sel else None for s in SELECTORS]
            flats_ok = [f for f in flats if f is not None]
            best = min(flats_ok) if flats_ok else None
            row = [c, f"{car:.1f}{mark}" if car is not None else "-"] + \
                  [f"{f:.1f}" if f is not None else "-" for f in flats] + \
                  [f"{best:.1f}" if best else "-", f"{best / car:.2f}x" if best and car else "-"]
            lines.append("| " + " | ".join(row) + " |")
        lines += [""] + [f"[{i}] {n}" for i, n in enumerate(notes, 1)] + ([""] if notes else [])
        lines += ["host: " + "; ".join(_host(v + (f" ({r['only']})" if r.get("only") else ""), r)
                                       for v, x in sel.items() for r in x["runs"]), ""]
        if any(r.get("knomial") for x in sel.values() for r in x["runs"]):
            lines += [KNOMIAL_NOTE, ""]
    sizes = {r["ranks"] for r in doc["runs"]}  # --with's runs only beside this JSON's sizes
    lines += goals([r for r in runs if r["ranks"] in sizes], cases, None if old else cells) + \
        model_checks(doc, cases) + knomial_checks(doc, cases) + (doc.get("notes") or (STATUS_S16 if old else STATUS))
    out = Path(args.json).with_suffix(".md")
    out.write_text("\n".join(lines) + "\n")
    plot(doc, cases, Path(args.json).with_suffix(".png"), None if old else cells)
    print(out)


def choice_report(args):
    """The rule sets tried for Caracal (variants caracal-LABEL, --caracal-env): one table per size
    and mapping, every variant's rules listed once."""
    doc = json.loads(Path(args.json).read_text())
    cases = ["barrier 0", "bcast 8", "bcast 4096", "bcast 4194304", "allreduce 8", "allreduce 4096",
             "allreduce 4194304"]
    runs = [r for r in doc["runs"] if is_caracal(r["variant"])]
    lines = ["# Choosing Caracal's simulation rules (session 17)", "",
             "Cluster of 32-core nodes, `caracal simulate`, bench/simulate/coll_time.c (common-start metric: "
             "from one simulated instant on every rank to the last rank's return); simulated us. Each "
             "variant is one set of rules (below); `-` = case not run. Written by "
             "`bench/simulate/scaling.py --report-choice --json` this file's JSON.", ""]
    for ranks, mapping in sorted({(r["ranks"], r["mapping"]) for r in runs}):
        sel = [r for r in runs if (r["ranks"], r["mapping"]) == (ranks, mapping)]
        lines += [f"## {ranks} ranks, {mapping}", "", "| variant | " + " | ".join(cases) + " |",
                  "|---|" + "---:|" * len(cases)]
        for r in sel:
            lines.append(f"| {r['variant']} | " + " | ".join(
                f"{r['us'][c]:.1f}" if c in r["us"] else "-" for c in cases) + " |")
        lines.append("")
    lines += ["## Rules of each variant", ""]
    for v in dict.fromkeys(r["variant"] for r in runs):
        env = next(r["caracal_env"] for r in runs if r["variant"] == v)
        lines.append(f"- `{v}`: " + "; ".join(f"`{k}={x}`" for k, x in env.items()))
    out = Path(args.json).with_suffix(".md")
    out.write_text("\n".join(lines) + "\n")
    print(out)


def goals(runs, cases, cells=None):
    """The issue's goal per rank count: round-robin at least 1.5x the best flat in every case,
    block never slower (>= 1x); only the selectors measured at that size count as flat. Caracal's
    number per case from `cells` (report's current_cells) where given: a stale one (its run chose
    otherwise than CARACAL_ENV, nothing later measured) is listed apart, not counted."""
    out = ["## Goals", "", "| ranks | mapping | flat selectors measured | cases | min speedup | cases below goal |"
           + (" not counted (older rules, \u2020) |" if cells is not None else ""),
           "|---:|---|---|---:|---:|---|" + ("---|" if cells is not None else "")]
    for ranks in sorted({r["ranks"] for r in runs}):
        for mapping, goal in (("roundrobin", 1.5), ("block", 1.0)):
            sel = variants(runs, ranks, mapping)
            if "caracal" not in sel:
                continue
            cur = (cells or {}).get((ranks, mapping)) or {c: (sel["caracal"]["us"].get(c), None, False) for c in cases}
            flats = [v for v in SELECTORS if v in sel]
            sp, stale = {}, []
            for c in cases:
                car, _, old = cur[c]
                best = [sel[v]["us"][c] for v in flats if c in sel[v]["us"]]
                if car and best:
                    (stale.append(f"{c} {min(best) / car:.2f}x") if old else sp.__setitem__(c, min(best) / car))
            if not sp:
                continue
            below = [f"{c} {x:.2f}x" for c, x in sp.items() if x < goal]
            out.append(f"| {ranks} | {mapping} (goal {goal}x) | {', '.join(flats) or '-'} | {len(sp)} | "
                       f"{min(sp.values()):.2f}x | {'; '.join(below) or 'none'} |"
                       + (f" {'; '.join(stale) or '-'} |" if cells is not None else ""))
    return out + [""]


def model_checks(doc, cases):
    """The same cases with a changed SMPI option against the recorded run without it (the
    16,384-rank runs send nothing detached: docs/simulate.md, "SimGrid's detached sends")."""
    checks = doc.get("model_checks", [])
    if not checks:
        return []
    out = ["## Model check: smpi/send-is-detached-thresh:0", "",
           "The 16,384-rank runs use `smpi/send-is-detached-thresh:0` (no message sent detached: SimGrid 3.32 "
           "walks one list of every detached message in flight at each completion, n^2 per world-wide step). "
           "The same cases at 64 ranks with it, against the recorded row without it (simulated us):", "",
           "| ranks | mapping | variant | case | recorded | thresh 0 | change |", "|---:|---|---|---|---:|---:|---:|"]
    for c in checks:
        base = next((r for r in doc["runs"] if (r["ranks"], r["mapping"], r["variant"]) ==
                     (c["ranks"], c["mapping"], c["variant"])), None)
        for case in cases:
            a, b = (base or {}).get("us", {}).get(case), c["us"].get(case)
            if a is None or b is None:
                continue
            out.append(f"| {c['ranks']} | {c['mapping']} | {c['variant']} | {case} | {a:.1f} | {b:.1f} | "
                       f"{b - a:+.1f} |")
    return out + [""]


def knomial_checks(doc, cases):
    """COLL_TIME_KNOMIAL's rebuild against SMPI's own algorithms where their set-up is affordable."""
    checks = doc.get("knomial_checks", [])
    if not checks:
        return []
    out = ["## The k-nomial rebuild against SMPI's own", "",
           "Round-robin, `smpi/send-is-detached-thresh:0`, simulated us; SMPI's own pays its n^2 set-up in "
           "the untimed first call (host CPU in the last column). At these sizes the selector's 4 KiB allreduce is not yet "
           "redbcast (256: rab_rdb, 1,024: rdb; from 4,096 it is), so the rebuild's is compared with "
           "`smpi/allreduce:redbcast`.", "",
           "| ranks | run | " + " | ".join(c for c in cases if "4194304" not in c) + " | CPU s |",
           "|---:|---|" + "---:|" * (len(cases) - 2) + "---:|"]
    for r in checks:
        cells = [f"{r['us'][c]:.3f}" if c in r["us"] else "" for c in cases if "4194304" not in c]
        out.append(f"| {r['ranks']} | {r['check']} | " + " | ".join(cells) + f" | {r['cpu_s']:.0f} |")
    return out + [""]


def _host(variant, r):
    """What a run cost the host: wall and CPU seconds, peak Pss (the memory really taken;
    older runs have only the RSS, which counts SMPI's shared buffers once per rank)."""
    if "wall_s" not in r:  # a run killed before it wrote its summary
        note = f" [{r['failed']}]" if r.get("failed") else ""
        return f"{variant} host cost not recorded{note}" + (f" ({r['note']})" if r.get("note") else "")
    cpu = f", {r['cpu_s']:.0f} s CPU" if r.get("cpu_s") is not None else ""
    mem = f"{r['peak_pss_mb']} MB Pss" if r.get("peak_pss_mb") else f"{r['peak_rss_mb']} MB RSS"
    priv = " (mmap privatization)" if "smpi/privatization:mmap" in r.get("cfg", []) else ""
    wall = f"{r['wall_s']:.0f} s wall" if "paused_s" not in r else \
        f"{r['running_s']:.0f} s wall running ({r['paused_s']:.0f} s stopped besides)"
    note = f" [{r['failed']}]" if r.get("failed") else ""
    note += f" ({r['note']})" if r.get("note") else ""
    return f"{variant} {wall}{cpu}, {mem}{priv}, load {r['load']}{note}"


def plot(doc, cases, out, cells=None):
    """Per case and mapping, time against ranks: each selector's recorded runs, and Caracal's
    numbers from `cells` (report's current_cells, stale ones left out) where given."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, len(cases), figsize=(3 * len(cases), 6), squeeze=False)
    for row, mapping in enumerate(("roundrobin", "block")):
        for col, c in enumerate(cases):
            ax = axes[row][col]
            for variant in ("caracal",) + SELECTORS:
                pts = sorted((r["ranks"], r["us"][c]) for r in doc["runs"]
                             if r["mapping"] == mapping and r["variant"] == variant and c in r["us"])
                if variant == "caracal" and cells is not None:
                    pts = sorted((n, cur[c][0]) for (n, m), cur in cells.items()
                                 if m == mapping and cur[c][0] is not None and not cur[c][2])
                if pts:
                    ax.plot(*zip(*pts), marker="o", lw=2 if variant == "caracal" else 1, label=variant)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{c} B, {mapping}" if not c.startswith("barrier") else f"barrier, {mapping}", fontsize=8)
            ax.set_xlabel("ranks", fontsize=7)
            if col == 0:
                ax.set_ylabel("simulated us", fontsize=7)
            ax.tick_params(labelsize=6)
    axes[0][0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(out, dpi=90)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", default="64,256,1024")
    ap.add_argument("--ppn", type=int, default=32)
    ap.add_argument("--iters", type=int, default=2)
    ap.add_argument("--json", default=str(ROOT / "bench" / "results" / "simulate-scaling.json"))
    ap.add_argument("--mappings", default="roundrobin,block")
    ap.add_argument("--variants", default=",".join(("caracal",) + SELECTORS))
    ap.add_argument("--cfg", action="append", default=[], help="another SMPI option, e.g. smpi/privatization:mmap")
    ap.add_argument("--caracal-env", action="append", default=[], metavar="KEY=VALUE",
                    help="Caracal's rules for this run's caracal variants (repeated; replaces CARACAL_ENV)")
    ap.add_argument("--max-bytes", type=int, default=4096,
                    help="above --max-bytes-above ranks, leave out larger cases (host time)")
    ap.add_argument("--max-bytes-above", type=int, default=1024)
    ap.add_argument("--min-bytes", type=int, default=0,
                    help="leave out the bcast/allreduce cases below this many bytes (COLL_TIME_MIN_BYTES)")
    ap.add_argument("--only", default="", help="COLL_TIME_ONLY: these families only (one run per family)")
    ap.add_argument("--knomial", type=int, default=0,
                    help="flat runs: COLL_TIME_KNOMIAL (the ompi selector's k-nomial bcast rebuilt, smpi_knomial.h)")
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--with", dest="with_json", action="append", default=[],
                    help="with --report: runs from another JSON (e.g. Caracal's) for this JSON's sizes")
    ap.add_argument("--supplement", action="append", metavar="FILE",
                    help="with --report: FILE[:SESSION], a later JSON whose Caracal runs of the current rules "
                         "replace the table's cells measured with others (repeated; default SUPPLEMENTS; "
                         "paths relative to --json's directory)")
    ap.add_argument("--report-choice", action="store_true", help="table of the caracal-LABEL rule sets tried")
    ap.add_argument("--import", dest="import_out", metavar="FILE",
                    help="add one run from caracal simulate's saved output (one --ranks, --mappings, --variants)")
    ap.add_argument("--note", help="a note kept with the run (measure or --import)")
    ap.add_argument("--paused", type=float, default=0, help="with --import: seconds the run was stopped (SIGSTOP)")
    args = ap.parse_args()
    if args.report_choice:
        return choice_report(args)
    report(args) if args.report else import_out(args) if args.import_out else measure(args)


if __name__ == "__main__":
    main()
