"""Usage classification: synthetic traffic with known ground truth, seeded, built here."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from forensics.analysis import stats
from forensics.analysis.classify import classify
from forensics.case import Baseline, Case
from forensics.engines import DuckDBEngine
from forensics.errors import AnalysisError

CAP = 681_280
WINDOW = 1_048_576
MIN_PROMPT = 131_072
START = datetime(2026, 8, 27, tzinfo=UTC)
DAYS = 7
MODEL = "@cf/zai-org/glm-5.3"

BANDS_SCHEMA = {
    "request_id": pl.Utf8,
    "ts": pl.Datetime("us", "UTC"),
    "ts_end": pl.Datetime("us", "UTC"),
    "account_id": pl.Utf8,
    "model": pl.Utf8,
    "prompt_tokens": pl.Int64,
    "completion_tokens": pl.Int64,
    "status": pl.Int32,
    "prefill_node": pl.Utf8,
    "decode_node": pl.Utf8,
    "capacity": pl.Int64,
    "band": pl.Utf8,
    "exclusion_reason": pl.Utf8,
    "over_from": pl.Int64,
}


def make_case(days: int = DAYS) -> Case:
    return Case(
        path=Path("incident.toml"),
        name="synthetic",
        models=(MODEL,),
        context_window=WINDOW,
        success_status=(200,),
        window_start=START,
        window_end=START + timedelta(days=days),
        baseline=Baseline(min_prompt_tokens=MIN_PROMPT),
    )


def ordinary_traffic(seed: int, accounts: int = 12, sessions: int = 500) -> list[dict]:
    """Sessions of long-context use: heavy-tailed volume per account, diurnal timing.

    Each account has its own volume (log-normal weight: a few heavy users) and its own
    diurnal phase; a session is a few requests minutes apart; prompt sizes are Pareto above
    the baseline minimum (about 4 % over the capacity, 1.7 % over the window), 3 % fail.
    """
    rng = np.random.default_rng(seed)
    names = [f"acct-{i:02d}" for i in range(accounts)]
    weights = rng.lognormal(0.0, 1.0, accounts)
    phases = rng.integers(-4, 5, accounts)
    owner = rng.choice(accounts, size=sessions, p=weights / weights.sum())
    day = rng.integers(0, DAYS, sessions)
    hour_p = 1.0 + 0.8 * np.sin((np.arange(24) - 9) / 24 * 2 * np.pi)
    hour = (rng.choice(24, size=sessions, p=hour_p / hour_p.sum()) + phases[owner]) % 24
    start_s = day * 86400 + hour * 3600 + rng.uniform(0, 3600, sessions)
    length = rng.geometric(1 / 3, sessions)
    rows = []
    for s in range(sessions):
        gaps = np.cumsum(rng.exponential(120.0, length[s]))
        sizes = (MIN_PROMPT * (1 - rng.random(length[s])) ** (-1 / 1.95)).astype(int)
        failed = rng.random(length[s]) < 0.03
        for j in range(length[s]):
            rows.append(
                {
                    "account_id": names[owner[s]],
                    "t": float(start_s[s] + gaps[j]),
                    "prompt_tokens": int(sizes[j]),
                    "status": 500 if failed[j] else 200,
                }
            )
    # short prompts: never part of the baseline
    for i in range(60):
        rows.append(
            {
                "account_id": names[i % accounts],
                "t": float(rng.uniform(0, DAYS * 86400)),
                "prompt_tokens": int(rng.integers(100, MIN_PROMPT)),
                "status": 200,
            }
        )
    return rows


def bands_frame(rows: list[dict], excluded: dict[str, str] | None = None) -> pl.DataFrame:
    """The `bands` table of CONTRACTS.md for `rows`, capacity CAP everywhere."""
    excluded = excluded or {}
    out = []
    for i, r in enumerate(sorted(rows, key=lambda r: (r["t"], r["account_id"]))):
        p, ok = r["prompt_tokens"], r["status"] == 200
        reason = excluded.get(r["account_id"])
        if p <= CAP:
            band = "fits"
        elif p > WINDOW:
            band = "over_context"
        elif not ok:
            band = "over_capacity_failed"
        else:
            band = "excluded" if reason else "exposed"
        ts = START + timedelta(seconds=r["t"])
        out.append(
            {
                "request_id": f"req-{i:06d}",
                "ts": ts,
                "ts_end": ts + timedelta(seconds=20),
                "account_id": r["account_id"],
                "model": MODEL,
                "prompt_tokens": p,
                "completion_tokens": 500,
                "status": r["status"],
                "prefill_node": "p0",
                "decode_node": "d0",
                "capacity": CAP,
                "band": band,
                "exclusion_reason": reason,
                "over_from": CAP + 1,  # no reject_from: over capacity means > CAP
            }
        )
    return pl.DataFrame(out, schema=BANDS_SCHEMA)


def engine_with(frame: pl.DataFrame) -> DuckDBEngine:
    engine = DuckDBEngine()
    engine.con.register("bands_src", frame.to_arrow())
    engine.execute("CREATE TABLE bands AS SELECT * FROM bands_src")
    engine.con.unregister("bands_src")
    return engine


def run(rows: list[dict], excluded: dict[str, str] | None = None, exclusions: bool = True):
    with engine_with(bands_frame(rows, excluded)) as engine:
        result = classify(engine, make_case(), exclusions=exclusions)
        tables = {
            t: engine.sql_frame(f"SELECT * FROM {t}")
            for t in ("classification_accounts", "classification_tests", "classification_profile")
        }
    return result, tables


def burst_account(name: str = "acct-burst") -> list[dict]:
    """12 prompts within 8 minutes, all at most 1.5 % above the capacity, plus 5 ordinary."""
    rng = np.random.default_rng(7)
    t0 = 2 * 86400 + 3 * 3600
    rows = [
        {
            "account_id": name,
            "t": t0 + 40.0 * k,
            "prompt_tokens": CAP + 1 + int(rng.integers(0, CAP * 15 // 1000)),
            "status": 200,
        }
        for k in range(12)
    ]
    rows += [
        {"account_id": name, "t": 86400.0 * d + 50000, "prompt_tokens": 200_000, "status": 200}
        for d in range(5)
    ]
    return rows


def researcher(name: str = "acct-researcher") -> list[dict]:
    """A session stepping prompt sizes across the capacity, a few minutes apart."""
    sizes = [640_000, 655_000, 668_000, 676_000, 680_000, 684_000, 688_000, 694_000, 700_000]
    t0 = 5 * 86400 + 15 * 3600
    return [
        {"account_id": name, "t": t0 + 240.0 * k, "prompt_tokens": s, "status": 200}
        for k, s in enumerate(sizes)
    ]


# --- the statistics, worked by hand ---------------------------------------------------------


def test_holm_adjusts_step_down_and_keeps_order():
    assert stats.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def test_pooled_bins_merge_consecutive_until_expected_reached():
    assert stats.pooled_bins([1, 2, 3, 1, 5, 1], 3) == [[0, 1], [2], [3, 4, 5]]


def test_hypergeom_greater_is_one_sided_fisher():
    # 2 successes among 10, both drawn in 2 draws: 1 / C(10, 2)
    assert stats.hypergeom_greater(2, 10, 2, 2) == pytest.approx(1 / 45)


def test_binomial_scan_bound_is_windows_times_smallest_tail():
    # windows (3 requests, 2 over) and (2, 2) at share 0.1: tails 0.028 and 0.01; 5 windows
    p, where = stats.binomial_scan_bound(5, [(3, 2), (2, 2)], 0.1)
    assert p == pytest.approx(0.05)
    assert where == (2, 2)


def test_increasing_run_bound_counts_stretches_over_factorial():
    # a run of 3: three stretches in a session of 5, none in a session of 2; 3 / 3!
    assert stats.increasing_run_bound(3, [5, 2]) == pytest.approx(0.5)


# --- the SQL aggregates, worked by hand ------------------------------------------------------


def test_account_counts_split_exposed_baseline_near_and_burst():
    rows = [
        # acct-a: 2 baseline (one short prompt not counted), 3 over capacity in 9 minutes,
        # two of them within 2 % above the capacity (<= 694905), one failed
        {"account_id": "acct-a", "t": 0.0, "prompt_tokens": 200_000, "status": 200},
        {"account_id": "acct-a", "t": 10.0, "prompt_tokens": CAP, "status": 200},
        {"account_id": "acct-a", "t": 20.0, "prompt_tokens": 1000, "status": 200},
        {"account_id": "acct-a", "t": 100.0, "prompt_tokens": 690_000, "status": 200},
        {"account_id": "acct-a", "t": 400.0, "prompt_tokens": 694_905, "status": 500},
        {"account_id": "acct-a", "t": 640.0, "prompt_tokens": 900_000, "status": 200},
        # acct-b: excluded, so absent; acct-c: over the window only, so absent
        {"account_id": "acct-b", "t": 5.0, "prompt_tokens": 700_000, "status": 200},
        {"account_id": "acct-c", "t": 5.0, "prompt_tokens": 2_000_000, "status": 200},
    ]
    with engine_with(bands_frame(rows, {"acct-b": "researcher"})) as engine:
        got = engine.frame(
            "classify/accounts",
            min_prompt=MIN_PROMPT,
            context_window=WINDOW,
            burst_minutes=10,
            near_margin=0.02,
        )
    counts = ["account_id", "exposed", "baseline", "over_capacity", "near_capacity", "max_burst"]
    assert got.select(counts).rows() == [("acct-a", 2, 2, 3, 2, 3)]
    # the burst windows start at t = 0, 10, 100, 400, 640 s (the stream: baseline + over)
    assert got.select("windows", "widest").rows() == [(5, 4)]
    assert got["pairs"].to_list() == [
        [
            {"requests": 2, "over_capacity": 2},
            {"requests": 3, "over_capacity": 2},
            {"requests": 3, "over_capacity": 3},
            {"requests": 4, "over_capacity": 2},
        ]
    ]


# --- verdicts on synthetic traffic ----------------------------------------------------------


def test_ordinary_traffic_with_heavy_users_is_consistent():
    rows = ordinary_traffic(seed=11)
    result, tables = run(rows)
    volumes = tables["classification_accounts"].select(pl.col("exposed") + pl.col("baseline"))
    counts = sorted(volumes.to_series().to_list())
    assert counts[-1] >= 3 * counts[len(counts) // 2]  # heavy users are present
    assert result.verdict == "consistent_with_normal_usage"
    assert result.flagged_accounts == []


def test_burst_just_above_capacity_flags_exactly_that_account():
    result, _ = run(ordinary_traffic(seed=11) + burst_account())
    assert result.verdict == "anomalous"
    assert result.flagged_accounts == ["acct-burst"]
    reasons = {r["test"] for r in result.to_summary()["accounts"]["acct-burst"]["reasons"]}
    assert {"burst", "probe_near_capacity"} <= reasons


def test_researcher_stepping_across_capacity_is_flagged_for_probing():
    result, _ = run(ordinary_traffic(seed=11) + researcher())
    assert result.flagged_accounts == ["acct-researcher"]
    reasons = {r["test"] for r in result.to_summary()["accounts"]["acct-researcher"]["reasons"]}
    assert "probe_steps" in reasons


def test_excluded_researcher_is_not_flagged():
    rows = ordinary_traffic(seed=11) + researcher()
    result, _ = run(rows, excluded={"acct-researcher": "security-research"})
    assert result.verdict == "consistent_with_normal_usage"
    assert result.flagged_accounts == []


def test_too_few_exposed_requests_is_insufficient_data():
    rows = [
        {"account_id": "acct-a", "t": 60.0 * i, "prompt_tokens": 300_000, "status": 200}
        for i in range(40)
    ] + [{"account_id": "acct-a", "t": 7.0, "prompt_tokens": 700_000, "status": 200}]
    result, tables = run(rows)
    assert result.verdict == "insufficient_data"
    assert result.to_summary()["thresholds"] == {"min_exposed": 5, "min_baseline": 30}
    assert tables["classification_accounts"]["account_id"].to_list() == ["acct-a"]


def test_missing_bands_table_is_an_analysis_error():
    with DuckDBEngine() as engine, pytest.raises(AnalysisError, match="no bands table"):
        classify(engine, make_case())


def test_tables_for_the_report_are_materialized():
    _, tables = run(ordinary_traffic(seed=3) + burst_account())
    acc = tables["classification_accounts"]
    assert acc.columns[:8] == [
        "account_id",
        "exposed",
        "baseline",
        "expected",
        "p_value",
        "adjusted_p",
        "flagged",
        "reasons",
    ]
    flagged = acc.filter(pl.col("flagged"))
    assert flagged["account_id"].to_list() == ["acct-burst"]
    assert {r["test"] for r in json.loads(flagged["reasons"][0])} >= {"burst"}
    assert sorted(tables["classification_tests"]["test"].to_list()) == [
        "account_volume",
        "burst",
        "day",
        "hour_of_day",
        "probe_near_capacity",
        "probe_steps",
    ]
    prof = tables["classification_profile"]
    assert prof.filter(pl.col("profile") == "hour").height == 24
    assert prof.filter(pl.col("profile") == "day").height == DAYS


def test_summary_is_deterministic_and_json_ready():
    rows = ordinary_traffic(seed=5) + burst_account()
    first, _ = run(rows)
    second, _ = run(rows)
    a = json.dumps(first.to_summary(), sort_keys=True)
    assert a == json.dumps(second.to_summary(), sort_keys=True)
    assert json.loads(a)["flagged_accounts"] == ["acct-burst"]


def test_false_positive_rate_over_200_seeds_of_ordinary_traffic(record_property):
    seeds = range(1000, 1200)
    anomalous = []
    for seed in seeds:
        result, _ = run(ordinary_traffic(seed=seed, sessions=300))
        assert result.verdict != "insufficient_data"
        if result.verdict == "anomalous":
            anomalous.append((seed, result.reason))
    fpr = len(anomalous) / len(seeds)
    record_property("false_positive_rate", fpr)
    print(f"false-positive rate: {fpr:.3f} over {len(seeds)} seeds: {anomalous}")
    assert fpr <= 0.10


# --- the bundled GLM-5.3 case ---------------------------------------------------------------


@pytest.fixture(scope="module")
def glm53():
    from forensics.analysis.exposure import compute_bands
    from forensics.case import load_case
    from forensics.ingest import ingest_into

    case = load_case(Path(__file__).resolve().parent.parent / "sample_logs/glm53/incident.toml")
    engine = DuckDBEngine()
    for source in case.sources:
        ingest_into(engine, source.path, mapping=source.mapping, profile=source.profile)

    def classified(exclusions: bool):
        compute_bands(engine, case, exclusions=exclusions)
        return classify(engine, case, exclusions=exclusions)

    yield classified
    engine.close()


def test_bundled_case_is_consistent_with_normal_usage(glm53):
    result = glm53(True)
    assert (result.verdict, result.exposed, result.flagged_accounts) == (
        "consistent_with_normal_usage",
        155,
        [],
    )


def test_bundled_case_without_exclusions_flags_the_excluded_accounts(glm53):
    result = glm53(False)
    assert result.verdict == "anomalous"
    assert result.flagged_accounts == [
        "acct-5e1f0c93d2",
        "acct-ops-qa-1",
        "acct-ops-repro-a",
        "acct-ops-repro-b",
    ]
