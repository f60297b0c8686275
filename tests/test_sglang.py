"""SGLang server logs: every line spelling, malformed lines, accounting, idempotency."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from forensics.engines import DuckDBEngine
from forensics.errors import InputError
from forensics.ingest import sglang

LOGS = Path(__file__).parent / "fixtures" / "sglang"


def _ingest(*names: str, **kw) -> DuckDBEngine:
    engine = DuckDBEngine()
    sglang.ingest_logs(engine, [LOGS / n for n in names], **kw)
    return engine


def _write(tmp_path: Path, name: str, *lines: str) -> Path:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def test_prefill_log_accounts_for_every_line():
    stats = sglang.ingest_logs(DuckDBEngine(), [LOGS / "prefill-0.log"])
    (s,) = stats
    # 22 lines: 16 evidence lines loaded, 2 malformed, 4 other (server_args, load, blank, stop)
    assert (s.rows_read, s.rows_loaded, s.quarantined, s.duplicates) == (18, 16, 2, 0)
    assert s.note == "lines=22 other=4"
    assert s.format == "sglang"


def test_spellings_log_accounts_for_every_line():
    (s,) = sglang.ingest_logs(DuckDBEngine(), [LOGS / "spellings.log"])
    assert (s.rows_read, s.rows_loaded, s.quarantined) == (17, 10, 7)
    assert s.note == "lines=18 other=1"


def test_inputs_row_is_recorded_with_sha256():
    engine = _ingest("decode-0.log")
    row = engine.rows("SELECT path, rows_read, rows_loaded, quarantined, format FROM inputs")
    assert row == [(str(LOGS / "decode-0.log"), 8, 8, 0, "sglang")]


def test_second_ingest_of_same_file_changes_nothing():
    engine = _ingest("prefill-0.log")
    (again,) = sglang.ingest_logs(engine, [LOGS / "prefill-0.log"])
    assert again.note == "already ingested (same sha256): nothing changed"
    assert engine.scalar("SELECT count(*) FROM engine_requests") == 6
    assert engine.scalar("SELECT count(*) FROM inputs") == 1


def test_malformed_lines_are_quarantined_with_reasons():
    engine = _ingest("prefill-0.log", "spellings.log")
    got = engine.rows("SELECT source, row, reason FROM quarantine ORDER BY source, row")
    p, s = str(LOGS / "prefill-0.log"), str(LOGS / "spellings.log")
    assert got == [
        (p, 14, "ReqTimeStats line without bootstrap_room"),
        (p, 15, "KV Cache line without #tokens"),
        (s, 10, "ReqTimeStats line without type"),
        (s, 11, "ReqTimeStats line without input_len"),
        (s, 12, "ReqTimeStats line without output_len"),
        (s, 13, "capacity abort line without rid and token counts"),
        (s, 14, "request log line is not valid JSON"),
        (s, 15, "Finish line without prompt_tokens/completion_tokens"),
        (s, 16, "no [YYYY-MM-DD HH:MM:SS] time on an engine evidence line"),
    ]


def test_quarantine_never_keeps_request_log_text():
    engine = _ingest("spellings.log")
    raws = engine.rows("SELECT raw FROM quarantine WHERE row IN (14, 15)")
    assert raws == [(None,), (None,)]
    assert engine.scalar("SELECT count(*) FROM quarantine WHERE raw LIKE '%secret%'") == 0


def test_new_and_old_req_time_stats_spellings_parse():
    engine = _ingest("prefill-0.log")
    got = engine.rows(
        "SELECT rid, bootstrap_room, input_len, output_len, role, ts FROM engine_requests "
        "WHERE rid IN ('p-aaa', 'p-ccc') ORDER BY rid"
    )
    assert got == [
        ("p-aaa", 1001, 200000, 1, "prefill", datetime(2026, 8, 27, 1, 0, tzinfo=UTC)),
        ("p-ccc", 1003, 1, 1, "prefill", datetime(2026, 8, 27, 3, 0, 0, 250000, tzinfo=UTC)),
    ]


def test_bootstrap_room_none_is_null():
    engine = _ingest("spellings.log")
    assert engine.rows("SELECT bootstrap_room FROM engine_requests WHERE rid = 'r-3'") == [(None,)]


def test_finish_and_receive_lines_in_repr_and_json():
    engine = _ingest("spellings.log")
    got = engine.rows(
        "SELECT kind, rid, bootstrap_room, input_len, output_len, finish_reason, ts "
        "FROM engine_requests WHERE kind IN ('finish', 'receive') ORDER BY source_row"
    )
    t = lambda *a: datetime(2026, 8, 27, *a, tzinfo=UTC)  # noqa: E731
    assert got == [
        ("receive", "r-1", 42, None, None, None, t(0, 1, 0)),
        ("finish", "r-1", 42, 150, 7, "stop", t(0, 1, 9)),
        ("receive", "r-2", 43, None, None, None, t(0, 2, 0)),
        ("finish", "r-2", 43, 160, 0, "abort", t(0, 2, 3, 250000)),
    ]


def test_aborts_of_every_kind_parse():
    engine = _ingest("prefill-0.log", "spellings.log")
    got = engine.rows(
        "SELECT kind, rid, bootstrap_room, requested_tokens, max_tokens, role FROM engine_aborts "
        "ORDER BY source, source_row"
    )
    assert got == [
        ("kv_capacity", "p-bbb", 1002, 700000, 681280, "prefill"),
        ("kv_capacity", "p-ddd", 1004, 800000, 681280, "prefill"),
        ("input_length", None, None, 1100000, 1048575, "prefill"),
        ("kv_capacity", "p-ggg", 1007, 690000, 681280, "prefill"),
        ("context_length", None, None, 300, 200, "decode"),
        ("input_length", None, None, 5000, 94, "decode"),
    ]


def test_capacity_spans_one_per_server_start_with_restart():
    engine = _ingest("prefill-0.log", "decode-0.log")
    got = engine.rows(
        "SELECT node, role, tokens, context_len, start_ts, end_ts, source_row "
        "FROM engine_capacity ORDER BY node, start_ts"
    )
    assert got == [
        (
            "decode-0",
            "decode",
            1500000,
            1048576,
            datetime(2026, 8, 27, 0, 0, 40, tzinfo=UTC),
            None,
            2,
        ),
        (
            "prefill-0",
            "prefill",
            681280,
            1048576,
            datetime(2026, 8, 27, 0, 0, 30, tzinfo=UTC),
            datetime(2026, 9, 9, 14, 52, tzinfo=UTC),
            3,
        ),
        (
            "prefill-0",
            "prefill",
            2040000,
            1048576,
            datetime(2026, 9, 9, 14, 52, tzinfo=UTC),
            None,
            20,
        ),
    ]


def test_mla_and_mha_kv_lines_of_one_start_take_the_smallest_pool():
    engine = _ingest("spellings.log")
    assert engine.rows("SELECT tokens, context_len FROM engine_capacity") == [(90, 200)]


def test_max_total_num_tokens_stands_in_when_no_kv_line(tmp_path):
    log = _write(
        tmp_path,
        "node-x.log",
        "[2026-08-27 00:00:03 TP0] max_total_num_tokens=5000, chunked_prefill_size=8192, "
        "max_prefill_tokens=16384, max_running_requests=8, context_len=8192, "
        "available_gpu_mem=1.00 GB",
    )
    engine = DuckDBEngine()
    sglang.ingest_logs(engine, [log], role="decode")
    assert engine.rows("SELECT node, role, tokens FROM engine_capacity") == [
        ("node-x", "decode", 5000)
    ]


def test_same_rank_logging_again_within_a_minute_is_a_new_start(tmp_path):
    kv = "KV Cache is allocated. #tokens: {}, K size: 1.00 GB, V size: 1.00 GB"
    log = _write(
        tmp_path,
        "p.log",
        "[2026-08-27 00:00:00 TP0] " + kv.format(100),
        "[2026-08-27 00:00:20 TP0] " + kv.format(200),
    )
    engine = DuckDBEngine()
    sglang.ingest_logs(engine, [log], role="prefill")
    assert engine.rows("SELECT tokens, end_ts FROM engine_capacity ORDER BY start_ts") == [
        (100, datetime(2026, 8, 27, 0, 0, 20, tzinfo=UTC)),
        (200, None),
    ]


def test_node_option_overrides_file_name_and_gz_is_read(tmp_path):
    import gzip

    p = tmp_path / "prefill-7.log.gz"
    p.write_bytes(gzip.compress((LOGS / "prefill-0.log").read_bytes()))
    assert sglang.node_from_path(p) == "prefill-7"
    engine = DuckDBEngine()
    sglang.ingest_logs(engine, [p], node="pf-a")
    assert engine.rows("SELECT DISTINCT node FROM engine_capacity") == [("pf-a",)]


def test_role_from_req_time_stats_type_when_no_server_args():
    engine = _ingest("spellings.log")
    assert engine.rows("SELECT DISTINCT role FROM engine_capacity") == [("decode",)]


def test_log_with_both_roles_is_refused(tmp_path):
    st = (
        "[2026-08-27 00:00:0{} TP0] ReqTimeStats(rid=r{}, bootstrap_room=1, input_len=2, "
        "cached_input_len=0, output_len=1, type={})"
    )
    log = _write(tmp_path, "mixed.log", st.format(1, 1, "prefill"), st.format(2, 2, "decode"))
    with pytest.raises(InputError, match="both roles"):
        sglang.ingest_logs(DuckDBEngine(), [log])


def test_bad_role_option_is_refused():
    with pytest.raises(InputError, match="unknown engine role"):
        sglang.ingest_logs(DuckDBEngine(), [LOGS / "decode-0.log"], role="router")


def test_a_failing_file_leaves_the_database_unchanged(tmp_path):
    st = (
        "[2026-08-27 00:00:0{} TP0] ReqTimeStats(rid=r{}, bootstrap_room=1, input_len=2, "
        "cached_input_len=0, output_len=1, type={})"
    )
    mixed = _write(tmp_path, "mixed.log", st.format(1, 1, "prefill"), st.format(2, 2, "decode"))
    engine = _ingest("decode-0.log")
    with pytest.raises(InputError, match="both roles"):
        sglang.ingest_logs(engine, [LOGS / "prefill-0.log", mixed])
    # prefill-0.log was read before mixed.log failed: none of it stays
    assert engine.rows("SELECT path FROM inputs") == [(str(LOGS / "decode-0.log"),)]
    assert engine.scalar("SELECT count(*) FROM engine_requests") == 6
    assert engine.scalar("SELECT count(*) FROM quarantine") == 0
    assert engine.rows("SELECT DISTINCT node FROM engine_capacity") == [("decode-0",)]


def test_a_failing_first_ingest_creates_no_tables(tmp_path):
    bad = tmp_path / "broken.log.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00 not really gzip")
    engine = DuckDBEngine()
    with pytest.raises(InputError, match="cannot read as an SGLang log"):
        sglang.ingest_logs(engine, [LOGS / "prefill-0.log", bad])
    assert not engine.table_exists("inputs")
    assert not engine.table_exists("engine_requests")


def test_ingest_dispatch_of_profile_sglang_is_atomic_too(tmp_path):
    from forensics import ingest

    db = tmp_path / "case.duckdb"
    ingest.ingest([LOGS / "decode-0.log"], db, profile="sglang")
    bad = tmp_path / "broken.log.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00 not really gzip")
    with pytest.raises(InputError):
        ingest.ingest([LOGS / "prefill-0.log", bad], db, profile="sglang")
    with DuckDBEngine(db) as engine:
        assert engine.scalar("SELECT count(*) FROM inputs") == 1
        assert engine.scalar("SELECT count(*) FROM engine_requests") == 6
