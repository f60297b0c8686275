"""Capacity in force, bands, exclusions and the exposure count (SPEC.md "Analyses").

`compute_bands(engine, case)` loads the case's capacity timeline, models, success statuses
and exclusions into small `case_*` tables (values bound, never formatted into SQL) and
materializes `bands` (one row per request of the case's models inside the window) and the
`exposed` view. The other functions read figures off `bands`.
"""

from __future__ import annotations

from pathlib import Path

from .case import Case
from .engine import Engine
from .errors import AnalysisError
from .outputs import write_csv
from .schema import DEFAULT_STATUS

BANDS = (
    "fits",
    "exposed",
    "excluded",
    "over_capacity_failed",
    "over_context",
    "unknown_capacity",
)


def require_requests(engine: Engine) -> None:
    """Refuse to analyze a case database that holds no `requests` table."""
    if not engine.table_exists("requests"):
        where = str(engine.path) if engine.path is not None else None
        raise AnalysisError(
            "the case database holds no requests table",
            where=where,
            fix="load the logs first: forensics ingest LOG... --db DB (or use forensics run)",
        )


def load_case_tables(engine: Engine, case: Case, exclusions: bool = True) -> None:
    """(Re)create `case_capacity`, `case_models`, `case_success_status`, `case_exclusions`."""
    engine.run("exposure/case_capacity_ddl")
    for ordinal, cap in enumerate(case.capacity):
        engine.run(
            "exposure/case_capacity_insert",
            ordinal=ordinal,
            role=cap.role,
            nodes=cap.nodes,
            tokens=cap.tokens,
            start_ts=cap.start,
            end_ts=cap.end,
        )
    engine.run("exposure/case_models_ddl")
    for model in case.models:
        engine.run("exposure/case_models_insert", model=model)
    engine.run("exposure/case_status_ddl")
    for status in case.success_status:
        engine.run("exposure/case_status_insert", status=status)
    engine.run("exposure/case_exclusions_ddl")
    if exclusions:
        for account, reason in sorted(case.excluded_accounts().items()):
            engine.run("exposure/case_exclusions_insert", account_id=account, reason=reason)


def compute_bands(engine: Engine, case: Case, exclusions: bool = True) -> None:
    """Materialize `bands` and the `exposed` view for this case (exclusions on or off)."""
    require_requests(engine)
    load_case_tables(engine, case, exclusions)
    engine.materialize(
        "bands",
        "exposure/bands",
        window_start=case.window_start,
        window_end=case.window_end,
        context_window=case.context_window,
        default_status=DEFAULT_STATUS,
    )
    engine.run("exposure/exposed_view")


def band_counts(engine: Engine) -> dict[str, int]:
    """Requests per band, every band present (0 where none)."""
    counts = dict.fromkeys(BANDS, 0)
    for band, n in engine.frame("exposure/band_counts").iter_rows():
        counts[band] = int(n)
    return counts


def excluded_by_reason(engine: Engine, case: Case, exclusions: bool = True) -> dict[str, int]:
    """Requests in band `excluded` per reason; every configured reason listed (0 where none).

    Empty when exclusions are off (no request is excluded then).
    """
    if not exclusions:
        return {}
    counts = {ex.reason: 0 for ex in case.exclusions}
    for reason, n in engine.frame("exposure/excluded_by_reason").iter_rows():
        counts[reason] = int(n)
    return counts


def totals(engine: Engine) -> tuple[int, int]:
    """(exposure count, affected accounts)."""
    row = engine.frame("exposure/totals").row(0)
    return int(row[0]), int(row[1])


def write_exposed_csv(engine: Engine, path: Path) -> Path:
    """`exposed_requests.csv`: every exposed request, sorted by ts then request_id."""
    return write_csv(engine.frame("exposure/exposed_rows"), path)
