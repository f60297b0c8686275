"""Benchmarks at scale: the toolkit against equal-work baselines (issues 9, 14 and 24), the
report stage (issue 25) and the notify stage (issue 39).

    .venv/bin/python benchmarks/run.py --sizes 1e6,5e6,2e7 --formats parquet,jsonl \\
        --repeats 3,3,1 --out benchmarks/results/latest.json
    # opt in to 100M requests (3.6 GB of Parquet generated under --data-dir, ~10 min)
    .venv/bin/python benchmarks/run.py --sizes 1e6,5e6,2e7,1e8 --repeats 3,3,1,1 ...

For each size it writes a synthetic case per format with `forensics sample` (kept under
--data-dir and reused when present), then, --repeats times and interleaved:
- ingest, per format: `forensics.ingest.ingest` vs DuckDB's bare read of the same log
  (read_parquet / read_json into a table of a fresh database file) and, for JSONL, vs the
  equal-work ingests of baselines.py (plain DuckDB SQL, and Polars): the same lines read
  with their numbers, fields typed, invalid records set aside with their reasons,
  duplicates dropped and conflicts flagged, the input's sha256;
- analyze, on the Parquet case: `forensics.pipeline.analyze` (what `forensics analyze` runs)
  vs the equal-work baselines of baselines.py, plain DuckDB SQL and Polars, which compute the
  bands, the exposure, the pool-walkback data owners and the blast radius from the case
  database's `requests` exported once to Parquet (the same typed records analyze reads);
- report, on the analysed Parquet case: `forensics.pipeline.report` (what `forensics report`
  runs, in a fresh process, so building the Vega bundle is included), with the sizes of
  report.html, timeline.svg and timeline.png;
- notify, on the analysed Parquet case: `forensics.pipeline.notify` (what `forensics notify`
  runs), each repeat into a fresh copy of the folder analyze wrote, against analyze's time
  in the same run, beside the floor of its files (as many new files of the same bytes
  written bare; --out-dir says on which file system);
- run, at the sizes in --run-sizes: `forensics.pipeline.run` on the Parquet case (what
  `forensics run` runs), stage by stage, to give the report's share of it.
After the repeats, the (request_id, band) rows, the exposed request_ids, the (exposed,
owner) pairs and the blast radius rows of the toolkit and both baselines must be the same
sets, the equal-work ingests must have loaded the same rows and set aside the same records
for the same reasons as the toolkit, and the figures equal truth.json, those report.html
shows and the exposure count `run` finds too; otherwise the run stops with exit status 1
and says what differs.
--no-baselines times the toolkit alone (no bare reads, no equal-work ingests or analyses;
its figures checked against truth.json), for sizes where the baselines would not fit.
Sizes of LARGE requests or more run the Parquet case only; the Polars baselines run up to
--polars-max (analyze) and --polars-ingest-max (JSONL ingest), as Polars holds a whole case
in memory.
Then, once: `forensics run` at --e2e-size per format (the Parquet run of --run-sizes is
reused when that size was timed there); --many-files JSONL files of 100 records ingested in
one call against the same records in one file (files per second; --many-files-format
parquet for Parquet files); with --one-row-group N, the Parquet sample of N requests written
as one row group (as pyarrow writes up to 1M rows), ingested against DuckDB's bare read of
it; CLI start-up (`forensics --help`, wall time).

The stages of `forensics run` are timed in one way, through the library's Progress reports
(StepTimes, nothing in the library patched): each step's wall and CPU seconds, summed into
its stage by the part of its name before ":" (ingest, analyze, notify, report), except
"report: chart export ..." which is the stage "chart export" and "export the requests as
Parquet" (Spark only) which is "parquet export"; a step matching none is "other", and so is
the time of `pipeline.run` outside any step (steps do not nest). Every statement of the
analysis runs inside one of its steps, SciPy's import inside the classification's
(tests/test_progress.py), so the analyze stage holds all of the analysis. The report's share
of run is (report + chart export) / the seconds of `pipeline.run`, the median over repeats.

Every step runs in its own subprocess: its peak RSS is that child's ru_maxrss (os.wait4), its
CPU time the child's user + system time; its time is the work inside the child (interpreter
start and imports excluded). Medians over repeats; the 1-minute load average before each
step is recorded (the machine is shared).
"""

from __future__ import annotations

import argparse
import gzip
import itertools
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
    "parquet_ingest_vs_bare_read": 1.8,  # issue 24 (issue 14 asked 2x)
    "peak_rss_mb": 2048,
    "jsonl_ingest_vs_duckdb_sql_ingest": 1.25,
    "analyze_growth_20m_to_100m": 6.0,
    "ingest_growth_20m_to_100m": 6.0,
    "many_files_vs_one_file": 2.0,
    # issue 25, at the largest size: the report stage (`forensics report`)
    "report_seconds": 30,
    "report_html_mb": 5,
    "timeline_svg_mb": 2,
    # ... and its share of `forensics run` wherever run is measured (--run-sizes)
    "report_share_of_run": 0.25,
    # issue 39, at every size: `forensics notify` no longer than `forensics analyze` (each as the
    # command runs, the same run), and the notify stage of `forensics run` no longer than its
    # analyze stage
    "notify_vs_analyze": 1.0,
}
MB = 1024**2
LARGE = 50_000_000  # from this size on: the Parquet case only
# peak RSS is held under TARGETS["peak_rss_mb"] from this size on (and at the largest size run)
RSS_FROM = 20_000_000
# the stages of `forensics run`, in the order it runs them (see stage_of)
STAGES = ("ingest", "analyze", "notify", "report", "chart export", "parquet export", "other")
FILE_RECORDS = 100  # records per file of the many-files case


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
        "blast_radius": {
            m["model"]: [m["requests"], m["over_capacity"], m["unknown_capacity"]]
            for m in s["blast_radius"]
        },
    }


def step_toolkit_notify(case: str, db: str, out: str) -> dict:
    """`forensics notify` (what `pipeline.notify` does) into a copy of analyze's folder: its
    time (the files it wrote are counted by `notified_files`, outside the timed process)."""
    from forensics import pipeline

    t0 = time.perf_counter()
    pipeline.notify(case, db, out)
    return {"seconds": time.perf_counter() - t0}


def notified_files(out: Path) -> dict:
    """The notices, messages and bytes a notify wrote into `out`."""
    notices = Path(out, "notify", "notices")
    files = {
        sub: list(os.scandir(notices / sub)) for sub in ("md", "eml") if (notices / sub).is_dir()
    }
    return {
        "notices": len(files.get("md", [])),
        "messages": len(files.get("eml", [])),
        "bytes": sum(e.stat().st_size for group in files.values() for e in group),
    }


