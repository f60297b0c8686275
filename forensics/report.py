"""The incident report: `report.html` (self-contained, opens offline), `timeline.png/.svg`.

`render_report` only READS the analysis results (the `bands`, `data_owners`,
`classification_*` and `inputs` tables and the summary dict); a missing table is shown as
"not available", never recomputed. The page inlines the Vega, Vega-Lite and Vega-Embed
JavaScript bundled by vl-convert and every chart's data, so it fetches nothing; notebook
charts draw the same way (`chart_html`, `use_offline_renderer`). Text from the data is shown,
never run: specs are inlined script-safe, labels with control characters as escapes. The
same database and case give byte-identical files.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import altair as alt
import jinja2
import polars as pl
import vl_convert
from markupsafe import Markup

from . import charts
from .case import Case
from .engine import SQLEngine
from .outputs import printable

SIZE_CHART_CAP = 5000
MAX_OWNER_ROWS = 25
VL_VERSION = "6.4"
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
    engine: SQLEngine, case: Case, summary: Mapping[str, Any], out_dir: Path
) -> list[Path]:
    """Write report.html, timeline.png and timeline.svg into `out_dir`; return their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    window_start, window_end = charts.iso(case.window_start), charts.iso(case.window_end)
    has_bands = engine.table_exists("bands")

    events = events_frame(case)
    exposed = (
        engine.frame("report/exposed")
        if has_bands
        else pl.DataFrame(
            schema={"ts": pl.String, "account_id": pl.String, "prompt_tokens": pl.Int64}
        )
    )
    timeline = charts.timeline_chart(events, exposed, window_start, window_end)
    timeline_spec = _spec(timeline)

    sections = [
        Section(
            "chart-timeline",
            timeline_spec if has_bands else None,
            missing="" if has_bands else "bands table not available",
        ),
        size_section(engine, case, has_bands, window_start, window_end),
        *profile_sections(engine),
    ]

    html = _template().render(
        case=case,
        s=_view_summary(summary),
        sections={sec.id: sec for sec in sections},
        specs_json=_script_json({sec.id: sec.spec for sec in sections if sec.spec}),
        bundle=_bundle(),
        classification=classification_view(engine, summary),
        exclusions=exclusions_view(engine, case, summary, has_bands),
        owners=owners_view(engine, case, summary),
        engine_evidence=engine_view(summary),
        inputs=inputs_view(engine, summary),
        events=[[r["at"], r["label"]] for r in events.iter_rows(named=True)],
        window=(window_start, window_end),
        not_available=NOT_AVAILABLE,
    )
    report = out_dir / "report.html"
    report.write_text(html, encoding="utf-8", newline="\n")

    svg = out_dir / "timeline.svg"
    svg.write_text(
        vl_convert.vegalite_to_svg(timeline_spec, vl_version=VL_VERSION),
        encoding="utf-8",
        newline="\n",
    )
    png = out_dir / "timeline.png"
    png.write_bytes(vl_convert.vegalite_to_png(timeline_spec, vl_version=VL_VERSION, scale=2))
    return [report, png, svg]


# --- data for the charts ----------------------------------------------------------------


def events_frame(case: Case) -> pl.DataFrame:
    """The case's [[event]] entries as (at ISO UTC, label), sorted by time then label."""
    rows = sorted((charts.iso(e.at), e.label) for e in case.events)
    return pl.DataFrame(rows, schema={"at": pl.String, "label": pl.String}, orient="row")


def capacity_frame(case: Case) -> pl.DataFrame:
    """The prefill [[capacity]] entries as (nodes, start, end, tokens), times ISO UTC."""
    rows = [
        (nodes, charts.iso(start), charts.iso(end) if end else None, tokens)
        for _, nodes, tokens, start, end in case.capacity_rows("prefill")
    ]
    return pl.DataFrame(
        rows,
        schema={"nodes": pl.String, "start": pl.String, "end": pl.String, "tokens": pl.Int64},
        orient="row",
    )


