# ruff: noqa: E501  (log lines are quoted whole, as the engine writes them)
"""vLLM server logs: the clock (no year, no zone), the capacity rules, refusals, KV
transfer faults and the fault rules (torn lines, interleaving files, time going back).
Every log is a few literal lines in vLLM's own spellings (tests/fixtures/vllm/*/README.md
names their sources); each expectation is derived in the docstring."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

from forensics import ingest, pipeline
from forensics.analysis import capacity as capacity_timeline
from forensics.analysis import evidence
from forensics.cli import app
from forensics.engines import DuckDBEngine
from forensics.errors import InputError

ARGS_P = (
    "INFO 01-20 14:02:11 [utils.py:278] non-default args: {'model': 'm', 'max_model_len': 131072, "
    "'kv_transfer_config': KVTransferConfig(kv_connector='NixlConnector', kv_role='kv_producer')}"
)
ARGS_NONE = (
    "INFO 01-20 14:02:11 [utils.py:278] non-default args: {'model': 'm', 'max_model_len': 8192}"
)


def write(tmp_path: Path, name: str, *lines: str, newline: bool = True) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + ("\n" if newline else ""), encoding="utf-8")
    return path


def load(tmp_path: Path, *files: Path, **clock: Any) -> DuckDBEngine:
    eng = DuckDBEngine(tmp_path / "case.duckdb")
    ingest.ingest_into(eng, list(files), profile="vllm", clock=ingest.Clock(**clock))
    return eng


def spans(eng: DuckDBEngine) -> list[tuple[Any, ...]]:
    return eng.rows(
        "SELECT role, tokens, context_len, start_ts, end_ts FROM engine_capacity "
        "ORDER BY start_ts, role"
    )


def evidence_faults(eng: DuckDBEngine) -> list[dict[str, Any]]:
    return capacity_timeline.faults(eng)


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def test_a_log_crossing_new_year_takes_the_next_year(tmp_path: Path) -> None:
    """--year 2025 is the first line's year; 12-31 -> 01-01 goes back eleven months in
    month-day, so the pool line is 2026-01-01 00:00:05, not January 2025."""
    log = write(
        tmp_path,
        "p.log",
        "INFO 12-31 23:58:01 api_server.py:713] args: Namespace(model='m', max_model_len=4096)",
        "INFO 01-01 00:00:05 gpu_executor.py:76] # GPU blocks: 1000, # CPU blocks: 2048",
    )
    with load(tmp_path, log, year=2025) as eng:
        assert spans(eng)[0][3] == utc(2026, 1, 1, 0, 0, 5)


def test_the_case_window_gives_the_year_nearest_to_its_start(tmp_path: Path) -> None:
    """Window from 2027-01-01: a first line on 12-31 is nearer as 2026-12-31 than as
    2027-12-31, so the span starts 2026-12-31 23:59:00."""
    log = write(
        tmp_path,
        "p.log",
        ARGS_NONE.replace("01-20 14:02:11", "12-31 23:58:00"),
        "INFO 12-31 23:59:00 [kv_cache_utils.py:1733] GPU KV cache size: 16,384 tokens",
    )
    with load(tmp_path, log, anchor=datetime(2027, 1, 1, 3, 0)) as eng:
        assert spans(eng)[0][3] == utc(2026, 12, 31, 23, 59)


YEAR = Path(__file__).parent / "fixtures" / "vllm" / "year"
WINDOW = {
    "anchor": datetime(2026, 12, 31, 22, tzinfo=UTC),
    "window_end": datetime(2027, 1, 1, 4, tzinfo=UTC),
}


def test_a_rotated_log_of_the_next_year_continues_its_node_clock(tmp_path: Path) -> None:
    """README year/rotated/: with --year 2026, a (12-31) is 2026 and b (01-01), after it in
    time order, 2027: 431,984 from 2026-12-31 21:52:02 to 2027-01-01 00:00:11, then 100,000
    from 2027-01-01 00:02:02."""
    files = [YEAR / "rotated" / "a" / "prefill-0.log", YEAR / "rotated" / "b" / "prefill-0.log"]
    expected = [
        ("prefill", 431984, 131072, utc(2026, 12, 31, 21, 52, 2), utc(2027, 1, 1, 0, 0, 11)),
        ("prefill", 100000, 131072, utc(2027, 1, 1, 0, 2, 2), None),
    ]
    with load(tmp_path, *files, year=2026) as eng:
        assert spans(eng) == expected


def test_capacity_with_a_year_and_a_case_window_agree_on_rotated_logs(tmp_path: Path) -> None:
    """README year/rotated/: the clock a case run gives (its window, 2026-12-31 22:00 ..
    2027-01-01 04:00) reads the same two spans as --year 2026, in either file order."""
    files = [YEAR / "rotated" / "b" / "prefill-0.log", YEAR / "rotated" / "a" / "prefill-0.log"]
    with load(tmp_path, *files, **WINDOW) as eng:
        assert [s[3] for s in spans(eng)] == [
            utc(2026, 12, 31, 21, 52, 2),
            utc(2027, 1, 1, 0, 2, 2),
        ]


def test_a_log_starting_months_before_the_window_keeps_its_year_and_warns(tmp_path: Path) -> None:
    """README year/early/: the first line (05-01) is 2026, the year that puts the log's time
    in the window: 200,000 from 2026-05-01 09:52:02 to 2026-12-31 21:50:11, 431,984 from
    2026-12-31 21:52:02; a `year` fault names the file (its lines start more than half a year
    before the window)."""
    log = YEAR / "early" / "prefill-0.log"
    with load(tmp_path, log, **WINDOW) as eng:
        assert spans(eng) == [
            ("prefill", 200000, 131072, utc(2026, 5, 1, 9, 52, 2), utc(2026, 12, 31, 21, 50, 11)),
            ("prefill", 431984, 131072, utc(2026, 12, 31, 21, 52, 2), None),
        ]
        faults = evidence_faults(eng)
    assert [(f["kind"], f["source"]) for f in faults] == [("year", str(log))]
    assert faults[0]["figure"].startswith(
        "its lines run from 2026-05-01T09:50:11Z to 2027-01-01T00:30:00Z, more than half a year "
        "outside the case window"
    )


def test_the_timezone_shifts_local_times_to_utc(tmp_path: Path) -> None:
    """14:04:02 in Europe/Berlin (UTC+1 in January) is 13:04:02 UTC."""
    log = write(
        tmp_path,
        "p.log",
        ARGS_NONE,
        "INFO 01-20 14:04:02 [kv_cache_utils.py:1733] GPU KV cache size: 16,384 tokens",
    )
    with load(tmp_path, log, year=2026, timezone="Europe/Berlin") as eng:
        assert spans(eng)[0][3] == utc(2026, 1, 20, 13, 4, 2)


DST = Path(__file__).parent / "fixtures" / "vllm" / "dst"


def test_a_local_time_the_clock_went_over_twice_is_quarantined_naming_the_line(
    tmp_path: Path,
) -> None:
    """README dst/fall.log: lines 3 and 4 (01:20, 01:25 on 11-01) occur twice in New York:
    quarantined; the restart of line 3 still ends the 16,384 span, at 05:20:00Z (the
    earliest reading), and no span follows."""
    log = DST / "fall.log"
    eng = DuckDBEngine(tmp_path / "case.duckdb")
    with eng:
        report = ingest.ingest_into(
            eng, [log], profile="vllm", clock=ingest.Clock(year=2026, timezone="America/New_York")
        )
        assert (report.inputs[0].rows_read, report.inputs[0].quarantined) == (5, 2)
        assert spans(eng) == [
            ("prefill", 16384, 8192, utc(2026, 11, 1, 4, 30, 20), utc(2026, 11, 1, 5, 20))
        ]
        faults = [(f["kind"], f["source_row"], f["figure"]) for f in evidence_faults(eng)]
    assert faults[0] == (
        "quarantined",
        3,
        "local time 2026-11-01 01:20:00 occurs twice in America/New_York (the clock was set "
        "back over it): which of its two UTC times the line means is unknown",
    )
    assert [f[:2] for f in faults] == [("quarantined", 3), ("quarantined", 4)]


def test_a_local_time_the_clock_skipped_is_quarantined(tmp_path: Path) -> None:
    """README dst/spring.log: line 3 (03-08 02:30) never occurred in New York: quarantined;
    the span 16,384 from 06:50:30Z stays open."""
    eng = DuckDBEngine(tmp_path / "case.duckdb")
    with eng:
        report = ingest.ingest_into(
            eng,
            [DST / "spring.log"],
            profile="vllm",
            clock=ingest.Clock(year=2026, timezone="America/New_York"),
        )
        assert (report.inputs[0].rows_read, report.inputs[0].quarantined) == (4, 1)
        assert spans(eng) == [("prefill", 16384, 8192, utc(2026, 3, 8, 6, 50, 30), None)]
        reason = eng.scalar("SELECT reason FROM quarantine WHERE row = 3")
    assert reason.startswith("local time 2026-03-08 02:30:00 does not exist in America/New_York")


def test_without_a_year_vllm_logs_are_refused(tmp_path: Path) -> None:
    log = write(tmp_path, "p.log", ARGS_NONE)
    with pytest.raises(InputError, match="name no year"):
        load(tmp_path, log)


def test_kv_both_or_no_transfer_config_gives_a_span_per_role(tmp_path: Path) -> None:
    """No kv_transfer_config: the node serves both roles: a prefill and a decode span of
    16,384 tokens, context 8,192."""
    log = write(
        tmp_path,
        "p.log",
        ARGS_NONE,
        "INFO 01-20 14:04:02 [kv_cache_utils.py:1733] GPU KV cache size: 16,384 tokens",
    )
    with load(tmp_path, log, year=2026) as eng:
        assert [(r, t, c) for r, t, c, _, _ in spans(eng)] == [
            ("decode", 16384, 8192),
            ("prefill", 16384, 8192),
        ]


def test_blocks_times_the_block_size_of_the_args_dump(tmp_path: Path) -> None:
    """V0 with block_size=32: 1,000 blocks x 32 = 32,000 tokens (not x 16)."""
    log = write(
        tmp_path,
        "p.log",
        "INFO 01-20 14:00:00 api_server.py:713] args: Namespace(model='m', max_model_len=4096, block_size=32)",
        "INFO 01-20 14:01:00 executor_base.py:111] # cuda blocks: 1000, # CPU blocks: 2048",
    )
    with load(tmp_path, log, year=2026) as eng:
        assert spans(eng)[0][1] == 32000


def test_data_parallel_ranks_are_one_start_and_a_restart_a_new_span(tmp_path: Path) -> None:
    """Two DP ranks print 862,400 each: one span from 14:04:02; a new args dump at 15:00:00
    (restart) with 400,000 ends it there and opens a second span from 15:02:00."""
    log = write(
        tmp_path,
        "d.log",
        ARGS_P,
        "(EngineCore_DP0 pid=1) INFO 01-20 14:04:02 [kv_cache_utils.py:1733] GPU KV cache size: 862,400 tokens",
        "(EngineCore_DP1 pid=2) INFO 01-20 14:04:03 [kv_cache_utils.py:1733] GPU KV cache size: 862,400 tokens",
        ARGS_P.replace("14:02:11", "15:00:00"),
        "(EngineCore pid=3) INFO 01-20 15:02:00 [kv_cache_utils.py:1733] GPU KV cache size: 400,000 tokens",
    )
    with load(tmp_path, log, year=2026) as eng:
        assert spans(eng) == [
            ("prefill", 862400, 131072, utc(2026, 1, 20, 14, 4, 2), utc(2026, 1, 20, 15, 0, 0)),
            ("prefill", 400000, 131072, utc(2026, 1, 20, 15, 2, 0), None),
        ]


def test_a_failed_start_has_no_span(tmp_path: Path) -> None:
    """The pool line is printed, then the estimated maximum model length error: no span."""
    log = write(
        tmp_path,
        "p.log",
        ARGS_P,
        "(EngineCore pid=3) INFO 01-20 14:04:02 [kv_cache_utils.py:1733] GPU KV cache size: 100,000 tokens",
        "(EngineCore pid=3) ERROR 01-20 14:04:03 [core.py:1165] EngineCore failed to start.",
        "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (12.21 GiB). Based on the available memory, the estimated maximum model length is 100000. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
    )
    with load(tmp_path, log, year=2026) as eng:
        assert spans(eng) == []


def test_a_number_cut_by_the_end_of_the_file_leaves_its_start_without_a_proven_pool(
    tmp_path: Path,
) -> None:
    """The last line `GPU KV cache size: 264,2` has no newline and no ` tokens`: it is
    quarantined. With the engine's version unknown, the start's pool lines may be the
    tensor-parallel workers' (0.8 - 0.11), of which vLLM keeps the smallest: the cut one may
    have been it, so the start has no span (its requests match no [[capacity]] entry) and the
    fault says why, naming line 3."""
    log = write(
        tmp_path,
        "p.log",
        ARGS_NONE,
        "INFO 01-20 14:04:02 [kv_cache_utils.py:1733] GPU KV cache size: 16,384 tokens",
        "INFO 01-20 14:05:02 [kv_cache_utils.py:1733] GPU KV cache size: 264,2",
        newline=False,
    )
    with load(tmp_path, log, year=2026) as eng:
        assert spans(eng) == []
        (reason,) = eng.rows("SELECT reason FROM quarantine")[0]
        assert reason.startswith("line cut short")
        assert eng.rows("SELECT kind, source_row, figure FROM engine_faults ORDER BY kind") == [
            (
                "no_capacity",
                3,
                "a pool line of this start was quarantined while others were read, and vLLM "
                "keeps the smallest of them: the cut one may have held it",
            ),
            ("quarantined", 3, reason),
        ]


def test_a_context_length_refusal_states_prompt_and_limit_and_names_no_request(
    tmp_path: Path,
) -> None:
    """0.8 wording: 141,000 requested = 140,000 in the messages + 1,000 in the completion:
    requested_tokens 140,000, max_tokens 131,072, rid NULL; the traceback line takes the
    time of the ERROR line above it (14:11:30)."""
    log = write(
        tmp_path,
        "p.log",
        ARGS_P,
        "ERROR 01-20 14:11:30 [serving_chat.py:200] Error in preprocessing prompt inputs",
        "Traceback (most recent call last):",
        "ValueError: This model's maximum context length is 131072 tokens. However, you requested 141000 tokens (140000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
        "WARNING 01-20 14:12:00 scheduler.py:1092] Input prompt (9000 tokens) is too long and exceeds limit of 8192",
    )
    with load(tmp_path, log, year=2026) as eng:
        assert eng.rows(
            "SELECT rid, requested_tokens, max_tokens, kind, ts FROM engine_aborts ORDER BY ts"
        ) == [
            (None, 140000, 131072, "rejected", utc(2026, 1, 20, 14, 11, 30)),
            (None, 9000, 8192, "rejected", utc(2026, 1, 20, 14, 12, 0)),
        ]


def test_a_refusal_record_spans_lines_ending_in_crlf_each_with_the_head(tmp_path: Path) -> None:
    """vLLM's NewLineFormatter writes every line of a traceback after "\\r\\n" and the
    record's head: the ValueError line is file line 4 (not 6: the CRs end no extra line),
    one refusal, and the file holds 4 lines."""
    head = "ERROR 01-20 14:11:30 [serving_chat.py:200] "
    log = write(
        tmp_path,
        "p.log",
        ARGS_P,
        head + "Error in preprocessing prompt inputs\r",
        head + "Traceback (most recent call last):\r",
        head
        + "ValueError: This model's maximum context length is 131072 tokens. However, your request has 140000 input tokens. Please reduce the length of the input messages.",
    )
    eng = DuckDBEngine(tmp_path / "case.duckdb")
    with eng:
        report = ingest.ingest_into(eng, [log], profile="vllm", clock=ingest.Clock(year=2026))
        assert eng.rows("SELECT source_row, requested_tokens, max_tokens FROM engine_aborts") == [
            (4, 140000, 131072)
        ]
    assert (report.inputs[0].note or "").startswith("lines=4 ")


def test_kv_faults_repeated_by_workers_are_one_row_and_duplicates(tmp_path: Path) -> None:
    """Two TP workers print the same expired line: one engine_kv_faults row (lines 2) and
    one duplicate in the accounting: 4 evidence lines = 3 loaded + 1 duplicate."""
    expired = (
        "WARNING 01-20 14:12:00 [base_worker.py:3440] Releasing expired KV blocks for "
        "request chatcmpl-abc-0a1b2c3d which were retrieved by 0 remote worker(s) before "
        "lease expired."
    )
    log = write(
        tmp_path,
        "p.log",
        ARGS_P,
        f"(Worker_TP0 pid=1) {expired}",
        f"(Worker_TP1 pid=2) {expired}",
        "INFO 01-20 14:04:02 [kv_cache_utils.py:1733] GPU KV cache size: 16,384 tokens",
    )
    eng = DuckDBEngine(tmp_path / "case.duckdb")
    with eng:
        report = ingest.ingest_into(eng, [log], profile="vllm", clock=ingest.Clock(year=2026))
        s = report.inputs[0]
        assert (s.rows_read, s.rows_loaded, s.duplicates, s.quarantined) == (4, 3, 1, 0)
        assert eng.rows("SELECT rid, ext_rid, kind, lines FROM engine_kv_faults") == [
            ("chatcmpl-abc-0a1b2c3d", "chatcmpl-abc", "expired", 2)
        ]


def test_a_line_going_back_in_time_is_a_fault_naming_both_lines(tmp_path: Path) -> None:
    """Line 3 (14:03:00) comes after line 2 (14:04:02), more than a second back: the
    time_back fault of every engine, printed by `forensics capacity`; the span is built in
    time order (it opens at 14:04:02)."""
    log = write(
        tmp_path,
        "p.log",
        ARGS_NONE,
        "INFO 01-20 14:04:02 [kv_cache_utils.py:1733] GPU KV cache size: 16,384 tokens",
        "INFO 01-20 14:03:00 [loggers.py:250] Engine 000: GPU KV cache usage: 1.0%",
    )
    result = CliRunner().invoke(
        app, ["capacity", str(log), "--db", str(tmp_path / "c.duckdb"), "--year", "2026"]
    )
    assert result.exit_code == 0, result.output
    assert (
        f"  fault: engine logs: {log}: line 3 (2026-01-20T14:03:00Z) is more than a second "
        "before line 2 above it (2026-01-20T14:04:02Z): the log goes back in time (rotated logs "
        "joined out of order?); its spans are built in time order"
    ) in result.stdout
    with DuckDBEngine(tmp_path / "c.duckdb") as eng:
        assert eng.rows("SELECT source_row, prev_row FROM engine_time_steps") == [(3, 2)]
        assert spans(eng)[0][3] == utc(2026, 1, 20, 14, 4, 2)


def test_two_files_of_one_node_interleaving_in_time_are_refused(tmp_path: Path) -> None:
    """a/p.log covers 14:02:11-14:04:02, b/p.log 14:03:00-14:05:00: both node p, both start a
    server, overlapping: refused with the rule every engine shares (both files and the node
    rule that tells them apart), and nothing is loaded."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = write(
        tmp_path / "a",
        "p.log",
        ARGS_NONE,
        "INFO 01-20 14:04:02 [kv_cache_utils.py:1733] GPU KV cache size: 16,384 tokens",
    )
    two = write(
        tmp_path / "b",
        "p.log",
        ARGS_NONE.replace("14:02:11", "14:03:00"),
        "INFO 01-20 14:05:00 [kv_cache_utils.py:1733] GPU KV cache size: 16,384 tokens",
    )
    eng = DuckDBEngine(tmp_path / "case.duckdb")
    with eng, pytest.raises(InputError) as info:
        ingest.ingest_into(eng, [one, two], profile="vllm", clock=ingest.Clock(year=2026))
    assert info.value.where == f"{one}, {two}"
    assert info.value.what.startswith(
        "both logs give node 'p' and their lines interleave in time (2026-01-20T14:02:11Z .. "
        "2026-01-20T14:04:02Z and 2026-01-20T14:03:00Z .. 2026-01-20T14:05:00Z)"
    )
    assert "'{folder}/{name}'" in info.value.line()
    with DuckDBEngine(tmp_path / "case.duckdb") as eng:
        assert not eng.table_exists("inputs") or eng.scalar("SELECT count(*) FROM inputs") == 0


