"""What every ``locsynth`` command module shares: printing, one-line errors, progress display."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Optional

import typer

from .errors import InputError


@functools.lru_cache(maxsize=None)
def _console(stderr: bool):
    from rich.console import Console

    return Console(stderr=stderr)


def say(text: str) -> None:
    _console(False).print(text, highlight=False, soft_wrap=True, markup=False)


def reports_errors(fn):
    """Bad input: one line on stderr, exit code 2, no traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except InputError as exc:
            from rich.markup import escape

            _console(True).print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper


class _NoBar:
    """What progress_bar gives when stderr is not a terminal: nothing drawn, nothing imported."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def add_task(self, *args, **kwargs):
        return 0

    def update(self, *args, **kwargs):
        pass


def spinner(text: str):
    """rich's status spinner on a terminal; nothing otherwise."""
    console = _console(True)
    return console.status(text) if console.is_terminal else _NoBar()


def progress_bar():
    console = _console(True)
    if not console.is_terminal:
        return _NoBar()
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    TimeRemainingColumn(), console=console, transient=True)


def _refuse_existing(*paths: Optional[Path], overwrite: bool) -> None:
    for path in paths:
        if path is not None and path.exists() and not overwrite:
            raise InputError(f"{path} exists; pass --overwrite to replace it")