def size_section(
    engine: SQLEngine, case: Case, has_bands: bool, window_start: str, window_end: str
) -> Section:
    """The prompt-size chart, with a note when some fitting requests are not drawn."""
    if not has_bands:
        return Section("chart-size", None, missing="bands table not available")
    min_prompt = case.baseline.min_prompt_tokens
    points = engine.frame("report/size_points", min_prompt=min_prompt, cap=SIZE_CHART_CAP)
    totals = engine.frame("report/size_totals", min_prompt=min_prompt)
    shown = dict(points.group_by("band").len().iter_rows()) if points.height else {}
    cut = [
        f"{shown.get(band, 0):,} of {total:,} {band}"
        for band, total in totals.iter_rows()
        if shown.get(band, 0) < total
    ]
    note = (
        f"Requests that fit the pool are drawn only from {min_prompt:,} prompt tokens "
        "(the long-context baseline)."
    )
    if cut:
        note += " A deterministic sample is drawn where there are many: " + "; ".join(cut) + "."
    chart = charts.size_chart(
        points, capacity_frame(case), case.context_window, window_start, window_end
    )
    return Section("chart-size", _spec(chart), note=note)


def profile_sections(engine: SQLEngine) -> list[Section]:
    """Daily and hour-of-day charts from `classification_profile` (written by classify)."""
    missing = "usage classification profile not available"
    if not engine.table_exists("classification_profile"):
        return [
            Section("chart-daily", None, missing=missing),
            Section("chart-hourly", None, missing=missing),
        ]
    daily, hourly = profile_frames(engine.frame("report/table", table="classification_profile"))
    return [
        Section(
            "chart-daily",
            _spec(charts.daily_chart(daily)) if daily.height else None,
            missing=missing,
        ),
        Section(
            "chart-hourly",
            _spec(charts.hourly_chart(hourly)) if hourly.height else None,
            missing=missing,
        ),
    ]


