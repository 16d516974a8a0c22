"""A DP footprint: the cells that enough trips visit, released under DP where no public domain says
where the movement can be (issue 54). A trip method may spend a share of its epsilon on it and
then keep its synthetic locations inside, as it keeps to a public domain.

The query: per cell c, w_c = sum over traces t of [t visits c] / k_t, k_t the number of distinct
cells t visits. Each trace's weights sum to 1, so adding or removing one trace moves the vector by
at most 1 in L1: Laplace(1 / epsilon) on every cell (privacy/laplace.py, OpenDP's sampler) is
epsilon-DP. A cell is in the footprint when its noisy weight exceeds ``scales`` noise scales,
``scales`` / epsilon (post-processing; at 2 scales an empty cell passes with probability e^-2 / 2,
about 7 %, and a cell of w trips' weight with 1 - e^-(w epsilon - 2) / 2 when w epsilon > 2).
Cells are what the caller makes them: the grid's cells or blocks of them.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import InputError
from ..core.validation import check_epsilon
from .laplace import laplace
from .ledger import Ledger

#: noise scales a cell's noisy weight must exceed to be in the footprint
SCALES = 2.0


def visit_weights(trace: np.ndarray, cell: np.ndarray, n_cells: int) -> np.ndarray:
    """Shape (n_cells,): w_c = sum over traces of 1 / k_t for each of the k_t distinct cells trace t
    visits (``trace``, ``cell``: one entry per event, cells in 0 .. n_cells - 1)."""
    trace, cell = np.asarray(trace, np.int64), np.asarray(cell, np.int64)
    if cell.size and (cell.min() < 0 or cell.max() >= n_cells):
        raise InputError(f"cells must be in 0..{n_cells - 1}")
    pairs = np.unique(trace * n_cells + cell)
    t, c = pairs // n_cells, pairs % n_cells
    distinct = np.bincount(t)
    return np.bincount(c, weights=1.0 / distinct[t], minlength=n_cells)


def noisy_footprint(weights: np.ndarray, epsilon: float, *, scales: float = SCALES, ledger: Ledger | None = None,
                    unit: str = "trace", saw: str = "") -> np.ndarray:
    """Bool of shape weights.shape: the cells whose weight plus Laplace(1 / epsilon) exceeds
    ``scales`` / epsilon (module docstring); every cell when none does (nothing is learnt)."""
    eps = check_epsilon(epsilon)
    noisy = laplace(np.asarray(weights, np.float64), eps, 1.0, ledger=ledger, unit=unit,
                    saw=saw or "the cells trips visit, each trip's distinct cells sharing 1",
                    assumptions="each trace's weights sum to 1 (L1 sensitivity 1); the threshold is post-processing")
    keep = noisy > scales / eps
    return keep if keep.any() else np.ones_like(keep)
