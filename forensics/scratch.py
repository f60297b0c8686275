"""Scratch files and folders named with the owning process id, so none outlives a crash.

`make_dir` / `make_name` put the pid in the name (`PREFIX<pid>-<random>`); `sweep` removes
the entries of a prefix whose process is gone (a `kill -9` leaves them behind); `remove`
deletes quietly: cleaning up never fails the work it follows. `publish` moves a finished
folder's entries into their final folder, replacing same-named entries, under a lock on
that folder so two writers never interleave their files.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import tempfile
from pathlib import Path


def make_dir(parent: str | Path | None, prefix: str) -> Path:
    """A new folder `PREFIX<pid>-<random>` in `parent` (default: the system temp folder),
    after sweeping the ones dead processes left there."""
    base = Path(parent) if parent is not None else Path(tempfile.gettempdir())
    sweep(base, prefix)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=base))


def make_name(parent: Path, prefix: str) -> Path:
    """A path `PARENT/PREFIX<pid>-<random>` that does not exist yet (for a file the caller
    creates), after sweeping the ones dead processes left there."""
    sweep(parent, prefix)
    return parent / f"{prefix}{os.getpid()}-{secrets.token_hex(4)}"


def sweep(parent: Path, prefix: str) -> None:
    """Remove `PREFIX<pid>-...` entries of `parent` whose process is no longer alive."""
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            if not entry.name.startswith(prefix):
                continue
            pid = entry.name[len(prefix) :].split("-", 1)[0].split(".", 1)[0]
            if pid.isdigit() and not pid_alive(int(pid)):
                remove(entry)


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists (on this host)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by another user
    except OSError:
        return False
    return True


def remove(path: Path) -> None:
    """Delete a file or folder tree; errors are ignored (cleanup must not fail the work)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink()


def publish(work: Path, out: Path, companions: dict[str, tuple[str, ...]] | None = None) -> None:
    """Move every entry of folder `work` into `out` (created if missing), replacing entries
    of the same name; `companions[name]` lists files of `out` to delete when `name` is
    replaced (e.g. a database's `.wal`). `work` is removed. Entries of `out` that `work`
    does not hold are left alone."""
    out.mkdir(parents=True, exist_ok=True)
    with _locked(out):
        for entry in sorted(work.iterdir()):
            dest = out / entry.name
            for extra in (companions or {}).get(entry.name, ()):
                remove(out / extra)
            if dest.is_dir() and not dest.is_symlink():
                aside = out / f".{entry.name}.replaced-{os.getpid()}-{secrets.token_hex(4)}"
                dest.rename(aside)
                _move(entry, dest)
                remove(aside)
            else:
                _move(entry, dest)
    remove(work)


def _move(entry: Path, dest: Path) -> None:
    """Rename `entry` to `dest` (replacing a file), copying across file systems."""
    try:
        os.replace(entry, dest)
    except OSError as e:
        if e.errno != errno.EXDEV:
            raise
        shutil.move(str(entry), str(dest))


@contextlib.contextmanager
def _locked(folder: Path):  # type: ignore[no-untyped-def]
    """An exclusive advisory lock on `folder` (released when the process dies)."""
    try:
        import fcntl
    except ImportError:  # no flock on this platform: moves still happen, unserialized
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
