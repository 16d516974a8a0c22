"""A synthetic city, for demos and scale tests.

Every simulated user has a home, a work (or school) place and a few favourite places, and lives
a daily routine in local time: nights at home, working hours at work on weekdays, free time in
the evenings and at weekends. Free time follows the exploration and preferential return (EPR)
model of Song, Koren, Wang and Barabasi, *Modelling the scaling properties of human mobility*,
Nature Physics 6, 818-823 (2010): at each move the user explores a new location with probability

.. math:: P_{new} = \\rho S^{-\\gamma}

(``S`` = number of distinct locations visited so far, rho = 0.6, gamma = 0.21), jumping a distance
drawn from the truncated power law P(dr) ~ dr^(-1-alpha), alpha = 0.55; otherwise it returns to a
visited location with probability proportional to its visit count. The user stays where it moved
for a waiting time drawn from P(dt) ~ dt^(-1-beta), beta = 0.8, cut off at 17 h (same paper).

Homes and workplaces are drawn from a spatially heterogeneous density (a :class:`City`: a few
Gaussian centres over a uniform background; workplaces concentrate more), so the population is
not spread uniformly. With ``checkin_rate`` each user keeps each event with its own rate, drawn
from a Beta distribution with that mean, as sparse check-in data do.

Randomness
----------
The city (density centres, synthetic POIs) comes from ``SeedSequence(seed, spawn_key=(0,))``.
User ``u`` draws from two 64-bit words of ``SeedSequence(seed, spawn_key=(1, u // USER_BLOCK))``
(the child that ``SeedSequence(seed).spawn(2)[1].spawn(b + 1)[b]`` would return), at offset
``u % USER_BLOCK``; each word seeds a SplitMix64 stream inside the numba kernel, the first for the
trajectory and the second for check-in thinning. A user's trace is therefore a pure function of
``(seed, u)`` and of the space and time axis: it does not depend on ``n_users``, on the chunk
size, or on the number of threads, and a sparse set is a subsample of the dense one.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
from numba import njit, prange

from ..core.errors import InputError
from ..core.graphs import erdos_renyi
from ..core.rng import USER_BLOCK, user_words
from ..core.rng import next_u64 as _next_u64
from ..core.rng import uniform as _uniform
from .space import Grid, POISpace, Space
from .timeaxis import TimeAxis
from .traces import TraceSet, TraceSetWriter

__all__ = ["City", "Geometry", "TOKYO_BBOX", "explore_probability", "make_geometry", "make_space", "simulate",
           "simulate_to_dir", "space_bbox", "synthetic_pois", "user_keys"]

#: (lat_min, lat_max, lon_min, lon_max) of central Tokyo: the box of the PPMTF authors' PF preprocessing
TOKYO_BBOX = (35.65, 35.75, 139.68, 139.80)
DEFAULT_GRID = (20, 20)
#: labels of synthetic POIs and their shares
POI_CATEGORIES = ("home-area", "office", "shop", "food", "park")
POI_SHARES = (0.35, 0.20, 0.20, 0.15, 0.10)

# EPR parameters, Song et al. 2010
RHO = 0.6
GAMMA = 0.21
JUMP_ALPHA = 0.55
WAIT_BETA = 0.8
WAIT_MIN_H = 1.0 / 3.0
WAIT_MAX_H = 17.0
JUMP_MIN_KM = 0.5
EXPLORE_TRIES = 8

# routine and memory (this module's choices)
N_FAVOURITES = (2, 6)
WEIGHT_HOME, WEIGHT_WORK, WEIGHT_FAVOURITE = 3.0, 1.0, 2.0
DAY_OFF = 0.05
LATE_NIGHT = 0.05
JITTER_H = 0.5

# city
N_CENTRES = 6
HOME_BACKGROUND, WORK_BACKGROUND = 0.10, 0.05
CHECKIN_CONCENTRATION = 5.0

#: users per SeedSequence child; part of the reproducibility contract (changing it changes output)
DEFAULT_CHUNK_USERS = 100_000
#: a chunk also holds at most this many events' worth of users (about 50 bytes per event at peak)
MAX_CHUNK_EVENTS = 8_000_000

HOME, WORK, FREE = 0, 1, 2



# -- the city ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class City:
    """Where people live and work: Gaussian centres over a uniform background.

    Attributes
    ----------
    bbox : (lat_min, lat_max, lon_min, lon_max)
    centre_x, centre_y : ndarray of shape (n_centres,)
        Centres in km east and north of the bbox's south-west corner.
    sigma_km : ndarray of shape (n_centres,)
        Spread of each centre for homes; workplaces use half of it.
    weight : ndarray of shape (n_centres,)
        Share of each centre for homes (sums to 1); workplaces use the normalised squares.
    """

    bbox: tuple[float, float, float, float]
    centre_x: np.ndarray
    centre_y: np.ndarray
    sigma_km: np.ndarray
    weight: np.ndarray

    @classmethod
    def from_seed(cls, seed: int, bbox: tuple[float, float, float, float] = TOKYO_BBOX,
                  n_centres: int = N_CENTRES) -> "City":
        """A random city over ``bbox``, drawn from ``SeedSequence(seed, spawn_key=(0,))``."""
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0,)))
        width, height = _extent_km(bbox)
        weight = rng.lognormal(0.0, 0.6, n_centres)
        return cls(bbox=tuple(float(v) for v in bbox),
                   centre_x=rng.uniform(0.15, 0.85, n_centres) * width,
                   centre_y=rng.uniform(0.15, 0.85, n_centres) * height,
                   sigma_km=rng.uniform(0.04, 0.12, n_centres) * math.hypot(width, height),
                   weight=weight / weight.sum())

    def _mixture(self, kind: str) -> tuple[np.ndarray, np.ndarray, float]:
        """(weights, sigmas, background share) of the homes' or the workplaces' density."""
        if kind == "home":
            return self.weight, self.sigma_km, HOME_BACKGROUND
        w = self.weight ** 2
        return w / w.sum(), self.sigma_km / 2, WORK_BACKGROUND

    def density(self, lat: np.ndarray, lon: np.ndarray, kind: str = "home") -> np.ndarray:
        """Density (per km^2) of homes (``kind='home'``) or workplaces (``'work'``) at the points."""
        w, sigma, background = self._mixture(kind)
        x, y = _planar_km(np.asarray(lat, float), np.asarray(lon, float), self.bbox)
        d2 = (x[:, None] - self.centre_x) ** 2 + (y[:, None] - self.centre_y) ** 2
        gauss = np.exp(-d2 / (2 * sigma ** 2)) / (2 * np.pi * sigma ** 2)
        width, height = _extent_km(self.bbox)
        return (1 - background) * gauss @ w + background / (width * height)

    def sample(self, n: int, kind: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``n`` points (lat, lon) inside the bbox from the ``kind`` density (or ``'uniform'``)."""
        width, height = _extent_km(self.bbox)
        x, y = np.empty(0), np.empty(0)
        while x.size < n:
            m = 2 * (n - x.size) + 16
            if kind == "uniform":
                px, py = rng.uniform(0, width, m), rng.uniform(0, height, m)
            else:
                px, py = self._sample_mixture(m, kind, rng)
            inside = (px >= 0) & (px < width) & (py >= 0) & (py < height)
            x, y = np.concatenate([x, px[inside]]), np.concatenate([y, py[inside]])
        return _planar_to_latlon(x[:n], y[:n], self.bbox)

    def _sample_mixture(self, m: int, kind: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        w, sigma, background = self._mixture(kind)
        width, height = _extent_km(self.bbox)
        comp = rng.choice(w.size + 1, size=m, p=np.append((1 - background) * w, background))
        gauss = comp < w.size
        c = np.minimum(comp, w.size - 1)
        px = np.where(gauss, self.centre_x[c] + sigma[c] * rng.standard_normal(m), rng.uniform(0, width, m))
        py = np.where(gauss, self.centre_y[c] + sigma[c] * rng.standard_normal(m), rng.uniform(0, height, m))
        return px, py


def synthetic_pois(n: int, *, seed: int = 0, bbox: tuple[float, float, float, float] = TOKYO_BBOX) -> POISpace:
    """``n`` POIs drawn from the city of ``seed``, labelled with :data:`POI_CATEGORIES`.

    'home-area' POIs follow the homes' density, 'office' the workplaces', 'shop' and 'food' a
    half-and-half mix of the two, and 'park' is uniform over the box.
    """
    n, seed = _check_count(n, "pois"), _check_seed(seed)
    city = City.from_seed(seed, bbox)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0, 1)))
    category = rng.choice(np.array(POI_CATEGORIES, dtype=object), size=n, p=POI_SHARES)
    mixed = np.where(rng.random(n) < 0.5, "home", "work")
    source = np.select([category == "home-area", category == "office", category == "park"],
                       ["home", "work", "uniform"], mixed)
    lat, lon = np.empty(n), np.empty(n)
    for kind in ("home", "work", "uniform"):
        at = source == kind
        lat[at], lon[at] = city.sample(int(at.sum()), kind, rng)
    return POISpace(lat, lon, category=category, name=np.array([f"sim-{i}" for i in range(n)], dtype=object))


