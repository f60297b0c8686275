"""Hostile and messy input, end to end: ids, dialects, overflows, local times, stale folders.

Each test runs a tiny case of `tests/fixtures/hostile/` (one folder per form; the expected
figures are derived by hand in `tests/fixtures/hostile/README.md`) through the library or the
command line, and checks the outputs a responder reads.
"""

from __future__ import annotations

import csv
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import messages

from forensics import pipeline
from forensics.case import load_case
from forensics.engines import DuckDBEngine
from forensics.errors import command
from forensics.render import notify

HOSTILE = Path(__file__).parent / "fixtures" / "hostile"
REPO = Path(__file__).resolve().parent.parent


def _case(tmp_path: Path, name: str) -> Path:
    """A copy of fixture folder `name` (its case file and logs) in `tmp_path`."""
    folder = tmp_path / name
    shutil.copytree(HOSTILE / name, folder)
    return folder


def _analyzed(case_path: Path, out: Path) -> pipeline.AnalysisResult:
    """`run` without the report (the charts take seconds): ingest every source into
    out/case.duckdb, analyze, write the notify lists."""
    case = load_case(case_path)
    out.mkdir(parents=True, exist_ok=True)
    with DuckDBEngine(out / "case.duckdb") as eng:
        warnings = pipeline.ingest_sources(eng, case).warnings
        result = pipeline.analyze_engine(eng, case, out)
        result.warnings[:0] = warnings
        result.warnings.extend(notify.write_lists(eng, case, out).warnings)
    return result


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def decode_request_ids(cell: str) -> list[str]:
    """recipients.csv `request_ids` as docs/outputs.md says: `;` separates the ids; inside an
    id `\\\\` stands for `\\` and `\\;` for `;`."""
    ids, current, escaped = [], "", False
    for char in cell:
        if escaped:
            current, escaped = current + char, False
        elif char == "\\":
            escaped = True
        elif char == ";":
            ids.append(current)
            current = ""
        else:
            current += char
    return [*ids, current] if cell else []


# --- 10: ids that break lists ------------------------------------------------------------------


def test_request_ids_holding_the_separator_decode_to_exactly_the_accounts_responses(tmp_path):
    folder = _case(tmp_path, "semicolon-ids")
    _analyzed(folder / "case.toml", tmp_path / "out")
    rows = _csv(tmp_path / "out" / "notify" / "recipients.csv")
    # acct-a: r;1 and r2 ('2' < ';', so r2 first); acct-b: x;y;z; acct-c: q\; (q, \, ;)
    assert [(r["account_id"], r["responses"], r["request_ids"]) for r in rows] == [
        ("acct-a", "2", "r2;r\\;1"),
        ("acct-b", "1", "x\\;y\\;z"),
        ("acct-c", "1", "q\\\\\\;"),
    ]
    assert {r["account_id"]: decode_request_ids(r["request_ids"]) for r in rows} == {
        "acct-a": ["r2", "r;1"],
        "acct-b": ["x;y;z"],
        "acct-c": ["q\\;"],
    }


# --- 11a: bidi controls and full-width formula starts --------------------------------------


def test_full_width_formula_starts_are_neutralized_and_bidi_controls_escaped(tmp_path):
    folder = _case(tmp_path, "bidi-fullwidth")
    out = tmp_path / "out"
    result = pipeline.run(folder / "case.toml", out)
    assert result.summary["exposure_count"] == 6
    rows = _csv(out / "exposed_requests.csv")
    assert [r["account_id"] for r in sorted(rows, key=lambda r: r["request_id"])] == [
        "acct-\\u202efdp.exe",  # the escape as text: shows as written, not as acct-exe.pdf
        '\'\uff1dHYPERLINK("http://evil.example")',
        "'\uff0b1",
        "'\uff0d1",
        "'\uff20SUM(1)",
        "'=1+1",
    ]
    recipients = {r["account_id"] for r in _csv(out / "notify" / "recipients.csv")}
    assert recipients == {r["account_id"] for r in rows}
    for path in out.rglob("*"):
        if path.is_file() and path.suffix in (".csv", ".html", ".json", ".svg"):
            assert "\u202e" not in path.read_text(encoding="utf-8"), path


@pytest.mark.parametrize("char", ["\u061c", "\u200e", "\u200f", "\u202a", "\u2066", "\u2069"])
def test_every_bidi_control_is_written_as_an_escape(tmp_path, char):
    import polars as pl

    from forensics.formats import printable, write_csv

    path = write_csv(pl.DataFrame({"id": [f"a{char}b"]}), tmp_path / "x.csv")
    assert path.read_text(encoding="utf-8") == f"id\na\\u{ord(char):04x}b\n"
    assert printable(f"a{char}b") == f"a\\u{ord(char):04x}b"


# --- 1: one id, one spelling -------------------------------------------------------------------

EXCL = HOSTILE / "exclusion-ids"


@pytest.fixture(scope="module")
def exclusion_db(tmp_path_factory):
    """gateway.jsonl (r1..r8, one account each, all over the capacity) ingested once; each
    test analyzes it with one of the case files."""
    db = tmp_path_factory.mktemp("excl") / "case.duckdb"
    with DuckDBEngine(db) as eng:
        pipeline.ingest_sources(eng, load_case(EXCL / "case-bom.toml"))
    return db


def _exclusion_copy(tmp_path: Path, accounts: str) -> Path:
    """case-inline-space.toml with `accounts` for its exclusion, written to tmp_path and
    naming the log the database holds (only a case's own inputs are in scope)."""
    text = (EXCL / "case-inline-space.toml").read_text().replace('" acct-x "', accounts)
    source = 'path = "gateway.jsonl"'
    assert source in text
    case = tmp_path / "case.toml"
    text = text.replace(source, f"path = {json.dumps(str(EXCL / 'gateway.jsonl'))}")
    case.write_text(text, encoding="utf-8")
    return case


def _excluded(db: Path, name: str) -> tuple[dict, list[str]]:
    case = load_case(EXCL / name)
    with DuckDBEngine(db) as eng:
        summary, warnings = pipeline.analyze_case(eng, case)
    return summary, warnings


@pytest.mark.parametrize(
    "name, account",
    [
        ("case-bom.toml", "acct-bom"),  # EF BB BF before the id on line 1
        ("case-inline-space.toml", "acct-x"),  # accounts = [" acct-x "]
        ("case-crlf.toml", "acct-crlf"),  # "# CRLF file" CRLF "acct-crlf" CRLF
    ],
)
def test_an_exclusion_id_is_read_by_the_one_id_rule(exclusion_db, name, account):
    # 8 accounts, each with one exposed request; the one excluded account leaves 7
    summary, warnings = _excluded(exclusion_db, name)
    assert summary["exposure_count"] == 7
    assert summary["excluded_by_reason"] == {"r": 1}
    assert load_case(EXCL / name).excluded_accounts() == {account: "r"}
    assert [w for w in warnings if "exclu" in w] == []


def test_a_comment_after_an_exclusion_id_is_refused_naming_its_line():
    from forensics.errors import CaseError

    with pytest.raises(CaseError) as e:
        load_case(EXCL / "case-comment.toml")
    assert e.value.line() == (
        f"{EXCL / 'excl-comment.txt'}:1: a comment after the account id 'acct-cmt'; put "
        "comments on their own line (starting with #): an id holds no comment"
    )


