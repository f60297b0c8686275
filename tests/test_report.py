"""The incident report: content, offline-ness, determinism, timeline images.

The fixture case (tests/fixtures/report/) holds 10 requests in the window worked out by hand:
exposed r01, r02 (acct-a) and r03 (acct-b); fits r04, r05, r09, r10; excluded r06 (acct-qa,
internal-test); over_capacity_failed r07; over_context r08. Data owners: acct-c (r04, behind
r01 and r03) and acct-a (r02, behind r03).

The prompt-size chart shows every band but `fits` below min_prompt_tokens = 200 (r05 100,
r09 150): 8 requests, exposed 3, fits 2 (r04 300, r10 1500), excluded, over_capacity_failed
and over_context 1 each. Rendering with `max_marks` below 3 (timeline) or 8 (size) draws
counts per bin instead of one mark per request.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import altair as alt
import duckdb
import pytest

import forensics
from forensics import pipeline
from forensics.case import load_case
from forensics.engines import DuckDBEngine
from forensics.render import figures
from forensics.render.report import happened_view, render_report

FIXTURE = Path(__file__).parent / "fixtures" / "report"

SUMMARY: dict[str, Any] = {
    "exposure_count": 3,
    "affected_accounts": 2,
    "excluded_by_reason": {"internal-test": 1},
    "bands": {"exposed": 3, "fits": 4, "excluded": 1, "over_capacity_failed": 1, "over_context": 1},
    "verdict": "consistent_with_normal_usage",
    "flagged_accounts": [],
    "ingest": {"rows_read": 11, "rows_loaded": 10, "duplicates": 1, "quarantined": 0},
    "data_owners": {"accounts": 2, "requests": 2, "policy": "pool-walkback"},
}


def fixture_engine(classification: bool = True, owners: bool = True, sql: str = "") -> DuckDBEngine:
    """An in-memory case database with the report fixture tables (then `sql` run on it)."""
    engine = DuckDBEngine()
    engine.con.execute((FIXTURE / "tables.sql").read_text()).fetchall()
    if classification:
        engine.con.execute((FIXTURE / "classification.sql").read_text()).fetchall()
    if not owners:
        engine.con.execute("DROP TABLE data_owners").fetchall()
    if sql:
        engine.con.execute(sql).fetchall()
    return engine


def render_fixture(
    out: Path,
    summary: dict[str, Any] | None = None,
    max_marks: int = figures.MAX_MARKS,
    **tables: Any,
) -> list[Path]:
    """Render the fixture case's report into `out` (counts per bin above `max_marks`)."""
    with fixture_engine(**tables) as engine:
        case = load_case(FIXTURE / "incident.toml")
        return render_report(engine, case, summary or SUMMARY, out, max_marks=max_marks)


# every request leaves the window: no request, no exposure, a profile of zeros
NO_REQUESTS = "DELETE FROM bands; UPDATE classification_profile SET exposed = 0, baseline = 0;"

# 45 more affected accounts (acct-m01..acct-m45), one exposed response each: acct-mNN at
# 2026-08-27 NN:00 UTC with 600 + 5*NN prompt tokens (605..825: over the capacity of 600,
# within the context window of 1000). With r01-r03: 48 exposed responses, 47 accounts.
MANY_ACCOUNTS = """
INSERT INTO bands
SELECT 'm' || lpad(i::VARCHAR, 2, '0'),
       TIMESTAMPTZ '2026-08-27 00:00:00+00' + INTERVAL (i) HOUR,
       TIMESTAMPTZ '2026-08-27 00:00:20+00' + INTERVAL (i) HOUR,
       'acct-m' || lpad(i::VARCHAR, 2, '0'), '@cf/test/long-model', 600 + 5 * i, 10, 200,
       'p1', 'd1', 600, 'exposed', NULL
FROM range(1, 46) AS r(i);
"""


def chart_specs(html: str) -> dict[str, Any]:
    """The Vega-Lite specs the page draws, by chart element id."""
    found = re.search(r"var specs = (\{.*?\});\n", html, re.S)
    assert found is not None
    specs: dict[str, Any] = json.loads(found.group(1))
    return specs


