"""Source mappings (`*.mapping.toml`, docs: "Mappings") and the built-in profiles.

A mapping says, for each canonical field, where its value comes from in a source record: a
source path (a column, or a dotted path into nested JSON / Parquet structs), one DuckDB scalar
expression over the record's columns (`{ sql = "..." }`: no statements, subqueries or calls
outside `SQL_FUNCTIONS`, see `sql_problem`), or a constant (`{ const = v }`).
`[timestamp]` fixes how times are read (`origin`: epoch numbers count from that instant, not
from 1970, as in traces that start at 0); `[extra]` keeps named source fields in the `extra`
JSON column; `[csv]` declares a CSV dialect (never guessed from the data: RFC 4180 unless
declared). Loading is strict: an unknown key or field is refused with file, key and line.
"""

from __future__ import annotations

import functools
import json
import re
import tomllib
import zoneinfo
from dataclasses import InitVar, asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from .errors import InputError, decode_utf8, option
from .formats import digest
from .schema import MAPPABLE, REQUEST_FIELDS

FORMATS = ("jsonl", "csv", "parquet", "sglang", "vllm", "trtllm")
# the formats of engine logs (no [fields]: each is read by its own reader)
ENGINE_FORMATS = ("sglang", "vllm", "trtllm")
UNITS = ("iso8601", "s", "ms", "us")
PROFILES = ("canonical", "openai", "sglang", "vllm", "trtllm")
_TOP_KEYS = {"format", "fields", "timestamp", "extra", "csv"}
_TS_KEYS = {"unit", "timezone", "origin"}
_CSV_KEYS = {"delimiter", "quote", "escape", "header", "skip"}
# [timestamp] origin stays where every time it yields is representable (as a case file's times)
ORIGIN_MIN = datetime(1970, 1, 1, tzinfo=UTC)
ORIGIN_END = datetime(3000, 1, 1, tzinfo=UTC)
_EXTRA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

Kind = Literal["path", "sql", "const"]


@dataclass(frozen=True)
class FieldSource:
    """Where one canonical field's value comes from. `optional` paths (profiles only) may be
    absent."""

    kind: Kind
    value: Any
    line: int | None = None
    optional: bool = False


@dataclass(frozen=True)
class CsvDialect:
    """How a CSV input is split into records: fixed, never guessed from the data (a guessed
    comment character `#` once dropped records and cut `team#7` to `team`). The default is
    RFC 4180: comma, double quote (doubled inside a quoted value), the header on line 1, no
    comment lines. `skip` lines before the header are a declared preamble; `header = false`
    names the columns column0, column1, ..."""

    delimiter: str = ","
    quote: str = '"'
    escape: str | None = None  # None: the quote character (RFC 4180 doubling)
    header: bool = True
    skip: int = 0

    @property
    def escape_char(self) -> str:
        return self.quote if self.escape is None else self.escape

    @property
    def header_lines(self) -> int:
        """Physical lines before the first record: the preamble and the header."""
        return self.skip + (1 if self.header else 0)


@dataclass(frozen=True)
class Mapping:
    """A validated mapping: canonical field -> FieldSource, extras, time rules, and its origin."""

    origin: str
    format: str | None = None
    fields: dict[str, FieldSource] = field(default_factory=dict)
    extra: dict[str, FieldSource] = field(default_factory=dict)
    unit: str = "iso8601"
    timezone: str = "UTC"
    keep_extra_column: bool = False
    # [timestamp] origin: epoch numbers are offsets (in `unit`) from this instant (UTC)
    time_origin: datetime | None = None
    csv: CsvDialect = field(default_factory=CsvDialect)
    # False to fingerprint a mapping (integrity) or for ingest, which checks every { sql }
    # on the case database (checked_sql with its connection) before it runs one
    check_sql: InitVar[bool] = True

    def __post_init__(self, check_sql: bool) -> None:
        if not check_sql:
            return
        for section, key, src in self.sql_sources():
            self.checked_sql(section, key, src)

    def where(self, key: str, line: int | None) -> str:
        """`origin:line (key)` for error messages."""
        loc = f"{self.origin}:{line}" if line else self.origin
        return f"{loc} ({key})"

    def sql_sources(self) -> list[tuple[str, str, FieldSource]]:
        """(section, key, source) of every { sql = ... }."""
        return [
            (section, key, src)
            for section, table in (("fields", self.fields), ("extra", self.extra))
            for key, src in table.items()
            if src.kind == "sql"
        ]

    def checked_sql(
        self, section: str, key: str, src: FieldSource, parser: SqlParser | None = None
    ) -> str:
        """The sql of `src` if it is one allowed scalar expression (on DuckDB's own parse, by
        `parser` or a private in-memory database); else InputError naming file, line and key."""
        problem = sql_problem(src.value, parser)
        if problem is not None:
            raise InputError(
                f"sql {problem}", where=self.where(f"{section}.{key}", src.line), fix=SQL_FIX
            )
        return str(src.value)


