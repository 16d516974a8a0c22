"""The next-hop model (paper 004's transition probability generator, §7.3.2, §8.3.2, Figure 2).

Input (current cell, destination, hour): the two cells embedded separately in 50 dimensions,
concatenated with the hour (one number, hour / 23: §8.3.2's 101-dimensional vector), a dense
layer of 200 with ReLU, and a softmax over the 11 x 11 = 121 cells within 5 cells (Chebyshev
distance on the grid) of the current cell; the middle class is the current cell itself. Near the
grid's edge the classes that fall off the grid are masked out, so the softmax covers only real
cells.

Classes follow the paper's 121 neighbours, not the authors' shipped configurations, which map
next hops to the K most visited cells with K chosen from the true counts (not DP; REFERENCE.md).
A 2-gram whose next cell lies outside the window (a gap the preprocessing did not interpolate)
has no class and is not a training example.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

RADIUS = 5
EMBEDDING = 50
HIDDEN = 200
HOURS = 24


def window_offsets(radius: int = RADIUS) -> tuple[np.ndarray, np.ndarray]:
    """(row offsets, column offsets) of the window's classes, each of shape ((2r + 1)^2,), row-major."""
    d = np.arange(-radius, radius + 1)
    dr, dc = np.meshgrid(d, d, indexing="ij")
    return dr.ravel(), dc.ravel()


def window_cells(cells: np.ndarray, rows: int, cols: int, radius: int = RADIUS,
                 allowed: np.ndarray | None = None) -> np.ndarray:
    """The cell of every class around each of ``cells``: shape (n, (2r + 1)^2), -1 off the grid,
    and -1 in a cell a public domain leaves out (``allowed``, bool per cell): masked as the grid's
    edge is."""
    dr, dc = window_offsets(radius)
    r, c = np.divmod(np.asarray(cells, np.int64), cols)
    rr, cc = r[:, None] + dr, c[:, None] + dc
    inside = (rr >= 0) & (rr < rows) & (cc >= 0) & (cc < cols)
    out = np.where(inside, rr * cols + cc, -1)
    if allowed is not None:
        out[(out >= 0) & ~allowed[np.maximum(out, 0)]] = -1
    return out


def window_class(current: np.ndarray, nxt: np.ndarray, cols: int, radius: int = RADIUS) -> np.ndarray:
    """The class of the move current -> nxt, or -1 when nxt lies outside the window."""
    r0, c0 = np.divmod(np.asarray(current, np.int64), cols)
    r1, c1 = np.divmod(np.asarray(nxt, np.int64), cols)
    dr, dc = r1 - r0, c1 - c0
    inside = (np.abs(dr) <= radius) & (np.abs(dc) <= radius)
    return np.where(inside, (dr + radius) * (2 * radius + 1) + dc + radius, -1)


class NextHop(nn.Module):
    """p(next | current, destination, hour) over the window's classes (module docstring)."""

    def __init__(self, rows: int, cols: int, radius: int = RADIUS, embedding: int = EMBEDDING,
                 hidden: int = HIDDEN, allowed: np.ndarray | None = None):
        super().__init__()
        self.rows, self.cols, self.radius = int(rows), int(cols), int(radius)
        n_cells, n_classes = self.rows * self.cols, (2 * radius + 1) ** 2
        self.current = nn.Embedding(n_cells, embedding)
        self.destination = nn.Embedding(n_cells, embedding)
        self.hidden = nn.Linear(2 * embedding + 1, hidden)
        self.out = nn.Linear(hidden, n_classes)
        valid = window_cells(np.arange(n_cells), rows, cols, radius, allowed) >= 0
        self.register_buffer("valid", torch.from_numpy(valid), persistent=False)

    def logits(self, current: torch.Tensor, destination: torch.Tensor, hour: torch.Tensor) -> torch.Tensor:
        """Masked logits, shape (batch, 121); classes off the grid get -1e9."""
        x = torch.cat([self.current(current), self.destination(destination),
                       (hour.float() / (HOURS - 1)).unsqueeze(1)], dim=1)
        logits = self.out(F.relu(self.hidden(x)))
        return logits.masked_fill(~self.valid[current], -1e9)

    def forward(self, current: torch.Tensor, destination: torch.Tensor, hour: torch.Tensor,
                target: torch.Tensor) -> torch.Tensor:
        """The per-example loss (sparse categorical cross-entropy, §8.3.2), shape (batch,)."""
        return F.cross_entropy(self.logits(current, destination, hour), target, reduction="none")


def nexthop_arrays(model: NextHop) -> dict[str, np.ndarray]:
    """The weights as float32 arrays (what generation needs)."""
    return {k: v.detach().cpu().numpy().astype(np.float32) for k, v in model.state_dict().items()}


class NextHopTables:
    """The next-hop model in NumPy, for generation: log p(next | current, destination, hour) for
    every current cell at once (one matrix product per (destination, hour)).

    The hidden layer splits into a part of the current cell, computed once for all cells
    (``A = E_cur W_cur``, shape (|L|, 200)), and a part of (destination, hour).
    """

    def __init__(self, arrays: dict[str, np.ndarray], rows: int, cols: int, radius: int = RADIUS,
                 allowed: np.ndarray | None = None):
        self.rows, self.cols, self.radius = rows, cols, radius
        w = arrays["hidden.weight"]
        e = arrays["current.weight"].shape[1]
        self.per_current = arrays["current.weight"] @ w[:, :e].T                  # (|L|, 200)
        self.destination = arrays["destination.weight"] @ w[:, e:2 * e].T         # (|L|, 200)
        self.hour_weight, self.bias = w[:, 2 * e], arrays["hidden.bias"]
        self.out_weight, self.out_bias = arrays["out.weight"].T.copy(), arrays["out.bias"]
        self.targets = window_cells(np.arange(rows * cols), rows, cols, radius, allowed)    # (|L|, 121)
        self.off_grid = np.where(self.targets >= 0, 0, -np.inf).astype(np.float32)

    def log_probabilities(self, destination: int, hour: int) -> np.ndarray:
        """Shape (|L|, 121): row x, class k: log p(targets[x, k] | x, destination, hour); -inf off the grid."""
        shift = self.destination[destination] + self.hour_weight * np.float32(hour / (HOURS - 1)) + self.bias
        logits = np.maximum(self.per_current + shift, 0) @ self.out_weight + (self.out_bias + self.off_grid)
        top = logits.max(axis=1, keepdims=True)
        logits -= np.where(np.isfinite(top), top, 0)          # a cell a domain walls in has no class left
        total = np.exp(logits).sum(axis=1, keepdims=True)
        return logits - np.log(np.where(total > 0, total, 1.0))