def rows_with(spec: dict[str, Any], *fields: str) -> list[dict[str, Any]]:
    """The rows of the one dataset of `spec` whose rows have all of `fields`."""
    sets = [rows for rows in spec["datasets"].values() if rows and set(fields) <= set(rows[0])]
    assert len(sets) == 1, [list(rows[0]) for rows in spec["datasets"].values() if rows]
    return sets[0]


def counts_shown(spec: dict[str, Any]) -> list[str]:
    """The counts a chart's titles and labels show in parentheses, e.g. "(1,234)"."""
    drawn = {k: v for k, v in spec.items() if k != "datasets"}
    return re.findall(r"\((\d[\d,]*)\)", json.dumps(drawn))


def without_notes(html: str) -> str:
    """The page's visible text without the notes under the charts (they say how a chart is
    drawn, which is what differs between a per-row and a binned rendering)."""
    return text_of(re.sub(r'<p class="note">.*?</p>', " ", html, flags=re.S))


def text_of(html: str) -> str:
    """The page's visible text (tags and scripts removed, whitespace collapsed)."""
    html = re.sub(r"<script.*?</script>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_render_report_writes_html_png_and_svg(tmp_path: Path) -> None:
    paths = render_fixture(tmp_path)
    assert [p.name for p in paths] == ["report.html", "timeline.png", "timeline.svg"]
    assert all(p.parent == tmp_path for p in paths)


def test_report_leads_with_exposure_count_and_affected_accounts(tmp_path: Path) -> None:
    html = (render_fixture(tmp_path)[0]).read_text()
    assert '<div class="n" id="exposure-count">3</div>' in html
    assert '<div class="n" id="affected-accounts">2</div>' in html
    assert html.index("exposure-count") < html.index('id="timeline"')


def test_report_has_every_section(tmp_path: Path) -> None:
    html = (render_fixture(tmp_path)[0]).read_text()
    ids = re.findall(r'<section id="([^"]+)"', html)
    assert ids == [
        "headline",
        "evidence",
        "timeline",
        "coverage",
        "prompt-size",
        "bands",
        "blast-radius",
        "classification",
        "exclusions",
        "data-owners",
        "engine-evidence",
        "inputs",
    ]
    for chart in ("chart-timeline", "chart-size", "chart-daily", "chart-hourly"):
        assert f'id="{chart}"' in html


def test_report_shows_band_counts_and_total(tmp_path: Path) -> None:
    text = text_of(render_fixture(tmp_path)[0].read_text())
    assert "exposed exposed (over capacity, answered) 3" in text
    assert "fits fits the pool 4" in text
    assert "in the window 10" in text


def test_report_shows_the_blast_radius_of_every_model_and_the_other_models_line(
    tmp_path: Path,
) -> None:
    """The summary's blast radius of the fixture's model m (case) and x (not): x has 1 of its
    4 requests over its pool, 1 unknown: 3 of 4 known, 75 %. The fixture store holds no
    `blast_radius` table: the per-node rows are not available."""
    radius = [
        {"model": "m", "requests": 10, "over_capacity": 4, "excluded": 1, "unknown_capacity": 0}
        | {"first_over": "2026-08-27T01:00:00Z", "last_over": "2026-08-27T05:00:00Z"}
        | {"in_window": 4, "outside_window": 0},
        {"model": "x", "requests": 4, "over_capacity": 1, "excluded": 0, "unknown_capacity": 1}
        | {"first_over": "2026-08-28T00:00:00Z", "last_over": "2026-08-28T00:00:00Z"}
        | {"in_window": 1, "outside_window": 0},
    ]
    summary = SUMMARY | {"models": ["m"], "blast_radius": radius}
    html = render_fixture(tmp_path, summary)[0].read_text()
    section = re.search(r'<section id="blast-radius">.*?</section>', html, re.S).group(0)  # type: ignore[union-attr]
    text = text_of(section)
    line = (
        "other models: 1 request above their pool (x 1); capacity known for 75% of their requests"
    )
    assert line in text
    assert "m yes 10 4 1 0 2026-08-27T01:00:00Z 2026-08-27T05:00:00Z 4 0" in text
    assert "x no 4 1 0 1 2026-08-28T00:00:00Z 2026-08-28T00:00:00Z 1 0" in text
    assert "Per prefill node (blast_radius.csv) not available" in text


def test_a_summary_without_a_blast_radius_says_it_is_not_available(tmp_path: Path) -> None:
    text = text_of(render_fixture(tmp_path)[0].read_text())
    assert "Blast radius not available (summary.json from an older analysis" in text


def test_report_shows_events_in_utc(tmp_path: Path) -> None:
    text = text_of(render_fixture(tmp_path)[0].read_text())
    # 2026-08-29T06:25:00-04:00 in the case file
    assert "2026-08-29T10:25:00Z Status page: incident began" in text


def test_report_shows_exclusions_by_reason_and_account(tmp_path: Path) -> None:
    text = text_of(render_fixture(tmp_path)[0].read_text())
    assert "internal-test 1" in text
    # reason, account, excluded requests, requests in window (r06 excluded, r09 fits)
    assert "internal-test acct-qa 1 2" in text


def test_report_shows_data_owner_accounts(tmp_path: Path) -> None:
    text = text_of(render_fixture(tmp_path)[0].read_text())
    assert "2 accounts, 2 requests at risk, behind 2 exposed responses" in text
    assert "acct-c 1 2 2026-08-27T02:00:20Z 2026-08-27T02:00:20Z" in text
    assert "acct-a 1 1 2026-08-27T15:30:20Z 2026-08-27T15:30:20Z" in text


def test_report_shows_classification_tests_with_statistic_and_p_value(tmp_path: Path) -> None:
    text = text_of(render_fixture(tmp_path)[0].read_text())
    assert "consistent with normal usage" in text
    assert "test statistic p value detail" in text
    assert "hour_of_day 3.5 0.62 chi-square homogeneity over 24 hours" in text


def test_report_lists_flagged_accounts_first_with_their_reasons(tmp_path: Path) -> None:
    summary = {**SUMMARY, "verdict": "anomalous", "flagged_accounts": ["acct-b"]}
    text = text_of(render_fixture(tmp_path, summary)[0].read_text())
    assert "Usage classification verdict: anomalous · flagged accounts: acct-b" in text
    # flagged first; JSON reasons shown as a list, none as a dash
    assert "acct-b 1 0 0.5 0.004 0.008 yes account_volume; burst 2 0 1 0" in text
    assert "acct-a 2 1 1.5 0.5 1 no — 2 0 1 0" in text
    assert text.index("acct-b 1 0 0.5") < text.index("acct-a 2 1 1.5")


def test_report_shows_inputs_with_sha256_and_counts(tmp_path: Path) -> None:
    text = text_of(render_fixture(tmp_path)[0].read_text())
    sha = "5f0c6e1d2b7a4c3e9f8d1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d"
    assert f"gateway.jsonl {sha} 2,345 11 10 1 0 jsonl" in text
    assert "Rows read 11 = loaded 10 + duplicates 1 + quarantined 0" in text


def test_report_shows_inputs_as_the_summary_states_them(tmp_path: Path) -> None:
    sha = "ab" * 32
    row = {
        "path": "logs/gateway.jsonl.gz",
        "sha256": sha,
        "bytes": 900,
        "rows_read": 7,
        "rows_loaded": 5,
        "duplicates": 1,
        "quarantined": 1,
        "format": "jsonl",
        "note": None,
    }
    text = text_of(render_fixture(tmp_path, {**SUMMARY, "inputs": [row]})[0].read_text())
    # case-relative path from summary.json, columns in the inputs table's order
    assert f"logs/gateway.jsonl.gz {sha} 900 7 5 1 1 jsonl —" in text
    assert "gateway.jsonl 5f0c6e1d" not in text


def test_missing_classification_and_owner_tables_show_not_available(tmp_path: Path) -> None:
    html = render_fixture(tmp_path, classification=False, owners=False)[0].read_text()
    text = text_of(html)
    assert "Chart not available: usage classification profile not available." in text
    assert 'id="chart-daily"' not in html
    assert text.count("not available") >= 4


def test_engine_evidence_is_shown_when_the_summary_has_it(tmp_path: Path) -> None:
    summary = {
        **SUMMARY,
        "engine_signature": 4,
        "engine_confirmed": 3,
        "engine_reconciliation": {
            "matched": {"count": 3},
            "gateway_only": {"count": 0, "reasons": {}},
            "engine_only": {
                "count": 1,
                "reasons": {
                    "excluded account (internal-test)": {
                        "count": 1,
                        "request_ids": ["r-1"],
                        "bootstrap_rooms": ["7"],
                    }
                },
            },
        },
        "engine_capacity": [
            {
                "role": "prefill",
                "node": "p-1",
                "tokens": 681280,
                "reject_from": 681274,
                "context_len": 1048576,
                "start": "2026-08-27T00:00:00Z",
                "end": None,
            }
        ],
        "engine_refused": 2,
    }
    text = text_of(render_fixture(tmp_path, summary)[0].read_text())
    assert "same bootstrap_room): 3 of 3; the signature shows in 4 requests" in text
    assert "matched exposed and engine-confirmed 3" in text
    assert "gateway-only — 0" in text
    assert "engine-only excluded account (internal-test) 1" in text
    assert "prefill p-1 681,280 681,274 1,048,576 2026-08-27T00:00:00Z —" in text
    assert "refused without a KV transfer (the prefill retired them at intake" in text


def test_report_makes_no_network_fetches(tmp_path: Path) -> None:
    html = render_fixture(tmp_path)[0].read_text()
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I)
    assert not re.search(r"""fetch\(\s*["'`]https?://""", html)
    assert not re.search(r"""url\(\s*["']?https?://""", html)
    assert not re.search(r"<link[^>]+stylesheet", html)
    assert "vegaEmbed" in html


