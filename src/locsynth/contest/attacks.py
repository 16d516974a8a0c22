"""The contest's attacks (paper 003 §4.1, §5.3 and Appendix F): each takes the reference traces
(what the attacker knows) and the pseudonymized anonymized traces, and returns an inferred ID table
(re-identification) and inferred traces (trace inference).

* ``rand``: a uniformly random user per pseudonym; a uniformly random region per event.
* ``visitprob`` (VisitProb-R/-T): a visit-probability vector per user from the reference traces,
  zeros floored at delta = 1e-8; a pseudonym's log-likelihood sums log p_u(r) over its exact
  events and log mean_{r in set} p_u(r) over its generalized ones (deleted events skipped); the
  most likely user is named. Trace inference re-identifies the pseudonyms in order without
  naming a user twice, then de-obfuscates: an exact event as released, a generalized one as a
  random member, a deleted one as a random region.
* ``homeprob`` (HomeProb-R/-T): VisitProb restricted to the events between 8:00 and 8:59.
* ``fuzzy`` (the winning attack, §5.3): fuzzy visit counts (each visit adds
  h(d) = eta0 exp(-lambda0 d) to the 8 surrounding regions, d in cells), TF-IDF weighting and the
  nearest neighbour (cosine similarity), the reference visits released the way the anonymized
  traces generalize (so MRLH's blocks are compared with blocks); trace inference de-obfuscates the re-identified traces
  like VisitProb-T and then puts the user's frequent reference region (the most visited at that
  time of day, on more than half of the reference days) in place of the released one.

The organisers' scripts take two shortcuts, for speed; the paper describes the full likelihood,
which is what this module computes by default. VisitProb scores only a random 10 % of the events
(``SmplProg_IDDisclose/I2-VisitProb.py``: ``P = 0.1``); HomeProb scores every event of its hour
(``I3-HomeProb.py`` and ``SmplProg_TraceInfer/T3-HomeProb.py`` sample nothing). Both score a
generalized event by at most L = 10 of its regions. ``event_share`` < 1 reproduces the first
shortcut (VisitProb only: :func:`attack` refuses it for HomeProb), ``region_cap`` = L the second
(regions drawn without replacement). All randomness comes from ``seed``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..core.errors import InputError, unknown
from ..data.space import Grid
from ..data.traces import DELETED, TraceSet, ranges, generalized_code
from ..metrics.visits import trace_visit_counts

DELTA = 1e-8
ATTACKS = ("rand", "visitprob", "homeprob", "fuzzy")
#: the organisers' kit: regions of a generalized event VisitProb and HomeProb score (L), and the
#: share of events VisitProb scores (P)
KIT_REGIONS = 10
KIT_EVENT_SHARE = 0.1


@dataclass(frozen=True)
class Inference:
    """An attack's output: ``table`` (``pse_id,user_id``) and ``traces`` (inferred, exact,
    one trace per inferred user id on the anonymized set's instants)."""

    table: pd.DataFrame
    traces: TraceSet


def attack(name: str, reference: TraceSet, anonymized: TraceSet, *, seed: int = 0, **options) -> Inference:
    """Run the attack ``name`` (one of ATTACKS) on pseudonymized ``anonymized`` traces."""
    if name not in ATTACKS:
        raise unknown("attack", name, ATTACKS)
    reference.require_exact("the attacks' reference traces")
    if reference.space.n_locations != anonymized.space.n_locations:
        raise InputError("the reference and anonymized traces are on different spaces")
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(51, ATTACKS.index(name))))
    if name == "rand":
        return _random(reference, anonymized, rng)
    if name == "homeprob" and options.get("event_share", 1.0) != 1.0:
        raise InputError("HomeProb scores every event of 8:00-8:59, as the organisers' kit does: event_share "
                         "applies to VisitProb only")
    if name == "fuzzy":
        score = fuzzy_similarity(reference, anonymized,
                                 **{k: v for k, v in options.items() if k not in ("event_share", "region_cap")})
    else:
        hours = (8, 9) if name == "homeprob" else None
        score = visit_loglik(reference, anonymized, hours=hours, rng=rng, **options)
    reid = score.argmax(axis=1)
    unique = greedy_unique(score)
    traces = deobfuscate(anonymized, rng)
    if name == "fuzzy":
        traces = replace_frequent(reference, anonymized, traces, unique)
    return _inference(reference, anonymized, reid, unique, traces)


