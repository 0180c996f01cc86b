#!/usr/bin/env python3
"""Which Intel MPI knob decides the protocol of a 128 KiB message on one host: caracal-probe's
ping-pong (2 ranks, median one-way latency of a launch) with the library's defaults and with
each candidate knob at 135168, alternating launches, 5 each. Run under the bench lock:

  flock /work/bench.lock python3 bench/advisor_impi_pingpong.py

Results: bench/results/advisor-records-knobs/impi-pingpong.json and .md."""
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

from caracal.advise import measure  # noqa: E402

VARIANTS = {"defaults": {}, "I_MPI_SHM_EAGER_THRESHOLD=135168": {"I_MPI_SHM_EAGER_THRESHOLD": "135168"},
            "I_MPI_SHM_CELL_FWD_SIZE=135168": {"I_MPI_SHM_CELL_FWD_SIZE": "135168"},
            "I_MPI_SHM_CMA=0": {"I_MPI_SHM_CMA": "0"}}
SIZE, LAUNCHES = 131072, 5


def main():
    out = ROOT / "bench" / "results" / "advisor-records-knobs"
    out.mkdir(parents=True, exist_ok=True)
    loads = [os.getloadavg()[0]]
    times = {k: [] for k in VARIANTS}
    for _ in range(LAUNCHES):
        for name, env in VARIANTS.items():
            times[name].append(measure.pingpong_us("impi", SIZE, env))
    loads.append(os.getloadavg()[0])
    doc = {"schema": "caracal.bench-impi-pingpong/1", "size": SIZE, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ"),
           "loads": loads, "latency_us": times}
    (out / "impi-pingpong.json").write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    md = [f"# Intel MPI 2021.19, 128 KiB ping-pong on one host (caracal-probe, 2 ranks)", "",
          f"{LAUNCHES} alternating launches per variant, each the median one-way latency of its trials; "
          f"load {loads[0]:.2f} -> {loads[1]:.2f} (2 cores).", "",
          "| variant | median us | min-max us |", "|---|---:|---:|"]
    for name, ts in times.items():
        md.append(f"| {name} | {statistics.median(ts):.1f} | {min(ts):.1f}-{max(ts):.1f} |")
    (out / "impi-pingpong.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
