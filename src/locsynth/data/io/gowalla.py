"""Gowalla check-ins and friendships as preprocessed by Liu et al. (PVLDB 2017, from SNAP loc-gowalla).

``Gowalla_checkins.txt`` (``user_id poi_id unix_time``), ``Gowalla_poi_coos.txt``
(``poi_id latitude longitude``) and ``Gowalla_social_relations.txt`` (``user_id user_id``), all
tab-separated without header; user and POI ids re-indexed from 0. The unix times are 8 h early
(``prepare`` corrects them: ``io.TIME_SHIFTS``, docs/data.md).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import _vldb17
from ._common import find_one, read_table

FRIENDS_PATTERN = "*social_relations*.txt"


def read_gowalla(path: str | Path, timezone: str | None = None,
                 pois_file: str | Path | None = None) -> pd.DataFrame:
    """Gowalla check-ins with their POI coordinates.

    ``path`` is the folder holding ``*checkins*.txt`` and ``*poi_coos*.txt``, or the check-ins
    file with ``pois_file`` = the POI coordinates (default: the ``*poi_coos*.txt`` beside it).
    Times are unix seconds, so ``timezone`` is not needed, returned as stated: they are 8 h
    early (SNAP's rows of user 0 come 8 h later to the second, at the same places; the Texas
    check-ins' hours are 0.53 in total variation from Foursquare's Texas hours as stated, 0.13
    moved 8 h), which ``prepare`` corrects by default (``io.TIME_SHIFTS``, docs/data.md).
    user = user id (int), venue = POI id. A check-in at a POI without coordinates is an InputError.
    """
    return _vldb17.read_checkins(path, timezone, pois_file)


def read_friends(path: str | Path) -> pd.DataFrame:
    """Gowalla friendship graph as an undirected edge list.

    ``path`` is ``Gowalla_social_relations.txt`` (two tab-separated user ids per line) or its
    folder. Returns columns ``user_a``, ``user_b`` (original ids, int64) with ``user_a < user_b``,
    self-loops and repeated pairs dropped, sorted.
    """
    path = Path(path)
    if path.is_dir():
        path = find_one(path, FRIENDS_PATTERN, "friendship")
    raw = read_table(path, {"a": "int64", "b": "int64"}, names=("a", "b"), sep="\t")
    a, b = raw["a"].to_numpy(np.int64), raw["b"].to_numpy(np.int64)
    edges = pd.DataFrame({"user_a": np.minimum(a, b), "user_b": np.maximum(a, b)})
    edges = edges.loc[edges["user_a"] != edges["user_b"]].drop_duplicates()
    return edges.sort_values(["user_a", "user_b"], ignore_index=True)


__all__ = ["read_friends", "read_gowalla"]
