"""The public minimum of cells a trip holds (``TraceSet.min_cells``: 2 for trips, which must leave
their first cell, data/trips.py), for the trip methods whose states are cells of several locations
(PrivTrace, AdaTrace, LDPTrace).

Their walks run over states as the model says; what the rule conditions is the locations drawn
for them. A walk of fewer locations than the minimum (a walk of one state, or of states that share
a nearest location) gets another location of its last state, uniformly among the others (the
authors of LDPTrace give a one-cell trajectory two points of its cell, their trajectory.py), and,
where that state holds a single location, one of a state it touches, uniformly; when those random
tries find none (every state around stands for the same location, as small cells at a public
domain's edge may), one of the nearest state that has another (breadth first over the touching
states), and where no such state is reachable, any other location of the space. Choice: the
state-level walk is left alone, so that the model's length distribution is not bent towards long
walks (dropping short walks and drawing again would favour every long one); a real trip inside
one coarse state also crosses several of the space's cells, which is what the added location is.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: the most locations tried for one walk (a state without any other location nearby gives up)
TRIES = 64


@njit(cache=True)
def location_of(loc_indptr, loc_indices, state):
    """A location of ``state`` (CSR ``loc_indptr``, ``loc_indices``), uniformly."""
    lo, hi = loc_indptr[state], loc_indptr[state + 1]
    return loc_indices[lo + min(int(np.random.random() * (hi - lo)), hi - lo - 1)]


@njit(cache=True)
def walk_locations(out, used, cells, loc_indptr, loc_indices, min_cells, indptr, indices):
    """Append the walk over ``cells`` to ``out`` from ``used``: each cell a location drawn uniformly
    inside it, consecutive repeats merged (two cells can share a nearest location), then completed
    to ``min_cells`` locations (:func:`complete`). Returns (used, the walk's number of locations)."""
    count = 0
    for i in range(cells.size):
        loc = location_of(loc_indptr, loc_indices, cells[i])
        if count == 0 or out[used - 1] != loc:
            out[used] = loc
            used += 1
            count += 1
    if cells.size:
        used, count = complete(out, used, count, cells[cells.size - 1], min_cells, loc_indptr, loc_indices,
                               indptr, indices)
    return used, count


@njit(cache=True)
def complete(out, used, count, state, min_cells, loc_indptr, loc_indices, indptr, indices):
    """Append locations to the walk that ends at ``out[used - 1]`` (``count`` locations so far, its
    last state ``state``) until it holds ``min_cells`` (module docstring); ``indptr``, ``indices``:
    each state's touching states (CSR). Returns (used, count)."""
    tries = 0
    while 0 < count < min_cells and tries < TRIES:
        tries += 1
        lo, hi = loc_indptr[state], loc_indptr[state + 1]
        if hi - lo > 1:
            loc = loc_indices[lo + min(int(np.random.random() * (hi - lo - 1)), hi - lo - 2)]
            if loc == out[used - 1]:
                loc = loc_indices[hi - 1]
        elif indptr[state + 1] > indptr[state]:
            d = indptr[state + 1] - indptr[state]
            state = indices[indptr[state] + min(int(np.random.random() * d), d - 1)]
            loc = location_of(loc_indptr, loc_indices, state)
        else:
            break
        if loc != out[used - 1]:
            out[used] = loc
            used += 1
            count += 1
    while 0 < count < min_cells:
        loc = nearest_other(out[used - 1], state, loc_indptr, loc_indices, indptr, indices)
        if loc < 0:
            break
        out[used] = loc
        used += 1
        count += 1
    return used, count


@njit(cache=True)
def nearest_other(last, state, loc_indptr, loc_indices, indptr, indices):
    """A location other than ``last`` of the state nearest to ``state`` in the touching graph that
    holds one (breadth first, uniformly among its other locations), else of any state; -1 when the
    space has no other location. For the walks the random tries of :func:`complete` leave short: a
    state whose touching states all stand for the same location (small cells at a domain's edge)."""
    n = loc_indptr.size - 1
    seen = np.zeros(n, np.bool_)
    queue = np.empty(n, np.int64)
    queue[0], seen[state], head, tail = state, True, 0, 1
    while head < tail:
        s = queue[head]
        head += 1
        loc = _other(last, s, loc_indptr, loc_indices)
        if loc >= 0:
            return loc
        for e in range(indptr[s], indptr[s + 1]) if indptr.size > s + 1 else range(0):
            t = indices[e]
            if not seen[t]:
                seen[t] = True
                queue[tail] = t
                tail += 1
    others = 0
    for i in range(loc_indices.size):
        others += loc_indices[i] != last
    if others == 0:
        return -1
    k = min(int(np.random.random() * others), others - 1)
    for i in range(loc_indices.size):
        if loc_indices[i] != last:
            if k == 0:
                return loc_indices[i]
            k -= 1
    return -1


@njit(cache=True)
def _other(last, state, loc_indptr, loc_indices):
    """A location of ``state`` other than ``last``, uniformly; -1 when it has none."""
    lo, hi = loc_indptr[state], loc_indptr[state + 1]
    others = 0
    for i in range(lo, hi):
        others += loc_indices[i] != last
    if others == 0:
        return -1
    k = min(int(np.random.random() * others), others - 1)
    for i in range(lo, hi):
        if loc_indices[i] != last:
            if k == 0:
                return loc_indices[i]
            k -= 1
    return -1
