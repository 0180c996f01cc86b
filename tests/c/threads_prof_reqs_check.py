#!/usr/bin/env python3
"""The profile of tests/c/test_threads_prof_reqs.c: each receive call site (post_a, post_b)
received exactly the bytes the program announced ("reqs: expect FUNCTION BYTES_RANK0
BYTES_RANK1 COUNT"), per rank and in all, and MPI_Irecv's bytes_recv is their sum. A receive
whose bytes went to another request (a reused handle), or were lost, breaks one of them.

    threads_prof_reqs_check.py PROGRAM_OUTPUT PROFILE"""
import json
import sys


def main():
    out, path = sys.argv[1], sys.argv[2]
    expect = {}
    for line in open(out):
        if line.startswith("reqs: expect "):
            fn, b0, b1, cnt = line.split()[2:]
            expect[fn] = ([int(b0), int(b1)], int(cnt))
    if set(expect) != {"post_a", "post_b"}:
        sys.exit("threads_prof_reqs_check: no 'reqs: expect' lines for post_a and post_b in the program's output")
    doc = json.load(open(path))
    bad = []
    got = {}
    for s in doc["callsites"]:
        if s["call"] == "MPI_Irecv":
            if s.get("function") not in expect:
                bad.append(f"MPI_Irecv site in {s.get('function')} ({s.get('file')}:{s.get('line')}): not one of the program's")
                continue
            got[s["function"]] = s
    for fn, (per_rank, cnt) in sorted(expect.items()):
        s = got.get(fn)
        if s is None:
            bad.append(f"{fn}: no MPI_Irecv call site in the profile")
            continue
        if s["count"] != cnt:
            bad.append(f"{fn}: {s['count']} calls, the program made {cnt}")
        if s["per_rank"]["bytes_recv"] != per_rank or s["bytes_recv"] != sum(per_rank):
            bad.append(f"{fn}: bytes_recv {s['bytes_recv']} (per rank {s['per_rank']['bytes_recv']}), "
                       f"the program received {sum(per_rank)} (per rank {per_rank})")
        if s["bytes"] != s["bytes_recv"] or s["bytes_sent"]:
            bad.append(f"{fn}: bytes {s['bytes']}, bytes_sent {s['bytes_sent']}, bytes_recv {s['bytes_recv']}")
    calls = {c["call"]: c for c in doc["calls"]}
    total = sum(sum(pr) for pr, _ in expect.values())
    irecv = calls.get("MPI_Irecv", {})
    if irecv.get("bytes_recv") != total:
        bad.append(f"MPI_Irecv: bytes_recv {irecv.get('bytes_recv')}, the program received {total}")
    for b in bad:
        print("threads_prof_reqs_check:", b)
    print(f"threads_prof_reqs_check: 2 receive call sites, {total} bytes received, {len(bad)} problems")
    sys.exit(1 if bad else 0)


main()
