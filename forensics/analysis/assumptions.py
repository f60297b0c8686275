"""Assumptions: the canonical fields a source leaves unmapped that the analysis fills with a
default, made visible (docs: "Evidence and uncertainty").

Ingest records in `inputs.fields` which canonical fields each request log's mapping provides
(`forensics.analysis.coverage` reads it). A field in `DEFAULTS` that a source does not map is
listed in summary.json `assumptions` with its default, what that default does, the sources
and the number of in-scope requests (case models, inside the window) from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..schema import DEFAULT_STATUS
from .coverage import Coverage

# field -> (the default, what the analysis does with it)
DEFAULTS: dict[str, tuple[Any, str]] = {
    "status": (
        DEFAULT_STATUS,
        f"no record has a status: each is read as {DEFAULT_STATUS}, its response counted as "
        "delivered (an exposed one only down to the range's minimum)",
    ),
    "ts_end": (
        "ts",
        "a request's end is taken as its arrival time ts (order of the decode pool for data "
        "owners)",
    ),
    "decode_node": (
        None,
        "no decode node: the data owners of these requests' exposed responses cannot be attributed",
    ),
    "completion_tokens": (
        0,
        "completion tokens counted as 0 (tokens a request holds in the decode pool)",
    ),
}


@dataclass(frozen=True)
class Assumptions:
    """The assumptions (summary.json `assumptions`), the input paths whose status was
    assumed (for the exposure range), and warnings about inputs whose fields are unknown."""

    entries: list[dict[str, Any]]
    status_assumed: list[str]
    warnings: list[str]


def assumptions(cov: Coverage) -> Assumptions:
    """The defaults the analysis relies on, per field, from the inputs' recorded fields."""
    entries = []
    status_assumed: list[str] = []
    known = [i for i in cov.inputs if i.fields is not None]
    for name, (default, effect) in DEFAULTS.items():
        lacking = [i for i in known if name not in (i.fields or ())]
        if not lacking:
            continue
        if name == "status":
            status_assumed = sorted(i.path for i in lacking)
        entries.append(
            {
                "field": name,
                "default": default,
                "effect": effect,
                "sources": sorted({i.label for i in lacking}),
                "requests": sum(i.in_scope for i in lacking),
            }
        )
    unknown = sorted({i.label for i in cov.inputs if i.fields is None})
    warnings = (
        [
            f"which fields the mapping of {', '.join(unknown)} provides was not recorded (an "
            "older ingest): its assumptions cannot be listed; re-ingest it to list them"
        ]
        if unknown
        else []
    )
    return Assumptions(entries, status_assumed, warnings)
