"""Trustworthy under faults (issue 13 items 1, 2, 9): no figures of another case file, no
mapping change silently ignored, no database deleted by a process that did not create it,
no scratch copy outliving a kill, no partial `run` outputs, one line for a locked or
foreign database. Concurrency is exercised with real processes and a real `kill -9`.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from case_small_db import CASE_DIR
from conftest import messages

import forensics
from forensics import pipeline
from forensics.cli import app, cli_terms
from forensics.engines import DuckDBEngine
from forensics.errors import AnalysisError, InputError, render_terms
from forensics.ingest import ingest

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-c", "from forensics.cli import main; main()"]
WAIT = 120  # seconds: a bound on waiting for a child process, never an assertion on speed


# --- helpers ---------------------------------------------------------------------------------


def _case_copy(tmp_path: Path, name: str = "case") -> Path:
    """A copy of the hand-built fixture case (its exposure count is 8, README.md there)."""
    folder = tmp_path / name
    shutil.copytree(CASE_DIR, folder, ignore=shutil.ignore_patterns("expected"))
    return folder / "incident.toml"


def _edit(case: Path, old: str, new: str) -> None:
    text = case.read_text(encoding="utf-8")
    assert old in text
    case.write_text(text.replace(old, new), encoding="utf-8")


def _no_exposure(case: Path) -> None:
    """Every pool as large as the context window (1000): by definition nothing is exposed."""
    text = case.read_text(encoding="utf-8")
    for tokens in ("200", "400", "500", "600", "800", "900"):
        text = text.replace(f"tokens = {tokens}\n", "tokens = 1000\n")
    case.write_text(text, encoding="utf-8")


def _one_line_error(result, code: int = 2) -> str:
    assert result.exit_code == code, result.output
    lines = messages(result.stderr)
    assert len(lines) == 1, result.stderr
    return lines[0]


def _env() -> dict[str, str]:
    return {**os.environ, "TZ": "UTC", "PYTHONPATH": str(REPO)}


def _hold(db: Path) -> subprocess.Popen[str]:
    """Another process holding DuckDB's lock on `db` until its stdin closes."""
    code = (
        "import sys, duckdb\n"
        "con = duckdb.connect(sys.argv[1])\n"
        "print('held', flush=True)\n"
        "sys.stdin.read()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def _release(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(WAIT)


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _mapping(path: Path, account_field: str) -> Path:
    path.write_text(
        'format = "jsonl"\n[fields]\nrequest_id = "id"\nts = "ts"\n'
        f'account_id = "{account_field}"\nmodel = "model"\nprompt_tokens = "p"\n',
        encoding="utf-8",
    )
    return path


def _rows(db: Path, sql: str) -> list[tuple]:
    with DuckDBEngine(db) as eng:
        return eng.rows(sql)


# --- item 1: an analysis is only used with the case file (and inputs) it was computed from ---


@pytest.fixture
def analyzed(runner, tmp_path) -> tuple[Path, Path]:
    """(case file, out folder) after `forensics run` on a copy of the fixture case."""
    case = _case_copy(tmp_path)
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(case), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return case, out


@pytest.mark.parametrize("command", ["report", "notify"])
def test_report_and_notify_refuse_an_analysis_of_another_capacity(runner, analyzed, command):
    case, out = analyzed
    _no_exposure(case)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    result = runner.invoke(
        app, [command, str(case), "--db", str(out / "case.duckdb"), "--out", str(out)]
    )
    line = _one_line_error(result, code=3)
    assert "another version of the case file" in line
    assert "re-run forensics analyze" in line
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_report_and_notify_accept_the_analysis_after_analyze_reruns_it(runner, analyzed):
    case, out = analyzed
    _no_exposure(case)
    db = str(out / "case.duckdb")
    assert runner.invoke(app, ["analyze", str(case), "--db", db, "--out", str(out)]).exit_code == 0
    for command in ("report", "notify"):
        result = runner.invoke(app, [command, str(case), "--db", db, "--out", str(out)])
        assert result.exit_code == 0, result.output
    assert json.loads((out / "summary.json").read_text())["exposure_count"] == 0
    assert (out / "notify" / "recipients.csv").read_text().count("\n") == 1  # header only


def test_a_comment_or_layout_change_in_the_case_file_is_not_a_new_case(runner, analyzed):
    case, out = analyzed
    _edit(case, "[baseline]\n", "# reviewed by legal\n[baseline]  # unchanged\n")
    result = runner.invoke(
        app, ["report", str(case), "--db", str(out / "case.duckdb"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output


def test_rewording_the_notices_needs_no_new_analysis(runner, analyzed):
    # [notify] is read by notify only: the analysis (bands, owners, summary) cannot change
    case, out = analyzed
    case.write_text(
        case.read_text(encoding="utf-8")
        + '\n[notify]\ndescription = "A reworded description, approved by counsel."\n',
        encoding="utf-8",
    )
    db = str(out / "case.duckdb")
    for command in ("notify", "report"):
        result = runner.invoke(app, [command, str(case), "--db", db, "--out", str(out)])
        assert result.exit_code == 0, result.output
    notices = [p.read_text(encoding="utf-8") for p in (out / "notify" / "notices").rglob("*.md")]
    assert notices and all("approved by counsel" in n for n in notices)


def test_a_changed_exclusion_file_makes_the_analysis_stale(runner, analyzed):
    case, out = analyzed
    (case.parent / "researchers.txt").write_text("acct-somebody-else\n", encoding="utf-8")
    result = runner.invoke(
        app, ["notify", str(case), "--db", str(out / "case.duckdb"), "--out", str(out)]
    )
    assert "another version of the case file" in _one_line_error(result, code=3)


def test_a_changed_mapping_named_by_the_case_makes_the_analysis_stale(tmp_path):
    case = _case_copy(tmp_path)
    (case.parent / "canonical.mapping.toml").write_text(
        'format = "csv"\n[fields]\nrequest_id = "request_id"\nts = "ts"\n'
        'account_id = "account_id"\nmodel = "model"\nprompt_tokens = "prompt_tokens"\n'
        'status = "status"\nprefill_node = "prefill_node"\ndecode_node = "decode_node"\n'
        'ts_end = "ts_end"\ncompletion_tokens = "completion_tokens"\n',
        encoding="utf-8",
    )
    _edit(case, 'profile = "canonical"', 'mapping = "canonical.mapping.toml"')
    out = tmp_path / "out"
    pipeline.run(case, out)
    _edit(
        case.parent / "canonical.mapping.toml", 'account_id = "account_id"', 'account_id = "model"'
    )
    with pytest.raises(AnalysisError, match="or of a mapping it names"):
        pipeline.notify(case, out / "case.duckdb", out)


def test_report_refuses_after_more_logs_were_ingested(runner, analyzed, tmp_path):
    case, out = analyzed
    extra = tmp_path / "late.csv"
    extra.write_text(
        "request_id,ts,account_id,model,prompt_tokens\n"
        "late-1,2026-09-01T13:00:00Z,acct-zed,m-long,950\n",
        encoding="utf-8",
    )
    db = str(out / "case.duckdb")
    assert (
        runner.invoke(app, ["ingest", str(extra), "--db", db, "--profile", "canonical"]).exit_code
        == 0
    )
    result = runner.invoke(app, ["report", str(case), "--db", db, "--out", str(out)])
    assert "ingested or re-ingested since the analysis" in _one_line_error(result, code=3)


def test_report_refuses_a_summary_json_of_another_analysis(runner, analyzed, tmp_path):
    case, out = analyzed
    db = str(out / "case.duckdb")
    other = tmp_path / "other-out"
    result = runner.invoke(
        app, ["analyze", str(case), "--db", db, "--out", str(other), "--no-exclusions"]
    )
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["report", str(case), "--db", db, "--out", str(out)])
    assert "summary.json in the output folder is not from" in _one_line_error(result, code=3)


def test_report_on_a_database_without_a_recorded_analysis_says_to_analyze(runner, tmp_path):
    case = _case_copy(tmp_path)
    out = tmp_path / "out"
    db = tmp_path / "case.duckdb"
    assert (
        runner.invoke(
            app,
            [
                "ingest",
                str(case.parent / "requests.csv"),
                "--db",
                str(db),
                "--profile",
                "canonical",
            ],
        ).exit_code
        == 0
    )
    out.mkdir()
    (out / "summary.json").write_text("{}", encoding="utf-8")
    result = runner.invoke(app, ["report", str(case), "--db", str(db), "--out", str(out)])
    line = _one_line_error(result, code=3)
    assert "holds no recorded analysis" in line and "forensics analyze" in line


def test_open_case_reruns_the_analysis_for_a_changed_case_file(tmp_path):
    case = _case_copy(tmp_path)
    db = tmp_path / "case.duckdb"
    with forensics.open_case(case, db=db) as inv:
        assert inv.summary()["exposure_count"] == 8
    _no_exposure(case)
    with forensics.open_case(case, db=db) as inv:
        assert inv.summary()["exposure_count"] == 0
        assert inv.exposed().height == 0
        assert any("another version of the case file" in w for w in inv.warnings)


def test_open_case_reuses_an_analysis_of_the_same_case_file(tmp_path):
    case = _case_copy(tmp_path)
    db = tmp_path / "case.duckdb"
    forensics.open_case(case, db=db).close()
    with DuckDBEngine(db) as eng:  # a marker only a reused analysis keeps
        eng.execute("UPDATE bands SET band = 'fits' WHERE request_id = 'r02'")
    with forensics.open_case(case, db=db) as inv:
        assert inv.exposed().height == 7
        assert inv.warnings == [] or all("run again" not in w for w in inv.warnings)


def test_the_cli_accepts_what_open_case_analyzed(runner, tmp_path):
    case = _case_copy(tmp_path)
    db = tmp_path / "case.duckdb"
    out = tmp_path / "out"
    with forensics.open_case(case, db=db) as inv:
        inv.analyze()
    assert (
        runner.invoke(app, ["notify", str(case), "--db", str(db), "--out", str(out)]).exit_code == 0
    )


@pytest.mark.spark
def test_spark_report_and_notify_refuse_an_analysis_of_another_capacity(tmp_path):
    from forensics.engines.spark import session

    spark = session("local[1]")
    try:
        case = _case_copy(tmp_path)
        out = tmp_path / "out"
        pipeline.run(case, out, engine="spark")
        store = out / pipeline.PARQUET_STORE
        pipeline.notify(case, store, out, engine="spark")  # the same case: accepted
        _no_exposure(case)
        with pytest.raises(AnalysisError, match="another version of the case file"):
            pipeline.notify(case, store, out, engine="spark")
        with pytest.raises(AnalysisError, match="another version of the case file"):
            pipeline.report(case, store, out, engine="spark")
    finally:
        spark.stop()


# --- item 1b: a changed mapping on an already-ingested file ----------------------------------


@pytest.fixture
def gateway(tmp_path) -> tuple[Path, Path, Path]:
    """(log, mapping reading account_id from `acct`, mapping reading it from `tenant`)."""
    records = [
        {
            "id": "g1",
            "ts": "2026-09-01T08:00:00Z",
            "acct": "a1",
            "tenant": "t1",
            "model": "m",
            "p": 5,
        },
        {
            "id": "g2",
            "ts": "2026-09-01T08:01:00Z",
            "acct": "a2",
            "tenant": "t2",
            "model": "m",
            "p": 6,
        },
        {"id": "g3", "ts": "2026-09-01T08:02:00Z", "tenant": "t3", "model": "m", "p": 7},
    ]
    log = _jsonl(tmp_path / "gateway.jsonl", records)
    return (
        log,
        _mapping(tmp_path / "a.mapping.toml", "acct"),
        _mapping(tmp_path / "t.mapping.toml", "tenant"),
    )


def test_a_loaded_file_with_another_mapping_is_refused_naming_the_file(runner, gateway, tmp_path):
    log, by_acct, by_tenant = gateway
    db = str(tmp_path / "case.duckdb")
    assert (
        runner.invoke(app, ["ingest", str(log), "--db", db, "--mapping", str(by_acct)]).exit_code
        == 0
    )
    result = runner.invoke(app, ["ingest", str(log), "--db", db, "--mapping", str(by_tenant)])
    line = _one_line_error(result)
    assert str(log) in line and "another mapping" in line and "--force" in line
    assert _rows(Path(db), "SELECT account_id FROM requests ORDER BY request_id") == [
        ("a1",),
        ("a2",),
    ]


def test_the_same_mapping_again_changes_nothing(runner, gateway, tmp_path):
    log, by_acct, _ = gateway
    db = str(tmp_path / "case.duckdb")
    for _ in range(2):
        result = runner.invoke(app, ["ingest", str(log), "--db", db, "--mapping", str(by_acct)])
        assert result.exit_code == 0, result.output
    assert "already ingested" in result.stderr
    assert _rows(Path(db), "SELECT count(*) FROM requests") == [(2,)]


def test_force_reingests_the_file_with_the_new_mapping(runner, gateway, tmp_path):
    log, by_acct, by_tenant = gateway
    db = tmp_path / "case.duckdb"
    ingest([log], db, mapping=by_acct)
    assert _rows(db, "SELECT row FROM quarantine") == [(3,)]  # g3 has no acct
    result = runner.invoke(
        app, ["ingest", str(log), "--db", str(db), "--mapping", str(by_tenant), "--force"]
    )
    assert result.exit_code == 0, result.output
    assert _rows(db, "SELECT request_id, account_id FROM requests ORDER BY request_id") == [
        ("g1", "t1"),
        ("g2", "t2"),
        ("g3", "t3"),
    ]
    assert _rows(db, "SELECT count(*) FROM quarantine") == [(0,)]
    assert _rows(db, "SELECT rows_read, rows_loaded, duplicates, quarantined FROM inputs") == [
        (3, 3, 0, 0)
    ]


def test_force_leaves_other_inputs_alone(gateway, tmp_path):
    log, by_acct, by_tenant = gateway
    other = _jsonl(
        tmp_path / "other.jsonl",
        [{"id": "o1", "ts": "2026-09-01T09:00:00Z", "acct": "b1", "model": "m", "p": 1}],
    )
    db = tmp_path / "case.duckdb"
    ingest([log, other], db, mapping=by_acct)
    ingest([log], db, mapping=by_tenant, force=True)
    assert _rows(db, "SELECT request_id, account_id FROM requests ORDER BY request_id") == [
        ("g1", "t1"),
        ("g2", "t2"),
        ("g3", "t3"),
        ("o1", "b1"),
    ]
    assert _rows(db, "SELECT count(*) FROM inputs") == [(2,)]


def test_a_failing_forced_reingest_keeps_the_earlier_load(gateway, tmp_path):
    log, by_acct, _ = gateway
    db = tmp_path / "case.duckdb"
    ingest([log], db, mapping=by_acct)
    bad = tmp_path / "bad.mapping.toml"
    bad.write_text(
        'format = "jsonl"\n[fields]\nrequest_id = "id"\nts = "ts"\naccount_id = "acct"\n'
        'model = "model"\nprompt_tokens = { sql = "no_such_column + 1" }\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError):
        ingest([log], db, mapping=bad, force=True)
    assert _rows(db, "SELECT count(*) FROM requests") == [(2,)]
    assert _rows(db, "SELECT count(*) FROM quarantine") == [(1,)]
    assert _rows(db, "SELECT count(*) FROM inputs") == [(1,)]


def test_a_database_from_before_mapping_digests_stays_readable(gateway, tmp_path):
    log, by_acct, by_tenant = gateway
    db = tmp_path / "old.duckdb"
    ingest([log], db, mapping=by_acct)
    # the inputs table as databases written before this change hold it
    with DuckDBEngine(db) as eng:
        eng.execute("ALTER TABLE inputs DROP COLUMN mapping_sha256")
    report = ingest([log], db, mapping=by_tenant)  # unknown earlier mapping: kept, and said
    said = [render_terms(w, cli_terms) for w in report.warnings]
    assert any("mapping was not recorded" in w and "--force" in w for w in said)
    later = _jsonl(
        tmp_path / "later.jsonl",
        [{"id": "l1", "ts": "2026-09-01T10:00:00Z", "acct": "c1", "model": "m", "p": 2}],
    )
    ingest([later], db, mapping=by_acct)
    assert _rows(db, "SELECT path, mapping_sha256 IS NULL FROM inputs ORDER BY path") == [
        (str(log), True),
        (str(later), False),
    ]


# --- item 2: concurrent ingests, locks, scratch folders --------------------------------------


_RACER = """
import sys
from forensics.errors import ForensicsError
from forensics.ingest import ingest
print("ready", flush=True)
sys.stdin.readline()  # the start signal
try:
    ingest([sys.argv[1]], sys.argv[2], profile="canonical")
    print("ok")
except ForensicsError as e:
    print("refused: " + e.line())
"""


def test_concurrent_first_ingests_never_delete_the_winners_database(tmp_path):
    log = CASE_DIR / "requests.csv"
    for attempt in range(2):
        db = tmp_path / f"race{attempt}.duckdb"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _RACER, str(log), str(db)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=_env(),
            )
            for _ in range(3)
        ]
        for p in procs:  # each has imported forensics and waits for the signal
            assert p.stdout is not None and p.stdout.readline() == "ready\n"
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        outputs = [p.communicate(timeout=WAIT) for p in procs]
        assert any(stdout.startswith("ok") for stdout, _ in outputs), outputs
        assert db.is_file(), f"the winner's database was deleted: {outputs}"
        assert _rows(db, "SELECT count(*) FROM requests") == [(29,)]
        for stdout, stderr in outputs:
            assert stderr == "", stderr  # no traceback
            assert stdout.startswith(("ok", "refused: ")), stdout
        assert sorted(p.name for p in tmp_path.glob(f"*{db.name}*")) == [db.name]


def test_ingest_into_a_database_held_by_another_process_is_one_line(runner, tmp_path):
    db = tmp_path / "case.duckdb"
    ingest([CASE_DIR / "requests.csv"], db, profile="canonical")
    holder = _hold(db)
    try:
        result = runner.invoke(
            app,
            ["ingest", str(CASE_DIR / "accounts.csv"), "--db", str(db), "--profile", "canonical"],
        )
        line = _one_line_error(result)
        assert f"database is in use by another process (pid {holder.pid})" in line
        assert "another --db" in line
    finally:
        _release(holder)
    assert db.is_file()


def _truncated_gzip(path: Path, lines: int) -> Path:
    """A gzip of canonical JSONL records cut mid-stream (ingest decompresses a prefix into
    its scratch folder)."""
    body = "".join(
        json.dumps(
            {
                "request_id": f"k{i}",
                "ts": "2026-09-01T08:00:00Z",
                "account_id": f"a{i % 7}",
                "model": "m-long",
                "prompt_tokens": i,
            }
        )
        + "\n"
        for i in range(lines)
    ).encode()
    data = gzip.compress(body, compresslevel=1)
    path.write_bytes(data[: len(data) - 64])
    return path


def test_kill_9_leaves_no_database_and_the_next_ingest_sweeps_its_scratch(tmp_path):
    log = _truncated_gzip(tmp_path / "big.jsonl.gz", 100_000)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    dbdir = tmp_path / "db"
    dbdir.mkdir()
    db = dbdir / "case.duckdb"
    proc = subprocess.Popen(
        [
            *CLI,
            "ingest",
            str(log),
            "--db",
            str(db),
            "--profile",
            "canonical",
            "--temp-dir",
            str(scratch),
        ],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + WAIT
    # wait until it has written its decompressed copy and opened its database, then kill it
    while not (any(scratch.rglob("*.prefix")) and any(dbdir.iterdir())):
        assert proc.poll() is None, "the ingest ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(WAIT)
    assert not db.exists()  # a killed first ingest never leaves a database under its name
    leftovers = [p for p in (*scratch.iterdir(), *dbdir.iterdir()) if str(proc.pid) in p.name]
    assert leftovers  # what the kill left, named with the dead pid
    small = tmp_path / "small.csv"
    shutil.copy(CASE_DIR / "requests.csv", small)
    ingest([small], db, profile="canonical", temp_dir=scratch)
    assert list(scratch.iterdir()) == []
    assert sorted(p.name for p in dbdir.iterdir()) == ["case.duckdb"]


def test_scratch_cleanup_problems_do_not_fail_the_ingest(tmp_path):
    log = _truncated_gzip(tmp_path / "g.jsonl.gz", 50_000)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    touched = threading.Event()

    def meddle() -> None:  # another tool writes a folder into the ingest's scratch folder
        while not touched.is_set():
            for folder in scratch.iterdir():
                try:
                    (folder / "someone-elses").mkdir()
                    touched.set()
                except OSError:
                    pass
            time.sleep(0.001)

    thread = threading.Thread(target=meddle, daemon=True)
    thread.start()
    report = ingest([log], tmp_path / "case.duckdb", profile="canonical", temp_dir=scratch)
    touched.set()
    thread.join()
    assert report.totals()["rows_loaded"] > 0
    assert list(scratch.iterdir()) == []


# --- item 9: run leaves no partial outputs; locked and foreign databases are one line ---------


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_run_failing_midway_leaves_out_as_it_was(runner, analyzed):
    case, out = analyzed
    before = _snapshot(out)
    _no_exposure(case)  # a different summary.json would be written ...
    _edit(case, 'path = "accounts.csv"', 'path = "missing.csv"')  # ... before notify fails
    result = runner.invoke(app, ["run", str(case), "--out", str(out)])
    assert "accounts file not found" in _one_line_error(result)
    assert _snapshot(out) == before
    assert sorted(p.name for p in out.parent.iterdir() if p.name.startswith(".")) == []


def test_a_failed_first_run_creates_no_output_folder(runner, tmp_path):
    case = _case_copy(tmp_path)
    _edit(case, 'path = "accounts.csv"', 'path = "missing.csv"')
    out = tmp_path / "results"
    result = runner.invoke(app, ["run", str(case), "--out", str(out)])
    _one_line_error(result)
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["case"]


def test_a_second_run_replaces_the_outputs_and_keeps_other_files(runner, analyzed):
    case, out = analyzed
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    _no_exposure(case)
    result = runner.invoke(app, ["run", str(case), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads((out / "summary.json").read_text())["exposure_count"] == 0
    assert (out / "notes.txt").read_text() == "mine"
    assert f"outputs: {out}" in result.stdout
    db = str(out / "case.duckdb")
    assert runner.invoke(app, ["report", str(case), "--db", db, "--out", str(out)]).exit_code == 0


def test_a_killed_run_leaves_out_as_it_was_and_the_next_run_sweeps_its_folder(tmp_path):
    case = _case_copy(tmp_path)
    log = _truncated_gzip(case.parent / "big.jsonl.gz", 100_000)
    _edit(case, 'path = "requests.csv"', f'path = "{log.name}"')
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [*CLI, "run", str(case), "--out", str(out)],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + WAIT
    while not any((p / "case.duckdb").exists() for p in tmp_path.glob(".out.*")):
        assert proc.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(WAIT)
    assert not out.exists()
    assert [p.name for p in tmp_path.glob(f".out.*{proc.pid}*")]
    _edit(case, f'path = "{log.name}"', 'path = "requests.csv"')
    pipeline.run(case, out)
    assert not list(tmp_path.glob(".out.*"))


def test_analyze_on_a_database_held_by_another_process_is_one_line(runner, analyzed):
    case, out = analyzed
    db = out / "case.duckdb"
    holder = _hold(db)
    try:
        result = runner.invoke(app, ["analyze", str(case), "--db", str(db), "--out", str(out)])
        line = _one_line_error(result)
        assert line == (
            f"error: {db}: database is in use by another process (pid {holder.pid}); wait for "
            "it to finish (or close the notebook holding it), or use another --db"
        )
    finally:
        _release(holder)


@pytest.mark.parametrize("command", ["analyze", "report", "notify"])
def test_a_file_that_is_not_a_duckdb_database_is_one_line(runner, tmp_path, command):
    case = _case_copy(tmp_path)
    db = tmp_path / "notes.duckdb"
    db.write_text("request_id,ts\nr1,2026-09-01\n" * 200, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("{}", encoding="utf-8")
    result = runner.invoke(app, [command, str(case), "--db", str(db), "--out", str(out)])
    line = _one_line_error(result)
    assert f"{db}: not a DuckDB database" in line
    assert db.read_text(encoding="utf-8").startswith("request_id,ts")  # left untouched


def test_ingest_into_a_file_that_is_not_a_duckdb_database_is_one_line(runner, tmp_path):
    db = tmp_path / "case.duckdb"
    db.write_bytes(b"\x00not duckdb" * 1000)
    result = runner.invoke(
        app, ["ingest", str(CASE_DIR / "requests.csv"), "--db", str(db), "--profile", "canonical"]
    )
    assert "not a DuckDB database" in _one_line_error(result)
    assert db.read_bytes() == b"\x00not duckdb" * 1000
