"""Apache Spark behind the engine seam: the same `queries/*.sql`, run on a Spark cluster.

`SparkEngine` implements the engine contract (`forensics.engines.contract.SQLEngine`). The
SQL stays in one place: each DuckDB-dialect query is transpiled to Spark SQL with SQLGlot
when first used, `$name` parameters becoming Spark's bound `:name` parameters. The few
DuckDB constructs SQLGlot does not carry over faithfully are rewritten here, on the syntax
tree (ordered `list()`, `GLOB`, `strftime` formats, `to_minutes`, `to_seconds`,
`query_table`), so no query is forked per engine.

The case store is a folder (local, HDFS, S3, ...) as `forensics ingest --to-parquet DIR`
writes it: the canonical `requests` as hive-partitioned Parquet (`day=`/`model=`) and the
small bookkeeping tables (`inputs`, engine evidence) beside it in `DIR_tables/NAME/`. Tables the
analysis materializes (`bands`, `data_owners`, ...) are written there too, so `notify` and
`report` find them in a later run, like the DuckDB case database; so are the small case tables
(the case file's capacity timeline, models, ...) that `write_frame` stores. Only small results
come back to the driver (as Polars frames, via Arrow); nothing collects the requests.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from types import TracebackType
from typing import Any, cast

import duckdb
import polars as pl
import pyarrow as pa
import sqlglot
from sqlglot import exp

from . import queries
from .queries import bind

TABLES = "_tables"  # STORE_tables/NAME/: the tables beside the request partitions
DEFAULT_MASTER = "local[*]"
APP_NAME = "kv-forensics"

_SPARK_FORMAT = {
    "%Y": "yyyy",
    "%m": "MM",
    "%d": "dd",
    "%H": "HH",
    "%M": "mm",
    "%S": "ss",
    "%f": "SSSSSS",
}


def resolve_master(master: str | None = None) -> str | None:
    """The master to set: --spark-master, then SPARK_MASTER, then none when a
    spark-defaults.conf sets `spark.master`, else `local[*]`."""
    if master:
        return master
    if os.environ.get("SPARK_MASTER"):
        return os.environ["SPARK_MASTER"]
    conf_dir = os.environ.get("SPARK_CONF_DIR") or (
        str(Path(os.environ["SPARK_HOME"]) / "conf") if os.environ.get("SPARK_HOME") else None
    )
    if conf_dir:
        defaults = Path(conf_dir) / "spark-defaults.conf"
        if defaults.is_file():
            for line in defaults.read_text(encoding="utf-8").splitlines():
                if line.strip().startswith("spark.master"):
                    return None
    return DEFAULT_MASTER


def session(master: str | None = None) -> Any:
    """A SparkSession (the active one if any) with the session time zone UTC."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(APP_NAME)
    chosen = resolve_master(master)
    if chosen:
        builder = builder.master(chosen)
    spark = (
        builder.config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    configure(spark)
    return spark


def configure(spark: Any) -> None:
    """What the analysis relies on in any session: UTC, partition values kept as text."""
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    spark.sparkContext.setLogLevel("ERROR")
    # a failing query is raised to Python; its multi-kilobyte JSON log line is noise
    jvm = spark.sparkContext._jvm
    jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
        "SQLQueryContextLogger", jvm.org.apache.logging.log4j.Level.OFF
    )


