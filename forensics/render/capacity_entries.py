"""The capacity timeline derived from engine logs as `[[capacity]]` entries of a case file
(what `forensics capacity --out capacity.toml` writes)."""

from __future__ import annotations

import json
from typing import Any

from ..formats import printable

# characters a glob reads as syntax (DuckDB's GLOB also reads `\` as an escape): each is
# written as a one-character class, which every glob reader takes literally (a `]` outside
# a class is literal everywhere)
_GLOB_SYNTAX = "*?[\\"


def _glob_literal(node: str) -> str:
    """A glob that matches exactly `node` (the case file's `nodes` is a glob)."""
    return "".join(f"[{c}]" if c in _GLOB_SYNTAX else c for c in node)


def to_toml(entries: list[dict[str, Any]]) -> str:
    """The spans (role, node, tokens, reject_from, start, end) as `[[capacity]]` tables for a
    case file; an entry without reject_from carries its reason as a comment."""
    parts = []
    for e in entries:
        lines = [
            "[[capacity]]",
            f"role = {json.dumps(e['role'])}",
            f"nodes = {json.dumps(_glob_literal(e['node']))}",
            f"tokens = {e['tokens']}",
        ]
        if e.get("reject_from") is not None:
            lines.append(f"reject_from = {e['reject_from']}")
        if e.get("note"):
            lines.append(f"# {printable(e['note'], one_line=True)}")
        lines.append(f"start = {json.dumps(e['start'])}")
        if e["end"] is not None:
            lines.append(f"end = {json.dumps(e['end'])}")
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)
