"""The query error's circle counts (standard.query_answers) from the locations a set's points are
at, rather than from every point.

Whether a trace answers a circle is an OR over its points and its consecutive pairs of points
(AdaTrace's Query.java:47-64: a point, or a segment's projection, within the radius; the corrected
reading: the first point, then each segment's closest point). Each of those tests reads only the two
points' coordinates, and a point's coordinates are its location's, so the tests are computed once
per used location and once per distinct consecutive pair of locations, each as a bit mask over the
circles, and a trace's answer is the OR of its masks. The arithmetic of every test is the per-point
loop's, term for term, so the counts equal a loop over every point and circle to the last digit
(tests/test_trips_scale.py checks them against one). The masks follow the space, not the trips: a city's cells and the moves
between them, however many trips cross them (at 1.7 million trips, 13 million points, a few
hundred thousand distinct moves).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

#: traces are dealt to the threads in this many chunks, each counting into its own row
CHUNKS = 64


@njit(cache=True)
def _point_in(px, py, cx, cy, limit, adatrace):
    if adatrace:                                   # Query.java:54, the squared distance as written there
        return (cx - px) * (cx - px) + (cy - py) * (cy - py) <= limit
    dx, dy = px - cx, py - cy
    return dx * dx + dy * dy <= limit


@njit(cache=True)
def _segment_in(ax, ay, bx, by, cx, cy, limit, adatrace):
    """AdaTrace's distanceToSegment test (:91-108, the projection only when it falls on the
    segment; the endpoints are tested as points) or the corrected reading's closest point, clamped
    (a zero-length segment reads its end point)."""
    if adatrace:
        dx, dy = bx - ax, by - ay
        length2 = dx * dx + dy * dy
        if length2 == 0:                           # such a trace answers every circle (``always``)
            return False
        u = ((cx - ax) * dx + (cy - ay) * dy) / length2
        if 0 <= u <= 1:
            qx, qy = ax + u * dx, ay + u * dy
            return (qx - cx) * (qx - cx) + (qy - cy) * (qy - cy) <= limit
        return False
    sx, sy = bx - ax, by - ay
    length2 = sx * sx + sy * sy
    dx, dy = bx - cx, by - cy
    if length2 > 0:
        s = ((cx - ax) * sx + (cy - ay) * sy) / length2
        s = min(max(s, 0.0), 1.0)
        dx, dy = ax + s * sx - cx, ay + s * sy - cy
    return dx * dx + dy * dy <= limit


@njit(parallel=True, cache=True)
def point_masks(px, py, cx, cy, limit, adatrace):
    """(points, words): bit q of a point's mask is set when the point lies within the circle q."""
    words = (cx.size + 63) // 64
    out = np.zeros((px.size, words), np.uint64)
    for i in prange(px.size):
        for q in range(cx.size):
            if _point_in(px[i], py[i], cx[q], cy[q], limit, adatrace):
                out[i, q >> 6] |= np.uint64(1) << np.uint64(q & 63)
    return out


@njit(parallel=True, cache=True)
def segment_masks(ax, ay, bx, by, cx, cy, limit, adatrace):
    """(segments, words): the same for the segment from (ax, ay) to (bx, by)."""
    words = (cx.size + 63) // 64
    out = np.zeros((ax.size, words), np.uint64)
    for i in prange(ax.size):
        for q in range(cx.size):
            if _segment_in(ax[i], ay[i], bx[i], by[i], cx[q], cy[q], limit, adatrace):
                out[i, q >> 6] |= np.uint64(1) << np.uint64(q & 63)
    return out


@njit(parallel=True, cache=True)
def count(offsets, point, pmask, pair, smask, always, n_circles, adatrace):
    """Per circle, the traces whose OR of masks holds it: every point's (``point``: its row of
    ``pmask``; AdaTrace) or the first point's (corrected), and every consecutive pair's (``pair[i]``:
    the row of ``smask`` for points i, i + 1). AdaTrace: a trace of one point answers nothing, one
    with ``always`` every circle."""
    n = offsets.size - 1
    words = pmask.shape[1]
    partial = np.zeros((CHUNKS, n_circles), np.int64)
    for c in prange(CHUNKS):
        m = np.zeros(words, np.uint64)
        for k in range(c * n // CHUNKS, (c + 1) * n // CHUNKS):
            a, b = offsets[k], offsets[k + 1]
            if adatrace and b - a < 2:
                continue
            if adatrace and always[k]:
                for q in range(n_circles):
                    partial[c, q] += 1
                continue
            for w in range(words):
                m[w] = pmask[point[a], w]
            for i in range(a, b - 1):
                for w in range(words):
                    m[w] |= smask[pair[i], w]
                if adatrace:
                    for w in range(words):
                        m[w] |= pmask[point[i + 1], w]
            for q in range(n_circles):
                partial[c, q] += (m[q >> 6] >> np.uint64(q & 63)) & np.uint64(1)
    return partial.sum(axis=0)


def answers(loc: np.ndarray, lx: np.ndarray, ly: np.ndarray, offsets: np.ndarray, always: np.ndarray,
            cx: np.ndarray, cy: np.ndarray, limit: float, adatrace: bool) -> np.ndarray:
    """The number of traces answering each circle (module docstring): ``loc`` every point's location,
    (``lx``, ``ly``) the locations' coordinates, ``limit`` the squared radius's threshold as the
    per-point loop compares it, ``always`` AdaTrace's traces with a repeated point."""
    import pandas as pd

    loc = np.asarray(loc, np.int64)
    used = np.flatnonzero(np.bincount(loc, minlength=lx.size))
    row = np.zeros(lx.size, np.int64)
    row[used] = np.arange(used.size)
    pmask = point_masks(lx[used], ly[used], cx, cy, limit, adatrace)
    # each consecutive pair of points as one number (pairs across two traces are never read)
    code = loc[:-1] * lx.size + loc[1:] if loc.size > 1 else np.zeros(0, np.int64)
    pair, uniq = pd.factorize(code, sort=False)
    first, second = uniq // lx.size, uniq % lx.size
    smask = segment_masks(lx[first], ly[first], lx[second], ly[second], cx, cy, limit, adatrace)
    return count(offsets, row[loc], pmask, pair.astype(np.int64), smask, always, cx.size, adatrace)