class SparkEngine:
    """The analysis on Spark over a Parquet case store `store` (see the module doc)."""

    errors: tuple[type[BaseException], ...] = (duckdb.Error,)

    def __init__(self, store: str | Path, *, master: str | None = None, spark: Any = None):
        from pyspark.sql import SparkSession

        self.path = str(store)
        self._owns_session = spark is None and SparkSession.getActiveSession() is None
        self.spark = spark if spark is not None else session(master)
        if spark is not None:
            configure(spark)
        self._views: set[str] = set()
        if self._exists(self.path) and self._has_parquet(self.path):
            self._register("requests", self.spark.read.parquet(self.path))
        for name in self._list(self._tables_dir()):
            self._register(name, self.spark.read.parquet(self._table_path(name)))

    # --- the seam ------------------------------------------------------------------------

    def close(self) -> None:
        """Drop this engine's views; stop the session only if this engine started it."""
        for name in self._views:
            self.spark.catalog.dropTempView(name)
        self._views.clear()
        if self._owns_session:
            self.spark.stop()

    def __enter__(self) -> SparkEngine:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def where(self) -> str | None:
        return self.path

    def execute(self, sql: str, **params: Any) -> None:
        """Run a DuckDB-dialect statement: a view becomes a temp view, a table is written to
        the store, anything else runs on Spark."""
        values = bind(sql, params)
        tree = sqlglot.parse_one(sql, read="duckdb")
        if isinstance(tree, exp.Create) and tree.kind == "VIEW":
            name = tree.this.name
            self._register(name, self._df(tree.expression.sql(dialect="duckdb"), values))
        elif isinstance(tree, exp.Create) and tree.kind == "TABLE":
            self._persist(tree.this.name, self._df(tree.expression.sql(dialect="duckdb"), values))
        elif isinstance(tree, exp.Drop):
            # sqlglot 30 names the dropped tables in `tables`, earlier versions in `this`
            for dropped in tree.args.get("tables") or [tree.this]:
                self.spark.catalog.dropTempView(dropped.name)
                self._views.discard(dropped.name)
        else:
            self._df(sql, values).collect()

    def run(self, query: str, **params: Any) -> None:
        """Run the statement in `queries/QUERY.sql`."""
        self.execute(queries.load(query), **params)

    def materialize(self, table: str, query: str, **params: Any) -> None:
        """Write the result of `queries/QUERY.sql` to the store as table `table`."""
        sql = queries.load(query)
        self._persist(table, self._df(sql, bind(sql, params)))

    def materialize_temporary(self, table: str, query: str, **params: Any) -> None:
        """`materialize`: a working table too is written to the store (the cluster reads it
        back from there)."""
        self.materialize(table, query, **params)

    def load_local(self, table: str, query: str, **params: Any) -> None:
        """Materialize a small table from a query over driver-local files (the accounts
        CSV): DuckDB reads it on the driver, exactly as the DuckDB engine would."""
        sql = queries.load(query)
        con = duckdb.connect()
        try:
            con.execute("SET TimeZone = 'UTC'")
            arrow = con.sql(sql, params=bind(sql, params)).to_arrow_table()
        finally:
            con.close()
        self._persist(table, self.spark.createDataFrame(_spark_arrow(arrow)))

    def write_frame(
        self, table: str, frame: pl.DataFrame, order_by: str, *, temporary: bool = False
    ) -> None:
        """Store a small Polars frame as table `table`, rows sorted by `order_by` (a
        `temporary` one too, as `materialize`)."""
        sorted_frame = frame.sort(order_by)
        arrow = _spark_arrow(sorted_frame.to_arrow())
        if arrow.num_rows:
            df = self.spark.createDataFrame(arrow)
        else:
            df = self.spark.createDataFrame([], _arrow_ddl(arrow.schema))
        self._persist(table, df.coalesce(1))

    def frame(self, query: str, **params: Any) -> pl.DataFrame:
        """The (small) result of `queries/QUERY.sql` as a Polars frame."""
        return self.sql_frame(queries.load(query), **params)

    def sql_frame(self, sql: str, **params: Any) -> pl.DataFrame:
        """The (small) result of a DuckDB-dialect SQL text as a Polars frame."""
        result = pl.from_arrow(self._df(sql, bind(sql, params)).toArrow())
        assert isinstance(result, pl.DataFrame)
        return result

    def rows(self, sql: str, **params: Any) -> list[tuple[Any, ...]]:
        """All rows of an ad-hoc SQL text as tuples (small results only)."""
        return self.sql_frame(sql, **params).rows()

    def scalar(self, sql: str, **params: Any) -> Any:
        """The first value of the first row (None when there is no row)."""
        rows = self.rows(sql, **params)
        return rows[0][0] if rows else None

    def read_table(self, table: str) -> pl.DataFrame:
        """Every row of a small table, sorted by all its columns."""
        return self.sql_frame(f"SELECT * FROM {table} ORDER BY ALL")

    def table_exists(self, table: str) -> bool:
        """Whether the store (or this session) holds `table`."""
        return table in self._views or bool(self.spark.catalog.tableExists(table))

    # --- internals -----------------------------------------------------------------------

    def _df(self, sql: str, values: dict[str, Any]) -> Any:
        text, inlined = spark_sql(sql, tuple(sorted(_frame_params(sql, values).items())))
        args = {k: v for k, v in values.items() if k not in inlined}
        return self.spark.sql(text, args=args) if args else self.spark.sql(text)

    def _register(self, name: str, df: Any) -> None:
        df.createOrReplaceTempView(name)
        self._views.add(name)

    def _persist(self, table: str, df: Any) -> None:
        path = self._table_path(table)
        df.write.mode("overwrite").parquet(path)
        self._register(table, self.spark.read.parquet(path))

    def _tables_dir(self) -> str:
        return self.path.rstrip("/") + TABLES

    def _table_path(self, table: str) -> str:
        return self._tables_dir() + "/" + table

    def _fs(self, path: str) -> tuple[Any, Any]:
        jvm = self.spark.sparkContext._jvm
        hpath = jvm.org.apache.hadoop.fs.Path(path)
        conf = self.spark.sparkContext._jsc.hadoopConfiguration()
        return hpath.getFileSystem(conf), hpath

    def _exists(self, path: str) -> bool:
        fs, hpath = self._fs(path)
        return bool(fs.exists(hpath))

    def _list(self, path: str) -> list[str]:
        if not self._exists(path):
            return []
        fs, hpath = self._fs(path)
        return sorted(
            s.getPath().getName()
            for s in fs.listStatus(hpath)
            if s.isDirectory() and not s.getPath().getName().startswith(("_", "."))
        )

    def _has_parquet(self, path: str) -> bool:
        fs, hpath = self._fs(path)
        files = fs.listFiles(hpath, True)
        while files.hasNext():
            status = files.next()
            parts = status.getPath().toString()[len(path) :].split("/")
            if parts[-1].endswith(".parquet") and not any(
                p.startswith(("_", ".")) for p in parts if p
            ):
                return True
        return False


