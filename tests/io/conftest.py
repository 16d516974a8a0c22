"""Shared fixtures: the real datasets (read in place, never copied) and tiny hand-written files."""

from __future__ import annotations

from pathlib import Path

import pytest

#: /work/shared/data beside the repository: tests/io -> tests -> repo root
DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


@pytest.fixture(scope="session")
def dataset():
    """dataset('gowalla-vldb17') -> its folder under ../shared/data; skips the test when absent."""

    def _dataset(name: str) -> Path:
        path = (DATA / name).resolve()
        if not path.exists():
            pytest.skip(f"dataset {name} not found at {path}")
        return path

    return _dataset


@pytest.fixture
def write(tmp_path: Path):
    """write(name, text, newline='\\n', encoding='utf-8') -> path of a new file under tmp_path."""

    def _write(name: str, text: str, newline: str = "\n", encoding: str = "utf-8") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.replace("\n", newline).encode(encoding))
        return path

    return _write
