"""Coverage, assumptions and the verdict's reason: what the figures rest on, made visible.
Fixture: tests/fixtures/evidence (README.md, "Coverage" and "Assumptions")."""

from __future__ import annotations

import pytest
from evidence_case import analyzed, case_copy
from partial_case import partial_analyzed, partial_case
from test_classify import run

from forensics.render import headline
from forensics.render import report as report_page

HOURS = [f"2026-09-01T0{h}:00:00Z" for h in range(6)]


@pytest.fixture(scope="module")
def summary():
    engine, result = analyzed()
    engine.close()
    return result


def test_coverage_counts_each_sources_records_per_hour_of_the_window(summary):
    cov = summary["coverage"]
    assert cov["hours"] == HOURS
    # a.jsonl loads 21 records (README "Records"); a13 (06:01) is outside the window; the
    # first are a01 and a14 (00:30), the last a13. b.jsonl: b04 00:01 .. b03 03:40
    assert cov["sources"] == [
        {
            "source": "a.jsonl",
            "records": [2, 4, 3, 1, 6, 4],
            "median_per_hour": 3.5,
            "total": 20,
            "loaded": 21,
            "outside_window": 1,
            "first": "2026-09-01T00:30:00Z",
            "last": "2026-09-01T06:01:00Z",
        },
        {
            "source": "b.jsonl",
            "records": [2, 1, 1, 2, 0, 0],
            "median_per_hour": 1,
            "total": 6,
            "loaded": 6,
            "outside_window": 0,
            "first": "2026-09-01T00:01:00Z",
            "last": "2026-09-01T03:40:00Z",
        },
    ]
    assert cov["loaded"] == 27


def test_a_gap_is_an_hour_without_record_of_a_source_whose_median_is_above_zero(summary):
    # b.jsonl's median is 1 (whole hours): 04:00 and 05:00 hold 0 < 5% of 1; a.jsonl's
    # median 3.5 and its fewest records, 1 at 03:00, is not below 0.175
    assert summary["coverage"]["gaps"] == [
        {"source": "b.jsonl", "hour": "2026-09-01T04:00:00Z", "records": 0, "expected": 1},
        {"source": "b.jsonl", "hour": "2026-09-01T05:00:00Z", "records": 0, "expected": 1},
    ]


def test_a_source_with_a_median_of_zero_has_no_gap(tmp_path):
    # window to 13:00: b.jsonl's records fall in 4 of 13 hours, so its median is 0
    case = case_copy(
        tmp_path, replace=('end = "2026-09-01T06:00:00Z"', 'end = "2026-09-01T13:00:00Z"')
    )
    engine, result = analyzed(case)
    engine.close()
    b = next(s for s in result["coverage"]["sources"] if s["source"] == "b.jsonl")
    assert b["median_per_hour"] == 0
    assert [g for g in result["coverage"]["gaps"] if g["source"] == "b.jsonl"] == []


def test_coverage_gives_the_share_of_in_scope_requests_without_each_field(summary):
    cov = summary["coverage"]
    assert cov["in_scope"] == 25
    assert cov["missing"] == {
        "prefill_node": {"requests": 0, "share": 0.0},
        "decode_node": {"requests": 4, "share": 0.16},  # a06-a09
        "status": {"requests": 6, "share": 0.24},  # b.jsonl maps none
        "ts_end": {"requests": 6, "share": 0.24},
        "completion_tokens": {"requests": 6, "share": 0.24},
    }


def test_engine_nodes_show_the_hours_their_log_covers(tmp_path):
    engine, result = analyzed(engine_rows=True)
    engine.close()
    nodes = result["coverage"]["engine_nodes"]
    # 7 decode lines at 02:00:05 on dc-1, 6 prefill aborts at 02:00:00 on pf-1
    assert [(n["node"], n["role"], n["lines"], n["hours_with_lines"]) for n in nodes] == [
        ("dc-1", "decode", [0, 0, 7, 0, 0, 0], 1),
        ("pf-1", "prefill", [0, 0, 6, 0, 0, 0], 1),
    ]
    assert (nodes[0]["first"], nodes[0]["last"]) == ("2026-09-01T02:00:05Z",) * 2


def test_assumptions_list_each_field_a_source_leaves_unmapped(summary):
    assert summary["assumptions"] == [
        {
            "field": "status",
            "default": 200,
            "effect": "no record has a status: each is read as 200, its response counted as "
            "delivered (an exposed one only down to the range's minimum)",
            "sources": ["b.jsonl"],
            "requests": 6,
        },
        {
            "field": "ts_end",
            "default": "ts",
            "effect": "a request's end is taken as its arrival time ts (order of the decode "
            "pool for data owners)",
            "sources": ["b.jsonl"],
            "requests": 6,
        },
        {
            "field": "completion_tokens",
            "default": 0,
            "effect": "completion tokens counted as 0 (tokens a request holds in the decode pool)",
            "sources": ["b.jsonl"],
            "requests": 6,
        },
    ]


