"""DuckDBEngine evidence: the bug's signature from prefill/decode logs, reconciled with bands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forensics import schema
from forensics.analysis import evidence
from forensics.case import load_case
from forensics.engines import DuckDBEngine
from forensics.ingest import sglang

LOGS = Path(__file__).parent / "fixtures" / "sglang"

# gateway requests: (request_id, bootstrap_room or None, prompt_tokens, band)
GATEWAY = [
    ("g-1", 1001, 200000, "fits"),
    ("g-2", 1002, 700000, "exposed"),  # prefill abort + decode 250 tokens: matched
    ("g-3", 1003, 750000, "exposed"),  # prefill input_len=1 (old spelling) + decode: matched
    ("g-4", 1004, 800000, "exposed"),  # prefill abort, decode output_len=0: not the signature
    ("g-5", 1005, 900000, "fits"),  # after the restart (pool 2040000)
    ("g-6", 1006, 690000, "exposed"),  # decode leg only
    ("g-7", 1007, 690000, "excluded"),  # signature, but the account is excluded
    ("g-8", None, 700000, "exposed"),  # gateway kept no bootstrap_room
    ("g-9", 1009, 700000, "exposed"),  # no engine line at all
]


@pytest.fixture
def case(tmp_path):
    p = tmp_path / "incident.toml"
    p.write_text(
        'name = "t"\nmodels = ["m"]\ncontext_window = 1048576\n[window]\n'
        'start = "2026-08-27T00:00:00Z"\nend = "2026-09-10T00:00:00Z"\n',
        encoding="utf-8",
    )
    return load_case(p)


def _gateway(engine: DuckDBEngine) -> None:
    engine.execute(schema.REQUESTS_DDL)
    engine.execute(
        "CREATE TABLE bands (request_id VARCHAR, prompt_tokens BIGINT, band VARCHAR, "
        "status INTEGER, exclusion_reason VARCHAR)"
    )
    for i, (rid, room, tokens, band) in enumerate(GATEWAY, start=1):
        extra = json.dumps({"bootstrap_room": str(room)} if room is not None else {})
        engine.execute(
            "INSERT INTO requests (request_id, ts, account_id, model, prompt_tokens, source, "
            "source_row, extra) VALUES ($rid, TIMESTAMPTZ '2026-08-27 01:00:00+00', 'a', 'm', "
            "$tokens, 'gw', $row, $extra)",
            rid=rid,
            tokens=tokens,
            row=i,
            extra=extra,
        )
        engine.execute(
            "INSERT INTO bands VALUES ($rid, $tokens, $band, 200, $reason)",
            rid=rid,
            tokens=tokens,
            band=band,
            reason="internal-test" if band == "excluded" else None,
        )


@pytest.fixture
def engine():
    e = DuckDBEngine()
    sglang.ingest_logs(e, [LOGS / "prefill-0.log", LOGS / "decode-0.log"])
    _gateway(e)
    return e


def test_no_engine_tables_means_no_evidence(case):
    assert evidence.engine_evidence(DuckDBEngine(), case) is None


def test_signature_is_prefill_rejection_plus_normal_decode(engine, case):
    result = evidence.engine_evidence(engine, case)
    assert result["engine_signature"] == 3
    assert engine.rows(
        "SELECT bootstrap_room, prefill_rid, requested_tokens, decode_rid, output_len "
        "FROM engine_signature ORDER BY bootstrap_room"
    ) == [
        (1002, "p-bbb", 700000, "d-bbb", 250),
        (1003, "p-ccc", None, "d-ccc", 120),
        (1007, "p-ggg", 690000, "d-ggg", 40),
    ]


def test_reconciliation_counts_and_reasons(engine, case):
    rec = evidence.engine_evidence(engine, case)["engine_reconciliation"]
    assert rec["matched"] == {"count": 2}
    assert rec["gateway_only"] == {
        "count": 4,
        "reasons": {
            "engine legs present but not the signature (prefill not rejected for capacity, "
            "or decode did not finish normally)": {
                "count": 1,
                "request_ids": ["g-4"],
                "bootstrap_rooms": ["1004"],
            },
            "gateway record has no bootstrap_room": {
                "count": 1,
                "request_ids": ["g-8"],
                "bootstrap_rooms": [],
            },
            "no engine log line for this bootstrap_room": {
                "count": 1,
                "request_ids": ["g-9"],
                "bootstrap_rooms": ["1009"],
            },
            "no prefill leg in the engine logs": {
                "count": 1,
                "request_ids": ["g-6"],
                "bootstrap_rooms": ["1006"],
            },
        },
    }
    assert rec["engine_only"] == {
        "count": 1,
        "reasons": {
            "excluded account (internal-test)": {
                "count": 1,
                "request_ids": ["g-7"],
                "bootstrap_rooms": ["1007"],
            },
        },
    }


def test_engine_confirmed_counts_the_exposed_responses_with_the_signature(engine, case):
    result = evidence.engine_evidence(engine, case)
    # g-2 and g-3 are exposed and show the signature; g-7 shows it but is excluded
    assert (result["engine_confirmed"], result["engine_signature"]) == (2, 3)


def test_engine_only_names_the_status_of_an_undelivered_response(engine, case):
    engine.execute(
        "UPDATE bands SET band = 'over_capacity_failed', status = 499, exclusion_reason = NULL "
        "WHERE request_id = 'g-7'"
    )
    rec = evidence.engine_evidence(engine, case)["engine_reconciliation"]
    assert rec["engine_only"]["reasons"] == {
        "gateway status 499: response not delivered to the client (band over_capacity_failed)": {
            "count": 1,
            "request_ids": ["g-7"],
            "bootstrap_rooms": ["1007"],
        },
    }


def test_capacity_timeline_is_in_the_evidence_without_log_paths(engine, case):
    spans = evidence.engine_evidence(engine, case)["engine_capacity"]
    assert [(s["role"], s["node"], s["tokens"], s["reject_from"], s["start"]) for s in spans][
        :1
    ] == [("prefill", "prefill-0", 681280, 681274, "2026-08-27T00:00:30Z")]
    keys = {"role", "node", "tokens", "reject_from", "context_len", "start", "end"}
    assert all(set(s) == keys for s in spans)


def test_engine_only_without_gateway_request(engine, case):
    engine.execute("DELETE FROM requests WHERE request_id = 'g-7'")
    engine.execute("DELETE FROM bands WHERE request_id = 'g-7'")
    rec = evidence.engine_evidence(engine, case)["engine_reconciliation"]
    assert rec["engine_only"]["reasons"] == {
        "no gateway request with this bootstrap_room": {
            "count": 1,
            "request_ids": [],
            "bootstrap_rooms": ["1007"],
        },
    }


def test_preflight_lists_pools_smaller_than_the_case_window(engine, case):
    result = evidence.engine_evidence(engine, case)
    assert result["preflight"] == [
        {
            "node": "prefill-0",
            "role": "prefill",
            "tokens": 681280,
            "context_window": 1048576,
            "danger_band": {"from": 681274, "to": 1048575},
            "engine_warned": False,
            "start": "2026-08-27T00:00:30Z",
            "end": "2026-09-09T14:52:00Z",
        }
    ]


def test_without_bands_reconciliation_is_none(case):
    e = DuckDBEngine()
    sglang.ingest_logs(e, [LOGS / "prefill-0.log", LOGS / "decode-0.log"])
    result = evidence.engine_evidence(e, case)
    assert (result["engine_signature"], result["engine_confirmed"]) == (3, None)
    assert result["engine_reconciliation"] is None


BUNDLED = Path(__file__).resolve().parent.parent / "sample_logs" / "glm53"


def test_bundled_case_engine_logs_confirm_every_exposure_and_match_the_case_capacity():
    from forensics import ingest
    from forensics.analysis import capacity, exposure

    case = load_case(BUNDLED / "incident.toml")
    e = DuckDBEngine()
    ingest.ingest_into(e, [BUNDLED / "gateway.jsonl.gz"], mapping=BUNDLED / "gateway.mapping.toml")
    ingest.ingest_into(e, [BUNDLED / "engine"], profile="sglang")
    exposure.compute_bands(e, case)
    result = evidence.engine_evidence(e, case)
    rec = result["engine_reconciliation"]
    assert (rec["matched"]["count"], rec["gateway_only"]["count"]) == (155, 0)
    spans = {
        (t["role"], t["tokens"], t["reject_from"], t["start"], t["end"])
        for t in capacity.timeline(e)
    }
    # reject_from: min(1048575, tokens - 1) - 5
    assert spans == {
        ("prefill", 681280, 681274, "2026-08-27T00:00:00Z", "2026-09-09T14:52:00Z"),
        ("prefill", 2039808, 1048570, "2026-09-09T14:52:00Z", None),
        ("decode", 1302528, 1048570, "2026-08-27T00:00:00Z", None),
    }
    assert [(f["role"], f["tokens"]) for f in result["preflight"]] == [("prefill", 681280)] * 4


def test_a_gateway_exposure_the_engine_refused_says_so(case):
    # SGLang 0.5.21 fixtures: the prefill retired R3 at intake (abort, prompt_tokens 1,
    # output_len 0) and the decode timed out: no signature, one refusal. A gateway that still
    # bands R3 exposed is told why the engine does not confirm it.
    v = LOGS / "0.5.21"
    e = DuckDBEngine()
    sglang.ingest_logs(e, [v / "prefill-0.log", v / "decode-0.log"])
    e.execute(schema.REQUESTS_DDL)
    e.execute(
        "CREATE TABLE bands (request_id VARCHAR, prompt_tokens BIGINT, band VARCHAR, "
        "status INTEGER, exclusion_reason VARCHAR)"
    )
    e.execute(
        "INSERT INTO requests (request_id, ts, account_id, model, prompt_tokens, source, "
        "source_row, extra) VALUES ('g-r3', TIMESTAMPTZ '2026-04-14 11:56:40+00', 'a', 'm', "
        "850908, 'gw', 1, '{\"bootstrap_room\": \"7741029384756102938\"}')"
    )
    e.execute("INSERT INTO bands VALUES ('g-r3', 850908, 'exposed', 200, NULL)")
    result = evidence.engine_evidence(e, case)
    assert (result["engine_signature"], result["engine_refused"]) == (0, 1)
    assert result["engine_reconciliation"]["gateway_only"] == {
        "count": 1,
        "reasons": {
            "the engine refused it without a KV transfer (prefill retired it at intake, "
            "SGLang 0.5.21+): no exposure in the engine logs": {
                "count": 1,
                "request_ids": ["g-r3"],
                "bootstrap_rooms": ["7741029384756102938"],
            }
        },
    }


def test_a_one_token_prompt_on_both_legs_is_no_signature(tmp_path, case):
    st = (
        "[2026-08-27 01:00:0{s} TP0] ReqTimeStats(rid={rid}, bootstrap_room=77, input_len={n}, "
        "cached_input_len=0, output_len={o}, attempts=0, type={leg}): queue_duration=0.10ms"
    )
    p = tmp_path / "p.log"
    p.write_text(st.format(s=0, rid="p-1", n=1, o=1, leg="prefill") + "\n", encoding="utf-8")
    d = tmp_path / "d.log"
    d.write_text(st.format(s=5, rid="d-1", n=1, o=9, leg="decode") + "\n", encoding="utf-8")
    e = DuckDBEngine()
    sglang.ingest_logs(e, [p, d])
    # the decode decoded a one-token prompt too: the prefill did not skip anything
    assert evidence.engine_evidence(e, case)["engine_signature"] == 0
    d.write_text(st.format(s=5, rid="d-1", n=2, o=9, leg="decode") + "\n", encoding="utf-8")
    e = DuckDBEngine()
    sglang.ingest_logs(e, [p, d])
    assert evidence.engine_evidence(e, case)["engine_signature"] == 1
