"""How the population and transition metrics read deleted and generalized events (paper 003 §3.4,
the obfuscations of the contest; TraceSet's location-set table).

* A **deleted** event (``loc = DELETED``) says nothing about where the user was: it is skipped,
  as if the instant had no event (so a transition into or out of it is skipped too).
* A **generalized** event (``loc`` a location set) counts ``1 / |set|`` at each region of its set,
  every region equally likely, as the contest's utility score reads it (the mean over the set);
  a transition between two events counts ``1 / (|A| |B|)`` for each pair of their regions.

An exact event counts 1 at its location, so on exact sets every metric is unchanged.
"""

from __future__ import annotations

import numpy as np

from ..data.traces import DELETED, TraceSet, ranges, generalized_code


def spread(traces: TraceSet, events: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(position in ``events``, location, weight) of every location an event stands for.

    ``events`` : int ndarray of event indices (default: all events). Exact events give one entry of
    weight 1, a generalized one an entry of weight 1 / |set| per member (in the set's order),
    a deleted one none. Entries are grouped by position, in order.
    """
    events = np.arange(traces.n_events) if events is None else np.asarray(events, np.int64)
    loc = traces.loc[events].astype(np.int64)
    sizes = (loc >= 0).astype(np.int64)
    gen = loc < DELETED
    if gen.any():
        code = generalized_code(loc[gen])
        sizes[gen] = traces.locsets.sizes[code]
    position = np.repeat(np.arange(events.size), sizes)
    out_loc = np.repeat(loc, sizes)
    weight = np.repeat(1.0 / np.maximum(sizes, 1), sizes)
    if gen.any():
        out_loc[np.repeat(gen, sizes)] = traces.locsets.members[ranges(traces.locsets.offsets[code], sizes[gen])]
    return position, out_loc, weight


def spread_pairs(traces: TraceSet, first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(location of ``first``, location of ``second``, weight) over every pair of the locations
    that events ``first[k]`` and ``second[k]`` stand for, weight the product of theirs; pairs
    with a deleted event give nothing."""
    pa, la, wa = spread(traces, first)
    pb, lb, wb = spread(traces, second)
    nb = np.bincount(pb, minlength=len(second))
    start = np.r_[0, np.cumsum(nb)[:-1]]
    repeat = nb[pa]
    take = ranges(start[pa], repeat)
    return np.repeat(la, repeat), lb[take], np.repeat(wa, repeat) * wb[take]