def make_space(grid: tuple[int, int] | None = None, pois: int | None = None, *, seed: int = 0,
               bbox: tuple[float, float, float, float] = TOKYO_BBOX) -> Space:
    """The space to simulate on: a ``grid`` (rows, cols) over ``bbox`` (default 20 x 20), or
    ``pois`` synthetic POIs of the city of ``seed`` (:func:`synthetic_pois`)."""
    if grid is not None and pois is not None:
        raise InputError("choose one space: a grid or a number of POIs, not both")
    if pois is not None:
        return synthetic_pois(pois, seed=seed, bbox=bbox)
    rows, cols = DEFAULT_GRID if grid is None else grid
    return Grid(rows, cols, bbox)


def _extent_km(bbox) -> tuple[float, float]:
    lat_min, lat_max, lon_min, lon_max = bbox
    x, y = _planar_km(np.array([lat_max]), np.array([lon_max]), bbox)
    return max(float(x[0]), 0.1), max(float(y[0]), 0.1)


def _planar_km(lat: np.ndarray, lon: np.ndarray, bbox) -> tuple[np.ndarray, np.ndarray]:
    """Equirectangular km east and north of the bbox's south-west corner (fine at city scale)."""
    lat_min, lat_max, lon_min, _ = bbox
    kx = 111.320 * math.cos(math.radians((lat_min + lat_max) / 2))
    return (lon - lon_min) * kx, (lat - lat_min) * 110.574


