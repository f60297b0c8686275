"""`forensics sample`: a synthetic GLM-5.3-style case of any size, with its true answer.

`generate(out, requests, seed, fmt)` writes, into `out`: the gateway log (gzip JSONL with a
few shipper faults, or Parquet), its mapping, `incident.toml`, `accounts.csv`,
`researchers.txt` and `truth.json` (the exposure count, affected accounts, band counts,
exclusions and ingest figures, counted while generating, never by the analysis).
Same arguments, byte-identical files. `write_bundled()` regenerates `sample_logs/glm53/`,
which also holds SGLang prefill/decode server logs under `engine/` (`engine_logs=True`):
written from the gateway log by `queries/sample/bundle_lines.sql`, listed in incident.toml
as a `profile = "sglang"` source, and counted in truth.json's `ingest` (all inputs) and
`ingest_by_format` (`jsonl` = gateway, `sglang` = engine logs).

Every gateway record carries what an engine-log generator needs: arrival `timestamp`,
`latency_ms`, `route.prefill`, `route.decode`, `route.bootstrap_room`, token counts, status.
"""

from __future__ import annotations

import gzip
import io
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow.parquet as pq

from ..engines import DuckDBEngine
from ..errors import InputError, option
from ..progress import SILENT, Progress, step
from ..schema import INGEST_KEYS
from . import traffic as t

FORMATS = ("parquet", "jsonl")
CHUNK_ROWS = 200_000
BUNDLED_REQUESTS = t.REFERENCE_REQUESTS
BUNDLED_SEED = 53
BUNDLED_NAME = "GLM-5.3 cross-session KV cache exposure"
BUNDLED_DIR = Path(__file__).resolve().parents[2] / "sample_logs" / "glm53"  # the repo's
ENGINE_DIR = "engine"


@dataclass
class SampleResult:
    """What `generate` wrote and the case's true figures (the content of truth.json)."""

    out: Path
    files: list[Path]
    truth: dict[str, Any] = field(default_factory=dict)


def generate(
    out: str | Path,
    requests: int = 100_000,
    seed: int = 1,
    fmt: str = "parquet",
    progress: Progress = SILENT,
    *,
    exposed: int | None = None,
    name: str | None = None,
    chunk_rows: int = CHUNK_ROWS,
    engine_logs: bool = False,
) -> SampleResult:
    """Write a synthetic case with `requests` gateway records into `out`; return its truth.

    `exposed` fixes the true exposure count (default: 155 per 72,000 requests);
    `engine_logs` adds SGLang server logs under engine/ (jsonl only) and the admission limit
    (reject_from) to the case's [[capacity]]: a prompt between it and the pool that was
    delivered then counts as exposed on top of `exposed` (truth.json has the true count).
    """
    if fmt not in FORMATS:
        raise InputError(
            f"unknown format {fmt!r}", where=option("format"), fix="use parquet or jsonl"
        )
    if engine_logs and fmt != "jsonl":
        raise InputError(
            "engine logs are written from a JSONL gateway log",
            where=option("format"),
            fix="use jsonl",
        )
    if requests < 5000:
        raise InputError(
            f"too few requests ({requests})", where=option("requests"), fix="give at least 5000"
        )
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    plan = t.make_plan(requests, seed, exposed)
    name = name or f"Synthetic GLM-5.3-style case ({requests} requests, seed {seed})"
    log_name = "gateway.jsonl.gz" if fmt == "jsonl" else "gateway.parquet"
    # a case with engine logs carries the admission limit `forensics capacity` derives from
    # them (reject_from); without, the pool size only
    over_from = (
        (t.reject_from(t.PREFILL_CAPACITY), t.reject_from(t.PREFILL_CAPACITY_FIXED))
        if engine_logs
        else (t.PREFILL_CAPACITY + 1, t.PREFILL_CAPACITY_FIXED + 1)
    )
    truth = t.Truth(len(plan.accounts.ids), over_from)
    faults = _Faults(plan, fmt)

    log_path = out / log_name
    writer = _JsonlWriter(log_path) if fmt == "jsonl" else _ParquetWriter(log_path)
    seq = 0
    n_hours_done = 0
    with writer, step(progress, "generating", requests, "requests") as bar:
        for rows in t.chunks(plan, chunk_rows):
            n = len(rows["ts"])
            truth.add(rows, plan.accounts)
            frame = _frame(rows, plan, seq)
            writer.write(frame, faults.local(seq, n))
            seq += n
            n_hours_done += 1
            bar.advance(n)

    files = [
        log_path,
        _write(out / "gateway.mapping.toml", _mapping(fmt)),
        _write(out / "incident.toml", _incident(name, log_name, engine_logs)),
        _write_accounts(out / "accounts.csv", plan.accounts),
        _write(out / "researchers.txt", _researchers()),
    ]
    engine_files, engine_records = write_engine_logs(out) if engine_logs else ([], None)
    files.extend(engine_files)
    truth_doc = _truth(plan, truth, faults, seq, fmt, engine_records)
    files.append(_write(out / "truth.json", json.dumps(truth_doc, indent=2) + "\n"))
    return SampleResult(out=out, files=files, truth=truth_doc)


