"""Altair chart builders: pure functions from small Polars frames to `alt.Chart` objects.

Every time value arrives as an ISO 8601 UTC string (`...Z`) and every axis uses a UTC scale,
so a chart looks the same in any browser time zone and serialises to the same bytes. Rows are
sorted by the caller; no chart uses selections, so no generated parameter names appear.
Used by the report and the notebook through `forensics.render.figures`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import altair as alt
import polars as pl

from ..formats import iso, printable
from ..schema import BAND_MEANINGS, BANDS

# the bands as drawn and listed: the exposure first, requests that fit the pool last
BAND_ORDER = (*BANDS[1:], BANDS[0])
BAND_COLOURS = ("#d62728", "#ff7f0e", "#7f7f7f", "#393b79", "#bcbd22", "#9ecae1")
BAND_LABELS = {band: BAND_MEANINGS[band] for band in BAND_ORDER}
SERIES_COLOURS = {"exposed": "#d62728", "baseline": "#1f77b4"}
WINDOW_COLOUR = "#d62728"
MAX_ACCOUNT_LANES = 40
_WIDTH = 780


def _utc_x(field: str, title: str | None, domain: list[str] | None = None, **axis: Any) -> alt.X:
    scale = alt.Scale(type="utc", domain=domain) if domain else alt.Scale(type="utc")
    return alt.X(
        f"{field}:T",
        title=title,
        scale=scale,
        axis=alt.Axis(labelOverlap=True, **axis),
    )


def _values(frame: pl.DataFrame) -> alt.InlineData:
    """Inline data as plain JSON rows (no generated dataset names beyond content hashes),
    every text value `printable` (an id with a control character draws as an escape)."""
    rows = [
        {k: printable(v, one_line=True) if isinstance(v, str) else v for k, v in row.items()}
        for row in frame.iter_rows(named=True)
    ]
    return alt.InlineData(values=rows)


def _window_rect(start: str, end: str, x: alt.X, label: str = "exposure window") -> alt.Chart:
    frame = pl.DataFrame({"start": [start], "end": [end], "what": [label]})
    return (
        alt.Chart(_values(frame))
        .mark_rect(color=WINDOW_COLOUR, opacity=0.10)
        .encode(
            x=x,
            x2="end:T",
            tooltip=[
                alt.Tooltip("what:N", title=" "),
                alt.Tooltip("start:N", title="from"),
                alt.Tooltip("end:N", title="until"),
            ],
        )
    )


def timeline_chart(
    events: pl.DataFrame,
    exposed: pl.DataFrame,
    window_start: str,
    window_end: str,
) -> alt.VConcatChart:
    """The incident timeline: events (at, label) over the whole story with the exposure window
    shaded and every exposed response (ts, account_id) as a tick; below, the window zoomed in
    with one lane per affected account (or prompt size when there are too many accounts)."""
    times = [window_start, window_end, *events["at"].to_list()]
    lo, hi = _parse(min(times)), _parse(max(times))
    pad = (hi - lo) * 0.02
    domain = [iso(lo - pad, whole_seconds=True), iso(hi + pad, whole_seconds=True)]
    span = (hi - lo).total_seconds() or 1.0

    fmt = _time_format(lo, hi)
    ev = events.sort(["at", "label"]).with_row_index("lane")
    ev = ev.with_columns(
        lane=pl.col("lane").cast(pl.Int64),
        text=pl.col("at").str.slice(0, 10)
        + " "
        + pl.col("at").str.slice(11, 5)
        + "Z  "
        + pl.col("label"),
        right=pl.col("at").map_elements(
            lambda a: (_parse(a) - lo).total_seconds() / span > 0.55, return_dtype=pl.Boolean
        ),
    )
    exposure_lane = ev.height + 1
    y_scale = alt.Scale(domain=[exposure_lane + 0.6, -0.8], nice=False, zero=False)
    height = max(150, 24 * (ev.height + 2))

    def x(field: str) -> alt.X:
        return _utc_x(field, "time (UTC)", domain, format=fmt, grid=False)

    def y(field: str) -> alt.Y:
        return alt.Y(f"{field}:Q", scale=y_scale, axis=None)

    dots = (
        alt.Chart(_values(ev))
        .mark_point(filled=True, color="#333333", size=40)
        .encode(
            x=x("at"),
            y=y("lane"),
            tooltip=[alt.Tooltip("at:N", title="at (UTC)"), alt.Tooltip("label:N", title="event")],
        )
    )
    left = (
        alt.Chart(_values(ev.filter(~pl.col("right"))))
        .mark_text(align="left", dx=7, fontSize=11, color="#222222")
        .encode(x=x("at"), y=y("lane"), text="text:N")
    )
    right = (
        alt.Chart(_values(ev.filter(pl.col("right"))))
        .mark_text(align="right", dx=-7, fontSize=11, color="#222222")
        .encode(x=x("at"), y=y("lane"), text="text:N")
    )
    marks = exposed.select("ts", "account_id").with_columns(
        lo=pl.lit(exposure_lane - 0.35), hi=pl.lit(exposure_lane + 0.35)
    )
    ticks = (
        alt.Chart(_values(marks))
        .mark_rule(color=WINDOW_COLOUR, strokeWidth=1.2, opacity=0.8)
        .encode(
            x=x("ts"),
            y=y("lo"),
            y2="hi:Q",
            tooltip=[
                alt.Tooltip("ts:N", title="exposed response at (UTC)"),
                alt.Tooltip("account_id:N", title="account"),
            ],
        )
    )
    tick_label = (
        alt.Chart(_values(pl.DataFrame({"at": [window_start], "lane": [exposure_lane - 0.75]})))
        .mark_text(align="left", dx=2, fontSize=11, color=WINDOW_COLOUR, fontWeight="bold")
        .encode(
            x=x("at"),
            y=y("lane"),
            text=alt.value(f"Exposed responses ({exposed.height}), one red line each"),
        )
    )
    overview = alt.layer(
        _window_rect(window_start, window_end, x("start")),
        ticks,
        tick_label,
        dots,
        left,
        right,
    ).properties(
        width=_WIDTH,
        height=height,
        title=alt.Title(
            "Incident timeline (UTC)",
            subtitle="Shaded: the exposure window. Dots: case events, one line each.",
            anchor="start",
        ),
    )
    return alt.vconcat(overview, exposure_lanes(exposed, events, window_start, window_end))


def exposure_lanes(
    exposed: pl.DataFrame, events: pl.DataFrame, window_start: str, window_end: str
) -> alt.LayerChart | alt.FacetChart:
    """The exposure window zoomed in: each exposed response (ts, account_id, prompt_tokens)
    as a tick in its account's lane, event times as dashed rules."""
    domain = [window_start, window_end]
    fmt = _time_format(_parse(window_start), _parse(window_end))
    inside = events.filter((pl.col("at") >= window_start) & (pl.col("at") <= window_end))
    rules = (
        alt.Chart(_values(inside.sort(["at", "label"])))
        .mark_rule(color="#9e9e9e", strokeDash=[3, 3])
        .encode(
            x=_utc_x("at", "time (UTC)", domain, format=fmt),
            tooltip=[alt.Tooltip("at:N", title="at (UTC)"), alt.Tooltip("label:N", title="event")],
        )
    )
    ids = exposed["account_id"].unique().sort().to_list() if exposed.height else []
    # the lane order names the ids as _values draws them (Vega sorts by an expression on them)
    accounts = [printable(a, one_line=True) for a in ids]
    tooltip = [
        alt.Tooltip("ts:N", title="at (UTC)"),
        alt.Tooltip("account_id:N", title="account"),
        alt.Tooltip("prompt_tokens:Q", title="prompt tokens", format=","),
    ]
    if len(accounts) <= MAX_ACCOUNT_LANES:
        marks = (
            alt.Chart(_values(exposed))
            .mark_tick(color=WINDOW_COLOUR, thickness=2, opacity=0.85)
            .encode(
                x=_utc_x("ts", "time (UTC)", domain, format=fmt),
                y=alt.Y("account_id:N", title="affected account", sort=accounts),
                tooltip=tooltip,
            )
        )
        height = max(80, 16 * max(1, len(accounts)))
        subtitle = (
            "One lane per affected account; one tick per exposed response. "
            "Dashed: case events in the window (labelled above)."
        )
    else:
        marks = (
            alt.Chart(_values(exposed))
            .mark_circle(color=WINDOW_COLOUR, size=18, opacity=0.7)
            .encode(
                x=_utc_x("ts", "time (UTC)", domain, format=fmt),
                y=alt.Y("prompt_tokens:Q", title="prompt tokens", axis=alt.Axis(format="~s")),
                tooltip=tooltip,
            )
        )
        height = 260
        subtitle = f"{len(accounts)} accounts: one dot per exposed response, by prompt size."
    return alt.layer(rules, marks).properties(
        width=_WIDTH,
        height=height,
        title=alt.Title(
            f"Exposed responses during the window ({exposed.height})",
            subtitle=subtitle,
            anchor="start",
        ),
    )


