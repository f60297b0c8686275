"""SGLang server logs: line spellings, malformed and hostile lines, accounting, capacity spans,
idempotency. The per-version fixtures are tested in test_sglang_versions.py."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from forensics.engines import DuckDBEngine
from forensics.errors import InputError
from forensics.ingest import sglang

LOGS = Path(__file__).parent / "fixtures" / "sglang"
KV = "KV Cache is allocated. dtype: torch.bfloat16, #tokens: {}, K size: 1.00 GB, V size: 1.00 GB"
POOL = (
    "max_total_num_tokens={}, chunked_prefill_size=8192, max_prefill_tokens=16384, "
    "max_running_requests=8, context_len={}, available_gpu_mem=1.00 GB"
)


def _ingest(*names: str, **kw) -> DuckDBEngine:
    engine = DuckDBEngine()
    sglang.ingest_logs(engine, [LOGS / n for n in names], **kw)
    return engine


def _write(tmp_path: Path, name: str, *lines: str) -> Path:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def _t(*a: int) -> datetime:
    return datetime(*a, tzinfo=UTC)


# --- accounting ---------------------------------------------------------------------------


def test_prefill_log_accounts_for_every_line():
    (s,) = sglang.ingest_logs(DuckDBEngine(), [LOGS / "prefill-0.log"])
    # 22 lines: 19 evidence lines (2 server_args, 3 KV, 2 capacity, 7 ReqTimeStats, 5 intake
    # rejections), of which 2 are malformed (row 14: no #tokens, row 15: a count over 64
    # bits); 3 other (Load weight, blank, Shutting down)
    assert (s.rows_read, s.rows_loaded, s.duplicates, s.quarantined) == (19, 17, 0, 2)
    assert s.note == "lines=22 other=3"
    assert s.format == "sglang"


def test_spellings_log_accounts_for_every_line():
    (s,) = sglang.ingest_logs(DuckDBEngine(), [LOGS / "spellings.log"])
    # 19 lines, one of them chatter; rows 10-16 malformed
    assert (s.rows_read, s.rows_loaded, s.duplicates, s.quarantined) == (18, 11, 0, 7)
    assert s.note == "lines=19 other=1"


def test_a_repeated_abort_message_is_a_duplicate_not_a_second_abort():
    engine = DuckDBEngine()
    (s,) = sglang.ingest_logs(engine, [LOGS / "edge.log"])
    # 14 lines: 13 evidence lines; row 10 ([http_server] Error: Input length ...) repeats an
    # abort message and names no rid: a duplicate; rows 11-12 hold numbers over 64 bits; the
    # uvicorn access line is other output
    assert (s.rows_read, s.rows_loaded, s.duplicates, s.quarantined) == (13, 10, 1, 2)
    assert s.note == "lines=14 other=1"
    assert engine.scalar("SELECT count(*) FROM engine_aborts WHERE kind = 'input_length'") == 0
    row = engine.rows("SELECT rows_read, rows_loaded, duplicates, quarantined FROM inputs")
    assert row == [(13, 10, 1, 2)]


def test_inputs_row_is_recorded_with_sha256():
    engine = _ingest("decode-0.log")
    row = engine.rows(
        "SELECT path, rows_read, rows_loaded, duplicates, quarantined, format FROM inputs"
    )
    # server_args, 2 KV lines, the capacity line, 6 ReqTimeStats
    assert row == [(str(LOGS / "decode-0.log"), 10, 10, 0, 0, "sglang")]


def test_second_ingest_of_same_file_changes_nothing():
    engine = _ingest("prefill-0.log")
    (again,) = sglang.ingest_logs(engine, [LOGS / "prefill-0.log"])
    # this call read nothing; the earlier figures (as test_prefill_log_accounts_for_every_line)
    assert (again.rows_read, again.rows_loaded, again.quarantined) == (0, 0, 0)
    assert again.note == (
        "already ingested (same sha256): nothing changed (then: 19 read, 17 loaded, "
        "0 duplicates, 2 quarantined)"
    )
    assert engine.scalar("SELECT count(*) FROM engine_requests") == 7
    assert engine.scalar("SELECT count(*) FROM inputs") == 1


# --- malformed and hostile lines ------------------------------------------------------------


def test_malformed_lines_are_quarantined_with_reasons():
    engine = _ingest("prefill-0.log", "spellings.log", "edge.log")
    got = engine.rows("SELECT source, row, reason FROM quarantine ORDER BY source, row")
    e, p, s = str(LOGS / "edge.log"), str(LOGS / "prefill-0.log"), str(LOGS / "spellings.log")
    assert got == [
        (e, 11, "number out of range (#tokens)"),
        (e, 12, "number out of range (bootstrap_room)"),
        (p, 14, "KV Cache line without #tokens"),
        (p, 15, "number out of range (input tokens)"),
        (s, 10, "ReqTimeStats line without type"),
        (s, 11, "ReqTimeStats line without input_len"),
        (s, 12, "ReqTimeStats line without output_len"),
        (s, 13, "capacity abort line without rid and token counts"),
        (s, 14, "request log line is not valid JSON"),
        (s, 15, "Finish line without prompt_tokens/completion_tokens"),
        (s, 16, "no [YYYY-MM-DD HH:MM:SS] time on an engine evidence line"),
    ]


def test_a_number_over_64_bits_never_loads_as_null():
    engine = _ingest("edge.log", "prefill-0.log")
    # edge.log row 11 (#tokens 99999999999999999999) opens no span of its own; row 12's
    # room 18446744073709551615 and prefill-0.log row 15's token count are not loaded; the
    # two quarantined startup lines (edge.log row 11, prefill-0.log row 14) are kept with
    # their reason and no figure
    assert engine.rows(
        "SELECT source_row, reason FROM engine_startup WHERE tokens IS NULL "
        "AND kind <> 'server_args' ORDER BY source, source_row"
    ) == [(11, "number out of range (#tokens)"), (14, "KV Cache line without #tokens")]
    assert engine.scalar("SELECT count(*) FROM engine_requests WHERE rid = 'e-3'") == 0
    assert engine.scalar("SELECT count(*) FROM engine_aborts WHERE rid = 'p-huge'") == 0
    assert engine.rows("SELECT node, tokens FROM engine_capacity WHERE node = 'edge'") == [
        ("edge", 4096)
    ]


def test_quarantine_never_keeps_request_log_text():
    engine = _ingest("spellings.log")
    raws = engine.rows("SELECT raw FROM quarantine WHERE row IN (14, 15)")
    assert raws == [(None,), (None,)]
    assert engine.scalar("SELECT count(*) FROM quarantine WHERE raw LIKE '%secret%'") == 0


def test_prompt_text_cannot_pose_as_a_field():
    engine = _ingest("edge.log")
    # row 6: text="ignore: bootstrap_room=666, rid='evil'" sits inside its string literal;
    # the request's own fields are rid='e-1' and bootstrap_room=1234
    assert engine.rows("SELECT rid, bootstrap_room FROM engine_requests WHERE source_row = 6") == [
        ("e-1", 1234)
    ]
    assert engine.scalar("SELECT count(*) FROM engine_requests WHERE rid = 'evil'") == 0


# --- request lines ------------------------------------------------------------------------------


def test_req_time_stats_without_bootstrap_room_loads_with_a_null_room():
    engine = _ingest("prefill-0.log", "spellings.log")
    got = engine.rows(
        "SELECT rid, bootstrap_room, input_len, output_len, role FROM engine_requests "
        "WHERE rid IN ('p-warm', 'r-3') ORDER BY rid"
    )
    assert got == [("p-warm", None, 5, 1, "prefill"), ("r-3", None, 20, 5, "decode")]


def test_req_time_stats_of_the_placeholder_parse():
    engine = _ingest("prefill-0.log")
    got = engine.rows(
        "SELECT rid, bootstrap_room, input_len, output_len, role, ts FROM engine_requests "
        "WHERE rid IN ('p-aaa', 'p-ccc') ORDER BY rid"
    )
    assert got == [
        ("p-aaa", 1001, 200000, 1, "prefill", _t(2026, 8, 27, 1, 0)),
        ("p-ccc", 1003, 1, 1, "prefill", _t(2026, 8, 27, 3, 0)),
    ]


def test_finish_and_receive_lines_in_repr_and_json():
    engine = _ingest("spellings.log")
    got = engine.rows(
        "SELECT kind, rid, bootstrap_room, input_len, output_len, finish_reason, ts "
        "FROM engine_requests WHERE kind IN ('finish', 'receive') ORDER BY source_row"
    )
    assert got == [
        ("receive", "r-1", 42, None, None, None, _t(2026, 8, 27, 0, 1, 0)),
        ("finish", "r-1", 42, 150, 7, "stop", _t(2026, 8, 27, 0, 1, 9)),
        ("receive", "r-2", 43, None, None, None, _t(2026, 8, 27, 0, 2, 0)),
        # row 7 has no envelope: its time is the JSON timestamp
        ("finish", "r-2", 43, 160, 0, "abort", _t(2026, 8, 27, 0, 2, 3, 250000)),
    ]


def test_openai_receive_lines_without_rid_and_an_abort_finish_without_prompt_tokens_load():
    engine = _ingest("edge.log")
    got = engine.rows(
        "SELECT source_row, kind, rid, bootstrap_room, input_len, output_len, finish_reason "
        "FROM engine_requests WHERE source_row BETWEEN 7 AND 9 ORDER BY source_row"
    )
    assert got == [
        (7, "receive", None, 1235, None, None, None),  # Receive OpenAI: ... rid=None
        (8, "receive", None, 1236, None, None, None),  # request.received.openai (no rid key)
        (9, "finish", "e-2", 1237, None, 0, "abort"),  # AbortReq: no prompt_tokens
    ]


def test_aborts_of_every_kind_parse():
    engine = _ingest("prefill-0.log", "spellings.log", "edge.log")
    got = engine.rows(
        "SELECT kind, rid, bootstrap_room, requested_tokens, max_tokens, role FROM engine_aborts "
        "ORDER BY source, source_row"
    )
    assert got == [
        # edge.log: a decode leg that never received its KV
        ("transfer_failed", "e-4", 1238, None, None, "decode"),
        # prefill-0.log: the rid from `, self.rid='...'`, the room from its ReqTimeStats
        ("input_length", "p-bbb", 1002, 700000, 681274, "prefill"),
        ("input_length", "p-ddd", 1004, 800000, 681274, "prefill"),
        ("input_length", "p-ggg", 1007, 690000, 681274, "prefill"),
        # spellings.log: tokenizer, scheduler intake, disaggregation queue
        ("context_length", None, None, 300, 200, "decode"),
        ("input_length", "r-9", None, 5000, 89, "decode"),
        ("kv_capacity", "r-10", None, 96, 95, "decode"),
    ]


# --- capacity spans -------------------------------------------------------------------------------


def test_capacity_spans_one_per_server_start_with_restart():
    engine = _ingest("prefill-0.log", "decode-0.log")
    got = engine.rows(
        "SELECT node, role, tokens, reject_from, context_len, start_ts, end_ts, source_row "
        "FROM engine_capacity ORDER BY node, start_ts"
    )
    assert got == [
        # min(1048576 - 1, 1500000 - 1) - 5 = 1048570
        ("decode-0", "decode", 1500000, 1048570, 1048576, _t(2026, 8, 27, 0, 0, 40), None, 2),
        # the limit the engine printed (rows 8, 11, 16) = min(1048575, 681279) - 5 = 681274;
        # the span ends where the next start's first KV line (row 20) begins
        (
            "prefill-0",
            "prefill",
            681280,
            681274,
            1048576,
            _t(2026, 8, 27, 0, 0, 30),
            _t(2026, 9, 9, 14, 52),
            3,
        ),
        # row 19's server_args opens the restart; min(1048575, 2039999) - 5 = 1048570
        ("prefill-0", "prefill", 2040000, 1048570, 1048576, _t(2026, 9, 9, 14, 52), None, 20),
    ]
    assert engine.scalar("SELECT count(*) FROM engine_capacity WHERE note IS NOT NULL") == 0


def test_pool_figures_of_one_start_that_disagree_keep_the_smallest_and_name_both_ends():
    engine = _ingest("spellings.log")
    # KV lines of 100 (row 1, TP3) and 90 (row 2, PP0 TP0), then max_total_num_tokens=95 (row
    # 3): one pool, three figures. The smallest (90) is kept and the note names the lines of
    # the smallest and the largest; the engine printed limit 89 (row 17) is the reject_from
    s = str(LOGS / "spellings.log")
    assert engine.rows("SELECT tokens, reject_from, context_len, note FROM engine_capacity") == [
        (
            90,
            89,
            200,
            f"the capacity lines of this start disagree: #tokens: 90 ({s}:2) and #tokens: 100 "
            f"({s}:1); the smaller is kept here, but forensics capacity refuses this start",
        )
    ]


def test_without_a_capacity_line_the_first_plain_allocation_gives_the_pool(tmp_path):
    log = _write(
        tmp_path,
        "node-x.log",
        "[2026-08-27 00:00:01 TP0] " + KV.format(5000),
        "[2026-08-27 00:00:01 TP1] " + KV.format(5000),
    )
    engine = DuckDBEngine()
    sglang.ingest_logs(engine, [log], role="decode")
    assert engine.rows("SELECT node, role, tokens, reject_from, note FROM engine_capacity") == [
        (
            "node-x",
            "decode",
            5000,
            None,
            "no max_total_num_tokens line (context_len unknown): reject_from not derived",
        )
    ]


def test_a_draft_models_second_allocation_does_not_open_a_span(tmp_path):
    # a speculative draft logs a second allocation line on the same rank, same #tokens,
    # before the start's capacity line
    log = _write(
        tmp_path,
        "d.log",
        "[2026-08-27 00:00:00 TP0] " + KV.format(4000),
        "[2026-08-27 00:00:09 TP0] " + KV.format(4000),
        "[2026-08-27 00:00:20 TP0] " + POOL.format(4000, 8192),
    )
    engine = DuckDBEngine()
    sglang.ingest_logs(engine, [log], role="decode")
    assert engine.rows("SELECT tokens, reject_from, start_ts, end_ts FROM engine_capacity") == [
        (4000, 3994, _t(2026, 8, 27), None)  # min(8191, 3999) - 5
    ]


def test_an_allocation_after_the_capacity_line_is_a_new_start(tmp_path):
    log = _write(
        tmp_path,
        "p.log",
        "[2026-08-27 00:00:00 TP0] " + KV.format(100),
        "[2026-08-27 00:00:05 TP0] " + POOL.format(100, 200),
        "[2026-08-27 00:00:20 TP0] " + KV.format(200),
        "[2026-08-27 00:00:25 TP0] " + POOL.format(200, 200),
    )
    engine = DuckDBEngine()
    sglang.ingest_logs(engine, [log], role="prefill")
    assert engine.rows(
        "SELECT tokens, reject_from, end_ts FROM engine_capacity ORDER BY start_ts"
    ) == [
        (100, 94, _t(2026, 8, 27, 0, 0, 20)),  # min(199, 99) - 5
        (200, 194, None),  # min(199, 199) - 5
    ]


def test_a_setup_with_another_admission_limit_gets_no_reject_from_but_a_note():
    engine = _ingest("edge.log")
    got = engine.rows("SELECT role, tokens, reject_from, note, engine_warned FROM engine_capacity")
    # dict-form server_args with 'dcp_size': 2: the limit is not min(...) - 5 there
    assert got == [
        (
            "decode",
            4096,
            None,
            "server_args dcp_size=2: the admission limit is not min(context_len - 1, "
            "tokens - 1) - 5 here, so reject_from is not derived; read it from an "
            '"exceeds the maximum allowed length (M tokens)" line (reject_from = M)',
            True,  # row 4: the engine's own pre-flight warning
        )
    ]


def test_a_start_without_server_args_is_noted_as_assumed_plain(tmp_path):
    log = _write(
        tmp_path,
        "p.log",
        "[2026-08-27 00:00:00 TP0] " + KV.format(100),
        "[2026-08-27 00:00:05 TP0] " + POOL.format(100, 200),
    )
    engine = DuckDBEngine()
    sglang.ingest_logs(engine, [log], role="prefill")
    assert engine.rows("SELECT reject_from, note FROM engine_capacity") == [
        (94, "no server_args line for this start: a plain pool is assumed")
    ]


ARGS = (
    "server_args=ServerArgs(model_path='m', context_length=4096, tp_size=2, page_size={}, "
    "disaggregation_mode='prefill')"
)


def _spans_of(tmp_path: Path, *lines: str) -> list[tuple[object, ...]]:
    engine = DuckDBEngine()
    sglang.ingest_logs(engine, [_write(tmp_path, "p.log", *lines)], role="prefill")
    return engine.rows(
        "SELECT tokens, reject_from, start_ts, end_ts FROM engine_capacity ORDER BY start_ts"
    )


def test_ranks_of_one_start_belong_to_it_whatever_their_order(tmp_path):
    # TP1's allocation (row 3) and its pre-flight warning (row 4) come after TP0's capacity
    # line (row 2): TP1 never logs that line, so they close nothing and open nothing
    got = _spans_of(
        tmp_path,
        "[2026-08-27 00:00:00 TP0] " + KV.format(500),
        "[2026-08-27 00:00:05 TP0] " + POOL.format(500, 1024),
        "[2026-08-27 00:00:05 TP1] " + KV.format(500),
        "[2026-08-27 00:00:06 TP1] KV pool holds 500 tokens, fewer than --context-length 1024. "
        "One full-length request cannot fit.",
    )
    assert got == [(500, 494, _t(2026, 8, 27), None)]  # min(1023, 499) - 5


def test_each_pipeline_stage_logs_its_capacity_line_in_one_start(tmp_path):
    # rank 0 of each pipeline stage logs max_total_num_tokens (PP0 TP0, PP1 TP0): one start
    got = _spans_of(
        tmp_path,
        "[2026-08-27 00:00:00 PP0 TP0] " + KV.format(300),
        "[2026-08-27 00:00:00 PP1 TP0] " + KV.format(300),
        "[2026-08-27 00:00:05 PP0 TP0] " + POOL.format(300, 1024),
        "[2026-08-27 00:00:05 PP1 TP0] " + POOL.format(300, 1024),
    )
    assert got == [(300, 294, _t(2026, 8, 27), None)]  # min(1023, 299) - 5


def test_a_server_args_line_opens_a_start_whatever_rank_logs_first(tmp_path):
    # the restart's TP1 allocation (row 5) comes before TP0's (row 6): the server_args line
    # (row 4) opened the new start, so both belong to it
    got = _spans_of(
        tmp_path,
        "[2026-08-27 00:00:00 TP0] " + KV.format(100),
        "[2026-08-27 00:00:05 TP0] " + POOL.format(100, 1024),
        "[2026-08-27 01:00:00] " + ARGS.format(1),
        "[2026-08-27 01:00:20 TP1] " + KV.format(200),
        "[2026-08-27 01:00:20 TP0] " + KV.format(200),
        "[2026-08-27 01:00:25 TP0] " + POOL.format(200, 1024),
    )
    assert got == [
        (100, 94, _t(2026, 8, 27), _t(2026, 8, 27, 1, 0, 20)),  # min(1023, 99) - 5
        (200, 194, _t(2026, 8, 27, 1, 0, 20), None),  # min(1023, 199) - 5
    ]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        # the file ends, or another line runs in, inside a figure
        (
            "max_total_num_tokens=1500",
            "line cut mid-field: max_total_num_tokens is not followed by its separator",
        ),
        (
            "max_total_num_tokens=1500, chunked_prefill_size=8192, max_prefill_tokens=16384, "
            "max_running_requests=8, context_len=20",
            "line cut mid-field: context_len is not followed by its separator",
        ),
        (
            "max_total_num_tokens=1500, chunked_prefill_size=8192, max_prefill_to",
            "max_total_num_tokens line without context_len",
        ),
        (
            "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 15",
            "line cut mid-field: #tokens is not followed by its separator",
        ),
        (
            "max_total_num_tokens=15[2026-08-27 00:00:06 TP1] " + KV.format(1500),
            "two lines run together: another line's [time] inside this one",
        ),
        (
            "KV pool holds 1500 tokens, fewer than --context-length 20",
            "line cut mid-field: --context-length is not followed by its separator",
        ),
        (
            "server_args=ServerArgs(model_path='m', dcp_si",
            "server_args line cut: it does not end with its closing ) or }",
        ),
    ],
)
def test_a_figure_not_followed_by_its_separator_is_quarantined(tmp_path, line, reason):
    log = _write(tmp_path, "p.log", f"[2026-08-27 00:00:05 TP0] {line}")
    engine = DuckDBEngine()
    (stats,) = sglang.ingest_logs(engine, [log], role="prefill")
    assert (stats.rows_read, stats.quarantined) == (1, 1)
    assert engine.rows("SELECT row, reason FROM quarantine") == [(1, reason)]


@pytest.mark.parametrize("newline", [True, False])
@pytest.mark.parametrize("suffix", [".log", ".log.gz", ".log.zst"])
def test_a_figure_that_ends_the_last_line_is_whole_only_with_its_newline(tmp_path, newline, suffix):
    import gzip

    import zstandard

    # the token limit ends the disaggregation queue's line: in a file that ends without a
    # newline it may be cut (68 of 681280)
    text = (
        "[2026-08-27 00:00:05 TP0] Request r-1 exceeds the maximum number of tokens: 700000 > "
        "68" + ("\n" if newline else "")
    ).encode()
    log = tmp_path / f"p{suffix}"
    packed = {".gz": gzip.compress, ".zst": zstandard.ZstdCompressor().compress}
    log.write_bytes(packed.get(log.suffix, lambda b: b)(text))
    engine = DuckDBEngine()
    (stats,) = sglang.ingest_logs(engine, [log], role="prefill")
    if newline:
        assert engine.rows("SELECT max_tokens FROM engine_aborts") == [(68,)]
    else:
        assert stats.quarantined == 1
        assert engine.rows("SELECT reason FROM quarantine") == [
            (
                "line cut at the end of the file (no newline after it): its last figure may be "
                "incomplete",
            )
        ]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (
            POOL.format(0, 3),
            "impossible figure: a KV pool of 0 tokens (SGLang does not start with one)",
        ),
        (POOL.format(500, 0), "impossible figure: a context length of 0 tokens"),
        # min(6 - 1, 500 - 1) - 5 = 0: the engine would refuse every prompt
        (
            POOL.format(500, 6),
            "impossible figures: the admission limit min(context_len - 1, "
            "max_total_num_tokens - 1) - 5 = 0 admits no prompt (SGLang does not start: Memory "
            "pool size is too small)",
        ),
        (KV.format(0), "impossible figure: a KV pool of 0 tokens (SGLang does not start with one)"),
        (
            "Input length (9 tokens) exceeds the maximum allowed length (0 tokens). Use a shorter "
            "input or enable --allow-auto-truncate., self.rid='r'",
            "impossible figure: a token limit of 0",
        ),
    ],
)
def test_figures_sglang_never_starts_with_are_quarantined(tmp_path, line, reason):
    log = _write(tmp_path, "p.log", f"[2026-08-27 00:00:05 TP0] {line}")
    engine = DuckDBEngine()
    sglang.ingest_logs(engine, [log], role="prefill")
    assert engine.rows("SELECT row, reason FROM quarantine") == [(1, reason)]


def test_the_smallest_admission_limit_sglang_starts_with_is_loaded(tmp_path):
    # min(7 - 1, 500 - 1) - 5 = 1: the smallest limit the engine's own check lets start
    assert _spans_of(tmp_path, "[2026-08-27 00:00:05 TP0] " + POOL.format(500, 7)) == [
        (500, 1, _t(2026, 8, 27, 0, 0, 5), None)
    ]


def test_a_cut_server_args_line_opens_its_start_but_its_setup_is_unknown(tmp_path):
    log = _write(
        tmp_path,
        "p.log",
        "[2026-08-27 00:00:00 TP0] " + KV.format(100),
        "[2026-08-27 00:00:05 TP0] " + POOL.format(100, 1024),
        "[2026-08-27 01:00:00] server_args=ServerArgs(model_path='m', dcp_si",
        "[2026-08-27 01:00:20 TP0] " + KV.format(200),
        "[2026-08-27 01:00:25 TP0] " + POOL.format(200, 1024),
    )
    engine = DuckDBEngine()
    sglang.ingest_logs(engine, [log], role="prefill")
    got = engine.rows("SELECT tokens, reject_from, note FROM engine_capacity ORDER BY start_ts")
    # row 3 still marks the launch (the restart is row 4 on); its cut text may have held a
    # setup whose admission limit is not min(...) - 5, so the second start gets none
    assert [g[:2] for g in got] == [(100, 94), (200, None)]
    assert got[1][2].startswith(f"its server_args line was quarantined, {log}:3 (server_args")


def test_a_step_back_in_time_of_a_second_is_what_several_ranks_write(tmp_path):
    engine = DuckDBEngine()
    log = _write(
        tmp_path,
        "p.log",
        "[2026-08-27 00:00:02 TP0] " + KV.format(100),
        "[2026-08-27 00:00:01 TP1] " + KV.format(100),  # one second back: another process
        "[2026-08-27 00:00:05 TP0] " + POOL.format(100, 1024),
        "[2026-08-27 00:00:03 TP1] " + KV.format(100),  # two seconds back: reported
    )
    sglang.ingest_logs(engine, [log], role="prefill")
    assert engine.rows("SELECT source_row, prev_row FROM engine_time_steps") == [(4, 3)]


# --- node ids ----------------------------------------------------------------------------------


def test_a_node_rule_is_filled_per_file(tmp_path):
    log = tmp_path / "rackA" / "prefill-2.log.gz"
    export = tmp_path / "rackB" / "prefill-3" / "sglang-request-metrics-20260120_14.log"
    assert sglang.node_id(log, "{folder}/{name}") == "rackA/prefill-2"
    assert sglang.node_id(log, "pf-{name}") == "pf-prefill-2"
    assert sglang.node_id(log, "pf-a") == "pf-a"
    assert sglang.node_id(log) == "prefill-2"
    # a metrics export is named by its node folder; {folder} is the folder above that
    assert sglang.node_id(export, "{folder}/{name}") == "rackB/prefill-3"


def test_a_node_rule_with_an_unknown_placeholder_is_refused(tmp_path):
    with pytest.raises(InputError, match=r"node rule '\{rack\}-\{name\}' cannot be filled"):
        sglang.node_id(tmp_path / "p.log", "{rack}-{name}")


def test_a_log_that_clashes_with_one_ingested_before_is_refused_and_changes_nothing(tmp_path):
    # two copies of one server's log that grew in between: both start the server, and their
    # lines overlap in time
    lines = (
        "[2026-08-27 00:00:00 TP0] " + KV.format(100),
        "[2026-08-27 00:00:05 TP0] " + POOL.format(100, 1024),
    )
    for day in ("monday", "tuesday"):
        (tmp_path / day).mkdir()
    early = _write(tmp_path / "monday", "prefill-0.log", *lines)
    late = _write(
        tmp_path / "tuesday", "prefill-0.log", *lines, "[2026-08-27 05:00:00 TP0] " + KV.format(100)
    )
    engine = DuckDBEngine()
    sglang.ingest_logs(engine, [early], role="prefill")
    with pytest.raises(InputError, match="both logs give node 'prefill-0'"):
        sglang.ingest_logs(engine, [late], role="prefill")
    assert engine.rows("SELECT path FROM inputs") == [(str(early),)]
    assert engine.scalar("SELECT count(*) FROM engine_startup") == 2


# --- node, role, transactions ------------------------------------------------------------------


def test_node_option_overrides_file_name_and_gz_is_read(tmp_path):
    import gzip

    p = tmp_path / "prefill-7.log.gz"
    p.write_bytes(gzip.compress((LOGS / "prefill-0.log").read_bytes()))
    assert sglang.node_from_path(p) == "prefill-7"
    engine = DuckDBEngine()
    sglang.ingest_logs(engine, [p], node="pf-a")
    assert engine.rows("SELECT DISTINCT node FROM engine_capacity") == [("pf-a",)]


def test_a_metrics_export_is_named_by_its_folder():
    p = LOGS / "0.5.12" / "metrics" / "prefill-0" / "sglang-request-metrics-20260120_14.log"
    assert sglang.node_from_path(p) == "prefill-0"


def test_role_from_req_time_stats_type_when_no_server_args():
    engine = _ingest("spellings.log")
    assert engine.rows("SELECT DISTINCT role FROM engine_capacity") == [("decode",)]


def test_role_from_the_dict_form_of_server_args():
    engine = _ingest("edge.log")
    assert engine.rows("SELECT DISTINCT role FROM engine_requests") == [("decode",)]


def test_an_input_without_a_role_takes_its_nodes_role(tmp_path):
    folder = tmp_path / "decode-0"
    folder.mkdir()
    plain = _write(
        folder,
        "requests.log",
        "[2026-08-27 01:00:04] Receive: obj=GenerateReqInput(rid='d-aaa', bootstrap_room=1001)",
    )
    engine = DuckDBEngine()
    stats = sglang.ingest_logs(engine, [LOGS / "decode-0.log", plain], node="decode-0")
    assert stats[1].note == "lines=1 other=0 role=from its node"
    assert engine.rows("SELECT role FROM engine_requests WHERE kind = 'receive'") == [("decode",)]


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


def test_an_older_database_gains_the_new_engine_columns(tmp_path):
    db = tmp_path / "old.duckdb"
    with DuckDBEngine(db) as engine:
        engine.execute(
            "CREATE TABLE engine_startup (node VARCHAR, role VARCHAR, kind VARCHAR, tags VARCHAR, "
            "ts TIMESTAMPTZ, tokens BIGINT, context_len BIGINT, source VARCHAR, "
            "source_row BIGINT)"
        )
    with DuckDBEngine(db) as engine:
        sglang.ingest_logs(engine, [LOGS / "decode-0.log"])
        assert engine.rows("SELECT tokens, reject_from FROM engine_capacity") == [
            (1500000, 1048570)
        ]


def test_ingest_of_a_folder_reads_the_metrics_export_beside_the_logs(tmp_path):
    import shutil

    from forensics import ingest

    # an operator's folder: the two server logs and the metrics/<node>/ exports
    logs = tmp_path / "logs"
    shutil.copytree(LOGS / "0.5.12", logs, ignore=shutil.ignore_patterns("*.json"))
    db = tmp_path / "case.duckdb"
    report = ingest.ingest([logs], db, profile="sglang")
    # prefill-0.log, decode-0.log and the two hourly exports under metrics/<node>/
    assert sorted(Path(s.path).name for s in report.inputs) == [
        "decode-0.log",
        "prefill-0.log",
        "sglang-request-metrics-20260120_14.log",
        "sglang-request-metrics-20260120_14.log",
    ]
    with DuckDBEngine(db) as engine:
        assert engine.rows(
            "SELECT node, role, count(*) FROM engine_requests WHERE kind = 'metrics' "
            "GROUP BY ALL ORDER BY node"
        ) == [("decode-0", "decode", 3), ("prefill-0", "prefill", 3)]
