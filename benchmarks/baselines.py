"""The responder's alternatives to the toolkit, measured by `benchmarks/run.py`.

- `duckdb_ingest`: DuckDB's own `read_json` / `read_parquet` into a table (no mapping, no
  validation, no de-duplication, no accounting): the floor for loading the same file.
- `duckdb_exposure`: a minimal hand-written exposure query on that raw table.
- `pandas_analysis`: a straightforward, vectorised pandas implementation of the exposure
  count and the pool-walkback data-owner attribution (SPEC.md "Analyses"), reading the
  Parquet log with PyArrow.

Each returns a JSON-ready dict with `seconds` (the work only, interpreter start and imports
excluded) and the figures the benchmark checks against the toolkit and truth.json. They
read the case's numbers from its incident.toml with tomllib (no toolkit code involved).
"""

from __future__ import annotations

import fnmatch
import itertools
import time
import tomllib
from datetime import datetime
from pathlib import Path
from typing import Any


def case_numbers(case_path: str | Path) -> dict[str, Any]:
    """Window, models, statuses, capacities and excluded accounts of a sample incident.toml."""
    path = Path(case_path)
    doc = tomllib.loads(path.read_text(encoding="utf-8"))

    def when(text: str | None) -> datetime | None:
        return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None

    excluded: set[str] = set()
    for ex in doc.get("exclude", []):
        excluded.update(ex.get("accounts", []))
        if "file" in ex:
            for line in (path.parent / ex["file"]).read_text(encoding="utf-8").splitlines():
                line = line.strip()
                if line and not line.startswith("#"):
                    excluded.add(line)
    return {
        "models": list(doc["models"]),
        "context_window": int(doc["context_window"]),
        "success_status": [int(s) for s in doc.get("success_status", [200])],
        "start": when(doc["window"]["start"]),
        "end": when(doc["window"]["end"]),
        "capacity": [
            {
                "role": c["role"],
                "nodes": c.get("nodes", "*"),
                "tokens": int(c["tokens"]),
                "start": when(c["start"]),
                "end": when(c.get("end")),
            }
            for c in doc.get("capacity", [])
        ],
        "excluded": sorted(excluded),
    }


# --- DuckDB, by hand -----------------------------------------------------------------------


def duckdb_ingest(log: str, db: str, memory_limit: str | None = None) -> dict[str, Any]:
    """CREATE TABLE raw AS SELECT * FROM read_json/read_parquet(log), into a fresh file."""
    import duckdb

    Path(db).unlink(missing_ok=True)
    config = {"memory_limit": memory_limit} if memory_limit else {}
    con = duckdb.connect(db, config=config)
    reader = "read_json($p, ignore_errors = true)"  # skips the torn lines
    if log.endswith(".parquet"):
        reader = "read_parquet($p)"
    t0 = time.perf_counter()
    con.execute(f"CREATE TABLE raw AS SELECT * FROM {reader}", {"p": log})
    con.execute("CHECKPOINT")
    seconds = time.perf_counter() - t0
    rows = con.execute("SELECT count(*) FROM raw").fetchall()[0][0]
    con.close()
    return {"seconds": seconds, "rows": int(rows)}


EXPOSURE_SQL = """
SELECT count(DISTINCT id) AS exposed, count(DISTINCT account.id) AS accounts
FROM raw
WHERE list_contains($models, model)
  AND CAST("timestamp" AS TIMESTAMPTZ) >= $start
  AND CAST("timestamp" AS TIMESTAMPTZ) < $end
  AND usage.prompt_tokens > $capacity
  AND usage.prompt_tokens <= $context_window
  AND list_contains($success, coalesce(status, 200))
  AND NOT list_contains($excluded, account.id)
"""


def duckdb_exposure(case: str, db: str, memory_limit: str | None = None) -> dict[str, Any]:
    """The minimal exposure query a responder would write for this case (one prefill pool)."""
    import duckdb

    n = case_numbers(case)
    prefill = [c for c in n["capacity"] if c["role"] == "prefill" and c["start"] <= n["start"]]
    config = {"memory_limit": memory_limit} if memory_limit else {}
    con = duckdb.connect(db, read_only=True, config=config)
    con.execute("SET TimeZone = 'UTC'")
    t0 = time.perf_counter()
    exposed, accounts = con.execute(
        EXPOSURE_SQL,
        {
            "models": n["models"],
            "start": n["start"],
            "end": n["end"],
            "capacity": prefill[0]["tokens"],
            "context_window": n["context_window"],
            "success": n["success_status"],
            "excluded": n["excluded"],
        },
    ).fetchall()[0]
    seconds = time.perf_counter() - t0
    con.close()
    return {"seconds": seconds, "exposure_count": int(exposed), "affected_accounts": int(accounts)}


# --- pandas --------------------------------------------------------------------------------


