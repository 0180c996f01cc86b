"""An emulated torus on top of `caracal testbed` (docs/testbed.md): one rank per host, and
one veth pair per torus link between the hosts' network namespaces, each end rate-limited
by tbf, with static dimension-ordered routes so that messages between non-neighbours hop
through the hosts in between (IP forwarding), as on a torus network.

  sudo python3 bench/coll/torus_testbed.py up DIMS [--rate 50mbit] [--name torus]
  sudo python3 bench/coll/torus_testbed.py down [--name torus]

`up` runs `caracal testbed up --hosts P --links 1` (the control network: launcher, Open MPI's
out-of-band channel) and then wires the torus: host i gets 10.240.0.(i+1)/32 (on its first
torus link: the kernel here has no dummy devices); the link from node x to x+e_k is `t<k>p` in x and `t<k>m` in x+e_k (in a
dimension of size 2 the two neighbours are one node and there is one link, `t<k>`). MPI data
goes over the torus when Open MPI's TCP transport is told `btl_tcp_if_include 10.240.0.0/24`
(launch_command below). A link's rate holds per direction (tbf on both ends)."""
import argparse
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TORUS_NET = "10.240.0"


def sh(*cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"torus_testbed: {' '.join(cmd)}: {(p.stderr or p.stdout).strip()}")
    return p.stdout


