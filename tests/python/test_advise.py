"""caracal advise: every rule on synthetic profiles with the advice computed by hand, the
knobs checked against the installed libraries, unknown and uninstalled libraries, bad input,
and one real measured replay per library."""
import json
import re
import shutil
import subprocess

import pytest

from caracal import advise as adv_mod
from caracal.advise import library, p2p
from caracal import schema

OMPI = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022"
MPICH = "MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 12:34:45 CDT 2022"
MVAPICH2 = "MVAPICH2 Version      :\t2.3.7"


def site(call, count, size, time, nranks=2, line=10, per_rank_time=None):
    """A call site whose `count` calls all carry `size` bytes (one log2 bin)."""
    b = 0 if size == 0 else size.bit_length()
    return {"call": call, "function": "main", "file": "app.c", "line": line, "module": "/opt/app", "offset": "0x10",
            "count": count, "bytes": count * size, "time": time, "time_min": 1e-6, "time_max": 0.01,
            "histogram": [[b, count, count * size]],
            "per_rank": {"count": [count // nranks] * nranks,
                         "time": per_rank_time or [time / nranks] * nranks,
                         "bytes": [count * size // nranks] * nranks}}


def profile(lib=OMPI, nranks=2, hosts=None, sites=(), collectives=(), time_mpi=None, time_total=None,
            program="/nonexistent/app"):
    hosts = hosts or ["h0"] * nranks
    time_mpi = time_mpi or [1.0] * nranks
    time_total = time_total or [10.0] * nranks
    ranks = [{"rank": r, "host": hosts[r], "pid": 100 + r, "time_total": time_total[r], "time_mpi": time_mpi[r],
              "partial": False, "comm_sizes": {str(nranks): 1}} for r in range(nranks)]
    calls = {}
    for s in sites:
        c = calls.setdefault(s["call"], {"call": s["call"], "count": 0, "time": 0.0, "time_min": 1e-6,
                                         "time_max": 0.01, "bytes": 0, "histogram": []})
        c["count"] += s["count"]
        c["time"] += s["time"]
        c["bytes"] += s["bytes"]
        c["histogram"] += s["histogram"]
    return {"schema": "caracal.profile/1", "partial": False, "missing_ranks": [], "caracal_version": "0.1.0",
            "mpi_library": lib, "mpi_version": "3.1", "program": program, "argv": [], "nranks": nranks,
            "ranks": ranks, "calls": list(calls.values()), "callsites": list(sites),
            "traffic": {"messages": [[0] * nranks for _ in range(nranks)],
                        "bytes": [[0] * nranks for _ in range(nranks)]},
            "collectives": list(collectives)}


def bcast_coll(nranks, count, size, roots, changes):
    per = count // len(roots)
    return {"call": "MPI_Bcast", "comm_size": nranks, "count": count, "bytes": count * size * nranks,
            "roots": {str(r): per for r in roots}, "root_changes": changes, "calls": count * nranks,
            "root_calls": {str(r): per * nranks for r in roots}, "root_change_calls": changes * nranks}


def write(tmp_path, doc, name="p.json"):
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


def advice(cli, tmp_path, doc, *extra):
    prof = write(tmp_path, doc)
    out = tmp_path / "advice.json"
    p = cli("advise", prof, "--no-measure", "--json", out, "--force", *extra)
    assert p.returncode == 0, p.stderr
    a = json.loads(out.read_text())
    schema.check(a, schema.load("advice-1.json"))
    return a, p.stdout


def rules(a):
    return [e["rule"] for e in a["advice"]]


def installed(name):
    from caracal import mpilibs
    return mpilibs.get(name).installed()


def ompi_param(param):
    """The value ompi_info itself prints for an MCA parameter (independent of the advisor's reader)."""
    comp = param.split("_")[1]
    out = subprocess.run(["ompi_info", "--param", "btl", comp, "--level", "9", "--parsable"],
                         capture_output=True, text=True, check=True).stdout
    return re.search(rf"^mca:btl:{comp}:param:{param}:value:(\d+)$", out, re.M).group(1)


def mpich_cvar(name):
    out = subprocess.run(["mpivars"], capture_output=True, text=True).stdout
    return re.search(rf"^\s*{name}\s*=(\d+)\t", out, re.M).group(1)


# ---- point-to-point ---------------------------------------------------------------------
@pytest.mark.skipif(not shutil.which("ompi_info"), reason="Open MPI is not installed")
def test_eager_openmpi_one_host(cli, tmp_path):
    doc = profile(sites=[site("MPI_Send", 1000, 131072, 0.5)])
    a, out = advice(cli, tmp_path, doc)
    (e,) = [e for e in a["advice"] if e["area"] == "p2p"]
    assert e["knob"] == "btl_vader_eager_limit" and e["current"] == ompi_param("btl_vader_eager_limit")
    assert e["suggested"] == "135168"  # 131072 + header room, rounded up to 4 KiB
    assert e["env"] == {"OMPI_MCA_btl_vader_eager_limit": "135168"}
    assert e["status"] == "unmeasured" and "UNMEASURED" in out
    assert "--mca btl_vader_eager_limit 135168" in e["commands"]["mpiexec"]
    assert e["sites"][0]["line"] == 10 and e["sizes"] == [131072]


@pytest.mark.skipif(not shutil.which("ompi_info"), reason="Open MPI is not installed")
def test_eager_openmpi_between_hosts_and_below_limit(cli, tmp_path):
    tcp = int(ompi_param("btl_tcp_eager_limit"))
    doc = profile(hosts=["a", "b"], sites=[site("MPI_Isend", 1000, 2 * tcp, 0.5)])
    a, _ = advice(cli, tmp_path, doc)
    (e,) = [e for e in a["advice"] if e["area"] == "p2p"]
    assert e["knob"] == "btl_tcp_eager_limit" and int(e["suggested"]) == -(-(2 * tcp + 256) // 4096) * 4096
    # messages well below the limit, or synchronous sends: no protocol advice
    for s in (site("MPI_Send", 1000, 1024, 0.5), site("MPI_Ssend", 1000, 131072, 0.5)):
        a, _ = advice(cli, tmp_path, profile(sites=[s]))
        assert "eager-limit" not in rules(a)


@pytest.mark.skipif(not shutil.which("mpivars"), reason="MPICH is not installed")
def test_eager_mpich_one_host(cli, tmp_path):
    doc = profile(lib=MPICH, sites=[site("MPI_Send", 1000, 131072, 0.5)])
    a, _ = advice(cli, tmp_path, doc)
    (e,) = [e for e in a["advice"] if e["area"] == "p2p"]
    assert e["knob"] == "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE"
    assert e["current"] == mpich_cvar("MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE")
    assert e["env"] == {"MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE": "135168"}
    assert "-genv MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE 135168" in e["commands"]["mpiexec"]
    # 32 KiB records fit MPICH's 68 KiB cells: nothing to advise
    a, _ = advice(cli, tmp_path, profile(lib=MPICH, sites=[site("MPI_Send", 1000, 32768, 0.5)]))
    assert "eager-limit" not in rules(a)


def test_mvapich2_advice_is_unverified(cli, tmp_path):
    doc = profile(lib=MVAPICH2, hosts=["a", "b"], sites=[site("MPI_Send", 1000, 131072, 0.5)])
    a, out = advice(cli, tmp_path, doc)
    (e,) = [e for e in a["advice"] if e["area"] == "p2p"]
    assert e["knob"] == "MV2_IBA_EAGER_THRESHOLD" and e["status"] == "unverified"
    assert a["library"]["kind"] == "mvapich2" and any("unverified" in n for n in a["notes"])
    assert "UNVERIFIED" in out


def test_unknown_library_gets_general_advice_only(cli, tmp_path):
    doc = profile(lib="SomeVendor MPI 9", sites=[site("MPI_Send", 1000, 131072, 0.5)],
                  collectives=[bcast_coll(2, 500, 4096, [0], 0)])
    doc["callsites"].append(site("MPI_Bcast", 1000, 4096, 0.5, line=20))
    a, out = advice(cli, tmp_path, doc)
    assert a["library"]["kind"] == "unknown" and a["advice"]
    assert {e["area"] for e in a["advice"]} == {"general"}
    assert "general advice only" in out


# ---- collectives ----------------------------------------------------------------------
def test_collective_patterns(cli, tmp_path):
    # every call a new root (ASP with a cyclic distribution): the replay rotates the root
    doc = profile(sites=[site("MPI_Bcast", 2000, 4096, 0.5)], collectives=[bcast_coll(2, 1000, 4096, [0, 1], 999)])
    a, _ = advice(cli, tmp_path, doc)
    (e,) = [e for e in a["advice"] if e["area"] == "collective"]
    assert e["pattern"] == "rotate" and e["sizes"] == [4096] and e["status"] == "unmeasured"
    assert e["collective"] == "bcast" and e["comm_size"] == 2
    # one root, calls far apart (0.5 s of 10 s over 1000 calls): separated calls
    doc = profile(sites=[site("MPI_Bcast", 2000, 4096, 0.5)], collectives=[bcast_coll(2, 1000, 4096, [0], 0)])
    a, _ = advice(cli, tmp_path, doc)
    (e,) = [e for e in a["advice"] if e["area"] == "collective"]
    assert e["pattern"] == "barrier"
    # ... also when a rare call (a final check, 2 calls absorbing 9 s of waiting) sits beside them
    doc["callsites"].append(site("MPI_Bcast", 2, 8, 9.0, line=99))
    a, _ = advice(cli, tmp_path, doc)
    (e,) = [e for e in a["advice"] if e["area"] == "collective"]
    assert e["pattern"] == "barrier" and e["sizes"] == [4096]
    # the calls are the run (8 of 10 s): back to back
    doc = profile(sites=[site("MPI_Allreduce", 2000, 64, 16.0)], time_mpi=[8.0, 8.0],
                  collectives=[{"call": "MPI_Allreduce", "comm_size": 2, "count": 1000, "bytes": 128000, "roots": {},
                                "root_changes": 0, "calls": 2000, "root_calls": {}, "root_change_calls": 0}])
    a, _ = advice(cli, tmp_path, doc)
    (e,) = [e for e in a["advice"] if e["area"] == "collective"]
    assert e["pattern"] == "b2b" and e["sizes"] == [64]
    # a light collective (1% of MPI time) gets no algorithm advice
    doc = profile(sites=[site("MPI_Bcast", 2000, 4096, 0.01), site("MPI_Send", 10, 8, 0.99)],
                  collectives=[bcast_coll(2, 1000, 4096, [0], 0)])
    a, _ = advice(cli, tmp_path, doc)
    assert "collective-algorithm" not in rules(a)


def test_collective_measured_replay(cli, tmp_path, mpi):
    """A real replay through caracal tune's measurement: the recommendation is the fastest of
    what was measured, and its gain is computed from those medians."""
    lib = {"openmpi": OMPI, "mpich": MPICH}[mpi] if mpi in ("openmpi", "mpich") else pytest.skip("Debian libraries")
    doc = profile(lib=lib, program="/bin/true", sites=[site("MPI_Bcast", 2000, 65536, 0.5)],
                  collectives=[bcast_coll(2, 1000, 65536, [0, 1], 999)])
    prof = write(tmp_path, doc)
    out = tmp_path / "a.json"
    p = cli("advise", prof, "--json", out, timeout=600)
    assert p.returncode == 0, p.stderr
    (e,) = [e for e in json.loads(out.read_text())["advice"] if e["area"] == "collective"]
    assert e["status"] == "measured", e["gain"]
    (m,) = e["measured_sizes"]
    assert m["bytes"] == 65536 and "native" in m["all_us"] and len(m["all_us"]) >= 3
    fastest = min(m["all_us"].values())
    assert m["winner_us"] >= fastest - 1e-9
    assert m["gain_percent"] == round(100 * (1 - m["winner_us"] / m["native_us"]), 1)
    if e["verdict"] == "recommended":  # a winner beats the library's default by tune's margin
        assert m["winner_us"] < m["native_us"] * 0.97
        assert e["env"] and e["commands"]["caracal"].startswith("caracal run -n 2")
    else:
        assert m["winner"] == "native"


# ---- general -------------------------------------------------------------------------
def test_general_rules(cli, tmp_path):
    # imbalance: rank 1 waits 1.9 s longer than rank 0, in the barrier
    doc = profile(time_mpi=[0.1, 2.0], time_total=[4.0, 4.0],
                  sites=[site("MPI_Barrier", 2, 0, 2.0, per_rank_time=[0.05, 1.95]),
                         site("MPI_Send", 10, 8, 0.1, line=30)])
    a, _ = advice(cli, tmp_path, doc)
    (e,) = [e for e in a["advice"] if e["rule"] == "load-imbalance"]
    assert e["sites"][0]["call"] == "MPI_Barrier" and e["details"]["cov"] == pytest.approx(0.905, abs=1e-3)
    assert [x["sites"][0]["call"] for x in a["advice"] if x["rule"] == "dominant-site"] == ["MPI_Barrier"]  # 1.95 of 2.1 s
    # balanced: no imbalance advice
    a, _ = advice(cli, tmp_path, profile(time_mpi=[1.0, 1.05], sites=[site("MPI_Barrier", 2, 0, 2.0)]))
    assert "load-imbalance" not in rules(a)
    # a storm: 10000 messages of 8 bytes per rank, 40% of MPI time; 10 such messages are no storm
    doc = profile(sites=[site("MPI_Send", 20000, 8, 0.8), site("MPI_Recv", 20000, 8, 1.2, line=11)])
    a, _ = advice(cli, tmp_path, doc)
    assert [e["sites"][0]["call"] for e in a["advice"] if e["rule"] == "small-message-storm"] == ["MPI_Send"]
    a, _ = advice(cli, tmp_path, profile(sites=[site("MPI_Send", 10, 8, 0.8), site("MPI_Recv", 10, 8, 1.2)]))
    assert "small-message-storm" not in rules(a)
    # a bcast on MPI_COMM_WORLD with one root, 500 times per rank: nonblocking advice; with two roots none
    doc = profile(sites=[site("MPI_Bcast", 1000, 4096, 0.5)], collectives=[bcast_coll(2, 500, 4096, [0], 0)])
    a, _ = advice(cli, tmp_path, doc)
    (e,) = [e for e in a["advice"] if e["rule"] == "blocking-collective-in-loop"]
    assert "MPI_Ibcast" in e["title"] and e["details"]["calls_per_rank"] == 500
    doc["collectives"] = [bcast_coll(2, 500, 4096, [0, 1], 1)]
    a, _ = advice(cli, tmp_path, doc)
    assert "blocking-collective-in-loop" not in rules(a)


def test_mapping_rule(cli, tmp_path):
    """4 ranks on hosts a, a, b, b; ranks 0-2 and 1-3 exchange everything: the QAP pairs them."""
    n = 4
    doc = profile(nranks=n, sites=[site("MPI_Send", 400, 65536, 1.0, nranks=n)], time_mpi=[1.0] * n,
                  time_total=[10.0] * n)
    heavy = 1 << 26
    doc["traffic"]["bytes"] = [[0, 1, heavy, 1], [1, 0, 1, heavy], [heavy, 1, 0, 1], [1, heavy, 1, 0]]
    src = tmp_path / "topo.in"
    src.write_text(json.dumps({"schema": "caracal.topology-input/1", "hosts": ["a", "a", "b", "b"]}))
    topo = tmp_path / "topo.json"
    cli("nodemap", "--static", src, "--out", topo, check=True)
    a, out = advice(cli, tmp_path, doc, "--topology", topo)
    (e,) = [e for e in a["advice"] if e["area"] == "mapping"]
    assert e["verdict"] == "recommended" and e["status"] == "predicted"
    perm = [int(x) for x in e["suggested"].split()]
    hosts = json.loads(topo.read_text())["ranks"]
    h = [hosts[p]["host"] for p in perm]
    assert h[0] == h[2] and h[1] == h[3] and h[0] != h[1]
    assert (tmp_path / "advice.rankfile").read_text().count("rank ") == n
    # traffic already local: keep
    doc["traffic"]["bytes"] = [[0, heavy, 1, 1], [heavy, 0, 1, 1], [1, 1, 0, heavy], [1, 1, heavy, 0]]
    a, _ = advice(cli, tmp_path, doc, "--topology", topo)
    (e,) = [e for e in a["advice"] if e["area"] == "mapping"]
    assert e["verdict"] == "keep"


# ---- the knobs exist in the installed libraries -----------------------------------------
@pytest.mark.parametrize("name", ["openmpi", "mpich"])
def test_knobs_exist_in_installed_libraries(name):
    if not installed(name):
        pytest.skip(f"{name} is not installed")
    lib = library.identify(OMPI if name == "openmpi" else MPICH)
    checked = 0
    for tr in ("shm", "net"):
        k = library.eager_knob(lib, tr)
        if k.get("read"):  # a knob the library itself lists (not UCX's environment)
            assert library.knob_exists(name, k["knob"]), k["knob"]
            assert library.current_value(lib, k) is not None
            checked += 1
    assert checked >= 1
    # the collective settings the advice gives come from native_tuning.force_env
    from caracal import native_tuning
    alg = native_tuning.native_algorithms(name)["bcast"][0][0]
    for var in native_tuning.force_env(name, "bcast", alg):
        knob = var[len("OMPI_MCA_"):] if var.startswith("OMPI_MCA_") else var
        assert library.knob_exists(name, knob), knob
    assert not library.knob_exists(name, "btl_vader_eager_limitx" if name == "openmpi" else "MPIR_CVAR_NO_SUCH")


# ---- bad input, the report hook ----------------------------------------------------------
@pytest.mark.parametrize("content,words", [
    ("", "empty"),
    ('{"schema": "caracal.profile/1", "nranks": 2, ', "truncated"),
    ('{"schema": "caracal.probe/1"}', "expected \"caracal.profile/1\""),
    ('{"schema": "caracal.profile/1", "nranks": 2}', "invalid profile"),
])
def test_bad_input_is_one_line_exit_2(cli, tmp_path, content, words):
    p = tmp_path / "bad.json"
    p.write_text(content)
    r = cli("advise", p, "--no-measure")
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and lines[0].startswith("caracal advise:"), r.stderr


def test_bad_options(cli, tmp_path):
    prof = write(tmp_path, profile())
    for args, words in ((["--topology", tmp_path / "none.json"], "no such file"),
                        (["--probe", prof], "expected \"caracal.probe/1\"")):
        r = cli("advise", prof, "--no-measure", *args)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and words in r.stderr, r.stderr


def test_report_section_hook():
    doc = profile(lib="SomeVendor MPI 9", time_mpi=[0.1, 2.0], time_total=[4.0, 4.0],
                  sites=[site("MPI_Barrier", 2, 0, 2.0, per_rank_time=[0.05, 1.95])])
    (t,) = adv_mod.report_section(doc)
    assert t.key == "advice" and t.rows and all(r[2] == "FROM THE PROFILE" for r in t.rows)
    assert "general advice only" in t.note


# ---- caracal run --settings, caracal tune-app ----------------------------------------------
def test_run_settings_file(cli, tmp_path, mpi):
    """A settings file reaches every rank (CARACAL_PROFILE_RESOLVE=0: no file/line in the
    profile), and --env wins over it."""
    from conftest import BUILDS
    s = tmp_path / "settings.env"
    s.write_text("# kept by a test\n\nCARACAL_PROFILE_RESOLVE=0\n")
    prog = BUILDS[mpi] / "bin" / "records"
    for extra, resolved in (([], False), (["--env", "CARACAL_PROFILE_RESOLVE=1"], True)):
        out = tmp_path / f"p{int(resolved)}.json"
        cli("run", "--mpi", mpi, "-n", 2, "--settings", s, "--profile", out, *extra, "--", prog, "-n", 5, check=True)
        sites = json.loads(out.read_text())["callsites"]
        assert any(x["file"] for x in sites) == resolved
    s.write_text("OK=1\nnot a setting\n")
    r = cli("run", "--mpi", mpi, "-n", 2, "--settings", s, "--", prog)
    assert r.returncode == 2 and "line 2 is not NAME=VALUE" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_tune_app_loop(cli, tmp_path, mpi):
    """The loop on records with 128 KiB records: the eager setting is tried alone in the
    program, interleaved with the baseline; the kept settings are exactly the winning
    variant's (or none), and every verdict follows from the recorded times."""
    import statistics
    from conftest import BUILDS
    out = tmp_path / "ta"
    p = cli("tune-app", "--mpi", mpi, "-n", 2, "--repeats", 3, "--out", out, "--",
            BUILDS[mpi] / "bin" / "records", "-n", 20, timeout=600)
    assert p.returncode == 0, p.stderr
    doc = json.loads((out / "tune-app.json").read_text())
    assert "A1" in doc["variants"] and any("eager" in k.lower() or "CELL_SIZE" in k for k in doc["variants"]["A1"])
    base = doc["times"]["baseline"]
    assert len(base) == 3
    for name, r in doc["results"].items():
        t = doc["times"][name]
        assert len(t) == 3 and r["suggested"] == round(statistics.median(t), 5)
        assert r["gain_percent"] == round(100 * (1 - statistics.median(t) / statistics.median(base)), 1)
    env = dict(line.split("=", 1) for line in (out / "settings.env").read_text().splitlines()
               if line and not line.startswith("#"))
    if doc["kept"]:
        assert doc["results"][doc["kept"]]["wins"] and env == doc["variants"][doc["kept"]]
    else:
        assert env == {} and not any(r["wins"] for r in doc["results"].values())
    assert "dropped" in (out / "tune-app.md").read_text() or doc["kept"]
    r = cli("tune-app", "--mpi", mpi, "--out", out, "--", BUILDS[mpi] / "bin" / "records")
    assert r.returncode == 2 and "exists" in r.stderr


def test_html_page(cli, tmp_path):
    doc = profile(lib="Vendor <b>MPI</b>", time_mpi=[0.1, 2.0], time_total=[4.0, 4.0],
                  sites=[site("MPI_Barrier", 2, 0, 2.0, per_rank_time=[0.05, 1.95])])
    prof = write(tmp_path, doc)
    out = tmp_path / "a.html"
    cli("advise", prof, "--no-measure", "--html", out, check=True)
    page = out.read_text()
    assert "<b>MPI</b>" not in page and "&lt;b&gt;MPI&lt;/b&gt;" in page  # escaped
    assert page.count("<h3>[A") == 2 and "load imbalance" in page  # imbalance + dominant site


@pytest.mark.skipif(not shutil.which("ompi_info"), reason="Open MPI is not installed")
def test_probe_evidence(cli, tmp_path):
    """--probe: the probe's latencies at the measured sizes on either side of the advised size."""
    pr = tmp_path / "probe.json"
    pts = [{"size": s, "latency_us_median": float(s) / 1000} for s in (4096, 65536, 262144)]
    pr.write_text(json.dumps({"schema": "caracal.probe/1", "mode": "pingpong", "mpi_library": OMPI, "points": pts}))
    a, out = advice(cli, tmp_path, profile(sites=[site("MPI_Send", 1000, 131072, 0.5)]), "--probe", pr)
    (e,) = [e for e in a["advice"] if e["area"] == "p2p"]
    assert [p["size"] for p in e["probe"]["points"]] == [65536, 262144]
    assert "probe: 65536 bytes take 65.536 us" in out
