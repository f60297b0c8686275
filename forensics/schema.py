"""The canonical request record (SPEC.md, `requests` table) and the bookkeeping tables."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    name: str
    sql_type: str
    required: bool


# Order is the column order of the `requests` table.
REQUEST_FIELDS: tuple[Field, ...] = (
    Field("request_id", "VARCHAR", True),
    Field("ts", "TIMESTAMPTZ", True),
    Field("account_id", "VARCHAR", True),
    Field("model", "VARCHAR", True),
    Field("prompt_tokens", "BIGINT", True),
    Field("completion_tokens", "BIGINT", False),
    Field("status", "INTEGER", False),
    Field("prefill_node", "VARCHAR", False),
    Field("decode_node", "VARCHAR", False),
    Field("ts_end", "TIMESTAMPTZ", False),
)
PROVENANCE_FIELDS: tuple[Field, ...] = (
    Field("source", "VARCHAR", True),
    Field("source_row", "BIGINT", True),
)
MAPPABLE = {f.name for f in REQUEST_FIELDS}
REQUIRED = tuple(f.name for f in REQUEST_FIELDS if f.required)
TOKEN_FIELDS = ("prompt_tokens", "completion_tokens")
TIME_FIELDS = ("ts", "ts_end")
DEFAULT_STATUS = 200

# request_id is unique, but by the ingest SQL (duplicates and conflicts are classified before
# loading), not by a PRIMARY KEY: its index on tens of millions of keys made ingest several
# times slower and spilled gigabytes
REQUESTS_DDL = (
    "CREATE TABLE IF NOT EXISTS requests ("
    + ", ".join(f"{f.name} {f.sql_type}" for f in REQUEST_FIELDS + PROVENANCE_FIELDS)
    + ", extra JSON)"
)
INPUTS_DDL = (
    "CREATE TABLE IF NOT EXISTS inputs (path VARCHAR, sha256 VARCHAR PRIMARY KEY, bytes BIGINT, "
    "rows_read BIGINT, rows_loaded BIGINT, duplicates BIGINT, quarantined BIGINT, "
    "format VARCHAR, note VARCHAR, mapping_sha256 VARCHAR)"
)
# mapping_sha256 (forensics.integrity.mapping_digest of the mapping an input was loaded with;
# NULL for engine logs and in databases written before it was recorded) is added to older
# databases by the next ingest
INPUTS_MIGRATE = "ALTER TABLE inputs ADD COLUMN IF NOT EXISTS mapping_sha256 VARCHAR"
QUARANTINE_DDL = (
    "CREATE TABLE IF NOT EXISTS quarantine "
    "(source VARCHAR, row BIGINT, reason VARCHAR, raw VARCHAR)"
)
