"""caracal map --profile --topology --starts K: K tabu searches (seeds SEED..SEED+K-1), the
lowest exact cost kept. Profiles and topologies are written here (no MPI run): the traffic of
a 2 x 4 grid and four sites of two hosts with distinct latencies between the sites."""
import itertools
import json

from conftest import BUILDS

N = 8
SITE_RTT = {(0, 1): 1e-3, (0, 2): 2e-3, (0, 3): 4e-3, (1, 2): 3e-3, (1, 3): 6e-3, (2, 3): 9e-3}
HOSTS = [f"s{k // 2}h{k % 2}" for k in range(N)]  # location k: site k // 2


def latency(p, q):
    if p == q:
        return 0.0
    a, b = sorted((p // 2, q // 2))
    return 10e-6 if a == b else SITE_RTT[(a, b)] / 2


def grid_traffic():
    """A 2 x 4 grid (rank = 4 * row + col): bytes to each grid neighbour, 3x as many along a row."""
    T = [[0] * N for _ in range(N)]
    for r in range(N):
        row, col = divmod(r, 4)
        for dr, dc, b in ((0, 1, 3000), (0, -1, 3000), (1, 0, 1000), (-1, 0, 1000)):
            if 0 <= row + dr < 2 and 0 <= col + dc < 4:
                T[r][4 * (row + dr) + col + dc] = b
    return T


def cost(T, L, p):
    return sum(T[i][j] * L[p[i]][p[j]] for i in range(N) for j in range(N))


def files(tmp_path, cli):
    T = grid_traffic()
    prof = tmp_path / "prof.json"
    prof.write_text(json.dumps({"schema": "caracal.profile/1", "nranks": N, "traffic": {"bytes": T}}))
    L = [[latency(p, q) for q in range(N)] for p in range(N)]
    src = tmp_path / "topo.in.json"
    src.write_text(json.dumps({"schema": "caracal.topology-input/1", "hosts": HOSTS, "L": L}))
    topo = tmp_path / "topo.json"
    cli("nodemap", "--static", src, "--out", topo, check=True)
    return prof, topo, T, json.loads(topo.read_text())["L"]


def test_starts_keep_the_best_search_and_reach_the_optimum(cli, tmp_path):
    assert (BUILDS["openmpi"] / "bin" / "caracal-qap").exists() or (BUILDS["mpich"] / "bin" / "caracal-qap").exists()
    prof, topo, T, L = files(tmp_path, cli)
    best = min(cost(T, L, p) for p in itertools.permutations(range(N)))  # brute force: 8! mappings
    # By hand: the cut is smallest with the rows' pairs {0,1} {2,3} {4,5} {6,7} on the sites
    # (20000 bytes cross); {0,1}-{2,3} and {4,5}-{6,7} carry 6000 bytes each, so they take the
    # cheapest pair of disjoint site links (0-3 and 1-2: 4 + 3 ms round trip), {0,1}-{4,5} and
    # {2,3}-{6,7} 4000 each the next (0-2 and 1-3: 2 + 6 ms); inside the pairs 4 x 6000 bytes at 10 us.
    assert abs(best - (6000 * 7e-3 / 2 + 4000 * 8e-3 / 2 + 24000 * 10e-6)) < 1e-9
    args = ["map", "--profile", prof, "--topology", topo, "--json", "--iterations", "300"]
    one = [json.loads(cli(*args, "--seed", str(s), check=True).stdout) for s in (3, 4, 5)]
    r = json.loads(cli(*args, "--seed", "3", "--starts", "3", check=True).stdout)
    assert [x["seed"] for x in r["starts"]] == [3, 4, 5]
    for x, o in zip(r["starts"], one):  # each search is the single search of its seed
        assert abs(x["cost"] - o["cost"]["qap"]) <= 1e-9 * o["cost"]["qap"]
    kept = min(o["cost"]["qap"] for o in one)
    assert abs(r["cost"]["qap"] - kept) <= 1e-9 * kept
    assert abs(cost(T, L, r["permutation"]) - r["cost"]["qap"]) <= 1e-9 * kept
    assert abs(r["cost"]["qap"] - best) <= 1e-9 * best


def test_bad_starts(cli, tmp_path):
    prof, topo, _, _ = files(tmp_path, cli)
    for bad in ("0", "-2"):
        p = cli("map", "--profile", prof, "--topology", topo, "--starts", bad)
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "--starts" in p.stderr, p.stderr
    p = cli("map", "--qaplib", prof, "--starts", "2")
    assert p.returncode == 2 and "--starts" in p.stderr, p.stderr
