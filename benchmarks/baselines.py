"""The responder's alternatives to the toolkit, measured by `benchmarks/run.py` (issues 14, 24).

Equal work: `duckdb_equal_work` (plain DuckDB SQL) and `polars_equal_work` (Polars) compute,
from one Parquet file of requests and the case's incident.toml, what `forensics analyze`
computes for the bands, the exposure, the pool-walkback data owners and the blast radius
(docs/decisions.md): the band of every request of the case's models inside the window, every
(exposed request, owner request) pair, and per model and prefill node of every request (any
model, any time) its requests, those over the prefill capacity in force, excluded, of unknown
capacity, the first and last over and those in and outside the window. Both are written here
independently of forensics/ and queries/ (neither is imported; the case file is read with
tomllib), with other techniques than the toolkit's (a CASE chain over the capacity entries,
ASOF joins for the walk-back), so that `compare` agreeing with the toolkit is evidence, not a
tautology. The blast radius here takes the `[[capacity]]` entries alone: the toolkit also takes
an engine's own prefill pool for a model no entry holds, and another model's own context
limit, from engine logs, which the benchmark's cases do not have (so the case's context
window bounds the case's models only, and other models have no upper bound).

Bare reads: `duckdb_bare_read` is DuckDB's own read_parquet / read_json into a table of a
fresh database file (no mapping, typing, de-duplication or accounting): the floor for
loading the same log.

Equal-work JSONL ingest (issue 24): `duckdb_equal_work_ingest` (plain DuckDB SQL, plus
hashlib for the sha256) and `polars_equal_work_ingest` do what `forensics ingest` does to the
sample's JSONL(.gz) gateway log: every line read with its physical number (blank lines are no
records), the mapped fields extracted with one parse and typed, every invalid record set aside
with its reason, the first record of each request_id loaded, later identical ones counted as
duplicates and different ones quarantined as conflicting, the input's sha256. They are written
for the sample gateway's mapping (GATEWAY_FIELDS) and its values; `compare_ingest` checks they
loaded the same rows and set aside the same records for the same reasons as the toolkit. Not
done (the toolkit does it): the byte-level line checks (UTF-8, CR, line length, the delimiter)
and reading what precedes the break of a truncated gzip stream, the finer time reasons (a
bad offset, a zone name, out of range: here all "unparsable time"), `quarantine.raw`.

Each returns a JSON-ready dict with `seconds` (the work only: interpreter start and imports
excluded; for the equal-work analyses the figures summary.json reports, counted from the
tables, included, as analyze counts them too) and the figures the benchmark checks.
"""

from __future__ import annotations

import hashlib
import re
import time
import tomllib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

DEFAULT_STATUS = 200  # docs/schema.md: a request without a status (NULL) is read as 200
REQUEST_COLUMNS = (
    "request_id",
    "ts",
    "account_id",
    "model",
    "prompt_tokens",
    "completion_tokens",
    "status",
    "prefill_node",
    "decode_node",
    "ts_end",
)


# --- the case --------------------------------------------------------------------------------


def utc(value: str | datetime | None) -> datetime | None:
    """A case-file time (ISO 8601, any offset or Z, naive = UTC) as an aware UTC datetime."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        text = text[:-1] + "+00:00" if text[-1:] in "Zz" else text
        value = datetime.fromisoformat(re.sub(r"(\.\d{6})\d+", r"\1", text))
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC)


def case_settings(case_path: str | Path) -> dict[str, Any]:
    """Models, context window, success statuses, window, [[capacity]] entries (file order;
    over_from: the smallest prompt over the entry, its reject_from, else tokens + 1; models:
    the glob of the models it holds for, None for every model) and excluded accounts of an
    incident.toml."""
    path = Path(case_path)
    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    excluded: set[str] = set()
    for ex in doc.get("exclude", []):
        excluded.update(ex.get("accounts", []))
        if "file" in ex:
            for line in (path.parent / ex["file"]).read_text(encoding="utf-8").splitlines():
                if line.strip() and not line.lstrip().startswith("#"):
                    excluded.add(line.strip())
    return {
        "models": list(doc["models"]),
        "context_window": int(doc["context_window"]),
        "success_status": [int(s) for s in doc.get("success_status", [DEFAULT_STATUS])],
        "start": utc(doc["window"]["start"]),
        "end": utc(doc["window"]["end"]),
        "capacity": [
            {
                "role": c["role"],
                "nodes": c.get("nodes", "*"),
                "tokens": int(c["tokens"]),
                "over_from": int(c.get("reject_from", int(c["tokens"]) + 1)),
                "start": utc(c["start"]),
                "end": utc(c.get("end")),
                "models": c.get("models"),
            }
            for c in doc.get("capacity", [])
        ],
        "excluded": sorted(excluded),
    }


def export_requests(db: str | Path, parquet: str | Path) -> int:
    """Write the case database's `requests` (the analysis columns) to one Parquet file: the
    input both baselines read, holding the same typed records `forensics analyze` reads."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        cols = ", ".join(REQUEST_COLUMNS)
        con.execute(f"COPY (SELECT {cols} FROM requests) TO '{parquet}' (FORMAT parquet)")
        return int(con.execute("SELECT count(*) FROM requests").fetchall()[0][0])
    finally:
        con.close()


# --- DuckDB: bare read ---------------------------------------------------------------------


def duckdb_bare_read(log: str, db: str, memory_limit: str | None = None) -> dict[str, Any]:
    """CREATE TABLE raw AS SELECT * FROM read_json/read_parquet(log), into a fresh file."""
    import duckdb

    for stale in (Path(db), Path(db + ".wal")):
        stale.unlink(missing_ok=True)
    config = {"memory_limit": memory_limit} if memory_limit else {}
    con = duckdb.connect(db, config=config)
    reader = "read_json($p, ignore_errors = true)"  # skips the torn lines
    if log.endswith(".parquet"):
        reader = "read_parquet($p)"
    t0 = time.perf_counter()
    con.execute(f"CREATE TABLE raw AS SELECT * FROM {reader}", {"p": log})
    con.execute("CHECKPOINT")
    seconds = time.perf_counter() - t0
    rows = con.execute("SELECT count(*) FROM raw").fetchall()[0][0]
    con.close()
    return {"seconds": seconds, "rows": int(rows)}


# --- DuckDB: equal-work JSONL ingest, plain SQL ---------------------------------------------

