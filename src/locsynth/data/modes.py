"""What is publicly known about how a kind of movement moves: its mode's bounds (DESIGN.md, TraceSet).

A set of trips carries its :class:`Bounds` in ``info['bounds']`` (:attr:`TraceSet.bounds
<locsynth.data.traces.TraceSet.bounds>`): the fastest and slowest plausible speed, the thresholds
that split a person's fixes into trips, and the cell size and instant its grid and clock were made
with. They are public parameters, not facts read from the data: a walk is not faster than
``max_speed_kmh`` whoever walks, so a release may use them without spending privacy. Every consumer
reads them from the set (the trips' time model, its speed bins and its floor on a step's time, the
speed metric of the report, the card), and they travel with everything made from it: models,
synthetic sets, releases.

:data:`MODES` holds the documented modes; ``taxi`` is paper 004's cabs (150 km/h, §8.2) with the
values locsynth used for every set before modes existed, which a set without ``info['bounds']``
(prepared before, or not trips) gets (:data:`TAXI`).

The values, each a public fact or a stated choice (explicit arguments override every one):

- ``max_speed_kmh``: the fastest a trip of the mode goes between two points. walk 10 (a brisk walk
  is 6-7 km/h, a jog 10), bike 40 (a fast cyclist on the flat), bus 100 (a coach on a motorway),
  car and taxi 150 (paper 004's bound on the cabs; motorway limits are 100-130), train 350 (the
  fastest scheduled high-speed lines), ship 60 (about 32 knots, a fast ferry; most ships go 10-25).
- ``min_speed_kmh``: the slowest a trip of the mode goes on average (its path over its duration),
  the first edge of the time model's speed bins: 1 km/h for the land modes (the cabs' first
  bin), 0.5 for a walk (a stroll with stops), 0.5 for a ship (a ship drifting; slower is at anchor),
  5 for a train.
- ``gap_minutes``, ``stay_minutes``, ``stay_m``: how a person's fixes split into trips
  (data/trips.py's :func:`~locsynth.data.trips.segment`): trackintel's 15 minutes, 5 minutes and
  100 m for the land modes; for a ship 60 minutes, 30 minutes and 500 m (AIS fixes come every few
  seconds to minutes under way, rarer at anchor, and a ship swings round its anchor in hundreds of
  metres).
- ``cell_m`` and ``instant``: the grid's cell and the clock's instant, chosen together so that a
  step to a neighbouring cell (the diagonal one, sqrt(2) cells) in one instant is within the
  bound: a real trip then keeps its bound on the grid (data/trips.py also gives every step at least
  the time its length asks at the bound). walk 100 m (8.5 km/h for a diagonal in a minute), bike
  and the road modes 250 m (the cabs', paper 004's), train 1 km, ship 1 km in 2-minute instants
  (42 km/h: with one-minute instants a step of one cell reads as 60 km/h, the bound itself).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace

import pandas as pd

from ..core.errors import InputError, unknown


@dataclass(frozen=True)
class Bounds:
    """A mode's public bounds (module docstring).

    Attributes
    ----------
    mode : str
        The mode's name (:data:`MODES`), or ``custom`` for bounds given one by one.
    max_speed_kmh, min_speed_kmh : float
        The fastest a trip goes between two points, the slowest it goes on average, km/h.
    gap_minutes, stay_minutes, stay_m : float
        Fixes further apart than ``gap_minutes`` are not one trip; ``stay_minutes`` or more within
        ``stay_m`` metres is a stay between trips (:func:`locsynth.data.trips.segment`).
    cell_m : float
        The side of the grid's square cells, metres.
    instant : str
        The clock's instant, a duration pandas reads (``"1min"``, ``"2min"``, ``"30s"``).
    """

    mode: str
    max_speed_kmh: float
    min_speed_kmh: float
    gap_minutes: float
    stay_minutes: float
    stay_m: float
    cell_m: float
    instant: str

    def __post_init__(self):
        for f in fields(self):
            if f.name in ("mode", "instant"):
                continue
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                    or value <= 0:
                raise InputError(f"`{f.name}` must be a positive finite number, got {value!r}")
            object.__setattr__(self, f.name, float(value))
        if self.min_speed_kmh >= self.max_speed_kmh:
            raise InputError(f"`min_speed_kmh` {self.min_speed_kmh:g} must be below `max_speed_kmh` "
                             f"{self.max_speed_kmh:g}")
        object.__setattr__(self, "instant", _instant_text(self.instant))

    @property
    def instant_seconds(self) -> float:
        return pd.Timedelta(self.instant).total_seconds()

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Bounds":
        """Bounds from :meth:`to_dict`'s JSON; fields it lacks (saved by an older locsynth) take the
        taxi's values."""
        known = {f.name for f in fields(cls)}
        return cls(**{**TAXI.to_dict(), **{k: v for k, v in dict(data).items() if k in known}})

    def with_(self, **given) -> "Bounds":
        """These bounds with the given ones (None: not given) replacing theirs; ``mode`` says
        ``"<mode>, adjusted"`` when a speed or a segmentation threshold differs (a cell or an instant
        of one's own is the grid's and the clock's choice, not a different movement)."""
        given = {k: v for k, v in given.items() if v is not None}
        unknown_names = sorted(set(given) - {f.name for f in fields(self)})
        if unknown_names:
            raise InputError(f"unknown bound(s) {', '.join(unknown_names)}; the bounds: "
                             f"{', '.join(f.name for f in fields(self))}")
        out = replace(self, **given)
        changed = any(getattr(out, k) != getattr(self, k) for k in given if k not in ("mode", "cell_m", "instant"))
        return replace(out, mode=f"{self.mode}, adjusted") if changed and "mode" not in given else out

    def describe(self) -> str:
        """One line for a card or ``locsynth info``."""
        return (f"{self.mode}: speeds {self.min_speed_kmh:g}-{self.max_speed_kmh:g} km/h, "
                f"{self.cell_m:g} m cells, {self.instant} instants; trips split at gaps over "
                f"{self.gap_minutes:g} min and stays of {self.stay_minutes:g} min within {self.stay_m:g} m "
                "(public bounds)")


