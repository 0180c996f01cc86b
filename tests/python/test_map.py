"""caracal map --qaplib: results, JSON keys, and bad files (one line, exit 2)."""
import itertools
import json
import subprocess
from pathlib import Path

import pytest
from conftest import BUILDS

SHARED = Path(__file__).resolve().parents[3] / "shared" / "qaplib"
if not SHARED.is_dir():
    SHARED = Path("/work/shared/qaplib")


def write_dat(path, n, A, B, header=None):
    rows = [header or str(n), ""]
    rows += [" ".join(map(str, A[i * n:(i + 1) * n])) for i in range(n)] + [""]
    rows += [" ".join(map(str, B[i * n:(i + 1) * n])) for i in range(n)]
    path.write_text("\n".join(rows) + "\n")
    return path


def cost(n, A, B, p):
    return sum(A[i * n + j] * B[p[i] * n + p[j]] for i in range(n) for j in range(n))


def test_json_keys_and_cost(cli, tmp_path):
    # the hand-checked asymmetric instance: optimum 11 at (1, 2, 0)
    A, B = [1, 4, 0, 0, 0, 2, 3, 0, 0], [0, 1, 5, 6, 0, 1, 2, 8, 3]
    dat = write_dat(tmp_path / "hand3.dat", 3, A, B)
    (tmp_path / "best-known.tsv").write_text("instance\tn\tbest_known\toptimal\nhand3\t3\t11\tyes\n")
    p = cli("map", "--qaplib", dat, "--iterations", "100", "--seed", "3", "--json", check=True)
    r = json.loads(p.stdout)
    for key in ("cost", "permutation", "seconds", "n", "method", "seed", "best_known", "gap"):
        assert key in r, key
    assert r["cost"] == 11 and r["permutation"] == [1, 2, 0]
    assert r["n"] == 3 and r["seed"] == 3 and r["method"] == "tabu"
    assert r["best_known"] == 11 and r["gap"] == 0.0


def test_matches_brute_force_asymmetric(cli, tmp_path):
    n = 6
    A = [(7 * i * i + 3 * j + 1) % 11 for i in range(n) for j in range(n)]
    B = [(5 * i + j * j * 2 + 3) % 13 for i in range(n) for j in range(n)]
    assert A != [A[j * n + i] for i in range(n) for j in range(n)]  # really asymmetric
    dat = write_dat(tmp_path / "asym6.dat", n, A, B)
    opt = min(cost(n, A, B, p) for p in itertools.permutations(range(n)))
    r = json.loads(cli("map", "--qaplib", dat, "--iterations", "2000", "--json", check=True).stdout)
    assert r["cost"] == opt == cost(n, A, B, r["permutation"])
    assert "best_known" not in r  # no best-known.tsv beside it


@pytest.mark.parametrize("method", ["tabu", "grasp"])
def test_n1_n2(cli, tmp_path, method):
    one = write_dat(tmp_path / "one.dat", 1, [4], [-2])
    r = json.loads(cli("map", "--qaplib", one, "--method", method, "--json", check=True).stdout)
    assert r["cost"] == -8 and r["permutation"] == [0]
    two = write_dat(tmp_path / "two.dat", 2, [0, 3, 1, 0], [0, 7, 2, 0])  # swapping wins: 13 vs 23
    r = json.loads(cli("map", "--qaplib", two, "--method", method, "--time", "0.05", "--json", check=True).stdout)
    assert r["cost"] == 13 and r["permutation"] == [1, 0]


