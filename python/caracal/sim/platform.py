"""SimGrid platforms (XML, DTD 4.1) and SMPI hostfiles for `caracal simulate`.

Debian's SimGrid ships no platform files, so each kind is written here:
  cluster   multi-core nodes on a crossbar (one private link per node), shared-memory-like
            loopback inside a node
  torus     the same nodes on a 3-D torus (SimGrid's TORUS cluster), dimensions near a cube
  fattree   the same nodes under a two-level non-blocking fat tree (SimGrid's FAT_TREE)
  wan       MC-MPI's testbed: four clusters of Gigabit Ethernet nodes, intra-cluster round trips
            60-120 us, joined by wide-area links with round trips 4.3-10.8 ms
A node has `ppn` cores; ranks are placed on nodes by the hostfile (block, round-robin, or a
file naming the host of each rank), one line per rank in rank order.
"""
import math
from pathlib import Path
from typing import List, Optional, Tuple

from ..errors import UsageError

KINDS = ("cluster", "torus", "fattree", "wan")

# A modern cluster: 100 Gb/s links with 1 us latency between nodes; inside a node the
# loopback stands for shared memory (MPI libraries' intra-node latency is a few hundred ns).
NODE_BW, NODE_LAT = "12.5GBps", "1us"
LOOP_BW, LOOP_LAT = "20GBps", "0.3us"

# MC-MPI (Saito et al., the third source document): Gigabit Ethernet clusters; round trips
# of 60-120 us inside a cluster (one per cluster here) and 4.3-10.8 ms between clusters.
WAN_CLUSTERS = 4
WAN_INTRA_RTT_US = (60, 80, 100, 120)
WAN_RTT_MS = {(0, 1): 4.3, (0, 2): 5.6, (0, 3): 7.2, (1, 2): 8.1, (1, 3): 9.4, (2, 3): 10.8}
WAN_NODE_BW, WAN_BW = "125MBps", "125MBps"

HEADER = ("<?xml version='1.0'?>\n"
          '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
          '<platform version="4.1">\n')


def _cluster_attrs(ppn: int) -> str:
    return (f'speed="1Gf" core="{ppn}" bw="{NODE_BW}" lat="{NODE_LAT}" '
            f'loopback_bw="{LOOP_BW}" loopback_lat="{LOOP_LAT}"')


def torus_dims(nodes: int) -> Tuple[int, int, int]:
    """X >= Y >= Z with X*Y*Z >= nodes, as close to a cube as whole numbers allow."""
    best = None
    side = max(1, round(nodes ** (1 / 3)))
    for z in range(1, side + 2):
        for y in range(z, 2 * side + 3):
            x = max(y, math.ceil(nodes / (y * z)))
            cand = (x * y * z, x - z, (x, y, z))
            if best is None or cand < best:
                best = cand
    return best[2]


def fattree_params(nodes: int) -> Tuple[int, int]:
    """(nodes per leaf switch, leaf switches): leaves of up to 16 nodes."""
    per_leaf = min(16, nodes)
    return per_leaf, math.ceil(nodes / per_leaf)


def torus_extents(nodes: int, extents: Optional[Tuple[int, ...]]) -> Tuple[int, ...]:
    """The torus's extents: as given (any number of dimensions, e.g. a ring of 8 or 8x8),
    else three near a cube. SimGrid numbers a torus's nodes with its first extent varying
    fastest, MPI's Cartesian ranks the last: on tori of equal extents (8, 8x8, 8x8x8) the
    two orders have the same neighbours."""
    if extents is None:
        return torus_dims(nodes)
    if not extents or any(n < 1 for n in extents):
        raise UsageError("--extents needs positive extents such as 8x8")
    if math.prod(extents) < nodes:
        raise UsageError(f"--extents {'x'.join(map(str, extents))} holds {math.prod(extents)} nodes, "
                         f"not the {nodes} needed")
    return tuple(extents)


def host_names(kind: str, nodes: int, extents: Optional[Tuple[int, ...]] = None) -> List[str]:
    """The hosts of a platform, in the order the hostfile fills them."""
    if kind == "wan":
        per = math.ceil(nodes / WAN_CLUSTERS)
        return [f"site{s}-node{i}" for s in range(WAN_CLUSTERS) for i in range(per)]
    if kind == "torus":
        nodes = math.prod(torus_extents(nodes, extents))
    elif kind == "fattree":
        per_leaf, leaves = fattree_params(nodes)
        nodes = per_leaf * leaves
    return [f"node-{i}" for i in range(nodes)]


