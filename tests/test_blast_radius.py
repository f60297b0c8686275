"""The blast radius: every model of the logs against its prefill pool, over their whole span,
and the probing account, on the fixture case `tests/fixtures/blast_radius` (four models, two
of them on shared nodes). Every expected value is derived by hand in its README.md; the same
figures on Spark are checked in tests/test_spark.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from forensics import pipeline
from forensics.render.headline import headline, other_models_lines

CASE = Path(__file__).parent / "fixtures" / "blast_radius" / "incident.toml"
KEYS = ("model", "requests", "over_capacity", "excluded", "unknown_capacity")
KEYS += ("first_over", "last_over", "in_window", "outside_window")


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("blast") / "out"
    pipeline.run(CASE, out)
    return out


@pytest.fixture(scope="module")
def summary(out) -> dict:
    return json.loads((out / "summary.json").read_text())


def _radius(summary: dict) -> dict[str, tuple]:
    return {m["model"]: tuple(m[k] for k in KEYS[1:]) for m in summary["blast_radius"]}


def test_every_model_of_the_logs_is_in_the_blast_radius_by_model(summary):
    assert [m["model"] for m in summary["blast_radius"]] == ["m-chat", "m-edge", "m-long", "m-side"]
    assert [list(m) for m in summary["blast_radius"]] == [sorted(KEYS)] * 4


def test_the_case_model_is_over_its_pool_in_and_outside_the_window(summary):
    first, last = "2026-08-31T12:00:00Z", "2026-09-02T01:00:00Z"
    assert _radius(summary)["m-long"] == (58, 10, 2, 0, first, last, 8, 2)


def test_inside_the_window_a_case_model_adds_up_to_its_bands(summary):
    bands = summary["bands"]
    in_window = _radius(summary)["m-long"][6]
    assert in_window == bands["exposed"] + bands["excluded"] == 8


def test_with_engine_input_lengths_a_case_model_still_adds_up_to_its_bands(tmp_path):
    """tests/fixtures/range-review/engine-rooms: the engine's length decides r3 (300 -> 700,
    exposed), r8 (700 -> 300, fits) and r9 (300 -> 700, excluded), in the blast radius as in
    the bands: over capacity r1, r2, r3, r9; in_window 4 = exposed 3 + excluded 1 (judged by
    the gateway's length: r1, r2, r8, excluded 0)."""
    case = Path(__file__).parent / "fixtures" / "range-review" / "engine-rooms" / "incident.toml"
    summary = pipeline.run(case, tmp_path / "out").summary
    bands = summary["bands"]
    (m,) = summary["blast_radius"]
    assert (m["over_capacity"], m["excluded"], m["in_window"]) == (4, 1, 4)
    assert m["in_window"] == bands["exposed"] + bands["excluded"] == 4


def test_a_model_with_its_own_pool_on_the_shared_nodes_is_not_over_it(summary):
    assert _radius(summary)["m-chat"] == (8, 0, 0, 0, None, None, 0, 0)


def test_a_model_outside_the_case_takes_the_engine_logs_pool_for_its_node(summary):
    """edge-1's pool from its log: 2,000 tokens, reject_from 1,994, from 08-31 00:00:10; the
    08-30 request comes before it: unknown."""
    got = _radius(summary)["m-edge"]
    assert got == (6, 3, 1, 1, "2026-09-01T06:00:00Z", "2026-09-02T03:00:00Z", 2, 1)


def test_a_model_without_any_capacity_is_unknown_and_never_counted_over(summary):
    assert _radius(summary)["m-side"] == (4, 0, 0, 4, None, None, 0, 0)


def test_without_models_the_case_pool_holds_for_the_model_sharing_its_nodes(tmp_path):
    """Entry 1 without `models` holds for m-chat on p1/p2 first: 5 of its prompts are over 1,000
    (1,500, 2,500, 2,900, 3,000 in the window, 2,000 on 08-31)."""
    case = _copy(tmp_path)
    text = case.read_text()
    case.write_text(text.replace('models = "m-long"\n', "", 1))
    summary = pipeline.run(case, tmp_path / "out").summary
    assert _radius(summary)["m-chat"][:4] == (8, 5, 0, 0)
    assert _radius(summary)["m-chat"][6:] == (4, 1)


def test_without_exclusions_nothing_is_counted_excluded(tmp_path):
    summary = pipeline.run(CASE, tmp_path / "out", exclusions=False).summary
    assert [(m["model"], m["over_capacity"], m["excluded"]) for m in summary["blast_radius"]] == [
        ("m-chat", 0, 0),
        ("m-edge", 3, 0),
        ("m-long", 10, 0),
        ("m-side", 0, 0),
    ]


def test_blast_radius_csv_holds_each_model_per_prefill_node_sorted(out):
    lines = (out / "blast_radius.csv").read_text().splitlines()
    assert lines == [
        "model,prefill_node,requests,over_capacity,excluded,unknown_capacity,first_over,"
        "last_over,in_window,outside_window",
        "m-chat,p1,4,0,0,0,,,0,0",
        "m-chat,p2,4,0,0,0,,,0,0",
        "m-edge,edge-1,6,3,1,1,2026-09-01T06:00:00Z,2026-09-02T03:00:00Z,2,1",
        "m-long,p1,39,4,1,0,2026-08-31T12:00:00Z,2026-09-01T15:00:00Z,3,1",
        "m-long,p2,19,6,1,0,2026-09-01T12:20:00Z,2026-09-02T01:00:00Z,5,1",
        "m-side,,1,0,0,1,,,0,0",
        "m-side,q1,3,0,0,3,,,0,0",
    ]


def test_a_case_model_over_capacity_outside_the_window_is_a_warning(summary):
    (warning,) = [w for w in summary["warnings"] if "outside the window" in w]
    assert warning.startswith("2 request(s) of the case's model m-long outside the window")
    assert "the window may be too narrow" in warning


def test_a_capacity_models_glob_matching_no_model_is_a_warning(tmp_path):
    case = _copy(tmp_path)
    case.write_text(case.read_text().replace('models = "m-chat"', 'models = "m-chta"'))
    summary = pipeline.run(case, tmp_path / "out").summary
    assert (
        "[[capacity]] entry 2 (prefill, models 'm-chta') matches no model of the logs (m-chat, "
        "m-edge, m-long, m-side)"
    ) in summary["warnings"]


def test_the_headline_gives_the_other_models_line(summary):
    assert (
        "other models: 3 requests above their pool (m-edge 3); capacity known for 72% of their "
        "requests"
    ) in headline(summary).splitlines()


def test_the_probing_account_is_flagged_with_its_three_signatures(summary):
    assert (summary["verdict"], summary["flagged_accounts"]) == ("anomalous", ["acct-probe"])
    reasons = summary["classification"]["accounts"]["acct-probe"]["reasons"]
    got = {r["test"]: (r["statistic"], r["p_value"], r["adjusted_p"]) for r in reasons}
    assert got == {
        "probe_max_tokens": (10.0, 4.17873e-11, 1.67149e-10),
        "probe_length_burst": (9.0, 1.88043e-09, 7.52171e-09),
        "probe_prefix": (10.0, 4.17873e-11, 1.67149e-10),
    }
    assert summary["classification"]["reason"] == (
        "1 account(s) flagged (probe_length_burst, probe_max_tokens, probe_prefix); not testable "
        "on these counts: hour_of_day, day, probe_near_capacity, burst, probe_steps"
    )


# --- the headline line, from summaries -------------------------------------------------------


def _summary(*rows: tuple[str, int, int, int]) -> dict:
    """A summary of case model `m` and the blast-radius rows (model, requests, over, unknown)."""
    radius = [
        {"model": m, "requests": n, "over_capacity": over, "unknown_capacity": unknown}
        for m, n, over, unknown in rows
    ]
    return {"models": ["m"], "blast_radius": radius}


@pytest.mark.parametrize(
    ("rows", "line"),
    [
        ([("m", 5, 1, 0)], "other models: none in the logs"),
        (
            [("m", 5, 1, 0), ("x", 1000, 0, 1)],
            "other models: 0 requests above their pool; capacity known for 99% of their requests",
        ),
        (
            [("x", 1000, 0, 999), ("y", 10, 2, 8)],
            "other models: 2 requests above their pool (y 2); capacity known for <1% of their "
            "requests",
        ),
        (
            [("x", 400, 1, 0)],
            "other models: 1 request above their pool (x 1); capacity known for 100% of their "
            "requests",
        ),
        (
            [("x", 7, 0, 7), ("y", 3, 0, 3)],
            "other models: capacity unknown for all 10 of their requests (2 model(s)): no count "
            "of requests above their pool",
        ),
    ],
    ids=["only-the-case", "rounded-down", "below-one-percent", "one-request", "unknown-for-all"],
)
def test_the_other_models_line_never_rounds_up_and_never_says_0_when_nothing_was_checked(
    rows, line
):
    """999 of 1,000 known is 99.9 %: 99; 1 + 2 of 1,010 known is 0.3 %: `<1%`; none known: no
    count."""
    assert other_models_lines(_summary(*rows)) == [line]


def test_a_summary_without_a_blast_radius_has_no_other_models_line():
    assert other_models_lines({"models": ["m"]}) == []


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(CASE.parent, tmp_path / "case")
    return tmp_path / "case" / CASE.name
