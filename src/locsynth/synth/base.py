"""The protocol every method follows, the capability tags, and save/load of fitted models.

A synthesizer is a scikit-learn style estimator: the constructor only stores hyperparameters,
``fit(train)`` learns attributes ending in ``_`` and returns ``self``, ``sample(n, ...)`` returns a
synthetic TraceSet. An anonymizer has no model: ``transform(traces, seed=...)`` perturbs a
TraceSet. Both carry :class:`Tags` that say what they can do, which the common test suite
(tests/test_methods.py), the command line and the demo read.

A fitted model saves as a directory: ``model.json`` (method, hyperparameters, fitted scalars,
the training set's size, space and time axis, the privacy ledger), ``arrays.npz`` (no pickle)
and the training users and locations as Parquet. Like a synthetic set from ``sample``, a model
names training users: both are internal, never releases (see release/publish.py). A DP model's user
table is empty: it keeps nothing per training unit.
"""

from __future__ import annotations

import inspect
import json
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from ..core.errors import InputError, SmallDataWarning
from ..core.jsonable import jsonable
from ..privacy.count import MAX_COUNT
from ..privacy.ledger import Ledger
from ..privacy.noise import describe_noise
from ..core.validation import check_count, check_epsilon, check_seed, check_share, parse_value
from ..data.modes import Bounds
from ..data.space import Space
from ..data.timeaxis import TimeAxis
from ..core.files import atomic_output
from ..data.traces import TraceSet, is_trip_set, read_json_meta, require_traceset
from ..data.chunks import Partitions, bounded, chunks
from ..data.partitioned import PartitionedTraceSet

#: share of epsilon a DP synthesizer spends by default on counting its training units, the default
#: size of its synthetic set (privacy/count.py): at epsilon 1 a count of scale 20, about 3 % off
#: for Gowalla's 651 users, for 5 % more noise on the model itself
SIZE_SHARE = 0.05
#: share of a trip method's epsilon for the model of its trips' times (synth/trip_times.py)
TIME_SHARE = 0.05
#: a DP fit warns (SmallDataWarning) when this share or more of what its release is drawn from is
#: estimated to be noise (privacy/noise.py): at 150 trips and epsilon 1 every trip method's estimate
#: is above it, on the 200 cabs' 72,467 trips the central methods' below (docs/data.md)
SMALL_DATA_SHARE = 0.5
#: share of a trip method's epsilon for a DP footprint where the set has no public domain and
#: enough trips (Synthesizer._fit_footprint); measured in docs/data.md
FOOTPRINT_SHARE = 0.05
#: cells a side of the blocks a DP footprint counts (Synthesizer._fit_footprint): 2 x 2 cells of
#: 500 m, blocks of 1 km, gather four cells' trips against one cell's noise
FOOTPRINT_BLOCK = 2


