"""The notice files are written by helper processes (forensics/render/writer.py) and hashed as
written, or, for many notices, rendered and written by renderer processes
(forensics/render/processes.py); manifest.json lists thousands of them row by row
(forensics/analysis/integrity.py)."""

from __future__ import annotations

import errno
import json
import shutil

import pytest
from case_small_db import CASE_DIR, case_small, engine_with_requests
from conftest import messages

from forensics import pipeline
from forensics.analysis.integrity import Output, _dumps, manifest, write_manifest
from forensics.cli import app
from forensics.render import notify, processes, writer

PAGE = notify.PAGE_ITEMS

# sha256 of b"abc" (FIPS 180-2, appendix B.1) and of b"" (the empty message)
SHA_ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
SHA_EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_helper_writes_each_file_with_its_bytes_and_reports_size_and_sha256(tmp_path):
    md, eml = tmp_path / "md", tmp_path / "eml"
    md.mkdir()
    eml.mkdir()
    with writer.Files() as files:
        files.write(str(md / "a.md"), b"abc")
        files.write(str(eml / "a.eml"), b"")
        files.write(str(md / "b.md"), b"\x00\r\n\xff" * 100_000)  # several pipe buffers
    assert (md / "a.md").read_bytes() == b"abc"
    assert (eml / "a.eml").read_bytes() == b""
    assert (md / "b.md").read_bytes() == b"\x00\r\n\xff" * 100_000
    assert files.hashes[str(md / "a.md")] == (3, SHA_ABC)
    assert files.hashes[str(eml / "a.eml")] == (0, SHA_EMPTY)
    assert files.hashes[str(md / "b.md")][0] == 400_000


def test_a_file_the_helper_cannot_create_is_raised_with_its_errno_and_path(tmp_path):
    missing = tmp_path / "no-such-folder" / "a.md"
    with pytest.raises(OSError) as caught, writer.Files() as files:
        files.write(str(missing), b"abc")
    assert caught.value.errno == errno.ENOENT
    assert caught.value.filename == str(missing)


def test_a_failure_while_rendering_stops_the_helpers_and_is_raised(tmp_path):
    with pytest.raises(ValueError, match="template"), writer.Files() as files:
        files.write(str(tmp_path / "a.md"), b"abc")
        raise ValueError("template error")
    assert all(h.process.returncode is not None for h in files._helpers)


@pytest.mark.parametrize(
    "files",
    [
        [{"bytes": 3, "path": 'n/"q"\\\u00e9\u2028\x01.md', "sha256": SHA_ABC, "written_by": "x"}],
        [{"path": "a", "bytes": 0}, {"path": "b", "sha256": SHA_EMPTY}],
        [],  # no rows: `[]`
        [{}],  # an empty row: `{}`
        [{"path": "a", "bytes": True}],  # not a whole number: `true`
        [{"path": "a", "bytes": 1.5}],
    ],
)
def test_manifest_rows_are_the_bytes_the_json_encoder_writes(files):
    body = {
        "files": files,
        "not_hashed": [{"path": "d/", "reason": "a folder"}],
        "about": "\ue000files\ue001",  # the placeholder's own text elsewhere
        "analysis": {"files": None},
    }
    assert _dumps(body) == json.dumps(body, sort_keys=True, indent=2, ensure_ascii=False)


