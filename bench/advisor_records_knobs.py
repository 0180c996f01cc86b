#!/usr/bin/env python3
"""records (128 KiB point-to-point records) under the protocol knobs of each library's transport
in use here, beyond the one `caracal advise` suggests: which knob governs a 128 KiB message on
one host, and can any of them make records 20% faster (issue 17's goal)?

Every variant runs the program through `caracal run` (apprun.compare: interleaved rounds, the
order rotating; run time = the slowest rank's MPI_Init-to-Finalize seconds). Run it under the
bench lock, one library per hold (each hold < 10 minutes):

  flock /work/bench.lock python3 bench/advisor_records_knobs.py --mpi openmpi -n 2 --ops 1000
  flock /work/bench.lock python3 bench/advisor_records_knobs.py --mpi mpich -n 2 --ops 1000
  flock /work/bench.lock python3 bench/advisor_records_knobs.py --mpi impi -n 2 --ops 1000

Results: bench/results/advisor-records-knobs/<mpi>-n<N>.json (every time, the load before and
after each round) and .md (medians, quartiles, ratio to the baseline). A run that is cut
short keeps the rounds done so far (the JSON is rewritten after every round).
"""
import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

from caracal.advise import apprun  # noqa: E402

EAGER = "135168"  # 128 KiB + header room, as the advisor rounds it (python/caracal/advise/p2p.py)
VARIANTS = {
    # Open MPI 4.1, btl/vader (one host): 4 KiB eager limit; above it a rendezvous whose data
    # moves by CMA single copy (process_vm_readv) after the match; up to 32 KiB per fragment
    "openmpi": {
        "baseline": {},
        "eager": {"OMPI_MCA_btl_vader_eager_limit": EAGER},
        "eager+fragments": {"OMPI_MCA_btl_vader_eager_limit": EAGER, "OMPI_MCA_btl_vader_max_send_size": EAGER},
        "no-single-copy": {"OMPI_MCA_btl_vader_single_copy_mechanism": "none"},
    },
    # MPICH 4.0.2 ch4:ucx, one host: its own POSIX shared memory (64 cells of 69632 bytes) moves
    # on-node messages, UCX is not used between ranks of one host; MPIR_CVAR_NOLOCAL=1 sends
    # them through UCX instead (its shm transports, CMA), where UCX_RNDV_THRESH decides
    "mpich": {
        "baseline": {},
        "cells": {"MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE": EAGER},
        "ucx": {"MPIR_CVAR_NOLOCAL": "1"},
        "ucx-eager": {"MPIR_CVAR_NOLOCAL": "1", "UCX_RNDV_THRESH": EAGER},
        "ucx-rndv-get": {"MPIR_CVAR_NOLOCAL": "1", "UCX_RNDV_SCHEME": "get_zcopy"},
    },
    # Intel MPI 2021.19, one host: its shm transport; I_MPI_SHM_EAGER_THRESHOLD is the eager
    # threshold (expert), I_MPI_SHM_CELL_FWD_SIZE the forward cells, I_MPI_SHM_CMA the single copy
    "impi": {
        "baseline": {},
        "shm-eager": {"I_MPI_SHM_EAGER_THRESHOLD": EAGER},
        "fwd-cells": {"I_MPI_SHM_CELL_FWD_SIZE": EAGER},
        "no-cma": {"I_MPI_SHM_CMA": "0"},
    },
}


def quartiles(xs):
    if len(xs) < 2:
        return [xs[0], xs[0]]
    q = statistics.quantiles(sorted(xs), n=4, method="inclusive")
    return [q[0], q[2]]


def table(doc):
    times = doc["times"]
    base = statistics.median(times["baseline"]) if times.get("baseline") else None
    lines = [f"# records knobs: {doc['mpi']}, {doc['nranks']} ranks, records -n {doc['ops']}", "",
             f"{len(times['baseline'])} interleaved rounds, {doc['created']}; load average "
             f"{doc['loads'][0]:.2f} at the start, {doc['loads'][-1]:.2f} at the end (2 cores). Run time = slowest "
             "rank's MPI_Init-to-MPI_Finalize seconds.", "",
             "| variant | settings | median s | p25-p75 s | vs baseline |", "|---|---|---:|---:|---:|"]
    for name, ts in times.items():
        if not ts:
            continue
        m = statistics.median(ts)
        q = quartiles(ts)
        env = " ".join(f"{k}={v}" for k, v in doc["variants"][name].items()) or "(defaults)"
        rel = f"{100 * (1 - m / base):+.1f}%" if base else "-"
        lines.append(f"| {name} | `{env}` | {m:.3f} | {q[0]:.3f}-{q[1]:.3f} | {rel} |")
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mpi", choices=sorted(VARIANTS), required=True)
    p.add_argument("-n", type=int, default=2)
    p.add_argument("--ops", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=9)
    p.add_argument("--max-seconds", type=float, default=560, help="stop after the round that passes this")
    p.add_argument("--only", help="comma-separated variants to run (default: all of the library's)")
    a = p.parse_args()
    out = ROOT / "bench" / "results" / "advisor-records-knobs"
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"{a.mpi}-n{a.n}"
    variants = VARIANTS[a.mpi]
    if a.only:
        wanted = ["baseline"] + [v for v in a.only.split(",") if v and v != "baseline"]
        unknown = [v for v in wanted if v not in variants]
        if unknown:
            p.error(f"--only: unknown variant(s) {', '.join(unknown)} (choose from {', '.join(variants)})")
        variants = {k: variants[k] for k in wanted}
    build = ROOT / ("build" if a.mpi == "openmpi" else "build-mpich")  # (Intel MPI runs the MPICH build)
    argv = [str(build / "bin" / "records"), "-n", str(a.ops)]
    doc = {"schema": "caracal.bench-records-knobs/1", "mpi": a.mpi, "nranks": a.n, "ops": a.ops,
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "variants": variants,
           "times": {k: [] for k in variants}, "loads": [os.getloadavg()[0]]}
    t0 = time.monotonic()
    names = list(variants)
    for r in range(a.repeats):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            t = apprun.run_once(a.mpi, a.n, argv, variants[name])["seconds"]
            doc["times"][name].append(round(t, 5))
            print(f"round {r + 1}: {name}: {t:.4f} s", file=sys.stderr)
        doc["loads"].append(os.getloadavg()[0])
        stem.with_suffix(".json").write_text(json.dumps(doc, separators=(",", ":")) + "\n")
        stem.with_suffix(".md").write_text(table(doc))
        if time.monotonic() - t0 > a.max_seconds:
            print(f"stopping after {r + 1} rounds (--max-seconds)", file=sys.stderr)
            break
    sys.stdout.write(table(doc))


if __name__ == "__main__":
    main()
