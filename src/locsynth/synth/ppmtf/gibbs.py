"""Gibbs sampling of the PPMTF factors (paper 001 §3.3; BPMF, Salakhutdinov and Mnih, ICML 2008).

Model: r^I[n,i,j] ~ N(sum_k a_nk b_ik c_jk, 1/alpha) and r^II[n,i,l] ~ N(sum_k a_nk b_ik d_lk,
1/alpha) on the observed cells (eq. 3); each row of a factor Z in {A, B, C, D} is
N(mu_Z, Lambda_Z^-1) with a normal-Wishart hyperprior (eq. 4): mu0 = 0, beta0 = 2, nu0 = z,
W0 = I. One iteration samples (mu_Z, Lambda_Z) for each factor, then the rows of A, B, C and D
in turn from their Gaussian conditionals. For a row x of Z with observed cells c, each giving
a feature f_c (the elementwise product of the other two factors' rows) and a count r_c:

.. math:: \\Lambda^* = \\Lambda_Z + \\alpha \\sum_c f_c f_c^\\top, \\quad
          \\mu^* = (\\Lambda^*)^{-1} (\\Lambda_Z \\mu_Z + \\alpha \\sum_c r_c f_c), \\quad
          x \\sim N(\\mu^*, (\\Lambda^*)^{-1})

A uses the cells of both tensors (features b_i * c_j and b_i * d_l), B both (a_n * c_j and
a_n * d_l), C only R^I (a_n * b_i), D only R^II (a_n * b_i).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange
from scipy.stats import wishart

from .tensors import Tensors

FACTORS = ("A", "B", "C", "D")


class Prior(NamedTuple):
    """Normal-Wishart hyperprior (eq. 4)."""

    mu0: np.ndarray
    beta0: float
    nu0: float
    W0: np.ndarray

    @classmethod
    def default(cls, rank: int) -> "Prior":
        """mu0 = 0, beta0 = 2, nu0 = z, W0 = I (paper 001 §3.3, as in BPMF)."""
        return cls(np.zeros(rank), 2.0, float(rank), np.eye(rank))


class GibbsState(NamedTuple):
    """Factors and their hyperparameters after ``iteration`` sweeps."""

    factors: dict[str, np.ndarray]
    mu: dict[str, np.ndarray]
    Lambda: dict[str, np.ndarray]
    iteration: int


class Design(NamedTuple):
    """The observed cells that condition the rows of one factor, grouped by row (CSR):
    cells ``offsets[r]:offsets[r+1]`` of row r have feature X1[idx1] * X2[idx2] and count r."""

    offsets: np.ndarray
    idx1: np.ndarray
    idx2: np.ndarray
    r: np.ndarray


def designs(t: Tensors) -> dict[str, Design]:
    """For each factor, its cells grouped by row, with the rows of the other two factors.

    The second factor of A and B is C and D stacked (D's rows after C's), so that one kernel
    serves both tensors.
    """
    R1, R2, L = t.transitions, t.visits, t.n_locations

    def group(target, n_rows, idx1, idx2, r):
        order = np.argsort(target, kind="stable")
        offsets = np.searchsorted(target[order], np.arange(n_rows + 1)).astype(np.int64)
        return Design(offsets, idx1[order].astype(np.int64), idx2[order].astype(np.int64), r[order])

    both_r = np.r_[R1.r, R2.r]
    return {
        "A": group(np.r_[R1.user, R2.user], t.n_users, np.r_[R1.i, R2.i], np.r_[R1.j, R2.j + L], both_r),
        "B": group(np.r_[R1.i, R2.i], L, np.r_[R1.user, R2.user], np.r_[R1.j, R2.j + L], both_r),
        "C": group(R1.j, L, R1.user, R1.i, R1.r),
        "D": group(R2.j, t.n_slots, R2.user, R2.i, R2.r),
    }


def others(name: str, f: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(X1, X2) whose row products are the features of factor ``name``'s cells."""
    if name == "A":
        return f["B"], np.vstack([f["C"], f["D"]])
    if name == "B":
        return f["A"], np.vstack([f["C"], f["D"]])
    return f["A"], f["B"]