def write_bundled(out: str | Path = BUNDLED_DIR) -> SampleResult:
    """Regenerate the bundled GLM-5.3 case (sample_logs/glm53/): 155 exposed by design."""
    return generate(
        out,
        requests=BUNDLED_REQUESTS,
        seed=BUNDLED_SEED,
        fmt="jsonl",
        exposed=t.REFERENCE_EXPOSED,
        name=BUNDLED_NAME,
        engine_logs=True,
    )


def write_engine_logs(folder: str | Path) -> tuple[list[Path], int]:
    """SGLang prefill/decode logs for the case in `folder` from its gateway.jsonl.gz.

    One gzip file per node under engine/, in the spellings of SGLang 0.5.18: startup lines at
    the window start (prefill pool 681,280, admission limit 681,274), the restart of every
    prefill node with the corrected configuration at 14:52 (pool 2,039,808), and per-request
    lines for prompts over the baseline size (queries/sample/bundle_lines.sql). Returns the
    files and the number of evidence records written (every line is one). Deterministic:
    gzip without a time stamp.
    """
    folder = Path(folder)
    out = folder / ENGINE_DIR
    out.mkdir(exist_ok=True)
    with DuckDBEngine() as engine:
        rows = engine.frame(
            "sample/bundle_lines",
            gateway=str(folder / "gateway.jsonl.gz"),
            model=t.MODEL_53,
            min_tokens=t.BASELINE_MIN,
            context_window=t.CONTEXT_WINDOW,
            prefill_nodes=list(t.PREFILL_NODES),
            decode_nodes=list(t.DECODE_NODES),
            boot=_utc(t.WINDOW_START),
            switch=_utc(t.FIXED),
            old_tokens=t.PREFILL_CAPACITY,
            new_tokens=t.PREFILL_CAPACITY_FIXED,
            decode_tokens=t.DECODE_CAPACITY,
        ).rows()
    lines: dict[str, list[str]] = {}
    records = 0
    for node, _ts, _order, line in rows:  # a few thousand lines: long requests only
        lines.setdefault(node, []).append(line)
        records += 1  # every line written is an evidence record
    files = []
    for node, text in sorted(lines.items()):
        path = out / f"{node}.log.gz"
        path.write_bytes(gzip.compress(("\n".join(text) + "\n").encode("utf-8"), mtime=0))
        files.append(path)
    return files, records


def _utc(us: int) -> datetime:
    return datetime.fromtimestamp(us / 1_000_000, UTC)


# --- records ------------------------------------------------------------------------------


def _hex(values: np.ndarray) -> np.ndarray:
    """16-digit lower-case hex strings of uint64s, without a per-row Python loop."""
    raw = values.astype(">u8").tobytes().hex()
    return np.frombuffer(raw.encode("ascii"), dtype="S16").astype("U16")