def test_report_never_contains_prompt_text(tmp_path: Path) -> None:
    html = render_fixture(tmp_path)[0].read_text()
    assert "prompt_text" not in html
    assert "request_id" not in text_of(html)


def test_two_renders_are_byte_identical(tmp_path: Path) -> None:
    first = render_fixture(tmp_path / "a")
    second = render_fixture(tmp_path / "b")
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_timeline_png_and_svg_are_non_trivial(tmp_path: Path) -> None:
    _, png, svg = render_fixture(tmp_path)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 20_000
    text = svg.read_text()
    assert text.startswith("<svg")
    assert "Status page: incident began" in text
    assert "Exposed responses (3)" in text


def test_report_has_a_table_of_contents_of_its_sections(tmp_path: Path) -> None:
    html = render_fixture(tmp_path)[0].read_text()
    nav = re.search(r'<nav class="contents".*?</nav>', html, re.S)
    assert nav is not None
    links = re.findall(r'<a href="#([^"]+)">([^<]+)</a>', nav.group(0))
    # every section with a heading, in page order (the headline section has none)
    assert links == [
        ("evidence", "Evidence and uncertainty"),
        ("timeline", "Incident timeline"),
        ("coverage", "Coverage of the window"),
        ("prompt-size", "Prompt size against capacity"),
        ("bands", "Requests by band"),
        ("blast-radius", "Blast radius: every model of the logs"),
        ("classification", "Usage classification: was it exploited?"),
        ("exclusions", "Exclusions"),
        ("data-owners", "Data owners"),
        ("engine-evidence", "Engine evidence"),
        ("inputs", "Inputs"),
    ]
    assert html.index("<nav") < html.index('<section id="headline">')


