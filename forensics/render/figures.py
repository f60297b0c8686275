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
from typing import Any, cast

import altair as alt
import polars as pl
import vl_convert

from ..case import Case
from ..engines import SQLEngine
from ..formats import iso
from . import charts

MAX_MARKS = 5000  # a chart draws one mark per row up to this many rows, counts per bin above
PROMPT_BINS = 40  # about this many prompt-size bands in a binned chart
VL_VERSION = "6.4"
NO_BANDS = "bands table not available"
NO_PROFILE = "usage classification profile not available"


@dataclass(frozen=True)
class Figure:
    """One chart of the report: the chart, or why it cannot be drawn (`missing`: an analysis
    table is not there) or has nothing to draw (`empty`: the data holds no row for it; the
    chart then only says so); a note under it."""

    chart: alt.TopLevelMixin | None
    missing: str = ""
    note: str = ""
    empty: str = ""


def window(case: Case) -> tuple[str, str]:
    """The case window as ISO UTC strings (whole seconds, as the charts' axes take them)."""
    return _iso(case.window_start), _iso(case.window_end)


def events_frame(case: Case) -> pl.DataFrame:
    """The case's [[event]] entries as (at ISO UTC, label), sorted by time then label."""
    rows = sorted((_iso(e.at), e.label) for e in case.events)
    return pl.DataFrame(rows, schema={"at": pl.String, "label": pl.String}, orient="row")


def capacity_frame(case: Case) -> pl.DataFrame:
    """The prefill [[capacity]] entries that hold for a model of the case (no `models` glob,
    or one matching) as (nodes, start, end, tokens), times ISO UTC."""
    rows = [
        (c.nodes, _iso(c.start), _iso(c.end) if c.end else None, c.tokens)
        for c in case.capacity
        if c.role == "prefill" and any(c.applies_to(m) for m in case.models)
    ]
    return pl.DataFrame(
        rows,
        schema={"nodes": pl.String, "start": pl.String, "end": pl.String, "tokens": pl.Int64},
        orient="row",
    )


def timeline(engine: SQLEngine, case: Case, max_marks: int = MAX_MARKS) -> Figure:
    """The incident timeline: events, the window, the exposed responses (drawn without the
    responses, and marked missing, when the store holds no bands): one tick each up to
    `max_marks` of them, counted per hour or day above (per account when there are at most
    MAX_ACCOUNT_LANES accounts, else per prompt-size band)."""
    events, (start, end) = events_frame(case), window(case)
    if not engine.table_exists("bands"):
        none = pl.DataFrame(
            schema={"ts": pl.String, "account_id": pl.String, "prompt_tokens": pl.Int64}
        )
        return Figure(charts.timeline_chart(events, none, start, end), missing=NO_BANDS)
    stats = engine.frame("figures/exposed_stats").row(0, named=True)
    responses = int(stats["responses"])
    if responses <= max_marks:
        exposed = engine.frame("figures/exposed")
        return Figure(charts.timeline_chart(events, exposed, start, end))
    responses_sum = pl.col("responses").sum()
    if stats["accounts"] <= charts.MAX_ACCOUNT_LANES:
        hourly = engine.frame("figures/exposed_by_account")
        daily = [responses_sum, pl.col("smallest").min(), pl.col("largest").max()]
        bins, unit = binned(hourly, ["account_id"], daily, max_marks, case)
    else:
        step = prompt_step(stats["smallest"], stats["largest"])
        hourly = engine.frame("figures/exposed_by_size", step=step)
        bins, unit = binned(hourly, ["prompt_from"], [responses_sum], max_marks, case)
        bins = _prompt_band(bins, step)
    accounts = int(stats["accounts"])
    chart = charts.timeline_binned_chart(events, bins, unit, responses, accounts, start, end)
    note = (
        f"{responses:,} exposed responses, too many to draw one line each: counted per {unit} "
        "(hover a cell for its exact count). Every one is listed in exposed_requests.csv."
    )
    return Figure(chart, note=note)


