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

Scale: the cells are stored once, grouped by user (tensors.Cells). Rows of A sum their
own cells and are drawn in place; the rows of B, C and D are summed over the cells laid out by
target row within blocks of users (tensors.RowOrder, made once per fit). Features, and Gram sums over at most FLUSH cells, are
float32; totals, Cholesky factors and draws are float64 (tests check the conditional against a
float64 computation). The training RMSE of the finished sweep comes from the Gram sums of C and D,
which between them cover every cell once, so it needs no pass of its own.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from .tensors import RowOrder, Tensors

FACTORS = ("A", "B", "C", "D")
#: cells summed in float32 before they are added to a float64 total
FLUSH = 4096
#: cells whose features are laid out together in a Gram sum (1024 x 16 float32: 64 KB, in L2)
CELLS = 1024


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


def sample_hyperparameters(X: np.ndarray, prior: Prior, rng: np.random.Generator,
                           centered: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(mu, Lambda) from the normal-Wishart posterior given the rows of X (BPMF eq. 14).

    ``centered=False`` uses the uncentered second moment X^T X / N in place of the sample
    covariance, as the PPMTF authors' C++ does.
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
    from scipy.stats import wishart        # 0.5 s to import: only when fitting

    Lam = wishart.rvs(df=nu_n, scale=W_n, random_state=rng)
    Lam = np.atleast_2d(Lam)
    cov = np.linalg.inv(beta_n * Lam)
    mu = rng.multivariate_normal(mu_n, (cov + cov.T) / 2, method="cholesky")
    return mu, Lam


# -- Gram sums ---------------------------------------------------------------------------------
@njit(cache=True, fastmath=True)
def _accumulate(P, b, X1, idx1, X2, idx2, r, lo, hi, F, R):
    """P += sum f f^T and b += sum r f over cells lo..hi, f = X1[idx1] * X2[idx2] (float32). The
    features of CELLS cells are laid out as the rows of F (contiguous stores), then P takes one
    product F^T F and b one F^T r (BLAS sgemm and sgemv on one thread: parallel.one_blas_thread),
    each summed in float32 over the block before it is added."""
    z = X1.shape[1]
    cells = F.shape[0]
    s = lo
    while s < hi:
        n = min(cells, hi - s)
        for c in range(n):
            a1, a2 = idx1[s + c], idx2[s + c]
            R[c] = r[s + c]
            for k in range(z):
                F[c, k] = X1[a1, k] * X2[a2, k]
        G = F[:n]
        P += np.dot(G.T, G)
        b += np.dot(G.T, R[:n])
        s += n


@njit(cache=True)
def _gram_scratch(z):
    """Float32 P, features F (one row a cell) and counts R of _accumulate."""
    return np.zeros((z, z), np.float32), np.zeros((CELLS, z), np.float32), np.zeros(CELLS, np.float32)


@njit(cache=True)
def _add_symmetric(dst, P32, z):
    """dst (z x z, float64) += P32 read from its upper triangle."""
    for k in range(z):
        for m in range(k, z):
            v = np.float64(P32[k, m])
            dst[k, m] += v
            if m != k:
                dst[m, k] += v


@njit(parallel=True, cache=True, fastmath=True)
def _user_rows(off1, i1, j1, r1, off2, i2, j2, r2, B, C, D, alpha, Lam, Lam_mu, eps, out):
    """Row n of A drawn from its conditional, its Gram sums taken from user n's cells of R^I
    (features b_i * c_j) and R^II (b_i * d_l) in float32 and never stored."""
    n_users, z = out.shape
    for n in prange(n_users):
        P32, F, R = _gram_scratch(z)
        b = np.zeros(z)
        _accumulate(P32, b, B, i1, C, j1, r1, off1[n], off1[n + 1], F, R)
        _accumulate(P32, b, B, i2, D, j2, r2, off2[n], off2[n + 1], F, R)
        P = np.zeros((z, z))
        _add_symmetric(P, P32, z)
        L = _cholesky(Lam + alpha * P)
        out[n] = _backward(L, _forward(L, Lam_mu + alpha * b) + eps[n])


@njit(parallel=True, cache=True, fastmath=True)
def _row_sums(chunks, block_user, starts, user, other, r, XN, XO, P_acc, b_acc):
    """Gram sums of the rows of a location or slot factor (see tensors.RowOrder): a cell of user n
    with other index o adds f = XN[n] * XO[o] to its target row. Chunk q sums each row's run of
    each of its blocks in float32, FLUSH cells at a time, into P_acc[q]."""
    n_rows, z = P_acc.shape[1], P_acc.shape[2]
    for q in prange(chunks.size - 1):
        P32, F, R = _gram_scratch(z)
        for blk in range(chunks[q], chunks[q + 1]):
            XB = XN[block_user[blk]:]
            for row in range(n_rows):
                s = starts[blk, row]
                while s < starts[blk, row + 1]:
                    e = min(starts[blk, row + 1], s + FLUSH)
                    P32[:] = 0
                    _accumulate(P32, b_acc[q, row], XB, user, XO, other, r, s, e, F, R)
                    _add_symmetric(P_acc[q, row], P32, z)
                    s = e


def _f32(X: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(X, dtype=np.float32)


def draw_user_rows(t: Tensors, f: dict[str, np.ndarray], alpha: float, mu: np.ndarray, Lam: np.ndarray,
                   rng: np.random.Generator) -> np.ndarray:
    """Every row of A from its Gaussian conditional (as draw_rows, with the Gram sums of each user
    made and used in place: no users x z x z array)."""
    R1, R2 = t.transitions, t.visits
    eps = rng.standard_normal((t.n_users, mu.size))
    out = np.empty((t.n_users, mu.size))
    _user_rows(R1.offsets, R1.i, R1.j, R1.r, R2.offsets, R2.i, R2.j, R2.r, _f32(f["B"]), _f32(f["C"]), _f32(f["D"]),
               float(alpha), np.ascontiguousarray(Lam), Lam @ mu, eps, out)
    return out


def gram_sums(order: RowOrder, n_rows: int, XN: np.ndarray, XO: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sum f f^T, sum r f) per target row of ``order``, f = XN[user] * XO[other]."""
    z = XN.shape[1]
    P_acc = np.zeros((order.chunks.size - 1, n_rows, z, z))
    b_acc = np.zeros((order.chunks.size - 1, n_rows, z))
    _row_sums(order.chunks, order.block_user, order.starts, order.user, order.other, order.r, _f32(XN), _f32(XO),
              P_acc, b_acc)
    return P_acc.sum(axis=0), b_acc.sum(axis=0)


# -- Gaussian draws ----------------------------------------------------------------------------
@njit(parallel=True, cache=True, fastmath=True)
def _draw_rows(P_sum, b_sum, alpha, Lam, Lam_mu, eps, out):
    """Row x ~ N(P^-1 b, P^-1), P = Lam + alpha P_sum, b = Lam mu + alpha b_sum, as
    P^-1 b + L^-T eps with P = L L^T."""
    for row in prange(out.shape[0]):
        L = _cholesky(Lam + alpha * P_sum[row])
        out[row] = _backward(L, _forward(L, Lam_mu + alpha * b_sum[row]) + eps[row])


def draw_rows(P_sum: np.ndarray, b_sum: np.ndarray, alpha: float, mu: np.ndarray, Lam: np.ndarray,
              rng: np.random.Generator) -> np.ndarray:
    """Every row of a factor from its Gaussian conditional (the formula of the module)."""
    eps = rng.standard_normal(b_sum.shape)
    out = np.empty(b_sum.shape)
    _draw_rows(P_sum, b_sum, float(alpha), np.ascontiguousarray(Lam), Lam @ mu, eps, out)
    return out


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


# -- one sweep ---------------------------------------------------------------------------------
def init_state(t: Tensors, rank: int, rng: np.random.Generator) -> GibbsState:
    """Every factor element uniform in [0, 1] (paper 001 §3.3); hyperparameters at the prior."""
    shapes = {"A": t.n_users, "B": t.n_locations, "C": t.n_locations, "D": t.n_slots}
    factors = {name: rng.random((shapes[name], rank)) for name in FACTORS}
    return GibbsState(factors, {n: np.zeros(rank) for n in FACTORS}, {n: np.eye(rank) for n in FACTORS}, 0)


def gibbs_step(state: GibbsState, t: Tensors, alpha: float, prior: Prior, rng: np.random.Generator,
               centered: bool = True) -> tuple[GibbsState, float]:
    """One sweep: hyperparameters of every factor, then the rows of A, B, C, D in turn.
    Returns the new state and its training RMSE over all observed cells."""
    f = dict(state.factors)
    mu, Lam = {}, {}
    for name in FACTORS:
        mu[name], Lam[name] = sample_hyperparameters(f[name], prior, rng, centered)
    R1, R2, L, S = t.transitions, t.visits, t.n_locations, t.n_slots

    f["A"] = draw_user_rows(t, f, alpha, mu["A"], Lam["A"], rng)

    A32, o = _f32(f["A"]), t.orders
    P1, b1 = gram_sums(o["B1"], L, A32, f["C"])
    P2, b2 = gram_sums(o["B2"], L, A32, f["D"])
    f["B"] = draw_rows(P1 + P2, b1 + b2, alpha, mu["B"], Lam["B"], rng)

    B32 = _f32(f["B"])
    PC, bC = gram_sums(o["C"], L, A32, B32)
    f["C"] = draw_rows(PC, bC, alpha, mu["C"], Lam["C"], rng)
    PD, bD = gram_sums(o["D"], S, A32, B32)
    f["D"] = draw_rows(PD, bD, alpha, mu["D"], Lam["D"], rng)

    rss = _rss(PC, bC, f["C"], R1.sum_r2) + _rss(PD, bD, f["D"], R2.sum_r2)
    return GibbsState(f, mu, Lam, state.iteration + 1), float(np.sqrt(max(rss, 0.0) / max(t.n_cells, 1)))


def _rss(P: np.ndarray, b: np.ndarray, X: np.ndarray, r2: float) -> float:
    """sum_c (r_c - x . f_c)^2 = sum r^2 - 2 x.b + x^T P x, over the rows x of X."""
    return float(r2 - 2 * np.einsum("rk,rk->", X, b) + np.einsum("rk,rkm,rm->", X, P, X))


def rmse(t: Tensors, f: dict[str, np.ndarray]) -> float:
    """Root mean squared error of the reconstruction (eq. 2) over all observed cells (a direct
    pass; gibbs_step gets the same number from its Gram sums)."""
    R1, R2 = t.transitions, t.visits
    e1 = _residuals(R1.offsets, R1.i, R1.j, R1.r, f["A"], f["B"], f["C"])
    e2 = _residuals(R2.offsets, R2.i, R2.j, R2.r, f["A"], f["B"], f["D"])
    return float(np.sqrt((e1 + e2) / max(t.n_cells, 1)))


@njit(parallel=True, cache=True)
def _residuals(off, i, j, r, A, B, C):
    total = 0.0
    z = A.shape[1]
    for n in prange(off.size - 1):
        for c in range(off[n], off[n + 1]):
            s = 0.0
            for k in range(z):
                s += A[n, k] * B[i[c], k] * C[j[c], k]
            total += (r[c] - s) ** 2
    return total
