"""summary.json: every figure of one analysis, JSON-ready and deterministic.

`build_summary` reads `bands`, `inputs` and the results of attribution and classification
and returns a dict holding every key the outputs documentation lists for summary.json, and
`tool`: the toolkit's and DuckDB's versions, so every figure names the code that made it.
`ingest` sums every input of the case (gateway logs and SGLang engine logs alike: each is in
`inputs`; inputs no case `[[source]]` names are left out, as from every figure);
`ingest_by_format` splits the same totals by input format, so the gateway figure stays
visible. Times are ISO 8601 UTC with `Z`; there is no wall-clock stamp, so equal inputs give
equal bytes.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from ..case import Capacity, Case
from ..engines import SQLEngine, TableMissing, needing
from ..formats import iso_z, relative_path, write_json
from ..schema import INGEST_KEYS
from ..version import versions
from . import exposure, scope
from .owners import OwnersResult

NO_CLASSIFICATION = "insufficient_data"
# how sure the figures are (forensics.analysis.uncertainty, assumptions, coverage, scope)
EVIDENCE_KEYS = ("exposure_range", "assumptions", "coverage", "warnings")


def case_config(case: Case, exclusions: bool = True) -> dict[str, Any]:
    """The case file's settings as analysed (paths relative to the case folder)."""
    return {
        "name": case.name,
        "case_file": case.path.name,
        "models": list(case.models),
        "context_window": case.context_window,
        "success_status": list(case.success_status),
        "window": {"start": iso_z(case.window_start), "end": iso_z(case.window_end)},
        "capacity": [_capacity_entry(c) for c in case.capacity],
        "exclusions": {
            "applied": exclusions,
            "entries": [
                {
                    "reason": ex.reason,
                    "accounts": sorted(ex.accounts),
                    "file": relative_path(ex.file, case.folder) if ex.file else None,
                }
                for ex in case.exclusions
            ],
        },
        "baseline": {"min_prompt_tokens": case.baseline.min_prompt_tokens},
        "attribution": {
            "policy": case.attribution.policy,
            "lookback_seconds": int(case.attribution.lookback.total_seconds()),
        },
        "uncertainty": {
            "clock_skew_seconds": _seconds(case.uncertainty.clock_skew.total_seconds()),
            "prompt_tokens_tolerance": case.uncertainty.prompt_tokens_tolerance,
        },
    }


def _capacity_entry(c: Capacity) -> dict[str, Any]:
    """One [[capacity]] entry as the case file gives it (reject_from, models only where
    written)."""
    entry: dict[str, Any] = {"role": c.role, "nodes": c.nodes, "tokens": c.tokens}
    if c.reject_from is not None:
        entry["reject_from"] = c.reject_from
    if c.models is not None:
        entry["models"] = c.models
    entry.update(start=iso_z(c.start), end=iso_z(c.end))
    return entry


def _seconds(value: float) -> int | float:
    return int(value) if value.is_integer() else value


def ingest_figures(
    engine: SQLEngine, folder: Path | None = None, leave_out: Collection[str] = ()
) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """(ingest totals, the `inputs` table as rows sorted by path); zeros when no inputs.

    Paths under `folder` (the case folder) are given relative to it, so the summary does
    not depend on where the case sits on disk. Inputs whose path is in `leave_out` (those no
    case `[[source]]` names) are left out.
    """
    try:
        with needing(engine, "inputs"):
            rows = engine.frame("summary/inputs").to_dicts()
    except TableMissing:
        return dict.fromkeys(INGEST_KEYS, 0), []
    rows = [r for r in rows if r["path"] not in leave_out]
    if folder is not None:
        for row in rows:
            row["path"] = relative_path(row["path"], folder) if row["path"] else row["path"]
        rows.sort(key=lambda r: (r["path"] or "", r["sha256"] or ""))
    totals = {k: int(sum(int(r.get(k) or 0) for r in rows)) for k in INGEST_KEYS}
    return totals, rows


def ingest_by_format(inputs: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """The ingest totals per input format (e.g. jsonl = gateway, sglang = engine logs)."""
    out: dict[str, dict[str, int]] = {}
    for row in inputs:
        sums = out.setdefault(row.get("format") or "", dict.fromkeys(INGEST_KEYS, 0))
        for k in INGEST_KEYS:
            sums[k] += int(row.get(k) or 0)
    return dict(sorted(out.items()))


def build_summary(
    engine: SQLEngine,
    case: Case,
    *,
    exclusions: bool = True,
    owners: OwnersResult | None = None,
    classification: dict[str, Any] | None = None,
    evidence: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Every key of summary.json, from `bands`, `inputs` and the given results.

    `classification` is `Classification.to_summary()` (verdict `insufficient_data` and no
    flagged accounts without it); `evidence` holds engine-log keys (preflight, ...) if any.
    The evidence behind the figures (`EVIDENCE_KEYS`: exposure range, assumptions, coverage,
    warnings) is None here; the analysis step fills it in (`forensics.pipeline.evidence_of`).
    """
    count, affected = exposure.totals(engine)
    ingest, inputs = ingest_figures(engine, case.folder, scope.unnamed_inputs(engine))
    summary: dict[str, Any] = {
        **case_config(case, exclusions),
        "exposure_count": count,
        "exposed_by_delivery": exposure.delivery(engine),
        "affected_accounts": affected,
        "excluded_by_reason": exposure.excluded_by_reason(engine, case, exclusions),
        "bands": exposure.band_counts(engine),
        "verdict": (classification or {}).get("verdict", NO_CLASSIFICATION),
        "flagged_accounts": sorted((classification or {}).get("flagged_accounts", [])),
        "classification": classification,
        "ingest": ingest,
        "ingest_by_format": ingest_by_format(inputs),
        "inputs": inputs,
        "data_owners": owners.to_summary() if owners is not None else None,
        "tool": versions(),
    }
    summary.update(dict.fromkeys(EVIDENCE_KEYS))
    if evidence:
        summary.update(evidence)
    return summary


def write_summary(summary: dict[str, Any], path: Path) -> Path:
    """Write summary.json (sorted keys, indent 2, trailing newline)."""
    return write_json(summary, path)