@pytest.mark.parametrize(
    "name, written, logged, why",
    [
        ("case-case.toml", "'acct-up'", "'ACCT-UP'", "letter case"),
        ("case-nfd.toml", "'acct-cafe\\u0301'", "'acct-caf\\u00e9'", "Unicode normalization (NFC)"),
        (
            "case-nfkc.toml",
            "'\\uff41\\uff43\\uff43\\uff54-nfkc'",
            "'acct-nfkc'",
            "compatibility forms (NFKC: full-width letters, ligatures)",
        ),
    ],
)
def test_an_exclusion_id_matching_an_account_only_loosely_is_refused_naming_both(
    exclusion_db, name, written, logged, why
):
    from forensics.errors import CaseError

    file = EXCL / f"excl-{name.removeprefix('case-').removesuffix('.toml')}.txt"
    with pytest.raises(CaseError) as e:
        _excluded(exclusion_db, name)
    assert e.value.line() == (
        f"{file}:1: exclusion id {written} names no account of the logs, but {logged} does, "
        f"apart from {why}; write the id exactly as the logs spell it (ids are compared code "
        "point for code point)"
    )


@pytest.mark.parametrize(
    "name, where, written, logged, why",
    [
        (
            "case-cyrillic.toml",
            "excl-cyrillic.txt:1",
            "'\\u0430cct-x'",  # U+0430 CYRILLIC SMALL LETTER A
            "'acct-x'",
            "look-alike letters of another script (Cyrillic, Greek)",
        ),
        (
            "case-zwsp.toml",
            "excl-zwsp.txt:1",
            "'acct\\u200b-x'",  # U+200B ZERO WIDTH SPACE inside
            "'acct-x'",
            "whitespace or invisible characters inside",
        ),
        (
            "case-quotes.toml",
            "excl-quotes.txt:1",
            "'\"acct-x\"'",
            "'acct-x'",
            "surrounding whitespace, quotes or invisible characters",
        ),
        (
            "case-tab-inline.toml",
            "case-tab-inline.toml:21 (exclude[1].accounts)",
            "'acct-\\u0009x'",  # accounts = ["acct-\tx"]
            "'acct-x'",
            "whitespace or invisible characters inside",
        ),
    ],
)
def test_an_exclusion_id_with_a_homoglyph_or_invisible_or_quote_is_refused_escaped(
    exclusion_db, name, where, written, logged, why
):
    # Each was read as an id of its own that names no account: exit 0 and acct-x (r3)
    # counted as exposed (8 instead of 7). Refused, both spellings escaped so they differ
    from forensics.errors import CaseError

    with pytest.raises(CaseError) as e:
        _excluded(exclusion_db, name)
    assert e.value.line() == (
        f"{EXCL / where}: exclusion id {written} names no account of the logs, but {logged} "
        f"does, apart from {why}; write the id exactly as the logs spell it (ids are compared "
        "code point for code point)"
    )


@pytest.mark.parametrize(
    "dash, why",
    [
        ("\u2010", ""),  # HYPHEN
        ("\u2011", "compatibility forms (NFKC: full-width letters, ligatures) and "),  # to U+2010
        ("\u2012", ""),  # FIGURE DASH
        ("\u2013", ""),  # EN DASH
        ("\u2212", ""),  # MINUS SIGN
        (
            "\ufe63",
            "compatibility forms (NFKC: full-width letters, ligatures)",
        ),  # SMALL HYPHEN-MINUS
        ("\uff0d", "compatibility forms (NFKC: full-width letters, ligatures)"),  # FULLWIDTH
    ],
)
def test_an_exclusion_id_with_a_look_alike_hyphen_is_refused_escaped(
    exclusion_db, tmp_path, dash, why
):
    # `acct<dash>x` was an id of its own naming no account: exit 0 and acct-x (r3) counted as
    # exposed. U+2011 is NFKC's U+2010, which then reads as `-`; U+FE63 and U+FF0D are `-`
    # under NFKC already (that step sets them apart first)
    from forensics.errors import CaseError

    why = (
        why
        if why.endswith("ligatures)")
        else why + "look-alike hyphens or digits of another script"
    )
    case = _exclusion_copy(tmp_path, f'"acct{dash}x"')
    with pytest.raises(CaseError) as e, DuckDBEngine(exclusion_db) as eng:
        pipeline.analyze_case(eng, load_case(case))
    assert e.value.line() == (
        f"{case}:21 (exclude[1].accounts): exclusion id 'acct\\u{ord(dash):04x}x' names no "
        f"account of the logs, but 'acct-x' does, apart from {why}; write the id exactly as "
        "the logs spell it (ids are compared code point for code point)"
    )


@pytest.mark.parametrize(
    "digit",
    [
        "\u0661",  # ARABIC-INDIC DIGIT ONE
        "\u06f1",  # EXTENDED ARABIC-INDIC DIGIT ONE
        "\u0967",  # DEVANAGARI DIGIT ONE
        "\U0001d7cf",  # MATHEMATICAL BOLD DIGIT ONE (also NFKC, tried first)
    ],
)
def test_an_exclusion_id_with_a_digit_of_another_script_is_refused_escaped(tmp_path, digit):
    # The log's account is acct-1 (one exposed request, 500 > 100); the case excludes
    # `acct-<digit one of another script>`: it named no account, exit 0 and 1 exposed
    from forensics.errors import CaseError

    (tmp_path / "gateway.jsonl").write_text(
        '{"request_id": "r1", "ts": "2026-01-01T01:00:00Z", "account_id": "acct-1", "model": '
        '"m", "prompt_tokens": 500, "completion_tokens": 10, "status": 200}\n'
    )
    text = (EXCL / "case-inline-space.toml").read_text().replace('" acct-x "', f'"acct-{digit}"')
    case = tmp_path / "case.toml"
    case.write_text(text, encoding="utf-8")
    why = (
        "compatibility forms (NFKC: full-width letters, ligatures)"
        if digit == "\U0001d7cf"
        else "look-alike hyphens or digits of another script"
    )
    written = f"\\U{ord(digit):08x}" if ord(digit) > 0xFFFF else f"\\u{ord(digit):04x}"
    with pytest.raises(CaseError) as e, DuckDBEngine() as eng:
        pipeline.ingest_sources(eng, load_case(case))
        pipeline.analyze_case(eng, load_case(case))
    assert e.value.line() == (
        f"{case}:21 (exclude[1].accounts): exclusion id 'acct-{written}' names no account of "
        f"the logs, but 'acct-1' does, apart from {why}; write the id exactly as the logs "
        "spell it (ids are compared code point for code point)"
    )


@pytest.mark.parametrize(
    "name, written", [("comma", "'acct-a,acct-x'"), ("tab", "'acct-a\\u0009acct-x'")]
)
def test_an_exclusion_line_holding_two_ids_is_refused_naming_them(exclusion_db, name, written):
    # `acct-a,acct-x` (or with a tab between) was one id naming no account: both counted as
    # exposed (8, none excluded). Its parts name the accounts of r1 and r3
    from forensics.errors import CaseError

    with pytest.raises(CaseError) as e:
        _excluded(exclusion_db, f"case-{name}.toml")
    assert e.value.line() == (
        f"{EXCL / f'excl-{name}.txt'}:1: exclusion id {written} names no account of the logs, "
        "but it reads as several ids joined by a comma, semicolon or whitespace, and 'acct-a', "
        "'acct-x' are accounts of the logs; write one account id a line (or one per string in "
        "accounts = [...])"
    )


