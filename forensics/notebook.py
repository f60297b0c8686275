"""The notebook-facing investigation: `open_case(...)` -> `Investigation`.

An `Investigation` holds one case file and its open case database and answers questions as
Polars frames (`summary`, `exposed`, `bands`, `excluded`, `data_owners`, `classification`,
`blast_radius`, `account`, `sql`) and Altair charts (`timeline_chart`, `size_chart`, `daily_chart`,
`hourly_chart`). It runs nothing of its own: ingest and the analysis are the steps of
`forensics.pipeline`, the charts are the report's (`forensics.render.figures`), so every
figure equals `forensics run` / `forensics demo` on the same case.

Where the database comes from (`open_case(case, db=...)`):
- `db=None`: the case's `[[source]]` logs are ingested into a fresh `case.duckdb` in a
  temporary folder, removed when the investigation is closed or garbage-collected. Pass a
  path to keep the database between sessions (large cases: put it on a roomy disk).
- `db` names a missing file, or a database without a `requests` table: the sources are
  ingested into it.
- `db` holds requests: they are reused as they are (add logs with `forensics ingest`). The
  analysis tables are reused too when they were computed from this case file (its effective
  content and its mappings), on the inputs the database holds now, with this exclusion
  setting (`forensics.integrity`); otherwise (another capacity, new logs, an older
  database) the analysis re-runs, and `warnings` says why. `Investigation.analyze()`
  re-runs it on demand.
  On a reused analysis, the first `summary()` re-runs the steps after the bands (data owners,
  classification, engine evidence), whose figures the database does not store; they are
  deterministic, so their tables come out unchanged.
"""

from __future__ import annotations

import html
import json
import shutil
import tempfile
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl

from . import pipeline, scratch
from .analysis import integrity, uncertainty
from .case import Case, load_case
from .engines import DuckDBEngine, queries
from .errors import ForensicsError, InputError
from .render import figures
from .render import report as report_page
from .render.headline import headline
from .schema import BAND_MEANINGS, BANDS

ANALYSIS_TABLES = (
    "bands",
    "data_owners",
    "classification_accounts",
    "classification_tests",
    "classification_profile",
    "exposure_range_requests",
    "blast_radius",
)


def open_case(
    case_path: str | Path,
    db: str | Path | None = None,
    *,
    exclusions: bool = True,
    memory_limit: str | None = None,
    allow_empty: bool = False,
) -> Investigation:
    """Open the case file `case_path` on database `db` (see the module doc for `db=None`),
    ingesting and analysing only what the database does not hold yet. `allow_empty` accepts
    a deliberate zero (a log none of whose records loads, no request in scope)."""
    return Investigation(
        case_path, db, exclusions=exclusions, memory_limit=memory_limit, allow_empty=allow_empty
    )


@dataclass
class AccountView:
    """One account in the case window: its requests with band and capacity in force, its
    classification evidence, the data owners of its exposed responses (`owners`), and its
    own requests other accounts' exposed responses may have read (`at_risk`)."""

    account_id: str
    requests: pl.DataFrame
    classification: pl.DataFrame
    owners: pl.DataFrame
    at_risk: pl.DataFrame

    @property
    def exposed(self) -> pl.DataFrame:
        """The account's exposed responses (its rows of band `exposed`)."""
        return self.requests.filter(pl.col("band") == "exposed")

    def band_counts(self) -> dict[str, int]:
        """The account's requests per band (every band, 0 where none)."""
        counts = dict.fromkeys(BANDS, 0)
        for band, n in self.requests.group_by("band").len().iter_rows():
            counts[band] = int(n)
        return counts

    def __repr__(self) -> str:
        return (
            f"AccountView({self.account_id!r}: {self.requests.height} request(s) in the window, "
            f"{self.exposed.height} exposed, {self.owners['owner_account_id'].n_unique()} data "
            f"owner account(s), {self.at_risk.height} own request(s) at risk)"
        )

    def _repr_html_(self) -> str:
        counts = [(b, n) for b, n in self.band_counts().items() if n]
        rows = [
            ("Requests in the window", f"{self.requests.height:,}"),
            ("Exposed responses", f"{self.exposed.height:,}"),
            ("Data owners of its exposed responses", _owner_text(self.owners)),
            ("Its requests possibly read by others", f"{self.at_risk.height:,}"),
        ]
        flagged = self.classification["flagged"].to_list() if self.classification.height else []
        rows.append(("Flagged by the usage classification", "yes" if any(flagged) else "no"))
        return (
            f'<div class="kv-forensics-account"><h4>Account {html.escape(self.account_id)}</h4>'
            + _table(["", ""], rows, header=False)
            + _table(["band", "requests"], [(b, f"{n:,}") for b, n in counts])
            + "</div>"
        )


