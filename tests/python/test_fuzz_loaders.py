"""A short run of the seeded structure-aware fuzzer of the Python loaders
(fuzz/python_loaders.py, docs/fuzzing.md): every mutated profile, topology, probe/bench
result and static topology description gives exit 0, or exit 2 with one line."""
import json
import subprocess
import sys

import pytest

from conftest import ROOT


@pytest.mark.parametrize("target", ["profile", "topology", "probe", "static"])
def test_loaders_survive_mutated_documents(target, tmp_path):
    p = subprocess.run([sys.executable, str(ROOT / "fuzz" / "python_loaders.py"), "--target", target,
                        "--seed", "14", "--cases", "150", "--seconds", "120", "--crashes", str(tmp_path)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-4000:]
    stats = json.loads(p.stdout.strip().splitlines()[-1])
    assert stats["failures"] == 0 and stats["cases"] >= 20, stats


def test_same_seed_same_cases():
    sys.path.insert(0, str(ROOT / "fuzz"))
    try:
        import python_loaders as pl
    finally:
        sys.path.pop(0)
    a = [pl.make_case("profile", 3, i) for i in range(20)]
    b = [pl.make_case("profile", 3, i) for i in range(20)]
    assert a == b and len(set(a)) > 10
