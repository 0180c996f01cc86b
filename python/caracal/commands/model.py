"""caracal model: predicted collective times from probe measurements (docs/model.md)."""
import json
import os

from ..errors import UsageError
from ..jsondoc import read_json
from ..tool_run import parse_bytes, check_output_path

NAME = "model"
HELP = "predict collective times at any scale from probe measurements (alpha-beta and LogGP)"
DESCRIPTION = """\
Fits two cost models to `caracal probe` documents and predicts how long a collective
takes with each algorithm, at sizes and rank counts you cannot run here.

  Hockney (alpha-beta): one message of m bytes costs alpha + m*beta.
  LogGP: latency L, overhead o per message at each end, G per byte (link bandwidth
         Bn = 1/G); a pingpong's one-way time is L + 2o + m*G.

Parameters are fitted per level: `shm` from a probe run on one node, `net` from a probe
run on emulated hosts (caracal probe --testbed NAME). Give a pingpong document per level,
and a stream document to split alpha into L and o (otherwise o = L = alpha/3, marked
"assumed"). Flat algorithms use the top level (net if given, else shm); Caracal's
hierarchical schedules use shm inside a node of --node-size ranks and net between nodes.

Algorithms, with m the message (allgather: one rank's block) and P ranks:
  binomial / k-nomial tree   ceil(log_k P) (k-1) (alpha + m beta)       bcast; reduce adds m*combine
  recursive doubling         log2 P (alpha + m beta + m combine)         allreduce (+2 steps if P not 2^j)
  ring                       2(P-1)(alpha + m/P beta) + (P-1) m/P combine  allreduce; allgather (P-1)(alpha + m beta)
  dissemination              ceil(log2 P) alpha                          barrier
  hier                       Caracal's schedules as they run, knomial:2  bcast reduce allreduce barrier
                             per level (docs/model.md)
  hier-sag / hier-rsag       the same with scatter_allgather:2 (bcast)   bcast / allreduce
                             or rsag (allreduce) among the leaders
  With --torus AxBx...: the source's (Solomonik, Bhatele, Demmel, SC11) torus models, d = number of dims:
  binomial-torus             log2(P) (m/Bn + 2o + L)
  rect (bcast)               m/Bn + 2(d+1)o + 3L + d P^(1/d) (2o + L)
  rect (reduce)              max[m/(8 gamma), 3m/beta_mem, m/Bn] + 2(d+1)o + 3L + d P^(1/d)(2o + L)
  combine = max[1/(8 gamma), 3/beta_mem] per byte; gamma (--gamma, GFLOP/s) and beta_mem
  (--mem-bw, GB/s) are measured on this machine with numpy unless given.

Examples:
  caracal probe --json shm.json                       # two ranks on this node
  caracal model --probe shm.json --coll bcast
  caracal model --probe shm.json --probe net.json --coll allreduce --bytes 8,64K,4M \\
                --procs 16,1024 --node-size 8 --plot allreduce.png --json allreduce.json
  caracal model --probe net.json --coll bcast --bytes 1M --torus 8x8x8
"""


def add_arguments(p):
    p.add_argument("--probe", action="append", required=True, metavar="P.json",
                   help="a caracal probe document (repeat for more levels or a stream document)")
    p.add_argument("--coll", required=True, metavar="COLL",
                   help="bcast, reduce, allreduce, barrier or allgather")
    p.add_argument("--bytes", default="8,4K,1M", metavar="LIST", help="message sizes (default 8,4K,1M)")
    p.add_argument("--procs", default="64,4096,262144", metavar="LIST",
                   help="rank counts (default 64,4096,262144; a --torus adds its own)")
    p.add_argument("--torus", metavar="AxBx...", help="also the source's torus models on this torus")
    p.add_argument("--node-size", type=int, default=8, metavar="N", help="ranks per node in hier (default 8)")
    p.add_argument("--radix", type=int, default=4, metavar="K", help="k of the k-nomial rows (default 4)")
    p.add_argument("--gamma", type=float, metavar="GFLOPS", help="additions per second for combining (default: measured)")
    p.add_argument("--mem-bw", type=float, metavar="GBPS", help="memory bandwidth in GB/s (default: measured)")
    p.add_argument("--plot", metavar="OUT.png", help="plot time against ranks, one line per algorithm and size")
    p.add_argument("--json", metavar="OUT.json", help="write parameters and predictions (caracal.model/1)")
    p.add_argument("--force", action="store_true", help="overwrite --json / --plot outputs")


def _int_list(opt, text, lo):
    vals = []
    for s in str(text).split(","):
        s = s.strip()
        if not s.isdigit() or int(s) < lo:
            raise UsageError(f"{opt} expects comma-separated integers >= {lo}, got '{text}'")
        vals.append(int(s))
    return vals


def _torus(text):
    dims = str(text).lower().split("x")
    if not all(d.isdigit() and int(d) >= 2 for d in dims) or len(dims) > 6:
        raise UsageError(f"--torus expects 1-6 extents of at least 2 joined by x (e.g. 8x8x8), got '{text}'")
    return [int(d) for d in dims]


