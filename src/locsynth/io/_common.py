"""Helpers shared by the readers."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import InputError


def require_file(path: Path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    return path


def read_csv_checked(path: str | Path, required: tuple[str, ...], **kwargs) -> pd.DataFrame:
    """Read a CSV; a missing file, no data rows or missing columns are one clear InputError."""
    path = require_file(Path(path))
    try:
        frame = pd.read_csv(path, **kwargs)
    except pd.errors.EmptyDataError:
        raise InputError(f"{path} is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path} is not a readable CSV file: {exc}") from None
    if len(frame) == 0:
        raise InputError(f"{path} has no data rows")
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise InputError(f"{path} is missing column(s) {', '.join(missing)}; required: {', '.join(required)}; "
                         f"found: {', '.join(map(str, frame.columns))}")
    return frame
