"""An output folder holds one analysis at a time: every command publishes its files as one
unit (docs/decisions.md "One analysis per output folder"), a publish killed at any step is
undone by the next command, and files the toolkit did not write stay where a user put them.

The cases are tests/fixtures/hostile/stale-outputs (README.md there): `case-v1.toml` counts
2 exposed responses (acct-a, acct-b), `case-v2.toml` excludes acct-b and counts 1, so a file
of one analysis beside a file of the other is a summary of 1 beside lists of 2. A real
subprocess is killed with SIGKILL at each step of its publish (`FORENSICS_KILL_AT`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from forensics import pipeline

REPO = Path(__file__).resolve().parent.parent
STALE = Path(__file__).parent / "fixtures" / "hostile" / "stale-outputs"
CLI = [sys.executable, "-c", "from forensics.cli import main; main()"]
WAIT = 300  # seconds: a bound on waiting for a child process, never an assertion on speed
POINTS = ["journal", "remove", "move", "last"]
# what analyze writes (and a publish of analyze moves in), sorted
ANALYZE_OUTPUTS = ["blast_radius.csv", "exposed_requests.csv", "summary.json"]
KILL_AT = "FORENSICS_KILL_AT"  # scratch.KILL_AT: the step of a publish to be killed at
PUBLISH = ".forensics-publish-"  # scratch.PUBLISH: a publish's journal and set-aside entries
# files a user keeps in the output folder, in the toolkit's folders too (item 16)
USER_FILES = {
    "mine.txt": "a file of the user's",
    "notify/review-notes.md": "reviewed by legal, 2026-09-12",
    "notify/notices/md/cover-letter.md": "Dear customer,",
}


def _case(tmp_path: Path) -> Path:
    folder = tmp_path / "case"
    if not folder.exists():
        shutil.copytree(STALE, folder)
    return folder


def _outputs(out: Path) -> dict[str, bytes]:
    """The toolkit's files in `out` (not the manifest, the case database or the user's)."""
    return {
        rel: p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file()
        and (rel := p.relative_to(out).as_posix()) not in USER_FILES
        and rel != "manifest.json"
        and not rel.startswith(("case.duckdb", PUBLISH))
    }


def _user_files(out: Path) -> dict[str, str]:
    return {rel: (out / rel).read_text() for rel in USER_FILES if (out / rel).is_file()}


def _put_user_files(out: Path) -> None:
    for rel, text in USER_FILES.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)


def _listed(out: Path) -> dict[str, str]:
    """path -> sha256 of what out/manifest.json lists under `files` ({} without one)."""
    if not (out / "manifest.json").exists():
        return {}
    body = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    return {f["path"]: f["sha256"] for f in body["files"]}


def _hashes(files: dict[str, bytes]) -> dict[str, str]:
    return {rel: hashlib.sha256(data).hexdigest() for rel, data in files.items()}


def _leftovers(out: Path) -> list[str]:
    """Journals, set-aside and staging entries of a publish, in `out` and beside it."""
    return sorted(
        p.name
        for folder in (out, out.parent)
        for p in folder.iterdir()
        if PUBLISH in p.name or pipeline.RUN_SCRATCH in p.name
    )


@pytest.fixture(scope="module")
def refs(tmp_path_factory) -> dict[str, dict[str, bytes]]:
    """The outputs of a clean `run` of each case: what a file of each analysis holds."""
    base = tmp_path_factory.mktemp("refs")
    folder = _case(base)
    return {
        name: _outputs(pipeline.run(folder / f"case-{name}.toml", base / name).out or base)
        for name in ("v1", "v2")
    }


def _of_one_analysis(out: Path, refs: dict[str, dict[str, bytes]]) -> str | None:
    """Which analysis every toolkit file in `out` belongs to (None when there is none);
    fails when the files are of two analyses or of neither."""
    present = _outputs(out)
    if not present:
        return None
    owners = [
        name
        for name, ref in refs.items()
        if all(ref.get(rel) == data for rel, data in present.items())
    ]
    assert owners, f"files of two analyses (or of none) in {out}: {sorted(present)}"
    return owners[0]


def _killed(point: str, *args: str) -> None:
    """Run `forensics ARGS` in a subprocess that kills itself (SIGKILL) at `point` of its
    publish."""
    env = {**os.environ, "TZ": "UTC", "PYTHONPATH": str(REPO), KILL_AT: point}
    proc = subprocess.run(
        [*CLI, *args, "-q"], env=env, capture_output=True, text=True, timeout=WAIT, check=False
    )
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stderr)


@pytest.mark.parametrize("point", POINTS)
def test_an_analyze_killed_at_any_step_of_its_publish_never_mixes_two_analyses(
    tmp_path, refs, point
):
    # run v1 (2 exposed) into R, then analyze v2 (1 exposed) into R, killed. Its publish
    # deletes every file of v1 (the lists and report included: v2 writes none of them) before
    # it moves in a file of v2, so at no point does R show a summary of one beside lists of the
    # other. The next command undoes the killed publish: the journal names v1's files and v2's
    # three, all deleted, and the manifest it restores lists no file (only the case database,
    # which now holds v2), so R holds no output, only the database and the user's files; then
    # analyze v2 again writes
    # exactly analyze's three files (ANALYZE_OUTPUTS), listed with their hashes, and nothing else
    folder = _case(tmp_path)
    out = tmp_path / "R"
    pipeline.run(folder / "case-v1.toml", out)
    _put_user_files(out)
    db = str(out / "case.duckdb")
    _killed(point, "analyze", str(folder / "case-v2.toml"), "--db", db, "--out", str(out))
    assert _of_one_analysis(out, refs) in ("v1", "v2", None)
    if point == "journal":  # killed before it touched anything: R is as it was
        assert _of_one_analysis(out, refs) == "v1"
        assert _listed(out) == _hashes(_outputs(out))
    pipeline.out_folder(out)  # what every command does first: undo a killed publish
    assert _outputs(out) == {}
    assert _listed(out) == {}
    assert [p for p in _leftovers(out) if PUBLISH in p] == []
    assert _user_files(out) == USER_FILES
    result = pipeline.analyze(folder / "case-v2.toml", db, out)
    assert result.summary["exposure_count"] == 1
    assert sorted(_outputs(out)) == ANALYZE_OUTPUTS
    assert _of_one_analysis(out, refs) == "v2"
    assert _listed(out) == _hashes(_outputs(out))
    assert _leftovers(out) == []
    assert _user_files(out) == USER_FILES


@pytest.mark.parametrize("point", POINTS)
def test_a_notify_killed_at_any_step_keeps_the_analysis_files_and_lists_them(tmp_path, refs, point):
    # analyze and notify v1 into R, then notify v1 again, killed (its earlier lists are
    # deleted before the new ones move in). Undone, R holds the files of analyze
    # (ANALYZE_OUTPUTS), still listed with their hashes (the journal
    # restores the manifest of what stays), and no file of notify: notify again completes R
    folder = _case(tmp_path)
    store = tmp_path / "store"
    pipeline.run(folder / "case-v1.toml", store)
    db = str(store / "case.duckdb")
    out = tmp_path / "R"
    pipeline.analyze(folder / "case-v1.toml", db, out)
    analyzed = _outputs(out)
    assert sorted(analyzed) == ANALYZE_OUTPUTS
    pipeline.notify(folder / "case-v1.toml", db, out)
    _killed(point, "notify", str(folder / "case-v1.toml"), "--db", db, "--out", str(out))
    assert _of_one_analysis(out, refs) == "v1"
    pipeline.out_folder(out)  # what every command does first: undo a killed publish
    assert _outputs(out) == analyzed
    assert _listed(out) == _hashes(analyzed)
    pipeline.notify(folder / "case-v1.toml", db, out)
    assert _listed(out) == _hashes(_outputs(out))
    assert {rel for rel in _outputs(out) if rel.startswith("notify/")} == {
        rel for rel in refs["v1"] if rel.startswith("notify/")
    }


@pytest.mark.parametrize("point", POINTS)
def test_a_run_killed_at_any_step_of_its_publish_is_swept_by_the_next_command(
    tmp_path, refs, point
):
    # run v1 into R, then run v2 into R, killed while it moves its outputs in. Every file of
    # v1 is deleted before one of v2 arrives; undone, R holds no output and no manifest (the
    # case database was being replaced: deleted too); the user's files stay throughout
    folder = _case(tmp_path)
    out = tmp_path / "R"
    pipeline.run(folder / "case-v1.toml", out)
    _put_user_files(out)
    _killed(point, "run", str(folder / "case-v2.toml"), "--out", str(out))
    assert _of_one_analysis(out, refs) in ("v1", "v2", None)
    assert _user_files(out) == USER_FILES
    pipeline.out_folder(out)  # what every command does first
    assert _outputs(out) == {}
    assert not (out / "manifest.json").exists()
    assert [p for p in _leftovers(out) if PUBLISH in p] == []
    assert _user_files(out) == USER_FILES


def test_run_keeps_the_files_a_user_put_under_notify(tmp_path, refs):
    # run v1, a user adds review notes and a cover letter under notify/ (and a file beside
    # the outputs), run v2: v2's lists replace v1's, the user's files stay byte for byte and
    # are not in the manifest (run used to replace the whole notify/ folder)
    folder = _case(tmp_path)
    out = tmp_path / "R"
    pipeline.run(folder / "case-v1.toml", out)
    _put_user_files(out)
    pipeline.run(folder / "case-v2.toml", out)
    assert _user_files(out) == USER_FILES
    assert _outputs(out) == refs["v2"]
    assert _listed(out) == _hashes(refs["v2"])
    assert _leftovers(out) == []


def test_analyze_of_another_analysis_removes_every_file_of_the_earlier_one(tmp_path, refs):
    # the case: R holds run v1 whole; analyze v2 into R. The manifest then lists only
    # v2's three files, and no file of v1 is left to be hashed as v2's by a later command
    folder = _case(tmp_path)
    out = tmp_path / "R"
    pipeline.run(folder / "case-v1.toml", out)
    pipeline.analyze(folder / "case-v2.toml", out / "case.duckdb", out)
    assert _outputs(out) == {rel: refs["v2"][rel] for rel in ANALYZE_OUTPUTS}
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert [(f["path"], f["written_by"]) for f in manifest["files"]] == [
        ("blast_radius.csv", "analyze"),
        ("exposed_requests.csv", "analyze"),
        ("summary.json", "analyze"),
    ]
    assert [(f["path"], f["written_by"]) for f in manifest["not_hashed"]] == [
        ("case.duckdb", "ingest")
    ]
