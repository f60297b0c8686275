"""The incident report: `report.html` (self-contained, opens offline), `timeline.png/.svg`.

`render_report` only READS the analysis results (the `bands`, `data_owners`,
`classification_*` and `inputs` tables and the summary dict); a missing table is shown as
"not available", never recomputed. The page inlines the Vega, Vega-Lite and Vega-Embed
JavaScript bundled by vl-convert and every chart's data (`forensics.render.figures`, which
notebook charts share), so it fetches nothing. Text from the data is shown, never run: specs
are inlined script-safe, labels with control characters as escapes. The same database and
case give byte-identical files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import polars as pl
import vl_convert
from markupsafe import Markup

from ..case import Case
from ..engines import SQLEngine
from ..formats import iso, printable, relative_path
from ..progress import SILENT, Progress, step
from ..schema import BAND_MEANINGS
from . import charts, figures
from .figures import VL_VERSION

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
        return cls(
            columns=list(frame.columns),
            rows=[[_cell(v) for v in row] for row in frame.iter_rows()],
            note=note,
            numeric=[dtype.is_numeric() for dtype in frame.dtypes],
        )


@dataclass
class Section:
    """A chart slot in the page: its element id, Vega-Lite spec, or why it is missing."""

    id: str
    spec: dict[str, Any] | None
    missing: str = ""
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def render_report(
    engine: SQLEngine,
    case: Case,
    summary: Mapping[str, Any],
    out_dir: Path,
    progress: Progress = SILENT,
) -> list[Path]:
    """Write report.html, timeline.png and timeline.svg into `out_dir`; return their paths.
    Reports two steps to `progress`: "report" (the page) and "chart export" (the pictures)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with step(progress, "report"):
        report, timeline_spec = _write_page(engine, case, summary, out_dir)
    with step(progress, "chart export"):
        svg = out_dir / "timeline.svg"
        svg.write_text(
            vl_convert.vegalite_to_svg(timeline_spec, vl_version=VL_VERSION),
            encoding="utf-8",
            newline="\n",
        )
        png = out_dir / "timeline.png"
        png.write_bytes(vl_convert.vegalite_to_png(timeline_spec, vl_version=VL_VERSION, scale=2))
    return [report, png, svg]


def _write_page(
    engine: SQLEngine, case: Case, summary: Mapping[str, Any], out_dir: Path
) -> tuple[Path, dict[str, Any]]:
    """Write report.html; return its path and the timeline's spec (for the pictures)."""
    has_bands = engine.table_exists("bands")
    timeline = figures.timeline(engine, case)
    assert timeline.chart is not None  # drawn even without bands (events and window)
    timeline_spec = figures.spec(timeline.chart)
    sections = [
        _section("chart-timeline", timeline),
        _section("chart-size", figures.size(engine, case)),
        _section("chart-daily", figures.daily(engine)),
        _section("chart-hourly", figures.hourly(engine)),
    ]
    events = figures.events_frame(case)

    html = _template().render(
        case=case,
        s=_view_summary(summary),
        sections={sec.id: sec for sec in sections},
        specs_json=figures.script_json({sec.id: sec.spec for sec in sections if sec.spec}),
        bundle=figures.bundle(),
        classification=classification_view(engine, summary),
        exclusions=exclusions_view(engine, case, summary, has_bands),
        owners=owners_view(engine, case, summary),
        engine_evidence=engine_view(summary),
        inputs=inputs_view(engine, summary),
        events=[[r["at"], r["label"]] for r in events.iter_rows(named=True)],
        window=figures.window(case),
        not_available=NOT_AVAILABLE,
    )
    report = out_dir / "report.html"
    report.write_text(html, encoding="utf-8", newline="\n")
    return report, timeline_spec


def _section(element: str, figure: figures.Figure) -> Section:
    """The page's slot `element` for a figure: its spec, or why it is missing."""
    if figure.missing or figure.chart is None:
        return Section(element, None, missing=figure.missing, note=figure.note)
    return Section(element, figures.spec(figure.chart), note=figure.note)


def excluded_accounts(engine: SQLEngine) -> pl.DataFrame:
    """Per excluded account: reason, requests in band `excluded`, requests in the window."""
    return engine.frame("report/exclusions")


def owner_accounts(engine: SQLEngine) -> pl.DataFrame:
    """Per data-owner account: requests at risk, exposures that could have read them, the
    first and last time, busiest first."""
    return engine.frame("report/owner_accounts")


# --- data for the tables -----------------------------------------------------------------


def classification_view(engine: SQLEngine, summary: Mapping[str, Any]) -> dict[str, Any]:
    """Verdict, tests and per-account evidence from classification_* tables and the summary."""
    view: dict[str, Any] = {
        "verdict": summary.get("verdict"),
        "flagged": list(summary.get("flagged_accounts") or []),
        "tests": None,
        "accounts": None,
        "detail": None,
    }
    if engine.table_exists("classification_tests"):
        view["tests"] = Table.of(engine.read_table("classification_tests"))
    if engine.table_exists("classification_accounts"):
        frame = engine.read_table("classification_accounts")
        if "flagged" in frame.columns:
            frame = frame.sort(["flagged", *frame.columns[:1]], descending=[True, False])
        view["accounts"] = Table.of(frame)
    detail = summary.get("classification")
    if isinstance(detail, Mapping):
        view["detail"] = _json_block(detail)
    return view


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
        totals = engine.frame("report/owner_totals").row(0, named=True)
        view["totals"] = totals
        frame = owner_accounts(engine)
        note = ""
        if frame.height > MAX_OWNER_ROWS:
            note = (
                f"The {MAX_OWNER_ROWS} accounts with most requests at risk of {frame.height}; "
                "all are in notify/data_owners.csv."
            )
            frame = frame.head(MAX_OWNER_ROWS)
        view["table"] = Table.of(frame, note=note)
    return view


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
            ("node", "role", "tokens", "context_window", "danger_band", "start", "end"),
        )
        if isinstance(preflight, list)
        else None,
        "confirmed": summary.get("engine_confirmed"),
        "exposure_count": summary.get("exposure_count"),
        "signature": summary.get("engine_signature"),
        "reconciliation": _reconciliation_table(summary.get("engine_reconciliation")),
        "capacity": _columns_table(spans, ("role", "node", "tokens", "context_len", "start", "end"))
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
    numeric = [all(isinstance(r.get(c), int) for r in dicts) and bool(dicts) for c in columns]
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
    return env.get_template("report.html.j2")