def test_an_exclusion_file_whose_lines_end_with_cr_alone_is_refused():
    # `# researchers` CR `acct-a` CR `acct-x` CR: split at LF it is one line starting with #,
    # a comment: nothing was excluded and the case file loaded. Refused at its line 1
    from forensics.errors import CaseError

    with pytest.raises(CaseError) as e:
        load_case(EXCL / "case-cr.toml")
    assert e.value.line() == (
        f"{EXCL / 'excl-cr.txt'}:1: a carriage return (CR) inside the line: the file's lines "
        "end with CR alone (an old Mac export), so its ids would run together as one; save it "
        "with LF or CRLF line ends, one account id a line"
    )


def test_accounts_counted_as_exposed_that_look_like_an_excluded_id_are_warned_about(tmp_path):
    # twins.jsonl: t1 acct-x (excluded), t2 acct-x + NBSP, t3 acct + ZERO WIDTH SPACE + -x, t4
    # and t6 ACCT-X, t5 acct-y; all prompt 500 > 100, status 200. Exposed: t2..t6 = 5, r: 1.
    # The three look-alikes stay counted (each may be another customer), each named in a
    # warning, escaped, in summary.json too; in code point order: ACCT-X, acct-x\u00a0,
    # acct\u200b-x ('-' U+002D sorts before U+200B)
    folder = _case(tmp_path, "exclusion-ids")
    result = _analyzed(folder / "case-twins.toml", tmp_path / "out")
    assert result.summary["exposure_count"] == 5
    assert result.summary["excluded_by_reason"] == {"r": 1}
    place = f"{folder / 'case-twins.toml'}:21 (exclude[1].accounts)"
    expected = [
        f"{place}: account {twin} is counted as exposed ({n} response(s)), but its id differs "
        f"from the excluded 'acct-x' only by {why}: if it is the same account, list this "
        "spelling too"
        for twin, n, why in [
            ("'ACCT-X'", 2, "letter case"),
            ("'acct-x\\u00a0'", 1, "surrounding whitespace, quotes or invisible characters"),
            ("'acct\\u200b-x'", 1, "whitespace or invisible characters inside"),
        ]
    ]
    assert [w for w in result.warnings if "look" in w or "counted as exposed" in w] == expected
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert [w for w in summary["warnings"] if "counted as exposed" in w] == expected


def test_an_exclusion_id_naming_no_account_at_all_is_no_error(exclusion_db, tmp_path):
    # nothing near it in the logs: no refusal (the scope's warning names it)
    case = _exclusion_copy(tmp_path, '"acct-zz"')
    with DuckDBEngine(exclusion_db) as eng:
        summary, warnings = pipeline.analyze_case(eng, load_case(case))
    assert summary["exposure_count"] == 8
    assert [w for w in warnings if "acct-zz" in w] == [
        "[[exclude]] r: 1 account(s) with no request of the case's models in the window: acct-zz"
    ]


def test_an_unmatched_exclusion_id_is_named_escaped_in_the_scope_warning(exclusion_db, tmp_path):
    # "\u0430cct-zz" (Cyrillic a) is near no account: no refusal, and the warning shows it
    # escaped, so it cannot pass for acct-zz
    case = _exclusion_copy(tmp_path, '"\u0430cct-zz"')
    with DuckDBEngine(exclusion_db) as eng:
        _, warnings = pipeline.analyze_case(eng, load_case(case))
    assert [w for w in warnings if "cct-zz" in w] == [
        "[[exclude]] r: 1 account(s) with no request of the case's models in the window: "
        "'\\u0430cct-zz'"
    ]


def test_an_id_in_a_message_never_looks_like_another():
    from forensics.schema import spelled

    # a backslash is doubled, so the six characters a\u0430 differ from a + U+0430; a
    # character beyond U+FFFF is \U and eight digits (\u1f600 would read as U+1F60, '0')
    assert spelled("a\\u0430") == "'a\\\\u0430'"
    assert spelled("a\u0430") == "'a\\u0430'"
    assert spelled("a\U0001f600") == "'a\\U0001f600'"


def test_the_bundled_case_with_a_notepad_exclusion_file_still_excludes_the_researcher(tmp_path):
    # researchers.txt saved by Notepad: EF BB BF, then the researcher's id on line 1. The
    # figures are the bundled case's own (sample_logs/glm53/truth.json: 155 exposed, 11
    # accounts; the researcher's responses all under security-researcher). Read with the BOM
    # as part of the id, the researcher's responses were counted as exposed (12 accounts)
    truth = json.loads((REPO / "sample_logs" / "glm53" / "truth.json").read_text())
    folder = tmp_path / "glm53"
    shutil.copytree(REPO / "sample_logs" / "glm53", folder)
    (folder / "researchers.txt").write_bytes(b"\xef\xbb\xbfacct-5e1f0c93d2\n")
    result = _analyzed(folder / "incident.toml", tmp_path / "out")
    assert (result.summary["exposure_count"], result.summary["affected_accounts"]) == (
        truth["exposure_count"],
        truth["affected_accounts"],
    )
    assert result.summary["excluded_by_reason"] == truth["excluded_by_reason"]
    researcher = truth["excluded_by_reason"]["security-researcher"]
    excluded = _csv(tmp_path / "out" / "notify" / "excluded.csv")
    assert [(r["account_id"], r["reason"]) for r in excluded] == [
        ("acct-5e1f0c93d2", "security-researcher"),
        ("acct-ops-qa-1", "internal-test"),
        ("acct-ops-repro-a", "internal-test"),
        ("acct-ops-repro-b", "internal-test"),
    ]
    assert excluded[0]["requests"] == str(researcher)


# --- 3: numbers never crash or wrap ------------------------------------------------------------

NUM = HOSTILE / "numbers"


def _ingest(
    tmp_path: Path, log: Path, mapping: Path | None = None, warnings: list[str] | None = None
) -> tuple[dict, list, list]:
    """(totals, requests (id, ts, ts_end, source_row), quarantine (row, reason, raw)); the
    ingest's warnings are added to `warnings`."""
    from dbrows import rows

    from forensics.ingest import ingest

    db = tmp_path / "i.duckdb"
    profile = None if mapping else "canonical"
    # allow_empty: an input whose every record is quarantined is the accounting under test
    report = ingest([log], db, mapping=mapping, profile=profile, allow_empty=True)
    if warnings is not None:
        warnings.extend(report.warnings)
    loaded = rows(db, "SELECT request_id, ts, ts_end, source_row FROM requests ORDER BY 4")
    quarantined = rows(db, "SELECT row, reason, raw FROM quarantine ORDER BY row")
    return report.totals(), loaded, quarantined


def _totals(read: int, loaded: int, duplicates: int, quarantined: int) -> dict[str, int]:
    return {
        "rows_read": read,
        "rows_loaded": loaded,
        "duplicates": duplicates,
        "quarantined": quarantined,
    }


def _utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_an_epoch_too_large_for_microseconds_is_quarantined_not_the_whole_ingest(tmp_path):
    # r2: t = 1e13 s (year ~318,857) overflows microseconds; r1 1767229200 s = 2026-01-01
    # 01:00:00Z, r3 + 120 s
    totals, loaded, quarantined = _ingest(
        tmp_path, NUM / "epoch.jsonl", NUM / "epoch-s.mapping.toml"
    )
    assert totals == _totals(3, 2, 0, 1)
    assert [(r[0], r[1], r[3]) for r in loaded] == [
        ("r1", _utc(2026, 1, 1, 1), 1),
        ("r3", _utc(2026, 1, 1, 1, 2), 3),
    ]
    assert quarantined == [
        (
            2,
            "implausible epoch ts for unit s (not within 2000-2100 UTC)",
            '{"id":"r2","t":10000000000000,"acct":"acct-b","model":"m","prompt":500}',
        )
    ]


