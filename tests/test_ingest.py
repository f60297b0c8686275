"""Ingest: every record loaded, counted as a duplicate, or quarantined (counts by hand)."""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest
from dbrows import rows as db_rows

from forensics.errors import InputError
from forensics.ingest import ingest

CANON = Path(__file__).parent / "fixtures" / "ingest"


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
    assert db_rows(tmp_path / "c.duckdb", "SELECT row, reason FROM quarantine ORDER BY row") == [
        (5, "negative token count prompt_tokens"),
        (6, "unparsable time ts"),
        (7, "invalid CSV row (11 fields where the header has 10)"),
        (8, "conflicting duplicate"),
    ]


def test_canonical_csv_keeps_first_occurrence_and_leaves_a_missing_status_null(tmp_path):
    # r2 gives no status: stored as NULL (the analysis reads it as 200 and puts an exposed
    # response without one on the range's minimum), never as a recorded 200
    ingest([CANON / "canonical.csv"], tmp_path / "c.duckdb", profile="canonical")
    rows = db_rows(
        tmp_path / "c.duckdb",
        "SELECT request_id, ts, prompt_tokens, status, source_row FROM requests ORDER BY 1",
    )
    assert rows == [
        ("r1", datetime(2026, 8, 27, 10, 0, tzinfo=UTC), 100, 200, 2),
        ("r2", datetime(2026, 8, 27, 9, 0, tzinfo=UTC), 700000, None, 3),
    ]


