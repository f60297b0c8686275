"""Mapping files: strict validation naming file, key and line; the built-in profiles."""

from __future__ import annotations

import pytest

from forensics.errors import InputError
from forensics.mapping import Source, load_mapping, profile


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
    assert m.fields["account_id"] == Source("path", "account.id", 5)
    assert m.fields["model"] == Source("const", "@cf/example/long-context-model", 6)
    assert m.fields["ts_end"].kind == "sql"
    assert (m.unit, m.timezone) == ("ms", "Europe/Berlin")
    assert m.extra == {"bootstrap_room": Source("path", "route.bootstrap_room", 13)}


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
    assert m.fields["ts"] == Source("path", "created")
    assert m.fields["account_id"] == Source("path", "user")
    assert m.fields["prompt_tokens"] == Source("path", "usage.prompt_tokens")


def test_unknown_profile():
    with pytest.raises(InputError, match="splunk"):
        profile("splunk")
