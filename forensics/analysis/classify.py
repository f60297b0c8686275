"""Usage classification: were the exposed requests normal long-context usage, or exploitation?

`classify(engine, case, exclusions)` compares the exposed requests (band 'exposed' of the
`bands` table) with the baseline of normal long-context usage (band 'fits', account not
excluded, prompt >= case.baseline.min_prompt_tokens, served while the capacity in force was
below the context window, i.e. while exposure was possible) in timing (hour of day, day)
and per account (volume, bursts, probing near the capacity), and tests every account in scope
for the signatures of cache-probing attacks (tiny `max_tokens`, near-simultaneous prompts of
near-identical length, prompts that start with another account's leading blocks), the first
and last where a mapping keeps the fields in `extra` (`max_tokens`; `prefix_hash` or a list
`hash_ids`). Counting is SQL (`queries/classify/*.sql`); only per-account and per-bucket
aggregates reach Python, where SciPy does the statistics (`forensics.stats`). It materializes
`classification_accounts`, `classification_tests` and `classification_profile` for the report.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from ..case import Case
from ..engines import SQLEngine, needing
from ..errors import AnalysisError, ForensicsError, command
from ..formats import iso
from ..mapping import ENGINE_FORMATS, load_mapping, mapping_digest, profile
from ..schema import DEFAULT_STATUS
from . import scope, stats

ALPHA = 0.01  # family-wise error rate of each test family
MIN_EXPOSED = 5  # fewer exposed requests than this: insufficient_data
MIN_BASELINE = 30  # fewer baseline requests than this: insufficient_data
BURST_MINUTES = 10  # width of the burst window (divides 60)
NEAR_MARGIN = 0.02  # "just above the capacity": at most 2 % above it
STEP_ZONE = 0.05  # stepping is looked for within 5 % either side of the capacity
SESSION_MINUTES = 30  # near-capacity prompts of an account this close belong to one session
MIN_EXPECTED = 5.0  # chi-square cells are pooled until their expected count reaches this
TINY_MAX_TOKENS = 4  # a completion limit this small asks for a token or two: a probe
ECHO_SECONDS = 10  # a prompt this soon after the account's previous one ...
ECHO_TOKENS = 16  # ... and at most this many tokens longer or shorter is an echo
PREFIX_BLOCKS = 2  # a fingerprint is the first two block hashes (queries/classify/fields.sql)
# the probing tests that read fields a mapping keeps in `extra`, and those fields
PROBE_FIELDS = frozenset({"max_tokens", "prefix_hash", "hash_ids"})  # classify/fields.sql
FIELD_TESTS = {
    "probe_max_tokens": "max_tokens",
    "probe_prefix": "prefix_hash or hash_ids",
}

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
    "tiny_max_tokens": pl.Int64,
    "length_echoes": pl.Int64,
    "prefix_matches": pl.Int64,
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
            "tiny_max_tokens": 0,
            "length_echoes": 0,
            "prefix_matches": 0,
        }
        for r in accounts.iter_rows(named=True)
    ]

    # the probing signatures compare each account with every other in the window, not the
    # exposed requests with the baseline: they run however few exposed requests there are
    lengths = engine.frame(
        "classify/lengths",
        echo_seconds=ECHO_SECONDS,
        echo_tokens=ECHO_TOKENS,
        default_status=DEFAULT_STATUS,
    )
    has_requests = engine.table_exists("requests")
    if has_requests:
        scope.ensure_scope(engine, case)  # the fields are read from the case's own requests
    fields = (
        engine.frame("classify/fields", tiny_max_tokens=TINY_MAX_TOKENS)
        if has_requests
        and fields_possible(engine, case)
        and engine.frame(
            "classify/has_fields", window_start=case.window_start, window_end=case.window_end
        )["present"][0]
        else None
    )
    probing, missing = _probing(rows, lengths, fields, has_requests)

    if n_exposed < MIN_EXPOSED or n_baseline < MIN_BASELINE:
        too_few = (
            f"{n_exposed} exposed and {n_baseline} baseline requests; the tests of timing and "
            f"volume need at least {MIN_EXPOSED} exposed and {MIN_BASELINE} baseline requests"
        )
        flagged = _flag(rows)
        if flagged:
            verdict, reason = "anomalous", f"{_flagged_reason(rows, flagged)}; {too_few}"
        else:
            verdict, reason = "insufficient_data", too_few
            tested = [t["test"] for t in probing if t["test"] not in missing]
            if tested:
                reason += "; no account flagged by " + ", ".join(tested)
        result = Classification(
            verdict=verdict,
            flagged_accounts=flagged,
            exclusions=exclusions,
            exposed=n_exposed,
            baseline=n_baseline,
            tests=probing,
            accounts=rows,
            reason=reason + _missing_reason(missing),
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
    tests.extend(probing)
    order = {t["test"]: i for i, t in enumerate(tests)}
    for r in rows:  # the probing reasons were given first: list each row's in the tests' order
        r["reasons"].sort(key=lambda x: order[x["test"]])

    flagged = _flag(rows)
    timing_off = [t["test"] for t in tests[:2] if t["p_value"] is not None and t["p_value"] < ALPHA]
    untested = [t["test"] for t in tests if t["p_value"] is None and t["test"] not in missing]
    if flagged or timing_off:
        verdict = "anomalous"
        parts = [_flagged_reason(rows, flagged)] if flagged else []
        if timing_off:
            parts.append("timing differs from the baseline (" + ", ".join(timing_off) + ")")
        reason = "; ".join(parts)
    else:
        verdict = "consistent_with_normal_usage"
        reason = _consistent_reason(tests[:2], untested)
    if untested:
        reason += "; not testable on these counts: " + ", ".join(untested)
    reason += _missing_reason(missing)
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


def fields_possible(engine: SQLEngine, case: Case) -> bool:
    """Whether a request of the case may keep a probing field (`PROBE_FIELDS`) in `extra`:
    ingest writes a mapping's `extra` as an object of exactly its `[extra]` keys (NULL with
    none; the `canonical` profile keeps the log's own), so none can when every request-log
    input of the case was loaded with the mapping of a case `[[source]]` (the digest `inputs`
    records) whose `[extra]` names none of them. Otherwise (a source that keeps the log's own
    `extra`, an input loaded with another mapping, or one whose mapping was not recorded) the
    text search of classify/has_fields.sql decides."""
    keep_none: set[str] = set()
    for source in case.sources:
        try:
            m = (
                load_mapping(source.mapping, check_sql=False)
                if source.mapping is not None
                else profile(str(source.profile))
            )
        except ForensicsError:
            continue  # not readable now: the text search decides
        engine_log = m.format in ENGINE_FORMATS
        if not engine_log and not m.keep_extra_column and not PROBE_FIELDS & set(m.extra):
            keep_none.add(mapping_digest(m))
    if not keep_none or not engine.table_exists("inputs"):
        return True
    inputs = engine.frame("classify/inputs")
    if "mapping_sha256" not in inputs.columns:
        return True  # a database from before the digest was recorded
    unnamed = set(scope.unnamed_inputs(engine))
    loaded_with = {
        r["mapping_sha256"]
        for r in inputs.iter_rows(named=True)
        if r.get("format") not in ENGINE_FORMATS and r["path"] not in unnamed
    }
    return not loaded_with or not loaded_with <= keep_none


def _flag(rows: list[dict[str, Any]]) -> list[str]:
    """Marks each row flagged when a test gave it a reason; the flagged accounts, sorted."""
    for r in rows:
        r["flagged"] = bool(r["reasons"])
    return sorted(r["account_id"] for r in rows if r["reasons"])


def _flagged_reason(rows: list[dict[str, Any]], flagged: list[str]) -> str:
    """`N account(s) flagged (tests)`: the tests that flagged them."""
    found = sorted({str(x["test"]) for r in rows for x in r["reasons"]})
    return f"{len(flagged)} account(s) flagged ({', '.join(found)})"


def _missing_reason(missing: list[str]) -> str:
    """The tests not testable for want of their fields in the logs, as a reason's tail."""
    if not missing:
        return ""
    return "; not testable without their fields: " + ", ".join(
        f"{test} ({FIELD_TESTS[test]})" for test in missing
    )


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