# The gateway log of `forensics sample` (and tests/fixtures/ingest): its mapping, written out
# here as SQL by hand, the way a responder would (fields of the mapping -> JSON paths).
GATEWAY_FIELDS = {
    "request_id": "id",
    "ts": "timestamp",
    "account_id": "account.id",
    "model": "model",
    "prompt_tokens": "usage.prompt_tokens",
    "completion_tokens": "usage.completion_tokens",
    "status": "status",
    "prefill_node": "route.prefill",
    "decode_node": "route.decode",
    "ts_end": {"sql": "timestamp::TIMESTAMPTZ + to_milliseconds(latency_ms)"},
}
GATEWAY_EXTRA = {"bootstrap_room": "route.bootstrap_room"}
LINE_DELIM = "\x1f\x1e\x1d\x1c"  # never in a JSON line: read_csv hands over each line whole
REQUESTS_TABLE_COLUMNS = (*REQUEST_COLUMNS[:-1], "ts_end", "source", "source_row", "extra")

# one json_extract_string per line for every path (one parse), as text
_PATHS = [
    "$.id",
    "$.timestamp",
    "$.account.id",
    "$.model",
    "$.usage.prompt_tokens",
    "$.usage.completion_tokens",
    "$.status",
    "$.route.prefill",
    "$.route.decode",
    "$.latency_ms",
]
_ISO = (
    "[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.,][0-9]+)?)?)?"
    " ?(Z|UTC|GMT|[+-][0-9]{2}(:?[0-9]{2})?)?"
)
_TYPED = f"""
CREATE TEMP TABLE typed AS
WITH parsed AS (
    SELECT
        rowid + 1 AS line_no,
        strlen(line) AS bytes,
        CASE WHEN json_valid(line) AND starts_with(ltrim(line), '{{') THEN
            json_extract_string(line, $paths) END AS v,
        CASE WHEN json_valid(line) AND starts_with(ltrim(line), '{{') THEN
            json_extract(line, '$.route.bootstrap_room') END AS room
    FROM lines
    WHERE trim(line) <> ''  -- a blank line is no record (its number still counts)
),
text AS (
    SELECT line_no, bytes, v IS NULL AS invalid,
        nullif(trim(v[1]), '') AS request_id, nullif(trim(v[2]), '') AS ts_text,
        nullif(trim(v[3]), '') AS account_id, nullif(trim(v[4]), '') AS model,
        nullif(trim(v[5]), '') AS prompt_text, nullif(trim(v[6]), '') AS completion_text,
        nullif(trim(v[7]), '') AS status_text, nullif(trim(v[8]), '') AS prefill_node,
        nullif(trim(v[9]), '') AS decode_node,
        try(CAST(v[2] AS TIMESTAMPTZ) + to_milliseconds(CAST(v[10] AS BIGINT))) AS ts_end,
        CASE WHEN v IS NOT NULL THEN json_object('bootstrap_room', room) END AS extra
    FROM parsed
),
typed AS (
    SELECT *,
        CASE WHEN regexp_full_match(prompt_text, '[+-]?[0-9]+')
            THEN TRY_CAST(prompt_text AS BIGINT) END AS prompt_tokens,
        CASE WHEN regexp_full_match(completion_text, '[+-]?[0-9]+')
            THEN TRY_CAST(completion_text AS BIGINT) END AS completion_tokens,
        CASE WHEN regexp_full_match(status_text, '[+-]?[0-9]+')
            THEN TRY_CAST(status_text AS INTEGER) END AS status_value,
        CASE WHEN regexp_full_match(upper(ts_text), '{_ISO}')
            THEN TRY_CAST(replace(upper(ts_text), ',', '.') AS TIMESTAMPTZ) END AS ts
    FROM text
)
SELECT
    line_no, request_id, ts, account_id, model, prompt_tokens, completion_tokens,
    status_value AS status, prefill_node, decode_node, ts_end, extra,
    CASE
        WHEN invalid THEN 'invalid JSON'
        WHEN request_id IS NULL THEN 'missing required field request_id'
        WHEN ts_text IS NULL THEN 'missing required field ts'
        WHEN account_id IS NULL THEN 'missing required field account_id'
        WHEN model IS NULL THEN 'missing required field model'
        WHEN prompt_text IS NULL THEN 'missing required field prompt_tokens'
        WHEN prompt_tokens IS NULL THEN _why(prompt_text, 'token count prompt_tokens')
        WHEN prompt_tokens < 0 THEN 'negative token count prompt_tokens'
        WHEN completion_text IS NOT NULL AND completion_tokens IS NULL
            THEN _why(completion_text, 'token count completion_tokens')
        WHEN completion_tokens < 0 THEN 'negative token count completion_tokens'
        WHEN ts IS NULL THEN 'unparsable time ts'
        WHEN status_text IS NOT NULL AND status_value IS NULL THEN _why(status_text, 'status')
    END AS reason
FROM typed
"""
_WHY = """
CREATE TEMP MACRO _why(v, what) AS CASE
    WHEN NOT regexp_full_match(v, '[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][+-]?[0-9]+)?')
        THEN 'non-numeric ' || what
    WHEN regexp_matches(v, '\\.[0-9]*[1-9]') THEN 'fractional ' || what
    ELSE 'out-of-range ' || what
END
"""
_SAME_CONTENT = " AND ".join(
    # a missing status (NULL) compares as the 200 it is read as
    f"coalesce(t.{c}, {DEFAULT_STATUS}) = coalesce(f.{c}, {DEFAULT_STATUS})"
    if c == "status"
    else f"t.{c} IS NOT DISTINCT FROM f.{c}"
    for c in (*REQUEST_COLUMNS[1:], "extra")  # every loaded column but the id and provenance
)


