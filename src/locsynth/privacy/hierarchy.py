"""The tree Privelet noises (Xiao, Wang and Gehrke, ICDE 2010; privelet.py): locations as leaves
under the nodes of a hierarchy, built from category levels, a point quad-tree over POIs or a
grid's quad-tree. A Space makes its own (``Space.hierarchy``); the mechanism needs only the tree."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.errors import InputError


@dataclass(frozen=True, eq=False)
class Hierarchy:
    """A tree whose leaves are the locations (Privelet's hierarchy for nominal data).

    Nodes ``0 .. n_leaves - 1`` are the locations, the internal nodes follow, the root first.

    Attributes
    ----------
    parent : ndarray of shape (n_nodes,), int64
        Parent of each node; -1 for the root.
    n_leaves : int
    depth : ndarray of shape (n_nodes,), int64
        Edges from the root (0 for the root).
    """

    parent: np.ndarray
    n_leaves: int
    depth: np.ndarray = field(init=False)

    def __post_init__(self):
        parent = np.asarray(self.parent, np.int64)
        object.__setattr__(self, "parent", parent)
        roots = np.flatnonzero(parent < 0)
        if roots.size != 1 or roots[0] != self.n_leaves:
            raise InputError("a hierarchy needs exactly one root, numbered right after the leaves")
        depth = np.full(parent.size, -1, np.int64)
        depth[roots[0]] = 0
        for _ in range(parent.size):            # parents before children is not assumed
            todo = depth < 0
            if not todo.any():
                break
            ready = todo & (depth[np.maximum(parent, 0)] >= 0)
            if not ready.any():
                raise InputError("the hierarchy has a cycle or a node cut off from the root")
            depth[ready] = depth[parent[ready]] + 1
        object.__setattr__(self, "depth", depth)
        if (self.fanout[self.n_leaves:] == 0).any():
            raise InputError("every internal node of a hierarchy needs a child")

    @property
    def n_nodes(self) -> int:
        return int(self.parent.size)

    @property
    def root(self) -> int:
        return self.n_leaves

    @property
    def fanout(self) -> np.ndarray:
        """Number of children of every node (0 for a leaf)."""
        return np.bincount(self.parent[self.parent >= 0], minlength=self.n_nodes)

    @classmethod
    def flat(cls, n: int) -> "Hierarchy":
        """Every location a child of the root."""
        return cls(np.concatenate([np.full(n, n), [-1]]), n)

    @classmethod
    def from_levels(cls, *levels) -> "Hierarchy":
        """root > levels[0] > levels[1] > ... > location, each level a label per location, coarsest
        first (e.g. category, then sub-category); a label names a node within its parent only."""
        n = len(levels[0]) if levels else 0
        parent = [-1]                          # the root, renumbered to n below
        above = np.zeros(n, np.int64)           # each location's node at the level above (0: root)
        for labels in levels:
            labels = np.asarray(labels, dtype=object).astype(str)
            if labels.size != n:
                raise InputError("every level of a hierarchy needs one label per location")
            keys = pd.MultiIndex.from_arrays([above, labels])
            codes, uniques = pd.factorize(keys)
            first = len(parent)
            parent.extend(int(p) for p in uniques.get_level_values(0))
            above = first + codes.astype(np.int64)
        internal = np.asarray(parent, np.int64)
        internal = np.where(internal >= 0, internal + n, -1)
        return cls(np.concatenate([above + n, internal]), n)

    @classmethod
    def points(cls, lat, lon) -> "Hierarchy":
        """A point quad-tree over POIs (leaf i = POI i): every set of two or more POIs splits at its
        median latitude and median longitude into up to four children (empty ones dropped, a
        single POI a leaf), down to single POIs. Medians are taken by rank with ties in index
        order, so both latitude halves are non-empty, every internal node has 2 to 4 children and
        coincident points split too. Nodes are numbered as in :meth:`quadtree`, level by level."""
        lat, lon = np.asarray(lat, np.float64).ravel(), np.asarray(lon, np.float64).ravel()
        if lat.shape != lon.shape:
            raise InputError("a point hierarchy needs as many latitudes as longitudes")
        n = lat.size
        if n == 0:
            raise InputError("a point hierarchy needs at least one point")
        parent = [-1]
        leaf_parent = np.zeros(n, np.int64)
        member = np.arange(n) if n > 1 else np.zeros(0, np.int64)
        node = np.zeros(member.size, np.int64)
        while member.size:
            size = np.bincount(node)[node]
            half = size // 2
            north = _rank_in_group(node, lat[member], member) >= half
            east = _rank_in_group(node, lon[member], member) >= half
            key = node * 4 + 2 * north + east
            keys, child, count = np.unique(key, return_inverse=True, return_counts=True)
            alone = count[child] == 1
            leaf_parent[member[alone]] = node[alone]
            split = count > 1
            first = len(parent)
            parent.extend((keys[split] // 4).tolist())
            new_id = np.full(keys.size, -1, np.int64)
            new_id[split] = first + np.arange(int(split.sum()))
            member, node = member[~alone], new_id[child[~alone]]
        internal = np.asarray(parent, np.int64)
        return cls(np.concatenate([leaf_parent + n, np.where(internal >= 0, internal + n, -1)]), n)

    @classmethod
    def quadtree(cls, rows: int, cols: int) -> "Hierarchy":
        """The quad-tree of a rows x cols grid (cell id = row * cols + col): each block splits into
        halves along every side longer than one cell, down to single cells."""
        parent = [-1]
        leaf_parent = np.full(rows * cols, -1, np.int64)
        stack = [(0, 0, rows, 0, cols)]          # (node, r0, r1, c0, c1)
        while stack:
            node, r0, r1, c0, c1 = stack.pop()
            rs = [(r0, (r0 + r1) // 2), ((r0 + r1) // 2, r1)] if r1 - r0 > 1 else [(r0, r1)]
            cs = [(c0, (c0 + c1) // 2), ((c0 + c1) // 2, c1)] if c1 - c0 > 1 else [(c0, c1)]
            for a0, a1 in rs:
                for b0, b1 in cs:
                    if a1 - a0 == 1 and b1 - b0 == 1:
                        leaf_parent[a0 * cols + b0] = node
                    else:
                        parent.append(node)
                        stack.append((len(parent) - 1, a0, a1, b0, b1))
        n = rows * cols
        internal = np.asarray(parent, np.int64)
        return cls(np.concatenate([leaf_parent + n, np.where(internal >= 0, internal + n, -1)]), n)


def _rank_in_group(group: np.ndarray, value: np.ndarray, tie: np.ndarray) -> np.ndarray:
    """Rank of every element by ``value`` (ties by ``tie``) among the elements of its group."""
    order = np.lexsort((tie, value, group))
    sorted_group = group[order]
    rank = np.empty(group.size, np.int64)
    rank[order] = np.arange(group.size) - np.searchsorted(sorted_group, sorted_group, side="left")
    return rank
