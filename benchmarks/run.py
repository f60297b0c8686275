"""Benchmarks at scale: the toolkit against equal-work baselines (issues 9 and 14), and the
report stage (issue 25).

    .venv/bin/python benchmarks/run.py --sizes 1e6,5e6,2e7 --formats parquet,jsonl \\
        --repeats 3,3,1 --out benchmarks/results/latest.json

For each size it writes a synthetic case per format with `forensics sample` (kept under
--data-dir and reused when present), then, --repeats times and interleaved:
- ingest, per format: `forensics.ingest.ingest` vs DuckDB's bare read of the same log
  (read_parquet / read_json into a table of a fresh database file);
- analyze, on the Parquet case: `forensics.pipeline.analyze` (what `forensics analyze` runs)
  vs the equal-work baselines of baselines.py, plain DuckDB SQL and Polars, which compute the
  bands, the exposure and the pool-walkback data owners from the case database's `requests`
  exported once to Parquet (the same typed records analyze reads).
- report, on the analysed Parquet case: `forensics.pipeline.report` (what `forensics report`
  runs, in a fresh process, so building the Vega bundle is included), with the sizes of
  report.html, timeline.svg and timeline.png;
- run, at the sizes in --run-sizes: `forensics.pipeline.run` on the Parquet case (what
  `forensics run` runs), with the time of each of its stages (ingest, analyze, notify, report:
  the pipeline's functions wrapped with a timer in the child), to give the report's share.
After the repeats, the (request_id, band) rows, the exposed request_ids and the (exposed,
owner) pairs of the toolkit and both baselines must be the same sets, and the exposure
figures equal truth.json, those of report.html too; otherwise the run stops with exit
status 1 and says what differs. CLI start-up (`forensics --help`, wall time) is measured on
its own.

Every step runs in its own subprocess: its peak RSS is that child's ru_maxrss (os.wait4); its
time is the work inside the child (interpreter start and imports excluded). Medians over
repeats; the 1-minute load average before each step is recorded (the machine is shared).
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
FORENSICS = str(Path(PY).parent / "forensics")
GIB = 1024**3
TARGETS = {
    "analyze_vs_duckdb_sql": 1.5,
    "parquet_ingest_vs_bare_read": 2.0,
    "peak_rss_mb": 2048,
    # issue 25, at the largest size: the report stage (`forensics report`)
    "report_seconds": 30,
    "report_html_mb": 5,
    "timeline_svg_mb": 2,
    # ... and its share of `forensics run` wherever run is measured
    "report_share_of_run": 0.25,
}
MB = 1024**2


# --- steps (run in a child process: `run.py --step NAME --params JSON`) ---------------------


def step_toolkit_ingest(log: str, db: str, mapping: str) -> dict:
    from forensics import ingest

    for stale in (Path(db), Path(db + ".wal")):
        stale.unlink(missing_ok=True)
    t0 = time.perf_counter()
    report = ingest.ingest(log, db, mapping=mapping)
    return {"seconds": time.perf_counter() - t0, **report.totals()}


def step_toolkit_analyze(case: str, db: str, out: str) -> dict:
    from forensics import pipeline

    t0 = time.perf_counter()
    result = pipeline.analyze(case, db, out)
    seconds = time.perf_counter() - t0
    s = result.summary
    return {
        "seconds": seconds,
        "bands": s["bands"],
        "exposure_count": s["exposure_count"],
        "affected_accounts": s["affected_accounts"],
        "owner_pairs": s["data_owners"]["pairs"],
        "owner_requests": s["data_owners"]["requests"],
        "owner_accounts": s["data_owners"]["accounts"],
    }


def step_toolkit_report(case: str, db: str, out: str) -> dict:
    from forensics import pipeline

    t0 = time.perf_counter()
    paths = pipeline.report(case, db, out)
    seconds = time.perf_counter() - t0
    html = Path(out, "report.html").read_text(encoding="utf-8")
    return {
        "seconds": seconds,
        "bytes": {p.name: p.stat().st_size for p in paths},
        "shown": shown_figures(html),
    }


def shown_figures(html: str) -> dict:
    """The headline figures report.html shows: exposed responses and affected accounts."""
    import re

    return {
        key: int(re.search(rf'id="{key.replace("_", "-")}">([\d,]+)<', html)[1].replace(",", ""))
        for key in ("exposure_count", "affected_accounts")
    }


def step_toolkit_run(case: str, out: str) -> dict:
    """`pipeline.run`, with the time of each stage: its functions wrapped with a timer."""
    from forensics import pipeline

    stages: dict[str, float] = {}

    def timed(name: str, fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                stages[name] = stages.get(name, 0.0) + time.perf_counter() - t0

        return wrapper

    pipeline.ingest_sources = timed("ingest", pipeline.ingest_sources)
    pipeline.analyze_engine = timed("analyze", pipeline.analyze_engine)
    pipeline.notify_lists.write_lists = timed("notify", pipeline.notify_lists.write_lists)
    pipeline.report_page.render_report = timed("report", pipeline.report_page.render_report)
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    result = pipeline.run(case, out)
    seconds = time.perf_counter() - t0
    shutil.rmtree(out, ignore_errors=True)
    return {
        "seconds": seconds,
        "stages_s": stages,
        "exposure_count": result.summary["exposure_count"],
    }


def step_bare_read(log: str, db: str) -> dict:
    import baselines

    return baselines.duckdb_bare_read(log, db)


def step_export(db: str, parquet: str) -> dict:
    import baselines

    t0 = time.perf_counter()
    rows = baselines.export_requests(db, parquet)
    return {"seconds": time.perf_counter() - t0, "rows": rows}


def step_duckdb_sql(case: str, requests: str, db: str, memory_limit: str) -> dict:
    import baselines

    return baselines.duckdb_equal_work(case, requests, db, memory_limit)


def step_polars(case: str, requests: str, out_dir: str) -> dict:
    import baselines

    return baselines.polars_equal_work(case, requests, out_dir)


def step_compare(toolkit_db: str, duckdb_db: str, polars_dir: str) -> dict:
    import baselines

    t0 = time.perf_counter()
    result = baselines.compare(toolkit_db, duckdb_db, polars_dir)
    return {"seconds": time.perf_counter() - t0, **result}


STEPS = {
    "toolkit_ingest": step_toolkit_ingest,
    "toolkit_analyze": step_toolkit_analyze,
    "toolkit_report": step_toolkit_report,
    "toolkit_run": step_toolkit_run,
    "bare_read": step_bare_read,
    "export": step_export,
    "duckdb_sql": step_duckdb_sql,
    "polars": step_polars,
    "compare": step_compare,
}


def run_step(name: str, **params: Any) -> dict:
    """Run one step in a child process: its JSON result plus wall_s, peak_rss_mb, load_1m."""
    argv = [PY, str(Path(__file__).resolve()), "--step", name, "--params", json.dumps(params)]
    load = os.getloadavg()[0]
    with tempfile.TemporaryFile() as so, tempfile.TemporaryFile() as se:
        t0 = time.perf_counter()
        child = subprocess.Popen(argv, stdout=so, stderr=se, cwd=ROOT)
        _, status, usage = os.wait4(child.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        so.seek(0)
        se.seek(0)
        out, err = so.read().decode(), se.read().decode()
    if code != 0:
        raise RuntimeError(f"step {name} failed ({code}):\n{err[-3000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    result["wall_s"] = wall
    result["peak_rss_mb"] = usage.ru_maxrss / 1024  # Linux: kilobytes
    # CPU time of the whole child (all its threads, imports included): unlike the times, it
    # hardly moves with the machine's load
    result["cpu_s"] = usage.ru_utime + usage.ru_stime
    result["load_1m"] = load
    return result


def cli_startup(repeats: int) -> dict:
    """Wall time of `forensics --help` (interpreter start, imports, Typer), median."""
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run([FORENSICS, "--help"], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        runs.append(time.perf_counter() - t0)
    return {"median_s": statistics.median(runs), "runs_s": [round(r, 3) for r in runs]}


# --- the benchmark -------------------------------------------------------------------------


def ensure_case(data: Path, size: int, fmt: str, seed: int) -> tuple[Path, dict]:
    """The sample case for (size, format, seed), generated once and reused."""
    folder = data / f"{fmt}-{size}-s{seed}"
    truth = folder / "truth.json"
    if not truth.is_file():
        shutil.rmtree(folder, ignore_errors=True)
        t0 = time.perf_counter()
        argv = ["sample", "--out", str(folder), "--requests", str(size), "--seed", str(seed)]
        subprocess.run(
            [FORENSICS, *argv, "--format", fmt],
            check=True,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
        )
        print(f"  generated {folder.name} in {time.perf_counter() - t0:.1f}s", flush=True)
    return folder, json.loads(truth.read_text())


def summarize(runs: list[dict]) -> dict:
    """Median work time, median wall time, median CPU time of the child, the largest peak
    RSS and load over repeats."""
    return {
        "median_s": statistics.median(r["seconds"] for r in runs),
        "median_wall_s": statistics.median(r["wall_s"] for r in runs),
        "median_cpu_s": statistics.median(r["cpu_s"] for r in runs),
        "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
        "runs_s": [round(r["seconds"], 3) for r in runs],
        "load_1m": [round(r["load_1m"], 2) for r in runs],
    }


def log_of(case: Path) -> Path:
    return next(
        p for p in case.iterdir() if p.name.startswith("gateway.") and not p.name.endswith(".toml")
    )


def bench_ingest(
    case: Path, fmt: str, size: int, repeats: int, work: Path, baselines: bool = True
) -> tuple[dict, Path]:
    """Toolkit ingest vs DuckDB's bare read of one log (without `baselines`, the toolkit
    alone); returns the figures and the case db."""
    log = log_of(case)
    db, raw_db = work / f"{fmt}-{size}.duckdb", work / f"{fmt}-{size}-raw.duckdb"
    tk, raw = [], []
    for i in range(repeats):
        print(f"  {fmt} {size:,} repeat {i + 1}: ingest", flush=True)
        mapping = str(case / "gateway.mapping.toml")
        tk.append(run_step("toolkit_ingest", log=str(log), db=str(db), mapping=mapping))
        if baselines:
            raw.append(run_step("bare_read", log=str(log), db=str(raw_db)))
    raw_db.unlink(missing_ok=True)
    out = {
        "file_bytes": log.stat().st_size,
        "toolkit": summarize(tk),
        "totals": {
            k: v
            for k, v in tk[-1].items()
            if k in ("rows_read", "rows_loaded", "duplicates", "quarantined")
        },
    }
    out["toolkit"]["rows_per_s"] = out["totals"]["rows_read"] / out["toolkit"]["median_s"]
    if not baselines:
        return out, db
    out["duckdb_bare_read"] = {**summarize(raw), "rows": raw[-1]["rows"]}
    out["ratio_toolkit_vs_bare_read"] = (
        out["toolkit"]["median_s"] / out["duckdb_bare_read"]["median_s"]
    )
    return out, db


def bench_analyze(
    case: Path,
    db: Path,
    size: int,
    repeats: int,
    work: Path,
    memory_limit: str,
    baselines: bool = True,
) -> dict:
    """Toolkit analyze vs the DuckDB SQL and Polars equal-work baselines, then the check
    (without `baselines`, the toolkit alone: its figures are checked against truth.json)."""
    if not baselines:
        incident, out = str(case / "incident.toml"), work / f"out-{size}"
        tk = []
        for i in range(repeats):
            print(f"  analyze {size:,} repeat {i + 1}", flush=True)
            tk.append(run_step("toolkit_analyze", case=incident, db=str(db), out=str(out)))
        figures = {
            k: v
            for k, v in tk[-1].items()
            if not k.endswith("_s") and k not in ("seconds", "peak_rss_mb", "load_1m")
        }
        return {"toolkit": summarize(tk), "identical": None, "figures": {"toolkit": figures}}
    requests = work / f"requests-{size}.parquet"
    export = run_step("export", db=str(db), parquet=str(requests))
    incident = str(case / "incident.toml")
    dd_db, pl_dir, out = work / f"eq-{size}.duckdb", work / f"pl-{size}", work / f"out-{size}"
    tk, dd, pl = [], [], []
    for i in range(repeats):
        print(f"  analyze {size:,} repeat {i + 1}", flush=True)
        tk.append(run_step("toolkit_analyze", case=incident, db=str(db), out=str(out)))
        dd.append(
            run_step(
                "duckdb_sql",
                case=incident,
                requests=str(requests),
                db=str(dd_db),
                memory_limit=memory_limit,
            )
        )
        pl.append(run_step("polars", case=incident, requests=str(requests), out_dir=str(pl_dir)))
    same = run_step("compare", toolkit_db=str(db), duckdb_db=str(dd_db), polars_dir=str(pl_dir))
    an: dict[str, Any] = {
        "requests_parquet": {"rows": export["rows"], "bytes": requests.stat().st_size},
        "toolkit": summarize(tk),
        "duckdb_sql": summarize(dd),
        "polars": summarize(pl),
        "identical": same["identical"],
        "differences": same["differences"],
        "figures": {
            "toolkit": {
                k: v
                for k, v in tk[-1].items()
                if not k.endswith("_s") and k not in ("seconds", "peak_rss_mb", "load_1m")
            },
            "duckdb_sql": {
                k: v
                for k, v in dd[-1].items()
                if not k.endswith("seconds") and k not in ("wall_s", "peak_rss_mb", "load_1m")
            },
            "polars": {
                k: v
                for k, v in pl[-1].items()
                if not k.endswith("seconds") and k not in ("wall_s", "peak_rss_mb", "load_1m")
            },
        },
        "phases_s": {
            name: {
                "bands": statistics.median(r["bands_seconds"] for r in runs),
                "owners": statistics.median(r["owners_seconds"] for r in runs),
            }
            for name, runs in (("duckdb_sql", dd), ("polars", pl))
        },
    }
    an["ratio_toolkit_vs_duckdb_sql"] = an["toolkit"]["median_s"] / an["duckdb_sql"]["median_s"]
    an["ratio_toolkit_vs_polars"] = an["toolkit"]["median_s"] / an["polars"]["median_s"]
    for p in (dd_db, requests):
        p.unlink(missing_ok=True)
    shutil.rmtree(pl_dir, ignore_errors=True)
    return an


def bench_report(case: Path, db: Path, size: int, repeats: int, work: Path) -> dict:
    """`forensics report` on the analysed case (analyze wrote work/out-SIZE): time, peak RSS
    and the sizes of what it wrote."""
    out, runs = work / f"out-{size}", []
    for i in range(repeats):
        print(f"  report {size:,} repeat {i + 1}", flush=True)
        runs.append(
            run_step("toolkit_report", case=str(case / "incident.toml"), db=str(db), out=str(out))
        )
    return {
        "toolkit": summarize(runs),
        "bytes": runs[-1]["bytes"],
        "shown": runs[-1]["shown"],
    }


def bench_run(case: Path, size: int, repeats: int, work: Path) -> dict:
    """`forensics run` on the case: total and per-stage times, the report's share of it."""
    runs = []
    for i in range(repeats):
        print(f"  run {size:,} repeat {i + 1}", flush=True)
        runs.append(
            run_step("toolkit_run", case=str(case / "incident.toml"), out=str(work / f"run-{size}"))
        )
    stages = {
        name: statistics.median(r["stages_s"].get(name, 0.0) for r in runs)
        for name in ("ingest", "analyze", "notify", "report")
    }
    total = statistics.median(r["seconds"] for r in runs)
    return {
        "toolkit": summarize(runs),
        "stages_s": stages,
        "report_share": stages["report"] / total,
        "exposure_count": runs[-1]["exposure_count"],
    }


