"""Fake traces from seeds (paper 002 §V-A, §V-B, Fig. 2's Synthesizer) and the privacy tests
(§V-D eqs. 12-13, §V-E eq. 14).

One try from a seed trace s:

1. C' : the semantic classes with locations removed (par_c);
2. the semantic seed: at each step t the kept locations of s(t)'s class, merged with the class
   of a nearby class change at distance dt with probability par_m^dt, without s(t) itself with
   probability par_l;
3. the fake: randomized Viterbi decoding over the aggregate model, every candidate score
   multiplied by U(1, par_v) (added in logs), emissions 0/1 (a location is allowed at a step or
   not);
4. the privacy tests: |intersection(f, s)| <= delta_i, sim_G(f, s) <= delta_s and at least k
   other training users a with |sim_S(s, f) - sim_S(a, f)| <= delta_d.

``tool`` switches steps 1-2 to the authors' tool: per class, floor(par_c |C|) locations removed
when at least 3 remain (instead of each with probability par_c), and only the next class change
merged, with probability par_m^(dt^2). Where a step's set would be empty (every location of the
class removed, or a class of one location without s(t)), the step falls back to the whole class
without s(t), then to every location but s(t): a choice of ours, the paper does not say.

Tries of one user draw from one SplitMix64 stream seeded by (seed, user) (core/rng.py), so a user's
fakes do not depend on which other users are generated, or where.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...core.rng import below, uniform
from .similarity import semantic_value_sorted


@njit(cache=True)
def _add_class(c, mptr, members, keep, use_keep, exclude, stamp, stamp_id, buf, pos):
    for i in range(mptr[c], mptr[c + 1]):
        r = members[i]
        if (use_keep and not keep[r]) or r == exclude or stamp[r] == stamp_id:
            continue
        stamp[r] = stamp_id
        buf[pos] = r
        pos += 1
    return pos


@njit(cache=True)
def semantic_seed(seed, labels, mptr, members, par_c, par_m, par_l, tool, state, keep, stamp, set_ptr, buf):
    """Fill ``set_ptr`` (T + 1) and ``buf`` with the allowed locations of every step (steps 1-2)."""
    T = seed.size
    R = labels.size
    n_classes = mptr.size - 1
    # 1. C'
    for r in range(R):
        keep[r] = True
    for c in range(n_classes):
        lo, hi = mptr[c], mptr[c + 1]
        size = hi - lo
        if tool:
            n_remove = int(np.floor(par_c * size))
            if n_remove > 0 and size - n_remove >= 3:
                pool = members[lo:hi].copy()
                for j in range(n_remove):
                    k = j + below(state, size - j)
                    pool[j], pool[k] = pool[k], pool[j]
                    keep[pool[j]] = False
        else:
            for i in range(lo, hi):
                if uniform(state) < par_c:
                    keep[members[i]] = False
    # 2. the semantic seed
    cls = np.empty(T, np.int64)
    for t in range(T):
        cls[t] = labels[seed[t]]
    nxt = np.full(T, -1, np.int64)
    prv = np.full(T, -1, np.int64)
    for t in range(T - 2, -1, -1):
        nxt[t] = t + 1 if cls[t + 1] != cls[t] else nxt[t + 1]
    for t in range(1, T):
        prv[t] = t - 1 if cls[t - 1] != cls[t] else prv[t - 1]
    pos = 0
    for t in range(T):
        set_ptr[t] = pos
        stamp_id = t + 1
        u_true, u_next, u_prev = uniform(state), uniform(state), uniform(state)
        exclude = seed[t] if u_true < par_l else -1
        pos = _add_class(cls[t], mptr, members, keep, True, exclude, stamp, stamp_id, buf, pos)
        if nxt[t] >= 0:
            dt = nxt[t] - t
            if u_next < par_m ** (dt * dt if tool else dt):
                pos = _add_class(cls[nxt[t]], mptr, members, keep, True, exclude, stamp, stamp_id, buf, pos)
        if not tool and prv[t] >= 0:
            dt = t - prv[t]
            if u_prev < par_m ** dt:
                pos = _add_class(cls[prv[t]], mptr, members, keep, True, exclude, stamp, stamp_id, buf, pos)
        if pos == set_ptr[t]:
            pos = _add_class(cls[t], mptr, members, keep, False, exclude, stamp, stamp_id, buf, pos)
        if pos == set_ptr[t]:
            for r in range(R):
                if r != exclude:
                    buf[pos] = r
                    pos += 1
    set_ptr[T] = pos
    # reset the stamps for the next try
    for i in range(pos):
        stamp[buf[i]] = 0


@njit(cache=True)
def viterbi(set_ptr, buf, log_p, log_pi, period, par_v, state, out):
    """Randomized Viterbi decoding (§V-B): the path through the allowed sets maximising
    log pi(x_0) + sum_t log p_{period(t-1)}(x_{t-1}, x_t), every candidate score perturbed by
    log U(1, par_v) (par_v = 1: the most likely path). Returns the path's unperturbed
    log-likelihood under the aggregate model."""
    T = set_ptr.size - 1
    n = set_ptr[T]
    score = np.empty(n)
    back = np.full(n, -1, np.int64)
    noisy = par_v > 1.0
    for i in range(set_ptr[0], set_ptr[1]):
        s = log_pi[period[0], buf[i]]
        if noisy:
            s += np.log(1.0 + (par_v - 1.0) * uniform(state))
        score[i] = s
    for t in range(1, T):
        tau = period[t - 1]
        for j in range(set_ptr[t], set_ptr[t + 1]):
            best, arg = -np.inf, -1
            for i in range(set_ptr[t - 1], set_ptr[t]):
                s = score[i] + log_p[tau, buf[i], buf[j]]
                if noisy:
                    s += np.log(1.0 + (par_v - 1.0) * uniform(state))
                if s > best:
                    best, arg = s, i
            score[j] = best
            back[j] = arg
    best, arg = -np.inf, -1
    for i in range(set_ptr[T - 1], set_ptr[T]):
        if score[i] > best:
            best, arg = score[i], i
    for t in range(T - 1, -1, -1):
        out[t] = buf[arg]
        arg = back[arg]
    ll = log_pi[period[0], out[0]]
    for t in range(1, T):
        ll += log_p[period[t - 1], out[t - 1], out[t]]
    return ll


@njit(cache=True)
def _profile(trace, period, n_periods, counts, sorted_out, weight_out):
    """Visit distribution of ``trace`` per period into ``counts`` (periods, R) (caller resets),
    its decreasingly sorted rows into ``sorted_out`` (periods, M) and Pr{tau} into ``weight_out``."""
    T = trace.size
    n_tau = np.zeros(n_periods)
    for t in range(T):
        counts[period[t], trace[t]] += 1.0
        n_tau[period[t]] += 1.0
    M = sorted_out.shape[1]
    for tau in range(n_periods):
        weight_out[tau] = n_tau[tau] / T
        vals = np.zeros(T)
        m = 0
        for t in range(T):
            if period[t] == tau:
                r = trace[t]
                if counts[tau, r] > 0:
                    vals[m] = counts[tau, r] / n_tau[tau]
                    m += 1
                    counts[tau, r] = -counts[tau, r]     # mark: counted once
        for t in range(T):
            if period[t] == tau and counts[tau, trace[t]] < 0:
                counts[tau, trace[t]] = -counts[tau, trace[t]]
        v = np.sort(vals[:m])[::-1]
        for i in range(M):
            sorted_out[tau, i] = v[i] if i < m else 0.0


@njit(cache=True)
def privacy_scores(fake, seed, period, u, test, delta_d, k_pd, sorted_all, weight_all, counts_s, counts_f,
                   sorted_s, sorted_f, w_s, w_f):
    """(|intersection(f, s)|, sim_G(f, s), sim_S(u, f), alternatives) of a fake ``fake`` of seed
    trace ``seed`` of training user ``u`` (eqs. 12-14).

    The intersection counts the instants where the fake is at the seed's location; sim_G is
    the Hamming-ground geographic similarity of their visit distributions per period (eq. 7's
    zeroth-order form, weighted by the fake's Pr{tau}); sim_S(x, f) is eq. (10) between user x's
    profile (all of x's days) and the fake; alternatives are the other training users a with
    |sim_S(u, f) - sim_S(a, f)| <= delta_d, counted up to ``k_pd`` (only with ``test``).
    The count buffers (periods, R) must be zero and are left zero."""
    T = fake.size
    P = counts_s.shape[0]
    M = sorted_all.shape[2]
    inter = 0
    for t in range(T):
        if fake[t] == seed[t]:
            inter += 1
    _profile(seed, period, P, counts_s, sorted_s, w_s)
    _profile(fake, period, P, counts_f, sorted_f, w_f)
    geo = 0.0
    for tau in range(P):
        s = 0.0
        for t in range(T):
            if period[t] == tau and counts_f[tau, fake[t]] > 0:
                r = fake[t]
                a, b = counts_f[tau, r], counts_s[tau, r]
                s += min(a, b)
                counts_f[tau, r] = -a                  # count each location once
        for t in range(T):
            if period[t] == tau and counts_f[tau, fake[t]] < 0:
                counts_f[tau, fake[t]] = -counts_f[tau, fake[t]]
        n_tau = w_f[tau] * T
        if n_tau > 0:
            geo += w_f[tau] * s / n_tau
    sem_seed = semantic_value_sorted(sorted_all[u], weight_all[u], sorted_f[:, :M])
    alt = 0
    if test:
        for a in range(sorted_all.shape[0]):
            if a == u:
                continue
            if abs(semantic_value_sorted(sorted_all[a], weight_all[a], sorted_f[:, :M]) - sem_seed) <= delta_d:
                alt += 1
                if alt >= k_pd:
                    break
    for t in range(T):
        counts_s[period[t], seed[t]] = 0.0
        counts_f[period[t], fake[t]] = 0.0
    return inter, geo, sem_seed, alt


@njit(cache=True)
def fakes_kernel(users, words, day_ptr, day_locs, days, k, max_tries, labels, mptr, members, log_p, log_pi,
                 period_day, par_c, par_m, par_l, par_v, tool, test, delta_i, delta_s, delta_d, k_pd,
                 sorted_all, weight_all, out_locs, out_ll, out_inter, out_geo, out_sem, out_alt, out_n,
                 out_tries):
    """Fakes of every user in ``users``: tries until ``k`` pass (or, without ``test``, the
    first ``k``) or ``max_tries`` are spent. ``day_ptr``/``day_locs``: each user's complete day
    traces; a fake of ``days`` days decodes that many consecutive day traces of its user, from
    a random one (wrapping)."""
    Tday = day_locs.shape[1]
    T = days * Tday
    R = labels.size
    P = log_pi.shape[0]
    M = sorted_all.shape[2]
    period = np.empty(T, np.int64)
    for t in range(T):
        period[t] = period_day[t % Tday]
    keep = np.empty(R, np.bool_)
    stamp = np.zeros(R, np.int64)
    set_ptr = np.empty(T + 1, np.int64)
    buf = np.empty(T * R, np.int64)
    seed = np.empty(T, np.int64)
    fake = np.empty(T, np.int64)
    counts_s = np.zeros((P, R))
    counts_f = np.zeros((P, R))
    sorted_s = np.zeros((P, max(M, T)))
    sorted_f = np.zeros((P, max(M, T)))
    w_s = np.empty(P)
    w_f = np.empty(P)
    state = np.zeros(1, np.uint64)
    for q in range(users.size):
        u = users[q]
        state[0] = words[q]
        n_days = day_ptr[u + 1] - day_ptr[u]
        accepted = 0
        tries = 0
        if n_days == 0:              # a user without events seeds nothing
            out_n[q] = 0
            out_tries[q] = 0
            continue
        while accepted < k and tries < max_tries:
            tries += 1
            start = below(state, n_days)
            for d in range(days):
                row = day_ptr[u] + (start + d) % n_days
                for t in range(Tday):
                    seed[d * Tday + t] = day_locs[row, t]
            semantic_seed(seed, labels, mptr, members, par_c, par_m, par_l, tool, state, keep, stamp, set_ptr, buf)
            ll = viterbi(set_ptr, buf, log_p, log_pi, period, par_v, state, fake)
            inter, geo, sem_seed, alt = privacy_scores(fake, seed, period, u, test, delta_d, k_pd, sorted_all,
                                                       weight_all, counts_s, counts_f, sorted_s, sorted_f, w_s, w_f)
            ok = (not test) or (inter <= delta_i and geo <= delta_s and alt >= k_pd)
            if ok:
                for t in range(T):
                    out_locs[q, accepted, t] = fake[t]
                out_ll[q, accepted] = ll
                out_inter[q, accepted] = inter
                out_geo[q, accepted] = geo
                out_sem[q, accepted] = sem_seed
                out_alt[q, accepted] = alt
                accepted += 1
        out_n[q] = accepted
        out_tries[q] = tries
