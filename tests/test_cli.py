"""The CLI as a whole: every command documents itself with examples, and errors are one line."""

from __future__ import annotations

import pytest
from conftest import REPO
from typer.testing import CliRunner

from forensics.cli import app

COMMANDS = ("demo", "run", "ingest", "analyze", "report", "notify", "sample", "capacity")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_an_example(runner: CliRunner, command: str) -> None:
    result = runner.invoke(app, [command, "--help"], terminal_width=200)
    assert result.exit_code == 0
    assert "Example" in result.output
    assert f"forensics {command}" in result.output


def test_a_missing_case_file_is_one_line_on_stderr_and_exit_2(runner: CliRunner, tmp_path) -> None:
    missing = tmp_path / "nope.toml"
    result = runner.invoke(app, ["run", str(missing), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert lines == [f"error: {missing}: case file not found; give the path of an incident.toml"]
    assert "Traceback" not in result.stderr


def test_analyze_without_a_database_says_how_to_load_one(runner: CliRunner, tmp_path) -> None:
    case = tmp_path / "incident.toml"
    case.write_text(
        'name = "x"\nmodels = ["m"]\ncontext_window = 10\n'
        '[window]\nstart = "2026-01-01T00:00:00Z"\nend = "2026-01-02T00:00:00Z"\n',
        encoding="utf-8",
    )
    db = tmp_path / "case.duckdb"
    result = runner.invoke(app, ["analyze", str(case), "--db", str(db), "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "forensics ingest" in result.stderr
    assert not db.exists()


def test_memory_limit_help_states_the_engine_default(runner: CliRunner) -> None:
    from forensics.engines import DEFAULT_MEMORY_LIMIT

    result = runner.invoke(app, ["analyze", "--help"], terminal_width=200)
    words = " ".join(w for w in result.output.split() if w != "│")  # help wraps in a box
    assert f"default {DEFAULT_MEMORY_LIMIT};" in words


def _pyproject_version() -> str:
    import tomllib

    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_names_the_toolkit_and_duckdb(runner: CliRunner, flag: str) -> None:
    import duckdb

    result = runner.invoke(app, [flag])
    assert result.exit_code == 0
    assert result.stdout == f"kv-forensics {_pyproject_version()} (DuckDB {duckdb.__version__})\n"


def test_the_library_reads_its_version_from_pyproject() -> None:
    import forensics

    assert forensics.__version__ == _pyproject_version()
    assert forensics.versions()["version"] == _pyproject_version()


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_dash_h_is_help(runner: CliRunner, command: str | None) -> None:
    args = [command] if command else []
    short = runner.invoke(app, [*args, "-h"], terminal_width=120)
    long = runner.invoke(app, [*args, "--help"], terminal_width=120)
    assert short.exit_code == long.exit_code == 0
    assert short.stdout == long.stdout