def _holm_testable(p: dict[str, float], testable: set[str]) -> tuple[dict[str, float], int]:
    """Holm-adjusted p of the `testable` accounts: those whose smallest attainable p is
    <= ALPHA (Tarone; `_attainable`, or the test's own smallest p)."""
    tested = sorted(a for a in p if a in testable)
    adjusted = stats.holm([p[a] for a in tested])
    return dict(zip(tested, adjusted, strict=True)), len(tested)


def _attainable(ids: list[str], total: int, successes: int, draws: list[int]) -> set[str]:
    """The accounts of `ids` (with their `draws`) whose smallest attainable one-sided Fisher
    p is <= ALPHA (`stats.hypergeom_testable_each`)."""
    flags = stats.hypergeom_testable_each(total, successes, draws, ALPHA)
    return {a for a, ok in zip(ids, flags, strict=True) if ok}


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
    adjusted, n_tested = _holm_testable(p, _attainable(ids, total, n_exposed, draws))
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
    adjusted, n_tested = _holm_testable(p, _attainable(ids, total, near, draws))
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
    adjusted, n_tested = _holm_testable(p, {a for a in p if min_p[a] <= ALPHA})
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
    adjusted, n_tested = _holm_testable(p, {a for a in p if min_p[a] <= ALPHA})
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


