"""Usage classification: synthetic traffic with known ground truth, seeded, built here."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from forensics import pipeline
from forensics.analysis import classify as classify_module
from forensics.analysis import stats
from forensics.analysis.classify import classify
from forensics.analysis.exposure import load_case_tables
from forensics.case import Baseline, Case, load_case
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


FIELDS = ("max_tokens", "prefix_hash", "hash_ids")  # what a mapping may keep in `extra`


def with_fields(rows: list[dict], seed: int) -> list[dict]:
    """`rows` as a gateway that logs the completion limit and prefix block hashes shows them,
    every account alike: max_tokens absent for 20 %, 1 or 4 for 1 % each, else 64 to 8192;
    the first two block hashes those of one of four shared system prompts for 30 % of the
    requests, else the request's own; and 2 % of the requests sent twice at once (a second
    sample of the same prompt 0.5-5 s later: an echo)."""
    rng = np.random.default_rng([seed, 40])
    limits = [None, 1, 4, 64, 512, 2048, 8192]
    shares = [0.2, 0.01, 0.01, 0.08, 0.3, 0.3, 0.1]
    out = []
    block = 1_000_000
    for r in rows:
        if rng.random() < 0.3:
            shared = int(rng.integers(4))
            head = [10_000 + 2 * shared, 10_001 + 2 * shared]
        else:
            head, block = [block, block + 1], block + 2
        limit = limits[int(rng.choice(len(limits), p=shares))]
        fields = {"hash_ids": [*head, block]} | ({"max_tokens": limit} if limit else {})
        block += 1
        out.append({**r, **fields})
        if rng.random() < 0.02:
            out.append({**r, **fields, "t": r["t"] + float(rng.uniform(0.5, 5.0))})
    return out


def bands_frame(rows: list[dict], excluded: dict[str, str] | None = None) -> pl.DataFrame:
    """The `bands` table of CONTRACTS.md for `rows`, capacity CAP everywhere; with an `extra`
    column (JSON text) holding the FIELDS a row gives, None where it gives none."""
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
                "extra": json.dumps({k: r[k] for k in FIELDS if k in r}, sort_keys=True)
                if any(k in r for k in FIELDS)
                else None,
            }
        )
    return pl.DataFrame(out, schema={**BANDS_SCHEMA, "extra": pl.Utf8})


def engine_with(frame: pl.DataFrame) -> DuckDBEngine:
    """`bands` as given, and the case tables the analysis writes beside it; a `requests`
    table (request_id, ts, model, extra) when some row has an `extra`."""
    engine = DuckDBEngine()
    engine.con.register("bands_src", frame.to_arrow())
    engine.execute("CREATE TABLE bands AS SELECT * EXCLUDE (extra) FROM bands_src")
    if frame["extra"].drop_nulls().len():
        engine.execute(
            "CREATE TABLE requests AS "
            "SELECT request_id, ts, model, extra::JSON AS extra FROM bands_src"
        )
    engine.con.unregister("bands_src")
    load_case_tables(engine, make_case())
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


def test_hypergeom_testable_worked_by_hand():
    """The smallest p of n draws from 20 with 2 successes is P(X = min(2, n)): n = 1:
    2/20 = 0.1; n = 2: 1/C(20, 2) = 1/190 = 0.0053; n = 19: C(18, 17)/C(20, 19) = 18/20 =
    0.9 (both successes among the 19 draws). At alpha 0.01 only n = 2 is testable."""
    assert stats.hypergeom_testable_each(20, 2, [1, 2, 19], 0.01) == [False, True, False]


def test_hypergeom_testable_decides_as_the_smallest_p_does():
    """Testability is `hypergeom_min_p_each(...) <= alpha` draw for draw: on the closed form
    far from alpha, on SciPy's own tail at alpha itself (alpha set to each draw's SciPy
    smallest p, and just below it), and on a long-context stream's margins (394,225
    requests, 80 showing a signature)."""
    draws = [1, 2, 3, 7, 40, 199, 200]
    smallest = stats.hypergeom_min_p_each(200, 3, draws)
    for alpha in [*smallest, *(p * (1 - 1e-12) for p in smallest), 0.01]:
        expected = [p <= alpha for p in smallest]
        assert stats.hypergeom_testable_each(200, 3, draws, alpha) == expected
    big = [1, 2, 3, 50, 4_000, 44_179, 394_225]
    smallest = stats.hypergeom_min_p_each(394_225, 80, big)
    for alpha in [0.01, *smallest]:
        expected = [p <= alpha for p in smallest]
        assert stats.hypergeom_testable_each(394_225, 80, big, alpha) == expected


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


def test_probing_counts_worked_by_hand():
    """Echoes: a request at most 10 s after its account's previous one, both delivered, the
    prompts at most 16 tokens apart. Fingerprints: prefix_hash, else the first two block
    hashes; a match: another account sent the fingerprint strictly earlier.
    acct-a: t=4 is an echo of t=0 (4 s, 10 tokens); t=8 is 20 tokens off; t=9 failed; t=12
    follows a failure; t=50 is 38 s later: 1 echo. max_tokens at t=0, 4, 8 (1, 4, 5): 3 given,
    2 tiny. Fingerprint "1,2" at t=0, 4, 50: acct-a sent it first (t=0), acct-b second (t=2),
    so t=4 and t=50 match (acct-b earlier), t=0 does not: 3 fingerprints, 2 matches, 1 account.
    acct-b: t=40 comes exactly 10 s after t=30 with the same length: 1 echo. "1,2" at t=2
    (acct-a at t=0: match), [7] is one block (no fingerprint), prefix_hash "x" at t=40 (the
    excluded acct-c at t=1: match): 2 of 2, from 2 accounts. acct-c is excluded: not counted,
    yet its earlier use counts."""
    rows = [
        {"t": 0.0, "prompt_tokens": 1000, "max_tokens": 1, "hash_ids": [1, 2, 3]},
        {"t": 4.0, "prompt_tokens": 1010, "max_tokens": 4, "hash_ids": [1, 2, 9]},
        {"t": 8.0, "prompt_tokens": 1030, "max_tokens": 5},
        {"t": 9.0, "prompt_tokens": 1030, "status": 500},
        {"t": 12.0, "prompt_tokens": 1030},
        {"t": 50.0, "prompt_tokens": 1030, "hash_ids": [1, 2, 5]},
    ]
    rows = [{"account_id": "acct-a", "status": 200} | r for r in rows]
    rows += [
        {"account_id": "acct-b", "t": 2.0, "prompt_tokens": 5000, "hash_ids": [1, 2]},
        {"account_id": "acct-b", "t": 30.0, "prompt_tokens": 5000, "hash_ids": [7]},
        {"account_id": "acct-b", "t": 40.0, "prompt_tokens": 5000, "prefix_hash": "x"},
        {"account_id": "acct-c", "t": 1.0, "prompt_tokens": 5000, "prefix_hash": "x"},
    ]
    rows = [{"status": 200} | r for r in rows]
    with engine_with(bands_frame(rows, {"acct-c": "researcher"})) as engine:
        lengths = engine.frame(
            "classify/lengths", echo_seconds=10, echo_tokens=16, default_status=200
        )
        fields = engine.frame("classify/fields", tiny_max_tokens=4)
    assert lengths.rows() == [("acct-a", 6, 1), ("acct-b", 3, 1)]
    assert fields.rows() == [("acct-a", 6, 3, 2, 3, 2, 1), ("acct-b", 3, 0, 0, 2, 2, 2)]


def tiny_max_tokens_account(name: str = "acct-tiny") -> list[dict]:
    """30 long-context prompts (150,000 tokens, each on its own hour) asking for 1 token."""
    return [
        {
            "account_id": name,
            "t": 3600.0 * (5 * k + 2),
            "prompt_tokens": 150_000 + 1000 * k,
            "status": 200,
            "max_tokens": 1,
            "hash_ids": [5_000_000 + 3 * k, 5_000_001 + 3 * k],
        }
        for k in range(30)
    ]


def echo_account(name: str = "acct-echo") -> list[dict]:
    """15 prompts of 250,000 tokens 3 s apart: 14 echoes."""
    t0 = 3 * 86400 + 10 * 3600
    return [
        {"account_id": name, "t": t0 + 3.0 * k, "prompt_tokens": 250_000, "status": 200}
        for k in range(15)
    ]


def prefix_snoop(victim: str = "acct-victim", snoop: str = "acct-snoop") -> list[dict]:
    """The victim sends 5 requests starting with blocks 7000000, 7000001; an hour later the
    snoop sends 20 requests a minute apart starting with the same two blocks."""
    t0 = 2 * 86400 + 9 * 3600
    rows = [
        {
            "account_id": victim,
            "t": t0 + 120.0 * k,
            "prompt_tokens": 300_000 + 5000 * k,
            "status": 200,
            "max_tokens": 2048,
            "hash_ids": [7_000_000, 7_000_001, 7_100_000 + k],
        }
        for k in range(5)
    ]
    return rows + [
        {
            "account_id": snoop,
            "t": t0 + 3600.0 + 60.0 * k,
            "prompt_tokens": 200_000 + 1000 * k,
            "status": 200,
            "max_tokens": 512,
            "hash_ids": [7_000_000, 7_000_001, 8_000_000 + k],
        }
        for k in range(20)
    ]


def _reasons(result, account: str) -> set[str]:
    return {r["test"] for r in result.to_summary()["accounts"][account]["reasons"]}


def test_an_account_asking_for_one_token_is_flagged_for_probing():
    rows = with_fields(ordinary_traffic(seed=11), 11) + tiny_max_tokens_account()
    result, tables = run(rows)
    assert result.flagged_accounts == ["acct-tiny"]
    assert _reasons(result, "acct-tiny") == {"probe_max_tokens"}
    assert "probe_max_tokens" in result.reason
    row = tables["classification_accounts"].filter(pl.col("account_id") == "acct-tiny")
    assert row.select("exposed", "baseline", "tiny_max_tokens").rows() == [(0, 30, 30)]


def test_a_burst_of_prompts_of_one_length_seconds_apart_is_flagged():
    result, tables = run(with_fields(ordinary_traffic(seed=11), 11) + echo_account())
    assert result.flagged_accounts == ["acct-echo"]
    assert _reasons(result, "acct-echo") == {"probe_length_burst"}
    row = tables["classification_accounts"].filter(pl.col("account_id") == "acct-echo")
    assert row["length_echoes"].to_list() == [14]


def test_prompts_starting_with_another_accounts_blocks_flag_the_snoop_not_its_victim():
    result, tables = run(with_fields(ordinary_traffic(seed=11), 11) + prefix_snoop())
    assert result.flagged_accounts == ["acct-snoop"]
    assert _reasons(result, "acct-snoop") == {"probe_prefix"}
    (reason,) = result.to_summary()["accounts"]["acct-snoop"]["reasons"]
    assert reason["detail"].startswith("20 of 20 requests began with a prefix")
    accounts = tables["classification_accounts"]
    matches = dict(accounts.select("account_id", "prefix_matches").iter_rows())
    assert (matches["acct-snoop"], matches["acct-victim"]) == (20, 0)


def test_a_probing_account_without_long_context_requests_gets_a_row_when_flagged():
    """acct-tiny's prompts below the baseline minimum: outside the long-context stream, its
    row comes from the probing test alone."""
    short = [r | {"prompt_tokens": 2000} for r in tiny_max_tokens_account()]
    result, tables = run(with_fields(ordinary_traffic(seed=11), 11) + short)
    assert result.flagged_accounts == ["acct-tiny"]
    row = tables["classification_accounts"].filter(pl.col("account_id") == "acct-tiny")
    assert row.select("exposed", "baseline", "flagged", "tiny_max_tokens").rows() == [
        (0, 0, True, 30)
    ]


def test_probing_tests_without_their_fields_are_named_not_testable():
    result, _ = run(ordinary_traffic(seed=11))
    assert result.reason.endswith(
        "; not testable without their fields: probe_max_tokens (max_tokens), probe_prefix "
        "(prefix_hash or hash_ids)"
    )
    tests = {t["test"]: t for t in result.tests}
    assert tests["probe_max_tokens"]["p_value"] is None
    assert tests["probe_max_tokens"]["detail"].startswith(
        "not testable: the case database holds no requests table"
    )


def test_probing_fields_absent_from_every_request_are_named_not_testable():
    """The requests keep only a bootstrap_room in `extra`: the two tests that need max_tokens or
    a prefix fingerprint are not testable, and say so; echoes need no field and are tested."""
    with engine_with(bands_frame(ordinary_traffic(seed=11))) as engine:
        engine.execute(
            "CREATE TABLE requests AS SELECT request_id, ts, model, "
            "'{\"bootstrap_room\": 5}'::JSON AS extra FROM bands"
        )
        result = classify(engine, make_case())
    tests = {t["test"]: t for t in result.tests}
    assert tests["probe_max_tokens"]["detail"].startswith(
        "not testable: no request of the case's models in the window carries max_tokens"
    )
    assert tests["probe_prefix"]["p_value"] is None
    assert tests["probe_length_burst"]["detail"].startswith("requests within 10 s")
    assert result.reason.endswith(
        "; not testable without their fields: probe_max_tokens (max_tokens), probe_prefix "
        "(prefix_hash or hash_ids)"
    )


def test_the_probing_fields_are_searched_for_in_scope_only():
    """The text search that decides whether the fields are parsed reads the requests of the
    case's models in the window only (the rows of `bands`, all the fields query reads): a
    max_tokens of another model, or of a request a second before the window, is not found;
    one of a request in scope is."""
    case = make_case()
    before = START - timedelta(seconds=1)
    rows = [
        ("in-scope", START, MODEL, '{"bootstrap_room": 5}'),
        ("other-model", START, "m-other", '{"max_tokens": 1}'),
        ("before", before, MODEL, '{"max_tokens": 1}'),
    ]
    frame = pl.DataFrame(
        rows,
        schema={
            "request_id": pl.Utf8,
            "ts": pl.Datetime("us", "UTC"),
            "model": pl.Utf8,
            "extra": pl.Utf8,
        },
        orient="row",
    )
    params = {"window_start": case.window_start, "window_end": case.window_end}
    with DuckDBEngine() as engine:
        engine.con.register("src", frame.to_arrow())
        engine.execute("CREATE TABLE requests AS SELECT * REPLACE (extra::JSON AS extra) FROM src")
        load_case_tables(engine, case)
        assert not engine.frame("classify/has_fields", **params)["present"][0]
        engine.execute("""UPDATE requests SET extra = '{"max_tokens": 1}' WHERE ts = $t""", t=START)
        assert engine.frame("classify/has_fields", **params)["present"][0]


FIXTURES = Path(__file__).parent / "fixtures"


def _ingested(case_toml: Path) -> DuckDBEngine:
    """The case's sources ingested into a new in-memory database, its scope defined."""
    case = load_case(case_toml)
    engine = DuckDBEngine()
    pipeline.ingest_sources(engine, case)
    load_case_tables(engine, case)
    return engine


