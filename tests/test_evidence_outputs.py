"""The evidence behind the figures in every output: the report's "Evidence and uncertainty"
section, its quarantine table by reason and coverage chart, and the notebook API. Fixture:
tests/fixtures/evidence (README.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from evidence_case import CASE_FILE

import forensics
from forensics import pipeline


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("run")
    pipeline.run(CASE_FILE, folder)
    return folder


@pytest.fixture(scope="module")
def body(out) -> str:
    html = (out / "report.html").read_text(encoding="utf-8")
    return html[: html.index("<script>")]


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_report_headline_figure_carries_the_range(body):
    assert 'id="exposure-range">range 6 – 15' in body


def test_report_evidence_section_gives_the_range_and_a_sentence_per_contribution(body):
    section = _text(body[body.index('<section id="evidence">') : body.index('id="timeline"')])
    assert "Exposed responses: 10 , range 6 to 15 on the evidence given." in section
    assert (
        "Upper bound: 3 quarantined record(s) could each have been an exposed response" in section
    )
    assert "Lower bound: 3 exposed response(s) have no status in the logs" in section
    # 3 upper-bound contributions and b.jsonl's 2 hours without records (coverage gaps)
    assert section.count("Lower bound:") == 2 and section.count("Upper bound:") == 4
    assert "Upper bound: 2 hours of the window have no or few records from b.jsonl" in section


def test_report_evidence_section_lists_assumptions_gaps_and_warnings(body):
    section = _text(body[body.index('<section id="evidence">') : body.index('id="timeline"')])
    assert "ts_end ts a request&#39;s end is taken as its arrival time ts" in section
    assert "b.jsonl 2 2026-09-01T04:00:00Z – 2026-09-01T05:00:00Z (2 h)" in section
    assert "[[exclude]] internal: 1 account(s) with no request" in section


def test_report_shows_the_quarantine_table_by_reason(body):
    inputs = body[body.index('<section id="inputs">') :]
    table = inputs[inputs.index("Quarantined records by reason") :]
    rows = re.findall(r"<tr><td[^>]*>a\.jsonl</td><td[^>]*>([^<]+)</td><td[^>]*>(\d+)</td>", table)
    assert rows == [
        ("conflicting duplicate", "3"),
        ("unparsable time ts", "3"),
        ("non-numeric token count prompt_tokens", "2"),
        ("fractional token count prompt_tokens", "1"),
        ("invalid JSON", "1"),
        ("missing required field account_id", "1"),
        ("non-numeric status", "1"),
    ]


def test_report_draws_coverage_under_the_timeline_with_the_gaps_red(out):
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.index('id="timeline"') < html.index('id="chart-coverage"')
    assert html.index('id="chart-coverage"') < html.index('id="prompt-size"')
    script = html[html.rindex("<script>") :]
    start = script.index("var specs = ") + len("var specs = ")
    specs = json.loads(script[start : script.index(";\n", start)])
    coverage = specs["chart-coverage"]
    cells = [row for rows in coverage["datasets"].values() for row in rows]
    assert sorted((c["lane"], c["hour"]) for c in cells if c["gap"]) == [
        ("b.jsonl", "2026-09-01T04:00:00Z"),
        ("b.jsonl", "2026-09-01T05:00:00Z"),
    ]
    assert len(cells) == 6 + 4 + 2  # a.jsonl's 6 hours, b.jsonl's 4 with records, 2 gaps
    assert coverage["layer"][1]["mark"]["color"] == "#d62728"


# --- the notebook ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def case():
    with forensics.open_case(CASE_FILE) as investigation:
        yield investigation


def test_notebook_exposure_range_equals_the_summary(case, out):
    summary = json.loads((out / "summary.json").read_text())
    assert case.exposure_range() == summary["exposure_range"]
    assert (case.exposure_range()["min"], case.exposure_range()["max"]) == (6, 15)


def test_notebook_exposure_range_requests_are_the_table(case):
    frame = case.exposure_range(requests=True)
    assert frame.columns == [
        "category",
        "direction",
        "request_id",
        "source",
        "row",
        "bootstrap_room",
    ]
    assert sorted(frame.filter(frame["category"] == "status_unknown")["request_id"]) == [
        "b01",
        "b02",
        "b04",
    ]
    assert frame.height == 9  # README: 3 + 1 + 3 + 1 + 1 rows


def test_notebook_coverage_and_assumptions_equal_the_summary(case, out):
    summary = json.loads((out / "summary.json").read_text())
    assert case.coverage() == summary["coverage"]
    assert case.assumptions() == summary["assumptions"]
    assert [a["field"] for a in case.assumptions()] == ["status", "ts_end", "completion_tokens"]


def test_notebook_shows_the_range_beside_the_count(case):
    assert "10 (range 6-15)" in case._repr_html_()
    assert (
        "exposed responses: 10 (range 6-15; the maximum may be higher: 2 hours of the window "
        "with no or few records (b.jsonl))"
    ) in case.headline().splitlines()


def test_notebook_allow_empty_is_passed_to_the_analysis(tmp_path):
    text = CASE_FILE.read_text().replace('models = ["m"]', 'models = ["m-typo"]')
    for name in ("a.jsonl", "a.mapping.toml", "b.jsonl", "b.mapping.toml"):
        (tmp_path / name).write_bytes((CASE_FILE.parent / name).read_bytes())
    (tmp_path / "incident.toml").write_text(text)
    with pytest.raises(forensics.errors.ForensicsError, match="no request of the case's models"):
        forensics.open_case(tmp_path / "incident.toml")
    with forensics.open_case(tmp_path / "incident.toml", allow_empty=True) as empty:
        assert empty.summary()["exposure_count"] == 0
