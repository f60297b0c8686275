"""Mapping files: strict validation naming file, key and line; the built-in profiles."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from forensics.engines import DuckDBEngine
from forensics.errors import InputError
from forensics.ingest import ingest_into
from forensics.mapping import (
    FieldSource,
    Mapping,
    duckdb_sql_problem,
    load_mapping,
    profile,
    sql_problem,
)

REPO = Path(__file__).resolve().parent.parent


def _write(tmp_path, text: str):
    path = tmp_path / "x.mapping.toml"
    path.write_text(text)
    return path


FULL = """format = "jsonl"
[fields]
request_id = "id"
ts = "timestamp"
account_id = "account.id"
model = { const = "@cf/example/long-context-model" }
prompt_tokens = "usage.prompt_tokens"
ts_end = { sql = "timestamp::TIMESTAMPTZ + to_milliseconds(latency_ms)" }
[timestamp]
unit = "ms"
timezone = "Europe/Berlin"
[extra]
bootstrap_room = "route.bootstrap_room"
"""


def test_mapping_reads_paths_sql_consts_time_and_extra(tmp_path):
    m = load_mapping(_write(tmp_path, FULL))
    assert m.format == "jsonl"
    assert m.fields["account_id"] == FieldSource("path", "account.id", 5)
    assert m.fields["model"] == FieldSource("const", "@cf/example/long-context-model", 6)
    assert m.fields["ts_end"].kind == "sql"
    assert (m.unit, m.timezone) == ("ms", "Europe/Berlin")
    assert m.extra == {"bootstrap_room": FieldSource("path", "route.bootstrap_room", 13)}


@pytest.mark.parametrize(
    ("text", "where", "key"),
    [
        ('colour = "red"\n[fields]\nts = "t"\n', ":1", "colour"),
        ('[fields]\nts = "t"\nrequest = "id"\n', ":3", "fields.request"),
        ('[fields]\nts = "t"\n[timestamp]\nunit = "minutes"\n', ":4", "timestamp.unit"),
        ('[fields]\nts = "t"\n[timestamp]\nzone = "UTC"\n', ":4", "timestamp.zone"),
        ('[fields]\nts = "t"\n[timestamp]\ntimezone = "Mars/Olympus"\n', ":4", "timezone"),
        ('format = "xml"\n[fields]\nts = "t"\n', ":1", "format"),
        ('[fields]\nts = { expr = "t" }\n', ":2", "fields.ts"),
        ("[fields]\nts = { const = 9223372036854775808 }\n", ":2", "fields.ts"),
    ],
)
def test_bad_mapping_names_file_line_and_key(tmp_path, text, where, key):
    path = _write(tmp_path, text)
    with pytest.raises(InputError) as e:
        load_mapping(path)
    assert f"{path}{where}" in e.value.line()
    assert key in e.value.line()


def test_mapping_without_a_required_field_is_refused(tmp_path):
    path = _write(tmp_path, '[fields]\nts = "t"\naccount_id = "a"\nmodel = "m"\n')
    with pytest.raises(InputError, match="prompt_tokens"):
        load_mapping(path)


def test_missing_mapping_file(tmp_path):
    with pytest.raises(InputError, match="not found"):
        load_mapping(tmp_path / "none.mapping.toml")


def test_openai_profile_reads_epoch_seconds_and_nested_usage():
    m = profile("openai")
    assert m.unit == "s"
    assert m.fields["ts"] == FieldSource("path", "created")
    assert m.fields["account_id"] == FieldSource("path", "user")
    assert m.fields["prompt_tokens"] == FieldSource("path", "usage.prompt_tokens")


def test_unknown_profile():
    with pytest.raises(InputError, match="splunk"):
        profile("splunk")


# --- { sql = ... } holds one scalar expression, never a statement or a file/system call -----

ATTACKS = [
    "COPY (SELECT 1) TO '/tmp/kv-forensics-pwned.csv'",
    "ATTACH '/tmp/kv-forensics-pwned.duckdb' AS pwned",
    "INSTALL httpfs",
    "LOAD httpfs",
    "1; DROP TABLE requests",
    "read_text('/etc/passwd')",
    "getenv('HOME')",
    "(SELECT count(*) FROM requests)",
    "latency_ms IN (SELECT prompt_tokens FROM requests)",
    "read_csv('/etc/passwd')",
    "current_setting('home_directory')",
    "SET enable_external_access = true",
    "$structure",
    "count(*)",
]


def _sql_mapping(tmp_path, expr: str) -> Path:
    path = tmp_path / "x.mapping.toml"
    path.write_text(
        'format = "csv"\n[fields]\nts = "t"\naccount_id = "a"\nmodel = "m"\n'
        f"prompt_tokens = \"p\"\nts_end = {{ sql = '''{expr}''' }}\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("expr", ATTACKS)
def test_sql_that_is_not_one_scalar_expression_is_refused_with_file_line_and_key(tmp_path, expr):
    path = _sql_mapping(tmp_path, expr)
    with pytest.raises(InputError) as e:
        load_mapping(path)
    line = e.value.line()
    assert line.startswith(f"{path}:7 (fields.ts_end): sql ")
    assert "write one expression over the record's own columns" in line
    assert "\n" not in line


@pytest.mark.parametrize("expr", ATTACKS)
def test_duckdbs_own_parse_refuses_the_same_sql(expr):
    # on the case database's own connection, as ingest checks it before running it
    with DuckDBEngine() as engine:
        assert duckdb_sql_problem(engine, expr) is not None


@pytest.mark.parametrize("expr", ATTACKS)
def test_a_mapping_built_in_python_is_checked_too(expr):
    fields = {"ts": FieldSource("path", "t"), "ts_end": FieldSource("sql", expr)}
    with pytest.raises(InputError, match=r"^python mapping \(fields\.ts_end\): sql "):
        Mapping(origin="python mapping", format="csv", fields=fields)


def test_ingest_refuses_unsafe_sql_before_running_anything(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text("t,a,m,p\n2026-09-01T00:00:00Z,acct,m,10\n", encoding="utf-8")
    target = tmp_path / "pwned.csv"
    fields = {
        "ts": FieldSource("path", "t"),
        "account_id": FieldSource("path", "a"),
        "model": FieldSource("path", "m"),
        "prompt_tokens": FieldSource("path", "p"),
        "ts_end": FieldSource("sql", "t", 7),
    }
    m = Mapping(origin="x.mapping.toml", format="csv", fields=fields)
    # bypass the check at construction: _validate_sql must still refuse before running it
    m.fields["ts_end"] = FieldSource("sql", f"1); COPY (SELECT 42) TO '{target}'; SELECT (1", 7)
    with DuckDBEngine(tmp_path / "case.duckdb") as engine, pytest.raises(InputError) as e:
        ingest_into(engine, [str(log)], mapping=m)
    assert e.value.line().startswith("x.mapping.toml:7 (fields.ts_end): sql ")
    assert not target.exists()


def test_every_bundled_and_fixture_mapping_still_loads_with_its_sql():
    paths = [
        *REPO.glob("sample_logs/**/*.mapping.toml"),
        *REPO.glob("tests/fixtures/**/*.mapping.toml"),
    ]
    assert len(paths) >= 3
    exprs = [src.value for p in paths for _, _, src in load_mapping(p).sql_sources()]
    assert "timestamp::TIMESTAMPTZ + to_milliseconds(latency_ms)" in exprs


# expression -> its value on the one-row `src` table below, computed by hand
LEGITIMATE = {
    "timestamp::TIMESTAMPTZ + to_milliseconds(latency_ms)": "2026-09-01 00:00:01.5+00",
    "epoch_ms(ms)": "2026-09-01 00:00:00",
    "to_timestamp(s)": "2026-09-01 00:00:00+00",
    "strptime(d, '%d/%m/%Y %H:%M')": "2026-09-01 00:00:00",
    "coalesce(nullif(trim(u), ''), 'unknown')": "unknown",
    "split_part(path, '/', 2)": "acct-1",
    "regexp_extract(path, '([0-9]+)', 1)::BIGINT": "1",
    "CASE WHEN latency_ms > 1000 THEN 'slow' ELSE 'fast' END": "slow",
    "j->>'$.usage.prompt_tokens'": "7",
    "json_extract_string(j, '$.usage.prompt_tokens')::INTEGER + 1": "8",
    "TRY_CAST(u AS BIGINT)": None,
    "timestamp::TIMESTAMPTZ AT TIME ZONE 'UTC'": "2026-09-01 00:00:00",
    "date_trunc('hour', timestamp::TIMESTAMP) + INTERVAL 30 MINUTE": "2026-09-01 00:30:00",
    "latency_ms BETWEEN 1 AND 2000 AND u IS NOT NULL": "true",
    "upper(path) -- a trailing comment": "/ACCT-1/X",
}


@pytest.mark.parametrize("expr", sorted(LEGITIMATE))
def test_ordinary_expressions_pass_both_checks_and_evaluate(expr):
    with DuckDBEngine() as engine:
        engine.execute(
            "CREATE TABLE src AS SELECT '2026-09-01T00:00:00Z' AS timestamp, 1500 AS latency_ms, "
            "1788220800000 AS ms, 1788220800 AS s, '01/09/2026 00:00' AS d, '  ' AS u, "
            "'/acct-1/x' AS path, '{\"usage\": {\"prompt_tokens\": 7}}'::JSON AS j"
        )
        assert sql_problem(expr) is None
        assert duckdb_sql_problem(engine, expr) is None
        value = engine.scalar(f"SELECT CAST((\n{expr}\n) AS VARCHAR) FROM src")
    assert value == LEGITIMATE[expr]


def test_a_mapping_that_is_not_utf8_names_the_line_and_byte(tmp_path):
    path = tmp_path / "x.mapping.toml"
    path.write_bytes(b'[fields]\nts = "t"\naccount_id = "caf\xe9"\n')
    with pytest.raises(InputError) as e:
        load_mapping(path)
    assert e.value.line() == (
        f"{path}:3: not UTF-8 text (byte 0xe9 on line 3); save the file as UTF-8"
    )


def test_a_mapping_loaded_unchecked_for_its_fingerprint_has_the_checked_ones_digest():
    from forensics.mapping import mapping_digest

    path = Path(__file__).parent.parent / "sample_logs" / "glm53" / "gateway.mapping.toml"
    checked, unchecked = load_mapping(path), load_mapping(path, check_sql=False)
    assert checked.sql_sources()  # the sample mapping holds { sql } expressions
    assert mapping_digest(unchecked) == mapping_digest(checked)
    assert unchecked == checked


def test_a_mapping_saved_with_a_byte_order_mark_loads_as_without_it(tmp_path):
    # Notepad starts a UTF-8 file with EF BB BF; tomllib alone refuses it ("Invalid
    # statement (at line 1, column 1)")
    plain, marked = tmp_path / "plain.mapping.toml", tmp_path / "marked.mapping.toml"
    plain.write_text(FULL)
    marked.write_bytes(b"\xef\xbb\xbf" + FULL.encode())
    assert load_mapping(marked) == replace(load_mapping(plain), origin=str(marked))