def profile(name: str) -> Mapping:
    """A built-in mapping by name: `canonical`, `openai`, or an engine's logs (`sglang`,
    `vllm`, `trtllm`)."""
    if name == "canonical":
        fields = {
            f.name: FieldSource("path", f.name, optional=not f.required or f.name == "request_id")
            for f in REQUEST_FIELDS
        }
        return Mapping(origin="profile canonical", fields=fields, keep_extra_column=True)
    if name == "openai":
        fields = {
            "request_id": FieldSource("path", "id"),
            "ts": FieldSource("path", "created"),
            "model": FieldSource("path", "model"),
            "account_id": FieldSource("path", "user"),
            "prompt_tokens": FieldSource("path", "usage.prompt_tokens"),
            "completion_tokens": FieldSource("path", "usage.completion_tokens", optional=True),
            "status": FieldSource("path", "status", optional=True),
        }
        return Mapping(origin="profile openai", fields=fields, unit="s")
    if name in ENGINE_FORMATS:
        return Mapping(origin=f"profile {name}", format=name)
    raise InputError(
        f"unknown profile {name!r}",
        where=option("profile"),
        fix=f"use one of {', '.join(PROFILES)}, or give a mapping file",
    )


def load_mapping(path: str | Path, check_sql: bool = True) -> Mapping:
    """Parse and validate a `*.mapping.toml` file; InputError names file, key and line.
    `check_sql=False` skips the { sql } allowlist check: for a fingerprint, or for ingest,
    which checks each { sql } on the case database before it runs it."""
    p = Path(path)
    if not p.is_file():
        raise InputError("mapping file not found", where=str(p), fix="check the path")
    text = decode_utf8(p.read_bytes(), str(p), InputError)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(
            f"not valid TOML ({e})", where=str(p), fix="fix the TOML syntax of the mapping"
        ) from None
    origin = str(p)

    def err(what: str, section: str | None, key: str, fix: str) -> InputError:
        line = _key_line(text, section, key)
        loc = f"{origin}:{line}" if line else origin
        name = f"{section}.{key}" if section else key
        return InputError(f"{what} (key {name!r})", where=loc, fix=fix)

    for key in data:
        if key not in _TOP_KEYS:
            raise err(
                "unknown key", None, key, f"allowed top-level keys: {', '.join(sorted(_TOP_KEYS))}"
            )
    fmt = data.get("format")
    if fmt is not None and fmt not in FORMATS:
        raise err(f"unknown format {fmt!r}", None, "format", f"use one of {', '.join(FORMATS)}")
    fields_tbl = data.get("fields", {})
    if not isinstance(fields_tbl, dict):
        raise err("must be a table", None, "fields", "write it as a [fields] section")
    if fmt not in ENGINE_FORMATS and not fields_tbl:
        raise err("no fields mapped", None, "fields", "add a [fields] section")
    fields: dict[str, FieldSource] = {}
    for key, spec in fields_tbl.items():
        if key not in MAPPABLE:
            raise err(
                "unknown canonical field",
                "fields",
                key,
                f"canonical fields are: {', '.join(f.name for f in REQUEST_FIELDS)}",
            )
        src = _source(spec, lambda w, k=key: err(w, "fields", k, _SOURCE_FIX))
        fields[key] = FieldSource(src.kind, src.value, _key_line(text, "fields", key))
    extra: dict[str, FieldSource] = {}
    extra_tbl = data.get("extra", {})
    if not isinstance(extra_tbl, dict):
        raise err("must be a table", None, "extra", "write it as an [extra] section")
    for key, spec in extra_tbl.items():
        if not _EXTRA_NAME.match(key):
            raise err("bad extra name", "extra", key, "use letters, digits and _ only")
        src = _source(spec, lambda w, k=key: err(w, "extra", k, _SOURCE_FIX))
        extra[key] = FieldSource(src.kind, src.value, _key_line(text, "extra", key))
    ts_tbl = data.get("timestamp", {})
    if not isinstance(ts_tbl, dict):
        raise err("must be a table", None, "timestamp", "write it as a [timestamp] section")
    for key in ts_tbl:
        if key not in _TS_KEYS:
            raise err("unknown key", "timestamp", key, "allowed: unit, timezone, origin")
    unit = ts_tbl.get("unit", "iso8601")
    if unit not in UNITS:
        raise err(f"unknown unit {unit!r}", "timestamp", "unit", f"use one of {', '.join(UNITS)}")
    time_origin = _time_origin(ts_tbl, unit, err)
    tz = ts_tbl.get("timezone", "UTC")
    try:
        zoneinfo.ZoneInfo(str(tz))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise err(
            f"unknown time zone {tz!r}",
            "timestamp",
            "timezone",
            "use an IANA zone name such as UTC or America/New_York",
        ) from None
    dialect = _csv_dialect(data.get("csv"), fmt, err)
    if fmt not in ENGINE_FORMATS:
        for req in ("ts", "account_id", "model", "prompt_tokens"):
            if req not in fields:
                raise err(
                    f"required canonical field {req!r} is not mapped",
                    None,
                    "fields",
                    f'add `{req} = "source.path"` (or a const / sql) under [fields]',
                )
    return Mapping(
        origin=origin,
        format=fmt,
        fields=fields,
        extra=extra,
        unit=unit,
        timezone=str(tz),
        time_origin=time_origin,
        csv=dialect,
        check_sql=check_sql,
    )


