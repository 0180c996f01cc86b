"""Launching smpirun for `caracal simulate` and measuring what the host paid.

SMPI options (docs/simulate.md "Running"):
  smpi/simulate-computation:no   time passes only in communication: Caracal's combining and
                                 copying cost nothing, as SMPI's own collectives' do, and the
                                 simulated times do not depend on the host's load
  smpi/test:0, smpi/iprobe:0     no made-up time in a failed MPI_Test/MPI_Iprobe: Caracal's
                                 waits block in MPI_Waitany instead (core/under_smpi.h)
  smpi/display-timing:yes        SMPI reports the simulated time of the whole run
  smpi/coll-selector:NAME        SMPI's own algorithms for what Caracal leaves native
  smpi/privatization:mmap       every rank's globals are its own copy of the program's data
                                 segment, switched in at each context switch; the code is
                                 loaded once. smpirun's default (dlopen) loads a copy of the
                                 whole program per rank: Caracal adds 0.66 MB per rank there,
                                 0.19 MB here, for about 1.8x the host CPU (docs/simulate.md,
                                 "Host memory"). Caracal builds without thread-locals for it
  smpi/lat-factor, bw-factor     on the wan platform 1 everywhere: SMPI 3.32 applies its
                                 calibration factors to every link, which would multiply the
                                 wide-area round trips
  smpi/allreduce:rdb, smpi/bcast:binomial_tree, smpi/reduce:binomial
                                 with Caracal linked (CARACAL_NATIVE_CFG): what SMPI runs for the
                                 calls Caracal leaves native, its own start-up's among them.
                                 SMPI 3.32's mpich/mvapich2/impi versions set up an SMP layout
                                 on a communicator's first use, a ring allgather of n^2
                                 messages; these plain ones have none. A --cfg of the same name wins
"""
import os
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Dict, List

SELECTORS = ("default", "ompi", "mpich", "mvapich2", "impi")

# SMPI's plain algorithms for the calls Caracal leaves native (see above): at 16,384 ranks the
# mpich selector's allreduce in Caracal's MPI_Init was still in its SMP set-up after 520 s of CPU
CARACAL_NATIVE_CFG = ("smpi/allreduce:rdb", "smpi/bcast:binomial_tree", "smpi/reduce:binomial")

SIM_TIME = re.compile(r"Simulated time: ([0-9.eE+-]+) seconds")


def native_cfg(caracal: bool, extra_cfg: List[str] = ()) -> List[str]:
    """The plain algorithms added for a run with Caracal, less those --cfg names itself."""
    given = {c.split(":", 1)[0] for c in extra_cfg}
    return [c for c in CARACAL_NATIVE_CFG if caracal and c.split(":", 1)[0] not in given]


def smpirun_command(program: Path, args: List[str], ranks: int, platform: Path, hostfile: Path,
                    kind: str, selector: str = "mpich", extra_cfg: List[str] = (), caracal: bool = False) -> List[str]:
    cfg = ["smpi/simulate-computation:no", "smpi/test:0", "smpi/iprobe:0", "smpi/display-timing:yes",
           f"smpi/coll-selector:{selector}", "smpi/privatization:mmap"]
    if kind == "wan":
        cfg += ["smpi/lat-factor:0:1", "smpi/bw-factor:0:1"]
    cfg += native_cfg(caracal, extra_cfg) + list(extra_cfg)
    return ["smpirun", "-np", str(ranks), "-platform", str(platform), "-hostfile", str(hostfile),
            *[f"--cfg={c}" for c in cfg], str(program), *args]


class PssSampler:
    """The peak proportional set size (Pss) of the simulation process, sampled from
    /proc/PID/smaps_rollup of smpirun's smpimain child.

    The resident set (ru_maxrss) over-counts SMPI badly: SMPI_SHARED_MALLOC and
    smpi/auto-shared-malloc-thresh map ONE physical block into every rank's address space,
    and the kernel counts a shared page once per mapping, so 16,384 ranks each mapping two
    4 MiB buffers "use" 128 GiB of RSS on a machine with 23. Pss divides each shared page by
    the mappings sharing it: the memory the simulation really takes from the machine."""

    def __init__(self, root_pid: int, period: float = 1.0):
        self.root, self.period, self.peak = root_pid, period, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _pids(self):
        pids, todo = [], [self.root]
        while todo:  # smpirun is a shell script: the simulation is a descendant
            p = todo.pop()
            pids.append(p)
            try:
                with open(f"/proc/{p}/task/{p}/children") as f:
                    todo += [int(c) for c in f.read().split()]
            except OSError:
                pass
        return pids

    def _loop(self):
        wait = 0.1  # short runs too get a sample; then every period (a walk of ~20 maps per rank)
        while not self._stop.wait(wait):
            # A walk holds the simulation's mmap lock, which mmap privatization takes at every
            # context switch: at 16,384 ranks one walk took 1 s, and sampling every second cut
            # the simulation to 20% of a core (79% without). So wait 20 walks' time at least.
            started = time.monotonic()
            total = 0
            for p in self._pids():
                try:
                    with open(f"/proc/{p}/smaps_rollup") as f:
                        for line in f:
                            if line.startswith("Pss:"):
                                total += int(line.split()[1]) * 1024
                                break
                except (OSError, ValueError):
                    pass
            self.peak = max(self.peak, total)
            wait = max(min(self.period, wait * 2), 20 * (time.monotonic() - started))

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def run(cmd: List[str], env: Dict[str, str], cwd: Path, log_path: Path) -> dict:
    """Run smpirun; its output goes to log_path (SMPI's configuration lines) and, without
    them, to our stdout. Returns exit status, simulated seconds, host wall and CPU seconds
    (CPU: what the run costs on a machine shared at idle priority), the peak resident memory of the simulation process in bytes (ru_maxrss: counts every rank's
    mapping of SMPI's shared buffers again) and its sampled peak Pss (what it really takes)."""
    full_env = dict(os.environ, **env)
    t0 = time.monotonic()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, env=full_env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, errors="replace")
        sampler = PssSampler(proc.pid)
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
        peak_pss = sampler.stop()  # before the wait: the simulation has ended, its /proc is gone
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    rc = os.waitstatus_to_exitcode(status)
    return {"exit": rc, "simulated_s": sim, "wall_s": round(wall, 3),
            "peak_rss_bytes": usage.ru_maxrss * 1024,
            "peak_pss_bytes": peak_pss,
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 3), "output": "".join(out_lines)}