# --- transpiling ------------------------------------------------------------------------


@functools.cache
def spark_sql(
    sql: str, frame_params: tuple[tuple[str, int], ...] = ()
) -> tuple[str, frozenset[str]]:
    """(Spark SQL text, the parameters inlined) for a DuckDB-dialect query.

    Spark parses window frame bounds before it binds parameters, so integer parameters used
    as frame bounds (`to_minutes($n)` in a RANGE frame) are inlined as interval literals;
    they are validated integers, never text.
    """
    tree = sqlglot.parse_one(sql, read="duckdb")
    inline = dict(frame_params)
    # children before parents, so a rewritten node's arguments are rewritten too
    for node in reversed(list(tree.walk())):
        new = _rewrite(cast(exp.Expression, node), inline)
        if new is not node:
            if node is tree:
                tree = new
            else:
                node.replace(new)
    return tree.sql(dialect="spark"), frozenset(inline)


def _frame_params(sql: str, values: dict[str, Any]) -> dict[str, int]:
    """The parameters used inside a window frame bound, with their (integer) values."""
    if "RANGE" not in sql.upper() and "ROWS" not in sql.upper():
        return {}
    tree = sqlglot.parse_one(sql, read="duckdb")
    found: dict[str, int] = {}
    for spec in tree.find_all(exp.WindowSpec):
        for key in ("start", "end"):
            bound = spec.args.get(key)
            if isinstance(bound, exp.Expression):
                for ph in bound.find_all(exp.Placeholder):
                    value = values[ph.name]
                    if not isinstance(value, int) or isinstance(value, bool):
                        raise TypeError(f"frame bound parameter {ph.name} must be an int")
                    found[ph.name] = value
    return found