def pandas_analysis(case: str, parquet: str) -> dict[str, Any]:
    """Exposure count and pool-walkback data owners in pandas/NumPy from the Parquet log."""
    import numpy as np
    import pandas as pd
    import pyarrow.parquet as pq

    n = case_numbers(case)
    t0 = time.perf_counter()
    columns = ["id", "timestamp", "account", "model", "usage", "status", "latency_ms", "route"]
    df = pq.read_table(parquet, columns=columns).flatten().to_pandas()
    t_load = time.perf_counter()

    df = df.drop_duplicates("id", keep="first")  # the shipper's identical re-sends
    df["ts"] = pd.to_datetime(df["timestamp"], utc=True, format="ISO8601")
    df["ts_end"] = df["ts"] + pd.to_timedelta(df["latency_ms"], unit="ms")
    df["status"] = df["status"].fillna(200).astype("int64")
    start, end = pd.Timestamp(n["start"]), pd.Timestamp(n["end"])
    scoped = df[df["model"].isin(n["models"]) & (df["ts"] >= start) & (df["ts"] < end)].copy()

    # capacity in force: first matching [[capacity]] entry (role prefill), in file order
    scoped["capacity"] = np.nan
    for cap in (c for c in n["capacity"] if c["role"] == "prefill"):
        node_ok = _glob_mask(scoped["route.prefill"], cap["nodes"])
        when = scoped["ts"] >= pd.Timestamp(cap["start"])
        if cap["end"] is not None:
            when &= scoped["ts"] < pd.Timestamp(cap["end"])
        hit = scoped["capacity"].isna() & node_ok & when
        scoped.loc[hit, "capacity"] = cap["tokens"]
    prompt = scoped["usage.prompt_tokens"]
    delivered = scoped["status"].isin(n["success_status"])
    exposed = scoped[
        (prompt > scoped["capacity"])
        & (prompt <= n["context_window"])
        & delivered
        & ~scoped["account.id"].isin(n["excluded"])
    ]
    t_exposure = time.perf_counter()

    owners = _pandas_walkback(scoped[delivered], exposed, n)
    t_done = time.perf_counter()
    return {
        "seconds": t_done - t0,
        "load_seconds": t_load - t0,
        "exposure_seconds": t_exposure - t_load,
        "walkback_seconds": t_done - t_exposure,
        "exposure_count": len(exposed),
        "affected_accounts": int(exposed["account.id"].nunique()),
        **owners,
    }


def _glob_mask(nodes: Any, pattern: str) -> Any:
    """Rows whose node matches a shell glob; "*" also matches an unknown (null) node."""
    if pattern == "*":
        return nodes.notna() | nodes.isna()
    names = nodes.dropna().unique()
    hits = [x for x in names if fnmatch.fnmatchcase(x, pattern)]
    return nodes.isin(hits)


def _ns(series: Any) -> Any:
    """UTC instants as int64 nanoseconds since the epoch."""
    naive = series.dt.tz_convert("UTC").dt.tz_localize(None)
    return naive.to_numpy().astype("datetime64[ns]").astype("int64")


def _pandas_walkback(pool_src: Any, exposed: Any, n: dict[str, Any]) -> dict[str, Any]:
    """Per decode node: running token sums over the pool sorted by end time, then for each
    exposed request the contiguous range of pool requests that ended before it while the
    newer candidates' tokens stay under the decode capacity (np.searchsorted per node)."""
    import numpy as np
    import pandas as pd

    targets = exposed[exposed["route.decode"].notna()].copy()
    targets["cap"] = np.nan
    for cap in (c for c in n["capacity"] if c["role"] == "decode"):
        hit = targets["cap"].isna() & _glob_mask(targets["route.decode"], cap["nodes"])
        hit &= targets["ts"] >= pd.Timestamp(cap["start"])
        if cap["end"] is not None:
            hit &= targets["ts"] < pd.Timestamp(cap["end"])
        targets.loc[hit, "cap"] = cap["tokens"]
    targets = targets[targets["cap"].notna()]

    pool = pool_src[pool_src["route.decode"].isin(targets["route.decode"].unique())]
    pool = pool.assign(
        end=pool["ts_end"].fillna(pool["ts"]),
        tokens=pool["usage.prompt_tokens"] + pool["usage.completion_tokens"].fillna(0),
    ).sort_values(["route.decode", "end", "id"], kind="stable")
    pool["cum"] = pool.groupby("route.decode", sort=False)["tokens"].cumsum()

    ends = _ns(pool["end"])
    cum = pool["cum"].to_numpy(dtype="int64")
    owner_acct = pool["account.id"].to_numpy()
    owner_id = pool["id"].to_numpy()
    node_codes = pool["route.decode"].to_numpy()
    bounds = np.flatnonzero(np.r_[True, node_codes[1:] != node_codes[:-1], True])
    first = {node_codes[b]: (b, e) for b, e in itertools.pairwise(bounds)}

    lo_all, hi_all, who = [], [], []
    for node, group in targets.groupby("route.decode", sort=True):
        b, e = first[node]
        t = _ns(group["ts"])
        hi = b + np.searchsorted(ends[b:e], t, side="left")  # ended strictly before e.ts
        before = np.where(hi > b, cum[np.maximum(hi - 1, b)], 0)  # T(e)
        cut = before - group["cap"].to_numpy(dtype="int64")
        lo = b + np.searchsorted(cum[b:e], cut, side="right")  # newer tokens < capacity
        lo_all.append(np.minimum(lo, hi))
        hi_all.append(hi)
        who.append(group["account.id"].to_numpy())
    if not lo_all:
        return {"owner_pairs": 0, "owner_requests": 0, "owner_accounts": 0}
    lo, hi, acct = np.concatenate(lo_all), np.concatenate(hi_all), np.concatenate(who)
    counts = hi - lo
    rows = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts - lo, counts)
    keep = owner_acct[rows] != np.repeat(acct, counts)
    rows = rows[keep]
    return {
        "owner_pairs": len(rows),
        "owner_requests": len(np.unique(owner_id[rows])),
        "owner_accounts": len(np.unique(owner_acct[rows])),
    }