def test_an_epoch_in_ms_too_large_for_microseconds_is_quarantined(tmp_path):
    # r2: t = 9.3e15 ms is beyond 2^63 microseconds
    totals, loaded, quarantined = _ingest(
        tmp_path, NUM / "epoch-ms.jsonl", NUM / "epoch-ms.mapping.toml"
    )
    assert totals == _totals(2, 1, 0, 1)
    assert [(r[0], r[1]) for r in loaded] == [("r1", _utc(2026, 1, 1, 1))]
    assert [q[:2] for q in quarantined] == [
        (2, "implausible epoch ts for unit ms (not within 2000-2100 UTC)")
    ]


@pytest.mark.parametrize(
    "log, why",
    [
        ("sql-huge.jsonl", "Out of Range Error: Interval value "),
        ("sql-string.jsonl", "latency_ms: a value of another JSON type than most records hold"),
    ],
)
def test_a_sql_field_failing_on_one_record_quarantines_that_record(tmp_path, log, why):
    # ts_end = timestamp + to_milliseconds(latency_ms); r2's latency is 1e30 (overflows the
    # interval) or "fast" (not a number, while the other records give numbers): r2 is
    # quarantined naming the field, and a warning says why; r1 ends 1.5 s, r3 2.5 s after
    # its start
    warnings: list[str] = []
    totals, loaded, quarantined = _ingest(tmp_path, NUM / log, NUM / "sql.mapping.toml", warnings)
    assert [w.split(why)[0] for w in warnings] == [
        f"{NUM / log}: sql of fields.ts_end failed on 1 record(s), quarantined; row 2: "
    ]
    assert totals == _totals(3, 2, 0, 1)
    assert loaded == [
        ("r1", _utc(2026, 1, 1, 1), _utc(2026, 1, 1, 1, 0, 1, 500000), 1),
        ("r3", _utc(2026, 1, 1, 1, 2), _utc(2026, 1, 1, 1, 2, 2, 500000), 3),
    ]
    assert [q[:2] for q in quarantined] == [(2, "sql of fields.ts_end failed on this record")]
    assert json.loads(quarantined[0][2]) == {
        "id": "r2",
        "timestamp": "2026-01-01T01:01:00Z",
        "acct": "acct-b",
        "model": "m",
        "prompt": 500,
        "fields.ts_end": None,
    }


def test_a_response_ending_before_its_request_is_quarantined(tmp_path):
    # r2: latency -120000 ms: ts_end 00:59Z before ts 01:01Z
    totals, loaded, quarantined = _ingest(
        tmp_path, NUM / "ts-end-before.jsonl", NUM / "sql.mapping.toml"
    )
    assert totals == _totals(2, 1, 0, 1)
    assert [r[0] for r in loaded] == ["r1"]
    assert [q[:2] for q in quarantined] == [(2, "ts_end before ts")]


def test_token_counts_of_2_to_the_40_or_more_are_quarantined(tmp_path):
    # big.jsonl: prompts 5e18 (o1) and 7e18 (e1), both >= 2^40 = 1,099,511,627,776
    totals, _, quarantined = _ingest(tmp_path, NUM / "big.jsonl")
    assert totals == _totals(2, 0, 0, 2)
    assert [q[:2] for q in quarantined] == [
        (1, "implausible token count prompt_tokens (2^40 or more)"),
        (2, "implausible token count prompt_tokens (2^40 or more)"),
    ]


@pytest.mark.parametrize(
    "name, tokens",
    [
        # o1 prompt 5e18 + e1 prompt 7e18: the node's running sum reaches 1.2e19 > 2^63
        ("case-big.toml", {"o1": (5 * 10**18, 0), "e1": (7 * 10**18, 0)}),
        # e1's prompt + completion alone is 1.6e19 > 2^63
        ("case-big-completion.toml", {"o1": (10, 9 * 10**18), "e1": (7 * 10**18, 9 * 10**18)}),
    ],
)
def test_the_pool_walkback_sums_tokens_beyond_bigint_without_overflow(tmp_path, name, tokens):
    # A database whose requests hold counts beyond ingest's bound (written by other tooling
    # or an older version): the analysis must still not overflow. o1 (acct-a) ends 01:01 on
    # d1, e1 (acct-c) starts 01:10 on d1. Bands: o1 fits (5e18 <= 6e18, or 10), e1 exposed
    # (6e18 < 7e18 <= 9e18). Walk-back from e1: the pool that ended before 01:10 is {o1},
    # whose newer candidates sum to 0 < 9e18: o1 is a candidate of another account. So 1
    # pair, 1 owner request, 1 owner account.
    from forensics.schema import REQUESTS_DDL

    case = load_case(NUM / name)
    with DuckDBEngine(tmp_path / "big.duckdb") as eng:
        eng.execute(REQUESTS_DDL)
        for rid, acct, start, (prompt, completion) in (
            ("o1", "acct-a", 0, tokens["o1"]),
            ("e1", "acct-c", 10, tokens["e1"]),
        ):
            eng.execute(
                "INSERT INTO requests (request_id, ts, ts_end, account_id, model, "
                "prompt_tokens, completion_tokens, status, prefill_node, decode_node, source, "
                "source_row) VALUES ($id, $ts, $end, $acct, 'm', $p, $c, 200, 'p1', 'd1', "
                "'big.jsonl', 1)",
                id=rid,
                ts=_utc(2026, 1, 1, 1, start),
                end=_utc(2026, 1, 1, 1, start + 1),
                acct=acct,
                p=prompt,
                c=completion,
            )
        summary, _ = pipeline.analyze_case(eng, case)
    assert (summary["exposure_count"], summary["affected_accounts"]) == (1, 1)
    assert summary["bands"]["fits"] == 1
    owners = summary["data_owners"]
    assert (owners["pairs"], owners["requests"], owners["accounts"]) == (1, 1, 1)
    assert (owners["status"], owners["exposed_attributed"]) == ("complete", 1)


# --- 4: local times are not guessed --------------------------------------------------------


def test_local_times_a_clock_change_repeats_or_skips_are_quarantined(tmp_path):
    # America/New_York: 2026-11-01 01:00-01:59 happens twice (EDT then EST), 2026-03-08
    # 02:00-02:59 never. r1 12:00 EDT = 16:00Z; r4 has its own offset: 01:30-05:00 = 06:30Z
    log = HOSTILE / "local-times" / "gw.jsonl"
    totals, loaded, quarantined = _ingest(
        tmp_path, log, HOSTILE / "local-times" / "ny.mapping.toml"
    )
    assert totals == _totals(6, 2, 0, 4)
    assert [(r[0], r[1]) for r in loaded] == [
        ("r1", _utc(2026, 7, 1, 16)),
        ("r4", _utc(2026, 11, 1, 6, 30)),
    ]
    ambiguous = (
        "ambiguous local time ts in America/New_York (a clock change repeats it; give a UTC offset)"
    )
    nonexistent = (
        "nonexistent local time ts in America/New_York (a clock change skips it; give a UTC offset)"
    )
    assert [q[:2] for q in quarantined] == [
        (2, ambiguous),  # 2026-11-01 01:30:00
        (3, nonexistent),  # 2026-03-08 02:30:00
        (5, ambiguous),  # 2026-11-01 01:30 (no seconds: the general path)
        (6, nonexistent),  # 2026-03-08T02:30:00.250
    ]


