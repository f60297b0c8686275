"""The load transaction: every prepared input of one ingest call is loaded, its records
accounted for, in one transaction (a failure leaves the database as it was).

Per input (`_one`): each record's mapped request_id is hashed once (`ids.sql`); ids that
repeat in the input or are already in `requests` (`keys.sql`) have their records typed and
compared by content first (`classify.sql`); then every other valid record and the first of
each repeated id are loaded straight from the source in one pass (`load_direct.sql`); records
left over are found (`rest.sql`) and typed again for their reason. rows_read = rows_loaded +
duplicates + quarantined, or the load raises (a bug, never the input's fault).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb

from .. import schema
from ..engines import DuckDBEngine, queries
from ..errors import InputError, first_line, option
from ..mapping import Mapping, mapping_digest
from ..progress import Progress
from ..schema import InputStats
from .compile import Compiled, compile_mapping
from .inputfile import Prepared
from .staging import read_error, temp_table, temp_table_sql

RAW_LIMIT = 2048
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def load_all(
    engine: DuckDBEngine,
    prepared: list[Prepared],
    m: Mapping,
    stats: list[InputStats],
    progress: Progress,
    allow_empty: bool = False,
) -> list[str]:
    """Load every staged input in one transaction, appending each one's accounting to
    `stats` (bytes reported to `progress`); returns the warnings. An input none of whose
    records can be read as mapped (every one quarantined for a failed check) is refused
    (InputError naming its top reasons; the transaction rolls back) unless `allow_empty`."""
    warnings: list[str] = []
    failures: list[_SqlFailures] = []
    with engine.transaction():
        for ddl in (
            schema.REQUESTS_DDL,
            schema.INPUTS_DDL,
            schema.INPUTS_MIGRATE,
            schema.INPUTS_MIGRATE_FIELDS,
            schema.QUARANTINE_DDL,
            schema.QUARANTINE_VALUES_DDL,
        ):
            engine.execute(ddl)
        engine.run("ingest/macro_time")
        engine.run("ingest/macro_int")
        # [timestamp] origin: what epoch numbers count from (the time macros read it)
        origin = None if m.time_origin is None else m.time_origin - _EPOCH
        engine.execute(
            "SET VARIABLE _ing_origin_us = CAST($us AS BIGINT)",
            us=None if origin is None else origin // timedelta(microseconds=1),
        )
        seen: dict[str, str] = {}
        for p in prepared:
            stats.append(_one(engine, p, m, seen, warnings, failures, allow_empty))
            progress.advance(p.size)
    # after the commit: a statement that fails inside a transaction aborts it
    for failed in failures:
        warnings.extend(failed.explain(engine))
    return warnings


def _refuse_empty(stats: InputStats, m: Mapping, allow_empty: bool, warnings: list[str]) -> None:
    """An input none of whose records could be read as mapped loads nothing: refused, naming
    its top quarantine reasons, unless a zero is deliberate (`allow_empty`). (An input whose
    records are all duplicates or conflicting duplicates of loaded ones is read fine: its
    content is in the database already, and conflicts are judged by the exposure range.)"""
    reasons = "; ".join(f"{reason} {n:,}" for reason, n in stats.reasons)
    what = (
        f"loads no record: {stats.quarantined:,} of {stats.rows_read:,} record(s) quarantined "
        f"(top reasons: {reasons})"
    )
    if allow_empty:
        warnings.append(f"{stats.path}: {what}")
        return
    raise InputError(
        what,
        where=stats.path,
        fix=f"fix the mapping ({m.origin}) for these reasons, or give {option('allow_empty')} "
        "to load it with no record",
    )


def _one(
    engine: DuckDBEngine,
    p: Prepared,
    m: Mapping,
    seen: dict[str, str],
    warnings: list[str],
    failures: list[_SqlFailures],
    allow_empty: bool = False,
) -> InputStats:
    if p.replaces is not None and p.sha256 not in seen:
        _forget(engine, p)
        warnings.append(f"{p.path}: re-ingested ({option('force')}): its earlier load was replaced")
    elif p.sha256 in seen or engine.scalar(queries.load("ingest/seen_input"), sha256=p.sha256):
        prior = engine.rows(
            "SELECT rows_read, rows_loaded, duplicates, quarantined FROM inputs "
            "WHERE sha256 = $sha256",
            sha256=p.sha256,
        )
        note = "already ingested (same sha256): nothing changed"
        if p.sha256 in seen:
            note = f"same content as {seen[p.sha256]} (same sha256): nothing changed"
        elif (_stored_input(engine, p.sha256) or ("", None))[1] is None:
            note = (
                "already ingested (same sha256; its mapping was not recorded): nothing "
                f"changed; {option('force')} re-ingests it with this mapping"
            )
        read, loaded, dups, quarantined = prior[0] if prior else (0, 0, 0, 0)
        # this call read and loaded nothing of it: zeros, and the earlier figures in the note
        note += f" (then: {read:,} read, {loaded:,} loaded, {dups:,} duplicates, "
        note += f"{quarantined:,} quarantined)"
        warnings.append(f"{p.path}: {note}")
        return InputStats(p.path, p.sha256, p.size, 0, 0, 0, 0, p.fmt, note)
    seen[p.sha256] = p.path
    src = f'SELECT * FROM "{p.table}"'
    _source(engine, src)
    compiled = compile_mapping(engine, p, m)
    params = dict(compiled.params)
    raw_sql = compiled.raw_select
    params.update(
        id_mapped="request_id" in compiled.fields,
        id_prefix=p.sha256[:16],
        unit=m.unit,
        tz=m.timezone,
        default_status=schema.DEFAULT_STATUS,
        source=p.source,
        max_text_bytes=schema.MAX_TEXT_BYTES,
        max_tokens=schema.MAX_TOKENS,
    )
    mapped = f"WITH _ing_mapped AS NOT MATERIALIZED ({compiled.select}) "
    typed = f"SELECT * FROM ({queries.load('ingest/typed')})"
    with _mapping_errors(m, p):
        # 1. the ids to compare by content (they repeat, or were loaded before), and their
        # records, typed and compared; 2. every other valid record and the first of each
        # repeated id, loaded straight from the source in one pass (no staged copy);
        # 3. when records are left over, those (each has a reason), typed again: few
        read = engine.scalar(f"SELECT count(*) FROM ({src})")
        if read == 0:
            raise InputError(
                "the file holds no records", where=p.path, fix="check the export; remove it"
            )
        temp_table_sql(engine, "_ing_ids", mapped + _select("ingest/ids"), params)
        temp_table(engine, "_ing_keys", "ingest/keys")
        temp_table(engine, "_ing_cand", "ingest/candidates")
        engine.execute('DROP TABLE temp."_ing_ids"')  # 16 bytes a record: not kept for the load
        _source(engine, src, "__row IN (SELECT __row FROM _ing_cand)")
        temp_table_sql(engine, "_ing_typed", mapped + typed, params)
        temp_table(engine, "_ing_special", "ingest/classify")
        temp_table(engine, "_ing_prior", "ingest/prior", source=p.source)
        _source(engine, src)
        direct = mapped + f", _ing_all AS ({typed}) " + _select("ingest/load_direct")
        # DuckDB pushes `failed IS NULL` below the typed projection by inlining the whole
        # check (time parsing included), so every value was typed twice; off for this one
        # statement, the filter runs on the typed values (1M records: 1.85 -> 1.45 s CPU)
        with engine.settings(disabled_optimizers="filter_pushdown"):
            loaded = engine.rows(f"INSERT INTO requests {direct}", **params)[0][0]
        skipped = engine.scalar("SELECT count(*) FROM _ing_special WHERE outcome <> 'load'")
        if read != loaded + skipped:
            temp_table(engine, "_ing_rest", "ingest/rest", source=p.source)
            _source(
                engine,
                src,
                "__row IN (SELECT __row FROM _ing_rest EXCEPT SELECT __row FROM _ing_cand)",
            )
            engine.execute(f"INSERT INTO _ing_typed {mapped}{typed}", **params)
            _source(engine, src)
        # reason texts for the records that failed a check (planning the _why macros costs
        # ~50 ms: only when there is a record to explain)
        if engine.scalar("SELECT count(*) FROM _ing_typed WHERE failed IS NOT NULL"):
            temp_table(
                engine,
                "_ing_reasons",
                "ingest/reasons",
                unit=m.unit,
                tz=m.timezone,
                max_text_bytes=schema.MAX_TEXT_BYTES,
                max_tokens_text=schema.MAX_TOKENS_TEXT,
            )
        else:
            engine.execute(
                'CREATE OR REPLACE TEMP TABLE "_ing_reasons" '
                "(source_row BIGINT, raw VARCHAR, reason VARCHAR)"
            )
    engine.execute(f'CREATE OR REPLACE TEMP VIEW "_ing_out" AS {queries.load("ingest/out")}')
    dups, quarantined = engine.rows(queries.load("ingest/counts"))[0]
    if read != loaded + dups + quarantined:  # a bug, never the input's fault
        raise RuntimeError(
            f"{p.path}: {read} records read but {loaded} loaded, {dups} duplicates and "
            f"{quarantined} quarantined"
        )
    reasons: tuple[tuple[str, int], ...] = ()
    if quarantined:
        # raw values of the records quarantined (ingest_insert_quarantine joins `_ing_raw`
        # on __row); `raw_sql` reads only those
        engine.execute(f'CREATE OR REPLACE TEMP TABLE "_ing_raw" AS {raw_sql}', **params)
        engine.run("ingest/insert_quarantine", raw_limit=RAW_LIMIT, source=p.source)
        engine.run("ingest/insert_quarantine_values", source=p.source)
        reasons = tuple(
            (str(reason), int(n)) for reason, n in engine.rows(queries.load("ingest/top_reasons"))
        )
        if compiled.sql_checks:
            failures.append(_SqlFailures(p, compiled, params, engine.rows(_SQL_FAILED)))
    stats = InputStats(
        p.path, p.sha256, p.size, read, loaded, dups, quarantined, p.fmt, p.note, reasons
    )
    if loaded == 0 and quarantined == read and not engine.scalar(queries.load("ingest/conflicts")):
        _refuse_empty(stats, m, allow_empty, warnings)
    engine.run(
        "ingest/insert_input",
        path=p.source,
        sha256=p.sha256,
        bytes=p.size,
        rows_read=read,
        rows_loaded=loaded,
        duplicates=dups,
        quarantined=quarantined,
        format=p.fmt,
        note=p.note,
        mapping_sha256=mapping_digest(m),
        fields=",".join(f.name for f in schema.REQUEST_FIELDS if f.name in compiled.fields),
    )
    return stats


@contextlib.contextmanager
def _mapping_errors(m: Mapping, p: Prepared) -> Iterator[None]:
    """A DuckDB error while the mapping is applied -> one InputError naming mapping and file
    (for Parquet, read here rather than staged, an I/O error is the file's)."""
    try:
        yield
    except (duckdb.IOException, duckdb.InvalidInputException) as e:
        if p.fmt != "parquet":
            raise _mapping_error(m, p, e) from None
        raise read_error(p, e) from None
    except duckdb.Error as e:
        raise _mapping_error(m, p, e) from None


def _source(engine: DuckDBEngine, src: str, where: str | None = None) -> None:
    """Point view `_ing_src` (what the mapped SELECT reads) at the input, or some of its rows."""
    sql = src if where is None else f"SELECT * FROM ({src}) WHERE {where}"
    engine.execute(f'CREATE OR REPLACE TEMP VIEW "_ing_src" AS {sql}')


def _select(query: str) -> str:
    """A query file as a subquery, to follow the caller's WITH (its CTEs stay visible)."""
    return f"SELECT * FROM ({queries.load(query)})"


_SQL_FAILED = (
    "SELECT reason, count(*), min(source_row) FROM _ing_out "
    "WHERE starts_with(reason, 'sql of ') GROUP BY reason ORDER BY reason"
)


@dataclass
class _SqlFailures:
    """The { sql } sources that failed on some records of one input: (reason, records, first
    row) each, explained once the load has committed."""

    p: Prepared
    compiled: Compiled
    params: dict[str, Any]
    failed: list[tuple[Any, ...]]

    def explain(self, engine: DuckDBEngine) -> list[str]:
        """One warning per source: how many records it failed on, and the error of the first
        (the expression run again, unguarded, on that one record)."""
        warnings = []
        for reason, count, row in self.failed:
            label = reason.removeprefix("sql of ").removesuffix(" failed on this record")
            sql = self.compiled.sql_checks[label]
            _source(engine, f'SELECT * FROM "{self.p.table}"', f"__row = {int(row)}")
            try:
                engine.rows(f"SELECT (\n{sql}\n) FROM {self.compiled.sql_source}", **self.params)
                columns = ", ".join(self.compiled.sql_mixed.get(label, [])) or "its input"
                why = f"{columns}: a value of another JSON type than most records hold there"
            except duckdb.Error as e:
                why = first_line(e)
            warnings.append(
                f"{self.p.path}: sql of {label} failed on {count:,} record(s), quarantined; "
                f"row {row}: {why}"
            )
        return warnings


def _mapping_error(m: Mapping, p: Prepared, e: Exception) -> InputError:
    return InputError(
        f"the mapping cannot be applied ({first_line(e)})",
        where=f"{m.origin} on {p.path}",
        fix="check the sql expressions and paths in [fields]/[extra] against the source",
    )


def already(
    engine: DuckDBEngine,
    p: Prepared,
    earlier: list[Prepared],
    m: Mapping,
    force: bool = False,
) -> bool:
    """Whether this input's content was ingested before (or is earlier in this call) and is
    to be skipped. Loaded with another mapping: InputError, unless `force`, which marks it
    to be re-ingested (`p.replaces`)."""
    if any(e.sha256 == p.sha256 for e in earlier):
        return True
    prior = _stored_input(engine, p.sha256)
    if prior is None:
        return False
    path, stored_mapping = prior
    if force:
        p.replaces = path
        return False
    if stored_mapping is not None and stored_mapping != mapping_digest(m):
        raise InputError(
            f"already ingested (as {path}) with another mapping, which this one would not replace",
            where=p.path,
            fix=f"give {option('force')} to re-ingest it with this mapping (its loaded records "
            "and quarantine rows are replaced), or give the mapping it was loaded with",
        )
    return True


def _stored_input(engine: DuckDBEngine, sha256: str) -> tuple[str, str | None] | None:
    """(path, mapping digest or None when not recorded) of an input already ingested."""
    if not engine.table_exists("inputs"):
        return None
    has_mapping = "mapping_sha256" in dict(engine.describe("SELECT * FROM inputs"))
    rows = engine.rows(
        "SELECT path, "
        + ("mapping_sha256" if has_mapping else "NULL::VARCHAR")
        + " FROM inputs WHERE sha256 = $sha256",
        sha256=sha256,
    )
    return (rows[0][0], rows[0][1]) if rows else None


def _forget(engine: DuckDBEngine, p: Prepared) -> None:
    """Delete what an earlier load of this input left (`force`), inside the transaction.
    Its rows are known by their source path: refused when another input shares it."""
    assert p.replaces is not None
    shared = engine.scalar(
        queries.load("ingest/inputs_sharing_path"), path=p.replaces, sha256=p.sha256
    )
    if shared:
        raise InputError(
            f"cannot re-ingest it alone: {shared} other input(s) were loaded under the same "
            f"path {p.replaces}, and records keep only the path",
            where=p.path,
            fix=f"ingest every log into a new {option('db')} instead",
        )
    for query in (
        "ingest/forget_requests",
        "ingest/forget_quarantine",
        "ingest/forget_quarantine_values",
    ):
        engine.run(query, path=p.replaces)
    engine.run("ingest/forget_input", sha256=p.sha256)
