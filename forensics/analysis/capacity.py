"""The KV pool capacity timeline that SGLang server logs prove (`engine_capacity`, written by
ingest), and the pre-flight findings: every span whose pool is smaller than the context
window (the one given, else the `context_len` the server logged), with the danger band of
prompt sizes tokens + 1 .. window, accepted by validation but not held by the pool.
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
            "context_len": context_len,
            "start": iso_z(start),
            "end": iso_z(end),
            "source": source,
            "source_row": source_row,
        }
        for node, role, tokens, context_len, start, end, source, source_row in rows
    ]


def preflight(engine: SQLEngine, context_window: int | None) -> list[dict[str, Any]]:
    """Spans whose pool < the context window, with the danger band (JSON-ready, sorted)."""
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
            "start": iso_z(start),
            "end": iso_z(end),
        }
        for node, role, tokens, window, lo, hi, start, end in rows
    ]