def test_text_output_and_seed_reproducible(cli):
    dat = SHARED / "tai12a.dat"
    if not dat.exists():
        pytest.skip("shared QAPLIB instances not available")
    a = cli("map", "--qaplib", dat, "--iterations", "3000", "--seed", "4", "--json", check=True)
    b = cli("map", "--qaplib", dat, "--iterations", "3000", "--seed", "4", "--json", check=True)
    ra, rb = json.loads(a.stdout), json.loads(b.stdout)
    assert ra["permutation"] == rb["permutation"] and ra["cost"] == rb["cost"]
    assert ra["cost"] == 224416 and ra["gap"] == 0.0  # tai12a is small enough to be solved exactly
    t = cli("map", "--qaplib", dat, "--iterations", "3000", check=True)
    assert t.stdout.startswith("cost 224416\n")


GOOD = "2\n0 1\n1 0\n0 5\n5 0\n"
BAD_FILES = {
    "empty": ("", "empty file"),
    "truncated": ("2\n0 1\n1 0\n0 5\n", "truncated: matrix B"),
    "non_numeric": ("2\n0 1\n1 x\n0 5\n5 0\n", "line 3: expected an integer in matrix A (row 2, column 2): 'x'"),
    "float": ("2\n0 1\n1 0\n0 5.5\n5 0\n", "expected an integer in matrix B"),
    "extra": (GOOD + "7\n", "line 6: unexpected data after the two 2x2 matrices"),
    "n_zero": ("0\n", "expected the size n"),
    "n_negative": ("-3\n1 2 3\n", "expected the size n"),
    "n_words": ("two\n0 1\n1 0\n0 5\n5 0\n", "expected the size n"),
    "header_junk": ("2 2 2\n0 1\n1 0\n0 5\n5 0\n", "header line"),
    "out_of_range": ("1\n99999999999999999999999\n1\n", "integer out of range"),
    "binary": ("2\n0 1\n1 \x00\x01\n0 5\n5 0\n", "expected an integer"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_file_one_line_exit_2(cli, tmp_path, name):
    text, expect = BAD_FILES[name]
    f = tmp_path / f"{name}.dat"
    f.write_text(text)
    p = cli("map", "--qaplib", f, "--iterations", "10")
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(f"caracal map: {f}")
    assert expect in lines[0]
    assert p.stdout == ""


def test_header_with_known_cost_accepted(cli, tmp_path):
    # some distributed files put the known cost after n ("8 32"); it is ignored
    f = tmp_path / "h.dat"
    f.write_text("2 5\n0 1\n1 0\n0 5\n5 0\n")
    r = json.loads(cli("map", "--qaplib", f, "--iterations", "10", "--json", check=True).stdout)
    assert r["cost"] == 10


@pytest.mark.parametrize("args,expect", [
    (["--time", "0"], "--time needs a positive number"),
    (["--time", "abc"], "--time needs a positive number"),
    (["--iterations", "0"], "--iterations needs a positive integer"),
    (["--method", "anneal"], "invalid choice"),
])
def test_bad_options(cli, tmp_path, args, expect):
    f = tmp_path / "ok.dat"
    f.write_text(GOOD)
    p = cli("map", "--qaplib", f, *args)
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1 and expect in p.stderr


def test_missing_file(cli, tmp_path):
    p = cli("map", "--qaplib", tmp_path / "nope.dat")
    assert p.returncode == 2
    assert p.stderr.strip() == f"caracal map: no such file: {tmp_path / 'nope.dat'}"


@pytest.mark.parametrize("args,expect", [
    ([], "no QAPLIB file given"),
    (["--frobnicate"], "unknown option"),
    (["{f}", "--time"], "missing value after"),
    (["{f}", "--seed", "-1"], "--seed needs a non-negative integer"),
    (["{f}", "--method", "sa"], "--method must be grasp, tabu or auto"),
    (["{f}", "{f}"], "only one file"),
])
def test_solver_tool_bad_arguments(tmp_path, args, expect):
    exe = BUILDS["openmpi"] / "bin" / "caracal-qap"
    f = tmp_path / "ok.dat"
    f.write_text(GOOD)
    p = subprocess.run([str(exe), *[a.format(f=f) for a in args]], capture_output=True, text=True)
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1 and expect in p.stderr