def _planar_to_latlon(x: np.ndarray, y: np.ndarray, bbox) -> tuple[np.ndarray, np.ndarray]:
    lat_min, lat_max, lon_min, _ = bbox
    kx = 111.320 * math.cos(math.radians((lat_min + lat_max) / 2))
    return lat_min + y / 110.574, lon_min + x / kx


# -- the space as the kernel sees it -----------------------------------------------------------
class Geometry(NamedTuple):
    """A space prepared for the numba kernel.

    Locations are bucketed on a regular grid (a Grid's own cells, one location each) so that a
    jump's landing point finds its nearest location in one bucket.
    """

    xy: np.ndarray           # (n_locations, 2) km east, north
    box: np.ndarray          # [x0, y0, bucket width, bucket height, longest jump] in km
    shape: np.ndarray        # [bucket rows, bucket cols]
    bucket_ptr: np.ndarray   # CSR offsets into bucket_loc, (rows * cols + 1,)
    bucket_loc: np.ndarray   # location ids sorted by bucket
    home_cdf: np.ndarray     # cumulative home weights of the locations
    work_cdf: np.ndarray     # cumulative work weights of the locations


def space_bbox(space: Space) -> tuple[float, float, float, float]:
    """A Grid's box, or the bounding box of a POI set (padded when degenerate)."""
    if isinstance(space, Grid):
        return space.bbox
    lat_min, lat_max = float(space.lat.min()), float(space.lat.max())
    lon_min, lon_max = float(space.lon.min()), float(space.lon.max())
    pad = 0.005
    if lat_max - lat_min < pad:
        lat_min, lat_max = lat_min - pad, lat_max + pad
    if lon_max - lon_min < pad:
        lon_min, lon_max = lon_min - pad, lon_max + pad
    return lat_min, lat_max, lon_min, lon_max


def make_geometry(space: Space, city: City) -> Geometry:
    """Bucket the locations and weight them for homes and workplaces by the city's density."""
    bbox = city.bbox
    x, y = _planar_km(space.lat, space.lon, bbox)
    width, height = _extent_km(bbox)
    if isinstance(space, Grid):
        rows, cols = space.rows, space.cols
    else:
        side = math.sqrt(width * height / max(space.n_locations / 2, 1))
        rows, cols = max(1, math.ceil(height / side)), max(1, math.ceil(width / side))
    bw, bh = width / cols, height / rows
    r = np.clip(np.floor(y / bh), 0, rows - 1).astype(np.int64)
    c = np.clip(np.floor(x / bw), 0, cols - 1).astype(np.int64)
    bucket = r * cols + c
    order = np.argsort(bucket, kind="stable")
    ptr = np.zeros(rows * cols + 1, np.int64)
    ptr[1:] = np.cumsum(np.bincount(bucket, minlength=rows * cols))
    return Geometry(
        xy=np.ascontiguousarray(np.column_stack([x, y])),
        box=np.array([0.0, 0.0, bw, bh, math.hypot(width, height)]),
        shape=np.array([rows, cols], np.int64),
        bucket_ptr=ptr, bucket_loc=order.astype(np.int32),
        home_cdf=_anchor_cdf(space, city, "home", "home-area"),
        work_cdf=_anchor_cdf(space, city, "work", "office"))


