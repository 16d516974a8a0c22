"""The training examples of DPTrip, from a TraceSet of trips (data/trips.py): per trip its source,
destination and hour (the initializer's records, paper 004 §7.3.1) and its 2-grams (the next-hop
model's records, §7.3.2 and §8.2: "we created 2-grams from the traces").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.errors import InputError
from ...metrics.trips import trip_hours
from ...data.space import Grid
from ...data.traces import TraceSet



@dataclass(frozen=True)
class TripTable:
    """One row per trip and its 2-grams grouped by trip.

    Attributes
    ----------
    source, destination, hour : ndarray of shape (n_trips,), int64
        L_src, L_dst and t of paper 004 §7.3.1.
    gram_current, gram_next : ndarray of shape (n_grams,), int64
        The 2-grams (L_i, L_{i+1}) of every trip, in trip order (§7.3.2).
    gram_start, gram_count : ndarray of shape (n_trips,), int64
        Trip r's grams are ``gram_start[r] : gram_start[r] + gram_count[r]``.
    """

    source: np.ndarray
    destination: np.ndarray
    hour: np.ndarray
    gram_current: np.ndarray
    gram_next: np.ndarray
    gram_start: np.ndarray
    gram_count: np.ndarray

    @property
    def n_trips(self) -> int:
        return int(self.source.size)

    def gram_trip(self) -> np.ndarray:
        """The trip of every gram, shape (n_grams,)."""
        return np.repeat(np.arange(self.n_trips), self.gram_count)


def trip_table(trips: TraceSet) -> TripTable:
    """Sources, destinations, hours and 2-grams of ``trips`` (every trace one trip)."""
    if not isinstance(trips.space, Grid):
        raise InputError(f"dptrip needs trips on a grid (its next hops are the 11 x 11 cells around the current "
                         f"one), got a {type(trips.space).__name__}")
    offsets = trips.offsets
    counts = np.diff(offsets)
    loc = trips.loc.astype(np.int64)
    if (counts < 1).any():
        raise InputError("dptrip needs every trip to have at least one visit")
    source, destination = loc[offsets[:-1]], loc[offsets[1:] - 1]
    starts_gram = np.ones(loc.size, bool)
    starts_gram[offsets[1:] - 1] = False                # the last visit of a trip starts no gram
    current = np.flatnonzero(starts_gram)
    gram_count = counts - 1
    return TripTable(source, destination, trip_hours(trips, from_events=True), loc[current], loc[current + 1],
                     np.cumsum(gram_count) - gram_count, gram_count)