def check(row: dict, truth: dict) -> dict:
    """Exposure figures and band counts of every contender equal truth.json; the toolkit's
    ingest totals equal it; the three analyses are the same sets (compare); report.html
    shows the true exposure figures, and `run` found the true exposure count."""
    an = row["analyze"]
    checks = {} if an["identical"] is None else {"analyses_identical": an["identical"]}
    if "report" in row:
        checks["report_shows_truth"] = row["report"]["shown"] == {
            k: truth[k] for k in ("exposure_count", "affected_accounts")
        }
    if "run" in row:
        checks["run_equals_truth"] = row["run"]["exposure_count"] == truth["exposure_count"]
    for name, f in an["figures"].items():
        bands = {b: n for b, n in f["bands"].items() if n}
        checks[f"{name}_equals_truth"] = (
            f["exposure_count"] == truth["exposure_count"]
            and f["affected_accounts"] == truth["affected_accounts"]
            and bands == {b: n for b, n in truth["bands"].items() if n}
        )
    for fmt, ing in row["ingest"].items():
        checks[f"{fmt}_ingest_equals_truth"] = ing["totals"] == ing["truth"]
    checks["ok"] = all(checks.values())
    return checks


def bench_size(size: int, args: argparse.Namespace, data: Path, work: Path) -> dict:
    """Ingest per format and analyze (on the Parquet case) at one size."""
    repeats = args.repeats_by_size[size]
    row: dict[str, Any] = {"size": size, "repeats": repeats, "ingest": {}}
    pq_db = None
    for fmt in args.formats:
        case, truth = ensure_case(data, size, fmt, args.seed)
        row["ingest"][fmt], db = bench_ingest(case, fmt, size, repeats, work, args.baselines)
        row["ingest"][fmt]["truth"] = truth["ingest"]
        if fmt == "parquet":
            pq_db = db
        else:
            for p in (db, Path(str(db) + ".wal")):
                p.unlink(missing_ok=True)
    pq_case, truth = ensure_case(data, size, "parquet", args.seed)
    if pq_db is None:  # analyze needs the Parquet case ingested
        pq_db = work / f"parquet-{size}.duckdb"
        run_step(
            "toolkit_ingest",
            log=str(log_of(pq_case)),
            db=str(pq_db),
            mapping=str(pq_case / "gateway.mapping.toml"),
        )
    row["truth"] = {k: truth[k] for k in ("exposure_count", "affected_accounts", "bands")}
    row["analyze"] = bench_analyze(
        pq_case, pq_db, size, repeats, work, args.baseline_memory_limit, args.baselines
    )
    row["report"] = bench_report(pq_case, pq_db, size, repeats, work)
    for p in (pq_db, Path(str(pq_db) + ".wal")):
        p.unlink(missing_ok=True)
    shutil.rmtree(work / f"out-{size}", ignore_errors=True)
    if size in args.run_sizes:
        row["run"] = bench_run(pq_case, size, repeats, work)
    row["correctness"] = check(row, truth)
    loads = [
        x
        for part in [*row["ingest"].values(), row["analyze"], row["report"], row.get("run", {})]
        for contender in part.values()
        if isinstance(contender, dict) and "load_1m" in contender
        for x in contender["load_1m"]
    ]
    row["load_1m"] = {"min": min(loads), "median": statistics.median(loads), "max": max(loads)}
    return row


