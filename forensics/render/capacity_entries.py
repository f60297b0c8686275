"""The capacity timeline derived from engine logs as `[[capacity]]` entries of a case file
(what `forensics capacity --out capacity.toml` writes)."""

from __future__ import annotations

import json
from typing import Any


def _glob_literal(node: str) -> str:
    """A shell glob that matches exactly `node` (the case file's `nodes` is a glob)."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in node)


def to_toml(entries: list[dict[str, Any]]) -> str:
    """The spans (role, node, tokens, start, end) as `[[capacity]]` tables for a case file."""
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
