"""Shared pieces of Caracal's benchmark drivers: machine description, interleaved
repetition, medians and ratios. Speed claims are ratios against the native library
measured in the same run, never single absolute times."""
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from caracal import launch  # noqa: E402


def machine_description():
    def cmd(*a):
        try:
            return subprocess.run(a, capture_output=True, text=True, timeout=20).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""
    cpu = ""
    for line in cmd("lscpu").splitlines():
        if line.startswith("Model name:"):
            cpu = line.split(":", 1)[1].strip()
    ompi = cmd("mpiexec.openmpi", "--version").splitlines()[:1]
    mpich = [l for l in cmd("mpichversion").splitlines() if "Version" in l][:1]
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "host": platform.node(), "kernel": platform.release(), "cpu": cpu,
        "cores": os.cpu_count(), "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "openmpi": ompi[0] if ompi else "", "mpich": mpich[0].split(":", 1)[-1].strip() if mpich else "",
        "load_average_at_start": os.getloadavg(),
        "note": "shared 2-core machine: other work ran concurrently; compare ratios, not absolute times",
    }


def progress(done, total, label=""):
    width = 30
    fill = int(width * done / max(total, 1))
    sys.stderr.write(f"\r[{'#' * fill}{'.' * (width - fill)}] {done}/{total} {label[:40]:<40}")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def interleave(configs, repeats, run_one, seed=1):
    """Run every config `repeats` times, in a new random order each round, so that
    slow phases of a noisy machine hit every config alike. run_one(config) -> value.
    Returns {config_name: [values...]}."""
    rng = random.Random(seed)
    out = {c: [] for c in configs}
    total, done = len(configs) * repeats, 0
    for _ in range(repeats):
        order = list(configs)
        rng.shuffle(order)
        for c in order:
            out[c].append(run_one(c))
            done += 1
            progress(done, total, str(c))
    return out


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def mpiexec(mpi, n, argv, env=None):
    return launch.mpiexec_command(mpi, n, argv, env=env)


def run_launch(cmd, timeout_s, busy=False):
    """Run one MPI launch (bounded by timeout_s), optionally while one busy loop per core
    keeps the machine loaded (the "second job" case: Caracal and native under the same load).
    Returns the CompletedProcess."""
    loops = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(os.cpu_count() or 1)] if busy else []
    try:
        return subprocess.run(["timeout", str(timeout_s)] + cmd, capture_output=True, text=True, env=launcher_env())
    finally:
        for p in loops:
            p.kill()
            p.wait()


def launcher_env():
    return launch.launcher_env()


def write_results(name, doc, markdown):
    res = ROOT / "bench" / "results"
    res.mkdir(parents=True, exist_ok=True)
    (res / f"{name}.json").write_text(json.dumps(doc, separators=(",", ":")) + "\n")   # compact
    (res / f"{name}.md").write_text(markdown)
    print(f"wrote bench/results/{name}.md and .json", file=sys.stderr)


SIZE_SCALE = {"K": 1 << 10, "M": 1 << 20}


def parse_size(t):
    """8, 4K, 1M -> bytes (ValueError or KeyError on anything else)."""
    t = t.strip().upper()
    return int(t[:-1]) * SIZE_SCALE[t[-1]] if t[-1] in SIZE_SCALE else int(t)


def caracal_algorithms(lib, who="bench"):
    """{family: [algorithm names]} from `caracal info --mpi LIB --algorithms --json`."""
    p = subprocess.run([sys.executable, "-m", "caracal", "info", "--mpi", lib, "--algorithms", "--json"],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))
    try:
        doc = json.loads(p.stdout)
        return {f["name"]: [a["name"] for a in f["algorithms"]] for f in doc["families"]}
    except (ValueError, KeyError):
        sys.exit(f"{who}: caracal info --algorithms --json failed: {p.stderr.strip()[-300:]}")
