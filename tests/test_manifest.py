"""manifest.json in --out: every output file with its bytes and sha256 (hashed here with
hashlib, independently), the inputs' sha256, the case file, the versions; deterministic;
updated by analyze, notify and report for what they wrote."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import duckdb
import pytest
from case_small_db import CASE_DIR, CASE_FILE
from conftest import REPO

from forensics.analysis.integrity import case_digest
from forensics.case import load_case
from forensics.cli import app


def _notice(account: str) -> str:
    # docs/notices.md: the account id, '-', 16 hex digits of its sha256, '.md'
    return f"notify/notices/md/{account}-{hashlib.sha256(account.encode()).hexdigest()[:16]}.md"


# case_small (its README): one notice per notified account (no sender: no messages)
NOTIFY_FILES = sorted(
    [
        "notify/README.md",
        "notify/data_owners.csv",
        "notify/excluded.csv",
        "notify/incident.json",
        "notify/no_contact.csv",
        "notify/notices/index.csv",
        "notify/recipients.csv",
        "notify/regulator_summary.md",
        *(
            _notice(a)
            for a in (
                "acct-alice",
                "acct-bob",
                "acct-carol",
                "acct-dave",
                "acct-erin",
                "acct-frank",
            )
        ),
    ]
)
RUN_FILES = sorted(
    [
        "blast_radius.csv",
        "exposed_requests.csv",
        *NOTIFY_FILES,
        "report.html",
        "summary.json",
        "timeline.png",
        "timeline.svg",
    ]
)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text(encoding="utf-8"))


def _invoke(runner, *args: str) -> None:
    result = runner.invoke(app, [*args, "-q"])
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def run_out(tmp_path_factory) -> Path:
    from typer.testing import CliRunner

    out = tmp_path_factory.mktemp("run") / "out"
    _invoke(CliRunner(), "run", str(CASE_FILE), "--out", str(out))
    return out


def test_run_lists_every_output_file_with_its_bytes_and_sha256(run_out):
    files = _manifest(run_out)["files"]
    assert [f["path"] for f in files] == RUN_FILES
    for f in files:
        path = run_out / f["path"]
        assert f["bytes"] == path.stat().st_size, f["path"]
        assert f["sha256"] == _sha(path), f["path"]


def test_the_case_database_is_listed_without_a_hash_and_says_why(run_out):
    (entry,) = _manifest(run_out)["not_hashed"]
    assert entry["path"] == "case.duckdb"
    assert "differ between runs" in entry["reason"]


def test_the_manifest_does_not_list_itself_and_says_so(run_out):
    manifest = _manifest(run_out)
    assert all(f["path"] != "manifest.json" for f in manifest["files"])
    assert "manifest.json does not list itself" in manifest["about"]


def test_the_inputs_case_file_and_versions_are_named(run_out):
    import tomllib

    manifest = _manifest(run_out)
    source = CASE_DIR / "requests.csv"
    assert manifest["inputs"] == [
        {
            "path": "requests.csv",
            "bytes": source.stat().st_size,
            "sha256": _sha(source),
            "format": "csv",
        }
    ]
    assert manifest["case"]["file"] == "incident.toml"
    assert manifest["case"]["sha256"] == _sha(CASE_FILE)
    assert manifest["case"]["bytes"] == CASE_FILE.stat().st_size
    con = duckdb.connect(str(run_out / "case.duckdb"), read_only=True)
    try:
        meta = dict(con.execute("SELECT key, value FROM analysis_meta").fetchall())
    finally:
        con.close()
    # the manifest names the whole case file; the analysis record what the analysis reads
    # (all but [notify]: rewording a notice needs no new analysis)
    case = load_case(CASE_FILE)
    assert manifest["case"]["digest"] == case_digest(case)
    assert meta["case"] == case_digest(case, analysis_only=True)
    assert manifest["analysis"] == meta
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert manifest["tool"] == {
        "name": "kv-forensics",
        "version": version,
        "duckdb": duckdb.__version__,
    }


def test_two_runs_write_the_same_manifest_bytes(runner, tmp_path):
    for name in ("a", "b"):
        _invoke(runner, "run", str(CASE_FILE), "--out", str(tmp_path / name))
    first = (tmp_path / "a" / "manifest.json").read_bytes()
    assert first == (tmp_path / "b" / "manifest.json").read_bytes()


def test_analyze_notify_and_report_each_add_what_they_wrote(runner, run_out, tmp_path):
    db = str(run_out / "case.duckdb")
    out = tmp_path / "step"
    case = str(CASE_FILE)
    _invoke(runner, "analyze", case, "--db", db, "--out", str(out))
    assert [f["path"] for f in _manifest(out)["files"]] == [
        "blast_radius.csv",
        "exposed_requests.csv",
        "summary.json",
    ]
    _invoke(runner, "notify", case, "--db", db, "--out", str(out))
    assert [f["path"] for f in _manifest(out)["files"]] == sorted(
        ["blast_radius.csv", "exposed_requests.csv", *NOTIFY_FILES, "summary.json"]
    )
    _invoke(runner, "report", case, "--db", db, "--out", str(out))
    files = _manifest(out)["files"]
    assert [f["path"] for f in files] == RUN_FILES
    for f in files:
        assert f["sha256"] == _sha(out / f["path"]), f["path"]
    # the step-by-step files are the run's, byte for byte
    assert files == _manifest(run_out)["files"]


def test_a_listed_file_that_is_gone_drops_out_and_the_rest_is_hashed_again(
    runner, run_out, tmp_path
):
    db = str(run_out / "case.duckdb")
    out = tmp_path / "step"
    case = str(CASE_FILE)
    _invoke(runner, "analyze", case, "--db", db, "--out", str(out))
    _invoke(runner, "notify", case, "--db", db, "--out", str(out))
    (out / "notify" / "excluded.csv").unlink()
    (out / "notify" / "recipients.csv").write_text("edited by hand\n")
    _invoke(runner, "analyze", case, "--db", db, "--out", str(out))
    files = {f["path"]: f for f in _manifest(out)["files"]}
    assert "notify/excluded.csv" not in files
    assert files["notify/recipients.csv"]["sha256"] == _sha(out / "notify" / "recipients.csv")
    assert files["notify/recipients.csv"]["bytes"] == len("edited by hand\n")