def footprint_blocks(space) -> tuple[np.ndarray, int]:
    """(block of every location, number of blocks): FOOTPRINT_BLOCK x FOOTPRINT_BLOCK cells of a grid,
    each location its own block on any other space."""
    if space.kind != "grid":
        return np.arange(space.n_locations), space.n_locations
    b = FOOTPRINT_BLOCK
    cols = -(-space.cols // b)
    return (space.row // b) * cols + space.col // b, (-(-space.rows // b)) * cols


def footprint_weights(chunk: TraceSet, block: np.ndarray, n_blocks: int) -> np.ndarray:
    """The counting step of the DP footprint on one chunk of traces (data/chunks.py): each block's
    visit weight (privacy/footprint.visit_weights), which adds up over chunks."""
    from ..privacy.footprint import visit_weights

    return visit_weights(chunk.user, block[chunk.loc], n_blocks)


#: the most traces a set holds: its trace and user numbers are int32 (data/traces.py)
MAX_TRACES = MAX_COUNT

MODEL_FORMAT = "locsynth.model"
MODEL_VERSION = 2


class NotFittedError(InputError):
    """The model must be fitted (or loaded) first."""


@dataclass(frozen=True)
class Tags:
    """What a method can do (scikit-learn's estimator tags, for location traces).

    virtual_users : synthetic users are not training users (``source`` = -1) and ``n`` may
        exceed the number of training users.
    ragged : traces of varying length and start.
    dp : fitting (or transforming) spends differential privacy, recorded in the ledger.
    needs_friends : the training set must have a friend graph.
    needs_categories : the space must have location categories.
    pd_test : the model has ``pd_test`` (plausible deniability, paper 001 §3.5).
    generalizes : the output may hold deleted and generalized events (paper 003's MRLH), which the
        contest scores and the utility metrics of exact traces do not.
    trips : made for trips (one trace per trip, with its hour; paper 004): it fits any ragged
        traces, but the demo's daily traces are not what it is for.
    baseline : a reference point, not a protection: it releases the real traces (training, none,
        cheat) or random ones (uniform); comparisons show it apart and never mark it best.
    domain : keeps every location it makes inside a public domain (``Space.allowed``, data/domain.py);
        a method without it refuses a training set that has one.
    """

    virtual_users: bool = False
    ragged: bool = False
    dp: bool = False
    needs_friends: bool = False
    needs_categories: bool = False
    pd_test: bool = False
    generalizes: bool = False
    trips: bool = False
    baseline: bool = False
    domain: bool = False

    def names(self) -> list[str]:
        return [k for k, v in self.__dict__.items() if v]

    def mismatch(self, traces: TraceSet, name: str) -> str | None:
        """What the method ``name`` is made for, when ``traces`` are not that (trips against daily
        traces); None when they fit."""
        trips = is_trip_set(traces)
        if self.trips and not trips:
            return (f"{name} is made for trips (one trace per trip with its hour, as prepare --format cab-trips "
                    f"makes them); these {traces.n_traces} traces are not trips")
        if not (self.trips or self.ragged or self.baseline) and trips:
            return (f"{name} is made for users' daily traces; these are {traces.n_traces} trips, one per trace "
                    f"(methods for trips: locsynth methods lists those tagged 'trips')")
        return None

    def unmet(self, train: TraceSet) -> str | None:
        """What ``train`` lacks that these tags need (None: nothing)."""
        if self.needs_friends and (train.friends is None or not len(train.friends)):
            return "needs a training set with a friend graph (prepare it with `friends`)"
        if self.needs_categories and train.space.category is None:
            return "needs locations with categories"
        if train.space.allowed is not None and not self.domain:
            return (f"cannot keep its locations inside a public domain, and this set has one ({train.space.domain}); "
                    f"the methods tagged 'domain' can")
        return None


@dataclass(frozen=True)
class Hyperparameter:
    """A hyperparameter as its class declares it, each fact once: the default in the constructor's
    signature, the help in the class docstring's numpydoc ``Parameters`` section, the check in the
    class's ``checks``. Everything that shows or parses hyperparameters reads this (``locsynth
    methods NAME``, ``fit``'s --NAME VALUE, ``benchmark --param``, ``contest run --anonymizers``)."""

    name: str
    default: object
    help: str
    check: object = None

    def parse(self, text):
        """A value given as text (``NAME=VALUE`` anywhere), read as the default's type and checked."""
        value = parse_value(text, self.default)
        return self.check(value, self.name) if self.check is not None else value


class _Params:
    """Hyperparameters read from the constructor's signature (scikit-learn's get_params), declared
    with their help and check (:class:`Hyperparameter`)."""

    name: ClassVar[str] = "base"
    tags: ClassVar[Tags] = Tags()
    #: each constructor parameter's check, ``check(value, name) -> value`` (core/validation.py), applied
    #: when fit or transform starts; the common checks require one for every parameter
    checks: ClassVar[dict] = {}
    #: the help of parameters every method that has them means alike (a class's docstring may say more)
    common_help: ClassVar[dict[str, str]] = {
        "seed": "Seed of the method's randomness that is not DP noise (trimming, initialisation, sampling); "
                "sample uses it when given no seed. DP noise is never seeded."}

    @classmethod
    def hyperparameters(cls) -> dict[str, inspect.Parameter]:
        return {k: p for k, p in inspect.signature(cls.__init__).parameters.items() if k != "self"}

    @classmethod
    def declarations(cls) -> dict[str, Hyperparameter]:
        """Every hyperparameter with its default, help and check (:class:`Hyperparameter`)."""
        docs = {**cls.common_help, **{k: v for k, v in parameter_docs(cls).items() if v}}
        return {name: Hyperparameter(name, p.default, docs.get(name, ""), cls.checks.get(name))
                for name, p in cls.hyperparameters().items()}

    @classmethod
    def parse_params(cls, given: dict) -> dict:
        """Hyperparameters from ``{name: text or value}`` (``NAME=VALUE`` pairs, ``-`` read as ``_``):
        each read as its default's type and checked; an unknown name is refused, naming the valid ones."""
        declared = cls.declarations()
        out = {}
        for raw, value in given.items():
            name = str(raw).replace("-", "_")
            if name not in declared:
                valid = ", ".join(declared) or "none"
                raise InputError(f"{cls.name} has no parameter {raw!r}; its parameters: {valid}")
            out[name] = declared[name].parse(value)
        return out

    def _validate_params(self) -> None:
        """Every declared check on the current values (scikit-learn's _validate_params, at fit)."""
        for name, check in self.checks.items():
            check(getattr(self, name), name)

    def get_params(self) -> dict:
        return {name: getattr(self, name) for name in self.hyperparameters()}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def _repr_html_(self) -> str:
        from ..core.display import model_rows, table

        return table(f"{type(self).__name__} ({getattr(self, 'name', '')})", model_rows(self))


class Synthesizer(_Params):
    """Base class of synthesizers: hyperparameters in ``__init__``, ``fit`` -> self, ``sample`` -> TraceSet.

    Fitted attributes every synthesizer has: ``users_`` (the training user table; empty for a DP
    method, whose model keeps nothing per training unit), ``space_``, ``time_``, ``training_``
    (counts of the training set; a DP count for a DP method) and ``ledger_`` (its DP spends).
    """

    #: options of ``fit`` and of ``sample`` beyond the common ones: name -> (default, a line of help[,
    #: type]) (PPMTF's checkpoint; PPMTF+'s homes); ``locsynth fit`` and ``sample`` take them as
    #: --NAME VALUE, and the base class refuses any other
    fit_options: ClassVar[dict[str, tuple[object, str]]] = {}
    sample_options: ClassVar[dict[str, tuple[object, str]]] = {}
    #: whether a synthetic user may have several traces (False where each trace is its own user)
    several_traces: ClassVar[bool] = True
    #: the steps ("fit", "sample") that spread their work over a Dask client (core/parallel.py)
    distributed: ClassVar[tuple[str, ...]] = ()
    #: whether ``fit`` counts a partitioned set partition by partition (data/chunks.py), never whole
    partitions: ClassVar[bool] = False

    def fit(self, train: TraceSet, *, progress=None, client=None, **options) -> "Synthesizer":
        """Learn from the training TraceSet ``train``; returns ``self``. ``progress(done, total,
        status="")`` is called as the work advances, where a method reports progress (True: a bar,
        core/progress.py); ``client`` is a Dask client where the method spreads its work
        (core/parallel.py); ``options`` are the method's :attr:`fit_options`."""
        from ..core.progress import Bar, resolve

        self._validate_params()
        self._check_options(options, self.fit_options, "fit")
        progress = resolve(progress, f"fit {self.name}")
        if isinstance(train, PartitionedTraceSet):
            if not self.partitions:
                raise InputError(f"{self.name} fits a TraceSet in memory, and {train.path} is partitioned "
                                 f"({train.n_partitions} partitions): load it whole (TraceSet.load) or fit a method "
                                 f"that counts by partitions")
            train = Partitions(train, client, progress=progress)
        if isinstance(progress, Bar):
            progress(0, None, "fitting")
        self.noise_parts_ = {}
        try:
            fitted = self._fit(train, progress=progress, client=client,
                               **{k: options.get(k, spec[0]) for k, spec in self.fit_options.items()})
            if isinstance(progress, Bar) and isinstance(train, TraceSet):      # the bar ends on what it fitted
                progress(train.n_traces, train.n_traces, "traces fitted")
        finally:
            if isinstance(progress, Bar):
                progress.close()
        self._estimate_noise(train)
        return fitted

    def _fit(self, train: TraceSet, *, progress=None, client=None, **options) -> "Synthesizer":
        raise NotImplementedError

    def _estimate_noise(self, train: TraceSet) -> None:
        """``noise_``: the estimated share of noise in what a DP method's release is drawn from
        (privacy/noise.py), its largest part over the statistics the method names in ``noise_parts_``
        and the time model's starts; a :class:`~locsynth.core.errors.SmallDataWarning` when it is
        :data:`SMALL_DATA_SHARE` or more, naming ``train``'s trajectories for the data holder."""
        parts = {k: float(v) for k, v in (getattr(self, "noise_parts_", None) or {}).items()}
        times = getattr(self, "trip_times_", None)
        if times is not None and times.noise is not None:
            parts["when trips start"] = float(times.noise)
        self.noise_ = None
        if not self.tags.dp or not parts:
            return
        share = max(parts.values())
        # stated to the percent: an estimate, and a figure no closer to an exact size than the noise allows
        self.noise_ = {"share": round(share, 2), "parts": {k: round(v, 2) for k, v in parts.items()}}
        if share >= SMALL_DATA_SHARE:
            import warnings

            eps = getattr(self, "epsilon", None)
            at = f" at epsilon {float(eps):g}" if isinstance(eps, (int, float)) else ""
            warnings.warn(SmallDataWarning(
                f"{self.name} fitted on {train.n_traces} trajectories{at}: {describe_noise(self.noise_)}; its "
                f"synthetic trips will say little about these data (more trajectories, a larger epsilon or larger "
                f"cells make the share smaller). This warning is for the data holder: it names the exact number of "
                f"trajectories, which the model and its releases do not"), stacklevel=3)

    def sample(self, n: int | None = None, *, days: int = 1, seed: int | None = None, traces_per_user: int = 1,
               users=None, progress=None, client=None, **options) -> TraceSet:
        """``n`` synthetic users (None: a DP method's DP count of its training units, any other's
        training users), each with ``traces_per_user`` traces of ``days`` days: n *
        traces_per_user traces. A method without virtual users generates from the training users
        0 .. n - 1, or from the rows ``users``. Non-DP randomness comes from ``seed`` (None: the
        model's ``seed`` hyperparameter, else 0). ``options`` are the method's
        :attr:`sample_options`; any other is refused with the valid ones named."""
        self.check_is_fitted()
        self._check_options(options, self.sample_options, "sample")
        days, k = check_count(days, "days"), check_count(traces_per_user, "traces_per_user")
        if k > 1 and not self.several_traces:
            raise InputError(f"{self.name} makes one trace per synthetic user (each is its own user): "
                             f"traces_per_user must be 1, got {traces_per_user!r}")
        if users is not None and self.tags.virtual_users:
            raise InputError(f"{self.name} makes virtual users, not traces of training users: give n, not users")
        seed = check_seed(int(getattr(self, "seed", 0) or 0) if seed is None else seed)
        n = None if n is None else check_count(n, "n")
        if n is not None and n * k > MAX_TRACES:
            raise InputError(f"n = {n:,} users{f' x {k} traces each' if k > 1 else ''} is more than the "
                             f"{MAX_TRACES:,} traces a set holds (its trace numbers are int32)")
        from ..core.progress import Bar, resolve

        progress = resolve(progress, f"sample {self.name}")
        if isinstance(progress, Bar):
            progress(0, None, "sampling")
        try:
            out = self._sample(n, days=days, seed=seed, traces_per_user=k, users=users, progress=progress,
                               client=client, **{k: options.get(k, spec[0]) for k, spec in self.sample_options.items()})
            if isinstance(progress, Bar):                     # the bar ends on what it sampled
                progress(out.n_traces, out.n_traces, "traces sampled")
            return out
        except MemoryError as exc:          # numpy refuses an array beyond the memory before filling it
            raise InputError(f"sampling {self._asked(n, k, days)} from {self.name} needs more memory than this "
                             f"machine has ({exc}): ask for fewer (n)") from None
        finally:
            if isinstance(progress, Bar):
                progress.close()

    def _asked(self, n: int | None, k: int, days: int) -> str:
        """What a sample call asked for, in words: its users (and where their number came from),
        traces and days."""
        if n is None and "dp_count" in self.training_:
            what = f"{self.training_['dp_count']:,} users (the DP count of training {self.training_['unit']}s)"
        else:
            what = f"{self.n_users if n is None else n:,} users"
        return what + (f" x {k} traces" if k > 1 else "") + (f" of {days} days" if days > 1 else "")

    def _sample(self, n: int | None, *, days: int, seed: int, traces_per_user: int, users, progress, client,
                **options) -> TraceSet:
        raise NotImplementedError

    def for_sampling(self) -> "Synthesizer":
        """What workers that sample from this model need of it (synth/partitioned.py): the model
        itself, or a copy without what sampling does not read (NGRAM's dense counts)."""
        return self

    def _check_options(self, given: dict, declared: dict, step: str) -> None:
        unknown = sorted(set(given) - set(declared))
        if unknown:
            valid = ", ".join(declared) if declared else "none"
            raise InputError(f"{self.name} has no {step} option {', '.join(map(repr, unknown))}; its {step} "
                             f"options: {valid}")

    def describe_sample(self, synthetic: TraceSet) -> list[str]:
        """Lines that say what sampling did (privacy tests passed, co-locations placed ...), for
        ``locsynth sample`` to print; none by default."""
        return []

    def summary(self) -> dict:
        """What the fit produced, for ``locsynth fit`` and ``locsynth info`` (subclasses add)."""
        return {}

    # -- the training set's frame --------------------------------------------------------------
    def _remember_frame(self, train: TraceSet) -> None:
        if not isinstance(train, Partitions):
            require_traceset(train, "fit")
        if train.n_traces == 0 or train.n_events == 0:
            raise InputError("the training set is empty")
        train.require_exact(f"fitting {self.name}")
        unmet = self.tags.unmet(train)
        if unmet:
            raise InputError(f"{self.name} {unmet}")
        # a DP model keeps nothing per training unit: not even their ids, whose number is the exact size
        self.users_ = train.users[["user_id"]].iloc[:0].copy() if self.tags.dp else train.users[["user_id"]].copy()
        self.space_ = train.space
        self.time_ = train.time
        # the public fewest cells of a trace (2 for trips): every trip method's walks respect it
        self.min_cells_ = train.min_cells
        # the public bounds of the movement (data/modes.py) and the clock the data came on: they travel on
        self.bounds_ = train.bounds if "bounds" in train.info or is_trip_set(train) else None
        self.clock_ = train.info.get("clock")
        # a DP method keeps no exact size of what it protects: what it may state (a DP count of its
        # units, or a size its neighbour relation makes public) it adds itself
        self.training_ = {} if self.tags.dp else {"users": train.n_users, "traces": train.n_traces,
                                                  "events": train.n_events}
        # what the training set already spent (a DP choice of its locations) or left uncovered
        # travels on with everything made from it
        self.ledger_ = train.ledger.copy() if train.ledger else Ledger()
        if not self.tags.dp:
            self.ledger_.note_uncovered(f"{self.name} was fitted on the training data without differential privacy")

    def _allowed(self) -> np.ndarray | None:
        """Bool per location: where this model may place one, the space's public domain
        (``Space.allowed``, data/domain.py) or, without one, the DP footprint it fitted
        (:meth:`_fit_footprint`); None: anywhere."""
        footprint = getattr(self, "footprint_", None)
        return self.space_.allowed if footprint is None else footprint

    def _fit_footprint(self, train: TraceSet, epsilon: float, share: float, left: float) -> float:
        """Where the space has no public domain, spend ``share`` of the method's ``epsilon`` on a DP
        footprint (privacy/footprint.py) on blocks of :data:`FOOTPRINT_BLOCK` x that many cells of a
        grid (each location alone elsewhere) and keep to it as to a domain; returns ``left`` less that
        spend. ``share`` 0, a public domain (which needs no spend), or too few trips for the blocks
        (the DP count times the footprint's epsilon below 2 noise scales a block) fit none."""
        from ..privacy.footprint import SCALES, noisy_footprint

        eps, share = check_epsilon(epsilon), check_share(share, "footprint_share")
        self.footprint_ = None
        if share == 0 or train.space.allowed is not None:
            return left
        if share * eps >= left:
            raise InputError(f"`footprint_share` {share:g} leaves nothing of epsilon for the rest of {self.name}: "
                             "the shares must sum to less than 1")
        block, n_blocks = footprint_blocks(train.space)
        # only where the DP count of trips could fill every block to the threshold (SCALES noise scales):
        # on fewer, the footprint keeps next to nothing (measured on ships, docs/data.md); the rule reads
        # the DP count alone (post-processing), and without one no footprint is fitted
        count = self.training_.get("dp_count")
        if count is None or count * share * eps / SCALES < n_blocks:
            return left
        kept = noisy_footprint(chunks(train).total(footprint_weights, block, n_blocks), share * eps,
                               ledger=self.ledger_, unit="trace",
                               saw=f"the {n_blocks} blocks of cells the traces visit, each trace's distinct blocks "
                                   f"sharing 1 (its footprint)")
        self.footprint_ = kept[block]
        return left - share * eps

    def _bounded_traces(self, train: TraceSet, k: int) -> TraceSet:
        """``train`` with at most ``k`` traces of each user id (their first ``k`` rows), for a method
        that spends on one trace: the bound, enforced here and recorded in the ledger, is what turns
        its per-trace epsilon into a per-person one (privacy/ledger.py: k times). A bound the training set's
        ledger already holds (``prepare``'s one trace per user) is enforced too. Dropping costs the
        per-trace line twice (a trace listed first displaces a kept one: privacy/ledger.py)."""
        k = check_count(k, "max_traces_per_user")
        if self.ledger_.traces_per_user is not None:
            k = min(k, self.ledger_.traces_per_user)
        self.ledger_.bound_traces(k, drops=True)
        return bounded(train, k)

    def _count_units(self, count: int, epsilon: float, share: float, unit: str) -> float:
        """Spend ``share`` of ``epsilon`` on a DP count of the ``count`` training ``unit``s (one
        per trace: a user's history, or a trip), the default size of :meth:`sample`
        (privacy/count.py); returns the epsilon left for the model. ``share`` = 0 counts nothing:
        ``sample`` then needs n."""
        from ..privacy.count import check_count_scale, noisy_count

        eps, share = check_epsilon(epsilon), check_share(share, "size_share")
        if share == 0:
            return eps
        check_count_scale(share * eps, f"`size_share` {share:g} of `epsilon` {eps:g}")
        count = noisy_count(count, share * eps, ledger=self.ledger_, unit=unit)
        self.training_ = {"dp_count": count, "unit": unit, "dp_count_epsilon": share * eps}
        return (1 - share) * eps

    def _size(self, n: int | None) -> int:
        """The number of synthetic users (or trips) to make: ``n`` when given; else, for a DP
        method, its DP count of the training units, and for any other, the training users."""
        if n is not None:
            return check_count(n, "n")
        if not self.tags.dp:
            return self.n_users
        if "dp_count" in self.training_:
            return int(self.training_["dp_count"])
        if "users" in self.training_:    # a size the method's neighbour relation makes public
            return int(self.training_["users"])
        raise InputError(f"this {self.name} model was fitted with size_share = 0 (no DP count of its training "
                         f"data): give the number of synthetic users (n, or `users`)")

    def check_is_fitted(self) -> None:
        if not hasattr(self, "users_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted: call fit(train) or load a model")

    @property
    def n_users(self) -> int:
        """The training users (a size a DP method's neighbour relation makes public, where it has one)."""
        self.check_is_fitted()
        return int(self.training_["users"]) if self.tags.dp and "users" in self.training_ else len(self.users_)

    def _rows(self, n: int | None, users=None) -> np.ndarray:
        """Training rows to generate from: ``users`` when given, else 0 .. n - 1 (all when None)."""
        if users is not None:
            if n is not None:
                raise InputError("give n (the first n training users) or users (their rows), not both")
            rows = np.asarray(users, np.int64).ravel()
        else:
            n = self.n_users if n is None else check_count(n, "n")
            if n > self.n_users:
                raise InputError(f"{self.name} generates traces of its {self.n_users} training users: n = {n} is "
                                 f"too many (a method with virtual users, such as ppmtf-plus, makes more)")
            rows = np.arange(n)
        if rows.size and (rows.min() < 0 or rows.max() >= self.n_users):
            raise InputError(f"user rows must be in 0..{self.n_users - 1}")
        return rows

    def _synthetic(self, user: np.ndarray, t: np.ndarray, loc: np.ndarray, source: np.ndarray,
                   trace_no: np.ndarray, *, extra: dict | None = None, user_id=None, friends=None,
                   info: dict | None = None, presorted: bool = False) -> TraceSet:
        """A synthetic TraceSet from events (``user``: each event's trace, in any order unless
        ``presorted``, of any length and start) and one row per trace: ``source`` (training row,
        -1 for a virtual user) and ``trace_no``; ``user_id`` defaults to the source's training id
        (internal sets only: a release replaces it). It carries this model's ledger."""
        source = np.asarray(source, np.int64)
        if user_id is None:
            user_id = self.users_["user_id"].to_numpy()[source]
        users = pd.DataFrame({"user_id": user_id, "source": source.astype(np.int32),
                              "trace_no": np.asarray(trace_no).astype(np.int32)})
        for key, value in (extra or {}).items():
            users[key] = value
        meta = {"source": self.name, "synthesizer": self.name, "params": jsonable(self.get_params()),
                "training": dict(self.training_), **(info or {})}
        if getattr(self, "min_cells_", 1) > 1:                 # the public rule its trips respect
            meta["min_cells"] = int(self.min_cells_)
        meta.update(self._public_frame())
        check_inside(self.space_, loc, self.name)
        if not presorted:
            return TraceSet.from_events(user, t, loc, users, self.space_, self.time_, meta, friends,
                                        self.ledger_.copy())
        ts = TraceSet(user, t, loc, users, self.space_, self.time_, meta, friends, self.ledger_.copy())
        ts.check()
        return ts

    def _public_frame(self) -> dict:
        """What the model passes on of its training set's public frame: its bounds (a trip set's; a
        model saved before they existed passes none, and its sets read as the cabs'), the input's
        clock, and the estimated share of noise in a DP release (``noise``)."""
        out = {}
        if getattr(self, "bounds_", None) is not None:       # none for daily traces, and models saved before
            out["bounds"] = self.bounds_.to_dict()
        if getattr(self, "clock_", None) is not None:
            out["clock"] = self.clock_
        if getattr(self, "noise_", None) is not None:
            out["noise"] = self.noise_
        return out

    def _untimed(self, loc: np.ndarray, length: np.ndarray, seed: int = 0) -> TraceSet:
        """A synthetic set of trips (NGRAM's, PrivTrace's): trace q holds the next ``length[q]`` of
        ``loc``, each its own virtual user. With a time model (:meth:`_fit_times`) its points get
        times from it and ``hour`` its majority hour (as real trips'), a walk of more points than the
        model's duration cap holds instants cut to its first ones (trip_times.within_cap); without one
        they sit on instants 0, 1, ... (steps, not times: ``info['times']`` 'none') with ``hour`` -1."""
        m = length.size
        user = np.repeat(np.arange(m, dtype=np.int32), length)
        ids = np.array([f"v{q}" for q in range(m)], dtype=object)
        if getattr(self, "trip_times_", None) is None:
            t = np.arange(loc.size) - np.repeat(np.cumsum(length) - length, length)
            return self._synthetic(user, t, loc, np.full(m, -1), np.zeros(m, np.int32),
                                   extra={"hour": np.full(m, -1, np.int8)}, info={"times": "none"},
                                   user_id=ids, presorted=True)
        from .trip_times import TIMED, sample_times, within_cap

        loc, length = within_cap(self.trip_times_, self.time_, loc, length)
        user = np.repeat(np.arange(m, dtype=np.int32), length)
        t = sample_times(self.trip_times_, loc, length, self.space_, self.time_, seed)
        return self._synthetic(user, t, loc, np.full(m, -1), np.zeros(m, np.int32),
                               extra={"hour": self._majority_hours(user, t, loc, m)}, info={"times": TIMED},
                               user_id=ids, presorted=True)

    def _majority_hours(self, user: np.ndarray, t: np.ndarray, loc: np.ndarray, m: int) -> np.ndarray:
        """Each trip's hour as real trips get theirs (data/trips.py: the hour most of its time lies in)."""
        from ..data.trips import Visits, majority_hour

        minute = self.time_.start_of(t).as_unit("s").asi8 // 60
        return majority_hour(Visits(user.astype(np.int64), minute, loc), m, self.time_.timezone).astype(np.int8)

    def _fit_times(self, train: TraceSet, epsilon: float, share: float, left: float) -> float:
        """Spend ``share`` of the method's ``epsilon`` on the time model of its trips
        (synth/trip_times.py) when ``train`` has times; returns ``left`` less that spend. ``share``
        0 (or a set without times) fits none: the synthetic trips then carry no times."""
        eps, share = check_epsilon(epsilon), check_share(share, "time_share")
        self.trip_times_ = None
        if share == 0 or not train.has_times or train.n_events == 0:
            return left
        if share * eps >= left:
            raise InputError(f"`time_share` {share:g} leaves nothing of epsilon for the rest of {self.name}: the "
                             "shares must sum to less than 1")
        from .trip_times import fit_trip_times

        self.trip_times_ = fit_trip_times(train, share * eps, self.ledger_)
        return left - share * eps

    def _rectangular(self, locs: np.ndarray, source: np.ndarray, trace_no: np.ndarray, days: int,
                     extra: dict | None = None, user_id=None) -> TraceSet:
        """A synthetic TraceSet from ``locs`` (n_traces, T): every trace on instants 0 .. T - 1."""
        n, T = locs.shape
        return self._synthetic(np.repeat(np.arange(n, dtype=np.int32), T), np.tile(np.arange(T, dtype=np.int64), n),
                               locs.ravel(), source, trace_no, extra=extra, user_id=user_id,
                               info={"days": days, "instants": T}, presorted=True)

    # -- persistence ---------------------------------------------------------------------------
    def _arrays(self) -> dict[str, np.ndarray]:
        """Fitted arrays to save; subclasses extend."""
        return {}

    def _restore(self, arrays: dict[str, np.ndarray], fitted: dict) -> None:
        """Set fitted attributes from saved arrays and scalars; subclasses extend."""

    def _fitted_scalars(self) -> dict:
        return {}

    def save(self, path: str | Path, overwrite: bool = False) -> Path:
        """Save the fitted model as a directory (npz + JSON + Parquet, no pickle)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.check_is_fitted()
        path = Path(path)
        with atomic_output(path, overwrite, directory=True) as tmp:
            meta = {"format": MODEL_FORMAT, "format_version": MODEL_VERSION, "method": self.name,
                    "params": jsonable(self.get_params()), "fitted": jsonable(self._fitted_scalars()),
                    "training": self.training_, "summary": jsonable(self.summary()),
                    "ledger": self.ledger_.to_dict(),
                    "space": self.space_.meta(), "time": self.time_.meta(),
                    "min_cells": int(getattr(self, "min_cells_", 1)), **self._public_frame()}
            (tmp / "model.json").write_text(json.dumps(meta, indent=2))
            times = getattr(self, "trip_times_", None)
            footprint = getattr(self, "footprint_", None)
            np.savez(tmp / "arrays.npz", **self._arrays(), **(times.arrays() if times is not None else {}),
                     **({"footprint": footprint} if footprint is not None else {}))
            pq.write_table(pa.Table.from_pandas(self.users_, preserve_index=False), tmp / "users.parquet")
            pq.write_table(pa.Table.from_pandas(self.space_.to_frame(), preserve_index=False),
                           tmp / "locations.parquet")
        return path

    @classmethod
    def load(cls, path: str | Path) -> "Synthesizer":
        """Load a model directory written by :meth:`save` (any method when called on the base)."""
        import pyarrow.parquet as pq

        from . import registry

        path = Path(path)
        meta = read_model_meta(path)
        kind = registry.get(meta["method"])
        if cls is not Synthesizer and not issubclass(kind, cls):
            raise InputError(f"{path} holds a {kind.__name__}, not a {cls.__name__}")
        model = kind(**meta["params"])
        with _damaged(path / "arrays.npz"):
            with np.load(path / "arrays.npz", allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        with _damaged(path / "users.parquet"):
            users = pq.read_table(path / "users.parquet").to_pandas()
        with _damaged(path / "locations.parquet"):
            locations = pq.read_table(path / "locations.parquet").to_pandas()
        model.users_ = users
        model.space_ = Space.from_saved(locations, meta["space"])
        model.time_ = TimeAxis.from_meta(meta["time"])
        model.min_cells_ = int(meta.get("min_cells", 1))
        # a model saved before bounds existed: the cabs' (data/modes.py)
        model.bounds_ = Bounds.from_dict(meta["bounds"]) if isinstance(meta.get("bounds"), dict) else None
        model.clock_ = meta.get("clock")
        if "noise" in meta:
            model.noise_ = meta["noise"]
        model.training_ = meta.get("training", {})
        model.ledger_ = Ledger.from_dict(meta.get("ledger"))
        if "times_starts" in arrays or "times_dates" in arrays:
            from .trip_times import TripTimes

            model.trip_times_ = TripTimes.from_arrays(arrays, model.time_)
        model.footprint_ = arrays["footprint"].astype(bool) if "footprint" in arrays else None
        model._restore(arrays, meta.get("fitted", {}))
        return model


class Anonymizer(_Params):
    """Base class of methods that perturb traces instead of learning a model (obfuscations).

    ``transform(traces, seed=...)`` returns the perturbed TraceSet: one trace per input trace,
    ``source`` its input row (so the attacks can score it) and the input's ledger plus this
    step's spends. DP noise never comes from ``seed`` (see privacy/_opendp.py); ``seed`` drives
    any other randomness.
    """

    def transform(self, traces: TraceSet, *, seed: int = 0) -> TraceSet:
        raise NotImplementedError

    def _check(self, traces: TraceSet, seed: int = 0) -> None:
        self._validate_params()
        check_seed(seed)
        require_traceset(traces, "transform")
        if traces.n_events == 0:
            raise InputError("the trace set to anonymize is empty")
        traces.require_exact(self.name)
        unmet = self.tags.unmet(traces)
        if unmet:
            raise InputError(f"{self.name} {unmet}")

    def _anonymized(self, traces: TraceSet, loc: np.ndarray, ledger: Ledger | None = None, *,
                    locsets=None, source: np.ndarray | None = None) -> TraceSet:
        """``traces`` with locations ``loc`` (same events; deleted and generalized codes with
        ``locsets``), marked as this method's output; ``source``: the input row each trace was
        made from (default: its own row)."""
        source = np.arange(traces.n_traces) if source is None else np.asarray(source)
        users = traces.users[["user_id"]].assign(source=source.astype(np.int32), trace_no=np.int32(0))
        info = {"source": self.name, "anonymizer": self.name, "params": jsonable(self.get_params()),
                "training": {"users": traces.n_users, "traces": traces.n_traces, "events": traces.n_events},
                **{k: traces.info[k] for k in ("bounds", "clock") if k in traces.info}}     # the input's public frame
        after = (traces.ledger or Ledger()).merged(ledger or Ledger())
        if not self.tags.dp:
            after.note_uncovered(f"{self.name} released the input's traces without differential privacy")
        out = replace(traces, loc=np.asarray(loc, np.int32), users=users, info=info, ledger=after, locsets=locsets)
        out.check()
        check_inside(out.space, out.loc, self.name)
        return out


def check_inside(space: Space, loc: np.ndarray, name: str) -> None:
    """A RuntimeError when a method placed a location outside the space's public domain: each method
    tagged ``domain`` keeps to it by its own construction (masked states, a smaller alphabet, ...),
    and this is the promise checked on every set made."""
    loc = np.asarray(loc)
    outside = space.outside(loc[loc >= 0])
    if outside.any():
        raise RuntimeError(f"{name} placed {int(outside.sum())} of {loc.size} locations outside the public domain "
                           f"({space.domain})")


def parameter_docs(cls) -> dict[str, str]:
    """name -> its one-paragraph help, from the numpydoc ``Parameters`` sections of ``cls`` and its
    bases (``a, b : float`` documents both)."""
    import re

    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        doc = inspect.cleandoc(klass.__dict__.get("__doc__") or "")
        match = re.search(r"^Parameters\n-+\n(.*?)(?=^\S[^\n]*\n-+\n|\Z)", doc, re.M | re.S)
        if not match:
            continue
        entries: list[tuple[list[str], str, list[str]]] = []
        for line in match.group(1).splitlines():
            if line and not line.startswith(" ") and " : " in line:
                left, right = line.split(" : ", 1)
                entries.append(([n.strip() for n in left.split(",")], right.strip(), []))
            elif line.startswith(" ") and line.strip() and entries:
                entries[-1][2].append(line.strip())
            elif line.strip():
                break                                   # prose after the section
        for names, right, more in entries:
            # numpydoc's "name : type" then the text; the compact "name : text" has the text on the line
            is_type = more and len(right) <= 40 and ";" not in right and "." not in right
            text = " ".join(more if is_type else [right, *more])
            out.update({n: text for n in names})
    return out


def read_model_meta(path: Path) -> dict:
    """model.json of a model directory, checked; an InputError for anything else."""
    return read_json_meta(Path(path), "model.json", MODEL_FORMAT, MODEL_VERSION, "model")


@contextmanager
def _damaged(file: Path):
    """A file of a saved model that cannot be read (missing, cut short, not what it should be) as one
    InputError naming it."""
    import zipfile
    import zlib

    import pyarrow as pa

    try:
        yield
    except FileNotFoundError:
        raise InputError(f"{file} is missing: the model is incomplete; fit it again") from None
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error, pa.ArrowException) as exc:
        raise InputError(f"{file} is damaged ({type(exc).__name__}: {exc}): fit the model again") from None


def check_model_files(path: str | Path) -> None:
    """An InputError naming the first file of the saved model ``path`` that is missing or damaged:
    every member of ``arrays.npz`` read against its checksum (a file cut short, as by a full disk,
    fails here), the Parquet files' footers. Nothing is loaded into a model (``locsynth info``)."""
    import zipfile

    import pyarrow.parquet as pq

    path = Path(path)
    with _damaged(path / "arrays.npz"):
        with zipfile.ZipFile(path / "arrays.npz") as archive:
            bad = archive.testzip()
        if bad is not None:
            raise ValueError(f"its member {bad} fails its checksum")
    for name in ("users.parquet", "locations.parquet"):
        with _damaged(path / name):
            pq.read_metadata(path / name)


def load_model(path: str | Path) -> Synthesizer:
    """Load any saved synthesizer: :meth:`Synthesizer.load`, the one loader, under the name the
    API guide gave it first."""
    return Synthesizer.load(path)

