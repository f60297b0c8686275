"""Altair chart builders: pure functions from small Polars frames to `alt.Chart` objects.

Every time value arrives as an ISO 8601 UTC string (`...Z`) and every axis uses a UTC scale,
so a chart looks the same in any browser time zone and serialises to the same bytes. Rows are
sorted by the caller; no chart uses selections, so no generated parameter names appear.
Used by the report and the notebook through `forensics.render.figures`, which chooses between
the one-mark-per-row charts and the binned ones (`timeline_binned_chart`,
`size_density_chart`) that draw counts when there are too many rows to draw each.

A chart's rows are never inside its Altair objects: each layer names its rows (`ChartData`)
and the top-level chart carries them once, as `datasets`. So Altair neither validates the
rows one by one against its schema nor copies them as layers are composed, and rows two
layers draw are embedded once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, TypeVar

import altair as alt
import polars as pl

from ..formats import iso, printable, short
from ..schema import BAND_MEANINGS, BANDS

# the bands as drawn and listed: the exposure first, requests that fit the pool last
BAND_ORDER = (*BANDS[1:], BANDS[0])
BAND_COLOURS = ("#d62728", "#ff7f0e", "#7f7f7f", "#393b79", "#bcbd22", "#9ecae1")
BAND_LABELS = {band: BAND_MEANINGS[band] for band in BAND_ORDER}
SERIES_COLOURS = {"exposed": "#d62728", "baseline": "#1f77b4"}
WINDOW_COLOUR = "#d62728"
MAX_ACCOUNT_LANES = 40
BIN_UNITS = {"hour": timedelta(hours=1), "day": timedelta(days=1)}
COUNT_COLOURS = ("#fcae91", "#67000d")  # fewest to most, in the binned charts
_WIDTH = 780

TopLevel = TypeVar("TopLevel", bound=alt.TopLevelMixin)


class ChartData:
    """The rows of one chart, by the content-hash name Altair itself would give them: each
    layer refers to its rows with `data(frame)` and `attach` puts every row set once into the
    top-level chart's `datasets`. Text values are drawn as `_label` gives them (a very long
    one cut, an id with a control character drawn as an escape)."""

    def __init__(self) -> None:
        self.sets: dict[str, list[dict[str, Any]]] = {}

    def __call__(self, frame: pl.DataFrame) -> alt.NamedData:
        rows = [
            {k: _label(v) if isinstance(v, str) else v for k, v in row.items()}
            for row in frame.iter_rows(named=True)
        ]
        name = dataset_name(rows)
        self.sets.setdefault(name, rows)
        return alt.NamedData(name=name)

    def attach(self, chart: TopLevel) -> TopLevel:
        """`chart` carrying the rows (set as an attribute: not validated, not copied)."""
        setattr(chart, "datasets", dict(sorted(self.sets.items())))  # noqa: B010 (untyped)
        return chart


def _label(text: str) -> str:
    """A text value as a chart draws it: `short` (a very long id cut, the CSVs keep it whole),
    then `printable` on one line."""
    return printable(short(text), one_line=True)


def dataset_name(rows: list[dict[str, Any]]) -> str:
    """The name Altair gives inline rows when it moves them to `datasets` (a content hash),
    so a chart's spec is the same as when Altair held the rows itself."""
    if rows == [{}]:
        return "empty"
    text = json.dumps(rows, sort_keys=True, default=str)
    return "data-" + hashlib.sha256(text.encode()).hexdigest()[:32]


def _utc_x(field: str, title: str | None, domain: list[str] | None = None, **axis: Any) -> alt.X:
    scale = alt.Scale(type="utc", domain=domain) if domain else alt.Scale(type="utc")
    return alt.X(
        f"{field}:T",
        title=title,
        scale=scale,
        axis=alt.Axis(labelOverlap=True, **axis),
    )


