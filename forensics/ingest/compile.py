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
from ..mapping import FieldSource, Mapping, sql_columns
from .inputfile import Prepared, csv_header
from .shape import json_path, levels
from .staging import temp_table


@dataclass(frozen=True)
class Compiled:
    """The SQL of one mapping on one input (see `compile_mapping`)."""

    fields: dict[str, FieldSource]  # the canonical fields the input provides
    select: str  # __row, __raw, __err, __dup, __sqlerr, v_, n_ and t_<field>, extra
    params: dict[str, Any]  # the parameters both SELECTs take
    raw_select: str  # __row, raw: the mapped values of each record `_ing_src` holds, as JSON
    sql_checks: dict[str, str]  # { sql } label (fields.ts_end) -> its expression, unguarded
    sql_source: str  # what a { sql } expression reads (its record's columns)
    sql_mixed: dict[str, list[str]]  # { sql } label -> its input columns of mixed JSON types
    ids: str  # __row, v_request_id: `select` cut to the id (a JSON path read alone)


def _json_structure(engine: DuckDBEngine) -> dict[str, Any] | None:
    engine.execute('CREATE OR REPLACE TEMP VIEW "_ing_json" AS SELECT * FROM _ing_src')
    temp_table(engine, "_ing_shapes", "ingest/shapes")
    text = engine.scalar(queries.load("ingest/json_structure"))
    return json.loads(text) if text else None


def input_structures(engine: DuckDBEngine, table: str, stride: int) -> dict[int, Any]:
    """The merged structure of each input's JSON objects in the staged batch `table` (input
    index -> structure; an input with no JSON object is left out)."""
    engine.execute(f'CREATE OR REPLACE TEMP VIEW "_ing_json" AS SELECT * FROM "{table}"')
    rows = engine.rows(queries.load("ingest/input_structures"), stride=stride)
    return {int(inp): json.loads(text) for inp, text in rows if text}


def signature(structure: Any, m: Mapping, i: int) -> Any:
    """What `compile_mapping` makes of the mapping on a JSONL input of this merged
    `structure` (input index i): inputs of equal signatures compile to the same SQL, so
    they load as one run. Without { sql } sources the structure matters only through which
    mapped paths it has (`_json_has`); with them, the structure itself, and an input whose
    records disagree on some value's JSON type (`JSON` in it, settled by its own records'
    majority) compiles alone."""
    if structure is None:
        return ("none",)
    if m.sql_sources():
        text = json.dumps(structure, sort_keys=True)
        return ("alone", i) if '"JSON"' in text else ("structure", text)
    paths = [s.value for s in (*m.fields.values(), *m.extra.values()) if s.kind == "path"]
    return ("paths", tuple(_json_has(structure, str(path)) for path in paths))