def step_bare_files(folder: str, count: int, size: int) -> dict:
    """The floor under notify's files: `count` new files of `size` bytes each written into a
    fresh folder on the same file system (one open, write, close each), then removed."""
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    data = b"x" * size
    t0 = time.perf_counter()
    for i in range(count):
        with open(os.path.join(folder, f"{i:09d}"), "wb") as f:
            f.write(data)
    seconds = time.perf_counter() - t0
    shutil.rmtree(folder, ignore_errors=True)
    return {"seconds": seconds, "files": count}


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


class StepTimes:
    """A `forensics.progress.Progress` that records each step's wall and CPU seconds (summed
    over steps of the same name, e.g. one "ingest: load" per [[source]]): how the benchmark
    sees the stages of `forensics run` without timing code in the library."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self._current: tuple[str, float, float] | None = None

    def start(self, step: str, total: float | None = None, unit: str = "") -> None:
        self._current = (step, time.perf_counter(), time.process_time())

    def advance(self, amount: float = 1) -> None:
        pass

    def done(self) -> None:
        if self._current is not None:
            name, t0, c0 = self._current
            self.wall[name] = self.wall.get(name, 0.0) + time.perf_counter() - t0
            self.cpu[name] = self.cpu.get(name, 0.0) + time.process_time() - c0
        self._current = None


def stage_of(step: str) -> str:
    """The stage of `forensics run` a library step belongs to: the part of its name before
    ":" ("analyze: bands" is analyze), except the chart export and Spark's Parquet export,
    stages of their own; "other" for a step none of these names."""
    if step.startswith("report: chart export"):
        return "chart export"
    if step == "export the requests as Parquet":
        return "parquet export"
    head, colon, _ = step.partition(":")
    return head if colon and head in ("ingest", "analyze", "notify", "report") else "other"


def by_stage(steps: dict[str, float], total: float) -> dict[str, float]:
    """Steps' seconds summed into their stages; "other" also holds `total` outside any step
    (steps do not nest)."""
    stages: dict[str, float] = {}
    for name, seconds in steps.items():
        stage = stage_of(name)
        stages[stage] = stages.get(stage, 0.0) + seconds
    stages["other"] = stages.get("other", 0.0) + total - sum(steps.values())
    return {k: round(stages[k], 3) for k in STAGES if k in stages}


def step_toolkit_run(case: str, out: str) -> dict:
    """`forensics run` (what `pipeline.run` does) with its stages timed through Progress."""
    from forensics import pipeline

    shutil.rmtree(out, ignore_errors=True)
    times = StepTimes()
    t0, c0 = time.perf_counter(), time.process_time()
    result = pipeline.run(case, out, progress=times)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    shutil.rmtree(out, ignore_errors=True)
    return {
        "seconds": seconds,
        "steps_s": {k: round(v, 3) for k, v in times.wall.items()},
        "stages_s": by_stage(times.wall, seconds),
        "stages_cpu_s": by_stage(times.cpu, cpu),
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


def step_duckdb_ingest(log: str, db: str, mapping: str, memory_limit: str) -> dict:
    import baselines

    return baselines.duckdb_equal_work_ingest(log, db, mapping, memory_limit)


def step_polars_ingest(log: str, out_dir: str, mapping: str) -> dict:
    import baselines

    return baselines.polars_equal_work_ingest(log, out_dir, mapping)


def step_compare_ingest(toolkit_db: str, duckdb_db: str, polars_dir: str | None) -> dict:
    import baselines

    t0 = time.perf_counter()
    result = baselines.compare_ingest(toolkit_db, duckdb_db, polars_dir)
    return {"seconds": time.perf_counter() - t0, **result}


def step_compare(toolkit_db: str, duckdb_db: str, polars_dir: str | None) -> dict:
    import baselines

    t0 = time.perf_counter()
    result = baselines.compare(toolkit_db, duckdb_db, polars_dir)
    return {"seconds": time.perf_counter() - t0, **result}


def step_many_files_case(data: str, files: int, seed: int, fmt: str) -> dict:
    folder, one, mapping = many_files_case(Path(data), files, seed, fmt)
    return {"folder": str(folder), "one": str(one), "mapping": str(mapping)}


def step_one_row_group_case(data: str, size: int, seed: int) -> dict:
    case, truth = one_row_group_case(Path(data), size, seed)
    return {"case": str(case), "truth": truth}


STEPS = {
    "toolkit_ingest": step_toolkit_ingest,
    "toolkit_analyze": step_toolkit_analyze,
    "toolkit_report": step_toolkit_report,
    "toolkit_notify": step_toolkit_notify,
    "bare_files": step_bare_files,
    "toolkit_run": step_toolkit_run,
    "bare_read": step_bare_read,
    "export": step_export,
    "duckdb_sql": step_duckdb_sql,
    "polars": step_polars,
    "compare": step_compare,
    "duckdb_ingest": step_duckdb_ingest,
    "polars_ingest": step_polars_ingest,
    "compare_ingest": step_compare_ingest,
    "many_files_case": step_many_files_case,
    "one_row_group_case": step_one_row_group_case,
}


def run_step(name: str, **params: Any) -> dict:
    """Run one step in a child process: its JSON result plus wall_s, cpu_s (the child's user +
    system time, imports included), peak_rss_mb and load_1m."""
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
    # CPU time of the whole child (all its threads, imports included): unlike the times, it
    # hardly moves with the machine's load
    result["cpu_s"] = usage.ru_utime + usage.ru_stime
    result["peak_rss_mb"] = usage.ru_maxrss / 1024  # Linux: kilobytes
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
    """Median work time, median wall and CPU time, the largest peak RSS and load over
    repeats."""
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


def _figures(run: dict, drop: tuple[str, ...] = ()) -> dict:
    """A step's result without its timings."""
    skip = {"seconds", "wall_s", "cpu_s", "peak_rss_mb", "load_1m", *drop}
    return {k: v for k, v in run.items() if k not in skip and not k.endswith("seconds")}


def _unlink_db(db: Path) -> None:
    for p in (db, Path(str(db) + ".wal")):
        p.unlink(missing_ok=True)


