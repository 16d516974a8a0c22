"""The two trajectory distances and an exact nearest-trajectory search through a tree with lower
bounds (issue 53; the distances are issue 37's, trip_geometry.py says what they read).

Both distances couple the two starts and the two ends, and under the discrete Frechet distance F
every point of one trajectory has a partner within F in the other, so each side of one trajectory's
bounding box lies within F of the same side of the other's. A trajectory's eight features, its
start, its end and its box, thus give the lower bound

    F(a, b) >= max(|s_a - s_b|, |e_a - e_b|, max over the box's four sides of |side_a - side_b|),

and DTW (the same couplings summed, at least their largest term) is at least the same, and at
least |s_a - s_b| + |e_a - e_b| when either trajectory has two points or more (the coupling holds
both end pairs as two terms).

The index is a k-d tree over the pool's eight features (median splits on the feature of widest
spread, a leaf of ``leaf`` trajectories), each node holding its trajectories' range of every
feature, which bounds the distance of a target to every trajectory under it in the same way. The
search is branch and bound, depth first, nearer child first: a node or a pair is skipped when its
bound exceeds the best distance so far, and a pair's recursion is abandoned as soon as a whole row
of it does. Nodes and pairs at a bound equal to the best are still visited, so the result is brute
force's: the smallest distance and, of the rows at it, the smallest. Each target is searched on
its own, the targets on every core.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

#: start x, y, end x, y, box smallest x, y, largest x, y
N_FEATURES = 8
#: the tree's depth is at most log2(pool / leaf) + 1; a stack of this many nodes holds any pool
STACK = 128


@njit(cache=True)
def coupled(ax, ay, bx, by, frechet, bound, row):
    """The discrete Frechet distance (``frechet``: the largest coupled distance) or DTW (the sum),
    row by row over the coupling matrix, in ``row`` (at least as long as b); inf when it exceeds
    ``bound``. A cell whose value would exceed the bound is inf (no coupling through it can come
    back under it, as a coupling's value only grows along it), found without its point distance
    where the cell before it, or the point offsets alone, already exceed the bound; and the whole
    is inf as soon as every cell of a row is (every coupling crosses every row)."""
    n, m = ax.size, bx.size
    for i in range(n):
        prev_diag = 0.0
        low = np.inf
        for j in range(m):
            if i == 0 and j == 0:
                before = 0.0
            elif i == 0:
                before = row[j - 1]
            elif j == 0:
                before = row[0]
            else:
                before = min(row[j], row[j - 1], prev_diag)
            value = np.inf
            if before <= bound:
                dx, dy = abs(ax[i] - bx[j]), abs(ay[i] - by[j])
                if frechet:
                    # squares decide, with a margin far beyond their rounding, where the point distance
                    # is surely past the bound or surely under what came before (the value is then
                    # ``before`` itself); only the rest needs the distance
                    square = dx * dx + dy * dy
                    if square > bound * bound * (1 + 1e-12):
                        pass
                    elif square < before * before * (1 - 1e-12):
                        value = before
                    else:
                        value = max(before, np.hypot(dx, dy))
                elif before + max(dx, dy) <= bound:        # an offset is at most the point distance
                    value = before + np.hypot(dx, dy)
                if value > bound:
                    value = np.inf
            prev_diag, row[j] = row[j], value
            low = min(low, value)
        if low > bound:
            return np.inf
    return row[m - 1]


@njit(cache=True)
def features(x, y, offsets):
    """(n, 8): every trajectory's start, end and bounding box (module docstring)."""
    n = offsets.size - 1
    out = np.empty((n, N_FEATURES))
    for i in range(n):
        a, b = offsets[i], offsets[i + 1]
        out[i, 0], out[i, 1], out[i, 2], out[i, 3] = x[a], y[a], x[b - 1], y[b - 1]
        out[i, 4], out[i, 5], out[i, 6], out[i, 7] = x[a], y[a], x[a], y[a]
        for k in range(a + 1, b):
            out[i, 4], out[i, 5] = min(out[i, 4], x[k]), min(out[i, 5], y[k])
            out[i, 6], out[i, 7] = max(out[i, 6], x[k]), max(out[i, 7], y[k])
    return out


@njit(cache=True)
def pair_bound(fa, i, fb, j, dtw_sum):
    """The lower bound of the module docstring between trajectory i (features ``fa``) and j
    (``fb``); ``dtw_sum``: DTW with at least one of them of two points or more."""
    start = np.hypot(fa[i, 0] - fb[j, 0], fa[i, 1] - fb[j, 1])
    end = np.hypot(fa[i, 2] - fb[j, 2], fa[i, 3] - fb[j, 3])
    bound = max(start, end)
    for c in range(4, N_FEATURES):
        bound = max(bound, abs(fa[i, c] - fb[j, c]))
    if dtw_sum:
        bound = max(bound, start + end)
    return bound


@njit(cache=True)
def _gap(v, lo, hi):
    return max(lo - v, v - hi, 0.0)


@njit(cache=True)
def node_bound(f, t, lo, hi):
    """The same bound from trajectory t to every trajectory whose features lie in [lo, hi]."""
    bound = max(np.hypot(_gap(f[t, 0], lo[0], hi[0]), _gap(f[t, 1], lo[1], hi[1])),
                np.hypot(_gap(f[t, 2], lo[2], hi[2]), _gap(f[t, 3], lo[3], hi[3])))
    for c in range(4, N_FEATURES):
        bound = max(bound, _gap(f[t, c], lo[c], hi[c]))
    return bound


@njit(cache=True)
def build(f, leaf):
    """The k-d tree over the features ``f`` (n, 8): (order, lo, hi, first, last, children). ``order``
    lists the rows leaf by leaf; node v holds order[first[v]:last[v]], its features' ranges lo[v],
    hi[v], and its two children (children[v, 0] < 0 for a leaf). Node 0 is the root."""
    n = f.shape[0]
    leaf = max(int(leaf), 1)
    size = 2 * (2 * n // leaf + 2)
    lo, hi = np.empty((size, N_FEATURES)), np.empty((size, N_FEATURES))
    first, last = np.empty(size, np.int64), np.empty(size, np.int64)
    children = np.full((size, 2), -1, np.int64)
    order = np.arange(n)
    stack = np.empty(STACK, np.int64)
    first[0], last[0], stack[0], top, count = 0, n, 0, 1, 1
    while top:
        top -= 1
        v = stack[top]
        a, b = first[v], last[v]
        for c in range(N_FEATURES):
            lo[v, c], hi[v, c] = np.inf, -np.inf
        for k in range(a, b):
            for c in range(N_FEATURES):
                lo[v, c], hi[v, c] = min(lo[v, c], f[order[k], c]), max(hi[v, c], f[order[k], c])
        if b - a <= leaf:
            continue
        dim, spread = 0, -1.0
        for c in range(N_FEATURES):
            if hi[v, c] - lo[v, c] > spread:
                dim, spread = c, hi[v, c] - lo[v, c]
        segment = order[a:b]
        order[a:b] = segment[np.argsort(f[segment, dim], kind="mergesort")]
        middle = (a + b) // 2
        first[count], last[count], first[count + 1], last[count + 1] = a, middle, middle, b
        children[v, 0], children[v, 1] = count, count + 1
        stack[top], stack[top + 1] = count, count + 1
        top, count = top + 2, count + 2
    return order, lo[:count], hi[:count], first[:count], last[:count], children[:count]


@njit(cache=True, parallel=True)
def search(tx, ty, toff, tf, px, py, poff, pf, tree, kind, exclude, within, known, smallest):
    """(distance, row) of every target's nearest pool trajectory (module docstring): kind 0 the
    discrete Frechet distance, 1 DTW; ``exclude[t]`` a pool row target t may not match (or -1);
    only rows at ``within[t]`` or nearer (inf and -1 where there is none); ``known[t]`` a pool row
    already known to be at distance 0 (the same points), or -1. ``smallest``: of rows at that
    distance the smallest, as brute force gives it (every node and pair at a bound equal to the best
    visited); else the first the search meets (one whose bound equals the best so far is skipped:
    the distance is the same, and where many pool trajectories tie the search is shorter)."""
    order, lo, hi, first, last, children = tree
    n = toff.size - 1
    best, row = np.where(known >= 0, 0.0, within), known.copy()
    longest = 1
    for j in range(poff.size - 1):
        longest = max(longest, poff[j + 1] - poff[j])
    for t in prange(n):
        buffer = np.empty(longest)
        nodes, bounds = np.empty(STACK, np.int64), np.empty(STACK)
        ta, tb = toff[t], toff[t + 1]
        b, r = best[t], row[t]
        cut = b if smallest or r < 0 else np.nextafter(b, -np.inf)   # what may still be taken
        nodes[0], bounds[0], top = 0, node_bound(tf, t, lo[0], hi[0]), 1
        while top:
            top -= 1
            v = nodes[top]
            if bounds[top] > cut:
                continue
            if children[v, 0] < 0:
                for k in range(first[v], last[v]):
                    j = order[k]
                    if j == exclude[t]:
                        continue
                    pa, pb = poff[j], poff[j + 1]
                    if pair_bound(tf, t, pf, j, kind == 1 and (tb - ta > 1 or pb - pa > 1)) > cut:
                        continue
                    d = coupled(tx[ta:tb], ty[ta:tb], px[pa:pb], py[pa:pb], kind == 0, cut, buffer)
                    if d < b or (d == b and (r < 0 or j < r)):
                        b, r = d, j
                        cut = b if smallest else np.nextafter(b, -np.inf)
                continue
            near, far = children[v, 0], children[v, 1]
            b_near, b_far = node_bound(tf, t, lo[near], hi[near]), node_bound(tf, t, lo[far], hi[far])
            if b_far < b_near:
                near, far, b_near, b_far = far, near, b_far, b_near
            nodes[top], bounds[top] = far, b_far
            nodes[top + 1], bounds[top + 1] = near, b_near
            top += 2
        if r >= 0:
            best[t], row[t] = b, r
        else:
            best[t] = np.inf
    return best, row
