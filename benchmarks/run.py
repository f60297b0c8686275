"""Benchmarks at scale: the toolkit against DuckDB by hand and pandas (issue 9).

    .venv/bin/python benchmarks/run.py --sizes 1e6,5e6,2e7 --formats parquet,jsonl \\
        --repeats 3 --out benchmarks/results/latest.json

For each size it writes a synthetic case per format with `forensics sample` (kept under
--data-dir and reused when present), then, --repeats times and interleaved:
- ingest: `forensics.ingest.ingest` vs DuckDB's read_json/read_parquet into a table;
- analyze: `forensics.pipeline.analyze` + `notify` (exposure, attribution, classification,
  lists) vs a minimal hand-written DuckDB exposure query on the raw table and vs pandas
  (exposure count + pool-walkback attribution from the Parquet log).
Every step runs in its own subprocess; its peak RSS is that child's ru_maxrss (os.wait4);
its time is the work inside the child (interpreter start and imports excluded). Medians
over repeats. The exposure counts of every contender must equal truth.json, and pandas'
data owners the toolkit's, or the run is marked failed (exit status 1).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PY = sys.executable
GIB = 1024**3


# --- steps (run in a child process: `run.py --step NAME --params JSON`) ---------------------


def step_toolkit_ingest(log: str, db: str, mapping: str, memory_limit: str | None) -> dict:
    from forensics import ingest

    for stale in (Path(db), Path(db + ".wal")):
        stale.unlink(missing_ok=True)
    t0 = time.perf_counter()
    report = ingest.ingest(log, db, mapping=mapping, memory_limit=memory_limit)
    return {"seconds": time.perf_counter() - t0, **report.totals()}


def step_toolkit_analyze(case: str, db: str, out: str, memory_limit: str | None) -> dict:
    from forensics import pipeline

    t0 = time.perf_counter()
    result = pipeline.analyze(case, db, out, memory_limit=memory_limit)
    t1 = time.perf_counter()
    pipeline.notify(case, db, out)
    t2 = time.perf_counter()
    s = result.summary
    owners = s["data_owners"]
    return {
        "seconds": t2 - t0,
        "analyze_seconds": t1 - t0,
        "notify_seconds": t2 - t1,
        "exposure_count": s["exposure_count"],
        "affected_accounts": s["affected_accounts"],
        "owner_pairs": owners["pairs"],
        "owner_requests": owners["requests"],
        "owner_accounts": owners["accounts"],
        "verdict": s["verdict"],
    }


def step_duckdb_ingest(log: str, db: str, memory_limit: str | None) -> dict:
    import baselines

    return baselines.duckdb_ingest(log, db, memory_limit)


def step_duckdb_exposure(case: str, db: str, memory_limit: str | None) -> dict:
    import baselines

    return baselines.duckdb_exposure(case, db, memory_limit)


def step_pandas(case: str, parquet: str) -> dict:
    import baselines

    return baselines.pandas_analysis(case, parquet)


STEPS = {
    "toolkit_ingest": step_toolkit_ingest,
    "toolkit_analyze": step_toolkit_analyze,
    "duckdb_ingest": step_duckdb_ingest,
    "duckdb_exposure": step_duckdb_exposure,
    "pandas": step_pandas,
}


def run_step(name: str, **params: Any) -> dict:
    """Run one step in a child process: its JSON result plus wall_s and peak_rss_mb."""
    argv = [PY, str(Path(__file__).resolve()), "--step", name, "--params", json.dumps(params)]
    with tempfile.TemporaryFile() as so, tempfile.TemporaryFile() as se:
        t0 = time.perf_counter()
        child = subprocess.Popen(argv, stdout=so, stderr=se, cwd=ROOT)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        so.seek(0)
        se.seek(0)
        out, err = so.read().decode(), se.read().decode()
    if child.returncode != 0:
        raise RuntimeError(f"step {name} failed ({child.returncode}):\n{err[-3000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    result["wall_s"] = wall
    result["peak_rss_mb"] = usage.ru_maxrss / 1024  # Linux: kilobytes
    return result


# --- the benchmark -------------------------------------------------------------------------


def ensure_case(data: Path, size: int, fmt: str, seed: int) -> tuple[Path, dict]:
    """The sample case for (size, format, seed), generated once and reused."""
    folder = data / f"{fmt}-{size}-s{seed}"
    truth = folder / "truth.json"
    if not truth.is_file():
        shutil.rmtree(folder, ignore_errors=True)
        t0 = time.perf_counter()
        subprocess.run(
            [
                str(Path(PY).parent / "forensics"),
                "sample",
                "--out",
                str(folder),
                "--requests",
                str(size),
                "--seed",
                str(seed),
                "--format",
                fmt,
            ],
            check=True,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
        )
        print(f"  generated {folder.name} in {time.perf_counter() - t0:.1f}s", flush=True)
    return folder, json.loads(truth.read_text())


def summarize(runs: list[dict]) -> dict:
    """Median work time, median wall time and the largest peak RSS over repeats."""
    return {
        "median_s": statistics.median(r["seconds"] for r in runs),
        "median_wall_s": statistics.median(r["wall_s"] for r in runs),
        "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
        "runs_s": [round(r["seconds"], 3) for r in runs],
    }


def bench_size(size: int, args: argparse.Namespace, data: Path, work: Path) -> list[dict]:
    """Ingest and analyze rows of one size, one per format, plus pandas once."""
    rows = []
    repeats = args.repeats_by_size[size]
    ml = args.memory_limit
    pq_case = None
    for fmt in args.formats:
        case, truth = ensure_case(data, size, fmt, args.seed)
        if fmt == "parquet":
            pq_case = case
        log = next(
            p
            for p in case.iterdir()
            if p.name.startswith("gateway.") and not p.name.endswith(".toml")
        )
        db, raw_db = work / f"{fmt}-{size}.duckdb", work / f"{fmt}-{size}-raw.duckdb"
        out = work / f"{fmt}-{size}-out"
        tk_in, raw_in, tk_an, raw_an = [], [], [], []
        for i in range(repeats):
            print(f"  {fmt} {size:,} repeat {i + 1}: ingest", flush=True)
            mapping = str(case / "gateway.mapping.toml")
            tk_in.append(
                run_step(
                    "toolkit_ingest", log=str(log), db=str(db), mapping=mapping, memory_limit=ml
                )
            )
            raw_in.append(run_step("duckdb_ingest", log=str(log), db=str(raw_db), memory_limit=ml))
        for i in range(repeats):
            print(f"  {fmt} {size:,} repeat {i + 1}: analyze", flush=True)
            tk_an.append(
                run_step(
                    "toolkit_analyze",
                    case=str(case / "incident.toml"),
                    db=str(db),
                    out=str(out),
                    memory_limit=ml,
                )
            )
            raw_an.append(
                run_step(
                    "duckdb_exposure",
                    case=str(case / "incident.toml"),
                    db=str(raw_db),
                    memory_limit=ml,
                )
            )
        row = {
            "size": size,
            "format": fmt,
            "repeats": repeats,
            "file_bytes": log.stat().st_size,
            "truth": {k: truth[k] for k in ("exposure_count", "affected_accounts", "ingest")},
            "ingest": {"toolkit": summarize(tk_in), "duckdb_raw": summarize(raw_in)},
            "analyze": {"toolkit": summarize(tk_an), "duckdb_raw_exposure": summarize(raw_an)},
            "toolkit_figures": {
                k: v
                for k, v in tk_an[-1].items()
                if not k.endswith("_s") and k not in ("seconds", "peak_rss_mb")
            },
            "ingest_totals": {k: tk_in[-1][k] for k in truth["ingest"]},
            "duckdb_raw_figures": {
                k: raw_an[-1][k] for k in ("exposure_count", "affected_accounts")
            },
        }
        ing = row["ingest"]
        ing["toolkit"]["rows_per_s"] = truth["ingest"]["rows_read"] / ing["toolkit"]["median_s"]
        ing["duckdb_raw"]["rows_per_s"] = raw_in[-1]["rows"] / ing["duckdb_raw"]["median_s"]
        ing["ratio_toolkit_vs_duckdb"] = ing["toolkit"]["median_s"] / ing["duckdb_raw"]["median_s"]
        an = row["analyze"]
        an["ratio_toolkit_vs_duckdb"] = (
            an["toolkit"]["median_s"] / an["duckdb_raw_exposure"]["median_s"]
        )
        for p in (db, Path(str(db) + ".wal"), raw_db):
            p.unlink(missing_ok=True)
        rows.append(row)

    # pandas: once per size, from the Parquet log (the same requests as the JSONL log)
    if pq_case is None:
        pq_case, _ = ensure_case(data, size, "parquet", args.seed)
    pandas_result: dict[str, Any]
    if size <= args.pandas_max:
        runs = []
        for i in range(repeats):
            print(f"  pandas {size:,} repeat {i + 1}", flush=True)
            runs.append(
                run_step(
                    "pandas",
                    case=str(pq_case / "incident.toml"),
                    parquet=str(pq_case / "gateway.parquet"),
                )
            )
        pandas_result = {"mode": "measured", **summarize(runs)}
        pandas_result["figures"] = {
            k: runs[-1][k]
            for k in (
                "exposure_count",
                "affected_accounts",
                "owner_pairs",
                "owner_requests",
                "owner_accounts",
                "load_seconds",
                "exposure_seconds",
                "walkback_seconds",
            )
        }
    else:
        reason = f"size above --pandas-max {args.pandas_max:,.0f}"
        pandas_result = {"mode": "not run", "reason": reason}
    for row in rows:
        row["analyze"]["pandas"] = pandas_result
        row["correctness"] = check(row)
    return rows


def check(row: dict) -> dict:
    """Every contender's exposure figures equal truth.json; pandas' owners equal the toolkit's."""
    truth = row["truth"]
    tk = row["toolkit_figures"]
    raw = row["duckdb_raw_figures"]
    checks = {
        "toolkit_exposure_equals_truth": tk["exposure_count"] == truth["exposure_count"]
        and tk["affected_accounts"] == truth["affected_accounts"],
        "duckdb_raw_exposure_equals_truth": raw["exposure_count"] == truth["exposure_count"]
        and raw["affected_accounts"] == truth["affected_accounts"],
        "toolkit_ingest_equals_truth": row["ingest_totals"] == truth["ingest"],
    }
    pd_ = row["analyze"]["pandas"]
    if pd_["mode"] == "measured":
        f = pd_["figures"]
        checks["pandas_exposure_equals_truth"] = (
            f["exposure_count"] == truth["exposure_count"]
            and f["affected_accounts"] == truth["affected_accounts"]
        )
        checks["pandas_owners_equal_toolkit"] = all(
            f[k] == tk[k] for k in ("owner_pairs", "owner_requests", "owner_accounts")
        )
    checks["ok"] = all(checks.values())
    return checks