def _window_rect(
    data: ChartData, start: str, end: str, x: alt.X, label: str = "exposure window"
) -> alt.Chart:
    frame = pl.DataFrame({"start": [start], "end": [end], "what": [label]})
    return (
        alt.Chart(data(frame))
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
    shaded and every exposed response (ts, account_id, prompt_tokens) as a tick; below, the
    window zoomed in with one lane per affected account (or prompt size when there are too
    many accounts). Both panels draw the responses from one dataset."""
    data = ChartData()
    rows = data(exposed)
    n = exposed.height

    def ticks(x: alt.X, lo: alt.YDatum, hi: alt.Y2Datum) -> alt.Chart:
        return (
            alt.Chart(rows)
            .mark_rule(color=WINDOW_COLOUR, strokeWidth=1.2, opacity=0.8)
            .encode(
                x=x,
                y=lo,
                y2=hi,
                tooltip=[
                    alt.Tooltip("ts:N", title="exposed response at (UTC)"),
                    alt.Tooltip("account_id:N", title="account"),
                ],
            )
        )

    label = f"Exposed responses ({n:,}), one red line each"
    overview = _overview(data, events, window_start, window_end, ticks, "ts", label)
    lanes = _exposure_lanes(data, rows, exposed, events, window_start, window_end)
    return data.attach(alt.vconcat(overview, lanes))


def timeline_binned_chart(
    events: pl.DataFrame,
    bins: pl.DataFrame,
    unit: str,
    responses: int,
    accounts: int,
    window_start: str,
    window_end: str,
) -> alt.VConcatChart:
    """The incident timeline when there are too many exposed responses to draw each: the
    `responses` exposed responses of `accounts` accounts counted per `unit` (hour or day) in
    `bins` (start, end, responses and either account_id, smallest, largest when there are at
    most MAX_ACCOUNT_LANES accounts, or prompt_from, prompt_to, prompts otherwise). Above,
    the count per bin in the exposure lane (darker = more); below, the count per account
    lane and bin, or per bin and prompt-size band. Hovering a cell shows its exact count."""
    data = ChartData()
    rows = data(bins)
    tooltip = [
        alt.Tooltip("start:N", title="from (UTC)"),
        alt.Tooltip("end:N", title="until (UTC)"),
        alt.Tooltip("responses:Q", title="exposed responses", format=","),
    ]

    def counts(x: alt.X, lo: alt.YDatum, hi: alt.Y2Datum) -> alt.Chart:
        return (
            alt.Chart(rows)
            .transform_aggregate(responses="sum(responses)", groupby=["start", "end"])
            .mark_rect(color=WINDOW_COLOUR)
            .encode(
                x=x,
                x2="end:T",
                y=lo,
                y2=hi,
                opacity=alt.Opacity(
                    "responses:Q", scale=alt.Scale(type="log", range=[0.3, 1.0]), legend=None
                ),
                tooltip=tooltip,
            )
        )

    label = f"Exposed responses ({responses:,}), counted per {unit}: darker red = more"
    overview = _overview(data, events, window_start, window_end, counts, "start", label)
    domain = [window_start, window_end]
    fmt = _time_format(_parse(window_start), _parse(window_end))
    x = _utc_x("start", "time (UTC)", domain, format=fmt)
    colour = alt.Color(
        "responses:Q",
        title=f"exposed responses per {unit}",
        scale=alt.Scale(type="log", range=list(COUNT_COLOURS)),
        legend=alt.Legend(orient="bottom", format=","),
    )
    if "account_id" in bins.columns:
        ids = bins["account_id"].unique().sort().to_list()
        lanes = [_label(a) for a in ids]
        marks = (
            alt.Chart(rows)
            .mark_rect()
            .encode(
                x=x,
                x2="end:T",
                y=alt.Y("account_id:N", title="affected account", sort=lanes),
                color=colour,
                tooltip=[
                    alt.Tooltip("account_id:N", title="account"),
                    *tooltip,
                    alt.Tooltip("smallest:Q", title="smallest prompt (tokens)", format=","),
                    alt.Tooltip("largest:Q", title="largest prompt (tokens)", format=","),
                ],
            )
        )
        height = max(80, 16 * max(1, len(lanes)))
        subtitle = (
            f"One lane per affected account; exposed responses counted per {unit} "
            "(darker = more, hover for the count). Dashed: case events in the window."
        )
    else:
        marks = (
            alt.Chart(rows)
            .mark_rect()
            .encode(
                x=x,
                x2="end:T",
                y=alt.Y(
                    "prompt_from:Q",
                    title="prompt tokens",
                    axis=alt.Axis(format="~s"),
                    scale=alt.Scale(zero=False),
                ),
                y2="prompt_to:Q",
                color=colour,
                tooltip=[*tooltip, alt.Tooltip("prompts:N", title="prompt tokens")],
            )
        )
        height = 260
        subtitle = (
            f"{accounts} accounts: exposed responses counted per {unit} and prompt-size band "
            "(darker = more, hover for the count)."
        )
    panel = alt.layer(_event_rules(data, events, window_start, window_end), marks).properties(
        width=_WIDTH,
        height=height,
        title=alt.Title(
            f"Exposed responses during the window ({responses:,})",
            subtitle=subtitle,
            anchor="start",
        ),
    )
    return data.attach(alt.vconcat(overview, panel))


# draws the exposed responses in the overview's lane: (x, lane top, lane bottom) -> layer
Exposure = Callable[[alt.X, alt.YDatum, alt.Y2Datum], alt.Chart]


def _overview(
    data: ChartData,
    events: pl.DataFrame,
    window_start: str,
    window_end: str,
    exposure: Exposure,
    at: str,
    label: str,
) -> alt.LayerChart | alt.FacetChart:
    """The whole story: the case events as dots with their labels, the exposure window
    shaded, and in a lane of its own the exposed responses as `exposure(x, lo, hi)` draws
    them (`at`: the field of their time), under `label`."""
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
        alt.Chart(data(ev))
        .mark_point(filled=True, color="#333333", size=40)
        .encode(
            x=x("at"),
            y=y("lane"),
            tooltip=[alt.Tooltip("at:N", title="at (UTC)"), alt.Tooltip("label:N", title="event")],
        )
    )
    left = (
        alt.Chart(data(ev.filter(~pl.col("right"))))
        .mark_text(align="left", dx=7, fontSize=11, color="#222222")
        .encode(x=x("at"), y=y("lane"), text="text:N")
    )
    right = (
        alt.Chart(data(ev.filter(pl.col("right"))))
        .mark_text(align="right", dx=-7, fontSize=11, color="#222222")
        .encode(x=x("at"), y=y("lane"), text="text:N")
    )
    marks = exposure(
        x(at),
        alt.YDatum(exposure_lane - 0.35, type="quantitative", scale=y_scale, axis=None),
        alt.Y2Datum(exposure_lane + 0.35),
    )
    tick_label = (
        alt.Chart(data(pl.DataFrame({"at": [window_start], "lane": [exposure_lane - 0.75]})))
        .mark_text(align="left", dx=2, fontSize=11, color=WINDOW_COLOUR, fontWeight="bold")
        .encode(x=x("at"), y=y("lane"), text=alt.value(label))
    )
    return alt.layer(
        _window_rect(data, window_start, window_end, x("start")),
        marks,
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


def _event_rules(
    data: ChartData, events: pl.DataFrame, window_start: str, window_end: str
) -> alt.Chart:
    """The case events inside the window as dashed rules (the zoomed-in panel)."""
    domain = [window_start, window_end]
    fmt = _time_format(_parse(window_start), _parse(window_end))
    inside = events.filter((pl.col("at") >= window_start) & (pl.col("at") <= window_end))
    return (
        alt.Chart(data(inside.sort(["at", "label"])))
        .mark_rule(color="#9e9e9e", strokeDash=[3, 3])
        .encode(
            x=_utc_x("at", "time (UTC)", domain, format=fmt),
            tooltip=[alt.Tooltip("at:N", title="at (UTC)"), alt.Tooltip("label:N", title="event")],
        )
    )


def _exposure_lanes(
    data: ChartData,
    rows: alt.NamedData,
    exposed: pl.DataFrame,
    events: pl.DataFrame,
    window_start: str,
    window_end: str,
) -> alt.LayerChart | alt.FacetChart:
    """The exposure window zoomed in: each exposed response (`rows`, from `exposed`: ts,
    account_id, prompt_tokens) as a tick in its account's lane, event times as dashed rules;
    with no exposed response, a "no data" line says so."""
    domain = [window_start, window_end]
    fmt = _time_format(_parse(window_start), _parse(window_end))
    rules = _event_rules(data, events, window_start, window_end)
    ids = exposed["account_id"].unique().sort().to_list() if exposed.height else []
    # the lane order names the ids as ChartData draws them (Vega sorts by an expression)
    accounts = [_label(a) for a in ids]
    tooltip = [
        alt.Tooltip("ts:N", title="at (UTC)"),
        alt.Tooltip("account_id:N", title="account"),
        alt.Tooltip("prompt_tokens:Q", title="prompt tokens", format=","),
    ]
    if len(accounts) <= MAX_ACCOUNT_LANES:
        marks = (
            alt.Chart(rows)
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
            alt.Chart(rows)
            .mark_circle(color=WINDOW_COLOUR, size=18, opacity=0.7)
            .encode(
                x=_utc_x("ts", "time (UTC)", domain, format=fmt),
                y=alt.Y("prompt_tokens:Q", title="prompt tokens", axis=alt.Axis(format="~s")),
                tooltip=tooltip,
            )
        )
        height = 260
        subtitle = f"{len(accounts)} accounts: one dot per exposed response, by prompt size."
    layers = [rules, marks]
    if not exposed.height:
        layers.append(_no_data(data, "no exposed response in the window", height))
    return alt.layer(*layers).properties(
        width=_WIDTH,
        height=height,
        title=alt.Title(
            f"Exposed responses during the window ({exposed.height:,})",
            subtitle=subtitle,
            anchor="start",
        ),
    )


def _no_data(data: ChartData, reason: str, height: int) -> alt.Chart:
    """A centred "no data" line with its reason, for a panel with nothing to draw."""
    frame = pl.DataFrame({"text": [f"No data: {reason}."]})
    return (
        alt.Chart(data(frame))
        .mark_text(fontSize=13, color="#5f6368", fontStyle="italic")
        .encode(text="text:N", x=alt.value(_WIDTH / 2), y=alt.value(height / 2))
    )


def no_data_chart(title: str, reason: str) -> alt.LayerChart | alt.FacetChart:
    """A chart with nothing to draw: its title and a "no data" line saying why (notebooks
    show this; the report says it in the page)."""
    data = ChartData()
    return data.attach(
        alt.layer(_no_data(data, reason, 60)).properties(
            width=_WIDTH, height=60, title=alt.Title(title, anchor="start")
        )
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
    data = ChartData()
    domain = [window_start, window_end]
    fmt = _time_format(_parse(window_start), _parse(window_end))
    dots = (
        alt.Chart(data(points))
        .mark_circle(size=22, opacity=0.75)
        .encode(
            x=_utc_x("ts", "time (UTC)", domain, format=fmt),
            y=alt.Y("prompt_tokens:Q", title="prompt tokens", axis=alt.Axis(format="~s")),
            color=_band_colour(points),
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("ts:N", title="at (UTC)"),
                alt.Tooltip("account_id:N", title="account"),
                alt.Tooltip("prompt_tokens:Q", title="prompt tokens", format=","),
                alt.Tooltip("band:N"),
            ],
        )
    )
    return _size_layers(data, dots, capacity, context_window, window_start, window_end, False)


def size_density_chart(
    cells: pl.DataFrame,
    unit: str,
    capacity: pl.DataFrame,
    context_window: int,
    window_start: str,
    window_end: str,
) -> alt.LayerChart | alt.FacetChart:
    """`size_chart` when there are too many requests to draw each: requests counted per band,
    `unit` (hour or day) and prompt-size band (cells: start, end, prompt_from, prompt_to,
    prompts, band, requests), one rectangle per cell in its band's colour (more opaque =
    more); the capacity and context-window lines and their labels drawn over them."""
    data = ChartData()
    domain = [window_start, window_end]
    fmt = _time_format(_parse(window_start), _parse(window_end))
    rects = (
        alt.Chart(data(cells))
        .mark_rect()
        .encode(
            x=_utc_x("start", "time (UTC)", domain, format=fmt),
            x2="end:T",
            y=alt.Y("prompt_from:Q", title="prompt tokens", axis=alt.Axis(format="~s")),
            y2="prompt_to:Q",
            color=_band_colour(cells),
            opacity=alt.Opacity(
                "requests:Q", scale=alt.Scale(type="log", range=[0.35, 1.0]), legend=None
            ),
            tooltip=[
                alt.Tooltip("band:N"),
                alt.Tooltip("start:N", title="from (UTC)"),
                alt.Tooltip("end:N", title="until (UTC)"),
                alt.Tooltip("prompts:N", title="prompt tokens"),
                alt.Tooltip("requests:Q", title="requests", format=","),
            ],
        )
    )
    return _size_layers(data, rects, capacity, context_window, window_start, window_end, True)


def _band_colour(frame: pl.DataFrame) -> alt.Color:
    """Colour by band, every band in its fixed colour; the legend lists the bands present."""
    present = [b for b in BAND_ORDER if b in set(frame["band"].to_list())] or ["exposed"]
    return alt.Color(
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


def _size_layers(
    data: ChartData,
    requests: alt.Chart,
    capacity: pl.DataFrame,
    context_window: int,
    window_start: str,
    window_end: str,
    halo: bool,
) -> alt.LayerChart | alt.FacetChart:
    """The prompt-size chart around its `requests` layer: the shaded gap between capacity and
    context window under it; the capacity step lines, the context-window rule and their
    labels over it (with a white halo under each label when `halo`, so a label stays
    readable over dense cells)."""
    domain = [window_start, window_end]
    fmt = _time_format(_parse(window_start), _parse(window_end))
    steps = capacity_steps(capacity, window_start, window_end)
    cap_lines = (
        alt.Chart(data(steps))
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

    def cap_text(**style: Any) -> alt.Chart:
        return (
            alt.Chart(data(steps.filter(pl.col("first"))))
            .mark_text(align="left", dx=4, dy=-7, fontSize=11, **style)
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
        alt.Chart(data(spans.select("start", "end", "tokens", "ctx", "nodes")))
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
        alt.Chart(data(ctx))
        .mark_rule(color="#393b79", strokeDash=[6, 4], strokeWidth=1.5)
        .encode(y="tokens:Q")
    )

    def ctx_text(**style: Any) -> alt.Chart:
        return (
            alt.Chart(data(ctx))
            .mark_text(align="left", dx=4, dy=-7, fontSize=11, **style)
            .encode(
                x=_utc_x("at", "time (UTC)", domain, format=fmt),
                y="tokens:Q",
                text=alt.value(f"context window {context_window:,} tokens"),
            )
        )

    labels = [cap_text(color="#111111"), ctx_text(color="#393b79")]
    if halo:
        white = {"color": "#ffffff", "stroke": "#ffffff", "strokeWidth": 4, "strokeJoin": "round"}
        labels = [cap_text(**white), ctx_text(**white), *labels]
    chart = alt.layer(gap, requests, cap_lines, ctx_rule, *labels).properties(
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
    return data.attach(chart)


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
    data = ChartData()
    bars = (
        alt.Chart(data(daily.filter(pl.col("series") == "exposed")))
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
        alt.Chart(data(daily.filter(pl.col("series") == "baseline")))
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
    return data.attach(
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
    data = ChartData()
    return data.attach(
        alt.Chart(data(hourly))
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


def pool_usage_chart(frame: pl.DataFrame, window_start: str, window_end: str) -> alt.Chart:
    """KV pool usage (percent) per engine node over the window, as the engine's periodic
    stats lines state it. `frame`: node, ts (ISO UTC), usage_pct."""
    data = ChartData()
    return data.attach(
        alt.Chart(data(frame))
        .mark_line(point=True)
        .encode(
            x=_utc_x("ts", "time (UTC)", [window_start, window_end], format="%b %d %H:%M"),
            y=alt.Y("usage_pct:Q", title="KV pool usage (%)", scale=alt.Scale(domain=[0, 100])),
            color=alt.Color("node:N", title="node", legend=alt.Legend(orient="top")),
            tooltip=[
                alt.Tooltip("node:N"),
                alt.Tooltip("ts:N", title="at"),
                alt.Tooltip("usage_pct:Q", title="usage %", format=".1f"),
            ],
        )
        .properties(
            width=_WIDTH - 60,
            height=160,
            title=alt.Title(
                "KV pool usage by engine node",
                subtitle="From the engines' periodic stats lines (KV cache usage: P%).",
                anchor="start",
            ),
        )
    )


def coverage_chart(cells: pl.DataFrame, window_start: str, window_end: str) -> alt.TopLevelMixin:
    """Coverage of the window by the logs, one lane per source or engine node: each UTC
    hour with records shaded by their count, each gap (an hour with none, or fewer than 5% of
    its source's median hourly count) red. `cells`: lane, hour, end (ISO UTC), records, gap
    (bool)."""
    data = ChartData()
    x = _utc_x("hour", "hour (UTC)", [window_start, window_end])
    lanes = cells["lane"].unique(maintain_order=True).to_list()
    y = alt.Y("lane:N", title=None, sort=lanes, axis=alt.Axis(labelLimit=260))
    tooltip = [
        alt.Tooltip("lane:N", title="log"),
        alt.Tooltip("hour:N", title="hour from"),
        alt.Tooltip("records:Q", title="records"),
    ]
    counts = (
        alt.Chart(data(cells.filter(~pl.col("gap"))))
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
        alt.Chart(data(cells.filter(pl.col("gap"))))
        .mark_rect(color=COVERAGE_GAP_COLOUR)
        .encode(x=x, x2="end:T", y=y, tooltip=tooltip)
    )
    return data.attach(
        alt.layer(counts, gaps).properties(
            width=_WIDTH - 260,
            height=max(40, 22 * len(lanes)),
            title=alt.Title(
                "Coverage of the window by the logs",
                subtitle="Shade: records per hour. Red: a gap (an hour with no record, or fewer "
                "than 5% of the source's median per hour).",
                anchor="start",
            ),
        )
    )
