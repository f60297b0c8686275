"""The KV pool capacity timeline that engine server logs prove (`engine_capacity`, written by
ingest), and the pre-flight findings: every span whose pool is smaller than the context
window (the one given, else the `context_len` the server logged), with the danger band of
prompt sizes the tokenizer passes but the scheduler refuses: from the span's admission limit
`reject_from` (tokens + 1 where the logs do not give it) to the context length - 1 (the
tokenizer refuses from the context length). Up to SGLang 0.5.18 a disaggregated prefill
serves those from a one-token placeholder (the bug); from 0.5.21 it refuses them with 400.

The faults (`engine_faults`, written by ingest): what the timeline could not take as the
logs wrote it, each as one sentence naming its lines (`fault_text`). Those that `refuses`
(the pool figures of one start disagree, a pool below one page) keep `forensics capacity`
from writing entries; every fault is a warning of the analysis.
"""

from __future__ import annotations

from collections.abc import Callable
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


def engines(engine: SQLEngine) -> dict[str, str]:
    """The engine whose log gave each node's capacity spans: node -> `sglang`, `vllm` or
    `trtllm` ({} without spans)."""
    if not engine.table_exists("engine_capacity"):
        return {}
    return {str(node): str(name) for node, name in engine.frame("capacity/engines").rows()}


def faults(engine: SQLEngine) -> list[dict[str, Any]]:
    """The rows of `engine_faults` (JSON-ready), by node, time and line; [] without one."""
    if not engine.table_exists("engine_faults"):
        return []
    keys = (
        "node",
        "kind",
        "refuses",
        "ts",
        "source",
        "source_row",
        "figure",
        "other_ts",
        "other_source",
        "other_row",
        "other_figure",
    )
    out = []
    for row in engine.frame("capacity/faults").rows():
        fault = dict(zip(keys, row, strict=True))
        fault["refuses"] = bool(fault["refuses"])
        fault["ts"], fault["other_ts"] = iso_z(fault["ts"]), iso_z(fault["other_ts"])
        out.append(fault)
    return out


def fault_text(fault: dict[str, Any], where: Callable[[str], str] = str) -> str:
    """One fault as a sentence naming its lines (`where` shows a log's path)."""
    at = f"{where(fault['source'])}:{fault['source_row']}"
    other = (
        f"{where(fault['other_source'])}:{fault['other_row']}"
        if fault["other_source"] is not None
        else None
    )
    node, ts, kind = fault["node"], fault["ts"], fault["kind"]
    no_entry = "no [[capacity]] entry is derived for it: write it by hand from the line that"
    if kind == "disagreement":
        return (
            f"engine logs: {node} start at {ts}: its pool figures disagree, {fault['figure']} "
            f"({at}) and {fault['other_figure']} ({other}); one start has one pool, so "
            f"{no_entry} belongs to this server"
        )
    if kind == "below_page":
        return (
            f"engine logs: {node} start at {ts}: {fault['figure']} ({at}) is less than one page "
            f"({fault['other_figure']}, {other}), and SGLang sizes its pool in whole pages; "
            f"{no_entry} is right"
        )
    if kind == "no_capacity":
        why = fault["figure"] or "none of this start's capacity lines could be read"
        said = at if fault["figure"] else f"{at} was quarantined"
        return (
            f"engine logs: {node} from {ts}: {why} ({said}): it has no [[capacity]] entry, and "
            "requests there match none"
        )
    if kind == "time_back":
        return (
            f"engine logs: {where(fault['source'])}: line {fault['source_row']} ({ts}) is more "
            f"than a second before line {fault['other_row']} above it ({fault['other_ts']}): "
            "the log goes back in time (rotated logs joined out of order?); its spans are "
            "built in time order"
        )
    if kind == "year":
        return f"engine logs: {where(fault['source'])}: {fault['figure']}"
    return f"engine logs: {at}: startup line quarantined: {fault['figure']}"