def _time_origin(ts_tbl: dict[str, Any], unit: str, err: Any) -> datetime | None:
    """`[timestamp] origin` as an aware UTC datetime (None when not given): an instant with
    its UTC offset, for epoch numbers (unit s, ms or us) only."""
    if "origin" not in ts_tbl:
        return None
    value = ts_tbl["origin"]
    fix = 'write the instant with its UTC offset, e.g. origin = "2026-08-27T00:00:00Z"'
    if isinstance(value, str):
        text = value.strip()
        text = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
        try:
            value = datetime.fromisoformat(text)
        except ValueError:
            raise err(f"unparsable time {ts_tbl['origin']!r}", "timestamp", "origin", fix) from None
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise err("origin must be a time with a UTC offset", "timestamp", "origin", fix)
    at = value.astimezone(UTC)
    if not ORIGIN_MIN <= at < ORIGIN_END:
        raise err(
            f"origin {at.isoformat()} is outside 1970-01-01 .. 2999-12-31",
            "timestamp",
            "origin",
            "give the instant the trace's times count from",
        )
    if unit not in ("s", "ms", "us"):
        raise err(
            "origin applies to epoch numbers only",
            "timestamp",
            "origin",
            'set unit = "s", "ms" or "us" (the unit the offsets count in)',
        )
    return at


def _csv_dialect(table: Any, fmt: str | None, err: Any) -> CsvDialect:
    """The `[csv]` section as a CsvDialect (the default without one)."""
    if table is None:
        return CsvDialect()
    if not isinstance(table, dict):
        raise err("must be a table", None, "csv", "write it as a [csv] section")
    if fmt not in (None, "csv"):
        raise err(f"[csv] applies to format csv, not {fmt}", None, "csv", "remove [csv]")
    for key in table:
        if key == "comment":
            raise err(
                "comment lines are not supported",
                "csv",
                key,
                "a comment character also cuts any value holding it (team#7 -> team): "
                "remove comment lines, or declare leading ones as a preamble with skip = N",
            )
        if key not in _CSV_KEYS:
            raise err("unknown key", "csv", key, f"allowed: {', '.join(sorted(_CSV_KEYS))}")
    chars = {}
    for key in ("delimiter", "quote", "escape"):
        if key in table:
            value = table[key]
            empty_ok = key != "delimiter"
            if not isinstance(value, str) or len(value) > 1 or (not value and not empty_ok):
                raise err(
                    "must be one character" + (" or empty (none)" if empty_ok else ""),
                    "csv",
                    key,
                    'e.g. delimiter = ";"',
                )
            if value in ("\n", "\r"):
                raise err("cannot be a line break", "csv", key, 'e.g. delimiter = ";"')
            chars[key] = value
    header = table.get("header", True)
    if not isinstance(header, bool):
        raise err(
            "must be true or false", "csv", "header", "header = true: line 1 names the columns"
        )
    skip = table.get("skip", 0)
    if not isinstance(skip, int) or isinstance(skip, bool) or not 0 <= skip <= 1000:
        raise err("must be a number of lines, 0 to 1000", "csv", "skip", "e.g. skip = 1")
    dialect = CsvDialect(
        delimiter=chars.get("delimiter", ","),
        quote=chars.get("quote", '"'),
        escape=chars.get("escape"),
        header=header,
        skip=skip,
    )
    if dialect.delimiter in (dialect.quote, dialect.escape_char):
        raise err(
            "the delimiter is also the quote or escape",
            "csv",
            "delimiter",
            "give distinct characters",
        )
    return dialect


