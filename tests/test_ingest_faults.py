"""Partial faults in request logs move a figure only into the range, or are refused by name
(issue 36, the ingest items): repeated JSON keys, repeated CSV columns, cut gzip/zstd streams,
logs re-exported at the same path, stray quotes, hour 24, a lone CR in a CSV value.

The fixtures are under `tests/fixtures/partial-faults/`; every expected figure is derived by
hand in its README (or, for a file written here, in the test's comment).
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import messages
from dbrows import rows

from forensics.cli import app

FAULTS = Path(__file__).parent / "fixtures" / "partial-faults"


def _copy(tmp_path: Path, name: str) -> Path:
    """A copy of fixture folder `name` in `tmp_path` (its case file and logs)."""
    folder = tmp_path / name
    shutil.copytree(FAULTS / name, folder)
    return folder


def _summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


# --- item 2: repeated JSON keys ----------------------------------------------------------


def test_records_repeating_a_mapped_key_count_toward_the_maximum_whatever_value_is_read(
    runner, tmp_path
):
    """repeated-keys/gw.jsonl (README): c1 is exposed (700 > 500); k1 repeats
    usage.prompt_tokens (100, 900), k2 model ("other", "m"), k3 status (500, 200), k4 ts
    (2020, 2026). Read first (DuckDB) each of k1..k4 is ruled out, read last (Python, jq)
    each is exposed: neither reading may rule them out, so each counts toward the maximum.
    Range 1-5 (it was 1-1)."""
    folder = _copy(tmp_path, "repeated-keys")
    db, out = tmp_path / "case.duckdb", tmp_path / "out"
    ingested = runner.invoke(
        app,
        [
            "ingest",
            str(folder / "gw.jsonl"),
            "--db",
            str(db),
            "--mapping",
            str(folder / "gw.mapping.toml"),
        ],
    )
    assert ingested.exit_code == 0, ingested.output
    analyzed = runner.invoke(
        app, ["analyze", str(folder / "case.toml"), "--db", str(db), "--out", str(out)]
    )
    assert analyzed.exit_code == 0, analyzed.output
    summary = _summary(out)
    assert summary["exposure_count"] == 1
    assert summary["exposure_range"] == {
        "min": 1,
        "likely": 1,
        "max": 5,
        "contributions": [{"category": "quarantined", "direction": "max", "requests": 4}],
    }


def test_a_repeated_key_or_a_repeated_parent_object_leaves_its_field_unreadable(tmp_path):
    """repeated-keys/gw-parent.jsonl (README): p1 repeats the object `usage` (so
    usage.prompt_tokens is 100 or 900); p2 repeats ts and model. Every field whose key (or an
    object on its path) repeats is NULL in quarantine_values; the other values are kept."""
    from forensics.ingest import ingest

    folder = FAULTS / "repeated-keys"
    db = tmp_path / "c.duckdb"
    ingest([folder / "gw-parent.jsonl"], db, mapping=folder / "gw.mapping.toml", allow_empty=True)
    assert rows(db, "SELECT row, reason FROM quarantine ORDER BY row") == [
        (1, "duplicate JSON key usage"),
        (2, "duplicate JSON key ts"),
    ]
    assert rows(
        db,
        "SELECT row, request_id, ts, account_id, model, prompt_tokens, status "
        "FROM quarantine_values ORDER BY row",
    ) == [
        (1, "p1", datetime(2026, 1, 1, 1, 5, tzinfo=UTC), "acct-f", "m", None, 200),
        (2, "p2", None, "acct-g", None, 700, 200),
    ]


# --- item 3: a CSV header naming a column twice ------------------------------------------


HEADER = FAULTS / "csv-header"


@pytest.mark.parametrize(
    ("log", "named"),
    [
        # request_id,ts,account_id,model,prompt_tokens,status,prompt_tokens: 5 and 7
        ("repeated.csv", "'prompt_tokens'"),
        # ...,Prompt_Tokens,status, prompt_tokens: DuckDB binds names without case or spaces
        ("spelled.csv", "'Prompt_Tokens'"),
    ],
)
def test_a_csv_header_naming_a_mapped_column_twice_is_refused_naming_both_positions(
    runner, tmp_path, log, named
):
    """DuckDB reads the first of two columns of one name (r1's prompt: 100 or 900?): the
    input is refused in one line naming the file, the header's line, the column and its two
    1-based positions, 5 and 7; nothing is loaded."""
    db = tmp_path / "c.duckdb"
    result = runner.invoke(
        app,
        [
            "ingest",
            str(HEADER / log),
            "--db",
            str(db),
            "--mapping",
            str(HEADER / "gw.mapping.toml"),
        ],
    )
    assert result.exit_code == 2
    (line,) = messages(result.stderr)
    assert line.startswith(f"error: {HEADER / log}:1: the header names the column {named} twice")
    assert "(columns 5 and 7)" in line
    assert not db.exists()


def test_a_csv_header_repeating_a_column_the_mapping_does_not_read_loads(tmp_path):
    """unmapped.csv: `note` twice (columns 7 and 8), unmapped: no value read is in doubt, as
    for a repeated JSON key the mapping does not read. 2 read, 2 loaded."""
    from forensics.ingest import ingest

    report = ingest(
        [HEADER / "unmapped.csv"], tmp_path / "c.duckdb", mapping=HEADER / "gw.mapping.toml"
    )
    assert report.totals() == {"rows_read": 2, "rows_loaded": 2, "duplicates": 0, "quarantined": 0}
