"""Every vLLM fixture version (tests/fixtures/vllm/<version>/) read end to end: the capacity
span, refusals, KV transfer faults and pool usage its README derives by hand from the
scenario (expected.json holds those figures; it is written from the scenario's constants,
never by reading the logs back)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from forensics import ingest
from forensics.engines import DuckDBEngine

FIXTURES = Path(__file__).parent / "fixtures" / "vllm"
VERSIONS = sorted(p.name for p in FIXTURES.iterdir() if (p / "expected.json").is_file())


def _load(tmp_path: Path, version: str) -> tuple[DuckDBEngine, dict]:
    expected = json.loads((FIXTURES / version / "expected.json").read_text())
    # the 0.6.6.post1 run starts on 12-31 (2025) and crosses into 2026
    year = 2025 if version.startswith("0.6") else 2026
    eng = DuckDBEngine(tmp_path / "case.duckdb")
    files = [FIXTURES / version / name for name in expected["files"]]
    ingest.ingest_into(eng, files, profile="vllm", clock=ingest.Clock(year=year))
    return eng, expected


def test_the_eleven_format_changes_have_a_fixture() -> None:
    assert (
        sorted(
            [
                "0.6.6.post1",
                "0.7.3",
                "0.8.5",
                "0.9.2",
                "0.11.0",
                "0.17.1",
                "0.22.0",
                "0.28.0",
                "0.30.0",
                "0.31.0",
                "0.34.0",
            ]
        )
        == VERSIONS
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_one_capacity_span_per_node_with_the_pool_in_force(tmp_path: Path, version: str) -> None:
    """Prefill: 27,000 blocks x 16 = 432,000 (V0), else the smallest worker's 431,984
    tokens; decode: 53,900 x 16 = 862,400, printed once per data-parallel rank."""
    eng, expected = _load(tmp_path, version)
    with eng:
        rows = eng.rows("SELECT node, role, tokens, context_len, start_ts FROM engine_capacity")
    want = []
    for f in expected["files"].values():
        start = datetime.strptime(f["span"]["start"], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
        want.append((f["node"], f["role"], f["span"]["tokens"], f["span"]["context_len"], start))
    got = [(n, r, t, c, s.astimezone(UTC)) for n, r, t, c, s in rows]
    assert sorted(got) == sorted(want)


@pytest.mark.parametrize("version", VERSIONS)
def test_refusals_faults_and_usage_are_loaded(tmp_path: Path, version: str) -> None:
    eng, expected = _load(tmp_path, version)
    with eng:
        aborts = eng.rows(
            "SELECT node, rid, requested_tokens, max_tokens, kind FROM engine_aborts ORDER BY node"
        )
        faults = eng.rows("SELECT node, rid, kind, lines FROM engine_kv_faults ORDER BY kind")
        usage = eng.rows("SELECT node, usage_pct FROM engine_pool_usage ORDER BY node")
    want_aborts = [
        (f["node"], None, r["requested_tokens"], r["max_tokens"], "rejected")
        for f in expected["files"].values()
        for r in f["refusals"]
    ]
    want_faults = [
        (f["node"], k["rid"], k["kind"], k["lines"])
        for f in expected["files"].values()
        for k in f["kv_faults"]
    ]
    want_usage = sorted((f["node"], u) for f in expected["files"].values() for u in f["usage_pct"])
    assert aborts == sorted(want_aborts)
    assert faults == sorted(want_faults, key=lambda r: r[2])
    assert usage == want_usage


def test_internal_ids_from_0_17_are_reduced_to_the_external_id(tmp_path: Path) -> None:
    """0.17+ prints `<external id>-<8 hex>`: the fixture's R3 is chatcmpl-c07d5e91f6."""
    eng, _ = _load(tmp_path, "0.34.0")
    with eng:
        rows = eng.rows("SELECT DISTINCT rid, ext_rid FROM engine_kv_faults")
    assert rows == [("chatcmpl-c07d5e91f6-b5e0d2a4", "chatcmpl-c07d5e91f6")]
