#!/usr/bin/env python3
"""A seeded, structure-aware fuzzer for the Python loaders of Caracal's JSON documents.

Each case takes a valid seed document (a profile, a topology, a probe or bench result, a
static topology description), applies a few random mutations to its tree (a value of
another type, huge or negative numbers, deep nesting, long or odd strings, keys dropped
or added, lists cut or grown, matrices made ragged) or, sometimes, to its text (cut
short, bytes flipped or inserted), writes it to a file and runs the CLI command that
reads such files, in this process:

  profile    caracal report FILE
  topology   caracal nodemap --check FILE
  probe      caracal report FILE          (caracal.probe/1 and caracal.bench/1)
  static     caracal nodemap --static FILE --out OUT

The property: the command returns 0 (the document was good) or 2 with one line on stderr;
any exception escaping the command, another status, a message of several lines, or a case
running longer than --case-timeout seconds is a failure. Failing inputs are saved and the
command that replays one is printed. Same --seed, same cases.

  python fuzz/python_loaders.py --target profile --seconds 600 --seed 1
  python fuzz/python_loaders.py --target profile --seed 1 --replay 1234
"""
import argparse
import contextlib
import copy
import functools
import io
import json
import os
import random
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from caracal import cli  # noqa: E402
from caracal.errors import UsageError  # noqa: E402

_PARSER = None


def cli_main(argv):
    """caracal.cli.main with its parser built once (building it is most of a case's time)."""
    global _PARSER
    if _PARSER is None:
        _PARSER = cli.build_parser()
    args = _PARSER.parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except UsageError as e:  # as cli.main: one line, exit 2
        print(f"caracal {args.command}: {e}", file=sys.stderr)
        return 2

PROBE_SEED = {
    "schema": "caracal.probe/1", "label": "seed", "created": "2026-11-25T12:00:00Z", "mode": "pingpong",
    "transport": "mpi", "mpi": "openmpi", "mpi_library": "Open MPI v4.1.4", "ranks": 2,
    "options": {"min": 1, "max": 1024, "per_octave": 1, "perturb": 0, "nocache": False, "budget": 1.0,
                "trials": 3, "min_reps": 10},
    "machine": {"hostname": "h", "cores": 2, "llc_bytes": 1 << 20},
    "wall_seconds": 1.5, "corrupted": [],
    "points": [{"size": s, "reps": 100, "trials": 3, "latency_us": 0.5 + s / 1000, "latency_us_median": 0.5,
                "bandwidth_MBps": s / 0.5, "bandwidth_MBps_median": s / 0.5, "msg_rate": 2e6,
                "msg_rate_median": 2e6} for s in (1, 8, 64, 1024)],
}

BENCH_SEED = {
    "schema": "caracal.bench/1", "label": "seed", "created": "2026-11-25T12:00:00Z", "coll": "bcast",
    "mpi": "mpich", "mpi_library": "MPICH 4.0.2", "ranks": 4, "caracal": True, "sync": "window",
    "sync_bias": "none", "reps": 50,
    "launches": [{"seed": 1, "seconds": 0.5, "clock_max_offset_us": 0.1, "clock_min_rtt_us": 1.0}],
    "machine": {"hostname": "h", "cores": 2}, "wall_seconds": 2.0,
    "points": [{"size": s, "bytes": s * 4, "reps": 50, "valid": 50, "min_us": 1.0, "median_us": 1.5,
                "p90_us": 2.0, "max_us": 3.0, "launch_medians_us": [1.5]} for s in (0, 1, 1024)],
}

STATIC_SEED = {"schema": "caracal.topology-input/1",
               "ranks": [{"host": "n01", "package": 0, "switch": "rack1"}, {"host": "n01", "package": 1, "switch": "rack1"},
                         {"host": "n02", "switch": "rack1"}, {"host": "n03", "switch": "rack2"}]}


