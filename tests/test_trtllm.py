"""TensorRT-LLM server logs (tests/fixtures/trtllm/context-0.log; its README names the
format strings and derives the figures below by hand), and the fault rules every engine
shares applied to its lines."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from forensics import ingest, pipeline
from forensics.engines import DuckDBEngine
from forensics.errors import InputError

LOG = Path(__file__).parent / "fixtures" / "trtllm" / "context-0.log"
PY = (
    "[01/20/2026-{}] [TRT-LLM] [I] Memory used after loading model weights (inside torch) in "
    "memory usage profiling: 14.97 GiB"
)
CPP = "[TensorRT-LLM][INFO] "


def _write(tmp_path: Path, *lines: str, newline: bool = True) -> Path:
    path = tmp_path / "context-1.log"
    path.write_text("\n".join(lines) + ("\n" if newline else ""), encoding="utf-8")
    return path


def _load(tmp_path: Path, log: Path) -> DuckDBEngine:
    eng = DuckDBEngine(tmp_path / "c.duckdb")
    ingest.ingest_into(eng, [log], profile="trtllm", role="prefill", clock=ingest.Clock())
    return eng


def test_each_launch_is_one_span_of_its_final_kv_cache(tmp_path: Path) -> None:
    """README: four KV cache creations (ended by lines 8, 18, 26, 35); 1 and 3 only
    estimate memory (the creation after each holds `Estimated max memory in KV cache`), so
    no span of 8,224 tokens. 294,912 tokens and context 131,072 from 14:03:31 (line 15, timed
    by line 14) until the next launch begins at 15:30:02 (line 22); then 8,192 tokens with
    `Adjusted max_seq_len to 8192` from 15:31:10 (line 32), open."""
    with _load(tmp_path, LOG) as eng:
        rows = eng.rows(
            "SELECT node, role, tokens, context_len, start_ts, end_ts, source_row "
            "FROM engine_capacity ORDER BY start_ts"
        )
    t1 = datetime(2026, 1, 20, 14, 3, 31, tzinfo=UTC)
    t2 = datetime(2026, 1, 20, 15, 30, 2, tzinfo=UTC)
    t3 = datetime(2026, 1, 20, 15, 31, 10, tzinfo=UTC)
    assert rows == [
        ("context-0", "prefill", 294912, 131072, t1, t2, 15),
        ("context-0", "prefill", 8192, 8192, t3, None, 32),
    ]


def test_the_accounting_counts_the_pool_seq_len_and_estimation_lines(tmp_path: Path) -> None:
    """README: 21 evidence lines of 35, all loaded; 14 other."""
    eng = DuckDBEngine(tmp_path / "c.duckdb")
    with eng:
        report = ingest.ingest_into(
            eng, [LOG], profile="trtllm", role="prefill", clock=ingest.Clock()
        )
    s = report.inputs[0]
    assert (s.rows_read, s.rows_loaded, s.duplicates, s.quarantined) == (21, 21, 0, 0)
    assert s.note == "lines=35 other=14"


def test_a_restart_of_the_cpp_executor_without_end_lines_opens_a_new_span(
    tmp_path: Path,
) -> None:
    """No `max_seq_len=` line ends the creations: the pool lines at 15:00 after the first
    allocation open the second start. 4,607 x 64 = 294,848 from 14:00:00 to 15:00:00, then
    128 x 64 = 8,192."""
    log = _write(
        tmp_path,
        PY.format("14:00:00"),
        CPP + "Number of blocks in KV cache primary pool: 4607",
        CPP + "Number of tokens per block: 64.",
        CPP + "[MemUsageChange] Allocated 62.99 GiB for max tokens in paged KV cache (294848).",
        PY.format("15:00:00"),
        CPP + "Number of blocks in KV cache primary pool: 128",
        CPP + "Number of tokens per block: 64.",
        CPP + "[MemUsageChange] Allocated 1.97 GiB for max tokens in paged KV cache (8192).",
    )
    with _load(tmp_path, log) as eng:
        assert eng.rows("SELECT tokens, start_ts, end_ts FROM engine_capacity ORDER BY 2") == [
            (
                294848,
                datetime(2026, 1, 20, 14, 0, tzinfo=UTC),
                datetime(2026, 1, 20, 15, 0, tzinfo=UTC),
            ),
            (8192, datetime(2026, 1, 20, 15, 0, tzinfo=UTC), None),
        ]


def test_an_allocation_that_is_not_blocks_times_tokens_per_block_is_refused(
    tmp_path: Path,
) -> None:
    """The allocation line states primary blocks x tokens per block: 4,607 x 64 = 294,848,
    but line 4 says 294,912. One start has one pool, so `forensics capacity` refuses,
    naming line 2 (the smaller figure) and line 4."""
    log = _write(
        tmp_path,
        PY.format("14:00:00"),
        CPP + "Number of blocks in KV cache primary pool: 4607",
        CPP + "Number of tokens per block: 64.",
        CPP + "[MemUsageChange] Allocated 36.00 GiB for max tokens in paged KV cache (294912).",
    )
    with pytest.raises(InputError) as info:
        pipeline.capacity([log], tmp_path / "c.duckdb", role="prefill")
    assert (
        f"its pool figures disagree, 4607 primary-pool blocks x 64 tokens per block ({log}:2) "
        f"and paged KV cache (294912) ({log}:4)"
    ) in info.value.what


def test_an_allocation_cut_by_the_end_of_the_file_leaves_its_start_without_a_pool(
    tmp_path: Path,
) -> None:
    """The file ends inside `(2949`: line 3 is quarantined (a `quarantined` fault), and its
    start, whose only figure it held, has no span (`no_capacity`)."""
    log = _write(
        tmp_path,
        PY.format("14:00:00"),
        CPP + "Number of tokens per block: 32.",
        CPP + "[MemUsageChange] Allocated 36.00 GiB for max tokens in paged KV cache (2949",
        newline=False,
    )
    with _load(tmp_path, log) as eng:
        assert eng.rows("SELECT count(*) FROM engine_capacity") == [(0,)]
        assert eng.rows("SELECT kind, source_row FROM engine_faults ORDER BY kind") == [
            ("no_capacity", 3),
            ("quarantined", 3),
        ]


def test_a_kv_cache_with_a_pool_per_window_size_gives_no_span(tmp_path: Path) -> None:
    """Variable sliding-window attention: one `Max KV cache blocks per sequence` line per
    window size (4,096 and 131,072), one pool each; no single [[capacity]] entry states them,
    so no span, and a `no_capacity` fault saying why, at line 2."""
    line = (
        CPP + "Max KV cache blocks per sequence: {} [window size={}], tokens per block=32, "
        "primary blocks={}, secondary blocks=0, max sequence length=131072"
    )
    log = _write(
        tmp_path,
        PY.format("14:00:00"),
        line.format(128, 4096, 4000),
        line.format(4096, 131072, 4000),
        CPP + "Number of tokens per block: 32.",
        CPP + "[MemUsageChange] Allocated 2.00 GiB for max tokens in paged KV cache (256000).",
    )
    with _load(tmp_path, log) as eng:
        assert eng.rows("SELECT count(*) FROM engine_capacity") == [(0,)]
        assert eng.rows("SELECT kind, source_row, figure FROM engine_faults") == [
            (
                "no_capacity",
                2,
                "its KV cache has one pool per attention window size (variable sliding-window "
                "attention: 131072, 4096), which no one [[capacity]] entry can state",
            )
        ]


def test_two_servers_of_one_node_id_are_refused_by_any_timed_line(tmp_path: Path) -> None:
    """a/context-1.log allocates at 14:00:10 and logs a Python line at 16:00:00 (no
    evidence); b/context-1.log allocates at 15:00:10: a ran 14:00:00 .. 16:00:00 over b's
    15:00:00 .. 15:00:10, both start a server: refused (by evidence lines alone a ended at
    14:00:10 and the two merged)."""
    alloc = "[MemUsageChange] Allocated 2.00 GiB for max tokens in paged KV cache (8192)."
    logs = []
    for rack, hour, last in (("a", "14", ["16:00:00"]), ("b", "15", [])):
        (tmp_path / rack).mkdir()
        path = tmp_path / rack / "context-1.log"
        lines = [
            PY.format(f"{hour}:00:00"),
            f"[01/20/2026-{hour}:00:10] [TRT-LLM] [I] {alloc}",
            *(PY.format(t) for t in last),
        ]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        logs.append(path)
    eng = DuckDBEngine(tmp_path / "c.duckdb")
    with eng, pytest.raises(InputError) as info:
        ingest.ingest_into(eng, logs, profile="trtllm", role="prefill", clock=ingest.Clock())
    assert info.value.where == f"{logs[0]}, {logs[1]}"
    assert "(2026-01-20T14:00:00Z .. 2026-01-20T16:00:00Z and " in info.value.what


def test_a_local_time_the_clock_went_over_twice_is_quarantined(tmp_path: Path) -> None:
    """With --timezone America/New_York, 11/01/2026-01:30:00 occurs twice (EDT, then EST):
    the allocation line at that time is quarantined; the one at 00:30:10 (EDT only, 04:30:10
    UTC) gives the span, open."""
    alloc = "[MemUsageChange] Allocated 2.00 GiB for max tokens in paged KV cache ({})."
    log = tmp_path / "context-1.log"
    log.write_text(
        "[11/01/2026-00:30:10] [TRT-LLM] [I] " + alloc.format(8192) + "\n"
        "[11/01/2026-01:30:00] [TRT-LLM] [I] " + alloc.format(4096) + "\n",
        encoding="utf-8",
    )
    eng = DuckDBEngine(tmp_path / "c.duckdb")
    with eng:
        report = ingest.ingest_into(
            eng,
            [log],
            profile="trtllm",
            role="prefill",
            clock=ingest.Clock(timezone="America/New_York"),
        )
        assert (report.inputs[0].rows_read, report.inputs[0].quarantined) == (2, 1)
        assert eng.rows("SELECT tokens, start_ts, end_ts FROM engine_capacity") == [
            (8192, datetime(2026, 11, 1, 4, 30, 10, tzinfo=UTC), None)
        ]
        reason = eng.scalar("SELECT reason FROM quarantine WHERE row = 2")
    assert reason.startswith("local time 2026-11-01 01:30:00 occurs twice in America/New_York")


def test_a_log_without_role_is_refused_saying_trtllm_logs_name_none(tmp_path: Path) -> None:
    """context-0.log holds no line that names a role (TensorRT-LLM prints none): the fix
    asks for --role, never for SGLang's server_args or ReqTimeStats lines."""
    with pytest.raises(InputError) as info:
        pipeline.capacity([LOG], tmp_path / "c.duckdb")
    assert info.value.what == "cannot tell the role (prefill or decode) of node(s) context-0"
    role = "\u27e6role\u27e7"  # errors.option: --role on the command line, role= in Python
    assert info.value.fix == (
        f"give {role} (TensorRT-LLM's logs name no role: give each role's logs with its own {role})"
    )


def test_a_pool_above_the_engines_own_context_limit_gives_no_empty_band(
    tmp_path: Path, runner: Any
) -> None:
    """README: 294,912 tokens with context 131,072 from 14:03:31; 8,192 with 8,192 from
    15:31:10. Against a window of 300,000 both pools are below the window, but no prompt size
    lies between pool and context limit: the note said `prompts of 294913..131071 tokens`
    and blamed SGLang's placeholder."""
    from forensics.cli import app

    result = runner.invoke(
        app,
        [
            *("capacity", str(LOG), "--db", str(tmp_path / "c.duckdb"), "--role", "prefill"),
            *("--context-window", "300000"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert (
        "  prefill context-0 from 2026-01-20T14:03:31Z: pool 294912 < window 300000; no prompt "
        "size lies between the pool and the engine's own context limit (131072): the engine "
        "refuses every prompt the pool cannot hold\n"
    ) in result.stdout
    assert "SGLang" not in result.stdout
