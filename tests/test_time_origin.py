"""`[timestamp] origin`: epoch numbers of a relative-time trace (a Mooncake-style trace that
counts milliseconds from 0) read as offsets from that instant; the plausibility check applies
to the result. Expected times are derived in tests/fixtures/mooncake/README.md."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from dbrows import rows as db_rows

from forensics.errors import InputError
from forensics.formats import digest
from forensics.ingest import ingest
from forensics.mapping import load_mapping, mapping_digest

FIX = Path(__file__).parent / "fixtures" / "mooncake"
TRACE = FIX / "trace.jsonl"


def _mapping(tmp_path: Path, timestamp: str) -> Path:
    """The fixture's mapping with its [timestamp] table replaced by `timestamp`."""
    text = (FIX / "trace.mapping.toml").read_text()
    head = text.split("[timestamp]")[0]
    path = tmp_path / "trace.mapping.toml"
    path.write_text(head + "[timestamp]\n" + timestamp)
    return path


def test_a_relative_trace_loads_at_origin_plus_offset(tmp_path):
    db = tmp_path / "t.duckdb"
    report = ingest([TRACE], db, mapping=FIX / "trace.mapping.toml")
    assert report.totals() == {"rows_read": 4, "rows_loaded": 4, "duplicates": 0, "quarantined": 0}
    loaded = db_rows(db, "SELECT source_row, ts, prompt_tokens FROM requests ORDER BY source_row")
    assert loaded == [
        (1, datetime(2026, 8, 27, 0, 0, 0, tzinfo=UTC), 6955),
        (2, datetime(2026, 8, 27, 0, 0, 27, 482000, tzinfo=UTC), 6472),
        (3, datetime(2026, 8, 27, 0, 0, 30, 535000, tzinfo=UTC), 700000),
        (4, datetime(2026, 8, 28, 0, 0, 0, tzinfo=UTC), 1024),
    ]


def test_without_origin_every_record_is_an_implausible_epoch(tmp_path):
    db = tmp_path / "t.duckdb"
    with pytest.raises(InputError, match="loads no record: 4 of 4 record"):
        ingest([TRACE], db, mapping=_mapping(tmp_path, 'unit = "ms"\n'))
    # loaded anyway (a deliberate zero), each record says why
    report = ingest([TRACE], db, mapping=_mapping(tmp_path, 'unit = "ms"\n'), allow_empty=True)
    assert report.totals()["quarantined"] == 4
    reasons = db_rows(db, "SELECT DISTINCT reason FROM quarantine")
    assert reasons == [("implausible epoch ts for unit ms (not within 2000-2100 UTC)",)]


def test_plausibility_applies_to_origin_plus_offset(tmp_path):
    db = tmp_path / "t.duckdb"
    mapping = _mapping(tmp_path, 'unit = "ms"\norigin = "1970-01-01T00:00:00Z"\n')
    report = ingest([TRACE], db, mapping=mapping, allow_empty=True)
    assert report.totals()["quarantined"] == 4
    reasons = db_rows(db, "SELECT DISTINCT reason FROM quarantine")
    assert reasons == [
        ("implausible epoch ts for unit ms from [timestamp] origin (not within 2000-2100 UTC)",)
    ]


def test_origin_with_an_offset_is_the_same_instant(tmp_path):
    db = tmp_path / "t.duckdb"
    mapping = _mapping(tmp_path, 'unit = "s"\norigin = 2026-08-27T02:00:00+02:00\n')
    ingest([TRACE], db, mapping=mapping)
    # seconds now: 27482 s after 2026-08-27T00:00:00Z is 07:38:02Z
    assert db_rows(db, "SELECT ts FROM requests WHERE source_row = 2") == [
        (datetime(2026, 8, 27, 7, 38, 2, tzinfo=UTC),)
    ]


