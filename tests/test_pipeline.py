"""`forensics run / analyze / notify` end to end on the fixture case, through the CLI.

The golden files under case_small/expected/ were reviewed by hand against the derivation in
case_small/README.md. summary.json's `classification` block belongs to forensics.classify and
is left out of the golden comparison, as is `tool` (the versions of the install running the
test, checked against pyproject.toml and DuckDB on their own).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from case_small_db import CASE_DIR, CASE_FILE
from conftest import REPO

from forensics.cli import app

EXPECTED = CASE_DIR / "expected"
SPEC_SUMMARY_KEYS = {
    "exposure_count",
    "affected_accounts",
    "excluded_by_reason",
    "bands",
    "verdict",
    "flagged_accounts",
    "ingest",
    "inputs",
    "data_owners",
}
OUTPUTS = (
    "summary.json",
    "exposed_requests.csv",
    "blast_radius.csv",
    "notify/recipients.csv",
    "notify/data_owners.csv",
    "notify/excluded.csv",
    "notify/README.md",
    "notify/notices/index.csv",  # every notice's sha256
    "notify/regulator_summary.md",
)


def _run(runner, out: Path, *extra: str):
    result = runner.invoke(app, ["run", str(CASE_FILE), "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def run_out(tmp_path_factory) -> Path:
    from typer.testing import CliRunner

    out = tmp_path_factory.mktemp("run")
    _run(CliRunner(), out)
    return out


def test_run_writes_every_output_and_the_case_database(run_out):
    for name in (*OUTPUTS, "case.duckdb"):
        assert (run_out / name).is_file(), name


@pytest.mark.parametrize(
    "name",
    [
        "exposed_requests.csv",
        "blast_radius.csv",
        "recipients.csv",
        "data_owners.csv",
        "excluded.csv",
    ],
)
def test_run_csv_outputs_equal_the_reviewed_golden_files(run_out, name):
    top = ("exposed_requests.csv", "blast_radius.csv")
    produced = run_out / name if name in top else run_out / "notify" / name
    assert produced.read_bytes() == (EXPECTED / name).read_bytes()


def test_run_summary_equals_the_reviewed_golden_file(run_out):
    summary = json.loads((run_out / "summary.json").read_text())
    summary.pop("classification")
    summary.pop("tool")  # the versions of this install: test_pipeline checks them
    assert summary == json.loads((EXPECTED / "summary.json").read_text())


def test_summary_holds_every_key_spec_lists_with_consistent_ingest_totals(run_out):
    summary = json.loads((run_out / "summary.json").read_text())
    assert summary.keys() >= SPEC_SUMMARY_KEYS
    assert summary["ingest"] == {
        "rows_read": 29,
        "rows_loaded": 29,
        "duplicates": 0,
        "quarantined": 0,
    }
    assert summary["data_owners"]["accounts"] == 6
    assert summary["data_owners"]["requests"] == 11
    assert summary["data_owners"]["policy"] == "pool-walkback"


def _pyproject_version() -> str:
    import tomllib

    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


def test_summary_names_the_toolkit_and_duckdb_versions_that_made_it(run_out):
    import duckdb

    summary = json.loads((run_out / "summary.json").read_text())
    assert summary["tool"] == {
        "name": "kv-forensics",
        "version": _pyproject_version(),
        "duckdb": duckdb.__version__,
    }


def test_the_analysis_record_in_the_case_database_names_the_versions(run_out):
    import duckdb

    con = duckdb.connect(str(run_out / "case.duckdb"), read_only=True)
    try:
        meta = dict(con.execute("SELECT key, value FROM analysis_meta").fetchall())
    finally:
        con.close()
    assert meta["tool_version"] == _pyproject_version()
    assert meta["duckdb_version"] == duckdb.__version__


def test_summary_json_is_sorted_indented_and_ends_with_newline(run_out):
    text = (run_out / "summary.json").read_text()
    assert text.endswith("}\n")
    assert text == json.dumps(json.loads(text), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def test_run_prints_the_headline_and_warns_about_the_missing_account(runner, tmp_path):
    result = _run(runner, tmp_path)
    assert "exposed responses: 8" in result.output
    assert "affected accounts: 4" in result.output
    assert "excluded (requests, by reason): internal-test 1, security-researcher 2" in result.output
    assert "not in accounts.csv" in result.output and "acct-erin" in result.output


def test_run_twice_into_two_folders_gives_identical_bytes(runner, tmp_path):
    _run(runner, tmp_path / "a")
    _run(runner, tmp_path / "b")
    for name in OUTPUTS:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_rerun_into_the_same_folder_gives_identical_bytes(runner, tmp_path):
    _run(runner, tmp_path)
    first = {name: (tmp_path / name).read_bytes() for name in OUTPUTS}
    _run(runner, tmp_path)
    assert {name: (tmp_path / name).read_bytes() for name in OUTPUTS} == first


def test_analyze_without_exclusions_counts_the_excluded_as_exposed(runner, run_out, tmp_path):
    result = runner.invoke(
        app,
        [
            "analyze",
            str(CASE_FILE),
            "--db",
            str(run_out / "case.duckdb"),
            "--out",
            str(tmp_path),
            "--no-exclusions",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert (summary["exposure_count"], summary["affected_accounts"]) == (11, 6)
    assert summary["excluded_by_reason"] == {}
    assert summary["bands"]["excluded"] == 0
    assert summary["exclusions"]["applied"] is False


def test_analyze_then_notify_through_the_cli(runner, run_out, tmp_path):
    db = str(run_out / "case.duckdb")
    args = [str(CASE_FILE), "--db", db, "--out", str(tmp_path)]
    assert runner.invoke(app, ["analyze", *args]).exit_code == 0
    result = runner.invoke(app, ["notify", *args])
    assert result.exit_code == 0, result.output
    produced = (tmp_path / "notify" / "recipients.csv").read_bytes()
    assert produced == (EXPECTED / "recipients.csv").read_bytes()


def test_analyze_without_a_case_database_is_one_line_error(runner, tmp_path):
    result = runner.invoke(
        app, ["analyze", str(CASE_FILE), "--db", str(tmp_path / "none.duckdb"), "--out", "x"]
    )
    assert result.exit_code == 2
    assert "case database not found" in result.output
    assert "Traceback" not in result.output


def test_unknown_engine_is_refused(runner, tmp_path):
    result = runner.invoke(
        app, ["run", str(CASE_FILE), "--out", str(tmp_path), "--engine", "nosuch"]
    )
    assert result.exit_code == 2
    words = " ".join(w for w in result.stderr.split() if w != "│")  # the error box's sides
    assert "'nosuch' is not one of 'duckdb', 'spark'" in words


@pytest.mark.slow
def test_demo_reproduces_the_reference_incident_count(runner, tmp_path):
    result = runner.invoke(app, ["demo", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "exposed responses: 155" in result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["excluded_by_reason"] == {"internal-test": 60, "security-researcher": 50}
    assert result.output.count("outputs:") == 1


def test_a_long_query_prints_nothing_on_stdout(capfd):
    # DuckDB's own progress bar writes to stdout after progress_bar_time ms; stdout is for data
    from forensics.engines import DuckDBEngine

    with DuckDBEngine() as engine:
        engine.execute("SET progress_bar_time = 0")
        assert engine.scalar("SELECT count(*) FROM range(200000000) AS t(i) WHERE i % 7 = 1") > 0
    assert capfd.readouterr().out == ""
