"""The KV pool capacity timeline that SGLang server logs prove (`engine_capacity`, written by
ingest), and the pre-flight findings: every span whose pool is smaller than the context
window (the one given, else the `context_len` the server logged), with the danger band of
prompt sizes the tokenizer passes but the scheduler refuses: from the span's admission limit
`reject_from` (tokens + 1 where the logs do not give it) to the context length - 1 (the
tokenizer refuses from the context length). Up to SGLang 0.5.18 a disaggregated prefill
serves those from a one-token placeholder (the bug); from 0.5.21 it refuses them with 400.
"""

from __future__ import annotations

from typing import Any

from ..engines import SQLEngine
from ..formats import iso_z


def timeline(engine: SQLEngine) -> list[dict[str, Any]]:
    """The capacity spans of `engine_capacity`, prefill first, by node and start."""
    rows = engine.frame("capacity/timeline").rows()
    return [
        {
            "role": role,
            "node": node,
            "tokens": tokens,
            "reject_from": reject_from,
            "context_len": context_len,
            "start": iso_z(start),
            "end": iso_z(end),
            "note": note,
            "engine_warned": bool(warned),
            "source": source,
            "source_row": source_row,
        }
        for (
            node,
            role,
            tokens,
            reject_from,
            context_len,
            note,
            warned,
            start,
            end,
            source,
            source_row,
        ) in rows
    ]


def preflight(engine: SQLEngine, context_window: int | None) -> list[dict[str, Any]]:
    """Spans whose pool < the context window, with the danger band (JSON-ready, sorted);
    `engine_warned`: the engine logged its own pre-flight warning in that start (0.5.23+)."""
    if not engine.table_exists("engine_capacity"):
        return []
    rows = engine.frame("capacity/preflight", context_window=context_window).rows()
    return [
        {
            "node": node,
            "role": role,
            "tokens": tokens,
            "context_window": window,
            "danger_band": {"from": lo, "to": hi},
            "engine_warned": bool(warned),
            "start": iso_z(start),
            "end": iso_z(end),
        }
        for node, role, tokens, window, lo, hi, warned, start, end in rows
    ]