def scaling(rows: list[dict]) -> dict:
    """Cost growth from the smallest to the largest size against n and n log n."""
    if len(rows) < 2:
        return {}
    a, b = min(rows, key=lambda r: r["size"]), max(rows, key=lambda r: r["size"])
    n_ratio = b["size"] / a["size"]
    nlogn = n_ratio * math.log(b["size"]) / math.log(a["size"])
    out: dict[str, Any] = {
        "from": a["size"],
        "to": b["size"],
        "n_ratio": n_ratio,
        "nlogn_ratio": nlogn,
    }
    steps = {f"{fmt}_ingest": ("ingest", fmt) for fmt in a["ingest"]}
    for name, (part, fmt) in steps.items():
        out[f"{name}_time_ratio"] = (
            b[part][fmt]["toolkit"]["median_s"] / a[part][fmt]["toolkit"]["median_s"]
        )
    out["analyze_time_ratio"] = (
        b["analyze"]["toolkit"]["median_s"] / a["analyze"]["toolkit"]["median_s"]
    )
    out["within_nlogn"] = all(v <= nlogn for k, v in out.items() if k.endswith("_time_ratio"))
    return out


def targets(rows: list[dict], scale: dict) -> dict:
    """Issue 14's targets (worst case over the sizes run), each with the figure behind it."""
    biggest = max(rows, key=lambda r: r["size"])
    out: dict[str, Any] = {}
    compared = [r for r in rows if "ratio_toolkit_vs_duckdb_sql" in r["analyze"]]
    if compared:  # the baselines ran
        analyze = max(r["analyze"]["ratio_toolkit_vs_duckdb_sql"] for r in compared)
        out["analyze_within_1.5x_of_duckdb_sql"] = {
            "worst_ratio": analyze,
            "per_size": {
                str(r["size"]): round(r["analyze"]["ratio_toolkit_vs_duckdb_sql"], 2)
                for r in compared
            },
            "met": analyze <= TARGETS["analyze_vs_duckdb_sql"],
        }
    read = [r for r in rows if "ratio_toolkit_vs_bare_read" in r["ingest"].get("parquet", {})]
    if read:
        ingest = max(r["ingest"]["parquet"]["ratio_toolkit_vs_bare_read"] for r in read)
        out["parquet_ingest_within_2x_of_bare_read"] = {
            "worst_ratio": ingest,
            "per_size": {
                str(r["size"]): round(r["ingest"]["parquet"]["ratio_toolkit_vs_bare_read"], 2)
                for r in read
            },
            "met": ingest <= TARGETS["parquet_ingest_vs_bare_read"],
        }
    rss = {
        **{
            f"ingest_{fmt}": ing["toolkit"]["peak_rss_mb"] for fmt, ing in biggest["ingest"].items()
        },
        "analyze": biggest["analyze"]["toolkit"]["peak_rss_mb"],
        "report": biggest["report"]["toolkit"]["peak_rss_mb"],
    }
    out[f"peak_rss_under_2gb_at_{biggest['size']}"] = {
        "peak_rss_mb": max(rss.values()),
        "per_step_mb": {k: round(v) for k, v in rss.items()},
        "met": max(rss.values()) < TARGETS["peak_rss_mb"],
    }
    report = biggest["report"]
    html_mb = report["bytes"]["report.html"] / MB
    svg_mb = report["bytes"]["timeline.svg"] / MB
    out[f"report_under_2gb_30s_5mb_html_2mb_svg_at_{biggest['size']}"] = {
        "peak_rss_mb": report["toolkit"]["peak_rss_mb"],
        "seconds": report["toolkit"]["median_s"],
        "report_html_mb": html_mb,
        "timeline_svg_mb": svg_mb,
        "met": report["toolkit"]["peak_rss_mb"] < TARGETS["peak_rss_mb"]
        and report["toolkit"]["median_s"] < TARGETS["report_seconds"]
        and html_mb < TARGETS["report_html_mb"]
        and svg_mb < TARGETS["timeline_svg_mb"],
    }
    shares = {str(r["size"]): round(r["run"]["report_share"], 3) for r in rows if "run" in r}
    if shares:
        out["report_under_a_quarter_of_run"] = {
            "worst_share": max(shares.values()),
            "per_size": shares,
            "met": max(shares.values()) < TARGETS["report_share_of_run"],
        }
    if scale:
        out["growth_within_nlogn"] = {"met": scale["within_nlogn"]}
    return out