def compile_mapping(engine: DuckDBEngine, p: Prepared, m: Mapping) -> Compiled:
    """The mapping `m` on staged input `p` (view `_ing_src`), as `Compiled`: the fields
    used, the SELECT of the mapped records (__row, __raw, __err, __dup, __sqlerr, v_<field>
    as text, n_<field> typed, t_<field> the text read as a count, status or time, extra)
    and the SELECT (of the same parameters, but for $unit and $tz) of each quarantined
    record's raw values: __row, raw = a JSON object of its mapped values only (source path ->
    value as in the source; `fields.F`/`extra.X` -> the value of a { sql } source), never
    unmapped content such as prompt text; for an unreadable record, `__raw` ({"bytes": N}).

    `__dup` names a mapped JSON key that a record repeats (in the object holding it, or an
    object on its path): the record is ambiguous (DuckDB reads the first, most tools the
    last). `__sqlerr` names the first { sql } source whose expression failed on the record
    (an error, not a NULL it returned), or whose input column holds a value of another type
    than most records give it (the records' JSON types are settled by majority)."""
    params: dict[str, Any] = {}
    source = "_ing_src"  # what the mapped SELECT reads (and { sql = ... } binds against)
    sql_sources = m.sql_sources()
    conflicts: list[tuple[tuple[str, ...], str]] = []  # (path, column ref) settled by majority
    if p.fmt == "jsonl":
        structure = _json_structure(engine)
        if structure is not None and sql_sources:
            refs = [r for _, _, src in sql_sources for r in sql_columns(src.value, engine)]
            structure, conflicts = _settle_types(engine, structure, refs)
            # the records as columns for { sql = ... }: a subquery of the typed pass, not a copy
            source = (
                "(SELECT * EXCLUDE (__rec), __rec.* FROM "
                "(SELECT *, json_transform(__j, $structure) AS __rec FROM _ing_src))"
            )
            # only the columns the expressions read are transformed (each costs every record
            # its conversion); all when one names no column (a lambda's parameter, a typo:
            # an error then lists every column the source has)
            params["structure"] = json.dumps(_read_by(structure, refs))
            columns = dict(engine.describe(f"SELECT * FROM {source}", **params))
        else:
            columns = dict(engine.describe("SELECT * FROM _ing_src"))
    else:
        structure = None
        if p.fmt == "csv" and m.csv.header:
            _refuse_repeated_columns(m, p, engine)
        columns = dict(engine.describe("SELECT * FROM _ing_src"))
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
    sql_exprs: list[tuple[str, str]] = []  # (label, sql) of each { sql } source, in order
    keys: list[tuple[str, ...]] = []  # JSON key paths mapped (for the duplicate-key check)

    def expr(key: str, src: FieldSource, as_json: bool, label: str) -> str | None:
        if src.kind == "const":
            params[f"c_{key}"] = src.value if as_json else str(src.value)
            return f"${'c_' + key}"
        if src.kind == "sql":  # computed once per record in the source (see below)
            sql_exprs.append((label, str(src.value)))
            if structure is not None:
                keys.extend(sql_columns(src.value, engine))
            return f"__sq_{len(sql_exprs) - 1}.v"
        path = src.value
        if p.fmt == "jsonl":
            if structure is None:
                return "NULL"
            if not _json_has(structure, path):
                if src.optional:
                    return None
                raise _lacks(m, label, src, p.path, "records have no such field")
            # one json_extract(_string) call per record for all paths: parses it once
            paths = json_paths if as_json else text_paths
            paths.append(_json_path(path))
            keys.append(tuple(path.split(".")))
            return f"{'__jx' if as_json else '__jv'}[{len(paths)}]"
        col = _column_ref(path, columns)
        if col is None:
            if src.optional:
                return None
            why = "no such column"
            if p.fmt == "csv":
                names = ", ".join(repr(c) for c in _visible(columns)[:6])
                where = (
                    f"its header, line {m.csv.skip + 1}, names {names}"
                    if m.csv.header
                    else f"without a header its columns are {names}"
                )
                why = f"no such column: {where}; a preamble before the header is declared "
                why += "with [csv] skip = N"
            raise _lacks(m, label, src, p.path, why)
        return col

    select = ["__row", "__raw", "__err"]
    effective: dict[str, FieldSource] = {}
    field_exprs: dict[str, str] = {}
    for f in schema.REQUEST_FIELDS:
        src = m.fields.get(f.name)
        e = expr(f.name, src, False, f"fields.{f.name}") if src is not None else None
        if e is not None and src is not None:
            effective[f.name] = src
            field_exprs[f.name] = e
            raw(src, f"fields.{f.name}", e)
    pairs = []
    for i, (name, src) in enumerate(sorted(m.extra.items())):
        e = expr(f"x{i}", src, True, f"extra.{name}")
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
    sql_source = source
    mixed: dict[str, list[str]] = {}
    if sql_exprs:
        # each { sql } once per record: its value, or NULL when it failed (try() makes an
        # error NULL; the struct tells that apart from a NULL the expression returned). On
        # its own lines: a trailing -- comment ends there
        guarded = ", ".join(
            f"try(struct_pack(v := (\n{sql}\n))) AS __sq_{k}"
            for k, (_, sql) in enumerate(sql_exprs)
        )
        source = f"(SELECT *, {guarded} FROM {source})"
        failed, mixed = _sql_failed(sql_exprs, conflicts, engine, params)
        select.append(f"{failed} AS __sqlerr")
    else:
        select.append("NULL::VARCHAR AS __sqlerr")
    raw_source = source
    lists = []
    if text_paths:
        params["text_paths"] = text_paths
        lists.append("json_extract_string(__j, $text_paths) AS __jv")
    if json_paths:
        params["json_paths"] = json_paths
        lists.append("json_extract(__j, $json_paths) AS __jx")
    shape_join = ""
    no_dups = ["NULL::VARCHAR AS __dup", "NULL::VARCHAR[] AS __dups"]
    if keys and structure is not None:
        # the shapes (`__shape`, forensics/ingest/shape.py) whose keys repeat in an object
        # holding a mapped key: only their records are checked key by key (none, most often)
        temp_table(engine, "_ing_shape_keys", "ingest/shape_keys")
        if engine.scalar("SELECT count(*) FROM _ing_shape_keys"):
            key_paths, repeated = _duplicate_keys(keys, params)
            params["key_paths"] = key_paths
            shape_join = " AS s LEFT JOIN _ing_shape_keys AS k ON k.__shape = s.__shape"
            lists.append(
                "CASE WHEN k.__shape IS NOT NULL THEN json_keys(__j, $key_paths) END AS __jk"
            )
            select.append(f"CASE WHEN __jk IS NOT NULL THEN ({repeated})[1] END AS __dup")
            select.append(f"CASE WHEN __jk IS NOT NULL THEN {repeated} END AS __dups")
        else:
            select.extend(no_dups)
    else:
        select.extend(no_dups)
    _ambiguous_when(effective, engine, params)
    if lists:
        star = "s.*" if shape_join else "*"
        source = f"(SELECT {star}, {', '.join(lists)} FROM {source}{shape_join})"
    types = _types(engine, source, field_exprs, params)
    readings = []  # t_<field>: the reading of a count, status or time given as text
    for f in schema.REQUEST_FIELDS:
        e = field_exprs.get(f.name)
        simple = m.fields[f.name].kind == "path" if e else False
        typ = types.get(f.name, "VARCHAR")
        text, typed = _typed(f, e, typ, simple, m.timezone) if e else ("NULL", None)
        select.append(f"{text}::VARCHAR AS v_{f.name}")
        if f.name in _CONVERTED:
            n_type = "BIGINT" if f.name == "status" else f.sql_type
            select.append(f"{typed or 'NULL'}::{n_type} AS n_{f.name}")
            readings.append(_reading(f, text, n_type, params, m))
    raw_pairs = []
    for k, (key, value) in enumerate(raw_values.items()):
        params[f"rk_{k}"] = key
        raw_pairs.append(f"$rk_{k}, {value}")
    if raw_paths:
        params["raw_paths"] = raw_paths
        raw_source = f"(SELECT *, json_extract(__j, $raw_paths) AS __rx FROM {raw_source})"
    raw_obj = f"json_object({', '.join(raw_pairs)})" if raw_pairs else "'{}'"
    raw_sql = f"SELECT __row, coalesce(__raw, CAST({raw_obj} AS VARCHAR)) AS raw FROM {raw_source}"
    mapped = f"SELECT {', '.join(select)} FROM {source}"
    ids = mapped  # the duplicate check reads no reading: it need not plan them
    select_sql = f"SELECT *, {', '.join(readings)} FROM ({mapped})"
    id_src = effective.get("request_id")
    field = next(f for f in schema.REQUEST_FIELDS if f.name == "request_id")
    if p.fmt == "jsonl" and structure is not None and id_src is not None and id_src.kind == "path":
        # the id alone, one path per record rather than every mapped one (the duplicate
        # checks read only the id)
        params["id_path"] = _json_path(str(id_src.value))
        text, _ = _typed(field, "__jid", "VARCHAR", True, m.timezone)
        ids = (
            f"SELECT __row, {text}::VARCHAR AS v_request_id FROM "
            "(SELECT __row, json_extract_string(__j, $id_path) AS __jid FROM _ing_src)"
        )
    elif p.fmt != "jsonl" and id_src is not None and id_src.kind == "path":
        # a column: the id's expression alone (planning every mapped one took ~4 ms)
        text, _ = _typed(field, field_exprs["request_id"], types["request_id"], True, m.timezone)
        ids = f"SELECT __row, {text}::VARCHAR AS v_request_id FROM _ing_src"
    return Compiled(
        effective,
        select_sql,
        params,
        raw_sql,
        dict(sql_exprs),
        sql_source,
        mixed,
        ids,
    )


