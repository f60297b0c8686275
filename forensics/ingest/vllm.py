"""vLLM server logs as evidence (profile `vllm`): every spelling of vLLM 0.6 .. 0.34
(docs/engine-logs.md, "vLLM"; the format strings per version in tests/fixtures/vllm/).

Parsed by `queries/vllm/parse.sql`, loaded by `engine_logs.ingest_logs`: the args dump
(role from kv_role, block_size, max_model_len), the engine config line, `Using max model
len`, the pool lines (`# GPU blocks: N`, `KV cache size: N tokens`), a failed start ->
`engine_startup` -> `engine_starts` (`queries/vllm/starts.sql`) -> `engine_capacity`;
context-length refusals -> `engine_aborts` kind `rejected`; NixlConnector's expired / invalid
KV block lines -> `engine_kv_faults`; request, abort and preemption lines -> `engine_requests`;
`KV cache usage: P%` -> `engine_pool_usage`. vLLM prints no year and no zone: a `Clock` gives
them.
"""

from __future__ import annotations

from .capacity_spans import register
from .engine_logs import LogFormat

FORMAT = LogFormat(
    "vllm",
    "vLLM",
    parse="vllm/parse",
    inserts=(
        ("engine_startup", "vllm/insert_startup"),
        ("engine_requests", "vllm/insert_requests"),
        ("engine_aborts", "vllm/insert_aborts"),
    ),
    role="vllm/role",
    needs_year=True,
    clock="vllm/clock",
)
register(starts="vllm/starts", capacity="vllm/capacity")
