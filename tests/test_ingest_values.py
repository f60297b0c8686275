"""Ingest of single values: every form is loaded as the right value or quarantined with a
precise reason, never loaded silently wrong (issue 13 items 3, 4, 7; answers by hand)."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest
from dbrows import rows as db_rows
from dbrows import write_parquet

from forensics.ingest import ingest, inputfile

MAPPING = (
    '[fields]\nrequest_id = "id"\nts = "t"\naccount_id = "acct"\nmodel = "model"\n'
    'prompt_tokens = "n"\nstatus = "status"\n[timestamp]\nunit = "{unit}"\ntimezone = "UTC"\n'
)


def _one(tmp_path: Path, unit: str = "iso8601", **fields: object) -> tuple[object, str | None]:
    """Ingest one record: (loaded ts or prompt_tokens, quarantine reason)."""
    record = {"id": "x", "t": "2026-08-27T10:00:00Z", "acct": "a", "model": "m", "n": 1}
    record["status"] = 200
    record.update(fields)
    log = tmp_path / "one.jsonl"
    log.write_text(json.dumps(record) + "\n")
    mapping = tmp_path / "one.mapping.toml"
    mapping.write_text(MAPPING.format(unit=unit))
    db = tmp_path / "one.duckdb"
    ingest([log], db, mapping=mapping, allow_empty=True)  # the one record may be quarantined
    loaded = db_rows(db, "SELECT ts, prompt_tokens, status FROM requests")
    reasons = db_rows(db, "SELECT reason FROM quarantine")
    return (loaded[0] if loaded else None), (reasons[0][0] if reasons else None)


def _utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


ZONE = "time zone name in ts (use a UTC offset or [timestamp] timezone)"


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("2026-08-27 10:00:00 EST", ZONE),
        ("2026-08-27T10:00:00 America/New_York", ZONE),
        ("2026-08-27T10:00:00+05:45:30", "invalid UTC offset in ts"),
        ("2026-08-27T10:00:00+99:99", "invalid UTC offset in ts"),
        ("2026-08-27T10:00:00+24:00", "invalid UTC offset in ts"),
        ("2026-08-27T10:00:00+18:01", "invalid UTC offset in ts"),
        ("infinity", "unparsable time ts"),
        ("-infinity", "unparsable time ts"),
        ("epoch", "unparsable time ts"),
        ("now", "unparsable time ts"),
        ("today", "unparsable time ts"),
        ("2026-02-30T10:00:00Z", "unparsable time ts"),
        ("9999-12-31T23:00:00-05:00", "time out of range ts (years 0001-9999 UTC)"),
        ("1787824800", "epoch number in ts but [timestamp] unit is iso8601"),
    ],
)
def test_a_time_that_cannot_be_read_exactly_is_quarantined_with_its_reason(tmp_path, value, reason):
    assert _one(tmp_path, t=value) == (None, reason)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-08-27T23:59:60Z", _utc(2026, 8, 27, 23, 59, 59, 999999)),  # leap second
        ("2026-08-28T01:59:60.5+02:00", _utc(2026, 8, 27, 23, 59, 59, 999999)),
        ("2026-08-27t10:00:00z", _utc(2026, 8, 27, 10)),
        ("2026-08-27T10:00:00,25Z", _utc(2026, 8, 27, 10, 0, 0, 250000)),
        ("2026-08-27 10:00:00 UTC", _utc(2026, 8, 27, 10)),
        ("2026-08-27T15:45:00+05:45", _utc(2026, 8, 27, 10)),
        ("2026-08-28T04:00:00+18:00", _utc(2026, 8, 27, 10)),
        ("0001-01-01T00:00:00Z", _utc(1, 1, 1)),
        ("9999-12-31T23:59:59.999999Z", _utc(9999, 12, 31, 23, 59, 59, 999999)),
    ],
)
def test_a_valid_time_form_is_read_as_its_utc_instant(tmp_path, value, expected):
    loaded, reason = _one(tmp_path, t=value)
    assert reason is None
    assert loaded[0] == expected


# 2026-08-27T10:00:00Z = 1787824800 s
@pytest.mark.parametrize(
    ("unit", "value"),
    [
        ("s", 1787824800123),  # milliseconds under unit s: year ~58,600
        ("ms", 1787824800),  # seconds under unit ms: 1970-01-21
        ("ms", 1787824800123456),  # microseconds under unit ms
        ("us", 1787824800123),  # milliseconds under unit us: 1970-01-21
        ("s", 0),
        ("s", -1787824800),
    ],
)
def test_an_epoch_whose_magnitude_contradicts_the_unit_is_quarantined(tmp_path, unit, value):
    reason = f"implausible epoch ts for unit {unit} (not within 2000-2100 UTC)"
    assert _one(tmp_path, unit=unit, t=value) == (None, reason)


@pytest.mark.parametrize(
    ("unit", "value"),
    [("s", 1787824800), ("ms", 1787824800000), ("us", 1787824800000000), ("s", "1787824800")],
)
def test_an_epoch_in_its_unit_is_loaded(tmp_path, unit, value):
    assert _one(tmp_path, unit=unit, t=value)[0][0] == _utc(2026, 8, 27, 10)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (681280.5, "fractional token count prompt_tokens"),  # must not round to 681281
        ("681280.5", "fractional token count prompt_tokens"),
        ("5e-1", "fractional token count prompt_tokens"),
        ("0x10", "non-numeric token count prompt_tokens"),
        ("1_000", "non-numeric token count prompt_tokens"),
        ("NaN", "non-numeric token count prompt_tokens"),
        # 2^40 tokens is no prompt (context windows are ~1e7): refused before any sum
        (2**40, "implausible token count prompt_tokens (2^40 or more)"),
        (2**63 - 1, "implausible token count prompt_tokens (2^40 or more)"),
        (2**63, "out-of-range token count prompt_tokens"),
        (str(2**64), "out-of-range token count prompt_tokens"),
        (1e300, "out-of-range token count prompt_tokens"),
    ],
)
def test_a_token_count_that_is_not_exactly_an_integer_is_quarantined(tmp_path, value, reason):
    assert _one(tmp_path, n=value) == (None, reason)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("700000", 700000), (700000.0, 700000), ("+12", 12), ("1e3", 1000), (2**40 - 1, 2**40 - 1)],
)
def test_an_integral_token_count_is_loaded_exactly(tmp_path, value, expected):
    assert _one(tmp_path, n=value)[0][1] == expected


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (200.5, "fractional status"),
        ("0x1F", "non-numeric status"),
        (2**31, "out-of-range status"),
    ],
)
def test_a_status_that_is_not_exactly_an_integer_is_quarantined(tmp_path, value, reason):
    assert _one(tmp_path, status=value) == (None, reason)


def _record(i: int, **fields: object) -> bytes:
    record = {
        "request_id": f"r{i}",
        "ts": "2026-08-27T10:00:00Z",
        "account_id": "a",
        "model": "m",
        "prompt_tokens": i,
        "prompt": "secret prompt text",
    }
    record.update(fields)
    return json.dumps(record).encode()


def _ingest_bytes(tmp_path: Path, name: str, data: bytes) -> tuple[list, list]:
    """Ingest `data` as file `name` (canonical profile): (loaded ids and rows, quarantine)."""
    log = tmp_path / name
    log.write_bytes(data)
    db = tmp_path / "c.duckdb"
    ingest([log], db, profile="canonical", allow_empty=True)  # all may be quarantined
    loaded = db_rows(db, "SELECT request_id, source_row FROM requests ORDER BY source_row")
    quarantined = db_rows(db, "SELECT row, reason, raw FROM quarantine ORDER BY row")
    return loaded, quarantined


def test_an_invalid_utf8_line_is_quarantined_and_the_rest_of_the_file_loads(tmp_path):
    bad = _record(2).replace(b"secret", b"secr\xff\xfet")
    data = _record(1) + b"\n" + bad + b"\n" + _record(3)
    loaded, quarantined = _ingest_bytes(tmp_path, "u.jsonl", data)
    assert loaded == [("r1", 1), ("r3", 3)]
    assert quarantined == [(2, "invalid UTF-8", f'{{"bytes":{len(bad)}}}')]


def test_an_invalid_utf8_line_in_a_gzip_stream_is_quarantined(tmp_path):
    data = gzip.compress(_record(1) + b"\n\xc3\n" + _record(3) + b"\n")
    loaded, quarantined = _ingest_bytes(tmp_path, "u.jsonl.gz", data)
    assert loaded == [("r1", 1), ("r3", 3)]
    assert quarantined == [(2, "invalid UTF-8", '{"bytes":1}')]


def test_a_line_over_the_size_limit_is_quarantined_not_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr(inputfile, "MAX_LINE_SIZE", 1000)
    long = _record(2, prompt="x" * 2000)
    loaded, quarantined = _ingest_bytes(
        tmp_path, "l.jsonl", _record(1) + b"\n" + long + b"\n" + _record(3) + b"\n"
    )
    assert loaded == [("r1", 1), ("r3", 3)]
    assert quarantined == [(2, "line longer than 1000 bytes", f'{{"bytes":{len(long)}}}')]


def test_source_row_is_the_physical_line_in_crlf_and_mixed_files(tmp_path):
    # lines: 1 r1 CRLF, 2 r2 LF, 3 blank CRLF, 4 r4 LF, 5 blank LF, 6 r6 CRLF, 7 r7 with a
    # lone CR as JSON whitespace, 8 r8 (no line end)
    data = (
        _record(1) + b"\r\n" + _record(2) + b"\n\r\n" + _record(4) + b"\n\n" + _record(6)
        + b"\r\n" + _record(7).replace(b", ", b",\r", 1) + b"\n" + _record(8)
    )  # fmt: skip
    loaded, quarantined = _ingest_bytes(tmp_path, "m.jsonl", data)
    assert loaded == [("r1", 1), ("r2", 2), ("r4", 4), ("r6", 6), ("r7", 7), ("r8", 8)]
    assert quarantined == []


def test_source_row_is_the_physical_line_in_a_crlf_file(tmp_path):
    data = b"\r\n".join([_record(1), b"", _record(3, prompt_tokens=-3), _record(4)]) + b"\r\n"
    loaded, quarantined = _ingest_bytes(tmp_path, "w.jsonl", data)
    assert loaded == [("r1", 1), ("r4", 4)]
    assert [q[:2] for q in quarantined] == [(3, "negative token count prompt_tokens")]


def test_a_csv_row_with_invalid_utf8_is_quarantined_not_the_file(tmp_path):
    header = b"request_id,ts,account_id,model,prompt_tokens,prompt\n"
    rows = [
        b"c1,2026-08-27T10:00:00Z,a,m,5,hello\n",
        b"c2,2026-08-27T10:00:00Z,a,m,5,secr\xffet\n",
        b"c3,2026-08-27T10:00:00Z,a,m,5,world\n",
    ]
    loaded, quarantined = _ingest_bytes(tmp_path, "u.csv", header + b"".join(rows))
    assert loaded == [("c1", 2), ("c3", 4)]
    assert quarantined == [(3, "invalid UTF-8", f'{{"bytes":{len(rows[1]) - 1}}}')]


def test_quarantine_keeps_only_the_mapped_values_never_prompt_text(tmp_path):
    torn = b'{"request_id": "r2", "prompt": "secret prompt text", "ts": '
    data = b"\n".join(
        [
            _record(1, prompt_tokens=681280.5),
            torn,
            _record(3),
            _record(3, prompt_tokens=4),  # conflicting duplicate
        ]
    )
    loaded, quarantined = _ingest_bytes(tmp_path, "p.jsonl", data)
    assert [row for _id, row in loaded] == [3]
    assert all("secret" not in (raw or "") for _row, _reason, raw in quarantined)
    mapped = {"request_id": "r1", "ts": "2026-08-27T10:00:00Z", "account_id": "a", "model": "m"}
    assert [(row, reason, json.loads(raw)) for row, reason, raw in quarantined] == [
        (1, "fractional token count prompt_tokens", {**mapped, "prompt_tokens": 681280.5}),
        (2, "invalid JSON", {"bytes": len(torn)}),  # no text: it may hold a prompt
        (4, "conflicting duplicate", {**mapped, "request_id": "r3", "prompt_tokens": 4}),
    ]


def test_typed_parquet_columns_load_as_they_are_or_are_quarantined_when_out_of_range(tmp_path):
    # ts TIMESTAMPTZ, ts_end naive TIMESTAMP (read in the mapping's zone, New York: -04:00 in
    # August), counts INTEGER/UBIGINT, status BIGINT: no round trip through text
    log = tmp_path / "typed.parquet"
    write_parquet(
        log,
        "SELECT * FROM (VALUES "
        "('p1', TIMESTAMPTZ '2026-08-27 10:00:00+00', TIMESTAMP '2026-08-27 06:00:05', "
        "  5::INTEGER, 3::UBIGINT, 404::BIGINT), "
        "('p2', TIMESTAMPTZ '2026-08-27 10:00:00+00', NULL, 5, 3, 1099511627776), "
        "('p3', TIMESTAMPTZ '2026-08-27 10:00:00+00', NULL, 5, 9223372036854775808, 200), "
        "('p4', TIMESTAMPTZ 'infinity', NULL, 5, 3, 200), "
        "('p5', NULL, NULL, 5, 3, 200)"
        ") AS t(id, t, t_end, n, c, st)",
    )
    mapping = tmp_path / "typed.mapping.toml"
    mapping.write_text(
        '[fields]\nrequest_id = "id"\nts = "t"\nts_end = "t_end"\naccount_id = { const = "a" }\n'
        'model = { const = "m" }\nprompt_tokens = "n"\ncompletion_tokens = "c"\n'
        'status = "st"\n[timestamp]\ntimezone = "America/New_York"\n'
    )
    db = tmp_path / "t.duckdb"
    ingest([log], db, mapping=mapping)
    assert db_rows(db, "SELECT request_id, ts, ts_end, prompt_tokens, completion_tokens, status "
                 "FROM requests") == [
        ("p1", _utc(2026, 8, 27, 10), _utc(2026, 8, 27, 10, 0, 5), 5, 3, 404)
    ]  # fmt: skip
    assert db_rows(db, "SELECT row, reason FROM quarantine ORDER BY row") == [
        (2, "out-of-range status"),
        (3, "out-of-range token count completion_tokens"),
        (4, "time out of range ts (years 0001-9999 UTC)"),
        (5, "missing required field ts"),
    ]


def test_a_crlf_csv_row_with_invalid_utf8_is_quarantined_at_its_line(tmp_path):
    data = (
        b"request_id,ts,account_id,model,prompt_tokens\r\n"
        b"c1,2026-08-27T10:00:00Z,a,m,5\r\n"
        b"c2,2026-08-27T10:00:00Z,a\xff,m,5\r\n"
        b"c3,2026-08-27T10:00:00Z,a,m,7\r\n"
    )
    loaded, quarantined = _ingest_bytes(tmp_path, "w.csv", data)
    assert loaded == [("c1", 2), ("c3", 4)]
    assert quarantined == [(3, "invalid UTF-8", '{"bytes":30}')]


TEXT_VALUES = [  # (id, t, acct, model): spaces around a text value are cut, inside kept
    (" r1 ", "2026-08-27T10:00:00Z", "a b", "m  "),
    ("r2", " 2026-08-27T10:00:01Z  ", "   ", "m"),
    ("r 3", "2026-08-27T10:00:02Z", "  a", " m m "),
    ("r4", "2026-08-27 10:00:03Z", "a", "m"),
    ("r5", "2026-08-27T10:00:04Z", "a", ""),
]


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_text_values_are_read_with_the_spaces_around_them_cut(tmp_path, fmt):
    # by hand: r1 -> 'r1', 'a b', 'm'; r2's account is only spaces (missing); r 3 keeps its
    # inner spaces ('r 3', 'a', 'm m'), r4 its time's; r5's model is empty (missing)
    log = tmp_path / f"text.{fmt}"
    if fmt == "jsonl":
        log.write_text(
            "".join(
                json.dumps({"id": i, "t": t, "acct": a, "model": m, "n": 1, "status": 200}) + "\n"
                for i, t, a, m in TEXT_VALUES
            )
        )
    else:
        con = duckdb.connect()
        con.execute("CREATE TABLE t (id VARCHAR, t VARCHAR, acct VARCHAR, model VARCHAR)")
        con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", TEXT_VALUES)
        con.execute(
            "COPY (SELECT *, 1 AS n, 200 AS status FROM t ORDER BY rowid) TO '"
            + str(log)
            + "' (FORMAT parquet)"
        )
        con.close()
    mapping = tmp_path / "text.mapping.toml"
    mapping.write_text(MAPPING.format(unit="iso8601"))
    db = tmp_path / "text.duckdb"
    ingest([log], db, mapping=mapping)
    assert db_rows(db, "SELECT request_id, ts, account_id, model FROM requests ORDER BY 1") == [
        ("r 3", _utc(2026, 8, 27, 10, 0, 2), "a", "m m"),
        ("r1", _utc(2026, 8, 27, 10), "a b", "m"),
        ("r4", _utc(2026, 8, 27, 10, 0, 3), "a", "m"),
    ]
    assert db_rows(db, "SELECT row, reason FROM quarantine ORDER BY row") == [
        (2, "missing required field account_id"),
        (5, "missing required field model"),
    ]


def test_only_fields_given_as_text_are_parsed_and_the_id_pass_reads_the_id_alone(tmp_path):
    from forensics.engines import DuckDBEngine
    from forensics.ingest import ingest_into

    # ts typed (TIMESTAMPTZ), ts_end as text, the counts and status as integers: the load
    # parses ts_end's text and nothing else (planning a parser costs each statement ms)
    log = tmp_path / "mixed.parquet"
    write_parquet(
        log,
        "SELECT 'p1' AS id, TIMESTAMPTZ '2026-08-27 10:00:00+00' AS t, "
        "'2026-08-27T10:00:05+00:00' AS t_end, 5 AS n, 3 AS c, 200 AS st",
    )
    mapping = tmp_path / "mixed.mapping.toml"
    mapping.write_text(
        '[fields]\nrequest_id = "id"\nts = "t"\nts_end = "t_end"\naccount_id = { const = "a" }\n'
        'model = { const = "m" }\nprompt_tokens = "n"\ncompletion_tokens = "c"\nstatus = "st"\n'
    )
    with DuckDBEngine(tmp_path / "c.duckdb") as engine:
        engine.execute("CALL enable_logging('QueryLog')")
        ingest_into(engine, [log], mapping=mapping)
        logged = [
            q for (q,) in engine.rows("SELECT message FROM duckdb_logs WHERE type = 'QueryLog'")
        ]
        loaded = engine.rows("SELECT request_id, ts, ts_end, prompt_tokens, status FROM requests")
    (load,) = [q for q in logged if q.startswith("INSERT INTO requests")]
    assert "_ing_time(v_ts_end" in load
    assert "_ing_time(v_ts," not in load and "_ing_int(" not in load
    (ids,) = [q for q in logged if q.startswith('CREATE OR REPLACE TEMP TABLE "_ing_ids"')]
    assert "v_ts" not in ids and "json_object" not in ids
    assert loaded == [("p1", _utc(2026, 8, 27, 10), _utc(2026, 8, 27, 10, 0, 5), 5, 200)]
