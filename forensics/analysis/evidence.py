"""Engine evidence in `analyze`: the bug's signature confirmed from SGLang logs, reconciled.

`engine_evidence(engine, case)` returns None when the case database holds no engine tables;
otherwise a JSON-ready dict for summary.json:

- `engine_signature`: bootstrap_rooms showing the bug's signature: the prefill leg was
  refused at intake and ran a one-token placeholder (a rejection line on a prefill node, or
  a prefill ReqTimeStats / Finish / metrics record with 1 prompt token that did not abort)
  while the decode leg with the same bootstrap_room decoded the full prompt and finished
  normally (more than 1 prompt token, output_len > 0, not aborted). SGLang up to 0.5.18
  only. The rows are materialized as `engine_signature`.
- `engine_refused`: bootstrap_rooms the engine refused without exposure (SGLang 0.5.21+:
  the prefill retired the request at intake, the decode never got its KV); never counted in
  the signature. The rows are materialized as `engine_refused`.
- `engine_confirmed`: the gateway's exposed responses (band `exposed`) that carry the
  signature, i.e. `engine_reconciliation.matched.count`; None without `bands`.
- `engine_reconciliation`: against the gateway's exposed requests (`bands`), joined on
  `requests.extra ->> 'bootstrap_room'`: `matched` {count}, `gateway_only` and `engine_only`
  {count, reasons: {reason: {count, request_ids, bootstrap_rooms}}}; None without `bands`.
  So exposure_count = engine_confirmed + gateway_only.count and engine_signature =
  engine_confirmed + engine_only.count (excluded accounts, undelivered responses, ...).
- `engine_input_lengths`: the requests in scope whose own input length the engine logs give
  (it decides their band), how many differ from the gateway's count, and those whose band
  that changes (`exposure.engine_length_changes`); None without `bands` (and the
  `engine_lengths` they were computed with).
- `engine_kv_faults`: requests with a KV transfer fault in the engine logs (vLLM
  NixlConnector: KV blocks released when their lease expired, or read by a decode worker
  after the prefill forgot them), one per request; materialized as
  `engine_kv_fault_requests` with the gateway request_id each matches. They join the
  reconciliation (`matched` when exposed, else `engine_only` with a `KV transfer fault: ...`
  reason), and `engine_only` ones widen the exposure range's max.
- `engine_capacity`: the capacity timeline derived from the logs (`capacity.timeline`).
- `preflight`: capacity spans whose pool is smaller than the case's context window.
"""

from __future__ import annotations

from typing import Any

from ..case import Case
from ..engines import SQLEngine
from ..schema import DEFAULT_STATUS
from . import capacity, exposure, scope


def has_engine_evidence(engine: SQLEngine) -> bool:
    """Whether the case database holds engine tables (an sglang log was ingested)."""
    return engine.table_exists("engine_requests") and engine.table_exists("engine_capacity")


def reconcile(engine: SQLEngine) -> dict[str, Any]:
    """matched / gateway_only / engine_only between `engine_signature` and band `exposed`."""
    out: dict[str, Any] = {
        "matched": {"count": 0},
        "gateway_only": {"count": 0, "reasons": {}},
        "engine_only": {"count": 0, "reasons": {}},
    }
    for side, reason, n, request_ids, rooms in engine.frame("evidence/reconcile").rows():
        if side == "matched":
            out["matched"]["count"] += n
            continue
        out[side]["count"] += n
        out[side]["reasons"][reason] = {
            "count": n,
            "request_ids": list(request_ids or []),
            "bootstrap_rooms": list(rooms or []),
        }
    if engine.table_exists("engine_kv_fault_requests") and engine.scalar(
        "SELECT count(*) FROM engine_kv_fault_requests"
    ):
        rows = engine.frame("evidence/kv_reconcile", default_status=DEFAULT_STATUS).rows()
        for side, reason, n, request_ids in rows:
            out[side]["count"] += n
            if side != "matched":
                out[side]["reasons"][reason] = {
                    "count": n,
                    "request_ids": list(request_ids or []),
                    "bootstrap_rooms": [],
                }
    return out


def kv_fault_requests(engine: SQLEngine, have_gateway: bool) -> int | None:
    """Materialize `engine_kv_fault_requests` (one row per faulted request, with the
    gateway request_id it matches); their count, or None without engine_kv_faults."""
    if not engine.table_exists("engine_kv_faults"):
        return None
    query = "evidence/kv_faults" if have_gateway else "evidence/kv_faults_alone"
    engine.materialize("engine_kv_fault_requests", query)
    return int(engine.scalar("SELECT count(*) FROM engine_kv_fault_requests"))