def test_report_footer_names_the_tool_and_duckdb_versions(tmp_path: Path) -> None:
    html = render_fixture(tmp_path)[0].read_text()
    footer = text_of(re.search(r"<footer>.*?</footer>", html, re.S).group(0))  # type: ignore[union-attr]
    assert footer.startswith(
        f" Generated by kv-forensics {forensics.__version__} with DuckDB {duckdb.__version__} "
    )


ACCOUNT_VOLUME = {
    "adjusted_p": 0.008,
    "detail": "1 exposed of 1 long-context requests; 0.5 expected at the overall exposed "
    "share 0.5 (one-sided Fisher exact)",
    "p_value": 0.004,
    "statistic": 1.0,
    "test": "account_volume",
}
FLAGGED_B = {**SUMMARY, "verdict": "anomalous", "flagged_accounts": ["acct-b"]}


def flagged_section(html: str) -> str:
    """The visible text of the classification's "Flagged accounts" part."""
    text = text_of(html)
    return text[text.index("Flagged accounts") : text.index("Tests (statistic")]


def test_flagged_accounts_reasons_read_as_sentences_from_the_summary(tmp_path: Path) -> None:
    summary = {
        **FLAGGED_B,
        "classification": {"accounts": {"acct-b": {"reasons": [ACCOUNT_VOLUME]}}},
    }
    section = flagged_section(render_fixture(tmp_path, summary)[0].read_text())
    assert section == (
        "Flagged accounts acct-b more exposed responses than its own long-context volume "
        "predicts: 1 exposed of 1 long-context requests; 0.5 expected at the overall exposed "
        "share 0.5 (one-sided Fisher exact); p = 0.004; adjusted p = 0.008 "
        "(test account_volume) "
    )


