"""CARACAL_LOG=map: reordering constructors report the predicted cost before and after,
and the profiler counts each constructor once per rank (its own PMPI calls are not)."""
import json
import re

from conftest import BUILDS, ROOT

TOPO = ROOT / "tests" / "c" / "data" / "topology4-alternating.json"
LINE = re.compile(r"caracal\[0\]: (MPI_\w+): 4 ranks, predicted cost (\d+) with ranks in order, (\d+) reordered")


def test_log_shows_lower_cost(cli, tmp_path, mpi):
    prof = tmp_path / "p.json"
    p = cli("run", "--mpi", mpi, "-n", 4, "--profile", prof, "--env", "CARACAL_LOG=map",
            "--env", f"CARACAL_TOPOLOGY={TOPO}", "--", BUILDS[mpi] / "bin" / "test_reorder", "better",
            check=True, timeout=300)
    found = {}
    for m in LINE.finditer(p.stderr):
        found.setdefault(m.group(1), []).append((int(m.group(2)), int(m.group(3))))
    assert set(found) == {"MPI_Cart_create", "MPI_Graph_create", "MPI_Dist_graph_create",
                          "MPI_Dist_graph_create_adjacent"}, p.stderr
    for name, costs in found.items():
        assert all(after <= before for before, after in costs), (name, costs)
        assert any(after < before for before, after in costs), (name, costs)
    calls = {c["call"]: c["count"] for c in json.loads(prof.read_text())["calls"]}
    # test_reorder, per rank and pass (reorder 0, then 1): 2 Cart_create, 1 Graph_create,
    # 1 Dist_graph_create, 2 Dist_graph_create_adjacent; then a smaller grid and graph,
    # and one invalid grid and graph (calls that fail are counted too)
    assert calls["MPI_Cart_create"] == 4 * 6 and calls["MPI_Graph_create"] == 4 * 4
    assert calls["MPI_Dist_graph_create"] == 4 * 2 and calls["MPI_Dist_graph_create_adjacent"] == 4 * 4
    assert "MPI_Comm_split" not in calls and "MPI_Comm_dup" not in calls  # Caracal's own calls are PMPI