_SOURCE_FIX = 'write a source path ("a.b"), { sql = "DuckDB expression" } or { const = value }'


def _source(spec: Any, err: Any) -> FieldSource:
    if isinstance(spec, str):
        if not spec.strip():
            raise err("empty source path")
        return FieldSource("path", spec)
    if isinstance(spec, dict):
        if len(spec) != 1 or next(iter(spec)) not in ("sql", "const"):
            raise err(f"a field table takes exactly one of sql/const, got {sorted(spec)}")
        kind, value = next(iter(spec.items()))
        if kind == "sql" and (not isinstance(value, str) or not value.strip()):
            raise err("sql must be a non-empty string")
        if kind == "const" and isinstance(value, dict | list):
            raise err("const must be a string, number or boolean")
        if kind == "const" and isinstance(value, int) and not -(2**63) <= value < 2**63:
            raise err("const number too large (TOML integers are 64-bit)")
        return FieldSource(kind, value)
    raise err(f"unsupported value of type {type(spec).__name__}")


def _key_line(text: str, section: str | None, key: str) -> int | None:
    """1-based line of `key =` inside `[section]` (or at top level), if it can be found."""
    current: str | None = None
    pattern = re.compile(rf'^\s*(?:"{re.escape(key)}"|{re.escape(key)})\s*=')
    header = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]")
    for n, line in enumerate(text.splitlines(), start=1):
        m = header.match(line)
        if m:
            current = m.group(1)
            if section is None and current == key:
                return n
            continue
        if current == section and pattern.match(line):
            return n
    return None


# --- { sql = ... }: one scalar expression, nothing else ------------------------------------

# The DuckDB functions a mapping's { sql = ... } may call: pure scalar functions of the record's
# own values. An allowlist, not a denylist: anything not named here (file readers, getenv,
# current_setting, table functions, aggregates, macros, functions added by a later DuckDB) is
# refused. Operators (+, ||, LIKE, ->>, ...), CAST/TRY_CAST, CASE, IN (list), BETWEEN, IS NULL,
# AT TIME ZONE, EXTRACT and INTERVAL literals are allowed as syntax.
SQL_FUNCTIONS = frozenset(
    """
    coalesce nullif ifnull if greatest least try typeof
    lower upper lcase ucase trim ltrim rtrim length strlen len substr substring left right
    concat concat_ws replace split_part string_split starts_with ends_with prefix suffix
    contains strpos instr position lpad rpad reverse format printf md5 sha256
    regexp_extract regexp_matches regexp_replace regexp_full_match
    abs round floor ceil ceiling trunc sign
    epoch epoch_ms epoch_us epoch_ns to_timestamp make_timestamp make_timestamptz make_date
    strptime try_strptime strftime date_trunc date_part datepart date_diff datediff date_add
    timezone to_milliseconds to_microseconds to_seconds to_minutes to_hours to_days
    json_extract json_extract_string json_value json_type json_valid json_array_length
    list_extract list_element array_extract struct_extract array_length list_value struct_pack
    list_contains
    """.split()  # noqa: SIM905 (a word list reads better than 90 quoted names)
)
# DuckDB's parse names operators as functions; these are the ones an expression may use.
_SQL_OPERATORS = frozenset(
    "+ - * / // % ** ^ || ~~ !~~ ~~* !~~* ~~~ !~~~ -> ->> & | << >> ~".split()  # noqa: SIM905
)
# DuckDB parse-tree classes an expression may contain (anything else, e.g. SUBQUERY, STAR,
# PARAMETER, WINDOW, COLUMNS, is refused).
_DUCKDB_CLASSES = frozenset(
    {"CONSTANT", "COLUMN_REF", "FUNCTION", "CAST", "CASE", "COMPARISON", "CONJUNCTION"}
    | {"OPERATOR", "BETWEEN", "COLLATE", "LAMBDA", "TYPE"}
)
SQL_FIX = (
    "write one expression over the record's own columns, e.g. "
    "epoch_ms(ts_ms) or coalesce(user_id, 'unknown') (docs: Trust model)"
)


class SqlParser(Protocol):
    """What parses a { sql } expression: a DuckDB engine (its `scalar`)."""

    def scalar(self, sql: str, **params: Any) -> Any:
        """The first value of the first row of `sql`."""


