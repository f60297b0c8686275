"""Capacity in force, bands, exclusions and the exposure count on the hand-built fixture case.

Every expected value below is derived by hand in tests/fixtures/case_small/README.md.
"""

from __future__ import annotations

import dataclasses

import pytest
from case_small_db import case_small, engine_with_requests

from forensics.analysis import exposure


@pytest.fixture
def engine():
    eng = engine_with_requests()
    yield eng
    eng.close()


def _bands(engine) -> dict[str, tuple[str, int | None, str | None]]:
    rows = engine.rows("SELECT request_id, band, capacity, exclusion_reason FROM bands")
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


def test_every_band_count_matches_the_hand_derivation(engine):
    exposure.compute_bands(engine, case_small())
    assert exposure.band_counts(engine) == {
        "fits": 9,
        "exposed": 8,
        "excluded": 3,
        "over_capacity_failed": 2,
        "over_context": 2,
        "unknown_capacity": 2,
    }


def test_exposure_count_and_affected_accounts(engine):
    exposure.compute_bands(engine, case_small())
    assert exposure.totals(engine) == (8, 4)


def test_exposed_requests_are_the_hand_picked_eight(engine):
    exposure.compute_bands(engine, case_small())
    ids = [r[0] for r in engine.rows("SELECT request_id FROM exposed ORDER BY request_id")]
    assert ids == ["r02", "r03", "r04", "r13", "r16", "r17", "r19", "r21"]


def test_only_case_models_inside_the_half_open_window_get_a_band(engine):
    exposure.compute_bands(engine, case_small())
    bands = _bands(engine)
    assert len(bands) == 26
    # r23 one second before the window, r24 exactly at its end, r25 another model
    assert not {"r23", "r24", "r25"} & bands.keys()


def test_prompt_exactly_at_capacity_fits(engine):
    exposure.compute_bands(engine, case_small())
    assert _bands(engine)["r01"] == ("fits", 600, None)


@pytest.mark.parametrize(
    ("reject_from", "r01", "r02"),
    [
        (601, "fits", "exposed"),  # tokens + 1: the same as no reject_from
        (600, "exposed", "exposed"),  # r01's 600 tokens are refused from 600 on
        (602, "fits", "fits"),  # r02's 601 tokens are still admitted
    ],
)
def test_reject_from_moves_the_over_capacity_boundary(engine, reject_from, r01, r02):
    case = case_small()
    # entry 2 (pf-a*, 600 tokens until 12:00) holds r01 (600 tokens) and r02 (601 tokens);
    # over capacity means prompt >= reject_from; 602 is above tokens + 1, so the case file
    # refuses it: the frame is built directly here
    entry = dataclasses.replace(case.capacity[1], reject_from=reject_from)
    case = dataclasses.replace(case, capacity=(case.capacity[0], entry, *case.capacity[2:]))
    exposure.compute_bands(engine, case)
    bands = _bands(engine)
    assert (bands["r01"][0], bands["r02"][0]) == (r01, r02)
    assert engine.rows(
        "SELECT over_from FROM bands WHERE request_id IN ('r01', 'r02', 'r03') ORDER BY request_id"
    ) == [(reject_from,), (reject_from,), (401,)]  # r03: pf-b1, 400 tokens, no reject_from


def test_prompt_exactly_at_context_window_is_exposed(engine):
    exposure.compute_bands(engine, case_small())
    assert _bands(engine)["r04"] == ("exposed", 400, None)


def test_prompt_over_context_window_is_over_context_even_without_capacity(engine):
    exposure.compute_bands(engine, case_small())
    bands = _bands(engine)
    assert bands["r05"] == ("over_context", 600, None)
    assert bands["r12"] == ("over_context", None, None)


def test_capacity_changes_at_its_boundary_with_end_exclusive(engine):
    exposure.compute_bands(engine, case_small())
    bands = _bands(engine)
    assert bands["r16"] == ("exposed", 600, None)  # 11:59:59, old pool
    assert bands["r15"] == ("fits", 900, None)  # 12:00:00, new pool


def test_first_matching_capacity_entry_wins(engine):
    exposure.compute_bands(engine, case_small())
    # pf-a9 matches entry 1 (200 tokens) before "pf-a*" (600 tokens)
    assert _bands(engine)["r13"] == ("exposed", 200, None)


