"""Shared fixtures: the public datasets in ../shared/data, read in place (never copied).

A test that reads them (through ``data_dir``, tests/io's ``dataset`` or a fixture built on them)
is a real-data run and is marked ``slow``, so that ``pytest -m "not slow"`` is the fast loop
(docs/development.md); the long statistical audits and end-to-end runs carry the marker
themselves."""

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.hookimpl(tryfirst=True)                    # before -m deselects by marker
def pytest_collection_modifyitems(items):
    for item in items:
        if {"data_dir", "dataset"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True, scope="session")
def _state_folder(tmp_path_factory):
    """What locsynth notes of the files it wrote (core/files.py) and the references evaluate keeps
    (evaluation/references.py) go to folders of the session, not the user's home."""
    import os

    os.environ["LOCSYNTH_STATE"] = str(tmp_path_factory.mktemp("locsynth-state"))
    os.environ["LOCSYNTH_CACHE"] = str(tmp_path_factory.mktemp("locsynth-cache"))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not DATA.is_dir():
        pytest.skip(f"datasets not found at {DATA}")
    return DATA


@pytest.fixture(scope="session")
def pf_dir(data_dir) -> Path:
    path = data_dir / "ppmtf-pf-tokyo"
    if not path.is_dir():
        pytest.skip("PF Tokyo data not found")
    return path


@pytest.fixture(scope="session")
def pf_sets(pf_dir, tmp_path_factory):
    """The PF training and test TraceSets, prepared once per session."""
    from locsynth.data.prepare import prepare

    out = tmp_path_factory.mktemp("pf") / "pf"
    return prepare(pf_dir, "pf", out)