def _frame(rows: t.Rows, plan: t.Plan, seq0: int) -> pl.DataFrame:
    """The gateway records of a chunk, in the log's nested layout."""
    n = len(rows["ts"])
    seq = np.arange(seq0, seq0 + n, dtype=np.uint64)
    rid = t.permute(seq, 64, plan.seed * 2654435761 + 1)
    room = t.permute(seq, 63, plan.seed * 40503 + 7).astype(np.int64)
    offsets = {"Z": 0, "-07:00": -7, "-04:00": -4, "+02:00": 2, "+09:00": 9}
    colo = rows["colo"].astype(np.int64)
    off_h = np.array([offsets[c[1]] for c in t.COLOS])[colo]
    digits = np.array([c[2] for c in t.COLOS])[colo]
    suffix = pl.Series([c[1] for c in t.COLOS]).gather(colo)
    local = pl.from_epoch(pl.Series(rows["ts"] + off_h * t.HOUR), time_unit="us")
    stamp = local.dt.strftime("%Y-%m-%dT%H:%M:%S%.6f")
    stamp = pl.select(
        pl.when(pl.Series(digits) == 3).then(stamp.str.slice(0, 23)).otherwise(stamp) + suffix
    ).to_series()
    routed = rows["prefill"] >= 0
    nodes = pl.Series(list(t.NODES))
    pre = nodes.gather(np.where(routed, rows["prefill"], 0).astype(np.int64))
    dec = nodes.gather(np.where(routed, rows["decode"], 0).astype(np.int64))
    df = pl.DataFrame(
        {
            "id": pl.Series(np.char.add("req-", _hex(rid))),
            "timestamp": stamp,
            "colo": pl.Series([c[0] for c in t.COLOS]).gather(colo),
            "acct": pl.Series(plan.accounts.ids).gather(rows["acct"].astype(np.int64)),
            "model": pl.Series(list(t.MODELS)).gather(rows["model"].astype(np.int64)),
            "prompt_tokens": rows["prompt"],
            "completion_tokens": rows["completion"],
            "status": rows["status"].astype(np.int64),
            "latency_ms": rows["latency"],
            "routed": routed,
            "prefill": pre,
            "decode": dec,
            "bootstrap_room": room,
        }
    )
    return df.select(
        "id",
        "timestamp",
        "colo",
        pl.struct(pl.col("acct").alias("id")).alias("account"),
        "model",
        pl.struct("prompt_tokens", "completion_tokens").alias("usage"),
        "status",
        "latency_ms",
        pl.when("routed")
        .then(pl.struct(pl.col("prefill"), pl.col("decode"), pl.col("bootstrap_room")))
        .otherwise(None)
        .alias("route"),
    )


