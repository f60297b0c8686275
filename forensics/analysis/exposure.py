"""Capacity in force, bands, exclusions and the exposure count (docs/decisions.md "Bands").

`compute_bands(engine, case)` writes the case's capacity timeline, models, success statuses
and exclusions as small `case_*` tables (through the engine's frame writer: values are data,
never SQL text) and materializes `bands` (one row per request of the case's models inside
the window) and the `exposed` view. The other functions read figures off `bands`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from ..case import Case
from ..engines import SQLEngine
from ..errors import AnalysisError, CaseError, command, option
from ..formats import write_csv
from ..schema import BANDS, DEFAULT_STATUS, joined_ids, near_key, near_spellings, spelled
from . import scope

_UTC = pl.Datetime("us", "UTC")
ENGINE_LENGTHS = {"request_id": pl.String, "engine_prompt_tokens": pl.Int64}


def require_requests(engine: SQLEngine) -> None:
    """Refuse to analyze a case database that holds no `requests` table."""
    if not engine.table_exists("requests"):
        raise AnalysisError(
            "the case database holds no requests table",
            where=engine.where,
            fix=f"load the logs first: {command('ingest')} LOG... {option('db')} DB "
            f"(or use {command('run')})",
        )


def case_tables(case: Case, exclusions: bool = True) -> dict[str, tuple[pl.DataFrame, str]]:
    """The case file's values as tables: name -> (frame, the column its rows sort by).
    `case_capacity.ordinal` is the file order (the first matching entry wins);
    `case_capacity.nodes_glob` is `nodes` for SQL's GLOB (case.sql_glob: a backslash is
    an ordinary character, as in the case file's Python reading);
    `case_capacity.reject_from` is NULL where the entry has none;
    `case_capacity.models_glob` is `models` for GLOB, NULL where the entry holds for every
    model (a request matches an entry only when it is NULL or the model matches it);
    `case_capacity.for_case` says whether the entry holds for some model of the case;
    `case_exclusions` is empty when exclusions are off."""
    capacity = pl.DataFrame(
        [
            (
                i,
                c.role,
                c.nodes,
                c.nodes_glob,
                c.tokens,
                c.reject_from,
                c.start,
                c.end,
                c.models,
                c.models_glob,
                any(c.applies_to(m) for m in case.models),
            )
            for i, c in enumerate(case.capacity)
        ],
        schema={
            "ordinal": pl.Int32,
            "role": pl.String,
            "nodes": pl.String,
            "nodes_glob": pl.String,
            "tokens": pl.Int64,
            "reject_from": pl.Int64,
            "start_ts": _UTC,
            "end_ts": _UTC,
            "models": pl.String,
            "models_glob": pl.String,
            "for_case": pl.Boolean,
        },
        orient="row",
    )
    excluded = sorted(case.excluded_accounts().items()) if exclusions else []
    exclusion_rows = pl.DataFrame(
        excluded, schema={"account_id": pl.String, "reason": pl.String}, orient="row"
    )
    return {
        "case_capacity": (capacity, "ordinal"),
        "case_models": (
            pl.DataFrame({"model": list(case.models)}, schema={"model": pl.String}),
            "model",
        ),
        "case_success_status": (
            pl.DataFrame({"status": list(case.success_status)}, schema={"status": pl.Int32}),
            "status",
        ),
        "case_exclusions": (exclusion_rows, "account_id"),
    }


def load_case_tables(
    engine: SQLEngine,
    case: Case,
    exclusions: bool = True,
    files: scope.SourceFiles = scope.NO_FILES,
) -> None:
    """(Re)write `case_capacity`, `case_models`, `case_success_status`, `case_exclusions`,
    and the scope: the views of the records of the case's own inputs (`scope.define_scope`,
    moved copies of the sources looked for among `files`)."""
    for table, (frame, order_by) in case_tables(case, exclusions).items():
        engine.write_frame(table, frame, order_by)
    scope.define_scope(engine, case, files)


def capacity_in_force(engine: SQLEngine) -> None:
    """(Re)materialize `capacity_in_force` (the prefill capacity in force per node, model and
    time segment: `exposure/capacity_in_force.sql`) and define the view
    `case_requests_in_force` (each of the case's requests with the capacity in force for it),
    the one definition the bands and the blast radius read. Needs the case tables and
    `case_requests` (`load_case_tables`)."""
    engine.materialize("capacity_in_force", "exposure/capacity_in_force")
    engine.run("exposure/requests_in_force")


def compute_bands(
    engine: SQLEngine,
    case: Case,
    exclusions: bool = True,
    files: scope.SourceFiles = scope.NO_FILES,
) -> None:
    """Materialize `capacity_in_force`, `engine_lengths` (the engine's own input length of
    requests whose bootstrap_room the engine logs name: it decides their band), `bands` and
    the `exposed` view for this case (exclusions on or off; `files`: `load_case_tables`)."""
    require_requests(engine)
    load_case_tables(engine, case, exclusions, files)
    capacity_in_force(engine)
    if all(engine.table_exists(t) for t in ("engine_requests", "engine_aborts")):
        engine.materialize("engine_lengths", "exposure/engine_lengths")
    else:
        engine.write_frame("engine_lengths", pl.DataFrame(schema=ENGINE_LENGTHS), "request_id")
    engine.materialize(
        "bands",
        "exposure/bands",
        window_start=case.window_start,
        window_end=case.window_end,
        context_window=case.context_window,
        default_status=DEFAULT_STATUS,
    )
    engine.run("exposure/exposed_view")


def check_exclusions(engine: SQLEngine, case: Case) -> list[str]:
    """Exclusion ids compared with the account ids of the requests (after `compute_bands`
    with exclusions on), by the one id rule (`schema.clean_id`: exact, code point for code
    point). Refused (CaseError naming both spellings, escaped): an exclusion id that names no
    account but matches one once whitespace, quotes and invisible characters (at the ends or
    inside), Unicode normalization, look-alike letters of another script or letter case are
    set aside (`schema.near_spellings`), or that reads as several ids joined by `,`, `;` or
    whitespace of which some are accounts (`acct-a,acct-b`): it was meant for them and would
    exclude nothing. Returns warnings: a comment line of an exclusion file that is itself an
    account id (`#acct-b`: not excluded), and an account counted as exposed whose id is a
    near twin of an excluded one (`ACCT-X` beside an excluded `acct-x`): it may be the same
    account, under another spelling. (An exclusion id with no request in scope is warned
    about with the scope, `scope.unmatched`.) All the account ids are read only when some
    id names no request in scope."""
    places = case.exclusion_places()
    comments = [c for ex in case.exclusions for c in ex.comments]
    if not places and not comments:
        return []
    matched = set(engine.frame("exposure/matched_exclusions")["account_id"].to_list())
    unmatched = [a for a in places if a not in matched]
    candidates = sorted({*unmatched, *(text for text, _ in comments)})
    warnings: list[str] = []
    if candidates:
        frame = pl.DataFrame({"account_id": candidates}, schema={"account_id": pl.String})
        engine.write_frame("case_id_candidates", frame, "account_id")
        known = set(engine.frame("exposure/known_accounts")["account_id"].to_list())
        warnings += [
            f"{place}: the comment line {spelled(text)} is an account id of the logs, and a "
            "comment excludes nothing: list it in accounts = [...] to exclude it"
            for text, place in comments
            if text in known
        ]
        missing = [a for a in unmatched if a not in known]
        if missing:
            ids = engine.frame("exposure/account_ids")["account_id"].to_list()
            for account in missing:
                _refuse_near_miss(account, places[account], ids)
    return warnings + _exposed_twins(engine, places)


def _refuse_near_miss(account: str, place: str, ids: list[str]) -> None:
    """Refuse an exclusion id that names no account of the logs (`ids`) but was meant for
    one: a near spelling, or several ids on one line."""
    fix = "write the id exactly as the logs spell it (ids are compared code point for code point)"
    near = near_spellings(account, ids)
    if near:
        if len(near) == 1:
            others = f"{spelled(near[0][0])} does, apart from {near[0][1]}"
        else:
            others = " and ".join(f"{spelled(o)} ({why})" for o, why in near[:3])
            others += " do, apart from what is in brackets"
        raise CaseError(
            f"exclusion id {spelled(account)} names no account of the logs, but {others}",
            where=place,
            fix=fix,
        )
    joined = joined_ids(account, ids)
    if joined:
        named = ", ".join(spelled(a) for a in joined[:3]) + (
            f" and {len(joined) - 3} more" if len(joined) > 3 else ""
        )
        raise CaseError(
            f"exclusion id {spelled(account)} names no account of the logs, but it reads as "
            f"several ids joined by a comma, semicolon or whitespace, and {named} "
            + ("is an account" if len(joined) == 1 else "are accounts")
            + " of the logs",
            where=place,
            fix="write one account id a line (or one per string in accounts = [...])",
        )


def _exposed_twins(engine: SQLEngine, places: dict[str, str]) -> list[str]:
    """Warnings for accounts counted as exposed whose id looks like an excluded id
    (`schema.near_spellings`): counted, never excluded unasked, never silently."""
    if not places:
        return []
    keys: dict[str, list[str]] = {}
    for account in places:
        keys.setdefault(near_key(account), []).append(account)
    warnings = []
    for account, responses in engine.frame("exposure/exposed_accounts").iter_rows():
        for excluded in keys.get(near_key(account), []):
            ((_, why),) = near_spellings(excluded, [account])
            warnings.append(
                f"{places[excluded]}: account {spelled(account)} is counted as exposed "
                f"({responses} response(s)), but its id differs from the excluded "
                f"{spelled(excluded)} only by {why}: if it is the same account, list this "
                "spelling too"
            )
    return warnings


def band_counts(engine: SQLEngine) -> dict[str, int]:
    """Requests per band, every band present (0 where none)."""
    counts = dict.fromkeys(BANDS, 0)
    for band, n in engine.frame("exposure/band_counts").iter_rows():
        counts[band] = int(n)
    return counts


def excluded_by_reason(engine: SQLEngine, case: Case, exclusions: bool = True) -> dict[str, int]:
    """Requests in band `excluded` per reason; every configured reason listed (0 where none).

    Empty when exclusions are off (no request is excluded then).
    """
    if not exclusions:
        return {}
    counts = {ex.reason: 0 for ex in case.exclusions}
    for reason, n in engine.frame("exposure/excluded_by_reason").iter_rows():
        counts[reason] = int(n)
    return counts


def totals(engine: SQLEngine) -> tuple[int, int]:
    """(exposure count, affected accounts)."""
    row = engine.frame("exposure/totals").row(0)
    return int(row[0]), int(row[1])


def delivery(engine: SQLEngine) -> dict[str, int]:
    """Exposed responses by delivered content: {delivered, empty, unknown} (completion_tokens
    > 0, = 0, NULL). They sum to the exposure count; NULL is never taken for 0."""
    row = engine.frame("exposure/delivery").row(0, named=True)
    return {key: int(row[key]) for key in ("delivered", "empty", "unknown")}


def write_exposed_csv(engine: SQLEngine, path: Path) -> Path:
    """`exposed_requests.csv`: every exposed request, sorted by ts then request_id."""
    return write_csv(engine.frame("exposure/exposed_rows"), path)


def engine_length_changes(engine: SQLEngine, case: Case) -> dict[str, Any]:
    """summary.json's `engine_input_lengths`: the requests in scope whose input length the
    engine logs give (that length decides their band), how many of those lengths differ from
    the gateway's prompt_tokens, and each such request whose band the difference changes
    (`request_id`, `gateway_prompt_tokens`, `engine_prompt_tokens`, `band`, `gateway_band`)."""
    decided = int(engine.scalar("SELECT count(engine_prompt_tokens) FROM bands") or 0)
    rows = engine.frame(
        "exposure/engine_length_changes",
        context_window=case.context_window,
        default_status=DEFAULT_STATUS,
    ).to_dicts()
    return {
        "requests": decided,
        "differ": len(rows),
        "band_changed": [r for r in rows if r["band"] != r["gateway_band"]],
    }


def undelivered_statuses_warning(engine: SQLEngine, case: Case, bands: dict[str, int]) -> list[str]:
    """When over-capacity requests exist but none with a status in `success_status` (none
    `exposed` or `excluded`), the zero is said: a warning naming the statuses of the
    over-capacity requests and their counts (a `success_status` missing a status that
    delivered, 201 say, would make every exposure a failure)."""
    if not bands.get("over_capacity_failed") or bands.get("exposed") or bands.get("excluded"):
        return []
    rows = engine.frame("exposure/over_capacity_statuses").rows()
    statuses = ", ".join(
        f"{'none recorded' if status is None else status} ({int(n):,})" for status, n in rows
    )
    success = ", ".join(str(s) for s in case.success_status)
    return [
        f"no over-capacity request has a status in success_status [{success}]: the "
        f"{bands['over_capacity_failed']:,} over-capacity request(s) have status {statuses}; "
        "if any of these delivered a response, add it to success_status"
    ]
