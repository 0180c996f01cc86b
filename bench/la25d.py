"""2D against 2.5D matrix multiplication and LU (examples/mm25d.c, lu25d.c): words moved
per rank from Caracal's profiles at 4, 8 and 16 ranks against the 2.5D bound n^2/sqrt(cp),
time here, and time at 16,384 ranks by the model (python/caracal/model/la25d.py).

  flock /work/bench.lock python3 bench/la25d.py [--mpi openmpi] [--launches 3]

Each configuration runs under `caracal run --profile` (libcaracal preloaded, Caracal's
collectives where its rules pick them); the words are the profile's bytes / 8 / ranks in
the timed part (the programs pause the profiler outside it), checked against the
programs' own count. Finished launches are kept in a work directory (bench/workdir.py: a
new one per run; --work DIR resumes a split run, refused when DIR was made by another
build, library or machine). The 16,384-rank model also uses this machine's shared-memory
line when --probe gives a `caracal probe` pingpong document (an explicit file: a probe is
never picked up from /tmp). Writes bench/results/la25d.md, .json (compact) and .png.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from benchlib import ROOT, machine_description, median, write_results
from workdir import facts, open_workdir

sys.path.insert(0, str(ROOT / "python"))
from caracal.model import fit, formulas as F, la25d  # noqa: E402

WORK = None  # main: open_workdir
GRIDS = [(4, 1), (4, 4), (8, 2), (16, 1), (16, 4)]   # (p, c): p/c a square, c in 1, 2, 4
N_MM, N_LU, B_LU = 384, 384, 16
# Assumed machine for the 16,384-rank model, from public Blue Gene/P figures: 13.6 GFLOP/s
# peak per node (DGEMM at 85%), 425 MB/s per torus link direction, 3 us MPI latency; and
# the source's scale of 16,384 nodes with our choice of n = 32,768 and 65,536.
BGP = {"alpha_us": 3.0, "MBps": 425.0, "gflops": 13.6 * 0.85, "n": 65536}


def uptime():
    return open("/proc/loadavg").read().split()[:3]


def launch(mpi, p, prog, args, tag):
    out = WORK / f"{tag}.txt"
    prof = WORK / f"{tag}.profile.json"
    if not out.exists():
        env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
        cmd = [sys.executable, "-m", "caracal", "run", "-n", str(p), "--mpi", mpi, "--profile", str(prof), "--force",
               "--", str(ROOT / "build" / "bin" / prog), *map(str, args)]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
        if r.returncode:
            sys.exit(f"la25d: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()[-400:]}")
        out.write_text(r.stdout + f"\nloadavg={'/'.join(uptime())}\n")
    text = out.read_text()
    line = next(l for l in text.splitlines() if l.startswith(prog + " "))
    kv = dict(re.findall(r"(\w+)=(\S+)", line))
    kv["loadavg"] = re.search(r"loadavg=(\S+)", text).group(1)
    doc = json.loads(prof.read_text())
    total = sum(c["bytes"] for c in doc["calls"])
    kv["words_profile"] = total / 8 / doc["nranks"]
    by_fn = {}
    for s in doc["callsites"]:
        if s["bytes"]:
            by_fn[s["function"]] = by_fn.get(s["function"], 0) + s["bytes"] / 8 / doc["nranks"]
    kv["words_by_function"] = by_fn
    return kv


def main():
    global N_MM, N_LU, WORK
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpi", default="openmpi")
    ap.add_argument("--launches", type=int, default=3)
    ap.add_argument("--n", type=int, default=384, help="matrix size of both programs (default 384)")
    ap.add_argument("--work", metavar="DIR", help="resume the finished launches in DIR (default: a new directory)")
    ap.add_argument("--probe", metavar="P.json", help="a shared-memory pingpong of `caracal probe --json` for the "
                    "16,384-rank model's 'this machine' rows (none without it)")
    ap.add_argument("--note", default="", help="a line for the table's header (how the run was taken)")
    a = ap.parse_args()
    N_MM = N_LU = a.n
    probe = load_probe(a.probe)
    bins = [ROOT / "build" / "lib" / "libcaracal.so", ROOT / "build" / "bin" / "mm25d", ROOT / "build" / "bin" / "lu25d"]
    WORK = open_workdir("la25d", a.work, facts(a.mpi, bins, {"n": a.n}))
    rows = []
    runs = [("mm25d", p, c, ["-n", N_MM, "-c", c], "") for p, c in GRIDS]
    runs += [("lu25d", p, c, ["-n", N_LU, "-c", c, "-b", B_LU], "tournament") for p, c in GRIDS]
    runs += [("lu25d", p, 1, ["-n", N_LU, "-c", 1, "-b", B_LU, "-P", "partial"], "partial") for p in (4, 16)]
    runs += [("mm25d", 1, 1, ["-n", N_MM], ""), ("lu25d", 1, 1, ["-n", N_LU, "-b", B_LU], "tournament")]
    for L in range(a.launches):          # launches interleaved: every configuration once per round
        for prog, p, c, args, piv in runs:
            kv = launch(a.mpi, p, prog, args, f"{a.mpi}-{prog}-{piv}-p{p}-c{c}-L{L}")
            rows.append({**kv, "prog": prog, "pivoting": piv or None, "p": p, "c": c, "launch": L})
    table = []
    for prog, p, c, args, piv in runs:
        rs = [r for r in rows if r["prog"] == prog and r["p"] == p and r["c"] == c and (r["pivoting"] or "") == piv]
        n = int(rs[0]["n"])
        t = median([float(r["time_s"]) for r in rs])
        table.append({"prog": prog, "pivoting": piv or None, "p": p, "c": c, "n": n,
                      "time_s": t, "times_s": [float(r["time_s"]) for r in rs],
                      "gflops": (2 * n ** 3 if prog == "mm25d" else 2 * n ** 3 / 3) / t / 1e9,
                      "words_profile": rs[0]["words_profile"], "words_self": float(rs[0]["words_per_rank"]),
                      "words_model": (la25d.words_mm(n, p, c) if prog == "mm25d" else float(rs[0]["words_model"])),
                      "bound": la25d.bound_25d(n, p, c), "by_function": rs[0]["words_by_function"],
                      "loadavg": [r["loadavg"] for r in rs], "check": all(r["check"] == "ok" for r in rs)})
    big = model_16k(table, probe)
    doc = {"schema": "caracal.la25d/1", "mpi": a.mpi, "machine": machine_description(),
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "n_mm": N_MM, "n_lu": N_LU, "b_lu": B_LU,
           "rows": table, "model_16k": big, "note": a.note}
    write_results("la25d", doc, markdown(doc))
    plot(doc, ROOT / "bench" / "results" / "la25d.png")


def load_probe(path):
    """--probe: the shm Hockney line of a pingpong document, or None without --probe."""
    if path is None:
        print("la25d: no --probe: the 16,384-rank model has the assumed BG/P-like machine only", file=sys.stderr)
        return None
    try:
        doc = json.loads(Path(path).read_text())
        lv = fit.fit_levels({path: doc})
    except (OSError, ValueError, fit.UsageError) as e:
        print(f"la25d: --probe {path}: {e}", file=sys.stderr)
        sys.exit(2)
    if "shm" not in lv:
        print(f"la25d: --probe {path} is a probe between hosts; the model wants this machine's shared memory",
              file=sys.stderr)
        sys.exit(2)
    print(f"la25d: this machine's line from {path} (made {doc.get('created', '?')})", file=sys.stderr)
    return lv["shm"].hockney


def model_16k(table, here):
    """Time at 16,384 ranks by the model: this machine's fitted shm parameters (--probe)
    and flop rate (one rank's mm25d), and the assumed BG/P-like machine above."""
    one = {r["prog"]: r["gflops"] for r in table if r["p"] == 1}
    comb = F.Compute(gamma=1e3, mem_bw=1e4)
    machines = [("assumed BG/P-like", F.Hockney(BGP["alpha_us"], 1 / BGP["MBps"]), BGP["gflops"], BGP["gflops"])]
    if here:
        machines.append(("this machine's shm fit and flop rate", here, one["mm25d"], one["lu25d"]))
    out = []
    p = 16384
    for (name, h, fl_mm, fl_lu), n in [(m, n) for m in machines for n in (BGP["n"] // 2, BGP["n"])]:
        for c in (1, 4, 16):
            mm = la25d.time_mm(n, p, c, h, comb, fl_mm)
            lu = la25d.time_lu(n, p, c, h, comb, fl_lu)
            out.append({"machine": name, "p": p, "n": n, "c": c, "mm": mm, "lu": lu,
                        "words_mm": la25d.words_mm(n, p, c)})
    return out


def _fmt_s(s):
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def markdown(doc):
    L = ["<!-- generated by bench/la25d.py -->", "# 2D vs 2.5D matrix multiplication and LU", "",
         f"{doc['mpi']}, 2 cores: 4, 8 and 16 ranks are oversubscribed (2-8 ranks per core, yielding), so "
         "the times say little about the algorithms; the words are exact. Words: 8-byte words per rank "
         "in the timed part from Caracal's profile (bytes of every MPI call / 8 / ranks; a bcast or "
         "reduce counts its buffer on every member), `self` the program's own count (they must agree), "
         "`model` the schedule's formula (mm25d: 2n^2/(qc) + 3(n/q)^2 for c > 1; lu25d: leading terms "
         "n^2/sqrt(cp) + cn^2/p), `bound` n^2/sqrt(cp). Time: median of the launches, "
         f"one multiplication or factorization each. mm25d n={doc['n_mm']}, lu25d n={doc['n_lu']} b={doc['b_lu']}.",
         "", doc.get("note") or "", "",
         "| program | pivoting | p | c | grid | time (median; all) | GFLOP/s | words/rank profile | self | model | bound n^2/sqrt(cp) | words / 2D's | load avg | check |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    base = {}
    for r in doc["rows"]:
        if r["c"] == 1:
            base[(r["prog"], r["pivoting"], r["p"])] = r["words_profile"]
    for r in doc["rows"]:
        q = la25d.grid_side(r["p"], r["c"])
        b2d = base.get((r["prog"], "tournament" if r["prog"] == "lu25d" else None, r["p"]))
        rel = f"{r['words_profile'] / b2d:.2f}" if b2d else "-"
        L.append(f"| {r['prog']} | {r['pivoting'] or '-'} | {r['p']} | {r['c']} | {q}x{q}x{r['c']} | "
                 f"{_fmt_s(r['time_s'])}; {', '.join(_fmt_s(t) for t in r['times_s'])} | {r['gflops']:.2f} | "
                 f"{r['words_profile']:.0f} | {r['words_self']:.0f} | {r['words_model']:.0f} | {r['bound']:.0f} | "
                 f"{rel} | {r['loadavg'][0]} | {'ok' if r['check'] else 'FAILED'} |")
    L += ["", "Words per rank by sub-communicator (profile call sites, by function):", ""]
    for r in doc["rows"]:
        if r["p"] > 1:
            parts = ", ".join(f"{k} {v:.0f}" for k, v in sorted(r["by_function"].items(), key=lambda kv: -kv[1]))
            L.append(f"- {r['prog']} {r['pivoting'] or ''} p={r['p']} c={r['c']}: {parts}")
    L += ["", "## 16,384 ranks by the model", "",
          "python/caracal/model/la25d.py: the programs' schedules, each collective the cheaper of a "
          "binomial tree and scatter-allgather (reduce: reduce-scatter-gather), nothing overlapped, "
          "n = 32,768 and 65,536 (our choice). No simulation: the SimGrid backend (issue 19) can feed "
          "`caracal.model.predict.compare` later.", "",
          "| machine | n | c | MM total | MM comm | MM comm share | LU total | LU comm | words/rank MM |",
          "|---|---|---|---|---|---|---|---|---|"]
    for m in doc["model_16k"]:
        L.append(f"| {m['machine']} | {m['n']} | {m['c']} | {_fmt_s(m['mm']['total_s'])} | {_fmt_s(m['mm']['comm_s'])} | "
                 f"{m['mm']['comm_s'] / m['mm']['total_s']:.0%} | {_fmt_s(m['lu']['total_s'])} | "
                 f"{_fmt_s(m['lu']['comm_s'])} | {m['words_mm']:.3g} |")
    L.append("")
    return "\n".join(L) + "\n"


def plot(doc, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, prog in zip(axes, ("mm25d", "lu25d")):
        rs = [r for r in doc["rows"] if r["prog"] == prog and r["p"] > 1]
        labels = [f"p={r['p']} c={r['c']}" + (" PP" if r["pivoting"] == "partial" else "") for r in rs]
        x = range(len(rs))
        ax.bar([i - 0.2 for i in x], [r["words_profile"] for r in rs], 0.4, label="measured (profile)")
        ax.bar([i + 0.2 for i in x], [r["bound"] for r in rs], 0.4, label="n^2/sqrt(cp)")
        ax.set_xticks(list(x))
        ax.set_xticklabels(labels, rotation=30, fontsize=8)
        ax.set_ylabel("words per rank")
        ax.set_title(f"{prog} n={doc['n_mm'] if prog == 'mm25d' else doc['n_lu']}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