def test_no_probing_field_can_be_kept_when_no_source_mapping_names_one(tmp_path):
    """tests/fixtures/evidence: a.mapping.toml keeps bootstrap_room in [extra], b's keeps
    nothing, and both logs were loaded with them: no request can carry max_tokens,
    prefix_hash or hash_ids, so the text search need not run."""
    shutil.copytree(FIXTURES / "evidence", tmp_path / "case")
    with _ingested(tmp_path / "case" / "incident.toml") as engine:
        assert (
            classify_module.fields_possible(engine, load_case(tmp_path / "case" / "incident.toml"))
            is False
        )


def test_probing_fields_may_be_kept_by_a_mapping_naming_one_or_another_mapping(tmp_path):
    """tests/fixtures/blast_radius keeps max_tokens and hash_ids: possible. The evidence
    fixture with a.mapping.toml given max_tokens after its log was loaded: the log was loaded
    with another mapping than the case's now (its digest differs), so the text search
    decides."""
    with _ingested(FIXTURES / "blast_radius" / "incident.toml") as engine:
        case = load_case(FIXTURES / "blast_radius" / "incident.toml")
        assert classify_module.fields_possible(engine, case) is True
    shutil.copytree(FIXTURES / "evidence", tmp_path / "case")
    case_toml = tmp_path / "case" / "incident.toml"
    with _ingested(case_toml) as engine:
        mapping = tmp_path / "case" / "a.mapping.toml"
        text = mapping.read_text(encoding="utf-8")
        mapping.write_text(text.replace("[extra]\n", '[extra]\nmax_tokens = "mt"\n'), "utf-8")
        assert classify_module.fields_possible(engine, load_case(case_toml)) is True


