"""Usage classification: were the exposed requests normal long-context usage, or exploitation?

`classify(engine, case, exclusions)` compares the exposed requests (band 'exposed' of the
`bands` table) with the baseline of normal long-context usage (band 'fits', account not
excluded, prompt >= case.baseline.min_prompt_tokens, served while the capacity in force was
below the context window, i.e. while exposure was possible) in timing (hour of day, day)
and per account (volume, bursts, probing near the capacity). Counting is SQL
(`queries/classify/*.sql`); only per-account and per-bucket aggregates reach Python, where
SciPy does the statistics (`forensics.stats`). It materializes `classification_accounts`,
`classification_tests` and `classification_profile` for the report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from ..case import Case
from ..engines import SQLEngine, needing
from ..errors import AnalysisError, command
from ..formats import iso
from . import stats

ALPHA = 0.01  # family-wise error rate of each test family
MIN_EXPOSED = 5  # fewer exposed requests than this: insufficient_data
MIN_BASELINE = 30  # fewer baseline requests than this: insufficient_data
BURST_MINUTES = 10  # width of the burst window (divides 60)
NEAR_MARGIN = 0.02  # "just above the capacity": at most 2 % above it
STEP_ZONE = 0.05  # stepping is looked for within 5 % either side of the capacity
SESSION_MINUTES = 30  # near-capacity prompts of an account this close belong to one session
MIN_EXPECTED = 5.0  # chi-square cells are pooled until their expected count reaches this

VERDICTS = ("consistent_with_normal_usage", "anomalous", "insufficient_data")

_ACCOUNT_SCHEMA = {
    "account_id": pl.Utf8,
    "exposed": pl.Int64,
    "baseline": pl.Int64,
    "expected": pl.Float64,
    "p_value": pl.Float64,
    "adjusted_p": pl.Float64,
    "flagged": pl.Boolean,
    "reasons": pl.Utf8,
    "over_capacity": pl.Int64,
    "near_capacity": pl.Int64,
    "max_burst": pl.Int64,
    "longest_step_run": pl.Int64,
}
_TEST_SCHEMA = {
    "test": pl.Utf8,
    "statistic": pl.Float64,
    "p_value": pl.Float64,
    "detail": pl.Utf8,
}


@dataclass
class Classification:
    """The verdict, the flagged accounts (sorted) and the evidence behind them."""

    verdict: str
    flagged_accounts: list[str]
    exclusions: bool
    exposed: int
    baseline: int
    tests: list[dict[str, Any]] = field(default_factory=list)
    accounts: list[dict[str, Any]] = field(default_factory=list)
    reason: str = ""

    def to_summary(self) -> dict[str, Any]:
        """JSON-ready, deterministic: floats to 6 significant digits, keys and lists sorted."""
        flagged = {
            a["account_id"]: {
                "exposed": a["exposed"],
                "baseline": a["baseline"],
                "expected": stats.significant(a["expected"]),
                "reasons": [_rounded(r) for r in a["reasons"]],
            }
            for a in self.accounts
            if a["flagged"]
        }
        return {
            "verdict": self.verdict,
            "reason": self.reason,
            "flagged_accounts": list(self.flagged_accounts),
            "exclusions": self.exclusions,
            "alpha": ALPHA,
            "exposed": self.exposed,
            "baseline": self.baseline,
            "baseline_definition": (
                "requests of accounts not excluded, band fits, prompt_tokens >= "
                "baseline.min_prompt_tokens, capacity in force below the context window"
            ),
            "thresholds": {"min_exposed": MIN_EXPOSED, "min_baseline": MIN_BASELINE},
            "accounts_tested": len(self.accounts),
            "tests": [_rounded(t) for t in sorted(self.tests, key=lambda t: t["test"])],
            "accounts": dict(sorted(flagged.items())),
        }


def classify(engine: SQLEngine, case: Case, exclusions: bool = True) -> Classification:
    """Classify the exposed requests of `bands` against the baseline; see the module doc.

    `exclusions` is recorded only: `bands` already holds no 'excluded' row when it is off.
    """
    params = {
        "min_prompt": case.baseline.min_prompt_tokens,
        "context_window": case.context_window,
    }
    no_bands = AnalysisError(
        "the case database holds no bands table",
        where="classify",
        fix=f"run the exposure analysis ({command('analyze')}) first",
    )
    with needing(engine, "bands", no_bands):
        accounts = engine.frame(
            "classify/accounts", burst_minutes=BURST_MINUTES, near_margin=NEAR_MARGIN, **params
        )
    engine.materialize(
        "classification_profile",
        "classify/profile",
        start=case.window_start,
        end=case.window_end,
        **params,
    )
    profile = engine.read_table("classification_profile")
    n_exposed = int(accounts["exposed"].sum()) if accounts.height else 0
    n_baseline = int(accounts["baseline"].sum()) if accounts.height else 0

    rows = [
        {
            "account_id": r["account_id"],
            "exposed": int(r["exposed"]),
            "baseline": int(r["baseline"]),
            "expected": None,
            "p_value": None,
            "adjusted_p": None,
            "flagged": False,
            "reasons": [],
            "over_capacity": int(r["over_capacity"]),
            "near_capacity": int(r["near_capacity"]),
            "max_burst": int(r["max_burst"]),
            "longest_step_run": 0,
        }
        for r in accounts.iter_rows(named=True)
    ]

    if n_exposed < MIN_EXPOSED or n_baseline < MIN_BASELINE:
        result = Classification(
            verdict="insufficient_data",
            flagged_accounts=[],
            exclusions=exclusions,
            exposed=n_exposed,
            baseline=n_baseline,
            tests=[],
            accounts=rows,
            reason=(
                f"{n_exposed} exposed and {n_baseline} baseline requests; the tests need at "
                f"least {MIN_EXPOSED} exposed and {MIN_BASELINE} baseline requests"
            ),
        )
        _store(engine, result)
        return result

    tests = [_timing(profile, "hour"), _timing(profile, "day")]
    by_id = {r["account_id"]: r for r in rows}
    tests.append(_volume(rows, n_exposed, n_baseline))
    tests.append(_near_capacity(rows))
    tests.append(_bursts(rows, accounts))
    steps = engine.frame("classify/steps", zone=STEP_ZONE, session_minutes=SESSION_MINUTES)
    tests.append(_steps(by_id, steps))

    flagged = sorted(r["account_id"] for r in rows if r["reasons"])
    for r in rows:
        r["flagged"] = bool(r["reasons"])
    timing_off = [t["test"] for t in tests[:2] if t["p_value"] is not None and t["p_value"] < ALPHA]
    untested = [t["test"] for t in tests if t["p_value"] is None]
    if flagged or timing_off:
        verdict = "anomalous"
        parts = []
        if flagged:
            parts.append(f"{len(flagged)} account(s) flagged")
        if timing_off:
            parts.append("timing differs from the baseline (" + ", ".join(timing_off) + ")")
        reason = "; ".join(parts)
    else:
        verdict = "consistent_with_normal_usage"
        reason = _consistent_reason(tests[:2], untested)
    if untested:
        reason += "; not testable on these counts: " + ", ".join(untested)
    result = Classification(
        verdict=verdict,
        flagged_accounts=flagged,
        exclusions=exclusions,
        exposed=n_exposed,
        baseline=n_baseline,
        tests=tests,
        accounts=rows,
        reason=reason,
    )
    _store(engine, result)
    return result


def _consistent_reason(timing: list[dict[str, Any]], untested: list[str]) -> str:
    """Why nothing is anomalous: no account flagged, and the timing tests that were run found
    timing consistent with the baseline (an untested one is never called consistent)."""
    tested = [t["test"] for t in timing if t["test"] not in untested]
    if tested:
        timing_text = "timing consistent with the baseline (" + ", ".join(tested) + ")"
    else:
        timing_text = "timing not tested"
    return f"no account flagged and {timing_text} at family-wise alpha {ALPHA}"


# --- the tests -----------------------------------------------------------------------------


def _timing(profile: pl.DataFrame, kind: str) -> dict[str, Any]:
    """Chi-square homogeneity of exposed vs baseline over hours of day or days."""
    part = profile.filter(pl.col("profile") == kind).sort("bucket")
    res = stats.homogeneity(part["exposed"].to_list(), part["baseline"].to_list(), MIN_EXPECTED)
    name = "hour_of_day" if kind == "hour" else "day"
    unit = "hours of day (UTC)" if kind == "hour" else "UTC days"
    if res["statistic"] is None:
        detail = f"not testable: the counts fill fewer than two pooled groups of {unit}"
    else:
        detail = (
            f"chi-square homogeneity, exposed vs baseline over {len(part)} {unit} pooled into "
            f"{res['groups']} groups (expected >= {MIN_EXPECTED:g}), df={res['df']}"
        )
    return {
        "test": name,
        "statistic": res["statistic"],
        "p_value": res["p_value"],
        "detail": detail,
    }


def _holm_testable(p: dict[str, float], min_p: dict[str, float]) -> tuple[dict[str, float], int]:
    """Holm-adjusted p of the accounts whose smallest attainable p is <= ALPHA (Tarone)."""
    testable = sorted(a for a in p if min_p[a] <= ALPHA)
    adjusted = stats.holm([p[a] for a in testable])
    return dict(zip(testable, adjusted, strict=True)), len(testable)


def _family(test: str, adjusted: dict[str, float], tested: int, what: str) -> dict[str, Any]:
    hits = sum(1 for v in adjusted.values() if v < ALPHA)
    return {
        "test": test,
        "statistic": float(hits),
        "p_value": min(adjusted.values()) if adjusted else None,
        "detail": (
            f"{what}; Holm over {tested} testable account(s) at alpha {ALPHA}; statistic = "
            f"accounts flagged, p_value = smallest adjusted p"
        ),
    }


def _volume(rows: list[dict[str, Any]], n_exposed: int, n_baseline: int) -> dict[str, Any]:
    """Per account: exposed vs its own long-context volume at the overall exposed share."""
    total = n_exposed + n_baseline
    share = n_exposed / total
    for r in rows:
        r["expected"] = (r["exposed"] + r["baseline"]) * share
    tested = [r for r in rows if r["exposed"] + r["baseline"]]
    draws = [r["exposed"] + r["baseline"] for r in tested]
    ids = [r["account_id"] for r in tested]
    exposed = [r["exposed"] for r in tested]
    p = dict(zip(ids, stats.hypergeom_greater_each(exposed, total, n_exposed, draws), strict=True))
    min_p = dict(zip(ids, stats.hypergeom_min_p_each(total, n_exposed, draws), strict=True))
    adjusted, n_tested = _holm_testable(p, min_p)
    for r in rows:
        a = r["account_id"]
        r["p_value"] = p.get(a)
        r["adjusted_p"] = adjusted.get(a, 1.0 if a in p else None)
        if a in adjusted and adjusted[a] < ALPHA:
            r["reasons"].append(
                {
                    "test": "account_volume",
                    "statistic": float(r["exposed"]),
                    "p_value": p[a],
                    "adjusted_p": adjusted[a],
                    "detail": (
                        f"{r['exposed']} exposed of {r['exposed'] + r['baseline']} long-context "
                        f"requests; {r['expected']:.3g} expected at the overall exposed share "
                        f"{share:.4g} (one-sided Fisher exact)"
                    ),
                }
            )
    return _family(
        "account_volume",
        adjusted,
        n_tested,
        "exposed vs own long-context volume, one-sided Fisher exact",
    )


def _near_capacity(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per account: share of over-capacity prompts just above the capacity vs everyone's."""
    total = sum(r["over_capacity"] for r in rows)
    near = sum(r["near_capacity"] for r in rows)
    tested = [r for r in rows if r["over_capacity"]] if total and near else []
    draws = [r["over_capacity"] for r in tested]
    ids = [r["account_id"] for r in tested]
    hits = [r["near_capacity"] for r in tested]
    p = dict(zip(ids, stats.hypergeom_greater_each(hits, total, near, draws), strict=True))
    min_p = dict(zip(ids, stats.hypergeom_min_p_each(total, near, draws), strict=True))
    adjusted, n_tested = _holm_testable(p, min_p)
    for r in rows:
        a = r["account_id"]
        if a in adjusted and adjusted[a] < ALPHA:
            others = total - r["over_capacity"]
            r["reasons"].append(
                {
                    "test": "probe_near_capacity",
                    "statistic": float(r["near_capacity"]),
                    "p_value": p[a],
                    "adjusted_p": adjusted[a],
                    "detail": (
                        f"{r['near_capacity']} of {r['over_capacity']} over-capacity prompts "
                        f"within {NEAR_MARGIN:.0%} above the capacity; other accounts: "
                        f"{near - r['near_capacity']} of {others} (one-sided Fisher exact)"
                    ),
                }
            )
    return _family(
        "probe_near_capacity",
        adjusted,
        n_tested,
        f"over-capacity prompts within {NEAR_MARGIN:.0%} above the capacity vs all accounts, "
        "one-sided Fisher exact",
    )


