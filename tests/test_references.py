"""evaluate keeps what it computes from the real sets alone in the user's cache (evaluation/references.py):
results equal those computed afresh, nothing recomputed the second time, nothing reused for other
sets, another grid or other code, and nothing but its own files pruned."""

import json
import os
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from locsynth.cli import app
from locsynth.evaluation import references as refs
from locsynth.metrics import groups
from test_trips_scale import walks

runner = CliRunner()


@pytest.fixture
def split(tmp_path):
    walks(300, 4, 5, 20).save(tmp_path / "train")
    walks(100, 4, 5, 21).save(tmp_path / "test")
    walks(100, 4, 5, 22).save(tmp_path / "syn")
    return tmp_path


def evaluate(split, out, cache, monkeypatch):
    monkeypatch.setenv("LOCSYNTH_CACHE", str(cache))
    done = runner.invoke(app, ["--quiet", "evaluate", "--train", str(split / "train"), "--test", str(split / "test"),
                               "--synthetic", str(split / "syn"), "--out", str(split / out)])
    assert done.exit_code == 0, done.output
    metrics = json.loads((split / out / "metrics.json").read_text())
    return {k: v for k, v in metrics.items() if k != "_meta"}


def test_a_second_evaluation_reads_the_real_sets_references_and_gives_the_same_report(split, monkeypatch):
    afresh = evaluate(split, "off", "off", monkeypatch)
    cache = split / "cache"
    first = evaluate(split, "first", cache, monkeypatch)
    stored = list((cache / refs.FOLDER).iterdir())
    assert len(stored) == 1 and refs._NAME.match(stored[0].name)
    calls = []
    compute = groups.Context.reference
    monkeypatch.setattr(groups.Context, "reference",
                        lambda self, key, fn: compute(self, key, lambda: calls.append(key) or fn()))
    second = evaluate(split, "second", cache, monkeypatch)
    assert calls == []                                        # every reference read from the file
    assert first == afresh and second == afresh               # to the last digit
    # a damaged file is ignored: computed again and written whole
    stored[0].write_bytes(b"not a pickle")
    assert evaluate(split, "third", cache, monkeypatch) == afresh
    assert calls and refs.load(stored[0], stored[0].stem)


def test_the_digest_names_the_sets_their_frame_and_the_code(split, monkeypatch):
    from locsynth.data.traces import TraceSet

    train, test = TraceSet.load(split / "train"), TraceSet.load(split / "test")
    base = refs.split_digest(train, test)
    assert refs.split_digest(train, test) == base
    assert refs.split_digest(test, train) != base
    assert refs.split_digest(train, replace(test, info={**test.info, "cell_m": 123.0})) != base
    shifted = replace(test, time=replace(test.time, timezone="Asia/Tokyo"))
    assert refs.split_digest(train, shifted) != base
    monkeypatch.setattr(refs, "code_digest", lambda: "another version")
    assert refs.split_digest(train, test) != base


def test_the_cache_keeps_the_splits_used_last_and_only_prunes_its_own_files(tmp_path, monkeypatch):
    folder = tmp_path / refs.FOLDER
    folder.mkdir()
    theirs = folder / "notes.txt"
    theirs.write_text("mine")
    names = [f"{i:064x}.pkl" for i in range(refs.KEEP + 3)]
    for age, name in enumerate(names):
        (folder / name).write_bytes(b"x")
        os.utime(folder / name, (1000 + age, 1000 + age))
    refs._prune(folder)
    left = sorted(p.name for p in folder.iterdir())
    assert left == sorted(names[-refs.KEEP:] + ["notes.txt"])


@pytest.mark.parametrize("value", ["off", "0", ""])
def test_the_cache_can_be_switched_off(value, monkeypatch):
    monkeypatch.setenv("LOCSYNTH_CACHE", value)
    assert refs.cache_dir() is None
    with refs.kept(None, None) as store:
        assert store is None


def test_without_a_setting_the_cache_is_the_users(tmp_path, monkeypatch):
    monkeypatch.delenv("LOCSYNTH_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert refs.cache_dir() == tmp_path / "locsynth"


def test_a_large_split_is_told_before_the_searches_and_how_to_sample(split, monkeypatch):
    """From LONG_SEARCH_TRIPS training trips, evaluate warns before it starts that the searches of
    every trajectory take minutes and names --sample-trips; the command prints it as one line.
    Below it, or with the MIA's targets sampled and no near-copy check, nothing is said."""
    import warnings

    from locsynth import TraceSet
    from locsynth.core.errors import LongRunWarning
    from locsynth.evaluation import evaluate as ev

    train, test, syn = (TraceSet.load(split / name) for name in ("train", "test", "syn"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ev.evaluate(train, test, syn, groups=["distance_mia"])
    assert not [w for w in caught if issubclass(w.category, LongRunWarning)]
    monkeypatch.setattr(ev, "LONG_SEARCH_TRIPS", 300)
    with pytest.warns(LongRunWarning, match="300 training trips: the distance MIA searches every .* --sample-trips 20000"):
        ev.evaluate(train, test, syn, groups=["distance_mia", "standard"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ev.evaluate(train, test, syn, groups=["distance_mia"], dmia_targets=50)
    assert not [w for w in caught if issubclass(w.category, LongRunWarning)]
    monkeypatch.setenv("LOCSYNTH_CACHE", "off")
    done = runner.invoke(app, ["evaluate", "--train", str(split / "train"), "--test", str(split / "test"),
                               "--synthetic", str(split / "syn"), "--out", str(split / "told"), "--attacks",
                               "distance_mia,near_copies"])
    assert done.exit_code == 0, done.output
    line = next(t for t in done.output.splitlines() if "training trips:" in t)
    assert line.startswith("300 training trips: the distance MIA and the near-copy check search every") and "warn" not in line.lower()
