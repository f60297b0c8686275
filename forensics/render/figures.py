"""The report's figures, shared with the notebook: the data each chart draws (read from the
analysis tables with `queries/figures/*.sql` and the case file), the Altair charts built from
it (`forensics.render.charts`), and the offline renderer that draws them without a network:
the Vega, Vega-Lite and Vega-Embed JavaScript bundled by vl-convert, inlined.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import altair as alt
import polars as pl
import vl_convert

from ..case import Case
from ..engines import SQLEngine
from ..formats import iso
from . import charts

SIZE_CHART_CAP = 5000  # requests drawn per band in the prompt-size chart (fits: sampled)
VL_VERSION = "6.4"
NO_BANDS = "bands table not available"
NO_PROFILE = "usage classification profile not available"


@dataclass(frozen=True)
class Figure:
    """One chart of the report: the chart, or why it cannot be drawn; a note under it."""

    chart: alt.TopLevelMixin | None
    missing: str = ""
    note: str = ""


def window(case: Case) -> tuple[str, str]:
    """The case window as ISO UTC strings (whole seconds, as the charts' axes take them)."""
    return _iso(case.window_start), _iso(case.window_end)


def events_frame(case: Case) -> pl.DataFrame:
    """The case's [[event]] entries as (at ISO UTC, label), sorted by time then label."""
    rows = sorted((_iso(e.at), e.label) for e in case.events)
    return pl.DataFrame(rows, schema={"at": pl.String, "label": pl.String}, orient="row")


def capacity_frame(case: Case) -> pl.DataFrame:
    """The prefill [[capacity]] entries as (nodes, start, end, tokens), times ISO UTC."""
    rows = [
        (nodes, _iso(start), _iso(end) if end else None, tokens)
        for _, nodes, tokens, start, end in case.capacity_rows("prefill")
    ]
    return pl.DataFrame(
        rows,
        schema={"nodes": pl.String, "start": pl.String, "end": pl.String, "tokens": pl.Int64},
        orient="row",
    )


def timeline(engine: SQLEngine, case: Case) -> Figure:
    """The incident timeline: events, the window, every exposed response (drawn without the
    responses, and marked missing, when the store holds no bands)."""
    has_bands = engine.table_exists("bands")
    exposed = (
        engine.frame("figures/exposed")
        if has_bands
        else pl.DataFrame(
            schema={"ts": pl.String, "account_id": pl.String, "prompt_tokens": pl.Int64}
        )
    )
    chart = charts.timeline_chart(events_frame(case), exposed, *window(case))
    return Figure(chart, missing="" if has_bands else NO_BANDS)


def size(engine: SQLEngine, case: Case) -> Figure:
    """Prompt size against the prefill capacity in force, with a note when some fitting
    requests are not drawn."""
    if not engine.table_exists("bands"):
        return Figure(None, missing=NO_BANDS)
    min_prompt = case.baseline.min_prompt_tokens
    points = engine.frame("figures/size_points", min_prompt=min_prompt, cap=SIZE_CHART_CAP)
    totals = engine.frame("figures/size_totals", min_prompt=min_prompt)
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
    chart = charts.size_chart(points, capacity_frame(case), case.context_window, *window(case))
    return Figure(chart, note=note)


def daily(engine: SQLEngine) -> Figure:
    """Exposed responses per day against the baseline long-context volume."""
    frames = _profiles(engine)
    if frames is None or not frames[0].height:
        return Figure(None, missing=NO_PROFILE)
    return Figure(charts.daily_chart(frames[0]))


def hourly(engine: SQLEngine) -> Figure:
    """Hour-of-day profile of exposed responses against the baseline."""
    frames = _profiles(engine)
    if frames is None or not frames[1].height:
        return Figure(None, missing=NO_PROFILE)
    return Figure(charts.hourly_chart(frames[1]))


def coverage(summary: Mapping[str, Any], case: Case) -> Figure:
    """Coverage of the window by the logs (summary.json `coverage`): per source and engine
    node, the hours with records and the gaps. Hours with nothing that are not gaps are
    left out (a quiet hour of an engine log, a source that logs rarely)."""
    cov = summary.get("coverage")
    if not isinstance(cov, Mapping) or not cov.get("hours"):
        return Figure(None, missing="coverage not in summary.json (analyze again)")
    cells = coverage_cells(cov)
    if not cells.height:
        return Figure(None, missing="no log record in the window")
    return Figure(charts.coverage_chart(cells, *window(case)))


def coverage_cells(cov: Mapping[str, Any]) -> pl.DataFrame:
    """The chart's cells: lane, hour, end (ISO UTC), records, gap, for the hours with
    records and the gaps."""
    hours = [str(h) for h in cov["hours"]]
    ends = [_iso(_parse_iso(h) + timedelta(hours=1)) for h in hours]
    gaps = {(g["source"], g["hour"]) for g in cov.get("gaps") or []}
    lanes = [(str(s["source"]), s["records"]) for s in cov.get("sources") or []]
    lanes += [
        (f"engine {n['node']} ({n['role'] or 'role unknown'})", n["lines"])
        for n in cov.get("engine_nodes") or []
    ]
    rows = []
    for lane, counts in lanes:
        for hour, end, n in zip(hours, ends, counts, strict=True):
            gap = (lane, hour) in gaps
            if n or gap:
                rows.append((lane, hour, end, int(n), gap))
    return pl.DataFrame(
        rows,
        schema={
            "lane": pl.String,
            "hour": pl.String,
            "end": pl.String,
            "records": pl.Int64,
            "gap": pl.Boolean,
        },
        orient="row",
    )


def _parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _profiles(engine: SQLEngine) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    if not engine.table_exists("classification_profile"):
        return None
    return profile_frames(engine.read_table("classification_profile"))


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


def spec(chart: alt.TopLevelMixin) -> dict[str, Any]:
    """A chart's Vega-Lite spec with a fixed, font-neutral config (deterministic)."""
    spec = chart.to_dict()
    spec["config"] = {
        "font": "Helvetica, Arial, sans-serif",
        "view": {"stroke": None},
        "axis": {"labelFontSize": 11, "titleFontSize": 12},
        "title": {"fontSize": 14, "subtitleFontSize": 11, "subtitleColor": "#555555"},
    }
    return spec


def script_json(value: Any) -> str:
    """JSON safe to inline inside a <script> element: no `<`, `>` or `&` (so no `</script>` or
    `<!--` in any string can end or stall the element) and, being ASCII, no U+2028/2029; each
    such character stays the same string as a \\u escape."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# --- drawing offline (the report page and notebooks) ---------------------------------------

OFFLINE_RENDERER = "kv-forensics-offline"
_EMBED_OPTIONS = '{"renderer":"svg","actions":false,"mode":"vega-lite"}'
_shown = 0


def chart_html(spec: Mapping[str, Any]) -> str:
    """One Vega-Lite chart as an HTML fragment that draws offline, as the report does: the
    bundled Vega JavaScript inline, then the chart's element and the spec as script-safe
    JSON. The element is found from its script (the output may not be in the page yet)."""
    global _shown
    _shown += 1
    digest = hashlib.sha256(script_json(spec).encode()).hexdigest()[:12]
    element = f"kv-forensics-chart-{digest}-{_shown}"
    return (
        f"<script>{bundle()}</script>\n"
        f'<div class="kv-forensics-chart" id="{element}"></div>\n'
        "<script>(function () {\n"
        "  var el = document.currentScript && document.currentScript.previousElementSibling;\n"
        f'  if (!el || el.id !== "{element}") el = document.getElementById("{element}");\n'
        f"  vegaEmbed(el, {script_json(spec)}, {_EMBED_OPTIONS})\n"
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


@functools.cache
def bundle() -> str:
    """The Vega + Vega-Lite + Vega-Embed JavaScript bundled by vl-convert (loaded once)."""
    # the stub marks `snippet` required; vl-convert takes none (the bundle alone)
    js: str = vl_convert.javascript_bundle(vl_version=VL_VERSION)  # type: ignore[call-arg]
    return js.replace("</script", "<\\/script")


def _iso(at: datetime) -> str:
    return iso(at, whole_seconds=True)