def size_chart(
    points: pl.DataFrame,
    capacity: pl.DataFrame,
    context_window: int,
    window_start: str,
    window_end: str,
) -> alt.LayerChart | alt.FacetChart:
    """Prompt size over time: requests (ts, prompt_tokens, band) coloured by band, the prefill
    capacity in force (nodes, start, end, tokens) as step lines, the context window as a rule.
    The gap between the two lines is where a prompt was exposed."""
    domain = [window_start, window_end]
    fmt = _time_format(_parse(window_start), _parse(window_end))
    present = [b for b in BAND_ORDER if b in set(points["band"].to_list())] or ["exposed"]
    colour = alt.Color(
        "band:N",
        title="band",
        scale=alt.Scale(domain=list(BAND_ORDER), range=list(BAND_COLOURS)),
        legend=alt.Legend(
            values=present,
            labelExpr=_label_expr(),
            orient="bottom",
            columns=3,
            labelLimit=300,
        ),
        sort=list(BAND_ORDER),
    )
    dots = (
        alt.Chart(_values(points))
        .mark_circle(size=22, opacity=0.75)
        .encode(
            x=_utc_x("ts", "time (UTC)", domain, format=fmt),
            y=alt.Y("prompt_tokens:Q", title="prompt tokens", axis=alt.Axis(format="~s")),
            color=colour,
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("ts:N", title="at (UTC)"),
                alt.Tooltip("account_id:N", title="account"),
                alt.Tooltip("prompt_tokens:Q", title="prompt tokens", format=","),
                alt.Tooltip("band:N"),
            ],
        )
    )
    steps = capacity_steps(capacity, window_start, window_end)
    cap_lines = (
        alt.Chart(_values(steps))
        .mark_line(interpolate="step-after", color="#111111", strokeWidth=2)
        .encode(
            x=_utc_x("at", "time (UTC)", domain, format=fmt),
            y=alt.Y("tokens:Q"),
            detail="nodes:N",
            tooltip=[
                alt.Tooltip("nodes:N", title="prefill nodes"),
                alt.Tooltip("tokens:Q", title="prefill pool capacity", format=","),
                alt.Tooltip("at:N", title="from (UTC)"),
            ],
        )
    )
    cap_text = (
        alt.Chart(_values(steps.filter(pl.col("first"))))
        .mark_text(align="left", dx=4, dy=-7, fontSize=11, color="#111111")
        .encode(
            x=_utc_x("at", "time (UTC)", domain, format=fmt),
            y=alt.Y("tokens:Q"),
            text="caption:N",
        )
    )
    spans = (
        steps.filter(pl.col("start") != "")
        .filter(pl.col("tokens") < context_window)
        .with_columns(ctx=pl.lit(context_window))
    )
    gap = (
        alt.Chart(_values(spans.select("start", "end", "tokens", "ctx", "nodes")))
        .mark_rect(color=WINDOW_COLOUR, opacity=0.08)
        .encode(
            x=_utc_x("start", "time (UTC)", domain, format=fmt),
            x2="end:T",
            y=alt.Y("tokens:Q"),
            y2="ctx:Q",
        )
    )
    ctx = pl.DataFrame({"tokens": [context_window], "at": [window_start]})
    ctx_rule = (
        alt.Chart(_values(ctx))
        .mark_rule(color="#393b79", strokeDash=[6, 4], strokeWidth=1.5)
        .encode(y="tokens:Q")
    )
    ctx_text = (
        alt.Chart(_values(ctx))
        .mark_text(align="left", dx=4, dy=-7, fontSize=11, color="#393b79")
        .encode(
            x=_utc_x("at", "time (UTC)", domain, format=fmt),
            y="tokens:Q",
            text=alt.value(f"context window {context_window:,} tokens"),
        )
    )
    return alt.layer(gap, dots, cap_lines, ctx_rule, cap_text, ctx_text).properties(
        width=_WIDTH,
        height=340,
        title=alt.Title(
            "Prompt size against the prefill capacity in force",
            subtitle=(
                "Solid step line: prefill KV pool capacity; dashed: context window. "
                "Answered prompts in the shaded gap between the two were exposed."
            ),
            anchor="start",
        ),
    )


