"""Many small files written by helper processes (the notices and their messages).

Creating a file is a system call of tens of microseconds (up to a millisecond on a file
system that has just deleted many): thousands of them, made from threads of the process
that renders the notices, kept those threads and the renderer waiting on each other for
Python's lock. `Files` hands each file's path and bytes through a pipe to another Python
process (this file run as a script: the standard library only, started in milliseconds),
one for each folder of files, which creates, writes and hashes them while the notices go on
being rendered. Leaving the `with` waits for every file; a file that cannot be written is
raised as the `OSError` the helper met (its errno, message and path), as writing it here
would have.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
import subprocess
import sys
from collections.abc import Callable

_HEAD = struct.Struct("<II")  # path length, data length (each file's frame, then the bytes)
_DONE = struct.Struct("<Q32s")  # size, sha256: one per file, in the order sent
_FAIL = struct.Struct("<iII")  # errno, message length, path length (then both, UTF-8)
_OK, _ERROR = b"K", b"E"
_NEW_FILE = (
    os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)
_CHUNK = 1 << 20  # a pipe's size (Linux); a quarter of it handed over at a time
HELPERS = 2


class Files:
    """Writes files ((path, bytes), each a new file) in helper processes, one per folder (up
    to `HELPERS`; a file system creates files in two folders at once, in one folder one at
    a time); `hashes`: path -> (size, sha256 hex) of every file written, complete once the
    `with` is left."""

    def __init__(self) -> None:
        self.hashes: dict[str, tuple[int, str]] = {}
        self._helpers: list[_Helper] = []
        self._by_folder: dict[str, _Helper] = {}

    def write(self, path: str, data: bytes) -> None:
        """Write `data` as the new file `path` (in the background)."""
        self.writer(os.path.dirname(path))(path, data)

    def writer(self, folder: str) -> Callable[[str, bytes], None]:
        """`write` for the files of `folder` (their paths as `folder` spells it)."""
        helper = self._by_folder.get(folder)
        if helper is None:
            if len(self._helpers) < HELPERS:
                self._helpers.append(_Helper())
            helper = self._helpers[len(self._by_folder) % len(self._helpers)]
            self._by_folder[folder] = helper
        return helper.write

    def close(self) -> None:
        """Wait for every file; raise the first failure."""
        for helper in self._helpers:
            helper.finish()
        for helper in self._helpers:
            self.hashes.update(helper.result())

    def __enter__(self) -> Files:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is None:
            self.close()
        else:  # a failure while rendering: stop the helpers, raise that failure
            for helper in self._helpers:
                helper.process.kill()
                helper.process.wait()


class _Helper:
    """One helper process (`_serve`) and the files sent to it, in order."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self._buffer: list[bytes] = []
        self._buffered = 0
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-S", os.path.abspath(__file__)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self.process.stdin is not None
        with contextlib.suppress(ImportError, AttributeError, OSError):
            import fcntl  # Linux: a larger pipe, so a moment's delay of either side costs none

            fcntl.fcntl(self.process.stdin.fileno(), fcntl.F_SETPIPE_SZ, _CHUNK)

    def write(self, path: str, data: bytes) -> None:
        encoded = os.fsencode(path)
        self.paths.append(path)
        self._buffer.append(_HEAD.pack(len(encoded), len(data)) + encoded)
        self._buffer.append(data)
        self._buffered += len(data)
        if self._buffered >= _CHUNK // 4:
            self._flush()

    def _flush(self) -> None:
        if self._buffer:
            assert self.process.stdin is not None
            with contextlib.suppress(BrokenPipeError):  # it stopped: `result` says why
                self.process.stdin.write(b"".join(self._buffer))
            self._buffer, self._buffered = [], 0

    def finish(self) -> None:
        """Send what is left and the end."""
        assert self.process.stdin is not None
        self._flush()
        with contextlib.suppress(BrokenPipeError):
            self.process.stdin.close()

    def result(self) -> dict[str, tuple[int, str]]:
        """Each file's (size, sha256 hex), once the helper is done; its failure raised."""
        assert self.process.stdout is not None
        reply = self.process.stdout.read()
        self.process.wait()
        if reply[:1] == _ERROR:
            errno, n_msg, n_path = _FAIL.unpack_from(reply, 1)
            start = 1 + _FAIL.size
            message = reply[start : start + n_msg].decode("utf-8", "replace")
            path = os.fsdecode(reply[start + n_msg : start + n_msg + n_path])
            raise OSError(errno, message, path)
        if reply[:1] != _OK or len(reply) != 1 + _DONE.size * len(self.paths):
            raise RuntimeError(f"the file writer stopped (exit status {self.process.returncode})")
        hashes = {}
        for i, path in enumerate(self.paths):
            size, digest = _DONE.unpack_from(reply, 1 + i * _DONE.size)
            hashes[path] = (size, digest.hex())
        return hashes


def write_file(path: str | bytes, data: bytes) -> tuple[int, str]:
    """Write `data` as the new file `path` (as `open(path, "wb")` does, without its buffer);
    its (size, sha256 hex)."""
    fd = os.open(path, _NEW_FILE, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    return len(data), hashlib.sha256(data).hexdigest()


def _serve(source: object, sink: object) -> int:
    """The helper: read frames from `source` until its end, write each file, reply."""
    read = source.read  # type: ignore[attr-defined]
    done: list[bytes] = []
    while True:
        head = read(_HEAD.size)
        if not head:
            break
        n_path, n_data = _HEAD.unpack(head)
        path = read(n_path)
        data = read(n_data)
        if len(head) < _HEAD.size or len(path) < n_path or len(data) < n_data:
            return 1  # the renderer stopped midway: its staging folder is not published
        try:
            size, digest = write_file(path, data)
        except OSError as e:
            message = (e.strerror or str(e)).encode("utf-8", "replace")
            sink.write(_ERROR + _FAIL.pack(e.errno or 0, len(message), len(path)) + message + path)  # type: ignore[attr-defined]
            return 1
        done.append(_DONE.pack(size, bytes.fromhex(digest)))
    sink.write(_OK + b"".join(done))  # type: ignore[attr-defined]
    return 0


if __name__ == "__main__":
    sys.exit(_serve(sys.stdin.buffer, sys.stdout.buffer))