def _refuse_repeated_columns(m: Mapping, p: Prepared, engine: DuckDBEngine) -> None:
    """Refuse a CSV input whose header names a column the mapping reads more than once:
    DuckDB reads the first (and binds names without case or surrounding spaces), another
    tool may read the last. A repeated column the mapping does not read is no ambiguity (as
    for a repeated JSON key)."""
    names = [
        str(src.value) for src in (*m.fields.values(), *m.extra.values()) if src.kind == "path"
    ]
    for _, _, src in m.sql_sources():
        names.extend(ref[0] for ref in sql_columns(src.value, engine) if ref)
    if m.keep_extra_column:
        names.append("extra")
    header = csv_header(p.read_path, m.csv)
    positions: dict[str, list[int]] = {}
    for i, column in enumerate(header, start=1):
        positions.setdefault(column.strip().lower(), []).append(i)
    for name in dict.fromkeys(names):
        found = positions.get(name.strip().lower(), [])
        if len(found) > 1:
            listed = ", ".join(str(i) for i in found[:-1]) + f" and {found[-1]}"
            raise InputError(
                f"the header names the column {header[found[0] - 1]!r} {_times(len(found))} "
                f"(columns {listed}), and the mapping reads it: which value a reader takes "
                "is a guess",
                where=f"{p.path}:{m.csv.skip + 1}",
                fix="rename or remove the repeated column in the header (a column the mapping "
                "does not read may repeat)",
            )


