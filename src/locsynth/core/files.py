"""Outputs written whole or not at all (DESIGN.md, "Errors"): every step writes into a temporary
sibling and renames it onto its output only when it is complete, so an interrupted run leaves
nothing half-written."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from .errors import InputError


class atomic_output:
    """Context manager: write into a temporary sibling, rename onto ``path`` on success.

    Refuses an existing ``path`` unless ``overwrite``; on error the temporary is removed, so an
    interrupted run leaves nothing half-written.
    """

    def __init__(self, path: Path, overwrite: bool, directory: bool):
        self.path, self.overwrite, self.directory = Path(path), overwrite, directory

    def __enter__(self) -> Path:
        if self.path.exists() and not self.overwrite:
            raise InputError(f"{self.path} exists; pass `overwrite` to replace it")
        parent = self.path.parent
        parent.mkdir(parents=True, exist_ok=True)
        if self.directory:
            self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.path.name}.", dir=parent))
            os.chmod(self.tmp, 0o777 & ~_umask())
        else:
            fd, name = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=parent)
            os.close(fd)
            self.tmp = Path(name)
            os.chmod(self.tmp, 0o666 & ~_umask())
        return self.tmp

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            _remove(self.tmp)
            return False
        if self.path.exists():
            _remove(self.path)
        os.replace(self.tmp, self.path)
        return False


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        p.unlink(missing_ok=True)
