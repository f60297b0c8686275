"""Work spread over other Python processes (the pages of notices: Python rendering is one
core's work in one process).

`Workers(count, setup, args)` starts `count` fresh interpreters (`sys.executable`, this
process's `sys.path`; nothing of this process is copied into them, and no module of the
caller's is run again there, as `multiprocessing`'s spawn would run a script without a
`__main__` guard); each calls `setup(*args)` once. `map(work, tasks)` runs `work(*task)` for
each task in those processes, a few tasks ahead per process, whichever is free taking the
next, and yields the results in the tasks' order. Functions travel by name (module-level
functions); arguments and results are pickled. An exception raised by `work` or `setup` is
raised here as it was raised there; a process that stops without a reply is a
`RuntimeError`. Leaving the `with` stops the processes.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

_LEN = struct.Struct("<Q")  # each message: its length, then the pickle
# the child: this process's module path first (so the same `forensics` is imported), then
# the loop; one Polars thread each, as the processes already fill the cores
_BOOT = (
    "import pickle, sys\n"
    "n = int.from_bytes(sys.stdin.buffer.read(8), 'little')\n"
    "sys.path[:] = pickle.loads(sys.stdin.buffer.read(n))\n"
    "from forensics.render.processes import _serve\n"
    "sys.exit(_serve(sys.stdin.buffer, sys.stdout.buffer))\n"
)
_STOPPED = object()  # a reader's last word: its process's output ended


class Workers:
    """`count` worker processes, each set up by `setup(*args)` (see the module doc)."""

    def __init__(self, count: int, setup: Callable[..., None], args: tuple[Any, ...]):
        self._replies: queue.Queue[tuple[int, Any]] = queue.Queue()
        self._procs: list[subprocess.Popen[bytes]] = []
        self._readers: list[threading.Thread] = []
        env = {**os.environ, "POLARS_MAX_THREADS": os.environ.get("POLARS_MAX_THREADS", "1")}
        try:
            for at in range(count):
                proc = subprocess.Popen(
                    [sys.executable, "-c", _BOOT],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    env=env,
                )
                self._procs.append(proc)
                assert proc.stdin is not None and proc.stdout is not None
                _send(proc.stdin, list(sys.path))
                _send(proc.stdin, (setup, args))
                reader = threading.Thread(
                    target=_read, args=(proc.stdout, at, self._replies), daemon=True
                )
                reader.start()
                self._readers.append(reader)
        except BaseException:
            self.close()
            raise

    def map(
        self, work: Callable[..., Any], tasks: Iterable[tuple[Any, ...]], ahead: int = 2
    ) -> Iterator[Any]:
        """`work(*task)` of each task, in the tasks' order (see the module doc); at most
        `ahead` tasks wait in each process."""
        waiting = [0] * len(self._procs)
        results: dict[int, Any] = {}
        sent = given = 0
        pending = iter(tasks)
        more = True
        while more or given < sent:
            while more and min(waiting) < ahead:
                task = next(pending, None)
                if task is None:
                    more = False
                    break
                at = waiting.index(min(waiting))
                stdin = self._procs[at].stdin
                assert stdin is not None
                _send(stdin, (sent, work, task))
                waiting[at] += 1
                sent += 1
            if given == sent:
                continue
            at, reply = self._replies.get()
            if reply is _STOPPED:
                code = self._procs[at].wait()
                raise RuntimeError(f"a worker process stopped (exit status {code})")
            number, ok, value = reply
            if not ok:
                raise value
            waiting[at] -= 1
            results[number] = value
            while given in results:
                yield results.pop(given)
                given += 1

    def close(self) -> None:
        """Stop the processes (work not begun is dropped)."""
        for proc in self._procs:
            if proc.stdin is not None:
                with contextlib.suppress(OSError):  # it stopped already
                    proc.stdin.close()
        for proc in self._procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # busy with work no longer wanted
                proc.kill()
                proc.wait()

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _send(stream: IO[bytes], value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LEN.pack(len(data)) + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    """The next message, or `_STOPPED` at the stream's end."""
    head = stream.read(_LEN.size)
    if len(head) < _LEN.size:
        return _STOPPED
    (size,) = _LEN.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        return _STOPPED
    return pickle.loads(data)


def _read(stream: IO[bytes], at: int, replies: queue.Queue[tuple[int, Any]]) -> None:
    """A reader thread: each reply of process `at` into `replies`, then `_STOPPED`."""
    while True:
        reply = _receive(stream)
        replies.put((at, reply))
        if reply is _STOPPED:
            return


def _serve(source: IO[bytes], sink: IO[bytes]) -> int:
    """The worker process: set up, then run each task until the input ends."""
    sys.stdout = sys.stderr  # a print in the work: never into the replies
    setup, args = _receive(source)
    failed: BaseException | None = None
    try:
        setup(*args)
    except Exception as e:  # every task's reply: this failure
        failed = e
    while True:
        message = _receive(source)
        if message is _STOPPED:
            return 0
        number, work, task = message
        try:
            if failed is not None:
                raise failed
            reply = (number, True, work(*task))
        except Exception as e:
            reply = (number, False, _picklable(e))
        _send(sink, reply)


def _picklable(e: Exception) -> Exception:
    """`e`, or a RuntimeError with its text when it cannot cross to the other process."""
    try:
        pickle.loads(pickle.dumps(e))
    except Exception:
        return RuntimeError(f"{type(e).__name__}: {e}")
    return e