def size(engine: SQLEngine, case: Case, max_marks: int = MAX_MARKS) -> Figure:
    """Prompt size against the prefill capacity in force: one dot per request up to
    `max_marks` requests, counts per band, hour or day and prompt-size band above."""
    if not engine.table_exists("bands"):
        return Figure(None, missing=NO_BANDS)
    min_prompt = case.baseline.min_prompt_tokens
    totals = engine.frame("figures/size_totals", min_prompt=min_prompt)
    shown = int(totals["requests"].sum()) if totals.height else 0
    note = (
        f"Requests that fit the pool are drawn only from {min_prompt:,} prompt tokens "
        "(the long-context baseline)."
    )
    title = "Prompt size against the prefill capacity in force"
    if not shown:
        reason = (
            f"no request in the window over the capacity, over the context window or of "
            f"{min_prompt:,} prompt tokens or more"
        )
        return Figure(charts.no_data_chart(title, reason), note=note, empty=reason)
    capacity, (start, end) = capacity_frame(case), window(case)
    if shown <= max_marks:
        points = engine.frame("figures/size_points", min_prompt=min_prompt)
        return Figure(
            charts.size_chart(points, capacity, case.context_window, start, end), note=note
        )
    smallest, largest = totals.select(pl.col("smallest").min(), pl.col("largest").max()).row(0)
    step = prompt_step(smallest, largest)
    hourly = engine.frame("figures/size_bins", min_prompt=min_prompt, step=step)
    daily = [pl.col("requests").sum()]
    cells, unit = binned(hourly, ["band", "prompt_from"], daily, max_marks, case)
    order = {band: i for i, band in enumerate(reversed(charts.BAND_ORDER))}
    cells = _prompt_band(cells, step).sort(
        pl.col("band").replace_strict(order, default=len(order)), "start", "prompt_from"
    )
    chart = charts.size_density_chart(cells, unit, capacity, case.context_window, start, end)
    note += (
        f" {shown:,} requests, too many to draw one dot each: counted per band, {unit} and "
        f"{step:,}-token prompt band (more opaque = more; hover a cell for its exact count)."
    )
    return Figure(chart, note=note)


def binned(
    hourly: pl.DataFrame, keys: list[str], daily: list[pl.Expr], max_marks: int, case: Case
) -> tuple[pl.DataFrame, str]:
    """Counts per UTC hour (`hourly`: start, `keys` and counts, sorted), or per UTC day when
    there are more than `max_marks` hourly cells (`daily`: how each count adds up over a
    day's hours); each cell with its `end`, both clipped to the case window. Returns the
    cells and their unit, "hour" or "day"."""
    unit = "hour"
    if hourly.height > max_marks:
        unit = "day"
        hourly = (
            hourly.with_columns(start=pl.col("start").str.slice(0, 10) + "T00:00:00Z")
            .group_by("start", *keys)
            .agg(*daily)
            .sort("start", *keys)
        )
    start, end = window(case)
    width = charts.BIN_UNITS[unit]
    ends = [_iso(_parse(s) + width) for s in hourly["start"].to_list()]
    cells = hourly.with_columns(end=pl.Series(ends, dtype=pl.String)).with_columns(
        start=pl.max_horizontal(pl.col("start"), pl.lit(start)),
        end=pl.min_horizontal(pl.col("end"), pl.lit(end)),
    )
    return cells.select("start", "end", *[c for c in hourly.columns if c != "start"]), unit


def prompt_step(smallest: int, largest: int) -> int:
    """A round prompt-size band width (1, 2, 2.5 or 5 times a power of ten tokens) that cuts
    [smallest, largest] into at most about PROMPT_BINS bands."""
    want = max(1.0, (largest - smallest) / PROMPT_BINS)
    for power in range(0, 16):
        for mult in (1, 2, 2.5, 5):
            step = mult * 10**power
            if step >= want and step == int(step):
                return int(step)
    return int(want)


def _prompt_band(cells: pl.DataFrame, step: int) -> pl.DataFrame:
    """`prompt_to` (exclusive) and `prompts` ("650,000-674,999") beside each `prompt_from`."""
    return cells.with_columns(prompt_to=pl.col("prompt_from") + step).with_columns(
        prompts=pl.col("prompt_from").map_elements(
            lambda lo: f"{lo:,}–{lo + step - 1:,}", return_dtype=pl.String
        )
    )


NO_PROFILE_DATA = "no exposed response and no baseline long-context request in the window"


def daily(engine: SQLEngine) -> Figure:
    """Exposed responses per day against the baseline long-context volume."""
    frames = _profiles(engine)
    if frames is None or not frames[0].height:
        return Figure(None, missing=NO_PROFILE)
    if not frames[0]["requests"].sum():
        title = "Exposed responses per day against normal long-context volume"
        return Figure(charts.no_data_chart(title, NO_PROFILE_DATA), empty=NO_PROFILE_DATA)
    return Figure(charts.daily_chart(frames[0]))


def hourly(engine: SQLEngine) -> Figure:
    """Hour-of-day profile of exposed responses against the baseline."""
    frames = _profiles(engine)
    if frames is None or not frames[1].height:
        return Figure(None, missing=NO_PROFILE)
    if not frames[1]["share"].sum():
        title = "Hour-of-day profile: exposed responses against baseline"
        return Figure(charts.no_data_chart(title, NO_PROFILE_DATA), empty=NO_PROFILE_DATA)
    return Figure(charts.hourly_chart(frames[1]))


