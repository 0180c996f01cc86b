"""Running the profiled program itself with and without settings: how `caracal advise`
measures protocol advice (a ping-pong cannot show what eager sends save: the sender no
longer waits for a busy receiver) and how `caracal tune-app` measures everything.

One run = `caracal run` with the profiler on (so placement, oversubscription and the
library's environment are exactly a user's run); its time is the slowest rank's
time_total from the profile (MPI_Init to MPI_Finalize: launcher start-up, which no
setting changes, is left out)."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional

TIMEOUT = 600


class RunError(RuntimeError):
    pass


def run_once(mpi: str, nranks: int, argv: List[str], env: Dict[str, str], timeout: float = TIMEOUT,
             profile_out: Optional[str] = None, extra: Optional[List[str]] = None,
             testbed: Optional[str] = None) -> dict:
    """One `caracal run` (``testbed``: one `caracal testbed run` on that emulated testbed);
    ``extra``: its placement arguments (--rankfile F, --hostfile F; on a testbed --ppn P or
    --rankfile F). Returns {"seconds": slowest rank's time_total, "profile": path or None}."""
    fd, tmp = tempfile.mkstemp(suffix=".json", prefix="caracal-app-")
    os.close(fd)
    out = profile_out or tmp
    if testbed:
        # the profiler of the preloaded libcaracal writes where CARACAL_PROFILE says (a file
        # system every emulated host shares); an earlier file must not pass for this run's
        if os.path.exists(out):
            os.unlink(out)
        cmd = [sys.executable, "-m", "caracal", "testbed", "run", "--name", testbed, "-n", str(nranks), "--mpi", mpi,
               "--timeout", str(int(timeout)), "--env", f"CARACAL_PROFILE={os.path.abspath(out)}"]
    else:
        cmd = [sys.executable, "-m", "caracal", "run", "-n", str(nranks), "--mpi", mpi, "--profile", out, "--force"]
    for k, v in env.items():
        cmd += ["--env", f"{k}={v}"]
    cmd += list(extra or []) + ["--", *argv]
    penv = dict(os.environ)
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    penv["PYTHONPATH"] = here + (":" + penv["PYTHONPATH"] if penv.get("PYTHONPATH") else "")
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=penv,
                           timeout=timeout + (30 if testbed else 0))  # (testbed run kills at its own)
    except subprocess.TimeoutExpired:
        raise RunError(f"{argv[0]} did not finish in {timeout:.0f} s")
    try:
        if p.returncode != 0:
            err = [ln for ln in p.stderr.splitlines() if ln.strip()]
            raise RunError(f"{os.path.basename(argv[0])} failed with {' '.join(f'{k}={v}' for k, v in env.items()) or 'defaults'} "
                           f"(exit {p.returncode}): {err[-1] if err else 'no output'}")
        try:
            doc = json.loads(open(out).read())
            secs = max(r["time_total"] for r in doc["ranks"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise RunError(f"{os.path.basename(argv[0])}: no usable profile in {out} ({type(e).__name__})")
    finally:
        if not profile_out and os.path.exists(tmp):
            os.unlink(tmp)
    return {"seconds": secs, "profile": profile_out}


def compare(mpi: str, nranks: int, argv: List[str], variants: Dict[str, Dict[str, str]], repeats: int,
            log=None, timeout: float = TIMEOUT, placements: Optional[Dict[str, List[str]]] = None,
            testbed: Optional[str] = None) -> Dict[str, List[float]]:
    """{variant: [seconds per repeat]}: every variant once per round, the order rotating
    from round to round (interleaved, so drift and other users' load hit all alike).
    ``placements``: each variant's placement arguments (run_once's ``extra``)."""
    names = list(variants)
    times = {n: [] for n in names}
    for r in range(repeats):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            t = run_once(mpi, nranks, argv, variants[name], timeout, extra=(placements or {}).get(name),
                         testbed=testbed)["seconds"]
            times[name].append(t)
            if log:
                log(f"round {r + 1}/{repeats}: {name}: {t:.4f} s")
    return times


def summary(base: List[float], new: List[float]) -> dict:
    """Medians, quartile spreads and the gain of ``new`` over ``base``; a setting wins when its
    median is better by the margin and its quartile range stays below the baseline's median."""
    def q(xs):
        if len(xs) < 2:
            return [xs[0], xs[0]]
        a = statistics.quantiles(sorted(xs), n=4, method="inclusive")
        return [a[0], a[2]]
    b, n = statistics.median(base), statistics.median(new)
    bq, nq = q(base), q(new)
    gain = 100 * (1 - n / b) if b > 0 else None
    return {"unit": "s", "baseline": round(b, 5), "baseline_spread": [round(x, 5) for x in bq],
            "suggested": round(n, 5), "suggested_spread": [round(x, 5) for x in nq],
            "gain_percent": round(gain, 1) if gain is not None else None,
            "wins": bool(n < b * 0.97 and nq[1] < b), "runs": len(base)}
