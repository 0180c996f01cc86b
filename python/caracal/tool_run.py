"""Run one of Caracal's measuring programs (caracal-probe, caracal-collbench)
under mpiexec and read what it reports: one JSON object per line on stdout,
"start", then one "point" per measurement, then "end".

While it runs a progress bar (progress.py: rich, on stderr, only on a terminal,
so logs and tests get clean output) counts the points, and each point is handed
to a callback, which prints the table row as it arrives.
"""
import json
import os
import platform
import socket
import subprocess
import sys
import threading
import time
from typing import Callable, Dict, List, Optional

from .errors import UsageError
from .progress import ProgressBar


def run_jsonlines(cmd: List[str], env: Dict[str, str], prog_name: str, label: str,
                  on_point: Callable[[dict], None], timeout: float,
                  bar_total: Optional[int] = None) -> Dict[str, object]:
    """Run ``cmd``; returns {"start": {...}, "points": [...], "end": {...}, "wall": s}.
    A usage error reported by the program (exit 2, '<prog>: ...' on stderr)
    becomes a UsageError with that one line; any other failure a RuntimeError
    carrying the program's stderr."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, bufsize=1)
    start, end, points = None, None, []
    bar = None
    # a hung job prints nothing, so the limit cannot be checked between lines
    timed_out = threading.Event()
    watchdog = threading.Timer(timeout, lambda: (timed_out.set(), proc.kill()))
    watchdog.daemon = True
    watchdog.start()
    try:
        for line in proc.stdout:
            line = line.strip()
            if not line.startswith("{"):
                continue  # the MPI library may print banners; they are not ours
            ev = json.loads(line)
            kind = ev.pop("event", None)
            if kind == "start":
                start = ev
                bar = ProgressBar(bar_total or int(ev.get("points", 1)), label)
                bar.draw()
            elif kind == "point":
                points.append(ev)
                if bar:
                    bar.clear()
                on_point(ev)
                sys.stdout.flush()
                if bar:
                    bar.step()
            elif kind == "end":
                end = ev
        rc = proc.wait()
    finally:
        watchdog.cancel()
        if bar:
            bar.clear()
    if timed_out.is_set():
        raise RuntimeError(f"{prog_name} did not finish within {timeout:.0f} s (see --timeout)")
    err = proc.stderr.read()
    if rc == 2:
        ours = [ln for ln in err.splitlines() if ln.startswith(prog_name + ":")]
        if ours:
            raise UsageError(ours[0][len(prog_name) + 1:].strip())
    if rc != 0 or start is None or end is None:
        tail = "\n".join(err.strip().splitlines()[-15:])
        raise RuntimeError(f"{prog_name} failed (exit status {rc})" + (f":\n{tail}" if tail else ""))
    return {"start": start, "points": points, "end": end, "wall": time.monotonic() - t0}


def machine(llc_bytes: Optional[int] = None) -> dict:
    """What the numbers were measured on (goes into every result document)."""
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    m = {"hostname": socket.gethostname(), "cpu": cpu, "cores": os.cpu_count() or 1}
    if llc_bytes is not None:
        m["llc_bytes"] = int(llc_bytes)
    return m


def parse_bytes(opt: str, text: str) -> int:
    """'64', '4K', '8M', '1G' -> bytes (binary multiples); UsageError otherwise."""
    s = str(text).strip()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:].upper(), 1)
    digits = s[:-1] if mult > 1 else s
    if not digits.isdigit():
        raise UsageError(f"{opt} expects a size in bytes (e.g. 64, 4K, 8M), got '{text}'")
    return int(digits) * mult


def check_output_path(path: Optional[str], force: bool) -> None:
    if not path:
        return
    if os.path.exists(path) and not force:
        raise UsageError(f"{path} exists; choose another --json or add --force")
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise UsageError(f"directory does not exist: {d}")


def write_json(path: str, doc: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
