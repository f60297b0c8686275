"""Data-owner attribution: whose data may have been read from stale KV pages.

`attribute(engine, case)` needs `bands` (forensics.exposure) and materializes
`attribution_targets` (each over-capacity response answered with success, band `exposed` or
`excluded`, with its decode node and the decode pool capacity in force) and `data_owners`
(CONTRACTS.md: one row per such response and candidate request of another account, with the
response's band in `exposed_band`). Policy `pool-walkback` or `time-window`, as in
docs/decisions.md "Bands" and "Data owners".

The pool of a decode node d holds the requests of the case's models that arrived inside
the case window and were served on d with a success status: the vulnerable deployment
served only in the window, and its KV pool holds tokens of its own model only (requests of
other models, or of an earlier deployment, are never candidates). Excluded accounts' requests
are candidates like any other: their data sat in the same pool. Excluded accounts' over-capacity
responses are walked back like exposed ones: set aside from the exposure count, they still read
stale pages, so the data they could carry was at risk (a researcher or the operator's own tests
received it).
Where an exposed (or excluded) request has no decode node (or, under pool-walkback, no decode
capacity is in force for its node) it is counted as unattributed; attribution is never guessed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..case import Case
from ..engines import SQLEngine, needing
from ..errors import AnalysisError
from ..schema import DEFAULT_STATUS

# pool requests per node and slot the walk-back aims at (owners/pool_walkback.sql): sets its
# cost only, never its result; at 5M and 20M requests 4 to 32 cost the same within the noise
SLOT_ROWS = 8


@dataclass(frozen=True)
class OwnersResult:
    """Figures of one attribution run (the rows are in the `data_owners` table)."""

    policy: str
    status: str  # complete | partial | not_possible
    accounts: int
    requests: int
    pairs: int
    exposed: int
    attributed: int
    unattributed: int
    reason: str | None
    lookback_seconds: int | None
    # band excluded (excluded accounts' over-capacity responses): attributed, unattributed
    excluded_attributed: int = 0
    excluded_unattributed: int = 0
    # (accounts, requests, pairs) of the rows whose exposed response is of each band
    read_by: tuple[tuple[str, tuple[int, int, int]], ...] = ()

    def to_summary(self) -> dict[str, Any]:
        """The `data_owners` entry of summary.json."""
        out: dict[str, Any] = {
            "policy": self.policy,
            "status": self.status,
            "accounts": self.accounts,
            "requests": self.requests,
            "pairs": self.pairs,
            "exposed_attributed": self.attributed,
            "exposed_unattributed": self.unattributed,
            "excluded_attributed": self.excluded_attributed,
            "excluded_unattributed": self.excluded_unattributed,
            "read_by": {
                band: {"accounts": a, "requests": r, "pairs": p} for band, (a, r, p) in self.read_by
            },
            "reason": self.reason,
        }
        if self.lookback_seconds is not None:
            out["lookback_seconds"] = self.lookback_seconds
        return out


def attribute(engine: SQLEngine, case: Case) -> OwnersResult:
    """Materialize `attribution_targets` and `data_owners`; report how complete it is."""
    no_bands = AnalysisError(
        "data owners need the bands of this case",
        fix="compute the bands first (forensics.analysis.exposure.compute_bands; the analysis "
        "step does)",
    )
    with needing(engine, "bands", no_bands):
        engine.materialize("attribution_targets", "owners/targets")
    policy = case.attribution.policy
    common = {
        "window_start": case.window_start,
        "window_end": case.window_end,
        "default_status": DEFAULT_STATUS,
    }
    if policy == "pool-walkback":
        engine.materialize("data_owners", "owners/pool_walkback", slot_rows=SLOT_ROWS, **common)
    else:
        lookback = case.attribution.lookback
        engine.materialize(
            "data_owners",
            "owners/time_window",
            lookback=lookback,
            lookback_seconds=max(1, math.ceil(lookback.total_seconds())),
            **common,
        )

    counts = [int(v) for v in engine.frame("owners/target_counts").row(0)]
    if policy != "pool-walkback":
        counts[2] = counts[5] = 0  # no decode capacity needed
    exposed, no_node, no_cap, excluded, ex_no_node, ex_no_cap = counts
    unattributed = no_node + no_cap
    ex_unattributed = ex_no_node + ex_no_cap
    totals = {k: int(v) for k, v in engine.frame("owners/totals").row(0, named=True).items()}
    pairs, requests, accounts = totals["pairs"], totals["requests"], totals["accounts"]
    reason = _reason(engine, (no_node, ex_no_node), (no_cap, ex_no_cap))

    # the owners are complete only when every over-capacity response, exposed or excluded,
    # was walked back
    targets, missed = exposed + excluded, unattributed + ex_unattributed
    if targets == 0:
        status = "complete"
    elif missed == targets:
        status = "not_possible"
    elif missed:
        status = "partial"
    else:
        status = "complete"
    return OwnersResult(
        policy=policy,
        status=status,
        accounts=int(accounts),
        requests=int(requests),
        pairs=int(pairs),
        exposed=int(exposed),
        attributed=int(exposed) - unattributed,
        unattributed=unattributed,
        reason=reason,
        lookback_seconds=(
            int(case.attribution.lookback.total_seconds()) if policy == "time-window" else None
        ),
        excluded_attributed=excluded - ex_unattributed,
        excluded_unattributed=ex_unattributed,
        read_by=tuple(
            (
                band,
                (totals[f"{band}_accounts"], totals[f"{band}_requests"], totals[f"{band}_pairs"]),
            )
            for band in ("exposed", "excluded")
        ),
    )


def _reason(engine: SQLEngine, no_node: tuple[int, int], no_cap: tuple[int, int]) -> str | None:
    """Why some exposed or excluded requests could not be attributed (None when all could);
    each count is (band exposed, band excluded)."""
    parts = []
    if any(no_node):
        if engine.frame("owners/decode_rows").item() == 0:
            parts.append("the logs name no decode node (map decode_node to attribute owners)")
        else:
            parts.extend(
                f"{n} {band} request(s) have no decode node"
                for band, n in zip(("exposed", "excluded"), no_node, strict=True)
                if n
            )
    parts.extend(
        f"{n} {band} request(s) ran on a decode node with no [[capacity]] entry "
        "of role decode in force (add one, or use policy time-window)"
        for band, n in zip(("exposed", "excluded"), no_cap, strict=True)
        if n
    )
    return "; ".join(parts) or None
