"""Pure statistics behind the usage classification (small aggregates in, numbers out).

Every function takes counts already aggregated in SQL; none touches the database.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import special, stats


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values (family-wise error control), in the input order."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def hypergeom_greater(k: int, total: int, successes: int, draws: int) -> float:
    """One-sided Fisher exact p: P(X >= k) for X ~ Hypergeom(total, successes, draws)."""
    return hypergeom_greater_each([k], total, successes, [draws])[0]


def hypergeom_greater_each(
    ks: Sequence[int], total: int, successes: int, draws: Sequence[int]
) -> list[float]:
    """`hypergeom_greater(k, total, successes, n)` for each (k, n) of `ks` and `draws`, in one
    SciPy call (element by element: the same floats as one call each)."""
    if not ks:
        return []
    tails = stats.hypergeom.sf(
        np.asarray(ks, dtype=np.int64) - 1, total, successes, np.asarray(draws, dtype=np.int64)
    )
    return [1.0 if k <= 0 else float(min(1.0, t)) for k, t in zip(ks, tails, strict=True)]


def hypergeom_min_p_each(total: int, successes: int, draws: Sequence[int]) -> list[float]:
    """For each n of `draws`, the smallest p `hypergeom_greater` can give for these margins
    (Tarone's testability), in one SciPy call."""
    return hypergeom_greater_each([min(successes, n) for n in draws], total, successes, draws)


def hypergeom_testable_each(
    total: int, successes: int, draws: Sequence[int], alpha: float
) -> list[bool]:
    """For each n of `draws`, whether `hypergeom_min_p_each` gives at most `alpha` (Tarone's
    testability), in the same order. The smallest p is P(X = min(successes, n)), X at most
    that: its log is taken in closed form (log-gamma, vectorized), and SciPy's tail, the
    float `hypergeom_min_p_each` compares, is computed only for the draws whose closed form
    lies too near `alpha` to decide (SciPy's tail is a summation per draw: ~90 ms for 5,000
    accounts, the closed form 0.3 ms)."""
    if not draws:
        return []
    n = np.asarray(draws, dtype=np.float64)
    m = np.minimum(float(successes), n)
    lg = special.gammaln
    log_p = (
        lg(successes + 1.0)
        - lg(m + 1.0)
        - lg(successes - m + 1.0)
        + lg(total - successes + 1.0)
        - lg(n - m + 1.0)
        - lg(total - successes - (n - m) + 1.0)
        - lg(total + 1.0)
        + lg(n + 1.0)
        + lg(total - n + 1.0)
    )
    # the closed form's rounding grows with the size of the log-gamma terms it sums
    margin = 1e-6 + 1e-12 * float(lg(total + 1.0))
    limit = math.log(alpha)
    testable = [bool(v < limit) for v in log_p]
    near = [i for i, v in enumerate(log_p) if not abs(v - limit) > margin]
    if near:
        exact = hypergeom_min_p_each(total, successes, [int(draws[i]) for i in near])
        for i, p in zip(near, exact, strict=True):
            testable[i] = p <= alpha
    return testable


def pooled_bins(expected: Sequence[float], min_expected: float) -> list[list[int]]:
    """Group consecutive bins until each group's expected count reaches `min_expected`.

    A short remainder at the end joins the last group. Returns lists of bin indices.
    """
    groups: list[list[int]] = []
    current: list[int] = []
    acc = 0.0
    for i, e in enumerate(expected):
        current.append(i)
        acc += e
        if acc >= min_expected:
            groups.append(current)
            current, acc = [], 0.0
    if current:
        if groups:
            groups[-1].extend(current)
        else:
            groups.append(current)
    return groups


def homogeneity(
    exposed: Sequence[int], baseline: Sequence[int], min_expected: float = 5.0
) -> dict[str, object]:
    """Chi-square test that exposed and baseline requests share one distribution over bins.

    Consecutive bins are pooled until every cell's expected count is >= `min_expected`.
    Returns statistic, p_value, df and groups (None statistic when fewer than two groups).
    """
    e = np.asarray(exposed, dtype=float)
    b = np.asarray(baseline, dtype=float)
    n_e, n_b = e.sum(), b.sum()
    if n_e == 0 or n_b == 0:
        return {"statistic": None, "p_value": None, "df": 0, "groups": 0}
    total = e + b
    # the smaller of the two rows decides whether a cell is sparse
    smaller = min(n_e, n_b) / (n_e + n_b)
    groups = pooled_bins(list(total * smaller), min_expected)
    if len(groups) < 2:
        return {"statistic": None, "p_value": None, "df": 0, "groups": len(groups)}
    table = np.array([[e[g].sum() for g in groups], [b[g].sum() for g in groups]])
    result = stats.chi2_contingency(table, correction=False)
    return {
        "statistic": float(result.statistic),
        "p_value": float(result.pvalue),
        "df": int(result.dof),
        "groups": len(groups),
    }


def binomial_scan_bound(
    windows: int, pairs: Sequence[tuple[int, int]], share: float
) -> tuple[float, tuple[int, int] | None]:
    """Bound on the most extreme window of an account, and that window's (requests, over).

    Null: given when the account's long-context requests came, each one is over the
    capacity independently with probability `share`. A window's tail is
    P(Binom(requests, share) >= over); the smallest tail over `windows` windows is
    Bonferroni-corrected: p <= windows * min tail. `pairs` lists the windows that can matter.
    """
    best, where = 1.0, None
    if pairs:  # one SciPy call for every window: element by element, the same floats
        sizes = np.asarray([requests for requests, _ in pairs], dtype=np.int64)
        overs = np.asarray([over for _, over in pairs], dtype=np.int64)
        for (requests, over), value in zip(
            pairs, stats.binom.sf(overs - 1, sizes, share), strict=True
        ):
            tail = float(value)
            if tail < best or (tail == best and where is None):
                best, where = tail, (requests, over)
    return float(min(1.0, windows * best)), where


def binomial_scan_min_p(windows: int, widest: int, share: float) -> float:
    """The smallest `binomial_scan_bound` these windows allow (every request over)."""
    if widest < 2:
        return 1.0
    return float(min(1.0, windows * share**widest))


def increasing_run_bound(run_length: int, session_sizes: Sequence[int]) -> float:
    """Upper bound on P(a strictly increasing run of `run_length` consecutive sizes).

    Null: within each session the order of the sizes is random (exchangeable); a given
    stretch of L is strictly increasing with probability <= 1/L!, summed over every stretch.
    """
    if run_length < 2:
        return 1.0
    stretches = sum(max(0, n - run_length + 1) for n in session_sizes)
    return float(min(1.0, stretches / math.factorial(run_length)))


def increasing_run_min_p(session_sizes: Sequence[int]) -> float:
    """The smallest bound `increasing_run_bound` can give for these sessions."""
    if not session_sizes or max(session_sizes) < 2:
        return 1.0
    return min(increasing_run_bound(L, session_sizes) for L in range(2, max(session_sizes) + 1))


def significant(value: float | None, digits: int = 6) -> float | None:
    """`value` rounded to `digits` significant digits (None and 0 kept)."""
    if value is None or value == 0 or not math.isfinite(value):
        return value
    return float(f"{value:.{digits}g}")
