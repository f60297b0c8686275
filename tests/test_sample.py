"""The bundled GLM-5.3 case and `forensics sample`: their true figures, recounted here.

Every count below is recounted from the written files with plain Python and Polars,
independently of the analysis SQL and of the generator's own bookkeeping.
"""

from __future__ import annotations

import gzip
import json
import re
import tomllib
from datetime import datetime
from pathlib import Path

import polars as pl
import pytest

from forensics.errors import InputError
from forensics.synth import sample

BUNDLED = Path(__file__).resolve().parent.parent / "sample_logs" / "glm53"


def _records_jsonl(path: Path) -> tuple[list[dict], dict[str, int]]:
    """Parsed records once each, and the shipper-fault tallies, from a gzip JSONL log."""
    seen: set[bytes] = set()
    records, dup, torn, read = [], 0, 0, 0
    with gzip.open(path, "rb") as f:
        for line in f:
            read += 1
            line = line.rstrip(b"\n")
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                torn += 1
                continue
            if line in seen:
                dup += 1
                continue
            seen.add(line)
            records.append(rec)
    return records, {"rows_read": read, "duplicates": dup, "quarantined": torn}


def _frame(records: list[dict]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "id": [r["id"] for r in records],
            "ts": [datetime.fromisoformat(r["timestamp"]) for r in records],
            "account_id": [r["account"]["id"] for r in records],
            "model": [r["model"] for r in records],
            "prompt": [r["usage"]["prompt_tokens"] for r in records],
            "status": [r["status"] for r in records],
            "prefill": [(r.get("route") or {}).get("prefill") for r in records],
        },
        schema_overrides={"ts": pl.Datetime("us", "UTC"), "prefill": pl.String},
    )


ENGINE_RECORD_MARKS = (
    "] server_args=ServerArgs(",
    "] KV Cache is allocated. dtype: ",
    "] max_total_num_tokens=",
    "] ReqTimeStats(",
    "] Input length (",
    "] [http_server] Error: The input (",
)


def _engine_records(case_dir: Path) -> int | None:
    """Evidence lines in the case's engine/*.log.gz (None without engine logs)."""
    folder = case_dir / "engine"
    if not folder.is_dir():
        return None
    n = 0
    for log in sorted(folder.glob("*.log.gz")):
        with gzip.open(log, "rt", encoding="utf-8") as f:
            n += sum(1 for line in f if any(m in line for m in ENGINE_RECORD_MARKS))
    return n


def _load(case_dir: Path) -> tuple[pl.DataFrame, dict[str, int]]:
    log = case_dir / "gateway.jsonl.gz"
    if log.exists():
        records, faults = _records_jsonl(log)
        return _frame(records), {"format": "jsonl", **faults}
    raw = pl.read_parquet(case_dir / "gateway.parquet")
    frame = raw.select(
        "id",
        pl.col("timestamp").str.to_datetime(time_zone="UTC").alias("ts"),
        pl.col("account").struct.field("id").alias("account_id"),
        "model",
        pl.col("usage").struct.field("prompt_tokens").alias("prompt"),
        "status",
    )
    unique = raw.unique(maintain_order=True)
    faults = {
        "format": "parquet",
        "rows_read": raw.height,
        "duplicates": raw.height - unique.height,
        "quarantined": 0,
    }
    return frame.unique(maintain_order=True), faults