class Investigation:
    """One case file on its open case database; see the module doc. Close it (or use it as a
    context manager) to release the database file."""

    def __init__(
        self,
        case_path: str | Path,
        db: str | Path | None = None,
        *,
        exclusions: bool = True,
        memory_limit: str | None = None,
        allow_empty: bool = False,
    ):
        self.case: Case = load_case(case_path)
        self.exclusions = exclusions
        self.allow_empty = allow_empty
        self.warnings: list[str] = []
        self._summary: dict[str, Any] | None = None
        self._tmp: Path | None = None
        if db is None:  # named with the pid: a killed kernel's folder is swept next time
            self._tmp = scratch.make_dir(tempfile.gettempdir(), "kv-forensics-")
            db = self._tmp / pipeline.CASE_DB
        self.db = Path(db)
        self.db.parent.mkdir(parents=True, exist_ok=True)
        self.engine = DuckDBEngine(self.db, memory_limit=memory_limit)
        self._finalizer = weakref.finalize(self, _release, self.engine, self._tmp)
        try:
            if not self.engine.table_exists("requests"):
                self._ingest()
            else:
                pipeline.require_sources(self.engine, self.case, self.db)
            stale = self._stale_reason()
            if stale is not None:
                if stale != _NO_ANALYSIS:
                    self.warnings.append(f"{stale}: the analysis was run again")
                self.analyze()
        except BaseException:
            self.close()
            raise

    # --- lifecycle ----------------------------------------------------------------------

    def close(self) -> None:
        """Close the database (and remove it when it was a temporary one)."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def __enter__(self) -> Investigation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def analyze(self) -> dict[str, Any]:
        """(Re)run the analysis (bands, data owners, classification) on the database; returns
        the summary. Needed after the case file or the database changed under this object."""
        self._summary = None
        summary, warnings = pipeline.analyze_case(
            self.engine, self.case, self.exclusions, self.allow_empty
        )
        self._summary = summary
        self.warnings.extend(w for w in warnings if w not in self.warnings)
        return self.summary()

    # --- figures ------------------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        """Every figure of summary.json, exactly as `forensics analyze` writes it."""
        if self._summary is None:
            self._summary = self._summarize()
        return json.loads(json.dumps(self._summary))

    def headline(self) -> str:
        """The figures a responder reads first, as `forensics demo` / `run` print them."""
        return headline(self.summary())

    def exposure_range(self, requests: bool = False) -> dict[str, Any] | pl.DataFrame:
        """How far the exposure count could be off on the evidence given: summary.json's
        `exposure_range` (min, likely, max, and the requests each category contributes per
        direction). With `requests`, the requests behind it (the `exposure_range_requests`
        table: category, direction, request_id, or source and row of a quarantined record,
        or bootstrap_room of an engine-only signature)."""
        if requests:
            self.summary()  # the table is written by the analysis of this summary
            return self.engine.read_table(uncertainty.RANGE_TABLE)
        return dict(self.summary()["exposure_range"])

    def coverage(self) -> dict[str, Any]:
        """summary.json's `coverage`: the hours of the window, per source the records per
        hour and the gaps, the share of in-scope requests without each field, and the hours
        each engine node's log covers."""
        return dict(self.summary()["coverage"])

    def assumptions(self) -> list[dict[str, Any]]:
        """summary.json's `assumptions`: each field a source leaves unmapped that the analysis
        fills with a default (the default, what it does, the sources, the requests in scope)."""
        return list(self.summary()["assumptions"])

    def coverage_chart(self) -> alt.TopLevelMixin:
        """The report's coverage chart: per source and engine node, records per hour and gaps."""
        return _shown(figures.coverage(self.summary(), self.case))

    def bands(self, band: str | None = None) -> pl.DataFrame:
        """Without `band`: requests per band (band, requests, meaning), every band listed.
        With `band`: that band's requests (rows of `bands`), oldest first."""
        if band is None:
            counts = self.summary()["bands"]
            return pl.DataFrame(
                {
                    "band": list(BANDS),
                    "requests": [counts.get(b, 0) for b in BANDS],
                    "meaning": [BAND_MEANINGS[b] for b in BANDS],
                },
                schema={"band": pl.String, "requests": pl.Int64, "meaning": pl.String},
            )
        if band not in BANDS:
            raise InputError(
                f"unknown band {band!r}",
                where="bands(band=...)",
                fix="use one of " + ", ".join(BANDS),
            )
        return self.engine.frame("notebook/band_rows", band=band)

    def exposed(self) -> pl.DataFrame:
        """Every exposed response (band `exposed`) with capacity in force, oldest first."""
        return self.bands("exposed")

    def affected_accounts(self) -> pl.DataFrame:
        """Affected accounts, busiest first: exposed responses, first and last exposed time."""
        return self.engine.frame("notebook/affected_accounts")

    def excluded(self) -> pl.DataFrame:
        """Per excluded account: reason, requests in band `excluded`, requests in the window
        (empty when exclusions are off)."""
        return report_page.excluded_accounts(self.engine)

    def data_owners(self, per_account: bool = False) -> pl.DataFrame:
        """Every (exposed request, data-owner request) pair; with `per_account`, one row per
        owner account (requests at risk, exposures that could have read them, first/last)."""
        if per_account:
            return report_page.owner_accounts(self.engine)
        return self.engine.frame("notebook/data_owners")

    def classification(self) -> pl.DataFrame:
        """Per-account usage-classification evidence (classification_accounts), flagged first."""
        frame = self.engine.read_table("classification_accounts")
        return frame.sort(["flagged", "account_id"], descending=[True, False])

    def classification_tests(self) -> pl.DataFrame:
        """The classification's tests: statistic, p-value and detail of each."""
        return self.engine.read_table("classification_tests")

    def blast_radius(self, per_node: bool = False) -> pl.DataFrame:
        """Every model of the logs against its prefill pool, over their whole span: summary.json's
        `blast_radius` (one row per model); with `per_node`, per model and prefill node as
        blast_radius.csv holds it (the `blast_radius` table, times as instants; no node first)."""
        rows = self.summary()["blast_radius"]
        if per_node:
            frame = self.engine.read_table("blast_radius")
            return frame.sort(["model", "prefill_node"], nulls_last=False)
        return pl.DataFrame(
            rows,
            schema={
                "model": pl.String,
                "requests": pl.Int64,
                "over_capacity": pl.Int64,
                "excluded": pl.Int64,
                "unknown_capacity": pl.Int64,
                "first_over": pl.String,
                "last_over": pl.String,
                "in_window": pl.Int64,
                "outside_window": pl.Int64,
            },
        )

    def account(self, account_id: str) -> AccountView:
        """One account's requests in the window, classification evidence and data owners."""
        requests = self.engine.frame("notebook/account_requests", account_id=account_id)
        if requests.height == 0:
            raise InputError(
                f"account {account_id!r} has no request of the case's models in the window",
                where=str(self.case.path),
                fix="pick an account from .affected_accounts() or .bands(band=...)",
            )
        return AccountView(
            account_id=account_id,
            requests=requests,
            classification=self.engine.frame(
                "notebook/account_classification", account_id=account_id
            ),
            owners=self.engine.frame("notebook/account_owners", account_id=account_id),
            at_risk=self.engine.frame("notebook/account_at_risk", account_id=account_id),
        )

    def sql(self, text: str, **params: Any) -> pl.DataFrame:
        """An ad-hoc query (DuckDB dialect) on the case database as a Polars frame; values are
        bound through `$name` parameters (`sql("... WHERE account_id = $acct", acct="a")`)."""
        wanted = queries.parameters(text)
        missing = [n for n in wanted if n not in params]
        unused = sorted(set(params) - set(wanted))
        if missing or unused:
            what = (
                f"parameters {missing} are not given"
                if missing
                else f"parameters {unused} are not used by the query"
            )
            raise InputError(
                what, where="sql(...)", fix="refer to each value as $name and pass name=value"
            )
        return self.engine.sql_frame(text, **params)

    # --- charts -------------------------------------------------------------------------

    def timeline_chart(self) -> alt.TopLevelMixin:
        """The incident timeline of the report: case events, window, every exposed response."""
        return _shown(figures.timeline(self.engine, self.case))

    def size_chart(self) -> alt.TopLevelMixin:
        """Prompt size against the prefill capacity in force (the report's chart)."""
        return _shown(figures.size(self.engine, self.case))

    def daily_chart(self) -> alt.TopLevelMixin:
        """Exposed responses per day against the baseline long-context volume."""
        return _shown(figures.daily(self.engine))

    def hourly_chart(self) -> alt.TopLevelMixin:
        """Hour-of-day profile of exposed responses against the baseline."""
        return _shown(figures.hourly(self.engine))

    # --- display ------------------------------------------------------------------------

    def __repr__(self) -> str:
        if self.closed:
            return f"<Investigation {self.case.name!r} (closed)>"
        s = self.summary()
        return (
            f"<Investigation {s['name']!r}: {s['exposure_count']} exposed, "
            f"{s['affected_accounts']} affected account(s), verdict {s['verdict']}; "
            f"db {self.db}>"
        )

    def _repr_html_(self) -> str:
        if self.closed:
            return f"<p>Investigation {html.escape(self.case.name)} (closed)</p>"
        s = self.summary()
        excluded = s.get("excluded_by_reason") or {}
        excluded_text = (
            ", ".join(f"{r} {n:,}" for r, n in sorted(excluded.items()))
            if s["exclusions"]["applied"]
            else "exclusions off"
        )
        flagged = ", ".join(s.get("flagged_accounts") or []) or "none"
        rng = s.get("exposure_range") or {}
        headline = [
            (
                "Exposed responses",
                f"{s['exposure_count']:,}"
                + (f" (range {rng['min']:,}-{rng['max']:,})" if rng else ""),
            ),
            ("Affected accounts", f"{s['affected_accounts']:,}"),
            ("Excluded (by reason)", excluded_text or "none"),
            ("Data owners", _owners_summary(s.get("data_owners"))),
            ("Verdict", f"{s['verdict']} (flagged: {flagged})"),
        ]
        ingest = s.get("ingest") or {}
        bands = [(b, f"{s['bands'].get(b, 0):,}", BAND_MEANINGS[b]) for b in BANDS]
        window = f"{s['window']['start']} to {s['window']['end']}"
        parts = [
            '<div class="kv-forensics-case">',
            f"<h3>{html.escape(s['name'])}</h3>",
            f"<p>Case file {html.escape(str(self.case.path))}; window {html.escape(window)}; "
            f"database {html.escape(str(self.db))}</p>",
            _table(["", ""], headline, header=False),
            _table(["band", "requests", "meaning"], bands),
        ]
        if s["exclusions"]["applied"] and s["exclusions"]["entries"]:
            rows = [
                (
                    e["reason"],
                    ", ".join(e["accounts"]) or "—",
                    f"{excluded.get(e['reason'], 0):,}",
                )
                for e in s["exclusions"]["entries"]
            ]
            parts.append(_table(["exclusion", "accounts", "requests set aside"], rows))
        parts.append(
            "<p>Ingest: "
            + ", ".join(f"{k.replace('_', ' ')} {int(ingest.get(k, 0)):,}" for k in _INGEST)
            + "</p></div>"
        )
        return "".join(parts)

    # --- internals ----------------------------------------------------------------------

    def _ingest(self) -> None:
        """Ingest every [[source]] of the case into the (new) database."""
        if not self.case.sources:
            raise ForensicsError(
                "the case database holds no requests and the case file names no [[source]]",
                where=str(self.case.path),
                fix="add [[source]] entries, or pass db= a database that forensics ingest loaded",
            )
        loaded = pipeline.ingest_sources(self.engine, self.case, allow_empty=self.allow_empty)
        self.warnings.extend(loaded.warnings)

    def _stale_reason(self) -> str | None:
        """Why the stored analysis cannot be reused (None when it can): a table is missing,
        or it was computed from another case file, other inputs or exclusion setting."""
        if not all(self.engine.table_exists(t) for t in ANALYSIS_TABLES):
            return _NO_ANALYSIS
        return integrity.stale_reason(self.engine, self.case, self.exclusions)

    def _summarize(self) -> dict[str, Any]:
        """The summary from the current `bands`: the analyze steps after the bands, in order."""
        summary, warnings = pipeline.summarize_stored(self.engine, self.case, self.exclusions)
        self.warnings.extend(w for w in warnings if w not in self.warnings)
        return summary


