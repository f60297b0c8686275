"""Partial faults in request logs move a figure only into the range, or are refused by name
(issue 36, the ingest items): repeated JSON keys, repeated CSV columns, cut gzip/zstd streams,
logs re-exported at the same path, stray quotes, hour 24, a lone CR in a CSV value.

The fixtures are under `tests/fixtures/partial-faults/`; every expected figure is derived by
hand in its README (or, for a file written here, in the test's comment).
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import messages
from dbrows import rows

from forensics.cli import app

FAULTS = Path(__file__).parent / "fixtures" / "partial-faults"


def _copy(tmp_path: Path, name: str) -> Path:
    """A copy of fixture folder `name` in `tmp_path` (its case file and logs)."""
    folder = tmp_path / name
    shutil.copytree(FAULTS / name, folder)
    return folder


def _summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


# --- item 2: repeated JSON keys ----------------------------------------------------------


def test_records_repeating_a_mapped_key_count_toward_the_maximum_whatever_value_is_read(
    runner, tmp_path
):
    """repeated-keys/gw.jsonl (README): c1 is exposed (700 > 500); k1 repeats
    usage.prompt_tokens (100, 900), k2 model ("other", "m"), k3 status (500, 200), k4 ts
    (2020, 2026). Read first (DuckDB) each of k1..k4 is ruled out, read last (Python, jq)
    each is exposed: neither reading may rule them out, so each counts toward the maximum.
    Range 1-5 (it was 1-1)."""
    folder = _copy(tmp_path, "repeated-keys")
    db, out = tmp_path / "case.duckdb", tmp_path / "out"
    ingested = runner.invoke(
        app,
        [
            "ingest",
            str(folder / "gw.jsonl"),
            "--db",
            str(db),
            "--mapping",
            str(folder / "gw.mapping.toml"),
        ],
    )
    assert ingested.exit_code == 0, ingested.output
    analyzed = runner.invoke(
        app, ["analyze", str(folder / "case.toml"), "--db", str(db), "--out", str(out)]
    )
    assert analyzed.exit_code == 0, analyzed.output
    summary = _summary(out)
    assert summary["exposure_count"] == 1
    assert summary["exposure_range"] == {
        "min": 1,
        "likely": 1,
        "max": 5,
        "contributions": [{"category": "quarantined", "direction": "max", "requests": 4}],
    }


def test_a_repeated_key_or_a_repeated_parent_object_leaves_its_field_unreadable(tmp_path):
    """repeated-keys/gw-parent.jsonl (README): p1 repeats the object `usage` (so
    usage.prompt_tokens is 100 or 900); p2 repeats ts and model. Every field whose key (or an
    object on its path) repeats is NULL in quarantine_values; the other values are kept."""
    from forensics.ingest import ingest

    folder = FAULTS / "repeated-keys"
    db = tmp_path / "c.duckdb"
    ingest([folder / "gw-parent.jsonl"], db, mapping=folder / "gw.mapping.toml", allow_empty=True)
    assert rows(db, "SELECT row, reason FROM quarantine ORDER BY row") == [
        (1, "duplicate JSON key usage"),
        (2, "duplicate JSON key ts"),
    ]
    assert rows(
        db,
        "SELECT row, request_id, ts, account_id, model, prompt_tokens, status "
        "FROM quarantine_values ORDER BY row",
    ) == [
        (1, "p1", datetime(2026, 1, 1, 1, 5, tzinfo=UTC), "acct-f", "m", None, 200),
        (2, "p2", None, "acct-g", None, 700, 200),
    ]


# --- item 3: a CSV header naming a column twice ------------------------------------------


HEADER = FAULTS / "csv-header"


@pytest.mark.parametrize(
    ("log", "named"),
    [
        # request_id,ts,account_id,model,prompt_tokens,status,prompt_tokens: 5 and 7
        ("repeated.csv", "'prompt_tokens'"),
        # ...,Prompt_Tokens,status, prompt_tokens: DuckDB binds names without case or spaces
        ("spelled.csv", "'Prompt_Tokens'"),
    ],
)
def test_a_csv_header_naming_a_mapped_column_twice_is_refused_naming_both_positions(
    runner, tmp_path, log, named
):
    """DuckDB reads the first of two columns of one name (r1's prompt: 100 or 900?): the
    input is refused in one line naming the file, the header's line, the column and its two
    1-based positions, 5 and 7; nothing is loaded."""
    db = tmp_path / "c.duckdb"
    result = runner.invoke(
        app,
        [
            "ingest",
            str(HEADER / log),
            "--db",
            str(db),
            "--mapping",
            str(HEADER / "gw.mapping.toml"),
        ],
    )
    assert result.exit_code == 2
    (line,) = messages(result.stderr)
    assert line.startswith(f"error: {HEADER / log}:1: the header names the column {named} twice")
    assert "(columns 5 and 7)" in line
    assert not db.exists()


def test_a_csv_header_repeating_a_column_the_mapping_does_not_read_loads(tmp_path):
    """unmapped.csv: `note` twice (columns 7 and 8), unmapped: no value read is in doubt, as
    for a repeated JSON key the mapping does not read. 2 read, 2 loaded."""
    from forensics.ingest import ingest

    report = ingest(
        [HEADER / "unmapped.csv"], tmp_path / "c.duckdb", mapping=HEADER / "gw.mapping.toml"
    )
    assert report.totals() == {"rows_read": 2, "rows_loaded": 2, "duplicates": 0, "quarantined": 0}


# --- item 4: a cut gzip or zstd stream --------------------------------------------------


CUT = FAULTS / "cut-stream"
LINES = (CUT / "records.jsonl").read_bytes().splitlines(keepends=True)


def _compress(comp: str, data: bytes) -> bytes:
    import gzip

    import zstandard

    return gzip.compress(data) if comp == "gzip" else zstandard.ZstdCompressor().compress(data)


def _cut(comp: str, data: bytes) -> bytes:
    """A stream that decompresses to exactly `data`, then breaks: `data` as one complete
    member (frame), then only the start of a second one (gzip: its 10-byte header; zstd: its
    4-byte magic number and 1 byte of its frame header), which gives no data."""
    start = _compress(comp, LINES[3] * 50)[: 10 if comp == "gzip" else 5]
    return _compress(comp, data) + start


def _write(folder: Path, comp: str, data: bytes) -> str:
    """logs/gw.jsonl.gz (or .zst) of `folder`: `data`, cut (`_cut`); its path in the case."""
    name = f"logs/gw.jsonl.{'gz' if comp == 'gzip' else 'zst'}"
    (folder / "logs").mkdir()
    (folder / name).write_bytes(_cut(comp, data))
    return name


def _ingest_and_analyze(runner, folder: Path, tmp_path: Path) -> dict:
    db, out = tmp_path / "case.duckdb", tmp_path / "out"
    source = folder / "logs"
    ingested = runner.invoke(
        app, ["ingest", str(source), "--db", str(db), "--profile", "canonical"]
    )
    assert ingested.exit_code == 0, ingested.output
    analyzed = runner.invoke(
        app, ["analyze", str(folder / "case.toml"), "--db", str(db), "--out", str(out)]
    )
    assert analyzed.exit_code == 0, analyzed.output
    return _summary(out)


@pytest.mark.parametrize("comp", ["gzip", "zstd"])
def test_the_record_a_cut_stream_tears_is_quarantined_with_its_length_only(runner, tmp_path, comp):
    """The stream holds r1..r3 whole and the first 30 bytes of r4 (`{"request_id":"r4","ts":
    "2026-`), then breaks. 4 read: r1..r3 loaded, the torn r4 quarantined at line 4 with only
    its length (nothing readable: it counts toward the maximum). r1 is exposed (700 > 500),
    r2 and r3 fit: range 1-2. The cut is a warning in summary.json."""
    folder = _copy(tmp_path, "cut-stream")
    torn = LINES[3][:30]
    assert torn == b'{"request_id":"r4","ts":"2026-'
    name = _write(folder, comp, b"".join(LINES[:3]) + torn)
    summary = _ingest_and_analyze(runner, folder, tmp_path)
    assert summary["ingest"] == {
        "rows_read": 4,
        "rows_loaded": 3,
        "duplicates": 0,
        "quarantined": 1,
    }
    db = tmp_path / "case.duckdb"
    assert rows(db, "SELECT row, reason, raw FROM quarantine") == [
        (4, f"truncated record: the {comp} stream breaks off inside it", '{"bytes":30}')
    ]
    assert rows(
        db,
        "SELECT row, request_id, ts, account_id, model, prompt_tokens, status, prefill_node "
        "FROM quarantine_values",
    ) == [(4, None, None, None, None, None, None, None)]
    assert summary["exposure_range"] == {
        "min": 1,
        "likely": 1,
        "max": 2,
        "contributions": [{"category": "quarantined", "direction": "max", "requests": 1}],
    }
    assert [w for w in summary["warnings"] if "gw.jsonl" in w] == [
        f"{name}: the {comp} stream is cut short (truncated): requests logged after the "
        "break are in no figure, and the maximum of the exposure range may be higher; get a "
        "complete copy of the file"
    ]


@pytest.mark.parametrize("comp", ["gzip", "zstd"])
def test_a_stream_cut_inside_its_first_block_is_refused_as_truncated(runner, tmp_path, comp):
    """The stream breaks inside its first block (gzip: its 10-byte header only; zstd: its
    magic number and 1 byte of its frame header): nothing decompresses. It was refused as
    "empty once decompressed", which sends the responder looking for an empty export; the
    cause is the cut."""
    folder = _copy(tmp_path, "cut-stream")
    name = f"logs/gw.jsonl.{'gz' if comp == 'gzip' else 'zst'}"
    (folder / "logs").mkdir()
    (folder / name).write_bytes(_compress(comp, b"".join(LINES))[: 10 if comp == "gzip" else 5])
    result = runner.invoke(
        app,
        [
            "ingest",
            str(folder / "logs"),
            "--db",
            str(tmp_path / "c.duckdb"),
            "--profile",
            "canonical",
        ],
    )
    assert result.exit_code == 2
    (line,) = messages(result.stderr)
    assert line == (
        f"error: {folder / name}: the {comp} stream is cut short (truncated) before its first "
        "complete record: nothing in it can be read; get a complete copy of the file"
    )


def test_a_stream_cut_between_records_is_never_called_exact(runner, tmp_path):
    """The stream breaks right after r3's line end: 3 read, 3 loaded, nothing quarantined, so
    the range alone would be 1-1 with no contribution, which the report called exact. The
    records after the break are unknown: the cut is a warning and the report says so instead."""
    from forensics.render.report import evidence_view

    folder = _copy(tmp_path, "cut-stream")
    _write(folder, "gzip", b"".join(LINES[:3]))
    summary = _ingest_and_analyze(runner, folder, tmp_path)
    assert summary["ingest"]["rows_read"] == summary["ingest"]["rows_loaded"] == 3
    assert summary["exposure_range"] == {"min": 1, "likely": 1, "max": 1, "contributions": []}
    assert summary["cut_inputs"] == ["logs/gw.jsonl.gz"]
    view = evidence_view(summary)
    assert view["exact"] is False
    assert view["sentences"] == [
        (
            "max",
            "1 input was cut short (a truncated gzip or zstd stream: logs/gw.jsonl.gz): requests "
            "logged after the break are in no figure, so the maximum may be higher.",
        )
    ]


def test_a_csv_record_a_cut_stream_tears_inside_a_quoted_value_is_quarantined_at_its_start(
    tmp_path,
):
    """cut.csv.gz: the header, r1..r3 (lines 2-4), then r4 from line 5, whose quoted account
    `"acct-d` LF `x` the break cuts: 33 bytes (`r4,` 3 + the time 20 + `,` 1 + `"acct-d` 7 +
    LF 1 + `x` 1). 4 read, 3 loaded, r4 quarantined at line 5, the line it starts on, with
    its length; before, its open quote made the whole file unreadable."""
    from forensics.ingest import ingest

    header = b"request_id,ts,account_id,model,prompt_tokens,status\n"
    whole = b"".join(
        b"r%d,2026-01-01T01:0%d:00Z,acct-%d,m,700,200\n" % (i, i, i) for i in (1, 2, 3)
    )
    torn = b'r4,2026-01-01T01:04:00Z,"acct-d\nx'
    assert len(torn) == 3 + 20 + 1 + 7 + 1 + 1
    log = tmp_path / "cut.csv.gz"
    log.write_bytes(_cut("gzip", header + whole + torn))
    db = tmp_path / "c.duckdb"
    report = ingest([log], db, profile="canonical")
    assert report.totals() == {"rows_read": 4, "rows_loaded": 3, "duplicates": 0, "quarantined": 1}
    assert rows(db, "SELECT request_id, source_row FROM requests ORDER BY 2") == [
        ("r1", 2),
        ("r2", 3),
        ("r3", 4),
    ]
    assert rows(db, "SELECT row, reason, raw FROM quarantine") == [
        (5, "truncated record: the gzip stream breaks off inside it", '{"bytes":33}')
    ]


# --- item 17: a stray quote in a CSV value ----------------------------------------------


def test_a_stray_quote_inside_an_unquoted_csv_value_does_not_shift_later_rows(tmp_path):
    """csv-quotes/stray.csv (README): a quote opens a value only at a field's start; inside
    `acct-"b` (line 3) and `acct-""d` (line 5) the quotes are data, as DuckDB reads them.
    r5's quoted account spans lines 6-7. Each record keeps the line it starts on: r1..r6 at
    2, 3, 4, 5, 6, 8 (a stray quote had made the lines after it a quoted value's
    continuation: r3 at 5 and so on)."""
    from forensics.ingest import ingest

    db = tmp_path / "c.duckdb"
    report = ingest([FAULTS / "csv-quotes" / "stray.csv"], db, profile="canonical")
    assert report.totals() == {"rows_read": 6, "rows_loaded": 6, "duplicates": 0, "quarantined": 0}
    assert rows(db, "SELECT request_id, account_id, source_row FROM requests ORDER BY 3") == [
        ("r1", "acct-a", 2),
        ("r2", 'acct-"b', 3),
        ("r3", "acct-c", 4),
        ("r4", 'acct-""d', 5),
        ("r5", "acct-e\nx", 6),
        ("r6", "acct-f", 8),
    ]


# --- item 17: a time of day past 23:59:60 -----------------------------------------------


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        # ISO 8601's end of day: no RFC 3339 time; the Z after it is no zone name
        ("2026-01-01T24:00:00Z", "hour out of range in ts (00-23)"),
        ("2026-01-01T24:00Z", "hour out of range in ts (00-23)"),
        ("2026-01-01 25:00:00+02:00", "hour out of range in ts (00-23)"),
        ("2026-01-01T23:60:00Z", "minute out of range in ts (00-59)"),
        ("2026-01-01T23:59:61Z", "second out of range in ts (00-60)"),
    ],
)
def test_a_time_of_day_out_of_range_is_quarantined_naming_the_hour_not_a_zone(
    tmp_path, value, reason
):
    from forensics.ingest import ingest

    record = {"request_id": "x", "ts": value, "account_id": "a", "model": "m"}
    log = tmp_path / "one.jsonl"
    log.write_text(json.dumps({**record, "prompt_tokens": 1}) + "\n")
    db = tmp_path / "c.duckdb"
    ingest([log], db, profile="canonical", allow_empty=True)
    assert rows(db, "SELECT row, reason FROM quarantine") == [(1, reason)]


# --- item 17: a lone CR in an unquoted CSV value ----------------------------------------


@pytest.mark.parametrize(
    "ends",
    [
        b"\n",  # LF line ends: read as the file is
        b"\r\n",  # CRLF line ends
        b"mixed",  # CRLF on the header, LF after: read through a rewritten copy
    ],
)
def test_a_lone_cr_in_an_unquoted_csv_value_is_refused_naming_the_input_and_its_line(
    runner, tmp_path, ends
):
    """Line 2's account is `a` CR `b`, unquoted: DuckDB's strict reader stops on the whole
    file, and its message named the rewritten copy under the temporary folder when the file
    had been rewritten. Refused in one line naming the input and line 2, never a scratch
    file."""
    header = b"request_id,ts,account_id,model,prompt_tokens,status"
    one = b"r1,2026-01-01T01:00:00Z,a\rb,m,100,200"
    two = b"r2,2026-01-01T01:01:00Z,acct-b,m,100,200"
    first, rest = (b"\r\n", b"\n") if ends == b"mixed" else (ends, ends)
    log = tmp_path / "cr.csv"
    log.write_bytes(header + first + one + rest + two + rest)
    result = runner.invoke(
        app, ["ingest", str(log), "--db", str(tmp_path / "c.duckdb"), "--profile", "canonical"]
    )
    assert result.exit_code == 2
    (line,) = messages(result.stderr)
    assert line.startswith(
        f"error: {log}:2: a carriage return (CR) outside a quoted value and not before a line feed"
    )
    assert "forensics-ingest-" not in line


def test_a_cr_inside_a_quoted_csv_value_is_data(tmp_path):
    """Line 2's account is `"a` CR `b"`, quoted: a CR is data there (2 read, 2 loaded)."""
    from forensics.ingest import ingest

    log = tmp_path / "crq.csv"
    log.write_bytes(
        b"request_id,ts,account_id,model,prompt_tokens,status\n"
        b'r1,2026-01-01T01:00:00Z,"a\rb",m,100,200\n'
        b"r2,2026-01-01T01:01:00Z,acct-b,m,100,200\n"
    )
    db = tmp_path / "c.duckdb"
    ingest([log], db, profile="canonical")
    assert rows(db, "SELECT account_id, source_row FROM requests ORDER BY 2") == [
        ("a\rb", 2),
        ("acct-b", 3),
    ]


# --- item 7: a log re-exported at the same path -----------------------------------------


def _ingested_v1(runner, tmp_path: Path) -> tuple[Path, Path]:
    """re-export/ with gw.csv = v1.csv ingested into case.duckdb: (folder, database)."""
    folder = _copy(tmp_path, "re-export")
    shutil.copyfile(folder / "v1.csv", folder / "gw.csv")
    db = tmp_path / "case.duckdb"
    result = runner.invoke(
        app, ["ingest", str(folder / "gw.csv"), "--db", str(db), "--profile", "canonical"]
    )
    assert result.exit_code == 0, result.output
    return folder, db


def test_ingest_force_replaces_what_was_loaded_from_a_log_re_exported_at_its_path(runner, tmp_path):
    """re-export/ (README): v1 = a 700, b 700, c 100; v2, exported again under the same name,
    = a 700, b 100 (corrected), d 700. `ingest --force` of v2 replaces v1's load: a, b (100)
    and d, one input (v2's sha256), nothing quarantined; 2 exposed (a, d). Before, v2 loaded
    beside v1: c stayed, b (100) was quarantined as a conflicting duplicate of b (700), and
    3 were exposed (a, b, d)."""
    import hashlib

    folder, db = _ingested_v1(runner, tmp_path)
    shutil.copyfile(folder / "v2.csv", folder / "gw.csv")
    forced = runner.invoke(
        app,
        ["ingest", str(folder / "gw.csv"), "--db", str(db), "--profile", "canonical", "--force"],
    )
    assert forced.exit_code == 0, forced.output
    assert rows(db, "SELECT request_id, prompt_tokens FROM requests ORDER BY 1") == [
        ("a", 700),
        ("b", 100),
        ("d", 700),
    ]
    assert rows(db, "SELECT count(*) FROM quarantine") == [(0,)]
    v2 = hashlib.sha256((folder / "v2.csv").read_bytes()).hexdigest()
    assert rows(db, "SELECT path, sha256, rows_read FROM inputs") == [
        (str(folder / "gw.csv"), v2, 3)
    ]
    out = tmp_path / "out"
    analyzed = runner.invoke(
        app, ["analyze", str(folder / "case.toml"), "--db", str(db), "--out", str(out)]
    )
    assert analyzed.exit_code == 0, analyzed.output
    assert _summary(out)["exposure_count"] == 2


def test_plain_ingest_of_a_log_re_exported_at_an_ingested_path_is_refused_naming_force(
    runner, tmp_path
):
    """v2 at v1's path without --force: loading it beside v1 would count both (3 exposed).
    Refused in one line naming the file and --force; the database is as it was (a, b, c)."""
    folder, db = _ingested_v1(runner, tmp_path)
    shutil.copyfile(folder / "v2.csv", folder / "gw.csv")
    result = runner.invoke(
        app, ["ingest", str(folder / "gw.csv"), "--db", str(db), "--profile", "canonical"]
    )
    assert result.exit_code == 2
    (line,) = messages(result.stderr)
    assert line.startswith(
        f"error: {folder / 'gw.csv'}: the case database holds other content loaded from this path"
    )
    assert "give --force to replace what was loaded from it" in line
    assert rows(db, "SELECT request_id FROM requests ORDER BY 1") == [("a",), ("b",), ("c",)]


@pytest.mark.parametrize("command", ["analyze", "notify", "report"])
def test_a_command_on_a_source_changed_since_ingest_is_refused_naming_it_and_force(
    runner, tmp_path, command
):
    """v1 ingested and analyzed (2 exposed: a, b), then gw.csv re-exported as v2 without a
    new ingest: the database's figures are v1's, named as if of the file. analyze, notify
    and report refuse (exit 2) naming the file and `forensics ingest ... --force`."""
    folder, db = _ingested_v1(runner, tmp_path)
    out = tmp_path / "out"
    case = str(folder / "case.toml")
    first = runner.invoke(app, ["analyze", case, "--db", str(db), "--out", str(out)])
    assert first.exit_code == 0, first.output
    assert _summary(out)["exposure_count"] == 2
    shutil.copyfile(folder / "v2.csv", folder / "gw.csv")
    result = runner.invoke(app, [command, case, "--db", str(db), "--out", str(out)])
    assert result.exit_code == 2
    (line,) = messages(result.stderr)
    gw = folder / "gw.csv"
    assert line.startswith(f"error: {folder / 'case.toml'}: [[source]] file {gw} changed since")
    assert f"re-ingest it with its mapping and --force (forensics ingest {gw} --db {db}" in line


def test_open_case_on_a_database_whose_source_changed_since_ingest_is_refused(runner, tmp_path):
    """As analyze: the notebook's open_case on the existing database refuses the changed
    gw.csv (an InputError, exit code 2), naming the file."""
    from forensics import open_case
    from forensics.errors import InputError

    folder, db = _ingested_v1(runner, tmp_path)
    shutil.copyfile(folder / "v2.csv", folder / "gw.csv")
    with pytest.raises(InputError) as e:
        open_case(folder / "case.toml", db)
    assert e.value.exit_code == 2
    assert f"[[source]] file {folder / 'gw.csv'} changed since it was ingested" in str(e.value)
