"""caracal info: version, MPI libraries, settings, every collective algorithm, and the
hierarchy Caracal would build for a launch."""
import json
import sys
import os
import subprocess

from .. import __version__, mpilibs, paths
from ..errors import UsageError
from ..launch import launcher_env, mpiexec_command, testbed_command, testbed_env

NAME = "info"
HELP = "show Caracal's settings, its collective algorithms, and the hierarchy it builds"
DESCRIPTION = """\
Without options: Caracal's version, the MPI libraries it is built for, and every
CARACAL_* environment variable with its type, default and meaning. Set them in the
environment of the MPI processes (caracal run passes your environment through):

  CARACAL_LOG=algo caracal run -n 4 -- ./app

--algorithms lists every collective family, each algorithm with a one-line
description, and the rules that pick one now, in the order they are tried: yours from
CARACAL_<FAMILY>, then the rules file (CARACAL_RULES, else ~/.config/caracal/rules.conf
if it exists: what `caracal tune` writes), then the built-in defaults; and which
families always go to the native library and why:

  caracal info --algorithms
  CARACAL_BCAST=knomial:4 caracal info --algorithms     # see your rule take effect

--check judges every CARACAL_* setting in your environment (and those of a settings
file) and every selection rule as a job would, without launching anything: one line per
problem, exit status 2 if there is any, 0 if all are valid:

  CARACAL_BCAST=knomial:4 CARACAL_SHM_CAP=16m caracal info --check
  caracal info --check --settings tuned/settings.env      # what `caracal tune-app` kept

--hierarchy launches N ranks and prints the levels and groups Caracal builds for
them (node groups, leaders, whether shared memory was granted):

  caracal info --hierarchy -n 6 --node-size 4
  caracal info --hierarchy -n 4 --topology topo.json --mpi mpich
  caracal info --hierarchy -n 8 --testbed tb --ppn 2   # on caracal testbed's emulated hosts
"""

WHY_NATIVE = {
    "alltoallw": "per-rank datatypes on both sides; no hierarchical schedule pays for its generality",
    "neighbor": "graph and Cartesian neighbourhoods: the library already sends only to neighbours",
}


def add_arguments(p):
    p.add_argument("--json", action="store_true", help="print as JSON (the settings, algorithms or hierarchy document)")
    p.add_argument("--algorithms", action="store_true",
                   help="every collective algorithm with its description and the rule that selects it now")
    p.add_argument("--check", action="store_true",
                   help="judge the CARACAL_* settings and selection rules without running anything (exit 2 on a problem)")
    p.add_argument("--settings", metavar="FILE",
                   help="for --check: also the settings of this file (KEY=VALUE lines, as `caracal run --settings` takes)")
    p.add_argument("--hierarchy", action="store_true",
                   help="launch -n ranks and print the levels and groups Caracal builds for them")
    p.add_argument("-n", type=int, default=4, metavar="N", help="ranks for --hierarchy (default 4)")
    p.add_argument("--node-size", type=int, metavar="K",
                   help="for --hierarchy: treat every K consecutive ranks as one node (CARACAL_NODE_SIZE)")
    p.add_argument("--topology", metavar="FILE", help="for --hierarchy: a topology file (CARACAL_TOPOLOGY)")
    p.add_argument("--mpi", choices=paths.BUILDS, help="which library's build to ask (default: the first built)")
    p.add_argument("--compiler", action="store_true",
                   help="print the C compiler command that builds a program for --mpi (its last line)")
    p.add_argument("--testbed", metavar="NAME",
                   help="for --hierarchy: launch on this caracal testbed's emulated hosts (needs root)")
    p.add_argument("--ppn", type=int, metavar="P", help="with --testbed: ranks per host (default 1)")


def _first_built(mpi):
    """(library, caracal-info of a build that runs on it): the library's own build first, then
    one of an ABI it implements (mpilibs.BUILD_RUNS_ON), in the source tree or an installed
    prefix (paths)."""
    if mpi:
        return (mpi if mpi in mpilibs.LIBRARIES else mpilibs.build_library(mpi)[0]), paths.program(mpi, "caracal-info")
    for m in paths.MPIS:
        try:
            return m, paths.program(m, "caracal-info")
        except UsageError:
            continue
    raise UsageError("caracal-info is not built; run: make build")


def _run_info(mpi, *argv):
    _, exe = _first_built(mpi)
    proc = subprocess.run([str(exe), *argv], capture_output=True, text=True)
    if proc.returncode != 0:
        raise UsageError(f"caracal-info {' '.join(argv)} failed: {proc.stderr.strip().splitlines()[-1:] or proc.returncode}")
    for line in proc.stderr.splitlines():  # Caracal's warnings (a rules file's bad lines)
        if "warning:" in line:
            print(line.replace("caracal[-1]: ", "caracal: "), file=sys.stderr)
    return json.loads(proc.stdout)