def _bursts(rows: list[dict[str, Any]], bursts: pl.DataFrame) -> dict[str, Any]:
    """Per account: the most over-capacity prompts in one short window, given its activity.
    `bursts` holds windows, over_capacity, widest and pairs per account (classify/accounts).

    Null: given when the account sent its long-context requests, each is over the capacity
    with the other accounts' over-capacity share (add-one smoothed); windows start at each
    of its requests and are Bonferroni-corrected (`stats.binomial_scan_bound`).
    """
    total_n = int(bursts["windows"].sum()) if bursts.height else 0
    total_o = int(bursts["over_capacity"].sum()) if bursts.height else 0
    by_id = {r["account_id"]: r for r in rows}
    p: dict[str, float] = {}
    min_p: dict[str, float] = {}
    info: dict[str, tuple[float, tuple[int, int] | None]] = {}
    for b in bursts.iter_rows(named=True):
        a = b["account_id"]
        if a not in by_id or b["over_capacity"] < 2:
            continue
        share = (total_o - b["over_capacity"] + 1) / (total_n - b["windows"] + 2)
        min_p[a] = stats.binomial_scan_min_p(b["windows"], b["widest"], share)
        pairs = [(int(x["requests"]), int(x["over_capacity"])) for x in b["pairs"] or []]
        p[a], where = stats.binomial_scan_bound(b["windows"], pairs, share)
        info[a] = (share, where)
    adjusted, n_tested = _holm_testable(p, min_p)
    for a, adj in adjusted.items():
        if adj < ALPHA:
            r = by_id[a]
            share, where = info[a]
            n, o = where if where else (0, 0)
            r["reasons"].append(
                {
                    "test": "burst",
                    "statistic": float(o),
                    "p_value": p[a],
                    "adjusted_p": adj,
                    "detail": (
                        f"{o} over-capacity prompts among {n} long-context requests within "
                        f"{BURST_MINUTES} minutes (most over-capacity in one window: "
                        f"{r['max_burst']}); other accounts' over-capacity share {share:.4g}; "
                        "binomial tail, Bonferroni over the account's windows"
                    ),
                }
            )
    return _family(
        "burst",
        adjusted,
        n_tested,
        f"over-capacity prompts in {BURST_MINUTES}-minute windows given the account's own "
        "long-context activity, binomial scan bound",
    )


