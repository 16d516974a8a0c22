"""Values as JSON can hold them: the one converter every writer of JSON uses (model.json, meta.json,
metrics.json, release.json)."""

from __future__ import annotations

import numpy as np


def jsonable(value):
    """``value`` with numpy scalars and arrays made Python numbers and lists, tuples made lists,
    dictionaries and lists converted item by item; anything else as it is."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def json_default(value):
    """``json.dumps(..., default=json_default)``: what :func:`jsonable` converts, and anything else JSON
    cannot hold as its text."""
    converted = jsonable(value)
    return converted if converted is not value else str(value)