def duckdb_equal_work_ingest(
    log: str, db: str, mapping: str, memory_limit: str | None = None
) -> dict[str, Any]:
    """What `forensics ingest LOG --mapping gateway.mapping.toml` does to a JSONL(.gz) gateway
    log, in plain DuckDB SQL (plus hashlib for the sha256): every line read with its physical
    number, the mapped fields extracted (one parse per line) and typed, every invalid record
    set aside with its reason, the first record of a request_id loaded, later ones counted as
    duplicates when identical and quarantined as conflicting otherwise. Writes `requests`
    (the toolkit's columns) and `quarantine` (source_row, reason) into a fresh `db`.

    Written for the sample gateway's mapping (GATEWAY_FIELDS); refuses another one."""
    import duckdb

    doc = tomllib.loads(Path(mapping).read_text(encoding="utf-8"))
    if doc.get("fields") != GATEWAY_FIELDS or doc.get("extra", {}) != GATEWAY_EXTRA:
        raise ValueError(
            f"{mapping}: not the sample gateway's mapping this baseline is written for"
        )
    for stale in (Path(db), Path(db + ".wal")):
        stale.unlink(missing_ok=True)
    config = {"memory_limit": memory_limit} if memory_limit else {}
    t0 = time.perf_counter()
    digest = hashlib.sha256()
    with open(log, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    con = duckdb.connect(db, config=config)
    con.execute("SET TimeZone = 'UTC'")
    con.execute(_WHY)
    # rowid of the staged lines is the line order (insertion order is preserved)
    con.execute(
        "CREATE TEMP TABLE lines AS SELECT line FROM read_csv($p, columns = {'line': 'VARCHAR'}, "
        "delim = $delim, quote = '', escape = '', header = false, auto_detect = false, "
        "strict_mode = false, max_line_size = 67109888, buffer_size = 134219776)",
        {"p": log, "delim": LINE_DELIM},
    )
    con.execute(_TYPED, {"paths": _PATHS})
    con.execute("DROP TABLE lines")
    # request_ids on more than one valid record, with the line of the first
    con.execute(
        "CREATE TEMP TABLE repeated AS SELECT request_id, min(line_no) AS first_line "
        "FROM typed WHERE reason IS NULL GROUP BY request_id HAVING count(*) > 1"
    )
    con.execute(
        f"CREATE TABLE requests AS SELECT {', '.join(REQUEST_COLUMNS)}, $source AS source, "
        "line_no AS source_row, CAST(extra AS JSON) AS extra FROM typed AS t "
        "WHERE reason IS NULL AND NOT EXISTS (SELECT 1 FROM repeated AS d "
        "WHERE d.request_id = t.request_id AND d.first_line <> t.line_no)",
        {"source": log},
    )
    con.execute(
        "CREATE TEMP TABLE repeats AS "
        f"SELECT t.line_no, {_SAME_CONTENT} AS same FROM typed AS t "
        "JOIN repeated AS d ON d.request_id = t.request_id AND d.first_line <> t.line_no "
        "JOIN typed AS f ON f.line_no = d.first_line WHERE t.reason IS NULL"
    )
    con.execute(
        "CREATE TABLE quarantine AS "
        "SELECT line_no AS source_row, reason FROM typed WHERE reason IS NOT NULL "
        "UNION ALL SELECT line_no, 'conflicting duplicate' FROM repeats WHERE NOT same"
    )
    read, loaded, duplicates, quarantined = con.execute(
        "SELECT (SELECT count(*) FROM typed), (SELECT count(*) FROM requests), "
        "(SELECT count(*) FROM repeats WHERE same), (SELECT count(*) FROM quarantine)"
    ).fetchall()[0]
    con.execute("CHECKPOINT")
    seconds = time.perf_counter() - t0
    reasons = dict(con.execute("SELECT reason, count(*) FROM quarantine GROUP BY ALL").fetchall())
    con.close()
    return {
        "seconds": seconds,
        "sha256": digest.hexdigest(),
        "rows_read": int(read),
        "rows_loaded": int(loaded),
        "duplicates": int(duplicates),
        "quarantined": int(quarantined),
        "reasons": {k: int(v) for k, v in sorted(reasons.items())},
    }


# --- Polars: equal-work JSONL ingest ----------------------------------------------------------

_POLARS_RECORD = {  # the sample gateway's record, every leaf as text (numbers too)
    "id": "String",
    "timestamp": "String",
    "account": {"id": "String"},
    "model": "String",
    "usage": {"prompt_tokens": "String", "completion_tokens": "String"},
    "status": "String",
    "latency_ms": "String",
    "route": {"prefill": "String", "decode": "String", "bootstrap_room": "String"},
}


def _polars_dtype(spec: dict[str, Any]) -> Any:
    import polars as pl

    return pl.Struct(
        {k: _polars_dtype(v) if isinstance(v, dict) else pl.String for k, v in spec.items()}
    )


def _polars_time(text: Any) -> Any:
    """ISO 8601 text (offset, Z or none = UTC) -> Datetime(us, UTC), null when not one."""
    import polars as pl

    u = text.str.to_uppercase().str.replace(",", ".", literal=True).str.replace(r"Z$", "+00:00")
    u = u.str.replace(" ", "T", literal=True, n=1)
    zoned = u.str.to_datetime(
        "%Y-%m-%dT%H:%M:%S%.f%:z", time_unit="us", time_zone="UTC", strict=False
    )
    naive = u.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f", time_unit="us", strict=False)
    return pl.coalesce(zoned, naive.dt.replace_time_zone("UTC"))


_BATCH = 8192


def _decode(lines: Any, maybe: Any, dtype: Any) -> Any:
    """`lines` decoded as records of `dtype` (null where `maybe` is false, or where the line
    is not a JSON object); a batch that fails is halved until the failing line is alone."""
    import polars as pl

    if not maybe.any():
        return pl.Series("rec", [None] * len(lines), dtype=dtype)
    try:
        return pl.select(
            pl.when(pl.lit(maybe)).then(pl.lit(lines)).str.json_decode(dtype).alias("rec")
        ).to_series()
    except pl.exceptions.ComputeError:
        if len(lines) == 1:
            return pl.Series("rec", [None], dtype=dtype)
        mid = len(lines) // 2
        return pl.concat(
            [_decode(lines[:mid], maybe[:mid], dtype), _decode(lines[mid:], maybe[mid:], dtype)]
        )


def polars_equal_work_ingest(log: str, out_dir: str, mapping: str) -> dict[str, Any]:
    """`duckdb_equal_work_ingest` in Polars: lines with physical numbers, one validity parse
    and one typed decode per line, the same checks and reasons, the first record of a
    request_id kept and later ones compared; writes `requests.parquet` (the toolkit's
    columns) and `quarantine.parquet` (source_row, reason) into `out_dir`."""
    import polars as pl

    doc = tomllib.loads(Path(mapping).read_text(encoding="utf-8"))
    if doc.get("fields") != GATEWAY_FIELDS or doc.get("extra", {}) != GATEWAY_EXTRA:
        raise ValueError(
            f"{mapping}: not the sample gateway's mapping this baseline is written for"
        )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    digest = hashlib.sha256()
    with open(log, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    # one column of whole lines (the separator never occurs in JSON text); a blank line is
    # read as null or spaces and keeps its number
    lines = pl.read_csv(
        log, has_header=False, separator="\x1f", quote_char=None, schema={"line": pl.String}
    )
    line = pl.col("line")
    records = lines.with_row_index("line_no", offset=1).filter(line.str.strip_chars() != "")
    # Polars has no lenient JSON parser: a line that cannot be an object is null at once;
    # the others are decoded in batches, and a batch that fails is halved until its
    # invalid lines stand alone (one parse a line when, as in exports, few are invalid)
    stripped = records["line"].str.strip_chars()
    maybe = stripped.str.starts_with("{") & stripped.str.ends_with("}")
    dtype = _polars_dtype(_POLARS_RECORD)
    decoded = pl.concat(
        [
            _decode(records["line"][i : i + _BATCH], maybe[i : i + _BATCH], dtype)
            for i in range(0, records.height, _BATCH)
        ]
        or [pl.Series("rec", [], dtype=dtype)]
    )
    records = records.with_columns(decoded.alias("rec"))
    rec = pl.col("rec")
    valid = rec.is_not_null()

    def text(*path: str) -> Any:
        e = rec
        for part in path:
            e = e.struct.field(part)
        e = e.str.strip_chars()
        return pl.when(e != "").then(e)

    def integer(e: Any) -> Any:
        return pl.when(e.str.contains(r"^[+-]?[0-9]+$")).then(e.cast(pl.Int64, strict=False))

    def why(e: Any, what: str) -> Any:
        return (
            pl.when(~e.str.contains(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$"))
            .then(pl.lit("non-numeric " + what))
            .when(e.str.contains(r"\.[0-9]*[1-9]"))
            .then(pl.lit("fractional " + what))
            .otherwise(pl.lit("out-of-range " + what))
        )

    raw = records.select(
        "line_no",
        valid.alias("valid"),
        text("id").alias("request_id"),
        text("timestamp").alias("ts_text"),
        text("account", "id").alias("account_id"),
        text("model").alias("model"),
        text("usage", "prompt_tokens").alias("prompt_text"),
        text("usage", "completion_tokens").alias("completion_text"),
        text("status").alias("status_text"),
        text("route", "prefill").alias("prefill_node"),
        text("route", "decode").alias("decode_node"),
        rec.struct.field("timestamp").alias("ts_raw"),
        rec.struct.field("latency_ms").alias("latency"),
        rec.struct.field("route").struct.field("bootstrap_room").alias("room"),
    )
    typed = raw.with_columns(
        integer(pl.col("prompt_text")).alias("prompt_tokens"),
        integer(pl.col("completion_text")).alias("completion_tokens"),
        integer(pl.col("status_text")).alias("status_value"),
        _polars_time(pl.col("ts_text")).alias("ts"),
        (
            _polars_time(pl.col("ts_raw"))
            + pl.duration(milliseconds=pl.col("latency").cast(pl.Int64, strict=False))
        ).alias("ts_end"),
        pl.when(pl.col("valid"))
        .then(
            pl.concat_str(
                pl.lit('{"bootstrap_room":'), pl.col("room").fill_null("null"), pl.lit("}")
            )
        )
        .alias("extra"),
    ).with_columns(
        pl.when(~pl.col("valid"))
        .then(pl.lit("invalid JSON"))
        .when(pl.col("request_id").is_null())
        .then(pl.lit("missing required field request_id"))
        .when(pl.col("ts_text").is_null())
        .then(pl.lit("missing required field ts"))
        .when(pl.col("account_id").is_null())
        .then(pl.lit("missing required field account_id"))
        .when(pl.col("model").is_null())
        .then(pl.lit("missing required field model"))
        .when(pl.col("prompt_text").is_null())
        .then(pl.lit("missing required field prompt_tokens"))
        .when(pl.col("prompt_tokens").is_null())
        .then(why(pl.col("prompt_text"), "token count prompt_tokens"))
        .when(pl.col("prompt_tokens") < 0)
        .then(pl.lit("negative token count prompt_tokens"))
        .when(pl.col("completion_text").is_not_null() & pl.col("completion_tokens").is_null())
        .then(why(pl.col("completion_text"), "token count completion_tokens"))
        .when(pl.col("completion_tokens") < 0)
        .then(pl.lit("negative token count completion_tokens"))
        .when(pl.col("ts").is_null())
        .then(pl.lit("unparsable time ts"))
        .when(pl.col("status_text").is_not_null() & pl.col("status_value").is_null())
        .then(why(pl.col("status_text"), "status"))
        .alias("reason"),
        pl.col("status_value").cast(pl.Int32).alias("status"),  # NULL when none is given
    )
    ok = typed.filter(pl.col("reason").is_null())
    first = pl.col("request_id").is_first_distinct()  # rows are in line order
    content = [*REQUEST_COLUMNS[1:], "extra"]
    loaded = ok.filter(first)
    repeats = ok.filter(~first).join(
        loaded.select("request_id", *[pl.col(c).alias(f"first_{c}") for c in content]),
        on="request_id",
    )
    same = pl.all_horizontal(
        # a missing status (NULL) compares as the 200 it is read as
        pl.col(c).fill_null(DEFAULT_STATUS).eq(pl.col(f"first_{c}").fill_null(DEFAULT_STATUS))
        if c == "status"
        else pl.col(c).eq_missing(pl.col(f"first_{c}"))
        for c in content
    )
    repeats = repeats.select("line_no", same.alias("same"))
    loaded.select(
        *REQUEST_COLUMNS[:-1],
        "ts_end",
        pl.lit(log).alias("source"),
        pl.col("line_no").cast(pl.Int64).alias("source_row"),
        "extra",
    ).write_parquet(out / "requests.parquet")
    quarantine = pl.concat(
        [
            typed.filter(pl.col("reason").is_not_null()).select("line_no", "reason"),
            repeats.filter(~pl.col("same")).select(
                "line_no", pl.lit("conflicting duplicate").alias("reason")
            ),
        ]
    ).rename({"line_no": "source_row"})
    quarantine.write_parquet(out / "quarantine.parquet")
    seconds = time.perf_counter() - t0
    reasons = quarantine.group_by("reason").len()
    return {
        "seconds": seconds,
        "sha256": digest.hexdigest(),
        "rows_read": typed.height,
        "rows_loaded": loaded.height,
        "duplicates": int(repeats["same"].sum()),
        "quarantined": quarantine.height,
        "reasons": {r: int(n) for r, n in sorted(reasons.iter_rows())},
    }


# --- DuckDB: equal work, plain SQL -----------------------------------------------------------


def _capacity_case(
    entries: list[dict], node: str, prefix: str, key: str = "tokens"
) -> tuple[str, dict[str, Any]]:
    """`CASE WHEN <entry 0 holds> THEN <key>0 WHEN ... END` over the entries in file order
    (first match wins: its nodes glob, its models glob if any, its [start, end)), values
    bound as $prefix<i>_*; NULL where no entry holds."""
    if not entries:
        return "CAST(NULL AS BIGINT)", {}
    whens, params = [], {}
    for i, c in enumerate(entries):
        p = f"{prefix}{i}"
        cond = ["TRUE" if c["nodes"] == "*" else f"{node} GLOB ${p}_nodes", f"ts >= ${p}_start"]
        if c["nodes"] != "*":
            params[f"{p}_nodes"] = c["nodes"]
        if c["models"] is not None:
            cond.append(f"model GLOB ${p}_models")
            params[f"{p}_models"] = c["models"]
        params[f"{p}_start"] = c["start"]
        if c["end"] is not None:
            cond.append(f"ts < ${p}_end")
            params[f"{p}_end"] = c["end"]
        whens.append(f"WHEN {' AND '.join(cond)} THEN CAST(${p}_tokens AS BIGINT)")
        params[f"{p}_tokens"] = c[key]
    return "CASE " + " ".join(whens) + " END", params


def duckdb_equal_work(
    case: str, requests: str, db: str, memory_limit: str | None = None
) -> dict[str, Any]:
    """Bands, exposure and pool-walkback data owners in plain DuckDB SQL from `requests`
    (Parquet); writes tables `bands` (request_id, account_id, band) and `owners` into `db`."""
    import duckdb

    s = case_settings(case)
    for stale in (Path(db), Path(db + ".wal")):
        stale.unlink(missing_ok=True)
    config = {"memory_limit": memory_limit} if memory_limit else {}
    t0 = time.perf_counter()
    con = duckdb.connect(db, config=config)
    con.execute("CREATE TEMP TABLE models (model VARCHAR)")
    con.executemany("INSERT INTO models VALUES (?)", [[m] for m in s["models"]])
    con.execute("CREATE TEMP TABLE ok (status INTEGER)")
    con.executemany("INSERT INTO ok VALUES (?)", [[x] for x in s["success_status"]])
    con.execute("CREATE TEMP TABLE excluded (account_id VARCHAR)")
    con.executemany("INSERT INTO excluded VALUES (?)", [[a] for a in s["excluded"]])
    prefill, decode = (
        [c for c in s["capacity"] if c["role"] == role] for role in ("prefill", "decode")
    )
    in_scope = "model IN (SELECT model FROM models) AND ts >= $start AND ts < $end"
    window = {"requests": requests, "start": s["start"], "end": s["end"]}

    capacity, cap_params = _capacity_case(prefill, "prefill_node", "p", key="over_from")
    con.execute(
        f"""
        CREATE TABLE bands AS
        WITH scoped AS (
            SELECT request_id, account_id, prompt_tokens,
                   coalesce(status, {DEFAULT_STATUS}) IN (SELECT status FROM ok) AS delivered,
                   {capacity} AS over_from
            FROM read_parquet($requests)
            WHERE {in_scope}
        )
        SELECT request_id, account_id,
               CASE WHEN prompt_tokens > $context_window THEN 'over_context'
                    WHEN over_from IS NULL THEN 'unknown_capacity'
                    WHEN prompt_tokens < over_from THEN 'fits'
                    WHEN NOT delivered THEN 'over_capacity_failed'
                    WHEN account_id IN (SELECT account_id FROM excluded) THEN 'excluded'
                    ELSE 'exposed' END AS band
        FROM scoped
        """,
        {**window, **cap_params, "context_window": s["context_window"]},
    )
    t_bands = time.perf_counter()

    # the decode pools: delivered requests in scope, ending at ts_end (else ts)
    con.execute(
        f"""
        CREATE TEMP TABLE pool AS
        SELECT request_id, account_id, model, decode_node, ts,
               coalesce(ts_end, ts) AS end_ts,
               prompt_tokens + coalesce(completion_tokens, 0) AS tokens
        FROM read_parquet($requests)
        WHERE {in_scope} AND decode_node IS NOT NULL
          AND coalesce(status, {DEFAULT_STATUS}) IN (SELECT status FROM ok)
        """,
        window,
    )
    decode_cap, dec_params = _capacity_case(decode, "decode_node", "d")
    con.execute(
        f"""
        CREATE TEMP TABLE targets AS
        SELECT * FROM (
            SELECT p.request_id, p.account_id, p.decode_node, p.ts, {decode_cap} AS cap
            FROM pool AS p JOIN bands AS b USING (request_id)
            WHERE b.band IN ('exposed', 'excluded')  -- excluded accounts' responses too
        ) WHERE cap IS NOT NULL
        """,
        dec_params,
    )
    # each pool, ordered by (end, request_id): rank rn and running token sum cum. Pools are
    # numbered (node): a window partitioned on a small integer sorts 2x faster than on text;
    # the default RANGE frame has no peers (request_id is unique) and beats a ROWS frame
    con.execute(
        """
        CREATE TEMP TABLE nodes AS
        SELECT decode_node, row_number() OVER (ORDER BY decode_node) AS node
        FROM (SELECT DISTINCT decode_node FROM targets)
        """
    )
    con.execute(
        """
        CREATE TEMP TABLE ranked AS
        SELECT n.node, p.request_id, p.account_id, p.end_ts,
               row_number() OVER w AS rn, CAST(sum(p.tokens) OVER w AS BIGINT) AS cum
        FROM pool AS p JOIN nodes AS n USING (decode_node)
        WINDOW w AS (PARTITION BY n.node ORDER BY p.end_ts, p.request_id)
        """
    )
    # walking back from e: the pool ranks 1..hi ended strictly before e.ts, holding `before`
    # tokens; c is a candidate while the newer ones hold < cap, i.e. cum(c) > before - cap
    con.execute(
        """
        CREATE TABLE owners AS
        WITH by_end AS (
            SELECT node, end_ts, max(rn) AS rn, max(cum) AS cum
            FROM ranked GROUP BY node, end_ts
        ),
        by_cum AS (
            SELECT node, cum, max(rn) AS rn FROM ranked GROUP BY node, cum
        ),
        hi AS (
            SELECT t.request_id, t.account_id, n.node,
                   coalesce(e.rn, 0) AS hi, coalesce(e.cum, 0) - t.cap AS cut
            FROM targets AS t
            JOIN nodes AS n USING (decode_node)
            ASOF LEFT JOIN by_end AS e ON n.node = e.node AND t.ts > e.end_ts
        ),
        spans AS (
            SELECT h.*, coalesce(c.rn, 0) + 1 AS lo
            FROM hi AS h
            ASOF LEFT JOIN by_cum AS c ON h.node = c.node AND h.cut >= c.cum
        ),
        walked AS (
            SELECT request_id, account_id, node, unnest(range(lo, hi + 1)) AS rn
            FROM spans WHERE hi >= lo
        )
        SELECT w.request_id AS exposed_request_id, w.account_id AS exposed_account_id,
               r.request_id AS owner_request_id, r.account_id AS owner_account_id
        FROM walked AS w
        JOIN ranked AS r ON r.node = w.node AND r.rn = w.rn
        WHERE r.account_id <> w.account_id
        """
    )
    t_owners = time.perf_counter()
    # the blast radius: every request (any model, any time) against the prefill capacity in
    # force for it, per model and prefill node
    con.execute(
        f"""
        CREATE TABLE blast_radius AS
        WITH capped AS (
            SELECT model, prefill_node, ts, account_id, status, prompt_tokens,
                   {capacity} AS over_from
            FROM read_parquet($requests)
        ),
        judged AS (
            SELECT model, prefill_node, ts, over_from,
                   account_id IN (SELECT account_id FROM excluded) AS excluded,
                   coalesce(
                       coalesce(status, {DEFAULT_STATUS}) IN (SELECT status FROM ok)
                       AND prompt_tokens >= over_from
                       -- the case's context window bounds the case's models only
                       AND (model NOT IN (SELECT model FROM models)
                            OR prompt_tokens <= $context_window),
                       FALSE
                   ) AS over
            FROM capped
        )
        SELECT model, prefill_node, count(*) AS requests,
               count(*) FILTER (WHERE over) AS over_capacity,
               count(*) FILTER (WHERE over AND excluded) AS excluded,
               count(*) FILTER (WHERE over_from IS NULL) AS unknown_capacity,
               min(ts) FILTER (WHERE over) AS first_over,
               max(ts) FILTER (WHERE over) AS last_over,
               count(*) FILTER (WHERE over AND ts >= $start AND ts < $end) AS in_window,
               count(*) FILTER (WHERE over AND (ts < $start OR ts >= $end)) AS outside_window
        FROM judged
        GROUP BY model, prefill_node
        """,
        {**window, **cap_params, "context_window": s["context_window"]},
    )
    t_radius = time.perf_counter()
    # the figures summary.json reports are part of the work, as they are of analyze's
    figures = _duckdb_figures(con)
    con.execute("CHECKPOINT")
    t_done = time.perf_counter()
    con.close()
    return {
        "seconds": t_done - t0,
        "bands_seconds": t_bands - t0,
        "owners_seconds": t_owners - t_bands,
        "blast_radius_seconds": t_radius - t_owners,
        "figures_seconds": t_done - t_radius,
        **figures,
    }


def _duckdb_figures(con: Any) -> dict[str, Any]:
    bands = dict(con.execute("SELECT band, count(*) FROM bands GROUP BY band").fetchall())
    radius = con.execute(
        "SELECT model, sum(requests), sum(over_capacity), sum(unknown_capacity) "
        "FROM blast_radius GROUP BY model ORDER BY model"
    ).fetchall()
    accounts = con.execute(
        "SELECT count(DISTINCT account_id) FROM bands WHERE band = 'exposed'"
    ).fetchall()[0][0]
    pairs, requests, owner_accounts = con.execute(
        "SELECT count(*), count(DISTINCT owner_request_id), count(DISTINCT owner_account_id) "
        "FROM owners"
    ).fetchall()[0]
    return {
        "bands": {k: int(v) for k, v in sorted(bands.items())},
        "exposure_count": int(bands.get("exposed", 0)),
        "affected_accounts": int(accounts),
        "owner_pairs": int(pairs),
        "owner_requests": int(requests),
        "owner_accounts": int(owner_accounts),
        "blast_radius": {m: [int(n), int(o), int(u)] for m, n, o, u in radius},
    }


# --- Polars: equal work --------------------------------------------------------------------


def glob_regex(pattern: str) -> str:
    """A shell glob (`*`, `?`, `[...]`, `[!...]`) as an anchored regular expression."""
    out, i = ["^"], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif ch == "[" and "]" in pattern[i + 2 :]:
            j = pattern.index("]", i + 2)
            body = pattern[i + 1 : j]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = j
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out) + "$"


def _polars_capacity(entries: list[dict], node: str, key: str = "tokens") -> Any:
    """The capacity in force (its `key`) as a Polars expression: first entry (file order)
    that holds."""
    import polars as pl

    expr: Any = None
    for c in entries:
        cond = pl.col("ts") >= c["start"]
        if c["nodes"] != "*":
            cond &= pl.col(node).str.contains(glob_regex(c["nodes"])).fill_null(False)
        if c["models"] is not None:
            cond &= pl.col("model").str.contains(glob_regex(c["models"])).fill_null(False)
        if c["end"] is not None:
            cond &= pl.col("ts") < c["end"]
        then = pl.lit(c[key], dtype=pl.Int64)
        expr = pl.when(cond).then(then) if expr is None else expr.when(cond).then(then)
    return pl.lit(None, dtype=pl.Int64) if expr is None else expr.otherwise(None)


def polars_equal_work(case: str, requests: str, out_dir: str) -> dict[str, Any]:
    """Bands, exposure, pool-walkback data owners and the blast radius in Polars from
    `requests` (Parquet); writes `bands.parquet` (request_id, band), `owners.parquet` and
    `blast_radius.parquet` into `out_dir`."""
    import polars as pl

    s = case_settings(case)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    prefill, decode = (
        [c for c in s["capacity"] if c["role"] == role] for role in ("prefill", "decode")
    )
    t0 = time.perf_counter()
    prompt = pl.col("prompt_tokens")
    over_from = pl.col("over_from")
    scoped = (
        pl.scan_parquet(requests)
        .filter(
            pl.col("model").is_in(s["models"])
            & (pl.col("ts") >= s["start"])
            & (pl.col("ts") < s["end"])
        )
        .with_columns(
            _polars_capacity(prefill, "prefill_node", key="over_from").alias("over_from"),
            pl.col("status").fill_null(DEFAULT_STATUS).is_in(s["success_status"]).alias("ok"),
        )
        .with_columns(
            pl.when(prompt > s["context_window"])
            .then(pl.lit("over_context"))
            .when(over_from.is_null())
            .then(pl.lit("unknown_capacity"))
            .when(prompt < over_from)
            .then(pl.lit("fits"))
            .when(~pl.col("ok"))
            .then(pl.lit("over_capacity_failed"))
            .when(pl.col("account_id").is_in(s["excluded"]))
            .then(pl.lit("excluded"))
            .otherwise(pl.lit("exposed"))
            .alias("band")
        )
    )
    pool_lf = scoped.filter(pl.col("ok") & pl.col("decode_node").is_not_null()).select(
        "request_id",
        "account_id",
        "model",
        "decode_node",
        "ts",
        "band",
        pl.coalesce("ts_end", "ts").alias("end_ts"),
        (prompt + pl.col("completion_tokens").fill_null(0)).alias("tokens"),
    )
    bands, pool = pl.collect_all([scoped.select("request_id", "account_id", "band"), pool_lf])
    bands.write_parquet(out / "bands.parquet")
    t_bands = time.perf_counter()

    targets = (
        pool.filter(pl.col("band").is_in(["exposed", "excluded"]))  # excluded accounts' too
        .with_columns(_polars_capacity(decode, "decode_node").alias("cap"))
        .filter(pl.col("cap").is_not_null())
        .select("request_id", "account_id", "decode_node", "ts", "cap")
    )
    node = "decode_node"
    ranked = (
        pool.filter(pl.col(node).is_in(targets[node].unique().implode()))
        .sort([node, "end_ts", "request_id"])
        .select(
            node,
            "request_id",
            "account_id",
            "end_ts",
            (pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(node)).alias("rn"),
            pl.col("tokens").cum_sum().over(node).alias("cum"),
        )
    )
    by_end = (
        ranked.group_by(node, "end_ts").agg(pl.col("rn").max(), pl.col("cum").max()).sort("end_ts")
    )
    by_cum = ranked.group_by(node, "cum").agg(pl.col("rn").max().alias("below")).sort("cum")
    spans = (
        targets.sort("ts")
        .join_asof(
            by_end,
            left_on="ts",
            right_on="end_ts",
            by=node,
            strategy="backward",
            allow_exact_matches=False,  # ended strictly before e.ts
            check_sortedness=False,  # sorted above (Polars cannot check within groups)
        )
        .with_columns(
            pl.col("rn").fill_null(0).alias("hi"),
            (pl.col("cum").fill_null(0) - pl.col("cap")).alias("cut"),
        )
        .sort("cut")
        .join_asof(
            by_cum,
            left_on="cut",
            right_on="cum",
            by=node,
            strategy="backward",
            check_sortedness=False,
        )
        .with_columns((pl.col("below").fill_null(0) + 1).alias("lo"))
        .filter(pl.col("hi") >= pl.col("lo"))
    )
    owners = (
        spans.select(
            pl.col("request_id").alias("exposed_request_id"),
            pl.col("account_id").alias("exposed_account_id"),
            node,
            pl.int_ranges("lo", pl.col("hi") + 1, dtype=pl.Int64).alias("rn"),
        )
        .explode("rn")
        .join(
            ranked.select(
                node,
                "rn",
                pl.col("request_id").alias("owner_request_id"),
                pl.col("account_id").alias("owner_account_id"),
            ),
            on=[node, "rn"],
        )
        .filter(pl.col("owner_account_id") != pl.col("exposed_account_id"))
        .select("exposed_request_id", "exposed_account_id", "owner_request_id", "owner_account_id")
    )
    owners.write_parquet(out / "owners.parquet")
    t_owners = time.perf_counter()

    # the blast radius: every request (any model, any time) against the prefill capacity in
    # force for it, per model and prefill node
    ts = pl.col("ts")
    over = (
        pl.col("status").fill_null(DEFAULT_STATUS).is_in(s["success_status"])
        & (prompt >= over_from)
        # the case's context window bounds the case's models only
        & (~pl.col("model").is_in(s["models"]) | (prompt <= s["context_window"]))
    ).fill_null(False)
    in_window = (ts >= s["start"]) & (ts < s["end"])
    radius = (
        pl.scan_parquet(requests)
        .select(
            "model",
            "prefill_node",
            ts,
            pl.col("account_id").is_in(s["excluded"]).alias("excluded"),
            prompt,
            "status",
            _polars_capacity(prefill, "prefill_node", key="over_from").alias("over_from"),
        )
        .group_by("model", "prefill_node")
        .agg(
            pl.len().cast(pl.Int64).alias("requests"),
            over.sum().cast(pl.Int64).alias("over_capacity"),
            (over & pl.col("excluded")).sum().cast(pl.Int64).alias("excluded"),
            over_from.is_null().sum().cast(pl.Int64).alias("unknown_capacity"),
            ts.filter(over).min().alias("first_over"),
            ts.filter(over).max().alias("last_over"),
            (over & in_window).sum().cast(pl.Int64).alias("in_window"),
            (over & ~in_window).sum().cast(pl.Int64).alias("outside_window"),
        )
        .collect()
    )
    radius.write_parquet(out / "blast_radius.parquet")
    t_radius = time.perf_counter()
    # the figures summary.json reports are part of the work, as they are of analyze's
    counts = bands.group_by("band").len()
    band_counts = {b: int(n) for b, n in sorted(counts.iter_rows())}
    per_model = radius.group_by("model").agg(
        pl.col("requests").sum(), pl.col("over_capacity").sum(), pl.col("unknown_capacity").sum()
    )
    affected = bands.filter(pl.col("band") == "exposed")["account_id"].n_unique()
    owner_requests = owners["owner_request_id"].n_unique()
    owner_accounts = owners["owner_account_id"].n_unique()
    t_done = time.perf_counter()
    return {
        "seconds": t_done - t0,
        "bands_seconds": t_bands - t0,
        "owners_seconds": t_owners - t_bands,
        "blast_radius_seconds": t_radius - t_owners,
        "figures_seconds": t_done - t_radius,
        "bands": band_counts,
        "exposure_count": band_counts.get("exposed", 0),
        "affected_accounts": affected,
        "owner_pairs": owners.height,
        "owner_requests": owner_requests,
        "owner_accounts": owner_accounts,
        "blast_radius": {
            m: [int(n), int(o), int(u)] for m, n, o, u in sorted(per_model.iter_rows())
        },
    }


# --- the check -----------------------------------------------------------------------------


RADIUS_COLUMNS = (
    "model",
    "prefill_node",
    "requests",
    "over_capacity",
    "excluded",
    "unknown_capacity",
    "first_over",
    "last_over",
    "in_window",
    "outside_window",
)


def compare(toolkit_db: str, duckdb_db: str, polars_dir: str | None) -> dict[str, Any]:
    """Whether the toolkit's `bands` / `data_owners` / `blast_radius` and the baselines'
    results (Polars' unless `polars_dir` is None) are the same sets: (request_id, band) rows,
    exposed request_ids, (exposed, owner) request pairs, blast radius rows (every column).

    Returns per contender its figures, and per check the rows found on one side only."""
    import duckdb

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"ATTACH '{toolkit_db}' AS tk (READ_ONLY)")
    con.execute(f"ATTACH '{duckdb_db}' AS dd (READ_ONLY)")
    sources = {
        "toolkit": ("tk.bands", "tk.data_owners", "tk.blast_radius"),
        "duckdb_sql": ("dd.bands", "dd.owners", "dd.blast_radius"),
    }
    if polars_dir is not None:
        pq = Path(polars_dir)
        sources["polars"] = tuple(
            f"read_parquet('{pq / f'{name}.parquet'}')"
            for name in ("bands", "owners", "blast_radius")
        )
    radius_cols = ", ".join(RADIUS_COLUMNS)
    for name, (bands, owners, radius) in sources.items():
        con.execute(f"CREATE TEMP VIEW {name}_bands AS SELECT request_id, band FROM {bands}")
        con.execute(
            f"CREATE TEMP VIEW {name}_exposed AS "
            f"SELECT request_id FROM {bands} WHERE band = 'exposed'"
        )
        con.execute(
            f"CREATE TEMP VIEW {name}_pairs AS "
            f"SELECT exposed_request_id, owner_request_id FROM {owners}"
        )
        con.execute(f"CREATE TEMP VIEW {name}_radius AS SELECT {radius_cols} FROM {radius}")
    figures: dict[str, Any] = {}
    for name in sources:
        per_band = con.execute(
            f"SELECT band, count(*), count(DISTINCT request_id) FROM {name}_bands GROUP BY band"
        ).fetchall()
        pairs = con.execute(
            f"SELECT count(*), count(DISTINCT (exposed_request_id, owner_request_id)) "
            f"FROM {name}_pairs"
        ).fetchall()[0]
        radius = con.execute(
            f"SELECT model, sum(requests), sum(over_capacity), sum(unknown_capacity), "
            f"count(*), count(DISTINCT (model, prefill_node)) FROM {name}_radius "
            "GROUP BY model ORDER BY model"
        ).fetchall()
        figures[name] = {
            "bands": {b: int(n) for b, n, _ in sorted(per_band)},
            "band_rows_distinct": all(n == d for _, n, d in per_band),
            "owner_pairs": int(pairs[0]),
            "owner_pairs_distinct": int(pairs[0]) == int(pairs[1]),
            "blast_radius": {m: [int(n), int(o), int(u)] for m, n, o, u, _, _ in radius},
            "radius_rows_distinct": all(r == d for *_, r, d in radius),
        }
    checks: dict[str, Any] = {}
    for name in (n for n in sources if n != "toolkit"):
        for what in ("bands", "exposed", "pairs", "radius"):
            only_tk, only_other = (
                con.execute(
                    f"SELECT count(*) FROM "
                    f"(SELECT * FROM {a}_{what} EXCEPT SELECT * FROM {b}_{what})"
                ).fetchall()[0][0]
                for a, b in (("toolkit", name), (name, "toolkit"))
            )
            checks[f"{name}_{what}_only_toolkit"] = int(only_tk)
            checks[f"{name}_{what}_only_{name}"] = int(only_other)
    con.close()
    same = all(v == 0 for v in checks.values()) and all(
        f["band_rows_distinct"] and f["owner_pairs_distinct"] and f["radius_rows_distinct"]
        for f in figures.values()
    )
    return {"identical": same, "differences": checks, "figures": figures}


def compare_ingest(toolkit_db: str, duckdb_db: str, polars_dir: str | None) -> dict[str, Any]:
    """Whether the equal-work ingests loaded the same `requests` rows (every column) as the
    toolkit and set aside the same records for the same reasons: rows on one side only,
    per contender, and whether the (source_row, reason) of the quarantine agree."""
    import duckdb

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"ATTACH '{toolkit_db}' AS tk (READ_ONLY)")
    con.execute(f"ATTACH '{duckdb_db}' AS dd (READ_ONLY)")
    cols = ", ".join(REQUESTS_TABLE_COLUMNS[:-1]) + ", CAST(extra AS VARCHAR) AS extra"
    sources = {"duckdb_sql": ("dd.requests", "dd.quarantine")}
    if polars_dir is not None:
        pq = Path(polars_dir)
        sources["polars"] = (
            f"read_parquet('{pq / 'requests.parquet'}')",
            f"read_parquet('{pq / 'quarantine.parquet'}')",
        )
    tk_requests = f"SELECT {cols} FROM tk.requests"
    tk_quarantine = "SELECT row AS source_row, reason FROM tk.quarantine"
    differences: dict[str, int] = {}
    for name, (requests, quarantine) in sources.items():
        other = f"SELECT {cols} FROM {requests}"
        other_q = f"SELECT source_row, reason FROM {quarantine}"
        for what, a, b in (
            ("requests", tk_requests, other),
            ("quarantine", tk_quarantine, other_q),
        ):
            for side, x, y in (("toolkit", a, b), (name, b, a)):
                n = con.execute(f"SELECT count(*) FROM ({x} EXCEPT ALL {y})").fetchall()[0][0]
                differences[f"{name}_{what}_only_{side}"] = int(n)
    con.close()
    return {"identical": all(v == 0 for v in differences.values()), "differences": differences}