def pool_usage(engine: SQLEngine, case: Case) -> Figure | None:
    """The engines' KV pool usage over the window (vLLM's periodic stats lines), one line
    per node; None when the logs hold none (the report then leaves the chart out)."""
    if not engine.table_exists("engine_pool_usage"):
        return None
    frame = engine.frame(
        "figures/pool_usage", window_start=case.window_start, window_end=case.window_end
    )
    if not frame.height:
        return None
    frame = frame.with_columns(pl.col("ts").map_elements(_iso, return_dtype=pl.String))
    return Figure(charts.pool_usage_chart(frame, *window(case)))


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
    """A chart's Vega-Lite spec with a fixed, font-neutral config (deterministic). Altair
    validates the chart's structure; its rows (`datasets`, built by `charts.ChartData` from
    our own frames) join the spec afterwards, not validated one by one."""
    bare = cast(Any, chart).copy(deep=False)
    datasets: Any = getattr(bare, "datasets", alt.Undefined)
    setattr(bare, "datasets", alt.Undefined)  # noqa: B010 (a schema property, not typed)
    spec = bare.to_dict()
    if datasets is not alt.Undefined:
        spec["datasets"] = {**spec.get("datasets", {}), **datasets}
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
_bundle_sent = False  # this process (in Jupyter: one kernel, one notebook) sent the bundle
NOT_LOADED = (
    "Vega is not loaded: its JavaScript comes with the first chart of the notebook; run "
    "the notebook from the top (Restart Kernel and Run All)"
)
BUNDLE_WAIT_MS = 10_000  # how long a chart waits for the bundle before saying it is missing


def chart_html(spec: Mapping[str, Any], *, with_bundle: bool | None = None) -> str:
    """One Vega-Lite chart as an HTML fragment that draws offline: the chart's element and
    the spec as script-safe JSON, drawn by the bundled Vega JavaScript. The bundle (~1 MB) is
    inlined with the first chart this process draws (`with_bundle=None`; True/False to
    choose): in a notebook every later output reuses it, so an executed notebook carries it
    once, not once per chart. A chart waits for the bundle to load (outputs may render out
    of order), says in its element that it is missing after `BUNDLE_WAIT_MS`, and still
    draws when it comes. The element is found from its
    script (the output may not be in the page yet)."""
    global _shown, _bundle_sent
    _shown += 1
    include = not _bundle_sent if with_bundle is None else with_bundle
    _bundle_sent = _bundle_sent or include
    digest = hashlib.sha256(script_json(spec).encode()).hexdigest()[:12]
    element = f"kv-forensics-chart-{digest}-{_shown}"
    head = f"<script>{bundle()}</script>\n" if include else ""
    missing = json.dumps(NOT_LOADED)
    return head + (
        f'<div class="kv-forensics-chart" id="{element}"></div>\n'
        "<script>(function () {\n"
        "  var el = document.currentScript && document.currentScript.previousElementSibling;\n"
        f'  if (!el || el.id !== "{element}") el = document.getElementById("{element}");\n'
        "  function draw() {\n"
        f"    vegaEmbed(el, {script_json(spec)}, {_EMBED_OPTIONS})\n"
        "      .catch(function (err) { console.error(err); });\n"
        "  }\n"
        "  var waited = 0;\n"
        "  (function ready() {\n"
        '    if (typeof vegaEmbed === "function") return draw();\n'
        f"    if ((waited += 100) === {BUNDLE_WAIT_MS}) el.textContent = {missing};\n"
        "    setTimeout(ready, 100);  // still drawn if the bundle loads later\n"
        "  })();\n"
        "})();</script>\n"
    )


def _offline_renderer(
    spec: dict[str, Any], every_chart: bool = False, **metadata: Any
) -> dict[str, str]:
    html = chart_html(spec, with_bundle=True if every_chart else None)
    return {"text/html": html, "text/plain": "<kv-forensics chart>"}


def use_offline_renderer() -> None:
    """Draw Altair charts in Jupyter with `chart_html` (no CDN fetch) unless the user chose
    a renderer of their own (Altair's active one is not `default`). A front end that shows
    each output in its own frame needs the bundle in every chart:
    `alt.renderers.enable("kv-forensics-offline", every_chart=True)`."""
    if OFFLINE_RENDERER not in alt.renderers.names():
        alt.renderers.register(OFFLINE_RENDERER, _offline_renderer)
    if alt.renderers.active == "default":
        alt.renderers.enable(OFFLINE_RENDERER)


@functools.cache
def bundle() -> str:
    """The Vega + Vega-Lite + Vega-Embed JavaScript bundled by vl-convert: built once per
    process, when the first page or chart needs it (it takes seconds), then reused. Not in a
    background thread: vl-convert holds Python's lock while it builds, so no other work would
    run meanwhile."""
    # the stub marks `snippet` required; vl-convert takes none (the bundle alone)
    js: str = vl_convert.javascript_bundle(vl_version=VL_VERSION)  # type: ignore[call-arg]
    return js.replace("</script", "<\\/script")


def _iso(at: datetime) -> str:
    return iso(at, whole_seconds=True)


def _parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))
