"""The incident report: content, offline-ness, determinism, timeline images.

The fixture case (tests/fixtures/report/) holds 10 requests in the window worked out by hand:
exposed r01, r02 (acct-a) and r03 (acct-b); fits r04, r05, r09, r10; excluded r06 (acct-qa,
internal-test); over_capacity_failed r07; over_context r08. Data owners: acct-c (r04, behind
r01 and r03) and acct-a (r02, behind r03).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from forensics import pipeline
from forensics.case import load_case
from forensics.engines import DuckDBEngine
from forensics.render.report import render_report

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


def fixture_engine(classification: bool = True, owners: bool = True) -> DuckDBEngine:
    """An in-memory case database with the report fixture tables."""
    engine = DuckDBEngine()
    engine.con.execute((FIXTURE / "tables.sql").read_text()).fetchall()
    if classification:
        engine.con.execute((FIXTURE / "classification.sql").read_text()).fetchall()
    if not owners:
        engine.con.execute("DROP TABLE data_owners").fetchall()
    return engine


def render_fixture(out: Path, summary: dict[str, Any] | None = None, **tables: bool) -> list[Path]:
    """Render the fixture case's report into `out`."""
    with fixture_engine(**tables) as engine:
        return render_report(engine, load_case(FIXTURE / "incident.toml"), summary or SUMMARY, out)


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
