"""A `caracal testbed` for a test module: up once, down at the end (with a check that no
namespace is left), skipped with the reason where namespaces are refused. Each user
passes its own short name, made unique per test session, so concurrent sessions and
other people's testbeds are never touched."""
import contextlib
import os
import subprocess

import pytest

from conftest import run_cli


def unique(prefix):
    """A testbed name for this session: prefix + pid (at most 16 characters)."""
    return f"{prefix}{os.getpid() % 100000}"[:16]


def namespaces(name):
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(f"ctb-{name}-")]


@contextlib.contextmanager
def emulated_hosts(name, hosts, links=1, rate=None):
    args = ["testbed", "up", "--name", name, "--hosts", hosts, "--links", links]
    if rate:
        args += ["--rate", rate]
    p = run_cli(*args, timeout=120)
    if p.returncode == 2 and any(s in p.stderr for s in ("needs root", "cannot create", "not installed")):
        pytest.skip(p.stderr.strip())
    assert p.returncode == 0, p.stdout + p.stderr
    try:
        yield name
    finally:
        p = run_cli("testbed", "down", "--name", name, timeout=60)
        assert p.returncode == 0, p.stderr
        assert namespaces(name) == []