def _times(n: int) -> str:
    return "twice" if n == 2 else f"{n} times"


def _read_by(structure: Any, refs: list[tuple[str, ...]]) -> Any:
    """The merged structure cut to the top-level keys the { sql } column references `refs`
    name (and `extra`, which a mapping may keep): what the expressions can read (a { sql }
    holds no `*`: `Mapping.checked_sql`). The whole structure when a reference names no key
    of it, or none is named (json_transform takes no empty structure)."""
    tops = {ref[0] for ref in refs if ref}
    if not isinstance(structure, dict) or not tops or not tops <= structure.keys():
        return structure
    return {k: v for k, v in structure.items() if k in tops | {"extra"}}


def _sql_failed(
    sql_exprs: list[tuple[str, str]],
    conflicts: list[tuple[tuple[str, ...], str]],
    engine: DuckDBEngine,
    params: dict[str, Any],
) -> tuple[str, dict[str, list[str]]]:
    """(the CASE naming the first { sql } source that failed on the record (NULL: none),
    label -> the input columns of mixed JSON types it reads)."""
    cases = []
    mixed: dict[str, list[str]] = {}
    for k, (label, sql) in enumerate(sql_exprs):
        failed = [f"__sq_{k} IS NULL"]
        refs = sql_columns(sql, engine)
        for n, (path, column) in enumerate(conflicts):
            if any(ref[: len(path)] == path for ref in refs):
                # a value of another JSON type than most records give this column: the
                # lenient transform made it NULL, which the expression must not read as absent
                params[f"cp_{k}_{n}"] = _json_path(".".join(path))
                mixed.setdefault(label, []).append(".".join(path))
                failed.append(
                    f"(coalesce(json_type(__j, $cp_{k}_{n}) <> 'NULL', false) AND {column} IS NULL)"
                )
        params[f"sl_{k}"] = label
        cases.append(f"WHEN {' OR '.join(failed)} THEN $sl_{k}")
    return f"CASE {' '.join(cases)} END", mixed