@pytest.mark.parametrize(
    "zone, local, expected",
    [
        # London: BST ends 2026-10-25 02:00 -> 01:00; starts 2026-03-29 01:00 -> 02:00
        ("Europe/London", "2026-10-25 01:30:00", "ambiguous"),
        ("Europe/London", "2026-03-29 01:30:00", "nonexistent"),
        ("Europe/London", "2026-03-29 02:30:00", _utc(2026, 3, 29, 1, 30)),
        # Lord Howe moves by 30 minutes: 02:00 -> 01:30 on 2026-04-05, 02:00 -> 02:30 on
        # 2026-10-04
        ("Australia/Lord_Howe", "2026-04-05 01:45:00", "ambiguous"),
        ("Australia/Lord_Howe", "2026-10-04 02:15:00", "nonexistent"),
        ("Australia/Lord_Howe", "2026-10-04 02:45:00", _utc(2026, 10, 3, 15, 45)),  # +11:00
    ],
)
def test_local_time_resolution_in_other_zones(tmp_path, zone, local, expected):
    log = tmp_path / "one.jsonl"
    log.write_text(json.dumps({"id": "r1", "t": local, "acct": "a", "model": "m", "prompt": 5}))
    mapping = tmp_path / "m.mapping.toml"
    mapping.write_text(
        (HOSTILE / "local-times" / "ny.mapping.toml").read_text().replace("America/New_York", zone)
    )
    _, loaded, quarantined = _ingest(tmp_path, log, mapping)
    if isinstance(expected, datetime):
        assert (loaded[0][1], quarantined) == (expected, [])
    else:
        assert loaded == []
        assert quarantined[0][1].startswith(f"{expected} local time ts in {zone}")


# --- 5: duplicate JSON keys ----------------------------------------------------------------


@pytest.mark.parametrize("mapping", ["gw.mapping.toml", "gw-sql.mapping.toml"])
def test_a_record_repeating_a_mapped_json_key_is_quarantined(tmp_path, mapping):
    # DuckDB reads the first of repeated keys, Python's json (and jq) the last: r1's prompt is
    # 100 or 900. r1 repeats usage.prompt_tokens, r2 usage, r3 acct, r6 acct (once spelled
    # "\u0061cct"); r4 repeats only the unmapped colo, r5 nothing
    folder = HOSTILE / "json-keys"
    totals, loaded, quarantined = _ingest(tmp_path, folder / "gw.jsonl", folder / mapping)
    assert totals == _totals(6, 2, 0, 4)
    assert [r[0] for r in loaded] == ["r4", "r5"]
    assert [q[:2] for q in quarantined] == [
        (1, "duplicate JSON key usage.prompt_tokens"),
        (2, "duplicate JSON key usage"),
        (3, "duplicate JSON key acct"),
        (6, "duplicate JSON key acct"),
    ]


def test_records_with_repeated_mapped_keys_no_longer_count_as_exposed(tmp_path):
    # capacity 200: r1/r2 read as 100 would fit; r3 (acct-c or acct-z?) is ambiguous. Left:
    # r4 and r5 (500 each): 2 exposed, 2 accounts
    folder = _case(tmp_path, "json-keys")
    result = _analyzed(folder / "case.toml", tmp_path / "out")
    assert (result.summary["exposure_count"], result.summary["affected_accounts"]) == (2, 2)
    assert result.summary["ingest"]["quarantined"] == 4


def test_request_ids_differing_only_by_unicode_normalization_are_not_loaded_twice(tmp_path):
    # ids-nf.jsonl: row 1 "req-café" with U+00E9 (NFC), row 2 "req-cafe" + U+0301 (NFD), every
    # other value equal: the first is loaded with its own bytes, the second quarantined
    totals, loaded, quarantined = _ingest(tmp_path, EXCL / "ids-nf.jsonl")
    assert totals == _totals(2, 1, 0, 1)
    assert [(r[0], r[3]) for r in loaded] == [("req-caf\u00e9", 1)]
    assert [q[:2] for q in quarantined] == [
        (2, "request_id differs from an earlier record's only by Unicode normalization")
    ]


def test_a_request_id_loaded_earlier_in_another_unicode_form_is_quarantined(tmp_path):
    from dbrows import rows

    from forensics.ingest import ingest

    lines = (EXCL / "ids-nf.jsonl").read_text(encoding="utf-8").splitlines()
    (tmp_path / "nfc.jsonl").write_text(lines[0] + "\n", encoding="utf-8")
    (tmp_path / "nfd.jsonl").write_text(lines[1] + "\n", encoding="utf-8")
    db = tmp_path / "c.duckdb"
    ingest([tmp_path / "nfc.jsonl"], db, profile="canonical")
    second = ingest([tmp_path / "nfd.jsonl"], db, profile="canonical")
    assert second.totals() == _totals(1, 0, 0, 1)
    assert rows(db, "SELECT request_id FROM requests") == [("req-caf\u00e9",)]


# --- 9: hostile lengths --------------------------------------------------------------------


def test_ids_and_names_longer_than_1024_bytes_are_quarantined(tmp_path):
    # 1024 bytes load; 1025 bytes (or 513 two-byte characters) do not, whatever the field
    def record(i: int, **fields: str) -> str:
        base = {"request_id": f"r{i}", "ts": "2026-01-01T01:00:00Z", "account_id": "a"}
        return json.dumps({**base, "model": "m", "prompt_tokens": 5, **fields})

    lines = [
        record(1, account_id="a" * 1024),
        record(2, account_id="a" * 1025),
        record(3, account_id="\u00e9" * 513),
        record(4, request_id="r" * 200_000),
        record(5, model="m" * 1025),
        record(6, decode_node="d" * 1025),
    ]
    log = tmp_path / "long.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    totals, loaded, quarantined = _ingest(tmp_path, log)
    assert totals == _totals(6, 1, 0, 5)
    assert [r[0] for r in loaded] == ["r1"]
    assert [q[:2] for q in quarantined] == [
        (2, "account_id longer than 1024 bytes"),
        (3, "account_id longer than 1024 bytes"),
        (4, "request_id longer than 1024 bytes"),
        (5, "model longer than 1024 bytes"),
        (6, "decode_node longer than 1024 bytes"),
    ]


# --- 2 and 11b: the CSV dialect is pinned, never guessed; rows keep their physical line ------

DIALECT = HOSTILE / "csv-dialect"


def test_a_csv_whose_first_line_is_no_header_is_refused_naming_line_1(tmp_path):
    # gw-comment-first.csv: line 1 "# exported by gw-1", the header on line 2. A sniffer
    # chose comment='#' here: the "#r2" record vanished uncounted and "team#7" became "team"
    from forensics.errors import InputError

    with pytest.raises(InputError) as e:
        _ingest(tmp_path, DIALECT / "gw-comment-first.csv", DIALECT / "gw.mapping.toml")
    assert "lacks (no such column: its header, line 1, names '# exported by gw-1'; a " in str(
        e.value
    )
    assert "preamble before the header is declared with [csv] skip = N)" in str(e.value)


