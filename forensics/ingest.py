"""Lossless ingest of request logs into a case database (SPEC.md "Ingest rules").

Every input record is loaded, counted as a duplicate, or quarantined with its reason:
rows_read = rows_loaded + duplicates + quarantined, per input and in total. The work is
DuckDB-native (no per-record Python); Python only resolves paths, hashes inputs and checks
compressed streams. All inputs of one call are committed in one transaction: a bad input
leaves the database unchanged.

Duplicates: the first occurrence (lowest line/row) of a request_id is loaded; later records
with the same content (every loaded column but provenance) are duplicates, later ones with
different content are quarantined as `conflicting duplicate`. A request_id already loaded by
an earlier input makes every record of it a duplicate or a conflict likewise.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn
from rich.table import Table
from rich.text import Text

from . import inputfile, integrity, queries, schema, scratch
from .engine import Engine, bind
from .errors import InputError
from .inputfile import Prepared
from .mapping import Mapping, Source, load_mapping, profile

RAW_LIMIT = 2048
SCRATCH_PREFIX = "forensics-ingest-"  # decompressed prefixes: TEMP/forensics-ingest-PID-XXXX


@dataclass
class InputStats:
    """The accounting of one input file (one row of `inputs`)."""

    path: str
    sha256: str
    bytes: int
    rows_read: int = 0
    rows_loaded: int = 0
    duplicates: int = 0
    quarantined: int = 0
    format: str = ""
    note: str | None = None


@dataclass
class IngestReport:
    """What one ingest did: per-input accounting and warnings (truncation, re-ingest)."""

    inputs: list[InputStats] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def totals(self) -> dict[str, int]:
        """Sums over inputs: rows_read, rows_loaded, duplicates, quarantined."""
        keys = ("rows_read", "rows_loaded", "duplicates", "quarantined")
        return {k: sum(getattr(s, k) for s in self.inputs) for k in keys}

    def render(self) -> Table:
        """A Rich table: one row per input, then the totals."""
        table = Table(title="ingest", show_footer=False)
        table.add_column("input", overflow="fold")
        for name in ("rows read", "loaded", "duplicates", "quarantined"):
            table.add_column(name, justify="right")
        table.add_column("note")
        for s in self.inputs:
            table.add_row(
                Text(s.path),  # Text: a path such as logs/[x].jsonl is not Rich markup
                f"{s.rows_read:,}",
                f"{s.rows_loaded:,}",
                f"{s.duplicates:,}",
                f"{s.quarantined:,}",
                Text(s.note or ""),
            )
        t = self.totals()
        table.add_section()
        table.add_row(
            "total",
            f"{t['rows_read']:,}",
            f"{t['rows_loaded']:,}",
            f"{t['duplicates']:,}",
            f"{t['quarantined']:,}",
            "",
        )
        return table


def ingest(
    paths: list[str] | list[Path] | str | Path,
    db: str | Path,
    *,
    mapping: str | Path | None = None,
    profile: str | None = None,
    node: str | None = None,
    role: str | None = None,
    to_parquet: str | Path | None = None,
    memory_limit: str | None = None,
    temp_dir: str | Path | None = None,
    progress: bool = False,
    force: bool = False,
) -> IngestReport:
    """Ingest `paths` (files, globs, folders) into the case database file `db`; `force`
    re-ingests inputs already loaded (see `ingest_into`).

    A database held by another process is refused (DuckDB's file lock). A new database is
    built under a scratch name beside `db` and linked into place only when complete, so a
    failed or killed first ingest leaves no database, and no ingest ever deletes a database
    another process made (when two create `db` at once, the later one is refused).
    """
    m = _resolve_mapping(mapping, profile)
    files = resolve_inputs(paths)
    db_path = Path(db)
    new = None if db_path.exists() else _new_db_name(db_path)
    try:
        with Engine(new or db_path, memory_limit=memory_limit, temp_dir=temp_dir) as engine:
            report = ingest_into(
                engine,
                files,
                mapping=m,
                node=node,
                role=role,
                to_parquet=to_parquet,
                temp_dir=temp_dir,
                progress=progress,
                force=force,
            )
        if new is not None:
            _publish_db(new, db_path)
        return report
    finally:
        if new is not None:  # only files this process created, under its own scratch name
            for part in (new, new.with_name(new.name + ".wal")):
                scratch.remove(part)


NEW_DB = ".forensics-new-"  # a first ingest's database until complete: .DB.forensics-new-PID-X


def _new_db_name(db: Path) -> Path:
    parent = db.absolute().parent
    if not parent.is_dir():
        raise InputError(
            "the database's folder does not exist", where=str(db), fix="create it, or fix --db"
        )
    return scratch.make_name(parent, f".{db.name}{NEW_DB}")


def _publish_db(new: Path, db: Path) -> None:
    """Give the complete database `new` its name `db`, unless a database appeared there
    meanwhile (never replaced: it is another process's)."""
    try:
        os.link(new, db)  # atomic, and fails if `db` exists
    except FileExistsError:
        raise _created_meanwhile(db) from None
    except OSError:  # a file system without hard links: claim the name, then replace it
        try:
            os.close(os.open(db, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            raise _created_meanwhile(db) from None
        os.replace(new, db)


def _created_meanwhile(db: Path) -> InputError:
    return InputError(
        "another process created this database while this ingest ran; nothing was loaded",
        where=str(db),
        fix="run the ingest again to add these logs to it, or use another --db",
    )


def ingest_into(
    engine: Engine,
    paths: list[str] | list[Path] | str | Path,
    *,
    mapping: Mapping | str | Path | None = None,
    profile: str | None = None,
    node: str | None = None,
    role: str | None = None,
    to_parquet: str | Path | None = None,
    temp_dir: str | Path | None = None,
    progress: bool = False,
    force: bool = False,
) -> IngestReport:
    """Ingest `paths` into an open Engine; all inputs commit together or not at all.

    An input already loaded (same sha256) is skipped, unless this mapping differs from the
    one it was loaded with: that is refused (InputError naming the file). With `force`, such
    inputs are re-ingested: their requests, quarantine rows and `inputs` row are deleted and
    the file is loaded again, in the same transaction.
    """
    m = mapping if isinstance(mapping, Mapping) else _resolve_mapping(mapping, profile)
    files = resolve_inputs(paths)
    if m.format == "sglang":
        from . import sglang  # lazy: a separate module owns engine logs

        if force:
            raise InputError(
                "--force does not apply to engine logs (profile sglang)",
                where="--force",
                fix="ingest the engine logs into a new --db",
            )
        stats = sglang.ingest_logs(engine, files, node=node, role=role)
        report = IngestReport(inputs=list(stats))
        report.warnings.extend(s.note for s in stats if s.note and "already" in s.note)
        return report

    report = IngestReport()
    # pid in the name: a killed ingest's copies are swept by the next one
    scratch_dir = scratch.make_dir(temp_dir, SCRATCH_PREFIX)
    try:
        prepared = [inputfile.prepare(f, m, scratch_dir) for f in files]
        for p in prepared:
            if p.note:
                report.warnings.append(f"{p.path}: {p.note}")
        # staging runs outside the transaction: rowids of committed temp tables are the
        # line order; nothing is written to the database file yet
        for i, p in enumerate(prepared):
            if not _already(engine, p, prepared[:i], m, force):
                p.table = _stage(engine, p, i)
        with _progress(progress, sum(p.size for p in prepared)) as (bar, task):
            _transaction(engine, prepared, m, report, bar, task)
    finally:
        _drop_scratch(engine)
        scratch.remove(scratch_dir)  # ignores errors: cleanup never fails the ingest
    if to_parquet is not None:
        export_parquet(engine, to_parquet)
    return report


PARQUET_SIDE_TABLES = ("inputs", "engine_capacity", "engine_requests", "engine_aborts")


def export_parquet(engine: Engine, out_dir: str | Path) -> Path:
    """Write `requests` as Parquet under out_dir, hive-partitioned by day (UTC) and model,
    and the tables of PARQUET_SIDE_TABLES present under OUT_DIR_tables/NAME/ beside it (the
    case store `--engine spark` reads)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    target = str(out).replace("'", "''")  # a path, not data: COPY TO takes no parameter
    engine.execute(
        f"COPY ({queries.load('ingest/parquet_export')}) TO '{target}' "
        "(FORMAT parquet, PARTITION_BY (day, model), OVERWRITE_OR_IGNORE)"
    )
    # the small tables beside it (not inside: readers glob out_dir/**/*.parquet)
    for table in PARQUET_SIDE_TABLES:
        if engine.table_exists(table):
            folder = out.parent / f"{out.name}_tables" / table
            folder.mkdir(parents=True, exist_ok=True)
            path = str(folder / "part-0.parquet").replace("'", "''")
            engine.execute(f"COPY (SELECT * FROM {table}) TO '{path}' (FORMAT parquet)")
    return out


def resolve_inputs(paths: list[str] | list[Path] | str | Path) -> list[Path]:
    """Files named by paths, globs and folders (folders: their log files, sorted)."""
    if isinstance(paths, str | Path):
        paths = [paths]  # type: ignore[assignment]
    files: list[Path] = []
    for raw in paths:
        text = str(raw)
        p = Path(text)
        if p.is_file():
            found = [p]
        elif p.is_dir():
            found = sorted(
                f for f in p.rglob("*") if f.is_file() and inputfile.suffix_format(f) is not None
            )
            if not found:
                raise InputError(
                    "folder holds no log files",
                    where=text,
                    fix="point at .jsonl/.ndjson/.csv/.parquet files (plain, .gz or .zst)",
                )
        elif glob.has_magic(text):
            found = sorted(Path(f) for f in glob.glob(text, recursive=True) if Path(f).is_file())
            if not found:
                raise InputError("no file matches the pattern", where=text, fix="check the glob")
        else:
            raise InputError("file not found", where=text, fix="check the path and try again")
        for f in found:
            if f not in files:
                files.append(f)
    if not files:
        raise InputError("no input given", fix="name at least one log file, glob or folder")
    return files


def _resolve_mapping(mapping: str | Path | None, profile_name: str | None) -> Mapping:
    if mapping is not None and profile_name is not None:
        raise InputError(
            "both --mapping and --profile given", fix="pass one of --mapping FILE or --profile"
        )
    if mapping is not None:
        # each { sql } is checked on the case database before it runs (_validate_sql): not
        # here as well, which would open a second DuckDB just to parse it (~25 ms)
        return load_mapping(mapping, check_sql=False)
    if profile_name is not None:
        return profile(profile_name)
    raise InputError(
        "no mapping given",
        fix="pass --mapping FILE.mapping.toml or --profile canonical|openai|sglang",
    )


# --- the transaction ---


@contextlib.contextmanager
def _progress(enabled: bool, total: int) -> Any:
    if not enabled:
        yield None, None
        return
    with Progress(TextColumn("ingest"), BarColumn(), DownloadColumn(), transient=True) as bar:
        yield bar, bar.add_task("ingest", total=total)


def _transaction(
    engine: Engine,
    prepared: list[Prepared],
    m: Mapping,
    report: IngestReport,
    bar: Any,
    task: Any,
) -> None:
    con = engine.con
    con.execute("BEGIN TRANSACTION")
    try:
        for ddl in (
            schema.REQUESTS_DDL,
            schema.INPUTS_DDL,
            schema.INPUTS_MIGRATE,
            schema.QUARANTINE_DDL,
        ):
            con.execute(ddl)
        engine.run("ingest/macro_time")
        engine.run("ingest/macro_int")
        seen: dict[str, str] = {}
        for p in prepared:
            report.inputs.append(_one(engine, p, m, seen, report))
            if bar is not None:
                bar.advance(task, p.size)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def _one(
    engine: Engine, p: Prepared, m: Mapping, seen: dict[str, str], report: IngestReport
) -> InputStats:
    if p.replaces is not None and p.sha256 not in seen:
        _forget(engine, p)
        report.warnings.append(f"{p.path}: re-ingested (--force): its earlier load was replaced")
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
                "changed; --force re-ingests it with this mapping"
            )
        report.warnings.append(f"{p.path}: {note}")
        counts = prior[0] if prior else (0, 0, 0, 0)
        return InputStats(p.path, p.sha256, p.size, *counts, p.fmt, note)
    seen[p.sha256] = p.path
    src = f'SELECT * FROM "{p.table}"'
    _source(engine, src)
    effective, mapped_sql, params, raw_sql = _map(engine, p, m)
    params.update(
        id_mapped="request_id" in effective,
        id_prefix=p.sha256[:16],
        unit=m.unit,
        tz=m.timezone,
        default_status=schema.DEFAULT_STATUS,
        source=p.path,
    )
    mapped = f"WITH _ing_mapped AS NOT MATERIALIZED ({mapped_sql}) "
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
        _temp_sql(engine, "_ing_ids", mapped + _select("ingest/ids"), params)
        _temp(engine, "_ing_keys", "ingest/keys")
        _temp(engine, "_ing_cand", "ingest/candidates")
        engine.execute('DROP TABLE temp."_ing_ids"')  # 16 bytes a record: not kept for the load
        _source(engine, src, "__row IN (SELECT __row FROM _ing_cand)")
        _temp_sql(engine, "_ing_typed", mapped + typed, params)
        _temp(engine, "_ing_special", "ingest/classify")
        _temp(engine, "_ing_prior", "ingest/prior", source=p.path)
        _source(engine, src)
        direct = mapped + f", _ing_all AS ({typed}) " + _select("ingest/load_direct")
        with _no_filter_pushdown(engine):
            loaded = engine.rows(f"INSERT INTO requests {direct}", **params)[0][0]
        skipped = engine.scalar("SELECT count(*) FROM _ing_special WHERE outcome <> 'load'")
        if read != loaded + skipped:
            _temp(engine, "_ing_rest", "ingest/rest", source=p.path)
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
            _temp(engine, "_ing_reasons", "ingest/reasons", unit=m.unit)
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
    if quarantined:
        # raw values of the records quarantined (ingest_insert_quarantine joins `_ing_raw`
        # on __row); `raw_sql` reads only those
        engine.execute(f'CREATE OR REPLACE TEMP TABLE "_ing_raw" AS {raw_sql}', **params)
        engine.run("ingest/insert_quarantine", raw_limit=RAW_LIMIT, source=p.path)
    stats = InputStats(p.path, p.sha256, p.size, read, loaded, dups, quarantined, p.fmt, p.note)
    engine.run(
        "ingest/insert_input",
        path=p.path,
        sha256=p.sha256,
        bytes=p.size,
        rows_read=read,
        rows_loaded=loaded,
        duplicates=dups,
        quarantined=quarantined,
        format=p.fmt,
        note=p.note,
        mapping_sha256=integrity.mapping_digest(m),
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
        raise _read_error(p, e) from None
    except duckdb.Error as e:
        raise _mapping_error(m, p, e) from None


def _source(engine: Engine, src: str, where: str | None = None) -> None:
    """Point view `_ing_src` (what the mapped SELECT reads) at the input, or some of its rows."""
    sql = src if where is None else f"SELECT * FROM ({src}) WHERE {where}"
    engine.execute(f'CREATE OR REPLACE TEMP VIEW "_ing_src" AS {sql}')


@contextlib.contextmanager
def _no_filter_pushdown(engine: Engine) -> Iterator[None]:
    """DuckDB pushes `failed IS NULL` below the typed projection by inlining the whole check
    (time parsing included), so every value was typed twice; off for one statement, the
    filter runs on the typed values (1M records: 1.85 -> 1.45 s CPU)."""
    engine.con.execute("SET disabled_optimizers = 'filter_pushdown'")
    try:
        yield
    finally:
        engine.con.execute("RESET disabled_optimizers")


def _select(query: str) -> str:
    """A query file as a subquery, to follow the caller's WITH (its CTEs stay visible)."""
    return f"SELECT * FROM ({queries.load(query)})"


def _temp_sql(engine: Engine, table: str, sql: str, params: dict[str, Any]) -> None:
    engine.execute(f'CREATE OR REPLACE TEMP TABLE "{table}" AS {sql}', **params)


def _mapping_error(m: Mapping, p: Prepared, e: Exception) -> InputError:
    return InputError(
        f"the mapping cannot be applied ({_first_line(e)})",
        where=f"{m.origin} on {p.path}",
        fix="check the sql expressions and paths in [fields]/[extra] against the source",
    )


def _read_error(p: Prepared, e: Exception) -> InputError:
    return InputError(
        f"cannot read as {p.fmt} ({_first_line(e)})",
        where=p.path,
        fix="check the file is complete and of the format its name or mapping says",
    )


def _temp(engine: Engine, table: str, query: str, **params: Any) -> None:
    _temp_sql(engine, table, queries.load(query), params)


def _already(
    engine: Engine,
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
    if stored_mapping is not None and stored_mapping != integrity.mapping_digest(m):
        raise InputError(
            f"already ingested (as {path}) with another mapping, which this one would not replace",
            where=p.path,
            fix="pass --force to re-ingest it with this mapping (its loaded records and "
            "quarantine rows are replaced), or give the mapping it was loaded with",
        )
    return True


def _stored_input(engine: Engine, sha256: str) -> tuple[str, str | None] | None:
    """(path, mapping digest or None when not recorded) of an input already ingested."""
    if not engine.table_exists("inputs"):
        return None
    has_mapping = "mapping_sha256" in _columns(engine, "inputs")
    rows = engine.rows(
        "SELECT path, "
        + ("mapping_sha256" if has_mapping else "NULL::VARCHAR")
        + " FROM inputs WHERE sha256 = $sha256",
        sha256=sha256,
    )
    return (rows[0][0], rows[0][1]) if rows else None


def _forget(engine: Engine, p: Prepared) -> None:
    """Delete what an earlier load of this input left (--force), inside the transaction.
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
            fix="ingest every log into a new --db instead",
        )
    for query in ("ingest/forget_requests", "ingest/forget_quarantine"):
        engine.run(query, path=p.replaces)
    engine.run("ingest/forget_input", sha256=p.sha256)


def _stage(engine: Engine, p: Prepared, i: int) -> str:
    """Stage input i as temp table or view `_ing_src_i`: __row, __err, __raw, source columns
    (JSONL: __j, __shape; a view over the staged lines. Parquet: a view over the file)."""
    # a rewritten input (inputfile._normalize) has no line over MAX_LINE_SIZE: DuckDB's own limit is
    # only a backstop; it reads in buffers of two lines' worth, at least 32 MiB (its default
    # of 16 lines is more than a modest memory limit allows)
    read_limit = inputfile.MAX_LINE_SIZE + 1024
    sizes = {"max_line_size": read_limit, "buffer_size": max(2 * read_limit, 32 << 20)}
    try:
        side = f"_ing_side_{i}"
        if p.side is not None:
            _temp(engine, side, "ingest/side_lines", path=p.side)
        else:
            engine.execute(
                f'CREATE OR REPLACE TEMP TABLE "{side}" (line BIGINT, reason VARCHAR, bytes BIGINT)'
            )
        if p.fmt == "jsonl":
            stage = f"_ing_json_{i}"
            engine.con.execute("SET preserve_insertion_order = true")
            try:
                _temp(
                    engine,
                    stage,
                    "ingest/json_records",
                    path=p.read_path,
                    delim=inputfile.LINE_DELIM,
                    **sizes,
                )
            finally:
                engine.con.execute("SET preserve_insertion_order = false")
            # rowid is the 0-based line number (blank lines kept in the table, not records);
            # a line a rewrite replaced takes its reason and length from the side table
            table = f"_ing_src_{i}"
            if p.side is None:
                engine.execute(
                    f'CREATE OR REPLACE TEMP VIEW "{table}" AS SELECT rowid + 1 AS __row, '
                    f'__j, __shape, __err, __raw FROM "{stage}" WHERE NOT __blank'
                )
            else:
                engine.execute(
                    f'CREATE OR REPLACE TEMP VIEW "{table}" AS SELECT j.rowid + 1 AS __row, '
                    "j.__j, j.__shape, coalesce(s.reason, j.__err) AS __err, "
                    "CASE WHEN s.line IS NULL THEN j.__raw "
                    "ELSE CAST(json_object('bytes', s.bytes) AS VARCHAR) END AS __raw "
                    f'FROM "{stage}" AS j LEFT JOIN "{side}" AS s ON s.line = j.rowid + 1 '
                    "WHERE NOT j.__blank"
                )
            return table
        elif p.fmt == "csv":
            engine.execute(f'CREATE OR REPLACE TEMP VIEW "_ing_side" AS SELECT * FROM "{side}"')
            engine.con.execute("SET preserve_insertion_order = true")
            try:
                _temp(engine, "_ing_csv", "ingest/csv_rows", path=p.read_path, **sizes)
            finally:
                engine.con.execute("SET preserve_insertion_order = false")
            _temp(
                engine,
                "_ing_csv_rejects",
                "ingest/csv_rejects",
                max_line_size=inputfile.MAX_LINE_SIZE,
            )
            _temp(engine, "_ing_csv_valid", "ingest/csv_records")
            engine.execute(
                'CREATE OR REPLACE TEMP TABLE "_ing_src" AS '
                "SELECT * FROM _ing_csv_valid UNION ALL BY NAME SELECT * FROM _ing_csv_rejects"
            )
        else:
            # a view over the file: the typed pass reads it once, no staged copy (at 20M rows
            # that copy spilled); the path is bound through a session variable (views take no
            # parameters); binding the view checks the file is Parquet
            table = f"_ing_src_{i}"
            engine.execute(f"SET VARIABLE _ing_path_{i} = $path", path=p.read_path)
            sql = queries.load("ingest/parquet_records").replace("_ing_path_N", f"_ing_path_{i}")
            engine.execute(f'CREATE OR REPLACE TEMP VIEW "{table}" AS {sql}')
            return table
        table = f"_ing_src_{i}"
        engine.execute(f'DROP TABLE IF EXISTS temp."{table}"')
        engine.execute(f'ALTER TABLE temp."_ing_src" RENAME TO "{table}"')
        return table
    except duckdb.Error as e:
        raise _read_error(p, e) from None


def _columns(engine: Engine, table: str) -> dict[str, str]:
    return {
        name: typ
        for name, typ in engine.rows(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = $t ORDER BY ordinal_position",
            t=table,
        )
    }


def _json_structure(engine: Engine) -> dict[str, Any] | None:
    engine.execute('CREATE OR REPLACE TEMP VIEW "_ing_json" AS SELECT * FROM _ing_src')
    text = engine.scalar(queries.load("ingest/json_structure"))
    return json.loads(text) if text else None


def _map(
    engine: Engine, p: Prepared, m: Mapping
) -> tuple[dict[str, Source], str, dict[str, Any], str]:
    """The fields used, the SELECT (with its parameters) of the mapped records: __row,
    __raw, __err, v_<field> as text, extra; and the SELECT (same parameters) of each
    record's raw values: __row, raw = a JSON object of its mapped values only (source path
    -> value as in the source; `fields.F`/`extra.X` -> the value of a { sql } source), never
    unmapped content such as prompt text; for an unreadable record, `__raw` ({"bytes": N})."""
    params: dict[str, Any] = {}
    source = "_ing_src"  # what the mapped SELECT reads (and { sql = ... } binds against)
    if p.fmt == "jsonl":
        structure = _json_structure(engine)
        if structure is not None and any(s.kind == "sql" for s in m.fields.values()) | any(
            s.kind == "sql" for s in m.extra.values()
        ):
            # the records as columns for { sql = ... }: a subquery of the typed pass, not a copy
            params["structure"] = json.dumps(structure)
            source = (
                "(SELECT * EXCLUDE (__rec), __rec.* FROM "
                "(SELECT *, json_transform(__j, $structure) AS __rec FROM _ing_src))"
            )
            cur = engine.con.execute(f"SELECT * FROM {source} LIMIT 0", params)
            columns = {d[0]: str(d[1]) for d in cur.description or []}
            cur.fetchall()
        else:
            columns = _columns(engine, "_ing_src")
    else:
        structure = None
        columns = _columns(engine, "_ing_src")
    raw_source = source
    raw_values: dict[str, str] = {}  # raw key -> expression of the source value
    raw_paths: list[str] = []  # JSONL: paths of the raw values, read as JSON

    def raw(src: Source, label: str, e: str) -> None:
        if src.kind == "sql":
            raw_values.setdefault(label, e)
        elif src.kind == "path" and src.value not in raw_values:
            if p.fmt != "jsonl":
                raw_values[src.value] = e
            elif structure is not None:
                raw_paths.append(_json_path(src.value))
                raw_values[src.value] = f"__rx[{len(raw_paths)}]"

    text_paths: list[str] = []  # JSON paths read as text (fields) ...
    json_paths: list[str] = []  # ... and as JSON (extra)

    def expr(key: str, src: Source, as_json: bool) -> str | None:
        if src.kind == "const":
            params[f"c_{key}"] = src.value if as_json else str(src.value)
            return f"${'c_' + key}"
        if src.kind == "sql":  # on its own lines: a trailing -- comment ends there
            return f"try(\n{src.value}\n)"
        path = src.value
        if p.fmt == "jsonl":
            if structure is None:
                return "NULL"
            if not _json_has(structure, path):
                if src.optional:
                    return None
                raise _lacks(m, key, src, p.path, "records have no such field")
            # one json_extract(_string) call per record for all paths: parses it once
            paths = json_paths if as_json else text_paths
            paths.append(_json_path(path))
            return f"{'__jx' if as_json else '__jv'}[{len(paths)}]"
        col = _column_ref(path, columns)
        if col is None:
            if src.optional:
                return None
            raise _lacks(m, key, src, p.path, "no such column")
        return col

    select = ["__row", "__raw", "__err"]
    effective: dict[str, Source] = {}
    field_exprs: dict[str, str] = {}
    for f in schema.REQUEST_FIELDS:
        src = m.fields.get(f.name)
        e = expr(f.name, src, False) if src is not None else None
        if e is not None and src is not None:
            effective[f.name] = src
            field_exprs[f.name] = e
            raw(src, f"fields.{f.name}", e)
    pairs = []
    for i, (name, src) in enumerate(sorted(m.extra.items())):
        e = expr(f"x{i}", src, True)
        params[f"xk_{i}"] = name
        if e is not None:
            raw(src, f"extra.{name}", e)
        pairs.append(f"$xk_{i}, {e}")
    if pairs:
        select.append(f"json_object({', '.join(pairs)}) AS extra")
    elif m.keep_extra_column and "extra" in columns:
        select.append("TRY_CAST(extra AS JSON) AS extra")
    else:
        select.append("NULL::JSON AS extra")
    _validate_sql(engine, m, p, columns, source, params)
    if text_paths or json_paths:
        lists = []
        if text_paths:
            params["text_paths"] = text_paths
            lists.append("json_extract_string(__j, $text_paths) AS __jv")
        if json_paths:
            params["json_paths"] = json_paths
            lists.append("json_extract(__j, $json_paths) AS __jx")
        source = f"(SELECT *, {', '.join(lists)} FROM {source})"
    types = _types(engine, source, field_exprs, params)
    for f in schema.REQUEST_FIELDS:
        e = field_exprs.get(f.name)
        simple = m.fields[f.name].kind == "path" if e else False
        text, typed = _typed(f, e, types.get(f.name, "VARCHAR"), simple) if e else ("NULL", None)
        select.append(f"{text}::VARCHAR AS v_{f.name}")
        if f.name in _CONVERTED:
            n_type = "BIGINT" if f.name == "status" else f.sql_type
            select.append(f"{typed or 'NULL'}::{n_type} AS n_{f.name}")
    raw_pairs = []
    for k, (key, value) in enumerate(raw_values.items()):
        params[f"rk_{k}"] = key
        raw_pairs.append(f"$rk_{k}, {value}")
    # only the quarantined records (by then in `_ing_out`), filtered before any value is read
    quarantined = (
        "(SELECT * FROM _ing_src WHERE __row IN (SELECT source_row FROM _ing_out "
        "WHERE outcome IN ('quarantine', 'conflict')))"
    )
    raw_source = raw_source.replace("_ing_src", quarantined)
    if raw_paths:
        params["raw_paths"] = raw_paths
        raw_source = f"(SELECT *, json_extract(__j, $raw_paths) AS __rx FROM {raw_source})"
    raw_obj = f"json_object({', '.join(raw_pairs)})" if raw_pairs else "'{}'"
    raw_sql = f"SELECT __row, coalesce(__raw, CAST({raw_obj} AS VARCHAR)) AS raw FROM {raw_source}"
    return effective, f"SELECT {', '.join(select)} FROM {source}", params, raw_sql


_CONVERTED = {*schema.TOKEN_FIELDS, *schema.TIME_FIELDS, "status"}  # text parsed in typed.sql
_INT_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER")
_TIME_TYPES = ("TIMESTAMP", "TIMESTAMP_NS", "TIMESTAMP_MS", "TIMESTAMP_S", "DATE")


def _types(
    engine: Engine, source: str, exprs: dict[str, str], params: dict[str, Any]
) -> dict[str, str]:
    """The DuckDB type of each field's source expression (field -> type name)."""
    if not exprs:
        return {}
    sql = f"SELECT {', '.join(exprs.values())} FROM {source} LIMIT 0"
    cur = engine.con.execute(sql, bind(sql, params))
    names = [str(d[1]) for d in cur.description or []]
    cur.fetchall()
    return dict(zip(exprs, names, strict=True))


def _typed(f: schema.Field, e: str, typ: str, simple: bool) -> tuple[str, str | None]:
    """(text, typed) expressions of a field's source value `e` of DuckDB type `typ`: counts
    and status of an integer type and times of a timestamp type are passed as they are
    (`n_F`: BIGINT, TIMESTAMPTZ; typed.sql checks their range), with no round trip through
    text; anything else as text (`v_F`, spaces trimmed, '' = NULL), which typed.sql parses.
    `simple`: `e` is a column or path reference, cheap to repeat."""
    if f.name in (*schema.TOKEN_FIELDS, "status") and typ in _INT_TYPES:
        return "NULL", f"CAST({e} AS BIGINT)"
    if f.name in schema.TIME_FIELDS and typ == "TIMESTAMP WITH TIME ZONE":
        return "NULL", e
    if f.name in schema.TIME_FIELDS and typ in _TIME_TYPES:
        return "NULL", f"timezone($tz, CAST({e} AS TIMESTAMP))"
    if simple and typ == "VARCHAR":  # trim copies the text: only when there is a space to cut
        return (
            f"NULLIF(CASE WHEN starts_with({e}, ' ') OR ends_with({e}, ' ') THEN trim({e}) "
            f"ELSE {e} END, '')"
        ), None
    return f"NULLIF(trim(CAST({e} AS VARCHAR)), '')", None


def _validate_sql(
    engine: Engine,
    m: Mapping,
    p: Prepared,
    columns: dict[str, str],
    source: str,
    params: dict[str, Any],
) -> None:
    """Each { sql = ... } must be one allowed scalar expression (checked on DuckDB's parse
    before anything runs) and bind against the source's columns (`source`: a
    table name or a subquery taking `params`)."""
    for section, key, src in m.sql_sources():
        expr = m.checked_sql(section, key, src, engine.con)
        try:
            sql = f"SELECT (\n{expr}\n) FROM {source} LIMIT 0"
            wanted = {k: v for k, v in params.items() if f"${k}" in source}
            engine.con.execute(sql, wanted).fetchall()
        except duckdb.Error as e:
            raise InputError(
                f"sql of {section}.{key} does not fit {p.path} ({_first_line(e)})",
                where=m.where(f"{section}.{key}", src.line),
                fix=f"refer only to the source's columns: {', '.join(_visible(columns))}",
            ) from None


def _visible(columns: dict[str, str]) -> list[str]:
    return [c for c in columns if not c.startswith("__")][:20]


def _lacks(m: Mapping, key: str, src: Source, path: str, why: str) -> InputError:
    return InputError(
        f"{key} points at {src.value!r}, which {path} lacks ({why})",
        where=m.where(f"fields.{key}" if not key.startswith("x") else "extra", src.line),
        fix="map it to a field the source has, or use { const = ... }",
    )


def _json_path(path: str) -> str:
    return "$" + "".join('."' + part.replace('"', '\\"') + '"' for part in path.split("."))


def _json_has(structure: Any, path: str) -> bool:
    node = structure
    for part in path.split("."):
        if isinstance(node, dict):
            if part not in node:
                return False
            node = node[part]
        else:
            return node == "JSON"  # mixed types: cannot tell, let records decide
    return True


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _column_ref(path: str, columns: dict[str, str]) -> str | None:
    """A column named `path`, else a struct path `a.b` into column a (Parquet structs)."""
    if path in columns:
        return _ident(path)
    head, *rest = path.split(".")
    if head in columns and rest and columns[head].upper().startswith("STRUCT"):
        return ".".join(_ident(x) for x in [head, *rest])
    return None


def _first_line(e: Exception) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def _drop_scratch(engine: Engine) -> None:
    """Drop every temp view and table this module staged (names start with `_ing_`)."""
    for kind in ("VIEW", "TABLE"):
        source = "duckdb_views()" if kind == "VIEW" else "duckdb_tables()"
        names = engine.rows(
            f"SELECT {'view_name' if kind == 'VIEW' else 'table_name'} FROM {source} "
            "WHERE temporary AND starts_with("
            + ("view_name" if kind == "VIEW" else "table_name")
            + ", '_ing_')"
        )
        for (name,) in names:
            with contextlib.suppress(duckdb.Error):
                engine.con.execute(f'DROP {kind} IF EXISTS temp."{name}"')
    for (name,) in engine.rows(
        "SELECT name FROM duckdb_variables() WHERE starts_with(name, '_ing_')"
    ):
        with contextlib.suppress(duckdb.Error):
            engine.con.execute(f"RESET VARIABLE {name}")
