"""Merging regions and location hiding, MRLH(mu_x, mu_y, lambda) (Shokri et al., S&P 2011; the PWS
Cup's sample obfuscation, paper 003 §4.1).

Each event is deleted with probability lambda; otherwise its region is generalized to the block
of regions that share its coordinates after the lowest mu_x bits of x and mu_y bits of y are
dropped (paper 003's example: MRLH(1, 1, 0.8) turns x_2 into {x_1, x_2, x_33, x_34} with
probability 0.2). As in the organisers' kit, the deletion draw comes first and a generalized event
lists every region of its block. The randomness is not DP noise and comes from ``seed``.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import InputError
from ..data.space import Grid
from ..synth.base import Anonymizer, Tags
from ..data.traces import DELETED, LocationSets, TraceSet, generalized_code
from ..core.validation import check_probability, whole


def blocks(grid: Grid, mu_x: int, mu_y: int) -> np.ndarray:
    """The block of every cell when the lowest ``mu_x`` / ``mu_y`` bits of its x / y index are dropped."""
    cols_b = -(-grid.cols // (1 << mu_x))
    return (grid.row >> mu_y) * cols_b + (grid.col >> mu_x)


class MRLH(Anonymizer):
    """MRLH(mu_x, mu_y, lambda) on a grid; the kit's sample is MRLH(2, 2, 0.5), the issue's MRLH(1, 1, 0).

    Parameters
    ----------
    mu_x, mu_y : int
        Low bits dropped from a cell's x and y index: blocks of 2^mu_x x 2^mu_y cells.
    lam : float
        The probability that an event is deleted (lambda).
    """

    name = "mrlh"
    checks = {"mu_x": whole(0), "mu_y": whole(0), "lam": check_probability}
    tags = Tags(generalizes=True)

    def __init__(self, mu_x: int = 2, mu_y: int = 2, lam: float = 0.5):
        self.mu_x = mu_x
        self.mu_y = mu_y
        self.lam = lam

    def transform(self, traces: TraceSet, *, seed: int = 0) -> TraceSet:
        self._check(traces, seed)
        if not isinstance(traces.space, Grid):
            raise InputError("mrlh merges grid cells: it needs traces on a grid")
        mu_x, mu_y = (_bits(v, n) for v, n in ((self.mu_x, "mu_x"), (self.mu_y, "mu_y")))
        block = blocks(traces.space, mu_x, mu_y)
        order = np.argsort(block, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(block[order]) != 0])
        sizes = np.diff(np.r_[starts, block.size])
        merged = sizes > 1
        sets = LocationSets(np.r_[0, np.cumsum(sizes[merged])],
                            np.concatenate([order[s:s + k] for s, k in zip(starts[merged], sizes[merged])])
                            if merged.any() else np.zeros(0, np.int64))
        code = np.empty(block.size, np.int64)
        set_of_block = np.cumsum(merged) - 1
        first = order[starts]
        for b, (s, k) in enumerate(zip(starts, sizes)):
            code[order[s:s + k]] = generalized_code(set_of_block[b]) if k > 1 else first[b]
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(31,)))
        hide = rng.random(traces.n_events) < float(self.lam)
        loc = np.where(hide, DELETED, code[traces.loc])
        return self._anonymized(traces, loc, locsets=sets if merged.any() else None)


def _bits(value, name: str) -> int:
    if int(value) != value or value < 0 or value > 16:
        raise InputError(f"mrlh's {name} must be a whole number of bits 0..16, got {value!r}")
    return int(value)