def bench_ingest(
    case: Path, fmt: str, size: int, repeats: int, work: Path, args: argparse.Namespace
) -> tuple[dict, Path]:
    """Toolkit ingest vs DuckDB's bare read of one log and, for JSONL, vs the equal-work
    ingests (DuckDB SQL; Polars up to --polars-ingest-max); with --no-baselines the toolkit
    alone. Returns the figures and the case db."""
    log = log_of(case)
    mapping = str(case / "gateway.mapping.toml")
    db, raw_db = work / f"{fmt}-{size}.duckdb", work / f"{fmt}-{size}-raw.duckdb"
    eq_db, eq_pl = work / f"{fmt}-{size}-eq.duckdb", work / f"{fmt}-{size}-eq-pl"
    equal_work = args.baselines and fmt == "jsonl"
    polars = equal_work and size <= args.polars_ingest_max
    tk: list[dict] = []
    raw: list[dict] = []
    dd: list[dict] = []
    pl: list[dict] = []
    for i in range(repeats):
        print(f"  {fmt} {size:,} repeat {i + 1}: ingest", flush=True)
        tk.append(run_step("toolkit_ingest", log=str(log), db=str(db), mapping=mapping))
        if args.baselines:
            raw.append(run_step("bare_read", log=str(log), db=str(raw_db)))
        if equal_work:
            memory_limit = args.baseline_memory_limit
            dd.append(
                run_step(
                    "duckdb_ingest",
                    log=str(log),
                    db=str(eq_db),
                    mapping=mapping,
                    memory_limit=memory_limit,
                )
            )
            if polars:
                pl.append(
                    run_step("polars_ingest", log=str(log), out_dir=str(eq_pl), mapping=mapping)
                )
    _unlink_db(raw_db)
    out: dict[str, Any] = {
        "file_bytes": log.stat().st_size,
        "toolkit": summarize(tk),
        "totals": {
            k: v
            for k, v in tk[-1].items()
            if k in ("rows_read", "rows_loaded", "duplicates", "quarantined")
        },
    }
    out["toolkit"]["rows_per_s"] = out["totals"]["rows_read"] / out["toolkit"]["median_s"]
    if not raw:  # --no-baselines
        return out, db
    out["duckdb_bare_read"] = {**summarize(raw), "rows": raw[-1]["rows"]}
    out["ratio_toolkit_vs_bare_read"] = (
        out["toolkit"]["median_s"] / out["duckdb_bare_read"]["median_s"]
    )
    if dd:
        same = run_step(
            "compare_ingest",
            toolkit_db=str(db),
            duckdb_db=str(eq_db),
            polars_dir=str(eq_pl) if pl else None,
        )
        out["duckdb_sql"] = summarize(dd)
        out["ratio_toolkit_vs_duckdb_sql"] = (
            out["toolkit"]["median_s"] / out["duckdb_sql"]["median_s"]
        )
        out["figures"] = {"duckdb_sql": _figures(dd[-1])}
        if pl:
            out["polars"] = summarize(pl)
            out["ratio_toolkit_vs_polars"] = out["toolkit"]["median_s"] / out["polars"]["median_s"]
            out["figures"]["polars"] = _figures(pl[-1])
        out["equal_work_identical"] = same["identical"]
        out["equal_work_differences"] = same["differences"]
        _unlink_db(eq_db)
        shutil.rmtree(eq_pl, ignore_errors=True)
    return out, db


def bench_analyze(
    case: Path, db: Path, size: int, repeats: int, work: Path, args: argparse.Namespace
) -> dict:
    """Toolkit analyze vs the DuckDB SQL and (up to --polars-max) Polars equal-work
    baselines, then the check (with --no-baselines the toolkit alone: its figures are
    checked against truth.json)."""
    if not args.baselines:
        incident, out = str(case / "incident.toml"), args.outs / f"out-{size}"
        tk = []
        for i in range(repeats):
            print(f"  analyze {size:,} repeat {i + 1}", flush=True)
            tk.append(run_step("toolkit_analyze", case=incident, db=str(db), out=str(out)))
        return {
            "toolkit": summarize(tk),
            "identical": None,
            "figures": {"toolkit": _figures(tk[-1])},
        }
    requests = work / f"requests-{size}.parquet"
    export = run_step("export", db=str(db), parquet=str(requests))
    incident = str(case / "incident.toml")
    dd_db, pl_dir, out = work / f"eq-{size}.duckdb", work / f"pl-{size}", args.outs / f"out-{size}"
    polars = size <= args.polars_max
    tk: list[dict] = []
    dd: list[dict] = []
    pl: list[dict] = []
    for i in range(repeats):
        print(f"  analyze {size:,} repeat {i + 1}", flush=True)
        tk.append(run_step("toolkit_analyze", case=incident, db=str(db), out=str(out)))
        dd.append(
            run_step(
                "duckdb_sql",
                case=incident,
                requests=str(requests),
                db=str(dd_db),
                memory_limit=args.baseline_memory_limit,
            )
        )
        if polars:
            pl.append(
                run_step("polars", case=incident, requests=str(requests), out_dir=str(pl_dir))
            )
    same = run_step(
        "compare",
        toolkit_db=str(db),
        duckdb_db=str(dd_db),
        polars_dir=str(pl_dir) if polars else None,
    )
    runs = {"duckdb_sql": dd, **({"polars": pl} if polars else {})}
    an: dict[str, Any] = {
        "requests_parquet": {"rows": export["rows"], "bytes": requests.stat().st_size},
        "toolkit": summarize(tk),
        **{name: summarize(r) for name, r in runs.items()},
        "identical": same["identical"],
        "differences": same["differences"],
        "figures": {
            "toolkit": _figures(tk[-1]),
            **{name: _figures(r[-1]) for name, r in runs.items()},
        },
        "phases_s": {
            name: {
                "bands": statistics.median(x["bands_seconds"] for x in r),
                "owners": statistics.median(x["owners_seconds"] for x in r),
                "blast_radius": statistics.median(x["blast_radius_seconds"] for x in r),
                "figures": statistics.median(x["figures_seconds"] for x in r),
            }
            for name, r in runs.items()
        },
    }
    for name in runs:
        an[f"ratio_toolkit_vs_{name}"] = an["toolkit"]["median_s"] / an[name]["median_s"]
    _unlink_db(dd_db)
    requests.unlink(missing_ok=True)
    shutil.rmtree(pl_dir, ignore_errors=True)
    return an


def bench_report(case: Path, db: Path, size: int, repeats: int, outs: Path) -> dict:
    """`forensics report` on the analysed case (analyze wrote outs/out-SIZE): time, peak RSS
    and the sizes of what it wrote."""
    out, runs = outs / f"out-{size}", []
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


