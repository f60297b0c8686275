"""The exposure range: each category of uncertainty on the fixture case tests/fixtures/evidence,
every expected value derived by hand in its README.md ("Exposure range")."""

from __future__ import annotations

import dataclasses
from datetime import datetime

import pytest
from case_small_db import case_small, engine_with_requests
from evidence_case import analyzed, case_copy, range_rows
from partial_case import partial_analyzed, partial_case, partial_copy

from forensics import pipeline
from forensics.case import Capacity
from forensics.render import headline
from forensics.render import report as report_page

SKEW = '\n[uncertainty]\nclock_skew = "2m"\n'
TOLERANCE = "\n[uncertainty]\nprompt_tokens_tolerance = 50\n"
BOTH = '\n[uncertainty]\nclock_skew = "2m"\nprompt_tokens_tolerance = 50\n'


@pytest.fixture(scope="module")
def base():
    engine, summary = analyzed()
    yield engine, summary
    engine.close()


def _analyzed(tmp_path, extra: str, engine_rows: bool = False):
    return analyzed(case_copy(tmp_path, extra), engine_rows=engine_rows)


# --- quarantined --------------------------------------------------------------------------


def test_quarantined_records_that_nothing_rules_out_count_toward_the_maximum(base):
    engine, _ = base
    # a.jsonl rows 25 (q1, invalid JSON), 29 (q5, status unreadable), 33 (q9, no account)
    assert range_rows(engine, "quarantined") == {"max": [25, 29, 33]}


@pytest.mark.parametrize(
    ("row", "why"),
    [
        (26, "q2: model other"),
        (27, "q3: prompt 100 not above the smallest pool 500"),
        (28, "q4: status 500"),
        (30, "q6: account acct-qa excluded"),
        (31, "q7: ts 07:00 after the window"),
        (32, "q8: prompt 1200 above the context window"),
    ],
)
def test_a_readable_value_rules_a_quarantined_record_out(base, row, why):
    engine, _ = base
    assert row not in range_rows(engine, "quarantined")["max"], why


def test_conflicting_duplicates_are_not_counted_as_quarantined(base):
    engine, _ = base  # rows 22-24: c1, c2, c3's second records
    assert not {22, 23, 24} & set(range_rows(engine, "quarantined")["max"])


# --- unknown_capacity, status_unknown, conflicting -----------------------------------------


def test_unknown_capacity_counts_answered_prompts_above_the_smallest_pool(base):
    engine, _ = base
    # a06 900 counts; a07 300 <= 500, a08 excluded, a09 status 500 do not
    assert range_rows(engine, "unknown_capacity") == {"max": ["a06"]}


def test_exposed_responses_of_a_source_without_status_are_the_lower_bound(base):
    engine, _ = base  # b.jsonl maps no status: its exposed b01, b02, b04
    assert range_rows(engine, "status_unknown") == {"min": ["b01", "b02", "b04"]}


def test_a_conflicting_duplicate_counts_when_it_flips_the_outcome(base):
    engine, _ = base
    # c1 exposed (600) but its duplicate 450 fits; c2 fits (450), its duplicate 650 exposed;
    # c3 600 and 700 both exposed: no contribution
    assert range_rows(engine, "conflicting") == {"min": ["c1"], "max": ["c2"]}


def test_conflicting_rows_name_the_loaded_request_and_the_duplicates_source_row(base):
    engine, _ = base
    rows = engine.rows(
        "SELECT request_id, row FROM exposure_range_requests WHERE category = 'conflicting' "
        "ORDER BY row"
    )
    assert rows == [("c1", 22), ("c2", 23)]


def test_base_range_is_likely_less_the_min_side_plus_the_max_side(base):
    _, summary = base
    assert summary["exposure_range"] == {
        "min": 6,
        "likely": 10,
        "max": 15,
        "contributions": [
            {"category": "quarantined", "direction": "max", "requests": 3},
            {"category": "unknown_capacity", "direction": "max", "requests": 1},
            {"category": "status_unknown", "direction": "min", "requests": 3},
            {"category": "conflicting", "direction": "min", "requests": 1},
            {"category": "conflicting", "direction": "max", "requests": 1},
        ],
    }


# --- clock_skew and token_count -------------------------------------------------------------


def test_no_declared_skew_or_tolerance_adds_no_clock_or_token_contribution(base):
    engine, _ = base
    assert range_rows(engine, "clock_skew") == {}
    assert range_rows(engine, "token_count") == {}


