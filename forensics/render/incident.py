"""notify/incident.json: the incident in the VERIS 1.4 shape (docs/notices.md "incident.json").

VERIS (the Vocabulary for Event Recording and Incident Sharing, github.com/vz-risk/veris,
`verisc.json` and `verisc-enum.json` of schema 1.4.1) is what breach databases and many
incident-response tools read. The record holds what the analysis shows, in VERIS' own
names: `attribute.confidentiality` (`data_disclosure`, `data_total`: the data owners'
requests at risk, the records whose data may have been disclosed), `timeline` (the first
exposed response, the time to discovery and to containment), `discovery_method` (from
`[notify] discovery_method`, else `unknown`), and the required `action`, `actor` and `asset`
as far as the toolkit knows them (an error: the engine served prompts its pool could not hold;
its cause and who made it are `Unknown` until the responder codes them). The figures VERIS
has no field for (the exposure range, the accounts) are under `plus.kv_forensics`, VERIS'
place for extensions. Deterministic: no clock, the id a UUID derived from the case.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from ..case import Case, key_location
from ..errors import InputError
from ..formats import iso
from ..version import versions
from .headline import max_open
from .notices import to_text

FILE = "incident.json"
SCHEMA_VERSION = "1.4.1"
# verisc-enum.json (1.4.1): discovery_method.{external,internal,partner}.variety
DISCOVERY = {
    "external": (
        "Actor disclosure",
        "Audit",
        "Customer",
        "Emergency response team",
        "Found documents",
        "Fraud detection",
        "Incident response",
        "Law enforcement",
        "Security researcher",
        "Suspicious traffic",
        "Unrelated 3rd party",
        "Other",
        "Unknown",
    ),
    "internal": (
        "Antivirus",
        "Break in discovered",
        "Data loss prevention",
        "Financial audit",
        "Fraud detection",
        "Hids",
        "Incident response",
        "Infrastructure monitoring",
        "It review",
        "Log review",
        "Nids",
        "Offboarding",
        "Reported by employee",
        "Security alarm",
        "Other",
        "Unknown",
    ),
    "partner": (
        "Antivirus",
        "Audit",
        "Incident response",
        "Monitoring service",
        "Other",
        "Unknown",
    ),
}
_NAMESPACE = uuid.UUID("6d1d3a0e-9b7c-5f43-9a2e-6b6f72656e73")  # kv-forensics' own


def incident_json(
    case: Case,
    summary: Mapping[str, Any],
    *,
    first_exposed: datetime | None,
    excluded_owners: tuple[int, int] = (0, 0),
) -> bytes:
    """incident.json's bytes (sorted keys, indent 2, a final newline). `excluded_owners`:
    the (accounts, requests at risk) of data_owners.csv's excluded accounts, which
    `data_total` includes."""
    rng = summary.get("exposure_range") or {}
    low = int(rng.get("min", summary["exposure_count"]))
    high = int(rng.get("max", summary["exposure_count"]))
    open_max = [m.short for m in max_open(summary)]
    more = (
        "; the exposed responses and data_total may be higher than given (requests the logs "
        "do not hold are in no figure): " + "; ".join(open_max)
        if open_max
        else ""
    )
    owners = summary.get("data_owners") or {}
    start = first_exposed if first_exposed is not None else case.window_start
    aware = case.awareness
    description = case.notify.description
    summary_text = (
        to_text(description)
        if description is not None
        else f"Between {iso(case.window_start)} and {iso(case.window_end)}, the model "
        f"{', '.join(case.models)} answered prompts larger than the KV-cache pool of its "
        "prefill servers from cache pages that could still hold data of other customers' "
        "requests."
    )
    confidentiality: dict[str, Any] = {
        "data_disclosure": "Yes"
        if low > 0
        else "Potentially"
        if high > 0
        else "Unknown"
        if open_max
        else "No",
        "data_victim": ["Customer"],
        "data": [{"variety": "Unknown"}],
        "state": ["Processed"],
    }
    status = owners.get("status")
    if status in ("complete", "partial"):
        confidentiality["data_total"] = int(owners.get("requests", 0))
        confidentiality["notes"] = (
            "data_total: the data owners' requests at risk (requests of other customers an "
            "exposed response could have read)"
            + (
                f", including {excluded_owners[1]:,} request(s) of {excluded_owners[0]:,} "
                "account(s) the case file excludes (the operator's own or researchers' "
                "accounts: their data was in the cache all the same)"
                if excluded_owners[0]
                else ""
            )
            + (
                f"; attribution partial, so at least this many: {owners.get('reason')}"
                if status == "partial"
                else ""
            )
            + more
        )
    else:
        confidentiality["notes"] = (
            "data_total not given: the data owners could not be attributed"
            + (f" ({owners.get('reason')})" if owners.get("reason") else "")
            + more
        )
    timeline: dict[str, Any] = {
        "incident": {
            "year": start.year,
            "month": start.month,
            "day": start.day,
            "time": start.strftime("%I:%M:%S %p"),
        }
    }
    if aware is not None and aware.at > start:
        timeline["discovery"] = _span(aware.at - start)
        if case.window_end > aware.at:
            timeline["containment"] = _span(case.window_end - aware.at)
    record: dict[str, Any] = {
        "schema_name": "verisc",
        "schema_version": SCHEMA_VERSION,
        "incident_id": str(uuid.uuid5(_NAMESPACE, f"{case.name}\0{iso(case.window_start)}")),
        "security_incident": "Confirmed"
        if low > 0
        else "Suspected"
        if high > 0 or open_max
        else "Near miss",
        "reference": case.name,
        "summary": summary_text,
        "timeline": timeline,
        "discovery_method": discovery_method(case),
        "action": {
            "error": {
                "variety": ["Misconfiguration", "Programming error"],
                "vector": ["Unknown"],
                "notes": "the inference engine answered prompts larger than its prefill "
                "KV-cache pool from stale cache pages instead of refusing them",
            }
        },
        "actor": {"internal": {"variety": ["Unknown"], "motive": ["NA"]}},
        "asset": {"assets": [{"variety": "S - LLM application"}], "cloud": ["Unknown"]},
        "attribute": {"confidentiality": confidentiality},
        "plus": {
            "kv_forensics": {
                "exposed_responses": {
                    "min": low,
                    "likely": int(summary["exposure_count"]),
                    "max": high,
                    "max_may_be_higher": bool(open_max),
                    "max_may_be_higher_because": open_max,
                },
                "excluded_data_owners": {
                    "accounts": excluded_owners[0],
                    "requests": excluded_owners[1],
                },
                "affected_accounts": int(summary["affected_accounts"]),
                "data_owners": {
                    "status": status,
                    "accounts": owners.get("accounts"),
                    "requests": owners.get("requests"),
                },
                "window": {"start": iso(case.window_start), "end": iso(case.window_end)},
                "awareness": None if aware is None else iso(aware.at),
                "notification_due": None if aware is None else iso(aware.at + timedelta(hours=72)),
                "timezone": "UTC",
                "tool": versions(),
            }
        },
    }
    return (json.dumps(record, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


def discovery_method(case: Case) -> dict[str, Any]:
    """`discovery_method` from `[notify] discovery_method` (varieties checked against VERIS'
    lists), else `{"unknown": true}`."""
    given = case.notify.discovery_method
    if not given:
        return {"unknown": True}
    out: dict[str, Any] = {}
    for by, varieties in given:
        for v in varieties:
            if v not in DISCOVERY[by]:
                raise InputError(
                    f"notify.discovery_method: {v!r} is not a VERIS 1.4 {by} discovery variety",
                    where=key_location(case.path, "notify", "discovery_method"),
                    fix=f"use one of {', '.join(DISCOVERY[by])}",
                )
        out[by] = {"variety": list(varieties)}
    return out


def _span(delta: timedelta) -> dict[str, Any]:
    """A VERIS timeline span: the largest unit of Days, Hours, Minutes that is at least one,
    to one decimal."""
    seconds = delta.total_seconds()
    for unit, size in (("Days", 86400), ("Hours", 3600), ("Minutes", 60)):
        if seconds >= size:
            return {"unit": unit, "value": round(seconds / size, 1)}
    return {"unit": "Seconds", "value": round(seconds, 1)}
