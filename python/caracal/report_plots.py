"""The profile report's plots (matplotlib, Agg backend, PNG).

Three figures: the point-to-point traffic matrix as a heatmap, message-size
histograms per call, and time per rank split into MPI and computation.
Each function returns PNG bytes, so the same figure goes to a file
(--plots) or into the HTML report.
"""
import io
import os

import matplotlib

matplotlib.use("Agg")  # never needs a display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import LogNorm, Normalize  # noqa: E402
from matplotlib.ticker import FuncFormatter, MaxNLocator  # noqa: E402

from . import report_format as fmt  # noqa: E402
from .profile import rank_entries  # noqa: E402

# Plot name -> file name suffix; the files --plots writes (and only overwrites).
PLOTS = ("traffic", "sizes", "time")
MAX_HIST_CALLS = 8


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _rank_ticks(ax, n, axis):
    """Every rank up to 16, then at most ~16 integer ticks."""
    loc = MaxNLocator(nbins=16, integer=True) if n > 16 else matplotlib.ticker.FixedLocator(range(n))
    (ax.xaxis if axis == "x" else ax.yaxis).set_major_locator(loc)


def _pow2_ticks(vmin, vmax):
    """At most ~7 power-of-two ticks in [vmin, vmax]: byte counts read as 1 KiB, 1 MiB, not 10^6."""
    lo, hi = int(np.ceil(np.log2(vmin))), int(np.floor(np.log2(vmax)))
    if hi < lo:
        return [vmin, vmax]
    step = max(1, int(np.ceil((hi - lo + 1) / 7)))
    return [2.0 ** k for k in range(lo, hi + 1, step)]


def _program(doc):
    return os.path.basename(doc["program"])


def traffic(doc) -> bytes:
    n = doc["nranks"]
    b = np.array(doc["traffic"]["bytes"], dtype=float).reshape(n, n)
    side = min(9.0, 3.8 + 0.08 * n)
    fig, ax = plt.subplots(figsize=(side + 1.2, side))
    ax.set_title(f"{_program(doc)}: point-to-point bytes, sender to receiver")
    ax.set_xlabel("receiver rank")
    ax.set_ylabel("sender rank")
    if b.max() <= 0:
        ax.set_xlim(-0.5, n - 0.5)
        ax.set_ylim(n - 0.5, -0.5)
        ax.text(0.5, 0.5, "no point-to-point traffic", ha="center", va="center", transform=ax.transAxes)
    else:
        positive = b[b > 0]
        masked = np.ma.masked_where(b <= 0, b)  # zero pairs stay blank, not "the smallest colour"
        lo, hi = positive.min(), positive.max()
        norm, scale = heatmap_norm(lo, hi)
        im = ax.imshow(masked, cmap="viridis", norm=norm, interpolation="nearest", aspect="equal")
        ax.set_facecolor("#f2f2f2")
        cb = fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
        cb.set_label(f"bytes sent ({scale}); pairs range {fmt.size(lo)} to {fmt.size(hi)}")
        if scale.startswith("log"):
            cb.set_ticks(_pow2_ticks(norm.vmin, norm.vmax))
        cb.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt.size(v)))
        cb.ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    _rank_ticks(ax, n, "x")
    _rank_ticks(ax, n, "y")
    if n <= 16:
        ax.set_xticks(np.arange(-0.5, n, 1), minor=True)
        ax.set_yticks(np.arange(-0.5, n, 1), minor=True)
        ax.grid(which="minor", color="white", linewidth=0.8)
        ax.tick_params(which="minor", length=0)
    return _png(fig)


# Above this ratio between the largest and the smallest nonzero pair a linear scale would
# paint the small pairs all alike; below it a log scale would turn a few percent into the
# whole colour range (a 25% difference looked dramatic).
LOG_SCALE_RATIO = 100