def test_clock_skew_finds_requests_near_a_capacity_change_or_a_window_edge(tmp_path):
    engine, _ = _analyzed(tmp_path, SKEW)
    with engine:
        # a03 02:59 and b04 00:01 exposed: not at 03:00 (pool 800) or 23:59 (before the
        # window); a04 03:01 fits: exposed at 02:59 (pool 500); a13 06:01 just after the
        # window: exposed at 05:59 (900 > 800)
        assert range_rows(engine, "clock_skew") == {"min": ["a03", "b04"], "max": ["a04", "a13"]}


def test_token_tolerance_finds_requests_near_the_pool_or_the_context_window(tmp_path):
    engine, _ = _analyzed(tmp_path, TOLERANCE)
    with engine:
        # a16 520 - 50 <= 500; a18 980 + 50 > 1000; a17 480 + 50 > 500; a19 1030 - 50 <= 1000
        # (c2 450 + 50 = 500 is not above the pool 500)
        assert range_rows(engine, "token_count") == {"min": ["a16", "a18"], "max": ["a17", "a19"]}


def test_an_engine_input_length_decides_and_the_request_is_not_uncertain(tmp_path):
    engine, _ = _analyzed(tmp_path, TOLERANCE, engine_rows=True)
    with engine:
        # the engine logs give a16 (room 7107) and a17 (room 7101) their input length
        assert range_rows(engine, "token_count") == {"min": ["a18"], "max": ["a19"]}


# --- engine_only and the union --------------------------------------------------------------


def test_engine_only_signatures_not_explained_count_toward_the_maximum(tmp_path):
    engine, _ = _analyzed(tmp_path, "", engine_rows=True)
    with engine:
        # 7101 a17 (fits), 7102 no gateway record, 7106 a06 (unknown_capacity); 7103 excluded
        # and 7104 status 503 are explained, 7105 (a01) is matched
        rows = engine.rows(
            "SELECT request_id, bootstrap_room FROM exposure_range_requests "
            "WHERE category = 'engine_only' ORDER BY bootstrap_room"
        )
        assert rows == [("a17", 7101), (None, 7102), ("a06", 7106)]


def test_a_request_in_several_categories_counts_once_per_direction(tmp_path):
    engine, summary = _analyzed(tmp_path, BOTH, engine_rows=True)
    with engine:
        # max: q1 q5 q9, a06 (unknown_capacity and engine_only), a04 a13, a19, c2, a17 and
        # 7102 (engine_only) = 10; min: b01 b02 b04 (b04 also clock_skew), a03, a18, c1 = 6
        assert summary["exposure_range"] == {
            "min": 4,
            "likely": 10,
            "max": 20,
            "contributions": [
                {"category": "quarantined", "direction": "max", "requests": 3},
                {"category": "unknown_capacity", "direction": "max", "requests": 1},
                {"category": "status_unknown", "direction": "min", "requests": 3},
                {"category": "clock_skew", "direction": "min", "requests": 2},
                {"category": "clock_skew", "direction": "max", "requests": 2},
                {"category": "token_count", "direction": "min", "requests": 1},
                {"category": "token_count", "direction": "max", "requests": 1},
                {"category": "conflicting", "direction": "min", "requests": 1},
                {"category": "conflicting", "direction": "max", "requests": 1},
                {"category": "engine_only", "direction": "max", "requests": 3},
            ],
        }


# --- an exact count -------------------------------------------------------------------------


@pytest.fixture
def exact_summary():
    """case_small with a `*` prefill entry of 1000 tokens last: r10 (pf-x1, 900) and r11 (no
    node, 100) fit it, so nothing is uncertain (no quarantine table, no engine logs)."""
    case = case_small()
    catch_all = Capacity(
        "prefill", "*", 1000, datetime(2026, 9, 1, tzinfo=case.window_start.tzinfo)
    )
    case = dataclasses.replace(case, capacity=(*case.capacity, catch_all))
    engine = engine_with_requests()
    summary, _ = pipeline.analyze_case(engine, case)
    yield summary
    engine.close()


def test_no_contribution_means_min_equals_likely_equals_max(exact_summary):
    assert exact_summary["exposure_range"] == {
        "min": 8,
        "likely": 8,
        "max": 8,
        "contributions": [],
    }


