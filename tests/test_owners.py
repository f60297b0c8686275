"""Data-owner attribution on the hand-built fixture cases (derivations: case_small/README.md,
owners_excluded/README.md)."""

from __future__ import annotations

import csv
import dataclasses
import json
import re
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from case_small_db import case_small, engine_with_requests

from forensics import pipeline
from forensics.analysis import exposure, owners
from forensics.case import Attribution
from forensics.engines import DuckDBEngine
from forensics.errors import AnalysisError
from forensics.render import notices
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
    # the excluded r07 r09 r20 ran on dc-3, which has no decode capacity
    assert (result.excluded_attributed, result.excluded_unattributed) == (0, 3)
    assert result.status == "partial"
    assert result.reason == (
        "1 exposed request(s) have no decode node; 3 excluded request(s) ran on a decode node "
        "with no [[capacity]] entry of role decode in force (add one, or use policy time-window)"
    )


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
        ("r09", "r07", "acct-qa"),
        ("r17", "r15", "acct-alice"),
        ("r17", "r16", "acct-alice"),
        ("r17", "r22", "acct-frank"),
        ("r19", "r29", "acct-frank"),
    ]
    assert (result.accounts, result.requests, result.status) == (5, 9, "partial")
    assert (result.excluded_attributed, result.excluded_unattributed) == (3, 0)
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
    assert owners.attribute(engine, case).pairs == 9


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


# --- excluded accounts' responses (derivation: fixtures/owners_excluded/README.md) -------------

EXCLUDED_CASE = Path(__file__).parent / "fixtures" / "owners_excluded" / "incident.toml"
# (exposed response, owner request, owner account, the response's band)
EXCLUDED_ROWS = [
    ("q03", "q01", "acct-b", "exposed"),
    ("q03", "q02", "acct-d", "exposed"),
    ("q07", "q04", "acct-a", "excluded"),
    ("q07", "q05", "acct-b", "excluded"),
    ("q07", "q06", "acct-qa", "excluded"),
]


@pytest.fixture(scope="module")
def excluded_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("owners-excluded") / "out"
    pipeline.run(EXCLUDED_CASE, out)
    return out


def _rows_of(out: Path) -> list[tuple[str, str, str, str]]:
    with DuckDBEngine(out / "case.duckdb") as eng:
        return eng.rows(
            "SELECT exposed_request_id, owner_request_id, owner_account_id, exposed_band "
            "FROM data_owners ORDER BY 1, 2"
        )


def _owners_summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())["data_owners"]


def test_excluded_accounts_responses_are_walked_back_to_their_data_owners(excluded_run):
    # q07 (researcher) read q06 qa, q05 b, q04 a; q08 e is cut (newer 1000, not < 1000);
    # q09 (qa, dc-9) has no decode capacity; q10 (researcher, status 400) is not walked back
    assert _rows_of(excluded_run) == EXCLUDED_ROWS


def test_owner_figures_state_exposed_and_excluded_responses_apart(excluded_run):
    info = _owners_summary(excluded_run)
    assert (info["accounts"], info["requests"], info["pairs"]) == (4, 5, 5)
    assert info["read_by"] == {
        "exposed": {"accounts": 2, "requests": 2, "pairs": 2},
        "excluded": {"accounts": 3, "requests": 3, "pairs": 3},
    }
    assert (info["exposed_attributed"], info["exposed_unattributed"]) == (1, 0)
    assert (info["excluded_attributed"], info["excluded_unattributed"]) == (1, 1)


def test_an_unattributable_excluded_response_makes_the_owners_partial(excluded_run):
    info = _owners_summary(excluded_run)
    assert info["status"] == "partial"
    assert info["reason"] == (
        "1 excluded request(s) ran on a decode node with no [[capacity]] entry of role decode "
        "in force (add one, or use policy time-window)"
    )


def test_data_owners_csv_says_whose_responses_could_read_each_account(excluded_run):
    assert (excluded_run / "notify" / "data_owners.csv").read_text() == (
        "account_id,requests_at_risk,exposures,first_at,last_at,excluded_reason,read_by,name,"
        "email\n"
        "acct-a,1,1,2026-09-01T02:01:00Z,2026-09-01T02:01:00Z,,excluded,Alpha Ltd,"
        "a@alpha.example\n"
        "acct-b,2,2,2026-09-01T01:01:00Z,2026-09-01T02:11:00Z,,both,Beta Inc,b@beta.example\n"
        "acct-d,1,1,2026-09-01T01:11:00Z,2026-09-01T01:11:00Z,,exposed,Delta Co,d@delta.example\n"
        "acct-qa,1,1,2026-09-01T02:21:00Z,2026-09-01T02:21:00Z,internal-test,excluded,Ops QA,"
        "qa@example.internal\n"
    )


def test_an_owner_read_only_by_an_excluded_response_gets_a_data_owner_notice(excluded_run):
    folder = excluded_run / "notify" / "notices"
    with (folder / "index.csv").open(newline="") as f:
        index = {row["account_id"]: row for row in csv.DictReader(f)}
    assert {a: row["roles"] for a, row in index.items()} == {
        "acct-a": "data_owner",
        "acct-b": "data_owner",
        "acct-c": "recipient",
        "acct-d": "data_owner",
    }
    notice = (folder / index["acct-a"]["file"]).read_text(encoding="utf-8")
    assert "## Your requests whose data was at risk" in notice
    assert "q04" in notice and "2026-09-01T02:01:00Z" in notice


def test_the_report_counts_the_excluded_responses_behind_the_owners_apart(excluded_run):
    html = (excluded_run / "report.html").read_text(encoding="utf-8")
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))
    # 4 accounts, 5 requests; q03 is the exposed response with owners, q07 the excluded one
    assert (
        "4 accounts, 5 requests at risk, behind 1 exposed responses and 1 over-capacity "
        "response(s) of excluded accounts."
    ) in text


def test_time_window_walks_back_excluded_responses_without_decode_capacity(tmp_path):
    folder = tmp_path / "case"
    shutil.copytree(EXCLUDED_CASE.parent, folder)
    case = folder / "incident.toml"
    policy = 'policy = "pool-walkback"'
    case.write_text(case.read_text().replace(policy, 'policy = "time-window"\nlookback = "30m"'))
    pipeline.run(case, tmp_path / "out")
    # the same 5 rows (q08 ended 01:51, before q07's 02:00); q09 on dc-9 has no candidate
    assert _rows_of(tmp_path / "out") == EXCLUDED_ROWS
    info = _owners_summary(tmp_path / "out")
    assert (info["status"], info["excluded_attributed"], info["excluded_unattributed"]) == (
        "complete",
        2,
        0,
    )


def test_unattributable_excluded_responses_are_put_in_a_regulators_words():
    reason = (
        "1 exposed request(s) have no decode node; 2 excluded request(s) have no decode node; "
        "3 excluded request(s) ran on a decode node with no [[capacity]] entry of role decode "
        "in force (add one, or use policy time-window)"
    )
    assert str(notices.owners_why(reason)) == (
        "For 1 affected response(s) the logs do not record which server generated them; for 2 "
        "response(s) to set-aside accounts the logs do not record which server generated them; "
        "3 response(s) to set-aside accounts were generated on a server whose cache pool size "
        "is not known"
    )