def _recount(case_dir: Path) -> dict:
    """Bands, exposure and exclusions as docs/decisions.md defines them, from the case's files."""
    case = tomllib.loads((case_dir / "incident.toml").read_text())
    frame, faults = _load(case_dir)
    excluded: dict[str, str] = {}
    for ex in case["exclude"]:
        ids = list(ex.get("accounts", []))
        if "file" in ex:
            text = (case_dir / ex["file"]).read_text().splitlines()
            ids += [x.strip() for x in text if x.strip() and not x.startswith("#")]
        excluded.update(dict.fromkeys(ids, ex["reason"]))
    start = datetime.fromisoformat(case["window"]["start"])
    end = datetime.fromisoformat(case["window"]["end"])
    # the smallest prompt over the capacity in force: reject_from where the entry gives it
    (over_from,) = [
        c.get("reject_from", c["tokens"] + 1)
        for c in case["capacity"]
        if c["role"] == "prefill" and c.get("end") == case["window"]["end"]
    ]
    window = case["context_window"]
    rows = frame.filter(
        pl.col("model").is_in(case["models"]), pl.col("ts") >= start, pl.col("ts") < end
    ).with_columns(
        reason=pl.col("account_id").replace_strict(excluded, default=None, return_dtype=pl.String)
    )
    over = (pl.col("prompt") >= over_from) & (pl.col("prompt") <= window)
    ok = pl.col("status").is_in(case["success_status"])
    band = (
        pl.when(pl.col("prompt") > window)
        .then(pl.lit("over_context"))
        .when(pl.col("prompt") < over_from)
        .then(pl.lit("fits"))
        .when(over & ok & pl.col("reason").is_null())
        .then(pl.lit("exposed"))
        .when(over & ok)
        .then(pl.lit("excluded"))
        .otherwise(pl.lit("over_capacity_failed"))
    )
    rows = rows.with_columns(band=band)
    counts = dict(rows.group_by("band").len().iter_rows())
    exposed = rows.filter(pl.col("band") == "exposed")
    by_reason = dict(
        rows.filter(pl.col("band") == "excluded")
        .group_by("reason")
        .len()
        .sort("reason")
        .iter_rows()
    )
    return {
        "exposure_count": exposed.height,
        "affected_accounts": exposed["account_id"].n_unique(),
        "affected_account_ids": sorted(exposed["account_id"].unique().to_list()),
        "bands": counts,
        "excluded_by_reason": by_reason,
        "loaded": frame.height,
        "engine_records": _engine_records(case_dir),
        **faults,
    }


@pytest.fixture(scope="module")
def bundled() -> dict:
    return _recount(BUNDLED)


def test_bundled_case_has_155_exposed_responses(bundled: dict) -> None:
    assert bundled["exposure_count"] == 155


def test_bundled_case_excludes_operator_tests_and_researcher(bundled: dict) -> None:
    # the researcher's 681,280-token step is over the admission limit (reject_from 681,274)
    assert bundled["excluded_by_reason"] == {"internal-test": 60, "security-researcher": 50}


def test_bundled_log_holds_a_few_duplicates_and_torn_lines(bundled: dict) -> None:
    assert (bundled["duplicates"], bundled["quarantined"]) == (4, 3)
    assert bundled["loaded"] == 72000


def test_bundled_truth_file_matches_the_recount(bundled: dict) -> None:
    truth = json.loads((BUNDLED / "truth.json").read_text())
    _assert_truth(truth, bundled)


def test_bundled_case_stays_small() -> None:
    total = sum(p.stat().st_size for p in BUNDLED.rglob("*") if p.is_file())
    assert total < 5_000_000


def test_bundled_case_regenerates_byte_identical(tmp_path: Path) -> None:
    result = sample.write_bundled(tmp_path)
    names = sorted(p.relative_to(tmp_path).as_posix() for p in result.files)
    on_disk = sorted(p.relative_to(BUNDLED).as_posix() for p in BUNDLED.rglob("*") if p.is_file())
    assert names == on_disk
    for name in names:
        assert (tmp_path / name).read_bytes() == (BUNDLED / name).read_bytes(), name


def test_bundled_case_lists_its_engine_logs_as_an_sglang_source() -> None:
    case = tomllib.loads((BUNDLED / "incident.toml").read_text())
    assert case["source"] == [
        {"path": "gateway.jsonl.gz", "mapping": "gateway.mapping.toml"},
        {"path": "engine", "profile": "sglang"},
    ]


def test_bundled_engine_logs_hold_one_file_per_node_and_their_records(bundled: dict) -> None:
    names = sorted(p.name for p in (BUNDLED / "engine").iterdir())
    assert names == [f"decode-b{i}.log.gz" for i in range(1, 5)] + [
        f"prefill-a{i}.log.gz" for i in range(1, 5)
    ]
    # every line is an evidence record (SGLang 0.5.18 spellings): 120 startup lines (prefill:
    # 4 nodes x 2 starts x (server_args + 8 KV lines + 1 capacity line); decode: 4 x 10),
    # 2,665 prefill ReqTimeStats, 274 intake rejections, 2,665 decode ReqTimeStats
    assert bundled["engine_records"] == 5724


