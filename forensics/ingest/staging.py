"""Staging: each input made readable to the load as temp view or table `_ing_src_<i>`
(__row, __err, __raw and the source's columns), before the transaction; and the cleanup of
every temp object ingest made (names start with `_ing_`).

`__row` is the input's index i in the ingest call times STRIDE plus the record's line (row):
ordered by it, records are in input order, then line order, and one table can hold many
inputs. Small JSONL and Parquet inputs are staged together (`stage_batch`): one read of all
their files rather than a few statements each, whose planning cost dominated files of 100
records."""

from __future__ import annotations

import contextlib
import itertools
import threading
from pathlib import Path
from typing import Any

import duckdb

from ..engines import DuckDBEngine, queries
from ..errors import InputError, ResourceError, first_line, out_of_memory
from ..mapping import CsvDialect
from . import inputfile
from .inputfile import Prepared, literal_path
from .shape import Shape

STRIDE = 1 << 40  # __row = input index * STRIDE + line: lines of an input stay below it


def stage(
    engine: DuckDBEngine,
    p: Prepared,
    i: int,
    shape: Shape,
    dialect: CsvDialect | None = None,
    lines: str | None = None,
) -> str:
    """Stage input i as temp table or view `_ing_src_i`: __row, __err, __raw, source columns
    (JSONL: __j, __shape, each record's `shape`; a view over the staged records, __row
    stored. Parquet: a view over the file. CSV: a table, read in `dialect`, the mapping's;
    RFC 4180 by default). `lines`: a temp table of the input's lines read ahead
    (`read_lines`, while the input was prepared), taken over rather than read again."""
    # a rewritten input (inputfile._normalize) has no line over MAX_LINE_SIZE: DuckDB's own
    # limit is only a backstop; it reads in buffers of two lines' worth, at least 32 MiB
    # (its default of 16 lines is more than a modest memory limit allows)
    sizes = _sizes()
    base = i * STRIDE  # an integer of ours, in the views' text (views take no parameters)
    try:
        side = f"_ing_side_{i}"
        if p.side is not None:
            temp_table(engine, side, "ingest/side_lines", path=literal_path(p.side))
        else:
            engine.execute(
                f'CREATE OR REPLACE TEMP TABLE "{side}" (line BIGINT, reason VARCHAR, bytes BIGINT)'
            )
        if p.fmt == "jsonl":
            stage = f"_ing_json_{i}"
            if lines is None:
                read_lines(engine, "_ing_lines", p.read_path)
            else:
                engine.execute(f'ALTER TABLE temp."{lines}" RENAME TO "_ing_lines"')
            # the lines' rowids are their 0-based numbers (blank lines are rows, not records)
            parse_lines(
                engine, stage, shape, f"SELECT rowid + {base + 1} AS __row, line FROM _ing_lines"
            )
            # a line a rewrite replaced takes its reason and length from the side table
            table = f"_ing_src_{i}"
            if p.side is None:
                engine.execute(
                    f'CREATE OR REPLACE TEMP VIEW "{table}" AS SELECT '
                    f'__row, __j, __shape, __err, __raw FROM "{stage}" WHERE NOT __blank'
                )
            else:
                engine.execute(
                    f'CREATE OR REPLACE TEMP VIEW "{table}" AS SELECT '
                    "j.__row, j.__j, j.__shape, coalesce(s.reason, j.__err) AS __err, "
                    "CASE WHEN s.line IS NULL THEN j.__raw "
                    "ELSE CAST(json_object('bytes', s.bytes) AS VARCHAR) END AS __raw "
                    f'FROM "{stage}" AS j LEFT JOIN "{side}" AS s ON s.line = j.__row - {base} '
                    "WHERE NOT j.__blank"
                )
            return table
        elif p.fmt == "csv":
            d = dialect or CsvDialect()
            engine.execute(f'CREATE OR REPLACE TEMP VIEW "_ing_side" AS SELECT * FROM "{side}"')
            if p.gaps is not None:
                temp_table(engine, "_ing_csv_gaps", "ingest/csv_gaps", path=literal_path(p.gaps))
            else:
                engine.execute(
                    'CREATE OR REPLACE TEMP TABLE "_ing_csv_gaps" (line BIGINT, duckdb_line BIGINT)'
                )
            with engine.settings(preserve_insertion_order=True):
                temp_table(
                    engine,
                    "_ing_csv",
                    "ingest/csv_rows",
                    path=literal_path(p.read_path),
                    header=d.header,
                    skip=d.skip,
                    delim=d.delimiter,
                    quote=d.quote,
                    escape=d.escape_char,
                    **sizes,
                )
            columns = len(engine.describe('SELECT * FROM "_ing_csv"'))
            temp_table(
                engine,
                "_ing_csv_rejects",
                "ingest/csv_rejects",
                max_line_size=inputfile.MAX_LINE_SIZE,
                header_lines=d.header_lines,
                columns=columns,
            )
            temp_table(engine, "_ing_csv_valid", "ingest/csv_records", header_lines=d.header_lines)
            engine.execute(
                'CREATE OR REPLACE TEMP TABLE "_ing_src" AS SELECT * REPLACE '
                f"(CAST(__row + {base} AS BIGINT) AS __row) FROM (SELECT * FROM _ing_csv_valid "
                "UNION ALL BY NAME SELECT * EXCLUDE (__q) FROM _ing_csv_rejects)"
            )
        else:
            # a view over the file: the typed pass reads it once, no staged copy (at 20M rows
            # that copy spilled); the path is bound through a session variable (views take no
            # parameters); binding the view checks the file is Parquet
            # (`<table>_rows` adds the file's row number, by which the load picks a few rows)
            # (a file of fewer row groups than threads is read as row ranges, `row_ranges`)
            table = f"_ing_src_{i}"
            engine.execute(f"SET VARIABLE _ing_path_{i} = $path", path=literal_path(p.read_path))
            sql = queries.load("ingest/parquet_records").replace("_ing_path_N", f"_ing_path_{i}")
            row_groups, rows, largest = engine.rows(
                queries.load("ingest/row_groups"), path=literal_path(p.read_path)
            )[0]
            p.row_groups = int(row_groups)  # for the load's threads (`load.spare_thread`)
            ranges = row_ranges(
                int(rows),
                p.row_groups,
                int(engine.scalar("SELECT current_setting('threads')")),
                int(largest),
                size_bytes(str(engine.scalar("SELECT current_setting('memory_limit')"))),
            )
            if ranges:  # integers of ours, in the view's text
                sql = " UNION ALL ".join(
                    f"SELECT * FROM ({sql}) WHERE __fr >= {lo} AND __fr < {hi}" for lo, hi in ranges
                )
            engine.execute(
                f'CREATE OR REPLACE TEMP VIEW "{table}_rows" AS SELECT * REPLACE '
                f"(CAST(__row + {base} AS BIGINT) AS __row) FROM ({sql})"
            )
            every = f'SELECT * EXCLUDE (__fr) FROM "{table}_rows"'
            engine.execute(f'CREATE OR REPLACE TEMP VIEW "{table}" AS {every}')
            return table
        table = f"_ing_src_{i}"
        engine.execute(f'DROP TABLE IF EXISTS temp."{table}"')
        engine.execute(f'ALTER TABLE temp."_ing_src" RENAME TO "{table}"')
        return table
    except duckdb.OutOfMemoryException as e:
        raise memory_error(p, e) from None
    except duckdb.Error as e:
        raise read_error(p, e) from None