def test_a_declared_preamble_is_skipped_and_hash_signs_are_data(tmp_path):
    # [csv] skip = 1: line 1 is the preamble, line 2 the header; records on lines 3, 4, 5
    mapping = tmp_path / "skip.mapping.toml"
    mapping.write_text((DIALECT / "gw.mapping.toml").read_text() + "[csv]\nskip = 1\n")
    from dbrows import rows

    totals, _, _ = _ingest(tmp_path, DIALECT / "gw-comment-first.csv", mapping)
    assert totals == _totals(3, 3, 0, 0)
    assert rows(
        tmp_path / "i.duckdb", "SELECT request_id, account_id, source_row FROM requests ORDER BY 3"
    ) == [
        ("r1", "team#7", 3),
        ("#r2", "acct-b", 4),
        ("r3", "acct-c", 5),
    ]


def test_a_single_quote_is_data_not_a_quote_character(tmp_path):
    # line 2: ...,'acct,1' is 7 fields where the header has 6 (its 42 bytes, without the LF)
    totals, loaded, quarantined = _ingest(
        tmp_path, DIALECT / "gw-quote.csv", DIALECT / "gw.mapping.toml"
    )
    assert totals == _totals(3, 2, 0, 1)
    assert [(r[0], r[3]) for r in loaded] == [("r2", 3), ("r3", 4)]
    assert quarantined == [(2, "invalid CSV row (7 fields where the header has 6)", '{"bytes":42}')]


def test_ragged_csv_rows_are_quarantined_with_their_field_counts(tmp_path):
    totals, loaded, quarantined = _ingest(
        tmp_path, DIALECT / "gw-ragged.csv", DIALECT / "gw.mapping.toml"
    )
    assert totals == _totals(4, 2, 0, 2)
    assert [(r[0], r[3]) for r in loaded] == [("r1", 2), ("r4", 5)]
    assert [q[:2] for q in quarantined] == [
        (3, "invalid CSV row (5 fields where the header has 6)"),
        (4, "invalid CSV row (7 fields where the header has 6)"),
    ]


def test_blank_lines_do_not_shift_the_rows_after_them(tmp_path):
    # line 1 header, 2 r1, 3 blank, 4 r2, 5-6 blank, 7 r3 (prompt "x500"), 8 r4
    totals, loaded, quarantined = _ingest(
        tmp_path, DIALECT / "gw-blank-lines.csv", DIALECT / "gw.mapping.toml"
    )
    assert totals == _totals(4, 3, 0, 1)
    assert [(r[0], r[3]) for r in loaded] == [("r1", 2), ("r2", 4), ("r4", 8)]
    assert [q[:2] for q in quarantined] == [(7, "non-numeric token count prompt_tokens")]


def test_a_record_spanning_lines_keeps_the_line_it_starts_on(tmp_path):
    # line 1 header; r1 on lines 2-3 (a quoted model spanning a line break); 4 blank; 5 r2 with
    # one field too few (DuckDB numbers it 4: it counts r1 as one line); 6 r3; 7-9 r4 whose
    # quoted model holds a blank line; 10 r5
    data = (
        "request_id,ts,model,prompt_tokens,status,account_id\n"
        'r1,2026-01-01T01:00:00Z,"m\nx",500,200,acct-a\n'
        "\n"
        "r2,2026-01-01T01:01:00Z,m,500,200\n"
        "r3,2026-01-01T01:02:00Z,m,500,200,acct-c\n"
        'r4,2026-01-01T01:03:00Z,"m\n\ny",500,200,acct-d\n'
        "r5,2026-01-01T01:04:00Z,m,500,200,acct-e\n"
    )
    log = tmp_path / "multi.csv"
    log.write_text(data)
    totals, loaded, quarantined = _ingest(tmp_path, log, DIALECT / "gw.mapping.toml")
    assert totals == _totals(5, 4, 0, 1)
    assert [(r[0], r[3]) for r in loaded] == [("r1", 2), ("r3", 6), ("r4", 7), ("r5", 10)]
    assert [q[:2] for q in quarantined] == [
        (5, "invalid CSV row (5 fields where the header has 6)")
    ]


def test_a_declared_dialect_is_read_as_declared(tmp_path):
    # ; separated, ' quoted, no header (columns column0..column5), one preamble line
    log = tmp_path / "semi.csv"
    log.write_text(
        "export of 2026-01-01\n"
        "r1;2026-01-01T01:00:00Z;'m;1';500;200;acct-a\n"
        "r2;2026-01-01T01:01:00Z;m;500;200;acct-b\n"
    )
    mapping = tmp_path / "semi.mapping.toml"
    mapping.write_text(
        'format = "csv"\n[fields]\nrequest_id = "column0"\nts = "column1"\nmodel = "column2"\n'
        'prompt_tokens = "column3"\nstatus = "column4"\naccount_id = "column5"\n'
        '[csv]\ndelimiter = ";"\nquote = "\'"\nheader = false\nskip = 1\n'
    )
    from dbrows import rows

    totals, _, _ = _ingest(tmp_path, log, mapping)
    assert totals == _totals(2, 2, 0, 0)
    assert rows(
        tmp_path / "i.duckdb", "SELECT request_id, model, source_row FROM requests ORDER BY 3"
    ) == [
        ("r1", "m;1", 2),
        ("r2", "m", 3),
    ]


@pytest.mark.parametrize(
    "name, line, what",
    [
        (
            "case-accounts-preamble.toml",
            1,
            "the accounts file has no account_id column (its header, line 1, names "
            "'# contacts export 2026-01-02'); name the column holding the account ids "
            "account_id; the header is line 1",
        ),
        (
            "case-accounts-quote.toml",
            2,
            "4 fields where the header has 3; quote a value holding a comma with double quotes",
        ),
    ],
)
def test_an_accounts_file_is_read_as_rfc_4180_never_guessed(tmp_path, name, line, what):
    from forensics.errors import InputError

    folder = _case(tmp_path, "csv-dialect")
    case = load_case(folder / name)
    with pytest.raises(InputError) as e:
        _analyzed(folder / name, tmp_path / "out")
    assert e.value.line() == f"{case.accounts_path}:{line}: {what}"


def test_a_comment_line_of_an_exclusion_file_naming_an_account_is_warned_about(tmp_path):
    # excl-hash.txt: "#acct-b" (a comment line) then acct-d; gw-accts.csv has an account
    # "#acct-b": it stays exposed (a comment excludes nothing), with a warning. 4 accounts,
    # acct-d excluded: 3 exposed
    folder = _case(tmp_path, "csv-dialect")
    case = folder / "case-accounts-quote.toml"
    case.write_text(case.read_text().replace('[accounts]\npath = "accounts-quote.csv"\n', ""))
    result = _analyzed(case, tmp_path / "out")
    assert result.summary["exposure_count"] == 3
    assert [w for w in result.warnings if "comment" in w] == [
        f"{folder.resolve() / 'excl-hash.txt'}:1: the comment line '#acct-b' is an account id "
        "of the logs, and a comment excludes nothing: list it in accounts = [...] to exclude it"
    ]


# --- 6: accounts.csv shapes ------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, line, what",
    [
        (
            "empty2",
            3,
            "empty account_id (also line 4); give every row an account id, or remove the row",
        ),
        ("empty1", 3, "empty account_id; give every row an account id, or remove the row"),
        (
            "responses",
            1,
            "column 'responses' is also a column of notify/recipients.csv; rename it (e.g. "
            "contact_responses): the lists keep their own columns",
        ),
        (
            "request_ids",
            1,
            "column 'request_ids' is also a column of notify/recipients.csv; rename it (e.g. "
            "contact_request_ids): the lists keep their own columns",
        ),
        (
            "excluded_reason",
            1,
            "column 'excluded_reason' is also a column of notify/data_owners.csv; rename it "
            "(e.g. contact_excluded_reason): the lists keep their own columns",
        ),
        (
            "ragged",
            3,
            "4 fields where the header has 3; quote a value holding a comma with double quotes",
        ),
    ],
)
def test_an_accounts_file_that_cannot_be_joined_is_one_line_naming_its_line(
    tmp_path, name, line, what
):
    from forensics.errors import InputError

    folder = _case(tmp_path, "accounts-shapes")
    with pytest.raises(InputError) as e:
        _analyzed(folder / f"case-{name}.toml", tmp_path / "out")
    assert e.value.line() == f"{folder.resolve() / f'accounts-{name}.csv'}:{line}: {what}"


