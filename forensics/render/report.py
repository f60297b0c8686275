"""The incident report: `report.html` (self-contained, opens offline), `timeline.png/.svg`.

`render_report` only READS the analysis results (the `bands`, `data_owners`,
`classification_*` and `inputs` tables and the summary dict); a missing table is shown as
"not available", never recomputed. The page inlines the Vega, Vega-Lite and Vega-Embed
JavaScript bundled by vl-convert and every chart's data (`forensics.render.figures`, which
notebook charts share), so it fetches nothing. Above `figures.MAX_MARKS` rows a chart draws
counts per bin (aggregated in SQL), so the page's size and the memory used do not grow with
the number of exposed responses. Text from the data is shown, never run: specs are inlined
script-safe, labels with control characters as escapes. The same database and case give
byte-identical files. The table of contents lists every `<section>` with an `<h2>` heading,
as rendered.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import jinja2
import polars as pl
import vl_convert
from markupsafe import Markup

from ..case import Case
from ..engines import SQLEngine
from ..formats import iso, printable, relative_path, short
from ..progress import SILENT, Progress, step
from ..schema import BAND_MEANINGS
from ..version import versions as tool_versions
from . import charts, figures
from .figures import VL_VERSION
from .headline import MaxOpen, is_exact, max_open, other_models_lines

MAX_OWNER_ROWS = 25
NOT_AVAILABLE = "not available"


@dataclass
class Table:
    """A small HTML table: column titles and rows of display strings, plus a note."""

    columns: list[str]
    rows: list[list[str]]
    note: str = ""
    numeric: list[bool] = field(default_factory=list)

    @classmethod
    def of(cls, frame: pl.DataFrame, note: str = "") -> Table:
        # an id column's very long value cut (formats.short; the CSVs keep it whole)
        ids = [c.endswith("_id") or c in ("account", "request") for c in frame.columns]
        return cls(
            columns=list(frame.columns),
            rows=[
                [short(_cell(v)) if is_id else _cell(v) for v, is_id in zip(row, ids, strict=True)]
                for row in frame.iter_rows()
            ],
            note=note,
            numeric=[dtype.is_numeric() for dtype in frame.dtypes],
        )


@dataclass
class Section:
    """A chart slot in the page: its element id, Vega-Lite spec, or why it is missing (an
    analysis table is not there) or empty (no data to draw)."""

    id: str
    spec: dict[str, Any] | None
    missing: str = ""
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    empty: str = ""


def versions() -> dict[str, str]:
    """The versions of the code that made the page: kv-forensics and DuckDB, as
    `forensics.versions()` names them (summary.json's `tool`, the analysis record)."""
    tool = tool_versions()
    return {"kv-forensics": tool["version"], "DuckDB": tool["duckdb"]}


def render_report(
    engine: SQLEngine,
    case: Case,
    summary: Mapping[str, Any],
    out_dir: Path,
    max_marks: int = figures.MAX_MARKS,
    progress: Progress = SILENT,
) -> list[Path]:
    """Write report.html, timeline.png and timeline.svg into `out_dir`; return their paths.
    A chart with more than `max_marks` rows to draw draws counts per bin instead. The page
    and the chart export are steps reported to `progress`."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with step(progress, "report: page"):
        report, timeline_spec = _page(engine, case, summary, out_dir, max_marks)
    with step(progress, "report: chart export to SVG, PNG"):
        svg = out_dir / "timeline.svg"
        drawing = vl_convert.vegalite_to_svg(timeline_spec, vl_version=VL_VERSION)
        svg.write_text(drawing, encoding="utf-8", newline="\n")
        png = out_dir / "timeline.png"
        # the PNG is the SVG rasterised (what vegalite_to_png does, without drawing it again)
        png.write_bytes(vl_convert.svg_to_png(drawing, scale=2))
    return [report, png, svg]


def _page(
    engine: SQLEngine, case: Case, summary: Mapping[str, Any], out_dir: Path, max_marks: int
) -> tuple[Path, dict[str, Any]]:
    """report.html written into `out_dir`; (its path, the timeline's spec for the export)."""
    has_bands = engine.table_exists("bands")
    timeline = figures.timeline(engine, case, max_marks)
    assert timeline.chart is not None  # drawn even without bands (events and window)
    timeline_spec = figures.spec(timeline.chart)
    sections = [
        _section("chart-timeline", timeline, timeline_spec),
        _section("chart-size", figures.size(engine, case, max_marks)),
        _section("chart-daily", figures.daily(engine)),
        _section("chart-hourly", figures.hourly(engine)),
        _section("chart-coverage", figures.coverage(summary, case)),
        *_optional("chart-pool-usage", figures.pool_usage(engine, case)),
    ]
    events = figures.events_frame(case)

    html = _template().render(
        case=case,
        s=_view_summary(summary),
        sections={sec.id: sec for sec in sections},
        specs_json=figures.script_json({sec.id: sec.spec for sec in sections if sec.spec}),
        bundle=figures.bundle(),
        classification=classification_view(engine, summary),
        blast=blast_view(engine, summary),
        exclusions=exclusions_view(engine, case, summary, has_bands),
        owners=owners_view(engine, case, summary),
        engine_evidence=engine_view(summary),
        happened=happened_view(summary),
        inputs=inputs_view(engine, summary),
        evidence=evidence_view(summary),
        quarantine=quarantine_view(engine, case),
        events=[[r["at"], r["label"]] for r in events.iter_rows(named=True)],
        window=figures.window(case),
        not_available=NOT_AVAILABLE,
        versions=versions(),
    )
    report = out_dir / "report.html"
    report.write_text(html, encoding="utf-8", newline="\n")
    return report, timeline_spec


def _optional(element: str, figure: figures.Figure | None) -> list[Section]:
    """A chart the page shows only when its data is there (none: no section)."""
    return [] if figure is None else [_section(element, figure)]


def _section(element: str, figure: figures.Figure, spec: dict[str, Any] | None = None) -> Section:
    """The page's slot `element` for a figure: its spec (`spec` when already made), or why
    it is missing or empty."""
    if figure.missing or figure.chart is None:
        return Section(element, None, missing=figure.missing, note=figure.note)
    if figure.empty:
        return Section(element, None, note=figure.note, empty=figure.empty)
    return Section(element, spec or figures.spec(figure.chart), note=figure.note)


def excluded_accounts(engine: SQLEngine) -> pl.DataFrame:
    """Per excluded account: reason, requests in band `excluded`, requests in the window."""
    return engine.frame("report/exclusions")


def owner_accounts(engine: SQLEngine) -> pl.DataFrame:
    """Per data-owner account: requests at risk, exposures that could have read them, the
    first and last time, busiest first."""
    return engine.frame("report/owner_accounts")


# --- data for the tables -----------------------------------------------------------------


# what each per-account test of the classification found, in words
TEST_FINDINGS = {
    "account_volume": "more exposed responses than its own long-context volume predicts",
    "burst": "a burst of over-capacity prompts within a few minutes",
    "probe_near_capacity": "over-capacity prompts clustered just above the capacity",
    "probe_steps": "prompt sizes stepping up across the capacity",
    "probe_max_tokens": "requests asking for a token or a few (tiny max_tokens)",
    "probe_length_burst": "prompts of near-identical length seconds apart",
    "probe_prefix": "prompts starting with the leading blocks another account sent earlier",
}


def classification_view(engine: SQLEngine, summary: Mapping[str, Any]) -> dict[str, Any]:
    """Verdict, tests and per-account evidence from classification_* tables and the summary;
    each flagged account's reasons as sentences (`reasons`: (account, [text]), from
    summary.json, else from classification_accounts), the evidence table naming the tests
    behind each flag."""
    view: dict[str, Any] = {
        "verdict": summary.get("verdict"),
        "flagged": list(summary.get("flagged_accounts") or []),
        "reasons": [],
        "tests": None,
        "accounts": None,
        "detail": None,
    }
    detail = summary.get("classification")
    found: dict[str, list[Any]] = {}
    if isinstance(detail, Mapping) and isinstance(detail.get("accounts"), Mapping):
        found = {
            str(a): list(v.get("reasons") or [])
            for a, v in detail["accounts"].items()
            if isinstance(v, Mapping)
        }
    if engine.table_exists("classification_tests"):
        view["tests"] = Table.of(engine.read_table("classification_tests"))
    if engine.table_exists("classification_accounts"):
        frame = engine.read_table("classification_accounts")
        if "flagged" in frame.columns:
            frame = frame.sort(["flagged", *frame.columns[:1]], descending=[True, False])
        if "reasons" in frame.columns:
            for account, text in frame.select(frame.columns[0], "reasons").iter_rows():
                found.setdefault(str(account), _json_list(text))
            names = [_reason_names(text) for text in frame["reasons"].to_list()]
            frame = frame.with_columns(reasons=pl.Series(names, dtype=pl.String))
        view["accounts"] = Table.of(frame)
    view["reasons"] = [(a, [_finding(r) for r in found.get(a, [])]) for a in view["flagged"]]
    if isinstance(detail, Mapping):
        view["detail"] = _json_block(detail)
    return view


def _finding(reason: Any) -> str:
    """One reason an account was flagged, in words: what the test found, its figures and
    p-values (a bare test name reads as what it found)."""
    if not isinstance(reason, Mapping):
        reason = {"test": reason}
    test = str(reason.get("test", ""))
    parts = [TEST_FINDINGS.get(test, test.replace("_", " "))]
    if reason.get("detail"):
        parts[0] += f": {reason['detail']}"
    parts += [
        f"{label} = {_cell(reason[k])}"
        for k, label in (("p_value", "p"), ("adjusted_p", "adjusted p"))
        if reason.get(k) is not None
    ]
    return "; ".join(parts) + f" (test {test})"


def _json_list(text: Any) -> list[Any]:
    """A JSON list column's items ([] when the value is no JSON list)."""
    if not isinstance(text, str):
        return []
    try:
        items = json.loads(text)
    except ValueError:
        return []
    return items if isinstance(items, list) else []


def _reason_names(text: Any) -> str | None:
    """The tests behind a JSON list of reasons, as `test; test` (None when there is none)."""
    names = [str(r.get("test")) if isinstance(r, Mapping) else str(r) for r in _json_list(text)]
    return "; ".join(names) or None


BLAST_COLUMNS = (
    "model",
    "requests",
    "over_capacity",
    "excluded",
    "unknown_capacity",
    "first_over",
    "last_over",
    "in_window",
    "outside_window",
)


def blast_view(engine: SQLEngine, summary: Mapping[str, Any]) -> dict[str, Any] | None:
    """The blast radius: per model as summary.json lists it (a case model marked), the other
    models' line as the headline says it, and the rows per prefill node from the
    `blast_radius` table (None when it is missing); None for a summary without one."""
    rows = summary.get("blast_radius")
    if not isinstance(rows, list):
        return None
    case_models = set(summary.get("models") or [])
    models = _columns_table(rows, BLAST_COLUMNS)
    models.columns.insert(1, "case model")
    models.numeric.insert(1, False)
    for row, m in zip(models.rows, rows, strict=True):
        row.insert(1, _cell(m.get("model") in case_models))
    nodes = None
    if engine.table_exists("blast_radius"):
        frame = engine.read_table("blast_radius")
        nodes = Table.of(frame.sort(["model", "prefill_node"], nulls_last=False))
    lines = other_models_lines(dict(summary))
    return {"models": models, "nodes": nodes, "line": lines[0] if lines else None}


def exclusions_view(
    engine: SQLEngine, case: Case, summary: Mapping[str, Any], has_bands: bool
) -> dict[str, Any]:
    """Exclusions as configured, the requests they set aside by reason, and per account."""
    by_reason = dict(sorted((summary.get("excluded_by_reason") or {}).items()))
    configured = [
        [
            ex.reason,
            ", ".join(sorted(ex.accounts)) or "—",
            relative_path(ex.file, case.folder) if ex.file is not None else "—",
        ]
        for ex in case.exclusions
    ]
    accounts = Table.of(excluded_accounts(engine)) if has_bands else None
    return {"by_reason": by_reason, "configured": configured, "accounts": accounts}


def owners_view(engine: SQLEngine, case: Case, summary: Mapping[str, Any]) -> dict[str, Any]:
    """Data-owner attribution: policy and status from the summary, counts and accounts table."""
    info = summary.get("data_owners")
    info = dict(info) if isinstance(info, Mapping) else {}
    view: dict[str, Any] = {
        "policy": info.get("policy", case.attribution.policy),
        "lookback": str(case.attribution.lookback),
        "info": {k: _cell(v) for k, v in sorted(info.items()) if k != "policy"},
        "table": None,
        "totals": None,
    }
    if engine.table_exists("data_owners"):
        # the accounts shown and the totals in one pass (not every account's details)
        top = engine.frame("report/owner_top", rows=MAX_OWNER_ROWS)
        first = top.row(0, named=True) if top.height else {}
        view["totals"] = {
            "accounts": first.get("accounts", 0),
            "requests": first.get("requests", 0),
            "exposures": first.get("all_exposures", 0),
            "excluded": first.get("all_excluded", 0),
        }
        note = ""
        if view["totals"]["accounts"] > MAX_OWNER_ROWS:
            note = (
                f"The {MAX_OWNER_ROWS} accounts with most requests at risk of "
                f"{view['totals']['accounts']}; all are in notify/data_owners.csv."
            )
        columns = ("account_id", "requests_at_risk", "exposures", "first_at", "last_at")
        view["table"] = Table.of(top.select(columns), note=note)
    return view


def happened_view(summary: Mapping[str, Any]) -> dict[str, Any]:
    """What the case's evidence shows happened, for the report's opening paragraph: `pool`,
    a prefill pool smaller than the context window (a [[capacity]] entry, or a pre-flight
    finding of the engine logs); `kv_faults`, the requests with a KV transfer fault in the
    engine logs (0 without)."""
    window = summary.get("context_window")
    entries = summary.get("capacity")
    small = isinstance(window, int) and any(
        isinstance(e, Mapping)
        and e.get("role") in (None, "prefill")
        and isinstance(e.get("tokens"), int)
        and e["tokens"] < window
        for e in (entries if isinstance(entries, list) else [])
    )
    faults = summary.get("engine_kv_faults")
    return {
        "pool": small or bool(summary.get("preflight")),
        "kv_faults": faults if isinstance(faults, int) else 0,
    }


def engine_view(summary: Mapping[str, Any]) -> dict[str, Any] | None:
    """Engine-log evidence when present: confirmation, reconciliation (one row per side and
    reason), the capacity timeline derived from the logs, and the pre-flight findings."""
    keys = ("preflight", "engine_confirmed", "engine_reconciliation", "engine_capacity")
    if not any(summary.get(k) is not None for k in keys):
        return None
    preflight = summary.get("preflight")
    spans = summary.get("engine_capacity")
    return {
        "preflight": _columns_table(
            [{**f, "danger_band": _band(f.get("danger_band"))} for f in preflight],
            (
                "node",
                "role",
                "tokens",
                "context_window",
                "danger_band",
                "engine_warned",
                "start",
                "end",
            ),
        )
        if isinstance(preflight, list)
        else None,
        "confirmed": summary.get("engine_confirmed"),
        "exposure_count": summary.get("exposure_count"),
        "signature": summary.get("engine_signature"),
        "refused": summary.get("engine_refused"),
        "reconciliation": _reconciliation_table(summary.get("engine_reconciliation")),
        "capacity": _columns_table(
            spans, ("role", "node", "tokens", "reject_from", "context_len", "start", "end")
        )
        if isinstance(spans, list)
        else None,
    }


def _band(band: Any) -> str:
    if isinstance(band, Mapping):
        return f"{_cell(band.get('from'))} – {_cell(band.get('to'))}"
    return _cell(band)


def _reconciliation_table(rec: Any) -> Table | None:
    """matched / gateway_only / engine_only as rows of (side, reason, count)."""
    if not isinstance(rec, Mapping):
        return None
    rows = [["matched", "exposed and engine-confirmed", _cell(rec["matched"]["count"])]]
    for side in ("gateway_only", "engine_only"):
        reasons = rec[side].get("reasons") or {}
        for reason, v in sorted(reasons.items()):
            rows.append([side.replace("_", "-"), reason, _cell(v["count"])])
        if not reasons:
            rows.append([side.replace("_", "-"), "—", _cell(rec[side]["count"])])
    return Table(["side", "reason", "requests"], rows, numeric=[False, False, True])


def _columns_table(rows: Sequence[Any], columns: Sequence[str]) -> Table:
    dicts = [r for r in rows if isinstance(r, Mapping)]
    numeric = [
        all(isinstance(r.get(c), int) and not isinstance(r.get(c), bool) for r in dicts)
        and bool(dicts)
        for c in columns
    ]
    return Table(list(columns), [[_cell(r.get(c)) for c in columns] for r in dicts], "", numeric)


INPUT_COLUMNS = (
    "path",
    "sha256",
    "bytes",
    "rows_read",
    "rows_loaded",
    "duplicates",
    "quarantined",
    "format",
    "note",
)


def inputs_view(engine: SQLEngine, summary: Mapping[str, Any]) -> dict[str, Any]:
    """The inputs with sha256 and counts, and ingest totals: as summary.json states them (paths
    relative to the case file, so the page does not depend on where the case sits), else from
    the `inputs` table."""
    table = None
    if isinstance(summary.get("inputs"), list):
        table = _columns_table(summary["inputs"], INPUT_COLUMNS)
    elif engine.table_exists("inputs"):
        table = Table.of(engine.read_table("inputs"))
    ingest = summary.get("ingest")
    return {"table": table, "ingest": dict(ingest) if isinstance(ingest, Mapping) else None}


# --- evidence and uncertainty -------------------------------------------------------------

# one sentence per contribution to the exposure range: (category, direction) -> text, where
# {n} is the number of requests, {skew} the clock skew and {tolerance} the token tolerance
CONTRIBUTION_SENTENCES = {
    ("quarantined", "max"): (
        "{n} quarantined record(s) could each have been an exposed response: none of their "
        "readable values (model, time, status, account, prompt size) rules it out, and a "
        "record that could not be parsed at all counts."
    ),
    ("unknown_capacity", "max"): (
        "{n} request(s) answered with success matched no [[capacity]] entry for their prefill "
        "node and time, with a prompt above the smallest prefill pool in force in the window: "
        "each may have been exposed."
    ),
    ("status_unknown", "min"): (
        "{n} exposed response(s) have no status in the logs (the record gives none, or its "
        "log records none): their delivery (status 200) is assumed, not recorded."
    ),
    ("status_unknown", "max"): (
        "{n} over-capacity request(s) have no status in the logs and were counted as not "
        "delivered: each may have been answered."
    ),
    ("clock_skew", "min"): (
        "{n} exposed response(s) would not be exposed if the gateway clock were off by up to "
        "{skew} (a capacity change or an edge of the window lies that close)."
    ),
    ("clock_skew", "max"): (
        "{n} other request(s) would be exposed if the gateway clock were off by up to {skew}."
    ),
    ("token_count", "min"): (
        "{n} exposed response(s) would not be exposed if the gateway's prompt token count were "
        "off by up to {tolerance} tokens."
    ),
    ("token_count", "max"): (
        "{n} other request(s) would be exposed if the gateway's prompt token count were off by "
        "up to {tolerance} tokens."
    ),
    ("engine_length", "min"): (
        "{n} exposed response(s) carry a bootstrap room for which the engine logs give an "
        "input length that would not be exposed, but the room does not identify them (other "
        "requests carry it too, or its lines disagree): the gateway's count decided."
    ),
    ("engine_length", "max"): (
        "{n} other request(s) carry a bootstrap room for which the engine logs give an input "
        "length that would be exposed, but the room does not identify them (other requests "
        "carry it too, or its lines disagree): the gateway's count decided."
    ),
    ("conflicting", "min"): (
        "{n} exposed response(s) have a quarantined conflicting duplicate record (same request "
        "id, other values) that would not be exposed."
    ),
    ("conflicting", "max"): (
        "{n} request(s) not counted as exposed have a quarantined conflicting duplicate record "
        "that would be."
    ),
    ("engine_only", "max"): (
        "{n} request(s) show the bug's signature (prefill rejected for capacity, decode "
        "finished) or a KV transfer fault (KV blocks released on an expired lease, or read "
        "after it) in the engine logs with no exposed gateway record, and no excluded account "
        "or failed status explains them."
    ),
}
EXACT = (
    "The count is exact on the evidence given: no quarantined record, request without a "
    "capacity entry, assumed status, conflicting duplicate, engine-only signature, declared "
    "clock or token uncertainty, input cut short or hour of the window without records could "
    "change it."
)


def cut_sentence(paths: list[str]) -> str:
    """The sentence for inputs cut short (summary.json `cut_inputs`)."""
    what = "1 input was" if len(paths) == 1 else f"{len(paths):,} inputs were"
    return (
        f"{what} cut short (a truncated gzip or zstd stream: {', '.join(paths)}): requests "
        "logged after the break are in no figure, so the maximum may be higher."
    )


def gap_sentence(reason: MaxOpen) -> str:
    """The sentence for hours of the window with no or few records (summary.json
    `coverage.gaps`)."""
    what = "1 hour" if reason.count == 1 else f"{reason.count:,} hours"
    return (
        f"{what} of the window {'has' if reason.count == 1 else 'have'} no or few records from "
        f"{', '.join(reason.names)} (an outage, whole or partial: see Coverage): requests "
        "logged then are in no figure, so the maximum may be higher."
    )


def contribution_sentence(contribution: Mapping[str, Any], summary: Mapping[str, Any]) -> str:
    """The sentence that explains one contribution to the exposure range."""
    settings = summary.get("uncertainty") or {}
    key = (str(contribution.get("category")), str(contribution.get("direction")))
    template = CONTRIBUTION_SENTENCES.get(
        key, "{n} request(s) in category " + key[0] + " (" + key[1] + ")."
    )
    return template.format(
        n=f"{int(contribution.get('requests') or 0):,}",
        skew=_duration(settings.get("clock_skew_seconds") or 0),
        tolerance=f"{int(settings.get('prompt_tokens_tolerance') or 0):,}",
    )


def _duration(seconds: float) -> str:
    for unit, size in (("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= size and float(seconds / size).is_integer():
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def evidence_view(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The exposure range with one sentence per contribution (or that the count is exact),
    the assumptions, the coverage gaps and the warnings; None parts for an older summary."""
    rng = summary.get("exposure_range")
    view: dict[str, Any] = {
        "range": None,
        "sentences": [],
        "exact": False,
        "exact_text": EXACT,
        "assumptions": None,
    }
    if isinstance(rng, Mapping):
        view["range"] = {k: rng.get(k) for k in ("min", "likely", "max")}
        view["sentences"] = [
            (c.get("direction"), contribution_sentence(c, summary))
            for c in rng.get("contributions") or []
        ]
    view["exact"] = is_exact(summary)
    for reason in max_open(summary):  # requests in no figure: never exact
        view["sentences"].append(
            (
                "max",
                cut_sentence(list(reason.names)) if reason.kind == "cut" else gap_sentence(reason),
            )
        )
    entries = summary.get("assumptions")
    if isinstance(entries, list):
        view["assumptions"] = Table(
            ["field", "default", "what it does", "sources", "requests in scope"],
            [
                [
                    _cell(a.get("field")),
                    "none" if a.get("default") is None else _cell(a.get("default")),
                    _cell(a.get("effect")),
                    _cell(a.get("sources")),
                    _cell(a.get("requests")),
                ]
                for a in entries
            ],
            numeric=[False, False, False, False, True],
        )
    cov = summary.get("coverage")
    view["coverage"] = None
    if isinstance(cov, Mapping):
        gaps: dict[str, list[str]] = {}
        for gap in cov.get("gaps") or []:
            gaps.setdefault(str(gap.get("source")), []).append(str(gap.get("hour")))
        missing = cov.get("missing") or {}
        view["coverage"] = {
            "in_scope": cov.get("in_scope"),
            "loaded": cov.get("loaded"),
            "gaps": Table(
                ["source", "hours with no or few records", "hours"],
                [[src, _cell(len(hours)), _hours_text(hours)] for src, hours in gaps.items()],
                numeric=[False, True, False],
            ),
            "missing": Table(
                ["field", "in-scope requests without it", "share"],
                [
                    [
                        name,
                        _cell(v.get("requests")),
                        "—" if v.get("share") is None else f"{100 * float(v['share']):.2f} %",
                    ]
                    for name, v in sorted(missing.items())
                    if isinstance(v, Mapping)
                ],
                numeric=[False, True, True],
            ),
            "engine": Table(
                ["node", "role", "first line", "last line", "hours of the window with lines"],
                [
                    [
                        _cell(n.get("node")),
                        _cell(n.get("role")),
                        _cell(n.get("first")),
                        _cell(n.get("last")),
                        f"{_cell(n.get('hours_with_lines'))} of {len(cov.get('hours') or [])}",
                    ]
                    for n in cov.get("engine_nodes") or []
                ],
                numeric=[False, False, False, False, True],
            )
            if cov.get("engine_nodes")
            else None,
        }
    warnings = summary.get("warnings")
    view["warnings"] = [str(w) for w in warnings] if isinstance(warnings, list) else None
    return view


def _hours_text(hours: list[str]) -> str:
    """Hours as runs: `2026-09-01T05:00Z – 07:00Z (3 h)` and single hours, `; `-separated."""
    runs: list[list[str]] = []
    for h in sorted(hours):
        if runs and _next_hour(runs[-1][-1]) == h:
            runs[-1].append(h)
        else:
            runs.append([h])
    return "; ".join(r[0] if len(r) == 1 else f"{r[0]} – {r[-1]} ({len(r)} h)" for r in runs)


def _next_hour(hour: str) -> str:
    at = datetime.fromisoformat(hour.replace("Z", "+00:00")) + timedelta(hours=1)
    return iso(at, whole_seconds=True)


def quarantine_view(engine: SQLEngine, case: Case) -> Table | None:
    """The quarantine table by reason: per input (relative to the case folder) and reason,
    the records quarantined; None when the case store holds no quarantine table."""
    if not engine.table_exists("quarantine"):
        return None
    frame = engine.frame("report/quarantine_reasons")
    rows = [
        [relative_path(src, case.folder) if src else "—", _cell(reason), _cell(n)]
        for src, reason, n in frame.iter_rows()
    ]
    return Table(["input", "reason", "records"], rows, numeric=[False, False, True])


# --- helpers ------------------------------------------------------------------------------


def _view_summary(summary: Mapping[str, Any]) -> dict[str, Any]:
    """Headline figures, tolerant of affected_accounts as a count or a list of ids."""
    affected = summary.get("affected_accounts")
    affected_ids: list[str] = []
    if isinstance(affected, list):
        affected_ids = sorted(str(a) for a in affected)
        affected = len(affected)
    bands = summary.get("bands") or {}
    order = [b for b in charts.BAND_ORDER if b in bands] + sorted(
        b for b in bands if b not in charts.BAND_ORDER
    )
    return {
        "exposure_count": summary.get("exposure_count"),
        "affected_accounts": affected,
        "affected_ids": affected_ids,
        "bands": [(b, bands[b], BAND_MEANINGS.get(b, "")) for b in order],
        "bands_total": sum(v for v in bands.values() if isinstance(v, int)),
    }


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.4g}"
    if hasattr(value, "isoformat"):
        return (
            iso(value, whole_seconds=True) if getattr(value, "tzinfo", None) else value.isoformat()
        )
    if isinstance(value, list | tuple):
        return "; ".join(_cell(v) for v in value) if len(value) else "—"
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, default=str)
    if isinstance(value, str) and value.startswith("[") and value.endswith("]"):
        try:  # a JSON list column (e.g. reasons) reads as its items
            items = json.loads(value)
        except ValueError:
            return value
        return _cell(items) if isinstance(items, list) else value
    return str(value)


def _json_block(value: Any) -> str:
    return json.dumps(value, sort_keys=True, indent=2, default=str)


def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("forensics.render", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        # every text shown (ids, labels) with control characters as visible escapes
        finalize=lambda v: v if isinstance(v, Markup) or not isinstance(v, str) else printable(v),
    )
    env.filters["num"] = lambda v: f"{v:,}" if isinstance(v, int) else ("—" if v is None else v)
    env.globals["contents"] = contents
    # a listed id: a very long one cut (formats.short; the CSVs keep it whole)
    env.filters["label"] = lambda v: short(v) if isinstance(v, str) else v
    return env.get_template("report.html.j2")


_HEADING = re.compile(r'<section id="([^"]+)">\s*<h2>(.*?)</h2>', re.S)


def contents(body: str) -> list[tuple[str, Markup]]:
    """The table of contents of rendered sections: (id, title) of every `<section>` that
    opens with an `<h2>`, in page order (the title as rendered, already escaped)."""
    return [
        (m.group(1), Markup(re.sub(r"<[^>]+>", "", m.group(2)))) for m in _HEADING.finditer(body)
    ]