# -- re-identification models ----------------------------------------------------------------
def set_matrix(traces: TraceSet) -> sp.csr_matrix:
    """Location sets x locations, each row 1 / |set| on its members (the mean over a set)."""
    sets = traces.locsets
    if sets is None:
        return sp.csr_matrix((0, traces.space.n_locations))
    return sp.csr_matrix((np.repeat(1.0 / sets.sizes, sets.sizes), (sets.owner(), sets.members)),
                         shape=(sets.n_sets, traces.space.n_locations))


def in_hours(traces: TraceSet, hours: tuple[int, int] | None) -> np.ndarray | None:
    """Events whose instant starts in [hours[0]:00, hours[1]:00) of the day (None: all)."""
    if hours is None:
        return None
    axis = traces.time
    k = np.arange(axis.instants_per_day)
    hour = (axis.window_start.total_seconds() + k * axis.instant.total_seconds()) / 3600.0
    h = hour[traces.t % axis.instants_per_day]
    return (h >= hours[0]) & (h < hours[1])


def visit_probabilities(reference: TraceSet, keep: np.ndarray | None = None, delta: float = DELTA) -> np.ndarray:
    """Each reference user's visit-probability vector, zeros floored at ``delta`` (Appendix F)."""
    from ..metrics.population import normalise_rows

    return np.maximum(normalise_rows(trace_visit_counts(reference, keep)[0].toarray()), delta)


def visit_loglik(reference: TraceSet, anonymized: TraceSet, *, hours: tuple[int, int] | None = None,
                 rng: np.random.Generator | None = None, event_share: float = 1.0,
                 region_cap: int | None = None, delta: float = DELTA) -> np.ndarray:
    """Log-likelihood (pseudonyms x reference users) of VisitProb-R (or HomeProb-R with ``hours``);
    ``event_share`` < 1 scores a random share of the events and ``region_cap`` at most that many
    regions of a generalized event: the kit's shortcuts (module docstring)."""
    if not 0 < event_share <= 1:
        raise InputError(f"event_share must be in (0, 1], got {event_share!r}")
    if region_cap is not None and (int(region_cap) != region_cap or region_cap < 1):
        raise InputError(f"region_cap must be a whole number of regions >= 1, got {region_cap!r}")
    P = visit_probabilities(reference, in_hours(reference, hours), delta)
    keep = in_hours(anonymized, hours)
    rng = rng or np.random.default_rng(0)
    if event_share < 1.0:
        chosen = rng.random(anonymized.n_events) < event_share
        keep = chosen if keep is None else keep & chosen
    C, G = trace_visit_counts(anonymized, keep)
    score = C @ np.log(P).T
    if region_cap is not None:
        every = np.ones(anonymized.n_events, bool) if keep is None else keep
        return np.asarray(score + _kit_generalized(anonymized, every, P, rng, delta, int(region_cap)))
    if G.nnz:
        score = score + G @ np.log(np.maximum(set_matrix(anonymized) @ P.T, delta))
    return np.asarray(score)


def _kit_generalized(anonymized: TraceSet, keep: np.ndarray, P: np.ndarray, rng: np.random.Generator,
                     delta: float, cap: int = KIT_REGIONS) -> np.ndarray:
    """Per pseudonym, the sum over its kept generalized events of log mean p_u over at most
    ``cap`` of the event's regions, drawn without replacement (the organisers' kit)."""
    loc = anonymized.loc.astype(np.int64)
    events = np.flatnonzero(keep & (loc < DELETED))
    if not events.size:
        return np.zeros((anonymized.n_traces, P.shape[0]))
    sets = anonymized.locsets
    rows, cols, vals = [], [], []
    for e, k in enumerate(generalized_code(loc[events])):
        members = sets.members_of(int(k))
        if members.size > cap:
            members = rng.choice(members, cap, replace=False)
        rows.append(np.full(members.size, e))
        cols.append(members)
        vals.append(np.full(members.size, 1.0 / members.size))
    E = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(events.size, P.shape[1]))
    owner = sp.csr_matrix((np.ones(events.size), (anonymized.user[events], np.arange(events.size))),
                          shape=(anonymized.n_traces, events.size))
    return np.asarray(owner @ np.log(np.maximum(E @ P.T, delta)))