def test_probing_fields_are_searched_for_when_extra_is_the_logs_own_or_unrecorded(tmp_path):
    """case_small reads its log with the canonical profile, which keeps the log's own
    `extra`: possible. The evidence fixture in a database whose inputs do not record the
    mapping (written before the digest was): possible."""
    with _ingested(FIXTURES / "case_small" / "incident.toml") as engine:
        case = load_case(FIXTURES / "case_small" / "incident.toml")
        assert classify_module.fields_possible(engine, case) is True
    shutil.copytree(FIXTURES / "evidence", tmp_path / "case")
    case_toml = tmp_path / "case" / "incident.toml"
    with _ingested(case_toml) as engine:
        engine.execute("ALTER TABLE inputs DROP COLUMN mapping_sha256")
        assert classify_module.fields_possible(engine, load_case(case_toml)) is True


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
        "probe_length_burst",
        "probe_max_tokens",
        "probe_near_capacity",
        "probe_prefix",
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


@pytest.mark.parametrize("fields", [False, True], ids=["without-fields", "with-probing-fields"])
def test_false_positive_rate_over_200_seeds_of_ordinary_traffic(record_property, fields):
    """With the probing fields (`with_fields`: every account alike) each probing test may
    flag at its family-wise alpha; the verdict's rate stays within 10 %."""
    seeds = range(1000, 1200)
    anomalous = []
    for seed in seeds:
        traffic = ordinary_traffic(seed=seed, sessions=300)
        result, _ = run(with_fields(traffic, seed) if fields else traffic)
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


