"""Outputs written whole or not at all, and only over what locsynth wrote (DESIGN.md, "Errors").

Every step writes into a temporary sibling and renames it onto its output only when it is
complete, so an interrupted run leaves nothing half-written; a later run on the same output
removes what an interrupted one left (``.NAME.XXXXXXXX`` temporaries, under the output's lock).

``overwrite`` replaces only what locsynth wrote (issue 53):

- a folder whose marker (``.locsynth``, written into every folder output) lists every file and
  folder in it: a folder the user added anything to, or one locsynth never wrote (the current
  directory, a folder of CSVs), is refused; so is an empty-looking folder with hidden content;
- a regular file whose device, inode, size and modification time are those locsynth recorded
  when it wrote it (in its state folder, ``$LOCSYNTH_STATE`` or ``$XDG_STATE_HOME/locsynth``,
  by default ``~/.local/state/locsynth``): a file the user wrote or edited since is refused;
- never a symbolic link, a device or any other non-regular file, never an input of the same
  command (a path equal to one, or a folder that holds one), never a folder the user made.

An empty folder is replaced (nothing is lost). A command holds its output's lock
(``.NAME.lock`` beside it) from before its work until the output is in place, so two commands on
one output do not both run to the end and silently replace each other; :func:`lock_file` is the
one lock, which the benchmark's folder uses too.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from .errors import InputError

#: the marker file in every folder locsynth writes: the relative paths it wrote
MARKER = ".locsynth"
#: errors of the disk rather than of the input, reported as one line naming the output
WRITE_ERRORS = {errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EPERM, errno.EDQUOT, errno.EFBIG}


# -- what may be replaced --------------------------------------------------------------------------------

def check_output(path: str | Path, *, overwrite: bool, directory: bool, inputs=()) -> None:
    """Refuse, before any work, an output that may not be written (module docstring): an existing
    path without ``overwrite``, and with it anything locsynth did not write; ``inputs`` are the
    paths the same command reads."""
    path = Path(path)
    check_inputs(path, inputs)
    if not os.path.lexists(path):
        return
    if path.is_symlink() or not (path.is_dir() or path.is_file()):
        raise InputError(f"{path} is not a regular file or folder: locsynth writes only files and folders "
                         f"of its own; choose another output")
    if not overwrite:
        raise InputError(f"{path} exists; pass `overwrite` to replace it")
    if directory:
        _check_folder(path)
    else:
        _check_file(path)


def check_inputs(path: str | Path, inputs) -> None:
    """Refuse an output ``path`` that is one of ``inputs`` or a folder holding one."""
    path = Path(path)
    out = _resolved(path)
    for given in inputs:
        if given is None:
            continue
        source = _resolved(Path(given))
        if source == out:
            raise InputError(f"{path} is an input of this command; write the output somewhere else")
        if out in source.parents:
            raise InputError(f"{path} holds {given}, an input of this command; write the output somewhere else")


def _check_folder(path: Path) -> None:
    if not path.is_dir():
        raise InputError(f"{path} is a file, not a folder locsynth wrote; choose another output")
    if not any(path.iterdir()):
        return
    written = _marker_entries(path)
    if written is None:
        raise InputError(f"{path} is not a folder locsynth wrote (it has no {MARKER} marker listing what it holds): "
                         f"locsynth replaces only its own outputs; remove it yourself or choose another output")
    others = sorted(_entries(path) - written - {MARKER})
    if others:
        listed = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        raise InputError(f"{path} holds files locsynth did not write ({listed}): locsynth replaces only its own "
                         f"outputs; move them out or choose another output")


def _check_file(path: Path) -> None:
    if path.is_dir():
        raise InputError(f"{path} is a folder, not a file locsynth wrote; choose another output")
    if _signature(path) != _recorded(path):
        raise InputError(f"{path} was not written by locsynth, or was changed since: locsynth replaces only its "
                         f"own outputs; remove it yourself or choose another output")


def _entries(path: Path) -> set[str]:
    """Every file and folder under ``path``, relative, with '/'."""
    out = set()
    for root, dirs, files in os.walk(path):
        rel = Path(root).relative_to(path)
        out.update((rel / name).as_posix() for name in (*dirs, *files))
    return out


def _marker_entries(path: Path) -> set[str] | None:
    try:
        data = json.loads((path / MARKER).read_text())
        return set(data["entries"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_marker(folder: Path) -> None:
    from .version import __version__

    entries = sorted(e for e in _entries(folder) if Path(e).name != MARKER or "/" in e)
    (folder / MARKER).write_text(json.dumps({"written_by": "locsynth", "version": __version__,
                                             "entries": entries}, indent=1))


# -- the files locsynth wrote (its state folder) ----------------------------------------------------------

def state_dir() -> Path:
    base = os.environ.get("LOCSYNTH_STATE")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(xdg) / "locsynth"


def _record_path(path: Path) -> Path:
    key = hashlib.sha256(str(_resolved(path)).encode()).hexdigest()[:32]
    return state_dir() / "written" / f"{key}.json"


def _signature(path: Path) -> list:
    s = path.stat()
    return [str(_resolved(path)), s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns]


def _recorded(path: Path) -> list | None:
    try:
        return json.loads(_record_path(path).read_text())
    except (OSError, ValueError):
        return None


def _record(path: Path) -> None:
    """Note that locsynth wrote the file ``path`` (best effort: without a state folder a later
    ``overwrite`` is refused, never wrongly allowed)."""
    try:
        record = _record_path(path)
        record.parent.mkdir(parents=True, exist_ok=True)
        tmp = record.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(_signature(path)))
        os.replace(tmp, record)
    except OSError:
        pass


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(os.path.abspath(path)))


# -- the lock ---------------------------------------------------------------------------------------------

_HELD: dict[str, int] = {}


def _process_start(pid: int) -> float | None:
    import psutil

    try:
        return psutil.Process(pid).create_time()
    except (psutil.Error, OSError):
        return None


def _holder(lock: Path) -> dict | None:
    """The live locsynth process that holds ``lock``, or None when it is free or stale: no such
    process, a process that started after the lock was taken (its id reused), or (a lock of an
    earlier version, a bare process id) a process that is not locsynth."""
    try:
        text = lock.read_text().strip()
    except OSError:
        return None
    try:
        held = json.loads(text) if text.startswith("{") else {"pid": int(text or 0)}
        pid = int(held["pid"])
    except (ValueError, KeyError, TypeError):
        return None
    if pid <= 0 or pid == os.getpid():
        return None
    start = _process_start(pid)
    if start is None:
        return None
    if "started" in held:
        return held if abs(start - float(held["started"])) < 1.0 else None
    import psutil

    try:
        command = " ".join(psutil.Process(pid).cmdline())
    except (psutil.Error, OSError):
        return None
    return held if "locsynth" in command else None


@contextlib.contextmanager
def lock_file(lock: Path, what: str):
    """Hold ``lock`` (a file naming this process) while ``what`` writes; reentrant within a
    process. Refused in one error when a live locsynth process holds it; a lock whose process is
    gone, or is not locsynth, is taken over."""
    lock = Path(lock)
    key = str(_resolved(lock))
    if _HELD.get(key):
        _HELD[key] += 1
        try:
            yield
        finally:
            _HELD[key] -= 1
        return
    record = json.dumps({"pid": os.getpid(), "started": _process_start(os.getpid()),
                         "command": " ".join(sys.argv)[:200]})
    for _ in range(3):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            break
        except FileExistsError:
            held = _holder(lock)
            if held is not None:
                command = f" ({held['command']})" if held.get("command") else ""
                raise InputError(f"another locsynth process {held['pid']}{command} is writing {what}: wait for it to "
                                 f"finish or choose another output; if no locsynth is running, remove {lock}") from None
            with contextlib.suppress(FileNotFoundError):
                lock.unlink()
        except OSError as exc:
            raise InputError(f"cannot write to {lock.parent}: {exc.strerror}") from None
    else:
        raise InputError(f"cannot take the lock {lock}; if no locsynth is running, remove it")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(record)
    except OSError as exc:
        lock.unlink(missing_ok=True)
        raise InputError(f"cannot write to {lock.parent}: {exc.strerror}") from None
    _HELD[key] = 1
    try:
        yield
    finally:
        _HELD.pop(key, None)
        with contextlib.suppress(OSError):
            lock.unlink()


def _lock_path(path: Path) -> Path:
    return path.parent / f".{path.name}.lock"


def _leftovers(path: Path) -> list[Path]:
    """Temporaries an interrupted write of ``path`` left beside it (``.NAME.`` and tempfile's 8
    characters)."""
    pattern = re.compile(rf"^\.{re.escape(path.name)}\.[a-z0-9_]{{8}}$")
    try:
        return [p for p in path.parent.iterdir() if pattern.match(p.name)]
    except OSError:
        return []


def _make_parents(path: Path) -> list[Path]:
    """Create ``path``'s missing parent folders; returns them, deepest first."""
    made = []
    parent = path.parent
    while not parent.exists():
        made.append(parent)
        parent = parent.parent
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create {path.parent}: {exc.strerror}") from None
    return made