_INGEST = ("rows_read", "rows_loaded", "duplicates", "quarantined")
_NO_ANALYSIS = "no analysis tables"


def _shown(figure: figures.Figure) -> alt.TopLevelMixin:
    """A figure's chart, drawn offline in Jupyter; InputError when it cannot be drawn."""
    if figure.chart is None or figure.missing:
        raise InputError(figure.missing, fix="run the analysis first (Investigation.analyze())")
    figures.use_offline_renderer()
    return figure.chart


def _release(engine: DuckDBEngine, tmp: Path | None) -> None:
    """Close the engine and remove the temporary folder (if any); safe to call twice."""
    engine.close()
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)


def _owners_summary(info: dict[str, Any] | None) -> str:
    if not info:
        return "not available"
    text = (
        f"{info.get('accounts', 0):,} account(s), {info.get('requests', 0):,} request(s) "
        f"({info.get('policy')}, {info.get('status')})"
    )
    return text + (f": {info['reason']}" if info.get("reason") else "")


def _owner_text(frame: pl.DataFrame) -> str:
    if frame.height == 0:
        return "none"
    return (
        f"{frame['owner_account_id'].n_unique():,} account(s), "
        f"{frame['owner_request_id'].n_unique():,} request(s)"
    )


def _table(columns: list[str], rows: Sequence[Sequence[Any]], header: bool = True) -> str:
    """A small HTML table of display strings (escaped)."""
    head = (
        "<thead><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in columns) + "</tr></thead>"
        if header
        else ""
    )
    body = "".join(
        "<tr>"
        + "".join(
            f'<td style="text-align:{"right" if i and _numeric(v) else "left"}">'
            f"{html.escape(str(v))}</td>"
            for i, v in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table>{head}<tbody>{body}</tbody></table>"


def _numeric(value: str) -> bool:
    return value.replace(",", "").isdigit()


__all__ = ["AccountView", "Investigation", "open_case"]
