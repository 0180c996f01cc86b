#!/usr/bin/env python3
"""The profile of tests/c/test_threads.c (four threads per rank in MPI at once) adds up:
every function the program's rank 0 announced ("threads: expect MPI_X=N ...", calls per
rank) was counted exactly N x ranks times; per function, the call sites' counts, bytes and
times sum to the function's; the collectives table counts the same calls; each rank's
time_mpi is the sum of its sites' times.

    threads_prof_check.py PROGRAM_OUTPUT PROFILE NRANKS"""
import json
import math
import sys


def main():
    out, path, nranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
    line = next((l for l in open(out) if l.startswith("threads: expect ")), None)
    if line is None:
        sys.exit("threads_prof_check: no 'threads: expect' line in the program's output")
    expect = {k: int(v) * nranks for k, v in (w.split("=") for w in line.split()[2:])}
    doc = json.load(open(path))
    calls = {c["call"]: c for c in doc["calls"]}
    bad = []
    for name, n in sorted(expect.items()):
        got = calls.get(name, {}).get("count", 0)
        if got != n:
            bad.append(f"{name}: counted {got}, called {n}")
    sites = {}
    for s in doc["callsites"]:
        agg = sites.setdefault(s["call"], [0, 0, 0.0])
        agg[0] += s["count"]
        agg[1] += s["bytes"]
        agg[2] += s["time"]
        if sum(s["per_rank"]["count"]) != s["count"]:
            bad.append(f"site {s['call']} {s.get('function')}: per-rank counts do not add up")
    # (times are printed to about six digits)
    for name, c in calls.items():
        cnt, byts, t = sites.get(name, [0, 0, 0.0])
        if cnt != c["count"] or byts != c["bytes"] or not math.isclose(t, c["time"], rel_tol=1e-4, abs_tol=1e-8):
            bad.append(f"{name}: sites {cnt} calls {byts} B {t} s, function {c['count']} calls {c['bytes']} B {c['time']} s")
    coll = {}
    for c in doc["collectives"]:
        coll[c["call"]] = coll.get(c["call"], 0) + c["calls"]  # (count: instances, calls: summed over ranks)
    for name in ("MPI_Allreduce", "MPI_Bcast", "MPI_Reduce", "MPI_Iallreduce", "MPI_Ialltoall"):
        if coll.get(name) != calls[name]["count"]:
            bad.append(f"{name}: collectives table {coll.get(name)}, calls {calls[name]['count']}")
    tmpi = sum(r["time_mpi"] for r in doc["ranks"])
    tsum = sum(c["time"] for c in doc["calls"])
    if not math.isclose(tmpi, tsum, rel_tol=1e-4, abs_tol=1e-6):
        bad.append(f"time_mpi over ranks {tmpi} s, functions' times {tsum} s")
    for b in bad:
        print("threads_prof_check:", b)
    print(f"threads_prof_check: {len(expect)} functions, {sum(expect.values())} calls, {len(bad)} problems")
    sys.exit(1 if bad else 0)


main()