def _rewrite(node: exp.Expression, inline: dict[str, int]) -> exp.Expression:
    """DuckDB constructs SQLGlot does not carry over to Spark faithfully, rewritten."""
    if isinstance(node, exp.CTE) and node.args.get("materialized") is not None:
        # `AS [NOT] MATERIALIZED` steers DuckDB's planner; Spark has no such clause
        node.set("materialized", None)
        return node
    if isinstance(node, exp.ArrayAgg) and isinstance(node.this, exp.Order):
        if isinstance(node.parent, exp.Filter):
            return node  # rewritten with its FILTER clause, below
        return _ordered_list(node.this)
    if (
        isinstance(node, exp.Filter)
        and isinstance(node.this, exp.ArrayAgg)
        and isinstance(node.this.this, exp.Order)
    ):
        return _ordered_list(node.this.this, node.expression)
    if isinstance(node, exp.DataType) and node.is_type(exp.DataType.Type.INT128):
        return exp.DataType.build("DECIMAL(38, 0)")  # HUGEINT: Spark has no 128-bit integer
    if isinstance(node, exp.Glob):
        return exp.RegexpLike(this=node.this, expression=_glob_regex(node.expression))
    if isinstance(node, exp.TimeToStr):
        fmt = node.args["format"]
        return exp.Anonymous(
            this="DATE_FORMAT",
            expressions=[node.this, exp.Literal.string(_spark_format(fmt.name))],
        )
    if isinstance(node, exp.Anonymous):
        name = node.name.lower()
        args = node.expressions
        if name == "timezone" and len(args) == 2 and args[0].name.upper() == "UTC":
            return args[1]  # the session time zone is UTC: the instant's UTC wall clock
        if name == "to_minutes" and len(args) == 1:
            arg = args[0]
            if isinstance(arg, exp.Placeholder) and arg.name in inline:
                return exp.Interval(
                    this=exp.Literal.string(str(inline[arg.name])), unit=exp.var("MINUTE")
                )
            return exp.Anonymous(
                this="MAKE_DT_INTERVAL",
                expressions=[exp.Literal.number(0), exp.Literal.number(0), arg],
            )
        if name == "to_seconds" and len(args) == 1:
            return exp.Anonymous(
                this="MAKE_DT_INTERVAL",
                expressions=[*(exp.Literal.number(0) for _ in range(3)), args[0]],
            )
        if name == "query_table" and len(args) == 1:
            return exp.Anonymous(this="IDENTIFIER", expressions=args)
    return node


def _ordered_list(order: exp.Order, where: exp.Expression | None = None) -> exp.Expression:
    """`list(x ORDER BY k...) [FILTER (WHERE c)]` as
    transform(array_sort(collect_list(struct(k..., x)) [FILTER (WHERE c)]), e -> e._v)."""
    keys = []
    for i, ordered in enumerate(order.expressions):
        if ordered.args.get("desc"):
            raise NotImplementedError("list(... ORDER BY ... DESC) is not transpiled")
        keys.append(exp.alias_(ordered.this.copy(), f"_k{i}"))
    value = exp.alias_(order.this.copy(), "_v")
    struct = exp.Struct(expressions=[*keys, value])
    collected: exp.Expression = exp.Anonymous(this="COLLECT_LIST", expressions=[struct])
    if where is not None:
        collected = exp.Filter(this=collected, expression=where.copy())
    sorted_ = exp.Anonymous(this="ARRAY_SORT", expressions=[collected])
    lam = exp.Lambda(
        this=exp.Dot(this=exp.column("_e"), expression=exp.to_identifier("_v")),
        expressions=[exp.to_identifier("_e")],
    )
    return exp.Anonymous(this="TRANSFORM", expressions=[sorted_, lam])