def sample_hyperparameters(X: np.ndarray, prior: Prior, rng: np.random.Generator,
                           centered: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(mu, Lambda) from the normal-Wishart posterior given the rows of X (BPMF eq. 14).

    ``centered=False`` uses the uncentered second moment X^T X / N in place of the sample
    covariance, as the authors' C++ does (REFERENCE.md).
    """
    n, z = X.shape
    xbar = X.mean(axis=0)
    S = (X - xbar).T @ (X - xbar) / n if centered else X.T @ X / n
    beta_n, nu_n = prior.beta0 + n, prior.nu0 + n
    mu_n = (prior.beta0 * prior.mu0 + n * xbar) / beta_n
    d = (prior.mu0 - xbar)[:, None]
    W_inv = np.linalg.inv(prior.W0) + n * S + (prior.beta0 * n / beta_n) * (d @ d.T)
    W_n = np.linalg.inv(W_inv)
    W_n = (W_n + W_n.T) / 2
    Lam = wishart.rvs(df=nu_n, scale=W_n, random_state=rng)
    Lam = np.atleast_2d(Lam)
    cov = np.linalg.inv(beta_n * Lam)
    mu = rng.multivariate_normal(mu_n, (cov + cov.T) / 2, method="cholesky")
    return mu, Lam


def sample_rows(design: Design, X1: np.ndarray, X2: np.ndarray, alpha: float, mu: np.ndarray,
                Lam: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """All rows of one factor from their Gaussian conditionals (the formula of the module)."""
    n_rows, z = design.offsets.size - 1, mu.size
    eps = rng.standard_normal((n_rows, z))
    out = np.empty((n_rows, z))
    _sample_rows(design.offsets, design.idx1, design.idx2, design.r, np.ascontiguousarray(X1),
                 np.ascontiguousarray(X2), float(alpha), np.ascontiguousarray(Lam), Lam @ mu, eps, out)
    return out


@njit(parallel=True, cache=True, fastmath=True)
def _sample_rows(offsets, idx1, idx2, r, X1, X2, alpha, Lam, Lam_mu, eps, out):
    n_rows, z = out.shape
    order = _balanced_order(offsets)
    for q in prange(n_rows):
        row = order[q]
        P = Lam.copy()
        b = Lam_mu.copy()
        F = np.empty((4, z))
        lo, hi = offsets[row], offsets[row + 1]
        c = lo
        # four cells per update of P: four multiply-adds per load and store of P
        while c + 4 <= hi:
            for u in range(4):
                a1, a2 = idx1[c + u], idx2[c + u]
                for k in range(z):
                    F[u, k] = X1[a1, k] * X2[a2, k]
                ru = alpha * r[c + u]
                for k in range(z):
                    b[k] += ru * F[u, k]
            for k in range(z):
                f0, f1, f2, f3 = alpha * F[0, k], alpha * F[1, k], alpha * F[2, k], alpha * F[3, k]
                for m in range(z):
                    P[k, m] += f0 * F[0, m] + f1 * F[1, m] + f2 * F[2, m] + f3 * F[3, m]
            c += 4
        while c < hi:
            a1, a2 = idx1[c], idx2[c]
            for k in range(z):
                F[0, k] = X1[a1, k] * X2[a2, k]
            rc = alpha * r[c]
            for k in range(z):
                fk = alpha * F[0, k]
                b[k] += rc * F[0, k]
                for m in range(z):
                    P[k, m] += fk * F[0, m]
            c += 1
        L = _cholesky(P)
        # mean = P^-1 b = L^-T L^-1 b ; sample = mean + L^-T eps
        y = _forward(L, b)
        out[row] = _backward(L, y + eps[row])


@njit(cache=True)
def _balanced_order(offsets):
    """Rows by decreasing size, dealt alternately to the two halves of the range so that a
    static split between threads gets similar work."""
    n = offsets.size - 1
    by_size = np.argsort(-(offsets[1:] - offsets[:-1]))
    order = np.empty(n, np.int64)
    half = (n + 1) // 2
    for q in range(n):
        order[q // 2 if q % 2 == 0 else half + q // 2] = by_size[q]
    return order


@njit(cache=True, fastmath=True)
def _cholesky(P):
    z = P.shape[0]
    L = np.zeros((z, z))
    for j in range(z):
        s = P[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        d = np.sqrt(s)
        L[j, j] = d
        for i in range(j + 1, z):
            s = P[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / d
    return L


@njit(cache=True, fastmath=True)
def _forward(L, b):
    z = b.size
    y = np.empty(z)
    for i in range(z):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * y[k]
        y[i] = s / L[i, i]
    return y


@njit(cache=True, fastmath=True)
def _backward(L, y):
    z = y.size
    x = np.empty(z)
    for i in range(z - 1, -1, -1):
        s = y[i]
        for k in range(i + 1, z):
            s -= L[k, i] * x[k]
        x[i] = s / L[i, i]
    return x


def init_state(t: Tensors, rank: int, rng: np.random.Generator) -> GibbsState:
    """Every factor element uniform in [0, 1] (paper 001 §3.3); hyperparameters at the prior."""
    shapes = {"A": t.n_users, "B": t.n_locations, "C": t.n_locations, "D": t.n_slots}
    factors = {name: rng.random((shapes[name], rank)) for name in FACTORS}
    return GibbsState(factors, {n: np.zeros(rank) for n in FACTORS}, {n: np.eye(rank) for n in FACTORS}, 0)


def gibbs_step(state: GibbsState, des: dict[str, Design], alpha: float, prior: Prior,
               rng: np.random.Generator, centered: bool = True) -> GibbsState:
    """One sweep: hyperparameters of every factor, then the rows of A, B, C, D in turn."""
    f = dict(state.factors)
    mu, Lam = {}, {}
    for name in FACTORS:
        mu[name], Lam[name] = sample_hyperparameters(f[name], prior, rng, centered)
    for name in FACTORS:
        X1, X2 = others(name, f)
        f[name] = sample_rows(des[name], X1, X2, alpha, mu[name], Lam[name], rng)
    return GibbsState(f, mu, Lam, state.iteration + 1)


def rmse(t: Tensors, f: dict[str, np.ndarray]) -> float:
    """Root mean squared error of the reconstruction (eq. 2) over all observed cells."""
    R1, R2 = t.transitions, t.visits
    e1 = _residuals(R1.user, R1.i, R1.j, R1.r, f["A"], f["B"], f["C"])
    e2 = _residuals(R2.user, R2.i, R2.j, R2.r, f["A"], f["B"], f["D"])
    return float(np.sqrt((e1 + e2) / max(R1.size + R2.size, 1)))


@njit(parallel=True, cache=True)
def _residuals(n, i, j, r, A, B, C):
    total = 0.0
    z = A.shape[1]
    for c in prange(n.size):
        s = 0.0
        for k in range(z):
            s += A[n[c], k] * B[i[c], k] * C[j[c], k]
        total += (r[c] - s) ** 2
    return total