def _steps(by_id: dict[str, dict[str, Any]], steps: pl.DataFrame) -> dict[str, Any]:
    """Per account: longest strictly increasing run of sizes crossing the capacity."""
    p: dict[str, float] = {}
    min_p: dict[str, float] = {}
    info: dict[str, dict[str, Any]] = {}
    for s in steps.iter_rows(named=True):
        a = s["account_id"]
        if a not in by_id:
            continue
        sizes = [int(n) for n in s["session_sizes"]]
        run = int(s["longest_run"])
        by_id[a]["longest_step_run"] = run
        min_p[a] = stats.increasing_run_min_p(sizes)
        p[a] = stats.increasing_run_bound(run, sizes) if run >= 2 else 1.0
        info[a] = {**s, "sessions": len(sizes), "zone": int(s["zone_requests"])}
    adjusted, n_tested = _holm_testable(p, min_p)
    for a, adj in adjusted.items():
        if adj < ALPHA:
            s = info[a]
            by_id[a]["reasons"].append(
                {
                    "test": "probe_steps",
                    "statistic": float(s["longest_run"]),
                    "p_value": p[a],
                    "adjusted_p": adj,
                    "detail": (
                        f"{s['longest_run']} strictly increasing prompt sizes from "
                        f"{s['run_min']} to {s['run_max']} crossing the capacity between "
                        f"{iso(s['run_start'])} and {iso(s['run_end'])}; {s['zone']} prompts "
                        f"within {STEP_ZONE:.0%} of the capacity in {s['sessions']} session(s) "
                        "(bound: stretches / L! under random order)"
                    ),
                }
            )
    return _family(
        "probe_steps",
        adjusted,
        n_tested,
        f"longest increasing run of prompt sizes crossing the capacity (within {STEP_ZONE:.0%} "
        f"of it, sessions split at {SESSION_MINUTES}-minute gaps), random-order bound",
    )


