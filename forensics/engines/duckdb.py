"""DuckDB behind the engine contract: the case database, one file (or in memory).

`DuckDBEngine` implements `SQLEngine` and, for ingest (which writes the case database), a
transaction, settings for one block, and the columns of a query (`describe`).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import duckdb
import polars as pl

from ..errors import ForensicsError, option, system_error
from . import queries
from .queries import bind

DEFAULT_MEMORY_LIMIT = "1.5GB"  # keeps a 20M-request case under 2 GB of RSS (benchmarks/)
_SETTING = re.compile(r"^[a-z_]+$")


class DuckDBEngine:
    """A DuckDB case database (a file, or in memory when `path` is None), time zone UTC."""

    errors: tuple[type[BaseException], ...] = (duckdb.Error,)

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        memory_limit: str | None = None,
        temp_dir: str | Path | None = None,
        read_only: bool = False,
        threads: int | None = None,
    ):
        self.path = Path(path) if path is not None else None
        self._pending: dict[str, Any] = {}  # settings to restore after a rollback
        # the names information_schema.tables lists, read once for `table_exists` (an analysis
        # asks ~45 times, 0.8 ms a question): a table this engine materializes or writes is
        # added; any other statement run through it (DDL, or SQL a caller wrote) forgets them
        self._catalog: set[str] | None = None
        # a bounded default (DuckDB's own is 80 % of RAM): past it DuckDB spills to temp_dir
        config: dict[str, Any] = {"memory_limit": memory_limit or DEFAULT_MEMORY_LIMIT}
        if temp_dir:
            config["temp_directory"] = str(temp_dir)
        if threads:
            config["threads"] = threads
        target = str(self.path) if self.path is not None else ":memory:"
        try:
            self.con = duckdb.connect(target, read_only=read_only, config=config)
            failure = None
        except duckdb.Error as e:
            failure = open_error(target, e)
        if failure is not None:  # raised outside the except: the one line says it all
            raise failure
        self.con.execute("SET TimeZone = 'UTC'")
        # DuckDB's own progress bar prints to stdout, which carries data only (--json, CSV);
        # progress is reported through forensics.progress by the front ends
        try:
            self.con.execute("SET enable_progress_bar = false")
            self.con.execute("SET enable_progress_bar_print = false")  # off if re-enabled
        except duckdb.Error:
            pass  # in Jupyter without ipywidgets DuckDB refuses the change; no stdout of ours
        # insertion order is not a contract; dropping it lets DuckDB stream and spill freely
        self.con.execute("SET preserve_insertion_order = false")

    # --- the contract (forensics.engines.contract.SQLEngine) -----------------------------

    @property
    def where(self) -> str | None:
        return str(self.path) if self.path is not None else None

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> DuckDBEngine:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def execute(self, sql: str, **params: Any) -> None:
        try:
            self.con.execute(sql, bind(sql, params))
        finally:
            self._catalog = None

    def run(self, query: str, **params: Any) -> None:
        self.execute(queries.load(query), **params)

    def materialize(self, table: str, query: str, **params: Any) -> None:
        self._materialize(table, query, params, temporary=False)

    def materialize_temporary(self, table: str, query: str, **params: Any) -> None:
        self._materialize(table, query, params, temporary=True)

    def _materialize(
        self, table: str, query: str, params: dict[str, Any], *, temporary: bool
    ) -> None:
        sql = queries.load(query)
        self.con.execute(
            f'CREATE OR REPLACE {_kind(temporary)} "{table}" AS {sql}', bind(sql, params)
        )
        self._created(table)

    def load_local(self, table: str, query: str, **params: Any) -> None:
        self.materialize(table, query, **params)

    def write_frame(
        self, table: str, frame: pl.DataFrame, order_by: str, *, temporary: bool = False
    ) -> None:
        view = f"_{table}_frame"
        # through the Arrow PyCapsule stream: frame.to_arrow() imports pyarrow (~25 ms a run)
        self.con.register(view, _ArrowStream(frame))
        try:
            self.con.execute(
                f'CREATE OR REPLACE {_kind(temporary)} "{table}" AS '
                f'SELECT * FROM {view} ORDER BY "{order_by}"'
            )
        finally:
            self.con.unregister(view)
        self._created(table)

    def frame(self, query: str, **params: Any) -> pl.DataFrame:
        return self._frame(queries.load(query), params)  # queries/ frames are SELECTs

    def sql_frame(self, sql: str, **params: Any) -> pl.DataFrame:
        try:
            return self._frame(sql, params)
        finally:
            self._catalog = None

    def _frame(self, sql: str, params: dict[str, Any]) -> pl.DataFrame:
        # the relation's Arrow PyCapsule stream: `.pl()` imports pyarrow (~25 ms a run)
        return pl.DataFrame(self.con.sql(sql, params=bind(sql, params)))

    def rows(self, sql: str, **params: Any) -> list[tuple[Any, ...]]:
        try:
            return self.con.execute(sql, bind(sql, params)).fetchall()
        finally:
            self._catalog = None

    def scalar(self, sql: str, **params: Any) -> Any:
        rows = self.rows(sql, **params)  # fetchall: DuckDB 2 refuses a statement after a
        return rows[0][0] if rows else None  # half-read result

    def read_table(self, table: str) -> pl.DataFrame:
        return self._frame(f'SELECT * FROM "{table}" ORDER BY ALL', {})

    def table_exists(self, table: str) -> bool:
        if self._catalog is None:
            names = self.con.execute("SELECT table_name FROM information_schema.tables")
            self._catalog = {str(n) for (n,) in names.fetchall()}
        return table in self._catalog

    def _created(self, table: str) -> None:
        """`table` was created by a statement of this engine (known without asking)."""
        if self._catalog is not None:
            self._catalog.add(table)

    # --- for ingest: writing the case database ------------------------------------------

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """The block's statements commit together, or roll back when it raises."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield
            self.con.execute("COMMIT")
        except BaseException:
            self._catalog = None  # what the block created is gone
            self.con.execute("ROLLBACK")
            self._restore_pending()
            raise

    @contextlib.contextmanager
    def settings(self, **values: bool | str) -> Iterator[None]:
        """DuckDB settings (`name=value`) for the block, each restored to its value before.
        When the block fails inside a transaction DuckDB has aborted, the restore cannot run
        yet (any statement fails with "transaction is aborted"): the block's own error is
        raised, and the settings are restored once `transaction` has rolled back."""
        before = {name: self._setting(name) for name in values}
        try:
            for name, value in values.items():
                self._set(name, value)
            yield
        except BaseException:
            try:
                self._restore(before)
            except duckdb.Error:  # the transaction is aborted: restored after the rollback
                self._pending.update(before)
            raise
        self._restore(before)

    def _restore(self, before: dict[str, Any]) -> None:
        for name, value in before.items():
            self._set(name, value)

    def _restore_pending(self) -> None:
        pending, self._pending = self._pending, {}
        with contextlib.suppress(duckdb.Error):  # never hides the error being raised
            self._restore(pending)

    def describe(self, sql: str, **params: Any) -> list[tuple[str, str]]:
        """The columns of a query's result, (name, DuckDB type) in order, without reading a
        row."""
        cur = self.con.execute(f"SELECT * FROM ({sql}) LIMIT 0", bind(sql, params))
        columns = [(d[0], str(d[1])) for d in cur.description or []]
        cur.fetchall()
        return columns

    def _setting(self, name: str) -> Any:
        if not _SETTING.match(name):
            raise ValueError(f"not a setting name: {name!r}")
        return self.scalar("SELECT current_setting($name)", name=name)

    def _set(self, name: str, value: Any) -> None:
        if not _SETTING.match(name):
            raise ValueError(f"not a setting name: {name!r}")
        # SET takes no parameters; names are checked and values are ours, quoted as literals
        if isinstance(value, bool):
            literal = "true" if value else "false"
        else:
            literal = "'" + str(value).replace("'", "''") + "'"
        self.con.execute(f"SET {name} = {literal}")


