"""caracal advise on Intel MPI profiles: eager advice with its shared-memory eager threshold, no eager
knob of its own between hosts in 2021 (and I_MPI_EAGER_THRESHOLD for 2019, unverified),
collective advice as I_MPI_ADJUST_<COLL>=N from a measurement, and every knob the advice
names checked against the installed Intel MPI's impi_info (skipped where it is not installed)."""
import json
import re
import subprocess

import pytest

from caracal import impi_tuning, mpilibs
from caracal.advise import collective, library
from test_advise import advice, bcast_coll, profile, site

IMPI = "Intel(R) MPI Library 2021.19 for Linux* OS"
IMPI_2019 = "Intel(R) MPI Library 2019 Update 12 for Linux* OS"


def impi_installed():
    return mpilibs.get("impi").installed() and impi_tuning.is_impi("impi")


def impi_info_table():
    """impi_info -e as the library prints it, parsed here independently of impi_tuning."""
    lib = mpilibs.get("impi")
    out = subprocess.run([str(lib.prefix / "bin" / "impi_info"), "-e"], capture_output=True, text=True,
                         env=lib.environment(), timeout=60).stdout
    return dict(re.findall(r"^\s*\|\s*(I_MPI_\w+)\s*\|\s*(.*?)\s*\|", out, re.M))


def test_eager_impi_one_host(cli, tmp_path):
    """128 KiB sends on one host: the shared-memory eager threshold must cover 131072 + 256
    bytes of header room, rounded up to 4 KiB: 135168."""
    doc = profile(lib=IMPI, sites=[site("MPI_Send", 1000, 131072, 0.5)])
    a, out = advice(cli, tmp_path, doc)
    (e,) = [e for e in a["advice"] if e["area"] == "p2p"]
    assert e["knob"] == "I_MPI_SHM_EAGER_THRESHOLD" and e["suggested"] == "135168"
    assert e["env"] == {"I_MPI_SHM_EAGER_THRESHOLD": "135168"} and e["transport"] == "shm"
    assert a["library"]["kind"] == "impi" and a["library"]["version"] == "2021.19"
    if impi_installed():  # impi_info's default is "not defined": the library chooses
        assert a["library"]["installed"] == "impi" and e["status"] == "unmeasured"
        assert e["current"] is None and "from not defined (Intel MPI chooses)" in e["title"]
        assert e["commands"]["mpiexec"] == "mpiexec -n 2 -genv I_MPI_SHM_EAGER_THRESHOLD 135168 /nonexistent/app"
        assert " --mpi impi " in e["commands"]["caracal"]
    else:
        assert e["status"] == "unverified"


def test_eager_impi_between_hosts(cli, tmp_path):
    """Between hosts Intel MPI 2021 has no eager threshold of its own: no protocol advice, and
    a note that says why; Intel MPI 2019's documented I_MPI_EAGER_THRESHOLD (262144) is
    advised only for messages above it, unverified (2019 is not installed here)."""
    doc = profile(lib=IMPI, hosts=["a", "b"], sites=[site("MPI_Send", 1000, 131072, 0.5)])
    a, _ = advice(cli, tmp_path, doc)
    assert not [e for e in a["advice"] if e["area"] == "p2p"]
    assert any("no eager threshold of its own" in n for n in a["notes"])
    doc = profile(lib=IMPI_2019, hosts=["a", "b"], sites=[site("MPI_Send", 1000, 131072, 0.5)])
    a, _ = advice(cli, tmp_path, doc)
    assert not [e for e in a["advice"] if e["area"] == "p2p"]  # 131072 < 262144: already eager
    doc = profile(lib=IMPI_2019, hosts=["a", "b"], sites=[site("MPI_Send", 1000, 524288, 0.5)])
    a, _ = advice(cli, tmp_path, doc)
    (e,) = [e for e in a["advice"] if e["area"] == "p2p"]
    assert e["knob"] == "I_MPI_EAGER_THRESHOLD" and e["suggested"] == str(524288 + 4096)
    assert e["status"] == "unverified" and a["library"]["installed"] is None


def _rows(fam, native_us, algs):
    """caracal tune's analysed row for one size: the default, one Caracal candidate, the sweep."""
    return [{"ranks": 2, "coll": fam, "bytes": 3072, "native_us": native_us, "native_p25_us": native_us,
             "native_p75_us": native_us, "winner": "native", "best_us": native_us * 1.1,
             "all": {"native": native_us, "nary:2": native_us * 1.1},
             "native_algs_us": algs, "native_alg": min(algs, key=algs.get), "native_alg_us": min(algs.values())}]


