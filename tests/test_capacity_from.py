"""`capacity_from`: a case file names the file `forensics capacity --out` wrote instead of
pasting its `[[capacity]]` tables; each entry is validated as an inline one, and a refusal
names that file, its line and the entry."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import REPO

from forensics.analysis.integrity import case_digest
from forensics.case import Capacity, load_case
from forensics.cli import app
from forensics.errors import CaseError

HEAD = """name = "t"
models = ["m"]
context_window = 1000
capacity_from = ["capacity.toml"]

[window]
start = "2026-09-01T00:00:00Z"
end = "2026-09-02T00:00:00Z"
"""
DERIVED = """[[capacity]]
role = "prefill"
nodes = "prefill-0"
tokens = 600
start = "2026-09-01T00:00:30Z"
end = "2026-09-01T12:00:00Z"

[[capacity]]
role = "prefill"
nodes = "prefill-0"
tokens = 900
start = "2026-09-01T12:00:00Z"
"""


def _case(tmp_path: Path, derived: str = DERIVED, body: str = "") -> Path:
    (tmp_path / "capacity.toml").write_text(derived, encoding="utf-8")
    case = tmp_path / "incident.toml"
    case.write_text(HEAD + body, encoding="utf-8")
    return case


def _refusal(case: Path) -> str:
    with pytest.raises(CaseError) as info:
        load_case(case)
    return info.value.line()


def _at(hour: int, minute: int = 0, second: int = 0) -> datetime:
    return datetime(2026, 9, 1, hour, minute, second, tzinfo=UTC)


def test_the_files_entries_are_the_cases_capacity(tmp_path):
    case = load_case(_case(tmp_path))
    assert case.capacity == (
        Capacity("prefill", "prefill-0", 600, _at(0, 0, 30), _at(12)),
        Capacity("prefill", "prefill-0", 900, _at(12), None),
    )
    assert case.capacity_files == (tmp_path / "capacity.toml",)


def test_inline_entries_come_first_then_each_files_in_order(tmp_path):
    inline = '\n[[capacity]]\nrole = "decode"\ntokens = 5000\nstart = "2026-09-01T00:00:00Z"\n'
    case = load_case(_case(tmp_path, body=inline))
    assert [c.tokens for c in case.capacity] == [5000, 600, 900]


def test_an_invalid_entry_in_the_file_names_that_file_its_line_and_entry(tmp_path):
    case = _case(tmp_path, DERIVED.replace("tokens = 900", "tokens = -900"))
    # the second [[capacity]] starts on line 8 of capacity.toml; tokens is line 11
    assert _refusal(case) == (
        f"{tmp_path / 'capacity.toml'}:11: capacity[2].tokens: must be a positive token count"
    )


def test_an_unknown_key_in_an_entry_of_the_file_is_refused(tmp_path):
    case = _case(tmp_path, DERIVED.replace('nodes = "prefill-0"\n', 'node = "prefill-0"\n', 1))
    assert _refusal(case).startswith(
        f"{tmp_path / 'capacity.toml'}:3: capacity[1].node: unknown key; allowed keys"
    )


def test_a_file_holding_more_than_capacity_tables_is_refused(tmp_path):
    case = _case(tmp_path, 'name = "x"\n' + DERIVED)
    assert _refusal(case).startswith(f"{tmp_path / 'capacity.toml'}:1: name: unknown key; ")


def test_a_file_without_entries_is_refused(tmp_path):
    case = _case(tmp_path, "# nothing derived\n")
    assert _refusal(case).startswith(f"{tmp_path / 'capacity.toml'}: holds no [[capacity]] table; ")


def test_a_missing_file_names_the_case_files_key(tmp_path):
    case = _case(tmp_path)
    (tmp_path / "capacity.toml").unlink()
    line = _refusal(case)
    # capacity_from is line 4 of the case file
    assert line.startswith(f"{case}:4: capacity_from: cannot read {tmp_path / 'capacity.toml'}")
    assert "forensics capacity" in line


def test_an_entry_contradicting_an_inline_one_names_both(tmp_path):
    inline = (
        '\n[[capacity]]\nrole = "prefill"\nnodes = "prefill-0"\ntokens = 700\n'
        'start = "2026-09-01T06:00:00Z"\nend = "2026-09-01T07:00:00Z"\n'
    )
    line = _refusal(_case(tmp_path, body=inline))
    assert line.startswith(
        f"{tmp_path / 'capacity.toml'}:1: capacity[1]: contradicts capacity[1]: same role and "
        "nodes, overlapping time, different tokens or reject_from (700 vs 600)"
    )


def test_an_entry_contradicting_one_of_an_earlier_file_names_that_file(tmp_path):
    (tmp_path / "more.toml").write_text(DERIVED.replace("tokens = 600", "tokens = 650"))
    case = _case(tmp_path)
    case.write_text(case.read_text().replace('["capacity.toml"]', '["capacity.toml", "more.toml"]'))
    assert _refusal(case).startswith(
        f"{tmp_path / 'more.toml'}:1: capacity[1]: contradicts capacity[1] of capacity.toml: "
    )


def test_a_changed_capacity_file_changes_the_cases_digest(tmp_path):
    case = _case(tmp_path)
    before = case_digest(load_case(case))
    (tmp_path / "capacity.toml").write_text(DERIVED.replace("tokens = 900", "tokens = 950"))
    assert case_digest(load_case(case)) != before


@pytest.mark.slow
def test_the_bundled_case_with_derived_capacity_exposes_the_same_155(tmp_path, runner):
    """`forensics capacity` on the bundled engine logs, then the bundled case with its prefill
    and decode [[capacity]] tables replaced by capacity_from = [that file]: the derived spans
    hold the same pools at the same times (test_capacity), so the count stays 155."""
    bundled = REPO / "sample_logs" / "glm53"
    case_dir = tmp_path / "glm53"
    shutil.copytree(bundled, case_dir)
    derived = case_dir / "capacity.toml"
    db = ["--db", str(tmp_path / "c.duckdb")]
    window = ["--context-window", "1048576"]
    result = runner.invoke(
        app, ["capacity", str(case_dir / "engine"), *db, *window, "--out", str(derived)]
    )
    assert result.exit_code == 0, result.output
    case = case_dir / "incident.toml"
    text = case.read_text(encoding="utf-8")
    head, rest = text.split("[[capacity]]", 1)
    tail = rest[rest.index("[[exclude]]") :]
    case.write_text(
        head.replace(
            "context_window = 1048576\n",
            'context_window = 1048576\ncapacity_from = ["capacity.toml"]\n',
        )
        + tail,
        encoding="utf-8",
    )
    assert "[[capacity]]" not in case.read_text(encoding="utf-8")
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(case), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["exposure_count"] == 155
    assert len(summary["capacity"]) == 12  # 4 prefill nodes x 2 starts + 4 decode nodes
