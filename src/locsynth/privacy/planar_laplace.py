"""Planar Laplace: geo-indistinguishability (Andres, Bordenabe, Chatzikokolakis and Palamidessi,
CCS 2013).

A location x is released as x + noise with density D(z) = epsilon^2 / (2 pi) exp(-epsilon |z|):
for any two true locations x, x' and output z, D(z - x) / D(z - x') <= exp(epsilon |x - x'|), so
two places d metres apart are (epsilon d)-indistinguishable; ``epsilon`` is per metre and the
guarantee at radius r is l = epsilon r (the PWS Cup's (l, r)). In polar coordinates the noise has
a uniform angle and a radius r ~ Gamma(2, 1/epsilon), the sum of two Exp(1/epsilon); the paper's
inverse-CDF radius by the Lambert W function gives the same distribution.

Noise: every draw comes from OpenDP's Laplace (see _opendp.py): the radius is |L1| + |L2| with
L ~ Laplace(1/epsilon) (|L| ~ Exp(1/epsilon)), the angle 2 pi F(L3) with F the Laplace CDF
(uniform on (0, 1)). On a grid the output is snapped to its cell (and clamped into the grid),
so what is released is discrete and its support does not depend on the input.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..core.errors import InputError
from ..core.geo import EARTH_RADIUS_M
from .ledger import Ledger
from ..core.validation import check_epsilon
from . import _opendp


class Locations(Protocol):
    """What the mechanism asks of a space (a Space of data/space.py): each location's point, and
    the location a point falls in (``snap``: a grid's cell, points outside clamped into it, or the
    nearest POI)."""

    lat: np.ndarray
    lon: np.ndarray

    @property
    def n_locations(self) -> int: ...

    def snap(self, lat, lon) -> np.ndarray: ...


def planar_noise(n: int, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """(dx, dy) of ``n`` planar-Laplace draws, in the unit of 1 / epsilon (metres for epsilon per metre)."""
    eps = check_epsilon(epsilon)
    if n == 0:
        return np.zeros(0), np.zeros(0)
    b = 1.0 / eps
    draws = np.asarray(_opendp.float_laplace(3 * n, b)([0.0] * (3 * n)), dtype=np.float64).reshape(3, n)
    radius = np.abs(draws[0]) + np.abs(draws[1])
    u = np.where(draws[2] < 0, 0.5 * np.exp(draws[2] / b), 1.0 - 0.5 * np.exp(-draws[2] / b))
    angle = 2.0 * np.pi * u
    return radius * np.cos(angle), radius * np.sin(angle)


def planar_laplace(lat, lon, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Points (degrees) moved by planar-Laplace noise, ``epsilon`` per metre; the noise is laid on
    the local tangent plane of each point (metres east and north)."""
    lat, lon = np.asarray(lat, np.float64), np.asarray(lon, np.float64)
    if lat.shape != lon.shape:
        raise InputError("latitudes and longitudes differ in shape")
    dx, dy = planar_noise(lat.size, epsilon)
    new_lat = lat.ravel() + np.degrees(dy / EARTH_RADIUS_M)
    new_lon = lon.ravel() + np.degrees(dx / (EARTH_RADIUS_M * np.cos(np.radians(lat.ravel()))))
    return new_lat.reshape(lat.shape), new_lon.reshape(lon.shape)


def planar_laplace_locations(locs, space: Locations, epsilon: float, *, radius: float = 1000.0,
                             ledger: Ledger | None = None, saw: str = "") -> np.ndarray:
    """Locations through planar Laplace: from each location's point (a cell's centre), noise of
    ``epsilon`` per metre, then ``space.snap`` back to a location (the PWS Cup's obfuscation on a
    grid).

    The ledger records epsilon * ``radius`` (metres) per event: two locations whose points are
    within ``radius`` of each other are that indistinguishable.
    """
    eps = check_epsilon(epsilon)
    radius = check_epsilon(radius, "radius")
    c = np.asarray(locs)
    if c.dtype.kind not in "iu":
        raise InputError(f"locations must be integer ids, got {c.dtype}")
    if c.size and (c.min() < 0 or c.max() >= space.n_locations):
        raise InputError(f"location ids must be in 0..{space.n_locations - 1}")
    lat, lon = planar_laplace(space.lat[c.ravel()], space.lon[c.ravel()], eps)
    out = space.snap(lat, lon)
    if ledger is not None:
        ledger.record("planar-laplace", eps * radius, 0.0, radius, f"event (locations within {radius:g} m)",
                      saw or f"events on {space.n_locations} locations",
                      f"epsilon = {eps:g} per metre; each event noised independently; which events there are "
                      f"(users, times) is public", relation="replace")
    return out.reshape(c.shape)