def test_a_later_line_that_is_no_evidence_still_shows_a_server_running(tmp_path: Path) -> None:
    """a/p.log starts a server (14:02:11, pool at 14:02:40) and at 15:00:00 logs only the
    chat-template notice vLLM prints on a first request (no evidence record); b/p.log starts
    another server at 14:30:00. a/p ran 14:02:11 .. 15:00:00, overlapping b/p's 14:30:00 ..
    14:31:00: refused (counting evidence lines alone, a/p ended at 14:02:40 and merged)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = write(
        tmp_path / "a",
        "p.log",
        ARGS_NONE,
        "INFO 01-20 14:02:40 [kv_cache_utils.py:1733] GPU KV cache size: 16,384 tokens",
        "INFO 01-20 15:00:00 [chat_utils.py:470] Detected the chat template content format to "
        "be 'string'. You can set `--chat-template-content-format` to override this.",
    )
    two = write(
        tmp_path / "b",
        "p.log",
        ARGS_NONE.replace("14:02:11", "14:30:00"),
        "INFO 01-20 14:31:00 [kv_cache_utils.py:1733] GPU KV cache size: 32,768 tokens",
    )
    eng = DuckDBEngine(tmp_path / "case.duckdb")
    with eng, pytest.raises(InputError) as info:
        ingest.ingest_into(eng, [one, two], profile="vllm", clock=ingest.Clock(year=2026))
    assert info.value.where == f"{one}, {two}"
    assert info.value.what.startswith(
        "both logs give node 'p' and their lines interleave in time (2026-01-20T14:02:11Z .. "
        "2026-01-20T15:00:00Z and 2026-01-20T14:30:00Z .. 2026-01-20T14:31:00Z)"
    )


def test_a_node_rule_keeps_two_vllm_servers_of_one_name_apart(tmp_path: Path) -> None:
    """The same two files with node `{folder}/{name}`: a/p and b/p, one span each."""
    for rack, at in (("a", "14:02:11"), ("b", "14:03:00")):
        (tmp_path / rack).mkdir()
        write(
            tmp_path / rack,
            "p.log",
            ARGS_NONE.replace("14:02:11", at),
            "INFO 01-20 14:05:00 [kv_cache_utils.py:1733] GPU KV cache size: 16,384 tokens",
        )
    eng = DuckDBEngine(tmp_path / "case.duckdb")
    with eng:
        ingest.ingest_into(
            eng,
            [tmp_path / "a" / "p.log", tmp_path / "b" / "p.log"],
            profile="vllm",
            clock=ingest.Clock(year=2026),
            node="{folder}/{name}",
        )
        assert eng.rows("SELECT DISTINCT node FROM engine_capacity ORDER BY node") == [
            ("a/p",),
            ("b/p",),
        ]


def test_a_torn_startup_line_is_a_quarantined_fault_and_its_start_has_no_pool(
    tmp_path: Path,
) -> None:
    """Line 3 holds a pool figure cut mid-number by the next line (`GPU KV cache size: 16,3`
    and no ` tokens`): quarantined, a `quarantined` fault, and the start (its only pool line)
    has no capacity: `no_capacity` (none of its capacity lines could be read), no span."""
    log = write(
        tmp_path,
        "p.log",
        ARGS_NONE,
        "(EngineCore pid=3) INFO 01-20 14:02:40 [core.py:153] Initializing a V1 LLM engine (v0.17.1) with config: model='m', max_seq_len=8192",
        "(EngineCore pid=3) INFO 01-20 14:04:02 [kv_cache_utils.py:1314] GPU KV cache size: 16,3",
        "INFO 01-20 14:10:00 [loggers.py:250] Engine 000: GPU KV cache usage: 1.0%",
    )
    with load(tmp_path, log, year=2026) as eng:
        assert spans(eng) == []
        assert eng.rows("SELECT kind, source_row, figure FROM engine_faults ORDER BY kind") == [
            ("no_capacity", 3, None),
            ("quarantined", 3, "KV cache line without a whole number of tokens"),
        ]


def test_an_args_dump_run_into_the_line_before_it_still_ends_the_span(tmp_path: Path) -> None:
    """Line 3, an engine config line cut after `max_seq_len=40`, holds the 01:00:00 args dump
    of a new launch run into it: read as that args dump, quarantined. The 1,500-token span
    from 00:00:10 ends at 01:00:00 (the launch, nothing else of it read), and the capacity
    file says why above its end (before: the line was an engine config line and the span
    stayed open)."""
    args = (
        "(APIServer pid={}) INFO 09-01 {} [utils.py:278] non-default args: {{'model': 'm', "
        "'max_model_len': 4000, 'kv_transfer_config': KVTransferConfig(kv_connector="
        "'NixlConnector', kv_role='kv_producer')}}"
    )
    log = write(
        tmp_path,
        "p.log",
        args.format(3101, "00:00:00"),
        "(EngineCore_DP0 pid=3180) INFO 09-01 00:00:10 [kv_cache_utils.py:1168] GPU KV cache "
        "size: 1,500 tokens, Maximum concurrency for 4,000 tokens per request: 0.38x",
        "(EngineCore_DP0 pid=3180) INFO 09-01 00:30:00 [core.py:153] Initializing a V1 LLM "
        "engine (v0.34.0) with config: model='m', max_seq_len=40" + args.format(4101, "01:00:00"),
    )
    result = pipeline.capacity([log], tmp_path / "c.duckdb", out=tmp_path / "c.toml", year=2026)
    assert [(e["tokens"], e["start"], e["end"]) for e in result.entries] == [
        (1500, "2026-09-01T00:00:10Z", "2026-09-01T01:00:00Z")
    ]
    assert (result.inputs[0].rows_read, result.inputs[0].quarantined) == (3, 1)
    toml = (tmp_path / "c.toml").read_text(encoding="utf-8")
    assert (
        f"# ends here, where the logs show: engine logs: {log}:3: startup line quarantined: two "
        "lines run together: an args dump run into the line before it"
    ) in toml


def test_a_pool_of_zero_is_quarantined_as_a_figure_vllm_never_starts_with(tmp_path: Path) -> None:
    """V0 prints `# GPU blocks: 0` and then raises "No available memory for the cache blocks":
    the line is quarantined, never a span of 0 tokens."""
    log = write(
        tmp_path,
        "p.log",
        "INFO 01-20 14:00:00 api_server.py:713] args: Namespace(model='m', max_model_len=4096)",
        "INFO 01-20 14:01:00 gpu_executor.py:76] # GPU blocks: 0, # CPU blocks: 2048",
    )
    with load(tmp_path, log, year=2026) as eng:
        assert spans(eng) == []
        assert eng.rows("SELECT row, reason FROM quarantine") == [
            (2, "impossible figure: a KV pool of 0 (vLLM does not start with one)")
        ]


def test_one_engine_cores_pool_lines_that_disagree_are_refused_naming_both(
    tmp_path: Path,
) -> None:
    """From 0.12 an engine core prints one `KV cache size` line per start, after the
    smallest of its workers: two of one process in one start (16,384 and 12,288) cannot both
    be this server's. `forensics capacity` refuses, naming line 4 (the smaller) and line 3;
    the case database keeps 12,288 with a note."""
    core = "(EngineCore_DP0 pid=3) INFO 01-20 14:04:0{} [kv_cache_utils.py:1314] GPU KV cache size: {} tokens"
    log = write(
        tmp_path,
        "p.log",
        ARGS_P,
        "(EngineCore_DP0 pid=3) INFO 01-20 14:02:40 [core.py:153] Initializing a V1 LLM engine (v0.17.1) with config: model='m', max_seq_len=131072",
        core.format(2, "16,384"),
        core.format(3, "12,288"),
    )
    result = CliRunner().invoke(
        app, ["capacity", str(log), "--db", str(tmp_path / "c.duckdb"), "--year", "2026"]
    )
    assert result.exit_code != 0
    assert (
        f"its pool figures disagree, GPU KV cache size: 12288 tokens ({log}:4) and GPU KV "
        f"cache size: 16384 tokens ({log}:3)"
    ) in result.stderr
    with DuckDBEngine(tmp_path / "c.duckdb") as eng:
        assert [s[1] for s in spans(eng)] == [12288]


def test_tensor_parallel_workers_of_0_8_to_0_11_may_differ(tmp_path: Path) -> None:
    """0.11 prints one line per tensor-parallel worker, from one process, before the
    scheduler takes the smallest: 432,000 and 431,984 are one start of 431,984, no fault."""
    core = "(EngineCore_DP0 pid=3) INFO 01-20 14:04:02 [kv_cache_utils.py:1087] GPU KV cache size: {} tokens"
    log = write(
        tmp_path,
        "p.log",
        ARGS_P,
        "(EngineCore_DP0 pid=3) INFO 01-20 14:02:40 [core.py:74] Initializing a V1 LLM engine (v0.11.0) with config: model='m', max_seq_len=131072",
        core.format("432,000"),
        core.format("431,984"),
    )
    with load(tmp_path, log, year=2026) as eng:
        assert [s[1] for s in spans(eng)] == [431984]
        assert eng.rows("SELECT kind FROM engine_faults") == []


def test_v0_block_counts_of_one_start_that_disagree_are_refused(tmp_path: Path) -> None:
    """V0 prints its block count once per start, after the smallest of its workers: 1,000
    then 900 in one start is a disagreement (lines 2 and 3)."""
    log = write(
        tmp_path,
        "p.log",
        "INFO 01-20 14:00:00 api_server.py:713] args: Namespace(model='m', max_model_len=4096)",
        "INFO 01-20 14:01:00 executor_base.py:111] # cuda blocks: 1000, # CPU blocks: 2048",
        "INFO 01-20 14:01:01 executor_base.py:111] # cuda blocks: 900, # CPU blocks: 2048",
    )
    with load(tmp_path, log, year=2026) as eng:
        assert eng.rows(
            "SELECT kind, refuses, source_row, figure, other_row, other_figure FROM engine_faults"
        ) == [("disagreement", True, 3, "# cuda blocks: 900", 2, "# cuda blocks: 1000")]


def test_kv_faults_reconcile_with_the_gateway_and_widen_the_range(tmp_path: Path) -> None:
    """Faults for chatcmpl-abc (gateway id abc, band exposed: matched through the
    `chatcmpl-` prefix and the `-0a1b2c3d` suffix) and chatcmpl-zzz (no gateway record:
    engine_only)."""
    lines = [
        f"WARNING 01-20 14:12:00 [base_worker.py:3440] Releasing expired KV blocks for request "
        f"chatcmpl-{r}-0a1b2c3d which were retrieved by 0 remote worker(s) before lease expired."
        for r in ("abc", "zzz")
    ]
    log = write(tmp_path, "p.log", ARGS_P, *lines)
    with load(tmp_path, log, year=2026) as eng:
        eng.execute(
            "CREATE TABLE requests AS SELECT 'abc' AS request_id, CAST('{}' AS JSON) AS extra, "
            "'acct' AS account_id, 200 AS status"
        )
        eng.execute(
            "CREATE TABLE bands AS SELECT 'abc' AS request_id, 'exposed' AS band, "
            "200 AS status, CAST(NULL AS VARCHAR) AS exclusion_reason"
        )
        eng.execute("CREATE VIEW case_requests AS SELECT * FROM requests")
        eng.execute("CREATE TABLE case_success_status AS SELECT 200 AS status")
        eng.execute(
            "CREATE TABLE case_exclusions AS SELECT CAST(NULL AS VARCHAR) AS account_id, "
            "CAST(NULL AS VARCHAR) AS reason WHERE FALSE"
        )
        out = evidence.engine_evidence(eng, SimpleNamespace(context_window=None, sources=()))  # type: ignore[arg-type]
    assert out is not None
    assert out["engine_kv_faults"] == 2
    rec = out["engine_reconciliation"]
    assert rec["matched"]["count"] == 1
    assert rec["engine_only"]["reasons"] == {
        "KV transfer fault: no gateway request with this id": {
            "count": 1,
            "request_ids": ["chatcmpl-zzz"],
            "bootstrap_rooms": [],
        }
    }


def test_capacity_tells_the_engine_of_each_file_and_takes_the_year(tmp_path: Path) -> None:
    """A vLLM log beside an SGLang-free folder: `forensics capacity --year 2026` prints its
    span (16,384 tokens from 2026-01-20T14:04:02Z) for both roles."""
    log = write(
        tmp_path,
        "node-a.log",
        ARGS_NONE,
        "INFO 01-20 14:04:02 [kv_cache_utils.py:1733] GPU KV cache size: 16,384 tokens",
    )
    result = CliRunner().invoke(
        app, ["capacity", str(log), "--db", str(tmp_path / "c.duckdb"), "--year", "2026", "--quiet"]
    )
    assert result.exit_code == 0, result.output
    assert "prefill  node-a  16384" in result.stdout
    assert "2026-01-20T14:04:02Z" in result.stdout


def test_ingest_reads_a_folder_of_vllm_logs_with_the_year_given(tmp_path: Path) -> None:
    """`forensics ingest DIR --profile vllm --year 2026` on the 0.22.0 fixture folder: its
    two logs (README.md and expected.json skipped): 9 + 12 evidence lines, 2 duplicates
    (the second worker's repeat of each fault line)."""
    folder = Path(__file__).parent / "fixtures" / "vllm" / "0.22.0"
    result = CliRunner().invoke(
        app,
        [
            "ingest",
            str(folder),
            "--db",
            str(tmp_path / "c.duckdb"),
            "--profile",
            "vllm",
            "--year",
            "2026",
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    with DuckDBEngine(tmp_path / "c.duckdb") as eng:
        assert eng.rows("SELECT sum(rows_read), sum(duplicates) FROM inputs") == [(21, 2)]


def test_a_february_29_outside_a_leap_year_is_quarantined_naming_the_day_and_year(
    tmp_path: Path,
) -> None:
    """Line 2 is dated 02-29, read in 2026 (--year): no such day. It was quarantined as if
    it had no `mm-dd HH:MM:SS` time at all, which sends the responder looking at the line's
    head; the cause is the year."""
    log = write(
        tmp_path,
        "p.log",
        "INFO 02-28 14:02:11 [utils.py:278] non-default args: {'model': 'm', 'max_model_len': 8192}",
        "(EngineCore pid=3) INFO 02-29 14:04:02 [kv_cache_utils.py:1314] GPU KV cache size: 16,384 tokens",
    )
    with load(tmp_path, log, year=2026) as eng:
        assert eng.rows("SELECT row, reason FROM quarantine") == [
            (
                2,
                "its day 02-29 is not a day of 2026, the year the line is read in (the year "
                "given, or the one nearest the case window)",
            )
        ]


def test_the_preflight_note_names_the_engine_it_read(tmp_path: Path, runner: Any) -> None:
    """A vLLM start with max_model_len 32,768 and a pool of 16,384 tokens, against a window
    of 100,000: prompts of 16,385..32,767 are larger than the pool. The note said SGLang up to
    0.5.18 serves them from a placeholder; it is a vLLM log."""
    log = write(
        tmp_path,
        "p.log",
        "INFO 01-20 14:02:11 [utils.py:278] non-default args: {'model': 'm', 'max_model_len': 32768}",
        "(EngineCore pid=3) INFO 01-20 14:04:02 [kv_cache_utils.py:1314] GPU KV cache size: 16,384 tokens",
    )
    result = runner.invoke(
        app,
        [
            *("capacity", str(log), "--db", str(tmp_path / "c.duckdb")),
            *("--year", "2026", "--context-window", "100000"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert (
        "pool 16384 < window 100000; prompts of 16385..32767 tokens are larger than the pool "
        "(vLLM log: SGLang's one-token placeholder does not apply; whether they were refused "
        "or served is not known from the pool alone)"
    ) in result.stdout
    assert "SGLang up to 0.5.18" not in result.stdout