def capacity_steps(capacity: pl.DataFrame, window_start: str, window_end: str) -> pl.DataFrame:
    """Step-line vertices (nodes, at, tokens, first, caption, start, end) of the prefill
    capacity entries (nodes, start, end, tokens), clipped to the window (an open end runs to
    the window end); a span's first vertex carries its start and end, the closing one ''."""
    rows: list[dict[str, object]] = []
    for nodes in sorted(set(capacity["nodes"].to_list())) if capacity.height else []:
        spans = capacity.filter(pl.col("nodes") == nodes).sort("start")
        first = True
        for span in spans.iter_rows(named=True):
            start = max(span["start"], window_start)
            end = min(span["end"] or window_end, window_end)
            if start >= end:
                continue
            caption = f"prefill capacity {span['tokens']:,}" + (
                f" (nodes {nodes})" if nodes != "*" else ""
            )
            vertex = {"nodes": nodes, "tokens": span["tokens"], "caption": caption}
            rows.append({**vertex, "at": start, "first": first, "start": start, "end": end})
            rows.append({**vertex, "at": end, "first": False, "start": "", "end": ""})
            first = False
    schema = {
        "nodes": pl.String,
        "at": pl.String,
        "tokens": pl.Int64,
        "first": pl.Boolean,
        "caption": pl.String,
        "start": pl.String,
        "end": pl.String,
    }
    return pl.DataFrame(rows, schema=schema)