def neighbour_kernel(space, eta0: float = 0.33, lambda0: float = 1.0) -> sp.csr_matrix:
    """Locations x locations: 1 on the diagonal and eta0 exp(-lambda0 d) on the 8 neighbours of a
    grid cell (d = 1 or sqrt 2 cells; paper 003 Figure 11)."""
    L = space.n_locations
    if not isinstance(space, Grid):
        return sp.identity(L, format="csr")
    rows, cols, data = [np.arange(L)], [np.arange(L)], [np.ones(L)]
    r, c = space.row, space.col
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            if dy == dx == 0:
                continue
            ok = (r + dy >= 0) & (r + dy < space.rows) & (c + dx >= 0) & (c + dx < space.cols)
            src = np.flatnonzero(ok)
            rows.append(src)
            cols.append((r[src] + dy) * space.cols + c[src] + dx)
            data.append(np.full(src.size, eta0 * np.exp(-lambda0 * np.hypot(dy, dx))))
    return sp.csr_matrix((np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))), shape=(L, L))


def release_operator(anonymized: TraceSet) -> sp.csr_matrix | None:
    """Locations x locations: how the anonymized traces release a visit to each region, or None
    when they generalize nothing. Region r's row keeps weight 1 - g_r on r and spreads g_r evenly
    over the location set released most often among those containing r, g_r being r's share of
    generalized mass in the anonymized traces (each generalized event counting 1 / |set| on each
    member) against its exact visits. MRLH, which generalizes r always to its block, gives the
    block's mean; deleted events play no part."""
    sets = anonymized.locsets
    loc = anonymized.loc.astype(np.int64)
    gen = loc < DELETED
    if sets is None or not gen.any():
        return None
    L = anonymized.space.n_locations
    used = np.bincount(generalized_code(loc[gen]), minlength=sets.n_sets).astype(np.float64)
    owner, members = sets.owner(), sets.members.astype(np.int64)
    size = sets.sizes[owner].astype(np.float64)
    mass = np.bincount(members, used[owner] / size, minlength=L)
    exact = np.bincount(loc[loc >= 0], minlength=L).astype(np.float64)
    share = np.divide(mass, mass + exact, out=np.zeros(L), where=mass + exact > 0)
    best = np.full(L, -1, np.int64)                  # per region, its most used set (lowest set on ties)
    order = np.lexsort((owner, -used[owner], members))
    first = np.r_[True, members[order][1:] != members[order][:-1]]
    best[members[order][first]] = owner[order][first]
    has = np.flatnonzero((best >= 0) & (share > 0))
    k = best[has]
    rows = np.r_[np.arange(L), np.repeat(has, sets.sizes[k])]
    cols = np.r_[np.arange(L), sets.members[ranges(sets.offsets[k], sets.sizes[k])]]
    data = np.r_[1.0 - share, np.repeat(share[has] / sets.sizes[k], sets.sizes[k])]
    return sp.csr_matrix((data, (rows, cols)), shape=(L, L))


def fuzzy_features(traces: TraceSet, kernel: sp.csr_matrix, *, tf: str = "log") -> np.ndarray:
    """Fuzzy visit counts gamma (a generalized event counts 1 / |set| on each member) through TF."""
    C, G = trace_visit_counts(traces)
    counts = C + (G @ set_matrix(traces) if G.nnz else 0)
    gamma = np.asarray(sp.csr_matrix(counts) @ kernel.toarray())
    if tf == "log":
        return np.log1p(gamma)
    if tf == "raw":
        return gamma
    raise InputError(f"unknown tf {tf!r}; expected 'log' or 'raw'")


def fuzzy_similarity(reference: TraceSet, anonymized: TraceSet, *, eta0: float = 0.33, lambda0: float = 1.0,
                     tf: str = "log", idf: bool = False) -> np.ndarray:
    """Cosine similarity (pseudonyms x reference users) of the winning attack's TF-IDF vectors.

    The paper's optimum is eta0 = 0.33, lambda0 = 1 and "(TF, IDF) = (log(1 + m / xi_i), 1)"; read
    literally that TF would not depend on the user, so it is read as TF = log(1 + gamma_ij), no
    IDF. ``idf=True`` weights region i by log(m / xi_i), xi_i the reference users who visit it.
    When the anonymized traces generalize, the reference visits are first released the same way
    (:func:`release_operator`), so that both sides are compared at the released resolution (the
    winners tuned their attack on the sample obfuscations, §5.3)."""
    kernel = neighbour_kernel(reference.space, eta0, lambda0)
    release = release_operator(anonymized)
    ref = fuzzy_features(reference, (release @ kernel).tocsr() if release is not None else kernel, tf=tf)
    anon = fuzzy_features(anonymized, kernel, tf=tf)
    if idf:
        xi = np.count_nonzero(ref, axis=0)
        weight = np.log(ref.shape[0] / np.maximum(xi, 1))
        ref, anon = ref * weight, anon * weight
    ref = ref / np.maximum(np.linalg.norm(ref, axis=1, keepdims=True), 1e-300)
    anon = anon / np.maximum(np.linalg.norm(anon, axis=1, keepdims=True), 1e-300)
    return anon @ ref.T


