"""caracal advise: recommendations from a profile, measured on this machine before they are given."""
import sys
from pathlib import Path

from .. import topology
from ..errors import UsageError
from ..profile import load_profile
from ..tool_run import write_json

NAME = "advise"
HELP = "recommend MPI settings for a profiled program (protocol, collective algorithm, mapping, general)"
DESCRIPTION = """\
Reads a profile (caracal run --profile) and gives advice in MPI Advisor's four areas:

  point-to-point protocol  sends above the eager limit of the transport in use, with the
                           library's knob (read from ompi_info / MPICH's CVARs) and a value
  collective algorithm     each heavy collective's sizes, communicator size and root
                           pattern replayed with caracal tune's measurement against every
                           native and Caracal algorithm; the fastest with its settings
  mapping                  with --topology: the QAP placement of caracal map when its
                           predicted cost is at least 10% lower
  general                  load imbalance, dominant call sites, storms of small messages,
                           blocking rooted collectives on MPI_COMM_WORLD in loops

With --measure (the default) every protocol and algorithm suggestion is measured here
first (launches of a few seconds each; run it on an otherwise idle machine); advice that
was not measured is labelled so. Profiles from libraries not installed here (MVAPICH2)
get advice marked unverified; from an unknown library, general advice only.

Examples:
  caracal advise app.json
  caracal advise app.json --no-measure --json advice.json
  caracal advise halo.json --topology topo.json --html advice.html
"""


def add_arguments(p):
    p.add_argument("profile", metavar="PROFILE.json", help="a profile written by caracal run")
    p.add_argument("--probe", metavar="P.json",
                   help="a caracal probe ping-pong document of this machine: its latencies around the "
                        "eager limit are shown with the protocol advice")
    p.add_argument("--topology", metavar="T.json", help="a caracal.topology/1 document (caracal nodemap) for mapping advice")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--measure", dest="measure", action="store_true", default=True,
                   help="measure each suggestion on this machine before giving it (default)")
    g.add_argument("--no-measure", dest="measure", action="store_false", help="advice from the profile alone, unmeasured")
    p.add_argument("--json", metavar="OUT", help="write the advice document (caracal.advice/1)")
    p.add_argument("--html", metavar="OUT", help="write the advice as an HTML page")
    p.add_argument("--force", action="store_true", help="overwrite OUT files")


def run(args):
    from ..advise import advise, probe_evidence, render
    for out in (args.json, args.html):
        if out and Path(out).exists() and not args.force:
            raise UsageError(f"{out} exists; choose another name or add --force")
        if out and not Path(out).resolve().parent.is_dir():
            raise UsageError(f"directory does not exist: {Path(out).resolve().parent}")
    doc = load_profile(args.profile)
    topo = topology.read(args.topology) if args.topology else None
    probe = probe_evidence.load(args.probe) if args.probe else None
    log = (lambda line: print(f"caracal advise: {line}", file=sys.stderr)) if args.measure else None
    adv = advise(doc, args.profile, topo, args.topology or "", do_measure=args.measure, log=log)
    if probe is not None:
        probe_evidence.attach(adv, probe, args.probe)
    if args.json:
        _write_files(adv, args.json)
    sys.stdout.write(render.text(adv))
    if args.json:
        write_json(args.json, adv)
        print(f"caracal advise: wrote {args.json}", file=sys.stderr)
    if args.html:
        Path(args.html).write_text(render.html(adv))
        print(f"caracal advise: wrote {args.html}", file=sys.stderr)
    return 0


def _write_files(adv, json_out):
    """Mapping advice's rankfile and machinefile next to the JSON document."""
    for e in adv["advice"]:
        for kind, text in (e.get("files") or {}).items():
            path = Path(json_out).with_suffix(f".{kind}")
            path.write_text(text)
            for lib, cmd in (e.get("commands") or {}).items():  # the placeholders become the file
                e["commands"][lib] = cmd.replace(kind.upper(), str(path))