def _anchor_cdf(space: Space, city: City, kind: str, label: str) -> np.ndarray:
    """Cumulative weights: the city's density, only at ``label`` POIs when the space has them."""
    w = city.density(space.lat, space.lon, kind)
    if space.category is not None:
        mask = space.category.astype(str) == label
        if mask.any():
            w = w * mask
    cdf = np.cumsum(w)
    return cdf / cdf[-1]


# -- random numbers (SplitMix64, one stream per user) -----------------------------------------
@njit(cache=True)
def _truncated_power(state, lo, hi, exponent):
    """Draw from p(x) ~ x^(-1-exponent) on [lo, hi] by inverting the CDF."""
    a, b = lo ** -exponent, hi ** -exponent
    return (a - _uniform(state) * (a - b)) ** (-1.0 / exponent)


@njit(cache=True)
def _normal(state):
    return math.sqrt(-2.0 * math.log(_uniform(state))) * math.cos(2.0 * math.pi * _uniform(state))


@njit(cache=True)
def _gamma(state, shape):
    """Gamma(shape, 1) by Marsaglia and Tsang (2000), boosted for shape < 1."""
    boost = 1.0
    if shape < 1.0:
        boost = _uniform(state) ** (1.0 / shape)
        shape += 1.0
    d = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = _normal(state)
        v = (1.0 + c * x) ** 3
        if v > 0.0 and math.log(_uniform(state)) < 0.5 * x * x + d - d * v + d * math.log(v):
            return d * v * boost


@njit(cache=True)
def _beta(state, a, b):
    g = _gamma(state, a)
    return g / (g + _gamma(state, b))


@njit(cache=True)
def _sample_cdf(state, cdf):
    return np.searchsorted(cdf, _uniform(state) * cdf[-1], side="right")


# -- exploration and preferential return (Song et al. 2010) ------------------------------------
@njit(cache=True)
def explore_probability(n_visited):
    """P_new = rho * S^-gamma: probability that an EPR move explores (Song et al. 2010)."""
    return RHO * n_visited ** -GAMMA


@njit(cache=True)
def _nearest_in_bucket(geo, x, y):
    """The location nearest to (x, y) in its bucket; -1 outside the box or in an empty bucket."""
    rows, cols = geo.shape[0], geo.shape[1]
    r = int(math.floor((y - geo.box[1]) / geo.box[3]))
    c = int(math.floor((x - geo.box[0]) / geo.box[2]))
    if r < 0 or r >= rows or c < 0 or c >= cols:
        return -1
    b = r * cols + c
    best, best_d = -1, np.inf
    for j in range(geo.bucket_ptr[b], geo.bucket_ptr[b + 1]):
        loc = geo.bucket_loc[j]
        d = (geo.xy[loc, 0] - x) ** 2 + (geo.xy[loc, 1] - y) ** 2
        if d < best_d:
            best, best_d = loc, d
    return best


@njit(cache=True)
def _explore(state, origin, geo, index_of):
    """A new location one power-law jump (P(dr) ~ dr^(-1-alpha)) away from ``origin``; -1 if none found."""
    for _ in range(EXPLORE_TRIES):
        r = _truncated_power(state, JUMP_MIN_KM, max(geo.box[4], 2 * JUMP_MIN_KM), JUMP_ALPHA)
        theta = 2.0 * math.pi * _uniform(state)
        loc = _nearest_in_bucket(geo, geo.xy[origin, 0] + r * math.cos(theta),
                                 geo.xy[origin, 1] + r * math.sin(theta))
        if loc >= 0 and index_of[loc] < 0:
            return loc
    return -1


@njit(cache=True)
def _remember(loc, weight, mem_loc, mem_cnt, index_of, size):
    """Add a visited location with an initial visit weight; returns the new number visited."""
    mem_loc[size] = loc
    mem_cnt[size] = weight
    index_of[loc] = size
    return size + 1


@njit(cache=True)
def _forget(mem_loc, index_of, size):
    for i in range(size):
        index_of[mem_loc[i]] = -1