def test_flagged_accounts_reasons_read_as_sentences_from_the_table(tmp_path: Path) -> None:
    reasons = json.dumps([ACCOUNT_VOLUME], sort_keys=True)
    sql = f"UPDATE classification_accounts SET reasons = '{reasons}' WHERE account_id = 'acct-b'"
    html = render_fixture(tmp_path, FLAGGED_B, sql=sql)[0].read_text()
    assert "(one-sided Fisher exact); p = 0.004; adjusted p = 0.008" in flagged_section(html)
    assert '{"' not in flagged_section(html)
    # the evidence table names the test behind the flag, not its JSON
    assert "acct-b 1 0 0.5 0.004 0.008 yes account_volume 2 0 1 0" in text_of(html)


# --- at scale: counts per bin above the mark threshold -----------------------------------


def test_above_the_threshold_the_timeline_counts_responses_per_account_and_hour(
    tmp_path: Path,
) -> None:
    # r11: acct-a's second exposed response in the hour of r01 (4 responses, 3 hours)
    sql = """INSERT INTO bands VALUES ('r11', '2026-08-27T03:30:00Z', '2026-08-27T03:30:20Z',
        'acct-a', '@cf/test/long-model', 750, 10, 200, 'p1', 'd1', 600, 'exposed', NULL)"""
    html = render_fixture(tmp_path, max_marks=3, sql=sql)[0].read_text()
    cells = rows_with(chart_specs(html)["chart-timeline"], "account_id", "responses")
    assert cells == [
        {
            "start": "2026-08-27T03:00:00Z",
            "end": "2026-08-27T04:00:00Z",
            "account_id": "acct-a",
            "responses": 2,  # r01 (700 tokens) and r11 (750)
            "smallest": 700,
            "largest": 750,
        },
        {
            "start": "2026-08-27T15:00:00Z",
            "end": "2026-08-27T16:00:00Z",
            "account_id": "acct-a",
            "responses": 1,  # r02
            "smallest": 800,
            "largest": 800,
        },
        {
            "start": "2026-08-28T09:00:00Z",
            "end": "2026-08-28T10:00:00Z",
            "account_id": "acct-b",
            "responses": 1,  # r03
            "smallest": 900,
            "largest": 900,
        },
    ]


def test_with_more_hourly_cells_than_marks_the_timeline_counts_per_day(tmp_path: Path) -> None:
    html = render_fixture(tmp_path, max_marks=2)[0].read_text()
    cells = rows_with(chart_specs(html)["chart-timeline"], "account_id", "responses")
    # 3 responses in 3 hours (over 2 marks): r01, r02 on Aug 27, r03 on Aug 28
    assert [(c["start"], c["end"], c["account_id"], c["responses"]) for c in cells] == [
        ("2026-08-27T00:00:00Z", "2026-08-28T00:00:00Z", "acct-a", 2),
        ("2026-08-28T00:00:00Z", "2026-08-29T00:00:00Z", "acct-b", 1),
    ]