def settings(mpi=None):
    return _run_info(mpi)


def algorithms(mpi=None):
    return _run_info(mpi, "--algorithms")


def hierarchy(nranks, node_size=None, topology=None, mpi=None, timeout=120, testbed=None, ppn=None):
    mpi, exe = _first_built(mpi)
    if nranks < 1:
        raise UsageError(f"-n must be at least 1, not {nranks}")
    if node_size is not None and node_size < 1:
        raise UsageError(f"--node-size must be at least 1, not {node_size}")
    env = {}
    if node_size is not None:
        env["CARACAL_NODE_SIZE"] = str(node_size)
    if topology is not None:
        if not os.path.isfile(topology):
            raise UsageError(f"topology file not found: {topology}")
        env["CARACAL_TOPOLOGY"] = os.path.abspath(topology)
    run_env = launcher_env()
    if ppn is not None and not testbed:
        raise UsageError("--ppn belongs to --testbed")
    if testbed:
        from .testbed import require_up
        ppn = ppn or 1
        if ppn < 1:
            raise UsageError(f"--ppn must be at least 1, not {ppn}")
        require_up(testbed, -(-nranks // ppn))
        # caracal-info is linked with libcaracal: no preload (native); the testbed's own
        # timeout ends the run first and cleans up inside
        cmd = testbed_command(testbed, mpi, nranks, ppn, [str(exe), "--hierarchy"], env=env, timeout=timeout)
        run_env = testbed_env()
        timeout += 30
    else:
        cmd = mpiexec_command(mpi, nranks, [str(exe), "--hierarchy"], env=env)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=run_env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise UsageError(f"the {nranks}-rank launch did not finish in {timeout} s")
    out = proc.stdout[proc.stdout.find("{"):] if "{" in proc.stdout else ""
    if proc.returncode != 0 or not out:
        last = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        raise UsageError(f"launching {nranks} ranks failed: {last}")
    doc = json.loads(out)
    doc["mpi"] = mpi
    return doc


def check(mpi=None, settings_path=None):
    """(problem lines, summary): caracal-info --check under this environment plus a settings
    file's values, as a job would see them."""
    _, exe = _first_built(mpi)
    env = dict(os.environ)
    if settings_path:
        from .. import settings_file
        env.update(settings_file.read(settings_path))
    proc = subprocess.run([str(exe), "--check"], capture_output=True, text=True, env=env)
    if proc.returncode not in (0, 2):
        raise UsageError(f"caracal-info --check failed: {(proc.stderr.strip().splitlines() or [proc.returncode])[-1]}")
    problems = [l.split("warning: ", 1)[1] for l in proc.stderr.splitlines() if "warning: " in l]
    return problems, proc.stdout.strip().replace("caracal-info: ", "")


def print_algorithms(doc):
    for fam in doc["families"]:
        parts = [(fam["user_rules"], fam["setting"]),
                 (fam.get("file_rules", ""), f"rules file {doc.get('rules_file')}"),
                 (fam["default_rules"], "built-in default")]
        used = [(r, o) for r, o in parts if r]
        rules = " | ".join(r for r, _ in used)
        origin = ", then ".join(o for _, o in used) or "built-in default"
        print(f"{fam['name']}  ({fam['setting'] or 'no setting'})")
        if fam["native_only"]:
            why = WHY_NATIVE.get(fam["name"].split("_")[0], "no Caracal schedule")
            print(f"    always native: {why}")
            continue
        if not fam["algorithms"]:
            print("    native: no Caracal algorithm yet")
            continue
        print(f"    rules now: {rules or 'native'}   [{origin}]")
        width = max(len(a["name"]) for a in fam["algorithms"])
        for a in fam["algorithms"]:
            mark = "*" if a["default"] else " "
            whole = " [whole: a level running it is not chunked]" if "whole" in a.get("flags", []) else ""
            print(f"   {mark}{a['name']:<{width}}  {a['scope']:<10}  {a['description']}{whole}")
    others = [x for x in doc.get("always_native", []) if x not in {f["name"] for f in doc["families"]}]
    if others:
        print("\nAlways native: " + ", ".join(others) + ".")
    print("Neighborhood collectives (MPI_Neighbor_*, MPI_Ineighbor_*): not interposed, always native "
          f"({WHY_NATIVE['neighbor']}).")
    print("* the family's default under CARACAL_COLL=force. scope: comm = a rule such as "
          "CARACAL_BCAST=knomial:4;\n  level = inside a schedule, e.g. CARACAL_BCAST='node/shm top/knomial:2'. "
          "Rules: docs/collectives.md.")


def print_hierarchy(doc):
    print(f"{doc['ranks']} ranks ({doc['mpi']}): {doc['summary']}")
    hosts = doc["hosts"]
    for lv in doc["levels"]:
        print(f"  level {lv['kind']}: {len(lv['groups'])} group(s), largest {lv['largest_group']}")
        for g in lv["groups"]:
            where = sorted({hosts[m] for m in g["members"]})
            shm = {True: ", shared memory", False: ""}.get(g.get("shm"), "")
            print(f"    leader {g['leader']:>3}: ranks {', '.join(map(str, g['members']))}  "
                  f"(host {', '.join(where)}{shm})")
    if not doc["levels"]:
        print("  one level: every rank on its own (flat algorithms only)")


def print_libraries():
    """The MPI libraries: the libcaracal that serves each (a build in the source tree or an
    installed prefix; another ABI-compatible build where the library has none of its own),
    its launcher, and which builds serve it besides."""
    print("MPI libraries (make build MPI=<name>; caracal run --mpi <name>; docs/mpi-libraries.md):")
    for name in paths.MPIS + tuple(mpilibs.EXTRA_BUILDS):
        builds = [b for b in paths.builds_for(name) if paths.library_file(b).exists()]
        state = "not built"
        if builds:
            b = builds[0]
            state = str(paths.library_file(b)) + ("" if b == name else f" (build {b}, {mpilibs.build_library(b)[1]} ABI)")
        if name in mpilibs.EXTRA_BUILDS:
            runs = [r for r, bs in mpilibs.BUILD_RUNS_ON.items() if name in bs]
            print(f"  {name:8s} library: {state}; MPI-5 standard ABI build, runs on: {', '.join(runs)}")
            continue
        lib = mpilibs.get(name)
        where = lib.mpiexec if lib.installed() else f"not installed (make setup MPI={name})"
        also = ", ".join(f"{b} ({mpilibs.build_library(b)[1]} ABI)" for b in builds[1:])
        print(f"  {name:8s} library: {state}; launcher: {where}; {lib.title}" + (f"; also: {also}" if also else ""))


def print_compiler(mpi):
    name, abi = mpilibs.build_library(mpi)
    lib = mpilibs.get(name)
    if not lib.installed():
        raise UsageError(f"{lib.title} is not installed; run: make setup MPI={name}")
    print(f"{lib.title}, {abi} ABI: compile and link a C MPI program with")
    print(lib.compiler_command(mpi5=abi == "mpi5"))


def run(args):
    if args.compiler:
        if not args.mpi:
            raise UsageError("--compiler needs --mpi NAME")
        print_compiler(args.mpi)
        return 0
    if sum(map(bool, (args.algorithms, args.hierarchy, args.check))) > 1:
        raise UsageError("choose one of --algorithms, --check and --hierarchy")
    if args.settings and not args.check:
        raise UsageError("--settings belongs to --check")
    if args.check:
        problems, summary = check(args.mpi, args.settings)
        for line in problems:
            print(f"caracal: {line}", file=sys.stderr)
        print(summary)
        return 2 if problems else 0
    if (args.testbed or args.ppn is not None) and not args.hierarchy:
        raise UsageError("--testbed and --ppn belong to --hierarchy")
    if args.hierarchy:
        doc = hierarchy(args.n, args.node_size, args.topology, args.mpi, testbed=args.testbed, ppn=args.ppn)
        print(json.dumps(doc, indent=2) if args.json else "", end="\n" if args.json else "")
        if not args.json:
            print_hierarchy(doc)
        return 0
    if args.algorithms:
        doc = algorithms(args.mpi)
        if args.json:
            print(json.dumps(doc, indent=2))
        else:
            print_algorithms(doc)
        return 0
    table = settings(args.mpi)
    if args.json:
        print(json.dumps(table, indent=2))
        return 0
    print(f"caracal {__version__}")
    print_libraries()
    print("\nSettings (environment variables):")
    width = max(len(s["name"]) for s in table["settings"])
    for s in table["settings"]:
        default = s["default"] if s["default"] != "" else "(empty)"
        print(f"  {s['name']:<{width}}  {s['type']:<6} default {default}")
        print(f"  {'':<{width}}  {s['doc']}")
    print("\nMore: caracal info --algorithms (collective algorithms and rules), "
          "caracal info --hierarchy -n N (levels for a launch)")
    return 0
