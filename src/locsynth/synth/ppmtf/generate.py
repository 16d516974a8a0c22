"""Trace generation via Metropolis-Hastings (paper 001 §3.4) and trace likelihoods (§3.5).

For user n: R^I_n = (B * a_n) C^T and R^II_n = (B * a_n) D^T by eq. (2), entries below
phi = 1e-8 raised to phi. Q*_n is R^I_n with rows normalised; pi_{n,l} is column l of R^II_n
normalised. The MH matrix of slot l (eq. 5) is, for a != b,

.. math:: Q_{n,l}(b|a) = Q^*_n(b|a) \\min\\left(1, \\frac{\\pi_{n,l}(b) Q^*_n(a|b)}{\\pi_{n,l}(a) Q^*_n(b|a)}\\right)
          = \\min\\left(Q^*_n(b|a), \\frac{\\pi_{n,l}(b) Q^*_n(a|b)}{\\pi_{n,l}(a)}\\right)

and Q_{n,l}(a|a) takes the remaining mass, so pi_{n,l} is stationary for Q_{n,l}. A trace starts
from pi of its first instant's slot and moves with Q of each instant's slot. MH rows are computed
only where a trace is, so nothing of size users x locations x locations is kept.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

PHI = 1e-8
#: fast-math flags that never change a finite result: no reassociation and no FMA contraction.
#: With those, LLVM compiled reductions differently in a fresh compile and in numba's cache, so
#: a Dask worker's log-likelihoods differed from the serial run's in the last bits (numba issue
#: 10617); sums that must vectorise are written as ordered_sum or as elementwise loops instead.
SAFE_MATH = {"nnan", "ninf", "nsz"}


class UserModel(NamedTuple):
    """Q*_n (``Q``: Q[a, b] = Q*(b|a)), its transpose ``QT`` (QT[a, b] = Q*(a|b)) and
    ``piT`` (n_slots, n_locations): pi_{n,l} as rows. All C-contiguous."""

    Q: np.ndarray
    QT: np.ndarray
    piT: np.ndarray


def reconstruct(a: np.ndarray, B: np.ndarray, C: np.ndarray, D: np.ndarray, phi: float = PHI) -> UserModel:
    """The generative model of the user with factor row ``a`` (eq. 2, values below phi raised)."""
    Ba = B * a
    G = np.maximum(Ba @ C.T, phi)                 # G[i, j] = r^I_{n,i,j}
    GT = np.maximum(C @ Ba.T, phi)                # its transpose, computed rather than copied
    Z = G.sum(axis=1)
    V = np.maximum(D @ Ba.T, phi)                 # (n_slots, n_locations)
    return UserModel(G / Z[:, None], GT / Z[None, :], V / V.sum(axis=1, keepdims=True))


@njit(cache=True)
def _draw(p, u):
    """Index drawn from probabilities ``p`` with the uniform ``u`` (inverse CDF). The running sum
    goes eight entries at a time (each eight summed as a tree, so their sums overlap in the
    pipeline) and only the eight that cross u times the total are scanned one by one."""
    target = u * ordered_sum(p)
    acc = 0.0
    n = p.size
    k = 0
    while k + 8 <= n:
        blk = ((p[k] + p[k + 1]) + (p[k + 2] + p[k + 3])) + ((p[k + 4] + p[k + 5]) + (p[k + 6] + p[k + 7]))
        if target < acc + blk:
            break
        acc += blk
        k += 8
    for j in range(k, n):
        acc += p[j]
        if target < acc:
            return j
    for j in range(n - 1, -1, -1):  # rounding slack: the last location with mass
        if p[j] > 0:
            return j
    return n - 1


@njit(parallel=True, cache=True)
def move_logprobs(Q, QT, piT, slot, a, b):
    """log Q_{n,l}(b|a) of each step (l, a, b): O(1) for a move, O(L) for a stay (a == b)."""
    out = np.empty(slot.size)
    L = Q.shape[0]
    for q in prange(slot.size):
        l, i, j = slot[q], a[q], b[q]
        p = piT[l]
        inv = 1.0 / p[i]
        if i != j:
            f, r = Q[i, j], p[j] * QT[i, j] * inv
            out[q] = np.log(f if f < r else r)
        else:
            total = 0.0
            for k in range(L):
                f, r = Q[i, k], p[k] * QT[i, k] * inv
                total += f if f < r else r
            total -= Q[i, i]          # min(Q(i,i), p_i Q(i,i) / p_i) = Q(i,i): not a move
            out[q] = np.log(max(1.0 - total, 1e-300))
    return out


class StepIndex:
    """The distinct steps of many equally long traces, so that the log-likelihoods of all of them
    under one user are two sparse products: ``first`` (slot, location) pairs and ``moves``
    (slot, from, to) triples, with their counts per trace."""

    def __init__(self, locs: np.ndarray, slots: np.ndarray, n_locations: int):
        import scipy.sparse as sp

        n, T = locs.shape
        locs = locs.astype(np.int64)
        slots = np.asarray(slots, np.int64)
        first, col = np.unique(slots[0] * n_locations + locs[:, 0], return_inverse=True)
        self.first_slot, self.first_loc = first // n_locations, first % n_locations
        self.M0 = sp.csr_array((np.ones(n), (np.arange(n), col.ravel())), shape=(n, first.size))
        key = ((slots[1:][None, :] * n_locations + locs[:, :-1]) * n_locations + locs[:, 1:]).ravel()
        moves, col = np.unique(key, return_inverse=True)
        rows = np.repeat(np.arange(n), max(T - 1, 0))
        self.M = sp.csr_array((np.ones(rows.size), (rows, col.ravel())), shape=(n, moves.size))
        self.M.sum_duplicates()
        self.move_slot = moves // (n_locations * n_locations)
        self.move_from = (moves // n_locations) % n_locations
        self.move_to = moves % n_locations

    def logliks(self, m: UserModel, rows: np.ndarray | None = None) -> np.ndarray:
        """log p(y = M(n)) of every trace (or of ``rows``) under the user model ``m``."""
        lp = move_logprobs(m.Q, m.QT, m.piT, self.move_slot, self.move_from, self.move_to)
        lf = np.log(m.piT[self.first_slot, self.first_loc])
        M, M0 = (self.M, self.M0) if rows is None else (self.M[rows], self.M0[rows])
        return M @ lp + M0 @ lf


# -- at scale: one user's tables on the fly, MH rows only along the path ---------------------
#: rows of R^I_n computed per block when summing its clamped rows
#: float32 entries of G^T in one block of clamped_row_sums (64 KB)
BLOCK_ENTRIES = 16384
#: users generated by one parallel task, which makes its scratch arrays once
USERS_PER_TASK = 16


@njit(cache=True)
def clamped_row_sums(BaT32, C32, phi, out, G):
    """out[i] = sum_j max((B * a_n) C^T [i, j], phi): the normalisers of Q*_n (eq. 2 and §3.4), the
    one part of a user's model that needs all L^2 entries; float32 products (G.shape[0] rows j of
    G^T = C (B * a_n)^T at a time, into the scratch G: see :func:`row_block`), float64 sums.

    Every product adds its K terms in the order of k and every out[i] its terms in the order of j,
    with the loops along i vectorised without reassociating anything, so the sums depend neither on
    the scratch's rows nor on how LLVM compiled the kernel nor on a BLAS: a BLAS's float32 products
    differed in their last bits between block shapes and thread counts (OpenBLAS on AMD EPYC), and
    with fastmath a row reduction came out differently from a fresh compile and from numba's cache,
    so a Dask worker's traces differed from the serial run's."""
    L = out.shape[0]
    K = BaT32.shape[0]
    rows = G.shape[0]
    out[:] = 0.0
    for j0 in range(0, L, rows):
        j1 = min(L, j0 + rows)
        G[:j1 - j0] = 0.0
        for k in range(K):
            b = BaT32[k]
            for j in range(j1 - j0):
                c = C32[j0 + j, k]
                g = G[j]
                for i in range(L):
                    g[i] += c * b[i]
        for j in range(j1 - j0):
            for i in range(L):
                g = G[j, i]
                out[i] += g if g > phi else phi


@njit(cache=True)
def row_block(L):
    """Rows of the scratch G of :func:`clamped_row_sums`: BLOCK_ENTRIES / L, from 8 to 256, so that
    a block's rows are summed while still in cache."""
    return min(256, max(8, BLOCK_ENTRIES // L))


@njit(cache=True, fastmath=SAFE_MATH)
def visit_distributions(BaT, D, phi, home, boost, out):
    """pi_{n,l} for every slot l into ``out`` (n_slots, L) from BaT = (B * a_n)^T: R^II_n^T = D BaT
    as one product; with ``home >= 0`` the home's count is raised by ``boost`` in the first and
    last slots before normalising (paper 003 App. D)."""
    S, L = out.shape
    np.dot(D, BaT, out)
    for l in range(S):
        for i in range(L):
            out[l, i] = out[l, i] if out[l, i] > phi else phi
    if home >= 0:
        out[0, home] += boost
        out[S - 1, home] += boost
    for l in range(S):
        out[l] /= ordered_sum(out[l])


@njit(cache=True, fastmath=SAFE_MATH)
def mh_row_lazy(BaT, CT, Z, p, w, a, phi, g_ab, g_ba, fresh, out):
    """Row ``a`` of Q_{n,l} (eq. 5) from the factors (transposed, z x L): Q*(b|a) =
    max(G[a,b], phi) / Z[a] and Q*(a|b) = max(G[b,a], phi) / Z[b], G = (B * a_n) C^T, without
    forming G: row a and column a of G as 2 z axpys of length L, made only when ``fresh`` (a
    trace that stays at a reuses them). ``w`` = p / Z elementwise."""
    z, L = BaT.shape
    if fresh:
        g_ab[:] = 0.0
        g_ba[:] = 0.0
        for k in range(z):
            x, y = BaT[k, a], CT[k, a]
            for b in range(L):
                g_ab[b] += x * CT[k, b]
                g_ba[b] += y * BaT[k, b]
    inv = 1.0 / p[a]
    za = 1.0 / Z[a]
    for b in range(L):
        f = max(g_ab[b], phi) * za
        r = max(g_ba[b], phi) * w[b] * inv
        out[b] = min(f, r)
    total = ordered_sum(out) - out[a]
    out[a] = 1.0 - total


@njit(cache=True)
def ordered_sum(x):
    """The sum of ``x`` in a fixed order: eight interleaved partial sums, then those pairwise. Eight
    independent chains keep the adders busy as a vectorised (reassociated) sum would, and the
    result does not depend on how the kernel was compiled."""
    n = x.size
    m = n - n % 8
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    for b in range(0, m, 8):
        s0 += x[b]
        s1 += x[b + 1]
        s2 += x[b + 2]
        s3 += x[b + 3]
        s4 += x[b + 4]
        s5 += x[b + 5]
        s6 += x[b + 6]
        s7 += x[b + 7]
    tail = 0.0
    for b in range(m, n):
        tail += x[b]
    return (((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))) + tail


@njit(cache=True)
def scaled_rows(B, a, Ba, Ba32, BaT, BaT32):
    """B * a_n (the rows of R^I_n = (B * a_n) C^T) into Ba, its float32 copy Ba32, its transpose
    BaT (float64, or float32 rounded as Ba32) and the transpose's float32 copy BaT32, in place."""
    L, z = B.shape
    for i in range(L):
        for k in range(z):
            Ba[i, k] = B[i, k] * a[k]
            Ba32[i, k] = Ba[i, k]
            BaT[k, i] = Ba[i, k]
            BaT32[k, i] = Ba32[i, k]


@njit(parallel=True, cache=True)
def sample_users(feature, B, CT, D, C32, slots, uniforms, homes, boost, phi, out, loglik):
    """Traces of every row of ``feature`` (a user's a_n): uniforms (n, traces, T) -> locations
    ``out`` (n * traces, T) and log-likelihoods (§3.4-3.5); memory per thread O(L z + S L)."""
    n, n_tr, T = uniforms.shape
    L, z = B.shape
    S = D.shape[0]
    for c in prange((n + USERS_PER_TASK - 1) // USERS_PER_TASK):
        # scratch made once per task: per-user arrays of 100 KB to 1 MB would each be an mmap
        # where malloc keeps a fixed mmap threshold (as Dask workers set it)
        Ba, BaT = np.empty((L, z)), np.empty((z, L))
        Ba32, BaT32 = np.empty((L, z), np.float32), np.empty((z, L), np.float32)
        G = np.empty((row_block(L), L), np.float32)
        Z, piT, W = np.empty(L), np.empty((S, L)), np.empty((S, L))
        row, g_ab, g_ba = np.empty(L), np.empty(L), np.empty(L)
        for q in range(c * USERS_PER_TASK, min(n, (c + 1) * USERS_PER_TASK)):
            scaled_rows(B, feature[q], Ba, Ba32, BaT, BaT32)
            clamped_row_sums(BaT32, C32, phi, Z, G)
            visit_distributions(BaT, D, phi, homes[q], boost, piT)
            for l in range(S):
                for i in range(L):
                    W[l, i] = piT[l, i] / Z[i]
            for k in range(n_tr):
                w = q * n_tr + k
                p0 = piT[slots[0]]
                a = _draw(p0, uniforms[q, k, 0])
                out[w, 0] = a
                ll = np.log(p0[a])
                made = -1
                for t in range(1, T):
                    mh_row_lazy(BaT, CT, Z, piT[slots[t]], W[slots[t]], a, phi, g_ab, g_ba, a != made, row)
                    made = a
                    b = _draw(row, uniforms[q, k, t])
                    ll += np.log(row[b])
                    a = b
                    out[w, t] = a
                loglik[w] = ll