def test_with_more_accounts_than_lanes_the_timeline_counts_per_prompt_band(
    tmp_path: Path,
) -> None:
    html = render_fixture(tmp_path, max_marks=47, sql=MANY_ACCOUNTS)[0].read_text()
    cells = rows_with(chart_specs(html)["chart-timeline"], "prompt_from", "responses")
    # prompts 605..900 in about 40 bands: 10-token bands; 48 responses in 48 hourly cells
    # (over 47 marks) are counted per day. Aug 27, 700-709: r01 (700), m20 (700), m21 (705).
    assert sum(c["responses"] for c in cells) == 48
    assert {
        "start": "2026-08-27T00:00:00Z",
        "end": "2026-08-28T00:00:00Z",
        "prompt_from": 700,
        "prompt_to": 710,
        "prompts": "700–709",
        "responses": 3,
    } in cells
    assert "no exposed" not in html


def test_above_the_threshold_the_size_chart_counts_requests_per_band_and_cell(
    tmp_path: Path,
) -> None:
    html = render_fixture(tmp_path, max_marks=7)[0].read_text()
    cells = rows_with(chart_specs(html)["chart-size"], "band", "requests")
    # 8 requests shown (over 7 marks), prompts 300..1500 in 40 bands of 30: 50-token bands;
    # 8 hourly cells (over 7) counted per day, the last day ending with the window at 12:00
    assert sorted(
        (c["band"], c["start"], c["end"], c["prompt_from"], c["requests"]) for c in cells
    ) == [
        ("excluded", "2026-08-28T00:00:00Z", "2026-08-29T00:00:00Z", 750, 1),
        ("exposed", "2026-08-27T00:00:00Z", "2026-08-28T00:00:00Z", 700, 1),
        ("exposed", "2026-08-27T00:00:00Z", "2026-08-28T00:00:00Z", 800, 1),
        ("exposed", "2026-08-28T00:00:00Z", "2026-08-29T00:00:00Z", 900, 1),
        ("fits", "2026-08-27T00:00:00Z", "2026-08-28T00:00:00Z", 300, 1),
        ("fits", "2026-08-29T00:00:00Z", "2026-08-29T12:00:00Z", 1500, 1),
        ("over_capacity_failed", "2026-08-28T00:00:00Z", "2026-08-29T00:00:00Z", 650, 1),
        ("over_context", "2026-08-28T00:00:00Z", "2026-08-29T00:00:00Z", 1200, 1),
    ]
    assert "8 requests, too many to draw one dot each" in text_of(html)


