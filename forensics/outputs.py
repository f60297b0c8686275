"""Deterministic output files: ISO 8601 UTC `Z` times, sorted rows, stable bytes."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl


def iso_z(value: datetime | None) -> str | None:
    """An aware or naive-UTC datetime as ISO 8601 UTC with `Z` (fraction only when non-zero)."""
    if value is None:
        return None
    dt = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    text = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if dt.microsecond:
        text += f".{dt.microsecond:06d}"
    return text + "Z"


def write_csv(frame: pl.DataFrame, path: Path) -> Path:
    """Write a (small, already sorted, times already formatted) frame as CSV with a header."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.write_csv(path, include_header=True, line_terminator="\n", null_value="")
    return path


def write_json(data: dict[str, Any], path: Path) -> Path:
    """Write JSON with sorted keys, indent 2 and a trailing newline."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n")
    return path
