"""What ``evaluate`` computes from the real sets alone, kept across evaluations (issue 53, part 2).

The training column of every metric, the distance MIA's targets and their distances to the test set,
the test set's mined patterns, queries and grids (metrics.groups.Context.reference) depend on the
training and test sets and the options, never on the synthetic set: on the cabs they are about half
of an evaluation's work. A user evaluates release after release against the same split, so
``locsynth evaluate`` keeps them in the user's cache (``$LOCSYNTH_CACHE``, else
``$XDG_CACHE_HOME/locsynth``, else ``~/.cache/locsynth``; ``LOCSYNTH_CACHE=off`` keeps nothing),
one file a split under ``references/``, named by a digest of both sets (events, users, grid, time
axis, public bounds) and of the code that computed them, so that another dataset, another grid or
another version of locsynth never reads them. Each value is stored under the key its group gives, which names every
option it depends on. Results equal those computed afresh (tests/test_references.py); the cache
holds the :data:`KEEP` splits used last. A file that cannot be read or written is ignored: the
references are then computed again.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import pandas as pd

from ..core.version import __version__

#: the splits whose references the cache keeps (the most recently used)
KEEP = 8
FOLDER = "references"
_NAME = re.compile(r"^[0-9a-f]{64}\.pkl$")


def real_sets_digest(train, test) -> str:
    """What a store belongs to: both sets' events and user tables (the trips' hours)."""
    h = hashlib.sha256()
    for ts in (train, test):
        h.update(ts.fingerprint().encode())
        h.update(pd.util.hash_pandas_object(ts.users, index=False).to_numpy().tobytes())
    return h.hexdigest()


@lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 of locsynth's version and of every Python file of the installed package."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(__version__.encode())
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def split_digest(train, test) -> str:
    """The name of a split's file in the user's cache (module docstring)."""
    h = hashlib.sha256(real_sets_digest(train, test).encode())
    for ts in (train, test):
        bounds = getattr(ts, "bounds", None)
        public = [ts.space.meta(), ts.time.meta(), ts.info, bounds.to_dict() if bounds is not None else None]
        h.update(json.dumps(public, sort_keys=True, default=str).encode())
    h.update(code_digest().encode())
    return h.hexdigest()


def load(path: Path, digest: str) -> dict:
    """The store saved in ``path`` when it belongs to ``digest``, else an empty one."""
    try:
        saved = pickle.loads(Path(path).read_bytes())
        if saved.get("digest") == digest:
            return saved["store"]
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, KeyError, TypeError,
            ValueError, IndexError):
        pass                    # none yet, or from another version (its classes moved): computed afresh
    return {}


def save(path: Path, digest: str, store: dict) -> None:
    """Write the store whole or not at all (another process may write the same file at the same
    time: the last complete one stays); a failure leaves the references to be computed again."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(pickle.dumps({"digest": digest, "store": store}, protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(tmp, path)
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        tmp.unlink(missing_ok=True)


def cache_dir() -> Path | None:
    """The user's cache folder of locsynth (module docstring), or None when switched off."""
    given = os.environ.get("LOCSYNTH_CACHE")
    if given is not None:
        return None if given.strip().lower() in ("", "off", "0", "no", "false") else Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "locsynth"


@contextmanager
def kept(train, test):
    """The store of ``train`` and ``test``'s references from the user's cache, saved back when the
    evaluation inside added to it; None when the cache is off."""
    where = cache_dir()
    if where is None:
        yield None
        return
    digest = split_digest(train, test)
    path = where / FOLDER / f"{digest}.pkl"
    store = load(path, digest)
    known = len(store)
    if known:
        try:
            os.utime(path)                      # recently used: kept by the pruning below
        except OSError:
            pass
    yield store
    if len(store) > known:
        save(path, digest, store)
        _prune(where / FOLDER)


def _prune(folder: Path) -> None:
    """Keep the :data:`KEEP` most recently used stores; only files of the cache's own naming go."""
    try:
        files = [p for p in folder.iterdir() if _NAME.match(p.name) and p.is_file() and not p.is_symlink()]
        files.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        for stale in files[KEEP:]:
            stale.unlink(missing_ok=True)
    except OSError:
        pass