def heatmap_norm(lo, hi):
    """(norm, scale description) of the traffic heatmap: linear from 0 to the largest pair,
    so colours are proportional to bytes, unless the nonzero pairs span more than
    LOG_SCALE_RATIO; then log, over whole decades around them (never from the smallest
    pair to the largest, which stretches any ratio over the full colour range)."""
    if hi / lo <= LOG_SCALE_RATIO:
        return Normalize(vmin=0, vmax=hi), "linear from 0"
    vmin = 10.0 ** np.floor(np.log10(lo))
    vmax = 10.0 ** np.ceil(np.log10(hi))
    return LogNorm(vmin=vmin, vmax=vmax), "log scale"


def size_panels(doc) -> list:
    """The calls the size plot shows, most bytes first: only calls that moved data, since a
    panel with nothing but a 0-byte bar (Wait, Barrier, Type_commit, ...) shows no sizes."""
    calls = [c for c in doc["calls"] if c["bytes"] > 0 and any(b[1] for b in c["histogram"])]
    return sorted(calls, key=lambda c: (-c["bytes"], c["call"]))


def sizes(doc) -> bytes:
    calls = size_panels(doc)
    dropped = len(calls) - MAX_HIST_CALLS
    calls = calls[:MAX_HIST_CALLS]
    if not calls:
        fig, ax = plt.subplots(figsize=(7, 2.5))
        ax.set_axis_off()
        ax.text(0.5, 0.5, "no MPI call moved data", ha="center", va="center")
        return _png(fig)
    bins = sorted({b[0] for c in calls for b in c["histogram"] if b[1]})
    lo, hi = bins[0], bins[-1]
    ks = list(range(lo, hi + 1))
    fig, axes = plt.subplots(len(calls), 1, figsize=(max(6.5, 0.45 * len(ks) + 3), 1.7 * len(calls) + 1.0),
                             sharex=True, squeeze=False)
    title = f"{_program(doc)}: message sizes per call (all ranks)"
    if dropped > 0:
        title += f"; {dropped} calls with fewer bytes not shown"
    fig.suptitle(title)
    for ax, c in zip(axes[:, 0], calls):
        counts = dict((b[0], b[1]) for b in c["histogram"])
        ax.bar(ks, [counts.get(k, 0) for k in ks], width=0.8, color="#3b75af")
        ax.set_ylabel("calls")
        ax.set_title(f"{c['call']}: {fmt.count(c['count'])} calls, {fmt.size(c['bytes'])}", fontsize=10, loc="left")
        ax.yaxis.set_major_locator(MaxNLocator(nbins=3, integer=True))
        ax.spines[["top", "right"]].set_visible(False)
    ax = axes[-1, 0]
    ax.set_xticks(ks)
    ax.set_xticklabels([fmt.bin_label(k) for k in ks], rotation=45 if len(ks) > 12 else 0)
    ax.set_xlabel("message size in bytes (power-of-two classes, labelled by their smallest size)")
    fig.tight_layout()
    return _png(fig)


def time_per_rank(doc) -> bytes:
    ranks = rank_entries(doc)
    n = len(ranks)
    mpi = np.array([r["time_mpi"] if r else 0.0 for r in ranks])
    total = np.array([r["time_total"] if r else 0.0 for r in ranks])
    compute = np.clip(total - mpi, 0, None)
    fig, ax = plt.subplots(figsize=(min(12.0, 4.5 + 0.12 * n), 4.2))
    x = np.arange(n)
    width = 0.8 if n > 1 else 0.5
    ax.bar(x, compute, width, label="computation (outside MPI)", color="#9fb8d2")
    ax.bar(x, mpi, width, bottom=compute, label="MPI", color="#d9534f")
    ax.set_title(f"{_program(doc)}: time per rank, MPI vs computation")
    ax.set_xlabel("rank")
    ax.set_ylabel("time (s)")
    _rank_ticks(ax, n, "x")
    ax.set_xlim(-0.7, n - 0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    missing = [i for i, r in enumerate(ranks) if r is None]
    if missing:
        ax.text(0.99, 0.98, f"no data from {len(missing)} rank(s)", transform=ax.transAxes, ha="right", va="top",
                color="#a00")
    return _png(fig)


RENDER = {"traffic": traffic, "sizes": sizes, "time": time_per_rank}


def render_all(doc) -> dict:
    """Plot name -> PNG bytes."""
    return {name: RENDER[name](doc) for name in PLOTS}