def test_the_headline_states_each_assumption_and_the_gaps(summary):
    lines = headline.headline(summary).splitlines()
    assert (
        "assumed: status = 200 for 6 request(s) in scope from b.jsonl (not mapped): no record "
        "has a status: each is read as 200, its response counted as delivered (an exposed one "
        "only down to the range's minimum)"
    ) in lines
    assert (
        "coverage gaps: 2 hour(s) of the window with no record, or fewer than 5% of the "
        "source's median hourly count (b.jsonl 2)"
    ) in lines
    # b.jsonl's 2 hours without records leave the maximum open (the headline says why)
    assert (
        "exposed responses: 10 (range 6-15; the maximum may be higher: 2 hours of the window "
        "with no or few records (b.jsonl))"
    ) in lines


def test_the_report_lists_assumptions_gaps_and_missing_fields(summary):
    view = report_page.evidence_view(summary)
    assert [r[0] for r in view["assumptions"].rows] == ["status", "ts_end", "completion_tokens"]
    assert view["coverage"]["gaps"].rows == [
        ["b.jsonl", "2", "2026-09-01T04:00:00Z – 2026-09-01T05:00:00Z (2 h)"]
    ]
    assert ["status", "6", "24.00 %"] in view["coverage"]["missing"].rows


def test_a_source_mapping_every_field_adds_no_assumption(tmp_path):
    case = case_copy(
        tmp_path, replace=('[[source]]\npath = "b.jsonl"\nmapping = "b.mapping.toml"\n', "")
    )
    engine, result = analyzed(case)
    engine.close()
    assert result["assumptions"] == []
    assert result["coverage"]["missing"]["status"] == {"requests": 0, "share": 0.0}


# --- the verdict's reason -----------------------------------------------------------------


def test_the_verdict_reason_names_untestable_tests_and_never_calls_them_consistent():
    # two accounts, 20 baseline and 3 exposed requests each, all within the first 23 minutes:
    # one hour of day and one day, so neither timing test has two groups to compare
    rows = [
        {
            "account_id": account,
            "t": 60.0 * i,
            "prompt_tokens": 700_000 if i in (2, 9, 16) else 300_000,
            "status": 200,
        }
        for account in ("acct-a", "acct-b")
        for i in range(23)
    ]
    result, _ = run(rows)
    tests = {t["test"]: t for t in result.tests}
    assert tests["hour_of_day"]["p_value"] is None and tests["day"]["p_value"] is None
    assert result.verdict == "consistent_with_normal_usage"
    assert result.reason.startswith("no account flagged and timing not tested at family-wise")
    assert "consistent with the baseline" not in result.reason
    untested = result.reason.split("; not testable on these counts: ")[1].split(", ")
    assert {"hour_of_day", "day"} <= set(untested)


# --- partial faults (tests/fixtures/partial, README.md) ------------------------------------


def test_records_without_a_status_in_a_log_that_maps_status_count_as_missing_status():
    # status.toml: s2, s3, s4 of the 4 in scope give no status
    engine, summary, _ = partial_analyzed(partial_case("status"))
    engine.close()
    assert summary["coverage"]["missing"]["status"] == {"requests": 3, "share": 0.75}


def test_each_source_states_its_loaded_records_outside_the_window_and_warns_past_half():
    # unit.toml: milliseconds read as seconds put 6 of the 8 records months after the window
    engine, summary, warnings = partial_analyzed(partial_case("unit"))
    engine.close()
    source = summary["coverage"]["sources"][0]
    assert {k: source[k] for k in ("source", "total", "loaded", "outside_window")} == {
        "source": "unit.jsonl",
        "total": 2,
        "loaded": 8,
        "outside_window": 6,
    }
    assert (source["first"], source["last"]) == ("2026-09-01T00:16:40Z", "2027-05-02T01:20:00Z")
    assert (
        "[[source]] unit.jsonl: 6 of its 8 loaded record(s) (75.0%) lie outside the window, its "
        "records running from 2026-09-01T00:16:40Z to 2027-05-02T01:20:00Z: check the "
        "mapping's time unit, origin and zone against the case's [window]"
    ) in warnings
    assert "in scope: 2 of 8 loaded requests" in headline.headline(summary).splitlines()


def test_an_hour_below_five_percent_of_the_median_is_a_gap_a_short_last_hour_is_not():
    # outage.toml: hours 00-05 hold 40, 40, 1, 40, 40, 1 (median 40); hour 02 is below 2; the
    # last hour is 3 minutes of the window: 1 is not below 5% of 40 x 3/60
    engine, summary, _ = partial_analyzed(partial_case("outage"))
    engine.close()
    assert summary["coverage"]["gaps"] == [
        {"source": "outage.jsonl", "hour": "2026-09-01T02:00:00Z", "records": 1, "expected": 40}
    ]
