"""SGLT (Bindschaedler and Shokri, IEEE S&P 2016): the estimator.

    model = SGLT(clusters=100).fit(train)              # profiles, similarities, clusters
    fakes = model.sample(traces_per_user=10, seed=1)   # fakes that passed the privacy tests

``fit`` is the part done once per dataset (§IV: mobility models, pairwise similarities, the
location graph and its semantic classes); ``sample`` makes fakes from every training user's
trace as a seed (§V) and keeps those that pass the privacy tests (§V-C to §V-E). Each fake
carries its log-likelihood under the aggregate model and its scores: ``intersection`` with its
seed, ``geo_similarity`` to its seed, ``semantic_similarity`` to its seed's user and
``alternatives`` (other training users within delta_d, counted up to k).

Defaults are the paper's evaluation (§VI-C): par_c 0.25, par_m 0.75, par_l 1, par_v 4,
delta_i 0, delta_s 0.1, delta_d 0.1, k 1, 20 classes. ``tool=True`` takes the authors' tool's
choices where they differ from the paper (see generate.py and mobility.aggregate_model; the
tool's smoothing is 0.5). The PPMTF authors ran the tool without the privacy tests
(``privacy_test=False``), taking the first fakes of every seed.
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.sparse as sp

from ...core import parallel
from ...core.errors import InputError
from ...core.rng import user_words
from ...data.traces import TraceSet
from ..base import Synthesizer, Tags
from .clustering import choose_k, cluster_quality, semantic_clusters
from ...metrics.transitions import LOG_ZERO
from .generate import fakes_kernel, privacy_scores
from .mobility import (aggregate_model, day_traces, distance_km, fill_missing, period_of, sorted_profiles,
                       visit_profiles)
from .similarity import EDGE_WEIGHTS, edge_quantum, location_graph, pair_chunk
from ...core.validation import check_count, check_flag, check_probability, check_seed, in_range, one_of, whole

#: candidates for the number of classes when ``clusters=0`` (the paper's 20, the PPMTF authors' 50-200)
CLUSTER_CANDIDATES = (10, 20, 50, 100, 150, 200)
#: random stream of the fakes (rng.user_words)
FAKE_STREAM = 11


class SGLT(Synthesizer):
    """Plausible fake traces from seeds (paper 002). See the module docstring.

    Parameters
    ----------
    clusters : int
        number of semantic classes kappa (§IV-C; 0: chosen among 10-200 by the quality of
        clustering.cluster_quality).
    periods : int
        time periods of a day for the mobility models (§IV-A; the tool uses 1).
    par_c, par_m, par_l, par_v : float
        location removal, merging, true-location removal and Viterbi randomization (§V-A, §V-B).
    delta_i, delta_s, delta_d, k : float
        the privacy tests (eqs. 12-14); `privacy_test` False keeps every fake.
    max_tries : int
        tries per requested fake before a seed gives up.
    smoothing : float
        weight of the distance kernel in the aggregate model (mobility.aggregate_model).
    ground : {'hamming', 'km'}
        ground distance of the geographic similarity reported by `fit`: 'hamming' (the closed
        form, and the tool's) or 'km' (EMD over the distances between locations, via POT). The
        delta_s test always uses the Hamming form, the one delta_s = 0.1 was set for.
    edge_weight : {'', 'similarity', 'overlap'}
        what a mapped pair of locations adds to the location graph: 'similarity' (the users'
        semantic similarity, Fig. 2) or 'overlap' (that times the pair's matched visit mass, the
        tool's); '' is 'overlap' with `tool` and 'similarity' without.
    tool : bool
        the authors' tool's variants (removal by share, merging with the next change only at
        par_m^(dt^2), the last instant wrapping to the first in the aggregate counts, the kernel
        mixed half and half, 'overlap' edges).
    privacy_test : bool
        apply the privacy tests (False: every fake is kept, as the PPMTF authors ran the tool).
    """

    name = "sglt"
    tags = Tags()
    checks = {"clusters": whole(0), "periods": check_count, "par_c": check_probability, "par_m": check_probability,
              "par_l": check_probability, "par_v": in_range(1.0), "delta_i": in_range(0.0), "delta_s": in_range(0.0),
              "delta_d": in_range(0.0), "k": check_count, "privacy_test": check_flag, "max_tries": check_count,
              "smoothing": check_probability, "ground": one_of("hamming", "km"),
              "edge_weight": one_of("", *EDGE_WEIGHTS), "tool": check_flag, "seed": check_seed}
    distributed = ("fit", "sample")

    def __init__(self, clusters: int = 20, periods: int = 1, par_c: float = 0.25, par_m: float = 0.75,
                 par_l: float = 1.0, par_v: float = 4.0, delta_i: int = 0, delta_s: float = 0.1,
                 delta_d: float = 0.1, k: int = 1, privacy_test: bool = True, max_tries: int = 50,
                 smoothing: float = 0.01, ground: str = "hamming", edge_weight: str = "", tool: bool = False,
                 seed: int = 0):
        self.clusters = clusters
        self.periods = periods
        self.par_c = par_c
        self.par_m = par_m
        self.par_l = par_l
        self.par_v = par_v
        self.delta_i = delta_i
        self.delta_s = delta_s
        self.delta_d = delta_d
        self.k = k
        self.privacy_test = privacy_test
        self.max_tries = max_tries
        self.smoothing = smoothing
        self.ground = ground
        self.edge_weight = edge_weight
        self.tool = tool
        self.seed = seed

    # -- fit -----------------------------------------------------------------------------------------
    def _fit(self, train: TraceSet, *, progress=None, client=None) -> "SGLT":
        """Mobility models, pairwise similarities, the location graph and its classes (§IV).

        With ``client`` (a Dask client, see core/parallel.py) the pairs of users are compared in
        chunks on the cluster; the result equals the serial one."""
        self._remember_frame(train)
        R, Tday = self.space_.n_locations, self.time_.instants_per_day
        period = period_of(Tday, self.periods)
        raw = day_traces(train)
        self.missing_filled_ = raw.missing
        days = fill_missing(raw, self.space_, seed=self.seed)
        n = self.n_users
        self.day_locs_ = days.locs
        self.day_ptr_ = np.searchsorted(days.owner, np.arange(n + 1)).astype(np.int64)
        self.aggregate_ = aggregate_model(days.locs, days.owner, period, self.space_, self.periods,
                                          smoothing=0.5 if self.tool else self.smoothing, wrap=self.tool)
        profile, self.period_weight_ = visit_profiles(days.locs, days.owner, n, period, R, self.periods)
        self.sorted_profiles_ = sorted_profiles(profile, n, self.periods)
        ground = distance_km(self.space_) if self.ground == "km" else None
        edge_weight = self.edge_weight or ("overlap" if self.tool else "similarity")
        job = functools.partial(pair_chunk, n_users=n, periods=self.periods, ground=ground, edge_weight=edge_weight)
        chunks = _pair_chunks(n, 64 if client is None else 4 * parallel.threads(client))
        self.semantic_, self.geographic_ = np.eye(n, dtype=np.float32), np.eye(n, dtype=np.float32)
        graph = np.zeros((R, R), np.int64)

        def take(part):
            us, s_uv, s_vu, g_uv, g_vu, er, er2, ew = part
            _fill_pairs(self.semantic_, us, s_uv, s_vu)
            _fill_pairs(self.geographic_, us, g_uv, g_vu)
            graph[er, er2] += ew                # integer units: the same sum in any order

        parallel.map_chunks(client, job, chunks, profile, self.period_weight_, fold=take,
                            progress=(lambda d, t: progress(d, t, "pairs of users")) if progress else None,
                            sizes=[_n_pairs(c, n) for c in chunks])
        er, er2 = np.nonzero(graph)
        self.graph_ = location_graph(er, er2, graph[er, er2], R, edge_quantum(n))
        if progress:
            progress(0, None, "clustering")
        if self.clusters == 0:
            active = int((np.asarray(self.graph_.sum(axis=1)).ravel() > 0).sum())
            candidates = [c for c in CLUSTER_CANDIDATES if c < active] or [max(1, active // 2)]
            self.n_clusters_, self.cluster_quality_ = choose_k(self.graph_, candidates, self.seed)
        else:
            self.n_clusters_ = int(self.clusters)
            self.cluster_quality_ = {}
        self.labels_ = semantic_clusters(self.graph_, self.n_clusters_, self.seed)
        if self.clusters != 0:
            self.cluster_quality_ = {self.n_clusters_: cluster_quality(self.graph_, self.labels_)}
        return self

    # -- sample --------------------------------------------------------------------------------------
    def _sample(self, n: int | None = None, *, days: int = 1, seed: int = 0, traces_per_user: int = 1,
               users=None, progress=None, client=None) -> TraceSet:
        """Fakes from the training users 0 .. n - 1 (or ``users``) as seeds: for each, tries until
        ``traces_per_user`` fakes pass the privacy tests or ``max_tries`` per requested fake are
        spent, so a seed may have fewer fakes (the pass rate is in ``info``). A fake of ``days``
        days decodes that many consecutive day traces of its seed.

        A user's fakes depend on (seed, user) only; with ``client`` users are generated in
        chunks on a Dask cluster, with the serial result."""
        rows = self._rows(n, users)
        k = traces_per_user
        Tday = self.time_.instants_per_day
        T = days * Tday
        log_p = np.log(np.maximum(self.aggregate_.P, np.exp(LOG_ZERO)))
        log_pi = np.log(np.maximum(self.aggregate_.pi, np.exp(LOG_ZERO)))
        order = np.argsort(self.labels_, kind="stable")
        mptr = np.searchsorted(self.labels_[order], np.arange(int(self.labels_.max()) + 2)).astype(np.int64)
        words = user_words(seed, FAKE_STREAM, 0, int(rows.max()) + 1 if rows.size else 0)[:, 0]
        model = (self.day_ptr_, self.day_locs_.astype(np.int64), days, k, k * int(self.max_tries),
                 self.labels_.astype(np.int64), mptr, order.astype(np.int64), log_p, log_pi,
                 period_of(Tday, self.periods), float(self.par_c), float(self.par_m), float(self.par_l),
                 float(self.par_v), bool(self.tool), bool(self.privacy_test), int(self.delta_i),
                 float(self.delta_s), float(self.delta_d), int(self.k), self.sorted_profiles_,
                 self.period_weight_)
        bounds = parallel.chunk_bounds(rows.size, client) if client is not None else \
            [(lo, min(rows.size, lo + 64)) for lo in range(0, rows.size, 64)]
        chunks = [(rows[lo:hi], words[rows[lo:hi]]) for lo, hi in bounds]
        parts = parallel.map_chunks(client, _fakes_job, chunks, *model, progress=progress,
                                    sizes=[hi - lo for lo, hi in bounds])
        if parts:
            locs, ll, inter, geo, sem, alt, got, tries = (np.concatenate([p[i] for p in parts]) for i in range(8))
        else:
            locs = np.zeros((0, k, T), np.int64)
            ll = inter = geo = sem = alt = np.zeros((0, k))
            got = tries = np.zeros(0, np.int64)
        keep = np.arange(k)[None, :] < got[:, None]
        source = np.repeat(rows, got)
        trace_no = np.concatenate([np.arange(g) for g in got]) if got.size else np.zeros(0, np.int64)
        fakes = locs[keep]
        n_fakes = fakes.shape[0]
        info = {"days": days, "instants": T, "fakes": {
            "requested": int(rows.size * k), "passed": int(n_fakes), "tries": int(tries.sum()),
            "pass_rate": float(n_fakes / tries.sum()) if tries.sum() else float("nan"),
            "seeds_short": int((got < k).sum()), "privacy_test": bool(self.privacy_test)}}
        extra = {"loglik": ll[keep], "intersection": inter[keep].astype(np.int32), "geo_similarity": geo[keep],
                 "semantic_similarity": sem[keep], "alternatives": alt[keep].astype(np.int32)}
        return self._synthetic(np.repeat(np.arange(n_fakes, dtype=np.int32), T), np.tile(np.arange(T), n_fakes),
                               fakes.ravel(), source, trace_no, extra=extra, info=info, presorted=True)

    def privacy_scores(self, fake, user: int, seed_trace=None) -> dict:
        """The privacy tests of one fake (eqs. 12-14) against training user ``user``'s seed trace
        (default: its first day trace, which must be as long as ``fake``)."""
        self.check_is_fitted()
        fake = np.asarray(fake, np.int64)
        if seed_trace is None:
            seed_trace = self.day_locs_[self.day_ptr_[user]]
        seed_trace = np.asarray(seed_trace, np.int64)
        if fake.shape != seed_trace.shape or fake.ndim != 1:
            raise InputError(f"the fake has shape {fake.shape} but its seed trace {seed_trace.shape}")
        Tday = self.time_.instants_per_day
        period = period_of(Tday, self.periods)[np.arange(fake.size) % Tday]
        P, R = self.periods, self.space_.n_locations
        width = max(self.sorted_profiles_.shape[2], fake.size)
        inter, geo, sem, alt = privacy_scores(fake, seed_trace, period, int(user), True, float(self.delta_d),
                                              int(self.k), self.sorted_profiles_, self.period_weight_,
                                              np.zeros((P, R)), np.zeros((P, R)), np.zeros((P, width)),
                                              np.zeros((P, width)), np.zeros(P), np.zeros(P))
        passed = inter <= self.delta_i and geo <= self.delta_s and alt >= self.k
        return {"intersection": int(inter), "geo_similarity": float(geo), "semantic_similarity": float(sem),
                "alternatives": int(alt), "passed": bool(passed)}

    # -- reporting -----------------------------------------------------------------------------------
    def summary(self) -> dict:
        if not hasattr(self, "labels_"):
            return {}
        n = self.n_users
        off = ~np.eye(n, dtype=bool)
        sizes = np.bincount(self.labels_)[:self.n_clusters_]
        return {"clusters": int(self.n_clusters_), "nonempty_clusters": int((sizes > 0).sum()),
                "periods": int(self.periods),
                "pairs": int(n * (n - 1) // 2), "missing_filled": int(self.missing_filled_),
                "median_semantic_similarity": round(float(np.median(self.semantic_[off])), 4) if n > 1 else None,
                "median_geographic_similarity": round(float(np.median(self.geographic_[off])), 4) if n > 1 else None,
                "cluster_sizes": f"{int(sizes[sizes > 0].min())}-{int(sizes.max())}" if sizes.any() else "-"}

    # -- persistence ---------------------------------------------------------------------------------
    def _arrays(self) -> dict[str, np.ndarray]:
        g = self.graph_.tocoo()
        return {"day_locs": self.day_locs_, "day_ptr": self.day_ptr_, "P": self.aggregate_.P,
                "pi": self.aggregate_.pi, "period_weight": self.period_weight_,
                "sorted_profiles": self.sorted_profiles_, "semantic": self.semantic_,
                "geographic": self.geographic_, "graph_row": g.row, "graph_col": g.col, "graph_val": g.data,
                "labels": self.labels_}

    def describe_sample(self, synthetic: TraceSet) -> list[str]:
        tests = synthetic.info.get("fakes")
        if not (tests and tests.get("privacy_test")):
            return []
        return [f"privacy tests: {tests['passed']} of {tests['requested']} fakes passed in {tests['tries']} tries "
                f"(pass rate {tests['pass_rate']:.3f}; {tests['seeds_short']} seeds ran out of tries)"]

    def _fitted_scalars(self) -> dict:
        return {"n_clusters": int(self.n_clusters_), "missing_filled": int(self.missing_filled_),
                "cluster_quality": {str(k): v for k, v in self.cluster_quality_.items()}}

    def _restore(self, arrays, fitted) -> None:
        from .mobility import AggregateModel

        R = self.space_.n_locations
        self.day_locs_, self.day_ptr_ = arrays["day_locs"], arrays["day_ptr"]
        self.aggregate_ = AggregateModel(arrays["P"], arrays["pi"])
        self.period_weight_, self.sorted_profiles_ = arrays["period_weight"], arrays["sorted_profiles"]
        self.semantic_, self.geographic_ = arrays["semantic"], arrays["geographic"]
        self.graph_ = sp.csr_array((arrays["graph_val"], (arrays["graph_row"], arrays["graph_col"])), shape=(R, R))
        self.labels_ = arrays["labels"]
        self.n_clusters_ = int(fitted["n_clusters"])
        self.missing_filled_ = int(fitted["missing_filled"])
        self.cluster_quality_ = {int(k): v for k, v in fitted.get("cluster_quality", {}).items()}


def _fill_pairs(matrix: np.ndarray, us: np.ndarray, forward: np.ndarray, backward: np.ndarray) -> None:
    """matrix[u, v] = forward[k, v] and matrix[v, u] = backward[k, v] for u = us[k], v > u."""
    for k, u in enumerate(us):
        matrix[u, u + 1:] = forward[k, u + 1:]
        matrix[u + 1:, u] = backward[k, u + 1:]


def _n_pairs(us: np.ndarray, n: int) -> int:
    return int(((n - 1) - us).sum())


def _pair_chunks(n: int, count: int) -> list[np.ndarray]:
    """Users 0 .. n - 1 in about ``count`` consecutive chunks of about equal numbers of pairs."""
    if n < 2:
        return []
    pairs = np.cumsum(np.arange(n - 1, -1, -1))
    edges = np.searchsorted(pairs, np.linspace(0, pairs[-1], count + 1)[1:-1])
    return [c for c in np.split(np.arange(n - 1), np.unique(np.minimum(edges, n - 1))) if c.size]


def _fakes_job(chunk, day_ptr, day_locs, days, k, max_tries, labels, mptr, members, log_p, log_pi, period,
               par_c, par_m, par_l, par_v, tool, test, delta_i, delta_s, delta_d, k_pd, sorted_all, weight_all):
    users, words = chunk
    m = users.size
    T = days * day_locs.shape[1]
    out_locs = np.full((m, k, T), -1, np.int64)
    out = [np.zeros((m, k)) for _ in range(5)]
    out_n = np.zeros(m, np.int64)
    out_tries = np.zeros(m, np.int64)
    fakes_kernel(users.astype(np.int64), words, day_ptr, day_locs, days, k, max_tries, labels, mptr, members,
                 log_p, log_pi, period, par_c, par_m, par_l, par_v, tool, test, delta_i, delta_s, delta_d, k_pd,
                 sorted_all, weight_all, out_locs, *out, out_n, out_tries)
    return (out_locs, *out, out_n, out_tries)
