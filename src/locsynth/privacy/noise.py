"""How much of a DP release is noise, from public quantities and the noisy counts alone.

A method that samples its trips from noisy histograms releases, beside what the data say, what the
noise put into cells the data left empty: an empty cell's count is noise alone, and whatever of it
passes the method's threshold (or its clipping at 0) is mass the synthetic trips are drawn from.
The expected mass noise alone leaves in one empty cell depends only on the noise's scale and the
threshold, both public; summed over the cells, against the noisy total the method samples from,
it estimates the share of the release that is noise (:func:`share`). Which cells are empty is read
from the release itself (:func:`noise_mass`: the cells it zeroed, each standing for the empty cells
it stands for), so that the estimate stays small for a city's worth of trips on a coarse grid and
nears 1 for a few hundred trips on a fine one. Being computed from released
values and public parameters only, it is post-processing and may be stated on a release's card.
"""

from __future__ import annotations

import math

import numpy as np


def kept_laplace(scale, threshold=0.0):
    """E[X 1{X > threshold}] for X ~ Laplace(0, ``scale``), ``threshold`` >= 0: the mass Laplace
    noise alone leaves in an empty cell whose count is kept above ``threshold`` (set to 0 below
    it): (threshold + scale) e^(-threshold / scale) / 2; scale / 2 for clipping at 0. Floats or
    arrays (elementwise)."""
    scale = np.asarray(scale, np.float64)
    threshold = np.maximum(np.asarray(threshold, np.float64), 0.0)
    safe = np.where(scale > 0, scale, 1.0)
    out = np.where(scale > 0, 0.5 * (threshold + safe) * np.exp(-threshold / safe), 0.0)
    return float(out) if out.ndim == 0 else out


def kept_normal(sd, threshold=0.0):
    """E[X 1{X > threshold}] for X ~ N(0, ``sd``^2): the mass an estimate of an empty cell keeps
    when noise of that spread is clipped at ``threshold`` (OUE's estimates, privacy/oue.py, are
    about normal for many reports): sd phi(threshold / sd). Floats or arrays (elementwise)."""
    sd = np.asarray(sd, np.float64)
    safe = np.where(sd > 0, sd, 1.0)
    z = np.maximum(np.asarray(threshold, np.float64), 0.0) / safe
    out = np.where(sd > 0, safe * np.exp(-z * z / 2) / math.sqrt(2 * math.pi), 0.0)
    return float(out) if out.ndim == 0 else out


def noise_mass(released, scale, threshold=0.0, law: str = "laplace", spread: float = 2.0) -> float:
    """The mass noise alone put into ``released``, an array of noisy counts kept where they
    exceeded ``threshold`` and 0 elsewhere (``scale``: the Laplace scale, or the normal's sd with
    ``law="normal"``; each a float or an array of ``released``'s shape): its expectation plus
    ``spread`` standard deviations, at most all cells' expected noise and its spread.

    Which cells are empty is not known, but an empty cell is zeroed with a known chance, so each
    zero stands for 1 / that chance empty cells (Horvitz-Thompson), each of which keeps
    :func:`kept_laplace` (:func:`kept_normal`) on average. A cell whose count is small beside the
    noise is zeroed almost as often, and counted as empty: its mass is mostly noise too. The spread
    (choice: two standard deviations) keeps a release that is all noise from reading as part
    signal when its noise happened to keep more than it does on average (docs/data.md)."""
    released = np.asarray(released, np.float64).ravel()
    scale = np.broadcast_to(np.asarray(scale, np.float64), released.shape)
    threshold = np.broadcast_to(np.maximum(np.asarray(threshold, np.float64), 0.0), released.shape)
    safe = np.where(scale > 0, scale, 1.0)
    if law == "laplace":
        kept = np.asarray(kept_laplace(scale, threshold))
        zeroed = 1.0 - 0.5 * np.exp(-threshold / safe)
        # E[X^2 1{X > t}] = e^(-t/b) (t^2 + 2 t b + 2 b^2) / 2
        square = np.where(scale > 0, 0.5 * np.exp(-threshold / safe) * (threshold ** 2 + 2 * threshold * safe
                                                                         + 2 * safe ** 2), 0.0)
    elif law == "normal":
        from scipy.special import ndtr

        kept = np.asarray(kept_normal(scale, threshold))
        z = threshold / safe
        zeroed = ndtr(z)
        # E[X^2 1{X > t}] = sd^2 (z phi(z) + 1 - Phi(z))
        square = np.where(scale > 0, safe ** 2 * (z * np.exp(-z * z / 2) / math.sqrt(2 * math.pi) + 1 - zeroed), 0.0)
    else:
        raise ValueError(f"unknown law {law!r}: 'laplace' or 'normal'")
    kept, square = np.broadcast_to(kept, released.shape), np.broadcast_to(square, released.shape)
    empty = np.where(released <= 0, 1.0 / np.maximum(zeroed, 1e-12), 0.0)
    variance = square - kept ** 2
    mass = float((empty * kept).sum()) + spread * math.sqrt(float((empty * variance).sum()))
    return float(min(mass, kept.sum() + spread * math.sqrt(float(variance.sum()))))


def share(noise_mass: float, total: float) -> float:
    """The noise's share of a release: the expected ``noise_mass`` against the noisy ``total`` it
    samples from, at most 1 (1 when nothing is left)."""
    noise_mass, total = float(noise_mass), float(total)
    if not np.isfinite(total) or total <= 0:
        return 1.0
    return float(min(1.0, max(noise_mass, 0.0) / total))


def toward_uniform(kept: np.ndarray, uniform: np.ndarray, rho: float) -> np.ndarray:
    """The histogram ``kept`` mixed with ``uniform`` at weight ``rho`` (its noise share), each as a
    distribution, scaled to ``kept``'s total (``uniform``'s where ``kept`` holds nothing): a
    post-processing that falls back toward the uniform guess as far as noise fills the histogram."""
    kept, uniform = np.asarray(kept, np.float64), np.asarray(uniform, np.float64)
    total, mass = kept.sum(), uniform.sum()
    if mass <= 0:
        return kept
    if total <= 0:
        return uniform.copy()
    rho = float(min(max(rho, 0.0), 1.0))
    return total * ((1 - rho) * kept / total + rho * uniform / mass)


__all__ = ["describe_noise", "kept_laplace", "kept_normal", "noise_mass", "share", "toward_uniform"]


def describe_noise(noise: dict) -> str:
    """A model's or release's ``noise`` (``{"share": s, "parts": {what: s, ...}}``) in words."""
    parts = noise.get("parts") or {}
    listed = ", ".join(f"{what} {100 * v:.0f} %" for what, v in parts.items())
    return (f"an estimated {100 * float(noise['share']):.0f} % of what the release is drawn from is noise"
            + (f" ({listed})" if listed else ""))