@njit(cache=True)
def _preferential_return(state, mem_loc, mem_cnt, size, total):
    """A visited location, chosen with probability proportional to its visit count."""
    target = _uniform(state) * total
    acc = 0.0
    for i in range(size):
        acc += mem_cnt[i]
        if target < acc:
            return mem_loc[i]
    return mem_loc[size - 1]


@njit(cache=True)
def _epr_move(state, cur, geo, mem_loc, mem_cnt, index_of, size, total):
    """One EPR move from ``cur``; returns (location, visited count, total visit weight)."""
    if _uniform(state) < explore_probability(size):
        new = _explore(state, cur, geo, index_of)
        if new >= 0:
            return new, _remember(new, 1.0, mem_loc, mem_cnt, index_of, size), total + 1.0
    loc = _preferential_return(state, mem_loc, mem_cnt, size, total)
    mem_cnt[index_of[loc]] += 1.0
    return loc, size, total + 1.0


@njit(cache=True)
def _dwell_instants(state, instant_h):
    """Instants to stay after a move: waiting time P(dt) ~ dt^(-1-beta), cut at 17 h."""
    hours = _truncated_power(state, WAIT_MIN_H, WAIT_MAX_H, WAIT_BETA)
    return max(1, int(math.ceil(hours / instant_h - 1e-9)))


# -- the daily routine --------------------------------------------------------------------------
@njit(cache=True)
def _draw_routine(state):
    """A user's habits in local hours: (work start, work length, home by, weekend start)."""
    return (7.5 + 2.5 * _uniform(state), 7.0 + 3.0 * _uniform(state),
            19.5 + 4.0 * _uniform(state), 8.5 + 3.5 * _uniform(state))


@njit(cache=True)
def _plan_day(state, routine, weekend):
    """(work start, work end, home by, late-night carry into tomorrow) for one day, jittered."""
    work_start, work_len, home_by, weekend_out = routine
    jitter = JITTER_H * (2.0 * _uniform(state) - 1.0)
    day_off = _uniform(state) < DAY_OFF
    if weekend or day_off:
        start = end = weekend_out + jitter
    else:
        start = work_start + jitter
        end = start + work_len + JITTER_H * (2.0 * _uniform(state) - 1.0)
    back = home_by + JITTER_H * (2.0 * _uniform(state) - 1.0)
    carry = 0.0
    if _uniform(state) < LATE_NIGHT:
        back, carry = 24.0, 0.5 + 2.5 * _uniform(state)
    return start, end, min(back, 24.0), carry


@njit(cache=True)
def _mode(hour, plan, carry_in):
    """HOME, WORK or FREE at a local hour, given the day's plan and last night's carry."""
    start, end, back, _ = plan
    if hour < carry_in:
        return FREE
    if hour < start:
        return HOME
    if hour < end:
        return WORK
    if hour < back:
        return FREE
    return HOME


# -- one user, one chunk ---------------------------------------------------------------------------
@njit(cache=True)
def _anchors(state, geo, mem_loc, mem_cnt, index_of):
    """Home, work and 2-6 favourites (power-law jumps from home); returns (home, work, visited, weight)."""
    home = _sample_cdf(state, geo.home_cdf)
    work = _sample_cdf(state, geo.work_cdf)
    for _ in range(10):
        if work != home:
            break
        work = _sample_cdf(state, geo.work_cdf)
    size = _remember(home, WEIGHT_HOME, mem_loc, mem_cnt, index_of, 0)
    total = WEIGHT_HOME
    if work != home:
        size = _remember(work, WEIGHT_WORK, mem_loc, mem_cnt, index_of, size)
        total += WEIGHT_WORK
    lo, hi = N_FAVOURITES
    for _ in range(lo + int(_uniform(state) * (hi - lo + 1))):
        fav = _explore(state, home, geo, index_of)
        if fav >= 0:
            size = _remember(fav, WEIGHT_FAVOURITE, mem_loc, mem_cnt, index_of, size)
            total += WEIGHT_FAVOURITE
    return home, work, size, total


