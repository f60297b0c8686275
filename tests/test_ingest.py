"""Ingest: every record loaded, counted as a duplicate, or quarantined (counts by hand)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from forensics.ingest import ingest

CANON = Path(__file__).parent / "fixtures" / "ingest"


def _rows(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_canonical_csv_accounts_for_every_row(tmp_path):
    # canonical.csv: 7 data rows. r1 loaded, r2 loaded, r2 again identical (duplicate),
    # r3 negative tokens, r4 unparsable time, r5 has 11 columns (invalid CSV row),
    # r2 with other prompt_tokens (conflicting duplicate) -> 2 + 1 + 4.
    report = ingest([CANON / "canonical.csv"], tmp_path / "c.duckdb", profile="canonical")
    assert report.totals() == {
        "rows_read": 7,
        "rows_loaded": 2,
        "duplicates": 1,
        "quarantined": 4,
    }
    assert _rows(tmp_path / "c.duckdb", "SELECT row, reason FROM quarantine ORDER BY row") == [
        (5, "negative token count prompt_tokens"),
        (6, "unparsable time ts"),
        (7, "invalid CSV row"),
        (8, "conflicting duplicate"),
    ]


def test_canonical_csv_keeps_first_occurrence_and_defaults_status(tmp_path):
    ingest([CANON / "canonical.csv"], tmp_path / "c.duckdb", profile="canonical")
    rows = _rows(
        tmp_path / "c.duckdb",
        "SELECT request_id, ts, prompt_tokens, status, source_row FROM requests ORDER BY 1",
    )
    assert rows == [
        ("r1", datetime(2026, 8, 27, 10, 0, tzinfo=UTC), 100, 200, 2),
        ("r2", datetime(2026, 8, 27, 9, 0, tzinfo=UTC), 700000, 200, 3),
    ]


@pytest.mark.parametrize("name", ["canonical.jsonl", "canonical.parquet"])
def test_canonical_profile_reads_jsonl_and_parquet(tmp_path, name):
    report = ingest([CANON / name], tmp_path / "c.duckdb", profile="canonical")
    assert report.totals()["rows_loaded"] == 2
    rows = _rows(
        tmp_path / "c.duckdb",
        "SELECT request_id, ts, completion_tokens, ts_end FROM requests ORDER BY 1",
    )
    assert rows == [
        (
            "j1",
            datetime(2026, 8, 27, 10, 0, tzinfo=UTC),
            10,
            datetime(2026, 8, 27, 10, 0, 5, tzinfo=UTC),
        ),
        ("j2", datetime(2026, 8, 27, 9, 0, tzinfo=UTC), None, None),
    ]