def test_collective_advice_is_an_adjust_preset():
    """A forced preset that won the replay becomes I_MPI_ADJUST_<COLL>=N, named as the 2021
    reference names it; the gain is the measured one."""
    lib = library.LibraryInfo("impi", "2021.19", IMPI, "impi")
    e = {"collective": "bcast", "pattern": "barrier", "title": "MPI_Bcast"}
    collective.apply_measurement(e, lib, _rows("bcast", 2.0, {"preset1": 1.9, "preset7": 1.0, "preset21": 1.5}))
    assert e["env"] == {"I_MPI_ADJUST_BCAST": "7"} and not e["under_caracal"]
    assert e["suggested"] == "I_MPI_ADJUST_BCAST=7 (Shumilin's)"
    assert e["gain"]["gain_percent"] == 50.0 and e["gain"]["wins"]
    e = {"collective": "allreduce", "pattern": "b2b", "title": "MPI_Allreduce"}
    collective.apply_measurement(e, lib, _rows("allreduce", 2.0, {"preset30": 1.0, "preset2": 1.9}))
    assert e["env"] == {"I_MPI_ADJUST_ALLREDUCE": "30"} and "preset 30 (undocumented)" in e["suggested"]


def test_collective_advice_commands_impi(cli, tmp_path):
    """Collective advice on an Intel MPI profile: the replay plan is the same as any library's;
    unmeasured (--no-measure) it carries no setting."""
    doc = profile(lib=IMPI, sites=[site("MPI_Bcast", 2000, 3072, 0.5)], collectives=[bcast_coll(2, 1000, 3072, [0, 1], 1)])
    a, _ = advice(cli, tmp_path, doc)
    (e,) = [e for e in a["advice"] if e["area"] == "collective"]
    assert e["collective"] == "bcast" and e["sizes"] == [3072] and e["pattern"] == "barrier" and "env" not in e


@pytest.mark.skipif(not impi_installed(), reason="Intel MPI is not installed (.mpi/impi)")
def test_impi_knobs_exist_in_installed_library():
    """Every knob the Intel MPI advice can give is one the installed library lists, and every
    preset of the 2021 reference is one it accepts; I_MPI_EAGER_THRESHOLD is not listed (which
    is why there is no 2021 eager advice between hosts)."""
    table = impi_info_table()
    lib = library.identify(IMPI)
    k = library.eager_knob(lib, "shm")
    assert k["knob"] in table and library.knob_exists("impi", k["knob"])
    assert library.knob_exists("impi", "I_MPI_SHM_CELL_FWD_SIZE") and "I_MPI_EAGER_THRESHOLD" not in table
    assert not library.knob_exists("impi", "I_MPI_NO_SUCH_KNOB")
    algs = impi_tuning.native_algorithms("impi")
    for coll, names in impi_tuning.DOCUMENTED.items():
        var = impi_tuning.adjust_var(coll)
        assert var in table and library.knob_exists("impi", var), var
        lo, hi = impi_tuning.preset_range("impi", coll)
        assert lo == 0 and hi >= len(names), (coll, hi, len(names))
        assert [n for n, _ in algs[coll]] == list(range(1, hi + 1))


@pytest.mark.skipif(not impi_installed(), reason="Intel MPI is not installed (.mpi/impi)")
def test_impi_measured_replay_forces_every_preset(cli, tmp_path):
    """A real replay on Intel MPI (MPI_Scan: 3 presets in 2021.19): every preset of the
    installed range is measured in a launch of its own with I_MPI_ADJUST_SCAN=N, and the
    recommendation is the fastest of what was measured, with its exact setting."""
    from test_advise import write
    lo, hi = impi_tuning.preset_range("impi", "scan")
    doc = profile(lib=IMPI, program="/bin/true", sites=[site("MPI_Scan", 2000, 64, 0.5)],
                  collectives=[{"call": "MPI_Scan", "comm_size": 2, "count": 1000, "bytes": 128000, "roots": {},
                                "root_changes": 0, "calls": 2000, "root_calls": {}, "root_change_calls": 0}])
    out = tmp_path / "a.json"
    p = cli("advise", write(tmp_path, doc), "--json", out, timeout=600)
    assert p.returncode == 0, p.stderr
    (e,) = [e for e in json.loads(out.read_text())["advice"] if e["area"] == "collective"]
    assert e["status"] == "measured", e["gain"]
    (m,) = e["measured_sizes"]
    assert {f"native preset{n}" for n in range(1, hi + 1)} <= set(m["all_us"]), m["all_us"]
    assert m["winner_us"] >= min(m["all_us"].values()) - 1e-9
    if e["verdict"] == "recommended" and m["winner"].startswith("native preset"):
        n = int(m["winner"][len("native preset"):])
        assert e["env"] == {"I_MPI_ADJUST_SCAN": str(n)} and impi_tuning.preset_name("scan", n) in e["suggested"]
        assert e["commands"]["mpiexec"].startswith(f"mpiexec -n 2 -genv I_MPI_ADJUST_SCAN {n} ")
    elif e["verdict"] == "recommended":
        assert e["env"] == {"CARACAL_SCAN": m["winner"]}
    else:
        assert m["winner"] == "native" and "env" not in e
