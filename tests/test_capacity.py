"""`forensics capacity`: the timeline from engine logs, its TOML, and pre-flight findings."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from forensics import pipeline
from forensics.case import Capacity, load_case
from forensics.cli import app
from forensics.errors import InputError
from forensics.render.capacity_entries import _glob_literal

LOGS = Path(__file__).parent / "fixtures" / "sglang"
PREFILL, DECODE = str(LOGS / "prefill-0.log"), str(LOGS / "decode-0.log")

CASE_HEAD = """name = "t"
models = ["m"]
context_window = 1048576
[window]
start = "2026-08-27T00:00:00Z"
end = "2026-09-10T00:00:00Z"

"""


def test_derive_gives_one_entry_per_server_start(tmp_path):
    result = pipeline.capacity([PREFILL, DECODE], tmp_path / "c.duckdb")
    got = [
        (e["role"], e["node"], e["tokens"], e["reject_from"], e["start"], e["end"])
        for e in result.entries
    ]
    # reject_from = min(context_len - 1, tokens - 1) - 5 with context_len 1,048,576
    assert got == [
        ("prefill", "prefill-0", 681280, 681274, "2026-08-27T00:00:30Z", "2026-09-09T14:52:00Z"),
        ("prefill", "prefill-0", 2040000, 1048570, "2026-09-09T14:52:00Z", None),
        ("decode", "decode-0", 1500000, 1048570, "2026-08-27T00:00:40Z", None),
    ]


def test_toml_entries_load_into_a_case_file(tmp_path):
    out = tmp_path / "capacity.toml"
    pipeline.capacity([PREFILL, DECODE], tmp_path / "c.duckdb", out=out)
    case_file = tmp_path / "incident.toml"
    case_file.write_text(CASE_HEAD + out.read_text(encoding="utf-8"), encoding="utf-8")
    case = load_case(case_file)
    assert case.capacity == (
        Capacity(
            "prefill",
            "prefill-0",
            681280,
            datetime(2026, 8, 27, 0, 0, 30, tzinfo=UTC),
            datetime(2026, 9, 9, 14, 52, tzinfo=UTC),
            reject_from=681274,
        ),
        Capacity(
            "prefill",
            "prefill-0",
            2040000,
            datetime(2026, 9, 9, 14, 52, tzinfo=UTC),
            reject_from=1048570,
        ),
        Capacity(
            "decode",
            "decode-0",
            1500000,
            datetime(2026, 8, 27, 0, 0, 40, tzinfo=UTC),
            reject_from=1048570,
        ),
    )


def test_an_entry_without_reject_from_says_why_in_a_comment(tmp_path):
    out = tmp_path / "capacity.toml"
    pipeline.capacity([str(LOGS / "edge.log")], tmp_path / "c.duckdb", out=out)
    assert out.read_text(encoding="utf-8") == (
        "[[capacity]]\n"
        'role = "decode"\n'
        'nodes = "edge"\n'
        "tokens = 4096\n"
        "# server_args dcp_size=2: the admission limit is not min(context_len - 1, tokens - 1) "
        '- 5 here, so reject_from is not derived; read it from an "exceeds the maximum '
        'allowed length (M tokens)" line (reject_from = M)\n'
        'start = "2026-05-05T19:21:18Z"\n'
    )


def test_node_with_glob_characters_is_written_as_an_exact_match():
    assert _glob_literal("pf[1]*?") == "pf[[]1][*][?]"


@pytest.mark.parametrize("node", ["pf\\1", "a*b", "a?b", "x[1]", "a]b", "p\\[x]"])
def test_a_generated_entry_matches_its_own_node_in_the_case_and_in_sql(node, tmp_path):
    from forensics.engines import DuckDBEngine

    pattern = _glob_literal(node)
    t0 = datetime(2026, 8, 27, tzinfo=UTC)
    assert Capacity("prefill", pattern, 10, t0).matches(node, t0)
    with DuckDBEngine() as engine:  # bands.sql matches nodes with GLOB
        assert engine.scalar("SELECT $n GLOB $p", n=node, p=pattern) is True
        assert engine.scalar("SELECT $n GLOB $p", n=node + "x", p=pattern) is False


def test_preflight_uses_logged_context_len_without_option(tmp_path):
    result = pipeline.capacity([PREFILL, DECODE], tmp_path / "c.duckdb")
    # the scheduler refuses from reject_from (681,274); the tokenizer from context_len
    # (1,048,576): prompts of 681,274 .. 1,048,575 pass one and not the other
    assert result.preflight == [
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


def test_preflight_option_window_flags_every_smaller_pool(tmp_path):
    result = pipeline.capacity([PREFILL, DECODE], tmp_path / "c.duckdb", context_window=2000000)
    got = [(f["node"], f["tokens"], f["danger_band"]) for f in result.preflight]
    # the band ends below the logged context_len (1,048,576): the tokenizer refuses there
    assert got == [
        ("prefill-0", 681280, {"from": 681274, "to": 1048575}),
        ("decode-0", 1500000, {"from": 1048570, "to": 1048575}),
    ]


def test_preflight_without_reject_from_starts_above_the_pool(tmp_path):
    result = pipeline.capacity([str(LOGS / "edge.log")], tmp_path / "c.duckdb")
    # dcp_size=2: no reject_from, so the band starts at tokens + 1; the engine warned itself
    assert [(f["danger_band"], f["engine_warned"]) for f in result.preflight] == [
        ({"from": 4097, "to": 8191}, True)
    ]


def test_logs_without_capacity_lines_are_refused(tmp_path):
    log = tmp_path / "empty.log"
    log.write_text("[2026-08-27 00:00:00 TP0] hello\n", encoding="utf-8")
    with pytest.raises(InputError, match="no capacity line"):
        pipeline.capacity([str(log)], tmp_path / "c.duckdb", role="prefill")


def test_node_without_role_is_refused(tmp_path):
    log = tmp_path / "n.log"
    log.write_text(
        "[2026-08-27 00:00:00 TP0] KV Cache is allocated. #tokens: 10, KV size: 1.00 GB\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError, match="cannot tell the role"):
        pipeline.capacity([str(log)], tmp_path / "c.duckdb")


def test_cli_prints_timeline_and_preflight_and_writes_toml(tmp_path, runner):
    out = tmp_path / "cap.toml"
    res = runner.invoke(
        app,
        [
            "capacity",
            PREFILL,
            DECODE,
            "--db",
            str(tmp_path / "c.duckdb"),
            "--out",
            str(out),
            "--context-window",
            "1048576",
        ],
    )
    assert res.exit_code == 0, res.output
    assert (
        "prefill  prefill-0  681280   681274       1048576      2026-08-27T00:00:30Z" in res.output
    )
    assert "pre-flight: 1 span(s) with pool < context window" in res.output
    assert "prompts of 681274..1048575 tokens pass the tokenizer but the scheduler" in res.output
    text = out.read_text(encoding="utf-8")
    assert text.count("[[capacity]]") == 3
    assert text.count("reject_from = ") == 3


def test_cli_missing_log_is_one_line_error(tmp_path, runner):
    res = runner.invoke(app, ["capacity", str(tmp_path / "nope.log"), "--db", str(tmp_path / "c")])
    assert res.exit_code == 2
    assert "file not found" in res.output


BUNDLED = Path(__file__).resolve().parent.parent / "sample_logs" / "glm53"
MODEL_53 = "@cf/zai-org/glm-5.3"


def test_capacity_from_the_bundled_engine_logs_equals_the_case_file(tmp_path, runner):
    out = tmp_path / "capacity.toml"
    res = runner.invoke(
        app,
        [
            "capacity",
            str(BUNDLED / "engine"),
            "--db",
            str(tmp_path / "c.duckdb"),
            "--context-window",
            "1048576",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    derived = _case_with(tmp_path, out.read_text(encoding="utf-8")).capacity
    # the case file writes GLM-5.3's pools with node globs: every derived span (exact node)
    # holds the tokens, start and end of the case entry for its role and time (GLM-5.2's own
    # pool, on nodes with no engine log here, is the case's alone)
    case = [c for c in load_case(BUNDLED / "incident.toml").capacity if c.applies_to(MODEL_53)]
    got = sorted({(c.role, c.tokens, c.reject_from, c.start, c.end) for c in derived}, key=str)
    want = sorted({(c.role, c.tokens, c.reject_from, c.start, c.end) for c in case}, key=str)
    assert got == want
    assert len(derived) == 12  # 4 prefill nodes x 2 starts + 4 decode nodes x 1 start
    for c in derived:
        (match,) = [e for e in case if e.role == c.role and e.matches(c.nodes, c.start)]
        assert (match.tokens, match.reject_from) == (c.tokens, c.reject_from)
    assert "pre-flight: 4 span(s) with pool < context window" in res.output


def _case_with(folder: Path, capacity_toml: str):
    p = folder / "derived.toml"
    p.write_text(CASE_HEAD + capacity_toml, encoding="utf-8")
    return load_case(p)


def test_a_pool_below_one_page_is_refused_naming_its_lines(tmp_path):
    # SGLang sizes a pool in whole pages (tokens // page_size * page_size): 32 tokens cannot
    # be the pool of a server whose server_args say page_size=64
    log = tmp_path / "p.log"
    log.write_text(
        "[2026-08-27 00:00:00] server_args=ServerArgs(model_path='m', context_length=4096, "
        "page_size=64, disaggregation_mode='prefill')\n"
        "[2026-08-27 00:00:20 TP0] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 32, "
        "K size: 0.01 GB, V size: 0.01 GB\n"
        "[2026-08-27 00:00:30 TP0] max_total_num_tokens=32, chunked_prefill_size=8192, "
        "max_prefill_tokens=16384, max_running_requests=8, context_len=4096, "
        "available_gpu_mem=1.00 GB\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError) as info:
        pipeline.capacity([str(log)], tmp_path / "c.duckdb")
    assert info.value.what.startswith(
        f"engine logs: p start at 2026-08-27T00:00:20Z: a pool of 32 tokens ({log}:2) is less "
        f"than one page (page_size=64, {log}:1)"
    )


def test_logs_whose_capacity_lines_were_all_quarantined_are_refused_naming_them(tmp_path):
    log = tmp_path / "p.log"
    log.write_text(
        "[2026-08-27 00:00:30 TP0] max_total_num_tokens=0, chunked_prefill_size=8192, "
        "max_prefill_tokens=16384, max_running_requests=8, context_len=3, "
        "available_gpu_mem=1.00 GB\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError) as info:
        pipeline.capacity([str(log)], tmp_path / "c.duckdb", role="prefill")
    assert info.value.what == (
        "no capacity line (KV Cache is allocated / max_total_num_tokens, KV cache size, "
        "# GPU blocks, KV cache primary pool) in the logs that "
        f"could be read (engine logs: {log}:1: startup line quarantined: impossible figure: a "
        "KV pool of 0 tokens (SGLang does not start with one))"
    )
