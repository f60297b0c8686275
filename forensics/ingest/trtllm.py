"""TensorRT-LLM server logs as evidence (profile `trtllm`; docs/engine-logs.md,
"TensorRT-LLM"; the format strings in tests/fixtures/trtllm/README.md).

Parsed by `queries/trtllm/parse.sql`, loaded by `engine_logs.ingest_logs`: the KV cache
manager's tokens per block and paged KV cache allocation (and, where printed, its
primary-pool blocks), max_seq_len (`Adjusted max_seq_len to N` when the pool forced it lower)
and the end of the PyTorch backend's memory estimation -> `engine_startup` -> `engine_starts`
(`queries/trtllm/starts.sql`) -> `engine_capacity`. Its lines name no role: give it
(`--role`, `[[source]] role`).
"""

from __future__ import annotations

from ..errors import option
from .capacity_spans import register
from .engine_logs import LogFormat

FORMAT = LogFormat(
    "trtllm",
    "TensorRT-LLM",
    parse="trtllm/parse",
    inserts=(("engine_startup", "trtllm/insert_startup"),),
    role_fix=f" (TensorRT-LLM's logs name no role: give each role's logs with its own "
    f"{option('role')})",
)
register(starts="trtllm/starts", capacity="trtllm/capacity")
