"""An input is read as the file it names. DuckDB's readers take every path as a glob
pattern: before, a file named log[1].parquet was read as log1.parquet, and a*b.jsonl as
every file a...b.jsonl beside it (each test's files: the named one holds the request
`mine`, a neighbour the pattern also matches holds `other`)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from dbrows import rows as db_rows

from forensics.ingest import ingest

NAMES = [("log[1]", "log1"), ("a*b", "aXb"), ("q?x", "qZx")]


def _write(path: Path, rid: str) -> Path:
    """A one-record canonical log at `path`, in the format its suffix names."""
    fields = {
        "request_id": rid,
        "ts": "2026-08-27T10:00:00Z",
        "account_id": "a1",
        "model": "m",
        "prompt_tokens": 100,
    }
    if path.suffix == ".jsonl":
        path.write_text(json.dumps(fields) + "\n")
    elif path.suffix == ".csv":
        path.write_text(",".join(fields) + "\n" + ",".join(str(v) for v in fields.values()) + "\n")
    else:
        con = duckdb.connect()
        con.execute(
            "COPY (SELECT $rid AS request_id, '2026-08-27T10:00:00Z' AS ts, 'a1' AS account_id, "
            f"'m' AS model, 100 AS prompt_tokens) TO '{path}' (FORMAT parquet)",
            {"rid": rid},
        )
        con.close()
    return path


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl", ".csv"])
@pytest.mark.parametrize(("name", "neighbour"), NAMES)
def test_a_file_named_like_a_glob_is_read_as_itself(tmp_path, suffix, name, neighbour):
    named = _write(tmp_path / f"{name}{suffix}", "mine")
    _write(tmp_path / f"{neighbour}{suffix}", "other")
    db = tmp_path / "c.duckdb"
    report = ingest([named], db, profile="canonical")
    assert [(s.rows_read, s.rows_loaded) for s in report.inputs] == [(1, 1)]
    assert db_rows(db, "SELECT request_id, source FROM requests") == [("mine", str(named))]


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_small_files_named_like_globs_are_read_as_themselves_in_one_batch(tmp_path, suffix):
    named = []
    for n, (name, neighbour) in enumerate(NAMES):
        named.append(_write(tmp_path / f"{name}{suffix}", f"mine{n}"))
        _write(tmp_path / f"{neighbour}{suffix}", f"other{n}")
    db = tmp_path / "c.duckdb"
    report = ingest(named, db, profile="canonical")
    assert [(s.rows_read, s.rows_loaded) for s in report.inputs] == [(1, 1)] * 3
    loaded = db_rows(db, "SELECT request_id, source FROM requests ORDER BY 1")
    assert loaded == [(f"mine{n}", str(path)) for n, path in enumerate(named)]


def test_an_engine_log_named_like_a_glob_is_read_as_itself(tmp_path):
    from forensics.engines import DuckDBEngine
    from forensics.ingest import sglang

    logs = Path(__file__).parent / "fixtures" / "sglang"
    named = tmp_path / "prefill[0].log"
    named.write_bytes((logs / "prefill-0.log").read_bytes())  # 22 lines (test_sglang)
    (tmp_path / "prefill0.log").write_bytes((logs / "decode-0.log").read_bytes())
    (s,) = sglang.ingest_logs(DuckDBEngine(), [named])
    assert s.note == "lines=22 other=3"