def extrapolate_pandas(rows: list[dict]) -> None:
    """Where pandas was not run, estimate it from the largest measured size, linearly in n
    (a lower bound: its sorts grow as n log n), and label it so."""
    measured = [r for r in rows if r["analyze"]["pandas"]["mode"] == "measured"]
    if not measured:
        for r in rows:
            r["analyze"]["ratio_pandas_vs_toolkit"] = None
        return
    ref = max(measured, key=lambda r: r["size"])
    per_row = ref["analyze"]["pandas"]["median_s"] / ref["size"]
    for r in rows:
        p = r["analyze"]["pandas"]
        if p["mode"] != "measured":
            p["mode"] = "extrapolated"
            p["median_s"] = per_row * r["size"]
            p["basis"] = f"linear from {ref['size']:,} requests (lower bound)"
    for r in rows:
        an = r["analyze"]
        an["ratio_pandas_vs_toolkit"] = an["pandas"]["median_s"] / an["toolkit"]["median_s"]


def scaling(rows: list[dict]) -> dict:
    """Cost growth from the smallest to the largest size against n and n log n."""
    out: dict[str, Any] = {}
    for fmt in sorted({r["format"] for r in rows}):
        rs = sorted((r for r in rows if r["format"] == fmt), key=lambda r: r["size"])
        if len(rs) < 2:
            continue
        a, b = rs[0], rs[-1]
        n_ratio = b["size"] / a["size"]
        nlogn = n_ratio * math.log(b["size"]) / math.log(a["size"])
        entry = {"from": a["size"], "to": b["size"], "n_ratio": n_ratio, "nlogn_ratio": nlogn}
        for step in ("ingest", "analyze"):
            t = b[step]["toolkit"]["median_s"] / a[step]["toolkit"]["median_s"]
            entry[f"{step}_time_ratio"] = t
            entry[f"{step}_within_nlogn"] = t <= nlogn
        out[fmt] = entry
    return out


