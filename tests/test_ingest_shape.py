"""A JSONL record's shape (forensics/ingest/shape.py): what the mapping reads of it. Records of
one shape stand for each other when the mapping is checked and a { sql } source is typed, so
what the first record of a shape lacks must still be read from the others."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dbrows import rows

from forensics.engines import DuckDBEngine
from forensics.errors import InputError
from forensics.ingest import ingest
from forensics.ingest.shape import Shape, shape_of
from forensics.mapping import load_mapping

HEAD = 'format = "jsonl"\n[fields]\nrequest_id = "id"\nts = "t"\naccount_id = "a"\nmodel = "m"\n'


def _mapping(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "m.mapping.toml"
    path.write_text(HEAD + text)
    return path


def _log(tmp_path: Path, *records: str) -> Path:
    path = tmp_path / "log.jsonl"
    path.write_text("".join(r + "\n" for r in records))
    return path


def _rec(rid: str, rest: str) -> str:
    return '{"id":"' + rid + '","t":"2026-01-01T01:00:00Z","a":"acct","m":"x",' + rest + "}"


def test_the_shape_reads_the_keys_of_mapped_objects_and_types_the_sql_columns(tmp_path):
    m = load_mapping(
        _mapping(
            tmp_path,
            'prompt_tokens = "usage.prompt"\n'
            'ts_end = { sql = "t::TIMESTAMPTZ + to_milliseconds(meta.lat)" }\n',
        )
    )
    with DuckDBEngine(tmp_path / "c.duckdb") as engine:
        shape = shape_of(m, engine)
    # the keys of the objects holding mapped keys; the types of the { sql } columns (t,
    # meta.lat and meta on its way) and `extra`, whose top-level ones (t, meta, extra) are
    # also read whole when they hold an object or list; a mapped value's type is not read
    assert shape == Shape(
        paths=['$."t"', '$."meta"', '$."meta"."lat"', '$."extra"'],
        levels=["$", '$."usage"', '$."meta"'],
        tops=[1, 2, 4],
    )


def test_without_sql_the_shape_is_the_keys_alone(tmp_path):
    m = load_mapping(_mapping(tmp_path, 'prompt_tokens = "usage.prompt"\n'))
    with DuckDBEngine(tmp_path / "c.duckdb") as engine:
        assert shape_of(m, engine) == Shape(paths=[], levels=["$", '$."usage"'], tops=[])


def test_a_sql_column_holds_the_nested_keys_of_every_record_not_the_first_of_its_shape(tmp_path):
    # r1 and r2 agree on every mapped key and type; only inside `meta.a` do they differ (x in
    # r1, y in r2): the { sql } reads meta whole, so its type must have both keys, or r2's y
    # would be read as absent
    mapping = _mapping(
        tmp_path,
        'prompt_tokens = "p"\n[extra]\nmeta = { sql = "CAST(meta AS VARCHAR)" }\n',
    )
    log = _log(
        tmp_path,
        _rec("r1", '"p":1,"meta":{"a":{"x":1}}'),
        _rec("r2", '"p":2,"meta":{"a":{"y":2}}'),
    )
    ingest([log], tmp_path / "i.duckdb", mapping=mapping)
    extras = rows(tmp_path / "i.duckdb", "SELECT request_id, extra FROM requests ORDER BY 1")
    assert [(rid, json.loads(extra)["meta"]) for rid, extra in extras] == [
        ("r1", "{'a': {'x': 1, 'y': NULL}}"),
        ("r2", "{'a': {'x': NULL, 'y': 2}}"),
    ]


def test_a_mapped_key_only_later_records_have_is_read_from_them(tmp_path):
    # r1 has no completion count, r2 and r3 have one; r3 repeats an unmapped key (colo) in the
    # top-level object, which holds mapped keys: checked, and loaded
    mapping = _mapping(tmp_path, 'prompt_tokens = "p"\ncompletion_tokens = "c"\n')
    log = _log(
        tmp_path,
        _rec("r1", '"p":1'),
        _rec("r2", '"p":2,"c":20'),
        _rec("r3", '"p":3,"c":30,"colo":"A","colo":"B"'),
    )
    report = ingest([log], tmp_path / "i.duckdb", mapping=mapping)
    assert report.totals() == {
        "rows_read": 3,
        "rows_loaded": 3,
        "duplicates": 0,
        "quarantined": 0,
    }
    assert rows(
        tmp_path / "i.duckdb", "SELECT request_id, completion_tokens FROM requests ORDER BY 1"
    ) == [("r1", None), ("r2", 20), ("r3", 30)]


def test_records_of_one_shape_repeating_a_mapped_key_are_each_quarantined(tmp_path):
    # r1 and r3 repeat p (same keys, same shape), r2 does not: only r1 and r3 are quarantined
    mapping = _mapping(tmp_path, 'prompt_tokens = "p"\n')
    log = _log(
        tmp_path,
        _rec("r1", '"p":1,"p":9'),
        _rec("r2", '"p":2'),
        _rec("r3", '"p":3,"p":9'),
    )
    ingest([log], tmp_path / "i.duckdb", mapping=mapping, allow_empty=True)
    assert rows(tmp_path / "i.duckdb", "SELECT request_id FROM requests") == [("r2",)]
    assert rows(tmp_path / "i.duckdb", "SELECT row, reason FROM quarantine ORDER BY 1") == [
        (1, "duplicate JSON key p"),
        (3, "duplicate JSON key p"),
    ]


def test_an_extra_field_the_records_lack_is_named_as_the_mapping_names_it(tmp_path):
    # [extra] bootstrap_room = "room" on records without `room`: the message named the
    # internal key `x0` ("x0 points at 'room'"), which is in no file the responder has
    mapping = _mapping(tmp_path, 'prompt_tokens = "p"\n[extra]\nbootstrap_room = "room"\n')
    log = _log(tmp_path, _rec("r1", '"p":1'))
    with pytest.raises(InputError) as e:
        ingest([log], tmp_path / "i.duckdb", mapping=mapping)
    assert e.value.line() == (
        f"{mapping}:9 (extra): extra.bootstrap_room points at 'room', which {log} lacks "
        "(records have no such field); map it to a field the source has, or use { const = "
        "... }"
    )