class _Faults:
    """Shipper faults at fixed global record numbers: identical re-sends and torn lines."""

    def __init__(self, plan: t.Plan, fmt: str):
        n = plan.requests
        self.n_dup = max(4, n // 18_000)
        self.n_torn = max(3, n // 24_000) if fmt == "jsonl" else 0
        rng = np.random.default_rng([plan.seed, 404])
        picks = rng.choice(n, self.n_dup + self.n_torn, replace=False)
        self.dup = np.sort(picks[: self.n_dup])
        self.torn = np.sort(picks[self.n_dup :])
        self.cut = dict(
            zip(self.torn.tolist(), rng.uniform(0.25, 0.85, self.n_torn).tolist(), strict=True)
        )

    def local(self, seq0: int, n: int) -> tuple[list[int], dict[int, float]]:
        dup = [int(s - seq0) for s in self.dup if seq0 <= s < seq0 + n]
        torn = {int(s - seq0): self.cut[int(s)] for s in self.torn if seq0 <= s < seq0 + n}
        return dup, torn


class _JsonlWriter:
    """Gzip JSONL with a fixed header (no name, mtime 0), so files are byte-identical."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self) -> _JsonlWriter:
        self.raw = open(self.path, "wb")
        self.gz = gzip.GzipFile(filename="", mode="wb", fileobj=self.raw, mtime=0)
        return self

    def write(self, frame: pl.DataFrame, faults: tuple[list[int], dict[int, float]]) -> None:
        buf = io.BytesIO()
        frame.write_ndjson(buf)
        data = buf.getvalue()
        dup, torn = faults
        if dup or torn:
            lines = data.split(b"\n")[:-1]
            for i in sorted(set(dup) | set(torn), reverse=True):
                line = lines[i]
                if i in torn:  # a partial write, then the shipper's retry of the full record
                    lines.insert(i, line[: int(len(line) * torn[i])])
                if i in dup:  # an identical re-send right after the original
                    lines.insert(i + (2 if i in torn else 1), line)
            data = b"\n".join(lines) + b"\n"
        self.gz.write(data)

    def __exit__(self, *exc: object) -> None:
        self.gz.close()
        self.raw.close()


class _ParquetWriter:
    """One Parquet file, a row group per chunk; duplicates are re-sent rows."""

    def __init__(self, path: Path):
        self.path = path
        self.writer: pq.ParquetWriter | None = None

    def __enter__(self) -> _ParquetWriter:
        return self

    def write(self, frame: pl.DataFrame, faults: tuple[list[int], dict[int, float]]) -> None:
        dup, _ = faults
        if dup:
            idx = np.arange(frame.height)
            idx = np.sort(np.concatenate([idx, np.array(dup, dtype=idx.dtype)]), kind="stable")
            frame = frame[idx]
        table = frame.to_arrow()
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.path, table.schema, compression="zstd")
        self.writer.write_table(table)

    def __exit__(self, *exc: object) -> None:
        if self.writer is not None:
            self.writer.close()


# --- the case files -----------------------------------------------------------------------


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8", newline="\n")
    return path


def _write_accounts(path: Path, acc: t.Accounts) -> Path:
    frame = pl.DataFrame(
        {
            "account_id": acc.ids,
            "name": acc.names,
            "contact_email": acc.emails,
            "plan": acc.plans,
            "region": acc.regions,
        }
    ).sort("account_id")
    frame.write_csv(path)
    return path


def _researchers() -> str:
    return (
        "# Bug bounty report of 2026-09-08: the researcher's account (requests before the\n"
        "# report were probing the issue and are set aside, reason security-researcher).\n"
        f"{t.RESEARCHER}\n"
    )


def _mapping(fmt: str) -> str:
    return f"""# The gateway's request log: one JSON object per request (nested fields).
format = "{fmt}"

[fields]
request_id = "id"
ts = "timestamp"
account_id = "account.id"
model = "model"
prompt_tokens = "usage.prompt_tokens"
completion_tokens = "usage.completion_tokens"
status = "status"
prefill_node = "route.prefill"
decode_node = "route.decode"
ts_end = {{ sql = "timestamp::TIMESTAMPTZ + to_milliseconds(latency_ms)" }}

[extra]
bootstrap_room = "route.bootstrap_room"

[timestamp]
unit = "iso8601"
timezone = "UTC"
"""


def _incident(name: str, log_name: str, engine_logs: bool = False) -> str:
    return f"""name = "{name}"
models = ["{t.MODEL_53}"]
context_window = {t.CONTEXT_WINDOW}
success_status = [200]

[window]
start = "2026-08-27T00:00:00Z"
end = "2026-09-09T14:52:00Z"

[[source]]
path = "{log_name}"
mapping = "gateway.mapping.toml"
{_ENGINE_SOURCE if engine_logs else ""}
{_capacity(engine_logs)}
[[exclude]]
reason = "{t.INTERNAL}"
accounts = ["{t.OPS_QA}", "{t.OPS_REPRO[0]}", "{t.OPS_REPRO[1]}"]

[[exclude]]
reason = "{t.RESEARCH}"
file = "researchers.txt"

[baseline]
min_prompt_tokens = {t.BASELINE_MIN}

[attribution]
policy = "pool-walkback"

[accounts]
path = "accounts.csv"

# The notices, jurisdictions and regulator summary under notify/. The texts are Markdown,
# shown as written; every figure beside them comes from the analysis.
[notify]
jurisdiction = "region"
description = '''
From the launch of GLM-5.3 until every prefill node ran the corrected configuration, the
inference engine (prefill/decode disaggregated serving) answered prompts larger than the KV
cache pool of its prefill servers instead of rejecting them. The decode servers then read
cache pages that could still hold data of other customers' earlier requests, so a response
to such a prompt may contain text derived from another customer's prompt.
'''
consequences = '''
A response to an oversized prompt could contain fragments of another customer's prompt,
which may include personal data of that customer or of its users. The customer who received
it could read those fragments; the customer whose prompt it was cannot know whether it was
shown. Prompts of the data owners are not kept, so which personal data they held cannot be
established.
'''
measures = '''
- The model was made private, then every prefill node moved to a configuration whose KV
cache pool holds a full context window.
- The deployment was rebuilt with an engine patch that rejects an oversized prompt when it
is admitted; public access was restored after that.
- Every affected customer and every data owner receives a notice listing its requests.
- The fix was shared with the engine's maintainers; public disclosure is coordinated with
them.
'''
contact = "Security incident response: security@inference.example (reference GLM53-KV)"
# the notices' e-mail messages: sent from, replies to, signed by
sender = "Security Incident Response <security@inference.example>"
reply_to = "security@inference.example"
signature = '''
Security Incident Response
Example Inference Platform
'''
# who discovered the breach, in VERIS' words (incident.json)
discovery_method = {{ external = ["Security researcher"] }}

# when notices are due per jurisdiction (a value of the region column), counted from the
# awareness event; illustrative values: check the law that applies to you
[notify.deadlines]
europe = {{ within = "72h", to = "authority" }}
us-west = "30d"

# Each event says who reads it (audience): "customer" (the notices), "regulator" (the
# regulator summary), "internal" (the report only; the default).

[[event]]
at = "2026-07-06T00:00:00Z"
label = "Engine bug reported upstream (SGLang issue #30233)"
audience = "regulator"

[[event]]
at = "2026-08-15T00:00:00Z"
label = "KV-page ownership-check prototype tried on GLM-5.2, then disabled"

[[event]]
at = "2026-08-27T15:00:00Z"
label = "GLM-5.3 launched: exposure starts"
audience = ["customer", "regulator"]

[[event]]
at = "2026-09-06T00:00:00Z"
label = "Related upstream fix #36988 merged"
audience = "regulator"

[[event]]
at = "2026-09-08T00:00:00Z"
label = "Security researcher reports the issue (bug bounty)"
audience = ["customer", "regulator"]

[[event]]
at = "2026-09-09T08:00:00Z"
label = "Operator starts verifying the report"
audience = "regulator"

[[event]]
at = "2026-09-09T10:25:00-04:00"
label = "Status page: incident began"
audience = ["customer", "regulator"]

[[event]]
at = "2026-09-09T11:02:00-04:00"
label = "Status page: identified"
audience = ["customer", "regulator"]

[[event]]
at = "2026-09-09T13:22:00Z"
label = "Security incident declared (leak reproduced with two accounts)"
audience = ["customer", "regulator"]
# the operator is aware of the breach (GDPR Art. 33(1)): the 72 hours run from here
awareness = true

[[event]]
at = "2026-09-09T14:00:00Z"
label = "Model made private"
audience = ["customer", "regulator"]

[[event]]
at = "2026-09-09T14:35:00Z"
label = "Root cause identified"
audience = ["customer", "regulator"]

[[event]]
at = "2026-09-09T14:52:00Z"
label = "All prefill nodes on corrected configuration (pool about 2.04M tokens)"
audience = ["customer", "regulator"]

[[event]]
at = "2026-09-09T16:09:00-04:00"
label = "Status page: resolved"
audience = ["customer", "regulator"]

[[event]]
at = "2026-09-09T19:04:00Z"
label = "Deployment rebuilt with the admission-time rejection patch"
audience = ["customer", "regulator"]

[[event]]
at = "2026-09-09T19:40:00Z"
label = "Public access restored"
audience = ["customer", "regulator"]

[[event]]
at = "2026-09-10T00:00:00Z"
label = "Operator meets the engine maintainers"

[[event]]
at = "2026-09-11T00:00:00Z"
label = "Extra hardening across production deployments begins"
audience = "regulator"

[[event]]
at = "2026-09-16T00:00:00Z"
label = "Upstream fixes start merging (admission-time rejection, checksums)"
audience = "regulator"

[[event]]
at = "2026-10-02T00:00:00Z"
label = "Engine v0.5.21 released"
audience = "regulator"

[[event]]
at = "2026-10-19T00:00:00Z"
label = "Engine v0.5.22 released (recommended minimum)"
audience = ["customer", "regulator"]

[[event]]
at = "2026-10-26T00:00:00Z"
label = "Coordinated public disclosure"
audience = ["customer", "regulator"]
"""


def _capacity(engine_logs: bool) -> str:
    """The [[capacity]] entries; with engine logs, each carries the admission limit
    (reject_from) that `forensics capacity` derives from them. GLM-5.3's entries name their
    model (`models`), and GLM-5.2's own prefill pool follows: the blast radius judges its
    requests against it (it holds a full context window: nothing is over it)."""

    def limit(tokens: int) -> str:
        return f"reject_from = {t.reject_from(tokens)}\n" if engine_logs else ""

    head = (
        "# Prefill pool: 681,280 tokens until every prefill node ran the corrected "
        "configuration.\n"
        + (
            "# reject_from: the smallest prompt the engine refuses, min(context_len - 1, "
            "tokens - 1) - 5\n# (SGLang's admission limit, derived by forensics capacity "
            "from the engine logs).\n"
            if engine_logs
            else ""
        )
    )
    return f"""{head}[[capacity]]
role = "prefill"
nodes = "*"
models = "{t.MODEL_53}"
tokens = {t.PREFILL_CAPACITY}
{limit(t.PREFILL_CAPACITY)}start = "2026-08-27T00:00:00Z"
end = "2026-09-09T14:52:00Z"

[[capacity]]
role = "prefill"
nodes = "*"
models = "{t.MODEL_53}"
tokens = {t.PREFILL_CAPACITY_FIXED}
{limit(t.PREFILL_CAPACITY_FIXED)}start = "2026-09-09T14:52:00Z"

# Decode pools of the GLM-5.3 decode nodes (used by the data-owner walk-back).
[[capacity]]
role = "decode"
nodes = "decode-b*"
models = "{t.MODEL_53}"
tokens = {t.DECODE_CAPACITY}
{limit(t.DECODE_CAPACITY)}start = "2026-08-27T00:00:00Z"

# GLM-5.2, served throughout on its own prefill nodes: its pool holds a full context window.
# Not a model of this case: the blast radius checks its requests against this pool.
[[capacity]]
role = "prefill"
nodes = "{t.PREFILL_NODES_52[0][:-1]}*"
models = "{t.MODEL_52}"
tokens = {t.PREFILL_CAPACITY_52}
{limit(t.PREFILL_CAPACITY_52)}start = "2026-08-20T00:00:00Z"
"""


_ENGINE_SOURCE = f"""
# SGLang prefill/decode server logs: derived capacity, pre-flight, the bug's signature.
[[source]]
path = "{ENGINE_DIR}"
profile = "sglang"
"""


def _truth(
    plan: t.Plan,
    truth: t.Truth,
    faults: _Faults,
    written: int,
    fmt: str,
    engine_records: int | None,
) -> dict[str, Any]:
    per = truth.exposed_per_account
    assert per is not None
    affected = sorted(plan.accounts.ids[i] for i in np.flatnonzero(per).tolist())
    placed = truth.bands["exposed"] - truth.exposed_within_pool
    if placed != plan.exposed or written != plan.requests:
        raise AssertionError("generator bookkeeping disagrees with its plan")  # a bug, not input
    by_format = {
        fmt: {
            "rows_read": written + faults.n_dup + faults.n_torn,
            "rows_loaded": written,
            "duplicates": faults.n_dup,
            "quarantined": faults.n_torn,
        }
    }
    if engine_records is not None:
        by_format["sglang"] = {
            "rows_read": engine_records,
            "rows_loaded": engine_records,
            "duplicates": 0,
            "quarantined": 0,
        }
    by_format = dict(sorted(by_format.items()))
    return {
        "requests": plan.requests,
        "seed": plan.seed,
        "exposure_count": truth.bands["exposed"],
        "affected_accounts": len(affected),
        "affected_account_ids": affected,
        "bands": dict(truth.bands),
        "excluded_by_reason": dict(sorted(truth.excluded_by_reason.items())),
        "ingest": {k: sum(f[k] for f in by_format.values()) for k in INGEST_KEYS},
        "ingest_by_format": by_format,
        "models": {t.MODEL_53: truth.requests_53, t.MODEL_52: written - truth.requests_53},
    }
