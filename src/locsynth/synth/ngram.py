"""NGRAM: differentially private variable-length n-grams (Chen, Acs and Castelluccia, "Differentially
private sequential data publication via variable-length n-grams", CCS 2012), the baseline of
paper 004 §8.5, which runs it on the trips without their times.

A trace is a sequence over the alphabet I of locations, |I| = L; the end symbol & is L. The
steps, in the order the data flows:

1. Truncation (CCS 2012 §4): each sequence keeps its first l_max symbols and gets & appended.
   One sequence then holds at most l_max n-grams of any one length n (n >= 2: l + 2 - n <= l_max
   grams of "x_1 .. x_l &"; n = 1: its l symbols, the unigram & being left out, since no
   sequence is empty) -- the L1 sensitivity of the counts of each level of the tree.
2. Exploration tree (CCS 2012 §4, the sanitization algorithm): a node is an n-gram g, the root
   the empty gram; expanding g releases the histogram of counts of g.x for every x in I and &,
   plus Laplace(l_max / epsilon_g) noise (privacy/laplace.py, OpenDP). Levels are expanded in
   turn, up to grams of n_max - 1 symbols (so released grams have at most n_max).
3. Thresholding (CCS 2012 §4.3.3): a bin is released when its noisy count exceeds
   theta_g = (l_max / epsilon_g) ln(L / 2), which lets one of the L empty location bins pass on
   average (Pr[Lap(b) > b ln(L/2)] = 1 / L). The authors' code writes ln((L + 1) / 2), counting &
   (REFERENCE.md); the paper's form is the default here. The threshold applies to every node
   here, our reading of §4.3.3, which names no exception; the authors' code releases the
   histograms on the last level of a path without threshold (``threshold_leaves=False``: with
   hundreds of cells their noise then outweighs the counts, and synthetic trips end late -- 16.4
   cells on average against 7.6 real ones on 200 cabs at 500 m and epsilon = 1). The root's &
   bin is 0 and not released.
4. Adaptive privacy budget (CCS 2012 §4.3): the root spends epsilon / n_max. A released child
   u = g.x predicts how many more levels its path needs: under the Markov assumption its largest
   descendant after h levels counts about c(u) p_max^h, with p_max the largest probability of the
   released histogram of u's Markov parent (the longest proper suffix of u that was expanded),
   and expansion stops below theta:
   h_u = min(n_max - |u|, ceil(log_{p_max}(theta_g / c(u)))). Then
   epsilon_u = (epsilon - budget spent by u's ancestors) / h_u.
   Privacy (CCS 2012's privacy analysis): a sequence's n-grams that start at one position form one
   root-to-leaf path; along every path the budgets sum to at most epsilon, and a sequence has at
   most l_max start positions, each contributing 1 / l_max of the path's budget. The choice of
   epsilon_u depends only on released values (adaptive composition).
5. Consistency (CCS 2012 §4.3, enforcing consistency constraints, post-processing): in each
   histogram, negative released counts become 0 (choice: counts cannot be negative; the
   authors' code keeps them), unreleased bins are filled in proportion to the Markov parent's
   histogram -- or, when the Markov parent is the root, whose unigram histogram is a poor
   predictor, with an equal share of what the parent count leaves -- and the histogram is scaled
   to the parent's count, so that every node's children sum to its count.
6. Synthetic sequences (CCS 2012 §4, synthetic database construction; paper 004 §8.5: NGRAM
   "terminates whenever it samples a special terminal character"): a walk of the
   variable-length Markov chain the tree defines -- the next symbol from the histogram of the
   longest suffix of the sequence so far that was expanded, & ending the sequence, at most l_max
   symbols. The authors' code instead extends grams deterministically (c(g1 g2) / c(overlap)) and
   emits the longest first, subtracting their sub-grams (REFERENCE.md); sampling is its
   random counterpart and gives any number n of sequences. As in their reconstruction, which
   floors the counts first, a continuation counted below 1 never extends a walk: what step 5
   spreads evenly over every location (a fraction of a count each) would otherwise make a walk
   jump across the city (on the 200 cabs at epsilon 1: 90 % of steps within 1.5 km for real
   trips, a quarter of NGRAM's steps beyond 5 km; floored, the query error fell from 3.9 to 2.2,
   the diameter error from 0.19 to 0.10, the duration JSD of the timed trips from 0.28 to 0.17). The first symbol x is drawn in
   proportion to what that construction leaves at length one: c(x) - sum_y c(y x), the
   occurrences of x not preceded by another symbol (falling back to the unigram counts, then
   to uniform, when nothing is left).

The alphabet is every location of the training space (the whole grid, which is public), not
only the cells the trips visit as in the authors' runs (paper 004 Table 1's |L|): which cells are
visited is itself a fact about the data. A public domain (data/domain.py) is public knowledge of
where trips can be: the alphabet is then the locations it allows, so that no walk can leave it and
the thresholds (ln(L / 2)) count only those.

The paper's NGRAM releases no time; here the trip methods' time model (synth/trip_times.py,
``time_share`` of epsilon) gives each synthetic trip a start and its steps durations. With
``time_share=0`` its events sit on instants 0, 1, ... of the training time axis and its ``hour``
is -1 (metrics/trips.py then compares it with the real trips of every hour).

Size: by default as many synthetic sequences as a DP count of the training sequences, spending
``size_share`` of epsilon (privacy/count.py); the tree gets the rest. CCS 2012's reconstruction
takes its number of sequences from the noisy tree; sampling walks needs a number, and the exact
one is what one sequence added or removed changes.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, replace

import numpy as np
from numba import njit

from ..core.errors import InputError
from ..privacy.laplace import laplace
from ..privacy.ledger import Ledger
from ..privacy.noise import noise_mass, share
from ..core.validation import check_epsilon
from ..data.chunks import SparseCounts, Whole, chunks
from ..data.traces import TraceSet
from .base import FOOTPRINT_SHARE, SIZE_SHARE, TIME_SHARE, Synthesizer, Tags
from ..core.validation import check_count
from ..core.validation import check_flag, check_seed, check_share

#: OpenDP's privacy map of a histogram's measurement gives back epsilon_g up to float rounding
_SLACK = 1e-9


# -- 1. truncation -----------------------------------------------------------------------------

@dataclass(frozen=True)
class GramIndex:
    """Sequences as a padded matrix, ready for counting n-grams at every start position.

    Attributes
    ----------
    symbols : ndarray of shape (n_sequences, width), int32
        Row s: the sequence's symbols, & (= n_symbols) at position ``lengths[s]``, -1 after.
    lengths : ndarray of shape (n_sequences,), int64
        Symbols per sequence after truncation.
    n_symbols : int
        |I|, the locations; & is ``n_symbols``.
    l_max : int or None
        The truncation applied (None: none, which only a test's mutant does).
    """

    symbols: np.ndarray
    lengths: np.ndarray
    n_symbols: int
    l_max: int | None

    @classmethod
    def from_traces(cls, traces: TraceSet, l_max: int | None) -> "GramIndex":
        """Each trace's locations in time order, the first ``l_max`` of them (all for None)."""
        return cls.from_flat(traces.loc, traces.counts(), traces.space.n_locations, l_max)

    @classmethod
    def from_sequences(cls, sequences, n_symbols: int, l_max: int | None) -> "GramIndex":
        """From a list of sequences of symbols in 0 .. n_symbols - 1."""
        seqs = [np.asarray(s, np.int64).ravel() for s in sequences]
        flat = np.concatenate(seqs) if seqs else np.zeros(0, np.int64)
        return cls.from_flat(flat, np.array([s.size for s in seqs], np.int64), n_symbols, l_max)

    @classmethod
    def from_flat(cls, flat: np.ndarray, lengths: np.ndarray, n_symbols: int, l_max: int | None) -> "GramIndex":
        flat, lengths = np.asarray(flat, np.int64), np.asarray(lengths, np.int64)
        if flat.size and (flat.min() < 0 or flat.max() >= n_symbols):
            raise InputError(f"symbols must be in 0..{n_symbols - 1}")
        kept = lengths if l_max is None else np.minimum(lengths, l_max)
        width = int(kept.max(initial=0)) + 1
        start = np.cumsum(lengths) - lengths
        seq = np.repeat(np.arange(lengths.size), lengths)
        pos = np.arange(flat.size) - start[seq]
        keep = pos < kept[seq]
        symbols = np.full((lengths.size, width), -1, np.int32)
        symbols[seq[keep], pos[keep]] = flat[keep]
        symbols[np.arange(lengths.size), kept] = n_symbols
        return cls(symbols, kept, int(n_symbols), l_max)


def gram_counts(index: GramIndex, n: int) -> dict[tuple[int, ...], int]:
    """Every n-gram of the truncated sequences (& included, the unigram & left out) and its count:
    the reference the tree's counts are checked against (small inputs)."""
    out: dict[tuple[int, ...], int] = {}
    for row, length in zip(index.symbols, index.lengths):
        seq = row[:length + 1].tolist()
        for j in range(len(seq) - n + 1):
            gram = tuple(seq[j:j + n])
            if n == 1 and gram[0] == index.n_symbols:
                continue
            out[gram] = out.get(gram, 0) + 1
    return out


# -- 2.-5. the exploration tree ----------------------------------------------------------------

@dataclass(frozen=True)
class ExplorationTree:
    """The sanitized tree: one row per expanded node (level by level, the roots first).

    ``replicas`` independent trees grown from the same data share these arrays (the DP audit
    draws many releases at once); node r < replicas is the root of tree r.

    Attributes
    ----------
    parent, symbol : ndarray of shape (n_nodes,), int64
        The node's parent and the last symbol of its gram (-1 for a root).
    level : ndarray of shape (n_nodes,), int64
        Length of the node's gram.
    replica : ndarray of shape (n_nodes,), int64
    epsilon, spent : ndarray of shape (n_nodes,)
        epsilon_g of the node's histogram and the sum over its ancestors'.
    levels_left : ndarray of shape (n_nodes,), int64
        h_g of CCS 2012's adaptive allocation (n_max for a root).
    noisy : ndarray of shape (n_nodes, L + 1)
        The histogram of counts of g.x plus Laplace noise, every bin (what is DP; the rest is
        post-processing of it).
    released : ndarray of shape (n_nodes, L + 1), bool
    counts : ndarray of shape (n_nodes, L + 1)
        The consistent counts (step 5); a non-root node's row sums to its count in its parent.
    child : ndarray of shape (n_nodes, L + 1), int64
        The node of g.x when it was expanded, else -1.
    markov : ndarray of shape (n_nodes,), int64
        The Markov parent: the longest proper suffix of g that was expanded (-1 for a root).
    next_node : ndarray of shape (n_nodes, L + 1), int64
        The longest expanded suffix of g.x: the context after emitting x (the walks' transition).
    """

    parent: np.ndarray
    symbol: np.ndarray
    level: np.ndarray
    replica: np.ndarray
    epsilon: np.ndarray
    spent: np.ndarray
    levels_left: np.ndarray
    noisy: np.ndarray
    released: np.ndarray
    counts: np.ndarray
    child: np.ndarray
    markov: np.ndarray
    next_node: np.ndarray
    replicas: int
    opendp_epsilon: float

    @property
    def n_nodes(self) -> int:
        return int(self.parent.size)

    def grams(self) -> list[tuple[int, ...]]:
        """The gram of every node (the empty tuple for a root)."""
        out: list[tuple[int, ...]] = []
        for v in range(self.n_nodes):
            p = int(self.parent[v])
            out.append(() if p < 0 else out[p] + (int(self.symbol[v]),))
        return out

    def path_epsilon(self) -> np.ndarray:
        """Budget of every root-to-node path including the node's histogram: at most epsilon."""
        return self.spent + self.epsilon


def threshold(epsilon_g: np.ndarray, l_max: int, n_symbols: int) -> np.ndarray:
    """theta_g = (l_max / epsilon_g) ln(L / 2) (CCS 2012 §4.3.3), at least 0."""
    return np.maximum(l_max / np.asarray(epsilon_g, np.float64) * math.log(n_symbols / 2), 0.0)


def levels_needed(theta_g: np.ndarray, count: np.ndarray, p_max: np.ndarray, remaining: np.ndarray) -> np.ndarray:
    """h_u = min(remaining, ceil(log_{p_max}(theta_g / c(u)))), at least 1 (CCS 2012 §4.3, adaptive
    privacy budget allocation); ``remaining`` where the logarithm is undefined (p_max of 0 or 1,
    theta of 0)."""
    theta_g, count = np.asarray(theta_g, np.float64), np.asarray(count, np.float64)
    p_max, remaining = np.asarray(p_max, np.float64), np.asarray(remaining, np.int64)
    ok = (p_max > 0) & (p_max < 1) & (theta_g > 0) & (count > 0)
    ratio = np.where(ok, theta_g, 0.5) / np.where(ok, count, 1.0)          # theta / c(u), < 1 once released
    h = np.ceil(np.log(ratio) / np.log(np.where(ok, p_max, 0.5)))
    h = np.where(ok, np.minimum(h, remaining), remaining)
    return np.maximum(h, 1).astype(np.int64)


def enforce_consistency(noisy: np.ndarray, released: np.ndarray, parent_count: np.ndarray, markov: np.ndarray,
                        markov_is_root: np.ndarray) -> np.ndarray:
    """Consistent counts of histograms (rows), CCS 2012 §4.3 (module docstring, step 5).

    Parameters
    ----------
    noisy, released : ndarray of shape (m, L + 1)
    parent_count : ndarray of shape (m,)
        The node's consistent count in its parent's histogram.
    markov : ndarray of shape (m, L + 1)
        Consistent counts of each node's Markov parent.
    markov_is_root : ndarray of shape (m,), bool
    """
    y = np.where(released, np.maximum(noisy, 0.0), 0.0)
    released_sum = y.sum(axis=1)
    markov_released = np.where(released, markov, 0.0).sum(axis=1)
    scale = np.divide(released_sum, markov_released, out=np.zeros_like(released_sum), where=markov_released > 0)
    by_markov = markov * scale[:, None]
    unreleased = (~released).sum(axis=1)
    share = np.divide(np.maximum(parent_count - released_sum, 0.0), unreleased, out=np.zeros_like(released_sum),
                      where=unreleased > 0)
    fill = np.where(markov_is_root[:, None], share[:, None], by_markov)
    h = np.where(released, y, fill)
    total = h.sum(axis=1)
    # nothing left at all: the Markov parent's shape (the Markov assumption), else the end symbol
    h = np.where((total <= 0)[:, None], markov, h)
    total = h.sum(axis=1)
    end_only = total <= 0
    h[end_only, -1] = 1.0
    total[end_only] = 1.0
    return h * (parent_count / total)[:, None]


@dataclass(frozen=True)
class _Level:
    """The nodes of one level while the tree grows (global node ids start at ``first``)."""

    first: int
    gram: np.ndarray          # row in this level's gram table (a key, between _children and _advance)
    parent: np.ndarray
    symbol: np.ndarray
    replica: np.ndarray
    epsilon: np.ndarray
    spent: np.ndarray
    left: np.ndarray
    parent_count: np.ndarray
    markov: np.ndarray


def explore(index: GramIndex, epsilon: float, n_max: int = 5, l_max: int = 20, *, threshold_leaves: bool = True,
            replicas: int = 1) -> ExplorationTree:
    """Grow, noise, threshold and make consistent the exploration tree (steps 2-5), level by level.

    ``index`` must hold sequences truncated to at most ``l_max`` symbols: the noise is calibrated
    to that. ``threshold_leaves``: step 3 (True as the paper, False as the authors' code).
    ``replicas`` > 1 grows that many independent trees at once (for audits); their nodes share the
    true counts of equal grams.
    """
    eps = check_epsilon(epsilon)
    n_max, l_max, replicas = check_count(n_max, "n_max"), check_count(l_max, "l_max"), check_count(replicas, "replicas")
    grams = index if isinstance(index, (Grams, ChunkGrams)) else Grams(index)
    if grams.l_max is None or grams.l_max > l_max:
        raise InputError(f"the sequences must be truncated to l_max = {l_max} symbols before the noise is "
                         f"calibrated to it (they were truncated to {grams.l_max})")
    W = grams.n_symbols + 1
    table = grams.first()
    level = _Level(0, np.zeros(replicas, np.int64), np.full(replicas, -1), np.full(replicas, -1),
                   np.arange(replicas), np.full(replicas, eps / n_max), np.zeros(replicas),
                   np.full(replicas, n_max), np.full(replicas, np.nan), np.full(replicas, -1))
    parts: list[dict] = []
    counts_all, next_all = np.zeros((0, W)), np.zeros((0, W), np.int64)
    opendp, depth = 0.0, 0
    while level.gram.size:
        n = level.gram.size
        noisy, spent = _noisy_histograms(table[level.gram], level.epsilon, l_max)
        opendp = max(opendp, float((level.spent + spent).max()))
        theta = threshold(level.epsilon, l_max, grams.n_symbols)
        released = noisy > theta[:, None]
        if not threshold_leaves:
            released |= level.left[:, None] <= 1
        if depth == 0:
            noisy[:, -1] = 0.0                       # no sequence is empty: public
            released[:, -1] = False
        counts = _consistent(noisy, released, level, counts_all, depth, replicas)
        counts_all = np.concatenate([counts_all, counts])
        expand = released & (level.left[:, None] > 1)
        expand[:, -1] = False
        v, x = np.nonzero(expand)
        first_child = level.first + n
        child = np.full((n, W), -1, np.int64)
        child[v, x] = first_child + np.arange(v.size)
        fallback = np.repeat(level.first + np.arange(n)[:, None], W, axis=1) if depth == 0 else next_all[level.markov]
        next_all = np.concatenate([next_all, np.where(child >= 0, child, fallback)])
        parts.append(dict(parent=level.parent, symbol=level.symbol, level=np.full(n, depth), replica=level.replica,
                          epsilon=level.epsilon, spent=level.spent, left=level.left, noisy=noisy,
                          released=released, child=child, markov=level.markov))
        if not v.size:
            break
        level = _children(level, v, x, noisy, theta, counts, counts_all, next_all, eps, n_max, depth, W,
                          first_child)
        rows, table = grams.next(level.gram)
        level = replace(level, gram=rows)
        depth += 1
    cat = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    return ExplorationTree(cat["parent"], cat["symbol"], cat["level"], cat["replica"], cat["epsilon"], cat["spent"],
                           cat["left"], cat["noisy"], cat["released"], counts_all, cat["child"], cat["markov"],
                           next_all, replicas, opendp)


class Grams:
    """The tree's counting steps on sequences in memory (a :class:`GramIndex`): :meth:`first` the
    root's histogram, :meth:`next` the next level's for the grams ``keys`` (gram row x (L + 1) +
    symbol) of the nodes expanded, every start position walked down the levels once."""

    def __init__(self, index: GramIndex):
        self.index, self.l_max, self.n_symbols = index, index.l_max, index.n_symbols

    def first(self) -> np.ndarray:
        # every start position of a symbol (not &) lies in the root's gram, the empty one
        self.at, self.depth, self.n_grams = _starts(self.index), 0, 1
        return _histograms(self.index, self.at, 0, 1)

    def next(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(each new node's gram row, the new level's table)."""
        self.at, rows, self.n_grams = _advance(self.index, self.at, keys, self.n_grams, self.depth)
        self.depth += 1
        return rows, _histograms(self.index, self.at, self.depth, self.n_grams)


class ChunkGrams:
    """The same counting steps on chunks of sequences (data/chunks.py: a partitioned set's), one
    pass a level: every chunk walks its start positions down the levels expanded so far
    (:func:`level_counts`), and the levels' tables are summed."""

    def __init__(self, sequences, l_max: int, n_symbols: int):
        self.sequences, self.l_max, self.n_symbols = sequences, l_max, int(n_symbols)
        self.levels: list[np.ndarray] = []
        self.n_grams = 1

    def first(self) -> np.ndarray:
        return self._table()

    def next(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        grams, rows = np.unique(keys, return_inverse=True)
        self.levels.append(np.asarray(keys, np.int64))
        self.n_grams = int(grams.size)
        return rows.astype(np.int64), self._table()

    def _table(self) -> np.ndarray:
        counts = self.sequences.total(level_counts, tuple(self.levels))
        return counts.dense().reshape(self.n_grams, self.n_symbols + 1).astype(np.float64)


def level_counts(index: GramIndex, levels: tuple) -> SparseCounts:
    """One chunk's counts of the level after ``levels`` (each the keys of a level's expanded
    nodes, :class:`ChunkGrams`): the symbols after each gram's occurrences, keyed gram row x (L +
    1) + symbol."""
    at, n_grams = _starts(index), 1
    for depth, keys in enumerate(levels):
        at, _, n_grams = _advance(index, at, keys, n_grams, depth)
    follow = index.symbols[at.seq, at.pos + len(levels)].astype(np.int64)
    return SparseCounts.of(at.gram * (index.n_symbols + 1) + follow, n_grams * (index.n_symbols + 1))


def truncated(traces: TraceSet, l_max: int, code: np.ndarray | None = None) -> GramIndex:
    """The traces' locations as sequences truncated to ``l_max`` (CCS 2012 §4; step 1), over the
    alphabet: ``code`` gives each location's symbol, -1 for one outside a public domain, which is
    left out of its trace (public rule, applied to each trace alone; the sequences stay at most
    l_max long); None: every location is its own symbol."""
    if code is None:
        return GramIndex.from_traces(traces, l_max)
    symbol = code[traces.loc]
    inside = symbol >= 0
    lengths = np.bincount(traces.user[inside], minlength=traces.n_traces)
    return GramIndex.from_flat(symbol[inside], lengths, int(code.max(initial=-1)) + 1, l_max)


def alphabet_code(alphabet: np.ndarray, n_locations: int) -> np.ndarray:
    """Each location's position in the sorted ``alphabet`` (its symbol), -1 for one outside it."""
    code = np.full(int(n_locations), -1, np.int64)
    code[alphabet] = np.arange(alphabet.size)
    return code


def tree_counts(train, l_max: int, alphabet: np.ndarray) -> Grams | ChunkGrams:
    """The tree's counting steps on the training traces as sequences over ``alphabet`` (the sorted
    locations that are symbols) truncated to ``l_max``: in memory for a TraceSet, by chunks for a
    partitioned set (data/chunks.py)."""
    data = chunks(train)
    code = alphabet_code(alphabet, train.space.n_locations)
    if isinstance(data, Whole):
        return Grams(truncated(data.value, l_max, code))
    return ChunkGrams(data.map(truncated, l_max, code), l_max, alphabet.size)


def _starts(index: GramIndex) -> "_Positions":
    """Every start position of a symbol (not &), in the root's gram (the empty one)."""
    seq, pos = np.nonzero(np.arange(index.symbols.shape[1])[None, :] < index.lengths[:, None])
    return _Positions(seq, pos, np.zeros(seq.size, np.int64))


@dataclass(frozen=True)
class _Positions:
    """Start positions (sequence, position) whose gram of the current length is in the gram table,
    and its row there."""

    seq: np.ndarray
    pos: np.ndarray
    gram: np.ndarray


def _histograms(index: GramIndex, at: _Positions, depth: int, n_grams: int) -> np.ndarray:
    """True counts, shape (n_grams, L + 1): for each gram of ``depth`` symbols, the symbols that
    follow its occurrences."""
    W = index.n_symbols + 1
    follow = index.symbols[at.seq, at.pos + depth].astype(np.int64)
    return np.bincount(at.gram * W + follow, minlength=n_grams * W).reshape(n_grams, W).astype(np.float64)


def _noisy_histograms(true: np.ndarray, epsilon_g: np.ndarray, l_max: int) -> tuple[np.ndarray, np.ndarray]:
    """``true`` plus Laplace(l_max / epsilon_g) on every bin of each row, through OpenDP
    (privacy/laplace.py), one call per distinct epsilon_g; and the epsilon OpenDP's privacy map
    gives each row. Sensitivity: the rows of a level are disjoint sets of grams of one length, of
    which one sequence holds at most l_max (step 1)."""
    noisy = np.empty_like(true)
    spent = np.empty(true.shape[0])
    for e in np.unique(epsilon_g):
        rows = np.flatnonzero(epsilon_g == e)
        scratch = Ledger()
        noisy[rows] = laplace(true[rows], float(e), l_max, ledger=scratch)
        spent[rows] = scratch.spends[0].epsilon
        if spent[rows[0]] > e * (1 + _SLACK):
            raise RuntimeError(f"OpenDP reports epsilon {spent[rows[0]]} for a histogram budgeted {e}")
    return noisy, spent


def _consistent(noisy: np.ndarray, released: np.ndarray, level: _Level, counts_all: np.ndarray, depth: int,
                replicas: int) -> np.ndarray:
    """Step 5 for one level. A root keeps its released counts; a root with none gets one count per
    location (uniform: nothing survived the threshold)."""
    if depth == 0:
        counts = np.where(released, np.maximum(noisy, 0.0), 0.0)
        counts[counts.sum(axis=1) <= 0, :-1] = 1.0
        return counts
    return enforce_consistency(noisy, released, level.parent_count, counts_all[level.markov],
                               level.markov < replicas)


def _children(level: _Level, v: np.ndarray, x: np.ndarray, noisy: np.ndarray, theta: np.ndarray,
              counts: np.ndarray, counts_all: np.ndarray, next_all: np.ndarray, eps: float, n_max: int,
              depth: int, W: int, first: int) -> _Level:
    """The expanded bins (v, x) of this level as the next level's nodes, with their Markov parents
    and budgets (step 4); ``gram`` holds the key gram row * W + x until :func:`_advance`."""
    markov = level.replica[v] if depth == 0 else next_all[level.markov[v], x]
    row = counts_all[markov]
    p_max = row.max(axis=1) / np.maximum(row.sum(axis=1), 1e-300)
    left = levels_needed(theta[v], noisy[v, x], p_max, np.full(v.size, n_max - (depth + 1)))
    spent = level.spent[v] + level.epsilon[v]
    return _Level(first, level.gram[v] * W + x, level.first + v, x, level.replica[v],
                  np.maximum(eps - spent, 0.0) / left, spent, left, counts[v, x], markov)


def _advance(index: GramIndex, at: _Positions, keys: np.ndarray, n_grams: int, depth: int
             ) -> tuple[_Positions, np.ndarray, int]:
    """Number the next level's distinct grams (``keys``: gram row * (L + 1) + symbol) and keep the
    start positions whose gram of depth + 1 symbols is one of them; returns the positions, each
    new node's gram row and the number of grams."""
    W = index.n_symbols + 1
    grams, rows = np.unique(keys, return_inverse=True)
    lookup = np.full(n_grams * W, -1, np.int64)
    lookup[grams] = np.arange(grams.size)
    follow = index.symbols[at.seq, at.pos + depth].astype(np.int64)
    new = np.full(at.seq.size, -1, np.int64)
    ok = follow < index.n_symbols
    new[ok] = lookup[at.gram[ok] * W + follow[ok]]
    keep = new >= 0
    return _Positions(at.seq[keep], at.pos[keep], new[keep]), rows.astype(np.int64), int(grams.size)


def tree_noise(tree: ExplorationTree, l_max: int, n_symbols: int, threshold_leaves: bool = True) -> float:
    """The estimated share of noise in the tree's released histograms (privacy/noise.py): the mass
    Laplace(l_max / epsilon_g) alone leaves above theta_g in each bin (the leaves' bins above 0 where
    they are released whole), over every node, against the released mass; 1 when the root released
    nothing (the walks then start anywhere)."""
    scale = l_max / tree.epsilon
    theta = threshold(tree.epsilon, l_max, n_symbols)
    if not threshold_leaves:
        theta = np.where(tree.levels_left <= 1, 0.0, theta)
    released = np.where(tree.released, np.maximum(tree.noisy, 0.0), 0.0)
    if released[tree.parent < 0].sum() <= 0:
        return 1.0
    counted = np.ones(released.shape, bool)
    counted[tree.parent < 0, -1] = False                          # a root's & bin is not released
    noise = noise_mass(released[counted], np.broadcast_to(scale[:, None], released.shape)[counted],
                       np.broadcast_to(theta[:, None], released.shape)[counted])
    return share(noise, released.sum())


# -- 6. synthetic sequences --------------------------------------------------------------------

def start_counts(tree: ExplorationTree, root: int = 0) -> np.ndarray:
    """Weights of the first symbol, shape (L,): c(x) - sum_y c(y x) over the expanded unigrams y of
    tree ``root``, at least 0 -- what the longest-first construction leaves at length one (step 6);
    the unigram counts when nothing is left."""
    unigram = tree.counts[root, :-1]
    level1 = np.flatnonzero(tree.parent == root)
    starts = np.maximum(unigram - tree.counts[level1, :-1].sum(axis=0), 0.0)
    return starts if starts.sum() > 0 else unigram.copy()


def sampling_rows(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The walks' rows (step 6) from the consistent counts: every node's symbols whose floored count
    is at least 1, in order, and the running sums of those counts along the row, CSR (indptr,
    symbols, running sums). A dense row's running sums take these values at these symbols (the
    counts are whole numbers, their sums exact), so a walk draws what it would draw from the dense
    rows; a node's row is its few continuations, not every location (at 20 million trips the dense
    rows of some 10^4 nodes took a gigabyte, on every worker that samples)."""
    floored = np.floor(np.asarray(counts, np.float64))
    v, symbol = np.nonzero(floored > 0)
    weight = floored[v, symbol]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(v, minlength=floored.shape[0]))]).astype(np.int64)
    total = np.cumsum(weight)
    before = np.concatenate([[0.0], total])[indptr[:-1]]
    return indptr, symbol.astype(np.int64), total - np.repeat(before, np.diff(indptr))


@njit(cache=True)
def _at(indptr, symbols, sums, v, s):
    """The running sum of node v's row at symbol ``s`` (0 before its first symbol)."""
    lo, hi = indptr[v], indptr[v + 1]
    j = np.searchsorted(symbols[lo:hi], s, side="right")
    return sums[lo + j - 1] if j > 0 else 0.0


@njit(cache=True)
def _first_above(indptr, symbols, sums, v, target, none):
    """The first symbol of node v's row whose running sum exceeds ``target``; ``none`` if none does."""
    lo, hi = indptr[v], indptr[v + 1]
    j = np.searchsorted(sums[lo:hi], target, side="right")
    return symbols[lo + j] if j < hi - lo else none


@njit(cache=True)
def _draw_except(indptr, symbols, sums, v, end, x, u):
    """A symbol drawn with uniform ``u`` in proportion to node v's row, the end (symbol ``end``)
    and the symbol ``x`` left out; -1 when nothing else weighs."""
    before = _at(indptr, symbols, sums, v, x - 1) if x > 0 else 0.0
    own = _at(indptr, symbols, sums, v, x) - before
    total = _at(indptr, symbols, sums, v, end - 1) - own
    if total <= 0:
        return -1
    target = u * total
    if target >= before:
        target += own
    return min(_first_above(indptr, symbols, sums, v, target, end), end - 1)


@njit(cache=True)
def _walks(start_cdf, indptr, symbols, sums, end, next_node, root, l_max, min_len, uniforms, out, length):
    """Walks of the variable-length Markov chain: the first symbol from ``start_cdf``, then from
    the row of the current context (:func:`sampling_rows`); the end symbol ``end`` or l_max symbols
    stop. Until a walk holds ``min_len`` symbols (the training set's public minimum of cells) it
    neither ends nor repeats its last symbol (a repeat is no new cell): the draw leaves both out,
    and where the row gives nothing else, the root's unigrams do (CCS 2012's back-off to the
    shortest context), and where the root holds no other symbol either (on a few hundred trips one
    noisy cell alone may pass its threshold, and every walk would stop at one point), any other
    symbol, uniformly."""
    n = uniforms.shape[0]
    for i in range(n):
        x = min(np.searchsorted(start_cdf, uniforms[i, 0] * start_cdf[-1], side="right"), end - 1)
        out[i, 0] = x
        k = 1
        v = next_node[root, x]
        while k < l_max:
            if k < min_len:
                y = _draw_except(indptr, symbols, sums, v, end, out[i, k - 1], uniforms[i, k])
                if y < 0:
                    y = _draw_except(indptr, symbols, sums, root, end, out[i, k - 1], uniforms[i, k])
                if y < 0 and end > 1:           # the root holds no other symbol: any other, uniformly
                    y = min(int(uniforms[i, k] * (end - 1)), end - 2)
                    y += y >= out[i, k - 1]
                if y < 0:
                    break
            else:
                total = _at(indptr, symbols, sums, v, end)
                if total <= 0:
                    break
                y = min(_first_above(indptr, symbols, sums, v, uniforms[i, k] * total, end), end)
                if y == end:
                    break
            out[i, k] = y
            k += 1
            v = next_node[v, y]
        length[i] = k


def walk(counts: np.ndarray, next_node: np.ndarray, starts: np.ndarray, n: int, l_max: int, seed: int,
         min_len: int = 1, rows: tuple | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(symbols, lengths): ``n`` sequences of min(min_len, l_max) .. l_max symbols, concatenated, seeded;
    ``rows``: :func:`sampling_rows` of ``counts`` where already made (``counts`` is then not read)."""
    uniforms = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(13,))).random((n, l_max))
    out = np.zeros((n, l_max), np.int64)
    length = np.zeros(n, np.int64)
    start_cdf = np.cumsum(starts if starts.sum() > 0 else np.ones_like(starts))
    # the authors' reconstruction floors the counts: a continuation counted below 1 (the uniform share
    # that consistency spreads over every location) never extends a sequence
    indptr, symbols, sums = sampling_rows(counts) if rows is None else rows
    _walks(start_cdf, indptr, symbols, sums, next_node.shape[1] - 1, next_node, 0, l_max, min(int(min_len), l_max),
           uniforms, out, length)
    return out[np.arange(l_max)[None, :] < length[:, None]], length


# -- the synthesizer ---------------------------------------------------------------------------

class NGRAM(Synthesizer):
    """Differentially private variable-length n-grams (module docstring).

    Parameters
    ----------
    epsilon : float
        Privacy budget per trace (one trip: paper 004 protects trajectories).
    n_max : int
        Longest n-gram released (CCS 2012's n_max, 5).
    l_max : int
        Symbols kept per trace, and the longest synthetic sequence (CCS 2012's l_max, 20).
    threshold_leaves : bool
        Threshold the last histogram of every path as the paper does (True), or release it whole
        as the authors' code does (False); module docstring, step 3.
    size_share : float
        Share of epsilon spent on the DP count of training traces that sizes the synthetic set
        (0: none; sample then needs n).
    time_share : float
        Share of epsilon spent on the model of the trips' times (synth/trip_times.py: starts by day
        and hour, step durations by length); 0 releases trips without times.
    footprint_share : float
        Share of epsilon spent, where the set has no public domain, on a DP footprint (the blocks of
        cells enough trips visit: privacy/footprint.py) that the model then keeps to as to a domain;
        spent only when the DP count of trips can fill every block (the cabs' size, not a few hundred
        trips: docs/data.md); 0: never.
    max_traces_per_user : int
        Traces one user id may contribute (the first ones are kept): the ledger's per-person
        epsilon is this many times the per-trace one (privacy/ledger.py). 1, as ``prepare`` makes them.
    seed : int
        The seed of :meth:`sample` when it is given none. Fitting draws only DP noise, which is
        never seeded.
    """

    name = "ngram"
    checks = {"epsilon": check_epsilon, "n_max": check_count, "l_max": check_count, "threshold_leaves": check_flag,
              "size_share": check_share, "time_share": check_share, "footprint_share": check_share, "max_traces_per_user": check_count, "seed": check_seed}
    tags = Tags(virtual_users=True, ragged=True, dp=True, domain=True)
    several_traces = False
    partitions = True

    def __init__(self, epsilon: float = 1.0, n_max: int = 5, l_max: int = 20, threshold_leaves: bool = True,
                 size_share: float = SIZE_SHARE, time_share: float = TIME_SHARE,
                 footprint_share: float = FOOTPRINT_SHARE, max_traces_per_user: int = 1, seed: int = 0):
        self.epsilon = epsilon
        self.n_max = n_max
        self.l_max = l_max
        self.threshold_leaves = threshold_leaves
        self.size_share = size_share
        self.time_share = time_share
        self.footprint_share = footprint_share
        self.max_traces_per_user = max_traces_per_user
        self.seed = seed

    def _fit(self, train: TraceSet, *, progress=None, client=None) -> "NGRAM":
        eps = check_epsilon(self.epsilon)
        n_max, l_max = check_count(self.n_max, "n_max"), check_count(self.l_max, "l_max")
        self._remember_frame(train)
        train = self._bounded_traces(train, self.max_traces_per_user)
        eps = self._count_units(train.n_traces, eps, self.size_share, "trace")
        eps = self._fit_times(train, check_epsilon(self.epsilon), self.time_share, eps)
        eps = self._fit_footprint(train, check_epsilon(self.epsilon), self.footprint_share, eps)
        allowed = self._allowed()
        self.alphabet_ = np.arange(self.space_.n_locations) if allowed is None else np.flatnonzero(allowed)
        tree = explore(tree_counts(train, l_max, self.alphabet_), eps, n_max, l_max,
                       threshold_leaves=bool(self.threshold_leaves))
        # the guarantee is the budget every path may spend, not the most one realised path spent: a
        # path stops where released counts say so, and the outputs that let it go on are possible
        self.ledger_.record(
            "laplace", max(eps, tree.opendp_epsilon), 0.0, float(l_max), "trace",
            saw=f"n-gram counts (n <= {n_max}) of the traces truncated to their first {l_max} "
                f"locations, in an exploration tree of {tree.n_nodes} noisy histograms (the longest path "
                f"spent {tree.opendp_epsilon:.3g} by OpenDP's maps)",
            assumptions="one trace adds at most l_max n-grams of each length; along every root-to-leaf path of the "
                        "tree the budgets sum to epsilon (CCS 2012 §4.3, adaptive allocation); thresholds, "
                        "consistency and sampling are post-processing")
        self.noise_parts_ = {"where trips go": tree_noise(tree, l_max, train.space.n_locations, bool(self.threshold_leaves))}
        self.counts_, self.rows_ = tree.counts, None
        self.next_node_ = tree.next_node.astype(np.int32)
        self.parent_, self.symbol_, self.level_ = tree.parent, tree.symbol, tree.level
        self.node_epsilon_ = tree.epsilon
        self.starts_ = start_counts(tree)
        return self

    def _index(self, train: TraceSet, l_max: int) -> GramIndex:
        """The training traces as sequences over the alphabet (its positions), truncated: with a
        public domain, a location outside it is left out of its trace (public rule, applied to each
        trace alone; the sequences stay at most l_max long)."""
        code = np.full(self.space_.n_locations, -1, np.int64)
        code[self.alphabet_] = np.arange(self.alphabet_.size)
        symbol = code[train.loc]
        inside = symbol >= 0
        lengths = np.bincount(train.user[inside], minlength=train.n_traces)
        return GramIndex.from_flat(symbol[inside], lengths, int(self.alphabet_.size), l_max)

    def _sample(self, n: int | None = None, *, days: int = 1, seed: int = 0, traces_per_user: int = 1, users=None,
                progress=None, client=None) -> TraceSet:
        """``n`` synthetic trips (default: the DP count of training traces) of 1 .. l_max locations
        on instants 0, 1, ..., each its own virtual user with ``hour`` -1. ``days`` is accepted for
        the common protocol and checked; NGRAM has no time."""
        m = self._size(n)
        l_max = check_count(self.l_max, "l_max")
        symbols, length = walk(getattr(self, "counts_", None), self.next_node_, self.starts_, m, l_max, seed,
                               self.min_cells_, self._rows())
        return self._untimed(self.alphabet_[symbols], length, seed)

    def _rows(self) -> tuple:
        """The walks' rows (:func:`sampling_rows`), made once."""
        if getattr(self, "rows_", None) is None:
            self.rows_ = sampling_rows(self.counts_)
        return self.rows_

    def for_sampling(self) -> "NGRAM":
        """This model without what sampling does not read (the dense counts), for the workers that
        sample partitions (synth/partitioned.py)."""
        light = copy.copy(self)
        light.rows_ = self._rows()
        del light.counts_
        return light

    def summary(self) -> dict:
        levels = np.bincount(self.level_) if hasattr(self, "level_") else []
        return {"epsilon": float(self.epsilon), "n_max": int(self.n_max), "l_max": int(self.l_max),
                "nodes_per_level": [int(c) for c in levels]}

    def _arrays(self):
        return {"counts": self.counts_, "next_node": self.next_node_, "starts": self.starts_,
                "parent": self.parent_, "symbol": self.symbol_, "level": self.level_,
                "node_epsilon": self.node_epsilon_, "alphabet": self.alphabet_}

    def _restore(self, arrays, fitted):
        for key in ("counts", "next_node", "starts", "parent", "symbol", "level", "node_epsilon"):
            if key not in arrays:
                raise InputError(f"the saved NGRAM model has no {key!r} array")
        self.counts_, self.next_node_, self.starts_ = arrays["counts"], arrays["next_node"], arrays["starts"]
        self.rows_ = None
        self.parent_, self.symbol_, self.level_ = arrays["parent"], arrays["symbol"], arrays["level"]
        self.node_epsilon_ = arrays["node_epsilon"]
        # models saved before public domains: every location is a symbol
        self.alphabet_ = arrays.get("alphabet", np.arange(self.space_.n_locations))
        L = self.alphabet_.size
        if self.counts_.shape[1] != L + 1 or self.next_node_.shape != self.counts_.shape or self.starts_.shape != (L,) \
                or self.alphabet_.max(initial=0) >= self.space_.n_locations:
            raise InputError("the saved NGRAM arrays do not match its space")