def few_exposed_with_a_prober(tiny: int) -> list[dict]:
    """acct-a: 3 exposed requests (CAP + 1000 tokens, hours apart); acct-b: 12 short prompts
    asking for 512 tokens; acct-tiny: 10 short prompts asking for `tiny` tokens. Every request
    carries max_tokens and two block hashes of its own; none comes within ECHO_SECONDS of the
    account's previous one."""
    rows = [
        {"account_id": "acct-a", "t": 3600.0 * k, "prompt_tokens": CAP + 1000, "max_tokens": 2048}
        for k in range(1, 4)
    ]
    rows += [
        {"account_id": "acct-b", "t": 3600.0 * (10 + k), "prompt_tokens": 2000 + 100 * k}
        | {"max_tokens": 512}
        for k in range(12)
    ]
    rows += [
        {"account_id": "acct-tiny", "t": 3600.0 * (30 + k), "prompt_tokens": 3000 + 100 * k}
        | {"max_tokens": tiny}
        for k in range(10)
    ]
    return [
        r | {"status": 200, "hash_ids": [1000 + 2 * i, 1001 + 2 * i]} for i, r in enumerate(rows)
    ]


def test_a_probing_account_is_flagged_however_few_requests_were_exposed():
    """3 exposed and no baseline request: too few for the tests of timing and volume, but the
    probing signatures compare every account with the others. max_tokens <= 4 in 10 of the 25
    requests, all acct-tiny's: P(X >= 10) for 10 draws of 25 with 10 hits is 1 / C(25, 10) =
    3.06e-7. Testable (Tarone, smallest attainable p <= 0.01): acct-b (12 draws:
    C(15, 2) / C(25, 12) = 2.0e-5) and acct-tiny; acct-a (3 draws: C(10, 3) / C(25, 3) =
    0.052) is not. Holm over two: 6.1e-7 < 0.01, so acct-tiny is flagged: anomalous."""
    result, tables = run(few_exposed_with_a_prober(tiny=1))
    assert result.verdict == "anomalous"
    assert result.flagged_accounts == ["acct-tiny"]
    assert _reasons(result, "acct-tiny") == {"probe_max_tokens"}
    (reason,) = result.to_summary()["accounts"]["acct-tiny"]["reasons"]
    assert reason["p_value"] == pytest.approx(1 / 3_268_760)
    assert reason["adjusted_p"] == pytest.approx(2 / 3_268_760)
    assert result.reason == (
        "1 account(s) flagged (probe_max_tokens); 3 exposed and 0 baseline requests; the tests "
        "of timing and volume need at least 5 exposed and 30 baseline requests"
    )
    assert [t["test"] for t in result.tests] == [
        "probe_length_burst",
        "probe_max_tokens",
        "probe_prefix",
    ]
    row = tables["classification_accounts"].filter(pl.col("account_id") == "acct-tiny")
    assert row.select("exposed", "flagged", "tiny_max_tokens").rows() == [(0, True, 10)]


def test_too_few_exposed_requests_without_a_probing_signature_is_insufficient_data():
    """The same requests with acct-tiny asking for 512 tokens: no request asks for <= 4, so
    nothing is flagged; the verdict stays insufficient_data and says the probing tests ran."""
    result, _ = run(few_exposed_with_a_prober(tiny=512))
    assert result.verdict == "insufficient_data"
    assert result.flagged_accounts == []
    assert result.reason == (
        "3 exposed and 0 baseline requests; the tests of timing and volume need at least 5 "
        "exposed and 30 baseline requests; no account flagged by probe_length_burst, "
        "probe_max_tokens, probe_prefix"
    )
