"""Source mappings (`*.mapping.toml`, SPEC.md "Source mappings") and the built-in profiles.

A mapping says, for each canonical field, where its value comes from in a source record: a
source path (a column, or a dotted path into nested JSON / Parquet structs), a DuckDB SQL
expression over the source's columns (`{ sql = "..." }`), or a constant (`{ const = v }`).
`[timestamp]` fixes how times are read; `[extra]` keeps named source fields in the `extra`
JSON column. Loading is strict: an unknown key or field is refused with file, key and line.
"""

from __future__ import annotations

import re
import tomllib
import zoneinfo
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .errors import InputError
from .schema import MAPPABLE, REQUEST_FIELDS

FORMATS = ("jsonl", "csv", "parquet", "sglang")
UNITS = ("iso8601", "s", "ms", "us")
PROFILES = ("canonical", "openai", "sglang")
_TOP_KEYS = {"format", "fields", "timestamp", "extra"}
_TS_KEYS = {"unit", "timezone"}
_EXTRA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

Kind = Literal["path", "sql", "const"]


@dataclass(frozen=True)
class Source:
    """Where one value comes from. `optional` paths (profiles only) may be absent."""

    kind: Kind
    value: Any
    line: int | None = None
    optional: bool = False


@dataclass(frozen=True)
class Mapping:
    """A validated mapping: canonical field -> Source, extras, time rules, and its origin."""

    origin: str
    format: str | None = None
    fields: dict[str, Source] = field(default_factory=dict)
    extra: dict[str, Source] = field(default_factory=dict)
    unit: str = "iso8601"
    timezone: str = "UTC"
    keep_extra_column: bool = False

    def where(self, key: str, line: int | None) -> str:
        """`origin:line (key)` for error messages."""
        loc = f"{self.origin}:{line}" if line else self.origin
        return f"{loc} ({key})"


def profile(name: str) -> Mapping:
    """A built-in mapping by name: `canonical`, `openai` or `sglang`."""
    if name == "canonical":
        fields = {
            f.name: Source("path", f.name, optional=not f.required or f.name == "request_id")
            for f in REQUEST_FIELDS
        }
        return Mapping(origin="profile canonical", fields=fields, keep_extra_column=True)
    if name == "openai":
        fields = {
            "request_id": Source("path", "id"),
            "ts": Source("path", "created"),
            "model": Source("path", "model"),
            "account_id": Source("path", "user"),
            "prompt_tokens": Source("path", "usage.prompt_tokens"),
            "completion_tokens": Source("path", "usage.completion_tokens", optional=True),
            "status": Source("path", "status", optional=True),
        }
        return Mapping(origin="profile openai", fields=fields, unit="s")
    if name == "sglang":
        return Mapping(origin="profile sglang", format="sglang")
    raise InputError(
        f"unknown profile {name!r}",
        where="--profile",
        fix=f"use one of {', '.join(PROFILES)}, or pass --mapping FILE",
    )


def load_mapping(path: str | Path) -> Mapping:
    """Parse and validate a `*.mapping.toml` file; InputError names file, key and line."""
    p = Path(path)
    if not p.is_file():
        raise InputError(
            "mapping file not found", where=str(p), fix="check the path given to --mapping"
        )
    text = p.read_text(encoding="utf-8")
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
    if fmt != "sglang" and not fields_tbl:
        raise err("no fields mapped", None, "fields", "add a [fields] section")
    fields: dict[str, Source] = {}
    for key, spec in fields_tbl.items():
        if key not in MAPPABLE:
            raise err(
                "unknown canonical field",
                "fields",
                key,
                f"canonical fields are: {', '.join(f.name for f in REQUEST_FIELDS)}",
            )
        src = _source(spec, lambda w, k=key: err(w, "fields", k, _SOURCE_FIX))
        fields[key] = Source(src.kind, src.value, _key_line(text, "fields", key))
    extra: dict[str, Source] = {}
    extra_tbl = data.get("extra", {})
    if not isinstance(extra_tbl, dict):
        raise err("must be a table", None, "extra", "write it as an [extra] section")
    for key, spec in extra_tbl.items():
        if not _EXTRA_NAME.match(key):
            raise err("bad extra name", "extra", key, "use letters, digits and _ only")
        src = _source(spec, lambda w, k=key: err(w, "extra", k, _SOURCE_FIX))
        extra[key] = Source(src.kind, src.value, _key_line(text, "extra", key))
    ts_tbl = data.get("timestamp", {})
    if not isinstance(ts_tbl, dict):
        raise err("must be a table", None, "timestamp", "write it as a [timestamp] section")
    for key in ts_tbl:
        if key not in _TS_KEYS:
            raise err("unknown key", "timestamp", key, "allowed: unit, timezone")
    unit = ts_tbl.get("unit", "iso8601")
    if unit not in UNITS:
        raise err(f"unknown unit {unit!r}", "timestamp", "unit", f"use one of {', '.join(UNITS)}")
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
    if fmt != "sglang":
        for req in ("ts", "account_id", "model", "prompt_tokens"):
            if req not in fields:
                raise err(
                    f"required canonical field {req!r} is not mapped",
                    None,
                    "fields",
                    f'add `{req} = "source.path"` (or a const / sql) under [fields]',
                )
    return Mapping(
        origin=origin, format=fmt, fields=fields, extra=extra, unit=unit, timezone=str(tz)
    )


_SOURCE_FIX = 'write a source path ("a.b"), { sql = "DuckDB expression" } or { const = value }'


def _source(spec: Any, err: Any) -> Source:
    if isinstance(spec, str):
        if not spec.strip():
            raise err("empty source path")
        return Source("path", spec)
    if isinstance(spec, dict):
        if len(spec) != 1 or next(iter(spec)) not in ("sql", "const"):
            raise err(f"a field table takes exactly one of sql/const, got {sorted(spec)}")
        kind, value = next(iter(spec.items()))
        if kind == "sql" and (not isinstance(value, str) or not value.strip()):
            raise err("sql must be a non-empty string")
        if kind == "const" and isinstance(value, dict | list):
            raise err("const must be a string, number or boolean")
        return Source(kind, value)
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
