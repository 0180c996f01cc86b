"""rich draws only on a terminal: a report or a progress bar written to a pipe is plain text
(what scripts, CI logs and the other tests read), and on a terminal (a pseudo-terminal here)
the same values are there, whole, even where the table is wider than the terminal. A missing
Python dependency is one line and exit 2, not a traceback."""
import io
import json
import os
import pty
import re
import subprocess
import sys

from caracal import report_tables, report_text
from caracal.progress import ProgressBar
from conftest import ROOT

GOOD = ROOT / "tests" / "python" / "data" / "profile-4ranks.json"
ESC = "\x1b"


def on_a_terminal(args, columns=80):
    """stdout and stderr of `python ARGS` on a pseudo-terminal; returns what it printed."""
    master, slave = pty.openpty()
    env = dict(os.environ, COLUMNS=str(columns), TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    p = subprocess.Popen([sys.executable, *args], stdout=slave, stderr=slave, stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the other side is closed
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert p.wait(timeout=60) == 0, out.decode(errors="replace")
    return out.decode()


def plain(text):
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def test_report_to_a_pipe_is_the_plain_rendering(cli):
    p = cli("report", GOOD, check=True)
    rep = report_tables.build(json.loads(GOOD.read_text()), str(GOOD))
    assert p.stdout == report_text.render(rep)
    assert ESC not in p.stdout and ESC not in p.stderr
    # plain columns: a row is the values separated by spaces, nothing drawn around them
    assert re.search(r"^MPI_Bcast\s+2,048\s+1\.20 s\s+49\.8\s+14\.2\s", p.stdout, re.M)


def test_report_on_a_terminal_is_drawn_by_rich_and_cuts_nothing():
    out = on_a_terminal(["-m", "caracal", "report", str(GOOD)], columns=80)
    assert ESC in out  # decorated
    text = plain(out)
    assert "…" not in text
    # the widest table (call sites, > 80 columns) keeps every cell whole
    for cell in ("src/halo/exchange.c:131", "exchange_halo", "4.69 MiB", "examples/asp.c:187"):
        assert cell in text, cell
    assert re.search(r"^\s*3\s+node2\s+2\.15 s\s+830 ms\s+38\.6\s*$", text, re.M)


def test_progress_bar_is_silent_off_a_terminal():
    s = io.StringIO()
    bar = ProgressBar(3, "probe", stream=s)
    with bar:
        for _ in range(3):
            bar.clear()
            bar.step()
    assert s.getvalue() == "" and bar.done == 3


def test_progress_bar_on_a_terminal_counts_and_estimates():
    script = ("import sys, time\n"
              "from caracal.progress import ProgressBar\n"
              "bar = ProgressBar(3, 'measuring')\n"
              "with bar:\n"
              "    for i in range(3):\n"
              "        time.sleep(0.2); bar.clear(); print('row', i, flush=True); bar.step()\n")
    out = plain(on_a_terminal(["-c", script]))
    assert "measuring" in out and "3/3" in out and "left" in out
    assert [ln for ln in out.replace("\r", "\n").splitlines() if ln.startswith("row")] == ["row 0", "row 1", "row 2"]


def test_a_missing_dependency_is_one_line_and_exit_2():
    # the interpreter cannot import jsonschema (as a bare python3 running an installed CLI)
    code = ("import sys; sys.modules['jsonschema'] = None\n"
            "from caracal.cli import main; sys.exit(main(['report', sys.argv[1]]))")
    p = subprocess.run([sys.executable, "-c", code, str(GOOD)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("caracal report: needs the Python package jsonschema"), p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