@njit(cache=True)
def _simulate_user(state, geo, hours, weekend, instant_h, out, mem_loc, mem_cnt, index_of):
    """Fill ``out`` (days * instants_per_day,) with one user's locations; returns (home, work, visited)."""
    home, work, size, total = _anchors(state, geo, mem_loc, mem_cnt, index_of)
    routine = _draw_routine(state)
    per_day = hours.shape[0]
    cur, free_until, carry = home, -1, 0.0
    for d in range(weekend.shape[0]):
        plan = _plan_day(state, routine, weekend[d])
        for k in range(per_day):
            i = d * per_day + k
            mode = _mode(hours[k], plan, carry)
            if mode == HOME:
                cur, free_until = home, -1
            elif mode == WORK:
                cur, free_until = work, -1
            elif i >= free_until:
                cur, size, total = _epr_move(state, cur, geo, mem_loc, mem_cnt, index_of, size, total)
                free_until = i + _dwell_instants(state, instant_h)
            out[i] = cur
        carry = plan[3]
    return home, work, size


@njit(cache=True)
def _thin(state, rate_mean, keep):
    """Keep each event with the user's rate ~ Beta(mean rate_mean); at least one event is kept."""
    a = rate_mean * CHECKIN_CONCENTRATION
    rate = _beta(state, a, CHECKIN_CONCENTRATION - a)
    kept = 0
    for i in range(keep.shape[0]):
        keep[i] = _uniform(state) < rate
        kept += keep[i]
    if kept == 0:
        keep[int(_uniform(state) * keep.shape[0])] = True