def targets(rows: list[dict], scale: dict) -> dict:
    """The issue's targets, each with the figure behind it."""
    biggest = max(r["size"] for r in rows)
    big = [r for r in rows if r["size"] == biggest]
    worst_ingest = max(r["ingest"]["ratio_toolkit_vs_duckdb"] for r in rows)
    slowest = max(r["analyze"]["toolkit"]["median_s"] for r in big)
    pandas_ratios = [r["analyze"]["ratio_pandas_vs_toolkit"] for r in big]
    min_pandas = min(pandas_ratios) if None not in pandas_ratios else math.nan
    rss = max(
        max(r["ingest"]["toolkit"]["peak_rss_mb"], r["analyze"]["toolkit"]["peak_rss_mb"])
        for r in big
    )
    return {
        "ingest_within_2x_of_duckdb": {"worst_ratio": worst_ingest, "met": worst_ingest <= 2},
        f"analyze_{biggest}_under_60s": {"seconds": slowest, "met": slowest < 60},
        "analyze_20x_faster_than_pandas": {"min_ratio": min_pandas, "met": min_pandas >= 20},
        "peak_rss_under_4gb": {"peak_rss_mb": rss, "met": rss < 4096},
        "growth_within_nlogn": {
            "met": all(
                e["ingest_within_nlogn"] and e["analyze_within_nlogn"] for e in scale.values()
            )
        },
    }


