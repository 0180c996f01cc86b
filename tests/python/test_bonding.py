"""caracal probe --transport tcp across emulated hosts: --bind by interface name, one
stream per link of `caracal testbed up --links K --rate R`, striping checked by the
bytes each link carried (kernel counters) and by the rate limit each link imposes."""
import json
import subprocess

import pytest

from conftest import run_cli
from testbed_util import emulated_hosts, unique

QUICK = ["--budget", "0.002", "--trials", "1", "--min-reps", "2", "--per-octave", "1", "--no-perturb"]
RATE_MBPS = 5.0          # 40mbit per link and direction: far below what the CPU can move


def run_probe(tmp_path, *args, name="out.json"):
    out = tmp_path / name
    p = run_cli("probe", *args, "--json", out, "--force", timeout=300)
    return p, (json.loads(out.read_text()) if out.exists() and p.returncode == 0 else None)


def test_bind_by_interface_name_on_one_machine(tmp_path):
    # both processes resolve "lo" to their own loopback address: the same here
    p, doc = run_probe(tmp_path, "--transport", "tcp", "--streams", "2", "--bind", "lo", "--max", "64K", *QUICK)
    assert p.returncode == 0, p.stderr
    assert doc["options"]["bind"] == ["lo"] and doc["points"][-1]["size"] == 65536


def test_unknown_interface_is_reported(tmp_path):
    p, doc = run_probe(tmp_path, "--transport", "tcp", "--bind", "nosuchif7", "--max", "64", *QUICK)
    assert p.returncode == 1 and doc is None
    assert "nosuchif7 is neither an IPv4 address nor an interface" in p.stderr


def test_testbed_options_are_checked(tmp_path):
    p, _ = run_probe(tmp_path, "--ppn", "2", "--max", "64", *QUICK)
    assert p.returncode == 2 and "--ppn belongs to --testbed" in p.stderr
    p, _ = run_probe(tmp_path, "--testbed", "nosuchbed", "--max", "64", *QUICK)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert "not up" in p.stderr or "needs root" in p.stderr


@pytest.fixture(scope="module")
def two_links():
    with emulated_hosts(unique("bnd"), 2, links=2, rate="40mbit") as name:
        yield name


def tx_bytes(name, host, dev):
    ns = f"ctb-{name}-h{host}"
    p = subprocess.run(["ip", "netns", "exec", ns, "cat", f"/sys/class/net/{dev}/statistics/tx_bytes"],
                       capture_output=True, text=True, timeout=30)
    return int(p.stdout)


def stream(two_links, tmp_path, binds, name):
    args = ["--testbed", two_links, "--transport", "tcp", "--mode", "stream", "--streams", str(len(binds))]
    for b in binds:
        args += ["--bind", b]
    before = [tx_bytes(two_links, 0, f"cveth{k}") for k in range(2)]
    p, doc = run_probe(tmp_path, *args, "--min", "1M", "--max", "1M", "--window", "2", *QUICK, "--timeout", "120",
                       name=name)
    assert p.returncode == 0, p.stdout + p.stderr
    sent = [tx_bytes(two_links, 0, f"cveth{k}") - b for k, b in enumerate(before)]
    return doc, sent


def test_one_stream_stays_on_its_link(two_links, tmp_path):
    doc, sent = stream(two_links, tmp_path, ["cveth1"], "one.json")
    assert doc["options"]["testbed"] == {"name": two_links, "hosts": 2, "links": 2, "rate_bits": 40e6, "ppn": 1}
    # rank 0 (host0) sent several MiB, all of it on link 1; link 0 only carries MPI's set-up
    assert sent[1] > 4 << 20 and sent[0] < sent[1] / 20, sent
    bw = doc["points"][0]["bandwidth_MBps"]
    assert bw < 1.3 * RATE_MBPS, bw        # tbf holds one link to its rate (+ its burst)


def test_two_streams_stripe_over_both_links(two_links, tmp_path):
    doc, sent = stream(two_links, tmp_path, ["cveth0", "cveth1"], "two.json")
    # each message cut in two halves, one per link: the links carried the same amount
    assert min(sent) > 2 << 20 and abs(sent[0] - sent[1]) < 0.1 * max(sent), sent
    bw = doc["points"][0]["bandwidth_MBps"]
    assert 1.3 * RATE_MBPS < bw < 2.6 * RATE_MBPS, bw   # above one link's rate: both links worked at once


def test_tcp_on_testbed_needs_bind(tmp_path):
    p, _ = run_probe(tmp_path, "--testbed", "anybed", "--transport", "tcp", "--max", "64", *QUICK)
    assert p.returncode == 2 and "needs --bind" in p.stderr


def test_stripe_min_keeps_small_messages_on_the_first_link(two_links, tmp_path):
    args = ["--testbed", two_links, "--transport", "tcp", "--mode", "pingpong", "--streams", "2",
            "--bind", "cveth0", "--bind", "cveth1", "--stripe-min", "64K"]
    before = [tx_bytes(two_links, 0, f"cveth{k}") for k in range(2)]
    # 32 KiB (below the threshold): whole over link 0; link 1 carries nothing
    p, doc = run_probe(tmp_path, *args, "--min", "32K", "--max", "32K", *QUICK, "--timeout", "120", name="small.json")
    assert p.returncode == 0, p.stdout + p.stderr
    mid = [tx_bytes(two_links, 0, f"cveth{k}") for k in range(2)]
    assert doc["options"]["stripe_min"] == 65536
    assert mid[0] - before[0] > 32768 * 3 and mid[1] - before[1] < 4096, (before, mid)
    # 128 KiB (above it): striped, both links carry half
    p, doc = run_probe(tmp_path, *args, "--min", "128K", "--max", "128K", *QUICK, "--timeout", "120", name="big.json")
    assert p.returncode == 0, p.stdout + p.stderr
    after = [tx_bytes(two_links, 0, f"cveth{k}") for k in range(2)]
    assert after[1] - mid[1] > 65536 * 3, (mid, after)