def profile_frames(profile: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(day, series, requests) and (hour, series, share) frames from the profile table."""
    empty_daily = pl.DataFrame(schema={"day": pl.String, "series": pl.String, "requests": pl.Int64})
    empty_hourly = pl.DataFrame(schema={"hour": pl.Int64, "series": pl.String, "share": pl.Float64})
    need = {"profile", "bucket", "exposed", "baseline"}
    if not need <= set(profile.columns):
        return empty_daily, empty_hourly
    long = (
        profile.rename({"profile": "kind"})
        .unpivot(
            index=["kind", "bucket"],
            on=["exposed", "baseline"],
            variable_name="series",
            value_name="requests",
        )
        .with_columns(pl.col("requests").cast(pl.Int64))
    )
    daily = (
        long.filter(pl.col("kind") == "day")
        .select(day=pl.col("bucket").cast(pl.String), series="series", requests="requests")
        .sort(["day", "series"])
    )
    hourly = (
        long.filter(pl.col("kind") == "hour")
        .with_columns(total=pl.col("requests").sum().over("series"))
        .select(
            hour=pl.col("bucket").cast(pl.Int64),
            series="series",
            share=pl.when(pl.col("total") > 0)
            .then(pl.col("requests") / pl.col("total"))
            .otherwise(0.0),
        )
        .sort(["hour", "series"])
    )
    return daily, hourly


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
        view["tests"] = Table.of(engine.frame("report/table", table="classification_tests"))
    if engine.table_exists("classification_accounts"):
        frame = engine.frame("report/table", table="classification_accounts")
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
        [ex.reason, ", ".join(sorted(ex.accounts)) or "—", _relative(ex.file, case.folder)]
        for ex in case.exclusions
    ]
    accounts = Table.of(engine.frame("report/exclusions")) if has_bands else None
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
        frame = engine.frame("report/owner_accounts")
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
        table = Table.of(engine.frame("report/table", table="inputs"))
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
        "bands": [(b, bands[b], charts.BAND_LABELS.get(b, "")) for b in order],
        "bands_total": sum(v for v in bands.values() if isinstance(v, int)),
    }


def _relative(path: Path | None, folder: Path) -> str:
    """A case-file path shown relative to the case folder (stable across machines)."""
    if path is None:
        return "—"
    try:
        return str(Path(path).resolve().relative_to(folder.resolve()))
    except ValueError:
        return str(path)


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
        return charts.iso(value) if getattr(value, "tzinfo", None) else value.isoformat()
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


def _spec(chart: alt.TopLevelMixin) -> dict[str, Any]:
    """A chart's Vega-Lite spec with a fixed, font-neutral config (deterministic)."""
    spec = chart.to_dict()
    spec["config"] = {
        "font": "Helvetica, Arial, sans-serif",
        "view": {"stroke": None},
        "axis": {"labelFontSize": 11, "titleFontSize": 12},
        "title": {"fontSize": 14, "subtitleFontSize": 11, "subtitleColor": "#555555"},
    }
    return spec


def _script_json(value: Any) -> str:
    """JSON safe to inline inside a <script> element: no `<`, `>` or `&` (so no `</script>` or
    `<!--` in any string can end or stall the element) and, being ASCII, no U+2028/2029; each
    such character stays the same string as a \\u escape."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# --- charts outside the report (notebooks) ------------------------------------------------

OFFLINE_RENDERER = "kv-forensics-offline"
_EMBED_OPTIONS = '{"renderer":"svg","actions":false,"mode":"vega-lite"}'
_shown = 0


def chart_html(spec: Mapping[str, Any]) -> str:
    """One Vega-Lite chart as an HTML fragment that draws offline, as the report does: the
    bundled Vega JavaScript inline, then the chart's element and the spec as script-safe
    JSON. The element is found from its script (the output may not be in the page yet)."""
    global _shown
    _shown += 1
    digest = hashlib.sha256(_script_json(spec).encode()).hexdigest()[:12]
    element = f"kv-forensics-chart-{digest}-{_shown}"
    return (
        f"<script>{_bundle()}</script>\n"
        f'<div class="kv-forensics-chart" id="{element}"></div>\n'
        "<script>(function () {\n"
        "  var el = document.currentScript && document.currentScript.previousElementSibling;\n"
        f'  if (!el || el.id !== "{element}") el = document.getElementById("{element}");\n'
        f"  vegaEmbed(el, {_script_json(spec)}, {_EMBED_OPTIONS})\n"
        "    .catch(function (err) { console.error(err); });\n"
        "})();</script>\n"
    )


def _offline_renderer(spec: dict[str, Any], **metadata: Any) -> dict[str, str]:
    return {"text/html": chart_html(spec), "text/plain": "<kv-forensics chart>"}


def use_offline_renderer() -> None:
    """Draw Altair charts in Jupyter with `chart_html` (no CDN fetch) unless the user chose
    a renderer of their own (Altair's active one is not `default`)."""
    if OFFLINE_RENDERER not in alt.renderers.names():
        alt.renderers.register(OFFLINE_RENDERER, _offline_renderer)
    if alt.renderers.active == "default":
        alt.renderers.enable(OFFLINE_RENDERER)


_BUNDLE: str | None = None


def _bundle() -> str:
    """The Vega + Vega-Lite + Vega-Embed JavaScript bundled by vl-convert (cached)."""
    global _BUNDLE
    if _BUNDLE is None:
        _BUNDLE = vl_convert.javascript_bundle(vl_version=VL_VERSION).replace(
            "</script", "<\\/script"
        )
    return _BUNDLE


def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("forensics", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        # every text shown (ids, labels) with control characters as visible escapes
        finalize=lambda v: v if isinstance(v, Markup) or not isinstance(v, str) else printable(v),
    )
    env.filters["num"] = lambda v: f"{v:,}" if isinstance(v, int) else ("—" if v is None else v)
    return env.get_template("report.html.j2")
