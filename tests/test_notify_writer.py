"""The notice files are written by helper processes (forensics/render/writer.py) and hashed as
written; manifest.json lists thousands of them row by row (forensics/analysis/integrity.py)."""

from __future__ import annotations

import errno
import json

import polars as pl
import pytest
from case_small_db import case_small, engine_with_requests

from forensics import pipeline
from forensics.analysis.integrity import Output, _dumps, manifest, write_manifest
from forensics.render import notify, writer

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


def test_a_folders_writer_writes_its_files_beside_those_written_by_path(tmp_path):
    """`Files.writer(folder)` is `write` for that folder's files: one helper a folder."""
    md, eml = tmp_path / "md", tmp_path / "eml"
    md.mkdir()
    eml.mkdir()
    with writer.Files() as files:
        write_md = files.writer(str(md))
        write_md(str(md / "a.md"), b"abc")
        files.write(str(eml / "a.eml"), b"")
        files.write(str(md / "b.md"), b"abc")
        files.writer(str(eml))(str(eml / "b.eml"), b"abc")
    assert len(files._helpers) == 2
    for path, size in ((md / "a.md", 3), (eml / "a.eml", 0), (md / "b.md", 3), (eml / "b.eml", 3)):
        assert path.read_bytes() == b"abc"[:size]
        assert files.hashes[str(path)] == (size, SHA_ABC if size else SHA_EMPTY)


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


def _notify_files(monkeypatch, folder, page_items: int) -> dict[str, bytes]:
    monkeypatch.setattr(notify, "PAGE_ITEMS", page_items)
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


def test_the_first_page_of_notices_holds_a_tenth_of_the_others():
    weights = pl.DataFrame({"w": [1] * 25 + [150] + [1] * 200})
    pages = weights.select(notify.page_of(pl.col("w"), 100).alias("page"))["page"].to_list()
    # 10 accounts of 1 request, then the pages start at requests 10, 110, 210, ...
    assert pages[:10] == [0] * 10
    assert pages[10:25] == [1] * 15
    assert pages[25] == 1  # starts at request 25: one account is never split
    assert pages[26:] == [2] * 35 + [3] * 100 + [4] * 65


def test_a_page_holds_an_eighth_of_the_listed_requests_within_its_limits():
    """10,000 to 100,000 listed requests a page: a small case in one page (and its first),
    a mid-sized one in eight, a large one in pages of 100,000."""
    assert notify.page_items(0) == notify.page_items(7_000) == 10_000
    assert notify.page_items(80_000) == 10_000
    assert notify.page_items(110_000) == 13_750
    assert notify.page_items(650_001) == 81_251
    assert notify.page_items(800_000) == notify.page_items(40_000_000) == 100_000


def test_notices_rendered_over_several_pages_are_those_rendered_in_one(monkeypatch, tmp_path):
    """case_small notifies 6 accounts (tests/test_notices.py); with pages of 3 listed
    requests they are rendered over several pages, the next read while one renders, and
    every file (index.csv with each notice's sha256, the notices, the messages) is the same
    as rendered in one page."""
    one = _notify_files(monkeypatch, tmp_path / "one", page_items=PAGE)
    paged = _notify_files(monkeypatch, tmp_path / "paged", page_items=3)
    assert len([f for f in one if f.endswith(".md") and "/md/" in f]) == 6
    assert paged == one


def test_notices_are_the_same_with_the_requests_at_risk_in_memory_or_in_the_file(
    monkeypatch, tmp_path
):
    """Up to TEMPORARY_ROWS requests at risk are a temporary table, more are kept in the
    case database (compressed) until the notices are written: the same files either way."""
    in_memory = _notify_files(monkeypatch, tmp_path / "memory", page_items=PAGE)
    monkeypatch.setattr(notify, "TEMPORARY_ROWS", 0)
    in_file = _notify_files(monkeypatch, tmp_path / "file", page_items=3)
    assert len(in_memory) > 10 and in_file == in_memory
