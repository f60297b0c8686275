"""The SGLang fixtures of every release from 0.4.10 to 0.5.23 (tests/fixtures/sglang/VERSION/),
composed from SGLang's own format strings with their expected.json written by the composer
from the scenario (never by a parser; see the fixtures' README). The expectations below are
read from expected.json, or written here by hand where kv-forensics decides differently
from the research notes (span start, reject_from of a hybrid pool)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from forensics.analysis import capacity, evidence
from forensics.case import load_case
from forensics.engines import DuckDBEngine
from forensics.ingest import sglang

FIXTURES = Path(__file__).parent / "fixtures" / "sglang"
CASES = [
    "0.4.10.post2",
    "0.5.5",
    "0.5.12",
    "0.5.18",
    "0.5.18/request-log-only",
    "0.5.21",
    "0.5.23",
]
R3 = 7741029384756102938  # the 850,908-token request of every scenario

# expected.json's line kinds in kv-forensics' accounting
RECORDS = {
    "server_args",
    "kv_alloc",
    "kv_alloc_swa",
    "kv_alloc_draft",
    "kv_alloc_va_upper_bound",
    "kv_alloc_post_capture",
    "swa_pool_split",
    "swa_pool_summary",
    "capacity",
    "preflight",
    "time_stats",
    "receive",
    "finish",
    "input_length_reject",
    "transfer_failure",
}
DUPLICATES = {"http_error"}  # [http_server] Error: repeating the abort message
OTHER = {"memory_pool_end", "post_capture", "uvicorn", "waiting_timeout_warning", "other"}

# Hand-derived from the fixtures: a span starts at its start's first allocation line (the
# first `... KV Cache ...` line of the file, VA upper bound included), not at the
# max_total_num_tokens line expected.json calls "start".
STARTS = {
    "0.4.10.post2": ("2025-08-12 09:14:43", "2025-08-12 09:14:47"),
    "0.5.5": ("2025-11-10 16:03:21", "2025-11-10 16:03:25"),
    "0.5.12": ("2026-01-20 14:03:50.207", "2026-01-20 14:03:54.525"),
    "0.5.18": ("2026-03-03 08:31:32", "2026-03-03 08:31:36"),
    "0.5.18/request-log-only": ("2026-03-03 08:31:32", "2026-03-03 08:31:36"),
    "0.5.21": ("2026-04-14 11:45:48", "2026-04-14 11:45:52"),
    "0.5.23": ("2026-05-05 19:21:14", "2026-05-05 19:21:18.525"),
}
# reject_from per (prefill, decode): expected.json's smallest_rejected_input_len
# (min(context_len - 1, max_total_num_tokens - 1) - 5) for a plain pool. The 0.5.12 and
# 0.5.18 servers run a hybrid sliding-window pool: kv-forensics does not derive the limit
# there, it takes the one the engine printed (the prefill's rejection of R3: 681,274) and
# leaves the decode's NULL with a note.
REJECT_FROM = {
    "0.4.10.post2": (681274, 1048570),
    "0.5.5": (681274, 1048570),
    "0.5.12": (681274, None),
    "0.5.18": (681274, None),
    "0.5.18/request-log-only": (681274, None),
    "0.5.21": (681274, 1048570),
    "0.5.23": (681274, 1048570),
}


def _expected(case: str) -> dict:
    return json.loads((FIXTURES / case / "expected.json").read_text(encoding="utf-8"))


def _files(case: str) -> list[Path]:
    return sorted(p for p in (FIXTURES / case).rglob("*.log") if "request-log-only" not in
                  p.relative_to(FIXTURES / case).parts)  # fmt: skip


def _ingest(case: str) -> DuckDBEngine:
    engine = DuckDBEngine()
    sglang.ingest_logs(engine, _files(case))
    return engine


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.fixture(scope="module")
def ingested() -> dict[str, DuckDBEngine]:
    return {case: _ingest(case) for case in CASES}


@pytest.mark.parametrize("case", CASES)
def test_every_line_is_accounted_as_the_composer_recorded_it(case: str) -> None:
    engine = DuckDBEngine()
    stats = {
        Path(s.path).relative_to(FIXTURES / case).as_posix(): s
        for s in sglang.ingest_logs(engine, _files(case))
    }
    for name, spec in _expected(case)["files"].items():
        s = stats[name]
        if "lines_by_kind" not in spec:  # a metrics export: one record a line
            assert (s.rows_read, s.rows_loaded, s.quarantined) == (spec["records"],) * 2 + (0,)
            continue
        kinds = spec["lines_by_kind"]
        assert set(kinds) <= RECORDS | DUPLICATES | OTHER, name
        records = sum(n for k, n in kinds.items() if k in RECORDS)
        duplicates = sum(n for k, n in kinds.items() if k in DUPLICATES)
        other = sum(n for k, n in kinds.items() if k in OTHER)
        assert (s.rows_read, s.rows_loaded, s.duplicates, s.quarantined) == (
            records + duplicates,
            records,
            duplicates,
            0,
        ), name
        assert s.note == f"lines={spec['total_lines']} other={other}", name


@pytest.mark.parametrize("case", CASES)
def test_one_span_per_node_with_the_pool_role_and_context(ingested, case: str) -> None:
    files = {k: v for k, v in _expected(case)["files"].items() if "capacity_spans" in v}
    want = sorted(
        (
            spec["node"],
            spec["role"],
            span["max_total_num_tokens"],
            span["context_len"],
        )
        for spec in files.values()
        for span in spec["capacity_spans"]
    )
    got = ingested[case].rows(
        "SELECT node, role, tokens, context_len FROM engine_capacity ORDER BY node"
    )
    assert sorted(got) == want


@pytest.mark.parametrize("case", CASES)
def test_a_span_starts_at_its_first_allocation_line(ingested, case: str) -> None:
    got = dict(ingested[case].rows("SELECT role, start_ts FROM engine_capacity"))
    prefill, decode = STARTS[case]
    assert (got["prefill"], got["decode"]) == (_at(prefill), _at(decode))


@pytest.mark.parametrize("case", CASES)
def test_reject_from_is_the_admission_limit(ingested, case: str) -> None:
    got = dict(ingested[case].rows("SELECT role, reject_from FROM engine_capacity"))
    assert (got["prefill"], got["decode"]) == REJECT_FROM[case]
    plain = [
        span["smallest_rejected_input_len"]
        for spec in _expected(case)["files"].values()
        for span in spec.get("capacity_spans", [])
        if spec["role"] == "prefill"
    ]
    assert plain == [got["prefill"]]


def test_a_hybrid_pool_without_a_printed_limit_says_why(ingested) -> None:
    (note,) = ingested["0.5.12"].rows("SELECT note FROM engine_capacity WHERE role = 'decode'")
    assert note[0].startswith("hybrid sliding-window pool: ")


@pytest.mark.parametrize("case", CASES)
def test_request_lines_as_the_composer_wrote_them(ingested, case: str) -> None:
    engine = ingested[case]
    for name, spec in _expected(case)["files"].items():
        if "request_lines" not in spec:
            continue
        want, want_aborts = [], []
        for r in spec["request_lines"]:
            t = _at(r["time"])
            if r["kind"] == "receive":
                want.append(("receive", t, r["rid"], r["bootstrap_room"], None, None, None))
            elif r["kind"] == "time_stats":
                want.append(
                    ("time_stats", t, r["rid"], r["bootstrap_room"], r["input_len"],
                     r["output_len"], None)
                )  # fmt: skip
            elif r["kind"] == "finish":
                want.append(
                    ("finish", t, r["rid"], r["bootstrap_room"], r.get("prompt_tokens"),
                     r.get("completion_tokens"), r["finish_reason_type"])
                )  # fmt: skip
            elif r["kind"] == "input_length_reject":
                want_aborts.append(("input_length", t, r["rid"], r["input_len"], r["limit"]))
            elif r["kind"] == "transfer_failure":
                want_aborts.append(("transfer_failed", t, r["rid"], None, None))
            else:
                raise AssertionError(r["kind"])
        source = str(FIXTURES / case / name)
        got = engine.rows(
            "SELECT kind, date_trunc('second', ts), rid, bootstrap_room, input_len, output_len, "
            "finish_reason FROM engine_requests WHERE source = $s ORDER BY source_row",
            s=source,
        )
        got_aborts = engine.rows(
            "SELECT kind, date_trunc('second', ts), rid, requested_tokens, max_tokens "
            "FROM engine_aborts WHERE source = $s ORDER BY source_row",
            s=source,
        )
        assert got == want, name
        assert got_aborts == want_aborts, name


@pytest.mark.parametrize("case", CASES)
def test_rejections_join_their_bootstrap_room(ingested, case: str) -> None:
    want = sorted(
        (r["rid"], r["input_len"], r["limit"], r["bootstrap_room"])
        for r in _expected(case)["rejections"]
    )
    got = ingested[case].rows(
        "SELECT rid, requested_tokens, max_tokens, bootstrap_room FROM engine_aborts "
        "WHERE kind = 'input_length' ORDER BY rid"
    )
    assert got == want


@pytest.fixture
def case_file(tmp_path):
    p = tmp_path / "incident.toml"
    p.write_text(
        'name = "t"\nmodels = ["m"]\ncontext_window = 1048576\n[window]\n'
        'start = "2025-01-01T00:00:00Z"\nend = "2027-01-01T00:00:00Z"\n',
        encoding="utf-8",
    )
    return load_case(p)


@pytest.mark.parametrize("case", CASES)
def test_the_signature_is_found_up_to_0_5_18_and_never_after(ingested, case_file, case) -> None:
    engine = ingested[case]
    result = evidence.engine_evidence(engine, case_file)
    rooms = [r for (r,) in engine.rows("SELECT bootstrap_room FROM engine_signature")]
    assert rooms == _expected(case)["bug_signature_rooms"]
    assert result["engine_signature"] == len(rooms)
    # from 0.5.21 the prefill retires R3 at intake: a refusal without exposure
    fixed = case in ("0.5.21", "0.5.23")
    assert result["engine_refused"] == (1 if fixed else 0)
    refused = engine.rows("SELECT bootstrap_room FROM engine_refused")
    assert refused == ([(R3,)] if fixed else [])


def test_request_logs_alone_show_the_signature(ingested, case_file) -> None:
    # --log-requests only: no ReqTimeStats; the prefill Finish of R3 reports prompt_tokens 1
    # (finish length), the decode Finish 850,908 prompt tokens and 256 completion tokens
    engine = ingested["0.5.18/request-log-only"]
    assert engine.scalar("SELECT count(*) FROM engine_requests WHERE kind = 'time_stats'") == 0
    evidence.engine_evidence(engine, case_file)
    assert engine.rows(
        "SELECT bootstrap_room, prefill_rid, requested_tokens, decode_rid, output_len "
        "FROM engine_signature"
    ) == [(R3, "f4b07e3a9c2d48e1a6d5c0b8e3f2a917", 850908, "57f2c9e0a3b64d1e8c7a5b2d0e9f4c31", 256)]


@pytest.mark.parametrize("version", ["0.5.12", "0.5.23"])
def test_the_metrics_export_alone_carries_the_evidence(case_file, version: str) -> None:
    exp = _expected(version)
    engine = DuckDBEngine()
    metrics = sorted((FIXTURES / version / "metrics").rglob("*.log"))
    stats = sglang.ingest_logs(engine, metrics, role=None)
    assert [s.rows_loaded for s in stats] == [3, 3]
    # each record is the Finish line of the same request, from the request_parameters string
    for node in ("prefill-0", "decode-0"):
        want = sorted(
            (r["rid"], r["bootstrap_room"], r["prompt_tokens"], r["completion_tokens"],
             r["finish_reason_type"])
            for r in exp["files"][f"{node}.log"]["request_lines"]
            if r["kind"] == "finish"
        )  # fmt: skip
        got = engine.rows(
            "SELECT rid, bootstrap_room, input_len, output_len, finish_reason "
            "FROM engine_requests WHERE node = $n ORDER BY rid",
            n=node,
        )
        assert got == want
    # the export names no role: alone, the signature needs the roles given
    engine = DuckDBEngine()
    for node, role in (("prefill-0", "prefill"), ("decode-0", "decode")):
        sglang.ingest_logs(
            engine, sorted((FIXTURES / version / "metrics" / node).glob("*")), role=role
        )
    result = evidence.engine_evidence(engine, case_file)
    assert result["engine_signature"] == len(exp["bug_signature_rooms"])


@pytest.mark.parametrize("case", CASES)
def test_the_engines_own_preflight_warning_is_a_finding(ingested, case: str) -> None:
    findings = capacity.preflight(ingested[case], None)
    # every prefill pool (681,280) is below its context_len (1,048,576); the decode's is not
    assert [(f["node"], f["tokens"], f["danger_band"]) for f in findings] == [
        ("prefill-0", 681280, {"from": 681274, "to": 1048575})
    ]
    warned = [w for (w,) in ingested[case].rows("SELECT engine_warned FROM engine_capacity")]
    # only 0.5.23 logs `KV pool holds N tokens, fewer than --context-length C` (both ranks)
    assert findings[0]["engine_warned"] is (case == "0.5.23")
    assert sum(warned) == len(_expected(case)["preflight"])
