"""The CLI as a whole: every command documents itself with examples, and errors are one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO
from typer.testing import CliRunner

from forensics.cli import app
from forensics.errors import EXIT_CODES

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


# --- conventions: usage lines, flags, choices, exit codes, completion -------------------------

WIDE = {"COLUMNS": "200"}  # Rich draws help this wide, whatever terminal runs the test
USAGE = {
    "ingest": "forensics ingest [OPTIONS] LOGS...",
    "analyze": "forensics analyze [OPTIONS] CASE",
    "report": "forensics report [OPTIONS] CASE",
    "notify": "forensics notify [OPTIONS] CASE",
    "run": "forensics run [OPTIONS] CASE",
    "demo": "forensics demo [OPTIONS]",
    "sample": "forensics sample [OPTIONS]",
    "capacity": "forensics capacity [OPTIONS] LOGS...",
}


def _help(runner: CliRunner, *args: str) -> str:
    result = runner.invoke(app, [*args, "--help"], env=WIDE, prog_name="forensics")
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_usage_line_names_arguments_in_capitals(runner: CliRunner, command: str) -> None:
    lines = [line.strip() for line in _help(runner, command).splitlines()]
    assert f"Usage: {USAGE[command]}" in lines


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_flags_take_no_value_in_help(runner: CliRunner, command: str | None) -> None:
    text = _help(runner, *([command] if command else []))
    assert "<bool>" not in text
    assert "<list[str]>" not in text


@pytest.mark.parametrize(
    ("command", "choices"),
    [
        ("run", "duckdb|spark"),
        ("analyze", "duckdb|spark"),
        ("report", "duckdb|spark"),
        ("notify", "duckdb|spark"),
        ("ingest", "canonical|openai|sglang"),
        ("ingest", "prefill|decode"),
        ("capacity", "prefill|decode"),
        ("sample", "parquet|jsonl"),
    ],
)
def test_help_lists_the_choices_of_an_option(runner: CliRunner, command: str, choices: str) -> None:
    assert choices in _help(runner, command)


def test_the_choices_are_the_librarys_own() -> None:
    from forensics import cli, engines
    from forensics.mapping import PROFILES
    from forensics.schema import ROLES
    from forensics.synth.sample import FORMATS

    assert [e.value for e in cli.Engine] == list(engines.KINDS)
    assert tuple(p.value for p in cli.Profile) == PROFILES
    assert tuple(r.value for r in cli.Role) == ROLES
    assert tuple(f.value for f in cli.SampleFormat) == FORMATS


def test_an_unknown_choice_is_a_usage_error_naming_the_choices(runner: CliRunner) -> None:
    result = runner.invoke(app, ["run", "x.toml", "--out", "o", "--engine", "sqlite"])
    assert result.exit_code == 2
    assert "sqlite" in result.stderr and "duckdb" in result.stderr and "spark" in result.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_each_commands_help_names_its_exit_codes(runner: CliRunner, command: str) -> None:
    words = " ".join(w for w in _help(runner, command).split() if w != "│")
    assert "Exit codes: 0 success; 1 internal error" in words
    assert f"2 {EXIT_CODES[2]}" in words and f"4 {EXIT_CODES[4]}" in words


@pytest.mark.parametrize("command", ["analyze", "report", "notify"])
def test_commands_that_read_an_analysis_name_exit_3(runner: CliRunner, command: str) -> None:
    words = " ".join(w for w in _help(runner, command).split() if w != "│")
    assert "; 3 the case database" in words


@pytest.mark.parametrize(
    ("words", "cword", "expected"),
    [
        ("forensics an", "1", ["analyze"]),
        ("forensics run incident.toml --engine ", "4", ["duckdb", "spark"]),
        (
            "forensics ingest x.jsonl --profile ",
            "4",
            ["canonical", "openai", "sglang", "vllm", "trtllm"],
        ),
    ],
)
def test_shell_completion_completes_commands_and_choices(
    runner: CliRunner, words: str, cword: str, expected: list[str]
) -> None:
    env = {"_FORENSICS_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": cword}
    result = runner.invoke(app, [], env=env, prog_name="forensics")
    assert result.exit_code == 0
    assert result.stdout.split() == expected


def test_help_offers_to_install_shell_completion(runner: CliRunner) -> None:
    assert "--install-completion" in _help(runner)


# --- hints that say what is actually wrong ----------------------------------------------------


def _case(folder: Path, body: str = "") -> Path:
    case = folder / "incident.toml"
    case.write_text(
        'name = "x"\nmodels = ["m"]\ncontext_window = 100\n'
        '[window]\nstart = "2026-01-01T00:00:00Z"\nend = "2026-01-02T00:00:00Z"\n' + body,
        encoding="utf-8",
    )
    return case


def test_a_missing_mapping_named_by_the_case_file_names_the_case_file_and_key(
    runner: CliRunner, tmp_path: Path
) -> None:
    case = _case(tmp_path, '[[source]]\npath = "log.csv"\nmapping = "gone.mapping.toml"\n')
    result = runner.invoke(app, ["run", str(case), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    # the mapping key is on line 9 of the case file
    assert line.startswith(f"error: {case}:9: source[1].mapping: mapping file not found: ")
    assert "gone.mapping.toml" in line and "case file" in line and "--mapping" not in line


@pytest.mark.parametrize("command", ["run", "analyze", "notify", "report"])
def test_out_naming_a_file_says_it_is_a_file(runner: CliRunner, tmp_path: Path, command) -> None:
    case = _case(tmp_path, '[[source]]\npath = "log.csv"\nprofile = "canonical"\n')
    target = tmp_path / "results.txt"
    target.write_text("not a folder\n")
    db = ["--db", str(tmp_path / "case.duckdb")] if command != "run" else []
    result = runner.invoke(app, [command, str(case), *db, "--out", str(target)])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line == (
        f"error: {target}: the output folder is a file; give --out a folder (it is made when "
        "missing), not a file"
    )
    assert target.read_text() == "not a folder\n"


def test_sql_of_the_wrong_type_says_to_cast_not_to_pick_other_columns(
    runner: CliRunner, tmp_path: Path
) -> None:
    log = tmp_path / "trace.csv"
    log.write_text("timestamp,input_length\n0,10\n1000,20\n")
    mapping = tmp_path / "trace.mapping.toml"
    mapping.write_text(
        'format = "csv"\n[fields]\nts = { sql = "epoch_ms(timestamp + 1767225600000)" }\n'
        'account_id = { const = "t" }\nmodel = { const = "m" }\nprompt_tokens = "input_length"\n'
    )
    result = runner.invoke(
        app, ["ingest", str(log), "--db", str(tmp_path / "t.duckdb"), "--mapping", str(mapping)]
    )
    assert result.exit_code == 2
    line = next(ln for ln in result.stderr.splitlines() if ln.startswith("error:"))
    assert line.startswith(f"error: {mapping}:3 (fields.ts): sql of fields.ts does not type-check")
    assert "timestamp VARCHAR, input_length VARCHAR" in line and "CAST(" in line
    assert "[timestamp] unit and origin" in line
    assert "refer only to" not in line


def test_python_dash_m_runs_the_command() -> None:
    import subprocess
    import sys

    import duckdb

    proc = subprocess.run(
        [sys.executable, "-m", "forensics.cli", "--version"],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"kv-forensics {_pyproject_version()} (DuckDB {duckdb.__version__})\n"