def _instant_text(value) -> str:
    """A duration as pandas' text (seconds given as a number), or an InputError."""
    try:
        delta = pd.Timedelta(value, unit="s") if isinstance(value, (int, float)) else pd.Timedelta(value)
    except (ValueError, TypeError):
        raise InputError(f"`instant` {value!r} is not a duration (e.g. '1min', '30s', or seconds)") from None
    if pd.isna(delta) or delta.total_seconds() <= 0 or delta.total_seconds() % 1:
        raise InputError(f"`instant` {value!r} must be a positive whole number of seconds")
    seconds = int(delta.total_seconds())
    return f"{seconds // 60}min" if seconds % 60 == 0 else f"{seconds}s"


_LAND = {"gap_minutes": 15.0, "stay_minutes": 5.0, "stay_m": 100.0, "instant": "1min"}

#: the documented modes' bounds (module docstring says where each value comes from)
MODES = {
    "walk": Bounds("walk", 10.0, 0.5, cell_m=100.0, **_LAND),
    "bike": Bounds("bike", 40.0, 1.0, cell_m=250.0, **_LAND),
    "car": Bounds("car", 150.0, 1.0, cell_m=250.0, **_LAND),
    "bus": Bounds("bus", 100.0, 1.0, cell_m=250.0, **_LAND),
    "train": Bounds("train", 350.0, 5.0, cell_m=1000.0, **_LAND),
    "ship": Bounds("ship", 60.0, 0.5, gap_minutes=60.0, stay_minutes=30.0, stay_m=500.0, cell_m=1000.0,
                   instant="2min"),
    "taxi": Bounds("taxi", 150.0, 1.0, cell_m=250.0, **_LAND),
}
#: the cabs' bounds (paper 004 §8.2), which sets prepared before modes existed, and sets that are
#: not trips, are read with
TAXI = MODES["taxi"]


def mode_bounds(mode: str | None = None, **given) -> Bounds:
    """The bounds of ``mode`` (:data:`MODES`; None: the taxi's) with the ``given`` ones (None: not
    given) in place of its own."""
    if mode is None:
        base = TAXI
    elif mode in MODES:
        base = MODES[mode]
    else:
        raise unknown("mode", mode, MODES)
    return base.with_(**given)


__all__ = ["Bounds", "MODES", "TAXI", "mode_bounds"]
