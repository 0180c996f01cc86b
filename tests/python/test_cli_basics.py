"""The CLI's basic contract: help teaches, bad input is one line and exit 2."""


def test_help_lists_commands(cli):
    p = cli("--help")
    assert p.returncode == 0
    for cmd in ("run", "report", "info"):
        assert cmd in p.stdout


def test_unknown_option_is_one_line_exit_2(cli):
    p = cli("run", "--no-such-option", "x")
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1


def test_program_not_found(cli, tmp_path):
    p = cli("run", "-n", "1", "--profile", tmp_path / "p.json", "--", tmp_path / "nope")
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [f"caracal run: program not found: {tmp_path / 'nope'}"]


def test_info_lists_settings(cli):
    p = cli("info", "--json", check=True)
    assert '"CARACAL_PROFILE"' in p.stdout


def test_existing_profile_not_overwritten(cli, tmp_path):
    out = tmp_path / "mine.json"
    out.write_text("precious")
    p = cli("run", "-n", "1", "--profile", out, "--", "/bin/true")
    assert p.returncode == 2
    assert out.read_text() == "precious"
