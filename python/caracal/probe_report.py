"""Reports for caracal.probe/1 and caracal.bench/1 documents (called by `caracal report`).

report(docs, args): docs is a list of (path, dict); args has .html and .plots.
Terminal: one summary per document, then a size-by-size comparison when several
documents of the same kind are given. Plots (log-log): probe latency and
bandwidth against size, every probe document overlaid on one plot; bench
median time (P90 as a band) against size, one plot per collective.
"""
import io
import os
from typing import Dict, List, Tuple

from .errors import UsageError
from .schema import validate

Doc = Tuple[str, dict]


def _labels(docs: List[Doc]) -> List[str]:
    """Each document's label, made unique with its file name when two collide."""
    labels = [d.get("label") or os.path.basename(p) for p, d in docs]
    out = []
    for (p, d), lab in zip(docs, labels):
        out.append(f"{lab} ({os.path.basename(p)})" if labels.count(lab) > 1 else lab)
    return out


def _check(docs: List[Doc]):
    if not docs:
        raise UsageError("no probe or bench documents given")
    for path, d in docs:
        errs = validate(d)
        if errs:
            raise UsageError(f"{path}: not a valid {d.get('schema')} document: {errs[0]}")


def _timed(d):
    return d["schema"] == "caracal.probe/1" and d["mode"] != "integrity"


def summary_lines(docs: List[Doc]) -> List[str]:
    lines = []
    for (path, d), lab in zip(docs, _labels(docs)):
        if d["schema"] == "caracal.bench/1":
            pts = [p for p in d["points"] if p["median_us"] is not None]
            lines.append(f"{lab}: {d['coll']} on {d['ranks']} ranks, {d['mpi_library']}, "
                         f"Caracal {'on' if d['caracal'] else 'off'}, sync {d['sync']}, "
                         f"{len(d['launches'])} launch(es)")
            for p in d["points"]:
                med = "-" if p["median_us"] is None else f"{p['median_us']:.2f}"
                p90 = "-" if p["p90_us"] is None else f"{p['p90_us']:.2f}"
                lines.append(f"  {p['size']:>10} B  median {med:>10} us  p90 {p90:>10} us  "
                             f"({p['valid']}/{p['reps']} valid)")
            if not pts:
                lines.append("  no valid repetitions")
        elif d["mode"] == "integrity":
            bad = d["corrupted"]
            lines.append(f"{lab}: integrity, {len(d['points'])} sizes, "
                         + (f"CORRUPTED at {bad}" if bad else "every byte correct"))
        else:
            pts = d["points"]
            best = max(pts, key=lambda p: p["bandwidth_MBps"])
            lines.append(f"{lab}: {d['mode']} over {d['transport']}, {d['mpi_library']}; "
                         f"{pts[0]['size']} B latency {pts[0]['latency_us']:.3f} us, "
                         f"peak {best['bandwidth_MBps']:.1f} MB/s at {best['size']} B, "
                         f"{len(pts)} sizes in {d['wall_seconds']:.1f} s")
    return lines


def comparison_lines(docs: List[Doc]) -> List[str]:
    """Size-by-size table across the timed probe documents (sizes all share)."""
    timed = [(lab, d) for (p, d), lab in zip(docs, _labels(docs)) if _timed(d)]
    if len(timed) < 2:
        return []
    common = sorted(set.intersection(*[{p["size"] for p in d["points"]} for _, d in timed]))
    if not common:
        return ["(the probe documents share no sizes; see the plots)"]
    ref = timed[0][1]
    lines = ["latency us (best) by size; ratio to the first document in brackets",
             f"{'bytes':>10}  " + "  ".join(f"{lab[:22]:>22}" for lab, _ in timed)]
    by = [{p["size"]: p for p in d["points"]} for _, d in timed]
    refp = {p["size"]: p for p in ref["points"]}
    for s in common:
        cells = []
        for m in by:
            v = m[s]["latency_us"]
            r = v / refp[s]["latency_us"] if refp[s]["latency_us"] else float("nan")
            cells.append(f"{v:>13.3f} [{r:5.2f}]")
        lines.append(f"{s:>10}  " + "  ".join(f"{c:>22}" for c in cells))
    return lines


def _figures(docs: List[Doc]) -> Dict[str, object]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs = {}
    labels = _labels(docs)
    timed = [(lab, d) for (p, d), lab in zip(docs, labels) if _timed(d)]
    if timed:
        for key, name, ylabel in (("latency_us", "probe-latency", "latency (us)"),
                                  ("bandwidth_MBps", "probe-bandwidth", "bandwidth (MB/s)")):
            fig, ax = plt.subplots(figsize=(7.5, 4.8))
            for lab, d in timed:
                xs = [p["size"] for p in d["points"]]
                ax.plot(xs, [p[key] for p in d["points"]], marker=".", ms=3, lw=1, label=lab)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("message size (bytes)")
            ax.set_ylabel(ylabel)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
            ax.set_title(f"{ylabel.split(' ')[0]} against size")
            fig.tight_layout()
            figs[name] = fig
    benches: Dict[str, list] = {}
    for (p, d), lab in zip(docs, labels):
        if d["schema"] == "caracal.bench/1":
            benches.setdefault(d["coll"], []).append((lab, d))
    for coll, items in benches.items():
        fig, ax = plt.subplots(figsize=(7.5, 4.8))
        for lab, d in items:
            pts = [p for p in d["points"] if p["median_us"] is not None]
            xs = [max(p["size"], 1) for p in pts]
            line, = ax.plot(xs, [p["median_us"] for p in pts], marker="o", ms=3, label=f"{lab} (median)")
            ax.fill_between(xs, [p["min_us"] for p in pts], [p["p90_us"] for p in pts],
                            color=line.get_color(), alpha=0.15)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("bytes per rank")
        ax.set_ylabel("time (us), band = min..P90")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_title(f"MPI_{coll.capitalize()}: max over ranks per repetition")
        fig.tight_layout()
        figs[f"bench-{coll}"] = fig
    return figs


def report(docs: List[Doc], args) -> int:
    _check(docs)
    lines = summary_lines(docs) + [""] + comparison_lines(docs)
    print("\n".join(lines).rstrip())
    html_out = getattr(args, "html", None)
    plots = getattr(args, "plots", None)
    if not (html_out or plots):
        return 0
    figs = _figures(docs)
    images = {}
    if plots:
        os.makedirs(plots, exist_ok=True)
    for name, fig in figs.items():
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110)
        images[name] = buf.getvalue()
        if plots:
            path = os.path.join(plots, f"{name}.png")
            with open(path, "wb") as f:
                f.write(images[name])
            print(f"plot: {path}")
    if html_out:
        from .report_html import page
        with open(html_out, "w") as f:
            f.write(page("probe-report.html.j2", title="Caracal probe report", paths=[p for p, _ in docs],
                         text="\n".join(lines), images=images))
        print(f"html: {html_out}")
    return 0