def bench_notify(case: Path, db: Path, size: int, repeats: int, outs: Path) -> dict:
    """`forensics notify` on the analysed case, each repeat into a fresh copy of the folder
    analyze and report wrote (outs/out-SIZE): the work of notify after analyze, what issue 39
    compares, alike in every repeat (a re-run into a folder of earlier notices deletes them
    first, and on a file system mounted with `discard` files created after a mass deletion
    cost several times more); beside it the floor of its files: as many new files of the
    same bytes written bare (`step_bare_files`) on the same file system. The copies are
    removed once every repeat is timed."""
    analyzed, runs, bare, copies = outs / f"out-{size}", [], [], []
    for i in range(repeats):
        print(f"  notify {size:,} repeat {i + 1}", flush=True)
        out = outs / f"notify-{size}-{i + 1}"
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(analyzed, out, ignore=lambda d, _: ["notify"] if d == str(analyzed) else [])
        copies.append(out)
        runs.append(
            run_step("toolkit_notify", case=str(case / "incident.toml"), db=str(db), out=str(out))
        )
        # counted here, not in the timed process: listing 42,000 files is no work of notify's
        runs[-1].update(notified_files(out))
        files = runs[-1]["notices"] + runs[-1]["messages"]
        bare.append(
            run_step(
                "bare_files",
                folder=str(outs / f"bare-files-{size}"),
                count=files,
                size=max(1, runs[-1]["bytes"] // max(1, files)),
            )
        )
    for out in copies:
        shutil.rmtree(out, ignore_errors=True)
    return {
        "toolkit": summarize(runs),
        "bare_files": summarize(bare),
        "notices": runs[-1]["notices"],
        "messages": runs[-1]["messages"],
        "bytes": runs[-1]["bytes"],
    }


def bench_run(case: Path, truth: dict, size: int, fmt: str, repeats: int, outs: Path) -> dict:
    """`forensics run` on the sample case of (size, format): its total, its stages' wall and
    CPU times (medians; see stage_of), the slowest stage and the report's share of the run."""
    runs = []
    for i in range(repeats):
        print(f"  forensics run {fmt} {size:,} repeat {i + 1}", flush=True)
        runs.append(
            run_step("toolkit_run", case=str(case / "incident.toml"), out=str(outs / "run-out"))
        )

    def medians(key: str) -> dict[str, float]:
        names = dict.fromkeys(k for r in runs for k in r[key])  # first seen, run order
        return {k: statistics.median(r[key].get(k, 0.0) for r in runs) for k in names}

    stages = medians("stages_s")
    shares = [
        (r["stages_s"].get("report", 0.0) + r["stages_s"].get("chart export", 0.0)) / r["seconds"]
        for r in runs
    ]
    return {
        "size": size,
        "format": fmt,
        "toolkit": summarize(runs),
        "stages_s": stages,
        "stages_cpu_s": medians("stages_cpu_s"),
        "steps_s": medians("steps_s"),
        "slowest_stage": max((k for k in stages if k != "other"), key=lambda k: stages[k]),
        "report_share": statistics.median(shares),
        "exposure_count": runs[-1]["exposure_count"],
        "exposure_equals_truth": all(r["exposure_count"] == truth["exposure_count"] for r in runs),
    }


def check(row: dict, truth: dict) -> dict:
    """Exposure figures and band counts of every contender equal truth.json; the toolkit's
    ingest totals equal it; the analyses are the same sets (compare); the equal-work ingests
    loaded and set aside the same records as the toolkit (compare_ingest); report.html
    shows the true exposure figures, and `run` found the true exposure count."""
    an = row["analyze"]
    checks = {} if an["identical"] is None else {"analyses_identical": an["identical"]}
    if "report" in row:
        checks["report_shows_truth"] = row["report"]["shown"] == {
            k: truth[k] for k in ("exposure_count", "affected_accounts")
        }
    if "run" in row:
        checks["run_equals_truth"] = row["run"]["exposure_equals_truth"]
    for name, f in an["figures"].items():
        bands = {b: n for b, n in f["bands"].items() if n}
        checks[f"{name}_equals_truth"] = (
            f["exposure_count"] == truth["exposure_count"]
            and f["affected_accounts"] == truth["affected_accounts"]
            and bands == {b: n for b, n in truth["bands"].items() if n}
        )
    for fmt, ing in row["ingest"].items():
        checks[f"{fmt}_ingest_equals_truth"] = ing["totals"] == ing["truth"]
        if "equal_work_identical" in ing:
            checks[f"{fmt}_equal_work_ingests_identical"] = ing["equal_work_identical"]
            for name, f in ing["figures"].items():
                checks[f"{fmt}_{name}_ingest_equals_truth"] = {
                    k: f[k] for k in ("rows_read", "rows_loaded", "duplicates", "quarantined")
                } == ing["truth"]
    checks["ok"] = all(checks.values())
    return checks


def bench_size(size: int, args: argparse.Namespace, data: Path, work: Path) -> dict:
    """Ingest per format, then analyze, report and (at --run-sizes) run on the Parquet case,
    at one size."""
    repeats = args.repeats_by_size[size]
    row: dict[str, Any] = {"size": size, "repeats": repeats, "ingest": {}}
    pq_db = None
    formats = args.formats if size < LARGE else [f for f in args.formats if f == "parquet"]
    for fmt in formats:
        case, truth = ensure_case(data, size, fmt, args.seed)
        row["ingest"][fmt], db = bench_ingest(case, fmt, size, repeats, work, args)
        row["ingest"][fmt]["truth"] = truth["ingest"]
        if fmt == "parquet":
            pq_db = db
        else:
            _unlink_db(db)
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
    row["analyze"] = bench_analyze(pq_case, pq_db, size, repeats, work, args)
    row["report"] = bench_report(pq_case, pq_db, size, repeats, args.outs)
    row["notify"] = bench_notify(pq_case, pq_db, size, repeats, args.outs)
    # as the commands run (interpreter start, imports, the work): what `forensics notify` and
    # `forensics analyze` take for a user; the work alone (`median_s`) is in the table too
    row["notify"]["ratio_vs_analyze"] = (
        row["notify"]["toolkit"]["median_wall_s"] / row["analyze"]["toolkit"]["median_wall_s"]
    )
    _unlink_db(pq_db)
    shutil.rmtree(args.outs / f"out-{size}", ignore_errors=True)
    if size in args.run_sizes:
        row["run"] = bench_run(pq_case, truth, size, "parquet", repeats, args.outs)
    row["correctness"] = check(row, truth)
    loads = [
        x
        for part in [
            *row["ingest"].values(),
            row["analyze"],
            row["report"],
            row["notify"],
            row.get("run", {}),
        ]
        for contender in part.values()
        if isinstance(contender, dict) and "load_1m" in contender
        for x in contender["load_1m"]
    ]
    row["load_1m"] = {"min": min(loads), "median": statistics.median(loads), "max": max(loads)}
    return row


def many_files_case(data: Path, files: int, seed: int, fmt: str) -> tuple[Path, Path, Path]:
    """A sample case split into files of FILE_RECORDS records each (as hourly, per-rank
    exports arrive): JSONL as gzip files, Parquet as files of one row group; (folder of the
    files, the one-file log, its mapping)."""
    requests = max(files * FILE_RECORDS, 5000)
    case, _ = ensure_case(data, requests, fmt, seed)
    kind = "" if fmt == "jsonl" else f"{fmt}-"  # the JSONL folders as named before
    folder = data / f"many-{kind}{files}x{FILE_RECORDS}-s{seed}"
    suffix = ".jsonl.gz" if fmt == "jsonl" else ".parquet"
    done = folder / "DONE"
    if not done.is_file():
        shutil.rmtree(folder, ignore_errors=True)
        (folder / "one").mkdir(parents=True)
        if fmt == "jsonl":
            with gzip.open(log_of(case), "rb") as fh:
                lines = fh.read().splitlines(keepends=True)[: files * FILE_RECORDS]
            for i in range(0, len(lines), FILE_RECORDS):
                part = folder / f"gateway-{i // FILE_RECORDS:05d}{suffix}"
                part.write_bytes(gzip.compress(b"".join(lines[i : i + FILE_RECORDS]), mtime=0))
            one = folder / "one" / f"gateway{suffix}"
            one.write_bytes(gzip.compress(b"".join(lines), mtime=0))
        else:
            import duckdb

            con = duckdb.connect()
            con.execute(
                "CREATE TABLE t AS SELECT * FROM read_parquet($p) LIMIT $n",
                {"p": str(log_of(case)), "n": files * FILE_RECORDS},
            )
            for i in range(files):
                part = folder / f"gateway-{i:05d}{suffix}"
                con.execute(
                    f"COPY (SELECT * FROM t WHERE rowid >= {i * FILE_RECORDS} "
                    f"AND rowid < {(i + 1) * FILE_RECORDS} ORDER BY rowid) TO '{part}' "
                    "(FORMAT parquet)"
                )
            one = folder / "one" / f"gateway{suffix}"
            con.execute(f"COPY (SELECT * FROM t ORDER BY rowid) TO '{one}' (FORMAT parquet)")
            con.close()
        done.write_text("", encoding="utf-8")
    return folder, folder / "one" / f"gateway{suffix}", case / "gateway.mapping.toml"


def bench_many_files(files: int, args: argparse.Namespace, data: Path, work: Path) -> dict:
    """One `forensics ingest` of `files` files of FILE_RECORDS records (--many-files-format)
    against the same records in one file: files per second and the ratio of the two times."""
    fmt = args.many_files_format
    # made in a child: a parent's memory counts in its children's peak RSS (they fork from it)
    made = run_step("many_files_case", data=str(data), files=files, seed=args.seed, fmt=fmt)
    folder, one, mapping = Path(made["folder"]), Path(made["one"]), Path(made["mapping"])
    parts = str(folder / ("gateway-*.jsonl.gz" if fmt == "jsonl" else "gateway-*.parquet"))
    print(f"many files: {files} {fmt} x {FILE_RECORDS} records", flush=True)
    db_many, db_one = work / "many.duckdb", work / "one.duckdb"
    many = run_step("toolkit_ingest", log=parts, db=str(db_many), mapping=str(mapping))
    single = run_step("toolkit_ingest", log=str(one), db=str(db_one), mapping=str(mapping))
    _unlink_db(db_many)
    _unlink_db(db_one)
    keys = ("rows_read", "rows_loaded", "duplicates", "quarantined")
    return {
        "files": files,
        "format": fmt,
        "records_per_file": FILE_RECORDS,
        "seconds": many["seconds"],
        "cpu_s": many["cpu_s"],
        "peak_rss_mb": many["peak_rss_mb"],
        "files_per_s": files / many["seconds"],
        "seconds_per_file": many["seconds"] / files,
        "one_file_seconds": single["seconds"],
        "ratio_many_vs_one_file": many["seconds"] / single["seconds"],
        "load_1m": [many["load_1m"], single["load_1m"]],
        "same_totals": {k: many[k] for k in keys} == {k: single[k] for k in keys},
        "totals": {k: many[k] for k in keys},
    }


def one_row_group_case(data: Path, size: int, seed: int) -> tuple[Path, dict]:
    """The Parquet sample of `size` requests rewritten as one row group, as pyarrow writes up
    to 1M rows (before version 15 up to 64M): (a case folder of the file and its mapping, the
    sample's truth)."""
    case, truth = ensure_case(data, size, "parquet", seed)
    folder = data / f"parquet-{size}-s{seed}-one-row-group"
    one = folder / "gateway.parquet"
    if not one.is_file():
        import duckdb

        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(case / "gateway.mapping.toml", folder / "gateway.mapping.toml")
        part = data / f"{folder.name}.part"  # not in the folder: log_of finds the log there
        con = duckdb.connect()
        con.execute(
            f"COPY (SELECT * FROM read_parquet($p)) TO '{part}' "
            f"(FORMAT parquet, ROW_GROUP_SIZE {size + 1})",
            {"p": str(log_of(case))},
        )
        groups = con.execute(
            "SELECT num_row_groups FROM parquet_file_metadata($p)", {"p": str(part)}
        ).fetchall()
        con.close()
        if groups != [(1,)]:
            raise RuntimeError(f"{part}: {groups} row groups, not one")
        part.replace(one)
    return folder, truth


def bench_one_row_group(size: int, args: argparse.Namespace, data: Path, work: Path) -> dict:
    """Toolkit ingest vs DuckDB's bare read (`bench_ingest`) of the Parquet sample of `size`
    requests written as one row group (DuckDB reads a row group on one thread; the toolkit
    reads such a file as row ranges), repeated as often as the most repeated size."""
    # made in a child: a parent's memory counts in its children's peak RSS (they fork from it)
    made = run_step("one_row_group_case", data=str(data), size=size, seed=args.seed)
    print(f"one row group: {size:,} Parquet requests", flush=True)
    repeats = max(args.repeats_by_size.values())
    out, db = bench_ingest(Path(made["case"]), "parquet", size, repeats, work, args)
    _unlink_db(db)
    return {
        "requests": size,
        "row_groups": 1,
        **out,
        "equals_truth": out["totals"] == made["truth"]["ingest"],
    }


def scaling(rows: list[dict]) -> dict:
    """Cost growth from the smallest to the largest size against n and n log n, and between
    each size and the next (time and CPU)."""
    if len(rows) < 2:
        return {}
    rows = sorted(rows, key=lambda r: r["size"])
    a, b = rows[0], rows[-1]
    n_ratio = b["size"] / a["size"]
    nlogn = n_ratio * math.log(b["size"]) / math.log(a["size"])
    out: dict[str, Any] = {
        "from": a["size"],
        "to": b["size"],
        "n_ratio": n_ratio,
        "nlogn_ratio": nlogn,
    }
    for fmt in a["ingest"]:
        if fmt in b["ingest"]:
            out[f"{fmt}_ingest_time_ratio"] = (
                b["ingest"][fmt]["toolkit"]["median_s"] / a["ingest"][fmt]["toolkit"]["median_s"]
            )
    out["analyze_time_ratio"] = (
        b["analyze"]["toolkit"]["median_s"] / a["analyze"]["toolkit"]["median_s"]
    )
    out["within_nlogn"] = all(v <= nlogn for k, v in out.items() if k.endswith("_time_ratio"))
    steps = []
    for x, y in itertools.pairwise(rows):
        step: dict[str, Any] = {
            "from": x["size"],
            "to": y["size"],
            "n_ratio": y["size"] / x["size"],
        }
        for what in ("median_s", "median_cpu_s"):
            step[f"analyze_{what}_ratio"] = (
                y["analyze"]["toolkit"][what] / x["analyze"]["toolkit"][what]
            )
            if "parquet" in x["ingest"] and "parquet" in y["ingest"]:
                step[f"parquet_ingest_{what}_ratio"] = (
                    y["ingest"]["parquet"]["toolkit"][what]
                    / x["ingest"]["parquet"]["toolkit"][what]
                )
        steps.append(step)
    out["steps"] = steps
    return out


def growth_target(scale: dict) -> dict:
    """The n log n growth target (`scaling`): the n log n ratio and each time ratio it judges,
    smallest size to largest, so that a miss says what grew too fast."""
    ratios = {k: v for k, v in scale.items() if k.endswith("_time_ratio")}
    return {"nlogn_ratio": scale["nlogn_ratio"], **ratios, "met": scale["within_nlogn"]}


def targets(rows: list[dict], scale: dict, many: dict | None) -> dict:
    """Issues 14's, 24's and 25's targets (worst case over the sizes run; those against a
    baseline only where the baselines ran), each with the figure behind it."""
    biggest = max(rows, key=lambda r: r["size"])
    out: dict[str, Any] = {}
    compared = [r for r in rows if "ratio_toolkit_vs_duckdb_sql" in r["analyze"]]
    if compared:
        analyze = max(r["analyze"]["ratio_toolkit_vs_duckdb_sql"] for r in compared)
        out["analyze_within_1.5x_of_duckdb_sql"] = {
            "worst_ratio": analyze,
            "per_size": {
                str(r["size"]): round(r["analyze"]["ratio_toolkit_vs_duckdb_sql"], 2)
                for r in compared
            },
            "met": analyze <= TARGETS["analyze_vs_duckdb_sql"],
        }
    for fmt, key, vs, target in (
        (
            "parquet",
            "ratio_toolkit_vs_bare_read",
            "1.8x_of_bare_read",
            "parquet_ingest_vs_bare_read",
        ),
        (
            "jsonl",
            "ratio_toolkit_vs_duckdb_sql",
            "1.25x_of_duckdb_sql_ingest",
            "jsonl_ingest_vs_duckdb_sql_ingest",
        ),
    ):
        per = {
            str(r["size"]): r["ingest"][fmt][key] for r in rows if key in r["ingest"].get(fmt, {})
        }
        if per:
            out[f"{fmt}_ingest_within_{vs}"] = {
                "worst_ratio": max(per.values()),
                "per_size": {k: round(v, 2) for k, v in per.items()},
                "met": max(per.values()) <= TARGETS[target],
            }
    for r in rows:  # from RSS_FROM on, and at the largest size run
        if r["size"] < RSS_FROM and r is not biggest:
            continue
        rss = {
            **{f"ingest_{fmt}": ing["toolkit"]["peak_rss_mb"] for fmt, ing in r["ingest"].items()},
            "analyze": r["analyze"]["toolkit"]["peak_rss_mb"],
            "report": r["report"]["toolkit"]["peak_rss_mb"],
            **({"notify": r["notify"]["toolkit"]["peak_rss_mb"]} if "notify" in r else {}),
        }
        out[f"peak_rss_under_2gb_at_{r['size']}"] = {
            "peak_rss_mb": max(rss.values()),
            "per_step_mb": {k: round(v) for k, v in rss.items()},
            "met": max(rss.values()) < TARGETS["peak_rss_mb"],
        }
    by_size = {r["size"]: r for r in rows}
    if 20_000_000 in by_size and 100_000_000 in by_size:
        a, b = by_size[20_000_000]["analyze"]["toolkit"], by_size[100_000_000]["analyze"]["toolkit"]
        out["analyze_growth_20m_to_100m_within_6x"] = {
            "time_ratio": b["median_s"] / a["median_s"],
            "cpu_ratio": b["median_cpu_s"] / a["median_cpu_s"],
            "met": b["median_s"] / a["median_s"] <= TARGETS["analyze_growth_20m_to_100m"],
        }
        a, b = (by_size[n]["ingest"]["parquet"]["toolkit"] for n in (20_000_000, 100_000_000))
        out["parquet_ingest_growth_20m_to_100m_within_6x"] = {
            "time_ratio": b["median_s"] / a["median_s"],
            "cpu_ratio": b["median_cpu_s"] / a["median_cpu_s"],
            "met": b["median_s"] / a["median_s"] <= TARGETS["ingest_growth_20m_to_100m"],
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
    notify = {str(r["size"]): r["notify"]["ratio_vs_analyze"] for r in rows if "notify" in r}
    if notify:
        out["notify_within_analyze"] = {
            "worst_ratio": max(notify.values()),
            "per_size": {k: round(v, 2) for k, v in notify.items()},
            "peak_rss_mb": max(
                r["notify"]["toolkit"]["peak_rss_mb"] for r in rows if "notify" in r
            ),
            "met": max(notify.values()) <= TARGETS["notify_vs_analyze"]
            and max(r["notify"]["toolkit"]["peak_rss_mb"] for r in rows if "notify" in r)
            < TARGETS["peak_rss_mb"],
        }
    stages = {
        str(r["size"]): r["run"]["stages_s"].get("notify", 0.0)
        / max(r["run"]["stages_s"].get("analyze", 0.0), 1e-9)
        for r in rows
        if "run" in r
    }
    if stages:
        out["run_notify_stage_within_analyze_stage"] = {
            "worst_ratio": max(stages.values()),
            "per_size": {k: round(v, 2) for k, v in stages.items()},
            "met": max(stages.values()) <= TARGETS["notify_vs_analyze"],
        }
    shares = {str(r["size"]): round(r["run"]["report_share"], 3) for r in rows if "run" in r}
    if shares:
        out["report_under_a_quarter_of_run"] = {
            "worst_share": max(shares.values()),
            "per_size": shares,
            "met": max(shares.values()) < TARGETS["report_share_of_run"],
        }
    if scale:
        out["growth_within_nlogn"] = growth_target(scale)
    if many is not None:
        out[f"many_files_within_2x_of_one_file_at_{many['files']}_files"] = {
            "ratio": many["ratio_many_vs_one_file"],
            "met": many["ratio_many_vs_one_file"] <= TARGETS["many_files_vs_one_file"],
        }
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


def file_system(path: Path) -> str:
    """The type of the file system holding `path` (Linux: /proc/mounts), else "unknown"."""
    try:
        mounts = [line.split()[1:3] for line in Path("/proc/mounts").read_text().splitlines()]
    except OSError:
        return "unknown"
    real = str(path.resolve())
    held = [
        (point, kind)
        for point, kind in mounts
        if real == point or real.startswith(point.rstrip("/") + "/")
    ]
    return max(held, key=lambda m: len(m[0]))[1] if held else "unknown"


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
    """The results as plain-text tables (also what the README and docs quote)."""
    m, st = doc["machine"], doc["settings"]
    lines = [
        f"machine: {m['cores']} cores, {m['memory_gib']} GiB RAM, {m['cpu']}; DuckDB "
        f"{m['duckdb']}, Polars {m['polars']}; DuckDB memory limit {st['memory_limit']} "
        "(toolkit default; the DuckDB SQL baselines get the same); medians of "
        + ", ".join(f"{n} run(s) at {int(s):,}" for s, n in st["repeats"].items())
        + f"; load average {m['load_average_at_start'][0]:.1f} at start, "
        f"{doc['load_average_at_end'][0]:.1f} at end",
        "",
        "ingest (s; CPU s in brackets): toolkit vs DuckDB's bare read and, for JSONL, the "
        "equal-work ingests",
        "",
        "| requests | format | toolkit s | bare read s | ratio | DuckDB SQL equal work s | ratio "
        "| Polars equal work s | ratio | peak RSS MB | load 1m |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]

    def cell(part: dict, name: str, ratio: str) -> list[str]:
        if name not in part:
            return ["-", "-"]
        return [f"{part[name]['median_s']:.1f}", f"{part[ratio]:.2f}x"]

    for r in doc["results"]:
        for fmt, i in r["ingest"].items():
            t = i["toolkit"]
            lines.append(
                "| "
                + " | ".join(
                    [
                        f"{r['size']:,}",
                        fmt,
                        f"{t['median_s']:.1f} ({t['median_cpu_s']:.0f})",
                        *cell(i, "duckdb_bare_read", "ratio_toolkit_vs_bare_read"),
                        *cell(i, "duckdb_sql", "ratio_toolkit_vs_duckdb_sql"),
                        *cell(i, "polars", "ratio_toolkit_vs_polars"),
                        f"{t['peak_rss_mb']:.0f}",
                        f"{min(t['load_1m']):.1f}-{max(t['load_1m']):.1f}",
                    ]
                )
                + " |"
            )
    lines += [
        "",
        "analyze (s; CPU s in brackets): toolkit vs the equal-work baselines",
        "",
        "| requests | analyze s | DuckDB SQL s | ratio | Polars s | ratio | peak RSS MB "
        "| identical | load 1m |",
        "|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in doc["results"]:
        a = r["analyze"]
        t = a["toolkit"]
        lines.append(
            "| "
            + " | ".join(
                [
                    f"{r['size']:,}",
                    f"{t['median_s']:.2f} ({t['median_cpu_s']:.0f})",
                    *cell(a, "duckdb_sql", "ratio_toolkit_vs_duckdb_sql"),
                    *cell(a, "polars", "ratio_toolkit_vs_polars"),
                    f"{t['peak_rss_mb']:.0f}",
                    ("NO" if not r["correctness"]["ok"] else "yes")
                    if a["identical"] is not None
                    else "figures = truth"  # --no-baselines: nothing to compare with
                    if r["correctness"]["ok"]
                    else "NO",
                    f"{r['load_1m']['min']:.1f}-{r['load_1m']['max']:.1f}",
                ]
            )
            + " |"
        )
    lines += [
        "",
        "report (forensics report on the analysed Parquet case; s, sizes in MB) and its share "
        "of forensics run ((report + chart export) / run)",
        "",
        "| requests | report s | report wall s | report CPU s | report peak RSS MB "
        "| report.html MB | timeline.svg MB | timeline.png MB | run s | report share of run |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
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
            f"{run['report_share']:.0%}" if run else "-",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    notified = [r for r in doc["results"] if "notify" in r]
    if notified:
        lines += [
            "",
            "notify (forensics notify on the analysed Parquet case, into a copy of analyze's "
            "folder) against analyze, each as the command runs (wall: interpreter start, "
            "imports, the work) and its work alone, and the floor of its files: as many new "
            "files of the same bytes written bare",
            "",
            "| requests | notices | messages | MB | notify wall s | analyze wall s | ratio "
            "| notify s | analyze s | bare file writes s | notify CPU s | notify peak RSS MB |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in notified:
            n = r["notify"]
            lines.append(
                "| "
                + " | ".join(
                    [
                        f"{r['size']:,}",
                        f"{n['notices']:,}",
                        f"{n['messages']:,}",
                        f"{n['bytes'] / MB:.0f}",
                        f"{n['toolkit']['median_wall_s']:.2f}",
                        f"{r['analyze']['toolkit']['median_wall_s']:.2f}",
                        f"{n['ratio_vs_analyze']:.2f}x",
                        f"{n['toolkit']['median_s']:.2f}",
                        f"{r['analyze']['toolkit']['median_s']:.2f}",
                        f"{n['bare_files']['median_s']:.2f}",
                        f"{n['toolkit']['median_cpu_s']:.1f}",
                        f"{n['toolkit']['peak_rss_mb']:.0f}",
                    ]
                )
                + " |"
            )
    # every `forensics run` measured: at --run-sizes (Parquet) and at --e2e-size per format
    runs = {(e["size"], e["format"]): e for r in doc["results"] if "run" in r for e in [r["run"]]}
    for e in doc.get("end_to_end") or []:
        runs.setdefault((e["size"], e["format"]), e)
    if runs:
        stages = [k for k in STAGES if any(k in e["stages_s"] for e in runs.values())]
        lines += [
            "",
            "forensics run, per stage (s, medians)",
            "",
            "| requests | format | " + " | ".join(stages) + " | total | slowest | load 1m |",
            "|---:|---|" + "---:|" * (len(stages) + 1) + "---|---|",
        ]
        for e in runs.values():
            cells = [f"{e['stages_s'].get(k, 0):.1f}" for k in stages]
            t = e["toolkit"]
            lines.append(
                f"| {e['size']:,} | {e['format']} | "
                + " | ".join(cells)
                + f" | {t['median_s']:.1f} | {e['slowest_stage']} "
                f"| {min(t['load_1m']):.1f}-{max(t['load_1m']):.1f} |"
            )
    if doc.get("many_files"):
        f = doc["many_files"]
        lines += [
            "",
            f"many files: {f['files']:,} {f.get('format', 'jsonl')} files of "
            f"{f['records_per_file']} records in one "
            f"ingest: {f['seconds']:.1f} s ({f['files_per_s']:.1f} files/s, "
            f"{f['seconds_per_file']:.3f} s a file); the same records in one file "
            f"{f['one_file_seconds']:.1f} s: {f['ratio_many_vs_one_file']:.1f}x",
        ]
    if doc.get("one_row_group"):
        o = doc["one_row_group"]
        line = (
            f"one row group: {o['requests']:,} Parquet requests in one row group, toolkit "
            f"{o['toolkit']['median_s']:.2f} s"
        )
        if "duckdb_bare_read" in o:
            line += (
                f" vs DuckDB's bare read {o['duckdb_bare_read']['median_s']:.2f} s: "
                f"{o['ratio_toolkit_vs_bare_read']:.2f}x"
            )
        lines += ["", line]
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
        for g in e["steps"]:
            parts = ", ".join(
                f"{_growth_label(k)} x{v:.1f}"
                for k, v in g.items()
                if k.endswith("_ratio") and k != "n_ratio"
            )
            lines.append(f"growth {g['from']:,} -> {g['to']:,} (n x{g['n_ratio']:.0f}): {parts}")
    return "\n".join(lines)


def _growth_label(key: str) -> str:
    """`analyze_median_cpu_s_ratio` -> `analyze CPU`, `analyze_median_s_ratio` -> `analyze`."""
    name = key.removesuffix("_ratio")
    return name.replace("_median_cpu_s", " CPU").replace("_median_s", "")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--sizes",
        default="1e6,5e6,2e7",
        help="requests per case, comma-separated; 1e8 is opt-in (~3.6 GB of Parquet, "
        "generated once under --data-dir)",
    )
    ap.add_argument("--formats", default="parquet,jsonl", help="parquet and/or jsonl (ingest)")
    ap.add_argument(
        "--repeats", default="3", help="runs per step: one number, or one per size (3,3,1)"
    )
    ap.add_argument(
        "--polars-max",
        type=float,
        default=2e7,
        help="largest size the Polars analyze baseline runs at (it holds the case in memory)",
    )
    ap.add_argument(
        "--polars-ingest-max",
        type=float,
        default=1e6,
        help="largest size the Polars JSONL ingest runs at (~1.9 GB of RSS per 1M records)",
    )
    ap.add_argument(
        "--run-sizes",
        default="5e6",
        help="sizes (of --sizes) at which `forensics run` is timed too, stage by stage, on the "
        "Parquet case, comma-separated: the report's share of run",
    )
    ap.add_argument(
        "--e2e-size",
        type=float,
        default=5e6,
        help="`forensics run` per format at this size, each stage timed (0: skip)",
    )
    ap.add_argument(
        "--many-files",
        type=int,
        default=300,
        help=f"files of {FILE_RECORDS} records ingested in one call (0: skip)",
    )
    ap.add_argument(
        "--many-files-format",
        choices=("jsonl", "parquet"),
        default="jsonl",
        help="the format of the --many-files files (JSONL gzip, or Parquet)",
    )
    ap.add_argument(
        "--one-row-group",
        type=float,
        default=0,
        help="ingest the Parquet sample of this many requests written as one row group, "
        "against DuckDB's bare read of it (0: skip)",
    )
    ap.add_argument(
        "--no-baselines",
        dest="baselines",
        action="store_false",
        help="time the toolkit alone (no bare reads, no equal-work ingests or analyses; "
        "figures are checked against truth.json): for sizes where the baselines would not fit",
    )
    ap.add_argument("--cli-repeats", type=int, default=5, help="runs of `forensics --help`")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "latest.json")
    ap.add_argument("--data-dir", type=Path, default=HERE / "data")
    ap.add_argument(
        "--out-dir",
        type=Path,
        help="the folder the commands write their outputs under (analyze, report, notify, run, "
        "the bare files); default: the work folder under --data-dir. A tmpfs folder (e.g. "
        "/dev/shm/kvf-bench) keeps a disk's state after mass deletions out of the timings",
    )
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
    args.polars_max = int(args.polars_max)
    args.polars_ingest_max = int(args.polars_ingest_max)
    args.e2e_size = int(args.e2e_size)
    args.one_row_group = int(args.one_row_group)
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
    args.outs = (args.out_dir or work).resolve()
    args.outs.mkdir(parents=True, exist_ok=True)
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
            "out_dir": str(args.outs),
            "out_dir_file_system": file_system(args.outs),
            "polars_max": args.polars_max,
            "polars_ingest_max": args.polars_ingest_max,
            "large": LARGE,
            "e2e_size": args.e2e_size,
            "many_files": args.many_files,
            "many_files_format": args.many_files_format,
            "one_row_group": args.one_row_group,
            "targets": TARGETS,
        },
        "results": [],
        "end_to_end": [],
        "many_files": None,
        "one_row_group": None,
    }
    t0 = time.perf_counter()
    doc["cli_startup"] = cli_startup(args.cli_repeats)
    failed: dict[str, Any] | None = None
    for size in args.sizes:
        print(f"size {size:,}", flush=True)
        row = bench_size(size, args, data, work)
        doc["results"].append(row)
        if not row["correctness"]["ok"]:
            failed = {"at": f"{size:,} requests", **row["correctness"]}
            break
    if failed is None and args.e2e_size:
        size = args.e2e_size
        for fmt in args.formats:
            timed = [r["run"] for r in doc["results"] if r["size"] == size and "run" in r]
            if fmt == "parquet" and timed:  # measured at --run-sizes already
                e2e = timed[0]
            else:
                case, truth = ensure_case(data, size, fmt, args.seed)
                e2e = bench_run(case, truth, size, fmt, 1, args.outs)
            doc["end_to_end"].append(e2e)
            if not e2e["exposure_equals_truth"]:
                failed = {"at": f"forensics run {fmt} {args.e2e_size:,}", **e2e}
                break
    if failed is None and args.many_files:
        doc["many_files"] = bench_many_files(args.many_files, args, data, work)
        if not doc["many_files"]["same_totals"]:
            failed = {"at": "many files", **doc["many_files"]}
    if failed is None and args.one_row_group:
        doc["one_row_group"] = bench_one_row_group(args.one_row_group, args, data, work)
        if not doc["one_row_group"]["equals_truth"]:
            failed = {"at": "one row group", **doc["one_row_group"]}
    doc["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    doc["scaling"] = scaling(doc["results"]) if failed is None else {}
    doc["targets"] = targets(doc["results"], doc["scaling"], doc["many_files"])
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
        differences = [
            {k: v for k, v in r["analyze"].get("differences", {}).items() if v}
            for r in doc["results"]
            if not r["correctness"]["ok"]
        ]
        print(
            f"BENCHMARK FAILED at {failed['at']}: the results or the figures differ: "
            f"{json.dumps(failed, default=str)}; differences (rows on one side only): "
            f"{json.dumps(differences)}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
