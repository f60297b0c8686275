"""The synthetic traffic model behind `forensics sample` and the bundled GLM-5.3 case.

It reproduces the reference incident's calendar (docs/index.md) at any size: a gateway that
serves `@cf/zai-org/glm-5.3` from its launch and the unaffected `@cf/zai-org/glm-5.2`
throughout, ordinary customers with a diurnal pattern and heavy-tailed prompt lengths, a
few long-context customers, the operator's test accounts and a security researcher.

The exposure is placed by design: ordinary customers' prompts inside the vulnerable window
stay at or below the prefill capacity, except exactly `exposed` requests (status 200) plus a
few that failed (non-200) or exceeded the context window. Their hours and accounts are drawn
from the long-context customers' own traffic intensity, so they look like normal usage.

Rows are produced hour by hour from per-hour seeded generators, so the output does not
depend on how hours are grouped into chunks; memory stays flat at any size.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
from scipy.special import ndtr, ndtri

from ..schema import BANDS

# --- the incident's calendar and figures (docs/index.md) ---------------------------------


def _us(text: str) -> int:
    return int(datetime.fromisoformat(text).astimezone(UTC).timestamp()) * 1_000_000


HOUR = 3_600_000_000
SPAN_START = _us("2026-08-20T00:00:00+00:00")
SPAN_END = _us("2026-09-12T00:00:00+00:00")
HOURS = (SPAN_END - SPAN_START) // HOUR
WINDOW_START = _us("2026-08-27T00:00:00+00:00")
LAUNCH = _us("2026-08-27T15:00:00+00:00")
PRIVATE = _us("2026-09-09T14:00:00+00:00")
FIXED = _us("2026-09-09T14:52:00+00:00")  # window end: all prefill nodes reconfigured
REBUILT = _us("2026-09-09T19:04:00+00:00")
PUBLIC = _us("2026-09-09T19:40:00+00:00")
WINDOW_END = FIXED

MODEL_53 = "@cf/zai-org/glm-5.3"
MODEL_52 = "@cf/zai-org/glm-5.2"
MODELS = (MODEL_53, MODEL_52)
CONTEXT_WINDOW = 1_048_576
PREFILL_CAPACITY = 681_280  # until FIXED
PREFILL_CAPACITY_FIXED = 2_039_808  # from FIXED, about twice the window
DECODE_CAPACITY = 1_302_528
PREFILL_CAPACITY_52 = 2_039_808  # glm-5.2's own prefill pool: it holds a full context window


def reject_from(pool: int, context_len: int = CONTEXT_WINDOW) -> int:
    """SGLang's admission limit for a plain pool: the smallest prompt its scheduler refuses,
    min(context_len - 1, pool - 1) - 5 (tp_worker.py max_req_input_len)."""
    return min(context_len - 1, pool - 1) - 5


BASELINE_MIN = 131_072
SUCCESS = (200,)
REFERENCE_REQUESTS = 72_000  # the bundled case's size, where `exposed` is 155
REFERENCE_EXPOSED = 155

PREFILL_NODES = ("prefill-a1", "prefill-a2", "prefill-a3", "prefill-a4")  # glm-5.3
DECODE_NODES = ("decode-b1", "decode-b2", "decode-b3", "decode-b4")
PREFILL_NODES_52 = ("prefill-c1", "prefill-c2")  # glm-5.2
DECODE_NODES_52 = ("decode-d1", "decode-d2")
NODES = PREFILL_NODES + DECODE_NODES + PREFILL_NODES_52 + DECODE_NODES_52  # code -> name

# Gateway colos: (name, UTC offset the colo's log writer uses, fractional digits).
COLOS = (
    ("SJC", "-07:00", 3),
    ("IAD", "-04:00", 6),
    ("ORD", "Z", 3),
    ("FRA", "+02:00", 3),
    ("LHR", "Z", 6),
    ("SIN", "Z", 3),
    ("NRT", "+09:00", 6),
)
# Customer regions: (name, UTC offset of local office hours, share of accounts, colo codes).
REGIONS = (
    ("us-west", -7, 0.22, (0,)),
    ("us-east", -4, 0.30, (1, 2)),
    ("europe", 2, 0.26, (3, 4)),
    ("singapore", 8, 0.12, (5,)),
    ("japan", 9, 0.10, (6,)),
)

# Component codes (also the tie-break order inside an hour).
BG52, BG53, PRIVATE404, LONG53, LONG52, PLACED, SCRIPTED = range(7)

OPS_QA = "acct-ops-qa-1"
OPS_REPRO = ("acct-ops-repro-a", "acct-ops-repro-b")
RESEARCHER = "acct-5e1f0c93d2"
INTERNAL = "internal-test"
RESEARCH = "security-researcher"


# --- small helpers ----------------------------------------------------------------------------


def permute(i: np.ndarray, bits: int, key: int) -> np.ndarray:
    """A keyed bijection on [0, 2**bits): unique, random-looking ids from sequence numbers."""
    mask = np.uint64((1 << bits) - 1)
    x = i.astype(np.uint64)
    k = np.uint64(key & ((1 << bits) - 1))
    with np.errstate(over="ignore"):
        for mult in (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB):
            x = (x + k) & mask
            x = (x * np.uint64(mult | 1)) & mask
            x ^= x >> np.uint64(bits // 2 + 1)
    return x


def _diurnal(local_hour: np.ndarray) -> np.ndarray:
    """Relative request intensity by local hour of day: office hours, a quiet night."""
    h = np.asarray(local_hour, dtype=float)
    return 0.18 + np.exp(-(((h - 14.0) / 4.2) ** 2)) + 0.35 * np.exp(-(((h - 21.0) / 2.0) ** 2))


def _hour_starts() -> np.ndarray:
    return SPAN_START + np.arange(HOURS, dtype=np.int64) * HOUR


def _weekday(us: np.ndarray) -> np.ndarray:
    days = us // (24 * HOUR)
    return (days + 3) % 7  # 1970-01-01 was a Thursday; 0 = Monday


def _trunc_pareto(rng: np.random.Generator, n: int, lo: float, hi: float) -> np.ndarray:
    """Pareto(alpha=1.05, xm=BASELINE_MIN) prompt lengths, conditioned on (lo, hi]."""
    a = 1.05

    def cdf(x: float) -> float:
        return 1.0 - (BASELINE_MIN / x) ** a

    u = rng.uniform(cdf(lo), cdf(hi), n)
    x = BASELINE_MIN * (1.0 - u) ** (-1.0 / a)
    return np.clip(np.floor(x).astype(np.int64) + 1, int(lo) + 1, int(hi))


def _trunc_lognormal(
    rng: np.random.Generator, n: int, median: float, sigma: float, hi: float
) -> np.ndarray:
    """Log-normal lengths below `hi` (ordinary prompts), by inverse CDF."""
    zmax = (np.log(hi) - np.log(median)) / sigma
    u = rng.uniform(0.0, ndtr(zmax), n)
    x = np.exp(np.log(median) + sigma * ndtri(u))
    return np.clip(np.floor(x).astype(np.int64), 8, int(hi) - 1)


# --- accounts -------------------------------------------------------------------------------

_ADJ = [
    "blue",
    "amber",
    "north",
    "quiet",
    "rapid",
    "silver",
    "bright",
    "cedar",
    "harbor",
    "iron",
    "lunar",
    "maple",
    "nova",
    "orbit",
    "pine",
    "polar",
    "river",
    "sable",
    "solar",
    "stone",
    "summit",
    "tidal",
    "urban",
    "vector",
    "willow",
    "zephyr",
    "copper",
    "crimson",
    "delta",
    "ember",
]
_NOUN = [
    "labs",
    "works",
    "systems",
    "analytics",
    "robotics",
    "health",
    "logistics",
    "finance",
    "studio",
    "data",
    "cloud",
    "bio",
    "media",
    "security",
    "learning",
    "markets",
    "energy",
    "legal",
    "mobility",
    "games",
    "retail",
    "insight",
    "code",
    "foundry",
    "signal",
    "forge",
    "atlas",
    "pilot",
    "bridge",
]
_SUFFIX = ("Inc.", "Ltd", "GmbH", "AI", "Labs", "Co.", "BV", "KK")
_PLANS = ("free", "pro", "pro", "team", "team", "enterprise")


@dataclass
class Accounts:
    """Every account of a generated case: ids, contact columns, regions, activity weights."""

    ids: list[str]
    names: list[str]
    emails: list[str]
    plans: list[str]
    regions: list[str]
    region: np.ndarray  # region code per account (ordinary accounts)
    weight: np.ndarray  # ordinary activity weight (0 for special accounts)
    long_idx: np.ndarray  # long-context customers
    long_weight: np.ndarray  # their long-context intensity weights (sum 1)
    ops_qa: int = 0
    ops_repro: tuple[int, int] = (0, 0)
    researcher: int = 0
    excluded: dict[int, str] = field(default_factory=dict)
    _members: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def members(self, region: int) -> tuple[np.ndarray, np.ndarray]:
        """Ordinary accounts of a region and their activity probabilities (cached)."""
        if region not in self._members:
            idx = np.flatnonzero((self.region == region) & (self.weight > 0))
            self._members[region] = (idx, self.weight[idx] / self.weight[idx].sum())
        return self._members[region]

    def exclusion_codes(self) -> np.ndarray:
        """Per account: its exclusion reason, or '' when kept."""
        return np.array([self.excluded.get(a, "") for a in range(len(self.ids))], dtype=object)

    @classmethod
    def build(cls, n: int, n_long: int, seed: int) -> Accounts:
        rng = np.random.default_rng([seed, 101])
        keys = permute(np.arange(n), 40, seed * 7919 + 17)
        ids = [f"acct-{k:010x}" for k in keys.tolist()]
        combo = rng.permutation(len(_ADJ) * len(_NOUN) * len(_SUFFIX))
        names, emails = [], []
        for i in range(n):
            c = int(combo[i % len(combo)])
            adj, noun, suf = (
                _ADJ[c % len(_ADJ)],
                _NOUN[(c // len(_ADJ)) % len(_NOUN)],
                _SUFFIX[c // (len(_ADJ) * len(_NOUN))],
            )
            rep = i // len(combo)
            names.append(f"{adj.title()} {noun.title()} {suf}" + (f" {rep + 1}" if rep else ""))
            domain = f"{adj}{noun}" + (str(rep + 1) if rep else "")
            emails.append(f"security@{domain}.example.com")
        shares = np.array([r[2] for r in REGIONS])
        region = rng.choice(len(REGIONS), n, p=shares / shares.sum())
        weight = rng.pareto(1.3, n) + 0.05  # a few big customers, many small ones
        plans = [_PLANS[int(j)] for j in rng.integers(0, len(_PLANS), n)]
        long_idx = np.sort(rng.choice(n, n_long, replace=False))
        for j in long_idx.tolist():
            plans[j] = "enterprise"
        long_weight = rng.lognormal(0.0, 0.8, n_long)
        acc = cls(
            ids=ids,
            names=names,
            emails=emails,
            plans=plans,
            regions=[REGIONS[int(r)][0] for r in region],
            region=region,
            weight=weight / weight.sum(),
            long_idx=long_idx,
            long_weight=long_weight / long_weight.sum(),
        )
        acc._add_special()
        return acc

    def _add(self, account_id: str, name: str, email: str, plan: str, region: int) -> int:
        self.ids.append(account_id)
        self.names.append(name)
        self.emails.append(email)
        self.plans.append(plan)
        self.regions.append(REGIONS[region][0])
        self.region = np.append(self.region, region)
        self.weight = np.append(self.weight, 0.0)
        return len(self.ids) - 1

    def _add_special(self) -> None:
        self.ops_qa = self._add(
            OPS_QA, "Operator QA (internal)", "llm-qa@operator.example.com", "internal", 1
        )
        self.ops_repro = (
            self._add(
                OPS_REPRO[0],
                "Operator security repro A",
                "psirt@operator.example.com",
                "internal",
                1,
            ),
            self._add(
                OPS_REPRO[1],
                "Operator security repro B",
                "psirt@operator.example.com",
                "internal",
                3,
            ),
        )
        self.researcher = self._add(
            RESEARCHER, "Bug bounty researcher #4471", "researcher4471@mail.example.org", "free", 3
        )
        self.excluded = {
            self.ops_qa: INTERNAL,
            self.ops_repro[0]: INTERNAL,
            self.ops_repro[1]: INTERNAL,
            self.researcher: RESEARCH,
        }


# --- rows -----------------------------------------------------------------------------------

COLUMNS = (
    "ts",  # int64 us since epoch, arrival
    "comp",  # int8 component
    "acct",  # int32 account index
    "model",  # int8 index into MODELS
    "prompt",  # int64
    "completion",  # int64
    "status",  # int16
    "prefill",  # int8 index into NODES, -1 = not routed
    "decode",  # int8
    "latency",  # int64 ms
    "colo",  # int8 index into COLOS
)
Rows = dict[str, np.ndarray]


def empty_rows() -> Rows:
    dtypes = (np.int64, np.int8, np.int32, np.int8, np.int64, np.int64, np.int16,
              np.int8, np.int8, np.int64, np.int8)  # fmt: skip
    return {c: np.empty(0, dtype=d) for c, d in zip(COLUMNS, dtypes, strict=True)}


def concat(parts: list[Rows]) -> Rows:
    if not parts:
        return empty_rows()
    return {c: np.concatenate([p[c] for p in parts]) for c in COLUMNS}


def take(rows: Rows, idx: np.ndarray) -> Rows:
    return {c: rows[c][idx] for c in COLUMNS}


def _make(
    rng: np.random.Generator,
    comp: int,
    ts: np.ndarray,
    acct: np.ndarray,
    model: int,
    prompt: np.ndarray,
    status: np.ndarray,
    accounts: Accounts,
    *,
    bug: np.ndarray | None = None,
    completion_median: float = 280.0,
) -> Rows:
    """Fill in completion, routing, latency and colo for requests already placed."""
    n = len(ts)
    routed = ~np.isin(status, (400, 404, 429, 503))
    delivered = status == 200
    comp_tokens = np.clip(
        np.floor(rng.lognormal(np.log(completion_median), 1.0, n)).astype(np.int64), 1, 16384
    )
    completion = np.where(delivered, comp_tokens, 0)
    partial = status == 499
    completion = np.where(partial, np.floor(comp_tokens * rng.uniform(0, 0.6, n)), completion)
    completion = completion.astype(np.int64)
    if model == 0:
        pre = rng.integers(0, 4, n) + NODES.index(PREFILL_NODES[0])
        dec = rng.integers(0, 4, n) + NODES.index(DECODE_NODES[0])
    else:
        pre = rng.integers(0, 2, n) + NODES.index(PREFILL_NODES_52[0])
        dec = rng.integers(0, 2, n) + NODES.index(DECODE_NODES_52[0])
    pre = np.where(routed, pre, -1).astype(np.int8)
    dec = np.where(routed, dec, -1).astype(np.int8)
    # prefill ~30k tok/s, decode ~45 tok/s; the bug's placeholder prefill takes almost nothing
    prefill_s = prompt / 30_000.0
    if bug is not None:
        prefill_s = np.where(bug, 0.04, prefill_s)
    seconds = (0.12 + prefill_s + completion / 45.0) * rng.lognormal(0.0, 0.15, n)
    seconds = np.where(routed, seconds, rng.uniform(0.002, 0.04, n))
    seconds = np.where(status == 500, rng.uniform(0.1, 30.0, n), seconds)
    latency = np.maximum(np.round(seconds * 1000.0), 1).astype(np.int64)
    colo_choices = [REGIONS[int(r)][3] for r in range(len(REGIONS))]
    reg = accounts.region[acct]
    pick = rng.integers(0, 2, n)
    colo = np.array([c[0] for c in colo_choices])[reg]
    alt = np.array([c[-1] for c in colo_choices])[reg]
    colo = np.where(pick == 1, alt, colo).astype(np.int8)
    return {
        "ts": ts.astype(np.int64),
        "comp": np.full(n, comp, np.int8),
        "acct": acct.astype(np.int32),
        "model": np.full(n, model, np.int8),
        "prompt": prompt.astype(np.int64),
        "completion": completion,
        "status": status.astype(np.int16),
        "prefill": pre,
        "decode": dec,
        "latency": latency,
        "colo": colo,
    }


def _statuses(rng: np.random.Generator, n: int) -> np.ndarray:
    """Ordinary outcomes: mostly 200, some rate limits, client disconnects and errors."""
    codes = np.array([200, 429, 499, 500, 503, 400], dtype=np.int16)
    p = np.array([0.962, 0.018, 0.011, 0.006, 0.002, 0.001])
    return rng.choice(codes, n, p=p / p.sum())


# --- the plan: how many requests of each kind in each hour --------------------------------


@dataclass
class Plan:
    """Per-hour request counts of every component, decided up front (small arrays)."""

    requests: int
    seed: int
    exposed: int
    accounts: Accounts
    bg: np.ndarray  # (3 components, regions, hours): BG52, BG53, PRIVATE404
    long53: np.ndarray  # (long accounts, hours), excluding placed ones
    long52: np.ndarray  # (long accounts, hours)
    placed: Rows  # the designed over-capacity requests of ordinary customers
    scripted: Rows  # operator tests and the researcher
    open_from: np.ndarray  # per hour: first usable second for glm-5.3 customers (0..3600)


def make_plan(requests: int, seed: int, exposed: int | None = None) -> Plan:
    """Decide the case: accounts, scripted actors, placed exposures, per-hour counts."""
    if exposed is None:
        exposed = round(REFERENCE_EXPOSED * requests / REFERENCE_REQUESTS)
    n_accounts = int(min(max(requests // 200, 60), 200_000))
    n_long = max(12, round(12 * (requests / REFERENCE_REQUESTS) ** 0.5))
    n_long = min(n_long, n_accounts // 4)
    accounts = Accounts.build(n_accounts, n_long, seed)
    rng = np.random.default_rng([seed, 202])

    starts = _hour_starts()
    mid = starts + HOUR // 2
    wk = np.where(_weekday(mid) >= 5, 0.62, 1.0)
    utc_hour = ((mid - SPAN_START) // HOUR) % 24
    since_launch = np.maximum(mid - LAUNCH, 0) / (24 * HOUR)
    ramp = np.where(mid >= LAUNCH, 1.0 - 0.65 * np.exp(-since_launch / 2.0), 0.0)
    decline = 1.0 - 0.25 * (1.0 - np.exp(-since_launch / 3.0))
    # glm-5.3 is open to customers from launch until private, and again from public access
    open_from = np.full(HOURS, 3600, dtype=np.int64)
    for h in range(HOURS):
        lo, hi = starts[h], starts[h] + HOUR
        if (lo >= LAUNCH and hi <= PRIVATE) or lo >= PUBLIC:
            open_from[h] = 0
        elif lo < PUBLIC < hi:
            open_from[h] = (PUBLIC - lo) // 1_000_000
    open_frac = (3600 - open_from) / 3600.0
    in_window = (starts >= LAUNCH) & (starts + HOUR <= PRIVATE)
    private = (starts >= PRIVATE) & (starts < PUBLIC)
    private_frac = np.where(private, (np.minimum(starts + HOUR, PUBLIC) - starts) / HOUR, 0.0)

    # long-context customers (per account local office hours)
    long_region = accounts.region[accounts.long_idx]
    offs = np.array([REGIONS[int(r)][1] for r in long_region])
    local = (utc_hour[None, :] + offs[:, None]) % 24
    lam = accounts.long_weight[:, None] * _diurnal(local) * wk[None, :]
    lam53 = lam * ramp[None, :] * open_frac[None, :]
    win = lam53 * in_window[None, :]
    after = lam53 * (~in_window)[None, :]
    n_fail = max(1, round(exposed * 0.06))
    n_over = max(1, round(exposed * 0.12))
    n_long_win = round(exposed * 12.5) + 40
    n_long_after = round(n_long_win * after.sum() / win.sum())
    long53 = rng.multinomial(n_long_win, (win / win.sum()).ravel()).reshape(win.shape)
    long53 += rng.multinomial(n_long_after, (after / after.sum()).ravel()).reshape(after.shape)
    lam52 = lam * decline[None, :]
    n_long52 = round(0.35 * (n_long_win + n_long_after))
    long52 = rng.multinomial(n_long52, (lam52 / lam52.sum()).ravel()).reshape(lam52.shape)

    # the placed over-capacity requests: same intensity as the long-context traffic
    placed = _placed(rng, accounts, win, exposed, n_fail, n_over)
    scripted = _scripted(np.random.default_rng([seed, 303]), accounts)

    fixed = long53.sum() + long52.sum() + len(placed["ts"]) + len(scripted["ts"])
    rest = requests - int(fixed)
    if rest < 0.6 * requests:
        raise ValueError(f"too few requests ({requests}) for a case; give at least 5000")
    reg_share = np.bincount(accounts.region, weights=accounts.weight, minlength=len(REGIONS))
    reg_off = np.array([r[1] for r in REGIONS])
    local_r = (utc_hour[None, :] + reg_off[:, None]) % 24
    base = reg_share[:, None] * _diurnal(local_r) * wk[None, :]
    lam_bg = np.stack(
        [
            1.0 * base * decline[None, :],
            1.25 * base * ramp[None, :] * open_frac[None, :],
            0.04 * base * private_frac[None, :] * ramp.max(),
        ]
    )
    bg = rng.multinomial(rest, (lam_bg / lam_bg.sum()).ravel()).reshape(lam_bg.shape)
    return Plan(
        requests=requests,
        seed=seed,
        exposed=exposed,
        accounts=accounts,
        bg=bg,
        long53=long53,
        long52=long52,
        placed=placed,
        scripted=scripted,
        open_from=open_from,
    )


def _placed(
    rng: np.random.Generator,
    accounts: Accounts,
    win: np.ndarray,
    exposed: int,
    n_fail: int,
    n_over: int,
) -> Rows:
    """`exposed` status-200 prompts in (capacity, window], plus failed and over-context ones."""
    total = exposed + n_fail + n_over
    cells = rng.choice(win.size, total, p=(win / win.sum()).ravel())
    who, hour = np.divmod(cells, win.shape[1])
    ts = SPAN_START + hour * HOUR + rng.integers(0, HOUR, total)
    acct = accounts.long_idx[who]
    prompt = np.concatenate(
        [
            _trunc_pareto(rng, exposed + n_fail, PREFILL_CAPACITY, CONTEXT_WINDOW),
            _trunc_pareto(rng, n_over, CONTEXT_WINDOW, CONTEXT_WINDOW * 1.4),
        ]
    )
    status = np.concatenate(
        [
            np.full(exposed, 200, np.int16),
            rng.choice(np.array([499, 429, 500, 503], np.int16), n_fail, p=[0.5, 0.2, 0.2, 0.1]),
            np.full(n_over, 400, np.int16),
        ]
    )
    return _make(
        rng, PLACED, ts, acct, 0, prompt, status, accounts, bug=status == 200,
        completion_median=700.0,
    )  # fmt: skip


def _at(day_time: str) -> int:
    return _us(day_time + "+00:00")


def _scripted(rng: np.random.Generator, accounts: Accounts) -> Rows:
    """The operator's tests and the researcher's requests, the same at every size."""
    parts: list[Rows] = []

    def add(ts: list[int], acct: int, prompts: list[int], model: int = 0) -> None:
        ts_a = np.array(ts, dtype=np.int64)
        p = np.array(prompts, dtype=np.int64)
        status = np.where(p > CONTEXT_WINDOW, 400, 200).astype(np.int16)
        cap = np.where(ts_a < FIXED, PREFILL_CAPACITY, PREFILL_CAPACITY_FIXED)
        bug = (p > cap) & (status == 200) & (model == 0)
        parts.append(
            _make(
                rng,
                SCRIPTED,
                ts_a,
                np.full(len(ts), acct),
                model,
                p,
                status,
                accounts,
                bug=bug,
                completion_median=400.0,
            )
        )

    def spaced(start: str, minutes: float, n: int) -> list[int]:
        t0 = _at(start)
        jitter = rng.integers(0, 40_000_000, n)
        return [t0 + int(i * minutes * 60_000_000) + int(j) for i, j in enumerate(jitter)]

    # 2026-08-27 launch-day tests: a sweep of long prompts on every node, then smoke tests
    sweep = [131_072, 262_144, 393_216, 524_288, 655_360, 720_896, 786_432, 851_968,
             917_504, 983_040, 1_048_576, 1_048_577, 1_200_000]  # fmt: skip
    prompts = [s - int(rng.integers(0, 2048)) if s <= CONTEXT_WINDOW else s for s in sweep * 4]
    add(spaced("2026-08-27T08:30:00", 4.5, len(prompts)), accounts.ops_qa, prompts)
    small = rng.integers(200, 9000, 30).tolist()
    add(spaced("2026-08-27T12:45:00", 3.0, 30), accounts.ops_qa, small)
    # 2026-09-09 08:00 onwards: verifying the report
    verify = rng.integers(690_000, 1_000_000, 12).tolist()
    add(spaced("2026-09-09T09:10:00", 12.0, 12), accounts.ops_qa, verify)
    # 12:57-13:22: the two-account reproduction
    a, b = accounts.ops_repro
    for k, acct in enumerate((a, b)):
        ts = spaced(f"2026-09-09T12:57:{k * 30:02d}", 2.0, 12)
        add(ts, acct, rng.integers(700_000, 950_000, 12).tolist())
    # 19:04-19:38 after the rebuild: long prompts now fit; over the window still refused
    after = [*rng.integers(600_000, 1_048_576, 14).tolist(), 1_100_000, 1_300_000]
    add(spaced("2026-09-09T19:06:00", 2.0, len(after)), accounts.ops_qa, after)

    # the researcher, before the 2026-09-08 report: ordinary use, then stepping across the limit
    r = accounts.researcher
    add(spaced("2026-09-03T18:20:00", 9.0, 10), r, rng.integers(500, 40_000, 10).tolist())
    steps = [655_360, 665_600, 675_840, 680_000, 681_000, 681_280, 681_281, 681_600,
             686_080, 696_320, 716_800, 757_760, 819_200, 901_120, 1_048_576]  # fmt: skip
    add(spaced("2026-09-05T21:04:00", 2.5, len(steps)), r, steps)
    fine = [681_280 + 1024 * k for k in range(1, 25)]
    add(spaced("2026-09-06T20:31:00", 1.5, len(fine)), r, fine)
    add(spaced("2026-09-07T22:10:00", 1.2, 16), r, [700_000 + 4096 * k for k in range(16)])
    add(spaced("2026-09-07T23:00:00", 3.0, 6), r, steps[4:10], model=1)
    return concat(parts)


# --- hour by hour ---------------------------------------------------------------------------


def hour_rows(plan: Plan, h: int) -> Rows:
    """Every request arriving in hour `h`, sorted by arrival (ties by component, then draw)."""
    acc = plan.accounts
    start = SPAN_START + h * HOUR
    parts: list[Rows] = []
    for comp in (BG52, BG53, PRIVATE404):
        rng = np.random.default_rng([plan.seed, 1, comp, h])
        counts = plan.bg[comp, :, h]
        n = int(counts.sum())
        if n == 0:
            continue

        acct = np.empty(n, dtype=np.int64)
        pos = 0
        for r, k in enumerate(counts.tolist()):
            if k:
                members, p = acc.members(r)
                acct[pos : pos + k] = rng.choice(members, k, p=p)
                pos += k
        lo = 0 if comp == BG52 else int(plan.open_from[h])
        if comp == PRIVATE404:
            lo = 0
            hi = min(HOUR, PUBLIC - start) // 1_000_000
        else:
            hi = 3600
        ts = start + rng.integers(lo * 1_000_000, hi * 1_000_000, n)
        prompt = _trunc_lognormal(rng, n, 4500.0, 1.25, BASELINE_MIN)
        status = np.full(n, 404, np.int16) if comp == PRIVATE404 else _statuses(rng, n)
        model = 1 if comp == BG52 else 0
        parts.append(_make(rng, comp, ts, acct, model, prompt, status, acc))
    for comp, counts in ((LONG53, plan.long53[:, h]), (LONG52, plan.long52[:, h])):
        n = int(counts.sum())
        if n == 0:
            continue
        rng = np.random.default_rng([plan.seed, 2, comp, h])
        acct = np.repeat(acc.long_idx, counts)
        lo = int(plan.open_from[h]) if comp == LONG53 else 0
        ts = start + rng.integers(lo * 1_000_000, HOUR, n)
        vulnerable = comp == LONG53 and start < PRIVATE
        top = PREFILL_CAPACITY if vulnerable else CONTEXT_WINDOW
        prompt = _trunc_pareto(rng, n, BASELINE_MIN - 1, top)
        status = _statuses(rng, n)
        if not vulnerable:  # a few clients overshoot the context window and are refused
            over = rng.random(n) < 0.02
            prompt = np.where(over, _trunc_pareto(rng, n, CONTEXT_WINDOW, 1.4e6), prompt)
            status = np.where(over, 400, status).astype(np.int16)
        parts.append(
            _make(
                rng,
                comp,
                ts,
                acct,
                0 if comp == LONG53 else 1,
                prompt,
                status,
                acc,
                completion_median=700.0,
            )
        )
    for rows in (plan.placed, plan.scripted):
        sel = (rows["ts"] >= start) & (rows["ts"] < start + HOUR)
        if sel.any():
            parts.append(take(rows, np.flatnonzero(sel)))
    rows = concat(parts)
    order = np.lexsort((rows["comp"], rows["ts"]))
    return take(rows, order)


def chunks(plan: Plan, chunk_rows: int) -> Iterator[Rows]:
    """Consecutive hours grouped into chunks of about `chunk_rows` requests, in time order."""
    pending: list[Rows] = []
    size = 0
    for h in range(HOURS):
        rows = hour_rows(plan, h)
        pending.append(rows)
        size += len(rows["ts"])
        if size >= chunk_rows:
            yield concat(pending)
            pending, size = [], 0
    if pending:
        yield concat(pending)


# --- the truth, by construction ---------------------------------------------------------------


@dataclass
class Truth:
    """Counters accumulated chunk by chunk from the generated arrays (not from the analysis)."""

    n_accounts: int
    # the smallest prompt over the prefill capacity before and from FIXED: the case file's
    # reject_from where it gives one, else the pool + 1
    over_from: tuple[int, int] = (PREFILL_CAPACITY + 1, PREFILL_CAPACITY_FIXED + 1)
    bands: dict[str, int] = field(default_factory=lambda: dict.fromkeys(BANDS, 0))
    excluded_by_reason: dict[str, int] = field(default_factory=dict)
    exposed_per_account: np.ndarray | None = None
    requests: int = 0
    requests_53: int = 0
    # exposed prompts the pool would hold but the admission limit refuses (reject_from ..
    # tokens): the plan places its `exposed` requests above the pool, these come on top
    exposed_within_pool: int = 0
    _codes: np.ndarray | None = None

    def add(self, rows: Rows, accounts: Accounts) -> None:
        """Band every glm-5.3 request of the window in this chunk, as docs/decisions.md says."""
        if self.exposed_per_account is None:
            self.exposed_per_account = np.zeros(len(accounts.ids), dtype=np.int64)
        self.requests += len(rows["ts"])
        m53 = rows["model"] == 0
        self.requests_53 += int(m53.sum())
        inw = m53 & (rows["ts"] >= WINDOW_START) & (rows["ts"] < WINDOW_END)
        ts, p, st, acct = (
            rows["ts"][inw],
            rows["prompt"][inw],
            rows["status"][inw],
            rows["acct"][inw],
        )
        over_from = np.where(ts < FIXED, *self.over_from)
        over_ctx = p > CONTEXT_WINDOW
        fits = ~over_ctx & (p < over_from)
        over = ~over_ctx & ~fits
        ok = np.isin(st, SUCCESS)
        if self._codes is None:
            self._codes = accounts.exclusion_codes()
        excl_reason = self._codes[acct]
        is_excl = excl_reason != ""
        exposed = over & ok & ~is_excl
        self.bands["fits"] += int(fits.sum())
        self.bands["over_context"] += int(over_ctx.sum())
        self.bands["over_capacity_failed"] += int((over & ~ok).sum())
        self.bands["exposed"] += int(exposed.sum())
        pool = np.where(ts < FIXED, PREFILL_CAPACITY, PREFILL_CAPACITY_FIXED)
        self.exposed_within_pool += int((exposed & (p <= pool)).sum())
        self.bands["excluded"] += int((over & ok & is_excl).sum())
        for reason in sorted(set(excl_reason[over & ok & is_excl].tolist())):
            k = int(((excl_reason == reason) & over & ok).sum())
            self.excluded_by_reason[reason] = self.excluded_by_reason.get(reason, 0) + k
        self.exposed_per_account += np.bincount(acct[exposed], minlength=len(accounts.ids))