def sql_problem(text: Any, parser: SqlParser | None = None) -> str | None:
    """Why `text` is not one scalar expression a mapping's { sql } may hold, or None when it
    is: the rules of `duckdb_sql_problem`, by `parser` or a private in-memory database
    (parsing only: nothing is read or run)."""
    if not isinstance(text, str) or not text.strip():
        return "must be a non-empty string"
    return duckdb_sql_problem(parser if parser is not None else _parser(), text)


class _PrivateParser:
    """A private in-memory DuckDB that only parses."""

    def __init__(self) -> None:
        import duckdb

        self.con = duckdb.connect()

    def scalar(self, sql: str, **params: Any) -> Any:
        rows = self.con.execute(sql, params).fetchall()
        return rows[0][0] if rows else None


@functools.cache
def _parser() -> SqlParser:
    return _PrivateParser()


def duckdb_sql_problem(parser: SqlParser, text: str) -> str | None:
    """The rules of `sql_problem` on DuckDB's own parse of `text` (json_serialize_sql parses
    and never runs), so the check sees exactly what DuckDB would execute."""
    doc = json.loads(parser.scalar("SELECT json_serialize_sql($q)", q=f"SELECT {text}"))
    if doc.get("error"):
        return f"does not parse as one SQL expression ({doc.get('error_message', '')})"
    stmts = doc["statements"]
    node = stmts[0]["node"] if len(stmts) == 1 else {}
    plain = (
        node.get("type") == "SELECT_NODE"
        and node.get("from_table", {}).get("type") == "EMPTY"
        and not node.get("modifiers")
        and not node.get("cte_map", {}).get("map")
        and all(node.get(k) is None for k in ("where_clause", "having", "sample", "qualify"))
        and not node.get("group_expressions")
        and not node.get("group_sets")
        and len(node.get("select_list", [])) == 1
        and not node["select_list"][0].get("alias")
    )
    if not plain:
        return "is not one expression (a statement, clause, alias or list)"

    def walk(o: Any) -> str | None:
        if isinstance(o, list):
            return next((p for p in map(walk, o) if p), None)
        if not isinstance(o, dict):
            return None
        cls = o.get("class")
        if cls is not None and cls not in _DUCKDB_CLASSES:
            what = {"SUBQUERY": "a subquery", "PARAMETER": "a $parameter", "STAR": "*"}
            return f"holds {what.get(cls, cls)}"
        if cls == "FUNCTION":
            name = o.get("function_name", "")
            allowed = _SQL_OPERATORS if o.get("is_operator") else SQL_FUNCTIONS
            if o.get("schema") or o.get("catalog") or name.lower() not in allowed:
                return f"calls {name}(), which a mapping may not call"
        return next((p for p in map(walk, o.values()) if p), None)

    return walk(node["select_list"])


def sql_columns(text: str, parser: SqlParser | None = None) -> list[tuple[str, ...]]:
    """The column references of one { sql } expression (each a path of names: `latency_ms`,
    `usage.prompt_tokens`), on DuckDB's own parse; empty when it does not parse."""
    doc = json.loads(
        (parser if parser is not None else _parser()).scalar(
            "SELECT json_serialize_sql($q)", q=f"SELECT {text}"
        )
    )
    found: dict[tuple[str, ...], None] = {}

    def walk(o: Any) -> None:
        if isinstance(o, list):
            for item in o:
                walk(item)
        elif isinstance(o, dict):
            if o.get("class") == "COLUMN_REF":
                found.setdefault(tuple(o.get("column_names", [])), None)
            for value in o.values():
                walk(value)

    if not doc.get("error"):
        walk(doc["statements"])
    return list(found)


def mapping_digest(m: Mapping) -> str:
    """sha256 of what a mapping does (format, fields, extras, time rules), not of its text:
    a comment or its file name does not change it; a built-in profile has one too."""
    fields = {k: [s.kind, s.value, s.optional] for k, s in sorted(m.fields.items())}
    extra = {k: [s.kind, s.value, s.optional] for k, s in sorted(m.extra.items())}
    body: dict[str, Any] = {
        "format": m.format,
        "fields": fields,
        "extra": extra,
        "unit": m.unit,
        "timezone": m.timezone,
        "keep_extra_column": m.keep_extra_column,
    }
    if m.time_origin is not None:  # only when set: earlier mappings keep their digest
        body["origin"] = m.time_origin.isoformat()
    if m.csv != CsvDialect():  # absent when default: digests recorded before it stay equal
        body["csv"] = asdict(m.csv)
    return digest(body)