def daily_chart(daily: pl.DataFrame) -> alt.LayerChart:
    """Requests per UTC day (day, series in exposed|baseline, requests): exposed responses
    as bars against the baseline long-context volume as a line, on independent axes."""
    bars = (
        alt.Chart(_values(daily.filter(pl.col("series") == "exposed")))
        .mark_bar(color=SERIES_COLOURS["exposed"], opacity=0.8)
        .encode(
            x=alt.X("day:O", title="day (UTC)", axis=alt.Axis(labelAngle=-45)),
            y=alt.Y(
                "requests:Q",
                title="exposed responses",
                axis=alt.Axis(titleColor=SERIES_COLOURS["exposed"]),
            ),
            tooltip=[alt.Tooltip("day:O"), alt.Tooltip("requests:Q", title="exposed")],
        )
    )
    line = (
        alt.Chart(_values(daily.filter(pl.col("series") == "baseline")))
        .mark_line(color=SERIES_COLOURS["baseline"], point=True)
        .encode(
            x=alt.X("day:O"),
            y=alt.Y(
                "requests:Q",
                title="baseline long-context requests",
                axis=alt.Axis(titleColor=SERIES_COLOURS["baseline"], orient="right"),
            ),
            tooltip=[alt.Tooltip("day:O"), alt.Tooltip("requests:Q", title="baseline")],
        )
    )
    return (
        alt.layer(bars, line)
        .resolve_scale(y="independent")
        .properties(
            width=_WIDTH - 60,
            height=220,
            title=alt.Title(
                "Exposed responses per day against normal long-context volume",
                subtitle="Red bars: exposed responses (left axis). Blue line: baseline (right).",
                anchor="start",
            ),
        )
    )


