"""caracal report: terminal tables, plots and an HTML report from a profile."""
from ..errors import UsageError

NAME = "report"
HELP = "summarise a profile (caracal.profile/1): top call sites, MPI time per rank, traffic, plots, HTML"


def add_arguments(p):
    p.add_argument("profile", metavar="PROFILE.json")
    p.add_argument("--html", metavar="OUT.html", help="write one self-contained HTML report")
    p.add_argument("--plots", metavar="DIR", help="write PNG plots (traffic heatmap, size histograms) to DIR")


def run(args):
    raise UsageError("not implemented yet")
