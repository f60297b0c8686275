"""The notice files are written by helper processes (forensics/render/writer.py) and hashed as
written; manifest.json lists thousands of them row by row (forensics/analysis/integrity.py)."""

from __future__ import annotations

import errno
import json

import pytest

from forensics.analysis.integrity import _dumps
from forensics.render import writer

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
