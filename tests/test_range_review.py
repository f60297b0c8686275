"""Findings of a hostile review of the exposure range, each on a small literal fixture under
tests/fixtures/range-review (every expected value derived by hand in its README.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from forensics import ingest, pipeline
from forensics.case import load_case
from forensics.cli import app
from forensics.engines import DuckDBEngine
from forensics.render.headline import headline

FIXTURES = Path(__file__).parent / "fixtures" / "range-review"
ROOMS = FIXTURES / "engine-rooms" / "incident.toml"


@pytest.fixture(scope="module")
def rooms(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("rooms") / "out"
    pipeline.run(ROOMS, out)
    return json.loads((out / "summary.json").read_text())


# --- an engine length decides only for the one request its room identifies ---------------


def test_a_room_several_requests_carry_decides_none_and_they_go_into_the_range(rooms):
    """r1, r2 (room 11: engine 300) stay exposed at 700, min side; r5, r6 (room 15: engine
    700) and r7 (room 16: lines 300 and 700) fit at 300, max side; r3 is decided by its room."""
    assert rooms["bands"]["exposed"] == 3
    assert rooms["exposure_range"] == {
        "min": 1,
        "likely": 3,
        "max": 6,
        "contributions": [
            {"category": "engine_length", "direction": "min", "requests": 2},
            {"category": "engine_length", "direction": "max", "requests": 3},
        ],
    }


def test_the_rooms_that_decide_nothing_are_counted_and_listed(rooms):
    lengths = rooms["engine_input_lengths"]
    assert (lengths["requests"], lengths["differ"], lengths["undecided"]) == (3, 3, 5)
    assert [c["request_id"] for c in lengths["band_changed"]] == ["r3", "r8", "r9"]
    assert lengths["shared_rooms"] == [
        {"bootstrap_room": 11, "requests": 2, "request_ids": ["r1", "r2"]},
        {"bootstrap_room": 15, "requests": 2, "request_ids": ["r5", "r6"]},
    ]
    (warning,) = [w for w in rooms["warnings"] if "carried by several" in w]
    assert warning.startswith(
        "2 bootstrap room(s) of the engine logs are carried by several gateway requests "
        "(room 11: r1, r2; room 15: r5, r6)"
    )


# --- another model is not bounded by the case's context window ---------------------------


def test_another_model_is_bounded_by_its_own_context_limit_or_none(tmp_path):
    """big: no limit known, 1500 and 3000 over its 1000 pool; small: its server's
    context_len 2000 bounds it, 1500 over its pool (reject_from 1194), 2500 not; m: the case's
    1000."""
    summary = pipeline.run(FIXTURES / "other-models" / "incident.toml", tmp_path / "out").summary
    over = {m["model"]: m["over_capacity"] for m in summary["blast_radius"]}
    assert over == {"big": 2, "m": 1, "small": 1}
    assert (
        "other models: 3 requests above their pool (big 2, small 1); capacity known for 100% "
        "of their requests"
    ) in headline(summary).splitlines()


# --- a file removed from a folder source after ingest ------------------------------------


def _folder_case(tmp_path: Path) -> tuple[Path, Path]:
    """folder-source copied, both its logs ingested: (the case file, the case database)."""
    folder = tmp_path / "case"
    shutil.copytree(FIXTURES / "folder-source", folder)
    db = tmp_path / "case.duckdb"
    case = load_case(folder / "incident.toml")
    with DuckDBEngine(db) as engine:
        pipeline.ingest_sources(engine, case)
    return folder / "incident.toml", db


def test_a_file_gone_from_a_folder_source_since_ingest_is_refused(runner, tmp_path):
    """b.jsonl (3 of the 6 exposed) moved out of logs/ after ingest: counted, it gave 6 where
    the folder now gives 3."""
    case, db = _folder_case(tmp_path)
    gone = case.parent / "logs" / "b.jsonl"
    gone.rename(tmp_path / "b.moved")
    result = runner.invoke(
        app, ["analyze", str(case), "--db", str(db), "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 2, result.output
    (line,) = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert (
        f"{gone} was ingested from [[source]] {case.parent / 'logs'}, which no longer holds it"
        in line
    )
    assert "ingest the case's logs into a new --db (forensics run does" in line


def test_a_file_renamed_inside_its_folder_source_is_still_there(runner, tmp_path):
    case, db = _folder_case(tmp_path)
    logs = case.parent / "logs"
    (logs / "b.jsonl").rename(logs / "b-renamed.jsonl")
    result = runner.invoke(
        app, ["analyze", str(case), "--db", str(db), "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["exposure_count"] == 6


# --- two capacity entries of different globs hold for one request ------------------------


def test_two_capacity_entries_holding_for_the_same_requests_are_warned_about(tmp_path):
    summary = pipeline.run(FIXTURES / "capacity-overlap" / "incident.toml", tmp_path / "o").summary
    assert summary["exposure_count"] == 0
    assert (
        "[[capacity]] entries 1 (nodes '*', 900 tokens) and 2 (nodes 'pf-1', models 'm', 500 "
        "tokens) both hold for 4 request(s), the later with the smaller pool: the first in "
        "file order, entry 1, decides for them; if entry 2 is the one in force there, put it "
        "first"
    ) in summary["warnings"]


# --- the case's records kept out as duplicates of an input it does not name ---------------


def _duplicates_db(tmp_path: Path, *orders: list[str]) -> tuple[Path, Path]:
    """duplicates/ copied and ingested into one database, one ingest per list of `orders`:
    (the case file, the database)."""
    folder = tmp_path / "case"
    shutil.copytree(FIXTURES / "duplicates", folder)
    db = tmp_path / "case.duckdb"
    with DuckDBEngine(db) as engine:
        for names in orders:
            ingest.ingest_into(
                engine, [folder / n for n in names], mapping=folder / "gw.mapping.toml"
            )
    return folder / "incident.toml", db


@pytest.mark.parametrize(
    "orders",
    [[["other-export.jsonl"], ["gw.jsonl"]], [["other-export.jsonl", "gw.jsonl"]]],
    ids=["two-ingests", "one-ingest"],
)
def test_records_kept_out_as_duplicates_of_an_unnamed_input_are_refused(runner, tmp_path, orders):
    case, db = _duplicates_db(tmp_path, *orders)
    result = runner.invoke(app, ["analyze", str(case), "--db", str(db), "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    (line,) = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert (
        "6 record(s) of the case's input gw.jsonl were not loaded, as duplicates of records of "
        "other-export.jsonl, an input no [[source]] of the case file names"
    ) in line
    assert "or name other-export.jsonl in a [[source]]" in line


def test_the_unnamed_copy_loaded_second_loses_nothing_of_the_case(tmp_path):
    case, db = _duplicates_db(tmp_path, ["gw.jsonl"], ["other-export.jsonl"])
    summary = pipeline.analyze(case, db, tmp_path / "out").summary
    assert summary["exposure_count"] == 6


def test_a_specific_entry_before_a_broader_one_with_a_larger_pool_says_nothing(tmp_path):
    """Entry 2 (pf-1, m, 500) moved before entry 1 (*, 900): the usual override, the later
    entry with the larger pool: no warning, and m0, m1 (700) are exposed under 500."""
    folder = tmp_path / "case"
    shutil.copytree(FIXTURES / "capacity-overlap", folder)
    case = folder / "incident.toml"
    text = case.read_text()
    star = (
        '[[capacity]]\nrole = "prefill"\nnodes = "*"\ntokens = 900\n'
        'start = "2026-09-01T00:00:00Z"\n'
    )
    assert star in text
    case.write_text(text.replace(star, "") + "\n" + star)
    summary = pipeline.run(case, tmp_path / "o").summary
    assert summary["exposure_count"] == 2
    assert not [w for w in summary["warnings"] if w.startswith("[[capacity]] entries")]