def _kind(temporary: bool) -> str:
    """What a table is created as: a working table (`temporary`) lives in the connection's
    memory and temporary folder, never in the case database file (nor its checkpoint)."""
    return "TEMP TABLE" if temporary else "TABLE"


class _ArrowStream:
    """A Polars frame seen only through the Arrow PyCapsule interface (no pyarrow needed)."""

    def __init__(self, frame: pl.DataFrame):
        self.frame = frame

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return self.frame.__arrow_c_stream__(requested_schema)


_LOCK_HOLDER = re.compile(r"\(PID (\d+)\)")


def open_error(target: str, e: Exception) -> ForensicsError:
    """The one-line error for a case database DuckDB cannot open: held by another process
    (DuckDB's own file lock) or not a DuckDB file (bad input, exit 2), a system fault such
    as a read-only or forbidden path (`errors.system_error`), or else unreadable."""
    text = str(e)
    if "Could not set lock on file" in text:
        holder = _LOCK_HOLDER.search(text)
        pid = f" (pid {holder.group(1)})" if holder else ""
        return ForensicsError(
            f"database is in use by another process{pid}",
            where=target,
            fix="wait for it to finish (or close the notebook holding it), or use another "
            + option("db"),
        )
    if "not a valid DuckDB database file" in text:
        return ForensicsError(
            "not a DuckDB database",
            where=target,
            fix="give the case database that ingest or run wrote, or a new file name",
        )
    fault = system_error(e)
    if fault is not None:
        return fault
    first = text.strip().splitlines()[0] if text.strip() else type(e).__name__
    return ForensicsError(
        f"cannot open the database ({first})",
        where=target,
        fix=f"check the path, its folder's permissions, and {option('memory_limit')}/"
        f"{option('temp_dir')} if given",
    )