@functools.lru_cache(maxsize=None)
def seeds(target):
    """The valid documents cases start from (shared: mutate_tree copies before changing)."""
    if target == "profile":
        return [json.loads((ROOT / "tests/python/data/profile-4ranks.json").read_text())]
    if target == "topology":
        return [json.loads(p.read_text()) for p in sorted((ROOT / "tests/c/data").glob("topology*.json"))
                if "truncated" not in p.name]
    if target == "probe":
        integrity = copy.deepcopy(PROBE_SEED)
        integrity.update(mode="integrity", points=[{"size": 8, "checked": 8, "bad_bytes": 0, "ok": True}])
        return [PROBE_SEED, integrity, BENCH_SEED]
    if target == "static":
        return [STATIC_SEED, {"schema": "caracal.topology-input/1", "hosts": ["a", "a", "b", "b"]}]
    raise SystemExit(f"unknown target {target}")


def command(target, path, out):
    return {"profile": ["report", path], "topology": ["nodemap", "--check", path], "probe": ["report", path],
            "static": ["nodemap", "--static", path, "--out", out, "--force"]}[target]


# ---- mutations ----

def nodes(v, path=()):
    """Every (path, value) in the tree."""
    yield path, v
    if isinstance(v, dict):
        for k, x in v.items():
            yield from nodes(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from nodes(x, path + (i,))


def get(doc, path):
    for k in path:
        doc = doc[k]
    return doc


def put(doc, path, value):
    if not path:
        return value
    get(doc, path[:-1])[path[-1]] = value
    return doc


ODD_STRINGS = ["", " ", "\x00", "\u00e9", "\ud7ff", "\U0001f600", "a" * 5000, "=", "rank 0=a slot=*", "-1",
               "caracal.profile/1", "caracal.topology/1", "NaN", "\n\n", "../../etc/passwd", "%s%n", "\u202e"]


def scalar(rng):
    r = rng.random()
    if r < 0.25:
        return rng.choice([0, 1, -1, 2, 3, 7, 2 ** 31, 2 ** 31 - 1, -2 ** 31, 2 ** 63, 2 ** 64 + 1, 10 ** 23,
                           -10 ** 23, 10 ** 24, 4096, 1 << 20, (1 << 20) + 1])
    if r < 0.4:
        return rng.choice([0.0, -0.0, 0.5, 1e-300, 1e300, -1e300, 1.7976931348623157e308, 5e-324, 1e15 + 0.5])
    if r < 0.55:
        return rng.choice([True, False, None])
    if r < 0.8:
        return rng.choice(ODD_STRINGS)
    return rng.choice([[], {}, [0], {"": 0}, [[]], [None] * 3])


def deep(rng, depth):
    v = rng.choice([0, "x", None])
    for _ in range(depth):
        v = [v] if rng.random() < 0.5 else {"k": v}
    return v


def mutate_tree(doc, rng):
    doc = copy.deepcopy(doc)
    for _ in range(rng.choice([1, 1, 1, 2, 3, 5])):
        all_nodes = list(nodes(doc))
        path, v = rng.choice(all_nodes)
        r = rng.random()
        if r < 0.30:
            doc = put(doc, path, scalar(rng))
        elif r < 0.40 and isinstance(v, (int, float)) and not isinstance(v, bool):
            doc = put(doc, path, rng.choice([v + 1, v - 1, -v, v * 2, v * 10 ** 6, v + 0.5]))
        elif r < 0.50 and path:
            parent = get(doc, path[:-1])
            if isinstance(parent, dict):
                del parent[path[-1]]
            else:
                parent.pop(path[-1])
        elif r < 0.58 and isinstance(v, dict):
            v[rng.choice(["extra", "schema", "nranks", "ranks", "L", "levels", "partial", ""])] = scalar(rng)
        elif r < 0.70 and isinstance(v, list):
            if v and rng.random() < 0.5:
                k = rng.randrange(len(v))
                v.insert(k, copy.deepcopy(v[k]))  # ragged matrices, duplicated ranks
            elif v:
                del v[rng.randrange(len(v)):]
            else:
                v.append(scalar(rng))
        elif r < 0.75:
            doc = put(doc, path, deep(rng, rng.choice([3, 30, 63, 64, 65, 200])))
        elif r < 0.85 and isinstance(v, list) and v:
            rng.shuffle(v)
        elif r < 0.92 and path:
            # the same value somewhere else (types that fit one key put under another)
            _, other = rng.choice(all_nodes)
            doc = put(doc, path, copy.deepcopy(other))
        else:
            doc = put(doc, path, rng.choice([[v], {"v": v}, str(v)[:50]]))
    return doc


def mutate_text(text, rng):
    r = rng.random()
    b = bytearray(text.encode("utf-8", "surrogatepass"))
    if r < 0.3 and b:
        return bytes(b[:rng.randrange(len(b))])
    if r < 0.6 and b:
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if r < 0.8:
        k = rng.randrange(len(b) + 1)
        return bytes(b[:k]) + rng.choice([b"\xff\xfe", b"NaN", b"Infinity", b"-", b"1e999", b",", b"]", b"}",
                                          b'"\\ud800"', b"\x00", b"9" * 400]) + bytes(b[k:])
    return bytes(b) + rng.choice([b"\n{}", b" ", b"garbage", b"\x00"])


def make_case(target, seed, index):
    rng = random.Random(f"{target}:{seed}:{index}")
    doc = mutate_tree(rng.choice(seeds(target)), rng)
    try:
        text = json.dumps(doc, indent=rng.choice([None, 1]), ensure_ascii=rng.random() < 0.5)
    except (ValueError, RecursionError):
        text = "{}"
    data = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.2:
        data = mutate_text(text, rng)
    return data


# ---- running one case ----

class CaseTimeout(BaseException):
    """Not an Exception: no `except Exception` inside a command may swallow it."""


def _alarm(_sig, _frame):
    raise CaseTimeout()


def run_case(target, data, workdir, case_timeout):
    """None if the property holds, else a description of the failure."""
    path = os.path.join(workdir, "case.json")
    out = os.path.join(workdir, "out.json")
    with open(path, "wb") as f:
        f.write(data)
    stdout, stderr = io.StringIO(), io.StringIO()
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, case_timeout)
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            rc = cli_main(command(target, path, out))
    except CaseTimeout:
        return f"no answer within {case_timeout} s"
    except SystemExit as e:  # argparse
        rc = e.code
    except BaseException:  # noqa: B902 - anything escaping the command is what we look for
        return "exception:\n" + traceback.format_exc()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if rc == 0:
        return None
    err = stderr.getvalue().strip()
    if rc != 2:
        return f"exit status {rc}; stderr: {err[:500]}"
    if len(err.splitlines()) != 1:
        return f"exit 2 but {len(err.splitlines())} lines on stderr: {err[:500]}"
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", choices=("profile", "topology", "probe", "static"), required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=10.0, help="time budget (default 10)")
    ap.add_argument("--cases", type=int, help="stop after this many cases instead")
    ap.add_argument("--case-timeout", type=float, default=20.0)
    ap.add_argument("--replay", type=int, metavar="INDEX", help="run one case and show what happens")
    ap.add_argument("--crashes", default=str(ROOT / "build-fuzz" / "py-crashes"), help="where failing inputs go")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="caracal-pyfuzz-") as work:
        if args.replay is not None:
            data = make_case(args.target, args.seed, args.replay)
            print(data[:2000].decode("utf-8", "replace"))
            print("->", run_case(args.target, data, work, args.case_timeout) or "ok")
            return 0
        t0, i, failures = time.monotonic(), 0, 0
        while (args.cases is None or i < args.cases) and time.monotonic() - t0 < args.seconds:
            data = make_case(args.target, args.seed, i)
            why = run_case(args.target, data, work, args.case_timeout)
            if why:
                failures += 1
                os.makedirs(args.crashes, exist_ok=True)
                saved = os.path.join(args.crashes, f"{args.target}-{args.seed}-{i}.json")
                with open(saved, "wb") as f:
                    f.write(data)
                print(f"FAIL case {i}: {why.strip().splitlines()[-1][:300]}\n  saved {saved}; replay: "
                      f"python fuzz/python_loaders.py --target {args.target} --seed {args.seed} --replay {i}",
                      file=sys.stderr)
            i += 1
        secs = time.monotonic() - t0
    print(json.dumps({"target": args.target, "seed": args.seed, "cases": i, "seconds": round(secs, 1),
                      "failures": failures, "per_second": round(i / secs, 1) if secs else 0}))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