# The lines SGLang 0.5.18 writes (format strings of its wheel: engine.py L1095 server_args,
# memory_pool.py L1693-1694 MLA pool, scheduler.py L1092-1100 capacity, utils.py L193-223
# intake rejection, schedule_batch.py L1792-1806 ReqTimeStats + req_time_stats.py durations,
# http_server.py L922 tokenizer refusal), with a rank prefix in 0.5.18's order where it has one
_SGLANG_0_5_18 = [
    re.compile(p)
    for p in (
        r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] server_args=ServerArgs\(model_path='[^']*', .*\)$",
        r"^\[[\d:\- ]{19}(?: DP\d)? TP\d(?: EP\d)?\] KV Cache is allocated\. "
        r"dtype: torch\.bfloat16, #tokens: \d+, KV size: \d+\.\d\d GB$",
        r"^\[[\d:\- ]{19}(?: DP0)? TP0(?: EP0)?\] max_total_num_tokens=\d+, "
        r"chunked_prefill_size=-?\d+, max_prefill_tokens=\d+, max_running_requests=\d+, "
        r"context_len=\d+, available_gpu_mem=\d+\.\d\d GB$",
        r"^\[[\d:\- ]{19}(?: DP0)? TP0(?: EP0)?\] Input length \(\d+ tokens\) exceeds the maximum "
        r"allowed length \(\d+ tokens\)\. Use a shorter input or enable --allow-auto-truncate\., "
        r"self\.rid='[0-9a-z]+'$",
        r"^\[[\d:\- ]{19}(?: DP\d)? TP\d(?: EP\d)?\] ReqTimeStats\(rid=[0-9a-z]+, "
        r"bootstrap_room=\d+, input_len=\d+, cached_input_len=\d+, output_len=\d+, attempts=0, "
        r"type=prefill\): "
        r"bootstrap_duration=\d+\.\d\dms, queue_duration=\d+\.\d\dms, "
        r"forward_duration=\d+\.\d\dms, entry_time=\d+\.\d{3}, transfer_speed=\d+\.\d\d GB/s, "
        r"transfer_total=\d+\.\d\d MB$",
        r"^\[[\d:\- ]{19} TP0\] ReqTimeStats\(rid=[0-9a-z]+, bootstrap_room=\d+, input_len=\d+, "
        r"cached_input_len=\d+, output_len=\d+, attempts=0, type=decode\): "
        r"bootstrap_duration=\d+\.\d\dms, alloc_wait_duration=\d+\.\d\dms, "
        r"transfer_duration=\d+\.\d\dms, queue_duration=\d+\.\d\dms, "
        r"forward_duration=\d+\.\d\dms, entry_time=\d+\.\d{3}$",
        r"^\[[\d:\- ]{19}\] \[http_server\] Error: The input \(\d+ tokens\) is longer than "
        r"the model's context length \(\d+ tokens\)\.$",
    )
]


def test_bundled_engine_logs_are_what_sglang_0_5_18_writes() -> None:
    placeholders = rejections = 0
    for log in sorted((BUNDLED / "engine").glob("*.log.gz")):
        with gzip.open(log, "rt", encoding="utf-8") as f:
            lines = f.read().splitlines()
        for line in lines:
            assert any(p.match(line) for p in _SGLANG_0_5_18), (log.name, line)
        # the scheduler refuses from min(1048575, 681279) - 5 = 681,274 before the restart,
        # and every refusal is followed by the placeholder the prefill bootstraps (input_len=1)
        for i, line in enumerate(lines):
            if "] Input length (" in line:
                rejections += 1
                n = int(line.split("Input length (")[1].split(" ")[0])
                assert n >= 681274 and "maximum allowed length (681274 tokens)" in line
                assert "input_len=1, cached_input_len=0, output_len=1" in lines[i + 1]
            placeholders += "input_len=1, cached_input_len=0, output_len=1, attempts=0, " in line
    assert rejections == placeholders == 274


def test_engine_logs_need_a_jsonl_gateway_log(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="engine logs"):
        sample.generate(tmp_path, requests=8000, seed=1, fmt="parquet", engine_logs=True)


def _assert_truth(truth: dict, recount: dict) -> None:
    assert truth["exposure_count"] == recount["exposure_count"]
    assert truth["affected_accounts"] == recount["affected_accounts"]
    assert truth["affected_account_ids"] == recount["affected_account_ids"]
    assert {k: v for k, v in truth["bands"].items() if v} == recount["bands"]
    assert truth["excluded_by_reason"] == recount["excluded_by_reason"]
    by_format = {
        recount["format"]: {
            "rows_read": recount["rows_read"],
            "rows_loaded": recount["loaded"],
            "duplicates": recount["duplicates"],
            "quarantined": recount["quarantined"],
        }
    }
    n = recount["engine_records"]
    if n is not None:
        by_format["sglang"] = {"rows_read": n, "rows_loaded": n, "duplicates": 0, "quarantined": 0}
    assert truth["ingest_by_format"] == by_format
    keys = ("rows_read", "rows_loaded", "duplicates", "quarantined")
    assert truth["ingest"] == {k: sum(f[k] for f in by_format.values()) for k in keys}