def engine_evidence(engine: SQLEngine, case: Case) -> dict[str, Any] | None:
    """engine_confirmed, engine_reconciliation and preflight for summary.json, or None."""
    if not has_engine_evidence(engine):
        return None
    scope.ensure_scope(engine, case)
    engine.materialize("engine_signature", "evidence/signature")
    engine.materialize("engine_refused", "evidence/refused")
    have_gateway = engine.table_exists("bands") and engine.table_exists("requests")
    faulted = kv_fault_requests(engine, have_gateway)
    if not _case_has_engine_logs(engine):
        return None  # every engine log is an input the case does not name (tables empty)
    signature = engine.scalar("SELECT count(*) FROM engine_signature")
    refused = engine.scalar("SELECT count(*) FROM engine_refused")
    rec = reconcile(engine) if have_gateway else None
    out: dict[str, Any] = {
        "engine_signature": int(signature),
        "engine_refused": int(refused),
        "engine_confirmed": rec["matched"]["count"] if rec is not None else None,
        "engine_reconciliation": rec,
        "engine_input_lengths": exposure.engine_length_changes(engine, case)
        if have_gateway and engine.table_exists("engine_lengths")
        else None,
        "engine_capacity": capacity_timeline(engine),
        "preflight": preflight(engine, case.context_window),
    }
    if faulted is not None:
        out["engine_kv_faults"] = faulted
    return out


def _case_has_engine_logs(engine: SQLEngine) -> bool:
    """Whether some engine evidence comes from an input the case names."""
    if not scope.unnamed_inputs(engine):
        return True
    lines = engine.scalar(
        "SELECT (SELECT count(*) FROM case_engine_requests) "
        "+ (SELECT count(*) FROM case_engine_aborts)"
    )
    if not lines and engine.table_exists("case_engine_kv_faults"):
        lines = engine.scalar("SELECT count(*) FROM case_engine_kv_faults")
    return bool(lines) or bool(_case_spans(engine))


def warnings(result: dict[str, Any] | None) -> list[str]:
    """The engine's input lengths that differ from the gateway's: they decide, and where one
    changes a request's band the warning names it (five at most); and the bootstrap rooms
    several requests carry, whose lengths decide none of them (five named at most)."""
    lengths = (result or {}).get("engine_input_lengths")
    if not lengths:
        return []
    return _shared_rooms_warning(lengths) + _differ_warning(lengths)


def _shared_rooms_warning(lengths: dict[str, Any]) -> list[str]:
    rooms = lengths.get("shared_rooms") or []
    if not rooms:
        return []
    named = "; ".join(
        f"room {r['bootstrap_room']}: {', '.join(r['request_ids'][:3])}"
        + (f" and {r['requests'] - 3} more" if r["requests"] > 3 else "")
        for r in rooms[: scope.MAX_LISTED]
    )
    extra = len(rooms) - scope.MAX_LISTED
    more = f"; and {extra} more room(s)" if extra > 0 else ""
    return [
        f"{len(rooms)} bootstrap room(s) of the engine logs are carried by several gateway "
        f"requests ({named}{more}): the engine's input lengths of such a room decide none of "
        "them (the gateway's prompt_tokens stand), and a request whose band one of those "
        "lengths would change is in the exposure range (engine_length)"
    ]


def _differ_warning(lengths: dict[str, Any]) -> list[str]:
    if not lengths["differ"]:
        return []
    changed = lengths["band_changed"]
    named = "; ".join(
        f"{c['request_id']}: gateway {c['gateway_prompt_tokens']:,} ({c['gateway_band']}), "
        f"engine {c['engine_prompt_tokens']:,} ({c['band']})"
        for c in changed[: scope.MAX_LISTED]
    )
    extra = len(changed) - scope.MAX_LISTED
    more = f"; and {extra} more" if extra > 0 else ""
    return [
        f"{lengths['differ']} request(s) in scope have an engine input length other than the "
        f"gateway's prompt_tokens; the engine's decides, and changes the band of "
        f"{len(changed)}" + (f": {named}{more}" if changed else "")
    ]


def _case_spans(engine: SQLEngine) -> list[dict[str, Any]]:
    """The capacity spans of the case's own engine logs (not of inputs no [[source]] names)."""
    unnamed = set(scope.unnamed_inputs(engine))
    return [s for s in capacity.timeline(engine) if s["source"] not in unnamed]


def capacity_timeline(engine: SQLEngine) -> list[dict[str, Any]]:
    """The derived capacity spans without provenance paths (these depend on where logs sit)."""
    keys = ("role", "node", "tokens", "reject_from", "context_len", "start", "end")
    return [{k: span[k] for k in keys} for span in _case_spans(engine)]


def preflight(engine: SQLEngine, context_window: int) -> list[dict[str, Any]]:
    """The pre-flight findings of the case's own engine logs' capacity spans."""
    findings = capacity.preflight(engine, context_window)
    if not scope.unnamed_inputs(engine):
        return findings
    spans = {(s["node"], s["role"], s["start"]) for s in _case_spans(engine)}
    return [f for f in findings if (f["node"], f["role"], f["start"]) in spans]
