"""The KV pool capacity timeline derived from SGLang server logs (`forensics capacity`).

`derive(logs, db, ...)` ingests the logs (profile `sglang`) into the case database and
returns the timeline: one `[[capacity]]` entry per server start (role, nodes = the exact
node id, tokens, start, end = the node's next start, absent for the last), written as TOML a
case file can use, plus a pre-flight finding for every span whose pool is smaller than the
context window (the option, else the `context_len` the server logged): the danger band of
prompt sizes tokens + 1 .. window, accepted by validation but not held by the pool.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import queries, sglang
from .engine import Engine
from .errors import InputError


def iso(ts: datetime | None) -> str | None:
    """An aware time as ISO 8601 UTC with `Z` (microseconds only when present)."""
    if ts is None:
        return None
    aware = ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)
    return aware.isoformat().replace("+00:00", "Z")


def timeline(engine: Engine) -> list[dict[str, Any]]:
    """The capacity spans of `engine_capacity`, prefill first, by node and start."""
    rows = engine.rows(queries.load("sglang/timeline"))
    return [
        {
            "role": role,
            "node": node,
            "tokens": tokens,
            "context_len": context_len,
            "start": iso(start),
            "end": iso(end),
            "source": source,
            "source_row": source_row,
        }
        for node, role, tokens, context_len, start, end, source, source_row in rows
    ]


def preflight(engine: Engine, context_window: int | None) -> list[dict[str, Any]]:
    """Spans whose pool < the context window, with the danger band (JSON-ready, sorted)."""
    if not engine.table_exists("engine_capacity"):
        return []
    rows = engine.rows(queries.load("sglang/preflight"), context_window=context_window)
    return [
        {
            "node": node,
            "role": role,
            "tokens": tokens,
            "context_window": window,
            "danger_band": {"from": lo, "to": hi},
            "start": iso(start),
            "end": iso(end),
        }
        for node, role, tokens, window, lo, hi, start, end in rows
    ]


def _glob_literal(node: str) -> str:
    """A shell glob that matches exactly `node` (the case file's `nodes` is a glob)."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in node)


def to_toml(entries: list[dict[str, Any]]) -> str:
    """The spans as `[[capacity]]` tables for a case file."""
    parts = []
    for e in entries:
        lines = [
            "[[capacity]]",
            f"role = {json.dumps(e['role'])}",
            f"nodes = {json.dumps(_glob_literal(e['node']))}",
            f"tokens = {e['tokens']}",
            f"start = {json.dumps(e['start'])}",
        ]
        if e["end"] is not None:
            lines.append(f"end = {json.dumps(e['end'])}")
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


@dataclass
class CapacityResult:
    """The derived timeline, the pre-flight findings and the input accounting."""

    entries: list[dict[str, Any]]
    preflight: list[dict[str, Any]]
    inputs: list[Any] = field(default_factory=list)
    context_window: int | None = None
    out: Path | None = None

    def toml(self) -> str:
        return to_toml(self.entries)

    def render(self) -> str:
        """A plain-text table of the spans, then the findings (deterministic)."""
        head = ("role", "node", "tokens", "context_len", "start", "end")
        rows = [
            (
                e["role"],
                e["node"],
                str(e["tokens"]),
                "" if e["context_len"] is None else str(e["context_len"]),
                e["start"],
                e["end"] or "(open)",
            )
            for e in self.entries
        ]
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
        lines = [
            "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in [head, *rows]
        ]
        if self.preflight:
            lines.append("")
            lines.append(f"pre-flight: {len(self.preflight)} span(s) with pool < context window")
            for f in self.preflight:
                band = f["danger_band"]
                lines.append(
                    f"  {f['role']} {f['node']} from {f['start']}: pool {f['tokens']} < window "
                    f"{f['context_window']}; prompts of {band['from']}..{band['to']} tokens "
                    "pass validation but do not fit the pool"
                )
        else:
            lines.append("")
            lines.append("pre-flight: every pool holds the context window")
        if self.out is not None:
            lines.append(f"wrote {len(self.entries)} [[capacity]] entries to {self.out}")
        return "\n".join(lines)


def derive(
    logs: list[str] | list[Path],
    db: str | Path,
    context_window: int | None = None,
    out: str | Path | None = None,
    node: str | None = None,
    role: str | None = None,
) -> CapacityResult:
    """Ingest SGLang logs into `db`; the capacity timeline, pre-flight findings, TOML to `out`."""
    from .ingest import resolve_inputs  # late: ingest dispatches to forensics.sglang

    files = resolve_inputs(logs)
    with Engine(db) as engine:
        inputs = sglang.ingest_logs(engine, files, node=node, role=role)
        entries = timeline(engine)
        findings = preflight(engine, context_window)
    unknown = sorted({e["node"] for e in entries if e["role"] is None})
    if unknown:
        raise InputError(
            f"cannot tell the role (prefill or decode) of node(s) {', '.join(unknown)}",
            where=", ".join(str(f) for f in files),
            fix="give --role, or ingest logs that hold server_args or ReqTimeStats lines",
        )
    if not entries:
        raise InputError(
            "no capacity line (KV Cache is allocated / max_total_num_tokens) in the logs",
            where=", ".join(str(f) for f in files),
            fix="give the server logs from startup on",
        )
    result = CapacityResult(entries, findings, inputs, context_window, None)
    if out is not None:
        path = Path(out)
        path.write_text(result.toml(), encoding="utf-8")
        result.out = path
    return result
