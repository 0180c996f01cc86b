"""mm25d and lu25d under Caracal's profiler: the profile's bytes are the words the
schedule moves (mm25d: exactly the formula of caracal.model.la25d, in integers), the
programs' own count agrees with the profile, and the call sites name each
sub-communicator's function, which is how `caracal report` shows the volume by
sub-communicator. (Correctness at every valid c is ctest's: tests/c/examples25d.cmake.)"""
import json
import re

import pytest

from caracal.model import la25d
from conftest import BUILDS, run_cli


def profiled(mpi, tmp_path, np_, prog, *args):
    exe = BUILDS[mpi] / "bin" / prog
    if not exe.exists():
        pytest.fail(f"{exe} is not built")
    prof = tmp_path / f"{prog}.json"
    p = run_cli("run", "-n", np_, "--mpi", mpi, "--profile", prof, "--", exe, *args, timeout=300)
    assert p.returncode == 0, p.stderr
    kv = dict(re.findall(r"(\w+)=(\S+)", p.stdout))
    assert kv["check"] == "ok"
    return kv, json.loads(prof.read_text())


@pytest.mark.parametrize("c", [1, 4])
def test_mm25d_profile_words_are_the_formula(mpi, tmp_path, c):
    kv, doc = profiled(mpi, tmp_path, 4, "mm25d", "-n", 13, "-c", c, "-b", 4)
    total = sum(x["bytes"] for x in doc["calls"])
    assert total == 8 * 4 * la25d.words_mm(13, 4, c)      # 5408 B (c=1), 18928 B (c=4)
    assert float(kv["words_per_rank"]) == pytest.approx(total / 32, abs=0.005)
    fns = {s["function"] for s in doc["callsites"] if s["bytes"]}
    assert fns == ({"row_bcast", "col_bcast"} if c == 1 else {"row_bcast", "col_bcast", "depth_bcast", "depth_reduce"})


def test_lu25d_profile_agrees_with_its_own_count(mpi, tmp_path):
    kv, doc = profiled(mpi, tmp_path, 4, "lu25d", "-n", 19, "-c", 4, "-b", 3)
    total = sum(x["bytes"] for x in doc["calls"])
    assert float(kv["words_per_rank"]) == pytest.approx(total / 8 / 4, abs=0.005)
    fns = {s["function"] for s in doc["callsites"] if s["bytes"]}
    assert {"depth_reduce", "depth_bcast", "row_bcast", "col_allgather"} <= fns
    rep = run_cli("report", tmp_path / "lu25d.json")
    assert rep.returncode == 0 and "depth_reduce" in rep.stdout