def test_a_contact_column_named_like_a_list_column_is_exit_2_not_a_panic(tmp_path):
    # excluded_reason: a column of data_owners.csv, whose frame has no rows here: Polars
    # panicked (pyo3_runtime.PanicException escaped the CLI as a 59-line traceback)
    from typer.testing import CliRunner

    from forensics.cli import app

    folder = _case(tmp_path, "accounts-shapes")
    res = CliRunner().invoke(
        app, ["run", str(folder / "case-excluded_reason.toml"), "--out", str(tmp_path / "o")]
    )
    assert res.exit_code == 2
    assert messages(res.stderr) == [
        f"error: {folder.resolve() / 'accounts-excluded_reason.csv'}:1: column "
        "'excluded_reason' is also a column of notify/data_owners.csv; rename it (e.g. "
        "contact_excluded_reason): the lists keep their own columns"
    ]
    assert not (tmp_path / "o").exists()  # run publishes nothing when it fails


# --- 11f, 11g: encodings and padded streams --------------------------------------------------

ENC = HOSTILE / "encodings"


@pytest.mark.parametrize(
    "data, name",
    [
        # gw-utf16.jsonl: the 3 records of gw-utf8.jsonl saved as UTF-16 LE with its BOM
        (None, "UTF-16 (little-endian)"),
        (b"\xfe\xff" + "{}\n".encode("utf-16-be"), "UTF-16 (big-endian)"),
        ("{}\n".encode("utf-16-le"), "UTF-16 (little-endian, without a byte order mark)"),
        (b"\xff\xfe\x00\x00" + "{}\n".encode("utf-32-le"), "UTF-32 (little-endian)"),
    ],
)
def test_a_log_in_utf16_or_utf32_is_refused_naming_its_encoding(tmp_path, data, name):
    from forensics.errors import InputError

    log = ENC / "gw-utf16.jsonl"
    if data is not None:
        log = tmp_path / "x.jsonl"
        log.write_bytes(data * 3)
    with pytest.raises(InputError) as e:
        _ingest(tmp_path, log)
    assert e.value.line() == (
        f"{log}: the file is {name} text, not UTF-8; save it as UTF-8 (e.g. iconv -f "
        f"{name.split()[0]} -t UTF-8)"
    )
    assert not (tmp_path / "i.duckdb").exists()


def test_a_utf8_byte_order_mark_on_a_log_is_still_read(tmp_path):
    log = tmp_path / "bom.jsonl"
    log.write_bytes(b"\xef\xbb\xbf" + (ENC / "gw-utf8.jsonl").read_bytes())
    assert _ingest(tmp_path, log)[0] == _totals(3, 3, 0, 0)


def test_a_gzip_padded_with_zero_bytes_is_read_as_gzip_reads_it(tmp_path):
    # gw-padded.jsonl.gz = gw.jsonl.gz (3 records) + 512 zero bytes; `gzip -t` accepts it
    from forensics.ingest import ingest

    report = ingest([ENC / "gw-padded.jsonl.gz"], tmp_path / "p.duckdb", profile="canonical")
    assert report.totals() == _totals(3, 3, 0, 0)
    assert report.warnings == [
        f"{ENC / 'gw-padded.jsonl.gz'}: ignored 512 zero bytes after the last gzip member"
    ]


def test_bytes_after_the_zero_padding_are_still_refused(tmp_path):
    from forensics.errors import InputError

    log = tmp_path / "x.jsonl.gz"
    log.write_bytes((ENC / "gw.jsonl.gz").read_bytes() + b"\0" * 512 + b"junk")
    with pytest.raises(InputError, match="unreadable gzip data"):
        _ingest(tmp_path, log)


# --- 8: which files an ingest reads, and what its totals say --------------------------------

SETS = HOSTILE / "input-sets"


@pytest.mark.parametrize(
    "how, kind", [({"mapping": SETS / "gw.mapping.toml"}, "jsonl "), ({"profile": "canonical"}, "")]
)
def test_a_folder_gives_only_its_logs_and_names_what_it_skipped(tmp_path, how, kind):
    # logs/: gw-1.jsonl (2 records), gw-2.jsonl (1), README.txt (prose; .txt is an engine-log
    # suffix), manifest.json (a pretty-printed object: its first line "{" is no JSON object)
    from forensics.ingest import ingest

    report = ingest([SETS / "logs"], tmp_path / "s.duckdb", **how)
    assert report.totals() == _totals(3, 3, 0, 0)
    assert [s.path for s in report.inputs] == [str(SETS / "logs" / f"gw-{i}.jsonl") for i in (1, 2)]
    assert report.warnings == [
        f"{SETS / 'logs'}: skipped 2 file(s) that are not {kind}logs: README.txt, manifest.json"
    ]


def test_one_file_reached_by_several_paths_is_one_input(tmp_path, monkeypatch):
    # logs/gw-1.jsonl (2 records) named four ways: relative, absolute, through "..", a link
    from dbrows import rows

    from forensics.ingest import ingest

    folder = _case(tmp_path, "input-sets")
    (folder / "link-gw-1.jsonl").symlink_to(folder / "logs" / "gw-1.jsonl")
    monkeypatch.chdir(folder)
    names = ["logs/gw-1.jsonl", str(folder / "logs" / "gw-1.jsonl"), "logs/../logs/gw-1.jsonl"]
    report = ingest([*names, "link-gw-1.jsonl"], tmp_path / "s.duckdb", mapping="gw.mapping.toml")
    assert report.totals() == _totals(2, 2, 0, 0)
    assert [s.path for s in report.inputs] == ["logs/gw-1.jsonl"]
    assert report.warnings == [
        f"{names[1]}, logs/../logs/gw-1.jsonl, link-gw-1.jsonl: the same file as an input "
        "named before it (read once)"
    ]
    assert rows(tmp_path / "s.duckdb", "SELECT path FROM inputs") == [
        (str(folder / "logs" / "gw-1.jsonl"),)
    ]


def test_force_replaces_one_of_two_inputs_ingested_under_the_same_name(tmp_path, monkeypatch):
    # siteA/gw.jsonl (a1, a2) and siteB/gw.jsonl (b1), each ingested as "gw.jsonl" from its
    # folder; then siteA again with m2 (adds extra.user) and --force: only a1 and a2 change
    from dbrows import rows

    from forensics.errors import option
    from forensics.ingest import ingest

    folder = _case(tmp_path, "force-by-path")
    db = tmp_path / "f.duckdb"
    for site in ("siteA", "siteB"):
        monkeypatch.chdir(folder / site)
        ingest(["gw.jsonl"], db, mapping="../m1.mapping.toml")
    monkeypatch.chdir(folder / "siteA")
    report = ingest(["gw.jsonl"], db, mapping="../m2.mapping.toml", force=True)
    assert report.totals() == _totals(2, 2, 0, 0)
    assert report.warnings == [
        f"gw.jsonl: re-ingested ({option('force')}): its earlier load was replaced"
    ]
    assert rows(db, "SELECT request_id, extra->>'user' FROM requests ORDER BY 1") == [
        ("a1", "u1"),
        ("a2", "u2"),
        ("b1", None),
    ]
    assert rows(db, "SELECT path FROM inputs ORDER BY 1") == [
        (str(folder / "siteA" / "gw.jsonl"),),
        (str(folder / "siteB" / "gw.jsonl"),),
    ]


