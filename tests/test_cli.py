"""The CLI as a whole: every command documents itself with examples, and errors are one line."""

from __future__ import annotations

import pytest
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