@njit(cache=True, parallel=True)
def _simulate_chunk(keys, geo, hours, weekend, instant_h, rate_mean, out_loc, out_keep, out_anchor):
    """Simulate users ``keys`` (n, 2) into ``out_loc`` (n * T,), ``out_keep`` and ``out_anchor`` (n, 2)."""
    n = keys.shape[0]
    n_loc = geo.xy.shape[0]
    T = hours.shape[0] * weekend.shape[0]
    n_parts = min(n, 256)
    for p in prange(n_parts):
        mem_loc = np.empty(n_loc, np.int32)
        mem_cnt = np.empty(n_loc, np.float64)
        index_of = np.full(n_loc, -1, np.int32)
        state = np.empty(1, np.uint64)
        for u in range(p * n // n_parts, (p + 1) * n // n_parts):
            state[0] = keys[u, 0]
            home, work, size = _simulate_user(state, geo, hours, weekend, instant_h,
                                              out_loc[u * T:(u + 1) * T], mem_loc, mem_cnt, index_of)
            _forget(mem_loc, index_of, size)
            out_anchor[u, 0], out_anchor[u, 1] = home, work
            if rate_mean < 1.0:
                state[0] = keys[u, 1]
                _thin(state, rate_mean, out_keep[u * T:(u + 1) * T])


# -- Python side --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Setup:
    """Everything a chunk needs besides its user range."""

    n_users: int
    seed: int
    space: Space
    time: TimeAxis
    geometry: Geometry
    hours: np.ndarray
    weekend: np.ndarray
    checkin_rate: float | None
    info: dict

    @property
    def per_user(self) -> int:
        return self.hours.shape[0] * self.weekend.shape[0]


def user_keys(seed: int, lo: int, hi: int) -> np.ndarray:
    """(hi - lo, 2) uint64 words seeding users ``lo .. hi - 1`` (see the module docstring)."""
    return user_words(seed, 1, lo, hi, words=2)


def _simulate_range(setup: _Setup, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, pd.DataFrame]:
    """Events (user counted from 0 at ``lo``, t, loc) and the user table of users ``lo .. hi - 1``."""
    n, T = hi - lo, setup.per_user
    rate = 1.0 if setup.checkin_rate is None else float(setup.checkin_rate)
    loc = np.empty(n * T, np.int32)
    keep = np.ones(n * T if rate < 1.0 else 0, np.bool_)
    anchor = np.empty((n, 2), np.int32)
    _simulate_chunk(user_keys(setup.seed, lo, hi), setup.geometry, setup.hours, setup.weekend,
                    setup.time.instant / timedelta(hours=1), rate, loc, keep, anchor)
    user = np.repeat(np.arange(n, dtype=np.int32), T)
    t = np.tile(np.arange(T, dtype=np.int64), n)
    if rate < 1.0:
        user, t, loc = user[keep], t[keep], loc[keep]
    users = pd.DataFrame({"user_id": np.arange(lo, hi, dtype=np.int64),
                          "home": anchor[:, 0], "work": anchor[:, 1]})
    return user, t, loc, users


def _setup(n_users, days, space, pois, instant, slot, start_date, timezone, checkin_rate, seed) -> _Setup:
    """Validate the arguments and prepare the city, the space and the time axis."""
    n_users, days, seed = _check_count(n_users, "number of users (`users`)"), _check_count(days, "days (`days`)"), _check_seed(seed)
    if checkin_rate is not None and (isinstance(checkin_rate, bool) or not isinstance(checkin_rate, (int, float))
                                     or not 0 < checkin_rate <= 1):
        raise InputError(f"check-in rate (`checkin_rate`) must be in (0, 1], got {checkin_rate!r}")
    if space is not None and pois is not None:
        raise InputError("pass either space or pois, not both")
    if space is not None and not isinstance(space, Space):
        raise InputError(f"space must be a Grid or POISpace, got {type(space).__name__}")
    if isinstance(start_date, str):
        try:
            start_date = date.fromisoformat(start_date)
        except ValueError:
            raise InputError(f"start_date {start_date!r} is not a date; expected YYYY-MM-DD") from None
    time = TimeAxis.build(start_date, timezone, instant, slot)
    if space is None:
        space = make_space(pois=pois, seed=seed)
    city = City.from_seed(seed, space_bbox(space))
    hours = np.array([(time.window_start + k * time.instant) / timedelta(hours=1)
                      for k in range(time.instants_per_day)])
    weekend = np.array([(time.start_date + timedelta(days=d)).weekday() >= 5 for d in range(days)])
    info = _info(n_users, days, space, checkin_rate, seed, time)
    return _Setup(n_users, seed, space, time, make_geometry(space, city), hours, weekend,
                  None if checkin_rate in (None, 1) else float(checkin_rate), info)


def _info(n_users, days, space, checkin_rate, seed, time) -> dict:
    """Provenance saved with the set (JSON-native values, so that it survives save/load)."""
    return {
        "source": "simulate", "simulated": True, "model": "EPR with home/work routines",
        "reference": "Song, Koren, Wang, Barabasi. Modelling the scaling properties of human "
                     "mobility. Nature Physics 6, 818-823 (2010)",
        "seed": seed, "n_users": n_users, "days": days, "start_date": time.start_date.isoformat(),
        "space": space.kind, "n_locations": space.n_locations,
        "checkin_rate": None if checkin_rate is None else float(checkin_rate),
        "parameters": {
            "rho": RHO, "gamma": GAMMA, "jump_alpha": JUMP_ALPHA, "jump_km": [JUMP_MIN_KM, "bbox diagonal"],
            "wait_beta": WAIT_BETA, "wait_hours": [WAIT_MIN_H, WAIT_MAX_H], "favourites": list(N_FAVOURITES),
            "memory_weights": {"home": WEIGHT_HOME, "work": WEIGHT_WORK, "favourite": WEIGHT_FAVOURITE},
            "day_off": DAY_OFF, "late_night": LATE_NIGHT, "centres": N_CENTRES,
            "checkin_concentration": CHECKIN_CONCENTRATION,
        },
        "randomness": f"SeedSequence(seed, spawn_key=(1, user // {USER_BLOCK})) -> 2 words per user "
                      "-> SplitMix64 streams (trajectory, check-in thinning)",
    }


def _check_count(value, name: str, kind: str = "an integer >= 1", minimum: int = 1) -> int:
    """``value`` as an int of at least ``minimum``, else one InputError naming ``name``."""
    if isinstance(value, bool):
        raise InputError(f"{name} must be {kind}, got {value!r}")
    try:
        value = operator.index(value)
    except TypeError:
        raise InputError(f"{name} must be {kind}, got {value!r}") from None
    if value < minimum:
        raise InputError(f"{name} must be at least {minimum}, got {value}" if minimum else
                         f"{name} must be {kind}, got {value}")
    return value


def _check_seed(seed) -> int:
    return _check_count(seed, "seed", "a non-negative integer", minimum=0)


def _simulated_chunks(setup: _Setup, chunk_users: int | None = None) -> Iterator[tuple[int, tuple]]:
    """(users done, _simulate_range of the chunk) for chunks of at most ``chunk_users`` users and
    MAX_CHUNK_EVENTS instants simulated."""
    size = max(1, MAX_CHUNK_EVENTS // setup.per_user)
    size = size if chunk_users is None else min(chunk_users, size)
    for lo in range(0, setup.n_users, size):
        hi = min(lo + size, setup.n_users)
        yield hi, _simulate_range(setup, lo, hi)


def simulate(n_users: int, *, days: int = 1, space: Space | None = None, pois: int | None = None,
             instant: str = "1h", slot: str = "2h", start_date: date = date(2024, 1, 1),
             timezone: str = "UTC", checkin_rate: float | None = None, seed: int = 0) -> TraceSet:
    """Simulate ``n_users`` users of a synthetic city, in memory.

    Parameters
    ----------
    n_users : int
        Number of users; their ``user_id`` are 0 .. n_users - 1.
    days : int
        Days simulated from ``start_date`` (2024-01-01 is a Monday).
    space : Space, optional
        Where users move; by default a 20 x 20 Grid over :data:`TOKYO_BBOX`.
    pois : int, optional
        Instead of ``space``: this many synthetic POIs (:func:`synthetic_pois`).
    instant, slot : str
        Instant and slot lengths of the :class:`TimeAxis` (default hourly instants, 2-hour slots).
    start_date : date
    timezone : str
        IANA zone of the local time in which routines run.
    checkin_rate : float in (0, 1], optional
        Mean share of events kept per user (per-user rate ~ Beta); None keeps every instant.
    seed : int
        Non-negative seed; see the module docstring for how streams are derived.

    Returns
    -------
    TraceSet
        Events sorted by (user, instant); the user table has ``user_id``, ``home`` and ``work``
        (location ids); ``info['simulated']`` is True.

    Notes
    -----
    Free time follows the EPR model of Song et al., Nature Physics 6 (2010).
    """
    setup = _setup(n_users, days, space, pois, instant, slot, start_date, timezone, checkin_rate, seed)
    # users a chunk at a time, as simulate_to_dir does: a thinned set holds a few percent of the
    # instants every user is simulated at, so memory is one chunk's instants plus the result
    parts = [part for _, part in _simulated_chunks(setup)]
    user = np.concatenate([p[0] + np.int32(p[3]["user_id"].iat[0]) for p in parts])
    t, loc = (np.concatenate([p[i] for p in parts]) for i in (1, 2))
    users = pd.concat([p[3] for p in parts], ignore_index=True)
    del parts
    return TraceSet(user, t, loc, users, setup.space, setup.time, setup.info, simulated_friends(users, seed))


#: friends a user expects among the users sharing its home, and again among those sharing its work place
FRIENDS_PER_PLACE = 2.0


def simulated_friends(users: pd.DataFrame, seed: int, per_place: float = FRIENDS_PER_PLACE) -> np.ndarray:
    """Friendships between neighbours and colleagues: a pair of the g users with the same home
    (or work place) is a friendship with probability min(1, per_place / (g - 1)), so the mean
    degree stays near 2 per_place however many users share a place ((m, 2) rows a < b).

    Each place's pairs are drawn as G(g, p) (graphs.erdos_renyi) without listing them: an
    Istanbul-sized city has places shared by thousands of users, whose hundreds of millions of
    pairs took 13 GB as a list."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(77,)))
    edges = []
    for column in ("home", "work"):
        place = users[column].to_numpy()
        order = np.argsort(place, kind="stable")
        for g in np.split(order, np.flatnonzero(np.diff(place[order])) + 1):
            if g.size > 1:
                edges.append(g[erdos_renyi(g.size, min(1.0, per_place / (g.size - 1)), rng)])
    if not edges:
        return np.zeros((0, 2), np.int32)
    return np.unique(np.sort(np.concatenate(edges), axis=1), axis=0).astype(np.int32)


def simulate_to_dir(out: str | Path, n_users: int, *, days: int = 1, space: Space | None = None,
                    pois: int | None = None, instant: str = "1h", slot: str = "2h",
                    start_date: date = date(2024, 1, 1), timezone: str = "UTC",
                    checkin_rate: float | None = None, seed: int = 0, overwrite: bool = False,
                    chunk_users: int = DEFAULT_CHUNK_USERS,
                    progress: Callable[[int, int], None] | None = None) -> Path:
    """Simulate like :func:`simulate` and stream the set to the TraceSet directory ``out``.

    Users are generated and written ``chunk_users`` at a time (fewer when that would exceed
    :data:`MAX_CHUNK_EVENTS` events) with :class:`TraceSetWriter`, so memory is bounded by one
    chunk; the output does not depend on the chunk size. ``progress``
    is called with (users done, n_users) after each chunk. The directory appears atomically when
    every chunk is written; an existing ``out`` is replaced only with ``overwrite``.
    """
    setup = _setup(n_users, days, space, pois, instant, slot, start_date, timezone, checkin_rate, seed)
    chunk_users = _check_count(chunk_users, "chunk_users")
    with TraceSetWriter(out, setup.space, setup.time, setup.info, overwrite) as writer:
        for hi, part in _simulated_chunks(setup, chunk_users):
            writer.append(*part)
            if progress is not None:
                progress(hi, setup.n_users)
    return Path(out)
