"""The plausible-deniability test of PPMTF at scale (paper 001 §3.5, Privacy Test 1).

The test needs log p(y = M(m)) for every synthetic trace y and every candidate m of U*: about
traces x candidates x T steps (220,000 x 32,000 x 24 for an Istanbul-sized job). Candidates are
taken in blocks of CANDIDATE_BLOCK. For a block, each candidate's normalisers Z_m (the clamped row
sums of R^I_m), visit distributions pi_{m,l} and stay probabilities Q_{m,l}(a|a) are built once;
then the still-undecided traces are walked TRACE_CHUNK at a time: the R^I entries of all their
moves under the whole block are one float32 matrix product, and the loops over candidates run
along contiguous memory. A trace's count is updated in the same pass, and it leaves once its count
reaches k (early stop). Probabilities are multiplied in float64, their binary exponents set aside
every LOG_EVERY steps, and one log is taken per trace and candidate; the normalisers come from
float32 products (see generate.clamped_row_sums).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ...privacy.plausible_deniability import PDResult, buckets, choose_candidates
from .generate import PHI, SAFE_MATH, clamped_row_sums, row_block, scaled_rows, visit_distributions

CANDIDATE_BLOCK = 64
#: steps multiplied before the product's exponent is set aside: a move's probability is at least
#: ~1e-23 (phi over the normalisers and visit distributions) and a stay's at least STAY_FLOOR, so
#: four never underflow (>= 1e-300) and the product stays a normal number
LOG_EVERY = 4
#: stay probabilities below this are rounding noise of 1 - sum(moves) (whose absolute error is
#: ~1e-16); they are raised to it
STAY_FLOOR = 1e-75
#: candidates whose tables one parallel task builds with the same scratch arrays
CANDIDATES_PER_TASK = 8
#: rows a of G (and of its transpose) computed together for the stay probabilities
STAY_ROWS = 64
#: traces whose moves go through one matrix product (scratch per parallel task ~0.5 MB at T = 24)
TRACE_CHUNK = 32
#: a float64's mantissa bits, and the exponent bits of 1.0
MANTISSA = np.uint64(2**52 - 1)
ONE_BITS = np.uint64(1023 << 52)
LN2 = float(np.log(2.0))
BUCKET_NONE = np.iinfo(np.int64).max
BUCKET_CLIP = 2.0 ** 62


@njit(parallel=True, cache=True, fastmath=SAFE_MATH)
def _block_tables(A_blk, B, CT32, D, need_stay, phi, invZT, piT, WT, invPiT, stayT):
    """For candidates q of the block: invZT[a, q] = 1 / Z_q[a]; piT[l, a, q] = pi_{q,l}(a),
    WT[l, b, q] = pi_{q,l}(b) / Z_q[b], invPiT[l, a, q] = 1 / pi_{q,l}(a), and
    stayT[l, a, q] = Q_{q,l}(a|a) where need_stay[l, a] (eq. 5).

    The stays of STAY_ROWS locations a are summed together, the loop along a innermost: X[b, a] =
    G[a, b] and Y[b, a] = G[b, a] (G = R^I_q) as float32 products, and each stay adds its terms in
    the order of b, so the sums vectorise without reassociation (see generate.SAFE_MATH)."""
    n_c, z = A_blk.shape
    L, S = B.shape[0], D.shape[0]
    C32 = np.ascontiguousarray(CT32.T)
    n_blocks = (L + STAY_ROWS - 1) // STAY_ROWS
    # the columns of C^T of each block of locations, the same for every candidate
    CT_blocks = np.zeros((n_blocks, z, STAY_ROWS), np.float32)
    for r in range(n_blocks):
        a0 = r * STAY_ROWS
        a1 = min(L, a0 + STAY_ROWS)
        CT_blocks[r, :, :a1 - a0] = CT32[:, a0:a1]
    for task in prange((n_c + CANDIDATES_PER_TASK - 1) // CANDIDATES_PER_TASK):
        # scratch made once per task (see generate.sample_users)
        Ba, Ba32, BaT32 = np.empty((L, z)), np.empty((L, z), np.float32), np.empty((z, L), np.float32)
        BaT = np.empty((z, L))
        Z, pi, w = np.empty(L), np.empty((S, L)), np.empty((S, L))
        X, Y = np.empty((L, STAY_ROWS), np.float32), np.empty((L, STAY_ROWS), np.float32)
        BaT_block = np.zeros((z, STAY_ROWS), np.float32)
        Gr = np.empty((row_block(L), L), np.float32)
        za, f, y = np.empty(STAY_ROWS), np.empty(STAY_ROWS), np.empty(STAY_ROWS)
        inv, total = np.ones((S, STAY_ROWS)), np.empty((S, STAY_ROWS))
        slot_needed = np.empty(S, np.bool_)
        for q in range(task * CANDIDATES_PER_TASK, min(n_c, (task + 1) * CANDIDATES_PER_TASK)):
            scaled_rows(B, A_blk[q], Ba, Ba32, BaT, BaT32)
            clamped_row_sums(BaT32, C32, phi, Z, Gr)
            visit_distributions(BaT, D, phi, -1, 0.0, pi)
            for a in range(L):
                invZT[a, q] = 1.0 / Z[a]
                for l in range(S):
                    w[l, a] = pi[l, a] / Z[a]
                    piT[l, a, q] = pi[l, a]
                    WT[l, a, q] = w[l, a]
                    invPiT[l, a, q] = 1.0 / pi[l, a]
            for r in range(n_blocks):
                a0 = r * STAY_ROWS
                n = min(L, a0 + STAY_ROWS) - a0
                if not need_stay[:, a0:a0 + n].any():
                    continue
                BaT_block[:, :n] = BaT32[:, a0:a0 + n]
                np.dot(C32, BaT_block, X)               # X[b, a] = G[a0 + a, b]
                np.dot(Ba32, CT_blocks[r], Y)           # Y[b, a] = G[b, a0 + a]
                for a in range(n):
                    za[a] = 1.0 / Z[a0 + a]
                for l in range(S):
                    slot_needed[l] = need_stay[l, a0:a0 + n].any()
                    for a in range(n):
                        inv[l, a] = 1.0 / pi[l, a0 + a]
                total[:] = 0.0
                # b outermost: row b of X and Y is clamped once for all slots, and the slots' sums
                # (S x STAY_ROWS) stay in L1; each sum still adds its terms in the order of b
                for b in range(L):
                    for a in range(STAY_ROWS):
                        f[a] = max(np.float64(X[b, a]), phi) * za[a]
                        y[a] = max(np.float64(Y[b, a]), phi)
                    for l in range(S):
                        if slot_needed[l]:
                            wb = w[l, b]
                            for a in range(STAY_ROWS):
                                total[l, a] += min(f[a], y[a] * wb * inv[l, a])
                for l in range(S):
                    for a in range(n):
                        if need_stay[l, a0 + a]:
                            # the b = a term of the sum is Q*(a|a) on both sides of the min
                            own = max(np.float64(X[a0 + a, a]), phi) * za[a]
                            stayT[l, a0 + a, q] = max(1.0 - (total[l, a] - own), STAY_FLOOR)


@njit(cache=True, fastmath=SAFE_MATH)
def _chunk_logliks(locs, slots, rows, lo, hi, A_blkT, B, C, invZT, piT, WT, invPiT, stayT, phi, log_every,
                   X, G, acc, expo, out):
    """out[r - lo, q] = log p(locs[rows[r]] = M(q)) for the traces r in [lo, hi) and the block's
    candidates q; the loops over q run along contiguous memory.

    A move a -> b needs G_q[a, b] and G_q[b, a] (G_q = R^I_q) for every q: the rows
    B[a] * C[b] and B[b] * C[a] of all the chunk's moves go in X and one float32 matrix product
    with the block's A^T gives them all (relative error ~1e-7, far below the buckets' width eta).
    Every log_every steps each product's binary exponent moves to ``expo`` (its mantissa stays in
    [1, 2)), so a trace takes one log per candidate."""
    z, n_c = A_blkT.shape
    T = locs.shape[1]
    n = 0
    for r in range(lo, hi):
        y = locs[rows[r]]
        for t in range(1, T):
            a, b = y[t - 1], y[t]
            if a != b:
                for k in range(z):
                    X[n, k] = np.float32(B[a, k] * C[b, k])
                    X[n + 1, k] = np.float32(B[b, k] * C[a, k])
                n += 2
    if n > 0:
        np.dot(X[:n], A_blkT, G[:n])
    bits = acc.view(np.uint64)
    n = 0
    for r in range(lo, hi):
        y = locs[rows[r]]
        a = y[0]
        for q in range(n_c):
            acc[q] = piT[slots[0], a, q]
            expo[q] = 0
        for t in range(1, T):
            b, l = y[t], slots[t]
            if a == b:
                for q in range(n_c):
                    acc[q] *= stayT[l, a, q]
            else:
                for q in range(n_c):
                    fw = max(np.float64(G[n, q]), phi) * invZT[a, q]
                    bw = max(np.float64(G[n + 1, q]), phi) * WT[l, b, q] * invPiT[l, a, q]
                    acc[q] *= min(fw, bw)
                n += 2
            a = b
            if t % log_every == 0:
                for q in range(n_c):
                    expo[q] += np.int64(bits[q] >> 52) - 1023
                    bits[q] = (bits[q] & MANTISSA) | ONE_BITS
        for q in range(n_c):
            out[r - lo, q] = np.log(acc[q]) + expo[q] * LN2


@njit(cache=True, fastmath=SAFE_MATH)
def _walk_chunk(c, locs, slots, rows, A_blkT, B, C, invZT, piT, WT, invPiT, stayT, phi, log_every):
    """(lo, hi, log-likelihoods (hi - lo, candidates)) of chunk ``c`` of TRACE_CHUNK traces of
    ``rows`` (_chunk_logliks, with the chunk's own scratch)."""
    z, n_c = A_blkT.shape
    lo, hi = c * TRACE_CHUNK, min(rows.size, (c + 1) * TRACE_CHUNK)
    moves = 2 * (hi - lo) * (locs.shape[1] - 1)
    ll = np.empty((hi - lo, n_c))
    _chunk_logliks(locs, slots, rows, lo, hi, A_blkT, B, C, invZT, piT, WT, invPiT, stayT, phi, log_every,
                   np.empty((moves, z), np.float32), np.empty((moves, n_c), np.float32), np.empty(n_c),
                   np.empty(n_c, np.int64), ll)
    return lo, hi, ll


@njit(parallel=True, cache=True, fastmath=SAFE_MATH)
def _block_logliks(locs, slots, rows, A_blkT, B, C, invZT, piT, WT, invPiT, stayT, phi, log_every, out):
    """out[r, q] = log p(locs[rows[r]] = M(q)), TRACE_CHUNK traces at a time (_chunk_logliks)."""
    for c in prange((rows.size + TRACE_CHUNK - 1) // TRACE_CHUNK):
        lo, hi, ll = _walk_chunk(c, locs, slots, rows, A_blkT, B, C, invZT, piT, WT, invPiT, stayT, phi, log_every)
        out[lo:hi] = ll


@njit(parallel=True, cache=True, fastmath=SAFE_MATH)
def _block_hits(locs, slots, rows, blk, source, own_bucket, eta, A_blkT, B, C, invZT, piT, WT, invPiT, stayT,
                phi, log_every, hits):
    """hits[rows[r]] += the block's candidates q (other than the trace's source) whose
    log-likelihood falls in the trace's own bucket (eq. 6, as privacy.buckets)."""
    for c in prange((rows.size + TRACE_CHUNK - 1) // TRACE_CHUNK):
        lo, hi, ll = _walk_chunk(c, locs, slots, rows, A_blkT, B, C, invZT, piT, WT, invPiT, stayT, phi, log_every)
        for r in range(lo, hi):
            i = rows[r]
            for q in range(blk.size):
                if blk[q] != source[i] and _bucket(ll[r - lo, q], eta) == own_bucket[i]:
                    hits[i] += 1


@njit(cache=True, fastmath=False)
def _bucket(loglik, eta):
    """privacy.plausible_deniability.buckets of one log-likelihood. fastmath is off on purpose: a
    callee inherits its caller's flags unless it sets its own, and with ninf / nnan the test for
    -inf and nan would be folded away (the walk's log-likelihoods are finite: every product stays a
    positive normal number; the reference's buckets are kept for any input)."""
    x = -loglik / eta
    if not np.isfinite(x):
        return BUCKET_NONE
    return np.int64(min(max(np.floor(x), -BUCKET_CLIP), BUCKET_CLIP))


def _needed_stays(locs: np.ndarray, slots: np.ndarray, n_slots: int, n_locations: int) -> np.ndarray:
    stay = locs[:, 1:] == locs[:, :-1]
    need = np.zeros((n_slots, n_locations), bool)
    need[np.broadcast_to(slots[1:], stay.shape)[stay], locs[:, 1:][stay]] = True
    return need


def block_tables(factors: dict, candidates: np.ndarray, need: np.ndarray) -> tuple:
    """The arguments of _block_logliks / _block_hits after the rows: the block's A^T (float32),
    B, C and its candidates' tables (_block_tables)."""
    A_blk = np.ascontiguousarray(factors["A"][candidates])
    B, C, D = (np.ascontiguousarray(factors[n]) for n in ("B", "C", "D"))
    L, S, n_c = B.shape[0], D.shape[0], candidates.size
    CT32 = np.ascontiguousarray(C.T, dtype=np.float32)
    invZT = np.empty((L, n_c))
    piT, WT, invPiT, stayT = (np.empty((S, L, n_c)) for _ in range(4))
    stayT[:] = 1.0
    _block_tables(A_blk, B, CT32, D, need, PHI, invZT, piT, WT, invPiT, stayT)
    return np.ascontiguousarray(A_blk.T, dtype=np.float32), B, C, invZT, piT, WT, invPiT, stayT, PHI, LOG_EVERY


def block_logliks(factors: dict, candidates: np.ndarray, locs: np.ndarray, slots: np.ndarray,
                  rows: np.ndarray, need: np.ndarray) -> np.ndarray:
    """log p(y = M(m)) of traces ``locs[rows]`` under the candidates (one block), (rows, candidates)."""
    out = np.empty((rows.size, candidates.size))
    _block_logliks(locs, slots, rows, *block_tables(factors, candidates, need), out)
    return out


def own_logliks(factors: dict, locs: np.ndarray, slots: np.ndarray, source: np.ndarray,
                need: np.ndarray) -> np.ndarray:
    """log p(y = M(source)) of every trace, source users taken a block at a time."""
    users = np.unique(source)
    own = np.empty(source.size)
    order = np.argsort(source, kind="stable")
    sorted_src = source[order]
    for lo in range(0, users.size, CANDIDATE_BLOCK):
        blk = users[lo:lo + CANDIDATE_BLOCK]
        a, b = np.searchsorted(sorted_src, [blk[0], blk[-1] + 1])
        rows = order[a:b]
        ll = block_logliks(factors, blk, locs, slots, rows, need)
        own[rows] = ll[np.arange(rows.size), np.searchsorted(blk, source[rows])]
    return own


def pd_test_factors(factors: dict, locs: np.ndarray, slots: np.ndarray, source: np.ndarray, n_slots: int,
                    k: int = 10, eta: float = 1.0, candidates: int | None = None, seed: int = 0,
                    own: np.ndarray | None = None, early_stop: bool = True, progress=None) -> PDResult:
    """Privacy Test 1 of traces ``locs`` (n_traces, T) generated from training rows ``source``,
    against the candidates U* (``candidates`` of them, drawn with ``seed``; None: all users).

    ``own``: log p(y = M(source)) when known (the log-likelihoods written at generation), else
    computed. With ``early_stop`` a trace stops counting once it reaches k, so the counts of
    passing traces are lower bounds (pass/fail is exact); without it every count is exact.
    """
    locs = np.ascontiguousarray(locs, dtype=np.int64)
    slots = np.ascontiguousarray(slots, dtype=np.int64)
    source = np.ascontiguousarray(source, dtype=np.int64)
    n_users = factors["A"].shape[0]
    cand = choose_candidates(n_users, candidates, seed, k, eta, source)
    need = _needed_stays(locs, slots, n_slots, factors["B"].shape[0])
    if own is None:
        own = own_logliks(factors, locs, slots, source, need)
    own_bucket = buckets(own, eta)
    hits = np.zeros(source.size, np.int64)
    active = np.arange(source.size)
    for lo in range(0, cand.size, CANDIDATE_BLOCK):
        blk = cand[lo:lo + CANDIDATE_BLOCK]
        _block_hits(locs, slots, active, blk, source, own_bucket, float(eta), *block_tables(factors, blk, need), hits)
        if early_stop:
            active = active[hits[active] + 1 < k]
        if progress is not None:
            progress(min(lo + CANDIDATE_BLOCK, cand.size), cand.size)
        if active.size == 0:
            break
    counts = hits + 1
    return PDResult(counts, counts >= k, own, cand, k, eta)
