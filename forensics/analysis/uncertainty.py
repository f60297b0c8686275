"""The exposure range: how far the exposure count could be off on the evidence given (docs:
"Evidence and uncertainty").

`exposure_range(engine, case, likely, ...)` finds the requests behind each category of
uncertainty (one query each in `queries/uncertainty/`, run only where the category can apply),
stores them in the case-database table `exposure_range_requests` (category, direction,
request_id, or source and row for a quarantined record, or bootstrap_room for an engine-only
signature with no gateway record) and returns the range: `likely` is the exposure count,
`min` = likely - |min-side requests|, `max` = likely + |max-side requests|, a request counted
once per direction however many categories hold it.

Categories (direction): `quarantined` (max), `unknown_capacity` (max), `status_unknown`
(min/max), `clock_skew` (min/max, with `[uncertainty] clock_skew`), `token_count` (min/max, with
`[uncertainty] prompt_tokens_tolerance`), `engine_length` (min/max: a bootstrap room whose
engine input lengths decide nothing), `conflicting` (min/max), `engine_only` (max).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from ..case import Case
from ..engines import SQLEngine
from ..schema import DEFAULT_STATUS

RANGE_TABLE = "exposure_range_requests"
CATEGORIES = (
    "quarantined",
    "unknown_capacity",
    "status_unknown",
    "clock_skew",
    "token_count",
    "engine_length",
    "conflicting",
    "engine_only",
)
DIRECTIONS = ("min", "max")
ROW_SCHEMA = {
    "category": pl.String,
    "direction": pl.String,
    "request_id": pl.String,
    "source": pl.String,
    "row": pl.Int64,
    "bootstrap_room": pl.Int64,
}


@dataclass
class ExposureRange:
    """The range and its contributions (distinct requests per category and direction)."""

    likely: int
    low: int
    high: int
    contributions: list[dict[str, Any]] = field(default_factory=list)

    def to_summary(self) -> dict[str, Any]:
        """summary.json's `exposure_range`."""
        return {
            "min": self.low,
            "likely": self.likely,
            "max": self.high,
            "contributions": self.contributions,
        }


def exposure_range(
    engine: SQLEngine,
    case: Case,
    likely: int,
    status_assumed: list[str],
) -> tuple[ExposureRange, list[str]]:
    """Materialize `exposure_range_requests` and return the range and any warnings.
    `status_assumed`: the inputs (paths as in `requests.source`) whose mapping leaves status
    unmapped (their records hold no status, or, ingested by an older version, the default)."""
    skew = case.uncertainty.clock_skew
    tolerance = case.uncertainty.prompt_tokens_tolerance
    params: dict[str, Any] = {
        "window_start": case.window_start,
        "window_end": case.window_end,
        "lo": case.window_start - skew,
        "hi": case.window_end + skew,
        "skew": skew,
        "bucket_seconds": max(1, math.ceil(skew.total_seconds())),
        "tolerance": tolerance,
        "context_window": case.context_window,
        "default_status": DEFAULT_STATUS,
    }
    warnings: list[str] = []
    frames: list[pl.DataFrame] = []

    def add(query: str) -> None:
        frames.append(_rows(engine.frame(query, **params)))

    conflicts = 0
    if engine.table_exists("quarantine"):
        if engine.table_exists("quarantine_values"):
            engine.materialize("range_quarantine", "uncertainty/quarantine_values")
        else:
            engine.materialize("range_quarantine", "uncertainty/quarantine_unread")
            warnings.append(
                "the case database keeps no readable values of quarantined records (ingested "
                "by an older version): every quarantined record but a conflicting duplicate "
                "counts toward the maximum, and conflicting duplicates are not judged; "
                "re-ingest the logs to judge them"
            )
        add("uncertainty/quarantined")
        conflicts = int(
            engine.scalar(
                "SELECT count(*) FROM range_quarantine WHERE reason = 'conflicting duplicate'"
            )
        )
    elif _quarantined_inputs(engine):
        warnings.append(
            "the case store holds no quarantine table: its quarantined records are not in the "
            "exposure range (export the case database again to include them)"
        )
    add("uncertainty/unknown_capacity")
    add("uncertainty/status_unknown")
    if status_assumed:  # an older database holds the default where status was unmapped
        frame = pl.DataFrame({"source": sorted(status_assumed)}, schema={"source": pl.String})
        engine.write_frame("range_status_unmapped", frame, "source")
        add("uncertainty/status_unmapped")
    if skew.total_seconds() > 0:
        add("uncertainty/clock_skew")
    if tolerance > 0:
        add("uncertainty/token_count")
    if engine.table_exists("engine_room_lengths"):
        add("uncertainty/engine_length")
    if conflicts:
        add("uncertainty/conflicting")
    if engine.table_exists("engine_signature"):
        add("uncertainty/engine_only")
    if engine.table_exists("engine_kv_fault_requests"):
        add("uncertainty/engine_kv_only")

    rows = pl.concat(frames) if frames else _rows(pl.DataFrame(schema=ROW_SCHEMA))
    rows = rows.sort(list(ROW_SCHEMA), nulls_last=True)
    engine.write_frame(RANGE_TABLE, rows, "category")
    return _range(rows, likely), warnings


def _rows(frame: pl.DataFrame) -> pl.DataFrame:
    """A category query's rows in the table's schema (engines may type NULL columns apart)."""
    return frame.select([pl.col(c).cast(t) for c, t in ROW_SCHEMA.items()])


def _quarantined_inputs(engine: SQLEngine) -> int:
    if not engine.table_exists("inputs"):
        return 0
    return int(engine.scalar("SELECT coalesce(sum(quarantined), 0) FROM inputs") or 0)


def _range(rows: pl.DataFrame, likely: int) -> ExposureRange:
    """min/max and the contributions: distinct requests (request_id, else source and row,
    else bootstrap_room) per category and direction, and per direction over all categories."""
    keyed = rows.with_columns(
        pl.when(pl.col("request_id").is_not_null())
        .then(pl.lit("r:") + pl.col("request_id"))
        .when(pl.col("row").is_not_null())
        .then(pl.lit("q:") + pl.col("source") + pl.lit(":") + pl.col("row").cast(pl.String))
        .otherwise(pl.lit("b:") + pl.col("bootstrap_room").cast(pl.String))
        .alias("key")
    )
    contributions = []
    for category in CATEGORIES:
        for direction in DIRECTIONS:
            part = keyed.filter(
                (pl.col("category") == category) & (pl.col("direction") == direction)
            )
            if part.height:
                contributions.append(
                    {
                        "category": category,
                        "direction": direction,
                        "requests": part["key"].n_unique(),
                    }
                )
    side = {d: keyed.filter(pl.col("direction") == d)["key"].n_unique() for d in DIRECTIONS}
    return ExposureRange(likely, likely - side["min"], likely + side["max"], contributions)
