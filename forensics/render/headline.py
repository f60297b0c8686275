"""The headline: the figures a responder reads first, as a few plain lines of text (what
`forensics run`/`demo`/`analyze` print, and `Investigation.headline()` returns), or as a
JSON-ready dict for scripts (`headline_figures`, what `--json` prints)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
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
        *scope_lines(s),
        f"affected accounts: {_n(s.get('affected_accounts'))}",
        f"excluded (requests, by reason): {excluded_text}",
        f"data owners: {owners_text}",
        f"verdict: {s.get('verdict')}" + (f" (flagged: {flagged})" if flagged else ""),
        *other_models_lines(s),
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
    "blast_radius",
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


def other_models_lines(summary: dict[str, Any]) -> list[str]:
    """The blast radius of the models not of the case, as one headline line (none for a
    summary without `blast_radius`): the requests over their prefill pool, by model, and the
    share of their requests with a capacity in force (rounded down, `<1%` below one percent),
    or that it is known for none of them (no count is then given)."""
    rows = summary.get("blast_radius")
    if not isinstance(rows, list):
        return []
    case_models = set(summary.get("models") or [])
    others = [r for r in rows if r.get("model") not in case_models]
    if not others:
        return ["other models: none in the logs"]
    requests = sum(int(r.get("requests") or 0) for r in others)
    known = requests - sum(int(r.get("unknown_capacity") or 0) for r in others)
    if not known:
        return [
            f"other models: capacity unknown for all {_n(requests)} of their requests "
            f"({len(others)} model(s)): no count of requests above their pool"
        ]
    over = [(r["model"], int(r.get("over_capacity") or 0)) for r in others]
    total = sum(n for _, n in over)
    which = ", ".join(f"{model} {_n(n)}" for model, n in over if n)
    share = known * 100 // requests
    return [
        f"other models: {_n(total)} request{'' if total == 1 else 's'} above their pool"
        + (f" ({which})" if which else "")
        + f"; capacity known for {share if share else '<1'}% of their requests"
    ]


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
    """` (range MIN-MAX)` after the exposure count, when the summary holds the range, and
    why the maximum may be higher when it may (`max_open`)."""
    rng = summary.get("exposure_range")
    if not isinstance(rng, dict):
        return ""
    why = "; ".join(c.short for c in max_open(summary))
    more = f"; the maximum may be higher: {why}" if why else ""
    return f" (range {_n(rng.get('min'))}-{_n(rng.get('max'))}{more})"


@dataclass(frozen=True)
class MaxOpen:
    """One reason the exposure range's maximum may be higher than it says: `kind` `cut`
    (inputs cut short, `names` the inputs) or `gaps` (hours of the window with no or few
    records, `names` the sources); `count` inputs or hours."""

    kind: str
    count: int
    names: tuple[str, ...]

    @property
    def short(self) -> str:
        """The reason in a few words (headline, incident.json)."""
        if self.kind == "cut":
            what = "1 input" if self.count == 1 else f"{self.count:,} inputs"
            return f"{what} cut short ({', '.join(self.names)})"
        what = "1 hour" if self.count == 1 else f"{self.count:,} hours"
        return f"{what} of the window with no or few records ({', '.join(self.names)})"


def max_open(summary: Mapping[str, Any]) -> list[MaxOpen]:
    """Why the maximum of the exposure range may be higher than it says: the one rule the
    report, the headline, the regulator summary and incident.json share. Requests logged
    after the break of an input cut short (`cut_inputs`) or in an hour a source has no or few
    records for (`coverage.gaps`: an outage, whole or partial) are in no figure."""
    out = []
    cut = [str(c) for c in summary.get("cut_inputs") or []]
    if cut:
        out.append(MaxOpen("cut", len(cut), tuple(cut)))
    gaps = (summary.get("coverage") or {}).get("gaps") or []
    if gaps:
        sources = tuple(sorted({str(g.get("source")) for g in gaps}))
        out.append(MaxOpen("gaps", len(gaps), sources))
    return out


def is_exact(summary: Mapping[str, Any]) -> bool:
    """Whether the exposure count is exact on the evidence: the summary holds the range, no
    request widens it, and nothing leaves its maximum open (`max_open`)."""
    rng = summary.get("exposure_range")
    return isinstance(rng, Mapping) and not rng.get("contributions") and not max_open(summary)


def _n(value: Any) -> str:
    """A count with thousands separators (`77,731`); anything else as it is."""
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def scope_lines(summary: dict[str, Any]) -> list[str]:
    """How many loaded requests the figures rest on, and how many of them no `[[capacity]]`
    entry covers (none for a summary without coverage)."""
    coverage = summary.get("coverage")
    if not isinstance(coverage, dict) or coverage.get("loaded") is None:
        return []
    line = (
        f"in scope: {_n(coverage.get('in_scope'))} of {_n(coverage.get('loaded'))} loaded requests"
    )
    unknown = (summary.get("bands") or {}).get("unknown_capacity")
    if unknown:
        line += f"; {_n(unknown)} with no [[capacity]] entry in force"
    return [line]


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
            f"coverage gaps: {len(gaps)} hour(s) of the window with no record, or fewer than "
            "5% of the source's median hourly count ("
            + ", ".join(f"{source} {n}" for source, n in sorted(by_source.items()))
            + ")"
        )
    lines.extend(f"warning: {w}" for w in summary.get("warnings") or [])
    return lines
