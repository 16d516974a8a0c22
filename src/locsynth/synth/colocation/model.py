"""The co-location synthesizer (Narita et al., DPM 2021, paper 000): the estimator.

    model = CoLocation(epsilon1=1, epsilon2=1, trim=5).fit(train)   # train has a friend graph
    synthetic = model.sample(seed=1)          # n users, one day each, with their friend graph

``fit`` releases three things, each recorded in the ledger: the friendship probability p'
(friendship.py, epsilon1), the co-location counts Q' (counts.py, epsilon2, Privelet or Laplace)
and the TPM chain (synth/tpm.py, epsilon_tpm; the paper spends epsilon2 again there and leaves it
out of its total).

Neighbouring inputs. p' is node-DP with n, the number of users, public (paper 000 §4.2), so two
neighbouring inputs have the same n users and differ in one user's data and friendships
(replace-one). Q' and the chain are epsilon-DP for one user added or removed; a replacement is a
removal and an addition, so under the relation of the whole release they count twice (group
privacy): the ledger states epsilon1 + 2 epsilon2 + 2 epsilon_tpm per user, where the paper adds
epsilon1 + epsilon2 across the two relations. The synthetic set has the n users by default, which
this relation makes public.
``sample`` draws a friend graph from p', places theta co-location events from R' and completes
the traces under the chain (generate.py). ``theta=0`` takes theta from the DP counts themselves:
the co-locations per user and day in Q' (trimmed, so an underestimate) times the synthetic users
and days, post-processing that costs no budget (the paper's future work); the number of days of the
training window is taken as public.

The fitted model also keeps, for evaluation only, |p - p'| and the per-category error of Q'
against the untrimmed Q* (§5.2): like every fitted model it is internal, never a release.
"""

from __future__ import annotations

import numpy as np

from ...core.errors import InputError
from ...core.validation import check_epsilon
from ...data.traces import TraceSet
from ..base import Synthesizer, Tags
from ...core.validation import check_count
from ..tpm import TPM, walks
from ...metrics.colocation import colocation_counts
from .counts import MECHANISMS, category_matrix, noisy_counts, row_distributions
from .friendship import GRAPHS, friend_graph, noisy_friendship_probability
from .generate import complete, place_colocations
from ...core.validation import check_seed, one_of, whole


