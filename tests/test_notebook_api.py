"""`forensics.open_case` on the hand-derived fixture case (figures from
tests/fixtures/case_small/README.md) and on the bundled GLM-5.3 case (155 exposed, as in
docs/index.md), where every figure must equal `forensics demo`'s summary.json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from case_small_db import CASE_DIR, CASE_FILE

import forensics
from forensics import pipeline
from forensics.engines import DuckDBEngine
from forensics.errors import InputError

EXPECTED = CASE_DIR / "expected"


@pytest.fixture(scope="module")
def small():
    case = forensics.open_case(CASE_FILE)
    yield case
    case.close()


def _ids(frame, column: str = "request_id") -> list[str]:
    return frame[column].to_list()


# --- the fixture case ------------------------------------------------------------------------


def test_summary_equals_the_reviewed_golden_summary(small):
    summary = small.summary()
    summary.pop("classification")
    summary.pop("tool")  # the versions of this install: test_pipeline checks them
    assert summary == json.loads((EXPECTED / "summary.json").read_text())


def test_headline_is_the_lines_forensics_run_prints(small):
    lines = small.headline().splitlines()
    assert "exposed responses: 8 (range 8-9)" in lines  # README of case_small: r10
    assert "affected accounts: 4" in lines
    assert "excluded (requests, by reason): internal-test 1, security-researcher 2" in lines


def test_bands_without_a_band_counts_every_band(small):
    assert [tuple(r[:2]) for r in small.bands().iter_rows()] == [
        ("fits", 9),
        ("exposed", 8),
        ("excluded", 3),
        ("over_capacity_failed", 2),
        ("over_context", 2),
        ("unknown_capacity", 2),
    ]


def test_bands_with_a_band_gives_its_requests_oldest_first(small):
    assert _ids(small.bands(band="over_context")) == ["r05", "r12"]
    assert _ids(small.bands(band="unknown_capacity")) == ["r10", "r11"]


def test_unknown_band_is_refused_naming_the_bands(small):
    with pytest.raises(InputError, match="over_capacity_failed"):
        small.bands(band="leaked")


def test_exposed_are_the_hand_picked_eight_with_capacity_in_force(small):
    exposed = small.exposed()
    assert _ids(exposed) == ["r02", "r03", "r04", "r13", "r16", "r17", "r19", "r21"]
    assert exposed["capacity"].to_list() == [600, 400, 400, 200, 600, 800, 900, 800]
    assert str(exposed["ts"].dtype) == "Datetime(time_unit='us', time_zone='UTC')"


def test_excluded_lists_each_account_with_reason_and_counts(small):
    assert list(small.excluded().iter_rows()) == [
        ("internal-test", "acct-qa", 1, 2),
        ("security-researcher", "acct-res", 2, 2),
    ]


def test_affected_accounts_busiest_first(small):
    rows = [r[:2] for r in small.affected_accounts().iter_rows()]
    assert rows == [("acct-bob", 3), ("acct-alice", 2), ("acct-erin", 2), ("acct-carol", 1)]


def test_data_owners_are_the_hand_walked_pairs(small):
    pairs = sorted(small.data_owners().select("exposed_request_id", "owner_request_id").iter_rows())
    assert pairs == [
        ("r02", "r26"),
        ("r03", "r01"),
        ("r03", "r02"),
        ("r04", "r27"),
        ("r04", "r28"),
        ("r13", "r04"),
        ("r16", "r03"),
        ("r16", "r08"),
        ("r17", "r16"),
        ("r17", "r22"),
        ("r19", "r29"),
    ]


def test_data_owners_per_account_counts_requests_at_risk_and_exposures(small):
    rows = [r[:3] for r in small.data_owners(per_account=True).iter_rows()]
    assert rows == [
        ("acct-alice", 3, 2),
        ("acct-frank", 3, 3),
        ("acct-bob", 2, 2),
        ("acct-carol", 1, 1),
        ("acct-dave", 1, 1),
        ("acct-qa", 1, 1),
    ]


def test_classification_has_a_row_per_account_with_exposed_or_baseline(small):
    frame = small.classification()
    exposed = dict(frame.select("account_id", "exposed").iter_rows())
    assert exposed["acct-bob"] == 3 and exposed["acct-erin"] == 2
    assert frame["flagged"].to_list() == [False] * frame.height


def test_blast_radius_is_summary_json_per_model_and_the_csv_per_node(small):
    """case_small/README.md "Blast radius": m-long 28 requests, 11 over, 3 excluded, 4 unknown;
    m-other 1, nothing over; per node, the no-node row (r11) first."""
    per_model = small.blast_radius()
    assert per_model.select("model", "requests", "over_capacity", "excluded").rows() == [
        ("m-long", 28, 11, 3),
        ("m-other", 1, 0, 0),
    ]
    assert per_model.to_dicts() == small.summary()["blast_radius"]
    per_node = small.blast_radius(per_node=True)
    assert per_node.select("model", "prefill_node", "requests").rows()[:2] == [
        ("m-long", None, 1),
        ("m-long", "pf-a1", 13),
    ]
    assert per_node["over_capacity"].sum() == 11


def test_account_gives_its_requests_with_band_and_capacity(small):
    view = small.account("acct-bob")
    assert list(view.requests.select("request_id", "band", "capacity").iter_rows()) == [
        ("r03", "exposed", 400),
        ("r04", "exposed", 400),
        ("r17", "exposed", 800),
    ]
    assert view.classification["exposed"].to_list() == [3]


def test_account_gives_the_owners_of_its_exposed_responses_and_its_data_at_risk(small):
    view = small.account("acct-bob")
    assert list(view.owners.select("exposed_request_id", "owner_request_id").iter_rows()) == [
        ("r03", "r01"),
        ("r03", "r02"),
        ("r04", "r27"),
        ("r04", "r28"),
        ("r17", "r16"),
        ("r17", "r22"),
    ]
    assert list(view.at_risk.select("owner_request_id", "exposed_request_id").iter_rows()) == [
        ("r03", "r16"),
        ("r04", "r13"),
    ]


def test_account_of_an_excluded_account_shows_its_reason_on_every_band(small):
    view = small.account("acct-qa")
    assert list(view.requests.select("request_id", "band", "exclusion_reason").iter_rows()) == [
        ("r07", "excluded", "internal-test"),
        ("r08", "fits", "internal-test"),
    ]
    assert view.band_counts()["excluded"] == 1


def test_account_without_requests_in_the_window_is_refused(small):
    with pytest.raises(InputError, match="acct-nobody"):
        small.account("acct-nobody")


def test_sql_binds_named_parameters(small):
    frame = small.sql(
        "SELECT request_id FROM bands WHERE account_id = $acct AND band = $band "
        "ORDER BY request_id",
        acct="acct-erin",
        band="exposed",
    )
    assert _ids(frame) == ["r13", "r21"]


def test_sql_value_is_bound_not_pasted_into_the_text(small):
    frame = small.sql(
        "SELECT count(*) AS n FROM bands WHERE account_id = $acct", acct="x' OR '1'='1"
    )
    assert frame["n"].to_list() == [0]


def test_sql_refuses_a_missing_parameter(small):
    with pytest.raises(InputError, match="acct"):
        small.sql("SELECT * FROM bands WHERE account_id = $acct")


def test_sql_refuses_a_parameter_the_query_does_not_use(small):
    with pytest.raises(InputError, match="acount"):
        small.sql("SELECT * FROM bands WHERE account_id = $acct", acct="a", acount="b")


def test_html_repr_shows_headline_bands_exclusions_and_verdict(small):
    page = small._repr_html_()
    assert "<h3>Fixture: small two-group case</h3>" in page
    assert "Exposed responses</td><td" in page and ">8</td>" in page
    assert "Affected accounts</td><td" in page and ">4</td>" in page
    assert "internal-test 1, security-researcher 2" in page
    assert "over_capacity_failed" in page
    assert "insufficient_data" in page
    assert "6 account(s), 11 request(s) (pool-walkback, partial)" in page


def test_text_repr_is_one_short_line(small):
    text = repr(small)
    assert "8 exposed, 4 affected account(s), verdict insufficient_data" in text
    assert "\n" not in text


def test_charts_are_the_report_charts_of_this_case(small):
    timeline = json.dumps(small.timeline_chart().to_dict())
    assert "Exposed responses during the window (8)" in timeline
    assert "Status page: incident began" in timeline
    assert "context window 1,000 tokens" in json.dumps(small.size_chart().to_dict())
    for chart in (small.daily_chart(), small.hourly_chart()):
        assert chart.to_dict()["$schema"].startswith("https://vega.github.io/schema/vega-lite")


def test_without_exclusions_the_excluded_count_as_exposed():
    with forensics.open_case(CASE_FILE, exclusions=False) as case:
        summary = case.summary()
        assert (summary["exposure_count"], summary["affected_accounts"]) == (11, 6)
        assert summary["excluded_by_reason"] == {}
        assert case.excluded().height == 0


def test_without_db_the_temporary_database_is_removed_on_close():
    case = forensics.open_case(CASE_FILE)
    folder = case.db.parent
    assert case.db.is_file()
    case.close()
    assert not folder.exists()
    assert "(closed)" in repr(case)


def test_db_path_is_created_and_ingested(tmp_path):
    db = tmp_path / "cases" / "small.duckdb"
    with forensics.open_case(CASE_FILE, db=db) as case:
        assert case.summary()["ingest"]["rows_loaded"] == 29
    assert db.is_file()


def test_existing_analysis_is_reused_and_analyze_recomputes_it(tmp_path):
    db = tmp_path / "case.duckdb"
    forensics.open_case(CASE_FILE, db=db).close()
    with DuckDBEngine(db) as eng:  # tamper with the stored bands: reuse shows it
        eng.execute("UPDATE bands SET band = 'fits' WHERE request_id = 'r02'")
    with forensics.open_case(CASE_FILE, db=db) as case:
        assert case.exposed().height == 7
        assert case.analyze()["exposure_count"] == 8
        assert case.exposed().height == 8


def test_stored_bands_of_the_other_exclusion_setting_are_recomputed(tmp_path):
    db = tmp_path / "case.duckdb"
    forensics.open_case(CASE_FILE, db=db).close()
    with forensics.open_case(CASE_FILE, db=db, exclusions=False) as case:
        assert case.summary()["exposure_count"] == 11
    with forensics.open_case(CASE_FILE, db=db) as case:
        assert case.summary()["exposure_count"] == 8


def test_open_case_is_exported_lazily():
    code = (
        "import sys, forensics\n"
        "assert 'forensics.notebook' not in sys.modules\n"
        "assert forensics.open_case.__module__ == 'forensics.notebook'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- the bundled case ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_out(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    pipeline.demo(out)
    return out


def test_bundled_case_summary_equals_forensics_demo(demo_out):
    with forensics.open_case(pipeline.demo_case()) as case:
        summary = case.summary()
        assert summary == json.loads((demo_out / "summary.json").read_text())
        assert summary["exposure_count"] == 155
        assert case.exposed().height == 155
        assert case.affected_accounts().height == 11


def test_bundled_case_on_the_demo_database_reuses_it_with_equal_figures(demo_out):
    with forensics.open_case(pipeline.demo_case(), db=demo_out / "case.duckdb") as case:
        assert case.summary() == json.loads((demo_out / "summary.json").read_text())
        excluded = case.excluded().group_by("reason").agg(n=pl.col("excluded_requests").sum())
        assert dict(excluded.sort("reason").iter_rows()) == {
            "internal-test": 60,
            "security-researcher": 50,
        }
