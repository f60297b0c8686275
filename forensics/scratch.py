"""Scratch files and folders named with the owning process id, so none outlives a crash.

`make_dir` / `make_name` put the pid in the name (`PREFIX<pid>-<random>`); `sweep` removes
the entries of a prefix whose process is gone (a `kill -9` leaves them behind); `remove`
deletes quietly: cleaning up never fails the work it follows. `move_in` (under
`publishing`, a lock on the folder) moves a finished folder's files into their final folder
as one unit: journaled, old files deleted before new ones arrive, a killed publish undone by
the next (`recover`), files it does not name left alone.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import shutil
import signal
import tempfile
from collections.abc import Iterable, Iterator
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


# A publish's journal and set-aside entries in the folder it writes: PUBLISH<pid>-<random>...
PUBLISH = ".forensics-publish-"
JOURNAL = ".json"
# Fault injection for tests: the process kills itself (SIGKILL) at this point of a publish:
# `journal` (written), `remove` (after the first removal), `move` (after the first file moved
# in), `last` (after the last entry, the manifest, moved in; the journal not yet removed)
KILL_AT = "FORENSICS_KILL_AT"


@contextlib.contextmanager
def publishing(out: Path) -> Iterator[None]:
    """Hold the lock on folder `out` (made when missing) for one publish, after undoing
    what a killed publish left there (`recover`): two writers never interleave their files."""
    out.mkdir(parents=True, exist_ok=True)
    with _locked(out):
        recover(out)
        yield


def recover(out: Path) -> None:
    """Undo what publishes killed midway left in `out` (their process is gone): every path
    their journal lists is deleted and the file the journal keeps (the manifest of what stays)
    written back, so `out` never holds files of two publishes; set-aside leftovers removed.
    Nothing to do (the usual case) costs one listing of `out`."""
    try:
        entries = sorted(e for e in out.iterdir() if e.name.startswith(PUBLISH))
    except OSError:
        return
    journals = [e for e in entries if e.name.endswith(JOURNAL)]
    for entry in [*journals, *(e for e in entries if e not in journals)]:
        pid = entry.name[len(PUBLISH) :].split("-", 1)[0]
        if pid.isdigit() and pid_alive(int(pid)) and int(pid) != os.getpid():
            continue
        if entry in journals:
            try:
                _undo(out, entry)
            except OSError:
                continue  # kept: the next command tries again (and its publish fails loudly)
        remove(entry)


def move_in(
    work: Path,
    out: Path,
    *,
    remove_paths: Iterable[str] = (),
    units: Iterable[str] = (),
    last: str | None = None,
    restore: dict[str, bytes | None] | None = None,
) -> None:
    """Move the entries staged in folder `work` into `out` as one unit; the caller holds
    `publishing(out)`. Files are moved one by one to the same relative path (other files of
    `out` and of its folders stay), the folders named in `units` whole, and so a folder that
    `out` does not have (after the deletions: one rename for thousands of notices), `last`
    (e.g. the manifest) at the end. First a journal in `out` names every path this may delete or
    create; then `remove_paths` (relative to `out`) and whatever the staged entries replace
    are deleted, then the entries moved in: `out` never shows an old file beside a new one.
    A publish killed midway is undone by the next `recover` (one that fails, at once): the
    journal's paths deleted, and `restore` (relative path -> bytes, or None to delete)
    written, e.g. the manifest of the files that stay. `work` is removed."""
    units = set(units)
    staged, bare = _staged(work, units)
    placed = [*staged, *(f"{u}/" for u in sorted(units) if (work / u).is_dir())]
    paths = sorted({*remove_paths, *(p.rstrip("/") for p in placed)})
    journal = _write_journal(out, {"paths": paths, "restore": _text(restore or {})})
    try:
        _fault("journal")
        there: dict[str, bool] = {}  # whether `out` has the folder (nothing to delete if not)
        for rel in paths:
            parent = _parent(rel)
            if parent and parent not in there:
                there[parent] = os.path.isdir(os.path.join(out, parent))
            if parent and not there[parent]:
                continue
            if rel != last and _delete(out, rel):
                _fault("remove")
        _prune(out, paths)
        whole = _new_folders(out, staged, bare)
        for folder in whole:  # a folder `out` lacks moves in whole: one rename, not one a file
            (out / folder).parent.mkdir(parents=True, exist_ok=True)
            _move(os.path.join(work, folder), os.path.join(out, folder))
            _fault("move")
        made: set[str] = set()  # folders made (or found) in `out`: one mkdir per folder
        inside = tuple(f"{folder}/" for folder in whole)
        for rel in [*(u for u in sorted(units) if (work / u).is_dir()), *staged]:
            if rel == last or (inside and rel.startswith(inside)):
                continue
            parent = _parent(rel)
            if parent not in made:
                (out / parent).mkdir(parents=True, exist_ok=True)
                made.add(parent)
            _move(os.path.join(work, rel), os.path.join(out, rel))  # strings: one per file
            _fault("move")
        if last is not None and (work / last).exists():
            _move(work / last, out / last)
        elif last is not None:
            _delete(out, last)
        _fault("last")
    except BaseException:  # a failed move (disk full, ...) is undone at once, as a kill is later
        with contextlib.suppress(OSError):
            _undo(out, journal)
            remove(journal)
        raise
    remove(journal)
    remove(work)


def _staged(work: Path, units: set[str]) -> tuple[list[str], set[str]]:
    """The files under `work` (relative, POSIX), those of the `units` folders aside; and the
    folders under `work` with no file under them (they are not published)."""
    found: list[str] = []
    folders: set[str] = set()
    holding: set[str] = set()  # the folders with a file of their own
    for folder, dirs, files in os.walk(work):
        rel = os.path.relpath(folder, work).replace(os.sep, "/")
        if rel == ".":
            dirs[:] = [d for d in dirs if d not in units]
            found.extend(f for f in files if f not in units)
        else:
            folders.add(rel)
            found.extend(f"{rel}/{f}" for f in files)
            if files:
                holding.add(rel)
    filled = {p for rel in holding for p in (rel, *_parents(rel))}
    return sorted(found), folders - filled


def _parents(rel: str) -> Iterator[str]:
    """The folders of a relative path, innermost first (`a/b/c` -> `a/b`, `a`)."""
    parent = _parent(rel)
    while parent:
        yield parent
        parent = _parent(parent)


def _new_folders(out: Path, staged: list[str], bare: set[str]) -> list[str]:
    """The outermost folders of the staged files that `out` does not have: each can move in
    whole (everything under it is staged, and it holds no folder without a file)."""
    holding = {_parent(rel) for rel in staged} - {""}  # thousands of files, few folders
    folders = sorted({p for d in holding for p in (d, *_parents(d))}, key=lambda f: f.count("/"))
    held = {p for b in bare for p in (b, *_parents(b))}
    whole: list[str] = []
    for folder in folders:
        if folder in held or any(folder.startswith(f"{w}/") for w in whole):
            continue
        if not os.path.lexists(os.path.join(out, folder)):
            whole.append(folder)
    return whole


def _write_journal(out: Path, body: dict[str, object]) -> Path:
    """The journal, written whole under a temporary name and renamed (never half there)."""
    name = f"{PUBLISH}{os.getpid()}-{secrets.token_hex(4)}"
    tmp = out / f"{name}.tmp"
    tmp.write_text(json.dumps(body, sort_keys=True), encoding="utf-8")
    journal = out / f"{name}{JOURNAL}"
    os.replace(tmp, journal)
    return journal


def _text(restore: dict[str, bytes | None]) -> dict[str, str | None]:
    return {k: None if v is None else v.decode("utf-8") for k, v in restore.items()}


def _undo(out: Path, journal: Path) -> None:
    """Delete the paths a killed publish's journal names; write back what it restores.
    Raises OSError when it cannot (the journal is then kept)."""
    try:
        body = json.loads(journal.read_text(encoding="utf-8"))
        paths = [p for p in body["paths"] if isinstance(p, str)]
        restore = dict(body.get("restore") or {})
    except (ValueError, KeyError, TypeError, AttributeError):
        return  # not a journal this code wrote: left to `remove`
    for rel in paths:
        _delete(out, rel)
    _prune(out, paths)
    for rel, text in restore.items():
        if not _safe(rel):
            continue
        if text is None:
            _delete(out, rel)
        else:
            tmp = out / f"{PUBLISH}{os.getpid()}-{secrets.token_hex(4)}.tmp"
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, out / rel)


_SLASH_ONLY = os.sep == "/" and os.altsep is None


def _parent(rel: str) -> str:
    """`os.path.dirname` of a relative POSIX path (as the journal and manifests name files),
    without its cost where `/` is the only separator (hundreds of thousands of notices)."""
    return rel.rpartition("/")[0] if _SLASH_ONLY else os.path.dirname(rel)


def _safe(rel: str) -> bool:
    """A relative path inside the folder (a journal names nothing outside it)."""
    if not rel or os.path.isabs(rel):
        return False
    if ".." not in rel:  # no part can be `..` (the usual case: no split)
        return True
    parts = rel.split("/") if os.sep == "/" else rel.replace("\\", "/").split("/")
    return ".." not in parts


def _delete(out: Path, rel: str) -> bool:
    """Delete `out/rel` (a file, or a folder moved whole: set aside, then removed); whether
    there was one."""
    if not _safe(rel):
        return False
    try:  # a file (the usual case): one unlink, no stat, no Path
        os.unlink(os.path.join(out, rel))
        return True
    except FileNotFoundError:
        return False
    except OSError:  # a folder (or a name unlink cannot remove): as below
        pass
    path = out / rel
    if path.is_dir() and not path.is_symlink():
        aside = out / f"{PUBLISH}{os.getpid()}-{secrets.token_hex(4)}.aside"
        with contextlib.suppress(OSError):
            path.rename(aside)
            remove(aside)
    elif path.exists() or path.is_symlink():
        path.unlink()
    else:
        return False
    return True


def _prune(out: Path, paths: Iterable[str]) -> None:
    """Remove the folders of `paths` under `out` that are left empty (deepest first)."""
    folders: set[str] = set()
    for rel in paths:
        if not _safe(rel):
            continue
        parent = _parent(rel.rstrip("/"))
        while parent and parent not in folders:
            folders.add(parent)
            parent = _parent(parent)
    for folder in sorted(folders, key=lambda f: f.count("/"), reverse=True):
        with contextlib.suppress(OSError):
            os.rmdir(out / folder)  # only when empty


def _fault(point: str) -> None:
    """Kill this process at `point` when KILL_AT names it (tests of a killed publish)."""
    if os.environ.get(KILL_AT) == point:
        os.kill(os.getpid(), signal.SIGKILL)


def _move(entry: str | Path, dest: str | Path) -> None:
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