def _remove_empty(folders: list[Path]) -> None:
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()


@contextlib.contextmanager
def claimed(path: str | Path, *, overwrite: bool, directory: bool, inputs=()):
    """Check ``path`` as an output (:func:`check_output`) and hold its lock until the block ends: a
    command claims its output before its work, so a second one on it, an output it may not
    replace, or a folder it cannot write is refused before anything runs, not after."""
    path = Path(path)
    check_output(path, overwrite=overwrite, directory=directory, inputs=inputs)
    made = _make_parents(path)
    try:
        with lock_file(_lock_path(path), str(path)):
            yield path
    except BaseException:
        _remove_empty(made)
        raise


class atomic_output:
    """Context manager: write into a temporary sibling, rename onto ``path`` on success.

    Refuses ``path`` when :func:`check_output` does (``overwrite`` replaces only what locsynth
    wrote; ``inputs`` are never replaced); ``mine`` skips that check for a path inside a folder the
    caller holds and owns (the benchmark's). Holds the output's lock while it writes and removes
    what an interrupted write left; on error the temporary is removed, and a full or read-only
    disk is one error naming the output.
    """

    def __init__(self, path: Path, overwrite: bool, directory: bool, inputs=(), mine: bool = False):
        self.path, self.overwrite, self.directory = Path(path), overwrite, directory
        self.inputs, self.mine = inputs, mine

    def __enter__(self) -> Path:
        if not self.mine:
            check_output(self.path, overwrite=self.overwrite, directory=self.directory, inputs=self.inputs)
        self.made = _make_parents(self.path)
        self.lock = lock_file(_lock_path(self.path), str(self.path))
        try:
            self.lock.__enter__()
            for left in _leftovers(self.path):
                _remove(left)
            self.tmp = self._temporary()
        except BaseException:
            self.lock.__exit__(*sys.exc_info())
            _remove_empty(self.made)
            raise
        return self.tmp

    def _temporary(self) -> Path:
        parent, prefix = self.path.parent, f".{self.path.name}."
        try:
            if self.directory:
                tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
                os.chmod(tmp, 0o777 & ~_umask())
            else:
                fd, name = tempfile.mkstemp(prefix=prefix, dir=parent)
                os.close(fd)
                tmp = Path(name)
                os.chmod(tmp, 0o666 & ~_umask())
        except OSError as exc:
            raise InputError(f"cannot write {self.path}: {exc.strerror}") from None
        return tmp

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is not None:
                _remove(self.tmp)
                _remove_empty(self.made)
                if isinstance(exc, OSError) and exc.errno in WRITE_ERRORS:
                    raise InputError(f"cannot write {self.path}: {exc.strerror}") from None
                return False
            try:
                if self.directory:
                    _write_marker(self.tmp)
                if os.path.lexists(self.path):
                    _remove(self.path)
                os.replace(self.tmp, self.path)
            except OSError as exc:
                _remove(self.tmp)
                raise InputError(f"cannot write {self.path}: {exc.strerror}") from None
            if not self.directory:
                _record(self.path)
            return False
        finally:
            self.lock.__exit__(None, None, None)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        p.unlink(missing_ok=True)