# --- output --------------------------------------------------------------------------------


def _rounded(item: dict[str, Any]) -> dict[str, Any]:
    """A copy with floats at 6 significant digits and keys sorted."""
    out = {}
    for k in sorted(item):
        v = item[k]
        out[k] = stats.significant(v) if isinstance(v, float) else v
    return out


def _store(engine: SQLEngine, result: Classification) -> None:
    """Materialize classification_accounts and classification_tests (sorted rows)."""
    accounts = pl.DataFrame(
        [
            {
                **{k: a[k] for k in _ACCOUNT_SCHEMA if k != "reasons"},
                "expected": stats.significant(a["expected"]),
                "p_value": stats.significant(a["p_value"]),
                "adjusted_p": stats.significant(a["adjusted_p"]),
                "reasons": json.dumps(
                    [_rounded(r) for r in a["reasons"]], sort_keys=True, separators=(",", ":")
                ),
            }
            for a in result.accounts
        ],
        schema=_ACCOUNT_SCHEMA,
    )
    tests = pl.DataFrame(
        [
            {
                "test": t["test"],
                "statistic": stats.significant(t["statistic"]),
                "p_value": stats.significant(t["p_value"]),
                "detail": t["detail"],
            }
            for t in result.tests
        ],
        schema=_TEST_SCHEMA,
    )
    engine.write_frame("classification_accounts", accounts, "account_id")
    engine.write_frame("classification_tests", tests, "test")
