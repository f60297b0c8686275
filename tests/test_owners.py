"""Data-owner attribution on the hand-built fixture case (derivation: case_small/README.md)."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest
from case_small_db import case_small, engine_with_requests

from forensics.analysis import exposure, owners
from forensics.case import Attribution
from forensics.engines import DuckDBEngine
from forensics.errors import AnalysisError
from forensics.schema import REQUESTS_DDL


@pytest.fixture
def engine():
    eng = engine_with_requests()
    yield eng
    eng.close()


def _pairs(engine) -> list[tuple[str, str, str]]:
    return engine.rows(
        "SELECT exposed_request_id, owner_request_id, owner_account_id FROM data_owners "
        "ORDER BY 1, 2"
    )


def _time_window(hours: int = 1):
    return dataclasses.replace(
        case_small(), attribution=Attribution("time-window", timedelta(hours=hours))
    )


def test_pool_walkback_owners_match_the_hand_walk(engine):
    case = case_small()
    exposure.compute_bands(engine, case)
    owners.attribute(engine, case)
    assert _pairs(engine) == [
        ("r02", "r26", "acct-frank"),
        ("r03", "r01", "acct-alice"),
        ("r03", "r02", "acct-alice"),
        ("r04", "r27", "acct-dave"),
        ("r04", "r28", "acct-carol"),
        ("r13", "r04", "acct-bob"),
        ("r16", "r03", "acct-bob"),
        ("r16", "r08", "acct-qa"),
        ("r17", "r16", "acct-alice"),
        ("r17", "r22", "acct-frank"),
        ("r19", "r29", "acct-frank"),
    ]


def test_pool_walkback_figures_and_partial_status(engine):
    case = case_small()
    exposure.compute_bands(engine, case)
    result = owners.attribute(engine, case)
    assert (result.accounts, result.requests, result.pairs) == (6, 11, 11)
    assert (result.exposed, result.attributed, result.unattributed) == (8, 7, 1)
    assert result.status == "partial"
    assert result.reason == "1 exposed request(s) have no decode node"


def test_candidate_whose_newer_sum_equals_the_pool_is_not_a_candidate(engine):
    case = case_small()
    exposure.compute_bands(engine, case)
    owners.attribute(engine, case)
    owners_of = {p[1] for p in _pairs(engine) if p[0] in ("r17", "r19")}
    # r15 (r17's walk reaches 1000 = dc-1 pool) and r13 (r19's walk reaches 500 = dc-2 pool)
    assert owners_of == {"r16", "r22", "r29"}


def test_failed_other_model_and_pre_window_requests_are_not_in_the_pool(engine):
    case = case_small()
    exposure.compute_bands(engine, case)
    owners.attribute(engine, case)
    owner_ids = {p[1] for p in _pairs(engine)}
    assert not {"r06", "r23", "r25"} & owner_ids


def test_owner_end_time_falls_back_to_ts_without_ts_end(engine):
    case = case_small()
    exposure.compute_bands(engine, case)
    owners.attribute(engine, case)
    end = engine.scalar(
        "SELECT strftime(owner_end_ts, '%H:%M:%S') FROM data_owners WHERE owner_request_id = 'r22'"
    )
    assert end == "12:30:00"


def test_time_window_owners_match_the_hand_walk(engine):
    case = _time_window()
    exposure.compute_bands(engine, case)
    result = owners.attribute(engine, case)
    assert _pairs(engine) == [
        ("r03", "r01", "acct-alice"),
        ("r03", "r02", "acct-alice"),
        ("r04", "r27", "acct-dave"),
        ("r04", "r28", "acct-carol"),
        ("r17", "r15", "acct-alice"),
        ("r17", "r16", "acct-alice"),
        ("r17", "r22", "acct-frank"),
        ("r19", "r29", "acct-frank"),
    ]
    assert (result.accounts, result.requests, result.status) == (4, 8, "partial")
    assert result.lookback_seconds == 3600


def test_pool_walkback_without_decode_capacity_is_not_possible(engine):
    case = case_small()
    case = dataclasses.replace(case, capacity=tuple(c for c in case.capacity if c.role != "decode"))
    exposure.compute_bands(engine, case)
    result = owners.attribute(engine, case)
    assert result.status == "not_possible"
    assert result.unattributed == 8
    assert "no [[capacity]] entry of role decode" in (result.reason or "")
    assert _pairs(engine) == []


def test_time_window_does_not_need_decode_capacity(engine):
    case = _time_window()
    case = dataclasses.replace(case, capacity=tuple(c for c in case.capacity if c.role != "decode"))
    exposure.compute_bands(engine, case)
    assert owners.attribute(engine, case).pairs == 8


def test_logs_without_decode_nodes_make_attribution_not_possible():
    with DuckDBEngine() as eng:
        eng.execute(REQUESTS_DDL)
        eng.execute(
            "INSERT INTO requests (request_id, ts, account_id, model, prompt_tokens, status, "
            "prefill_node, source, source_row) VALUES "
            "('x1', TIMESTAMPTZ '2026-09-01 08:00:00+00', 'acct-a', 'm-long', 700, 200, "
            "'pf-a1', 't', 1)"
        )
        case = case_small()
        exposure.compute_bands(eng, case)
        result = owners.attribute(eng, case)
        assert (result.status, result.exposed, result.accounts) == ("not_possible", 1, 0)
        assert result.reason == "the logs name no decode node (map decode_node to attribute owners)"


def test_attribution_without_bands_is_refused():
    with DuckDBEngine() as eng, pytest.raises(AnalysisError, match="need the bands"):
        owners.attribute(eng, case_small())


def _walkback_oracle(rows: list[dict], exposed: list[dict], case) -> set[tuple[str, str]]:
    """docs/decisions.md's pool-walkback in plain Python: walk back over the pool, newest first,
    while the newer candidates hold fewer tokens than the decode capacity in force."""
    from fnmatch import fnmatchcase

    def capacity(node: str, ts) -> int | None:
        for c in case.capacity:
            matches = c.nodes == "*" or fnmatchcase(node, c.nodes)
            if c.role == "decode" and matches and c.start <= ts and (c.end is None or ts < c.end):
                return c.tokens
        return None

    pairs = set()
    for e in exposed:
        cap = capacity(e["decode_node"], e["ts"])
        if cap is None:
            continue
        before = sorted(
            (r for r in rows if r["decode_node"] == e["decode_node"] and r["end"] < e["ts"]),
            key=lambda r: (r["end"], r["request_id"]),
            reverse=True,
        )
        newer = 0
        for c in before:
            if newer >= cap:
                break
            if c["account_id"] != e["account_id"]:
                pairs.add((e["request_id"], c["request_id"]))
            newer += c["tokens"]
    return pairs


def test_pool_walkback_matches_a_plain_python_walk_with_ties_and_changing_capacity(tmp_path):
    """Equal end times, zero-token requests, exposed requests arriving as others end, and a
    node whose decode capacity changes mid-window (two buckets widths on one node)."""
    import random
    from datetime import UTC, datetime

    from forensics.case import Capacity

    rnd = random.Random(11)
    t0 = datetime(2026, 9, 1, tzinfo=UTC)
    lines = [
        "request_id,ts,account_id,model,prompt_tokens,completion_tokens,status,"
        "prefill_node,decode_node,ts_end"
    ]
    rows = []
    for i in range(600):
        ts = t0 + timedelta(minutes=rnd.randrange(0, 600, 5))
        end = ts + timedelta(minutes=rnd.choice([0, 5, 10]))
        prompt = rnd.choice([0, 50, 120, 300, 650, 700, 950])
        completion = rnd.choice([0, 30])
        node = rnd.choice(["dc-1", "dc-2"])
        rid, acct = f"q{i:04d}", f"acct-{rnd.randrange(5)}"
        lines.append(
            f"{rid},{ts.isoformat()},{acct},m-long,{prompt},{completion},200,pf-a1,{node},"
            f"{end.isoformat()}"
        )
        rows.append(
            {
                "request_id": rid,
                "ts": ts,
                "end": end,
                "account_id": acct,
                "decode_node": node,
                "tokens": prompt + completion,
            }
        )
    (tmp_path / "requests.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    case = dataclasses.replace(
        case_small(),
        exclusions=(),
        capacity=(
            Capacity("prefill", "*", 600, t0),
            Capacity("decode", "dc-1", 900, t0, t0 + timedelta(hours=5)),
            Capacity("decode", "dc-1", 2500, t0 + timedelta(hours=5)),
            Capacity("decode", "dc-*", 1300, t0),
        ),
    )
    with DuckDBEngine() as eng:
        eng.execute(REQUESTS_DDL)
        eng.execute(
            "INSERT INTO requests SELECT *, 'q.csv', 0, NULL FROM read_csv($p, header = true, "
            "columns = {'request_id': 'VARCHAR', 'ts': 'TIMESTAMPTZ', 'account_id': 'VARCHAR', "
            "'model': 'VARCHAR', 'prompt_tokens': 'BIGINT', 'completion_tokens': 'BIGINT', "
            "'status': 'INTEGER', 'prefill_node': 'VARCHAR', 'decode_node': 'VARCHAR', "
            "'ts_end': 'TIMESTAMPTZ'})",
            p=str(tmp_path / "requests.csv"),
        )
        exposure.compute_bands(eng, case)
        owners.attribute(eng, case)
        exposed_ids = {
            r[0] for r in eng.rows("SELECT request_id FROM bands WHERE band = 'exposed'")
        }
        got = set(eng.rows("SELECT exposed_request_id, owner_request_id FROM data_owners"))
    exposed = [r for r in rows if r["request_id"] in exposed_ids]
    assert len(exposed) > 50
    assert got == _walkback_oracle(rows, exposed, case)
    assert len(got) > 500
