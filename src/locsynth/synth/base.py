"""What every synthesizer shares: the protocol, the training set's frame, and save/load.

A synthesizer is a scikit-learn style estimator: the constructor only stores hyperparameters,
``fit(train)`` learns attributes ending in ``_`` and returns ``self``, ``sample(...)`` returns a
synthetic TraceSet. A fitted model saves as a directory: ``model.json`` (class, hyperparameters,
fitted scalars, the training set's space and time axis), ``arrays.npz`` (no pickle) and the
training users and locations as Parquet.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import InputError
from ..space import Space
from ..timeaxis import TimeAxis
from ..traces import TraceSet, atomic_output

MODEL_FORMAT = "locsynth.model"
MODEL_VERSION = 1
REGISTRY: dict[str, type["Synthesizer"]] = {}


class NotFittedError(InputError):
    """The model must be fitted (or loaded) first."""


class Synthesizer:
    """Base class: hyperparameters in ``__init__``, ``fit`` -> self, ``sample`` -> TraceSet."""

    name = "base"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        REGISTRY[cls.name] = cls

    # -- hyperparameters (scikit-learn's get_params) -------------------------------------------
    def get_params(self) -> dict:
        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {name: getattr(self, name) for name in names}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    # -- the training set's frame --------------------------------------------------------------
    def _remember_frame(self, train: TraceSet) -> None:
        if train.n_traces == 0 or train.n_events == 0:
            raise InputError("the training set is empty")
        self.users_ = train.users[["user_id"]].copy()
        self.space_ = train.space
        self.time_ = train.time

    def check_is_fitted(self) -> None:
        if not hasattr(self, "users_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted: call fit(train) or load a model")

    @property
    def n_users(self) -> int:
        self.check_is_fitted()
        return len(self.users_)

    def _synthetic(self, source: np.ndarray, trace_no: np.ndarray, locs: np.ndarray, days: int,
                   extra: dict | None = None, user_id=None) -> TraceSet:
        """A synthetic TraceSet from ``locs`` (n_traces, days * instants_per_day), every trace from day 0."""
        n, T = locs.shape
        if user_id is None:
            user_id = self.users_["user_id"].to_numpy()[source]
        users = pd.DataFrame({"user_id": user_id, "source": source.astype(np.int32),
                              "trace_no": trace_no.astype(np.int32)})
        for key, value in (extra or {}).items():
            users[key] = value
        info = {"source": self.name, "synthesizer": self.name, "params": _jsonable(self.get_params()),
                "days": days, "instants": T}
        return TraceSet(np.repeat(np.arange(n, dtype=np.int32), T), np.tile(np.arange(T, dtype=np.int64), n),
                        locs.ravel().astype(np.int32), users, self.space_, self.time_, info)

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
        self.check_is_fitted()
        path = Path(path)
        with atomic_output(path, overwrite, directory=True) as tmp:
            meta = {"format": MODEL_FORMAT, "format_version": MODEL_VERSION, "synthesizer": self.name,
                    "params": _jsonable(self.get_params()), "fitted": _jsonable(self._fitted_scalars()),
                    "space": self.space_.meta(), "time": self.time_.meta()}
            (tmp / "model.json").write_text(json.dumps(meta, indent=2))
            np.savez(tmp / "arrays.npz", **self._arrays())
            pq.write_table(pa.Table.from_pandas(self.users_, preserve_index=False), tmp / "users.parquet")
            pq.write_table(pa.Table.from_pandas(self.space_.to_frame(), preserve_index=False),
                           tmp / "locations.parquet")
        return path

    @classmethod
    def load(cls, path: str | Path) -> "Synthesizer":
        """Load a model directory written by :meth:`save` (any synthesizer when called on the base)."""
        path = Path(path)
        try:
            meta = json.loads((path / "model.json").read_text())
        except FileNotFoundError:
            raise InputError(f"{path} is not a locsynth model directory (no model.json)") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{path / 'model.json'} is damaged: {exc}") from None
        if meta.get("format") != MODEL_FORMAT or meta.get("format_version") != MODEL_VERSION:
            raise InputError(f"{path} is not a locsynth model of format version {MODEL_VERSION}")
        kind = REGISTRY.get(meta.get("synthesizer"))
        if kind is None:
            raise InputError(f"{path} holds an unknown synthesizer {meta.get('synthesizer')!r}; "
                             f"expected one of {', '.join(sorted(REGISTRY))}")
        if cls is not Synthesizer and not issubclass(kind, cls):
            raise InputError(f"{path} holds a {kind.__name__}, not a {cls.__name__}")
        model = kind(**meta["params"])
        try:
            with np.load(path / "arrays.npz", allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
            users = pq.read_table(path / "users.parquet").to_pandas()
            locations = pq.read_table(path / "locations.parquet").to_pandas()
        except (OSError, ValueError, pa.ArrowException) as exc:
            raise InputError(f"{path} is damaged: {exc}") from None
        model.users_ = users
        model.space_ = Space.from_saved(locations, meta["space"])
        model.time_ = TimeAxis.from_meta(meta["time"])
        model._restore(arrays, meta.get("fitted", {}))
        return model


def load_model(path: str | Path) -> Synthesizer:
    """Load any saved synthesizer."""
    return Synthesizer.load(path)


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def user_uniforms(seed: int, user: int, shape: tuple[int, ...], stream: int = 0) -> np.ndarray:
    """Uniforms of one user, from SeedSequence(seed) keyed by (stream, user) (DESIGN.md): the
    output does not depend on how users are split between workers."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(stream, user))).random(shape)