@pytest.mark.parametrize("name", ["canonical.jsonl", "canonical.parquet"])
def test_canonical_profile_reads_jsonl_and_parquet(tmp_path, name):
    report = ingest([CANON / name], tmp_path / "c.duckdb", profile="canonical")
    assert report.totals()["rows_loaded"] == 2
    rows = db_rows(
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


GATEWAY = CANON / "gateway.jsonl.gz"
GATEWAY_MAP = CANON / "gateway.mapping.toml"


@pytest.mark.parametrize("name", ["gateway.jsonl.gz", "gateway.jsonl.zst"])
def test_gateway_log_accounts_for_every_record(tmp_path, name):
    # 14 lines, one blank (not a record) -> 13 records. Loaded: g1 (l1), g2 (l2), g4 (l5),
    # g8 (l13). Duplicates: g1 again (l3, l12). Quarantined: torn (l4, l10), g2 with other
    # tokens (l7), negative tokens (l8), unparsable time (l9), no account (l11), tokens "abc"
    # (l14).
    report = ingest([CANON / name], tmp_path / "g.duckdb", mapping=GATEWAY_MAP)
    assert report.totals() == {
        "rows_read": 13,
        "rows_loaded": 4,
        "duplicates": 2,
        "quarantined": 7,
    }
    assert db_rows(tmp_path / "g.duckdb", "SELECT row, reason FROM quarantine ORDER BY row") == [
        (4, "invalid JSON"),
        (7, "conflicting duplicate"),
        (8, "negative token count prompt_tokens"),
        (9, "unparsable time ts"),
        (10, "invalid JSON"),
        (11, "missing required field account_id"),
        (14, "non-numeric token count completion_tokens"),
    ]


def test_gateway_times_offsets_sql_end_and_extra(tmp_path):
    ingest([GATEWAY], tmp_path / "g.duckdb", mapping=GATEWAY_MAP)
    rows = db_rows(
        tmp_path / "g.duckdb",
        "SELECT request_id, ts, ts_end, status, extra->>'bootstrap_room', source_row "
        "FROM requests ORDER BY request_id",
    )
    assert rows == [
        # +00:00, latency 1500 ms
        ("g1", _utc(10, 0, 0, 123000), _utc(10, 0, 1, 623000), 200, "111", 1),
        # 06:00 at -04:00 is 10:00Z, latency 250 ms
        ("g2", _utc(10, 0, 0), _utc(10, 0, 0, 250000), 200, "222", 2),
        # 19:30 at +05:30 is 14:00Z; no status -> NULL (the analysis reads it as 200); no
        # latency -> no end
        ("g4", _utc(14, 0, 0), None, None, "444", 5),
        # 9 fractional digits, cut to microseconds
        ("g8", _utc(12, 0, 0, 123456), _utc(12, 0, 0, 133456), 400, "888", 13),
    ]


def test_prompt_text_is_never_loaded(tmp_path):
    ingest([GATEWAY], tmp_path / "g.duckdb", mapping=GATEWAY_MAP)
    cols = [r[0] for r in db_rows(tmp_path / "g.duckdb", "DESCRIBE requests")]
    assert "prompt" not in cols
    assert db_rows(
        tmp_path / "g.duckdb", "SELECT count(*) FROM requests WHERE extra::VARCHAR LIKE '%never%'"
    ) == [(0,)]


def _utc(h: int, m: int, s: int, us: int = 0) -> datetime:
    return datetime(2026, 8, 27, h, m, s, us, tzinfo=UTC)


def test_trace_csv_without_id_or_account(tmp_path):
    # 4 data rows (lines 2-5); line 4 has ContextTokens "n/a". 7 fractional digits are cut
    # to microseconds; ids derive from the file's sha256 and the line number.
    report = ingest(
        [CANON / "trace.csv"], tmp_path / "t.duckdb", mapping=CANON / "trace.mapping.toml"
    )
    assert report.totals() == {"rows_read": 4, "rows_loaded": 3, "duplicates": 0, "quarantined": 1}
    prefix = hashlib.sha256((CANON / "trace.csv").read_bytes()).hexdigest()[:16]
    rows = db_rows(
        tmp_path / "t.duckdb",
        "SELECT request_id, ts, account_id, prompt_tokens, completion_tokens "
        "FROM requests ORDER BY source_row",
    )
    assert rows == [
        (
            f"{prefix}:2",
            datetime(2023, 11, 16, 18, 15, 46, 680590, tzinfo=UTC),
            "public-trace",
            4808,
            10,
        ),
        (
            f"{prefix}:3",
            datetime(2023, 11, 16, 18, 15, 50, 995169, tzinfo=UTC),
            "public-trace",
            3180,
            8,
        ),
        (
            f"{prefix}:5",
            datetime(2023, 11, 16, 18, 15, 52, 123456, tzinfo=UTC),
            "public-trace",
            110,
            None,
        ),
    ]
    assert db_rows(tmp_path / "t.duckdb", "SELECT row, reason FROM quarantine") == [
        (4, "non-numeric token count prompt_tokens")
    ]


# 2026-08-27T10:00:00Z is epoch 1787824800 (date -u -d ... +%s).
TIME_FORMS = [
    ("iso8601", "UTC", "2026-08-27T10:00:00Z", _utc(10, 0, 0)),
    ("iso8601", "UTC", "2026-08-27T12:00:00+02:00", _utc(10, 0, 0)),
    ("iso8601", "UTC", "2026-08-27T05:30:00-0430", _utc(10, 0, 0)),
    ("iso8601", "UTC", "2026-08-27 10:00:00.123456789Z", _utc(10, 0, 0, 123456)),
    ("iso8601", "UTC", "2026-08-27T10:00:00.1234567+00:00", _utc(10, 0, 0, 123456)),
    ("iso8601", "UTC", "2026-08-27T10:00:00", _utc(10, 0, 0)),
    ("iso8601", "America/New_York", "2026-08-27T06:00:00", _utc(10, 0, 0)),
    ("iso8601", "Asia/Kolkata", "2026-08-27 15:30:00.5", _utc(10, 0, 0, 500000)),
    ("s", "UTC", 1787824800, _utc(10, 0, 0)),
    ("s", "UTC", 1787824800.25, _utc(10, 0, 0, 250000)),
    ("s", "UTC", "1787824800", _utc(10, 0, 0)),
    ("ms", "UTC", 1787824800123, _utc(10, 0, 0, 123000)),
    ("us", "UTC", 1787824800123456, _utc(10, 0, 0, 123456)),
]


@pytest.mark.parametrize(("unit", "zone", "value", "expected"), TIME_FORMS)
def test_every_time_form_becomes_the_utc_instant(tmp_path, unit, zone, value, expected):
    log = tmp_path / "one.jsonl"
    record = {"id": "x", "t": value, "acct": "a", "model": "m", "n": 1}
    log.write_text(json.dumps(record) + "\n")
    mapping = tmp_path / "one.mapping.toml"
    mapping.write_text(
        '[fields]\nrequest_id = "id"\nts = "t"\naccount_id = "acct"\nmodel = "model"\n'
        f'prompt_tokens = "n"\n[timestamp]\nunit = "{unit}"\ntimezone = "{zone}"\n'
    )
    ingest([log], tmp_path / "one.duckdb", mapping=mapping)
    assert db_rows(tmp_path / "one.duckdb", "SELECT ts FROM requests") == [(expected,)]


def test_reingesting_the_same_input_changes_nothing(tmp_path):
    db = tmp_path / "g.duckdb"
    ingest([GATEWAY], db, mapping=GATEWAY_MAP)
    counts = "SELECT (SELECT count(*) FROM requests), (SELECT count(*) FROM quarantine)"
    before = db_rows(db, counts)
    again = ingest([GATEWAY], db, mapping=GATEWAY_MAP)
    # this call loaded nothing: zeros; the first load's figures (as in
    # test_gateway_log_accounts_for_every_record) in the note
    assert again.totals() == dict.fromkeys(again.totals(), 0)
    assert again.inputs[0].note == (
        "already ingested (same sha256): nothing changed (then: 13 read, 4 loaded, "
        "2 duplicates, 7 quarantined)"
    )
    assert any("already ingested" in w for w in again.warnings)
    assert db_rows(db, counts) == before == [(4, 7)]
    assert db_rows(db, "SELECT count(*) FROM inputs") == [(1,)]


def test_a_later_input_duplicates_or_conflicts_with_loaded_records(tmp_path):
    # canonical.jsonl loads j1, j2; the second file repeats j1 exactly and j2 with other tokens
    later = tmp_path / "later.jsonl"
    lines = (CANON / "canonical.jsonl").read_text().splitlines()
    later.write_text(lines[0] + "\n" + lines[1].replace("700000", "700001") + "\n")
    report = ingest([CANON / "canonical.jsonl", later], tmp_path / "c.duckdb", profile="canonical")
    assert [(s.rows_read, s.rows_loaded, s.duplicates, s.quarantined) for s in report.inputs] == [
        (2, 2, 0, 0),
        (2, 0, 1, 1),
    ]
    assert db_rows(
        tmp_path / "c.duckdb", "SELECT prompt_tokens FROM requests WHERE request_id = 'j2'"
    ) == [(700000,)]


def test_folder_and_glob_inputs(tmp_path):
    report = ingest([str(CANON / "canonical.*")], tmp_path / "c.duckdb", profile="canonical")
    # canonical.csv (r ids), canonical.jsonl and canonical.parquet (same j1, j2 content)
    assert [Path(s.path).name for s in report.inputs] == [
        "canonical.csv",
        "canonical.jsonl",
        "canonical.parquet",
    ]
    assert report.totals() == {"rows_read": 11, "rows_loaded": 4, "duplicates": 3, "quarantined": 4}


def test_truncated_gzip_loads_the_records_before_the_break(tmp_path):
    # member 1: three whole records; member 2 cut 2 bytes into its data, from which zlib gives
    # its first byte, `{`: a record the break cuts, quarantined at line 4 with its length (1)
    good = "".join(
        json.dumps(
            {
                "request_id": f"t{i}",
                "ts": "2026-08-27T10:00:00Z",
                "account_id": "a",
                "model": "m",
                "prompt_tokens": i,
            }
        )
        + "\n"
        for i in range(3)
    ).encode()
    tail = gzip.compress(b'{"request_id": "t9", "ts": "2026-08-27T10:00:00Z"}\n' * 50)
    log = tmp_path / "cut.jsonl.gz"
    log.write_bytes(gzip.compress(good) + tail[:12])
    report = ingest([log], tmp_path / "c.duckdb", profile="canonical")
    assert report.totals() == {"rows_read": 4, "rows_loaded": 3, "duplicates": 0, "quarantined": 1}
    assert db_rows(tmp_path / "c.duckdb", "SELECT row, reason, raw FROM quarantine") == [
        (4, "truncated record: the gzip stream breaks off inside it", '{"bytes":1}')
    ]
    assert "truncated gzip" in (report.inputs[0].note or "")
    assert any("truncated gzip" in w for w in report.warnings)
    assert db_rows(tmp_path / "c.duckdb", "SELECT note LIKE 'truncated gzip%' FROM inputs") == [
        (True,)
    ]


def test_to_parquet_writes_day_and_model_partitions(tmp_path):
    out = tmp_path / "pq"
    ingest([GATEWAY], tmp_path / "g.duckdb", mapping=GATEWAY_MAP, to_parquet=out)
    files = sorted(p.relative_to(out).parts[:2] for p in out.rglob("*.parquet"))
    assert files == [("day=2026-08-27", "model=%40cf%2Fzai-org%2Fglm-5.3")]
    con = duckdb.connect()
    count = con.execute(
        "SELECT count(*) FROM read_parquet($g, hive_partitioning = true)",
        {"g": f"{out}/**/*.parquet"},
    ).fetchone()
    assert count == (4,)


def test_openai_profile(tmp_path):
    log = tmp_path / "openai.jsonl"
    log.write_text(
        '{"id": "chatcmpl-1", "created": 1787824800, "model": "m", "user": "u1",'
        ' "usage": {"prompt_tokens": 12, "completion_tokens": 3}}\n'
    )
    ingest([log], tmp_path / "o.duckdb", profile="openai")
    assert db_rows(
        tmp_path / "o.duckdb",
        "SELECT request_id, ts, account_id, prompt_tokens, completion_tokens, status FROM requests",
    ) == [("chatcmpl-1", _utc(10, 0, 0), "u1", 12, 3, None)]  # no status given: NULL


def test_failed_first_ingest_leaves_no_database(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(InputError):
        ingest([empty], tmp_path / "new.duckdb", profile="canonical")
    assert not (tmp_path / "new.duckdb").exists()


def test_a_parquet_input_is_recorded_under_the_sha256_of_its_bytes(tmp_path):
    # hashed on a thread of its own while the database opens (inputfile.Prehash)
    ingest([CANON / "canonical.parquet"], tmp_path / "c.duckdb", profile="canonical")
    expected = hashlib.sha256((CANON / "canonical.parquet").read_bytes()).hexdigest()
    assert db_rows(tmp_path / "c.duckdb", "SELECT sha256 FROM inputs") == [(expected,)]


def test_the_prehash_gives_parquet_inputs_their_sha256_and_leaves_the_rest_to_prepare():
    from forensics.ingest.inputfile import Prehash
    from forensics.mapping import profile

    parquet, csv = CANON / "canonical.parquet", CANON / "canonical.csv"
    prehash = Prehash([csv, parquet], profile("canonical"))
    try:
        assert prehash.take(csv) is None  # the line checks hash it as they read it
        assert prehash.take(parquet) == hashlib.sha256(parquet.read_bytes()).hexdigest()
        assert prehash.take(parquet) is None  # taken once
    finally:
        prehash.close()


def test_a_stopped_prehash_leaves_prepare_to_hash_the_file(tmp_path):
    from forensics.ingest.inputfile import Prehash, hash_file, prepare
    from forensics.mapping import profile

    stop = threading.Event()
    stop.set()
    with pytest.raises(InterruptedError):
        hash_file(CANON / "canonical.parquet", stop=stop)
    big = tmp_path / "big.parquet"  # several chunks: the stop lands inside it or before
    big.write_bytes((CANON / "canonical.parquet").read_bytes() + b"\0" * (8 << 20))
    prehash = Prehash([big], profile("canonical"))
    prehash.close()
    p = prepare(big, profile("canonical"), tmp_path, prehash)
    assert p.sha256 == hashlib.sha256(big.read_bytes()).hexdigest()


def test_a_prehash_whose_hashing_fails_leaves_prepare_to_hash_the_file(monkeypatch):
    from forensics.ingest import inputfile
    from forensics.mapping import profile

    def broken(*args, **kwargs):
        raise RuntimeError("not an OSError")

    parquet = CANON / "canonical.parquet"
    monkeypatch.setattr(inputfile, "hash_file", broken)
    prehash = inputfile.Prehash([parquet], profile("canonical"))
    taken: list[str | None] = []
    waiter = threading.Thread(target=lambda: taken.append(prehash.take(parquet)), daemon=True)
    waiter.start()
    waiter.join(timeout=30)  # a take() that waited for ever would fail here, not hang
    prehash.close()
    assert taken == [None]