@pytest.mark.parametrize(
    ("requests", "seed", "fmt"), [(20_000, 1, "parquet"), (30_000, 7, "jsonl")]
)
def test_generated_truth_equals_an_independent_recount(
    tmp_path: Path, requests: int, seed: int, fmt: str
) -> None:
    result = sample.generate(tmp_path, requests=requests, seed=seed, fmt=fmt)
    truth = json.loads((tmp_path / "truth.json").read_text())
    assert truth == result.truth
    _assert_truth(truth, _recount(tmp_path))


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_generator_is_byte_identical_for_a_seed(tmp_path: Path, fmt: str) -> None:
    a = sample.generate(tmp_path / "a", requests=8000, seed=3, fmt=fmt)
    b = sample.generate(tmp_path / "b", requests=8000, seed=3, fmt=fmt)
    assert [p.name for p in a.files] == [p.name for p in b.files]
    for pa, pb in zip(a.files, b.files, strict=True):
        assert pa.read_bytes() == pb.read_bytes(), pa.name


def test_generator_output_does_not_depend_on_chunk_size(tmp_path: Path) -> None:
    a = sample.generate(tmp_path / "a", requests=8000, seed=4, fmt="jsonl", chunk_rows=500)
    b = sample.generate(tmp_path / "b", requests=8000, seed=4, fmt="jsonl")
    assert gzip.decompress(a.files[0].read_bytes()) == gzip.decompress(b.files[0].read_bytes())


def test_generator_scales_the_exposure_with_size(tmp_path: Path) -> None:
    result = sample.generate(tmp_path, requests=36_000, seed=2, fmt="parquet")
    assert result.truth["exposure_count"] == 78  # round(155 * 36000 / 72000)


def test_generator_refuses_an_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown format"):
        sample.generate(tmp_path, requests=8000, seed=1, fmt="xml")


def test_sample_command_prints_the_true_count(tmp_path: Path, runner) -> None:
    from forensics.cli import app

    res = runner.invoke(
        app, ["sample", "--out", str(tmp_path), "--requests", "10000", "--seed", "5"]
    )
    assert res.exit_code == 0, res.output
    truth = json.loads((tmp_path / "truth.json").read_text())
    assert f"exposure_count: {truth['exposure_count']}" in res.output
    assert (tmp_path / "gateway.parquet").exists()


# --- the analysis finds the true figures ----------------------------------------------------


def _assert_run_matches(summary: dict, truth: dict) -> None:
    assert summary["exposure_count"] == truth["exposure_count"]
    assert summary["affected_accounts"] == truth["affected_accounts"]
    assert {k: v for k, v in summary["bands"].items() if v} == {
        k: v for k, v in truth["bands"].items() if v
    }
    assert summary["excluded_by_reason"] == truth["excluded_by_reason"]
    assert summary["ingest"] == truth["ingest"]
    assert summary["ingest_by_format"] == truth["ingest_by_format"]


@pytest.fixture(scope="module")
def bundled_run(tmp_path_factory) -> tuple[str, dict, Path]:
    """`forensics run` on the bundled case, once: (printed output, summary.json, out)."""
    from typer.testing import CliRunner

    from forensics.cli import app

    out = tmp_path_factory.mktemp("bundled-run")
    res = CliRunner().invoke(app, ["run", str(BUNDLED / "incident.toml"), "--out", str(out)])
    assert res.exit_code == 0, res.output
    return res.output, json.loads((out / "summary.json").read_text()), out


def test_forensics_run_finds_155_on_the_bundled_case(bundled_run) -> None:
    _, summary, _ = bundled_run
    assert summary["exposure_count"] == 155
    assert summary["excluded_by_reason"] == {"internal-test": 60, "security-researcher": 50}
    assert summary["verdict"] == "consistent_with_normal_usage"
    _assert_run_matches(summary, json.loads((BUNDLED / "truth.json").read_text()))


