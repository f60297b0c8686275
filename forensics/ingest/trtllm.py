"""TensorRT-LLM server logs as evidence (profile `trtllm`; docs/engine-logs.md,
"TensorRT-LLM"; the format strings in tests/fixtures/trtllm/README.md).

Parsed by `queries/trtllm/parse.sql`, loaded by `engine_logs.ingest_logs`: the KV cache
manager's primary-pool blocks, tokens per block and paged KV cache allocation, and
max_seq_len (`Adjusted max_seq_len to N` when the pool forced it lower) -> `engine_startup`
-> `engine_capacity`. Its lines name no role: give it (`--role`, `[[source]] role`).
"""

from __future__ import annotations

from pathlib import Path

from ..engines import DuckDBEngine
from ..schema import InputStats
from .capacity_spans import register
from .engine_logs import Clock, LogFormat, ingest_logs

FORMAT = LogFormat(
    "trtllm",
    "TensorRT-LLM",
    needs_year=False,
    parse="trtllm/parse",
    insert_startup="trtllm/insert_startup",
    insert_requests="trtllm/insert_requests",
    insert_aborts="trtllm/insert_aborts",
    role="trtllm/role",
)
register("trtllm", schema_query=None, capacity_query="trtllm/capacity")


def ingest(
    engine: DuckDBEngine,
    files: list[Path],
    clock: Clock,
    node: str | None = None,
    role: str | None = None,
) -> list[InputStats]:
    """Load TensorRT-LLM server logs into the engine tables; one InputStats per file."""
    return ingest_logs(engine, FORMAT, files, clock, node=node, role=role)