class CoLocation(Synthesizer):
    """Synthetic traces with co-locations between synthetic friends (module docstring).

    Parameters
    ----------
    epsilon1 : float
        budget of the friendship probability (node DP).
    epsilon2 : float
        budget of the co-location counts (user-level DP).
    epsilon_tpm : float
        budget of the transition matrix (user-level DP).
    trim : int
        c, events read per user for Q and transitions read per user for the chain.
    theta : int
        co-location events to generate (0: from the DP counts, module docstring).
    mechanism : {'privelet', 'laplace'}
        'privelet' (over the space's hierarchy) or 'laplace'.
    graph : {'erdos-renyi', 'barabasi-albert'}
        'erdos-renyi' (the paper) or 'barabasi-albert'.
    """

    name = "colocation"
    checks = {"epsilon1": check_epsilon, "epsilon2": check_epsilon, "epsilon_tpm": check_epsilon,
              "trim": check_count, "theta": whole(0), "mechanism": one_of(*MECHANISMS), "graph": one_of(*GRAPHS),
              "seed": check_seed}
    tags = Tags(virtual_users=True, dp=True, needs_friends=True)
    several_traces = False

    def __init__(self, epsilon1: float = 1.0, epsilon2: float = 1.0, epsilon_tpm: float = 1.0, trim: int = 5,
                 theta: int = 0, mechanism: str = "privelet", graph: str = "erdos-renyi", seed: int = 0):
        self.epsilon1 = epsilon1
        self.epsilon2 = epsilon2
        self.epsilon_tpm = epsilon_tpm
        self.trim = trim
        self.theta = theta
        self.mechanism = mechanism
        self.graph = graph
        self.seed = seed

    def _fit(self, train: TraceSet, *, progress=None, client=None) -> "CoLocation":
        self._remember_frame(train)
        if train.n_users != train.n_traces:
            raise InputError("colocation needs one trace per user (its friend graph and its trimming are per user); "
                             "this set has users with several traces")
        n, c = train.n_traces, int(self.trim)
        self.training_ = {"users": n}          # public under node DP with n fixed (module docstring)
        n_edges = int(train.friends.shape[0])
        self.p_noisy_ = noisy_friendship_probability(n_edges, n, self.epsilon1, ledger=self.ledger_)
        self.friendship_error_ = abs(2.0 * n_edges / (n * (n - 1)) - self.p_noisy_)
        counts = colocation_counts(train, c)
        hierarchy = train.space.hierarchy() if self.mechanism == "privelet" else None
        self.counts_ = noisy_counts(counts, self.epsilon2, c, self.mechanism, hierarchy, ledger=self.ledger_,
                                    saw=f"co-locations between friends among the first {c} events of each user")
        self.rows_ = row_distributions(self.counts_)
        self.days_ = max(int(train.summary().get("days", 1)), 1)
        if self.theta == 0:
            self.ledger_.note_uncovered("the number of days the training data spans, which turns the noisy "
                                        "co-location counts into co-locations per user and day (theta)")
        self.category_error_ = self._category_error(train, colocation_counts(train, None))
        before = len(train.ledger.spends) if train.ledger else 0
        tpm = TPM(self.epsilon_tpm, c, size_share=0).fit(train)
        self.ledger_.spends += tpm.ledger_.spends[before:]
        self.matrix_, self.stationary_ = tpm.matrix_, tpm.stationary_
        return self

    def _category_error(self, train: TraceSet, truth: np.ndarray) -> dict:
        """MAE and MSE of the per-category matrix of Q' against the untrimmed Q* (§5.2)."""
        categories = train.space.top_category()
        if categories is None:
            return {}
        _, real = category_matrix(truth, categories)
        _, noisy = category_matrix(self.counts_, categories)
        with np.errstate(over="ignore"):            # inf at a tiny epsilon2, whose noise is 1e300
            return {"mae": float(np.abs(real - noisy).mean()), "mse": float(((real - noisy) ** 2).mean()),
                    "categories": int(real.shape[1])}

    def expected_theta(self, n: int, days: int) -> int:
        """theta for ``n`` users over ``days`` days: the given theta, or from Q' (module docstring);
        at most n T / 2, a public bound (an event takes two users at one instant, and a user is at
        one place an instant): at a tiny epsilon the noise of Q' asked for 1e305."""
        bound = n * days * self.time_.instants_per_day // 2
        if self.theta:
            return min(int(self.theta), bound)
        rate = max(float(self.counts_.sum()), 0.0) / (self.n_users * self.days_)
        wanted = rate * n * days
        return int(round(wanted)) if np.isfinite(wanted) and wanted < bound else bound

    def _sample(self, n: int | None = None, *, days: int = 1, seed: int = 0, traces_per_user: int = 1, users=None,
                progress=None, client=None) -> TraceSet:
        """``n`` synthetic users (default: the n training users, public under this method's
        neighbour relation), one trace of ``days`` days each, with the synthetic friend graph
        (``friends``) and their co-location events."""
        m = self._size(n)
        T = check_count(days, "days") * self.time_.instants_per_day
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(4,)))
        edges = friend_graph(m, self.p_noisy_, self.graph, rng)
        theta = self.expected_theta(m, days)
        fixed, placed = place_colocations(edges, self.rows_, m, T, theta, seed)
        locs = complete(walks(self.matrix_, self.stationary_, m, T, seed), fixed, self.matrix_, self.stationary_)
        ts = self._rectangular(locs, np.full(m, -1), np.zeros(m, np.int64), days,
                               extra={"colocation_events": (fixed >= 0).sum(axis=1).astype(np.int32)},
                               user_id=np.array([f"v{q}" for q in range(m)], dtype=object))
        ts.info.update({"theta": theta, "colocations_placed": placed, "friendships": int(edges.shape[0]),
                        "friendship_probability": self.p_noisy_, "friendship_error": self.friendship_error_,
                        "category_error": self.category_error_})
        return TraceSet(ts.user, ts.t, ts.loc, ts.users, ts.space, ts.time, ts.info, edges, ts.ledger)

    def summary(self) -> dict:
        if not hasattr(self, "p_noisy_"):
            return {}
        return {"friendship_probability": self.p_noisy_, "friendship_error": self.friendship_error_,
                "colocations_noisy_total": float(self.counts_.sum()), "theta": self.expected_theta(self.n_users, 1),
                **{f"category_{k}": v for k, v in self.category_error_.items()}}

    def describe_sample(self, synthetic: TraceSet) -> list[str]:
        info = synthetic.info
        return [f"co-locations: {info['colocations_placed']} of theta = {info['theta']} placed between "
                f"{info['friendships']} synthetic friendships"]

    def _fitted_scalars(self) -> dict:
        return {"p_noisy": self.p_noisy_, "friendship_error": self.friendship_error_, "days": self.days_,
                "category_error": self.category_error_}

    def _arrays(self):
        return {"counts": self.counts_, "rows": self.rows_, "matrix": self.matrix_, "stationary": self.stationary_}

    def _restore(self, arrays, fitted):
        self.counts_, self.rows_ = arrays["counts"], arrays["rows"]
        self.matrix_, self.stationary_ = arrays["matrix"], arrays["stationary"]
        self.p_noisy_, self.friendship_error_ = float(fitted["p_noisy"]), float(fitted["friendship_error"])
        self.days_, self.category_error_ = int(fitted["days"]), dict(fitted.get("category_error", {}))