# --- 7: no self-contradicting --out ----------------------------------------------------------


@pytest.mark.parametrize("command", ["run", "analyze"])
def test_an_out_inside_a_source_folder_is_refused_on_the_first_run(tmp_path, command):
    # case-v1 with its source the folder `logs` (gw.jsonl moved into it) and --out
    # logs/results: the first run wrote its CSVs and JSON there and the second ingested them
    # as logs ("blast_radius.csv lacks 'id'"). Refused before anything is written
    from forensics.errors import InputError

    folder = _case(tmp_path, "stale-outputs")
    (folder / "logs").mkdir()
    (folder / "gw.jsonl").rename(folder / "logs" / "gw.jsonl")
    case = folder / "case.toml"
    text = (folder / "case-v1.toml").read_text(encoding="utf-8")
    case.write_text(text.replace('path = "gw.jsonl"', 'path = "logs"'), encoding="utf-8")
    out = folder / "logs" / "results"
    with pytest.raises(InputError) as e:
        if command == "run":
            pipeline.run(case, out)
        else:
            pipeline.analyze(case, tmp_path / "c.duckdb", out)
    assert e.value.line() == (
        f"{out}: the output folder is inside the folder of [[source]] {folder / 'logs'}: the "
        f"next ingest of the case would read its outputs as logs; give out= a "
        f"folder outside {folder / 'logs'}"
    )
    assert not out.exists()


def test_analyze_into_the_out_of_another_analysis_removes_its_lists_and_report(tmp_path):
    # run v1 (acct-a, acct-b exposed: 2) writes lists and report into R; analyze v2 (acct-b
    # excluded: 1) into R must not leave the lists and report of v1 beside its summary
    folder = _case(tmp_path, "stale-outputs")
    out = tmp_path / "R"
    assert pipeline.run(folder / "case-v1.toml", out).summary["exposure_count"] == 2
    (out / "mine.txt").write_text("a file of the user's")
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    same = pipeline.analyze(folder / "case-v1.toml", out / "case.duckdb", out)
    assert not [w for w in same.warnings if "removed" in w]  # the same analysis: all kept
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == written
    result = pipeline.analyze(folder / "case-v2.toml", out / "case.duckdb", out)
    assert result.summary["exposure_count"] == 1
    assert sorted(p.name for p in out.iterdir() if not p.name.endswith(".wal")) == [
        "blast_radius.csv",
        "case.duckdb",
        "exposed_requests.csv",
        "manifest.json",
        "mine.txt",
        "summary.json",
    ]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert [f["path"] for f in manifest["files"]] == [
        "blast_radius.csv",
        "exposed_requests.csv",
        "summary.json",
    ]
    (warning,) = [w for w in result.warnings if "removed" in w]
    # notify/ of v1: recipients, data_owners, excluded, no_contact, README.md,
    # regulator_summary.md, incident.json, notices/index.csv and the notices of its 2
    # recipients (no decode node: no data owner)
    assert warning == (
        f"removed notify/ (10 files), report.html, timeline.png, timeline.svg from {out}: they "
        f"showed an earlier analysis; run {command('notify')} and {command('report')} again"
    )


def test_a_very_long_account_id_is_cut_in_charts_and_report_and_kept_whole_in_csvs(tmp_path):
    # three exposed requests (prompt 500 > capacity 100); r2's account id is 1,005 characters
    # (within ingest's 1,024 bytes): the charts and the report show its first 100 characters,
    # "…" and 8 hex digits of its sha256; the CSVs keep it whole
    import hashlib

    long_id = "acct-" + "a" * 1000
    lines = [
        json.dumps(
            {
                "request_id": f"r{i}",
                "ts": f"2026-01-01T01:0{i}:00Z",
                "account_id": long_id if i == 2 else f"acct-{i}",
                "model": "m",
                "prompt_tokens": 500,
                "status": 200,
            }
        )
        for i in (1, 2, 3)
    ]
    folder = _case(tmp_path, "semicolon-ids")
    (folder / "gw.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    pipeline.run(folder / "case.toml", out)
    shown = long_id[:100] + "\u2026" + hashlib.sha256(long_id.encode()).hexdigest()[:8]
    assert long_id in {r["account_id"] for r in _csv(out / "exposed_requests.csv")}
    assert long_id in {r["account_id"] for r in _csv(out / "notify" / "recipients.csv")}
    for name in ("report.html", "timeline.svg"):
        text = (out / name).read_text(encoding="utf-8")
        assert "a" * 200 not in text, name
    assert shown in (out / "report.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("ends", [(b"\n", b"\r\n"), (b"\r\n", b"\n")])
def test_a_csv_mixing_crlf_and_lf_line_ends_is_read(tmp_path, ends):
    # DuckDB's strict reader stops on mixed line ends ("invalid state"): the file is read
    # through a copy whose lines all end with LF. Line 1 header, 2 r1, 3 blank (the other
    # line end), 4 r2 (the other line end), 5 r3
    one, other = ends
    rows = (DIALECT / "gw-ragged.csv").read_bytes().splitlines()
    data = (
        rows[0]
        + one
        + rows[1]
        + one
        + other
        + rows[4]
        + other
        + rows[1].replace(b"r1", b"r3")
        + one
    )
    log = tmp_path / "mixed.csv"
    log.write_bytes(data)
    totals, loaded, _ = _ingest(tmp_path, log, DIALECT / "gw.mapping.toml")
    assert totals == _totals(3, 3, 0, 0)
    assert [(r[0], r[3]) for r in loaded] == [("r1", 2), ("r4", 4), ("r3", 5)]


# --- item 11e: one glob dialect for [[capacity]] nodes ------------------------------------------


def test_a_node_with_a_backslash_matches_its_hand_written_entry(tmp_path):
    folder = _case(tmp_path, "backslash-node")
    result = _analyzed(folder / "case.toml", tmp_path / "out")
    assert result.summary["bands"]["exposed"] == 2
    assert result.summary["bands"]["unknown_capacity"] == 0
    assert not [w for w in result.warnings if "matches no prefill node" in w]


GLOB_NAMES = ["a\\b", "ab", "a\\\\b", "a[b", "a]b", "a[]b", "a!b", "axb", "a\\", "[", "a*b"]


@pytest.mark.parametrize(
    "pattern",
    ["a\\b", "a\\*", "*\\", "a[\\]b", "a[!\\]b", "a[]]b", "a[b", "a[!x]b", "[", "a\\[b", "a*b"],
)
def test_sql_glob_matches_exactly_what_the_case_file_glob_matches(pattern):
    # fnmatch (the case file's reading: a backslash is an ordinary character) is the reference
    import fnmatch

    from forensics.case import sql_glob

    expected = {n for n in GLOB_NAMES if fnmatch.fnmatchcase(n, pattern)}
    with DuckDBEngine() as engine:
        got = {
            n for n in GLOB_NAMES if engine.scalar("SELECT $n GLOB $p", n=n, p=sql_glob(pattern))
        }
    assert got == expected