def _duplicate_keys(keys: list[tuple[str, ...]], params: dict[str, Any]) -> tuple[list[str], str]:
    """(the JSON paths of the objects holding a mapped key, the list of the mapped keys a
    record repeats, dotted: parents before children, so that its first names a repeated
    `usage` rather than the `usage.prompt_tokens` read from its first copy). `__jk[i]`: the
    keys of object i in their order, repeats included (json_keys)."""
    found, ordered = levels(keys)
    cases = []
    for n, key_path in enumerate(ordered):
        keys_of = f"__jk[{found.index(json_path(key_path[:-1])) + 1}]"
        params[f"dk_{n}"] = key_path[-1]
        params[f"dl_{n}"] = ".".join(key_path)
        # the first and the last position of the key differ: it is there twice or more
        cases.append(
            f"CASE WHEN list_position({keys_of}, $dk_{n}) <> len({keys_of}) + 1 - "
            f"list_position(list_reverse({keys_of}), $dk_{n}) THEN $dl_{n} END"
        )
    return found, f"list_filter([{', '.join(cases)}], lambda k: k IS NOT NULL)"


def _ambiguous_when(
    effective: dict[str, FieldSource], engine: DuckDBEngine, params: dict[str, Any]
) -> None:
    """Params `amb_<field>` for each field kept in `quarantine_values`: the dotted JSON keys
    (the field's path and each object on it; for a { sql } field, those of every column it
    reads) whose repeat in a record (`__dups`) leaves the field unreadable there. DuckDB
    reads the first of repeated keys, most tools the last: neither may rule a record out."""
    for name in QUARANTINE_VALUE_FIELDS:
        src = effective.get(name)
        paths: list[tuple[str, ...]] = []
        if src is not None and src.kind == "path":
            paths = [tuple(str(src.value).split("."))]
        elif src is not None and src.kind == "sql":
            paths = [ref for ref in sql_columns(src.value, engine) if ref]
        labels = {".".join(p[: depth + 1]) for p in paths for depth in range(len(p))}
        params[f"amb_{name}"] = sorted(labels)


# the canonical fields `quarantine_values` keeps of a quarantined record
QUARANTINE_VALUE_FIELDS = (
    "request_id",
    "ts",
    "account_id",
    "model",
    "prompt_tokens",
    "status",
    "prefill_node",
)


def _settle_types(
    engine: DuckDBEngine, structure: Any, refs: list[tuple[str, ...]]
) -> tuple[Any, list[tuple[tuple[str, ...], str]]]:
    """The merged structure with each column a { sql } reads that the records give values of
    irreconcilable JSON types (`JSON` in the structure: a string in one record, numbers in
    the rest) typed as most records type it, so the expression binds; and those (path,
    column reference), so the records of another type fail the expression one by one rather
    than the whole file. A column most records hold as an object or list stays `JSON`."""
    settled: list[tuple[tuple[str, ...], str]] = []
    shapes: list[tuple[Any, int]] | None = None
    for ref in refs:
        node = structure
        path: tuple[str, ...] = ()
        for part in ref:
            if not isinstance(node, dict) or part not in node:
                break
            path = (*path, part)
            if node[part] == "JSON":
                if shapes is None:
                    shapes = [
                        (json.loads(shape), n)
                        for shape, n in engine.rows(queries.load("ingest/json_shapes"))
                    ]
                typ = _majority_type(shapes, path)
                if typ is not None and all(p != path for p, _ in settled):
                    node[part] = typ
                    settled.append((path, ".".join(_ident(x) for x in path)))
                break
            node = node[part]
    return structure, settled


_NUMBERS = ("UBIGINT", "BIGINT", "DOUBLE")