@pytest.mark.parametrize(
    ("models", "r01", "counts"),
    [
        # for m-other only: m-long keeps entries 2 and 3, the README's bands
        ("m-other", ("fits", 600, None), {"fits": 9, "exposed": 8}),
        # a glob matching m-long: the 100-token entry comes first for every pf-a* request
        ("m-l*", ("exposed", 100, None), {"fits": 4, "exposed": 13}),
    ],
)
def test_a_capacity_entry_holds_only_for_the_models_its_glob_matches(engine, models, r01, counts):
    """A first entry (pf-a*, 100 tokens, from 00:00) with a `models` glob. For m-long under
    "m-l*": the fits on pf-a* over 100 tokens become exposed: r01 (600), r14 (150, pf-a9),
    r15 (700), r22 (300), r27 (200); r26 (100) still fits; with r08 r28 r29 (pf-b*) 4 fit,
    8 + 5 = 13 exposed."""
    case = case_small()
    entry = dataclasses.replace(case.capacity[1], tokens=100, end=None, models=models)
    exposure.compute_bands(engine, dataclasses.replace(case, capacity=(entry, *case.capacity)))
    assert _bands(engine)["r01"] == r01
    got = exposure.band_counts(engine)
    assert {k: got[k] for k in counts} == counts


def test_unknown_node_and_missing_node_are_unknown_capacity_not_fits(engine):
    exposure.compute_bands(engine, case_small())
    bands = _bands(engine)
    assert bands["r10"] == ("unknown_capacity", None, None)
    assert bands["r11"] == ("unknown_capacity", None, None)


def test_star_glob_matches_a_missing_prefill_node(engine):
    case = case_small()
    star = dataclasses.replace(case.capacity[1], nodes="*")
    case = dataclasses.replace(case, capacity=(*case.capacity, star))
    exposure.compute_bands(engine, case)
    bands = _bands(engine)
    assert bands["r11"] == ("fits", 600, None)
    assert bands["r10"] == ("exposed", 600, None)


def test_failed_status_over_capacity_is_over_capacity_failed(engine):
    exposure.compute_bands(engine, case_small())
    bands = _bands(engine)
    assert bands["r06"] == ("over_capacity_failed", 600, None)
    assert bands["r18"] == ("over_capacity_failed", 800, None)


def test_excluded_requests_are_counted_per_reason(engine):
    case = case_small()
    exposure.compute_bands(engine, case)
    assert exposure.excluded_by_reason(engine, case) == {
        "internal-test": 1,
        "security-researcher": 2,
    }


def test_exclusion_reason_is_set_on_every_band_of_an_excluded_account(engine):
    exposure.compute_bands(engine, case_small())
    bands = _bands(engine)
    assert bands["r07"] == ("excluded", 600, "internal-test")
    assert bands["r08"] == ("fits", 400, "internal-test")
    assert bands["r09"] == ("excluded", 400, "security-researcher")
    assert bands["r20"] == ("excluded", 900, "security-researcher")


def test_without_exclusions_excluded_requests_become_exposed(engine):
    case = case_small()
    exposure.compute_bands(engine, case, exclusions=False)
    assert exposure.band_counts(engine)["excluded"] == 0
    assert exposure.band_counts(engine)["exposed"] == 11
    assert exposure.totals(engine) == (11, 6)
    assert exposure.excluded_by_reason(engine, case, exclusions=False) == {}
    assert engine.scalar("SELECT count(*) FROM bands WHERE exclusion_reason IS NOT NULL") == 0


def test_exposed_requests_csv_is_sorted_with_z_times(engine, tmp_path):
    exposure.compute_bands(engine, case_small())
    path = exposure.write_exposed_csv(engine, tmp_path / "exposed_requests.csv")
    assert path.read_text() == (
        "request_id,ts,account_id,model,prompt_tokens,capacity,prefill_node,decode_node,status\n"
        "r02,2026-09-01T08:10:00Z,acct-alice,m-long,601,600,pf-a1,dc-1,200\n"
        "r03,2026-09-01T08:20:00Z,acct-bob,m-long,500,400,pf-b1,dc-1,200\n"
        "r04,2026-09-01T08:30:00Z,acct-bob,m-long,1000,400,pf-b2,dc-2,200\n"
        "r13,2026-09-01T10:00:00Z,acct-erin,m-long,250,200,pf-a9,dc-2,200\n"
        "r16,2026-09-01T11:59:59Z,acct-alice,m-long,700,600,pf-a1,dc-1,200\n"
        "r17,2026-09-01T13:00:00Z,acct-bob,m-long,850,800,pf-b1,dc-1,200\n"
        "r19,2026-09-01T13:20:00Z,acct-carol,m-long,950,900,pf-a1,dc-2,200\n"
        "r21,2026-09-01T13:40:00Z,acct-erin,m-long,900,800,pf-b2,,200\n"
    )


def test_analysis_without_requests_table_is_refused():
    from forensics.engines import DuckDBEngine
    from forensics.errors import AnalysisError

    with DuckDBEngine() as eng, pytest.raises(AnalysisError, match="no requests table"):
        exposure.compute_bands(eng, case_small())