def validate(args):
    from ..model.predict import COLLS
    if args.coll not in COLLS:
        raise UsageError(f"unknown collective '{args.coll}' (choose {', '.join(COLLS)})")
    args.size_list = [parse_bytes("--bytes", s) for s in args.bytes.split(",")]
    args.proc_list = _int_list("--procs", args.procs, 1)
    args.dims = _torus(args.torus) if args.torus else None
    if args.dims:
        P = 1
        for d in args.dims:
            P *= d
        if P not in args.proc_list:
            args.proc_list.append(P)
    args.proc_list.sort()
    if max(args.proc_list) > 1 << 40:
        raise UsageError("--procs: at most 2^40 ranks")
    if args.node_size < 1:
        raise UsageError("--node-size must be at least 1")
    if args.radix < 2:
        raise UsageError("--radix must be at least 2")
    for name in ("gamma", "mem_bw"):
        v = getattr(args, name)
        if v is not None and not v > 0:
            raise UsageError(f"--{name.replace('_', '-')} must be positive")
    for out in (args.json, args.plot):
        check_output_path(out, args.force)


def _load(paths):
    from .. import schema
    docs = {}
    for path in paths:
        doc = read_json(path)
        errs = schema.validate(doc)
        if errs:
            raise UsageError(f"{path}: {errs[0]}")
        docs[path] = doc
    return docs


def _us(t):
    if t >= 1e6:
        return f"{t / 1e6:.3g} s"
    if t >= 1e3:
        return f"{t / 1e3:.3g} ms"
    return f"{t:.3g} us"


def _size(b):
    for unit, div in (("M", 1 << 20), ("K", 1 << 10)):
        if b >= div and b % div == 0:
            return f"{b // div}{unit}"
    return str(b)


def run(args) -> int:
    validate(args)
    from ..model import fit, predict
    levels = fit.fit_levels(_load(args.probe))
    top = levels.get("net", levels.get("shm"))
    node = levels.get("shm", top)
    compute = fit.compute_from(args.gamma, args.mem_bw)
    params = predict.Params(node=node.hockney, top=top.hockney, top_loggp=top.loggp, compute=compute,
                            node_size=args.node_size, torus_dims=len(args.dims) if args.dims else None,
                            k=args.radix)
    rows = predict.predict(args.coll, params, args.proc_list, args.size_list)

    for lv in levels.values():
        h, g = lv.hockney, lv.loggp
        print(f"{lv.level}: alpha {h.alpha:.4g} us, beta {h.beta * 1e3:.4g} ns/B ({1 / h.beta:.4g} MB/s); "
              f"LogGP L {g.L:.4g} us, o {g.o:.4g} us ({lv.o_source}), G = beta; "
              f"fit over {lv.points} points, worst {lv.max_rel_err:.0%} off")
    print(f"combine: gamma {compute.gamma / 1e3:.3g} GFLOP/s, memory {compute.mem_bw / 1e3:.3g} GB/s; "
          f"flat rows use {top.level}" + (f", hier node={node.level} top={top.level} node size {args.node_size}"
                                          if args.coll != "allgather" else ""))
    if args.dims:
        print(f"torus {'x'.join(map(str, args.dims))}: d = {len(args.dims)}")
    procs = args.proc_list
    head = ["model", "bytes"] + [f"P={P}" for P in procs]
    table = []
    names = list(dict.fromkeys(r["model"] for r in rows))
    sizes = [0] if args.coll == "barrier" else args.size_list
    for name in names:
        for m in sizes:
            cells = {r["procs"]: r["us"] for r in rows if r["model"] == name and (r["bytes"] == m or args.coll == "barrier")}
            table.append([name, _size(m)] + [_us(cells[P]) for P in procs])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *table)]
    for line in [head] + table:
        print("  ".join(str(x).rjust(w) if i > 1 else str(x).ljust(w) for i, (x, w) in enumerate(zip(line, widths))))

    if args.plot:
        _plot(args, rows, names, sizes)
    if args.json:
        doc = {"schema": "caracal.model/1", "coll": args.coll, "probes": args.probe,
               "levels": {k: {"alpha_us": v.hockney.alpha, "beta_us_per_byte": v.hockney.beta,
                              "L_us": v.loggp.L, "o_us": v.loggp.o, "G_us_per_byte": v.loggp.G,
                              "o_source": v.o_source, "points": v.points, "max_rel_err": v.max_rel_err}
                          for k, v in levels.items()},
               "compute": {"gamma_per_us": compute.gamma, "mem_bw_bytes_per_us": compute.mem_bw},
               "node_size": args.node_size, "torus": args.dims, "radix": args.radix,
               "predictions": rows}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    return 0


def _plot(args, rows, names, sizes):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.5 * len(sizes), 4), squeeze=False)
    for ax, m in zip(axes[0], sizes):
        for i, name in enumerate(names):  # styles differ: equal models draw on top of each other
            pts = sorted((r["procs"], r["us"]) for r in rows if r["model"] == name and r["bytes"] == m)
            ax.plot([p for p, _ in pts], [t for _, t in pts], marker="os^vD<>"[i % 7],
                    linestyle=("-", "--", ":", "-.")[i % 4], label=name)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("ranks")
        ax.set_ylabel("predicted time (us)")
        ax.set_title(f"{args.coll} {_size(m)}" if args.coll != "barrier" else "barrier")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(args.plot, dpi=110)
    plt.close(fig)
    print(f"plot: {os.path.abspath(args.plot)}")
