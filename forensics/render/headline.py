"""The headline: the figures a responder reads first, as a few plain lines of text (what
`forensics run`/`demo`/`analyze` print, and `Investigation.headline()` returns), or as a
JSON-ready dict for scripts (`headline_figures`, what `--json` prints)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..formats import printable


def headline(summary: dict[str, Any], out: Path | None = None) -> str:
    """The headline of a summary (and the output folder, when given)."""
    s = summary
    excluded = s.get("excluded_by_reason") or {}
    excluded_text = (
        ", ".join(f"{reason} {_n(n)}" for reason, n in sorted(excluded.items())) or "none"
    )
    owners_info = s.get("data_owners") or {}
    owners_text = (
        f"{_n(owners_info.get('accounts', 0))} account(s), {_n(owners_info.get('requests', 0))} "
        f"request(s) ({owners_info.get('policy')}, {owners_info.get('status')})"
    )
    flagged = ", ".join(s.get("flagged_accounts") or [])
    ingest = s.get("ingest") or {}
    lines = [
        f"{s.get('name')}",
        f"exposed responses: {_n(s.get('exposure_count'))}{range_text(s)}",
        f"affected accounts: {_n(s.get('affected_accounts'))}",
        f"excluded (requests, by reason): {excluded_text}",
        f"data owners: {owners_text}",
        f"verdict: {s.get('verdict')}" + (f" (flagged: {flagged})" if flagged else ""),
        f"ingest: {_n(ingest.get('rows_read', 0))} record(s) read, "
        f"{_n(ingest.get('rows_loaded', 0))} loaded, {_n(ingest.get('duplicates', 0))} "
        f"duplicate(s), {_n(ingest.get('quarantined', 0))} quarantined"
        + (" (each with its reason in the quarantine table)" if ingest.get("quarantined") else ""),
    ]
    lines.extend(engine_lines(s))
    lines.extend(evidence_lines(s))
    if out is not None:
        lines.append(f"outputs: {out}")
    return "\n".join(printable(line, one_line=True) for line in lines)  # ids and names as data


# summary.json's keys a script reads first (those a summary holds; `outputs` is added)
HEADLINE_KEYS = (
    "name",
    "exposure_count",
    "exposure_range",
    "affected_accounts",
    "excluded_by_reason",
    "bands",
    "verdict",
    "flagged_accounts",
    "data_owners",
    "ingest",
    "engine_signature",
    "engine_confirmed",
    "warnings",
    "tool",
)


def headline_figures(summary: dict[str, Any], out: Path | None = None) -> dict[str, Any]:
    """The headline as data: summary.json's `HEADLINE_KEYS` that it holds, values as in
    summary.json, and `outputs` (the output folder, when given)."""
    figures = {k: summary[k] for k in HEADLINE_KEYS if k in summary}
    if out is not None:
        figures["outputs"] = str(out)
    return figures


def engine_lines(summary: dict[str, Any]) -> list[str]:
    """The engine evidence of a summary as headline lines (none without engine evidence)."""
    if summary.get("engine_signature") is None and summary.get("preflight") is None:
        return []
    lines = []
    rec = summary.get("engine_reconciliation")
    if rec is not None:
        lines.append(
            f"engine-confirmed: {_n(summary.get('engine_confirmed'))} of "
            f"{_n(summary.get('exposure_count'))} exposed responses "
            f"(bug signature in the engine logs: {_n(summary.get('engine_signature'))})"
        )
        parts = [f"matched {_n(rec['matched']['count'])}"]
        for side, label in (("gateway_only", "gateway-only"), ("engine_only", "engine-only")):
            reasons = rec[side]["reasons"]
            detail = "; ".join(f"{r} {_n(v['count'])}" for r, v in sorted(reasons.items()))
            parts.append(f"{label} {_n(rec[side]['count'])}" + (f" ({detail})" if detail else ""))
        lines.append("engine reconciliation: " + ", ".join(parts))
    else:
        lines.append(f"engine signature: {summary.get('engine_signature')} (no gateway bands)")
    if summary.get("engine_refused"):
        lines.append(
            f"engine refused without a KV transfer (SGLang 0.5.21+, no exposure): "
            f"{_n(summary.get('engine_refused'))} request(s)"
        )
    findings = summary.get("preflight") or []
    nodes = sorted({f["node"] for f in findings})
    lines.append(
        f"pre-flight: {len(findings)} finding(s), pool < context window"
        + (f" on {', '.join(nodes)}" if nodes else "")
    )
    return lines


def range_text(summary: dict[str, Any]) -> str:
    """` (range MIN-MAX)` after the exposure count, when the summary holds the range."""
    rng = summary.get("exposure_range")
    if not isinstance(rng, dict):
        return ""
    return f" (range {_n(rng.get('min'))}-{_n(rng.get('max'))})"


def _n(value: Any) -> str:
    """A count with thousands separators (`77,731`); anything else as it is."""
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def evidence_lines(summary: dict[str, Any]) -> list[str]:
    """The assumptions, coverage gaps and warnings of a summary as headline lines."""
    lines = []
    for a in summary.get("assumptions") or []:
        default = "none" if a.get("default") is None else a.get("default")
        lines.append(
            f"assumed: {a.get('field')} = {default} for {_n(a.get('requests'))} request(s) in "
            f"scope from {', '.join(a.get('sources') or [])} (not mapped): {a.get('effect')}"
        )
    coverage = summary.get("coverage") or {}
    gaps = coverage.get("gaps") or []
    if gaps:
        by_source: dict[str, int] = {}
        for gap in gaps:
            by_source[gap["source"]] = by_source.get(gap["source"], 0) + 1
        lines.append(
            f"coverage gaps: {len(gaps)} hour(s) of the window with no record from a source "
            "that logs every hour ("
            + ", ".join(f"{source} {n}" for source, n in sorted(by_source.items()))
            + ")"
        )
    lines.extend(f"warning: {w}" for w in summary.get("warnings") or [])
    return lines
