"""Coverage: which hours of the window each log covers, and how much of the scope lacks a
field (docs: "Evidence and uncertainty").

`coverage(engine, case)` reads the case's requests once (`coverage/hours.sql`: per input and
UTC hour of the window, the records loaded and, of the case's models, those without a
prefill node, decode node, end time, completion tokens or status; per input, the records
outside the window and the first and last time) and, when engine logs were ingested, their
evidence lines per node and hour. Inputs are grouped by the case `[[source]]` they belong to
(a folder or glob of rotated files is one source), else named by their own path, relative to
the case folder; inputs no `[[source]]` names are out of scope (`scope.define_scope`). A
source whose median hourly count over the window is above zero has a *gap* at each hour of
the window with fewer records than `GAP_SHARE` of that median (scaled to the part of a first
or last hour inside the window): an outage, whole or partial. A source with more than half of
its loaded records outside the window is warned about (a time unit or origin read wrongly
puts nearly all of them there). For engine logs, the hours each node's evidence lines cover
(and its first and last line) are given. The summary also gives, of the in-scope requests,
the share without each field; a source whose mapping leaves status unmapped makes all its
requests "without status".
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import polars as pl

from ..case import Case
from ..engines import SQLEngine, TableMissing, needing
from ..formats import iso, iso_z, relative_path
from ..schema import REQUEST_FIELDS
from . import scope

# fields whose absence the summary reports, as the share of in-scope requests without one
MISSING_FIELDS = ("prefill_node", "decode_node", "status", "ts_end", "completion_tokens")
ENGINE_FORMATS = ("sglang", "vllm", "trtllm")  # engine logs: not gateway sources
GAP_SHARE = 0.05  # an hour below this share of its source's median hourly count is a gap
OUTSIDE_SHARE = 0.5  # a source with more of its records outside the window is warned about


@dataclass(frozen=True)
class InputInfo:
    """One request-log input: its path, its label (case source), the canonical fields its
    mapping provides (None when the database did not record them), its in-scope requests."""

    path: str
    label: str
    fields: tuple[str, ...] | None
    in_scope: int


@dataclass
class Coverage:
    """What `coverage` found; `to_summary()` is summary.json's `coverage`."""

    hours: list[str]
    sources: list[dict[str, Any]]
    gaps: list[dict[str, Any]]
    in_scope: int
    missing: dict[str, dict[str, Any]]
    engine_nodes: list[dict[str, Any]]
    inputs: list[InputInfo] = field(default_factory=list)
    loaded: int = 0

    def to_summary(self) -> dict[str, Any]:
        return {
            "hours": self.hours,
            "sources": self.sources,
            "gaps": self.gaps,
            "in_scope": self.in_scope,
            "loaded": self.loaded,
            "missing": self.missing,
            "engine_nodes": self.engine_nodes,
        }

    def warnings(self) -> list[str]:
        """A source with no record in the window, or with more than half of its loaded
        records outside it (naming the share and the source's first and last time)."""
        out = []
        for s in self.sources:
            label, loaded, outside = s["source"], s["loaded"], s["outside_window"]
            if not loaded:
                out.append(f"[[source]] {label}: no record in the window")
            elif outside > OUTSIDE_SHARE * loaded:
                out.append(
                    f"[[source]] {label}: "
                    + ("no record in the window; " if not s["total"] else "")
                    + f"{outside:,} of its {loaded:,} loaded record(s) ({outside / loaded:.1%}) "
                    f"lie outside the window, its records running from {s['first']} to "
                    f"{s['last']}: check the mapping's time unit, origin and zone against "
                    "the case's [window]"
                )
        return out


def window_hours(case: Case) -> list[datetime]:
    """The UTC hours of the window: from the hour holding its start to the one holding its
    last instant (the first and last may be partial)."""
    start = case.window_start.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    hours = []
    at = start
    while at < case.window_end:
        hours.append(at)
        at += timedelta(hours=1)
    return hours


def _hour_shares(case: Case, hours: list[datetime]) -> list[float]:
    """The part of each hour inside the window (1 but for a partial first or last hour)."""
    one = timedelta(hours=1)
    return [(min(h + one, case.window_end) - max(h, case.window_start)) / one for h in hours]


def inputs_frame(engine: SQLEngine) -> pl.DataFrame:
    """Every row of `inputs` (an empty frame without the table)."""
    try:
        with needing(engine, "inputs"):
            return engine.frame("coverage/inputs")
    except TableMissing:
        return pl.DataFrame(schema={"path": pl.String, "format": pl.String})