@pytest.mark.parametrize("sql", ["", MANY_ACCOUNTS], ids=["account-lanes", "prompt-bands"])
def test_binned_charts_show_the_same_figures_and_counts_as_one_mark_per_row(
    tmp_path: Path, sql: str
) -> None:
    one_each = render_fixture(tmp_path / "rows", sql=sql)[0].read_text()
    binned = render_fixture(tmp_path / "binned", sql=sql, max_marks=1)[0].read_text()
    # every figure and table of the page is the same; only the charts' notes differ
    assert without_notes(binned) == without_notes(one_each)
    rows, bins = chart_specs(one_each), chart_specs(binned)
    for chart in ("chart-timeline", "chart-size"):  # the counts in titles and labels
        assert counts_shown(bins[chart]) == counts_shown(rows[chart])
    ticks = rows_with(rows["chart-timeline"], "ts", "account_id", "prompt_tokens")
    cells = rows_with(bins["chart-timeline"], "start", "end", "responses")
    if "account_id" in cells[0]:  # as many responses per account
        counted: Counter[Any] = Counter()
        for c in cells:
            counted[c["account_id"]] += c["responses"]
        assert counted == Counter(t["account_id"] for t in ticks)
    else:  # as many responses per prompt band
        step = cells[0]["prompt_to"] - cells[0]["prompt_from"]
        counted = Counter()
        for c in cells:
            counted[c["prompt_from"]] += c["responses"]
        assert counted == Counter(t["prompt_tokens"] // step * step for t in ticks)
    dots = rows_with(rows["chart-size"], "ts", "prompt_tokens", "band")
    cells = rows_with(bins["chart-size"], "start", "band", "requests")
    counted = Counter()
    for c in cells:
        counted[c["band"]] += c["requests"]
    assert counted == Counter(d["band"] for d in dots)  # as many requests per band


def test_each_exposed_response_is_embedded_once(tmp_path: Path) -> None:
    html = render_fixture(tmp_path)[0].read_text()
    timeline = json.dumps(chart_specs(html)["chart-timeline"])
    # the overview's ticks and the lanes draw r01, r02, r03 from one dataset
    for at in ("2026-08-27T03:00:00Z", "2026-08-27T15:30:00Z", "2026-08-28T09:10:00Z"):
        assert timeline.count(f'"{at}"') == 1


@pytest.mark.parametrize("max_marks", [figures.MAX_MARKS, 1], ids=["one-each", "binned"])
def test_chart_specs_with_their_data_are_valid_vega_lite(tmp_path: Path, max_marks: int) -> None:
    html = render_fixture(tmp_path, max_marks=max_marks, sql=MANY_ACCOUNTS)[0].read_text()
    for spec in chart_specs(html).values():
        alt.Chart.from_dict(spec, validate=True)  # the rows too: the report skips them


def test_empty_charts_say_no_data_and_why(tmp_path: Path) -> None:
    html = render_fixture(tmp_path, sql=NO_REQUESTS)[0].read_text()
    text = text_of(html)
    assert (
        "No data: no request in the window over the capacity, over the context window or of "
        "200 prompt tokens or more."
    ) in text
    profile = "No data: no exposed response and no baseline long-context request in the window."
    assert text.count(profile) == 2  # daily and hourly
    specs = chart_specs(html)
    assert sorted(specs) == ["chart-timeline"]  # the events are still drawn
    assert "No data: no exposed response in the window." in json.dumps(specs["chart-timeline"])


def test_the_vega_bundle_is_built_once_per_process(tmp_path: Path) -> None:
    render_fixture(tmp_path / "a")
    render_fixture(tmp_path / "b")
    assert figures.bundle() is figures.bundle()
    assert figures.bundle.cache_info().misses == 1


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """report.html of the bundled GLM-5.3 case, run end to end once for this module."""
    out = tmp_path_factory.mktemp("demo")
    pipeline.demo(out)
    return out / "report.html"


def test_demo_report_shows_the_bundled_case_figures(demo_report: Path) -> None:
    html = demo_report.read_text()
    text = text_of(html)
    # the bundled case is built to reproduce the reference incident: 155 exposed responses
    assert '<div class="n" id="exposure-count">155</div>' in html
    assert '<div class="n" id="affected-accounts">11</div>' in html
    assert "internal-test 60" in text
    assert "security-researcher 50" in text
    assert "2026-09-09T13:22:00Z Security incident declared" in text
    assert (
        "other models: 0 requests above their pool; capacity known for 97% of their requests"
    ) in text


def test_what_happened_follows_the_evidence_of_the_case() -> None:
    """A prefill [[capacity]] entry (600) below the context window (1,000), or a pre-flight
    finding, is the small-pool story; a decode pool below it is not; KV transfer faults in the
    engine logs are counted."""
    small = {"context_window": 1000, "capacity": [{"role": "prefill", "tokens": 600}]}
    large = {"context_window": 1000, "capacity": [{"role": "prefill", "tokens": 4000}]}
    decode = {"context_window": 1000, "capacity": [{"role": "decode", "tokens": 600}]}
    assert happened_view(small) == {"pool": True, "kv_faults": 0}
    assert happened_view(large) == {"pool": False, "kv_faults": 0}
    assert happened_view(decode) == {"pool": False, "kv_faults": 0}
    assert happened_view({**large, "preflight": [{"node": "p"}]})["pool"] is True
    assert happened_view({**large, "engine_kv_faults": 5}) == {"pool": False, "kv_faults": 5}