def code_version(label: str | None) -> dict:
    """Which toolkit code ran: the imported package's folder and its git commit (if any)."""
    import forensics

    where = Path(forensics.__file__).resolve().parent.parent
    out: dict[str, Any] = {"forensics": str(where), "label": label}
    git = subprocess.run(
        ["git", "-C", str(where), "status", "--porcelain", "--branch"],
        capture_output=True,
        text=True,
    )
    if git.returncode == 0:
        head = subprocess.run(
            ["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        out["git_head"] = head
        out["dirty"] = any(line and not line.startswith("##") for line in git.stdout.splitlines())
    return out


def machine() -> dict:
    import duckdb
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
        "polars": polars.__version__,
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def table(doc: dict) -> str:
    """The results as a plain-text table (also what the README quotes)."""
    m, st = doc["machine"], doc["settings"]
    lines = [
        f"machine: {m['cores']} cores, {m['memory_gib']} GiB RAM, {m['cpu']}; DuckDB "
        f"{m['duckdb']}, Polars {m['polars']}; DuckDB memory limit {st['memory_limit']} "
        "(toolkit default; the DuckDB SQL baseline gets the same); medians of "
        + ", ".join(f"{n} run(s) at {int(s):,}" for s, n in st["repeats"].items())
        + f"; load average {m['load_average_at_start'][0]:.1f} at start, "
        f"{doc['load_average_at_end'][0]:.1f} at end",
        "",
        "| requests | Parquet ingest s | bare read s | ratio | JSONL ingest s | bare read_json s "
        "| ratio | analyze s | DuckDB SQL s | ratio | Polars s | ratio | peak RSS MB ingest "
        "pq / jsonl / analyze | identical | load 1m |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|",
    ]

    def ingest_cells(r: dict, fmt: str) -> list[str]:
        i = r["ingest"].get(fmt)
        if i is None:
            return ["-", "-", "-"]
        if "duckdb_bare_read" not in i:  # --no-baselines
            return [f"{i['toolkit']['median_s']:.1f}", "-", "-"]
        return [
            f"{i['toolkit']['median_s']:.1f}",
            f"{i['duckdb_bare_read']['median_s']:.1f}",
            f"{i['ratio_toolkit_vs_bare_read']:.1f}x",
        ]

    def analyze_cells(a: dict) -> list[str]:
        if "duckdb_sql" not in a:  # --no-baselines
            return [f"{a['toolkit']['median_s']:.2f}", "-", "-", "-", "-"]
        return [
            f"{a['toolkit']['median_s']:.2f}",
            f"{a['duckdb_sql']['median_s']:.2f}",
            f"{a['ratio_toolkit_vs_duckdb_sql']:.2f}x",
            f"{a['polars']['median_s']:.2f}",
            f"{a['ratio_toolkit_vs_polars']:.2f}x",
        ]

    for r in doc["results"]:
        a = r["analyze"]
        rss = [
            f"{r['ingest'][f]['toolkit']['peak_rss_mb']:.0f}" if f in r["ingest"] else "-"
            for f in ("parquet", "jsonl")
        ]
        cells = [
            f"{r['size']:,}",
            *ingest_cells(r, "parquet"),
            *ingest_cells(r, "jsonl"),
            *analyze_cells(a),
            f"{rss[0]} / {rss[1]} / {a['toolkit']['peak_rss_mb']:.0f}",
            ("yes" if r["correctness"]["ok"] else "NO")
            if a["identical"] is not None
            else "figures = truth"
            if r["correctness"]["ok"]
            else "NO",
            f"{r['load_1m']['min']:.1f}-{r['load_1m']['max']:.1f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines += [
        "",
        "| requests | report s | report wall s | report CPU s | report peak RSS MB "
        "| report.html MB | timeline.svg MB | timeline.png MB | run s "
        "| ingest / analyze / notify / report s in run | report share of run |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in doc["results"]:
        rep, run = r["report"], r.get("run")
        cells = [
            f"{r['size']:,}",
            f"{rep['toolkit']['median_s']:.2f}",
            f"{rep['toolkit']['median_wall_s']:.2f}",
            f"{rep['toolkit']['median_cpu_s']:.2f}",
            f"{rep['toolkit']['peak_rss_mb']:.0f}",
            *(
                f"{rep['bytes'][n] / MB:.2f}"
                for n in ("report.html", "timeline.svg", "timeline.png")
            ),
            f"{run['toolkit']['median_s']:.1f}" if run else "-",
            " / ".join(
                f"{run['stages_s'][k]:.1f}" for k in ("ingest", "analyze", "notify", "report")
            )
            if run
            else "-",
            f"{run['report_share']:.0%}" if run else "-",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for name, t in doc["targets"].items():
        detail = ", ".join(
            f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
            for k, v in t.items()
            if k != "met"
        )
        lines.append(f"target {name}: {'met' if t['met'] else 'MISSED'} ({detail})")
    lines.append(f"cli start-up (forensics --help, wall): {doc['cli_startup']['median_s']:.2f} s")
    if doc["scaling"]:
        e = doc["scaling"]
        ratios = ", ".join(
            f"{k.removesuffix('_time_ratio')} x{v:.1f}"
            for k, v in e.items()
            if k.endswith("_time_ratio")
        )
        lines.append(
            f"growth {e['from']:,} -> {e['to']:,}: {ratios} (n x{e['n_ratio']:.0f}, "
            f"n log n x{e['nlogn_ratio']:.1f})"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="1e6,5e6,2e7", help="requests per case, comma-separated")
    ap.add_argument("--formats", default="parquet,jsonl", help="parquet and/or jsonl (ingest)")
    ap.add_argument(
        "--repeats", default="3", help="runs per step: one number, or one per size (3,3,1)"
    )
    ap.add_argument("--cli-repeats", type=int, default=5, help="runs of `forensics --help`")
    ap.add_argument(
        "--run-sizes",
        default="5e6",
        help="sizes (of --sizes) at which `forensics run` is timed too, comma-separated",
    )
    ap.add_argument(
        "--no-baselines",
        dest="baselines",
        action="store_false",
        help="time the toolkit alone (no bare reads, no equal-work analyses; figures are "
        "checked against truth.json): for sizes where the baselines would not fit",
    )
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "latest.json")
    ap.add_argument("--data-dir", type=Path, default=HERE / "data")
    ap.add_argument("--clean", action="store_true", help="delete the generated cases at the end")
    ap.add_argument(
        "--code-label",
        help="what code this is, recorded as-is (e.g. the commit of a `git archive` export)",
    )
    ap.add_argument("--step", help=argparse.SUPPRESS)
    ap.add_argument("--params", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.sizes = [int(float(s)) for s in str(args.sizes).split(",") if s]
    args.formats = [f.strip() for f in str(args.formats).split(",") if f.strip()]
    args.run_sizes = {int(float(s)) for s in str(args.run_sizes).split(",") if s}
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
    from forensics.engines import DEFAULT_MEMORY_LIMIT

    args.baseline_memory_limit = DEFAULT_MEMORY_LIMIT
    data = args.data_dir.resolve()
    work = data / "work"
    work.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {
        "machine": machine(),
        "code": code_version(args.code_label),
        "settings": {
            "sizes": args.sizes,
            "formats": args.formats,
            "repeats": {str(k): v for k, v in args.repeats_by_size.items()},
            "seed": args.seed,
            "memory_limit": DEFAULT_MEMORY_LIMIT,
            "baselines": args.baselines,
            "run_sizes": sorted(args.run_sizes & set(args.sizes)),
            "targets": TARGETS,
        },
        "results": [],
    }
    t0 = time.perf_counter()
    doc["cli_startup"] = cli_startup(args.cli_repeats)
    failed = None
    for size in args.sizes:
        print(f"size {size:,}", flush=True)
        row = bench_size(size, args, data, work)
        doc["results"].append(row)
        if not row["correctness"]["ok"]:
            failed = row
            break
    doc["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    doc["scaling"] = scaling(doc["results"]) if failed is None else {}
    doc["targets"] = targets(doc["results"], doc["scaling"])
    doc["correct"] = failed is None
    doc["benchmark_seconds"] = time.perf_counter() - t0
    doc["table"] = table(doc)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    print(doc["table"])
    print(f"wrote {args.out}")
    shutil.rmtree(work, ignore_errors=True)
    if args.clean:
        shutil.rmtree(data, ignore_errors=True)
    if failed is not None:
        print(
            f"BENCHMARK FAILED at {failed['size']:,} requests: the analyses or the figures "
            f"differ: {json.dumps(failed['correctness'])}; differences (rows on one side only): "
            f"{json.dumps(failed['analyze']['differences'])}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
