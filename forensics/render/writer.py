"""Many small files written by a helper process (the notices and their messages).

Creating a file is a system call of tens of microseconds (up to a millisecond on a file
system that has just deleted many): thousands of them, made from threads of the process
that renders the notices, kept those threads and the renderer waiting on each other for
Python's lock. `Files` hands each file's path and bytes through a pipe to a second Python
process (this file run as a script: the standard library only, started in milliseconds),
which creates, writes and hashes them while the notices go on being rendered. Leaving the
`with` waits for every file; a file that cannot be written is raised as the `OSError` the
helper met (its errno, message and path), as writing it here would have.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
import subprocess
import sys

_HEAD = struct.Struct("<II")  # path length, data length (each file's frame, then the bytes)
_DONE = struct.Struct("<Q32s")  # size, sha256: one per file, in the order sent
_FAIL = struct.Struct("<iII")  # errno, message length, path length (then both, UTF-8)
_OK, _ERROR = b"K", b"E"
_NEW_FILE = (
    os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)
_CHUNK = 1 << 20  # bytes handed to the pipe at a time


class Files:
    """Writes files ((path, bytes), each a new file) in a helper process; `hashes`: path ->
    (size, sha256 hex) of every file written, complete once the `with` is left."""

    def __init__(self) -> None:
        self.hashes: dict[str, tuple[int, str]] = {}
        self._paths: list[str] = []
        self._buffer: list[bytes] = []
        self._buffered = 0
        self._helper = subprocess.Popen(
            [sys.executable, "-I", "-S", os.path.abspath(__file__)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def write(self, path: str, data: bytes) -> None:
        """Write `data` as the new file `path` (in the background)."""
        encoded = os.fsencode(path)
        self._paths.append(path)
        self._buffer.append(_HEAD.pack(len(encoded), len(data)) + encoded)
        self._buffer.append(data)
        self._buffered += len(data)
        if self._buffered >= _CHUNK:
            self._flush()

    def _flush(self) -> None:
        if self._buffer:
            assert self._helper.stdin is not None
            with contextlib.suppress(BrokenPipeError):  # the helper stopped: close() says why
                self._helper.stdin.write(b"".join(self._buffer))
            self._buffer, self._buffered = [], 0

    def close(self) -> None:
        """Wait for every file; raise the first failure."""
        helper = self._helper
        assert helper.stdin is not None and helper.stdout is not None
        self._flush()
        with contextlib.suppress(BrokenPipeError):
            helper.stdin.close()
        reply = helper.stdout.read()
        helper.wait()
        if reply[:1] == _ERROR:
            errno, n_msg, n_path = _FAIL.unpack_from(reply, 1)
            start = 1 + _FAIL.size
            message = reply[start : start + n_msg].decode("utf-8", "replace")
            path = os.fsdecode(reply[start + n_msg : start + n_msg + n_path])
            raise OSError(errno, message, path)
        if reply[:1] != _OK or len(reply) != 1 + _DONE.size * len(self._paths):
            raise RuntimeError(f"the file writer stopped (exit status {helper.returncode})")
        for i, path in enumerate(self._paths):
            size, digest = _DONE.unpack_from(reply, 1 + i * _DONE.size)
            self.hashes[path] = (size, digest.hex())

    def __enter__(self) -> Files:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is None:
            self.close()
        else:  # a failure while rendering: stop the helper, raise that failure
            self._helper.kill()
            self._helper.wait()


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
            fd = os.open(path, _NEW_FILE, 0o666)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
        except OSError as e:
            message = (e.strerror or str(e)).encode("utf-8", "replace")
            sink.write(_ERROR + _FAIL.pack(e.errno or 0, len(message), len(path)) + message + path)  # type: ignore[attr-defined]
            return 1
        done.append(_DONE.pack(len(data), hashlib.sha256(data).digest()))
    sink.write(_OK + b"".join(done))  # type: ignore[attr-defined]
    return 0


if __name__ == "__main__":
    sys.exit(_serve(sys.stdin.buffer, sys.stdout.buffer))