def coverage(engine: SQLEngine, case: Case) -> Coverage:
    """Coverage of the window by the logs (see the module doc)."""
    hours = window_hours(case)
    keys = [iso(h) for h in hours]
    frame = engine.frame(
        "coverage/hours", window_start=case.window_start, window_end=case.window_end
    )
    inputs = inputs_frame(engine)
    unnamed = set(scope.unnamed_inputs(engine))
    paths = sorted(
        set(frame["source"].to_list())
        | {
            str(r["path"])
            for r in inputs.iter_rows(named=True)
            if r.get("format") not in ENGINE_FORMATS and r["path"] not in unnamed
        }
    )
    labels = {p: _label(case, p) for p in paths}

    per_label: dict[str, dict[str, Any]] = {
        label: {"hours": {}, "outside": 0, "first": None, "last": None}
        for label in sorted(set(labels.values()))
    }
    sums = dict.fromkeys(("in_scope", *(f"no_{f}" for f in MISSING_FIELDS)), 0)
    in_scope_by_path: dict[str, int] = {}
    no_status_by_path: dict[str, int] = {}
    for row in frame.iter_rows(named=True):
        source = per_label[labels[row["source"]]]
        if row["hour"] is None:
            source["outside"] += int(row["records"])
        else:
            hour = _hour(row["hour"])
            source["hours"][hour] = source["hours"].get(hour, 0) + int(row["records"])
        for end, pick in (("first", min), ("last", max)):
            ts = row[f"{end}_ts"]
            source[end] = ts if source[end] is None else pick(source[end], ts)
        for key in sums:
            sums[key] += int(row[key])
        path = row["source"]
        in_scope_by_path[path] = in_scope_by_path.get(path, 0) + int(row["in_scope"])
        no_status_by_path[path] = no_status_by_path.get(path, 0) + int(row["no_status"])

    shares = _hour_shares(case, hours)
    sources = []
    gaps: list[dict[str, Any]] = []
    for label, found in per_label.items():
        records = [found["hours"].get(k, 0) for k in keys]
        median = _number(statistics.median(records)) if records else 0
        total = sum(records)
        sources.append(
            {
                "source": label,
                "records": records,
                "median_per_hour": median,
                "total": total,
                "loaded": total + found["outside"],
                "outside_window": found["outside"],
                "first": iso_z(found["first"]),
                "last": iso_z(found["last"]),
            }
        )
        if median > 0:
            for k, n, share in zip(keys, records, shares, strict=True):
                if n < GAP_SHARE * median * share:
                    expected = _number(round(median * share, 2))
                    gaps.append({"source": label, "hour": k, "records": n, "expected": expected})

    infos = [InputInfo(p, labels[p], _fields(inputs, p), in_scope_by_path.get(p, 0)) for p in paths]
    # a source that maps no status: all its requests (an older ingest stored the default)
    no_status = sum(
        i.in_scope
        if i.fields is not None and "status" not in i.fields
        else no_status_by_path.get(i.path, 0)
        for i in infos
    )
    in_scope = sums["in_scope"]
    missing = {
        f: _share(no_status if f == "status" else sums[f"no_{f}"], in_scope) for f in MISSING_FIELDS
    }
    return Coverage(
        hours=keys,
        sources=sources,
        gaps=gaps,
        in_scope=in_scope,
        missing=missing,
        engine_nodes=_engine_nodes(engine, case, keys),
        inputs=infos,
        loaded=sum(s["loaded"] for s in sources),
    )


def _hour(epoch_hour: int) -> str:
    """A whole number of hours since the epoch as the ISO UTC time the hour starts."""
    return iso(datetime.fromtimestamp(int(epoch_hour) * 3600, tz=UTC))


def _label(case: Case, path: str) -> str:
    return scope.source_label(case, path) or relative_path(path, case.folder)


def _fields(inputs: pl.DataFrame, path: str) -> tuple[str, ...] | None:
    """The fields recorded for the input at `path` (None when not recorded); when the path
    was ingested more than once, the fields all of its loads provide."""
    if "fields" not in inputs.columns:
        return None
    rows = inputs.filter(pl.col("path") == path)["fields"].to_list()
    if not rows or any(r is None for r in rows):
        return None
    common = set.intersection(*(set(str(r).split(",")) if r else set() for r in rows))
    return tuple(f.name for f in REQUEST_FIELDS if f.name in common)


def _share(n: int, total: int) -> dict[str, Any]:
    return {"requests": n, "share": round(n / total, 6) if total else None}


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def _engine_nodes(engine: SQLEngine, case: Case, keys: list[str]) -> list[dict[str, Any]]:
    """Per engine node: evidence lines per hour of the window, the hours with some, and its
    first and last evidence line at any time. An engine log's evidence lines are per
    request (of any size), so an hour without one is not a gap: quiet hours are common."""
    if not (engine.table_exists("engine_requests") and engine.table_exists("engine_aborts")):
        return []
    frame = engine.frame(
        "coverage/engine_hours", window_start=case.window_start, window_end=case.window_end
    )
    nodes: dict[tuple[str, str | None], dict[str, Any]] = {}
    for row in frame.iter_rows(named=True):
        node = nodes.setdefault(
            (str(row["node"]), row["role"]), {"lines": {}, "first": None, "last": None}
        )
        if row["hour"] is None:
            node["first"], node["last"] = iso_z(row["first_ts"]), iso_z(row["last_ts"])
        else:
            node["lines"][_hour(row["hour"])] = int(row["lines"])
    out = []
    for (name, role), node in sorted(nodes.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        lines = [node["lines"].get(k, 0) for k in keys]
        out.append(
            {
                "node": name,
                "role": role,
                "first": node["first"],
                "last": node["last"],
                "lines": lines,
                "hours_with_lines": sum(1 for n in lines if n),
            }
        )
    return out
