"""SGLang server logs as evidence (profile `sglang`): capacity lines, per-request lines,
rejections; every spelling of SGLang 0.4.10 .. 0.5.23 (docs/engine-logs.md).

Parsed by `queries/sglang/parse.sql`, loaded by `engine_logs.ingest_logs` (the reader loop and
fault rules every engine shares) into:

- `engine_startup` (server_args, KV pool allocation, sliding-window pool, max_total_num_tokens
  and engine pre-flight lines; a quarantined one too, with its reason and no figures), from
  which `engine_starts` (one row per server start: `queries/sglang/starts.sql` holds the span
  rules) and `engine_capacity` (one span per start with a readable pool, with the admission
  limit `reject_from`) are rebuilt after each ingest,
- `engine_requests` (ReqTimeStats / Req Time Stats, Finish and Receive lines in text or JSON,
  and the records of a `--export-metrics-to-file` export; `kind` says which, `finish_reason`
  the finish_reason type),
- `engine_aborts` (`kind`: input_length = scheduler "Input length (N tokens) exceeds the
  maximum allowed length (M tokens) ..., self.rid='R'", truncated = the same check under
  --allow-auto-truncate, kv_capacity = "Request R exceeds the maximum number of tokens",
  context_length = tokenizer "The input (N tokens) is longer than the model's context
  length", transfer_failed = "Decode transfer failed for request ..."); an abort line that
  names only the rid takes its bootstrap_room from the node's request lines.

A duplicate is an `[http_server] Error:` line that repeats an abort message the scheduler or
the Finish line already carries (it names no rid). A figure cut mid-field (not followed by
the separator SGLang's format string puts after it, or ending an unterminated last line) and a
figure SGLang never starts with (a pool of 0, an admission limit below 1) quarantine their
line. Times in the `[YYYY-MM-DD HH:MM:SS …]` envelope carry no zone and are read as UTC. The
role is `role`, else the `disaggregation_mode` in the server_args line, else the `type=` of
its ReqTimeStats lines, else the one role the node's other inputs name.
"""

from __future__ import annotations

from pathlib import Path

from ..engines import DuckDBEngine
from ..schema import ROLES, InputStats
from .capacity_spans import register
from .engine_logs import Clock, LogFormat, ensure_tables, node_from_path, node_id
from .engine_logs import ingest_logs as _ingest

__all__ = ["FORMAT", "ensure_tables", "ingest_logs", "node_from_path", "node_id"]

FORMAT = LogFormat(
    "sglang",
    "SGLang",
    parse="sglang/parse",
    inserts=(
        ("engine_startup", "sglang/insert_startup"),
        ("engine_requests", "sglang/insert_requests"),
        ("engine_aborts", "sglang/insert_aborts"),
    ),
    role="sglang/role",
    counts="sglang/counts",
    finish=("sglang/fill_abort_rooms",),
    roles=ROLES,
    role_fix=", or ingest SGLang logs that hold server_args or ReqTimeStats lines",
)
register(starts="sglang/starts", capacity="sglang/capacity")


def ingest_logs(
    engine: DuckDBEngine,
    files: list[Path],
    node: str | None = None,
    role: str | None = None,
) -> list[InputStats]:
    """Load SGLang server logs into the engine tables; one InputStats per file, in order; all
    files of one call in one transaction (`engine_logs.ingest_logs`)."""
    return _ingest(engine, FORMAT, files, Clock(), node=node, role=role)