def _majority_type(shapes: list[tuple[Any, int]], path: tuple[str, ...]) -> str | None:
    """The scalar JSON type most records give `path` (numbers counted together, as the widest
    of them), or None when most hold an object or list there."""
    counts: dict[str, int] = {}
    widest = 0
    for shape, n in shapes:
        node = shape
        for part in path:
            node = node.get(part) if isinstance(node, dict) else None
        if node is None or node == "NULL":
            continue
        if node in _NUMBERS:
            widest = max(widest, _NUMBERS.index(node))
            kind = "number"
        else:
            kind = node if isinstance(node, str) else "nested"
        counts[kind] = counts.get(kind, 0) + n
    if not counts:
        return None
    kind = max(sorted(counts), key=lambda k: counts[k])
    if kind == "nested" or kind == "JSON":
        return None
    return _NUMBERS[widest] if kind == "number" else kind


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


def _typed(f: schema.Field, e: str, typ: str, simple: bool, tz: str) -> tuple[str, str | None]:
    """(text, typed) expressions of a field's source value `e` of DuckDB type `typ`: counts
    and status of an integer type and times of a timestamp type are passed as they are
    (`n_F`: BIGINT, TIMESTAMPTZ; typed.sql checks their range), with no round trip through
    text; anything else as text (`v_F`, spaces trimmed, '' = NULL), which typed.sql parses.
    A naive timestamp in a zone `tz` other than UTC goes as text too: its local time must
    name one instant (macro_time.sql). `simple`: `e` is a column or path reference, cheap
    to repeat."""
    if f.name in (*schema.TOKEN_FIELDS, "status") and typ in _INT_TYPES:
        return "NULL", f"CAST({e} AS BIGINT)"
    if f.name in schema.TIME_FIELDS and typ == "TIMESTAMP WITH TIME ZONE":
        return "NULL", e
    if f.name in schema.TIME_FIELDS and typ in _TIME_TYPES and tz == "UTC":
        return "NULL", f"timezone('UTC', CAST({e} AS TIMESTAMP))"
    if f.name in schema.TIME_FIELDS and typ in _TIME_TYPES:
        return f"CAST(CAST({e} AS TIMESTAMP) AS VARCHAR)", None
    if simple and typ == "VARCHAR":
        # trim copies the text: only when there is a space to cut. contains() first (a byte
        # search) spares the two end checks for the many values with no space at all (1M
        # ids, one thread: 40 -> 22 ms; the bare column 14 ms)
        return (
            f"NULLIF(CASE WHEN contains({e}, ' ') AND (starts_with({e}, ' ') "
            f"OR ends_with({e}, ' ')) THEN trim({e}) ELSE {e} END, '')"
        ), None
    return f"NULLIF(trim(CAST({e} AS VARCHAR)), '')", None


def _reading(f: schema.Field, text: str, n_type: str, params: dict[str, Any], m: Mapping) -> str:
    """The select of t_<field>: the reading of a count, status or time field's text (its
    column v_<field>), or NULL when it is not given as text. Only a field given as text binds
    the parsing macro (planning _ing_time takes ~9 ms a statement, _ing_int ~2 ms)."""
    if text == "NULL":
        return f"NULL::{n_type} AS t_{f.name}"
    if f.name in schema.TIME_FIELDS:
        params.update(unit=m.unit, tz=m.timezone)
        return f"_ing_time(v_{f.name}, $unit, $tz) AS t_{f.name}"
    return f"_ing_int(v_{f.name}) AS t_{f.name}"


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


def _lacks(m: Mapping, label: str, src: FieldSource, path: str, why: str) -> InputError:
    """A mapped field (`label`: `fields.prompt_tokens`, `extra.bootstrap_room`) whose source
    the input lacks, named as the mapping names it."""
    shown = label.removeprefix("fields.")
    return InputError(
        f"{shown} points at {src.value!r}, which {path} lacks ({why})",
        where=m.where(label if label.startswith("fields.") else "extra", src.line),
        fix="map it to a field the source has, or use { const = ... }",
    )


def _json_path(path: str) -> str:
    return json_path(tuple(path.split("."))) if path else "$"


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