def test_a_manifest_written_to_a_file_row_by_row_is_the_one_made_in_memory(tmp_path):
    """publish writes manifest.json into its file a chunk at a time (hundreds of thousands of
    notices at 100M); the bytes are those of the manifest made whole, and every file is a
    row, sorted by path, with the size and sha256 it was written with."""
    outputs = [
        Output(f"notify/notices/md/n{i:06d}.md", f"/nowhere/n{i}.md", "notify", (i, SHA_ABC))
        for i in reversed(range(30_000))
    ]
    outputs.append(Output("case.duckdb", "/nowhere/case.duckdb", "ingest"))
    eng = engine_with_requests()
    try:
        pipeline.analyze_case(eng, case_small())
        whole = manifest(eng, case_small(), outputs)
        with (tmp_path / "manifest.json").open("wb") as sink:
            write_manifest(eng, case_small(), outputs, sink)
    finally:
        eng.close()
    assert (tmp_path / "manifest.json").read_bytes() == whole
    body = json.loads(whole)
    assert [f["path"] for f in body["files"]] == [
        f"notify/notices/md/n{i:06d}.md" for i in range(30_000)
    ]
    assert body["files"][7] == {
        "bytes": 7,
        "path": "notify/notices/md/n000007.md",
        "sha256": SHA_ABC,
        "written_by": "notify",
    }
    assert [e["path"] for e in body["not_hashed"]] == ["case.duckdb"]
    assert whole == (json.dumps(body, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


def _notify_files(
    monkeypatch, folder, page_items: int, parallel_items: int = notify.PARALLEL_ITEMS
) -> dict[str, bytes]:
    monkeypatch.setattr(notify, "PAGE_ITEMS", page_items)
    monkeypatch.setattr(notify, "PARALLEL_ITEMS", parallel_items)
    eng = engine_with_requests()
    try:
        summary, _ = pipeline.analyze_case(eng, case_small())
        notify.write_lists(eng, case_small(), folder, summary)
    finally:
        eng.close()
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted((folder / "notify").rglob("*"))
        if p.is_file()
    }


def test_notices_rendered_over_several_pages_are_those_rendered_in_one(monkeypatch, tmp_path):
    """case_small notifies 6 accounts (tests/test_notices.py); with pages of 3 listed
    requests they are rendered over several pages, the next read while one renders, and
    every file (index.csv with each notice's sha256, the notices, the messages) is the same
    as rendered in one page."""
    one = _notify_files(monkeypatch, tmp_path / "one", page_items=PAGE)
    paged = _notify_files(monkeypatch, tmp_path / "paged", page_items=3)
    assert len([f for f in one if f.endswith(".md") and "/md/" in f]) == 6
    assert paged == one


class _Counted(processes.Workers):
    """The worker processes as they are, each page they return counted (evidence that the
    notices went through them)."""

    pages = 0

    def map(self, work, tasks, ahead=2):
        for result in super().map(work, tasks, ahead):
            _Counted.pages += 1
            yield result


def test_notices_rendered_by_renderer_processes_are_those_rendered_here(monkeypatch, tmp_path):
    """From PARALLEL_ITEMS listed requests the pages go to renderer processes, which word,
    render, write and hash them: every file is the same as rendered in this process (here
    with pages of at most 2 listed requests, so both processes take several)."""
    here = _notify_files(monkeypatch, tmp_path / "here", page_items=PAGE)
    assert _Counted.pages == 0
    monkeypatch.setattr(processes, "Workers", _Counted)
    there = _notify_files(monkeypatch, tmp_path / "there", page_items=2, parallel_items=0)
    assert _Counted.pages >= 3
    assert len([f for f in there if f.endswith(".md") and "/md/" in f]) == 6
    assert there == here


@pytest.mark.parametrize(
    ("template", "line", "what"),
    [
        ("# Notice\n{{ account.nmae }}\n", 2, "template error: 'dict object' has no attribute"),
        ("# Notice\n\n\n{{ ''.__class__.__mro__ }}\n", 4, "template error: access to attribute"),
    ],
)
def test_a_template_error_in_a_renderer_process_is_the_one_line_error_of_this_one(
    monkeypatch, runner, tmp_path, template, line, what
):
    """A case file's template that fails while a notice is rendered fails in the renderer
    process; the command says what it says when the notice is rendered here: the template
    file and line, what went wrong, the fix."""
    monkeypatch.setattr(notify, "PARALLEL_ITEMS", 0)
    folder = tmp_path / "case"
    folder.mkdir()
    for name in ("requests.csv", "researchers.txt", "accounts.csv"):
        shutil.copy(CASE_DIR / name, folder / name)
    case = folder / "incident.toml"
    case.write_text(
        (CASE_DIR / "incident.toml").read_text(encoding="utf-8")
        + '\n[notify]\ntemplate = "notice.md.j2"\n',
        encoding="utf-8",
    )
    (folder / "notice.md.j2").write_text(template, encoding="utf-8")
    result = runner.invoke(app, ["run", str(case), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    message = "".join(messages(result.stderr))
    assert message.startswith(f"error: {folder.resolve() / 'notice.md.j2'}:{line}: {what}")
    assert message.endswith("fix the template (its variables are listed in docs/notices.md)")
    assert not (tmp_path / "out").exists()  # a failed run leaves no outputs
