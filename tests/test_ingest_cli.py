"""`forensics ingest` through Typer's runner: bad input is one line and a database unchanged."""

from __future__ import annotations

import gzip
from pathlib import Path

import duckdb
import pytest
from conftest import messages
from dbrows import write_parquet

from forensics.cli import app

FIX = Path(__file__).parent / "fixtures" / "ingest"


def _state(db: Path) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(
            "SELECT (SELECT count(*) FROM requests), (SELECT count(*) FROM quarantine), "
            "(SELECT count(*) FROM inputs)"
        ).fetchall()
    finally:
        con.close()


@pytest.fixture
def db(tmp_path, runner) -> Path:
    """A case database already holding canonical.csv (2 loaded, 4 quarantined, 1 input)."""
    path = tmp_path / "case.duckdb"
    result = runner.invoke(
        app, ["ingest", str(FIX / "canonical.csv"), "--db", str(path), "--profile", "canonical"]
    )
    assert result.exit_code == 0, result.output
    assert _state(path) == [(2, 4, 1)]
    return path


def test_ingest_command_prints_the_summary_table(runner, tmp_path):
    result = runner.invoke(
        app,
        [
            "ingest",
            str(FIX / "gateway.jsonl.gz"),
            "--db",
            str(tmp_path / "g.duckdb"),
            "--mapping",
            str(FIX / "gateway.mapping.toml"),
        ],
    )
    assert result.exit_code == 0
    total = next(line for line in result.stdout.splitlines() if line.startswith("total"))
    assert total.split() == ["total", "13", "4", "2", "7"]


def test_ingest_table_shows_a_path_with_brackets_as_written(runner, tmp_path):
    folder = tmp_path / "[red]logs"
    folder.mkdir()
    log = folder / "[b]g.csv"
    log.write_bytes((FIX / "canonical.csv").read_bytes())
    result = runner.invoke(
        app,
        ["ingest", str(log), "--db", str(tmp_path / "g.duckdb"), "--profile", "canonical"],
        terminal_width=400,
    )
    assert result.exit_code == 0, result.output
    assert "[red]logs/[b]g.csv" in result.stdout


