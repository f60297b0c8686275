"""Blast radius: every model of the logs against the prefill capacity in force on its node at
its time, over the whole span of the loaded logs (docs/decisions.md "Blast radius").

`blast_radius(engine, case)` materializes `blast_radius` (one row per model and prefill node,
`queries/blast_radius/nodes.sql`) from the case's requests with the prefill capacity in force
that the bands read too (`case_requests_in_force`, which `exposure.compute_bands` defines),
the case tables, and the engine's own prefill capacity timeline (`engine_capacity`, when
engine logs were ingested), and returns the figures per model for summary.json with their
warnings. So "no other model was affected" is a count, with the share of requests whose
capacity is known.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from ..case import Case
from ..engines import SQLEngine
from ..formats import iso_z, write_csv
from ..schema import DEFAULT_STATUS

TABLE = "blast_radius"
ENGINE_TABLE = "blast_radius_engine"  # the engine logs' prefill spans, one in force at a time
COUNTS = (
    "requests",
    "over_capacity",
    "excluded",
    "unknown_capacity",
    "in_window",
    "outside_window",
)
_UTC = pl.Datetime("us", "UTC")


@dataclass
class BlastRadius:
    """Per model (sorted): `model`, the `COUNTS`, `first_over` and `last_over` (ISO UTC or
    None), as summary.json's `blast_radius` lists them; and the warnings they raise."""

    models: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def blast_radius(engine: SQLEngine, case: Case) -> BlastRadius:
    """Materialize `blast_radius` and return the figures per model and the warnings: the
    case's own models over capacity outside the window (the window may be too narrow), and
    `[[capacity]]` entries whose `models` glob matches no model of the logs. Needs
    `requests`, the case tables and `case_requests_in_force` (`exposure.compute_bands`, or
    `exposure.load_case_tables` and `exposure.capacity_in_force`)."""
    if engine.table_exists("engine_capacity"):
        engine.materialize(ENGINE_TABLE, "blast_radius/engine_spans")
    else:
        none = pl.DataFrame(
            schema={
                "node": pl.String,
                "tokens": pl.Int64,
                "reject_from": pl.Int64,
                "start_ts": _UTC,
                "end_ts": _UTC,
            }
        )
        engine.write_frame(ENGINE_TABLE, none, "node")
    engine.materialize(
        TABLE,
        "blast_radius/nodes",
        window_start=case.window_start,
        window_end=case.window_end,
        context_window=case.context_window,
        default_status=DEFAULT_STATUS,
    )
    models = [
        {
            "model": row["model"],
            **{k: int(row[k]) for k in COUNTS},
            "first_over": iso_z(row["first_over"]),
            "last_over": iso_z(row["last_over"]),
        }
        for row in engine.frame("blast_radius/models").iter_rows(named=True)
    ]
    return BlastRadius(models, _warnings(case, models))


def _warnings(case: Case, models: list[dict[str, Any]]) -> list[str]:
    warnings = [
        f"{m['outside_window']} request(s) of the case's model {m['model']} outside the window "
        "were answered with a prompt above the prefill capacity in force (its over-capacity "
        f"requests span {m['first_over']} to {m['last_over']}): the window may be too narrow "
        "(blast_radius.csv has them per prefill node)"
        for m in models
        if m["model"] in case.models and m["outside_window"]
    ]
    seen = [m["model"] for m in models]
    for number, entry in enumerate(case.capacity, start=1):
        if entry.models is not None and not any(entry.applies_to(m) for m in seen):
            shown = ", ".join(seen[:5]) + (f" and {len(seen) - 5} more" if len(seen) > 5 else "")
            warnings.append(
                f"[[capacity]] entry {number} ({entry.role}, models {entry.models!r}) matches "
                f"no model of the logs ({shown or 'they hold none'})"
            )
    return warnings


def rows(engine: SQLEngine) -> pl.DataFrame:
    """`blast_radius` as blast_radius.csv holds it: per model and prefill node, sorted by
    model then node (no node first), times as ISO 8601 UTC with `Z`."""
    return engine.frame("blast_radius/rows")


def write_blast_radius_csv(engine: SQLEngine, path: Path) -> Path:
    """`blast_radius.csv`: the blast radius per model and prefill node (`rows`)."""
    return write_csv(rows(engine), path)