def test_a_second_ingest_without_origin_is_unaffected(tmp_path):
    """The origin belongs to its mapping only: the next ingest in the same process reads
    absolute epochs again."""
    ingest([TRACE], tmp_path / "a.duckdb", mapping=FIX / "trace.mapping.toml")
    log = tmp_path / "abs.jsonl"
    log.write_text(TRACE.read_text().replace('"timestamp": 0,', '"timestamp": 1787788800000,'))
    db = tmp_path / "b.duckdb"
    ingest([log], db, mapping=_mapping(tmp_path, 'unit = "ms"\n'))
    # 1787788800000 ms since 1970 = 2026-08-27T00:00:00Z; the other three stay implausible
    assert db_rows(db, "SELECT ts FROM requests") == [(datetime(2026, 8, 27, tzinfo=UTC),)]


@pytest.mark.parametrize(
    ("timestamp", "said"),
    [
        ('unit = "iso8601"\norigin = "2026-08-27T00:00:00Z"\n', "origin applies to epoch"),
        ('unit = "ms"\norigin = "2026-08-27T00:00:00"\n', "origin must be a time with a UTC"),
        ('unit = "ms"\norigin = 2026-08-27T00:00:00\n', "origin must be a time with a UTC"),
        ('unit = "ms"\norigin = "last tuesday"\n', "unparsable time 'last tuesday'"),
        ('unit = "ms"\norigin = 1700000000\n', "origin must be a time with a UTC"),
        ('unit = "ms"\norigin = "3000-01-01T00:00:00Z"\n', "is outside 1970-01-01"),
    ],
)
def test_a_bad_origin_is_refused_naming_file_line_and_key(tmp_path, timestamp, said):
    path = _mapping(tmp_path, timestamp)
    with pytest.raises(InputError) as info:
        load_mapping(path)
    line = info.value.line()
    assert said in line
    # [timestamp] is line 12 of the fixture's mapping: unit on 13, origin on 14
    assert line.startswith(f"{path}:14: ") and "(key 'timestamp.origin')" in line


def test_the_origin_is_part_of_what_a_mapping_does(tmp_path):
    with_origin = load_mapping(FIX / "trace.mapping.toml")
    without = load_mapping(_mapping(tmp_path, 'unit = "ms"\n'))
    assert mapping_digest(with_origin) != mapping_digest(without)
    # a mapping without origin keeps the digest it had before origin existed: the body of
    # forensics.mapping.mapping_digest as it was, written out by hand
    fields = {
        "account_id": ["const", "mooncake-trace", False],
        "completion_tokens": ["path", "output_length", False],
        "model": ["const", "@cf/zai-org/glm-5.3", False],
        "prompt_tokens": ["path", "input_length", False],
        "ts": ["path", "timestamp", False],
    }
    body = {
        "format": "jsonl",
        "fields": fields,
        "extra": {},
        "unit": "ms",
        "timezone": "UTC",
        "keep_extra_column": False,
    }
    assert mapping_digest(without) == digest(body)


def test_an_offset_near_the_bigint_limit_plus_an_origin_is_quarantined_not_an_overflow(tmp_path):
    # 9,222,000,000,000 s = 9.222e18 us fits BIGINT (max 9.2234e18); plus the origin's
    # 1.767e15 us it would not: the record is an implausible epoch, the load goes on
    trace = tmp_path / "trace.jsonl"
    lines = TRACE.read_text().splitlines()
    trace.write_text(lines[0].replace(": 0,", ": 9222000000000,", 1) + "\n" + lines[1] + "\n")
    db = tmp_path / "t.duckdb"
    mapping = _mapping(tmp_path, 'unit = "s"\norigin = "2026-01-01T00:00:00Z"\n')
    report = ingest([trace], db, mapping=mapping)
    assert report.totals() == {"rows_read": 2, "rows_loaded": 1, "duplicates": 0, "quarantined": 1}
    assert db_rows(db, "SELECT row, reason FROM quarantine") == [
        (1, "implausible epoch ts for unit s from [timestamp] origin (not within 2000-2100 UTC)")
    ]