def test_the_bundled_headline_checks_the_other_model_against_its_own_pool(bundled_run) -> None:
    """GLM-5.2, recounted from the gateway log: its own pool (the case's entry for prefill-c*,
    admission limit 1,048,570) holds every prompt it answered (none of 1,048,570 to 1,048,576
    tokens with status 200); its requests without a prefill node (refused at the gateway) have
    no capacity in force. Known 36,720 of 37,500 = 97.9 %: 97 % rounded down."""
    printed, summary, _ = bundled_run
    frame, _ = _load(BUNDLED)
    other = frame.filter(pl.col("model") == "@cf/zai-org/glm-5.2")
    over = other.filter(
        pl.col("status").is_in([200]), pl.col("prompt").is_between(1_048_570, 1_048_576)
    )
    unrouted = other.filter(pl.col("prefill").is_null())
    assert (other.height, over.height, unrouted.height) == (37_500, 0, 780)
    radius = {m["model"]: m for m in summary["blast_radius"]}
    got = radius["@cf/zai-org/glm-5.2"]
    assert (got["requests"], got["over_capacity"], got["unknown_capacity"]) == (37_500, 0, 780)
    # the case's own model: the 155 exposed and 110 excluded, all inside the window
    ours = radius["@cf/zai-org/glm-5.3"]
    assert (ours["over_capacity"], ours["excluded"], ours["outside_window"]) == (265, 110, 0)
    line = "other models: 0 requests above their pool; capacity known for 97% of their requests"
    assert line in printed.splitlines()


def test_every_bundled_exposure_is_engine_confirmed(bundled_run) -> None:
    _, summary, _ = bundled_run
    assert summary["engine_confirmed"] == 155
    rec = summary["engine_reconciliation"]
    assert rec["matched"] == {"count": 155}
    assert rec["gateway_only"] == {"count": 0, "reasons": {}}


def test_bundled_engine_only_signatures_are_excluded_or_undelivered(bundled_run) -> None:
    _, summary, _ = bundled_run
    # the signature also shows for the 110 excluded requests (60 + 50, truth.json) and for
    # the 6 over-capacity requests whose client went away (status 499) after the decode
    # finished; the 3 with status 500 decoded nothing (output_len=0): no signature
    assert summary["engine_signature"] == 271
    assert summary["engine_refused"] == 0  # SGLang 0.5.18: nothing is retired at intake
    reasons = summary["engine_reconciliation"]["engine_only"]["reasons"]
    assert {r: v["count"] for r, v in reasons.items()} == {
        "excluded account (internal-test)": 60,
        "excluded account (security-researcher)": 50,
        "gateway status 499: response not delivered to the client (band over_capacity_failed)": 6,
    }
    assert summary["engine_reconciliation"]["engine_only"]["count"] == 116


def test_bundled_preflight_flags_every_prefill_node_before_the_fix(bundled_run) -> None:
    _, summary, _ = bundled_run
    assert [
        (f["node"], f["role"], f["tokens"], f["start"], f["end"]) for f in summary["preflight"]
    ] == [
        (f"prefill-a{i}", "prefill", 681280, "2026-08-27T00:00:00Z", "2026-09-09T14:52:00Z")
        for i in range(1, 5)
    ]
    assert {f["context_window"] for f in summary["preflight"]} == {1048576}


def test_bundled_run_headline_shows_the_engine_evidence(bundled_run) -> None:
    output, _, _ = bundled_run
    assert "engine-confirmed: 155 of 155 exposed responses" in output
    assert "engine reconciliation: matched 155, gateway-only 0, engine-only 116 (" in output
    assert "pre-flight: 4 finding(s)" in output


def test_bundled_report_shows_capacity_timeline_preflight_and_reconciliation(bundled_run) -> None:
    _, _, out = bundled_run
    html = (out / "report.html").read_text(encoding="utf-8")
    section = html[html.index('<section id="engine-evidence">') :]
    section = section[: section.index("</section>")]
    assert "<strong>155</strong> of 155" in section
    assert "Capacity timeline derived from the engine logs" in section
    assert section.count("<td>prefill-a1</td>") == 3  # two spans + one pre-flight finding
    assert "681,274 – 1,048,575" in section
    assert '<td>excluded account (internal-test)</td><td class="num">60</td>' in section


@pytest.mark.parametrize(
    ("requests", "seed", "fmt"),
    [(20_000, 11, "parquet"), (35_000, 12, "jsonl"), (50_000, 13, "parquet")],
)
def test_forensics_run_finds_the_generated_truth(
    tmp_path: Path, runner, requests: int, seed: int, fmt: str
) -> None:
    from forensics.cli import app

    sample.generate(tmp_path / "case", requests=requests, seed=seed, fmt=fmt)
    truth = json.loads((tmp_path / "case" / "truth.json").read_text())
    res = runner.invoke(
        app, ["run", str(tmp_path / "case" / "incident.toml"), "--out", str(tmp_path / "out")]
    )
    assert res.exit_code == 0, res.output
    _assert_run_matches(json.loads((tmp_path / "out" / "summary.json").read_text()), truth)