def _glob_regex(pattern: exp.Expression) -> exp.Expression:
    """A SQL expression turning a glob pattern (`*`, `?`, `[...]`) into an anchored regex.
    The one-character classes `[[]`, `[*]` and `[?]` (how a generated [[capacity]] entry
    writes a literal `[`, `*` or `?`) become escaped characters first, so the wildcard steps
    skip them and Java does not read a nested class."""
    escaped = exp.Anonymous(
        this="REGEXP_REPLACE",
        expressions=[
            pattern.copy(),
            exp.Literal.string(r"([.+^${}()|\\])"),
            exp.Literal.string(r"\\$1"),
        ],
    )
    literal_bracket = exp.Anonymous(  # Java reads a `[` inside a class as a nested class
        this="REPLACE",
        expressions=[escaped, exp.Literal.string("[[]"), exp.Literal.string(r"\[")],
    )
    literal_star = exp.Anonymous(
        this="REPLACE",
        expressions=[literal_bracket, exp.Literal.string("[*]"), exp.Literal.string(r"\*")],
    )
    literal_qmark = exp.Anonymous(
        this="REPLACE",
        expressions=[literal_star, exp.Literal.string("[?]"), exp.Literal.string(r"\?")],
    )
    star = exp.Anonymous(
        this="REGEXP_REPLACE",
        expressions=[literal_qmark, exp.Literal.string(r"(?<!\\)\*"), exp.Literal.string(".*")],
    )
    qmark = exp.Anonymous(
        this="REGEXP_REPLACE",
        expressions=[star, exp.Literal.string(r"(?<!\\)\?"), exp.Literal.string(".")],
    )
    negated = exp.Anonymous(
        this="REPLACE", expressions=[qmark, exp.Literal.string("[!"), exp.Literal.string("[^")]
    )
    return exp.DPipe(
        this=exp.DPipe(this=exp.Literal.string("^"), expression=negated),
        expression=exp.Literal.string("$"),
    )


def _spark_format(fmt: str) -> str:
    """A strftime format (`%Y-%m-%dT%H:%M:%S.%f`) as a Spark datetime pattern."""
    out: list[str] = []
    literal: list[str] = []
    i = 0

    def flush() -> None:
        if literal:
            text = "".join(literal).replace("'", "''")
            out.append(text if all(c in "-:. /" for c in text) else f"'{text}'")
            literal.clear()

    while i < len(fmt):
        code = fmt[i : i + 2]
        if code in _SPARK_FORMAT:
            flush()
            out.append(_SPARK_FORMAT[code])
            i += 2
        else:
            literal.append(fmt[i])
            i += 1
    flush()
    return "".join(out)


def _spark_arrow(table: pa.Table) -> pa.Table:
    """Arrow types Spark accepts: plain strings and lists (no views, no large types)."""

    def plain(t: pa.DataType) -> pa.DataType:
        if pa.types.is_large_string(t) or pa.types.is_string_view(t):
            return pa.string()
        if pa.types.is_large_list(t) or pa.types.is_list_view(t):
            return pa.list_(plain(t.value_type))
        return t

    schema = pa.schema([pa.field(f.name, plain(f.type)) for f in table.schema])
    return table.cast(schema)


def _arrow_ddl(schema: pa.Schema) -> str:
    """A Spark DDL schema for an (empty) Arrow table of flat columns."""
    names = {
        pa.string(): "STRING",
        pa.int64(): "BIGINT",
        pa.int32(): "INT",
        pa.float64(): "DOUBLE",
        pa.bool_(): "BOOLEAN",
    }

    def ddl(t: pa.DataType) -> str:
        return "TIMESTAMP" if pa.types.is_timestamp(t) else names.get(t, "STRING")

    return ", ".join(f"`{f.name}` {ddl(f.type)}" for f in schema)