# DuckDB's own row group size: a row range read on a thread of its own holds at least this
MIN_RANGE_ROWS = 122_880


def row_ranges(
    rows: int, row_groups: int, threads: int, largest_bytes: int, memory_limit: int
) -> list[tuple[int, int]]:
    """The row ranges [lo, hi) of the 0-based row numbers to read a Parquet file of `rows`
    in `row_groups` (the largest `largest_bytes` compressed) as, one scan each, on `threads`
    cores; [] reads it as one scan. DuckDB reads one row group of a file per thread, so a
    file of fewer row groups than threads (pyarrow writes up to 1M rows as one, before
    version 15 up to 64M) is read and loaded on fewer threads than there are cores. Read as
    `threads` equal ranges, the load runs on every core; each scan decodes its range's row
    groups (in the load's statement, which runs without filter pushdown, every row group of
    the file). Only when each range holds at least MIN_RANGE_ROWS, and when a row group's
    data held by every scan at once takes at most half of `memory_limit` (bytes): a
    10M-row row group of 447 MB is read as one scan within 1.5 GB, not as two."""
    if (
        row_groups < threads
        and rows >= threads * MIN_RANGE_ROWS
        and threads * largest_bytes <= memory_limit // 2
    ):
        cuts = [rows * k // threads for k in range(threads + 1)]
        return list(itertools.pairwise(cuts))
    return []


_UNITS = {"bytes": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
_UNITS.update({"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50})


def size_bytes(text: str) -> int:
    """DuckDB's display of a size ('1.3 GiB', '512.0 MiB', '1000 bytes') in bytes; 0 when
    it is not one."""
    number, _, unit = text.strip().partition(" ")
    try:
        return int(float(number) * _UNITS[unit.strip()])
    except (KeyError, ValueError):
        return 0


def read_lines(
    engine: DuckDBEngine, table: str, path: str | list[str], filename: bool = False
) -> None:
    """Temp table `table` of the lines of JSONL file(s) `path` as read (json_lines.sql),
    rowid = 0-based line number (with `filename`, across files in the order given; it names
    each file as `path` does)."""
    with engine.settings(preserve_insertion_order=True):
        temp_table(
            engine,
            table,
            "ingest/json_lines",
            path=literal_path(path) if isinstance(path, str) else [literal_path(f) for f in path],
            delim=inputfile.LINE_DELIM,
            filename=filename,
            **_sizes(),
        )


def parse_lines(engine: DuckDBEngine, table: str, shape: Shape, numbered: str) -> None:
    """Temp table `table` of the records of the lines in `_ing_lines` (json_records.sql),
    each with its `shape` and its __row (the SELECT `numbered` gives each line's: __row,
    line); `_ing_lines` is dropped."""
    engine.execute(f'CREATE OR REPLACE TEMP VIEW "_ing_numbered" AS {numbered}')
    # the shape's parts at positions in $paths (integers of ours, not values); no paths (no
    # { sql } source): no types to read
    nested = " OR ".join(f"types[{i}] IN ('OBJECT', 'ARRAY')" for i in shape.tops) or "false"
    structures = ", ".join(f"json_structure(json_extract(line, $paths[{i}]))" for i in shape.tops)
    sql = (
        queries.load("ingest/json_records")
        .replace("_ing_types_", "json_type(line, $paths)" if shape.paths else "NULL::VARCHAR[]")
        .replace("_ing_nested_", f"({nested})")
        .replace("_ing_structures_", f"[{structures}]::JSON[]")
    )
    params: dict[str, Any] = {"levels": shape.levels}
    if shape.paths:
        params["paths"] = shape.paths
    with engine.settings(preserve_insertion_order=True):
        temp_table_sql(engine, table, sql, params)
    engine.execute('DROP VIEW temp."_ing_numbered"')
    engine.execute('DROP TABLE temp."_ing_lines"')


class ReadAhead:
    """The lines of one large JSONL input read into a temp table on a second thread while
    the main thread prepares the inputs (`inputfile.prepare`: hashing and checking every
    byte, in Python): two single-threaded passes over the same file at once. `take` hands
    the table to `stage` when the input is staged as it was read (not rewritten, not
    batched, not skipped); anything else is dropped with the ingest's scratch.

    The engine is this thread's alone until `join`: the caller runs no statement between
    `start` and `join` (prepare is Python only)."""

    def __init__(self, engine: DuckDBEngine, index: int, path: Path) -> None:
        self.engine = engine
        self.index = index
        self.path = str(path)
        self.table = f"_ing_ahead_{index}"
        self.ok = False
        self.thread = threading.Thread(target=self._read, name="forensics-read-ahead")

    def _read(self) -> None:
        try:
            read_lines(self.engine, self.table, self.path)
            self.ok = True
        except duckdb.Error:  # read again when staged, which reports the error as its own
            self.ok = False

    def start(self) -> ReadAhead:
        self.thread.start()
        return self

    def join(self, cancel: bool = False) -> None:
        """Wait for the read (`cancel`: interrupt it first; the caller is failing)."""
        if cancel and self.thread.is_alive():
            with contextlib.suppress(duckdb.Error):
                self.engine.con.interrupt()
        self.thread.join()

    def take(self, i: int, p: Prepared) -> str | None:
        """The table of input i's lines, when they are what staging p would read."""
        if self.ok and i == self.index and p.read_path == self.path and p.side is None:
            self.ok = False
            return self.table
        return None


def _sizes() -> dict[str, int]:
    """max_line_size and buffer_size of DuckDB's line reader."""
    read_limit = inputfile.MAX_LINE_SIZE + 1024
    return {"max_line_size": read_limit, "buffer_size": max(2 * read_limit, 32 << 20)}


def batchable(p: Prepared) -> bool:
    """Whether input p can be staged in a batch with others (`stage_batch`): Parquet, or
    JSONL that was not rewritten (a rewrite's side table of replaced lines is per input)."""
    return (p.fmt == "jsonl" and p.side is None) or p.fmt == "parquet"


def stage_batch(engine: DuckDBEngine, items: list[tuple[int, Prepared]], shape: Shape) -> None:
    """Stage the inputs `items` ((index, input), each `batchable`, all of one format) in one
    read (`_read_jsonl_batch`, `_read_parquet_batch`), each record's __row its input's index *
    STRIDE + its line or row, as `stage` would, in a few statements for the whole batch. Each
    input's `table` is set. When the batch cannot be read so, each half is staged so, down to
    inputs staged one by one (an unreadable one raises its own error, the first in order
    first)."""
    if len(items) > 1 and len({p.read_path for _, p in items}) == len(items):
        read = _read_parquet_batch if items[0][1].fmt == "parquet" else _read_jsonl_batch
        if read(engine, items, shape):
            return
        if len(items) > 2:  # halves, each read in one (an unreadable input: found in order)
            stage_batch(engine, items[: len(items) // 2], shape)
            stage_batch(engine, items[len(items) // 2 :], shape)
            return
    for i, p in items:
        p.table = stage(engine, p, i, shape)


def _read_parquet_batch(
    engine: DuckDBEngine, items: list[tuple[int, Prepared]], shape: Shape
) -> bool:
    """Parquet files of one schema (as their footers give it: names, types, nesting), so that
    each reads as it would alone, into one temp table (`_read_parquet_files`); consecutive
    files of another schema form their own batch. False when they cannot be read so."""
    paths = [p.read_path for _, p in items]
    try:
        with engine.settings(threads="1"):  # each file's elements in the footer's order
            schemas = dict(
                engine.rows(
                    queries.load("ingest/parquet_schemas"), paths=[literal_path(f) for f in paths]
                )
            )
    except duckdb.Error:
        return False
    if set(schemas) != set(paths):
        return False
    groups: list[list[tuple[int, Prepared]]] = []
    for item in items:
        if groups and schemas[item[1].read_path] == schemas[groups[-1][0][1].read_path]:
            groups[-1].append(item)
        else:
            groups.append([item])
    if len(groups) == 1:
        return _read_parquet_files(engine, items)
    for group in groups:  # each read as one, its footers already compared; else as a batch
        if len(group) == 1 or not _read_parquet_files(engine, group):
            stage_batch(engine, group, shape)
    return True


def _read_parquet_files(engine: DuckDBEngine, items: list[tuple[int, Prepared]]) -> bool:
    """Parquet files of one schema into one temp table `_ing_batch_<first index>` (each
    input's `table` set); False when they cannot be read so."""
    name = f"_ing_batch_{items[0][0]}"
    try:
        temp_table(
            engine,
            name,
            "ingest/parquet_batch",
            paths=[literal_path(p.read_path) for _, p in items],
            inps=[i for i, _ in items],
            stride=STRIDE,
        )
    except duckdb.Error:
        return False
    for _, p in items:
        p.table = name
    return True


def _read_jsonl_batch(
    engine: DuckDBEngine, items: list[tuple[int, Prepared]], shape: Shape
) -> bool:
    """JSONL files into one view `_ing_batch_<first index>` of their parsed lines. False when
    they cannot be read so, or the rows are not each file's lines in order."""
    name = f"_ing_batch_{items[0][0]}"
    paths = [p.read_path for _, p in items]
    try:
        files = f"{name}_files"
        read_lines(engine, "_ing_lines", paths, filename=True)
        temp_table(engine, files, "ingest/batch_files", paths=paths, inps=[i for i, _ in items])
        parse_lines(
            engine,
            "_ing_records",
            shape,
            f"SELECT f.inp * {STRIDE} + (l.rowid - f.start) + 1 AS __row, l.line "
            f'FROM _ing_lines AS l JOIN "{files}" AS f ON f.path = l.filename',
        )
        lines = f"{name}_lines"
        engine.execute(f'DROP TABLE IF EXISTS temp."{lines}"')
        engine.execute(f'ALTER TABLE temp."_ing_records" RENAME TO "{lines}"')
        spans = engine.rows(f'SELECT inp IS NOT NULL AND ok FROM "{files}"')
    except duckdb.Error:
        return False
    if not all(ok for (ok,) in spans):
        return False
    engine.execute(
        f'CREATE OR REPLACE TEMP VIEW "{name}" AS SELECT '
        f'__row, __j, __shape, __err, __raw FROM "{lines}" WHERE NOT __blank'
    )
    for _, p in items:
        p.table = name
    return True


def temp_table(engine: DuckDBEngine, table: str, query: str, **params: Any) -> None:
    """Temp table `table` from `queries/QUERY.sql`."""
    temp_table_sql(engine, table, queries.load(query), params)


def temp_table_sql(engine: DuckDBEngine, table: str, sql: str, params: dict[str, Any]) -> None:
    """Temp table `table` from a SQL text."""
    engine.execute(f'CREATE OR REPLACE TEMP TABLE "{table}" AS {sql}', **params)


def memory_error(p: Prepared, e: Exception) -> ResourceError:
    """DuckDB ran out of memory while reading or loading input p: one line naming it and
    the way out (not the file's or the mapping's fault)."""
    why = ""
    if p.fmt == "parquet":  # a row group is read whole: no spilling gets under it
        why = (
            "a Parquet row group is held whole while it is read (pyarrow before version 15 "
            "wrote up to 64M rows as one): a file of very large row groups needs that much "
            "memory, or smaller row groups"
        )
    return out_of_memory(e, where=p.path, why=why)


def read_error(p: Prepared, e: Exception) -> InputError:
    """The input cannot be read as its format: one line naming it (DuckDB's error names the
    file it read, which may be a decompressed or rewritten copy: the input is named)."""
    return InputError(
        f"cannot read as {p.fmt} ({first_line(e).replace(p.read_path, p.path)})",
        where=p.path,
        fix="check the file is complete and of the format its name or mapping says",
    )


def drop_scratch(engine: DuckDBEngine) -> None:
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
                engine.execute(f'DROP {kind} IF EXISTS temp."{name}"')
    for (name,) in engine.rows(
        "SELECT name FROM duckdb_variables() WHERE starts_with(name, '_ing_')"
    ):
        with contextlib.suppress(duckdb.Error):
            engine.execute(f"RESET VARIABLE {name}")