def machine() -> dict:
    import duckdb
    import pandas
    import polars

    cpu = platform.processor()
    with open("/proc/cpuinfo", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "cores": os.cpu_count(),
        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GIB, 1),
        "cpu": cpu,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "duckdb": duckdb.__version__,
        "pandas": pandas.__version__,
        "polars": polars.__version__,
        "load_average_at_start": list(os.getloadavg()),
    }


def table(doc: dict) -> str:
    """The results as a plain-text table (also what the README quotes)."""
    m = doc["machine"]
    lines = [
        f"machine: {m['cores']} cores, {m['memory_gib']} GiB RAM, {m['cpu']}; "
        f"DuckDB {m['duckdb']}, pandas {m['pandas']}; memory limit "
        f"{doc['settings']['memory_limit'] or 'toolkit default (3GB)'}; medians of "
        + ", ".join(f"{n} run(s) at {s:,}" for s, n in doc["settings"]["repeats"].items()),
        "",
        "| requests | format | ingest toolkit s (rows/s) | DuckDB raw s | ratio | "
        "analyze toolkit s | DuckDB exposure s | ratio | pandas s | pandas/toolkit | "
        "peak RSS ingest / analyze / pandas MB | correct |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in doc["results"]:
        i, a = r["ingest"], r["analyze"]
        p = a["pandas"]
        pandas_s = f"{p['median_s']:.1f}" if "median_s" in p else "-"
        pandas_s += " (extrap.)" if p["mode"] == "extrapolated" else ""
        ratio = a["ratio_pandas_vs_toolkit"]
        pandas_rss = f"{p['peak_rss_mb']:.0f}" if p["mode"] == "measured" else "-"
        lines.append(
            f"| {r['size']:,} | {r['format']} | {i['toolkit']['median_s']:.1f} "
            f"({i['toolkit']['rows_per_s'] / 1e3:,.0f}k) | {i['duckdb_raw']['median_s']:.1f} | "
            f"{i['ratio_toolkit_vs_duckdb']:.1f}x | {a['toolkit']['median_s']:.1f} | "
            f"{a['duckdb_raw_exposure']['median_s']:.2f} | {a['ratio_toolkit_vs_duckdb']:.0f}x | "
            f"{pandas_s} | {f'{ratio:.1f}x' if ratio is not None else '-'} | "
            f"{i['toolkit']['peak_rss_mb']:.0f} / {a['toolkit']['peak_rss_mb']:.0f} / "
            f"{pandas_rss} | {'yes' if r['correctness']['ok'] else 'NO'} |"
        )
    lines.append("")
    for name, t in doc["targets"].items():
        detail = ", ".join(
            f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
            for k, v in t.items()
            if k != "met"
        )
        lines.append(f"target {name}: {'met' if t['met'] else 'MISSED'} ({detail})")
    for fmt, e in doc["scaling"].items():
        lines.append(
            f"growth {fmt} {e['from']:,} -> {e['to']:,}: ingest x{e['ingest_time_ratio']:.1f}, "
            f"analyze x{e['analyze_time_ratio']:.1f} (n x{e['n_ratio']:.0f}, "
            f"n log n x{e['nlogn_ratio']:.1f})"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="1e6,5e6,2e7", help="requests per case, comma-separated")
    ap.add_argument("--formats", default="parquet,jsonl", help="parquet and/or jsonl")
    ap.add_argument(
        "--repeats", default="3", help="runs per step: one number, or one per size (3,3,1)"
    )
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "latest.json")
    ap.add_argument("--data-dir", type=Path, default=HERE / "data")
    ap.add_argument("--memory-limit", default=None, help="DuckDB memory limit for every step")
    ap.add_argument(
        "--pandas-max",
        type=float,
        default=5e6,
        help="largest size pandas runs at (else extrapolated)",
    )
    ap.add_argument("--clean", action="store_true", help="delete the generated cases at the end")
    ap.add_argument("--step", help=argparse.SUPPRESS)
    ap.add_argument("--params", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.sizes = [int(float(s)) for s in str(args.sizes).split(",") if s]
    args.formats = [f.strip() for f in str(args.formats).split(",") if f.strip()]
    reps = [int(r) for r in str(args.repeats).split(",") if r]
    if len(reps) == 1:
        reps = reps * len(args.sizes)
    if len(reps) != len(args.sizes) or min(reps) < 1:
        ap.error("--repeats: one number, or one positive number per size")
    args.repeats_by_size = dict(zip(args.sizes, reps, strict=True))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.step:  # child process
        sys.path.insert(0, str(HERE))
        print(json.dumps(STEPS[args.step](**json.loads(args.params))))
        return 0
    data = args.data_dir.resolve()
    work = data / "work"
    work.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {
        "machine": machine(),
        "settings": {
            "sizes": args.sizes,
            "formats": args.formats,
            "repeats": args.repeats_by_size,
            "seed": args.seed,
            "memory_limit": args.memory_limit,
            "pandas_max": int(args.pandas_max),
        },
        "results": [],
    }
    t0 = time.perf_counter()
    for size in args.sizes:
        print(f"size {size:,}", flush=True)
        doc["results"].extend(bench_size(size, args, data, work))
    extrapolate_pandas(doc["results"])
    doc["scaling"] = scaling(doc["results"])
    doc["targets"] = targets(doc["results"], doc["scaling"])
    doc["correct"] = all(r["correctness"]["ok"] for r in doc["results"])
    doc["benchmark_seconds"] = time.perf_counter() - t0
    doc["table"] = table(doc)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    print(doc["table"])
    print(f"wrote {args.out}")
    shutil.rmtree(work, ignore_errors=True)
    if args.clean:
        shutil.rmtree(data, ignore_errors=True)
    return 0 if doc["correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