def _probing(
    rows: list[dict[str, Any]],
    lengths: pl.DataFrame,
    fields: pl.DataFrame | None,
    has_requests: bool = True,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The probing signatures of every account in scope (`lengths`: classify/lengths.sql;
    `fields`: classify/fields.sql, None when no request holds such a field or the store has
    no requests table, `has_requests` False): per signature, each
    account's share of its requests that show it against every account's (`_share`). Fills
    each row's counts; an account outside the long-context stream is added to `rows` (sorted
    again) when a test flags it. Returns the tests and those not testable for want of their
    fields in the logs (FIELD_TESTS)."""
    by_id = {r["account_id"]: r for r in rows}
    added: dict[str, dict[str, Any]] = {}

    def row(account: str) -> dict[str, Any]:
        if account not in by_id:
            added[account] = by_id[account] = _blank_row(account)
        return by_id[account]

    echoes = {
        r["account_id"]: (int(r["length_echoes"]), int(r["requests"]))
        for r in lengths.iter_rows(named=True)
    }
    tests = [
        _share(
            row,
            echoes,
            "probe_length_burst",
            f"requests within {ECHO_SECONDS} s of the account's previous one with a prompt "
            f"within {ECHO_TOKENS} tokens of it (both delivered) vs all accounts, one-sided "
            "Fisher exact",
            lambda k, n, others: (
                f"{k} of {n} requests came within {ECHO_SECONDS} s of the account's previous "
                f"one with a prompt within {ECHO_TOKENS} tokens of it, both delivered; other "
                f"accounts: {others} (one-sided Fisher exact)"
            ),
        )
    ]
    frame = fields if fields is not None else pl.DataFrame()
    got = list(frame.iter_rows(named=True))
    tiny = {r["account_id"]: (int(r["tiny_max_tokens"]), int(r["with_max_tokens"])) for r in got}
    prefix = {r["account_id"]: (int(r["prefix_matches"]), int(r["with_prefix"])) for r in got}
    sources = {r["account_id"]: int(r["prefix_accounts"]) for r in got}
    missing = []
    for test, counts in (("probe_max_tokens", tiny), ("probe_prefix", prefix)):
        if not any(n for _, n in counts.values()):
            missing.append(test)
    if "probe_max_tokens" in missing:
        tests.append(_not_mapped("probe_max_tokens", "max_tokens", not has_requests))
    else:
        tests.append(
            _share(
                row,
                tiny,
                "probe_max_tokens",
                f"requests asking for at most {TINY_MAX_TOKENS} completion tokens (max_tokens) "
                "vs all accounts, one-sided Fisher exact",
                lambda k, n, others: (
                    f"{k} of {n} requests asked for at most {TINY_MAX_TOKENS} completion tokens "
                    f"(max_tokens); other accounts: {others} (one-sided Fisher exact)"
                ),
            )
        )
    if "probe_prefix" in missing:
        tests.append(
            _not_mapped(
                "probe_prefix",
                f"prefix_hash, or hash_ids with at least {PREFIX_BLOCKS} block hashes",
                not has_requests,
            )
        )
    else:
        tests.append(
            _share(
                row,
                prefix,
                "probe_prefix",
                f"requests beginning with a prefix (prefix_hash, else the first {PREFIX_BLOCKS} "
                "block hashes) another account sent earlier vs all accounts, one-sided Fisher "
                "exact",
                lambda k, n, others: (
                    f"{k} of {n} requests began with a prefix (prefix_hash, else the first "
                    f"{PREFIX_BLOCKS} block hashes) another account had sent earlier; other "
                    f"accounts: {others} (one-sided Fisher exact)"
                ),
                extra=lambda a: (
                    f"; the prefixes were first sent by {sources.get(a, 0)} other account(s)"
                ),
            )
        )
    for account, r in by_id.items():
        r["tiny_max_tokens"] = tiny.get(account, (0, 0))[0]
        r["length_echoes"] = echoes.get(account, (0, 0))[0]
        r["prefix_matches"] = prefix.get(account, (0, 0))[0]
    if added:
        rows.extend(added.values())
        rows.sort(key=lambda r: r["account_id"])
    return tests, missing


def _blank_row(account: str) -> dict[str, Any]:
    """The row of an account outside the long-context stream: no exposed or baseline request."""
    return {
        "account_id": account,
        "exposed": 0,
        "baseline": 0,
        "expected": None,
        "p_value": None,
        "adjusted_p": None,
        "flagged": False,
        "reasons": [],
        "over_capacity": 0,
        "near_capacity": 0,
        "max_burst": 0,
        "longest_step_run": 0,
        "tiny_max_tokens": 0,
        "length_echoes": 0,
        "prefix_matches": 0,
    }


def _share(
    row: Callable[[str], dict[str, Any]],
    counts: dict[str, tuple[int, int]],
    test: str,
    what: str,
    detail: Callable[[int, int, str], str],
    extra: Callable[[str], str] | None = None,
) -> dict[str, Any]:
    """Per account: its requests showing a signature (k of its n) against every account's
    (`counts`: account -> (k, n)), one-sided Fisher exact; Holm over the accounts whose
    smallest attainable p is <= ALPHA (Tarone), as the other per-account tests. A flagged
    account gets the reason (`detail(k, n, others)`, then `extra(account)` when given);
    `row(account)` gives its row."""
    total = sum(n for _, n in counts.values())
    hits = sum(k for k, _ in counts.values())
    ids = sorted(a for a, (_, n) in counts.items() if n) if total and hits else []
    draws = [counts[a][1] for a in ids]
    p = dict(
        zip(
            ids,
            stats.hypergeom_greater_each([counts[a][0] for a in ids], total, hits, draws),
            strict=True,
        )
    )
    adjusted, n_tested = _holm_testable(p, _attainable(ids, total, hits, draws))
    for a, adj in sorted(adjusted.items()):
        if adj < ALPHA:
            k, n = counts[a]
            others = f"{hits - k} of {total - n}"
            text = detail(k, n, others) + (extra(a) if extra is not None else "")
            row(a)["reasons"].append(
                {
                    "test": test,
                    "statistic": float(k),
                    "p_value": p[a],
                    "adjusted_p": adj,
                    "detail": text,
                }
            )
    return _family(test, adjusted, n_tested, what)


def _not_mapped(test: str, field_name: str, no_requests: bool) -> dict[str, Any]:
    """A probing test the logs give no field for: not testable, with why."""
    where = (
        "the case database holds no requests table"
        if no_requests
        else f"no request of the case's models in the window carries {field_name}"
    )
    return {
        "test": test,
        "statistic": None,
        "p_value": None,
        "detail": f"not testable: {where} (a source mapping keeps it in [extra])",
    }


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
