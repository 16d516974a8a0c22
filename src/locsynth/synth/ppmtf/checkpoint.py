"""Resumable Gibbs sampling: the state after each finished sweep, written atomically.

A checkpoint directory holds one file, ``state.npz``: factors, hyperparameters, RMSE per sweep, and
as JSON the sweep count, the sampler's random state and a fingerprint of the training data and of
every hyperparameter but the number of iterations (so that a run can be extended). It is
replaced in one rename, so an interruption leaves the previous sweep's state. A fit
that finds a checkpoint with its fingerprint continues after its last sweep and ends where an
uninterrupted run with the same seed would; one with another fingerprint is an error.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from ...core.errors import InputError
from ...data.traces import TraceSet
from .gibbs import FACTORS, GibbsState

FORMAT = 1


def fingerprint(train: TraceSet, params: dict) -> str:
    """Hash of the training events and of ``params``."""
    h = hashlib.sha256(train.fingerprint().encode())
    h.update(json.dumps({k: params[k] for k in sorted(params)}, default=str).encode())
    return h.hexdigest()


def save(directory: Path, state: GibbsState, rmse: list[float], rng: np.random.Generator, key: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    arrays = {n: state.factors[n] for n in FACTORS}
    arrays.update({f"mu_{n}": state.mu[n] for n in FACTORS})
    arrays.update({f"Lambda_{n}": state.Lambda[n] for n in FACTORS})
    arrays["rmse"] = np.asarray(rmse)
    meta = {"format": FORMAT, "iteration": state.iteration, "fingerprint": key, "rng": rng.bit_generator.state}
    arrays["meta"] = np.array(json.dumps(meta))
    tmp = directory / "state.npz.tmp"
    with open(tmp, "wb") as fh:
        np.savez(fh, **arrays)
    os.replace(tmp, directory / "state.npz")


def load(directory: Path, key: str, rng: np.random.Generator) -> tuple[GibbsState, list[float]] | None:
    """The saved state (and ``rng`` set to its random state), or None when there is none."""
    path = directory / "state.npz"
    if not path.exists():
        return None
    try:
        with np.load(path) as z:
            arrays = {k: z[k] for k in z.files}
        meta = json.loads(str(arrays["meta"]))
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"checkpoint {path} is damaged ({exc}); remove it to start afresh") from None
    if meta.get("format") != FORMAT:
        raise InputError(f"checkpoint {directory} has format {meta.get('format')!r}; this locsynth writes {FORMAT}")
    if meta["fingerprint"] != key:
        raise InputError(f"checkpoint {directory} belongs to other training data or hyperparameters")
    rng.bit_generator.state = meta["rng"]
    state = GibbsState({n: arrays[n] for n in FACTORS}, {n: arrays[f"mu_{n}"] for n in FACTORS},
                       {n: arrays[f"Lambda_{n}"] for n in FACTORS}, int(meta["iteration"]))
    return state, arrays["rmse"].tolist()