def platform_xml(kind: str, nodes: int, ppn: int, extents: Optional[Tuple[int, ...]] = None) -> str:
    if kind not in KINDS:
        raise UsageError(f"--platform must be one of {', '.join(KINDS)}, not '{kind}'")
    if kind == "cluster":
        body = (f'  <cluster id="cluster" prefix="node-" suffix="" radical="0-{nodes - 1}" '
                f'{_cluster_attrs(ppn)}/>\n')
    elif kind == "torus":
        ext = torus_extents(nodes, extents)
        # SPLITDUPLEX (SimGrid's default for clusters, stated): one link per direction, as
        # on the tori the rectangular collectives were made for
        body = (f'  <cluster id="torus" topology="TORUS" topo_parameters="{",".join(map(str, ext))}" '
                f'prefix="node-" suffix="" radical="0-{math.prod(ext) - 1}" sharing_policy="SPLITDUPLEX" '
                f'{_cluster_attrs(ppn)}/>\n')
    elif kind == "fattree":
        per_leaf, leaves = fattree_params(nodes)
        # 2 levels: per_leaf nodes under each leaf, `leaves` leaves under each top switch; one
        # uplink per node, every leaf up to per_leaf top switches (full bisection)
        body = (f'  <cluster id="fattree" topology="FAT_TREE" '
                f'topo_parameters="2;{per_leaf},{leaves};1,{per_leaf};1,1" prefix="node-" suffix="" '
                f'radical="0-{per_leaf * leaves - 1}" {_cluster_attrs(ppn)}/>\n')
    else:
        body = _wan_body(math.ceil(nodes / WAN_CLUSTERS), ppn)
    return HEADER + body + "</platform>\n"


def _wan_body(per_site: int, ppn: int) -> str:
    lines = ['  <zone id="world" routing="Full">\n']
    for s in range(WAN_CLUSTERS):
        # a node-to-node route in a cluster crosses the two nodes' private links: each carries
        # a quarter of the cluster's round trip
        lat_us = WAN_INTRA_RTT_US[s] / 4
        lines.append(f'    <cluster id="site{s}" prefix="site{s}-node" suffix="" radical="0-{per_site - 1}" '
                     f'speed="1Gf" core="{ppn}" bw="{WAN_NODE_BW}" lat="{lat_us:g}us" '
                     f'loopback_bw="{LOOP_BW}" loopback_lat="{LOOP_LAT}" router_id="site{s}-router"/>\n')
    for (a, b), rtt in sorted(WAN_RTT_MS.items()):
        lines.append(f'    <link id="wan{a}{b}" bandwidth="{WAN_BW}" latency="{rtt / 2:g}ms"/>\n')
    for (a, b) in sorted(WAN_RTT_MS):
        lines.append(f'    <zoneRoute src="site{a}" dst="site{b}" gw_src="site{a}-router" '
                     f'gw_dst="site{b}-router"><link_ctn id="wan{a}{b}"/></zoneRoute>\n')
    lines.append("  </zone>\n")
    return "".join(lines)


def rank_hosts(kind: str, ranks: int, ppn: int, mapping: str,
               extents: Optional[Tuple[int, ...]] = None) -> Tuple[int, List[str]]:
    """(nodes of the platform, host of each rank) for block, roundrobin or a mapping file
    (one host per rank in rank order; Hydra's `host:1` lines, as `caracal map --format mpich`
    writes them, are accepted)."""
    if ranks < 1 or ppn < 1:
        raise UsageError("--ranks and --ppn must be positive")
    nodes = math.ceil(ranks / ppn)
    if kind == "wan":
        nodes = WAN_CLUSTERS * math.ceil(nodes / WAN_CLUSTERS)
    hosts = host_names(kind, nodes, extents)
    used = hosts[:nodes]
    if mapping == "block":
        return nodes, [used[r // ppn] for r in range(ranks)]
    if mapping == "roundrobin":
        return nodes, [used[r % nodes] for r in range(ranks)]
    path = Path(mapping)
    try:
        lines = [ln.split("#")[0].strip() for ln in path.read_text().splitlines()]
    except OSError as e:
        raise UsageError(f"--mapping {mapping}: not block, roundrobin or a readable file ({e.strerror})") from None
    names = []
    for ln in filter(None, lines):
        host, _, count = ln.partition(":")
        if count and count.strip() != "1":
            raise UsageError(f"--mapping {mapping}: one rank per line ('host' or 'host:1'), not '{ln}'")
        names.append(host.strip())
    if len(names) != ranks:
        raise UsageError(f"--mapping {mapping}: {len(names)} ranks listed, --ranks is {ranks}")
    known = set(hosts)
    for h in names:
        if h not in known:
            raise UsageError(f"--mapping {mapping}: host '{h}' is not on the {kind} platform "
                             f"({hosts[0]} ... {hosts[-1]})")
    load = {}
    for h in names:
        load[h] = load.get(h, 0) + 1
        if load[h] > ppn:
            raise UsageError(f"--mapping {mapping}: more than --ppn {ppn} ranks on {h}")
    return nodes, names
