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

from ..case import Capacity, Case
from ..engines import SQLEngine
from ..formats import iso_z, write_csv
from ..schema import DEFAULT_STATUS
from .exposure import ENGINE_LENGTHS

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
    `requests`, the case tables, `case_requests_in_force` and `engine_lengths` (each
    request is judged by the length that decides its band) (`exposure.compute_bands`, or
    `exposure.load_case_tables` and `exposure.capacity_in_force`)."""
    if not engine.table_exists("engine_lengths"):  # a database analysed by an older version
        engine.write_frame("engine_lengths", pl.DataFrame(schema=ENGINE_LENGTHS), "request_id")
    if engine.table_exists("engine_capacity"):
        engine.materialize(ENGINE_TABLE, "blast_radius/engine_spans")
    else:
        none = pl.DataFrame(
            schema={
                "node": pl.String,
                "tokens": pl.Int64,
                "reject_from": pl.Int64,
                "context_len": pl.Int64,
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
    return BlastRadius(models, _warnings(case, models) + shadowed_warnings(engine, case))


def shadowed_warnings(engine: SQLEngine, case: Case) -> list[str]:
    """One warning per pair of prefill `[[capacity]]` entries of different globs that both
    hold for some of the case's requests (any model, any time) where the later one has the
    smaller pool (a lower smallest prompt over it): the first in file order decides for them,
    as for the bands, and the later one, which would count more of them as exposed, is
    shadowed (an entry written for those nodes after a broader one). A later entry with the
    larger pool is the usual override and says nothing. Needs `capacity_in_force`."""
    if sum(c.role == "prefill" for c in case.capacity) < 2:
        return []
    engine.materialize("capacity_shadowed", "blast_radius/shadowed_segments")
    if not engine.scalar("SELECT count(*) FROM capacity_shadowed"):
        return []
    warnings = []
    for decides, shadowed, n in engine.frame("blast_radius/shadowed").iter_rows():
        first, later = case.capacity[int(decides)], case.capacity[int(shadowed)]
        warnings.append(
            f"[[capacity]] entries {int(decides) + 1} ({_entry(first)}) and {int(shadowed) + 1} "
            f"({_entry(later)}) both hold for {int(n):,} request(s), the later with the "
            f"smaller pool: the first in file order, entry {int(decides) + 1}, decides for "
            f"them; if entry {int(shadowed) + 1} is the one in force there, put it first"
        )
    return warnings


def _entry(entry: Capacity) -> str:
    """A [[capacity]] entry as a warning names it."""
    models = f", models {entry.models!r}" if entry.models is not None else ""
    limit = f", reject_from {entry.reject_from:,}" if entry.reject_from is not None else ""
    return f"nodes {entry.nodes!r}{models}, {entry.tokens:,} tokens{limit}"


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
