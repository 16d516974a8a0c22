"""Tiny hand-made TraceSets for tests."""

from datetime import date

import numpy as np
import pandas as pd

from locsynth import Grid, TimeAxis, TraceSet


def traceset(traces, rows=1, cols=3, slot="1h", synthetic=None, instants_per_day=24):
    """``traces``: list of lists of (instant, location). ``synthetic``: list of (source, trace_no)."""
    axis = TimeAxis.build(date(2024, 1, 1), "UTC", "1h", slot)
    grid = Grid(rows, cols, (0.0, 0.01 * rows, 0.0, 0.01 * cols))
    user = [i for i, tr in enumerate(traces) for _ in tr]
    t = [e[0] for tr in traces for e in tr]
    loc = [e[1] for tr in traces for e in tr]
    users = pd.DataFrame({"user_id": np.arange(len(traces))})
    if synthetic is not None:
        users["user_id"] = [s for s, _ in synthetic]
        users["source"] = np.array([s for s, _ in synthetic], np.int32)
        users["trace_no"] = np.array([k for _, k in synthetic], np.int32)
    return TraceSet.from_events(user, t, loc, users, grid, axis)


def trip_set(paths, hours, cols=4):
    """Trips on a 1 x ``cols`` grid: one trace per path of cells, on instants 0, 1, ..., with its
    hour in the user table (as data/trips.py makes them; -1: a set without hours, as NGRAM's)."""
    from dataclasses import replace

    ts = traceset([list(enumerate(p)) for p in paths], cols=cols)
    return replace(ts, users=ts.users.assign(hour=np.asarray(hours, np.int8)))
