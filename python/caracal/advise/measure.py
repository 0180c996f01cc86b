"""Measuring advice on this machine before it is given.

Collectives: the observed sizes, communicator size and call pattern are replayed with
`caracal tune`'s own measurement (commands/tune.py: its candidates, caracal-tune-bench
launches and its analysis, including the forced native algorithms normalised to the main
launch); nothing here times a collective itself.

Point-to-point: caracal-probe's ping-pong at the advised sizes, one launch with the
library's current setting and one with the suggested one, alternating REPEATS times;
the medians of the launches' median latencies are compared.
"""
import os
import statistics
import subprocess
from types import SimpleNamespace
from typing import Dict, List, Optional, Tuple

from .. import impi_tuning, launch, mpilibs, native_tuning, paths
from ..commands import tune

REPEATS = 3           # alternating launches per setting (p2p)
COLL_REPS = 11        # repetitions per candidate in a collective replay (tune's default)
TIMEOUT = 300
MARGIN = tune.MARGIN  # a setting must win by this much to be recommended


class MeasureError(RuntimeError):
    pass


def _quartiles(xs):
    xs = sorted(xs)
    if len(xs) < 2:
        return xs[0], xs[0]
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], q[2]


def pingpong_us(mpi: str, size: int, env: Dict[str, str]) -> float:
    """Median one-way latency (us) of caracal-probe's ping-pong at ``size`` bytes, one launch."""
    exe = paths.program(mpi, "caracal-probe")
    argv = [str(exe), "--mode", "pingpong", "--min", str(size), "--max", str(size), "--perturb", "0",
            "--budget", "0.2", "--trials", "5"]
    cmd = launch.mpiexec_command(mpi, 2, argv, env=env)
    try:
        p = subprocess.run(cmd, env=launch.launcher_env(), capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise MeasureError(f"caracal-probe at {size} bytes did not finish in {TIMEOUT} s")
    import json
    for line in p.stdout.splitlines():
        if line.startswith("{") and '"point"' in line:
            return float(json.loads(line)["latency_us_median"])
    err = [ln for ln in p.stderr.splitlines() if ln.strip()]
    raise MeasureError(f"caracal-probe failed (exit {p.returncode}): {err[-1] if err else 'no output'}")


def p2p(mpi: str, sizes: List[int], env: Dict[str, str], repeats: int = REPEATS) -> dict:
    """Ping-pong at the largest advised size (the worst case of the rendezvous handshake is
    the smallest size above the limit, the copy cost the largest): baseline vs ``env``."""
    size = max(sizes)
    base, new = [], []
    for _ in range(repeats):
        base.append(pingpong_us(mpi, size, {}))
        new.append(pingpong_us(mpi, size, env))
    return _compare(base, new, f"caracal-probe ping-pong, {size} bytes, {repeats} alternating launches each")


def _compare(base, new, method) -> dict:
    b, n = statistics.median(base), statistics.median(new)
    b25, b75 = _quartiles(base)
    n25, n75 = _quartiles(new)
    return {"measured": True, "method": method, "unit": "us", "baseline": round(b, 3),
            "baseline_spread": [round(b25, 3), round(b75, 3)],
            "suggested": round(n, 3), "suggested_spread": [round(n25, 3), round(n75, 3)],
            "gain_percent": round(100 * (1 - n / b), 1) if b > 0 else None,
            "wins": n < b * (1 - MARGIN), "load": round(os.getloadavg()[0], 2)}


def collective(mpi: str, coll: str, nranks: int, sizes: List[int], pattern: str,
               reps: int = COLL_REPS, node_size: int = 0, native_algs: bool = True) -> List[dict]:
    """tune's rows (commands/tune.analyse) for one collective at the observed sizes, replayed
    with the observed pattern (b2b, rotate or barrier): every Caracal candidate of the family
    and, in launches of their own, every native algorithm the library can be forced to run."""
    cands, _ = tune.candidates(mpi, coll, nranks, node_size)
    if coll not in cands:
        raise MeasureError(f"{coll}: no Caracal algorithm in this build to measure against")
    cl = cands[coll]
    args = SimpleNamespace(mpi=mpi, size_list=sorted(set(sizes)), reps=reps, pattern=pattern,
                           timeout=TIMEOUT, testbed=None, ppn=0)
    env = {"LD_PRELOAD": ""}
    if node_size:
        env["CARACAL_NODE_SIZE"] = str(node_size)
    state = {"done": {}}
    try:
        state["done"][f"{nranks}/{coll}"] = tune.run_launch(args, nranks, coll, cl, env)
        for alg_name, force in (forcings(mpi, coll, nranks) if native_algs else []):
            state["done"][f"{nranks}/{coll}/native={alg_name}"] = tune.run_launch(
                args, nranks, coll, ["native", cl[1]], {**env, **force})
    except RuntimeError as e:
        raise MeasureError(str(e))
    return tune.analyse(state)


def _native_tunable(mpi: str) -> bool:
    try:
        native_tuning._check_mpi(mpi)
        return True
    except Exception:
        return False


def forcings(mpi: str, coll: str, nranks: int) -> List[tuple]:
    """[(name, env)]: every native algorithm library ``mpi`` can be forced to run for ``coll`` on
    ``nranks`` ranks, with the environment that forces it. Open MPI and MPICH: native_tuning's
    (coll/tuned numbers, MPIR_CVAR names); Intel MPI: its I_MPI_ADJUST_<COLL> presets (impi_tuning)."""
    if impi_tuning.is_impi(mpi):
        return [(name, impi_tuning.force_env(coll, n)) for n, name in impi_tuning.native_algorithms(mpi).get(coll, [])]
    if not _native_tunable(mpi):
        return []
    return [(name, native_tuning.force_env(mpi, coll, ident))
            for ident, name in native_tuning.native_algorithms(mpi).get(coll, [])
            if not native_tuning.applicable(mpi, coll, ident, nranks)]


def native_setting(mpi: str, coll: str, name: str) -> Tuple[Dict[str, str], str]:
    """(env, label) of the forced native algorithm ``name`` (a name ``forcings`` gave): the
    settings a user applies and how the advice names them."""
    if impi_tuning.is_impi(mpi):
        n = int(name[len("preset"):])
        return impi_tuning.force_env(coll, n), impi_tuning.describe(coll, n)
    ident = native_alg_id(mpi, coll, name)
    label = f"{name} ({ident})" if mpilibs.get(mpi).family == "openmpi" else name
    return native_tuning.force_env(mpi, coll, ident), label


def native_alg_id(mpi: str, coll: str, name: str) -> Optional[object]:
    for ident, n in native_tuning.native_algorithms(mpi).get(coll, []):
        if n == name:
            return ident
    return None
