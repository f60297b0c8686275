"""TensorRT-LLM server logs (tests/fixtures/trtllm/context-0.log; its README names the
format strings and derives the figures below by hand)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from forensics import ingest
from forensics.engines import DuckDBEngine

LOG = Path(__file__).parent / "fixtures" / "trtllm" / "context-0.log"


def test_two_starts_with_their_pools_and_context_limits(tmp_path: Path) -> None:
    """294,848 tokens (the allocation line) and 131,072 from 14:02:11 until the restart at
    15:30:02; then 128 x 64 = 8,192 tokens with `Adjusted max_seq_len to 8192`."""
    with DuckDBEngine(tmp_path / "c.duckdb") as eng:
        ingest.ingest_into(eng, [LOG], profile="trtllm", role="prefill", clock=ingest.Clock())
        rows = eng.rows(
            "SELECT node, role, tokens, context_len, start_ts, end_ts FROM engine_capacity "
            "ORDER BY start_ts"
        )
    t1 = datetime(2026, 1, 20, 14, 2, 11, tzinfo=UTC)
    t2 = datetime(2026, 1, 20, 15, 30, 2, tzinfo=UTC)
    assert rows == [
        ("context-0", "prefill", 294848, 131072, t1, t2),
        ("context-0", "prefill", 8192, 8192, t2, None),
    ]


def test_the_accounting_counts_the_pool_and_seq_len_lines(tmp_path: Path) -> None:
    """9 evidence lines of 13 (README): all loaded; 4 other."""
    with DuckDBEngine(tmp_path / "c.duckdb") as eng:
        report = ingest.ingest_into(
            eng, [LOG], profile="trtllm", role="prefill", clock=ingest.Clock()
        )
    s = report.inputs[0]
    assert (s.rows_read, s.rows_loaded, s.duplicates, s.quarantined) == (9, 9, 0, 0)
    assert s.note == "lines=13 other=4"
