"""The shape of a JSONL record as one mapping sees it (`__shape`, computed when the record is
staged): the keys of each object holding a mapped key (repeats included: a mapped path is
there when its key is), the JSON type of each column a { sql } source reads (and of each
object on its way), and the structure of each top-level column a { sql } source reads when
it holds an object or list there.

Records of one shape are alike for all that compile_mapping asks of the input's merged
structure (which mapped paths exist, the types a { sql } source binds, which keys repeat),
so the first record of each shape stands for the rest: its keys and a few types per record
rather than each record's whole structure (json_structure), which cost 2.3 s per million."""

from __future__ import annotations

from dataclasses import dataclass

from ..mapping import Mapping, SqlParser, sql_columns


@dataclass(frozen=True)
class Shape:
    """The JSON paths a shape is made of (the parameters of json_records.sql)."""

    paths: list[str]  # typed (json_type): each { sql } column and object on its way, `extra`
    levels: list[str]  # the objects holding a mapped key (json_keys), '$' first: see `levels`
    tops: list[int]  # 1-based positions in `paths` of the { sql } sources' top-level columns


def shape_of(m: Mapping, parser: SqlParser) -> Shape:
    """The shape of the records of a JSONL input under mapping `m` (its { sql } sources'
    column references parsed by `parser`). Of a mapped path only the keys are read (no
    value's type): a record has the path when each key on it is there. (When no record has
    it, the first record of a shape says whether an object on its way holds a scalar in the
    merged structure, which `compile._json_has` reads as "cannot tell".)"""
    keys = [
        tuple(str(s.value).split("."))
        for s in (*m.fields.values(), *m.extra.values())
        if s.kind == "path"
    ]
    refs: list[tuple[str, ...]] = []
    for _, _, src in m.sql_sources():
        refs.extend(ref for ref in sql_columns(src.value, parser) if ref)
    keys.extend(refs)
    tops = [(ref[0],) for ref in refs]
    if m.sql_sources():
        tops.append(("extra",))  # a column `extra` is kept by the cut structure (_read_by)
    paths: list[str] = []
    for key in [*refs, *tops]:
        for depth in range(1, len(key) + 1):
            path = json_path(key[:depth])
            if path not in paths:
                paths.append(path)
    at = sorted({paths.index(json_path(top)) + 1 for top in tops})
    return Shape(paths=paths, levels=levels(keys)[0] or ["$"], tops=at)


def levels(keys: list[tuple[str, ...]]) -> tuple[list[str], list[tuple[str, ...]]]:
    """(the JSON paths of the objects holding the mapped keys `keys`, every key path to check
    for repeats: each prefix of a mapped key, parents first, then in mapping order)."""
    checks: dict[tuple[str, ...], None] = {}
    for key in keys:
        for depth in range(len(key)):
            checks.setdefault(key[: depth + 1], None)
    ordered = sorted(checks, key=len)  # stable: parents first, then mapping order
    found: list[str] = []
    for key in ordered:
        level = json_path(key[:-1])
        if level not in found:
            found.append(level)
    return found, ordered


def json_path(key: tuple[str, ...]) -> str:
    """The JSON path of a key path (each name quoted; `$` for the empty path)."""
    return "$" + "".join('."' + part.replace('"', '\\"') + '"' for part in key)