def caracal(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    p = subprocess.run([sys.executable, "-m", "caracal", "testbed", *args], capture_output=True, text=True, env=env)
    if p.returncode:
        sys.exit(f"torus_testbed: caracal testbed {' '.join(args)}: {(p.stderr or p.stdout).strip()}")
    return p.stdout


def parse_dims(text):
    dims = [int(x) for x in text.split("x")]
    if not dims or any(n < 1 for n in dims):
        raise ValueError(text)
    return dims


def coords(dims, r):
    c = []
    for n in reversed(dims):
        c.append(r % n)
        r //= n
    return c[::-1]


def rank(dims, c):
    r = 0
    for n, x in zip(dims, c):
        r = r * n + x
    return r


def neighbour(dims, r, k, s):
    c = coords(dims, r)
    c[k] = (c[k] + s) % dims[k]
    return rank(dims, c)


def link_name(dims, k, s):
    return f"t{k}" if dims[k] == 2 else f"t{k}{'p' if s > 0 else 'm'}"


def next_hop(dims, a, b):
    """Dimension-ordered route: the first differing dimension, the shorter way round (+ on a tie)."""
    ca, cb = coords(dims, a), coords(dims, b)
    for k, n in enumerate(dims):
        if ca[k] != cb[k]:
            fwd = (cb[k] - ca[k]) % n
            s = 1 if fwd <= n - fwd else -1
            return neighbour(dims, a, k, s), link_name(dims, k, s)
    return None


def host_ns(name, i):
    return f"ctb-{name}-h{i}"


def addr(i):
    return f"{TORUS_NET}.{i + 1}"


def tbf(ns, dev, bits):
    burst = max(65536, int(bits / 8 / 100))
    sh("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", f"{int(bits)}bit",
       "burst", str(burst), "latency", "50ms")


def parse_rate(text):
    t = text.lower().rstrip("bit").rstrip("/s")
    scale = {"k": 1e3, "m": 1e6, "g": 1e9}
    return float(t[:-1]) * scale[t[-1]] if t[-1] in scale else float(t)


def up(dims, rate_bits, name):
    P = 1
    for n in dims:
        P *= n
    caracal("up", "--hosts", str(P), "--links", "1", "--name", name)
    for i in range(P):
        ns = host_ns(name, i)
        for key in ("net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0"):
            sh("ip", "netns", "exec", ns, "sysctl", "-qw", key)
    links = 0
    for i in range(P):
        for k, n in enumerate(dims):
            if n == 1:
                continue
            j = neighbour(dims, i, k, +1)
            if n == 2 and coords(dims, i)[k] == 1:
                continue  # the pair's one link was made from its other end
            a, b = link_name(dims, k, +1), link_name(dims, k, -1)
            sh("ip", "link", "add", a, "netns", host_ns(name, i), "type", "veth", "peer", "name", b,
               "netns", host_ns(name, j))
            for ns, dev in ((host_ns(name, i), a), (host_ns(name, j), b)):
                sh("ip", "-n", ns, "link", "set", dev, "up")
                sh("ip", "netns", "exec", ns, "sysctl", "-qw", f"net.ipv4.conf.{dev}.rp_filter=0")
                if rate_bits:
                    tbf(ns, dev, rate_bits)
            links += 1
    k0 = next(k for k, n in enumerate(dims) if n > 1)
    for i in range(P):
        ns = host_ns(name, i)
        # the host's torus address sits on its first link (no dummy devices in this kernel);
        # Linux accepts it on every interface, and the routes below use it as the source
        sh("ip", "-n", ns, "addr", "add", f"{addr(i)}/32", "dev", link_name(dims, k0, +1))
        for j in range(P):
            if j == i:
                continue
            hop, dev = next_hop(dims, i, j)
            sh("ip", "-n", ns, "route", "add", f"{addr(j)}/32", "via", addr(hop), "dev", dev, "onlink",
               "src", addr(i))
    state = {"dims": dims, "rate_bits": rate_bits, "links": links, "name": name, "net": f"{TORUS_NET}.0/24"}
    Path(f"/run/caracal-testbed/{name}/torus.json").write_text(json.dumps(state) + "\n")
    print(f"torus {'x'.join(map(str, dims))}: {P} hosts, {links} links"
          f"{f' at {rate_bits / 1e6:g} Mbit/s per direction' if rate_bits else ''}")


def launch_command(name, nranks, argv, rank_env):
    """Open MPI from host0, one rank per host, MPI's TCP traffic on the torus addresses."""
    d = Path(f"/run/caracal-testbed/{name}")
    hostfile = d / "hostfile.torus"
    hostfile.write_text("".join(f"host{i} slots=1\n" for i in range(nranks)))
    cmd = [str(d / "enter"), "host0", "mpiexec.openmpi", "--hostfile", str(hostfile), "--bind-to", "none",
           "--mca", "plm_rsh_agent", str(d / "agent"), "--mca", "btl", "self,tcp",
           "--mca", "btl_tcp_if_include", f"{TORUS_NET}.0/24", "--mca", "oob_tcp_if_include", "cveth0",
           "--mca", "mpi_yield_when_idle", "1",
           # the addresses are /32 and routed: judge reachability by address class, not by
           # the interface the kernel's route would leave through
           "--mca", "reachable", "weighted"]
    for k, v in rank_env.items():
        cmd += ["-x", f"{k}={v}"]
    return cmd + ["-n", str(nranks)] + list(argv)


def link_bytes(name, nranks):
    """Bytes sent so far on each host's torus links and on its control link: {host: {dev: bytes}}."""
    out = {}
    for i in range(nranks):
        js = json.loads(sh("ip", "-n", host_ns(name, i), "-s", "-j", "link", "show"))
        out[i] = {l["ifname"]: l["stats64"]["tx"]["bytes"] for l in js
                  if l["ifname"].startswith("t") or l["ifname"] == "cveth0"}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser("up")
    u.add_argument("dims")
    u.add_argument("--rate", default="50mbit")
    u.add_argument("--name", default="torus")
    dn = sub.add_parser("down")
    dn.add_argument("--name", default="torus")
    a = ap.parse_args()
    if a.cmd == "up":
        try:
            dims = parse_dims(a.dims)
            rate = parse_rate(a.rate) if a.rate not in ("0", "none") else None
        except (ValueError, KeyError, IndexError):
            print(f"torus_testbed: bad dimensions or rate: {a.dims} {a.rate}", file=sys.stderr)
            return 2
        up(dims, rate, a.name)
    else:
        caracal("down", "--name", a.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
