"""The mapping compiled to SQL: for one staged input, the SELECT of its mapped records
(each field as text or typed, the extra JSON) and the SELECT of the raw mapped values of the
records quarantined; each { sql } checked on the case database before it runs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import duckdb

from .. import schema
from ..engines import DuckDBEngine, queries
from ..errors import InputError, first_line
from ..mapping import FieldSource, Mapping
from .inputfile import Prepared


@dataclass(frozen=True)
class Compiled:
    """The SQL of one mapping on one input (see `compile_mapping`)."""

    fields: dict[str, FieldSource]  # the canonical fields the input provides
    select: str  # __row, __raw, __err, v_<field> as text, n_<field> typed, extra
    params: dict[str, Any]  # the parameters both SELECTs take
    raw_select: str  # __row, raw: the mapped values of each quarantined record, as JSON


def _json_structure(engine: DuckDBEngine) -> dict[str, Any] | None:
    engine.execute('CREATE OR REPLACE TEMP VIEW "_ing_json" AS SELECT * FROM _ing_src')
    text = engine.scalar(queries.load("ingest/json_structure"))
    return json.loads(text) if text else None


def compile_mapping(engine: DuckDBEngine, p: Prepared, m: Mapping) -> Compiled:
    """The mapping `m` on staged input `p` (view `_ing_src`), as `Compiled`: the fields
    used, the SELECT of the mapped records (__row, __raw, __err, v_<field> as text, n_<field>
    typed, extra) and the SELECT (same parameters) of each quarantined record's raw values:
    __row, raw = a JSON object of its mapped values only (source path -> value as in the
    source; `fields.F`/`extra.X` -> the value of a { sql } source), never unmapped content
    such as prompt text; for an unreadable record, `__raw` ({"bytes": N})."""
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
            columns = dict(engine.describe(f"SELECT * FROM {source}", **params))
        else:
            columns = dict(engine.describe("SELECT * FROM _ing_src"))
    else:
        structure = None
        columns = dict(engine.describe("SELECT * FROM _ing_src"))
    raw_source = source
    raw_values: dict[str, str] = {}  # raw key -> expression of the source value
    raw_paths: list[str] = []  # JSONL: paths of the raw values, read as JSON

    def raw(src: FieldSource, label: str, e: str) -> None:
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

    def expr(key: str, src: FieldSource, as_json: bool) -> str | None:
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
    effective: dict[str, FieldSource] = {}
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
    validate_sql(engine, m, p, columns, source, params)
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
    return Compiled(effective, f"SELECT {', '.join(select)} FROM {source}", params, raw_sql)


_CONVERTED = {*schema.TOKEN_FIELDS, *schema.TIME_FIELDS, "status"}  # text parsed in typed.sql
_INT_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER")
_TIME_TYPES = ("TIMESTAMP", "TIMESTAMP_NS", "TIMESTAMP_MS", "TIMESTAMP_S", "DATE")


def _types(
    engine: DuckDBEngine, source: str, exprs: dict[str, str], params: dict[str, Any]
) -> dict[str, str]:
    """The DuckDB type of each field's source expression (field -> type name)."""
    if not exprs:
        return {}
    described = engine.describe(f"SELECT {', '.join(exprs.values())} FROM {source}", **params)
    return dict(zip(exprs, [typ for _, typ in described], strict=True))


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


def validate_sql(
    engine: DuckDBEngine,
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
        expr = m.checked_sql(section, key, src, engine)
        try:
            engine.execute(f"SELECT (\n{expr}\n) FROM {source} LIMIT 0", **params)
        except duckdb.Error as e:
            raise _sql_error(m, p, section, key, src, columns, first_line(e)) from None


def _sql_error(
    m: Mapping,
    p: Prepared,
    section: str,
    key: str,
    src: FieldSource,
    columns: dict[str, str],
    error: str,
) -> InputError:
    """Why a { sql } does not bind on the source, with the fix that applies: a column the
    source lacks, or (anything else) values of the wrong type for the expression."""
    visible = _visible(columns)
    if "Referenced column" in error or "not found in FROM clause" in error:
        return InputError(
            f"sql of {section}.{key} names a column {p.path} lacks ({error})",
            where=m.where(f"{section}.{key}", src.line),
            fix=f"refer only to the source's columns: {', '.join(visible)}",
        )
    typed = ", ".join(f"{c} {columns[c]}" for c in visible)
    fix = (
        f"the source's columns are {typed}: cast where the expression needs another type, "
        f"e.g. CAST({visible[0] if visible else 'col'} AS BIGINT)"
    )
    if section == "fields" and key in ("ts", "ts_end"):
        fix += (
            "; for epoch numbers counted from an instant, map the column itself and set "
            "[timestamp] unit and origin"
        )
    return InputError(
        f"sql of {section}.{key} does not type-check on {p.path} ({error})",
        where=m.where(f"{section}.{key}", src.line),
        fix=fix,
    )


def _visible(columns: dict[str, str]) -> list[str]:
    return [c for c in columns if not c.startswith("__")][:20]


def _lacks(m: Mapping, key: str, src: FieldSource, path: str, why: str) -> InputError:
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
