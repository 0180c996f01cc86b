"""Launching smpirun for `caracal simulate` and measuring what the host paid.

SMPI options (docs/simulate.md "Running"):
  smpi/simulate-computation:no   time passes only in communication: Caracal's combining and
                                 copying cost nothing, as SMPI's own collectives' do, and the
                                 simulated times do not depend on the host's load
  smpi/test:0, smpi/iprobe:0     no made-up time in a failed MPI_Test/MPI_Iprobe: Caracal's
                                 waits block in MPI_Waitany instead (core/under_smpi.h)
  smpi/display-timing:yes        SMPI reports the simulated time of the whole run
  smpi/coll-selector:NAME        SMPI's own algorithms for what Caracal leaves native
  smpi/lat-factor, bw-factor     on the wan platform 1 everywhere: SMPI 3.32 applies its
                                 calibration factors to every link, which would multiply the
                                 wide-area round trips
"""
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Dict, List

SELECTORS = ("default", "ompi", "mpich", "mvapich2", "impi")

SIM_TIME = re.compile(r"Simulated time: ([0-9.eE+-]+) seconds")


def smpirun_command(program: Path, args: List[str], ranks: int, platform: Path, hostfile: Path,
                    kind: str, selector: str = "mpich", extra_cfg: List[str] = ()) -> List[str]:
    cfg = ["smpi/simulate-computation:no", "smpi/test:0", "smpi/iprobe:0", "smpi/display-timing:yes",
           f"smpi/coll-selector:{selector}"]
    if kind == "wan":
        cfg += ["smpi/lat-factor:0:1", "smpi/bw-factor:0:1"]
    cfg += list(extra_cfg)
    return ["smpirun", "-np", str(ranks), "-platform", str(platform), "-hostfile", str(hostfile),
            *[f"--cfg={c}" for c in cfg], str(program), *args]


def run(cmd: List[str], env: Dict[str, str], cwd: Path, log_path: Path) -> dict:
    """Run smpirun; its output goes to log_path (SMPI's configuration lines) and, without
    them, to our stdout. Returns exit status, simulated seconds, host wall seconds and the peak
    resident memory of the simulation process in bytes."""
    full_env = dict(os.environ, **env)
    t0 = time.monotonic()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, env=full_env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, errors="replace")
        sim = None
        out_lines = []
        for line in proc.stdout:
            log.write(line)
            m = SIM_TIME.search(line)
            if m:
                sim = float(m.group(1))
            if "[xbt_cfg/INFO]" in line or "smpi_config/INFO" in line:
                continue
            out_lines.append(line)
            print(line, end="", flush=True)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    rc = os.waitstatus_to_exitcode(status)
    return {"exit": rc, "simulated_s": sim, "wall_s": round(wall, 3),
            "peak_rss_bytes": usage.ru_maxrss * 1024, "output": "".join(out_lines)}