def test_the_report_says_an_exact_count_is_exact_on_the_evidence_given(exact_summary):
    view = report_page.evidence_view(exact_summary)
    assert view["exact"] is True
    assert view["exact_text"].startswith("The count is exact on the evidence given")


def test_the_report_gives_one_sentence_per_contribution(tmp_path):
    engine, summary = _analyzed(tmp_path, BOTH)
    with engine:
        sentences = report_page.evidence_view(summary)["sentences"]
    # and one more: b.jsonl's 2 hours without records (coverage gaps) leave the maximum open
    assert len(sentences) == len(summary["exposure_range"]["contributions"]) + 1 == 10
    assert sentences[-1][1].startswith("2 hours of the window have no or few records from b.jsonl")
    assert (
        "min",
        "2 exposed response(s) would not be exposed if the gateway clock were off "
        "by up to 2m (a capacity change or an edge of the window lies that close).",
    ) in sentences
    assert any("off by up to 50 tokens" in s for _, s in sentences)


def test_clock_skew_window_widens_the_quarantine_time_test_only_by_the_skew(tmp_path):
    # q7 at 07:00 stays outside 06:00 + 2m: still ruled out
    engine, _ = _analyzed(tmp_path, SKEW)
    with engine:
        assert range_rows(engine, "quarantined") == {"max": [25, 29, 33]}


def test_a_database_without_quarantined_values_counts_every_quarantined_record(tmp_path):
    from forensics.case import load_case
    from forensics.engines import DuckDBEngine

    case = load_case(case_copy(tmp_path))
    with DuckDBEngine() as engine:
        pipeline.ingest_sources(engine, case)
        engine.execute("DROP TABLE quarantine_values")  # as ingested by an older version
        _, warnings = pipeline.analyze_case(engine, case)
        # rows 25-33 (q1-q9) all count; the conflicting duplicates (22-24) are not judged
        assert range_rows(engine, "quarantined") == {"max": list(range(25, 34))}
        assert range_rows(engine, "conflicting") == {}
    assert any("keeps no readable values of quarantined records" in w for w in warnings)


def test_an_admission_limit_below_the_pool_moves_the_smallest_prompt_over_it(tmp_path):
    # the first prefill entry (tokens 500, 00:00-03:00) refuses from 100 (reject_from): the
    # smallest prompt over a capacity in the window is 100, not 501. q3 (a.jsonl row 27,
    # prompt 100) is then not ruled out; a07 (band unknown_capacity, 300, answered, not
    # excluded) counts beside a06 (900); a08 (excluded) and a09 (status 500) still do not.
    path = case_copy(
        tmp_path,
        replace=("tokens = 500\n", "tokens = 500\nreject_from = 100\n"),
    )
    engine, _ = analyzed(path)
    try:
        assert range_rows(engine, "quarantined") == {"max": [25, 27, 29, 33]}
        assert range_rows(engine, "unknown_capacity") == {"max": ["a06", "a07"]}
    finally:
        engine.close()


# --- partial faults (tests/fixtures/partial, README.md) ------------------------------------


def test_records_without_a_status_in_a_log_that_maps_status_are_on_the_minimum_side():
    # status.toml: s1 gives 200; s2 (no key), s3 (null), s4 ("") give none: stored as NULL,
    # read as 200 (exposed), but only s1's delivery is on record: range 4 - 3 = 1 to 4
    engine, summary, _ = partial_analyzed(partial_case("status"))
    with engine:
        assert engine.rows("SELECT request_id, status FROM requests ORDER BY 1") == [
            ("s1", 200),
            ("s2", None),
            ("s3", None),
            ("s4", None),
        ]
        assert range_rows(engine, "status_unknown") == {"min": ["s2", "s3", "s4"]}
    assert summary["exposure_range"] == {
        "min": 1,
        "likely": 4,
        "max": 4,
        "contributions": [{"category": "status_unknown", "direction": "min", "requests": 3}],
    }


def test_over_capacity_requests_without_a_status_may_have_been_delivered(tmp_path):
    # success_status [201]: s1 (200) and s2-s4 (read as 200) are over_capacity_failed; s2-s4
    # have no status on record, so each may have been delivered: range 0 to 3
    case = partial_copy(tmp_path, "status", ("success_status = [200]", "success_status = [201]"))
    engine, summary, _ = partial_analyzed(case)
    with engine:
        assert range_rows(engine, "status_unknown") == {"max": ["s2", "s3", "s4"]}
    assert (summary["exposure_range"]["min"], summary["exposure_range"]["max"]) == (0, 3)