def greedy_unique(score: np.ndarray) -> np.ndarray:
    """Pseudonyms in order, each naming its best user not yet named (VisitProb-T); once every user
    is named, the rest may repeat."""
    n, m = score.shape
    taken = np.zeros(m, bool)
    out = np.empty(n, np.int64)
    for i in range(n):
        row = np.where(taken, -np.inf, score[i]) if not taken.all() else score[i]
        j = int(np.argmax(row))
        out[i] = j
        taken[j] = True
    return out


# -- trace inference ---------------------------------------------------------------------------
def deobfuscate(anonymized: TraceSet, rng: np.random.Generator) -> np.ndarray:
    """One region per event: as released, a random member of a generalized set, a random region
    for a deleted event (VisitProb-T, Appendix F)."""
    loc = anonymized.loc.astype(np.int64).copy()
    L = anonymized.space.n_locations
    deleted = loc == DELETED
    loc[deleted] = rng.integers(0, L, int(deleted.sum()))
    gen = loc < DELETED
    if gen.any():
        sets = anonymized.locsets
        k = generalized_code(loc[gen])
        pick = (rng.random(k.size) * sets.sizes[k]).astype(np.int64)
        loc[gen] = sets.members[sets.offsets[k] + pick]
    return loc


def _frequent_table(reference: TraceSet, share: float) -> np.ndarray:
    """(reference users x instants of the day): the region visited most at that instant when it is
    visited on more than ``share`` of the reference days, else -1."""
    axis = reference.time
    k = axis.instants_per_day
    days = np.unique(axis.day(reference.t)).size
    slot = reference.t % k
    L = reference.space.n_locations
    key = (reference.user.astype(np.int64) * k + slot) * L + reference.loc
    uniq, count = np.unique(key, return_counts=True)
    cell, region = np.divmod(uniq, L)
    best = np.full(reference.n_traces * k, -1, np.int64)
    best_count = np.zeros(reference.n_traces * k, np.int64)
    order = np.lexsort((region, -count, cell))      # per cell, the highest count first (lowest region on ties)
    first = np.r_[True, cell[order][1:] != cell[order][:-1]]
    top = order[first]
    best[cell[top]] = region[top]
    best_count[cell[top]] = count[top]
    best[best_count <= share * days] = -1
    return best.reshape(reference.n_traces, k)


def replace_frequent(reference: TraceSet, anonymized: TraceSet, loc: np.ndarray, users: np.ndarray,
                     share: float = 0.5) -> np.ndarray:
    """``loc`` (inferred regions of ``anonymized``'s events, whose traces are named ``users``) with
    each user's frequent reference region in place where there is one (§5.3)."""
    table = _frequent_table(reference, share)
    slot = anonymized.t % reference.time.instants_per_day
    frequent = table[users[anonymized.user], slot]
    return np.where(frequent >= 0, frequent, loc)


def _random(reference: TraceSet, anonymized: TraceSet, rng: np.random.Generator) -> Inference:
    m = reference.n_traces
    reid = rng.integers(0, m, anonymized.n_traces)
    unique = rng.permutation(max(m, anonymized.n_traces))[:anonymized.n_traces] % m
    loc = rng.integers(0, anonymized.space.n_locations, anonymized.n_events)
    return _inference(reference, anonymized, reid, unique, loc)


def _inference(reference: TraceSet, anonymized: TraceSet, reid: np.ndarray, unique: np.ndarray,
               loc: np.ndarray) -> Inference:
    ids = reference.users["user_id"].to_numpy()
    table = pd.DataFrame({"pse_id": anonymized.users["user_id"].to_numpy(), "user_id": ids[reid]})
    users = pd.DataFrame({"user_id": ids[unique]})
    traces = replace(anonymized, loc=np.asarray(loc, np.int32), users=users, locsets=None,
                     info={**anonymized.info, "inferred": True}, ledger=None)
    return Inference(table, traces)