@pytest.mark.parametrize("columns", [None, "40", "400"])
def test_piped_ingest_output_keeps_each_path_on_one_line_whatever_the_terminal(
    runner, tmp_path, monkeypatch, columns
):
    # a long path, as Rich would fold it in a table 40 or 80 columns wide
    folder = tmp_path / ("a-folder-with-a-long-name-" * 4)
    folder.mkdir()
    log = folder / "gateway-export-2026-08-27.csv"
    log.write_bytes((FIX / "canonical.csv").read_bytes())
    monkeypatch.setenv("TERM", "xterm")
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    result = runner.invoke(
        app, ["ingest", str(log), "--db", str(tmp_path / "g.duckdb"), "--profile", "canonical"]
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    # canonical.csv: 7 records read, 2 loaded, 1 duplicate, 4 quarantined
    row = next(line for line in lines if line.startswith(str(log)))
    assert row[len(str(log)) :].split() == ["7", "2", "1", "4"]
    assert next(line for line in lines if line.startswith("total")).split() == [
        "total",
        "7",
        "2",
        "1",
        "4",
    ]


def _bad(runner, db: Path, args: list[str]) -> str:
    result = runner.invoke(app, ["ingest", *args, "--db", str(db)])
    assert result.exit_code != 0
    lines = messages(result.stderr)
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    assert _state(db) == [(2, 4, 1)]
    return lines[0]


def test_missing_file(runner, db, tmp_path):
    line = _bad(runner, db, [str(tmp_path / "nope.jsonl"), "--profile", "canonical"])
    assert "nope.jsonl" in line and "not found" in line


def test_running_out_of_memory_names_the_file_and_the_limit_not_the_mapping(runner, db, tmp_path):
    # one row group of 300,000 uncompressed 64-character ids (19 MiB): a 16 MB limit cannot
    # hold it while it is read
    log = tmp_path / "big.parquet"
    write_parquet(
        log,
        "SELECT md5(range::VARCHAR) || md5((range * 7)::VARCHAR) AS request_id, "
        "TIMESTAMPTZ '2026-08-27 10:00:00+00' AS ts, 'a' AS account_id, 'm' AS model, "
        "5 AS prompt_tokens FROM range(300000)",
        "ROW_GROUP_SIZE 1000000, COMPRESSION uncompressed",
    )
    result = runner.invoke(
        app,
        ["ingest", str(log), "--profile", "canonical", "--db", str(db), "--memory-limit", "16MB"],
    )
    assert result.exit_code == 4, result.output  # the system's resource, not bad input
    (line,) = messages(result.stderr)
    assert line.startswith(f"error: {log}: DuckDB ran out of memory ("), line
    assert "raise --memory-limit" in line and "row group" in line and "mapping" not in line
    assert _state(db) == [(2, 4, 1)]


def test_unknown_profile_is_a_usage_error_naming_the_choices(runner, db):
    result = runner.invoke(
        app, ["ingest", str(FIX / "canonical.jsonl"), "--profile", "splunk", "--db", str(db)]
    )
    assert result.exit_code == 2
    assert "Usage: " in result.stderr and "Traceback" not in result.output
    words = " ".join(w for w in result.stderr.split() if w != "│")  # the error box's sides
    assert "splunk" in words and "'canonical', 'openai', 'sglang'" in words
    assert _state(db) == [(2, 4, 1)]


def test_mapping_with_unknown_field(runner, db, tmp_path):
    mapping = tmp_path / "bad.mapping.toml"
    mapping.write_text('[fields]\nts = "ts"\nrequest = "id"\n')
    line = _bad(runner, db, [str(FIX / "canonical.jsonl"), "--mapping", str(mapping)])
    assert f"{mapping}:3" in line and "request" in line


def test_mapping_with_a_statement_in_sql_is_refused_before_anything_runs(runner, db, tmp_path):
    target = tmp_path / "pwned.csv"
    mapping = tmp_path / "bad.mapping.toml"
    mapping.write_text(
        '[fields]\nts = "ts"\naccount_id = "account_id"\nmodel = "model"\n'
        'prompt_tokens = "prompt_tokens"\n'
        f"ts_end = {{ sql = \"1); COPY (SELECT 42) TO '{target}'; SELECT (1\" }}\n"
    )
    log = tmp_path / "new.csv"
    log.write_text((FIX / "canonical.csv").read_text() + "r9,2026-08-27T10:00:00Z,a9,m,1,1,,,,\n")
    line = _bad(runner, db, [str(log), "--mapping", str(mapping)])
    assert line.startswith(f"error: {mapping}:6 (fields.ts_end): sql "), line
    assert not target.exists()


def test_mapping_field_pointing_at_a_missing_column(runner, db, tmp_path):
    mapping = tmp_path / "bad.mapping.toml"
    mapping.write_text(
        '[fields]\nts = "ts"\naccount_id = "customer"\nmodel = "model"\n'
        'prompt_tokens = "prompt_tokens"\n'
    )
    line = _bad(runner, db, [str(FIX / "canonical.jsonl"), "--mapping", str(mapping)])
    assert f"{mapping}:3" in line and "customer" in line and "canonical.jsonl" in line


def test_unreadable_gzip(runner, db, tmp_path):
    log = tmp_path / "broken.jsonl.gz"
    log.write_bytes(b"this is not gzip data\n")
    line = _bad(runner, db, [str(log), "--profile", "canonical"])
    assert "broken.jsonl.gz" in line and "gzip" in line


def test_empty_file(runner, db, tmp_path):
    log = tmp_path / "empty.jsonl"
    log.write_bytes(b"")
    line = _bad(runner, db, [str(log), "--profile", "canonical"])
    assert "empty.jsonl" in line and "empty" in line


def test_empty_gzip(runner, db, tmp_path):
    log = tmp_path / "empty.jsonl.gz"
    log.write_bytes(gzip.compress(b""))
    line = _bad(runner, db, [str(log), "--profile", "canonical"])
    assert "empty.jsonl.gz" in line and "empty" in line


def test_bad_second_input_leaves_the_first_unloaded(runner, db, tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    line = _bad(runner, db, [str(FIX / "canonical.jsonl"), str(empty), "--profile", "canonical"])
    assert "empty.csv" in line


def test_truncated_gzip_warns_on_stderr(runner, tmp_path):
    data = gzip.compress((FIX / "canonical.jsonl").read_bytes())
    log = tmp_path / "cut.jsonl.gz"
    log.write_bytes(data + gzip.compress(b'{"x": 1}\n' * 40)[:12])
    result = runner.invoke(
        app, ["ingest", str(log), "--db", str(tmp_path / "c.duckdb"), "--profile", "canonical"]
    )
    assert result.exit_code == 0
    assert "warning:" in result.stderr and "truncated gzip" in result.stderr