def hourly_chart(hourly: pl.DataFrame) -> alt.Chart:
    """Hour-of-day profile (hour 0-23, series in exposed|baseline, share 0-1): the share of
    each series' requests per UTC hour, side by side."""
    return (
        alt.Chart(_values(hourly))
        .mark_bar()
        .encode(
            x=alt.X("hour:O", title="hour of day (UTC)", axis=alt.Axis(labelAngle=0)),
            xOffset=alt.XOffset("series:N", sort=["exposed", "baseline"]),
            y=alt.Y("share:Q", title="share of the series' requests", axis=alt.Axis(format="%")),
            color=alt.Color(
                "series:N",
                title=None,
                sort=["exposed", "baseline"],
                scale=alt.Scale(
                    domain=["exposed", "baseline"],
                    range=[SERIES_COLOURS["exposed"], SERIES_COLOURS["baseline"]],
                ),
                legend=alt.Legend(orient="top"),
            ),
            tooltip=[
                alt.Tooltip("series:N"),
                alt.Tooltip("hour:O"),
                alt.Tooltip("share:Q", format=".1%"),
            ],
        )
        .properties(
            width=_WIDTH - 60,
            height=200,
            title=alt.Title(
                "Hour-of-day profile: exposed responses against baseline",
                subtitle="Each series normalised to its own total, so the shapes compare.",
                anchor="start",
            ),
        )
    )


def _time_format(lo: datetime, hi: datetime) -> str:
    """Axis label format for a time span: dates for long spans, hours within a few days."""
    return "%b %d" if (hi - lo).days >= 4 else "%b %d %H:%M"


def _label_expr() -> str:
    parts = [f"datum.label == '{band}' ? '{text}'" for band, text in BAND_LABELS.items()]
    return " : ".join(parts) + " : datum.label"


def _parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


COVERAGE_GAP_COLOUR = "#d62728"


def coverage_chart(cells: pl.DataFrame, window_start: str, window_end: str) -> alt.TopLevelMixin:
    """Coverage of the window by the logs, one lane per source or engine node: each UTC
    hour with records shaded by their count, each gap (an hour with none from a source that
    logs every hour) red. `cells`: lane, hour, end (ISO UTC), records, gap (bool)."""
    x = _utc_x("hour", "hour (UTC)", [window_start, window_end])
    lanes = cells["lane"].unique(maintain_order=True).to_list()
    y = alt.Y("lane:N", title=None, sort=lanes, axis=alt.Axis(labelLimit=260))
    tooltip = [
        alt.Tooltip("lane:N", title="log"),
        alt.Tooltip("hour:N", title="hour from"),
        alt.Tooltip("records:Q", title="records"),
    ]
    counts = (
        alt.Chart(_values(cells.filter(~pl.col("gap"))))
        .mark_rect()
        .encode(
            x=x,
            x2="end:T",
            y=y,
            color=alt.Color(
                "records:Q",
                title="records per hour",
                scale=alt.Scale(type="sqrt", scheme="blues"),
                legend=alt.Legend(orient="top"),
            ),
            tooltip=tooltip,
        )
    )
    gaps = (
        alt.Chart(_values(cells.filter(pl.col("gap"))))
        .mark_rect(color=COVERAGE_GAP_COLOUR)
        .encode(x=x, x2="end:T", y=y, tooltip=tooltip)
    )
    return alt.layer(counts, gaps).properties(
        width=_WIDTH - 260,
        height=max(40, 22 * len(lanes)),
        title=alt.Title(
            "Coverage of the window by the logs",
            subtitle="Shade: records per hour. Red: a gap (no record in an hour, from a source "
            "that logs every hour).",
            anchor="start",
        ),
    )