def test_an_older_database_holding_the_default_status_keeps_those_responses_on_the_minimum():
    # ingested before a missing status stayed NULL, b.jsonl's records (a mapping without
    # status) hold 200: they are still the exposed b01, b02, b04 of README "Exposure range"
    from evidence_case import CASE_FILE

    from forensics.case import load_case
    from forensics.engines import DuckDBEngine

    case = load_case(CASE_FILE)
    with DuckDBEngine() as engine:
        pipeline.ingest_sources(engine, case)
        engine.execute("UPDATE requests SET status = 200 WHERE source LIKE '%b.jsonl'")
        pipeline.analyze_case(engine, case)
        assert range_rows(engine, "status_unknown") == {"min": ["b01", "b02", "b04"]}


def test_a_time_and_a_length_within_the_uncertainty_together_move_a_request_into_the_range():
    # skew.toml (2 s, 10 tokens): k4 1 s before the window with 495 tokens is exposed at the
    # window's start with 505 (max); k5 at 02:59:59 with 805 is not exposed at 03:00 (pool
    # 800) with 795 (min). Neither the skew nor the tolerance alone moves either: 3 to 5
    engine, summary, _ = partial_analyzed(partial_case("skew"))
    with engine:
        assert range_rows(engine, "clock_skew") == {"min": ["k5"], "max": ["k4"]}
        assert range_rows(engine, "token_count") == {}
    assert (summary["exposure_count"], summary["exposure_range"]["min"]) == (4, 3)
    assert summary["exposure_range"]["max"] == 5


def test_the_engine_input_length_decides_the_band():
    # engine.toml (pool 40,000): e1 gateway 45,000 but engine 35,012: fits; e2 gateway 30,000
    # but engine 850,908: exposed, and the bug's signature (room R3) confirms it
    engine, summary, _ = partial_analyzed(partial_case("engine"))
    with engine:
        assert engine.rows("SELECT request_id, band FROM bands ORDER BY 1") == [
            ("e1", "fits"),
            ("e2", "exposed"),
            ("e3", "fits"),
        ]
    assert summary["exposure_count"] == 1
    assert summary["engine_confirmed"] == 1
    assert summary["exposure_range"]["contributions"] == []


def test_a_gateway_and_engine_length_that_disagree_are_listed_and_warned_about():
    engine, summary, warnings = partial_analyzed(partial_case("engine"))
    engine.close()
    assert summary["engine_input_lengths"] == {
        "requests": 3,
        "differ": 2,
        "band_changed": [
            {
                "request_id": "e1",
                "gateway_prompt_tokens": 45000,
                "engine_prompt_tokens": 35012,
                "band": "fits",
                "gateway_band": "exposed",
            },
            {
                "request_id": "e2",
                "gateway_prompt_tokens": 30000,
                "engine_prompt_tokens": 850908,
                "band": "exposed",
                "gateway_band": "fits",
            },
        ],
        "undecided": 0,
        "shared_rooms": [],
    }
    assert (
        "2 request(s) in scope have an engine input length other than the gateway's "
        "prompt_tokens; the engine's decides, and changes the band of 2: e1: gateway 45,000 "
        "(exposed), engine 35,012 (fits); e2: gateway 30,000 (fits), engine 850,908 (exposed)"
    ) in warnings


def test_a_count_with_coverage_gaps_is_never_called_exact(exact_summary):
    """exact_summary (range 8-8, no contribution) with two hours of the window in which
    requests.csv holds no record: requests logged then are in no figure, so neither the
    report nor the headline may present 8 as a bound (one rule: `headline.max_open`)."""
    summary = {
        **exact_summary,
        "coverage": {
            **exact_summary["coverage"],
            "gaps": [
                {"source": "requests.csv", "hour": h, "records": 0, "expected": 3}
                for h in ("2026-09-01T02:00:00Z", "2026-09-01T03:00:00Z")
            ],
        },
    }
    view = report_page.evidence_view(summary)
    assert view["exact"] is False
    assert view["sentences"] == [
        (
            "max",
            "2 hours of the window have no or few records from requests.csv (an outage, whole "
            "or partial: see Coverage): requests logged then are in no figure, so the maximum "
            "may be higher.",
        )
    ]
    assert headline.range_text(summary) == (
        " (range 8-8; the maximum may be higher: 2 hours of the window with no or few records "
        "(requests.csv))"
    )
